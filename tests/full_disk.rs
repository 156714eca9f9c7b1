//! A full `DATA_DIR` through the real binary: deliveries are refused with 503 (GitHub can
//! redeliver them) and readiness says so; once space returns, both recover without a restart.
//!
//! The disk is a 4 MiB tmpfs mounted for the test, which needs root (CI runs as root); elsewhere
//! the test says it is skipped.

mod common;

use std::process::Command;

use common::*;

struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

async fn readyz(server: &Server) -> u16 {
    reqwest::get(server.url("/readyz"))
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_full_disk_gets_503_and_readiness_says_so_until_space_returns() {
    let Some(check_run) = payload("check_run/completed.payload.json") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(dir.path())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "CI runs as root and must be able to mount a tmpfs"
        );
        eprintln!("skipping: cannot mount a tmpfs (not root)");
        return;
    }
    let _mount = Mount(dir.path().to_path_buf());
    let data = dir.path().join("data");
    let server = Server::start(ServerOptions {
        data_dir: &data,
        workers: 0,
        github_api_url: "http://127.0.0.1:9",
        extra_env: vec![],
    });
    assert_eq!(server.deliver("check_run", "before", &check_run).await, 202);
    assert_eq!(readyz(&server).await, 200);

    // Fill the disk to the last block.
    let filler = dir.path().join("filler");
    let _ = Command::new("dd")
        .arg("if=/dev/zero")
        .arg(format!("of={}", filler.display()))
        .args(["bs=4k", "status=none"])
        // It ends with "No space left on device", which is the point.
        .stderr(std::process::Stdio::null())
        .status();
    for i in 0..3 {
        assert_eq!(
            server
                .deliver("check_run", &format!("full-{i}"), &check_run)
                .await,
            503
        );
    }
    // Before, readiness stayed 200 while every delivery failed.
    assert_eq!(readyz(&server).await, 503);

    std::fs::remove_file(&filler).unwrap();
    for i in 0..3 {
        assert_eq!(
            server
                .deliver("check_run", &format!("after-{i}"), &check_run)
                .await,
            202
        );
    }
    assert_eq!(readyz(&server).await, 200);
    // A refused delivery was not recorded: GitHub's redelivery of it is accepted.
    assert_eq!(server.deliver("check_run", "full-0", &check_run).await, 202);
    assert!(server.terminate().success());
}

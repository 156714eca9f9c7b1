//! A private PostgreSQL cluster for a test that stops and starts its database (the shared
//! test cluster of `.ci/postgres-setup.sh` must stay up for the other tests). Debian's binaries
//! under /usr/lib/postgresql/*/bin; initdb and the server run as the `postgres` user when the
//! tests run as root, as PostgreSQL refuses root.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct PgCluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    pub port: u16,
    pub url: String,
}

fn pg_bin() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|d| d.join("pg_ctl").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn run(bin: &Path, tool: &str, args: &[&str]) -> std::process::Output {
    let exe = bin.join(tool);
    let out = if is_root() {
        Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(&exe)
            .args(args)
            .output()
    } else {
        Command::new(&exe).args(args).output()
    };
    out.unwrap_or_else(|e| panic!("{tool} runs: {e}"))
}

impl PgCluster {
    /// initdb and start; `None` (the test is skipped, said on stderr) when PostgreSQL is not
    /// installed and `CI` is not set. With `CI` set, a missing PostgreSQL fails the test.
    pub fn start(test: &str) -> Option<PgCluster> {
        let Some(bin) = pg_bin() else {
            if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false") {
                panic!("CI is set but PostgreSQL is not installed: run .ci/postgres-setup.sh");
            }
            eprintln!("skipping {test}: PostgreSQL is not installed (apt-get install postgresql)");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            let ok = Command::new("chown")
                .args(["-R", "postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(ok.success());
        }
        let data = dir.path().join("data");
        let out = run(
            &bin,
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cluster = PgCluster {
            bin,
            url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            dir,
            port,
        };
        cluster.up();
        Some(cluster)
    }

    /// Starts the server (again), waiting until it answers.
    pub fn up(&self) {
        let data = self.dir.path().join("data");
        let log = self.dir.path().join("log");
        let opts = format!(
            "-h 127.0.0.1 -p {} -k {} -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let out = run(
            &self.bin,
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
                "-w",
                "-o",
                &opts,
                "start",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Stops the server at once (`-m immediate`: connections cut, as in a crash).
    pub fn down(&self) {
        let data = self.dir.path().join("data");
        let out = run(
            &self.bin,
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-w",
                "-m",
                "immediate",
                "stop",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = run(
            &self.bin,
            "pg_ctl",
            &["-D", data.to_str().unwrap(), "-m", "immediate", "stop"],
        );
    }
}

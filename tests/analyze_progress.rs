//! `analyze` shows its progress on a terminal for large logs, and never on a pipe.
//!
//! The terminal is a real pseudo-terminal: util-linux's `script` (Debian's essential
//! `bsdutils`) runs the binary with standard error on a pty and copies what it drew. The
//! large log is a real one (hashicorp/terraform's `Quick Checks`, CiDiff data set) repeated
//! past `ci_medic_core::progress::LARGE_INPUT`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ci_medic_core::progress::LARGE_INPUT;

fn real_log() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/corpus/real/go/wrap-cidiff/terraform-actions-go-test-build-failed.log")
}

fn large_log(dir: &Path) -> PathBuf {
    let one = std::fs::read(real_log()).unwrap();
    let copies = LARGE_INPUT as usize / one.len() + 1;
    let path = dir.join("large.log");
    std::fs::write(&path, one.repeat(copies)).unwrap();
    path
}

/// Runs `analyze` with standard error on a pseudo-terminal; returns what the terminal showed.
fn on_a_terminal(log: &Path, out: &Path) -> String {
    let cmd = format!(
        "'{}' analyze --format json '{}' > '{}'",
        env!("CARGO_BIN_EXE_ci-medic"),
        log.display(),
        out.display()
    );
    let run = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("util-linux `script` runs");
    assert_eq!(run.status.code(), Some(1), "errors were found");
    String::from_utf8_lossy(&run.stdout).into_owned()
}

#[test]
fn a_large_log_shows_progress_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let log = large_log(dir.path());
    let size = std::fs::metadata(&log).unwrap().len();
    let shown = on_a_terminal(&log, &dir.path().join("out.json"));
    let total = ci_medic_core::progress::bytes(size);
    assert!(
        shown.contains(&format!("ci-medic analyze: read {total} / {total} (100%)")),
        "{shown:?}"
    );
    // The output itself is untouched by the drawing.
    let reports: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out.json")).unwrap()).unwrap();
    assert!(!reports.as_array().unwrap().is_empty());
}

#[test]
fn a_small_log_shows_none_even_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let shown = on_a_terminal(&real_log(), &dir.path().join("out.json"));
    assert!(!shown.contains("ci-medic analyze: read"), "{shown:?}");
}

#[test]
fn a_pipe_never_gets_progress() {
    let dir = tempfile::tempdir().unwrap();
    let log = large_log(dir.path());
    for input in [Some(log.clone()), None] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ci-medic"));
        cmd.args(["analyze", "--format", "github"]);
        match &input {
            Some(p) => {
                cmd.arg(p).stdin(Stdio::null());
            }
            None => {
                cmd.stdin(std::fs::File::open(&log).unwrap());
            }
        }
        let run = cmd.output().unwrap();
        assert_eq!(run.status.code(), Some(1));
        assert!(
            run.stderr.is_empty(),
            "{:?}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(!run.stdout.is_empty());
    }
}

//! `ci-medic analyze` on real logs, through the binary: the `triage` format, the `kind:` line
//! the `text` format starts with, and the `json` format left as it was.

use std::process::{Command, Output};

fn analyze(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ci-medic"))
        .arg("analyze")
        .args(args)
        .output()
        .expect("ci-medic runs")
}

fn fixture(rel: &str) -> String {
    format!("{}/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
}

const INFRA: &str = "triage/real/infrastructure/issues/runner-images-6709-shutdown-signal.log";
const CONFIG: &str = "triage/real/configuration/issues/yarb-17-push-action-403.log";
const CODE: &str = "corpus/logs/actions/cargo_clippy_color.log";

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn triage_format_names_the_kind_and_the_evidence_lines() {
    let out = analyze(&["--format", "triage", &fixture(INFRA)]);
    assert_eq!(out.status.code(), Some(0), "no bug report: exit 0");
    let v = json(&out);
    assert_eq!(v["kind"], "infrastructure");
    assert_eq!(v["evidence"][0]["line"], 1);
    assert!(
        v["evidence"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("The runner has received a shutdown signal"))
    );
    assert_eq!(v["reports"], serde_json::json!([]));
    // The keys in the order (serde_json's Value would sort them, so look at the text).
    let text = String::from_utf8_lossy(&out.stdout);
    let at = |k: &str| text.find(&format!("\n  \"{k}\":"));
    assert!(
        at("kind") < at("evidence") && at("evidence") < at("rules") && at("rules") < at("reports")
    );
    assert!(at("kind").is_some());

    let v = json(&analyze(&["--format", "triage", &fixture(CONFIG)]));
    assert_eq!(v["kind"], "configuration");
    assert_eq!(v["evidence"][0]["line"], 3);
}

#[test]
fn triage_format_keeps_code_failures_code_with_their_reports() {
    let out = analyze(&["--format", "triage", &fixture(CODE)]);
    assert_eq!(out.status.code(), Some(1), "bug reports: exit 1");
    let v = json(&out);
    assert_eq!(v["kind"], "code");
    assert_eq!(v["evidence"], serde_json::json!([]));
    let reports = v["reports"].as_array().map(Vec::len).unwrap_or(0);
    assert!(reports > 0);
    // The same reports as the json format.
    let plain = json(&analyze(&["--format", "json", &fixture(CODE)]));
    assert_eq!(v["reports"], plain);
}

#[test]
fn conclusion_flag_feeds_the_triage() {
    let out = Command::new(env!("CARGO_BIN_EXE_ci-medic"))
        .args([
            "analyze",
            "--format",
            "triage",
            "--conclusion",
            "timed_out",
            "-",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ci-medic runs");
    let v = json(&out);
    assert_eq!(v["kind"], "infrastructure");
    assert_eq!(v["rules"], serde_json::json!(["check.timed_out"]));
}

#[test]
fn text_format_starts_with_the_kind() {
    let out = analyze(&[&fixture(INFRA)]);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("kind: infrastructure"));
    assert!(
        lines
            .next()
            .is_some_and(|l| l.starts_with("    line 1: The runner has received"))
    );
    assert!(text.ends_with("no errors found\n"));

    let out = analyze(&[&fixture(CODE)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().next(), Some("kind: code"));
    assert!(
        text.lines()
            .nth(1)
            .is_some_and(|l| l.contains(" error in "))
    );
}

#[test]
fn json_format_is_still_the_bare_array() {
    let v = json(&analyze(&["--format", "json", &fixture(INFRA)]));
    assert_eq!(v, serde_json::json!([]));
}

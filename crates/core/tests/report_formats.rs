//! `--format github` and `--format rdjson` read back the way their consumers read them.
//!
//! Workflow commands are parsed with `github::try_parse_v2`, a port of the Actions runner's own
//! reader (`actions/runner` `src/Runner.Common/ActionCommand.cs`: `TryParseV2`, `UnescapeData`,
//! `UnescapeProperty`, which undo the escapes one `Replace` at a time, `%25` last), so an escape
//! the runner would misread fails here. rdjson documents are validated against reviewdog's
//! `DiagnosticResult.json`, kept verbatim in `crates/core/schema/`.

use std::path::{Path, PathBuf};

use ci_medic_core::output::github::{
    self, ActionCommand, DATA_ESCAPES, PROPERTY_ESCAPES, try_parse_v2, unescape,
};
use ci_medic_core::output::rdjson;
use ci_medic_core::{BugReport, BugType};
use ci_medic_parser::{ParseOptions, parse_str};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Text that stresses the escapes: the escaped characters, escape sequences already present,
/// the separators and any other character.
fn tricky() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("%".to_string()),
        Just("%25".to_string()),
        Just("%0A".to_string()),
        Just("%3A".to_string()),
        Just("\r".to_string()),
        Just("\n".to_string()),
        Just(":".to_string()),
        Just("::".to_string()),
        Just(",".to_string()),
        Just("=".to_string()),
        Just(" ".to_string()),
        "\\PC{0,6}",
    ];
    prop::collection::vec(piece, 0..12).prop_map(|v| v.concat())
}

fn report(file: String, message: String, line: u32, column: Option<u32>, conf: f64) -> BugReport {
    BugReport {
        file_path: file,
        line_number: line,
        error_type: BugType::TypeError,
        message,
        test_name: None,
        confidence_score: conf,
        column,
        tool: Some("tsc".to_string()),
        rule: Some("TS2322".to_string()),
    }
}

proptest! {
    #[test]
    fn data_round_trips_through_the_runner(s in tricky()) {
        let escaped = github::escape_data(&s);
        prop_assert!(!escaped.contains('\n') && !escaped.contains('\r'));
        prop_assert_eq!(unescape(&escaped, &DATA_ESCAPES), s);
    }

    #[test]
    fn properties_round_trip_through_the_runner(s in tricky()) {
        let escaped = github::escape_property(&s);
        prop_assert!(!escaped.contains(',') && !escaped.contains(':'));
        prop_assert!(!escaped.contains('\n') && !escaped.contains('\r'));
        prop_assert_eq!(unescape(&escaped, &PROPERTY_ESCAPES), s);
    }

    #[test]
    fn a_command_reads_back_whole(
        file in tricky().prop_filter("a path", |f| !f.is_empty()),
        message in tricky().prop_filter("a message", |m| !m.trim().is_empty()),
        line in 1u32..100_000,
        column in prop::option::of(1u32..500),
        conf in 0.0f64..=1.0,
    ) {
        let r = report(file.clone(), message.clone(), line, column, conf);
        let out = github::commands(std::slice::from_ref(&r));
        let lines: Vec<&str> = out.lines().collect();
        prop_assert_eq!(lines.len(), 1, "{}", out);
        let cmd = try_parse_v2(lines[0]).expect("the runner reads it");
        prop_assert_eq!(cmd.command.as_str(), github::level(&r).as_str());
        prop_assert_eq!(&cmd.data, &message);
        prop_assert_eq!(&cmd.properties["file"], &file);
        prop_assert_eq!(&cmd.properties["line"], &line.to_string());
        prop_assert_eq!(cmd.properties.get("col").cloned(), column.map(|c| c.to_string()));
        prop_assert_eq!(&cmd.properties["title"], &github::title(&r));
    }
}

#[test]
fn levels_follow_confidence_and_type() {
    let mut r = report("a.ts".into(), "m".into(), 1, None, 0.9);
    assert_eq!(github::level(&r), github::Level::Error);
    r.error_type = BugType::Linting;
    assert_eq!(github::level(&r), github::Level::Warning);
    r.confidence_score = 0.5;
    assert_eq!(github::level(&r), github::Level::Notice);
    assert_eq!(rdjson::severity(&r), "INFO");
}

#[test]
fn a_known_command_is_exact() {
    let r = parse_str(
        "app/main.py:1:8: F401 [*] `os` imported but unused\n",
        &ParseOptions::default(),
    );
    assert_eq!(
        github::commands(&r),
        "::warning title=LINTING (ruff F401) → Fix%3A remove the import statement,file=app/main.py,line=1,col=8::`os` imported but unused\n"
    );
}

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/reviewdog-DiagnosticResult.json"),
    )
    .expect("the schema is kept");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

#[test]
fn the_schema_refuses_what_reviewdog_would() {
    let v = schema();
    let bad = json!({ "diagnostics": [{ "message": "m", "severity": "error",
        "location": { "path": "a", "range": { "start": { "line": "1" } } } }] });
    assert_eq!(errors(&v, &bad).len(), 2, "{:?}", errors(&v, &bad));
}

fn real_logs(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus directory")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            real_logs(&p, out);
        } else if p.extension().is_some_and(|e| e == "log") {
            out.push(p);
        }
    }
}

/// Every real log of the corpus: its workflow commands read back as its reports, and its
/// rdjson document is valid for reviewdog and says the same.
#[test]
fn real_logs_read_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corpus/real");
    let mut logs = Vec::new();
    real_logs(&root, &mut logs);
    assert!(logs.len() > 100, "{} logs", logs.len());
    let v = schema();
    let (mut commands, mut with_col, mut with_test) = (0, 0, 0);
    for log in &logs {
        let text = String::from_utf8_lossy(&std::fs::read(log).expect("log")).into_owned();
        let reports = parse_str(&text, &ParseOptions::default());
        let out = github::commands(&reports);
        let parsed: Vec<ActionCommand> = out
            .lines()
            .map(|l| try_parse_v2(l).unwrap_or_else(|| panic!("{}: {l}", log.display())))
            .collect();
        assert_eq!(parsed.len(), reports.len(), "{}", log.display());
        for (cmd, r) in parsed.iter().zip(&reports) {
            assert_eq!(cmd.properties["file"], r.file_path, "{}", log.display());
            assert_eq!(cmd.properties["line"], r.line_number.to_string());
            assert!(cmd.data.starts_with(r.message.trim_end()) || r.message.trim().is_empty());
            with_col += usize::from(r.column.is_some());
            with_test += usize::from(r.test_name.is_some());
            if let Some(t) = &r.test_name {
                assert!(cmd.data.ends_with(&format!("Failing test: {t}")));
            }
        }
        commands += parsed.len();

        let doc = rdjson::to_rdjson(&reports);
        let errs = errors(&v, &doc);
        assert!(errs.is_empty(), "{}: {errs:?}", log.display());
        let diags = doc["diagnostics"].as_array().expect("diagnostics");
        for (d, r) in diags.iter().zip(&reports) {
            assert_eq!(d["location"]["path"], r.file_path.as_str());
            assert_eq!(d["location"]["range"]["start"]["line"], r.line_number);
        }
    }
    eprintln!(
        "{} real logs: {commands} workflow commands ({with_col} with a column, {with_test} with a failing test) read back, every rdjson document valid",
        logs.len()
    );
    assert!(commands > 100 && with_col > 10 && with_test > 10);
}

//! Every Fix Packet the code builds validates against the specification's JSON Schema
//! (kept verbatim in `crates/core/schema/`), checked with the `jsonschema` crate.

use ci_medic_core::proposal::{CheckRef, FIX_PACKET_SCHEMA, build_fix_packet};
use ci_medic_core::repo_config::{ConstraintsConfig, Paradigm};
use ci_medic_parser::{BugReport, BugType};
use proptest::prelude::*;
use serde_json::{Value, json};

fn validator() -> &'static jsonschema::Validator {
    static V: std::sync::LazyLock<jsonschema::Validator> = std::sync::LazyLock::new(|| {
        let schema: Value = serde_json::from_str(FIX_PACKET_SCHEMA).expect("schema is JSON");
        jsonschema::validator_for(&schema).expect("schema compiles")
    });
    &V
}

fn errors(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance).map(|e| e.to_string()).collect()
}

#[test]
fn schema_is_the_specifications_text() {
    let spec_block = include_str!("../schema/fix-packet-v2.schema.json");
    let schema: Value = serde_json::from_str(spec_block).unwrap();
    assert_eq!(schema["properties"]["version"]["const"], 2);
    assert_eq!(
        schema["properties"]["violations"]["items"]["required"],
        json!(["id", "gate", "severity", "title", "details"])
    );
}

#[test]
fn the_validator_really_rejects_bad_packets() {
    let v = validator();
    let good = json!({"version": 2, "violations": []});
    assert!(errors(v, &good).is_empty());
    for bad in [
        json!({"violations": []}),
        json!({"version": 1, "violations": []}),
        json!({"version": 2, "violations": [{"id": "x", "gate": "g", "severity": "urgent", "title": "t", "details": "d"}]}),
        json!({"version": 2, "violations": [{"id": "x", "gate": "g", "severity": "low", "title": "t"}]}),
        json!({"version": 2, "violations": [], "constraints": {"paradigm": null}}),
        json!({"version": 2, "violations": [], "constraints": {"max_files_changed": "3"}}),
    ] {
        assert!(!errors(v, &bad).is_empty(), "{bad} should be invalid");
    }
}

fn segment() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_.-]{1,12}".prop_filter("not . or ..", |s| s != "." && s != "..")
}

fn bug_report() -> impl Strategy<Value = BugReport> {
    (
        prop::collection::vec(segment(), 1..5),
        1u32..100_000,
        prop::sample::select(BugType::ALL.to_vec()),
        "(?s).{0,300}",
        prop::option::of("[a-z_:/.]{1,40}"),
        0.0f64..=1.0,
        prop::option::of(1u32..500),
        prop::option::of(prop::sample::select(vec![
            "ruff", "tsc", "rustc", "pytest", "eslint",
        ])),
        prop::option::of("[A-Z]{0,2}[0-9]{1,4}|[a-z-]{3,20}"),
    )
        .prop_map(
            |(segs, line, t, message, test, conf, column, tool, rule)| BugReport {
                file_path: segs.join("/"),
                line_number: line,
                error_type: t,
                message,
                test_name: test,
                confidence_score: conf,
                column,
                tool: tool.map(str::to_string),
                rule,
            },
        )
}

fn constraints() -> impl Strategy<Value = ConstraintsConfig> {
    (
        prop::collection::vec("[a-z./*]{1,20}", 0..4),
        prop::collection::vec("[a-z./]{1,20}", 0..3),
        0u32..50,
        any::<bool>(),
        prop::collection::vec("[a-z-]{1,12}", 0..3),
        prop::option::of(prop::sample::select(vec![
            Paradigm::Oop,
            Paradigm::Functional,
        ])),
    )
        .prop_map(|(p, d, m, n, a, par)| ConstraintsConfig {
            protected_paths: p,
            do_not_touch: d,
            max_files_changed: m,
            no_new_deps: n,
            allowed_dependencies: a,
            paradigm: par,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn generated_packets_match_the_schema(
        reports in prop::collection::vec(bug_report(), 0..30),
        cfg in constraints(),
        check in "[a-z ()0-9.]{0,20}",
        sha in "[0-9a-f]{0,40}",
    ) {
        let packet = build_fix_packet(&CheckRef { check_name: check, head_sha: sha }, &reports, &cfg);
        let value = serde_json::to_value(&packet).unwrap();
        let errs = errors(validator(), &value);
        prop_assert!(errs.is_empty(), "{errs:?}\n{value}");

        // one violation per report, ids unique, per-gate numbering stable
        prop_assert_eq!(packet.violations.len(), reports.len());
        let mut ids: Vec<&str> = packet.violations.iter().map(|v| v.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), reports.len());
        for (v, r) in packet.violations.iter().zip(&reports) {
            let prefix = format!("{}-", v.gate);
            prop_assert!(v.id.starts_with(&prefix), "id {} gate {}", v.id, v.gate);
            prop_assert_eq!(&v.gate, &r.error_type.as_str().to_ascii_lowercase());
            prop_assert_eq!(v.metrics.line, r.line_number);
            prop_assert_eq!(v.metrics.column, r.column);
            prop_assert!(v.details.starts_with(&r.message));
            prop_assert_eq!(&v.files, &vec![r.file_path.clone()]);
        }
        // JSON round trip is lossless
        let back: ci_medic_core::proposal::FixPacket = serde_json::from_value(value).unwrap();
        prop_assert_eq!(back, packet);
    }
}

/// Packets and code_fix proposals built from every log of the real-tool corpus validate: the
/// packet against the schema, the DDS against all ten rules of the specification.
#[test]
fn packets_and_proposals_from_the_real_tool_corpus_validate() {
    use ci_medic_core::proposal::{FailedCheck, standalone_dds, validate_code_fix};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corpus/logs");
    let mut logs = Vec::new();
    for dir in std::fs::read_dir(&root).expect("corpus present") {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "log") {
                logs.push(p);
            }
        }
    }
    logs.sort();
    assert!(logs.len() >= 80, "the corpus has {} logs", logs.len());
    let at = chrono::DateTime::parse_from_rfc3339("2026-02-02T15:30:45Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let mut proposals = 0;
    for log in &logs {
        let reports =
            ci_medic_parser::parse_bytes(&std::fs::read(log).unwrap(), &Default::default());
        let packet = build_fix_packet(
            &CheckRef {
                check_name: "ci".into(),
                head_sha: "a".repeat(40),
            },
            &reports,
            &ConstraintsConfig::default(),
        );
        let value = serde_json::to_value(&packet).unwrap();
        let errs = errors(validator(), &value);
        assert!(errs.is_empty(), "{}: {errs:?}", log.display());
        assert_eq!(packet.violations.len(), reports.len(), "{}", log.display());
        if reports.is_empty() {
            continue;
        }
        let check = FailedCheck {
            project: "octo/repo".into(),
            check_name: "ci".into(),
            head_sha: "a".repeat(40),
            pr_number: Some(1),
            changed_files: reports.iter().map(|r| r.file_path.clone()).collect(),
            failed_at: at,
        };
        let bundle = standalone_dds(&check, &reports, &ConstraintsConfig::default()).unwrap();
        validate_code_fix(&bundle.code_fix, Some(&bundle.source_dds.as_source()), None)
            .unwrap_or_else(|e| panic!("{}: {e}", log.display()));
        proposals += 1;
    }
    assert!(proposals >= 60, "{proposals} proposals validated");
}

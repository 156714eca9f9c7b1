//! `deploy/grafana/ci-medic.json` is a Grafana dashboard model whose every query reads series
//! the real binary serves: the whole loop (failed check → proposal → `/approve` → push →
//! verdict, one job run failing on a 502 and retried) runs against the fake GitHub, then every metric name, label and label value the
//! dashboard's PromQL uses is looked up in that run's `GET /metrics`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::world::*;
use fake_github::CheckOutput;
use serde_json::Value;

fn dashboard() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/grafana/ci-medic.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("the dashboard is kept"))
        .expect("the dashboard is JSON")
}

/// One series of the exposition: its name and labels.
type Series = (String, BTreeMap<String, String>);

/// The samples of an OpenMetrics / Prometheus text exposition.
fn exposition(text: &str) -> Vec<Series> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let name_end = line.find(['{', ' ']).expect("a sample has a value");
        let name = line[..name_end].to_string();
        let mut labels = BTreeMap::new();
        if line[name_end..].starts_with('{') {
            let mut chars = line[name_end + 1..].chars().peekable();
            loop {
                let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
                assert_eq!(chars.next(), Some('"'), "{line}");
                let mut value = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => value.push(chars.next().expect("an escaped character")),
                        '"' => break,
                        c => value.push(c),
                    }
                }
                labels.insert(key.trim_start_matches(',').to_string(), value);
                if chars.peek() == Some(&'}') {
                    break;
                }
            }
        }
        out.push((name, labels));
    }
    out
}

/// What a PromQL expression reads: the metric names with their label matchers, and the labels
/// it groups by.
/// `label`, operator, value.
type Matcher = (String, String, String);

#[derive(Debug, Default)]
struct Reads {
    metrics: Vec<(String, Vec<Matcher>)>,
    grouping: BTreeSet<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Punct(char),
    Op(String),
}

fn tokens(expr: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let chars: Vec<char> = expr.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':')
            {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
        } else if c == '"' || c == '\'' {
            let mut s = String::new();
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' {
                    i += 1;
                }
                s.push(chars[i]);
                i += 1;
            }
            i += 1;
            out.push(Tok::Str(s));
        } else if c.is_ascii_digit() || c == '.' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else if matches!(c, '=' | '!') && chars.get(i + 1).is_some_and(|n| matches!(n, '=' | '~'))
        {
            out.push(Tok::Op(chars[i..i + 2].iter().collect()));
            i += 2;
        } else if c == '=' {
            out.push(Tok::Op("=".into()));
            i += 1;
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    out
}

const KEYWORDS: &[&str] = &["and", "or", "unless", "bool", "offset"];
const GROUPING: &[&str] = &[
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];

fn reads(expr: &str) -> Reads {
    let toks = tokens(expr);
    let mut r = Reads::default();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('[') => {
                // A range or subquery duration: `[5m]`, `[$__rate_interval]`.
                while i < toks.len() && toks[i] != Tok::Punct(']') {
                    i += 1;
                }
            }
            Tok::Ident(word)
                if GROUPING.contains(&word.as_str())
                    && toks.get(i + 1) == Some(&Tok::Punct('(')) =>
            {
                i += 2;
                while i < toks.len() && toks[i] != Tok::Punct(')') {
                    if let Tok::Ident(l) = &toks[i] {
                        r.grouping.insert(l.clone());
                    }
                    i += 1;
                }
            }
            Tok::Ident(word) if KEYWORDS.contains(&word.as_str()) => {}
            // A function or an aggregation (`rate(…)`, `sum by (…) (…)`).
            Tok::Ident(_)
                if toks.get(i + 1) == Some(&Tok::Punct('('))
                    || matches!(toks.get(i + 1), Some(Tok::Ident(w)) if GROUPING.contains(&w.as_str())) =>
                {}
            Tok::Ident(name) => {
                let mut matchers = Vec::new();
                if toks.get(i + 1) == Some(&Tok::Punct('{')) {
                    i += 2;
                    while i < toks.len() && toks[i] != Tok::Punct('}') {
                        match (&toks[i], toks.get(i + 1), toks.get(i + 2)) {
                            (Tok::Ident(l), Some(Tok::Op(op)), Some(Tok::Str(v))) => {
                                matchers.push((l.clone(), op.clone(), v.clone()));
                                i += 3;
                            }
                            (Tok::Punct(','), _, _) => i += 1,
                            other => panic!("a label matcher in {expr}: {other:?}"),
                        }
                    }
                }
                r.metrics.push((name.clone(), matchers));
            }
            _ => {}
        }
        i += 1;
    }
    r
}

#[test]
fn the_promql_reader_sees_names_labels_and_values() {
    let r = reads(
        r#"histogram_quantile(0.95, sum by (le, event) (rate(x_bucket{stage="a",o!="b"}[$__rate_interval]))) / on (event) y_total offset 5m"#,
    );
    let names: Vec<&str> = r.metrics.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["x_bucket", "y_total"]);
    assert_eq!(r.metrics[0].1.len(), 2);
    assert_eq!(
        r.grouping,
        BTreeSet::from(["event".to_string(), "le".to_string()])
    );
}

/// The dashboard model as Grafana loads it: a uid, a schema version, a datasource variable
/// that every panel and target uses, panels on the 24-column grid without overlaps, targets
/// with distinct refIds.
fn check_model(d: &Value) -> Vec<String> {
    let uid = d["uid"].as_str().expect("uid");
    assert!(!uid.is_empty() && uid.len() <= 40, "uid {uid}");
    assert!(d["schemaVersion"].as_u64().expect("schemaVersion") >= 36);
    assert!(d["title"].as_str().is_some_and(|t| !t.is_empty()));
    let vars: Vec<&str> = d["templating"]["list"]
        .as_array()
        .expect("templating.list")
        .iter()
        .filter(|v| v["type"] == "datasource" && v["query"] == "prometheus")
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(vars, ["datasource"]);
    let panels = d["panels"].as_array().expect("panels");
    assert!(panels.len() >= 8, "{} panels", panels.len());
    let mut ids = BTreeSet::new();
    let mut cells = BTreeSet::new();
    let mut exprs = Vec::new();
    for p in panels {
        let title = p["title"].as_str().expect("a panel title");
        assert!(ids.insert(p["id"].as_u64().expect("a panel id")), "{title}");
        assert!(
            ["timeseries", "stat", "gauge", "bargauge", "table"]
                .contains(&p["type"].as_str().unwrap()),
            "{title}"
        );
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{title}");
        let g = &p["gridPos"];
        let (x, y, w, h) = (
            g["x"].as_u64().unwrap(),
            g["y"].as_u64().unwrap(),
            g["w"].as_u64().unwrap(),
            g["h"].as_u64().unwrap(),
        );
        assert!(w >= 1 && h >= 1 && x + w <= 24, "{title}: {g}");
        for cx in x..x + w {
            for cy in y..y + h {
                assert!(cells.insert((cx, cy)), "{title} overlaps another panel");
            }
        }
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{title}");
        let mut refs = BTreeSet::new();
        for t in targets {
            assert!(refs.insert(t["refId"].as_str().expect("refId")), "{title}");
            assert_eq!(t["datasource"]["uid"], "${datasource}", "{title}");
            exprs.push(t["expr"].as_str().expect("expr").to_string());
        }
    }
    exprs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_query_reads_series_the_app_serves() {
    let d = dashboard();
    let exprs = check_model(&d);

    let w = world(&[]).await;
    // One failed job run (GitHub answers the comment with a 502; the job is retried), so the
    // failure series exists too.
    w.fake.fail_next(
        "POST",
        "/repos/octo-org/shop/issues/7/comments",
        502,
        &[],
        1,
    );
    let check = fail_check(&w, &w.head, &corpus("logs/actions/ruff_unused_import.log"));
    deliver_check(&w, check).await;
    wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    say(&w, "maintainer", "/approve").await;
    wait_comment(&w, |b| b.contains("**pushed**")).await;
    let new_head = w.fake.branch_head(REPO, "feature").unwrap();
    let passed = w.fake.add_check_run(
        REPO,
        &new_head,
        CHECK,
        "github-actions",
        "success",
        CheckOutput::default(),
    );
    deliver_check(&w, passed).await;
    wait_comment(&w, |b| b.contains("**executed**")).await;

    let text = reqwest::get(w.server.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let series = exposition(&text);
    let mut checked = 0;
    for expr in &exprs {
        let r = reads(expr);
        assert!(!r.metrics.is_empty(), "{expr}");
        for (name, matchers) in &r.metrics {
            let of_name: Vec<&Series> = series.iter().filter(|(n, _)| n == name).collect();
            assert!(
                !of_name.is_empty(),
                "{name} (in `{expr}`) is not served at /metrics:\n{text}"
            );
            for (label, op, value) in matchers {
                assert!(
                    of_name.iter().any(|(_, l)| l.contains_key(label)),
                    "{name} has no label {label}"
                );
                if op == "=" {
                    assert!(
                        of_name.iter().any(|(_, l)| l.get(label) == Some(value)),
                        "no {name}{{{label}=\"{value}\"}} after a whole loop:\n{text}"
                    );
                }
            }
            checked += 1;
        }
        for label in &r.grouping {
            assert!(
                r.metrics.iter().any(|(name, _)| series
                    .iter()
                    .any(|(n, l)| n == name && l.contains_key(label))),
                "`{expr}` groups by {label}, which none of its series has"
            );
        }
    }
    println!(
        "{} queries, {checked} metric references, all served by a running ci-medic",
        exprs.len()
    );
    assert!(w.server.terminate().success());
}

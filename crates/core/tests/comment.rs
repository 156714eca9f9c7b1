//! The proposal comment: snapshots per state, JSON blocks that parse back, no break-out, no
//! pings, no secrets, and the size limit.

use ci_medic_core::comment::*;
use ci_medic_core::{BugReport, BugType};
use serde_json::json;

const ID: &str = "DDS-FIX-20260101-001";

fn view(status: ProposalStatusView) -> CommentView {
    CommentView {
        check_name: "CI / lint".into(),
        head_sha: "0123456789abcdef0123456789abcdef01234567".into(),
        pr_number: 42,
        dds_id: ID.into(),
        status,
        report_lines: vec![
            "src/app.py:3:1 LINTING F401 `os` imported but unused (ruff)".into(),
            "src/app.py:10:5 TYPE_ERROR incompatible types in assignment (mypy)".into(),
        ],
        reports_left_out: 0,
        fix_packet_json: json!({
            "version": "2",
            "errors": [{"file_path": "src/app.py", "line_number": 3, "message": "`os` imported but unused"}],
        }),
        dds_json: json!({"dds_id": ID, "status": "proposed", "type": "code_fix"}),
        out_of_scope_files: vec![],
        history: vec![HistoryEntry {
            at: "2026-01-01 10:00 UTC".into(),
            text: "proposed after run 123".into(),
        }],
        log_excerpt: Some(
            "src/app.py:3:1: F401 [*] `os` imported but unused\nFound 1 error.".into(),
        ),
        triage: None,
    }
}

/// Every fenced `json` block of a comment, by scanning fences as CommonMark does.
fn json_blocks(body: &str) -> Vec<serde_json::Value> {
    let mut blocks = Vec::new();
    let mut lines = body.lines();
    while let Some(line) = lines.next() {
        let ticks = line.chars().take_while(|&c| c == '`').count();
        if ticks >= 3 && &line[ticks..] == "json" {
            let fence = "`".repeat(ticks);
            let content: Vec<&str> = lines
                .by_ref()
                .take_while(|l| !l.starts_with(&fence))
                .collect();
            blocks.push(serde_json::from_str(&content.join("\n")).expect("json block parses"));
        }
    }
    blocks
}

#[test]
fn snapshots_of_each_state() {
    let states = [
        ("proposed", ProposalStatusView::Proposed),
        (
            "approved",
            ProposalStatusView::Approved {
                by: "maintainer".into(),
                at: "2026-01-01 10:05 UTC".into(),
            },
        ),
        (
            "rejected",
            ProposalStatusView::Rejected {
                by: "maintainer".into(),
                at: "2026-01-01 10:05 UTC".into(),
                reason: Some("breaks the <public> API, ask @team".into()),
            },
        ),
        (
            "fixing",
            ProposalStatusView::Fixing {
                approved_by: "maintainer".into(),
            },
        ),
        (
            "refused",
            ProposalStatusView::Refused {
                rule: "protected_path".into(),
                detail: "the patch edits .github/workflows/ci.yml".into(),
            },
        ),
        (
            "pushed",
            ProposalStatusView::Pushed {
                commit_sha: "fedcba9876543210fedcba9876543210fedcba98".into(),
                files: vec!["src/app.py".into()],
            },
        ),
        (
            "verifying",
            ProposalStatusView::Verifying {
                commit_sha: "fedcba9876543210fedcba9876543210fedcba98".into(),
                run_url: Some("https://github.com/o/r/actions/runs/2".into()),
            },
        ),
        (
            "executed",
            ProposalStatusView::Executed {
                commit_sha: "fedcba9876543210fedcba9876543210fedcba98".into(),
                run_url: Some("https://github.com/o/r/actions/runs/2".into()),
            },
        ),
        (
            "failed",
            ProposalStatusView::Failed {
                commit_sha: "fedcba9876543210fedcba9876543210fedcba98".into(),
                run_url: Some("javascript:alert(1)".into()),
                next_dds_id: Some("DDS-FIX-20260101-002".into()),
            },
        ),
        (
            "max_attempts",
            ProposalStatusView::MaxAttemptsReached {
                attempts: 3,
                max_attempts: 3,
            },
        ),
        (
            "stale",
            ProposalStatusView::Stale {
                head_sha: "aaaaaaa1111".into(),
            },
        ),
        (
            "logs_unavailable",
            ProposalStatusView::LogsUnavailable {
                reason: "the run's logs expired (HTTP 410)".into(),
            },
        ),
    ];
    for (name, status) in states {
        let body = render_comment(&view(status));
        assert_eq!(find_marker(&body).as_deref(), Some("CI / lint"));
        insta::assert_snapshot!(name, body);
    }
    let mut failed = view(ProposalStatusView::AnalysisFailed {
        reason: "no file/line could be read from the log".into(),
    });
    failed.report_lines.clear();
    failed.fix_packet_json = serde_json::Value::Null;
    failed.dds_json = serde_json::Value::Null;
    failed.out_of_scope_files = vec!["vendor/lib.c".into()];
    insta::assert_snapshot!("analysis_failed", render_comment(&failed));
}

#[test]
fn proposed_comment_says_how_to_act() {
    let body = render_comment(&view(ProposalStatusView::Proposed));
    assert!(body.contains(&format!("`/approve {ID}`")));
    assert!(body.contains(&format!("`/reject {ID} <reason>`")));
    // The instructions are in inline code, so ci-medic's own comment holds no live command.
    assert!(ci_medic_core::commands::parse_commands(&body).is_empty());
    let approved = render_comment(&view(ProposalStatusView::Approved {
        by: "m".into(),
        at: "t".into(),
    }));
    assert!(!approved.contains("/approve"));
}

#[test]
fn json_blocks_parse_back_to_the_input() {
    let v = view(ProposalStatusView::Proposed);
    let blocks = json_blocks(&render_comment(&v));
    assert_eq!(blocks, vec![v.fix_packet_json.clone(), v.dds_json.clone()]);

    // Hostile strings survive intact inside the JSON (they are data there).
    let mut hostile = view(ProposalStatusView::Proposed);
    hostile.fix_packet_json =
        json!({"message": "```\n</details><script>x</script>\n~~~", "n": [1, 2.5, null]});
    let blocks = json_blocks(&render_comment(&hostile));
    assert_eq!(blocks[0], hostile.fix_packet_json);
}

#[test]
fn logs_cannot_break_out() {
    let mut v = view(ProposalStatusView::Proposed);
    let evil =
        "```\n~~~\n</details>\n<script>alert(1)</script>\n<!-- \n/approve\n````````\n@octocat";
    v.log_excerpt = Some(evil.into());
    v.report_lines = vec![evil.replace('\n', " ")];
    v.history = vec![HistoryEntry {
        at: "</details>".into(),
        text: evil.into(),
    }];
    v.dds_id = "</summary></details><script>x</script>".into();
    v.check_name = "`lint` --> <script>".into();
    let body = render_comment(&v);
    // Parse the markdown and check nothing of the log escaped into HTML or text outside code.
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut html = Vec::new();
    let mut in_code = false;
    for event in Parser::new(&body) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Html(h) | Event::InlineHtml(h) => html.push(h.to_string()),
            Event::Text(t) if !in_code => assert!(!t.contains("<script>"), "{t}"),
            _ => {}
        }
    }
    for h in html
        .iter()
        .filter(|h| !h.starts_with("<!-- ci-medic:check="))
    {
        assert!(!h.contains("<script"), "HTML escaped the block: {h}");
    }
    let opens = html.iter().filter(|h| h.contains("<details>")).count();
    let closes = html.iter().filter(|h| h.contains("</details>")).count();
    assert_eq!(opens, closes, "{html:?}");
    assert!(ci_medic_core::commands::parse_commands(&body).is_empty());
    assert!(!body.contains("@octocat"));
    assert_eq!(json_blocks(&body).len(), 2);
    assert_eq!(find_marker(&body).as_deref(), Some("`lint` --> <script>"));
}

#[test]
fn mentions_do_not_ping() {
    let n = neutralize_mentions("thanks @octocat and @github/security, mail a@b.c, @ alone");
    assert!(!n.contains("@octocat") && !n.contains("@github"));
    assert!(n.contains("@ alone"));
    assert_eq!(
        n.replace('\u{200D}', ""),
        "thanks @octocat and @github/security, mail a@b.c, @ alone"
    );
    let mut v = view(ProposalStatusView::Rejected {
        by: "octocat".into(),
        at: "now".into(),
        reason: Some("@octocat no".into()),
    });
    v.report_lines.push("@octocat wrote this".into());
    v.log_excerpt = Some("@octocat".into());
    assert!(!render_comment(&v).contains("@octocat"));
}

#[test]
fn secrets_of_each_kind_are_redacted() {
    let cases = [
        "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij",
        "ghs_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij",
        "gho_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij",
        "ghu_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij",
        "ghr_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ",
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N",
        "s3cr3t-P@ss",
        "hunter2",
        "abc123def456",
        "xoxb-123456789012-abcdefghij",
        "dXNlcjpwYXNzd29yZA==",
        "tok3n-in-url",
    ];
    let log = format!(
        "push with {}\nGH_TOKEN={}\nexport TOKEN={} done\nkey {}\naws_secret_access_key = {}\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n\
         Authorization: Bearer {}\nDB_PASSWORD=\"{}\"\npassword: {}\napi_key={}&x=1\n{}\nAuthorization: Basic {}\nhttps://x-access-token:{}@github.com/o/r.git\n{} {} {} {}",
        cases[0],
        cases[1],
        cases[2],
        cases[6],
        cases[7],
        cases[8],
        cases[9],
        cases[10],
        cases[11],
        cases[12],
        cases[13],
        cases[14],
        cases[15],
        cases[3],
        cases[4],
        cases[5],
        "ok"
    );
    let redacted = redact(&log);
    for secret in cases {
        assert!(!redacted.contains(secret), "{secret} leaked:\n{redacted}");
    }
    assert!(redacted.contains("GH_TOKEN=[REDACTED]"), "{redacted}");
    assert!(
        redacted.contains("Authorization: Bearer [REDACTED]"),
        "{redacted}"
    );
    assert!(
        redacted.contains("https://x-access-token:[REDACTED]@github.com"),
        "{redacted}"
    );
    // Idempotent, and a truncated key block is hidden to the end.
    assert_eq!(redact(&redacted), redacted);
    let cut_block = redact("x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n");
    assert!(
        !cut_block.contains("b3BlbnNzaC1rZXktdjEAAAAA"),
        "{cut_block}"
    );

    // And in every place of the comment, JSON included.
    let mut v = view(ProposalStatusView::Refused {
        rule: "guard".into(),
        detail: format!("saw {}", cases[0]),
    });
    v.report_lines
        .push(format!("src/a.py:1 LOGIC token={}", cases[11]));
    v.log_excerpt = Some(log.clone());
    v.fix_packet_json = json!({"errors": [{"message": format!("bad creds {}", cases[0])}], "nested": {"k": cases[6]}});
    v.dds_json = json!({"note": format!("password={}", cases[11])});
    v.history.push(HistoryEntry {
        at: "t".into(),
        text: format!("retry with {}", cases[1]),
    });
    let body = render_comment(&v);
    for secret in cases {
        assert!(!body.contains(secret), "{secret} leaked into the comment");
    }
    let blocks = json_blocks(&body);
    assert_eq!(blocks[0]["errors"][0]["message"], "bad creds [REDACTED]");
    assert_eq!(blocks[1]["note"], "password=[REDACTED]");
}

#[test]
fn ordinary_log_text_is_not_redacted() {
    for text in [
        "src/lexer.rs:10:5: error: unexpected token: `)`",
        "SyntaxError: invalid token",
        "if token == expected {",
        "commit 0123456789abcdef0123456789abcdef01234567",
        "TypeError: expected str, got int",
    ] {
        assert_eq!(redact(text), text);
    }
}

#[test]
fn huge_views_stay_under_the_limit_and_say_so() {
    let mut v = view(ProposalStatusView::Proposed);
    v.report_lines = (0..5000)
        .map(|i| {
            format!(
                "src/f{i}.py:{i}:1 LINTING E501 line too long ({i} > 88) {}",
                "x".repeat(100)
            )
        })
        .collect();
    v.log_excerpt = Some("log line with ``` and </details>\n".repeat(20_000));
    v.history = (0..500)
        .map(|i| HistoryEntry {
            at: format!("t{i}"),
            text: "y".repeat(400),
        })
        .collect();
    v.out_of_scope_files = (0..500).map(|i| format!("vendor/{i}.c")).collect();
    let errors: Vec<_> = (0..5000)
        .map(|i| json!({"file_path": format!("src/f{i}.py"), "message": "line too long"}))
        .collect();
    v.fix_packet_json = json!({"errors": errors});
    let body = render_comment(&v);
    assert!(body.len() < COMMENT_LIMIT, "{}", body.len());
    assert!(body.contains("Shortened to fit GitHub's comment size limit"));
    assert!(body.contains("Fix Packet v2"));
    assert!(
        body.contains("too large"),
        "the Fix Packet is too big and must be noted"
    );
    let blocks = json_blocks(&body);
    assert_eq!(
        blocks,
        vec![v.dds_json.clone()],
        "the DDS block is kept, valid"
    );
    assert_eq!(find_marker(&body).as_deref(), Some("CI / lint"));

    // Moderately big: the packet stays, lines and excerpt are cut first.
    let mut m = view(ProposalStatusView::Proposed);
    m.report_lines = (0..200)
        .map(|i| format!("src/f{i}.py:{i}:1 LINTING E501 {}", "x".repeat(200)))
        .collect();
    m.log_excerpt = Some("z".repeat(100) + &"\nline".repeat(30_000));
    let body = render_comment(&m);
    assert!(body.len() < COMMENT_LIMIT);
    assert_eq!(
        json_blocks(&body),
        vec![m.fix_packet_json.clone(), m.dds_json.clone()]
    );
    assert!(
        body.contains("…and 170 more in the Fix Packet."),
        "{}",
        &body[..2000]
    );
}

#[test]
fn unicode_heavy_views_stay_under_the_limit() {
    let mut v = view(ProposalStatusView::Proposed);
    v.report_lines = (0..2000).map(|_| "é😀".repeat(300)).collect();
    v.log_excerpt = Some("😀".repeat(100_000));
    v.fix_packet_json = json!({"m": "😀".repeat(40_000)});
    let body = render_comment(&v);
    assert!(body.len() < COMMENT_LIMIT);
    assert!(body.encode_utf16().count() < COMMENT_LIMIT);
}

fn report(i: u32, column: Option<u32>) -> BugReport {
    BugReport {
        file_path: format!("src/m{i}.rs"),
        line_number: i + 1,
        error_type: BugType::TypeError,
        message: format!(
            "mismatched types; token=ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij @octocat {i}"
        ),
        test_name: (i == 0).then(|| "tests::it_works".to_string()),
        confidence_score: 0.9,
        column,
        tool: Some("rustc".into()),
        rule: Some("E0308".into()),
    }
}

#[test]
fn one_annotation_per_report() {
    let reports: Vec<BugReport> = (0..2)
        .map(|i| report(i, (i % 2 == 0).then_some(4)))
        .collect();
    let batches = [reports.iter().map(annotation).collect::<Vec<_>>()];
    let first = &batches[0][0];
    assert_eq!(first.path, "src/m0.rs");
    assert_eq!((first.start_line, first.end_line), (1, 1));
    assert_eq!(first.annotation_level, AnnotationLevel::Failure);
    assert_eq!(first.title, "TYPE_ERROR E0308 (rustc)");
    assert!(!first.message.contains("ghp_"));
    assert!(first.message.ends_with("Failing test: tests::it_works"));
    let json = serde_json::to_value(&batches[0][0]).unwrap();
    assert_eq!(json["annotation_level"], "failure");
    assert_eq!(json["start_column"], 4);
    let without = serde_json::to_value(&batches[0][1]).unwrap();
    assert!(without.get("start_column").is_none() && without.get("end_column").is_none());
    insta::assert_json_snapshot!("annotation", json);
}

#[test]
fn check_run_output_links_the_comment() {
    let v = view(ProposalStatusView::Proposed);
    let out = check_run_output(&v, Some("https://github.com/o/r/pull/42#issuecomment-1"));
    assert_eq!(out.title, "2 errors in CI / lint");
    assert!(
        out.summary
            .contains("(https://github.com/o/r/pull/42#issuecomment-1)")
    );
    assert!(out.text.as_deref().unwrap().contains("F401"));
    let no_link = check_run_output(&v, Some("javascript:alert(1)"));
    assert!(!no_link.summary.contains("javascript"));
    let mut big = v.clone();
    big.report_lines = (0..10_000)
        .map(|i| format!("line {i} {}", "x".repeat(80)))
        .collect();
    let out = check_run_output(&big, None);
    assert!(out.text.unwrap().chars().count() <= CHECK_OUTPUT_LIMIT);
    insta::assert_json_snapshot!(
        "check_run_output",
        check_run_output(&v, Some("https://github.com/o/r/pull/42#issuecomment-1"))
    );
}

#[test]
fn replies() {
    use ci_medic_core::repo_config::{Permission, RepoConfig};
    let config_error = RepoConfig::parse("fix:\n  max_attempts: 0\n").unwrap_err();
    let all = [
        not_permitted_reply("octocat", Permission::Read, Permission::Write),
        not_an_approver_reply("octocat"),
        author_not_allowed_reply(),
        no_open_proposal_reply(),
        unknown_proposal_reply("DDS-FIX-20260101-009"),
        already_decided_reply(
            ID,
            &ProposalStatusView::Rejected {
                by: "a".into(),
                at: "b".into(),
                reason: None,
            },
        ),
        approved_reply(ID, "octocat"),
        rejected_reply(ID, "octocat"),
        refused_reply(ID, "max_files_changed", "4 files > 3"),
        stale_reply(ID, "0123456789", "abcdef0123"),
        retry_reply("CI / lint"),
        nothing_to_retry_reply(),
        max_attempts_reply("CI / lint", 3, 3),
        config_error_reply(&config_error),
    ];
    for reply in &all {
        assert!(!reply.contains("@octocat"), "{reply}");
        assert!(reply.len() < 2000);
        assert!(
            ci_medic_core::commands::parse_commands(reply).is_empty(),
            "{reply}"
        );
    }
    insta::assert_snapshot!("replies", all.join("\n\n---\n\n"));
}

/// The parser's report cap: the comment and the check run say that more errors were found than
/// shown, at every layout the size budget forces, and say nothing when none were left out.
#[test]
fn findings_left_out_by_the_report_cap_are_announced_whatever_the_size() {
    let mut v = view(ProposalStatusView::Proposed);
    v.report_lines = (0..1000)
        .map(|i| {
            format!(
                "src/m{i}.py:{i}:1 LINTING E501 {} (flake8)",
                "x".repeat(300)
            )
        })
        .collect();
    v.log_excerpt = Some("y".repeat(60_000));
    assert!(!render_comment(&v).contains("More errors were found"));
    assert!(
        check_run_output(&v, None)
            .summary
            .find("More errors")
            .is_none()
    );
    v.reports_left_out = 42;
    let body = render_comment(&v);
    assert!(body.chars().count() <= COMMENT_BUDGET);
    let note = "**More errors were found than shown:** the log reports errors at more than 1000 \
                locations; ci-medic kept the first 1000 and left 42 further finding(s) out.";
    assert!(body.contains(note), "{}", &body[..2000]);
    assert!(check_run_output(&v, None).summary.contains(note));
}

/// A failure that is not the code's: its evidence lines are log text like any other, so they
/// are redacted, cannot ping, cannot break out of their block and are bounded; no proposal,
/// no JSON block, and `/rerun` is offered only for an Actions job.
#[test]
fn not_code_evidence_is_cleaned_bounded_and_offers_rerun_only_for_actions() {
    let mut v = view(ProposalStatusView::NotCode);
    v.dds_id = String::new();
    v.report_lines.clear();
    v.fix_packet_json = serde_json::Value::Null;
    v.dds_json = serde_json::Value::Null;
    v.log_excerpt = None;
    let token = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij";
    let mut evidence = vec![
        (
            12,
            format!("fatal: could not read from https://x-access-token:{token}@github.com/o/r"),
        ),
        (13, "```\n</details><script>x</script> @octocat".to_string()),
    ];
    evidence.extend((0..30).map(|i| {
        (
            100 + i,
            format!("npm ERR! network {i} {}", "x".repeat(2000)),
        )
    }));
    v.triage = Some(TriageView {
        kind: ci_medic_triage::FailureKind::Infrastructure,
        evidence,
        flaky: vec!["`test_x` passed on the same commit in attempt 1 (`test`) @octocat".into()],
        rules: vec!["infra.network".into()],
        actions_job: true,
    });
    let body = render_comment(&v);
    assert!(body.contains("**Kind:** `infrastructure`"), "{body}");
    assert!(!body.contains(token), "{body}");
    assert!(body.contains("[REDACTED]"), "{body}");
    assert!(!body.contains("@octocat"), "{body}");
    // The log's markup stays inside the evidence block.
    let mut html = Vec::new();
    for event in pulldown_cmark::Parser::new(&body) {
        if let pulldown_cmark::Event::Html(h) | pulldown_cmark::Event::InlineHtml(h) = event {
            assert!(!h.contains("<script"), "{h}");
            html.push(h.to_string());
        }
    }
    let opens = html.iter().filter(|h| h.contains("<details>")).count();
    let closes = html.iter().filter(|h| h.contains("</details>")).count();
    assert_eq!(opens, closes, "{html:?}");
    assert!(json_blocks(&body).is_empty());
    assert!(body.contains("`/rerun`"), "{body}");
    assert!(ci_medic_core::commands::parse_commands(&body).is_empty());
    // At most ten evidence lines of at most 500 characters.
    assert!(
        body.contains("line 12:") && !body.contains("line 108:"),
        "{body}"
    );
    assert!(
        body.lines().all(|l| l.chars().count() < 700),
        "a line too long"
    );

    let mut other = v.clone();
    if let Some(t) = other.triage.as_mut() {
        t.actions_job = false;
    }
    let body = render_comment(&other);
    assert!(!body.contains("`/rerun` re-runs"), "{body}");
    assert!(body.contains("not a GitHub Actions job"), "{body}");
    // Once a re-run is under way, nothing more is asked of anyone.
    v.status = ProposalStatusView::RerunRequested {
        by: None,
        at: "2026-01-01 10:00 UTC".into(),
    };
    let body = render_comment(&v);
    assert!(body.contains("automatically"), "{body}");
    assert!(!body.contains("**To act:**"), "{body}");
}

#[test]
fn timeouts_read_in_the_largest_whole_unit() {
    use ci_medic_core::comment::minutes_text;
    assert_eq!(minutes_text(1), "1 minute");
    assert_eq!(minutes_text(45), "45 minutes");
    assert_eq!(minutes_text(60), "1 hour");
    assert_eq!(minutes_text(90), "90 minutes");
    assert_eq!(minutes_text(360), "6 hours");
}

//! Property tests: any bytes parse without panicking, the result is the same on every run and
//! whatever the chunking, and every report honours the contract (repo-relative path, line >= 1,
//! confidence in 0–1).

use ci_medic_parser::{BugReport, ParseOptions, Parser, parse_bytes};
use proptest::prelude::*;

fn assert_contract(reports: &[BugReport]) {
    for r in reports {
        let p = &r.file_path;
        assert!(!p.is_empty());
        assert!(!p.starts_with('/'), "absolute path {p}");
        assert!(!p.contains('\\'), "backslash in {p}");
        assert!(
            !p.split('/').any(|s| s == ".." || s == "." || s.is_empty()),
            "{p}"
        );
        assert!(!(p.len() >= 2 && p.as_bytes()[1] == b':'), "drive path {p}");
        assert!(r.line_number >= 1);
        assert!((0.0..=1.0).contains(&r.confidence_score));
    }
    assert!(reports.len() <= ci_medic_parser::MAX_REPORTS);
}

/// Lines shaped like real tool output, with hostile paths mixed in.
fn tool_line() -> impl Strategy<Value = String> {
    let path = prop_oneof![
        Just("src/a.py".to_string()),
        Just("/home/runner/work/R/R/src/b.rs".to_string()),
        Just("/etc/passwd".to_string()),
        Just("../../x.ts".to_string()),
        Just("D:\\a\\R\\R\\src\\c.go".to_string()),
        Just("a/../../../etc/shadow.c".to_string()),
        "[a-z/._-]{1,20}",
    ];
    let n = 0u64..100_000;
    (path, n.clone(), n, 0usize..14).prop_map(|(p, l, c, k)| match k {
        0 => format!("{p}:{l}:{c}: F401 `os` imported but unused"),
        1 => format!("error[E0432]: unresolved import\n --> {p}:{l}:{c}"),
        2 => format!("{p}({l},{c}): error TS2307: Cannot find module 'x'"),
        3 => format!("  File \"{p}\", line {l}\nSyntaxError: invalid syntax"),
        4 => format!("{p}:{l}:{c}: error: expected ';'"),
        5 => format!("thread 'main' panicked at {p}:{l}:{c}:\nboom"),
        6 => format!("--- FAIL: TestX (0.00s)\n    {p}:{l}: bad"),
        7 => format!("[ERROR] {p}:[{l},{c}] cannot find symbol"),
        8 => format!("  ● suite › test\n\n    boom\n\n      at Object.<anonymous> ({p}:{l}:{c})"),
        9 => "=================== FAILURES ===================\n____ test_x ____".to_string(),
        10 => format!("{p}:{l}: AssertionError"),
        11 => format!("::error file={p},line={l}::boom"),
        12 => format!("2025-04-16T01:48:17.7662819Z \u{1b}[31m{p}:{l}:{c}: error: x\u{1b}[0m\r"),
        _ => format!("e: file://{p}:{l}:{c} Unresolved reference: x"),
    })
}

/// Pieces of hostile bytes: escapes cut short or ending inside a character, BOMs, `\r`,
/// multi-byte characters and invalid UTF-8, to mix with tool lines.
fn noise() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        tool_line().prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 0..24),
        proptest::sample::select(vec![
            "\u{1b}[1m",
            "\u{1b}[",
            "\u{1b}",
            "\u{1b}(B",
            "\u{1b}é",
            "\u{1b}(é",
            "\u{1b}]0;t\u{7}",
            "\u{1b}]0;é\u{1b}\\",
            "\u{1b}[1;é",
            "\u{feff}",
            "é",
            "€",
            "😀",
            "\r",
            "\n",
            " ",
            ":",
            ":1",
            "2025-04-16T01:48:17.7662819Z ",
            "2025-04-16T01:48:17+01:00 ",
            "##[error]",
            "##[group]Run x",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic_and_are_deterministic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let opts = ParseOptions::default();
        let a = parse_bytes(&bytes, &opts);
        let b = parse_bytes(&bytes, &opts);
        prop_assert_eq!(&a, &b);
        assert_contract(&a);
    }

    #[test]
    fn tool_shaped_logs_respect_the_contract(lines in proptest::collection::vec(tool_line(), 0..60)) {
        let log = lines.join("\n");
        let opts = ParseOptions::default();
        let a = parse_bytes(log.as_bytes(), &opts);
        assert_contract(&a);
        prop_assert_eq!(&a, &parse_bytes(log.as_bytes(), &opts));
    }

    #[test]
    fn chunking_does_not_change_the_result(lines in proptest::collection::vec(tool_line(), 0..40), chunk in 1usize..97) {
        let log = lines.join("\n");
        let opts = ParseOptions::default();
        let whole = parse_bytes(log.as_bytes(), &opts);
        let mut p = Parser::new(&opts);
        for c in log.as_bytes().chunks(chunk) {
            p.feed(c);
        }
        prop_assert_eq!(whole, p.finish());
    }

    /// `feed` validates UTF-8 per chunk and takes a faster path for valid lines; it must give
    /// what `feed_line` (which decodes each line lossily on its own) gives, whatever the bytes.
    #[test]
    fn chunk_validation_matches_line_by_line(pieces in proptest::collection::vec(noise(), 0..40), chunk in 1usize..200) {
        let log = pieces.concat();
        let opts = ParseOptions::default();
        let mut by_line = Parser::new(&opts);
        let mut lines: Vec<&[u8]> = log.split(|b| *b == b'\n').collect();
        if lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        for l in lines {
            by_line.feed_line(l);
        }
        let by_line = by_line.finish();
        prop_assert_eq!(&parse_bytes(&log, &opts), &by_line);
        let mut p = Parser::new(&opts);
        for c in log.chunks(chunk) {
            p.feed(c);
        }
        prop_assert_eq!(p.finish(), by_line);
    }
}

#[test]
fn escaping_paths_are_never_emitted() {
    let log = "/etc/passwd:3:1: error: expected ';'\n../x.py:1:1: F401 unused\nerror[E0425]: x\n --> /home/runner/.cargo/registry/src/a/lib.rs:1:1\n\n";
    assert!(parse_bytes(log.as_bytes(), &ParseOptions::default()).is_empty());
}

#[test]
fn very_long_lines_and_many_errors_stay_bounded() {
    let mut log = vec![b'x'; 10 * 1024 * 1024];
    log.push(b'\n');
    for i in 1..5000 {
        log.extend_from_slice(format!("src/f{i}.py:{i}:1: F401 unused\n").as_bytes());
    }
    let r = parse_bytes(&log, &ParseOptions::default());
    assert_eq!(r.len(), ci_medic_parser::MAX_REPORTS);
    assert_eq!(r[0].file_path, "src/f1.py");
}

//! Fuzz target: arbitrary bytes never panic, parsing is deterministic and chunking-independent,
//! and every emitted path is repo-relative.
#![no_main]

use ci_medic_parser::{ParseOptions, Parser, parse_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = ParseOptions::default();
    let a = parse_bytes(data, &opts);
    let mut p = Parser::new(&opts);
    for chunk in data.chunks(7) {
        p.feed(chunk);
    }
    assert_eq!(a, p.finish());
    for r in &a {
        assert!(!r.file_path.starts_with('/'));
        assert!(!r.file_path.split('/').any(|s| s == ".." || s.is_empty()));
        assert!(r.line_number >= 1);
    }
});

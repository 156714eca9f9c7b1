//! Fuzz target: arbitrary bytes never make the triage panic; it is chunking-independent, its
//! evidence stays bounded and points at real lines, and a log the parser found reports in is
//! always `code`.
#![no_main]

use ci_medic_parser::{ParseOptions, parse_bytes};
use ci_medic_triage::{
    CheckFacts, FailureKind, MAX_EVIDENCE, MAX_EVIDENCE_CHARS, Triager, triage,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let reports = parse_bytes(data, &ParseOptions::default());
    let facts = CheckFacts::default();
    let whole = triage(data, &reports, &facts, &[]);
    let mut t = Triager::new();
    for chunk in data.chunks(7) {
        t.feed(chunk);
    }
    assert_eq!(whole, t.finish(&reports, &facts, &[]));
    if !reports.is_empty() {
        assert_eq!(whole.kind, FailureKind::Code);
    }
    assert!(whole.evidence.len() <= MAX_EVIDENCE);
    let lines = data.split(|b| *b == b'\n').count();
    for e in &whole.evidence {
        assert!(e.line >= 1 && e.line <= lines);
        assert!(e.text.chars().count() <= MAX_EVIDENCE_CHARS + 2);
    }
});

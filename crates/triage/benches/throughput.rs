//! Prints the triage's throughput on a 100 MiB generated GitHub Actions job log next to the
//! parser's, measured in the same run on the same bytes (the parser's own log generator), both
//! over the whole buffer and streamed in 64 KiB chunks as the service reads a download.
//! `cargo bench -p ci-medic-triage --bench throughput`; `TRIAGE_BENCH_MIB` changes the size.

#[path = "../../parser/benches/loggen.rs"]
mod loggen;

use std::io::Read;
use std::time::Instant;

use ci_medic_parser::{ParseOptions, Parser, parse_bytes};
use ci_medic_triage::{CheckFacts, Triager, triage};

fn main() {
    let mib: u64 = std::env::var("TRIAGE_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let mut log = Vec::new();
    loggen::LogGen::new(mib * 1024 * 1024)
        .read_to_end(&mut log)
        .expect("the generator never fails");
    let mb = log.len() as f64 / (1024.0 * 1024.0);
    let facts = CheckFacts::default();
    let rate = |secs: f64| mb / secs;

    let t = Instant::now();
    let reports = parse_bytes(&log, &ParseOptions::default());
    let parse = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let whole = triage(&log, &reports, &facts, &[]);
    let tri = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut p = Parser::new(&ParseOptions::default());
    let mut s = Triager::new();
    for chunk in log.chunks(64 * 1024) {
        p.feed(chunk);
        s.feed(chunk);
    }
    let streamed_reports = p.finish();
    let streamed = s.finish(&streamed_reports, &facts, &[]);
    let both = t.elapsed().as_secs_f64();
    assert_eq!(streamed, whole, "streaming changes nothing");

    println!(
        "log: {mb:.0} MiB, {} lines, {} reports, kind {}",
        log.iter().filter(|b| **b == b'\n').count(),
        reports.len(),
        whole.kind
    );
    println!(
        "parser  (whole buffer): {parse:>6.2} s  {:>7.1} MiB/s",
        rate(parse)
    );
    println!(
        "triage  (whole buffer): {tri:>6.2} s  {:>7.1} MiB/s",
        rate(tri)
    );
    println!(
        "parser + triage, 64 KiB chunks: {both:>6.2} s  {:>7.1} MiB/s (triage adds {:.0}% to parsing)",
        rate(both),
        100.0 * tri / parse
    );
}

//! Criterion benchmark: parser throughput on a realistic generated GitHub Actions log.

mod loggen;

use std::io::Read;

use ci_medic_parser::{ParseOptions, parse_bytes};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let mut log = Vec::new();
    loggen::LogGen::new(16 * 1024 * 1024)
        .read_to_end(&mut log)
        .expect("generator never fails");
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(log.len() as u64));
    group.sample_size(10);
    group.bench_function("actions_log_16MiB", |b| {
        b.iter(|| parse_bytes(&log, &ParseOptions::default()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Throughput and memory benchmark: streams a generated, realistic GitHub Actions log of
//! `--size-mb N` megabytes (never materialised) through `parse_reader` and prints MB/s and the
//! process's peak resident memory (VmHWM).
//!
//! `cargo run --release -p ci-medic-parser --example bench_log -- --size-mb 1024`
//! (`--dump` also prints the reports as JSON on stderr, to diff two versions of the parser).

#[path = "../benches/loggen.rs"]
mod loggen;

use std::time::Instant;

use ci_medic_parser::{ParseOptions, parse_reader};

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// User + system CPU time of this process, in seconds (from /proc/self/stat, clock ticks).
fn cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

fn main() -> std::io::Result<()> {
    let mut size_mb: u64 = 100;
    let mut dump = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--size-mb" {
            size_mb = args.next().and_then(|v| v.parse().ok()).unwrap_or(size_mb);
        } else if a == "--dump" {
            dump = true;
        }
    }
    let bytes = size_mb * 1024 * 1024;
    let cpu_start = cpu_secs();
    let start = Instant::now();
    let reports = parse_reader(loggen::LogGen::new(bytes), &ParseOptions::default())?;
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_secs().zip(cpu_start).map(|(b, a)| b - a);
    if dump {
        // The reports themselves, to diff the output of two versions of the parser.
        let json = serde_json::to_string_pretty(&reports).map_err(std::io::Error::other)?;
        eprintln!("{json}");
    }
    let mb = bytes as f64 / (1024.0 * 1024.0);
    println!("log size:            {mb:.0} MiB");
    println!("reports:             {}", reports.len());
    println!("wall time:           {secs:.2} s");
    println!("throughput:          {:.0} MiB/s (wall clock)", mb / secs);
    if let Some(cpu) = cpu.filter(|c| *c > 0.0) {
        println!("CPU time:            {cpu:.2} s");
        println!(
            "throughput per core: {:.0} MiB/s (per CPU-second)",
            mb / cpu
        );
    }
    match vm_hwm_kib() {
        Some(k) => println!("peak RSS (VmHWM):    {:.1} MiB", k as f64 / 1024.0),
        None => println!("peak RSS (VmHWM):    unavailable"),
    }
    Ok(())
}

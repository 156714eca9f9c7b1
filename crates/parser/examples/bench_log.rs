//! Throughput and memory benchmark on a generated, realistic GitHub Actions log of
//! `--size-mb N` MiB (N × 2^20 bytes; figures are printed in both MB = 10^6 and MiB = 2^20).
//!
//! Two modes:
//! - **in memory** (default up to 256 MiB): the log is generated into memory first, then only
//!   `parse_reader` over a `&[u8]` reader of those bytes is timed. This is the parser's
//!   throughput, without the generator's cost.
//! - **streaming** (default above 256 MiB, or `--stream`): the generator is streamed through
//!   `parse_reader` and never materialised, so the peak resident memory (VmHWM) is the parser's
//!   own. The time then includes the generator producing the bytes.
//!
//! CPU time is the parsing thread's own (`/proc/thread-self/schedstat`, nanoseconds), so the
//! per-CPU-second figure does not depend on what else the machine runs.
//!
//! `cargo run --release -p ci-medic-parser --example bench_log -- --size-mb 100` (throughput)
//! `cargo run --release -p ci-medic-parser --example bench_log -- --size-mb 1024` (memory)
//! (`--in-memory` / `--stream` choose the mode; `--dump` also prints the reports as JSON on
//! stderr, to diff two versions of the parser.)

#[path = "../benches/loggen.rs"]
mod loggen;

use std::io::Read;
use std::time::Instant;

use ci_medic_parser::{ParseOptions, parse_reader};

/// Largest log generated into memory unless `--in-memory` is given.
const IN_MEMORY_MAX_MIB: u64 = 256;

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time of the calling thread, in seconds: nanoseconds from `/proc/thread-self/schedstat`,
/// else the process's user + system clock ticks from `/proc/self/stat` (10 ms resolution).
fn cpu_secs() -> Option<f64> {
    if let Some(ns) = std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
    {
        return Some(ns as f64 / 1e9);
    }
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

fn main() -> std::io::Result<()> {
    let mut size_mib: u64 = 100;
    let mut dump = false;
    let mut stream = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--size-mb" => size_mib = args.next().and_then(|v| v.parse().ok()).unwrap_or(size_mib),
            "--dump" => dump = true,
            "--stream" => stream = Some(true),
            "--in-memory" => stream = Some(false),
            _ => {}
        }
    }
    let stream = stream.unwrap_or(size_mib > IN_MEMORY_MAX_MIB);
    let bytes = size_mib * 1024 * 1024;

    let (reports, secs, cpu) = if stream {
        let cpu_start = cpu_secs();
        let start = Instant::now();
        let reports = parse_reader(loggen::LogGen::new(bytes), &ParseOptions::default())?;
        let secs = start.elapsed().as_secs_f64();
        (reports, secs, cpu_secs().zip(cpu_start).map(|(b, a)| b - a))
    } else {
        let mut log = Vec::with_capacity(bytes as usize);
        loggen::LogGen::new(bytes).read_to_end(&mut log)?;
        let cpu_start = cpu_secs();
        let start = Instant::now();
        let reports = parse_reader(log.as_slice(), &ParseOptions::default())?;
        let secs = start.elapsed().as_secs_f64();
        (reports, secs, cpu_secs().zip(cpu_start).map(|(b, a)| b - a))
    };
    if dump {
        // The reports themselves, to diff the output of two versions of the parser.
        let json = serde_json::to_string_pretty(&reports).map_err(std::io::Error::other)?;
        eprintln!("{json}");
    }

    let mib = bytes as f64 / (1024.0 * 1024.0);
    let mb = bytes as f64 / 1e6;
    if stream {
        println!("mode:                streaming (generator -> parse_reader, never materialised;");
        println!("                     times include generating the bytes)");
    } else {
        println!("mode:                in memory (log generated first; only parse_reader over");
        println!("                     a &[u8] of it is timed)");
    }
    println!("log size:            {mib:.0} MiB = {mb:.1} MB");
    println!("reports:             {}", reports.len());
    println!("wall time:           {secs:.3} s");
    println!(
        "throughput (wall):   {:.0} MB/s = {:.0} MiB/s",
        mb / secs,
        mib / secs
    );
    if let Some(cpu) = cpu.filter(|c| *c > 0.0) {
        println!("CPU time:            {cpu:.3} s (parsing thread)");
        println!(
            "throughput per core: {:.0} MB/s = {:.0} MiB/s (per CPU-second)",
            mb / cpu,
            mib / cpu
        );
    }
    match vm_hwm_kib() {
        Some(k) if stream => println!("peak RSS (VmHWM):    {:.1} MiB", k as f64 / 1024.0),
        Some(k) => println!(
            "peak RSS (VmHWM):    {:.1} MiB (includes the {mib:.0} MiB log held in memory; \
             use --stream for the parser's own)",
            k as f64 / 1024.0
        ),
        None => println!("peak RSS (VmHWM):    unavailable"),
    }
    Ok(())
}

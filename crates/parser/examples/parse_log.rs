//! Parses a log file (or stdin) and prints the reports as JSON; `--sarif` prints SARIF instead.
//! Usage: cargo run -p ci-medic-parser --example parse_log -- [--sarif] [--workspace DIR] [FILE]

use ci_medic_parser::{ParseOptions, parse_reader, sarif};

fn main() -> std::io::Result<()> {
    let mut opts = ParseOptions::default();
    let mut sarif_out = false;
    let mut file = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sarif" => sarif_out = true,
            "--workspace" => opts.workspace = args.next(),
            _ => file = Some(a),
        }
    }
    let reports = match file {
        Some(f) => parse_reader(std::fs::File::open(f)?, &opts)?,
        None => parse_reader(std::io::stdin().lock(), &opts)?,
    };
    let out = if sarif_out {
        sarif::to_sarif(&reports)
    } else {
        serde_json::to_value(&reports).map_err(std::io::Error::other)?
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&out).map_err(std::io::Error::other)?
    );
    Ok(())
}

//! The progress line `ci-medic analyze` draws on a terminal while it reads a large log: bytes
//! read, the total when it is known, the percentage and the rate.
//!
//! Pure: the shell (`src/cli/progress.rs`) counts bytes, reads the clock, decides whether
//! standard error is a terminal and draws; this module only decides when a log is large enough
//! and formats the line. It never writes and never reads the clock.

use std::time::Duration;

/// Inputs at least this large get a progress line; smaller ones are read before anyone could
/// read the line.
pub const LARGE_INPUT: u64 = 8 * 1024 * 1024;

/// Whether progress is shown: the input is known to be large, or (standard input, size unknown)
/// this much has been read already.
pub fn shows(total: Option<u64>, read: u64) -> bool {
    total.is_some_and(|t| t >= LARGE_INPUT) || read >= LARGE_INPUT
}

/// `1.5 MiB`: binary units, one decimal from KiB up.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

/// `read 12.0 MiB / 48.0 MiB (25%), 80.0 MiB/s`; without a total, `read 12.0 MiB, 80.0 MiB/s`.
/// The rate is left out until some time has passed, and the percentage never passes 100 (a
/// file that grew while it was read).
pub fn line(read: u64, total: Option<u64>, elapsed: Duration) -> String {
    let mut s = format!("read {}", bytes(read));
    if let Some(t) = total {
        let pct = if t == 0 {
            100
        } else {
            (u128::from(read) * 100 / u128::from(t)).min(100)
        };
        s.push_str(&format!(" / {} ({pct}%)", bytes(t)));
    }
    let secs = elapsed.as_secs_f64();
    if secs >= 0.001 {
        let rate = (read as f64 / secs) as u64;
        s.push_str(&format!(", {}/s", bytes(rate)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_and_unknown_totals() {
        let mib = 1024 * 1024;
        assert_eq!(
            line(12 * mib, Some(48 * mib), Duration::from_millis(150)),
            "read 12.0 MiB / 48.0 MiB (25%), 80.0 MiB/s"
        );
        assert_eq!(
            line(3 * mib / 2, None, Duration::from_secs(3)),
            "read 1.5 MiB, 512.0 KiB/s"
        );
        assert_eq!(
            line(0, Some(9 * mib), Duration::ZERO),
            "read 0 B / 9.0 MiB (0%)"
        );
        assert_eq!(
            line(10 * mib, Some(9 * mib), Duration::from_secs(1)),
            "read 10.0 MiB / 9.0 MiB (100%), 10.0 MiB/s"
        );
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(5 * 1024 * mib), "5.0 GiB");
    }

    #[test]
    fn only_large_inputs_show_progress() {
        assert!(!shows(Some(LARGE_INPUT - 1), 0));
        assert!(shows(Some(LARGE_INPUT), 0));
        assert!(!shows(None, LARGE_INPUT - 1));
        assert!(shows(None, LARGE_INPUT));
        assert!(!shows(Some(10), 10));
    }
}

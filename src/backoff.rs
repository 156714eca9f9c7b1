//! One exponential backoff with jitter, for every retry loop: GitHub calls, queued jobs and the
//! LLM client.
//!
//! Retry `n` (0-based) waits between half and all of `initial · 2^n`, capped at `max` ("equal
//! jitter"): never less than half, so a retry still backs off, and never the same for every
//! client, so workers that failed together after a shared outage do not come back together.
//! It must never wait longer than `max`, and never panic or overflow, whatever `n`.

use std::time::Duration;

/// An exponential backoff: `initial`, doubled each retry, capped at `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
}

impl Backoff {
    pub fn new(initial: Duration, max: Duration) -> Self {
        Backoff { initial, max }
    }

    /// The most retry `n` waits: `initial · 2^n`, at most `max`.
    pub fn ceiling(&self, n: u32) -> Duration {
        let factor = 1u32.checked_shl(n.min(31)).unwrap_or(u32::MAX);
        self.initial.saturating_mul(factor).min(self.max)
    }

    /// The wait before retry `n`, jittered with the operating system's randomness.
    pub fn delay(&self, n: u32) -> Duration {
        let mut bytes = [0u8; 8];
        // Without randomness the wait is the ceiling: still a backoff, only not spread.
        let random = getrandom::fill(&mut bytes).map_or(u64::MAX, |()| u64::from_le_bytes(bytes));
        self.delay_with(n, random)
    }

    /// The wait before retry `n` for a given random number: half the ceiling, plus
    /// `random`'s share of the other half.
    pub fn delay_with(&self, n: u32, random: u64) -> Duration {
        let ceiling = self.ceiling(n);
        let half = ceiling / 2;
        let spread = (ceiling - half).as_nanos();
        let extra = (spread * u128::from(random)) / u128::from(u64::MAX);
        half + Duration::from_nanos(u64::try_from(extra).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_ceiling_doubles_and_caps() {
        let b = Backoff::new(Duration::from_millis(100), Duration::from_millis(350));
        assert_eq!(b.ceiling(0), Duration::from_millis(100));
        assert_eq!(b.ceiling(1), Duration::from_millis(200));
        assert_eq!(b.ceiling(2), Duration::from_millis(350));
        assert_eq!(b.ceiling(u32::MAX), Duration::from_millis(350));
    }

    #[test]
    fn the_jitter_spans_the_upper_half() {
        let b = Backoff::new(Duration::from_secs(2), Duration::from_secs(300));
        assert_eq!(b.delay_with(1, 0), Duration::from_secs(2));
        assert_eq!(b.delay_with(1, u64::MAX), Duration::from_secs(4));
        let waits: std::collections::BTreeSet<Duration> = (0..32).map(|_| b.delay(3)).collect();
        assert!(waits.len() > 1, "the OS randomness spreads the waits");
    }

    proptest! {
        #[test]
        fn a_wait_is_within_half_and_all_of_its_ceiling(
            initial_ms in 0u64..10_000,
            max_ms in 0u64..1_000_000,
            n in any::<u32>(),
            random in any::<u64>(),
        ) {
            let b = Backoff::new(Duration::from_millis(initial_ms), Duration::from_millis(max_ms));
            let d = b.delay_with(n, random);
            prop_assert!(d <= b.ceiling(n) && d <= b.max);
            prop_assert!(d >= b.ceiling(n) / 2);
        }
    }
}

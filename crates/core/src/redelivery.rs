//! Which webhook deliveries to ask GitHub to send again, read from the App's delivery log.
//!
//! GitHub never retries a failed webhook delivery by itself: while ci-medic is down (a deploy, a
//! crash) or answers 5xx (a full disk), the events of that time are simply missed. The App's
//! delivery log (`GET /app/hook/deliveries`) lists every *attempt*, newest first: its own `id`,
//! the event's `guid` (the `X-GitHub-Delivery` header ci-medic de-duplicates on), when it was
//! made, its HTTP status, and `redelivery: true` for the attempts asked for afterwards, which
//! keep the guid. This module decides, from those attempts and the guids ci-medic already
//! holds, which attempt ids to hand to `POST /app/hook/deliveries/{id}/attempts`, and how far
//! back to read the log.
//!
//! The rules, per event (guid):
//! - it is considered when one of its attempts is inside the look-back window;
//! - nothing is asked when an attempt got a 2xx, or ci-medic holds the guid (GitHub may have
//!   timed out on an answer ci-medic had already made durable);
//! - nothing is asked when ci-medic refused it on purpose (a 4xx other than 408 and 429: a bad
//!   signature, a malformed payload, too large): the same bytes would be refused again;
//! - nothing is asked once GitHub lists [`Limits::max_redeliveries`] redelivery attempts that
//!   all failed: the event is given up and said so;
//! - otherwise its newest attempt id is asked for, once per pass, oldest event first (so the
//!   `check_run` comes before the `/approve` that follows it), at most
//!   [`Limits::max_per_pass`] in a pass; the rest wait for the next one.
//!
//! Pure: no I/O, no clock (the caller passes `now`), no randomness. It never decides anything
//! from the order of the log it is given.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Duration, Utc};

/// The id of one delivery attempt in GitHub's delivery log: what a redelivery request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttemptId(pub u64);

/// The GUID of a webhook event, `X-GitHub-Delivery`; every attempt of the event shares it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeliveryGuid(pub String);

impl DeliveryGuid {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One attempt of GitHub's delivery log, with the fields the decision reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub id: AttemptId,
    pub guid: DeliveryGuid,
    pub delivered_at: DateTime<Utc>,
    /// True for an attempt made on request after the first one.
    pub redelivery: bool,
    /// The HTTP status ci-medic answered; GitHub records a failure to connect as 502 and a
    /// timeout as a 5xx too (never as a 2xx).
    pub status_code: u16,
}

impl Attempt {
    fn succeeded(&self) -> bool {
        (200..300).contains(&self.status_code)
    }
}

/// True when an attempt that got `status` may succeed if sent again: no answer at all (0),
/// a timeout (408), "too many" (429), or a server error. ci-medic answers every other 4xx to a
/// delivery it will refuse again, whatever the time.
pub fn worth_redelivering(status: u16) -> bool {
    status == 0 || status == 408 || status == 429 || (500..600).contains(&status)
}

/// How far back the delivery log is read in a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Never read further back than this: GitHub redelivers only recent events (3 days on
    /// github.com).
    pub max_look_back: Duration,
    /// Read this much before the reference point too: the clocks of GitHub and ci-medic
    /// differ, and an attempt may be listed a little after it was made.
    pub overlap: Duration,
}

/// Where a pass starts reading the log (it reads from the newest attempt back to this).
///
/// After a pass that read the log, the next one starts where that one started; the first
/// pass of a process starts at the newest delivery ci-medic recorded, since everything after it
/// may have been missed while it was down; with nothing recorded, as far back as allowed.
pub fn look_back_start(
    now: DateTime<Utc>,
    last_pass: Option<DateTime<Utc>>,
    newest_recorded: Option<DateTime<Utc>>,
    window: Window,
) -> DateTime<Utc> {
    let earliest = now - window.max_look_back;
    match last_pass.or(newest_recorded) {
        Some(reference) => (reference - window.overlap).max(earliest).min(now),
        None => earliest,
    }
}

/// True when `page` reaches back past `since`: the pages after it are older still.
pub fn reaches(page: &[Attempt], since: DateTime<Utc>) -> bool {
    page.iter().any(|a| a.delivered_at < since)
}

/// Bounds of a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Redeliveries asked for in one pass.
    pub max_per_pass: usize,
    /// Failed redelivery attempts of one event after which it is given up.
    pub max_redeliveries: usize,
}

/// What a pass should do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    /// Attempt ids to ask GitHub to redeliver, oldest event first, one per event.
    pub redeliver: Vec<(AttemptId, DeliveryGuid)>,
    /// Events that would be asked for but passed the pass's bound: the next pass takes them.
    pub deferred: usize,
    /// Events whose redeliveries kept failing: not asked for again.
    pub given_up: Vec<DeliveryGuid>,
    /// Events ci-medic refused on purpose (4xx): not asked for.
    pub refused: usize,
}

/// Decides which events to redeliver from the attempts read (`log`, any order, possibly
/// repeated across pages), the start of the window, and the guids ci-medic holds.
pub fn select(
    log: &[Attempt],
    since: DateTime<Utc>,
    held: &HashSet<DeliveryGuid>,
    limits: Limits,
) -> Selection {
    let mut events: BTreeMap<&DeliveryGuid, Vec<&Attempt>> = BTreeMap::new();
    for a in log {
        events.entry(&a.guid).or_default().push(a);
    }
    let mut selection = Selection::default();
    // (first attempt's time and id, guid, attempt to name). Times have whole seconds only;
    // GitHub's ids grow with time, so they order the attempts of one second.
    let mut wanted: Vec<(DateTime<Utc>, AttemptId, &DeliveryGuid, AttemptId)> = Vec::new();
    for (guid, mut attempts) in events {
        attempts.sort_by_key(|a| (a.delivered_at, a.id));
        attempts.dedup_by_key(|a| a.id);
        if !attempts.iter().any(|a| a.delivered_at >= since)
            || attempts.iter().any(|a| a.succeeded())
            || held.contains(guid)
        {
            continue;
        }
        let (Some(first), Some(newest)) = (attempts.first(), attempts.last()) else {
            continue;
        };
        if !worth_redelivering(newest.status_code) {
            selection.refused += 1;
            continue;
        }
        if attempts.iter().filter(|a| a.redelivery).count() >= limits.max_redeliveries {
            selection.given_up.push(guid.clone());
            continue;
        }
        wanted.push((first.delivered_at, first.id, guid, newest.id));
    }
    wanted.sort();
    selection.deferred = wanted.len().saturating_sub(limits.max_per_pass);
    selection.redeliver = wanted
        .into_iter()
        .take(limits.max_per_pass)
        .map(|(_, _, guid, id)| (id, guid.clone()))
        .collect();
    selection
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(minute: i64) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-24T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
            + Duration::minutes(minute)
    }

    fn attempt(id: u64, guid: &str, minute: i64, redelivery: bool, status: u16) -> Attempt {
        Attempt {
            id: AttemptId(id),
            guid: DeliveryGuid(guid.into()),
            delivered_at: t(minute),
            redelivery,
            status_code: status,
        }
    }

    const LIMITS: Limits = Limits {
        max_per_pass: 100,
        max_redeliveries: 3,
    };

    fn guids(s: &Selection) -> Vec<&str> {
        s.redeliver.iter().map(|(_, g)| g.as_str()).collect()
    }

    #[test]
    fn failed_events_are_redelivered_once_oldest_first_and_the_rest_left_alone() {
        let log = vec![
            // Newest first, as GitHub lists them.
            attempt(9, "later-fail", 30, false, 502),
            attempt(8, "ok", 20, false, 202),
            attempt(7, "retried-ok", 12, true, 202),
            attempt(6, "twice", 11, true, 502),
            attempt(5, "held", 10, false, 504),
            attempt(4, "retried-ok", 8, false, 502),
            attempt(3, "twice", 6, false, 502),
            attempt(2, "refused", 5, false, 401),
            attempt(1, "too-old", -90, false, 502),
        ];
        let held = HashSet::from([DeliveryGuid("held".into())]);
        let s = select(&log, t(0), &held, LIMITS);
        // One request per event, naming its newest attempt.
        assert_eq!(
            s.redeliver,
            vec![
                (AttemptId(6), DeliveryGuid("twice".into())),
                (AttemptId(9), DeliveryGuid("later-fail".into())),
            ]
        );
        assert_eq!((s.refused, s.deferred), (1, 0));
        assert!(s.given_up.is_empty());
    }

    #[test]
    fn an_event_whose_redeliveries_keep_failing_is_given_up() {
        let log = vec![
            attempt(1, "g", 1, false, 500),
            attempt(2, "g", 2, true, 500),
            attempt(3, "g", 3, true, 500),
            attempt(4, "g", 4, true, 503),
        ];
        let s = select(&log, t(0), &HashSet::new(), LIMITS);
        assert!(s.redeliver.is_empty());
        assert_eq!(s.given_up, vec![DeliveryGuid("g".into())]);
        let s = select(&log[..3], t(0), &HashSet::new(), LIMITS);
        assert_eq!(guids(&s), ["g"]);
    }

    #[test]
    fn a_timeout_a_rate_limit_and_no_answer_are_worth_another_try_a_refusal_is_not() {
        for s in [0, 408, 429, 500, 502, 503, 504] {
            assert!(worth_redelivering(s), "{s}");
        }
        for s in [200, 202, 301, 400, 401, 404, 413] {
            assert!(!worth_redelivering(s), "{s}");
        }
    }

    #[test]
    fn events_of_the_same_second_are_taken_in_the_order_github_numbered_them() {
        let log: Vec<Attempt> = ["c", "a", "b"]
            .iter()
            .enumerate()
            .map(|(i, g)| attempt(i as u64, g, 0, false, 502))
            .collect();
        let s = select(&log, t(0), &HashSet::new(), LIMITS);
        assert_eq!(guids(&s), ["c", "a", "b"]);
    }

    #[test]
    fn the_pass_bound_defers_the_newest() {
        let log: Vec<Attempt> = (0..5)
            .map(|i| attempt(i, &format!("g{i}"), i as i64, false, 502))
            .collect();
        let limits = Limits {
            max_per_pass: 2,
            ..LIMITS
        };
        let s = select(&log, t(0), &HashSet::new(), limits);
        assert_eq!(guids(&s), ["g0", "g1"]);
        assert_eq!(s.deferred, 3);
    }

    #[test]
    fn the_window_starts_at_the_last_pass_else_the_newest_record_within_the_bound() {
        let w = Window {
            max_look_back: Duration::hours(72),
            overlap: Duration::minutes(10),
        };
        let now = t(0);
        assert_eq!(
            look_back_start(now, None, Some(t(-60)), w),
            t(-70),
            "first pass: from the newest record"
        );
        assert_eq!(
            look_back_start(now, Some(t(-5)), Some(t(-60)), w),
            t(-15),
            "later passes: from the last one"
        );
        assert_eq!(look_back_start(now, None, None, w), now - w.max_look_back);
        assert_eq!(
            look_back_start(now, None, Some(t(-60 * 24 * 30)), w),
            now - w.max_look_back,
            "never past the bound"
        );
        assert_eq!(
            look_back_start(now, None, Some(t(60)), w),
            now,
            "a record from the future (clock skew) does not skip the present"
        );
        assert!(reaches(&[attempt(1, "a", -71, false, 502)], t(-70)));
        assert!(!reaches(&[attempt(1, "a", -70, false, 502)], t(-70)));
    }

    /// Attempts with ids numbered in order (an id names one attempt), over 12 events.
    fn arb_log() -> impl Strategy<Value = Vec<Attempt>> {
        let statuses = prop::sample::select(vec![0u16, 200, 202, 400, 401, 408, 429, 500, 502]);
        prop::collection::vec((0u8..12, -30i64..30, any::<bool>(), statuses), 0..60).prop_map(
            |rows| {
                rows.into_iter()
                    .enumerate()
                    .map(|(i, (g, minute, redelivery, status))| {
                        attempt(i as u64, &format!("g{g}"), minute, redelivery, status)
                    })
                    .collect()
            },
        )
    }

    proptest! {
        #[test]
        fn never_asks_for_what_succeeded_or_is_held_and_never_twice(
            log in arb_log(),
            held_idx in prop::collection::hash_set(0u8..12, 0..6),
            max_per_pass in 0usize..8,
            since in -20i64..20,
        ) {
            let held: HashSet<DeliveryGuid> =
                held_idx.iter().map(|g| DeliveryGuid(format!("g{g}"))).collect();
            let limits = Limits { max_per_pass, max_redeliveries: 3 };
            let s = select(&log, t(since), &held, limits);
            prop_assert!(s.redeliver.len() <= max_per_pass);
            let mut seen = HashSet::new();
            for (id, guid) in &s.redeliver {
                prop_assert!(seen.insert(guid.clone()), "asked twice for {guid:?}");
                prop_assert!(!held.contains(guid));
                let mine: Vec<&Attempt> = log.iter().filter(|a| &a.guid == guid).collect();
                prop_assert!(mine.iter().all(|a| !a.succeeded()));
                prop_assert!(mine.iter().any(|a| a.delivered_at >= t(since)));
                prop_assert!(mine.iter().any(|a| a.id == *id), "names one of its own attempts");
            }
        }

        #[test]
        fn every_missed_event_is_asked_for_now_or_later(
            log in arb_log(),
            since in -20i64..20,
        ) {
            let limits = Limits { max_per_pass: 3, max_redeliveries: 3 };
            let s = select(&log, t(since), &HashSet::new(), limits);
            let mut missed = 0;
            let guids: HashSet<&DeliveryGuid> = log.iter().map(|a| &a.guid).collect();
            for guid in guids {
                let mine: Vec<&Attempt> = log.iter().filter(|a| &a.guid == guid).collect();
                let newest = mine.iter().max_by_key(|a| (a.delivered_at, a.id)).unwrap();
                if mine.iter().any(|a| a.delivered_at >= t(since))
                    && mine.iter().all(|a| !a.succeeded())
                    && worth_redelivering(newest.status_code)
                    && mine.iter().filter(|a| a.redelivery).count() < 3
                {
                    missed += 1;
                }
            }
            prop_assert_eq!(s.redeliver.len() + s.deferred, missed);
        }

        #[test]
        fn the_order_of_the_log_changes_nothing(
            log in arb_log(),
            seed in any::<u64>(),
        ) {
            let mut shuffled = log.clone();
            // A deterministic shuffle: rotate and reverse by the seed.
            let n = shuffled.len().max(1);
            shuffled.rotate_left((seed as usize) % n);
            if seed % 2 == 0 {
                shuffled.reverse();
            }
            // Pages read twice list some attempts twice.
            shuffled.extend(log.iter().take((seed % 5) as usize).cloned());
            let limits = Limits { max_per_pass: 4, max_redeliveries: 2 };
            prop_assert_eq!(
                select(&log, t(0), &HashSet::new(), limits),
                select(&shuffled, t(0), &HashSet::new(), limits)
            );
        }
    }
}

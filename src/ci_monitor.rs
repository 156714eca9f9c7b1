//! Stage: the CI monitor — what the next run of the failed check says about a pushed fix.
//!
//! This file holds the pure decisions over plain values; the handlers that feed them are
//! beside it: `verdict` (a finished `check_run` for a pushed fix or a re-run, through the
//! proposal machine) and `reconcile` (the periodic pass that polls the check-runs API when a
//! webhook is missed, and times out a wait with no result). It never changes code, never
//! pushes, and never judges a run other than the same check on the commit ci-medic pushed.

use crate::github::{CheckRun, CheckStatus};

pub(crate) mod reconcile;
pub(crate) mod verdict;

pub(crate) use reconcile::RECONCILE_EVENT;

/// What a finished run means for the fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The check passed: the code_fix is executed.
    Passed,
    /// The check still fails: the code_fix failed; a new proposal may follow.
    Failed,
    /// Cancelled, skipped, neutral, stale or action required: no verdict yet; keep waiting (a
    /// re-run will report again).
    NoVerdict,
}

/// Classifies a check run's conclusion.
pub fn classify(conclusion: Option<&str>) -> Verdict {
    match conclusion {
        Some("success") => Verdict::Passed,
        Some("failure" | "timed_out") => Verdict::Failed,
        _ => Verdict::NoVerdict,
    }
}

/// Whether a re-run's check run that concluded so ended without running to a verdict: it was
/// cancelled (by a person, a newer run in its concurrency group, a time limit on the queue),
/// skipped, or superseded. A pushed fix keeps waiting for such a run ([`Verdict::NoVerdict`]);
/// a re-run ci-medic asked for is over, and may be asked for again.
pub fn rerun_cancelled(conclusion: Option<&str>) -> bool {
    matches!(conclusion, Some("cancelled" | "skipped" | "stale"))
}

/// Among runs listed for the pushed commit, the newest completed one of the watched check.
pub fn completed_run<'a>(
    runs: &'a [CheckRun],
    check_name: &str,
    commit: &str,
) -> Option<&'a CheckRun> {
    runs.iter()
        .filter(|r| {
            r.name == check_name && r.head_sha == commit && r.status == CheckStatus::Completed
        })
        .max_by_key(|r| r.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conclusions() {
        assert_eq!(classify(Some("success")), Verdict::Passed);
        assert_eq!(classify(Some("failure")), Verdict::Failed);
        assert_eq!(classify(Some("timed_out")), Verdict::Failed);
        for other in [
            Some("cancelled"),
            Some("skipped"),
            Some("neutral"),
            Some("action_required"),
            Some("stale"),
            None,
        ] {
            assert_eq!(classify(other), Verdict::NoVerdict, "{other:?}");
        }
    }

    #[test]
    fn a_rerun_ends_without_verdict_only_when_cancelled_skipped_or_stale() {
        for c in ["cancelled", "skipped", "stale"] {
            assert!(rerun_cancelled(Some(c)), "{c}");
        }
        for c in [
            Some("success"),
            Some("failure"),
            Some("timed_out"),
            Some("neutral"),
            Some("action_required"),
            None,
        ] {
            assert!(!rerun_cancelled(c), "{c:?}");
        }
    }

    #[test]
    fn picks_the_newest_completed_run_of_the_check_on_the_commit() {
        let run = |id: u64, name: &str, sha: &str, status: &str| -> CheckRun {
            serde_json::from_value(serde_json::json!({
                "id": id, "name": name, "head_sha": sha, "status": status, "conclusion": null,
                "output": {"title": null, "summary": null, "text": null, "annotations_count": 0},
                "pull_requests": []
            }))
            .unwrap()
        };
        let runs = vec![
            run(1, "lint", "abc", "completed"),
            run(3, "lint", "abc", "completed"),
            run(4, "lint", "abc", "in_progress"),
            run(5, "test", "abc", "completed"),
            run(6, "lint", "def", "completed"),
        ];
        assert_eq!(completed_run(&runs, "lint", "abc").unwrap().id, 3);
        assert!(completed_run(&runs, "build", "abc").is_none());
    }
}

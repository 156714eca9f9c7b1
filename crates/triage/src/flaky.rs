//! Flaky evidence: what says a failure would not happen again on the same code — the same check
//! passing on the same commit in another attempt or job, or a failing test with mixed outcomes
//! in the history ci-medic recorded.
//!
//! It only compares what it is given (exact check and test names, exact shas); it never guesses
//! that two differently named tests are one, and never calls a test flaky on failures alone.

use serde::{Deserialize, Serialize};

use crate::{CheckFacts, Conclusion, TestOutcome};

/// At most this many shas are named per side in [`FlakySignal::MixedOnDefaultBranch`].
pub const MAX_SHAS: usize = 5;

/// Why a test or a check looks flaky.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "signal", rename_all = "snake_case")]
pub enum FlakySignal {
    /// The same check or job passed on the same commit in another attempt or job of the run.
    PassedInAnotherAttempt {
        /// The other job's or check's name.
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run_attempt: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        job_id: Option<u64>,
    },
    /// The test passed on the very commit it now fails on.
    PassedOnSameCommit { head_sha: String },
    /// The test both passed and failed on one commit (other than this one).
    MixedOnOneCommit { head_sha: String },
    /// On the default branch, the test failed between two passes (history order).
    MixedOnDefaultBranch {
        /// Commits it passed at (at most [`MAX_SHAS`], oldest record first).
        passed_at: Vec<String>,
        /// Commits it failed at (at most [`MAX_SHAS`]).
        failed_at: Vec<String>,
    },
}

/// One piece of flaky evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlakyEvidence {
    /// The test, or `None` when the evidence is about the whole check.
    pub test: Option<String>,
    #[serde(flatten)]
    pub signal: FlakySignal,
}

fn short(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}

impl std::fmt::Display for FlakyEvidence {
    /// One sentence for a comment: `` `test_x` passed and failed on the default branch (passed
    /// at abc1234, failed at def5678) ``.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.test {
            Some(t) => write!(f, "`{t}` ")?,
            None => f.write_str("the check ")?,
        }
        let list = |v: &[String]| v.iter().map(|s| short(s)).collect::<Vec<_>>().join(", ");
        match &self.signal {
            FlakySignal::PassedInAnotherAttempt {
                name, run_attempt, ..
            } => match run_attempt {
                Some(n) => write!(f, "passed on the same commit in attempt {n} (`{name}`)"),
                None => write!(f, "passed on the same commit in job `{name}`"),
            },
            FlakySignal::PassedOnSameCommit { head_sha } => {
                write!(f, "passed on this same commit {} before", short(head_sha))
            }
            FlakySignal::MixedOnOneCommit { head_sha } => {
                write!(f, "both passed and failed on commit {}", short(head_sha))
            }
            FlakySignal::MixedOnDefaultBranch {
                passed_at,
                failed_at,
            } => write!(
                f,
                "passed and failed on the default branch (passed at {}; failed at {})",
                list(passed_at),
                list(failed_at)
            ),
        }
    }
}

/// The check passed elsewhere on the same commit.
pub(crate) fn from_attempts(facts: &CheckFacts) -> Vec<FlakyEvidence> {
    facts
        .other_attempts
        .iter()
        .filter(|a| a.conclusion == Some(Conclusion::Success))
        .filter(|a| match (&a.head_sha, &facts.head_sha) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        })
        .map(|a| FlakyEvidence {
            test: None,
            signal: FlakySignal::PassedInAnotherAttempt {
                name: a.name.clone(),
                run_attempt: a.run_attempt,
                job_id: a.job_id,
            },
        })
        .collect()
}

/// The history's evidence that `test` is flaky: the strongest one signal, if any.
pub(crate) fn from_history(
    test: &str,
    head_sha: Option<&str>,
    history: &[TestOutcome],
) -> Option<FlakyEvidence> {
    let records: Vec<&TestOutcome> = history.iter().filter(|o| o.test == test).collect();
    let evidence = |signal| {
        Some(FlakyEvidence {
            test: Some(test.to_string()),
            signal,
        })
    };
    if let Some(sha) = head_sha
        && records.iter().any(|o| o.passed && o.head_sha == sha)
    {
        return evidence(FlakySignal::PassedOnSameCommit {
            head_sha: sha.to_string(),
        });
    }
    for o in records.iter().filter(|o| o.passed) {
        if records
            .iter()
            .any(|f| !f.passed && f.head_sha == o.head_sha)
        {
            return evidence(FlakySignal::MixedOnOneCommit {
                head_sha: o.head_sha.clone(),
            });
        }
    }
    // On the default branch, outcomes alone do not tell a flaky test from one that was broken
    // and then fixed (fail at A, pass at B). A failure between two passes, in history order,
    // does: the code that passed before and after it did not change the test's verdict for good.
    let main: Vec<&&TestOutcome> = records.iter().filter(|o| o.on_default_branch).collect();
    let sandwiched = main.iter().enumerate().any(|(i, f)| {
        !f.passed && main[..i].iter().any(|o| o.passed) && main[i + 1..].iter().any(|o| o.passed)
    });
    if sandwiched {
        let shas = |passed: bool| {
            let mut v: Vec<String> = Vec::new();
            for o in main.iter().filter(|o| o.passed == passed) {
                if v.len() < MAX_SHAS && !v.contains(&o.head_sha) {
                    v.push(o.head_sha.clone());
                }
            }
            v
        };
        return evidence(FlakySignal::MixedOnDefaultBranch {
            passed_at: shas(true),
            failed_at: shas(false),
        });
    }
    None
}

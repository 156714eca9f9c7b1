//! The code_fix state machine: a pure function over typed statuses.
//!
//! Allowed, and nothing else: `proposed → approved`, `proposed → rejected`,
//! `approved → executed`, `approved → failed`. Rejected, executed and failed are final.
//! An illegal move is an error with a message that says why, never a silent no-op; a move to
//! the state already held is illegal too, so a repeated `/approve` is reported, not ignored.
//! Every transition records who made it, when and why.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::dds::{CodeFixDds, DdsStatus, SourceDds, parse_iso8601};
use crate::ids::DdsId;

/// Why a transition is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    #[error("code_fix is already `{0}`")]
    AlreadyThere(DdsStatus),
    #[error("code_fix is `{0}`, which is final; it can no longer change")]
    Final(DdsStatus),
    #[error("code_fix cannot go from `{from}` to `{to}`: {why}")]
    Forbidden {
        from: DdsStatus,
        to: DdsStatus,
        why: &'static str,
    },
    #[error("a transition must say who made it")]
    NoActor,
    #[error("a transition must say why it was made")]
    NoReason,
    #[error("code_fix is `{actual}`, not `{expected}` as the caller believed; nothing was changed")]
    Stale {
        expected: DdsStatus,
        actual: DdsStatus,
    },
}

/// True for statuses no transition leaves.
pub fn is_final(s: DdsStatus) -> bool {
    matches!(
        s,
        DdsStatus::Rejected | DdsStatus::Executed | DdsStatus::Failed
    )
}

/// The state machine: `Ok(to)` when `from → to` is allowed, otherwise why not.
pub fn next_status(from: DdsStatus, to: DdsStatus) -> Result<DdsStatus, TransitionError> {
    use DdsStatus::*;
    match (from, to) {
        (Proposed, Approved) | (Proposed, Rejected) | (Approved, Executed) | (Approved, Failed) => {
            Ok(to)
        }
        (a, b) if a == b => Err(TransitionError::AlreadyThere(a)),
        (a, _) if is_final(a) => Err(TransitionError::Final(a)),
        (Proposed, Executed) | (Proposed, Failed) => Err(TransitionError::Forbidden {
            from,
            to,
            why: "a code_fix runs only after a person approves it",
        }),
        (Approved, Rejected) => Err(TransitionError::Forbidden {
            from,
            to,
            why: "an approved code_fix is executed or fails; it is no longer up for review",
        }),
        (_, Proposed) => Err(TransitionError::Forbidden {
            from,
            to,
            why: "a code_fix is proposed only when it is created",
        }),
        _ => Err(TransitionError::Forbidden {
            from,
            to,
            why: "not a transition of the specification",
        }),
    }
}

/// One recorded transition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transition {
    pub from: DdsStatus,
    pub to: DdsStatus,
    /// Who made it: a GitHub login for people, `ci-medic` for the service.
    pub actor: String,
    pub at: DateTime<Utc>,
    /// Why: the slash command and comment, the CI verdict, the executor's error…
    pub reason: String,
}

/// A code_fix as the registry stores it.
///
/// `dds` is the record **as created** and never changes, so it always satisfies rule 4
/// (`status: proposed`) and [`super::validate_code_fix`]. The current status and its history
/// live beside it; [`StoredProposal::current_dds`] gives the DDS with the current status, which
/// is what the PR comment publishes (rendered from [`super::machine::RunState`], whose
/// transitions are the ones recorded here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredProposal {
    pub dds: CodeFixDds,
    pub status: DdsStatus,
    pub created_at: DateTime<Utc>,
    /// Reported files outside the source's scope, not allowed for this fix.
    #[serde(default)]
    pub out_of_scope: Vec<String>,
    /// Reported files inside the scope but protected by configuration, with the pattern.
    #[serde(default)]
    pub protected: Vec<(String, String)>,
    pub history: Vec<Transition>,
    /// When the fix commit reached the branch (the status page's approve-to-push time).
    /// Records from before it was kept read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed_at: Option<DateTime<Utc>>,
}

impl StoredProposal {
    /// A new proposal, in state `proposed` with no history.
    pub fn new(derived: super::dds::DerivedFix, created_at: DateTime<Utc>) -> Self {
        StoredProposal {
            status: derived.dds.status,
            dds: derived.dds,
            created_at,
            out_of_scope: derived.out_of_scope,
            protected: derived.protected,
            history: Vec::new(),
            pushed_at: None,
        }
    }

    /// Applies one transition, returning the new record; `self` is untouched on error.
    /// `expected` is the status the caller acted on (what the maintainer saw), so a decision
    /// taken on stale information is refused.
    pub fn apply(
        &self,
        expected: DdsStatus,
        to: DdsStatus,
        actor: &str,
        at: DateTime<Utc>,
        reason: &str,
    ) -> Result<StoredProposal, TransitionError> {
        if actor.trim().is_empty() {
            return Err(TransitionError::NoActor);
        }
        if reason.trim().is_empty() {
            return Err(TransitionError::NoReason);
        }
        if self.status != expected {
            return Err(TransitionError::Stale {
                expected,
                actual: self.status,
            });
        }
        let to = next_status(self.status, to)?;
        let mut next = self.clone();
        next.history.push(Transition {
            from: self.status,
            to,
            actor: actor.to_string(),
            at,
            reason: reason.to_string(),
        });
        next.status = to;
        Ok(next)
    }

    /// The DDS with its current status.
    pub fn current_dds(&self) -> CodeFixDds {
        CodeFixDds {
            status: self.status,
            ..self.dds.clone()
        }
    }

    /// When it failed, if it did.
    pub fn failed_at(&self) -> Option<DateTime<Utc>> {
        if self.status != DdsStatus::Failed {
            return None;
        }
        self.history
            .iter()
            .rev()
            .find(|t| t.to == DdsStatus::Failed)
            .map(|t| t.at)
    }

    /// This code_fix as the source of a further code_fix (after its own execution failed).
    pub fn as_source(&self) -> SourceDds {
        SourceDds {
            id: DdsId(self.dds.id.clone()),
            dds_type: self.dds.dds_type,
            status: self.status,
            project: self.dds.project.clone(),
            tool: self.dds.tool.clone(),
            allowed_paths: self.dds.allowed_paths.clone(),
            constraints: self.dds.constraints,
            failed_at: self.failed_at(),
        }
    }

    /// When the error this fix answers happened (from `error_context.failed_at`).
    pub fn source_failed_at(&self) -> Option<DateTime<Utc>> {
        parse_iso8601(&self.dds.error_context.failed_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DdsStatus::*;

    const ALL: [DdsStatus; 5] = [Proposed, Approved, Rejected, Executed, Failed];

    #[test]
    fn every_allowed_and_forbidden_transition() {
        let allowed = [
            (Proposed, Approved),
            (Proposed, Rejected),
            (Approved, Executed),
            (Approved, Failed),
        ];
        for from in ALL {
            for to in ALL {
                let got = next_status(from, to);
                if allowed.contains(&(from, to)) {
                    assert_eq!(got, Ok(to), "{from} → {to}");
                } else {
                    let e = got.expect_err(&format!("{from} → {to} must be refused"));
                    let msg = e.to_string();
                    assert!(!msg.is_empty());
                    if from == to {
                        assert_eq!(e, TransitionError::AlreadyThere(from));
                    } else if is_final(from) {
                        assert_eq!(e, TransitionError::Final(from));
                    } else {
                        assert!(
                            msg.contains(from.as_str()) && msg.contains(to.as_str()),
                            "{msg}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn final_states() {
        assert!(!is_final(Proposed));
        assert!(!is_final(Approved));
        assert!(is_final(Rejected) && is_final(Executed) && is_final(Failed));
    }
}

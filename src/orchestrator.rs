//! The orchestrator: owns the state machine that moves a failed check through the stages.
//!
//! It implements [`JobHandler`]: each job is one accepted delivery, turned into an [`Event`] and
//! dispatched. Every handler is idempotent, because a job interrupted by a crash runs again.

use async_trait::async_trait;
use tracing::info;

use crate::events::{Event, EventError};
use crate::jobs::{JobError, JobHandler, JobInput};

/// The pipeline's entry point for queued deliveries.
pub struct Orchestrator {}

impl Orchestrator {
    pub fn new() -> Orchestrator {
        Orchestrator {}
    }
}

impl Default for Orchestrator {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl JobHandler for Orchestrator {
    async fn handle(&self, input: JobInput) -> Result<(), JobError> {
        let event = match Event::parse(&input.job.event, &input.payload) {
            Ok(e) => e,
            Err(EventError::Unhandled { event, action }) => {
                info!(%event, %action, "nothing to do for this event");
                return Ok(());
            }
            Err(e) => return Err(JobError::Permanent(e.to_string())),
        };
        match &event {
            Event::CheckRunCompleted(cr) => {
                info!(repo = %cr.repo, check = %cr.name, conclusion = ?cr.conclusion, "check run completed")
            }
            Event::PrCommentCreated(c) => {
                info!(repo = %c.repo, pr = c.pr_number, "comment on pull request")
            }
            Event::PullRequestChanged(p) => {
                info!(repo = %p.repo, pr = p.number, action = %p.action, "pull request changed")
            }
            Event::InstallationChanged(i) => {
                info!(installation = i.installation_id, action = %i.action, "installation changed")
            }
        }
        Ok(())
    }
}

//! The proposal registry and the fix runs behind one interface with two backends: the sled
//! trees of one process ([`Registry`], [`RunStore`], the default) and PostgreSQL
//! (`DATABASE_URL`, [`super::pg_proposals`]), where every replica sees every proposal.
//!
//! [`Proposals`] holds the failed code_change records and the code_fix proposals with their
//! transitions and push times; [`Runs`] holds the fix runs and their indices (by pushed commit,
//! by re-run). The rules stay in `ci_medic_core::proposal`; each backend only stores, atomically:
//! a failed check is recorded once, a source gets one code_fix, a transition is a
//! compare-and-swap on the status, and a run is written only over the version it was read at
//! ([`StoreError::RunChanged`] otherwise, so a stale copy never overwrites a newer one).
//!
//! It must never decide a proposal's outcome (the state machine does) nor hand out DDS numbers
//! itself (an [`IdAllocator`] does).

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use ci_medic_core::ids::DdsId;
use ci_medic_core::proposal::{
    DdsStatus, DerivedFix, FailedCheck, FailedDds, Rule, SourceDds, StoredProposal,
    ValidationError, ValidationErrors, build_failed_dds, derive_code_fix, failed_dds_id,
};
use ci_medic_core::repo_config::ConstraintsConfig;
use ci_medic_parser::BugReport;

use super::StoreError;
use super::registry::{IdAllocator, Registry, RegistryError, next_failed_id, next_fix_id};
use super::runs::{FixRun, RunStore};

/// The registry's and the runs' stores of one backend.
#[derive(Clone)]
pub struct FixState {
    pub registry: Arc<dyn Proposals>,
    pub runs: Arc<dyn Runs>,
}

impl FixState {
    /// The sled store's own trees.
    pub fn sled(store: &super::Store) -> Result<FixState, StoreError> {
        let registry = store.registry().map_err(|e| match e {
            RegistryError::Storage(e) => StoreError::Sled(e),
            other => StoreError::Flush(other.to_string()),
        })?;
        Ok(FixState {
            registry: Arc::new(registry),
            runs: Arc::new(RunStore::open(store)?),
        })
    }

    /// The database's tables, shared by every replica.
    pub fn pg(store: &super::pg::PgStore) -> FixState {
        FixState {
            registry: Arc::new(store.clone()),
            runs: Arc::new(store.clone()),
        }
    }
}

/// Failed code_change records and code_fix proposals.
#[async_trait]
pub trait Proposals: Send + Sync + 'static {
    /// Stores `dds` as the failed record of `check` unless the check already has one, which
    /// is then the answer (a concurrent recording of the same check won). An id already used
    /// is [`RegistryError::DuplicateFailed`].
    async fn store_failure(
        &self,
        check: &FailedCheck,
        dds: FailedDds,
    ) -> Result<FailedDds, RegistryError>;

    /// The failed DDS recorded for this check and commit.
    async fn failed_for_check(
        &self,
        project: &str,
        check_name: &str,
        head_sha: &str,
    ) -> Result<Option<FailedDds>, RegistryError>;

    async fn get_failed(&self, id: &DdsId) -> Result<Option<FailedDds>, RegistryError>;

    async fn get_fix(&self, id: &str) -> Result<Option<StoredProposal>, RegistryError>;

    /// The code_fix recorded for `source`, whatever its status (a rejected one included).
    async fn fix_for_source(&self, source: &DdsId)
    -> Result<Option<StoredProposal>, RegistryError>;

    /// Every failed code_change record, in id order.
    async fn list_failed(&self) -> Result<Vec<FailedDds>, RegistryError>;

    /// Every code_fix, in id order.
    async fn list_fixes(&self) -> Result<Vec<StoredProposal>, RegistryError>;

    /// Stores a new code_fix after checking all ten rules against what is stored; rule 10 (one
    /// fix per source) is checked again inside the write, so two concurrent proposals for one
    /// source, from two replicas too, cannot both be recorded.
    async fn insert_code_fix(
        &self,
        derived: DerivedFix,
        created_at: DateTime<Utc>,
    ) -> Result<StoredProposal, RegistryError>;

    /// Records when the fix commit of `id` reached the branch, once (a later call keeps the
    /// first time).
    async fn record_push(&self, id: &str, at: DateTime<Utc>) -> Result<(), RegistryError>;

    /// Moves a code_fix from `expected` to `to`, recording who, when and why, atomically: if
    /// the stored status is not `expected` (another decision won, on any replica), nothing
    /// changes and the error says what the status is.
    async fn transition(
        &self,
        id: &str,
        expected: DdsStatus,
        to: DdsStatus,
        actor: &str,
        at: DateTime<Utc>,
        reason: &str,
    ) -> Result<StoredProposal, RegistryError>;

    /// A DDS that a code_fix may name as its source: a failed code_change, or a code_fix.
    async fn get_source(&self, id: &DdsId) -> Result<Option<SourceDds>, RegistryError> {
        if let Some(f) = self.get_failed(id).await? {
            return Ok(Some(f.as_source()));
        }
        Ok(self.get_fix(id.as_str()).await?.map(|p| p.as_source()))
    }

    /// Records a failed check, once: the same project, check name and commit always map to the
    /// same failed DDS, so a redelivered webhook or a retried job never creates a second record
    /// (and so never a second proposal). Bad input is refused before an id is spent on it; the
    /// id comes from `ids`, from the failure's UTC day.
    async fn record_failure(
        &self,
        check: &FailedCheck,
        constraints: &ConstraintsConfig,
        ids: &dyn IdAllocator,
    ) -> Result<FailedDds, RegistryError> {
        if let Some(existing) = self
            .failed_for_check(&check.project, &check.check_name, &check.head_sha)
            .await?
        {
            return Ok(existing);
        }
        let day = check.failed_at.date_naive();
        build_failed_dds(failed_dds_id(day, 1)?, check, constraints)?;
        let id = next_failed_id(ids, day).await?;
        let dds = build_failed_dds(id, check, constraints)?;
        self.store_failure(check, dds).await
    }

    /// Proposes the code_fix for a failed source: refuses early when the source already has
    /// one (so no id is spent on it), then allocates the id from `at`'s UTC day, derives the
    /// fix from the reports and stores it.
    async fn propose_fix(
        &self,
        source_id: &DdsId,
        reports: &[BugReport],
        constraints: &ConstraintsConfig,
        at: DateTime<Utc>,
        ids: &dyn IdAllocator,
    ) -> Result<StoredProposal, RegistryError> {
        let source = self
            .get_source(source_id)
            .await?
            .ok_or_else(|| RegistryError::UnknownSource(source_id.clone()))?;
        if let Some(existing) = self.fix_for_source(source_id).await? {
            return Err(RegistryError::Invalid(ValidationErrors {
                id: format!("proposed for {source_id}"),
                errors: vec![ValidationError {
                    rule: Rule::NoDuplicates,
                    message: format!(
                        "{} (status `{}`) already fixes {source_id}; ci-medic never proposes a second code_fix for the same source",
                        existing.dds.id, existing.status
                    ),
                }],
            }));
        }
        let id = next_fix_id(ids, at.date_naive()).await?;
        let derived = derive_code_fix(&id, &source, reports, constraints)?;
        self.insert_code_fix(derived, at).await
    }
}

/// Fix runs: one per (repository, pull request, check name).
#[async_trait]
pub trait Runs: Send + Sync + 'static {
    async fn get(&self, repo: &str, pr: u64, check: &str) -> Result<Option<FixRun>, StoreError>;

    /// Writes the record, durable before it returns (the caller's next step may be a GitHub
    /// call that must not be repeated after a crash), over the version it was read at: a new
    /// run (`version` 0) only if none is stored, a read one only if nobody wrote it since.
    /// Otherwise nothing is written and the answer is [`StoreError::RunChanged`] (the caller
    /// reads it again; a job is retried). On success `run.version` is the stored version.
    async fn put(&self, run: &mut FixRun) -> Result<(), StoreError>;

    /// The run whose fix commit is `sha`, if ci-medic pushed it.
    async fn by_pushed_commit(&self, repo: &str, sha: &str) -> Result<Option<FixRun>, StoreError>;

    /// The run whose failed `check` is being re-run on `sha`, if one is.
    async fn by_rerun(
        &self,
        repo: &str,
        sha: &str,
        check: &str,
    ) -> Result<Option<FixRun>, StoreError>;

    /// Every run of a pull request (all its checks), in check-name order.
    async fn for_pull_request(&self, repo: &str, pr: u64) -> Result<Vec<FixRun>, StoreError>;

    /// Runs that still need the loop to move them (approved, waiting for CI on a fix, or for
    /// a re-run's result), or GitHub to show their state ([`FixRun::unpublished`]).
    async fn active(&self) -> Result<Vec<FixRun>, StoreError>;

    /// Every run (the status page).
    async fn all(&self) -> Result<Vec<FixRun>, StoreError>;

    /// Every run of a repository (uninstall clean-up).
    async fn for_repo(&self, repo: &str) -> Result<Vec<FixRun>, StoreError>;

    /// Forgets runs finished ([`Phase::Finished`](super::runs::Phase::Finished)) and last
    /// written before `cutoff`, with their pushed-commit index entries (the sweep, by one
    /// replica at a time). A run written meanwhile is left alone. Returns how many went.
    async fn prune_finished(&self, cutoff: DateTime<Utc>) -> Result<usize, StoreError>;
}

#[async_trait]
impl Proposals for Registry {
    async fn store_failure(
        &self,
        check: &FailedCheck,
        dds: FailedDds,
    ) -> Result<FailedDds, RegistryError> {
        Registry::store_failure(self, check, dds)
    }

    async fn failed_for_check(
        &self,
        project: &str,
        check_name: &str,
        head_sha: &str,
    ) -> Result<Option<FailedDds>, RegistryError> {
        Registry::failed_for_check(self, project, check_name, head_sha)
    }

    async fn get_failed(&self, id: &DdsId) -> Result<Option<FailedDds>, RegistryError> {
        Registry::get_failed(self, id)
    }

    async fn get_fix(&self, id: &str) -> Result<Option<StoredProposal>, RegistryError> {
        Registry::get_fix(self, id)
    }

    async fn fix_for_source(
        &self,
        source: &DdsId,
    ) -> Result<Option<StoredProposal>, RegistryError> {
        Registry::fix_for_source(self, source)
    }

    async fn list_failed(&self) -> Result<Vec<FailedDds>, RegistryError> {
        Registry::list_failed(self)
    }

    async fn list_fixes(&self) -> Result<Vec<StoredProposal>, RegistryError> {
        Registry::list_fixes(self)
    }

    async fn insert_code_fix(
        &self,
        derived: DerivedFix,
        created_at: DateTime<Utc>,
    ) -> Result<StoredProposal, RegistryError> {
        Registry::insert_code_fix(self, derived, created_at)
    }

    async fn record_push(&self, id: &str, at: DateTime<Utc>) -> Result<(), RegistryError> {
        Registry::record_push(self, id, at)
    }

    async fn transition(
        &self,
        id: &str,
        expected: DdsStatus,
        to: DdsStatus,
        actor: &str,
        at: DateTime<Utc>,
        reason: &str,
    ) -> Result<StoredProposal, RegistryError> {
        Registry::transition(self, id, expected, to, actor, at, reason)
    }
}

#[async_trait]
impl Runs for RunStore {
    async fn get(&self, repo: &str, pr: u64, check: &str) -> Result<Option<FixRun>, StoreError> {
        RunStore::get(self, repo, pr, check)
    }

    async fn put(&self, run: &mut FixRun) -> Result<(), StoreError> {
        RunStore::put(self, run)
    }

    async fn by_pushed_commit(&self, repo: &str, sha: &str) -> Result<Option<FixRun>, StoreError> {
        RunStore::by_pushed_commit(self, repo, sha)
    }

    async fn by_rerun(
        &self,
        repo: &str,
        sha: &str,
        check: &str,
    ) -> Result<Option<FixRun>, StoreError> {
        RunStore::by_rerun(self, repo, sha, check)
    }

    async fn for_pull_request(&self, repo: &str, pr: u64) -> Result<Vec<FixRun>, StoreError> {
        RunStore::for_pull_request(self, repo, pr)
    }

    async fn active(&self) -> Result<Vec<FixRun>, StoreError> {
        RunStore::active(self)
    }

    async fn all(&self) -> Result<Vec<FixRun>, StoreError> {
        RunStore::all(self)
    }

    async fn for_repo(&self, repo: &str) -> Result<Vec<FixRun>, StoreError> {
        RunStore::for_repo(self, repo)
    }

    async fn prune_finished(&self, cutoff: DateTime<Utc>) -> Result<usize, StoreError> {
        let runs = self.clone();
        tokio::task::spawn_blocking(move || runs.prune_finished(cutoff))
            .await
            .map_err(|_| StoreError::FlusherGone)?
    }
}

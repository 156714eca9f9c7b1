//! The DDS registry: failed `code_change` records and `code_fix` proposals on sled, with the
//! per-day id counters, the one-fix-per-source rule and the state machine's transitions.
//!
//! Every write is atomic (sled compare-and-swap or a multi-tree transaction) and flushed before
//! it returns, so an id is never handed out twice, even across a crash and restart, and two
//! concurrent decisions on the same proposal can never both win. It never decides anything
//! itself: the rules are `ci_medic_core::proposal`'s pure functions, run here against what is
//! stored. It never deletes a record, so a rejected fix keeps blocking its source (rule 10).
//!
//! DDS numbers come from an [`IdAllocator`]: in `serve`, the queue's backend
//! ([`super::backend::Backend::next_seq`]), so replicas sharing a PostgreSQL database never
//! hand out the same id. On sled that backend's counters are this registry's own
//! (`dds_counters`, [`Registry::next_seq`]), so a `DATA_DIR` written before keeps counting.
//!
//! Trees (all prefixed `dds_`): `dds_counters` (`fix/YYYYMMDD`, `code/YYYYMMDD` → u32 BE),
//! `dds_failed` (id → FailedDds JSON), `dds_fix` (id → StoredProposal JSON),
//! `dds_fix_by_source` (source id → fix id), `dds_failed_by_check` (`project\0check\0sha` →
//! failed id, so one failed check is recorded once).

use chrono::{DateTime, NaiveDate, Utc};
use ci_medic_core::ids::{DdsId, FixDdsId, IdError};
use ci_medic_core::proposal::{
    BuildError, DdsStatus, DerivedFix, FailedCheck, FailedDds, SourceDds, StoredProposal,
    TransitionError, ValidationErrors, failed_dds_id, is_failed_dds_id, validate_code_fix,
};
use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};

/// The largest per-day sequence number an id can carry (`NNN`).
pub const MAX_PER_DAY: u32 = 999;

/// Where DDS numbers come from: the queue's backend, shared by every replica.
#[async_trait::async_trait]
pub trait IdAllocator: Send + Sync {
    /// The next number of `day` for `kind`, never handed out before by anyone.
    async fn allocate(&self, kind: IdKind, day: NaiveDate) -> Result<u16, RegistryError>;
}

#[async_trait::async_trait]
impl<B: super::backend::Backend + ?Sized> IdAllocator for B {
    async fn allocate(&self, kind: IdKind, day: NaiveDate) -> Result<u16, RegistryError> {
        self.next_seq(kind, day).await
    }
}

/// The queue's backend as `serve` holds it (`Context::ids`).
#[async_trait::async_trait]
impl IdAllocator for std::sync::Arc<dyn super::backend::Backend> {
    async fn allocate(&self, kind: IdKind, day: NaiveDate) -> Result<u16, RegistryError> {
        self.next_seq(kind, day).await
    }
}

/// The next code_fix id of `day`.
pub async fn next_fix_id<A: IdAllocator + ?Sized>(
    ids: &A,
    day: NaiveDate,
) -> Result<FixDdsId, RegistryError> {
    Ok(FixDdsId::new(
        day,
        ids.allocate(IdKind::CodeFix, day).await?,
    )?)
}

/// The next failed code_change id of `day`.
pub async fn next_failed_id<A: IdAllocator + ?Sized>(
    ids: &A,
    day: NaiveDate,
) -> Result<DdsId, RegistryError> {
    Ok(failed_dds_id(
        day,
        ids.allocate(IdKind::FailedCodeChange, day).await?,
    )?)
}

/// Which per-day counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// `DDS-FIX-YYYYMMDD-NNN`.
    CodeFix,
    /// `DDS-YYYYMMDD-CODE-NNN`.
    FailedCodeChange,
}

impl IdKind {
    pub(crate) fn prefix(self) -> &'static str {
        match self {
            IdKind::CodeFix => "fix",
            IdKind::FailedCodeChange => "code",
        }
    }
}

impl std::fmt::Display for IdKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IdKind::CodeFix => "code_fix",
            IdKind::FailedCodeChange => "failed code_change",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("DDS registry storage error: {0}")]
    Storage(#[from] sled::Error),
    #[error("DDS registry on PostgreSQL (DATABASE_URL): {0}")]
    Postgres(sqlx::Error),
    #[error("DDS registry record `{key}` cannot be read: {reason}")]
    Corrupt { key: String, reason: String },
    #[error(
        "no {kind} id left for {day}: all {MAX_PER_DAY} numbers of the day are used; ids are never reused, so wait for the next UTC day"
    )]
    DayExhausted { kind: IdKind, day: NaiveDate },
    #[error(transparent)]
    Id(#[from] IdError),
    #[error("failed DDS {0} is already recorded")]
    DuplicateFailed(DdsId),
    #[error("failed DDS {id} cannot be recorded: {reason}")]
    InvalidFailed { id: DdsId, reason: String },
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    #[error("code_fix {0} is already recorded")]
    DuplicateFixId(String),
    #[error("no code_fix {0} in the registry")]
    UnknownFix(String),
    #[error("no DDS {0} in the registry (neither a failed code_change nor a code_fix)")]
    UnknownSource(DdsId),
    #[error("code_fix {id}: {source}")]
    Transition {
        id: String,
        #[source]
        source: TransitionError,
    },
    #[error(transparent)]
    Build(#[from] BuildError),
}

impl From<sqlx::Error> for RegistryError {
    fn from(e: sqlx::Error) -> RegistryError {
        RegistryError::Postgres(e)
    }
}

/// The registry. Cheap to clone; every clone shares the same trees.
#[derive(Clone)]
pub struct Registry {
    counters: sled::Tree,
    failed: sled::Tree,
    fixes: sled::Tree,
    by_source: sled::Tree,
    by_check: sled::Tree,
}

/// `project NUL check NUL sha`: NUL cannot occur in any of them, so keys never collide.
fn check_key(project: &str, check_name: &str, head_sha: &str) -> Vec<u8> {
    format!("{project}\0{check_name}\0{head_sha}").into_bytes()
}

fn encode<T: serde::Serialize>(v: &T) -> Vec<u8> {
    // Serialising these plain structs cannot fail: no maps with non-string keys, no
    // fallible Serialize impls.
    serde_json::to_vec(v).expect("DDS records always serialise")
}

fn decode<T: serde::de::DeserializeOwned>(key: &[u8], bytes: &[u8]) -> Result<T, RegistryError> {
    serde_json::from_slice(bytes).map_err(|e| RegistryError::Corrupt {
        key: String::from_utf8_lossy(key).into_owned(),
        reason: e.to_string(),
    })
}

impl Registry {
    /// Opens (creating when absent) the registry's trees in `db`.
    pub fn open(db: &sled::Db) -> Result<Registry, RegistryError> {
        Ok(Registry {
            counters: db.open_tree("dds_counters")?,
            failed: db.open_tree("dds_failed")?,
            fixes: db.open_tree("dds_fix")?,
            by_source: db.open_tree("dds_fix_by_source")?,
            by_check: db.open_tree("dds_failed_by_check")?,
        })
    }

    /// Takes the next number of `day` for `kind`: atomic, durable before it returns, never
    /// reused (a rejected or abandoned proposal keeps its number), and an error after 999.
    pub fn next_seq(&self, kind: IdKind, day: NaiveDate) -> Result<u16, RegistryError> {
        let key = format!("{}/{}", kind.prefix(), day.format("%Y%m%d"));
        let read = |v: Option<&[u8]>| -> Option<u32> {
            match v {
                None => Some(0),
                Some(b) => <[u8; 4]>::try_from(b).ok().map(u32::from_be_bytes),
            }
        };
        let prev = self.counters.fetch_and_update(&key, |old| {
            let next = match read(old) {
                Some(n) if n < MAX_PER_DAY => n + 1,
                // exhausted or unreadable: leave it as it is, reported below
                _ => return old.map(<[u8]>::to_vec),
            };
            Some(next.to_be_bytes().to_vec())
        })?;
        let prev = read(prev.as_deref()).ok_or_else(|| RegistryError::Corrupt {
            key: key.clone(),
            reason: "a counter must be 4 bytes".to_string(),
        })?;
        if prev >= MAX_PER_DAY {
            return Err(RegistryError::DayExhausted { kind, day });
        }
        self.counters.flush()?;
        Ok(u16::try_from(prev + 1).expect("at most 999"))
    }

    /// Every per-day counter with the last number it handed out, for `ci-medic migrate
    /// --from-sled` (the database must continue them). A key that is not `fix|code/YYYYMMDD`
    /// with a 4-byte value is an error, not skipped: skipping could hand out an id again.
    pub fn counters(&self) -> Result<Vec<(IdKind, NaiveDate, u32)>, RegistryError> {
        self.counters
            .iter()
            .map(|kv| {
                let (k, v) = kv?;
                let key = String::from_utf8_lossy(&k).into_owned();
                let parsed = key.split_once('/').and_then(|(kind, day)| {
                    let kind = match kind {
                        "fix" => IdKind::CodeFix,
                        "code" => IdKind::FailedCodeChange,
                        _ => return None,
                    };
                    let day = NaiveDate::parse_from_str(day, "%Y%m%d").ok()?;
                    let n = u32::from_be_bytes(<[u8; 4]>::try_from(v.as_ref()).ok()?);
                    Some((kind, day, n))
                });
                parsed.ok_or_else(|| RegistryError::Corrupt {
                    key,
                    reason: "a counter is `fix|code/YYYYMMDD` → 4 bytes".to_string(),
                })
            })
            .collect()
    }

    /// Stores a failed code_change record. Refuses a malformed id, a status other than
    /// `failed`, and an id already recorded.
    pub fn insert_failed(&self, dds: &FailedDds) -> Result<(), RegistryError> {
        let invalid = |reason: &str| RegistryError::InvalidFailed {
            id: dds.id.clone(),
            reason: reason.to_string(),
        };
        if !is_failed_dds_id(dds.id.as_str()) {
            return Err(invalid("its id is not DDS-YYYYMMDD-CODE-NNN"));
        }
        if dds.status != DdsStatus::Failed {
            return Err(invalid("its status is not `failed`"));
        }
        match self
            .failed
            .compare_and_swap(dds.id.as_str(), None::<&[u8]>, Some(encode(dds)))?
        {
            Ok(()) => {
                self.failed.flush()?;
                Ok(())
            }
            Err(_) => Err(RegistryError::DuplicateFailed(dds.id.clone())),
        }
    }

    /// Stores `dds` as the failed record of `check` in one transaction with its check key,
    /// unless the check already has one: that record is the answer (a concurrent recording of
    /// the same check won). The rest of recording a failure is
    /// [`super::proposals::Proposals::record_failure`].
    pub fn store_failure(
        &self,
        check: &FailedCheck,
        dds: FailedDds,
    ) -> Result<FailedDds, RegistryError> {
        let key = check_key(&check.project, &check.check_name, &check.head_sha);
        let bytes = encode(&dds);
        let id_bytes = dds.id.as_str().as_bytes();
        let result = (&self.failed, &self.by_check).transaction(|(failed, by_check)| {
            if let Some(other) = by_check.get(&key)? {
                return Err(ConflictableTransactionError::Abort(Conflict::Source(
                    String::from_utf8_lossy(&other).into_owned(),
                )));
            }
            if failed.get(id_bytes)?.is_some() {
                return Err(ConflictableTransactionError::Abort(Conflict::Id));
            }
            failed.insert(id_bytes, bytes.as_slice())?;
            by_check.insert(key.as_slice(), id_bytes)?;
            Ok(())
        });
        match result {
            Ok(()) => {
                self.failed.flush()?;
                Ok(dds)
            }
            Err(TransactionError::Storage(e)) => Err(e.into()),
            Err(TransactionError::Abort(Conflict::Id)) => {
                Err(RegistryError::DuplicateFailed(dds.id))
            }
            // A concurrent call recorded the same check first: its record is the answer.
            Err(TransactionError::Abort(Conflict::Source(other))) => {
                let other = DdsId(other);
                self.get_failed(&other)?
                    .ok_or_else(|| RegistryError::Corrupt {
                        key: String::from_utf8_lossy(&key).into_owned(),
                        reason: format!("points at {other}, which is not recorded"),
                    })
            }
        }
    }

    /// The failed DDS [`Registry::store_failure`] stored for this check and commit.
    pub fn failed_for_check(
        &self,
        project: &str,
        check_name: &str,
        head_sha: &str,
    ) -> Result<Option<FailedDds>, RegistryError> {
        let key = check_key(project, check_name, head_sha);
        match self.by_check.get(&key)? {
            None => Ok(None),
            Some(id) => {
                let id = DdsId(String::from_utf8_lossy(&id).into_owned());
                match self.get_failed(&id)? {
                    Some(f) => Ok(Some(f)),
                    None => Err(RegistryError::Corrupt {
                        key: String::from_utf8_lossy(&key).into_owned(),
                        reason: format!("points at {id}, which is not recorded"),
                    }),
                }
            }
        }
    }

    pub fn get_failed(&self, id: &DdsId) -> Result<Option<FailedDds>, RegistryError> {
        self.failed
            .get(id.as_str())?
            .map(|b| decode(id.as_str().as_bytes(), &b))
            .transpose()
    }

    pub fn get_fix(&self, id: &str) -> Result<Option<StoredProposal>, RegistryError> {
        self.fixes
            .get(id)?
            .map(|b| decode(id.as_bytes(), &b))
            .transpose()
    }

    /// A DDS that a code_fix may name as its source: a failed code_change, or a code_fix.
    pub fn get_source(&self, id: &DdsId) -> Result<Option<SourceDds>, RegistryError> {
        if let Some(f) = self.get_failed(id)? {
            return Ok(Some(f.as_source()));
        }
        Ok(self.get_fix(id.as_str())?.map(|p| p.as_source()))
    }

    /// The code_fix recorded for `source`, whatever its status (a rejected one included).
    pub fn fix_for_source(&self, source: &DdsId) -> Result<Option<StoredProposal>, RegistryError> {
        match self.by_source.get(source.as_str())? {
            None => Ok(None),
            Some(fix_id) => {
                let fix_id = String::from_utf8_lossy(&fix_id).into_owned();
                self.get_fix(&fix_id)
            }
        }
    }

    /// Every recorded failed check with its failed DDS id: `(project, check name, commit,
    /// id)`, for `ci-medic migrate --from-sled`.
    pub fn failed_checks(&self) -> Result<Vec<(String, String, String, DdsId)>, RegistryError> {
        self.by_check
            .iter()
            .map(|kv| {
                let (k, v) = kv?;
                let key = String::from_utf8_lossy(&k).into_owned();
                let mut parts = key.splitn(3, '\0');
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(p), Some(c), Some(sha)) => Ok((
                        p.to_string(),
                        c.to_string(),
                        sha.to_string(),
                        DdsId(String::from_utf8_lossy(&v).into_owned()),
                    )),
                    _ => Err(RegistryError::Corrupt {
                        key,
                        reason: "a failed check key is `project NUL check NUL sha`".to_string(),
                    }),
                }
            })
            .collect()
    }

    /// Every failed code_change record, in id order.
    pub fn list_failed(&self) -> Result<Vec<FailedDds>, RegistryError> {
        self.failed
            .iter()
            .map(|kv| {
                let (k, v) = kv?;
                decode(&k, &v)
            })
            .collect()
    }

    /// Every code_fix, in id order.
    pub fn list_fixes(&self) -> Result<Vec<StoredProposal>, RegistryError> {
        self.fixes
            .iter()
            .map(|kv| {
                let (k, v) = kv?;
                decode(&k, &v)
            })
            .collect()
    }

    /// Stores a new code_fix after checking all ten rules against what is stored. Rule 10 is
    /// checked again inside the write's transaction, so two concurrent proposals for the same
    /// source cannot both be recorded.
    pub fn insert_code_fix(
        &self,
        derived: DerivedFix,
        created_at: DateTime<Utc>,
    ) -> Result<StoredProposal, RegistryError> {
        let fix = &derived.dds;
        let source = self.get_source(&fix.source_dds)?;
        let existing = self
            .by_source
            .get(fix.source_dds.as_str())?
            .map(|v| String::from_utf8_lossy(&v).into_owned());
        validate_code_fix(fix, source.as_ref(), existing.as_deref())?;

        let stored = StoredProposal::new(derived, created_at);
        let id = stored.dds.id.clone();
        let src = stored.dds.source_dds.as_str().to_string();
        let bytes = encode(&stored);
        let result = (&self.fixes, &self.by_source).transaction(|(fixes, by_source)| {
            if let Some(other) = by_source.get(src.as_bytes())? {
                return Err(ConflictableTransactionError::Abort(Conflict::Source(
                    String::from_utf8_lossy(&other).into_owned(),
                )));
            }
            if fixes.get(id.as_bytes())?.is_some() {
                return Err(ConflictableTransactionError::Abort(Conflict::Id));
            }
            fixes.insert(id.as_bytes(), bytes.as_slice())?;
            by_source.insert(src.as_bytes(), id.as_bytes())?;
            Ok(())
        });
        match result {
            Ok(()) => {}
            Err(TransactionError::Storage(e)) => return Err(e.into()),
            Err(TransactionError::Abort(Conflict::Id)) => {
                return Err(RegistryError::DuplicateFixId(id));
            }
            Err(TransactionError::Abort(Conflict::Source(other))) => {
                let errs = validate_code_fix(&stored.dds, source.as_ref(), Some(&other))
                    .expect_err("a second fix for the source breaks rule 10");
                return Err(errs.into());
            }
        }
        self.fixes.flush()?;
        self.by_source.flush()?;
        Ok(stored)
    }

    /// Records when the fix commit of `id` reached the branch (once: a later call keeps the
    /// first time, as a restart that publishes the same commit again does not push twice).
    pub fn record_push(&self, id: &str, at: DateTime<Utc>) -> Result<(), RegistryError> {
        loop {
            let old = self
                .fixes
                .get(id)?
                .ok_or_else(|| RegistryError::UnknownFix(id.to_string()))?;
            let mut next: StoredProposal = decode(id.as_bytes(), &old)?;
            if next.pushed_at.is_some() {
                return Ok(());
            }
            next.pushed_at = Some(at);
            if self
                .fixes
                .compare_and_swap(id, Some(&old), Some(encode(&next)))?
                .is_ok()
            {
                self.fixes.flush()?;
                return Ok(());
            }
        }
    }

    /// Moves a code_fix from `expected` to `to`, recording who, when and why. Compare-and-swap:
    /// if the stored status is not `expected` (another decision won), nothing changes and the
    /// error says what the status is.
    pub fn transition(
        &self,
        id: &str,
        expected: DdsStatus,
        to: DdsStatus,
        actor: &str,
        at: DateTime<Utc>,
        reason: &str,
    ) -> Result<StoredProposal, RegistryError> {
        loop {
            let old = self
                .fixes
                .get(id)?
                .ok_or_else(|| RegistryError::UnknownFix(id.to_string()))?;
            let current: StoredProposal = decode(id.as_bytes(), &old)?;
            let next = current
                .apply(expected, to, actor, at, reason)
                .map_err(|source| RegistryError::Transition {
                    id: id.to_string(),
                    source,
                })?;
            match self
                .fixes
                .compare_and_swap(id, Some(&old), Some(encode(&next)))?
            {
                Ok(()) => {
                    self.fixes.flush()?;
                    return Ok(next);
                }
                // Someone else wrote in between: read again; `apply` then refuses as stale.
                Err(_) => continue,
            }
        }
    }
}

enum Conflict {
    Source(String),
    Id,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::proposals::Proposals;
    use chrono::TimeZone;
    use ci_medic_core::proposal::Rule;
    use ci_medic_core::proposal::derive_code_fix;
    use ci_medic_core::repo_config::ConstraintsConfig;
    use ci_medic_parser::BugReport;
    use ci_medic_parser::BugType;
    use std::collections::BTreeSet;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 2, 2, 15, 30, 45).unwrap()
    }

    fn day() -> NaiveDate {
        at().date_naive()
    }

    fn check(files: &[&str]) -> FailedCheck {
        FailedCheck {
            project: "acme/calc".into(),
            check_name: "lint".into(),
            head_sha: "0123456789abcdef".into(),
            pr_number: Some(3),
            changed_files: files.iter().map(|s| s.to_string()).collect(),
            failed_at: at(),
        }
    }

    fn report(file: &str) -> BugReport {
        BugReport {
            file_path: file.into(),
            line_number: 15,
            error_type: BugType::Linting,
            message: "`os` imported but unused".into(),
            test_name: None,
            confidence_score: 0.95,
            column: Some(8),
            tool: Some("ruff".into()),
            rule: Some("F401".into()),
        }
    }

    /// The sled backend's allocator is the registry's own counters, so the unit tests take
    /// their numbers there, as `serve` on sled does.
    #[async_trait::async_trait]
    impl IdAllocator for Registry {
        async fn allocate(&self, kind: IdKind, day: NaiveDate) -> Result<u16, RegistryError> {
            self.next_seq(kind, day)
        }
    }

    /// The registry's async operations, blocking, numbered from its own counters.
    trait Blocking {
        fn next_fix_id(&self, day: NaiveDate) -> Result<FixDdsId, RegistryError>;
        fn next_failed_id(&self, day: NaiveDate) -> Result<DdsId, RegistryError>;
        fn record(
            &self,
            check: &FailedCheck,
            cfg: &ConstraintsConfig,
        ) -> Result<FailedDds, RegistryError>;
        fn propose(
            &self,
            source: &DdsId,
            reports: &[BugReport],
            cfg: &ConstraintsConfig,
            at: DateTime<Utc>,
        ) -> Result<StoredProposal, RegistryError>;
    }

    impl Blocking for Registry {
        fn next_fix_id(&self, day: NaiveDate) -> Result<FixDdsId, RegistryError> {
            futures::executor::block_on(super::next_fix_id(self, day))
        }
        fn next_failed_id(&self, day: NaiveDate) -> Result<DdsId, RegistryError> {
            futures::executor::block_on(super::next_failed_id(self, day))
        }
        fn record(
            &self,
            check: &FailedCheck,
            cfg: &ConstraintsConfig,
        ) -> Result<FailedDds, RegistryError> {
            futures::executor::block_on(self.record_failure(check, cfg, self))
        }
        fn propose(
            &self,
            source: &DdsId,
            reports: &[BugReport],
            cfg: &ConstraintsConfig,
            at: DateTime<Utc>,
        ) -> Result<StoredProposal, RegistryError> {
            futures::executor::block_on(self.propose_fix(source, reports, cfg, at, self))
        }
    }

    fn open() -> (tempfile::TempDir, Registry) {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::open(dir.path()).unwrap();
        let reg = Registry::open(&db).unwrap();
        (dir, reg)
    }

    #[test]
    fn ids_count_per_day_and_kind() {
        let (_d, reg) = open();
        assert_eq!(
            reg.next_fix_id(day()).unwrap().as_str(),
            "DDS-FIX-20260202-001"
        );
        assert_eq!(
            reg.next_fix_id(day()).unwrap().as_str(),
            "DDS-FIX-20260202-002"
        );
        assert_eq!(
            reg.next_failed_id(day()).unwrap().as_str(),
            "DDS-20260202-CODE-001"
        );
        let next_day = day().succ_opt().unwrap();
        assert_eq!(
            reg.next_fix_id(next_day).unwrap().as_str(),
            "DDS-FIX-20260203-001"
        );
    }

    #[test]
    fn ids_survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = sled::open(dir.path()).unwrap();
            let reg = Registry::open(&db).unwrap();
            for _ in 0..3 {
                reg.next_fix_id(day()).unwrap();
            }
        }
        let db = reopen(dir.path());
        let reg = Registry::open(&db).unwrap();
        assert_eq!(
            reg.next_fix_id(day()).unwrap().as_str(),
            "DDS-FIX-20260202-004"
        );
    }

    #[test]
    fn concurrent_allocation_never_repeats_or_skips() {
        let (_d, reg) = open();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let reg = reg.clone();
                std::thread::spawn(move || {
                    (0..40)
                        .map(|_| reg.next_seq(IdKind::CodeFix, day()).unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<u16> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        all.sort_unstable();
        assert_eq!(all, (1..=320).collect::<Vec<u16>>());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

        /// Any interleaving of allocations over days and kinds, with restarts in between,
        /// numbers each (day, kind) 1, 2, 3… with no gap and no repeat.
        #[test]
        fn counters_are_dense_per_day_and_kind_across_restarts(
            steps in proptest::collection::vec((0u8..3, proptest::bool::ANY, proptest::bool::ANY), 1..40)
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut db = sled::open(dir.path()).unwrap();
            let mut reg = Registry::open(&db).unwrap();
            let mut seen: std::collections::BTreeMap<(u8, bool), Vec<u16>> = Default::default();
            for (d, fix, restart) in steps {
                if restart {
                    drop(reg);
                    drop(db);
                    db = reopen(dir.path());
                    reg = Registry::open(&db).unwrap();
                }
                let date = day() + chrono::Days::new(u64::from(d));
                let kind = if fix { IdKind::CodeFix } else { IdKind::FailedCodeChange };
                seen.entry((d, fix)).or_default().push(reg.next_seq(kind, date).unwrap());
            }
            for got in seen.values() {
                let want: Vec<u16> = (1..=got.len() as u16).collect();
                proptest::prop_assert_eq!(got, &want);
            }
        }
    }

    /// sled's flusher thread releases the file lock shortly after the last handle is dropped.
    fn reopen(path: &std::path::Path) -> sled::Db {
        for _ in 0..400 {
            match sled::open(path) {
                Ok(db) => return db,
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
        panic!("{} stayed locked", path.display())
    }

    #[test]
    fn the_thousandth_id_of_a_day_is_an_error_not_a_wraparound() {
        let (_d, reg) = open();
        reg.counters
            .insert("fix/20260202", &998u32.to_be_bytes())
            .unwrap();
        assert_eq!(
            reg.next_fix_id(day()).unwrap().as_str(),
            "DDS-FIX-20260202-999"
        );
        for _ in 0..2 {
            let e = reg.next_fix_id(day()).unwrap_err();
            assert!(matches!(e, RegistryError::DayExhausted { .. }), "{e}");
            assert!(e.to_string().contains("999"));
        }
        // other days and kinds are unaffected
        assert!(reg.next_failed_id(day()).is_ok());
    }

    #[test]
    fn failed_records_round_trip_and_refuse_duplicates() {
        let (_d, reg) = open();
        let f = reg
            .record(&check(&["src/utils.py"]), &ConstraintsConfig::default())
            .unwrap();
        assert_eq!(f.id.as_str(), "DDS-20260202-CODE-001");
        assert_eq!(reg.get_failed(&f.id).unwrap(), Some(f.clone()));
        assert_eq!(reg.list_failed().unwrap(), std::slice::from_ref(&f));
        assert!(matches!(
            reg.insert_failed(&f),
            Err(RegistryError::DuplicateFailed(_))
        ));
        let mut not_failed = f.clone();
        not_failed.id = DdsId("DDS-20260202-CODE-002".into());
        not_failed.status = DdsStatus::Approved;
        assert!(matches!(
            reg.insert_failed(&not_failed),
            Err(RegistryError::InvalidFailed { .. })
        ));
    }

    #[test]
    fn a_check_is_recorded_once() {
        let (_d, reg) = open();
        let cfg = ConstraintsConfig::default();
        let a = reg.record(&check(&["src/utils.py"]), &cfg).unwrap();
        let b = reg.record(&check(&["src/utils.py"]), &cfg).unwrap();
        assert_eq!(a, b);
        let mut other = check(&["src/utils.py"]);
        other.head_sha = "fedcba".into();
        let c = reg.record(&other, &cfg).unwrap();
        assert_eq!(c.id.as_str(), "DDS-20260202-CODE-002");
        assert_eq!(
            reg.failed_for_check("acme/calc", "lint", "fedcba").unwrap(),
            Some(c)
        );
        // bad input spends no id
        let mut bad = check(&["../x"]);
        bad.head_sha = "1".into();
        assert!(matches!(
            reg.record(&bad, &cfg),
            Err(RegistryError::Build(_))
        ));
        assert_eq!(
            reg.next_failed_id(day()).unwrap().as_str(),
            "DDS-20260202-CODE-003"
        );
        // concurrent recordings of one check agree on one record
        let handles: Vec<_> = (0..6)
            .map(|_| {
                let reg = reg.clone();
                let mut ch = check(&["src/utils.py"]);
                ch.head_sha = "concurrent".into();
                std::thread::spawn(move || {
                    reg.record(&ch, &ConstraintsConfig::default()).unwrap().id
                })
            })
            .collect();
        let ids: BTreeSet<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(ids.len(), 1);
    }

    #[test]
    fn the_push_time_is_recorded_once_and_old_records_read_without_it() {
        let (_d, reg) = open();
        let cfg = ConstraintsConfig::default();
        let f = reg.record(&check(&["src/utils.py"]), &cfg).unwrap();
        let p = reg
            .propose(&f.id, &[report("src/utils.py")], &cfg, at())
            .unwrap();
        assert_eq!(p.pushed_at, None);
        let first = at() + chrono::Duration::minutes(5);
        reg.record_push(&p.dds.id, first).unwrap();
        reg.record_push(&p.dds.id, first + chrono::Duration::hours(1))
            .unwrap();
        assert_eq!(
            reg.get_fix(&p.dds.id).unwrap().unwrap().pushed_at,
            Some(first)
        );
        assert!(matches!(
            reg.record_push("DDS-FIX-20260202-999", first),
            Err(RegistryError::UnknownFix(_))
        ));
        // A record written before push times were kept: no `pushed_at` key at all.
        let mut old = serde_json::to_value(&p).unwrap();
        old.as_object_mut().unwrap().remove("pushed_at");
        let back: StoredProposal = serde_json::from_value(old).unwrap();
        assert_eq!(back.pushed_at, None);
        assert_eq!(back.dds, p.dds);
    }

    #[test]
    fn one_fix_per_source_even_after_rejection() {
        let (_d, reg) = open();
        let cfg = ConstraintsConfig::default();
        let f = reg.record(&check(&["src/utils.py"]), &cfg).unwrap();
        let p = reg
            .propose(&f.id, &[report("src/utils.py")], &cfg, at())
            .unwrap();
        assert_eq!(p.status, DdsStatus::Proposed);
        assert_eq!(p.dds.allowed_paths, ["src/utils.py"]);
        assert_eq!(reg.fix_for_source(&f.id).unwrap(), Some(p.clone()));

        let e = reg
            .propose(&f.id, &[report("src/utils.py")], &cfg, at())
            .unwrap_err();
        assert!(
            matches!(&e, RegistryError::Invalid(v) if v.rules() == [Rule::NoDuplicates]),
            "{e}"
        );

        let rejected = reg
            .transition(
                &p.dds.id,
                DdsStatus::Proposed,
                DdsStatus::Rejected,
                "maint",
                at(),
                "/reject wrong approach",
            )
            .unwrap();
        assert_eq!(rejected.history.len(), 1);
        assert_eq!(rejected.history[0].actor, "maint");
        assert_eq!(rejected.history[0].reason, "/reject wrong approach");
        // the failed DDS stays failed; regeneration stays blocked; no id was spent on the refusals
        assert_eq!(
            reg.get_failed(&f.id).unwrap().unwrap().status,
            DdsStatus::Failed
        );
        assert!(
            reg.propose(&f.id, &[report("src/utils.py")], &cfg, at())
                .is_err()
        );
        assert_eq!(
            reg.next_fix_id(day()).unwrap().as_str(),
            "DDS-FIX-20260202-002"
        );

        // a hand-built second fix with a fresh id is refused by insert_code_fix too
        let id = reg.next_fix_id(day()).unwrap();
        let derived =
            derive_code_fix(&id, &f.as_source(), &[report("src/utils.py")], &cfg).unwrap();
        let e = reg.insert_code_fix(derived, at()).unwrap_err();
        assert!(
            matches!(&e, RegistryError::Invalid(v) if v.rules() == [Rule::NoDuplicates]),
            "{e}"
        );
    }

    #[test]
    fn concurrent_proposals_for_one_source_record_exactly_one() {
        let (_d, reg) = open();
        let cfg = ConstraintsConfig::default();
        let f = reg.record(&check(&["src/utils.py"]), &cfg).unwrap();
        let derived: Vec<DerivedFix> = (0..6)
            .map(|_| {
                let id = reg.next_fix_id(day()).unwrap();
                derive_code_fix(&id, &f.as_source(), &[report("src/utils.py")], &cfg).unwrap()
            })
            .collect();
        let handles: Vec<_> = derived
            .into_iter()
            .map(|d| {
                let reg = reg.clone();
                std::thread::spawn(move || reg.insert_code_fix(d, at()).is_ok())
            })
            .collect();
        let wins = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|ok| *ok)
            .count();
        assert_eq!(wins, 1);
        assert_eq!(reg.list_fixes().unwrap().len(), 1);
    }

    #[test]
    fn invalid_fixes_are_refused_with_every_violation() {
        let (_d, reg) = open();
        let cfg = ConstraintsConfig::default();
        let f = reg.record(&check(&["src/utils.py"]), &cfg).unwrap();
        let id = reg.next_fix_id(day()).unwrap();
        let mut d = derive_code_fix(&id, &f.as_source(), &[report("src/utils.py")], &cfg).unwrap();
        d.dds.allowed_paths.push("src/other.py".into());
        d.dds.constraints.no_refactor = false;
        let e = reg.insert_code_fix(d, at()).unwrap_err();
        match e {
            RegistryError::Invalid(v) => {
                assert_eq!(v.rules(), [Rule::AllowedPaths, Rule::Constraints]);
            }
            other => panic!("{other}"),
        }
        assert!(reg.list_fixes().unwrap().is_empty());
        // unknown source
        let e = reg
            .propose(
                &DdsId("DDS-20260202-CODE-099".into()),
                &[report("a.py")],
                &cfg,
                at(),
            )
            .unwrap_err();
        assert!(matches!(e, RegistryError::UnknownSource(_)));
    }

    #[test]
    fn transitions_follow_the_state_machine_and_survive_restart() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = ConstraintsConfig::default();
        let fix_id;
        {
            let db = sled::open(dir.path()).unwrap();
            let reg = Registry::open(&db).unwrap();
            let f = reg.record(&check(&["src/utils.py"]), &cfg).unwrap();
            let p = reg
                .propose(&f.id, &[report("src/utils.py")], &cfg, at())
                .unwrap();
            fix_id = p.dds.id.clone();
            // forbidden: straight to executed
            let e = reg
                .transition(
                    &fix_id,
                    DdsStatus::Proposed,
                    DdsStatus::Executed,
                    "ci-medic",
                    at(),
                    "run",
                )
                .unwrap_err();
            assert!(
                e.to_string().contains("proposed") && e.to_string().contains("executed"),
                "{e}"
            );
            reg.transition(
                &fix_id,
                DdsStatus::Proposed,
                DdsStatus::Approved,
                "alice",
                at(),
                "/approve",
            )
            .unwrap();
            // stale: the caller still thinks it is proposed
            let e = reg
                .transition(
                    &fix_id,
                    DdsStatus::Proposed,
                    DdsStatus::Rejected,
                    "bob",
                    at(),
                    "/reject",
                )
                .unwrap_err();
            assert!(e.to_string().contains("`approved`"), "{e}");
        }
        let db = reopen(dir.path());
        let reg = Registry::open(&db).unwrap();
        let p = reg.get_fix(&fix_id).unwrap().unwrap();
        assert_eq!(p.status, DdsStatus::Approved);
        let done = reg
            .transition(
                &fix_id,
                DdsStatus::Approved,
                DdsStatus::Failed,
                "ci-medic",
                at(),
                "check `lint` failed again",
            )
            .unwrap();
        assert_eq!(
            done.history
                .iter()
                .map(|t| (t.from, t.to))
                .collect::<Vec<_>>(),
            [
                (DdsStatus::Proposed, DdsStatus::Approved),
                (DdsStatus::Approved, DdsStatus::Failed)
            ]
        );
        // final: nothing leaves failed
        assert!(
            reg.transition(
                &fix_id,
                DdsStatus::Failed,
                DdsStatus::Approved,
                "alice",
                at(),
                "again"
            )
            .is_err()
        );
        // a failed fix is the source of the next one
        let later = at() + chrono::Duration::hours(1);
        let next = reg
            .propose(
                &DdsId(fix_id.clone()),
                &[report("src/utils.py")],
                &cfg,
                later,
            )
            .unwrap();
        assert_eq!(next.dds.source_dds.as_str(), fix_id);
        assert_eq!(next.dds.allowed_paths, ["src/utils.py"]);
        assert!(
            reg.transition(
                "DDS-FIX-20260202-900",
                DdsStatus::Proposed,
                DdsStatus::Approved,
                "a",
                at(),
                "r"
            )
            .is_err()
        );
    }

    #[test]
    fn concurrent_decisions_have_exactly_one_winner() {
        let (_d, reg) = open();
        let cfg = ConstraintsConfig::default();
        let f = reg.record(&check(&["src/utils.py"]), &cfg).unwrap();
        let p = reg
            .propose(&f.id, &[report("src/utils.py")], &cfg, at())
            .unwrap();
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let reg = reg.clone();
                let id = p.dds.id.clone();
                let to = if i % 2 == 0 {
                    DdsStatus::Approved
                } else {
                    DdsStatus::Rejected
                };
                std::thread::spawn(move || {
                    reg.transition(
                        &id,
                        DdsStatus::Proposed,
                        to,
                        &format!("user{i}"),
                        at(),
                        "decision",
                    )
                    .is_ok()
                })
            })
            .collect();
        let wins = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|w| *w)
            .count();
        assert_eq!(wins, 1);
        let stored = reg.get_fix(&p.dds.id).unwrap().unwrap();
        assert_eq!(stored.history.len(), 1);
        let ids: BTreeSet<_> = reg
            .list_fixes()
            .unwrap()
            .into_iter()
            .map(|p| p.dds.id)
            .collect();
        assert_eq!(ids.len(), 1);
    }
}

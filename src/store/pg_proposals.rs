//! The proposal registry and the fix runs on PostgreSQL ([`Proposals`] and [`Runs`] for
//! [`PgStore`]), so a proposal published by one replica is found by every other: an
//! `/approve` delivered to replica B moves the proposal replica A analysed.
//!
//! Records are the sled store's JSON (a `JSONB` column); the columns beside them carry what
//! must be unique or looked up. What two replicas could race on is decided by the database:
//! - a failed check is recorded once: `UNIQUE (project, check_name, head_sha)`, the loser reads
//!   the winner's record;
//! - one code_fix per source (rule 10): `source_id UNIQUE`, the loser gets the rule's error;
//! - a transition or a push time: `SELECT … FOR UPDATE` in one transaction, then the state
//!   machine's `apply` against the locked row, so the second of two decisions sees the first
//!   and is refused as stale;
//! - a fix run: a version column, compare-and-swap (`UPDATE … WHERE version = $read`); a write
//!   over a version that moved on writes nothing and reports [`StoreError::RunChanged`] (the
//!   job is retried and reads the run again), never overwrites.
//!
//! It must never decide a proposal's outcome, and never hold a transaction across a call to
//! GitHub.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use ci_medic_core::ids::DdsId;
use ci_medic_core::proposal::{
    DdsStatus, DerivedFix, FailedCheck, FailedDds, StoredProposal, validate_code_fix,
};
use sqlx::Row;
use sqlx::postgres::PgRow;

use super::StoreError;
use super::pg::PgStore;
use super::proposals::{Proposals, Runs};
use super::registry::RegistryError;
use super::runs::{FixRun, Phase, indexed_commits};

fn decode<T: serde::de::DeserializeOwned>(key: &str, text: &str) -> Result<T, RegistryError> {
    serde_json::from_str(text).map_err(|e| RegistryError::Corrupt {
        key: key.to_string(),
        reason: e.to_string(),
    })
}

fn encode<T: serde::Serialize>(v: &T) -> String {
    // Plain structs with string-keyed maps: serialising them cannot fail.
    serde_json::to_string(v).expect("DDS records and runs always serialise")
}

impl PgStore {
    async fn fix_where(
        &self,
        column: &str,
        value: &str,
    ) -> Result<Option<StoredProposal>, RegistryError> {
        let sql = format!("SELECT id, record::text AS record FROM dds_fixes WHERE {column} = $1");
        let row = sqlx::query(&sql)
            .bind(value)
            .fetch_optional(self.pool())
            .await?;
        row.map(|r| decode(r.get::<&str, _>("id"), r.get::<&str, _>("record")))
            .transpose()
    }

    /// Reads a code_fix under a row lock, lets `change` compute its next record, writes it and
    /// commits: the read and the write are one step for every other replica.
    async fn update_fix<F>(&self, id: &str, change: F) -> Result<StoredProposal, RegistryError>
    where
        F: FnOnce(StoredProposal) -> Result<Option<StoredProposal>, RegistryError> + Send,
    {
        let mut tx = self.pool().begin().await?;
        let text: Option<String> =
            sqlx::query_scalar("SELECT record::text FROM dds_fixes WHERE id = $1 FOR UPDATE")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
        let text = text.ok_or_else(|| RegistryError::UnknownFix(id.to_string()))?;
        let current: StoredProposal = decode(id, &text)?;
        let Some(next) = change(current.clone())? else {
            tx.rollback().await?;
            return Ok(current);
        };
        sqlx::query("UPDATE dds_fixes SET record = $2::jsonb WHERE id = $1")
            .bind(id)
            .bind(encode(&next))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(next)
    }
}

#[async_trait]
impl Proposals for PgStore {
    async fn store_failure(
        &self,
        check: &FailedCheck,
        dds: FailedDds,
    ) -> Result<FailedDds, RegistryError> {
        // A concurrent insert of the same check waits for the first transaction, then
        // conflicts: exactly one record per check, whoever asks at once.
        let inserted = sqlx::query(
            "INSERT INTO dds_failed (id, project, check_name, head_sha, record) \
             VALUES ($1, $2, $3, $4, $5::jsonb) ON CONFLICT DO NOTHING",
        )
        .bind(dds.id.as_str())
        .bind(&check.project)
        .bind(&check.check_name)
        .bind(&check.head_sha)
        .bind(encode(&dds))
        .execute(self.pool())
        .await?
        .rows_affected();
        if inserted == 1 {
            return Ok(dds);
        }
        match self
            .failed_for_check(&check.project, &check.check_name, &check.head_sha)
            .await?
        {
            Some(winner) => Ok(winner),
            None => Err(RegistryError::DuplicateFailed(dds.id)),
        }
    }

    async fn failed_for_check(
        &self,
        project: &str,
        check_name: &str,
        head_sha: &str,
    ) -> Result<Option<FailedDds>, RegistryError> {
        let row = sqlx::query(
            "SELECT id, record::text AS record FROM dds_failed \
             WHERE project = $1 AND check_name = $2 AND head_sha = $3",
        )
        .bind(project)
        .bind(check_name)
        .bind(head_sha)
        .fetch_optional(self.pool())
        .await?;
        row.map(|r| decode(r.get::<&str, _>("id"), r.get::<&str, _>("record")))
            .transpose()
    }

    async fn get_failed(&self, id: &DdsId) -> Result<Option<FailedDds>, RegistryError> {
        let text: Option<String> =
            sqlx::query_scalar("SELECT record::text FROM dds_failed WHERE id = $1")
                .bind(id.as_str())
                .fetch_optional(self.pool())
                .await?;
        text.map(|t| decode(id.as_str(), &t)).transpose()
    }

    async fn get_fix(&self, id: &str) -> Result<Option<StoredProposal>, RegistryError> {
        self.fix_where("id", id).await
    }

    async fn fix_for_source(
        &self,
        source: &DdsId,
    ) -> Result<Option<StoredProposal>, RegistryError> {
        self.fix_where("source_id", source.as_str()).await
    }

    async fn list_failed(&self) -> Result<Vec<FailedDds>, RegistryError> {
        // Byte order, as sled's keys: ids sort by day, then number.
        let rows = sqlx::query(
            "SELECT id, record::text AS record FROM dds_failed ORDER BY id COLLATE \"C\"",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| decode(r.get::<&str, _>("id"), r.get::<&str, _>("record")))
            .collect()
    }

    async fn list_fixes(&self) -> Result<Vec<StoredProposal>, RegistryError> {
        let rows = sqlx::query(
            "SELECT id, record::text AS record FROM dds_fixes ORDER BY id COLLATE \"C\"",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| decode(r.get::<&str, _>("id"), r.get::<&str, _>("record")))
            .collect()
    }

    async fn insert_code_fix(
        &self,
        derived: DerivedFix,
        created_at: DateTime<Utc>,
    ) -> Result<StoredProposal, RegistryError> {
        let fix = &derived.dds;
        let source = self.get_source(&fix.source_dds).await?;
        let existing = self
            .fix_for_source(&fix.source_dds)
            .await?
            .map(|p| p.dds.id);
        validate_code_fix(fix, source.as_ref(), existing.as_deref())?;
        let stored = StoredProposal::new(derived, created_at);
        let inserted = sqlx::query(
            "INSERT INTO dds_fixes (id, source_id, record) VALUES ($1, $2, $3::jsonb) \
             ON CONFLICT DO NOTHING",
        )
        .bind(&stored.dds.id)
        .bind(stored.dds.source_dds.as_str())
        .bind(encode(&stored))
        .execute(self.pool())
        .await?
        .rows_affected();
        if inserted == 1 {
            return Ok(stored);
        }
        // Lost to a concurrent proposal for the same source (rule 10), or the id is taken.
        match self.fix_for_source(&stored.dds.source_dds).await? {
            Some(other) if other.dds.id != stored.dds.id => {
                let errs = validate_code_fix(&stored.dds, source.as_ref(), Some(&other.dds.id))
                    .expect_err("a second fix for the source breaks rule 10");
                Err(errs.into())
            }
            _ => Err(RegistryError::DuplicateFixId(stored.dds.id)),
        }
    }

    async fn record_push(&self, id: &str, at: DateTime<Utc>) -> Result<(), RegistryError> {
        self.update_fix(id, |mut p| {
            if p.pushed_at.is_some() {
                return Ok(None);
            }
            p.pushed_at = Some(at);
            Ok(Some(p))
        })
        .await
        .map(|_| ())
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
        self.update_fix(id, |p| {
            p.apply(expected, to, actor, at, reason)
                .map(Some)
                .map_err(|source| RegistryError::Transition {
                    id: id.to_string(),
                    source,
                })
        })
        .await
    }
}

const RUN_COLUMNS: &str = "repo, pr_number, check_name, version, record::text AS record";

fn run_from_row(row: &PgRow) -> Result<FixRun, StoreError> {
    let version: i64 = row.try_get("version")?;
    let text: &str = row.try_get("record")?;
    let mut run: FixRun = serde_json::from_str(text).map_err(|source| StoreError::Corrupt {
        key: format!(
            "fix_runs/{}#{}/{}",
            row.try_get::<&str, _>("repo").unwrap_or_default(),
            row.try_get::<i64, _>("pr_number").unwrap_or_default(),
            row.try_get::<&str, _>("check_name").unwrap_or_default()
        ),
        source,
    })?;
    // The column is the version compared on write; the JSON's copy is informative.
    run.version = version.max(0) as u64;
    Ok(run)
}

/// The columns a run is found by: whether the loop still moves it ([`Runs::active`]), and the
/// commit whose re-run it awaits ([`Runs::by_rerun`]).
fn looked_up_by(run: &FixRun) -> (bool, Option<String>) {
    let phase = run.phase();
    let active = run.unpublished
        || matches!(
            phase,
            Phase::Approved { .. } | Phase::Pushed { .. } | Phase::RerunRequested { .. }
        );
    let rerun_sha =
        matches!(phase, Phase::RerunRequested { .. }).then(|| run.state.head_sha.clone());
    (active, rerun_sha)
}

/// Pull request numbers are far below `i64::MAX`; a larger one matches no row.
fn db_pr(pr: u64) -> i64 {
    i64::try_from(pr).unwrap_or(-1)
}

impl PgStore {
    async fn runs_where(&self, filter: &str, binds: &[&str]) -> Result<Vec<FixRun>, StoreError> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM fix_runs {filter} \
             ORDER BY repo COLLATE \"C\", pr_number, check_name COLLATE \"C\""
        );
        let mut q = sqlx::query(&sql);
        for b in binds {
            q = q.bind(*b);
        }
        let rows = q.fetch_all(self.pool()).await?;
        rows.iter().map(run_from_row).collect()
    }
}

#[async_trait]
impl Runs for PgStore {
    async fn get(&self, repo: &str, pr: u64, check: &str) -> Result<Option<FixRun>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {RUN_COLUMNS} FROM fix_runs \
             WHERE repo = $1 AND pr_number = $2 AND check_name = $3"
        ))
        .bind(repo)
        .bind(db_pr(pr))
        .bind(check)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(run_from_row).transpose()
    }

    async fn put(&self, run: &mut FixRun) -> Result<(), StoreError> {
        let read = i64::try_from(run.version).unwrap_or(i64::MAX);
        let mut next = run.clone();
        next.version = run.version + 1;
        let indexed: Vec<String> = indexed_commits(&next).collect();
        let (active, rerun_sha) = looked_up_by(&next);
        let record = encode(&next);
        let mut tx = self.pool().begin().await?;
        let written = if read == 0 {
            // A new run: only if no replica stored one first.
            sqlx::query(
                "INSERT INTO fix_runs (repo, pr_number, check_name, version, active, rerun_sha, \
                 record) VALUES ($1, $2, $3, 1, $4, $5, $6::jsonb) ON CONFLICT DO NOTHING",
            )
            .bind(&next.repo)
            .bind(db_pr(next.pr_number))
            .bind(&next.check_name)
            .bind(active)
            .bind(&rerun_sha)
            .bind(&record)
            .execute(&mut *tx)
            .await?
        } else {
            sqlx::query(
                "UPDATE fix_runs SET version = version + 1, active = $5, rerun_sha = $6, \
                 record = $7::jsonb \
                 WHERE repo = $1 AND pr_number = $2 AND check_name = $3 AND version = $4",
            )
            .bind(&next.repo)
            .bind(db_pr(next.pr_number))
            .bind(&next.check_name)
            .bind(read)
            .bind(active)
            .bind(&rerun_sha)
            .bind(&record)
            .execute(&mut *tx)
            .await?
        }
        .rows_affected();
        if written == 0 {
            tx.rollback().await?;
            let found = self
                .get(&run.repo, run.pr_number, &run.check_name)
                .await?
                .map_or(0, |r| r.version);
            return Err(StoreError::RunChanged {
                key: format!("{}#{} {}", run.repo, run.pr_number, run.check_name),
                read: run.version,
                found,
            });
        }
        // As on sled: the commit about to be pushed is indexed before the push.
        for commit_sha in &indexed {
            sqlx::query(
                "INSERT INTO fix_runs_by_pushed_commit (repo, sha, pr_number, check_name) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (repo, sha) DO UPDATE \
                 SET pr_number = EXCLUDED.pr_number, check_name = EXCLUDED.check_name",
            )
            .bind(&next.repo)
            .bind(commit_sha)
            .bind(db_pr(next.pr_number))
            .bind(&next.check_name)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        run.version = next.version;
        Ok(())
    }

    async fn by_pushed_commit(&self, repo: &str, sha: &str) -> Result<Option<FixRun>, StoreError> {
        let row = sqlx::query(
            "SELECT r.repo, r.pr_number, r.check_name, r.version, r.record::text AS record \
             FROM fix_runs_by_pushed_commit p JOIN fix_runs r \
               ON r.repo = p.repo AND r.pr_number = p.pr_number AND r.check_name = p.check_name \
             WHERE p.repo = $1 AND p.sha = $2",
        )
        .bind(repo)
        .bind(sha)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(run_from_row).transpose()
    }

    async fn by_rerun(
        &self,
        repo: &str,
        sha: &str,
        check: &str,
    ) -> Result<Option<FixRun>, StoreError> {
        let runs = self
            .runs_where(
                "WHERE repo = $1 AND rerun_sha = $2 AND check_name = $3",
                &[repo, sha, check],
            )
            .await?;
        let want = Phase::RerunRequested {
            commit_sha: sha.to_string(),
        };
        Ok(runs.into_iter().find(|r| r.phase() == want))
    }

    async fn for_pull_request(&self, repo: &str, pr: u64) -> Result<Vec<FixRun>, StoreError> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM fix_runs WHERE repo = $1 AND pr_number = $2 \
             ORDER BY check_name COLLATE \"C\""
        );
        let rows = sqlx::query(&sql)
            .bind(repo)
            .bind(db_pr(pr))
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(run_from_row).collect()
    }

    async fn active(&self) -> Result<Vec<FixRun>, StoreError> {
        self.runs_where("WHERE active", &[]).await
    }

    async fn all(&self) -> Result<Vec<FixRun>, StoreError> {
        self.runs_where("", &[]).await
    }

    async fn for_repo(&self, repo: &str) -> Result<Vec<FixRun>, StoreError> {
        self.runs_where("WHERE repo = $1", &[repo]).await
    }

    async fn prune_finished(&self, cutoff: DateTime<Utc>) -> Result<usize, StoreError> {
        // The phase is the state machine's to say, so candidates are read and judged here;
        // a run written since it was read (its version moved) is not deleted.
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM fix_runs \
             WHERE NOT active AND (record->>'updated_at')::timestamptz < $1"
        );
        let rows = sqlx::query(&sql)
            .bind(cutoff)
            .fetch_all(self.pool())
            .await?;
        let mut gone = 0;
        for row in &rows {
            let run = run_from_row(row)?;
            if run.phase() != Phase::Finished || run.updated_at >= cutoff {
                continue;
            }
            let mut tx = self.pool().begin().await?;
            let deleted = sqlx::query(
                "DELETE FROM fix_runs \
                 WHERE repo = $1 AND pr_number = $2 AND check_name = $3 AND version = $4",
            )
            .bind(&run.repo)
            .bind(db_pr(run.pr_number))
            .bind(&run.check_name)
            .bind(i64::try_from(run.version).unwrap_or(-1))
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if deleted == 1 {
                sqlx::query(
                    "DELETE FROM fix_runs_by_pushed_commit \
                     WHERE repo = $1 AND pr_number = $2 AND check_name = $3",
                )
                .bind(&run.repo)
                .bind(db_pr(run.pr_number))
                .bind(&run.check_name)
                .execute(&mut *tx)
                .await?;
                gone += 1;
            }
            tx.commit().await?;
        }
        Ok(gone)
    }
}

/// What [`import_fix_state`] copied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FixStateImport {
    pub failed: usize,
    pub fixes: usize,
    pub runs: usize,
}

/// `ci-medic migrate --from-sled`'s share for the registry and the runs, inside the caller's
/// transaction: every failed record with its check, every code_fix with its transitions and
/// push time, every run with its pushed commits. What the database already holds (an earlier
/// import, or a replica's newer write) is left alone, so running it again copies nothing twice.
pub(crate) async fn import_fix_state(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    store: &super::Store,
) -> Result<FixStateImport, StoreError> {
    let reg_err = |e: RegistryError| match e {
        RegistryError::Storage(e) => StoreError::Sled(e),
        other => StoreError::Flush(other.to_string()),
    };
    let registry = store.registry().map_err(reg_err)?;
    let runs = super::runs::RunStore::open(store)?;
    let mut out = FixStateImport::default();
    let checks: std::collections::HashMap<String, (String, String, String)> = registry
        .failed_checks()
        .map_err(reg_err)?
        .into_iter()
        .map(|(p, c, sha, id)| (id.0, (p, c, sha)))
        .collect();
    for failed in registry.list_failed().map_err(reg_err)? {
        let check = checks.get(failed.id.as_str());
        out.failed += sqlx::query(
            "INSERT INTO dds_failed (id, project, check_name, head_sha, record) \
             VALUES ($1, $2, $3, $4, $5::jsonb) ON CONFLICT DO NOTHING",
        )
        .bind(failed.id.as_str())
        .bind(check.map(|c| &c.0))
        .bind(check.map(|c| &c.1))
        .bind(check.map(|c| &c.2))
        .bind(encode(&failed))
        .execute(&mut **tx)
        .await?
        .rows_affected() as usize;
    }
    for fix in registry.list_fixes().map_err(reg_err)? {
        out.fixes += sqlx::query(
            "INSERT INTO dds_fixes (id, source_id, record) VALUES ($1, $2, $3::jsonb) \
             ON CONFLICT DO NOTHING",
        )
        .bind(&fix.dds.id)
        .bind(fix.dds.source_dds.as_str())
        .bind(encode(&fix))
        .execute(&mut **tx)
        .await?
        .rows_affected() as usize;
    }
    for run in runs.all()? {
        let (active, rerun_sha) = looked_up_by(&run);
        let version = i64::try_from(run.version.max(1)).unwrap_or(i64::MAX);
        out.runs += sqlx::query(
            "INSERT INTO fix_runs (repo, pr_number, check_name, version, active, rerun_sha, \
             record) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) ON CONFLICT DO NOTHING",
        )
        .bind(&run.repo)
        .bind(db_pr(run.pr_number))
        .bind(&run.check_name)
        .bind(version)
        .bind(active)
        .bind(&rerun_sha)
        .bind(encode(&run))
        .execute(&mut **tx)
        .await?
        .rows_affected() as usize;
    }
    for (repo, sha, pr, check) in runs.pushed_commits()? {
        sqlx::query(
            "INSERT INTO fix_runs_by_pushed_commit (repo, sha, pr_number, check_name) \
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .bind(&repo)
        .bind(&sha)
        .bind(db_pr(pr))
        .bind(&check)
        .execute(&mut **tx)
        .await?;
    }
    Ok(out)
}

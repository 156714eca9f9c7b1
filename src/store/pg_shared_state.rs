//! [`SharedState`] on PostgreSQL (`migrations/0003_shared_state.sql`): what every replica must
//! see alike beside the queue.
//!
//! Races between replicas are settled by the database, never by a read followed by a write:
//! an outcome is one `INSERT … ON CONFLICT DO NOTHING` against a unique index (a redelivered
//! failure handled by two replicas is one row); a re-run is taken with one
//! `INSERT … ON CONFLICT DO UPDATE … WHERE count < max RETURNING`, which PostgreSQL runs under
//! the counter row's lock, so two replicas never both get the last one; an installation
//! change reads and writes its row under `SELECT … FOR UPDATE`.
//!
//! The App's credentials are stored sealed ([`super::sealing`]) with the operator's key: the
//! table never holds a private key or secret in clear, and a replica without the right key
//! cannot read them. It must never log a credential or the key.

use std::path::Path;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use ci_medic_triage::TestOutcome;
use secrecy::{ExposeSecret, SecretString};
use sqlx::Row;

use super::installations::Installation;
use super::pg::PgStore;
use super::sealing::{Keys, OpenedWith};
use super::shared_state::{CredentialsError, FirstApp, SharedState, SledShared};
use super::triage::{MAX_HISTORY_PER_TEST, MAX_OUTCOMES, MAX_RERUN_COUNTERS, MAX_TESTS_PER_CHECK};
use super::web_state::{OnceKind, StoredSession, TokenDigest};
use super::{Store, StoreError};
use crate::setup::StoredApp;

/// The shared state on PostgreSQL, with the key the credentials are sealed with.
#[derive(Clone)]
pub struct PgShared {
    db: PgStore,
    keys: Option<Keys>,
    max_outcomes: i64,
}

/// What [`PgShared::import_sled`] copied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SharedImport {
    /// Test outcomes new to the database.
    pub outcomes: usize,
    pub reruns: usize,
    /// Installations the database did not know (a known one is newer there: left alone).
    pub installations: usize,
    /// Marks of command comments a reply was asked for, new to the database.
    pub replies: usize,
    /// The App's credentials were copied (sealed). `false` when there were none in `DATA_DIR`,
    /// the database held some already, or no key was given (then said on stderr by the CLI).
    pub credentials: bool,
    /// Credentials were in `DATA_DIR` but no `CREDENTIALS_KEY` was given to seal them.
    pub credentials_need_key: bool,
}

const REDELIVERY_MARK: &str = "redelivery_last_pass";

impl PgShared {
    /// `keys`: `CREDENTIALS_KEY` (and the previous key during a rotation); without them the
    /// credentials can be neither stored nor read.
    pub fn new(db: PgStore, keys: Option<Keys>) -> PgShared {
        PgShared {
            db,
            keys,
            max_outcomes: MAX_OUTCOMES as i64,
        }
    }

    /// Keeps at most `max` outcomes (tests of the bound).
    pub fn with_max_outcomes(mut self, max: usize) -> PgShared {
        self.max_outcomes = i64::try_from(max).unwrap_or(i64::MAX);
        self
    }

    fn pool(&self) -> &sqlx::PgPool {
        self.db.pool()
    }

    async fn insert_outcome(
        &self,
        repo: &str,
        check: &str,
        o: &TestOutcome,
    ) -> Result<bool, StoreError> {
        let n = sqlx::query(
            "INSERT INTO triage_outcomes (repo, check_name, test, head_sha, on_default_branch, passed) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
        )
        .bind(repo)
        .bind(check)
        .bind(&o.test)
        .bind(&o.head_sha)
        .bind(o.on_default_branch)
        .bind(o.passed)
        .execute(self.pool())
        .await?
        .rows_affected();
        Ok(n == 1)
    }

    /// Drops the oldest outcomes beyond the bound.
    async fn prune(&self) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM triage_outcomes WHERE id <= \
             (SELECT id FROM triage_outcomes ORDER BY id DESC OFFSET $1 LIMIT 1)",
        )
        .bind(self.max_outcomes)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    fn keys(&self) -> Result<&Keys, CredentialsError> {
        self.keys.as_ref().ok_or(CredentialsError::NoKey)
    }

    /// `ci-medic migrate --from-sled`: copies a stopped sled `DATA_DIR`'s triage history and
    /// re-run counters, installations and App credentials (sealed with the key given). Running
    /// it again copies nothing twice; what the database holds already wins.
    pub async fn import_sled(
        &self,
        store: &Store,
        data_dir: &Path,
    ) -> Result<SharedImport, CredentialsError> {
        let sled = SledShared::open(store)?.with_credentials(data_dir);
        let mut out = SharedImport::default();
        for (repo, check, o) in sled.triage().export_outcomes()? {
            if self.insert_outcome(&repo, &check, &o).await? {
                out.outcomes += 1;
            }
        }
        for c in sled.triage().export_reruns()? {
            let n = sqlx::query(
                "INSERT INTO triage_reruns (repo, head_sha, check_name, count, at) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (repo, head_sha, check_name) \
                 DO UPDATE SET count = EXCLUDED.count, at = EXCLUDED.at \
                 WHERE triage_reruns.count < EXCLUDED.count",
            )
            .bind(c.repo)
            .bind(c.sha)
            .bind(c.check)
            .bind(i32::try_from(c.count).unwrap_or(i32::MAX))
            .bind(c.at)
            .execute(self.pool())
            .await
            .map_err(StoreError::from)?
            .rows_affected();
            out.reruns += n as usize;
        }
        for inst in sled.installations().await? {
            let n = sqlx::query(
                "INSERT INTO installations (id, account, repositories, updated_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
            )
            .bind(db_id(inst.id))
            .bind(&inst.account)
            .bind(inst.repositories.iter().cloned().collect::<Vec<_>>())
            .bind(inst.updated_at)
            .execute(self.pool())
            .await
            .map_err(StoreError::from)?
            .rows_affected();
            out.installations += n as usize;
        }
        for (repo, comment_id) in sled.export_replies()? {
            let n = sqlx::query(
                "INSERT INTO reply_intents (repo, comment_id) VALUES ($1, $2) \
                 ON CONFLICT (repo, comment_id) DO NOTHING",
            )
            .bind(repo)
            .bind(comment_id as i64)
            .execute(self.pool())
            .await
            .map_err(StoreError::from)?
            .rows_affected();
            out.replies += n as usize;
        }
        if let Some(app) = sled.load_app().await? {
            if self.keys.is_none() {
                out.credentials_need_key = true;
            } else if !self.has_app().await? {
                self.store_app(&app).await?;
                out.credentials = true;
            }
        }
        Ok(out)
    }

    /// Seals the App's secrets with the current key and writes its one row: replacing the
    /// stored App when `replace`, else only when none is stored. Whether the row was written.
    async fn insert_app(&self, app: &StoredApp, replace: bool) -> Result<bool, CredentialsError> {
        let key = &self.keys()?.current;
        let pem = key.seal(
            "private_key_pem",
            app.private_key_pem.expose_secret().as_bytes(),
        )?;
        let hook = key.seal(
            "webhook_secret",
            app.webhook_secret.expose_secret().as_bytes(),
        )?;
        let client = app
            .client_secret
            .as_ref()
            .map(|s| key.seal("client_secret", s.expose_secret().as_bytes()))
            .transpose()?;
        let on_conflict = if replace {
            "DO UPDATE SET app_id = EXCLUDED.app_id, \
                 slug = EXCLUDED.slug, html_url = EXCLUDED.html_url, \
                 client_id = EXCLUDED.client_id, private_key_pem = EXCLUDED.private_key_pem, \
                 webhook_secret = EXCLUDED.webhook_secret, \
                 client_secret = EXCLUDED.client_secret, key_id = EXCLUDED.key_id, \
                 updated_at = now()"
        } else {
            "DO NOTHING"
        };
        let written = sqlx::query(&format!(
            "INSERT INTO app_credentials (singleton, app_id, slug, html_url, client_id, \
                 private_key_pem, webhook_secret, client_secret, key_id, updated_at) \
             VALUES (true, $1, $2, $3, $4, $5, $6, $7, $8, now()) \
             ON CONFLICT (singleton) {on_conflict}"
        ))
        .bind(db_id(app.app_id))
        .bind(&app.slug)
        .bind(&app.html_url)
        .bind(&app.client_id)
        .bind(pem)
        .bind(hook)
        .bind(client)
        .bind(key.id_hex())
        .execute(self.pool())
        .await
        .map_err(StoreError::from)?
        .rows_affected();
        Ok(written == 1)
    }

    async fn has_app(&self) -> Result<bool, StoreError> {
        let found: Option<i32> = sqlx::query_scalar("SELECT 1 FROM app_credentials")
            .fetch_optional(self.pool())
            .await?;
        Ok(found.is_some())
    }
}

/// Installation ids are GitHub's, positive and far below `i64::MAX`.
fn db_id(id: u64) -> i64 {
    i64::try_from(id).unwrap_or(-1)
}

fn installation_from_row(row: &sqlx::postgres::PgRow) -> Result<Installation, StoreError> {
    let id: i64 = row.try_get("id")?;
    let repositories: Vec<String> = row.try_get("repositories")?;
    Ok(Installation {
        id: id.max(0) as u64,
        account: row.try_get("account")?,
        repositories: repositories.into_iter().collect(),
        updated_at: row.try_get("updated_at")?,
    })
}

fn secret(field: &str, bytes: &[u8]) -> Result<SecretString, CredentialsError> {
    let text = std::str::from_utf8(bytes).map_err(|_| super::sealing::SealError::Corrupt {
        field: field.to_string(),
    })?;
    Ok(SecretString::from(text.to_string()))
}

#[async_trait]
impl SharedState for PgShared {
    async fn record_failures(
        &self,
        repo: &str,
        check: &str,
        head_sha: &str,
        on_default_branch: bool,
        tests: &[String],
    ) -> Result<usize, StoreError> {
        // One statement for the whole list (a suite failing wholesale names hundreds), in
        // the list's order; a test already recorded failing here conflicts and is skipped.
        let tests: Vec<&str> = tests
            .iter()
            .take(MAX_TESTS_PER_CHECK)
            .map(String::as_str)
            .collect();
        let n = sqlx::query(
            "INSERT INTO triage_outcomes (repo, check_name, test, head_sha, on_default_branch, passed) \
             SELECT $1, $2, u.test, $3, $4, false \
             FROM unnest($5::text[]) WITH ORDINALITY AS u(test, n) ORDER BY u.n \
             ON CONFLICT DO NOTHING",
        )
        .bind(repo)
        .bind(check)
        .bind(head_sha)
        .bind(on_default_branch)
        .bind(&tests)
        .execute(self.pool())
        .await?
        .rows_affected();
        self.prune().await?;
        Ok(n as usize)
    }

    async fn record_check_passed(
        &self,
        repo: &str,
        check: &str,
        head_sha: &str,
    ) -> Result<usize, StoreError> {
        // One statement: the tests that failed here, less those that passed here already.
        let n = sqlx::query(
            "INSERT INTO triage_outcomes (repo, check_name, test, head_sha, on_default_branch, passed) \
             SELECT DISTINCT ON (f.test) f.repo, f.check_name, f.test, f.head_sha, false, true \
             FROM triage_outcomes f \
             WHERE f.repo = $1 AND f.check_name = $2 AND f.head_sha = $3 AND NOT f.passed \
               AND NOT EXISTS (SELECT 1 FROM triage_outcomes p WHERE p.repo = f.repo \
                               AND p.test = f.test AND p.head_sha = f.head_sha AND p.passed) \
             ORDER BY f.test, f.id \
             ON CONFLICT DO NOTHING",
        )
        .bind(repo)
        .bind(check)
        .bind(head_sha)
        .execute(self.pool())
        .await?
        .rows_affected();
        self.prune().await?;
        Ok(n as usize)
    }

    async fn record_default_branch_pass(
        &self,
        repo: &str,
        check: &str,
        head_sha: &str,
    ) -> Result<usize, StoreError> {
        let n = sqlx::query(
            "INSERT INTO triage_outcomes (repo, check_name, test, head_sha, on_default_branch, passed) \
             SELECT $1, $2, t.test, $3, true, true FROM ( \
                SELECT test, max(id) AS last FROM triage_outcomes \
                WHERE repo = $1 AND check_name = $2 AND NOT passed \
                GROUP BY test ORDER BY last DESC LIMIT $4) t \
             ORDER BY t.last \
             ON CONFLICT DO NOTHING",
        )
        .bind(repo)
        .bind(check)
        .bind(head_sha)
        .bind(MAX_TESTS_PER_CHECK as i64)
        .execute(self.pool())
        .await?
        .rows_affected();
        self.prune().await?;
        Ok(n as usize)
    }

    async fn histories(
        &self,
        repo: &str,
        tests: &[String],
    ) -> Result<Vec<TestOutcome>, StoreError> {
        let tests: Vec<String> = tests.iter().take(MAX_TESTS_PER_CHECK).cloned().collect();
        let rows = sqlx::query(
            "SELECT test, head_sha, on_default_branch, passed FROM ( \
                SELECT test, head_sha, on_default_branch, passed, id, \
                       row_number() OVER (PARTITION BY test ORDER BY id DESC) AS newest \
                FROM triage_outcomes WHERE repo = $1 AND test = ANY($2)) h \
             WHERE newest <= $3 ORDER BY array_position($2, test), id",
        )
        .bind(repo)
        .bind(&tests)
        .bind(MAX_HISTORY_PER_TEST as i64)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(TestOutcome {
                    test: r.try_get("test")?,
                    head_sha: r.try_get("head_sha")?,
                    on_default_branch: r.try_get("on_default_branch")?,
                    passed: r.try_get("passed")?,
                })
            })
            .collect()
    }

    async fn reruns(&self, repo: &str, sha: &str, check: &str) -> Result<u32, StoreError> {
        let n: Option<i32> = sqlx::query_scalar(
            "SELECT count FROM triage_reruns WHERE repo = $1 AND head_sha = $2 AND check_name = $3",
        )
        .bind(repo)
        .bind(sha)
        .bind(check)
        .fetch_optional(self.pool())
        .await?;
        Ok(n.unwrap_or(0).max(0) as u32)
    }

    async fn take_rerun(
        &self,
        repo: &str,
        sha: &str,
        check: &str,
        max: u32,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        if max == 0 {
            return Ok(false);
        }
        // The row's lock orders concurrent takers; the WHERE sees the count the previous one
        // committed, so the last re-run goes to exactly one of them.
        let taken: Option<i32> = sqlx::query_scalar(
            "INSERT INTO triage_reruns (repo, head_sha, check_name, count, at) \
             VALUES ($1, $2, $3, 1, $5) \
             ON CONFLICT (repo, head_sha, check_name) DO UPDATE \
             SET count = triage_reruns.count + 1, at = EXCLUDED.at \
             WHERE triage_reruns.count < $4 \
             RETURNING count",
        )
        .bind(repo)
        .bind(sha)
        .bind(check)
        .bind(i32::try_from(max).unwrap_or(i32::MAX))
        .bind(now)
        .fetch_optional(self.pool())
        .await?;
        sqlx::query(
            "DELETE FROM triage_reruns WHERE (repo, head_sha, check_name) IN ( \
                SELECT repo, head_sha, check_name FROM triage_reruns \
                ORDER BY at DESC OFFSET $1)",
        )
        .bind(MAX_RERUN_COUNTERS as i64)
        .execute(self.pool())
        .await?;
        Ok(taken.is_some())
    }

    async fn apply_installation(
        &self,
        id: u64,
        account: Option<&str>,
        deleted: bool,
        added: &[String],
        removed: &[String],
    ) -> Result<Option<Installation>, StoreError> {
        let mut tx = self.pool().begin().await?;
        if deleted {
            sqlx::query("DELETE FROM installations WHERE id = $1")
                .bind(db_id(id))
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            return Ok(None);
        }
        sqlx::query(
            "INSERT INTO installations (id, account, repositories, updated_at) \
             VALUES ($1, NULL, '{}', now()) ON CONFLICT (id) DO NOTHING",
        )
        .bind(db_id(id))
        .execute(&mut *tx)
        .await?;
        let row = sqlx::query(
            "SELECT id, account, repositories, updated_at FROM installations \
             WHERE id = $1 FOR UPDATE",
        )
        .bind(db_id(id))
        .fetch_one(&mut *tx)
        .await?;
        let mut rec = installation_from_row(&row)?;
        if let Some(a) = account {
            rec.account = Some(a.to_string());
        }
        rec.repositories.extend(added.iter().cloned());
        for r in removed {
            rec.repositories.remove(r);
        }
        let row = sqlx::query(
            "UPDATE installations SET account = $2, repositories = $3, updated_at = now() \
             WHERE id = $1 RETURNING id, account, repositories, updated_at",
        )
        .bind(db_id(id))
        .bind(&rec.account)
        .bind(rec.repositories.iter().cloned().collect::<Vec<_>>())
        .fetch_one(&mut *tx)
        .await?;
        let rec = installation_from_row(&row)?;
        tx.commit().await?;
        Ok(Some(rec))
    }

    async fn installation(&self, id: u64) -> Result<Option<Installation>, StoreError> {
        let row = sqlx::query(
            "SELECT id, account, repositories, updated_at FROM installations WHERE id = $1",
        )
        .bind(db_id(id))
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(installation_from_row).transpose()
    }

    async fn installations(&self) -> Result<Vec<Installation>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, account, repositories, updated_at FROM installations ORDER BY id",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(installation_from_row).collect()
    }

    async fn store_app(&self, app: &StoredApp) -> Result<(), CredentialsError> {
        self.insert_app(app, true).await?;
        Ok(())
    }

    async fn store_first_app(&self, app: &StoredApp) -> Result<FirstApp, CredentialsError> {
        loop {
            if self.insert_app(app, false).await? {
                return Ok(FirstApp::Stored);
            }
            // The conflicting row was committed before the insert gave up on it, so it is
            // readable, unless an operator removed it in between: then this App is first.
            if let Some(stored) = self.load_app().await? {
                return Ok(FirstApp::AlreadySetUp(stored));
            }
        }
    }

    async fn load_app(&self) -> Result<Option<StoredApp>, CredentialsError> {
        let Some(row) = sqlx::query(
            "SELECT app_id, slug, html_url, client_id, private_key_pem, webhook_secret, \
                    client_secret FROM app_credentials",
        )
        .fetch_optional(self.pool())
        .await
        .map_err(StoreError::from)?
        else {
            return Ok(None);
        };
        let keys = self.keys()?;
        let get = |c: &str| -> Result<Vec<u8>, CredentialsError> {
            Ok(row.try_get::<Vec<u8>, _>(c).map_err(StoreError::from)?)
        };
        let (pem, with) = keys.open("private_key_pem", &get("private_key_pem")?)?;
        let (hook, _) = keys.open("webhook_secret", &get("webhook_secret")?)?;
        let client: Option<Vec<u8>> = row.try_get("client_secret").map_err(StoreError::from)?;
        let client_secret = match client {
            Some(sealed) => Some(secret(
                "client_secret",
                &keys.open("client_secret", &sealed)?.0,
            )?),
            None => None,
        };
        let app_id: i64 = row.try_get("app_id").map_err(StoreError::from)?;
        let app = StoredApp {
            app_id: app_id.max(0) as u64,
            private_key_pem: secret("private_key_pem", &pem)?,
            webhook_secret: secret("webhook_secret", &hook)?,
            slug: row.try_get("slug").map_err(StoreError::from)?,
            html_url: row.try_get("html_url").map_err(StoreError::from)?,
            client_id: row.try_get("client_id").map_err(StoreError::from)?,
            client_secret,
        };
        if with == OpenedWith::Previous {
            // A rotation: sealed again under the current key, so the previous one can go.
            self.store_app(&app).await?;
            tracing::info!(
                key_id = %keys.current.id_hex(),
                "the stored App credentials are now sealed with the current CREDENTIALS_KEY"
            );
        }
        Ok(Some(app))
    }

    async fn redelivery_mark(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT at FROM shared_marks WHERE name = $1")
                .bind(REDELIVERY_MARK)
                .fetch_optional(self.pool())
                .await?,
        )
    }

    async fn set_redelivery_mark(&self, at: DateTime<Utc>) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO shared_marks (name, at) VALUES ($1, $2) \
             ON CONFLICT (name) DO UPDATE SET at = GREATEST(shared_marks.at, EXCLUDED.at)",
        )
        .bind(REDELIVERY_MARK)
        .bind(at)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    async fn reply_asked(&self, repo: &str, comment_id: u64) -> Result<bool, StoreError> {
        Ok(sqlx::query_scalar::<_, i32>(
            "SELECT 1 FROM reply_intents WHERE repo = $1 AND comment_id = $2",
        )
        .bind(repo)
        .bind(comment_id as i64)
        .fetch_optional(self.pool())
        .await?
        .is_some())
    }

    async fn mark_reply_asked(&self, repo: &str, comment_id: u64) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO reply_intents (repo, comment_id) VALUES ($1, $2) \
             ON CONFLICT (repo, comment_id) DO NOTHING",
        )
        .bind(repo)
        .bind(comment_id as i64)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    async fn prune_reply_marks(&self, cutoff: DateTime<Utc>) -> Result<usize, StoreError> {
        let n = sqlx::query("DELETE FROM reply_intents WHERE at < $1")
            .bind(cutoff)
            .execute(self.pool())
            .await?
            .rows_affected();
        Ok(n as usize)
    }

    async fn put_once(
        &self,
        kind: OnceKind,
        token: &TokenDigest,
        now: DateTime<Utc>,
        expires: DateTime<Utc>,
        cap: usize,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        sqlx::query("DELETE FROM once_tokens WHERE kind = $1 AND expires_at <= $2")
            .bind(kind.as_str())
            .bind(now)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO once_tokens (kind, digest, created_at, expires_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (kind, digest) DO UPDATE SET created_at = EXCLUDED.created_at, \
                 expires_at = EXCLUDED.expires_at",
        )
        .bind(kind.as_str())
        .bind(&token.as_bytes()[..])
        .bind(now)
        .bind(expires)
        .execute(&mut *tx)
        .await?;
        // Two replicas inserting at once may each keep one more than the bound for a moment;
        // the next insert trims it.
        sqlx::query(
            "DELETE FROM once_tokens WHERE kind = $1 AND digest IN \
                 (SELECT digest FROM once_tokens WHERE kind = $1 \
                  ORDER BY created_at DESC, digest OFFSET $2)",
        )
        .bind(kind.as_str())
        .bind(i64::try_from(cap.max(1)).unwrap_or(i64::MAX))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn take_once(
        &self,
        kind: OnceKind,
        token: &TokenDigest,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        // One DELETE: of two replicas taking the same token, only one gets the row back.
        let expires: Option<DateTime<Utc>> = sqlx::query_scalar(
            "DELETE FROM once_tokens WHERE kind = $1 AND digest = $2 RETURNING expires_at",
        )
        .bind(kind.as_str())
        .bind(&token.as_bytes()[..])
        .fetch_optional(self.pool())
        .await?;
        Ok(expires.is_some_and(|e| e > now))
    }

    async fn put_session(
        &self,
        id: &TokenDigest,
        session: &StoredSession,
        now: DateTime<Utc>,
        cap: usize,
    ) -> Result<(), StoreError> {
        let role = serde_json::to_string(&session.role).expect("a role serialises");
        let mut tx = self.pool().begin().await?;
        sqlx::query("DELETE FROM status_sessions WHERE expires_at <= $1")
            .bind(now)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO status_sessions (digest, role, csrf, expires_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (digest) DO UPDATE SET role = EXCLUDED.role, csrf = EXCLUDED.csrf, \
                 expires_at = EXCLUDED.expires_at",
        )
        .bind(&id.as_bytes()[..])
        .bind(role)
        .bind(&session.csrf)
        .bind(session.expires)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "DELETE FROM status_sessions WHERE digest IN \
                 (SELECT digest FROM status_sessions ORDER BY expires_at DESC, digest OFFSET $1)",
        )
        .bind(i64::try_from(cap.max(1)).unwrap_or(i64::MAX))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn session(
        &self,
        id: &TokenDigest,
        now: DateTime<Utc>,
    ) -> Result<Option<StoredSession>, StoreError> {
        let Some(row) = sqlx::query(
            "SELECT role, csrf, expires_at FROM status_sessions \
             WHERE digest = $1 AND expires_at > $2",
        )
        .bind(&id.as_bytes()[..])
        .bind(now)
        .fetch_optional(self.pool())
        .await?
        else {
            return Ok(None);
        };
        let role: String = row.try_get("role")?;
        let role = serde_json::from_str(&role).map_err(|source| StoreError::Corrupt {
            key: "status_sessions.role".into(),
            source,
        })?;
        Ok(Some(StoredSession {
            role,
            csrf: row.try_get("csrf")?,
            expires: row.try_get("expires_at")?,
        }))
    }

    async fn end_session(&self, id: &TokenDigest) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM status_sessions WHERE digest = $1")
            .bind(&id.as_bytes()[..])
            .execute(self.pool())
            .await?;
        Ok(())
    }
}

//! The rest of the state every replica must see alike, beside the queue's
//! ([`super::backend::Backend`]): triage history (per-test outcomes) and automatic re-run
//! counters, the installations, the stored App credentials, and the redelivery pass's
//! bookkeeping.
//!
//! Domain operations, each atomic on both backends: the sled one here ([`SledShared`], the
//! default, one process, unchanged on disk) and PostgreSQL's in `pg_shared_state.rs`. Their
//! common test suite is `tests/store_backends.rs`. [`SharedState::take_rerun`] is the one that
//! must hold under races: the count is taken before the re-run is requested, and two replicas
//! never both get the last one.
//!
//! Credentials: sled keeps them as today, in files `0600` under `DATA_DIR/github-app/`;
//! PostgreSQL keeps them sealed with the operator's key (`sealing.rs`). It must never log or
//! format a credential, and never decide anything (the orchestrator and triage do).

use std::path::PathBuf;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use ci_medic_triage::TestOutcome;

use super::installations::{Installation, Installations};
use super::sealing::SealError;
use super::triage::TriageStore;
use super::web_state::{self, OnceKind, StoredSession, TokenDigest};
use super::{Store, StoreError};
use crate::setup::{SetupError, StoredApp};

/// Why the stored App credentials could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("DATA_DIR: {0}")]
    Files(#[from] SetupError),
    #[error(transparent)]
    Sealing(#[from] SealError),
    #[error(
        "CREDENTIALS_KEY is not set: with DATABASE_URL the App's credentials are stored sealed in the database, and the key seals and opens them (make one with `openssl rand -hex 32`)"
    )]
    NoKey,
    /// A programming error: a handle opened without `DATA_DIR` asked for the credentials.
    #[error("this sled handle was opened without DATA_DIR: it holds no App credentials")]
    NoCredentialsDir,
}

/// What [`SharedState::store_first_app`] did.
#[derive(Debug)]
pub enum FirstApp {
    /// The App given is now the stored one.
    Stored,
    /// Another App was stored first; it stays, and this is it.
    AlreadySetUp(StoredApp),
}

/// State shared by every replica beside the queue. Cheap to clone behind an `Arc`.
#[async_trait]
pub trait SharedState: Send + Sync + 'static {
    /// Records that `tests` failed in `check` on `head_sha` (each once per commit: a
    /// redelivered failure is not counted twice). Returns how many were new.
    async fn record_failures(
        &self,
        repo: &str,
        check: &str,
        head_sha: &str,
        on_default_branch: bool,
        tests: &[String],
    ) -> Result<usize, StoreError>;

    /// `check` passed on `head_sha` of a pull request: the tests recorded failing in it on
    /// that commit passed now. Returns how many passes were recorded.
    async fn record_check_passed(
        &self,
        repo: &str,
        check: &str,
        head_sha: &str,
    ) -> Result<usize, StoreError>;

    /// `check` passed on `head_sha` of the default branch: every test ever recorded failing
    /// in `check` in `repo` (at most [`super::triage::MAX_TESTS_PER_CHECK`], most recent
    /// first) ran and passed there. Once per test and commit. Returns how many were recorded.
    async fn record_default_branch_pass(
        &self,
        repo: &str,
        check: &str,
        head_sha: &str,
    ) -> Result<usize, StoreError>;

    /// The recorded outcomes of each of `tests` (each once, in the order given), oldest first
    /// per test.
    async fn histories(&self, repo: &str, tests: &[String])
    -> Result<Vec<TestOutcome>, StoreError>;

    /// Automatic re-runs taken so far for `check` on `sha`.
    async fn reruns(&self, repo: &str, sha: &str, check: &str) -> Result<u32, StoreError>;

    /// Takes one automatic re-run for `check` on `sha` if fewer than `max` were taken, durably
    /// before it returns. `false`: the bound is reached. Atomic across replicas.
    async fn take_rerun(
        &self,
        repo: &str,
        sha: &str,
        check: &str,
        max: u32,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError>;

    /// Applies one `installation`/`installation_repositories` change (see
    /// [`Installations::apply`]) and returns the record as it now stands.
    async fn apply_installation(
        &self,
        id: u64,
        account: Option<&str>,
        deleted: bool,
        added: &[String],
        removed: &[String],
    ) -> Result<Option<Installation>, StoreError>;

    async fn installation(&self, id: u64) -> Result<Option<Installation>, StoreError>;

    /// Every installation, by id.
    async fn installations(&self) -> Result<Vec<Installation>, StoreError>;

    /// Stores the App's credentials (replacing any): a key rotation, a migration.
    async fn store_app(&self, app: &StoredApp) -> Result<(), CredentialsError>;

    /// Stores the App's credentials unless an App is stored already, atomically: of two setup
    /// flows finishing at once, on one replica or two, the first wins and the second is told
    /// which App is there.
    async fn store_first_app(&self, app: &StoredApp) -> Result<FirstApp, CredentialsError>;

    /// The stored App, `None` when none is stored.
    async fn load_app(&self) -> Result<Option<StoredApp>, CredentialsError>;

    /// When the last complete redelivery pass started, by whichever replica ran it.
    async fn redelivery_mark(&self) -> Result<Option<DateTime<Utc>>, StoreError>;

    /// A redelivery pass that started at `at` read everything before it. The mark only moves
    /// forward (a slow replica's older pass does not move it back).
    async fn set_redelivery_mark(&self, at: DateTime<Utc>) -> Result<(), StoreError>;

    /// Whether a reply to this command comment was asked for before, by any replica (its
    /// answer may have been lost, so the reply may exist).
    async fn reply_asked(&self, repo: &str, comment_id: u64) -> Result<bool, StoreError>;

    /// Records, durably, that a reply to this command comment is being asked for: stored
    /// before the request, so a retry after a lost answer looks for the reply first.
    async fn mark_reply_asked(&self, repo: &str, comment_id: u64) -> Result<(), StoreError>;

    /// Forgets the reply marks asked for before `cutoff` (the sweep, by one replica at a
    /// time): past it, the command's delivery id is forgotten too, and no retry of its job can
    /// come. Returns how many went.
    async fn prune_reply_marks(&self, cutoff: DateTime<Utc>) -> Result<usize, StoreError>;

    /// Keeps a one-time token (its digest) until `expires`, durably before it returns, so
    /// that whichever replica the browser comes back to can take it. At most `cap` of `kind`
    /// are kept: expired ones go, then the oldest (the pages that hand them out are open to
    /// anyone, and must not fill the store).
    async fn put_once(
        &self,
        kind: OnceKind,
        token: &TokenDigest,
        now: DateTime<Utc>,
        expires: DateTime<Utc>,
        cap: usize,
    ) -> Result<(), StoreError>;

    /// Takes a one-time token: removed whatever the answer, and `true` only when it was there
    /// and had not expired at `now`. Of two replicas taking the same token, one gets `true`.
    async fn take_once(
        &self,
        kind: OnceKind,
        token: &TokenDigest,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError>;

    /// Stores a status page session under the digest of its id, durably before it returns.
    /// At most `cap` live sessions are kept: expired ones go, then the soonest to expire.
    async fn put_session(
        &self,
        id: &TokenDigest,
        session: &StoredSession,
        now: DateTime<Utc>,
        cap: usize,
    ) -> Result<(), StoreError>;

    /// The session stored under `id`, `None` when there is none or it expired by `now`.
    async fn session(
        &self,
        id: &TokenDigest,
        now: DateTime<Utc>,
    ) -> Result<Option<StoredSession>, StoreError>;

    /// Ends a session (signing out); ending one that is not there is no error.
    async fn end_session(&self, id: &TokenDigest) -> Result<(), StoreError>;
}

/// Sled: the trees this process has always used, and the credential files in `DATA_DIR`.
#[derive(Clone)]
pub struct SledShared {
    triage: TriageStore,
    installations: Installations,
    marks: sled::Tree,
    /// `owner/repo#comment_id` of each command comment ci-medic asked GitHub to reply to.
    replies: sled::Tree,
    /// One-time tokens of the setup flow and the status page's sign-in ([`web_state`]).
    once: sled::Tree,
    /// Status page sessions, by the digest of their id.
    sessions: sled::Tree,
    /// `DATA_DIR`, where the credential files are; `None`: this handle has no credentials
    /// (the orchestrator's, which never reads them).
    data_dir: Option<PathBuf>,
}

const REDELIVERY_MARK: &[u8] = b"redelivery_last_pass";

impl SledShared {
    /// The shared state in `store`, without the credentials (see [`Self::with_credentials`]).
    pub fn open(store: &Store) -> Result<SledShared, StoreError> {
        Ok(SledShared {
            triage: TriageStore::open(store)?,
            installations: Installations::open(store)?,
            marks: store.db().open_tree("shared_marks")?,
            replies: store.db().open_tree("reply_intents")?,
            once: store.db().open_tree("once_tokens")?,
            sessions: store.db().open_tree("status_sessions")?,
            data_dir: None,
        })
    }

    /// With the credential files of `data_dir` (`DATA_DIR`, the directory `store` is in).
    pub fn with_credentials(mut self, data_dir: impl Into<PathBuf>) -> SledShared {
        self.data_dir = Some(data_dir.into());
        self
    }

    fn credentials_dir(&self) -> Result<PathBuf, CredentialsError> {
        self.data_dir
            .clone()
            .ok_or(CredentialsError::NoCredentialsDir)
    }

    /// Every reply mark, as `(repo, comment id)` (`migrate --from-sled` copies them).
    pub fn export_replies(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let mut out = Vec::new();
        for kv in self.replies.iter() {
            let (k, _) = kv?;
            let key = String::from_utf8_lossy(&k);
            // A key that does not parse was never written by this code: skipped, not fatal.
            if let Some((repo, id)) = key.rsplit_once('#')
                && let Ok(id) = id.parse()
            {
                out.push((repo.to_string(), id));
            }
        }
        Ok(out)
    }

    /// The triage trees (`migrate --from-sled` reads them).
    pub fn triage(&self) -> &TriageStore {
        &self.triage
    }
}

/// Runs sled's blocking calls off the async threads.
async fn blocking<T: Send + 'static, E: From<StoreError> + Send + 'static>(
    f: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, E> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|_| E::from(StoreError::FlusherGone))?
}

#[async_trait]
impl SharedState for SledShared {
    async fn record_failures(
        &self,
        repo: &str,
        check: &str,
        head_sha: &str,
        on_default_branch: bool,
        tests: &[String],
    ) -> Result<usize, StoreError> {
        let (t, repo, check, sha, tests) = (
            self.triage.clone(),
            repo.to_string(),
            check.to_string(),
            head_sha.to_string(),
            tests.to_vec(),
        );
        blocking(move || t.record_failures(&repo, &check, &sha, on_default_branch, &tests)).await
    }

    async fn record_check_passed(
        &self,
        repo: &str,
        check: &str,
        head_sha: &str,
    ) -> Result<usize, StoreError> {
        let (t, repo, check, sha) = (
            self.triage.clone(),
            repo.to_string(),
            check.to_string(),
            head_sha.to_string(),
        );
        blocking(move || t.record_check_passed(&repo, &check, &sha)).await
    }

    async fn record_default_branch_pass(
        &self,
        repo: &str,
        check: &str,
        head_sha: &str,
    ) -> Result<usize, StoreError> {
        let (t, repo, check, sha) = (
            self.triage.clone(),
            repo.to_string(),
            check.to_string(),
            head_sha.to_string(),
        );
        blocking(move || t.record_default_branch_pass(&repo, &check, &sha)).await
    }

    async fn histories(
        &self,
        repo: &str,
        tests: &[String],
    ) -> Result<Vec<TestOutcome>, StoreError> {
        // Each test once, in the order asked, as PostgreSQL answers.
        let mut unique: Vec<String> = Vec::new();
        for t in tests {
            if !unique.contains(t) {
                unique.push(t.clone());
            }
        }
        let (t, repo) = (self.triage.clone(), repo.to_string());
        blocking(move || t.histories(&repo, &unique)).await
    }

    async fn reruns(&self, repo: &str, sha: &str, check: &str) -> Result<u32, StoreError> {
        self.triage.reruns(repo, sha, check)
    }

    async fn take_rerun(
        &self,
        repo: &str,
        sha: &str,
        check: &str,
        max: u32,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let (t, repo, sha, check) = (
            self.triage.clone(),
            repo.to_string(),
            sha.to_string(),
            check.to_string(),
        );
        blocking(move || t.take_rerun(&repo, &sha, &check, max, now)).await
    }

    async fn apply_installation(
        &self,
        id: u64,
        account: Option<&str>,
        deleted: bool,
        added: &[String],
        removed: &[String],
    ) -> Result<Option<Installation>, StoreError> {
        let (i, account, added, removed) = (
            self.installations.clone(),
            account.map(str::to_string),
            added.to_vec(),
            removed.to_vec(),
        );
        blocking(move || i.apply(id, account.as_deref(), deleted, &added, &removed)).await
    }

    async fn installation(&self, id: u64) -> Result<Option<Installation>, StoreError> {
        self.installations.get(id)
    }

    async fn installations(&self) -> Result<Vec<Installation>, StoreError> {
        self.installations.all()
    }

    async fn store_app(&self, app: &StoredApp) -> Result<(), CredentialsError> {
        let (dir, app) = (self.credentials_dir()?, app.clone());
        blocking(move || crate::setup::store_app(&dir, &app).map_err(CredentialsError::from)).await
    }

    async fn store_first_app(&self, app: &StoredApp) -> Result<FirstApp, CredentialsError> {
        let (dir, app) = (self.credentials_dir()?, app.clone());
        blocking(move || crate::setup::store_first_app(&dir, &app).map_err(CredentialsError::from))
            .await
    }

    async fn load_app(&self) -> Result<Option<StoredApp>, CredentialsError> {
        let dir = self.credentials_dir()?;
        blocking(move || crate::setup::load_stored_app(&dir).map_err(CredentialsError::from)).await
    }

    async fn redelivery_mark(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        match self.marks.get(REDELIVERY_MARK)? {
            Some(v) => Ok(Some(super::decode(REDELIVERY_MARK, &v)?)),
            None => Ok(None),
        }
    }

    async fn set_redelivery_mark(&self, at: DateTime<Utc>) -> Result<(), StoreError> {
        self.marks.fetch_and_update(REDELIVERY_MARK, |old| {
            let old: Option<DateTime<Utc>> = old.and_then(|v| serde_json::from_slice(v).ok());
            let newest = old.map_or(at, |o| o.max(at));
            Some(serde_json::to_vec(&newest).expect("a time serialises"))
        })?;
        Ok(())
    }

    async fn reply_asked(&self, repo: &str, comment_id: u64) -> Result<bool, StoreError> {
        Ok(self
            .replies
            .contains_key(reply_key(repo, comment_id).as_bytes())?)
    }

    async fn mark_reply_asked(&self, repo: &str, comment_id: u64) -> Result<(), StoreError> {
        let replies = self.replies.clone();
        let key = reply_key(repo, comment_id);
        // The value is when it was asked for (RFC 3339), for the sweep.
        let at = Utc::now().to_rfc3339();
        blocking(move || {
            replies.insert(key.as_bytes(), at.as_bytes())?;
            replies.flush()?;
            Ok(())
        })
        .await
    }

    async fn prune_reply_marks(&self, cutoff: DateTime<Utc>) -> Result<usize, StoreError> {
        let replies = self.replies.clone();
        blocking(move || {
            let now = Utc::now().to_rfc3339();
            let mut gone = 0;
            for kv in replies.iter() {
                let (k, v) = kv?;
                let at = std::str::from_utf8(&v)
                    .ok()
                    .and_then(|t| DateTime::parse_from_rfc3339(t).ok());
                match at {
                    Some(at) if at < cutoff => {
                        replies.remove(&k)?;
                        gone += 1;
                    }
                    Some(_) => {}
                    // Marked by a version that kept no time: from now on it has one, and it
                    // goes one retention later.
                    None => {
                        replies.insert(&k, now.as_bytes())?;
                    }
                }
            }
            replies.flush()?;
            Ok(gone)
        })
        .await
    }

    async fn put_once(
        &self,
        kind: OnceKind,
        token: &TokenDigest,
        now: DateTime<Utc>,
        expires: DateTime<Utc>,
        cap: usize,
    ) -> Result<(), StoreError> {
        let (tree, token) = (self.once.clone(), token.clone());
        blocking(move || web_state::sled_put_once(&tree, kind, &token, now, expires, cap)).await
    }

    async fn take_once(
        &self,
        kind: OnceKind,
        token: &TokenDigest,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let (tree, token) = (self.once.clone(), token.clone());
        blocking(move || web_state::sled_take_once(&tree, kind, &token, now)).await
    }

    async fn put_session(
        &self,
        id: &TokenDigest,
        session: &StoredSession,
        now: DateTime<Utc>,
        cap: usize,
    ) -> Result<(), StoreError> {
        let (tree, id, session) = (self.sessions.clone(), id.clone(), session.clone());
        blocking(move || web_state::sled_put_session(&tree, &id, &session, now, cap)).await
    }

    async fn session(
        &self,
        id: &TokenDigest,
        now: DateTime<Utc>,
    ) -> Result<Option<StoredSession>, StoreError> {
        web_state::sled_session(&self.sessions, id, now)
    }

    async fn end_session(&self, id: &TokenDigest) -> Result<(), StoreError> {
        let (tree, id) = (self.sessions.clone(), id.clone());
        blocking(move || web_state::sled_end_session(&tree, &id)).await
    }
}

/// The `reply_intents` tree's key, as the version that kept it beside the runs wrote it.
fn reply_key(repo: &str, comment_id: u64) -> String {
    format!("{repo}#{comment_id}")
}

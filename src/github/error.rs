//! The typed errors of every GitHub call.
//!
//! Callers branch on these variants (a missing file is not a failure, an expired log becomes a
//! comment, a non-fast-forward ref update means "someone pushed first"), so each outcome that
//! changes what the caller does has its own variant. Messages carry GitHub's `message` field at
//! most — never a token, a key or a request body.

use std::time::Duration;

/// What went wrong talking to GitHub.
#[derive(Debug, thiserror::Error)]
pub enum GitHubError {
    /// 404: the resource does not exist, or the installation cannot see it.
    #[error("not found on GitHub")]
    NotFound,
    /// 410: the resource existed but is gone (expired job logs, a deleted issue).
    #[error("gone from GitHub (410)")]
    Gone,
    /// 401: the token or JWT was rejected (expired, revoked, wrong key).
    #[error("GitHub rejected the credentials (401): {message}")]
    Unauthorized { message: String },
    /// 403 that is not a rate limit (neither by its headers nor by its message): the App lacks
    /// a permission, the branch is protected, ...
    #[error("GitHub refused the request (403): {message}")]
    Forbidden { message: String },
    /// Rate limited (primary or secondary: a 429, or a 403 whose headers or message say so)
    /// and the wait does not fit in the retry budget — GitHub's `Retry-After` or reset time,
    /// else at least `RetryPolicy::rate_limit_min_wait`. `retry_after` is how long to wait
    /// before trying again: what GitHub asked for, or that minimum when it named no time (the
    /// job queue waits it out instead of spending attempts).
    #[error("rate limited by GitHub (retry after {retry_after:?})")]
    RateLimited { retry_after: Option<Duration> },
    /// 422 `Update is not a fast forward`: the branch moved since we read it.
    #[error("ref update is not a fast-forward: {message}")]
    NotFastForward { message: String },
    /// 409: a conflicting state (empty repository, merge conflict, ...).
    #[error("conflict (409): {message}")]
    Conflict { message: String },
    /// 422 other than the fast-forward case: validation failed (comment too long, ref exists, ...).
    #[error("GitHub rejected the request as invalid (422): {message}")]
    Unprocessable { message: String },
    /// 5xx that persisted through every retry, or the first 5xx of a call that creates
    /// something (not repeated: it may have landed, so look for the object before creating it
    /// again, as after `Transport { may_have_landed: true }`).
    #[error("GitHub server error {status}")]
    Server { status: u16 },
    /// Any other unexpected status.
    #[error("unexpected HTTP status {status} from GitHub: {message}")]
    UnexpectedStatus { status: u16, message: String },
    /// The request did not complete. `may_have_landed` is true when a non-idempotent request
    /// (a POST) may have reached GitHub before the failure — the caller must look for the
    /// created object (by marker / external id) before creating it again.
    #[error("transport error talking to GitHub (may have landed: {may_have_landed}): {message}")]
    Transport {
        message: String,
        may_have_landed: bool,
    },
    /// The answer did not have the shape we expect.
    #[error("could not decode GitHub's answer: {0}")]
    Decode(String),
    /// A download was larger than the limit we accept.
    #[error("download exceeds the {limit}-byte limit")]
    TooLarge { limit: u64 },
    /// We refused to send a request GitHub would reject (e.g. more than 50 annotations).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// Minting the App JWT failed (bad private key, ...).
    #[error("GitHub App authentication failed: {0}")]
    Auth(String),
    /// Local I/O while saving a download.
    #[error("local I/O error: {0}")]
    Io(#[from] std::io::Error),
}

impl GitHubError {
    /// True for errors a later attempt may not hit (server trouble, rate limit, transport).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. } | Self::Server { .. } | Self::Transport { .. }
        )
    }
}

/// Shorthand used across the GitHub module.
pub type Result<T, E = GitHubError> = std::result::Result<T, E>;

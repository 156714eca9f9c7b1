//! The one HTTP path every GitHub call takes: URL building under the configured base URL,
//! standard headers, bounded retries with backoff, rate-limit handling, status → error mapping
//! and `Link` pagination.
//!
//! Redirects GitHub gives for moved resources (301 for reads, 307/308 for any method, e.g.
//! after a repository rename or transfer) are followed here, on the API's own origin only and a
//! bounded number of times; any other redirect goes back to the caller (the log and tarball
//! downloads follow their 302 themselves, without the token).
//!
//! It must never: follow a redirect to another origin, let reqwest follow one by itself, send a
//! token to a host other than the API's, turn a write into a read on a 301, repeat a creating
//! call that may have landed (after a timeout or a 5xx), wait longer in total than the retry
//! budget, or put a token, a request body or a redirect's query in an error or a log line.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::{
    ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue, IF_NONE_MATCH, LOCATION, RETRY_AFTER,
};
use reqwest::{Method, StatusCode, Url};
use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;

use super::error::{GitHubError, Result};

/// GitHub's REST API version we are written against.
pub const API_VERSION: &str = "2022-11-28";
/// Sent on every request.
pub const USER_AGENT: &str = "ci-medic";
/// Redirects followed for one call before it fails; GitHub moves a resource once.
const MAX_REDIRECTS: u32 = 5;

/// How hard to retry transient failures (5xx and timeouts of calls safe to repeat, rate limits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Upper bound on the sum of all waits of one call, rate-limit waits included. A rate
    /// limit asking for longer than what is left fails at once with `RateLimited`.
    pub max_total_wait: Duration,
    /// First backoff; doubled each retry.
    pub initial_backoff: Duration,
    /// Cap of one backoff step.
    pub max_backoff: Duration,
    /// Wait after a rate limit (a 429, or a 403 whose message says so) that names no time
    /// in `Retry-After` or `x-ratelimit-reset`. GitHub asks for at least a minute.
    pub rate_limit_min_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 5,
            max_total_wait: Duration::from_secs(90),
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(20),
            rate_limit_min_wait: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The jittered wait before retry `retry` ([`crate::backoff::Backoff`]).
    fn backoff(&self, retry: u32) -> Duration {
        crate::backoff::Backoff::new(self.initial_backoff, self.max_backoff).delay(retry)
    }
}

/// Settings of the GitHub client; the base URL always comes from configuration.
#[derive(Debug, Clone)]
pub struct GitHubClientConfig {
    /// `GITHUB_API_URL`: `https://api.github.com`, `https://ghe.example.com/api/v3`, or a local
    /// test server. A path prefix is kept.
    pub api_url: String,
    pub connect_timeout: Duration,
    /// Whole-request limit for JSON calls.
    pub request_timeout: Duration,
    /// Whole-request limit for log and tarball downloads.
    pub download_timeout: Duration,
    pub retry: RetryPolicy,
    /// Pagination stops with an error after this many pages (100 items each).
    pub max_pages: u32,
    /// Content-creating requests (POST, PATCH, PUT, DELETE) of one installation are sent one
    /// at a time, this long apart, as GitHub's best practices ask (about a second).
    pub write_interval: Duration,
}

impl GitHubClientConfig {
    /// Defaults for everything but the base URL.
    pub fn new(api_url: impl Into<String>) -> Self {
        Self {
            api_url: api_url.into(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            download_timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
            max_pages: 300,
            write_interval: Duration::from_secs(1),
        }
    }
}

/// How a request authenticates.
#[derive(Clone, Copy)]
pub(crate) enum Auth<'a> {
    /// No `Authorization` header (redirect targets, the manifest conversion).
    None,
    /// `Authorization: Bearer …` (installation token or App JWT).
    Bearer(&'a SecretString),
}

/// One request to make.
pub(crate) struct Call<'a> {
    pub method: Method,
    pub url: Url,
    pub body: Option<&'a serde_json::Value>,
    /// False for calls that create or append something (comments, check runs, refs,
    /// annotations): a transport failure after the request may have been written, or a 5xx,
    /// is then returned, never retried. Rate limits are still waited out: GitHub refused those.
    pub idempotent: bool,
    pub timeout: Duration,
    /// The `ETag` of the last answer for this URL, for a conditional `GET` (`super::etag`).
    pub if_none_match: Option<HeaderValue>,
}

/// The shared HTTP machinery (one connection pool for the whole process).
#[derive(Debug)]
pub(crate) struct Transport {
    client: reqwest::Client,
    base: Url,
    pub(crate) config: GitHubClientConfig,
    /// The `ETag`s and bodies of earlier `GET`s, for conditional requests.
    pub(crate) etags: super::etag::EtagCache,
}

impl Transport {
    pub(crate) fn new(config: GitHubClientConfig) -> Result<Self> {
        let base = Url::parse(config.api_url.trim()).map_err(|e| {
            GitHubError::InvalidRequest(format!("GITHUB_API_URL {:?}: {e}", config.api_url))
        })?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(GitHubError::InvalidRequest(format!(
                "GITHUB_API_URL {:?} is not an http(s) base URL",
                config.api_url
            )));
        }
        let mut headers = HeaderMap::new();
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/vnd.github+json"),
        );
        headers.insert(
            "X-GitHub-Api-Version",
            HeaderValue::from_static(API_VERSION),
        );
        let client = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .default_headers(headers)
            .connect_timeout(config.connect_timeout)
            // Redirects are followed by hand (`execute`, `RestClient::download`) so the token
            // never travels to another host.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| GitHubError::InvalidRequest(format!("building HTTP client: {e}")))?;
        Ok(Self {
            client,
            base,
            config,
            etags: super::etag::EtagCache::default(),
        })
    }

    /// `base + /seg/seg/...`. Each part may hold `/` (file paths, ref names); every piece is
    /// percent-encoded, and empty, `.` and `..` pieces are refused so a path from a log can
    /// never climb out of the endpoint.
    pub(crate) fn url(&self, parts: &[&str]) -> Result<Url> {
        let mut url = self.base.clone();
        {
            let mut segs = url
                .path_segments_mut()
                .map_err(|()| GitHubError::InvalidRequest("base URL cannot be a base".into()))?;
            segs.pop_if_empty();
            for part in parts {
                for piece in part.split('/') {
                    if piece.is_empty() || piece == "." || piece == ".." {
                        return Err(GitHubError::InvalidRequest(format!(
                            "bad path component in {part:?}"
                        )));
                    }
                    segs.push(piece);
                }
            }
        }
        Ok(url)
    }

    /// True when `url` is on the API's own origin (the only place a token may go).
    pub(crate) fn same_origin(&self, url: &Url) -> bool {
        url.scheme() == self.base.scheme()
            && url.host_str() == self.base.host_str()
            && url.port_or_known_default() == self.base.port_or_known_default()
    }

    pub(crate) fn json_call<'a>(
        &self,
        method: Method,
        url: Url,
        body: Option<&'a serde_json::Value>,
    ) -> Call<'a> {
        // Everything but POST is idempotent here: PATCHes set absolute values.
        let idempotent = method != Method::POST;
        Call {
            method,
            url,
            body,
            idempotent,
            timeout: self.config.request_timeout,
            if_none_match: None,
        }
    }

    /// Sends `call`, retrying within the policy and following the redirects
    /// [`Self::redirect_target`] accepts. Returns the response when it is 2xx or a redirect it
    /// does not follow; any other status becomes a typed error.
    pub(crate) async fn execute(
        &self,
        call: &Call<'_>,
        auth: Auth<'_>,
    ) -> Result<reqwest::Response> {
        let policy = &self.config.retry;
        let mut retries = 0u32;
        let mut waited = Duration::ZERO;
        let mut url = call.url.clone();
        let mut redirects = 0u32;
        loop {
            let mut req = self
                .client
                .request(call.method.clone(), url.clone())
                .timeout(call.timeout);
            if let Auth::Bearer(token) = auth {
                let mut value = HeaderValue::from_str(&format!("Bearer {}", token.expose_secret()))
                    .map_err(|_| GitHubError::Auth("token is not a valid header value".into()))?;
                value.set_sensitive(true);
                req = req.header(AUTHORIZATION, value);
            }
            if let Some(body) = call.body {
                req = req.json(body);
            }
            if let Some(tag) = &call.if_none_match {
                req = req.header(IF_NONE_MATCH, tag.clone());
            }
            let (err, wait) = match req.send().await {
                Err(e) => {
                    // A connect failure proves nothing was sent; anything later may have landed.
                    let may_have_landed = !e.is_connect();
                    let err = GitHubError::Transport {
                        message: without_url(&e),
                        may_have_landed: may_have_landed && !call.idempotent,
                    };
                    if may_have_landed && !call.idempotent {
                        return Err(err);
                    }
                    (err, policy.backoff(retries))
                }
                Ok(resp) => {
                    let status = resp.status();
                    if status.is_success() {
                        return Ok(resp);
                    }
                    if status.is_redirection() {
                        let Some(target) = self.redirect_target(&call.method, &resp) else {
                            return Ok(resp);
                        };
                        redirects += 1;
                        if redirects > MAX_REDIRECTS {
                            return Err(GitHubError::UnexpectedStatus {
                                status: status.as_u16(),
                                message: format!("more than {MAX_REDIRECTS} redirects"),
                            });
                        }
                        tracing::debug!(
                            method = %call.method,
                            from = url.path(),
                            to = target.path(),
                            status = status.as_u16(),
                            "following a GitHub redirect"
                        );
                        // A redirect is not a failure: it costs no retry and no wait.
                        url = target;
                        continue;
                    }
                    match classify_failure(resp).await {
                        Failure::Final(err) => return Err(err),
                        Failure::RateLimited { asked } => {
                            // No time given: GitHub says to wait at least a minute.
                            let wait = asked.unwrap_or_else(|| {
                                policy.rate_limit_min_wait.max(policy.backoff(retries))
                            });
                            let err = GitHubError::RateLimited {
                                retry_after: Some(wait),
                            };
                            if waited + wait > policy.max_total_wait {
                                return Err(err);
                            }
                            (err, wait)
                        }
                        Failure::Server { status } => {
                            let err = GitHubError::Server { status };
                            // A 5xx does not say the request was refused: GitHub may have
                            // stored the comment or check run before failing. Repeating a
                            // creating call here would duplicate it; the job layer retries the
                            // whole job instead, and that looks for the object (by marker or
                            // external id) first.
                            if !call.idempotent {
                                return Err(err);
                            }
                            (err, policy.backoff(retries))
                        }
                    }
                }
            };
            if retries >= policy.max_retries || waited + wait > policy.max_total_wait {
                return Err(err);
            }
            tracing::debug!(
                method = %call.method,
                path = url.path(),
                retry = retries + 1,
                wait_ms = wait.as_millis() as u64,
                error = %err,
                "retrying GitHub call"
            );
            tokio::time::sleep(wait).await;
            waited += wait;
            retries += 1;
        }
    }

    /// Where to send `method` again after the redirect `resp`, when it is one we follow: 301
    /// for `GET`/`HEAD`, 307 or 308 for any method (same method, same body, as they require),
    /// to a `Location` on the API's own origin, so the token may go along. `None` for the
    /// rest: 302/303 (the downloads' signed URLs), another origin, a 301 to a write.
    fn redirect_target(&self, method: &Method, resp: &reqwest::Response) -> Option<Url> {
        let follow = match resp.status() {
            StatusCode::MOVED_PERMANENTLY => matches!(*method, Method::GET | Method::HEAD),
            StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT => true,
            _ => false,
        };
        if !follow {
            return None;
        }
        let location = resp.headers().get(LOCATION)?.to_str().ok()?;
        let target = resp.url().join(location).ok()?;
        self.same_origin(&target).then_some(target)
    }

    /// `execute` + decode the JSON body.
    pub(crate) async fn json<T: DeserializeOwned>(
        &self,
        call: &Call<'_>,
        auth: Auth<'_>,
    ) -> Result<T> {
        let resp = self.execute(call, auth).await?;
        decode_json(resp).await
    }

    /// Follows `Link: rel="next"` from `first` and gathers every item. `field` names the array
    /// inside an object page (`check_runs`), `None` for array pages. The next URL is absolute;
    /// it must stay on the API origin (GHES included) or we stop rather than leak the token.
    pub(crate) async fn paginate<T: DeserializeOwned>(
        &self,
        first: Url,
        field: Option<&str>,
        auth: Auth<'_>,
    ) -> Result<Vec<T>> {
        let mut items = Vec::new();
        let mut next = Some(first);
        let mut pages = 0u32;
        while let Some(url) = next.take() {
            pages += 1;
            if pages > self.config.max_pages {
                return Err(GitHubError::Decode(format!(
                    "more than {} pages at {}",
                    self.config.max_pages,
                    url.path()
                )));
            }
            let fetched = self
                .etags
                .get(&url, |tag| {
                    let mut call = self.json_call(Method::GET, url.clone(), None);
                    call.if_none_match = tag;
                    async move { self.execute(&call, auth).await }
                })
                .await?;
            next = match fetched.link.as_deref() {
                Some(link) => match next_link(link) {
                    Some(href) => {
                        let url = fetched
                            .final_url
                            .join(&href)
                            .map_err(|e| GitHubError::Decode(format!("bad Link URL: {e}")))?;
                        if !self.same_origin(&url) {
                            return Err(GitHubError::Decode(format!(
                                "pagination points off the API host ({})",
                                url.host_str().unwrap_or("?")
                            )));
                        }
                        Some(url)
                    }
                    None => None,
                },
                None => None,
            };
            let page: serde_json::Value = serde_json::from_slice(&fetched.body)
                .map_err(|e| GitHubError::Decode(e.to_string()))?;
            let array = match field {
                None => page,
                Some(f) => match page {
                    serde_json::Value::Object(mut map) => map
                        .remove(f)
                        .ok_or_else(|| GitHubError::Decode(format!("page has no `{f}`")))?,
                    _ => return Err(GitHubError::Decode("page is not an object".into())),
                },
            };
            let batch: Vec<T> =
                serde_json::from_value(array).map_err(|e| GitHubError::Decode(e.to_string()))?;
            items.extend(batch);
        }
        Ok(items)
    }
}

/// Decodes a JSON body, reporting the field path on a mismatch. A redirect `execute` did not
/// follow has no answer in it: that is an error, not a body to decode.
pub(crate) async fn decode_json<T: DeserializeOwned>(resp: reqwest::Response) -> Result<T> {
    let status = resp.status();
    if status.is_redirection() {
        // Never the Location: it may be a signed URL.
        return Err(GitHubError::UnexpectedStatus {
            status: status.as_u16(),
            message: "redirect not followed (only 301 for reads, 307 and 308 on the API origin)"
                .into(),
        });
    }
    let bytes = resp.bytes().await.map_err(|e| GitHubError::Transport {
        message: without_url(&e),
        may_have_landed: false,
    })?;
    serde_json::from_slice(&bytes).map_err(|e| GitHubError::Decode(e.to_string()))
}

/// What a non-success answer means for the retry loop.
enum Failure {
    /// A primary or secondary rate limit; `asked` is the wait GitHub named, if any.
    RateLimited { asked: Option<Duration> },
    /// A 5xx: retried only when the call is safe to repeat.
    Server { status: u16 },
    /// Anything else: returned as it is.
    Final(GitHubError),
}

/// Sorts a non-success answer. A 403 is a rate limit when its headers say so or, since
/// secondary limits often come with no header at all, when its message does.
async fn classify_failure(resp: reqwest::Response) -> Failure {
    let status = resp.status();
    if let Some(asked) = rate_limit_wait(status, resp.headers()) {
        return Failure::RateLimited { asked };
    }
    if status.is_server_error() {
        return Failure::Server {
            status: status.as_u16(),
        };
    }
    if status == StatusCode::FORBIDDEN {
        let message = error_message(resp).await;
        if mentions_rate_limit(&message) {
            return Failure::RateLimited { asked: None };
        }
        return Failure::Final(GitHubError::Forbidden { message });
    }
    Failure::Final(error_for_status(resp).await)
}

/// True for GitHub's rate-limit wording: "You have exceeded a secondary rate limit", "API rate
/// limit exceeded", and the older "You have triggered an abuse detection mechanism".
fn mentions_rate_limit(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("rate limit") || lower.contains("abuse detection")
}

/// `Some(wait)` when the headers mark a rate limit (primary or secondary): 429, or 403 with
/// `Retry-After` or `x-ratelimit-remaining: 0`. The inner `Option` is GitHub's requested wait:
/// `Retry-After`, else the time until `x-ratelimit-reset` when the quota is spent.
fn rate_limit_wait(status: StatusCode, headers: &HeaderMap) -> Option<Option<Duration>> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let retry_after = header(RETRY_AFTER.as_str())
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_secs);
    let exhausted = header("x-ratelimit-remaining") == Some("0");
    let reset_wait = || {
        let reset = header("x-ratelimit-reset")?.parse::<u64>().ok()?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
        // One extra second: the reset instant is truncated to whole seconds.
        Some(Duration::from_secs(reset.saturating_sub(now) + 1))
    };
    let limited = status == StatusCode::TOO_MANY_REQUESTS
        || (status == StatusCode::FORBIDDEN && (retry_after.is_some() || exhausted));
    if !limited {
        return None;
    }
    Some(retry_after.or_else(|| if exhausted { reset_wait() } else { None }))
}

/// Maps a non-success, non-retryable status to its typed error, with GitHub's `message`.
pub(crate) async fn error_for_status(resp: reqwest::Response) -> GitHubError {
    let status = resp.status();
    let message = error_message(resp).await;
    match status.as_u16() {
        401 => GitHubError::Unauthorized { message },
        403 => GitHubError::Forbidden { message },
        404 => GitHubError::NotFound,
        409 => GitHubError::Conflict { message },
        410 => GitHubError::Gone,
        422 => {
            let lower = message.to_ascii_lowercase();
            if lower.contains("not a fast forward") || lower.contains("not a fast-forward") {
                GitHubError::NotFastForward { message }
            } else {
                GitHubError::Unprocessable { message }
            }
        }
        s if status.is_server_error() => GitHubError::Server { status: s },
        s => GitHubError::UnexpectedStatus { status: s, message },
    }
}

/// GitHub's `message` (plus the first validation error's `message`/`code`), bounded.
async fn error_message(mut resp: reqwest::Response) -> String {
    const LIMIT: usize = 16 * 1024;
    let mut body = Vec::new();
    while body.len() < LIMIT {
        match resp.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body.truncate(LIMIT);
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return String::new();
    };
    let mut message = v["message"].as_str().unwrap_or_default().to_owned();
    if let Some(first) = v["errors"].get(0) {
        let detail = first["message"]
            .as_str()
            .or_else(|| first["code"].as_str())
            .or_else(|| first.as_str());
        if let Some(detail) = detail {
            message = format!("{message}: {detail}");
        }
    }
    message.chars().take(500).collect()
}

/// reqwest errors print the URL, and signed log URLs carry credentials in their query.
pub(crate) fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connect"
    } else if e.is_body() || e.is_decode() {
        "body"
    } else {
        "request"
    };
    let mut source = std::error::Error::source(e);
    let mut detail = String::new();
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    if detail.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}: {detail}")
    }
}

/// The `rel="next"` target of a `Link` header (RFC 8288), if any.
pub(crate) fn next_link(header: &str) -> Option<String> {
    let mut rest = header;
    loop {
        let start = rest.find('<')?;
        let end = start + rest[start..].find('>')?;
        let target = &rest[start + 1..end];
        let after = &rest[end + 1..];
        // Parameters run until the next link value.
        let params_end = after.find('<').unwrap_or(after.len());
        let params = &after[..params_end];
        let is_next = params.split(';').any(|p| {
            let p = p.trim().trim_end_matches(',').trim();
            let Some((k, v)) = p.split_once('=') else {
                return false;
            };
            k.trim().eq_ignore_ascii_case("rel")
                && v.trim()
                    .trim_matches('"')
                    .split_ascii_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("next"))
        });
        if is_next {
            return Some(target.to_owned());
        }
        rest = &after[params_end..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_link_finds_rel_next_anywhere() {
        let h = r#"<https://api.github.com/repositories/1/issues?page=1>; rel="prev", <https://api.github.com/repositories/1/issues?page=3>; rel="next", <https://api.github.com/repositories/1/issues?page=5>; rel="last""#;
        assert_eq!(
            next_link(h).as_deref(),
            Some("https://api.github.com/repositories/1/issues?page=3")
        );
        assert_eq!(next_link(r#"<https://x/a?page=1>; rel="first""#), None);
        assert_eq!(next_link(""), None);
    }

    #[test]
    fn url_keeps_base_path_and_refuses_traversal() {
        let t = Transport::new(GitHubClientConfig::new("https://ghe.example.com/api/v3/")).unwrap();
        let u = t
            .url(&["repos", "o", "r", "contents", "src/a b.rs"])
            .unwrap();
        assert_eq!(
            u.as_str(),
            "https://ghe.example.com/api/v3/repos/o/r/contents/src/a%20b.rs"
        );
        let t = Transport::new(GitHubClientConfig::new("https://ghe.example.com/api/v3")).unwrap();
        assert_eq!(
            t.url(&["repos", "o", "r", "git", "ref", "heads/feat/x#1"])
                .unwrap()
                .as_str(),
            "https://ghe.example.com/api/v3/repos/o/r/git/ref/heads/feat/x%231"
        );
        assert!(
            t.url(&["repos", "o", "r", "contents", "../secret"])
                .is_err()
        );
        assert!(t.url(&["repos", "o", "r", "contents", "a//b"]).is_err());
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let p = RetryPolicy {
            max_retries: 10,
            max_total_wait: Duration::from_secs(100),
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(350),
            rate_limit_min_wait: Duration::from_secs(60),
        };
        for (retry, most) in [(0, 100), (1, 200), (2, 350), (40, 350)] {
            let most = Duration::from_millis(most);
            let d = p.backoff(retry);
            assert!(d <= most && d >= most / 2, "retry {retry}: {d:?}");
        }
    }

    #[test]
    fn rate_limit_wording_is_recognised() {
        for m in [
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            "API rate limit exceeded for installation ID 1234.",
            "You have triggered an abuse detection mechanism. Please wait a few minutes before you try again.",
        ] {
            assert!(mentions_rate_limit(m), "{m}");
        }
        for m in [
            "Resource not accessible by integration",
            "Must have admin rights to Repository.",
            "",
        ] {
            assert!(!mentions_rate_limit(m), "{m}");
        }
    }

    #[test]
    fn rate_limit_detection() {
        let mut h = HeaderMap::new();
        assert_eq!(rate_limit_wait(StatusCode::FORBIDDEN, &h), None);
        assert_eq!(
            rate_limit_wait(StatusCode::TOO_MANY_REQUESTS, &h),
            Some(None)
        );
        h.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(
            rate_limit_wait(StatusCode::FORBIDDEN, &h),
            Some(Some(Duration::from_secs(7)))
        );
        let mut h = HeaderMap::new();
        h.insert("x-ratelimit-remaining", HeaderValue::from_static("0"));
        let reset = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 30;
        h.insert("x-ratelimit-reset", HeaderValue::from(reset));
        let wait = rate_limit_wait(StatusCode::FORBIDDEN, &h).unwrap().unwrap();
        assert!(wait >= Duration::from_secs(30) && wait <= Duration::from_secs(31));
    }
}

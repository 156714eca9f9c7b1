//! Conditional requests: the client remembers the `ETag` of each `GET` it made and sends it as
//! `If-None-Match` when it reads the same URL again (a pull request read by the analysis and
//! again by the approval, a list polled). GitHub answers `304 Not Modified` without a body
//! when nothing changed, and such an answer is not counted against the rate limit; the body
//! kept from the first answer is used instead.
//!
//! Bounded: at most [`MAX_ENTRIES`] URLs, bodies up to [`MAX_BODY`] bytes, the oldest
//! forgotten first. Must never: serve a kept body without GitHub's 304 for it, keep a body
//! without its `ETag`, or key anything by more than the URL (the URL names the repository,
//! and a repository belongs to one installation).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::Mutex;

use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::Url;
use reqwest::header::{ETAG, HeaderValue, LINK};

use super::error::{GitHubError, Result};
use super::http::without_url;

/// URLs remembered.
pub const MAX_ENTRIES: usize = 512;
/// Larger bodies are not kept (a large list is re-read whole).
pub const MAX_BODY: usize = 1024 * 1024;

#[derive(Clone)]
struct Entry {
    etag: HeaderValue,
    body: Bytes,
    link: Option<String>,
    final_url: Url,
}

/// What a conditional `GET` produced: the body (fresh or kept), the `Link` header that came
/// with it and the URL that answered (after redirects), for resolving that link.
pub struct Fetched {
    pub body: Bytes,
    pub link: Option<String>,
    pub final_url: Url,
}

#[derive(Default)]
pub struct EtagCache {
    inner: Mutex<(HashMap<String, Entry>, VecDeque<String>)>,
}

impl std::fmt::Debug for EtagCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.inner.lock().map(|g| g.0.len()).unwrap_or(0);
        f.debug_struct("EtagCache").field("entries", &n).finish()
    }
}

impl EtagCache {
    fn kept(&self, url: &Url) -> Option<Entry> {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.0.get(url.as_str()).cloned()
    }

    fn put(&self, url: &Url, entry: Entry) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (map, order) = &mut *g;
        let key = url.as_str().to_string();
        if map.insert(key.clone(), entry).is_none() {
            order.push_back(key);
        }
        while map.len() > MAX_ENTRIES {
            match order.pop_front() {
                Some(old) => {
                    map.remove(&old);
                }
                None => break,
            }
        }
    }

    fn forget(&self, url: &Url) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.0.remove(url.as_str());
    }

    /// GETs `url` through `send`, which is given the `If-None-Match` value to send (if any) and
    /// returns the answer (2xx, or the 304 the transport hands back as it is).
    pub async fn get<F, Fut>(&self, url: &Url, send: F) -> Result<Fetched>
    where
        F: FnOnce(Option<HeaderValue>) -> Fut,
        Fut: Future<Output = Result<reqwest::Response>>,
    {
        let kept = self.kept(url);
        let resp = send(kept.as_ref().map(|e| e.etag.clone())).await?;
        if resp.status() == StatusCode::NOT_MODIFIED {
            return match kept {
                Some(e) => Ok(Fetched {
                    body: e.body,
                    link: e.link,
                    final_url: e.final_url,
                }),
                // A 304 to a request without a validator: GitHub never sends one.
                None => Err(GitHubError::UnexpectedStatus {
                    status: 304,
                    message: "304 Not Modified to an unconditional request".into(),
                }),
            };
        }
        if resp.status().is_redirection() {
            // Never the Location: it may be a signed URL.
            return Err(GitHubError::UnexpectedStatus {
                status: resp.status().as_u16(),
                message:
                    "redirect not followed (only 301 for reads, 307 and 308 on the API origin)"
                        .into(),
            });
        }
        let etag = resp.headers().get(ETAG).cloned();
        let link = resp
            .headers()
            .get(LINK)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let final_url = resp.url().clone();
        let body = resp.bytes().await.map_err(|e| GitHubError::Transport {
            message: without_url(&e),
            may_have_landed: false,
        })?;
        match etag {
            Some(etag) if body.len() <= MAX_BODY => self.put(
                url,
                Entry {
                    etag,
                    body: body.clone(),
                    link: link.clone(),
                    final_url: final_url.clone(),
                },
            ),
            _ => self.forget(url),
        }
        Ok(Fetched {
            body,
            link,
            final_url,
        })
    }
}

//! Conditional requests: the client remembers the `ETag` of each `GET` it made and sends it as
//! `If-None-Match` when it reads the same URL again (a pull request read by the analysis and
//! again by the approval, a list polled). GitHub answers `304 Not Modified` without a body
//! when nothing changed, and such an answer is not counted against the rate limit; the body
//! kept from the first answer is used instead.
//!
//! Bounded: at most [`MAX_ENTRIES`] URLs and [`MAX_TOTAL`] bytes of bodies, each up to
//! [`MAX_BODY`] bytes, the oldest forgotten first. Must never: serve a kept body without GitHub's 304 for it, keep a body
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
/// All kept bodies together.
pub const MAX_TOTAL: usize = 32 * 1024 * 1024;

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
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    map: HashMap<String, Entry>,
    /// Insertion order, oldest first.
    order: VecDeque<String>,
    /// Bytes of the bodies in `map`.
    bytes: usize,
}

impl std::fmt::Debug for EtagCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.inner.lock().map(|g| g.map.len()).unwrap_or(0);
        f.debug_struct("EtagCache").field("entries", &n).finish()
    }
}

impl EtagCache {
    fn kept(&self, url: &Url) -> Option<Entry> {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.map.get(url.as_str()).cloned()
    }

    fn put(&self, url: &Url, entry: Entry) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let g = &mut *g;
        let key = url.as_str().to_string();
        g.bytes += entry.body.len();
        match g.map.insert(key.clone(), entry) {
            Some(old) => g.bytes -= old.body.len(),
            None => g.order.push_back(key),
        }
        while g.map.len() > MAX_ENTRIES || g.bytes > MAX_TOTAL {
            let Some(oldest) = g.order.pop_front() else {
                break;
            };
            if let Some(e) = g.map.remove(&oldest) {
                g.bytes -= e.body.len();
            }
        }
    }

    fn forget(&self, url: &Url) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = g.map.remove(url.as_str()) {
            g.bytes -= e.body.len();
            g.order.retain(|k| k != url.as_str());
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: usize) -> Entry {
        Entry {
            etag: HeaderValue::from_static("W/\"x\""),
            body: Bytes::from(vec![b'a'; n]),
            link: None,
            final_url: Url::parse("https://api.github.com/x").unwrap(),
        }
    }

    fn url(i: usize) -> Url {
        Url::parse(&format!("https://api.github.com/repos/o/r/pulls/{i}")).unwrap()
    }

    #[test]
    fn the_oldest_are_forgotten_past_either_bound() {
        let c = EtagCache::default();
        for i in 0..MAX_ENTRIES + 10 {
            c.put(&url(i), entry(10));
        }
        assert!(c.kept(&url(0)).is_none());
        assert!(c.kept(&url(MAX_ENTRIES + 9)).is_some());
        assert_eq!(c.inner.lock().unwrap().map.len(), MAX_ENTRIES);

        let c = EtagCache::default();
        let big = MAX_TOTAL / 4 + 1;
        for i in 0..4 {
            c.put(&url(i), entry(big));
        }
        let g = c.inner.lock().unwrap();
        assert!(g.bytes <= MAX_TOTAL && g.map.len() == 3, "{}", g.bytes);
        assert!(!g.map.contains_key(url(0).as_str()));
        drop(g);
        // Replacing and forgetting keep the count of bytes right.
        c.put(&url(3), entry(5));
        c.forget(&url(2));
        assert_eq!(c.inner.lock().unwrap().bytes, big + 5);
    }
}

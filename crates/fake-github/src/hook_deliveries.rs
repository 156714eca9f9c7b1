//! The App's webhook delivery log, as GitHub keeps it: every attempt the fake made to deliver a
//! webhook — first deliveries and redeliveries, answered or not — with the status GitHub
//! records (`OK` for a 2xx, `Invalid HTTP Response: 503`, and `failed to connect to host` with
//! 502 when nothing answered). Served as `GET /app/hook/deliveries` (App JWT, newest first,
//! `per_page` up to 100, cursor pagination through `Link: rel="next"`), and
//! `POST /app/hook/deliveries/{id}/attempts` (202, then the event is sent again with its guid
//! and body, recorded as a new attempt with `redelivery: true`).
//!
//! It never holds the state lock across an `.await`: sends happen after the handler has
//! answered, from [`dispatch`].

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::server::{Resp, Shared, error};
use crate::state::State;

/// One delivery attempt, as `GET /app/hook/deliveries` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct HookAttempt {
    /// The attempt's own id (what a redelivery request names).
    pub id: u64,
    /// The event's GUID, the `X-GitHub-Delivery` header; shared by its redeliveries.
    pub guid: String,
    pub delivered_at: DateTime<Utc>,
    pub redelivery: bool,
    /// Seconds the attempt took.
    pub duration: f64,
    pub status: String,
    /// The app's HTTP status; 502 when it could not be reached, as GitHub records it.
    pub status_code: u16,
    pub event: String,
    pub action: Option<String>,
    pub installation_id: Option<u64>,
    pub repository_id: Option<u64>,
}

/// The log, and the redeliveries asked for and not yet sent.
#[derive(Debug, Default)]
pub struct HookLog {
    attempts: Vec<HookAttempt>,
    pending: Vec<String>,
}

/// GitHub's delivery ids are large (above 2^53 nowadays): clients must not hold them in an
/// `i32` or a float.
const FIRST_ATTEMPT_ID: u64 = 3_842_091_948_768_772_000;

impl HookLog {
    fn next_id(&self) -> u64 {
        self.attempts.last().map_or(FIRST_ATTEMPT_ID, |a| a.id + 1)
    }
}

/// Sends one delivery of `guid` to the configured webhook and records the attempt.
pub(crate) async fn send_logged(
    sh: &Arc<Shared>,
    guid: &str,
    event: &str,
    body: &[u8],
    redelivery: bool,
) -> Result<u16, crate::FakeError> {
    let (url, secret, app_id) = {
        let st = lock(sh);
        let (u, s) = st.webhook.clone().ok_or(crate::FakeError::NoWebhook)?;
        (u, s, st.app_id)
    };
    let started = std::time::Instant::now();
    let result = crate::webhook::send(&sh.http, &url, &secret, app_id, event, guid, body).await;
    let duration = (started.elapsed().as_secs_f64() * 100.0).round() / 100.0;
    let (status, status_code) = match &result {
        Ok(code) if (200..300).contains(code) => ("OK".to_string(), *code),
        Ok(code) => (format!("Invalid HTTP Response: {code}"), *code),
        Err(e) if e.is_timeout() => ("timed out".to_string(), 504),
        Err(_) => ("failed to connect to host".to_string(), 502),
    };
    let payload: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let mut st = lock(sh);
    let attempt = HookAttempt {
        id: st.hook_log.next_id(),
        guid: guid.to_string(),
        delivered_at: st.now(),
        redelivery,
        duration,
        status,
        status_code,
        event: event.to_string(),
        action: payload["action"].as_str().map(str::to_string),
        installation_id: payload["installation"]["id"].as_u64(),
        repository_id: payload["repository"]["id"].as_u64(),
    };
    st.hook_log.attempts.push(attempt);
    Ok(result?)
}

fn lock(sh: &Shared) -> std::sync::MutexGuard<'_, State> {
    match sh.state.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

fn item_json(a: &HookAttempt) -> Value {
    json!({
        "id": a.id,
        "guid": a.guid,
        "delivered_at": a.delivered_at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "redelivery": a.redelivery,
        "duration": a.duration,
        "status": a.status,
        "status_code": a.status_code,
        "event": a.event,
        "action": a.action,
        "installation_id": a.installation_id,
        "repository_id": a.repository_id,
        "throttled_at": null,
        "url": "",
    })
}

/// `GET /app/hook/deliveries` (the caller has checked the App JWT).
pub(crate) fn list(st: &State, query: &BTreeMap<String, String>) -> Resp {
    let per_page = query
        .get("per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(30)
        .clamp(1, 100);
    let newest_first: Vec<&HookAttempt> = st.hook_log.attempts.iter().rev().collect();
    let start = match query.get("cursor") {
        None => 0,
        Some(c) => match c.strip_prefix("v1_").and_then(|id| id.parse::<u64>().ok()) {
            Some(id) => newest_first
                .iter()
                .position(|a| a.id <= id)
                .unwrap_or(newest_first.len()),
            None => return error(422, "Invalid cursor"),
        },
    };
    let page: Vec<Value> = newest_first
        .iter()
        .skip(start)
        .take(per_page)
        .map(|a| item_json(a))
        .collect();
    let resp = Resp::json(200, Value::Array(page));
    match newest_first.get(start + per_page) {
        Some(next) => resp.header(
            "link",
            format!(
                "<{}/app/hook/deliveries?per_page={per_page}&cursor=v1_{}>; rel=\"next\"",
                st.urls.api, next.id
            ),
        ),
        None => resp,
    }
}

/// `POST /app/hook/deliveries/{id}/attempts` (the caller has checked the App JWT): 202 and
/// the event is sent again once the request is answered.
pub(crate) fn redeliver(st: &mut State, id: &str) -> Resp {
    let Some(guid) = id
        .parse::<u64>()
        .ok()
        .and_then(|id| st.hook_log.attempts.iter().find(|a| a.id == id))
        .map(|a| a.guid.clone())
    else {
        return error(404, "Not Found");
    };
    st.hook_log.pending.push(guid);
    Resp::json(202, json!({}))
}

/// Sends the redeliveries asked for, in the order asked, after the request that asked for
/// them has been answered (as GitHub does: the API answers 202 and delivers later).
pub(crate) fn dispatch(sh: &Arc<Shared>) {
    let pending: Vec<(String, crate::state::StoredDelivery)> = {
        let mut st = lock(sh);
        let guids = std::mem::take(&mut st.hook_log.pending);
        guids
            .into_iter()
            .filter_map(|g| st.deliveries.get(&g).cloned().map(|d| (g, d)))
            .collect()
    };
    if pending.is_empty() {
        return;
    }
    let sh = sh.clone();
    tokio::spawn(async move {
        for (guid, d) in pending {
            if let Err(e) = send_logged(&sh, &guid, &d.event, &d.body, true).await {
                tracing::warn!(error = %e, delivery = %guid, "fake redelivery failed");
            }
        }
    });
}

impl crate::FakeGitHub {
    /// Every delivery attempt so far, oldest first, with the status the app answered (502
    /// when it could not be reached), as the App's delivery log shows them.
    pub fn hook_attempts(&self) -> Vec<HookAttempt> {
        self.st().hook_log.attempts.clone()
    }
}

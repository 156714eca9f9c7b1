//! Webhook intake: `POST /api/github/webhooks`.
//!
//! In this order, and nothing more (GitHub gives up after 10 seconds):
//! 1. refuse bodies over 25 MiB (GitHub's own cap) with 413, without buffering them whole;
//!    bodies slower than `REQUEST_TIMEOUT_SECONDS` get 408, and when unauthenticated bodies already hold
//!    [`UNAUTHENTICATED_BODY_BUDGET`] bytes across all connections, 503;
//! 2. verify `X-Hub-Signature-256` (HMAC-SHA256, constant-time) over the raw bytes — before any
//!    parsing; missing or wrong → 401 and nothing is stored;
//! 3. route the delivery (malformed JSON → 400; unknown events and actions are acknowledged;
//!    a delivery that would be queued but lacks a field its job reads → 400 naming it);
//! 4. persist the delivery and its job ([`Store::accept_delivery`]: the payload and its
//!    metadata appended to the spool, the store's write-ahead log, then the delivery and job
//!    records in sled), wait until the spool is synced ([`Store::durable`], one group fsync
//!    shared by concurrent deliveries), then answer 2xx — a crash after the answer loses
//!    nothing; a repeated `X-GitHub-Delivery` is acknowledged and never queued twice;
//! 5. hand the job to the workers.
//!
//! The intake never calls GitHub, never runs pipeline code, and never logs payloads or secrets.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;
use tracing::{error, info, warn};

use crate::events::{Route, route};
use crate::jobs::Queue;
use crate::metrics::Metrics;
use crate::store::backend::Backend;
use crate::store::{Accepted, DeliveryRecord, NewJob};

/// GitHub does not deliver payloads larger than this.
pub const MAX_BODY_BYTES: usize = 25 * 1024 * 1024;

/// Bytes of request bodies held at once before their signatures are checked, across every
/// connection: without a bound, 64 unsigned 25 MiB bodies took 1.5 GB. A delivery that would
/// pass it is answered 503 at once (GitHub's payloads are mostly a few KiB; 64 MiB holds more
/// than two maximal ones).
pub const UNAUTHENTICATED_BODY_BUDGET: usize = 64 * 1024 * 1024;

/// The memory budget of bodies not yet authenticated, shared by every connection.
#[derive(Clone)]
pub struct BodyBudget(Arc<tokio::sync::Semaphore>);

impl BodyBudget {
    pub fn new(bytes: usize) -> Self {
        BodyBudget(Arc::new(tokio::sync::Semaphore::new(bytes)))
    }
}

impl Default for BodyBudget {
    fn default() -> Self {
        BodyBudget::new(UNAUTHENTICATED_BODY_BUDGET)
    }
}

/// Why a body was not read.
enum BodyError {
    TooLarge,
    OverBudget,
    TimedOut,
    Broken,
}

/// Reads the body chunk by chunk, each chunk's bytes taken from `budget` first; the permits
/// come back when the returned guard is dropped (once the signature has been checked).
async fn read_body(
    body: Body,
    budget: &BodyBudget,
    timeout: std::time::Duration,
) -> Result<(bytes::Bytes, tokio::sync::SemaphorePermit<'_>), BodyError> {
    use http_body_util::BodyExt;
    let mut held = budget
        .0
        .try_acquire_many(0)
        .map_err(|_| BodyError::OverBudget)?;
    let mut buf = bytes::BytesMut::new();
    let mut body = body;
    let read = async {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| BodyError::Broken)?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if buf.len() + data.len() > MAX_BODY_BYTES {
                return Err(BodyError::TooLarge);
            }
            let more = budget
                .0
                .try_acquire_many(u32::try_from(data.len()).map_err(|_| BodyError::TooLarge)?)
                .map_err(|_| BodyError::OverBudget)?;
            held.merge(more);
            buf.extend_from_slice(&data);
        }
        Ok(())
    };
    match tokio::time::timeout(timeout, read).await {
        Ok(Ok(())) => Ok((buf.freeze(), held)),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(BodyError::TimedOut),
    }
}

/// What the intake needs.
#[derive(Clone)]
pub struct Intake {
    /// Where deliveries and jobs are kept (sled, or PostgreSQL shared by replicas).
    pub state: Arc<dyn Backend>,
    pub queue: Arc<Queue>,
    pub metrics: Metrics,
    /// Accepted secrets: the current one first, then any previous ones during a rotation.
    pub secrets: Arc<Vec<SecretString>>,
    /// Memory for bodies whose signature is not checked yet.
    pub budget: BodyBudget,
    /// A body must arrive within this (`REQUEST_TIMEOUT_SECONDS`).
    pub body_timeout: std::time::Duration,
}

/// Why a signature was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("missing X-Hub-Signature-256 header")]
    Missing,
    #[error("X-Hub-Signature-256 is not `sha256=` followed by 64 hex digits")]
    Malformed,
    #[error("signature does not match the payload")]
    Mismatch,
}

/// Verifies `header` (`sha256=<hex>`) against `body` with any of `secrets`, in constant time.
pub fn verify_signature(
    secrets: &[SecretString],
    body: &[u8],
    header: Option<&str>,
) -> Result<(), SignatureError> {
    let header = header.ok_or(SignatureError::Missing)?;
    let hex_sig = header
        .trim()
        .strip_prefix("sha256=")
        .ok_or(SignatureError::Malformed)?;
    if hex_sig.len() != 64 {
        return Err(SignatureError::Malformed);
    }
    let sig = hex::decode(hex_sig).map_err(|_| SignatureError::Malformed)?;
    for secret in secrets {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.expose_secret().as_bytes())
            .expect("HMAC accepts keys of any length");
        mac.update(body);
        // `verify_slice` compares in constant time.
        if mac.verify_slice(&sig).is_ok() {
            return Ok(());
        }
    }
    Err(SignatureError::Mismatch)
}

/// `sha256=<hex>` for `body` under `secret` (what GitHub sends; used by tests and the fake).
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC accepts keys of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

fn reply(status: StatusCode, msg: &str) -> Response {
    (
        status,
        [("content-type", "application/json")],
        serde_json::json!({ "message": msg }).to_string(),
    )
        .into_response()
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Delivery ids are GUIDs; anything else long or odd is refused before it becomes a key.
fn valid_delivery_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// The axum handler.
pub async fn webhook(State(intake): State<Intake>, headers: HeaderMap, body: Body) -> Response {
    let event = header(&headers, "x-github-event").unwrap_or("").to_string();

    if let Some(len) = header(&headers, "content-length").and_then(|v| v.parse::<u64>().ok())
        && len > MAX_BODY_BYTES as u64
    {
        intake.metrics.delivery(&event, "too_large");
        return reply(StatusCode::PAYLOAD_TOO_LARGE, "payload exceeds 25 MiB");
    }
    // Stops reading as soon as the cap, the memory budget or the deadline is passed
    // (chunked bodies included).
    let (body, unauthenticated) = match read_body(body, &intake.budget, intake.body_timeout).await {
        Ok(b) => b,
        Err(BodyError::TooLarge) => {
            intake.metrics.delivery(&event, "too_large");
            return reply(StatusCode::PAYLOAD_TOO_LARGE, "payload exceeds 25 MiB");
        }
        Err(BodyError::OverBudget) => {
            intake.metrics.delivery(&event, "busy");
            warn!("unauthenticated bodies already hold the memory budget; refused");
            return reply(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many deliveries in flight; please redeliver",
            );
        }
        Err(BodyError::TimedOut) => {
            intake.metrics.delivery(&event, "malformed");
            return reply(StatusCode::REQUEST_TIMEOUT, "the request body was too slow");
        }
        Err(BodyError::Broken) => {
            intake.metrics.delivery(&event, "malformed");
            return reply(StatusCode::BAD_REQUEST, "could not read the request body");
        }
    };

    let verified = verify_signature(
        &intake.secrets,
        &body,
        header(&headers, "x-hub-signature-256"),
    );
    // Signed or not, the body no longer counts against the unauthenticated budget.
    drop(unauthenticated);
    if let Err(e) = verified {
        intake.metrics.delivery(&event, "bad_signature");
        warn!(event = %crate::metrics::event_label(&event), reason = %e, "webhook refused");
        return reply(StatusCode::UNAUTHORIZED, &e.to_string());
    }

    let delivery_id = match header(&headers, "x-github-delivery") {
        Some(id) if valid_delivery_id(id) => id.to_string(),
        _ => {
            intake.metrics.delivery(&event, "malformed");
            return reply(
                StatusCode::BAD_REQUEST,
                "missing or invalid X-GitHub-Delivery header",
            );
        }
    };
    if event.is_empty()
        || event.len() > 64
        || !event.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
    {
        intake.metrics.delivery(&event, "malformed");
        return reply(
            StatusCode::BAD_REQUEST,
            "missing or invalid X-GitHub-Event header",
        );
    }

    let span = tracing::info_span!("delivery", delivery = %delivery_id, event = %event);
    let _enter = span.enter();

    let (route, action) = match route(&event, &body) {
        Ok(r) => r,
        Err(e) => {
            intake.metrics.delivery(&event, "malformed");
            warn!(error = %e, "malformed webhook payload");
            if e.is_data() {
                return reply(
                    StatusCode::BAD_REQUEST,
                    &format!("payload lacks what ci-medic needs: {e}"),
                );
            }
            return reply(StatusCode::BAD_REQUEST, "payload is not valid JSON");
        }
    };

    // A delivery that will be queued must already hold everything its job reads: refused
    // here with the field named, it costs nothing; accepted, it would be parked for ever.
    if let Route::Handle { .. } = route
        && let Err(e) = crate::events::Event::parse(&event, &body)
    {
        intake.metrics.delivery(&event, "malformed");
        warn!(error = %e, "webhook payload lacks what its job needs");
        return reply(
            StatusCode::BAD_REQUEST,
            &format!("payload lacks what ci-medic needs: {e}"),
        );
    }

    let (job, outcome) = match &route {
        Route::Ping => (None, "ping"),
        Route::Ignore { .. } => (None, "ignored"),
        Route::Handle { key } => (Some(NewJob::delivery(key.clone())), "accepted"),
    };
    let record = DeliveryRecord {
        id: delivery_id.clone(),
        event: event.clone(),
        action,
        received_at: chrono::Utc::now(),
        queued: job.is_some(),
    };
    let key = job.as_ref().map(|j| j.key.clone());
    drop(_enter);

    // Durable when it returns (the spool's group sync, or PostgreSQL's commit): only then
    // may a 2xx follow. A database that cannot be reached answers 503, and GitHub redelivers.
    let accepted = match intake.state.accept(&record, &body, job).await {
        Ok(a) => a,
        Err(e) => {
            intake.metrics.delivery(&event, "error");
            error!(parent: &span, error = %e, "cannot persist delivery");
            return reply(
                StatusCode::SERVICE_UNAVAILABLE,
                "could not persist the delivery; please redeliver",
            );
        }
    };
    match accepted {
        Accepted::Duplicate => {
            intake.metrics.delivery(&event, "duplicate");
            info!(parent: &span, "redelivery of a known delivery id; acknowledged, not processed again");
            reply(StatusCode::OK, "duplicate delivery; already received")
        }
        Accepted::New { job_id } => {
            intake.metrics.delivery(&event, outcome);
            match (&route, job_id, key) {
                (Route::Ping, _, _) => reply(StatusCode::OK, "pong"),
                (Route::Ignore { reason }, _, _) => {
                    tracing::debug!(parent: &span, reason, "delivery ignored");
                    reply(StatusCode::OK, &format!("ignored: {reason}"))
                }
                (Route::Handle { .. }, Some(job_id), Some(_)) => {
                    intake.queue.job_added();
                    info!(parent: &span, job_id, "delivery accepted and queued");
                    reply(StatusCode::ACCEPTED, "accepted")
                }
                _ => unreachable!("handled deliveries always get a job"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_documented_test_vector() {
        // From GitHub's "Validating webhook deliveries".
        let secrets = vec![SecretString::from("It's a Secret to Everybody")];
        let good = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert_eq!(
            verify_signature(&secrets, b"Hello, World!", Some(good)),
            Ok(())
        );
        assert_eq!(sign(b"It's a Secret to Everybody", b"Hello, World!"), good);
        assert_eq!(
            verify_signature(&secrets, b"Hello, World?", Some(good)),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify_signature(&secrets, b"x", None),
            Err(SignatureError::Missing)
        );
        assert_eq!(
            verify_signature(&secrets, b"x", Some("sha1=abc")),
            Err(SignatureError::Malformed)
        );
        assert_eq!(
            verify_signature(&secrets, b"x", Some("sha256=zz")),
            Err(SignatureError::Malformed)
        );
        let bad_hex = format!("sha256={}", "g".repeat(64));
        assert_eq!(
            verify_signature(&secrets, b"x", Some(&bad_hex)),
            Err(SignatureError::Malformed)
        );
    }

    #[test]
    fn rotation_accepts_previous_secret() {
        let secrets = vec![SecretString::from("new"), SecretString::from("old")];
        let sig = sign(b"old", b"body");
        assert!(verify_signature(&secrets, b"body", Some(&sig)).is_ok());
    }

    #[test]
    fn delivery_ids() {
        assert!(valid_delivery_id("72d3162e-cc78-11e3-81ab-4c9367dc0958"));
        assert!(!valid_delivery_id(""));
        assert!(!valid_delivery_id("a/b"));
        assert!(!valid_delivery_id(&"a".repeat(200)));
    }
}

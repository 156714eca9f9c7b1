//! Calls made as the App itself (App JWT, not an installation token) on its webhook's delivery
//! log: `GET /app/hook/deliveries`, one page at a time following `Link: rel="next"` (a cursor
//! GitHub chooses), and `POST /app/hook/deliveries/{id}/attempts`, which asks GitHub to send an
//! event again. No repository permission is involved: any App may read its own log.
//!
//! Must never: send the JWT to another origin (the next page's URL is checked), or hold a
//! delivery id in anything narrower than `u64` (GitHub's are above 2^53).

use chrono::{DateTime, Utc};
use reqwest::header::LINK;
use reqwest::{Method, Url};
use serde::Deserialize;

use super::InstallationId;
use super::client::RestClient;
use super::error::{GitHubError, Result};
use super::http::{Auth, decode_json, next_link};

/// One attempt of the delivery log (`hook-delivery-item`), with the fields ci-medic reads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct HookDeliveryItem {
    /// The attempt's id: what a redelivery request names.
    pub id: u64,
    /// The event's GUID, the `X-GitHub-Delivery` header; its redeliveries keep it.
    pub guid: String,
    pub delivered_at: DateTime<Utc>,
    #[serde(default)]
    pub redelivery: bool,
    /// GitHub's description: `OK`, `Invalid HTTP Response: 503`, `failed to connect to host`.
    pub status: String,
    /// The status the webhook answered (502 when GitHub could not connect).
    pub status_code: u16,
    pub event: String,
    #[serde(default)]
    pub action: Option<String>,
}

/// One page of the log, newest first, and where the next (older) one is.
#[derive(Debug)]
pub struct DeliveriesPage {
    pub items: Vec<HookDeliveryItem>,
    pub next: Option<Url>,
}

/// App-level writes are paced on a slot of their own, apart from every installation's.
const APP_PACING_SLOT: InstallationId = InstallationId(0);

impl RestClient {
    fn app_jwt(&self) -> Result<secrecy::SecretString> {
        let (credentials, clock) = self.app.as_ref().ok_or_else(|| {
            GitHubError::Auth("this client has no App credentials to sign a JWT".into())
        })?;
        credentials.app_jwt(clock.now())
    }

    /// `GET /app/hook/deliveries?per_page=100`, or the page at `next` (a URL a previous page's
    /// `Link` gave).
    pub async fn list_app_hook_deliveries(&self, next: Option<&Url>) -> Result<DeliveriesPage> {
        let url = match next {
            Some(u) => u.clone(),
            None => {
                let mut u = self.http.url(&["app", "hook", "deliveries"])?;
                u.query_pairs_mut().append_pair("per_page", "100");
                u
            }
        };
        if !self.http.same_origin(&url) {
            return Err(GitHubError::Decode(format!(
                "pagination points off the API host ({})",
                url.host_str().unwrap_or("?")
            )));
        }
        let jwt = self.app_jwt()?;
        let call = self.http.json_call(Method::GET, url, None);
        let resp = self.http.execute(&call, Auth::Bearer(&jwt)).await?;
        let next = match resp.headers().get(LINK).and_then(|v| v.to_str().ok()) {
            Some(link) => match next_link(link) {
                Some(href) => Some(
                    resp.url()
                        .join(&href)
                        .map_err(|e| GitHubError::Decode(format!("bad Link URL: {e}")))?,
                ),
                None => None,
            },
            None => None,
        };
        let items = decode_json(resp).await?;
        Ok(DeliveriesPage { items, next })
    }

    /// `POST /app/hook/deliveries/{id}/attempts`: GitHub answers 202 and sends the event again
    /// (same guid, `redelivery: true`). Asking twice only sends it twice, which the intake
    /// de-duplicates, so this call is retried like a read.
    pub async fn redeliver_app_hook_delivery(&self, id: u64) -> Result<()> {
        let url = self
            .http
            .url(&["app", "hook", "deliveries", &id.to_string(), "attempts"])?;
        let mut turn = self.pacer.turn(APP_PACING_SLOT).await;
        let jwt = self.app_jwt()?;
        let mut call = self.http.json_call(Method::POST, url, None);
        call.idempotent = true;
        let result = self.http.execute(&call, Auth::Bearer(&jwt)).await;
        *turn = Some(tokio::time::Instant::now());
        result.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The delivery log as GitHub answered it to octokit.rb (2023, `shared/github/recorded/
    /// octokit.rb-cassettes-decoded/Octokit_Client_Apps/_list_app_hook_deliveries`).
    #[test]
    fn reads_the_recorded_delivery_log() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../shared/github/recorded/octokit.rb-cassettes-decoded/Octokit_Client_Apps/\
             _list_app_hook_deliveries/lists_hook_deliveries_for_an_app.json",
        );
        let Ok(text) = std::fs::read_to_string(&path) else {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("CI=true but {} is missing", path.display());
            }
            eprintln!("skipping: {} not available", path.display());
            return;
        };
        let cassette: serde_json::Value = serde_json::from_str(&text).unwrap();
        let body = cassette["http_interactions"][0]["response"]["body"]["json"].clone();
        let items: Vec<HookDeliveryItem> = serde_json::from_value(body).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].id, 55148726666, "wider than an i32");
        assert_eq!(items[0].guid, "22848c30-4f3f-11ee-9760-ab29e0851e40");
        assert_eq!(items[0].status_code, 403);
        assert_eq!(items[0].event, "installation");
        assert_eq!(items[1].action, None);
        assert_eq!(
            items[0].delivered_at,
            "2023-09-09T18:31:48Z".parse::<DateTime<Utc>>().unwrap()
        );
        // A recent id, with milliseconds in the time, as GitHub lists them now.
        let item: HookDeliveryItem = serde_json::from_str(
            r#"{"id": 3842091948768772097, "guid": "g", "delivered_at": "2026-09-10T12:18:41.264Z",
                "redelivery": true, "duration": 10.0, "status": "failed to connect to host",
                "status_code": 502, "event": "check_run", "action": "completed",
                "installation_id": 1, "repository_id": 2, "url": "", "throttled_at": null}"#,
        )
        .unwrap();
        assert_eq!(item.id, 3842091948768772097);
        assert!(item.redelivery);
    }
}

//! Missed webhooks: at start (on the replica holding the lease) and then every
//! `REDELIVERY_INTERVAL_SECONDS`, reads the App's webhook delivery log and asks GitHub to send
//! again the events it could not deliver while ci-medic was down (a deploy, a crash) or
//! answering 5xx (a full disk). GitHub never does it by itself.
//!
//! A pass: read the log newest first, page by page, back to where the window starts (the
//! previous pass's start; for the first pass of a process, the newest delivery recorded
//! before it started listening), at most [`MAX_PAGES`] pages; look up which guids the store
//! already holds; let [`ci_medic_core::redelivery::select`] decide; post one redelivery request
//! per chosen event. The intake de-duplicates by guid, so an event sent twice is processed once.
//!
//! With several replicas one of them reads the log at a time (the `redelivery` lease, held
//! through [`crate::singleton`]: a dead holder delays the pass by at most 40 s), and
//! where the last complete pass started is shared ([`SharedState::redelivery_mark`]): a pass
//! on any replica starts where the last one on any replica did, and a replica started after
//! a downtime reads back to the last pass before it.
//!
//! This is the thin I/O shell: the decision is pure and lives in `ci-medic-core`. It must never
//! ask for more than [`LIMITS`] allows in a pass, ask for a guid twice in a pass or one the
//! store holds, or stop the service when GitHub cannot be asked (it logs and tries at the next
//! pass).

use std::collections::HashSet;
use std::time::Duration;

use chrono::{DateTime, Utc};
use ci_medic_core::redelivery::{
    Attempt, AttemptId, DeliveryGuid, Limits, Window, look_back_start, reaches, select,
};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::github::RestClient;
use crate::github::app_hook::HookDeliveryItem;
use crate::metrics::Metrics;
use crate::singleton::{Singleton, Timing};
use crate::store::StoreError;
use crate::store::backend::Backend;
use crate::store::shared_state::SharedState;

/// The singleton lease under which one replica at a time reads the log.
pub const LEASE: &str = "redelivery";

/// Pages of 100 attempts read in one pass, at most.
pub const MAX_PAGES: usize = 10;

/// How far back the log is read: GitHub redelivers events of the last 3 days on github.com.
pub const WINDOW: Window = Window {
    max_look_back: chrono::Duration::hours(72),
    overlap: chrono::Duration::minutes(10),
};

/// Redeliveries asked for in one pass, and failed redeliveries after which an event is given up.
pub const LIMITS: Limits = Limits {
    max_per_pass: 100,
    max_redeliveries: 3,
};

/// Why a pass stopped early.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error("reading the App's webhook delivery log: {0}")]
    GitHub(#[from] crate::github::GitHubError),
    #[error("looking up deliveries in the store: {0}")]
    Store(#[from] StoreError),
}

/// What one pass did, for the log and the tests.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PassReport {
    pub pages: usize,
    pub attempts_read: usize,
    pub requested: usize,
    pub failed: usize,
    pub deferred: usize,
    pub given_up: usize,
    /// The log was read back to the window's start (not cut at [`MAX_PAGES`]).
    pub complete: bool,
}

/// The periodic redelivery task.
pub struct Redelivery {
    pub github: RestClient,
    /// Where deliveries are recorded (sled or PostgreSQL), and the `redelivery` lease.
    pub state: std::sync::Arc<dyn Backend>,
    /// Where the last complete pass's start is kept for every replica.
    pub shared: std::sync::Arc<dyn SharedState>,
    pub metrics: Metrics,
    pub interval: Duration,
}

impl Redelivery {
    /// Runs a pass on whichever replica holds the `redelivery` singleton lease ([`Singleton`]:
    /// `timing.lease` long, renewed every `timing.renew`): at once when this replica takes the
    /// lease, then every `interval`, until `stop`. A holder that dies delays the pass by at
    /// most `timing.lease + timing.renew`, whatever the interval. `owner` is this replica's
    /// name; `newest_recorded` is the newest webhook delivery the store held before the
    /// server started listening: what came after it may have been missed.
    pub async fn run(
        self,
        owner: String,
        timing: Timing,
        newest_recorded: Option<DateTime<Utc>>,
        stop: CancellationToken,
    ) {
        let singleton = Singleton {
            state: self.state.clone(),
            name: LEASE,
            owner,
            every: self.interval,
            timing,
        };
        let this = std::sync::Arc::new(self);
        singleton
            .run(stop, move || {
                let this = this.clone();
                async move {
                    match this.marked_pass(Utc::now(), newest_recorded).await {
                        Ok(report) => {
                            if report.requested + report.failed + report.given_up > 0 {
                                info!(?report, "asked GitHub to redeliver missed webhook deliveries");
                            } else {
                                tracing::debug!(?report, "no missed webhook deliveries");
                            }
                        }
                        Err(e) => warn!(error = %e, "looking for missed webhook deliveries failed; trying again at the next pass"),
                    }
                }
            })
            .await
    }

    /// A pass from the shared mark, which it moves to `started` when it read and took
    /// everything before it. Run by the replica holding the `redelivery` lease ([`Self::run`]).
    pub async fn marked_pass(
        &self,
        started: DateTime<Utc>,
        newest_recorded: Option<DateTime<Utc>>,
    ) -> Result<PassReport, PassError> {
        let last_pass = self.shared.redelivery_mark().await?;
        let report = self.pass(started, last_pass, newest_recorded).await?;
        // The next pass reads from here when this one saw and took everything before it;
        // otherwise from where this one started reading.
        if report.complete && report.deferred == 0 {
            self.shared.set_redelivery_mark(started).await?;
        }
        Ok(report)
    }

    /// One pass at `now`.
    pub async fn pass(
        &self,
        now: DateTime<Utc>,
        last_pass: Option<DateTime<Utc>>,
        newest_recorded: Option<DateTime<Utc>>,
    ) -> Result<PassReport, PassError> {
        let since = look_back_start(now, last_pass, newest_recorded, WINDOW);
        let mut report = PassReport::default();
        let mut log: Vec<Attempt> = Vec::new();
        let mut next = None;
        loop {
            let page = self.github.list_app_hook_deliveries(next.as_ref()).await?;
            report.pages += 1;
            let attempts: Vec<Attempt> = page.items.iter().map(attempt).collect();
            report.complete = reaches(&attempts, since) || page.next.is_none();
            log.extend(attempts);
            if report.complete {
                break;
            }
            if report.pages >= MAX_PAGES {
                warn!(
                    pages = MAX_PAGES,
                    since = %since,
                    "the webhook delivery log holds more than a pass reads; older failures wait for a quieter pass"
                );
                break;
            }
            next = page.next;
        }
        report.attempts_read = log.len();

        let mut held = HashSet::new();
        let guids: HashSet<&DeliveryGuid> = log.iter().map(|a| &a.guid).collect();
        for guid in guids {
            if self.state.has_delivery(guid.as_str()).await? {
                held.insert(guid.clone());
            }
        }
        let selection = select(&log, since, &held, LIMITS);
        report.deferred = selection.deferred;
        report.given_up = selection.given_up.len();
        for guid in &selection.given_up {
            warn!(
                delivery = guid.as_str(),
                redeliveries = LIMITS.max_redeliveries,
                "a webhook delivery failed every redelivery; not asking again (redeliver it from the App's settings once the cause is fixed)"
            );
        }
        for (AttemptId(id), guid) in selection.redeliver {
            match self.github.redeliver_app_hook_delivery(id).await {
                Ok(()) => {
                    report.requested += 1;
                    self.metrics.redeliveries_requested.inc();
                    info!(
                        delivery = guid.as_str(),
                        "asked GitHub to redeliver a missed delivery"
                    );
                }
                Err(e) => {
                    report.failed += 1;
                    self.metrics.redeliveries_failed.inc();
                    warn!(delivery = guid.as_str(), error = %e, "GitHub did not accept a redelivery request");
                }
            }
        }
        Ok(report)
    }
}

fn attempt(item: &HookDeliveryItem) -> Attempt {
    Attempt {
        id: AttemptId(item.id),
        guid: DeliveryGuid(item.guid.clone()),
        delivered_at: item.delivered_at,
        redelivery: item.redelivery,
        status_code: item.status_code,
    }
}

//! Singletons: periodic passes that one replica at a time runs (the CI monitor's reconcile
//! pass, the sweep that prunes old records), each under a named lease in the shared store.
//!
//! The lease is short and renewed often, whatever the pass's interval, so a replica that dies
//! holding it (SIGKILL, a lost machine, a restarted replica killed a second after it took a
//! lapsed lease) blocks the pass for at most [`Timing::lease`] + [`Timing::renew`] (40 s by
//! default), never for a pass interval. A replica that takes a lease over runs the pass at
//! once, as its predecessor may have died in the middle of one; while it holds the lease it
//! runs the pass every interval, renewing the lease during the pass too. On sled every lease is
//! the one process's, so each pass simply runs every interval.
//!
//! It must never start a pass on a replica that does not hold the lease at that moment, and
//! never stop the service when the store cannot be reached (it logs and tries again).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::store::backend::Backend;

/// How a singleton's lease is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// How long the lease lasts without renewal: how long a dead holder keeps the pass from
    /// running elsewhere, less [`Timing::renew`].
    pub lease: Duration,
    /// How often the holder renews its lease and the others try to take it: at most a third of
    /// `lease`, so two renewals can fail before the lease lapses under a live holder.
    pub renew: Duration,
}

/// The lease of every singleton of `serve`: a dead holder's passes resume on another replica
/// within 40 s.
pub const DEFAULT_TIMING: Timing = Timing {
    lease: Duration::from_secs(30),
    renew: Duration::from_secs(10),
};

/// A periodic pass that one replica at a time runs.
pub struct Singleton {
    /// Where the lease is held (the shared store).
    pub state: Arc<dyn Backend>,
    /// The lease's name (`reconcile`, `sweep`).
    pub name: &'static str,
    /// This replica.
    pub owner: String,
    /// How often the holder runs the pass.
    pub every: Duration,
    pub timing: Timing,
}

impl Singleton {
    /// Runs `pass` whenever this replica holds the lease and the interval has passed since its
    /// last pass (at once when it has just taken the lease), until `stop`.
    pub async fn run<F, Fut>(self, stop: CancellationToken, mut pass: F)
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = ()>,
    {
        let mut last: Option<Instant> = None;
        loop {
            if self.holds().await {
                if last.is_none_or(|t| t.elapsed() >= self.every) {
                    last = Some(Instant::now());
                    // Renewed while the pass runs: a long pass keeps its lease, and another
                    // replica does not start the same pass beside it.
                    let renew = async {
                        loop {
                            tokio::time::sleep(self.timing.renew).await;
                            self.holds().await;
                        }
                    };
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = pass() => {}
                        _ = renew => {}
                    }
                }
            } else {
                // Taken over: when it comes back, the pass runs at once, as the replica that
                // held it meanwhile may have died in the middle of one.
                last = None;
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(self.timing.renew) => {}
            }
        }
    }

    /// Whether this replica holds (or just took, or renewed) the lease; an unreachable store
    /// means no.
    async fn holds(&self) -> bool {
        match self
            .state
            .try_lease(self.name, &self.owner, self.timing.lease)
            .await
        {
            Ok(held) => held,
            Err(e) => {
                tracing::warn!(error = %e, lease = self.name, "cannot take or renew a singleton's lease; skipping this round");
                false
            }
        }
    }
}

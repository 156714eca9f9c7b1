//! Held answers, a fault control for races: the next matching request is carried out at once
//! (its effects happen, the scripted CI's check runs and webhooks included), but its answer is
//! kept back until the test releases it. This is what a client sees when GitHub did the work
//! and the answer is slow to come, or never comes because the client died waiting.
//!
//! It never changes what a request does, only when its answer leaves.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::Notify;

use crate::state::State;

/// One pending hold in the fake's state: the first request matching it is held at `gate`.
#[derive(Clone)]
pub struct Hold {
    pub method: String,
    pub path_prefix: String,
    pub gate: Arc<Gate>,
}

/// Where held answers wait for their release.
#[derive(Default)]
pub struct Gate {
    caught: AtomicUsize,
    released: AtomicBool,
    notify: Notify,
}

impl Gate {
    /// Waits until the test releases the answer (at once if it has already).
    pub(crate) async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            if self.released.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }

    fn release(&self) {
        self.released.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }
}

/// The test's handle on a hold. Dropping it releases the answer, so a failing test never
/// leaves a request hanging.
pub struct HeldAnswer {
    gate: Arc<Gate>,
}

impl HeldAnswer {
    /// Whether the matching request has come and been carried out (its answer held or, after
    /// [`HeldAnswer::release`], sent).
    pub fn caught(&self) -> bool {
        self.gate.caught.load(Ordering::SeqCst) > 0
    }

    /// Lets the held answer go.
    pub fn release(&self) {
        self.gate.release();
    }
}

impl Drop for HeldAnswer {
    fn drop(&mut self) {
        self.gate.release();
    }
}

/// Adds a hold on the next request whose method matches (`"*"` for any) and whose path
/// (relative to the API base) starts with `path_prefix`.
pub(crate) fn add(st: &mut State, method: &str, path_prefix: &str) -> HeldAnswer {
    let gate = Arc::new(Gate::default());
    st.holds.push(Hold {
        method: method.into(),
        path_prefix: path_prefix.into(),
        gate: gate.clone(),
    });
    HeldAnswer { gate }
}

/// The gate a request that was just carried out must wait at, if a hold matches it (the hold
/// is used up).
pub(crate) fn take(st: &mut State, method: &str, rel: &str) -> Option<Arc<Gate>> {
    let idx = st.holds.iter().position(|h| {
        (h.method == "*" || h.method.eq_ignore_ascii_case(method))
            && rel.starts_with(&h.path_prefix)
    })?;
    let hold = st.holds.remove(idx);
    hold.gate.caught.fetch_add(1, Ordering::SeqCst);
    Some(hold.gate)
}

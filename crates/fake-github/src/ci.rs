//! Scripted CI: when a branch is pushed through the API, every script registered for that
//! repository runs on the pushed commit's files and becomes a completed `github-actions` check run
//! (job id = check run id) with a stored job log; if a webhook is configured, a `check_run`
//! `completed` delivery follows, as GitHub would send it.
//!
//! Scripts run while the state lock is held: they must not call back into `FakeGitHub`.

use std::sync::Arc;

use crate::server::Shared;
use crate::state::{CheckRun, JobLog, Push};

pub fn on_push(sh: &Arc<Shared>, push: Push) {
    let mut deliveries = Vec::new();
    {
        let mut st = match sh.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let scripts: Vec<_> = st
            .ci_scripts
            .iter()
            .filter(|(r, _, _)| *r == push.repo)
            .cloned()
            .collect();
        if scripts.is_empty() {
            return;
        }
        let files = st.store.files_at(&push.sha).unwrap_or_default();
        for (_, name, script) in scripts {
            let (conclusion, log) = script(&files);
            let id = st.next_id();
            let now = st.now_str();
            st.check_runs.insert(
                id,
                CheckRun {
                    id,
                    repo: push.repo.clone(),
                    head_sha: push.sha.clone(),
                    name: name.clone(),
                    app_id: 15368,
                    app_slug: "github-actions".into(),
                    status: "completed".into(),
                    conclusion: Some(conclusion),
                    started_at: now.clone(),
                    completed_at: Some(now),
                    external_id: String::new(),
                    details_url: None,
                    title: None,
                    summary: None,
                    text: None,
                    annotations: vec![],
                    check_suite_id: id + 5_000_000,
                },
            );
            st.job_logs.insert(
                id,
                JobLog {
                    repo: push.repo.clone(),
                    bytes: log,
                    expired: false,
                },
            );
            if st.webhook.is_some()
                && let Some(payload) = crate::webhook::check_run_completed(&st, id)
            {
                let body = serde_json::to_vec(&payload).unwrap_or_default();
                let did = crate::webhook::delivery_id(&mut st);
                st.deliveries.insert(
                    did.clone(),
                    crate::state::StoredDelivery {
                        event: "check_run".into(),
                        body: body.clone(),
                    },
                );
                st.delivery_order.push(did.clone());
                deliveries.push((did, body));
            }
        }
        if st.webhook.is_none() {
            return;
        }
        let sh = sh.clone();
        tokio::spawn(async move {
            for (id, body) in deliveries {
                if let Err(e) =
                    crate::hook_deliveries::send_logged(&sh, &id, "check_run", &body, false).await
                {
                    tracing::warn!(error = %e, delivery = %id, "fake CI webhook delivery failed");
                }
            }
        });
    }
}

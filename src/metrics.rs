//! Prometheus metrics, served as text at `GET /metrics`.
//!
//! Labels are low-cardinality by construction (event names, outcomes, job kinds, stages): never a
//! repository, user, delivery id or anything from a payload that an outsider could vary.

use std::sync::Arc;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DeliveryLabels {
    pub event: String,
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobLabels {
    pub event: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StageLabels {
    pub stage: &'static str,
    pub outcome: &'static str,
}

/// A failure's kind as the triage named it (four values).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    pub kind: &'static str,
}

/// What asked for a re-run: a maintainer's `/rerun` (`command`) or `triage.auto_rerun` (`auto`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TriggerLabels {
    pub trigger: &'static str,
}

/// One installation; its id is GitHub's, so the label set grows only with installations.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct InstallationLabels {
    pub installation: u64,
}

/// All of ci-medic's metrics. Cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    pub deliveries: Family<DeliveryLabels, Counter>,
    pub queue_depth: Gauge,
    pub jobs_running: Gauge,
    pub jobs_parked: Gauge,
    pub job_duration: Family<JobLabels, Histogram>,
    pub job_failures: Family<JobLabels, Counter>,
    pub stages: Family<StageLabels, Counter>,
    pub github_rate_remaining: Family<InstallationLabels, Gauge>,
    /// Missed deliveries GitHub accepted to send again.
    pub redeliveries_requested: Counter,
    /// Redelivery requests GitHub refused or could not be asked.
    pub redeliveries_failed: Counter,
    pub failures: Family<KindLabels, Counter>,
    pub reruns_requested: Family<TriggerLabels, Counter>,
}

/// Known event names; anything else is counted as `other` so a hostile sender cannot grow the
/// label set.
const KNOWN_EVENTS: &[&str] = &[
    "ping",
    "check_run",
    "check_suite",
    "issue_comment",
    "pull_request",
    "installation",
    "installation_repositories",
    "workflow_run",
    "workflow_job",
    "push",
    // The service's own jobs (`JobKind::event_name`): without them every fix and
    // reconciliation would be timed and counted as `other`.
    "ci_medic_write_fix",
    "ci_medic_verify_fix",
    "ci_medic_reconcile",
];

pub fn event_label(event: &str) -> String {
    if KNOWN_EVENTS.contains(&event) {
        event.to_string()
    } else {
        "other".to_string()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("ci_medic");
        let deliveries = Family::<DeliveryLabels, Counter>::default();
        registry.register(
            "webhook_deliveries",
            "Webhook deliveries by event and outcome (accepted, duplicate, ignored, ping, bad_signature, malformed, too_large, busy, error)",
            deliveries.clone(),
        );
        let queue_depth = Gauge::default();
        registry.register(
            "queue_depth",
            "Jobs waiting for a worker",
            queue_depth.clone(),
        );
        let jobs_running = Gauge::default();
        registry.register("jobs_running", "Jobs being processed", jobs_running.clone());
        let jobs_parked = Gauge::default();
        registry.register(
            "jobs_parked",
            "Jobs that failed too often and wait for an operator",
            jobs_parked.clone(),
        );
        let job_duration = Family::<JobLabels, Histogram>::new_with_constructor(|| {
            Histogram::new([0.005, 0.025, 0.1, 0.5, 1.0, 5.0, 30.0, 120.0, 600.0])
        });
        registry.register(
            "job_duration_seconds",
            "Time spent running a job",
            job_duration.clone(),
        );
        let job_failures = Family::<JobLabels, Counter>::default();
        registry.register(
            "job_failures",
            "Job runs that failed (retried or parked)",
            job_failures.clone(),
        );
        let stages = Family::<StageLabels, Counter>::default();
        registry.register(
            "pipeline_stages",
            "Pipeline stage outcomes (analysis, comment, approval, fix, push, verdict)",
            stages.clone(),
        );
        let github_rate_remaining = Family::<InstallationLabels, Gauge>::default();
        registry.register(
            "github_rate_limit_remaining",
            "GitHub API requests left in the current rate-limit window, per installation (x-ratelimit-remaining of its last answer)",
            github_rate_remaining.clone(),
        );
        let redeliveries_requested = Counter::default();
        registry.register(
            "redeliveries_requested",
            "Webhook deliveries that failed while ci-medic was down or refusing them, which GitHub accepted to send again",
            redeliveries_requested.clone(),
        );
        let redeliveries_failed = Counter::default();
        registry.register(
            "redeliveries_failed",
            "Redelivery requests GitHub refused or that could not reach it",
            redeliveries_failed.clone(),
        );
        let failures = Family::<KindLabels, Counter>::default();
        registry.register(
            "failures",
            "Failed checks analysed, by the kind the triage found (code, infrastructure, flaky, configuration)",
            failures.clone(),
        );
        let reruns_requested = Family::<TriggerLabels, Counter>::default();
        registry.register(
            "reruns_requested",
            "Re-runs of failed GitHub Actions jobs ci-medic requested, by trigger (command, auto)",
            reruns_requested.clone(),
        );
        Metrics {
            registry: Arc::new(registry),
            redeliveries_requested,
            redeliveries_failed,
            failures,
            reruns_requested,
            github_rate_remaining,
            deliveries,
            queue_depth,
            jobs_running,
            jobs_parked,
            job_duration,
            job_failures,
            stages,
        }
    }

    /// Records an installation's remaining GitHub rate limit.
    pub fn github_rate_limit_remaining(&self, installation: u64, left: i64) {
        self.github_rate_remaining
            .get_or_create(&InstallationLabels { installation })
            .set(left);
    }

    pub fn delivery(&self, event: &str, outcome: &'static str) {
        self.deliveries
            .get_or_create(&DeliveryLabels {
                event: event_label(event),
                outcome,
            })
            .inc();
    }

    pub fn stage(&self, stage: &'static str, outcome: &'static str) {
        self.stages
            .get_or_create(&StageLabels { stage, outcome })
            .inc();
    }

    /// Counts one analysed failure of `kind` (`code`, `infrastructure`, `flaky`, `configuration`).
    pub fn failure(&self, kind: &'static str) {
        self.failures.get_or_create(&KindLabels { kind }).inc();
    }

    /// Counts one re-run requested, by `/rerun` (`command`) or automatically (`auto`).
    pub fn rerun_requested(&self, trigger: &'static str) {
        self.reruns_requested
            .get_or_create(&TriggerLabels { trigger })
            .inc();
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_services_own_jobs_have_their_own_label() {
        use crate::store::JobKind;
        let kinds = [
            JobKind::WriteFix {
                repo: "o/r".into(),
                pr: 1,
                check: "lint".into(),
            },
            JobKind::VerifyFix {
                repo: "o/r".into(),
                pr: 1,
                check: "lint".into(),
                commit: "c0ffee".into(),
            },
            JobKind::Reconcile {
                repo: "o/r".into(),
                pr: 1,
                check: "lint".into(),
            },
        ];
        for kind in kinds {
            let name = kind.event_name().expect("an internal job has a name");
            assert_eq!(event_label(name), name);
        }
        assert_eq!(event_label("a_hostile_event_name"), "other");
    }

    #[test]
    fn renders_prometheus_text() {
        let m = Metrics::new();
        m.delivery("check_run", "accepted");
        m.delivery("made-up-event", "ignored");
        m.queue_depth.set(3);
        let text = m.render();
        assert!(
            text.contains(
                "ci_medic_webhook_deliveries_total{event=\"check_run\",outcome=\"accepted\"} 1"
            ),
            "{text}"
        );
        assert!(text.contains("event=\"other\""));
        assert!(text.contains("ci_medic_queue_depth 3"));
        assert!(text.ends_with("# EOF\n"));
    }
}

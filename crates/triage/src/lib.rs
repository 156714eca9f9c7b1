//! Failure triage: says whether a failed check is the code's fault.
//!
//! Each failed check is classified as one [`FailureKind`]:
//!
//! - `code`: the parser's bug reports are the failure (today's behaviour), or nothing says
//!   otherwise;
//! - `infrastructure`: the network, a registry, the runner, memory, disk, a time limit, a
//!   cancellation or a service container failed — a re-run may pass;
//! - `flaky`: the same code has passed (another attempt on the same commit, or the failing tests'
//!   recorded history) — a re-run may pass;
//! - `configuration`: the workflow, an action's inputs, a missing script or secret, or the job
//!   token's permissions are wrong — a person must change the setup, not the code.
//!
//! It is pure and deterministic: regex and heuristics over the log's lines (the [`RULES`] table
//! below), what GitHub says about the check run and its job ([`CheckFacts`]) and the per-test
//! outcomes ci-medic recorded ([`TestOutcome`]). No I/O, no clock, no randomness, never a panic;
//! memory does not grow with the log (lines cut at 16 KiB, at most 10 evidence lines of at most
//! 500 characters per kind).
//!
//! # Usage
//!
//! ```
//! use ci_medic_triage::{CheckFacts, FailureKind, triage};
//!
//! let log = b"2024-05-01T10:00:00.0000000Z npm ERR! code ECONNRESET\n\
//!             2024-05-01T10:00:00.0000000Z npm ERR! network aborted\n";
//! let t = triage(log, &[], &CheckFacts::default(), &[]);
//! assert_eq!(t.kind, FailureKind::Infrastructure);
//! assert_eq!(t.evidence[0].line, 1);
//! assert_eq!(t.evidence[0].text, "npm ERR! code ECONNRESET");
//! assert!(t.rerun_advised());
//!
//! // Streaming: feed the log as it arrives.
//! let mut s = ci_medic_triage::Triager::new();
//! s.feed(b"No space left");
//! s.feed(b" on device\n");
//! assert_eq!(s.finish(&[], &CheckFacts::default(), &[]).kind, FailureKind::Infrastructure);
//! ```
//!
//! # Deciding
//!
//! Precision first: a real code defect must never be called infrastructure or configuration.
//!
//! 1. **Reports found** (the parser placed errors in the repository's files): `flaky` when the
//!    same check passed on the same commit in another attempt or job, or when every report names
//!    a failing test and every one of those tests has flaky history; otherwise `code`, whatever
//!    else the log says.
//! 2. **No report**: a check conclusion of `cancelled` or `timed_out` is `infrastructure`;
//!    `startup_failure`/`action_required` is `configuration`. Otherwise the log rules decide:
//!    when both infrastructure and configuration lines matched, the kind of the later line
//!    wins (the failure is near the end of a log). Then, in this order: an `Unexpected input(s)`
//!    warning is `configuration`, a pass of the same check elsewhere on the commit is `flaky`,
//!    and a failed `Set up job`/`Initialize containers` step is `infrastructure`.
//! 3. Nothing matched: `code` with no evidence (the caller stays silent when there are no
//!    reports either).
//!
//! Warnings (`##[warning]`, `npm WARN`, `Warning:`) are never evidence: a step that retried
//! and then succeeded says nothing about why the job failed.
//!
//! The flaky history signals: the test passed on this very commit; it both passed and failed
//! on one commit; or, on the default branch, it failed between two passes in history order
//! (a failure followed only by passes is a fix, not flakiness). Give the history oldest first.
//!
//! # Rules
//!
//! Ids are stable and are what [`Evidence::rule`] names. `rules::table()` prints this table.
//!
//! | rule | kind | source | evidence it needs |
//! |---|---|---|---|
//! | `infra.network` | infrastructure | log line | A network, DNS or TLS error on a line: `ETIMEDOUT`, `ECONNRESET`, `EAI_AGAIN`, `Could not resolve host`, `Read timed out`, `TLS handshake timeout`, `socket hang up`, `dial tcp …: i/o timeout`, `RPC failed; curl`… |
//! | `infra.registry` | infrastructure | log line | A package or container registry answered 429/5xx or a rate limit (`npm ERR! code E503`, `Received HTTP code 502`, `toomanyrequests`, `You have reached your pull rate limit`, `spurious network error`, `Could not transfer artifact … from/to`, apt `Hash Sum mismatch`, `Gem::RemoteFetcher::FetchError`, `Error response from daemon: Get …`) |
//! | `infra.runner_lost` | infrastructure | log line | The runner went away: `The runner has received a shutdown signal`, `… lost communication with the server`, Travis' `No output has been received in the last 10m0s` |
//! | `infra.oom` | infrastructure | log line | The job or a process was killed for memory: exit code 137, `SIGKILL`, `Killed`, `JavaScript heap out of memory`, `OutOfMemoryError: Java heap space`, `Cannot allocate memory` |
//! | `infra.disk` | infrastructure | log line | The disk filled up: `No space left on device`, `ENOSPC`, `You are running out of disk space` |
//! | `infra.timeout` | infrastructure | log line | The job hit its time limit: `The job running on runner … has exceeded the maximum execution time of N minutes`, Travis' `The job exceeded the maximum time limit for jobs` |
//! | `infra.cancelled` | infrastructure | log line | The job was cancelled: `The operation was canceled.`, `Canceling since a higher priority waiting request…` |
//! | `infra.service` | infrastructure | log line | A service container or daemon was not ready: `Service container … failed`, `… is unhealthy`, `the database system is starting up`, `Can't connect to MySQL server`, `Cannot connect to the Docker daemon` |
//! | `infra.github_api` | infrastructure | log line | GitHub itself failed or throttled: `API rate limit exceeded for …`, `secondary rate limit`, `The requested URL returned error: 500` |
//! | `config.inputs` | configuration | log line | An action was given wrong or missing inputs or used a disabled command: `Input required and not supplied: token`, setup-* `Some specified paths were not resolved, unable to cache dependencies`, `The set-env command is disabled` |
//! | `config.workflow` | configuration | log line | The workflow file or an action reference is wrong: `Invalid workflow file`, `Unable to resolve action`, `Can't find 'action.yml'`, a tool version setup-* cannot find, a deprecated `actions/*` version GitHub refuses |
//! | `config.missing_script` | configuration | log line | The workflow runs a script the project does not define: `npm ERR! Missing script: "lint"`, `ERR_PNPM_NO_SCRIPT`, yarn `Couldn't find a script named`, Gradle `Task 'x' not found` |
//! | `config.secret` | configuration | log line | A secret or token is missing or empty (e.g. on a fork): `Bad credentials`, `Parameter token or opts.auth is required`, `Credentials could not be loaded`, `no basic auth credentials`, `npm ERR! code ENEEDAUTH` |
//! | `config.permission` | configuration | log line | The job's token may not do what the workflow asks: `Resource not accessible by integration`, `Permission to o/r denied to github-actions[bot]`, `The requested URL returned error: 403`, `denied: requested access to the resource is denied` |
//! | `config.unexpected_input` | configuration | warning line | Only a warning line (`Warning: Unexpected input(s) 'x', valid inputs are [...]`): a misspelt action input, used only when no report and no other rule explains the failure |
//! | `check.timed_out` | infrastructure | check run / job | The check run's conclusion is `timed_out` (and the parser found no report) |
//! | `check.cancelled` | infrastructure | check run / job | The check run's conclusion is `cancelled` (and the parser found no report) |
//! | `check.startup_failure` | configuration | check run / job | The check run's conclusion is `startup_failure` or `action_required`: the workflow never ran its steps |
//! | `check.setup_step` | infrastructure | check run / job | The failed step is the runner's own `Set up job` or `Initialize containers`, no report and no configuration evidence |
//! | `flaky.other_attempt` | flaky | check run / job | The same check or job passed on the same commit in another attempt (`run_attempt`) or another job of the run |
//! | `flaky.history` | flaky | test history | Every failing test the parser named has passed on this commit, or has both passed and failed on one commit or on the default branch, in ci-medic's recorded outcomes |

mod flaky;
pub mod rules;
mod scan;

pub use flaky::{FlakyEvidence, FlakySignal, MAX_SHAS};
pub use rules::{RULES, Rule, Source};
pub use scan::{MAX_EVIDENCE, MAX_EVIDENCE_CHARS, MAX_LINE};

use ci_medic_parser::BugReport;
use serde::{Deserialize, Serialize};

/// What kind of failure a failed check is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailureKind {
    /// A defect in the repository's code (the parser's reports), or nothing says otherwise.
    Code,
    /// The CI infrastructure failed: network, registry, runner, memory, disk, time, cancellation.
    Infrastructure,
    /// The same code has passed: a re-run may pass.
    Flaky,
    /// The workflow's setup is wrong: inputs, scripts, secrets, permissions.
    Configuration,
}

impl FailureKind {
    pub const ALL: [FailureKind; 4] = [
        FailureKind::Code,
        FailureKind::Infrastructure,
        FailureKind::Flaky,
        FailureKind::Configuration,
    ];

    /// The serialised spelling: `code`, `infrastructure`, `flaky`, `configuration`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Code => "code",
            FailureKind::Infrastructure => "infrastructure",
            FailureKind::Flaky => "flaky",
            FailureKind::Configuration => "configuration",
        }
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for FailureKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FailureKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("unknown failure kind `{s}`"))
    }
}

/// One log line that supports the classification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// 1-based line number in the log as given (before any cleaning).
    pub line: usize,
    /// The line without timestamp, ANSI escapes or `##[error]`, trimmed; of a longer line, the
    /// [`MAX_EVIDENCE_CHARS`] characters around where the rule matched, with `…` where it was cut. Not redacted: callers that publish it
    /// redact it like any other log text.
    pub text: String,
    /// The id of the rule that matched (a row of [`RULES`]).
    pub rule: String,
}

/// A check run's or step's conclusion, as GitHub spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Conclusion {
    Success,
    Failure,
    Neutral,
    Cancelled,
    Skipped,
    TimedOut,
    ActionRequired,
    StartupFailure,
    Stale,
    /// A value this version does not know.
    #[serde(other)]
    Unknown,
}

impl Conclusion {
    /// GitHub's spelling; anything else is [`Conclusion::Unknown`].
    pub fn parse(s: &str) -> Conclusion {
        match s {
            "success" => Conclusion::Success,
            "failure" => Conclusion::Failure,
            "neutral" => Conclusion::Neutral,
            "cancelled" => Conclusion::Cancelled,
            "skipped" => Conclusion::Skipped,
            "timed_out" => Conclusion::TimedOut,
            "action_required" => Conclusion::ActionRequired,
            "startup_failure" => Conclusion::StartupFailure,
            "stale" => Conclusion::Stale,
            _ => Conclusion::Unknown,
        }
    }
}

/// One step of an Actions job (`GET /repos/{o}/{r}/actions/jobs/{id}`, `steps[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepFacts {
    pub name: String,
    pub number: u32,
    #[serde(default)]
    pub conclusion: Option<Conclusion>,
}

/// The same check or job on the same head sha, in another attempt or another job of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptOutcome {
    /// The check's or job's name.
    pub name: String,
    #[serde(default)]
    pub run_attempt: Option<u32>,
    #[serde(default)]
    pub job_id: Option<u64>,
    /// When given, it must equal [`CheckFacts::head_sha`] to count.
    #[serde(default)]
    pub head_sha: Option<String>,
    #[serde(default)]
    pub conclusion: Option<Conclusion>,
}

/// What GitHub says about the failed check. Everything is optional: for a check that is not
/// an Actions job only `conclusion` is usually known, and `Default` is "nothing known".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckFacts {
    /// The check run's name.
    #[serde(default)]
    pub check_name: Option<String>,
    /// The commit the check ran on.
    #[serde(default)]
    pub head_sha: Option<String>,
    /// The check run's conclusion (`failure`, `timed_out`, `cancelled`, `startup_failure`…).
    #[serde(default)]
    pub conclusion: Option<Conclusion>,
    /// The Actions job's steps, in order.
    #[serde(default)]
    pub steps: Vec<StepFacts>,
    /// The workflow run's attempt (`run_attempt`, 1 for the first).
    #[serde(default)]
    pub run_attempt: Option<u32>,
    /// The same check or job elsewhere on the same commit, with its conclusion.
    #[serde(default)]
    pub other_attempts: Vec<AttemptOutcome>,
}

impl CheckFacts {
    /// The first step that failed, timed out or was cancelled.
    pub fn failed_step(&self) -> Option<&StepFacts> {
        self.steps.iter().find(|s| {
            matches!(
                s.conclusion,
                Some(Conclusion::Failure | Conclusion::TimedOut | Conclusion::Cancelled)
            )
        })
    }
}

/// One recorded outcome of one test (the history ci-medic keeps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestOutcome {
    /// The test's name as the parser reports it ([`BugReport::test_name`]).
    pub test: String,
    pub head_sha: String,
    pub on_default_branch: bool,
    pub passed: bool,
}

/// The classification of one failed check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Triage {
    pub kind: FailureKind,
    /// The log lines behind `kind` (empty for `code`: the reports are its evidence; and for
    /// kinds decided by the check's facts alone), at most [`MAX_EVIDENCE`], in log order.
    pub evidence: Vec<Evidence>,
    /// Flaky evidence, whatever `kind` is (a flaky test beside a real compile error is still
    /// worth naming).
    pub flaky: Vec<FlakyEvidence>,
    /// Every rule that fired for the chosen kind, in [`RULES`] order.
    pub rules: Vec<String>,
    /// The parser's reports the decision saw.
    pub code_reports: usize,
}

impl Triage {
    /// Whether a re-run is the advice: `infrastructure` and `flaky` failures.
    pub fn rerun_advised(&self) -> bool {
        matches!(self.kind, FailureKind::Infrastructure | FailureKind::Flaky)
    }

    /// What a maintainer should do, in one sentence.
    pub fn advice(&self) -> &'static str {
        match self.kind {
            FailureKind::Code => "Fix the code: the errors above are in the repository.",
            FailureKind::Infrastructure => {
                "Re-run the failed jobs: the failure came from the CI infrastructure, not the code."
            }
            FailureKind::Flaky => {
                "Re-run the failed jobs, and consider fixing or quarantining the flaky test."
            }
            FailureKind::Configuration => {
                "Fix the workflow or repository settings: a re-run will fail the same way."
            }
        }
    }
}

/// The failing tests the reports name, deduplicated, in report order: what to record as failed
/// outcomes.
pub fn failed_tests(reports: &[BugReport]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in reports.iter().filter_map(|r| r.test_name.as_deref()) {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

/// Streaming triage: [`feed`](Triager::feed) the log in chunks of any size, then
/// [`finish`](Triager::finish) with the parser's reports and the facts.
#[derive(Debug, Default)]
pub struct Triager {
    scan: scan::Scanner,
}

impl Triager {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        self.scan.feed(chunk);
    }

    pub fn finish(
        mut self,
        reports: &[BugReport],
        facts: &CheckFacts,
        history: &[TestOutcome],
    ) -> Triage {
        self.scan.finish();
        decide(&self.scan, reports, facts, history)
    }
}

/// Classifies one failed check from its whole log. See the crate docs for the rules.
pub fn triage(
    log: &[u8],
    reports: &[BugReport],
    facts: &CheckFacts,
    history: &[TestOutcome],
) -> Triage {
    let mut t = Triager::new();
    t.feed(log);
    t.finish(reports, facts, history)
}

/// Steps the runner itself runs before the workflow's own.
const SETUP_STEPS: [&str; 3] = ["Set up job", "Initialize containers", "Set up runner"];

fn decide(
    scan: &scan::Scanner,
    reports: &[BugReport],
    facts: &CheckFacts,
    history: &[TestOutcome],
) -> Triage {
    let attempts = flaky::from_attempts(facts);
    let tests = failed_tests(reports);
    let test_evidence: Vec<FlakyEvidence> = tests
        .iter()
        .filter_map(|t| flaky::from_history(t, facts.head_sha.as_deref(), history))
        .collect();
    let mut flaky = attempts.clone();
    flaky.extend(test_evidence.iter().cloned());

    let hits = |k: FailureKind| &scan.hits[scan::slot(k)];
    let log_rules =
        |k: FailureKind| -> Vec<String> { hits(k).rules.iter().map(|s| s.to_string()).collect() };
    let out = |kind: FailureKind, mut rules: Vec<String>, evidence: Vec<Evidence>| {
        rules.sort_by_key(|id| RULES.iter().position(|r| r.id == id.as_str()));
        rules.dedup();
        Triage {
            kind,
            evidence,
            flaky: flaky.clone(),
            rules,
            code_reports: reports.len(),
        }
    };
    let from_log = |kind: FailureKind, extra: Option<&str>| {
        let mut rules = log_rules(kind);
        rules.extend(extra.map(str::to_string));
        out(kind, rules, hits(kind).evidence())
    };

    if !reports.is_empty() {
        if !attempts.is_empty() {
            let mut rules = vec!["flaky.other_attempt".to_string()];
            if !test_evidence.is_empty() {
                rules.push("flaky.history".to_string());
            }
            return out(FailureKind::Flaky, rules, Vec::new());
        }
        let all_tests_flaky = reports.iter().all(|r| r.test_name.is_some())
            && tests.iter().all(|t| {
                test_evidence
                    .iter()
                    .any(|e| e.test.as_deref() == Some(t.as_str()))
            });
        if all_tests_flaky {
            return out(FailureKind::Flaky, vec!["flaky.history".into()], Vec::new());
        }
        return out(FailureKind::Code, Vec::new(), Vec::new());
    }

    match facts.conclusion {
        Some(Conclusion::Cancelled) => {
            return from_log(FailureKind::Infrastructure, Some("check.cancelled"));
        }
        Some(Conclusion::TimedOut) => {
            return from_log(FailureKind::Infrastructure, Some("check.timed_out"));
        }
        Some(Conclusion::StartupFailure | Conclusion::ActionRequired) => {
            return from_log(FailureKind::Configuration, Some("check.startup_failure"));
        }
        _ => {}
    }
    let infra = hits(FailureKind::Infrastructure);
    let config = hits(FailureKind::Configuration);
    match (infra.count > 0, config.count > 0) {
        (true, true) if infra.last_line > config.last_line => {
            return from_log(FailureKind::Infrastructure, None);
        }
        (_, true) => return from_log(FailureKind::Configuration, None),
        (true, false) => return from_log(FailureKind::Infrastructure, None),
        (false, false) => {}
    }
    if scan.weak.count > 0 {
        let rules = scan.weak.rules.iter().map(|s| s.to_string()).collect();
        return out(FailureKind::Configuration, rules, scan.weak.evidence());
    }
    if !attempts.is_empty() {
        return out(
            FailureKind::Flaky,
            vec!["flaky.other_attempt".into()],
            Vec::new(),
        );
    }
    if facts
        .failed_step()
        .is_some_and(|s| SETUP_STEPS.contains(&s.name.as_str()))
    {
        return out(
            FailureKind::Infrastructure,
            vec!["check.setup_step".into()],
            Vec::new(),
        );
    }
    out(FailureKind::Code, Vec::new(), Vec::new())
}

#[cfg(test)]
mod tests;

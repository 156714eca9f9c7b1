//! The triage rules: one table of every rule (id, kind, the evidence it needs), and the log
//! rules' regular expressions compiled once into one ASCII, multi-line [`RegexSet`] that `scan`
//! runs over batches of cleaned lines.
//!
//! It must never hold state about a log (that is `scan`), and never grow a rule whose pattern
//! also matches what a failing test or compiler prints about the repository's own code: a rule
//! here is a claim that the failure is not the code's fault.

use std::sync::OnceLock;

use regex::bytes::RegexSet;

use crate::FailureKind;

/// Where a rule looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A regular expression over each cleaned log line.
    Log(&'static str),
    /// A regular expression over warning lines (`##[warning]`, `Warning:`), which are never
    /// evidence for the other rules: weak evidence, used only when nothing else explains the
    /// failure.
    Warning(&'static str),
    /// What GitHub says about the check run or the job (conclusion, steps, other attempts).
    Check,
    /// The per-test outcomes ci-medic has recorded.
    History,
}

/// One triage rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Stable id (`infra.network`…), reported in [`crate::Evidence::rule`].
    pub id: &'static str,
    pub kind: FailureKind,
    pub source: Source,
    /// The evidence it needs, for the documentation table.
    pub needs: &'static str,
}

use FailureKind::{Configuration, Flaky, Infrastructure};
use Source::{Check, History, Log, Warning};

/// Every rule, log rules first (their index is their index in the compiled set).
pub const RULES: &[Rule] = &[
    Rule {
        id: "infra.network",
        kind: Infrastructure,
        source: Log(
            r"\b(?:ETIMEDOUT|ECONNRESET|EAI_AGAIN|ENOTFOUND|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH)\b|getaddrinfo (?:EAI_AGAIN|ENOTFOUND)|Could not resolve host|Temporary failure in name resolution|Name or service not known|nodename nor servname provided|Connection timed out|Connection reset by peer|Read timed out|ReadTimeoutError|ConnectTimeoutError|Failed to establish a new connection|TLS handshake timeout|SSL_ERROR_SYSCALL|SSL connection has been closed unexpectedly|socket hang up|net/http: request canceled|dial tcp [^ ]+: (?:i/o timeout|connect: connection refused|lookup )|Network is unreachable|No route to host|The remote end hung up unexpectedly|RPC failed; curl|unable to access 'https?://|Failed to connect to \S+ port \d+|Could not connect to \S+:\d+|Unknown host \S|UnknownHostException|SocketTimeoutException|Connection refused: connect|network timeout at: https?://|request to https?://\S+ failed, reason:|Remote end closed connection without response|Connection broken: |IncompleteRead\(|curl: \(\d+\) (?:Could not resolve|Failed to connect|Operation timed out|Recv failure|OpenSSL SSL_)|error sending request for url|failed to lookup address information|operation timed out|The request timed out\.?$",
        ),
        needs: "A network, DNS or TLS error on a line: `ETIMEDOUT`, `ECONNRESET`, `EAI_AGAIN`, `Could not resolve host`, `Read timed out`, `TLS handshake timeout`, `socket hang up`, `dial tcp …: i/o timeout`, `RPC failed; curl`…",
    },
    Rule {
        id: "infra.registry",
        kind: Infrastructure,
        source: Log(
            r"(?i:toomanyrequests)|429 Too Many Requests|(?:HTTP error|HTTP status|[Ss]tatus code|HTTP code|HTTP/1\.[01]|HTTP/2|HTTP Error|response code|status code:) (?:429|50[0234])\b|\b50[234] (?:Bad Gateway|Service Unavailable|Service Temporarily Unavailable|Gateway Time-?out)|\b500 Internal Server Error|npm (?:ERR!|error) code E(?:429|50[0234])|npm (?:ERR!|error) (?:50[0234]|429) |ERR_PNPM_FETCH_(?:429|50[0234])|Received HTTP code (?:429|50[0234])|spurious network error|Could not transfer artifact .* from/to \S+ \(https?://|Could not (?:transfer|get) resource .* (?:timed out|status code: (?:429|50[0234]))|You have reached your pull rate limit|rate limit exceeded|Hash Sum mismatch|Some index files failed to download|E: Failed to fetch https?://|Unable to connect to \S+:https?|verifying \S+: checksum mismatch|proxy\.golang\.org.*(?:50[0234]|timeout)|There was a problem confirming the ssl certificate|Could not fetch URL https?://|WARNING: Retrying \(Retry\(total=0|Failed to download (?:action|archive|artifact)|Our services aren't available right now|An error occurred while installing \S+, and Bundler cannot continue|Gem::RemoteFetcher::FetchError|Bundler::HTTPError|error: failed to download from `https?://|failed to get `\S+` as a dependency|Error response from daemon: (?:Get|Head|received unexpected HTTP status: 5)|error pulling image configuration",
        ),
        needs: "A package or container registry answered 429/5xx or a rate limit (`npm ERR! code E503`, `Received HTTP code 502`, `toomanyrequests`, `You have reached your pull rate limit`, `spurious network error`, `Could not transfer artifact … from/to`, apt `Hash Sum mismatch`, `Gem::RemoteFetcher::FetchError`, `Error response from daemon: Get …`)",
    },
    Rule {
        id: "infra.runner_lost",
        kind: Infrastructure,
        source: Log(
            r"The runner has received a shutdown signal|lost communication with the server|The self-hosted runner: .* lost|Runner \S+ did not respond|The hosted runner encountered an error|The job was not acquired by Runner|Runner version .* is deprecated and cannot receive messages|No output has been received in the last \d+m|The runner's connection to GitHub was lost|Received request to deprovision",
        ),
        needs: "The runner went away: `The runner has received a shutdown signal`, `… lost communication with the server`, Travis' `No output has been received in the last 10m0s`",
    },
    Rule {
        id: "infra.oom",
        kind: Infrastructure,
        source: Log(
            r"exit(?:ed with)? (?:code|status) 137\b|\(signal: 9, SIGKILL: kill\)|Out of memory: Killed process|\bOOMKilled\b|JavaScript heap out of memory|fatal error: runtime: out of memory|Cannot allocate memory|java\.lang\.OutOfMemoryError: (?:Java heap space|GC overhead|Metaspace)|virtual memory exhausted|c\+\+: fatal error: Killed signal terminated program|Killed signal terminated program|^Killed$|memory allocation of \d+ bytes failed|The runner has run out of memory",
        ),
        needs: "The job or a process was killed for memory: exit code 137, `SIGKILL`, `Killed`, `JavaScript heap out of memory`, `OutOfMemoryError: Java heap space`, `Cannot allocate memory`",
    },
    Rule {
        id: "infra.disk",
        kind: Infrastructure,
        source: Log(
            r"No space left on device|\bENOSPC\b|There was not enough free space|You are running out of disk space|Disk quota exceeded|not enough space on the disk|write error: No space|out of disk space",
        ),
        needs: "The disk filled up: `No space left on device`, `ENOSPC`, `You are running out of disk space`",
    },
    Rule {
        id: "infra.timeout",
        kind: Infrastructure,
        source: Log(
            r"has exceeded the maximum execution time of|exceeded the maximum time limit for jobs|The job exceeded the maximum time limit|The action '.*' has timed out after \d+ minutes|The job has exceeded the maximum execution time",
        ),
        needs: "The job hit its time limit: `The job running on runner … has exceeded the maximum execution time of N minutes`, Travis' `The job exceeded the maximum time limit for jobs`",
    },
    Rule {
        id: "infra.cancelled",
        kind: Infrastructure,
        source: Log(
            r"^(?:Error: )?The operation was canceled\.|^Canceling since a higher priority waiting request|^The run was canceled by @|^##\[error\]The operation was canceled|Received a cancellation signal|^Cancelling job|was cancelled because .* failed$",
        ),
        needs: "The job was cancelled: `The operation was canceled.`, `Canceling since a higher priority waiting request…`",
    },
    Rule {
        id: "infra.service",
        kind: Infrastructure,
        source: Log(
            r"Service container \S+ failed|Failed to initialize container|service is unhealthy|container \S+ is unhealthy|dependency failed to start: container|Failed to initialize, \S+ service is unhealthy|the database system is starting up|Is the server running on host|could not connect to server: Connection refused|Can't connect to (?:local )?MySQL server|Error: Redis connection to \S+ failed|Cannot connect to the Docker daemon|error during connect: .*docker",
        ),
        needs: "A service container or daemon was not ready: `Service container … failed`, `… is unhealthy`, `the database system is starting up`, `Can't connect to MySQL server`, `Cannot connect to the Docker daemon`",
    },
    Rule {
        id: "infra.github_api",
        kind: Infrastructure,
        source: Log(
            r"API rate limit exceeded for|You have exceeded a secondary rate limit|secondary rate limit|remote: Internal Server Error|The requested URL returned error: (?:429|50[0234])|GitHub is having trouble",
        ),
        needs: "GitHub itself failed or throttled: `API rate limit exceeded for …`, `secondary rate limit`, `The requested URL returned error: 500`",
    },
    Rule {
        id: "config.inputs",
        kind: Configuration,
        source: Log(
            r"Input required and not supplied: |Some specified paths were not resolved, unable to cache dependencies|Unrecognized named-value: '|Unexpected value '|Required property is missing: |Unable to process command '::set-output|The `set-output` command is disabled|The `add-path` command is disabled|The `set-env` command is disabled",
        ),
        needs: "An action was given wrong or missing inputs or used a disabled command: `Input required and not supplied: token`, setup-* `Some specified paths were not resolved, unable to cache dependencies`, `The set-env command is disabled`",
    },
    Rule {
        id: "config.workflow",
        kind: Configuration,
        source: Log(
            r"Invalid workflow file|The workflow is not valid|Unable to resolve action `|Can't find 'action\.ya?ml', 'action\.ya?ml' or 'Dockerfile'|An action could not be found at the URI|Unable to resolve action|repository or version not found|Error: Unable to find any versions? (?:matching|for)|Version \S+ was not found in the local cache|The version '[^']+' with architecture '[^']+' was not found|Could not find '.*' in the (?:local|tool) cache|Error: Version \S+ with arch \S+ not found|Unable to find Node version|is not a valid version specification|This request has been automatically failed because it uses a deprecated version of `actions/|The following actions uses? node\d+ which is deprecated|No files were found with the provided path: .*No artifacts will be uploaded|Error: No files were found with the provided path",
        ),
        needs: "The workflow file or an action reference is wrong: `Invalid workflow file`, `Unable to resolve action`, `Can't find 'action.yml'`, a tool version setup-* cannot find, a deprecated `actions/*` version GitHub refuses",
    },
    Rule {
        id: "config.missing_script",
        kind: Configuration,
        source: Log(
            r"npm (?:ERR!|error) Missing script: |ERR_PNPM_NO_SCRIPT|ERR_PNPM_RECURSIVE_RUN_NO_SCRIPT|error Command \S+ not found\.|Usage Error: Couldn't find a script named|No such task: |Task '\S+' not found in root project|Couldn't find a script named",
        ),
        needs: "The workflow runs a script the project does not define: `npm ERR! Missing script: \"lint\"`, `ERR_PNPM_NO_SCRIPT`, yarn `Couldn't find a script named`, Gradle `Task 'x' not found`",
    },
    Rule {
        id: "config.secret",
        kind: Configuration,
        source: Log(
            r"Bad credentials|Parameter token or opts\.auth is required|Credentials could not be loaded|Unable to locate credentials|could not read Username for 'https://|no basic auth credentials|unauthorized: authentication required|unauthorized: incorrect username or password|Error: Username and password required|Input required and not supplied: (?:token|github-token|password|username)|Error: The (?:token|api[_-]key) (?:input )?(?:is|was) (?:empty|not set|missing)|secret \S+ is (?:empty|not set)|npm (?:ERR!|error) code ENEEDAUTH|need auth This command requires you to be logged in|Error: Could not load credentials from any providers",
        ),
        needs: "A secret or token is missing or empty (e.g. on a fork): `Bad credentials`, `Parameter token or opts.auth is required`, `Credentials could not be loaded`, `no basic auth credentials`, `npm ERR! code ENEEDAUTH`",
    },
    Rule {
        id: "config.permission",
        kind: Configuration,
        source: Log(
            r"(?i:Resource not accessible by integration)|Resource not accessible by personal access token|remote: Permission to \S+ denied to|Permission to \S+ denied to |refusing to allow a GitHub App to create or update workflow|refusing to allow an OAuth App to create or update workflow|protected branch hook declined|GH006: Protected branch update failed|The requested URL returned error: 403|denied: requested access to the resource is denied|denied: permission_denied|HttpError: Must have admin rights|403 Forbidden.*(?:ghcr\.io|docker|npm|registry)|npm (?:ERR!|error) code E403",
        ),
        needs: "The job's token may not do what the workflow asks: `Resource not accessible by integration`, `Permission to o/r denied to github-actions[bot]`, `The requested URL returned error: 403`, `denied: requested access to the resource is denied`",
    },
    Rule {
        id: "config.unexpected_input",
        kind: Configuration,
        source: Warning(r"Unexpected inputs? ?\(?s?\)? '[^']+'(?:, '[^']+')*, valid inputs are"),
        needs: "Only a warning line (`Warning: Unexpected input(s) 'x', valid inputs are [...]`): a misspelt action input, used only when no report and no other rule explains the failure",
    },
    Rule {
        id: "check.timed_out",
        kind: Infrastructure,
        source: Check,
        needs: "The check run's conclusion is `timed_out` (and the parser found no report)",
    },
    Rule {
        id: "check.cancelled",
        kind: Infrastructure,
        source: Check,
        needs: "The check run's conclusion is `cancelled` (and the parser found no report)",
    },
    Rule {
        id: "check.startup_failure",
        kind: Configuration,
        source: Check,
        needs: "The check run's conclusion is `startup_failure` or `action_required`: the workflow never ran its steps",
    },
    Rule {
        id: "check.setup_step",
        kind: Infrastructure,
        source: Check,
        needs: "The failed step is the runner's own `Set up job` or `Initialize containers`, no report and no configuration evidence",
    },
    Rule {
        id: "flaky.other_attempt",
        kind: Flaky,
        source: Check,
        needs: "The same check or job passed on the same commit in another attempt (`run_attempt`) or another job of the run",
    },
    Rule {
        id: "flaky.history",
        kind: Flaky,
        source: History,
        needs: "Every failing test the parser named has passed on this commit, or has both passed and failed on one commit or on the default branch, in ci-medic's recorded outcomes",
    },
];

/// The rules that look at log lines, in [`RULES`] order.
pub(crate) fn log_rules() -> impl Iterator<Item = (&'static Rule, &'static str)> {
    RULES.iter().filter_map(|r| match r.source {
        Log(p) => Some((r, p)),
        _ => None,
    })
}

/// The log rules compiled into one set; index `i` is the `i`-th log rule.
pub(crate) fn set() -> &'static RegexSet {
    static SET: OnceLock<RegexSet> = OnceLock::new();
    SET.get_or_init(|| {
        // ASCII classes and word boundaries: Unicode `\b` makes the lazy DFA give up and fall
        // back to a much slower engine on every line, and every phrase here is ASCII.
        regex::bytes::RegexSetBuilder::new(log_rules().map(|(_, p)| p))
            .unicode(false)
            .multi_line(true)
            .build()
            .expect("the triage rules are valid regular expressions")
    })
}

/// The warning rule (its regex and the rule).
pub(crate) fn warning_rule() -> &'static (regex::bytes::Regex, &'static Rule) {
    static RULE: OnceLock<(regex::bytes::Regex, &'static Rule)> = OnceLock::new();
    RULE.get_or_init(|| {
        let (rule, p) = RULES
            .iter()
            .find_map(|r| match r.source {
                Warning(p) => Some((r, p)),
                _ => None,
            })
            .expect("the table has a warning rule");
        (
            regex::bytes::RegexBuilder::new(p)
                .unicode(false)
                .build()
                .expect("the warning rule is a valid regular expression"),
            rule,
        )
    })
}

/// The log rules compiled one by one, by set index: only to find where a line matched, so a
/// long line's evidence shows the part that matters.
pub(crate) fn log_regex(i: usize) -> Option<&'static regex::bytes::Regex> {
    static ONE_BY_ONE: OnceLock<Vec<regex::bytes::Regex>> = OnceLock::new();
    ONE_BY_ONE
        .get_or_init(|| {
            log_rules()
                .map(|(_, p)| {
                    regex::bytes::RegexBuilder::new(p)
                        .unicode(false)
                        .build()
                        .expect("the triage rules are valid regular expressions")
                })
                .collect()
        })
        .get(i)
}

/// The log rules by set index.
pub(crate) fn log_rule(i: usize) -> Option<&'static Rule> {
    log_rules().nth(i).map(|(r, _)| r)
}

/// The rule with this id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// The rules as the markdown table of the crate documentation.
pub fn table() -> String {
    let mut s = String::from("| rule | kind | source | evidence it needs |\n|---|---|---|---|\n");
    for r in RULES {
        let source = match r.source {
            Log(_) => "log line",
            Warning(_) => "warning line",
            Check => "check run / job",
            History => "test history",
        };
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            r.id, r.kind, source, r.needs
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles_and_ids_are_unique() {
        assert_eq!(set().len(), log_rules().count());
        let mut ids: Vec<_> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }

    /// `CI_MEDIC_BLESS_TRIAGE_DOCS=1` rewrites the table in lib.rs from [`RULES`].
    #[test]
    fn documentation_table_is_the_rule_table() {
        if std::env::var_os("CI_MEDIC_BLESS_TRIAGE_DOCS").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs");
            let text = std::fs::read_to_string(path).expect("lib.rs is readable");
            let mut out = String::new();
            let mut in_table = false;
            for line in text.lines() {
                if line.starts_with("//! | rule | kind |") {
                    in_table = true;
                    for row in table().lines() {
                        out.push_str(&format!("//! {row}\n"));
                    }
                    continue;
                }
                if in_table && line.starts_with("//! |") {
                    continue;
                }
                in_table = false;
                out.push_str(line);
                out.push('\n');
            }
            std::fs::write(path, out).expect("lib.rs is writable");
            return;
        }
        let docs = include_str!("lib.rs");
        for line in table().lines().skip(2) {
            assert!(
                docs.contains(&format!("//! {line}")),
                "lib.rs docs lack the row `{line}`; paste `rules::table()` there"
            );
        }
    }

    fn hits(line: &str) -> Vec<&'static str> {
        set()
            .matches(line.as_bytes())
            .iter()
            .filter_map(log_rule)
            .map(|r| r.id)
            .collect()
    }

    #[test]
    fn lines_from_real_logs_hit_their_rule() {
        for (line, id) in [
            (
                "npm ERR! network request to https://registry.npmjs.org/react failed, reason: connect ETIMEDOUT 104.16.0.35:443",
                "infra.network",
            ),
            (
                "fatal: unable to access 'https://github.com/o/r/': Could not resolve host: github.com",
                "infra.network",
            ),
            (
                "toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
                "infra.registry",
            ),
            ("npm ERR! code E503", "infra.registry"),
            (
                "The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.",
                "infra.runner_lost",
            ),
            ("Process completed with exit code 137.", "infra.oom"),
            ("No space left on device", "infra.disk"),
            (
                "The job running on runner GitHub Actions 3 has exceeded the maximum execution time of 360 minutes.",
                "infra.timeout",
            ),
            ("The operation was canceled.", "infra.cancelled"),
            ("npm ERR! Missing script: \"lint\"", "config.missing_script"),
            (
                "Error: Resource not accessible by integration",
                "config.permission",
            ),
            ("Error: Bad credentials", "config.secret"),
        ] {
            assert!(hits(line).contains(&id), "{line:?} → {:?}", hits(line));
        }
    }

    #[test]
    fn unexpected_input_warnings_hit_the_warning_rule() {
        let (re, rule) = warning_rule();
        assert_eq!(rule.id, "config.unexpected_input");
        for line in [
            "  Warning: Unexpected input(s) 'file', valid inputs are ['entryPoint', 'args']",
            "##[warning]Unexpected input 'args', valid inputs are ['']",
            "Warning: Unexpected input(s) 'issue-close-message', 'closed-issues-label', valid inputs are ['github-token']",
        ] {
            assert!(re.is_match(line.as_bytes()), "{line}");
        }
        assert!(!re.is_match(b"Warning: unexpected end of input"));
    }

    #[test]
    fn code_failures_hit_no_rule() {
        for line in [
            "src/lib.rs:3:5: error[E0308]: mismatched types",
            "FAILED tests/test_api.py::test_timeout - AssertionError: assert 1 == 2",
            "    at Object.<anonymous> (src/app.test.ts:12:5)",
            "error TS2322: Type 'string' is not assignable to type 'number'.",
            "thread 'main' panicked at src/main.rs:4:5:",
            "Process completed with exit code 1.",
            "test result: FAILED. 3 passed; 1 failed; 0 ignored",
            "--- FAIL: TestHandler (0.00s)",
            "make: *** [Makefile:12: all] Error 2",
            "E   assert response.status_code == 200",
        ] {
            assert!(hits(line).is_empty(), "{line:?} → {:?}", hits(line));
        }
    }
}

//! Fetches the log text of a failed check run, ready for `ci_medic_parser`.
//!
//! Two sources: for GitHub Actions (`app.slug == "github-actions"`) the check run id is the job
//! id and the raw job log is downloaded (the API's 302 is followed without `Authorization`, see
//! [`crate::github`]); for any other CI the check run's own `output` (title, summary, text) and
//! its annotations are rendered as `path:line[:col]: level: message` lines the parser reads.
//!
//! # Streaming, and what is kept
//! A log is never held whole. Every chunk, as it arrives, is handed to the caller's `tee` (the
//! orchestrator feeds it to the streaming parser, so an error in the middle of a 50 MB log is
//! found like one at its end), with back-pressure: the download waits for the reader. Of the
//! log itself only an excerpt for people is kept ([`crate::capped_log`]): the first
//! `head_bytes` and the last `cap_bytes - head_bytes`, cut at line boundaries, with one marker
//! line saying how many bytes were left out between them. Only a download past
//! `max_download_bytes` (a safety ceiling on transfer time, not on memory) fails.
//!
//! Must never: interpret the log (that is the parser's job); retry an expired (410) or missing
//! (404) log — those become [`LogError::Expired`] / [`LogError::NotFound`] for the orchestrator
//! to report; hold more than about `cap_bytes` of a log in memory; alter log bytes, in the tee
//! or in the excerpt other than at the cut (binary, NUL-heavy logs pass through — the parser
//! tolerates them, and [`LogFetch::binary`] says so).

use std::fmt::Write as _;

use bytes::Bytes;
use futures::StreamExt as _;
use tokio::sync::mpsc;

use crate::capped_log::CappedLog;

use crate::github::{
    AnnotationLevel, CheckAnnotation, CheckRun, GitHubApi, GitHubError, InstallationId, RepoRef,
};

/// The slug of the App that owns GitHub Actions check runs.
pub const GITHUB_ACTIONS_SLUG: &str = "github-actions";

/// Where a check run's log text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum LogSource {
    /// A GitHub Actions job: its check run id is the job id.
    ActionsJob { job_id: u64 },
    /// Any other CI: the check run's output and annotations.
    CheckRunOutput { check_run_id: u64 },
}

impl LogSource {
    /// Picks the source from a check run (API answer or webhook `check_run` object).
    pub fn detect(run: &CheckRun) -> Self {
        Self::of(run.app.as_ref().and_then(|a| a.slug.as_deref()), run.id)
    }

    /// The same from the owning App's slug and the run's id, as a `check_run` webhook carries
    /// them: no need to read the check run again.
    pub fn of(app_slug: Option<&str>, check_run_id: u64) -> Self {
        if app_slug == Some(GITHUB_ACTIONS_SLUG) {
            // An Actions check run's id is its job's id.
            Self::ActionsJob {
                job_id: check_run_id,
            }
        } else {
            Self::CheckRunOutput { check_run_id }
        }
    }
}

/// Size bounds of one fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogLimits {
    /// At most this many log bytes are kept for people to read (plus one marker line). The
    /// tee gets every byte whatever this is.
    pub cap_bytes: usize,
    /// Of which this many from the start; the rest from the end. Clamped to `cap_bytes / 2`.
    pub head_bytes: usize,
    /// A download larger than this is abandoned with [`LogError::TooLarge`].
    pub max_download_bytes: u64,
}

impl Default for LogLimits {
    fn default() -> Self {
        Self {
            cap_bytes: 256 << 10,
            head_bytes: 64 << 10,
            max_download_bytes: 512 << 20,
        }
    }
}

/// A fetched log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFetch {
    pub source: LogSource,
    /// The log's start and end as kept for people (the whole log when it fits the cap).
    pub bytes: Vec<u8>,
    /// Size of the whole log as served.
    pub total_bytes: u64,
    /// Bytes left out in the middle; 0 when complete.
    pub omitted_bytes: u64,
    /// More than 10% NUL bytes in the first 64 KiB: probably not text. Passed through anyway.
    pub binary: bool,
}

impl LogFetch {
    pub fn truncated(&self) -> bool {
        self.omitted_bytes > 0
    }
}

/// Why no log could be fetched. The first three are final and become a comment.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// 410: GitHub no longer keeps the log (retention expired).
    #[error("the job's log has expired on GitHub")]
    Expired,
    /// 404: no log for that job (never produced, deleted, or not visible to the App).
    #[error("the job's log was not found on GitHub")]
    NotFound,
    /// The download passed the safety ceiling.
    #[error("the job's log is larger than {limit} bytes")]
    TooLarge { limit: u64 },
    /// Anything else (rate limit, server, transport) — may be retried later by the job queue.
    #[error(transparent)]
    Api(GitHubError),
}

impl From<GitHubError> for LogError {
    fn from(e: GitHubError) -> Self {
        match e {
            GitHubError::Gone => Self::Expired,
            GitHubError::NotFound => Self::NotFound,
            GitHubError::TooLarge { limit } => Self::TooLarge { limit },
            other => Self::Api(other),
        }
    }
}

/// Fetches the log of `source`, within `limits`, sending every chunk to `tee` as it arrives
/// (when given). The tee's receiver going away does not stop the fetch.
///
/// On an error the tee has had only part of the log: its reader must drop what it made of it.
pub async fn fetch_log(
    api: &dyn GitHubApi,
    inst: InstallationId,
    repo: &RepoRef,
    source: LogSource,
    limits: LogLimits,
    mut tee: Option<&mpsc::Sender<Bytes>>,
) -> Result<LogFetch, LogError> {
    let mut kept = CappedLog::with_head(limits.cap_bytes, limits.head_bytes);
    let mut push = async |chunk: Bytes| {
        kept.push(&chunk);
        if let Some(tx) = tee
            && tx.send(chunk).await.is_err()
        {
            tee = None;
        }
    };
    match source {
        LogSource::ActionsJob { job_id } => {
            let mut stream = api
                .download_job_logs(inst, repo, job_id, limits.max_download_bytes)
                .await?;
            while let Some(chunk) = stream.next().await {
                push(chunk?).await;
            }
        }
        LogSource::CheckRunOutput { check_run_id } => {
            let run = api.get_check_run(inst, repo, check_run_id).await?;
            let annotations = if run.output.annotations_count > 0 {
                api.list_check_run_annotations(inst, repo, check_run_id)
                    .await?
            } else {
                Vec::new()
            };
            push(Bytes::from(render_check_output(&run, &annotations))).await;
        }
    }
    Ok(finish(kept, source))
}

/// The kept excerpt as a [`LogFetch`].
fn finish(kept: CappedLog, source: LogSource) -> LogFetch {
    let binary = is_binary(kept.head());
    let captured = kept.finish(|omitted, total| {
        format!("[ci-medic] {omitted} bytes of this {total} byte log omitted here (log size cap)\n")
    });
    LogFetch {
        source,
        binary,
        total_bytes: captured.total_bytes,
        omitted_bytes: captured.omitted_bytes,
        bytes: captured.bytes,
    }
}

/// Renders a check run's output and annotations as log text: the title, summary and text as
/// they are, then one `path:line[:col]: level: message [title]` line per annotation (gcc
/// style, which the parser reads), further message lines indented below it.
pub fn render_check_output(run: &CheckRun, annotations: &[CheckAnnotation]) -> String {
    let mut out = String::new();
    for part in [&run.output.title, &run.output.summary, &run.output.text]
        .into_iter()
        .flatten()
    {
        out.push_str(part.trim_end());
        out.push('\n');
    }
    for a in annotations {
        let level = match a.annotation_level {
            Some(AnnotationLevel::Failure) | None => "error",
            Some(AnnotationLevel::Warning) => "warning",
            Some(AnnotationLevel::Notice) => "note",
        };
        let message = a.message.as_deref().unwrap_or("").trim();
        let mut lines = message.lines();
        let first = lines.next().unwrap_or("");
        let _ = write!(out, "{}:{}", a.path, a.start_line);
        // Columns are only meaningful on single-line annotations.
        if let Some(col) = a.start_column.filter(|_| a.start_line == a.end_line) {
            let _ = write!(out, ":{col}");
        }
        let _ = write!(out, ": {level}: {first}");
        if let Some(title) = a.title.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            let _ = write!(out, " [{title}]");
        }
        out.push('\n');
        for line in lines.chain(a.raw_details.as_deref().unwrap_or("").lines()) {
            let _ = writeln!(out, "    {line}");
        }
    }
    out
}

fn is_binary(sample: &[u8]) -> bool {
    let sample = &sample[..sample.len().min(64 * 1024)];
    !sample.is_empty() && sample.iter().filter(|&&b| b == 0).count() * 10 > sample.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::{CheckApp, CheckRunOutput, CheckStatus};

    fn run(slug: Option<&str>) -> CheckRun {
        CheckRun {
            id: 99,
            name: "test".into(),
            head_sha: "abc".into(),
            status: CheckStatus::Completed,
            conclusion: None,
            external_id: None,
            html_url: None,
            details_url: None,
            started_at: None,
            completed_at: None,
            output: CheckRunOutput::default(),
            app: slug.map(|s| CheckApp {
                id: Some(15368),
                slug: Some(s.into()),
                name: None,
            }),
            check_suite: None,
            pull_requests: vec![],
        }
    }

    /// What `fetch_log` keeps of `log` pushed in chunks of `chunk` bytes.
    fn keep(cap: usize, head: usize, log: &[u8], chunk: usize) -> LogFetch {
        let mut kept = CappedLog::with_head(cap, head);
        log.chunks(chunk).for_each(|c| kept.push(c));
        finish(kept, LogSource::ActionsJob { job_id: 1 })
    }

    #[test]
    fn detects_actions_by_app_slug() {
        assert_eq!(
            LogSource::detect(&run(Some("github-actions"))),
            LogSource::ActionsJob { job_id: 99 }
        );
        for other in [Some("circleci-checks"), None] {
            assert_eq!(
                LogSource::detect(&run(other)),
                LogSource::CheckRunOutput { check_run_id: 99 }
            );
        }
    }

    #[test]
    fn small_logs_pass_through_whole_whatever_the_chunking() {
        let log: Vec<u8> = (0..500)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        for chunk in [1, 7, 64, 10_000] {
            let f = keep(log.len(), 100, &log, chunk);
            assert_eq!(f.bytes, log);
            assert!(!f.truncated());
            assert_eq!(f.total_bytes, log.len() as u64);
        }
    }

    #[test]
    fn big_logs_keep_head_and_tail_at_line_boundaries() {
        let log: Vec<u8> = (0..10_000)
            .flat_map(|i| format!("line {i:05}\n").into_bytes())
            .collect();
        for chunk in [3, 100, 4096, log.len()] {
            let f = keep(2000, 500, &log, chunk);
            let text = String::from_utf8(f.bytes.clone()).unwrap();
            assert!(text.starts_with("line 00000\n"), "{chunk}");
            assert!(text.ends_with("line 09999\n"));
            assert!(text.contains("bytes of this 110000 byte log omitted here"));
            assert!(f.bytes.len() <= 2000 + 100);
            // Every kept line is whole.
            for line in text.lines().filter(|l| !l.starts_with("[ci-medic]")) {
                assert_eq!(line.len(), 10, "{line:?}");
            }
            let kept_lines = text.lines().count() as u64 - 1;
            assert_eq!(f.omitted_bytes + kept_lines * 11, 110_000);
        }
    }

    #[test]
    fn nul_heavy_logs_are_flagged_but_kept() {
        let f = keep(1000, 100, &[0, 0, b'a', 0, b'\n'], 2);
        assert!(f.binary);
        assert_eq!(f.bytes, vec![0, 0, b'a', 0, b'\n']);
    }

    #[test]
    fn renders_output_and_annotations_as_parseable_lines() {
        let mut r = run(Some("circleci"));
        r.output = CheckRunOutput {
            title: Some("2 failures".into()),
            summary: Some("Lint failed".into()),
            text: None,
            annotations_count: 2,
        };
        let anns = vec![
            CheckAnnotation {
                path: "src/app.py".into(),
                start_line: 12,
                end_line: 12,
                start_column: Some(5),
                end_column: Some(9),
                annotation_level: Some(AnnotationLevel::Failure),
                title: Some("F401".into()),
                message: Some("'os' imported but unused\nsecond line".into()),
                raw_details: None,
            },
            CheckAnnotation {
                path: "README.md".into(),
                start_line: 2,
                end_line: 4,
                start_column: Some(1),
                end_column: None,
                annotation_level: Some(AnnotationLevel::Warning),
                title: None,
                message: Some("Check your spelling".into()),
                raw_details: Some("Did you mean 'bananas'?".into()),
            },
        ];
        assert_eq!(
            render_check_output(&r, &anns),
            "2 failures\nLint failed\n\
             src/app.py:12:5: error: 'os' imported but unused [F401]\n    second line\n\
             README.md:2: warning: Check your spelling\n    Did you mean 'bananas'?\n"
        );
    }
}

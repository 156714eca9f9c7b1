//! Everything ci-medic writes on GitHub: the proposal comment, check-run output and annotations,
//! and the short replies to commands. All pure builders, snapshot-tested.
//!
//! There is at most one proposal comment per pull request and check name. It starts with a
//! hidden [`marker`] so the caller finds it again ([`find_marker`]) and edits it in place as the
//! proposal moves through its states ([`ProposalStatusView`]).
//!
//! Text that comes from a CI log or a person is untrusted. Before it is shown it is
//! - [`redact`]ed: tokens, keys, passwords and private key blocks become `[REDACTED]`, in prose
//!   and inside the JSON blocks alike;
//! - kept from pinging anyone ([`neutralize_mentions`]);
//! - kept inside its block: code blocks get a fence no line of the text can close
//!   ([`code_block`]), prose is markdown-escaped so HTML and markup stay literal.
//!
//! The comment stays under GitHub's 65,536-character limit, cutting the least important parts
//! first and saying so. This module must never do I/O, read the clock, or depend on the proposal
//! types: the caller fills a [`CommentView`].

use crate::repo_config::{ConfigError, Permission};
use ci_medic_parser::BugReport;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// GitHub's limit on a comment body, in characters.
pub const COMMENT_LIMIT: usize = 65_536;
/// What the comment is rendered into, in bytes. Bytes bound both characters and UTF-16 units,
/// so staying under it in bytes is safe whatever GitHub counts; the margin leaves room for the
/// caller's own footer.
pub const COMMENT_BUDGET: usize = 64_000;
/// GitHub accepts at most this many annotations per check-run request.
pub const ANNOTATIONS_PER_REQUEST: usize = 50;
/// Report lines shown in a comment before "and N more".
pub const REPORT_LINES_SHOWN: usize = 30;
/// GitHub's limit on check-run output `summary` and `text`, in characters.
pub const CHECK_OUTPUT_LIMIT: usize = 65_535;

const REDACTED: &str = "[REDACTED]";
const MARKER_PREFIX: &str = "<!-- ci-medic:check=";
const MARKER_SUFFIX: &str = " -->";

// ---------------------------------------------------------------------------------------------
// Marker

/// The hidden first line of a proposal comment for a check. The name is percent-encoded so
/// nothing in it can end the HTML comment.
pub fn marker(check_name: &str) -> String {
    let mut encoded = String::new();
    for &b in check_name.as_bytes() {
        if b.is_ascii_alphanumeric() || b" _.()/:,+[]".contains(&b) {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("{MARKER_PREFIX}{encoded}{MARKER_SUFFIX}")
}

/// The check name of a ci-medic proposal comment, read from its first line. Only the first line
/// counts: a marker quoted further down (by a person, or in a log) is not one. The caller still
/// only trusts comments authored by the app.
pub fn find_marker(body: &str) -> Option<String> {
    let first = body.trim_start().lines().next()?.trim_end();
    let encoded = first
        .strip_prefix(MARKER_PREFIX)?
        .strip_suffix(MARKER_SUFFIX)?;
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = encoded.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

// ---------------------------------------------------------------------------------------------
// Making quoted text harmless

struct Rule {
    re: Regex,
    /// Replacement; `$name` groups keep what is not secret (the key, the scheme).
    with: &'static str,
}

fn rule(re: &str, with: &'static str) -> Rule {
    Rule {
        re: Regex::new(re).expect("redaction pattern"),
        with,
    }
}

/// Ordered: whole blocks first, then recognisable token formats, then `key=value` forms.
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    vec![
        rule(
            r"(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            "-----BEGIN PRIVATE KEY----- [REDACTED] -----END PRIVATE KEY-----",
        ),
        // GitHub tokens: the classic 40-character form, and the stateless installation token
        // `ghs_APPID_JWT` (its dotted JWT taken whole, even when a log line cut it short).
        rule(
            r"\b(?:gh[pousr]_[A-Za-z0-9]+_[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]+)*|gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255})",
            REDACTED,
        ),
        rule(
            r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",
            REDACTED,
        ),
        rule(
            r#"(?i)(?P<k>aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{40}"#,
            "${k}[REDACTED]",
        ),
        rule(r"\bxox[abposr]-[A-Za-z0-9-]{10,}", REDACTED),
        rule(r"\bnpm_[A-Za-z0-9]{36}\b", REDACTED),
        rule(r"\bpypi-AgE[A-Za-z0-9_-]{50,}", REDACTED),
        // No `\b` before it: a JWT glued to a word by `_` (`session_eyJ…`) has no boundary.
        rule(
            r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
            REDACTED,
        ),
        rule(
            r"(?i)(?P<k>\b(?:bearer|basic|token)\s+)[A-Za-z0-9\-._~+/]{8,}=*",
            "${k}[REDACTED]",
        ),
        rule(
            r"(?i)(?P<k>[a-z][a-z0-9+.-]*://[^/\s:@]*:)[^@\s/]+@",
            "${k}[REDACTED]@",
        ),
        rule(
            r#"(?i)(?P<k>\b[a-z0-9_.-]*(?:password|passwd|token|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)[a-z0-9_]*["']?\s*=\s*)(?:"[^"\n]*"|'[^'\n]*'|[^\s"'&,;=\[][^\s"'&,;]*)"#,
            "${k}[REDACTED]",
        ),
        rule(
            r#"(?i)(?P<k>\b(?:[a-z0-9_.-]*(?:password|passwd|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key)[a-z0-9_]*|[a-z0-9_.-]*[_-]token)["']?\s*:\s*)(?:"[^"\n]*"|'[^'\n]*'|[^\s"'&,;\[][^\s"'&,;]*)"#,
            "${k}[REDACTED]",
        ),
    ]
});

/// Replaces secrets with `[REDACTED]`: GitHub tokens (`ghp_`, `ghs_`, `gho_`, `ghu_`, `ghr_`,
/// `github_pat_`, and the stateless `ghs_APPID_JWT` installation tokens), AWS access key ids and secret keys, private key blocks, bearer/basic
/// credentials, credentials in URLs, Slack/npm/PyPI tokens, JWTs, and the values of
/// `password=`, `token=`, `secret=`, `api_key=` and similar assignments. Errs on the side of
/// hiding: a false positive costs a word of a log, a miss leaks a credential.
pub fn redact(text: &str) -> String {
    let mut out = text.to_string();
    for rule in RULES.iter() {
        if rule.re.is_match(&out) {
            out = rule.re.replace_all(&out, rule.with).into_owned();
        }
    }
    out
}

/// [`redact`] applied to every string inside a JSON value (keys are schema, left as they are).
pub fn redact_json(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(redact(s)),
        Value::Array(items) => Value::Array(items.iter().map(redact_json).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), redact_json(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Keeps `@name` and `@org/team` from notifying anyone: a zero-width joiner goes after every
/// `@` that precedes a name character. The text still reads the same.
pub fn neutralize_mentions(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '@'
            && chars
                .peek()
                .is_some_and(|n| n.is_alphanumeric() || *n == '-')
        {
            out.push('\u{200D}');
        }
    }
    out
}

static ANSI: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]").expect("ansi pattern"));
static FENCE_RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^([ \t]*)(`{3,}|~{3,})").expect("fence pattern"));

/// Makes log text safe inside a fenced code block: terminal escapes and control characters go,
/// line endings become `\n`, and a line starting with ```` ``` ```` or `~~~` gets a zero-width
/// space so it cannot close a fence even where the fence length is fixed. Secrets are redacted
/// and mentions neutralised (GitHub does not notify from code blocks; this holds wherever the
/// text is pasted next).
pub fn escape_for_code_block(text: &str) -> String {
    let text = ANSI.replace_all(text, "");
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let text: String = text
        .chars()
        .filter(|&c| c == '\n' || c == '\t' || !c.is_control())
        .collect();
    let text = neutralize_mentions(&redact(&text));
    FENCE_RUN
        .replace_all(&text, |caps: &regex::Captures<'_>| {
            let run = &caps[2];
            let (first, rest) = run.split_at(1);
            format!("{}{first}\u{200B}{rest}", &caps[1])
        })
        .into_owned()
}

/// Log text for a plain-text field GitHub shows as it is (a check-run annotation's message
/// or title): terminal escapes and control characters go (a NUL or a bell from a log has no
/// business on GitHub), `\r\n` and `\r` become `\n` (or a space where `one_line`), tabs stay;
/// secrets are redacted.
pub fn plain_text(text: &str, one_line: bool) -> String {
    let text = ANSI.replace_all(text, "");
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let text: String = text
        .chars()
        .filter_map(|c| match c {
            '\n' if one_line => Some(' '),
            '\n' | '\t' => Some(c),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect();
    redact(&text)
}

/// A fenced code block holding `content` verbatim, with a fence longer than any backtick run
/// inside, so no line of the content can close it.
pub fn code_block(lang: &str, content: &str) -> String {
    let fence = "`".repeat((longest_run(content, '`') + 1).max(3));
    let newline = if content.ends_with('\n') { "" } else { "\n" };
    format!("{fence}{lang}\n{content}{newline}{fence}\n")
}

/// An inline code span nothing inside can close; newlines become spaces, mentions are
/// neutralised.
pub fn inline_code(text: &str) -> String {
    let text: String = neutralize_mentions(text)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let fence = "`".repeat(longest_run(&text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') || text.trim().is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// Untrusted prose for one line of markdown: secrets redacted, mentions neutralised, markdown
/// and HTML characters backslash-escaped so they show literally, newlines flattened, length cut.
pub fn escape_inline(text: &str, max_chars: usize) -> String {
    let text = cut(&redact(text), max_chars);
    let mut out = String::with_capacity(text.len());
    for c in neutralize_mentions(&text).chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '#' | '+' | '-' | '.'
            | '!' | '|' | '<' | '>' | '~' | '&' | '"' | '\'' | ':' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Text for inside an HTML element (`<summary>`), where markdown escapes would show literally.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in neutralize_mentions(&redact(text)).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for ch in text.chars() {
        if ch == c {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// At most `max` characters, with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((i, _)) => format!("{}…", &text[..i]),
    }
}

/// The last `max` bytes of `text`, from a line start when possible.
fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    match text[start..].find('\n') {
        Some(i) if i + 1 < text.len() - start => &text[start + i + 1..],
        _ => &text[start..],
    }
}

fn short_sha(sha: &str) -> String {
    sha.chars().take(7).collect()
}

// ---------------------------------------------------------------------------------------------
// The proposal comment

/// Where a proposal stands, with what a maintainer needs to see at that step. Times are strings
/// the caller formats (this crate has no clock).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ProposalStatusView {
    /// Waiting for `/approve` or `/reject`.
    Proposed,
    /// Approved; the fix agent has not started yet.
    Approved { by: String, at: String },
    /// Rejected; nothing will be changed.
    Rejected {
        by: String,
        at: String,
        reason: Option<String>,
    },
    /// The fix agent is writing (and, with `verify: docker`, building) the patch.
    Fixing { approved_by: String },
    /// The patch was refused before any commit: by the guard (rule named), the confidence
    /// gate, or the sandbox build.
    Refused { rule: String, detail: String },
    /// One commit was pushed to the pull request's branch; CI has not reported yet.
    Pushed {
        commit_sha: String,
        files: Vec<String>,
    },
    /// CI is running the check on the pushed commit.
    Verifying {
        commit_sha: String,
        run_url: Option<String>,
    },
    /// The check passed on the pushed commit.
    Executed {
        commit_sha: String,
        run_url: Option<String>,
    },
    /// The check still fails on the pushed commit.
    Failed {
        commit_sha: String,
        run_url: Option<String>,
        /// The id of the follow-up proposal, when one is being made.
        next_dds_id: Option<String>,
    },
    /// ci-medic stops trying on this check.
    MaxAttemptsReached { attempts: u32, max_attempts: u32 },
    /// CI never reported on the pushed commit within `minutes`; ci-medic stopped watching.
    NoVerdict {
        commit_sha: String,
        #[serde(default)]
        minutes: u32,
        /// Records written when the wait was six fixed hours hold it here instead of
        /// `minutes`; read, never written.
        #[serde(default, skip_serializing)]
        hours: u32,
    },
    /// The pull request moved on (new commits) so this proposal no longer applies.
    Stale { head_sha: String },
    /// The logs were read but no fixable error was found in them, or reading them failed.
    AnalysisFailed { reason: String },
    /// The logs could not be fetched (expired, deleted, too large).
    LogsUnavailable { reason: String },
    /// The failure is not the code's (see [`CommentView::triage`]); nothing is proposed.
    NotCode,
    /// The failed jobs are being re-run; `by` is `None` for an automatic re-run.
    RerunRequested { by: Option<String>, at: String },
    /// The re-run passed.
    RerunPassed { run_url: Option<String> },
    /// The re-run failed too; ci-medic analyses that failure.
    RerunFailed { run_url: Option<String> },
    /// The re-run ended `cancelled`, `skipped` or `stale`: no verdict; `/rerun` is offered again.
    RerunCancelled {
        conclusion: String,
        run_url: Option<String>,
    },
    /// No result of the re-run within `minutes`; ci-medic stopped waiting.
    RerunNoVerdict { minutes: u32 },
}

impl ProposalStatusView {
    /// A short name for the state, as shown after **Status:**.
    pub fn label(&self) -> &'static str {
        match self {
            ProposalStatusView::Proposed => "proposed",
            ProposalStatusView::Approved { .. } => "approved",
            ProposalStatusView::Rejected { .. } => "rejected",
            ProposalStatusView::Fixing { .. } => "fixing",
            ProposalStatusView::Refused { .. } => "patch refused",
            ProposalStatusView::Pushed { .. } => "pushed",
            ProposalStatusView::Verifying { .. } => "verifying",
            ProposalStatusView::Executed { .. } => "executed",
            ProposalStatusView::Failed { .. } => "failed",
            ProposalStatusView::MaxAttemptsReached { .. } => "stopped",
            ProposalStatusView::NoVerdict { .. } => "no verdict",
            ProposalStatusView::Stale { .. } => "stale",
            ProposalStatusView::AnalysisFailed { .. } => "analysis failed",
            ProposalStatusView::LogsUnavailable { .. } => "logs unavailable",
            ProposalStatusView::NotCode => "not the code",
            ProposalStatusView::RerunRequested { .. } => "re-run requested",
            ProposalStatusView::RerunPassed { .. } => "re-run passed",
            ProposalStatusView::RerunFailed { .. } => "re-run failed",
            ProposalStatusView::RerunCancelled { .. } => "re-run cancelled",
            ProposalStatusView::RerunNoVerdict { .. } => "re-run without verdict",
        }
    }

    /// Whether `/approve` and `/reject` still apply.
    pub fn is_open(&self) -> bool {
        matches!(self, ProposalStatusView::Proposed)
    }
}

/// One line of the proposal's history, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub at: String,
    pub text: String,
}

/// What the proposal comment shows, decoupled from the proposal types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommentView {
    pub check_name: String,
    pub head_sha: String,
    pub pr_number: u64,
    pub dds_id: String,
    pub status: ProposalStatusView,
    /// One line per bug report, already formatted by the formatter. Untrusted: they quote logs.
    pub report_lines: Vec<String>,
    /// Findings at further locations the parser's report cap left out of `report_lines`.
    #[serde(default)]
    pub reports_left_out: u64,
    /// The Fix Packet v2; `Null` when there is none (analysis failed).
    pub fix_packet_json: serde_json::Value,
    /// The code_fix DDS v2; `Null` when there is none.
    pub dds_json: serde_json::Value,
    /// Files with errors that the fix leaves alone (protected, or beyond the file budget).
    pub out_of_scope_files: Vec<String>,
    pub history: Vec<HistoryEntry>,
    /// The part of the log the errors were read from.
    pub log_excerpt: Option<String>,
    /// Why the failure is not the code's, when it is not.
    #[serde(default)]
    pub triage: Option<TriageView>,
}

/// A failure that is not the code's: its kind, the log lines that say so, and whether
/// `/rerun` can re-run it. Log text is untrusted: it is cleaned and redacted when rendered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriageView {
    pub kind: ci_medic_triage::FailureKind,
    /// `(line number in the log, line)`, at most [`ci_medic_triage::MAX_EVIDENCE`].
    pub evidence: Vec<(usize, String)>,
    /// One sentence per piece of flaky evidence (a test or the check, and where it passed).
    pub flaky: Vec<String>,
    /// The rules that decided, by id.
    pub rules: Vec<String>,
    /// Whether the check is a GitHub Actions job, which `/rerun` can re-run.
    pub actions_job: bool,
}

/// Evidence lines shown in a comment; the triage bounds them already, this bounds the comment.
const EVIDENCE_LINES_SHOWN: usize = 10;
const EVIDENCE_LINE_CHARS: usize = 500;

#[derive(Debug, Clone, Copy, PartialEq)]
enum JsonMode {
    Pretty,
    Compact,
    Omitted,
}

/// How much of each part to show; [`render_comment`] tries these from most to least.
#[derive(Debug, Clone, Copy)]
struct Layout {
    lines: usize,
    line_chars: usize,
    excerpt_bytes: usize,
    history: usize,
    packet: JsonMode,
    dds: JsonMode,
}

const LAYOUTS: [Layout; 8] = [
    Layout {
        lines: REPORT_LINES_SHOWN,
        line_chars: 1000,
        excerpt_bytes: 20_000,
        history: 50,
        packet: JsonMode::Pretty,
        dds: JsonMode::Pretty,
    },
    Layout {
        lines: 10,
        line_chars: 300,
        excerpt_bytes: 20_000,
        history: 50,
        packet: JsonMode::Pretty,
        dds: JsonMode::Pretty,
    },
    Layout {
        lines: 10,
        line_chars: 300,
        excerpt_bytes: 4_000,
        history: 20,
        packet: JsonMode::Pretty,
        dds: JsonMode::Pretty,
    },
    Layout {
        lines: 10,
        line_chars: 300,
        excerpt_bytes: 0,
        history: 20,
        packet: JsonMode::Pretty,
        dds: JsonMode::Pretty,
    },
    Layout {
        lines: 0,
        line_chars: 300,
        excerpt_bytes: 0,
        history: 10,
        packet: JsonMode::Pretty,
        dds: JsonMode::Pretty,
    },
    Layout {
        lines: 0,
        line_chars: 300,
        excerpt_bytes: 0,
        history: 10,
        packet: JsonMode::Compact,
        dds: JsonMode::Compact,
    },
    Layout {
        lines: 0,
        line_chars: 300,
        excerpt_bytes: 0,
        history: 10,
        packet: JsonMode::Omitted,
        dds: JsonMode::Pretty,
    },
    Layout {
        lines: 0,
        line_chars: 300,
        excerpt_bytes: 0,
        history: 10,
        packet: JsonMode::Omitted,
        dds: JsonMode::Omitted,
    },
];

/// The whole proposal comment, marker first, under [`COMMENT_BUDGET`] bytes.
pub fn render_comment(view: &CommentView) -> String {
    let packet = redact_json(&view.fix_packet_json);
    let dds = redact_json(&view.dds_json);
    let excerpt = view.log_excerpt.as_deref().map(escape_for_code_block);
    let mut last = String::new();
    for layout in LAYOUTS {
        last = render_with(view, &packet, &dds, excerpt.as_deref(), layout);
        if last.len() <= COMMENT_BUDGET {
            return last;
        }
    }
    // Only the bounded parts are left; cut hard rather than exceed the limit.
    let note = "\n\n*(cut: this comment reached GitHub's size limit)*\n";
    let mut end = COMMENT_BUDGET - note.len();
    while !last.is_char_boundary(end) {
        end -= 1;
    }
    last.truncate(end);
    last.push_str(note);
    last
}

fn render_with(
    view: &CommentView,
    packet: &serde_json::Value,
    dds: &serde_json::Value,
    excerpt: Option<&str>,
    layout: Layout,
) -> String {
    let mut cuts: Vec<String> = Vec::new();
    let check = inline_code(&cut(&view.check_name, 200));
    let sha = inline_code(&short_sha(&view.head_sha));
    let dds_id = cut(&view.dds_id, 64);
    let errors = view.report_lines.len();
    let mut out = marker(&view.check_name);
    out.push('\n');
    let found = match (&view.triage, errors) {
        (Some(t), _) => format!("A failure that is **not the code's** ({})", t.kind),
        (None, 0) => "No fixable error found".to_string(),
        (None, 1) => "**1 error** found".to_string(),
        (None, n) => format!("**{n} errors** found"),
    };
    out.push_str(&format!(
        "### ci-medic: {check} failed on {sha}\n\n{found} in check {check} at commit {sha} (pull request #{}).\n\n",
        view.pr_number
    ));
    if let Some(note) = left_out_note(view) {
        out.push_str(&note);
        out.push_str("\n\n");
    }
    out.push_str(&status_section(&view.status, &dds_id));
    if let Some(t) = &view.triage {
        out.push_str(&triage_section(t, &view.status));
    }

    if errors > 0 && layout.lines > 0 {
        let shown: Vec<String> = view
            .report_lines
            .iter()
            .take(layout.lines)
            .map(|l| cut(&l.replace(['\r', '\n'], " "), layout.line_chars))
            .collect();
        out.push('\n');
        out.push_str(&code_block(
            "text",
            &escape_for_code_block(&shown.join("\n")),
        ));
        if errors > shown.len() {
            out.push_str(&format!(
                "\n…and {} more in the Fix Packet.\n",
                errors - shown.len()
            ));
            if shown.len() < REPORT_LINES_SHOWN.min(errors) {
                cuts.push(format!("{} of {errors} report lines shown", shown.len()));
            }
        }
    } else if errors > 0 {
        out.push_str(&format!(
            "\nThe {errors} report lines are in the Fix Packet.\n"
        ));
        cuts.push("report lines left out".into());
    }

    if !view.out_of_scope_files.is_empty() {
        out.push_str("\n**Left for you** (errors in files the fix may not change):\n");
        for file in view.out_of_scope_files.iter().take(50) {
            out.push_str(&format!("- {}\n", inline_code(&cut(file, 300))));
        }
        if view.out_of_scope_files.len() > 50 {
            out.push_str(&format!(
                "- …and {} more\n",
                view.out_of_scope_files.len() - 50
            ));
        }
    }

    if let Some(excerpt) = excerpt.filter(|e| !e.trim().is_empty()) {
        if layout.excerpt_bytes == 0 {
            cuts.push("log excerpt left out".into());
        } else {
            let shown = tail(excerpt, layout.excerpt_bytes);
            if shown.len() < excerpt.len() {
                cuts.push(format!("log excerpt cut to its last {} bytes", shown.len()));
            }
            out.push_str("\n<details><summary>Log excerpt</summary>\n\n");
            out.push_str(&code_block("text", shown));
            out.push_str("\n</details>\n");
        }
    }

    out.push_str(&json_section(
        "Fix Packet v2",
        packet,
        layout.packet,
        &mut cuts,
    ));
    out.push_str(&json_section(
        &format!("code_fix DDS v2 ({})", escape_html(&dds_id)),
        dds,
        layout.dds,
        &mut cuts,
    ));

    if !view.history.is_empty() {
        let skipped = view.history.len().saturating_sub(layout.history);
        out.push_str(&format!(
            "\n<details><summary>History ({})</summary>\n\n",
            view.history.len()
        ));
        if skipped > 0 {
            out.push_str(&format!("- …{skipped} earlier entries\n"));
        }
        for entry in &view.history[skipped..] {
            out.push_str(&format!(
                "- {} — {}\n",
                escape_inline(&entry.at, 40),
                escape_inline(&entry.text, 500)
            ));
        }
        out.push_str("\n</details>\n");
    }

    if !cuts.is_empty() {
        out.push_str(&format!(
            "\n> ✂️ **Shortened to fit GitHub's comment size limit:** {}.\n",
            cuts.join("; ")
        ));
    }
    out
}

fn json_section(
    title: &str,
    value: &serde_json::Value,
    mode: JsonMode,
    cuts: &mut Vec<String>,
) -> String {
    if value.is_null() {
        return String::new();
    }
    let text = match mode {
        JsonMode::Pretty => serde_json::to_string_pretty(value),
        JsonMode::Compact => serde_json::to_string(value),
        JsonMode::Omitted => {
            let size = serde_json::to_string(value).map_or(0, |s| s.len());
            cuts.push(format!(
                "the {title} ({size} bytes) is too large to show; ci-medic keeps it"
            ));
            return format!("\n*The {title} is too large for a comment ({size} bytes).*\n");
        }
    };
    let Ok(text) = text else {
        return String::new();
    };
    if mode == JsonMode::Compact {
        cuts.push(format!("the {title} is shown compact"));
    }
    format!(
        "\n<details><summary>{title}</summary>\n\n{}\n</details>\n",
        code_block("json", &text)
    )
}

fn status_section(status: &ProposalStatusView, dds_id: &str) -> String {
    let id = inline_code(dds_id);
    let who = |login: &str| inline_code(&format!("@{}", cut(login, 40)));
    let commit = |sha: &str| inline_code(&short_sha(sha));
    let run = |url: &Option<String>| match url.as_deref().and_then(safe_url) {
        Some(url) => format!(" ([run]({url}))"),
        None => String::new(),
    };
    let (icon, text, act) = match status {
        ProposalStatusView::Proposed => (
            "🩺",
            format!("fix {id} proposed, waiting for a maintainer."),
            format!(
                "**To act**, comment on this pull request:\n- `/approve {dds_id}` to let ci-medic write the fix and push it as one commit\n- `/reject {dds_id} <reason>` to drop it\n"
            ),
        ),
        ProposalStatusView::Approved { by, at } => (
            "✅",
            format!(
                "approved by {} at {}; the fix is queued.",
                who(by),
                escape_inline(at, 40)
            ),
            String::new(),
        ),
        ProposalStatusView::Rejected { by, at, reason } => (
            "🚫",
            format!(
                "rejected by {} at {}{}. Nothing will be changed.",
                who(by),
                escape_inline(at, 40),
                reason
                    .as_deref()
                    .map(|r| format!(": “{}”", escape_inline(r, 500)))
                    .unwrap_or_default()
            ),
            "`/retry` analyses the latest failure again.\n".to_string(),
        ),
        ProposalStatusView::Fixing { approved_by } => (
            "🛠️",
            format!("approved by {}; writing the patch.", who(approved_by)),
            String::new(),
        ),
        ProposalStatusView::Refused { rule, detail } => (
            "⛔",
            format!(
                "the patch was refused before any commit by {}: {}. Nothing was pushed.",
                inline_code(&cut(rule, 80)),
                escape_inline(detail, 500)
            ),
            "`/retry` analyses the latest failure again; or fix it by hand.\n".to_string(),
        ),
        ProposalStatusView::Pushed { commit_sha, files } => (
            "📤",
            format!(
                "pushed commit {} changing {}; waiting for CI.",
                commit(commit_sha),
                match files.len() {
                    0 => "no file".to_string(),
                    n if n <= 5 => files
                        .iter()
                        .map(|f| inline_code(&cut(f, 200)))
                        .collect::<Vec<_>>()
                        .join(", "),
                    n => format!("{n} files"),
                }
            ),
            String::new(),
        ),
        ProposalStatusView::Verifying {
            commit_sha,
            run_url,
        } => (
            "⏳",
            format!(
                "CI is running the check on {}{}.",
                commit(commit_sha),
                run(run_url)
            ),
            String::new(),
        ),
        ProposalStatusView::Executed {
            commit_sha,
            run_url,
        } => (
            "🎉",
            format!(
                "the check passed on {}{}. Done.",
                commit(commit_sha),
                run(run_url)
            ),
            String::new(),
        ),
        ProposalStatusView::Failed {
            commit_sha,
            run_url,
            next_dds_id,
        } => (
            "❌",
            format!(
                "the check still fails on {}{}.",
                commit(commit_sha),
                run(run_url)
            ),
            match next_dds_id {
                Some(next) => format!(
                    "A new proposal, {}, follows in this comment.\n",
                    inline_code(&cut(next, 64))
                ),
                None => "`/retry` analyses the failure again.\n".to_string(),
            },
        ),
        ProposalStatusView::MaxAttemptsReached {
            attempts,
            max_attempts,
        } => (
            "🛑",
            format!(
                "stopped after {attempts} of {max_attempts} attempts (`fix.max_attempts` in `.github/ci-medic.yml`); this one needs a person."
            ),
            String::new(),
        ),
        ProposalStatusView::NoVerdict {
            commit_sha,
            minutes,
            hours,
        } => (
            "⌛",
            format!(
                "no result for the check on {} within {}; ci-medic stopped watching.",
                commit(commit_sha),
                minutes_text(if *minutes > 0 { *minutes } else { hours * 60 })
            ),
            "Re-run the check, then `/retry` if it still fails.\n".to_string(),
        ),
        ProposalStatusView::Stale { head_sha } => (
            "💤",
            format!(
                "stale: the pull request moved to {} since this was proposed, so it will not be applied.",
                commit(head_sha)
            ),
            "ci-medic analyses the next failure of this check on its own; `/retry` does it now.\n"
                .to_string(),
        ),
        ProposalStatusView::AnalysisFailed { reason } => (
            "🔍",
            format!("no fix proposed: {}.", escape_inline(reason, 500)),
            "`/retry` analyses the latest failure again.\n".to_string(),
        ),
        ProposalStatusView::LogsUnavailable { reason } => (
            "📭",
            format!(
                "the logs could not be read: {}.",
                escape_inline(reason, 500)
            ),
            "Re-run the check, then `/retry`.\n".to_string(),
        ),
        ProposalStatusView::NotCode => (
            "🔁",
            "no code fix proposed: this failure does not come from the code.".to_string(),
            String::new(),
        ),
        ProposalStatusView::RerunRequested { by, at } => (
            "⏳",
            match by {
                Some(login) => format!(
                    "re-run requested by {} at {}; waiting for the new attempt.",
                    who(login),
                    escape_inline(at, 40)
                ),
                None => format!(
                    "re-run requested automatically (`triage.auto_rerun`) at {}; waiting for the new attempt.",
                    escape_inline(at, 40)
                ),
            },
            String::new(),
        ),
        ProposalStatusView::RerunPassed { run_url } => (
            "🎉",
            format!("the re-run passed{}. Done.", run(run_url)),
            String::new(),
        ),
        ProposalStatusView::RerunFailed { run_url } => (
            "❌",
            format!(
                "the re-run failed too{}; ci-medic analyses the new failure.",
                run(run_url)
            ),
            String::new(),
        ),
        ProposalStatusView::RerunCancelled {
            conclusion,
            run_url,
        } => (
            "🚫",
            format!(
                "the re-run was cancelled{} (conclusion {}), so it says nothing about the failure.",
                run(run_url),
                inline_code(&cut(conclusion, 40))
            ),
            String::new(),
        ),
        ProposalStatusView::RerunNoVerdict { minutes } => (
            "⌛",
            format!(
                "no result of the re-run arrived within {}; ci-medic stopped waiting for it.",
                minutes_text(*minutes)
            ),
            String::new(),
        ),
    };
    let mut out = format!("**Status:** {icon} **{}** — {text}\n", status.label());
    if !act.is_empty() {
        out.push('\n');
        out.push_str(&act);
    }
    out
}

/// The kind of a failure that is not the code's, its evidence, and what to do about it.
fn triage_section(t: &TriageView, status: &ProposalStatusView) -> String {
    use ci_medic_triage::FailureKind as K;
    let mut out = format!(
        "\n**Kind:** `{}` — {}\n",
        t.kind,
        match t.kind {
            K::Infrastructure =>
                "the CI infrastructure failed (network, registry, runner, memory, disk, time limit or a service), not the code.",
            K::Flaky => "the same code has passed: the failure does not come back every time.",
            K::Configuration =>
                "the workflow or the repository's settings are wrong (inputs, a script, a secret, a permission), not the code.",
            K::Code => "the code.",
        }
    );
    if !t.evidence.is_empty() {
        let lines: Vec<String> = t
            .evidence
            .iter()
            .take(EVIDENCE_LINES_SHOWN)
            .map(|(n, text)| {
                format!(
                    "line {n}: {}",
                    cut(&text.replace(['\r', '\n'], " "), EVIDENCE_LINE_CHARS)
                )
            })
            .collect();
        out.push_str("\n**Evidence** from the log:\n\n");
        out.push_str(&code_block(
            "text",
            &escape_for_code_block(&lines.join("\n")),
        ));
    }
    if !t.flaky.is_empty() {
        out.push_str("\n**Flaky evidence:**\n");
        for sentence in t.flaky.iter().take(EVIDENCE_LINES_SHOWN) {
            out.push_str(&format!(
                "- {}\n",
                escape_inline(sentence, EVIDENCE_LINE_CHARS)
            ));
        }
    }
    if !t.rules.is_empty() {
        let rules: Vec<String> = t
            .rules
            .iter()
            .take(20)
            .map(|r| inline_code(&cut(r, 60)))
            .collect();
        out.push_str(&format!("\nRules that matched: {}.\n", rules.join(", ")));
    }
    // What to do, while nothing is under way (again, once a re-run ended without a verdict).
    if matches!(
        status,
        ProposalStatusView::NotCode
            | ProposalStatusView::RerunCancelled { .. }
            | ProposalStatusView::RerunNoVerdict { .. }
    ) {
        let advice = match t.kind {
            K::Infrastructure => "Re-run the failed jobs; nothing in the code needs to change.",
            K::Flaky => {
                "Re-run the failed jobs, and consider fixing or quarantining the flaky test."
            }
            K::Configuration => {
                "Fix the workflow or the repository's settings: a re-run alone will fail the same way."
            }
            K::Code => "Fix the code.",
        };
        out.push_str(&format!("\n**To act:** {advice}\n"));
        if t.actions_job {
            out.push_str("- `/rerun` re-runs this check's failed GitHub Actions jobs (needs the permission set in `.github/ci-medic.yml`, `approvers`); ci-medic reports the new attempt's result here.\n");
        } else {
            out.push_str("- This check is not a GitHub Actions job, so ci-medic cannot re-run it: re-run it from its CI's own page.\n");
        }
        out.push_str("- `/retry` analyses the latest failure again.\n");
    }
    out
}

/// A timeout in minutes as people read it: whole hours as hours.
pub fn minutes_text(minutes: u32) -> String {
    match minutes {
        1 => "1 minute".to_string(),
        m if m >= 60 && m % 60 == 0 => match m / 60 {
            1 => "1 hour".to_string(),
            h => format!("{h} hours"),
        },
        m => format!("{m} minutes"),
    }
}

/// An `http(s)` URL without characters that could end a markdown link.
fn safe_url(url: &str) -> Option<&str> {
    let ok = (url.starts_with("https://") || url.starts_with("http://"))
        && !url
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "()<>\"'`[]".contains(c));
    ok.then_some(url)
}

// ---------------------------------------------------------------------------------------------
// Check runs

/// A check-run annotation with the REST API's field names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// Only sent when `start_line == end_line`, as the API requires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_column: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
    pub annotation_level: AnnotationLevel,
    pub title: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnnotationLevel {
    Notice,
    Warning,
    Failure,
}

/// GitHub's limit on an annotation title.
const ANNOTATION_TITLE_CHARS: usize = 255;
/// Annotation messages are kept short: the comment holds the details.
const ANNOTATION_MESSAGE_CHARS: usize = 4_000;

/// The `failure` annotation of one report. They are sent in report order, at most
/// [`ANNOTATIONS_PER_REQUEST`] a request: the first batch with the check run's creation, the
/// others with updates.
pub fn annotation(report: &BugReport) -> Annotation {
    let line = report.line_number.max(1);
    let mut title = report.error_type.as_str().to_string();
    if let Some(rule) = &report.rule {
        title.push(' ');
        title.push_str(rule);
    }
    if let Some(tool) = &report.tool {
        title.push_str(&format!(" ({tool})"));
    }
    let mut message = plain_text(&report.message, false);
    if let Some(test) = &report.test_name {
        message.push_str(&format!("\nFailing test: {}", plain_text(test, true)));
    }
    Annotation {
        path: report.file_path.clone(),
        start_line: line,
        end_line: line,
        start_column: report.column,
        end_column: report.column,
        annotation_level: AnnotationLevel::Failure,
        title: cut(&plain_text(&title, true), ANNOTATION_TITLE_CHARS - 1),
        message: cut(&message, ANNOTATION_MESSAGE_CHARS),
    }
}

/// The check run's `output` object. Annotations are sent separately, in batches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckRunOutput {
    pub title: String,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// What the comment and the check run say when the parser's report cap left findings out: the
/// proposal covers the first errors only, and more will show once they are fixed.
fn left_out_note(view: &CommentView) -> Option<String> {
    (view.reports_left_out > 0).then(|| {
        format!(
            "**More errors were found than shown:** the log reports errors at more than {} \
             locations; ci-medic kept the first {} and left {} further finding(s) out. \
             Once these are fixed, the next run shows the rest.",
            view.report_lines.len(),
            view.report_lines.len(),
            view.reports_left_out
        )
    })
}

/// ci-medic's check run for a failed check: a title with the count, a summary with the status
/// and a link to the proposal comment, and the report lines as text.
pub fn check_run_output(view: &CommentView, comment_url: Option<&str>) -> CheckRunOutput {
    let errors = view.report_lines.len();
    let title = cut(
        &format!(
            "{} in {}",
            match errors {
                0 => "no fixable error".to_string(),
                1 => "1 error".to_string(),
                n => format!("{n} errors"),
            },
            view.check_name.replace(['\r', '\n'], " ")
        ),
        200,
    );
    let mut summary = format!(
        "**Status:** {} — proposal {}.\n",
        view.status.label(),
        inline_code(&cut(&view.dds_id, 64))
    );
    if let Some(note) = left_out_note(view) {
        summary.push('\n');
        summary.push_str(&note);
        summary.push('\n');
    }
    match comment_url.and_then(safe_url) {
        Some(url) => summary.push_str(&format!(
            "\nThe proposal, its Fix Packet and how to approve it are in [the pull request comment]({url}).\n"
        )),
        None => summary.push_str("\nThe proposal is in ci-medic's comment on the pull request.\n"),
    }
    let text = (errors > 0).then(|| {
        let lines: Vec<String> = view
            .report_lines
            .iter()
            .map(|l| cut(&l.replace(['\r', '\n'], " "), 1000))
            .collect();
        let body = escape_for_code_block(&lines.join("\n"));
        let block = code_block("text", tail(&body, CHECK_OUTPUT_LIMIT - 200));
        if block.len() > CHECK_OUTPUT_LIMIT {
            cut(&block, CHECK_OUTPUT_LIMIT - 200)
        } else {
            block
        }
    });
    CheckRunOutput {
        title,
        summary,
        text,
    }
}

// ---------------------------------------------------------------------------------------------
// Replies to commands and events

/// `/approve` or `/reject` from someone below `approvers.min_permission`.
pub fn not_permitted_reply(login: &str, has: Permission, needs: Permission) -> String {
    format!(
        "{} has `{has}` permission on this repository; approving or rejecting a ci-medic fix needs `{needs}` (`approvers.min_permission` in `.github/ci-medic.yml`).",
        inline_code(&format!("@{}", cut(login, 40)))
    )
}

/// `/approve` or `/reject` from someone not listed in `approvers.users`.
pub fn not_an_approver_reply(login: &str) -> String {
    format!(
        "{} is not in `approvers.users` in `.github/ci-medic.yml`, so cannot approve or reject ci-medic fixes here.",
        inline_code(&format!("@{}", cut(login, 40)))
    )
}

/// The pull request's author approving their own fix while `approvers.allow_author` is false.
pub fn author_not_allowed_reply() -> String {
    "The pull request's author cannot approve ci-medic fixes on it here (`approvers.allow_author: false` in `.github/ci-medic.yml`). Another maintainer can.".to_string()
}

/// `/approve` or `/reject` without an id when no proposal is open.
pub fn no_open_proposal_reply() -> String {
    "There is no open ci-medic proposal on this pull request.".to_string()
}

/// An id that names no proposal on this pull request.
pub fn unknown_proposal_reply(id: &str) -> String {
    format!(
        "There is no ci-medic proposal {} on this pull request.",
        inline_code(&cut(id, 64))
    )
}

/// A command on a proposal that was already decided or has moved on.
pub fn already_decided_reply(id: &str, status: &ProposalStatusView) -> String {
    format!(
        "Proposal {} is already **{}**; there is nothing left to approve or reject.",
        inline_code(&cut(id, 64)),
        status.label()
    )
}

/// Acknowledges an approval.
pub fn approved_reply(id: &str, by: &str) -> String {
    format!(
        "Proposal {} approved by {}. ci-medic is writing the fix; the proposal comment follows its progress.",
        inline_code(&cut(id, 64)),
        inline_code(&format!("@{}", cut(by, 40)))
    )
}

/// Acknowledges a rejection.
pub fn rejected_reply(id: &str, by: &str) -> String {
    format!(
        "Proposal {} rejected by {}. Nothing will be changed.",
        inline_code(&cut(id, 64)),
        inline_code(&format!("@{}", cut(by, 40)))
    )
}

/// The patch was refused before commit (guard rule, confidence gate, sandbox).
pub fn refused_reply(id: &str, rule: &str, detail: &str) -> String {
    format!(
        "ci-medic did not push a fix for {}: refused by {} — {}. `/retry` analyses the failure again.",
        inline_code(&cut(id, 64)),
        inline_code(&cut(rule, 80)),
        escape_inline(detail, 500)
    )
}

/// A command on a proposal made for an older head of the pull request.
pub fn stale_reply(id: &str, proposed_for: &str, head_sha: &str) -> String {
    format!(
        "Proposal {} was made for commit {}, but the pull request is now at {}, so it will not be applied. ci-medic analyses the next failure on its own; `/retry` does it now.",
        inline_code(&cut(id, 64)),
        inline_code(&short_sha(proposed_for)),
        inline_code(&short_sha(head_sha))
    )
}

/// `/retry` accepted.
pub fn retry_reply(check_name: &str) -> String {
    format!(
        "Analysing the latest failure of {} again.",
        inline_code(&cut(check_name, 200))
    )
}

/// `/retry` for a check whose approved fix is being written, pushed or checked by CI.
pub fn retry_busy_reply(check_name: &str, fix_id: &str) -> String {
    format!(
        "The fix for {} ({}) is in progress; there is nothing to analyse again until CI has run on it.",
        inline_code(&cut(check_name, 200)),
        inline_code(&cut(fix_id, 64))
    )
}

/// `/retry` for a check that has not failed on the pull request's head commit.
pub fn retry_not_failing_reply(check_name: &str, head_sha: &str) -> String {
    format!(
        "{} has not failed on the head commit {}; there is nothing to analyse again.",
        inline_code(&cut(check_name, 200)),
        inline_code(&head_sha.chars().take(7).collect::<String>())
    )
}

/// `/rerun` accepted: the check's failed jobs are being re-run.
pub fn rerun_reply(check_name: &str) -> String {
    format!(
        "Re-running the failed GitHub Actions jobs of {}; the proposal comment reports the new attempt's result.",
        inline_code(&cut(check_name, 200))
    )
}

/// `/rerun` refused for one check, saying why.
pub fn rerun_refused_reply(why: &str) -> String {
    format!("ci-medic did not re-run: {}.", escape_inline(why, 500))
}

/// `/rerun` when no failure on the pull request is one ci-medic found not to be the code's.
pub fn nothing_to_rerun_reply() -> String {
    "There is no failure on this pull request that ci-medic found not to be the code's, so there is nothing for `/rerun` to re-run. A failure in the code gets a proposal to `/approve` instead.".to_string()
}

/// `/retry` with nothing to analyse.
pub fn nothing_to_retry_reply() -> String {
    "There is no failed ci-medic check on this pull request to analyse again.".to_string()
}

/// ci-medic stops after `fix.max_attempts`.
pub fn max_attempts_reply(check_name: &str, attempts: u32, max_attempts: u32) -> String {
    format!(
        "ci-medic made {attempts} of {max_attempts} attempts on {} and stops here (`fix.max_attempts` in `.github/ci-medic.yml`).",
        inline_code(&cut(check_name, 200))
    )
}

/// An invalid `.github/ci-medic.yml`: what and where, and that the defaults are in use.
pub fn config_error_reply(error: &ConfigError) -> String {
    format!(
        "`.github/ci-medic.yml` on the default branch is invalid, so ci-medic uses its defaults:\n\n{}\nEvery key and its default is listed in ci-medic's README.",
        code_block("text", &escape_for_code_block(&error.to_string()))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_round_trips_any_name() {
        for name in [
            "lint",
            "CI / test (ubuntu-latest, 3.12)",
            "evil --> <script>",
            "ünïcödé ✓",
            "%41",
            "",
        ] {
            let m = marker(name);
            assert!(m.starts_with("<!-- ") && m.ends_with(" -->"));
            assert!(!m[4..m.len() - 3].contains("--"), "{m}");
            assert!(!m.contains('>') || m.ends_with("-->") && m.matches('>').count() == 1);
            assert_eq!(find_marker(&format!("{m}\nbody")).as_deref(), Some(name));
        }
    }

    #[test]
    fn marker_only_counts_on_the_first_line() {
        let m = marker("lint");
        assert_eq!(find_marker(&format!("hello\n{m}")), None);
        assert_eq!(find_marker(&format!("> {m}")), None);
        assert_eq!(find_marker("<!-- ci-medic:check=%ZZ -->"), None);
        assert_eq!(find_marker("<!-- ci-medic:check=%FF -->"), None);
        assert_eq!(find_marker(""), None);
    }

    #[test]
    fn inline_code_cannot_be_closed() {
        assert_eq!(inline_code("a"), "`a`");
        assert_eq!(inline_code("a`b"), "``a`b``");
        assert_eq!(inline_code("`x`"), "`` `x` ``");
        assert_eq!(inline_code("a\nb"), "`a b`");
    }

    #[test]
    fn code_block_fence_outgrows_content() {
        let block = code_block("text", "a\n````\nb");
        assert!(block.starts_with("`````text\n"), "{block}");
        assert!(block.ends_with("\n`````\n"));
    }

    #[test]
    fn escape_inline_keeps_markup_literal() {
        let s = escape_inline("<script>alert(1)</script> **x** @octocat", 100);
        assert!(!s.contains("<script>"));
        assert!(s.contains("\\<script\\>"));
        assert!(!s.contains("@octocat"));
        assert_eq!(escape_inline(&"x".repeat(10), 3), "xxx…");
    }

    /// GitHub's stateless installation tokens, `ghs_APPID_JWT` (rolled out from 2026-04-27, see
    /// `apps/create-installation-access-token`).
    const STATELESS: &str =
        "ghs_123456_eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxMjM0NTYifQ.c2lnbmF0dXJlc2lnbmF0dXJl";

    #[test]
    fn stateless_installation_tokens_are_redacted() {
        let leaks = |out: &str| {
            [
                "ghs_123456",
                "eyJhbGciOiJSUzI1NiJ9",
                "eyJpc3MiOiIxMjM0NTYifQ",
                "c2lnbmF0dXJl",
            ]
            .into_iter()
            .any(|part| out.contains(part))
        };
        for text in [
            format!("git push with {STATELESS} failed."),
            format!("remote: using {STATELESS}\n"),
            format!("https://x-access-token:{STATELESS}@github.com/o/r.git"),
            format!("{{\"token\": \"{STATELESS}\"}}"),
            // Cut off by a truncated log line.
            format!("auth {}", &STATELESS[..40]),
        ] {
            let out = redact(&text);
            assert!(!leaks(&out), "{text:?} -> {out:?}");
            assert_eq!(redact(&out), out);
        }
        assert_eq!(
            redact(&format!("git push with {STATELESS} failed.")),
            "git push with [REDACTED] failed."
        );
    }

    #[test]
    fn a_jwt_glued_to_a_word_by_an_underscore_is_redacted() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N";
        for text in [
            format!("session_{jwt}"),
            format!("X_{jwt} end"),
            format!("({jwt})"),
        ] {
            let out = redact(&text);
            assert!(
                !out.contains("dozjgNryP4J3jVmNHl0w5N"),
                "{text:?} -> {out:?}"
            );
        }
    }

    #[test]
    fn tail_cuts_on_char_and_line_boundaries() {
        let t = "ééé\nabc\ndef";
        assert_eq!(tail(t, 5), "def");
        assert_eq!(tail(t, 100), t);
        assert!(tail("éééé", 3).len() <= 3);
    }
}

//! The log scan: splits a log (fed in arbitrary chunks) into lines, cleans each line of what the
//! CI system added (BOM, Actions timestamp, ANSI escapes, `\r` overwrites, `##[error]`), sets
//! warnings aside, searches the rest in batches of about 32 KiB with the rules' regex set, and
//! keeps, per failure kind, a bounded sample of the lines the log rules matched.
//!
//! It never keeps more than [`MAX_LINE`] bytes of a line, one batch, [`MAX_EVIDENCE`] evidence
//! lines per kind or [`MAX_EVIDENCE_CHARS`] characters per evidence line: its memory does not
//! grow with the log. It never decides a kind; that is `lib.rs`'s job.

use std::collections::VecDeque;

use crate::rules;
use crate::{Evidence, FailureKind};

/// A line is looked at up to its first 16 KiB, like the parser does.
pub const MAX_LINE: usize = 16 * 1024;
/// Evidence lines kept per kind (half from the start of the log, half from its end).
pub const MAX_EVIDENCE: usize = 10;
/// Characters kept of one evidence line.
pub const MAX_EVIDENCE_CHARS: usize = 500;

/// What the log said for one kind.
#[derive(Debug, Default, Clone)]
pub(crate) struct KindHits {
    /// Matching lines, in total.
    pub count: usize,
    /// 1-based number of the last matching line.
    pub last_line: usize,
    /// Ids of the rules that matched, in first-match order.
    pub rules: Vec<&'static str>,
    pub first: Vec<Evidence>,
    pub last: VecDeque<Evidence>,
}

impl KindHits {
    fn push(&mut self, rule: &'static str, e: Evidence) {
        self.count += 1;
        if !self.rules.contains(&rule) {
            self.rules.push(rule);
        }
        self.last_line = e.line;
        // A retry loop prints the same error many times; one copy says it.
        if self
            .first
            .iter()
            .chain(&self.last)
            .any(|k| k.text == e.text)
        {
            return;
        }
        if self.first.len() < MAX_EVIDENCE / 2 {
            self.first.push(e);
        } else {
            if self.last.len() == MAX_EVIDENCE / 2 {
                self.last.pop_front();
            }
            self.last.push_back(e);
        }
    }

    /// The kept evidence, in log order.
    pub fn evidence(&self) -> Vec<Evidence> {
        self.first.iter().chain(&self.last).cloned().collect()
    }
}

/// Streaming scanner over a log.
#[derive(Debug, Default)]
pub struct Scanner {
    partial: Vec<u8>,
    /// The partial line was longer than [`MAX_LINE`]; the rest of it is skipped.
    overlong: bool,
    line_no: usize,
    pub(crate) hits: [KindHits; 4],
    /// Warning lines the warning rule matched (weak configuration evidence).
    pub(crate) weak: KindHits,
    /// Cleaned lines waiting for the regex set, joined by `\n`: one search over many lines
    /// costs far less than one per line, and most batches of a log match nothing.
    batch: Vec<u8>,
    /// `(line number, start, end)` of each line in `batch`.
    batch_lines: Vec<(usize, usize, usize)>,
    /// Where a line with escapes is cleaned into.
    scratch: Vec<u8>,
}

/// Bytes of cleaned lines searched at once.
const BATCH: usize = 32 * 1024;

/// What a cleaned line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// What a tool printed.
    Text,
    /// A warning: never evidence for the log rules.
    Warning,
    /// A runner line that is never evidence (`##[debug]`, `##[group]`…).
    Skip,
}

pub(crate) fn slot(kind: FailureKind) -> usize {
    match kind {
        FailureKind::Code => 0,
        FailureKind::Infrastructure => 1,
        FailureKind::Flaky => 2,
        FailureKind::Configuration => 3,
    }
}

impl Scanner {
    /// Feeds the next chunk of the log; chunks may split lines anywhere.
    pub fn feed(&mut self, mut chunk: &[u8]) {
        while let Some(nl) = memchr::memchr(b'\n', chunk) {
            let (head, rest) = chunk.split_at(nl);
            chunk = &rest[1..];
            if self.partial.is_empty() && !self.overlong {
                self.line(head);
            } else {
                self.append(head);
                let line = std::mem::take(&mut self.partial);
                self.line(&line);
                self.partial = line;
                self.partial.clear();
            }
            self.overlong = false;
        }
        self.append(chunk);
    }

    fn append(&mut self, bytes: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.partial.len());
        if bytes.len() > room {
            self.overlong = true;
        }
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// Ends the log (a last line without a newline counts).
    pub(crate) fn finish(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
        }
        self.flush();
    }

    /// Searches the batch; only when something in it matches are its lines looked at one by
    /// one. The set is multi-line, so a pattern matches a line inside the batch exactly when
    /// it matches the line alone (or the batch matches across lines, which only costs the
    /// per-line pass).
    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.batch);
        let lines = std::mem::take(&mut self.batch_lines);
        if rules::set().is_match(&batch) {
            for &(no, start, end) in &lines {
                self.text_line(no, &batch[start..end]);
            }
        }
        self.batch = batch;
        self.batch.clear();
        self.batch_lines = lines;
        self.batch_lines.clear();
    }

    fn line(&mut self, raw: &[u8]) {
        self.line_no += 1;
        let raw = &raw[..raw.len().min(MAX_LINE)];
        let mut scratch = std::mem::take(&mut self.scratch);
        let (kind, text) = clean(raw, &mut scratch);
        match kind {
            Kind::Text if !text.is_empty() => {
                let start = self.batch.len();
                self.batch.extend_from_slice(text);
                self.batch_lines
                    .push((self.line_no, start, self.batch.len()));
                self.batch.push(b'\n');
            }
            Kind::Warning => {
                let (re, rule) = rules::warning_rule();
                if re.is_match(text) {
                    self.weak.push(
                        rule.id,
                        Evidence {
                            line: self.line_no,
                            text: shown(text),
                            rule: rule.id.to_string(),
                        },
                    );
                }
            }
            Kind::Text | Kind::Skip => {}
        }
        self.scratch = scratch;
        if self.batch.len() >= BATCH {
            self.flush();
        }
    }

    /// One cleaned line of a batch that matched.
    fn text_line(&mut self, line_no: usize, text: &[u8]) {
        let matches = rules::set().matches(text);
        if !matches.matched_any() {
            return;
        }
        // Where the first rule matched, so a long line is shown around it.
        let at = matches
            .iter()
            .next()
            .and_then(rules::log_regex)
            .and_then(|re| re.find(text))
            .map_or(0, |m| m.start());
        let shown = shown_at(text, at);
        let mut seen = [false; 4];
        for i in matches.iter() {
            let Some(rule) = rules::log_rule(i) else {
                continue;
            };
            let s = slot(rule.kind);
            // One line is one piece of evidence per kind, under its first rule.
            if std::mem::replace(&mut seen[s], true) {
                continue;
            }
            self.hits[s].push(
                rule.id,
                Evidence {
                    line: line_no,
                    text: shown.clone(),
                    rule: rule.id.to_string(),
                },
            );
        }
    }
}

/// The line as a tool printed it, told apart from warnings (`##[warning]`, `npm WARN`,
/// `Warning:`) and from runner lines that are never evidence (`##[debug]`, `##[command]`,
/// `##[group]`). A warning is not why a job failed: retry warnings of a step that later
/// succeeded must not make a failure look like a network one.
pub(crate) fn clean<'a>(raw: &'a [u8], scratch: &'a mut Vec<u8>) -> (Kind, &'a [u8]) {
    let mut line = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
    if line.last() == Some(&b'\r') {
        line = &line[..line.len() - 1];
    }
    if let Some(cr) = memchr::memrchr(b'\r', line) {
        line = &line[cr + 1..];
    }
    line = strip_timestamp(line);
    // Borrowed unless there are escapes to take out: most lines are copied nowhere.
    let mut out: &[u8] = if memchr::memchr(0x1b, line).is_some() {
        scratch.clear();
        strip_ansi(line, scratch);
        scratch
    } else {
        line
    };
    // The timestamp may sit behind escapes, or escapes behind it.
    out = strip_timestamp(out);
    if let Some(rest) = out.strip_prefix(b"##[") {
        if let Some(rest) = rest.strip_prefix(b"error]") {
            return (Kind::Text, rest);
        }
        if let Some(rest) = rest.strip_prefix(b"warning]") {
            return (Kind::Warning, rest);
        }
        if [&b"debug]"[..], b"command]", b"group]", b"endgroup]"]
            .iter()
            .any(|p| rest.starts_with(p))
        {
            return (Kind::Skip, out);
        }
    }
    let trimmed = out.trim_ascii_start();
    if [
        &b"npm WARN "[..],
        b"npm warn ",
        b"warning: spurious",
        b"Warning: ",
        b"WARNING: Retrying",
        b"WARN ",
    ]
    .iter()
    .any(|p| trimmed.starts_with(p))
    {
        return (Kind::Warning, out);
    }
    (Kind::Text, out)
}

/// Strips a leading `YYYY-MM-DDTHH:MM:SS[.fff]Z ` (the GitHub Actions timestamp).
fn strip_timestamp(line: &[u8]) -> &[u8] {
    let digits = |r: std::ops::Range<usize>| line[r].iter().all(u8::is_ascii_digit);
    if line.len() < 21
        || !digits(0..4)
        || line[4] != b'-'
        || !digits(5..7)
        || line[7] != b'-'
        || !digits(8..10)
        || line[10] != b'T'
        || !digits(11..13)
        || line[13] != b':'
        || !digits(14..16)
        || line[16] != b':'
        || !digits(17..19)
    {
        return line;
    }
    let mut i = 19;
    if line.get(i) == Some(&b'.') {
        i += 1;
        while line.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if line.get(i) == Some(&b'Z') {
        i += 1;
    }
    if line.get(i) == Some(&b' ') {
        i += 1;
    }
    &line[i..]
}

/// Removes CSI (`ESC [ … final`) and two-byte escapes, appending the rest to `out`.
fn strip_ansi(line: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < line.len() {
        if line[i] == 0x1b {
            i += 1;
            if line.get(i) == Some(&b'[') {
                i += 1;
                while i < line.len() && !(0x40..=0x7e).contains(&line[i]) {
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        out.push(line[i]);
        i += 1;
    }
}

/// The evidence text: lossy UTF-8, trimmed, at most [`MAX_EVIDENCE_CHARS`] characters.
fn shown(text: &[u8]) -> String {
    shown_at(text, 0)
}

/// Characters of a long line kept before the place a rule matched.
const LEAD: usize = 200;

/// Like [`shown`], but a line longer than [`MAX_EVIDENCE_CHARS`] is shown from a little before
/// byte `at` (where a rule matched), with `…` where it was cut: at most
/// [`MAX_EVIDENCE_CHARS`] characters of the line plus the two marks.
fn shown_at(text: &[u8], at: usize) -> String {
    let lead = text.len() - text.trim_ascii_start().len();
    let s = String::from_utf8_lossy(text);
    let s = s.trim();
    if s.chars().nth(MAX_EVIDENCE_CHARS).is_none() {
        return s.to_string();
    }
    // `at` counts bytes of the raw line; lossy decoding only grows invalid bytes, so the
    // character index found here is at or after the match's and the window still holds it
    // when the line is valid UTF-8, the common case.
    let at = at.saturating_sub(lead);
    let at_char = s.char_indices().take_while(|(i, _)| *i < at).count();
    let first = at_char.saturating_sub(LEAD);
    let mut out = String::new();
    if first > 0 {
        out.push('…');
    }
    out.extend(s.chars().skip(first).take(MAX_EVIDENCE_CHARS));
    if s.chars().nth(first + MAX_EVIDENCE_CHARS).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(log: &[u8]) -> Scanner {
        let mut s = Scanner::default();
        s.feed(log);
        s.finish();
        s
    }

    #[test]
    fn cleans_actions_wrapping() {
        let c = |raw: &[u8]| {
            let mut scratch = Vec::new();
            let (kind, text) = clean(raw, &mut scratch);
            (kind, text.to_vec())
        };
        assert_eq!(
            c(b"2024-01-02T03:04:05.1234567Z ##[error]\x1b[31mNo space left on device\x1b[0m"),
            (Kind::Text, b"No space left on device".to_vec())
        );
        assert_eq!(
            c(b"\x1b[36m2024-01-02T03:04:05Z\x1b[0m ENOSPC"),
            (Kind::Text, b"ENOSPC".to_vec())
        );
        assert_eq!(
            c(b"##[warning]ETIMEDOUT"),
            (Kind::Warning, b"ETIMEDOUT".to_vec())
        );
        assert_eq!(
            c(b"npm WARN retry will retry, error on last attempt: Error: ETIMEDOUT").0,
            Kind::Warning
        );
        assert_eq!(c(b"##[debug]ETIMEDOUT").0, Kind::Skip);
        assert_eq!(c(b"progress 10%\rENOSPC"), (Kind::Text, b"ENOSPC".to_vec()));
    }

    #[test]
    fn chunking_does_not_change_the_scan() {
        let log = b"ok\n2024-01-02T03:04:05Z Error: connect ETIMEDOUT 1.2.3.4:443\nx\nNo space left on device";
        let whole = scan(log);
        for size in 1..8 {
            let mut s = Scanner::default();
            for c in log.chunks(size) {
                s.feed(c);
            }
            s.finish();
            assert_eq!(
                s.hits[1].evidence(),
                whole.hits[1].evidence(),
                "chunks of {size}"
            );
        }
        let ev = whole.hits[1].evidence();
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].line, 2);
        assert_eq!(ev[0].text, "Error: connect ETIMEDOUT 1.2.3.4:443");
        assert_eq!(ev[1].line, 4);
        assert_eq!(ev[1].rule, "infra.disk");
    }

    #[test]
    fn evidence_is_bounded_and_deduplicated() {
        let mut log = Vec::new();
        for i in 0..1000 {
            log.extend_from_slice(format!("Error: ETIMEDOUT try {i}\n").as_bytes());
            log.extend_from_slice(b"Error: ETIMEDOUT\n");
        }
        log.extend_from_slice(format!("ENOSPC {}\n", "x".repeat(5000)).as_bytes());
        let s = scan(&log);
        let ev = s.hits[1].evidence();
        assert_eq!(ev.len(), MAX_EVIDENCE);
        assert_eq!(s.hits[1].count, 2001);
        assert_eq!(ev[0].text, "Error: ETIMEDOUT try 0");
        assert_eq!(ev[1].text, "Error: ETIMEDOUT");
        let last = ev.last().map(|e| e.text.chars().count());
        assert_eq!(last, Some(MAX_EVIDENCE_CHARS + 1));
    }

    #[test]
    fn long_lines_are_shown_around_the_match() {
        let line = format!(
            "[ERROR] {} Could not transfer artifact a:b:pom:1 from/to central (https://repo.maven.apache.org/maven2): Connection reset",
            "x -> ".repeat(200)
        );
        let s = scan(line.as_bytes());
        let ev = s.hits[1].evidence();
        assert!(ev[0].text.starts_with('…'), "{}", ev[0].text);
        assert!(ev[0].text.contains("Could not transfer artifact"));
        assert!(ev[0].text.chars().count() <= MAX_EVIDENCE_CHARS + 2);
    }

    #[test]
    fn overlong_lines_are_cut_not_buffered() {
        let mut s = Scanner::default();
        s.feed(&vec![b'a'; MAX_LINE]);
        s.feed(&vec![b'b'; MAX_LINE]);
        assert!(s.partial.len() <= MAX_LINE);
        s.feed(b"\nNo space left on device\n");
        s.finish();
        assert_eq!(s.hits[1].evidence()[0].line, 2);
    }
}

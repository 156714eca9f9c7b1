//! Bounded capture of a build's output and the short excerpt shown to people.
//!
//! [`CappedLog`] keeps the start and the end of a stream of any length in memory bounded by its
//! cap: a build printing gigabytes costs the cap, not the gigabytes. It never interprets what it
//! holds (that is the parser's job); it only cuts, and says where and how much it cut.

use std::collections::VecDeque;

/// The line put where output was dropped. Starts with a newline-terminated line of its own so
/// the parser never glues the two halves into one fake line.
pub fn omission_marker(omitted_bytes: u64) -> String {
    format!("[ci-medic: {omitted_bytes} bytes of output omitted]\n")
}

/// Keeps the first half and the last half of everything pushed into it, up to `cap` bytes in all.
#[derive(Debug)]
pub struct CappedLog {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

/// The captured log once the stream has ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedLog {
    pub text: String,
    /// Whether anything was dropped from the middle.
    pub truncated: bool,
    /// Every byte the build printed, kept or not.
    pub total_bytes: u64,
}

impl CappedLog {
    /// `cap` is the most bytes kept (plus the marker line); at least 2 so both ends exist.
    pub fn new(cap: usize) -> Self {
        let cap = cap.max(2);
        let head_cap = cap / 2;
        CappedLog {
            head_cap,
            tail_cap: cap - head_cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.head.len() < self.head_cap {
            let take = bytes.len().min(self.head_cap - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// Bytes pushed so far.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Bytes held in memory right now (never more than the cap).
    pub fn held_bytes(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    pub fn finish(self) -> CapturedLog {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let (head, tail) = (self.head, Vec::from(self.tail));
        if kept == self.total {
            let mut all = head;
            all.extend_from_slice(&tail);
            return CapturedLog {
                text: String::from_utf8_lossy(&all).into_owned(),
                truncated: false,
                total_bytes: self.total,
            };
        }
        // Cut on line boundaries so neither half starts or ends with a partial line (which the
        // parser could misread), unless a half holds no newline at all.
        let head_end = head
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(head.len(), |i| i + 1);
        let tail_start = tail.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
        let head = &head[..head_end];
        let tail = &tail[tail_start..];
        let omitted = self.total - (head.len() + tail.len()) as u64;
        let mut text = String::from_utf8_lossy(head).into_owned();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&omission_marker(omitted));
        text.push_str(&String::from_utf8_lossy(tail));
        CapturedLog {
            text,
            truncated: true,
            total_bytes: self.total,
        }
    }
}

/// Longest line kept in an excerpt, in characters; longer ones end with `…`.
const EXCERPT_LINE_CHARS: usize = 400;

/// The first `head_lines` and the last `tail_lines` lines of `log`, with a marker line saying how
/// many were left out between them. A log that fits is returned whole (lines still clipped).
pub fn build_excerpt(log: &str, head_lines: usize, tail_lines: usize) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let clip = |l: &str| -> String {
        match l.char_indices().nth(EXCERPT_LINE_CHARS) {
            Some((i, _)) => format!("{}…", &l[..i]),
            None => l.to_owned(),
        }
    };
    let mut out = Vec::new();
    if lines.len() <= head_lines + tail_lines {
        out.extend(lines.iter().map(|l| clip(l)));
    } else {
        out.extend(lines[..head_lines].iter().map(|l| clip(l)));
        out.push(format!(
            "… {} lines omitted …",
            lines.len() - head_lines - tail_lines
        ));
        out.extend(lines[lines.len() - tail_lines..].iter().map(|l| clip(l)));
    }
    let mut text = out.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole_and_in_order() {
        let mut log = CappedLog::new(100);
        log.push(b"hello ");
        log.push(b"world\n");
        let out = log.finish();
        assert_eq!(out.text, "hello world\n");
        assert!(!out.truncated);
        assert_eq!(out.total_bytes, 12);
    }

    #[test]
    fn exactly_at_the_cap_is_not_truncated() {
        let mut log = CappedLog::new(10);
        log.push(b"0123456789");
        let out = log.finish();
        assert_eq!(out.text, "0123456789");
        assert!(!out.truncated);
    }

    #[test]
    fn big_output_keeps_start_and_end_on_line_boundaries() {
        let mut log = CappedLog::new(64);
        let mut all = String::new();
        for i in 0..1000 {
            let line = format!("line {i}\n");
            all.push_str(&line);
            log.push(line.as_bytes());
            assert!(log.held_bytes() <= 64);
        }
        let out = log.finish();
        assert!(out.truncated);
        assert_eq!(out.total_bytes, all.len() as u64);
        assert!(out.text.starts_with("line 0\nline 1\n"), "{}", out.text);
        assert!(out.text.ends_with("line 998\nline 999\n"), "{}", out.text);
        let marker = out
            .text
            .lines()
            .find(|l| l.starts_with("[ci-medic:"))
            .unwrap();
        // Every line kept is a whole original line.
        for l in out.text.lines().filter(|l| !l.starts_with("[ci-medic:")) {
            assert!(l.starts_with("line "), "partial line {l:?}");
        }
        let kept: usize = out
            .text
            .lines()
            .filter(|l| !l.starts_with("[ci-medic:"))
            .map(|l| l.len() + 1)
            .sum();
        assert_eq!(
            marker,
            format!("[ci-medic: {} bytes of output omitted]", all.len() - kept)
        );
    }

    #[test]
    fn one_huge_chunk_larger_than_the_cap() {
        let mut log = CappedLog::new(8);
        log.push(b"abcdefghijklmnopqrstuvwxyz");
        let out = log.finish();
        assert!(out.truncated);
        // No newline anywhere: cut mid-line rather than drop everything.
        assert_eq!(
            out.text,
            "abcd\n[ci-medic: 18 bytes of output omitted]\nwxyz"
        );
    }

    #[test]
    fn split_multibyte_characters_do_not_panic() {
        let mut log = CappedLog::new(5);
        log.push("ééééééééé".as_bytes());
        let out = log.finish();
        assert!(out.truncated);
        assert!(out.text.contains("[ci-medic:"));
    }

    #[test]
    fn excerpt_of_a_short_log_is_the_log() {
        assert_eq!(build_excerpt("a\nb\nc\n", 2, 2), "a\nb\nc\n");
        assert_eq!(build_excerpt("", 2, 2), "");
    }

    #[test]
    fn excerpt_keeps_first_and_last_lines() {
        let log: String = (1..=100).map(|i| format!("{i}\n")).collect();
        let ex = build_excerpt(&log, 3, 2);
        assert_eq!(ex, "1\n2\n3\n… 95 lines omitted …\n99\n100\n");
    }

    #[test]
    fn excerpt_clips_long_lines_on_char_boundaries() {
        let long = "é".repeat(1000);
        let ex = build_excerpt(&long, 1, 1);
        assert_eq!(ex.chars().count(), EXCERPT_LINE_CHARS + 2);
        assert!(ex.ends_with("…\n"));
    }
}

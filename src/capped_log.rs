//! Bounded capture of a byte stream's start and end: what people are shown of a log.
//!
//! [`CappedLog`] keeps the first `head` and the last `cap - head` bytes of a stream of any length,
//! so a log or build printing gigabytes costs the cap, not the gigabytes. Used for GitHub job
//! logs ([`crate::log_source`]) and for the sandbox's build output ([`crate::executor`]).
//!
//! It never interprets what it holds (that is the parser's job, and the parser is fed the whole
//! stream, not this capture); it only cuts, on line boundaries, and says how much it cut.

use std::collections::VecDeque;

/// Keeps the start and the end of everything pushed into it, up to `cap` bytes in all.
#[derive(Debug)]
pub struct CappedLog {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

/// The captured bytes once the stream has ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The head, then (when bytes were dropped) a marker line, then the tail.
    pub bytes: Vec<u8>,
    /// Every byte pushed, kept or not.
    pub total_bytes: u64,
    /// Bytes dropped from the middle; 0 when the stream was kept whole.
    pub omitted_bytes: u64,
}

impl Captured {
    pub fn truncated(&self) -> bool {
        self.omitted_bytes > 0
    }
}

impl CappedLog {
    /// Keeps at most `cap` bytes (plus the marker line), half from each end; `cap` is at least 2
    /// so both ends exist.
    pub fn new(cap: usize) -> Self {
        Self::with_head(cap, cap / 2)
    }

    /// Keeps at most `cap` bytes, of which `head` (clamped to `cap / 2`) from the start and the
    /// rest from the end, where compilers and test runners print their errors and summaries.
    pub fn with_head(cap: usize, head: usize) -> Self {
        let cap = cap.max(2);
        let head_cap = head.min(cap / 2);
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

    /// The start of the stream as kept so far (e.g. to sniff whether it is text).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// Ends the capture. When bytes were dropped, `marker(omitted, total)` is put between the two
    /// ends as a line of its own; it should end with a newline.
    pub fn finish(self, marker: impl FnOnce(u64, u64) -> String) -> Captured {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let (mut head, tail) = (self.head, Vec::from(self.tail));
        if kept == self.total {
            head.extend_from_slice(&tail);
            return Captured {
                bytes: head,
                total_bytes: self.total,
                omitted_bytes: 0,
            };
        }
        // Cut on line boundaries so neither end starts or stops with a partial line (which the
        // parser or a reader could misread), unless an end holds no newline at all.
        let head_end = head
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(head.len(), |i| i + 1);
        let tail_start = tail.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
        head.truncate(head_end);
        let tail = &tail[tail_start..];
        let omitted = self.total - (head.len() + tail.len()) as u64;
        if !head.is_empty() && !head.ends_with(b"\n") {
            head.push(b'\n');
        }
        head.extend_from_slice(marker(omitted, self.total).as_bytes());
        head.extend_from_slice(tail);
        Captured {
            bytes: head,
            total_bytes: self.total,
            omitted_bytes: omitted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(omitted: u64, _total: u64) -> String {
        format!("[cut {omitted}]\n")
    }

    fn text(c: &Captured) -> &str {
        std::str::from_utf8(&c.bytes).unwrap()
    }

    #[test]
    fn small_output_is_kept_whole_and_in_order() {
        let mut log = CappedLog::new(100);
        log.push(b"hello ");
        log.push(b"world\n");
        let out = log.finish(marker);
        assert_eq!(text(&out), "hello world\n");
        assert!(!out.truncated());
        assert_eq!(out.total_bytes, 12);
    }

    #[test]
    fn exactly_at_the_cap_is_not_truncated() {
        let mut log = CappedLog::new(10);
        log.push(b"0123456789");
        let out = log.finish(marker);
        assert_eq!(text(&out), "0123456789");
        assert!(!out.truncated());
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
        let out = log.finish(marker);
        assert!(out.truncated());
        assert_eq!(out.total_bytes, all.len() as u64);
        let t = text(&out);
        assert!(t.starts_with("line 0\nline 1\n"), "{t}");
        assert!(t.ends_with("line 998\nline 999\n"), "{t}");
        // Every line kept is a whole original line, and the marker counts the rest.
        let kept: Vec<&str> = t.lines().filter(|l| !l.starts_with("[cut")).collect();
        assert!(kept.iter().all(|l| l.starts_with("line ")), "{t}");
        let kept_bytes: usize = kept.iter().map(|l| l.len() + 1).sum();
        assert_eq!(out.omitted_bytes, (all.len() - kept_bytes) as u64);
        assert!(t.contains(&format!("[cut {}]\n", out.omitted_bytes)));
    }

    #[test]
    fn uneven_split_keeps_a_short_head_and_a_long_tail() {
        let mut log = CappedLog::with_head(100, 20);
        for i in 0..100 {
            log.push(format!("{i:04}\n").as_bytes());
        }
        let out = log.finish(marker);
        let t = text(&out);
        // 20 bytes of head = the first 4 lines; 80 bytes of tail = the last 16, of which the
        // first is dropped: the tail cannot know it starts on a line boundary.
        assert!(
            t.starts_with("0000\n0001\n0002\n0003\n[cut 405]\n0085\n"),
            "{t}"
        );
        assert!(t.ends_with("0099\n"));
        // The head can never take more than half.
        let log = CappedLog::with_head(10, 1_000);
        assert_eq!((log.head_cap, log.tail_cap), (5, 5));
    }

    #[test]
    fn one_huge_chunk_larger_than_the_cap() {
        let mut log = CappedLog::new(8);
        log.push(b"abcdefghijklmnopqrstuvwxyz");
        let out = log.finish(marker);
        assert!(out.truncated());
        // No newline anywhere: cut mid-line rather than drop everything.
        assert_eq!(text(&out), "abcd\n[cut 18]\nwxyz");
    }

    #[test]
    fn split_multibyte_characters_do_not_panic() {
        let mut log = CappedLog::new(5);
        log.push("ééééééééé".as_bytes());
        let out = log.finish(marker);
        assert!(out.truncated());
        assert!(String::from_utf8_lossy(&out.bytes).contains("[cut"));
    }
}

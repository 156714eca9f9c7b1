//! Stage: parse a log into bug reports. The parser itself is the pure `ci-medic-parser` crate;
//! this module only runs it off the async runtime, fed as the log arrives.
//!
//! It must never fetch, store or interpret anything itself.

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub use ci_medic_parser::*;

/// Chunks that may wait for the parser before the sender has to (a few MiB of a download).
const QUEUED_CHUNKS: usize = 64;

/// Starts a parser on a blocking thread that reads the chunks sent to the returned sender, in
/// order, as they arrive. Its reports (and how many the cap left out) are ready once every
/// sender has been dropped. Memory is
/// the parser's own bound plus the queued chunks, whatever the size of the log.
pub fn spawn_streaming(opts: ParseOptions) -> (mpsc::Sender<Bytes>, JoinHandle<Parsed>) {
    let (tx, mut rx) = mpsc::channel::<Bytes>(QUEUED_CHUNKS);
    let task = tokio::task::spawn_blocking(move || {
        let mut parser = Parser::new(&opts);
        while let Some(chunk) = rx.blocking_recv() {
            parser.feed(&chunk);
        }
        parser.finish_parsed()
    });
    (tx, task)
}

/// Bytes of a log's start and of its end that the failure triage reads in full. Its rules
/// look at every line with a set of regexes, several times slower than the parser; the reason a
/// job failed is at its end (or, for a setup failure, its start), so the middle of a very long
/// log is only counted, which keeps evidence line numbers true to the whole log.
pub const TRIAGE_HEAD_BYTES: usize = 2 << 20;
/// See [`TRIAGE_HEAD_BYTES`].
pub const TRIAGE_TAIL_BYTES: usize = 2 << 20;

/// Feeds the triage the first [`TRIAGE_HEAD_BYTES`] and the last [`TRIAGE_TAIL_BYTES`] of a
/// log (a ring of chunks), and only the line breaks of what lies between.
struct BoundedTriage {
    triager: ci_medic_triage::Triager,
    head_left: usize,
    tail: std::collections::VecDeque<Bytes>,
    tail_bytes: usize,
}

impl BoundedTriage {
    fn new() -> Self {
        BoundedTriage {
            triager: ci_medic_triage::Triager::new(),
            head_left: TRIAGE_HEAD_BYTES,
            tail: std::collections::VecDeque::new(),
            tail_bytes: 0,
        }
    }

    fn feed(&mut self, chunk: &Bytes) {
        let head = chunk.len().min(self.head_left);
        if head > 0 {
            self.triager.feed(&chunk[..head]);
            self.head_left -= head;
        }
        if head == chunk.len() {
            return;
        }
        let rest = chunk.slice(head..);
        self.tail_bytes += rest.len();
        self.tail.push_back(rest);
        while self.tail_bytes > TRIAGE_TAIL_BYTES {
            let Some(old) = self.tail.pop_front() else {
                break;
            };
            self.tail_bytes -= old.len();
            // Only its line breaks: the lines keep their numbers, their text is skipped.
            let breaks = old.iter().filter(|&&b| b == b'\n').count();
            self.triager.feed(&vec![b'\n'; breaks]);
        }
    }

    fn finish(mut self) -> ci_medic_triage::Triager {
        for chunk in self.tail {
            self.triager.feed(&chunk);
        }
        self.triager
    }
}

/// [`spawn_streaming`], with the failure triage's log scan fed on the same thread (see
/// [`TRIAGE_HEAD_BYTES`] for how much of it), so its evidence lines are numbered in the whole
/// log however long it is. The triage is handed back unfinished: it decides once the check's
/// facts and test history are known.
pub fn spawn_streaming_triaged(
    opts: ParseOptions,
) -> (
    mpsc::Sender<Bytes>,
    JoinHandle<(Parsed, ci_medic_triage::Triager)>,
) {
    let (tx, mut rx) = mpsc::channel::<Bytes>(QUEUED_CHUNKS);
    let task = tokio::task::spawn_blocking(move || {
        let mut parser = Parser::new(&opts);
        let mut triage = BoundedTriage::new();
        while let Some(chunk) = rx.blocking_recv() {
            parser.feed(&chunk);
            triage.feed(&chunk);
        }
        (parser.finish_parsed(), triage.finish())
    });
    (tx, task)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn streamed_chunks_parse_like_the_whole_log() {
        let log = "noise\nsrc/app.py:3:1: F401 [*] `os` imported but unused\nmore noise\n\
                   src/lib.rs:7:5: error[E0425]: cannot find value `x` in this scope\n";
        let whole = parse_str(log, &ParseOptions::default());
        assert_eq!(whole.len(), 2, "{whole:?}");
        for size in [1, 5, 64] {
            let (tx, task) = spawn_streaming(ParseOptions::default());
            for chunk in log.as_bytes().chunks(size) {
                tx.send(Bytes::copy_from_slice(chunk)).await.unwrap();
            }
            drop(tx);
            assert_eq!(task.await.unwrap().reports, whole, "chunks of {size}");
        }
    }

    #[test]
    fn a_long_log_keeps_its_line_numbers_when_its_middle_is_skipped() {
        // A real npm network error near the end of a log far longer than what is read in full.
        let filler = b"2024-05-01T10:00:00.0000000Z building...\n";
        let lines_before = (TRIAGE_HEAD_BYTES + 3 * TRIAGE_TAIL_BYTES) / filler.len();
        let mut t = BoundedTriage::new();
        let mut chunk = Vec::new();
        for _ in 0..lines_before {
            chunk.extend_from_slice(filler);
            if chunk.len() > 60_000 {
                t.feed(&Bytes::from(std::mem::take(&mut chunk)));
            }
        }
        chunk.extend_from_slice(b"2024-05-01T10:00:00.0000000Z npm ERR! code ECONNRESET\n");
        t.feed(&Bytes::from(chunk));
        let triage = t
            .finish()
            .finish(&[], &ci_medic_triage::CheckFacts::default(), &[]);
        assert_eq!(triage.kind, ci_medic_triage::FailureKind::Infrastructure);
        assert_eq!(triage.evidence[0].line, lines_before + 1);
    }
}

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

/// [`spawn_streaming`], with the failure triage's log scan fed every chunk on the same thread:
/// it reads the whole log (its scan is faster than the parser's and its memory is bounded, see
/// `ci_medic_triage`), so evidence anywhere in a long log counts and its lines are numbered in
/// the whole log. The triage is handed back unfinished: it decides once the check's facts and
/// test history are known.
pub fn spawn_streaming_triaged(
    opts: ParseOptions,
) -> (
    mpsc::Sender<Bytes>,
    JoinHandle<(Parsed, ci_medic_triage::Triager)>,
) {
    let (tx, mut rx) = mpsc::channel::<Bytes>(QUEUED_CHUNKS);
    let task = tokio::task::spawn_blocking(move || {
        let mut parser = Parser::new(&opts);
        let mut triage = ci_medic_triage::Triager::new();
        while let Some(chunk) = rx.blocking_recv() {
            parser.feed(&chunk);
            triage.feed(&chunk);
        }
        (parser.finish_parsed(), triage)
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

    #[tokio::test]
    async fn evidence_in_the_middle_of_a_long_log_counts_with_its_line_number() {
        // A real npm network error between 4 MiB of build output before and after it: the
        // triage once read only the first and last 2 MiB and missed it.
        let filler = b"2024-05-01T10:00:00.0000000Z building...\n";
        let lines_around = (4 << 20) / filler.len();
        let (tx, task) = spawn_streaming_triaged(ParseOptions::default());
        let block = filler.repeat(1_000);
        for _ in 0..lines_around / 1_000 {
            tx.send(Bytes::from(block.clone())).await.unwrap();
        }
        tx.send(Bytes::from_static(
            b"2024-05-01T10:00:00.0000000Z npm ERR! code ECONNRESET\n",
        ))
        .await
        .unwrap();
        for _ in 0..lines_around / 1_000 {
            tx.send(Bytes::from(block.clone())).await.unwrap();
        }
        drop(tx);
        let (parsed, triager) = task.await.unwrap();
        assert!(parsed.reports.is_empty());
        let triage = triager.finish(&[], &ci_medic_triage::CheckFacts::default(), &[]);
        assert_eq!(triage.kind, ci_medic_triage::FailureKind::Infrastructure);
        assert_eq!(triage.evidence[0].line, lines_around / 1_000 * 1_000 + 1);
    }
}

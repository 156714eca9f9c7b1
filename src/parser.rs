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
}

//! `analyze`'s progress on a terminal: a reader that counts the bytes the parser pulls and
//! redraws one line on standard error, at most ten times a second, for large inputs only.
//!
//! Never on a pipe or a file: whether standard error is a terminal is decided once, when the
//! reader is made, and a reader made for a non-terminal never writes at all. The line's text is
//! `ci_medic_core::progress`; this shell only counts, reads the clock and draws.

use std::io::{IsTerminal, Read, Write};
use std::time::{Duration, Instant};

use ci_medic_core::progress;

const REDRAW_EVERY: Duration = Duration::from_millis(100);

pub struct ProgressReader<R> {
    inner: R,
    total: Option<u64>,
    read: u64,
    started: Instant,
    last_draw: Option<Instant>,
    terminal: bool,
}

impl<R: Read> ProgressReader<R> {
    /// `total` is the input's size when it is known (a regular file).
    pub fn new(inner: R, total: Option<u64>) -> Self {
        ProgressReader {
            inner,
            total,
            read: 0,
            started: Instant::now(),
            last_draw: None,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    fn draw(&mut self, now: Instant) {
        let line = progress::line(self.read, self.total, now - self.started);
        // `\r` and "erase line": the line is redrawn in place, and a shorter one leaves no tail.
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2Kci-medic analyze: {line}");
        let _ = err.flush();
        self.last_draw = Some(now);
    }

    /// Draws the final figures and leaves the line, so the count is not lost when the output
    /// follows; does nothing when nothing was drawn.
    pub fn finish(mut self) {
        if self.last_draw.is_some() {
            self.draw(Instant::now());
            let _ = writeln!(std::io::stderr());
        }
    }
}

impl<R: Read> Read for ProgressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.terminal && progress::shows(self.total, self.read) {
            let now = Instant::now();
            if self.last_draw.is_none_or(|t| now - t >= REDRAW_EVERY) {
                self.draw(now);
            }
        }
        Ok(n)
    }
}

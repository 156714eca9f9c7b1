//! The matchers, one module per toolchain, and the dispatcher that runs them over each line.
//!
//! Stateful matchers (blocks that span lines) run first and may claim a line; then the
//! `path:line[:col]: …` family is parsed once and dispatched by file extension. Matchers must
//! never emit a report without a line number, never buffer without a bound, and must test cheap
//! byte conditions before any regex.

pub(crate) mod beam;
pub(crate) mod c;
pub(crate) mod dart;
pub(crate) mod docs;
pub(crate) mod dotnet;
pub(crate) mod format;
pub(crate) mod generic;
pub(crate) mod go;
pub(crate) mod gtest;
pub(crate) mod haskell;
pub(crate) mod infra;
pub(crate) mod js;
pub(crate) mod jvm;
pub(crate) mod perl;
pub(crate) mod php;
pub(crate) mod python;
pub(crate) mod r;
pub(crate) mod ruby;
pub(crate) mod rust;
pub(crate) mod scala;
pub(crate) mod swift;

use crate::sink::Sink;
use crate::{Ctx, Line};

/// All matcher state for one log.
#[derive(Debug, Default)]
pub(crate) struct Rules {
    python: python::Python,
    rust: rust::Rust,
    js: js::Js,
    go: go::Go,
    jvm: jvm::Jvm,
    shellcheck: generic::Shellcheck,
    scala: scala::Scala,
    beam: beam::Beam,
    dart: dart::Dart,
    format: format::Format,
    infra: infra::Infra,
    ruby: ruby::Ruby,
    php: php::Php,
    dotnet: dotnet::Dotnet,
    swift: swift::Swift,
    gtest: gtest::Gtest,
    docs: docs::Docs,
    haskell: haskell::Haskell,
}

impl Rules {
    pub fn line(&mut self, l: &Line<'_>, ctx: &Ctx, sink: &mut Sink) {
        // Most lines of a log interest no matcher: each `quiet` check (idle state, a first
        // byte, a flag of `Line`) skips a matcher whose `line` would return false and change
        // nothing, so the output is the same as running them all.
        if self.js.karma_line(l, sink) || self.js.bun_line(l, sink) {
            return;
        }
        // First: GHC's headers look like gcc's, and its module lines like other tools' progress.
        if !self.haskell.quiet(l) && self.haskell.line(l, sink) {
            return;
        }
        if !r::quiet(l) && r::line(l, sink) {
            return;
        }
        if !perl::quiet(l) && perl::line(l, ctx, sink) {
            return;
        }
        if !self.format.quiet(l) && self.format.line(l, ctx, sink) {
            return;
        }
        if !self.docs.quiet(l) && self.docs.line(l, sink) {
            return;
        }
        // Before the compiler matchers: MSVC-built gtest prints `file(line): error: …` too.
        if !self.gtest.quiet(l) && self.gtest.line(l, sink) {
            return;
        }
        // Before Python, whose unittest matcher takes every `ERROR: …` line (Psalm's format).
        if !self.php.quiet(l) && self.php.line(l, sink) {
            return;
        }
        if !self.python.quiet(l) && self.python.line(l, sink) {
            return;
        }
        if !self.rust.quiet(l) && self.rust.line(l, sink) {
            return;
        }
        if !self.js.quiet(l) && self.js.line(l, sink) {
            return;
        }
        // Before Go, which takes every `# …` line (RSpec's backtrace is `# ./x.rb:5:in …`).
        if !self.ruby.quiet(l) && self.ruby.line(l, sink) {
            return;
        }
        if !self.go.quiet(l) && self.go.line(l, sink) {
            return;
        }
        if !self.scala.quiet(l) && self.scala.line(l, sink) {
            return;
        }
        if !self.beam.quiet(l) && self.beam.line(l, sink) {
            return;
        }
        if !self.dart.quiet(l) && self.dart.line(l, sink) {
            return;
        }
        if !self.jvm.quiet(l) && self.jvm.line_in(l, ctx, sink) {
            return;
        }
        if !self.shellcheck.quiet(l) && self.shellcheck.line(l, sink) {
            return;
        }
        if !self.infra.quiet(l) && self.infra.line(l, sink) {
            return;
        }
        if !self.dotnet.quiet(l) && self.dotnet.line(l, sink) {
            return;
        }
        if !self.swift.quiet(l) && self.swift.line(l, sink) {
            return;
        }
        generic::line(l, ctx, &self.go, &mut self.jvm, sink);
    }

    /// A new CI step begins: close every open block.
    /// Travis echoed the next command of the job (`$ cmd`): a new process runs.
    pub fn command_echoed(&mut self) {
        self.python.command_echoed();
    }

    pub fn step_boundary(&mut self, sink: &mut Sink) {
        self.python.flush(sink);
        self.rust.flush(sink);
        self.js.flush(sink);
        self.go.flush(sink);
        self.jvm.flush(sink);
        self.scala.flush(sink);
        self.beam.flush(sink);
        self.dart.flush(sink);
        self.format.flush(sink);
        self.shellcheck = generic::Shellcheck::default();
        self.ruby.flush(sink);
        self.php.flush(sink);
        self.dotnet.flush(sink);
        self.swift.flush(sink);
        self.gtest.flush(sink);
        self.infra.step_boundary(sink);
        self.haskell.flush(sink);
        sink.next_step();
    }
}

/// Travis' verdict on a command: `The command "…" exited with N.`; true when N is not 0. The
/// verdict may follow output that did not end its line (`}The command …`).
pub(crate) fn travis_command_failed(t: &str) -> Option<bool> {
    if !t.ends_with('.') {
        return None;
    }
    let at = memchr::memmem::rfind(t.as_bytes(), b"The command \"")?;
    let rest = &t[at + "The command \"".len()..];
    let (_, code) = rest.rsplit_once("\" exited with ")?;
    let code = code.strip_suffix('.')?;
    Some(code != "0")
}

/// Parses a decimal number that must fit a line or column (>= 1 checked by the sink).
pub(crate) fn num(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 9 {
        return None;
    }
    s.parse().ok()
}

/// File extension, lower-cased ASCII, without the dot.
pub(crate) fn ext(path: &str) -> &str {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match name.rfind('.') {
        Some(i) => &name[i + 1..],
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colon_digit() {
        use crate::{Line, Marker};
        assert!(Line::new("a.py:3: x", 1, Marker::None).colon_digit);
        assert!(!Line::new("Compiling foo v1.0", 1, Marker::None).colon_digit);
        assert!(!Line::new("ends with:", 1, Marker::None).colon_digit);
    }

    #[test]
    fn extension() {
        assert_eq!(ext("src/a.test.ts"), "ts");
        assert_eq!(ext("Makefile"), "");
    }
}

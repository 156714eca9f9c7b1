//! GHC diagnostics, as cabal and Stack builds print them: `src/X.hs:528:3: error:` (GHC ≥ 8,
//! also with range columns `:3-7:` and `:(1,2)-(3,4):`), the GHC 7 header with nothing after
//! the location, and warnings (`Warning:` / `warning: [-Wunused-imports]`). The diagnostic's
//! first message line decides the type: `Could not find module` is `IMPORT`, `parse error` is
//! `SYNTAX`, anything else a type error. An error GHC made of a warning (`error:
//! [-Wunused-imports, -Werror=unused-imports]`) is `LINTING` with the flag as its rule.
//!
//! It must never report a warning on its own: builds print warnings and pass. A warning becomes a
//! report only when GHC 7 ends the module with `Failing due to -Werror.`; the next module's
//! `[N of M] Compiling` line forgets the ones before it.

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

static HS: crate::Needle = crate::needle!("hs:");

/// Warnings of one module kept while waiting for `Failing due to -Werror.`.
const MAX_WARNINGS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Error,
    /// An error GHC made of a warning (`-Werror=…` in the header).
    Werror,
    Warning,
}

#[derive(Debug)]
struct Diag {
    log_line: u64,
    path: String,
    line: u64,
    col: Option<u64>,
    kind: Kind,
    /// The `-W…` flag the header names.
    flag: Option<String>,
    message: String,
}

#[derive(Debug, Default)]
pub(crate) struct Haskell {
    /// A header whose message line has not come yet.
    pending: Option<Diag>,
    /// Warnings of the module being compiled.
    warnings: Vec<Diag>,
}

/// Haskell source extensions GHC compiles.
fn is_haskell(path: &str) -> bool {
    matches!(super::ext(path), "hs" | "lhs" | "hsc")
}

/// `path:line:col[-col]: tail`, `path:(l,c)-(l,c): tail`: the path, line, column and the text
/// after the location's colon.
fn location(t: &str) -> Option<(&str, u64, Option<u64>, &str)> {
    let colon = memchr::memchr_iter(b':', t.as_bytes())
        .take(4)
        .find(|&i| is_haskell(&t[..i]))?;
    let (path, rest) = (&t[..colon], &t[colon + 1..]);
    if path.is_empty() || path.contains(' ') {
        return None;
    }
    let (loc, tail) = match rest.strip_prefix('(') {
        Some(r) => {
            let (span, tail) = r.split_once("):")?;
            let (start, _) = span.split_once(")-(").unwrap_or((span, ""));
            let (l, c) = start.split_once(',')?;
            ((l, c), tail)
        }
        None => {
            let (l, r) = rest.split_once(':')?;
            let (c, tail) = r.split_once(':')?;
            let c = c.split_once('-').map_or(c, |(c, _)| c);
            ((l, c), tail)
        }
    };
    Some((path, super::num(loc.0)?, super::num(loc.1), tail.trim()))
}

/// The first `-W…` flag of a header's bracketed list (`[-Wunused-imports, -Werror=…]`).
fn flag(tail: &str) -> Option<&str> {
    let at = tail.find("[-W").or_else(|| tail.find(" -W"))?;
    let f = &tail[at + 1..];
    let end = f
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '='))
        .unwrap_or(f.len());
    Some(&f[..end]).filter(|f| f.len() > 2)
}

/// The type a GHC error's first message line names.
fn error_type(message: &str) -> BugType {
    let m = message.trim_start_matches(['•', ' ']);
    if m.starts_with("Could not find module")
        || m.starts_with("Could not load module")
        || m.starts_with("Failed to load interface")
    {
        BugType::Import
    } else if m.starts_with("parse error") || m.starts_with("lexical error") {
        BugType::Syntax
    } else {
        BugType::TypeError
    }
}

impl Haskell {
    /// True when `line` cannot change this matcher's state or be claimed by it: nothing is
    /// pending and the line names no Haskell source before a colon.
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        if self.pending.is_some() || !self.warnings.is_empty() {
            return false;
        }
        // `x.hs:12:3:` carries a colon and a digit; only the range form `x.hs:(1,2)-…` does not.
        if l.colon_digit {
            !crate::has(&HS, l.text)
        } else {
            let b = l.text.as_bytes();
            !l.colon || !memchr::memchr(b'(', b).is_some_and(|i| i >= 3 && &b[i - 3..i] == b"hs:")
        }
    }

    /// Returns true when the line was claimed.
    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        let t = l.trimmed();
        if t.is_empty() {
            return false;
        }
        if let Some(mut d) = self.pending.take() {
            d.message =
                crate::sink::truncate_chars(t.trim_start_matches(['•', ' ']), 300).to_string();
            self.finish(d, sink);
            return true;
        }
        if !self.warnings.is_empty() {
            if t == "Failing due to -Werror." {
                for d in std::mem::take(&mut self.warnings) {
                    Self::emit(&d, BugType::Linting, sink);
                }
                return true;
            }
            // `[108 of 146] Compiling M ( src/M.hs, … )`; the counter may already be gone with
            // the bracketed prefixes CI wrappers add.
            if t.starts_with("Compiling ") || (t.starts_with('[') && t.contains("] Compiling ")) {
                self.warnings.clear();
                return false;
            }
        }
        if !l.colon {
            return false;
        }
        let Some((path, line, col, tail)) = location(t) else {
            return false;
        };
        let word = tail.as_bytes();
        let kind = if tail.is_empty() {
            Kind::Error
        } else if word.len() >= 7 && word[..7].eq_ignore_ascii_case(b"warning") {
            Kind::Warning
        } else if word.len() >= 5 && word[..5].eq_ignore_ascii_case(b"error") {
            if tail.contains("-Werror") {
                Kind::Werror
            } else {
                Kind::Error
            }
        } else {
            return false;
        };
        self.pending = Some(Diag {
            log_line: l.no,
            path: path.to_string(),
            line,
            col,
            kind,
            flag: flag(tail).map(str::to_string),
            message: String::new(),
        });
        true
    }

    fn finish(&mut self, d: Diag, sink: &mut Sink) {
        match d.kind {
            Kind::Error => Self::emit(&d, error_type(&d.message), sink),
            Kind::Werror => Self::emit(&d, BugType::Linting, sink),
            Kind::Warning => {
                if self.warnings.len() < MAX_WARNINGS {
                    self.warnings.push(d);
                }
            }
        }
    }

    fn emit(d: &Diag, ty: BugType, sink: &mut Sink) {
        let message = if d.message.is_empty() {
            "GHC error"
        } else {
            &d.message
        };
        sink.emit(
            d.log_line,
            Finding::new(&d.path, d.line, ty, message)
                .col(d.col)
                .conf(0.95)
                .tool("ghc")
                .rule(d.flag.as_deref()),
        );
    }

    /// The step ended: a header still waiting for its message is reported without one; the
    /// module's warnings were not made errors.
    pub fn flush(&mut self, sink: &mut Sink) {
        if let Some(d) = self.pending.take() {
            self.finish(d, sink);
        }
        self.warnings.clear();
    }
}

#[cfg(test)]
mod tests {
    use crate::{BugType, ParseOptions, parse_str};

    fn got(log: &str) -> Vec<(String, u32, BugType, Option<String>)> {
        parse_str(log, &ParseOptions::default())
            .into_iter()
            .map(|r| (r.file_path, r.line_number, r.error_type, r.rule))
            .collect()
    }

    #[test]
    fn ghc_errors_are_typed_by_their_first_message_line() {
        // LogChunks purescript (Travis, Stack's colours stripped), and GHC 7's header alone.
        let log = "[ 41 of 164] Compiling Language.PureScript.Environment\n\n/home/travis/build/purescript/purescript/src/Language/PureScript/Environment.hs:528:3: error:\n    • Couldn't match type ‘Bool -> TypeClassData’ with ‘TypeClassData’\n\nsrc/A.hs:3:1: error:\n    Could not find module ‘Data.Missing’\n\nsrc/B.hs:(7,1)-(9,4): error:\n    parse error on input ‘=’\nsrc/C.hs:12:5:\n    Not in scope: ‘foo’\n";
        assert_eq!(
            got(log),
            [
                (
                    "src/Language/PureScript/Environment.hs".to_string(),
                    528,
                    BugType::TypeError,
                    None
                ),
                ("src/A.hs".to_string(), 3, BugType::Import, None),
                ("src/B.hs".to_string(), 7, BugType::Syntax, None),
                ("src/C.hs".to_string(), 12, BugType::TypeError, None),
            ]
        );
    }

    #[test]
    fn warnings_are_reported_only_when_werror_fails_the_module() {
        // GHC 8+: the warning made an error names its flag.
        let log = "src/T.hs:40:1: error: [-Wunused-imports, -Werror=unused-imports]\n    The import of ‘!!’ from module ‘Data.List’ is redundant\n";
        assert_eq!(
            got(log),
            [(
                "src/T.hs".to_string(),
                40,
                BugType::Linting,
                Some("-Wunused-imports".to_string())
            )]
        );
        // GHC 7 (LogChunks pandoc): warnings, then `Failing due to -Werror.`; a module that only
        // warned and the next module's warnings stay silent.
        let warn = "[107 of 146] Compiling Text.Pandoc.Writers.Ipynb ( src/Text/Pandoc/Writers/Ipynb.hs, dist/build/Text/Pandoc/Writers/Ipynb.o )\n\nsrc/Text/Pandoc/Writers/Ipynb.hs:38:1: Warning:\n    The import of ‘Control.Monad’ is redundant\n\n";
        let fail = "<no location info>: \nFailing due to -Werror.\n";
        let next = "[108 of 146] Compiling Text.Pandoc.Writers.MediaWiki ( src/Text/Pandoc/Writers/MediaWiki.hs, dist/build/Text/Pandoc/Writers/MediaWiki.o )\nsrc/Text/Pandoc/Writers/MediaWiki.hs:9:1: warning: [-Wunused-imports]\n    The import of ‘Data.Char’ is redundant\n";
        assert_eq!(
            got(&format!("{warn}{fail}{next}")),
            [(
                "src/Text/Pandoc/Writers/Ipynb.hs".to_string(),
                38,
                BugType::Linting,
                None
            )]
        );
        assert_eq!(got(&format!("{warn}{next}{fail}")).len(), 1);
        assert_eq!(got(&format!("{warn}{next}")), []);
    }
}

//! Perl: perlcritic's violations in its default formats, `lib/X.pm: msg at line 12, column 3.
//! See page 218 of PBP.  (Severity: 5)` (several files) and the same without `file: ` (one file,
//! verbosity 5). Each is a `LINTING` report; a violation naming no file is placed in the one file
//! the echoed `perlcritic` command named.
//!
//! It must never guess a file: when the command named no single file (a directory, several
//! files, no command seen), a violation without `file: ` is not reported.

use crate::sink::{Finding, Sink};
use crate::{BugType, Ctx, Line};

/// True when the line cannot be a perlcritic violation: it does not end with its severity.
pub(crate) fn quiet(l: &Line<'_>) -> bool {
    l.last != b')' || !crate::has(&SEVERITY, l.text)
}

static SEVERITY: crate::Needle = crate::needle!("(Severity: ");

/// The single file a `perlcritic [options] <file>` command names.
fn command_file(cmd: &str) -> Option<&str> {
    let mut words = cmd.split_ascii_whitespace();
    let prog = words.next()?;
    if prog != "perlcritic" && !prog.ends_with("/perlcritic") {
        return None;
    }
    // Option values (`--verbose 8`, `--profile x`) are no Perl files; a directory is none either.
    let mut files = words.filter(|w| {
        !w.starts_with('-') && matches!(super::ext(w), "pl" | "pm" | "t" | "cgi" | "psgi")
    });
    let file = files.next()?;
    files.next().is_none().then_some(file)
}

/// Returns true when the line was claimed.
pub(crate) fn line(l: &Line<'_>, ctx: &Ctx, sink: &mut Sink) -> bool {
    let t = l.trimmed();
    let Some((body, severity)) = t
        .strip_suffix(')')
        .and_then(|r| r.rsplit_once("(Severity: "))
    else {
        return false;
    };
    if severity.is_empty() || !severity.bytes().all(|c| c.is_ascii_digit()) {
        return false;
    }
    let Some((before, after)) = body.split_once(" at line ") else {
        return false;
    };
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let Some(line) = super::num(&after[..digits]) else {
        return false;
    };
    let col = after[digits..]
        .strip_prefix(", column ")
        .and_then(|c| super::num(&c[..c.bytes().take_while(u8::is_ascii_digit).count()]));
    // `file: message` when perlcritic was given several files.
    let (file, message) = match before.split_once(": ") {
        Some((f, m)) if !f.contains(' ') && (f.contains('.') || f.contains('/')) => (f, m),
        _ => match command_file(&ctx.command) {
            Some(f) => (f, before),
            None => return false,
        },
    };
    sink.emit(
        l.no,
        Finding::new(file, line, BugType::Linting, message)
            .col(col)
            .conf(0.9)
            .tool("perlcritic"),
    );
    true
}

#[cfg(test)]
mod tests {
    use crate::{ParseOptions, parse_str};

    fn got(log: &str) -> Vec<(String, u32)> {
        parse_str(log, &ParseOptions::default())
            .into_iter()
            .map(|r| (r.file_path, r.line_number))
            .collect()
    }

    #[test]
    fn perlcritic_violations_with_and_without_the_file() {
        // LogChunks MySQLTuner-perl (Travis): one file on the command line, so no `file: `.
        let one = "$ perlcritic mysqltuner.pl\n\u{1b}[1;31mUse IO::Interactive::is_interactive() instead of -t at line 69, column 28.  See page 218 of PBP.  (Severity: 5)\u{1b}[0m\n";
        assert_eq!(got(one), [("mysqltuner.pl".to_string(), 69)]);
        let several = "+ perlcritic --severity 4 lib t\nlib/App/X.pm: Code before strictures are enabled at line 3, column 1.  See page 429 of PBP.  (Severity: 5)\n";
        assert_eq!(got(several), [("lib/App/X.pm".to_string(), 3)]);
        // `--verbose 8` prints the policy first (a bracketed prefix, cut like other wrappers').
        let verbose = "$ perlcritic --verbose 8 lib/Pod/Tree/Stream.pm\n[Subroutines::ProhibitExplicitReturnUndef] \"return\" statement with explicit \"undef\" at line 21, column 19.  (Severity: 5)\n";
        let r = parse_str(verbose, &ParseOptions::default());
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number),
            ("lib/Pod/Tree/Stream.pm", 21)
        );
        // A directory on the command line and no `file: `: the file cannot be told.
        let dir = "$ perlcritic lib\nCode before strictures are enabled at line 3, column 1.  See page 429 of PBP.  (Severity: 5)\n";
        assert_eq!(got(dir), []);
    }
}

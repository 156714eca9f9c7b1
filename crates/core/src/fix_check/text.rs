//! Line-level text helpers shared by the fixers and the guard: splitting a file into lines that
//! keep their own line endings (so CRLF files come back byte-identical outside the edit), the
//! language guessed from a path, and a quote-aware split of a line into code and trailing comment.
//!
//! Never allocates per character in hot loops over whole files beyond one pass, and never
//! normalises line endings: a fixer that rewrote every `\r\n` would change every line.

/// One line of a file: its text without the ending, and the ending itself.
// Hash and Ord: `similar` diffs slices of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Line {
    pub text: String,
    /// `"\n"`, `"\r\n"` or `""` (last line without a final newline).
    pub eol: &'static str,
}

/// Splits `content` into lines; `join_lines(split_lines(c)) == c` for every `c`.
pub(crate) fn split_lines(content: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut rest = content;
    while !rest.is_empty() {
        match rest.find('\n') {
            Some(i) => {
                let (text, eol) = if i > 0 && rest.as_bytes()[i - 1] == b'\r' {
                    (&rest[..i - 1], "\r\n")
                } else {
                    (&rest[..i], "\n")
                };
                out.push(Line {
                    text: text.to_string(),
                    eol,
                });
                rest = &rest[i + 1..];
            }
            None => {
                out.push(Line {
                    text: rest.to_string(),
                    eol: "",
                });
                rest = "";
            }
        }
    }
    out
}

pub(crate) fn join_lines(lines: &[Line]) -> String {
    let mut s = String::with_capacity(lines.iter().map(|l| l.text.len() + 2).sum());
    for l in lines {
        s.push_str(&l.text);
        s.push_str(l.eol);
    }
    s
}

/// The line ending most of the file uses (`\n` when there is none).
pub(crate) fn dominant_eol(content: &str) -> &'static str {
    let lf = content.matches('\n').count();
    let crlf = content.matches("\r\n").count();
    if crlf * 2 > lf { "\r\n" } else { "\n" }
}

/// Removes line `idx` (0-based). When it was the last line and had no ending, the line before it
/// loses its ending too, so a file never gains a trailing newline it did not have.
pub(crate) fn remove_line(lines: &mut Vec<Line>, idx: usize) {
    let removed = lines.remove(idx);
    if removed.eol.is_empty() && idx > 0 && idx == lines.len() {
        lines[idx - 1].eol = "";
    }
}

/// Source languages the fixers and the guard know, guessed from the file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Python,
    Rust,
    Go,
    /// JavaScript and TypeScript, all module flavours.
    Js,
    /// Other languages whose comments start with `//` (C, C++, Java, Kotlin, C#, Swift…).
    CLike,
    /// Languages whose comments start with `#` (shell, YAML, TOML, Ruby…).
    Hash,
    Unknown,
}

pub(crate) fn lang_of(path: &str) -> Lang {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = match name.rsplit_once('.') {
        Some((_, e)) => e.to_ascii_lowercase(),
        None => return Lang::Unknown,
    };
    match ext.as_str() {
        "py" | "pyi" => Lang::Python,
        "rs" => Lang::Rust,
        "go" => Lang::Go,
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" => Lang::Js,
        "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "java" | "kt" | "kts" | "cs"
        | "swift" | "scala" | "dart" | "php" => Lang::CLike,
        "sh" | "bash" | "zsh" | "yml" | "yaml" | "toml" | "rb" | "pl" | "r" | "cfg" | "ini"
        | "conf" | "mk" => Lang::Hash,
        _ => Lang::Unknown,
    }
}

/// Splits a line into its code and its trailing comment (the comment starts at its marker; the
/// code keeps any blanks before it). Quote-aware on one line only: a string spanning lines is
/// not tracked, which at worst makes callers decline.
pub(crate) fn split_comment(line: &str, lang: Lang) -> (&str, &str) {
    let (hash, slash, quotes): (bool, bool, &[u8]) = match lang {
        Lang::Python | Lang::Hash => (true, false, b"\"'"),
        // A Rust `'` is as often a lifetime as a char literal: not a quote for this purpose.
        Lang::Rust => (false, true, b"\""),
        Lang::Go => (false, true, b"\"'`"),
        Lang::Js => (false, true, b"\"'`"),
        Lang::CLike => (false, true, b"\"'"),
        Lang::Unknown => (false, false, b""),
    };
    let b = line.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == b'\\' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None => {
                if quotes.contains(&c) {
                    quote = Some(c);
                } else if (hash && c == b'#')
                    || (slash && c == b'/' && matches!(b.get(i + 1), Some(b'/') | Some(b'*')))
                {
                    return (&line[..i], &line[i..]);
                }
            }
        }
        i += 1;
    }
    (line, "")
}

/// Whether a whole line is a comment in `lang` (blank lines are not).
pub(crate) fn is_comment_line(line: &str, lang: Lang) -> bool {
    let t = line.trim_start();
    let hash = t.starts_with('#');
    let slash = t.starts_with("//") || t.starts_with("/*") || t.starts_with("*");
    match lang {
        Lang::Python | Lang::Hash => hash && !t.starts_with("#!"),
        Lang::Rust | Lang::Go | Lang::Js | Lang::CLike => slash,
        // Unknown languages: both, except the pre-processor and attribute forms of `#`.
        Lang::Unknown => {
            slash
                || (hash
                    && !t.starts_with("#[")
                    && !t.starts_with("#!")
                    && !t.starts_with("#include")
                    && !t.starts_with("#define")
                    && !t.starts_with("#if")
                    && !t.starts_with("#endif")
                    && !t.starts_with("#pragma"))
        }
    }
}

/// The leading blanks of a line.
pub(crate) fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Code part of a line with its trailing blanks removed, and what followed it (blanks + comment).
pub(crate) fn code_and_tail(line: &str, lang: Lang) -> (&str, &str) {
    let (code, _) = split_comment(line, lang);
    let trimmed = code.trim_end();
    (trimmed, &line[trimmed.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_join_round_trips_every_ending() {
        for c in ["", "a", "a\n", "a\r\nb", "a\r\nb\r\n", "\n\n", "x\ry\n"] {
            assert_eq!(join_lines(&split_lines(c)), c, "{c:?}");
        }
        let l = split_lines("a\r\nb");
        assert_eq!(l[0].eol, "\r\n");
        assert_eq!(l[1].eol, "");
    }

    #[test]
    fn removing_the_last_line_keeps_the_missing_final_newline() {
        let mut l = split_lines("a\nb");
        remove_line(&mut l, 1);
        assert_eq!(join_lines(&l), "a");
    }

    #[test]
    fn comments_are_found_outside_strings_only() {
        assert_eq!(
            split_comment("x = '#no'  # yes", Lang::Python),
            ("x = '#no'  ", "# yes")
        );
        assert_eq!(
            split_comment("let s = \"//\"; // c", Lang::Rust),
            ("let s = \"//\"; ", "// c")
        );
        assert_eq!(
            split_comment("fn f<'a>(x: &'a str) // c", Lang::Rust),
            ("fn f<'a>(x: &'a str) ", "// c")
        );
        assert_eq!(
            code_and_tail("  a = 1   # c", Lang::Python),
            ("  a = 1", "   # c")
        );
    }

    #[test]
    fn languages_from_extensions() {
        assert_eq!(lang_of("src/a.py"), Lang::Python);
        assert_eq!(lang_of("web/x.test.tsx"), Lang::Js);
        assert_eq!(lang_of("Makefile"), Lang::Unknown);
        assert!(is_comment_line("  # c", Lang::Python));
        assert!(!is_comment_line("#[test]", Lang::Unknown));
        assert!(is_comment_line("/// doc", Lang::Rust));
    }
}

//! C# / F# / VB.NET: MSBuild and `dotnet build` diagnostics (`File.cs(12,5): error CS0103: msg
//! [/path/proj.csproj]`, with `2>` / `17:4>` node prefixes), analyzer and `dotnet format`
//! findings reported as errors, and test failures from xUnit (`Ns.Class.Test [FAIL]`), `dotnet
//! test`'s console logger (`Failed Ns.Class.Test [12 ms]`, NUnit and MSTest too) and NUnit's
//! console (`1) Failed : Ns.Class.Test`), placed at the innermost stack frame in the repository
//! (`at Ns.Class.Test() in /path/Test.cs:line 12`, or Mono's `/path/Test.cs(12,0): at …`).
//!
//! MSBuild prints MSVC's C/C++ errors the same way (`..\afl-fuzz.c(2548): error C2143: syntax
//! error : missing ';' before 'type' [E:\…\afl-fuzz.vcxproj]`); a C/C++ line is read only
//! with one of `cl.exe`'s `C`-codes.
//!
//! MSBuild prints a path relative to the project when the file is under it; the project path in
//! brackets then gives the directory. A console wraps long lines at its width (120 columns on
//! Windows): an error line whose project suffix went onto the next lines is joined with them. It must never report a `warning` (warnings promoted by
//! `TreatWarningsAsErrors` are printed as `error`), a frame without a file, or a frame outside
//! the repository.

use std::sync::LazyLock;

use regex::Regex;

use crate::sink::{Finding, Sink};
use crate::{BugType, Line};

const BLOCK_BUDGET: u32 = 200;

static MSBUILD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(.+?\.(?:cs|fs|fsi|fsx|vb|cshtml|razor|xaml|c|cc|cpp|cxx|h|hh|hpp|hxx|inl|ixx)) ?\((\d+)(?:,(\d+))?(?:[-,]\d+)*\) ?: +(?:fatal )?(?i:(error|warning))(?: +([A-Za-z]+\d*))? *: *(.*?)(?: \[([^\[\]]+)\])?$",
    )
    .unwrap()
});
/// `at M() in /p/T.cs:line 12`, and Microsoft.Testing.Platform's `at M() in /p/T.cs:280`.
static FRAME_AT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^at (.+?) in (.+?\.(?:cs|fs|vb)):(?:line )?(\d+)$").unwrap());
static FRAME_MONO: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(.+?\.(?:cs|fs|vb))\((\d+),\d+\): at (.+)$").unwrap());

/// Pester (PowerShell): `at <ScriptBlock>, /path/X.Tests.ps1: line 137` (Pester 4) and
/// `at <ScriptBlock>, /path/X.Tests.ps1:137` (Pester 5 and its runtime's own test harness).
static FRAME_PESTER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^at (.+?), (.+?\.ps[dm]?1)(?:: line |:)(\d+)$").unwrap());
static PESTER_FAILED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[-\] (.+?)(?: \d+(?:\.\d+)?m?s)?$").unwrap());

/// PowerShell assertion functions whose frames sit above the test's own line: Pester's
/// `Should`/`Invoke-Assertion`, Axiom's `Verify-*`, `Assert-*` helpers.
fn is_assertion_function(f: &str) -> bool {
    f.starts_with("Should")
        || f.starts_with("Verify-")
        || f.starts_with("Assert-")
        || f == "Invoke-Assertion"
}

#[derive(Debug)]
struct TestBlock {
    test: Option<String>,
    message: String,
    seq: u64,
    budget: u32,
}

#[derive(Debug, Default)]
pub(crate) struct Dotnet {
    block: Option<TestBlock>,
    /// An error line with a relative path and no `[project]` suffix, which the next lines may
    /// continue (a wrapped console): the line, the text joined so far, its log line, and lines
    /// left to wait for the suffix.
    wrapped: Option<Wrapped>,
}

#[derive(Debug)]
struct Wrapped {
    line: String,
    joined: String,
    seq: u64,
    left: u8,
}

/// Continuation lines a wrapped MSBuild error may take (the project path is the longest part).
const WRAP_LINES: u8 = 3;

/// A project file's path closing an MSBuild line: `…\App.csproj]`.
fn ends_with_project(t: &str) -> bool {
    t.ends_with("proj]")
}

/// Build output inside the checkout (`bin/Release/…/publish/Modules/Pester/…`, `obj/`).
fn is_build_output(path: &str) -> bool {
    ["bin/Debug/", "bin/Release/", "obj/"]
        .iter()
        .any(|m| path.starts_with(m) || path.contains(&format!("/{m}")))
}

/// C# compiler warnings that `TreatWarningsAsErrors` turns into errors: lint findings.
fn is_cs_warning(n: u32) -> bool {
    const W: [u32; 31] = [
        67, 105, 108, 109, 114, 162, 164, 168, 169, 219, 414, 436, 465, 472, 612, 618, 649, 659,
        660, 661, 672, 693, 728, 1030, 1058, 1998, 4014, 7022, 8002, 8073, 8321,
    ];
    W.contains(&n) || (1570..=1592).contains(&n) || (8600..=8899).contains(&n)
}

fn is_syntax(msg: &str) -> bool {
    const STARTS: [&str; 9] = [
        "Syntax error",
        "Invalid token",
        "Invalid expression term",
        "Unexpected character",
        "Newline in constant",
        "Unterminated",
        "Identifier expected",
        "Type expected",
        "Unexpected symbol",
    ];
    let m = msg.trim_end_matches('.');
    m.ends_with(" expected") || STARTS.iter().any(|s| m.starts_with(s))
}

/// Classifies a diagnostic by its code (`CS0103`, `FS0039`, `CA1822`, `IDE0055`, `WHITESPACE`).
fn classify(code: Option<&str>, msg: &str) -> BugType {
    let Some(code) = code else {
        return if is_syntax(msg) {
            BugType::Syntax
        } else {
            BugType::TypeError
        };
    };
    if let Some(n) = code.strip_prefix("CS").and_then(|n| n.parse::<u32>().ok()) {
        return match n {
            6 | 12 | 234 | 246 => BugType::Import,
            n if is_cs_warning(n) => BugType::Linting,
            _ if is_syntax(msg) => BugType::Syntax,
            _ => BugType::TypeError,
        };
    }
    let compiler = ["FS", "BC", "MSB", "NU", "NETSDK", "CS"];
    if compiler.iter().any(|p| {
        code.strip_prefix(p)
            .is_some_and(|n| n.bytes().all(|c| c.is_ascii_digit()))
    }) {
        return if is_syntax(msg) {
            BugType::Syntax
        } else {
            BugType::TypeError
        };
    }
    // Roslyn analyzers (CA, IDE, SA, S, RCS, xUnit…) and `dotnet format` (WHITESPACE…).
    BugType::Linting
}

/// The first or last byte of a line that may start a test block (`Failed …`, `… [FAIL]`,
/// `1) Failed : …`, `[-] …`, `Unhandled exception.`).
#[inline]
fn test_header(l: &Line<'_>) -> bool {
    matches!(l.first, b'F' | b'U' | b'[' | b'0'..=b'9')
        || (l.first == b'f' && l.last == b')' && l.trimmed().starts_with("failed "))
        || (l.first == b'E' && l.trimmed().starts_with("ERROR: - "))
        || (l.last == b']' && l.trimmed().ends_with("[FAIL]"))
}

/// An extension MSBuild's .NET compilers report errors in (what [`MSBUILD`] matches).
fn is_dotnet_ext(ext: &[u8]) -> bool {
    matches!(
        ext,
        b"cs" | b"fs" | b"fsi" | b"fsx" | b"vb" | b"cshtml" | b"razor" | b"xaml"
    )
}

/// An extension of a C or C++ source or header, which MSBuild compiles with `cl.exe`.
fn is_c_ext(ext: &[u8]) -> bool {
    matches!(
        ext,
        b"c" | b"cc" | b"cpp" | b"cxx" | b"h" | b"hh" | b"hpp" | b"hxx" | b"inl" | b"ixx"
    )
}

/// A C or C++ source or header.
fn is_c_family(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, e)| is_c_ext(e.as_bytes()))
}

/// `cl.exe`'s diagnostic codes: `C` and four digits (`C2065`, `C1083`, `C4996`).
fn is_msvc_code(code: &str) -> bool {
    code.strip_prefix('C')
        .is_some_and(|n| n.len() == 4 && n.bytes().all(|c| c.is_ascii_digit()))
}

/// Classifies an MSVC error by its code and wording: `C1083` cannot open an include file,
/// `C4xxx` are warnings `/WX` made errors, and cl words its parse errors `syntax error`.
fn classify_msvc(code: &str, msg: &str) -> BugType {
    match code {
        "C1083" => BugType::Import,
        "C1004" | "C1075" => BugType::Syntax,
        c if c.starts_with("C4") => BugType::Linting,
        _ if msg.starts_with("syntax error") => BugType::Syntax,
        _ => BugType::TypeError,
    }
}

/// An error line that ends inside its project suffix (` [E:\softwares\w`): the console cut it.
fn open_project(msg: &str) -> bool {
    msg.rfind(" [").is_some_and(|i| !msg[i..].contains(']'))
}

/// False when [`MSBUILD`] cannot match `t`: it needs one of its extensions right before a `(`
/// (or ` (`). Lines with a `):` are many in real logs (stack frames, test names), and the regex
/// with its captures was among the costliest steps on them.
fn msbuild_may_match(t: &str) -> bool {
    let b = t.as_bytes();
    memchr::memchr_iter(b'(', b).any(|i| {
        let before = &b[..i];
        let before = before.strip_suffix(b" ").unwrap_or(before);
        // The extension follows the last dot of the 7 bytes before it (`.cshtml` is the longest).
        let tail = &before[before.len().saturating_sub(7)..];
        let Some(dot) = memchr::memrchr(b'.', tail) else {
            return false;
        };
        let ext = &tail[dot + 1..];
        is_dotnet_ext(ext) || is_c_ext(ext)
    })
}

/// `)` followed by `:` or ` :` (an MSBuild location `File.cs(12,5): …`).
fn paren_colon(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr_iter(b')', b).any(|i| match b.get(i + 1) {
        Some(b':') => true,
        Some(b' ') => b.get(i + 2) == Some(&b':'),
        _ => false,
    })
}

/// `dotnet test` prefixes xUnit's own lines with `[xUnit.net 00:00:06.52]`; what follows is
/// the runner's line, indented.
fn strip_xunit_prefix(t: &str) -> &str {
    match t.strip_prefix("[xUnit.net ") {
        Some(rest) => rest.split_once(']').map_or(t, |(_, r)| r.trim_start()),
        None => t,
    }
}

/// Microsoft.Testing.Platform's terminal reporter (MSTest runner, `dotnet test` on it):
/// `failed Name ("net9.0",Debug) (6s 220ms)`, the method's arguments then the duration.
fn mtp_failed_test(t: &str) -> Option<&str> {
    let rest = t.strip_prefix("failed ")?.strip_suffix(')')?;
    let (head, dur) = rest.rsplit_once(" (")?;
    let time = |w: &str| {
        let digits = w.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && matches!(&w[digits..], "ms" | "s" | "m" | "h")
    };
    if !dur.split(' ').all(time) {
        return None;
    }
    let name = head.split_once(" (").map_or(head, |(n, _)| n);
    (identifier(name) || plausible(name)).then_some(name)
}

/// A frame `at Ns.Class.Test(args) in …` whose method is the failing test named `test` (in
/// full or by its method name).
fn own_test_frame(frame: &str, test: Option<&str>) -> bool {
    let Some(test) = test.map(|t| t.split('(').next().unwrap_or(t)) else {
        return false;
    };
    let method = frame
        .strip_prefix("at ")
        .and_then(|m| m.split('(').next())
        .unwrap_or("");
    !test.is_empty()
        && (method == test
            || method
                .strip_suffix(test)
                .is_some_and(|ns| ns.ends_with('.')))
}

/// `Ns.Class.Test [FAIL]`, `Failed Ns.Class.Test [12 ms]`, `1) Failed : Ns.Class.Test`.
fn failed_test(t: &str) -> Option<&str> {
    if t.starts_with("failed ") {
        return mtp_failed_test(t);
    }
    if let Some(name) = t.strip_suffix("[FAIL]") {
        let name = strip_xunit_prefix(name.trim()).trim();
        return plausible(name).then_some(name);
    }
    let rest = super::ruby::numbered(t).unwrap_or(t);
    let name = rest
        .strip_prefix("Failed : ")
        .or_else(|| rest.strip_prefix("Error : "))
        .or_else(|| rest.strip_prefix("Failed "))?
        // Older console loggers align the name: `Failed   Ns.Class.Test`.
        .trim_start();
    // `[12 ms]` / `[< 1 ms]` after the name.
    let (name, timed) = match name.rfind(" [") {
        Some(i) if name.ends_with(']') => (&name[..i], duration(&name[i + 2..name.len() - 1])),
        _ => (name, false),
    };
    // With NUnit the console logger names the method alone (`Failed Test_x [850 ms]`): the
    // duration after it is what makes the line a test's verdict.
    (plausible(name) || timed && identifier(name)).then_some(name)
}

/// The console logger's duration of a test: `850 ms`, `< 1 ms`, `10 s`, `1 m 5 s`.
fn duration(d: &str) -> bool {
    let d = d.strip_prefix("< ").unwrap_or(d);
    d.bytes().next().is_some_and(|c| c.is_ascii_digit())
        && d.split(' ')
            .all(|w| w.bytes().all(|c| c.is_ascii_digit()) || matches!(w, "ms" | "s" | "m" | "h"))
}

/// A bare method name, arguments aside: `Test_x`, `Case(Software fallback)`.
fn identifier(name: &str) -> bool {
    let head = name.split('(').next().unwrap_or(name);
    head.bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && head.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// A test name: `Ns.Class.Test` or `Ns.Class.Test(x: 1)`, no spaces before the arguments.
fn plausible(name: &str) -> bool {
    let head = name.split('(').next().unwrap_or(name);
    head.bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && head.contains('.')
        && !head.contains(' ')
}

impl Dotnet {
    #[inline]
    pub fn quiet(&self, l: &Line<'_>) -> bool {
        self.block.is_none()
            && self.wrapped.is_none()
            && !test_header(l)
            && !(l.colon && paren_colon(l.text))
    }

    pub fn line(&mut self, l: &Line<'_>, sink: &mut Sink) -> bool {
        if let Some(mut w) = self.wrapped.take() {
            // A continuation is glued back as printed (the console cut mid-word), and used only
            // when it ends with the project suffix; otherwise the line stands alone.
            let another_error = l.colon && paren_colon(l.text);
            if !(l.is_blank() || another_error) {
                w.joined.push_str(l.text);
                if ends_with_project(l.text) {
                    self.msbuild_line(&w.joined, w.seq, sink);
                    return true;
                }
                if w.left > 1 {
                    w.left -= 1;
                    self.wrapped = Some(w);
                    return true;
                }
            }
            self.msbuild_line(&w.line, w.seq, sink);
        }
        let t = strip_xunit_prefix(l.trimmed());
        if self.block.is_some()
            && let Some(done) = self.block_line(t, sink)
        {
            return done;
        }
        if let Some(name) = failed_test(t).filter(|_| test_header(l)) {
            self.block = Some(TestBlock {
                test: Some(name.to_string()),
                message: String::new(),
                seq: l.no,
                budget: BLOCK_BUDGET,
            });
            return true;
        }
        // Pester's runtime harness prints a test that threw as `ERROR: - name -> message`.
        if let Some(rest) = t.strip_prefix("ERROR: - ")
            && let Some((name, message)) = rest.split_once(" -> ")
        {
            self.block = Some(TestBlock {
                test: Some(name.to_string()),
                message: message.to_string(),
                seq: l.no,
                budget: BLOCK_BUDGET,
            });
            return true;
        }
        if l.first == b'['
            && let Some(c) = PESTER_FAILED.captures(t)
        {
            // Pester's runtime test harness: `[-] - name -> message`.
            let (name, message) = match c[1].strip_prefix("- ").and_then(|r| r.split_once(" -> ")) {
                Some((name, message)) => (name, message),
                None => (&c[1], ""),
            };
            self.block = Some(TestBlock {
                test: Some(name.to_string()),
                message: message.to_string(),
                seq: l.no,
                budget: BLOCK_BUDGET,
            });
            return true;
        }
        if let Some(msg) = t.strip_prefix("Unhandled exception. ") {
            self.block = Some(TestBlock {
                test: None,
                message: msg.to_string(),
                seq: l.no,
                budget: BLOCK_BUDGET,
            });
            return true;
        }
        if l.colon && paren_colon(t) {
            return self.msbuild(t, l.no, sink);
        }
        false
    }

    /// A joined line: reported as [`msbuild`](Dotnet::msbuild) reads it (its continuation may
    /// have ended elsewhere than at a project suffix).
    fn msbuild_line(&mut self, t: &str, seq: u64, sink: &mut Sink) {
        self.msbuild_at(t, seq, false, sink);
    }

    fn msbuild(&mut self, t: &str, seq: u64, sink: &mut Sink) -> bool {
        self.msbuild_at(t, seq, true, sink)
    }

    /// `may_wrap`: the line is as the log printed it, so an error without a project suffix
    /// may continue on the next lines.
    fn msbuild_at(&mut self, t: &str, seq: u64, may_wrap: bool, sink: &mut Sink) -> bool {
        // Node prefixes: `2>`, `17:4>`, Ant's `[exec] `.
        let mut t = t.strip_prefix("[exec] ").unwrap_or(t).trim_start();
        if let Some(gt) = t.find('>') {
            let node = &t[..gt];
            if !node.is_empty() && node.bytes().all(|c| c.is_ascii_digit() || c == b':') {
                t = &t[gt + 1..];
            }
        }
        let Some(c) = msbuild_may_match(t).then(|| MSBUILD.captures(t)).flatten() else {
            return false;
        };
        let code = c.get(5).map(|m| m.as_str());
        // MSVC (`cl.exe`) under MSBuild: a C/C++ file is its only when the code is one of
        // cl's (`C2065`); clang-cl and MSVC-built gtest print `file(line): error: …` too.
        let msvc = is_c_family(&c[1]);
        if msvc && !code.is_some_and(is_msvc_code) {
            return false;
        }
        if !c[4].eq_ignore_ascii_case("error") {
            return true;
        }
        let msg = &c[6];
        let mut path = c[1].trim().to_string();
        let relative = !(path.starts_with('/') || path.as_bytes().get(1) == Some(&b':'));
        // A console of 80 columns cuts even short lines, often inside the project suffix
        // (`… before 'type' [E:\`).
        if may_wrap && relative && c.get(7).is_none() && (t.len() >= 100 || open_project(msg)) {
            self.wrapped = Some(Wrapped {
                line: t.to_string(),
                joined: t.to_string(),
                seq,
                left: WRAP_LINES,
            });
            return true;
        }
        // A relative path is relative to the project's directory.
        if let Some(proj) = c.get(7).map(|m| m.as_str().trim()) {
            let absolute = |p: &str| p.starts_with('/') || p.as_bytes().get(1) == Some(&b':');
            if !absolute(&path)
                && absolute(proj)
                && let Some(i) = proj.rfind(['/', '\\'])
            {
                path = format!("{}/{}", &proj[..i], path);
            }
        }
        let (ty, tool) = if msvc {
            (classify_msvc(code.unwrap_or(""), msg), "msvc")
        } else {
            (classify(code, msg), "msbuild")
        };
        sink.emit(
            seq,
            Finding::new(&path, super::num(&c[2]).unwrap_or(0), ty, msg)
                .col(c.get(3).and_then(|m| super::num(m.as_str())))
                .conf(0.95)
                .tool(tool)
                .rule(code),
        );
        true
    }

    /// A line inside a failed test's output. `Some(consumed)` when the block decided.
    fn block_line(&mut self, t: &str, sink: &mut Sink) -> Option<bool> {
        let b = self.block.as_mut()?;
        if b.budget == 0 {
            self.block = None;
            return None;
        }
        b.budget -= 1;
        let frame = if t.starts_with("at ") {
            match FRAME_AT.captures(t) {
                Some(c) => Some((c[2].to_string(), c[3].to_string())),
                // An assertion function's own frame (Pester's `Should`, Axiom's `Verify-Equal`,
                // kept in the repository under `Dependencies/`) is never where the test failed.
                None => FRAME_PESTER
                    .captures(t)
                    .filter(|c| !is_assertion_function(&c[1]))
                    .map(|c| (c[2].to_string(), c[3].to_string())),
            }
        } else if t.ends_with(')') && t.contains("): at ") {
            FRAME_MONO
                .captures(t)
                .map(|c| (c[1].to_string(), c[2].to_string()))
        } else {
            None
        };
        let Some((path, line)) = frame else {
            if b.message.is_empty()
                && !t.is_empty()
                && !t.starts_with("Error Message:")
                && !t.starts_with("Stack Trace:")
            {
                b.message = crate::sink::truncate_chars(t, 400).to_string();
            } else if b.message.starts_with("Assert.")
                && (t.starts_with("Expected:") || t.starts_with("But was:"))
                && b.message.len() < 600
            {
                // NUnit 4 first echoes the assertion (`Assert.That(x, Is.True)`); what failed
                // is on the lines under it (`Expected: True`, `But was:  False`).
                b.message.push_str(": ");
                b.message.push_str(crate::sink::truncate_chars(t, 200));
            }
            // A new test or the run's summary ends the block.
            if failed_test(t).is_some()
                || t.starts_with("Total tests")
                || t.starts_with("Failed!")
                || t.starts_with("[-] ")
            {
                self.block = None;
                return None;
            }
            return Some(t.starts_with("Error Message:") || t.starts_with("Stack Trace:"));
        };
        // `/_/` is a deterministic build's source root: the repository that built the frame's
        // assembly, which may be a dependency's (the runtime's own frames print it too). Only
        // the failing test's own method is surely this repository's.
        let path = match path.strip_prefix("/_/") {
            Some(rest) if own_test_frame(t, b.test.as_deref()) => rest.to_string(),
            Some(_) => return Some(true),
            None => path,
        };
        let Some(rel) = sink.repo_path(&path) else {
            return Some(true);
        };
        if crate::path::is_vendored(&rel) || is_build_output(&rel) {
            return Some(true);
        }
        let msg = if b.message.is_empty() {
            "test failed".to_string()
        } else {
            b.message.clone()
        };
        let (seq, test) = (b.seq, b.test.clone());
        sink.emit(
            seq,
            Finding::new(&rel, super::num(&line).unwrap_or(0), BugType::Logic, &msg)
                .test(test.as_deref())
                .conf(0.85)
                .tool(if test.is_some() {
                    "dotnet-test"
                } else {
                    "dotnet"
                }),
        );
        self.block = None;
        Some(true)
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        if let Some(w) = self.wrapped.take() {
            self.msbuild_line(&w.line, w.seq, sink);
        }
        self.block = None;
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_extension_prefilter_never_refuses_a_line_msbuild_matches() {
        let lines = [
            "src/A.cs(12,5): error CS0103: The name 'x' does not exist [/w/p.csproj]",
            "C:\\a\\B.vb (3) : warning BC42024: Unused local variable",
            "Views/Home.cshtml(7,1-7,9): error RZ1006: x",
            "App.xaml(1,2): error MC3000: y",
            "Lib.fs(4,5): error FS0039: z",
            "at Foo.Bar() in /w/src/A.cs:line 12",
            "Test(name): passed",
        ];
        for l in lines {
            let regex = super::MSBUILD.is_match(l);
            assert!(
                !regex || super::msbuild_may_match(l),
                "prefilter refuses {l:?}"
            );
        }
        assert!(!super::msbuild_may_match("Test(name): passed"));
        assert!(!super::msbuild_may_match("src/a.ts(3,4): error TS2304: x"));
    }
    use crate::{BugType, ParseOptions, parse_str};

    fn parse(log: &str) -> Vec<crate::BugReport> {
        parse_str(log, &ParseOptions::default())
    }

    #[test]
    fn a_console_wrapped_error_finds_its_project_on_the_next_lines() {
        let log = "  Enable_ICS.cs(2,25): error CS0234: The type or namespace name 'Automation' does not exist in the namespace 'System.Ma\n\
                   nagement' (are you missing an assembly reference?) [D:\\a\\R\\R\\IcsManagerLib\n\
                   rary\\IcsManagerLibrary.csproj]\n\
                   Program.cs(7,30): error CS0246: The type or namespace name 'PSCmdlet' could not be found (are you missing a using directive)\n\
                   Compilation failed: 1 error(s), 0 warnings\n";
        let r: Vec<_> = parse(log)
            .into_iter()
            .map(|r| (r.file_path, r.line_number, r.message))
            .collect();
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].0, "IcsManagerLibrary/Enable_ICS.cs");
        assert!(
            r[0].2.ends_with("(are you missing an assembly reference?)"),
            "{r:?}"
        );
        assert_eq!((r[1].0.as_str(), r[1].1), ("Program.cs", 7));
        assert!(r[1].2.ends_with("using directive)"), "{r:?}");
    }

    #[test]
    fn mstest_runner_failure_at_a_deterministic_source_path() {
        // microsoft/testfx#6240: Microsoft.Testing.Platform's terminal reporter, a frame without
        // `:line`, under the `/_/` source root of a deterministic build; another `/_/` frame
        // (not the test's method) may be a dependency's and is passed over.
        let log = "  failed Invalid_TestingProfile_Name_Should_Fail (\"net9.0;net8.0;net7.0;net6.0;net462\",Debug) (6s 220ms)\n    Assert.AreEqual failed. Expected:<1>. Actual:<-532462766>. \n      at Lib.Helper.Check() in /_/src/Lib/Helper.cs:10\n      at MSTest.Acceptance.IntegrationTests.SdkTests.Invalid_TestingProfile_Name_Should_Fail(String multiTfm, BuildConfiguration buildConfiguration) in /_/test/IntegrationTests/MSTest.Acceptance.IntegrationTests/SdkTests.cs:280\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            (
                "test/IntegrationTests/MSTest.Acceptance.IntegrationTests/SdkTests.cs",
                280,
                BugType::Logic
            )
        );
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("Invalid_TestingProfile_Name_Should_Fail")
        );
        assert!(super::mtp_failed_test("failed to restore (1 project)").is_none());
    }

    #[test]
    fn msvc_errors_under_msbuild_wrapped_at_80_columns() {
        // googleprojectzero/winafl#155: cl.exe's errors under MSBuild, cut by an 80-column
        // console inside the project suffix; the path is relative to the project's directory,
        // here in a "Download ZIP" folder; warnings are not reported.
        let log = "  afl-fuzz.c\n\
..\\afl-fuzz.c(2548): error C2143: syntax error : missing ';' before 'type' [E:\\\n\
softwares\\winafl-master\\build64\\afl-fuzz.vcxproj]\n\
..\\afl-fuzz.c(2549): error C2065: 'buf' : undeclared identifier [E:\\softwares\\w\n\
inafl-master\\build64\\afl-fuzz.vcxproj]\n\
..\\afl-fuzz.c(2549): warning C4022: '_read' : pointer mismatch for actual param\n\
eter 2 [E:\\softwares\\winafl-master\\build64\\afl-fuzz.vcxproj]\n";
        let r: Vec<_> = parse(log)
            .into_iter()
            .map(|r| (r.file_path, r.line_number, r.error_type, r.message))
            .collect();
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[0].0.as_str(), r[0].1, r[0].2),
            ("afl-fuzz.c", 2548, BugType::Syntax)
        );
        assert_eq!(r[0].3, "syntax error : missing ';' before 'type'");
        assert_eq!(
            (r[1].0.as_str(), r[1].1, r[1].2),
            ("afl-fuzz.c", 2549, BugType::TypeError)
        );
        assert_eq!(r[1].3, "'buf' : undeclared identifier");
    }

    #[test]
    fn msvc_errors_outside_a_checkout_and_without_a_code() {
        // NeuralNote's VS Code CMake build: a user's directory is no checkout; the same line
        // from a runner's checkout is read. A `file(line): error:` without cl's code (clang-cl,
        // gtest under MSVC) is left to the other rules.
        let line = "C:\\Users\\ryanb\\OneDrive\\Documents\\NeuralNote\\NeuralNote\\NeuralNote\\Source\\Components\\NeuralNoteLNF.cpp(71,15): error C2065: 'LABEL_FONT': undeclared identifier [C:\\Users\\ryanb\\OneDrive\\Documents\\NeuralNote\\NeuralNote\\build\\NeuralNote.vcxproj]\n";
        assert!(parse(line).is_empty());
        let ci = line.replace(
            "C:\\Users\\ryanb\\OneDrive\\Documents\\NeuralNote\\NeuralNote",
            "D:\\a\\NeuralNote\\NeuralNote",
        );
        let r = parse(&ci);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            (
                "NeuralNote/Source/Components/NeuralNoteLNF.cpp",
                71,
                BugType::TypeError
            )
        );
        assert_eq!(r[0].rule.as_deref(), Some("C2065"));
        assert_eq!(
            super::classify_msvc("C1083", "Cannot open include file: 'x.h'"),
            BugType::Import
        );
        assert_eq!(
            super::classify_msvc("C4996", "'strcpy': This function"),
            BugType::Linting
        );
        let mut d = super::Dotnet::default();
        let mut sink = crate::sink::Sink::new(None);
        assert!(!d.msbuild("src/a.cpp(3): error: Value of: x", 1, &mut sink));
    }

    #[test]
    fn msbuild_errors_relative_to_the_project() {
        // NancyFx/Nancy Travis log (LogChunks), jenkinsci/analysis-model issue6709.txt
        let log = "Extensions/CollectionExtensions.cs(20,40): error CS0103: The name 'key' does not exist in the current context [/home/travis/build/NancyFx/Nancy/src/Nancy/Nancy.csproj]\n     2>Rules\\TaskRules.cs(1145,49): warning CS0168: The variable 'ex' is declared but never used\nD:\\a\\R\\R\\src\\A.cs(3,1): error CS0246: The type or namespace name 'Foo' could not be found (are you missing a using directive or an assembly reference?) [D:\\a\\R\\R\\src\\A.csproj]\n  17:4>/home/runner/work/R/R/src/B.cs(9,13): error CS0168: The variable 'x' is declared but never used [/home/runner/work/R/R/src/B.csproj]\n/home/runner/work/R/R/src/C.cs(1,1): error WHITESPACE: Fix whitespace formatting. [/home/runner/work/R/R/src/C.csproj]\nsrc/D.cs(4,2): error CS1002: ; expected\n";
        let r = parse(log);
        assert_eq!(r.len(), 5, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "src/Nancy/Extensions/CollectionExtensions.cs"
        );
        assert_eq!((r[0].line_number, r[0].column), (20, Some(40)));
        assert_eq!(r[0].error_type, BugType::TypeError);
        assert_eq!(r[1].error_type, BugType::Import);
        assert_eq!(r[1].file_path, "src/A.cs");
        assert_eq!(r[2].error_type, BugType::Linting);
        assert_eq!(r[3].error_type, BugType::Linting);
        assert_eq!(r[4].error_type, BugType::Syntax);
    }

    #[test]
    fn pester_runtime_harness_failure_skips_assertion_frames() {
        // LogChunks Pester (Travis, macOS): the new runtime's harness with Axiom's assertions.
        let log = "[-] - Running without any params runs all files from the local folder -> Expected and actual values differ!\nExpected: '/var/folders/bb/T/dir/file1.Tests.ps1'\nActual  : 'file1.Tests.ps1'\nat Verify-Equal, /Users/travis/build/pester/Pester/Dependencies/Axiom/Verify-Equal.ps1:16\nat <ScriptBlock>, /Users/travis/build/pester/Pester/new-runtimepoc/Pester.RSpec.ts.ps1:184\nat t, /Users/travis/build/pester/Pester/new-runtimepoc/p.psm1:103\nat <ScriptBlock>, <No file>:1\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].file_path, "new-runtimepoc/Pester.RSpec.ts.ps1");
        assert_eq!(r[0].line_number, 184);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("Running without any params runs all files from the local folder")
        );
        assert_eq!(r[0].message, "Expected and actual values differ!");
        // A test that threw: PowerShell's error record, then the same frames.
        let log = "ERROR: - Exluding full path excludes it tests from Paths runs them -> The property 'Count' cannot be found on this object. Verify that the property \nexists.\nAt /Users/travis/build/pester/Pester/new-runtimepoc/Pester.RSpec.ts.ps1:199 \nchar:17\n+                 $result.Count | Verify-Equal 1\n    + CategoryInfo          : NotSpecified: (:) [], PropertyNotFoundException\n \n\nat <ScriptBlock>, /Users/travis/build/pester/Pester/new-runtimepoc/Pester.RSpec.ts.ps1:199\nat t, /Users/travis/build/pester/Pester/new-runtimepoc/p.psm1:103\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].line_number, 199);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("Exluding full path excludes it tests from Paths runs them")
        );
    }

    #[test]
    fn pester_failure_skips_build_output() {
        // PowerShell/PowerShell Travis log (LogChunks)
        let log = "    [-] ThreadJob with ScriptBlock and Using variables 356ms\n      Expected {1 2 3 4 5}, but got {GlobalVar}.\n      137:         $result | Should -Be @(1,2,3,4,5)\n      at Invoke-Assertion, /home/travis/build/PowerShell/PowerShell/src/powershell-unix/bin/Release/netcoreapp2.1/linux-x64/publish/Modules/Pester/4.2.0/Functions/Assertions/Should.ps1: line 206\n      at <ScriptBlock>, /home/travis/build/PowerShell/PowerShell/test/powershell/Modules/ThreadJob/ThreadJob.Tests.ps1: line 137\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "test/powershell/Modules/ThreadJob/ThreadJob.Tests.ps1"
        );
        assert_eq!(r[0].line_number, 137);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("ThreadJob with ScriptBlock and Using variables")
        );
    }

    #[test]
    fn xunit_lines_behind_the_vstest_prefix() {
        // lihs-ie/window-logger RUN_TEST_RESULT.md (GitHub Actions, Windows runner)
        let log = "[xUnit.net 00:00:06.52]     WindowLogger.Presentation.Tests.Forms.MainFormTests.RefreshActivityGrid_WithActivities_ShouldDisplayData [FAIL]\n[xUnit.net 00:00:06.52]       Expected dataSource not to be <null>.\n[xUnit.net 00:00:06.52]       Stack Trace:\n[xUnit.net 00:00:06.52]            at FluentAssertions.Execution.XUnit2TestFramework.Throw(String message)\n[xUnit.net 00:00:06.52]         D:\\a\\window-logger\\window-logger\\tests\\WindowLogger.Presentation.Tests\\Forms\\MainFormTests.cs(158,0): at WindowLogger.Presentation.Tests.Forms.MainFormTests.RefreshActivityGrid_WithActivities_ShouldDisplayData()\n";
        let r = parse(log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            r[0].file_path,
            "tests/WindowLogger.Presentation.Tests/Forms/MainFormTests.cs"
        );
        assert_eq!(r[0].line_number, 158);
        assert_eq!(r[0].message, "Expected dataSource not to be <null>.");
    }

    #[test]
    fn xunit_and_vstest_failures() {
        // NancyFx/Nancy Travis log (LogChunks): Mono's xUnit console
        let log = "    Nancy.Testing.Tests.BrowserFixture.Should_return_JSON_serialized_form [FAIL]\n      Assert.Equal() Failure\n      Expected: 1\n      Actual:   0\n      Stack Trace:\n        /home/travis/build/NancyFx/Nancy/test/Nancy.Testing.Tests/BrowserFixture.cs(445,0): at Nancy.Testing.Tests.BrowserFixture.<Should_return_JSON_serialized_form>d__24.MoveNext()\n        --- End of stack trace from previous location where exception was thrown ---\n  Failed Calc.Tests.AddTests.Adds [4 ms]\n  Error Message:\n   Assert.Equal() Failure\n  Stack Trace:\n     at Xunit.Assert.Equal[T](T expected, T actual)\n     at Calc.Tests.AddTests.Adds() in /home/runner/work/R/R/tests/Calc.Tests/AddTests.cs:line 12\nFailed!  - Failed:     1, Passed:     3, Skipped:     0, Total:     4\n";
        let r = parse(log);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].file_path, "test/Nancy.Testing.Tests/BrowserFixture.cs");
        assert_eq!(r[0].line_number, 445);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("Nancy.Testing.Tests.BrowserFixture.Should_return_JSON_serialized_form")
        );
        assert_eq!(r[1].file_path, "tests/Calc.Tests/AddTests.cs");
        assert_eq!(r[1].test_name.as_deref(), Some("Calc.Tests.AddTests.Adds"));
        assert_eq!(r[1].message, "Assert.Equal() Failure");
    }
    #[test]
    fn nunit_method_names_without_namespace() {
        // microsoft/garnet's and TheAlgorithms/C-Sharp's `dotnet test` (NUnit adapter 4.x, in
        // LLM4Build's container reproductions): the console logger names only the method.
        let log = "  Failed CommandsWithLinksShouldNotHaveMinusSign [37 ms]\n  Error Message:\n     Assert.That(File.Exists(markdownPath), Is.True)\n  Expected: True\n  But was:  False\n\n  Stack Trace:\n     at Garnet.test.DocsTests.CommandsWithLinksShouldNotHaveMinusSign() in /app/test/Garnet.test/DocsTests.cs:line 21\n\n1)    at Garnet.test.DocsTests.CommandsWithLinksShouldNotHaveMinusSign() in /app/test/Garnet.test/DocsTests.cs:line 21\n  Failed BitmapSimpleBitCountTest(Software fallback) [908 ms]\n  Error Message:\n   System.Exception : Failed to connect at 127.0.0.1:7000\n  Stack Trace:\n     at Garnet.common.LightClient.ConnectSendSocketAsync(CancellationToken cancellationToken) in /app/libs/common/LightClient.cs:line 153\n   at Garnet.common.LightClient.Connect() in /app/libs/common/LightClient.cs:line 114\n   at Garnet.common.LightClientRequest..ctor(EndPoint endpoint, Int32 optType, OnResponseDelegateUnsafe onReceive, SslClientAuthenticationOptions sslOptions, CountResponseType countResponseType) in /app/libs/common/LightClientRequest.cs:line 36\n   at Garnet.test.GarnetServerTestProcess..ctor(ConfigurationOptions& opts, Dictionary`2 env, Int32 port) in /app/test/Garnet.test/TestProcess.cs:line 63\n  Passed ArraySorted(294) [< 1 ms]\n  Failed PredictRating_WithOtherUserHavingRatedTargetItem_ShouldCalculateSimilarityAndWeightedSum [850 ms]\n  Error Message:\n     Assert.That(predictedRating, Is.Not.EqualTo(0.0d))\n  Expected: not equal to 0.0d\n  But was:  0.0d\n\n  Stack Trace:\n     at Algorithms.Tests.RecommenderSystem.CollaborativeFilteringTests.PredictRating_WithOtherUserHavingRatedTargetItem_ShouldCalculateSimilarityAndWeightedSum() in /app/Algorithms.Tests/RecommenderSystem/CollaborativeFilteringTests.cs:line 91\n";
        let r = parse(log);
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(r[0].file_path, "test/Garnet.test/DocsTests.cs");
        assert_eq!(r[0].line_number, 21);
        assert_eq!(
            r[0].test_name.as_deref(),
            Some("CommandsWithLinksShouldNotHaveMinusSign")
        );
        assert_eq!(
            r[0].message,
            "Assert.That(File.Exists(markdownPath), Is.True): Expected: True: But was:  False"
        );
        assert_eq!(r[1].file_path, "libs/common/LightClient.cs");
        assert_eq!(r[1].line_number, 153);
        assert_eq!(
            r[1].test_name.as_deref(),
            Some("BitmapSimpleBitCountTest(Software fallback)")
        );
        assert_eq!(
            r[2].file_path,
            "Algorithms.Tests/RecommenderSystem/CollaborativeFilteringTests.cs"
        );
        assert_eq!(r[2].line_number, 91);
        // A passed test's verdict opens nothing, whatever its duration.
        assert!(super::failed_test("Passed ArraySorted(294) [< 1 ms]").is_none());
        assert!(super::failed_test("Failed to connect [x]").is_none());
    }
}

//! Line normalisation: turns one raw log line (bytes) into the text a tool printed.
//!
//! It strips what the CI system added around the tool's output — a UTF-8 BOM, the ISO-8601
//! timestamp GitHub Actions puts before every line, ANSI colour/cursor escapes, `\r` progress
//! overwrites (only the text after the last `\r` is what a terminal would show) — and decodes the
//! rest lossily, so invalid UTF-8 and binary noise never fail. [`strip_visible_escapes`] and
//! [`strip_prefixes`] then remove what other CI systems and wrappers add (escapes a capture
//! turned into text, Jenkins/GitLab/Buildkite stamps, BuildKit, compose and monorepo prefixes). It never allocates per line in the
//! common case (no escape, valid UTF-8) and never looks beyond the line it is given.

use std::borrow::Cow;

const BOM: &[u8] = b"\xEF\xBB\xBF";

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Per-byte 0x80 flags of the bytes of `x` that are not ASCII digits. A byte right after a
/// non-digit may be flagged too (the carry of `+ 0x76` out of a byte >= 0x8A), but never a byte
/// before the first non-digit: callers only ask whether any is flagged, or which is first.
fn non_digit_flags(x: u64) -> u64 {
    // Digits become 0..=9; adding 0x76 sets the high bit of anything from 10 up, and the high
    // bit of `y` itself catches bytes >= 0x80.
    let y = x ^ (0x30 * ONES);
    (y | y.wrapping_add(0x76 * ONES)) & HIGH
}

/// `w` (8 bytes) has a digit wherever `template` has `0`, and `template`'s byte elsewhere.
fn stamp_word(w: [u8; 8], template: [u8; 8]) -> bool {
    let x = u64::from_le_bytes(w);
    let t = u64::from_le_bytes(template);
    let digits = u64::from_le_bytes(template.map(|b| if b == b'0' { 0xFF } else { 0 }));
    let zeros = (0x30 * ONES) & !digits;
    // Punctuation positions compared exactly; digit positions tested after the punctuation is
    // replaced by `0`.
    (x & !digits) == (t & !digits) && non_digit_flags((x & digits) | zeros) == 0
}

/// Number of leading ASCII digits of the 8 bytes `w`.
fn digit_run(w: &[u8]) -> usize {
    let x = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
    (non_digit_flags(x).trailing_zeros() / 8) as usize
}

/// `gh run view --log` (and `--log-failed`) puts `<job>\t<step>\t` before each line's Actions
/// timestamp: the length of those columns, 0 when the line does not have them (a job or step
/// name holds no tab; the third column must be a whole timestamp, after the byte-order mark the
/// first line of each step keeps). The parser asks only near a log's start, and on every line
/// once a log is in this form.
pub fn gh_run_view_columns(line: &[u8]) -> usize {
    // Job and step names are short: look for the tabs near the start only.
    let head = &line[..line.len().min(400)];
    let Some(first) = memchr::memchr(b'\t', head) else {
        return 0;
    };
    let Some(second) = memchr::memchr(b'\t', &head[first + 1..]) else {
        return 0;
    };
    let cols = first + second + 2;
    let mut rest = &line[cols..];
    if rest.starts_with(BOM) {
        rest = &rest[BOM.len()..];
    }
    if rest.len() < 20 || !rest[0].is_ascii_digit() || strip_timestamp(rest).len() == rest.len() {
        return 0;
    }
    cols
}

/// Strips a leading `YYYY-MM-DDTHH:MM:SS[.fffffff]Z ` timestamp (GitHub Actions log format).
pub fn strip_timestamp(line: &[u8]) -> &[u8] {
    // The fixed part `YYYY-MM-DDTHH:MM:SS` is 19 bytes; checked byte by byte, no regex.
    if line.len() < 20 {
        return line;
    }
    // Every line of an Actions log starts with one, so it is checked eight bytes at a time:
    // digit positions and punctuation positions of `YYYY-MM-DDTHH:MM:SS` (bytes 0..16, then
    // 11..19 overlapping).
    let word = |at: usize| -> [u8; 8] {
        let mut w = [0; 8];
        w.copy_from_slice(&line[at..at + 8]);
        w
    };
    if !stamp_word(word(0), *b"0000-00-")
        || !stamp_word(word(8), *b"00T00:00")
        || !stamp_word(word(11), *b"00:00:00")
    {
        return line;
    }
    let mut i = 19;
    if i < line.len() && line[i] == b'.' {
        i += 1;
        // Usually 7 digits: count a word of them at once.
        if let Some(w) = line.get(i..i + 8) {
            let n = digit_run(w);
            i += n;
            if n == 8 {
                while i < line.len() && line[i].is_ascii_digit() {
                    i += 1;
                }
            }
        } else {
            while i < line.len() && line[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    if i < line.len() && line[i] == b'Z' {
        i += 1;
    } else if i + 6 <= line.len() && (line[i] == b'+' || line[i] == b'-') && line[i + 3] == b':' {
        i += 6;
    } else {
        return line;
    }
    match line.get(i) {
        Some(b' ') => &line[i + 1..],
        None => &line[i..],
        _ => line,
    }
}

/// Calls `keep(start, end)` for each run of `line` outside ANSI escape sequences (CSI `ESC [ …
/// final`, OSC `ESC ] … BEL|ESC \`, and two-byte escapes), in order, from the first ESC at
/// `first` (`line[..first]` is the first run). Stops and returns `false` as soon as `keep` does.
fn ansi_text_runs(line: &[u8], first: usize, mut keep: impl FnMut(usize, usize) -> bool) -> bool {
    if !keep(0, first) {
        return false;
    }
    let mut i = first;
    while i < line.len() {
        let b = line[i];
        if b != 0x1b {
            match memchr::memchr(0x1b, &line[i..]) {
                Some(off) => {
                    if !keep(i, i + off) {
                        return false;
                    }
                    i += off;
                }
                None => return keep(i, line.len()),
            }
            continue;
        }
        i += 1;
        match line.get(i) {
            Some(b'[') => {
                i += 1;
                // Parameter and intermediate bytes, then one final byte in 0x40..=0x7E.
                while i < line.len() && !(0x40..=0x7e).contains(&line[i]) {
                    i += 1;
                }
                i += 1;
            }
            // OSC (`ESC ]`), and the string controls APC (`ESC _`, Buildkite's `_bk;t=…`
            // timestamps), DCS, PM and SOS: everything up to BEL or ST.
            Some(b']' | b'_' | b'P' | b'^' | b'X') => {
                i += 1;
                while i < line.len() {
                    if line[i] == 0x07 {
                        i += 1;
                        break;
                    }
                    if line[i] == 0x1b && line.get(i + 1) == Some(&b'\\') {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
            }
            Some(_) => {
                // nF escapes such as `ESC ( B`: intermediates 0x20..=0x2F, then a final byte.
                while i < line.len() && (0x20..=0x2f).contains(&line[i]) {
                    i += 1;
                }
                i += 1;
            }
            None => {}
        }
    }
    true
}

/// Removes ANSI escape sequences (see [`ansi_text_runs`]) into `out`. Returns `false` (and
/// leaves `out` untouched) when there is no ESC byte.
pub fn strip_ansi_into(line: &[u8], out: &mut Vec<u8>) -> bool {
    let Some(first) = memchr::memchr(0x1b, line) else {
        return false;
    };
    out.clear();
    ansi_text_runs(line, first, |a, b| {
        out.extend_from_slice(&line[a..b]);
        true
    })
}

/// [`strip_ansi_into`] for text known to be UTF-8: `Some` with the text without escapes (`line`
/// itself when it has none), `None` when removing an escape would split a character (an
/// escape's final byte that is not ASCII), which [`normalize_line`] then decodes lossily.
fn strip_ansi_str<'a>(line: &'a str, out: &'a mut String) -> Option<&'a str> {
    let b = line.as_bytes();
    let Some(first) = memchr::memchr(0x1b, b) else {
        return Some(line);
    };
    out.clear();
    let whole = ansi_text_runs(b, first, |a, z| match line.get(a..z) {
        Some(run) => {
            out.push_str(run);
            true
        }
        None => false,
    });
    whole.then_some(out.as_str())
}

/// Normalises one raw line (without its `\n`) into text. `scratch` is reused between calls.
pub fn normalize_line<'a>(raw: &'a [u8], scratch: &'a mut Vec<u8>) -> Cow<'a, str> {
    let mut line = raw;
    if line.starts_with(BOM) {
        line = &line[BOM.len()..];
    }
    line = strip_timestamp(line);
    if line.starts_with(BOM) {
        line = &line[BOM.len()..];
    }
    // A CRLF line ends in `\r`; any other `\r` is a terminal overwrite: keep what is shown last.
    while let [rest @ .., b'\r'] = line {
        line = rest;
    }
    // One backward search for the last `\r` or ESC: most lines have neither. When the last is
    // a `\r`, what follows has no escape either.
    let bytes: &[u8] = match memchr::memrchr2(b'\r', 0x1b, line) {
        None => line,
        Some(last) if line[last] == b'\r' => &line[last + 1..],
        Some(last) => {
            if let Some(pos) = memchr::memrchr(b'\r', &line[..last]) {
                line = &line[pos + 1..];
            }
            if strip_ansi_into(line, scratch) {
                scratch.as_slice()
            } else {
                line
            }
        }
    };
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// [`normalize_line`] for a line already known to be valid UTF-8, without validating it again
/// (the caller validates whole chunks at once). Every cut it makes is next to an ASCII byte
/// (`\r`, ESC, the timestamp's space), hence on a character boundary, so the text is the one
/// `normalize_line` returns; the one exception (an escape whose final byte is not ASCII) returns
/// `None`, and the caller uses `normalize_line`.
pub fn normalize_str<'a>(raw: &'a str, scratch: &'a mut String) -> Option<&'a str> {
    const BOM_CHAR: char = '\u{feff}';
    let mut line = raw.strip_prefix(BOM_CHAR).unwrap_or(raw);
    let rest = strip_timestamp(line.as_bytes());
    line = line.get(line.len() - rest.len()..)?;
    line = line.strip_prefix(BOM_CHAR).unwrap_or(line);
    // Byte by byte, not `trim_end_matches('\r')`: a char pattern trims from the end with a
    // `memrchr` over the whole line, on every line.
    let mut end = line.len();
    while end > 0 && line.as_bytes()[end - 1] == b'\r' {
        end -= 1;
    }
    line = line.get(..end)?;
    let b = line.as_bytes();
    match memchr::memrchr2(b'\r', 0x1b, b) {
        None => Some(line),
        Some(last) if b[last] == b'\r' => line.get(last + 1..),
        Some(last) => {
            if let Some(pos) = memchr::memrchr(b'\r', &b[..last]) {
                line = line.get(pos + 1..)?;
            }
            strip_ansi_str(line, scratch)
        }
    }
}

/// Length of the visible text a log capture left in place of an ESC byte, ending right before
/// the `[` at `at`: `^[`, `\x1b`, `\x1B`, `\u001b`, `\u001B`, `\033`, `\e`; 0 when none.
fn visible_escape_intro(b: &[u8], at: usize) -> usize {
    const INTROS: [&[u8]; 7] = [
        b"\\u001b", b"\\u001B", b"\\x1b", b"\\x1B", b"\\033", b"^[", b"\\e",
    ];
    for intro in INTROS {
        if at >= intro.len() && &b[at - intro.len()..at] == intro {
            return intro.len();
        }
    }
    0
}

/// End (exclusive) of a CSI sequence whose `[` is at `at`, or `None`. Without an introducer
/// (`bare`: the ESC byte itself was lost), only SGR colour and erase-line (`[31m`, `[1;31m`,
/// `[0K`) with at least one digit count, so `a[0]` or `[ERROR]` are never touched.
fn csi_end(b: &[u8], at: usize, bare: bool) -> Option<usize> {
    let mut i = at + 1;
    let start = i;
    while i < b.len() && i - start <= 16 && (b[i].is_ascii_digit() || b[i] == b';' || b[i] == b'?')
    {
        i += 1;
    }
    let fin = *b.get(i)?;
    if bare {
        let params = &b[start..i];
        let ok = params.iter().any(u8::is_ascii_digit)
            && (params[0].is_ascii_digit() || params[0] == b';')
            && !params.contains(&b'?')
            && matches!(fin, b'm' | b'K');
        return ok.then_some(i + 1);
    }
    fin.is_ascii_alphabetic().then_some(i + 1)
}

/// Removes ANSI escapes that reached the log as visible text (`^[[31m`, `\x1b[31m`,
/// `\u001b[31m`, `\033[31m`, `\e[0K`, or a bare `[31m` whose ESC byte was dropped) into `out`.
/// Returns `false` (and leaves `out` alone) when there is none. Looks only at `[` bytes, so a
/// line without one costs a single memchr.
pub fn strip_visible_escapes(line: &str, out: &mut String) -> bool {
    let b = line.as_bytes();
    let mut copied = 0;
    let mut found = false;
    for at in memchr::memchr_iter(b'[', b) {
        if at < copied {
            continue;
        }
        // Cheap rejections first: most `[` in a log open `[INFO]`, `[1/5]`, `[ 50%]`, an index.
        let next = b.get(at + 1).copied().unwrap_or(0);
        let prev = if at > 0 { b[at - 1] } else { 0 };
        let may_intro = matches!(prev, b'b' | b'B' | b'3' | b'[' | b'e');
        if !(may_intro || next.is_ascii_digit() || next == b';') {
            continue;
        }
        let intro = if may_intro {
            visible_escape_intro(b, at)
        } else {
            0
        };
        let Some(end) = csi_end(b, at, intro == 0) else {
            continue;
        };
        let start = at - intro;
        if start < copied {
            continue;
        }
        if !found {
            out.clear();
            found = true;
        }
        // Every cut is next to an ASCII byte (`[`, `\`, `^` or the final letter): on a
        // character boundary.
        out.push_str(&line[copied..start]);
        copied = end;
    }
    if found {
        out.push_str(&line[copied..]);
    }
    found
}

/// What a wrapper prefix said about the line it was cut from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Prefix<'a> {
    /// The package directory of a `pnpm -r` prefix (`packages/core test: …`): the tool's
    /// relative paths are relative to it.
    pub package_dir: Option<&'a str>,
    /// The `pkg: [task]` of a lerna `--stream` line running one of several concurrent tasks
    /// (nps, concurrently): the task's own `… exited with code 0` says whether the errors printed
    /// under this prefix failed anything.
    pub task: Option<&'a str>,
}

/// Parses `digits` at the start of `s`; returns the rest.
fn skip_digits(s: &[u8]) -> Option<usize> {
    let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
    (n > 0).then_some(n)
}

/// Length of `HH:MM:SS` with an optional `.fff` at the start of `b`, or 0.
fn clock(b: &[u8]) -> usize {
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return 0;
    }
    if ![0, 1, 3, 4, 6, 7].iter().all(|&i| b[i].is_ascii_digit()) {
        return 0;
    }
    match b.get(8) {
        Some(b'.') => 9 + skip_digits(&b[9..]).unwrap_or(0),
        _ => 8,
    }
}

/// `[2024-01-31T12:34:56.789Z] ` (Jenkins Timestamper, ISO), `[00:38:49] ` (a bracketed
/// clock or elapsed time: rust-lang's Travis and Azure builds, Timestamper's elapsed mode,
/// gulp) or `12:34:56 ` (Timestamper's default clock): length of the prefix, or 0.
fn jenkins_timestamp(b: &[u8]) -> usize {
    if b.first() == Some(&b'[') {
        let n = clock(&b[1..]);
        if n > 0 && b.get(n + 1) == Some(&b']') {
            return match b.get(n + 2) {
                Some(b' ') => n + 3,
                None => n + 2,
                _ => 0,
            };
        }
        // The stamp is the whole bracket: `strip_timestamp` leaves nothing of it.
        return match memchr::memchr(b']', &b[..b.len().min(40)]) {
            Some(close)
                if close > 20
                    && b.get(close + 1) == Some(&b' ')
                    && strip_timestamp(&b[1..close]).is_empty() =>
            {
                close + 2
            }
            _ => 0,
        };
    }
    // `HH:MM:SS` then at least one space, at the very start.
    if b.len() > 9
        && b[2] == b':'
        && b[5] == b':'
        && [0, 1, 3, 4, 6, 7].iter().all(|&i| b[i].is_ascii_digit())
        && b[8] == b' '
    {
        return 8 + b[8..].iter().take(4).take_while(|&&c| c == b' ').count();
    }
    0
}

/// `[Build on CentOS 7] ` (the branch name Jenkins puts before each line of a `parallel`
/// branch): a name starting with a letter or digit and holding a space. Maven's `[INFO] `,
/// sbt's `[error] `, gtest's `[ RUN      ]` and pytest-xdist's `[gw0]` hold none or start
/// with one, so they never match.
fn jenkins_branch(b: &[u8]) -> usize {
    if !b.get(1).is_some_and(u8::is_ascii_alphanumeric) {
        return 0;
    }
    let Some(close) = memchr::memchr(b']', &b[..b.len().min(64)]) else {
        return 0;
    };
    let name = &b[1..close];
    let spaced = name.contains(&b' ') && !name.ends_with(b" ");
    if spaced && !name.contains(&b'[') && b.get(close + 1) == Some(&b' ') {
        close + 2
    } else {
        0
    }
}

fn npm_name_byte(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'-' | b'_' | b'.')
}

/// `@scope/name` or `name` (npm package names; no `.` without a scope, so `x.py:` never
/// passes): its length.
fn npm_name(b: &[u8], allow_dot: bool) -> usize {
    let mut i = 0;
    if b.first() == Some(&b'@') {
        i = 1;
        let n = b[i..].iter().take_while(|&&c| npm_name_byte(c)).count();
        if n == 0 || b.get(i + n) != Some(&b'/') {
            return 0;
        }
        i += n + 1;
    }
    let n = b[i..]
        .iter()
        .take_while(|&&c| npm_name_byte(c) && (allow_dot || i > 0 || c != b'.'))
        .count();
    if n == 0 || !b[i].is_ascii_alphanumeric() {
        return 0;
    }
    i + n
}

/// `task: ` after a monorepo runner's package (turbo `web:build: `, `@acme/ui:test: `): a task
/// name starting with a letter, possibly with `:` inside (`test:unit`).
fn task_then_colon(b: &[u8]) -> usize {
    if !b.first().is_some_and(u8::is_ascii_alphabetic) {
        return 0;
    }
    let mut i = 0;
    while i < b.len() && i < 64 {
        let c = b[i];
        if c == b':' {
            match b.get(i + 1) {
                Some(b' ') => return i + 2,
                None => return i + 1,
                Some(n) if n.is_ascii_alphabetic() => {}
                _ => return 0,
            }
        } else if !(c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')) {
            return 0;
        }
        i += 1;
    }
    0
}

/// Maven's elapsed milliseconds before its level (`19547 [ERROR] …`, slf4j-simple's
/// `showDateTime` without a date format, as `MAVEN_OPTS` sets it in some projects): the length of
/// the number and its space, or 0.
fn maven_elapsed(b: &[u8]) -> usize {
    let Some(n) = skip_digits(b).filter(|&n| n <= 10) else {
        return 0;
    };
    let rest = &b[n..];
    const LEVELS: [&[u8]; 5] = [
        b" [INFO] ",
        b" [ERROR] ",
        b" [WARNING] ",
        b" [WARN] ",
        b" [DEBUG] ",
    ];
    if LEVELS.iter().any(|l| rest.starts_with(l)) {
        n + 1
    } else {
        0
    }
}

/// A concurrently/nps task name at `b[at..]` after a lerna package prefix (`[types.create-lib] `):
/// its length with the space, or 0. Records `pkg: [task]` in `info`.
fn concurrent_task<'a>(b: &'a [u8], at: usize, info: &mut Prefix<'a>) -> usize {
    let rest = &b[at..];
    if rest.first() != Some(&b'[') {
        return 0;
    }
    let t = rest[1..]
        .iter()
        .take(64)
        .take_while(|&&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b':'))
        .count();
    if t == 0 || rest.get(t + 1) != Some(&b']') || rest.get(t + 2) != Some(&b' ') {
        return 0;
    }
    // Both parts are ASCII: `from_utf8` cannot fail.
    info.task = std::str::from_utf8(&b[..at + t + 2]).ok();
    t + 3
}

/// Cuts the prefixes CI systems, container builds and monorepo runners put in front of a
/// tool's output (one pass per prefix, outermost first):
/// - Jenkins Timestamper (`[2024-01-31T12:34:56.789Z] `, `12:34:56  `) and `parallel` branch
///   names (`[Build on CentOS 7] `), GitLab's timestamped
///   stream tag (`00O `, `00O+`; the ISO stamp before it is already gone), Buildkite's
///   `_bk;t=…` stamp when its escape bytes were lost;
/// - Docker BuildKit's plain progress (`#12 3.456 `) and docker compose service names
///   (`web-1  | `, `web_1  | `);
/// - monorepo runners: turbo (`web:build: `, `@acme/ui:test: `), lerna `--stream`
///   (`@acme/ui: `; `pkg: [task] ` before an nps/concurrently task), yarn workspaces foreach (`[@acme/ui]: `), `pnpm -r`
///   (`packages/core test: `, whose directory is returned).
///
/// Each shape is tested on its first bytes before anything else; a line matching none is
/// returned unchanged.
pub fn strip_prefixes(mut s: &str) -> (&str, Prefix<'_>) {
    let mut info = Prefix::default();
    for _ in 0..4 {
        let b = s.as_bytes();
        let Some(&first) = b.first() else { break };
        let cut = match first {
            b'[' => {
                let n = jenkins_timestamp(b);
                let branch = jenkins_branch(b);
                if n > 0 {
                    n
                } else if branch > 0 {
                    branch
                } else if let Some(n) = ant_task(b) {
                    n
                } else {
                    // yarn workspaces foreach: `[name]: `
                    let n = npm_name(&b[1..], true);
                    if n > 0 && b.get(n + 1) == Some(&b']') && b.get(n + 2) == Some(&b':') {
                        if b.get(n + 3) == Some(&b' ') {
                            n + 4
                        } else {
                            n + 3
                        }
                    } else {
                        0
                    }
                }
            }
            b'0'..=b'9' => {
                let j = jenkins_timestamp(b);
                if j > 0 {
                    j
                } else if b.len() >= 4
                    && b[0..2].iter().all(u8::is_ascii_hexdigit)
                    && matches!(b[2], b'O' | b'E')
                    && matches!(b[3], b' ' | b'+')
                {
                    // GitLab runner timestamps: `<stream id><O|E> ` before a line, `…+` before
                    // the rest of a line the previous one started (`00O+section_start:…`).
                    4
                } else {
                    let t = buildkit_summary_time(b);
                    if t > 0 {
                        t
                    } else {
                        let m = maven_elapsed(b);
                        if m > 0 {
                            m
                        } else {
                            compose_or_monorepo(b, &mut info)
                        }
                    }
                }
            }
            b'#' => buildkit_step(b),
            // Ant indents its task prefix: `    [javac] `.
            b' ' => {
                let spaces = b.iter().take(16).take_while(|&&c| c == b' ').count();
                if b.get(spaces) == Some(&b'[') {
                    ant_task(&b[spaces..]).map_or(0, |n| spaces + n)
                } else {
                    0
                }
            }
            b'_' if b.starts_with(b"_bk;t=") => {
                let n = skip_digits(&b[6..]).unwrap_or(0);
                let mut end = 6 + n;
                if b.get(end) == Some(&0x07) {
                    end += 1;
                }
                if n > 0 { end } else { 0 }
            }
            b'@' | b'a'..=b'z' | b'A'..=b'Z' => compose_or_monorepo(b, &mut info),
            _ => 0,
        };
        if cut == 0 {
            break;
        }
        s = &s[cut..];
    }
    (s, info)
}

/// Ant's task prefix (`[javac] `, `[javadoc] `, `[java] `, `[exec] `…) before every line a task
/// prints, also under Gradle's `ant.` calls: the length of the prefix, or `None`. Only the tasks
/// that run compilers, documentation tools and tests: sbt's `[error]`/`[warn]` and prettier's
/// `[warn]` are the tools' own words and stay.
fn ant_task(b: &[u8]) -> Option<usize> {
    const TASKS: [&[u8]; 12] = [
        b"javac",
        b"java",
        b"javadoc",
        b"junit",
        b"junitlauncher",
        b"testng",
        b"exec",
        b"apply",
        b"scalac",
        b"groovyc",
        b"kotlinc",
        b"cc",
    ];
    let close = memchr::memchr(b']', &b[..b.len().min(16)])?;
    let name = &b[1..close];
    (TASKS.contains(&name) && b.get(close + 1) == Some(&b' ')).then_some(close + 2)
}

/// `#12 3.456 ` (BuildKit `--progress=plain`): the step number and the seconds since the step
/// started. `#12 [build 3/5] RUN …`, `#12 DONE 0.3s` and the like keep their prefix: they are
/// BuildKit's own lines.
fn buildkit_step(b: &[u8]) -> usize {
    let Some(n) = skip_digits(&b[1..]) else {
        return 0;
    };
    let mut i = 1 + n;
    if b.get(i) != Some(&b' ') {
        return 0;
    }
    i += 1;
    let Some(n) = skip_digits(&b[i..]) else {
        return 0;
    };
    i += n;
    if b.get(i) != Some(&b'.') {
        return 0;
    }
    i += 1;
    let Some(n) = skip_digits(&b[i..]) else {
        return 0;
    };
    i += n;
    match b.get(i) {
        Some(b' ') => i + 1,
        None => i,
        _ => 0,
    }
}

/// `0.874 ` (seconds since the step started, always three decimals): BuildKit's summary of a
/// failed step (` > [builder 4/4] RUN npm run build:` then the step's last lines) and the
/// plain progress of buildx >= 0.10 inside it. A line that is only the stamp is left empty.
fn buildkit_summary_time(b: &[u8]) -> usize {
    let Some(n) = skip_digits(b).filter(|&n| n <= 5) else {
        return 0;
    };
    if b.get(n) != Some(&b'.') || skip_digits(&b[n + 1..]) != Some(3) {
        return 0;
    }
    match b.get(n + 4) {
        Some(b' ') => n + 5,
        None => n + 4,
        _ => 0,
    }
}

/// docker compose (`web-1  | `, `web_1  | `), turbo (`web:build: `), scoped lerna
/// (`@acme/ui: `) and `pnpm -r` (`packages/core test: `) prefixes.
fn compose_or_monorepo<'a>(b: &'a [u8], info: &mut Prefix<'a>) -> usize {
    // A name made of word characters, `.`, `-`, `_`, `/` and `@`, up to the first other byte.
    let name_len = b
        .iter()
        .take(128)
        .take_while(|&&c| {
            c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'/' | b'@')
        })
        .count();
    if name_len == 0 || name_len >= b.len() {
        return 0;
    }
    let name = &b[..name_len];
    match b[name_len] {
        b' ' => {
            let spaces = b[name_len..].iter().take_while(|&&c| c == b' ').count();
            let after = name_len + spaces;
            // compose: the container name ends in `-N` / `_N`, then padding and `| `.
            if b.get(after) == Some(&b'|') {
                let numbered = name
                    .iter()
                    .rposition(|&c| c == b'-' || c == b'_')
                    .is_some_and(|i| {
                        i + 1 < name.len() && name[i + 1..].iter().all(u8::is_ascii_digit)
                    });
                if numbered && !name.contains(&b'/') {
                    return match b.get(after + 1) {
                        Some(b' ') => after + 2,
                        None => after + 1,
                        _ => 0,
                    };
                }
                return 0;
            }
            // pnpm -r: a directory (with `/`, no file extension) then a script name and
            // `: ` (output) or `$ ` (the command echo).
            if spaces != 1 || !name.contains(&b'/') || name.contains(&b'.') || name[0] == b'/' {
                return 0;
            }
            let rest = &b[after..];
            let t = rest
                .iter()
                .take(64)
                .take_while(|&&c| c.is_ascii_alphanumeric() || matches!(c, b':' | b'-' | b'_'))
                .count();
            if t == 0 || !rest[0].is_ascii_alphabetic() {
                return 0;
            }
            let (task, cut) = if rest[t - 1] == b':' && rest.get(t) == Some(&b' ') {
                (&rest[..t - 1], t + 1)
            } else if rest.get(t) == Some(&b'$') && rest.get(t + 1) == Some(&b' ') {
                (&rest[..t], t + 2)
            } else {
                return 0;
            };
            if task.is_empty() || matches!(task, b"error" | b"warning" | b"note" | b"info") {
                return 0;
            }
            // The name is ASCII: `from_utf8` cannot fail.
            info.package_dir = std::str::from_utf8(name).ok();
            after + cut
        }
        b':' => {
            // turbo `pkg:task: ` and scoped lerna `@scope/pkg: `.
            let n = npm_name(b, false);
            if n != name_len {
                return 0;
            }
            if name[0] == b'@' && b.get(n + 1) == Some(&b' ') {
                return n + 2 + concurrent_task(b, n + 2, info);
            }
            // lerna `--stream` (`pkg: `) is too like a tool's own `word: ` to cut alone; before
            // a concurrently/nps task name (`victory-bar: [types.create-lib] `) it is not.
            if b.get(n + 1) == Some(&b' ') && b.get(n + 2) == Some(&b'[') {
                let lower = name.to_ascii_lowercase();
                if matches!(
                    lower.as_slice(),
                    b"error" | b"warning" | b"warn" | b"note" | b"info" | b"fatal" | b"hint"
                ) {
                    return 0;
                }
                let t = concurrent_task(b, n + 2, info);
                return if t == 0 { 0 } else { n + 2 + t };
            }
            let t = task_then_colon(&b[n + 1..]);
            if t == 0 { 0 } else { n + 1 + t }
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &[u8]) -> String {
        let mut scratch = Vec::new();
        let text = normalize_line(s, &mut scratch).into_owned();
        if let Ok(s) = std::str::from_utf8(s) {
            let mut scratch = String::new();
            if let Some(t) = normalize_str(s, &mut scratch) {
                assert_eq!(t, text, "normalize_str disagrees on {s:?}");
            }
        }
        text
    }

    #[test]
    fn ant_task_prefixes() {
        // Real lines (jenkinsci/analysis-model's Jenkins issue pastes).
        for (line, rest) in [
            (
                "    [javac] C:\\ws\\src\\A.java:12: warning: [deprecation] x",
                "C:\\ws\\src\\A.java:12: warning: [deprecation] x",
            ),
            (
                "[java] /var/lib/jenkins/workspace/webhooks/src/main/java/File.java:59: error: ';' expected",
                "/var/lib/jenkins/workspace/webhooks/src/main/java/File.java:59: error: ';' expected",
            ),
            (" [javadoc]      * @param wi", "     * @param wi"),
        ] {
            assert_eq!(strip_prefixes(line).0, rest);
        }
        // sbt's and prettier's brackets are the tools' own words.
        for line in ["[error] a.scala:3:1: x", "[warn] src/a.ts", "  [info] done"] {
            assert_eq!(strip_prefixes(line).0, line);
        }
    }

    #[test]
    fn strips_bom_timestamp_and_ansi() {
        let raw = b"\xEF\xBB\xBF2025-04-16T01:48:17.7662819Z Error: \x1b[96msrc/a.ts\x1b[0m:\x1b[93m72\x1b[0m";
        assert_eq!(norm(raw), "Error: src/a.ts:72");
    }

    #[test]
    fn word_checks_agree_with_bytewise_ones() {
        for b in 0..=255u8 {
            for pos in 0..8 {
                let mut w = *b"12345678";
                w[pos] = b;
                let run = w.iter().take_while(|c| c.is_ascii_digit()).count();
                assert_eq!(digit_run(&w), run, "{w:?}");
                let mut s = *b"2025-04-";
                s[pos] = b;
                // A second byte changed after it (the carry out of a byte >= 0x8A).
                for b2 in [0x00, b'9', b':', 0x89, 0x8A, 0xFF] {
                    for pos2 in pos + 1..8 {
                        let mut w2 = w;
                        w2[pos2] = b2;
                        let run2 = w2.iter().take_while(|c| c.is_ascii_digit()).count();
                        assert_eq!(digit_run(&w2), run2, "{w2:?}");
                    }
                }
                let ok = s.iter().zip(b"0000-00-").all(|(c, t)| {
                    if *t == b'0' {
                        c.is_ascii_digit()
                    } else {
                        c == t
                    }
                });
                assert_eq!(stamp_word(s, *b"0000-00-"), ok, "{s:?}");
            }
        }
        assert_eq!(strip_timestamp(b"2025-04-16T01:48:17.123456789Z x"), b"x");
        let gh = b"build\tRun npm test\t2025-09-24T05:29:59.8737924Z ##[error]  49:21  x";
        assert_eq!(gh_run_view_columns(gh), 19);
        let bom = "job\tRun x\t\u{feff}2025-09-20T19:36:45.3420036Z ##[group]Run x";
        assert_eq!(gh_run_view_columns(bom.as_bytes()), 10);
        assert_eq!(gh_run_view_columns(b"a\tb\tc 2025-09-24T05:29:59Z x"), 0);
        assert_eq!(gh_run_view_columns(b"FAIL\tpkg/x\t0.2s and more text"), 0);
        assert_eq!(strip_timestamp(b"2025-04-16T01:48:17.1Z x"), b"x");
        assert_eq!(strip_timestamp(b"2025-04-16T01:48:17.12Z"), b"");
        assert_eq!(
            strip_timestamp(b"2025-04-16T01:48:1x.12Z a"),
            b"2025-04-16T01:48:1x.12Z a"
        );
    }

    #[test]
    fn keeps_text_after_last_carriage_return() {
        assert_eq!(norm(b"50%\r100%\rdone\r"), "done");
    }

    #[test]
    fn timestamp_without_fraction_and_empty_line() {
        assert_eq!(norm(b"2025-04-16T01:48:17Z hello"), "hello");
        assert_eq!(norm(b"2025-04-16T01:48:17.1234567Z"), "");
        assert_eq!(norm(b"2025-04-16 not a stamp"), "2025-04-16 not a stamp");
    }

    #[test]
    fn osc_and_truncated_escapes_do_not_panic() {
        assert_eq!(norm(b"a\x1b]0;title\x07b"), "ab");
        assert_eq!(norm(b"x\x1b["), "x");
        assert_eq!(norm(b"x\x1b"), "x");
        assert_eq!(norm(b"\x1b(Bok\x1b(B"), "ok");
    }

    #[test]
    fn escape_ending_inside_a_character_falls_back_to_lossy() {
        // The nF escape's final byte is the first byte of `é`: its second byte is left alone.
        assert_eq!(norm("a\x1bé".as_bytes()), "a\u{fffd}");
        assert_eq!(normalize_str("a\x1bé", &mut String::new()), None);
        assert_eq!(norm("\x1b[1mé\x1b[0m\r".as_bytes()), "é");
        assert_eq!(
            norm("\u{feff}2025-04-16T01:48:17Z \u{feff}x\rdé".as_bytes()),
            "dé"
        );
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(norm(b"a\xffb"), "a\u{fffd}b");
    }

    fn visible(s: &str) -> String {
        let mut out = String::new();
        if strip_visible_escapes(s, &mut out) {
            out
        } else {
            s.to_string()
        }
    }

    #[test]
    fn visible_escapes_in_every_form() {
        // LogChunks (finagle, purescript): Travis logs whose ESC bytes were lost.
        assert_eq!(
            visible(
                "[0m[[0m[0minfo[0m] [0m[0m- Requests exceeding limit should increase dropped_request count *** FAILED ***[0m"
            ),
            "[info] - Requests exceeding limit should increase dropped_request count *** FAILED ***"
        );
        assert_eq!(
            visible(
                "/home/travis/build/purescript/purescript/sdist-test/[;1msrc/Language/PureScript/Environment.hs:528:3: [;1m[31merror:[0m[0m"
            ),
            "/home/travis/build/purescript/purescript/sdist-test/src/Language/PureScript/Environment.hs:528:3: error:"
        );
        assert_eq!(
            visible("^[[31mFAIL^[[0m src/a.test.ts"),
            "FAIL src/a.test.ts"
        );
        assert_eq!(visible("\\x1b[1m\\x1B[31merror\\x1b[0m: x"), "error: x");
        assert_eq!(visible("\\u001b[31merror\\u001B[39m"), "error");
        assert_eq!(
            visible("\\033[0;31mE   assert 1 == 2\\033[0m"),
            "E   assert 1 == 2"
        );
        assert_eq!(
            visible("section_start:1700000000:build\\e[0KBuilding"),
            "section_start:1700000000:buildBuilding"
        );
        // Brackets that are not escapes stay.
        for line in [
            "[INFO] BUILD SUCCESS",
            "a[0] = b[1]",
            "[ RUN      ] Suite.Test",
            "[gw0] [ 50%] PASSED tests/test_a.py::test_x",
            "x = arr[10]",
        ] {
            assert_eq!(visible(line), line);
        }
    }

    #[test]
    fn apc_string_controls_are_removed() {
        // Buildkite's per-line timestamp is an APC string: ESC _ bk;t=… BEL.
        assert_eq!(
            norm(b"\x1b_bk;t=1593096634392\x07~~~ Running tests"),
            "~~~ Running tests"
        );
        assert_eq!(norm(b"\x1bPq#0;2;0;0;0\x1b\\text"), "text");
    }

    fn cut(s: &str) -> &str {
        strip_prefixes(s).0
    }

    #[test]
    fn jenkins_prefixes() {
        // jenkinsci/analysis-model issue63346.txt, maven-enforcer2.log, maven-console.txt and
        // absolute-paths.txt: Timestamper (ISO and clock) and a `parallel` branch name.
        assert_eq!(
            cut("[2020-08-05T20:06:08.600Z] [INFO] Skipping packaging of the test-jar"),
            "[INFO] Skipping packaging of the test-jar"
        );
        assert_eq!(
            cut(
                "15:46:06 [INFO] --- maven-enforcer-plugin:3.0.0-M1:enforce (display-info) @ warnings-ng ---"
            ),
            "[INFO] --- maven-enforcer-plugin:3.0.0-M1:enforce (display-info) @ warnings-ng ---"
        );
        assert_eq!(
            cut("11:02:14  [ERROR] COMPILATION ERROR : "),
            "[ERROR] COMPILATION ERROR : "
        );
        assert_eq!(
            cut(
                "[Build on CentOS 7] keyval_lex.c:947:23: warning: comparison between signed and unsigned integer expressions [-Wsign-compare]"
            ),
            "keyval_lex.c:947:23: warning: comparison between signed and unsigned integer expressions [-Wsign-compare]"
        );
        // Both at once: the stamp first, then the branch.
        assert_eq!(
            cut("[2023-12-20T15:50:19.997Z] [Build on Ubuntu 18.04] make"),
            "make"
        );
        for line in [
            "[INFO] Building jar: /home/jenkins/workspace/Plugins_ldap-plugin_PR-48/target/ldap-sources.jar",
            "[error] /home/travis/build/twitter/finagle/x.scala:6:35: object utils is not a member",
            "[ RUN      ] Suite.Test",
            "[  FAILED  ] Suite.Test (3 ms)",
            "[gw1] [ 25%] FAILED tests/test_a.py::test_x",
            "12:34 is not a time stamp",
        ] {
            assert_eq!(cut(line), line);
        }
    }

    #[test]
    fn bracketed_clock_and_buildkit_summary_stamps() {
        // rust-lang/rust#46116 (Travis): every line after the build started.
        assert_eq!(
            cut("[00:38:49] error: /checkout/src/test/ui/fmt/send-sync.rs:18: unexpected error"),
            "error: /checkout/src/test/ui/fmt/send-sync.rs:18: unexpected error"
        );
        assert_eq!(cut("[00:38:49] "), "");
        assert_eq!(
            cut("[12:34:56.789] Starting 'build'..."),
            "Starting 'build'..."
        );
        // cyberagiinc/DevDocs#30: a failed `next build` step as BuildKit sums it up.
        assert_eq!(
            cut("0.874     at <unknown> (next.config.mjs:1:1)"),
            "    at <unknown> (next.config.mjs:1:1)"
        );
        assert_eq!(cut("0.320"), "");
        for line in [
            "[00:38] not a clock",
            "[00:38:49]x",
            "0.87 rounds",
            "0.8745 more digits",
            "123456.789 too long",
            "1.234s call tests/a.py::t",
            "1.22.19",
        ] {
            assert_eq!(cut(line), line, "{line}");
        }
    }

    #[test]
    fn gitlab_and_buildkite_stamps() {
        // GitLab runner's timestamped trace: the ISO stamp is stripped first, then the stream tag.
        assert_eq!(
            norm(b"2024-06-10T14:13:22.123456Z 00O $ make"),
            "00O $ make"
        );
        assert_eq!(cut("00O $ make"), "$ make");
        assert_eq!(cut("01E src/a.c:3:1: error: x"), "src/a.c:3:1: error: x");
        assert_eq!(
            cut("00O+section_start:1790797104:step_script[collapsed=true]"),
            "section_start:1790797104:step_script[collapsed=true]"
        );
        assert_eq!(cut("_bk;t=1593096634392src/a.go:3:1: x"), "src/a.go:3:1: x");
        // A line starting with a number is left alone.
        assert_eq!(cut("10 passed, 2 skipped"), "10 passed, 2 skipped");
        assert_eq!(cut("0E0 "), "0E0 ");
    }

    #[test]
    fn container_and_monorepo_prefixes() {
        assert_eq!(
            cut("#12 3.456 src/app.ts(3,7): error TS2322: x"),
            "src/app.ts(3,7): error TS2322: x"
        );
        assert_eq!(
            cut("#12 [build 3/5] RUN npm run build"),
            "#12 [build 3/5] RUN npm run build"
        );
        assert_eq!(cut("#12 DONE 0.3s"), "#12 DONE 0.3s");
        assert_eq!(
            cut("web-1  | Traceback (most recent call last):"),
            "Traceback (most recent call last):"
        );
        assert_eq!(
            cut("api_1  | db.js(2,10): error TS1005: ';' expected."),
            "db.js(2,10): error TS1005: ';' expected."
        );
        assert_eq!(
            cut("web:build: src/a.ts(1,1): error TS1005: x"),
            "src/a.ts(1,1): error TS1005: x"
        );
        assert_eq!(
            cut("@acme/ui:test:unit: FAIL src/a.test.ts"),
            "FAIL src/a.test.ts"
        );
        assert_eq!(cut("@acme/ui: FAIL src/a.test.ts"), "FAIL src/a.test.ts");
        assert_eq!(cut("[@acme/ui]: FAIL src/a.test.ts"), "FAIL src/a.test.ts");
        let (text, info) = strip_prefixes("packages/core test: FAIL src/a.test.ts");
        assert_eq!(text, "FAIL src/a.test.ts");
        assert_eq!(info.package_dir, Some("packages/core"));
        assert_eq!(cut("packages/core build$ tsc -p ."), "tsc -p .");
        assert_eq!(
            cut("19547 [ERROR] ensureConsistencyWithStrata  Time elapsed: 0.068 s  <<< FAILURE!"),
            "[ERROR] ensureConsistencyWithStrata  Time elapsed: 0.068 s  <<< FAILURE!"
        );
        assert_eq!(cut("12 [INFO] BUILD"), "[INFO] BUILD");
        // lerna `--stream` before an nps/concurrently task name (victory's build).
        let line = "victory-bar: [types.create-lib] src/v37/victory-bar.stories.tsx(4,26): error TS2307: x";
        let (text, info) = strip_prefixes(line);
        assert_eq!(
            text,
            "src/v37/victory-bar.stories.tsx(4,26): error TS2307: x"
        );
        assert_eq!(info.task, Some("victory-bar: [types.create-lib]"));
        let (text, info) = strip_prefixes("@acme/ui: [lint:js] src/a.js");
        assert_eq!((text, info.task), ("src/a.js", Some("@acme/ui: [lint:js]")));
        // Tool lines that look a little like prefixes are kept whole.
        for line in [
            "src/a.py:3:1: F401 `os` imported but unused",
            "main.go:12:3: undefined: x",
            "error: could not compile `x`",
            "e: file:///home/runner/work/R/R/App.kt:3:1 Unresolved reference",
            "Caused by: java.lang.NullPointerException",
            "fatal error: x.h: No such file or directory",
            "go: downloading github.com/x/y v1.0.0",
            "INFO:root:starting",
            "error[E0425]: cannot find value `x` in this scope",
            "make[1]: *** [all] Error 2",
            "http://example.com: 404",
            "File      | % Stmts | % Branch |",
            "Makefile:12: recipe for target 'all' failed",
            "src/lib error: x",
            "scripts/build:12: error",
            "ERROR: [Errno 2] No such file or directory: 'x'",
            "warning: [unused-import] x",
            "victory-bar: [types.create-lib]",
            "pkg: [a b] x",
            "19547 [error] x",
            "3 [WARNING]",
        ] {
            assert_eq!(cut(line), line, "{line}");
        }
    }
}

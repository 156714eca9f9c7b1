//! GitHub's own problem matchers as the parser's baseline (issue 15 measured the parser against
//! them: "in some families fewer than GitHub's own problem matchers").
//!
//! Replays the 20 published matchers of `shared/baselines/problem-matchers/` (read in place,
//! never copied; `CI_MEDIC_SHARED_DIR` overrides where `shared` is) over every log of the corpus
//! the way the Actions runner applies them (`actions/runner` at `258d6c85`,
//! `src/Runner.Worker/Handlers/OutputManager.cs` and `src/Runner.Worker/IssueMatcher.cs`), all
//! registered at once, and compares the locations they annotate with the expected ones and with
//! the parser's reports. It must never count in the matchers' disfavour: where the runner would
//! need the repository on disk (does the file exist, is it under the checkout), the matchers are
//! given the benefit of the doubt, so their recall here is an upper bound.
//!
//! Fails when the parser misses, in the real or the self-made corpus, a location a matcher
//! annotates; held-out sets print their totals only (which log differs stays hidden).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ci_medic_parser::{ParseOptions, parse_reader};
use serde::Deserialize;

/// One `pattern[]` entry of a matcher file (the runner's `IssuePatternConfig`).
#[derive(Deserialize)]
struct PatternConfig {
    regexp: String,
    file: Option<usize>,
    line: Option<usize>,
    severity: Option<usize>,
    message: Option<usize>,
    #[serde(rename = "fromPath")]
    from_path: Option<usize>,
    #[serde(default)]
    r#loop: bool,
}

#[derive(Deserialize)]
struct MatcherConfig {
    owner: String,
    severity: Option<String>,
    #[serde(rename = "fromPath")]
    from_path: Option<String>,
    pattern: Vec<PatternConfig>,
}

#[derive(Deserialize)]
struct MatchersFile {
    #[serde(rename = "problemMatcher")]
    problem_matcher: Vec<MatcherConfig>,
}

/// A pattern's regular expression. The runner's .NET engine (ECMAScript mode) takes the
/// lookbehind of setup-dotnet's `csc` matcher; the `regex` crate takes every other one, and is
/// what the set that pre-filters each line is built from.
enum Engine {
    Plain(regex::Regex),
    Fancy(fancy_regex::Regex),
}

impl Engine {
    /// The groups of a match, `None` for a group that took no part (the runner reads those as
    /// the empty string).
    fn captures(&self, line: &str) -> Option<Vec<Option<String>>> {
        match self {
            Engine::Plain(re) => re.captures(line).map(|c| {
                c.iter()
                    .map(|m| m.map(|m| m.as_str().to_string()))
                    .collect()
            }),
            Engine::Fancy(re) => re.captures(line).ok().flatten().map(|c| {
                c.iter()
                    .map(|m| m.map(|m| m.as_str().to_string()))
                    .collect()
            }),
        }
    }
}

struct Pattern {
    engine: Engine,
    /// Index of this pattern in the pre-filter set: a line the set does not match cannot match.
    in_set: usize,
    config: PatternConfig,
}

/// What a pattern (or a run of patterns) captured: the runner's `IssueMatch`. `Some("")` is a
/// group that exists but took no part, which the runner keeps over a later pattern's value.
#[derive(Clone, Default)]
struct IssueMatch {
    file: Option<String>,
    line: Option<String>,
    severity: Option<String>,
    message: Option<String>,
    from_path: Option<String>,
}

impl IssueMatch {
    fn new(running: Option<&IssueMatch>, p: &PatternConfig, groups: &[Option<String>]) -> Self {
        let get = |i: Option<usize>| {
            i.filter(|&i| i < groups.len())
                .map(|i| groups[i].clone().unwrap_or_default())
        };
        let keep = |r: Option<&Option<String>>, v: Option<String>| r.cloned().flatten().or(v);
        IssueMatch {
            file: keep(running.map(|r| &r.file), get(p.file)),
            line: keep(running.map(|r| &r.line), get(p.line)),
            severity: keep(running.map(|r| &r.severity), get(p.severity)),
            message: keep(running.map(|r| &r.message), get(p.message)),
            from_path: keep(running.map(|r| &r.from_path), get(p.from_path)),
        }
    }
}

/// One registered matcher with its running state (`IssueMatcher`).
struct Matcher {
    owner: String,
    default_severity: Option<String>,
    default_from_path: Option<String>,
    patterns: Vec<Pattern>,
    state: Vec<Option<IssueMatch>>,
}

impl Matcher {
    fn reset(&mut self) {
        self.state = vec![None; self.patterns.len().saturating_sub(1)];
    }

    /// `IssueMatcher.Match`: a single pattern matches alone; of several, the last one completes
    /// a match the earlier ones started on the lines just before, and may loop.
    fn matches(&mut self, line: &str, set: &regex::SetMatches) -> Option<IssueMatch> {
        let run = |p: &Pattern| {
            if set.matched(p.in_set) {
                p.engine.captures(line)
            } else {
                None
            }
        };
        let n = self.patterns.len();
        let out = if n == 1 {
            let p = &self.patterns[0];
            run(p).map(|g| IssueMatch::new(None, &p.config, &g))
        } else {
            let mut out = None;
            for i in (0..n).rev() {
                let running = if i > 0 {
                    self.state[i - 1].clone()
                } else {
                    None
                };
                if i != 0 && running.is_none() {
                    continue;
                }
                let p = &self.patterns[i];
                let last = i == n - 1;
                match run(p) {
                    Some(g) if last => {
                        let m = IssueMatch::new(running.as_ref(), &p.config, &g);
                        let looped = p.config.r#loop;
                        self.reset();
                        if looped {
                            self.state[i - 1] = running;
                        }
                        out = Some(m);
                        break;
                    }
                    Some(g) => {
                        self.state[i] = Some(IssueMatch::new(running.as_ref(), &p.config, &g))
                    }
                    None if last => self.state[i - 1] = None,
                    None => self.state[i] = None,
                }
            }
            out
        };
        out.map(|mut m| {
            if m.severity.as_deref().is_none_or(str::is_empty) {
                m.severity.clone_from(&self.default_severity);
            }
            if m.from_path.as_deref().is_none_or(str::is_empty) {
                m.from_path.clone_from(&self.default_from_path);
            }
            m
        })
    }
}

/// An annotation the runner would make, with the location it names (file as printed, joined to
/// `fromPath`'s directory when relative).
struct Annotation {
    file: String,
    line: u32,
}

/// `OutputManager.ConvertToIssue`, as far as it goes without the repository: no message or an
/// unknown severity makes no annotation; a line that is not all digits is dropped, as is the file
/// when there is none.
fn convert(m: &IssueMatch) -> Option<Option<Annotation>> {
    if m.message.as_deref().is_none_or(|s| s.trim().is_empty()) {
        return None;
    }
    let severity = m.severity.as_deref().unwrap_or("");
    if !["", "error", "warning", "notice"].contains(&severity.to_ascii_lowercase().as_str()) {
        return None;
    }
    let line = m
        .line
        .as_deref()
        .filter(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|l| l.parse::<u32>().ok());
    let file = m.file.as_deref().filter(|f| !f.trim().is_empty());
    let (Some(file), Some(line)) = (file, line) else {
        return Some(None);
    };
    let file = file.replace('\\', "/");
    let absolute = file.starts_with('/') || file.as_bytes().get(1..3) == Some(b":/");
    let file = match m.from_path.as_deref().filter(|f| !f.trim().is_empty()) {
        Some(from) if !absolute => {
            let from = from.replace('\\', "/");
            match from.rfind('/') {
                Some(at) => format!("{}/{file}", &from[..at]),
                None => file,
            }
        }
        _ => file,
    };
    Some(Some(Annotation { file, line }))
}

/// The matchers of one published file, registered as the action that ships it registers them:
/// in the file's order, each newly added matcher put first, so the last is tried first.
struct Runner {
    name: String,
    matchers: Vec<Matcher>,
}

impl Runner {
    /// `OutputManager.OnDataReceived` for one line (its colour codes already stripped): the
    /// first matcher whose match makes an annotation takes the line; any match resets the
    /// others' running state.
    fn line(&mut self, line: &str, set: &regex::SetMatches, out: &mut Vec<Annotation>) {
        for at in 0..self.matchers.len() {
            let Some(m) = self.matchers[at].matches(line, set) else {
                continue;
            };
            for (i, other) in self.matchers.iter_mut().enumerate() {
                if i != at {
                    other.reset();
                }
            }
            if let Some(annotation) = convert(&m) {
                out.extend(annotation);
                return;
            }
        }
    }
}

/// Every published matcher file, each replayed on its own as if its action alone had been set
/// up (all twenty at once would let a loose matcher — pytest's `^(\S+):(\d+): ` — take lines
/// from the one made for them, which no real workflow does). One pre-filter set serves them all.
struct Baseline {
    set: regex::RegexSet,
    runners: Vec<Runner>,
    colour: regex::Regex,
    stamp: regex::Regex,
}

impl Baseline {
    fn load(dir: &Path) -> Baseline {
        let files = common::walk(dir, &|p| p.extension().is_some_and(|e| e == "json"));
        assert!(!files.is_empty(), "no matcher files in {}", dir.display());
        let mut sources = Vec::new();
        let mut runners = Vec::new();
        for f in &files {
            let text = std::fs::read_to_string(f).expect("matcher file is readable");
            let parsed: MatchersFile =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let mut matchers: Vec<Matcher> = Vec::new();
            for m in parsed.problem_matcher {
                let mut patterns = Vec::new();
                for p in m.pattern {
                    let engine = match regex::Regex::new(&p.regexp) {
                        Ok(re) => Engine::Plain(re),
                        Err(_) => Engine::Fancy(
                            fancy_regex::Regex::new(&p.regexp)
                                .unwrap_or_else(|e| panic!("{}: {}: {e}", m.owner, p.regexp)),
                        ),
                    };
                    let in_set = sources.len();
                    sources.push(without_lookaround(&p.regexp));
                    patterns.push(Pattern {
                        engine,
                        in_set,
                        config: p,
                    });
                }
                // Adding a matcher replaces one of the same owner.
                matchers.retain(|o| !o.owner.eq_ignore_ascii_case(&m.owner));
                let mut matcher = Matcher {
                    owner: m.owner,
                    default_severity: m.severity,
                    default_from_path: m.from_path,
                    patterns,
                    state: Vec::new(),
                };
                matcher.reset();
                matchers.insert(0, matcher);
            }
            let name = f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            runners.push(Runner { name, matchers });
        }
        Baseline {
            set: regex::RegexSet::new(&sources).expect("the pre-filter set compiles"),
            runners,
            colour: regex::Regex::new("\x1b\\[[0-9;]*m?").expect("colour pattern"),
            stamp: regex::Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z ?")
                .expect("timestamp pattern"),
        }
    }

    /// The annotations with a location that each matcher file makes on one log, in the order of
    /// [`Baseline::runners`].
    fn run(&mut self, log: &[u8]) -> Vec<Vec<Annotation>> {
        for r in &mut self.runners {
            for m in &mut r.matchers {
                m.reset();
            }
        }
        let text = String::from_utf8_lossy(log);
        let mut out: Vec<Vec<Annotation>> = self.runners.iter().map(|_| Vec::new()).collect();
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let line = line.strip_prefix('\u{feff}').unwrap_or(line);
            // A downloaded Actions log stamps each line; the runner matched the line before.
            let line = self.stamp.find(line).map_or(line, |m| &line[m.end()..]);
            // The runner's own lines and the workflow commands it consumed are never matched.
            if line.starts_with("##[") {
                continue;
            }
            let line = if line.contains("\x1b[") {
                self.colour.replace_all(line, "").into_owned()
            } else {
                line.to_string()
            };
            let set = self.set.matches(&line);
            if !set.matched_any() {
                // No pattern matches: every running match breaks, as `Match` would find.
                for m in self.runners.iter_mut().flat_map(|r| &mut r.matchers) {
                    m.reset();
                }
                continue;
            }
            for (r, out) in self.runners.iter_mut().zip(&mut out) {
                r.line(&line, &set, out);
            }
        }
        out
    }
}

/// A looser copy of a pattern for the pre-filter set, which has no lookaround: the group is
/// dropped, so the copy matches at least what the pattern matches.
fn without_lookaround(p: &str) -> String {
    let mut out = String::new();
    let mut rest = p;
    while let Some(at) = ["(?<!", "(?<=", "(?=", "(?!"]
        .iter()
        .filter_map(|o| rest.find(o))
        .min()
    {
        out.push_str(&rest[..at]);
        let mut depth = 0;
        let mut end = rest.len();
        let bytes = rest.as_bytes();
        let mut i = at;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 1,
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Whether an annotated file is the expected one: the same path, or the path below some
/// directory (a checkout root, a build directory's `../..`), which the runner would resolve
/// only if the file existed in the checkout. Generous on purpose.
fn same_file(annotated: &str, expected: &str) -> bool {
    let a = annotated.strip_prefix("file://").unwrap_or(annotated);
    let a = a.trim_start_matches("./");
    a == expected
        || a.strip_suffix(expected)
            .is_some_and(|head| head.ends_with('/'))
}

/// The repository-relative path the runner would give an annotated file on a GitHub-hosted
/// runner (`OutputManager.ConvertToIssue`): a relative path is joined to the workspace and must
/// stay inside it; an absolute one must lie in a runner's checkout of the repository
/// (`/home/runner/work/<r>/<r>/`, macOS's `/Users/runner/work/`, a container job's `/__w/`,
/// Windows' `<drive>:/a/`). Whether the file exists is not known here: it is assumed.
fn runner_path(annotated: &str) -> Option<String> {
    let a = annotated.replace('\\', "/");
    let windows = a.as_bytes().get(1..3) == Some(b":/");
    let rel = if let Some(rest) = ["/home/runner/work/", "/Users/runner/work/", "/__w/"]
        .iter()
        .find_map(|root| a.strip_prefix(root))
        .or_else(|| windows.then(|| a[3..].strip_prefix("a/")).flatten())
    {
        rest.splitn(3, '/').nth(2)?.to_string()
    } else if a.starts_with('/') || windows {
        return None;
    } else {
        a
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Per set of logs: how many expected locations each side finds.
#[derive(Default)]
struct Tally {
    logs: usize,
    expected: usize,
    parser: usize,
    matchers: usize,
    matchers_only: usize,
    parser_only: usize,
    /// Expected locations the matchers annotate at the path the runner would resolve on a
    /// GitHub-hosted runner ([`runner_path`]), not only at one ending like it.
    matchers_resolved: usize,
    /// Distinct `(file, line)` the matcher files annotate, over all of them.
    annotations: usize,
    annotations_right: usize,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.logs += o.logs;
        self.expected += o.expected;
        self.parser += o.parser;
        self.matchers += o.matchers;
        self.matchers_only += o.matchers_only;
        self.parser_only += o.parser_only;
        self.matchers_resolved += o.matchers_resolved;
        self.annotations += o.annotations;
        self.annotations_right += o.annotations_right;
    }
}

#[derive(Deserialize)]
struct ExpectedLocation {
    file_path: String,
    line_number: u32,
}

/// Scores one log: its tally, the expected locations only the matchers find, and per matcher
/// file how many annotations it made and how many of them are expected.
fn tally(baseline: &mut Baseline, log: &Path) -> (Tally, Vec<String>, Vec<(usize, usize)>) {
    let bytes = std::fs::read(log).expect("log is readable");
    let text = std::fs::read_to_string(log.with_extension("expected.json"))
        .expect("expectation is readable");
    let expected: Vec<ExpectedLocation> = serde_json::from_str(&text).expect("expectation is JSON");
    let reports = parse_reader(bytes.as_slice(), &ParseOptions::default()).expect("parses");
    let per_file = baseline.run(&bytes);
    let hits = |a: &Annotation| {
        expected
            .iter()
            .any(|e| a.line == e.line_number && same_file(&a.file, &e.file_path))
    };
    let by_file = per_file
        .iter()
        .map(|anns| (anns.len(), anns.iter().filter(|a| hits(a)).count()))
        .collect();
    let mut distinct: Vec<&Annotation> = per_file.iter().flatten().collect();
    distinct.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    distinct.dedup_by(|a, b| a.file == b.file && a.line == b.line);
    let mut t = Tally {
        logs: 1,
        expected: expected.len(),
        annotations: distinct.len(),
        annotations_right: distinct.iter().filter(|a| hits(a)).count(),
        ..Tally::default()
    };
    let mut only = Vec::new();
    for e in &expected {
        let by_parser = reports
            .iter()
            .any(|r| r.file_path == e.file_path && r.line_number == e.line_number);
        let by_matchers = distinct
            .iter()
            .any(|a| a.line == e.line_number && same_file(&a.file, &e.file_path));
        t.parser += usize::from(by_parser);
        t.matchers += usize::from(by_matchers);
        t.matchers_resolved += usize::from(distinct.iter().any(|a| {
            a.line == e.line_number && runner_path(&a.file).as_deref() == Some(&e.file_path)
        }));
        t.parser_only += usize::from(by_parser && !by_matchers);
        if by_matchers && !by_parser {
            t.matchers_only += 1;
            only.push(format!("{}:{}", e.file_path, e.line_number));
        }
    }
    (t, only, by_file)
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// The baseline, or `None` (a skip, outside CI) when `shared/` is not beside the repository.
fn baseline() -> Option<Baseline> {
    let dir = common::shared_dir().join("baselines/problem-matchers");
    if !dir.is_dir() {
        assert!(!common::in_ci(), "{} is missing", dir.display());
        eprintln!(
            "skipping: {} is missing (set CI_MEDIC_SHARED_DIR)",
            dir.display()
        );
        return None;
    }
    Some(Baseline::load(&dir))
}

#[test]
fn parser_finds_what_githubs_problem_matchers_find() {
    let Some(mut baseline) = baseline() else {
        return;
    };
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corpus");
    let logs = common::walk(&corpus, &|p| p.extension().is_some_and(|e| e == "log"));
    // Real logs by ecosystem, the self-made corpus as one row, each held-out set as one row.
    let mut rows: BTreeMap<String, Tally> = BTreeMap::new();
    let mut gated = Tally::default();
    let mut missed = Vec::new();
    let mut per_file = vec![(0, 0); baseline.runners.len()];
    for log in &logs {
        let rel = log.strip_prefix(&corpus).unwrap_or(log);
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let (row, is_gated) = match parts.first().map(String::as_str) {
            Some("real") => (format!("real: {}", parts[1]), true),
            Some("heldout") => (format!("held-out: {}", parts[1]), false),
            _ => ("self-made".to_string(), true),
        };
        let (t, only, by_file) = tally(&mut baseline, log);
        rows.entry(row).or_default().add(&t);
        if is_gated {
            gated.add(&t);
            missed.extend(only.into_iter().map(|o| format!("{}: {o}", rel.display())));
            for (sum, (n, right)) in per_file.iter_mut().zip(by_file) {
                sum.0 += n;
                sum.1 += right;
            }
        }
    }
    eprintln!(
        "\nGitHub's problem matchers ({} files, each replayed on its own) against the parser, by expected location\n",
        baseline.runners.len()
    );
    eprintln!(
        "| set | logs | expected | parser found | matchers found (at most) | matchers found at the runner's path | only matchers | only parser | parser recall | matchers recall (at most) | matcher annotations with a location | of them expected |"
    );
    eprintln!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let print = |name: &str, t: &Tally| {
        eprintln!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {:.3} | {:.3} | {} | {} |",
            t.logs,
            t.expected,
            t.parser,
            t.matchers,
            t.matchers_resolved,
            t.matchers_only,
            t.parser_only,
            ratio(t.parser, t.expected),
            ratio(t.matchers, t.expected),
            t.annotations,
            t.annotations_right
        );
    };
    for (name, t) in &rows {
        print(name, t);
    }
    print("**real and self-made**", &gated);
    eprintln!(
        "\n| matcher file (real and self-made) | annotations with a location | of them expected |"
    );
    eprintln!("|---|---:|---:|");
    for (r, (n, right)) in baseline.runners.iter().zip(&per_file) {
        eprintln!("| {} | {n} | {right} |", r.name);
    }
    for m in &missed {
        eprintln!("ONLY MATCHERS {m}");
    }
    assert!(
        gated.matchers > 0,
        "the matchers found nothing: the replay is broken"
    );
    assert!(
        missed.is_empty(),
        "{} expected location(s) a GitHub problem matcher annotates and the parser misses",
        missed.len()
    );
}

#[cfg(test)]
mod replay {
    //! The runner's matching rules on lines of the corpus, so the replay above is known to
    //! behave like the runner before its figures are believed.

    use super::*;

    #[test]
    fn a_lookbehind_is_dropped_only_from_the_prefilter() {
        assert_eq!(
            without_lookaround(r"\s+([a-zA-Z]+(?<!MSB)\d*):\s*(.*?)"),
            r"\s+([a-zA-Z]+\d*):\s*(.*?)"
        );
        assert_eq!(without_lookaround(r"a(?=(b))c"), "ac");
    }

    /// One matcher file's located annotations on a log of the corpus.
    fn annotated(baseline: &mut Baseline, file: &str, log: &str) -> Vec<(String, u32)> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/corpus")
            .join(log);
        let bytes = std::fs::read(&path).expect("corpus log");
        let at = baseline
            .runners
            .iter()
            .position(|r| r.name == file)
            .expect("matcher file");
        baseline
            .run(&bytes)
            .swap_remove(at)
            .into_iter()
            .map(|a| (a.file, a.line))
            .collect()
    }

    #[test]
    fn a_single_line_matcher_annotates_with_its_location() {
        let Some(mut b) = baseline() else { return };
        let got = annotated(
            &mut b,
            "02_setup-node__tsc",
            "real/javascript/pyjs-tool-suites/jest_config_ts.log",
        );
        assert!(got.contains(&("jest.config.ts".to_string(), 1)), "{got:?}");
    }

    #[test]
    fn a_multi_line_matcher_takes_its_file_from_the_first_line_and_loops() {
        let Some(mut b) = baseline() else { return };
        let got = annotated(
            &mut b,
            "03_setup-node__eslint-stylish",
            "heldout/fresh/javascript/fresh-issues/npm-run-lint-eslint-stylish-elifecycle.log",
        );
        // `index.js` once, then three problems on its line 1 under it.
        let index = got.iter().filter(|a| a.0 == "index.js").count();
        assert!(index >= 3, "{got:?}");
    }

    #[test]
    fn msbuild_errors_are_rooted_at_their_project_and_msb_codes_are_refused() {
        let Some(mut b) = baseline() else { return };
        let got = annotated(
            &mut b,
            "07_setup-dotnet__csc",
            "real/dotnet/eco1-logchunks/nancy-461393228-csc-errors-relative-paths.log",
        );
        let file = "/home/travis/build/NancyFx/Nancy/src/Nancy/Extensions/CollectionExtensions.cs";
        assert!(got.contains(&(file.to_string(), 21)), "{got:?}");
        let got = annotated(
            &mut b,
            "07_setup-dotnet__csc",
            "real/dotnet/eco1-errorformat/msbuild-warnings-only.log",
        );
        // Line 4 is `…targets(135,9): warning MSB3884: …`: the lookbehind refuses MSB codes.
        assert!(!got.iter().any(|a| a.1 == 135), "{got:?}");
        assert!(got.iter().any(|a| a.1 == 229), "{got:?}");
    }

    #[test]
    fn the_runner_resolves_relative_paths_and_its_own_checkouts_only() {
        assert_eq!(runner_path("./src/a.ts").as_deref(), Some("src/a.ts"));
        assert_eq!(
            runner_path("/home/runner/work/r/r/src/a.py").as_deref(),
            Some("src/a.py")
        );
        assert_eq!(
            runner_path("D:\\a\\r\\r\\src\\A.cs").as_deref(),
            Some("src/A.cs")
        );
        assert_eq!(runner_path("/home/travis/build/o/r/src/a.py"), None);
        assert_eq!(runner_path("C:\\Users\\me\\r\\src\\A.cs"), None);
        assert_eq!(runner_path("../../src/x.c"), None);
        assert_eq!(runner_path("build/../src/x.c").as_deref(), Some("src/x.c"));
    }

    #[test]
    fn a_file_below_any_directory_counts_as_the_expected_one() {
        assert!(same_file("/home/runner/work/r/r/src/a.py", "src/a.py"));
        assert!(same_file("./src/a.py", "src/a.py"));
        assert!(!same_file("/x/mysrc/a.py", "src/a.py"));
    }
}

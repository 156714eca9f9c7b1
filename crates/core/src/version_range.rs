//! Version ranges as projects pin their tools: PEP 440 specifier sets (`black>=23,<24`,
//! `~=23.1`, `==23.*` in `requirements*.txt` and PEP 621 lists), Poetry's constraints
//! (`black = "^23.1"`), and npm's semver ranges (`"prettier": "^3.0.0"`, `~3.0`, `3.x`,
//! `>=3 <4`, `1.2.3 - 1.4`, `||`).
//!
//! A range is read into alternatives of comparators ([`Range`]); [`Range::contains`] says
//! whether a version satisfies it, and [`Range::for_pip`] / [`Range::for_npm`] write it back
//! in the installer's own syntax, from what was understood only (so nothing of the file but the
//! numbers and operators reaches the install command). A form it does not read (a tag such as
//! `latest`, a URL, a `workspace:` reference, a dev release) is a [`RangeError`] naming it.
//!
//! Pre-releases: a pre-release version satisfies a range only when one of its comparators names
//! a pre-release of the same release (npm's rule; PEP 440 likewise leaves pre-releases out unless
//! asked for). It never does I/O.

use std::cmp::Ordering;
use std::fmt;

/// Whose syntax a range is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// PEP 440 specifiers: pip's requirements, PEP 621 and `[dependency-groups]` lists.
    Pep440,
    /// Poetry's constraints (`^`, `~`, `*`, PEP 440 operators, `,` and `||`).
    Poetry,
    /// npm's semver ranges.
    Npm,
}

/// A range this module does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{spec}` is not a version range ci-medic reads ({why})")]
pub struct RangeError {
    pub spec: String,
    pub why: String,
}

/// One pre-release identifier: numbers compare as numbers, below words (semver's order).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Ident {
    Num(u64),
    Word(String),
}

/// A release version: its numbers, and a pre-release when it is one. Equal as its tools say
/// (`1.2` is `1.2.0`).
#[derive(Debug, Clone)]
pub struct Version {
    release: Vec<u64>,
    pre: Vec<Ident>,
    /// A PEP 440 post-release number (`1.0.post2`), 0 for none.
    post: u64,
}

impl Version {
    /// `23.1.0`, `v3.0.0`, `1.0.0rc1` (PEP 440), `3.0.0-beta.1` (semver; `+build` ignored),
    /// `1.0.post1`. `None` for anything else.
    pub fn parse(text: &str) -> Option<Version> {
        let t = text.trim().trim_start_matches(['v', 'V']);
        let t = t.split('+').next().unwrap_or(t);
        let digits_end = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (nums, rest) = t.split_at(digits_end);
        let nums = nums.strip_suffix('.').unwrap_or(nums);
        if nums.is_empty() {
            return None;
        }
        let release: Vec<u64> = nums
            .split('.')
            .map(|p| p.parse().ok())
            .collect::<Option<_>>()?;
        if release.len() > 6 {
            return None;
        }
        let mut v = Version {
            release,
            pre: Vec::new(),
            post: 0,
        };
        if rest.is_empty() {
            return Some(v);
        }
        if let Some(sem) = rest.strip_prefix('-') {
            // semver: dot-separated identifiers.
            if sem.is_empty() {
                return None;
            }
            for id in sem.split('.') {
                if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                    return None;
                }
                v.pre.push(match id.parse() {
                    Ok(n) => Ident::Num(n),
                    Err(_) => Ident::Word(id.to_ascii_lowercase()),
                });
            }
            return Some(v);
        }
        // PEP 440: `a1`, `b2`, `rc1` (also `.rc1`, `alpha`, `c`), then `.post1`.
        let lower = rest.to_ascii_lowercase();
        let mut r = lower.trim_start_matches(['.', '_']);
        let word_end = r
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(r.len());
        let (word, tail) = r.split_at(word_end);
        let num_end = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (num, after) = tail.split_at(num_end);
        let n: u64 = if num.is_empty() { 0 } else { num.parse().ok()? };
        match word {
            "a" | "alpha" => v.pre = vec![Ident::Word("a".into()), Ident::Num(n)],
            "b" | "beta" => v.pre = vec![Ident::Word("b".into()), Ident::Num(n)],
            "c" | "rc" | "pre" | "preview" => v.pre = vec![Ident::Word("rc".into()), Ident::Num(n)],
            "post" | "rev" | "r" => {
                v.post = n;
                return after.is_empty().then_some(v);
            }
            _ => return None,
        }
        r = after.trim_start_matches(['.', '_']);
        if let Some(p) = r.strip_prefix("post") {
            v.post = p.parse().ok()?;
            r = "";
        }
        r.is_empty().then_some(v)
    }

    fn is_pre(&self) -> bool {
        !self.pre.is_empty()
    }

    fn from_release(release: Vec<u64>) -> Version {
        Version {
            release,
            pre: Vec::new(),
            post: 0,
        }
    }

    /// The lowest pre-release of this release (`2.0.0-0`): an upper bound `<` it leaves out
    /// the next release's pre-releases too.
    fn pre_floor(mut self) -> Version {
        self.pre = vec![Ident::Num(0)];
        self
    }

    fn pip_text(&self) -> String {
        let mut s = join(&self.release);
        if let [Ident::Word(w), Ident::Num(n)] = self.pre.as_slice() {
            s.push_str(&format!("{w}{n}"));
        }
        if self.post > 0 {
            s.push_str(&format!(".post{}", self.post));
        }
        s
    }

    fn npm_text(&self) -> String {
        let mut r = self.release.clone();
        r.resize(r.len().max(3), 0);
        let mut s = join(&r);
        if !self.pre.is_empty() {
            let ids: Vec<String> = self
                .pre
                .iter()
                .map(|i| match i {
                    Ident::Num(n) => n.to_string(),
                    Ident::Word(w) => w.clone(),
                })
                .collect();
            s.push('-');
            s.push_str(&ids.join("."));
        }
        s
    }
}

fn join(nums: &[u64]) -> String {
    nums.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let n = self.release.len().max(other.release.len());
        let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
        (0..n)
            .map(|i| at(&self.release, i).cmp(&at(&other.release, i)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => self.pre.cmp(&other.pre),
            })
            .then_with(|| self.post.cmp(&other.post))
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Version {}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pip_text())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Op {
    fn text(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "==",
            Op::Ne => "!=",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Comparator {
    Cmp(Op, Version),
    /// PEP 440's `==1.2.*` (`matches: true`) and `!=1.2.*`.
    Prefix {
        matches: bool,
        release: Vec<u64>,
    },
}

impl Comparator {
    fn holds(&self, v: &Version) -> bool {
        match self {
            Comparator::Cmp(op, w) => {
                let o = v.cmp(w);
                match op {
                    Op::Lt => o.is_lt(),
                    Op::Le => o.is_le(),
                    Op::Gt => o.is_gt(),
                    Op::Ge => o.is_ge(),
                    Op::Eq => o.is_eq(),
                    Op::Ne => o.is_ne(),
                }
            }
            Comparator::Prefix { matches, release } => {
                let at = |i: usize| v.release.get(i).copied().unwrap_or(0);
                let same = release.iter().enumerate().all(|(i, n)| at(i) == *n);
                same == *matches
            }
        }
    }

    /// Names a pre-release of `v`'s release (which lets `v`, a pre-release, satisfy it).
    fn admits_pre_of(&self, v: &Version) -> bool {
        match self {
            Comparator::Cmp(_, w) => {
                w.is_pre()
                    && Version::from_release(w.release.clone())
                        == Version::from_release(v.release.clone())
            }
            Comparator::Prefix { .. } => false,
        }
    }
}

/// A range: it holds when every comparator of one of its alternatives holds. No comparator at
/// all is any version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    alternatives: Vec<Vec<Comparator>>,
}

impl Range {
    /// Reads `spec` as `dialect` writes it.
    pub fn parse(spec: &str, dialect: Dialect) -> Result<Range, RangeError> {
        let err = |why: &str| RangeError {
            spec: spec.to_string(),
            why: why.to_string(),
        };
        if spec.len() > 200 {
            return Err(err("too long"));
        }
        let alternatives = match dialect {
            Dialect::Pep440 => {
                if spec.contains("||") {
                    return Err(err("`||` is not PEP 440"));
                }
                vec![pep440_set(spec).map_err(|w| err(&w))?]
            }
            Dialect::Poetry => spec
                .split("||")
                .map(|alt| poetry_set(alt).map_err(|w| err(&w)))
                .collect::<Result<_, _>>()?,
            Dialect::Npm => spec
                .split("||")
                .map(|alt| npm_set(alt).map_err(|w| err(&w)))
                .collect::<Result<_, _>>()?,
        };
        Ok(Range { alternatives })
    }

    /// Whether `version` (as an image's label or an installer states it) satisfies the range.
    pub fn contains(&self, version: &str) -> bool {
        let Some(v) = Version::parse(version) else {
            return false;
        };
        self.alternatives.iter().any(|set| {
            set.iter().all(|c| c.holds(&v))
                && (!v.is_pre() || set.iter().any(|c| c.admits_pre_of(&v)))
        })
    }

    /// The one version the range allows, when it is `==V` (or npm's bare `V`).
    pub fn exact(&self) -> Option<String> {
        match self.alternatives.as_slice() {
            [set] => match set.as_slice() {
                [Comparator::Cmp(Op::Eq, v)] => Some(v.pip_text()),
                _ => None,
            },
            _ => None,
        }
    }

    /// The range as pip's specifier (`>=23,<24`; empty for any version), or `None` when pip
    /// cannot say it (alternatives).
    pub fn for_pip(&self) -> Option<String> {
        let [set] = self.alternatives.as_slice() else {
            return None;
        };
        Some(
            set.iter()
                .map(|c| match c {
                    Comparator::Cmp(op, v) => format!("{}{}", op.text(), v.pip_text()),
                    Comparator::Prefix { matches, release } => {
                        format!("{}{}.*", if *matches { "==" } else { "!=" }, join(release))
                    }
                })
                .collect::<Vec<_>>()
                .join(","),
        )
    }

    /// The range as npm's (`>=3.0.0 <4.0.0-0 || 5.1.0`; `*` for any version), or `None` when
    /// npm cannot say it (PEP 440's `!=` and `.*`).
    pub fn for_npm(&self) -> Option<String> {
        let mut alts = Vec::new();
        for set in &self.alternatives {
            let mut words = Vec::new();
            for c in set {
                match c {
                    Comparator::Cmp(Op::Ne, _) | Comparator::Prefix { .. } => return None,
                    Comparator::Cmp(Op::Eq, v) => words.push(v.npm_text()),
                    Comparator::Cmp(op, v) => words.push(format!("{}{}", op.text(), v.npm_text())),
                }
            }
            alts.push(if words.is_empty() {
                "*".to_string()
            } else {
                words.join(" ")
            });
        }
        Some(alts.join(" || "))
    }
}

/// A partial version: the numbers given, `*`/`x` ending it, and a pre-release.
struct Partial {
    release: Vec<u64>,
    /// The full version when all three numbers (or, for PEP 440, any) are given.
    full: Option<Version>,
}

/// `1`, `1.2`, `1.2.x`, `1.2.*`, `*`, `1.2.3-beta.1` → the numbers before any wildcard.
fn partial(text: &str) -> Result<Partial, String> {
    let t = text.trim().trim_start_matches(['v', 'V', '=']);
    if t.is_empty() || t == "*" || t.eq_ignore_ascii_case("x") {
        return Ok(Partial {
            release: Vec::new(),
            full: None,
        });
    }
    let mut release = Vec::new();
    let mut wild = false;
    let head = t.split(['-', '+']).next().unwrap_or(t);
    for part in head.split('.') {
        if part == "*" || part.eq_ignore_ascii_case("x") {
            wild = true;
            break;
        }
        match part.parse::<u64>() {
            Ok(n) if !wild => release.push(n),
            _ => {
                // A PEP 440 suffix (`1.0rc1`) or something else: the whole text must parse.
                let v = Version::parse(t).ok_or_else(|| format!("`{text}` is not a version"))?;
                return Ok(Partial {
                    release: v.release.clone(),
                    full: Some(v),
                });
            }
        }
    }
    if release.is_empty() && !wild {
        return Err(format!("`{text}` is not a version"));
    }
    let full = if wild {
        None
    } else {
        Some(Version::parse(t).ok_or_else(|| format!("`{text}` is not a version"))?)
    };
    Ok(Partial { release, full })
}

/// The release after `release`'s component `i` is bumped: `1.2.3` at 1 → `1.3`.
fn bump(release: &[u64], i: usize) -> Version {
    let mut r: Vec<u64> = release[..i].to_vec();
    r.push(release[i].saturating_add(1));
    Version::from_release(r).pre_floor()
}

/// `^V`: not older, and below the next change of its first non-zero number (of those given).
fn caret(p: &Partial) -> Vec<Comparator> {
    if p.release.is_empty() {
        return Vec::new();
    }
    let low = p
        .full
        .clone()
        .unwrap_or_else(|| Version::from_release(p.release.clone()));
    let i = p
        .release
        .iter()
        .position(|&n| n != 0)
        .unwrap_or(p.release.len() - 1);
    vec![
        Comparator::Cmp(Op::Ge, low),
        Comparator::Cmp(Op::Lt, bump(&p.release, i)),
    ]
}

/// `~V`: not older, below the next minor (or the next major when only the major is given).
fn tilde(p: &Partial) -> Vec<Comparator> {
    if p.release.is_empty() {
        return Vec::new();
    }
    let low = p
        .full
        .clone()
        .unwrap_or_else(|| Version::from_release(p.release.clone()));
    let i = 1.min(p.release.len() - 1);
    vec![
        Comparator::Cmp(Op::Ge, low),
        Comparator::Cmp(Op::Lt, bump(&p.release, i)),
    ]
}

/// npm's and Poetry's comparator on a partial version (`>1.2` is `>=1.3.0`, `<=1.2` is
/// `<1.3.0`, a bare `1.2` is `>=1.2.0 <1.3.0`).
fn x_range(op: &str, p: &Partial) -> Result<Vec<Comparator>, String> {
    let any = p.release.is_empty();
    let n = p.release.len();
    if let Some(v) = p.full.clone().filter(|_| n >= 3 || op_is_pep(op)) {
        return Ok(vec![match op {
            ">" => Comparator::Cmp(Op::Gt, v),
            ">=" => Comparator::Cmp(Op::Ge, v),
            "<" => Comparator::Cmp(Op::Lt, v),
            "<=" => Comparator::Cmp(Op::Le, v),
            "!=" => Comparator::Cmp(Op::Ne, v),
            _ => Comparator::Cmp(Op::Eq, v),
        }]);
    }
    let low = || Version::from_release(p.release.clone());
    Ok(match op {
        ">" if any => vec![Comparator::Cmp(Op::Lt, Version::from_release(vec![0]))],
        ">" => vec![Comparator::Cmp(Op::Ge, bump(&p.release, n - 1))],
        ">=" | "<=" | "=" | "" if any => Vec::new(),
        "<" if any => vec![Comparator::Cmp(Op::Lt, Version::from_release(vec![0]))],
        ">=" => vec![Comparator::Cmp(Op::Ge, low())],
        "<" => vec![Comparator::Cmp(Op::Lt, low().pre_floor())],
        "<=" => vec![Comparator::Cmp(Op::Lt, bump(&p.release, n - 1))],
        "=" | "" => vec![
            Comparator::Cmp(Op::Ge, low()),
            Comparator::Cmp(Op::Lt, bump(&p.release, n - 1)),
        ],
        other => return Err(format!("`{other}` with a partial version")),
    })
}

/// Poetry writes `>=1.2` meaning 1.2.0: a partial version is a whole one there.
fn op_is_pep(op: &str) -> bool {
    op.starts_with('!')
}

/// Splits `>=1.2` into (`>=`, `1.2`).
fn split_op(clause: &str) -> (&str, &str) {
    let ops = [
        "===", "~=", "==", "!=", "<=", ">=", "~>", "<", ">", "=", "^", "~",
    ];
    for op in ops {
        if let Some(rest) = clause.strip_prefix(op) {
            return (op, rest.trim());
        }
    }
    ("", clause)
}

/// A PEP 440 specifier set: clauses joined by `,`.
fn pep440_set(spec: &str) -> Result<Vec<Comparator>, String> {
    let mut set = Vec::new();
    for clause in spec.split(',').map(str::trim) {
        if clause.is_empty() {
            if spec.trim().is_empty() {
                continue;
            }
            return Err("an empty clause".into());
        }
        set.extend(pep440_clause(clause)?);
    }
    Ok(set)
}

fn pep440_clause(clause: &str) -> Result<Vec<Comparator>, String> {
    let (op, rest) = split_op(clause);
    let version = |t: &str| Version::parse(t).ok_or_else(|| format!("`{t}` is not a version"));
    if let Some(prefix) = rest.strip_suffix(".*") {
        let release: Vec<u64> = prefix
            .split('.')
            .map(|p| p.parse().ok())
            .collect::<Option<_>>()
            .ok_or_else(|| format!("`{clause}`: a wildcard after a non-number"))?;
        return match op {
            "==" => Ok(vec![Comparator::Prefix {
                matches: true,
                release,
            }]),
            "!=" => Ok(vec![Comparator::Prefix {
                matches: false,
                release,
            }]),
            _ => Err(format!("`{clause}`: `.*` goes with `==` or `!=` only")),
        };
    }
    Ok(match op {
        "==" | "===" => vec![Comparator::Cmp(Op::Eq, version(rest)?)],
        "!=" => vec![Comparator::Cmp(Op::Ne, version(rest)?)],
        "<=" => vec![Comparator::Cmp(Op::Le, version(rest)?)],
        ">=" => vec![Comparator::Cmp(Op::Ge, version(rest)?)],
        "<" => vec![Comparator::Cmp(Op::Lt, version(rest)?.pre_floor())],
        ">" => vec![Comparator::Cmp(Op::Gt, version(rest)?)],
        "~=" => {
            let v = version(rest)?;
            if v.release.len() < 2 {
                return Err(format!("`{clause}`: `~=` needs two numbers at least"));
            }
            let release = v.release[..v.release.len() - 1].to_vec();
            vec![
                Comparator::Cmp(Op::Ge, v),
                Comparator::Prefix {
                    matches: true,
                    release,
                },
            ]
        }
        // A bare version, as a pre-commit `rev` states it: that version.
        "" => vec![Comparator::Cmp(Op::Eq, version(rest)?)],
        _ => return Err(format!("`{clause}` has no PEP 440 operator")),
    })
}

/// A Poetry constraint set: clauses joined by `,` (or spaces).
fn poetry_set(spec: &str) -> Result<Vec<Comparator>, String> {
    let mut set = Vec::new();
    for clause in clauses(spec) {
        let (op, rest) = split_op(&clause);
        match op {
            "^" => set.extend(caret(&partial(rest)?)),
            "~" => set.extend(tilde(&partial(rest)?)),
            "~=" | "===" => set.extend(pep440_clause(&clause)?),
            "==" | "!=" if rest.ends_with(".*") => set.extend(pep440_clause(&clause)?),
            "" | "==" | "=" if rest.contains('*') || rest.contains(['x', 'X']) => {
                set.extend(x_range("", &partial(rest)?)?)
            }
            "" | "==" | "=" => set.push(Comparator::Cmp(
                Op::Eq,
                Version::parse(rest).ok_or_else(|| format!("`{rest}` is not a version"))?,
            )),
            ">" | ">=" | "<" | "<=" | "!=" => {
                let v = Version::parse(rest).ok_or_else(|| format!("`{rest}` is not a version"))?;
                set.push(Comparator::Cmp(
                    match op {
                        ">" => Op::Gt,
                        ">=" => Op::Ge,
                        "<" => Op::Lt,
                        "<=" => Op::Le,
                        _ => Op::Ne,
                    },
                    if op == "<" { v.pre_floor() } else { v },
                ));
            }
            other => return Err(format!("`{other}` is not a Poetry operator")),
        }
    }
    Ok(set)
}

/// A constraint's clauses: split at `,` and at spaces, an operator standing alone joined to
/// the version after it (`>= 1.2`).
fn clauses(spec: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending = String::new();
    for word in spec.split([',', ' ', '\t']).filter(|w| !w.is_empty()) {
        pending.push_str(word);
        if word.chars().all(|c| "<>=!~^".contains(c)) {
            continue;
        }
        out.push(std::mem::take(&mut pending));
    }
    if !pending.is_empty() {
        out.push(pending);
    }
    out
}

/// An npm comparator set: space-separated, or a hyphen range `A - B`.
fn npm_set(spec: &str) -> Result<Vec<Comparator>, String> {
    let spec = spec.trim();
    if let Some((from, to)) = spec.split_once(" - ") {
        let from = partial(from)?;
        let to = partial(to)?;
        let mut set = x_range(">=", &from)?;
        set.extend(x_range("<=", &to)?);
        return Ok(set);
    }
    if spec.contains(':') || spec.contains('/') {
        return Err("a URL, a path or a protocol, not a version range".into());
    }
    let mut set = Vec::new();
    for clause in clauses(spec) {
        let (op, rest) = split_op(&clause);
        let p = partial(rest)?;
        match op {
            "^" => set.extend(caret(&p)),
            "~" | "~>" => set.extend(tilde(&p)),
            ">" | ">=" | "<" | "<=" | "=" | "" => set.extend(x_range(op, &p)?),
            other => return Err(format!("`{other}` is not an npm operator")),
        }
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(spec: &str, d: Dialect, yes: &[&str], no: &[&str]) {
        let r = Range::parse(spec, d).unwrap_or_else(|e| panic!("{e}"));
        for v in yes {
            assert!(r.contains(v), "{spec} ({d:?}) should hold {v}");
        }
        for v in no {
            assert!(!r.contains(v), "{spec} ({d:?}) should not hold {v}");
        }
    }

    #[test]
    fn pep_440_specifier_sets() {
        use Dialect::Pep440 as P;
        has(
            ">=23,<24",
            P,
            &["23.1.0", "23.12.1", "23"],
            &["24.1.1", "22.12.0", "24.0.0rc1"],
        );
        has("~=23.1", P, &["23.1.0", "23.12.1"], &["24.1.1", "23.0.9"]);
        has("~=23.1.0", P, &["23.1.0", "23.1.9"], &["23.2.0"]);
        has("==23.*", P, &["23.0.0", "23.12.1"], &["24.1.1"]);
        has("==23.1", P, &["23.1.0", "23.1"], &["23.1.1"]);
        has("!=23.1.0, >=23", P, &["23.3.0"], &["23.1.0", "22.0"]);
        has(">23.1.0", P, &["23.1.1"], &["23.1.0"]);
        has("<=0.6.9", P, &["0.6.9", "0.1"], &["0.7.0"]);
        has("==1.0.0rc1", P, &["1.0.0rc1"], &["1.0.0"]);
        has(
            ">=1.0rc1",
            P,
            &["1.0.0rc2", "1.0.0", "1.0.post1"],
            &["1.0.0a1"],
        );
        has("", P, &["1.2.3"], &["1.2.3a1"]);
        assert_eq!(
            Range::parse("==24.1.1", P).unwrap().exact().as_deref(),
            Some("24.1.1")
        );
        assert_eq!(Range::parse(">=24", P).unwrap().exact(), None);
        for bad in [
            "~=1",
            ">=1.*",
            "latest",
            "1.2 || 2",
            "@ https://x",
            ">=1.0.dev1",
        ] {
            assert!(Range::parse(bad, P).is_err(), "{bad}");
        }
    }

    #[test]
    fn poetry_constraints() {
        use Dialect::Poetry as Y;
        has("^23.1", Y, &["23.1.0", "23.12.1"], &["24.1.1", "23.0.0"]);
        has("^0.6.9", Y, &["0.6.9", "0.6.12"], &["0.7.0"]);
        has("^0.0.3", Y, &["0.0.3"], &["0.0.4"]);
        has("^0", Y, &["0.9.9"], &["1.0.0"]);
        has("~23.1", Y, &["23.1.9"], &["23.2.0"]);
        has("~23", Y, &["23.9.9"], &["24.0.0"]);
        has("23.*", Y, &["23.0.1"], &["24.0"]);
        has("*", Y, &["1.0"], &[]);
        has(">= 23.1, < 24", Y, &["23.5"], &["24.0", "23.0"]);
        has("23.1.0", Y, &["23.1.0"], &["23.1.1"]);
        has(
            "^22.12 || ^23.1",
            Y,
            &["22.12.0", "23.3.0"],
            &["22.11.0", "24.1.1"],
        );
        assert!(Range::parse("latest", Y).is_err());
    }

    #[test]
    fn npm_ranges() {
        use Dialect::Npm as N;
        has(
            "^3.0.0",
            N,
            &["3.0.0", "3.3.3"],
            &["2.8.8", "4.0.0", "4.0.0-alpha.1", "3.1.0-beta.1"],
        );
        has("~3.0", N, &["3.0.0", "3.0.3"], &["3.1.0"]);
        has("~3.0.2", N, &["3.0.2", "3.0.9"], &["3.1.0", "3.0.1"]);
        has("3.x", N, &["3.0.0", "3.9.1"], &["4.0.0"]);
        has("3", N, &["3.6.2"], &["2.8.8"]);
        has(">=3 <3.2", N, &["3.0.0", "3.1.9"], &["3.2.0", "2.0.0"]);
        has(">= 8.0.0", N, &["9.1.0"], &["7.32.0"]);
        has(">1.2", N, &["1.3.0"], &["1.2.9"]);
        has("<=1.2", N, &["1.2.9"], &["1.3.0"]);
        has("1.2.3 - 1.4", N, &["1.2.3", "1.4.9"], &["1.5.0", "1.2.2"]);
        has("^2.8.0 || ^3.0.0", N, &["2.8.8", "3.3.3"], &["4.0.0"]);
        has("*", N, &["1.0.0"], &[]);
        has("", N, &["1.0.0"], &[]);
        has("3.0.0-beta.1", N, &["3.0.0-beta.1"], &["3.0.0"]);
        has(
            ">=3.0.0-beta.1 <4",
            N,
            &["3.0.0-beta.2", "3.0.0"],
            &["3.1.0-beta.1"],
        );
        has("^0.2.3", N, &["0.2.9"], &["0.3.0"]);
        has("v3.0.0", N, &["3.0.0"], &["3.0.1"]);
        for bad in [
            "latest",
            "next",
            "file:../x",
            "github:prettier/prettier",
            "npm:prettier@3",
            "workspace:*",
            "3.0.0 || git+https://x",
        ] {
            assert!(Range::parse(bad, N).is_err(), "{bad}");
        }
        assert_eq!(
            Range::parse("3.0.0", N).unwrap().exact().as_deref(),
            Some("3.0.0")
        );
    }

    #[test]
    fn ranges_are_written_back_for_the_installer() {
        let r = |s, d| Range::parse(s, d).unwrap();
        assert_eq!(
            r(">=23,<24", Dialect::Pep440).for_pip().as_deref(),
            Some(">=23,<24")
        );
        assert_eq!(
            r("~=23.1", Dialect::Pep440).for_pip().as_deref(),
            Some(">=23.1,==23.*")
        );
        assert_eq!(
            r("^23.1", Dialect::Poetry).for_pip().as_deref(),
            Some(">=23.1,<24")
        );
        assert_eq!(r("^22 || ^23", Dialect::Poetry).for_pip(), None);
        assert_eq!(
            r("^3.0.0", Dialect::Npm).for_npm().as_deref(),
            Some(">=3.0.0 <4.0.0-0")
        );
        assert_eq!(
            r("~3.0 || 2.8.8", Dialect::Npm).for_npm().as_deref(),
            Some(">=3.0.0 <3.1.0-0 || 2.8.8")
        );
        assert_eq!(r("*", Dialect::Npm).for_npm().as_deref(), Some("*"));
        // What pip reads back is what was understood: `<24` is `<24` (pre-releases of 24 out).
        assert!(!r("^23.1", Dialect::Poetry).contains("24.0.0rc1"));
    }

    #[test]
    fn versions_order_as_their_tools_say() {
        let v = |s| Version::parse(s).unwrap();
        assert!(v("1.0.0a1") < v("1.0.0b1"));
        assert!(v("1.0.0b1") < v("1.0.0rc1"));
        assert!(v("1.0.0rc1") < v("1.0.0"));
        assert!(v("1.0.0") < v("1.0.post1"));
        assert!(v("3.0.0-alpha.1") < v("3.0.0-alpha.beta"));
        assert!(v("3.0.0-beta.2") < v("3.0.0-beta.11"));
        assert!(v("23.12.1") > v("23.1.0"));
        assert_eq!(v("1.2"), v("1.2.0"));
        assert_eq!(v("v3.0.0+sha.1").to_string(), "3.0.0");
        for bad in ["", "x", "1..2", "1.0.0-", "1.0.dev1", "1.2.3.4.5.6.7"] {
            assert!(Version::parse(bad).is_none(), "{bad}");
        }
    }
}

//! What failure triage remembers between checks: the per-test outcomes ci-medic parsed, and how
//! many automatic re-runs it requested per commit and check.
//!
//! Test outcomes: a failing test is recorded when ci-medic analyses a failed check whose
//! reports name it (on the pull request's head commit); a pass is recorded for those same tests
//! when the same check later passes on the same commit (a re-run or another attempt). ci-medic
//! reads no log of a passing check. On the default branch, a failed check's tests are recorded
//! failing (`on_default_branch`), and when the check later passes there, every test recorded
//! failing in it passes at that commit: a test failing between two such passes is flaky.
//!
//! Bounded: at most [`MAX_OUTCOMES`] outcomes are kept in all (the oldest go first), at most
//! [`MAX_TESTS_PER_CHECK`] tests per failed check, and at most [`MAX_RERUN_COUNTERS`] re-run
//! counters (the least recently written go first). It must never hold log text.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{StoreError, decode};
use ci_medic_triage::TestOutcome;

/// Outcomes kept in all, across repositories.
pub const MAX_OUTCOMES: usize = 50_000;
/// Tests recorded per failed check (a suite that fails wholesale names thousands).
pub const MAX_TESTS_PER_CHECK: usize = 200;
/// Outcomes of one test read back for a decision.
pub const MAX_HISTORY_PER_TEST: usize = 50;
/// Re-run counters kept.
pub const MAX_RERUN_COUNTERS: usize = 10_000;

/// One stored outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    repo: String,
    check: String,
    test: String,
    head_sha: String,
    on_default_branch: bool,
    passed: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Counter {
    count: u32,
    at: DateTime<Utc>,
}

/// One re-run counter as [`TriageStore::export_reruns`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RerunCounter {
    pub repo: String,
    pub sha: String,
    pub check: String,
    pub count: u32,
    /// When it was last written.
    pub at: DateTime<Utc>,
}

/// The triage trees.
#[derive(Clone)]
pub struct TriageStore {
    db: sled::Db,
    /// Sequence → record: the order outcomes are pruned in.
    outcomes: sled::Tree,
    /// `repo \0 test \0 seq` → (): a test's history.
    by_test: sled::Tree,
    /// `repo @ sha \0 check \0 seq` → test: what failed in one check on one commit.
    by_check: sled::Tree,
    /// `repo @ sha \0 check` → [`Counter`].
    reruns: sled::Tree,
    max_outcomes: usize,
}

fn seq_key(seq: u64) -> [u8; 8] {
    seq.to_be_bytes()
}

fn test_prefix(repo: &str, test: &str) -> String {
    format!("{repo}\u{0}{test}\u{0}")
}

fn check_prefix(repo: &str, sha: &str, check: &str) -> String {
    format!("{repo}@{sha}\u{0}{check}\u{0}")
}

impl TriageStore {
    pub fn open(store: &super::Store) -> Result<TriageStore, StoreError> {
        let db = store.db().clone();
        Ok(TriageStore {
            outcomes: db.open_tree("triage_outcomes")?,
            by_test: db.open_tree("triage_outcomes_by_test")?,
            by_check: db.open_tree("triage_outcomes_by_check")?,
            reruns: db.open_tree("triage_reruns")?,
            db,
            max_outcomes: MAX_OUTCOMES,
        })
    }

    /// [`Self::open`] keeping at most `max_outcomes` outcomes.
    pub fn with_max_outcomes(mut self, max_outcomes: usize) -> TriageStore {
        self.max_outcomes = max_outcomes;
        self
    }

    fn insert(&self, r: &Record) -> Result<(), StoreError> {
        let seq = self.db.generate_id()?;
        let value = serde_json::to_vec(r).expect("a record serialises");
        self.outcomes.insert(seq_key(seq), value)?;
        let mut k = test_prefix(&r.repo, &r.test).into_bytes();
        k.extend_from_slice(&seq_key(seq));
        self.by_test.insert(k, &[])?;
        let mut k = check_prefix(&r.repo, &r.head_sha, &r.check).into_bytes();
        k.extend_from_slice(&seq_key(seq));
        self.by_check.insert(k, r.test.as_bytes())?;
        Ok(())
    }

    /// Records that `tests` failed in `check` on `head_sha` (once per test and commit: a
    /// redelivered failure is not counted twice).
    pub fn record_failures(
        &self,
        repo: &str,
        check: &str,
        head_sha: &str,
        on_default_branch: bool,
        tests: &[String],
    ) -> Result<usize, StoreError> {
        let mut already = self.failed_in(repo, head_sha, check)?;
        let mut n = 0;
        for test in tests.iter().take(MAX_TESTS_PER_CHECK) {
            // Recorded before, or earlier in this list.
            if already.contains(test) {
                continue;
            }
            already.push(test.clone());
            self.insert(&Record {
                repo: repo.into(),
                check: check.into(),
                test: test.clone(),
                head_sha: head_sha.into(),
                on_default_branch,
                passed: false,
            })?;
            n += 1;
        }
        self.prune()?;
        Ok(n)
    }

    /// The check passed on `head_sha`: every test recorded failing there in it passed now.
    /// Returns how many passes were recorded.
    pub fn record_check_passed(
        &self,
        repo: &str,
        check: &str,
        head_sha: &str,
    ) -> Result<usize, StoreError> {
        let failed = self.failed_in(repo, head_sha, check)?;
        let mut n = 0;
        for test in &failed {
            let passed_already = self
                .history(repo, test)?
                .iter()
                .any(|o| o.passed && o.head_sha == head_sha);
            if passed_already {
                continue;
            }
            self.insert(&Record {
                repo: repo.into(),
                check: check.into(),
                test: test.clone(),
                head_sha: head_sha.into(),
                on_default_branch: false,
                passed: true,
            })?;
            n += 1;
        }
        self.prune()?;
        Ok(n)
    }

    /// `check` passed on `head_sha` of the default branch: the tests recorded failing in
    /// `check` in `repo` (on any commit, most recent first, at most [`MAX_TESTS_PER_CHECK`])
    /// ran there and passed. Once per test and commit. Returns how many were recorded.
    pub fn record_default_branch_pass(
        &self,
        repo: &str,
        check: &str,
        head_sha: &str,
    ) -> Result<usize, StoreError> {
        let mut tests: Vec<String> = Vec::new();
        // Newest first: with more than the bound, the tests failing lately are the ones asked
        // about next.
        for item in self.outcomes.iter().rev() {
            let (k, v) = item?;
            let r: Record = decode(&k, &v)?;
            if r.repo == repo && r.check == check && !r.passed && !tests.contains(&r.test) {
                tests.push(r.test);
                if tests.len() == MAX_TESTS_PER_CHECK {
                    break;
                }
            }
        }
        let mut n = 0;
        for test in tests {
            let recorded = self
                .history(repo, &test)?
                .iter()
                .any(|o| o.passed && o.on_default_branch && o.head_sha == head_sha);
            if recorded {
                continue;
            }
            self.insert(&Record {
                repo: repo.into(),
                check: check.into(),
                test,
                head_sha: head_sha.into(),
                on_default_branch: true,
                passed: true,
            })?;
            n += 1;
        }
        self.prune()?;
        Ok(n)
    }

    /// Every stored outcome, oldest first, as `(repo, check, outcome)` (`migrate
    /// --from-sled`).
    pub fn export_outcomes(&self) -> Result<Vec<(String, String, TestOutcome)>, StoreError> {
        let mut out = Vec::new();
        for item in self.outcomes.iter() {
            let (k, v) = item?;
            let r: Record = decode(&k, &v)?;
            out.push((
                r.repo,
                r.check,
                TestOutcome {
                    test: r.test,
                    head_sha: r.head_sha,
                    on_default_branch: r.on_default_branch,
                    passed: r.passed,
                },
            ));
        }
        Ok(out)
    }

    /// Every re-run counter (`migrate --from-sled`).
    pub fn export_reruns(&self) -> Result<Vec<RerunCounter>, StoreError> {
        let mut out = Vec::new();
        for item in self.reruns.iter() {
            let (k, v) = item?;
            let c: Counter = decode(&k, &v)?;
            let key = String::from_utf8_lossy(&k).into_owned();
            // `repo @ sha \0 check`; a repository name holds no `@`.
            let Some((repo_sha, check)) = key.split_once('\u{0}') else {
                continue;
            };
            let Some((repo, sha)) = repo_sha.split_once('@') else {
                continue;
            };
            out.push(RerunCounter {
                repo: repo.into(),
                sha: sha.into(),
                check: check.into(),
                count: c.count,
                at: c.at,
            });
        }
        Ok(out)
    }

    /// The tests recorded failing in `check` on `head_sha`, each once.
    fn failed_in(
        &self,
        repo: &str,
        head_sha: &str,
        check: &str,
    ) -> Result<Vec<String>, StoreError> {
        let mut out: Vec<String> = Vec::new();
        for item in self
            .by_check
            .scan_prefix(check_prefix(repo, head_sha, check).as_bytes())
        {
            let (_, v) = item?;
            let test = String::from_utf8_lossy(&v).into_owned();
            if !out.contains(&test) {
                out.push(test);
            }
        }
        Ok(out)
    }

    /// The recorded outcomes of `test` in `repo`, oldest first (at most the last
    /// [`MAX_HISTORY_PER_TEST`]).
    pub fn history(&self, repo: &str, test: &str) -> Result<Vec<TestOutcome>, StoreError> {
        let prefix = test_prefix(repo, test);
        let mut out = Vec::new();
        for item in self.by_test.scan_prefix(prefix.as_bytes()).rev() {
            let (k, _) = item?;
            let seq = &k[prefix.len()..];
            if let Some(v) = self.outcomes.get(seq)? {
                let r: Record = decode(&k, &v)?;
                out.push(TestOutcome {
                    test: r.test,
                    head_sha: r.head_sha,
                    on_default_branch: r.on_default_branch,
                    passed: r.passed,
                });
            }
            if out.len() == MAX_HISTORY_PER_TEST {
                break;
            }
        }
        out.reverse();
        Ok(out)
    }

    /// The history of every test in `tests`, for the triage.
    pub fn histories(&self, repo: &str, tests: &[String]) -> Result<Vec<TestOutcome>, StoreError> {
        let mut out = Vec::new();
        for t in tests.iter().take(MAX_TESTS_PER_CHECK) {
            out.extend(self.history(repo, t)?);
        }
        Ok(out)
    }

    /// Drops the oldest outcomes beyond the bound ([`MAX_OUTCOMES`]), with their index entries.
    fn prune(&self) -> Result<(), StoreError> {
        let excess = self.outcomes.len().saturating_sub(self.max_outcomes);
        if excess == 0 {
            return Ok(());
        }
        let oldest: Vec<(sled::IVec, sled::IVec)> = self
            .outcomes
            .iter()
            .take(excess)
            .collect::<Result<_, _>>()?;
        for (seq, v) in oldest {
            let r: Record = decode(&seq, &v)?;
            let mut k = test_prefix(&r.repo, &r.test).into_bytes();
            k.extend_from_slice(&seq);
            self.by_test.remove(k)?;
            let mut k = check_prefix(&r.repo, &r.head_sha, &r.check).into_bytes();
            k.extend_from_slice(&seq);
            self.by_check.remove(k)?;
            self.outcomes.remove(seq)?;
        }
        Ok(())
    }

    fn rerun_key(repo: &str, sha: &str, check: &str) -> String {
        format!("{repo}@{sha}\u{0}{check}")
    }

    /// Automatic re-runs requested so far for `check` on `sha`.
    pub fn reruns(&self, repo: &str, sha: &str, check: &str) -> Result<u32, StoreError> {
        let key = Self::rerun_key(repo, sha, check);
        Ok(match self.reruns.get(key.as_bytes())? {
            Some(v) => decode::<Counter>(key.as_bytes(), &v)?.count,
            None => 0,
        })
    }

    /// Takes one automatic re-run for `check` on `sha` if fewer than `max` were taken, and
    /// flushes before returning: the re-run request that follows must never be repeated past
    /// the bound after a crash. `false`: the bound is reached.
    pub fn take_rerun(
        &self,
        repo: &str,
        sha: &str,
        check: &str,
        max: u32,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let key = Self::rerun_key(repo, sha, check);
        let mut taken = false;
        self.reruns.fetch_and_update(key.as_bytes(), |old| {
            let count = old
                .and_then(|v| serde_json::from_slice::<Counter>(v).ok())
                .map_or(0, |c| c.count);
            taken = count < max;
            let count = if taken { count + 1 } else { count };
            Some(serde_json::to_vec(&Counter { count, at: now }).expect("a counter serialises"))
        })?;
        self.prune_counters()?;
        self.reruns.flush()?;
        Ok(taken)
    }

    /// Drops the least recently written counters beyond [`MAX_RERUN_COUNTERS`].
    fn prune_counters(&self) -> Result<(), StoreError> {
        let excess = self.reruns.len().saturating_sub(MAX_RERUN_COUNTERS);
        if excess == 0 {
            return Ok(());
        }
        let mut all: Vec<(DateTime<Utc>, sled::IVec)> = Vec::new();
        for item in self.reruns.iter() {
            let (k, v) = item?;
            all.push((decode::<Counter>(&k, &v)?.at, k));
        }
        all.sort();
        for (_, k) in all.into_iter().take(excess) {
            self.reruns.remove(k)?;
        }
        Ok(())
    }

    /// Outcomes stored (for tests and figures).
    pub fn outcome_count(&self) -> usize {
        self.outcomes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open() -> (tempfile::TempDir, TriageStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(dir.path()).unwrap();
        (dir, TriageStore::open(&store).unwrap())
    }

    #[test]
    fn failures_then_a_pass_on_the_same_commit_make_a_mixed_history() {
        let (_d, t) = open();
        let tests = vec!["tests/test_api.py::test_login".to_string()];
        assert_eq!(
            t.record_failures("o/r", "test", "abc", false, &tests)
                .unwrap(),
            1
        );
        // A redelivery of the same failure is not a second outcome.
        assert_eq!(
            t.record_failures("o/r", "test", "abc", false, &tests)
                .unwrap(),
            0
        );
        assert_eq!(t.record_check_passed("o/r", "test", "abc").unwrap(), 1);
        assert_eq!(t.record_check_passed("o/r", "test", "abc").unwrap(), 0);
        // Another check passing on the commit says nothing about this test.
        assert_eq!(t.record_check_passed("o/r", "lint", "abc").unwrap(), 0);
        let h = t.history("o/r", &tests[0]).unwrap();
        assert_eq!(
            h.iter().map(|o| o.passed).collect::<Vec<_>>(),
            vec![false, true]
        );
        assert!(
            h.iter()
                .all(|o| o.head_sha == "abc" && !o.on_default_branch)
        );
        // Another repository's test of the same name is another test.
        assert!(t.history("o/other", &tests[0]).unwrap().is_empty());
    }

    #[test]
    fn outcomes_are_bounded_oldest_first() {
        let (_d, t) = open();
        let max = 3 * MAX_TESTS_PER_CHECK;
        let t = t.with_max_outcomes(max);
        let tests: Vec<String> = (0..MAX_TESTS_PER_CHECK + 50)
            .map(|i| format!("t{i}"))
            .collect();
        assert_eq!(
            t.record_failures("o/r", "test", "s0", false, &tests)
                .unwrap(),
            MAX_TESTS_PER_CHECK
        );
        // Fill past the bound with other commits.
        for i in 1..=60 {
            t.record_failures("o/r", "test", &format!("s{i}"), false, &tests)
                .unwrap();
        }
        assert_eq!(t.outcome_count(), max);
        // The first commit's outcomes went first, index entries with them.
        assert!(t.failed_in("o/r", "s0", "test").unwrap().is_empty());
        let h = t.history("o/r", "t0").unwrap();
        assert_eq!(h.len(), 3);
        assert!(h.iter().all(|o| o.head_sha != "s0"));
        assert_eq!(t.by_test.len(), max);
        assert_eq!(t.by_check.len(), max);
    }

    #[test]
    fn automatic_reruns_are_counted_per_commit_and_check() {
        let (_d, t) = open();
        let now = Utc::now();
        assert!(t.take_rerun("o/r", "abc", "test", 1, now).unwrap());
        assert!(!t.take_rerun("o/r", "abc", "test", 1, now).unwrap());
        assert_eq!(t.reruns("o/r", "abc", "test").unwrap(), 1);
        assert!(t.take_rerun("o/r", "abc", "lint", 1, now).unwrap());
        assert!(t.take_rerun("o/r", "def", "test", 1, now).unwrap());
        assert!(!t.take_rerun("o/r", "abc", "build", 0, now).unwrap());
    }
}

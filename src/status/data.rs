//! What the status page shows, read from the store and cut down to what the viewer may see.
//!
//! Reads only; it never writes the store and never computes a figure itself (that is
//! `ci_medic_core::status`). Filtering happens here, before anything reaches a template, so a
//! repository the viewer cannot see never becomes part of a page.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use ci_medic_core::proposal::DdsStatus;
use ci_medic_core::status::ProposalFacts;

use super::auth::Role;
use crate::store::installations::Installation;
use crate::store::proposals::FixState;
use crate::store::runs::FixRun;
use crate::store::{JobRecord, Store};
use ci_medic_core::proposal::{FailedDds, StoredProposal};

/// One proposal as the page lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProposalRow {
    #[serde(flatten)]
    pub facts: ProposalFacts,
    pub pr: Option<u64>,
    pub check: Option<String>,
}

/// Everything the pages draw from, already filtered for one viewer.
pub struct Snapshot {
    pub installations: Vec<Installation>,
    /// Every repository the viewer may see that ci-medic knows of, sorted.
    pub repos: Vec<String>,
    /// Newest first.
    pub proposals: Vec<ProposalRow>,
    /// When each failed check (a failed code_change record) failed.
    pub failures: Vec<DateTime<Utc>>,
    /// Operators only; empty for users.
    pub jobs: Vec<JobRecord>,
}

#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Registry(#[from] crate::store::registry::RegistryError),
}

/// What the proposal registry and the fix runs hold, read through the store interface (on
/// PostgreSQL every replica's proposals).
pub struct Proposals {
    pub fixes: Vec<StoredProposal>,
    pub failed: Vec<FailedDds>,
    pub runs: Vec<FixRun>,
}

impl Proposals {
    pub async fn read(state: &FixState) -> Result<Proposals, DataError> {
        Ok(Proposals {
            fixes: state.registry.list_fixes().await?,
            failed: state.registry.list_failed().await?,
            runs: state.runs.all().await?,
        })
    }
}

/// Cuts `proposals` and the installations down for `role`. Blocking (sled): run it off the
/// async runtime. `installations`: read elsewhere (PostgreSQL) already; `None`, from the sled
/// store.
pub fn snapshot(
    store: &Store,
    role: &Role,
    jobs: Vec<JobRecord>,
    proposals: Proposals,
    installations: Option<Vec<Installation>>,
) -> Result<Snapshot, DataError> {
    let Proposals {
        fixes,
        failed,
        runs,
    } = proposals;

    // A proposal's pull request: the run whose current proposal it is, or whose current
    // proposal descends from it (a next attempt names the failed one as its source).
    let source_of: HashMap<&str, &str> = fixes
        .iter()
        .map(|p| (p.dds.id.as_str(), p.dds.source_dds.as_str()))
        .collect();
    let mut link: HashMap<String, (u64, String)> = HashMap::new();
    for run in &runs {
        let Some(mut id) = run.fix_id() else { continue };
        // Bounded walk: a chain is at most `fix.max_attempts` long; the bound guards a cycle
        // a corrupt record could make.
        for _ in 0..64 {
            link.entry(id.clone())
                .or_insert_with(|| (run.pr_number, run.check_name.clone()));
            match source_of.get(id.as_str()) {
                Some(src) if source_of.contains_key(src) => id = (*src).to_string(),
                _ => break,
            }
        }
    }

    let mut proposals: Vec<ProposalRow> = fixes
        .iter()
        .filter(|p| role.can_see(&p.dds.project))
        .map(|p| {
            let l = link.get(&p.dds.id);
            ProposalRow {
                facts: ProposalFacts::from_stored(p),
                pr: l.map(|(pr, _)| *pr),
                check: l.map(|(_, c)| c.clone()),
            }
        })
        .collect();
    proposals.sort_by(|a, b| {
        b.facts
            .proposed_at
            .cmp(&a.facts.proposed_at)
            .then_with(|| b.facts.id.cmp(&a.facts.id))
    });

    let failures = failed
        .into_iter()
        .filter(|f| role.can_see(&f.project))
        .map(|f| f.failed_at)
        .collect();

    let installations = match installations {
        Some(i) => i,
        None => store.installations()?.all()?,
    };
    let installations: Vec<Installation> = installations
        .into_iter()
        .filter_map(|mut i| {
            i.repositories.retain(|r| role.can_see(r));
            (role.is_operator() || !i.repositories.is_empty()).then_some(i)
        })
        .collect();

    let mut repos: BTreeSet<String> = installations
        .iter()
        .flat_map(|i| i.repositories.iter().cloned())
        .collect();
    repos.extend(proposals.iter().map(|p| p.facts.repo.clone()));
    repos.extend(
        runs.iter()
            .filter(|r| role.can_see(&r.repo))
            .map(|r| r.repo.clone()),
    );

    let jobs = if role.is_operator() { jobs } else { Vec::new() };
    Ok(Snapshot {
        installations,
        repos: repos.into_iter().collect(),
        proposals,
        failures,
        jobs,
    })
}

/// The proposals in `state` (`None`: all), newest first.
pub fn with_status(rows: &[ProposalRow], state: Option<DdsStatus>) -> Vec<&ProposalRow> {
    rows.iter()
        .filter(|r| state.is_none_or(|s| r.facts.status == s))
        .collect()
}

/// Decided proposals (executed, failed, rejected), most recently decided first.
pub fn recent_verdicts(rows: &[ProposalRow], n: usize) -> Vec<&ProposalRow> {
    let mut v: Vec<&ProposalRow> = rows
        .iter()
        .filter(|r| ci_medic_core::proposal::is_final(r.facts.status))
        .collect();
    v.sort_by(|a, b| {
        b.facts
            .decided_at
            .unwrap_or(b.facts.proposed_at)
            .cmp(&a.facts.decided_at.unwrap_or(a.facts.proposed_at))
    });
    v.truncate(n);
    v
}

/// Job counts by state name.
pub fn job_counts(jobs: &[JobRecord]) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::from([("queued", 0), ("running", 0), ("parked", 0)]);
    for j in jobs {
        *m.entry(state_name(j.state)).or_default() += 1;
    }
    m
}

pub fn state_name(s: crate::store::JobState) -> &'static str {
    match s {
        crate::store::JobState::Queued => "queued",
        crate::store::JobState::Running => "running",
        crate::store::JobState::Parked => "parked",
    }
}

//! GitHub Actions workflow runs as the REST API shows them: runs with numbered attempts, jobs
//! with steps, and the two re-run endpoints (`POST …/actions/runs/{run_id}/rerun-failed-jobs`,
//! `POST …/actions/jobs/{job_id}/rerun`, both `201 Created` with `{}`).
//!
//! A job is a check run (GitHub gives both the same id), so its name, status, conclusion, times
//! and commit live in the check run; this module adds what only Actions knows: the run and
//! attempt it belongs to, and its steps. A `github-actions` check run added without a run (the
//! older [`crate::FakeGitHub::add_check_run`]) is a run of its own with one job, one attempt and
//! no steps, whose id is the job's plus [`RUN_ID_OFFSET`]; re-running it makes that run real.
//!
//! A re-run makes attempt `n + 1` holding a new, `queued` job (new id, new check run on the same
//! commit) for each job re-run; tests then finish it with
//! [`crate::FakeGitHub::finish_job`], which delivers the `check_run` `completed` webhook as
//! GitHub would. Jobs a partial re-run leaves alone are not copied into the new attempt, and
//! dependent jobs are not re-run with the failed ones (neither is modelled).
//!
//! Pure functions of the state: no I/O here, apart from `finish_job`'s delivery, which never
//! holds the state lock.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::state::{CheckRun, JobLog, RUN_ID_OFFSET, State, StoredDelivery};
use crate::{Delivery, FakeError, FakeGitHub};

/// The Actions side of the model.
#[derive(Debug, Default)]
pub struct Actions {
    runs: BTreeMap<u64, WorkflowRun>,
    /// Every re-run request answered with 201, in order.
    reruns: Vec<RerunRequest>,
}

#[derive(Debug, Clone)]
struct WorkflowRun {
    repo: String,
    workflow_name: String,
    /// Attempt 1 first; each holds its jobs' ids.
    attempts: Vec<Vec<u64>>,
    /// Job id → its steps (a queued job has none).
    steps: BTreeMap<u64, Vec<Step>>,
}

/// One step of a job, as `steps[]` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub name: String,
    /// `success`, `failure`, `skipped`, `cancelled`.
    pub conclusion: String,
}

/// A job to add with [`FakeGitHub::add_workflow_run`] or [`FakeGitHub::add_run_attempt`].
#[derive(Debug, Clone, Copy)]
pub struct NewJob<'a> {
    /// The job's name, which is also its check run's.
    pub name: &'a str,
    pub conclusion: &'a str,
    /// `(step name, conclusion)`, numbered from 1 in order.
    pub steps: &'a [(&'a str, &'a str)],
    pub log: &'a [u8],
}

/// What [`FakeGitHub::add_workflow_run`] made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRun {
    pub run_id: u64,
    /// In the order given; each is also the job's check run id.
    pub job_ids: Vec<u64>,
}

/// Which re-run endpoint was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RerunKind {
    /// `POST /repos/{o}/{r}/actions/runs/{run_id}/rerun-failed-jobs`.
    FailedJobs,
    /// `POST /repos/{o}/{r}/actions/jobs/{job_id}/rerun`.
    Job,
}

/// A re-run the fake accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RerunRequest {
    pub repo: String,
    pub kind: RerunKind,
    pub run_id: u64,
    /// The job named in the URL (`Job` only).
    pub job_id: Option<u64>,
    /// The attempt the re-run made.
    pub attempt: u32,
    /// The new jobs, queued.
    pub new_job_ids: Vec<u64>,
    pub enable_debug_logging: bool,
}

/// A refusal, as GitHub's basic-error: status and message.
pub type Refusal = (u16, &'static str);

fn conclusion_failed(c: Option<&str>) -> bool {
    matches!(c, Some("failure" | "cancelled" | "timed_out"))
}

impl Actions {
    /// The run and attempt (1-based) holding `job_id`, if it was added as part of a run.
    fn locate(&self, job_id: u64) -> Option<(u64, u32)> {
        self.runs.iter().find_map(|(id, run)| {
            run.attempts
                .iter()
                .position(|jobs| jobs.contains(&job_id))
                .map(|i| (*id, attempt_number(i)))
        })
    }
}

fn attempt_number(index: usize) -> u32 {
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}

/// A `github-actions` check run of `repo`, by id.
fn actions_check<'a>(st: &'a State, repo: &str, id: u64) -> Option<&'a CheckRun> {
    st.check_runs
        .get(&id)
        .filter(|c| c.repo == repo && c.app_slug == "github-actions")
}

/// `GET /repos/{o}/{r}/actions/jobs/{job_id}`: the `job` object, with its run, attempt and
/// steps. Jobs outside any run are answered by the older one-job model.
pub fn job_json(st: &State, repo: &str, job_id: u64) -> Option<Value> {
    let Some((run_id, attempt)) = st.actions.locate(job_id) else {
        return st.job_json(repo, job_id);
    };
    let run = st.actions.runs.get(&run_id).filter(|r| r.repo == repo)?;
    let mut v = st.job_json(repo, job_id)?;
    let steps: Vec<Value> = run
        .steps
        .get(&job_id)
        .map(|steps| {
            let c = st.check_runs.get(&job_id);
            let started = c.map(|c| c.started_at.clone());
            let completed = c.and_then(|c| c.completed_at.clone());
            steps
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    json!({
                        "name": s.name,
                        "status": "completed",
                        "conclusion": s.conclusion,
                        "number": i + 1,
                        "started_at": started,
                        "completed_at": completed,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let a = format!("{}/repos/{repo}", st.urls.api);
    v["run_id"] = json!(run_id);
    v["run_url"] = json!(format!("{a}/actions/runs/{run_id}"));
    v["run_attempt"] = json!(attempt);
    v["html_url"] = json!(format!(
        "{}/{repo}/actions/runs/{run_id}/job/{job_id}",
        st.urls.web
    ));
    v["workflow_name"] = json!(run.workflow_name);
    v["steps"] = Value::Array(steps);
    if v["status"] != "completed" {
        // No runner has picked a queued job up yet.
        for k in [
            "runner_id",
            "runner_name",
            "runner_group_id",
            "runner_group_name",
        ] {
            v[k] = Value::Null;
        }
    }
    Some(v)
}

/// `GET /repos/{o}/{r}/actions/runs/{run_id}/jobs?filter=latest|all`: the latest attempt's
/// jobs, or every attempt's (oldest first). `None`: no such run.
pub fn run_jobs(st: &State, repo: &str, run_id: u64, filter: Option<&str>) -> Option<Vec<Value>> {
    let ids = match st.actions.runs.get(&run_id) {
        Some(run) if run.repo == repo => match filter {
            Some("all") => run.attempts.iter().flatten().copied().collect(),
            _ => run.attempts.last().cloned().unwrap_or_default(),
        },
        Some(_) => return None,
        None => vec![run_id.checked_sub(RUN_ID_OFFSET)?],
    };
    let jobs: Vec<Value> = ids
        .into_iter()
        .filter_map(|id| job_json(st, repo, id))
        .collect();
    (!jobs.is_empty()).then_some(jobs)
}

/// `GET /repos/{o}/{r}/actions/runs/{run_id}/attempts/{n}/jobs`. `None`: no such run or
/// attempt.
pub fn attempt_jobs(st: &State, repo: &str, run_id: u64, attempt: u32) -> Option<Vec<Value>> {
    let ids = match st.actions.runs.get(&run_id) {
        Some(run) if run.repo == repo => run
            .attempts
            .get(usize::try_from(attempt).ok()?.checked_sub(1)?)?
            .clone(),
        Some(_) => return None,
        None if attempt == 1 => vec![run_id.checked_sub(RUN_ID_OFFSET)?],
        None => return None,
    };
    Some(
        ids.into_iter()
            .filter_map(|id| job_json(st, repo, id))
            .collect(),
    )
}

/// Makes the one-job run of a check run added without a run real, so it can get attempts.
fn adopt(st: &mut State, repo: &str, run_id: u64) -> Option<()> {
    if st.actions.runs.contains_key(&run_id) {
        return Some(());
    }
    let job = run_id.checked_sub(RUN_ID_OFFSET)?;
    actions_check(st, repo, job)?;
    st.actions.runs.insert(
        run_id,
        WorkflowRun {
            repo: repo.to_string(),
            workflow_name: "CI".into(),
            attempts: vec![vec![job]],
            steps: BTreeMap::new(),
        },
    );
    Some(())
}

/// A new attempt of `run_id` re-running `jobs` (queued, new ids): the 201 of both endpoints.
fn new_attempt(st: &mut State, run_id: u64, jobs: &[u64]) -> (u32, Vec<u64>) {
    let mut new_ids = Vec::new();
    for old in jobs {
        let Some(mut check) = st.check_runs.get(old).cloned() else {
            continue;
        };
        let id = st.next_id();
        let now = st.now_str();
        check.id = id;
        check.status = "queued".into();
        check.conclusion = None;
        check.started_at = now;
        check.completed_at = None;
        check.annotations.clear();
        check.title = None;
        check.summary = None;
        check.text = None;
        st.check_runs.insert(id, check);
        new_ids.push(id);
    }
    let run = st
        .actions
        .runs
        .get_mut(&run_id)
        .expect("the run was adopted before its attempt");
    run.attempts.push(new_ids.clone());
    (attempt_number(run.attempts.len() - 1), new_ids)
}

/// Whether every job of the run's latest attempt has completed (GitHub refuses to re-run a run
/// still in progress) and its logs are still kept.
fn rerunnable(st: &State, run_id: u64) -> Result<Vec<u64>, Refusal> {
    let run = st.actions.runs.get(&run_id).ok_or((404, "Not Found"))?;
    let latest = run.attempts.last().cloned().unwrap_or_default();
    if latest.iter().any(|id| {
        st.check_runs
            .get(id)
            .is_none_or(|c| c.status != "completed")
    }) {
        return Err((
            403,
            "This workflow run is not completed; it cannot be re-run yet.",
        ));
    }
    if latest
        .iter()
        .any(|id| st.job_logs.get(id).is_some_and(|l| l.expired))
    {
        return Err((
            403,
            "Unable to re-run this workflow run because it was created over a month ago",
        ));
    }
    Ok(latest)
}

fn debug_logging(body: &Value) -> bool {
    body.get("enable_debug_logging")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// `POST /repos/{o}/{r}/actions/runs/{run_id}/rerun-failed-jobs`.
pub fn rerun_failed_jobs(
    st: &mut State,
    repo: &str,
    run_id: u64,
    body: &Value,
) -> Result<Value, Refusal> {
    adopt(st, repo, run_id);
    if st.actions.runs.get(&run_id).is_none_or(|r| r.repo != repo) {
        return Err((404, "Not Found"));
    }
    let latest = rerunnable(st, run_id)?;
    let failed: Vec<u64> = latest
        .into_iter()
        .filter(|id| conclusion_failed(st.check_runs.get(id).and_then(|c| c.conclusion.as_deref())))
        .collect();
    if failed.is_empty() {
        return Err((403, "This workflow run has no failed jobs to re-run."));
    }
    let (attempt, new_job_ids) = new_attempt(st, run_id, &failed);
    st.actions.reruns.push(RerunRequest {
        repo: repo.to_string(),
        kind: RerunKind::FailedJobs,
        run_id,
        job_id: None,
        attempt,
        new_job_ids,
        enable_debug_logging: debug_logging(body),
    });
    Ok(json!({}))
}

/// `POST /repos/{o}/{r}/actions/jobs/{job_id}/rerun`.
pub fn rerun_job(st: &mut State, repo: &str, job_id: u64, body: &Value) -> Result<Value, Refusal> {
    actions_check(st, repo, job_id).ok_or((404, "Not Found"))?;
    let run_id = match st.actions.locate(job_id) {
        Some((run, _)) => run,
        None => {
            let run = job_id + RUN_ID_OFFSET;
            adopt(st, repo, run).ok_or((404, "Not Found"))?;
            run
        }
    };
    rerunnable(st, run_id)?;
    let (attempt, new_job_ids) = new_attempt(st, run_id, &[job_id]);
    st.actions.reruns.push(RerunRequest {
        repo: repo.to_string(),
        kind: RerunKind::Job,
        run_id,
        job_id: Some(job_id),
        attempt,
        new_job_ids,
        enable_debug_logging: debug_logging(body),
    });
    Ok(json!({}))
}

/// Records a completed job (check run, log, steps) under `run_id`'s attempt `attempt_index`.
fn add_job(st: &mut State, repo: &str, head_sha: &str, suite: u64, job: &NewJob<'_>) -> u64 {
    let id = st.next_id();
    let now = st.now_str();
    st.check_runs.insert(
        id,
        CheckRun {
            id,
            repo: repo.into(),
            head_sha: head_sha.into(),
            name: job.name.into(),
            app_id: 15368,
            app_slug: "github-actions".into(),
            status: "completed".into(),
            conclusion: Some(job.conclusion.into()),
            started_at: now.clone(),
            completed_at: Some(now),
            external_id: String::new(),
            details_url: None,
            title: None,
            summary: None,
            text: None,
            annotations: vec![],
            check_suite_id: suite,
        },
    );
    st.job_logs.insert(
        id,
        JobLog {
            repo: repo.into(),
            bytes: job.log.to_vec(),
            expired: false,
        },
    );
    id
}

fn steps_of(job: &NewJob<'_>) -> Vec<Step> {
    job.steps
        .iter()
        .map(|(name, conclusion)| Step {
            name: (*name).into(),
            conclusion: (*conclusion).into(),
        })
        .collect()
}

impl FakeGitHub {
    /// A completed workflow run of `workflow_name` on `head_sha`, attempt 1 holding `jobs`
    /// (each a completed `github-actions` check run with its log and steps). Deliver a job's
    /// failure with [`Self::check_run_completed_payload`].
    pub fn add_workflow_run(
        &self,
        repo: &str,
        head_sha: &str,
        workflow_name: &str,
        jobs: &[NewJob<'_>],
    ) -> Result<NewRun, FakeError> {
        let mut st = self.st();
        if !st.repos.contains_key(repo) {
            return Err(FakeError::UnknownRepo(repo.into()));
        }
        let run_id = st.next_id() + RUN_ID_OFFSET;
        let suite = run_id + 5_000_000;
        let mut ids = Vec::new();
        let mut steps = BTreeMap::new();
        for job in jobs {
            let id = add_job(&mut st, repo, head_sha, suite, job);
            steps.insert(id, steps_of(job));
            ids.push(id);
        }
        st.actions.runs.insert(
            run_id,
            WorkflowRun {
                repo: repo.into(),
                workflow_name: workflow_name.into(),
                attempts: vec![ids.clone()],
                steps,
            },
        );
        Ok(NewRun {
            run_id,
            job_ids: ids,
        })
    }

    /// A further completed attempt of `run_id` holding `jobs` (as if someone re-ran it on
    /// GitHub's page). Returns the new jobs' ids.
    pub fn add_run_attempt(&self, run_id: u64, jobs: &[NewJob<'_>]) -> Result<Vec<u64>, FakeError> {
        let mut st = self.st();
        let Some(run) = st.actions.runs.get(&run_id).cloned() else {
            return Err(FakeError::UnknownRev(format!("workflow run {run_id}")));
        };
        let first = run.attempts.first().and_then(|a| a.first()).copied();
        let Some((head_sha, suite)) = first
            .and_then(|id| st.check_runs.get(&id))
            .map(|c| (c.head_sha.clone(), c.check_suite_id))
        else {
            return Err(FakeError::UnknownRev(format!("workflow run {run_id}")));
        };
        let mut ids = Vec::new();
        for job in jobs {
            let id = add_job(&mut st, &run.repo, &head_sha, suite, job);
            if let Some(r) = st.actions.runs.get_mut(&run_id) {
                r.steps.insert(id, steps_of(job));
            }
            ids.push(id);
        }
        if let Some(r) = st.actions.runs.get_mut(&run_id) {
            r.attempts.push(ids.clone());
        }
        Ok(ids)
    }

    /// Every re-run the API accepted, oldest first.
    pub fn rerun_requests(&self) -> Vec<RerunRequest> {
        self.st().actions.reruns.clone()
    }

    /// The Actions run id of a job (for a check run added without a run: its one-job run).
    pub fn run_id_of_job(&self, job_id: u64) -> u64 {
        self.st()
            .actions
            .locate(job_id)
            .map_or(job_id + RUN_ID_OFFSET, |(run, _)| run)
    }

    /// Finishes a queued job (one a re-run made): its check run completes with `conclusion`,
    /// its log and steps are stored, and the `check_run` `completed` webhook is delivered when
    /// a webhook is set (the returned delivery; `None` without one).
    pub async fn finish_job(
        &self,
        job_id: u64,
        conclusion: &str,
        steps: &[(&str, &str)],
        log: &[u8],
    ) -> Result<Option<Delivery>, FakeError> {
        let (id, body) = {
            let mut st = self.st();
            let now = st.now_str();
            let Some(check) = st.check_runs.get_mut(&job_id) else {
                return Err(FakeError::UnknownRev(format!("job {job_id}")));
            };
            check.status = "completed".into();
            check.conclusion = Some(conclusion.into());
            check.completed_at = Some(now);
            let repo = check.repo.clone();
            st.job_logs.insert(
                job_id,
                JobLog {
                    repo,
                    bytes: log.to_vec(),
                    expired: false,
                },
            );
            if let Some((run, _)) = st.actions.locate(job_id) {
                let steps = steps_of(&NewJob {
                    name: "",
                    conclusion,
                    steps,
                    log,
                });
                if let Some(r) = st.actions.runs.get_mut(&run) {
                    r.steps.insert(job_id, steps);
                }
            }
            if st.webhook.is_none() {
                return Ok(None);
            }
            let Some(payload) = crate::webhook::check_run_completed(&st, job_id) else {
                return Err(FakeError::UnknownRev(format!("job {job_id}")));
            };
            let body = serde_json::to_vec(&payload).unwrap_or_default();
            let id = crate::webhook::delivery_id(&mut st);
            st.deliveries.insert(
                id.clone(),
                StoredDelivery {
                    event: "check_run".into(),
                    body: body.clone(),
                },
            );
            st.delivery_order.push(id.clone());
            (id, body)
        };
        self.send(&id, "check_run", &body).await.map(Some)
    }
}

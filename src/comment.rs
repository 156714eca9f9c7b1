//! Stage: the proposal comment and the check-run annotations, published on GitHub.
//!
//! Rendering is pure and lives in `ci_medic_core::comment` (re-exported here); this module
//! only finds, creates and edits. At most one ci-medic comment exists per pull request and
//! check name: it is found again by its stored id or its hidden marker and edited in place, so
//! a retried job, a redelivered webhook or a second failing push never adds a comment.
//!
//! It must never post a body that was not rendered by `render_comment` or a `*_reply` builder
//! (those redact secrets and neutralise mentions), and never create a comment after a create
//! whose outcome is unknown without first looking for it by marker.

pub use ci_medic_core::comment::*;

use ci_medic_parser::BugReport;

use crate::github::{
    CheckConclusion, CheckRunOutputRequest, CheckStatus, CreateCheckRun, GitHubApi, GitHubError,
    InstallationId, IssueComment, NewAnnotation, RepoRef, UpdateCheckRun,
};

/// Name of the check run that carries ci-medic's annotations.
pub const CHECK_RUN_NAME: &str = "ci-medic";

/// A comment ci-medic may take as its own: written by a bot, and not through an App other than
/// ours (`app_id`). The marker alone proves nothing: a workflow (`github-actions[bot]`) or a
/// second install of ci-medic can write the same one, and editing theirs would overwrite their
/// comment, or fail with a 403 that parks the job.
pub(crate) fn is_ours(c: &IssueComment, app_id: u64) -> bool {
    let by_bot = c.user.as_ref().and_then(|u| u.kind.as_deref()) == Some("Bot");
    let other_app = c
        .performed_via_github_app
        .as_ref()
        .and_then(|a| a.id)
        .is_some_and(|id| id != app_id);
    by_bot && !other_app
}

/// Edits ci-medic's comment for `check_name` on the pull request, or creates it.
///
/// `known_id` is the id stored from a previous call. Without it (or when that comment was
/// deleted) the pull request's comments are searched for a bot comment carrying the marker and
/// made through our App (`app_id`), which also recovers from a create whose answer was lost.
#[allow(clippy::too_many_arguments)]
pub async fn upsert_comment(
    gh: &dyn GitHubApi,
    inst: InstallationId,
    repo: &RepoRef,
    pr: u64,
    check_name: &str,
    app_id: u64,
    known_id: Option<u64>,
    body: &str,
) -> Result<IssueComment, GitHubError> {
    if let Some(id) = known_id {
        match gh.update_issue_comment(inst, repo, id, body).await {
            Ok(c) => return Ok(c),
            Err(GitHubError::NotFound) => {}
            Err(e) => return Err(e),
        }
    }
    let existing = gh.list_issue_comments(inst, repo, pr).await?;
    let ours = existing.iter().find(|c| {
        is_ours(c, app_id) && c.body.as_deref().and_then(find_marker).as_deref() == Some(check_name)
    });
    match ours {
        Some(c) => gh.update_issue_comment(inst, repo, c.id, body).await,
        None => gh.create_issue_comment(inst, repo, pr, body).await,
    }
}

fn api_annotation(a: &Annotation) -> NewAnnotation {
    NewAnnotation {
        path: a.path.clone(),
        start_line: u64::from(a.start_line),
        end_line: u64::from(a.end_line),
        start_column: a.start_column.map(u64::from),
        end_column: a.end_column.map(u64::from),
        annotation_level: a.annotation_level,
        message: a.message.clone(),
        title: Some(a.title.clone()),
        raw_details: None,
    }
}

/// Publishes (or refreshes) the `ci-medic` check run on `head_sha` with one annotation per
/// report, at most 50 per request as the API requires. Returns the check run id.
///
/// When `existing` is set the run is updated instead of created; annotations are sent only
/// when the run is new, since the API appends them.
#[allow(clippy::too_many_arguments)]
pub async fn publish_check_run(
    gh: &dyn GitHubApi,
    inst: InstallationId,
    repo: &RepoRef,
    head_sha: &str,
    external_id: &str,
    existing: Option<u64>,
    view: &CommentView,
    reports: &[BugReport],
    comment_url: Option<&str>,
) -> Result<u64, GitHubError> {
    publish_check_run_with(
        gh,
        inst,
        repo,
        head_sha,
        external_id,
        existing,
        view,
        reports,
        comment_url,
        true,
    )
    .await
}

/// [`publish_check_run`]; without `existing`, `look_first: false` creates the run without
/// looking for one with the same external id first, for a caller that knows it never asked
/// for one (its intent is recorded before the request, `FixRun::creations`).
#[allow(clippy::too_many_arguments)]
pub async fn publish_check_run_with(
    gh: &dyn GitHubApi,
    inst: InstallationId,
    repo: &RepoRef,
    head_sha: &str,
    external_id: &str,
    existing: Option<u64>,
    view: &CommentView,
    reports: &[BugReport],
    comment_url: Option<&str>,
    look_first: bool,
) -> Result<u64, GitHubError> {
    let out = check_run_output(view, comment_url);
    let output = |annotations: Vec<NewAnnotation>| CheckRunOutputRequest {
        title: out.title.clone(),
        summary: out.summary.clone(),
        text: out.text.clone(),
        annotations,
    };
    let refresh = |id: u64| async move {
        gh.update_check_run(
            inst,
            repo,
            id,
            &UpdateCheckRun {
                output: Some(output(Vec::new())),
                ..Default::default()
            },
        )
        .await
    };
    let (id, held) = if let Some(id) = existing {
        refresh(id).await?;
        // All of them went with the creation unless there were more than one request holds.
        let held = if reports.len() > ANNOTATIONS_PER_REQUEST {
            gh.get_check_run(inst, repo, id)
                .await?
                .output
                .annotations_count
        } else {
            reports.len() as u64
        };
        (id, held)
    } else if let Some(found) = match look_first {
        // A create whose answer was lost may have landed: find it by its external id first,
        // among every run of the name (another check failing on this commit has a newer one).
        true => gh
            .list_all_check_runs_for_ref(inst, repo, head_sha, Some(CHECK_RUN_NAME))
            .await?
            .into_iter()
            .find(|r| r.external_id.as_deref() == Some(external_id)),
        false => None,
    } {
        refresh(found.id).await?;
        (found.id, found.output.annotations_count)
    } else {
        let first: Vec<NewAnnotation> = reports
            .iter()
            .take(ANNOTATIONS_PER_REQUEST)
            .map(|r| api_annotation(&annotation(r)))
            .collect();
        let held = first.len() as u64;
        let run = gh
            .create_check_run(
                inst,
                repo,
                &CreateCheckRun {
                    name: CHECK_RUN_NAME.to_string(),
                    head_sha: head_sha.to_string(),
                    status: Some(CheckStatus::Completed),
                    conclusion: Some(CheckConclusion::Neutral),
                    external_id: Some(external_id.to_string()),
                    details_url: comment_url.map(str::to_string),
                    started_at: None,
                    completed_at: Some(
                        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    ),
                    output: Some(output(first)),
                },
            )
            .await?;
        (run.id, held)
    };
    // GitHub appends every batch, and batches go out in report order, so the count it holds
    // says which are still missing: a later batch that failed is sent by the retried job,
    // and none is sent twice.
    let missing: Vec<&BugReport> = reports.iter().skip(held as usize).collect();
    for batch in missing.chunks(ANNOTATIONS_PER_REQUEST) {
        let annotations = batch
            .iter()
            .map(|r| api_annotation(&annotation(r)))
            .collect();
        gh.update_check_run(
            inst,
            repo,
            id,
            &UpdateCheckRun {
                output: Some(output(annotations)),
                ..Default::default()
            },
        )
        .await?;
    }
    Ok(id)
}

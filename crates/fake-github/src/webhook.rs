//! GitHub → app webhook simulation: payload builders with the real field names (built in code, so
//! `ci-medic demo` needs no fixture files), HMAC signing, and delivery with GitHub's headers.
//!
//! Builders are pure functions of the model; only `send` does network I/O, and it never holds
//! the state lock.

use hmac::{Hmac, Mac};
use serde_json::{Value, json};

use crate::json as j;
use crate::state::State;

/// `sha256=` + hex HMAC-SHA256 of the body, the `X-Hub-Signature-256` value.
pub fn signature_256(secret: &str, body: &[u8]) -> String {
    let mut mac =
        Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Legacy `X-Hub-Signature` (HMAC-SHA1), still sent by GitHub alongside the SHA-256 one.
pub fn signature_1(secret: &str, body: &[u8]) -> String {
    let mut mac =
        Hmac::<sha1::Sha1>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(body);
    format!("sha1={}", hex::encode(mac.finalize().into_bytes()))
}

/// A GUID-shaped delivery id (8-4-4-4-12 hex).
pub fn delivery_id(st: &mut State) -> String {
    let t = st.fresh_token("");
    format!(
        "{}-{}-{}-{}-{}",
        &t[0..8],
        &t[8..12],
        &t[12..16],
        &t[16..20],
        &t[20..32]
    )
}

fn installation(st: &State, repo: &str) -> Value {
    let id = st.repos.get(repo).map(|r| r.installation_id).unwrap_or(1);
    json!({"id": id, "node_id": j::node_id("Installation", id)})
}

/// `check_run` / `completed` for a stored check run.
pub fn check_run_completed(st: &State, check_run_id: u64) -> Option<Value> {
    let c = st.check_runs.get(&check_run_id)?;
    let mut cr = st.check_run_json(c);
    let a = format!("{}/repos/{}", st.urls.api, c.repo);
    let head_branch = st.repos.get(&c.repo).and_then(|r| {
        r.refs
            .iter()
            .find(|(_, s)| **s == c.head_sha)
            .map(|(n, _)| n.trim_start_matches("refs/heads/").to_string())
    });
    let before = st
        .store
        .commit(&c.head_sha)
        .and_then(|x| x.parents.first().cloned())
        .unwrap_or_else(|| "0".repeat(40));
    cr["check_suite"] = json!({
        "id": c.check_suite_id,
        "node_id": j::node_id("CheckSuite", c.check_suite_id),
        "head_branch": head_branch,
        "head_sha": c.head_sha,
        "status": c.status,
        "conclusion": c.conclusion,
        "url": format!("{a}/check-suites/{}", c.check_suite_id),
        "before": before,
        "after": c.head_sha,
        "pull_requests": cr["pull_requests"].clone(),
        "app": cr["app"].clone(),
        "created_at": c.started_at,
        "updated_at": c.completed_at.clone().unwrap_or_else(|| c.started_at.clone()),
    });
    Some(json!({
        "action": "completed",
        "check_run": cr,
        "repository": st.repo_json(&c.repo),
        "sender": j::user(&st.urls, &format!("{}[bot]", c.app_slug)),
        "installation": installation(st, &c.repo),
    }))
}

/// `issue_comment` / `created` for a stored comment on a pull request.
pub fn issue_comment_created(st: &State, comment_id: u64) -> Option<Value> {
    let c = st.comments.get(&comment_id)?;
    let p = st.pulls.get(&(c.repo.clone(), c.issue_number))?;
    let a = format!("{}/repos/{}", st.urls.api, c.repo);
    let n = p.number;
    let html = format!("{}/{}/pull/{n}", st.urls.web, c.repo);
    let comments = st
        .comments
        .values()
        .filter(|x| x.repo == c.repo && x.issue_number == n)
        .count();
    let issue = json!({
        "url": format!("{a}/issues/{n}"),
        "repository_url": a,
        "labels_url": format!("{a}/issues/{n}/labels{{/name}}"),
        "comments_url": format!("{a}/issues/{n}/comments"),
        "events_url": format!("{a}/issues/{n}/events"),
        "html_url": html,
        "id": p.id,
        "node_id": j::node_id("PullRequest", p.id),
        "number": n,
        "title": p.title,
        "user": j::user(&st.urls, &p.author),
        "labels": [],
        "state": p.state,
        "locked": false,
        "assignee": null,
        "assignees": [],
        "milestone": null,
        "comments": comments,
        "created_at": p.created_at,
        "updated_at": c.updated_at,
        "closed_at": null,
        "author_association": st.author_association(&p.repo, &p.author),
        "active_lock_reason": null,
        "draft": false,
        "pull_request": {
            "url": format!("{a}/pulls/{n}"),
            "html_url": html,
            "diff_url": format!("{html}.diff"),
            "patch_url": format!("{html}.patch"),
            "merged_at": null
        },
        "body": p.body,
        "reactions": j::reaction_rollup(&format!("{a}/issues/{n}/reactions"), &[]),
        "timeline_url": format!("{a}/issues/{n}/timeline"),
        "performed_via_github_app": null,
        "state_reason": null,
    });
    Some(json!({
        "action": "created",
        "issue": issue,
        "comment": st.comment_json(c),
        "repository": st.repo_json(&c.repo),
        "sender": j::user(&st.urls, &c.user),
        "installation": installation(st, &c.repo),
    }))
}

/// `pull_request` / `synchronize` for a PR whose head moved from `before` to its current head.
pub fn pull_request_synchronize(
    st: &State,
    repo: &str,
    number: u64,
    before: &str,
) -> Option<Value> {
    let p = st.pulls.get(&(repo.to_string(), number))?;
    let pr = st.pull_json(p, true);
    let after = pr["head"]["sha"].clone();
    Some(json!({
        "action": "synchronize",
        "number": number,
        "before": before,
        "after": after,
        "pull_request": pr,
        "repository": st.repo_json(repo),
        "sender": j::user(&st.urls, &p.author),
        "installation": installation(st, repo),
    }))
}

/// `pull_request` `closed` / `reopened`: GitHub's shape, without `before`/`after`.
pub fn pull_request_state(st: &State, repo: &str, number: u64, action: &str) -> Option<Value> {
    let p = st.pulls.get(&(repo.to_string(), number))?;
    Some(json!({
        "action": action,
        "number": number,
        "pull_request": st.pull_json(p, true),
        "repository": st.repo_json(repo),
        "sender": j::user(&st.urls, &p.author),
        "installation": installation(st, repo),
    }))
}

/// POSTs one delivery; returns the app's HTTP status.
pub async fn send(
    http: &reqwest::Client,
    url: &str,
    secret: &str,
    app_id: u64,
    event: &str,
    id: &str,
    body: &[u8],
) -> Result<u16, reqwest::Error> {
    let resp = http
        .post(url)
        .header("content-type", "application/json")
        .header("user-agent", "GitHub-Hookshot/fake")
        .header("x-github-event", event)
        .header("x-github-delivery", id)
        .header("x-github-hook-id", "1")
        .header("x-github-hook-installation-target-type", "integration")
        .header("x-github-hook-installation-target-id", app_id.to_string())
        .header("x-hub-signature", signature_1(secret, body))
        .header("x-hub-signature-256", signature_256(secret, body))
        .body(body.to_vec())
        .send()
        .await?;
    Ok(resp.status().as_u16())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_docs_signature_vector() {
        assert_eq!(
            signature_256("It's a Secret to Everybody", b"Hello, World!"),
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
    }
}

//! Builders for GitHub's JSON resource shapes (users, repositories, pull requests, check runs,
//! comments, git objects…), with the real field names and every field GitHub's OpenAPI marks as
//! required, pointing at the fake's own host.
//!
//! Pure functions of their inputs: they never read the clock or the shared state.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Where the fake lives: `api` is the REST base (with any GHES `/api/v3` prefix), `web` the
/// "github.com" side used for `html_url`s.
#[derive(Clone, Debug)]
pub struct Urls {
    pub api: String,
    pub web: String,
}

/// A stable small numeric id derived from a name, so the same login always gets the same id.
pub fn stable_id(name: &str) -> u64 {
    let d = Sha256::digest(name.as_bytes());
    u64::from(u32::from_be_bytes([d[0], d[1], d[2], d[3]]) >> 4) + 1000
}

pub fn node_id(kind: &str, id: u64) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("0{}:{kind}{id}", kind.len()))
}

/// `simple-user`. Logins ending in `[bot]` are `Bot`s, as GitHub reports App identities.
pub fn user(u: &Urls, login: &str) -> Value {
    let id = stable_id(login);
    let kind = if login.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    let api = format!("{}/users/{login}", u.api);
    json!({
        "login": login,
        "id": id,
        "node_id": node_id("User", id),
        "avatar_url": format!("{}/avatars/u/{id}?v=4", u.web),
        "gravatar_id": "",
        "url": api,
        "html_url": format!("{}/{login}", u.web),
        "followers_url": format!("{api}/followers"),
        "following_url": format!("{api}/following{{/other_user}}"),
        "gists_url": format!("{api}/gists{{/gist_id}}"),
        "starred_url": format!("{api}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{api}/subscriptions"),
        "organizations_url": format!("{api}/orgs"),
        "repos_url": format!("{api}/repos"),
        "events_url": format!("{api}/events{{/privacy}}"),
        "received_events_url": format!("{api}/received_events"),
        "type": kind,
        "user_view_type": "public",
        "site_admin": false
    })
}

pub struct RepoInfo<'a> {
    pub id: u64,
    pub owner: &'a str,
    pub name: &'a str,
    pub default_branch: &'a str,
    pub fork: bool,
    pub created_at: &'a str,
    pub pushed_at: &'a str,
}

/// `repository` (the full REST shape, also used inside webhook payloads and PR heads).
pub fn repository(u: &Urls, r: &RepoInfo<'_>) -> Value {
    let full = format!("{}/{}", r.owner, r.name);
    let a = format!("{}/repos/{full}", u.api);
    let host = u
        .web
        .trim_start_matches("http://")
        .trim_start_matches("https://");
    json!({
        "id": r.id,
        "node_id": node_id("Repository", r.id),
        "name": r.name,
        "full_name": full,
        "private": false,
        "owner": user(u, r.owner),
        "html_url": format!("{}/{full}", u.web),
        "description": null,
        "fork": r.fork,
        "url": a,
        "archive_url": format!("{a}/{{archive_format}}{{/ref}}"),
        "assignees_url": format!("{a}/assignees{{/user}}"),
        "blobs_url": format!("{a}/git/blobs{{/sha}}"),
        "branches_url": format!("{a}/branches{{/branch}}"),
        "collaborators_url": format!("{a}/collaborators{{/collaborator}}"),
        "comments_url": format!("{a}/comments{{/number}}"),
        "commits_url": format!("{a}/commits{{/sha}}"),
        "compare_url": format!("{a}/compare/{{base}}...{{head}}"),
        "contents_url": format!("{a}/contents/{{+path}}"),
        "contributors_url": format!("{a}/contributors"),
        "deployments_url": format!("{a}/deployments"),
        "downloads_url": format!("{a}/downloads"),
        "events_url": format!("{a}/events"),
        "forks_url": format!("{a}/forks"),
        "git_commits_url": format!("{a}/git/commits{{/sha}}"),
        "git_refs_url": format!("{a}/git/refs{{/sha}}"),
        "git_tags_url": format!("{a}/git/tags{{/sha}}"),
        "git_url": format!("git://{host}/{full}.git"),
        "issue_comment_url": format!("{a}/issues/comments{{/number}}"),
        "issue_events_url": format!("{a}/issues/events{{/number}}"),
        "issues_url": format!("{a}/issues{{/number}}"),
        "keys_url": format!("{a}/keys{{/key_id}}"),
        "labels_url": format!("{a}/labels{{/name}}"),
        "languages_url": format!("{a}/languages"),
        "merges_url": format!("{a}/merges"),
        "milestones_url": format!("{a}/milestones{{/number}}"),
        "notifications_url": format!("{a}/notifications{{?since,all,participating}}"),
        "pulls_url": format!("{a}/pulls{{/number}}"),
        "releases_url": format!("{a}/releases{{/id}}"),
        "ssh_url": format!("git@{host}:{full}.git"),
        "stargazers_url": format!("{a}/stargazers"),
        "statuses_url": format!("{a}/statuses/{{sha}}"),
        "subscribers_url": format!("{a}/subscribers"),
        "subscription_url": format!("{a}/subscription"),
        "tags_url": format!("{a}/tags"),
        "teams_url": format!("{a}/teams"),
        "trees_url": format!("{a}/git/trees{{/sha}}"),
        "clone_url": format!("{}/{full}.git", u.web),
        "mirror_url": null,
        "hooks_url": format!("{a}/hooks"),
        "svn_url": format!("{}/{full}", u.web),
        "homepage": null,
        "language": null,
        "forks_count": 0,
        "forks": 0,
        "stargazers_count": 0,
        "watchers_count": 0,
        "watchers": 0,
        "size": 0,
        "default_branch": r.default_branch,
        "open_issues_count": 0,
        "open_issues": 0,
        "is_template": false,
        "topics": [],
        "has_issues": true,
        "has_projects": true,
        "has_wiki": true,
        "has_pages": false,
        "has_downloads": true,
        "has_discussions": false,
        "archived": false,
        "disabled": false,
        "visibility": "public",
        "license": null,
        "allow_forking": true,
        "web_commit_signoff_required": false,
        "custom_properties": {},
        "pushed_at": r.pushed_at,
        "created_at": r.created_at,
        "updated_at": r.pushed_at,
        "permissions": {"admin": false, "maintain": false, "push": false, "triage": false, "pull": true}
    })
}

/// `nullable-integration` (a GitHub App) as embedded in check runs and webhook payloads.
pub fn app(u: &Urls, app_id: u64, slug: &str, owner: &str) -> Value {
    json!({
        "id": app_id,
        "slug": slug,
        "client_id": format!("Iv1.{:016x}", app_id),
        "node_id": node_id("App", app_id),
        "owner": user(u, owner),
        "name": slug,
        "description": "",
        "external_url": format!("{}/apps/{slug}", u.web),
        "html_url": format!("{}/apps/{slug}", u.web),
        "created_at": "2024-01-01T00:00:00Z",
        "updated_at": "2024-01-01T00:00:00Z",
        "permissions": {"checks": "write", "contents": "write", "issues": "write", "metadata": "read", "pull_requests": "write", "actions": "write"},
        "events": ["check_run", "issue_comment", "pull_request"]
    })
}

pub fn reaction_rollup(url: &str, contents: &[String]) -> Value {
    let count = |c: &str| contents.iter().filter(|x| x.as_str() == c).count();
    json!({
        "url": url,
        "total_count": contents.len(),
        "+1": count("+1"), "-1": count("-1"), "laugh": count("laugh"), "confused": count("confused"),
        "heart": count("heart"), "hooray": count("hooray"), "eyes": count("eyes"), "rocket": count("rocket")
    })
}

/// `https://github.com/...` style link object.
pub fn link(href: String) -> Value {
    json!({ "href": href })
}

/// Base64 as the contents API sends it: wrapped every 60 characters with `\n`, trailing newline.
pub fn base64_wrapped(bytes: &[u8]) -> String {
    use base64::Engine;
    let b = base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut out = String::with_capacity(b.len() + b.len() / 60 + 1);
    for chunk in b.as_bytes().chunks(60) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_base64_lines_are_60_chars() {
        let s = base64_wrapped(&[7u8; 100]);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0].len(), 60);
        assert!(s.ends_with('\n'));
        use base64::Engine;
        let joined: String = lines.concat();
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .decode(joined)
                .unwrap(),
            vec![7u8; 100]
        );
    }

    #[test]
    fn bots_are_typed_bot() {
        let u = Urls {
            api: "http://x".into(),
            web: "http://x".into(),
        };
        assert_eq!(user(&u, "ci-medic[bot]")["type"], "Bot");
        assert_eq!(user(&u, "alice")["type"], "User");
        assert_eq!(stable_id("alice"), stable_id("alice"));
    }
}

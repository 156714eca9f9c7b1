//! The README cannot fall behind the code: its tables of environment variables and
//! `.github/ci-medic.yml` keys are the code's own lists rendered, every metric and every
//! subcommand is documented, and it opens with the two commands for a fresh machine.
//!
//! `CI_MEDIC_BLESS_README=1 cargo test --test docs` rewrites the generated tables in place.

use clap::CommandFactory;

const README: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");

fn readme() -> String {
    std::fs::read_to_string(README).expect("README.md is readable")
}

/// Replaces what sits between `<!-- NAME -->` and `<!-- /NAME -->`.
fn splice(text: &str, name: &str, content: &str) -> String {
    let open = format!("<!-- {name} -->\n");
    let close = format!("<!-- /{name} -->");
    let start = text.find(&open).expect("opening marker") + open.len();
    let end = text[start..].find(&close).expect("closing marker") + start;
    format!("{}{}{}", &text[..start], content, &text[end..])
}

fn generated(text: &str) -> String {
    let t = splice(text, "env-table", &ci_medic::config::env_markdown_table());
    splice(&t, "config-table", &ci_medic::repo_config::markdown_table())
}

#[test]
fn tables_are_generated_from_the_code() {
    let text = readme();
    let want = generated(&text);
    if std::env::var_os("CI_MEDIC_BLESS_README").is_some() && want != text {
        std::fs::write(README, &want).unwrap();
        return;
    }
    assert!(
        text == want,
        "README.md tables are out of date; run CI_MEDIC_BLESS_README=1 cargo test --test docs"
    );
}

#[test]
fn every_environment_variable_is_documented() {
    let text = readme();
    for (name, default, _) in ci_medic::config::ENV_VARS {
        assert!(
            text.contains(&format!("| `{name}` |")),
            "{name} missing from README.md"
        );
        if !default.is_empty() {
            assert!(
                text.contains(&format!("| `{name}` | `{default}` |")),
                "default of {name}"
            );
        }
    }
    // The ones the brief names explicitly, whatever the list says.
    for name in [
        "APP_ID",
        "PRIVATE_KEY_PATH",
        "WEBHOOK_SECRET",
        "GITHUB_API_URL",
        "GITHUB_WEB_URL",
        "DATA_DIR",
        "LOG_FORMAT",
        "RUST_LOG",
        "LLM_API_URL",
        "LLM_API_KEY",
        "LLM_MODEL",
        "LLM_TIMEOUT_SECS",
        "LLM_MAX_RETRIES",
        "DOCKER_HOST",
    ] {
        assert!(text.contains(&format!("| `{name}` |")), "{name}");
    }
}

#[test]
fn every_repository_config_key_is_documented_with_its_default() {
    let text = readme();
    for key in ci_medic::repo_config::KEYS {
        assert!(
            text.contains(&format!("| `{}` |", key.key)),
            "{} missing from README.md",
            key.key
        );
    }
    // The example file in the README parses to the defaults.
    let start = text
        .find("```yaml\nenabled: true")
        .expect("example file in README")
        + "```yaml\n".len();
    let end = text[start..].find("```").unwrap() + start;
    let parsed = ci_medic::repo_config::RepoConfig::parse(&text[start..end]);
    assert_eq!(
        parsed.expect("README example parses"),
        ci_medic::repo_config::RepoConfig::default()
    );
}

#[test]
fn every_metric_is_documented() {
    // Families print only once they have a sample: give each one.
    let m = ci_medic::metrics::Metrics::new();
    m.delivery("check_run", "accepted");
    m.stage("analysis", "ok");
    m.failure("infrastructure");
    m.rerun_requested("command");
    let job = ci_medic::metrics::JobLabels {
        event: "check_run".into(),
    };
    m.job_duration.get_or_create(&job).observe(0.1);
    m.job_failures.get_or_create(&job).inc();
    let rendered = m.render();
    let text = readme();
    let mut n = 0;
    for line in rendered.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let name = rest.split_whitespace().next().unwrap();
            let kind = rest.split_whitespace().nth(1).unwrap();
            let shown = if kind == "counter" {
                format!("{name}_total")
            } else {
                name.to_string()
            };
            assert!(
                text.contains(&format!("`{shown}")),
                "metric {shown} missing from README.md"
            );
            n += 1;
        }
    }
    assert!(n >= 7, "expected the registered metrics, found {n}");
}

#[test]
fn every_subcommand_is_documented() {
    let text = readme();
    for sub in ci_medic::cli::Cli::command().get_subcommands() {
        let name = sub.get_name();
        if name == "help" {
            continue;
        }
        assert!(
            text.contains(&format!("`ci-medic {name}")),
            "subcommand {name} missing from README.md"
        );
    }
    for name in ["serve", "analyze", "demo", "exec", "manifest"] {
        assert!(text.contains(&format!("`ci-medic {name}")), "{name}");
    }
}

#[test]
fn readme_opens_with_the_two_commands() {
    let text = readme();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("# "), "a title first");
    assert_eq!(lines.next(), Some(""));
    assert!(lines.next().unwrap().starts_with("```"));
    assert_eq!(lines.next(), Some("cargo run --release -- demo"));
    assert_eq!(lines.next(), Some("cargo test --workspace"));
    assert_eq!(lines.next(), Some("```"));
}

#[test]
fn manifest_readme_justifies_every_permission_and_event() {
    let m = ci_medic::setup::manifest("https://x.example");
    let text = readme();
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/app-manifest/README.md"
    ))
    .unwrap();
    for (perm, level) in m["default_permissions"].as_object().unwrap() {
        let row = format!("| `{perm}: {}` |", level.as_str().unwrap());
        assert!(text.contains(&row), "README.md: {row}");
        assert!(doc.contains(&row), "app-manifest/README.md: {row}");
    }
    for ev in m["default_events"].as_array().unwrap() {
        let row = format!("| `{}` |", ev.as_str().unwrap());
        assert!(text.contains(&row), "README.md: {row}");
        assert!(doc.contains(&row), "app-manifest/README.md: {row}");
    }
}

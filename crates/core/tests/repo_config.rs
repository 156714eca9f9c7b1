//! `.github/ci-medic.yml`: every key, strictness, semantic checks and error positions.

use ci_medic_core::repo_config::*;

fn err(yaml: &str) -> ConfigError {
    RepoConfig::parse(yaml).expect_err(yaml)
}

#[test]
fn empty_and_comment_only_files_are_the_defaults() {
    for yaml in [
        "",
        "\n\n",
        "# nothing here\n   # still nothing\n",
        "---\n",
        "~\n",
        "null",
    ] {
        assert_eq!(
            RepoConfig::parse(yaml).unwrap(),
            RepoConfig::default(),
            "{yaml:?}"
        );
    }
}

#[test]
fn example_parses_to_the_defaults_and_names_every_key() {
    assert_eq!(
        RepoConfig::parse(EXAMPLE_YAML).unwrap(),
        RepoConfig::default()
    );
    for key in KEYS {
        let leaf = key.key.rsplit('.').next().unwrap();
        assert!(
            EXAMPLE_YAML.contains(&format!("{leaf}:")),
            "{} missing from EXAMPLE_YAML",
            key.key
        );
    }
}

/// Renders a default value the way [`KEYS`] writes it.
fn render(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "unset".into(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(render).collect::<Vec<_>>().join(", ")
            )
        }
        other => other.to_string(),
    }
}

fn leaves(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, serde_json::Value)>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, child) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(&path, child, out);
            }
        }
        other => out.push((prefix.to_string(), other.clone())),
    }
}

#[test]
fn keys_list_is_complete_and_its_defaults_are_true() {
    let defaults = serde_json::to_value(RepoConfig::default()).unwrap();
    let mut actual = Vec::new();
    leaves("", &defaults, &mut actual);
    let mut listed: Vec<&str> = KEYS.iter().map(|k| k.key).collect();
    listed.sort_unstable();
    let mut real: Vec<&str> = actual.iter().map(|(k, _)| k.as_str()).collect();
    real.sort_unstable();
    assert_eq!(listed, real, "KEYS and RepoConfig disagree");
    for (key, value) in &actual {
        let documented = KEYS.iter().find(|k| k.key == key).unwrap();
        assert_eq!(documented.default, render(value), "default of {key}");
        assert!(!documented.description.is_empty());
    }
}

#[test]
fn markdown_table_has_a_row_per_key() {
    let table = markdown_table();
    assert_eq!(table.lines().count(), KEYS.len() + 2);
    for key in KEYS {
        assert!(table.contains(&format!("| `{}` |", key.key)), "{}", key.key);
    }
    insta::assert_snapshot!(table);
}

#[test]
fn every_key_is_read() {
    let yaml = r#"
enabled: false
checks:
  include: ["CI / test*", lint]
  exclude:
    - "CI / test (windows)"
approvers:
  min_permission: maintain
  users: [alice, "dependabot[bot]"]
  allow_author: false
constraints:
  protected_paths: [src/generated/**]
  do_not_touch: [vendor/]
  max_files_changed: 2
  no_new_deps: false
  allowed_dependencies: [serde]
  paradigm: functional
fix:
  confidence_threshold: 0.9
  max_attempts: 5
verify: docker
executor:
  image: rust:1.85
  command: cargo test
  timeout_seconds: 900
triage:
  auto_rerun: true
  max_reruns: 2
"#;
    let c = RepoConfig::parse(yaml).unwrap();
    assert!(!c.enabled);
    assert_eq!(c.checks.include, ["CI / test*", "lint"]);
    assert_eq!(c.checks.exclude, ["CI / test (windows)"]);
    assert_eq!(c.approvers.min_permission, Permission::Maintain);
    assert_eq!(c.approvers.users, ["alice", "dependabot[bot]"]);
    assert!(!c.approvers.allow_author);
    assert_eq!(c.constraints.protected_paths, ["src/generated/**"]);
    assert_eq!(c.constraints.do_not_touch, ["vendor/"]);
    assert_eq!(c.constraints.max_files_changed, 2);
    assert!(!c.constraints.no_new_deps);
    assert_eq!(c.constraints.allowed_dependencies, ["serde"]);
    assert_eq!(c.constraints.paradigm, Some(Paradigm::Functional));
    assert_eq!(c.fix.confidence_threshold, 0.9);
    assert_eq!(c.fix.max_attempts, 5);
    assert_eq!(c.verify, VerifyMode::Docker);
    assert_eq!(c.executor.image.as_deref(), Some("rust:1.85"));
    assert_eq!(c.executor.command.as_deref(), Some("cargo test"));
    assert_eq!(c.executor.timeout_seconds, 900);
    assert!(c.triage.auto_rerun);
    assert_eq!(c.triage.max_reruns, 2);
}

#[test]
fn fixer_images_override_one_ecosystem_and_keep_the_others() {
    let c = RepoConfig::parse("fixers:\n  images:\n    python: registry.example/py-fixers:24\n")
        .unwrap();
    assert_eq!(c.fixers.images.python, "registry.example/py-fixers:24");
    assert_eq!(
        c.fixers
            .images
            .get(ci_medic_core::tool_tier::Ecosystem::Python),
        "registry.example/py-fixers:24"
    );
    assert_eq!(c.fixers.images.go, "ci-medic-fixer/go");
    assert_eq!(c.fixers.images.node, "ci-medic-fixer/node");
    assert!(RepoConfig::parse("fixers:\n  images:\n    ruby: x\n").is_err());
    assert_eq!(
        RepoConfig::parse("fixers:\n").unwrap(),
        RepoConfig::default()
    );
}

#[test]
fn partial_sections_keep_other_defaults() {
    let c = RepoConfig::parse("fix:\n  max_attempts: 1\nchecks:\n").unwrap();
    assert_eq!(c.fix.max_attempts, 1);
    assert_eq!(c.fix.confidence_threshold, 0.7);
    assert_eq!(c.checks, ChecksConfig::default());
    assert_eq!(c.constraints, ConstraintsConfig::default());
    // A section whose keys are all commented out is its defaults.
    let c = RepoConfig::parse("approvers:\n  # min_permission: admin\n").unwrap();
    assert_eq!(c.approvers, ApproversConfig::default());
}

#[test]
fn unknown_keys_at_every_level() {
    let e = err("enabled: true\nfoo: 1\n");
    assert_eq!((e.line, e.column), (Some(2), Some(1)));
    assert_eq!(e.key_path.as_deref(), Some("foo"));
    assert!(
        e.message
            .starts_with("unknown field `foo`, expected one of"),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with(".github/ci-medic.yml:2:1: unknown field `foo`"),
        "{e}"
    );

    for (yaml, path, line, column) in [
        ("checks:\n  includes: [a]\n", "checks.includes", 2, 3),
        (
            "approvers:\n  min_perm: write\n",
            "approvers.min_perm",
            2,
            3,
        ),
        (
            "constraints:\n  max_files: 2\n",
            "constraints.max_files",
            2,
            3,
        ),
        ("fix:\n  threshold: 0.5\n", "fix.threshold", 2, 3),
        ("executor:\n  timeout: 5\n", "executor.timeout", 2, 3),
    ] {
        let e = err(yaml);
        assert_eq!(e.key_path.as_deref(), Some(path), "{e}");
        assert_eq!((e.line, e.column), (Some(line), Some(column)), "{e}");
        let field = path.rsplit('.').next().unwrap();
        assert!(
            e.message.starts_with(&format!("unknown field `{field}`")),
            "{e}"
        );
    }
}

#[test]
fn wrong_types() {
    for (yaml, path) in [
        ("enabled: maybe\n", "enabled"),
        ("checks: [a]\n", "checks"),
        ("checks:\n  include: lint\n", "checks.include"),
        ("checks:\n  include:\n    - {a: 1}\n", "checks.include[0]"),
        ("approvers:\n  allow_author: 2\n", "approvers.allow_author"),
        (
            "constraints:\n  max_files_changed: -1\n",
            "constraints.max_files_changed",
        ),
        (
            "constraints:\n  max_files_changed: two\n",
            "constraints.max_files_changed",
        ),
        (
            "fix:\n  confidence_threshold: high\n",
            "fix.confidence_threshold",
        ),
        (
            "executor:\n  timeout_seconds: 1.5\n",
            "executor.timeout_seconds",
        ),
        ("executor:\n  image: [a]\n", "executor.image"),
    ] {
        let e = err(yaml);
        assert_eq!(e.key_path.as_deref(), Some(path), "{yaml:?}: {e}");
        assert!(e.line.is_some(), "{e}");
        assert!(e.message.contains("invalid"), "{e}");
    }
    let e = err("- a\n- b\n");
    assert!(e.message.contains("invalid type"), "{e}");
}

#[test]
fn bad_enum_values() {
    for (yaml, path, bad) in [
        ("verify: podman\n", "verify", "podman"),
        (
            "approvers:\n  min_permission: owner\n",
            "approvers.min_permission",
            "owner",
        ),
        (
            "constraints:\n  paradigm: procedural\n",
            "constraints.paradigm",
            "procedural",
        ),
    ] {
        let e = err(yaml);
        assert_eq!(e.key_path.as_deref(), Some(path), "{e}");
        assert!(
            e.message.contains(&format!("unknown variant `{bad}`")),
            "{e}"
        );
        assert!(e.line.is_some());
    }
}

#[test]
fn yaml_syntax_errors_have_a_position() {
    let e = err("checks:\n  include: [a\nfix: {}\n");
    assert!(e.line.is_some(), "{e}");
    let e = err("enabled: true\nenabled: false\n");
    assert!(e.message.contains("duplicate"), "{e}");
    let e = err("a: 1\n---\nb: 2\n");
    assert!(e.message.contains("more than one document"), "{e}");
    let e = err("enabled: true\n\tchecks: {}\n");
    assert!(e.line.is_some(), "{e}");
}

#[test]
fn semantic_checks_with_positions() {
    for (yaml, path, line, column, needle) in [
        (
            "fix:\n  confidence_threshold: 1.5\n",
            "fix.confidence_threshold",
            2,
            3,
            "between 0 and 1",
        ),
        (
            "fix:\n  confidence_threshold: -0.1\n",
            "fix.confidence_threshold",
            2,
            3,
            "between 0 and 1",
        ),
        (
            "fix:\n  confidence_threshold: .nan\n",
            "fix.confidence_threshold",
            2,
            3,
            "between 0 and 1",
        ),
        (
            "fix:\n  max_attempts: 0\n",
            "fix.max_attempts",
            2,
            3,
            "between 1 and 10",
        ),
        (
            "fix:\n  max_attempts: 11\n",
            "fix.max_attempts",
            2,
            3,
            "between 1 and 10",
        ),
        (
            "constraints:\n  max_files_changed: 0\n",
            "constraints.max_files_changed",
            2,
            3,
            "at least 1",
        ),
        (
            "triage:\n  max_reruns: 6\n",
            "triage.max_reruns",
            2,
            3,
            "between 0 and 5",
        ),
        (
            "executor:\n  timeout_seconds: 0\n",
            "executor.timeout_seconds",
            2,
            3,
            "between 1 and 3600",
        ),
        (
            "executor:\n    timeout_seconds: 3601\n",
            "executor.timeout_seconds",
            2,
            5,
            "between 1 and 3600",
        ),
        (
            "checks:\n  include:\n    - ok\n    - \"a[\"\n",
            "checks.include[1]",
            4,
            7,
            "not a valid glob",
        ),
        (
            "checks:\n  exclude:\n  - \"\"\n",
            "checks.exclude[0]",
            3,
            5,
            "empty",
        ),
        (
            "constraints:\n  protected_paths:\n    - src/\n    - /etc/passwd\n",
            "constraints.protected_paths[1]",
            4,
            7,
            "relative",
        ),
        (
            "constraints:\n  do_not_touch: [../outside]\n",
            "constraints.do_not_touch[0]",
            2,
            3,
            "`..`",
        ),
        (
            "constraints:\n  do_not_touch:\n    - a/../../b\n",
            "constraints.do_not_touch[0]",
            3,
            7,
            "`..`",
        ),
        (
            "constraints:\n  do_not_touch:\n    - 'C:\\x'\n",
            "constraints.do_not_touch[0]",
            3,
            7,
            "relative",
        ),
        (
            "approvers:\n  min_permission: read\n",
            "approvers.min_permission",
            2,
            3,
            "anyone",
        ),
        (
            "approvers:\n  min_permission: none\n",
            "approvers.min_permission",
            2,
            3,
            "anyone",
        ),
        (
            "approvers:\n  users:\n    - \"@alice\"\n",
            "approvers.users[0]",
            3,
            7,
            "without `@`",
        ),
        (
            "approvers:\n  users: [\"two words\"]\n",
            "approvers.users[0]",
            2,
            3,
            "not a GitHub login",
        ),
        (
            "constraints:\n  allowed_dependencies:\n    - \"\"\n",
            "constraints.allowed_dependencies[0]",
            3,
            7,
            "not a dependency",
        ),
        (
            "executor:\n  image: \"\"\n",
            "executor.image",
            2,
            3,
            "not an image",
        ),
        (
            "executor:\n  command: \"  \"\n",
            "executor.command",
            2,
            3,
            "must not be empty",
        ),
        (
            "fixers:\n  images:\n    node: \"my node\"\n",
            "fixers.images.node",
            3,
            5,
            "not an image",
        ),
    ] {
        let e = err(yaml);
        assert_eq!(e.key_path.as_deref(), Some(path), "{yaml:?}: {e}");
        assert_eq!(
            (e.line, e.column),
            (Some(line), Some(column)),
            "{yaml:?}: {e}"
        );
        assert!(e.message.contains(needle), "{yaml:?}: {e}");
    }
}

#[test]
fn positions_skip_same_named_keys_elsewhere() {
    // `max_attempts` appears in a comment and under another section first.
    let yaml = "# max_attempts: 99\nexecutor:\n  timeout_seconds: 10\nfix:\n  # max_attempts: 2\n  confidence_threshold: 0.5\n  max_attempts: 42\n";
    let e = err(yaml);
    assert_eq!((e.line, e.column), (Some(7), Some(3)), "{e}");
}

#[test]
fn parse_or_default_reports_and_falls_back() {
    let (config, error) = RepoConfig::parse_or_default("fix:\n  max_attempts: 0\n");
    assert_eq!(config, RepoConfig::default());
    assert!(error.is_some());
    let (config, error) = RepoConfig::parse_or_default("enabled: false\n");
    assert!(!config.enabled);
    assert!(error.is_none());
}

#[test]
fn check_selection() {
    let all = RepoConfig::default();
    assert!(all.check_selected("anything"));
    let c = RepoConfig::parse(
        "checks:\n  include: [\"CI / test*\", lint]\n  exclude: [\"*windows*\"]\n",
    )
    .unwrap();
    assert!(c.check_selected("lint"));
    assert!(c.check_selected("CI / test (ubuntu)"));
    assert!(!c.check_selected("CI / test (windows)"), "exclude wins");
    assert!(!c.check_selected("Lint"), "names are case-sensitive");
    assert!(!c.check_selected("build"));
    let only_exclude = RepoConfig::parse("checks:\n  exclude: [deploy]\n").unwrap();
    assert!(only_exclude.check_selected("build"));
    assert!(!only_exclude.check_selected("deploy"));
}

#[test]
fn permissions() {
    assert_eq!(Permission::parse("ADMIN"), Ok(Permission::Admin));
    assert_eq!(Permission::parse("maintain"), Ok(Permission::Maintain));
    assert!(Permission::parse("owner").is_err());
    assert!(Permission::Admin.meets(Permission::Write));
    assert!(Permission::Write.meets(Permission::Write));
    assert!(!Permission::Triage.meets(Permission::Write));
    assert!(!Permission::None.meets(Permission::Read));
    for p in Permission::ALL {
        assert_eq!(Permission::parse(p.as_str()), Ok(p));
    }
    let mut sorted = Permission::ALL;
    sorted.sort();
    assert_eq!(sorted, Permission::ALL, "ALL is lowest first");
}

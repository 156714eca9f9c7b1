//! The deployment files for several replicas (`deploy/docker-compose.yml`, `deploy/fly.toml`)
//! stay valid and only set what ci-medic reads: Debian's `docker-compose config` validates the
//! compose file (installed by `.ci/compose-setup.sh`; no daemon, nothing pulled), and every
//! variable either file sets for ci-medic is one in `config::ENV_VARS` (the README's table).

use std::path::{Path, PathBuf};
use std::process::Command;

fn deploy(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(file)
}

fn read_by_ci_medic(name: &str) -> bool {
    ci_medic::config::ENV_VARS
        .iter()
        .any(|(n, _, _)| *n == name)
}

fn compose() -> serde_yaml_ng::Value {
    let text = std::fs::read_to_string(deploy("docker-compose.yml")).unwrap();
    let mut v: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    v.apply_merge().unwrap();
    v
}

/// The services running ci-medic: built from this repository's Dockerfile.
fn ci_medic_services(v: &serde_yaml_ng::Value) -> Vec<(String, serde_yaml_ng::Value)> {
    v["services"]
        .as_mapping()
        .unwrap()
        .iter()
        .filter(|(_, s)| s["build"]["dockerfile"].as_str() == Some("Dockerfile"))
        .map(|(k, s)| (k.as_str().unwrap().to_string(), s.clone()))
        .collect()
}

#[test]
fn compose_runs_replicas_on_postgresql_behind_one_port_with_only_variables_ci_medic_reads() {
    let v = compose();
    let replicas = ci_medic_services(&v);
    assert!(replicas.len() >= 3, "three replicas or more: {replicas:?}");
    for (name, s) in &replicas {
        let env = s["environment"].as_mapping().expect("a mapping");
        for k in env.keys() {
            let k = k.as_str().unwrap();
            assert!(
                read_by_ci_medic(k),
                "{name} sets {k}, which ci-medic never reads"
            );
        }
        let url = env
            .get("DATABASE_URL")
            .and_then(|u| u.as_str())
            .expect("DATABASE_URL");
        assert!(
            url.starts_with("postgres://") && url.contains("@postgres:"),
            "{url}"
        );
        assert!(
            env.contains_key("CREDENTIALS_KEY_FILE"),
            "{name}: the sealing key"
        );
        assert_eq!(env.get("HOST").and_then(|h| h.as_str()), Some("0.0.0.0"));
        assert!(
            s["depends_on"]["postgres"]["condition"].as_str() == Some("service_healthy"),
            "{name} waits for the database"
        );
        // Each its own DATA_DIR volume.
        assert_eq!(s["volumes"].as_sequence().unwrap().len(), 1);
    }
    let volumes: std::collections::HashSet<String> = replicas
        .iter()
        .map(|(_, s)| s["volumes"][0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        volumes.len(),
        replicas.len(),
        "no two replicas share a DATA_DIR"
    );
    // One published port: the proxy's, whose configuration names every replica.
    let published: Vec<&str> = v["services"]
        .as_mapping()
        .unwrap()
        .iter()
        .filter(|(_, s)| s["ports"].as_sequence().is_some())
        .map(|(k, _)| k.as_str().unwrap())
        .collect();
    assert_eq!(published, ["proxy"]);
    let caddy = std::fs::read_to_string(deploy("Caddyfile")).unwrap();
    for (name, _) in &replicas {
        assert!(
            caddy.contains(&format!("{name}:3000")),
            "{name} is behind the proxy"
        );
    }
    assert!(caddy.contains("health_uri /readyz"));
    assert!(
        v["services"]["postgres"]["image"]
            .as_str()
            .unwrap()
            .starts_with("postgres:")
    );
}

#[test]
fn docker_compose_config_accepts_the_file() {
    let found = Command::new("docker-compose").arg("version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var("CI").map_or(true, |v| v.is_empty() || v == "false"),
            "CI is set but docker-compose is missing: run .ci/compose-setup.sh"
        );
        eprintln!("skipping: docker-compose is not installed (bash .ci/compose-setup.sh)");
        return;
    }
    // A copy beside a stand-in key file, so the repository gets no secret file.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("docker-compose.yml");
    std::fs::copy(deploy("docker-compose.yml"), &file).unwrap();
    std::fs::copy(deploy("Caddyfile"), dir.path().join("Caddyfile")).unwrap();
    std::fs::write(dir.path().join("credentials.key"), "00".repeat(32)).unwrap();
    let run = |with_env: bool| {
        let mut c = Command::new("docker-compose");
        c.arg("-f").arg(&file).args(["config", "-q"]).env_clear();
        c.env("PATH", std::env::var("PATH").unwrap_or_default());
        if with_env {
            c.env("POSTGRES_PASSWORD", "pw")
                .env("PUBLIC_URL", "https://ci.example");
        }
        c.output().unwrap()
    };
    let ok = run(true);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    // Without the operator's values it refuses, naming them.
    let missing = run(false);
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("POSTGRES_PASSWORD"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
}

/// `[env]` of fly.toml: `KEY = "value"` lines up to the next table.
fn fly_env(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut in_env = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_env = line == "[env]";
            continue;
        }
        if in_env && let Some((k, v)) = line.split_once('=') {
            out.push((k.trim().to_string(), v.trim().trim_matches('"').to_string()));
        }
    }
    out
}

#[test]
fn fly_toml_sets_only_variables_ci_medic_reads_and_keeps_several_machines_running() {
    let text = std::fs::read_to_string(deploy("fly.toml")).unwrap();
    let env = fly_env(&text);
    assert!(env.len() >= 3, "{env:?}");
    for (k, _) in &env {
        assert!(
            read_by_ci_medic(k),
            "fly.toml sets {k}, which ci-medic never reads"
        );
    }
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("HOST"), Some("0.0.0.0"));
    assert_eq!(get("PORT"), Some("3000"));
    assert!(text.contains("internal_port = 3000"));
    // Secrets are never in the file.
    for secret in [
        "DATABASE_URL",
        "CREDENTIALS_KEY",
        "WEBHOOK_SECRET",
        "PRIVATE_KEY",
    ] {
        assert!(get(secret).is_none(), "{secret} belongs in `fly secrets`");
    }
    assert!(text.contains("min_machines_running = 2"));
    assert!(text.contains("auto_stop_machines = \"off\""));
    assert!(text.contains("path = \"/readyz\""));
}

//! `action.yml` run the way the Actions runner runs a composite action: inputs with their
//! defaults, each step's `env:` expressions evaluated, its `run:` written to a file and started
//! as `bash --noprofile --norc -eo pipefail {0}` with `GITHUB_OUTPUT`, `GITHUB_ACTION_PATH`,
//! `RUNNER_TEMP` and `GITHUB_WORKSPACE` set, step outputs read back from `GITHUB_OUTPUT`, the
//! remaining steps skipped after a failure. What the steps print is read with the runner's own
//! command reader (`ci_medic_core::output::github::try_parse_v2`) and compared with a real
//! GitHub Actions log's hand-written expectations.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ci_medic_core::output::github::try_parse_v2;
use serde_yaml_ng::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// hashicorp/terraform's `Quick Checks`, a `go test` build failure (CiDiff data set, see the
/// set's SOURCES.md).
fn real_log() -> PathBuf {
    root().join("fixtures/corpus/real/go/wrap-cidiff/terraform-actions-go-test-build-failed.log")
}

struct Run {
    stdout: String,
    stderr: String,
    /// The first failing step's exit code, 0 when every step succeeded.
    code: i32,
    outputs: HashMap<String, String>,
}

struct Runner {
    temp: tempfile::TempDir,
    workspace: PathBuf,
}

impl Runner {
    fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let workspace = temp.path().join("work/terraform/terraform");
        std::fs::create_dir_all(&workspace).unwrap();
        Runner { temp, workspace }
    }

    /// `${{ … }}` in a value, for the contexts a composite action's `env:` may use here.
    fn evaluate(
        &self,
        text: &str,
        inputs: &HashMap<String, String>,
        steps: &HashMap<String, HashMap<String, String>>,
    ) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("a closed expression") + start;
            let expr = rest[start + 3..end].trim();
            let value = if let Some(name) = expr.strip_prefix("inputs.") {
                inputs
                    .get(name)
                    .unwrap_or_else(|| panic!("undeclared input {name}"))
                    .clone()
            } else if let Some(path) = expr.strip_prefix("steps.") {
                let (id, output) = path.split_once(".outputs.").expect("steps.ID.outputs.NAME");
                steps
                    .get(id)
                    .and_then(|o| o.get(output))
                    .cloned()
                    .unwrap_or_default()
            } else {
                match expr {
                    "github.action_path" => root().display().to_string(),
                    "github.workspace" => self.workspace.display().to_string(),
                    "runner.temp" => self.temp.path().display().to_string(),
                    other => panic!("expression the test runner does not know: {other}"),
                }
            };
            out.push_str(&value);
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    fn run(&self, with: &[(&str, &str)]) -> Run {
        let action: Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(root().join("action.yml")).unwrap())
                .unwrap();
        assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
        let declared = action["inputs"].as_mapping().expect("inputs");
        let mut inputs: HashMap<String, String> = HashMap::new();
        for (name, _) in with {
            assert!(
                declared.contains_key(*name),
                "{name} is not an input of action.yml"
            );
        }
        let no_steps = HashMap::new();
        for (name, spec) in declared {
            let name = name.as_str().unwrap().to_string();
            assert!(
                spec["description"].as_str().is_some_and(|d| !d.is_empty()),
                "input {name} is documented"
            );
            let default = spec["default"].as_str().unwrap_or("").to_string();
            let value = match with.iter().find(|(k, _)| *k == name) {
                Some((_, v)) => v.to_string(),
                None => self.evaluate(&default, &inputs, &no_steps),
            };
            inputs.insert(name, value);
        }

        let mut steps: HashMap<String, HashMap<String, String>> = HashMap::new();
        let (mut stdout, mut stderr, mut code) = (String::new(), String::new(), 0);
        for (i, step) in action["runs"]["steps"]
            .as_sequence()
            .unwrap()
            .iter()
            .enumerate()
        {
            assert_eq!(step["shell"].as_str(), Some("bash"), "step {i}");
            assert!(
                step.get("if").is_none(),
                "step {i}: conditions are in the scripts"
            );
            let script = step["run"].as_str().expect("a run step");
            assert!(
                !script.contains("${{"),
                "step {i}: inputs reach the script through env, never as expressions"
            );
            let script_path = self.temp.path().join(format!("step{i}.sh"));
            std::fs::write(&script_path, script).unwrap();
            let output_file = self.temp.path().join(format!("output{i}"));
            std::fs::write(&output_file, "").unwrap();
            let mut cmd = std::process::Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&script_path)
                .current_dir(&self.workspace)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", self.temp.path())
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_ACTION_PATH", root())
                .env("GITHUB_WORKSPACE", &self.workspace)
                .env("RUNNER_TEMP", self.temp.path());
            if let Some(env) = step["env"].as_mapping() {
                for (k, v) in env {
                    let v = v.as_str().expect("string env values");
                    cmd.env(k.as_str().unwrap(), self.evaluate(v, &inputs, &steps));
                }
            }
            let out = cmd.output().unwrap();
            stdout.push_str(&String::from_utf8_lossy(&out.stdout));
            stderr.push_str(&String::from_utf8_lossy(&out.stderr));
            let mut outputs = HashMap::new();
            for line in std::fs::read_to_string(&output_file).unwrap().lines() {
                let (k, v) = line.split_once('=').expect("name=value");
                outputs.insert(k.to_string(), v.to_string());
            }
            if let Some(id) = step["id"].as_str() {
                steps.insert(id.to_string(), outputs);
            }
            code = out.status.code().unwrap_or(-1);
            if code != 0 {
                break;
            }
        }
        let mut outputs = HashMap::new();
        if let Some(declared) = action["outputs"].as_mapping() {
            for (name, spec) in declared {
                let value = spec["value"].as_str().expect("an output value");
                outputs.insert(
                    name.as_str().unwrap().to_string(),
                    self.evaluate(value, &inputs, &steps),
                );
            }
        }
        Run {
            stdout,
            stderr,
            code,
            outputs,
        }
    }
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ci-medic")
}

#[derive(serde::Deserialize)]
struct Expected {
    file_path: String,
    line_number: u32,
}

/// The annotations in a step's output, as (level, file, line).
fn annotations(stdout: &str) -> Vec<(String, String, u32)> {
    stdout
        .lines()
        .filter_map(try_parse_v2)
        .map(|c| {
            (
                c.command,
                c.properties["file"].clone(),
                c.properties["line"].parse().expect("a line number"),
            )
        })
        .collect()
}

fn expected(log: &Path) -> Vec<(String, String, u32)> {
    let e: Vec<Expected> = serde_json::from_str(
        &std::fs::read_to_string(log.with_extension("expected.json")).unwrap(),
    )
    .unwrap();
    e.into_iter()
        .map(|e| ("error".to_string(), e.file_path, e.line_number))
        .collect()
}

#[test]
fn a_log_file_is_annotated() {
    let runner = Runner::new();
    let log = real_log();
    let run = runner.run(&[("log-file", log.to_str().unwrap()), ("ci-medic", bin())]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let found = annotations(&run.stdout);
    assert_eq!(found, expected(&log), "{}", run.stdout);
    assert!(run.stdout.contains("undefined: os"), "{}", run.stdout);
    assert_eq!(run.outputs["findings"], "6");
    assert_eq!(run.outputs["exit-code"], "");
    eprintln!("{}", run.stdout);

    let strict = runner.run(&[
        ("log-file", log.to_str().unwrap()),
        ("ci-medic", bin()),
        ("fail-on-findings", "true"),
    ]);
    assert_eq!(strict.code, 1);
    assert_eq!(annotations(&strict.stdout), expected(&log));
}

#[test]
fn a_command_is_run_shown_annotated_and_its_failure_kept() {
    let runner = Runner::new();
    let log = real_log();
    let command = format!("cat '{}'; exit 3", log.display());
    let run = runner.run(&[("command", &command), ("ci-medic", bin())]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    // The command's own output is shown, then the annotations.
    let first = std::fs::read_to_string(&log).unwrap();
    let first = first.lines().next().unwrap();
    assert!(run.stdout.starts_with(first), "{}", &run.stdout[..200]);
    assert_eq!(annotations(&run.stdout), expected(&log));
    assert_eq!(run.outputs["findings"], "6");
    assert_eq!(run.outputs["exit-code"], "3");

    let passing = runner.run(&[("command", "echo all good"), ("ci-medic", bin())]);
    assert_eq!(passing.code, 0, "{}", passing.stderr);
    assert_eq!(passing.stdout, "all good\n");
    assert_eq!(passing.outputs["findings"], "0");
    assert_eq!(passing.outputs["exit-code"], "0");
}

#[test]
fn misuse_is_a_clear_error() {
    let runner = Runner::new();
    let run = runner.run(&[("ci-medic", bin())]);
    assert_eq!(run.code, 2);
    let errors: Vec<_> = run.stdout.lines().filter_map(try_parse_v2).collect();
    assert_eq!(errors.len(), 1, "{}", run.stdout);
    assert_eq!(errors[0].data, "give log-file or command");

    let both = runner.run(&[
        ("ci-medic", bin()),
        ("log-file", "x.log"),
        ("command", "true"),
    ]);
    assert_eq!(both.code, 2);
    assert!(both.stdout.contains("not both"), "{}", both.stdout);

    let missing = runner.run(&[("ci-medic", bin()), ("log-file", "/nonexistent/build.log")]);
    assert_eq!(missing.code, 2);
    assert!(
        missing
            .stderr
            .contains("cannot read /nonexistent/build.log"),
        "{}",
        missing.stderr
    );

    let no_binary = runner.run(&[("ci-medic", "/nonexistent/ci-medic"), ("log-file", "x.log")]);
    assert_eq!(no_binary.code, 2);
    assert!(no_binary.stdout.contains("not an executable file"));
}

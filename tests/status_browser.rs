//! The status page in a real browser: headless Chromium (Debian's, installed by
//! `.ci/chromium-setup.sh`) against the real binary, with state made by a real failure on the
//! fake GitHub: the sign-in refusal without credentials, the token form, the proposal row with
//! its pull request link, the chart. Screenshots are saved under `target/status-screenshots/`.
//!
//! Chromium is driven through the DevTools protocol over `--remote-debugging-pipe` (JSON
//! messages separated by NUL on file descriptors 3 and 4), which needs no WebSocket client and
//! no crate. Without Chromium the test is skipped, unless `CI` is set: then it fails.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use common::world::*;
use serde_json::{Value, json};

const TOKEN: &str = "browser-operator-token-42";

/// The Chromium binary: `CI_MEDIC_CHROMIUM`, else `chromium` on `PATH`.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CI_MEDIC_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("chromium"))
            .find(|p| p.is_file())
    })
}

/// One headless Chromium and its DevTools pipe.
struct Browser {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    next_id: u64,
    session: String,
    /// Events read while waiting for an answer, for [`Browser::wait_event`].
    events: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn launch(bin: &Path) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        // fd 3 reads our commands, fd 4 carries Chromium's answers: the shell wires them to
        // the pipes before exec, then points stdin and stdout elsewhere.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>&2"#)
            .arg(bin)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--hide-scrollbars",
                "--window-size=1280,1400",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium starts");
        let to = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(out);
            let mut buf = Vec::new();
            while let Ok(n) = r.read_until(0, &mut buf) {
                if n == 0 {
                    break;
                }
                if buf.last() == Some(&0) {
                    buf.pop();
                }
                if let Ok(v) = serde_json::from_slice::<Value>(&buf)
                    && tx.send(v).is_err()
                {
                    break;
                }
                buf.clear();
            }
        });
        let mut b = Browser {
            child,
            to,
            from: rx,
            next_id: 0,
            session: String::new(),
            events: Vec::new(),
            _profile: profile,
        };
        let target = b.call("Target.createTarget", json!({"url": "about:blank"}), false);
        let target_id = target["targetId"].as_str().unwrap().to_string();
        let attached = b.call(
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
            false,
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        b.call("Page.enable", json!({}), true);
        b.call("Runtime.enable", json!({}), true);
        b
    }

    /// Sends a command (to the page's session when `page`) and waits for its answer.
    fn call(&mut self, method: &str, params: Value, page: bool) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if page {
            msg["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap();
        self.to.flush().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(v) if v["id"] == json!(id) => {
                    assert!(v.get("error").is_none(), "{method}: {v}");
                    return v["result"].clone();
                }
                Ok(v) => self.events.push(v),
                Err(RecvTimeoutError::Timeout) => panic!("{method}: no answer in 30 s"),
                Err(RecvTimeoutError::Disconnected) => panic!("{method}: Chromium went away"),
            }
        }
    }

    fn wait_event(&mut self, method: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(i) = self.events.iter().position(|e| e["method"] == method) {
                self.events.drain(..=i);
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(v) => self.events.push(v),
                Err(_) => panic!("no {method} within 30 s"),
            }
        }
    }

    /// Navigates and waits for the page's load event.
    fn open(&mut self, url: &str) {
        self.events.clear();
        self.call("Page.navigate", json!({"url": url}), true);
        self.wait_event("Page.loadEventFired");
    }

    /// Evaluates `expr` in the page and returns its value.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true}),
            true,
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    fn screenshot(&mut self, path: &Path) {
        use base64::Engine;
        let r = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
            true,
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        std::fs::write(path, png).unwrap();
        println!("screenshot: {}", path.display());
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn screenshots_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = target.join("status-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_in_headless_chromium() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but Chromium is missing: .ci/chromium-setup.sh installs it"
        );
        eprintln!("skipped: no chromium on PATH (set CI to make this a failure)");
        return;
    };

    // Real state: a failed check on pull request #7 and the proposal ci-medic made for it.
    let main = src("app/main.py");
    let pyproject = src("pyproject.toml");
    let files = [
        FileEntry {
            path: "app/main.py",
            mode: "100644",
            content: main.as_bytes(),
        },
        FileEntry {
            path: "pyproject.toml",
            mode: "100644",
            content: pyproject.as_bytes(),
        },
    ];
    let w = world_full(&[], &files, vec![("STATUS_TOKEN".into(), TOKEN.into())]).await;
    // The fake's CI for `lint` fails with ruff's real log while `app/main.py` imports `os`.
    let log = corpus("logs/actions/ruff_unused_import.log");
    let script_log = log.clone();
    w.fake.set_ci_script(REPO, CHECK, move |files| {
        let main = files
            .get("app/main.py")
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        if main.contains("import os") {
            ("failure".to_string(), script_log.clone())
        } else {
            ("success".to_string(), b"All checks passed!\n".to_vec())
        }
    });
    let check = fail_check(&w, &w.head, &log);
    deliver_check(&w, check).await;
    let body = wait_comment(&w, |b| b.contains("DDS-FIX-")).await;
    let dds: ci_medic::proposal::CodeFixDds =
        serde_json::from_value(json_blocks(&body)[1].clone()).unwrap();
    let base = w.server.base.clone();
    // The server derives GitHub's web origin from GITHUB_API_URL as here.
    let web = ci_medic::setup::web_url_for_api(&w.fake.base_url());
    let dir = screenshots_dir();

    let id = dds.id.clone();
    let browser = tokio::task::spawn_blocking(move || {
        let mut b = Browser::launch(&bin);

        // No credentials: the sign-in form, and not a word about the repository.
        b.open(&format!("{base}/"));
        let text = b.eval("document.body.innerText").as_str().unwrap().to_string();
        assert!(b.eval("!!document.querySelector('#token-form')") == json!(true), "{text}");
        assert!(!text.contains(REPO), "{text}");
        assert!(!text.contains(&id), "{text}");
        b.screenshot(&dir.join("1-sign-in-required.png"));

        // A wrong token: refused, still no repository.
        b.eval(
            "document.querySelector('#token').value = 'not-the-token-at-all';\
             document.querySelector('#token-form').submit(); true",
        );
        b.wait_event("Page.loadEventFired");
        let text = b.eval("document.body.innerText").as_str().unwrap().to_string();
        assert!(text.contains("Wrong token"), "{text}");
        assert!(!text.contains(REPO), "{text}");

        // The token, typed once into the form: the session cookie carries the next pages.
        b.eval(&format!(
            "document.querySelector('#token').value = '{TOKEN}';\
             document.querySelector('#token-form').submit(); true"
        ));
        b.wait_event("Page.loadEventFired");
        assert_eq!(b.eval("location.pathname"), json!("/"));
        // The cookie is HTTP-only: scripts cannot read it.
        assert_eq!(b.eval("document.cookie"), json!(""));
        let row = b.eval(&format!(
            "(() => {{ const r = document.querySelector('tr.proposal-row[data-id=\"{id}\"]');\
               if (!r) return null;\
               const a = r.querySelector('a.pr-link');\
               return {{ text: r.innerText, href: a && a.getAttribute('href'),\
                         state: r.querySelector('.state').innerText }}; }})()"
        ));
        assert!(row.is_object(), "no row for {id}: {}", b.eval("document.body.innerHTML"));
        assert_eq!(row["href"], json!(format!("{web}/{REPO}/pull/7")));
        assert_eq!(row["state"], json!("proposed"));
        assert!(row["text"].as_str().unwrap().contains(REPO));
        // The chart: an SVG with one bar per series and day, today's failure drawn.
        let bars = b.eval("document.querySelectorAll('svg#chart rect[class^=bar-]').length");
        assert_eq!(bars, json!(90));
        let failures_today = b.eval(
            "Array.from(document.querySelectorAll('svg#chart rect.bar-0')).pop().getAttribute('height')",
        );
        assert_ne!(failures_today, json!("0.0"), "today's failure is drawn");
        let repo_row = b.eval("document.querySelector('#repos').innerText");
        assert!(repo_row.as_str().unwrap().contains(REPO));
        b.screenshot(&dir.join("2-overview.png"));

        b.open(&format!("{base}/status/proposals?state=proposed"));
        assert_eq!(
            b.eval("document.querySelectorAll('tr.proposal-row').length"),
            json!(1)
        );
        b.screenshot(&dir.join("3-proposals.png"));
        b
    })
    .await
    .unwrap();

    // A maintainer approves; ci-medic pushes the fix and CI passes on it: the verdict, the
    // fix rate and the approve-to-push time appear, from the registry's own timestamps.
    say(&w, "maintainer", &format!("/approve {}", dds.id)).await;
    wait_comment(&w, |b| {
        b.lines()
            .any(|l| l.starts_with("**Status:**") && l.contains("executed"))
    })
    .await;
    let (base, id) = (w.server.base.clone(), dds.id.clone());
    let dir = screenshots_dir();
    let mut browser = browser;
    tokio::task::spawn_blocking(move || {
        let b = &mut browser;
        b.open(&format!("{base}/"));
        let verdict = b.eval(&format!(
            "(() => {{ const r = document.querySelector('tr.proposal-row[data-id=\"{id}\"] .state');\
               return r && r.innerText; }})()"
        ));
        assert_eq!(verdict, json!("executed"));
        let repo = b.eval("document.querySelector('#repos tr.repo-row').innerText");
        let repo = repo.as_str().unwrap();
        assert!(repo.contains("100% (1/1)"), "{repo}");
        let cells: Vec<&str> = repo.split('\t').collect();
        assert_ne!(cells.last().map(|c| c.trim()), Some("–"), "approve-to-push time: {repo}");
        let executed_today = b.eval(
            "Array.from(document.querySelectorAll('svg#chart rect.bar-2')).pop().getAttribute('height')",
        );
        assert_ne!(executed_today, json!("0.0"), "today's executed fix is drawn");
        b.screenshot(&dir.join("4-executed.png"));

        // Signing out ends the session: the form again.
        b.open(&format!("{base}/"));
        b.eval("document.querySelector('#sign-out').click(); true");
        b.wait_event("Page.loadEventFired");
        b.open(&format!("{base}/"));
        assert_eq!(
            b.eval("!!document.querySelector('#token-form')"),
            json!(true)
        );
    })
    .await
    .unwrap();
}

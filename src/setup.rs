//! Creating the GitHub App: the manifest, the one-time setup flow, and the stored credentials.
//!
//! - [`manifest`] fills `app-manifest/manifest.json` for a public URL (`ci-medic manifest`).
//! - [`routes`] serve the manifest flow GitHub documents (the one Probot uses): `GET /setup`
//!   shows a page whose form posts the manifest to GitHub; GitHub creates the App and sends the
//!   browser to `GET /setup/callback?code=…&state=…`, which exchanges the code
//!   (`POST /app-manifests/{code}/conversions`) for the App id, private key and webhook secret.
//! - [`store_app`] / [`load_stored_app`] keep those in `DATA_DIR/github-app/` (directory 0700,
//!   files 0600), so the next start needs no configuration. With `DATABASE_URL` the flow
//!   stores them in the database instead, sealed with `CREDENTIALS_KEY`, where every replica
//!   finds them.
//!
//! The flow refuses to run once an App is stored: a second App cannot be created by anyone
//! who reaches the page later. Two flows finishing at once (two replicas, two tabs) store
//! insert-once ([`SharedState::store_first_app`]): the first App stays, and the second
//! callback says so and serves with it. The `state` parameter is random, single-use (for one hour) and
//! checked on the callback, so a callback not started from this server's page is refused. It
//! is kept in the store ([`SharedState::put_once`]), so the callback may reach another
//! replica than the page did, or the same one after a restart; every replica in setup mode
//! moves on to serving once the App is stored, whichever replica stored it.
//!
//! This module must never log, print or put in an error the private key or webhook secret,
//! and never write them with permissions wider than owner-only.

use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::{error, info, warn};

use crate::store::shared_state::{FirstApp, SharedState};
use crate::store::web_state::{OnceKind, TokenDigest};

/// The manifest template; `{public_url}` and `{name}` are filled in by [`manifest_named`].
pub const MANIFEST_TEMPLATE: &str = include_str!("../app-manifest/manifest.json");

/// Default App name.
pub const DEFAULT_APP_NAME: &str = "ci-medic";

/// Where the credentials live inside `DATA_DIR`.
pub const STORED_APP_DIR: &str = "github-app";
const APP_FILE: &str = "app.json";
const KEY_FILE: &str = "private-key.pem";
const SECRET_FILE: &str = "webhook-secret";
/// The App's OAuth client secret (status page sign-in); absent for Apps stored before it was
/// kept.
const CLIENT_SECRET_FILE: &str = "client-secret";

/// How long a `state` handed out by `GET /setup` stays valid.
const STATE_TTL: Duration = Duration::from_secs(3600);
/// Outstanding states kept; older ones are dropped first (the page is unauthenticated).
const MAX_STATES: usize = 64;

/// Problems of the setup flow and the credential files. Never carries a secret.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {problem}")]
    Invalid { path: PathBuf, problem: String },
    #[error("{0}")]
    Manifest(String),
    #[error("GitHub: {0}")]
    GitHub(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SetupError + '_ {
    move |source| SetupError::Io {
        path: path.to_path_buf(),
        source,
    }
}

// ----- manifest ---------------------------------------------------------------------------------

/// The App manifest for a server reachable at `public_url`, named `ci-medic`.
///
/// Panics only if the bundled template is not valid JSON (a build defect caught by tests).
pub fn manifest(public_url: &str) -> Value {
    manifest_named(public_url, DEFAULT_APP_NAME)
}

/// The App manifest with a chosen App name.
pub fn manifest_named(public_url: &str, name: &str) -> Value {
    let base = public_url.trim().trim_end_matches('/');
    let mut v: Value = serde_json::from_str(MANIFEST_TEMPLATE).expect("bundled manifest is JSON");
    fill(&mut v, base, name);
    v
}

fn fill(v: &mut Value, url: &str, name: &str) {
    match v {
        Value::String(s) => *s = s.replace("{public_url}", url).replace("{name}", name),
        Value::Array(a) => a.iter_mut().for_each(|x| fill(x, url, name)),
        Value::Object(o) => o.values_mut().for_each(|x| fill(x, url, name)),
        _ => {}
    }
}

/// GitHub limits App names to 34 characters.
fn check_app_name(name: &str) -> Result<(), String> {
    let n = name.trim();
    if n.is_empty() || n.chars().count() > 34 {
        return Err("must be 1 to 34 characters".into());
    }
    Ok(())
}

/// Organisation logins: letters, digits and single hyphens.
fn check_org(org: &str) -> Result<(), String> {
    let ok = !org.is_empty()
        && org.len() <= 39
        && org.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !org.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err("must be an organisation login (letters, digits, hyphens)".into())
    }
}

/// Where the manifest form is posted: the user's or an organisation's "new App" page.
pub fn new_app_url(github_web_url: &str, org: Option<&str>, state: &str) -> String {
    let web = github_web_url.trim_end_matches('/');
    match org {
        Some(org) => format!("{web}/organizations/{org}/settings/apps/new?state={state}"),
        None => format!("{web}/settings/apps/new?state={state}"),
    }
}

/// The web origin matching a REST API base URL: `https://api.github.com` → `https://github.com`,
/// GitHub Enterprise Server `https://HOST/api/v3` → `https://HOST`; anything else is taken as
/// serving both (the fake GitHub does).
pub fn web_url_for_api(api_url: &str) -> String {
    let api = api_url.trim().trim_end_matches('/');
    if let Some(host) = api
        .strip_prefix("https://api.github.com")
        .filter(|rest| rest.is_empty())
        .map(|_| "https://github.com")
    {
        return host.to_string();
    }
    if let Some(stripped) = api.strip_suffix("/api/v3") {
        return stripped.to_string();
    }
    api.to_string()
}

/// `ci-medic manifest`: prints the App manifest for a public URL.
#[derive(Debug, Clone, clap::Args)]
pub struct ManifestArgs {
    /// The URL GitHub will reach this server at, e.g. `https://ci-medic.example.com`.
    #[arg(long, env = "PUBLIC_URL")]
    pub public_url: String,
    /// The App's name on GitHub (unique across GitHub, at most 34 characters).
    #[arg(long, default_value = DEFAULT_APP_NAME)]
    pub name: String,
    /// Create the App under this organisation instead of your user account.
    #[arg(long)]
    pub org: Option<String>,
    /// GitHub's web origin (GitHub Enterprise Server: https://HOST).
    #[arg(long, env = "GITHUB_WEB_URL", default_value = "https://github.com")]
    pub github_web_url: String,
}

/// Runs `ci-medic manifest`: the manifest on stdout, where to submit it on stderr.
pub fn run_manifest(args: ManifestArgs) -> ExitCode {
    let url = match crate::config::normalize_base_url(&args.public_url) {
        Ok(u) => u,
        Err(p) => {
            eprintln!("ci-medic: invalid configuration: PUBLIC_URL: {p}");
            return ExitCode::from(2);
        }
    };
    if let Err(p) = check_app_name(&args.name) {
        eprintln!("ci-medic: --name: {p}");
        return ExitCode::from(2);
    }
    if let Some(Err(p)) = args.org.as_deref().map(check_org) {
        eprintln!("ci-medic: --org: {p}");
        return ExitCode::from(2);
    }
    let web = match crate::config::normalize_base_url(&args.github_web_url) {
        Ok(u) => u,
        Err(p) => {
            eprintln!("ci-medic: invalid configuration: GITHUB_WEB_URL: {p}");
            return ExitCode::from(2);
        }
    };
    let m = manifest_named(&url, args.name.trim());
    println!(
        "{}",
        serde_json::to_string_pretty(&m).expect("manifest serialises")
    );
    let target = new_app_url(&web, args.org.as_deref(), "STATE");
    let target = target.trim_end_matches("?state=STATE");
    eprintln!(
        "Submit this JSON as the form field `manifest` (POST) to {target}, then exchange the \
         returned code with POST /app-manifests/CODE/conversions — or start `ci-medic serve` \
         without App credentials and open {url}/setup, which does both."
    );
    ExitCode::SUCCESS
}

// ----- stored credentials ------------------------------------------------------------------------

/// The App created by the setup flow, as stored in `DATA_DIR`.
#[derive(Clone)]
pub struct StoredApp {
    pub app_id: u64,
    pub private_key_pem: SecretString,
    pub webhook_secret: SecretString,
    pub slug: String,
    pub html_url: String,
    /// The App's OAuth client id and secret, for signing in to the status page with GitHub.
    pub client_id: Option<String>,
    pub client_secret: Option<SecretString>,
}

impl std::fmt::Debug for StoredApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredApp")
            .field("app_id", &self.app_id)
            .field("private_key_pem", &"[redacted]")
            .field("webhook_secret", &"[redacted]")
            .field("slug", &self.slug)
            .field("html_url", &self.html_url)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .finish()
    }
}

/// The non-secret part, `app.json`. Written last: its presence means the App is complete.
#[derive(Serialize, Deserialize)]
struct AppFile {
    app_id: u64,
    slug: String,
    html_url: String,
    created_at: chrono::DateTime<chrono::Utc>,
    /// Absent in records written before the OAuth credentials were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
}

/// The directory holding the stored App.
pub fn stored_app_dir(data_dir: &Path) -> PathBuf {
    data_dir.join(STORED_APP_DIR)
}

/// Reads the stored App, `None` when setup has not completed.
pub fn load_stored_app(data_dir: &Path) -> Result<Option<StoredApp>, SetupError> {
    let dir = stored_app_dir(data_dir);
    let app_path = dir.join(APP_FILE);
    let text = match std::fs::read_to_string(&app_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(&app_path)(e)),
    };
    let app: AppFile = serde_json::from_str(&text).map_err(|e| SetupError::Invalid {
        path: app_path.clone(),
        problem: format!("not a stored App record ({e})"),
    })?;
    let read_secret = |name: &str| -> Result<SecretString, SetupError> {
        let path = dir.join(name);
        check_owner_only(&path)?;
        let v = std::fs::read_to_string(&path).map_err(io_err(&path))?;
        if v.trim().is_empty() {
            return Err(SetupError::Invalid {
                path,
                problem: "is empty".into(),
            });
        }
        Ok(SecretString::from(v))
    };
    let pem = read_secret(KEY_FILE)?;
    if jsonwebtoken::EncodingKey::from_rsa_pem(pem.expose_secret().as_bytes()).is_err() {
        return Err(SetupError::Invalid {
            path: dir.join(KEY_FILE),
            problem: "not an RSA private key in PEM format".into(),
        });
    }
    let secret = read_secret(SECRET_FILE)?;
    let client_secret = if dir.join(CLIENT_SECRET_FILE).exists() {
        let s = read_secret(CLIENT_SECRET_FILE)?;
        Some(SecretString::from(s.expose_secret().trim().to_string()))
    } else {
        None
    };
    Ok(Some(StoredApp {
        app_id: app.app_id,
        private_key_pem: pem,
        webhook_secret: SecretString::from(secret.expose_secret().trim().to_string()),
        slug: app.slug,
        html_url: app.html_url,
        client_id: app.client_id,
        client_secret,
    }))
}

/// A secret file readable by anyone but its owner is refused, as ssh refuses a key: someone
/// has widened it and the operator should know.
fn check_owner_only(path: &Path) -> Result<(), SetupError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path).map_err(io_err(path))?;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(SetupError::Invalid {
                path: path.to_path_buf(),
                problem: format!(
                    "is accessible to other users (mode {mode:o}); run chmod 600 on it"
                ),
            });
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Stores the App: secrets first, `app.json` last, each written to a temporary file with mode
/// 0600 and renamed into place, in a 0700 directory.
pub fn store_app(data_dir: &Path, app: &StoredApp) -> Result<(), SetupError> {
    let dir = stored_app_dir(data_dir);
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io_err(&dir))?;
    }
    write_private(
        &dir,
        KEY_FILE,
        app.private_key_pem.expose_secret().as_bytes(),
    )?;
    write_private(
        &dir,
        SECRET_FILE,
        app.webhook_secret.expose_secret().as_bytes(),
    )?;
    if let Some(cs) = &app.client_secret {
        write_private(&dir, CLIENT_SECRET_FILE, cs.expose_secret().as_bytes())?;
    }
    let record = AppFile {
        app_id: app.app_id,
        slug: app.slug.clone(),
        html_url: app.html_url.clone(),
        created_at: chrono::Utc::now(),
        client_id: app.client_id.clone(),
    };
    let json = serde_json::to_vec_pretty(&record).expect("app record serialises");
    write_private(&dir, APP_FILE, &json)?;
    // The renames must survive a crash too.
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Stores the App unless one is stored already ([`SharedState::store_first_app`] on sled).
/// One process uses a `DATA_DIR` (sled locks it), so a lock in the process makes the check
/// and the write one step: the second writer would otherwise overwrite the first one's key
/// files before finding its `app.json`.
pub fn store_first_app(
    data_dir: &Path,
    app: &StoredApp,
) -> Result<crate::store::shared_state::FirstApp, SetupError> {
    use crate::store::shared_state::FirstApp;
    static STORING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = STORING.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(stored) = load_stored_app(data_dir)? {
        return Ok(FirstApp::AlreadySetUp(stored));
    }
    store_app(data_dir, app)?;
    Ok(FirstApp::Stored)
}

fn write_private(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), SetupError> {
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp"));
    let _ = std::fs::remove_file(&tmp);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&tmp).map_err(io_err(&tmp))?;
    f.write_all(bytes).map_err(io_err(&tmp))?;
    f.sync_all().map_err(io_err(&tmp))?;
    drop(f);
    std::fs::rename(&tmp, &path).map_err(io_err(&path))?;
    Ok(())
}

// ----- the flow ----------------------------------------------------------------------------------

/// Settings of setup mode (`ci-medic serve` with no App configured or stored).
#[derive(Debug, Clone)]
pub struct SetupConfig {
    pub host: IpAddr,
    pub port: u16,
    pub github_api_url: String,
    pub github_web_url: String,
    /// When unset, derived from each request's `Host` / `X-Forwarded-Proto` headers.
    pub public_url: Option<String>,
}

#[derive(Clone)]
struct SetupState {
    /// Where the `state` tokens are kept and the App is stored: sled with `DATA_DIR`'s files,
    /// or PostgreSQL shared by every replica (sealed with `CREDENTIALS_KEY`).
    shared: Arc<dyn SharedState>,
    github_api_url: String,
    github_web_url: String,
    public_url: Option<String>,
    /// Serialises code exchanges so two callbacks cannot both create and store an App.
    exchange: Arc<tokio::sync::Mutex<()>>,
    http: reqwest::Client,
    created: tokio::sync::watch::Sender<Option<StoredApp>>,
}

/// The `/setup` and `/setup/callback` routes over `shared` (see [`SetupState`]). Both answer
/// 410 once an App is stored.
pub fn routes(
    shared: Arc<dyn SharedState>,
    github_api_url: String,
    github_web_url: String,
    public_url: Option<String>,
) -> Router {
    let (tx, _rx) = tokio::sync::watch::channel(None);
    routes_with(shared, github_api_url, github_web_url, public_url, tx)
}

fn routes_with(
    shared: Arc<dyn SharedState>,
    github_api_url: String,
    github_web_url: String,
    public_url: Option<String>,
    created: tokio::sync::watch::Sender<Option<StoredApp>>,
) -> Router {
    let http = reqwest::Client::builder()
        .user_agent(concat!("ci-medic/", env!("CARGO_PKG_VERSION")))
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("HTTP client builds");
    let state = SetupState {
        shared,
        github_api_url: github_api_url.trim_end_matches('/').to_string(),
        github_web_url: github_web_url.trim_end_matches('/').to_string(),
        public_url: public_url.map(|u| u.trim_end_matches('/').to_string()),
        exchange: Arc::new(tokio::sync::Mutex::new(())),
        http,
        created,
    };
    Router::new()
        .route("/setup", get(setup_page))
        .route("/setup/callback", get(callback))
        .with_state(state)
}

/// How setup mode ended.
#[derive(Debug)]
pub enum SetupOutcome {
    /// The App was created and stored; start the service with it.
    Created(StoredApp),
    /// Shut down before the App was created.
    Stopped,
}

/// How often setup mode looks whether another replica stored the App.
const STORED_POLL: Duration = Duration::from_secs(1);

/// Serves setup mode (`/setup`, `/setup/callback`, `/healthz`, `/readyz`) over `shared` until
/// the App is created — by this replica's callback or by another replica's on the same
/// database — or `shutdown` completes. Prints `listening on ADDR` once bound, like `serve`.
pub async fn serve_setup(
    config: SetupConfig,
    shared: Arc<dyn SharedState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<SetupOutcome, SetupError> {
    let (tx, mut rx) = tokio::sync::watch::channel(None);
    let watcher = tokio::spawn(watch_stored(shared.clone(), tx.clone()));
    let app = routes_with(
        shared,
        config.github_api_url.clone(),
        config.github_web_url.clone(),
        config.public_url.clone(),
        tx,
    )
    .route("/healthz", get(|| async { "ok\n" }))
    .route(
        "/readyz",
        get(|| async {
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "setup: waiting for the GitHub App to be created at /setup\n",
            )
        }),
    );
    let addr = std::net::SocketAddr::new(config.host, config.port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| SetupError::Io {
            path: PathBuf::from(addr.to_string()),
            source: e,
        })?;
    let local = listener.local_addr().map_err(|e| SetupError::Io {
        path: PathBuf::from(addr.to_string()),
        source: e,
    })?;
    let shown = config
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{local}"));
    info!(addr = %local, "no GitHub App configured: setup mode; open {shown}/setup");
    println!("listening on {local}");
    println!("setup: open {shown}/setup to create the GitHub App");

    let mut wait_rx = rx.clone();
    let created = async move {
        let _ = wait_rx.wait_for(|v| v.is_some()).await;
    };
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            tokio::select! {
                _ = shutdown => {},
                _ = created => {},
            }
        })
        .await
        .map_err(|e| SetupError::Io {
            path: PathBuf::from(local.to_string()),
            source: e,
        })?;
    watcher.abort();
    let created = rx.borrow_and_update().clone();
    Ok(match created {
        Some(app) => SetupOutcome::Created(app),
        None => SetupOutcome::Stopped,
    })
}

/// Ends setup mode once the App is in the store, whoever stored it: the browser may have come
/// back to another replica. A store that does not answer is logged and asked again.
async fn watch_stored(
    shared: Arc<dyn SharedState>,
    created: tokio::sync::watch::Sender<Option<StoredApp>>,
) {
    loop {
        tokio::time::sleep(STORED_POLL).await;
        match shared.load_app().await {
            Ok(Some(app)) => {
                info!(
                    app_id = app.app_id,
                    "the GitHub App was stored by another replica"
                );
                created.send_if_modified(|v| {
                    let first = v.is_none();
                    if first {
                        *v = Some(app);
                    }
                    first
                });
                return;
            }
            Ok(None) => {}
            Err(e) => warn!(error = %e, "setup mode cannot read the store; trying again"),
        }
    }
}

fn page(status: StatusCode, title: &str, body_html: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <title>{t} · ci-medic</title>\
         <style>body{{font-family:system-ui,sans-serif;max-width:44rem;margin:3rem auto;padding:0 1rem;line-height:1.5}}\
         code,pre{{background:#f4f4f4;padding:.1rem .3rem}}pre{{padding:.8rem;overflow:auto}}\
         button{{font-size:1rem;padding:.5rem 1rem}}</style></head>\
         <body><h1>{t}</h1>\n{body_html}\n</body></html>\n",
        t = escape(title)
    );
    (
        status,
        [
            ("cache-control", "no-store"),
            ("x-frame-options", "DENY"),
            (
                "content-security-policy",
                "default-src 'none'; style-src 'unsafe-inline'; form-action *",
            ),
        ],
        Html(html),
    )
        .into_response()
}

/// HTML-escapes text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn already_set_up(app: &StoredApp) -> Response {
    page(
        StatusCode::GONE,
        "ci-medic is already set up",
        &format!(
            "<p>The GitHub App <a href=\"{u}\">{s}</a> (id {id}) is stored (in this server's data \
             directory, or in the database with <code>DATABASE_URL</code>), so the setup flow is \
             switched off. To start over, stop ci-medic and remove <code>DATA_DIR/{dir}</code> \
             (or the database's <code>app_credentials</code> row).</p>",
            u = escape(&app.html_url),
            s = escape(&app.slug),
            id = app.app_id,
            dir = STORED_APP_DIR,
        ),
    )
}

/// `Some(answer)` when the flow must stop here: an App is stored (410) or unreadable (500).
async fn stored_gate(shared: &dyn SharedState) -> Option<Response> {
    match shared.load_app().await {
        Ok(None) => None,
        Ok(Some(app)) => Some(already_set_up(&app)),
        Err(e) => {
            error!(error = %e, "cannot read the stored GitHub App");
            Some(page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Stored App unreadable",
                &format!("<p>{}</p>", escape(&e.to_string())),
            ))
        }
    }
}

fn store_unavailable() -> Response {
    page(
        StatusCode::SERVICE_UNAVAILABLE,
        "Store unavailable",
        "<p>The store that keeps the setup flow's state does not answer. Try again shortly.</p>",
    )
}

/// 16 bytes from the OS's CSPRNG, hex-encoded.
fn random_state() -> Result<String, getrandom::Error> {
    let mut buf = [0u8; 16];
    getrandom::fill(&mut buf)?;
    Ok(hex::encode(buf))
}

#[derive(Deserialize)]
struct SetupQuery {
    org: Option<String>,
}

async fn setup_page(
    State(s): State<SetupState>,
    headers: HeaderMap,
    Query(q): Query<SetupQuery>,
) -> Response {
    if let Some(stop) = stored_gate(s.shared.as_ref()).await {
        return stop;
    }
    let org = q.org.filter(|o| !o.is_empty());
    if let Some(Err(p)) = org.as_deref().map(check_org) {
        return page(
            StatusCode::BAD_REQUEST,
            "Invalid organisation",
            &format!("<p>org {}</p>", escape(&p)),
        );
    }
    let (public_url, derived) = match &s.public_url {
        Some(u) => (u.clone(), false),
        None => match url_from_headers(&headers) {
            Some(u) => (u, true),
            None => {
                return page(
                    StatusCode::BAD_REQUEST,
                    "Public URL unknown",
                    "<p>Set <code>PUBLIC_URL</code> to the address GitHub reaches this server at \
                     and restart.</p>",
                );
            }
        },
    };
    let state = match random_state() {
        Ok(st) => st,
        Err(e) => {
            error!(error = %e, "the operating system's random number generator failed");
            return page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "No randomness",
                "<p>The server could not get random bytes from the operating system.</p>",
            );
        }
    };
    let now = chrono::Utc::now();
    let ttl = chrono::Duration::from_std(STATE_TTL).unwrap_or(chrono::Duration::MAX);
    if let Err(e) = s
        .shared
        .put_once(
            OnceKind::Setup,
            &TokenDigest::of(&state),
            now,
            now + ttl,
            MAX_STATES,
        )
        .await
    {
        error!(error = %e, "cannot store the setup flow's state");
        return store_unavailable();
    }
    let manifest = manifest(&public_url);
    let manifest_json = serde_json::to_string(&manifest).expect("manifest serialises");
    let action = new_app_url(&s.github_web_url, org.as_deref(), &state);
    let note = if derived {
        "<p><strong>PUBLIC_URL is not set</strong>, so the address below was taken from this \
         request. Check it is the one GitHub can reach before you continue.</p>"
    } else {
        ""
    };
    let owner = match &org {
        Some(o) => format!("the organisation <code>{}</code>", escape(o)),
        None => "your GitHub account".to_string(),
    };
    page(
        StatusCode::OK,
        "Create the ci-medic GitHub App",
        &format!(
            "<p>This creates a GitHub App owned by {owner}, with its webhook pointing at \
             <code>{hook}</code>. GitHub will show you the App's permissions before anything is \
             created; the App id, private key and webhook secret come back to this server and are \
             stored in its data directory (owner-only files), or sealed in its database.</p>{note}\
             <form method=\"post\" action=\"{action}\">\
             <input type=\"hidden\" name=\"manifest\" value=\"{m}\">\
             <button type=\"submit\">Create the GitHub App on GitHub</button></form>\
             <p>For an organisation, open <code>/setup?org=NAME</code>.</p>\
             <details><summary>Manifest</summary><pre>{pretty}</pre></details>",
            hook = escape(&format!("{public_url}/api/github/webhooks")),
            action = escape(&action),
            m = escape(&manifest_json),
            pretty = escape(&serde_json::to_string_pretty(&manifest).expect("serialises")),
        ),
    )
}

/// `https://host` from `Host` and `X-Forwarded-Proto` (default `http`), when both are sane.
pub(crate) fn url_from_headers(headers: &HeaderMap) -> Option<String> {
    let host = headers
        .get("x-forwarded-host")
        .or_else(|| headers.get("host"))?
        .to_str()
        .ok()?;
    if host.is_empty()
        || !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))
    {
        return None;
    }
    let proto = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .filter(|p| matches!(*p, "http" | "https"))
        .unwrap_or("http");
    Some(format!("{proto}://{host}"))
}

#[derive(Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
}

/// The part of GitHub's conversion answer ci-medic keeps.
#[derive(Deserialize)]
struct Conversion {
    id: u64,
    slug: String,
    html_url: String,
    pem: Option<String>,
    webhook_secret: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    client_secret: Option<String>,
}

async fn callback(State(s): State<SetupState>, Query(q): Query<CallbackQuery>) -> Response {
    if let Some(stop) = stored_gate(s.shared.as_ref()).await {
        return stop;
    }
    let bad = |msg: &str| {
        page(
            StatusCode::BAD_REQUEST,
            "Setup refused",
            &format!("<p>{msg}</p>"),
        )
    };
    // Single use: the state is removed whatever happens next, on whichever replica (the
    // browser may come back to another one than it started on).
    let fresh = match q.state.as_deref() {
        None => false,
        Some(st) => match s
            .shared
            .take_once(OnceKind::Setup, &TokenDigest::of(st), chrono::Utc::now())
            .await
        {
            Ok(fresh) => fresh,
            Err(e) => {
                error!(error = %e, "cannot read the setup flow's state");
                return store_unavailable();
            }
        },
    };
    if !fresh {
        warn!("setup callback with an unknown or expired state refused");
        return bad(
            "This callback was not started from this server's <a href=\"/setup\">setup page</a>, \
             or it expired. Start again from the setup page.",
        );
    }
    let Some(code) = q
        .code
        .filter(|c| !c.is_empty() && c.len() <= 128)
        .filter(|c| {
            c.chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')
        })
    else {
        return bad("GitHub did not return a valid <code>code</code>.");
    };

    let _guard = s.exchange.lock().await;
    if let Some(stop) = stored_gate(s.shared.as_ref()).await {
        return stop;
    }
    let app = match exchange(&s, &code).await {
        Ok(app) => app,
        Err(e) => {
            error!(error = %e, "App manifest conversion failed");
            return page(
                StatusCode::BAD_GATEWAY,
                "Could not finish creating the App",
                &format!(
                    "<p>{}</p><p>Start again from the <a href=\"/setup\">setup page</a>. If the \
                     App was created on GitHub, delete it there first.</p>",
                    escape(&e.to_string())
                ),
            );
        }
    };
    let first = match s.shared.store_first_app(&app).await {
        Ok(first) => first,
        Err(e) => {
            error!(error = %e, "cannot store the GitHub App credentials");
            return page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Could not store the App",
                &format!(
                    "<p>{}</p><p>The App exists on GitHub but its credentials could not be saved. \
                     Delete it on GitHub, fix the data directory and start again.</p>",
                    escape(&e.to_string())
                ),
            );
        }
    };
    if let FirstApp::AlreadySetUp(stored) = first {
        // Another setup flow (on another replica, or started from a second tab) stored its
        // App first: that one stays, this replica serves with it, and the App just created
        // on GitHub is left for the operator to delete.
        warn!(
            app_id = app.app_id,
            stored_app_id = stored.app_id,
            "another setup flow stored its GitHub App first; this one was not stored"
        );
        let body = format!(
            "<p>This ci-medic is already set up with App <a href=\"{u}\">{slug}</a> (id {id}): \
             another setup flow finished first, and ci-medic serves with that App.</p>\
             <p>The App this flow just created on GitHub, <a href=\"{nu}\">{nslug}</a> (id \
             {nid}), was not stored and is not used: delete it on GitHub (its settings, \
             Advanced, Delete GitHub App).</p>",
            u = escape(&stored.html_url),
            slug = escape(&stored.slug),
            id = stored.app_id,
            nu = escape(&app.html_url),
            nslug = escape(&app.slug),
            nid = app.app_id,
        );
        s.created.send_if_modified(|v| {
            let first = v.is_none();
            if first {
                *v = Some(stored);
            }
            first
        });
        return page(StatusCode::CONFLICT, "ci-medic is already set up", &body);
    }
    info!(app_id = app.app_id, slug = %app.slug, "GitHub App created and stored");
    let install = format!("{}/installations/new", app.html_url);
    let body = format!(
        "<p>The GitHub App <a href=\"{u}\">{slug}</a> (id {id}) was created and its credentials \
         stored. ci-medic now starts with them; the setup pages are switched off.</p>\
         <p>Next: <a href=\"{i}\">install the App</a> on the repositories it should watch.</p>",
        u = escape(&app.html_url),
        slug = escape(&app.slug),
        id = app.app_id,
        i = escape(&install),
    );
    let _ = s.created.send(Some(app));
    page(StatusCode::OK, "ci-medic is set up", &body)
}

async fn exchange(s: &SetupState, code: &str) -> Result<StoredApp, SetupError> {
    let url = format!("{}/app-manifests/{code}/conversions", s.github_api_url);
    let resp = s
        .http
        .post(&url)
        .header("accept", "application/vnd.github+json")
        .header("x-github-api-version", "2022-11-28")
        .send()
        .await
        .map_err(|e| SetupError::GitHub(format!("cannot reach {}: {e}", s.github_api_url)))?;
    let status = resp.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Err(SetupError::GitHub(
            "the code is unknown, already used or expired (codes last one hour)".into(),
        ));
    }
    if status != reqwest::StatusCode::CREATED && status != reqwest::StatusCode::OK {
        return Err(SetupError::GitHub(format!(
            "the manifest conversion answered {status}"
        )));
    }
    let body = resp
        .bytes()
        .await
        .map_err(|e| SetupError::GitHub(format!("reading the conversion: {e}")))?;
    // The body holds the private key: parse errors must not echo it.
    let c: Conversion = serde_json::from_slice(&body).map_err(|e| {
        SetupError::GitHub(format!(
            "the conversion is not the expected JSON (line {}, column {})",
            e.line(),
            e.column()
        ))
    })?;
    let pem = c
        .pem
        .filter(|p| jsonwebtoken::EncodingKey::from_rsa_pem(p.as_bytes()).is_ok())
        .ok_or_else(|| SetupError::GitHub("the conversion holds no RSA private key".into()))?;
    let secret = c
        .webhook_secret
        .filter(|w| !w.trim().is_empty())
        .ok_or_else(|| {
            SetupError::GitHub(
                "the App has no webhook secret; ci-medic refuses unsigned webhooks".into(),
            )
        })?;
    if c.id == 0 {
        return Err(SetupError::GitHub("the conversion has no App id".into()));
    }
    Ok(StoredApp {
        app_id: c.id,
        private_key_pem: SecretString::from(pem),
        webhook_secret: SecretString::from(secret),
        slug: c.slug,
        html_url: c.html_url,
        client_id: c.client_id.filter(|s| !s.trim().is_empty()),
        client_secret: c
            .client_secret
            .filter(|s| !s.trim().is_empty())
            .map(SecretString::from),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_states_are_random_hex() {
        let (a, b) = (random_state().unwrap(), random_state().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn manifest_is_filled_everywhere() {
        let m = manifest("https://medic.example.com/");
        assert_eq!(m["url"], "https://medic.example.com");
        assert_eq!(
            m["hook_attributes"]["url"],
            "https://medic.example.com/api/github/webhooks"
        );
        assert_eq!(
            m["redirect_url"],
            "https://medic.example.com/setup/callback"
        );
        assert_eq!(m["name"], "ci-medic");
        assert!(!m.to_string().contains("{public_url}"));
        assert!(!m.to_string().contains("{name}"));
    }

    #[test]
    fn web_urls() {
        assert_eq!(
            web_url_for_api("https://api.github.com"),
            "https://github.com"
        );
        assert_eq!(
            web_url_for_api("https://api.github.com/"),
            "https://github.com"
        );
        assert_eq!(
            web_url_for_api("https://ghe.corp/api/v3"),
            "https://ghe.corp"
        );
        assert_eq!(web_url_for_api("http://127.0.0.1:9"), "http://127.0.0.1:9");
        assert_eq!(
            new_app_url("https://github.com", Some("acme"), "s1"),
            "https://github.com/organizations/acme/settings/apps/new?state=s1"
        );
        assert_eq!(
            new_app_url("https://github.com/", None, "s1"),
            "https://github.com/settings/apps/new?state=s1"
        );
    }

    #[test]
    fn names_and_orgs() {
        assert!(check_app_name("ci-medic").is_ok());
        assert!(check_app_name("").is_err());
        assert!(check_app_name(&"x".repeat(35)).is_err());
        assert!(check_org("acme-corp").is_ok());
        assert!(check_org("acme/../x").is_err());
        assert!(check_org("-x").is_err());
    }

    #[test]
    fn escaping() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn states_are_random_hex() {
        let a = random_state().unwrap();
        let b = random_state().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }

    #[test]
    fn stored_app_round_trip_and_debug_redacts() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load_stored_app(dir.path()).unwrap().is_none());
        let app = StoredApp {
            app_id: 42,
            private_key_pem: SecretString::from(
                include_str!("../fixtures/keys/test-app.pem").to_string(),
            ),
            webhook_secret: SecretString::from("hook-s3cret".to_string()),
            slug: "ci-medic".into(),
            html_url: "https://github.com/apps/ci-medic".into(),
            client_id: Some("Iv1.0123456789abcdef".into()),
            client_secret: Some(SecretString::from("oauth-s3cret".to_string())),
        };
        store_app(dir.path(), &app).unwrap();
        let back = load_stored_app(dir.path()).unwrap().unwrap();
        assert_eq!(back.app_id, 42);
        assert_eq!(back.webhook_secret.expose_secret(), "hook-s3cret");
        assert_eq!(back.client_id.as_deref(), Some("Iv1.0123456789abcdef"));
        assert_eq!(
            back.client_secret.as_ref().map(|s| s.expose_secret()),
            Some("oauth-s3cret")
        );
        let dbg = format!("{back:?}");
        assert!(!dbg.contains("hook-s3cret") && !dbg.contains("PRIVATE KEY"));
        assert!(!dbg.contains("oauth-s3cret"));
        // An App stored before the OAuth pair was kept still loads, without it.
        std::fs::remove_file(stored_app_dir(dir.path()).join(CLIENT_SECRET_FILE)).unwrap();
        let app_json = stored_app_dir(dir.path()).join(APP_FILE);
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&app_json).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("client_id");
        std::fs::write(&app_json, v.to_string()).unwrap();
        let old = load_stored_app(dir.path()).unwrap().unwrap();
        assert!(old.client_id.is_none() && old.client_secret.is_none());
    }

    #[cfg(unix)]
    #[test]
    fn widened_secret_files_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let app = StoredApp {
            app_id: 1,
            private_key_pem: SecretString::from(
                include_str!("../fixtures/keys/test-app.pem").to_string(),
            ),
            webhook_secret: SecretString::from("s".to_string()),
            slug: "x".into(),
            html_url: "https://x".into(),
            client_id: None,
            client_secret: None,
        };
        store_app(dir.path(), &app).unwrap();
        let key = stored_app_dir(dir.path()).join(KEY_FILE);
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = load_stored_app(dir.path()).unwrap_err();
        assert!(e.to_string().contains("chmod 600"), "{e}");
    }
}

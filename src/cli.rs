//! The command line: `serve`, `analyze`, `demo`, `exec`, `manifest`, `jobs`.
//!
//! `anyhow` is used only here, at the binary's edge; every error ends as one clear line on
//! stderr and a non-zero exit code.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

mod progress;

use crate::config::{LogFormat, ServeArgs};
use crate::jobs::RetryPolicy;
use crate::metrics::Metrics;
use crate::orchestrator::{Context, Orchestrator};
use crate::server::{
    HttpLimits, ServeOptions, init_tracing, init_tracing_with, serve, shutdown_signal,
};
use crate::store::Store;

#[derive(Debug, Parser)]
#[command(
    name = "ci-medic",
    version,
    about = "Turns failed CI checks on pull requests into reviewed, minimal fixes"
)]
pub struct Cli {
    /// Log format (text or json).
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Text, global = true)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the GitHub App: webhook intake, job workers, health and metrics.
    Serve(ServeArgs),
    /// Read a CI log and print the bug reports (or the proposal ci-medic would post).
    Analyze(AnalyzeArgs),
    /// See ci-medic work end to end against a local fake GitHub (no App needed).
    #[cfg(feature = "demo")]
    Demo,
    /// Run a workspace's build in the Docker sandbox and print the executor's result.
    Exec(crate::executor::ExecArgs),
    /// Print the GitHub App manifest for a public URL.
    Manifest(crate::setup::ManifestArgs),
    /// List the job queue, and put parked jobs back in it (on PostgreSQL at any time; on sled
    /// through the running server's admin API while `serve` runs).
    Jobs(JobsArgs),
    /// Apply the PostgreSQL schema's migrations (`serve` applies them at start too).
    Migrate(MigrateArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub struct MigrateArgs {
    /// The PostgreSQL database (`postgres://user:password@host/db`).
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: String,
    /// Also copy a sled `DATA_DIR`'s pending jobs (queued and parked, with their payloads),
    /// its DDS counters, failed records, proposals and fix runs into the database. `serve` on
    /// that directory must be stopped.
    #[arg(long, value_name = "DIR")]
    pub from_sled: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct JobsArgs {
    /// The directory `serve` keeps its database in.
    #[arg(long, env = "DATA_DIR", default_value = "./data")]
    pub data_dir: std::path::PathBuf,
    /// While `serve` runs (the database is then its alone): the operator token its admin API
    /// asks for.
    #[arg(long, env = "STATUS_TOKEN", hide_env_values = true)]
    pub status_token: Option<String>,
    /// The running server's URL; by default the address `serve` wrote in `DATA_DIR`.
    #[arg(long)]
    pub server: Option<String>,
    /// The PostgreSQL database `serve` keeps its state in, when it does (`DATA_DIR` is then
    /// not read).
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    #[command(subcommand)]
    pub action: JobsAction,
}

#[derive(Debug, Clone, Subcommand)]
pub enum JobsAction {
    /// Every job queued, running or parked, with its last error.
    List,
    /// Put parked jobs back in the queue, attempts reset; they run at once when `serve` runs,
    /// else at its next start.
    Retry {
        /// Job ids, as `list` prints them.
        #[arg(required_unless_present = "parked")]
        ids: Vec<u64>,
        /// Every parked job.
        #[arg(long, conflicts_with = "ids")]
        parked: bool,
    },
}

/// Output formats of `analyze`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AnalyzeFormat {
    /// One line per report: `{TYPE} error in {file} line {line} → Fix: {hint}`, then the message.
    Text,
    /// The array of bug reports.
    Json,
    /// SARIF 2.1.0, accepted by GitHub code scanning.
    Sarif,
    /// The Fix Packet v2.
    FixPacket,
    /// The code_fix DDS v2 with its failed source DDS.
    Dds,
    /// The failure's kind (code, infrastructure, flaky, configuration), its evidence lines and
    /// the bug reports, as JSON.
    Triage,
    /// GitHub Actions workflow commands (`::error file=…,line=…::…`): a workflow step's
    /// annotations on the pull request.
    Github,
    /// Reviewdog Diagnostic Format JSON, for `reviewdog -f=rdjson`.
    Rdjson,
}

#[derive(Debug, Clone, clap::Args)]
pub struct AnalyzeArgs {
    /// The log to read; `-` or nothing reads standard input.
    pub file: Option<std::path::PathBuf>,
    /// Absolute path of the checkout the log was produced in, stripped from paths.
    #[arg(long)]
    pub workspace: Option<String>,
    #[arg(long, value_enum, default_value_t = AnalyzeFormat::Text)]
    pub format: AnalyzeFormat,
    /// `owner/repo` for the DDS (`--format dds`).
    #[arg(long, default_value = "local/project")]
    pub project: String,
    /// Name of the failed check, for the Fix Packet's goal and the DDS.
    #[arg(long, default_value = "ci")]
    pub check: String,
    /// Commit the check failed on.
    #[arg(long, default_value = "0000000000000000000000000000000000000000")]
    pub commit: String,
    /// The failed scope: files the change touched (comma-separated). Default: every reported file.
    #[arg(long, value_delimiter = ',')]
    pub paths: Option<Vec<String>>,
    /// When the check failed (RFC 3339). Default: now.
    #[arg(long)]
    pub failed_at: Option<String>,
    /// A `.github/ci-medic.yml` whose constraints feed the Fix Packet and DDS.
    #[arg(long)]
    pub config: Option<std::path::PathBuf>,
    /// The check run's conclusion as GitHub gives it (`failure`, `timed_out`, `cancelled`,
    /// `startup_failure`…), for the triage (`text` and `triage` formats).
    #[arg(long)]
    pub conclusion: Option<String>,
}

/// Hands every byte the parser reads to the triage scan too, so the log is read once, however
/// large, and never held whole in memory.
struct TeeToTriage<R> {
    inner: R,
    triager: Option<ci_medic_triage::Triager>,
}

impl<R: std::io::Read> std::io::Read for TeeToTriage<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(t) = &mut self.triager {
            t.feed(&buf[..n]);
        }
        Ok(n)
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    #[cfg(feature = "demo")]
    let quiet = matches!(cli.command, Command::Demo);
    #[cfg(not(feature = "demo"))]
    let quiet = false;
    if quiet && std::env::var_os("RUST_LOG").is_none() {
        // The demo prints what a maintainer sees; the service's own logs would drown it.
        init_tracing_with(cli.log_format == LogFormat::Json, "warn");
    } else {
        init_tracing(cli.log_format == LogFormat::Json);
    }
    match cli.command {
        Command::Serve(args) => run_serve(args),
        Command::Analyze(args) => run_analyze(args),
        Command::Manifest(args) => crate::setup::run_manifest(args),
        Command::Jobs(args) => match run_jobs(args) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("ci-medic jobs: {e:#}");
                ExitCode::from(2)
            }
        },
        Command::Migrate(args) => match runtime().block_on(run_migrate(args)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("ci-medic migrate: {e:#}");
                ExitCode::from(2)
            }
        },
        Command::Exec(args) => match runtime().block_on(crate::executor::run_exec_command(args)) {
            Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            Err(e) => {
                eprintln!("ci-medic exec: {e:#}");
                ExitCode::from(2)
            }
        },
        #[cfg(feature = "demo")]
        Command::Demo => match runtime().block_on(crate::demo::run()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("ci-medic demo: {e:#}");
                ExitCode::FAILURE
            }
        },
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime starts")
}

/// `ci-medic migrate`: brings the PostgreSQL schema up to this binary's version.
async fn run_migrate(args: MigrateArgs) -> anyhow::Result<()> {
    let db = crate::store::pg::PgStore::connect(&args.database_url, 1).await?;
    let applied = db.migrate().await?;
    if applied.is_empty() {
        println!("the database is up to date");
    } else {
        for v in applied {
            println!("applied migration {v}");
        }
    }
    if let Some(dir) = &args.from_sled {
        // A missing directory would be created empty by Store::open: say so instead.
        if !dir.join("db").is_dir() {
            anyhow::bail!(
                "--from-sled {}: no ci-medic database there (expected {})",
                dir.display(),
                dir.join("db").display()
            );
        }
        let store = Store::open(dir).map_err(|e| {
            anyhow::anyhow!(
                "--from-sled {}: cannot open the sled database ({e}); stop `serve` on it first",
                dir.display()
            )
        })?;
        let copied = db.import_sled(&store).await?;
        println!(
            "copied from {}: {} queued and {} parked jobs, {} other delivery ids, {} DDS counters; {} jobs were already in the database",
            dir.display(),
            copied.queued,
            copied.parked,
            copied.deliveries,
            copied.counters,
            copied.skipped
        );
        println!(
            "copied from {}: {} failed code_change records, {} code_fix proposals (with their transitions), {} fix runs",
            dir.display(),
            copied.fix_state.failed,
            copied.fix_state.fixes,
            copied.fix_state.runs
        );
        let keys = crate::store::sealing::CredentialsKey::from_env()?;
        let shared = crate::store::pg_shared_state::PgShared::new(db.clone(), keys)
            .import_sled(&store, dir)
            .await?;
        println!(
            "copied from {}: {} test outcomes, {} re-run counters, {} installations, {} reply marks; App credentials {}",
            dir.display(),
            shared.outcomes,
            shared.reruns,
            shared.installations,
            shared.replies,
            if shared.credentials {
                "copied, sealed with CREDENTIALS_KEY"
            } else {
                "not copied"
            }
        );
        if shared.credentials_need_key {
            eprintln!(
                "ci-medic migrate: the App credentials in {} were not copied: set CREDENTIALS_KEY (or CREDENTIALS_KEY_FILE) to seal them, and run this again",
                dir.display()
            );
        }
    }
    Ok(())
}

/// `ci-medic jobs`: the operator's view of the queue. On PostgreSQL it talks to the database
/// while `serve` runs; sled lets one process open the database, so there it runs with
/// `serve` stopped and says so rather than wait.
fn run_jobs(args: JobsArgs) -> anyhow::Result<ExitCode> {
    let rt = runtime();
    if let Some(url) = &args.database_url {
        let db = rt.block_on(crate::store::pg::PgStore::connect(url, 2))?;
        let code = rt.block_on(jobs_action(&db, args.action, "any replica takes them now"))?;
        return Ok(code);
    }
    if !args.data_dir.join("db").exists() {
        anyhow::bail!(
            "DATA_DIR: no ci-medic database in {}",
            args.data_dir.display()
        );
    }
    let store = match Store::open(&args.data_dir) {
        Ok(s) => s,
        // sled is single-writer: a running `serve` holds the database, so ask it.
        Err(e) => return rt.block_on(remote_jobs(&args, e)),
    };
    let code = rt.block_on(jobs_action(
        &store,
        args.action,
        "they run at the next `ci-medic serve`",
    ))?;
    store.flush_blocking()?;
    Ok(code)
}

async fn jobs_action(
    db: &dyn crate::store::backend::Backend,
    action: JobsAction,
    when: &str,
) -> anyhow::Result<ExitCode> {
    use crate::store::{JobState, Requeue};
    let state = crate::status::data::state_name;
    Ok(match action {
        JobsAction::List => {
            let jobs = db.jobs().await?;
            if jobs.is_empty() {
                println!("no jobs: the queue is empty");
            }
            print_jobs(&jobs);
            ExitCode::SUCCESS
        }
        JobsAction::Retry { ids, parked } => {
            let ids: Vec<u64> = if parked {
                let all = db.jobs().await?;
                all.iter()
                    .filter(|j| j.state == JobState::Parked)
                    .map(|j| j.id)
                    .collect()
            } else {
                ids
            };
            let mut refused = false;
            let mut requeued = 0;
            for id in ids {
                match db.requeue_parked(id).await? {
                    Requeue::Requeued => {
                        requeued += 1;
                        println!("job {id}: queued again");
                    }
                    Requeue::Missing => {
                        refused = true;
                        eprintln!("job {id}: no such job (finished jobs are deleted)");
                    }
                    Requeue::NotParked(s) => {
                        refused = true;
                        eprintln!("job {id}: {}, not parked; left as it is", state(s));
                    }
                }
            }
            println!("{requeued} job(s) queued again: {when}");
            if refused {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        }
    })
}

fn print_jobs(jobs: &[crate::store::JobRecord]) {
    for j in jobs {
        let event = match &j.action {
            Some(a) => format!("{}.{a}", j.event),
            None => j.event.clone(),
        };
        println!(
            "{:>6}  {:<7}  attempts {:<2}  {event}  {}  delivery {}  since {}",
            j.id,
            crate::status::data::state_name(j.state),
            j.attempts,
            j.key,
            j.delivery_id,
            j.enqueued_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        );
        if let Some(e) = &j.last_error {
            println!("        last error: {e}");
        }
    }
}

/// `ci-medic jobs` while `serve` holds the database: the same through its admin API
/// (`/admin/jobs`, operator token). `open_error` is why the database could not be opened.
async fn remote_jobs(
    args: &JobsArgs,
    open_error: crate::store::StoreError,
) -> anyhow::Result<ExitCode> {
    let addr_file = args.data_dir.join(crate::status::ADDR_FILE);
    let base = match &args.server {
        Some(u) => {
            crate::config::normalize_base_url(u).map_err(|p| anyhow::anyhow!("--server: {p}"))?
        }
        None => match std::fs::read_to_string(&addr_file) {
            Ok(a) if !a.trim().is_empty() => format!("http://{}", a.trim()),
            _ => anyhow::bail!(
                "DATA_DIR: cannot open the database in {} ({open_error}), and no running `ci-medic serve` wrote its address there: stop `ci-medic serve` first (one process at a time), or pass --server URL",
                args.data_dir.display()
            ),
        },
    };
    let Some(token) = args
        .status_token
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    else {
        anyhow::bail!(
            "the database in {} is in use by a running `ci-medic serve`; to reach its admin API, set STATUS_TOKEN (here and on `serve`) — or stop `serve` first",
            args.data_dir.display()
        );
    };
    let http = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(30))
        .build()?;
    let shown = base.clone();
    let answer = |r: reqwest::Response| {
        let base = shown.clone();
        async move {
            let status = r.status();
            let body: serde_json::Value = r.json().await.unwrap_or_default();
            if status.is_success() {
                Ok(body)
            } else {
                let msg = body["message"].as_str().unwrap_or("no message").to_string();
                Err(anyhow::anyhow!(
                    "the server at {base} answered {status}: {msg}"
                ))
            }
        }
    };
    let unreachable = |e: reqwest::Error| {
        anyhow::anyhow!(
            "the database is in use, and the server at {base} cannot be reached: {}",
            e.without_url()
        )
    };
    match &args.action {
        JobsAction::List => {
            let r = http
                .get(format!("{base}/admin/jobs"))
                .bearer_auth(token)
                .send()
                .await
                .map_err(unreachable)?;
            let body = answer(r).await?;
            let jobs: Vec<crate::store::JobRecord> =
                serde_json::from_value(body["jobs"].clone())
                    .map_err(|e| anyhow::anyhow!("the server's job list is not understood: {e}"))?;
            if jobs.is_empty() {
                println!("no jobs: the queue is empty");
            }
            print_jobs(&jobs);
            Ok(ExitCode::SUCCESS)
        }
        JobsAction::Retry { ids, parked } => {
            let r = http
                .post(format!("{base}/admin/jobs/retry"))
                .bearer_auth(token)
                .json(&serde_json::json!({"ids": ids, "parked": parked}))
                .send()
                .await
                .map_err(unreachable)?;
            let body = answer(r).await?;
            let mut refused = false;
            let mut requeued = 0;
            for r in body["results"].as_array().into_iter().flatten() {
                let id = r["id"].as_u64().unwrap_or_default();
                let msg = r["message"].as_str().unwrap_or_default();
                if r["outcome"] == "requeued" {
                    requeued += 1;
                    println!("job {id}: {msg}");
                } else {
                    refused = true;
                    eprintln!("job {id}: {msg}");
                }
            }
            println!("{requeued} job(s) queued again in the running server");
            Ok(if refused {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// The stored App: from the database with `DATABASE_URL` (opened with `CREDENTIALS_KEY`),
/// else from `DATA_DIR`'s files. The first replica started with the files and the key copies
/// them into the database, so the others need no files.
fn stored_app(args: &ServeArgs) -> anyhow::Result<Option<crate::setup::StoredApp>> {
    use crate::store::shared_state::SharedState;
    // Not a PostgreSQL URL: the configuration check says so, after this.
    let url = args
        .database_url
        .as_deref()
        .map(str::trim)
        .filter(|u| u.starts_with("postgres://") || u.starts_with("postgresql://"));
    let files = || {
        crate::setup::load_stored_app(&args.data_dir).map_err(|e| anyhow::anyhow!("DATA_DIR: {e}"))
    };
    let Some(url) = url else {
        return files();
    };
    runtime().block_on(async {
        let db = crate::store::pg::PgStore::connect(url, 2).await?;
        db.migrate().await?;
        let keys = crate::store::sealing::CredentialsKey::from_env()?;
        let has_key = keys.is_some();
        let shared = crate::store::pg_shared_state::PgShared::new(db.clone(), keys);
        let found = shared.load_app().await?;
        let app = match found {
            Some(app) => Some(app),
            None => {
                let app = files()?;
                if let Some(app) = &app
                    && has_key
                {
                    shared.store_app(app).await?;
                    tracing::info!(
                        "the App credentials from DATA_DIR are now stored in the database, sealed with CREDENTIALS_KEY"
                    );
                }
                app
            }
        };
        crate::store::backend::Backend::close(&db).await?;
        Ok(app)
    })
}

/// Where setup mode keeps its `state` tokens and stores the App it creates: the sled store and
/// `DATA_DIR`'s files, or with `DATABASE_URL` the database every replica reads (the App sealed
/// with `CREDENTIALS_KEY`, which is then required: without it the App, once created on
/// GitHub, could not be stored).
async fn setup_store(
    args: &ServeArgs,
) -> anyhow::Result<Arc<dyn crate::store::shared_state::SharedState>> {
    let url = args
        .database_url
        .as_deref()
        .map(str::trim)
        .filter(|u| u.starts_with("postgres://") || u.starts_with("postgresql://"));
    let Some(url) = url else {
        let store = Store::open(&args.data_dir).map_err(|e| {
            anyhow::anyhow!(
                "DATA_DIR: cannot open the database in {}: {e}",
                args.data_dir.display()
            )
        })?;
        let shared =
            crate::store::shared_state::SledShared::open(&store)?.with_credentials(&args.data_dir);
        return Ok(Arc::new(shared));
    };
    let keys = crate::store::sealing::CredentialsKey::from_env()?.ok_or_else(|| {
        anyhow::anyhow!(
            "CREDENTIALS_KEY is not set: with DATABASE_URL the setup flow stores the App it creates in the database, sealed with that key, so that every replica finds it (make one with `openssl rand -hex 32`)"
        )
    })?;
    let db = crate::store::pg::PgStore::connect(url, 4).await?;
    db.migrate().await?;
    Ok(Arc::new(crate::store::pg_shared_state::PgShared::new(
        db,
        Some(keys),
    )))
}

fn run_serve(args: ServeArgs) -> ExitCode {
    let stored = match stored_app(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ci-medic: {e:#}");
            return ExitCode::from(2);
        }
    };
    let config = match crate::config::resolve_with_stored(args.clone(), stored) {
        Ok(crate::config::ServeMode::Run(c)) => *c,
        Ok(crate::config::ServeMode::Setup(setup)) => {
            let outcome = runtime().block_on(async {
                let shared = setup_store(&args).await?;
                crate::setup::serve_setup(setup, shared, shutdown_signal())
                    .await
                    .map_err(anyhow::Error::from)
            });
            return match outcome {
                // The App is stored now: start again, which finds it.
                Ok(crate::setup::SetupOutcome::Created(_)) => run_serve(args),
                Ok(crate::setup::SetupOutcome::Stopped) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("ci-medic: {e:#}");
                    ExitCode::FAILURE
                }
            };
        }
        Err(e) => {
            eprintln!("ci-medic: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = runtime();
    let result: anyhow::Result<()> = rt.block_on(async move {
        let store = Store::open(&config.data_dir).map_err(|e| {
            anyhow::anyhow!(
                "DATA_DIR: cannot open the database in {}: {e}",
                config.data_dir.display()
            )
        })?;
        type Shared = Arc<dyn crate::store::shared_state::SharedState>;
        let (state, shared): (Arc<dyn crate::store::backend::Backend>, Shared) =
            match &config.database_url {
                None => (
                    Arc::new(store.clone()),
                    Arc::new(
                        crate::store::shared_state::SledShared::open(&store)?
                            .with_credentials(&config.data_dir),
                    ),
                ),
                Some(url) => {
                    use secrecy::ExposeSecret;
                    // Pool: the workers, the intake's concurrent commits, and the singletons.
                    let size = (config.workers as u32 + 8).min(64);
                    let db = crate::store::pg::PgStore::connect(url.expose_secret(), size).await?;
                    db.migrate().await?;
                    let keys = crate::store::sealing::CredentialsKey::from_env()?;
                    let shared = crate::store::pg_shared_state::PgShared::new(db.clone(), keys);
                    (Arc::new(db), Arc::new(shared))
                }
            };
        let metrics = Metrics::new();
        let mut client_config =
            crate::github::GitHubClientConfig::new(config.github_api_url.clone());
        client_config.write_interval = config.github_write_interval;
        let github = crate::github::RestClient::for_app(client_config, config.app.clone())
            .map_err(|e| anyhow::anyhow!("GITHUB_API_URL: {e}"))?
            .with_metrics(metrics.clone());
        let mut ctx = Context::new(
            Arc::new(github.clone()),
            store.clone(),
            state.clone(),
            metrics.clone(),
            config.app.app_id,
        )
        .map_err(|e| anyhow::anyhow!("DATA_DIR: {e}"))?;
        ctx.shared = shared.clone();
        ctx.fix_agent = crate::fix_agent::FixAgent::from_env()
            .map_err(|e| anyhow::anyhow!("LLM_API_URL: {e}"))?;
        let pinned_images = crate::fix_agent::pins::pinned_images_limit(
            std::env::var(crate::fix_agent::pins::PINNED_IMAGES_ENV)
                .ok()
                .as_deref(),
        )
        .map_err(|e| anyhow::anyhow!(e))?;
        let docker = connect_executor().await;
        if let Some(d) = &docker {
            ctx.fix_agent = ctx.fix_agent.with_tools(
                crate::fix_agent::tool_tier::ToolTier::new(d.clone())
                    .with_pinned_images(pinned_images),
            );
        }
        ctx.executor = docker.map(|d| Arc::new(d) as Arc<dyn crate::executor::Executor>);
        ctx.rerun_timeout_minutes = config.rerun_timeout_minutes;
        ctx.verdict_timeout_minutes = config.verdict_timeout_minutes;
        let redelivery = config
            .redelivery_interval
            .map(|interval| crate::redelivery::Redelivery {
                github,
                state: state.clone(),
                shared: shared.clone(),
                metrics: metrics.clone(),
                interval,
            });
        let opts = ServeOptions {
            addr: SocketAddr::new(config.host, config.port),
            state,
            metrics,
            secrets: config.webhook_secrets.clone(),
            workers: config.workers,
            retry: RetryPolicy::default(),
            shutdown_grace: config.shutdown_grace,
            http: HttpLimits {
                header_timeout: config.request_timeout,
                max_connections: config.max_connections,
            },
            extra_routes: axum::Router::new(),
            announce: true,
            redelivery,
            status: crate::status::StatusConfig {
                token: config.status_token.clone(),
                oauth: config.oauth.clone(),
                github_web_url: match std::env::var("GITHUB_WEB_URL")
                    .ok()
                    .filter(|v| !v.trim().is_empty())
                {
                    Some(u) => crate::config::normalize_base_url(&u)
                        .map_err(|p| anyhow::anyhow!("GITHUB_WEB_URL: {p}"))?,
                    None => crate::setup::web_url_for_api(&config.github_api_url),
                },
                github_api_url: config.github_api_url.clone(),
                public_url: config.public_url.clone(),
                shared: Some(shared.clone()),
            },
            addr_file: Some(config.data_dir.join(crate::status::ADDR_FILE)),
            job_lease: Some(config.job_lease),
            reconcile_interval: Some(config.reconcile_interval),
            store: store.clone(),
        };
        serve(
            opts,
            Arc::new(Orchestrator::new(Arc::new(ctx))),
            shutdown_signal(),
        )
        .await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ci-medic: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn usage_error(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("ci-medic analyze: {msg}");
    ExitCode::from(2)
}

/// `ci-medic analyze`: exit 0 when no errors were found, 1 when some were, 2 on bad usage or
/// unreadable input.
fn run_analyze(args: AnalyzeArgs) -> ExitCode {
    use ci_medic_core::proposal::{CheckRef, FailedCheck, build_fix_packet, standalone_dds};
    use ci_medic_parser::{MAX_REPORTS, ParseOptions, parse_reader_parsed};

    let opts = ParseOptions {
        workspace: args.workspace.clone(),
    };
    let (input, total): (Box<dyn std::io::Read>, Option<u64>) = match args.file.as_deref() {
        None => (Box::new(std::io::stdin().lock()), None),
        Some(p) if p.as_os_str() == "-" => (Box::new(std::io::stdin().lock()), None),
        Some(p) => match std::fs::File::open(p) {
            Ok(f) => {
                let size = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
                (Box::new(std::io::BufReader::new(f)), size)
            }
            Err(e) => return usage_error(format!("cannot read {}: {e}", p.display())),
        },
    };
    let wants_triage = matches!(args.format, AnalyzeFormat::Text | AnalyzeFormat::Triage);
    let mut input = TeeToTriage {
        inner: progress::ProgressReader::new(input, total),
        triager: wants_triage.then(ci_medic_triage::Triager::new),
    };
    let result = parse_reader_parsed(&mut input, &opts);
    let TeeToTriage {
        inner: input,
        mut triager,
    } = input;
    input.finish();
    let reports = match result {
        Ok(parsed) => {
            // On stderr, so every output format stays as it is.
            if parsed.left_out > 0 {
                eprintln!(
                    "ci-medic analyze: more errors were found than the {MAX_REPORTS} shown \
                     ({} further findings left out)",
                    parsed.left_out
                );
            }
            parsed.reports
        }
        Err(e) => return usage_error(format!("cannot read the log: {e}")),
    };
    let config = match &args.config {
        None => ci_medic_core::repo_config::RepoConfig::default(),
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|t| {
                ci_medic_core::repo_config::RepoConfig::parse(&t).map_err(|e| e.to_string())
            }) {
            Ok(c) => c,
            Err(e) => return usage_error(format!("{}: {e}", p.display())),
        },
    };
    let failed_at = match &args.failed_at {
        None => chrono::Utc::now(),
        Some(t) => match chrono::DateTime::parse_from_rfc3339(t) {
            Ok(t) => t.with_timezone(&chrono::Utc),
            Err(e) => {
                return usage_error(format!("--failed-at `{t}` is not an RFC 3339 time: {e}"));
            }
        },
    };
    let facts = ci_medic_triage::CheckFacts {
        conclusion: args
            .conclusion
            .as_deref()
            .map(ci_medic_triage::Conclusion::parse),
        ..Default::default()
    };
    let triage = triager.take().map(|t| t.finish(&reports, &facts, &[]));
    let out = match args.format {
        AnalyzeFormat::Triage => {
            let t = triage.as_ref().expect("the triage format scans the log");
            // A struct, not `json!`, so the keys keep this order.
            #[derive(serde::Serialize)]
            struct Doc<'a> {
                kind: ci_medic_triage::FailureKind,
                evidence: &'a [ci_medic_triage::Evidence],
                rules: &'a [String],
                reports: &'a [ci_medic_parser::BugReport],
            }
            let doc = Doc {
                kind: t.kind,
                evidence: &t.evidence,
                rules: &t.rules,
                reports: &reports,
            };
            serde_json::to_string_pretty(&doc).expect("triage serialises") + "\n"
        }
        AnalyzeFormat::Text => {
            let mut s = String::new();
            if let Some(t) = &triage {
                s.push_str(&format!("kind: {}\n", t.kind));
                for e in &t.evidence {
                    s.push_str(&format!("    line {}: {}\n", e.line, e.text));
                }
            }
            for r in &reports {
                s.push_str(&ci_medic_core::formatter::format_report_line(r));
                s.push('\n');
                for line in r.message.lines() {
                    s.push_str("    ");
                    s.push_str(line);
                    s.push('\n');
                }
            }
            if reports.is_empty() {
                s.push_str("no errors found\n");
            }
            s
        }
        AnalyzeFormat::Json => {
            serde_json::to_string_pretty(&reports).expect("reports serialise") + "\n"
        }
        AnalyzeFormat::Sarif => {
            serde_json::to_string_pretty(&ci_medic_parser::sarif::to_sarif(&reports))
                .expect("sarif serialises")
                + "\n"
        }
        AnalyzeFormat::Github => ci_medic_core::output::github::commands(&reports),
        AnalyzeFormat::Rdjson => {
            serde_json::to_string_pretty(&ci_medic_core::output::rdjson::to_rdjson(&reports))
                .expect("rdjson serialises")
                + "\n"
        }
        AnalyzeFormat::FixPacket => {
            let packet = build_fix_packet(
                &CheckRef {
                    check_name: args.check.clone(),
                    head_sha: args.commit.clone(),
                },
                &reports,
                &config.constraints,
            );
            serde_json::to_string_pretty(&packet).expect("packet serialises") + "\n"
        }
        AnalyzeFormat::Dds => {
            let mut scope = args
                .paths
                .clone()
                .unwrap_or_else(|| reports.iter().map(|r| r.file_path.clone()).collect());
            scope.dedup();
            let check = FailedCheck {
                project: args.project.clone(),
                check_name: args.check.clone(),
                head_sha: args.commit.clone(),
                pr_number: None,
                changed_files: scope,
                failed_at,
            };
            if reports.is_empty() {
                eprintln!("ci-medic analyze: no errors found, so there is nothing to propose");
                return ExitCode::SUCCESS;
            }
            match standalone_dds(&check, &reports, &config.constraints) {
                Ok(bundle) => {
                    serde_json::to_string_pretty(&bundle).expect("bundle serialises") + "\n"
                }
                Err(e) => return usage_error(e),
            }
        }
    };
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(out.as_bytes()).is_err() {
        return ExitCode::from(2);
    }
    if reports.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The Docker sandbox for `verify: docker` and the fix agent's tool tier, when an engine
/// answers. Containers left by a ci-medic that died are removed before new work starts.
async fn connect_executor() -> Option<crate::executor::DockerExecutor> {
    use crate::executor::{DockerExecutor, SandboxSettings};
    match DockerExecutor::connect(SandboxSettings::default()).await {
        Ok(executor) => {
            match executor.reap_stale().await {
                Ok(reaped) if !reaped.is_empty() => {
                    tracing::info!(count = reaped.len(), "removed stale sandbox containers")
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "could not look for stale sandbox containers"),
            }
            tracing::info!(
                "Docker engine connected: `verify: docker` and the tool tier are available"
            );
            Some(executor)
        }
        Err(e) => {
            tracing::info!(reason = %e, "no Docker engine: patches of repositories with `verify: docker` will be refused");
            None
        }
    }
}

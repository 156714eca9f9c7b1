//! The command line: `serve`, `analyze`, `demo`, `exec`, `manifest`.
//!
//! `anyhow` is used only here, at the binary's edge; every error ends as one clear line on
//! stderr and a non-zero exit code.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use crate::config::{LogFormat, ServeArgs};
use crate::jobs::RetryPolicy;
use crate::metrics::Metrics;
use crate::orchestrator::{Context, Orchestrator};
use crate::server::{ServeOptions, init_tracing, serve, shutdown_signal};
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
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.log_format == LogFormat::Json);
    match cli.command {
        Command::Serve(args) => run_serve(args),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime starts")
}

fn run_serve(args: ServeArgs) -> ExitCode {
    let config = match args.validate() {
        Ok(c) => c,
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
        let metrics = Metrics::new();
        let credentials =
            crate::github::AppCredentials::new(config.app.app_id, &config.app.private_key_pem)
                .map_err(|e| anyhow::anyhow!("PRIVATE_KEY_PATH: {e}"))?;
        let github = crate::github::RestClient::for_app(
            crate::github::GitHubClientConfig::new(config.github_api_url.clone()),
            credentials,
        )
        .map_err(|e| anyhow::anyhow!("GITHUB_API_URL: {e}"))?;
        let ctx = Context::new(
            Arc::new(github),
            store.clone(),
            metrics.clone(),
            config.app.app_id,
        )
        .map_err(|e| anyhow::anyhow!("DATA_DIR: {e}"))?;
        let opts = ServeOptions {
            addr: SocketAddr::new(config.host, config.port),
            store,
            metrics,
            secrets: vec![config.webhook_secret.clone()],
            workers: config.workers,
            retry: RetryPolicy::default(),
            shutdown_grace: config.shutdown_grace,
            extra_routes: axum::Router::new(),
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

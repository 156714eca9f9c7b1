//! The HTTP service and its lifecycle: router, health, readiness, metrics, graceful shutdown.
//!
//! Shutdown (SIGTERM/SIGINT): stop accepting connections, let running jobs finish up to the
//! grace deadline, flush the store. Jobs cut off at the deadline stay `Running` in the store and
//! run again at the next start.
//!
//! Routes never do pipeline work themselves: the webhook route only persists and enqueues.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use secrecy::SecretString;
use tokio_util::sync::CancellationToken;
use tracing::{error, info};

use crate::intake::{self, Intake};
use crate::jobs::{JobHandler, Queue, RetryPolicy, Workers};
use crate::metrics::Metrics;
use crate::store::backend::Backend;
use crate::store::{DELIVERY_RETENTION, RUN_RETENTION};

/// Shared state of the HTTP routes.
#[derive(Clone)]
pub struct AppState {
    pub intake: Intake,
    pub workers_configured: usize,
    pub workers_alive: Arc<AtomicUsize>,
    /// Extra routes mounted by other stages (the setup flow).
    pub metrics: Metrics,
}

/// Builds the router. `extra` is merged in (setup pages and the like).
pub fn router(state: AppState, extra: Router) -> Router {
    let webhook = Router::new()
        .route("/api/github/webhooks", post(intake::webhook))
        // The intake enforces its own 25 MiB limit while streaming; axum's default 2 MB limit
        // would refuse legitimate large payloads.
        .layer(DefaultBodyLimit::disable())
        .with_state(state.intake.clone());
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(state)
        .merge(webhook)
        .merge(extra)
}

async fn readyz(State(s): State<AppState>) -> impl IntoResponse {
    let ready = s.intake.state.ready().await;
    let store_ok = ready.is_ok();
    let alive = s.workers_alive.load(Ordering::SeqCst);
    let workers_ok = s.workers_configured == 0 || alive > 0;
    let body = format!(
        "store: {} ({})\nworkers: {alive}/{}\nqueue_depth: {}\n",
        match &ready {
            Ok(()) => "open".to_string(),
            Err(why) => format!("unavailable ({why})"),
        },
        s.intake.state.name(),
        s.workers_configured,
        s.intake.queue.depth()
    );
    if store_ok && workers_ok {
        (StatusCode::OK, body)
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, body)
    }
}

async fn metrics(State(s): State<AppState>) -> impl IntoResponse {
    (
        [(
            "content-type",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        s.metrics.render(),
    )
}

/// Everything [`serve`] needs, already validated.
pub struct ServeOptions {
    pub addr: SocketAddr,
    /// Deliveries and jobs: the sled store itself, or PostgreSQL (`DATABASE_URL`).
    pub state: Arc<dyn Backend>,
    pub metrics: Metrics,
    pub secrets: Vec<SecretString>,
    pub workers: usize,
    pub retry: RetryPolicy,
    pub shutdown_grace: Duration,
    pub http: HttpLimits,
    pub extra_routes: Router,
    /// Print `listening on ADDR` to stdout (scripts and tests read it when `PORT=0`).
    pub announce: bool,
    /// Asks GitHub to redeliver missed webhooks, at start and periodically; `None`: never.
    pub redelivery: Option<crate::redelivery::Redelivery>,
    /// The status page and admin API (disabled by default).
    pub status: crate::status::StatusConfig,
    /// Where to write the bound address while serving (`DATA_DIR/serve.addr`), so
    /// `ci-medic jobs` finds the running server's admin API.
    pub addr_file: Option<std::path::PathBuf>,
    /// The sled store holding the registry, fix runs and installations (the status page
    /// reads it; with `DATABASE_URL` deliveries and jobs are in `state` instead).
    pub store: crate::store::Store,
    /// How long a claimed job stays a worker's without a heartbeat (default
    /// [`crate::jobs::DEFAULT_LEASE`]).
    pub job_lease: Option<Duration>,
    /// How often work in flight is reconciled (default [`RECONCILE_INTERVAL`]).
    pub reconcile_interval: Option<Duration>,
}

/// How long shutdown waits for a singleton to stop before giving its lease back.
const SINGLETON_STOP: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs the service until `shutdown` completes. Prints `listening on ADDR` once bound.
pub async fn serve(
    opts: ServeOptions,
    handler: Arc<dyn JobHandler>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let queue = Queue::load(opts.state.clone(), opts.metrics.clone(), opts.retry.clone()).await?;
    let queue = match opts.job_lease {
        Some(lease) => queue.with_lease(lease),
        None => queue,
    };
    let stop = CancellationToken::new();
    handler.attach(queue.clone());
    let workers = Workers::start(opts.workers, queue.clone(), handler.clone(), stop.clone());
    let state = AppState {
        intake: Intake {
            state: opts.state.clone(),
            queue: queue.clone(),
            metrics: opts.metrics.clone(),
            secrets: Arc::new(opts.secrets),
            budget: intake::BodyBudget::default(),
            body_timeout: opts.http.header_timeout,
        },
        workers_configured: opts.workers,
        workers_alive: workers.alive(),
        metrics: opts.metrics.clone(),
    };

    // Old records are pruned hourly, by one replica: delivery ids (GitHub only redelivers
    // recent deliveries), reply marks and finished fix runs.
    let sweep = crate::singleton::Singleton {
        state: opts.state.clone(),
        name: "prune",
        owner: queue.replica().to_string(),
        every: SWEEP_INTERVAL,
        timing: crate::singleton::DEFAULT_TIMING,
    };
    let swept = Sweep {
        state: opts.state.clone(),
        runs: opts.state.fix_state()?.runs,
        shared: opts.status.shared.clone(),
    };
    // Awaited at shutdown before the leases are given back, so none is renewed after.
    let mut singletons = vec![tokio::spawn(sweep.run(stop.clone(), move || {
        let swept = swept.clone();
        async move { swept.pass(chrono::Utc::now()).await }
    }))];

    // Work in flight (approved fixes, pushed commits waiting for CI) is resumed at start-up and
    // checked periodically, so a crash or a missed webhook does not strand it. One replica
    // reconciles at a time; one that dies holding the pass leaves it for at most 40 s
    // (`singleton::DEFAULT_TIMING`), and the replica taking it over reconciles at once.
    let reconcile_every = opts.reconcile_interval.unwrap_or(RECONCILE_INTERVAL);
    if opts.workers > 0 {
        let reconcile = crate::singleton::Singleton {
            state: queue.backend().clone(),
            name: "reconcile",
            owner: queue.replica().to_string(),
            every: reconcile_every,
            timing: crate::singleton::DEFAULT_TIMING,
        };
        let (queue, handler) = (queue.clone(), handler.clone());
        singletons.push(tokio::spawn(reconcile.run(stop.clone(), move || {
            let (queue, handler) = (queue.clone(), handler.clone());
            async move {
                for job in handler.reconcile().await {
                    enqueue_internal(&queue, job, reconcile_every).await;
                }
                if let Err(e) = queue.refresh_counts().await {
                    tracing::warn!(error = %e, "cannot count jobs");
                }
            }
        })));
    }

    // Read before listening: deliveries accepted from now on must not hide the downtime
    // before them.
    let newest_recorded = match &opts.redelivery {
        Some(_) => opts.state.newest_webhook_at().await?,
        None => None,
    };

    let listener = tokio::net::TcpListener::bind(opts.addr).await?;
    let local = listener.local_addr()?;
    // Only once listening: the deliveries GitHub sends again must find the server up.
    if let Some(redelivery) = opts.redelivery {
        singletons.push(tokio::spawn(redelivery.run(
            queue.replica().to_string(),
            crate::singleton::DEFAULT_TIMING,
            newest_recorded,
            stop.clone(),
        )));
    }
    // Written before `listening on` is announced, so whoever read that line finds it.
    if let Some(path) = &opts.addr_file
        && let Err(e) = std::fs::write(path, format!("{local}\n"))
    {
        tracing::warn!(path = %path.display(), error = %e, "cannot write the server's address; `ci-medic jobs` will need --server");
    }
    info!(addr = %local, workers = opts.workers, "listening");
    if opts.announce {
        // Tests and scripts read this line to find the port when PORT=0.
        println!("listening on {local}");
    }

    let status = crate::status::router(opts.status.clone(), opts.store.clone(), queue.clone())?;
    let app = router(state, opts.extra_routes.merge(status));
    let connections = serve_http(listener, app, opts.http, shutdown).await;
    info!("shutdown requested: no new connections; finishing running jobs");
    stop.cancel();
    // Idle keep-alive connections close now; requests in flight get the grace, as jobs do.
    let deadline = tokio::time::Instant::now() + opts.shutdown_grace;
    tokio::join!(
        async {
            if tokio::time::timeout_at(deadline, connections.shutdown())
                .await
                .is_err()
            {
                tracing::warn!("connections still open at the shutdown deadline; closed");
            }
        },
        workers.drain(opts.shutdown_grace)
    );
    // The singletons stop at `stop` (a pass in progress is dropped, as a crash would); then
    // what this replica holds goes back, so another replica takes it over at once rather
    // than when its lease would have lapsed.
    for s in singletons {
        // A store that does not answer could hold a lease call up; the lease then lapses.
        let abort = s.abort_handle();
        if tokio::time::timeout(SINGLETON_STOP, s).await.is_err() {
            abort.abort();
        }
    }
    match opts.state.release_all(queue.replica()).await {
        Ok(r) => info!(
            leases = r.leases,
            jobs = r.jobs,
            "leases given back for the other replicas"
        ),
        Err(e) => {
            tracing::warn!(error = %e, "cannot give the leases back; they lapse on their own")
        }
    }
    opts.state.close().await?;
    opts.store.flush_blocking()?;
    if let Some(path) = &opts.addr_file {
        let _ = std::fs::remove_file(path);
    }
    info!("store flushed; bye");
    Ok(())
}

/// What the HTTP server allows a client, so slow or idle ones cannot exhaust it.
#[derive(Debug, Clone, Copy)]
pub struct HttpLimits {
    /// A request's headers must arrive within this, and then its body (the webhook's);
    /// an idle keep-alive connection is closed after it too.
    pub header_timeout: Duration,
    /// Connections served at once; further ones wait in the kernel's backlog.
    pub max_connections: usize,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            header_timeout: Duration::from_secs(10),
            max_connections: 512,
        }
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then stops accepting and returns the
/// open connections, to be closed gracefully by the caller. `axum::serve` has no header
/// timeout or connection cap: a few hundred idle connections exhausted the file descriptors,
/// and its graceful shutdown waited for ever on one slow client.
async fn serve_http(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: HttpLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> hyper_util::server::graceful::GracefulShutdown {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    // HTTP/1.1 only: GitHub delivers webhooks over it, and HTTP/2 detection would first wait,
    // with no timeout, for the bytes of a client that sends none.
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            s = slots.clone().acquire_owned() => match s {
                Ok(s) => s,
                Err(_) => break,
            },
            _ = &mut shutdown => break,
        };
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // EMFILE and friends: wait a moment rather than spin.
                    error!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let conn = builder.serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(slot);
        });
    }
    graceful
}

/// How often in-flight work is reconciled unless `RECONCILE_INTERVAL_SECONDS` says otherwise.
pub const RECONCILE_INTERVAL: Duration = Duration::from_secs(120);

/// How often old records are pruned.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(3600);

/// What the hourly sweep prunes, each after its retention.
#[derive(Clone)]
pub struct Sweep {
    /// Delivery ids ([`DELIVERY_RETENTION`]).
    pub state: Arc<dyn Backend>,
    /// Finished fix runs ([`RUN_RETENTION`]).
    pub runs: Arc<dyn crate::store::proposals::Runs>,
    /// Reply marks ([`DELIVERY_RETENTION`]); `None` when the service keeps none.
    pub shared: Option<Arc<dyn crate::store::shared_state::SharedState>>,
}

impl Sweep {
    /// One sweep at `now`: what failed is logged and tried again at the next.
    pub async fn pass(&self, now: chrono::DateTime<chrono::Utc>) {
        let before = |d: Duration| now - chrono::Duration::from_std(d).unwrap_or_default();
        match self
            .state
            .prune_deliveries(before(DELIVERY_RETENTION))
            .await
        {
            Ok(n) if n > 0 => info!(pruned = n, "pruned old delivery records"),
            Ok(_) => {}
            Err(e) => error!(error = %e, "pruning delivery records failed"),
        }
        match self.runs.prune_finished(before(RUN_RETENTION)).await {
            Ok(n) if n > 0 => info!(pruned = n, "pruned finished fix runs"),
            Ok(_) => {}
            Err(e) => error!(error = %e, "pruning finished fix runs failed"),
        }
        if let Some(shared) = &self.shared {
            match shared.prune_reply_marks(before(DELIVERY_RETENTION)).await {
                Ok(n) if n > 0 => info!(pruned = n, "pruned old reply marks"),
                Ok(_) => {}
                Err(e) => error!(error = %e, "pruning reply marks failed"),
            }
        }
    }
}

/// Queues a reconciliation job unless one with the same id was queued in this interval.
async fn enqueue_internal(queue: &Queue, mut job: crate::jobs::InternalJob, every: Duration) {
    let bucket = chrono::Utc::now().timestamp() / every.as_secs().max(1) as i64;
    job.id = format!("internal-{}-{bucket}", job.id);
    if let Err(e) = crate::jobs::enqueue(queue, job).await {
        error!(error = %e, "cannot queue internal job");
    }
}

/// Completes on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// Installs the global tracing subscriber: human-readable, or JSON with `LOG_FORMAT=json`.
/// `RUST_LOG` filters (default `info`).
pub fn init_tracing(json: bool) {
    init_tracing_with(json, "info");
}

/// [`init_tracing`] with another default level when `RUST_LOG` is unset.
pub fn init_tracing_with(json: bool, default_level: &str) {
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if json {
        builder.json().flatten_event(true).try_init()
    } else {
        builder.try_init()
    };
}

//! Intake benchmark: concurrent clients POST signed, real GitHub payloads to the webhook
//! endpoint over loopback; every acknowledged delivery is durable on disk (spool fsync, group commit) before
//! its 2xx. Prints acknowledged deliveries per second and p50/p99/max latency, and where the
//! CPU went per delivery: the service's, the PostgreSQL server's (when it runs on this
//! machine), and how busy the machine's cores were, so a reader sees whether the cores bound
//! the figure.
//!
//! Run: `cargo bench --bench intake` (env: BENCH_SECONDS=10, BENCH_CLIENTS=16, BENCH_WORKERS=1).
//! Target on a 2-core machine: >= 5,000 deliveries/s, p99 < 10 ms.
//!
//! With `CI_MEDIC_TEST_DATABASE_URL` set (`.ci/postgres-setup.sh`), the same load then runs on
//! PostgreSQL, once against one `serve` and once against three replicas on one database (the
//! clients spread over them, as a reverse proxy would), each on a fresh database, in the same
//! run: sled, PostgreSQL ×1, PostgreSQL ×3. `BENCH_BACKENDS=sled,pg1,pg3` picks some.
//! Targets there: ×3 at least twice ×1's deliveries/s, p99 under 20 ms. The replicas are
//! in this one process and share its cores with the database and the load generator, so on
//! a small machine ×3 measures contention more than scale-out; the output prints the
//! database's durability settings, which the figures depend on.
//!
//! The clients are closed-loop (each sends its next delivery when the last is answered), so by
//! Little's law the mean latency is clients / throughput: 16 clients at 5,000/s is 3.2 ms,
//! while 64 would be 12.8 ms whatever the server did. 16 concurrent deliveries is already far
//! more than GitHub sends one installation at once.

/// The same allocator as the `ci-medic` binary (src/main.rs), so the figures are its own.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use ci_medic::jobs::{JobError, JobHandler, JobInput, RetryPolicy};
use ci_medic::metrics::Metrics;
use ci_medic::server::{ServeOptions, serve};
use ci_medic::store::Store;
use ci_medic::store::backend::Backend;
use ci_medic::store::pg::PgStore;
use secrecy::SecretString;

struct Noop;
#[async_trait]
impl JobHandler for Noop {
    async fn handle(&self, _: JobInput) -> Result<(), JobError> {
        Ok(())
    }
}

const SECRET: &[u8] = b"bench-secret";

fn main() {
    let shared = std::env::var_os("CI_MEDIC_SHARED_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let names = [
        ("check_run", "check_run/completed.1.payload.json"),
        ("issue_comment", "issue_comment/created.payload.json"),
        ("pull_request", "pull_request/synchronize.payload.json"),
    ];
    let mut payloads = Vec::new();
    for (event, rel) in names {
        match std::fs::read(shared.join("github/webhooks").join(rel)) {
            Ok(b) => payloads.push((event, b)),
            Err(e) => {
                eprintln!(
                    "intake bench skipped: {rel} not found under {} ({e})",
                    shared.display()
                );
                return;
            }
        }
    }
    let seconds: u64 = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let clients: usize = std::env::var("BENCH_CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    // Workers drain the queue as the service would; 0 measures the intake alone.
    let workers: usize = std::env::var("BENCH_WORKERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let database = std::env::var("CI_MEDIC_TEST_DATABASE_URL")
        .ok()
        .filter(|u| !u.is_empty());
    let backends = std::env::var("BENCH_BACKENDS").unwrap_or_else(|_| "sled,pg1,pg3".into());
    for which in backends.split(',').map(str::trim) {
        let replicas = match which {
            "sled" => 0,
            "pg1" => 1,
            "pg3" => 3,
            other => {
                eprintln!("BENCH_BACKENDS: unknown `{other}` (sled, pg1, pg3)");
                return;
            }
        };
        rt.block_on(async {
            let (label, states, _dir, bench_db, postmaster): Setup = if replicas == 0 {
                let dir = tempfile::tempdir().unwrap();
                let store = Store::open(dir.path()).unwrap();
                ("sled".into(), vec![Arc::new(store)], Some(dir), None, None)
            } else {
                let Some(base) = &database else {
                    println!(
                        "PostgreSQL ×{replicas}: skipped (CI_MEDIC_TEST_DATABASE_URL is not set)"
                    );
                    return;
                };
                let (url, name) = fresh_database(base).await;
                let mut states: Vec<Arc<dyn Backend>> = Vec::new();
                for _ in 0..replicas {
                    let db = PgStore::connect(&url, (workers as u32) + 8).await.unwrap();
                    db.migrate().await.unwrap();
                    states.push(Arc::new(db));
                }
                (
                    format!("PostgreSQL ×{replicas} ({})", durability(&url).await),
                    states,
                    None,
                    Some((base.clone(), name)),
                    postmaster(&url).await,
                )
            };
            let load = Load {
                seconds,
                clients,
                workers,
                postmaster,
            };
            run(&label, payloads.clone(), states, &load).await;
            // The database goes with the run, or every benchmark leaves one on the cluster.
            if let Some((base, name)) = bench_db {
                drop_database(&base, &name).await;
            }
        });
    }
}

/// One backend's run: its label, its stores (one per replica), the sled directory to keep
/// until the end, and the PostgreSQL database to drop then (base URL, name).
type Setup = (
    String,
    Vec<Arc<dyn Backend>>,
    Option<tempfile::TempDir>,
    Option<(String, String)>,
    Option<u32>,
);

/// A new, empty database beside the one `base` names: its URL and its name.
async fn fresh_database(base: &str) -> (String, String) {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(base).await.unwrap();
    let mut r = [0u8; 6];
    getrandom::fill(&mut r).unwrap();
    let name = format!("bench_{}", hex::encode(r));
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .unwrap();
    let url = format!("{}/{name}", base.rsplit_once('/').unwrap().0);
    (url, name)
}

/// Drops the benchmark's database, closing the connections its stores may still hold.
async fn drop_database(base: &str, name: &str) {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(base).await.unwrap();
    if let Err(e) = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .execute(&mut conn)
        .await
    {
        eprintln!("could not drop the benchmark database {name}: {e}");
    }
}

/// The server settings a commit's cost depends on.
async fn durability(url: &str) -> String {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let mut out = Vec::new();
    for setting in ["fsync", "synchronous_commit"] {
        let v: String = sqlx::query_scalar(&format!("SHOW {setting}"))
            .fetch_one(&mut conn)
            .await
            .unwrap();
        out.push(format!("{setting}={v}"));
    }
    out.join(", ")
}

/// How a run is driven and what it watches besides itself.
struct Load {
    seconds: u64,
    clients: usize,
    workers: usize,
    /// The PostgreSQL server's postmaster, when it runs on this machine: its processes' CPU
    /// is counted beside the service's.
    postmaster: Option<u32>,
}

async fn run(
    label: &str,
    payloads: Vec<(&'static str, Vec<u8>)>,
    states: Vec<Arc<dyn Backend>>,
    load: &Load,
) {
    let workers = load.workers;
    let mut addrs = Vec::new();
    let mut stops = Vec::new();
    let mut servers = Vec::new();
    for state in states {
        let (addr, stop, server) = start(state, workers).await;
        addrs.push(addr);
        stops.push(stop);
        servers.push(server);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    measure(label, payloads, &addrs, load).await;
    for stop in stops {
        let _ = stop.send(());
    }
    for server in servers {
        let _ = server.await;
    }
}

type Stop = tokio::sync::oneshot::Sender<()>;

async fn start(
    state: Arc<dyn Backend>,
    workers: usize,
) -> (
    std::net::SocketAddr,
    Stop,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    // The registry's side of the store (not measured here): a throw-away sled database that
    // lives as long as the bench.
    let side: &'static tempfile::TempDir = Box::leak(Box::new(tempfile::tempdir().unwrap()));
    let opts = ServeOptions {
        addr,
        store: Store::open(side.path()).unwrap(),
        state,
        metrics: Metrics::new(),
        secrets: vec![SecretString::from(
            String::from_utf8(SECRET.to_vec()).unwrap(),
        )],
        workers,
        retry: RetryPolicy::default(),
        shutdown_grace: Duration::from_secs(5),
        http: Default::default(),
        extra_routes: axum::Router::new(),
        announce: false,
        redelivery: None,
        status: Default::default(),
        addr_file: None,
        job_lease: None,
        reconcile_interval: None,
    };
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(opts, Arc::new(Noop), async move {
        let _ = stop_rx.await;
    }));
    (addr, stop_tx, server)
}

async fn measure(
    label: &str,
    payloads: Vec<(&'static str, Vec<u8>)>,
    addrs: &[std::net::SocketAddr],
    load: &Load,
) {
    let (seconds, clients, workers) = (load.seconds, load.clients, load.workers);
    let addrs = addrs.to_vec();
    let servers = addrs.len();
    let signed: Arc<Vec<(&'static str, bytes::Bytes, String)>> = Arc::new(
        payloads
            .into_iter()
            .map(|(e, b)| {
                let sig = ci_medic::intake::sign(SECRET, &b);
                (e, bytes::Bytes::from(b), sig)
            })
            .collect(),
    );
    let deadline = Instant::now() + Duration::from_secs(seconds);
    // The load generator runs on its own thread and single-threaded runtime, as an outside
    // client would, and speaks minimal HTTP/1.1 keep-alive over raw sockets: a general-purpose
    // client (reqwest) costs as much CPU per request as the server and would share its 2 cores.
    let started = Instant::now();
    let cpu_start = cpu_secs("/proc/self/stat");
    let db_start = load.postmaster.and_then(cluster_cpu_secs);
    let machine_start = machine_cpu_secs();
    let load_thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let mut tasks = tokio::task::JoinSet::new();
            for c in 0..clients {
                // Round robin over the replicas, as a reverse proxy spreads connections.
                tasks.spawn(client(addrs[c % addrs.len()], c, signed.clone(), deadline));
            }
            let mut all = Vec::new();
            let mut failures = 0;
            while let Some(r) = tasks.join_next().await {
                let (l, f) = r.unwrap();
                all.extend(l);
                failures += f;
            }
            (all, failures, cpu_secs("/proc/thread-self/stat"))
        })
    });
    let (mut all, failures, load_cpu) =
        tokio::task::spawn_blocking(move || load_thread.join().unwrap())
            .await
            .unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    let db_cpu = load
        .postmaster
        .and_then(cluster_cpu_secs)
        .zip(db_start)
        .map(|(end, start)| end - start);
    let machine = machine_cpu_secs()
        .zip(machine_start)
        .map(|((busy, all), (busy0, all0))| (busy - busy0, all - all0));
    // CPU the service spent (the whole process minus the load generator's thread).
    let server_cpu = cpu_secs("/proc/self/stat")
        .zip(cpu_start)
        .map(|(end, start)| end - start - load_cpu.unwrap_or(0.0));
    all.sort();
    if all.is_empty() {
        println!("intake benchmark: no delivery was acknowledged ({failures} failures)");
        return;
    }
    let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
    println!(
        "intake benchmark, {label}: {clients} concurrent clients over loopback spread over {servers} server(s), {seconds} s, {workers} worker(s) each, every answer after the delivery is durable"
    );
    println!(
        "  acknowledged deliveries: {}  (failures: {failures})",
        all.len()
    );
    println!(
        "  throughput:              {:.0} deliveries/s",
        all.len() as f64 / elapsed
    );
    println!(
        "  latency p50:             {:.2} ms",
        pct(0.50).as_secs_f64() * 1e3
    );
    println!(
        "  latency p99:             {:.2} ms",
        pct(0.99).as_secs_f64() * 1e3
    );
    println!(
        "  latency max:             {:.2} ms",
        all.last().unwrap().as_secs_f64() * 1e3
    );
    // Where the CPU went, per acknowledged delivery: whether the machine's cores, not the
    // design, bound the throughput.
    let n = all.len() as f64;
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get()) as f64;
    if let Some(cpu) = server_cpu {
        println!(
            "  service CPU per delivery: {:.0} µs  ({cpu:.2} CPU s; load generator excluded; {cores:.0} cores / that = {:.0} deliveries/s of capacity)",
            cpu / n * 1e6,
            cores * n / cpu
        );
    }
    match (db_cpu, load.postmaster) {
        (Some(db), _) => println!(
            "  database CPU per delivery: {:.0} µs  ({db:.2} CPU s, every process of the cluster: other clients of it count too)",
            db / n * 1e6
        ),
        (None, None) if label != "sled" => {
            println!("  database CPU: not measured (the server is not on this machine)")
        }
        _ => {}
    }
    if let (Some(cpu), Some(db)) = (server_cpu, db_cpu) {
        println!(
            "  service + database CPU per delivery: {:.0} µs  ({cores:.0} cores / that = {:.0} deliveries/s)",
            (cpu + db) / n * 1e6,
            cores * n / (cpu + db)
        );
    }
    if let Some((busy, total)) = machine {
        println!(
            "  machine CPU busy during the run: {:.0} % of {cores:.0} cores (everything on it, the load generator included)",
            busy / total.max(f64::EPSILON) * 100.0
        );
    }
    if label == "sled" {
        println!("  target: >= 5000 deliveries/s and p99 < 10 ms (2-core machine)");
    } else {
        println!(
            "  target: PostgreSQL ×3 >= 2 × PostgreSQL ×1 deliveries/s, p99 < 20 ms (ci-medic's CPU only above; the database's is its own process)"
        );
    }
}

/// User + system CPU seconds from a /proc `stat` file (the process's, or one thread's).
fn cpu_secs(path: &str) -> Option<f64> {
    let fields = stat_fields(path)?;
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// The postmaster of the server `url` names, when that server runs on this machine (its
/// backend's process is visible here).
async fn postmaster(url: &str) -> Option<u32> {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.ok()?;
    let backend: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut conn)
        .await
        .ok()?;
    let parent = stat_fields(&format!("/proc/{backend}/stat"))?
        .get(1)?
        .parse()
        .ok()?;
    // The backend's own name, as a check that the pid is the server's and not a namesake's.
    let comm = std::fs::read_to_string(format!("/proc/{parent}/comm")).ok()?;
    (comm.trim() == "postgres").then_some(parent)
}

/// CPU seconds of a PostgreSQL server so far: its live processes' own, and those of the
/// ones that have exited (the postmaster's waited-for children).
fn cluster_cpu_secs(postmaster: u32) -> Option<f64> {
    let own = stat_fields(&format!("/proc/{postmaster}/stat"))?;
    let field = |f: &[String], i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
    let mut ticks = field(&own, 11)? + field(&own, 12)? + field(&own, 13)? + field(&own, 14)?;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(f) = stat_fields(&format!("/proc/{pid}/stat"))
            && f.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(postmaster)
        {
            ticks += field(&f, 11).unwrap_or(0.0) + field(&f, 12).unwrap_or(0.0);
        }
    }
    Some(ticks / 100.0)
}

/// The machine's busy and total CPU seconds so far, from /proc/stat (every core).
fn machine_cpu_secs() -> Option<(f64, f64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu: Vec<f64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is inside user already).
    let total: f64 = cpu.iter().take(8).sum();
    let idle = cpu.get(3)? + cpu.get(4).unwrap_or(&0.0);
    Some(((total - idle) / 100.0, total / 100.0))
}

/// The fields of a /proc `stat` file after the command name (state first, then ppid, …).
fn stat_fields(path: &str) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(path).ok()?;
    Some(
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    )
}

/// One keep-alive connection sending deliveries back to back until `deadline`; returns the
/// latency of every acknowledged (2xx) delivery and the number of failures.
async fn client(
    addr: std::net::SocketAddr,
    c: usize,
    signed: Arc<Vec<(&'static str, bytes::Bytes, String)>>,
    deadline: Instant,
) -> (Vec<Duration>, u64) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut lat = Vec::new();
    let mut failures = 0u64;
    let mut stream: Option<tokio::net::TcpStream> = None;
    let mut req = Vec::new();
    let mut buf = vec![0u8; 4096];
    let mut i = 0usize;
    while Instant::now() < deadline {
        let (event, body, sig) = &signed[i % signed.len()];
        req.clear();
        req.extend_from_slice(
            format!(
                "POST /api/github/webhooks HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
                 x-github-event: {event}\r\nx-github-delivery: bench-{c}-{i}\r\n\
                 x-hub-signature-256: {sig}\r\ncontent-length: {}\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        );
        req.extend_from_slice(body);
        i += 1;
        let started = Instant::now();
        if stream.is_none() {
            match tokio::net::TcpStream::connect(addr).await {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    stream = Some(s);
                }
                Err(_) => {
                    failures += 1;
                    continue;
                }
            }
        }
        let s = stream.as_mut().expect("connected above");
        let ok = async {
            s.write_all(&req).await.ok()?;
            // Read the head, then as many body bytes as content-length says.
            let mut have = 0;
            let head_end = loop {
                let n = s.read(&mut buf[have..]).await.ok()?;
                if n == 0 {
                    return None;
                }
                have += n;
                if let Some(p) = buf[..have].windows(4).position(|w| w == b"\r\n\r\n") {
                    break p + 4;
                }
                if have == buf.len() {
                    return None;
                }
            };
            let head = std::str::from_utf8(&buf[..head_end]).ok()?;
            let status: u16 = head.get(9..12)?.parse().ok()?;
            let len: usize = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse().ok())?
                })
                .unwrap_or(0);
            let mut body_have = have - head_end;
            while body_have < len {
                let n = s.read(&mut buf).await.ok()?;
                if n == 0 {
                    return None;
                }
                body_have += n;
            }
            Some(status)
        }
        .await;
        match ok {
            Some(status) if (200..300).contains(&status) => lat.push(started.elapsed()),
            Some(_) => failures += 1,
            None => {
                failures += 1;
                stream = None;
            }
        }
    }
    (lat, failures)
}

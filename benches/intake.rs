//! Intake benchmark: concurrent clients POST signed, real GitHub payloads to the webhook
//! endpoint over loopback; every acknowledged delivery is durable on disk (spool fsync, group commit) before
//! its 2xx. Prints acknowledged deliveries per second and p50/p99/max latency.
//!
//! Run: `cargo bench --bench intake` (env: BENCH_SECONDS=10, BENCH_CLIENTS=16, BENCH_WORKERS=1).
//! Target on a 2-core machine: >= 5,000 deliveries/s, p99 < 10 ms.
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
    rt.block_on(run(payloads, seconds, clients, workers));
}

async fn run(payloads: Vec<(&'static str, Vec<u8>)>, seconds: u64, clients: usize, workers: usize) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let opts = ServeOptions {
        addr,
        state: Arc::new(store.clone()),
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
        job_lease: None,
    };
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(opts, Arc::new(Noop), async move {
        let _ = stop_rx.await;
    }));
    tokio::time::sleep(Duration::from_millis(300)).await;

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
    let load = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let mut tasks = tokio::task::JoinSet::new();
            for c in 0..clients {
                tasks.spawn(client(addr, c, signed.clone(), deadline));
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
    let (mut all, failures, load_cpu) = tokio::task::spawn_blocking(move || load.join().unwrap())
        .await
        .unwrap();
    let elapsed = started.elapsed().as_secs_f64();
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
    let _ = stop_tx.send(());
    let _ = server.await;
    println!(
        "intake benchmark: {clients} concurrent clients over loopback, {seconds} s, {workers} worker(s), every answer after an fsync (group commit)"
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
    if let Some(cpu) = server_cpu {
        let per = cpu / all.len() as f64 * 1e6;
        println!(
            "  service CPU per delivery: {per:.0} µs  (load generator excluded; 2 cores / that = {:.0} deliveries/s of capacity)",
            2e6 / per
        );
    }
    println!("  target: >= 5000 deliveries/s and p99 < 10 ms (2-core machine)");
}

/// User + system CPU seconds from a /proc `stat` file (the process's, or one thread's).
fn cpu_secs(path: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(path).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
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

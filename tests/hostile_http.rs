//! Slow, idle and greedy clients against the real binary: they must not exhaust connections,
//! memory or the shutdown grace, and real deliveries keep being answered.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;

fn opts<'a>(dir: &'a std::path::Path, env: &[(&str, &str)]) -> ServerOptions<'a> {
    ServerOptions {
        data_dir: dir,
        workers: 0,
        github_api_url: "http://127.0.0.1:9",
        extra_env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn addr(server: &Server) -> String {
    server.base.trim_start_matches("http://").to_string()
}

/// True when the server closes `s` (or resets it) within `within`.
fn closed_by_server(s: &mut TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            // An answer (408 and the like) before the close is fine; keep reading.
            Ok(_) => continue,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

#[tokio::test]
async fn idle_and_half_sent_connections_are_closed_and_real_ones_still_served() {
    let Some(ping) = payload("ping/payload.json") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(opts(
        dir.path(),
        &[("REQUEST_TIMEOUT_SECONDS", "1"), ("MAX_CONNECTIONS", "16")],
    ));
    let a = addr(&server);
    // More connections than the cap: some say nothing, some send half a request line.
    let mut idle: Vec<TcpStream> = (0..40)
        .map(|i| {
            let mut s = TcpStream::connect(&a).unwrap();
            if i % 2 == 0 {
                s.write_all(b"POST /api/github/webhooks HTTP/1.1\r\nHost: x\r\n")
                    .unwrap();
            }
            s
        })
        .collect();
    // A real delivery is answered once the idle ones have been closed for being too slow.
    let started = Instant::now();
    let status = tokio::time::timeout(
        Duration::from_secs(20),
        server.deliver("ping", "ping-after-idle", &ping),
    )
    .await
    .expect("a real delivery waited behind idle connections");
    assert_eq!(status, 200);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // Before the timeout, these stayed open for ever.
    let mut open = 0;
    for s in idle.iter_mut() {
        if !closed_by_server(s, Duration::from_secs(5)) {
            open += 1;
        }
    }
    assert_eq!(open, 0, "{open} idle connections were never closed");
    assert_eq!(
        reqwest::get(server.url("/healthz")).await.unwrap().status(),
        200
    );
    assert!(server.terminate().success());
}

#[tokio::test]
async fn a_body_that_stops_arriving_gets_408() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(opts(dir.path(), &[("REQUEST_TIMEOUT_SECONDS", "1")]));
    let mut s = TcpStream::connect(addr(&server)).unwrap();
    s.write_all(
        b"POST /api/github/webhooks HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: ping\r\n\
          X-GitHub-Delivery: slow-1\r\nContent-Length: 100\r\n\r\n{\"zen\":",
    )
    .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer:?}");
    assert!(server.terminate().success());
}

#[tokio::test]
async fn sigterm_does_not_wait_for_a_slow_client() {
    let dir = tempfile::tempdir().unwrap();
    // A long request timeout, so only the shutdown can end the slow client's connection.
    let server = Server::start(opts(
        dir.path(),
        &[
            ("REQUEST_TIMEOUT_SECONDS", "600"),
            ("SHUTDOWN_GRACE_SECONDS", "2"),
        ],
    ));
    let mut slow = TcpStream::connect(addr(&server)).unwrap();
    slow.write_all(
        b"POST /api/github/webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
    )
    .unwrap();
    let _idle = TcpStream::connect(addr(&server)).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    // Before, the graceful shutdown waited for these connections for ever.
    assert!(server.terminate().success());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stopping took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn unsigned_bodies_cannot_hold_more_than_the_memory_budget() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(opts(dir.path(), &[("REQUEST_TIMEOUT_SECONDS", "60")]));
    let a = addr(&server);
    let chunk = vec![b' '; 1024 * 1024];
    let head = format!(
        "POST /api/github/webhooks HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: ping\r\n\
         X-GitHub-Delivery: greedy\r\nX-Hub-Signature-256: sha256={}\r\n\
         Content-Length: {}\r\n\r\n",
        "0".repeat(64),
        25 * 1024 * 1024
    );
    // Two stalled 24 MiB bodies hold 48 of the 64 MiB; the third passes the budget and is
    // refused at once instead of taking another 24 MiB.
    let mut stalled = Vec::new();
    for _ in 0..2 {
        let mut s = TcpStream::connect(&a).unwrap();
        s.write_all(head.as_bytes()).unwrap();
        for _ in 0..24 {
            s.write_all(&chunk).unwrap();
        }
        stalled.push(s);
    }
    std::thread::sleep(Duration::from_millis(500));
    let mut third = TcpStream::connect(&a).unwrap();
    third.write_all(head.as_bytes()).unwrap();
    for _ in 0..24 {
        if third.write_all(&chunk).is_err() {
            break; // the server answered and closed while we were still sending
        }
    }
    third
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut answer = vec![0u8; 256];
    let n = third.read(&mut answer).unwrap_or(0);
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
    // Once they go away, their budget is free again: a signed delivery is accepted.
    drop(stalled);
    std::thread::sleep(Duration::from_millis(500));
    let ping = br#"{"zen":"Keep it logically awesome.","hook_id":1}"#;
    assert_eq!(server.deliver("ping", "after-greedy", ping).await, 200);
    let metrics = reqwest::get(server.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("outcome=\"busy\"} 1"), "{metrics}");
    assert!(server.terminate().success());
}

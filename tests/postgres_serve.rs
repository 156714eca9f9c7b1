//! `ci-medic serve` on PostgreSQL (`DATABASE_URL`), as the real binary: the database named
//! when it cannot be reached at start, deliveries answered 503 (never a 2xx) while it is
//! gone, and service resumed without a restart when it is back. The database is a private
//! cluster this test stops and starts (`common::pg::PgCluster`).

mod common;

use std::time::Duration;

use common::pg::PgCluster;
use common::*;

fn replica(dir: &std::path::Path, url: &str) -> Server {
    // Nothing listens on port 9; with no workers nothing calls GitHub.
    Server::replica(dir, "http://127.0.0.1:9", url, 0, &[])
}

async fn readyz(server: &Server) -> (u16, String) {
    let r = reqwest::get(server.url("/readyz")).await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test]
async fn deliveries_get_503_while_the_database_is_gone_and_202_once_it_is_back() {
    let Some(check_run) = payload("check_run/completed.payload.json") else {
        return;
    };
    let Some(pg) = PgCluster::start("database_lost_while_serving") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = replica(dir.path(), &pg.url);
    let (status, body) = readyz(&server).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("store: open (postgresql)"), "{body}");
    assert_eq!(server.deliver("check_run", "before", &check_run).await, 202);

    pg.down();
    // Every delivery while the database is away: 503, so GitHub redelivers it.
    for i in 0..3 {
        let status = server
            .deliver("check_run", &format!("during-{i}"), &check_run)
            .await;
        assert_eq!(status, 503, "delivery {i} while the database is down");
    }
    let (status, body) = readyz(&server).await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains("unavailable (PostgreSQL (DATABASE_URL)"),
        "{body}"
    );

    pg.up();
    // No restart: the pool reconnects.
    let mut status = 0;
    for _ in 0..50 {
        status = server.deliver("check_run", "during-0", &check_run).await;
        if status != 503 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(status, 202, "the redelivery of a refused delivery is new");
    assert_eq!(server.deliver("check_run", "before", &check_run).await, 200);
    assert_eq!(readyz(&server).await.0, 200);

    // What was acknowledged is in the database: exactly the two 202s' jobs.
    use ci_medic::store::backend::Backend;
    let db = ci_medic::store::pg::PgStore::connect(&pg.url, 1)
        .await
        .unwrap();
    let mut ids: Vec<String> = db
        .jobs()
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.delivery_id)
        .collect();
    ids.sort();
    assert_eq!(ids, ["before", "during-0"]);
    assert_eq!(server.terminate().code(), Some(0));
}

#[tokio::test]
async fn an_unreachable_database_at_start_is_one_line_naming_database_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let key = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/keys/test-app.pem");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ci-medic"))
        .arg("serve")
        .env_clear()
        .env("APP_ID", "4242")
        .env("PRIVATE_KEY_PATH", &key)
        .env("WEBHOOK_SECRET", SECRET)
        .env("PORT", "0")
        .env("DATA_DIR", dir.path())
        .env(
            "DATABASE_URL",
            format!("postgres://ci:pa55word@127.0.0.1:{port}/ci"),
        )
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("DATABASE_URL"), "{err}");
    assert!(err.contains("Connection refused"), "{err}");
    assert!(!err.contains("pa55word"), "{err}");
}

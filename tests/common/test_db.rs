//! The PostgreSQL databases the tests make on the shared test cluster: each is dropped when
//! the test that made it ends (its guard is dropped, also when the test panics), and the
//! leftovers of killed runs are swept once per test binary — only those older than
//! [`LEFTOVER_AGE`], so never one that another test binary, of this worktree or another one
//! on the same cluster, is using. The CI machine may keep the cluster between runs, and a
//! local cluster grew to 5 GB of them.
//!
//! A database's age: new names carry their creation time (`t_<unix seconds>_<test>_<random>`);
//! for names made before that (`t_<test>_<random>`) it is the modification time of the
//! database's `PG_VERSION` file, written when `CREATE DATABASE` made it (`pg_stat_file`,
//! allowed to the cluster's superuser, which the tests connect as). Without either it is kept.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::Connection;

/// Older than this, a test database is a leftover: no test binary runs for so long.
pub const LEFTOVER_AGE: Duration = Duration::from_secs(3 * 3600);

/// A test's database, dropped (`WITH (FORCE)`: a pool or a killed server's connections may
/// still be open) when this is dropped. Reads as its URL.
pub struct TestDatabase {
    url: String,
    name: String,
    /// The cluster's database the drop is issued from.
    admin: String,
}

impl TestDatabase {
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl std::ops::Deref for TestDatabase {
    type Target = str;
    fn deref(&self) -> &str {
        &self.url
    }
}

impl AsRef<str> for TestDatabase {
    fn as_ref(&self) -> &str {
        &self.url
    }
}

impl AsRef<std::ffi::OsStr> for TestDatabase {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.url.as_ref()
    }
}

impl fmt::Display for TestDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url)
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        // Drop runs inside the test's runtime, which cannot be blocked on: the statement goes
        // from a thread of its own, waited for so the database is gone when the test ends.
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the drop");
            rt.block_on(drop_database(&admin, &name))
        })
        .join();
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("test database {} not dropped: {e}", self.name),
            Err(_) => eprintln!(
                "test database {} not dropped: the thread panicked",
                self.name
            ),
        }
    }
}

async fn drop_database(admin: &str, name: &str) -> Result<(), sqlx::Error> {
    let mut conn = sqlx::PgConnection::connect(admin).await?;
    sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
        .execute(&mut conn)
        .await?;
    Ok(())
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The name of a new test database: `t_<unix seconds>_<test, at most 29>_<12 hex>`, at most
/// 55 bytes (PostgreSQL cuts names at 63).
pub fn database_name(test: &str, now_unix: u64, random: [u8; 6]) -> String {
    let test: String = test
        .to_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(29)
        .collect();
    format!("t_{now_unix:010}_{test}_{}", hex::encode(random))
}

/// When a name made by [`database_name`] says its database was made; `None` for other names.
pub fn created_at(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("t_")?;
    let (secs, _) = rest.split_once('_')?;
    (secs.len() == 10 && secs.bytes().all(|b| b.is_ascii_digit()))
        .then(|| secs.parse().ok())
        .flatten()
}

/// Makes a new database for `test` on the cluster `base` names; the first call of a process
/// sweeps the leftovers first.
pub async fn create(base: &str, test: &str) -> TestDatabase {
    static SWEPT: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    SWEPT.get_or_init(|| sweep(base)).await;
    let mut random = [0u8; 6];
    getrandom::fill(&mut random).expect("random bytes");
    let name = database_name(test, unix_now(), random);
    let mut conn = sqlx::PgConnection::connect(base)
        .await
        .unwrap_or_else(|e| panic!("CI_MEDIC_TEST_DATABASE_URL does not answer: {e}"));
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .expect("create the test database");
    let (prefix, _) = base.rsplit_once('/').expect("a database URL ends in /name");
    TestDatabase {
        url: format!("{prefix}/{name}"),
        name,
        admin: base.to_string(),
    }
}

/// Drops the test databases older than [`LEFTOVER_AGE`] (see the module's comment for how
/// their age is known). Said on stderr; a failure is said and the tests go on.
async fn sweep(base: &str) {
    let Ok(mut conn) = sqlx::PgConnection::connect(base).await else {
        return;
    };
    let rows: Vec<(String, Option<i64>)> = match sqlx::query_as(
        "SELECT datname, \
                CASE WHEN pg_has_role('pg_read_server_files', 'MEMBER') \
                     THEN extract(epoch FROM (pg_stat_file('base/' || oid || '/PG_VERSION', true)).modification)::bigint \
                END \
         FROM pg_database WHERE datname LIKE 't\\_%'",
    )
    .fetch_all(&mut conn)
    .await
    {
        Ok(rows) => rows,
        Err(e) => {
            eprintln!("test databases not swept: {e}");
            return;
        }
    };
    let now = unix_now();
    let (mut dropped, mut kept) = (0, 0);
    for (name, file_time) in rows {
        let made = created_at(&name).or(file_time.and_then(|t| u64::try_from(t).ok()));
        let old = made.is_some_and(|t| now.saturating_sub(t) > LEFTOVER_AGE.as_secs());
        if !old {
            kept += 1;
            continue;
        }
        match drop_database(base, &name).await {
            Ok(()) => dropped += 1,
            Err(e) => eprintln!("leftover test database {name} not dropped: {e}"),
        }
    }
    if dropped > 0 {
        eprintln!(
            "dropped {dropped} leftover test database(s) older than {} h; kept {kept}",
            LEFTOVER_AGE.as_secs() / 3600
        );
    }
}

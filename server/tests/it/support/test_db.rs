//! The database a test runs on: a temporary SQLite file, or, when `DATBAN_TEST_POSTGRES_URL`
//! holds an admin URL of a PostgreSQL server (`postgres://postgres@127.0.0.1:5432/postgres`),
//! a fresh database created there for the one test.
//!
//! The integration tests use it as `support::test_db`; the library's unit tests include the
//! same file (`db::test_pool`), so both choose the backend the same way. It only uses crates
//! both have (sqlx, tempfile, tokio, uuid).

use sqlx::{postgres::PgConnection, AssertSqlSafe, Connection, Executor};

/// The variable naming the PostgreSQL server to test on.
pub const POSTGRES_ENV: &str = "DATBAN_TEST_POSTGRES_URL";

/// `DATBAN_TEST_POSTGRES_URL`, when set and not empty.
pub fn postgres_admin_url() -> Option<String> {
    std::env::var(POSTGRES_ENV)
        .ok()
        .filter(|url| !url.is_empty())
}

/// Keeps a test database alive; dropping it removes the database.
pub enum TestDatabase {
    /// The folder holding the SQLite file.
    Sqlite(tempfile::TempDir),
    /// A database on the test server.
    Postgres {
        /// Where to connect to drop it.
        admin_url: String,
        /// Its name, `datban_t_<uuid>`.
        name: String,
    },
}

/// A URL for a new, empty database of the backend the environment asks for (not migrated:
/// `db::connect` does that), and its guard.
pub async fn test_database_url(
) -> Result<(String, TestDatabase), Box<dyn std::error::Error + Send + Sync>> {
    let Some(admin_url) = postgres_admin_url() else {
        let dir = tempfile::tempdir()
            .map_err(|error| format!("cannot create a temporary folder: {error}"))?;
        let url = format!("sqlite://{}", dir.path().join("test.db").display());
        return Ok((url, TestDatabase::Sqlite(dir)));
    };
    // A simple uuid is lower-case hex: a valid identifier that needs no quoting.
    let name = format!("datban_t_{}", uuid::Uuid::new_v4().simple());
    let mut admin = PgConnection::connect(&admin_url)
        .await
        .map_err(|error| format!("{POSTGRES_ENV}: cannot connect to the test server: {error}"))?;
    admin
        .execute(AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .map_err(|error| format!("{POSTGRES_ENV}: cannot create database {name}: {error}"))?;
    let _ = admin.close().await;
    let url = with_database(&admin_url, &name);
    Ok((url, TestDatabase::Postgres { admin_url, name }))
}

/// `admin_url` with its database (the path) replaced by `name`; user, host, port and query
/// parameters stay.
pub fn with_database(admin_url: &str, name: &str) -> String {
    let (base, query) = match admin_url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (admin_url, None),
    };
    let authority = base.find("://").map_or(0, |i| i + 3);
    let base = match base[authority..].find('/') {
        Some(slash) => &base[..authority + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{base}/{name}?{query}"),
        None => format!("{base}/{name}"),
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let TestDatabase::Postgres { admin_url, name } = self else {
            return;
        };
        let admin_url = admin_url.clone();
        // FORCE ends the test's own connections, which may still be open in its pool.
        let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
        // Drop cannot await, and a test's runtime is often one thread that is blocked
        // here: drop the database from a thread and runtime of its own. Best effort: a
        // database left behind only takes space on a test server.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let mut admin = PgConnection::connect(&admin_url).await.ok()?;
                admin.execute(AssertSqlSafe(sql)).await.ok()?;
                admin.close().await.ok()
            })
        })
        .join();
    }
}

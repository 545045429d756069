//! The application database: opening it and bringing its schema up to date.
//!
//! One code path for two backends: SQLite (a file, the default) and PostgreSQL (shared by
//! several server replicas). Every statement in the crate is written once, in SQL both
//! understand (`$1` placeholders, TEXT and INTEGER columns, `ON CONFLICT`, `RETURNING`).

use std::{fmt, path::Path, str::FromStr};

mod reads;
pub use reads::Reads;

use sqlx::{
    any::{AnyConnectOptions, AnyPoolOptions},
    sqlite::SqliteConnectOptions,
    Any, AnyConnection, Database, Executor, Transaction,
};

/// The connection pool handlers share.
pub type Pool = sqlx::AnyPool;

/// Which database server a pool talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file (or memory).
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

impl Backend {
    /// The backend a URL scheme names, if we support it.
    pub fn from_scheme(scheme: &str) -> Option<Self> {
        match scheme {
            "sqlite" => Some(Self::Sqlite),
            "postgres" | "postgresql" => Some(Self::Postgres),
            _ => None,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Sqlite => "SQLite",
            Self::Postgres => "PostgreSQL",
        })
    }
}

/// Why the database could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// `DATABASE_URL` is not a URL of a database we support. The URL itself is left out:
    /// a Postgres URL may hold a password.
    #[error("DATABASE_URL must be a sqlite:… or postgres://… URL: {0}")]
    BadUrl(String),
    /// The folder for the SQLite file could not be created.
    #[error("cannot create the folder {path} for the database: {source}")]
    CreateDir {
        /// The folder we tried to create.
        path: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// Opening the database (or connecting to the server) failed.
    #[error("cannot open the {backend} database: {source}")]
    Open {
        /// SQLite or PostgreSQL.
        backend: Backend,
        /// What sqlx said.
        source: sqlx::Error,
    },
    /// A migration failed; the database is left as the last successful migration made it.
    #[error("cannot migrate the {backend} database: {source}")]
    Migrate {
        /// SQLite or PostgreSQL.
        backend: Backend,
        /// What the migrator said.
        source: sqlx::migrate::MigrateError,
    },
}

/// Opens the database at `url` and runs pending migrations: a `sqlite:` URL opens (creating
/// if needed) a file, a `postgres://` URL connects to a server.
///
/// Replicas sharing one Postgres database may all call this at start: sqlx's migrator
/// holds an advisory lock while it migrates, so each migration runs once.
pub async fn connect(url: &str) -> Result<Pool, DbError> {
    // Idempotent (sqlx guards it with its own `Once`), so every call may make it.
    sqlx::any::install_default_drivers();
    let options = AnyConnectOptions::from_str(url).map_err(|e| DbError::BadUrl(e.to_string()))?;
    let scheme = options.database_url.scheme().to_owned();
    let backend = Backend::from_scheme(&scheme)
        .ok_or_else(|| DbError::BadUrl(format!("unsupported scheme \"{scheme}\"")))?;
    let pool = match backend {
        Backend::Sqlite => open_sqlite(url, options).await?,
        Backend::Postgres => AnyPoolOptions::new()
            .max_connections(10)
            .connect_with(options)
            .await
            .map_err(|source| DbError::Open { backend, source })?,
    };
    sqlx::migrate!("./migrations")
        .run(&pool)
        .await
        .map_err(|source| DbError::Migrate { backend, source })?;
    Ok(pool)
}

/// How many connections a SQLite database gets for reading, beside its one writer.
const SQLITE_READERS: usize = 4;

/// The SQLite settings every connection gets. journal_mode is stored in the file; the
/// others hold per connection, hence a hook on each new connection.
///
/// WAL lets readers proceed while a booking commits; NORMAL is durable in WAL mode across
/// application crashes, which is what idempotency records rely on.
///
/// The WAL is folded back into the database every 8,000 pages (32 MiB) instead of 1,000:
/// each checkpoint syncs the file, and a busy writer reached one every few hundred
/// replies. (A larger page cache was tried and cost more than it saved: SQLite walks the
/// whole cache at the end of every write transaction.)
///
/// Temporary storage stays in memory: every statement of the storer's script calls
/// functions (`json_extract`), so SQLite keeps a statement journal for it, and one past
/// 64 KiB (a busy tick) went to a new file in `/var/tmp`, created, written and deleted
/// within the transaction: several system calls per reply for a file nobody reads.
///
/// Each connection caches 256 KiB of pages (`cache_size = -256`, here and in
/// [`SQLITE_READER_PRAGMAS`]), not SQLite's 2 MiB. The default filled as the writer stored
/// new turns and events, so the writer and four readers came to hold up to 10 MiB that
/// served little: a busy server's writes touch the last pages of each table and index, and
/// its reads are the few conversations being answered, all in the operating system's cache
/// anyway. With 1,000 replies held open that was 7 KiB of the 29 KiB each cost (29.4 →
/// 22.5 KiB per reply, four runs alternated; at 10,000, 23.4 → 22.8), and `bench
/// --quick`'s CPU per run did not move beyond the machine's spread.
const SQLITE_PRAGMAS: &str = concat!(
    "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; ",
    "PRAGMA busy_timeout = 5000; PRAGMA wal_autocheckpoint = 8000; ",
    "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -256;"
);

async fn open_sqlite(url: &str, mut options: AnyConnectOptions) -> Result<Pool, DbError> {
    let backend = Backend::Sqlite;
    let sqlite = SqliteConnectOptions::from_str(url)
        .map_err(|e| DbError::BadUrl(format!("not a SQLite URL ({e})")))?;
    if let Some(parent) = Path::new(sqlite.get_filename()).parent() {
        if !parent.as_os_str().is_empty() && !parent.exists() {
            std::fs::create_dir_all(parent).map_err(|source| DbError::CreateDir {
                path: parent.display().to_string(),
                source,
            })?;
        }
    }
    // The Any driver only passes the URL on, so "create the file if missing" must be in it.
    // A URL that names its own mode (memory, read-only…) keeps it.
    let has_mode = options
        .database_url
        .query_pairs()
        .any(|(key, _)| key == "mode");
    if !has_mode {
        options
            .database_url
            .query_pairs_mut()
            .append_pair("mode", "rwc");
    }
    // One writer connection: SQLite lets one transaction write at a time, and several
    // connections that each try to only queue on its file lock, where a busy evening (a
    // dozen approvals at once) ran past `busy_timeout` and failed with "database is
    // locked". Queued on the pool instead, writers wait their turn in order, however many
    // there are; reads can go through [`readers`] and never wait for them (WAL).
    AnyPoolOptions::new()
        .max_connections(1)
        // A file on this machine does not go stale like a network connection: pinging it
        // before every use is a round trip to the connection's worker thread, as costly
        // as a query, and there are several per reply.
        .test_before_acquire(false)
        .after_connect(|conn, _meta| {
            Box::pin(async move {
                conn.execute(SQLITE_PRAGMAS).await?;
                Ok(())
            })
        })
        .connect_with(options)
        .await
        .map_err(|source| DbError::Open { backend, source })
}

/// Where reads go, beside the writer `pool` (from [`connect`]). On a SQLite file these
/// are connections of their own, marked `query_only`, so a read never queues behind a
/// write transaction (WAL gives each read a consistent snapshot of what was committed),
/// kept between reads ([`Reads`]); an in-memory database has only the writer's
/// connection, and PostgreSQL needs no split: both read through `pool` itself. Should the
/// readers fail to open, reads share the writer.
pub async fn readers(pool: &Pool) -> Reads {
    if backend(pool) != Backend::Sqlite {
        return Reads::shared(pool.clone());
    }
    let url = pool.connect_options().database_url.clone();
    let memory = url.as_str().contains(":memory:")
        || url
            .query_pairs()
            .any(|(key, value)| key == "mode" && value == "memory");
    if memory {
        return Reads::shared(pool.clone());
    }
    match Reads::held(url.to_string(), SQLITE_READER_PRAGMAS, SQLITE_READERS).await {
        Ok(reads) => reads,
        Err(error) => {
            tracing::warn!(%error, "cannot open SQLite readers; reads share the writer");
            Reads::shared(pool.clone())
        }
    }
}

/// Readers' settings: the writer's, and `query_only`, so a write sent to a reader by
/// mistake fails at once instead of competing for the file lock.
const SQLITE_READER_PRAGMAS: &str = concat!(
    "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA query_only = ON; ",
    "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -256;"
);

/// What a read can go through: the writer's pool (a read inside a write's decision, or
/// PostgreSQL) or [`Reads`]. Functions that only read take one, so each caller says which.
pub trait Source: Copy + Send + Sync + for<'e> Executor<'e, Database = Any> {}

impl Source for &Pool {}

impl Source for &Reads {}

/// The backend `pool` talks to.
pub fn backend(pool: &Pool) -> Backend {
    // `connect` only builds pools for URLs `from_scheme` accepts.
    Backend::from_scheme(pool.connect_options().database_url.scheme()).unwrap_or(Backend::Sqlite)
}

/// Begins a transaction that is about to read and then write depending on what it read.
///
/// On SQLite, `BEGIN IMMEDIATE` takes the database's write lock at once, so nothing can
/// commit between the read and the write. Postgres has no database-wide lock: pair this
/// with [`lock_for_update`] on the row that stands for what is being decided.
pub async fn begin_write(pool: &Pool) -> Result<Transaction<'static, Any>, sqlx::Error> {
    match backend(pool) {
        Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await,
        Backend::Postgres => pool.begin().await,
    }
}

/// The writer's connection, held for one side effect (a booking, a cancellation, a
/// checkout) so that its commit reaches the disk before its result is streamed.
///
/// The writer runs with `synchronous = NORMAL`: in WAL mode a commit survives the process
/// being killed, and chat text is cheap to write. An effect must also survive the machine
/// losing power once the person has seen its receipt, so its connection switches to
/// `FULL` (the commit syncs the WAL, and with it everything written before) and back to
/// `NORMAL` when released. PostgreSQL commits durably anyway.
pub struct Durable {
    conn: sqlx::pool::PoolConnection<Any>,
    sqlite: bool,
}

impl Durable {
    /// Takes the writer's connection (on SQLite, in turn with every other write).
    pub async fn acquire(pool: &Pool) -> Result<Self, sqlx::Error> {
        let mut conn = pool.acquire().await?;
        let sqlite = backend(pool) == Backend::Sqlite;
        if sqlite {
            sqlx::query("PRAGMA synchronous = FULL")
                .execute(&mut *conn)
                .await?;
        }
        Ok(Self { conn, sqlite })
    }

    /// Begins the effect's write transaction (`BEGIN IMMEDIATE` on SQLite, as
    /// [`begin_write`]).
    pub async fn begin(&mut self) -> Result<Transaction<'_, Any>, sqlx::Error> {
        use sqlx::Connection;
        if self.sqlite {
            self.conn.begin_with("BEGIN IMMEDIATE").await
        } else {
            self.conn.begin().await
        }
    }

    /// The connection, for a single durable statement (its own autocommit transaction).
    pub fn connection(&mut self) -> &mut sqlx::AnyConnection {
        &mut self.conn
    }

    /// Gives the connection back with the writer's usual setting. If this fails, or the
    /// effect's task is dropped before, the connection only stays slower (every commit
    /// synced), never less safe.
    pub async fn release(mut self) {
        if self.sqlite {
            if let Err(error) = sqlx::query("PRAGMA synchronous = NORMAL")
                .execute(&mut *self.conn)
                .await
            {
                tracing::warn!(%error, "cannot set the writer back to synchronous = NORMAL");
            }
        }
    }
}

/// Runs one write transaction written as a single SQLite script — `BEGIN IMMEDIATE;`,
/// statements, `COMMIT` — in one round trip to the writer connection's thread, instead of
/// one per statement (each is a hand-over between threads, which on one core costs more
/// than the statement). Parameters are `$n` and count across the whole script. A failed
/// statement rolls the transaction back before the error is returned.
///
/// Runs on a task of its own, so that a request dropped half-way (a closed connection)
/// cannot leave the writer inside an open transaction. SQLite only: PostgreSQL takes one
/// statement per round trip with parameters.
pub async fn run_script(
    pool: &Pool,
    script: sqlx::query::Query<'static, Any, sqlx::any::AnyArguments>,
) -> Result<(), sqlx::Error> {
    let pool = pool.clone();
    let task = tokio::spawn(async move {
        let mut conn = pool.acquire().await?;
        match script.execute(&mut *conn).await {
            Ok(_) => Ok(()),
            Err(error) => {
                // Nothing to roll back when BEGIN itself failed: that error is ignored.
                let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
                // A script that syncs its commit (`synchronous = FULL` first) and failed
                // before setting it back leaves the writer as [`Durable`] does.
                if let Err(error) = sqlx::query("PRAGMA synchronous = NORMAL")
                    .execute(&mut *conn)
                    .await
                {
                    tracing::warn!(%error, "cannot set the writer back to synchronous = NORMAL");
                }
                Err(error)
            }
        }
    });
    task.await.map_err(|join| {
        tracing::error!(%join, "a write script's task ended abnormally");
        sqlx::Error::WorkerCrashed
    })?
}

/// On Postgres, runs `select_for_update` (`SELECT … WHERE id = $1 FOR UPDATE`) to lock that
/// row until the transaction ends: another transaction locking the same row waits, and its
/// next statement (READ COMMITTED) sees what this one committed. On SQLite it does
/// nothing: there is no `FOR UPDATE`, and [`begin_write`] already holds the only write lock.
pub async fn lock_for_update(
    conn: &mut AnyConnection,
    select_for_update: &'static str,
    id: &str,
) -> Result<(), sqlx::Error> {
    if conn.backend_name() == <sqlx::Postgres as Database>::NAME {
        sqlx::query(select_for_update)
            .bind(id)
            .fetch_optional(conn)
            .await?;
    }
    Ok(())
}

/// Test databases: a temporary SQLite file, or a fresh database on the PostgreSQL server
/// `DATBAN_TEST_POSTGRES_URL` names. The same file serves the integration tests.
#[cfg(test)]
#[allow(dead_code)]
#[path = "../tests/it/support/test_db.rs"]
pub(crate) mod test_db;

/// A migrated pool on a fresh test database, and the guard that removes the database.
#[cfg(test)]
pub(crate) async fn test_pool() -> (Pool, test_db::TestDatabase) {
    let (url, guard) = match test_db::test_database_url().await {
        Ok(found) => found,
        Err(error) => panic!("test database: {error}"),
    };
    match connect(&url).await {
        Ok(pool) => (pool, guard),
        Err(error) => panic!("test database: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes() {
        assert_eq!(Backend::from_scheme("sqlite"), Some(Backend::Sqlite));
        assert_eq!(Backend::from_scheme("postgres"), Some(Backend::Postgres));
        assert_eq!(Backend::from_scheme("postgresql"), Some(Backend::Postgres));
        assert_eq!(Backend::from_scheme("mysql"), None);
    }

    #[tokio::test]
    async fn bad_urls_name_no_backend_they_are_not() {
        let error = connect("mysql://root:secret@localhost/db")
            .await
            .unwrap_err();
        let text = error.to_string();
        assert!(matches!(error, DbError::BadUrl(_)), "{text}");
        assert!(!text.contains("secret"), "{text}");
        // An option Postgres rejects fails at once (a refused connection is retried for 30 s).
        let error = connect("postgres://nobody@127.0.0.1:1/none?sslmode=sometimes")
            .await
            .unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("PostgreSQL") && !text.contains("SQLite"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn sqlite_files_are_created_with_wal_and_foreign_keys() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("nested/folder/app.db");
        let pool = connect(&format!("sqlite://{}", file.display()))
            .await
            .unwrap();
        assert!(file.exists());
        assert_eq!(backend(&pool), Backend::Sqlite);
        let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(mode, "wal");
        let keys: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(keys, 1);
        let sync: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(sync, 1, "NORMAL");
        let temp: i64 = sqlx::query_scalar("PRAGMA temp_store")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(temp, 2, "MEMORY");
        let reads = readers(&pool).await;
        let temp: i64 = sqlx::query_scalar("PRAGMA temp_store")
            .fetch_one(&reads)
            .await
            .unwrap();
        assert_eq!(temp, 2, "MEMORY, on a reader");
        // Negative: a size in KiB, not in pages (see SQLITE_PRAGMAS for why 256).
        assert_eq!(cache_size(&pool).await, -256, "page cache of the writer");
        assert_eq!(cache_size(&reads).await, -256, "page cache of a reader");
    }

    /// `PRAGMA cache_size` where `source` reads (negative: a size in KiB).
    async fn cache_size(source: impl Source) -> i64 {
        sqlx::query_scalar("PRAGMA cache_size")
            .fetch_one(source)
            .await
            .unwrap()
    }

    /// A script that fails half-way leaves nothing of its first statements and the
    /// writer usable: the next transaction does not find one still open.
    #[tokio::test]
    async fn a_failed_script_rolls_back_and_leaves_the_writer_usable() {
        let dir = tempfile::tempdir().unwrap();
        let pool = connect(&format!("sqlite://{}", dir.path().join("s.db").display()))
            .await
            .unwrap();
        let setting = |key: &'static str| {
            sqlx::query(
                "BEGIN IMMEDIATE; INSERT INTO settings (key, value) VALUES ($1, $2); COMMIT;",
            )
            .bind(key)
            .bind("v")
        };
        let broken = sqlx::query(
            "BEGIN IMMEDIATE; INSERT INTO settings (key, value) VALUES ($1, 'v'); \
             INSERT INTO no_such_table VALUES ($1); COMMIT;",
        )
        .bind("lost");
        assert!(run_script(&pool, broken).await.is_err());
        run_script(&pool, setting("kept")).await.unwrap();
        let keys: Vec<(String,)> = sqlx::query_as("SELECT key FROM settings ORDER BY key")
            .fetch_all(&pool)
            .await
            .unwrap();
        let keys: Vec<&str> = keys.iter().map(|(k,)| k.as_str()).collect();
        assert!(
            keys.contains(&"kept") && !keys.contains(&"lost"),
            "{keys:?}"
        );
        // A duplicate key fails at its statement too, and rolls back the same way.
        assert!(run_script(&pool, setting("kept")).await.is_err());
        let mut tx = begin_write(&pool).await.unwrap();
        sqlx::query("DELETE FROM settings WHERE key = 'kept'")
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    #[tokio::test]
    async fn test_pool_uses_the_backend_asked_for() {
        let (pool, _db) = test_pool().await;
        let expected = if test_db::postgres_admin_url().is_some() {
            Backend::Postgres
        } else {
            Backend::Sqlite
        };
        assert_eq!(backend(&pool), expected);
    }

    #[test]
    fn the_database_of_a_test_url_is_replaced() {
        use test_db::with_database;
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "t1"),
            "postgres://postgres@127.0.0.1:5432/t1"
        );
        assert_eq!(
            with_database("postgres://u:p@host/postgres?sslmode=disable", "t1"),
            "postgres://u:p@host/t1?sslmode=disable"
        );
        assert_eq!(
            with_database("postgres://u@host:1", "t1"),
            "postgres://u@host:1/t1"
        );
        assert_eq!(
            with_database("postgres:///postgres?host=/run/pg", "t1"),
            "postgres:///t1?host=/run/pg"
        );
    }
}

//! The application database: opening it and bringing its schema up to date.

use std::{path::Path, str::FromStr, time::Duration};

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

/// The connection pool handlers share.
pub type Pool = sqlx::SqlitePool;

/// Why the database could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// `DATABASE_URL` is not a URL sqlx understands.
    #[error("DATABASE_URL is not a valid SQLite URL ({0})")]
    BadUrl(sqlx::Error),
    /// The folder for the database file could not be created.
    #[error("cannot create the folder {path} for the database: {source}")]
    CreateDir {
        /// The folder we tried to create.
        path: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// Opening the database failed.
    #[error("cannot open the database: {0}")]
    Open(sqlx::Error),
    /// A migration failed; the database is left as the last successful migration made it.
    #[error("cannot migrate the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// Opens (creating if needed) the SQLite database at `url` and runs pending migrations.
pub async fn connect(url: &str) -> Result<Pool, DbError> {
    let options = SqliteConnectOptions::from_str(url)
        .map_err(DbError::BadUrl)?
        .create_if_missing(true)
        // WAL lets readers proceed while a booking commits; NORMAL is durable in WAL mode
        // across application crashes, which is what idempotency records rely on.
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(5));
    if let Some(parent) = Path::new(options.get_filename()).parent() {
        if !parent.as_os_str().is_empty() && !parent.exists() {
            std::fs::create_dir_all(parent).map_err(|source| DbError::CreateDir {
                path: parent.display().to_string(),
                source,
            })?;
        }
    }
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .connect_with(options)
        .await
        .map_err(DbError::Open)?;
    sqlx::migrate!("./migrations").run(&pool).await?;
    Ok(pool)
}

//! The connections reads go through ([`Reads`]).
//!
//! sqlx's pool tests every connection given back to it (`ping` on release, in a task of
//! its own), and on SQLite a ping is a round trip to the connection's worker thread that
//! costs as much as the query it follows: each read through a pool paid for two. A read
//! from a query-only SQLite connection leaves nothing to flush or roll back, so [`Reads`]
//! keeps its SQLite connections itself and takes them back as they are: one round trip
//! per read (`agent_loop`: about a tenth of a step's CPU, three reads per conversation).
//! A connection whose query failed for a reason other than the SQL (its worker gone, an
//! I/O error) is closed instead of kept, and the next read opens a new one.

use std::sync::{Arc, Mutex, PoisonError};

use futures::{future::BoxFuture, stream::BoxStream, StreamExt};
use sqlx::{
    any::{AnyQueryResult, AnyRow, AnyStatement, AnyTypeInfo},
    Any, AnyConnection, Connection, Either, Execute, Executor, SqlStr,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::Pool;

/// Where reads go: on a SQLite file, query-only connections of their own, kept between
/// reads (see the module's comment); elsewhere (PostgreSQL, an in-memory database, or
/// readers that could not be opened), the writer's pool. An [`Executor`] like a pool:
/// `query.fetch_all(&reads)`. Cheap to clone.
#[derive(Clone)]
pub struct Reads(Arc<Inner>);

impl std::fmt::Debug for Reads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match &*self.0 {
            Inner::Held(_) => "Reads(connections of their own)",
            Inner::Shared(_) => "Reads(the writer's pool)",
        })
    }
}

enum Inner {
    Held(Held),
    Shared(Pool),
}

struct Held {
    url: String,
    pragmas: &'static str,
    idle: Mutex<Vec<AnyConnection>>,
    /// One permit per connection there may be: a read beyond them waits its turn.
    slots: Arc<Semaphore>,
}

impl Reads {
    /// Reads through `pool` itself.
    pub fn shared(pool: Pool) -> Self {
        Self(Arc::new(Inner::Shared(pool)))
    }

    /// Reads through at most `connections` connections to the SQLite database at `url`,
    /// each set up with `pragmas` when opened. The first is opened here, so a database that
    /// cannot be read is found at start, not at the first request.
    pub(super) async fn held(
        url: String,
        pragmas: &'static str,
        connections: usize,
    ) -> Result<Self, sqlx::Error> {
        let first = open(&url, pragmas).await?;
        Ok(Self(Arc::new(Inner::Held(Held {
            url,
            pragmas,
            idle: Mutex::new(vec![first]),
            slots: Arc::new(Semaphore::new(connections.max(1))),
        }))))
    }

    /// Closes every connection: reads after this fail (as through a closed pool).
    pub async fn close(&self) {
        match &*self.0 {
            Inner::Shared(pool) => pool.close().await,
            Inner::Held(held) => {
                held.slots.close();
                let idle =
                    std::mem::take(&mut *held.idle.lock().unwrap_or_else(PoisonError::into_inner));
                for conn in idle {
                    if let Err(error) = conn.close().await {
                        tracing::debug!(%error, "closing a reader");
                    }
                }
            }
        }
    }

    /// A connection for several reads in a row, given back when dropped.
    pub async fn acquire(&self) -> Result<ReadConnection, sqlx::Error> {
        self.take().await.map(ReadConnection)
    }

    /// A connection for one read, given back when the returned guard is dropped.
    async fn take(&self) -> Result<Lent, sqlx::Error> {
        match &*self.0 {
            Inner::Shared(pool) => Ok(Lent::Pooled(pool.acquire().await?)),
            Inner::Held(held) => {
                let permit = Arc::clone(&held.slots)
                    .acquire_owned()
                    .await
                    .map_err(|_| sqlx::Error::PoolClosed)?;
                let kept = held
                    .idle
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .pop();
                let conn = match kept {
                    Some(conn) => conn,
                    None => open(&held.url, held.pragmas).await?,
                };
                Ok(Lent::Held {
                    conn: Some(conn),
                    reads: Arc::clone(&self.0),
                    broken: false,
                    _permit: permit,
                })
            }
        }
    }
}

async fn open(url: &str, pragmas: &'static str) -> Result<AnyConnection, sqlx::Error> {
    let mut conn = AnyConnection::connect(url).await?;
    conn.execute(pragmas).await?;
    Ok(conn)
}

/// A connection of [`Reads`], lent until dropped.
pub struct ReadConnection(Lent);

impl std::ops::Deref for ReadConnection {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        match &self.0 {
            Lent::Pooled(conn) => conn,
            // Only `Drop` takes it out.
            Lent::Held { conn, .. } => conn.as_ref().unwrap_or_else(|| unreachable!()),
        }
    }
}

impl std::ops::DerefMut for ReadConnection {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match &mut self.0 {
            Lent::Pooled(conn) => conn,
            Lent::Held { conn, .. } => conn.as_mut().unwrap_or_else(|| unreachable!()),
        }
    }
}

/// A connection lent for one read.
enum Lent {
    Pooled(sqlx::pool::PoolConnection<Any>),
    Held {
        conn: Option<AnyConnection>,
        reads: Arc<Inner>,
        /// Set when the read failed outside its SQL: the connection is closed, not kept.
        broken: bool,
        _permit: OwnedSemaphorePermit,
    },
}

impl Lent {
    fn conn(&mut self) -> Result<&mut AnyConnection, sqlx::Error> {
        match self {
            Self::Pooled(conn) => Ok(&mut **conn),
            Self::Held { conn, .. } => conn.as_mut().ok_or(sqlx::Error::PoolClosed),
        }
    }

    /// The read's outcome, noted first: a connection that failed outside its SQL is not
    /// lent again.
    fn checked<T>(&mut self, result: Result<T, sqlx::Error>) -> Result<T, sqlx::Error> {
        if let (Self::Held { broken, .. }, Err(error)) = (self, &result) {
            *broken |= !matches!(
                error,
                sqlx::Error::Database(_)
                    | sqlx::Error::RowNotFound
                    | sqlx::Error::ColumnNotFound(_)
                    | sqlx::Error::ColumnIndexOutOfBounds { .. }
                    | sqlx::Error::ColumnDecode { .. }
                    | sqlx::Error::Decode(_)
                    | sqlx::Error::TypeNotFound { .. }
            );
        }
        result
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        // A read dropped half-way needs nothing more: the worker finishes the statement,
        // finds nobody waiting for its rows and resets it before the next command.
        if let Self::Held {
            conn,
            reads,
            broken: false,
            ..
        } = self
        {
            if let (Some(conn), Inner::Held(held)) = (conn.take(), &**reads) {
                if held.slots.is_closed() {
                    return;
                }
                held.idle
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(conn);
            }
        }
    }
}

impl<'r> Executor<'r> for &'_ Reads {
    type Database = Any;

    fn fetch_many<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxStream<'e, Result<Either<AnyQueryResult, AnyRow>, sqlx::Error>>
    where
        E: 'q + Execute<'q, Any>,
    {
        let reads = self.clone();
        Box::pin(async_stream::try_stream! {
            let mut lent = reads.take().await?;
            let mut rows = lent.conn()?.fetch_many(query);
            let mut failed = None;
            while let Some(row) = rows.next().await {
                match row {
                    Ok(row) => yield row,
                    Err(error) => {
                        failed = Some(error);
                        break;
                    }
                }
            }
            drop(rows);
            if let Some(error) = failed {
                lent.checked(Err(error))?;
            }
        })
    }

    fn fetch_optional<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxFuture<'e, Result<Option<AnyRow>, sqlx::Error>>
    where
        E: 'q + Execute<'q, Any>,
    {
        let reads = self.clone();
        Box::pin(async move {
            let mut lent = reads.take().await?;
            let found = lent.conn()?.fetch_optional(query).await;
            lent.checked(found)
        })
    }

    fn prepare_with<'e>(
        self,
        sql: SqlStr,
        parameters: &'e [AnyTypeInfo],
    ) -> BoxFuture<'e, Result<AnyStatement, sqlx::Error>>
    where
        'r: 'e,
    {
        let reads = self.clone();
        Box::pin(async move {
            let mut lent = reads.take().await?;
            let prepared = lent.conn()?.prepare_with(sql, parameters).await;
            lent.checked(prepared)
        })
    }

    #[doc(hidden)]
    fn describe<'e>(self, sql: SqlStr) -> BoxFuture<'e, Result<sqlx::Describe<Any>, sqlx::Error>> {
        let reads = self.clone();
        Box::pin(async move {
            let mut lent = reads.take().await?;
            let described = lent.conn()?.describe(sql).await;
            lent.checked(described)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    async fn file_db(dir: &tempfile::TempDir) -> Result<(Pool, Reads), Box<dyn std::error::Error>> {
        let pool =
            super::super::connect(&format!("sqlite://{}", dir.path().join("r.db").display()))
                .await?;
        let reads = super::super::readers(&pool).await;
        Ok((pool, reads))
    }

    fn idle(reads: &Reads) -> usize {
        match &*reads.0 {
            Inner::Held(held) => held.idle.lock().map_or(0, |idle| idle.len()),
            Inner::Shared(_) => usize::MAX,
        }
    }

    async fn value(reads: &Reads, key: &str) -> Result<Option<String>, sqlx::Error> {
        sqlx::query_scalar("SELECT value FROM settings WHERE key = $1")
            .bind(key)
            .fetch_optional(reads)
            .await
    }

    async fn set(pool: &Pool, key: &str, value: &str) -> Result<(), sqlx::Error> {
        sqlx::query("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            .bind(key)
            .bind(value)
            .execute(pool)
            .await
            .map(drop)
    }

    /// One connection serves reads one after the other, and each read sees what the
    /// writer committed before it: a kept connection holds no snapshot between reads.
    #[tokio::test]
    async fn a_kept_connection_is_reused_and_sees_each_commit() -> TestResult {
        let dir = tempfile::tempdir()?;
        let (pool, reads) = file_db(&dir).await?;
        assert_eq!(idle(&reads), 1, "one opened at start");
        for round in 0..5 {
            let written = format!("v{round}");
            set(&pool, "k", &written).await?;
            assert_eq!(value(&reads, "k").await?.as_deref(), Some(written.as_str()));
            let rows: Vec<(String,)> = sqlx::query_as("SELECT key FROM settings")
                .fetch_all(&reads)
                .await?;
            assert!(rows.iter().any(|(key,)| key == "k"), "{rows:?}");
            assert_eq!(idle(&reads), 1, "round {round}: still the one connection");
        }
        Ok(())
    }

    /// At most the given number of connections are lent at once; one more waits until
    /// one is given back.
    #[tokio::test]
    async fn reads_beyond_the_connections_wait_their_turn() -> TestResult {
        let dir = tempfile::tempdir()?;
        let (_pool, reads) = file_db(&dir).await?;
        let mut lent = Vec::new();
        for _ in 0..super::super::SQLITE_READERS {
            lent.push(reads.acquire().await?);
        }
        let waiting = tokio::time::timeout(Duration::from_millis(100), reads.acquire()).await;
        assert!(waiting.is_err(), "a fifth connection was lent");
        lent.pop();
        let next = tokio::time::timeout(Duration::from_secs(5), reads.acquire()).await;
        assert!(
            matches!(next, Ok(Ok(_))),
            "none was lent after one came back"
        );
        drop(lent);
        drop(next);
        assert_eq!(idle(&reads), super::super::SQLITE_READERS);
        Ok(())
    }

    /// A read dropped half-way (its request went away) gives its connection back in a
    /// state the next read can use.
    #[tokio::test]
    async fn a_read_dropped_half_way_leaves_the_connection_usable() -> TestResult {
        let dir = tempfile::tempdir()?;
        let (pool, reads) = file_db(&dir).await?;
        for n in 0..200 {
            set(&pool, &format!("k{n:03}"), "v").await?;
        }
        {
            let mut rows = sqlx::query_as::<_, (String,)>("SELECT key FROM settings ORDER BY key")
                .fetch(&reads);
            let first = rows.next().await;
            assert!(matches!(first, Some(Ok(_))), "{first:?}");
        }
        set(&pool, "k", "after").await?;
        assert_eq!(value(&reads, "k").await?.as_deref(), Some("after"));
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM settings WHERE key LIKE 'k%'")
            .fetch_one(&reads)
            .await?;
        assert_eq!(count, 201);
        assert_eq!(idle(&reads), 1);
        Ok(())
    }

    /// A statement SQLite refuses is the read's error, and the connection stays; a read
    /// on closed readers fails instead of opening a new connection.
    #[tokio::test]
    async fn a_refused_statement_keeps_the_connection_and_closed_readers_refuse() -> TestResult {
        let dir = tempfile::tempdir()?;
        let (pool, reads) = file_db(&dir).await?;
        let refused = sqlx::query("SELECT * FROM no_such_table")
            .fetch_all(&reads)
            .await;
        assert!(
            matches!(refused, Err(sqlx::Error::Database(_))),
            "{:?}",
            refused.map(|rows| rows.len())
        );
        let write = sqlx::query("INSERT INTO settings (key, value) VALUES ('w', 'v')")
            .execute(&reads)
            .await;
        assert!(write.is_err(), "a reader wrote");
        set(&pool, "k", "v").await?;
        assert_eq!(value(&reads, "k").await?.as_deref(), Some("v"));
        assert_eq!(idle(&reads), 1);
        reads.close().await;
        assert!(value(&reads, "k").await.is_err(), "read after close");
        assert_eq!(idle(&reads), 0);
        Ok(())
    }
}

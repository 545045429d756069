//! Idempotency keys for tools with side effects, with the semantics of payment APIs.
//!
//! The caller picks a key per intended effect and reuses it on every retry. The first
//! request with a key [`claim`]s it and runs; its result is stored in the same transaction
//! as its effect ([`Lease::complete`]), so the two commit together or not at all. A later
//! request with the same key and the same arguments gets the stored result without running
//! again; with other arguments it is refused (`IDEMPOTENCY_KEY_REUSED`); while the first is
//! still running it is told to retry (`IDEMPOTENCY_KEY_IN_USE`).
//!
//! Everything is decided by single SQL statements on one row (`INSERT … ON CONFLICT DO
//! NOTHING`, conditional `UPDATE`s), so it holds across several server processes sharing
//! one database. A holder that crashes leaves its row `running`; after the lease ends
//! ([`LEASE_SECONDS`]) the next request takes it over. Each lease carries a token, so a
//! holder that was only slow, and lost its lease, can no longer record a result: its
//! transaction (and with it the effect) rolls back.
//!
//! Stored results are successes and failures that a retry would only repeat (not found,
//! already committed…). Infrastructure and internal failures are not stored: the holder
//! [`Lease::release`]s the key, so a retry runs again.

use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use shared::tools::{ErrorCode, ToolError};

use futures::future::BoxFuture;

use crate::{db::Pool, exec::ExecError};

/// How long a claim holds a key before another request may take it over, in seconds.
/// Longer than any executor should run; short enough that a crash blocks a retry briefly.
pub const LEASE_SECONDS: i64 = 30;

/// How many times [`claim`] re-reads a row that changed under it before answering "in use".
const ATTEMPTS: usize = 3;

/// The SHA-256 (lower-case hex) of the canonical JSON of `arguments`: object keys sorted
/// at every depth, no whitespace. Equal arguments give equal fingerprints whatever order
/// their keys were written in.
///
/// Pass only the arguments that define the effect (not the key itself, not presentation
/// options), so a retry that differs only in those is still recognised.
pub fn fingerprint(arguments: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(arguments, &mut canonical);
    Sha256::digest(canonical.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            // serde_json keeps insertion order when its `preserve_order` feature is on
            // (any crate in the build may turn it on): sort here rather than rely on it.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                // A JSON string literal, escaped as JSON escapes it.
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// What [`claim`] found.
#[derive(Debug)]
#[must_use]
pub enum Claim {
    /// The key is this request's: run the effect, then [`Lease::complete`] or
    /// [`Lease::release`].
    Acquired(Lease),
    /// An earlier request with this key and these arguments finished: its result, to be
    /// returned as it is.
    Replay(Result<Value, ToolError>),
}

/// The right to run the effect of one key until [`LEASE_SECONDS`] after the claim.
///
/// Dropping it without completing or releasing (a crash, a cancelled future) leaves the key
/// in use until the lease ends; then the next request takes it over.
#[derive(Debug)]
#[must_use = "complete or release the lease, or the key stays in use until the lease ends"]
pub struct Lease {
    owner_id: String,
    scope: String,
    key: String,
    /// Tells this holder from one that took the key over after the lease ended.
    token: String,
}

/// Whether a key whose fingerprint matches is still being run or already has a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyState {
    /// A request with this key holds (or held, and crashed with) the lease.
    Running,
    /// The result is stored; a request with this key gets it back.
    Done,
}

/// A result as stored in `idempotency_keys.result`: `{"ok": …}` or `{"error": …}`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Stored {
    Ok(Value),
    Error(ToolError),
}

/// The error for a key used before with other arguments: never retryable, since the
/// same request would get the same answer.
pub fn key_reused() -> ToolError {
    ToolError::new(
        ErrorCode::IdempotencyKeyReused,
        "idempotency_key: this key was already used for a request with other arguments. \
         Choose a new key for a new request; nothing was done for this one.",
    )
}

/// The error for a key whose first request is still running: retry with the same key.
pub fn key_in_use() -> ToolError {
    ToolError::new(
        ErrorCode::IdempotencyKeyInUse,
        "A request with this idempotency_key is still being processed. Retry shortly with \
         the same key and arguments; it will not run twice.",
    )
}

/// RFC 3339 in UTC with milliseconds, `YYYY-MM-DDTHH:MM:SS.mmmZ`: fixed width, so text
/// order is time order on both backends.
fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Claims `key` for one request of `owner_id` to the tool `scope`, whose arguments have
/// `fingerprint`, at `now`.
///
/// - No row yet: this request inserts it (`running`, lease until now + 30 s) → `Acquired`.
/// - Another fingerprint → `Err(IDEMPOTENCY_KEY_REUSED)`.
/// - `done` → `Replay` of the stored result.
/// - `running` with an unexpired lease → `Err(IDEMPOTENCY_KEY_IN_USE)` (retryable).
/// - `running` with an expired lease (its holder crashed) → taken over → `Acquired`.
///
/// Keys are per owner and scope: the same key from another person or for another tool is
/// another key.
pub async fn claim(
    db: &Pool,
    owner_id: &str,
    scope: &str,
    key: &str,
    fingerprint: &str,
    now: DateTime<Utc>,
) -> Result<Claim, ExecError> {
    let now_text = timestamp(now);
    let until = timestamp(now + TimeDelta::seconds(LEASE_SECONDS));
    let lease = |token: String| Lease {
        owner_id: owner_id.to_owned(),
        scope: scope.to_owned(),
        key: key.to_owned(),
        token,
    };
    // Each round acts on what the previous statement found; a row can change between two
    // statements (released, completed, taken over), which another round sorts out.
    for _ in 0..ATTEMPTS {
        let token = new_token();
        // The primary key makes this the one atomic decision between racing requests, in
        // one process or many.
        let inserted = sqlx::query(
            "INSERT INTO idempotency_keys (owner_id, scope, idem_key, fingerprint, state, \
             result, lease_token, locked_until, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, 'running', NULL, $5, $6, $7, $7) ON CONFLICT DO NOTHING",
        )
        .bind(owner_id)
        .bind(scope)
        .bind(key)
        .bind(fingerprint)
        .bind(&token)
        .bind(&until)
        .bind(&now_text)
        .execute(db)
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(Claim::Acquired(lease(token)));
        }

        let row: Option<(String, String, Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT fingerprint, state, result, locked_until FROM idempotency_keys \
             WHERE owner_id = $1 AND scope = $2 AND idem_key = $3",
        )
        .bind(owner_id)
        .bind(scope)
        .bind(key)
        .fetch_optional(db)
        .await?;
        // Released between the insert and the read: the key is free again.
        let Some((stored_fingerprint, state, result, locked_until)) = row else {
            continue;
        };
        if stored_fingerprint != fingerprint {
            return Err(ExecError::Tool(key_reused()));
        }
        match state.as_str() {
            "done" => return replay(key, result).map(Claim::Replay),
            "running" => {
                let expired = locked_until
                    .as_deref()
                    .is_some_and(|until| until < now_text.as_str());
                if !expired {
                    return Err(ExecError::Tool(key_in_use()));
                }
                // Only one of several requests that saw the lease expired wins: the
                // condition is checked again by the database, on the row, as it updates.
                let taken = sqlx::query(
                    "UPDATE idempotency_keys SET lease_token = $1, locked_until = $2, \
                     updated_at = $3 WHERE owner_id = $4 AND scope = $5 AND idem_key = $6 \
                     AND state = 'running' AND locked_until < $3",
                )
                .bind(&token)
                .bind(&until)
                .bind(&now_text)
                .bind(owner_id)
                .bind(scope)
                .bind(key)
                .execute(db)
                .await?;
                if taken.rows_affected() == 1 {
                    tracing::warn!(
                        scope,
                        key,
                        "idempotency key taken over after its lease ended"
                    );
                    return Ok(Claim::Acquired(lease(token)));
                }
            }
            other => {
                return Err(ExecError::Internal(format!(
                    "idempotency key {scope}/{key} has state {other:?}"
                )))
            }
        }
    }
    Err(ExecError::Tool(key_in_use()))
}

/// Without claiming anything: the state of `key` if it exists with `fingerprint`, `None` if
/// it is unused, `Err(IDEMPOTENCY_KEY_REUSED)` if it was used with other arguments.
///
/// For checks before a person is asked to confirm a request: a request that will be
/// refused, or that will only replay, should be known before asking.
pub async fn peek(
    db: &Pool,
    owner_id: &str,
    scope: &str,
    key: &str,
    fingerprint: &str,
) -> Result<Option<KeyState>, ExecError> {
    let row: Option<(String, String)> = sqlx::query_as(
        "SELECT fingerprint, state FROM idempotency_keys \
         WHERE owner_id = $1 AND scope = $2 AND idem_key = $3",
    )
    .bind(owner_id)
    .bind(scope)
    .bind(key)
    .fetch_optional(db)
    .await?;
    let Some((stored_fingerprint, state)) = row else {
        return Ok(None);
    };
    if stored_fingerprint != fingerprint {
        return Err(ExecError::Tool(key_reused()));
    }
    match state.as_str() {
        "running" => Ok(Some(KeyState::Running)),
        "done" => Ok(Some(KeyState::Done)),
        other => Err(ExecError::Internal(format!(
            "idempotency key {scope}/{key} has state {other:?}"
        ))),
    }
}

/// The result recorded for the first of `keys` that has one (a call that ran to its end
/// under that key), on `conn`: what a stored message must show for the call once it is
/// read again after a crash, whatever the message itself says.
pub async fn recorded(
    conn: &mut sqlx::AnyConnection,
    owner_id: &str,
    scope: &str,
    keys: &[String],
) -> Result<Option<Result<Value, ToolError>>, ExecError> {
    for key in keys {
        let row: Option<(Option<String>,)> = sqlx::query_as(
            "SELECT result FROM idempotency_keys \
             WHERE owner_id = $1 AND scope = $2 AND idem_key = $3 AND state = 'done'",
        )
        .bind(owner_id)
        .bind(scope)
        .bind(key)
        .fetch_optional(&mut *conn)
        .await?;
        if let Some((result,)) = row {
            return replay(key, result).map(Some);
        }
    }
    Ok(None)
}

fn replay(key: &str, result: Option<String>) -> Result<Result<Value, ToolError>, ExecError> {
    let text = result.ok_or_else(|| {
        ExecError::Internal(format!("idempotency key {key} is done without a result"))
    })?;
    match serde_json::from_str::<Stored>(&text) {
        Ok(Stored::Ok(value)) => Ok(Ok(value)),
        Ok(Stored::Error(error)) => Ok(Err(error)),
        Err(error) => Err(ExecError::Internal(format!(
            "idempotency key {key}: stored result is unreadable: {error}"
        ))),
    }
}

impl Lease {
    /// Records `result` as the key's outcome, in `tx`: the caller's transaction that made
    /// the effect, so effect and record commit together (a crash before the commit leaves
    /// neither, and the key is taken over once the lease ends).
    ///
    /// Store successes and failures a retry would only repeat; release the lease instead
    /// for failures a retry may fix. Fails with `IDEMPOTENCY_KEY_IN_USE` if the lease ended
    /// and another request took the key over: the caller must then roll back `tx`.
    ///
    /// Borrows the lease so the caller can still [`Lease::release`] it if committing `tx`
    /// fails; after a successful commit, releasing does nothing.
    pub async fn complete(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        result: &Result<Value, ToolError>,
    ) -> Result<(), ExecError> {
        let stored = match result {
            Ok(value) => Stored::Ok(value.clone()),
            Err(error) => Stored::Error(error.clone()),
        };
        let text = serde_json::to_string(&stored).map_err(|error| {
            ExecError::Internal(format!(
                "idempotency key {}: cannot serialise the result: {error}",
                self.key
            ))
        })?;
        // Bookkeeping only (nothing compares it): the wall clock, as the request's `now`
        // was taken when the lease was claimed.
        let updated_at = timestamp(std::time::SystemTime::now().into());
        let done = sqlx::query(
            "UPDATE idempotency_keys SET state = 'done', result = $1, lease_token = NULL, \
             locked_until = NULL, updated_at = $2 WHERE owner_id = $3 AND scope = $4 \
             AND idem_key = $5 AND state = 'running' AND lease_token = $6",
        )
        .bind(&text)
        .bind(&updated_at)
        .bind(&self.owner_id)
        .bind(&self.scope)
        .bind(&self.key)
        .bind(&self.token)
        .execute(&mut **tx)
        .await?;
        if done.rows_affected() == 1 {
            Ok(())
        } else {
            tracing::warn!(
                scope = %self.scope,
                key = %self.key,
                "lease lost before its result was recorded; rolling back"
            );
            Err(ExecError::Tool(key_in_use()))
        }
    }

    /// Gives the key up without a result, so a retry runs again: for failures a retry may
    /// fix (infrastructure, internal errors). Does nothing once the result is recorded or
    /// another request took the key over.
    pub async fn release(self, db: &Pool) -> Result<(), ExecError> {
        sqlx::query(
            "DELETE FROM idempotency_keys WHERE owner_id = $1 AND scope = $2 AND idem_key = $3 \
             AND state = 'running' AND lease_token = $4",
        )
        .bind(&self.owner_id)
        .bind(&self.scope)
        .bind(&self.key)
        .bind(&self.token)
        .execute(db)
        .await?;
        Ok(())
    }
}

/// What an effect run under a claimed key yields: `Ok(Ok(_))` a success and `Ok(Err(_))` a
/// failure a retry would only repeat (both stored with the key), `Err(_)` a failure a retry
/// may fix (rolled back; the key is freed).
pub type Outcome = Result<Result<Value, ToolError>, ExecError>;

/// A step that commits with an effect, inside its transaction (an approved call's pending
/// row deleted); an error rolls the effect back.
pub type OnCommit = Box<
    dyn for<'t> FnOnce(&'t mut sqlx::AnyConnection) -> BoxFuture<'t, Result<(), ExecError>>
        + Send
        + Sync,
>;

/// `step` as an [`OnCommit`] (a closure's higher-ranked signature is inferred from here).
pub fn on_commit<F>(step: F) -> OnCommit
where
    F: for<'t> FnOnce(&'t mut sqlx::AnyConnection) -> BoxFuture<'t, Result<(), ExecError>>
        + Send
        + Sync
        + 'static,
{
    Box::new(step)
}

/// Who a side effect runs for, and what commits with it.
pub struct Effect<'a> {
    /// The database.
    pub db: &'a Pool,
    /// Whose key it is.
    pub owner_id: &'a str,
    /// The moment it is asked for (leases are measured from it).
    pub now: DateTime<Utc>,
    /// Run inside the effect's transaction once its record is written.
    pub on_commit: Option<OnCommit>,
}

/// Runs `effect` at most once per (owner, scope, key): claims the key, runs the effect in a
/// write transaction ([`db::begin_write`]) and records its result in that same
/// transaction, so the side effect and its record commit together or not at all (a crash
/// in between leaves neither, and the lease lets the next request run it). A repeat with
/// the same fingerprint gets the stored result without running anything.
///
/// `scope_of.on_commit` runs in that same transaction too (an approved call's pending row
/// deleted): a server killed before the commit leaves the call pending (to be decided
/// again), never decided-but-not-done.
pub async fn run_once<F>(
    scope_of: Effect<'_>,
    scope: &str,
    key: &str,
    fingerprint: &str,
    effect: F,
) -> Result<Result<Value, ToolError>, ExecError>
where
    F: for<'t> FnOnce(&'t mut sqlx::AnyConnection) -> BoxFuture<'t, Outcome>,
{
    let Effect {
        db,
        owner_id,
        now,
        on_commit,
    } = scope_of;
    let lease = match claim(db, owner_id, scope, key, fingerprint, now).await? {
        Claim::Replay(stored) => return Ok(stored),
        Claim::Acquired(lease) => lease,
    };
    let outcome = match crate::db::Durable::acquire(db).await {
        Ok(mut durable) => {
            let outcome = match durable.begin().await {
                Ok(mut tx) => {
                    let recorded = match effect(&mut tx).await {
                        Ok(result) => match lease.complete(&mut tx, &result).await {
                            Ok(()) => match on_commit {
                                Some(step) => step(&mut tx).await.map(|()| result),
                                None => Ok(result),
                            },
                            Err(error) => Err(error),
                        },
                        Err(error) => Err(error),
                    };
                    #[cfg(feature = "test-hooks")]
                    hold_for_tests().await;
                    match recorded {
                        Ok(result) => tx.commit().await.map(|()| result).map_err(ExecError::from),
                        Err(error) => {
                            // Roll back now rather than on drop: SQLite holds its write
                            // lock until then, and releasing the key below needs it.
                            if let Err(rollback) = tx.rollback().await {
                                tracing::warn!(%rollback, %scope, "rolling back a failed effect");
                            }
                            Err(error)
                        }
                    }
                }
                Err(error) => Err(ExecError::from(error)),
            };
            // Before the key is released below: that needs the writer's connection.
            durable.release().await;
            outcome
        }
        Err(error) => Err(ExecError::from(error)),
    };
    if outcome.is_err() {
        // Nothing happened and nothing was recorded: free the key so a retry runs. If that
        // fails too, the key frees itself when its lease ends.
        if let Err(error) = lease.release(db).await {
            let details = match error {
                ExecError::Tool(error) => error.message,
                ExecError::Internal(details) => details,
            };
            tracing::warn!(%scope, %key, %details, "cannot release an idempotency key");
        }
    }
    outcome
}

/// A test hook: with `DATBAN_TEST_HOLD_EFFECT_MS` set, every side effect waits that long
/// inside its transaction, before the commit, so a test can kill the server mid-effect.
/// Read once; compiled only with the `test-hooks` feature, which only the server's own
/// tests turn on (a self dev-dependency), so no deployed binary has it.
#[cfg(feature = "test-hooks")]
async fn hold_for_tests() {
    static HOLD: std::sync::OnceLock<Option<std::time::Duration>> = std::sync::OnceLock::new();
    let hold = HOLD.get_or_init(|| {
        std::env::var("DATBAN_TEST_HOLD_EFFECT_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map(std::time::Duration::from_millis)
    });
    if let Some(hold) = hold {
        tokio::time::sleep(*hold).await;
    }
}

/// A stored (or just stored) result as an executor's typed answer.
pub fn typed<T: serde::de::DeserializeOwned>(
    stored: Result<Value, ToolError>,
    scope: &str,
) -> Result<T, ExecError> {
    match stored {
        Ok(value) => serde_json::from_value(value)
            .map_err(|e| ExecError::Internal(format!("stored {scope} result is unreadable: {e}"))),
        Err(error) => Err(ExecError::Tool(error)),
    }
}

/// A typed success as the value stored with its key.
pub fn stored<T: Serialize>(output: &T, scope: &str) -> Result<Value, ExecError> {
    serde_json::to_value(output)
        .map_err(|e| ExecError::Internal(format!("serialising the {scope} result: {e}")))
}

#[cfg(test)]
mod tests;

//! Calls waiting for a person's decision: stored before their form is shown, taken
//! atomically by the one decision that carries them out, given back when it fails.

use super::*;

/// A side-effecting call waiting for its owner's decision.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PendingCall {
    /// The model's call id (also the idempotency key).
    pub tool_call_id: String,
    /// The conversation.
    pub conversation_id: String,
    /// Whose decision it is.
    pub owner_id: String,
    /// The assistant message holding the call's part.
    pub message_id: String,
    /// The tool.
    pub tool_name: String,
    /// The validated input, JSON text.
    pub input: String,
}

/// Stores a pending call, durably (synced to disk, see [`crate::db::Durable`]) before the
/// confirmation form is streamed: a person who saw the form can always decide it.
pub async fn insert_pending(
    db: &Pool,
    call: &PendingCall,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let mut durable = crate::db::Durable::acquire(db).await?;
    let stored = insert_pending_on(durable.connection(), call, now).await;
    durable.release().await;
    stored
}

async fn insert_pending_on(
    conn: &mut sqlx::AnyConnection,
    call: &PendingCall,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    insert_pending_at(conn, call, &timestamp(now)).await?;
    Ok(())
}

/// Stores a pending call on `conn` (in the caller's transaction, if any), proposed at
/// `created_at` (as stored).
pub(crate) async fn insert_pending_at(
    conn: &mut sqlx::AnyConnection,
    call: &PendingCall,
    created_at: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO pending_calls (tool_call_id, conversation_id, owner_id, message_id, tool_name, input, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&call.tool_call_id)
    .bind(&call.conversation_id)
    .bind(&call.owner_id)
    .bind(&call.message_id)
    .bind(&call.tool_name)
    .bind(&call.input)
    .bind(created_at)
    .execute(conn)
    .await?;
    Ok(())
}

// A macro, not a const: sqlx only accepts SQL it can see is static.
macro_rules! pending_columns {
    () => {
        "tool_call_id, conversation_id, owner_id, message_id, tool_name, input"
    };
}

/// How long a decision holds its pending call before a crashed holder's take expires and
/// the call can be decided again; as long as an idempotency lease, which it must outlive.
pub const TAKE_SECONDS: i64 = crate::idempotency::LEASE_SECONDS;

/// Reads a pending call without taking it (to validate an edit before the atomic take).
pub async fn peek_pending(
    db: impl crate::db::Source,
    conversation_id: &str,
    tool_call_id: &str,
    owner_id: &str,
) -> Result<Option<PendingCall>, StoreError> {
    Ok(sqlx::query_as::<_, PendingCall>(concat!(
        "SELECT ",
        pending_columns!(),
        " FROM pending_calls WHERE tool_call_id = $1 AND conversation_id = $2 AND owner_id = $3"
    ))
    .bind(tool_call_id)
    .bind(conversation_id)
    .bind(owner_id)
    .fetch_optional(db)
    .await?)
}

/// The call of `tool` with exactly this validated input that waits, untaken, for a
/// decision in this conversation: a repeated proposal gets it instead of a second form.
pub async fn find_waiting(
    db: &Pool,
    conversation_id: &str,
    tool: &str,
    input: &str,
) -> Result<Option<PendingCall>, StoreError> {
    Ok(sqlx::query_as::<_, PendingCall>(concat!(
        "SELECT ",
        pending_columns!(),
        " FROM pending_calls WHERE conversation_id = $1 AND tool_name = $2 AND input = $3 \
         AND taken_by IS NULL ORDER BY created_at LIMIT 1"
    ))
    .bind(conversation_id)
    .bind(tool)
    .bind(input)
    .fetch_optional(db)
    .await?)
}

/// A pending call taken by one decision: only the holder of `token` may finish it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakenCall {
    /// The call.
    pub call: PendingCall,
    /// Proves the take; the row is deleted only with it.
    pub token: String,
}

/// Takes a pending call for one decision: a single conditional `UPDATE … RETURNING`, so of
/// any number of simultaneous decisions (on any number of processes) exactly one gets it.
/// The row stays until [`finish_pending`] (or the effect's transaction) deletes it; if the
/// holder dies first, the take expires after [`TAKE_SECONDS`] and the call is pending again
/// — at once when the holder is `run` and that run is closed as interrupted (its token
/// begins with the run's id: [`release_takes_of`]).
pub async fn take_pending(
    db: &Pool,
    conversation_id: &str,
    tool_call_id: &str,
    owner_id: &str,
    now: DateTime<Utc>,
    run: Option<&str>,
) -> Result<Option<TakenCall>, StoreError> {
    let token = match run {
        Some(run) => format!("{run}/{}", new_id("take")),
        None => new_id("take"),
    };
    let until = timestamp(now + chrono::TimeDelta::seconds(TAKE_SECONDS));
    let call = sqlx::query_as::<_, PendingCall>(concat!(
        "UPDATE pending_calls SET taken_by = $1, taken_until = $2 \
         WHERE tool_call_id = $3 AND conversation_id = $4 AND owner_id = $5 \
         AND (taken_by IS NULL OR taken_until < $6) RETURNING ",
        pending_columns!()
    ))
    .bind(&token)
    .bind(&until)
    .bind(tool_call_id)
    .bind(conversation_id)
    .bind(owner_id)
    .bind(timestamp(now))
    .fetch_optional(db)
    .await?;
    Ok(call.map(|call| TakenCall { call, token }))
}

/// Deletes a taken call once its decision is recorded; does nothing if the effect's
/// transaction already deleted it or the take was lost.
pub async fn finish_pending(db: &Pool, taken: &TakenCall) -> Result<(), StoreError> {
    sqlx::query(
        "DELETE FROM pending_calls WHERE conversation_id = $1 AND tool_call_id = $2 AND taken_by = $3",
    )
    .bind(&taken.call.conversation_id)
    .bind(&taken.call.tool_call_id)
    .bind(&taken.token)
    .execute(db)
    .await?;
    Ok(())
}

/// Gives a taken call back undecided: the decision could not be carried out (our storage
/// failed before anything happened), so the call is pending again at once and the person
/// can decide it again, instead of waiting for the take to expire. Does nothing if the
/// take was lost meanwhile.
pub async fn release_pending(db: &Pool, taken: &TakenCall) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE pending_calls SET taken_by = NULL, taken_until = NULL \
         WHERE conversation_id = $1 AND tool_call_id = $2 AND taken_by = $3",
    )
    .bind(&taken.call.conversation_id)
    .bind(&taken.call.tool_call_id)
    .bind(&taken.token)
    .execute(db)
    .await?;
    Ok(())
}

/// Deletes a taken call's pending row on `conn` (inside its effect's transaction): `false`
/// when the row is no longer this take's (it expired and another decision took it).
pub async fn delete_taken(
    conn: &mut sqlx::AnyConnection,
    conversation_id: &str,
    tool_call_id: &str,
    token: &str,
) -> Result<bool, sqlx::Error> {
    let deleted = sqlx::query(
        "DELETE FROM pending_calls WHERE conversation_id = $1 AND tool_call_id = $2 AND taken_by = $3",
    )
    .bind(conversation_id)
    .bind(tool_call_id)
    .bind(token)
    .execute(&mut *conn)
    .await?;
    Ok(deleted.rows_affected() == 1)
}

/// Gives back the calls of `conversation_id` taken for run `run_id` (a run closed as
/// interrupted: its process died holding them), on `conn`: pending again at once.
pub async fn release_takes_of(
    conn: &mut sqlx::AnyConnection,
    conversation_id: &str,
    run_id: &str,
) -> Result<u64, sqlx::Error> {
    let prefix = format!("{run_id}/");
    let released = sqlx::query(
        "UPDATE pending_calls SET taken_by = NULL, taken_until = NULL \
         WHERE conversation_id = $1 AND substr(taken_by, 1, length($2)) = $2",
    )
    .bind(conversation_id)
    .bind(&prefix)
    .execute(&mut *conn)
    .await?;
    Ok(released.rows_affected())
}

/// A conversation's messages as a new turn finds them, and whether any call in it still
/// waits for a decision that nobody is making right now (the turn closes those).
#[derive(Debug)]
pub struct TurnHistory {
    /// Every message, oldest first.
    pub messages: Vec<Message>,
    /// Some call of the conversation's owner waits for a decision no one holds.
    pub open_calls: bool,
}

/// [`TurnHistory`] in one read: most turns find no open call, and learn it without taking
/// the write lock.
pub async fn turn_history(
    db: impl crate::db::Source,
    conversation_id: &str,
    owner_id: &str,
    now: DateTime<Utc>,
) -> Result<TurnHistory, StoreError> {
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT id, body, (SELECT COUNT(*) FROM pending_calls WHERE conversation_id = $1 \
         AND owner_id = $2 AND (taken_by IS NULL OR taken_until < $3)) \
         FROM messages WHERE conversation_id = $1 ORDER BY seq",
    )
    .bind(conversation_id)
    .bind(owner_id)
    .bind(timestamp(now))
    .fetch_all(db)
    .await?;
    let open_calls = rows.first().is_some_and(|(_, _, open)| *open > 0);
    let messages = rows
        .into_iter()
        .map(|(id, body, _)| decode(id, &body))
        .collect::<Result<_, _>>()?;
    Ok(TurnHistory {
        messages,
        open_calls,
    })
}

/// Takes every pending call of a conversation that no decision holds (a call being
/// executed right now is left to its decision) and stores each one's message as `close`
/// leaves it, in one transaction: the calls go and their forms close together, or
/// nothing changes and every call stays decidable. `messages` are the conversation's as
/// the caller read them; they are updated once the change is committed.
pub async fn close_open_calls(
    db: &Pool,
    conversation_id: &str,
    owner_id: &str,
    now: DateTime<Utc>,
    messages: &mut [Message],
    close: impl Fn(&mut Message, &PendingCall),
) -> Result<(), StoreError> {
    let mut tx = crate::db::begin_write(db).await?;
    let taken = sqlx::query_as::<_, PendingCall>(concat!(
        "DELETE FROM pending_calls WHERE conversation_id = $1 AND owner_id = $2 \
         AND (taken_by IS NULL OR taken_until < $3) RETURNING ",
        pending_columns!()
    ))
    .bind(conversation_id)
    .bind(owner_id)
    .bind(timestamp(now))
    .fetch_all(&mut *tx)
    .await?;
    let mut closed: Vec<Message> = Vec::new();
    for pending in &taken {
        // Two calls of one message close in the same copy of it.
        if !closed.iter().any(|m| m.id == pending.message_id) {
            // A message that is gone (a regenerated reply) shows nothing to close.
            let Some(read) = messages.iter().find(|m| m.id == pending.message_id) else {
                continue;
            };
            closed.push(read.clone());
        }
        if let Some(message) = closed.iter_mut().find(|m| m.id == pending.message_id) {
            close(message, pending);
        }
    }
    for message in &closed {
        super::save_message(&mut *tx, conversation_id, message).await?;
    }
    tx.commit().await?;
    for message in closed {
        if let Some(kept) = messages.iter_mut().find(|m| m.id == message.id) {
            *kept = message;
        }
    }
    Ok(())
}

/// Forgets what a try at proposing call `call_id` left when it failed on our side: the
/// call if it was stored though no form shows it (unless a decision holds it), and the
/// try's message `message_id`. One transaction, so a new try finds both or neither.
pub async fn forget_failed_call(
    db: &Pool,
    conversation_id: &str,
    owner_id: &str,
    call_id: &str,
    message_id: Option<&str>,
) -> Result<(), StoreError> {
    let mut tx = crate::db::begin_write(db).await?;
    sqlx::query(
        "DELETE FROM pending_calls WHERE conversation_id = $1 AND owner_id = $2 \
         AND tool_call_id = $3 AND taken_by IS NULL",
    )
    .bind(conversation_id)
    .bind(owner_id)
    .bind(call_id)
    .execute(&mut *tx)
    .await?;
    if let Some(message_id) = message_id {
        sqlx::query("DELETE FROM messages WHERE conversation_id = $1 AND id = $2")
            .bind(conversation_id)
            .bind(message_id)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// How many calls of an assistant message still wait for a decision.
pub async fn pending_count(
    db: impl crate::db::Source,
    message_id: &str,
) -> Result<i64, StoreError> {
    let (count,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM pending_calls WHERE message_id = $1")
            .bind(message_id)
            .fetch_one(db)
            .await?;
    Ok(count)
}

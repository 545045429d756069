//! The conversation's lease (its one `running` row, across every process sharing the
//! database) and the closing of runs whose process died.
//!
//! A run takes its conversation by inserting its row; the unique index
//! `runs_one_running` refuses a second `running` row for the conversation, on SQLite and
//! PostgreSQL alike, so two replicas cannot both start one. The row's heartbeat renews
//! it. A row whose heartbeat is older than the stale limit belongs to a dead process:
//! whoever finds it first (a sweep, a new start in the conversation, a read) closes it as
//! interrupted, in one transaction that only one process can win: the row marked done,
//! the stored message finished honestly, and the closing events appended to the run's
//! log, so a follower sees the end.

use shared::{
    message::{Message, MessagePart, RunStatus},
    tools::{ErrorCode, ToolError},
};

use super::*;

/// Who holds a conversation whose lease could not be taken.
pub(super) struct Holder {
    pub(super) run_id: String,
    /// Its last heartbeat.
    pub(super) beat: String,
}

/// Inserts `run`'s row as the conversation's lease; the holder when another run has it.
pub(super) async fn take(
    db: &Pool,
    node: &str,
    run: &ActiveRun,
) -> Result<Option<Holder>, sqlx::Error> {
    let at = timestamp(now());
    let inserted = sqlx::query(
        "INSERT INTO runs (run_id, conversation_id, owner_id, status, node, stop_requested, \
         started_at, updated_at) VALUES ($1, $2, $3, 'running', $4, 0, $5, $5) \
         ON CONFLICT DO NOTHING",
    )
    .bind(&run.id)
    .bind(&run.conversation_id)
    .bind(&run.owner_id)
    .bind(node)
    .bind(&at)
    .execute(db)
    .await?;
    if inserted.rows_affected() == 1 {
        return Ok(None);
    }
    let holder: Option<(String, String)> = sqlx::query_as(
        "SELECT run_id, updated_at FROM runs WHERE conversation_id = $1 AND status = 'running'",
    )
    .bind(&run.conversation_id)
    .fetch_optional(db)
    .await?;
    Ok(Some(match holder {
        Some((run_id, beat)) => Holder { run_id, beat },
        // It ended between the insert and the look: the next try takes it.
        None => Holder {
            run_id: String::new(),
            beat: String::new(),
        },
    }))
}

/// Why a dead run could not be closed.
#[derive(Debug, thiserror::Error)]
pub enum CloseError {
    /// The database failed; the run stays as it was, for the next try.
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// A stored row could not be read.
    #[error("{0}")]
    Corrupt(String),
}

impl From<crate::store::StoreError> for CloseError {
    fn from(error: crate::store::StoreError) -> Self {
        Self::Corrupt(error.to_string())
    }
}

impl From<crate::tools::ExecError> for CloseError {
    fn from(error: crate::tools::ExecError) -> Self {
        match error {
            crate::tools::ExecError::Tool(error) => Self::Corrupt(error.message),
            crate::tools::ExecError::Internal(details) => Self::Corrupt(details),
        }
    }
}

/// Closes run `run_id` as interrupted if it is still `running` and its heartbeat is not
/// after `stale_since` (`None`: whatever its heartbeat, for a process closing its own
/// runs as it shuts down). Whether this call closed it (another process may have first).
pub async fn close_interrupted(
    db: &Pool,
    run_id: &str,
    stale_since: Option<&str>,
) -> Result<bool, CloseError> {
    let at = timestamp(now());
    let mut tx = db::begin_write(db).await?;
    // The claim: of the processes that found the run dead, one updates the row.
    let claimed: Option<(String, String)> = sqlx::query_as(
        "UPDATE runs SET status = 'done', interrupted = 1, updated_at = $1 \
         WHERE run_id = $2 AND status = 'running' AND ($3 = '' OR updated_at <= $3) \
         RETURNING conversation_id, owner_id",
    )
    .bind(&at)
    .bind(run_id)
    .bind(stale_since.unwrap_or(""))
    .fetch_optional(&mut *tx)
    .await?;
    let Some((conversation_id, owner_id)) = claimed else {
        tx.rollback().await?;
        return Ok(false);
    };
    // Decisions it was carrying out and had not committed: pending again, to be decided
    // again (an effect that committed deleted its row).
    crate::store::release_takes_of(&mut tx, &conversation_id, run_id).await?;
    let batches: Vec<(i64, String)> = sqlx::query_as(
        "SELECT first_seq, events FROM run_event_batches WHERE run_id = $1 ORDER BY first_seq",
    )
    .bind(run_id)
    .fetch_all(&mut *tx)
    .await?;
    let mut logged: Vec<(i64, String)> = Vec::new();
    for (first, events) in &batches {
        for (seq, data) in (*first..).zip(events.split('\n')) {
            if logged.last().is_none_or(|(last, _)| seq > *last) {
                logged.push((seq, data.to_owned()));
            }
        }
    }
    let last_seq = logged.last().map_or(0, |(seq, _)| *seq);
    let Some((mut message, held)) = run_message(&mut tx, &conversation_id, &logged).await? else {
        // Nothing of the reply was stored: the row alone is closed.
        tx.commit().await?;
        return Ok(true);
    };
    // What the log has and the stored copy does not (it is saved less often), then the
    // ends of what was left unfinished.
    for (_, data) in logged.iter().filter(|(seq, _)| *seq > held) {
        if let Ok(event) = serde_json::from_str::<AgentEvent>(data) {
            message.apply(&event);
        }
    }
    free_keys(&mut tx, &owner_id, &conversation_id, &message).await?;
    ask_again(&mut tx, &conversation_id, &mut message).await?;
    let closing = closing_events(&mut tx, &owner_id, &conversation_id, &message).await?;
    for event in &closing {
        message.apply(event);
    }
    let lines: Vec<Arc<str>> = closing
        .iter()
        .map(|event| Arc::from(serde_json::to_string(event).unwrap_or_else(|_| "{}".to_owned())))
        .collect();
    let end = last_seq + i64::try_from(lines.len()).unwrap_or(0);
    sqlx::query(
        "INSERT INTO run_event_batches (run_id, first_seq, last_seq, events) VALUES ($1, $2, $3, $4)",
    )
    .bind(run_id)
    .bind(last_seq + 1)
    .bind(end)
    .bind(storer::join_lines(&lines))
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE messages SET body = $1, run_seq = $2 WHERE conversation_id = $3 AND id = $4",
    )
    .bind(crate::store::encode(&message))
    .bind(end)
    .bind(&conversation_id)
    .bind(&message.id)
    .execute(&mut *tx)
    .await?;
    if db::backend(db) == Backend::Postgres {
        sqlx::query("SELECT COUNT(*) FROM (SELECT pg_notify($1, $2)) AS sent")
            .bind(EVENTS_CHANNEL)
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    tracing::warn!(run = %run_id, conversation = %conversation_id, "closed a run whose server stopped: the reply is marked interrupted");
    Ok(true)
}

/// Frees the idempotency keys the dead run held for calls it was carrying out (claimed,
/// not committed): the next decision runs at once instead of being told "in use" until
/// the lease ends. A holder that was only slow cannot record a result any more (its lease
/// token is gone), so its transaction and effect roll back: still at most once.
async fn free_keys(
    conn: &mut sqlx::AnyConnection,
    owner_id: &str,
    conversation_id: &str,
    message: &Message,
) -> Result<(), CloseError> {
    for part in &message.parts {
        let MessagePart::Tool(part) = part else {
            continue;
        };
        if part.is_final() || part.state_name() == "input-streaming" {
            continue;
        }
        for key in record_keys(conversation_id, part) {
            sqlx::query(
                "DELETE FROM idempotency_keys WHERE owner_id = $1 AND scope = $2 \
                 AND idem_key = $3 AND state = 'running'",
            )
            .bind(owner_id)
            .bind(part.tool_name())
            .bind(&key)
            .execute(&mut *conn)
            .await?;
        }
    }
    Ok(())
}

/// Parts whose decision was given back undecided (its run died before carrying it out:
/// the call is pending again, untaken) show the confirmation again, so the person can
/// answer it; a part's state never goes back, so the part starts afresh.
async fn ask_again(
    conn: &mut sqlx::AnyConnection,
    conversation_id: &str,
    message: &mut Message,
) -> Result<bool, CloseError> {
    let mut changed = false;
    for index in 0..message.parts.len() {
        let MessagePart::Tool(part) = &message.parts[index] else {
            continue;
        };
        if part.state_name() != "approval-responded" {
            continue;
        }
        let pending: Option<(String,)> = sqlx::query_as(
            "SELECT input FROM pending_calls WHERE conversation_id = $1 AND tool_call_id = $2 \
             AND taken_by IS NULL",
        )
        .bind(conversation_id)
        .bind(part.id())
        .fetch_optional(&mut *conn)
        .await?;
        let Some(input) = pending.and_then(|(input,)| serde_json::from_str::<Value>(&input).ok())
        else {
            continue;
        };
        let (id, tool_name) = (part.id().to_owned(), part.tool_name().to_owned());
        message.parts[index] =
            MessagePart::Tool(Box::new(shared::message::ToolPart::start(&id, &tool_name)));
        message.apply(&AgentEvent::ToolInputAvailable {
            tool_call_id: id.clone(),
            tool_name,
            input,
        });
        message.apply(&AgentEvent::ToolApprovalRequest {
            approval_id: id.clone(),
            tool_call_id: id,
            preview: None,
        });
        changed = true;
    }
    Ok(changed)
}

/// The message the run was writing (named by its `start`; without one, the conversation's
/// last message if it is a reply), and how many of the run's events its stored copy holds.
async fn run_message(
    conn: &mut sqlx::AnyConnection,
    conversation_id: &str,
    logged: &[(i64, String)],
) -> Result<Option<(Message, i64)>, CloseError> {
    let started =
        logged
            .first()
            .and_then(|(_, data)| match serde_json::from_str::<AgentEvent>(data) {
                Ok(AgentEvent::Start { message_id, .. }) => Some(message_id),
                _ => None,
            });
    let row: Option<(String, String, i64)> = match started {
        Some(id) => {
            sqlx::query_as(
                "SELECT id, body, run_seq FROM messages WHERE conversation_id = $1 AND id = $2",
            )
            .bind(conversation_id)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?
        }
        None => {
            sqlx::query_as(
                "SELECT id, body, run_seq FROM messages WHERE conversation_id = $1 \
                 ORDER BY seq DESC LIMIT 1",
            )
            .bind(conversation_id)
            .fetch_optional(&mut *conn)
            .await?
        }
    };
    let Some((id, body, held)) = row else {
        return Ok(None);
    };
    let message = crate::store::decode(id, &body)?;
    if message.role == Some(shared::message::Role::User) {
        return Ok(None);
    }
    Ok(Some((message, held)))
}

/// The events that end what `message` left unfinished when its run died: a call whose
/// effect committed shows its recorded result (the receipt); a confirmation still pending
/// stays to be answered; anything else ends as not done. Then the run's end, interrupted.
pub(crate) async fn closing_events(
    conn: &mut sqlx::AnyConnection,
    owner_id: &str,
    conversation_id: &str,
    message: &Message,
) -> Result<Vec<AgentEvent>, CloseError> {
    let mut events = Vec::new();
    for part in &message.parts {
        let MessagePart::Tool(part) = part else {
            continue;
        };
        if part.is_final() {
            continue;
        }
        let settled = settled(conn, owner_id, conversation_id, part).await?;
        if !settled.is_empty() {
            events.extend(settled);
            continue;
        }
        let pending: Option<(String,)> = sqlx::query_as(
            "SELECT tool_call_id FROM pending_calls WHERE conversation_id = $1 AND tool_call_id = $2",
        )
        .bind(conversation_id)
        .bind(part.id())
        .fetch_optional(&mut *conn)
        .await?;
        if pending.is_some() {
            // Stored and still waiting for the person: it stays theirs to answer.
            continue;
        }
        let error = ToolError::new(
            ErrorCode::Interrupted,
            "The server writing this reply stopped before this call ran, so nothing was done. \
             Do not say it was done.",
        );
        events.push(AgentEvent::ToolOutputError {
            tool_call_id: part.id().to_owned(),
            error_text: error.message.clone(),
            error,
        });
    }
    events.push(AgentEvent::finish(
        RunStatus::Interrupted,
        Some(conversation_id.to_owned()),
    ));
    Ok(events)
}

fn needs_approval(tool_name: &str) -> bool {
    shared::tools::ToolName::parse(tool_name)
        .is_some_and(|tool| tool.definition().requires_approval)
}

/// A call that ended as stopped or cut off: its effect may still have committed (a stop
/// that came as the commit did), and then its record says so.
fn cut_short(part: &shared::message::ToolPart) -> bool {
    part.error()
        .is_some_and(|error| matches!(error.code, ErrorCode::Cancelled | ErrorCode::Interrupted))
}

/// Whether `part`'s side effect has a recorded result (read only).
pub async fn has_record(
    db: &crate::db::Reads,
    owner_id: &str,
    conversation_id: &str,
    part: &shared::message::ToolPart,
) -> Result<bool, CloseError> {
    let mut conn = db.acquire().await?;
    let keys = record_keys(conversation_id, part);
    Ok(
        crate::idempotency::recorded(&mut conn, owner_id, part.tool_name(), &keys)
            .await?
            .is_some(),
    )
}

/// The keys an effect of `part` is recorded under: the call itself, or the key the model
/// gave (a checkout).
fn record_keys(conversation_id: &str, part: &shared::message::ToolPart) -> Vec<String> {
    let mut keys = vec![format!("{conversation_id}/{}", part.id())];
    if let Some(key) = part
        .input_json()
        .as_ref()
        .and_then(|input| input.get("idempotency_key"))
        .and_then(Value::as_str)
    {
        keys.push(key.to_owned());
    }
    keys
}

/// The events that show `part`'s recorded result, when its side effect committed (its
/// idempotency record is done) and the stored message does not say so yet (it may
/// predate the commit); none otherwise.
pub(crate) async fn settled(
    conn: &mut sqlx::AnyConnection,
    owner_id: &str,
    conversation_id: &str,
    part: &shared::message::ToolPart,
) -> Result<Vec<AgentEvent>, CloseError> {
    if part.state_name() == "output-available" {
        return Ok(Vec::new());
    }
    let keys = record_keys(conversation_id, part);
    let Some(result) =
        crate::idempotency::recorded(conn, owner_id, part.tool_name(), &keys).await?
    else {
        return Ok(Vec::new());
    };
    let id = part.id().to_owned();
    let mut events = Vec::new();
    if part.is_final() {
        // Ended as stopped, though the effect committed: told from its start, approved,
        // with the result (the caller starts the part afresh: an end is never changed).
        let Some(input) = part.input_json() else {
            return Ok(Vec::new());
        };
        events.push(AgentEvent::ToolInputAvailable {
            tool_call_id: id.clone(),
            tool_name: part.tool_name().to_owned(),
            input,
        });
        if part.approval().is_some() || needs_approval(part.tool_name()) {
            events.push(AgentEvent::ToolApprovalRequest {
                approval_id: id.clone(),
                tool_call_id: id.clone(),
                preview: part.preview().cloned(),
            });
            events.push(AgentEvent::decided(&id, true, None));
        }
    } else if part.state_name() == "approval-requested" {
        // An effect runs only on an approval: its record proves one was given.
        events.push(AgentEvent::decided(&id, true, None));
    }
    events.push(match result {
        Ok(output) => AgentEvent::ToolOutputAvailable {
            tool_call_id: id,
            output,
        },
        Err(error) => AgentEvent::ToolOutputError {
            tool_call_id: id,
            error_text: error.message.clone(),
            error,
        },
    });
    Ok(events)
}

/// Brings conversation `conversation_id`'s last reply in line with what happened, when no
/// run is writing it: a reply left unfinished (its run died and its row is gone) is
/// closed as interrupted, and a call whose effect committed shows its receipt instead of
/// the form or a "stopped". The reply as stored after, when it changed.
pub async fn settle_conversation(
    db: &Pool,
    owner_id: &str,
    conversation_id: &str,
) -> Result<Option<Message>, CloseError> {
    let mut tx = db::begin_write(db).await?;
    let running: Option<(String,)> =
        sqlx::query_as("SELECT run_id FROM runs WHERE conversation_id = $1 AND status = 'running'")
            .bind(conversation_id)
            .fetch_optional(&mut *tx)
            .await?;
    let last: Option<(String, String)> = sqlx::query_as(
        "SELECT id, body FROM messages WHERE conversation_id = $1 ORDER BY seq DESC LIMIT 1",
    )
    .bind(conversation_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((id, body)) = last.filter(|_| running.is_none()) else {
        tx.rollback().await?;
        return Ok(None);
    };
    let mut message = crate::store::decode(id, &body)?;
    if message.role == Some(shared::message::Role::User) {
        tx.rollback().await?;
        return Ok(None);
    }
    let mut changed = ask_again(&mut tx, conversation_id, &mut message).await?;
    // Calls ended as stopped whose effect committed: started afresh, then told whole.
    for index in 0..message.parts.len() {
        let MessagePart::Tool(part) = &message.parts[index] else {
            continue;
        };
        if !cut_short(part) {
            continue;
        }
        let events = settled(&mut tx, owner_id, conversation_id, part).await?;
        if events.is_empty() {
            continue;
        }
        let fresh = shared::message::ToolPart::start(part.id(), part.tool_name());
        message.parts[index] = MessagePart::Tool(Box::new(fresh));
        for event in &events {
            message.apply(event);
        }
        changed = true;
    }
    let events = if message.status.is_none() {
        closing_events(&mut tx, owner_id, conversation_id, &message).await?
    } else {
        let mut events = Vec::new();
        for part in &message.parts {
            if let MessagePart::Tool(part) = part {
                if !part.is_final() {
                    events.extend(settled(&mut tx, owner_id, conversation_id, part).await?);
                }
            }
        }
        events
    };
    for event in &events {
        message.apply(event);
    }
    let awaiting = message.parts.iter().any(
        |part| matches!(part, MessagePart::Tool(part) if part.state_name() == "approval-requested"),
    );
    if (changed || !events.is_empty())
        && message.status == Some(RunStatus::AwaitingApproval)
        && !awaiting
    {
        // It waited for a decision that was made and carried out; the words that would
        // have followed were never written.
        message.apply(&AgentEvent::finish(
            RunStatus::Interrupted,
            Some(conversation_id.to_owned()),
        ));
    }
    if events.is_empty() && !changed {
        tx.rollback().await?;
        return Ok(None);
    }
    sqlx::query("UPDATE messages SET body = $1 WHERE conversation_id = $2 AND id = $3")
        .bind(crate::store::encode(&message))
        .bind(conversation_id)
        .bind(&message.id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    tracing::warn!(conversation = %conversation_id, message = %message.id, "a stored reply disagreed with what happened (a crash): brought in line");
    Ok(Some(message))
}

use serde_json::Value;

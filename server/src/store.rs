//! Conversations, messages, pending calls and settings in the database.
//!
//! Rows are data from outside the process: a message that no longer parses is an error
//! value, never a panic.

use chrono::{DateTime, SecondsFormat, Utc};
use shared::{
    message::{Message, Role},
    tools::Assistant,
};

use crate::db::Pool;

mod pending;
pub use pending::*;

/// Why a store operation failed; details for the log only.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database failed.
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// A stored message is not valid JSON of a message.
    #[error("stored message {id} is corrupt: {reason}")]
    Corrupt {
        /// The message id.
        id: String,
        /// What serde said.
        reason: String,
    },
}

fn timestamp(now: DateTime<Utc>) -> String {
    now.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A new random id with a readable prefix.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}

/// A new id for a row that is written often (conversations, messages, runs): like
/// [`new_id`], but time-ordered (UUIDv7), so rows made together sit together in every
/// index on their id. Random ids sent each insert to a random page of each index, and a
/// commit writes every page it touched to the log in full. Not for secrets: it tells when
/// it was made and holds fewer random bits (74) than [`new_id`] (122).
pub fn new_row_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::now_v7().simple())
}

/// A conversation's header row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    /// Its id.
    pub id: String,
    /// Whose it is.
    pub owner_id: String,
    /// Which assistant it talks to, fixed at creation.
    pub assistant: Assistant,
}

/// Creates a conversation for `owner_id`.
pub async fn create_conversation(
    db: &Pool,
    owner_id: &str,
    assistant: Assistant,
    now: DateTime<Utc>,
) -> Result<Conversation, StoreError> {
    let conversation = new_conversation(owner_id, assistant);
    let mut conn = db.acquire().await?;
    insert_conversation(&mut conn, &conversation, now).await?;
    Ok(conversation)
}

/// A conversation not stored yet, with a fresh id: [`insert_conversation`] stores it, in
/// the transaction of its first turn.
pub fn new_conversation(owner_id: &str, assistant: Assistant) -> Conversation {
    Conversation {
        id: new_row_id("conv"),
        owner_id: owner_id.to_owned(),
        assistant,
    }
}

/// Stores a conversation's row on `conn` (in the caller's transaction, if any).
pub async fn insert_conversation(
    conn: &mut sqlx::AnyConnection,
    conversation: &Conversation,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let at = timestamp(now);
    sqlx::query(
        "INSERT INTO conversations (id, owner_id, assistant, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&conversation.id)
    .bind(&conversation.owner_id)
    .bind(conversation.assistant.as_str())
    .bind(&at)
    .bind(&at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Makes sure a conversation with this id exists for `owner_id` (the one conversation of
/// an owner's calls from MCP hosts, whose id is derived, not drawn). Another owner's
/// conversation with the same id is left alone and reported as corrupt.
pub async fn ensure_conversation(
    db: &Pool,
    id: &str,
    owner_id: &str,
    assistant: Assistant,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let at = timestamp(now);
    sqlx::query(
        "INSERT INTO conversations (id, owner_id, assistant, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
    )
    .bind(id)
    .bind(owner_id)
    .bind(assistant.as_str())
    .bind(&at)
    .bind(&at)
    .execute(db)
    .await?;
    match find_conversation(db, id, owner_id).await? {
        Some(_) => Ok(()),
        None => Err(StoreError::Corrupt {
            id: id.to_owned(),
            reason: "belongs to another owner".into(),
        }),
    }
}

/// The conversation, if it exists and belongs to `owner_id` (another owner's looks absent).
pub async fn find_conversation(
    db: impl crate::db::Source,
    id: &str,
    owner_id: &str,
) -> Result<Option<Conversation>, StoreError> {
    let row: Option<(String, String, String)> = sqlx::query_as(
        "SELECT id, owner_id, assistant FROM conversations WHERE id = $1 AND owner_id = $2",
    )
    .bind(id)
    .bind(owner_id)
    .fetch_optional(db)
    .await?;
    row.map(
        |(id, owner_id, assistant)| match Assistant::parse(&assistant) {
            Some(assistant) => Ok(Conversation {
                id,
                owner_id,
                assistant,
            }),
            // Written by a server that had an assistant this one has not.
            None => Err(StoreError::Corrupt {
                id,
                reason: format!("unknown assistant {assistant:?}"),
            }),
        },
    )
    .transpose()
}

pub(crate) fn decode(id: String, body: &str) -> Result<Message, StoreError> {
    serde_json::from_str(body).map_err(|e| StoreError::Corrupt {
        id,
        reason: e.to_string(),
    })
}

/// All messages of a conversation, oldest first.
pub async fn messages(
    db: impl crate::db::Source,
    conversation_id: &str,
) -> Result<Vec<Message>, StoreError> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT id, body FROM messages WHERE conversation_id = $1 ORDER BY seq")
            .bind(conversation_id)
            .fetch_all(db)
            .await?;
    rows.into_iter()
        .map(|(id, body)| decode(id, &body))
        .collect()
}

/// The last message of a conversation, if it has one.
pub async fn last_message(
    db: impl crate::db::Source,
    conversation_id: &str,
) -> Result<Option<Message>, StoreError> {
    let row: Option<(String, String)> = sqlx::query_as(
        "SELECT id, body FROM messages WHERE conversation_id = $1 ORDER BY seq DESC LIMIT 1",
    )
    .bind(conversation_id)
    .fetch_optional(db)
    .await?;
    row.map(|(id, body)| decode(id, &body)).transpose()
}

/// One message of a conversation.
pub async fn message(
    db: impl crate::db::Source,
    conversation_id: &str,
    message_id: &str,
) -> Result<Option<Message>, StoreError> {
    let row: Option<(String, String)> =
        sqlx::query_as("SELECT id, body FROM messages WHERE conversation_id = $1 AND id = $2")
            .bind(conversation_id)
            .bind(message_id)
            .fetch_optional(db)
            .await?;
    row.map(|(id, body)| decode(id, &body)).transpose()
}

pub(crate) fn encode(message: &Message) -> String {
    // A Message is plain data (strings, numbers, JSON values): serialising cannot fail.
    serde_json::to_string(message).unwrap_or_else(|_| "{}".to_owned())
}

/// Appends a message at the end of the conversation.
pub async fn append_message(
    db: &Pool,
    conversation_id: &str,
    message: &Message,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    append_messages_in(&mut tx, conversation_id, &[message], now).await?;
    tx.commit().await?;
    Ok(())
}

/// Appends messages, in order, at the end of the conversation, inside the caller's
/// transaction `tx` (a turn stores the person's message and the empty reply together).
pub async fn append_messages_in(
    tx: &mut sqlx::AnyConnection,
    conversation_id: &str,
    messages: &[&Message],
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let at = timestamp(now);
    // Replicas sharing a Postgres database may append to one conversation at once: the row
    // lock makes the second wait and number its message after the first's. (On SQLite the
    // INSERT below already runs under the one write lock.)
    crate::db::lock_for_update(
        tx,
        "SELECT id FROM conversations WHERE id = $1 FOR UPDATE",
        conversation_id,
    )
    .await?;
    for message in messages {
        let role = match message.role {
            Some(Role::User) => "user",
            Some(Role::Assistant) | None => "assistant",
        };
        sqlx::query(
            "INSERT INTO messages (id, conversation_id, seq, role, body, created_at) \
             VALUES ($1, $2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = $2), $3, $4, $5)",
        )
        .bind(&message.id)
        .bind(conversation_id)
        .bind(role)
        .bind(encode(message))
        .bind(&at)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query("UPDATE conversations SET updated_at = $1 WHERE id = $2")
        .bind(&at)
        .bind(conversation_id)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// A turn waiting to be stored: (a new conversation,) the person's message and the empty
/// reply. The run registry's writer stores it together with the run's row and whatever
/// other runs have to store at that moment (one transaction for all: group commit), and
/// the reply starts only once it is committed.
#[derive(Debug, Clone)]
pub struct Turn {
    conversation: Conversation,
    created: bool,
    user_id: String,
    user_body: String,
    reply_id: String,
    reply_body: String,
    at: String,
}

/// The statements that store turns on SQLite, each for any number of turns: every
/// parameter is a JSON array of rows ([`TurnRows`]), so the text never changes and is
/// prepared once. `$3`: conversations to create; `$4`: messages, numbered after the
/// conversation's last by their offset (SQLite computes the whole SELECT before inserting,
/// since it reads the table it inserts into, so a turn's two messages are last + 1 and
/// last + 2), their bodies as slices of `$9` ([`Texts`]); `$5`: conversations whose turn
/// makes them the latest. A row's fields are read by its index in the parameter
/// (`json_extract($n, '$[i][k]')`, the parsed parameter cached for the statement), not
/// from `json_each`'s `value`, which SQLite turns back into JSON text at every use.
pub const TURNS_SQL: &str = "INSERT INTO conversations (id, owner_id, assistant, created_at, \
     updated_at) SELECT json_extract($3, j.p || '[0]'), json_extract($3, j.p || '[1]'), \
     json_extract($3, j.p || '[2]'), json_extract($3, j.p || '[3]'), \
     json_extract($3, j.p || '[3]') \
     FROM (SELECT '$[' || key || ']' AS p FROM json_each($3)) AS j; \
     INSERT INTO messages (id, conversation_id, seq, role, body, created_at) \
     SELECT json_extract($4, j.p || '[0]'), json_extract($4, j.p || '[1]'), \
     (SELECT COALESCE(MAX(m.seq), 0) FROM messages AS m \
     WHERE m.conversation_id = json_extract($4, j.p || '[1]')) + json_extract($4, j.p || '[2]'), \
     json_extract($4, j.p || '[3]'), \
     CAST(substr($9, json_extract($4, j.p || '[4]'), json_extract($4, j.p || '[5]')) AS TEXT), \
     json_extract($4, j.p || '[6]') \
     FROM (SELECT '$[' || key || ']' AS p FROM json_each($4)) AS j; \
     UPDATE conversations SET updated_at = json_extract($5, j.p || '[3]') \
     FROM (SELECT '$[' || key || ']' AS p FROM json_each($5)) AS j \
     WHERE conversations.id = json_extract($5, j.p || '[0]') \
     AND conversations.owner_id = json_extract($5, j.p || '[1]') \
     AND conversations.assistant = json_extract($5, j.p || '[2]'); ";

/// The long texts of a SQLite write script (message bodies, batches of events) laid end
/// to end in one BLOB parameter; a row names its text by where it starts (1-based, as
/// `substr` counts bytes of a BLOB) and how many bytes it has. Inside a JSON array of
/// rows the same text would be escaped (every quote of a JSON body) and then parsed and
/// unescaped again by SQLite: that was a fifth of the instructions of a stored step.
#[derive(Debug, Default)]
pub struct Texts(String);

/// Where a text is in [`Texts`]: `(start, length)`, for `substr(blob, start, length)`.
pub type TextSlice = (i64, i64);

impl Texts {
    /// Appends `text`.
    pub fn push(&mut self, text: &str) -> TextSlice {
        self.push_with(|out| out.push_str(text))
    }

    /// Appends a batch of events as stored ([`push_lines`]).
    pub fn push_lines(&mut self, events: &[std::sync::Arc<str>]) -> TextSlice {
        self.push_with(|out| push_lines(out, events))
    }

    fn push_with(&mut self, write: impl FnOnce(&mut String)) -> TextSlice {
        let start = self.0.len();
        write(&mut self.0);
        let length = self.0.len() - start;
        (
            i64::try_from(start + 1).unwrap_or(i64::MAX),
            i64::try_from(length).unwrap_or(i64::MAX),
        )
    }

    /// The parameter to bind.
    pub fn into_blob(self) -> Vec<u8> {
        self.0.into_bytes()
    }
}

/// A batch of events as stored, appended to `out`: one JSON text per line (serde's JSON
/// never holds a raw line break). Every writer of batches goes through here, and readers
/// split on the same line breaks.
pub fn push_lines(out: &mut String, events: &[std::sync::Arc<str>]) {
    out.reserve(events.iter().map(|data| data.len() + 1).sum());
    for (index, data) in events.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str(data);
    }
}

/// The rows of some turns, for [`TURNS_SQL`]'s parameters.
#[derive(Debug, Default, serde::Serialize)]
pub struct TurnRows<'a> {
    /// `[id, owner, assistant, at]` of each conversation to create.
    pub conversations: Vec<[&'a str; 4]>,
    /// `(id, conversation, offset, role, body start, body length, at)` of each message
    /// (the body is in the script's [`Texts`]).
    pub messages: Vec<(&'a str, &'a str, i64, &'a str, i64, i64, &'a str)>,
    /// `[id, owner, assistant, at]` of each older conversation a turn was added to.
    pub touched: Vec<[&'a str; 4]>,
}

impl Turn {
    /// The turn of `user`'s message and the empty `reply` in `conversation` (`created`:
    /// the conversation is new and is stored with it).
    pub fn new(
        conversation: &Conversation,
        created: bool,
        user: &Message,
        reply: &Message,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            conversation: conversation.clone(),
            created,
            user_id: user.id.clone(),
            user_body: encode(user),
            reply_id: reply.id.clone(),
            reply_body: encode(reply),
            at: timestamp(now),
        }
    }

    /// Adds its rows to `rows` and its messages' bodies to `texts` (the SQLite path,
    /// [`TURNS_SQL`]).
    pub fn add_rows<'a>(&'a self, rows: &mut TurnRows<'a>, texts: &mut Texts) {
        let c = &self.conversation;
        let header = [
            c.id.as_str(),
            c.owner_id.as_str(),
            c.assistant.as_str(),
            self.at.as_str(),
        ];
        if self.created {
            rows.conversations.push(header);
        } else {
            rows.touched.push(header);
        }
        let (start, length) = texts.push(&self.user_body);
        rows.messages
            .push((&self.user_id, &c.id, 1, "user", start, length, &self.at));
        let (start, length) = texts.push(&self.reply_body);
        rows.messages.push((
            &self.reply_id,
            &c.id,
            2,
            "assistant",
            start,
            length,
            &self.at,
        ));
    }

    /// Stores it statement by statement on `conn`, inside the caller's transaction (the
    /// PostgreSQL path; SQLite takes [`Turn::add_rows`]).
    pub async fn store(&self, conn: &mut sqlx::AnyConnection) -> Result<(), sqlx::Error> {
        if self.created {
            sqlx::query(
                "INSERT INTO conversations (id, owner_id, assistant, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $4)",
            )
            .bind(&self.conversation.id)
            .bind(&self.conversation.owner_id)
            .bind(self.conversation.assistant.as_str())
            .bind(&self.at)
            .execute(&mut *conn)
            .await?;
        } else {
            // Replicas may append to one conversation at once: the row lock makes the
            // second wait and number its messages after the first's.
            crate::db::lock_for_update(
                conn,
                "SELECT id FROM conversations WHERE id = $1 FOR UPDATE",
                &self.conversation.id,
            )
            .await?;
        }
        for (id, role, body) in [
            (&self.user_id, "user", &self.user_body),
            (&self.reply_id, "assistant", &self.reply_body),
        ] {
            sqlx::query(
                "INSERT INTO messages (id, conversation_id, seq, role, body, created_at) \
                 VALUES ($1, $2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages \
                 WHERE conversation_id = $2), $3, $4, $5)",
            )
            .bind(id)
            .bind(&self.conversation.id)
            .bind(role)
            .bind(body)
            .bind(&self.at)
            .execute(&mut *conn)
            .await?;
        }
        if !self.created {
            sqlx::query("UPDATE conversations SET updated_at = $1 WHERE id = $2")
                .bind(&self.at)
                .bind(&self.conversation.id)
                .execute(&mut *conn)
                .await?;
        }
        Ok(())
    }
}

/// Replaces the replies `replaced` of `owner_id`'s conversation by the empty `reply`, with
/// the confirmations they left open, in one transaction: a reload sees the old replies
/// (still decidable) or the new one, never both, neither, or a form whose call is gone.
pub async fn replace_replies(
    db: &Pool,
    conversation_id: &str,
    owner_id: &str,
    replaced: &[&str],
    reply: &Message,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let at = timestamp(now);
    let mut tx = db.begin().await?;
    // A call a decision holds right now is left to it (as `take_all_pending` does); the
    // caller holds the conversation's place, so none can be.
    sqlx::query(
        "DELETE FROM pending_calls WHERE conversation_id = $1 AND owner_id = $2 \
         AND (taken_by IS NULL OR taken_until < $3)",
    )
    .bind(conversation_id)
    .bind(owner_id)
    .bind(&at)
    .execute(&mut *tx)
    .await?;
    for id in replaced {
        sqlx::query("DELETE FROM messages WHERE conversation_id = $1 AND id = $2")
            .bind(conversation_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query(
        "INSERT INTO messages (id, conversation_id, seq, role, body, created_at) \
         VALUES ($1, $2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages \
         WHERE conversation_id = $2), 'assistant', $3, $4)",
    )
    .bind(&reply.id)
    .bind(conversation_id)
    .bind(encode(reply))
    .bind(&at)
    .execute(&mut *tx)
    .await?;
    sqlx::query("UPDATE conversations SET updated_at = $1 WHERE id = $2")
        .bind(&at)
        .bind(conversation_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Replaces a stored message's content (its parts and status as the reducer left them).
pub async fn save_message<'e>(
    db: impl sqlx::Executor<'e, Database = sqlx::Any>,
    conversation_id: &str,
    message: &Message,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE messages SET body = $1 WHERE conversation_id = $2 AND id = $3")
        .bind(encode(message))
        .bind(conversation_id)
        .bind(&message.id)
        .execute(db)
        .await?;
    Ok(())
}

/// A server setting.
pub async fn setting(db: &Pool, key: &str) -> Result<Option<String>, StoreError> {
    let row: Option<(String,)> = sqlx::query_as("SELECT value FROM settings WHERE key = $1")
        .bind(key)
        .fetch_optional(db)
        .await?;
    Ok(row.map(|(value,)| value))
}

/// Stores a setting unless one is there already; returns the value in force (so that
/// several processes starting together agree on one).
pub async fn setting_or_insert(db: &Pool, key: &str, value: &str) -> Result<String, StoreError> {
    sqlx::query("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING")
        .bind(key)
        .bind(value)
        .execute(db)
        .await?;
    Ok(setting(db, key).await?.unwrap_or_else(|| value.to_owned()))
}

/// A run's message as its last event left it, to be stored with the run's last events
/// (one transaction: the stored message and the run's "done" agree).
#[derive(Debug, Clone)]
pub struct MessageSave {
    /// The conversation.
    pub conversation_id: String,
    /// The message.
    pub message_id: String,
    /// Its content, JSON text.
    pub body: String,
    /// How many of its run's events it holds.
    pub run_seq: i64,
}

impl MessageSave {
    /// What [`save_run_message`] would store for `message`.
    pub fn of(conversation_id: &str, message: &Message, run_seq: u64) -> Self {
        Self {
            conversation_id: conversation_id.to_owned(),
            message_id: message.id.clone(),
            body: encode(message),
            run_seq: i64::try_from(run_seq).unwrap_or(i64::MAX),
        }
    }

    /// Stores it on `conn` (inside the caller's transaction, if any).
    pub async fn store(&self, conn: &mut sqlx::AnyConnection) -> Result<(), sqlx::Error> {
        sqlx::query(
            "UPDATE messages SET body = $1, run_seq = $2 WHERE conversation_id = $3 AND id = $4",
        )
        .bind(&self.body)
        .bind(self.run_seq)
        .bind(&self.conversation_id)
        .bind(&self.message_id)
        .execute(conn)
        .await?;
        Ok(())
    }
}

/// Where a run leaves its message as it ended: the run registry stores it in the
/// transaction of the run's last events and its "done" — one commit instead of two, and the
/// stored reply and the run's row never disagree. Cheap to clone; clones share the slot.
#[derive(Debug, Clone, Default)]
pub struct LastSave {
    slot: std::sync::Arc<std::sync::Mutex<Option<MessageSave>>>,
    /// A call waiting for approval, with the message that shows its form, for the
    /// registry's writer to store durably in its next commit ([`LastSave::store_pending`]).
    pending: std::sync::Arc<std::sync::Mutex<Option<(DurablePending, PendingWaiter)>>>,
    /// The registry's writer, woken for a pending call (unset: it finds it at its next tick).
    wake: std::sync::Arc<std::sync::OnceLock<std::sync::Arc<tokio::sync::Notify>>>,
    /// Set when the run is stopped because its server shuts down, not by the person: the
    /// run then ends [`shared::message::RunStatus::Interrupted`].
    interrupted: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl LastSave {
    /// Marks the run as stopped by its server's shutdown (before its stop token fires).
    pub fn interrupt(&self) {
        self.interrupted
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Whether the run was stopped by its server's shutdown.
    pub fn is_interrupted(&self) -> bool {
        self.interrupted.load(std::sync::atomic::Ordering::Acquire)
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<MessageSave>> {
        // Plain data: a panic elsewhere while holding the lock leaves it usable.
        match self.slot.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Sets the message to store when the run is over (the last call wins).
    pub fn set(&self, save: MessageSave) {
        *self.slot() = Some(save);
    }

    /// The message to store, left in place (until it is stored).
    pub fn peek(&self) -> Option<MessageSave> {
        self.slot().clone()
    }

    /// The message to store, taken out (it was stored, or is stored by the taker).
    pub fn take(&self) -> Option<MessageSave> {
        self.slot().take()
    }

    /// Takes the message out if it holds no more than `run_seq` events: a copy at least
    /// that new was stored. A newer one set meanwhile stays for the next write.
    pub fn take_if_seq(&self, run_seq: i64) {
        let mut slot = self.slot();
        if slot.as_ref().is_some_and(|save| save.run_seq <= run_seq) {
            slot.take();
        }
    }

    /// Names the writer to wake when a pending call is left here.
    pub fn wake_with(&self, wake: std::sync::Arc<tokio::sync::Notify>) {
        let _ = self.wake.set(wake);
    }

    /// Stores `call` and `save` (the message showing the call's confirmation form) in one
    /// durable commit of the registry's writer, shared with every reply being stored at
    /// that moment, instead of a commit of their own on the writer connection: the form
    /// may be streamed once this returns `Ok`. Nothing is stored when it fails.
    pub async fn store_pending(
        &self,
        call: PendingCall,
        created_at: DateTime<Utc>,
        save: MessageSave,
    ) -> Result<(), StoreError> {
        let (done, stored) = tokio::sync::oneshot::channel();
        let request = DurablePending {
            call,
            created_at: timestamp(created_at),
            save,
        };
        *lock_pending(&self.pending) = Some((request, done));
        if let Some(wake) = self.wake.get() {
            wake.notify_one();
        }
        let mut stored = std::pin::pin!(stored);
        let answer = match tokio::time::timeout(PENDING_STORE_WAIT, &mut stored).await {
            Ok(answer) => answer,
            Err(_) => {
                // Taken back, it is certain never to be stored: the call is reported as
                // failed. Already taken, the writer is storing it and tells how that went;
                // failing it now could leave a stored call the person is told failed.
                if lock_pending(&self.pending).take().is_some() {
                    return Err(StoreError::Db(sqlx::Error::PoolTimedOut));
                }
                stored.await
            }
        };
        match answer {
            Ok(result) => result.map_err(StoreError::from),
            // The writer went away with the request (its task ended abnormally).
            Err(_) => Err(StoreError::Db(sqlx::Error::WorkerCrashed)),
        }
    }

    /// The pending call left for the writer, taken out.
    pub fn take_pending(&self) -> Option<(DurablePending, PendingWaiter)> {
        lock_pending(&self.pending).take()
    }
}

/// How long a run waits for its pending call's commit before reporting the call as failed.
const PENDING_STORE_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Told once a [`DurablePending`] is committed, or why it was not.
pub type PendingWaiter = tokio::sync::oneshot::Sender<Result<(), sqlx::Error>>;

/// A call waiting for approval and the message showing its form, stored together.
#[derive(Debug)]
pub struct DurablePending {
    /// The call.
    pub call: PendingCall,
    /// When it was proposed, as stored.
    pub created_at: String,
    /// The message as it shows the call's form.
    pub save: MessageSave,
}

fn lock_pending<T>(slot: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Plain data: a panic elsewhere while holding the lock leaves it usable.
    match slot.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Replaces a stored message's content as a run left it after emitting `run_seq` events,
/// and records that number with it (in the same statement), so a browser that reloads
/// mid-reply can ask the run for exactly the events the stored copy lacks.
pub async fn save_run_message(
    db: &Pool,
    conversation_id: &str,
    message: &Message,
    run_seq: u64,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE messages SET body = $1, run_seq = $2 WHERE conversation_id = $3 AND id = $4",
    )
    .bind(encode(message))
    .bind(i64::try_from(run_seq).unwrap_or(i64::MAX))
    .bind(conversation_id)
    .bind(&message.id)
    .execute(db)
    .await?;
    Ok(())
}

/// All messages of a conversation, oldest first, each with how many events of its latest
/// run its stored content holds (read together, so the two agree).
pub async fn messages_with_run_seq(
    db: impl crate::db::Source,
    conversation_id: &str,
) -> Result<Vec<(Message, u64)>, StoreError> {
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT id, body, run_seq FROM messages WHERE conversation_id = $1 ORDER BY seq",
    )
    .bind(conversation_id)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|(id, body, run_seq)| Ok((decode(id, &body)?, u64::try_from(run_seq).unwrap_or(0))))
        .collect()
}

//! The replies being written ("runs"): at most one per conversation, each with the log of
//! every event it emitted, so a reply can be followed again after the browser lost it.
//!
//! A run's events are numbered 1, 2, … in the order the agent emitted them. On the process
//! running it, a subscriber reads the in-memory log from where it is and waits for the
//! log to grow (woken by a `Notify`), so nothing is lost or repeated. The
//! events also go to the database in batches (`run_event_batches`, at least every 100 ms and when
//! the run ends), with a heartbeat in `runs`, so any server process sharing the database
//! can replay a run and follow it: woken by `LISTEN/NOTIFY` on PostgreSQL, by polling every
//! 100 ms on SQLite. A stop asked of another process is a flag in `runs` (and a
//! notification); the running process reads it and cancels the run. A run whose process
//! died stops beating and is treated as over after [`STALE_AFTER`].

use std::{
    collections::HashMap,
    future::Future,
    pin::Pin,
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc, Mutex, MutexGuard, OnceLock, Weak,
    },
    time::{Duration, Instant},
};

use chrono::{DateTime, SecondsFormat, Utc};
use futures::Stream;
use shared::events::AgentEvent;
use tokio::sync::{broadcast, oneshot, Notify};
use tokio_util::sync::CancellationToken;

use crate::{
    agent::EventSender,
    db::{self, Backend, Pool},
    store::{LastSave, Turn},
};

mod follow;
mod lease;
mod lifecycle;
mod reserve;
mod storer;

pub use reserve::Reservation;

use follow::listen;
#[cfg(test)]
use follow::{row_state, stored_events, RowState};

pub use lease::{close_interrupted, has_record, settle_conversation, CloseError};
use storer::store_all;
#[cfg(test)]
use storer::{write_batches, Batch};

/// How many runs one owner may have going at once unless configured otherwise
/// (`DATBAN_MAX_RUNS_PER_OWNER`).
pub const DEFAULT_MAX_RUNS_PER_OWNER: usize = 3;

/// A run whose heartbeat is older than this is treated as over: its process died.
pub const STALE_AFTER: Duration = Duration::from_secs(15);

/// The PostgreSQL channel told a run's id after each batch of its events is stored.
pub const EVENTS_CHANNEL: &str = "datban_run_events";

/// The PostgreSQL channel told a run's id when another process asks it to stop.
pub const STOP_CHANNEL: &str = "datban_run_stop";

/// How long a count of the runs on other processes is used before it is counted again.
const ELSEWHERE_FRESH: Duration = Duration::from_millis(100);
/// How often a running run stores its new events.
const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// How many turns of the scheduler the storer lets pass, when several replies are going,
/// before it gathers what they have to store.
const GATHER_YIELDS: usize = 32;
/// How often a run with nothing new to store still proves it is alive; well under
/// [`STALE_AFTER`].
const HEARTBEAT_EVERY: Duration = Duration::from_secs(3);
/// How often the database is read for new events or a stop request when no notification
/// can wake the reader (SQLite).
const POLL_EVERY: Duration = Duration::from_millis(100);
/// The same with notifications (PostgreSQL): only a safety net for a lost connection.
const NOTIFIED_POLL_EVERY: Duration = Duration::from_secs(1);
/// How long a new turn waits for the storer to commit it before the request gives up.
const TURN_STORE_WAIT: Duration = Duration::from_secs(30);
/// How long the end of a run waits for its last events to be stored.
const FINAL_STORE_WAIT: Duration = Duration::from_secs(10);
/// How long the rows of a finished (or dead) run are kept, so slow followers can finish.
const KEEP_FINISHED: Duration = Duration::from_secs(600);
/// The events of runs finished before `$1`, then ([`PURGE_RUNS_SQL`]) their rows.
const PURGE_EVENTS_SQL: &str = "DELETE FROM run_event_batches WHERE run_id IN \
     (SELECT run_id FROM runs WHERE updated_at < $1 AND status = 'done')";
const PURGE_RUNS_SQL: &str = "DELETE FROM runs WHERE updated_at < $1 AND status = 'done'";
/// How often old rows are deleted, at most.
const PURGE_EVERY: Duration = Duration::from_secs(60);
/// How long runs stopped by a shutdown have to store their end before they are closed
/// from outside.
const STOP_AT_SHUTDOWN: Duration = Duration::from_secs(3);
/// Batches of events read from the database per query.
const PAGE: usize = 100;

/// A stream of a run's events, each already serialised as one UI Message Stream chunk.
pub type EventStream = Pin<Box<dyn Stream<Item = Arc<str>> + Send>>;

/// Why a run could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReserveError {
    /// The conversation already has a run, on this process or another.
    #[error("a reply is already being written in this conversation")]
    Busy {
        /// The run, when it is known (a client follows it instead).
        running: Option<String>,
    },
    /// This process is shutting down and starts nothing new.
    #[error("this server is shutting down")]
    ShuttingDown,
    /// The owner has as many runs going as allowed.
    #[error("{max} replies are already being written for this person")]
    TooMany {
        /// The limit.
        max: usize,
    },
}

/// The registry of this process's runs, and the way to the other processes' runs through
/// the database. Cheap to clone.
#[derive(Clone)]
pub struct Runs {
    inner: Arc<Inner>,
}

struct Inner {
    db: Pool,
    /// For followers' reads (`db::readers`), so they never queue behind the writer.
    reads: crate::db::Reads,
    /// This process's name in `runs.node`.
    node: String,
    max_per_owner: AtomicUsize,
    /// The runs of this process, by conversation id.
    active: Mutex<HashMap<String, Arc<ActiveRun>>>,
    /// Woken whenever a run leaves `active`, for requests waiting for their conversation.
    freed: Notify,
    /// Wakes the storer at once (a run ended).
    wake_storer: Arc<Notify>,
    /// Set once the storer task is started.
    storer: OnceLock<()>,
    /// Ids of runs whose new events were stored by some process (from `LISTEN`).
    stored: broadcast::Sender<Arc<str>>,
    /// Set once the PostgreSQL listener task is started.
    listener: OnceLock<()>,
    last_purge: Mutex<Option<Instant>>,
    /// Runs going on other processes, per owner, as last counted, and when: asking the
    /// database for every new run cost a round trip per reply.
    elsewhere: Mutex<Option<(Instant, HashMap<String, usize>)>>,
    /// How old a heartbeat may be before its run counts as dead, in milliseconds.
    stale_after_ms: std::sync::atomic::AtomicU64,
    /// Set once the sweeper of dead runs is started.
    sweeper: OnceLock<()>,
    /// Set when the process is shutting down: no new run starts.
    closing: AtomicBool,
    /// Set at the very end of a shutdown: the storer writes nothing more (the runs left are
    /// closed as interrupted, as another process would).
    frozen: AtomicBool,
}

impl Inner {
    fn stale_after(&self) -> Duration {
        Duration::from_millis(self.stale_after_ms.load(Ordering::Relaxed))
    }

    /// The heartbeat a live run has at least.
    fn fresh_since(&self) -> String {
        fresh_since(self.stale_after())
    }

    /// How often a run with nothing new to store still beats: several times within the
    /// stale limit.
    fn heartbeat_every(&self) -> Duration {
        HEARTBEAT_EVERY.min(self.stale_after() / 5)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere while holding the lock leaves plain data that is still usable.
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The real time (the agent's clock may be pinned in tests; heartbeats compare with the
/// real clocks of other processes).
fn now() -> DateTime<Utc> {
    DateTime::<Utc>::from(std::time::SystemTime::now())
}

fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The heartbeat a live run has at least, for runs dead after `stale_after`
/// (timestamps compare as text: one fixed format).
fn fresh_since(stale_after: Duration) -> String {
    let stale = chrono::TimeDelta::from_std(stale_after).unwrap_or(chrono::TimeDelta::MAX);
    timestamp(now() - stale)
}

/// Where a conversation's run in progress is.
pub enum Current {
    /// On this process.
    Local(Arc<ActiveRun>),
    /// On another process (or just finished here): followed through the database.
    Remote(String),
    /// No run is going.
    None,
}

impl Current {
    /// The run's id, if there is a run.
    pub fn run_id(&self) -> Option<&str> {
        match self {
            Current::Local(run) => Some(run.id()),
            Current::Remote(id) => Some(id),
            Current::None => None,
        }
    }
}

/// Told whether a turn handed to the storer was committed.
type TurnWaiter = oneshot::Sender<Result<(), sqlx::Error>>;

/// One run of this process: its stop switch and its events so far.
pub struct ActiveRun {
    id: String,
    conversation_id: String,
    owner_id: String,
    token: CancellationToken,
    log: Mutex<Log>,
    /// Wakes subscribers waiting for the log to grow or close. A `Notify` inside the run,
    /// not a `watch` channel: a channel is an allocation of its own (about 330 bytes, room
    /// for eight wait lists) in every reply being written.
    grown: Notify,
    /// Set when the agent is done: the storer then writes the rest with "done".
    ending: AtomicBool,
    /// Told once the storer wrote the rest.
    stored_done: Notify,
    /// When the storer last wrote this run's row (its heartbeat).
    last_write: Mutex<Instant>,
    /// The run's message as it ended, stored with its last events.
    last_save: LastSave,
    /// The turn the storer writes before anything else of this run, and the request that
    /// waits for its commit.
    turn: Mutex<Option<(Turn, TurnWaiter)>>,
    /// Whether the run's row may be written: its conversation is stored. Until then the
    /// storer leaves the run alone (a heartbeat would name a conversation not yet there).
    row_ready: AtomicBool,
}

struct Log {
    /// Every event so far; event `n` (from 1) is at index `n - 1`.
    events: Vec<Arc<str>>,
    /// How many of `events` are stored in the database.
    stored: usize,
    /// Set once the run is over: subscribers read what is left and end.
    closed: bool,
}

impl ActiveRun {
    fn new(conversation_id: &str, owner_id: &str) -> Self {
        Self {
            id: crate::store::new_row_id("run"),
            conversation_id: conversation_id.to_owned(),
            owner_id: owner_id.to_owned(),
            token: CancellationToken::new(),
            log: Mutex::new(Log {
                events: Vec::new(),
                stored: 0,
                closed: false,
            }),
            grown: Notify::new(),
            ending: AtomicBool::new(false),
            stored_done: Notify::new(),
            last_write: Mutex::new(Instant::now()),
            last_save: LastSave::default(),
            turn: Mutex::new(None),
            row_ready: AtomicBool::new(false),
        }
    }

    /// The run's id (also the `x-datban-run-id` header of its streams).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The conversation it writes.
    pub fn conversation_id(&self) -> &str {
        &self.conversation_id
    }

    fn push(&self, event: &AgentEvent) {
        // An event is plain data: serialising it cannot fail.
        let data: Arc<str> = serde_json::to_string(event)
            .unwrap_or_else(|_| "{}".to_owned())
            .into();
        lock(&self.log).events.push(data);
        // Nobody listening is fine: the run goes on for the log and the database.
        self.grown.notify_waiters();
    }

    fn unstored(&self) -> (usize, Vec<Arc<str>>) {
        let log = lock(&self.log);
        (log.stored, log.events[log.stored..].to_vec())
    }

    fn mark_stored(&self, upto: usize) {
        let mut log = lock(&self.log);
        log.stored = log.stored.max(upto);
    }

    /// Ends the run's streams: subscribers read what is left and end.
    fn close(&self) {
        lock(&self.log).closed = true;
        self.grown.notify_waiters();
    }

    /// The run's events after number `after` (0: all, from its `start`), then its new ones
    /// as they come, until the run is over.
    ///
    /// Once the agent is done, what it wrote last (its `finish`) is held until the run's
    /// end is stored, then given with the end: a client is never told a reply finished
    /// that the server could still lose, and the last events, `[DONE]` and the body's end
    /// leave in one write instead of two (a weather reply that ends before its response
    /// is sent is then one write in all, with [`sse`](crate::api)'s first frame).
    pub fn subscribe(self: &Arc<Self>, after: u64) -> EventStream {
        let run = Arc::clone(self);
        Box::pin(async_stream::stream! {
            let mut next = usize::try_from(after).unwrap_or(usize::MAX);
            loop {
                // Waiting before the log is read: an event pushed after the read wakes
                // this wait, so it cannot be missed.
                let grown = run.grown.notified();
                tokio::pin!(grown);
                grown.as_mut().enable();
                let (new, closed) = {
                    let log = lock(&run.log);
                    if !log.closed && run.ending.load(Ordering::Acquire) {
                        // `close` wakes `grown` once the end is stored (or given up on).
                        (Vec::new(), false)
                    } else {
                        let start = next.min(log.events.len());
                        (log.events[start..].to_vec(), log.closed)
                    }
                };
                next += new.len();
                for data in new {
                    yield data;
                }
                if closed {
                    break;
                }
                grown.await;
            }
        })
    }
}

impl Runs {
    /// An empty registry over `db`, allowing [`DEFAULT_MAX_RUNS_PER_OWNER`] runs per owner.
    pub fn new(db: Pool) -> Self {
        Self::with_reader(db.clone(), crate::db::Reads::shared(db))
    }

    /// Like [`Runs::new`], reading other processes' runs through `reads`.
    pub fn with_reader(db: Pool, reads: db::Reads) -> Self {
        let (stored, _) = broadcast::channel(256);
        Self {
            inner: Arc::new(Inner {
                db,
                reads,
                node: crate::store::new_id("node"),
                max_per_owner: AtomicUsize::new(DEFAULT_MAX_RUNS_PER_OWNER),
                active: Mutex::new(HashMap::new()),
                freed: Notify::new(),
                wake_storer: Arc::new(Notify::new()),
                storer: OnceLock::new(),
                stored,
                listener: OnceLock::new(),
                last_purge: Mutex::new(None),
                elsewhere: Mutex::new(None),
                stale_after_ms: std::sync::atomic::AtomicU64::new(
                    u64::try_from(STALE_AFTER.as_millis()).unwrap_or(u64::MAX),
                ),
                sweeper: OnceLock::new(),
                closing: AtomicBool::new(false),
                frozen: AtomicBool::new(false),
            }),
        }
    }

    /// Sets how many runs one owner may have going at once (at least 1).
    pub fn set_max_per_owner(&self, max: usize) {
        self.inner
            .max_per_owner
            .store(max.max(1), Ordering::Relaxed);
    }

    /// Sets how old a run's heartbeat may be before any process closes the run as
    /// interrupted (its process died). At least a second: a live run beats several times
    /// within it.
    pub fn set_stale_after(&self, after: Duration) {
        let ms = u64::try_from(after.as_millis())
            .unwrap_or(u64::MAX)
            .max(1_000);
        self.inner.stale_after_ms.store(ms, Ordering::Relaxed);
    }

    /// How old a heartbeat may be before its run counts as dead.
    pub fn stale_after(&self) -> Duration {
        self.inner.stale_after()
    }

    /// How many runs one owner may have going at once.
    pub fn max_per_owner(&self) -> usize {
        self.inner.max_per_owner.load(Ordering::Relaxed)
    }

    /// This process's name in the `runs` table.
    pub fn node(&self) -> &str {
        &self.inner.node
    }

    fn is_postgres(&self) -> bool {
        db::backend(&self.inner.db) == Backend::Postgres
    }

    fn active(&self) -> MutexGuard<'_, HashMap<String, Arc<ActiveRun>>> {
        lock(&self.inner.active)
    }

    /// Gives a run's place back and ends its live streams.
    fn release(&self, run: &ActiveRun) {
        {
            let mut active = self.active();
            if active
                .get(&run.conversation_id)
                .is_some_and(|current| current.id == run.id)
            {
                active.remove(&run.conversation_id);
            }
        }
        self.inner.freed.notify_waiters();
        run.close();
    }

    /// The conversation's run in progress, here or on another process.
    pub async fn current(&self, conversation_id: &str) -> Result<Current, sqlx::Error> {
        if let Some(run) = self.active().get(conversation_id).cloned() {
            return Ok(Current::Local(run));
        }
        let row: Option<(String, String)> = sqlx::query_as(
            "SELECT run_id, updated_at FROM runs WHERE conversation_id = $1 \
             AND status = 'running' ORDER BY started_at DESC LIMIT 1",
        )
        .bind(conversation_id)
        .fetch_optional(&self.inner.reads)
        .await?;
        let fresh = self.inner.fresh_since();
        Ok(match row {
            Some((id, beat)) if beat > fresh => Current::Remote(id),
            Some((id, _)) => {
                // Its process died and nobody closed it yet: closed now, so this read
                // shows the reply as it ended instead of one still being written.
                match close_interrupted(&self.inner.db, &id, Some(&fresh)).await {
                    Ok(_) => Current::None,
                    Err(error) => {
                        tracing::warn!(%error, run = %id, "closing a dead run failed");
                        Current::None
                    }
                }
            }
            None => Current::None,
        })
    }

    /// Stops the conversation's run: here by its token, elsewhere by a flag in its row
    /// (and a notification on PostgreSQL). Whether a run was going.
    pub async fn stop(&self, conversation_id: &str) -> Result<bool, sqlx::Error> {
        if let Some(run) = self.active().get(conversation_id).cloned() {
            run.token.cancel();
            return Ok(true);
        }
        let stopped: Vec<(String,)> = sqlx::query_as(
            "UPDATE runs SET stop_requested = 1 WHERE conversation_id = $1 \
             AND status = 'running' AND updated_at > $2 RETURNING run_id",
        )
        .bind(conversation_id)
        .bind(self.inner.fresh_since())
        .fetch_all(&self.inner.db)
        .await?;
        if self.is_postgres() {
            for (id,) in &stopped {
                sqlx::query("SELECT COUNT(*) FROM (SELECT pg_notify($1, $2)) AS sent")
                    .bind(STOP_CHANNEL)
                    .bind(id)
                    .execute(&self.inner.db)
                    .await?;
            }
        }
        Ok(!stopped.is_empty())
    }

    fn cancel_by_id(&self, run_id: &str) {
        for run in self.active().values() {
            if run.id == run_id {
                run.token.cancel();
            }
        }
    }

    /// Starts (once) the task that stores this process's runs.
    fn ensure_storer(&self) {
        self.inner.storer.get_or_init(|| {
            let wake = Arc::clone(&self.inner.wake_storer);
            tokio::spawn(store_all(Arc::downgrade(&self.inner), wake));
        });
    }

    /// On PostgreSQL, starts (once) the task that listens for stored events and stop
    /// requests.
    fn ensure_listener(&self) {
        if !self.is_postgres() {
            return;
        }
        self.inner.listener.get_or_init(|| {
            let url = self.inner.db.connect_options().database_url.to_string();
            tokio::spawn(listen(Arc::downgrade(&self.inner), url));
        });
    }

    /// Deletes the rows of runs over for a while (at most once per [`PURGE_EVERY`]), in
    /// the background.
    fn purge_now_and_then(&self) {
        {
            let mut last = lock(&self.inner.last_purge);
            if last.is_some_and(|at| at.elapsed() < PURGE_EVERY) {
                return;
            }
            *last = Some(Instant::now());
        }
        let db = self.inner.db.clone();
        tokio::spawn(async move {
            let keep = chrono::TimeDelta::from_std(KEEP_FINISHED).unwrap_or(chrono::TimeDelta::MAX);
            let before = timestamp(now() - keep);
            // A live run beats every few seconds, so only finished or dead runs are this old.
            let result = async {
                // Only runs that are over: a dead one still "running" is closed first (its
                // reply finished as interrupted) by the sweeper.
                sqlx::query(PURGE_EVENTS_SQL)
                    .bind(&before)
                    .execute(&db)
                    .await?;
                sqlx::query(PURGE_RUNS_SQL).bind(&before).execute(&db).await
            }
            .await;
            if let Err(error) = result {
                tracing::warn!(%error, "deleting old runs failed");
            }
        });
    }
}

#[cfg(test)]
mod tests;

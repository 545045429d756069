//! The replies being written ("runs"): at most one per conversation, each with the log of
//! every event it emitted, so a reply can be followed again after the browser lost it.
//!
//! A run's events are numbered 1, 2, … in the order the agent emitted them. On the process
//! running it, a subscriber reads the in-memory log from where it is and waits for the
//! log to grow (a `watch` of its length), so nothing is lost or repeated. The
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
use tokio::sync::{broadcast, oneshot, watch, Notify};
use tokio_util::sync::CancellationToken;

use crate::{
    agent::EventSender,
    db::{self, Backend, Pool},
    store::{LastSave, Turn},
};

mod lease;
mod storer;

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
    reads: Pool,
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
    /// The log's length, for subscribers waiting for it to grow.
    grown: watch::Sender<usize>,
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
            grown: watch::Sender::new(0),
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
        let len = {
            let mut log = lock(&self.log);
            log.events.push(data);
            log.events.len()
        };
        // Nobody listening is fine: the run goes on for the log and the database.
        self.grown.send_replace(len);
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
        self.grown.send_modify(|_| {});
    }

    /// The run's events after number `after` (0: all, from its `start`), then its new ones
    /// as they come, until the run is over.
    pub fn subscribe(self: &Arc<Self>, after: u64) -> EventStream {
        let run = Arc::clone(self);
        Box::pin(async_stream::stream! {
            let mut grown = run.grown.subscribe();
            let mut next = usize::try_from(after).unwrap_or(usize::MAX);
            loop {
                // Marked seen before the log is read: an event pushed after the read
                // changes the value again, so the wait below cannot miss it.
                grown.borrow_and_update();
                let (new, closed) = {
                    let log = lock(&run.log);
                    let start = next.min(log.events.len());
                    (log.events[start..].to_vec(), log.closed)
                };
                next += new.len();
                for data in new {
                    yield data;
                }
                // The run holds the sender, and this stream holds the run.
                if closed || grown.changed().await.is_err() {
                    break;
                }
            }
        })
    }
}

/// A run's place in the registry, taken before anything is stored for it. Dropping it
/// without [`Reservation::start`] gives the place back.
pub struct Reservation {
    runs: Runs,
    run: Arc<ActiveRun>,
    started: bool,
}

impl Reservation {
    /// Stores `turn` with the run's row, through the registry's one writer: in the same
    /// transaction as whatever else it writes at that moment (other turns, other runs'
    /// events), so concurrent replies share one commit. From the commit on, other
    /// processes see the run. An error means nothing of the turn is known to be stored.
    pub async fn store_turn(&self, turn: Turn) -> Result<(), sqlx::Error> {
        let (done, stored) = oneshot::channel();
        *lock(&self.run.turn) = Some((turn, done));
        self.runs.inner.wake_storer.notify_one();
        match tokio::time::timeout(TURN_STORE_WAIT, stored).await {
            Ok(Ok(result)) => result,
            // The storer went away with the turn (its task ended abnormally).
            Ok(Err(_)) => Err(sqlx::Error::WorkerCrashed),
            Err(_) => {
                // Taken back so it is not stored after the request gave up; the storer
                // may hold it already, and then commits a turn whose reply never starts
                // (as any commit the client stopped waiting for).
                lock(&self.run.turn).take();
                Err(sqlx::Error::PoolTimedOut)
            }
        }
    }

    /// The run this place is for.
    pub fn run(&self) -> &Arc<ActiveRun> {
        &self.run
    }

    /// Starts the run: `work` gets the sender for its events and the stop token, and runs
    /// on a task of its own (a closed browser does not stop it). Its events go to the log,
    /// the live subscribers and the database; the place is given back once `work` is done
    /// and every event is stored.
    pub fn start<F, Fut>(mut self, work: F) -> Arc<ActiveRun>
    where
        F: FnOnce(EventSender, CancellationToken, LastSave) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.started = true;
        let run = Arc::clone(&self.run);
        let log = Arc::clone(&run);
        let tx = EventSender::calling(move |event| log.push(event));
        let work = work(tx, run.token.clone(), run.last_save.clone());
        // One span per run: every line its loop, model turns and tool calls log carries
        // the run and the conversation, so one reply can be followed through the log.
        let span = tracing::info_span!(
            parent: None,
            "run",
            run = %run.id,
            conversation = %run.conversation_id,
            assistant = tracing::field::Empty,
            provider = tracing::field::Empty,
        );
        tokio::spawn(tracing::Instrument::instrument(
            drive(self.runs.clone(), Arc::clone(&run), work),
            span,
        ));
        run
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.started {
            return;
        }
        self.runs.release(&self.run);
        // Its row says "running": remove it, so no other process waits for it.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let db = self.runs.inner.db.clone();
            let id = self.run.id.clone();
            handle.spawn(async move {
                if let Err(error) = sqlx::query("DELETE FROM runs WHERE run_id = $1")
                    .bind(&id)
                    .execute(&db)
                    .await
                {
                    tracing::warn!(%error, run = %id, "removing an unused run failed");
                }
            });
        }
    }
}

/// Runs the agent (whose events go straight to the log), then waits until the rest is
/// stored and gives the place back, even if the agent panicked.
async fn drive(runs: Runs, run: Arc<ActiveRun>, work: impl Future<Output = ()>) {
    use futures::FutureExt;
    // The run's state is its log, which stays consistent event by event: what a panic
    // leaves is stored and ended like any other end.
    if std::panic::AssertUnwindSafe(work)
        .catch_unwind()
        .await
        .is_err()
    {
        tracing::error!(run = %run.id, "a run ended abnormally (panic)");
    }
    run.ending.store(true, Ordering::Release);
    runs.inner.wake_storer.notify_one();
    // Followers on other processes need the last events and the "done"; a database that
    // stays unusable must not keep the conversation busy, though (its row goes stale).
    if tokio::time::timeout(FINAL_STORE_WAIT, run.stored_done.notified())
        .await
        .is_err()
    {
        tracing::warn!(run = %run.id, "the end of a run could not be stored in time");
        if runs.inner.frozen.load(Ordering::Acquire) {
            // Shut down: it was closed as interrupted, which this must not overwrite.
            runs.release(&run);
            return;
        }
        // The reply at least, on its own, so the conversation does not show it unfinished.
        let save = run.last_save.take();
        if let Some(save) = save {
            let stored = match runs.inner.db.acquire().await {
                Ok(mut conn) => save.store(&mut conn).await,
                Err(error) => Err(error),
            };
            if let Err(error) = stored {
                tracing::error!(%error, run = %run.id, "saving a run's last message failed");
            }
        }
    }
    // The place first, then the streams: a client that saw the end may send at once.
    runs.release(&run);
}

/// The stored events of a run after number `after`, numbered, from at most [`PAGE`]
/// batches; `true` with them when there may be more batches to read.
async fn stored_events(
    db: &Pool,
    run_id: &str,
    after: u64,
) -> Result<(Vec<(i64, String)>, bool), sqlx::Error> {
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let batches: Vec<(i64, String)> = sqlx::query_as(
        "SELECT first_seq, events FROM run_event_batches WHERE run_id = $1 AND last_seq > $2 \
         ORDER BY first_seq LIMIT $3",
    )
    .bind(run_id)
    .bind(after)
    .bind(PAGE as i64)
    .fetch_all(db)
    .await?;
    let more = batches.len() == PAGE;
    let events = batches
        .iter()
        .flat_map(|(first, events)| {
            events
                .split('\n')
                .zip(*first..)
                .map(|(data, seq)| (seq, data.to_owned()))
        })
        .filter(|(seq, _)| *seq > after)
        .collect();
    Ok((events, more))
}

/// What a follower learns from a run's row.
enum RowState {
    /// Still going, with a recent heartbeat.
    Running,
    /// Over: every event is stored.
    Done,
    /// Gone, or its process stopped beating.
    Lost,
}

async fn row_state(db: &Pool, run_id: &str, fresh: &str) -> Result<RowState, sqlx::Error> {
    let row: Option<(String, String)> =
        sqlx::query_as("SELECT status, updated_at FROM runs WHERE run_id = $1")
            .bind(run_id)
            .fetch_optional(db)
            .await?;
    Ok(match row {
        Some((status, _)) if status == "done" => RowState::Done,
        Some((_, beat)) if beat.as_str() > fresh => RowState::Running,
        _ => RowState::Lost,
    })
}

impl Runs {
    /// An empty registry over `db`, allowing [`DEFAULT_MAX_RUNS_PER_OWNER`] runs per owner.
    pub fn new(db: Pool) -> Self {
        Self::with_reader(db.clone(), db)
    }

    /// Like [`Runs::new`], reading other processes' runs through `reads`.
    pub fn with_reader(db: Pool, reads: Pool) -> Self {
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

    /// How many runs `owner_id` has going on other processes (0 when the database cannot
    /// say: this process's own count still holds). Counted for every owner at once and
    /// kept for [`ELSEWHERE_FRESH`]: a run started on another process within that time may
    /// be missed, which a limit on replies at once (not on money) can afford.
    async fn running_elsewhere(&self, owner_id: &str) -> usize {
        {
            let cached = lock(&self.inner.elsewhere);
            if let Some((at, counts)) = cached.as_ref() {
                if at.elapsed() < ELSEWHERE_FRESH {
                    return counts.get(owner_id).copied().unwrap_or(0);
                }
            }
        }
        let counted: Result<Vec<(String, i64)>, _> = sqlx::query_as(
            "SELECT owner_id, COUNT(*) FROM runs WHERE status = 'running' \
             AND node <> $1 AND updated_at > $2 GROUP BY owner_id",
        )
        .bind(&self.inner.node)
        .bind(self.inner.fresh_since())
        .fetch_all(&self.inner.reads)
        .await;
        match counted {
            Ok(rows) => {
                let counts: HashMap<String, usize> = rows
                    .into_iter()
                    .map(|(owner, n)| (owner, usize::try_from(n).unwrap_or(0)))
                    .collect();
                let n = counts.get(owner_id).copied().unwrap_or(0);
                *lock(&self.inner.elsewhere) = Some((Instant::now(), counts));
                n
            }
            Err(error) => {
                tracing::warn!(%error, "counting runs on other processes failed");
                0
            }
        }
    }

    /// Whether `owner_id` may start another run now (a cheap early answer before creating
    /// anything; [`Runs::reserve`] decides).
    pub async fn has_room(&self, owner_id: &str) -> Result<(), ReserveError> {
        let max = self.max_per_owner();
        let here = self
            .active()
            .values()
            .filter(|run| run.owner_id == owner_id)
            .count();
        if here >= max || here + self.running_elsewhere(owner_id).await >= max {
            return Err(ReserveError::TooMany { max });
        }
        Ok(())
    }

    /// Takes the conversation's place for a new run of `owner_id`. With `wait`, waits up to
    /// that long for a run of the conversation still going here to end; without, a
    /// conversation with a run is [`ReserveError::Busy`]. The run's row is stored before
    /// this returns, so other processes see it from then on.
    pub async fn reserve(
        &self,
        owner_id: &str,
        conversation_id: &str,
        wait: Option<Duration>,
    ) -> Result<Reservation, ReserveError> {
        self.reserve_place(owner_id, conversation_id, wait, true)
            .await
    }

    /// Like [`Runs::reserve`] without waiting, leaving the run's row to be stored with
    /// its turn ([`Reservation::store_turn`]: one commit for the conversation, its
    /// messages and its run).
    pub async fn reserve_unstored(
        &self,
        owner_id: &str,
        conversation_id: &str,
    ) -> Result<Reservation, ReserveError> {
        self.reserve_place(owner_id, conversation_id, None, false)
            .await
    }

    async fn reserve_place(
        &self,
        owner_id: &str,
        conversation_id: &str,
        wait: Option<Duration>,
        store_row: bool,
    ) -> Result<Reservation, ReserveError> {
        if self.inner.closing.load(Ordering::Acquire) {
            return Err(ReserveError::ShuttingDown);
        }
        self.purge_now_and_then();
        self.watch_for_dead();
        let elsewhere = self.running_elsewhere(owner_id).await;
        let deadline = wait.map(|wait| tokio::time::Instant::now() + wait);
        let run = loop {
            // Registered before looking, so an end between the look and the wait wakes it.
            let freed = self.inner.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            let running = {
                let mut active = self.active();
                match active.get(conversation_id) {
                    Some(run) => run.id.clone(),
                    None => {
                        let max = self.max_per_owner();
                        let here = active
                            .values()
                            .filter(|run| run.owner_id == owner_id)
                            .count();
                        if here + elsewhere >= max {
                            return Err(ReserveError::TooMany { max });
                        }
                        let run = Arc::new(ActiveRun::new(conversation_id, owner_id));
                        active.insert(conversation_id.to_owned(), Arc::clone(&run));
                        break run;
                    }
                }
            };
            let Some(deadline) = deadline else {
                return Err(ReserveError::Busy {
                    running: Some(running),
                });
            };
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return Err(ReserveError::Busy {
                    running: Some(running),
                });
            }
        };
        self.ensure_listener();
        self.ensure_storer();
        let reservation = Reservation {
            runs: self.clone(),
            run,
            started: false,
        };
        if !store_row {
            // A new conversation: nobody else can hold it, and its lease is stored with
            // its first turn.
            return Ok(reservation);
        }
        self.take_lease(&reservation.run, deadline).await?;
        reservation.run.row_ready.store(true, Ordering::Release);
        Ok(reservation)
    }

    /// Takes the conversation's lease in the database for `run` (here it is already
    /// `run`'s): waits for another process's run until `deadline`, closes a dead one.
    /// A database that cannot answer does not stop the run here: it is the only one of
    /// this process, and the turn's commit checks the lease again.
    async fn take_lease(
        &self,
        run: &Arc<ActiveRun>,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<(), ReserveError> {
        loop {
            let holder = match lease::take(&self.inner.db, &self.inner.node, run).await {
                Ok(None) => return Ok(()),
                Ok(Some(holder)) => holder,
                Err(error) => {
                    tracing::warn!(%error, run = %run.id, "taking a conversation's lease failed");
                    return Ok(());
                }
            };
            let fresh = self.inner.fresh_since();
            if !holder.run_id.is_empty() && holder.beat.as_str() <= fresh.as_str() {
                // Its process died: closed here, then the lease is free.
                if let Err(error) =
                    close_interrupted(&self.inner.db, &holder.run_id, Some(&fresh)).await
                {
                    tracing::warn!(%error, run = %holder.run_id, "closing a dead run failed");
                    return Err(self.busy(run, holder.run_id));
                }
                continue;
            }
            if holder.run_id.is_empty() {
                continue;
            }
            let waited = match deadline {
                Some(deadline) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep_until(
                        deadline.min(tokio::time::Instant::now() + POLL_EVERY),
                    )
                    .await;
                    true
                }
                _ => false,
            };
            if !waited {
                return Err(self.busy(run, holder.run_id));
            }
        }
    }

    /// The place taken for `run` given back, and the answer for a conversation that
    /// `running` (on another process) writes.
    fn busy(&self, _run: &Arc<ActiveRun>, running: String) -> ReserveError {
        // The reservation being dropped gives the place back.
        ReserveError::Busy {
            running: Some(running),
        }
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

    /// A run's events after number `after`, from the database, then its new ones as they
    /// are stored, until it is over (or its process stops beating).
    pub fn follow(&self, run_id: String, after: u64) -> EventStream {
        self.ensure_listener();
        let runs = self.clone();
        Box::pin(async_stream::stream! {
            let db = runs.inner.reads.clone();
            let postgres = runs.is_postgres();
            // Subscribed before the first read, so no notification falls in between.
            let mut stored = runs.inner.stored.subscribe();
            let mut last = after;
            let mut ending = false;
            loop {
                let (page, full) = match stored_events(&db, &run_id, last).await {
                    Ok(page) => page,
                    Err(error) => {
                        tracing::warn!(%error, run = %run_id, "reading a run's events failed");
                        break;
                    }
                };
                for (seq, data) in page {
                    // Batches commit in order, so stored numbers have no gaps.
                    if u64::try_from(seq).ok() != Some(last + 1) {
                        break;
                    }
                    last += 1;
                    yield Arc::<str>::from(data);
                }
                if full {
                    continue;
                }
                if ending {
                    break;
                }
                match row_state(&db, &run_id, &runs.inner.fresh_since()).await {
                    Ok(RowState::Running) => {}
                    // Its last events were stored with "done": one more read gets them.
                    Ok(RowState::Done) => {
                        ending = true;
                        continue;
                    }
                    Ok(RowState::Lost) => break,
                    Err(error) => {
                        tracing::warn!(%error, run = %run_id, "reading a run failed");
                        break;
                    }
                }
                if postgres {
                    wait_for_stored(&mut stored, &run_id, NOTIFIED_POLL_EVERY).await;
                } else {
                    tokio::time::sleep(POLL_EVERY).await;
                }
            }
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
                sqlx::query(
                    "DELETE FROM run_event_batches WHERE run_id IN \
                     (SELECT run_id FROM runs WHERE updated_at < $1 AND status = 'done')",
                )
                .bind(&before)
                .execute(&db)
                .await?;
                sqlx::query("DELETE FROM runs WHERE updated_at < $1 AND status = 'done'")
                    .bind(&before)
                    .execute(&db)
                    .await
            }
            .await;
            if let Err(error) = result {
                tracing::warn!(%error, "deleting old runs failed");
            }
        });
    }
}

impl Runs {
    /// Starts (once) the task that closes runs whose process died, wherever they ran:
    /// every third of the stale limit it looks for `running` rows whose heartbeat is
    /// older than the limit and closes them as interrupted.
    pub fn watch_for_dead(&self) {
        self.inner.sweeper.get_or_init(|| {
            tokio::spawn(sweep(Arc::downgrade(&self.inner)));
        });
    }

    /// Closes every dead run found now; how many this process closed.
    pub async fn close_dead(&self) -> Result<usize, CloseError> {
        let fresh = self.inner.fresh_since();
        let dead: Vec<(String,)> = sqlx::query_as(
            "SELECT run_id FROM runs WHERE status = 'running' AND updated_at <= $1 \
             ORDER BY updated_at LIMIT 100",
        )
        .bind(&fresh)
        .fetch_all(&self.inner.reads)
        .await?;
        let mut closed = 0;
        for (id,) in dead {
            if close_interrupted(&self.inner.db, &id, Some(&fresh)).await? {
                closed += 1;
            }
        }
        Ok(closed)
    }

    /// Shuts the registry down: no new run starts from now on; the runs going may finish
    /// within `grace`; what is left then is stopped and ends as interrupted (a run that
    /// cannot even store that is closed as another process would close it). How many runs
    /// were stopped so.
    pub async fn shut_down(&self, grace: Duration) -> usize {
        self.inner.closing.store(true, Ordering::Release);
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            let freed = self.inner.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if self.active().is_empty() {
                return 0;
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                break;
            }
        }
        // Stopped as interrupted (not as by the person), and stored as they end.
        let left: Vec<Arc<ActiveRun>> = self.active().values().cloned().collect();
        for run in &left {
            run.last_save.interrupt();
            run.token.cancel();
        }
        let stopped = tokio::time::Instant::now() + STOP_AT_SHUTDOWN;
        loop {
            let freed = self.inner.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if self.active().is_empty() {
                return left.len();
            }
            if tokio::time::timeout_at(stopped, freed).await.is_err() {
                break;
            }
        }
        // Stuck (a database that does not answer, say): closed as another process would
        // close them, and this process writes nothing more for them.
        self.inner.frozen.store(true, Ordering::Release);
        let stuck: Vec<Arc<ActiveRun>> = self.active().values().cloned().collect();
        for run in stuck {
            match close_interrupted(&self.inner.db, &run.id, None).await {
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!(%error, run = %run.id, "closing a run at shutdown failed");
                }
            }
            run.close();
        }
        left.len()
    }
}

/// The sweeper's loop, for as long as the registry lives.
async fn sweep(inner: Weak<Inner>) {
    loop {
        let every = match inner.upgrade() {
            Some(inner) => (inner.stale_after() / 3).min(Duration::from_secs(5)),
            None => return,
        };
        tokio::time::sleep(every).await;
        let Some(strong) = inner.upgrade() else {
            return;
        };
        let runs = Runs { inner: strong };
        if runs.inner.frozen.load(Ordering::Acquire) {
            return;
        }
        if let Err(error) = runs.close_dead().await {
            tracing::warn!(%error, "looking for dead runs failed");
        }
    }
}

/// Waits until `run_id`'s new events are stored (or `max` passes).
async fn wait_for_stored(stored: &mut broadcast::Receiver<Arc<str>>, run_id: &str, max: Duration) {
    let _ = tokio::time::timeout(max, async {
        loop {
            match stored.recv().await {
                Ok(id) if &*id == run_id => return,
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(_)) => return,
                // Cannot happen while the registry lives; the timeout ends the wait.
                Err(broadcast::error::RecvError::Closed) => std::future::pending::<()>().await,
            }
        }
    })
    .await;
}

/// Listens on PostgreSQL for [`EVENTS_CHANNEL`] and [`STOP_CHANNEL`] for as long as the
/// registry lives, reconnecting after failures.
async fn listen(inner: Weak<Inner>, url: String) {
    use sqlx::postgres::PgListener;
    loop {
        if inner.strong_count() == 0 {
            return;
        }
        let mut listener = match PgListener::connect(&url).await {
            Ok(listener) => listener,
            Err(error) => {
                tracing::warn!(%error, "cannot listen for run notifications; polling meanwhile");
                tokio::time::sleep(Duration::from_secs(5)).await;
                continue;
            }
        };
        if let Err(error) = listener.listen_all([EVENTS_CHANNEL, STOP_CHANNEL]).await {
            tracing::warn!(%error, "cannot listen for run notifications; polling meanwhile");
            tokio::time::sleep(Duration::from_secs(5)).await;
            continue;
        }
        loop {
            let received = listener.recv().await;
            let Some(strong) = inner.upgrade() else {
                return;
            };
            match received {
                Ok(note) => {
                    let runs = Runs { inner: strong };
                    match note.channel() {
                        EVENTS_CHANNEL => {
                            let _ = runs.inner.stored.send(Arc::from(note.payload()));
                        }
                        STOP_CHANNEL => runs.cancel_by_id(note.payload()),
                        _ => {}
                    }
                }
                Err(error) => {
                    // The next recv reconnects; readers poll meanwhile.
                    tracing::warn!(%error, "run notifications interrupted");
                    drop(strong);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    fn delta(n: usize) -> AgentEvent {
        AgentEvent::TextDelta {
            id: "t".into(),
            delta: n.to_string(),
        }
    }

    /// Turns stored at the same moment share the writer's commit, and one that cannot be
    /// stored (its conversation id is taken) fails alone: the others are stored, whole.
    #[tokio::test]
    async fn turns_stored_together_fail_alone() {
        use shared::message::Message;
        let (pool, _db) = db::test_pool().await;
        let taken = crate::store::create_conversation(&pool, "own_x", "restaurant", now())
            .await
            .unwrap();
        let runs = Runs::new(pool.clone());
        let conversation = |id: &str, owner: &str| crate::store::Conversation {
            id: id.to_owned(),
            owner_id: owner.to_owned(),
            assistant: "restaurant".to_owned(),
        };
        let cases = [
            conversation("conv_new_1", "own_a"),
            conversation(&taken.id, "own_b"),
            conversation("conv_new_2", "own_c"),
        ];
        let mut reservations = Vec::new();
        for case in &cases {
            let reservation = runs
                .reserve_unstored(&case.owner_id, &case.id)
                .await
                .unwrap();
            reservations.push(reservation);
        }
        // All three asked before the storer runs (one thread): one tick takes them all.
        let results = futures::future::join_all(reservations.iter().zip(&cases).map(
            |(reservation, case)| {
                let user = Message::user(crate::store::new_row_id("msg"), "hi");
                let reply = Message::assistant(crate::store::new_row_id("msg"));
                reservation.store_turn(crate::store::Turn::new(case, true, &user, &reply, now()))
            },
        ))
        .await;
        assert!(results[0].is_ok(), "{:?}", results[0]);
        assert!(results[1].is_err(), "a taken conversation id must fail");
        assert!(results[2].is_ok(), "{:?}", results[2]);
        for (case, stored) in [(&cases[0], true), (&cases[2], true)] {
            let messages = crate::store::messages(&pool, &case.id).await.unwrap();
            assert_eq!(messages.len() == 2, stored, "{}", case.id);
        }
        // The taken conversation keeps its owner and gained nothing.
        let owner: (String,) = sqlx::query_as("SELECT owner_id FROM conversations WHERE id = $1")
            .bind(&taken.id)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(owner.0, "own_x");
        assert!(crate::store::messages(&pool, &taken.id)
            .await
            .unwrap()
            .is_empty());
        // Each stored turn's run row is there, "running"; the failed one has none.
        let rows: Vec<(String,)> = sqlx::query_as("SELECT conversation_id FROM runs ORDER BY 1")
            .fetch_all(&pool)
            .await
            .unwrap();
        let rows: Vec<String> = rows.into_iter().map(|(id,)| id).collect();
        assert_eq!(rows, vec!["conv_new_1".to_owned(), "conv_new_2".to_owned()]);
    }

    /// More batches than one read returns, on the backend under test: every event is
    /// stored once, numbered in order, and reads back as it was, from any point.
    #[tokio::test]
    async fn large_batches_are_stored_whole_and_in_order() {
        let (pool, _db) = db::test_pool().await;
        let conversation = crate::store::create_conversation(&pool, "own_a", "restaurant", now())
            .await
            .unwrap();
        let run = Arc::new(ActiveRun::new(&conversation.id, "own_a"));
        let total = PAGE * 3 + 50;
        for n in 0..total {
            run.push(&delta(n));
        }
        let (_, events) = run.unstored();
        let postgres = db::backend(&pool) == Backend::Postgres;
        // Many batches of one event (more than one read returns), then bigger ones, as
        // ticks of a storer would make them.
        let mut from = 0;
        while from < total {
            let size = if from < PAGE + 50 { 1 } else { 7 };
            let to = (from + size).min(total);
            let batch = Batch {
                run: Arc::clone(&run),
                from,
                events: events[from..to].to_vec(),
                done: to == total,
                save: None,
                turn: None,
                turn_waiter: None,
            };
            write_batches(&pool, "node_t", &[batch], postgres)
                .await
                .unwrap();
            from = to;
        }
        for start in [0, 1, 17, total - 1] {
            let mut stored = Vec::new();
            loop {
                let after = (start + stored.len()) as u64;
                let (page, more) = stored_events(&pool, run.id(), after).await.unwrap();
                for (seq, data) in page {
                    assert_eq!(seq, (start + stored.len()) as i64 + 1);
                    stored.push(Arc::<str>::from(data));
                }
                if !more {
                    break;
                }
            }
            assert_eq!(numbers(&stored), (start..total).collect::<Vec<_>>());
        }
        assert!(matches!(
            row_state(&pool, run.id(), &fresh_since(STALE_AFTER))
                .await
                .unwrap(),
            RowState::Done
        ));
    }

    fn numbers(events: &[Arc<str>]) -> Vec<usize> {
        events
            .iter()
            .map(|data| {
                let event: AgentEvent = serde_json::from_str(data).unwrap();
                match event {
                    AgentEvent::TextDelta { delta, .. } => delta.parse().unwrap(),
                    other => panic!("unexpected {other:?}"),
                }
            })
            .collect()
    }

    #[tokio::test]
    async fn subscribers_get_every_event_once_in_order_even_when_they_fall_behind() {
        let run = Arc::new(ActiveRun::new("conv", "owner"));
        for n in 0..10 {
            run.push(&delta(n));
        }
        let all = run.subscribe(0);
        let late = run.subscribe(4);
        let ahead = run.subscribe(12);
        // Many events while nobody reads: each subscriber takes them from the log.
        let total = 250;
        for n in 10..total {
            run.push(&delta(n));
        }
        run.close();
        let all: Vec<Arc<str>> = all.collect().await;
        assert_eq!(numbers(&all), (0..total).collect::<Vec<_>>());
        let late: Vec<Arc<str>> = late.collect().await;
        assert_eq!(numbers(&late), (4..total).collect::<Vec<_>>());
        let ahead: Vec<Arc<str>> = ahead.collect().await;
        assert_eq!(numbers(&ahead), (12..total).collect::<Vec<_>>());
        // After the end: the log only, then the stream ends.
        let after_end: Vec<Arc<str>> = run.subscribe(total as u64 - 2).collect().await;
        assert_eq!(numbers(&after_end), vec![total - 2, total - 1]);
    }

    #[tokio::test]
    async fn live_events_follow_the_snapshot_without_a_gap() {
        let run = Arc::new(ActiveRun::new("conv", "owner"));
        run.push(&delta(0));
        let mut stream = run.subscribe(0);
        assert_eq!(numbers(&[stream.next().await.unwrap()]), vec![0]);
        let writer = {
            let run = Arc::clone(&run);
            tokio::spawn(async move {
                for n in 1..200 {
                    run.push(&delta(n));
                    tokio::task::yield_now().await;
                }
                run.close();
            })
        };
        let rest: Vec<Arc<str>> = stream.collect().await;
        writer.await.unwrap();
        assert_eq!(numbers(&rest), (1..200).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn one_run_per_conversation_and_a_bounded_number_per_owner() {
        let (pool, _db) = crate::db::test_pool().await;
        let at = timestamp(now());
        for id in ["c1", "c2", "c3"] {
            sqlx::query(
                "INSERT INTO conversations (id, owner_id, assistant, created_at, updated_at) \
                 VALUES ($1, 'o', 'restaurant', $2, $2)",
            )
            .bind(id)
            .bind(&at)
            .execute(&pool)
            .await
            .unwrap();
        }
        let runs = Runs::new(pool);
        runs.set_max_per_owner(2);
        let first = runs.reserve("o", "c1", None).await.unwrap();
        assert_eq!(
            runs.reserve("o", "c1", None).await.err(),
            Some(ReserveError::Busy {
                running: Some(first.run().id().to_owned())
            })
        );
        let second = runs.reserve("o", "c2", None).await.unwrap();
        assert_eq!(
            runs.reserve("o", "c3", None).await.err(),
            Some(ReserveError::TooMany { max: 2 })
        );
        assert!(runs.has_room("o").await.is_err());
        assert!(runs.has_room("someone else").await.is_ok());
        // A waiting reservation gets the place once it is given back.
        let waiting = {
            let runs = runs.clone();
            tokio::spawn(async move {
                runs.reserve("o", "c1", Some(Duration::from_secs(5)))
                    .await
                    .map(|r| r.run().id().to_owned())
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let first_id = first.run().id().to_owned();
        drop(first);
        let next = waiting.await.unwrap().unwrap();
        assert_ne!(next, first_id);
        drop(second);
        assert!(runs.has_room("o").await.is_ok());
    }
}

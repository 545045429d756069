//! The process's one writer of runs (the storer): what it stores for each run, its loop,
//! and the statements of a tick, on SQLite as one fixed script and on PostgreSQL one by
//! one.

use super::*;

/// What the storer writes for one run.
pub(super) struct Batch {
    pub(super) run: Arc<ActiveRun>,
    /// Events already stored before this batch.
    pub(super) from: usize,
    pub(super) events: Vec<Arc<str>>,
    /// The run is over: this is its last batch, stored with status "done".
    pub(super) done: bool,
    /// The run's message as the agent last left it (as it ended, with the last batch).
    pub(super) save: Option<crate::store::MessageSave>,
    /// The run's turn, stored first (the run's first batch), and who waits for it.
    pub(super) turn: Option<Turn>,
    pub(super) turn_waiter: Option<TurnWaiter>,
    /// A call waiting for approval and the message showing its form: this batch's commit
    /// is then synced to disk (`synchronous = FULL` on SQLite) before its waiter is told.
    pub(super) pending: Option<(crate::store::DurablePending, crate::store::PendingWaiter)>,
}

impl Batch {
    /// The message to store: the newer of the run's last save and the one showing a
    /// pending call's form (both are the same message; run_seq counts its events).
    fn message(&self) -> Option<&crate::store::MessageSave> {
        let pending = self.pending.as_ref().map(|(request, _)| &request.save);
        match (&self.save, pending) {
            (Some(save), Some(shown)) if save.run_seq > shown.run_seq => Some(save),
            (_, Some(shown)) => Some(shown),
            (save, None) => save.as_ref(),
        }
    }

    /// What is left for the run once this batch is committed.
    fn stored(mut self) {
        let run = &self.run;
        run.mark_stored(self.from + self.events.len());
        *lock(&run.last_write) = Instant::now();
        if let Some(save) = self.message() {
            run.last_save.take_if_seq(save.run_seq);
        }
        if let Some((_, waiter)) = self.pending.take() {
            // The run may have given up; the call is stored all the same, and expires
            // like any undecided call.
            let _ = waiter.send(Ok(()));
        }
        if let Some(waiter) = self.turn_waiter.take() {
            run.row_ready.store(true, Ordering::Release);
            // The request may have given up; the turn is stored all the same.
            let _ = waiter.send(Ok(()));
        }
        if self.done {
            run.stored_done.notify_one();
        }
    }

    /// The batch could not be committed on its own: a turn's request learns why (and
    /// its run never starts); anything else stays unstored for the next tick.
    fn failed(mut self, error: sqlx::Error) {
        if let Some((_, waiter)) = self.pending.take() {
            // Not tried again: the run reports the call as failed, and nothing of it is
            // stored (its message save went with it).
            let described = sqlx::Error::Protocol(error.to_string());
            let _ = waiter.send(Err(described));
        }
        match self.turn_waiter.take() {
            Some(waiter) => {
                let _ = waiter.send(Err(error));
            }
            None => tracing::warn!(%error, run = %self.run.id, "storing a run's events failed"),
        }
    }
}

/// The process's one writer of runs: every [`FLUSH_EVERY`] (and at once when a run ends)
/// it stores the new events of all its runs with their heartbeats in one transaction, and
/// reads stop requests from other processes. One writer, so a busy process adds one short
/// write transaction per tick, however many replies it is writing.
pub(super) async fn store_all(inner: Weak<Inner>, wake: Arc<Notify>) {
    let mut tick = tokio::time::interval(FLUSH_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_poll = Instant::now();
    loop {
        // Not holding the registry while waiting, so it can go (and this task with it).
        tokio::select! {
            _ = tick.tick() => {}
            () = wake.notified() => {}
        }
        // With other replies going, let them run up to their next write first, so this
        // commit carries theirs too (group commit); a lone reply is stored at once.
        let busy = inner
            .upgrade()
            .is_some_and(|inner| lock(&inner.active).len() > 1);
        if busy {
            for _ in 0..GATHER_YIELDS {
                tokio::task::yield_now().await;
            }
        }
        let Some(strong) = inner.upgrade() else {
            return;
        };
        let runs = Runs { inner: strong };
        if runs.inner.frozen.load(Ordering::Acquire) {
            // Shut down: the runs left were closed as interrupted.
            return;
        }
        let heartbeat_every = runs.inner.heartbeat_every();
        let active: Vec<Arc<ActiveRun>> = runs.active().values().cloned().collect();
        let batches: Vec<Batch> = active
            .iter()
            .filter_map(|run| {
                let (turn, turn_waiter) = lock(&run.turn).take().unzip();
                if turn.is_none() && !run.row_ready.load(Ordering::Acquire) {
                    return None;
                }
                let done = run.ending.load(Ordering::Acquire);
                let (from, events) = run.unstored();
                let beat_due = lock(&run.last_write).elapsed() >= heartbeat_every;
                let pending = run.last_save.take_pending();
                (turn.is_some() || done || beat_due || !events.is_empty() || pending.is_some())
                    .then(|| Batch {
                        run: Arc::clone(run),
                        from,
                        events,
                        done,
                        save: run.last_save.peek(),
                        turn,
                        turn_waiter,
                        pending,
                    })
            })
            .collect();
        let db = &runs.inner.db;
        let (node, postgres) = (&runs.inner.node, runs.is_postgres());
        match write_batches(db, node, &batches, postgres).await {
            Ok(()) => batches.into_iter().for_each(Batch::stored),
            Err(error) if batches.len() == 1 => {
                if let Some(batch) = batches.into_iter().next() {
                    batch.failed(error);
                }
            }
            Err(error) => {
                // One batch's failure (a turn whose conversation went away, say) must not
                // hold back the others: each is tried again on its own.
                tracing::warn!(%error, runs = batches.len(), "storing runs together failed");
                for batch in batches {
                    match write_batches(db, node, std::slice::from_ref(&batch), postgres).await {
                        Ok(()) => batch.stored(),
                        Err(error) => batch.failed(error),
                    }
                }
            }
        }
        let poll_every = if runs.is_postgres() {
            NOTIFIED_POLL_EVERY
        } else {
            POLL_EVERY
        };
        if !active.is_empty() && last_poll.elapsed() >= poll_every {
            last_poll = Instant::now();
            match stop_requests(&runs.inner.db, &runs.inner.node).await {
                Ok(ids) => ids.iter().for_each(|id| runs.cancel_by_id(id)),
                Err(error) => tracing::warn!(%error, "reading stop requests failed"),
            }
        }
    }
}

/// In one transaction, for each batch: the run's row (created if missing) with a fresh
/// heartbeat and its status, its events numbered from `from + 1`, and on PostgreSQL a
/// notification (delivered at commit, so a woken reader finds the rows).
pub(super) async fn write_batches(
    db: &Pool,
    node: &str,
    batches: &[Batch],
    postgres: bool,
) -> Result<(), sqlx::Error> {
    if batches.is_empty() {
        return Ok(());
    }
    let at = timestamp(now());
    if !postgres && db::backend(db) == Backend::Sqlite {
        return write_batches_script(db, node, batches, at).await;
    }
    let mut tx = db::begin_write(db).await?;
    for batch in batches {
        let run = &batch.run;
        if let Some(turn) = &batch.turn {
            turn.store(&mut tx).await?;
        }
        if let Some((request, _)) = &batch.pending {
            crate::store::insert_pending_at(&mut tx, &request.call, &request.created_at).await?;
        }
        // A row already "done" stays so.
        sqlx::query(
            "INSERT INTO runs (run_id, conversation_id, owner_id, status, node, stop_requested, \
             started_at, updated_at) VALUES ($1, $2, $3, $4, $5, 0, $6, $6) \
             ON CONFLICT (run_id) DO UPDATE SET updated_at = excluded.updated_at, \
             status = CASE WHEN runs.status = 'done' THEN 'done' ELSE excluded.status END",
        )
        .bind(&run.id)
        .bind(&run.conversation_id)
        .bind(&run.owner_id)
        .bind(if batch.done { "done" } else { "running" })
        .bind(node)
        .bind(&at)
        .execute(&mut *tx)
        .await?;
        // One row per batch, not one per event: a reply is dozens of events, and each
        // row is an insert and an index update.
        if !batch.events.is_empty() {
            let first = i64::try_from(batch.from + 1).unwrap_or(i64::MAX);
            let last = i64::try_from(batch.from + batch.events.len()).unwrap_or(i64::MAX);
            sqlx::query(
                "INSERT INTO run_event_batches (run_id, first_seq, last_seq, events) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (run_id, first_seq) DO UPDATE \
                 SET last_seq = excluded.last_seq, events = excluded.events \
                 WHERE excluded.last_seq > run_event_batches.last_seq",
            )
            .bind(&run.id)
            .bind(first)
            .bind(last)
            .bind(join_lines(&batch.events))
            .execute(&mut *tx)
            .await?;
        }
        if let Some(save) = batch.message() {
            save.store(&mut tx).await?;
        }
        if postgres && (batch.done || !batch.events.is_empty()) {
            // pg_notify returns void, which the Any driver cannot read: wrapped in a count.
            sqlx::query("SELECT COUNT(*) FROM (SELECT pg_notify($1, $2)) AS sent")
                .bind(EVENTS_CHANNEL)
                .bind(&run.id)
                .execute(&mut *tx)
                .await?;
        }
    }
    tx.commit().await
}

/// The rest of a storer tick on SQLite, after the turns ([`crate::store::TURNS_SQL`]):
/// `$6` runs' rows (a row already "done" stays so), `$7` runs' messages as they last were,
/// `$8` batches of events; `$1` is this process and `$2` the time. Each parameter is a
/// JSON array of rows, so the whole tick is one fixed script, prepared once, however many
/// runs it stores; the messages' bodies and the events are slices of `$9`
/// ([`crate::store::Texts`]).
const BATCHES_SQL: &str = "INSERT INTO runs (run_id, conversation_id, owner_id, status, node, \
     stop_requested, started_at, updated_at) SELECT json_extract($6, j.p || '[0]'), \
     json_extract($6, j.p || '[1]'), json_extract($6, j.p || '[2]'), \
     json_extract($6, j.p || '[3]'), $1, 0, $2, $2 \
     FROM (SELECT '$[' || key || ']' AS p FROM json_each($6)) AS j WHERE true \
     ON CONFLICT (run_id) DO UPDATE SET updated_at = excluded.updated_at, \
     status = CASE WHEN runs.status = 'done' THEN 'done' ELSE excluded.status END; \
     UPDATE messages SET \
     body = CAST(substr($9, json_extract($7, j.p || '[2]'), \
     json_extract($7, j.p || '[3]')) AS TEXT), \
     run_seq = json_extract($7, j.p || '[4]') \
     FROM (SELECT '$[' || key || ']' AS p FROM json_each($7)) AS j \
     WHERE messages.conversation_id = json_extract($7, j.p || '[0]') \
     AND messages.id = json_extract($7, j.p || '[1]'); \
     INSERT INTO run_event_batches (run_id, first_seq, last_seq, events) \
     SELECT json_extract($8, j.p || '[0]'), json_extract($8, j.p || '[1]'), \
     json_extract($8, j.p || '[2]'), \
     CAST(substr($9, json_extract($8, j.p || '[3]'), json_extract($8, j.p || '[4]')) AS TEXT) \
     FROM (SELECT '$[' || key || ']' AS p FROM json_each($8)) AS j WHERE true \
     ON CONFLICT (run_id, first_seq) DO UPDATE \
     SET last_seq = excluded.last_seq, events = excluded.events \
     WHERE excluded.last_seq > run_event_batches.last_seq; ";

/// Calls waiting for approval, in a tick that stores one (`$10`, rows of
/// [`crate::store::PendingCall`]'s columns and the time it was proposed; the inputs are
/// slices of `$9`).
const PENDING_SQL: &str = "INSERT INTO pending_calls (tool_call_id, conversation_id, owner_id, \
     message_id, tool_name, input, created_at) SELECT json_extract($10, j.p || '[0]'), \
     json_extract($10, j.p || '[1]'), json_extract($10, j.p || '[2]'), \
     json_extract($10, j.p || '[3]'), json_extract($10, j.p || '[4]'), \
     CAST(substr($9, json_extract($10, j.p || '[5]'), json_extract($10, j.p || '[6]')) AS TEXT), \
     json_extract($10, j.p || '[7]') \
     FROM (SELECT '$[' || key || ']' AS p FROM json_each($10)) AS j; ";

/// A row of `$10` ([`PENDING_SQL`]): the call's columns, its input as a slice of `$9`
/// (start, length), and when it was proposed.
type PendingRow<'a> = (
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    i64,
    i64,
    &'a str,
);

/// The storer's script for a tick, by what it carries: each a fixed text, prepared once.
/// A tick that stores a call waiting for approval is synced to disk at its commit
/// (`synchronous = FULL` around it: a person who saw the form can always decide it), and
/// so is everything it carries; the others are not (chat text, see the README).
fn tick_script(turns: bool, pending: bool) -> &'static str {
    static SCRIPTS: [OnceLock<String>; 4] = [const { OnceLock::new() }; 4];
    SCRIPTS[usize::from(turns) * 2 + usize::from(pending)].get_or_init(|| {
        let turns = if turns { crate::store::TURNS_SQL } else { "" };
        if pending {
            format!(
                "PRAGMA synchronous = FULL; BEGIN IMMEDIATE; {turns}{PENDING_SQL}{BATCHES_SQL}\
                 COMMIT; PRAGMA synchronous = NORMAL;"
            )
        } else {
            format!("BEGIN IMMEDIATE; {turns}{BATCHES_SQL}COMMIT;")
        }
    })
}

/// [`write_batches`] on SQLite: every batch in one fixed script, one round trip to the
/// writer for the whole tick ([`db::run_script`]). Values travel only as parameters.
async fn write_batches_script(
    db: &Pool,
    node: &str,
    batches: &[Batch],
    at: String,
) -> Result<(), sqlx::Error> {
    // Most ticks store no turn (only the first tick of a run does) and no pending call:
    // they take a script without those statements, which would each still open and
    // close a statement over an empty array.
    let sql = tick_script(
        batches.iter().any(|batch| batch.turn.is_some()),
        batches.iter().any(|batch| batch.pending.is_some()),
    );
    let mut turns = crate::store::TurnRows::default();
    let mut texts = crate::store::Texts::default();
    let mut runs: Vec<[&str; 4]> = Vec::with_capacity(batches.len());
    let mut saves: Vec<(&str, &str, i64, i64, i64)> = Vec::new();
    let mut events: Vec<(&str, i64, i64, i64, i64)> = Vec::new();
    let mut pending: Vec<PendingRow<'_>> = Vec::new();
    for batch in batches {
        let run = &batch.run;
        if let Some(turn) = &batch.turn {
            turn.add_rows(&mut turns, &mut texts);
        }
        let status = if batch.done { "done" } else { "running" };
        runs.push([&run.id, &run.conversation_id, &run.owner_id, status]);
        if let Some((request, _)) = &batch.pending {
            let call = &request.call;
            let (start, length) = texts.push(&call.input);
            pending.push((
                &call.tool_call_id,
                &call.conversation_id,
                &call.owner_id,
                &call.message_id,
                &call.tool_name,
                start,
                length,
                &request.created_at,
            ));
        }
        if let Some(save) = batch.message() {
            let (start, length) = texts.push(&save.body);
            saves.push((
                &save.conversation_id,
                &save.message_id,
                start,
                length,
                save.run_seq,
            ));
        }
        if !batch.events.is_empty() {
            let (start, length) = texts.push_lines(&batch.events);
            events.push((
                &run.id,
                i64::try_from(batch.from + 1).unwrap_or(i64::MAX),
                i64::try_from(batch.from + batch.events.len()).unwrap_or(i64::MAX),
                start,
                length,
            ));
        }
    }
    let script = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(node.to_owned())
        .bind(at)
        .bind(json(&turns.conversations))
        .bind(json(&turns.messages))
        .bind(json(&turns.touched))
        .bind(json(&runs))
        .bind(json(&saves))
        .bind(json(&events))
        .bind(texts.into_blob())
        .bind(json(&pending));
    db::run_script(db, script).await
}

/// Rows as one JSON array parameter.
fn json<T: serde::Serialize>(rows: &[T]) -> String {
    // Plain strings and numbers: serialising cannot fail.
    serde_json::to_string(rows).unwrap_or_else(|_| "[]".to_owned())
}

/// A batch's events as stored ([`crate::store::push_lines`]), as one text.
pub(super) fn join_lines(events: &[Arc<str>]) -> String {
    let mut text = String::new();
    crate::store::push_lines(&mut text, events);
    text
}

/// The runs of `node` another process asked to stop (`$1`: the node).
pub(super) const STOP_REQUESTS_SQL: &str =
    "SELECT run_id FROM runs WHERE node = $1 AND status = 'running' AND stop_requested <> 0";

/// The runs of `node` another process asked to stop.
async fn stop_requests(db: &Pool, node: &str) -> Result<Vec<String>, sqlx::Error> {
    let rows: Vec<(String,)> = sqlx::query_as(STOP_REQUESTS_SQL)
        .bind(node)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

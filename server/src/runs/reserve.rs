//! Taking a conversation's place for a new run: here (one run per conversation in the
//! process, a bounded number per owner) and in the database (the conversation's lease,
//! across processes); the reservation that holds the place until the run starts, and the
//! task that drives a started run to its end.

use super::*;

/// A run's place in the registry, taken before anything is stored for it. Dropping it
/// without [`Reservation::start`] gives the place back.
pub struct Reservation {
    runs: Runs,
    run: Arc<ActiveRun>,
    started: bool,
    /// An existing conversation whose lease is taken by the turn's commit
    /// ([`Runs::reserve_existing`] on SQLite): a row that refuses it is another run's.
    lease_in_turn: bool,
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

    /// [`Reservation::store_turn`], for a place from [`Runs::reserve_existing`]. When the
    /// conversation's lease was left to the turn's commit and another run's row holds it
    /// (on SQLite, one process per file, only a process that died leaves one), the lease
    /// is taken as [`Runs::reserve`] takes it: a dead run is closed as interrupted and the
    /// turn stored again; a live one is `Err(Busy)`, and nothing of the turn is stored.
    /// The inner error is the turn's, as from `store_turn`.
    pub async fn store_turn_leased(
        &self,
        turn: Turn,
    ) -> Result<Result<(), sqlx::Error>, ReserveError> {
        if !self.lease_in_turn {
            return Ok(self.store_turn(turn).await);
        }
        match self.store_turn(turn.clone()).await {
            Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
                tracing::info!(run = %self.run.id, "the conversation's row is another run's");
                self.runs.take_lease(&self.run, None).await?;
                Ok(self.store_turn(turn).await)
            }
            stored => Ok(stored),
        }
    }

    /// Takes the conversation's lease now, for a place from [`Runs::reserve_existing`]
    /// that is about to change the conversation before its turn is stored (closing the
    /// confirmations a new message leaves open): a run of another process keeps it
    /// (`Busy`) before anything is changed, as [`Runs::reserve`] would.
    pub async fn lease_now(&mut self) -> Result<(), ReserveError> {
        if !self.lease_in_turn {
            return Ok(());
        }
        self.runs.take_lease(&self.run, None).await?;
        self.lease_in_turn = false;
        Ok(())
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
        run.last_save
            .wake_with(Arc::clone(&self.runs.inner.wake_storer));
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
///
/// Not an `async fn` awaiting `work`: that keeps room for the agent's future twice (as an
/// argument and as the future it awaits), about 1.4 KiB more in every run's task. `then`
/// holds the agent's future, and after it the end, in one place.
fn drive(
    runs: Runs,
    run: Arc<ActiveRun>,
    work: impl Future<Output = ()>,
) -> impl Future<Output = ()> {
    use futures::FutureExt;
    // The run's state is its log, which stays consistent event by event: what a panic
    // leaves is stored and ended like any other end.
    std::panic::AssertUnwindSafe(work)
        .catch_unwind()
        .then(move |outcome| end(runs, run, outcome.is_err()))
}

/// The end of every run: its last events stored (or given up on), then its place given
/// back.
async fn end(runs: Runs, run: Arc<ActiveRun>, panicked: bool) {
    if panicked {
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
            // Boxed: a rare path whose futures would otherwise take room in every run's task.
            let stored = Box::pin(async {
                match runs.inner.db.acquire().await {
                    Ok(mut conn) => save.store(&mut conn).await,
                    Err(error) => Err(error),
                }
            })
            .await;
            if let Err(error) = stored {
                tracing::error!(%error, run = %run.id, "saving a run's last message failed");
            }
        }
    }
    // The place first, then the streams: a client that saw the end may send at once.
    runs.release(&run);
}

/// Live runs of processes other than `$1` (heartbeat after `$2`), counted by owner.
pub(super) const RUNNING_ELSEWHERE_SQL: &str = "SELECT owner_id, COUNT(*) FROM runs \
     WHERE status = 'running' AND node <> $1 AND updated_at > $2 GROUP BY owner_id";

impl Runs {
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
        let counted: Result<Vec<(String, i64)>, _> = sqlx::query_as(RUNNING_ELSEWHERE_SQL)
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

    /// The place for a new turn in an existing conversation, without waiting. On
    /// PostgreSQL (replicas) as [`Runs::reserve`]: the lease is taken in the database
    /// first. On SQLite, which one process serves, this process's registry already keeps
    /// the conversation to one run, so the lease is left to the turn's commit, which
    /// stores the run's row anyway ([`Reservation::store_turn_leased`]): one write fewer
    /// per message, and a row left by a process that died is still found there.
    pub async fn reserve_existing(
        &self,
        owner_id: &str,
        conversation_id: &str,
    ) -> Result<Reservation, ReserveError> {
        if self.is_postgres() {
            return self.reserve(owner_id, conversation_id, None).await;
        }
        let mut reservation = self
            .reserve_place(owner_id, conversation_id, None, false)
            .await?;
        reservation.lease_in_turn = true;
        Ok(reservation)
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
            lease_in_turn: false,
        };
        if !store_row {
            // A new conversation, which nobody else can hold, or an existing one on
            // SQLite: the lease is stored with the turn.
            return Ok(reservation);
        }
        self.take_lease(&reservation.run, deadline).await?;
        Ok(reservation)
    }

    /// Takes the conversation's lease in the database for `run` (here it is already
    /// `run`'s): waits for another process's run until `deadline`, closes a dead one.
    /// A database that cannot answer does not stop the run here: it is the only one of
    /// this process, and the turn's commit checks the lease again. Once taken, the
    /// storer may write the run's row.
    async fn take_lease(
        &self,
        run: &Arc<ActiveRun>,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<(), ReserveError> {
        self.wait_for_lease(run, deadline).await?;
        run.row_ready.store(true, Ordering::Release);
        Ok(())
    }

    async fn wait_for_lease(
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's task is the agent's future and a little more: the future it drives is not
    /// held twice, as it would be by an `async fn` that takes it and awaits it. Every
    /// reply being written has such a task, for as long as a slow model takes.
    #[tokio::test]
    async fn a_runs_task_holds_the_agents_future_once() {
        let (pool, _db) = db::test_pool().await;
        let runs = Runs::new(pool);
        let run = Arc::new(ActiveRun::new("conv_size", "own_size"));
        let ballast = [7u8; 4096];
        let work = async move {
            tokio::task::yield_now().await;
            std::hint::black_box(&ballast);
        };
        let work_size = std::mem::size_of_val(&work);
        let task = drive(runs, run, work);
        let size = std::mem::size_of_val(&task);
        assert!(work_size >= 4096, "the ballast is held across the await");
        assert!(
            size < work_size + 1024,
            "a run's task takes {size} bytes for an agent future of {work_size}"
        );
    }
}

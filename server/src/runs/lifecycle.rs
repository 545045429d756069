//! The ends of runs that did not end on their own: the sweeper that closes runs whose
//! process died (on any process sharing the database), and the shutdown of this process's
//! registry (SIGTERM).

use super::*;

/// Runs still `running` whose heartbeat is `$1` or older, oldest first.
pub(super) const DEAD_RUNS_SQL: &str = "SELECT run_id FROM runs WHERE status = 'running' \
     AND updated_at <= $1 ORDER BY updated_at LIMIT 100";

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
        let dead: Vec<(String,)> = sqlx::query_as(DEAD_RUNS_SQL)
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

    /// Whether every run of this process ended within `max`.
    async fn idle_within(&self, max: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + max;
        loop {
            // Registered before looking, so an end between the look and the wait wakes it.
            let freed = self.inner.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if self.active().is_empty() {
                return true;
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return false;
            }
        }
    }

    /// Shuts the registry down: no new run starts from now on; the runs going may finish
    /// within `grace`; what is left then is stopped and ends as interrupted (a run that
    /// cannot even store that is closed as another process would close it). How many runs
    /// were stopped so.
    pub async fn shut_down(&self, grace: Duration) -> usize {
        self.inner.closing.store(true, Ordering::Release);
        if self.idle_within(grace).await {
            return 0;
        }
        // Stopped as interrupted (not as by the person), and stored as they end.
        let left: Vec<Arc<ActiveRun>> = self.active().values().cloned().collect();
        for run in &left {
            run.last_save.interrupt();
            run.token.cancel();
        }
        if self.idle_within(STOP_AT_SHUTDOWN).await {
            return left.len();
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

//! Following a run from the database: on any process, a run's stored events are read in
//! order and then waited for — woken by `LISTEN/NOTIFY` on PostgreSQL (the listener task
//! here), by polling on SQLite — until the run is over or its process stops beating.

use super::*;

/// The stored events of a run after number `after`, numbered, from at most [`PAGE`]
/// batches; `true` with them when there may be more batches to read.
pub(super) async fn stored_events(
    db: impl crate::db::Source,
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
pub(super) enum RowState {
    /// Still going, with a recent heartbeat.
    Running,
    /// Over: every event is stored.
    Done,
    /// Gone, or its process stopped beating.
    Lost,
}

pub(super) async fn row_state(
    db: impl crate::db::Source,
    run_id: &str,
    fresh: &str,
) -> Result<RowState, sqlx::Error> {
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
pub(super) async fn listen(inner: Weak<Inner>, url: String) {
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

//! The restaurant catalogue as this process last read it.
//!
//! A search, an availability check and a booking's confirmation form each read restaurants;
//! the rows change only when an operator edits them. Reading them once per
//! [`FRESH_FOR`] instead of once per call saves a query per step, and each query on SQLite
//! is a hand-over to sqlx's connection thread and back. A booking never relies on this
//! copy: it reads its restaurant again inside its own write transaction
//! (`booking::book`), so an edit is at worst shown this late, never booked on.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, Instant},
};

use sqlx::FromRow;

use super::{RestaurantRow, SearchRow};

/// How long a read of the catalogue serves before the next call reads it again.
const FRESH_FOR: Duration = Duration::from_secs(10);

/// This process's copy of the catalogue, shared by every call's [`super::ToolContext`]
/// (cloning shares it). Empty until first used, so a context made for one call costs nothing.
#[derive(Clone, Default)]
pub struct Catalogue {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    copy: Mutex<Option<(Instant, Arc<Snapshot>)>>,
    /// Held while the catalogue is read, so calls arriving meanwhile wait for that read
    /// instead of each reading it too.
    reading: tokio::sync::Mutex<()>,
    /// `None`: [`FRESH_FOR`]; tests set their own.
    fresh_for: Option<Duration>,
}

/// One read of the whole catalogue.
struct Snapshot {
    rows: Vec<SearchRow>,
    by_id: HashMap<String, usize>,
}

impl Catalogue {
    /// A catalogue whose copy serves for `fresh_for` (zero: every call reads).
    #[cfg(test)]
    pub(crate) fn fresh_for(fresh_for: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                fresh_for: Some(fresh_for),
                ..Inner::default()
            }),
        }
    }

    /// The restaurant with this id, if any.
    pub async fn find(
        &self,
        reads: &crate::db::Reads,
        id: &str,
    ) -> Result<Option<RestaurantRow>, sqlx::Error> {
        let snapshot = self.snapshot(reads).await?;
        Ok(snapshot
            .by_id
            .get(id)
            .and_then(|&at| snapshot.rows.get(at))
            .map(|found| found.row.clone()))
    }

    /// Every restaurant of `city` (its canonical name), in no particular order.
    pub(super) async fn in_city(
        &self,
        reads: &crate::db::Reads,
        city: &str,
    ) -> Result<Vec<SearchRow>, sqlx::Error> {
        let snapshot = self.snapshot(reads).await?;
        Ok(snapshot
            .rows
            .iter()
            .filter(|found| found.row.city == city)
            .cloned()
            .collect())
    }

    fn fresh(&self) -> Option<Arc<Snapshot>> {
        let fresh_for = self.inner.fresh_for.unwrap_or(FRESH_FOR);
        let copy = self
            .inner
            .copy
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        copy.as_ref()
            .filter(|(read_at, _)| read_at.elapsed() < fresh_for)
            .map(|(_, snapshot)| Arc::clone(snapshot))
    }

    async fn snapshot(&self, reads: &crate::db::Reads) -> Result<Arc<Snapshot>, sqlx::Error> {
        if let Some(snapshot) = self.fresh() {
            return Ok(snapshot);
        }
        let _reading = self.inner.reading.lock().await;
        if let Some(snapshot) = self.fresh() {
            return Ok(snapshot);
        }
        let read_at = Instant::now();
        let snapshot = Arc::new(read(reads).await?);
        *self
            .inner
            .copy
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some((read_at, Arc::clone(&snapshot)));
        Ok(snapshot)
    }
}

/// Reads every row; a row that does not decode is left out and logged for us to fix, so
/// one bad row does not take the whole catalogue with it.
async fn read(reads: &crate::db::Reads) -> Result<Snapshot, sqlx::Error> {
    let found = sqlx::query(concat!(
        "SELECT ",
        columns!(),
        ", search_text, review FROM restaurants"
    ))
    .fetch_all(reads)
    .await?;
    let mut rows = Vec::with_capacity(found.len());
    for row in &found {
        match SearchRow::from_row(row) {
            Ok(decoded) => rows.push(decoded),
            Err(error) => tracing::warn!(%error, "skipping a restaurant row that does not decode"),
        }
    }
    let by_id = rows
        .iter()
        .enumerate()
        .map(|(at, found)| (found.row.id.clone(), at))
        .collect();
    Ok(Snapshot { rows, by_id })
}

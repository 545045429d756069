//! The accept loop: every connection gets `TCP_NODELAY`, a deadline for its request
//! headers, and a place among a bounded number per client address.
//!
//! `axum::serve` has none of the last two: a client that sends half its headers (a
//! slow-loris) held its connection, a task and a file descriptor for as long as it liked,
//! and one address could open them by the thousand.

use std::{
    collections::HashMap,
    future::Future,
    net::IpAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::Router;
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::{conn::auto, graceful::GracefulShutdown},
    service::TowerToHyperService,
};
use tokio::net::TcpListener;

/// Bounds on connections, as configured.
#[derive(Debug, Clone, Copy)]
pub struct EdgeLimits {
    /// How long a client has to send its request headers (each request's, on a kept-alive
    /// connection) before the connection is closed.
    pub header_timeout: Duration,
    /// Connections one client address may have open at once; `0`: no bound (behind a
    /// proxy every client has the proxy's address, and the proxy bounds them).
    pub per_address: usize,
    /// How long open connections may take to finish once the server is told to stop.
    pub shutdown_grace: Duration,
}

impl Default for EdgeLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            per_address: 256,
            shutdown_grace: Duration::from_secs(30),
        }
    }
}

/// Open connections per client address.
#[derive(Debug, Default, Clone)]
struct Counts(Arc<Mutex<HashMap<IpAddr, usize>>>);

/// A connection's place; given back when it is dropped (the connection ended).
struct Place {
    counts: Counts,
    address: IpAddr,
}

impl Counts {
    fn take(&self, address: IpAddr, max: usize) -> Option<Place> {
        let mut counts = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = counts.entry(address).or_insert(0);
        if max > 0 && *count >= max {
            return None;
        }
        *count += 1;
        Some(Place {
            counts: self.clone(),
            address,
        })
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut counts = self
            .counts
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.address);
            }
        }
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets open connections
/// finish for at most `limits.shutdown_grace`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: EdgeLimits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let counts = Counts::default();
    let graceful = GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        // Above the API's own limit, so that the API's layer refuses in JSON
        // (`api::edge::MAX_HEADERS`) instead of hyper with an empty 431.
        .max_headers(4 * crate::api::edge::MAX_HEADERS)
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: wait, do not spin.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Some(place) = counts.take(peer.ip(), limits.per_address) else {
            tracing::warn!(address = %peer.ip(), "refused a connection: too many from this address");
            drop(stream);
            continue;
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::warn!(%error, "cannot set TCP_NODELAY on a connection");
        }
        let service = TowerToHyperService::new(app.clone());
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, %peer, "connection ended with an error");
            }
            drop(place);
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.shutdown_grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open at the end of the shutdown grace period");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_bounded_per_address_and_given_back() {
        let counts = Counts::default();
        let one: IpAddr = "10.0.0.1".parse().unwrap();
        let two: IpAddr = "10.0.0.2".parse().unwrap();
        let first = counts.take(one, 2).unwrap();
        let _second = counts.take(one, 2).unwrap();
        assert!(counts.take(one, 2).is_none());
        assert!(
            counts.take(two, 2).is_some(),
            "another address is not bounded by the first"
        );
        drop(first);
        assert!(
            counts.take(one, 2).is_some(),
            "a closed connection gives its place back"
        );
        assert!(
            (0..1000).all(|_| counts.take(one, 0).is_some()),
            "0 is no bound"
        );
    }
}

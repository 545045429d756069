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
use futures::FutureExt;
use hyper::server::conn::http1;
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    server::graceful::GracefulShutdown,
    service::TowerToHyperService,
};
use tokio::net::TcpListener;

/// No transparent huge pages for this process; `false` when the kernel refused (only
/// memory use changes then). Called first thing by the server's `main`, and by the
/// benchmarks that must cost what the server costs, before any thread allocates.
///
/// mimalloc asks for huge pages on its whole arena (`MADV_HUGEPAGE`), so every 2 MiB
/// region it touches becomes resident at once: thousands of replies held open, each using
/// a few KiB scattered over the arena, then cost 36 → 57 KiB each at 1,000 open and 25 → 30
/// KiB at 10,000, for no CPU measurably saved (README, "Benchmarks"). Equivalent to
/// `MIMALLOC_ALLOW_THP=0`, which mimalloc reads only from the environment.
pub fn small_pages_only() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_THP_DISABLE takes one integer flag and touches no memory of ours.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

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
    // HTTP/1.1 only, not hyper-util's `auto` builder: nothing that talks to datban speaks
    // HTTP/2 without TLS (browsers, the AI SDK, MCP clients and proxies use HTTP/1.1 on a
    // plain socket), and the `auto` connection carries room for an HTTP/2 state and a
    // rewind buffer in every open reply (about 2 KiB each, measured with heaptrack).
    let mut builder = http1::Builder::new();
    builder
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
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        // `map`, not an `async move` block that awaits the connection: such a block keeps
        // room for the connection twice (as its capture and as the future it awaits),
        // 800 bytes more in every open connection's task.
        tokio::spawn(connection.map(move |result| {
            if let Err(error) = result {
                tracing::debug!(%error, %peer, "connection ended with an error");
            }
            drop(place);
        }));
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

    /// The server's own end of a connection, found among this process's open files by
    /// its two addresses: the socket the accept loop set up, not a copy of it.
    #[cfg(target_os = "linux")]
    fn server_end_nodelay(
        server: std::net::SocketAddr,
        client: std::net::SocketAddr,
    ) -> Option<bool> {
        use std::os::fd::{FromRawFd, IntoRawFd};
        for entry in std::fs::read_dir("/proc/self/fd").ok()?.flatten() {
            let Some(fd) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            // SAFETY: only borrowed for the checks below and given back with
            // `into_raw_fd`, so the descriptor is neither closed nor used afterwards.
            let socket = unsafe { std::net::TcpStream::from_raw_fd(fd) };
            let matches =
                socket.local_addr().ok() == Some(server) && socket.peer_addr().ok() == Some(client);
            let nodelay = socket.nodelay().ok();
            let _ = socket.into_raw_fd();
            if matches {
                return nodelay;
            }
        }
        None
    }

    /// The accept loop itself (not a helper beside it) turns Nagle's algorithm off: with
    /// it on, each small SSE write after the first waited about 40 ms for the client's
    /// delayed ACK.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_accept_loop_sets_nodelay_on_every_connection() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = listener.local_addr().unwrap();
        let stop = tokio_util::sync::CancellationToken::new();
        let served = tokio::spawn(serve(
            listener,
            Router::new(),
            EdgeLimits::default(),
            stop.clone().cancelled_owned(),
        ));
        for _ in 0..3 {
            let client = tokio::net::TcpStream::connect(server).await.unwrap();
            let local = client.local_addr().unwrap();
            assert!(
                !client.nodelay().unwrap(),
                "the client keeps the system's default, so what is checked is the server's end"
            );
            let mut found = None;
            for _ in 0..200 {
                found = server_end_nodelay(server, local);
                if found.is_some() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert_eq!(
                found,
                Some(true),
                "the server's end of a connection has TCP_NODELAY off (or was not found)"
            );
        }
        stop.cancel();
        served.await.unwrap().unwrap();
    }

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

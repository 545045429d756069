//! The floor under datban's memory per open reply: the same accept loop, HTTP/1 builder,
//! allocator and page settings as the server, and an app that does nothing but answer
//! `POST /api/chat` with the response head datban sends and one event, then holds the
//! stream open (a model that has not answered yet). `cargo xtask bench` holds replies open
//! on it as on datban, in the same run; what this costs per reply is hyper's, axum's and
//! tokio's share, which no change inside the app can take back.
//!
//! `cargo run --release -p server --example open_floor -- 127.0.0.1:PORT`

use std::{convert::Infallible, net::SocketAddr, process::ExitCode};

use axum::{
    body::{Body, Bytes},
    http::{header, HeaderValue, Response},
    routing::{get, post},
    Router,
};
use futures::stream::{self, StreamExt};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The first event of a datban reply, as long as the real one.
const FIRST_EVENT: &str =
    "data: {\"type\":\"start\",\"messageId\":\"msg_0193a1b2c3d4e5f6a7b8c9d0e1f2a3b4\"}\n\n";

/// Reads the request's body (datban parses its JSON), then streams one event and never
/// ends.
async fn chat(body: Bytes) -> Response<Body> {
    drop(body);
    let events =
        stream::once(async { Ok::<_, Infallible>(Bytes::from_static(FIRST_EVENT.as_bytes())) })
            .chain(stream::pending());
    let mut response = Response::new(Body::from_stream(events));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        "x-vercel-ai-ui-message-stream",
        HeaderValue::from_static("v1"),
    );
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

fn main() -> ExitCode {
    let Some(addr) = std::env::args()
        .nth(1)
        .and_then(|a| a.parse::<SocketAddr>().ok())
    else {
        eprintln!("open_floor: give the address to listen on, e.g. 127.0.0.1:3000");
        return ExitCode::FAILURE;
    };
    // As the server's main does, before any thread allocates.
    server::serve::small_pages_only();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("open_floor: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!("open_floor: cannot listen on {addr}: {error}");
                return ExitCode::FAILURE;
            }
        };
        let app = Router::new()
            .route("/api/chat", post(chat))
            // What the benchmark waits for before it starts, as on datban.
            .route("/healthz", get(|| async { "ok" }));
        let limits = server::serve::EdgeLimits {
            per_address: 0,
            ..Default::default()
        };
        match server::serve::serve(listener, app, limits, std::future::pending()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("open_floor: {error}");
                ExitCode::FAILURE
            }
        }
    })
}

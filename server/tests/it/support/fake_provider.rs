//! A fake model provider on a real local socket, speaking the providers' exact SSE wire
//! formats from recorded streams, recording every request body it receives.

#![allow(dead_code)]

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use axum::{
    body::Body,
    extract::State,
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::Response,
    Router,
};
use serde_json::Value;

use super::Fallible;

/// How a recorded stream is framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI Chat Completions: `data: {json}` lines, then `data: [DONE]`.
    ChatCompletions,
    /// Anthropic Messages and OpenAI Responses: `event: <type>` before each `data:` line.
    NamedEvents,
}

/// What the fake answers to one request.
#[derive(Debug, Clone)]
pub enum Script {
    /// Streams these provider events (one JSON text each); `cut_after` stops the body
    /// after that many events, as a dropped connection would.
    Stream {
        events: Vec<String>,
        wire: Wire,
        cut_after: Option<usize>,
    },
    /// Answers with a status and a body (an error).
    Status {
        status: u16,
        body: String,
        retry_after: Option<u64>,
    },
}

/// One request the fake received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Clone)]
struct Shared {
    scripts: Arc<Mutex<Vec<Script>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

pub struct FakeProvider {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    handle: tokio::task::JoinHandle<()>,
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

impl FakeProvider {
    /// The base URL to configure an adapter with (e.g. `http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self, prefix: &str) -> String {
        format!("http://{}{prefix}", self.addr)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        // A handler that panicked mid-push poisons the lock; what it recorded still counts.
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// The events of a recorded fixture file (one JSON text per line).
pub fn fixture(name: &str) -> Fallible<Vec<String>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/provider-streams")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .map_err(|error| format!("fixture {}: {error}", path.display()))?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect())
}

fn frame(event: &str, wire: Wire) -> String {
    match wire {
        Wire::ChatCompletions => format!("data: {event}\n\n"),
        Wire::NamedEvents => {
            let kind = serde_json::from_str::<Value>(event)
                .ok()
                .and_then(|v| v["type"].as_str().map(str::to_owned))
                .unwrap_or_else(|| "message".to_owned());
            format!("event: {kind}\ndata: {event}\n\n")
        }
    }
}

async fn answer(
    State(shared): State<Shared>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: String,
) -> Response {
    shared
        .requests
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(Recorded {
            path: uri.path().to_owned(),
            headers,
            body: serde_json::from_str(&body).unwrap_or(Value::Null),
        });
    let script = {
        let mut scripts = shared
            .scripts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if scripts.len() > 1 {
            scripts.remove(0)
        } else {
            scripts[0].clone()
        }
    };
    match script {
        Script::Status {
            status,
            body,
            retry_after,
        } => {
            let mut response = Response::new(Body::from(body));
            // `spawn` refused scripts with a status that is not one.
            *response.status_mut() =
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            if let Some(seconds) = retry_after {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            }
            response
        }
        Script::Stream {
            events,
            wire,
            cut_after,
        } => {
            let mut text = String::new();
            let cut = cut_after.unwrap_or(usize::MAX);
            for event in events.iter().take(cut) {
                text.push_str(&frame(event, wire));
            }
            if cut_after.is_none() && wire == Wire::ChatCompletions {
                text.push_str("data: [DONE]\n\n");
            }
            // Sent in small pieces so adapters meet events split across reads.
            let pieces: Vec<Result<Vec<u8>, std::io::Error>> = text
                .into_bytes()
                .chunks(7)
                .map(|c| Ok(c.to_vec()))
                .collect();
            let mut response = Response::new(Body::from_stream(futures::stream::iter(pieces)));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            response
        }
    }
}

/// Starts the fake; each request takes the next script, the last one repeats.
pub async fn spawn(scripts: Vec<Script>) -> Fallible<FakeProvider> {
    assert!(!scripts.is_empty());
    for script in &scripts {
        if let Script::Status { status, .. } = script {
            StatusCode::from_u16(*status)
                .map_err(|error| format!("scripted status {status}: {error}"))?;
        }
    }
    let shared = Shared {
        scripts: Arc::new(Mutex::new(scripts)),
        requests: Arc::new(Mutex::new(Vec::new())),
    };
    let requests = shared.requests.clone();
    let app = Router::new().fallback(answer).with_state(shared);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let handle = tokio::spawn(async move {
        // A panic here would only end this task, never the test: say why the fake stopped.
        if let Err(error) = axum::serve(listener, app).await {
            eprintln!("fake provider on {addr} stopped: {error}");
        }
    });
    Ok(FakeProvider {
        addr,
        requests,
        handle,
    })
}

/// An OpenAI Chat Completions adapter pointed at the fake, without retries, so scripted
/// answers are consumed one per model turn.
pub fn openai_chat(fake: &FakeProvider) -> Fallible<server::model::SharedProvider> {
    let settings = server::model::http::HttpSettings {
        connect_timeout: std::time::Duration::from_secs(2),
        read_timeout: std::time::Duration::from_secs(5),
        max_retries: 0,
        backoff: std::time::Duration::from_millis(1),
    };
    Ok(Arc::new(server::model::openai_chat::OpenAiChat::new(
        fake.base_url("/v1"),
        Some("sk-test".to_owned()),
        "gpt-test".to_owned(),
        settings,
    )?))
}

/// One Chat Completions stream chunk with this delta.
pub fn chat_chunk(delta: Value, finish: Option<&str>) -> String {
    serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
    })
    .to_string()
}

/// A model turn that only says `text`.
pub fn chat_text(text: &str) -> Script {
    Script::Stream {
        events: vec![
            chat_chunk(
                serde_json::json!({"role": "assistant", "content": text}),
                None,
            ),
            chat_chunk(serde_json::json!({}), Some("stop")),
        ],
        wire: Wire::ChatCompletions,
        cut_after: None,
    }
}

/// A model turn that calls one tool with these argument text.
pub fn chat_call(id: &str, name: &str, arguments: &str) -> Script {
    Script::Stream {
        events: vec![
            chat_chunk(
                serde_json::json!({"role": "assistant", "content": null}),
                None,
            ),
            chat_chunk(
                serde_json::json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                    "function": {"name": name, "arguments": arguments}}]}),
                None,
            ),
            chat_chunk(serde_json::json!({}), Some("tool_calls")),
        ],
        wire: Wire::ChatCompletions,
        cut_after: None,
    }
}

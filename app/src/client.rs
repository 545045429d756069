//! The browser's side of the HTTP API (`gloo-net`): JSON requests, and an event stream's
//! body read as it arrives. Compiled only with `hydrate`.

use std::ops::ControlFlow;

use gloo_net::http::{Method, RequestBuilder, Response};
use js_sys::Uint8Array;
use serde::{de::DeserializeOwned, Serialize};
use shared::events::AgentEvent;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, ReadableStreamReadResult, RequestCredentials};

use crate::{
    api,
    sse::{SseDecoder, SseItem},
};

/// A request that did not give what was asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientError {
    /// The HTTP status, when the server answered.
    pub status: Option<u16>,
    /// What the person sees.
    pub message: String,
}

impl ClientError {
    /// A failure of the browser's side, said in the page's language (`(vi, en)`).
    fn local(message: (&'static str, &'static str)) -> Self {
        Self {
            status: None,
            message: pair(message).to_owned(),
        }
    }
}

/// A sentence of a `(vi, en)` pair in the page's language.
fn pair((vi, en): (&'static str, &'static str)) -> &'static str {
    crate::i18n::t(vi, en)
}

const NETWORK_ERROR: (&str, &str) = (
    "Không kết nối được máy chủ. Vui lòng kiểm tra mạng và thử lại.",
    "Cannot reach the server. Check your connection and try again.",
);
const INTERRUPTED: (&str, &str) = (
    "Kết nối bị gián đoạn khi trợ lý đang trả lời. Vui lòng thử lại.",
    "The connection broke while the assistant was answering. Please try again.",
);
const BROWSER_ERROR: (&str, &str) = (
    "Trình duyệt không hỗ trợ thao tác này.",
    "This browser cannot do that.",
);
const UNREADABLE: (&str, &str) = (
    "Máy chủ trả về dữ liệu không đọc được.",
    "The server sent an answer that cannot be read.",
);

/// How a stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// `data: [DONE]` arrived.
    Done,
    /// The body ended without `[DONE]`.
    Eof,
    /// The caller asked to stop.
    Cancelled,
}

/// A reply stream whose answer has arrived; its body is read with [`EventStream::read`].
pub struct EventStream {
    response: Response,
    /// The run the stream belongs to, as the server named it (`x-datban-run-id`).
    pub run_id: Option<String>,
}

/// `POST`s `body` as JSON to `url` and waits for the head of the answer's event stream.
/// `Ok(None)`: the server answered `204 No Content` (nothing to stream).
pub async fn post_event_stream(
    url: &str,
    body: &impl Serialize,
) -> Result<Option<EventStream>, ClientError> {
    let body = serde_json::to_string(body).map_err(|_| ClientError::local(BROWSER_ERROR))?;
    open_event_stream(fetch(Method::POST, url, Some(&body), "text/event-stream").await?)
}

/// `GET`s the event stream at `url`; `Ok(None)` when the server answered `204 No Content`
/// (no reply is being written).
pub async fn get_event_stream(url: &str) -> Result<Option<EventStream>, ClientError> {
    open_event_stream(fetch(Method::GET, url, None, "text/event-stream").await?)
}

fn open_event_stream(response: Response) -> Result<Option<EventStream>, ClientError> {
    if response.status() == 204 {
        return Ok(None);
    }
    let run_id = response
        .headers()
        .get(api::RUN_ID_HEADER)
        .filter(|id| !id.is_empty());
    Ok(Some(EventStream { response, run_id }))
}

impl EventStream {
    /// Hands each item of the stream to `on_item` as soon as its chunk arrives: the event,
    /// or `None` for data that is not one (logged and skipped, but still one of the run's
    /// events for a caller that counts them).
    pub async fn read(
        self,
        mut on_item: impl FnMut(Option<AgentEvent>) -> ControlFlow<()>,
    ) -> Result<StreamEnd, ClientError> {
        let stream = self
            .response
            .body()
            .ok_or_else(|| ClientError::local(INTERRUPTED))?;
        let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
        let mut decoder = SseDecoder::new();

        loop {
            let result = JsFuture::from(reader.read())
                .await
                .map_err(|_| ClientError::local(INTERRUPTED))?;
            let result: ReadableStreamReadResult = result.unchecked_into();
            if result.get_done().unwrap_or(false) {
                break;
            }
            let Ok(bytes) = result.get_value().dyn_into::<Uint8Array>() else {
                continue;
            };
            let items = decoder.push(&bytes.to_vec());
            match deliver(items, &mut on_item) {
                Some(StreamEnd::Done) => {
                    finish_reading(&reader).await;
                    return Ok(StreamEnd::Done);
                }
                Some(end) => {
                    // Stop reading; the server sees the connection go once the body is
                    // dropped.
                    let _ = reader.cancel();
                    return Ok(end);
                }
                None => {}
            }
            if decoder.is_done() {
                finish_reading(&reader).await;
                return Ok(StreamEnd::Done);
            }
        }
        let items = decoder.finish();
        if let Some(end) = deliver(items, &mut on_item) {
            return Ok(end);
        }
        Ok(if decoder.is_done() {
            StreamEnd::Done
        } else {
            StreamEnd::Eof
        })
    }
}

/// After `[DONE]`: waits (briefly) for the body's end, which the server sends with it, so
/// the request completes instead of being aborted (browsers report an aborted request as a
/// failure). Cancels the body if more comes, or if it does not end within a second.
async fn finish_reading(reader: &ReadableStreamDefaultReader) {
    let timer = js_sys::Promise::new(&mut |resolve, _reject| {
        let scheduled = web_sys::window().is_some_and(|window| {
            window
                .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 1000)
                .is_ok()
        });
        if !scheduled {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    });
    let first = js_sys::Promise::race(&js_sys::Array::of2(&reader.read(), &timer));
    let ended = match JsFuture::from(first).await {
        // The timer resolves with `undefined`; a read with a result object.
        Ok(value) if value.is_object() => {
            let result: ReadableStreamReadResult = value.unchecked_into();
            result.get_done().unwrap_or(false)
        }
        _ => false,
    };
    if !ended {
        let _ = reader.cancel();
    }
}

/// Hands items to the caller; `Some` when the stream should stop here.
fn deliver(
    items: Vec<SseItem>,
    on_item: &mut impl FnMut(Option<AgentEvent>) -> ControlFlow<()>,
) -> Option<StreamEnd> {
    for item in items {
        let flow = match item {
            SseItem::Event(event) => on_item(Some(event)),
            SseItem::Done => return Some(StreamEnd::Done),
            SseItem::Malformed { data, error } => {
                leptos::logging::warn!(
                    "datban: skipped a malformed stream event ({error}): {data}"
                );
                on_item(None)
            }
        };
        if flow.is_break() {
            return Some(StreamEnd::Cancelled);
        }
    }
    None
}

/// Waits `ms` milliseconds (a browser timer).
pub async fn sleep_ms(ms: u32) {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let delay = i32::try_from(ms).unwrap_or(i32::MAX);
        let scheduled = web_sys::window().is_some_and(|window| {
            window
                .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, delay)
                .is_ok()
        });
        if !scheduled {
            // No timer to wait on: go on at once rather than never.
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// `POST`s an empty JSON object to `url`, for commands whose answer does not matter.
pub async fn post_command(url: &str) -> Result<(), ClientError> {
    fetch(Method::POST, url, Some("{}"), "application/json")
        .await
        .map(drop)
}

/// `GET`s `url` and reads the JSON answer.
pub async fn get_json<T: DeserializeOwned>(url: &str) -> Result<T, ClientError> {
    let response = fetch(Method::GET, url, None, "application/json").await?;
    let text = response_text(&response)
        .await
        .ok_or_else(|| ClientError::local(INTERRUPTED))?;
    // Through `Value` (see `sse::parse_data`): deserializing a conversation straight from
    // text would add a second copy of every message part's deserializer to the bundle.
    serde_json::from_str::<serde_json::Value>(&text)
        .and_then(serde_json::from_value)
        .map_err(|error| {
            leptos::logging::warn!("datban: unreadable answer from {url}: {error}");
            ClientError {
                status: Some(response.status()),
                message: pair(UNREADABLE).to_owned(),
            }
        })
}

/// Sends `method` to `url` with an optional JSON `body` and reads the JSON answer (the
/// consent page's answer, disconnecting an app).
pub async fn send_json<T: DeserializeOwned>(
    method: Method,
    url: &str,
    body: Option<&str>,
) -> Result<T, ClientError> {
    let response = fetch(method, url, body, "application/json").await?;
    let text = response_text(&response)
        .await
        .ok_or_else(|| ClientError::local(INTERRUPTED))?;
    serde_json::from_str::<serde_json::Value>(&text)
        .and_then(serde_json::from_value)
        .map_err(|_| ClientError {
            status: Some(response.status()),
            message: pair(UNREADABLE).to_owned(),
        })
}

/// `GET url`: the body of a 2xx answer as text.
pub async fn get_text(url: &str) -> Result<String, ClientError> {
    let response = fetch(Method::GET, url, None, "application/json").await?;
    response_text(&response)
        .await
        .ok_or_else(|| ClientError::local(INTERRUPTED))
}

/// One request through `gloo-net`: same-origin credentials (the owner cookie), `accept`
/// as given, a JSON body when there is one. A non-2xx answer becomes a [`ClientError`] told
/// in the person's language from the answer's `error.code`.
async fn fetch(
    method: Method,
    url: &str,
    body: Option<&str>,
    accept: &str,
) -> Result<Response, ClientError> {
    let request = RequestBuilder::new(url)
        .method(method)
        .credentials(RequestCredentials::SameOrigin)
        .header("accept", accept);
    let request = match body {
        Some(body) => request
            .header("content-type", "application/json")
            .body(body)
            .map_err(|_| ClientError::local(BROWSER_ERROR))?,
        None => request
            .build()
            .map_err(|_| ClientError::local(BROWSER_ERROR))?,
    };
    let response = request
        .send()
        .await
        .map_err(|_| ClientError::local(NETWORK_ERROR))?;
    if !response.ok() {
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        return Err(ClientError {
            status: Some(status),
            message: api::error_message(status, &body, crate::i18n::lang()),
        });
    }
    Ok(response)
}

async fn response_text(response: &Response) -> Option<String> {
    response.text().await.ok()
}

//! The browser's side of the HTTP API: `fetch`, reading an event stream as it arrives,
//! and the page URL. Compiled only with `hydrate`.

use std::ops::ControlFlow;

use js_sys::Uint8Array;
use serde::{de::DeserializeOwned, Serialize};
use shared::events::AgentEvent;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Headers, ReadableStreamDefaultReader, ReadableStreamReadResult, RequestCredentials,
    RequestInit, Response, UrlSearchParams,
};

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
    fn local(message: &str) -> Self {
        Self {
            status: None,
            message: message.to_owned(),
        }
    }
}

const NETWORK_ERROR: &str = "Không kết nối được máy chủ. Vui lòng kiểm tra mạng và thử lại.";
const INTERRUPTED: &str = "Kết nối bị gián đoạn khi trợ lý đang trả lời. Vui lòng thử lại.";
const BROWSER_ERROR: &str = "Trình duyệt không hỗ trợ thao tác này.";

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

/// `POST`s `body` as JSON to `url` and hands each event of the answer's event stream to
/// `on_event` as soon as its chunk arrives. Malformed events are logged and skipped.
pub async fn post_event_stream(
    url: &str,
    body: &impl Serialize,
    mut on_event: impl FnMut(AgentEvent) -> ControlFlow<()>,
) -> Result<StreamEnd, ClientError> {
    let body = serde_json::to_string(body).map_err(|_| ClientError::local(BROWSER_ERROR))?;
    let response = fetch("POST", url, Some(&body), "text/event-stream").await?;
    let stream = response
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
        if let Some(end) = deliver(items, &mut on_event) {
            // Stop reading; the server sees the connection go once the body is dropped.
            let _ = reader.cancel();
            return Ok(end);
        }
        if decoder.is_done() {
            let _ = reader.cancel();
            return Ok(StreamEnd::Done);
        }
    }
    let items = decoder.finish();
    if let Some(end) = deliver(items, &mut on_event) {
        return Ok(end);
    }
    Ok(if decoder.is_done() {
        StreamEnd::Done
    } else {
        StreamEnd::Eof
    })
}

/// Hands items to the caller; `Some` when the stream should stop here.
fn deliver(
    items: Vec<SseItem>,
    on_event: &mut impl FnMut(AgentEvent) -> ControlFlow<()>,
) -> Option<StreamEnd> {
    for item in items {
        match item {
            SseItem::Event(event) => {
                if on_event(event).is_break() {
                    return Some(StreamEnd::Cancelled);
                }
            }
            SseItem::Done => return Some(StreamEnd::Done),
            SseItem::Malformed { data, error } => {
                leptos::logging::warn!(
                    "datban: skipped a malformed stream event ({error}): {data}"
                );
            }
        }
    }
    None
}

/// `POST`s an empty JSON object to `url`, for commands whose answer does not matter.
pub async fn post_command(url: &str) -> Result<(), ClientError> {
    fetch("POST", url, Some("{}"), "application/json")
        .await
        .map(drop)
}

/// `GET`s `url` and reads the JSON answer.
pub async fn get_json<T: DeserializeOwned>(url: &str) -> Result<T, ClientError> {
    let response = fetch("GET", url, None, "application/json").await?;
    let text = response_text(&response)
        .await
        .ok_or_else(|| ClientError::local(INTERRUPTED))?;
    serde_json::from_str(&text).map_err(|error| {
        leptos::logging::warn!("datban: unreadable answer from {url}: {error}");
        ClientError {
            status: Some(response.status()),
            message: "Máy chủ trả về dữ liệu không đọc được.".to_owned(),
        }
    })
}

async fn fetch(
    method: &str,
    url: &str,
    body: Option<&str>,
    accept: &str,
) -> Result<Response, ClientError> {
    let window = web_sys::window().ok_or_else(|| ClientError::local(BROWSER_ERROR))?;
    let init = RequestInit::new();
    init.set_method(method);
    init.set_credentials(RequestCredentials::SameOrigin);
    let headers = Headers::new().map_err(|_| ClientError::local(BROWSER_ERROR))?;
    headers
        .set("accept", accept)
        .map_err(|_| ClientError::local(BROWSER_ERROR))?;
    if let Some(body) = body {
        headers
            .set("content-type", "application/json")
            .map_err(|_| ClientError::local(BROWSER_ERROR))?;
        init.set_body(&JsValue::from_str(body));
    }
    init.set_headers(&headers);

    let response = JsFuture::from(window.fetch_with_str_and_init(url, &init))
        .await
        .map_err(|_| ClientError::local(NETWORK_ERROR))?;
    let response: Response = response
        .dyn_into()
        .map_err(|_| ClientError::local(NETWORK_ERROR))?;
    if !response.ok() {
        let status = response.status();
        let body = response_text(&response).await.unwrap_or_default();
        return Err(ClientError {
            status: Some(status),
            message: api::error_message(status, &body),
        });
    }
    Ok(response)
}

async fn response_text(response: &Response) -> Option<String> {
    let promise = response.text().ok()?;
    JsFuture::from(promise).await.ok()?.as_string()
}

/// The page URL's query parameter `name`, when present and not empty.
pub fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    UrlSearchParams::new_with_str(&search)
        .ok()?
        .get(name)
        .filter(|value| !value.is_empty())
}

/// Replaces the page URL (no navigation, no history entry).
pub fn replace_url(url: &str) {
    let Some(history) = web_sys::window().and_then(|window| window.history().ok()) else {
        return;
    };
    if history
        .replace_state_with_url(&JsValue::NULL, "", Some(url))
        .is_err()
    {
        leptos::logging::warn!("datban: could not set the page URL to {url}");
    }
}

/// Whether the page is scrolled to (nearly) its end, so following new content is welcome.
pub fn near_page_end() -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let Some(root) = window
        .document()
        .and_then(|document| document.document_element())
    else {
        return false;
    };
    let viewport = window
        .inner_height()
        .ok()
        .and_then(|height| height.as_f64())
        .unwrap_or(0.0);
    let scrolled = window.scroll_y().unwrap_or(0.0);
    scrolled + viewport >= f64::from(root.scroll_height()) - 160.0
}

/// Scrolls to the end of the page once the current updates are drawn.
pub fn scroll_to_page_end() {
    leptos::prelude::request_animation_frame(|| {
        let Some(window) = web_sys::window() else {
            return;
        };
        if let Some(root) = window
            .document()
            .and_then(|document| document.document_element())
        {
            window.scroll_to_with_x_and_y(0.0, f64::from(root.scroll_height()));
        }
    });
}

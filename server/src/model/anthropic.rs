//! The Anthropic Messages API (`POST /v1/messages` with `"stream": true`) as a
//! [`ModelProvider`].
//!
//! The stream is a sequence of named SSE events: `message_start`, then per content block
//! `content_block_start` / `content_block_delta`* / `content_block_stop` (blocks are told
//! apart by `index`), `ping`s anywhere, `message_delta` with the `stop_reason`, and
//! `message_stop`. An `error` event can replace any of them. A stream that ends before
//! `message_stop` is an error: a cut connection must never look like a finished turn.

use std::collections::HashMap;

use futures::{Stream, StreamExt};
use reqwest::header::HeaderValue;
use serde_json::{json, Map, Value};

use super::{
    http::{self, Decode, HttpSettings, SseEvent, Step},
    FinishReason, ModelEvent, ModelMessage, ModelProvider, ModelRequest, ProviderError, TurnStream,
};

/// The API version this adapter speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Output token limit of one turn unless [`Anthropic::with_max_tokens`] says otherwise.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A model behind the Anthropic Messages API.
#[derive(Clone)]
pub struct Anthropic {
    client: reqwest::Client,
    settings: HttpSettings,
    url: String,
    /// Marked sensitive, so it never shows in `Debug` output of headers.
    api_key: HeaderValue,
    model: String,
    max_tokens: u32,
}

impl std::fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anthropic")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("api_key", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl Anthropic {
    /// An adapter for `model`. `base_url` is like `https://api.anthropic.com`; turns are
    /// POSTed to `{base_url}/v1/messages`.
    pub fn new(
        base_url: impl Into<String>,
        api_key: String,
        model: impl Into<String>,
        settings: HttpSettings,
    ) -> Result<Self, ProviderError> {
        let mut key = HeaderValue::from_str(api_key.trim()).map_err(|_| ProviderError {
            // Never the key itself, not even a part of it.
            message: "the Anthropic API key contains characters not allowed in a header".to_owned(),
        })?;
        key.set_sensitive(true);
        let base_url: String = base_url.into();
        Ok(Self {
            client: http::client(&settings)?,
            settings,
            url: format!("{}/v1/messages", base_url.trim_end_matches('/')),
            api_key: key,
            model: model.into(),
            max_tokens: DEFAULT_MAX_TOKENS,
        })
    }

    /// Changes the output token limit of a turn.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// The JSON body of one streamed turn.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("max_tokens".into(), json!(self.max_tokens));
        body.insert("stream".into(), json!(true));
        if !request.system.is_empty() {
            body.insert("system".into(), json!(request.system));
        }
        body.insert("messages".into(), Value::Array(messages(&request.messages)));
        if !request.tools.is_empty() {
            let tools = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.parameters,
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        Value::Object(body)
    }
}

/// The history as Anthropic messages. Anthropic wants user and assistant turns to
/// alternate, so neighbouring blocks of the same role share one message: all tool results
/// of a turn (and any user text right after them) go into a single user message.
fn messages(history: &[ModelMessage]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in history {
        let (role, blocks) = match message {
            ModelMessage::User { text } => ("user", text_block(text).into_iter().collect()),
            ModelMessage::Assistant { text, calls } => {
                let mut blocks: Vec<Value> = text_block(text).into_iter().collect();
                blocks.extend(calls.iter().map(|call| {
                    json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": arguments_object(&call.arguments),
                    })
                }));
                ("assistant", blocks)
            }
            ModelMessage::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": content,
                    "is_error": is_error,
                })],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// A text block, or nothing for empty text (Anthropic refuses empty text blocks).
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

/// A call's argument text as the `input` object Anthropic wants; anything that is not a
/// JSON object becomes `{}`.
fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(Map::new()),
    }
}

impl ModelProvider for Anthropic {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn stream_turn(&self, request: ModelRequest) -> TurnStream {
        let body = self.request_body(&request);
        let client = self.client.clone();
        let settings = self.settings;
        let url = self.url.clone();
        let key = self.api_key.clone();
        Box::pin(async_stream::stream! {
            let make = || {
                client
                    .post(&url)
                    .header("x-api-key", key.clone())
                    .header("anthropic-version", ANTHROPIC_VERSION)
                    .header(reqwest::header::ACCEPT, "text/event-stream")
                    .json(&body)
            };
            match http::send(make, &settings).await {
                Ok(response) => {
                    let mut turn = decode(http::events(response));
                    while let Some(item) = turn.next().await {
                        yield item;
                    }
                }
                Err(error) => yield Err(error),
            }
        })
    }
}

/// What one content block is, by its `index`.
enum Block {
    /// A tool call: its id, whether argument text was streamed, and any input that came
    /// whole in `content_block_start`.
    Tool {
        id: String,
        streamed: bool,
        initial: Option<String>,
    },
    /// Text, thinking or anything else that is not a call.
    Other,
}

fn error(message: impl Into<String>) -> ProviderError {
    ProviderError {
        message: message.into(),
    }
}

#[derive(Default)]
struct Decoder {
    blocks: HashMap<u64, Block>,
    stop_reason: Option<FinishReason>,
}

fn finish_reason(stop_reason: &str) -> FinishReason {
    match stop_reason {
        "tool_use" => FinishReason::ToolCalls,
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" => FinishReason::Length,
        _ => FinishReason::Other,
    }
}

impl Decoder {
    fn step(&mut self, event: &SseEvent) -> Result<Step, ProviderError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            error(format!(
                "Anthropic sent a `{}` event that is not JSON: {e}",
                event.event
            ))
        })?;
        let kind = data["type"].as_str().unwrap_or(event.event.as_str());
        let mut out = Vec::new();
        match kind {
            "message_start" | "ping" => {}
            "content_block_start" => {
                let index = index_of(&data)?;
                let block = &data["content_block"];
                if block["type"] == "tool_use" {
                    let id = block["id"].as_str().unwrap_or_default();
                    let name = block["name"].as_str().unwrap_or_default();
                    if id.is_empty() || name.is_empty() {
                        return Err(error(
                            "Anthropic started a tool_use block without id or name",
                        ));
                    }
                    let initial = match &block["input"] {
                        Value::Object(input) if !input.is_empty() => {
                            Some(Value::Object(input.clone()).to_string())
                        }
                        _ => None,
                    };
                    out.push(ModelEvent::ToolCallStart {
                        id: id.to_owned(),
                        name: name.to_owned(),
                    });
                    self.blocks.insert(
                        index,
                        Block::Tool {
                            id: id.to_owned(),
                            streamed: false,
                            initial,
                        },
                    );
                } else {
                    // Text, thinking, redacted thinking, server tools: not calls.
                    if let Some(text) = block["text"].as_str().filter(|t| !t.is_empty()) {
                        if block["type"] == "text" {
                            out.push(ModelEvent::TextDelta(text.to_owned()));
                        }
                    }
                    self.blocks.insert(index, Block::Other);
                }
            }
            "content_block_delta" => {
                let index = index_of(&data)?;
                let delta = &data["delta"];
                match delta["type"].as_str().unwrap_or_default() {
                    "text_delta" => {
                        if let Some(text) = delta["text"].as_str().filter(|t| !t.is_empty()) {
                            out.push(ModelEvent::TextDelta(text.to_owned()));
                        }
                    }
                    "input_json_delta" => {
                        let partial = delta["partial_json"].as_str().unwrap_or_default();
                        match self.blocks.get_mut(&index) {
                            Some(Block::Tool { id, streamed, .. }) => {
                                if !partial.is_empty() {
                                    *streamed = true;
                                    out.push(ModelEvent::ToolCallDelta {
                                        id: id.clone(),
                                        delta: partial.to_owned(),
                                    });
                                }
                            }
                            _ if partial.is_empty() => {}
                            // Argument text for no known call: dropping it silently
                            // would run a call with the wrong input.
                            _ => {
                                return Err(error(format!(
                                    "Anthropic sent tool input for block {index}, which is no tool_use block"
                                )))
                            }
                        }
                    }
                    // thinking_delta, signature_delta, citations_delta, …
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = index_of(&data)?;
                if let Some(Block::Tool {
                    id,
                    streamed,
                    initial,
                }) = self.blocks.remove(&index)
                {
                    if let (false, Some(initial)) = (streamed, initial) {
                        out.push(ModelEvent::ToolCallDelta {
                            id: id.clone(),
                            delta: initial,
                        });
                    }
                    out.push(ModelEvent::ToolCallEnd { id });
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(finish_reason(reason));
                }
            }
            "message_stop" => {
                out.push(ModelEvent::Finish(
                    self.stop_reason.unwrap_or(FinishReason::Other),
                ));
                return Ok(Step::Done(out));
            }
            "error" => {
                let kind = data["error"]["type"].as_str().unwrap_or("unknown_error");
                let message = data["error"]["message"].as_str().unwrap_or_default();
                return Err(error(format!("Anthropic stream error {kind}: {message}")));
            }
            other => {
                tracing::debug!(event = other, "ignoring an unknown Anthropic stream event");
            }
        }
        Ok(Step::Continue(out))
    }
}

fn index_of(data: &Value) -> Result<u64, ProviderError> {
    data["index"]
        .as_u64()
        .ok_or_else(|| error("Anthropic sent a content block event without an index"))
}

/// Turns the SSE events of a Messages stream into model events. The stream ends after
/// [`ModelEvent::Finish`] or after the first error; events after either are not read.
pub fn decode(
    events: impl Stream<Item = Result<SseEvent, ProviderError>> + Send + 'static,
) -> TurnStream {
    http::decode_with::<Decoder>(events)
}

impl Decode for Decoder {
    fn feed(&mut self, event: &SseEvent) -> Result<Step, ProviderError> {
        self.step(event)
    }
}

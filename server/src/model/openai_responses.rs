//! The OpenAI Responses API (`POST {base}/responses`, `stream: true`) as a [`ModelProvider`].
//!
//! The stream is a series of named server-sent events whose JSON carries a `type`. Function
//! calls are output items: `response.output_item.added` opens one (keyed by its item `id`,
//! while the id the model refers to in the next turn is its `call_id`),
//! `response.function_call_arguments.delta` carries argument text by `item_id`, and
//! `response.function_call_arguments.done` / `response.output_item.done` close it. Text comes
//! as `response.output_text.delta`. Other items (reasoning, tool search, …) are ignored. The
//! turn ends with `response.completed`, `response.incomplete`, `response.failed` or `error`.

use std::collections::HashMap;

use futures::Stream;
use serde_json::{json, Value};

use super::{
    http::{self, Decode, Endpoint, HttpSettings, SseEvent, Step},
    FinishReason, ModelEvent, ModelMessage, ModelProvider, ModelRequest, ProviderError, TurnStream,
};

/// The OpenAI Responses API adapter.
#[derive(Debug, Clone)]
pub struct OpenAiResponses {
    endpoint: Endpoint,
}

impl OpenAiResponses {
    /// An adapter for `base_url` (like `https://api.openai.com/v1`); requests go to
    /// `{base_url}/responses`, with `Authorization: Bearer <key>` when a key is set.
    pub fn new(
        base_url: impl Into<String>,
        api_key: Option<String>,
        model: impl Into<String>,
        settings: HttpSettings,
    ) -> Result<Self, ProviderError> {
        Ok(Self {
            endpoint: Endpoint::new(base_url, api_key, model, settings)?,
        })
    }

    /// The JSON body of one streamed request.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let mut input = Vec::new();
        for message in &request.messages {
            match message {
                ModelMessage::User { text } => input.push(json!({
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                })),
                ModelMessage::Assistant { text, calls } => {
                    if !text.is_empty() {
                        input.push(json!({
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": text}],
                        }));
                    }
                    for call in calls {
                        input.push(json!({
                            "type": "function_call",
                            "call_id": call.id,
                            "name": call.name,
                            "arguments": call.arguments,
                        }));
                    }
                }
                // The API has no error flag on outputs; the content itself says `"ok":false`.
                ModelMessage::ToolResult {
                    call_id, content, ..
                } => input.push(json!({
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": content,
                })),
            }
        }
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                })
            })
            .collect();
        json!({
            "model": self.endpoint.model,
            "stream": true,
            "store": false,
            "instructions": request.system,
            "input": input,
            "tools": tools,
        })
    }
}

impl ModelProvider for OpenAiResponses {
    fn name(&self) -> &'static str {
        "openai-responses"
    }

    fn stream_turn(&self, request: ModelRequest) -> TurnStream {
        self.endpoint
            .stream::<Decoder>("/responses", self.request_body(&request))
    }
}

/// One function call being streamed.
#[derive(Debug, Default)]
struct Call {
    /// The id the model refers to the call by (`call_id`).
    call_id: String,
    /// `arguments` carried by `output_item.added`, used only when no delta follows.
    initial: String,
    /// The argument text emitted so far.
    emitted: String,
    /// Whether any delta arrived.
    streamed: bool,
    /// Whether `ToolCallEnd` went out.
    ended: bool,
}

/// The state of one streamed turn.
#[derive(Debug, Default)]
struct Decoder {
    /// Open and closed function calls by item id.
    calls: HashMap<String, Call>,
    /// Item ids in the order they were added.
    order: Vec<String>,
}

fn error(message: impl Into<String>) -> ProviderError {
    ProviderError {
        message: message.into(),
    }
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// The message of an `error` event or of a failed response's `error` object.
fn failure_message(prefix: &str, error: &Value) -> String {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message");
    match error.get("code").and_then(Value::as_str) {
        Some(code) => format!("{prefix} ({code}): {message}"),
        None => format!("{prefix}: {message}"),
    }
}

impl Decoder {
    fn feed_event(&mut self, event: &SseEvent) -> Result<Step, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(Step::Continue(Vec::new()));
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            error(format!(
                "the provider sent an event that is not JSON ({e}): {}",
                data.chars().take(200).collect::<String>()
            ))
        })?;
        // The payload's `type` is authoritative; the SSE event name is the fallback.
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&event.event);
        let mut out = Vec::new();
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                let delta = text(&value["delta"]);
                if !delta.is_empty() {
                    out.push(ModelEvent::TextDelta(delta.to_owned()));
                }
            }
            "response.output_item.added" => {
                let item = &value["item"];
                if text(&item["type"]) == "function_call" {
                    self.open(item, &mut out)?;
                }
            }
            "response.function_call_arguments.delta" => {
                let item_id = text(&value["item_id"]);
                let call = self.calls.get_mut(item_id).ok_or_else(|| {
                    error(format!("argument text for an unknown call item {item_id}"))
                })?;
                let delta = text(&value["delta"]);
                if call.ended {
                    return Err(error(format!(
                        "argument text after the end of call {}",
                        call.call_id
                    )));
                }
                call.streamed = true;
                if !delta.is_empty() {
                    call.emitted.push_str(delta);
                    out.push(ModelEvent::ToolCallDelta {
                        id: call.call_id.clone(),
                        delta: delta.to_owned(),
                    });
                }
            }
            "response.function_call_arguments.done" => {
                let item_id = text(&value["item_id"]).to_owned();
                let arguments = value.get("arguments").and_then(Value::as_str);
                self.close(&item_id, arguments, &mut out)?;
            }
            "response.output_item.done" => {
                let item = &value["item"];
                if text(&item["type"]) == "function_call" {
                    let item_id = text(&item["id"]).to_owned();
                    if !self.calls.contains_key(&item_id) {
                        // A call that was never announced: open it now.
                        self.open(item, &mut out)?;
                    }
                    let arguments = item.get("arguments").and_then(Value::as_str);
                    self.close(&item_id, arguments, &mut out)?;
                }
            }
            "response.completed" => {
                self.close_all(&mut out)?;
                let reason = if self.calls.is_empty() {
                    FinishReason::Stop
                } else {
                    FinishReason::ToolCalls
                };
                out.push(ModelEvent::Finish(reason));
                return Ok(Step::Done(out));
            }
            "response.incomplete" => {
                self.close_all(&mut out)?;
                let why = &value["response"]["incomplete_details"]["reason"];
                let reason = match why.as_str() {
                    None | Some("max_output_tokens") => FinishReason::Length,
                    Some(_) => FinishReason::Other,
                };
                out.push(ModelEvent::Finish(reason));
                return Ok(Step::Done(out));
            }
            "response.failed" => {
                return Err(error(failure_message(
                    "the response failed",
                    &value["response"]["error"],
                )));
            }
            "error" => {
                // Documented as top-level `code`/`message`; some servers nest an `error` object.
                let detail = value
                    .get("error")
                    .filter(|e| e.is_object())
                    .unwrap_or(&value);
                return Err(error(failure_message(
                    "the provider reported an error",
                    detail,
                )));
            }
            _ => {}
        }
        Ok(Step::Continue(out))
    }

    /// A function call item begins.
    fn open(&mut self, item: &Value, out: &mut Vec<ModelEvent>) -> Result<(), ProviderError> {
        let item_id = text(&item["id"]).to_owned();
        let call_id = text(&item["call_id"]).to_owned();
        let name = text(&item["name"]).to_owned();
        if call_id.is_empty() || name.is_empty() {
            return Err(error(format!(
                "a function call item without a call id or name (item {item_id})"
            )));
        }
        if self.calls.contains_key(&item_id) {
            return Err(error(format!(
                "function call item {item_id} announced twice"
            )));
        }
        out.push(ModelEvent::ToolCallStart {
            id: call_id.clone(),
            name,
        });
        self.calls.insert(
            item_id.clone(),
            Call {
                call_id,
                initial: text(&item["arguments"]).to_owned(),
                ..Call::default()
            },
        );
        self.order.push(item_id);
        Ok(())
    }

    /// A function call item is complete; `arguments` is the full text if the event carries it.
    fn close(
        &mut self,
        item_id: &str,
        arguments: Option<&str>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ProviderError> {
        let call = self
            .calls
            .get_mut(item_id)
            .ok_or_else(|| error(format!("the end of an unknown call item {item_id}")))?;
        if call.ended {
            return Ok(());
        }
        let full = match arguments {
            Some(full) if !full.is_empty() => full,
            _ if call.streamed => "",
            _ => call.initial.as_str(),
        };
        // Emit whatever the deltas did not carry (all of it when no delta came).
        if let Some(rest) = full.strip_prefix(call.emitted.as_str()) {
            if !rest.is_empty() {
                out.push(ModelEvent::ToolCallDelta {
                    id: call.call_id.clone(),
                    delta: rest.to_owned(),
                });
                call.emitted.push_str(rest);
            }
        } else if !full.is_empty() {
            return Err(error(format!(
                "the final arguments of call {} disagree with the streamed ones",
                call.call_id
            )));
        }
        call.ended = true;
        out.push(ModelEvent::ToolCallEnd {
            id: call.call_id.clone(),
        });
        Ok(())
    }

    /// Closes the calls still open when the response finishes.
    fn close_all(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), ProviderError> {
        for item_id in self.order.clone() {
            self.close(&item_id, None, out)?;
        }
        Ok(())
    }
}

/// Turns the server-sent events of a Responses stream into model events. The stream ends
/// after `Finish` or the first error; running out of events before a terminal event is an
/// error.
pub fn decode(
    events: impl Stream<Item = Result<SseEvent, ProviderError>> + Send + 'static,
) -> TurnStream {
    http::decode_with::<Decoder>(events)
}

impl Decode for Decoder {
    fn feed(&mut self, event: &SseEvent) -> Result<Step, ProviderError> {
        self.feed_event(event)
    }
}

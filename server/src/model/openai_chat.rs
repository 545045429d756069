//! The OpenAI Chat Completions streaming adapter (`POST {base}/chat/completions` with
//! `"stream": true`), spoken by OpenAI and by most compatible servers: Ollama, vLLM,
//! llama.cpp server, LM Studio, OpenRouter, Groq, DeepSeek, Mistral, xAI.
//!
//! Tool calls stream as `choices[0].delta.tool_calls[]` pieces keyed by `index`: the id and
//! name usually come only on the first piece of a call (later pieces may repeat them as
//! `""`), the argument text comes in pieces of any size. Reasoning deltas
//! (`reasoning_content`, `reasoning`) and usage-only chunks are ignored. A stream that
//! ends without a `finish_reason` and without `[DONE]` is an error, so a half-received
//! call is never run.

use futures::Stream;
use serde_json::{json, Map, Value};

use super::{
    http::{self, Decode, Endpoint, HttpSettings, SseEvent, Step},
    FinishReason, ModelEvent, ModelMessage, ModelProvider, ModelRequest, ProviderError, TurnStream,
};

/// A model behind an OpenAI-compatible Chat Completions endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiChat {
    endpoint: Endpoint,
}

impl OpenAiChat {
    /// `base_url` like `https://api.openai.com/v1` or `http://localhost:11434/v1`; requests
    /// go to `{base_url}/chat/completions`. An empty key counts as no key.
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

    /// Asks the server which models it serves (`GET {base_url}/models`) and takes the first:
    /// a local Ollama or vLLM server then needs no `DATBAN_MODEL`.
    pub async fn discover_model(&self) -> Result<String, ProviderError> {
        let endpoint = &self.endpoint;
        let url = endpoint.url("/models");
        let failed = |why: String| ProviderError {
            message: format!("cannot list the models at {url} ({why}); set DATBAN_MODEL"),
        };
        let response = http::send(
            || endpoint.authorize(endpoint.client.get(&url)),
            &endpoint.settings,
        )
        .await
        .map_err(|e| failed(endpoint.redact(e).message))?;
        let body: Value = response.json().await.map_err(|e| failed(e.to_string()))?;
        body["data"]
            .as_array()
            .and_then(|models| models.iter().find_map(|m| m["id"].as_str()))
            .map(str::to_owned)
            .ok_or_else(|| failed("the list is empty".to_owned()))
    }

    /// Sets the model (after [`OpenAiChat::discover_model`]).
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.endpoint.model = model.into();
        self
    }

    /// The endpoint requests go to.
    pub fn url(&self) -> String {
        self.endpoint.url("/chat/completions")
    }

    /// The JSON body of a streamed request for one turn.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !request.system.is_empty() {
            messages.push(json!({"role": "system", "content": request.system}));
        }
        for message in &request.messages {
            messages.push(match message {
                ModelMessage::User { text } => json!({"role": "user", "content": text}),
                ModelMessage::Assistant { text, calls } => {
                    let mut entry = Map::new();
                    entry.insert("role".into(), json!("assistant"));
                    let content = if !text.is_empty() {
                        json!(text)
                    } else if calls.is_empty() {
                        // Some servers reject an assistant message with neither.
                        json!("")
                    } else {
                        Value::Null
                    };
                    entry.insert("content".into(), content);
                    if !calls.is_empty() {
                        let calls: Vec<Value> = calls
                            .iter()
                            .map(|call| {
                                json!({
                                    "id": call.id,
                                    "type": "function",
                                    "function": {"name": call.name, "arguments": call.arguments},
                                })
                            })
                            .collect();
                        entry.insert("tool_calls".into(), Value::Array(calls));
                    }
                    Value::Object(entry)
                }
                // The content already says `"ok":false` for a failed call.
                ModelMessage::ToolResult {
                    call_id, content, ..
                } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
            });
        }
        let mut body = json!({
            "model": self.endpoint.model,
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": messages,
        });
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": tool.parameters,
                        },
                    })
                })
                .collect();
            body["tools"] = Value::Array(tools);
            body["tool_choice"] = json!("auto");
        }
        body
    }
}

impl ModelProvider for OpenAiChat {
    fn name(&self) -> &'static str {
        "openai-chat"
    }

    fn stream_turn(&self, request: ModelRequest) -> TurnStream {
        self.endpoint
            .stream::<Decoder>("/chat/completions", self.request_body(&request))
    }
}

/// One call being assembled from its pieces.
#[derive(Debug, Default)]
struct PendingCall {
    /// The provider's `index` (or our own count when a server leaves it out).
    index: u64,
    id: String,
    name: String,
    /// Whether `ToolCallStart` went out.
    started: bool,
    /// Argument pieces that came before the id and name.
    buffered: Vec<String>,
}

impl PendingCall {
    /// Announces the call, then the argument pieces held back until its id and name came.
    fn start(&mut self, out: &mut Vec<ModelEvent>) {
        self.started = true;
        out.push(ModelEvent::ToolCallStart {
            id: self.id.clone(),
            name: self.name.clone(),
        });
        for delta in std::mem::take(&mut self.buffered) {
            out.push(ModelEvent::ToolCallDelta {
                id: self.id.clone(),
                delta,
            });
        }
    }
}

/// The decoder's state over one response.
#[derive(Debug, Default)]
struct Decoder {
    calls: Vec<PendingCall>,
}

fn error(message: impl Into<String>) -> ProviderError {
    ProviderError {
        message: message.into(),
    }
}

/// A short prefix of a text, for log messages.
fn prefix(text: &str) -> String {
    let mut out: String = text.chars().take(200).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

fn non_empty_str(value: &Value) -> Option<&str> {
    value.as_str().filter(|s| !s.is_empty())
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" | "end_turn" => FinishReason::Stop,
        "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
        "length" | "max_tokens" => FinishReason::Length,
        _ => FinishReason::Other,
    }
}

/// The message of an error object in the stream (`{"error": {...}}` or `{"error": "…"}`).
fn error_message(error: &Value) -> String {
    let text = match error {
        Value::String(text) => text.clone(),
        Value::Object(fields) => {
            let message = fields
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| error.to_string());
            match fields
                .get("code")
                .or_else(|| fields.get("type"))
                .filter(|c| !c.is_null())
            {
                Some(Value::String(code)) => format!("{message} ({code})"),
                Some(code) => format!("{message} ({code})"),
                None => message,
            }
        }
        other => other.to_string(),
    };
    format!("provider reported an error: {}", prefix(&text))
}

impl Decoder {
    /// The call with this index, created when new.
    fn call(&mut self, index: u64) -> &mut PendingCall {
        let position = match self.calls.iter().position(|c| c.index == index) {
            Some(position) => position,
            None => {
                self.calls.push(PendingCall {
                    index,
                    ..PendingCall::default()
                });
                self.calls.len() - 1
            }
        };
        &mut self.calls[position]
    }

    /// The index a piece without `index` belongs to (some servers leave it out).
    fn implied_index(&self, piece: &Value) -> u64 {
        let next = self.calls.iter().map(|c| c.index + 1).max().unwrap_or(0);
        if let Some(id) = non_empty_str(&piece["id"]) {
            return self
                .calls
                .iter()
                .find(|c| c.id == id)
                .map(|c| c.index)
                .unwrap_or(next);
        }
        self.calls.last().map(|c| c.index).unwrap_or(0)
    }

    fn tool_call_piece(&mut self, piece: &Value, out: &mut Vec<ModelEvent>) {
        let index = piece["index"]
            .as_u64()
            .unwrap_or_else(|| self.implied_index(piece));
        let call = self.call(index);
        // Id and name: the first non-empty value wins; later ones (often "") are ignored.
        if call.id.is_empty() {
            if let Some(id) = non_empty_str(&piece["id"]) {
                call.id = id.to_owned();
            }
        }
        let function = &piece["function"];
        if call.name.is_empty() {
            if let Some(name) = non_empty_str(&function["name"]) {
                call.name = name.to_owned();
            }
        }
        let arguments = match &function["arguments"] {
            Value::String(text) => text.clone(),
            Value::Null => String::new(),
            // A few servers send the arguments as a JSON object rather than text.
            other => other.to_string(),
        };
        if !call.started && !call.id.is_empty() && !call.name.is_empty() {
            call.start(out);
        }
        if arguments.is_empty() {
            return;
        }
        if call.started {
            out.push(ModelEvent::ToolCallDelta {
                id: call.id.clone(),
                delta: arguments,
            });
        } else {
            call.buffered.push(arguments);
        }
    }

    /// Ends every call: starts the ones still waiting for an id (with one of ours) or a
    /// name (left empty: the loop answers it as an unknown tool), then `ToolCallEnd`s.
    fn end_calls(&mut self, out: &mut Vec<ModelEvent>) {
        for call in &mut self.calls {
            if !call.started {
                if call.id.is_empty() {
                    call.id = format!("call_{}", call.index);
                }
                call.start(out);
            }
        }
        for call in &self.calls {
            out.push(ModelEvent::ToolCallEnd {
                id: call.id.clone(),
            });
        }
    }

    fn finish_events(&mut self, reason: FinishReason) -> Vec<ModelEvent> {
        let mut out = Vec::new();
        self.end_calls(&mut out);
        out.push(ModelEvent::Finish(reason));
        out
    }

    /// Handles one SSE event.
    fn event(&mut self, event: &SseEvent) -> Result<Step, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Step::Continue(Vec::new()));
        }
        if data == "[DONE]" {
            // No finish_reason came, but the server says the turn is complete.
            return Ok(Step::Done(self.finish_events(FinishReason::Stop)));
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            error(format!(
                "provider sent malformed JSON ({e}): {}",
                prefix(data)
            ))
        })?;
        if let Some(found) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(error(error_message(found)));
        }
        if event.event == "error" {
            return Err(error(error_message(&chunk)));
        }
        let mut out = Vec::new();
        let mut reason = None;
        let choices = chunk["choices"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        // One completion per request: the choice with index 0 (or without an index).
        let choice = choices
            .iter()
            .find(|c| c["index"].as_u64().unwrap_or(0) == 0);
        if let Some(choice) = choice {
            let delta = &choice["delta"];
            if let Some(text) = non_empty_str(&delta["content"]) {
                out.push(ModelEvent::TextDelta(text.to_owned()));
            }
            if let Some(pieces) = delta["tool_calls"].as_array() {
                for piece in pieces {
                    self.tool_call_piece(piece, &mut out);
                }
            }
            reason = non_empty_str(&choice["finish_reason"]).map(finish_reason);
        }
        match reason {
            Some(reason) => {
                out.extend(self.finish_events(reason));
                Ok(Step::Done(out))
            }
            None => Ok(Step::Continue(out)),
        }
    }
}

/// Turns the server-sent events of one Chat Completions response into model events. The
/// stream ends after `Finish` or after the first error.
pub fn decode(
    events: impl Stream<Item = Result<SseEvent, ProviderError>> + Send + 'static,
) -> TurnStream {
    http::decode_with::<Decoder>(events)
}

impl Decode for Decoder {
    fn feed(&mut self, event: &SseEvent) -> Result<Step, ProviderError> {
        self.event(event)
    }
}

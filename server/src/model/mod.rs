//! The model side of the loop: what we send a model and what it streams back.
//!
//! A provider only *proposes*: text and tool calls (id, name, argument text). It never
//! runs anything; the agent loop validates and executes.

pub mod anthropic;
pub mod http;
pub mod offline;
pub mod openai_chat;
pub mod openai_responses;

use std::{pin::Pin, sync::Arc};

use futures::Stream;
use serde_json::{json, Value};
use shared::{
    message::CallOutcome,
    tools::{ErrorCode, ToolError},
};

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// Prompt-style description.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: Value,
}

/// One call the model proposed in an earlier turn, as it goes back into the history.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedCall {
    /// The provider's call id.
    pub id: String,
    /// The tool name the model used.
    pub name: String,
    /// The argument text as the model sent it (or the validated input re-serialised).
    pub arguments: String,
}

/// The conversation as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelMessage {
    /// What the person wrote.
    User {
        /// The text.
        text: String,
    },
    /// One earlier model turn: its text and the calls it proposed.
    Assistant {
        /// The text (may be empty).
        text: String,
        /// The calls (may be empty).
        calls: Vec<ProposedCall>,
    },
    /// The result of one call, matched by id.
    ToolResult {
        /// The call id.
        call_id: String,
        /// The tool name.
        name: String,
        /// JSON text: `{"ok":true,…}` or `{"ok":false,"error":{code,message,retryable}}`.
        content: String,
        /// Whether the call failed (providers mark such results).
        is_error: bool,
    },
}

/// One request for a model turn.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// The system prompt.
    pub system: String,
    /// The history, oldest first.
    pub messages: Vec<ModelMessage>,
    /// Tools the model may call (shared: every step of a conversation offers the same
    /// ones, and their schemas are large to copy).
    pub tools: std::sync::Arc<[ToolSpec]>,
}

/// Why a model ended its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// It answered.
    Stop,
    /// It wants tool results.
    ToolCalls,
    /// It ran out of output tokens.
    Length,
    /// Anything else the provider reported.
    Other,
}

/// One piece of a streamed model turn.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// More answer text.
    TextDelta(String),
    /// A tool call begins.
    ToolCallStart {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// More argument text for a call.
    ToolCallDelta {
        /// Call id.
        id: String,
        /// The new text.
        delta: String,
    },
    /// A call's arguments are complete.
    ToolCallEnd {
        /// Call id.
        id: String,
    },
    /// The turn is over.
    Finish(FinishReason),
}

/// Why a turn could not be streamed. The message is for the log; users see a short text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    /// Details for the server log (never shown to the person or the model).
    pub message: String,
}

/// A streamed model turn.
pub type TurnStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, ProviderError>> + Send>>;

/// Something that can play the model's part.
pub trait ModelProvider: Send + Sync + 'static {
    /// Starts one turn. The stream ends after [`ModelEvent::Finish`] or an error.
    fn stream_turn(&self, request: ModelRequest) -> TurnStream;

    /// The provider's kind, as the log and the metrics name it.
    fn name(&self) -> &'static str {
        "custom"
    }
}

/// The provider shared by all requests.
pub type SharedProvider = Arc<dyn ModelProvider>;

/// The content of a tool result as the model reads it.
pub fn result_content(outcome: &CallOutcome) -> Option<(String, bool)> {
    let (value, is_error) = match outcome {
        CallOutcome::Incomplete | CallOutcome::Pending => return None,
        CallOutcome::Output(output) => {
            let mut content = json!({"ok": true});
            if let (Some(object), Some(fields)) = (content.as_object_mut(), output.as_object()) {
                object.extend(fields.clone());
            }
            (content, false)
        }
        CallOutcome::Error(error) => (json!({"ok": false, "error": error}), true),
        CallOutcome::Denied => {
            let error = ToolError::new(
                ErrorCode::Declined,
                "The user declined this call, so nothing was done. Ask what they would like to change.",
            );
            (json!({"ok": false, "error": error}), true)
        }
    };
    Some((value.to_string(), is_error))
}

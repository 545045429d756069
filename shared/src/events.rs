//! Agent events and the reducer that folds them into a [`Message`].
//!
//! An event serialises to exactly one chunk of the AI SDK's UI Message Stream v1
//! (`{"type":"text-delta","id":…,"delta":…}`), with our extra fields beside the standard
//! ones. The server applies each event to the message it persists; the browser applies the
//! same events to the message it renders, so both always agree.

use serde::{Deserialize, Serialize};
use serde_json::Value;

// The decision is the message's vocabulary (a part records the one it got); the event
// that carries it is named here as well, where clients of the stream look for it.
pub use crate::message::Decision;
use crate::{
    message::{Message, MessageMetadata, MessagePart, RunStatus, ToolPart},
    preview::ApprovalPreview,
    tools::ToolError,
};

/// The `x-vercel-ai-ui-message-stream` header value of streams made of these events.
pub const UI_MESSAGE_STREAM_VERSION: &str = "v1";

/// One step of an agent run, as streamed to the browser.
// In the browser `Deserialize` is the hand-written [`event_from_value`], for the reason
// given at `MessagePart`: the derived impl buffers the tagged event and compiles a second
// deserializer for everything in it. The server keeps the derived impl.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum AgentEvent {
    /// A new assistant message begins (or a paused one resumes).
    Start {
        /// The assistant message's id.
        message_id: String,
        /// Our metadata (conversation id).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_metadata: Option<MessageMetadata>,
        /// The run goes on with a message that existed before it (after a decision): its
        /// events alone do not make the whole message, so a client that asks for the
        /// reply from its start is given the stored message first.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        resumed: bool,
    },
    /// The model starts a turn.
    StartStep,
    /// The model's turn and its tool calls are done.
    FinishStep,
    /// A text block begins.
    TextStart {
        /// Block id.
        id: String,
    },
    /// More text.
    TextDelta {
        /// Block id.
        id: String,
        /// The new text.
        delta: String,
    },
    /// A text block ends.
    TextEnd {
        /// Block id.
        id: String,
    },
    /// The model starts proposing a call.
    ToolInputStart {
        /// Call id.
        tool_call_id: String,
        /// The name the model used.
        tool_name: String,
    },
    /// More argument text.
    ToolInputDelta {
        /// Call id.
        tool_call_id: String,
        /// The new argument text.
        input_text_delta: String,
    },
    /// Arguments are complete and valid.
    ToolInputAvailable {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// The validated input.
        input: Value,
    },
    /// Arguments are complete but invalid, or the tool is unknown: nothing runs.
    ToolInputError {
        /// Call id.
        tool_call_id: String,
        /// The name the model used.
        tool_name: String,
        /// The arguments as received (a string when they were not JSON).
        input: Value,
        /// Short explanation, as also given to the model.
        error_text: String,
        /// The structured error.
        error: ToolError,
    },
    /// The call needs the person's decision; the run pauses.
    ToolApprovalRequest {
        /// Id to answer with (the call id).
        approval_id: String,
        /// Call id.
        tool_call_id: String,
        /// What the call would do, as the server found it; sent again with fresh facts
        /// when they changed before the decision.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        preview: Option<ApprovalPreview>,
    },
    /// The person decided. A transient data chunk (`data-tool-approval-response`), not the
    /// `tool-approval-response` chunk of AI SDK 7: AI SDK 6 clients refuse a whole stream
    /// that holds a chunk type they do not know, and both pass data chunks through.
    #[serde(rename = "data-tool-approval-response")]
    ToolApprovalResponse {
        /// The decision.
        data: Decision,
        /// Always `true`: the decision changes the call's part, it is no part of its own.
        transient: Transient,
    },
    /// The tool returned.
    ToolOutputAvailable {
        /// Call id.
        tool_call_id: String,
        /// Its result.
        output: Value,
    },
    /// The tool failed.
    ToolOutputError {
        /// Call id.
        tool_call_id: String,
        /// Short explanation.
        error_text: String,
        /// The structured error.
        error: ToolError,
    },
    /// The person declined the call.
    ToolOutputDenied {
        /// Call id.
        tool_call_id: String,
    },
    /// The run stopped or paused.
    Finish {
        /// The run's status in the AI SDK's words (one of those AI SDK 6 accepts).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish_reason: Option<FinishReason>,
        /// Carries the run's status.
        message_metadata: MessageMetadata,
    },
    /// A failure of the run itself (not of one tool); a short message only.
    Error {
        /// What the person sees.
        error_text: String,
    },
}

/// The `transient: true` of a data chunk: AI SDK clients hand it to `onData` and add no
/// part for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Transient;

impl Serialize for Transient {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(true)
    }
}

impl<'de> Deserialize<'de> for Transient {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if bool::deserialize(deserializer)? {
            Ok(Transient)
        } else {
            Err(serde::de::Error::custom(
                "a decision chunk is always transient",
            ))
        }
    }
}

/// Why a reply's stream ended, in the AI SDK's `finishReason` values that AI SDK 6 and 7
/// both accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "kebab-case")]
pub enum FinishReason {
    /// The model finished its answer.
    Stop,
    /// A bound on the reply was reached.
    Length,
    /// The reply waits for tool results (here: the person's decision).
    ToolCalls,
    /// The reply failed.
    Error,
    /// Anything else (stopped by the person).
    Other,
}

crate::by_hand::unit_enum_by_hand!(finish_reason_from_value, FinishReason { Stop = "stop", Length = "length", ToolCalls = "tool-calls", Error = "error", Other = "other" });

impl From<RunStatus> for FinishReason {
    fn from(status: RunStatus) -> Self {
        match status {
            RunStatus::Completed => FinishReason::Stop,
            RunStatus::AwaitingApproval => FinishReason::ToolCalls,
            RunStatus::StepLimit => FinishReason::Length,
            RunStatus::TooManyToolErrors | RunStatus::Error => FinishReason::Error,
            RunStatus::Stopped | RunStatus::Interrupted => FinishReason::Other,
        }
    }
}

impl AgentEvent {
    /// The end of a run with `status`, its finish reason derived from it.
    pub fn finish(status: RunStatus, conversation_id: Option<String>) -> Self {
        AgentEvent::Finish {
            finish_reason: Some(status.into()),
            message_metadata: MessageMetadata {
                status: Some(status),
                conversation_id,
            },
        }
    }

    /// The person's decision on call `tool_call_id` (whose approval id is the call id).
    pub fn decided(tool_call_id: &str, approved: bool, input: Option<Value>) -> Self {
        AgentEvent::ToolApprovalResponse {
            data: Decision {
                tool_call_id: tool_call_id.to_owned(),
                approval_id: tool_call_id.to_owned(),
                approved,
                input,
                reason: None,
                earlier: false,
            },
            transient: Transient,
        }
    }
}

crate::by_hand::deserialize_by_hand_in_the_browser!(AgentEvent, event_from_value);

/// Reads an event in the wire format the derived `Deserialize` of [`AgentEvent`] accepts.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn event_from_value(value: Value) -> Result<AgentEvent, String> {
    use crate::by_hand::{take, take_opt, take_str, typed};

    let Value::Object(mut fields) = value else {
        return Err("an event must be an object".to_owned());
    };
    let f = &mut fields;
    Ok(match take_str(f, "type")?.as_str() {
        "start" => AgentEvent::Start {
            message_id: take_str(f, "messageId")?,
            message_metadata: take_opt(f, "messageMetadata")?,
            resumed: take_opt(f, "resumed")?.unwrap_or(false),
        },
        "start-step" => AgentEvent::StartStep,
        "finish-step" => AgentEvent::FinishStep,
        "text-start" => AgentEvent::TextStart {
            id: take_str(f, "id")?,
        },
        "text-delta" => AgentEvent::TextDelta {
            id: take_str(f, "id")?,
            delta: take_str(f, "delta")?,
        },
        "text-end" => AgentEvent::TextEnd {
            id: take_str(f, "id")?,
        },
        "tool-input-start" => AgentEvent::ToolInputStart {
            tool_call_id: take_str(f, "toolCallId")?,
            tool_name: take_str(f, "toolName")?,
        },
        "tool-input-delta" => AgentEvent::ToolInputDelta {
            tool_call_id: take_str(f, "toolCallId")?,
            input_text_delta: take_str(f, "inputTextDelta")?,
        },
        "tool-input-available" => AgentEvent::ToolInputAvailable {
            tool_call_id: take_str(f, "toolCallId")?,
            tool_name: take_str(f, "toolName")?,
            input: take(f, "input")?,
        },
        "tool-input-error" => AgentEvent::ToolInputError {
            tool_call_id: take_str(f, "toolCallId")?,
            tool_name: take_str(f, "toolName")?,
            input: take(f, "input")?,
            error_text: take_str(f, "errorText")?,
            error: typed(take(f, "error")?)?,
        },
        "tool-approval-request" => AgentEvent::ToolApprovalRequest {
            approval_id: take_str(f, "approvalId")?,
            tool_call_id: take_str(f, "toolCallId")?,
            preview: take_opt(f, "preview")?,
        },
        "data-tool-approval-response" => AgentEvent::ToolApprovalResponse {
            data: typed(take(f, "data")?)?,
            transient: typed(take(f, "transient")?)?,
        },
        "tool-output-available" => AgentEvent::ToolOutputAvailable {
            tool_call_id: take_str(f, "toolCallId")?,
            output: take(f, "output")?,
        },
        "tool-output-error" => AgentEvent::ToolOutputError {
            tool_call_id: take_str(f, "toolCallId")?,
            error_text: take_str(f, "errorText")?,
            error: typed(take(f, "error")?)?,
        },
        "tool-output-denied" => AgentEvent::ToolOutputDenied {
            tool_call_id: take_str(f, "toolCallId")?,
        },
        "finish" => AgentEvent::Finish {
            finish_reason: take_opt(f, "finishReason")?,
            message_metadata: typed(take(f, "messageMetadata")?)?,
        },
        "error" => AgentEvent::Error {
            error_text: take_str(f, "errorText")?,
        },
        other => return Err(format!("unknown variant `{other}`")),
    })
}

/// Whether [`Message::apply`] used an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The message changed (or the event was a marker that needs no change).
    Yes,
    /// The event did not fit the message (unknown id, a transition not allowed from the
    /// current state); the message is unchanged.
    Ignored,
}

impl From<bool> for Applied {
    fn from(changed: bool) -> Self {
        if changed {
            Applied::Yes
        } else {
            Applied::Ignored
        }
    }
}

/// Folds `event` into `message` and returns it; see [`Message::apply`].
pub fn apply(mut message: Message, event: &AgentEvent) -> Message {
    message.apply(event);
    message
}

impl Message {
    /// Folds one event into this message. Total: any event in any order leaves a
    /// well-formed message; events that do not fit are ignored.
    pub fn apply(&mut self, event: &AgentEvent) -> Applied {
        match event {
            AgentEvent::Start { message_id, .. } => {
                if self.id.is_empty() {
                    message_id.clone_into(&mut self.id);
                }
                // A resumed run is not finished any more.
                self.status = None;
                Applied::Yes
            }
            AgentEvent::StartStep => {
                self.parts.push(MessagePart::StepStart);
                Applied::Yes
            }
            AgentEvent::FinishStep | AgentEvent::TextEnd { .. } => Applied::Yes,
            AgentEvent::TextStart { id } => {
                if !self.has_text(id) {
                    self.parts.push(MessagePart::Text {
                        id: id.clone(),
                        text: String::new(),
                    });
                }
                Applied::Yes
            }
            AgentEvent::TextDelta { id, delta } => {
                if !self.has_text(id) {
                    self.parts.push(MessagePart::Text {
                        id: id.clone(),
                        text: String::new(),
                    });
                }
                for part in self.parts.iter_mut().rev() {
                    if let MessagePart::Text { id: part_id, text } = part {
                        if part_id == id {
                            text.push_str(delta);
                            break;
                        }
                    }
                }
                Applied::Yes
            }
            AgentEvent::ToolInputStart {
                tool_call_id,
                tool_name,
            } => {
                if self.tool_part(tool_call_id).is_some() {
                    return Applied::Ignored;
                }
                self.parts.push(MessagePart::Tool(Box::new(ToolPart::start(
                    tool_call_id,
                    tool_name,
                ))));
                Applied::Yes
            }
            AgentEvent::ToolInputDelta {
                tool_call_id,
                input_text_delta,
            } => self.with_call(tool_call_id, |call| call.stream_input(input_text_delta)),
            AgentEvent::ToolInputAvailable {
                tool_call_id,
                tool_name,
                input,
            } => {
                self.ensure_tool_part(tool_call_id, tool_name);
                self.with_call(tool_call_id, |call| call.input_available(input.clone()))
            }
            AgentEvent::ToolInputError {
                tool_call_id,
                tool_name,
                input,
                error,
                ..
            } => {
                self.ensure_tool_part(tool_call_id, tool_name);
                self.with_call(tool_call_id, |call| {
                    call.output_error(Some(input.clone()), error.clone())
                })
            }
            AgentEvent::ToolApprovalRequest {
                approval_id,
                tool_call_id,
                preview,
            } => self.with_call(tool_call_id, |call| {
                call.approval_requested(approval_id, preview.clone())
            }),
            AgentEvent::ToolApprovalResponse { data, .. } => {
                self.with_call(&data.tool_call_id, |call| call.approval_responded(data))
            }
            AgentEvent::ToolOutputAvailable {
                tool_call_id,
                output,
            } => self.with_call(tool_call_id, |call| call.output_available(output.clone())),
            AgentEvent::ToolOutputError {
                tool_call_id,
                error,
                ..
            } => self.with_call(tool_call_id, |call| call.output_error(None, error.clone())),
            AgentEvent::ToolOutputDenied { tool_call_id } => {
                self.with_call(tool_call_id, |call| call.output_denied())
            }
            AgentEvent::Finish {
                message_metadata, ..
            } => {
                self.status = message_metadata.status.or(Some(RunStatus::Completed));
                Applied::Yes
            }
            AgentEvent::Error { .. } => {
                self.status = Some(RunStatus::Error);
                Applied::Yes
            }
        }
    }

    fn has_text(&self, id: &str) -> bool {
        self.parts
            .iter()
            .any(|part| matches!(part, MessagePart::Text { id: part_id, .. } if part_id == id))
    }

    fn ensure_tool_part(&mut self, call_id: &str, tool_name: &str) {
        if self.tool_part(call_id).is_none() {
            self.parts.push(MessagePart::Tool(Box::new(ToolPart::start(
                call_id, tool_name,
            ))));
        }
    }

    fn with_call(
        &mut self,
        call_id: &str,
        transition: impl FnOnce(&mut dyn crate::message::ToolCallOps) -> bool,
    ) -> Applied {
        match self.tool_part_mut(call_id) {
            Some(part) => transition(part.ops_mut()).into(),
            None => Applied::Ignored,
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod proptests;

// Natively `Deserialize` is the derived impl, so these compare the browser's reader with it.
// (Only the object form: the derived impl also reads `["start-step"]`, which no server sends.)
#[cfg(all(test, not(target_arch = "wasm32")))]
mod reader_tests;

//! Agent events and the reducer that folds them into a [`Message`].
//!
//! An event serialises to exactly one chunk of the AI SDK's UI Message Stream v1
//! (`{"type":"text-delta","id":…,"delta":…}`), with our extra fields beside the standard
//! ones. The server applies each event to the message it persists; the browser applies the
//! same events to the message it renders, so both always agree.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// A person's decision on a call that asked for one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// Call id.
    pub tool_call_id: String,
    /// The approval the decision answers (the AI SDK's `approval.id`).
    pub approval_id: String,
    /// The decision.
    pub approved: bool,
    /// The input as approved, when the person edited it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// Why, when the person's client said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A decision made in a reply this one replaces (a regenerated reply), restated so
    /// its carried-out call ends as it did: the person was not asked again, so the part
    /// records no new decision.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub earlier: bool,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

#[cfg(target_arch = "wasm32")]
impl<'de> Deserialize<'de> for AgentEvent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        event_from_value(value).map_err(serde::de::Error::custom)
    }
}

/// Reads an event in the wire format the derived `Deserialize` of [`AgentEvent`] accepts.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn event_from_value(value: Value) -> Result<AgentEvent, String> {
    use crate::message::{take, take_opt, take_str, typed};

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
mod tests {
    use super::*;
    use crate::{
        message::{Role, ToolState},
        tools::ErrorCode,
    };
    use serde_json::json;

    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn run(events: &[AgentEvent]) -> Message {
        events
            .iter()
            .fold(Message::assistant("m1"), |message, event| {
                apply(message, event)
            })
    }

    fn input_start(id: &str, name: &str) -> AgentEvent {
        AgentEvent::ToolInputStart {
            tool_call_id: id.into(),
            tool_name: name.into(),
        }
    }

    fn input_delta(id: &str, delta: &str) -> AgentEvent {
        AgentEvent::ToolInputDelta {
            tool_call_id: id.into(),
            input_text_delta: delta.into(),
        }
    }

    fn booking_input() -> Value {
        json!({"restaurantId": "hn-1", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"})
    }

    #[test]
    fn events_serialise_as_ui_message_stream_chunks() {
        let event = input_delta("call_1", "{\"ci");
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": "{\"ci"})
        );
        let finish = AgentEvent::finish(RunStatus::StepLimit, None);
        assert_eq!(
            serde_json::to_value(&finish).unwrap(),
            json!({"type": "finish", "finishReason": "length", "messageMetadata": {"status": "step-limit"}})
        );
        assert_eq!(
            serde_json::to_value(AgentEvent::StartStep).unwrap(),
            json!({"type": "start-step"})
        );
        let back: AgentEvent =
            serde_json::from_value(json!({"type": "text-delta", "id": "t1", "delta": "Chào"}))
                .unwrap();
        assert_eq!(
            back,
            AgentEvent::TextDelta {
                id: "t1".into(),
                delta: "Chào".into()
            }
        );
    }

    #[test]
    fn text_deltas_accumulate_per_block() {
        let message = run(&[
            AgentEvent::TextStart { id: "a".into() },
            AgentEvent::TextDelta {
                id: "a".into(),
                delta: "Xin ".into(),
            },
            AgentEvent::TextDelta {
                id: "a".into(),
                delta: "chào".into(),
            },
            AgentEvent::TextEnd { id: "a".into() },
        ]);
        assert_eq!(message.role, Some(Role::Assistant));
        assert_eq!(message.text(), "Xin chào");
        assert_eq!(message.parts.len(), 1);
    }

    #[test]
    fn streaming_input_shows_partial_value_then_typed_input_and_output() {
        let mut message = run(&[
            input_start("c1", "getWeather"),
            input_delta("c1", "{\"city\":\"Hà"),
        ]);
        let part = message.tool_part("c1").unwrap();
        assert_eq!(part.state_name(), "input-streaming");
        match part {
            ToolPart::GetWeather(call) => match &call.state {
                ToolState::InputStreaming(input) => {
                    assert_eq!(input.raw(), "{\"city\":\"Hà");
                    assert_eq!(input.partial(), &json!({"city": "Hà"}));
                }
                other => panic!("unexpected state {other:?}"),
            },
            other => panic!("unexpected part {other:?}"),
        }
        message.apply(&input_delta("c1", " Nội\"}"));
        message.apply(&AgentEvent::ToolInputAvailable {
            tool_call_id: "c1".into(),
            tool_name: "getWeather".into(),
            input: json!({"city": "Hà Nội", "days": 1}),
        });
        assert_eq!(
            message.tool_part("c1").unwrap().state_name(),
            "input-available"
        );
        message.apply(&AgentEvent::ToolOutputAvailable {
            tool_call_id: "c1".into(),
            output: json!({"city": "Hà Nội", "days": [{"date": "2026-11-29", "condition": "rain",
                "tempMinC": 18, "tempMaxC": 24, "precipitationChance": 80}]}),
        });
        match message.tool_part("c1").unwrap() {
            ToolPart::GetWeather(call) => match &call.state {
                ToolState::OutputAvailable { input, output } => {
                    assert_eq!(input.city, "Hà Nội");
                    assert_eq!(output.days[0].temp_max_c, 24);
                }
                other => panic!("unexpected state {other:?}"),
            },
            other => panic!("unexpected part {other:?}"),
        }
    }

    #[test]
    fn approval_flow_reaches_output_only_after_approval() {
        let mut message = run(&[
            input_start("b1", "createBooking"),
            AgentEvent::ToolInputAvailable {
                tool_call_id: "b1".into(),
                tool_name: "createBooking".into(),
                input: booking_input(),
            },
            AgentEvent::ToolApprovalRequest {
                approval_id: "b1".into(),
                tool_call_id: "b1".into(),
                preview: None,
            },
        ]);
        assert_eq!(
            message.tool_part("b1").unwrap().state_name(),
            "approval-requested"
        );
        // An output before the decision does not fit: no receipt without approval.
        let early = message.apply(&AgentEvent::ToolOutputAvailable {
            tool_call_id: "b1".into(),
            output: json!({}),
        });
        assert_eq!(early, Applied::Ignored);
        assert_eq!(
            message.tool_part("b1").unwrap().state_name(),
            "approval-requested"
        );

        let mut edited = booking_input();
        edited["partySize"] = json!(6);
        message.apply(&AgentEvent::decided("b1", true, Some(edited)));
        message.apply(&AgentEvent::ToolOutputAvailable {
            tool_call_id: "b1".into(),
            output: json!({"bookingId": "BK-1", "status": "confirmed", "restaurantId": "hn-1",
                "restaurantName": "Chả Cá Thăng Long", "partySize": 6,
                "startsAt": "2026-12-24T19:00:00+07:00"}),
        });
        match message.tool_part("b1").unwrap() {
            ToolPart::CreateBooking(call) => match &call.state {
                ToolState::OutputAvailable { input, output } => {
                    assert_eq!(input.party_size, 6);
                    assert_eq!(output.booking_id, "BK-1");
                }
                other => panic!("unexpected state {other:?}"),
            },
            other => panic!("unexpected part {other:?}"),
        }
    }

    #[test]
    fn a_booking_result_without_approval_is_never_shown() {
        let mut message = run(&[
            input_start("b1", "createBooking"),
            AgentEvent::ToolInputAvailable {
                tool_call_id: "b1".into(),
                tool_name: "createBooking".into(),
                input: booking_input(),
            },
        ]);
        let skipped = message.apply(&AgentEvent::ToolOutputAvailable {
            tool_call_id: "b1".into(),
            output: json!({"bookingId": "BK-1", "status": "confirmed", "restaurantId": "hn-1",
                "restaurantName": "X", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"}),
        });
        assert_eq!(skipped, Applied::Ignored);
        assert_eq!(
            message.tool_part("b1").unwrap().state_name(),
            "input-available"
        );
    }

    #[test]
    fn decline_ends_denied_and_never_output() {
        let mut message = run(&[
            input_start("b1", "createBooking"),
            AgentEvent::ToolInputAvailable {
                tool_call_id: "b1".into(),
                tool_name: "createBooking".into(),
                input: booking_input(),
            },
            AgentEvent::ToolApprovalRequest {
                approval_id: "b1".into(),
                tool_call_id: "b1".into(),
                preview: None,
            },
            AgentEvent::ToolOutputDenied {
                tool_call_id: "b1".into(),
            },
        ]);
        assert_eq!(
            message.tool_part("b1").unwrap().state_name(),
            "output-denied"
        );
        let late = message.apply(&AgentEvent::ToolOutputAvailable {
            tool_call_id: "b1".into(),
            output: json!({}),
        });
        assert_eq!(late, Applied::Ignored);
    }

    #[test]
    fn invalid_input_and_unknown_tools_end_in_errors() {
        let error = ToolError::new(
            ErrorCode::ValidationError,
            "partySize: required field is missing",
        );
        let message = run(&[
            input_start("b1", "createBooking"),
            input_delta("b1", "{\"restaurantId\":\"hn-1\"}"),
            AgentEvent::ToolInputError {
                tool_call_id: "b1".into(),
                tool_name: "createBooking".into(),
                input: json!({"restaurantId": "hn-1"}),
                error_text: error.message.clone(),
                error: error.clone(),
            },
            input_start("x1", "launchRocket"),
            AgentEvent::ToolInputError {
                tool_call_id: "x1".into(),
                tool_name: "launchRocket".into(),
                input: json!({}),
                error_text: "unknown".into(),
                error: ToolError::new(ErrorCode::UnknownTool, "unknown"),
            },
        ]);
        assert_eq!(
            message.tool_part("b1").unwrap().state_name(),
            "output-error"
        );
        let unknown = message.tool_part("x1").unwrap();
        assert_eq!(unknown.tool_name(), "launchRocket");
        assert_eq!(unknown.state_name(), "output-error");
        assert!(matches!(unknown, ToolPart::Unknown(_)));
    }

    #[test]
    fn events_for_unknown_ids_are_ignored() {
        let mut message = Message::assistant("m");
        assert_eq!(message.apply(&input_delta("nope", "{")), Applied::Ignored);
        assert_eq!(
            message.apply(&AgentEvent::ToolOutputDenied {
                tool_call_id: "nope".into()
            }),
            Applied::Ignored
        );
        assert!(message.parts.is_empty());
    }

    #[test]
    fn messages_round_trip_through_json_mid_stream() {
        let message = run(&[
            AgentEvent::TextDelta {
                id: "t".into(),
                delta: "Để tôi xem".into(),
            },
            input_start("c1", "getWeather"),
            input_delta("c1", "{\"city\":\"Hu"),
            AgentEvent::finish(RunStatus::Error, None),
        ]);
        let json = serde_json::to_value(&message).unwrap();
        assert_eq!(json["parts"][1]["type"], "tool");
        assert_eq!(json["parts"][1]["tool"], "getWeather");
        assert_eq!(json["parts"][1]["state"], "input-streaming");
        assert_eq!(json["parts"][1]["partialInput"], json!({"city": "Hu"}));
        let mut back: Message = serde_json::from_value(json).unwrap();
        assert_eq!(back, message);
        // Loaded mid-stream, the parser carries on from the stored text.
        back.apply(&input_delta("c1", "ế\"}"));
        match back.tool_part("c1").unwrap() {
            ToolPart::GetWeather(call) => match &call.state {
                ToolState::InputStreaming(input) => {
                    assert_eq!(input.partial(), &json!({"city": "Huế"}))
                }
                other => panic!("unexpected state {other:?}"),
            },
            other => panic!("unexpected part {other:?}"),
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod proptests {
    use std::collections::{HashMap, HashSet};

    use super::*;
    use crate::{
        message::{ToolPart, ToolState},
        tools::{ErrorCode, ToolName},
    };
    use proptest::prelude::*;
    use serde_json::json;

    /// Few ids, so that events often hit a call or a text block that exists, and as often
    /// one that does not exist yet or any more (events out of order).
    const IDS: [&str; 3] = ["a", "b", "c"];
    /// Every tool, and one that does not exist.
    const TOOLS: [&str; 10] = [
        "getWeather",
        "searchRestaurants",
        "createBooking",
        "listBookings",
        "cancelBooking",
        "suggest_gifts",
        "prepare_checkout",
        "create_checkout_session",
        "shipping_quote",
        "nope",
    ];
    const STATUSES: [Option<RunStatus>; 8] = [
        None,
        Some(RunStatus::Completed),
        Some(RunStatus::AwaitingApproval),
        Some(RunStatus::StepLimit),
        Some(RunStatus::TooManyToolErrors),
        Some(RunStatus::Stopped),
        Some(RunStatus::Error),
        Some(RunStatus::Interrupted),
    ];

    fn id() -> impl Strategy<Value = String> {
        prop::sample::select(&IDS[..]).prop_map(str::to_owned)
    }

    fn tool() -> impl Strategy<Value = String> {
        prop::sample::select(&TOOLS[..]).prop_map(str::to_owned)
    }

    /// Inputs valid for some tools and not for others, and some valid for none.
    fn input() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!({"city": "Huế", "days": 2})),
            Just(json!({"city": "Huế"})),
            Just(
                json!({"restaurantId": "hn-1", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"})
            ),
            Just(json!({"bookingId": "BK-1"})),
            Just(json!({"draft_id": "DR-1", "idempotency_key": "checkout-DR-1"})),
            Just(json!({"gift_id": "g-1"})),
            Just(json!({"weight_kg": 2, "zone": "inner_city"})),
            Just(json!({})),
            Just(json!("not json")),
        ]
    }

    fn output() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!({"city": "Huế", "days": []})),
            Just(json!({"restaurants": []})),
            Just(
                json!({"bookingId": "BK-1", "status": "confirmed", "restaurantId": "hn-1",
                "restaurantName": "X", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"})
            ),
            Just(
                json!({"booking": {"bookingId": "BK-1", "restaurantName": "X", "partySize": 4,
                "startsAt": "2026-12-24T19:00:00+07:00", "status": "cancelled"},
                "alreadyCancelled": false})
            ),
            Just(
                json!({"checkout_id": "CHK-1", "draft_id": "DR-1", "gift_name": "X",
                "total_vnd": 100000, "payment_reference": "DEMO-PAY-1", "fictional": true})
            ),
            Just(json!({"bookings": []})),
            Just(json!(null)),
        ]
    }

    fn tool_error() -> impl Strategy<Value = ToolError> {
        prop_oneof![
            Just(ToolError::new(ErrorCode::ValidationError, "bad")),
            Just(ToolError::new(ErrorCode::NotFound, "gone")),
            Just(ToolError::new(ErrorCode::UpstreamUnavailable, "later")),
            Just(ToolError::new(ErrorCode::Cancelled, "stopped")),
        ]
    }

    /// Every kind of event, with ids drawn from a small set so sequences mix calls and
    /// arrive in any order.
    fn event() -> impl Strategy<Value = AgentEvent> {
        prop_oneof![
            (
                prop::sample::select(&["m", "other", ""][..]),
                prop::sample::select(&STATUSES[..])
            )
                .prop_map(|(message_id, status)| AgentEvent::Start {
                    message_id: message_id.to_owned(),
                    message_metadata: status.map(|status| MessageMetadata {
                        status: Some(status),
                        conversation_id: Some("conv".into()),
                    }),
                    resumed: status.is_some(),
                }),
            Just(AgentEvent::StartStep),
            Just(AgentEvent::FinishStep),
            id().prop_map(|id| AgentEvent::TextStart { id }),
            (id(), "[a-zé{}\":, ]{0,6}")
                .prop_map(|(id, delta)| AgentEvent::TextDelta { id, delta }),
            id().prop_map(|id| AgentEvent::TextEnd { id }),
            (id(), tool()).prop_map(|(id, tool)| AgentEvent::ToolInputStart {
                tool_call_id: id,
                tool_name: tool,
            }),
            (id(), "[a-z{}\":,0-9 ]{0,6}").prop_map(|(id, delta)| AgentEvent::ToolInputDelta {
                tool_call_id: id,
                input_text_delta: delta
            }),
            (id(), tool(), input()).prop_map(|(id, tool, input)| {
                AgentEvent::ToolInputAvailable {
                    tool_call_id: id,
                    tool_name: tool,
                    input,
                }
            }),
            (id(), tool(), input(), tool_error()).prop_map(|(id, tool, input, error)| {
                AgentEvent::ToolInputError {
                    tool_call_id: id,
                    tool_name: tool,
                    input,
                    error_text: error.message.clone(),
                    error,
                }
            }),
            id().prop_map(|id| AgentEvent::ToolApprovalRequest {
                approval_id: id.clone(),
                tool_call_id: id,
                preview: None,
            }),
            (id(), any::<bool>(), prop::option::of(input()))
                .prop_map(|(id, approved, input)| { AgentEvent::decided(&id, approved, input) }),
            (id(), output()).prop_map(|(id, output)| AgentEvent::ToolOutputAvailable {
                tool_call_id: id,
                output
            }),
            (id(), tool_error()).prop_map(|(id, error)| AgentEvent::ToolOutputError {
                tool_call_id: id,
                error_text: error.message.clone(),
                error,
            }),
            id().prop_map(|id| AgentEvent::ToolOutputDenied { tool_call_id: id }),
            prop::sample::select(&STATUSES[..]).prop_map(|status| AgentEvent::Finish {
                finish_reason: status.map(FinishReason::from),
                message_metadata: MessageMetadata {
                    status,
                    conversation_id: None,
                }
            }),
            "[a-z ]{0,8}".prop_map(|error_text| AgentEvent::Error { error_text }),
        ]
    }

    fn tool_states(message: &Message) -> Vec<(String, &'static str)> {
        message
            .parts
            .iter()
            .filter_map(|p| match p {
                MessagePart::Tool(tool) => Some((tool.id().to_owned(), tool.state_name())),
                _ => None,
            })
            .collect()
    }

    /// Whether the part's tool may only run after the person approved the call.
    fn needs_approval(part: &ToolPart) -> bool {
        ToolName::parse(part.tool_name()).is_some_and(|tool| tool.definition().requires_approval)
    }

    /// The JSON fields each state must carry for the page to render it.
    fn required_fields(state: &str) -> &'static [&'static str] {
        match state {
            "input-streaming" => &["rawInput", "partialInput"],
            "input-available" | "approval-requested" | "output-denied" => &["input"],
            "approval-responded" => &["input", "approved"],
            "output-available" => &["input", "output"],
            "output-error" => &["error"],
            _ => &[],
        }
    }

    const STATES: [&str; 7] = [
        "input-streaming",
        "input-available",
        "approval-requested",
        "approval-responded",
        "output-available",
        "output-error",
        "output-denied",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// Any sequence of any events, in any order, leaves a well-formed message:
        /// - one part per call id and per text id, and each text is exactly its deltas;
        /// - every tool part is in one of the seven states, with the data that state needs
        ///   (an unknown tool's part only ever streams or fails);
        /// - final states stay final;
        /// - a call of a tool that needs approval reaches output-available only after the
        ///   person approved that very call, and is denied only after it was asked for;
        /// - the status is what the last start/finish/error said;
        /// - message and events survive a JSON round trip unchanged.
        #[test]
        fn any_event_sequence_leaves_a_well_formed_message(events in prop::collection::vec(event(), 0..48)) {
            let mut message = Message::assistant("m");
            let mut approved: HashSet<String> = HashSet::new();
            let mut asked: HashSet<String> = HashSet::new();
            let mut texts: HashMap<String, String> = HashMap::new();
            let mut status: Option<RunStatus> = None;
            for event in &events {
                let json = serde_json::to_string(event).unwrap();
                let back: AgentEvent = serde_json::from_str(&json).unwrap();
                prop_assert_eq!(&back, event, "event round trip");
                // The browser's reader of events agrees with the derived one.
                let value = serde_json::to_value(event).unwrap();
                prop_assert_eq!(&event_from_value(value), &Ok(event.clone()));

                let before = tool_states(&message);
                let state_of = |id: &str| message.tool_part(id).map(ToolPart::state_name);
                match event {
                    AgentEvent::ToolApprovalRequest { tool_call_id, .. }
                        if state_of(tool_call_id) == Some("input-available") =>
                    {
                        asked.insert(tool_call_id.clone());
                    }
                    AgentEvent::ToolApprovalResponse { data, .. }
                        if data.approved && state_of(&data.tool_call_id) == Some("approval-requested") =>
                    {
                        approved.insert(data.tool_call_id.clone());
                    }
                    AgentEvent::TextStart { id } => {
                        texts.entry(id.clone()).or_default();
                    }
                    AgentEvent::TextDelta { id, delta } => {
                        texts.entry(id.clone()).or_default().push_str(delta);
                    }
                    AgentEvent::Start { .. } => status = None,
                    AgentEvent::Finish { message_metadata, .. } => {
                        status = message_metadata.status.or(Some(RunStatus::Completed));
                    }
                    AgentEvent::Error { .. } => status = Some(RunStatus::Error),
                    _ => {}
                }
                message.apply(event);

                let after = tool_states(&message);
                let ids: HashSet<&String> = after.iter().map(|(id, _)| id).collect();
                prop_assert_eq!(ids.len(), after.len(), "one part per call id");
                for (id, state) in &before {
                    let final_before = matches!(*state, "output-available" | "output-error" | "output-denied");
                    let now = after.iter().find(|(i, _)| i == id).map(|(_, s)| *s);
                    if final_before {
                        prop_assert_eq!(now, Some(*state), "a final state never changes");
                    }
                }
            }

            prop_assert_eq!(&message.id, "m", "the id is never replaced");
            prop_assert_eq!(message.status, status);
            let mut text_ids = HashSet::new();
            for part in &message.parts {
                match part {
                    MessagePart::Text { id, text } => {
                        prop_assert!(text_ids.insert(id.clone()), "two text parts {}", id);
                        prop_assert_eq!(Some(text), texts.get(id), "text is its deltas, once");
                    }
                    MessagePart::Tool(tool) => {
                        let state = tool.state_name();
                        prop_assert!(STATES.contains(&state), "{}", state);
                        if let ToolPart::Unknown(_) = tool.as_ref() {
                            prop_assert!(matches!(state, "input-streaming" | "output-error"));
                        } else {
                            let json = serde_json::to_value(tool.as_ref()).unwrap();
                            prop_assert_eq!(json["state"].as_str(), Some(state));
                            for field in required_fields(state) {
                                prop_assert!(json.get(*field).is_some(), "{} without {}: {}", state, field, json);
                            }
                        }
                        if needs_approval(tool) {
                            let id = tool.id().to_owned();
                            match state {
                                "output-available" => prop_assert!(approved.contains(&id), "result without approval: {}", id),
                                "approval-responded" | "output-denied" => prop_assert!(asked.contains(&id), "decided without a request: {}", id),
                                _ => {}
                            }
                        }
                    }
                    MessagePart::StepStart => {}
                }
            }
            prop_assert_eq!(texts.len(), text_ids.len(), "every text block has its part");
            // The booking receipt in particular: its typed state, not only its name.
            for part in &message.parts {
                if let MessagePart::Tool(tool) = part {
                    if let ToolPart::CreateBooking(call) = tool.as_ref() {
                        if let ToolState::OutputAvailable { .. } = call.state {
                            prop_assert!(approved.contains(&call.id), "receipt without approval");
                        }
                    }
                }
            }
            let json = serde_json::to_string(&message).unwrap();
            let back: Message = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(&back, &message);
            // Told again as events (what a client reconnecting to a resumed reply gets
            // first), the message comes back part for part.
            let rebuilt = crate::replay::replay(&message)
                .iter()
                .fold(Message::assistant(message.id.clone()), apply);
            prop_assert_eq!(rebuilt.parts.len(), message.parts.len(), "replayed");
            for (again, part) in rebuilt.parts.iter().zip(&message.parts) {
                // Exact, but for a call that failed on an input its tool cannot take (only
                // a made-up event order gets there): that one loses its approval record.
                let lost_approval = match (again, part) {
                    (MessagePart::Tool(again), MessagePart::Tool(part)) => {
                        part.state_name() == "output-error"
                            && again.approval().is_none()
                            && again.error() == part.error()
                            && again.input_json() == part.input_json()
                    }
                    _ => false,
                };
                prop_assert!(again == part || lost_approval, "replayed {again:?} as {part:?}");
            }
            // The browser's reader of parts agrees with the derived one the server uses.
            for part in &message.parts {
                let json = serde_json::to_value(part).unwrap();
                prop_assert_eq!(crate::message::part_from_value(json), Ok(part.clone()));
            }
        }
    }
}

// Natively `Deserialize` is the derived impl, so these compare the browser's reader with it.
// (Only the object form: the derived impl also reads `["start-step"]`, which no server sends.)
#[cfg(all(test, not(target_arch = "wasm32")))]
mod reader_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_browsers_reader_of_events_agrees_with_the_derived_one() {
        let cases = [
            json!({"type": "start", "messageId": "m"}),
            json!({"type": "start", "messageId": "m", "messageMetadata": null}),
            json!({"type": "start", "messageId": "m", "messageMetadata": {"conversationId": "c"}}),
            json!({"type": "start"}),
            json!({"type": "finish", "messageMetadata": {"status": "stopped"}}),
            json!({"type": "finish"}),
            json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "getWeather",
                   "input": null}),
            json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "getWeather"}),
            json!({"type": "tool-approval-response", "toolCallId": "c", "approved": true}),
            json!({"type": "data-tool-approval-response", "transient": true,
                   "data": {"toolCallId": "c", "approvalId": "c", "approved": true}}),
            json!({"type": "data-tool-approval-response", "transient": true,
                   "data": {"toolCallId": "c", "approvalId": "c", "approved": true,
                            "input": null, "reason": "ok"}}),
            json!({"type": "data-tool-approval-response", "transient": false,
                   "data": {"toolCallId": "c", "approvalId": "c", "approved": true}}),
            json!({"type": "data-tool-approval-response",
                   "data": {"toolCallId": "c", "approvalId": "c", "approved": "yes"}}),
            json!({"type": "finish", "finishReason": "tool-calls",
                   "messageMetadata": {"status": "awaiting-approval"}}),
            json!({"type": "finish", "finishReason": "unknown", "messageMetadata": {}}),
            json!({"type": "tool-output-error", "toolCallId": "c", "errorText": "x",
                   "error": {"code": "UPSTREAM_TIMEOUT", "message": "x", "retryable": true}}),
            json!({"type": "tool-output-error", "toolCallId": "c", "errorText": "x",
                   "error": {"code": "NO_SUCH_CODE", "message": "x", "retryable": true}}),
            json!({"type": "text-delta", "id": "t", "delta": 3}),
            json!({"type": "reasoning-delta", "id": "t", "delta": "…"}),
            json!({"type": "step-start"}),
            json!({"type": "start-step", "extra": [1, 2]}),
        ];
        for value in cases {
            let derived = serde_json::from_value::<AgentEvent>(value.clone()).ok();
            assert_eq!(event_from_value(value.clone()).ok(), derived, "{value}");
        }
    }
}

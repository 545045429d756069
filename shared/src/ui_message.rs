//! datban's stored messages as the AI SDK's `UIMessage`s: what an AI SDK chat client
//! (`useChat`, `AbstractChat`) builds from our stream, so a client seeded with them after a
//! reload holds exactly what it held before.
//!
//! The stored [`Message`] stays the one source of truth (the page renders it, the model's
//! history is built from it); this is a view of it, computed on each read.

use serde_json::{json, Map, Value};

use crate::message::{Message, MessagePart, Role, RunStatus, ToolPart};

/// `message` as an AI SDK `UIMessage` of the conversation `conversation_id`.
///
/// Assistant messages carry the metadata our stream sends (`conversationId`, and `status`
/// once the run ended); a person's message keeps the id their client gave it.
pub fn to_ui(message: &Message, conversation_id: &str) -> Value {
    let assistant = message.role != Some(Role::User);
    let parts: Vec<Value> = message
        .parts
        .iter()
        .map(|part| match part {
            MessagePart::Text { text, .. } if assistant => {
                json!({"type": "text", "text": text, "state": "done"})
            }
            MessagePart::Text { text, .. } => json!({"type": "text", "text": text}),
            MessagePart::StepStart => json!({"type": "step-start"}),
            MessagePart::Tool(tool) => tool_part(tool),
        })
        .collect();
    let mut ui = Map::new();
    ui.insert(
        "id".into(),
        Value::String(
            message
                .client_id
                .clone()
                .unwrap_or_else(|| message.id.clone()),
        ),
    );
    ui.insert(
        "role".into(),
        Value::String(if assistant { "assistant" } else { "user" }.into()),
    );
    if assistant {
        let mut metadata = Map::new();
        metadata.insert("conversationId".into(), conversation_id.into());
        if let Some(status) = message.status {
            metadata.insert("status".into(), status_value(status));
        }
        ui.insert("metadata".into(), Value::Object(metadata));
    }
    ui.insert("parts".into(), Value::Array(parts));
    Value::Object(ui)
}

fn status_value(status: RunStatus) -> Value {
    serde_json::to_value(status).unwrap_or(Value::Null)
}

/// A tool part as `tool-<name>` with the fields the AI SDK client sets for its state.
fn tool_part(tool: &ToolPart) -> Value {
    let mut part = Map::new();
    part.insert(
        "type".into(),
        Value::String(format!("tool-{}", tool.tool_name())),
    );
    part.insert("toolCallId".into(), Value::String(tool.id().to_owned()));
    part.insert("state".into(), Value::String(tool.state_name().to_owned()));
    if let Some(input) = tool.ui_input() {
        part.insert("input".into(), input);
    }
    if let Some(output) = tool.output_json() {
        part.insert("output".into(), output);
    }
    if let Some(error) = tool.error() {
        part.insert("errorText".into(), Value::String(error.message.clone()));
    }
    if let Some(approval) = tool.approval() {
        if let Ok(approval) = serde_json::to_value(approval) {
            part.insert("approval".into(), approval);
        }
    }
    Value::Object(part)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::events::AgentEvent;
    use crate::tools::{ErrorCode, ToolError};

    fn assistant(events: &[AgentEvent]) -> Message {
        let mut message = Message::assistant("msg_1");
        for event in events {
            message.apply(event);
        }
        message
    }

    fn booking_until_asked() -> Vec<AgentEvent> {
        vec![
            AgentEvent::StartStep,
            AgentEvent::ToolInputStart {
                tool_call_id: "b1".into(),
                tool_name: "createBooking".into(),
            },
            AgentEvent::ToolInputAvailable {
                tool_call_id: "b1".into(),
                tool_name: "createBooking".into(),
                input: json!({"restaurantId": "hn-1", "partySize": 2,
                    "startsAt": "2026-12-24T19:00:00+07:00"}),
            },
            AgentEvent::ToolApprovalRequest {
                approval_id: "b1".into(),
                tool_call_id: "b1".into(),
                preview: None,
            },
        ]
    }

    #[test]
    fn a_person_keeps_the_id_their_client_gave_and_has_no_metadata() {
        let mut message = Message::user("msg_ours", "Xin chào");
        message.client_id = Some("k3JdX9".into());
        assert_eq!(
            to_ui(&message, "conv_1"),
            json!({"id": "k3JdX9", "role": "user", "parts": [{"type": "text", "text": "Xin chào"}]})
        );
    }

    #[test]
    fn an_approved_booking_shows_its_approval_with_the_output() {
        let mut events = booking_until_asked();
        events.push(AgentEvent::decided("b1", true, None));
        events.push(AgentEvent::ToolOutputAvailable {
            tool_call_id: "b1".into(),
            output: json!({"bookingId": "BK-0000000A", "status": "confirmed",
                "restaurantId": "hn-1", "restaurantName": "Chả Cá Thăng Long", "partySize": 2,
                "startsAt": "2026-12-24T19:00:00+07:00"}),
        });
        events.push(AgentEvent::finish(RunStatus::Completed, None));
        let ui = to_ui(&assistant(&events), "conv_1");
        assert_eq!(
            ui["metadata"],
            json!({"conversationId": "conv_1", "status": "completed"})
        );
        assert_eq!(ui["parts"][0], json!({"type": "step-start"}));
        let part = &ui["parts"][1];
        assert_eq!(part["type"], "tool-createBooking");
        assert_eq!(part["state"], "output-available");
        assert_eq!(part["approval"], json!({"id": "b1", "approved": true}));
        assert_eq!(part["output"]["bookingId"], "BK-0000000A");
        assert_eq!(part["input"]["partySize"], 2);
        assert!(part.get("errorText").is_none());
    }

    #[test]
    fn a_confirmation_closed_unanswered_keeps_an_undecided_approval() {
        let mut events = booking_until_asked();
        events.push(AgentEvent::ToolOutputError {
            tool_call_id: "b1".into(),
            error_text: "moved on".into(),
            error: ToolError::new(ErrorCode::MovedOn, "moved on"),
        });
        let ui = to_ui(&assistant(&events), "conv_1");
        let part = &ui["parts"][1];
        assert_eq!(part["state"], "output-error");
        assert_eq!(part["errorText"], "moved on");
        assert_eq!(part["approval"], json!({"id": "b1"}));
        assert!(part.get("output").is_none());
    }

    #[test]
    fn a_declined_call_with_a_reason_and_an_invalid_one_without_approval() {
        let mut events = booking_until_asked();
        let mut decline = AgentEvent::decided("b1", false, None);
        if let AgentEvent::ToolApprovalResponse { data, .. } = &mut decline {
            data.reason = Some("wrong day".into());
        }
        events.push(decline);
        events.push(AgentEvent::ToolOutputDenied {
            tool_call_id: "b1".into(),
        });
        events.push(AgentEvent::ToolInputError {
            tool_call_id: "w1".into(),
            tool_name: "getWeather".into(),
            input: json!({"city": 4}),
            error_text: "Invalid arguments".into(),
            error: ToolError::new(ErrorCode::ValidationError, "Invalid arguments"),
        });
        let ui = to_ui(&assistant(&events), "conv_1");
        assert_eq!(ui["parts"][1]["state"], "output-denied");
        assert_eq!(
            ui["parts"][1]["approval"],
            json!({"id": "b1", "approved": false, "reason": "wrong day"})
        );
        let invalid = &ui["parts"][2];
        assert_eq!(invalid["type"], "tool-getWeather");
        assert_eq!(invalid["state"], "output-error");
        assert_eq!(invalid["input"], json!({"city": 4}));
        assert!(invalid.get("approval").is_none());
    }

    #[test]
    fn text_is_done_and_a_reply_being_written_has_no_status() {
        let message = assistant(&[
            AgentEvent::StartStep,
            AgentEvent::TextStart { id: "t0".into() },
            AgentEvent::TextDelta {
                id: "t0".into(),
                delta: "Chào".into(),
            },
            AgentEvent::TextEnd { id: "t0".into() },
        ]);
        let ui = to_ui(&message, "conv_9");
        assert_eq!(
            ui,
            json!({"id": "msg_1", "role": "assistant", "metadata": {"conversationId": "conv_9"},
                "parts": [{"type": "step-start"}, {"type": "text", "text": "Chào", "state": "done"}]})
        );
    }
}

//! `proptests` of `events`.

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
/// Every tool of the registry, and one that does not exist.
fn tool_names() -> Vec<&'static str> {
    crate::tools::ToolName::ALL
        .iter()
        .map(|tool| tool.as_str())
        .chain(["nope"])
        .collect()
}
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
    prop::sample::select(tool_names()).prop_map(str::to_owned)
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
        (id(), "[a-zé{}\":, ]{0,6}").prop_map(|(id, delta)| AgentEvent::TextDelta { id, delta }),
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

/// A JSON failure as a failed case that says at which step it happened.
fn failed(step: &'static str) -> impl Fn(serde_json::Error) -> TestCaseError {
    move |error| TestCaseError::fail(format!("{step}: {error}"))
}

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
            let json = serde_json::to_string(event).map_err(failed("event to JSON"))?;
            let back: AgentEvent = serde_json::from_str(&json).map_err(failed("event from JSON"))?;
            prop_assert_eq!(&back, event, "event round trip");
            // The browser's reader of events agrees with the derived one.
            let value = serde_json::to_value(event).map_err(failed("event to a JSON value"))?;
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
                        let json = serde_json::to_value(tool.as_ref()).map_err(failed("tool part to JSON"))?;
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
        let json = serde_json::to_string(&message).map_err(failed("message to JSON"))?;
        let back: Message = serde_json::from_str(&json).map_err(failed("message from JSON"))?;
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
            let json = serde_json::to_value(part).map_err(failed("part to JSON"))?;
            prop_assert_eq!(crate::message::part_from_value(json), Ok(part.clone()));
        }
    }
}

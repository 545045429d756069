//! `tests` of `events`.

use super::*;
use crate::{
    message::{Role, ToolState},
    tools::ErrorCode,
};
use serde_json::json;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// What a test returns: a missing part or a failed (de)serialisation is an error with
/// its message, not a panic at an `unwrap`.
type TestResult = Result<(), Box<dyn std::error::Error>>;

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

/// The events that leave booking `b1` waiting for a person's decision.
fn booking_awaiting_approval() -> Vec<AgentEvent> {
    vec![
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
    ]
}

#[test]
fn events_serialise_as_ui_message_stream_chunks() -> TestResult {
    let event = input_delta("call_1", "{\"ci");
    assert_eq!(
        serde_json::to_value(&event)?,
        json!({"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": "{\"ci"})
    );
    let finish = AgentEvent::finish(RunStatus::StepLimit, None);
    assert_eq!(
        serde_json::to_value(&finish)?,
        json!({"type": "finish", "finishReason": "length", "messageMetadata": {"status": "step-limit"}})
    );
    assert_eq!(
        serde_json::to_value(AgentEvent::StartStep)?,
        json!({"type": "start-step"})
    );
    let back: AgentEvent =
        serde_json::from_value(json!({"type": "text-delta", "id": "t1", "delta": "Chào"}))?;
    assert_eq!(
        back,
        AgentEvent::TextDelta {
            id: "t1".into(),
            delta: "Chào".into()
        }
    );
    Ok(())
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
fn streaming_input_shows_partial_value_then_typed_input_and_output() -> TestResult {
    let mut message = run(&[
        input_start("c1", "getWeather"),
        input_delta("c1", "{\"city\":\"Hà"),
    ]);
    let part = message.tool_part("c1").ok_or("no tool part c1")?;
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
        message
            .tool_part("c1")
            .ok_or("no tool part c1")?
            .state_name(),
        "input-available"
    );
    message.apply(&AgentEvent::ToolOutputAvailable {
        tool_call_id: "c1".into(),
        output: json!({"city": "Hà Nội", "days": [{"date": "2026-11-29", "condition": "rain",
            "tempMinC": 18, "tempMaxC": 24, "precipitationChance": 80}]}),
    });
    match message.tool_part("c1").ok_or("no tool part c1")? {
        ToolPart::GetWeather(call) => match call.state.clone().read() {
            ToolState::OutputAvailable { input, output } => {
                assert_eq!(input.city, "Hà Nội");
                assert_eq!(output.days[0].temp_max_c, 24);
            }
            other => panic!("unexpected state {other:?}"),
        },
        other => panic!("unexpected part {other:?}"),
    }
    Ok(())
}

#[test]
fn approval_flow_reaches_output_only_after_approval() -> TestResult {
    let mut message = run(&booking_awaiting_approval());
    assert_eq!(
        message
            .tool_part("b1")
            .ok_or("no tool part b1")?
            .state_name(),
        "approval-requested"
    );
    // An output before the decision does not fit: no receipt without approval.
    let early = message.apply(&AgentEvent::ToolOutputAvailable {
        tool_call_id: "b1".into(),
        output: json!({}),
    });
    assert_eq!(early, Applied::Ignored);
    assert_eq!(
        message
            .tool_part("b1")
            .ok_or("no tool part b1")?
            .state_name(),
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
    match message.tool_part("b1").ok_or("no tool part b1")? {
        ToolPart::CreateBooking(call) => match call.state.clone().read() {
            ToolState::OutputAvailable { input, output } => {
                assert_eq!(input.party_size, 6);
                assert_eq!(output.booking_id, "BK-1");
            }
            other => panic!("unexpected state {other:?}"),
        },
        other => panic!("unexpected part {other:?}"),
    }
    Ok(())
}

#[test]
fn a_booking_result_without_approval_is_never_shown() -> TestResult {
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
        message
            .tool_part("b1")
            .ok_or("no tool part b1")?
            .state_name(),
        "input-available"
    );
    Ok(())
}

#[test]
fn decline_ends_denied_and_never_output() -> TestResult {
    let mut message = run(&[
        booking_awaiting_approval(),
        vec![AgentEvent::ToolOutputDenied {
            tool_call_id: "b1".into(),
        }],
    ]
    .concat());
    assert_eq!(
        message
            .tool_part("b1")
            .ok_or("no tool part b1")?
            .state_name(),
        "output-denied"
    );
    let late = message.apply(&AgentEvent::ToolOutputAvailable {
        tool_call_id: "b1".into(),
        output: json!({}),
    });
    assert_eq!(late, Applied::Ignored);
    Ok(())
}

#[test]
fn invalid_input_and_unknown_tools_end_in_errors() -> TestResult {
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
        message
            .tool_part("b1")
            .ok_or("no tool part b1")?
            .state_name(),
        "output-error"
    );
    let unknown = message.tool_part("x1").ok_or("no tool part x1")?;
    assert_eq!(unknown.tool_name(), "launchRocket");
    assert_eq!(unknown.state_name(), "output-error");
    assert!(matches!(unknown, ToolPart::Unknown(_)));
    Ok(())
}

/// The state a view of `part` shows (its input and output read, `ToolState::read`).
fn shown(part: &ToolPart) -> (&'static str, Option<ErrorCode>) {
    fn of<I, O>(state: ToolState<I, O>) -> (&'static str, Option<ErrorCode>) {
        let code = match &state {
            ToolState::OutputError { error, .. } => Some(error.code),
            _ => None,
        };
        (state.name(), code)
    }
    match part {
        ToolPart::CreateBooking(call) => of(call.state.clone().read()),
        ToolPart::GetWeather(call) => of(call.state.clone().read()),
        other => panic!("unexpected part {other:?}"),
    }
}

#[test]
fn a_booking_result_nobody_can_read_shows_as_a_failure_never_a_receipt() -> TestResult {
    let mut message = run(&booking_awaiting_approval());
    message.apply(&AgentEvent::decided("b1", true, None));
    // No booking id: not a booking anyone could find at the restaurant.
    message.apply(&AgentEvent::ToolOutputAvailable {
        tool_call_id: "b1".into(),
        output: json!({"status": "confirmed", "restaurantId": "hn-1", "partySize": 4}),
    });
    let part = message.tool_part("b1").ok_or("no tool part b1")?;
    assert_eq!(
        shown(part),
        ("output-error", Some(ErrorCode::ExecutionFailed))
    );
    Ok(())
}

#[test]
fn arguments_the_tool_does_not_take_show_as_invalid() -> TestResult {
    let message = run(&[
        input_start("c1", "getWeather"),
        AgentEvent::ToolInputAvailable {
            tool_call_id: "c1".into(),
            tool_name: "getWeather".into(),
            input: json!({"city": 42}),
        },
    ]);
    let part = message.tool_part("c1").ok_or("no tool part c1")?;
    assert_eq!(
        shown(part),
        ("output-error", Some(ErrorCode::ValidationError))
    );
    Ok(())
}

/// In the browser a part keeps its tool's JSON until a view reads it, so a stored message
/// whose result is not the tool's still loads, and its view shows the failure.
#[cfg(target_arch = "wasm32")]
#[test]
fn a_stored_result_nobody_can_read_loads_and_shows_as_a_failure() -> TestResult {
    let stored = json!({"id": "m1", "role": "assistant", "parts": [{
        "type": "tool", "tool": "createBooking", "id": "b1", "state": "output-available",
        "input": booking_input(), "output": {"status": "confirmed"},
    }]});
    let message: Message = serde_json::from_value(stored)?;
    let part = message.tool_part("b1").ok_or("no tool part b1")?;
    assert_eq!(part.state_name(), "output-available");
    assert_eq!(
        shown(part),
        ("output-error", Some(ErrorCode::ExecutionFailed))
    );
    // What is kept is what arrived, given back unchanged.
    assert_eq!(
        serde_json::to_value(&message)?["parts"][0]["output"],
        json!({"status": "confirmed"})
    );
    Ok(())
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
fn messages_round_trip_through_json_mid_stream() -> TestResult {
    let message = run(&[
        AgentEvent::TextDelta {
            id: "t".into(),
            delta: "Để tôi xem".into(),
        },
        input_start("c1", "getWeather"),
        input_delta("c1", "{\"city\":\"Hu"),
        AgentEvent::finish(RunStatus::Error, None),
    ]);
    let json = serde_json::to_value(&message)?;
    assert_eq!(json["parts"][1]["type"], "tool");
    assert_eq!(json["parts"][1]["tool"], "getWeather");
    assert_eq!(json["parts"][1]["state"], "input-streaming");
    assert_eq!(json["parts"][1]["partialInput"], json!({"city": "Hu"}));
    let mut back: Message = serde_json::from_value(json)?;
    assert_eq!(back, message);
    // Loaded mid-stream, the parser carries on from the stored text.
    back.apply(&input_delta("c1", "ế\"}"));
    match back.tool_part("c1").ok_or("no tool part c1")? {
        ToolPart::GetWeather(call) => match &call.state {
            ToolState::InputStreaming(input) => {
                assert_eq!(input.partial(), &json!({"city": "Huế"}))
            }
            other => panic!("unexpected state {other:?}"),
        },
        other => panic!("unexpected part {other:?}"),
    }
    Ok(())
}

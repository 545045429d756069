//! Tests of `message`. Natively `Deserialize` is the derived impl, so these compare the
//! browser's reader with it.

use serde_json::json;

use super::*;

fn both(value: Value) -> (Result<MessagePart, String>, Option<MessagePart>) {
    let derived = serde_json::from_value::<MessagePart>(value.clone()).ok();
    (part_from_value(value), derived)
}

#[test]
fn the_browsers_reader_accepts_what_the_derived_one_does() {
    let accepted = [
        json!({"type": "text", "text": "Chào"}),
        json!({"type": "text", "id": "t1", "text": "Chào", "extra": 1}),
        json!({"type": "step-start"}),
        json!({"type": "tool", "tool": "getWeather", "id": "c1", "state": "input-streaming",
               "rawInput": "{\"city\":\"Hu", "partialInput": {"city": "Hu"}}),
        json!({"type": "tool", "tool": "getWeather", "id": "c1", "state": "input-streaming"}),
        json!({"type": "tool", "tool": "createBooking", "id": "b1", "state": "approval-requested",
               "input": {"restaurantId": "hn-1", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"}}),
        json!({"type": "tool", "tool": "createBooking", "id": "b1", "state": "approval-responded",
               "approved": false,
               "input": {"restaurantId": "hn-1", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"}}),
        json!({"type": "tool", "tool": "createBooking", "id": "b1", "state": "output-denied",
               "input": {"restaurantId": "hn-1", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"}}),
        json!({"type": "tool", "tool": "cancelBooking", "id": "x", "state": "output-error",
               "error": {"code": "NOT_FOUND", "message": "Không có", "retryable": false}}),
        json!({"type": "tool", "tool": "shipping_quote", "id": "s", "state": "output-error",
               "input": null,
               "error": {"code": "VALIDATION_ERROR", "message": "x", "retryable": false}}),
        json!({"type": "tool", "tool": "shipping_quote", "id": "s", "state": "output-error",
               "input": "{not json",
               "error": {"code": "VALIDATION_ERROR", "message": "x", "retryable": false}}),
        json!({"type": "tool", "tool": "unknown", "id": "u", "name": "launchRocket",
               "rawInput": "{}"}),
        json!({"type": "tool", "tool": "unknown", "id": "u", "name": "launchRocket",
               "rawInput": "{}",
               "error": {"code": "UNKNOWN_TOOL", "message": "x", "retryable": false}}),
    ];
    for value in accepted {
        let (ours, derived) = both(value.clone());
        assert!(derived.is_some(), "the derived reader rejects {value}");
        assert_eq!(ours.ok(), derived, "{value}");
    }
}

#[test]
fn the_browsers_reader_rejects_what_the_derived_one_does() {
    let rejected = [
        json!("text"),
        json!({"text": "no type"}),
        json!({"type": "image"}),
        json!({"type": "text"}),
        json!({"type": "tool", "tool": "launchRocket", "id": "c", "state": "input-streaming"}),
        json!({"type": "tool", "tool": "getWeather", "id": "c", "state": "thinking"}),
        json!({"type": "tool", "tool": "getWeather", "state": "input-streaming"}),
        json!({"type": "tool", "tool": "createBooking", "id": "b", "state": "approval-requested"}),
        json!({"type": "tool", "tool": "createBooking", "id": "b", "state": "approval-requested",
               "input": {"restaurantId": "hn-1"}}),
        json!({"type": "tool", "tool": "createBooking", "id": "b1", "state": "approval-responded",
               "input": {"restaurantId": "hn-1", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"}}),
        json!({"type": "tool", "tool": "cancelBooking", "id": "x", "state": "output-error"}),
        json!({"type": "tool", "tool": "unknown", "id": "u", "name": "launchRocket"}),
    ];
    for value in rejected {
        let (ours, derived) = both(value.clone());
        assert_eq!(derived, None, "the derived reader accepts {value}");
        assert!(ours.is_err(), "{value}");
    }
}

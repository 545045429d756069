//! `reader_tests` of `events`.

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

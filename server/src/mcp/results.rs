//! Tool results as MCP hosts, their models and the widget read them.
//!
//! `structuredContent` is the envelope (version [`VERSION`]):
//! - done: `{v, ok:true, tool, status:"done", callId, input, output}`
//! - waiting: `{v, ok:true, tool, status:"approval_required", callId, approvalId, input,
//!   preview, summary, approvalUrl}`, with the approval token only in the result's `_meta`
//!   (`datban/approvalToken`), which hosts give the widget and not the model
//! - declined: `{v, ok:true, tool, status:"declined", callId, input}`
//! - failed (`isError: true`): `{v, ok:false, tool, callId, error:{code, message,
//!   retryable}, input?}`
//!
//! The text content is the same JSON: some hosts give the model only one of the two.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject};
use serde_json::{json, Map, Value};
use shared::{message::ToolPart, tools::ToolError};

/// The envelope's version; the widget checks it.
pub const VERSION: u64 = 1;

/// The `_meta` key of the approval token (the widget's, never the model's).
pub const APPROVAL_TOKEN_KEY: &str = "datban/approvalToken";

/// A pending call's approval as the caller may see it.
pub struct Approval {
    /// The id the widget decides on.
    pub id: String,
    /// The token proving the decision comes from the widget.
    pub token: String,
    /// Where a person whose host shows no widget can decide it on datban's page.
    pub url: Option<String>,
}

fn result(structured: Value, is_error: bool, meta: Option<JsonObject>) -> CallToolResult {
    let text = structured.to_string();
    let mut result = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(structured);
    result.meta = meta.map(MetaObject);
    result
}

/// A failure of the call itself, before or instead of any tool running.
pub fn failure(
    tool: &str,
    call_id: Option<&str>,
    code: &str,
    message: &str,
    retryable: bool,
    meta: Option<JsonObject>,
) -> CallToolResult {
    let mut structured = json!({
        "v": VERSION,
        "ok": false,
        "tool": tool,
        "error": { "code": code, "message": message, "retryable": retryable },
    });
    if let (Some(id), Value::Object(map)) = (call_id, &mut structured) {
        map.insert("callId".into(), Value::String(id.to_owned()));
    }
    result(structured, true, meta)
}

fn tool_error(
    tool: &str,
    call_id: &str,
    error: &ToolError,
    input: Option<Value>,
) -> CallToolResult {
    let mut structured = json!({
        "v": VERSION,
        "ok": false,
        "tool": tool,
        "callId": call_id,
        "error": error,
    });
    if let (Some(input), Value::Object(map)) = (input, &mut structured) {
        map.insert("input".into(), input);
    }
    result(structured, true, None)
}

/// What a message's tool part says, as a tool result: its final state, or the approval it
/// waits for.
pub fn from_part(part: &ToolPart, approval: Option<&Approval>) -> CallToolResult {
    let (tool, call_id) = (part.tool_name().to_owned(), part.id().to_owned());
    let Ok(Value::Object(mut fields)) = serde_json::to_value(part) else {
        return internal(&tool, &call_id);
    };
    let take = |fields: &mut Map<String, Value>, key: &str| fields.remove(key);
    if let ToolPart::Unknown(call) = part {
        let error = call.error.clone().unwrap_or_else(|| {
            ToolError::new(shared::tools::ErrorCode::UnknownTool, "Unknown tool.")
        });
        return tool_error(&call.name, &call_id, &error, None);
    }
    let state = take(&mut fields, "state")
        .and_then(|state| state.as_str().map(str::to_owned))
        .unwrap_or_default();
    let input = take(&mut fields, "input");
    let envelope = |status: &str, input: Option<Value>| {
        let mut map = Map::new();
        map.insert("v".into(), json!(VERSION));
        map.insert("ok".into(), json!(true));
        map.insert("tool".into(), json!(tool));
        map.insert("status".into(), json!(status));
        map.insert("callId".into(), json!(call_id));
        if let Some(input) = input {
            map.insert("input".into(), input);
        }
        map
    };
    match state.as_str() {
        "output-available" => {
            let mut map = envelope("done", input);
            map.insert(
                "output".into(),
                take(&mut fields, "output").unwrap_or(Value::Null),
            );
            result(Value::Object(map), false, None)
        }
        "output-denied" => result(Value::Object(envelope("declined", input)), false, None),
        "output-error" => {
            let error = take(&mut fields, "error")
                .and_then(|error| serde_json::from_value::<ToolError>(error).ok());
            match error {
                Some(error) => tool_error(&tool, &call_id, &error, input),
                None => internal(&tool, &call_id),
            }
        }
        "approval-requested" => {
            let Some(approval) = approval else {
                return internal(&tool, &call_id);
            };
            let mut map = envelope("approval_required", input);
            map.insert("approvalId".into(), json!(approval.id));
            // What the call would do, as the server found it: names, local time, room,
            // prices. Hosts and their models show this rather than the ids of `input`.
            if let Some(preview) = take(&mut fields, "preview") {
                map.insert("preview".into(), preview);
            }
            map.insert(
                "summary".into(),
                json!(format!(
                    "Nothing has happened yet: {tool} waits for the person to confirm or \
                     decline it in the form shown with this result. Do not say it was done. \
                     The result of the decision arrives as another result of this tool."
                )),
            );
            if let Some(url) = &approval.url {
                map.insert("approvalUrl".into(), json!(url));
            }
            let mut meta = JsonObject::new();
            meta.insert(APPROVAL_TOKEN_KEY.into(), json!(approval.token));
            meta.insert("datban/approvalId".into(), json!(approval.id));
            result(Value::Object(map), false, Some(meta))
        }
        // A call always ends in one of the states above once its step is over; anything
        // else means our own bookkeeping went wrong, which the log holds.
        other => {
            tracing::error!(%tool, call = %call_id, state = %other, "a direct call ended in an unexpected state");
            internal(&tool, &call_id)
        }
    }
}

fn internal(tool: &str, call_id: &str) -> CallToolResult {
    failure(
        tool,
        Some(call_id),
        "EXECUTION_FAILED",
        "The tool failed on our side. Tell the user it did not work this time.",
        false,
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The widget's Chromium tests run on these samples; each must be a result this server
    /// could really give, or the widget is tested against a contract that drifted.
    #[test]
    fn the_widgets_samples_are_results_of_our_own_types() {
        let samples: Value = serde_json::from_str(include_str!(
            "../../../end2end/tests/fixtures/widget-samples.json"
        ))
        .expect("samples are JSON");
        let mut checked = 0;
        for (name, sample) in samples.as_object().expect("an object") {
            let Some(body) = sample.get("structuredContent") else {
                continue;
            };
            if body["v"] != json!(VERSION) || body["ok"] != json!(true) {
                continue;
            }
            let state = match body["status"].as_str() {
                Some("done") => "output-available",
                Some("approval_required") => "approval-requested",
                Some("declined") => "output-denied",
                other => panic!("{name}: status {other:?}"),
            };
            let mut part = json!({
                "tool": body["tool"],
                "id": body["callId"],
                "state": state,
                "input": body["input"],
            });
            if state == "output-available" {
                part["output"] = body["output"].clone();
            }
            let part: ToolPart = serde_json::from_value(part)
                .unwrap_or_else(|error| panic!("{name} is not one of our results: {error}"));
            // And back: the envelope we would send for it is the sample's.
            let approval = Approval {
                id: body["callId"].as_str().unwrap_or_default().to_owned(),
                token: "t".into(),
                url: body["approvalUrl"].as_str().map(str::to_owned),
            };
            let ours = from_part(&part, Some(&approval));
            let ours = ours.structured_content.expect("structured");
            for key in ["tool", "status", "callId", "input", "output"] {
                assert_eq!(ours.get(key), body.get(key), "{name}: {key}");
            }
            checked += 1;
        }
        assert!(checked >= 15, "only {checked} samples checked");
    }
}

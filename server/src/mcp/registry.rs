//! The MCP tool list of each assistant, generated from the one tool registry in `shared`:
//! the same names, descriptions (with their risk hints) and input schemas the loop gives
//! models, the result envelope as output schema, annotations from each tool's risk hints,
//! and the widget's `_meta`. Built once; schemas never change while the process runs.

use std::sync::{Arc, OnceLock};

use rmcp::model::{JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::{json, Value};
use shared::tools::{Access, Assistant, ToolName};

use super::widget;

/// The app-only tool the widget calls with the person's decision.
pub const DECIDE_APPROVAL: &str = "decide_approval";

/// What the host may show while a tool runs and once it is done (each ≤ 64 characters),
/// from the tool's definition.
fn statuses(tool: ToolName) -> (&'static str, &'static str) {
    let definition = tool.definition();
    (definition.invoking, definition.invoked)
}

/// The tools of an assistant's MCP server: its loop's allow-list, plus the decision tool
/// when one of them waits for approval.
pub fn tools(assistant: Assistant) -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<(Assistant, Vec<Tool>)>> = OnceLock::new();
    let all = TOOLS.get_or_init(|| {
        Assistant::ALL
            .into_iter()
            .map(|assistant| (assistant, build(assistant)))
            .collect()
    });
    all.iter()
        .find(|(a, _)| *a == assistant)
        .map_or(&[], |(_, tools)| tools.as_slice())
}

fn build(assistant: Assistant) -> Vec<Tool> {
    let mut tools: Vec<Tool> = assistant.tools().into_iter().map(tool).collect();
    if assistant
        .tools()
        .into_iter()
        .any(|tool| tool.definition().requires_approval)
    {
        tools.push(decide_approval());
    }
    tools
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        // Every schema in the registry is an object schema; a test holds it to that.
        other => Arc::new(JsonObject::from_iter([("not".to_owned(), other)])),
    }
}

fn meta(value: Value) -> MetaObject {
    match value {
        Value::Object(map) => MetaObject(map),
        _ => MetaObject(JsonObject::new()),
    }
}

fn security_schemes(access: Access) -> Value {
    match access {
        Access::Public => json!([{ "type": "noauth" }]),
        Access::Personal(scope) => json!([{ "type": "oauth2", "scopes": [scope] }]),
    }
}

fn tool(name: ToolName) -> Tool {
    let definition = name.definition();
    let risk = definition.risk;
    let (invoking, invoked) = statuses(name);
    let annotations = ToolAnnotations::with_title(title(name))
        .read_only(risk.read_only)
        .destructive(risk.destructive)
        .idempotent(risk.idempotent)
        .open_world(risk.open_world);
    Tool::new_with_raw(
        name.as_str(),
        Some(definition.model_description().into()),
        object(name.input_schema()),
    )
    .with_title(title(name))
    .with_raw_output_schema(output_schema())
    .with_annotations(annotations)
    .with_meta(meta(json!({
        "ui": { "resourceUri": widget::app_uri(), "visibility": ["model", "app"] },
        "openai/outputTemplate": widget::skybridge_uri(),
        "openai/widgetAccessible": true,
        "openai/toolInvocation/invoking": invoking,
        "openai/toolInvocation/invoked": invoked,
        "securitySchemes": security_schemes(definition.access),
    })))
}

fn title(name: ToolName) -> &'static str {
    name.definition().title
}

fn decide_approval() -> Tool {
    let input = json!({
        "type": "object",
        "properties": {
            "approvalId": { "type": "string", "minLength": 1, "maxLength": 200 },
            "approvalToken": { "type": "string", "minLength": 1, "maxLength": 200 },
            "approved": { "type": "boolean" },
            "input": {
                "type": "object",
                "description": "The call's arguments as the person edited them in the form; \
                    omitted when unchanged. Validated again like the original call."
            }
        },
        "required": ["approvalId", "approvalToken", "approved"],
        "additionalProperties": false
    });
    Tool::new_with_raw(
        DECIDE_APPROVAL,
        Some(
            "Records the person's decision on a call waiting for approval, from the \
             confirmation form in the widget. Only the widget can call it: the approval \
             token is given to the widget, never to the model."
                .into(),
        ),
        object(input),
    )
    .with_title("Confirm or decline")
    .with_raw_output_schema(output_schema())
    .with_annotations(
        ToolAnnotations::with_title("Confirm or decline")
            .read_only(false)
            .destructive(true)
            .idempotent(true)
            .open_world(false),
    )
    .with_meta(meta(json!({
        "ui": { "resourceUri": widget::app_uri(), "visibility": ["app"] },
        "openai/outputTemplate": widget::skybridge_uri(),
        "openai/visibility": "private",
        "openai/widgetAccessible": true,
        "openai/toolInvocation/invoking": "Carrying out your decision…",
        "openai/toolInvocation/invoked": "Decision recorded",
        "securitySchemes": [{ "type": "oauth2", "scopes": [] }],
    })))
}

/// The result envelope every tool of ours returns as `structuredContent` (see
/// `results.rs`): the model reads it, and so does the widget.
fn output_schema() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            object(json!({
                "type": "object",
                "properties": {
                    "v": { "type": "integer", "description": "Version of this envelope." },
                    "ok": { "type": "boolean", "description": "false: nothing was done; see error." },
                    "tool": { "type": "string" },
                    "status": {
                        "type": "string",
                        "enum": ["done", "approval_required", "declined"],
                        "description": "done: the tool ran and output is its result. \
                            approval_required: nothing happened yet; the person confirms or \
                            declines in the form. declined: the person said no; nothing was done."
                    },
                    "callId": { "type": "string" },
                    "approvalId": { "type": "string" },
                    "summary": { "type": "string" },
                    "approvalUrl": { "type": "string" },
                    "input": { "type": "object" },
                    "preview": {
                        "type": "object",
                        "description": "While approval_required: what the call would do as the \
                            server found it (kind booking: restaurantName, address, startsAt in \
                            the restaurant's time, partySize, availability; cancellation: the \
                            booking; checkout: gift, price, delivery, total). Tell the person \
                            this, not the ids of input."
                    },
                    "output": { "type": "object" },
                    "error": {
                        "type": "object",
                        "properties": {
                            "code": { "type": "string" },
                            "message": { "type": "string" },
                            "retryable": { "type": "boolean" },
                            "issues": {
                                "type": "array",
                                "description": "For rejected arguments: which field broke \
                                    which rule (path, message, rule {kind, ...limits}).",
                                "items": { "type": "object" }
                            }
                        },
                        "required": ["code", "message", "retryable"]
                    }
                },
                "required": ["v", "ok", "tool"]
            }))
        })
        .clone()
}

/// What the host's model is told about the server as a whole.
pub fn instructions(assistant: Assistant) -> String {
    let what = match assistant {
        Assistant::Restaurant => {
            "datban books restaurant tables in Vietnam: weather, restaurant search, bookings."
        }
        Assistant::Gifts => "datban's GiftGenius: gift ideas and (fictional) gift checkouts.",
        Assistant::Shipping => "datban's shipping desk: delivery prices within Vietnam.",
    };
    format!(
        "{what} Every result is in structuredContent: ok:false means nothing was done (see \
         error.code and error.retryable). A call that changes something answers \
         status:\"approval_required\" and happens only after the person confirms it in the \
         form; never say it was done unless a result with status:\"done\" says so."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_assistant_serves_exactly_its_loop_allow_list() {
        for assistant in Assistant::ALL {
            let names: Vec<String> = tools(assistant)
                .iter()
                .map(|tool| tool.name.to_string())
                .filter(|name| name != DECIDE_APPROVAL)
                .collect();
            let allowed: Vec<String> = assistant
                .tools()
                .into_iter()
                .map(|tool| tool.as_str().to_owned())
                .collect();
            assert_eq!(names, allowed, "{assistant:?}");
            let decides = tools(assistant).iter().any(|t| t.name == DECIDE_APPROVAL);
            let approvals = assistant
                .tools()
                .into_iter()
                .any(|t| t.definition().requires_approval);
            assert_eq!(decides, approvals, "{assistant:?}");
        }
    }

    #[test]
    fn schemas_are_the_models_and_hints_the_tools_own() {
        for tool_name in ToolName::ALL {
            let tool = tools(tool_name.assistant())
                .iter()
                .find(|tool| tool.name == tool_name.as_str())
                .expect("listed");
            assert_eq!(
                Value::Object((*tool.input_schema).clone()),
                tool_name.input_schema()
            );
            let annotations = tool.annotations.as_ref().expect("annotations");
            let risk = tool_name.definition().risk;
            assert_eq!(annotations.read_only_hint, Some(risk.read_only));
            assert_eq!(annotations.destructive_hint, Some(risk.destructive));
            assert_eq!(annotations.idempotent_hint, Some(risk.idempotent));
            assert_eq!(annotations.open_world_hint, Some(risk.open_world));
            let meta = &tool.meta.as_ref().expect("meta").0;
            for key in [
                "openai/toolInvocation/invoking",
                "openai/toolInvocation/invoked",
            ] {
                let text = meta[key].as_str().expect("status");
                assert!(
                    !text.is_empty() && text.chars().count() <= 64,
                    "{tool_name} {key}"
                );
            }
            assert_eq!(
                tool.output_schema.as_ref().expect("output schema")["type"],
                "object"
            );
        }
    }
}

//! A stored message told again as events: what a client that asks for a reply from its
//! start is sent when the run writing it began with a message that already had parts (a
//! reply continued after a decision). Folded into an empty message with the same id,
//! the events give the message back; an AI SDK client builds the same parts from them.

use crate::{
    events::{AgentEvent, Decision, Transient},
    message::{Message, MessagePart, ToolPart},
    tools::ToolName,
};

/// The events that rebuild `message`'s parts, in order (no `start` or `finish`).
pub fn replay(message: &Message) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    let mut in_step = false;
    for part in &message.parts {
        match part {
            MessagePart::StepStart => {
                if in_step {
                    events.push(AgentEvent::FinishStep);
                }
                in_step = true;
                events.push(AgentEvent::StartStep);
            }
            MessagePart::Text { id, text } => {
                events.push(AgentEvent::TextStart { id: id.clone() });
                if !text.is_empty() {
                    events.push(AgentEvent::TextDelta {
                        id: id.clone(),
                        delta: text.clone(),
                    });
                }
                events.push(AgentEvent::TextEnd { id: id.clone() });
            }
            MessagePart::Tool(tool) => {
                let mut told = Vec::new();
                tool_events(tool, &mut told);
                // Checked on a scratch message: a part whose input no longer fits its tool
                // (it failed on it) is told as the input error it ended as instead.
                let mut scratch = Message::assistant(String::new());
                for event in &told {
                    scratch.apply(event);
                }
                if scratch.tool_part(tool.id()) != Some(tool.as_ref()) {
                    told.clear();
                    refused_events(tool, &mut told);
                }
                events.extend(told);
            }
        }
    }
    if in_step {
        events.push(AgentEvent::FinishStep);
    }
    events
}

/// The events that take a call from nothing to where `tool` is.
fn tool_events(tool: &ToolPart, events: &mut Vec<AgentEvent>) {
    let id = tool.id().to_owned();
    let name = tool.tool_name().to_owned();
    let state = tool.state_name();
    let known = ToolName::parse(&name).is_some();
    if state == "input-streaming" || !known {
        // Arguments still arriving, or a call of a tool we do not have (whose arguments
        // are only ever text): the text as it came, then the refusal if there was one.
        events.push(AgentEvent::ToolInputStart {
            tool_call_id: id.clone(),
            tool_name: name.clone(),
        });
        let raw = match (tool, tool.input_json()) {
            (ToolPart::Unknown(call), _) => call.raw_input.clone(),
            (_, Some(serde_json::Value::String(raw))) => raw,
            _ => String::new(),
        };
        if !raw.is_empty() {
            events.push(AgentEvent::ToolInputDelta {
                tool_call_id: id.clone(),
                input_text_delta: raw.clone(),
            });
        }
        if let Some(error) = tool.error() {
            events.push(AgentEvent::ToolInputError {
                tool_call_id: id,
                tool_name: name,
                input: serde_json::Value::String(raw),
                error_text: error.message.clone(),
                error: error.clone(),
            });
        }
        return;
    }
    let approval = tool.approval();
    let Some(input) = tool.input_json() else {
        // Failed before its arguments were complete: nothing but the failure to tell.
        events.push(AgentEvent::ToolInputStart {
            tool_call_id: id.clone(),
            tool_name: name,
        });
        if let Some(error) = tool.error() {
            events.push(AgentEvent::ToolOutputError {
                tool_call_id: id,
                error_text: error.message.clone(),
                error: error.clone(),
            });
        }
        return;
    };
    if let (Some(error), None) = (tool.error(), approval) {
        // Refused before anyone was asked: told as the input error it was.
        events.push(AgentEvent::ToolInputError {
            tool_call_id: id,
            tool_name: name,
            input,
            error_text: error.message.clone(),
            error: error.clone(),
        });
        return;
    }
    events.push(AgentEvent::ToolInputAvailable {
        tool_call_id: id.clone(),
        tool_name: name,
        input,
    });
    if let Some(approval) = approval {
        events.push(AgentEvent::ToolApprovalRequest {
            approval_id: approval.id.clone(),
            tool_call_id: id.clone(),
            preview: tool.preview().cloned(),
        });
        // The decision as the part records it; a carried-out call whose decision was
        // made in a reply it replaced records none (`earlier`), and a confirmation
        // closed unanswered none at all.
        let decided = match (approval.approved, state) {
            (Some(approved), _) => Some((approved, false)),
            (None, "output-available") => Some((true, true)),
            _ => None,
        };
        if let Some((approved, earlier)) = decided {
            events.push(AgentEvent::ToolApprovalResponse {
                data: Decision {
                    tool_call_id: id.clone(),
                    approval_id: approval.id.clone(),
                    approved,
                    input: None,
                    reason: approval.reason.clone(),
                    earlier,
                },
                transient: Transient,
            });
        }
    }
    match state {
        "output-available" => {
            if let Some(output) = tool.output_json() {
                events.push(AgentEvent::ToolOutputAvailable {
                    tool_call_id: id,
                    output,
                });
            }
        }
        "output-error" => {
            if let Some(error) = tool.error() {
                events.push(AgentEvent::ToolOutputError {
                    tool_call_id: id,
                    error_text: error.message.clone(),
                    error: error.clone(),
                });
            }
        }
        "output-denied" => events.push(AgentEvent::ToolOutputDenied { tool_call_id: id }),
        _ => {}
    }
}

/// A failed call told as an input error: its input and error, without the approval.
fn refused_events(tool: &ToolPart, events: &mut Vec<AgentEvent>) {
    let Some(error) = tool.error() else {
        return;
    };
    events.push(AgentEvent::ToolInputError {
        tool_call_id: tool.id().to_owned(),
        tool_name: tool.tool_name().to_owned(),
        input: tool
            .input_json()
            .unwrap_or_else(|| serde_json::Value::Object(serde_json::Map::new())),
        error_text: error.message.clone(),
        error: error.clone(),
    });
}

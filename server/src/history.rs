//! Turns stored UI messages into the history a model reads.
//!
//! The UI message is the one source of truth: the model sees exactly the calls and
//! results the person sees, with incomplete or still-pending calls left out.

use serde_json::Value;
use shared::message::{CallOutcome, Message, MessagePart, Role};

use crate::model::{result_content, ModelMessage, ProposedCall};

/// A decline's result with the reason the person gave (their words, as data).
fn with_reason(content: &str, reason: &str) -> String {
    match serde_json::from_str::<Value>(content) {
        Ok(Value::Object(mut fields)) => {
            fields.insert("userReason".into(), Value::String(reason.to_owned()));
            Value::Object(fields).to_string()
        }
        _ => content.to_owned(),
    }
}

#[derive(Default)]
struct Turn {
    text: String,
    calls: Vec<ProposedCall>,
    results: Vec<ModelMessage>,
}

impl Turn {
    fn flush(&mut self, out: &mut Vec<ModelMessage>) {
        let turn = std::mem::take(self);
        if turn.text.is_empty() && turn.calls.is_empty() {
            return;
        }
        out.push(ModelMessage::Assistant {
            text: turn.text,
            calls: turn.calls,
        });
        out.extend(turn.results);
    }
}

/// The model's view of a conversation.
pub fn to_model<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Vec<ModelMessage> {
    let mut out = Vec::new();
    for message in messages {
        match message.role {
            Some(Role::User) => out.push(ModelMessage::User {
                text: message.text(),
            }),
            Some(Role::Assistant) | None => {
                let mut turn = Turn::default();
                for part in &message.parts {
                    match part {
                        MessagePart::StepStart => turn.flush(&mut out),
                        MessagePart::Text { text, .. } => turn.text.push_str(text),
                        MessagePart::Tool(tool) => {
                            // A call without a result would be rejected by providers; the
                            // only such calls are incomplete or still pending ones.
                            let outcome = tool.outcome();
                            let Some((mut content, is_error)) = result_content(&outcome) else {
                                continue;
                            };
                            if let (CallOutcome::Denied, Some(reason)) =
                                (&outcome, tool.approval().and_then(|a| a.reason.as_deref()))
                            {
                                content = with_reason(&content, reason);
                            }
                            let arguments = match tool.input_json() {
                                Some(Value::String(raw)) => raw,
                                Some(value) => value.to_string(),
                                None => "{}".to_owned(),
                            };
                            turn.calls.push(ProposedCall {
                                id: tool.id().to_owned(),
                                name: tool.tool_name().to_owned(),
                                arguments,
                            });
                            turn.results.push(ModelMessage::ToolResult {
                                call_id: tool.id().to_owned(),
                                name: tool.tool_name().to_owned(),
                                content,
                                is_error,
                            });
                        }
                    }
                }
                turn.flush(&mut out);
            }
        }
    }
    out
}

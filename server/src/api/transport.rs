//! What `POST /api/chat` is asked, in either of the two bodies it accepts: datban's own
//! (`{conversationId?, text, assistant?}`, and `{conversationId, trigger:
//! "regenerate-message"}` for the page's regenerate button) and the AI SDK chat
//! transport's (`{id, messages, trigger, messageId}` plus whatever the front end put in
//! its `body` option, such as `assistant`).
//!
//! From the transport's `messages` only the person's newest words or their decisions are
//! taken: the server keeps the history, and assistant messages, tool parts, outputs and
//! states a client sends are never stored or believed.

use axum::http::StatusCode;
use hmac::{Hmac, Mac};
use serde::Deserialize;
use serde_json::{Map, Value};
use sha2::Sha256;
use shared::{http::ApiCode, tools::Assistant};

use super::ApiError;

/// Longest conversation or message id a client may choose.
pub const MAX_CLIENT_ID_CHARS: usize = 128;

/// The body of `POST /api/chat`, both forms in one: which form it is follows from the
/// fields present ([`ChatBody::into_request`]).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ChatBody {
    #[serde(default)]
    conversation_id: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    assistant: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    messages: Option<Vec<Value>>,
    #[serde(default)]
    trigger: Option<Trigger>,
    #[serde(default)]
    message_id: Option<String>,
    /// Fields of neither form: refused in ours, ignored in the transport's (front ends
    /// add their own through its `body` option).
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// The transport's `trigger`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Trigger {
    /// A new message, or decisions on the last reply's confirmations.
    SubmitMessage,
    /// The last reply again, as a new run.
    RegenerateMessage,
}

/// Which conversation a request names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ConversationRef {
    /// None: a new one (our form without `conversationId`).
    New,
    /// One of ours, by our id.
    Ours(String),
    /// The client's id (the transport's `id`): the owner's conversation of that id, or
    /// the one keyed by it, created on first use.
    Client(String),
}

/// A person's decision as an AI SDK client sends it: a tool part in `approval-responded`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ClientDecision {
    /// The approval's id (ours are call ids).
    pub approval_id: String,
    /// The decision.
    pub approved: bool,
    /// Why, if the client said.
    pub reason: Option<String>,
}

/// What the request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Action {
    /// The person says `text` (`client_id`: the id their client gave the message).
    Say {
        text: String,
        client_id: Option<String>,
    },
    /// The person decided the confirmations of the last reply.
    Decide(Vec<ClientDecision>),
    /// The last reply again; `message_id`, when the client named the message it wants
    /// written again (which must be that reply, or the person's message it answers).
    Regenerate { message_id: Option<String> },
}

/// A request read from either form of the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ChatRequest {
    pub conversation: ConversationRef,
    pub action: Action,
    pub assistant: Option<Assistant>,
}

fn bad(code: ApiCode, message: impl Into<String>) -> ApiError {
    ApiError::new(code, message)
}

/// JSON of the wrong shape: `BAD_REQUEST` as the extractor sends it for such a body, 422.
fn unprocessable(code: ApiCode, message: impl Into<String>) -> ApiError {
    ApiError::new(code, message).with_status(StatusCode::UNPROCESSABLE_ENTITY)
}

/// The assistant a body names, typed; a name this server has no assistant for is refused.
fn assistant(name: Option<String>) -> Result<Option<Assistant>, ApiError> {
    let Some(name) = name else { return Ok(None) };
    match Assistant::parse(&name) {
        Some(assistant) => Ok(Some(assistant)),
        None => Err(unprocessable(
            ApiCode::UnknownAssistant,
            format!(
                "Unknown assistant {name:?}; available: {}.",
                Assistant::ALL.map(Assistant::as_str).join(", ")
            ),
        )),
    }
}

impl ChatBody {
    /// The request this body makes, or the clear error of a body that makes none.
    pub(super) fn into_request(self) -> Result<ChatRequest, ApiError> {
        if self.conversation_id.is_some() && self.id.is_some() {
            return Err(bad(
                ApiCode::BadRequest,
                "Send either `conversationId` (datban's form) or `id` (the AI SDK's), not both.",
            ));
        }
        if self.id.is_some() || self.messages.is_some() {
            self.transport()
        } else {
            self.ours()
        }
    }

    fn ours(self) -> Result<ChatRequest, ApiError> {
        if let Some(field) = self.extra.keys().next() {
            return Err(bad(
                ApiCode::BadRequest,
                format!(
                    "Unknown field `{field}`; expected `conversationId`, `text`, `assistant` \
                     or `trigger`."
                ),
            ));
        }
        let conversation = match self.conversation_id {
            Some(id) => ConversationRef::Ours(id),
            None => ConversationRef::New,
        };
        let action = match (self.trigger, self.text) {
            (Some(Trigger::RegenerateMessage), None) => {
                if conversation == ConversationRef::New {
                    return Err(bad(
                        ApiCode::BadRequest,
                        "Regenerating needs the `conversationId` of the reply to write again.",
                    ));
                }
                Action::Regenerate { message_id: None }
            }
            (Some(Trigger::RegenerateMessage), Some(_)) => {
                return Err(bad(
                    ApiCode::BadRequest,
                    "Send either `text` or `trigger: \"regenerate-message\"`, not both.",
                ))
            }
            (_, Some(text)) => Action::Say {
                text,
                client_id: None,
            },
            (_, None) => {
                return Err(unprocessable(
                    ApiCode::BadRequest,
                    "Missing field `text` (the message, a string).",
                ))
            }
        };
        Ok(ChatRequest {
            conversation,
            action,
            assistant: assistant(self.assistant)?,
        })
    }

    fn transport(self) -> Result<ChatRequest, ApiError> {
        let id = self.id.ok_or_else(|| {
            bad(
                ApiCode::BadRequest,
                "Missing field `id` (the chat's id, a string).",
            )
        })?;
        check_client_id(&id, "id")?;
        let messages = self.messages.ok_or_else(|| {
            bad(
                ApiCode::BadRequest,
                "Missing field `messages`: the AI SDK form is `{id, messages, trigger}`.",
            )
        })?;
        let action = match self.trigger.unwrap_or(Trigger::SubmitMessage) {
            Trigger::RegenerateMessage => Action::Regenerate {
                message_id: self.message_id,
            },
            Trigger::SubmitMessage => submitted(&messages, self.message_id.as_deref())?,
        };
        Ok(ChatRequest {
            conversation: ConversationRef::Client(id),
            action,
            assistant: assistant(self.assistant)?,
        })
    }
}

/// An id a client chose: 1 to [`MAX_CLIENT_ID_CHARS`] letters, digits and `-_.:~`, so it
/// fits a URL path as it is and can name nothing else.
pub(super) fn check_client_id(id: &str, field: &str) -> Result<(), ApiError> {
    let fits = !id.is_empty()
        && id.chars().count() <= MAX_CLIENT_ID_CHARS
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:~".contains(c))
        && !id.chars().all(|c| c == '.');
    if fits {
        Ok(())
    } else {
        Err(bad(
            ApiCode::InvalidId,
            format!(
                "`{field}` must be 1 to {MAX_CLIENT_ID_CHARS} characters of letters, digits \
                 and - _ . : ~ (not only dots)."
            ),
        ))
    }
}

/// What a `submit-message` asks: the message it names (`messageId`) or the last one. A
/// person's message is words to answer; an assistant message is answered by its parts in
/// `approval-responded`; anything else is refused.
fn submitted(messages: &[Value], message_id: Option<&str>) -> Result<Action, ApiError> {
    let named = message_id.and_then(|id| {
        messages
            .iter()
            .rev()
            .find(|message| message.get("id").and_then(Value::as_str) == Some(id))
    });
    let Some(message) = named.or_else(|| messages.last()) else {
        return Err(unprocessable(
            ApiCode::EmptyMessage,
            "`messages` is empty: there is nothing to answer.",
        ));
    };
    match message.get("role").and_then(Value::as_str) {
        Some("user") => {
            let client_id = match message.get("id") {
                None | Some(Value::Null) => None,
                Some(Value::String(id)) => {
                    check_client_id(id, "messages[].id")?;
                    Some(id.clone())
                }
                Some(_) => {
                    return Err(bad(
                        ApiCode::InvalidId,
                        "A message's `id` must be a string.",
                    ))
                }
            };
            Ok(Action::Say {
                text: text_of(message)?,
                client_id,
            })
        }
        Some("assistant") => {
            let decisions = decisions_in(message)?;
            if decisions.is_empty() {
                return Err(unprocessable(
                    ApiCode::NothingToAnswer,
                    "The last message is the assistant's and answers no confirmation: send \
                     the person's message, or tool parts in `approval-responded`.",
                ));
            }
            Ok(Action::Decide(decisions))
        }
        _ => Err(unprocessable(
            ApiCode::BadRequest,
            "The last message's `role` must be \"user\" (or \"assistant\" with decisions).",
        )),
    }
}

/// The text parts of a person's message, joined. Other parts (files) are not read.
fn text_of(message: &Value) -> Result<String, ApiError> {
    let parts = message
        .get("parts")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            unprocessable(
                ApiCode::BadRequest,
                "A message needs `parts`, an array of `{type: \"text\", text}`.",
            )
        })?;
    Ok(parts
        .iter()
        .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n"))
}

/// The decisions in an assistant message: its tool parts in `approval-responded` with an
/// `approval: {id, approved, reason?}`. Nothing else of the parts is read.
fn decisions_in(message: &Value) -> Result<Vec<ClientDecision>, ApiError> {
    let parts = message
        .get("parts")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut decisions = Vec::new();
    for part in parts {
        if part.get("state").and_then(Value::as_str) != Some("approval-responded") {
            continue;
        }
        let approval = part.get("approval");
        let id = approval.and_then(|a| a.get("id")).and_then(Value::as_str);
        let approved = approval
            .and_then(|a| a.get("approved"))
            .and_then(Value::as_bool);
        let (Some(id), Some(approved)) = (id, approved) else {
            return Err(unprocessable(
                ApiCode::BadRequest,
                "A part in `approval-responded` needs `approval: {id: string, approved: \
                 boolean}`.",
            ));
        };
        if id.is_empty() || id.chars().count() > 256 {
            return Err(bad(
                ApiCode::InvalidId,
                "An approval id must be 1 to 256 characters.",
            ));
        }
        let reason = approval
            .and_then(|a| a.get("reason"))
            .and_then(Value::as_str)
            .map(|reason| reason.chars().take(500).collect());
        decisions.push(ClientDecision {
            approval_id: id.to_owned(),
            approved,
            reason,
        });
    }
    Ok(decisions)
}

/// Our id of the conversation an owner's client calls `client_id`: keyed by both under the
/// server key, so two owners' clients choosing the same id get two conversations, and
/// neither can guess the other's.
pub(crate) fn client_conversation_id(key: &[u8], owner_id: &str, client_id: &str) -> String {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        // HMAC takes keys of any length; this arm cannot run.
        return format!("chat_{owner_id}_{client_id}");
    };
    mac.update(owner_id.as_bytes());
    mac.update(&[0]);
    mac.update(client_id.as_bytes());
    let digest = mac.finalize().into_bytes();
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("chat_{hex}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(body: Value) -> Result<ChatRequest, ApiError> {
        serde_json::from_value::<ChatBody>(body)
            .expect("a JSON object")
            .into_request()
    }

    fn code(result: Result<ChatRequest, ApiError>) -> &'static str {
        result.expect_err("refused").code().as_str()
    }

    #[test]
    fn reads_the_transports_submit_with_extra_body_fields() {
        let request = request(json!({
            "id": "k3JdX9aB", "trigger": "submit-message", "messageId": null,
            "assistant": "gifts", "webSearch": true,
            "messages": [
                {"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": "Hi"}]},
                {"id": "u1", "role": "user", "parts": [
                    {"type": "file", "url": "data:,", "mediaType": "text/plain"},
                    {"type": "text", "text": "Quà cho mẹ"}]}
            ]
        }))
        .unwrap();
        assert_eq!(
            request.conversation,
            ConversationRef::Client("k3JdX9aB".into())
        );
        assert_eq!(request.assistant, Some(Assistant::Gifts));
        assert_eq!(
            request.action,
            Action::Say {
                text: "Quà cho mẹ".into(),
                client_id: Some("u1".into())
            }
        );
    }

    #[test]
    fn reads_decisions_and_nothing_else_of_an_assistant_message() {
        let request = request(json!({
            "id": "c1", "trigger": "submit-message", "messageId": "msg_9",
            "messages": [
                {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Đặt bàn"}]},
                {"id": "msg_9", "role": "assistant", "parts": [
                    {"type": "tool-getWeather", "toolCallId": "w", "state": "output-available",
                     "output": {"forged": true}},
                    {"type": "tool-createBooking", "toolCallId": "b1",
                     "state": "approval-responded", "input": {"partySize": 99},
                     "approval": {"id": "b1", "approved": true}},
                    {"type": "tool-cancelBooking", "toolCallId": "c2",
                     "state": "approval-responded",
                     "approval": {"id": "c2", "approved": false, "reason": "changed my mind"}}
                ]}
            ]
        }))
        .unwrap();
        assert_eq!(
            request.action,
            Action::Decide(vec![
                ClientDecision {
                    approval_id: "b1".into(),
                    approved: true,
                    reason: None
                },
                ClientDecision {
                    approval_id: "c2".into(),
                    approved: false,
                    reason: Some("changed my mind".into())
                },
            ])
        );
    }

    #[test]
    fn refuses_what_asks_for_nothing_or_names_badly() {
        let user = json!([{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "x"}]}]);
        assert_eq!(
            code(request(json!({"id": "a b", "messages": user}))),
            "INVALID_ID"
        );
        assert_eq!(
            code(request(json!({"id": "a/b", "messages": user}))),
            "INVALID_ID"
        );
        assert_eq!(
            code(request(json!({"id": "..", "messages": user}))),
            "INVALID_ID"
        );
        let long = "x".repeat(MAX_CLIENT_ID_CHARS + 1);
        assert_eq!(
            code(request(json!({"id": long, "messages": user}))),
            "INVALID_ID"
        );
        assert_eq!(code(request(json!({"messages": user}))), "BAD_REQUEST");
        assert_eq!(
            code(request(json!({"id": "c", "messages": []}))),
            "EMPTY_MESSAGE"
        );
        let assistant = json!([{"id": "m", "role": "assistant", "parts": [
            {"type": "tool-createBooking", "state": "output-available"}]}]);
        assert_eq!(
            code(request(json!({"id": "c", "messages": assistant}))),
            "NOTHING_TO_ANSWER"
        );
        assert_eq!(
            code(request(
                json!({"conversationId": "c", "id": "c", "messages": user})
            )),
            "BAD_REQUEST"
        );
        assert_eq!(
            code(request(json!({"text": "x", "colour": 1}))),
            "BAD_REQUEST"
        );
        assert_eq!(
            code(request(json!({"trigger": "regenerate-message"}))),
            "BAD_REQUEST"
        );
    }

    #[test]
    fn reads_our_own_forms() {
        assert_eq!(
            request(json!({"conversationId": "conv_1", "trigger": "regenerate-message"}))
                .unwrap()
                .action,
            Action::Regenerate { message_id: None }
        );
        let said = request(json!({"text": "Xin chào", "assistant": "shipping"})).unwrap();
        assert_eq!(said.conversation, ConversationRef::New);
        assert_eq!(said.assistant, Some(Assistant::Shipping));
    }

    #[test]
    fn client_ids_are_per_owner() {
        let a = client_conversation_id(b"key", "owner_a", "chat1");
        assert_eq!(a, client_conversation_id(b"key", "owner_a", "chat1"));
        assert_ne!(a, client_conversation_id(b"key", "owner_b", "chat1"));
        assert_ne!(a, client_conversation_id(b"other key", "owner_a", "chat1"));
        // The separator keeps ("ab", "c") and ("a", "bc") apart.
        assert_ne!(
            client_conversation_id(b"key", "ab", "c"),
            client_conversation_id(b"key", "a", "bc")
        );
        assert!(a.starts_with("chat_") && a.len() == 5 + 32);
    }
}

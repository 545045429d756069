//! The HTTP contract between the page and the server: route paths, header names, and the
//! bodies both sides read and write. The server's router and handlers and the browser's
//! client use these same items, so the two cannot drift apart.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{message::Message, tools::Assistant};

/// `POST /api/chat`: a person's message (or "write the last reply again"), answered as a
/// UI Message Stream.
pub const CHAT_URL: &str = "/api/chat";
/// `POST /api/approvals`: a decision on a confirmation.
pub const APPROVALS_URL: &str = "/api/approvals";
/// `POST /api/calls/reopen`: takes up a confirmation the person moved on from.
pub const REOPEN_URL: &str = "/api/calls/reopen";
/// `GET /api/bookings`: the owner's upcoming bookings (`?all=1`: every booking).
pub const BOOKINGS_ROUTE: &str = "/api/bookings";
/// `GET /api/bookings?all=1`: all the owner's bookings, cancelled and past ones too, as
/// `listBookings` returns them.
pub const BOOKINGS_URL: &str = "/api/bookings?all=1";
/// The router's pattern of [`conversation_url`].
pub const CONVERSATION_ROUTE: &str = "/api/conversations/{id}";
/// The router's pattern of [`stop_url`].
pub const STOP_ROUTE: &str = "/api/chat/{id}/stop";
/// The router's pattern of [`stream_url`].
pub const STREAM_ROUTE: &str = "/api/chat/{id}/stream";

/// The router's pattern of [`consent_request_url`].
pub const CONSENT_REQUEST_ROUTE: &str = "/api/oauth/requests/{id}";
/// `POST /api/oauth/consent`: the person's answer to an app's request ([`ConsentAnswer`]).
pub const CONSENT_URL: &str = "/api/oauth/consent";
/// `GET /api/connections`: the person's connected apps ([`ConnectionList`]).
pub const CONNECTIONS_URL: &str = "/api/connections";
/// The router's pattern of [`connection_url`].
pub const CONNECTION_ROUTE: &str = "/api/connections/{id}";

/// `GET /api/oauth/requests/{id}`: what an app asks for ([`ConsentRequest`]).
pub fn consent_request_url(id: &str) -> String {
    format!("/api/oauth/requests/{}", encode_component(id))
}

/// `DELETE /api/connections/{id}`: disconnects an app.
pub fn connection_url(id: &str) -> String {
    format!("/api/connections/{}", encode_component(id))
}

/// The response header naming the run a reply stream belongs to, so a client that lost the
/// stream asks for the rest of that very run.
pub const RUN_ID_HEADER: &str = "x-datban-run-id";

/// `POST /api/chat/{id}/stop`: stops the conversation's reply in progress.
pub fn stop_url(id: &str) -> String {
    format!("/api/chat/{}/stop", encode_component(id))
}

/// `GET /api/conversations/{id}`.
pub fn conversation_url(id: &str) -> String {
    format!("/api/conversations/{}", encode_component(id))
}

/// `GET /api/chat/{id}/stream?after=N[&run=…]`: the events of the conversation's reply
/// being written after the first `after` (of run `run_id`, when known: another run answers
/// 204, like no run).
pub fn stream_url(id: &str, after: u64, run_id: Option<&str>) -> String {
    let mut url = format!("/api/chat/{}/stream?after={after}", encode_component(id));
    if let Some(run_id) = run_id {
        url.push_str("&run=");
        url.push_str(&encode_component(run_id));
    }
    url
}

/// `segment` percent-encoded for a URL path segment or query value: unreserved characters
/// as they are, every other byte as `%XX`.
pub fn encode_component(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Writes [`ApiCode`] and its methods from one table: variant, wire code, HTTP status.
macro_rules! api_codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $wire:literal, $status:literal;)*) => {
        /// The `error.code` of every refusal under `/api/`, each with the HTTP status it is
        /// sent with. The server answers with these and nothing else; the page picks the
        /// sentence a person reads by matching on them, so a new code does not compile
        /// until it has one.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ApiCode {
            $($(#[doc = $doc])* $variant,)*
        }

        impl ApiCode {
            /// Every code, in the table's order.
            pub const ALL: &'static [ApiCode] = &[$(ApiCode::$variant),*];

            /// The code as it is sent (`RUN_IN_PROGRESS`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ApiCode::$variant => $wire,)*
                }
            }

            /// The HTTP status the code is sent with.
            pub const fn status(self) -> u16 {
                match self {
                    $(ApiCode::$variant => $status,)*
                }
            }

            /// The code of a received `error.code`; `None` for one this build does not know.
            pub fn parse(code: &str) -> Option<Self> {
                match code {
                    $($wire => Some(ApiCode::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

api_codes! {
    /// The request could not be read: bad JSON, a missing or mistyped field (also sent
    /// as 422 for JSON of the wrong shape).
    BadRequest = "BAD_REQUEST", 400;
    /// An id in the body or the path is not one we could have issued.
    InvalidId = "INVALID_ID", 400;
    /// The message is empty.
    EmptyMessage = "EMPTY_MESSAGE", 422;
    /// The message is longer than a message may be.
    MessageTooLong = "MESSAGE_TOO_LONG", 413;
    /// The body names an assistant this server does not have.
    UnknownAssistant = "UNKNOWN_ASSISTANT", 422;
    /// An AI SDK body whose last message answers no confirmation and asks nothing.
    NothingToAnswer = "NOTHING_TO_ANSWER", 422;
    /// An edited confirmation breaks the tool's rules (`error.issues` says which).
    ValidationError = "VALIDATION_ERROR", 422;
    /// A message already sent (the same client message id).
    DuplicateMessage = "DUPLICATE_MESSAGE", 409;
    /// The confirmation was already answered (`outcome` holds its part).
    AlreadyResolved = "ALREADY_RESOLVED", 409;
    /// What the confirmation showed changed before it was approved; nothing was done.
    PreviewChanged = "PREVIEW_CHANGED", 409;
    /// The decision is being carried out by another request; try again shortly.
    DecisionInProgress = "DECISION_IN_PROGRESS", 409;
    /// A reply is being written in the conversation (`running.runId` names it).
    RunInProgress = "RUN_IN_PROGRESS", 409;
    /// There is no reply to write again.
    NothingToRegenerate = "NOTHING_TO_REGENERATE", 409;
    /// Only the newest reply can be written again.
    NotLastReply = "NOT_LAST_REPLY", 409;
    /// The confirmation cannot be taken up again.
    NotReopenable = "NOT_REOPENABLE", 409;
    /// No such endpoint, or nothing of that id for this person.
    NotFound = "NOT_FOUND", 404;
    /// The endpoint does not take the method (`Allow` lists those it takes).
    MethodNotAllowed = "METHOD_NOT_ALLOWED", 405;
    /// The body did not arrive in time.
    RequestTimeout = "REQUEST_TIMEOUT", 408;
    /// The body is larger than the endpoint takes.
    BodyTooLarge = "BODY_TOO_LARGE", 413;
    /// The path and query are longer than any the API reads.
    UriTooLong = "URI_TOO_LONG", 414;
    /// A body that is not JSON.
    UnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE", 415;
    /// More header lines, or more header bytes, than the API reads.
    HeadersTooLarge = "HEADERS_TOO_LARGE", 431;
    /// A state-changing request from another site's page.
    CrossSiteRequest = "CROSS_SITE_REQUEST", 403;
    /// Too many messages in a short time (`retry-after` says when to try again).
    RateLimited = "RATE_LIMITED", 429;
    /// Too many replies being written for this person at once (`retry-after`).
    TooManyRuns = "TOO_MANY_RUNS", 429;
    /// Sign-in for MCP clients needs the server's public origin, which is not set.
    NoPublicOrigin = "NO_PUBLIC_ORIGIN", 400;
    /// Something failed on our side (the details are in the server's log).
    Internal = "INTERNAL", 500;
    /// Our storage failed; nothing was changed (`retry-after`).
    StorageUnavailable = "STORAGE_UNAVAILABLE", 503;
    /// The server is restarting and starts nothing new (`retry-after`).
    ShuttingDown = "SHUTTING_DOWN", 503;
}

impl Serialize for ApiCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The body of every refusal under `/api/`: `{"error":{"code","message",...}}`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
pub struct ErrorBody {
    /// What was refused.
    pub error: ErrorDetail,
}

crate::by_hand::struct_by_hand!(error_body_from_value, ErrorBody { error: "error" });

/// The `error` of an [`ErrorBody`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
pub struct ErrorDetail {
    /// The code as sent; [`ApiCode::parse`] reads it (a newer server may send one this
    /// build does not know).
    #[cfg_attr(not(target_arch = "wasm32"), serde(default))]
    pub code: String,
    /// For client developers, in English; never shown to a person.
    #[cfg_attr(not(target_arch = "wasm32"), serde(default))]
    pub message: String,
    /// For a refused edit: which fields broke which rules.
    #[cfg_attr(not(target_arch = "wasm32"), serde(default))]
    pub issues: Vec<crate::tools::ValidationIssue>,
}

crate::by_hand::struct_by_hand!(
    error_detail_from_value,
    ErrorDetail {
        code: "code" = default,
        message: "message" = default,
        issues: "issues" = default
    }
);

/// Body of `POST /api/chat` as the page sends it: a person's message. (The server also
/// reads the AI SDK's form of the same request, `{id, messages, trigger}`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatRequest {
    /// Absent for a new conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// What the person wrote.
    pub text: String,
    /// The assistant to talk to; the server fixes it when it creates the conversation, so
    /// only the first message carries it (absent: the restaurant assistant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assistant: Option<Assistant>,
}

/// Answer of `GET /api/conversations/{id}`, and what a page showing the conversation is
/// rendered with.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ConversationBody {
    /// Its id.
    pub id: String,
    /// The assistant it talks to, fixed when it was created.
    #[serde(default)]
    pub assistant: Assistant,
    /// Its messages, oldest first.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Present when the last message is a reply still being written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<RunningReply>,
}

crate::by_hand::struct_by_hand!(
    conversation_from_value,
    ConversationBody {
        id: "id",
        assistant: "assistant" = default,
        messages: "messages" = default,
        running: "running" = default
    }
);

/// Answer of `GET /api/oauth/requests/{id}`: what the consent page shows.
///
/// The page reads these answers with [`ConsentRequest::read`] and
/// [`ConnectionList::read`], from a parsed `Value`: a derived `Deserialize` would add its
/// own visitor code to the hydrate bundle for one page that most visits never show.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsentRequest {
    /// The request's id.
    pub request: String,
    /// The app's name, as it registered.
    pub client_name: String,
    /// What it asks to do.
    pub scopes: Vec<String>,
    /// The assistant whose tools it would use (`restaurant`, `gifts`, `shipping`).
    pub assistant: String,
    /// The MCP server's URL it asks for.
    pub resource: String,
    /// Where the answer goes, as a host name the person can judge.
    pub redirect_host: String,
    /// The page's language (`vi`, `en`).
    pub lang: String,
}

impl ConsentRequest {
    /// Reads the answer; a missing field reads as empty.
    pub fn read(value: &Value) -> Self {
        Self {
            request: text(value, "request"),
            client_name: text(value, "clientName"),
            scopes: texts(value, "scopes"),
            assistant: text(value, "assistant"),
            resource: text(value, "resource"),
            redirect_host: text(value, "redirectHost"),
            lang: text(value, "lang"),
        }
    }
}

/// Body of `POST /api/oauth/consent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsentAnswer {
    /// The request id from the consent page's URL.
    pub request: String,
    /// The person's answer.
    pub allow: bool,
}

/// Answer of `POST /api/oauth/consent`: where the browser goes next (the app's redirect
/// URI, with the code or the refusal).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConsentRedirect {
    /// The URL.
    pub redirect: String,
}

impl ConsentRedirect {
    /// Reads the answer; a missing field reads as empty.
    pub fn read(value: &Value) -> Self {
        Self {
            redirect: text(value, "redirect"),
        }
    }
}

/// Answer of `GET /api/connections`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ConnectionList {
    /// The connected apps, newest first.
    pub connections: Vec<Connection>,
    /// The page's language (`vi`, `en`).
    pub lang: String,
}

/// One connected app.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    /// The grant's id (`DELETE /api/connections/{id}` disconnects it).
    pub id: String,
    /// The app's name.
    pub client_name: String,
    /// What it may do.
    pub scopes: Vec<String>,
    /// The assistant whose tools it uses.
    pub assistant: String,
    /// When the person connected it (RFC 3339).
    pub connected_at: String,
    /// When it last used its access, if ever (RFC 3339).
    pub last_used_at: Option<String>,
}

impl ConnectionList {
    /// Reads the answer; missing fields read as empty.
    pub fn read(value: &Value) -> Self {
        let connections = value
            .get("connections")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .map(|item| Connection {
                        id: text(item, "id"),
                        client_name: text(item, "clientName"),
                        scopes: texts(item, "scopes"),
                        assistant: text(item, "assistant"),
                        connected_at: text(item, "connectedAt"),
                        last_used_at: item
                            .get("lastUsedAt")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            connections,
            lang: text(value, "lang"),
        }
    }
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn texts(value: &Value, key: &str) -> Vec<String> {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Body of `POST /api/approvals`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalRequest {
    /// The conversation the call belongs to.
    pub conversation_id: String,
    /// The call being decided.
    pub tool_call_id: String,
    /// The decision.
    pub approved: bool,
    /// The input as the person edited it; absent when nothing changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_input: Option<Value>,
}

/// Body of `POST /api/calls/reopen`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReopenRequest {
    /// The conversation the call belongs to.
    pub conversation_id: String,
    /// The call that was closed when the person wrote something else.
    pub tool_call_id: String,
}

/// A reply still being written when the conversation was read, and how much of it the
/// stored copy holds: the page asks for the events after `after` and folds them in
/// (`GET /api/chat/{id}/stream?after={after}&run={runId}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct RunningReply {
    /// The assistant message.
    pub message_id: String,
    /// The run writing it, when the server found one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// How many of the run's events the stored copy holds.
    pub after: u64,
}

crate::by_hand::struct_by_hand!(
    running_from_value,
    RunningReply {
        message_id: "messageId",
        run_id: "runId" = default,
        after: "after"
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_server_writes_of_connections_the_page_reads_back() {
        let list = ConnectionList {
            connections: vec![Connection {
                id: "grt_1".into(),
                client_name: "Claude".into(),
                scopes: vec!["bookings".into()],
                assistant: "restaurant".into(),
                connected_at: "2026-11-29T03:00:00.000Z".into(),
                last_used_at: None,
            }],
            lang: "en".into(),
        };
        let value = serde_json::to_value(&list).unwrap_or_default();
        assert_eq!(ConnectionList::read(&value), list);
        let request = ConsentRequest {
            request: "req_1".into(),
            client_name: "ChatGPT".into(),
            scopes: vec!["bookings".into()],
            assistant: "restaurant".into(),
            resource: "https://datban.example/mcp/restaurant".into(),
            redirect_host: "chatgpt.com".into(),
            lang: "vi".into(),
        };
        let value = serde_json::to_value(&request).unwrap_or_default();
        assert_eq!(ConsentRequest::read(&value), request);
        let redirect = ConsentRedirect {
            redirect: "https://chatgpt.com/cb?code=x".into(),
        };
        let value = serde_json::to_value(&redirect).unwrap_or_default();
        assert_eq!(ConsentRedirect::read(&value), redirect);
        assert!(
            serde_json::from_str::<ConsentAnswer>(r#"{"request":"r","allow":true,"x":1}"#).is_err()
        );
        assert_eq!(connection_url("a/b"), "/api/connections/a%2Fb");
        assert_eq!(
            consent_request_url("x"),
            CONSENT_REQUEST_ROUTE.replace("{id}", "x")
        );
        assert_eq!(connection_url("x"), CONNECTION_ROUTE.replace("{id}", "x"));
    }

    #[test]
    fn api_codes_are_distinct_screaming_snake_and_read_back() {
        let mut seen = std::collections::HashSet::new();
        for code in ApiCode::ALL {
            let wire = code.as_str();
            assert!(seen.insert(wire), "{wire} twice");
            assert!(
                wire.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
                "{wire}"
            );
            assert_eq!(ApiCode::parse(wire), Some(*code));
            assert!((400..600).contains(&code.status()), "{wire}");
            assert_eq!(serde_json::to_value(code).ok(), Some(Value::from(wire)));
        }
        assert_eq!(ApiCode::parse("NO_SUCH_CODE"), None);
    }

    #[test]
    fn urls_encode_their_ids_and_match_the_routes() {
        assert_eq!(conversation_url("a b/c"), "/api/conversations/a%20b%2Fc");
        assert_eq!(
            stream_url("chat:1", 3, Some("run_x")),
            "/api/chat/chat%3A1/stream?after=3&run=run_x"
        );
        for (url, route) in [
            (conversation_url("x"), CONVERSATION_ROUTE),
            (stop_url("x"), STOP_ROUTE),
            (stream_url("x", 0, None), STREAM_ROUTE),
        ] {
            let path = url.split('?').next().unwrap_or_default();
            assert_eq!(path, route.replace("{id}", "x"));
        }
        assert!(BOOKINGS_URL.starts_with(BOOKINGS_ROUTE));
    }

    #[test]
    fn decisions_refuse_unknown_fields_and_round_trip() {
        let request = ApprovalRequest {
            conversation_id: "c".into(),
            tool_call_id: "t".into(),
            approved: true,
            edited_input: None,
        };
        let text = serde_json::to_string(&request).unwrap_or_default();
        assert_eq!(
            text,
            r#"{"conversationId":"c","toolCallId":"t","approved":true}"#
        );
        assert_eq!(
            serde_json::from_str::<ApprovalRequest>(&text).ok(),
            Some(request)
        );
        assert!(serde_json::from_str::<ApprovalRequest>(
            r#"{"conversationId":"c","toolCallId":"t","approved":true,"force":1}"#
        )
        .is_err());
    }
}

//! The HTTP API's bodies as the browser sends and reads them.
//!
//! Platform-neutral so the shapes are tested natively; only the hydrate build sends them.
#![cfg_attr(not(feature = "hydrate"), allow(dead_code))]

use serde::Serialize;
use shared::{
    explain,
    http::{ApiCode, ErrorBody},
    lang::Lang,
    tools::{ErrorCode, ToolError},
};

// Sent and read by the hydrate build only.
#[cfg_attr(not(feature = "hydrate"), allow(unused_imports))]
pub use shared::http::{
    conversation_url, encode_component, stop_url, ApprovalRequest, ChatRequest,
    ConversationBody as Conversation, ReopenRequest, RunningReply, APPROVALS_URL, BOOKINGS_URL,
    CHAT_URL, REOPEN_URL, RUN_ID_HEADER,
};

/// Body of `POST /api/chat` that writes the last reply again.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegenerateRequest {
    /// The conversation whose last reply is written again.
    pub conversation_id: String,
    /// Always `regenerate-message` (the AI SDK's word for it).
    pub trigger: &'static str,
}

impl RegenerateRequest {
    /// The request for conversation `conversation_id`.
    pub fn new(conversation_id: String) -> Self {
        Self {
            conversation_id,
            trigger: "regenerate-message",
        }
    }
}

/// The sentence a person reads for a non-2xx answer, in `lang`, chosen by the answer's
/// `error.code` (and, for a refused edit, its issues). The server's `message` is written
/// for client developers in English and is never shown.
pub fn error_message(status: u16, body: &str, lang: Lang) -> String {
    // Through `Value`, as every other reader in the browser: serde_json's reader of text is
    // then instantiated for `Value` alone, not again for each type read.
    let read = serde_json::from_str::<serde_json::Value>(body).and_then(serde_json::from_value);
    let (code, issues) = match read {
        Ok(ErrorBody { error }) => (ApiCode::parse(&error.code), error.issues),
        Err(_) => (None, Vec::new()),
    };
    let Some(code) = code else {
        // No body, or a code of a newer server: the status is all there is to say.
        return match lang {
            Lang::Vi => format!("Máy chủ báo lỗi (mã {status}). Vui lòng thử lại."),
            Lang::En => format!("The server answered with an error ({status}). Please try again."),
        };
    };
    if code == ApiCode::ValidationError && !issues.is_empty() {
        let error = ToolError::new(ErrorCode::ValidationError, "").with_issues(issues);
        return format!(
            "{} {}",
            explain::reason(&error, lang),
            lang.pick(
                "Sửa lại rồi xác nhận; chưa có gì được thực hiện.",
                "Fix it and confirm again; nothing was done yet.",
            )
        );
    }
    // Every code has its sentence: a new code does not compile until it has one.
    let text = match code {
        ApiCode::ValidationError
        | ApiCode::BadRequest
        | ApiCode::InvalidId
        | ApiCode::NothingToAnswer
        | ApiCode::MethodNotAllowed
        | ApiCode::UnsupportedMediaType
        | ApiCode::UriTooLong
        | ApiCode::HeadersTooLarge => lang.pick(
            "Yêu cầu chưa hợp lệ nên chưa có gì được thực hiện.",
            "The request was not valid, so nothing was done.",
        ),
        ApiCode::PreviewChanged => lang.pick(
            "Thông tin đã thay đổi từ lúc bạn xem (ví dụ giờ này vừa kín chỗ). Chưa có gì được thực hiện — hãy xem lại mẫu xác nhận rồi quyết định.",
            "Things changed since you looked (for example the time slot filled up). Nothing was done — check the updated form and decide again.",
        ),
        ApiCode::AlreadyResolved => lang.pick(
            "Yêu cầu xác nhận này đã được trả lời rồi; không có gì được làm thêm.",
            "This confirmation was already answered; nothing more was done.",
        ),
        ApiCode::DecisionInProgress | ApiCode::RunInProgress => lang.pick(
            "Trợ lý vẫn đang xử lý yêu cầu trước. Đợi giây lát rồi thử lại.",
            "The assistant is still working on the previous request. Wait a moment and try again.",
        ),
        ApiCode::RateLimited => lang.pick(
            "Bạn gửi hơi nhanh. Đợi một chút rồi thử lại.",
            "You're sending messages a little fast. Wait a moment and try again.",
        ),
        ApiCode::TooManyRuns => lang.pick(
            "Bạn đang có quá nhiều câu trả lời chạy cùng lúc. Đợi một câu xong rồi thử lại.",
            "Too many replies are running for you at once. Wait for one to finish and try again.",
        ),
        ApiCode::NothingToRegenerate | ApiCode::NotLastReply => lang.pick(
            "Chỉ tạo lại được câu trả lời mới nhất. Hãy gửi một tin nhắn mới.",
            "Only the newest reply can be regenerated. Send a new message instead.",
        ),
        ApiCode::NotReopenable => lang.pick(
            "Không thể mở lại yêu cầu xác nhận này. Hãy nhắn cho trợ lý điều bạn muốn.",
            "This confirmation cannot be taken up again. Tell the assistant what you would like.",
        ),
        ApiCode::DuplicateMessage => lang.pick(
            "Tin nhắn này đã được gửi rồi; tải lại trang để xem câu trả lời.",
            "This message was already sent; reload the page to see the answer.",
        ),
        ApiCode::EmptyMessage => lang.pick("Tin nhắn đang trống.", "The message is empty."),
        ApiCode::MessageTooLong => lang.pick(
            "Tin nhắn quá dài. Hãy rút gọn rồi gửi lại.",
            "The message is too long. Shorten it and send again.",
        ),
        ApiCode::BodyTooLarge => lang.pick(
            "Nội dung gửi đi quá lớn.",
            "What was sent is too large.",
        ),
        ApiCode::RequestTimeout => lang.pick(
            "Kết nối quá chậm nên yêu cầu chưa đến nơi; chưa có gì thay đổi. Vui lòng thử lại.",
            "The request did not arrive in time; nothing changed. Please try again.",
        ),
        ApiCode::NotFound => lang.pick(
            "Không tìm thấy nội dung này (có thể nó thuộc về một phiên khác).",
            "This could not be found (it may belong to another session).",
        ),
        ApiCode::UnknownAssistant => lang.pick("Không có trợ lý này.", "There is no such assistant."),
        ApiCode::CrossSiteRequest => lang.pick(
            "Yêu cầu bị chặn vì không đến từ trang datban.",
            "The request was blocked because it did not come from datban's page.",
        ),
        ApiCode::ShuttingDown => lang.pick(
            "Máy chủ đang khởi động lại; chưa có gì thay đổi. Thử lại sau giây lát.",
            "The server is restarting; nothing changed. Try again in a moment.",
        ),
        ApiCode::NoPublicOrigin | ApiCode::StorageUnavailable | ApiCode::Internal => lang.pick(
            "Lỗi phía hệ thống; chưa có gì thay đổi. Vui lòng thử lại.",
            "Something went wrong on our side; nothing changed. Please try again.",
        ),
    };
    text.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use shared::http::stream_url;
    use shared::message::{MessagePart, Role, ToolPart};

    #[test]
    fn request_bodies_are_camel_case_and_skip_absent_fields() {
        let chat = ChatRequest {
            conversation_id: None,
            text: "Xin chào".into(),
            assistant: None,
        };
        assert_eq!(
            serde_json::to_value(&chat).unwrap(),
            json!({"text": "Xin chào"})
        );
        let first = ChatRequest {
            conversation_id: None,
            text: "Quà cho mẹ".into(),
            assistant: Some(shared::tools::Assistant::Gifts),
        };
        assert_eq!(
            serde_json::to_value(&first).unwrap(),
            json!({"text": "Quà cho mẹ", "assistant": "gifts"})
        );
        let approval = ApprovalRequest {
            conversation_id: "c1".into(),
            tool_call_id: "call_1".into(),
            approved: false,
            edited_input: None,
        };
        assert_eq!(
            serde_json::to_value(&approval).unwrap(),
            json!({"conversationId": "c1", "toolCallId": "call_1", "approved": false})
        );
    }

    #[test]
    fn error_bodies_are_told_by_code_never_by_the_servers_message() {
        let body = |code: &str| {
            format!(r#"{{"error":{{"code":"{code}","message":"English for developers"}}}}"#)
        };
        assert_eq!(
            error_message(400, &body("MESSAGE_TOO_LONG"), Lang::Vi),
            "Tin nhắn quá dài. Hãy rút gọn rồi gửi lại."
        );
        assert_eq!(
            error_message(429, &body("RATE_LIMITED"), Lang::En),
            "You're sending messages a little fast. Wait a moment and try again."
        );
        for code in [
            "VALIDATION_ERROR",
            "PREVIEW_CHANGED",
            "ALREADY_RESOLVED",
            "RUN_IN_PROGRESS",
            "TOO_MANY_RUNS",
            "NOT_FOUND",
            "INTERNAL",
            "SOMETHING_NEW",
        ] {
            for lang in [Lang::Vi, Lang::En] {
                let text = error_message(409, &body(code), lang);
                assert!(!text.contains("English for developers"), "{code}: {text}");
                assert!(!text.is_empty());
            }
        }
        assert_eq!(
            error_message(502, "<html>Bad gateway</html>", Lang::Vi),
            "Máy chủ báo lỗi (mã 502). Vui lòng thử lại."
        );
        assert_eq!(
            error_message(502, "<html>Bad gateway</html>", Lang::En),
            "The server answered with an error (502). Please try again."
        );
    }

    #[test]
    fn a_refused_edit_names_the_field_in_the_persons_words() {
        let body = r#"{"error":{"code":"VALIDATION_ERROR","message":"partySize: ...",
            "issues":[{"path":"partySize","message":"x",
            "rule":{"kind":"aboveMaximum","max":20,"exclusive":false}}]}}"#;
        assert_eq!(
            error_message(422, body, Lang::Vi),
            "Số người tối đa là 20. Sửa lại rồi xác nhận; chưa có gì được thực hiện."
        );
        assert!(error_message(422, body, Lang::En).starts_with("The party size can be at most 20."));
    }

    #[test]
    fn conversation_loads_with_typed_parts() {
        let body = json!({"id": "c1", "messages": [
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Đặt bàn"}]},
            {"id": "a1", "role": "assistant", "status": "awaiting-approval", "parts": [
                {"type": "step-start"},
                {"type": "tool", "tool": "createBooking", "id": "b1", "state": "approval-requested",
                 "input": {"restaurantId": "hn-1", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"}}
            ]}
        ]});
        let conversation: Conversation = serde_json::from_value(body).unwrap();
        assert_eq!(conversation.assistant, shared::tools::Assistant::Restaurant);
        assert_eq!(conversation.messages.len(), 2);
        assert_eq!(conversation.messages[0].role, Some(Role::User));
        let part = conversation.messages[1].tool_part("b1").unwrap();
        assert!(matches!(part, ToolPart::CreateBooking(_)));
        assert_eq!(part.state_name(), "approval-requested");
        assert!(matches!(
            conversation.messages[1].parts[0],
            MessagePart::StepStart
        ));
    }

    #[test]
    fn a_reply_being_written_says_where_to_pick_it_up() {
        let body = json!({"id": "c3", "messages": [], "running":
            {"messageId": "m1", "runId": "run_1", "after": 12}});
        let conversation: Conversation = serde_json::from_value(body).unwrap();
        assert_eq!(
            conversation.running,
            Some(RunningReply {
                message_id: "m1".into(),
                run_id: Some("run_1".into()),
                after: 12
            })
        );
        let idle: Conversation = serde_json::from_value(json!({"id": "c4"})).unwrap();
        assert_eq!(idle.running, None);
        assert_eq!(
            stream_url("c/1", 12, Some("run_1")),
            "/api/chat/c%2F1/stream?after=12&run=run_1"
        );
        assert_eq!(stream_url("c1", 0, None), "/api/chat/c1/stream?after=0");
    }

    #[test]
    fn conversation_names_its_assistant() {
        let body = json!({"id": "c2", "assistant": "shipping", "messages": []});
        let conversation: Conversation = serde_json::from_value(body).unwrap();
        assert_eq!(conversation.assistant, shared::tools::Assistant::Shipping);
    }

    #[test]
    fn bookings_list_reads_as_the_tools_output() {
        let body = json!({"bookings": [{
            "bookingId": "BK-1A2B3C4D", "restaurantName": "Chả Cá Thăng Long",
            "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00", "status": "cancelled"
        }]});
        let list: shared::tools::ListBookingsOutput = serde_json::from_value(body).unwrap();
        assert_eq!(list.bookings[0].booking_id, "BK-1A2B3C4D");
        assert_eq!(
            list.bookings[0].status,
            shared::tools::BookingState::Cancelled
        );
        assert_eq!(list.no_results_reason, None);
    }

    #[test]
    fn ids_are_encoded_in_paths() {
        assert_eq!(conversation_url("abc-123"), "/api/conversations/abc-123");
        assert_eq!(conversation_url("a/b?c"), "/api/conversations/a%2Fb%3Fc");
    }
}

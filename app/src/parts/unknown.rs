//! A call to a tool that does not exist: always an error, never run.

use shared::message::UnknownToolCall;

use super::error_notice;
use crate::view::PartView;

/// The part: the name the model used and, once the server rejected it, why.
pub fn render(call: UnknownToolCall) -> PartView {
    error_notice(
        format!("Trợ lý gọi một công cụ không có: {}", call.name),
        call.error,
    )
}

//! A call to a tool that does not exist: always an error, never run.

use shared::message::UnknownToolCall;

use super::error_notice;
use crate::view::PartView;

/// The part: the name the model used and, once the server rejected it, why.
pub fn render(call: UnknownToolCall) -> PartView {
    let title = crate::i18n::t(
        "Trợ lý gọi một công cụ không có: ",
        "The assistant called a tool that does not exist: ",
    );
    error_notice(format!("{title}{}", call.name), call.error)
}

//! Reading what tools return, and the small text helpers every planner's reply uses.

use super::read::Lang;
use serde_json::Value;
use shared::tools::{ErrorCode, ToolError};

/// Error messages come from tools; a bound keeps a runaway message out of the reply.
const QUOTED_MESSAGE_CHARS: usize = 300;

/// The English noun for `count` things: "1 restaurant", "2 restaurants" (a Vietnamese
/// noun does not change).
pub(super) fn plural(count: usize, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 {
        one
    } else {
        many
    }
}

pub(super) fn join_names(names: &[&str], lang: Lang) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} {} {last}", init.join(", "), lang.pick("và", "and")),
    }
}

/// A tool result as the model reads it.
#[derive(Debug, Clone)]
pub(super) enum Outcome {
    Ok(Value),
    /// The tool's error as the server wrote it: its code and issues are what the reply is
    /// built from, never its English message.
    Failed(ToolError),
    Unreadable,
}

pub(super) fn outcome(content: &str, is_error: bool) -> Outcome {
    let Ok(value) = serde_json::from_str::<Value>(content) else {
        return if is_error {
            Outcome::Failed(ToolError::new(ErrorCode::ExecutionFailed, content))
        } else {
            Outcome::Unreadable
        };
    };
    let ok = value.get("ok").and_then(Value::as_bool);
    if ok == Some(false) || (ok.is_none() && is_error) {
        let error = value
            .get("error")
            .cloned()
            .and_then(|error| serde_json::from_value::<ToolError>(error).ok())
            // An error of another shape (a provider's own) is at least a failure.
            .unwrap_or_else(|| ToolError::new(ErrorCode::ExecutionFailed, ""));
        Outcome::Failed(error)
    } else if value.is_object() {
        Outcome::Ok(value)
    } else {
        Outcome::Unreadable
    }
}

pub(super) fn text_field<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
}

/// The string value after `"key"` in text that is not valid JSON.
pub(super) fn quoted_field<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let needle = format!("\"{key}\"");
    let after_key = &text[text.find(&needle)? + needle.len()..];
    let after_colon = after_key.trim_start().strip_prefix(':')?.trim_start();
    let value = after_colon.strip_prefix('"')?;
    Some(&value[..value.find('"')?])
}

/// A tool's message, one line, bounded, without a trailing full stop (the reply adds one).
pub(super) fn trim_message(message: &str) -> String {
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut bounded: String = line.chars().take(QUOTED_MESSAGE_CHARS).collect();
    if bounded.len() < line.len() {
        bounded.push('…');
    }
    bounded.trim_end_matches('.').to_owned()
}

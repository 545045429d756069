//! What the offline model's tests share: a pinned clock, requests per assistant, and turns
//! reassembled from their events the way the agent loop does.

use super::{OfflineModel, SEARCH_RESTAURANTS, SUGGEST_GIFTS};
use crate::model::{FinishReason, ModelEvent, ModelMessage, ModelRequest, ProposedCall, ToolSpec};
use chrono::{DateTime, FixedOffset, NaiveDate};
use serde_json::{json, Value};
use shared::tools::{Assistant, ToolName};
use std::time::Duration;

/// 2026-11-29T10:00:00+07:00, built when compiling: a date that does not exist fails the
/// build, not a test.
const NOW: DateTime<FixedOffset> = {
    let (Some(date), Some(offset)) = (
        NaiveDate::from_ymd_opt(2026, 11, 29),
        FixedOffset::east_opt(7 * 3600),
    ) else {
        panic!("not a date");
    };
    // 10:00 in Hà Nội is 03:00 UTC.
    let Some(utc) = date.and_hms_opt(3, 0, 0) else {
        panic!("not a time");
    };
    DateTime::from_naive_utc_and_offset(utc, offset)
};

pub(super) fn now() -> DateTime<FixedOffset> {
    NOW
}

pub(super) fn model() -> OfflineModel {
    OfflineModel::new(Duration::ZERO).with_now(now())
}

/// The tools a conversation with `assistant` offers, as the agent builds them.
pub(super) fn tools_of(assistant: Assistant) -> Vec<ToolSpec> {
    assistant
        .tools()
        .into_iter()
        .map(|tool| ToolSpec {
            name: tool.as_str().to_owned(),
            description: tool.definition().description.to_owned(),
            parameters: tool.input_schema(),
        })
        .collect()
}

pub(super) fn request_for(assistant: Assistant, messages: Vec<ModelMessage>) -> ModelRequest {
    ModelRequest {
        system: "You are datban.".into(),
        messages,
        tools: tools_of(assistant).into(),
    }
}

/// A request of the restaurant assistant, the default one.
pub(super) fn request(messages: Vec<ModelMessage>) -> ModelRequest {
    request_for(Assistant::Restaurant, messages)
}

pub(super) fn user(text: &str) -> ModelMessage {
    ModelMessage::User { text: text.into() }
}

pub(super) fn tool_result(call_id: &str, name: &str, content: &Value) -> ModelMessage {
    ModelMessage::ToolResult {
        call_id: call_id.into(),
        name: name.into(),
        content: content.to_string(),
        is_error: content["ok"] == json!(false),
    }
}

/// One planned turn, reassembled from its events the way the agent loop does.
#[derive(Debug)]
pub(super) struct Turn {
    pub(super) text: String,
    pub(super) text_pieces: Vec<String>,
    pub(super) calls: Vec<ProposedCall>,
    pub(super) argument_pieces: Vec<String>,
    pub(super) finish: FinishReason,
}

impl Turn {
    pub(super) fn only_call(&self) -> &ProposedCall {
        assert_eq!(self.calls.len(), 1, "{self:?}");
        &self.calls[0]
    }

    pub(super) fn assistant(&self) -> ModelMessage {
        ModelMessage::Assistant {
            text: self.text.clone(),
            calls: self.calls.clone(),
        }
    }
}

pub(super) fn assemble(events: &[ModelEvent]) -> Turn {
    let mut turn = Turn {
        text: String::new(),
        text_pieces: Vec::new(),
        calls: Vec::new(),
        argument_pieces: Vec::new(),
        finish: FinishReason::Other,
    };
    let mut open: Option<ProposedCall> = None;
    let Some((last, body)) = events.split_last() else {
        panic!("a turn has events");
    };
    for event in body {
        match event {
            ModelEvent::TextDelta(delta) => {
                assert!(open.is_none() && turn.calls.is_empty(), "text comes first");
                turn.text.push_str(delta);
                turn.text_pieces.push(delta.clone());
            }
            ModelEvent::ToolCallStart { id, name } => {
                assert!(open.is_none(), "calls do not nest");
                open = Some(ProposedCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: String::new(),
                });
            }
            ModelEvent::ToolCallDelta { id, delta } => {
                let open_id = open.as_ref().map(|call| &call.id);
                assert_eq!(open_id, Some(id), "a delta belongs to the open call");
                if let Some(call) = open.as_mut() {
                    call.arguments.push_str(delta);
                }
                turn.argument_pieces.push(delta.clone());
            }
            ModelEvent::ToolCallEnd { id } => {
                let open_id = open.as_ref().map(|call| &call.id);
                assert_eq!(open_id, Some(id), "an end closes the open call");
                turn.calls.extend(open.take());
            }
            ModelEvent::Finish(_) => panic!("Finish must be the last event"),
        }
    }
    assert!(open.is_none(), "every call is closed");
    let ModelEvent::Finish(reason) = last else {
        panic!("the last event must be Finish, got {last:?}");
    };
    turn.finish = *reason;
    turn
}

pub(super) fn plan(messages: Vec<ModelMessage>) -> Turn {
    assemble(&model().plan_turn(&request(messages)))
}

/// A turn planned with the clock at `now` (RFC 3339, e.g. "2026-12-03T10:00:00+07:00").
pub(super) fn plan_at(now: &str, messages: Vec<ModelMessage>) -> Turn {
    let Ok(now) = DateTime::parse_from_rfc3339(now) else {
        panic!("{now:?} is not an RFC 3339 time");
    };
    let model = OfflineModel::new(Duration::ZERO).with_now(now);
    assemble(&model.plan_turn(&request(messages)))
}

pub(super) fn plan_for(assistant: Assistant, messages: Vec<ModelMessage>) -> Turn {
    let turn = assemble(&model().plan_turn(&request_for(assistant, messages)));
    for call in &turn.calls {
        let tool = ToolName::parse(&call.name);
        assert!(
            tool.is_some_and(|tool| assistant.allows(tool)),
            "{assistant} was not offered {}",
            call.name
        );
    }
    turn
}

pub(super) fn arguments(call: &ProposedCall) -> Value {
    serde_json::from_str(&call.arguments)
        .unwrap_or_else(|error| panic!("{} is not JSON: {error}", call.arguments))
}

pub(super) fn hanoi_search() -> Value {
    json!({"ok": true, "restaurants": [
        {"id": "hn-bun-cha-huong-lien", "name": "Bún Chả Hương Liên",
         "address": "24 Lê Văn Hưu, Hai Bà Trưng", "city": "Hà Nội", "cuisine": "bún chả",
         "priceLevel": 1, "openingHours": "08:00–20:30", "freeSlots": []},
        {"id": "hn-cha-ca-thang-long", "name": "Chả Cá Thăng Long",
         "address": "21 Đường Thành, Hoàn Kiếm", "city": "Hà Nội", "cuisine": "chả cá",
         "priceLevel": 2, "openingHours": "10:00–22:00", "freeSlots": [
            {"startsAt": "2026-11-30T18:00:00+07:00", "seatsLeft": 6},
            {"startsAt": "2026-11-30T19:30:00+07:00", "seatsLeft": 4}]}
    ]})
}

/// `search_text` from the person, the search it made and [`hanoi_search`]'s results.
pub(super) fn searched(search_text: &str) -> Vec<ModelMessage> {
    searched_with(search_text, &hanoi_search())
}

/// `search_text` from the person, the search it made and `result` as the search's.
pub(super) fn searched_with(search_text: &str, result: &Value) -> Vec<ModelMessage> {
    let mut history = vec![user(search_text)];
    let search = plan(history.clone());
    assert_eq!(search.only_call().name, SEARCH_RESTAURANTS, "{search_text}");
    history.push(search.assistant());
    history.push(tool_result(
        &search.only_call().id,
        SEARCH_RESTAURANTS,
        result,
    ));
    history
}

/// A conversation that searched with `search_text`, the listing, then `text`.
pub(super) fn after_search_for(search_text: &str, text: &str) -> Vec<ModelMessage> {
    let mut history = searched(search_text);
    let listing = plan(history.clone());
    assert!(listing.calls.is_empty(), "{search_text}");
    history.push(listing.assistant());
    history.push(user(text));
    history
}

/// A conversation that searched Hà Nội, then `text` from the person.
pub(super) fn after_search(text: &str) -> Vec<ModelMessage> {
    after_search_for("Tìm nhà hàng ở Hà Nội", text)
}

/// The result the agent loop gives the model for `tool` called with `raw`: the real
/// validator's error, with its issues (the call must be invalid).
pub(super) fn validation_error(tool: &str, raw: &str) -> Value {
    let ctx = shared::tools::ValidationContext {
        now: now().with_timezone(&chrono::Utc),
    };
    let Some(name) = ToolName::parse(tool) else {
        panic!("there is no tool {tool:?}");
    };
    let Err(invalid) = shared::tools::validate_arguments(name, raw, &ctx) else {
        panic!("{raw} is valid for {tool}, so it has no validation error");
    };
    let error = shared::tools::ToolError::from(invalid);
    json!({"ok": false, "error": error})
}

/// The person asks to book without a party size; the model proposes the call anyway.
pub(super) fn incident_history() -> (Vec<ModelMessage>, ProposedCall) {
    let mut history = after_search("đặt bàn ở Chả Cá Thăng Long tối mai lúc 19:00");
    let booking = plan(history.clone());
    let call = booking.only_call().clone();
    history.push(booking.assistant());
    (history, call)
}

pub(super) fn failed(code: &str, message: &str) -> Value {
    json!({"ok": false, "error": {"code": code, "message": message, "retryable": false}})
}

/// What the server puts in the history when the person declines a call.
pub(super) fn declined() -> Value {
    failed(
        "DECLINED",
        "The user declined this call, so nothing was done. Ask what they would like to \
         change.",
    )
}

/// `text`, a call the model planned for it, that call's result, and the reply to it.
pub(super) fn after_result(
    assistant: Assistant,
    text: &str,
    name: &str,
    result: &Value,
) -> (Vec<ModelMessage>, Turn) {
    let mut history = vec![user(text)];
    let first = plan_for(assistant, history.clone());
    let call = first.only_call().clone();
    assert_eq!(call.name, name, "{first:?}");
    history.push(first.assistant());
    history.push(tool_result(&call.id, name, result));
    let reply = plan_for(assistant, history.clone());
    (history, reply)
}

pub(super) fn gift_ideas() -> Value {
    json!({"ok": true, "gifts": [
        {"gift_id": "g-tea-set", "name": "Bộ ấm trà gốm Bát Tràng",
         "description": "Ấm và bốn chén.", "price_vnd": 450000, "matched_interests": ["tea"]},
        {"gift_id": "g-garden-kit", "name": "Bộ dụng cụ làm vườn mini",
         "description": "Xẻng, cào và găng tay.", "price_vnd": 320000,
         "matched_interests": ["gardening"]},
        {"gift_id": "g-bonsai-book", "name": "Sách Cây cảnh cho người mới",
         "description": "Sách hướng dẫn.", "price_vnd": 1250000, "matched_interests": []}
    ]})
}

pub(super) fn draft(draft_id: &str) -> Value {
    json!({"ok": true, "draft_id": draft_id, "gift_id": "g-garden-kit",
           "gift_name": "Bộ dụng cụ làm vườn mini", "price_vnd": 320000,
           "delivery_vnd": 30000, "total_vnd": 350000, "fictional": true})
}

/// A gifts conversation that got `gift_ideas()`, then `text` from the person.
pub(super) fn after_gift_ideas(text: &str) -> Vec<ModelMessage> {
    let (mut history, listing) = after_result(
        Assistant::Gifts,
        "Gợi ý quà cho mẹ thích trà và làm vườn",
        SUGGEST_GIFTS,
        &gift_ideas(),
    );
    history.push(listing.assistant());
    history.push(user(text));
    history
}

#[test]
fn the_pinned_clock_is_the_time_it_says() {
    assert_eq!(
        DateTime::parse_from_rfc3339("2026-11-29T10:00:00+07:00").ok(),
        Some(now())
    );
}

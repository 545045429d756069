//! Tests of `plan_gifts`.

use super::super::testing::{
    after_gift_ideas, after_result, arguments, declined, draft, failed, gift_ideas, plan_for,
    tool_result, user, validation_error,
};
use super::*;
use crate::model::{FinishReason, ProposedCall};
use serde_json::json;
use shared::tools::Assistant;

fn checkout(draft_id: &str) -> Value {
    json!({"ok": true, "checkout_id": "chk_9P3Q", "draft_id": draft_id,
           "gift_name": "Bộ dụng cụ làm vườn mini", "total_vnd": 350000,
           "payment_reference": "FAKE-PAY-0001", "fictional": true})
}

/// The whole purchase: ideas, "mua món 2", the draft, the checkout call, its result.
fn purchase(text: &str, draft_id: &str) -> (Vec<ModelMessage>, ProposedCall) {
    let mut history = after_gift_ideas(text);
    let prepare = plan_for(Assistant::Gifts, history.clone());
    let call = prepare.only_call().clone();
    assert_eq!(call.name, PREPARE_CHECKOUT);
    assert_eq!(call.arguments, r#"{"gift_id":"g-garden-kit"}"#);
    history.push(prepare.assistant());
    history.push(tool_result(&call.id, PREPARE_CHECKOUT, &draft(draft_id)));
    let commit = plan_for(Assistant::Gifts, history.clone());
    let call = commit.only_call().clone();
    assert_eq!(commit.finish, FinishReason::ToolCalls);
    history.push(commit.assistant());
    (history, call)
}

#[test]
fn gift_requests_become_suggest_gifts_arguments() -> serde_json::Result<()> {
    let cases = [
        (
            "Gợi ý quà cho mẹ 55 tuổi thích làm vườn, dưới 1 triệu",
            json!({"relationship_type": "parent", "age": 55, "interests": ["gardening"],
                   "budget_max": 1000000}),
        ),
        (
            "Quà sinh nhật cho vợ, cô ấy thích đọc sách và cà phê, từ 300k đến 800k",
            json!({"relationship_type": "partner", "interests": ["reading", "coffee"],
                   "budget_min": 300000, "budget_max": 800000}),
        ),
        (
            "Tìm quà tặng bạn trai thích lặn biển và chụp ảnh khoảng 500k",
            json!({"relationship_type": "partner", "interests": ["diving", "photography"],
                   "budget_min": 400000, "budget_max": 600000}),
        ),
        (
            "quà cho con trai 8 tuổi thích game, 300k-800k",
            json!({"relationship_type": "child", "age": 8, "interests": ["games"],
                   "budget_min": 300000, "budget_max": 800000}),
        ),
        (
            "quà cho ông nội 80 tuổi thích trà, dưới 50k",
            json!({"relationship_type": "grandparent", "age": 80, "interests": ["tea"],
                   "budget_max": 50000}),
        ),
        (
            "quà cho đồng nghiệp thích âm nhạc dưới 1,5 triệu",
            json!({"relationship_type": "colleague", "interests": ["music"],
                   "budget_max": 1500000}),
        ),
        (
            "quà tặng cô giáo thích vẽ, 1.5tr",
            json!({"relationship_type": "teacher", "interests": ["art"],
                   "budget_max": 1500000}),
        ),
        (
            "quà cho em gái thích thời trang và làm đẹp",
            json!({"relationship_type": "sibling", "interests": ["fashion", "beauty"]}),
        ),
        (
            "quà cho bạn thân thích du lịch, thể thao và công nghệ",
            json!({"relationship_type": "friend", "interests": ["travel", "sports", "tech"]}),
        ),
        (
            "Bạn gợi ý giúp mình quà cho ba, ba thích nấu ăn",
            json!({"relationship_type": "parent", "interests": ["cooking"]}),
        ),
        (
            "quà cho con ba tuổi",
            json!({"relationship_type": "child", "age": 3}),
        ),
        (
            "quà cho sếp 500.000đ",
            json!({"relationship_type": "colleague", "budget_max": 500000}),
        ),
        (
            "A gift for my father, 60 years old, who loves gardening and coffee, under 500k",
            json!({"relationship_type": "parent", "age": 60,
                   "interests": ["gardening", "coffee"], "budget_max": 500000}),
        ),
        (
            "present for my wife who likes diving, between 300k and 800k",
            json!({"relationship_type": "partner", "interests": ["diving"],
                   "budget_min": 300000, "budget_max": 800000}),
        ),
        (
            "gift ideas for a 30-year-old colleague into photography",
            json!({"relationship_type": "colleague", "age": 30,
                   "interests": ["photography"]}),
        ),
        (
            "a gift for my teacher, about 1 million",
            json!({"relationship_type": "teacher", "budget_min": 800000,
                   "budget_max": 1200000}),
        ),
    ];
    for (text, expected) in cases {
        let turn = plan_for(Assistant::Gifts, vec![user(text)]);
        let call = turn.only_call();
        assert_eq!(call.name, SUGGEST_GIFTS, "{text}");
        assert_eq!(arguments(call), expected, "{text}");
        // What the model sends is what the tool accepts.
        let input: shared::tools::SuggestGiftsInput = serde_json::from_str(&call.arguments)?;
        assert_eq!(serde_json::to_value(input)?, expected, "{text}");
    }
    let turn = plan_for(Assistant::Gifts, vec![user("Gợi ý quà cho mẹ")]);
    assert_eq!(turn.text, "Để tôi tìm vài món quà phù hợp…");
    let turn = plan_for(Assistant::Gifts, vec![user("gift for my mom")]);
    assert_eq!(turn.text, "Let me find some gift ideas…");
    Ok(())
}

#[test]
fn a_gift_request_without_a_recipient_asks_who_then_uses_the_answer() {
    for (text, question) in [
        ("Gợi ý quà dưới 500k", "Món quà dành cho ai?"),
        ("Bạn gợi ý quà giúp mình nhé", "Món quà dành cho ai?"),
        ("I need a gift, under 500k", "Who is the gift for?"),
    ] {
        let turn = plan_for(Assistant::Gifts, vec![user(text)]);
        assert!(turn.calls.is_empty(), "{text}: {turn:?}");
        assert_eq!(turn.text, question, "{text}");
        assert_eq!(turn.finish, FinishReason::Stop);
    }
    let mut history = vec![user("Gợi ý quà dưới 500k")];
    let question = plan_for(Assistant::Gifts, history.clone());
    history.push(question.assistant());
    history.push(user("mẹ tôi, 60 tuổi, thích trà"));
    let turn = plan_for(Assistant::Gifts, history);
    assert_eq!(
        arguments(turn.only_call()),
        json!({"relationship_type": "parent", "age": 60, "interests": ["tea"],
               "budget_max": 500000})
    );
}

#[test]
fn a_refinement_keeps_who_the_gift_is_for() {
    let history = after_gift_ideas("dưới 400k thôi");
    let turn = plan_for(Assistant::Gifts, history);
    assert_eq!(
        arguments(turn.only_call()),
        json!({"relationship_type": "parent", "interests": ["tea", "gardening"],
               "budget_max": 400000})
    );
}

#[test]
fn gift_ideas_are_listed_with_prices_or_the_reason_given() {
    let (_, reply) = after_result(
        Assistant::Gifts,
        "Gợi ý quà cho mẹ thích trà",
        SUGGEST_GIFTS,
        &gift_ideas(),
    );
    assert_eq!(
        reply.text,
        "Tôi gợi ý 3 món quà:\n\
         1. Bộ ấm trà gốm Bát Tràng — 450.000 ₫\n\
         2. Bộ dụng cụ làm vườn mini — 320.000 ₫\n\
         3. Sách Cây cảnh cho người mới — 1.250.000 ₫\n\n\
         Bạn muốn mua món nào? Ví dụ: \"mua món 1\"."
    );
    assert!(reply.calls.is_empty());
    let nothing = json!({"ok": true, "gifts": [],
        "no_results_reason": "No gifts under 50.000 ₫ for a parent; try a higher budget."});
    let (_, reply) = after_result(
        Assistant::Gifts,
        "quà cho bố dưới 50k",
        SUGGEST_GIFTS,
        &nothing,
    );
    assert_eq!(
        reply.text,
        "Không tìm thấy món quà phù hợp: No gifts under 50.000 ₫ for a parent; try a higher \
         budget. Bạn thử đổi ngân sách hoặc sở thích nhé."
    );
    let (_, reply) = after_result(
        Assistant::Gifts,
        "gift for my dad under 50k",
        SUGGEST_GIFTS,
        &nothing,
    );
    assert!(reply.text.starts_with("No gifts matched: No gifts under"));
    let (_, reply) = after_result(
        Assistant::Gifts,
        "gift for my dad",
        SUGGEST_GIFTS,
        &validation_error(
            SUGGEST_GIFTS,
            r#"{"relationship_type":"parent","interests":["golf"],"budget_min":500000,"budget_max":100000}"#,
        ),
    );
    assert_eq!(
        reply.text,
        "Sorry, I couldn't get gift ideas: The lowest budget is above the highest."
    );
}

#[test]
fn buying_names_the_gift_by_position_or_name() {
    for (text, gift_id) in [
        ("Mua món đầu tiên", "g-tea-set"),
        ("mua món 1", "g-tea-set"),
        ("chọn món số 2", "g-garden-kit"),
        ("Lấy món thứ hai nhé", "g-garden-kit"),
        ("mua món cuối cùng", "g-bonsai-book"),
        ("món số 3", "g-bonsai-book"),
        ("mua bộ dụng cụ làm vườn mini", "g-garden-kit"),
        ("buy the first one", "g-tea-set"),
        ("buy #2", "g-garden-kit"),
        ("I'll take the third one", "g-bonsai-book"),
    ] {
        let turn = plan_for(Assistant::Gifts, after_gift_ideas(text));
        let call = turn.only_call();
        assert_eq!(call.name, PREPARE_CHECKOUT, "{text}");
        assert_eq!(
            call.arguments,
            format!(r#"{{"gift_id":"{gift_id}"}}"#),
            "{text}"
        );
    }
    let turn = plan_for(Assistant::Gifts, after_gift_ideas("mua món 2"));
    assert_eq!(
        turn.text,
        "Tôi chuẩn bị bản nháp thanh toán (giả lập) cho Bộ dụng cụ làm vườn mini (320.000 ₫)…"
    );
}

#[test]
fn buying_without_a_clear_gift_asks_which() {
    // No suggestion yet.
    for (text, question) in [
        (
            "Mua món đầu tiên",
            "Bạn muốn mua món quà nào? Tôi chưa gợi ý món nào — món quà dành cho ai?",
        ),
        (
            "buy #2",
            "Which gift would you like to buy? I haven't suggested any yet — who is the \
             gift for?",
        ),
    ] {
        let turn = plan_for(Assistant::Gifts, vec![user(text)]);
        assert!(turn.calls.is_empty(), "{text}");
        assert_eq!(turn.text, question);
    }
    // Answering that question asks for gift ideas.
    let mut history = vec![user("Mua món đầu tiên")];
    let question = plan_for(Assistant::Gifts, history.clone());
    history.push(question.assistant());
    history.push(user("bố tôi"));
    assert_eq!(
        arguments(plan_for(Assistant::Gifts, history).only_call()),
        json!({"relationship_type": "parent"})
    );
    // A list, but which one?
    let turn = plan_for(Assistant::Gifts, after_gift_ideas("mua"));
    assert!(turn.calls.is_empty());
    assert_eq!(
        turn.text,
        "Bạn muốn mua món nào? Hãy chọn một số từ 1 đến 3 (ví dụ: \"mua món 1\")."
    );
    let turn = plan_for(Assistant::Gifts, after_gift_ideas("mua món 7"));
    assert!(turn.calls.is_empty());
    assert_eq!(
        turn.text,
        "Danh sách gợi ý chỉ có 3 món. Bạn muốn mua món số mấy?"
    );
}

#[test]
fn a_purchase_prepares_a_draft_then_commits_it_with_a_key_from_the_draft() -> serde_json::Result<()>
{
    let (history, call) = purchase("mua món 2", "drf_7K2M");
    assert_eq!(call.name, CREATE_CHECKOUT_SESSION);
    assert_eq!(
        call.arguments,
        r#"{"draft_id":"drf_7K2M","idempotency_key":"checkout-drf_7K2M"}"#
    );
    let input: shared::tools::CreateCheckoutSessionInput = serde_json::from_str(&call.arguments)?;
    assert_eq!(input.idempotency_key, "checkout-drf_7K2M");
    let Some(ModelMessage::Assistant { text, .. }) = history.last() else {
        panic!("the last message is the model's");
    };
    assert_eq!(
        text,
        "Bản nháp thanh toán (giả lập) cho Bộ dụng cụ làm vườn mini: 320.000 ₫ + phí giao \
         30.000 ₫ = 350.000 ₫. Tôi tạo phiên thanh toán; bạn xác nhận trong biểu mẫu trước \
         khi có gì xảy ra…"
    );

    let mut done = history.clone();
    done.push(tool_result(
        &call.id,
        CREATE_CHECKOUT_SESSION,
        &checkout("drf_7K2M"),
    ));
    let reply = plan_for(Assistant::Gifts, done);
    assert_eq!(
        reply.text,
        "Đã tạo thanh toán (giả lập) chk_9P3Q cho Bộ dụng cụ làm vườn mini: 350.000 ₫. \
         Không có tiền thật nào bị trừ."
    );
    assert!(reply.calls.is_empty());
    assert_eq!(reply.finish, FinishReason::Stop);

    // English, and a result without the name or total: both come from the draft.
    let (mut history, call) = purchase("buy #2", "drf_7K2M");
    history.push(tool_result(
        &call.id,
        CREATE_CHECKOUT_SESSION,
        &json!({"ok": true, "checkout_id": "chk_1"}),
    ));
    assert_eq!(
        plan_for(Assistant::Gifts, history).text,
        "Created a simulated checkout chk_1 for Bộ dụng cụ làm vườn mini: 350.000 ₫. No real \
         money was charged."
    );
    Ok(())
}

#[test]
fn buying_the_same_draft_again_reuses_the_idempotency_key() {
    let (mut history, first) = purchase("mua món 2", "drf_7K2M");
    history.push(tool_result(&first.id, CREATE_CHECKOUT_SESSION, &declined()));
    let reply = plan_for(Assistant::Gifts, history.clone());
    assert_eq!(reply.text, "Chưa mua gì cả.");
    assert!(reply.calls.is_empty());
    history.push(reply.assistant());

    // The person changes their mind: the same gift gives the same open draft.
    history.push(user("mua món 2"));
    let prepare = plan_for(Assistant::Gifts, history.clone());
    let call = prepare.only_call().clone();
    assert_eq!(call.arguments, r#"{"gift_id":"g-garden-kit"}"#);
    history.push(prepare.assistant());
    history.push(tool_result(&call.id, PREPARE_CHECKOUT, &draft("drf_7K2M")));
    let again = plan_for(Assistant::Gifts, history.clone());
    assert_eq!(again.only_call().name, CREATE_CHECKOUT_SESSION);
    assert_eq!(again.only_call().arguments, first.arguments);
    assert_ne!(again.only_call().id, first.id);

    // A new draft gets a new key.
    let (_, other) = purchase("mua món 2", "drf_9X");
    assert_eq!(
        other.arguments,
        r#"{"draft_id":"drf_9X","idempotency_key":"checkout-drf_9X"}"#
    );
    assert_eq!(checkout_key("drf 1/ä"), "checkout-drf-1--");
}

#[test]
fn a_failed_or_declined_checkout_says_nothing_was_bought() {
    for (text, result, expected) in [
        ("mua món 2", declined(), "Chưa mua gì cả."),
        ("buy #2", declined(), "Nothing was bought."),
        (
            "mua món 2",
            failed("DRAFT_ALREADY_COMMITTED", "This draft was already bought."),
            "Chưa mua được: Đơn quà này đã được mua rồi.",
        ),
        (
            "buy #2",
            failed(
                "IDEMPOTENCY_KEY_IN_USE",
                "A checkout with this key is still running.",
            ),
            "Nothing was bought: The same request is still running.",
        ),
        (
            "mua món 2",
            json!({"ok": true, "draft_id": "drf_7K2M"}),
            "Kết quả thanh toán không có mã thanh toán, nên tôi không thể xác nhận là đã mua.",
        ),
    ] {
        let (mut history, call) = purchase(text, "drf_7K2M");
        history.push(tool_result(&call.id, CREATE_CHECKOUT_SESSION, &result));
        let reply = plan_for(Assistant::Gifts, history);
        assert_eq!(reply.text, expected, "{result}");
        assert!(reply.calls.is_empty());
        assert!(!reply.text.contains("Đã tạo"), "{}", reply.text);
    }
    // A failed draft does not go on to checkout.
    let mut history = after_gift_ideas("mua món 2");
    let prepare = plan_for(Assistant::Gifts, history.clone());
    history.push(prepare.assistant());
    history.push(tool_result(
        &prepare.only_call().id,
        PREPARE_CHECKOUT,
        &json!({"ok": false, "error": {"code": "NOT_FOUND", "message": "No gift g-garden-kit.",
            "retryable": false, "issues": [{"path": "gift_id", "message": "no such gift",
            "rule": {"kind": "noSuch", "entity": "gift"}}]}}),
    ));
    let reply = plan_for(Assistant::Gifts, history);
    assert_eq!(reply.text, "Chưa mua được: Không tìm thấy món quà này.");
    assert!(reply.calls.is_empty());
}

//! Tests of `planner`.

use super::super::testing::{
    after_gift_ideas, arguments, assemble, draft, model, plan, plan_for, request, tool_result,
    user, validation_error,
};
use super::*;
use crate::model::FinishReason;
use serde_json::json;
use shared::tools::Assistant;

fn call_message(id: &str, name: &str, arguments: &str) -> ModelMessage {
    ModelMessage::Assistant {
        text: String::new(),
        calls: vec![ProposedCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }],
    }
}

#[test]
fn odd_tool_results_do_not_panic() {
    for content in [
        "",
        "not json",
        "[]",
        "{\"ok\":true}",
        "{\"ok\":true,\"days\":7}",
        "null",
        "{\"ok\":true,\"gifts\":7,\"bookings\":[1,\"x\"],\"booking\":\"x\"}",
        "{\"ok\":true,\"draft_id\":5,\"checkout_id\":[],\"amount\":7}",
        "{\"ok\":true,\"gifts\":[{\"gift_id\":1}],\"bookings\":[{}]}",
    ] {
        for name in [
            GET_WEATHER,
            SEARCH_RESTAURANTS,
            CREATE_BOOKING,
            LIST_BOOKINGS,
            CANCEL_BOOKING,
            SUGGEST_GIFTS,
            PREPARE_CHECKOUT,
            CREATE_CHECKOUT_SESSION,
            SHIPPING_QUOTE,
            "launchRocket",
        ] {
            for is_error in [false, true] {
                let history = vec![
                    user("đặt bàn ở Hà Nội"),
                    ModelMessage::Assistant {
                        text: String::new(),
                        calls: vec![ProposedCall {
                            id: "call_1_0".into(),
                            name: name.into(),
                            arguments: "{\"city\":".into(),
                        }],
                    },
                    ModelMessage::ToolResult {
                        call_id: "call_1_0".into(),
                        name: name.into(),
                        content: content.into(),
                        is_error,
                    },
                ];
                let turn = plan(history);
                assert!(!turn.text.is_empty());
                if name == CREATE_BOOKING {
                    assert!(!turn.text.contains("thành công"), "{}", turn.text);
                }
                assert!(!turn.text.contains("Đã huỷ"), "{}", turn.text);
                assert!(!turn.text.contains("Đã tạo thanh toán"), "{}", turn.text);
                assert!(!turn.text.contains("Phí giao hàng"), "{}", turn.text);
            }
        }
    }
}

#[test]
fn trigger_unknown_tool() {
    let turn = plan(vec![user("#unknown-tool")]);
    let call = turn.only_call();
    assert_eq!(call.name, "launchRocket");
    assert_eq!(call.arguments, "{}");
    let after = plan(vec![
        user("#unknown-tool"),
        turn.assistant(),
        tool_result(
            &call.id,
            "launchRocket",
            &json!({"ok": false, "error": {
            "code": "UNKNOWN_TOOL",
            "message": "Unknown tool launchRocket; available: getWeather, searchRestaurants",
            "retryable": false}}),
        ),
    ]);
    assert!(after.calls.is_empty());
    assert!(
        after.text.starts_with(
            "Sorry, I tried to use a tool that doesn't exist (launchRocket): The assistant \
             asked for something it cannot do."
        ),
        "{}",
        after.text
    );
}

#[test]
fn trigger_bad_json() {
    let turn = plan(vec![user("đặt bàn #bad-json")]);
    let call = turn.only_call();
    assert_eq!(call.name, CREATE_BOOKING);
    assert_eq!(
        call.arguments,
        r#"{"restaurantId": "hn-cha-ca-thang-long", "partySize": }"#
    );
    assert!(serde_json::from_str::<Value>(&call.arguments).is_err());
    let after = plan(vec![
        user("đặt bàn #bad-json"),
        turn.assistant(),
        tool_result(
            &call.id,
            CREATE_BOOKING,
            &validation_error(CREATE_BOOKING, &call.arguments),
        ),
    ]);
    assert!(after.calls.is_empty());
    assert_eq!(
        after.text,
        "Chưa có bàn nào được đặt: Trợ lý gửi thông tin không đúng dạng."
    );
}

#[test]
fn trigger_tool_error() {
    let turn = plan(vec![user("weather #tool-error")]);
    let call = turn.only_call();
    assert_eq!(call.name, GET_WEATHER);
    assert_eq!(arguments(call), json!({"city": "#fail"}));
    let after = plan(vec![
        user("weather #tool-error"),
        turn.assistant(),
        tool_result(
            &call.id,
            GET_WEATHER,
            &json!({"ok": false, "error": {
            "code": "EXECUTION_FAILED", "message": "The weather service failed.",
            "retryable": false}}),
        ),
    ]);
    assert!(after.calls.is_empty());
    assert_eq!(
        after.text,
        "Sorry, I couldn't get the weather forecast for #fail: Our system failed while doing it."
    );
}

#[test]
fn trigger_loop_keeps_calling() {
    let mut history = vec![user("#loop")];
    for turn_number in 1..=4 {
        let turn = plan(history.clone());
        let call = turn.only_call();
        assert_eq!(call.name, GET_WEATHER);
        assert_eq!(call.id, format!("call_{turn_number}_0"));
        assert_eq!(arguments(call), json!({"city": "Hà Nội"}));
        assert_eq!(turn.finish, FinishReason::ToolCalls);
        history.push(turn.assistant());
        history.push(tool_result(
            &call.id,
            GET_WEATHER,
            &json!({"ok": true, "city": "Hà Nội", "days": []}),
        ));
    }
    // A new message without the trigger ends the loop.
    history.push(user("thanks"));
    assert!(plan(history).calls.is_empty());
}

#[test]
fn trigger_bad_args_keeps_proposing_the_same_invalid_call() {
    let mut history = vec![user("#bad-args")];
    for _ in 0..3 {
        let turn = plan(history.clone());
        let call = turn.only_call();
        assert_eq!(call.name, CREATE_BOOKING);
        assert_eq!(
            call.arguments,
            r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":"bốn","startsAt":"tối mai"}"#
        );
        history.push(turn.assistant());
        history.push(tool_result(
            &call.id,
            CREATE_BOOKING,
            &validation_error(CREATE_BOOKING, &call.arguments),
        ));
    }
}

#[test]
fn greeting_in_the_persons_language() {
    assert!(plan(vec![user("hello")])
        .text
        .starts_with("Hi! I can help you"));
    assert!(plan(vec![user("xin chào")])
        .text
        .starts_with("Xin chào! Tôi có thể giúp bạn"));
    assert!(plan(Vec::new()).text.starts_with("Hi!"));
    let turn = plan(vec![user("chào bạn")]);
    assert!(turn.text.contains("đặt bàn"));
    assert_eq!(turn.finish, FinishReason::Stop);
}

#[test]
fn thanks_are_answered_not_listed_what_we_can_do() {
    for (text, expected) in [
        ("Cảm ơn bạn", "Không có gì!"),
        ("cám ơn nhé", "Không có gì!"),
        // Unaccented: "on" is also an English word.
        ("cam on nhe", "Không có gì!"),
        ("cam on", "Không có gì!"),
        ("Thanks!", "You're welcome!"),
        ("thank you so much", "You're welcome!"),
    ] {
        let turn = plan(vec![user(text)]);
        assert!(turn.calls.is_empty(), "{text}: {turn:?}");
        assert!(turn.text.starts_with(expected), "{text}: {}", turn.text);
    }
    // Thanks with a request is the request.
    let turn = plan(vec![user("Cảm ơn, giờ xem thời tiết Huế giúp tôi")]);
    assert_eq!(turn.only_call().name, GET_WEATHER);
}

#[test]
fn each_assistant_calls_only_its_own_tools() {
    let messages = [
        "Thời tiết Hà Nội hôm nay thế nào?",
        "Tìm nhà hàng ở Hà Nội",
        "Đặt bàn ở Hà Nội cho 4 người tối mai lúc 19:00",
        "Đặt chỗ của tôi",
        "Huỷ đặt chỗ BK-1A2B3C4D",
        "Gợi ý quà cho mẹ thích trà dưới 500k",
        "gợi ý quán ăn",
        "mua món 1",
        "buy #2",
        "Gửi 2,5 kg liên tỉnh",
        "ship 2 kg local",
        "#bad-json",
        "#tool-error",
        "#loop",
        "#bad-args",
        "#bad-weight",
        "#zero-weight",
        "xin chào",
        "4 người",
    ];
    for assistant in Assistant::ALL {
        for text in messages {
            // plan_for fails on any call the assistant was not offered.
            plan_for(assistant, vec![user(text)]);
            plan_for(assistant, after_gift_ideas(text));
        }
    }
    let offered = |assistant: Assistant, text: &str| {
        plan_for(assistant, vec![user(text)])
            .calls
            .iter()
            .map(|call| call.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        offered(Assistant::Gifts, "Thời tiết Hà Nội"),
        Vec::<String>::new()
    );
    assert_eq!(
        offered(Assistant::Shipping, "Huỷ đặt chỗ BK-1A2B3C4D"),
        Vec::<String>::new()
    );
    assert_eq!(
        offered(Assistant::Restaurant, "Gửi 2 kg nội thành"),
        Vec::<String>::new()
    );
    assert_eq!(
        offered(Assistant::Restaurant, "quà cho mẹ"),
        Vec::<String>::new()
    );
    assert_eq!(
        offered(Assistant::Shipping, "#bad-json"),
        Vec::<String>::new()
    );
    assert_eq!(
        offered(Assistant::Restaurant, "#bad-weight"),
        Vec::<String>::new()
    );
    assert!(plan_for(Assistant::Gifts, vec![user("xin chào")])
        .text
        .starts_with("Xin chào! Tôi gợi ý quà tặng"));
    assert!(plan_for(Assistant::Shipping, vec![user("hello")])
        .text
        .starts_with("Hi! I quote shipping"));

    // Without tools nothing is called, except the call whose point is a missing tool.
    for text in messages {
        let mut request = request(vec![user(text)]);
        request.tools = Vec::new().into();
        let turn = assemble(&model().plan_turn(&request));
        assert!(turn.calls.is_empty(), "{text}: {turn:?}");
    }
    let mut request = request(vec![user("#unknown-tool")]);
    request.tools = Vec::new().into();
    assert_eq!(
        assemble(&model().plan_turn(&request)).only_call().name,
        "launchRocket"
    );
}

#[test]
fn a_draft_is_not_bought_where_checkout_is_not_offered() {
    // The restaurant assistant reading a gift draft (say, from an imported history).
    let history = vec![
        user("mua món 2"),
        call_message(
            "call_1_0",
            PREPARE_CHECKOUT,
            r#"{"gift_id":"g-garden-kit"}"#,
        ),
        tool_result("call_1_0", PREPARE_CHECKOUT, &draft("drf_7K2M")),
    ];
    let turn = plan_for(Assistant::Restaurant, history);
    assert!(turn.calls.is_empty());
    assert!(turn.text.ends_with("Chưa mua gì cả."), "{}", turn.text);
}

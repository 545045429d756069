//! Tests of `plan_booking`.

use super::super::testing::{
    after_search, after_search_for, arguments, declined, failed, hanoi_search, incident_history,
    plan, searched, searched_with, tool_result, user, validation_error, Turn,
};
use super::super::{BAD_ARGS_ARGUMENTS, GET_WEATHER};
use super::*;
use crate::model::{FinishReason, ProposedCall};
use serde_json::json;

const NO_PARTY_SIZE: &str =
    r#"{"restaurantId":"hn-cha-ca-thang-long","startsAt":"2026-11-30T19:00:00+07:00"}"#;

fn booking_ok(status: &str) -> Value {
    json!({"ok": true, "bookingId": "BK-7Q2X", "status": status,
           "restaurantId": "hn-cha-ca-thang-long", "restaurantName": "Chả Cá Thăng Long",
           "partySize": 4, "startsAt": "2026-11-30T19:00:00+07:00"})
}

fn reply_to(result: &Value) -> Turn {
    let (mut history, call) = incident_history();
    history.push(tool_result(&call.id, CREATE_BOOKING, result));
    plan(history)
}

#[test]
fn booking_without_a_party_size_omits_it() {
    let (_, call) = incident_history();
    assert_eq!(call.name, CREATE_BOOKING);
    assert_eq!(call.id, "call_3_0");
    // The second restaurant, by name, not the first of the list.
    assert_eq!(
        arguments(&call),
        json!({"restaurantId": "hn-cha-ca-thang-long",
               "startsAt": "2026-11-30T19:00:00+07:00"})
    );
}

#[test]
fn a_failed_validation_asks_for_the_party_size_and_claims_nothing() {
    let turn = reply_to(&validation_error(CREATE_BOOKING, NO_PARTY_SIZE));
    assert!(turn.calls.is_empty());
    assert_eq!(turn.finish, FinishReason::Stop);
    assert!(
        turn.text.contains("Bạn muốn đặt bàn cho mấy người?"),
        "{}",
        turn.text
    );
    assert!(!turn.text.contains("đã đặt"), "{}", turn.text);
    assert!(!turn.text.contains("Đã đặt"), "{}", turn.text);
    assert!(!turn.text.contains("booked"), "{}", turn.text);
}

#[test]
fn the_party_size_follow_up_retries_the_same_booking() {
    let (mut history, call) = incident_history();
    history.push(tool_result(
        &call.id,
        CREATE_BOOKING,
        &validation_error(CREATE_BOOKING, NO_PARTY_SIZE),
    ));
    let question = plan(history.clone());
    history.push(question.assistant());
    history.push(user("4 người"));
    let retry = plan(history);
    let call = retry.only_call();
    assert_eq!(call.name, CREATE_BOOKING);
    assert_eq!(call.id, "call_5_0");
    assert_eq!(
        arguments(call),
        json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 4,
               "startsAt": "2026-11-30T19:00:00+07:00"})
    );
    assert!(retry.text.contains("Chả Cá Thăng Long"), "{}", retry.text);
}

#[test]
fn a_failed_validation_alone_is_enough_for_a_follow_up() {
    let (mut history, call) = incident_history();
    history.push(tool_result(
        &call.id,
        CREATE_BOOKING,
        &validation_error(CREATE_BOOKING, NO_PARTY_SIZE),
    ));
    history.push(ModelMessage::Assistant {
        text: String::new(),
        calls: Vec::new(),
    });
    history.push(user("for 2 people, at 20:30"));
    assert_eq!(
        arguments(plan(history).only_call()),
        json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 2,
               "startsAt": "2026-11-30T20:30:00+07:00"})
    );
}

#[test]
fn without_an_unfinished_booking_a_number_is_just_a_greeting() {
    let turn = plan(vec![user("4 người")]);
    assert!(turn.calls.is_empty());
    assert!(turn.text.starts_with("Xin chào!"), "{}", turn.text);
}

#[test]
fn english_booking_with_everything_named() {
    let turn = plan(after_search(
        "Book a table for 2 at Cha Ca Thang Long tomorrow at 7pm",
    ));
    assert_eq!(
        arguments(turn.only_call()),
        json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 2,
               "startsAt": "2026-11-30T19:00:00+07:00"})
    );
    assert_eq!(
        turn.text,
        "Let me prepare a booking request for Chả Cá Thăng Long…"
    );
}

#[test]
fn english_booking_without_a_search_searches_then_books_the_first_free_then() {
    let mut history = vec![user("Book a table for 2 in Hanoi tomorrow at 7:30 pm")];
    let search = plan(history.clone());
    assert_eq!(search.only_call().name, SEARCH_RESTAURANTS);
    assert_eq!(
        arguments(search.only_call()),
        json!({"city": "Hà Nội", "partySize": 2, "date": "2026-11-30"})
    );
    history.push(search.assistant());
    history.push(tool_result(
        &search.only_call().id,
        SEARCH_RESTAURANTS,
        &hanoi_search(),
    ));
    let booking = plan(history.clone());
    assert!(booking
        .text
        .starts_with("I found 2 restaurants:\n- Bún Chả Hương Liên"));
    // Hương Liên came first but has no table free that day; Thăng Long has 19:30.
    assert!(booking
        .text
        .ends_with("Let me prepare a booking request for Chả Cá Thăng Long…"));
    assert_eq!(booking.only_call().id, "call_2_0");
    assert_eq!(
        arguments(booking.only_call()),
        json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 2,
               "startsAt": "2026-11-30T19:30:00+07:00"})
    );
    assert_eq!(booking.finish, FinishReason::ToolCalls);

    // Once the booking was proposed, another search result does not book again.
    history.push(booking.assistant());
    history.push(tool_result(
        &booking.only_call().id,
        CREATE_BOOKING,
        &booking_ok("confirmed"),
    ));
    history.push(ModelMessage::Assistant {
        text: String::new(),
        calls: vec![ProposedCall {
            id: "call_4_0".into(),
            name: SEARCH_RESTAURANTS.into(),
            arguments: r#"{"city":"Hà Nội"}"#.into(),
        }],
    });
    history.push(tool_result("call_4_0", SEARCH_RESTAURANTS, &hanoi_search()));
    assert!(plan(history).calls.is_empty());
}

#[test]
fn booking_times_in_vietnamese() {
    // "Tôi" (I) is not "tối" (evening): 7 giờ stays 07:00.
    let morning = plan(after_search(
        "Tôi muốn đặt bàn ở Chả Cá Thăng Long cho hai người lúc 7 giờ ngày 2026-12-24",
    ));
    assert_eq!(
        arguments(morning.only_call()),
        json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 2,
               "startsAt": "2026-12-24T07:00:00+07:00"})
    );
    let evening = plan(after_search(
        "đặt bàn Bún Chả Hương Liên 7 giờ rưỡi tối nay, 3 khách",
    ));
    assert_eq!(
        arguments(evening.only_call()),
        json!({"restaurantId": "hn-bun-cha-huong-lien", "partySize": 3,
               "startsAt": "2026-11-29T19:30:00+07:00"})
    );
}

#[test]
fn booking_without_restaurant_or_city_asks_where() {
    let turn = plan(vec![user("đặt bàn cho 4 người tối mai")]);
    assert!(turn.calls.is_empty());
    assert!(turn.text.starts_with("Bạn muốn đặt bàn ở thành phố nào"));
}

#[test]
fn a_confirmed_booking_reports_its_id_and_details() {
    let turn = reply_to(&booking_ok("confirmed"));
    assert_eq!(
        turn.text,
        "Đã đặt bàn thành công tại Chả Cá Thăng Long! Mã đặt bàn: BK-7Q2X. Thời gian: \
         30/11/2026 19:00, 4 người."
    );
    assert_eq!(turn.finish, FinishReason::Stop);
}

#[test]
fn a_waitlisted_booking_is_not_called_booked() {
    let turn = reply_to(&booking_ok("waitlisted"));
    assert!(turn.text.contains("BK-7Q2X"), "{}", turn.text);
    assert!(turn.text.contains("danh sách chờ"), "{}", turn.text);
    assert!(turn.text.contains("bàn chưa được giữ"), "{}", turn.text);
    assert!(!turn.text.contains("Đã đặt"), "{}", turn.text);
    assert!(!turn.text.contains("thành công"), "{}", turn.text);
}

#[test]
fn a_booking_without_a_clear_status_is_not_confirmed() {
    let turn = reply_to(&json!({"ok": true, "bookingId": "BK-1"}));
    assert!(turn.text.contains("không xác nhận được"), "{}", turn.text);
    assert!(!turn.text.contains("thành công"), "{}", turn.text);
}

#[test]
fn a_declined_booking_claims_nothing_and_asks_what_to_change() {
    let turn = reply_to(&json!({"ok": false, "error": {
        "code": "DECLINED", "message": "The person declined.", "retryable": false}}));
    assert_eq!(
        turn.text,
        "Bạn đã từ chối nên chưa có bàn nào được đặt. Bạn muốn thay đổi gì: nhà hàng, ngày \
         giờ hay số người?"
    );
    assert!(turn.calls.is_empty());
}

#[test]
fn other_booking_errors_quote_the_message_and_do_not_retry() {
    let turn = reply_to(&validation_error(
        CREATE_BOOKING,
        r#"{"restaurantId":" ","partySize":2,"startsAt":"2026-11-30T19:00:00+07:00"}"#,
    ));
    assert_eq!(turn.text, "Chưa có bàn nào được đặt: Chưa điền nhà hàng.");
    let turn = reply_to(&validation_error(
        CREATE_BOOKING,
        r#"{"restaurantId":"a","partySize":2,"startsAt":"2026-11-01T19:00:00+07:00"}"#,
    ));
    assert!(
        turn.text.contains("ngày nào, lúc mấy giờ?"),
        "{}",
        turn.text
    );
    let turn = reply_to(&json!({"ok": false, "error": {
        "code": "UPSTREAM_TIMEOUT", "message": "The booking service timed out.",
        "retryable": true}}));
    assert_eq!(
        turn.text,
        "Xin lỗi, tôi không đặt được bàn: Dịch vụ cần dùng trả lời quá chậm. Chưa có bàn nào \
         được đặt."
    );
    assert!(turn.calls.is_empty());
}

#[test]
fn lenient_reading_of_earlier_arguments() {
    let broken = BookingArgs::lenient(
        r#"{"restaurantId": "hn-x", "startsAt": "2026-12-24T19:00:00+07:00", "partySize": }"#,
    );
    assert_eq!(broken.restaurant_id.as_deref(), Some("hn-x"));
    assert_eq!(
        broken.starts_at.map(|at| rfc3339(&at)).as_deref(),
        Some("2026-12-24T19:00:00+07:00")
    );
    let typed = BookingArgs::lenient(BAD_ARGS_ARGUMENTS);
    assert_eq!(typed.restaurant_id.as_deref(), Some("hn-cha-ca-thang-long"));
    assert_eq!((typed.party_size, typed.starts_at), (None, None));
    assert_eq!(BookingArgs::lenient("💥"), BookingArgs::default());
}

#[test]
fn a_restaurant_named_in_a_new_conversation_is_searched_for_then_booked() {
    let text = "Đặt bàn ở Chả Cá Thăng Long tối mai lúc 19:00 cho 2 người";
    let search = plan(vec![user(text)]);
    assert_eq!(
        arguments(search.only_call()),
        json!({"city": "Hà Nội", "cuisine": "chả cá", "partySize": 2,
               "date": "2026-11-30"})
    );
    assert_eq!(search.text, "Để tôi tìm Chả Cá Thăng Long ở Hà Nội trước…");
    let history = vec![
        user(text),
        search.assistant(),
        tool_result("call_1_0", SEARCH_RESTAURANTS, &hanoi_search()),
    ];
    let booking = plan(history);
    assert_eq!(
        arguments(booking.only_call()),
        json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 2,
               "startsAt": "2026-11-30T19:00:00+07:00"})
    );
}

#[test]
fn a_named_restaurant_missing_from_the_results_is_not_swapped_for_another() {
    let text = "Book Chả Cá Lã Vọng for 2 tomorrow at 7pm";
    let search = plan(vec![user(text)]);
    let history = vec![
        user(text),
        search.assistant(),
        // Full that evening: only other places came back.
        tool_result("call_1_0", SEARCH_RESTAURANTS, &hanoi_search()),
    ];
    let reply = plan(history);
    assert!(reply.calls.is_empty(), "{reply:?}");
    assert!(
        reply.text.ends_with(
            "Chả Cá Lã Vọng is not among the results (it may be full then), so \
                        nothing is booked. Would you like another place or time?"
        ),
        "{}",
        reply.text
    );
}

#[test]
fn words_inside_a_restaurant_name_are_not_details() {
    // "Ông Tám" is not eight people, "Hồng Mai" not tomorrow, "Bà Mua" not buying.
    for (text, party, date) in [
        ("Đặt bàn Lẩu Bò Ông Tám lúc 19h", None, "2026-11-29"),
        (
            "Đặt bàn Bánh Khoái Hồng Mai lúc 19h cho 2 người",
            Some(2),
            "2026-11-29",
        ),
        ("Book Mì Quảng Bà Mua at 7am for 3", Some(3), "2026-11-30"),
    ] {
        let turn = plan(vec![user(text)]);
        let args = arguments(turn.only_call());
        assert_eq!(args["partySize"], json!(party), "{text}");
        assert_eq!(args["date"], json!(date), "{text}");
    }
}

#[test]
fn a_shown_restaurant_is_booked_by_the_name_people_use_for_it() {
    // "Thăng Long" is the Hà Nội list's second place without the dish it is named after;
    // "Hương Liên" is the catalogue's alias for the first. The first of the list was
    // booked for any name the model did not know.
    for (text, id) in [
        (
            "đặt bàn ở Thăng Long tối mai lúc 19:00 cho 2 người",
            "hn-cha-ca-thang-long",
        ),
        (
            "Book Thang Long for 2 tomorrow at 7pm",
            "hn-cha-ca-thang-long",
        ),
        (
            "đặt Hương Liên 2 người 19h ngày mai",
            "hn-bun-cha-huong-lien",
        ),
    ] {
        let turn = plan(after_search(text));
        let call = turn.only_call();
        assert_eq!(call.name, CREATE_BOOKING, "{text}");
        assert_eq!(arguments(call)["restaurantId"], json!(id), "{text}");
    }
}

#[test]
fn a_short_name_never_shown_is_not_a_restaurant() {
    // Hà Nội's citadel shares its old name with a restaurant nobody has been shown.
    let turn = plan(vec![user(
        "Tìm nhà hàng gần Hoàng thành Thăng Long ở Hà Nội",
    )]);
    let args = arguments(turn.only_call());
    assert_eq!(turn.only_call().name, SEARCH_RESTAURANTS);
    assert_eq!(args, json!({"city": "Hà Nội"}));
}

#[test]
fn a_restaurant_named_by_its_alias_is_searched_for_then_booked() {
    let text = "Đặt bàn ở Lã Vọng tối mai 19h cho 3 người";
    let search = plan(vec![user(text)]);
    assert_eq!(
        arguments(search.only_call()),
        json!({"city": "Hà Nội", "cuisine": "chả cá", "partySize": 3, "date": "2026-11-30"})
    );
    let results = json!({"ok": true, "restaurants": [
        {"id": "hn-cha-ca-thang-long", "name": "Chả Cá Thăng Long", "city": "Hà Nội",
         "cuisine": "chả cá", "freeSlots": []},
        {"id": "hn-cha-ca-la-vong", "name": "Chả Cá Lã Vọng", "city": "Hà Nội",
         "cuisine": "chả cá", "freeSlots": []}
    ]});
    let history = vec![
        user(text),
        search.assistant(),
        tool_result(&search.only_call().id, SEARCH_RESTAURANTS, &results),
    ];
    let booking = plan(history);
    assert_eq!(
        arguments(booking.only_call()),
        json!({"restaurantId": "hn-cha-ca-la-vong", "partySize": 3,
               "startsAt": "2026-11-30T19:00:00+07:00"})
    );
}

#[test]
fn a_shown_restaurant_called_by_its_short_name_keeps_its_words_out_of_the_details() {
    // Once Huế's list showed Bánh Khoái Hồng Mai, "Hồng Mai" is that place: its "mai" is
    // not tomorrow.
    let mut history = vec![user("Tìm nhà hàng ở Huế")];
    let search = plan(history.clone());
    history.push(search.assistant());
    history.push(tool_result(
        &search.only_call().id,
        SEARCH_RESTAURANTS,
        &json!({"ok": true, "restaurants": [
            {"id": "hue-com-hen-ba-ca", "name": "Cơm Hến Bà Cả", "city": "Huế",
             "cuisine": "cơm hến", "freeSlots": []},
            {"id": "hue-banh-khoai-hong-mai", "name": "Bánh Khoái Hồng Mai", "city": "Huế",
             "cuisine": "bánh khoái", "freeSlots": []}
        ]}),
    ));
    let listing = plan(history.clone());
    history.push(listing.assistant());
    history.push(user("Đặt bàn ở Hồng Mai lúc 19h cho 2 người"));
    let booking = plan(history);
    assert_eq!(
        arguments(booking.only_call()),
        json!({"restaurantId": "hue-banh-khoai-hong-mai", "partySize": 2,
               "startsAt": "2026-11-29T19:00:00+07:00"})
    );
}

#[test]
fn a_booking_for_a_day_that_is_over_is_refused_in_words_not_searched() {
    for (text, said) in [
        (
            "Đặt bàn ở Chả Cá Thăng Long hôm qua lúc 19:00 cho 2 người",
            "đã qua, nên tôi không đặt bàn cho ngày đó",
        ),
        (
            "Book Chả Cá Thăng Long for 2 yesterday at 7pm",
            "has passed, so I can't book a table for it",
        ),
    ] {
        let turn = plan(vec![user(text)]);
        assert!(turn.calls.is_empty(), "{text}: {turn:?}");
        assert!(turn.text.contains(said), "{text}: {}", turn.text);
    }
}

#[test]
fn with_no_place_named_the_first_free_at_the_time_asked_is_booked() {
    let text = "Book a table for 2 at 8:30pm tomorrow somewhere with pho in Hanoi";
    let search = plan(vec![user(text)]);
    assert_eq!(search.only_call().name, SEARCH_RESTAURANTS);
    let slot = |at: &str| json!({"startsAt": format!("2026-11-30T{at}:00+07:00"), "seatsLeft": 4});
    let results = json!({"ok": true, "restaurants": [
        {"id": "hn-pho-bat-dan", "name": "Phở Gia Truyền Bát Đàn", "city": "Hà Nội",
         "cuisine": "phở", "freeSlots": [slot("06:00"), slot("09:30")]},
        {"id": "hn-pho-thin", "name": "Phở Thìn Lò Đúc", "city": "Hà Nội",
         "cuisine": "phở", "freeSlots": [slot("20:00"), slot("20:30")]}
    ]});
    let history = vec![
        user(text),
        search.assistant(),
        tool_result(&search.only_call().id, SEARCH_RESTAURANTS, &results),
    ];
    let booking = plan(history.clone());
    assert_eq!(
        arguments(booking.only_call())["restaurantId"],
        json!("hn-pho-thin")
    );
    // Nobody free then: the first of the list, for the tool to say why not.
    let mut full = results.clone();
    full["restaurants"][1]["freeSlots"] = json!([slot("21:00")]);
    let mut history = history;
    history[2] = tool_result(&search.only_call().id, SEARCH_RESTAURANTS, &full);
    let booking = plan(history);
    assert_eq!(
        arguments(booking.only_call())["restaurantId"],
        json!("hn-pho-bat-dan")
    );
}

#[test]
fn a_place_of_the_list_by_its_rank_with_what_the_search_was_for() {
    // Today is Sunday 29 November 2026 in these tests; Friday is 4 December.
    for (search, text, expected) in [
        (
            "Any restaurants in Hanoi for 6 on Friday night?",
            "Book the second one at 8pm",
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 6,
                   "startsAt": "2026-12-04T20:00:00+07:00"}),
        ),
        (
            "Tìm nhà hàng ở Hà Nội cho 4 người tối thứ 6",
            "đặt quán thứ 2 lúc 19h",
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 4,
                   "startsAt": "2026-12-04T19:00:00+07:00"}),
        ),
        (
            "Tìm nhà hàng ở Hà Nội cho 4 người tối thứ 6",
            "đặt nơi thứ hai lúc 19h",
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 4,
                   "startsAt": "2026-12-04T19:00:00+07:00"}),
        ),
        (
            "Tìm nhà hàng ở Hà Nội",
            "Đặt quán số 2 cho 3 người tối mai 19h",
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 3,
                   "startsAt": "2026-11-30T19:00:00+07:00"}),
        ),
        // What the message says wins over what the search was for.
        (
            "Find restaurants in Hanoi for 6 on Friday",
            "Book the last one for 2 tomorrow at 7pm",
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 2,
                   "startsAt": "2026-11-30T19:00:00+07:00"}),
        ),
        (
            "Find restaurants in Hanoi for 6 on Friday",
            "Book the first one at 7pm",
            json!({"restaurantId": "hn-bun-cha-huong-lien", "partySize": 6,
                   "startsAt": "2026-12-04T19:00:00+07:00"}),
        ),
    ] {
        let turn = plan(after_search_for(search, text));
        let call = turn.only_call();
        assert_eq!(call.name, CREATE_BOOKING, "{text}");
        assert_eq!(arguments(call), expected, "{search} → {text}");
    }
}

#[test]
fn a_weekday_is_not_a_rank_and_a_rank_past_the_list_is_said() {
    // "thứ 6" is Friday, not the sixth place (the list has two).
    let turn = plan(after_search("Đặt bàn tối thứ 6 lúc 19h cho 2 người"));
    assert_eq!(
        arguments(turn.only_call()),
        json!({"restaurantId": "hn-bun-cha-huong-lien", "partySize": 2,
               "startsAt": "2026-12-04T19:00:00+07:00"})
    );
    for (text, said) in [
        (
            "Book the fifth one at 7pm",
            "The last search found only 2 restaurants",
        ),
        ("đặt quán số 4 lúc 19h", "Lần tìm vừa rồi chỉ có 2 nhà hàng"),
    ] {
        let turn = plan(after_search(text));
        assert!(turn.calls.is_empty(), "{text}: {turn:?}");
        assert!(turn.text.starts_with(said), "{text}: {}", turn.text);
    }
}

fn asks_which_place(turn: &Turn) -> bool {
    turn.calls.is_empty()
        && (turn.text.ends_with(WHICH_PLACE_VI) || turn.text.ends_with(WHICH_PLACE_EN))
}

#[test]
fn a_time_given_later_keeps_the_day_and_the_evening_first_asked_for() {
    for (request, answer, starts_at) in [
        (
            "I need a table for 3 in Hanoi on Friday evening",
            "make it 7:30",
            "2026-12-04T19:30:00+07:00",
        ),
        (
            "Đặt bàn cho 3 người ở Hà Nội tối thứ 6",
            "lúc 7 giờ",
            "2026-12-04T19:00:00+07:00",
        ),
        // A day said in the answer wins.
        (
            "I need a table for 3 in Hanoi on Friday evening",
            "Saturday at 8",
            "2026-12-05T20:00:00+07:00",
        ),
    ] {
        let mut history = searched(request);
        // Two places and no time to choose by: the person is asked which, and when.
        let question = plan(history.clone());
        assert!(asks_which_place(&question), "{request}: {question:?}");
        history.push(question.assistant());
        history.push(user(answer));
        let retried = plan(history);
        assert_eq!(
            arguments(retried.only_call())["startsAt"],
            json!(starts_at),
            "{request} → {answer}"
        );
        assert_eq!(arguments(retried.only_call())["partySize"], json!(3));
    }
}

/// `request` searched, its booking proposed and refused by the validator: the history and
/// the refused call.
fn refused_booking(request: &str) -> (Vec<ModelMessage>, ProposedCall) {
    let mut history = searched(request);
    let booking = plan(history.clone());
    let call = booking.only_call().clone();
    assert_eq!(call.name, CREATE_BOOKING, "{request}");
    history.push(booking.assistant());
    let refused = validation_error(CREATE_BOOKING, &call.arguments);
    history.push(tool_result(&call.id, CREATE_BOOKING, &refused));
    (history, call)
}

#[test]
fn a_time_given_after_a_refused_booking_keeps_the_evening_first_asked_for() {
    for (request, answer, starts_at) in [
        (
            "I need a table for 3 at Chả Cá Thăng Long on Friday evening",
            "make it 7:30",
            "2026-12-04T19:30:00+07:00",
        ),
        (
            "Đặt bàn cho 3 người ở Chả Cá Thăng Long tối thứ 6",
            "lúc 7 giờ",
            "2026-12-04T19:00:00+07:00",
        ),
    ] {
        let (mut history, call) = refused_booking(request);
        assert!(
            arguments(&call).get("startsAt").is_none(),
            "{request}: {call:?}"
        );
        let question = plan(history.clone());
        assert!(question.calls.is_empty(), "{request}: {question:?}");
        history.push(question.assistant());
        history.push(user(answer));
        let retried = plan(history);
        assert_eq!(
            arguments(retried.only_call()),
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 3,
                   "startsAt": starts_at}),
            "{request} → {answer}"
        );
    }
}

/// The incident's cousin: "book a table in Hanoi tomorrow evening" must not become a
/// booking at a place nobody chose. The person is asked, and the answer is read with what
/// the request already said.
#[test]
fn a_booking_that_names_no_place_nor_time_asks_which_place_and_reads_the_answer() {
    // Today is Sunday 29 November 2026 in these tests.
    let thang_long = |party: u16, at: &str| json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": party, "startsAt": at});
    for (request, answer, expected) in [
        (
            "Đặt bàn tối mai 4 người ở Hà Nội",
            "quán thứ 2 lúc 7 giờ",
            thang_long(4, "2026-11-30T19:00:00+07:00"),
        ),
        // "thứ hai" after a word for a place is its rank, not Monday.
        (
            "Đặt bàn tối mai 4 người ở Hà Nội",
            "nơi thứ hai, 19h",
            thang_long(4, "2026-11-30T19:00:00+07:00"),
        ),
        (
            "Đặt bàn tối mai 4 người ở Hà Nội",
            "Bún Chả Hương Liên lúc 18:30",
            json!({"restaurantId": "hn-bun-cha-huong-lien", "partySize": 4,
                   "startsAt": "2026-11-30T18:30:00+07:00"}),
        ),
        (
            "Book a table for 2 in Hanoi tomorrow evening",
            "the second one at 7:30",
            thang_long(2, "2026-11-30T19:30:00+07:00"),
        ),
        // A time alone: the first place free then.
        (
            "Book a table for 2 in Hanoi tomorrow evening",
            "7:30 please",
            thang_long(2, "2026-11-30T19:30:00+07:00"),
        ),
        // A place alone: the time is still to come (the tool's refusal asks for it).
        (
            "Đặt bàn tối mai 4 người ở Hà Nội",
            "Chả Cá Thăng Long",
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 4}),
        ),
    ] {
        let mut history = searched(request);
        let question = plan(history.clone());
        assert!(asks_which_place(&question), "{request}: {question:?}");
        history.push(question.assistant());
        history.push(user(answer));
        let turn = plan(history);
        assert_eq!(
            turn.only_call().name,
            CREATE_BOOKING,
            "{request} → {answer}"
        );
        assert_eq!(
            arguments(turn.only_call()),
            expected,
            "{request} → {answer}"
        );
    }
    // The city given in answer to "which city?": the evening first asked for still holds.
    let question = plan(vec![user("đặt bàn cho 4 người tối mai")]);
    let mut history = vec![
        user("đặt bàn cho 4 người tối mai"),
        question.assistant(),
        user("Hà Nội"),
    ];
    let search = plan(history.clone());
    history.push(search.assistant());
    history.push(tool_result(
        &search.only_call().id,
        SEARCH_RESTAURANTS,
        &hanoi_search(),
    ));
    let which = plan(history.clone());
    assert!(asks_which_place(&which), "{which:?}");
    history.push(which.assistant());
    history.push(user("quán thứ 2 lúc 7 giờ"));
    assert_eq!(
        arguments(plan(history).only_call()),
        thang_long(4, "2026-11-30T19:00:00+07:00")
    );
    // A rank past the list is said; a message that answers neither is a request of its own.
    let mut history = searched("Đặt bàn tối mai 4 người ở Hà Nội");
    let question = plan(history.clone());
    history.push(question.assistant());
    let mut past = history.clone();
    past.push(user("quán thứ 5 lúc 19h"));
    let turn = plan(past);
    assert!(turn.calls.is_empty(), "{turn:?}");
    assert!(
        turn.text.starts_with("Lần tìm vừa rồi chỉ có 2 nhà hàng"),
        "{}",
        turn.text
    );
    history.push(user("Thời tiết Đà Nẵng hôm nay thế nào?"));
    let turn = plan(history);
    assert_eq!(turn.only_call().name, GET_WEATHER);
    // One place found: it is the one, and the time is asked for by the tool's refusal.
    let one = json!({"ok": true, "restaurants": [hanoi_search()["restaurants"][1].clone()]});
    let turn = plan(searched_with("Đặt bàn tối mai 4 người ở Hà Nội", &one));
    assert_eq!(
        arguments(turn.only_call()),
        json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 4})
    );
}

/// A change written instead of confirming the form ("đổi sang 20h"), or after declining it,
/// is that booking again with the change: a new proposal, where it was read as a greeting.
#[test]
fn a_change_instead_of_a_decision_proposes_the_booking_again_with_it() {
    let moved_on = failed(
        "MOVED_ON",
        "The user wrote a new message instead of answering this confirmation, so nothing was \
         done.",
    );
    // A change of the party, with or without its unit ("more" may stand before it).
    let party_changes = [
        ("thêm 1 người nữa", 3),
        ("actually 2 more people", 4),
        ("2 more", 4),
        ("add one more person", 3),
        ("bớt 1", 1),
    ]
    .map(|(answer, party)| {
        let expected = json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": party,
                              "startsAt": "2026-11-30T19:00:00+07:00"});
        (&moved_on, answer, expected)
    });
    for (outcome, answer, expected) in party_changes.into_iter().chain([
        (
            &moved_on,
            "đổi sang 20h nhé",
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 2,
                   "startsAt": "2026-11-30T20:00:00+07:00"}),
        ),
        (
            &declined(),
            "make it 4 people at 7:30pm",
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 4,
                   "startsAt": "2026-11-30T19:30:00+07:00"}),
        ),
    ]) {
        let mut history = after_search("Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 19:00");
        let booking = plan(history.clone());
        let call = booking.only_call().clone();
        assert_eq!(call.name, CREATE_BOOKING);
        history.push(booking.assistant());
        history.push(tool_result(&call.id, CREATE_BOOKING, outcome));
        if outcome == &declined() {
            // A decline is answered before the person writes again.
            let said = plan(history.clone());
            history.push(said.assistant());
        }
        history.push(user(answer));
        let again = plan(history);
        assert_eq!(again.only_call().name, CREATE_BOOKING, "{answer}");
        assert_eq!(arguments(again.only_call()), expected, "{answer}");
    }
    // Once something else was said in between, a detail alone does not revive it.
    let mut history = after_search("Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 19:00");
    let booking = plan(history.clone());
    let call = booking.only_call().clone();
    history.push(booking.assistant());
    history.push(tool_result(&call.id, CREATE_BOOKING, &moved_on));
    history.push(user("Thời tiết Huế thế nào?"));
    let weather = plan(history.clone());
    history.push(weather.assistant());
    history.push(tool_result(
        &weather.only_call().id,
        super::super::GET_WEATHER,
        &json!({"ok": true, "city": "Huế", "days": []}),
    ));
    history.push(plan(history.clone()).assistant());
    history.push(user("20h"));
    assert!(
        plan(history).calls.iter().all(|c| c.name != CREATE_BOOKING),
        "an old proposal came back"
    );
}

/// A time left out is asked for, not called invalid, and a day already said is not asked
/// again.
#[test]
fn a_missing_time_is_asked_for_with_the_day_already_said() {
    for (request, question) in [
        (
            "Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai",
            "Tôi chưa đặt bàn vì còn thiếu giờ. Bạn muốn đặt lúc mấy giờ?",
        ),
        (
            "Đặt bàn ở Chả Cá Thăng Long cho 2 người",
            "Tôi chưa đặt bàn vì còn thiếu ngày giờ. Bạn muốn đặt vào ngày nào, lúc mấy giờ?",
        ),
        (
            "Book a table at Chả Cá Thăng Long for 2 tomorrow evening",
            "I haven't made the reservation yet: what time would you like the table for?",
        ),
        // A time no day has is said to be one, not asked for as if none were given.
        (
            "Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 25h",
            "Tôi chưa đặt bàn vì \"25h\" không phải là một giờ trong ngày (giờ từ 0:00 đến \
             23:59). Bạn muốn đặt lúc mấy giờ?",
        ),
        (
            "Book a table at Chả Cá Thăng Long for 2 tomorrow at 19:75",
            "I haven't made the reservation yet: \"19:75\" isn't a time of day (times go from \
             0:00 to 23:59). What time would you like the table for?",
        ),
    ] {
        let (history, _) = refused_booking(request);
        let turn = plan(history);
        assert!(turn.calls.is_empty(), "{request}: {turn:?}");
        assert!(turn.text.ends_with(question), "{request}: {}", turn.text);
    }
}

/// A place named that the catalogue does not have is said to be unknown; another place of
/// the search is not proposed in its stead.
#[test]
fn a_place_we_do_not_know_is_said_so_and_no_other_is_proposed() {
    for (request, said) in [
        (
            "Đặt bàn ở Nhà hàng ABC ở Hà Nội tối mai lúc 19:30 cho 2 người",
            "Tôi không tìm thấy nhà hàng \"ABC\" trong danh mục, nên chưa đặt bàn.",
        ),
        (
            "Book a table at restaurant Luna Rossa in Hanoi tomorrow at 7:30pm for 2",
            "I couldn't find a restaurant called \"Luna Rossa\", so nothing is booked.",
        ),
    ] {
        let mut history = searched_with(request, &hanoi_search());
        let turn = plan(history.clone());
        assert!(turn.calls.is_empty(), "{request}: {turn:?}");
        assert!(turn.text.contains(said), "{request}: {}", turn.text);
        // The place picked from the list then is booked with what the request said.
        history.push(turn.assistant());
        history.push(user("quán thứ 2"));
        let booking = plan(history);
        assert_eq!(
            arguments(booking.only_call()),
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 2,
                   "startsAt": "2026-11-30T19:30:00+07:00"}),
            "{request}"
        );
    }
}

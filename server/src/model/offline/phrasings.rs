//! What people type and the tool calls each must produce: one table, in Vietnamese with
//! and without diacritics and in English, run against the offline model on a fixed clock.
//! The real tools answer each call (a test database with the seed catalogue, the built-in
//! forecasts), so a phrasing passes only if its whole conversation works: every call
//! validates against its schema, and a booking passes the checks done before a person is
//! asked to confirm it.

use super::read::Lang;
use super::testing::{assemble, request, user};
use super::OfflineModel;
use crate::model::ModelMessage;
use crate::tools::{execute, precheck, ExecError, ToolContext};
use chrono::{DateTime, FixedOffset, Utc};
use serde_json::Value;
use shared::message::CallOutcome;
use shared::tools::{validate_arguments, ToolName, ValidationContext};
use std::time::Duration;

/// Thursday 3 December 2026, 10:00 in Vietnam: "this weekend" is Saturday 5 and Sunday 6,
/// "next Friday" is the 11th, a week's forecast reaches Wednesday 9.
const NOW: &str = "2026-12-03T10:00:00+07:00";

/// One phrasing and what it must lead to.
struct Row {
    text: &'static str,
    /// The language every reply must be in.
    lang: Lang,
    /// Every call of the conversation, in order, as tool name and exact arguments (JSON).
    calls: &'static [(&'static str, &'static str)],
    /// Words the last reply must contain.
    reply: &'static [&'static str],
}

const fn row(
    text: &'static str,
    lang: Lang,
    calls: &'static [(&'static str, &'static str)],
    reply: &'static [&'static str],
) -> Row {
    Row {
        text,
        lang,
        calls,
        reply,
    }
}

const VI: Lang = Lang::Vi;
const EN: Lang = Lang::En;
const WEATHER: &str = "getWeather";
const SEARCH: &str = "searchRestaurants";
const BOOK: &str = "createBooking";

const ROWS: &[Row] = &[
    // Weather: the days asked for, and a reply about those days.
    row(
        "Cuối tuần này Đà Lạt có mưa không?",
        VI,
        &[(WEATHER, r#"{"city":"Đà Lạt","days":4}"#)],
        &["thứ Bảy 05/12", "Chủ nhật 06/12", "mưa"],
    ),
    row(
        "cuoi tuan nay da lat co mua khong",
        VI,
        &[(WEATHER, r#"{"city":"Đà Lạt","days":4}"#)],
        &["thứ Bảy 05/12", "Chủ nhật 06/12"],
    ),
    row(
        "Will it rain in Dalat this weekend?",
        EN,
        &[(WEATHER, r#"{"city":"Đà Lạt","days":4}"#)],
        &["Saturday 5 Dec", "Sunday 6 Dec"],
    ),
    row(
        "Thời tiết Hà Nội hôm nay thế nào?",
        VI,
        &[(WEATHER, r#"{"city":"Hà Nội"}"#)],
        &["hôm nay (thứ Năm 03/12)"],
    ),
    row(
        "thoi tiet ha noi hom nay",
        VI,
        &[(WEATHER, r#"{"city":"Hà Nội"}"#)],
        &["hôm nay"],
    ),
    row(
        "What's the weather in Hanoi today?",
        EN,
        &[(WEATHER, r#"{"city":"Hà Nội"}"#)],
        &["today (Thursday 3 Dec)"],
    ),
    row(
        "Ngày mai Sài Gòn có mưa không?",
        VI,
        &[(WEATHER, r#"{"city":"TP. Hồ Chí Minh","days":2}"#)],
        &["ngày mai (thứ Sáu 04/12)"],
    ),
    row(
        "ngay mai sai gon co mua khong",
        VI,
        &[(WEATHER, r#"{"city":"TP. Hồ Chí Minh","days":2}"#)],
        &["ngày mai"],
    ),
    row(
        "Weather in Saigon tomorrow?",
        EN,
        &[(WEATHER, r#"{"city":"TP. Hồ Chí Minh","days":2}"#)],
        &["tomorrow (Friday 4 Dec)"],
    ),
    row(
        "Thời tiết HCM ngày kia",
        VI,
        &[(WEATHER, r#"{"city":"TP. Hồ Chí Minh","days":3}"#)],
        &["thứ Bảy 05/12"],
    ),
    row(
        "Weather in Ho Chi Minh City the day after tomorrow",
        EN,
        &[(WEATHER, r#"{"city":"TP. Hồ Chí Minh","days":3}"#)],
        &["Saturday 5 Dec"],
    ),
    row(
        "Huế mốt có mưa không",
        VI,
        &[(WEATHER, r#"{"city":"Huế","days":3}"#)],
        &["thứ Bảy 05/12"],
    ),
    row(
        "Thời tiết Đà Nẵng thứ Bảy này",
        VI,
        &[(WEATHER, r#"{"city":"Đà Nẵng","days":3}"#)],
        &["thứ Bảy 05/12"],
    ),
    row(
        "Weather in Da Nang on Saturday",
        EN,
        &[(WEATHER, r#"{"city":"Đà Nẵng","days":3}"#)],
        &["Saturday 5 Dec"],
    ),
    row(
        "thời tiết đà nẵng chủ nhật",
        VI,
        &[(WEATHER, r#"{"city":"Đà Nẵng","days":4}"#)],
        &["Chủ nhật 06/12"],
    ),
    row(
        "Thời tiết Hà Nội và Đà Lạt 2 ngày tới thế nào?",
        VI,
        &[
            (WEATHER, r#"{"city":"Hà Nội","days":2}"#),
            (WEATHER, r#"{"city":"Đà Lạt","days":2}"#),
        ],
        &["Thời tiết Hà Nội", "Thời tiết Đà Lạt"],
    ),
    row(
        "Weather in Hue and Hanoi for the next 3 days",
        EN,
        &[
            (WEATHER, r#"{"city":"Huế","days":3}"#),
            (WEATHER, r#"{"city":"Hà Nội","days":3}"#),
        ],
        &["Weather in Huế", "Weather in Hà Nội", "Saturday 5 Dec"],
    ),
    row(
        "Cuối tuần sau Đà Lạt có mưa không?",
        VI,
        &[],
        &["7 ngày", "thứ Bảy 12/12"],
    ),
    row(
        "Will it rain in Hanoi next weekend?",
        EN,
        &[],
        &["7-day", "Saturday 12 Dec"],
    ),
    row(
        "Thời tiết Huế ngày 5/12",
        VI,
        &[(WEATHER, r#"{"city":"Huế","days":3}"#)],
        &["thứ Bảy 05/12"],
    ),
    row(
        "Thời tiết Đà Lạt ngày 6 tháng 12",
        VI,
        &[(WEATHER, r#"{"city":"Đà Lạt","days":4}"#)],
        &["Chủ nhật 06/12"],
    ),
    row(
        "Weather in Da Lat on Dec 5",
        EN,
        &[(WEATHER, r#"{"city":"Đà Lạt","days":3}"#)],
        &["Saturday 5 Dec"],
    ),
    row(
        "weather hue 5 December",
        EN,
        &[(WEATHER, r#"{"city":"Huế","days":3}"#)],
        &["Saturday 5 Dec"],
    ),
    row(
        "Trời Hà Nội tối nay thế nào",
        VI,
        &[(WEATHER, r#"{"city":"Hà Nội"}"#)],
        &["hôm nay"],
    ),
    row("Thời tiết Nha Trang cuối tuần", VI, &[], &["Nha Trang"]),
    row(
        "Thứ Sáu tới Đà Nẵng có nắng không",
        VI,
        &[(WEATHER, r#"{"city":"Đà Nẵng","days":2}"#)],
        &["thứ Sáu 04/12"],
    ),
    row(
        "thoi tiet da nang thu 6 tuan sau",
        VI,
        &[],
        &["7 ngày", "thứ Sáu 11/12"],
    ),
    row(
        "Is it going to rain in HN this weekend",
        EN,
        &[(WEATHER, r#"{"city":"Hà Nội","days":4}"#)],
        &["Saturday 5 Dec", "Sunday 6 Dec"],
    ),
    row(
        "SG cuối tuần này mưa không",
        VI,
        &[(WEATHER, r#"{"city":"TP. Hồ Chí Minh","days":4}"#)],
        &["thứ Bảy 05/12"],
    ),
    row(
        "Đà Lạt 3 ngày tới thời tiết ra sao",
        VI,
        &[(WEATHER, r#"{"city":"Đà Lạt","days":3}"#)],
        &["hôm nay", "ngày mai", "thứ Bảy 05/12"],
    ),
    row(
        "thoi tiet hue cuoi tuan nay",
        VI,
        &[(WEATHER, r#"{"city":"Huế","days":4}"#)],
        &["thứ Bảy 05/12"],
    ),
    row(
        "ngay mai ha noi co mua khong",
        VI,
        &[(WEATHER, r#"{"city":"Hà Nội","days":2}"#)],
        &["ngày mai"],
    ),
    // Searches.
    row(
        "Tìm nhà hàng chả cá ở Hà Nội",
        VI,
        &[(SEARCH, r#"{"city":"Hà Nội","cuisine":"chả cá"}"#)],
        &["Chả Cá Thăng Long"],
    ),
    row(
        "tim quan pho o ha noi",
        VI,
        &[(SEARCH, r#"{"city":"Hà Nội","cuisine":"phở"}"#)],
        &["Phở Thìn Lò Đúc"],
    ),
    row(
        "Find seafood in Da Nang for 6 people",
        EN,
        &[(
            SEARCH,
            r#"{"city":"Đà Nẵng","cuisine":"seafood","partySize":6}"#,
        )],
        &["Hải Sản Bé Mặn"],
    ),
    row(
        "tim nha hang hai san o da nang cho 6 nguoi",
        VI,
        &[(
            SEARCH,
            r#"{"city":"Đà Nẵng","cuisine":"hải sản","partySize":6}"#,
        )],
        &["Hải Sản Bé Mặn"],
    ),
    row(
        "Gợi ý quán chay ở Huế cho bốn người tối mai",
        VI,
        &[(
            SEARCH,
            r#"{"city":"Huế","cuisine":"chay","partySize":4,"date":"2026-12-04"}"#,
        )],
        &["Nhà Hàng Chay Liên Hoa"],
    ),
    row(
        "goi y quan chay o hue cho bon nguoi toi mai",
        VI,
        &[(
            SEARCH,
            r#"{"city":"Huế","cuisine":"chay","partySize":4,"date":"2026-12-04"}"#,
        )],
        &["Nhà Hàng Chay Liên Hoa"],
    ),
    row(
        "Find me a vegetarian restaurant in Hue for four tomorrow",
        EN,
        &[(
            SEARCH,
            r#"{"city":"Huế","cuisine":"vegetarian","partySize":4,"date":"2026-12-04"}"#,
        )],
        &["Nhà Hàng Chay Liên Hoa"],
    ),
    row(
        "Tìm quán lẩu ở Sài Gòn cho mười người",
        VI,
        &[(
            SEARCH,
            r#"{"city":"TP. Hồ Chí Minh","cuisine":"lẩu","partySize":10}"#,
        )],
        &["Lẩu Cá Kèo Bà Huyện"],
    ),
    row(
        "Italian food in Saigon for two on Friday",
        EN,
        &[(
            SEARCH,
            r#"{"city":"TP. Hồ Chí Minh","cuisine":"Italian","partySize":2,"date":"2026-12-04"}"#,
        )],
        &["Pizza 4P's Bến Thành"],
    ),
    row(
        "Quán nướng nào ở Đà Lạt còn chỗ cho nhóm 8 người thứ Bảy?",
        VI,
        &[(
            SEARCH,
            r#"{"city":"Đà Lạt","cuisine":"nướng","partySize":8,"date":"2026-12-05"}"#,
        )],
        &["Quán Nướng Gió Lùa"],
    ),
    row(
        "Sushi in Da Nang for a party of 6 next Friday",
        EN,
        &[(
            SEARCH,
            r#"{"city":"Đà Nẵng","cuisine":"Japanese","partySize":6,"date":"2026-12-11"}"#,
        )],
        &["Kaizen Sushi"],
    ),
    row(
        "tìm quán cà phê ở dalat",
        VI,
        &[(SEARCH, r#"{"city":"Đà Lạt","cuisine":"cà phê"}"#)],
        &["An Cafe"],
    ),
    row(
        "restaurants in Hanoi on 24/12 for 2",
        EN,
        &[(
            SEARCH,
            r#"{"city":"Hà Nội","partySize":2,"date":"2026-12-24"}"#,
        )],
        &["I found"],
    ),
    row(
        "Tìm nhà hàng Pháp ở Hà Nội ngày 24 tháng 12",
        VI,
        &[(
            SEARCH,
            r#"{"city":"Hà Nội","cuisine":"Pháp","date":"2026-12-24"}"#,
        )],
        &["La Badiane"],
    ),
    row(
        "Find French restaurants in Hue on December 24th",
        EN,
        &[(
            SEARCH,
            r#"{"city":"Huế","cuisine":"French","date":"2026-12-24"}"#,
        )],
        &["La Carambole"],
    ),
    row("Tìm quán ở Nha Trang", VI, &[], &["Nha Trang"]),
    row(
        "Tìm quán bún chả ở Hà Nội cho 2 người trưa mai",
        VI,
        &[(
            SEARCH,
            r#"{"city":"Hà Nội","cuisine":"bún chả","partySize":2,"date":"2026-12-04"}"#,
        )],
        &["Bún Chả Hương Liên"],
    ),
    row(
        "Find a place for lunch tomorrow in Hanoi for 3",
        EN,
        &[(
            SEARCH,
            r#"{"city":"Hà Nội","partySize":3,"date":"2026-12-04"}"#,
        )],
        &["I found"],
    ),
    row(
        "quán hải sản ở Huế",
        VI,
        &[(SEARCH, r#"{"city":"Huế","cuisine":"hải sản"}"#)],
        &["Hải Sản Thuận An"],
    ),
    row(
        "Tìm quán ở Đà Lạt cho hai người",
        VI,
        &[(SEARCH, r#"{"city":"Đà Lạt","partySize":2}"#)],
        &["Tôi tìm được"],
    ),
    row(
        "restaurants in Da Lat, a party of 6",
        EN,
        &[(SEARCH, r#"{"city":"Đà Lạt","partySize":6}"#)],
        &["I found"],
    ),
    row(
        "Find a restaurant in Hanoi for two",
        EN,
        &[(SEARCH, r#"{"city":"Hà Nội","partySize":2}"#)],
        &["I found"],
    ),
    row(
        "Tìm nhà hàng ở Huế cho mười hai người",
        VI,
        &[(SEARCH, r#"{"city":"Huế","partySize":12}"#)],
        &["Tôi tìm được"],
    ),
    row(
        "nhà hàng ở Đà Nẵng cho 2 vợ chồng",
        VI,
        &[(SEARCH, r#"{"city":"Đà Nẵng","partySize":2}"#)],
        &["Tôi tìm được"],
    ),
    // Bookings in a new conversation: a search for the id, then the booking.
    row(
        "Đặt bàn ở Chả Cá Thăng Long tối mai lúc 19:00 cho 2 người",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"chả cá","partySize":2,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":2,"startsAt":"2026-12-04T19:00:00+07:00"}"#,
            ),
        ],
        &["Chả Cá Thăng Long"],
    ),
    row(
        "dat ban o cha ca thang long toi mai luc 19:00 cho 2 nguoi",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"chả cá","partySize":2,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":2,"startsAt":"2026-12-04T19:00:00+07:00"}"#,
            ),
        ],
        &["Chả Cá Thăng Long"],
    ),
    row(
        "Book a table for two at Cha Ca Thang Long tomorrow at 7pm",
        EN,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"chả cá","partySize":2,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":2,"startsAt":"2026-12-04T19:00:00+07:00"}"#,
            ),
        ],
        &["Let me prepare a booking request for Chả Cá Thăng Long"],
    ),
    row(
        "Đặt bàn Chả Cá Thăng Long cho bốn người 7 giờ tối mai",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"chả cá","partySize":4,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":4,"startsAt":"2026-12-04T19:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "đặt bàn chả cá thăng long 4 người 7h tối mai",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"chả cá","partySize":4,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":4,"startsAt":"2026-12-04T19:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "dat ban cha ca thang long 7h toi mai cho 4 nguoi",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"chả cá","partySize":4,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":4,"startsAt":"2026-12-04T19:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Book Cha Ca Thang Long for four tomorrow at 7:30 pm",
        EN,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"chả cá","partySize":4,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":4,"startsAt":"2026-12-04T19:30:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Book Chả Cá Thăng Long at noon tomorrow for 3",
        EN,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"chả cá","partySize":3,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":3,"startsAt":"2026-12-04T12:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Đặt Chả Cá Thăng Long 19h30 ngày mai 5 khách",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"chả cá","partySize":5,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":5,"startsAt":"2026-12-04T19:30:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Đặt bàn Chả Cá Thăng Long 7 giờ tối thứ Sáu cho tám người",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"chả cá","partySize":8,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":8,"startsAt":"2026-12-04T19:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Đặt bàn ở Bún Chả Hương Liên trưa mai cho hai người",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"bún chả","partySize":2,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-bun-cha-huong-lien","partySize":2,"startsAt":"2026-12-04T12:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Book Bun Cha Huong Lien tomorrow lunchtime for 2",
        EN,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"bún chả","partySize":2,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-bun-cha-huong-lien","partySize":2,"startsAt":"2026-12-04T12:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Đặt bàn Lẩu Bò Ông Tám tối nay 7 rưỡi cho 6 người",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Đà Nẵng","cuisine":"lẩu","partySize":6,"date":"2026-12-03"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"dn-lau-bo-ong-tam","partySize":6,"startsAt":"2026-12-03T19:30:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Book Lau Bo Ong Tam tonight at half past 7 for 6",
        EN,
        &[
            (
                SEARCH,
                r#"{"city":"Đà Nẵng","cuisine":"lẩu","partySize":6,"date":"2026-12-03"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"dn-lau-bo-ong-tam","partySize":6,"startsAt":"2026-12-03T19:30:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Đặt bàn Bánh Khoái Hồng Mai lúc 19h cho 3 người",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Huế","cuisine":"bánh khoái","partySize":3,"date":"2026-12-03"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hue-banh-khoai-hong-mai","partySize":3,"startsAt":"2026-12-03T19:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Đặt bàn ở Mì Quảng Bà Mua 7 giờ sáng mai cho 2 người",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Đà Nẵng","cuisine":"mì Quảng","partySize":2,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"dn-mi-quang-ba-mua","partySize":2,"startsAt":"2026-12-04T07:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Book a table at Madame Lan for 5 on Friday at 8pm",
        EN,
        &[
            (
                SEARCH,
                r#"{"city":"Đà Nẵng","cuisine":"món Việt","partySize":5,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"dn-madame-lan","partySize":5,"startsAt":"2026-12-04T20:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "dat ban madame lan toi thu 7 luc 19h cho 4 nguoi",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Đà Nẵng","cuisine":"món Việt","partySize":4,"date":"2026-12-05"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"dn-madame-lan","partySize":4,"startsAt":"2026-12-05T19:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Đặt bàn La Badiane thứ 6 tuần sau lúc 19h30 cho 2 người",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"Pháp","partySize":2,"date":"2026-12-11"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-la-badiane","partySize":2,"startsAt":"2026-12-11T19:30:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Book La Badiane next Friday 7:30pm, table for 2",
        EN,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"Pháp","partySize":2,"date":"2026-12-11"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-la-badiane","partySize":2,"startsAt":"2026-12-11T19:30:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Đặt bàn Tịnh Gia Viên ngày 24/12 lúc 19:00 cho 4 người",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Huế","cuisine":"cung đình Huế","partySize":4,"date":"2026-12-24"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hue-tinh-gia-vien","partySize":4,"startsAt":"2026-12-24T19:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Book Tinh Gia Vien on Dec 24 at 7pm for 4",
        EN,
        &[
            (
                SEARCH,
                r#"{"city":"Huế","cuisine":"cung đình Huế","partySize":4,"date":"2026-12-24"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hue-tinh-gia-vien","partySize":4,"startsAt":"2026-12-24T19:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Đặt chỗ ở Pizza 4P's Bến Thành cho 2 người lúc 20h ngày 24 tháng 12",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"TP. Hồ Chí Minh","cuisine":"Ý","partySize":2,"date":"2026-12-24"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hcm-pizza-4ps-ben-thanh","partySize":2,"startsAt":"2026-12-24T20:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "đặt bàn hải sản bé mặn 6 người 18h thứ bảy",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Đà Nẵng","cuisine":"hải sản","partySize":6,"date":"2026-12-05"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"dn-hai-san-be-man","partySize":6,"startsAt":"2026-12-05T18:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Book Kaizen Sushi, party of 6, Saturday 7pm",
        EN,
        &[
            (
                SEARCH,
                r#"{"city":"Đà Nẵng","cuisine":"Nhật","partySize":6,"date":"2026-12-05"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"dn-kaizen-sushi","partySize":6,"startsAt":"2026-12-05T19:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Reserve Le Corto for 2 this Saturday at 8 pm",
        EN,
        &[
            (
                SEARCH,
                r#"{"city":"TP. Hồ Chí Minh","cuisine":"Pháp","partySize":2,"date":"2026-12-05"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hcm-le-corto","partySize":2,"startsAt":"2026-12-05T20:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    // A booking by city: the first place with room.
    row(
        "Đặt bàn cho 4 người ở Hà Nội tối mai lúc 19:00",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","partySize":4,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-bun-cha-huong-lien","partySize":4,"startsAt":"2026-12-04T19:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row(
        "Book a table for 2 in Hanoi tomorrow at 7:30 pm",
        EN,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","partySize":2,"date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-bun-cha-huong-lien","partySize":2,"startsAt":"2026-12-04T19:30:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    // Nothing is invented: without a party size the call leaves it out (and is rejected).
    row(
        "Đặt bàn ở Chả Cá Thăng Long tối mai lúc 19:00",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","cuisine":"chả cá","date":"2026-12-04"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-cha-ca-thang-long","startsAt":"2026-12-04T19:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
    row("đặt bàn cho 4 người tối mai", VI, &[], &["thành phố nào"]),
    row(
        "Book a table for 4 tomorrow at 7pm",
        EN,
        &[],
        &["Which city"],
    ),
    row("Đặt bàn ở Hội An tối mai", VI, &[], &["Hội An"]),
    // Two requests in one message.
    row(
        "What's the weather in Da Nang this weekend? Then find me a seafood place there.",
        EN,
        &[
            (WEATHER, r#"{"city":"Đà Nẵng","days":4}"#),
            (SEARCH, r#"{"city":"Đà Nẵng","cuisine":"seafood"}"#),
        ],
        &["Saturday 5 Dec", "Sunday 6 Dec", "Hải Sản Bé Mặn"],
    ),
    row(
        "Cuối tuần này Đà Nẵng thời tiết thế nào? Rồi tìm giúp mình quán hải sản ở đó",
        VI,
        &[
            (WEATHER, r#"{"city":"Đà Nẵng","days":4}"#),
            (SEARCH, r#"{"city":"Đà Nẵng","cuisine":"hải sản"}"#),
        ],
        &["thứ Bảy 05/12", "Chủ nhật 06/12", "Hải Sản Bé Mặn"],
    ),
    row(
        "cuoi tuan nay da nang thoi tiet the nao? roi tim giup minh quan hai san o do",
        VI,
        &[
            (WEATHER, r#"{"city":"Đà Nẵng","days":4}"#),
            (SEARCH, r#"{"city":"Đà Nẵng","cuisine":"hải sản"}"#),
        ],
        &["thứ Bảy 05/12", "Hải Sản Bé Mặn"],
    ),
    row(
        "Thời tiết Huế ngày mai, và tìm quán bún bò ở đó",
        VI,
        &[
            (WEATHER, r#"{"city":"Huế","days":2}"#),
            (SEARCH, r#"{"city":"Huế","cuisine":"bún bò"}"#),
        ],
        &["ngày mai", "Bún Bò Huế Bà Tuyết"],
    ),
    row(
        "Find a vegetarian place in Hue, and will it rain there tomorrow?",
        EN,
        &[
            (SEARCH, r#"{"city":"Huế","cuisine":"vegetarian"}"#),
            (WEATHER, r#"{"city":"Huế","days":2}"#),
        ],
        &["Nhà Hàng Chay Liên Hoa", "tomorrow (Friday 4 Dec)"],
    ),
    row(
        "Thời tiết Đà Lạt thứ Bảy thế nào? Đặt bàn Le Rabelais tối thứ Bảy lúc 19h cho 2 người",
        VI,
        &[
            (WEATHER, r#"{"city":"Đà Lạt","days":3}"#),
            (
                SEARCH,
                r#"{"city":"Đà Lạt","cuisine":"Pháp","partySize":2,"date":"2026-12-05"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"dl-le-rabelais","partySize":2,"startsAt":"2026-12-05T19:00:00+07:00"}"#,
            ),
        ],
        &["thứ Bảy 05/12", "Le Rabelais"],
    ),
    // The person's own bookings.
    row(
        "Đặt chỗ của tôi",
        VI,
        &[("listBookings", "{}")],
        &["Bạn chưa có"],
    ),
    row(
        "show my bookings",
        EN,
        &[("listBookings", "{}")],
        &["You have no bookings."],
    ),
    row(
        "tìm quán cà phê ở HCM",
        VI,
        &[(SEARCH, r#"{"city":"TP. Hồ Chí Minh","cuisine":"cà phê"}"#)],
        &["Không tìm thấy nhà hàng phù hợp"],
    ),
    row(
        "coffee in Saigon",
        EN,
        &[(SEARCH, r#"{"city":"TP. Hồ Chí Minh","cuisine":"cafe"}"#)],
        &["No restaurants matched."],
    ),
    row(
        "Huỷ đặt chỗ BK-1A2B3C4D",
        VI,
        &[("cancelBooking", r#"{"bookingId":"BK-1A2B3C4D"}"#)],
        &["BK-1A2B3C4D"],
    ),
    row(
        "cancel booking bk-1a2b3c4d",
        EN,
        &[("cancelBooking", r#"{"bookingId":"BK-1A2B3C4D"}"#)],
        &["BK-1A2B3C4D"],
    ),
];

/// Whether `text` reads as `lang`: a few function words only one of the languages uses.
fn reads_as(text: &str, lang: Lang) -> bool {
    const VIETNAMESE: [&str; 12] = [
        "tôi",
        "Tôi",
        "bạn",
        "Bạn",
        "Để",
        "Thời tiết",
        "khả năng",
        "Chưa",
        "Không",
        "Xin",
        "nhà hàng",
        "Có",
    ];
    const ENGLISH: [&str; 10] = [
        "Let me",
        "I ",
        "Weather in",
        "Sorry",
        "Which",
        "You",
        "No ",
        "Rain",
        "There",
        "Hi",
    ];
    let vietnamese = VIETNAMESE.iter().any(|word| text.contains(word));
    let english = ENGLISH.iter().any(|word| text.contains(word));
    match lang {
        Lang::Vi => vietnamese && !text.contains("Let me") && !text.contains("Weather in"),
        Lang::En => english && !text.contains("tôi") && !text.contains("Bạn"),
    }
}

/// The conversation `row.text` starts, up to a call that needs the person's approval or
/// a reply without calls; every call is validated and the read-only ones run.
async fn run(model: &OfflineModel, ctx: &ToolContext, row: &Row) -> Result<(), String> {
    let validation = ValidationContext { now: ctx.now };
    let mut history = vec![user(row.text)];
    let mut made: Vec<(String, Value)> = Vec::new();
    let mut last = String::new();
    for _ in 0..4 {
        let turn = assemble(&model.plan_turn(&request(history.clone())));
        if !reads_as(&turn.text, row.lang) {
            return Err(format!("not in {:?}: {:?}", row.lang, turn.text));
        }
        last.clone_from(&turn.text);
        if turn.calls.is_empty() {
            break;
        }
        history.push(turn.assistant());
        let mut awaits_approval = false;
        for call in &turn.calls {
            let arguments: Value = serde_json::from_str(&call.arguments)
                .map_err(|error| format!("{} arguments are not JSON: {error}", call.name))?;
            made.push((call.name.clone(), arguments));
            let tool = ToolName::parse(&call.name).ok_or(format!("no tool {}", call.name))?;
            let input = validate_arguments(tool, &call.arguments, &validation);
            if tool.definition().requires_approval {
                awaits_approval = true;
                let complete =
                    call.arguments.contains("partySize") || tool != ToolName::CreateBooking;
                match (&input, complete) {
                    (Ok(input), true) if tool == ToolName::CreateBooking => {
                        if let Err(error) = precheck(input, ctx).await {
                            return Err(format!("{} would be refused: {error:?}", call.arguments));
                        }
                    }
                    (Err(error), true) => {
                        return Err(format!("{} is invalid: {error}", call.arguments))
                    }
                    _ => {}
                }
                continue;
            }
            let outcome = match input {
                Ok(input) => match execute(&input, ctx).await {
                    Ok(output) => CallOutcome::Output(output),
                    Err(ExecError::Tool(error)) => CallOutcome::Error(error),
                    Err(ExecError::Internal(details)) => {
                        return Err(format!("{} failed: {details}", call.name))
                    }
                },
                Err(error) => return Err(format!("{} is invalid: {error}", call.arguments)),
            };
            let (content, is_error) =
                crate::history::result_content(&outcome).ok_or("a finished call has a result")?;
            history.push(ModelMessage::ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content,
                is_error,
            });
        }
        if awaits_approval {
            break;
        }
    }
    let expected: Vec<(String, Value)> = row
        .calls
        .iter()
        .map(|(name, arguments)| {
            let arguments = serde_json::from_str(arguments)
                .unwrap_or_else(|error| panic!("{arguments} in the table: {error}"));
            ((*name).to_owned(), arguments)
        })
        .collect();
    if made != expected {
        let show = |calls: &[(String, Value)]| {
            calls
                .iter()
                .map(|(name, arguments)| format!("{name} {arguments}"))
                .collect::<Vec<_>>()
                .join(" → ")
        };
        return Err(format!(
            "calls\n    made:     {}\n    expected: {}",
            show(&made),
            show(&expected)
        ));
    }
    for word in row.reply {
        if !last.contains(word) {
            return Err(format!("the reply lacks {word:?}: {last:?}"));
        }
    }
    Ok(())
}

#[tokio::test]
async fn every_phrasing_makes_its_calls() {
    assert!(ROWS.len() >= 80, "{} phrasings", ROWS.len());
    let now: DateTime<FixedOffset> = DateTime::parse_from_rfc3339(NOW).unwrap();
    let model = OfflineModel::new(Duration::ZERO).with_now(now);
    let (db, _guard) = crate::db::test_pool().await;
    let ctx = ToolContext {
        db,
        owner_id: "owner".into(),
        conversation_id: "conversation".into(),
        call_id: "call".into(),
        now: now.with_timezone(&Utc),
        upstreams: Default::default(),
        take: None,
    };
    let mut failures = Vec::new();
    for row in ROWS {
        if let Err(why) = run(&model, &ctx, row).await {
            failures.push(format!("{:?}: {why}", row.text));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} phrasings failed:\n{}",
        failures.len(),
        ROWS.len(),
        failures.join("\n")
    );
}

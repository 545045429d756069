//! Phrasings of forecasts and searches.

use super::{row, Row, EN, SEARCH, VI, WEATHER};

pub(super) const ROWS: &[Row] = &[
    // Weather: the days asked for, and a reply about those days.
    row(
        "Cuối tuần này Đà Lạt có mưa không?",
        VI,
        &[(
            WEATHER,
            r#"{"city":"Đà Lạt","from":"2026-12-05","to":"2026-12-06"}"#,
        )],
        &["thứ Bảy 05/12", "Chủ nhật 06/12", "mưa"],
    ),
    row(
        "cuoi tuan nay da lat co mua khong",
        VI,
        &[(
            WEATHER,
            r#"{"city":"Đà Lạt","from":"2026-12-05","to":"2026-12-06"}"#,
        )],
        &["thứ Bảy 05/12", "Chủ nhật 06/12"],
    ),
    row(
        "Will it rain in Dalat this weekend?",
        EN,
        &[(
            WEATHER,
            r#"{"city":"Đà Lạt","from":"2026-12-05","to":"2026-12-06"}"#,
        )],
        &["Saturday 5 Dec", "Sunday 6 Dec"],
    ),
    row(
        "Thời tiết Hà Nội hôm nay thế nào?",
        VI,
        &[(WEATHER, r#"{"city":"Hà Nội","from":"2026-12-03"}"#)],
        &["hôm nay (thứ Năm 03/12)"],
    ),
    row(
        "thoi tiet ha noi hom nay",
        VI,
        &[(WEATHER, r#"{"city":"Hà Nội","from":"2026-12-03"}"#)],
        &["hôm nay"],
    ),
    row(
        "What's the weather in Hanoi today?",
        EN,
        &[(WEATHER, r#"{"city":"Hà Nội","from":"2026-12-03"}"#)],
        &["today (Thursday 3 Dec)"],
    ),
    row(
        "Ngày mai Sài Gòn có mưa không?",
        VI,
        &[(WEATHER, r#"{"city":"TP. Hồ Chí Minh","from":"2026-12-04"}"#)],
        &["ngày mai (thứ Sáu 04/12)"],
    ),
    row(
        "ngay mai sai gon co mua khong",
        VI,
        &[(WEATHER, r#"{"city":"TP. Hồ Chí Minh","from":"2026-12-04"}"#)],
        &["ngày mai"],
    ),
    row(
        "Weather in Saigon tomorrow?",
        EN,
        &[(WEATHER, r#"{"city":"TP. Hồ Chí Minh","from":"2026-12-04"}"#)],
        &["tomorrow (Friday 4 Dec)"],
    ),
    row(
        "Thời tiết HCM ngày kia",
        VI,
        &[(WEATHER, r#"{"city":"TP. Hồ Chí Minh","from":"2026-12-05"}"#)],
        &["thứ Bảy 05/12"],
    ),
    row(
        "Weather in Ho Chi Minh City the day after tomorrow",
        EN,
        &[(WEATHER, r#"{"city":"TP. Hồ Chí Minh","from":"2026-12-05"}"#)],
        &["Saturday 5 Dec"],
    ),
    row(
        "Huế mốt có mưa không",
        VI,
        &[(WEATHER, r#"{"city":"Huế","from":"2026-12-05"}"#)],
        &["thứ Bảy 05/12"],
    ),
    row(
        "Thời tiết Đà Nẵng thứ Bảy này",
        VI,
        &[(WEATHER, r#"{"city":"Đà Nẵng","from":"2026-12-05"}"#)],
        &["thứ Bảy 05/12"],
    ),
    row(
        "Weather in Da Nang on Saturday",
        EN,
        &[(WEATHER, r#"{"city":"Đà Nẵng","from":"2026-12-05"}"#)],
        &["Saturday 5 Dec"],
    ),
    row(
        "thời tiết đà nẵng chủ nhật",
        VI,
        &[(WEATHER, r#"{"city":"Đà Nẵng","from":"2026-12-06"}"#)],
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
        &[(WEATHER, r#"{"city":"Huế","from":"2026-12-05"}"#)],
        &["thứ Bảy 05/12"],
    ),
    row(
        "Thời tiết Đà Lạt ngày 6 tháng 12",
        VI,
        &[(WEATHER, r#"{"city":"Đà Lạt","from":"2026-12-06"}"#)],
        &["Chủ nhật 06/12"],
    ),
    row(
        "Weather in Da Lat on Dec 5",
        EN,
        &[(WEATHER, r#"{"city":"Đà Lạt","from":"2026-12-05"}"#)],
        &["Saturday 5 Dec"],
    ),
    row(
        "weather hue 5 December",
        EN,
        &[(WEATHER, r#"{"city":"Huế","from":"2026-12-05"}"#)],
        &["Saturday 5 Dec"],
    ),
    row(
        "Trời Hà Nội tối nay thế nào",
        VI,
        &[(WEATHER, r#"{"city":"Hà Nội","from":"2026-12-03"}"#)],
        &["hôm nay"],
    ),
    row("Thời tiết Nha Trang cuối tuần", VI, &[], &["Nha Trang"]),
    row(
        "Thứ Sáu tới Đà Nẵng có nắng không",
        VI,
        &[(WEATHER, r#"{"city":"Đà Nẵng","from":"2026-12-04"}"#)],
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
        &[(
            WEATHER,
            r#"{"city":"Hà Nội","from":"2026-12-05","to":"2026-12-06"}"#,
        )],
        &["Saturday 5 Dec", "Sunday 6 Dec"],
    ),
    row(
        "SG cuối tuần này mưa không",
        VI,
        &[(
            WEATHER,
            r#"{"city":"TP. Hồ Chí Minh","from":"2026-12-05","to":"2026-12-06"}"#,
        )],
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
        &[(
            WEATHER,
            r#"{"city":"Huế","from":"2026-12-05","to":"2026-12-06"}"#,
        )],
        &["thứ Bảy 05/12"],
    ),
    row(
        "ngay mai ha noi co mua khong",
        VI,
        &[(WEATHER, r#"{"city":"Hà Nội","from":"2026-12-04"}"#)],
        &["ngày mai"],
    ),
    row(
        "What's the weather in Da Nang this weekend?",
        EN,
        &[(
            WEATHER,
            r#"{"city":"Đà Nẵng","from":"2026-12-05","to":"2026-12-06"}"#,
        )],
        &["Weather in Đà Nẵng: Saturday 5 Dec", "Sunday 6 Dec"],
    ),
    row(
        "Chủ nhật tới Đà Lạt có mưa không?",
        VI,
        &[(WEATHER, r#"{"city":"Đà Lạt","from":"2026-12-06"}"#)],
        &["Thời tiết Đà Lạt: Chủ nhật 06/12"],
    ),
    row(
        "Thời tiết Huế thứ Sáu",
        VI,
        &[(WEATHER, r#"{"city":"Huế","from":"2026-12-04"}"#)],
        &["ngày mai (thứ Sáu 04/12)"],
    ),
    row(
        "weekend weather in Hue",
        EN,
        &[(
            WEATHER,
            r#"{"city":"Huế","from":"2026-12-05","to":"2026-12-06"}"#,
        )],
        &["Saturday 5 Dec", "Sunday 6 Dec"],
    ),
    row(
        "Weather in Da Nang next Friday",
        EN,
        &[],
        &["7-day", "Friday 11 Dec"],
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
];

//! Phrasings of bookings, of two requests in one message, and of the person's own
//! bookings.

use super::{row, Row, BOOK, EN, SEARCH, VI, WEATHER};

pub(super) const ROWS: &[Row] = &[
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
        "Trời ơi, đặt giúp mình bàn ở Hà Nội tối nay 7h cho 2 người",
        VI,
        &[
            (
                SEARCH,
                r#"{"city":"Hà Nội","partySize":2,"date":"2026-12-03"}"#,
            ),
            (
                BOOK,
                r#"{"restaurantId":"hn-bun-cha-huong-lien","partySize":2,"startsAt":"2026-12-03T19:00:00+07:00"}"#,
            ),
        ],
        &[],
    ),
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
            (
                WEATHER,
                r#"{"city":"Đà Nẵng","from":"2026-12-05","to":"2026-12-06"}"#,
            ),
            (SEARCH, r#"{"city":"Đà Nẵng","cuisine":"seafood"}"#),
        ],
        &["Saturday 5 Dec", "Sunday 6 Dec", "Hải Sản Bé Mặn"],
    ),
    row(
        "Cuối tuần này Đà Nẵng thời tiết thế nào? Rồi tìm giúp mình quán hải sản ở đó",
        VI,
        &[
            (
                WEATHER,
                r#"{"city":"Đà Nẵng","from":"2026-12-05","to":"2026-12-06"}"#,
            ),
            (SEARCH, r#"{"city":"Đà Nẵng","cuisine":"hải sản"}"#),
        ],
        &["thứ Bảy 05/12", "Chủ nhật 06/12", "Hải Sản Bé Mặn"],
    ),
    row(
        "cuoi tuan nay da nang thoi tiet the nao? roi tim giup minh quan hai san o do",
        VI,
        &[
            (
                WEATHER,
                r#"{"city":"Đà Nẵng","from":"2026-12-05","to":"2026-12-06"}"#,
            ),
            (SEARCH, r#"{"city":"Đà Nẵng","cuisine":"hải sản"}"#),
        ],
        &["thứ Bảy 05/12", "Hải Sản Bé Mặn"],
    ),
    row(
        "Thời tiết Huế ngày mai, và tìm quán bún bò ở đó",
        VI,
        &[
            (WEATHER, r#"{"city":"Huế","from":"2026-12-04"}"#),
            (SEARCH, r#"{"city":"Huế","cuisine":"bún bò"}"#),
        ],
        &["ngày mai", "Bún Bò Huế Bà Tuyết"],
    ),
    row(
        "Find a vegetarian place in Hue, and will it rain there tomorrow?",
        EN,
        &[
            (SEARCH, r#"{"city":"Huế","cuisine":"vegetarian"}"#),
            (WEATHER, r#"{"city":"Huế","from":"2026-12-04"}"#),
        ],
        &["Nhà Hàng Chay Liên Hoa", "tomorrow (Friday 4 Dec)"],
    ),
    row(
        "Thời tiết Đà Lạt thứ Bảy thế nào? Đặt bàn Le Rabelais tối thứ Bảy lúc 19h cho 2 người",
        VI,
        &[
            (WEATHER, r#"{"city":"Đà Lạt","from":"2026-12-05"}"#),
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

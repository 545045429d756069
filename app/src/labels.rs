//! What the tools' data means to a person, in each language: the sky of a forecast, a
//! booking's state, a shipping zone, who a gift is for, interests and cuisines.
//!
//! Kept in the app rather than in `shared`: these are words of the page, and the tools'
//! types stay the model's and the API's. Every enum table is a `match` without a
//! wildcard, so a new variant is a compile error until it has both languages.

use shared::{
    lang::Lang,
    tools::{Assistant, BookingState, BookingStatus, RelationshipType, WeatherCondition, Zone},
};

/// The assistant's name people see.
pub fn assistant(lang: Lang, assistant: Assistant) -> &'static str {
    let (vi, en) = match assistant {
        // Vietnamese as `Assistant::label` says it, which the server's texts use too.
        Assistant::Restaurant => ("Đặt bàn nhà hàng", "Restaurant bookings"),
        Assistant::Gifts => ("GiftGenius — gợi ý quà", "GiftGenius — gift ideas"),
        Assistant::Shipping => ("Báo giá giao hàng", "Shipping quotes"),
    };
    lang.pick(vi, en)
}

/// The sky of a forecast day, and its icon.
pub fn weather(lang: Lang, condition: WeatherCondition) -> (&'static str, &'static str) {
    let (emoji, vi, en) = match condition {
        WeatherCondition::Sunny => ("☀️", "Nắng", "Sunny"),
        WeatherCondition::PartlyCloudy => ("⛅", "Có mây", "Partly cloudy"),
        WeatherCondition::Cloudy => ("☁️", "Nhiều mây", "Cloudy"),
        WeatherCondition::Rain => ("🌧️", "Mưa", "Rain"),
        WeatherCondition::Storm => ("⛈️", "Dông", "Storm"),
    };
    (emoji, lang.pick(vi, en))
}

/// A booking's state as a badge says it ("đã xác nhận"), and its key for classes and tests.
pub fn booking_state(lang: Lang, state: BookingState) -> (&'static str, &'static str) {
    let (key, vi, en) = match state {
        BookingState::Confirmed => ("confirmed", "đã xác nhận", "confirmed"),
        BookingState::Waitlisted => ("waitlisted", "danh sách chờ", "waitlisted"),
        BookingState::Cancelled => ("cancelled", "đã huỷ", "cancelled"),
    };
    (key, lang.pick(vi, en))
}

/// What a new booking's receipt says of it: key, status, the name of its reference, note.
pub fn booking_status(
    lang: Lang,
    status: BookingStatus,
) -> (&'static str, &'static str, &'static str, &'static str) {
    match status {
        BookingStatus::Confirmed => (
            "confirmed",
            lang.pick("Đã xác nhận", "Confirmed"),
            lang.pick("Mã đặt bàn", "Booking reference"),
            lang.pick(
                "Nhà hàng đã giữ bàn cho bạn.",
                "The restaurant is holding a table for you.",
            ),
        ),
        BookingStatus::Waitlisted => (
            "waitlisted",
            lang.pick("Trong danh sách chờ", "On the waiting list"),
            lang.pick("Mã tham chiếu", "Reference"),
            lang.pick(
                "Giờ này nhà hàng chưa còn bàn trống. Bạn đang trong danh sách chờ và sẽ được báo khi có chỗ.",
                "There is no free table at that time yet. You are on the waiting list and will be told when one frees up.",
            ),
        ),
    }
}

/// A shipping zone as people say it.
pub fn zone(lang: Lang, zone: Zone) -> &'static str {
    let (vi, en) = match zone {
        Zone::Local => ("Nội thành", "Local (same city)"),
        Zone::Regional => ("Liên tỉnh", "Regional (another province)"),
    };
    lang.pick(vi, en)
}

/// Who a gift is for.
pub fn relationship(lang: Lang, relationship: RelationshipType) -> &'static str {
    let en = match relationship {
        RelationshipType::Partner => "partner",
        RelationshipType::Parent => "parent",
        RelationshipType::Child => "child",
        RelationshipType::Sibling => "sibling",
        RelationshipType::Grandparent => "grandparent",
        RelationshipType::Friend => "friend",
        RelationshipType::Colleague => "colleague",
        RelationshipType::Teacher => "teacher",
        RelationshipType::Other => "someone else",
    };
    // shared's Vietnamese, which the server's reasons use too.
    lang.pick(relationship.label_vi(), en)
}

/// The interests the gift catalogue knows (its tags), each with what people most often
/// say for it in either language; the first of each is the label shown.
const INTERESTS: [(&str, &[&str], &[&str]); 16] = [
    (
        "gardening",
        &["làm vườn", "trồng cây", "cây cảnh", "vườn"],
        &["gardening", "garden", "plants"],
    ),
    (
        "reading",
        &["đọc sách", "sách", "đọc truyện"],
        &["reading", "books", "book"],
    ),
    (
        "cooking",
        &["nấu ăn", "nấu nướng", "làm bánh", "ẩm thực"],
        &["cooking", "baking", "cook"],
    ),
    ("coffee", &["cà phê", "cafe"], &["coffee"]),
    ("tea", &["trà", "uống trà"], &["tea"]),
    (
        "music",
        &["âm nhạc", "nhạc", "nghe nhạc", "ca hát"],
        &["music", "singing"],
    ),
    (
        "sports",
        &["thể thao", "chạy bộ", "tập gym", "bóng đá"],
        &["sports", "sport", "running", "football"],
    ),
    (
        "travel",
        &["du lịch", "phượt", "cắm trại", "leo núi"],
        &["travel", "travelling", "traveling", "camping", "hiking"],
    ),
    (
        "tech",
        &["công nghệ", "đồ công nghệ", "máy tính", "lập trình"],
        &["technology", "tech", "gadgets", "computers", "programming"],
    ),
    (
        "art",
        &["nghệ thuật", "hội hoạ", "vẽ tranh", "vẽ", "thủ công"],
        &["art", "painting", "drawing", "crafts"],
    ),
    (
        "games",
        &["trò chơi", "chơi game", "cờ vua", "xếp hình"],
        &[
            "games",
            "gaming",
            "board games",
            "board game",
            "chess",
            "puzzles",
        ],
    ),
    (
        "fashion",
        &["thời trang", "quần áo", "phụ kiện"],
        &["fashion", "clothes", "accessories"],
    ),
    (
        "beauty",
        &["làm đẹp", "mỹ phẩm", "chăm sóc da", "trang điểm"],
        &["beauty", "skincare", "makeup"],
    ),
    (
        "wellness",
        &["sức khoẻ", "sức khỏe", "thiền", "thư giãn", "yoga"],
        &["wellness", "health", "meditation", "relaxing", "yoga"],
    ),
    (
        "photography",
        &["nhiếp ảnh", "chụp ảnh", "chụp hình", "máy ảnh"],
        &["photography", "photos", "camera"],
    ),
    (
        "diving",
        &["lặn biển", "lặn"],
        &["diving", "scuba diving", "snorkeling"],
    ),
];

/// Lower case without surrounding blanks, for comparing what was said with a table.
fn key(text: &str) -> String {
    text.trim().to_lowercase()
}

/// An interest in the page's language when it is one the catalogue knows in the other
/// language ("gardening" reads "làm vườn" in Vietnamese, "làm vườn" reads "gardening" in
/// English); words already of the page's language, and words the catalogue does not know,
/// as the person said them.
pub fn interest(lang: Lang, said: &str) -> String {
    let wanted = key(said);
    let known = |words: &[&str]| words.iter().any(|word| key(word) == wanted);
    let entry = INTERESTS
        .iter()
        .find(|(tag, vi, en)| *tag == wanted || known(vi) || known(en));
    match entry {
        Some((_, vi, en)) => {
            let (own, label) = lang.pick((vi, vi.first()), (en, en.first()));
            match label {
                Some(label) if !known(own) => (*label).to_owned(),
                _ => said.trim().to_owned(),
            }
        }
        None => said.trim().to_owned(),
    }
}

/// The cuisines of the restaurant catalogue (as it writes them, in Vietnamese) that read
/// differently in English; dish names (phở, bún chả, bánh mì …) are the same in both.
const CUISINES: [(&str, &str); 12] = [
    ("chay", "vegetarian"),
    ("hải sản", "seafood"),
    ("lẩu", "hotpot"),
    ("Nhật", "Japanese"),
    ("Pháp", "French"),
    ("Ý", "Italian"),
    ("nướng BBQ", "barbecue"),
    ("cà phê", "coffee"),
    ("món Việt", "Vietnamese"),
    ("cung đình Huế", "Huế royal cuisine"),
    ("lẩu gà lá é", "chicken hotpot with lá é"),
    ("bánh Huế", "Huế rice cakes"),
];

/// A restaurant's cuisine in the page's language: the catalogue's Vietnamese word, or its
/// English name when it has one; an unknown cuisine as written.
pub fn cuisine(lang: Lang, cuisine: &str) -> String {
    let wanted = key(cuisine);
    match lang {
        Lang::Vi => cuisine.to_owned(),
        Lang::En => CUISINES
            .iter()
            .find(|(vi, _)| key(vi) == wanted)
            .map_or_else(|| cuisine.to_owned(), |(_, en)| (*en).to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Letters only Vietnamese writes (beyond ASCII): an English label has none.
    fn has_vietnamese_letters(text: &str) -> bool {
        text.chars().any(|c| {
            "àáảãạăằắẳẵặâầấẩẫậèéẻẽẹêềếểễệìíỉĩịòóỏõọôồốổỗộơờớởỡợùúủũụưừứửữựỳýỷỹỵđ"
                .contains(c.to_lowercase().next().unwrap_or(c))
        })
    }

    /// The two labels of one value: both there, and different unless they are the same
    /// word in both languages.
    fn check_pair(vi: &str, en: &str) {
        assert!(!vi.trim().is_empty(), "empty Vietnamese label for {en:?}");
        assert!(!en.trim().is_empty(), "empty English label for {vi:?}");
        assert!(
            !has_vietnamese_letters(en),
            "English label {en:?} is Vietnamese"
        );
        assert_ne!(vi, en, "untranslated label {vi:?}");
    }

    // The lists below are every variant: `exhaustive` would stop compiling if one were added
    // without being listed here.
    const CONDITIONS: [WeatherCondition; 5] = [
        WeatherCondition::Sunny,
        WeatherCondition::PartlyCloudy,
        WeatherCondition::Cloudy,
        WeatherCondition::Rain,
        WeatherCondition::Storm,
    ];
    const STATES: [BookingState; 3] = [
        BookingState::Confirmed,
        BookingState::Waitlisted,
        BookingState::Cancelled,
    ];
    const STATUSES: [BookingStatus; 2] = [BookingStatus::Confirmed, BookingStatus::Waitlisted];
    const ZONES: [Zone; 2] = [Zone::Local, Zone::Regional];
    const RELATIONSHIPS: [RelationshipType; 9] = [
        RelationshipType::Partner,
        RelationshipType::Parent,
        RelationshipType::Child,
        RelationshipType::Sibling,
        RelationshipType::Grandparent,
        RelationshipType::Friend,
        RelationshipType::Colleague,
        RelationshipType::Teacher,
        RelationshipType::Other,
    ];

    #[test]
    fn exhaustive() {
        // Each match names every variant; a new one fails to compile here.
        for condition in CONDITIONS {
            match condition {
                WeatherCondition::Sunny
                | WeatherCondition::PartlyCloudy
                | WeatherCondition::Cloudy
                | WeatherCondition::Rain
                | WeatherCondition::Storm => {}
            }
        }
        for state in STATES {
            match state {
                BookingState::Confirmed | BookingState::Waitlisted | BookingState::Cancelled => {}
            }
        }
        for zone in ZONES {
            match zone {
                Zone::Local | Zone::Regional => {}
            }
        }
        for status in STATUSES {
            match status {
                BookingStatus::Confirmed | BookingStatus::Waitlisted => {}
            }
        }
        for relationship in RELATIONSHIPS {
            match relationship {
                RelationshipType::Partner
                | RelationshipType::Parent
                | RelationshipType::Child
                | RelationshipType::Sibling
                | RelationshipType::Grandparent
                | RelationshipType::Friend
                | RelationshipType::Colleague
                | RelationshipType::Teacher
                | RelationshipType::Other => {}
            }
        }
        assert_eq!(Assistant::ALL.len(), 3);
    }

    #[test]
    fn every_variant_has_both_languages() {
        for condition in CONDITIONS {
            let (emoji, vi) = weather(Lang::Vi, condition);
            let (same, en) = weather(Lang::En, condition);
            assert_eq!(emoji, same);
            check_pair(vi, en);
        }
        for state in STATES {
            let (key, vi) = booking_state(Lang::Vi, state);
            let (same, en) = booking_state(Lang::En, state);
            assert_eq!(key, same);
            check_pair(vi, en);
        }
        for status in STATUSES {
            let vi = booking_status(Lang::Vi, status);
            let en = booking_status(Lang::En, status);
            assert_eq!(vi.0, en.0);
            check_pair(vi.1, en.1);
            check_pair(vi.2, en.2);
            check_pair(vi.3, en.3);
        }
        for zone_ in ZONES {
            check_pair(zone(Lang::Vi, zone_), zone(Lang::En, zone_));
        }
        for relationship_ in RELATIONSHIPS {
            check_pair(
                relationship(Lang::Vi, relationship_),
                relationship(Lang::En, relationship_),
            );
        }
        for assistant_ in Assistant::ALL {
            check_pair(
                assistant(Lang::Vi, assistant_),
                assistant(Lang::En, assistant_),
            );
        }
        for (_, vi, en) in INTERESTS {
            check_pair(vi[0], en[0]);
        }
        for (vi, en) in CUISINES {
            assert!(!en.is_empty() && vi != en, "{vi}");
        }
    }

    #[test]
    fn labels_match_the_tools_keys() {
        // The keys are the ones the tools' JSON uses (classes and tests rely on them).
        for state in STATES {
            let (key, _) = booking_state(Lang::En, state);
            assert_eq!(serde_json::to_value(state).unwrap(), key);
        }
        for status in STATUSES {
            let (key, ..) = booking_status(Lang::En, status);
            assert_eq!(serde_json::to_value(status).unwrap(), key);
        }
    }

    #[test]
    fn interests_read_in_the_pages_language() {
        assert_eq!(interest(Lang::Vi, "gardening"), "làm vườn");
        assert_eq!(interest(Lang::En, "làm vườn"), "gardening");
        assert_eq!(interest(Lang::En, "Làm Vườn "), "gardening");
        assert_eq!(interest(Lang::Vi, "làm vườn"), "làm vườn");
        // Words already in the page's language stay as the person said them.
        assert_eq!(interest(Lang::Vi, "trồng cây"), "trồng cây");
        assert_eq!(interest(Lang::En, "plants"), "plants");
        assert_eq!(interest(Lang::En, "trồng cây"), "gardening");
        assert_eq!(interest(Lang::En, "board game"), "board game");
        assert_eq!(interest(Lang::Vi, "board game"), "trò chơi");
        assert_eq!(interest(Lang::En, "lặn biển"), "diving");
        // What the catalogue does not know is shown as said.
        assert_eq!(interest(Lang::En, "origami"), "origami");
        assert_eq!(interest(Lang::Vi, " origami "), "origami");
    }

    #[test]
    fn interest_words_are_unique() {
        // One word standing for two interests would make the label depend on table order.
        let mut seen = std::collections::HashMap::new();
        for (tag, vi, en) in INTERESTS {
            for word in vi.iter().chain(en.iter()).chain(std::iter::once(&tag)) {
                let owner = seen.entry(key(word)).or_insert(tag);
                assert_eq!(*owner, tag, "{word} stands for {owner} and {tag}");
            }
        }
    }

    #[test]
    fn cuisines_read_in_the_pages_language() {
        assert_eq!(cuisine(Lang::En, "chay"), "vegetarian");
        assert_eq!(cuisine(Lang::En, "Hải sản"), "seafood");
        assert_eq!(cuisine(Lang::Vi, "hải sản"), "hải sản");
        assert_eq!(cuisine(Lang::En, "phở"), "phở");
    }
}

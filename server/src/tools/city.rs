//! City names and accent-free text: the one table of the cities we serve and what people
//! type for them ("ha noi", "Saigon", "HCM"), shared by the tools (a `city` argument) and
//! the offline model (a city inside a sentence); the folding that search relies on; and
//! today's date in Vietnam.

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};

/// Vietnam's UTC offset in seconds (+07:00, no daylight saving): all five cities use it.
pub const VIETNAM_UTC_OFFSET_SECS: i32 = 7 * 3600;

/// The local date in Vietnam at `now`.
pub fn vietnam_today(now: DateTime<Utc>) -> NaiveDate {
    let naive = now.naive_utc();
    naive
        .checked_add_signed(TimeDelta::seconds(i64::from(VIETNAM_UTC_OFFSET_SECS)))
        .unwrap_or(naive)
        .date()
}

/// A city we serve and the ways people write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct City {
    /// The canonical name, as the catalogue and the forecasts use it.
    pub name: &'static str,
    /// Folded word sequences ([`fold`], single spaces) that name the city inside a sentence:
    /// Vietnamese without diacritics, English spellings, common abbreviations.
    pub spellings: &'static [&'static str],
    /// Short forms that name the city only when they are the whole of a city field: inside
    /// a sentence "dn" or "lam dong" are more often something else.
    pub field_only: &'static [&'static str],
}

/// The cities we serve, in the order replies list them. Every spelling is folded, so "Hà
/// Nội", "HÀ NỘI" and "ha noi" are one entry.
pub const CITY_LEXICON: [City; 5] = [
    City {
        name: "Hà Nội",
        spellings: &["ha noi", "hanoi", "hn"],
        field_only: &[],
    },
    City {
        name: "TP. Hồ Chí Minh",
        spellings: &[
            "ho chi minh",
            "hochiminh",
            "hcm",
            "hcmc",
            "tphcm",
            "sai gon",
            "saigon",
            "sg",
        ],
        field_only: &["sgn"],
    },
    City {
        name: "Đà Lạt",
        spellings: &["da lat", "dalat"],
        field_only: &["lam dong"],
    },
    City {
        name: "Đà Nẵng",
        spellings: &["da nang", "danang"],
        field_only: &["dn"],
    },
    City {
        name: "Huế",
        spellings: &["hue"],
        field_only: &["thua thien hue"],
    },
];

/// The five cities we serve, canonical names.
pub const CITIES: [&str; 5] = [
    CITY_LEXICON[0].name,
    CITY_LEXICON[1].name,
    CITY_LEXICON[2].name,
    CITY_LEXICON[3].name,
    CITY_LEXICON[4].name,
];

/// Places people ask about that we have no data for, with their folded spellings: naming
/// one is a clear answer ("not there"), not a missing city.
pub const UNSERVED_PLACES: [(&str, &[&str]); 9] = [
    ("Hội An", &["hoi an"]),
    ("Nha Trang", &["nha trang"]),
    ("Phú Quốc", &["phu quoc"]),
    ("Hạ Long", &["ha long", "halong"]),
    ("Sa Pa", &["sa pa", "sapa"]),
    ("Cần Thơ", &["can tho"]),
    ("Vũng Tàu", &["vung tau"]),
    ("Quy Nhơn", &["quy nhon"]),
    ("Hải Phòng", &["hai phong", "haiphong"]),
];

/// Places abroad people ask about, with their folded spellings. Like [`UNSERVED_PLACES`]
/// they get "no data there", not "which city?"; unlike them they are not a second
/// Vietnamese province, so a parcel sent there is not quoted as regional. A place has one
/// entry per language it is typed in, so the reply names it as the person did.
pub const FOREIGN_PLACES: [(&str, &[&str]); 24] = [
    ("Tokyo", &["tokyo"]),
    ("Osaka", &["osaka"]),
    ("Seoul", &["seoul"]),
    ("Bangkok", &["bangkok"]),
    ("Singapore", &["singapore"]),
    ("Kuala Lumpur", &["kuala lumpur"]),
    ("Phnom Penh", &["phnom penh", "phnompenh"]),
    ("Vientiane", &["vientiane"]),
    ("Viêng Chăn", &["vieng chan"]),
    ("Beijing", &["beijing"]),
    ("Bắc Kinh", &["bac kinh"]),
    ("Shanghai", &["shanghai"]),
    ("Thượng Hải", &["thuong hai"]),
    ("Hong Kong", &["hong kong", "hongkong"]),
    ("Taipei", &["taipei"]),
    ("Paris", &["paris"]),
    ("London", &["london"]),
    ("Luân Đôn", &["luan don"]),
    ("New York", &["new york"]),
    ("Los Angeles", &["los angeles"]),
    ("Sydney", &["sydney"]),
    ("Melbourne", &["melbourne"]),
    ("Berlin", &["berlin"]),
    ("Moscow", &["moscow"]),
];

/// The canonical names joined for messages: "Hà Nội, TP. Hồ Chí Minh, Đà Lạt, Đà Nẵng, Huế".
pub fn cities_list() -> String {
    CITIES.join(", ")
}

/// Every lower-case Vietnamese letter with a diacritic, by the plain letter it folds to.
const VIETNAMESE: [(char, &str); 7] = [
    ('a', "àáảãạăằắẳẵặâầấẩẫậ"),
    ('e', "èéẻẽẹêềếểễệ"),
    ('i', "ìíỉĩị"),
    ('o', "òóỏõọôồốổỗộơờớởỡợ"),
    ('u', "ùúủũụưừứửữự"),
    ('y', "ỳýỷỹỵ"),
    ('d', "đ"),
];

/// The plain letter for one lower-case character (itself when it has no Vietnamese mark).
fn plain(c: char) -> char {
    // Every marked letter is past U+00BF: most characters typed need no look-up.
    if c < '\u{c0}' {
        return c;
    }
    VIETNAMESE
        .iter()
        .find(|(_, marked)| marked.contains(c))
        .map_or(c, |(base, _)| *base)
}

/// Combining marks (decomposed input, e.g. text typed on macOS): grave, acute, tilde,
/// hook above, dot below, breve, circumflex, horn… all live in U+0300–U+036F.
fn is_combining_mark(c: char) -> bool {
    ('\u{0300}'..='\u{036F}').contains(&c)
}

/// Lower-case, Vietnamese diacritics removed (đ→d), runs of whitespace folded to one space,
/// trimmed. Punctuation is kept.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if is_combining_mark(c) {
            continue;
        }
        if pending_space && !out.is_empty() {
            out.push(' ');
        }
        pending_space = false;
        out.push(plain(c));
    }
    out
}

/// `fold`, then every character that is not a letter or digit becomes a word break:
/// "TP. Hồ Chí Minh" → "tp ho chi minh", "Pizza 4P's" → "pizza 4p s".
/// This is how `restaurants.search_text` is computed (from name, cuisine and city) and how
/// a searched cuisine is compared with it.
pub fn words(text: &str) -> String {
    let folded: String = fold(text)
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Words that only say "city" / "country" around a city's name.
const NOISE: [&str; 7] = ["tp", "thanh", "city", "vietnam", "vn", "province", "tinh"];

/// Maps what people type ("ha noi", "Hanoi", "HÀ NỘI", "saigon", "sài gòn", "hcm", "tp hcm",
/// "ho chi minh city", "dalat", "danang", "hue", "Huế city"…) to a canonical name.
pub fn canonical_city(input: &str) -> Option<&'static str> {
    let all = words(input);
    let tokens: Vec<&str> = all.split(' ').filter(|t| !t.is_empty()).collect();
    // "thành phố" (city) is two words; "pho" alone is kept (it is never part of a name here).
    let mut kept: Vec<&str> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == "thanh" && tokens.get(i + 1) == Some(&"pho") {
            i += 2;
            continue;
        }
        if tokens[i] == "viet" && tokens.get(i + 1) == Some(&"nam") {
            i += 2;
            continue;
        }
        if !NOISE.contains(&tokens[i]) {
            kept.push(tokens[i]);
        }
        i += 1;
    }
    let compact = kept.concat();
    let whole = tokens.concat();
    // "HanoiCity", "TPHCM" typed as one word.
    let candidates = [
        Some(compact.as_str()),
        Some(whole.as_str()),
        compact.strip_prefix("tp"),
        compact.strip_suffix("city"),
    ];
    CITY_LEXICON
        .iter()
        .find(|city| {
            city.spellings
                .iter()
                .chain(city.field_only)
                .any(|spelling| {
                    let spelling = spelling.replace(' ', "");
                    candidates.contains(&Some(spelling.as_str()))
                })
        })
        .map(|city| city.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_removes_every_vietnamese_mark_in_both_cases() {
        let marked = "àáảãạăằắẳẵặâầấẩẫậèéẻẽẹêềếểễệìíỉĩịòóỏõọôồốổỗộơờớởỡợùúủũụưừứửữựỳýỷỹỵđ";
        let expected = "aaaaaaaaaaaaaaaaaeeeeeeeeeeeiiiiiooooooooooooooooouuuuuuuuuuuyyyyyd";
        assert_eq!(fold(marked), expected);
        assert_eq!(fold(&marked.to_uppercase()), expected);
        assert_eq!(fold("ĐẶNG"), "dang");
    }

    #[test]
    fn fold_lowercases_and_folds_whitespace() {
        assert_eq!(fold("  Chả   Cá\tThăng\nLong  "), "cha ca thang long");
        assert_eq!(fold("TP. Hồ Chí Minh"), "tp. ho chi minh");
        assert_eq!(fold(""), "");
        assert_eq!(fold("   "), "");
    }

    #[test]
    fn fold_handles_decomposed_input() {
        // "Hà Nội" with combining grave, circumflex and dot below.
        let decomposed = "Ha\u{0300} No\u{0302}\u{0323}i";
        assert_eq!(fold(decomposed), "ha noi");
    }

    #[test]
    fn words_drop_punctuation() {
        assert_eq!(words("TP. Hồ Chí Minh"), "tp ho chi minh");
        assert_eq!(words("Pizza 4P's — Bến Thành"), "pizza 4p s ben thanh");
    }

    #[test]
    fn vietnam_today_turns_at_local_midnight() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        let day = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        assert_eq!(vietnam_today(at("2026-11-29T16:59:59Z")), day("2026-11-29"));
        assert_eq!(vietnam_today(at("2026-11-29T17:00:00Z")), day("2026-11-30"));
        assert_eq!(vietnam_today(at("2026-12-31T20:00:00Z")), day("2027-01-01"));
    }

    #[test]
    fn canonical_names_map_to_themselves() {
        for city in CITIES {
            assert_eq!(canonical_city(city), Some(city), "{city}");
        }
    }

    #[test]
    fn what_people_type_maps_to_a_city() {
        let cases = [
            ("ha noi", "Hà Nội"),
            ("Hanoi", "Hà Nội"),
            ("HÀ NỘI", "Hà Nội"),
            ("Hà Nội, Việt Nam", "Hà Nội"),
            ("thành phố Hà Nội", "Hà Nội"),
            ("saigon", "TP. Hồ Chí Minh"),
            ("Sài Gòn", "TP. Hồ Chí Minh"),
            ("hcm", "TP. Hồ Chí Minh"),
            ("tp hcm", "TP. Hồ Chí Minh"),
            ("TP.HCM", "TP. Hồ Chí Minh"),
            ("tphcm", "TP. Hồ Chí Minh"),
            ("ho chi minh city", "TP. Hồ Chí Minh"),
            ("Thành phố Hồ Chí Minh", "TP. Hồ Chí Minh"),
            ("dalat", "Đà Lạt"),
            ("Da Lat", "Đà Lạt"),
            ("danang", "Đà Nẵng"),
            ("Da Nang city", "Đà Nẵng"),
            ("hue", "Huế"),
            ("Huế city", "Huế"),
            ("  HUẾ  ", "Huế"),
            ("HN", "Hà Nội"),
            ("Hà Nội city", "Hà Nội"),
            ("HanoiCity", "Hà Nội"),
            ("HCMC", "TP. Hồ Chí Minh"),
            ("HoChiMinhCity", "TP. Hồ Chí Minh"),
            ("SG", "TP. Hồ Chí Minh"),
            ("Đà Lạt", "Đà Lạt"),
            ("Lâm Đồng", "Đà Lạt"),
            ("Đà Nẵng", "Đà Nẵng"),
            ("DN", "Đà Nẵng"),
            ("Thừa Thiên Huế", "Huế"),
        ];
        for (typed, city) in cases {
            assert_eq!(canonical_city(typed), Some(city), "{typed:?}");
        }
    }

    #[test]
    fn the_lexicon_is_folded_and_unambiguous() {
        let mut owner = std::collections::HashMap::new();
        let served = CITY_LEXICON.iter().flat_map(|city| {
            city.spellings
                .iter()
                .chain(city.field_only)
                .map(|spelling| (city.name, *spelling))
        });
        let unserved = UNSERVED_PLACES
            .iter()
            .chain(&FOREIGN_PLACES)
            .flat_map(|(name, spellings)| spellings.iter().map(|spelling| (*name, *spelling)));
        for (name, spelling) in served.chain(unserved) {
            assert_eq!(words(spelling), spelling, "{spelling:?} is not folded");
            // "ha noi" and "hanoi" are one city's; no spelling may be two places'.
            let first = owner.entry(spelling.replace(' ', "")).or_insert(name);
            assert_eq!(*first, name, "{spelling:?}");
        }
        for (name, _) in UNSERVED_PLACES.iter().chain(&FOREIGN_PLACES) {
            assert_eq!(canonical_city(name), None, "{name}");
        }
    }

    #[test]
    fn other_places_are_not_cities_we_serve() {
        for typed in ["Paris", "Nha Trang", "", "  ", "#fail", "ha", "city", "pho"] {
            assert_eq!(canonical_city(typed), None, "{typed:?}");
        }
    }
}

//! Reading what the restaurant assistant is asked: weather, search or booking, the cities
//! and cuisine named, the party size, and the person's own bookings.

use super::lexicon::{CITIES, CUISINES};
use super::read::{is_one_of, number, Lang, Utterance};

impl Utterance {
    pub(super) fn is_weather(&self) -> bool {
        self.has("mưa|nắng")
            || self.has_folded("thoi tiet|nhiet do|du bao")
            || self.has_stem("weather|rain|temperatur|forecast")
    }

    pub(super) fn is_booking(&self) -> bool {
        self.has("đặt bàn|đặt chỗ|dat ban") || self.has_stem("book|reserv")
    }

    pub(super) fn is_search(&self) -> bool {
        self.has("nhà hàng|quán|ăn|tìm|gợi ý|nha hang|quan an|goi y")
            || self.has_stem("restaurant|eat|food|find|suggest|recommend")
            || self.cuisine(Lang::Vi).is_some()
    }

    /// Canonical names of the cities mentioned, in the order they are mentioned.
    pub(super) fn cities(&self) -> Vec<&'static str> {
        let mut found: Vec<(usize, &'static str)> = CITIES
            .iter()
            .filter_map(|(name, spellings)| {
                spellings
                    .iter()
                    .filter_map(|spelling| self.find(spelling, |t| &t.folded))
                    .min()
                    .map(|position| (position, *name))
            })
            .collect();
        found.sort_by_key(|(position, _)| *position);
        found.into_iter().map(|(_, name)| name).collect()
    }

    pub(super) fn party_size(&self) -> Option<u8> {
        const UNITS: &str = "người|nguoi|khách|khach|people|persons|person|guests|guest|pax|adults";
        // "for 7 pm" and "for 3 days" are not parties.
        const NOT_A_PARTY: &str =
            "pm|am|h|giờ|gio|o'clock|days|day|nights|night|hours|hour|ngày|ngay|minutes|min";
        for index in 0..self.tokens.len() {
            if let Some(count) = number(self.lower(index)) {
                if is_one_of(UNITS, self.lower(index + 1)) {
                    return Some(count);
                }
            }
        }
        for index in 0..self.tokens.len() {
            let introduces = match self.lower(index) {
                "for" => true,
                "of" => matches!(
                    index.checked_sub(1).map(|i| self.lower(i)),
                    Some("party" | "group" | "table")
                ),
                _ => false,
            };
            if !introduces {
                continue;
            }
            if let Some(count) = number(self.lower(index + 1)) {
                if !is_one_of(NOT_A_PARTY, self.lower(index + 2)) {
                    return Some(count);
                }
            }
        }
        None
    }

    pub(super) fn cuisine(&self, lang: Lang) -> Option<&'static str> {
        // These words name a cuisine only after a food word: "gợi ý" (suggest) is not
        // Italian, "chủ nhật" (Sunday) is not Japanese, "phương pháp" (method) not French.
        const FOOD_WORDS: &str = "món|đồ|kiểu|hàng|quán|thực|ăn";
        CUISINES.iter().find_map(|rule| {
            let plain = self.has(rule.phrases);
            let qualified = self.tokens.iter().enumerate().any(|(index, token)| {
                is_one_of(rule.after_food_word, &token.lower)
                    && index
                        .checked_sub(1)
                        .is_some_and(|before| is_one_of(FOOD_WORDS, self.lower(before)))
            });
            (plain || qualified).then_some(match lang {
                Lang::Vi => rule.vi,
                Lang::En => rule.en,
            })
        })
    }

    /// A booking id as written ("bk-1a2b3c4d"), upper-cased: "BK-1A2B3C4D".
    pub(super) fn booking_id(&self) -> Option<String> {
        let lower = self.raw.to_lowercase();
        let mut from = 0;
        while let Some(found) = lower[from..].find("bk-") {
            let start = from + found;
            let at_word_start = lower[..start]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            let rest = &lower[start + 3..];
            let length = rest
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(rest.len());
            if at_word_start && length > 0 {
                return Some(format!("BK-{}", rest[..length].to_uppercase()));
            }
            from = start + 3;
        }
        None
    }

    /// "Huỷ/hủy đặt chỗ …" (either spelling, with or without accents), "cancel booking …".
    pub(super) fn is_cancel(&self) -> bool {
        self.has("huỷ|hủy|cancel|cancellation")
            || (self.has_folded("huy")
                && (self.booking_id().is_some()
                    || self.has_folded("dat cho|dat ban|don dat|booking|reservation")))
    }

    /// "Đặt chỗ của tôi", "xem đặt chỗ", "my bookings", "list my bookings".
    pub(super) fn is_list_bookings(&self) -> bool {
        self.has_folded(concat!(
            "dat cho cua toi|dat ban cua toi|dat cho cua minh|dat ban cua minh|xem dat cho|",
            "xem dat ban|xem cac dat cho|danh sach dat cho|danh sach dat ban|cac dat cho|",
            "cac dat ban|cho da dat|ban da dat",
        )) || self.has(concat!(
            "my bookings|my booking|my reservations|my reservation|list bookings|",
            "list my bookings|show my bookings|bookings i have|reservations i have",
        ))
    }
}

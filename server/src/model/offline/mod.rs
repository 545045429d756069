//! The offline model: a scripted, deterministic stand-in for an LLM, used when no API key is
//! configured (local development, end-to-end tests, demos without network).
//!
//! It reads the history the way a model would and proposes the same kinds of tool calls,
//! streamed in small pieces, so the whole agent loop (validation, approval, tool errors,
//! step limits) runs for real. It books with exactly what the person said: a missing party
//! size or time is left out of the call rather than asked for first, so the server's
//! validation path, and the "never claim a booking that failed" rule, get exercised.
//!
//! What it can do depends on the tools the request offers (a conversation's assistant
//! decides them), and it never calls a tool that is not offered (except for
//! [`TRIGGER_UNKNOWN_TOOL`], whose point is exactly that):
//! - restaurant (`getWeather`, `searchRestaurants`, `createBooking`, `listBookings`,
//!   `cancelBooking`): weather, search, booking, "my bookings", "huỷ đặt chỗ BK-…";
//! - gifts (`suggest_gifts`, `prepare_checkout`, `create_checkout_session`): gift ideas from
//!   who the gift is for, age, interests and budget; "mua món 1" prepares a draft, then
//!   commits it with the idempotency key `checkout-<draft_id>`;
//! - shipping (`shipping_quote`): a quote from a zone and a weight, the weight written into
//!   the argument text exactly as the person typed it ("2,5 kg" → `2.5`).
//!
//! After every tool result it answers in text and reports only what the result says: a
//! success only when the result is ok, "nothing happened" on an error or a decline.
//!
//! QA can force failure paths with these exact substrings in a message (each only when its
//! tool is offered):
//! - [`TRIGGER_UNKNOWN_TOOL`]: a call to `launchRocket`, a tool that does not exist.
//! - [`TRIGGER_BAD_JSON`]: a createBooking call whose argument text is not JSON.
//! - [`TRIGGER_TOOL_ERROR`]: getWeather for the city `#fail`, which the executor fails.
//! - [`TRIGGER_LOOP`]: getWeather for Hà Nội, again every turn, until the step limit.
//! - [`TRIGGER_BAD_ARGS`]: the same ill-typed createBooking call every turn, until the
//!   tool-error bound ends the run.
//! - [`TRIGGER_BAD_WEIGHT`]: a shipping_quote call whose weight is the string `"2"`.
//! - [`TRIGGER_ZERO_WEIGHT`]: a shipping_quote call whose weight is `0`.

use crate::tools::city::fold;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Datelike, Days, FixedOffset, NaiveDate, NaiveTime, Utc};
use serde_json::{Map, Value};
use shared::tools::{RelationshipType, ToolName};

use super::{
    FinishReason, ModelEvent, ModelMessage, ModelProvider, ModelRequest, ProposedCall, ToolSpec,
    TurnStream,
};

/// Makes the model call `launchRocket`, a tool the server does not have.
pub const TRIGGER_UNKNOWN_TOOL: &str = "#unknown-tool";
/// Makes the model send createBooking arguments that are not valid JSON.
pub const TRIGGER_BAD_JSON: &str = "#bad-json";
/// Makes the model ask for the weather in `#fail`, a city the weather executor fails on.
pub const TRIGGER_TOOL_ERROR: &str = "#tool-error";
/// Makes the model call getWeather every turn, so the server's step limit ends the run.
pub const TRIGGER_LOOP: &str = "#loop";
/// Makes the model repeat an ill-typed createBooking call every turn, so the server's bound
/// on failed tool calls ends the run.
pub const TRIGGER_BAD_ARGS: &str = "#bad-args";
/// Makes the model ask for a shipping quote with the weight as a string (`"2"`), which
/// validation rejects: nothing is coerced.
pub const TRIGGER_BAD_WEIGHT: &str = "#bad-weight";
/// Makes the model ask for a shipping quote for a parcel of `0` kg, which validation
/// rejects: there is no quote, and the reply must not state an amount.
pub const TRIGGER_ZERO_WEIGHT: &str = "#zero-weight";

/// The tool name `#unknown-tool` calls.
const UNKNOWN_TOOL_NAME: &str = "launchRocket";
const BAD_JSON_ARGUMENTS: &str = r#"{"restaurantId": "hn-cha-ca-thang-long", "partySize": }"#;
const BAD_ARGS_ARGUMENTS: &str =
    r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":"bốn","startsAt":"tối mai"}"#;
const FAILING_CITY: &str = "#fail";
const BAD_WEIGHT_ARGUMENTS: &str = r#"{"zone":"local","weight_kg":"2"}"#;
const ZERO_WEIGHT_ARGUMENTS: &str = r#"{"zone":"local","weight_kg":0}"#;

const GET_WEATHER: &str = ToolName::GetWeather.as_str();
const SEARCH_RESTAURANTS: &str = ToolName::SearchRestaurants.as_str();
const CREATE_BOOKING: &str = ToolName::CreateBooking.as_str();
const LIST_BOOKINGS: &str = ToolName::ListBookings.as_str();
const CANCEL_BOOKING: &str = ToolName::CancelBooking.as_str();
const SUGGEST_GIFTS: &str = ToolName::SuggestGifts.as_str();
const PREPARE_CHECKOUT: &str = ToolName::PrepareCheckout.as_str();
const CREATE_CHECKOUT_SESSION: &str = ToolName::CreateCheckoutSession.as_str();
const SHIPPING_QUOTE: &str = ToolName::ShippingQuote.as_str();

/// All restaurants in the catalogue are in Vietnam, and it has one offset all year.
const VIETNAM: FixedOffset = match FixedOffset::east_opt(7 * 3600) {
    Some(offset) => offset,
    None => panic!("UTC+7 is a valid offset"),
};

/// How many restaurants a search reply lists; more reads like a wall of text in a chat.
const LISTED_RESTAURANTS: usize = 5;
const LISTED_SLOTS: usize = 6;
/// Error messages come from tools; a bound keeps a runaway message out of the reply.
const QUOTED_MESSAGE_CHARS: usize = 300;
/// How many of the person's bookings a reply lists.
const LISTED_BOOKINGS: usize = 10;
/// The most interests passed to suggest_gifts (its schema's limit).
const MAX_INTERESTS: usize = 10;
/// Limits of create_checkout_session's idempotency key.
const MAX_IDEMPOTENCY_KEY_CHARS: usize = 100;

/// A scripted model that needs no network: same input, same output.
#[derive(Debug, Clone)]
pub struct OfflineModel {
    token_delay: Duration,
    now: Option<DateTime<FixedOffset>>,
}

impl OfflineModel {
    /// A model that pauses `token_delay` before each streamed event, so the UI shows text
    /// arriving as it would from a real model. `Duration::ZERO` streams without pausing.
    pub fn new(token_delay: Duration) -> Self {
        Self {
            token_delay,
            now: None,
        }
    }

    /// Uses a fixed clock ("today", "tomorrow", "tonight") instead of the system time.
    pub fn with_now(mut self, now: DateTime<FixedOffset>) -> Self {
        self.now = Some(now);
        self
    }

    /// The whole turn the model streams for this history, as events.
    pub fn plan_turn(&self, request: &ModelRequest) -> Vec<ModelEvent> {
        let now = self
            .now
            .unwrap_or_else(|| DateTime::<Utc>::from(SystemTime::now()).fixed_offset())
            .with_timezone(&VIETNAM);
        let turn = request
            .messages
            .iter()
            .filter(|message| matches!(message, ModelMessage::Assistant { .. }))
            .count()
            + 1;
        Planner::new(&request.messages, now, Offered::new(&request.tools))
            .reply()
            .into_events(turn)
    }
}

impl ModelProvider for OfflineModel {
    fn stream_turn(&self, request: ModelRequest) -> TurnStream {
        let events = self.plan_turn(&request);
        let delay = self.token_delay;
        Box::pin(async_stream::stream! {
            for event in events {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                yield Ok(event);
            }
        })
    }
}

// ---------------------------------------------------------------------------------------
// Which tools the request offers: the model never proposes any other.

/// The tools of the request, as a set of [`ToolName`]s (names we do not know are ignored).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Offered(u32);

impl Offered {
    fn new(tools: &[ToolSpec]) -> Self {
        let bits = tools
            .iter()
            .filter_map(|tool| ToolName::parse(&tool.name))
            .fold(0, |bits, tool| bits | Self::bit(tool));
        Self(bits)
    }

    fn bit(tool: ToolName) -> u32 {
        let index = ToolName::ALL
            .iter()
            .position(|known| *known == tool)
            .unwrap_or(0);
        1 << index
    }

    fn has(self, tool: ToolName) -> bool {
        self.0 & Self::bit(tool) != 0
    }

    fn any(self, tools: &[ToolName]) -> bool {
        tools.iter().any(|tool| self.has(*tool))
    }

    fn restaurant(self) -> bool {
        self.any(&[
            ToolName::GetWeather,
            ToolName::SearchRestaurants,
            ToolName::CreateBooking,
            ToolName::ListBookings,
            ToolName::CancelBooking,
        ])
    }

    fn gifts(self) -> bool {
        self.any(&[
            ToolName::SuggestGifts,
            ToolName::PrepareCheckout,
            ToolName::CreateCheckoutSession,
        ])
    }

    fn shipping(self) -> bool {
        self.has(ToolName::ShippingQuote)
    }
}

// ---------------------------------------------------------------------------------------
// What one turn says and proposes, and how it is streamed.

#[derive(Debug, Clone, PartialEq)]
struct Reply {
    text: String,
    calls: Vec<Call>,
}

#[derive(Debug, Clone, PartialEq)]
struct Call {
    name: String,
    arguments: String,
}

impl Reply {
    fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            calls: Vec::new(),
        }
    }

    fn call(text: impl Into<String>, name: &str, arguments: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            calls: vec![Call {
                name: name.to_owned(),
                arguments: arguments.into(),
            }],
        }
    }

    fn into_events(self, turn: usize) -> Vec<ModelEvent> {
        let mut events: Vec<ModelEvent> = text_pieces(&self.text)
            .into_iter()
            .map(ModelEvent::TextDelta)
            .collect();
        let finish = if self.calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        for (index, call) in self.calls.into_iter().enumerate() {
            // Unique within a conversation: every earlier turn left one Assistant message.
            let id = format!("call_{turn}_{index}");
            events.push(ModelEvent::ToolCallStart {
                id: id.clone(),
                name: call.name,
            });
            for delta in argument_pieces(&call.arguments) {
                events.push(ModelEvent::ToolCallDelta {
                    id: id.clone(),
                    delta: delta.to_owned(),
                });
            }
            events.push(ModelEvent::ToolCallEnd { id });
        }
        events.push(ModelEvent::Finish(finish));
        events
    }
}

/// Splits text into pieces of one to three words, each keeping the whitespace after it, the
/// way real models stream tokens.
fn text_pieces(text: &str) -> Vec<String> {
    const WORDS_PER_PIECE: [usize; 3] = [2, 1, 3];
    let mut words = Vec::new();
    let mut start = 0;
    let mut seen_word = false;
    let mut in_space = false;
    for (index, c) in text.char_indices() {
        if c.is_whitespace() {
            in_space = seen_word;
        } else {
            if in_space {
                words.push(&text[start..index]);
                start = index;
                in_space = false;
            }
            seen_word = true;
        }
    }
    if start < text.len() {
        words.push(&text[start..]);
    }
    let mut pieces = Vec::new();
    let mut rest = words.as_slice();
    let mut round = 0;
    while !rest.is_empty() {
        let take = WORDS_PER_PIECE[round % WORDS_PER_PIECE.len()].min(rest.len());
        pieces.push(rest[..take].concat());
        rest = &rest[take..];
        round += 1;
    }
    pieces
}

/// Splits argument text into pieces of about four to eight bytes, cut at char boundaries.
fn argument_pieces(arguments: &str) -> Vec<&str> {
    const PIECE_BYTES: [usize; 5] = [5, 7, 4, 8, 6];
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut round = 0;
    while start < arguments.len() {
        let mut end = (start + PIECE_BYTES[round % PIECE_BYTES.len()]).min(arguments.len());
        while !arguments.is_char_boundary(end) {
            end -= 1;
        }
        if end == start {
            // A single char wider than the piece: send it whole.
            end = start + 1;
            while !arguments.is_char_boundary(end) {
                end += 1;
            }
        }
        pieces.push(&arguments[start..end]);
        start = end;
        round += 1;
    }
    pieces
}

// ---------------------------------------------------------------------------------------
// Reading the person's words.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Vi,
    En,
}

impl Lang {
    fn pick(self, vi: &'static str, en: &'static str) -> &'static str {
        match self {
            Lang::Vi => vi,
            Lang::En => en,
        }
    }
}

/// One word as written (lowercased) and with its diacritics folded away.
#[derive(Debug, Clone)]
struct Token {
    lower: String,
    folded: String,
}

/// A message split into words. Vietnamese tone marks change meaning ("tối" is evening,
/// "tôi" is I; "nắng" is sunny, "Nẵng" a city), so keywords match the lowercased words and
/// only names (cities, restaurants) match with diacritics folded away.
#[derive(Debug, Clone)]
struct Utterance {
    raw: String,
    tokens: Vec<Token>,
}

const VIETNAMESE_LETTERS: &str =
    "àáảãạăằắẳẵặâầấẩẫậèéẻẽẹêềếểễệìíỉĩịòóỏõọôồốổỗộơờớởỡợùúủũụưừứửữựỳýỷỹỵđ";

fn is_separator(c: char) -> bool {
    c.is_whitespace() || ",;!?()[]{}\"“”‘’…*.".contains(c)
}

impl Utterance {
    fn new(text: &str) -> Self {
        let tokens = text
            .to_lowercase()
            .split(is_separator)
            .map(|piece| piece.trim_matches(|c| ":-/'".contains(c)))
            .filter(|piece| !piece.is_empty())
            .map(|piece| Token {
                lower: piece.to_owned(),
                folded: fold(piece),
            })
            .collect();
        Self {
            raw: text.to_owned(),
            tokens,
        }
    }

    fn lower(&self, index: usize) -> &str {
        self.tokens
            .get(index)
            .map_or("", |token| token.lower.as_str())
    }

    fn folded(&self, index: usize) -> &str {
        self.tokens
            .get(index)
            .map_or("", |token| token.folded.as_str())
    }

    /// Where the words of `phrase` first appear in a row, comparing with `field`.
    fn find(&self, phrase: &str, field: fn(&Token) -> &str) -> Option<usize> {
        let words: Vec<&str> = phrase.split(' ').collect();
        if words.is_empty() || words.len() > self.tokens.len() {
            return None;
        }
        self.tokens.windows(words.len()).position(|window| {
            window
                .iter()
                .zip(&words)
                .all(|(token, word)| field(token) == *word)
        })
    }

    /// Whether one of the `|`-separated phrases appears, as written.
    fn has(&self, phrases: &str) -> bool {
        alternatives(phrases).any(|phrase| self.find(phrase, |t| &t.lower).is_some())
    }

    /// Whether one of the `|`-separated phrases appears, ignoring diacritics.
    fn has_folded(&self, phrases: &str) -> bool {
        alternatives(phrases).any(|phrase| self.find(phrase, |t| &t.folded).is_some())
    }

    /// English stems: "book" covers "booking", "reserv" covers "reservation".
    fn has_stem(&self, stems: &str) -> bool {
        self.tokens
            .iter()
            .any(|token| alternatives(stems).any(|stem| token.lower.starts_with(stem)))
    }

    fn language(&self) -> Lang {
        const VIETNAMESE_WORDS: &str = concat!(
            "tôi|cho|người|bàn|không|thời tiết|nhà hàng|đặt|ở|muốn|mình|bạn|và|có|thế nào|",
            "giúp|nhé|ạ|toi|nguoi|khong|thoi tiet|nha hang|dat ban|muon|giup|",
            "dat cho|huy|mua|mon|qua tang|giao hang|noi thanh|lien tinh|ngoai tinh|tinh khac",
        );
        const ENGLISH_WORDS: &str = concat!(
            "the|a|an|for|at|in|is|what|weather|book|table|please|how|find|restaurant|",
            "restaurants|i|me|my|to|tomorrow|today|people|and|of|with|can|you|hi|hello|will|",
            "it|rain|help|thanks",
        );
        if self.has(VIETNAMESE_WORDS) {
            Lang::Vi
        } else if self.has(ENGLISH_WORDS) {
            // "weather in Hà Nội" is English even though the city has Vietnamese letters.
            Lang::En
        } else if self
            .raw
            .to_lowercase()
            .chars()
            .any(|c| VIETNAMESE_LETTERS.contains(c))
        {
            Lang::Vi
        } else {
            Lang::En
        }
    }

    fn is_weather(&self) -> bool {
        self.has("mưa|nắng")
            || self.has_folded("thoi tiet|nhiet do|du bao")
            || self.has_stem("weather|rain|temperatur|forecast")
    }

    fn is_booking(&self) -> bool {
        self.has("đặt bàn|đặt chỗ|dat ban") || self.has_stem("book|reserv")
    }

    fn is_search(&self) -> bool {
        self.has("nhà hàng|quán|ăn|tìm|gợi ý|nha hang|quan an|goi y")
            || self.has_stem("restaurant|eat|food|find|suggest|recommend")
            || self.cuisine(Lang::Vi).is_some()
    }

    /// Canonical names of the cities mentioned, in the order they are mentioned.
    fn cities(&self) -> Vec<&'static str> {
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

    fn party_size(&self) -> Option<u8> {
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

    /// Whether the time of day is in the afternoon or evening ("7 giờ tối" is 19:00).
    fn is_evening(&self) -> bool {
        if self.has("tối|chiều|chieu|evening|tonight|dinner") {
            return true;
        }
        // Unaccented "toi" is usually "tôi" (I); it means evening only next to a time or day.
        (0..self.tokens.len()).any(|index| {
            self.lower(index) == "toi"
                && (index.checked_sub(1).is_some_and(|before| {
                    self.folded(before) == "gio" || clock_token(self.lower(before)).is_some()
                }) || matches!(self.lower(index + 1), "mai" | "nay"))
        })
    }

    fn time(&self) -> Option<NaiveTime> {
        let evening = self.is_evening();
        for index in 0..self.tokens.len() {
            let token = self.lower(index);
            let next = self.lower(index + 1);
            let mut found = clock_token(token);
            if found.is_none() {
                if let Some(hour) = number(token) {
                    if self.folded(index + 1) == "gio" {
                        let minute = match (self.lower(index + 2), self.folded(index + 2)) {
                            (_, "ruoi") => 30,
                            (word, _) => digits(word).filter(|m| *m < 60).unwrap_or(0),
                        };
                        found = Some((u32::from(hour), minute, None));
                    } else if digits(token).is_some() && matches!(next, "pm" | "am" | "o'clock") {
                        found = Some((u32::from(hour), 0, None));
                    }
                }
            }
            let Some((hour, minute, mut meridiem)) = found else {
                continue;
            };
            if meridiem.is_none() {
                meridiem = match next {
                    "pm" => Some(Meridiem::Pm),
                    "am" => Some(Meridiem::Am),
                    _ => None,
                };
            }
            let hour = match meridiem {
                Some(Meridiem::Pm) if hour < 12 => hour + 12,
                Some(Meridiem::Am) if hour == 12 => 0,
                None if evening && hour < 12 => hour + 12,
                _ => hour,
            };
            if let Some(time) = NaiveTime::from_hms_opt(hour, minute, 0) {
                return Some(time);
            }
        }
        None
    }

    fn date(&self, today: NaiveDate) -> Option<NaiveDate> {
        for token in &self.tokens {
            if let Some(date) = calendar_date(&token.lower, today) {
                return Some(date);
            }
        }
        let offset = if self.has("day after tomorrow|ngày kia|ngay kia|ngày mốt|mốt") {
            2
        } else if self.has("mai|tomorrow") {
            1
        } else if self.has("hôm nay|hom nay|today|tonight|tối nay|toi nay") {
            0
        } else {
            return None;
        };
        today.checked_add_days(Days::new(offset))
    }

    /// When the table is wanted. A time without a date is the next time it comes round.
    fn starts_at(&self, now: DateTime<FixedOffset>) -> Option<DateTime<FixedOffset>> {
        let time = self.time()?;
        let today = now.date_naive();
        match self.date(today) {
            Some(date) => local(date, time),
            None => next_occurrence(now, time),
        }
    }

    /// Forecast length: "3 ngày", "5 days"; a forecast mentioning tomorrow needs two days.
    fn forecast_days(&self) -> Option<u8> {
        for index in 0..self.tokens.len() {
            if let Some(count) = number(self.lower(index)) {
                let unit = matches!(self.folded(index + 1), "ngay" | "days" | "day");
                // "sau ngày mai" is "the day after tomorrow", not six days.
                let names_a_day = matches!(self.lower(index + 2), "mai" | "kia" | "mốt");
                if unit && !names_a_day && (1..=7).contains(&count) {
                    return Some(count);
                }
            }
        }
        self.has("mai|tomorrow").then_some(2)
    }

    fn cuisine(&self, lang: Lang) -> Option<&'static str> {
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
}

const CITIES: &[(&str, &[&str])] = &[
    ("Hà Nội", &["ha noi", "hanoi"]),
    (
        "TP. Hồ Chí Minh",
        &["ho chi minh", "hcm", "tphcm", "sai gon", "saigon"],
    ),
    ("Đà Lạt", &["da lat", "dalat"]),
    ("Đà Nẵng", &["da nang", "danang"]),
    ("Huế", &["hue"]),
];

struct CuisineRule {
    vi: &'static str,
    en: &'static str,
    /// `|`-separated phrases that name the cuisine anywhere.
    phrases: &'static str,
    /// `|`-separated words that name it only after a food word.
    after_food_word: &'static str,
}

const CUISINES: &[CuisineRule] = &[
    // Before "bún chả": "bún chả cá" is a fish dish, and "chả cá" is Hà Nội's fish dish.
    CuisineRule {
        vi: "chả cá",
        en: "cha ca",
        phrases: "chả cá|cha ca",
        after_food_word: "",
    },
    CuisineRule {
        vi: "bún đậu",
        en: "bun dau",
        phrases: "bún đậu|bun dau",
        after_food_word: "",
    },
    CuisineRule {
        vi: "mì Quảng",
        en: "mi quang",
        phrases: "mì quảng|mi quang",
        after_food_word: "",
    },
    CuisineRule {
        vi: "bún chả",
        en: "bun cha",
        phrases: "bún chả|bun cha",
        after_food_word: "",
    },
    CuisineRule {
        vi: "bún bò",
        en: "bun bo",
        phrases: "bún bò|bun bo",
        after_food_word: "",
    },
    CuisineRule {
        vi: "phở",
        en: "pho",
        phrases: "phở|pho",
        after_food_word: "",
    },
    CuisineRule {
        vi: "cơm tấm",
        en: "com tam",
        phrases: "cơm tấm|com tam",
        after_food_word: "",
    },
    CuisineRule {
        vi: "hải sản",
        en: "seafood",
        phrases: "hải sản|hai san|seafood",
        after_food_word: "",
    },
    CuisineRule {
        vi: "chay",
        en: "vegetarian",
        phrases: "chay|vegetarian|vegan",
        after_food_word: "",
    },
    CuisineRule {
        vi: "lẩu",
        en: "hotpot",
        phrases: "lẩu|hotpot|hot pot",
        after_food_word: "",
    },
    CuisineRule {
        vi: "bánh xèo",
        en: "banh xeo",
        phrases: "bánh xèo|banh xeo",
        after_food_word: "",
    },
    CuisineRule {
        vi: "nướng",
        en: "bbq",
        phrases: "nướng|nuong|bbq|barbecue",
        after_food_word: "",
    },
    CuisineRule {
        vi: "Ý",
        en: "Italian",
        phrases: "italian|pizza|pasta",
        after_food_word: "ý",
    },
    CuisineRule {
        vi: "Nhật",
        en: "Japanese",
        phrases: "japanese|sushi",
        after_food_word: "nhật",
    },
    CuisineRule {
        vi: "Pháp",
        en: "French",
        phrases: "french",
        after_food_word: "pháp",
    },
    CuisineRule {
        vi: "cà phê",
        en: "cafe",
        phrases: "cà phê|ca phe|cafe|café|coffee",
        after_food_word: "",
    },
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meridiem {
    Am,
    Pm,
}

/// The items of a `|`-separated list; long word lists stay compact that way.
fn alternatives(list: &str) -> impl Iterator<Item = &str> {
    list.split('|').filter(|item| !item.is_empty())
}

fn is_one_of(list: &str, word: &str) -> bool {
    alternatives(list).any(|item| item == word)
}

fn digits(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 4 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A count from 1 to 99, in digits or as a Vietnamese or English word.
fn number(word: &str) -> Option<u8> {
    if let Some(value) = digits(word) {
        return u8::try_from(value).ok().filter(|n| (1..=99).contains(n));
    }
    Some(match word {
        "một" | "mot" | "one" => 1,
        "hai" | "two" => 2,
        "ba" | "three" => 3,
        "bốn" | "bon" | "tư" | "four" => 4,
        "năm" | "nam" | "five" => 5,
        "sáu" | "sau" | "six" => 6,
        "bảy" | "bay" | "seven" => 7,
        "tám" | "tam" | "eight" => 8,
        "chín" | "chin" | "nine" => 9,
        "mười" | "muoi" | "ten" => 10,
        _ => return None,
    })
}

/// A time written as one word: "19:00", "7:30pm", "19h", "7h30", "7pm".
fn clock_token(token: &str) -> Option<(u32, u32, Option<Meridiem>)> {
    let (body, meridiem) = if let Some(body) = token.strip_suffix("pm") {
        (body, Some(Meridiem::Pm))
    } else if let Some(body) = token.strip_suffix("am") {
        (body, Some(Meridiem::Am))
    } else {
        (token, None)
    };
    let (hour, minute) = if let Some((hour, minute)) = body.split_once(':') {
        (digits(hour)?, digits(minute)?)
    } else if let Some((hour, minute)) = body.split_once('h') {
        let minute = if minute.is_empty() {
            0
        } else {
            digits(minute)?
        };
        (digits(hour)?, minute)
    } else if meridiem.is_some() {
        (digits(body)?, 0)
    } else {
        return None;
    };
    (hour < 24 && minute < 60).then_some((hour, minute, meridiem))
}

/// "2026-12-24", "24/12/2026" or "24/12" (the next 24 December).
fn calendar_date(token: &str, today: NaiveDate) -> Option<NaiveDate> {
    if token.len() == 10 && token.as_bytes().get(4) == Some(&b'-') {
        return NaiveDate::parse_from_str(token, "%Y-%m-%d").ok();
    }
    let parts: Vec<&str> = token.split('/').collect();
    match parts.as_slice() {
        [day, month] => {
            let (day, month) = (digits(day)?, digits(month)?);
            let this_year = NaiveDate::from_ymd_opt(today.year(), month, day)?;
            if this_year >= today {
                Some(this_year)
            } else {
                NaiveDate::from_ymd_opt(today.year() + 1, month, day)
            }
        }
        [day, month, year] if year.len() == 4 => {
            let year = i32::try_from(digits(year)?).ok()?;
            NaiveDate::from_ymd_opt(year, digits(month)?, digits(day)?)
        }
        _ => None,
    }
}

fn local(date: NaiveDate, time: NaiveTime) -> Option<DateTime<FixedOffset>> {
    date.and_time(time).and_local_timezone(VIETNAM).single()
}

fn next_occurrence(now: DateTime<FixedOffset>, time: NaiveTime) -> Option<DateTime<FixedOffset>> {
    let today = now.date_naive();
    let candidate = local(today, time)?;
    if candidate > now {
        Some(candidate)
    } else {
        local(today.checked_add_days(Days::new(1))?, time)
    }
}

fn rfc3339(at: &DateTime<FixedOffset>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

fn join_names(names: &[&str], lang: Lang) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} {} {last}", init.join(", "), lang.pick("và", "and")),
    }
}

// ---------------------------------------------------------------------------------------
// Reading the person's words: their bookings, gifts and parcels.

/// Words mapped to who a gift is for.
struct RelationshipRule {
    kind: RelationshipType,
    /// `|`-separated phrases, matched as written (lowercased).
    phrases: &'static str,
    /// Words that are also pronouns or numbers ("bạn" is "you", "anh" is "he", "ba" is
    /// "three"): they count only after a word like "cho"/"for", or when nothing else
    /// names anyone.
    ambiguous: bool,
}

const RELATIONSHIPS: &[RelationshipRule] = &[
    RelationshipRule {
        kind: RelationshipType::Partner,
        phrases: "người yêu|bạn gái|bạn trai|vợ|chồng|bà xã|ông xã|nguoi yeu|ban gai|ban trai|\
                  wife|husband|girlfriend|boyfriend|partner|spouse|fiance|fiancé|fiancée",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Parent,
        phrases: "mẹ|má|mạ|bố|cha|bố mẹ|ba mẹ|cha mẹ|mẹ chồng|mẹ vợ|bố chồng|bố vợ|bo me|ba me|\
                  cha me|mom|mum|mother|mommy|mummy|dad|father|daddy|parent|parents",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Parent,
        phrases: "ba",
        ambiguous: true,
    },
    RelationshipRule {
        kind: RelationshipType::Child,
        phrases: "con trai|con gái|em bé|con gai|son|daughter|child|children|kid|kids|baby",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Child,
        phrases: "con|bé",
        ambiguous: true,
    },
    RelationshipRule {
        kind: RelationshipType::Sibling,
        phrases: "anh trai|chị gái|em trai|em gái|anh chị em|chi gai|em gai|brother|sister|\
                  sibling|siblings",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Sibling,
        phrases: "anh|chị|em",
        ambiguous: true,
    },
    RelationshipRule {
        kind: RelationshipType::Grandparent,
        phrases: "ông bà|ông nội|ông ngoại|bà nội|bà ngoại|ong ba|ong noi|ong ngoai|ba noi|\
                  ba ngoai|grandma|grandmother|grandpa|grandfather|grandparent|grandparents|granny",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Grandparent,
        phrases: "ông|bà",
        ambiguous: true,
    },
    RelationshipRule {
        kind: RelationshipType::Friend,
        phrases: "bạn thân|bạn bè|ban than|ban be|friend|friends|bff",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Friend,
        phrases: "bạn",
        ambiguous: true,
    },
    RelationshipRule {
        kind: RelationshipType::Colleague,
        phrases: "đồng nghiệp|sếp|cấp trên|dong nghiep|colleague|colleagues|coworker|co-worker|\
                  coworkers|boss|manager",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Teacher,
        phrases: "thầy|giáo viên|thầy giáo|cô giáo|thầy cô|giao vien|teacher|professor|tutor",
        ambiguous: false,
    },
    RelationshipRule {
        kind: RelationshipType::Teacher,
        phrases: "cô",
        ambiguous: true,
    },
];

/// Words after which a person named is the one the gift is for ("quà cho mẹ", "for my wife").
const GIFT_ANCHORS: &str = "cho|tặng|biếu|quà|for|to|my|gift|gifts|present|presents";
/// After these, "anh", "chị", "bạn"… are pronouns ("anh ấy" is "he"), not relatives.
const PRONOUN_MARKERS: &str = "ấy|ơi|ay|oi|ta";
/// After these, "ba" is the number three ("ba tuổi"), not dad.
const COUNTED_WORDS: &str = "tuổi|tuoi|người|món|cái|năm|tháng|ngày|triệu|trăm|nghìn|ngàn|chục|k";

/// Interests as the canonical English tags suggest_gifts matches, with the words for them.
const INTERESTS: &[(&str, &str)] = &[
    (
        "gardening",
        "làm vườn|trồng cây|cây cảnh|trồng hoa|lam vuon|trong cay|gardening|garden|plants",
    ),
    (
        "reading",
        "đọc sách|doc sach|thích sách|mê sách|reading|books|novels",
    ),
    (
        "cooking",
        "nấu ăn|nấu nướng|làm bánh|nau an|cooking|cook|baking",
    ),
    ("coffee", "cà phê|cafe|café|ca phe|coffee"),
    ("tea", "trà|tea"),
    ("music", "âm nhạc|nhạc|am nhac|music"),
    (
        "sports",
        "thể thao|chạy bộ|bóng đá|đá bóng|bơi|the thao|chay bo|sports|sport|running|football|\
         soccer|gym|yoga|fitness",
    ),
    ("travel", "du lịch|du lich|travel|traveling|travelling"),
    ("tech", "công nghệ|cong nghe|tech|technology|gadgets"),
    (
        "art",
        "vẽ|nghệ thuật|hội hoạ|hội họa|nghe thuat|art|painting|drawing",
    ),
    ("games", "game|games|gaming"),
    ("fashion", "thời trang|thoi trang|fashion|clothes"),
    ("beauty", "làm đẹp|mỹ phẩm|lam dep|beauty|makeup|skincare"),
    ("diving", "lặn biển|lặn|lan bien|diving|scuba"),
    (
        "photography",
        "chụp ảnh|nhiếp ảnh|chup anh|photography|photos|camera",
    ),
];

/// Which gift of a suggestion list the person means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemRef {
    /// The n-th, counting from 1.
    Nth(usize),
    Last,
}

/// A price range from the person's words, in đồng.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Budget {
    min: Option<u32>,
    max: Option<u32>,
}

impl Utterance {
    /// Where each occurrence of `phrase` starts, comparing the lowercased words (an English
    /// possessive "mom's" counts as "mom").
    fn positions(&self, phrase: &str) -> Vec<usize> {
        let words: Vec<&str> = phrase.split(' ').collect();
        if words.is_empty() || words.len() > self.tokens.len() {
            return Vec::new();
        }
        self.tokens
            .windows(words.len())
            .enumerate()
            .filter(|(_, window)| {
                window.iter().zip(&words).all(|(token, word)| {
                    let lower = token.lower.as_str();
                    lower == *word
                        || lower.strip_suffix("'s").or(lower.strip_suffix("’s")) == Some(*word)
                })
            })
            .map(|(index, _)| index)
            .collect()
    }

    /// The earliest position of one of the `|`-separated phrases.
    fn first_position(&self, phrases: &str, folded: bool) -> Option<usize> {
        let field: fn(&Token) -> &str = if folded { |t| &t.folded } else { |t| &t.lower };
        alternatives(phrases)
            .filter_map(|phrase| self.find(phrase, field))
            .min()
    }

    // --- The person's own bookings.

    /// A booking id as written ("bk-1a2b3c4d"), upper-cased: "BK-1A2B3C4D".
    fn booking_id(&self) -> Option<String> {
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
    fn is_cancel(&self) -> bool {
        self.has("huỷ|hủy|cancel|cancellation")
            || (self.has_folded("huy")
                && (self.booking_id().is_some()
                    || self.has_folded("dat cho|dat ban|don dat|booking|reservation")))
    }

    /// "Đặt chỗ của tôi", "xem đặt chỗ", "my bookings", "list my bookings".
    fn is_list_bookings(&self) -> bool {
        self.has_folded(concat!(
            "dat cho cua toi|dat ban cua toi|dat cho cua minh|dat ban cua minh|xem dat cho|",
            "xem dat ban|xem cac dat cho|danh sach dat cho|danh sach dat ban|cac dat cho|",
            "cac dat ban|cho da dat|ban da dat",
        )) || self.has(concat!(
            "my bookings|my booking|my reservations|my reservation|list bookings|",
            "list my bookings|show my bookings|bookings i have|reservations i have",
        ))
    }

    // --- Gifts.

    fn is_gift_request(&self) -> bool {
        self.has("quà|tặng|biếu|qua tang|mon qua|goi y qua|gift|gifts|present|presents")
    }

    /// Who the gift is for. A word after "cho"/"tặng"/"for" wins; before such a word, or
    /// without one, only words that cannot be pronouns count (unless there is no such word
    /// at all: "bạn thân" alone answers "who is it for?").
    fn relationship(&self) -> Option<RelationshipType> {
        // (position, length, kind, ambiguous)
        let mut found: Vec<(usize, usize, RelationshipType, bool)> = Vec::new();
        for rule in RELATIONSHIPS {
            for phrase in alternatives(rule.phrases) {
                let length = phrase.split(' ').count();
                for position in self.positions(phrase) {
                    let next = self.lower(position + length);
                    let pronoun = length == 1 && rule.ambiguous && is_one_of(PRONOUN_MARKERS, next);
                    let number = phrase == "ba" && is_one_of(COUNTED_WORDS, next);
                    if !pronoun && !number {
                        found.push((position, length, rule.kind, rule.ambiguous));
                    }
                }
            }
        }
        // "bạn gái" is a partner, not a friend: drop matches inside longer ones.
        let mut kept: Vec<(usize, usize, RelationshipType, bool)> = found
            .iter()
            .copied()
            .filter(|(position, length, ..)| {
                !found.iter().any(|(other, other_length, ..)| {
                    other_length > length
                        && other <= position
                        && position + length <= other + other_length
                })
            })
            .collect();
        kept.sort_by_key(|(position, ..)| *position);
        let anchor = self
            .tokens
            .iter()
            .position(|token| is_one_of(GIFT_ANCHORS, &token.lower));
        match anchor {
            Some(anchor) => kept
                .iter()
                .find(|(position, ..)| *position > anchor)
                .or_else(|| kept.iter().find(|(.., ambiguous)| !ambiguous)),
            None => kept.first(),
        }
        .map(|(_, _, kind, _)| *kind)
    }

    /// "55 tuổi", "năm tuổi", "30 years old", "a 30-year-old", "aged 30".
    fn age(&self) -> Option<u8> {
        let years = |word: &str| {
            digits(word)
                .filter(|n| *n <= 120)
                .and_then(|n| u8::try_from(n).ok())
                .or_else(|| number(word))
        };
        for index in 0..self.tokens.len() {
            let word = self.lower(index);
            for suffix in ["-year-old", "-years-old"] {
                if let Some(age) = word.strip_suffix(suffix).and_then(digits) {
                    if let Ok(age) = u8::try_from(age) {
                        if age <= 120 {
                            return Some(age);
                        }
                    }
                }
            }
            if word == "aged" {
                if let Some(age) = years(self.lower(index + 1)) {
                    return Some(age);
                }
            }
            let Some(age) = years(word) else { continue };
            let unit = self.folded(index + 1) == "tuoi"
                || (matches!(self.lower(index + 1), "years" | "year")
                    && self.lower(index + 2) == "old");
            if unit {
                return Some(age);
            }
        }
        None
    }

    /// Interests as canonical tags, in the order they are mentioned.
    fn interests(&self) -> Vec<&'static str> {
        let mut found: Vec<(usize, &'static str)> = INTERESTS
            .iter()
            .filter_map(|(tag, phrases)| {
                alternatives(phrases)
                    .filter_map(|phrase| self.positions(phrase).first().copied())
                    .min()
                    .map(|position| (position, *tag))
            })
            .collect();
        found.sort_by_key(|(position, _)| *position);
        found
            .into_iter()
            .map(|(_, tag)| tag)
            .take(MAX_INTERESTS)
            .collect()
    }

    fn budget(&self) -> Option<Budget> {
        budget(&self.raw)
    }

    /// Whether the message says anything suggest_gifts can use.
    fn has_gift_criteria(&self) -> bool {
        self.relationship().is_some()
            || self.age().is_some()
            || !self.interests().is_empty()
            || self.budget().is_some()
    }

    /// "mua", "buy": a purchase, even without saying which gift.
    fn is_buy(&self) -> bool {
        self.has("mua|đặt mua|buy|purchase|order")
    }

    /// "chọn", "lấy", "take": a choice, when it names which gift.
    fn is_choice(&self) -> bool {
        self.has("chọn|lấy|chon|lay|take|choose|pick|get|want")
    }

    /// Which gift of a list: "món đầu tiên", "món 1", "món số 2", "cái thứ hai", "the first
    /// one", "#2", "the 2nd", "the last one".
    fn item_reference(&self) -> Option<ItemRef> {
        const ORDINALS: &[(&str, usize)] = &[
            ("đầu tiên|thứ nhất|dau tien|thu nhat|first|1st", 1),
            ("second|2nd", 2),
            ("third|3rd", 3),
            ("fourth|4th", 4),
            ("fifth|5th", 5),
        ];
        const MARKERS: &str = "món|số|cái|thứ|mon|so|cai|thu|number|no|option|item|gift|choice";
        let mut found: Vec<(usize, ItemRef)> = Vec::new();
        for (phrases, nth) in ORDINALS {
            if let Some(position) = self.first_position(phrases, false) {
                found.push((position, ItemRef::Nth(*nth)));
            }
        }
        if let Some(position) = self.first_position("cuối cùng|cuối|cuoi cung|last", false) {
            found.push((position, ItemRef::Last));
        }
        for index in 0..self.tokens.len() {
            let word = self.lower(index);
            let nth = if let Some(written) = word.strip_prefix('#') {
                digits(written)
            } else if is_one_of(MARKERS, word) {
                let next = self.lower(index + 1);
                digits(next).or(number(next).map(u32::from))
            } else {
                None
            };
            if let Some(nth) = nth.and_then(|n| usize::try_from(n).ok()) {
                found.push((index, ItemRef::Nth(nth)));
            }
        }
        found.sort_by_key(|(position, _)| *position);
        found.first().map(|(_, reference)| *reference)
    }

    // --- Parcels.

    fn is_shipping(&self) -> bool {
        self.has_folded(concat!(
            "giao hang|gui hang|van chuyen|phi ship|bao gia|cuoc|buu kien|goi hang|phi giao|",
            "ship|gui",
        )) || self.has_stem("ship|deliver|parcel|package|quote|send|courier")
    }

    /// "local" (nội thành, trong thành phố) or "regional" (liên tỉnh, ngoại tỉnh, tỉnh
    /// khác); the first one mentioned.
    fn zone(&self) -> Option<&'static str> {
        let local = [
            self.first_position(
                "noi thanh|trong thanh pho|cung thanh pho|noi tinh|trong tp|noi do",
                true,
            ),
            self.first_position(
                "local|same city|within the city|in town|in the city|in-city",
                false,
            ),
        ]
        .into_iter()
        .flatten()
        .min();
        let regional = [
            self.first_position(
                "lien tinh|ngoai tinh|tinh khac|di tinh|khac tinh|ngoai thanh pho",
                true,
            ),
            self.first_position(
                "regional|another province|other province|another city|other city|out of town|\
                 interprovincial",
                false,
            ),
        ]
        .into_iter()
        .flatten()
        .min();
        match (local, regional) {
            (Some(l), Some(r)) if r < l => Some("regional"),
            (Some(_), _) => Some("local"),
            (None, Some(_)) => Some("regional"),
            (None, None) => None,
        }
    }

    /// The parcel's weight, as JSON number text exactly as written ("2,5 kg" → "2.5").
    fn weight(&self) -> Option<String> {
        weight_text(&self.raw)
    }
}

/// Money units and what they multiply by (đồng).
const MONEY_UNITS: &[(&str, u64)] = &[
    ("triệu", 1_000_000),
    ("trieu", 1_000_000),
    ("million", 1_000_000),
    ("nghìn", 1_000),
    ("nghin", 1_000),
    ("ngàn", 1_000),
    ("ngan", 1_000),
    ("đồng", 1),
    ("dong", 1),
    ("vnđ", 1),
    ("vnd", 1),
    ("củ", 1_000_000),
    ("tr", 1_000_000),
    ("k", 1_000),
    ("đ", 1),
    ("₫", 1),
];
const AT_MOST: &str = "dưới|duoi|tối đa|toi da|không quá|khong qua|ko quá|chưa tới|chưa đến|\
                       under|below|less than|at most|up to|max|maximum|within|no more than|<|≤";
const AT_LEAST: &str = "trên|tren|ít nhất|it nhat|tối thiểu|toi thieu|từ|over|above|more than|\
                        at least|from|min|minimum|>|≥";
const ABOUT: &str = "khoảng|khoang|tầm|cỡ|chừng|xấp xỉ|around|about|approximately|roughly|approx|~";
const RANGE_JOINS: &str = "-|–|—|~|đến|tới|den|toi|to|and";

/// A number in the text, maybe with a money unit.
#[derive(Debug, Clone, PartialEq)]
struct Amount {
    /// Byte range in the lowercased text, unit included.
    start: usize,
    end: usize,
    /// Digit groups between `.`/`,`: "1,5" is ["1", "5"], "500.000" is ["500", "000"].
    groups: Vec<String>,
    unit: Option<u64>,
    /// "1tr5": the 5 hundred thousands after the unit.
    tail: u64,
}

impl Amount {
    /// The amount in đồng, with `multiplier` for its unit. Groups of three digits are
    /// thousands ("500.000đ"); otherwise a separator is a decimal point ("1,5 triệu").
    fn vnd(&self, multiplier: u64) -> Option<u64> {
        let groups = &self.groups;
        let grouped = groups.len() > 1
            && groups[1..].iter().all(|group| group.len() == 3)
            && (multiplier == 1 || groups.len() > 2);
        let value = if groups.len() == 1 || grouped {
            groups
                .concat()
                .parse::<u64>()
                .ok()?
                .checked_mul(multiplier)?
        } else if groups.len() == 2 && groups[1].len() <= 6 {
            let whole = groups[0].parse::<u64>().ok()?.checked_mul(multiplier)?;
            let fraction: u64 = groups[1].parse().ok()?;
            let scale = 10u64.pow(u32::try_from(groups[1].len()).ok()?);
            whole.checked_add(fraction.checked_mul(multiplier)? / scale)?
        } else {
            return None;
        };
        value.checked_add(self.tail)
    }
}

/// Every number in `lower` (lowercased text), with its money unit if it has one. A number
/// glued to letters that are not a unit ("2kg", "25t", "bk-1a2b") is not an amount.
fn money_amounts(lower: &str) -> Vec<Amount> {
    let chars: Vec<(usize, char)> = lower.char_indices().collect();
    let byte = |index: usize| chars.get(index).map_or(lower.len(), |(at, _)| *at);
    let mut amounts = Vec::new();
    let mut index = 0;
    while index < chars.len() {
        let (start, c) = chars[index];
        let glued = index
            .checked_sub(1)
            .is_some_and(|before| chars[before].1.is_alphanumeric());
        if !c.is_ascii_digit() || glued {
            index += 1;
            continue;
        }
        let mut groups = vec![String::new()];
        let mut cursor = index;
        loop {
            while let Some((_, digit)) = chars.get(cursor).filter(|(_, c)| c.is_ascii_digit()) {
                if let Some(group) = groups.last_mut() {
                    group.push(*digit);
                }
                cursor += 1;
            }
            let separator = chars
                .get(cursor)
                .is_some_and(|(_, c)| matches!(c, '.' | ','));
            let digit_after = chars
                .get(cursor + 1)
                .is_some_and(|(_, c)| c.is_ascii_digit());
            if separator && digit_after {
                groups.push(String::new());
                cursor += 1;
            } else {
                break;
            }
        }
        let number_end = cursor;
        let mut unit_start = cursor;
        while chars.get(unit_start).is_some_and(|(_, c)| *c == ' ') {
            unit_start += 1;
        }
        let rest = &lower[byte(unit_start)..];
        let mut unit = None;
        let mut tail = 0;
        let mut end = byte(number_end);
        for (word, multiplier) in MONEY_UNITS {
            let Some(after) = rest.strip_prefix(word) else {
                continue;
            };
            let mut next = after.chars();
            match next.next() {
                None => {}
                Some(c) if !c.is_alphanumeric() => {}
                // "1tr5" is 1,5 triệu.
                Some(c)
                    if *multiplier == 1_000_000
                        && c.is_ascii_digit()
                        && next.next().is_none_or(|c| !c.is_alphanumeric()) =>
                {
                    tail = u64::from(c.to_digit(10).unwrap_or(0)) * multiplier / 10;
                    end = byte(unit_start) + word.len() + 1;
                    unit = Some(*multiplier);
                    break;
                }
                Some(_) => continue,
            }
            end = byte(unit_start) + word.len();
            unit = Some(*multiplier);
            break;
        }
        let glued_after = chars
            .get(number_end)
            .is_some_and(|(_, c)| c.is_alphanumeric());
        if unit.is_some() || !glued_after {
            amounts.push(Amount {
                start,
                end,
                groups,
                unit,
                tail,
            });
        }
        index = chars
            .iter()
            .position(|(at, _)| *at >= end)
            .unwrap_or(chars.len())
            .max(number_end);
    }
    amounts
}

/// Whether `text` ends with `word` as a whole word.
fn ends_with_word(text: &str, word: &str) -> bool {
    text.strip_suffix(word).is_some_and(|rest| {
        word.chars().all(|c| !c.is_alphanumeric())
            || rest
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric())
    })
}

/// The budget in `raw`: "dưới 50k", "từ 300k đến 800k", "300k-800k", "khoảng 500k" (±20%),
/// "under 500k", "1,5 triệu", "1.5tr"; a bare amount with a unit is the most to spend.
fn budget(raw: &str) -> Option<Budget> {
    let lower = raw.to_lowercase();
    let amounts = money_amounts(&lower);
    let small = |value: u64| u32::try_from(value).ok();
    for (index, amount) in amounts.iter().enumerate() {
        if let Some(next) = amounts.get(index + 1) {
            let between = lower[amount.end..next.start].trim();
            if is_one_of(RANGE_JOINS, between) && (amount.unit.is_some() || next.unit.is_some()) {
                // "300-800k": the first number takes the second's unit.
                let low = amount.vnd(amount.unit.or(next.unit).unwrap_or(1));
                let high = next.vnd(next.unit.or(amount.unit).unwrap_or(1));
                if let (Some(low), Some(high)) = (low.and_then(small), high.and_then(small)) {
                    return Some(Budget {
                        min: Some(low),
                        max: Some(high),
                    });
                }
            }
        }
        let Some(value) = amount.vnd(amount.unit.unwrap_or(1)).and_then(small) else {
            continue;
        };
        let before_start = index.checked_sub(1).map_or(0, |before| amounts[before].end);
        let before = lower[before_start..amount.start].trim_end();
        let after = lower[amount.end..].trim_start();
        let qualifier = |list: &str| alternatives(list).any(|word| ends_with_word(before, word));
        let (at_most, at_least, about) =
            (qualifier(AT_MOST), qualifier(AT_LEAST), qualifier(ABOUT));
        let or_more = ["trở lên", "tro len", "or more", "and up", "+"]
            .iter()
            .any(|word| after.starts_with(word));
        let or_less = ["trở xuống", "tro xuong", "or less"]
            .iter()
            .any(|word| after.starts_with(word));
        let qualified = at_most || at_least || about || or_more || or_less;
        // A number without a unit is money only after a budget word, and then not "5 tuổi".
        if amount.unit.is_none() && !(qualified && value >= 1000) {
            continue;
        }
        return Some(if about {
            Budget {
                min: Some(value - value / 5),
                max: value.checked_add(value / 5),
            }
        } else if (at_least || or_more) && !or_less {
            Budget {
                min: Some(value),
                max: None,
            }
        } else {
            Budget {
                min: None,
                max: Some(value),
            }
        });
    }
    None
}

/// Weight units after a number; the longest first.
const WEIGHT_UNITS: &[&str] = &[
    "kilograms",
    "kilogram",
    "kilôgam",
    "kilogam",
    "ki lô",
    "ki-lô",
    "kilô",
    "kilo",
    "kgs",
    "kg",
    "ký",
    "kí",
    "ky",
    "ki",
    "cân",
];

/// The first weight in kilograms in `raw` ("2 kg", "2kg", "2,5 kg", "0.75 ký", "3 cân"),
/// as JSON number text exactly as typed: a decimal comma becomes a point, nothing else
/// changes except leading zeros JSON does not allow ("02" → "2", ",5" → "0.5"). It never
/// goes through a float, so "2.3" stays "2.3".
fn weight_text(raw: &str) -> Option<String> {
    let lower = raw.to_lowercase();
    let chars: Vec<(usize, char)> = lower.char_indices().collect();
    let byte = |index: usize| chars.get(index).map_or(lower.len(), |(at, _)| *at);
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index].1;
        let alphanumeric = |at: Option<usize>| at.is_some_and(|at| chars[at].1.is_alphanumeric());
        // "a2", or "bk-2kg" (an id, not a weight).
        let glued = alphanumeric(index.checked_sub(1))
            || (index.checked_sub(1).is_some_and(|at| chars[at].1 == '-')
                && alphanumeric(index.checked_sub(2)));
        if !c.is_ascii_digit() || glued {
            index += 1;
            continue;
        }
        // ",5 kg": a leading separator after a space means "0,5".
        let leading_point = index
            .checked_sub(1)
            .is_some_and(|before| matches!(chars[before].1, '.' | ','))
            && index
                .checked_sub(2)
                .is_none_or(|before| !chars[before].1.is_alphanumeric());
        let mut cursor = index;
        let mut whole = String::new();
        while let Some((_, digit)) = chars.get(cursor).filter(|(_, c)| c.is_ascii_digit()) {
            whole.push(*digit);
            cursor += 1;
        }
        let mut fraction = String::new();
        let separator = chars
            .get(cursor)
            .is_some_and(|(_, c)| matches!(c, '.' | ','));
        if separator
            && chars
                .get(cursor + 1)
                .is_some_and(|(_, c)| c.is_ascii_digit())
        {
            cursor += 1;
            while let Some((_, digit)) = chars.get(cursor).filter(|(_, c)| c.is_ascii_digit()) {
                fraction.push(*digit);
                cursor += 1;
            }
        }
        let number_end = cursor;
        let mut unit_start = cursor;
        while chars.get(unit_start).is_some_and(|(_, c)| *c == ' ') {
            unit_start += 1;
        }
        let rest = &lower[byte(unit_start)..];
        let has_unit = WEIGHT_UNITS.iter().any(|unit| {
            rest.strip_prefix(unit)
                .is_some_and(|after| after.chars().next().is_none_or(|c| !c.is_alphanumeric()))
        });
        if has_unit {
            let (whole, fraction) = if leading_point {
                ("0".to_owned(), whole)
            } else {
                (whole, fraction)
            };
            let trimmed = whole.trim_start_matches('0');
            let whole = if trimmed.is_empty() { "0" } else { trimmed };
            return Some(if fraction.is_empty() {
                whole.to_owned()
            } else {
                format!("{whole}.{fraction}")
            });
        }
        index = number_end.max(index + 1);
    }
    None
}

/// Whole đồng with a point between thousands: 450000 → "450.000".
fn vnd(amount: u64) -> String {
    let digits = amount.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push('.');
        }
        out.push(digit);
    }
    out
}

/// The idempotency key of a checkout of `draft_id`: the same draft always gets the same
/// key, so buying it again cannot buy twice. Characters the key may not hold become `-`.
fn checkout_key(draft_id: &str) -> String {
    format!("checkout-{draft_id}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.:-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(MAX_IDEMPOTENCY_KEY_CHARS)
        .collect()
}

// ---------------------------------------------------------------------------------------
// Reading the history: earlier calls, their results, restaurants seen.

/// A tool result as the model reads it.
#[derive(Debug, Clone)]
enum Outcome {
    Ok(Value),
    Failed { code: String, message: String },
    Unreadable,
}

fn outcome(content: &str, is_error: bool) -> Outcome {
    let Ok(value) = serde_json::from_str::<Value>(content) else {
        return if is_error {
            Outcome::Failed {
                code: String::new(),
                message: content.to_owned(),
            }
        } else {
            Outcome::Unreadable
        };
    };
    let ok = value.get("ok").and_then(Value::as_bool);
    if ok == Some(false) || (ok.is_none() && is_error) {
        let error = value.get("error");
        let code = error
            .and_then(|e| e.get("code"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let message = error
            .and_then(|e| e.get("message").and_then(Value::as_str).or(e.as_str()))
            .unwrap_or_default()
            .to_owned();
        Outcome::Failed { code, message }
    } else if value.is_object() {
        Outcome::Ok(value)
    } else {
        Outcome::Unreadable
    }
}

fn text_field<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
}

#[derive(Debug, Clone, PartialEq)]
struct Restaurant {
    id: String,
    name: String,
    address: Option<String>,
    city: Option<String>,
    cuisine: Option<String>,
    price_level: Option<u64>,
    slots: Vec<String>,
}

fn restaurants_of(value: &Value) -> Vec<Restaurant> {
    let Some(list) = value.get("restaurants").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|entry| {
            let slots = entry
                .get("freeSlots")
                .and_then(Value::as_array)
                .map(|slots| {
                    slots
                        .iter()
                        .filter_map(|slot| text_field(slot, "startsAt"))
                        .filter_map(|at| DateTime::parse_from_rfc3339(at).ok())
                        .map(|at| at.format("%H:%M").to_string())
                        .collect()
                })
                .unwrap_or_default();
            Some(Restaurant {
                id: text_field(entry, "id")?.to_owned(),
                name: text_field(entry, "name")?.to_owned(),
                address: text_field(entry, "address").map(str::to_owned),
                city: text_field(entry, "city").map(str::to_owned),
                cuisine: text_field(entry, "cuisine").map(str::to_owned),
                price_level: entry.get("priceLevel").and_then(Value::as_u64),
                slots,
            })
        })
        .collect()
}

/// createBooking arguments as far as they are known; absent fields are left out of the call.
#[derive(Debug, Clone, Default, PartialEq)]
struct BookingArgs {
    restaurant_id: Option<String>,
    party_size: Option<u8>,
    starts_at: Option<DateTime<FixedOffset>>,
}

impl BookingArgs {
    fn to_json(&self) -> String {
        let mut object = Map::new();
        if let Some(id) = &self.restaurant_id {
            object.insert("restaurantId".into(), Value::from(id.as_str()));
        }
        if let Some(size) = self.party_size {
            object.insert("partySize".into(), Value::from(size));
        }
        if let Some(at) = &self.starts_at {
            object.insert("startsAt".into(), Value::from(rfc3339(at)));
        }
        Value::Object(object).to_string()
    }

    /// Reads earlier argument text, which may be broken JSON or hold ill-typed values: what
    /// is usable is kept, the rest is dropped.
    fn lenient(arguments: &str) -> Self {
        let starts_at = |text: &str| DateTime::parse_from_rfc3339(text.trim()).ok();
        if let Ok(Value::Object(object)) = serde_json::from_str::<Value>(arguments) {
            return Self {
                restaurant_id: object
                    .get("restaurantId")
                    .and_then(Value::as_str)
                    .filter(|id| !id.trim().is_empty())
                    .map(str::to_owned),
                party_size: object
                    .get("partySize")
                    .and_then(Value::as_u64)
                    .and_then(|n| u8::try_from(n).ok())
                    .filter(|n| *n > 0),
                starts_at: object
                    .get("startsAt")
                    .and_then(Value::as_str)
                    .and_then(starts_at),
            };
        }
        Self {
            restaurant_id: quoted_field(arguments, "restaurantId")
                .filter(|id| !id.trim().is_empty())
                .map(str::to_owned),
            party_size: None,
            starts_at: quoted_field(arguments, "startsAt").and_then(starts_at),
        }
    }

    fn supplies_anything(&self) -> bool {
        self.party_size.is_some() || self.starts_at.is_some()
    }
}

/// The string value after `"key"` in text that is not valid JSON.
fn quoted_field<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let needle = format!("\"{key}\"");
    let after_key = &text[text.find(&needle)? + needle.len()..];
    let after_colon = after_key.trim_start().strip_prefix(':')?.trim_start();
    let value = after_colon.strip_prefix('"')?;
    Some(&value[..value.find('"')?])
}

// ---------------------------------------------------------------------------------------
// Deciding what to say.

struct Planner<'a> {
    messages: &'a [ModelMessage],
    now: DateTime<FixedOffset>,
    /// The latest thing the person wrote; every decision is about it.
    user: Utterance,
    lang: Lang,
    /// The tools this request offers; no other tool is ever called.
    offered: Offered,
}

impl<'a> Planner<'a> {
    fn new(messages: &'a [ModelMessage], now: DateTime<FixedOffset>, offered: Offered) -> Self {
        let latest = messages
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::User { text } => Some(text.as_str()),
                _ => None,
            })
            .unwrap_or_default();
        let user = Utterance::new(latest);
        let lang = user.language();
        Self {
            messages,
            now,
            user,
            lang,
            offered,
        }
    }

    fn offers(&self, tool: ToolName) -> bool {
        self.offered.has(tool)
    }

    fn reply(&self) -> Reply {
        match self.messages.last() {
            Some(ModelMessage::User { .. }) => self.answer_user(),
            Some(ModelMessage::ToolResult { .. }) => self.answer_results(),
            _ => self.help(),
        }
    }

    fn today(&self) -> NaiveDate {
        self.now.date_naive()
    }

    // --- The person just wrote something.

    fn answer_user(&self) -> Reply {
        let raw = self.user.raw.as_str();
        if raw.contains(TRIGGER_UNKNOWN_TOOL) {
            return Reply::call(
                self.lang.pick("Để tôi thử…", "Let me try that…"),
                UNKNOWN_TOOL_NAME,
                "{}",
            );
        }
        if raw.contains(TRIGGER_BAD_JSON) && self.offers(ToolName::CreateBooking) {
            return Reply::call(
                self.lang.pick("Để tôi đặt bàn…", "Let me book that…"),
                CREATE_BOOKING,
                BAD_JSON_ARGUMENTS,
            );
        }
        if raw.contains(TRIGGER_TOOL_ERROR) && self.offers(ToolName::GetWeather) {
            let arguments = serde_json::json!({ "city": FAILING_CITY }).to_string();
            return Reply::call(
                self.lang
                    .pick("Để tôi xem thời tiết…", "Let me check the weather…"),
                GET_WEATHER,
                arguments,
            );
        }
        if raw.contains(TRIGGER_LOOP) && self.offers(ToolName::GetWeather) {
            return self.loop_call();
        }
        if raw.contains(TRIGGER_BAD_ARGS) && self.offers(ToolName::CreateBooking) {
            return self.bad_args_call();
        }
        if self.offers(ToolName::ShippingQuote) {
            if raw.contains(TRIGGER_BAD_WEIGHT) {
                return self.quote_call(BAD_WEIGHT_ARGUMENTS.to_owned());
            }
            if raw.contains(TRIGGER_ZERO_WEIGHT) {
                return self.quote_call(ZERO_WEIGHT_ARGUMENTS.to_owned());
            }
        }
        if let Some(reply) = self.my_bookings() {
            return reply;
        }
        if let Some(reply) = self.gifts() {
            return reply;
        }
        if let Some(reply) = self.shipping() {
            return reply;
        }
        if self.offers(ToolName::GetWeather) && self.user.is_weather() {
            return self.weather();
        }
        if self.offers(ToolName::CreateBooking) && self.user.is_booking() {
            return self.book();
        }
        if self.offers(ToolName::SearchRestaurants) && self.user.is_search() {
            return self.search();
        }
        if self.offers(ToolName::CreateBooking) {
            if let Some(reply) = self.follow_up() {
                return reply;
            }
        }
        self.help()
    }

    fn loop_call(&self) -> Reply {
        let arguments = serde_json::json!({ "city": "Hà Nội" }).to_string();
        Reply::call(
            self.lang.pick(
                "Để tôi xem thời tiết ở Hà Nội…",
                "Let me check the weather in Hà Nội…",
            ),
            GET_WEATHER,
            arguments,
        )
    }

    fn bad_args_call(&self) -> Reply {
        Reply::call(
            self.lang.pick("Để tôi đặt bàn…", "Let me book that…"),
            CREATE_BOOKING,
            BAD_ARGS_ARGUMENTS,
        )
    }

    fn weather(&self) -> Reply {
        let cities = self.user.cities();
        if cities.is_empty() {
            return Reply::text(self.lang.pick(
                "Bạn muốn xem thời tiết ở thành phố nào? Tôi có dự báo cho Hà Nội, TP. Hồ Chí \
                 Minh, Đà Lạt, Đà Nẵng và Huế.",
                "Which city would you like the weather for? I have forecasts for Hà Nội, TP. Hồ \
                 Chí Minh, Đà Lạt, Đà Nẵng and Huế.",
            ));
        }
        let days = self.user.forecast_days();
        let calls = cities
            .iter()
            .map(|city| {
                let mut arguments = Map::new();
                arguments.insert("city".into(), Value::from(*city));
                if let Some(days) = days {
                    arguments.insert("days".into(), Value::from(days));
                }
                Call {
                    name: GET_WEATHER.to_owned(),
                    arguments: Value::Object(arguments).to_string(),
                }
            })
            .collect();
        let places = join_names(&cities, self.lang);
        let text = match self.lang {
            Lang::Vi => format!("Để tôi xem thời tiết ở {places}…"),
            Lang::En => format!("Let me check the weather in {places}…"),
        };
        Reply { text, calls }
    }

    fn search(&self) -> Reply {
        let Some(city) = self.user.cities().first().copied() else {
            return self.ask_city(self.lang.pick(
                "Bạn muốn tìm nhà hàng ở thành phố nào?",
                "Which city should I look for restaurants in?",
            ));
        };
        let mut arguments = Map::new();
        arguments.insert("city".into(), Value::from(city));
        if let Some(cuisine) = self.user.cuisine(self.lang) {
            arguments.insert("cuisine".into(), Value::from(cuisine));
        }
        if let Some(size) = self.user.party_size() {
            arguments.insert("partySize".into(), Value::from(size));
        }
        if let Some(date) = self.user.date(self.today()) {
            arguments.insert("date".into(), Value::from(date.to_string()));
        }
        let text = match self.lang {
            Lang::Vi => format!("Để tôi tìm nhà hàng ở {city}…"),
            Lang::En => format!("Let me look for restaurants in {city}…"),
        };
        Reply::call(
            text,
            SEARCH_RESTAURANTS,
            Value::Object(arguments).to_string(),
        )
    }

    fn ask_city(&self, question: &str) -> Reply {
        let cities = self.lang.pick(
            "Tôi có thông tin ở Hà Nội, TP. Hồ Chí Minh, Đà Lạt, Đà Nẵng và Huế.",
            "I cover Hà Nội, TP. Hồ Chí Minh, Đà Lạt, Đà Nẵng and Huế.",
        );
        Reply::text(format!("{question} {cities}"))
    }

    /// What the latest message says about a booking, without a restaurant.
    fn booking_details(&self) -> BookingArgs {
        BookingArgs {
            restaurant_id: None,
            party_size: self.user.party_size(),
            starts_at: self.user.starts_at(self.now),
        }
    }

    fn book(&self) -> Reply {
        let searches = self.search_results();
        let seen = searches.iter().rev().flatten();
        if let Some(restaurant) = name_match(&self.user, seen) {
            let args = BookingArgs {
                restaurant_id: Some(restaurant.id.clone()),
                ..self.booking_details()
            };
            return self.booking_call(&args);
        }
        let cities = self.user.cities();
        if cities.is_empty() {
            // "book for 4 people" right after a failed booking completes that booking.
            if let Some(pending) = self.pending_booking() {
                if pending.restaurant_id.is_some() {
                    let merged = self.merge(pending.clone()).unwrap_or(pending);
                    return self.booking_call(&merged);
                }
            }
        }
        // A restaurant from an earlier search in another city is not what was asked for.
        let latest_first = searches.last().and_then(|list| list.first());
        if let Some(restaurant) = latest_first {
            let same_city = match (cities.first(), restaurant.city.as_deref()) {
                (Some(wanted), Some(city)) => Utterance::new(city).cities().first() == Some(wanted),
                _ => true,
            };
            if same_city {
                let args = BookingArgs {
                    restaurant_id: Some(restaurant.id.clone()),
                    ..self.booking_details()
                };
                return self.booking_call(&args);
            }
        }
        let city = match cities.first().copied() {
            Some(city) if self.offers(ToolName::SearchRestaurants) => city,
            _ => {
                return self.ask_city(self.lang.pick(
                    "Bạn muốn đặt bàn ở thành phố nào (hoặc nhà hàng nào)?",
                    "Which city (or which restaurant) should I book in?",
                ))
            }
        };
        let details = self.booking_details();
        let mut arguments = Map::new();
        arguments.insert("city".into(), Value::from(city));
        if let Some(size) = details.party_size {
            arguments.insert("partySize".into(), Value::from(size));
        }
        let date = self
            .user
            .date(self.today())
            .or(details.starts_at.map(|at| at.date_naive()));
        if let Some(date) = date {
            arguments.insert("date".into(), Value::from(date.to_string()));
        }
        let text = match self.lang {
            Lang::Vi => format!("Để tôi tìm nhà hàng ở {city} trước…"),
            Lang::En => format!("Let me find restaurants in {city} first…"),
        };
        Reply::call(
            text,
            SEARCH_RESTAURANTS,
            Value::Object(arguments).to_string(),
        )
    }

    /// A message that only adds what an unfinished booking lacked ("4 người", "lúc 19:00").
    fn follow_up(&self) -> Option<Reply> {
        let merged = self.merge(self.pending_booking()?)?;
        if merged.restaurant_id.is_none() {
            return Some(self.book());
        }
        Some(self.booking_call(&merged))
    }

    /// The unfinished booking's arguments with what the latest message adds; `None` when it
    /// adds nothing.
    fn merge(&self, base: BookingArgs) -> Option<BookingArgs> {
        let mut details = self.booking_details();
        if details.party_size.is_none() {
            // A bare "4" answers "how many people?".
            if let [only] = self.user.tokens.as_slice() {
                details.party_size = number(&only.lower);
            }
        }
        if !details.supplies_anything() && self.user.date(self.today()).is_none() {
            return None;
        }
        let time = self.user.time().or(base.starts_at.map(|at| at.time()));
        let date = self
            .user
            .date(self.today())
            .or(base.starts_at.map(|at| at.date_naive()));
        let starts_at = match (date, time) {
            (Some(date), Some(time)) => local(date, time),
            (None, Some(time)) => next_occurrence(self.now, time),
            _ => None,
        };
        Some(BookingArgs {
            restaurant_id: base.restaurant_id,
            party_size: details.party_size.or(base.party_size),
            starts_at,
        })
    }

    fn booking_call(&self, args: &BookingArgs) -> Reply {
        let name = args
            .restaurant_id
            .as_deref()
            .map(|id| self.restaurant_name(id).unwrap_or_else(|| id.to_owned()))
            .unwrap_or_default();
        let text = match self.lang {
            Lang::Vi => {
                format!("Tôi chuẩn bị yêu cầu đặt bàn tại {name}…")
            }
            Lang::En => format!("Let me prepare a booking request for {name}…"),
        };
        Reply::call(text, CREATE_BOOKING, args.to_json())
    }

    /// The arguments of the latest createBooking call, if that booking is unfinished: it
    /// failed validation, or the last reply asked for the party size or time.
    fn pending_booking(&self) -> Option<BookingArgs> {
        let call = self
            .proposed_calls()
            .rev()
            .find(|c| c.name == CREATE_BOOKING)?;
        let failed_validation = matches!(
            self.result_of(&call.id),
            Some(Outcome::Failed { code, .. }) if code == "VALIDATION_ERROR"
        );
        let asked = self
            .messages
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::Assistant { text, .. } => Some(text.to_lowercase()),
                _ => None,
            })
            .is_some_and(|text| {
                [
                    "mấy người",
                    "mấy giờ",
                    "how many people",
                    "what date and time",
                ]
                .iter()
                .any(|question| text.contains(question))
            });
        (failed_validation || asked).then(|| BookingArgs::lenient(&call.arguments))
    }

    fn proposed_calls(&self) -> impl DoubleEndedIterator<Item = &'a ProposedCall> {
        self.messages
            .iter()
            .filter_map(|message| match message {
                ModelMessage::Assistant { calls, .. } => Some(calls.iter()),
                _ => None,
            })
            .flatten()
    }

    fn result_of(&self, call_id: &str) -> Option<Outcome> {
        self.messages
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::ToolResult {
                    call_id: id,
                    content,
                    is_error,
                    ..
                } if id == call_id => Some(outcome(content, *is_error)),
                _ => None,
            })
    }

    /// Restaurants of each successful search, oldest search first.
    fn search_results(&self) -> Vec<Vec<Restaurant>> {
        self.messages
            .iter()
            .filter_map(|message| match message {
                ModelMessage::ToolResult {
                    name,
                    content,
                    is_error,
                    ..
                } if name == SEARCH_RESTAURANTS => match outcome(content, *is_error) {
                    Outcome::Ok(value) => Some(restaurants_of(&value)),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    fn restaurant_name(&self, id: &str) -> Option<String> {
        self.search_results()
            .into_iter()
            .rev()
            .flatten()
            .find(|restaurant| restaurant.id == id)
            .map(|restaurant| restaurant.name)
    }

    fn help(&self) -> Reply {
        if self.offered.restaurant() {
            return Reply::text(self.lang.pick(
                "Xin chào! Tôi có thể giúp bạn: xem thời tiết ở Hà Nội, TP. Hồ Chí Minh, Đà Lạt, \
                 Đà Nẵng và Huế; tìm nhà hàng theo thành phố, món ăn và số người; đặt bàn (bạn \
                 xác nhận trước khi tôi đặt); xem và huỷ các đặt chỗ của bạn. Bạn muốn bắt đầu \
                 từ đâu?",
                "Hi! I can help you check the weather in Hà Nội, TP. Hồ Chí Minh, Đà Lạt, Đà Nẵng \
                 and Huế; find restaurants by city, cuisine and party size; book a table (you \
                 confirm before anything is booked); and list or cancel your bookings. What would \
                 you like to do?",
            ));
        }
        if self.offered.gifts() {
            return Reply::text(self.lang.pick(
                "Xin chào! Tôi gợi ý quà tặng từ danh mục và có thể tạo thanh toán giả lập \
                 (không trừ tiền thật). Món quà dành cho ai? Người đó bao nhiêu tuổi, thích gì, \
                 và ngân sách của bạn khoảng bao nhiêu?",
                "Hi! I suggest gifts from our catalogue and can create a simulated checkout (no \
                 real money is charged). Who is the gift for? How old are they, what do they \
                 like, and what is your budget?",
            ));
        }
        if self.offered.shipping() {
            return Reply::text(self.lang.pick(
                "Xin chào! Tôi báo giá phí giao hàng theo công thức giả lập (đơn vị DEMO, không \
                 phải tiền thật). Bạn gửi nội thành hay liên tỉnh, và gói hàng nặng bao nhiêu kg?",
                "Hi! I quote shipping with a made-up formula (in DEMO, not real money). Is the \
                 parcel local or regional, and how many kilograms does it weigh?",
            ));
        }
        Reply::text(self.lang.pick(
            "Xin chào! Hiện tôi không có công cụ nào để dùng, nên chỉ trò chuyện được thôi.",
            "Hi! I have no tools to use right now, so I can only chat.",
        ))
    }

    // --- Tool results just came back.

    fn answer_results(&self) -> Reply {
        if self.user.raw.contains(TRIGGER_LOOP) && self.offers(ToolName::GetWeather) {
            return self.loop_call();
        }
        if self.user.raw.contains(TRIGGER_BAD_ARGS) && self.offers(ToolName::CreateBooking) {
            return self.bad_args_call();
        }
        let start = self
            .messages
            .iter()
            .rposition(|message| !matches!(message, ModelMessage::ToolResult { .. }))
            .map_or(0, |index| index + 1);
        let calls: &[ProposedCall] = match start.checked_sub(1).map(|i| &self.messages[i]) {
            Some(ModelMessage::Assistant { calls, .. }) => calls,
            _ => &[],
        };
        let mut results: Vec<(&str, &str, &str, bool)> = self.messages[start..]
            .iter()
            .filter_map(|message| match message {
                ModelMessage::ToolResult {
                    call_id,
                    name,
                    content,
                    is_error,
                } => Some((call_id.as_str(), name.as_str(), content.as_str(), *is_error)),
                _ => None,
            })
            .collect();
        // Answer in the order the calls were made, whatever order their results arrived in.
        results.sort_by_key(|(id, ..)| {
            calls
                .iter()
                .position(|call| call.id == *id)
                .unwrap_or(usize::MAX)
        });

        let mut paragraphs = Vec::new();
        let mut follow_up_calls = Vec::new();
        for (call_id, name, content, is_error) in results {
            let arguments = calls
                .iter()
                .find(|call| call.id == call_id)
                .map_or("", |call| call.arguments.as_str());
            match outcome(content, is_error) {
                Outcome::Ok(value) => match name {
                    GET_WEATHER => paragraphs.push(self.weather_report(&value, arguments)),
                    SEARCH_RESTAURANTS => {
                        let restaurants = restaurants_of(&value);
                        paragraphs.push(self.search_report(&value, &restaurants));
                        if follow_up_calls.is_empty() {
                            if let Some((line, call)) = self.book_from_search(&restaurants) {
                                paragraphs.push(line);
                                follow_up_calls.push(call);
                            }
                        }
                    }
                    CREATE_BOOKING => paragraphs.push(self.booking_report(&value)),
                    LIST_BOOKINGS => paragraphs.push(self.bookings_report(&value)),
                    CANCEL_BOOKING => paragraphs.push(self.cancel_report(&value, arguments)),
                    SUGGEST_GIFTS => paragraphs.push(self.gifts_report(&value)),
                    PREPARE_CHECKOUT => {
                        let (line, call) = self.draft_report(&value);
                        paragraphs.push(line);
                        if let Some(call) = call {
                            if follow_up_calls.is_empty() {
                                follow_up_calls.push(call);
                            }
                        }
                    }
                    CREATE_CHECKOUT_SESSION => {
                        paragraphs.push(self.checkout_report(&value, arguments))
                    }
                    SHIPPING_QUOTE => paragraphs.push(self.quote_report(&value)),
                    other => paragraphs.push(match self.lang {
                        Lang::Vi => format!("Công cụ {other} đã chạy xong."),
                        Lang::En => format!("The tool {other} finished."),
                    }),
                },
                Outcome::Failed { code, message } => {
                    paragraphs.push(self.failure_report(name, &code, &message, arguments));
                }
                Outcome::Unreadable => paragraphs.push(match self.lang {
                    Lang::Vi => format!("Xin lỗi, tôi không đọc được kết quả của {name}."),
                    Lang::En => format!("Sorry, I couldn't read the result of {name}."),
                }),
            }
        }
        if paragraphs.is_empty() {
            return self.help();
        }
        Reply {
            text: paragraphs.join("\n\n"),
            calls: follow_up_calls,
        }
    }

    fn weather_report(&self, value: &Value, arguments: &str) -> String {
        let asked_city = serde_json::from_str::<Value>(arguments)
            .ok()
            .and_then(|args| text_field(&args, "city").map(str::to_owned));
        let city = text_field(value, "city")
            .map(str::to_owned)
            .or(asked_city)
            .unwrap_or_else(|| self.lang.pick("thành phố này", "this city").to_owned());
        let days: Vec<String> = value
            .get("days")
            .and_then(Value::as_array)
            .map(|days| days.iter().map(|day| self.forecast_day(day)).collect())
            .unwrap_or_default();
        if days.is_empty() {
            return match self.lang {
                Lang::Vi => format!("Chưa có dữ liệu dự báo cho {city}."),
                Lang::En => format!("There is no forecast data for {city}."),
            };
        }
        match self.lang {
            Lang::Vi => format!("Thời tiết {city}: {}.", days.join("; ")),
            Lang::En => format!("Weather in {city}: {}.", days.join("; ")),
        }
    }

    fn forecast_day(&self, day: &Value) -> String {
        let mut parts = Vec::new();
        if let Some(condition) = text_field(day, "condition") {
            parts.push(condition_name(condition, self.lang).to_owned());
        }
        let min = day.get("tempMinC").and_then(Value::as_i64);
        let max = day.get("tempMaxC").and_then(Value::as_i64);
        match (min, max) {
            (Some(min), Some(max)) => parts.push(format!("{min}–{max}°C")),
            (Some(only), None) | (None, Some(only)) => parts.push(format!("{only}°C")),
            (None, None) => {}
        }
        if let Some(chance) = day.get("precipitationChance").and_then(Value::as_i64) {
            parts.push(match self.lang {
                Lang::Vi => format!("khả năng mưa {chance}%"),
                Lang::En => format!("{chance}% chance of rain"),
            });
        }
        let date = text_field(day, "date").map(|date| {
            NaiveDate::parse_from_str(date, "%Y-%m-%d")
                .map(|d| d.format("%d/%m").to_string())
                .unwrap_or_else(|_| date.to_owned())
        });
        match date {
            Some(date) => format!("{date} {}", parts.join(", ")),
            None => parts.join(", "),
        }
    }

    fn search_report(&self, value: &Value, restaurants: &[Restaurant]) -> String {
        if restaurants.is_empty() {
            let reason = text_field(value, "noResultsReason");
            return match (self.lang, reason) {
                (Lang::Vi, Some(reason)) => format!(
                    "Không tìm thấy nhà hàng phù hợp: {}. Bạn thử đổi tiêu chí (thành phố, món \
                     ăn, số người hoặc ngày) nhé.",
                    trim_message(reason)
                ),
                (Lang::Vi, None) => "Không tìm thấy nhà hàng phù hợp. Bạn thử đổi tiêu chí \
                                     (thành phố, món ăn, số người hoặc ngày) nhé."
                    .to_owned(),
                (Lang::En, Some(reason)) => format!(
                    "No restaurants matched: {}. Try changing the criteria (city, cuisine, party \
                     size or date).",
                    trim_message(reason)
                ),
                (Lang::En, None) => "No restaurants matched. Try changing the criteria (city, \
                                     cuisine, party size or date)."
                    .to_owned(),
            };
        }
        let count = restaurants.len();
        let header = match (self.lang, count > LISTED_RESTAURANTS) {
            (Lang::Vi, false) => format!("Tôi tìm được {count} nhà hàng:"),
            (Lang::Vi, true) => {
                format!("Tôi tìm được {count} nhà hàng, đây là {LISTED_RESTAURANTS} nơi đầu tiên:")
            }
            (Lang::En, false) => format!("I found {count} restaurant(s):"),
            (Lang::En, true) => {
                format!("I found {count} restaurants; here are the first {LISTED_RESTAURANTS}:")
            }
        };
        let mut lines = vec![header];
        for restaurant in restaurants.iter().take(LISTED_RESTAURANTS) {
            lines.push(self.restaurant_line(restaurant));
        }
        lines.join("\n")
    }

    fn restaurant_line(&self, restaurant: &Restaurant) -> String {
        let mut line = format!("- {}", restaurant.name);
        if let Some(address) = &restaurant.address {
            line.push_str(&format!(" — {address}"));
        }
        let mut details = Vec::new();
        if let Some(cuisine) = &restaurant.cuisine {
            details.push(cuisine.clone());
        }
        if let Some(level) = restaurant.price_level {
            // Casting is safe: the level is clamped to 1..=4 first.
            details.push("₫".repeat(level.clamp(1, 4) as usize));
        }
        if !details.is_empty() {
            line.push_str(&format!(" ({})", details.join(", ")));
        }
        if !restaurant.slots.is_empty() {
            let mut slots = restaurant
                .slots
                .iter()
                .take(LISTED_SLOTS)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if restaurant.slots.len() > LISTED_SLOTS {
                slots.push_str(", …");
            }
            line.push_str(&match self.lang {
                Lang::Vi => format!(" · giờ còn trống: {slots}"),
                Lang::En => format!(" · free at {slots}"),
            });
        }
        line
    }

    /// After a search made for a booking request, the booking call (once per request).
    fn book_from_search(&self, restaurants: &[Restaurant]) -> Option<(String, Call)> {
        if !self.offers(ToolName::CreateBooking)
            || !self.user.is_booking()
            || self.user.is_weather()
            || self.booked_since_user()
        {
            return None;
        }
        let restaurant =
            name_match(&self.user, restaurants.iter()).or_else(|| restaurants.first())?;
        let args = BookingArgs {
            restaurant_id: Some(restaurant.id.clone()),
            ..self.booking_details()
        };
        let name = &restaurant.name;
        let line = match self.lang {
            Lang::Vi => {
                format!("Tôi chuẩn bị yêu cầu đặt bàn tại {name}…")
            }
            Lang::En => format!("Let me prepare a booking request for {name}…"),
        };
        let call = Call {
            name: CREATE_BOOKING.to_owned(),
            arguments: args.to_json(),
        };
        Some((line, call))
    }

    fn booked_since_user(&self) -> bool {
        self.messages
            .iter()
            .rev()
            .take_while(|message| !matches!(message, ModelMessage::User { .. }))
            .any(|message| match message {
                ModelMessage::Assistant { calls, .. } => {
                    calls.iter().any(|call| call.name == CREATE_BOOKING)
                }
                _ => false,
            })
    }

    fn booking_report(&self, value: &Value) -> String {
        let id = text_field(value, "bookingId").unwrap_or("?");
        let name = text_field(value, "restaurantName")
            .or_else(|| text_field(value, "restaurantId"))
            .unwrap_or("?");
        let when = text_field(value, "startsAt")
            .map(|at| {
                DateTime::parse_from_rfc3339(at)
                    .map(|at| at.format("%d/%m/%Y %H:%M").to_string())
                    .unwrap_or_else(|_| at.to_owned())
            })
            .unwrap_or_else(|| "?".to_owned());
        let size = value
            .get("partySize")
            .and_then(Value::as_u64)
            .map_or_else(|| "?".to_owned(), |n| n.to_string());
        match (text_field(value, "status"), self.lang) {
            (Some("confirmed"), Lang::Vi) => format!(
                "Đã đặt bàn thành công tại {name}! Mã đặt bàn: {id}. Thời gian: {when}, \
                 {size} người."
            ),
            (Some("confirmed"), Lang::En) => format!(
                "Your table at {name} is booked! Booking id: {id}. Time: {when}, party of {size}."
            ),
            (Some("waitlisted"), Lang::Vi) => format!(
                "{name} đã kín chỗ lúc {when}, nên yêu cầu cho {size} người đang nằm trong danh \
                 sách chờ — bàn chưa được giữ. Mã yêu cầu: {id}. Nhà hàng sẽ báo khi có chỗ."
            ),
            (Some("waitlisted"), Lang::En) => format!(
                "{name} is full at {when}, so your request for {size} is on the waiting list — \
                 no table is held yet. Reference: {id}. The restaurant will tell you if a table \
                 frees up."
            ),
            (_, Lang::Vi) => format!(
                "Kết quả đặt bàn không rõ trạng thái, nên tôi không xác nhận được là có bàn. Mã: \
                 {id}."
            ),
            (_, Lang::En) => format!(
                "The booking result has no clear status, so I can't confirm a table. Reference: \
                 {id}."
            ),
        }
    }

    fn failure_report(&self, name: &str, code: &str, message: &str, arguments: &str) -> String {
        let quoted = trim_message(message);
        let quoted = if quoted.is_empty() {
            self.lang.pick("không rõ lý do", "no details").to_owned()
        } else {
            quoted
        };
        if code == "UNKNOWN_TOOL" || ToolName::parse(name).is_none() {
            return match self.lang {
                Lang::Vi => format!(
                    "Xin lỗi, tôi đã gọi nhầm một công cụ không tồn tại ({name}): {quoted}."
                ),
                Lang::En => {
                    format!("Sorry, I tried to use a tool that doesn't exist ({name}): {quoted}.")
                }
            };
        }
        match name {
            CREATE_BOOKING => return self.booking_failure(code, message, &quoted),
            LIST_BOOKINGS => {
                return match self.lang {
                    Lang::Vi => {
                        format!("Xin lỗi, tôi không xem được các đặt chỗ của bạn: {quoted}.")
                    }
                    Lang::En => format!("Sorry, I couldn't list your bookings: {quoted}."),
                }
            }
            CANCEL_BOOKING => return self.cancel_failure(code, &quoted, arguments),
            SUGGEST_GIFTS => {
                return match self.lang {
                    Lang::Vi => format!("Xin lỗi, tôi không lấy được gợi ý quà: {quoted}."),
                    Lang::En => format!("Sorry, I couldn't get gift ideas: {quoted}."),
                }
            }
            PREPARE_CHECKOUT | CREATE_CHECKOUT_SESSION => {
                return self.checkout_failure(code, &quoted)
            }
            SHIPPING_QUOTE => return self.quote_failure(code, message, &quoted),
            _ => {}
        }
        if code == "DECLINED" {
            return self
                .lang
                .pick(
                    "Bạn đã từ chối nên tôi không thực hiện yêu cầu đó. Bạn muốn thay đổi gì?",
                    "You declined, so I didn't go ahead. What would you like to change?",
                )
                .to_owned();
        }
        if name == GET_WEATHER {
            let city = serde_json::from_str::<Value>(arguments)
                .ok()
                .and_then(|args| text_field(&args, "city").map(str::to_owned));
            return match (self.lang, city) {
                (Lang::Vi, Some(city)) => {
                    format!("Xin lỗi, tôi không lấy được dự báo thời tiết cho {city}: {quoted}.")
                }
                (Lang::Vi, None) => {
                    format!("Xin lỗi, tôi không lấy được dự báo thời tiết: {quoted}.")
                }
                (Lang::En, Some(city)) => {
                    format!("Sorry, I couldn't get the weather forecast for {city}: {quoted}.")
                }
                (Lang::En, None) => {
                    format!("Sorry, I couldn't get the weather forecast: {quoted}.")
                }
            };
        }
        match self.lang {
            Lang::Vi => format!("Xin lỗi, tôi không tìm được nhà hàng: {quoted}."),
            Lang::En => format!("Sorry, the restaurant search failed: {quoted}."),
        }
    }

    fn booking_failure(&self, code: &str, message: &str, quoted: &str) -> String {
        let lower = message.to_lowercase();
        let (party, time) = (lower.contains("partysize"), lower.contains("startsat"));
        match (code, party, time, self.lang) {
            ("VALIDATION_ERROR", true, true, Lang::Vi) => "Tôi chưa đặt bàn vì còn thiếu thông \
                tin. Bạn muốn đặt bàn cho mấy người, vào ngày nào và lúc mấy giờ?"
                .to_owned(),
            ("VALIDATION_ERROR", true, true, Lang::En) => "I haven't made the reservation yet: \
                how many people is it for, and what date and time would you like?"
                .to_owned(),
            ("VALIDATION_ERROR", true, false, Lang::Vi) => {
                "Tôi chưa đặt bàn vì còn thiếu số người. Bạn muốn đặt bàn cho mấy người?".to_owned()
            }
            ("VALIDATION_ERROR", true, false, Lang::En) => "I haven't made the reservation yet: \
                how many people should the table be for?"
                .to_owned(),
            ("VALIDATION_ERROR", false, true, Lang::Vi) => format!(
                "Tôi chưa đặt bàn vì thời gian chưa hợp lệ ({quoted}). Bạn muốn đặt vào ngày \
                 nào, lúc mấy giờ?"
            ),
            ("VALIDATION_ERROR", false, true, Lang::En) => format!(
                "I haven't made the reservation yet, the time was not valid ({quoted}): what \
                 date and time would you like the table for?"
            ),
            ("VALIDATION_ERROR", false, false, Lang::Vi) => {
                format!("Chưa có bàn nào được đặt: {quoted}.")
            }
            ("VALIDATION_ERROR", false, false, Lang::En) => {
                format!("Nothing was booked: {quoted}.")
            }
            ("DECLINED", _, _, Lang::Vi) => "Bạn đã từ chối nên chưa có bàn nào được đặt. Bạn \
                muốn thay đổi gì: nhà hàng, ngày giờ hay số người?"
                .to_owned(),
            ("DECLINED", _, _, Lang::En) => "You declined, so nothing was booked. What would you \
                like to change: the restaurant, the time or the party size?"
                .to_owned(),
            (_, _, _, Lang::Vi) => {
                format!("Xin lỗi, tôi không đặt được bàn: {quoted}. Chưa có bàn nào được đặt.")
            }
            (_, _, _, Lang::En) => {
                format!("Sorry, I couldn't make the booking: {quoted}. Nothing was booked.")
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The person's bookings, gifts and parcels.

/// What the question after listing bookings for a cancellation says; a reply with just a
/// booking id answers it.
const CANCEL_QUESTION_VI: &str = "Bạn muốn huỷ đặt chỗ nào?";
const CANCEL_QUESTION_EN: &str = "Which booking would you like to cancel?";
const RECIPIENT_QUESTION_VI: &str = "Món quà dành cho ai?";
const RECIPIENT_QUESTION_EN: &str = "Who is the gift for?";

/// One gift of a suggest_gifts result.
#[derive(Debug, Clone, PartialEq)]
struct Gift {
    id: String,
    name: String,
    price: Option<u64>,
}

fn gifts_of(value: &Value) -> Vec<Gift> {
    let Some(list) = value.get("gifts").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|entry| {
            Some(Gift {
                id: text_field(entry, "gift_id")?.to_owned(),
                name: text_field(entry, "name")?.to_owned(),
                price: entry.get("price_vnd").and_then(Value::as_u64),
            })
        })
        .collect()
}

/// The gift whose name the message says ("mua Bình trà gốm"); the longest name wins.
fn gift_named(utterance: &Utterance, gifts: &[Gift]) -> Option<usize> {
    gifts
        .iter()
        .enumerate()
        .filter_map(|(index, gift)| {
            let name = Utterance::new(&gift.name);
            let words: Vec<&str> = name.tokens.iter().map(|t| t.folded.as_str()).collect();
            let spelling = words.join(" ");
            (words.len() >= 2 && utterance.find(&spelling, |t| &t.folded).is_some())
                .then_some((words.len(), index))
        })
        .max_by_key(|(length, index)| (*length, usize::MAX - index))
        .map(|(_, index)| index)
}

/// What suggest_gifts is asked with, gathered from what the person said.
#[derive(Debug, Clone, Default, PartialEq)]
struct GiftCriteria {
    relationship: Option<RelationshipType>,
    age: Option<u8>,
    interests: Vec<String>,
    budget: Option<Budget>,
}

impl GiftCriteria {
    fn of(utterance: &Utterance) -> Self {
        Self {
            relationship: utterance.relationship(),
            age: utterance.age(),
            interests: utterance
                .interests()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            budget: utterance.budget(),
        }
    }

    /// Fills what is missing from `older`.
    fn or(mut self, older: Self) -> Self {
        self.relationship = self.relationship.or(older.relationship);
        self.age = self.age.or(older.age);
        if self.interests.is_empty() {
            self.interests = older.interests;
        }
        self.budget = self.budget.or(older.budget);
        self
    }

    /// The criteria of an earlier suggest_gifts call.
    fn from_arguments(arguments: &str) -> Self {
        let Ok(Value::Object(args)) = serde_json::from_str::<Value>(arguments) else {
            return Self::default();
        };
        let budget = |key: &str| {
            args.get(key)
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
        };
        let (min, max) = (budget("budget_min"), budget("budget_max"));
        Self {
            relationship: args
                .get("relationship_type")
                .cloned()
                .and_then(|value| serde_json::from_value(value).ok()),
            age: args
                .get("age")
                .and_then(Value::as_u64)
                .and_then(|n| u8::try_from(n).ok()),
            interests: args
                .get("interests")
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            budget: (min.is_some() || max.is_some()).then_some(Budget { min, max }),
        }
    }

    fn to_json(&self, relationship: RelationshipType) -> String {
        let mut object = Map::new();
        object.insert(
            "relationship_type".into(),
            serde_json::to_value(relationship).unwrap_or(Value::Null),
        );
        if let Some(age) = self.age {
            object.insert("age".into(), Value::from(age));
        }
        if !self.interests.is_empty() {
            object.insert("interests".into(), Value::from(self.interests.clone()));
        }
        if let Some(budget) = self.budget {
            if let Some(min) = budget.min {
                object.insert("budget_min".into(), Value::from(min));
            }
            if let Some(max) = budget.max {
                object.insert("budget_max".into(), Value::from(max));
            }
        }
        Value::Object(object).to_string()
    }
}

/// A booking's id from cancelBooking's argument text, even when that text is broken.
fn booking_id_argument(arguments: &str) -> Option<String> {
    let from_json = serde_json::from_str::<Value>(arguments)
        .ok()
        .and_then(|args| text_field(&args, "bookingId").map(str::to_owned));
    from_json
        .or_else(|| quoted_field(arguments, "bookingId").map(str::to_owned))
        .filter(|id| !id.trim().is_empty())
}

/// The zone of an earlier shipping_quote call.
fn zone_argument(arguments: &str) -> Option<&'static str> {
    let args = serde_json::from_str::<Value>(arguments).ok()?;
    match text_field(&args, "zone")? {
        "local" => Some("local"),
        "regional" => Some("regional"),
        _ => None,
    }
}

/// The weight of an earlier shipping_quote call as its argument text had it (read as text,
/// never as a float), if it was a number above zero.
fn weight_argument(arguments: &str) -> Option<String> {
    const KEY: &str = "\"weight_kg\"";
    let after_key = &arguments[arguments.find(KEY)? + KEY.len()..];
    let value = after_key.trim_start().strip_prefix(':')?.trim_start();
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(value.len());
    let number = &value[..end];
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let well_formed = !whole.is_empty()
        && !number.ends_with('.')
        && !fraction.contains('.')
        && number.chars().any(|c| ('1'..='9').contains(&c));
    well_formed.then(|| number.to_owned())
}

/// What is wrong with a shipping_quote call, read from its error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ParcelProblem {
    WeightMissing,
    WeightNotANumber,
    WeightTooPrecise,
    WeightNotPositive,
    WeightTooHeavy,
    Weight,
    Zone,
    Other,
}

fn parcel_problem(message: &str) -> ParcelProblem {
    let lower = message.to_lowercase();
    if lower.contains("weight") {
        if lower.contains("missing") {
            ParcelProblem::WeightMissing
        } else if lower.contains("expected") || lower.contains("invalid type") {
            ParcelProblem::WeightNotANumber
        } else if lower.contains("decimal") {
            ParcelProblem::WeightTooPrecise
        } else if lower.contains("greater than") || lower.contains("at least") {
            ParcelProblem::WeightNotPositive
        } else if lower.contains("at most") {
            ParcelProblem::WeightTooHeavy
        } else {
            ParcelProblem::Weight
        }
    } else if lower.contains("zone") {
        ParcelProblem::Zone
    } else {
        ParcelProblem::Other
    }
}

impl Planner<'_> {
    fn last_assistant_text(&self) -> Option<&str> {
        self.messages
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::Assistant { text, .. } => Some(text.as_str()),
                _ => None,
            })
    }

    /// The person's earlier messages (newest first, the latest left out) back to the last
    /// turn that called `tool`: what they said about the request that is still open.
    fn open_request_messages(&self, tool: &str) -> Vec<Utterance> {
        let mut earlier = Vec::new();
        let mut seen_latest = false;
        for message in self.messages.iter().rev() {
            match message {
                ModelMessage::User { text } => {
                    if seen_latest {
                        earlier.push(Utterance::new(text));
                    }
                    seen_latest = true;
                }
                ModelMessage::Assistant { calls, .. } if calls.iter().any(|c| c.name == tool) => {
                    break;
                }
                _ => {}
            }
        }
        earlier
    }

    fn called_since_user(&self, tool: &str) -> bool {
        self.messages
            .iter()
            .rev()
            .take_while(|message| !matches!(message, ModelMessage::User { .. }))
            .any(|message| match message {
                ModelMessage::Assistant { calls, .. } => calls.iter().any(|call| call.name == tool),
                _ => false,
            })
    }

    /// The value of the latest successful result of `tool`.
    fn latest_ok(&self, tool: &str) -> Option<Value> {
        self.messages
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::ToolResult {
                    name,
                    content,
                    is_error,
                    ..
                } if name == tool => match outcome(content, *is_error) {
                    Outcome::Ok(value) => Some(value),
                    _ => None,
                },
                _ => None,
            })
    }

    // --- The person's own bookings.

    fn my_bookings(&self) -> Option<Reply> {
        let id = self.user.booking_id();
        let asked_which = self.last_assistant_text().is_some_and(|text| {
            text.contains(CANCEL_QUESTION_VI) || text.contains(CANCEL_QUESTION_EN)
        });
        let cancel = self.user.is_cancel() || (asked_which && id.is_some());
        if cancel {
            if let (Some(id), true) = (&id, self.offers(ToolName::CancelBooking)) {
                let text = match self.lang {
                    Lang::Vi => format!(
                        "Tôi chuẩn bị yêu cầu huỷ đặt chỗ {id}; bạn xác nhận trước khi có gì bị \
                         huỷ…"
                    ),
                    Lang::En => format!(
                        "Let me prepare the cancellation of booking {id}; you confirm before \
                         anything is cancelled…"
                    ),
                };
                let arguments = serde_json::json!({ "bookingId": id }).to_string();
                return Some(Reply::call(text, CANCEL_BOOKING, arguments));
            }
        }
        if (cancel || self.user.is_list_bookings()) && self.offers(ToolName::ListBookings) {
            return Some(Reply::call(
                self.lang.pick(
                    "Để tôi xem các đặt chỗ của bạn…",
                    "Let me look up your bookings…",
                ),
                LIST_BOOKINGS,
                "{}",
            ));
        }
        None
    }

    fn bookings_report(&self, value: &Value) -> String {
        let bookings: Vec<&Value> = value
            .get("bookings")
            .and_then(Value::as_array)
            .map(|list| list.iter().filter(|b| b.is_object()).collect())
            .unwrap_or_default();
        if bookings.is_empty() {
            let reason = text_field(value, "noResultsReason").map(trim_message);
            return match (self.lang, reason) {
                (Lang::Vi, Some(reason)) => format!("Bạn chưa có đặt chỗ nào: {reason}."),
                (Lang::Vi, None) => "Bạn chưa có đặt chỗ nào.".to_owned(),
                (Lang::En, Some(reason)) => format!("You have no bookings: {reason}."),
                (Lang::En, None) => "You have no bookings.".to_owned(),
            };
        }
        let count = bookings.len();
        let mut lines = vec![match self.lang {
            Lang::Vi => format!("Bạn có {count} đặt chỗ:"),
            Lang::En => format!("You have {count} booking(s):"),
        }];
        for booking in bookings.iter().take(LISTED_BOOKINGS) {
            lines.push(self.booking_line(booking));
        }
        if count > LISTED_BOOKINGS {
            lines.push("- …".to_owned());
        }
        let mut text = lines.join("\n");
        let open: Vec<&str> = bookings
            .iter()
            .filter(|b| text_field(b, "status") != Some("cancelled"))
            .filter_map(|b| text_field(b, "bookingId"))
            .collect();
        if self.user.is_cancel() && self.user.booking_id().is_none() {
            text.push_str("\n\n");
            text.push_str(&match (self.lang, open.first()) {
                (Lang::Vi, Some(example)) => format!(
                    "{CANCEL_QUESTION_VI} Hãy cho tôi mã đặt chỗ (ví dụ: \"huỷ đặt chỗ \
                     {example}\")."
                ),
                (Lang::En, Some(example)) => format!(
                    "{CANCEL_QUESTION_EN} Tell me its id (for example: \"cancel booking \
                     {example}\")."
                ),
                (Lang::Vi, None) => "Không có đặt chỗ nào đang giữ để huỷ.".to_owned(),
                (Lang::En, None) => {
                    "None of them is still held, so there is nothing to cancel.".to_owned()
                }
            });
        }
        text
    }

    fn booking_line(&self, booking: &Value) -> String {
        let id = text_field(booking, "bookingId").unwrap_or("?");
        let name = text_field(booking, "restaurantName").unwrap_or("?");
        let when = text_field(booking, "startsAt")
            .map(|at| {
                DateTime::parse_from_rfc3339(at)
                    .map(|at| at.format("%d/%m/%Y %H:%M").to_string())
                    .unwrap_or_else(|_| at.to_owned())
            })
            .unwrap_or_else(|| "?".to_owned());
        let size = booking
            .get("partySize")
            .and_then(Value::as_u64)
            .map_or_else(|| "?".to_owned(), |n| n.to_string());
        let status = text_field(booking, "status").unwrap_or("?");
        match self.lang {
            Lang::Vi => {
                let status = match status {
                    "confirmed" => "đã xác nhận",
                    "waitlisted" => "danh sách chờ, chưa có bàn",
                    "cancelled" => "đã huỷ",
                    other => other,
                };
                format!("- {id} — {name}, {when}, {size} người ({status})")
            }
            Lang::En => {
                let status = match status {
                    "waitlisted" => "waitlisted, no table held",
                    other => other,
                };
                format!("- {id} — {name}, {when}, party of {size} ({status})")
            }
        }
    }

    fn cancel_report(&self, value: &Value, arguments: &str) -> String {
        let booking = value.get("booking").unwrap_or(&Value::Null);
        let id = text_field(booking, "bookingId")
            .map(str::to_owned)
            .or_else(|| booking_id_argument(arguments))
            .unwrap_or_else(|| "?".to_owned());
        let name = text_field(booking, "restaurantName").unwrap_or("?");
        let already = value.get("alreadyCancelled").and_then(Value::as_bool) == Some(true);
        match (text_field(booking, "status"), already, self.lang) {
            (Some("cancelled"), false, Lang::Vi) => format!("Đã huỷ đặt chỗ {id} tại {name}."),
            (Some("cancelled"), false, Lang::En) => {
                format!("Booking {id} at {name} is cancelled.")
            }
            (Some("cancelled"), true, Lang::Vi) => {
                format!("Đặt chỗ {id} tại {name} đã được huỷ từ trước.")
            }
            (Some("cancelled"), true, Lang::En) => {
                format!("Booking {id} at {name} was already cancelled.")
            }
            (_, _, Lang::Vi) => format!(
                "Kết quả không cho thấy đặt chỗ {id} đã bị huỷ, nên tôi không xác nhận được là \
                 đã huỷ."
            ),
            (_, _, Lang::En) => format!(
                "The result does not show booking {id} as cancelled, so I can't confirm that it \
                 was cancelled."
            ),
        }
    }

    fn cancel_failure(&self, code: &str, quoted: &str, arguments: &str) -> String {
        let id = booking_id_argument(arguments);
        let booking = match (self.lang, &id) {
            (Lang::Vi, Some(id)) => format!("Đặt chỗ {id}"),
            (Lang::Vi, None) => "Đặt chỗ của bạn".to_owned(),
            (Lang::En, Some(id)) => format!("Booking {id}"),
            (Lang::En, None) => "Your booking".to_owned(),
        };
        match (code, self.lang) {
            ("DECLINED", Lang::Vi) => format!("{booking} vẫn giữ nguyên."),
            ("DECLINED", Lang::En) => format!("{booking} still stands."),
            (_, Lang::Vi) => format!("{booking} chưa được huỷ: {quoted}."),
            (_, Lang::En) => format!("{booking} was not cancelled: {quoted}."),
        }
    }

    // --- Gifts.

    fn gifts(&self) -> Option<Reply> {
        if !self.offered.gifts() {
            return None;
        }
        let relationship = self.user.relationship();
        if self.offers(ToolName::PrepareCheckout) {
            let suggested = self
                .latest_ok(SUGGEST_GIFTS)
                .map(|value| gifts_of(&value))
                .unwrap_or_default();
            let named = gift_named(&self.user, &suggested);
            let reference = self.user.item_reference();
            let refers = named.is_some() || reference.is_some();
            let buys = self.user.is_buy();
            let chooses = self.user.is_choice();
            // "mua món 1", "buy #2", "chọn món số 2", or just "món số 2" after a list; a
            // message naming someone ("quà cho con thứ hai") is a new request instead.
            let wants_listed = refers && (buys || relationship.is_none());
            // "mua" alone: a purchase, but of which gift?
            let wants_some = buys && relationship.is_none() && !self.user.is_gift_request();
            if wants_listed && !suggested.is_empty() {
                return Some(self.buy(&suggested, named, reference));
            }
            if (wants_listed && (buys || chooses)) || wants_some {
                return Some(if suggested.is_empty() {
                    Reply::text(self.lang.pick(
                        "Bạn muốn mua món quà nào? Tôi chưa gợi ý món nào — món quà dành cho ai?",
                        "Which gift would you like to buy? I haven't suggested any yet — who is \
                         the gift for?",
                    ))
                } else {
                    self.buy(&suggested, named, reference)
                });
            }
        }
        if !self.offers(ToolName::SuggestGifts) {
            return None;
        }
        let asked_recipient = self.last_assistant_text().is_some_and(|text| {
            let text = text.to_lowercase();
            text.contains(&RECIPIENT_QUESTION_VI.to_lowercase())
                || text.contains(&RECIPIENT_QUESTION_EN.to_lowercase())
        });
        // In the gift assistant's own conversation, "cho mẹ, thích trà" needs no "quà".
        let own_conversation = !self.offered.restaurant() && self.user.has_gift_criteria();
        if self.user.is_gift_request() || own_conversation || asked_recipient {
            return Some(self.suggest());
        }
        None
    }

    fn gift_criteria(&self) -> GiftCriteria {
        let mut criteria = GiftCriteria::of(&self.user);
        let said_who = criteria.relationship.is_some();
        for earlier in self.open_request_messages(SUGGEST_GIFTS) {
            criteria = criteria.or(GiftCriteria::of(&earlier));
        }
        if !said_who {
            // "dưới 500k thôi" refines the last suggestion: same person, same interests.
            let previous = self
                .proposed_calls()
                .rev()
                .find(|call| call.name == SUGGEST_GIFTS)
                .map(|call| GiftCriteria::from_arguments(&call.arguments));
            if let Some(previous) = previous {
                criteria = criteria.or(previous);
            }
        }
        criteria
    }

    fn suggest(&self) -> Reply {
        let criteria = self.gift_criteria();
        let Some(relationship) = criteria.relationship else {
            return Reply::text(self.lang.pick(RECIPIENT_QUESTION_VI, RECIPIENT_QUESTION_EN));
        };
        Reply::call(
            self.lang.pick(
                "Để tôi tìm vài món quà phù hợp…",
                "Let me find some gift ideas…",
            ),
            SUGGEST_GIFTS,
            criteria.to_json(relationship),
        )
    }

    fn buy(&self, gifts: &[Gift], named: Option<usize>, reference: Option<ItemRef>) -> Reply {
        let count = gifts.len();
        let index = match (named, reference) {
            (Some(index), _) => index,
            (None, Some(ItemRef::Nth(nth))) if (1..=count).contains(&nth) => nth - 1,
            (None, Some(ItemRef::Nth(_))) => {
                return Reply::text(match self.lang {
                    Lang::Vi => {
                        format!("Danh sách gợi ý chỉ có {count} món. Bạn muốn mua món số mấy?")
                    }
                    Lang::En => format!(
                        "The list only has {count} gift(s). Which number would you like to buy?"
                    ),
                });
            }
            (None, Some(ItemRef::Last)) => count - 1,
            (None, None) if count == 1 => 0,
            (None, None) => {
                return Reply::text(match self.lang {
                    Lang::Vi => format!(
                        "Bạn muốn mua món nào? Hãy chọn một số từ 1 đến {count} (ví dụ: \"mua \
                         món 1\")."
                    ),
                    Lang::En => format!(
                        "Which one would you like to buy? Pick a number from 1 to {count} (for \
                         example: \"buy #1\")."
                    ),
                });
            }
        };
        let gift = &gifts[index];
        let price = gift
            .price
            .map(|price| format!(" ({} ₫)", vnd(price)))
            .unwrap_or_default();
        let text = match self.lang {
            Lang::Vi => format!(
                "Tôi chuẩn bị bản nháp thanh toán (giả lập) cho {}{price}…",
                gift.name
            ),
            Lang::En => format!(
                "Let me prepare a (simulated) checkout draft for {}{price}…",
                gift.name
            ),
        };
        let arguments = serde_json::json!({ "gift_id": gift.id }).to_string();
        Reply::call(text, PREPARE_CHECKOUT, arguments)
    }

    fn gifts_report(&self, value: &Value) -> String {
        let gifts = gifts_of(value);
        if gifts.is_empty() {
            let reason = text_field(value, "no_results_reason").map(trim_message);
            return match (self.lang, reason) {
                (Lang::Vi, Some(reason)) => format!(
                    "Không tìm thấy món quà phù hợp: {reason}. Bạn thử đổi ngân sách hoặc sở \
                     thích nhé."
                ),
                (Lang::Vi, None) => "Không tìm thấy món quà phù hợp. Bạn thử đổi ngân sách hoặc \
                                     sở thích nhé."
                    .to_owned(),
                (Lang::En, Some(reason)) => format!(
                    "No gifts matched: {reason}. Try a different budget or other interests."
                ),
                (Lang::En, None) => {
                    "No gifts matched. Try a different budget or other interests.".to_owned()
                }
            };
        }
        let count = gifts.len();
        let mut lines = vec![match self.lang {
            Lang::Vi => format!("Tôi gợi ý {count} món quà:"),
            Lang::En => format!("Here are {count} gift idea(s):"),
        }];
        for (index, gift) in gifts.iter().enumerate() {
            let number = index + 1;
            lines.push(match gift.price {
                Some(price) => format!("{number}. {} — {} ₫", gift.name, vnd(price)),
                None => format!("{number}. {}", gift.name),
            });
        }
        let mut text = lines.join("\n");
        if self.offers(ToolName::PrepareCheckout) {
            text.push_str(self.lang.pick(
                "\n\nBạn muốn mua món nào? Ví dụ: \"mua món 1\".",
                "\n\nWhich one would you like to buy? For example: \"buy #1\".",
            ));
        }
        text
    }

    /// The draft, and the call that buys it (once per message of the person).
    fn draft_report(&self, value: &Value) -> (String, Option<Call>) {
        let Some(draft_id) = text_field(value, "draft_id") else {
            return (
                self.lang
                    .pick(
                        "Bản nháp thanh toán không có mã, nên chưa mua được gì.",
                        "The checkout draft has no id, so nothing was bought.",
                    )
                    .to_owned(),
                None,
            );
        };
        let name = text_field(value, "gift_name").unwrap_or("?");
        let amount = |key: &str| value.get(key).and_then(Value::as_u64).map(vnd);
        let cost = match (
            amount("price_vnd"),
            amount("delivery_vnd"),
            amount("total_vnd"),
        ) {
            (Some(price), Some(delivery), Some(total)) => match self.lang {
                Lang::Vi => format!(": {price} ₫ + phí giao {delivery} ₫ = {total} ₫"),
                Lang::En => format!(": {price} ₫ + delivery {delivery} ₫ = {total} ₫"),
            },
            (_, _, Some(total)) => match self.lang {
                Lang::Vi => format!(": tổng {total} ₫"),
                Lang::En => format!(": {total} ₫ in total"),
            },
            _ => String::new(),
        };
        let mut line = match self.lang {
            Lang::Vi => format!("Bản nháp thanh toán (giả lập) cho {name}{cost}."),
            Lang::En => format!("Simulated checkout draft for {name}{cost}."),
        };
        let buys = self.offers(ToolName::CreateCheckoutSession)
            && !self.called_since_user(CREATE_CHECKOUT_SESSION);
        if !buys {
            line.push_str(self.lang.pick(" Chưa mua gì cả.", " Nothing was bought."));
            return (line, None);
        }
        line.push_str(self.lang.pick(
            " Tôi tạo phiên thanh toán; bạn xác nhận trong biểu mẫu trước khi có gì xảy ra…",
            " Let me create the checkout session; you confirm in a form before anything \
             happens…",
        ));
        let arguments = serde_json::json!({
            "draft_id": draft_id,
            "idempotency_key": checkout_key(draft_id),
        })
        .to_string();
        let call = Call {
            name: CREATE_CHECKOUT_SESSION.to_owned(),
            arguments,
        };
        (line, Some(call))
    }

    /// The successful prepare_checkout result for `draft_id`, if the history has one.
    fn draft(&self, draft_id: &str) -> Option<Value> {
        self.messages
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::ToolResult {
                    name,
                    content,
                    is_error,
                    ..
                } if name == PREPARE_CHECKOUT => match outcome(content, *is_error) {
                    Outcome::Ok(value) if text_field(&value, "draft_id") == Some(draft_id) => {
                        Some(value)
                    }
                    _ => None,
                },
                _ => None,
            })
    }

    fn checkout_report(&self, value: &Value, arguments: &str) -> String {
        let Some(checkout_id) = text_field(value, "checkout_id") else {
            return self
                .lang
                .pick(
                    "Kết quả thanh toán không có mã thanh toán, nên tôi không thể xác nhận là \
                     đã mua.",
                    "The checkout result has no checkout id, so I can't confirm that anything \
                     was bought.",
                )
                .to_owned();
        };
        let draft_id = text_field(value, "draft_id")
            .map(str::to_owned)
            .or_else(|| {
                serde_json::from_str::<Value>(arguments)
                    .ok()
                    .and_then(|args| text_field(&args, "draft_id").map(str::to_owned))
            });
        let draft = draft_id.and_then(|id| self.draft(&id));
        let draft = draft.as_ref();
        let name = text_field(value, "gift_name")
            .or_else(|| draft.and_then(|d| text_field(d, "gift_name")))
            .unwrap_or("?");
        let total = value
            .get("total_vnd")
            .and_then(Value::as_u64)
            .or_else(|| draft.and_then(|d| d.get("total_vnd").and_then(Value::as_u64)))
            .map(|total| format!(": {} ₫", vnd(total)))
            .unwrap_or_default();
        match self.lang {
            Lang::Vi => format!(
                "Đã tạo thanh toán (giả lập) {checkout_id} cho {name}{total}. Không có tiền thật \
                 nào bị trừ."
            ),
            Lang::En => format!(
                "Created a simulated checkout {checkout_id} for {name}{total}. No real money was \
                 charged."
            ),
        }
    }

    fn checkout_failure(&self, code: &str, quoted: &str) -> String {
        match (code, self.lang) {
            ("DECLINED", Lang::Vi) => "Chưa mua gì cả.".to_owned(),
            ("DECLINED", Lang::En) => "Nothing was bought.".to_owned(),
            (_, Lang::Vi) => format!("Chưa mua được: {quoted}."),
            (_, Lang::En) => format!("Nothing was bought: {quoted}."),
        }
    }

    // --- Parcels.

    fn shipping(&self) -> Option<Reply> {
        if !self.offers(ToolName::ShippingQuote) {
            return None;
        }
        let asked = self.last_assistant_text().is_some_and(|text| {
            let text = text.to_lowercase();
            [
                "nội thành hay liên tỉnh",
                "bao nhiêu kg",
                "local or regional",
                "how many kilograms",
            ]
            .iter()
            .any(|question| text.contains(question))
        });
        let mut zone = self.user.zone();
        let mut weight = self.user.weight();
        if zone.is_none() && weight.is_none() && !self.user.is_shipping() && !asked {
            return None;
        }
        let refines = zone.is_some() || weight.is_some();
        for earlier in self.open_request_messages(SHIPPING_QUOTE) {
            zone = zone.or_else(|| earlier.zone());
            weight = weight.or_else(|| earlier.weight());
        }
        if refines {
            // "còn liên tỉnh thì sao?" after a quote: the same parcel, another zone.
            if let Some(previous) = self
                .proposed_calls()
                .rev()
                .find(|call| call.name == SHIPPING_QUOTE)
            {
                zone = zone.or_else(|| zone_argument(&previous.arguments));
                weight = weight.or_else(|| weight_argument(&previous.arguments));
            }
        }
        Some(match (zone, weight) {
            (Some(zone), Some(weight)) => {
                self.quote_call(format!(r#"{{"zone":"{zone}","weight_kg":{weight}}}"#))
            }
            (Some(_), None) => Reply::text(self.lang.pick(
                "Gói hàng nặng bao nhiêu kg?",
                "How many kilograms does the parcel weigh?",
            )),
            (None, Some(_)) => Reply::text(self.lang.pick(
                "Bạn gửi nội thành (trong thành phố) hay liên tỉnh (đi tỉnh khác)?",
                "Is it local (same city) or regional (another province)?",
            )),
            (None, None) => Reply::text(self.lang.pick(
                "Để báo giá, bạn cho tôi biết: gửi nội thành hay liên tỉnh, và gói hàng nặng bao \
                 nhiêu kg?",
                "To quote, tell me: is the parcel local or regional, and how many kilograms does \
                 it weigh?",
            )),
        })
    }

    fn quote_call(&self, arguments: String) -> Reply {
        Reply::call(
            self.lang
                .pick("Để tôi tính phí giao hàng…", "Let me get a shipping quote…"),
            SHIPPING_QUOTE,
            arguments,
        )
    }

    fn quote_report(&self, value: &Value) -> String {
        let Some(amount) = text_field(value, "amount") else {
            return self
                .lang
                .pick(
                    "Kết quả báo giá không có số tiền, nên tôi chưa có báo giá.",
                    "The quote came back without an amount, so I have no quote.",
                )
                .to_owned();
        };
        let currency = text_field(value, "currency").unwrap_or("DEMO");
        match self.lang {
            Lang::Vi => {
                format!("Phí giao hàng: {amount} {currency} (tiền giả lập, không phải tiền thật).")
            }
            Lang::En => {
                format!("Shipping fee: {amount} {currency} (a made-up currency, not real money).")
            }
        }
    }

    /// No quote: what to fix, and never an amount (the error's numbers are not quoted when
    /// the problem is known).
    fn quote_failure(&self, code: &str, message: &str, quoted: &str) -> String {
        if code == "DECLINED" {
            return self
                .lang
                .pick(
                    "Bạn đã từ chối nên chưa có báo giá nào.",
                    "You declined, so there is no quote.",
                )
                .to_owned();
        }
        if code != "VALIDATION_ERROR" {
            return match self.lang {
                Lang::Vi => {
                    format!("Chưa có báo giá phí giao hàng: {quoted}. Bạn thử lại sau nhé.")
                }
                Lang::En => {
                    format!("There is no shipping quote: {quoted}. Please try again later.")
                }
            };
        }
        let (vi, en) = match parcel_problem(message) {
            ParcelProblem::WeightMissing => (
                "Chưa có báo giá: còn thiếu cân nặng. Gói hàng nặng bao nhiêu kg?",
                "There is no quote: the weight is missing. How many kilograms does the parcel \
                 weigh?",
            ),
            ParcelProblem::WeightNotANumber => (
                "Chưa có báo giá: cân nặng phải là một con số kg (viết bằng số, không phải chữ). \
                 Bạn cho tôi biết lại cân nặng của gói hàng nhé.",
                "There is no quote: the weight must be a number of kilograms, not text. Please \
                 tell me the parcel's weight again.",
            ),
            ParcelProblem::WeightTooPrecise => (
                "Chưa có báo giá: cân nặng chỉ được lẻ tới gam (tối đa ba chữ số thập phân). Bạn \
                 làm tròn cân nặng giúp tôi nhé.",
                "There is no quote: the weight can have at most three decimals (whole grams). \
                 Please round it.",
            ),
            ParcelProblem::WeightNotPositive => (
                "Chưa có báo giá: cân nặng phải lớn hơn không. Gói hàng nặng bao nhiêu kg?",
                "There is no quote: the weight must be greater than zero. How many kilograms \
                 does the parcel weigh?",
            ),
            ParcelProblem::WeightTooHeavy => (
                "Chưa có báo giá: tôi chỉ báo giá gói hàng nặng tối đa một trăm kg. Bạn tách \
                 thành nhiều gói nhỏ hơn nhé.",
                "There is no quote: parcels can weigh at most one hundred kilograms. Try \
                 splitting it into smaller parcels.",
            ),
            ParcelProblem::Weight => (
                "Chưa có báo giá: cân nặng chưa hợp lệ. Bạn cho tôi biết cân nặng bằng số kg, \
                 lớn hơn không và không quá một trăm kg nhé.",
                "There is no quote: the weight was not valid. Please give it as a number of \
                 kilograms, greater than zero and at most one hundred.",
            ),
            ParcelProblem::Zone => (
                "Chưa có báo giá: khu vực phải là nội thành hoặc liên tỉnh. Bạn gửi đi đâu?",
                "There is no quote: the zone must be local or regional. Where is the parcel \
                 going?",
            ),
            ParcelProblem::Other => (
                "Chưa có báo giá: thông tin gửi đi chưa hợp lệ. Bạn cho tôi biết lại khu vực \
                 (nội thành hay liên tỉnh) và cân nặng (kg) nhé.",
                "There is no quote: the request was not valid. Please tell me the zone (local or \
                 regional) and the weight in kilograms again.",
            ),
        };
        self.lang.pick(vi, en).to_owned()
    }
}

fn condition_name(condition: &str, lang: Lang) -> &str {
    match (condition, lang) {
        ("sunny", Lang::Vi) => "nắng",
        ("partly-cloudy", Lang::Vi) => "ít mây",
        ("cloudy", Lang::Vi) => "nhiều mây",
        ("rain", Lang::Vi) => "mưa",
        ("storm", Lang::Vi) => "dông",
        ("sunny", Lang::En) => "sunny",
        ("partly-cloudy", Lang::En) => "partly cloudy",
        ("cloudy", Lang::En) => "cloudy",
        ("rain", Lang::En) => "rain",
        ("storm", Lang::En) => "thunderstorms",
        (other, _) => other,
    }
}

/// A tool's message, one line, bounded, without a trailing full stop (the reply adds one).
fn trim_message(message: &str) -> String {
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut bounded: String = line.chars().take(QUOTED_MESSAGE_CHARS).collect();
    if bounded.len() < line.len() {
        bounded.push('…');
    }
    bounded.trim_end_matches('.').to_owned()
}

/// The restaurant the message names, if any; the longest name wins ("Phở Thìn Bờ Hồ" over
/// "Phở Thìn"), then the earliest candidate.
fn name_match<'r>(
    utterance: &Utterance,
    candidates: impl Iterator<Item = &'r Restaurant>,
) -> Option<&'r Restaurant> {
    const GENERIC_PREFIXES: &str = "nha hang|quan|restaurant";
    let mut best: Option<(usize, &Restaurant)> = None;
    for restaurant in candidates {
        let name = Utterance::new(&restaurant.name);
        let words: Vec<&str> = name.tokens.iter().map(|t| t.folded.as_str()).collect();
        let mut spellings = vec![words.join(" ")];
        for prefix in alternatives(GENERIC_PREFIXES) {
            let prefix_len = prefix.split(' ').count();
            if words.len() > prefix_len && words[..prefix_len].join(" ") == prefix {
                let rest = words[prefix_len..].join(" ");
                if rest.len() >= 4 {
                    spellings.push(rest);
                }
            }
        }
        let matched = spellings
            .iter()
            .filter(|spelling| !spelling.is_empty())
            .filter(|spelling| utterance.find(spelling, |t| &t.folded).is_some())
            .map(|spelling| spelling.split(' ').count())
            .max();
        if let Some(length) = matched {
            if best.is_none_or(|(best_length, _)| length > best_length) {
                best = Some((length, restaurant));
            }
        }
    }
    best.map(|(_, restaurant)| restaurant)
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use serde_json::json;
    use shared::tools::Assistant;

    fn now() -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339("2026-11-29T10:00:00+07:00").unwrap()
    }

    fn model() -> OfflineModel {
        OfflineModel::new(Duration::ZERO).with_now(now())
    }

    /// The tools a conversation with `assistant` offers, as the agent builds them.
    fn tools_of(assistant: Assistant) -> Vec<ToolSpec> {
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

    fn request_for(assistant: Assistant, messages: Vec<ModelMessage>) -> ModelRequest {
        ModelRequest {
            system: "You are datban.".into(),
            messages,
            tools: tools_of(assistant).into(),
        }
    }

    /// A request of the restaurant assistant, the default one.
    fn request(messages: Vec<ModelMessage>) -> ModelRequest {
        request_for(Assistant::Restaurant, messages)
    }

    fn user(text: &str) -> ModelMessage {
        ModelMessage::User { text: text.into() }
    }

    fn tool_result(call_id: &str, name: &str, content: &Value) -> ModelMessage {
        ModelMessage::ToolResult {
            call_id: call_id.into(),
            name: name.into(),
            content: content.to_string(),
            is_error: content["ok"] == json!(false),
        }
    }

    /// One planned turn, reassembled from its events the way the agent loop does.
    #[derive(Debug)]
    struct Turn {
        text: String,
        text_pieces: Vec<String>,
        calls: Vec<ProposedCall>,
        argument_pieces: Vec<String>,
        finish: FinishReason,
    }

    impl Turn {
        fn only_call(&self) -> &ProposedCall {
            assert_eq!(self.calls.len(), 1, "{self:?}");
            &self.calls[0]
        }

        fn assistant(&self) -> ModelMessage {
            ModelMessage::Assistant {
                text: self.text.clone(),
                calls: self.calls.clone(),
            }
        }
    }

    fn assemble(events: &[ModelEvent]) -> Turn {
        let mut turn = Turn {
            text: String::new(),
            text_pieces: Vec::new(),
            calls: Vec::new(),
            argument_pieces: Vec::new(),
            finish: FinishReason::Other,
        };
        let mut open: Option<ProposedCall> = None;
        let (last, body) = events.split_last().expect("a turn has events");
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
                    let call = open.as_mut().expect("delta inside a call");
                    assert_eq!(&call.id, id);
                    call.arguments.push_str(delta);
                    turn.argument_pieces.push(delta.clone());
                }
                ModelEvent::ToolCallEnd { id } => {
                    let call = open.take().expect("end closes a call");
                    assert_eq!(&call.id, id);
                    turn.calls.push(call);
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

    fn plan(messages: Vec<ModelMessage>) -> Turn {
        assemble(&model().plan_turn(&request(messages)))
    }

    fn plan_for(assistant: Assistant, messages: Vec<ModelMessage>) -> Turn {
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

    fn arguments(call: &ProposedCall) -> Value {
        serde_json::from_str(&call.arguments)
            .unwrap_or_else(|error| panic!("{} is not JSON: {error}", call.arguments))
    }

    fn hanoi_search() -> Value {
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

    /// A conversation that searched Hà Nội, then `text` from the person.
    fn after_search(text: &str) -> Vec<ModelMessage> {
        let mut history = vec![user("Tìm nhà hàng ở Hà Nội")];
        let search = plan(history.clone());
        assert_eq!(search.only_call().name, SEARCH_RESTAURANTS);
        history.push(search.assistant());
        history.push(tool_result(
            &search.only_call().id,
            SEARCH_RESTAURANTS,
            &hanoi_search(),
        ));
        let listing = plan(history.clone());
        assert!(listing.calls.is_empty());
        history.push(listing.assistant());
        history.push(user(text));
        history
    }

    fn validation_error(message: &str) -> Value {
        json!({"ok": false, "error": {
            "code": "VALIDATION_ERROR", "message": message, "retryable": false}})
    }

    fn booking_ok(status: &str) -> Value {
        json!({"ok": true, "bookingId": "BK-7Q2X", "status": status,
               "restaurantId": "hn-cha-ca-thang-long", "restaurantName": "Chả Cá Thăng Long",
               "partySize": 4, "startsAt": "2026-11-30T19:00:00+07:00"})
    }

    /// The person asks to book without a party size; the model proposes the call anyway.
    fn incident_history() -> (Vec<ModelMessage>, ProposedCall) {
        let mut history = after_search("đặt bàn ở Chả Cá Thăng Long tối mai lúc 19:00");
        let booking = plan(history.clone());
        let call = booking.only_call().clone();
        history.push(booking.assistant());
        (history, call)
    }

    fn reply_to(result: &Value) -> Turn {
        let (mut history, call) = incident_history();
        history.push(tool_result(&call.id, CREATE_BOOKING, result));
        plan(history)
    }

    #[test]
    fn vietnamese_weather_for_one_city_is_one_call() {
        let turn = plan(vec![user("Thời tiết Hà Nội hôm nay thế nào?")]);
        let call = turn.only_call();
        assert_eq!(call.name, GET_WEATHER);
        assert_eq!(call.id, "call_1_0");
        assert_eq!(call.arguments, r#"{"city":"Hà Nội"}"#);
        assert_eq!(arguments(call), json!({"city": "Hà Nội"}));
        assert_eq!(turn.text, "Để tôi xem thời tiết ở Hà Nội…");
        assert_eq!(turn.finish, FinishReason::ToolCalls);
    }

    #[test]
    fn two_cities_are_two_calls_in_one_turn() {
        let turn = plan(vec![user("Thời tiết Đà Nẵng và ha noi 3 ngày tới?")]);
        assert_eq!(turn.calls.len(), 2, "{turn:?}");
        assert_eq!(turn.calls[0].id, "call_1_0");
        assert_eq!(turn.calls[1].id, "call_1_1");
        assert!(turn.calls.iter().all(|call| call.name == GET_WEATHER));
        assert_eq!(
            arguments(&turn.calls[0]),
            json!({"city": "Đà Nẵng", "days": 3})
        );
        assert_eq!(
            arguments(&turn.calls[1]),
            json!({"city": "Hà Nội", "days": 3})
        );
        assert_eq!(turn.finish, FinishReason::ToolCalls);
    }

    #[test]
    fn english_weather_uses_canonical_city_names() {
        let turn = plan(vec![user(
            "Will it rain in Saigon or Hue in the next 2 days?",
        )]);
        assert_eq!(turn.calls.len(), 2);
        assert_eq!(
            arguments(&turn.calls[0]),
            json!({"city": "TP. Hồ Chí Minh", "days": 2})
        );
        assert_eq!(arguments(&turn.calls[1]), json!({"city": "Huế", "days": 2}));
        assert!(
            turn.text.starts_with("Let me check the weather in"),
            "{}",
            turn.text
        );
    }

    #[test]
    fn weather_without_a_city_asks_for_one() {
        let turn = plan(vec![user("Trời có mưa không?")]);
        assert!(turn.calls.is_empty());
        assert_eq!(turn.finish, FinishReason::Stop);
        assert!(turn
            .text
            .starts_with("Bạn muốn xem thời tiết ở thành phố nào?"));
    }

    #[test]
    fn a_city_named_nang_is_not_sunshine() {
        let turn = plan(vec![user("Tìm nhà hàng hải sản ở Đà Nẵng cho 6 người")]);
        let call = turn.only_call();
        assert_eq!(call.name, SEARCH_RESTAURANTS);
        assert_eq!(
            arguments(call),
            json!({"city": "Đà Nẵng", "cuisine": "hải sản", "partySize": 6})
        );
    }

    #[test]
    fn search_takes_cuisine_party_size_and_date() {
        let turn = plan(vec![user("Gợi ý quán phở ở Hà Nội cho 4 người ngày mai")]);
        assert_eq!(
            arguments(turn.only_call()),
            json!({"city": "Hà Nội", "cuisine": "phở", "partySize": 4, "date": "2026-11-30"})
        );
        let english = plan(vec![user(
            "Find Italian food in Da Lat for 3 on 2026-12-24",
        )]);
        assert_eq!(
            arguments(english.only_call()),
            json!({"city": "Đà Lạt", "cuisine": "Italian", "partySize": 3, "date": "2026-12-24"})
        );
    }

    #[test]
    fn words_that_only_look_like_cuisines_are_not_cuisines() {
        // "gợi ý" is "suggest", "phố" is "street", "chủ nhật" is "Sunday".
        let turn = plan(vec![user("Gợi ý nhà hàng ở phố cổ Hà Nội chủ nhật")]);
        assert_eq!(arguments(turn.only_call()), json!({"city": "Hà Nội"}));
        let japanese = plan(vec![user("tìm nhà hàng Nhật ở Huế")]);
        assert_eq!(
            arguments(japanese.only_call()),
            json!({"city": "Huế", "cuisine": "Nhật"})
        );
    }

    #[test]
    fn search_without_a_city_asks_for_one() {
        let turn = plan(vec![user("find me a vegetarian restaurant")]);
        assert!(turn.calls.is_empty());
        assert!(turn
            .text
            .starts_with("Which city should I look for restaurants in?"));
    }

    #[test]
    fn search_results_are_listed_with_address_cuisine_price_and_slots() {
        let turn = plan(after_search("x")[..3].to_vec());
        assert_eq!(
            turn.text,
            "Tôi tìm được 2 nhà hàng:\n\
             - Bún Chả Hương Liên — 24 Lê Văn Hưu, Hai Bà Trưng (bún chả, ₫)\n\
             - Chả Cá Thăng Long — 21 Đường Thành, Hoàn Kiếm (chả cá, ₫₫) · giờ còn trống: \
             18:00, 19:30"
        );
        assert_eq!(turn.finish, FinishReason::Stop);
    }

    #[test]
    fn an_empty_search_gives_the_reason_and_suggests_other_criteria() {
        let history = vec![
            user("Find seafood in Hue"),
            ModelMessage::Assistant {
                text: String::new(),
                calls: vec![ProposedCall {
                    id: "call_1_0".into(),
                    name: SEARCH_RESTAURANTS.into(),
                    arguments: r#"{"city":"Huế","cuisine":"seafood"}"#.into(),
                }],
            },
            tool_result(
                "call_1_0",
                SEARCH_RESTAURANTS,
                &json!({"ok": true, "restaurants": [],
                        "noResultsReason": "No seafood restaurants in Huế."}),
            ),
        ];
        let turn = plan(history);
        assert_eq!(
            turn.text,
            "No restaurants matched: No seafood restaurants in Huế. Try changing the criteria \
             (city, cuisine, party size or date)."
        );
        assert!(turn.calls.is_empty());
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
        let turn = reply_to(&validation_error(
            "Invalid arguments: partySize: required field is missing",
        ));
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
            &validation_error("Invalid arguments: partySize: required field is missing"),
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
            &validation_error("Invalid arguments: partySize: required field is missing"),
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
    fn english_booking_without_a_search_searches_then_books_the_first_result() {
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
            .starts_with("I found 2 restaurant(s):\n- Bún Chả Hương Liên"));
        assert!(booking
            .text
            .ends_with("Let me prepare a booking request for Bún Chả Hương Liên…"));
        assert_eq!(booking.only_call().id, "call_2_0");
        assert_eq!(
            arguments(booking.only_call()),
            json!({"restaurantId": "hn-bun-cha-huong-lien", "partySize": 2,
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
            "Invalid arguments: restaurantId: must not be blank",
        ));
        assert_eq!(
            turn.text,
            "Chưa có bàn nào được đặt: Invalid arguments: restaurantId: must not be blank."
        );
        let turn = reply_to(&validation_error(
            "Invalid arguments: startsAt: 2026-11-01T19:00:00+07:00 is in the past",
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
            "Xin lỗi, tôi không đặt được bàn: The booking service timed out. Chưa có bàn nào \
             được đặt."
        );
        assert!(turn.calls.is_empty());
    }

    #[test]
    fn weather_results_are_one_sentence_per_city_in_call_order() {
        let turn_one = plan(vec![user("Thời tiết Hà Nội và Huế 2 ngày")]);
        let mut history = vec![user("Thời tiết Hà Nội và Huế 2 ngày"), turn_one.assistant()];
        // Results arrive in the opposite order; the reply follows the calls.
        history.push(tool_result(
            "call_1_1",
            GET_WEATHER,
            &json!({"ok": true, "city": "Huế", "days": [
                {"date": "2026-11-29", "condition": "rain", "tempMinC": 21, "tempMaxC": 26,
                 "precipitationChance": 80}]}),
        ));
        history.push(tool_result(
            "call_1_0",
            GET_WEATHER,
            &json!({"ok": true, "city": "Hà Nội", "days": [
                {"date": "2026-11-29", "condition": "sunny", "tempMinC": 18, "tempMaxC": 25,
                 "precipitationChance": 10},
                {"date": "2026-11-30", "condition": "partly-cloudy", "tempMinC": 17,
                 "tempMaxC": 23, "precipitationChance": 20}]}),
        ));
        let turn = plan(history);
        assert_eq!(
            turn.text,
            "Thời tiết Hà Nội: 29/11 nắng, 18–25°C, khả năng mưa 10%; 30/11 ít mây, 17–23°C, \
             khả năng mưa 20%.\n\nThời tiết Huế: 29/11 mưa, 21–26°C, khả năng mưa 80%."
        );
        assert_eq!(turn.finish, FinishReason::Stop);
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
                "Sorry, I tried to use a tool that doesn't exist (launchRocket): Unknown tool"
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
                &validation_error(
                    "Invalid arguments: arguments are not valid JSON (expected value)",
                ),
            ),
        ]);
        assert!(after.calls.is_empty());
        assert_eq!(
            after.text,
            "Chưa có bàn nào được đặt: Invalid arguments: arguments are not valid JSON (expected \
             value)."
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
            "Sorry, I couldn't get the weather forecast for #fail: The weather service failed."
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
                &validation_error(
                    "Invalid arguments: partySize: expected integer, received string",
                ),
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
    fn text_is_streamed_in_small_word_pieces() {
        let turn = plan(vec![user("xin chào")]);
        assert!(turn.text_pieces.len() > 10, "{:?}", turn.text_pieces);
        assert_eq!(turn.text_pieces.concat(), turn.text);
        for piece in &turn.text_pieces {
            let words = piece.split_whitespace().count();
            assert!((1..=3).contains(&words), "{piece:?}");
        }
        assert_eq!(text_pieces(" a b  c d\ne f"), [" a b  ", "c ", "d\ne f"]);
        assert!(text_pieces("").is_empty());
    }

    #[test]
    fn arguments_are_streamed_in_small_pieces_at_char_boundaries() {
        let turn = plan(vec![user("Thời tiết Đà Lạt, Đà Nẵng 5 ngày")]);
        assert_eq!(turn.calls.len(), 2);
        assert!(
            turn.argument_pieces.len() >= 6,
            "{:?}",
            turn.argument_pieces
        );
        for piece in &turn.argument_pieces {
            assert!((1..=8).contains(&piece.len()), "{piece:?}");
        }
        let all: String = turn.calls.iter().map(|c| c.arguments.as_str()).collect();
        assert_eq!(turn.argument_pieces.concat(), all);
        assert_eq!(argument_pieces("ẫẫẫẫ"), ["ẫ", "ẫẫ", "ẫ"]);
    }

    #[test]
    fn language_detection() {
        assert_eq!(Utterance::new("weather in Hà Nội").language(), Lang::En);
        assert_eq!(Utterance::new("Hà Nội").language(), Lang::Vi);
        assert_eq!(Utterance::new("toi muon dat ban").language(), Lang::Vi);
        assert_eq!(Utterance::new("book for 4").language(), Lang::En);
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

    #[tokio::test]
    async fn streaming_with_no_delay_yields_the_planned_events() {
        let messages = after_search("đặt bàn ở Chả Cá Thăng Long tối mai lúc 19:00");
        let planned = model().plan_turn(&request(messages.clone()));
        let streamed: Vec<Result<ModelEvent, _>> =
            model().stream_turn(request(messages)).collect().await;
        let streamed: Vec<ModelEvent> = streamed.into_iter().map(Result::unwrap).collect();
        assert_eq!(streamed, planned);
        assert!(planned.len() > 5);
    }

    // --- The person's own bookings.

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

    fn failed(code: &str, message: &str) -> Value {
        json!({"ok": false, "error": {"code": code, "message": message, "retryable": false}})
    }

    /// What the server puts in the history when the person declines a call.
    fn declined() -> Value {
        failed(
            "DECLINED",
            "The user declined this call, so nothing was done. Ask what they would like to \
             change.",
        )
    }

    /// `text`, a call the model planned for it, that call's result, and the reply to it.
    fn after_result(
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

    fn my_bookings() -> Value {
        json!({"ok": true, "bookings": [
            {"bookingId": "BK-1A2B3C4D", "restaurantName": "Chả Cá Thăng Long", "partySize": 4,
             "startsAt": "2026-11-30T19:00:00+07:00", "status": "confirmed"},
            {"bookingId": "BK-5E6F7G8H", "restaurantName": "Bún Chả Hương Liên",
             "partySize": 2, "startsAt": "2026-12-01T12:00:00+07:00", "status": "waitlisted"}
        ]})
    }

    fn cancelled(already: bool) -> Value {
        json!({"ok": true, "alreadyCancelled": already, "booking": {
            "bookingId": "BK-1A2B3C4D", "restaurantName": "Chả Cá Thăng Long", "partySize": 4,
            "startsAt": "2026-11-30T19:00:00+07:00", "status": "cancelled"}})
    }

    #[test]
    fn my_bookings_are_listed_in_both_languages() {
        for text in [
            "Đặt chỗ của tôi",
            "xem đặt chỗ",
            "Cho tôi xem các đặt chỗ",
            "dat cho cua toi",
            "my bookings",
            "list my bookings",
            "Show my bookings please",
        ] {
            let turn = plan(vec![user(text)]);
            let call = turn.only_call();
            assert_eq!(call.name, LIST_BOOKINGS, "{text}");
            assert_eq!(call.arguments, "{}", "{text}");
        }
        let (_, reply) = after_result(
            Assistant::Restaurant,
            "Đặt chỗ của tôi",
            LIST_BOOKINGS,
            &my_bookings(),
        );
        assert_eq!(
            reply.text,
            "Bạn có 2 đặt chỗ:\n\
             - BK-1A2B3C4D — Chả Cá Thăng Long, 30/11/2026 19:00, 4 người (đã xác nhận)\n\
             - BK-5E6F7G8H — Bún Chả Hương Liên, 01/12/2026 12:00, 2 người (danh sách chờ, \
             chưa có bàn)"
        );
        assert!(reply.calls.is_empty());
        assert_eq!(reply.finish, FinishReason::Stop);
        let (_, reply) = after_result(
            Assistant::Restaurant,
            "list my bookings",
            LIST_BOOKINGS,
            &my_bookings(),
        );
        assert!(
            reply.text.starts_with(
                "You have 2 booking(s):\n- BK-1A2B3C4D — Chả Cá Thăng Long, 30/11/2026 19:00, \
                 party of 4 (confirmed)"
            ),
            "{}",
            reply.text
        );
    }

    #[test]
    fn no_bookings_gives_the_reason() {
        let empty = json!({"ok": true, "bookings": [],
                           "noResultsReason": "You have no upcoming bookings."});
        let (_, reply) = after_result(Assistant::Restaurant, "xem đặt chỗ", LIST_BOOKINGS, &empty);
        assert_eq!(
            reply.text,
            "Bạn chưa có đặt chỗ nào: You have no upcoming bookings."
        );
        let (_, reply) = after_result(Assistant::Restaurant, "my bookings", LIST_BOOKINGS, &empty);
        assert_eq!(
            reply.text,
            "You have no bookings: You have no upcoming bookings."
        );
        let (_, reply) = after_result(
            Assistant::Restaurant,
            "my bookings",
            LIST_BOOKINGS,
            &failed("UPSTREAM_UNAVAILABLE", "The booking database is down."),
        );
        assert_eq!(
            reply.text,
            "Sorry, I couldn't list your bookings: The booking database is down."
        );
    }

    #[test]
    fn cancelling_with_an_id_in_any_spelling_cancels_that_booking() {
        for (text, id) in [
            ("Huỷ đặt chỗ BK-1A2B3C4D", "BK-1A2B3C4D"),
            ("Hủy đặt chỗ BK-1A2B3C4D", "BK-1A2B3C4D"),
            ("hủy đặt chỗ bk-1a2b3c4d nhé", "BK-1A2B3C4D"),
            ("huy dat cho BK-1A2B3C4D", "BK-1A2B3C4D"),
            ("huỷ BK-9Z8Y7X6W", "BK-9Z8Y7X6W"),
            ("cancel booking bk-7q2x3y4z", "BK-7Q2X3Y4Z"),
            ("Please cancel my booking BK-1A2B3C4D.", "BK-1A2B3C4D"),
        ] {
            let turn = plan(vec![user(text)]);
            let call = turn.only_call();
            assert_eq!(call.name, CANCEL_BOOKING, "{text}");
            assert_eq!(
                call.arguments,
                format!(r#"{{"bookingId":"{id}"}}"#),
                "{text}"
            );
            assert_eq!(turn.finish, FinishReason::ToolCalls);
        }
        let turn = plan(vec![user("Huỷ đặt chỗ BK-1A2B3C4D")]);
        assert_eq!(
            turn.text,
            "Tôi chuẩn bị yêu cầu huỷ đặt chỗ BK-1A2B3C4D; bạn xác nhận trước khi có gì bị huỷ…"
        );
    }

    #[test]
    fn cancelling_without_an_id_lists_the_bookings_then_asks_which() {
        let (mut history, reply) = after_result(
            Assistant::Restaurant,
            "Huỷ đặt chỗ của tôi",
            LIST_BOOKINGS,
            &my_bookings(),
        );
        assert!(reply.calls.is_empty());
        assert!(
            reply.text.ends_with(
                "Bạn muốn huỷ đặt chỗ nào? Hãy cho tôi mã đặt chỗ (ví dụ: \"huỷ đặt chỗ \
                 BK-1A2B3C4D\")."
            ),
            "{}",
            reply.text
        );
        assert!(!reply.text.contains("Đã huỷ"), "{}", reply.text);
        // The bare id answers the question.
        history.push(reply.assistant());
        history.push(user("BK-5E6F7G8H"));
        let cancel = plan(history);
        assert_eq!(cancel.only_call().name, CANCEL_BOOKING);
        assert_eq!(
            cancel.only_call().arguments,
            r#"{"bookingId":"BK-5E6F7G8H"}"#
        );

        let (_, reply) = after_result(
            Assistant::Restaurant,
            "cancel my reservation",
            LIST_BOOKINGS,
            &my_bookings(),
        );
        assert!(
            reply.text.ends_with(
                "Which booking would you like to cancel? Tell me its id (for example: \"cancel \
                 booking BK-1A2B3C4D\")."
            ),
            "{}",
            reply.text
        );
    }

    #[test]
    fn a_cancellation_is_reported_only_when_the_result_says_cancelled() {
        let cases = [
            (
                "Huỷ đặt chỗ BK-1A2B3C4D",
                cancelled(false),
                "Đã huỷ đặt chỗ BK-1A2B3C4D tại Chả Cá Thăng Long.",
            ),
            (
                "Huỷ đặt chỗ BK-1A2B3C4D",
                cancelled(true),
                "Đặt chỗ BK-1A2B3C4D tại Chả Cá Thăng Long đã được huỷ từ trước.",
            ),
            (
                "hủy đặt chỗ BK-1A2B3C4D",
                declined(),
                "Đặt chỗ BK-1A2B3C4D vẫn giữ nguyên.",
            ),
            (
                "huy dat cho BK-1A2B3C4D",
                failed("NOT_FOUND", "No booking BK-1A2B3C4D."),
                "Đặt chỗ BK-1A2B3C4D chưa được huỷ: No booking BK-1A2B3C4D.",
            ),
            (
                "cancel booking BK-1A2B3C4D",
                cancelled(false),
                "Booking BK-1A2B3C4D at Chả Cá Thăng Long is cancelled.",
            ),
            (
                "cancel booking BK-1A2B3C4D",
                declined(),
                "Booking BK-1A2B3C4D still stands.",
            ),
            (
                "cancel booking BK-1A2B3C4D",
                failed("UPSTREAM_TIMEOUT", "The booking service timed out."),
                "Booking BK-1A2B3C4D was not cancelled: The booking service timed out.",
            ),
            (
                "cancel booking BK-1A2B3C4D",
                json!({"ok": true, "booking": {"bookingId": "BK-1A2B3C4D",
                       "status": "confirmed"}}),
                "The result does not show booking BK-1A2B3C4D as cancelled, so I can't confirm \
                 that it was cancelled.",
            ),
        ];
        for (text, result, expected) in cases {
            let (_, reply) = after_result(Assistant::Restaurant, text, CANCEL_BOOKING, &result);
            assert_eq!(reply.text, expected, "{text} → {result}");
            assert!(reply.calls.is_empty());
            assert_eq!(reply.finish, FinishReason::Stop);
        }
    }

    // --- Gifts.

    fn gift_ideas() -> Value {
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

    fn draft(draft_id: &str) -> Value {
        json!({"ok": true, "draft_id": draft_id, "gift_id": "g-garden-kit",
               "gift_name": "Bộ dụng cụ làm vườn mini", "price_vnd": 320000,
               "delivery_vnd": 30000, "total_vnd": 350000, "fictional": true})
    }

    fn checkout(draft_id: &str) -> Value {
        json!({"ok": true, "checkout_id": "chk_9P3Q", "draft_id": draft_id,
               "gift_name": "Bộ dụng cụ làm vườn mini", "total_vnd": 350000,
               "payment_reference": "FAKE-PAY-0001", "fictional": true})
    }

    /// A gifts conversation that got `gift_ideas()`, then `text` from the person.
    fn after_gift_ideas(text: &str) -> Vec<ModelMessage> {
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
    fn gift_requests_become_suggest_gifts_arguments() {
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
            let input: shared::tools::SuggestGiftsInput =
                serde_json::from_str(&call.arguments).unwrap();
            assert_eq!(serde_json::to_value(input).unwrap(), expected, "{text}");
        }
        let turn = plan_for(Assistant::Gifts, vec![user("Gợi ý quà cho mẹ")]);
        assert_eq!(turn.text, "Để tôi tìm vài món quà phù hợp…");
        let turn = plan_for(Assistant::Gifts, vec![user("gift for my mom")]);
        assert_eq!(turn.text, "Let me find some gift ideas…");
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
            &validation_error("Invalid arguments: budget_min: must not be greater than budget_max"),
        );
        assert_eq!(
            reply.text,
            "Sorry, I couldn't get gift ideas: Invalid arguments: budget_min: must not be \
             greater than budget_max."
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
    fn a_purchase_prepares_a_draft_then_commits_it_with_a_key_from_the_draft() {
        let (history, call) = purchase("mua món 2", "drf_7K2M");
        assert_eq!(call.name, CREATE_CHECKOUT_SESSION);
        assert_eq!(
            call.arguments,
            r#"{"draft_id":"drf_7K2M","idempotency_key":"checkout-drf_7K2M"}"#
        );
        let input: shared::tools::CreateCheckoutSessionInput =
            serde_json::from_str(&call.arguments).unwrap();
        assert_eq!(input.idempotency_key, "checkout-drf_7K2M");
        let ModelMessage::Assistant { text, .. } = history.last().unwrap() else {
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
                "Chưa mua được: This draft was already bought.",
            ),
            (
                "buy #2",
                failed(
                    "IDEMPOTENCY_KEY_IN_USE",
                    "A checkout with this key is still running.",
                ),
                "Nothing was bought: A checkout with this key is still running.",
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
            &failed("NOT_FOUND", "No gift g-garden-kit."),
        ));
        let reply = plan_for(Assistant::Gifts, history);
        assert_eq!(reply.text, "Chưa mua được: No gift g-garden-kit.");
        assert!(reply.calls.is_empty());
    }

    // --- Parcels.

    #[test]
    fn a_quote_keeps_the_weight_as_typed() {
        for (text, expected) in [
            (
                "Phí giao hàng 2 kg nội thành?",
                r#"{"zone":"local","weight_kg":2}"#,
            ),
            (
                "gửi 2kg trong thành phố",
                r#"{"zone":"local","weight_kg":2}"#,
            ),
            (
                "Gửi 2,5 kg đi liên tỉnh",
                r#"{"zone":"regional","weight_kg":2.5}"#,
            ),
            ("2.5kg ngoại tỉnh", r#"{"zone":"regional","weight_kg":2.5}"#),
            (
                "gói 0.75 ký, tỉnh khác",
                r#"{"zone":"regional","weight_kg":0.75}"#,
            ),
            ("3 cân nội thành", r#"{"zone":"local","weight_kg":3}"#),
            (
                "gui 1,25 kg noi thanh",
                r#"{"zone":"local","weight_kg":1.25}"#,
            ),
            (
                "12.345 kg lien tinh",
                r#"{"zone":"regional","weight_kg":12.345}"#,
            ),
            ("0,30 kg nội thành", r#"{"zone":"local","weight_kg":0.30}"#),
            (
                "Quote a 2.3 kg parcel, local",
                r#"{"zone":"local","weight_kg":2.3}"#,
            ),
            ("ship 7 kg regional", r#"{"zone":"regional","weight_kg":7}"#),
        ] {
            let turn = plan_for(Assistant::Shipping, vec![user(text)]);
            let call = turn.only_call();
            assert_eq!(call.name, SHIPPING_QUOTE, "{text}");
            assert_eq!(call.arguments, expected, "{text}");
            // The exact text reads back as the exact grams.
            let input: shared::tools::ShippingQuoteInput =
                serde_json::from_str(&call.arguments).unwrap();
            let typed = expected.rsplit(':').next().unwrap().trim_end_matches('}');
            assert_eq!(
                input.weight_kg,
                shared::tools::Kilograms::parse(typed).unwrap(),
                "{text}"
            );
        }
        let turn = plan_for(Assistant::Shipping, vec![user("2 kg nội thành")]);
        assert_eq!(turn.text, "Để tôi tính phí giao hàng…");
    }

    #[test]
    fn a_quote_without_zone_or_weight_asks_for_it() {
        for (text, question) in [
            (
                "Gửi 2 kg",
                "Bạn gửi nội thành (trong thành phố) hay liên tỉnh (đi tỉnh khác)?",
            ),
            (
                "Phí giao hàng nội thành bao nhiêu?",
                "Gói hàng nặng bao nhiêu kg?",
            ),
            (
                "báo giá giao hàng",
                "Để báo giá, bạn cho tôi biết: gửi nội thành hay liên tỉnh, và gói hàng nặng bao \
                 nhiêu kg?",
            ),
            (
                "ship a 2 kg parcel",
                "Is it local (same city) or regional (another province)?",
            ),
            (
                "local shipping quote please",
                "How many kilograms does the parcel weigh?",
            ),
        ] {
            let turn = plan_for(Assistant::Shipping, vec![user(text)]);
            assert!(turn.calls.is_empty(), "{text}: {turn:?}");
            assert_eq!(turn.text, question, "{text}");
        }
        // The answer completes the earlier request, with the weight still as typed.
        let mut history = vec![user("Gửi 2,5 kg")];
        let question = plan_for(Assistant::Shipping, history.clone());
        history.push(question.assistant());
        history.push(user("liên tỉnh"));
        assert_eq!(
            plan_for(Assistant::Shipping, history).only_call().arguments,
            r#"{"zone":"regional","weight_kg":2.5}"#
        );
    }

    #[test]
    fn after_a_quote_the_same_parcel_can_be_quoted_for_another_zone_or_weight() {
        let quote = json!({"ok": true, "zone": "local", "weight_kg": 2.5, "amount": "7.50",
                           "currency": "DEMO", "fictional": true});
        let (mut history, reply) = after_result(
            Assistant::Shipping,
            "Gửi 2,5 kg nội thành",
            SHIPPING_QUOTE,
            &quote,
        );
        history.push(reply.assistant());
        let mut other_zone = history.clone();
        other_zone.push(user("còn liên tỉnh thì sao?"));
        assert_eq!(
            plan_for(Assistant::Shipping, other_zone)
                .only_call()
                .arguments,
            r#"{"zone":"regional","weight_kg":2.5}"#
        );
        history.push(user("5 kg thì sao?"));
        assert_eq!(
            plan_for(Assistant::Shipping, history).only_call().arguments,
            r#"{"zone":"local","weight_kg":5}"#
        );
        assert_eq!(
            weight_argument(r#"{"zone":"local","weight_kg":0.750}"#).as_deref(),
            Some("0.750")
        );
        assert_eq!(weight_argument(BAD_WEIGHT_ARGUMENTS), None);
        assert_eq!(weight_argument(ZERO_WEIGHT_ARGUMENTS), None);
    }

    #[test]
    fn a_quote_reports_the_amount_as_demo_money() {
        let quote = json!({"ok": true, "zone": "regional", "weight_kg": 2.5, "amount": "12.50",
                           "currency": "DEMO", "fictional": true});
        let (_, reply) = after_result(
            Assistant::Shipping,
            "Gửi 2,5 kg liên tỉnh",
            SHIPPING_QUOTE,
            &quote,
        );
        assert_eq!(
            reply.text,
            "Phí giao hàng: 12.50 DEMO (tiền giả lập, không phải tiền thật)."
        );
        assert!(reply.calls.is_empty());
        let (_, reply) = after_result(
            Assistant::Shipping,
            "ship 2.5 kg regional",
            SHIPPING_QUOTE,
            &quote,
        );
        assert_eq!(
            reply.text,
            "Shipping fee: 12.50 DEMO (a made-up currency, not real money)."
        );
    }

    /// No quote: no amount, no "DEMO", no number at all.
    fn assert_no_amount(text: &str) {
        assert!(!text.contains("DEMO"), "{text}");
        assert!(!text.contains("Phí giao hàng:"), "{text}");
        assert!(!text.contains("Shipping fee"), "{text}");
        assert!(!text.chars().any(|c| c.is_ascii_digit()), "{text}");
    }

    #[test]
    fn trigger_bad_weight_and_zero_weight() {
        let turn = plan_for(Assistant::Shipping, vec![user("#bad-weight")]);
        assert_eq!(turn.only_call().name, SHIPPING_QUOTE);
        assert_eq!(
            turn.only_call().arguments,
            r#"{"zone":"local","weight_kg":"2"}"#
        );
        let turn = plan_for(Assistant::Shipping, vec![user("báo giá #zero-weight")]);
        assert_eq!(
            turn.only_call().arguments,
            r#"{"zone":"local","weight_kg":0}"#
        );
        let cases = [
            (
                "#bad-weight",
                "Invalid arguments: weight_kg: expected number, received string",
                "There is no quote: the weight must be a number of kilograms, not text. Please \
                 tell me the parcel's weight again.",
            ),
            (
                "báo giá #bad-weight",
                "Invalid arguments: weight_kg: expected number, received string",
                "Chưa có báo giá: cân nặng phải là một con số kg (viết bằng số, không phải chữ). \
                 Bạn cho tôi biết lại cân nặng của gói hàng nhé.",
            ),
            (
                "báo giá #zero-weight",
                "Invalid arguments: weight_kg: must be greater than 0, received 0",
                "Chưa có báo giá: cân nặng phải lớn hơn không. Gói hàng nặng bao nhiêu kg?",
            ),
            (
                "#zero-weight",
                "Invalid arguments: weight_kg: must be greater than 0, received 0",
                "There is no quote: the weight must be greater than zero. How many kilograms \
                 does the parcel weigh?",
            ),
        ];
        for (text, message, expected) in cases {
            let (_, reply) = after_result(
                Assistant::Shipping,
                text,
                SHIPPING_QUOTE,
                &validation_error(message),
            );
            assert_eq!(reply.text, expected, "{text}");
            assert_no_amount(&reply.text);
            assert!(reply.calls.is_empty());
        }
    }

    #[test]
    fn quote_errors_explain_what_to_fix_and_never_state_an_amount() {
        for (text, result) in [
            (
                "gửi 150 kg nội thành",
                validation_error("Invalid arguments: weight_kg: must be at most 100, received 150"),
            ),
            (
                "gửi 1.0005 kg nội thành",
                validation_error(
                    "Invalid arguments: weight_kg: at most 3 decimals (whole grams) are allowed, \
                     got 1.0005",
                ),
            ),
            (
                "gửi 2 kg nội thành",
                validation_error(
                    "Invalid arguments: zone: must be one of [\"local\",\"regional\"]",
                ),
            ),
            (
                "gửi 2 kg nội thành",
                validation_error("Invalid arguments: weight_kg: required field is missing"),
            ),
            ("gửi 2 kg nội thành", declined()),
        ] {
            let (_, reply) = after_result(Assistant::Shipping, text, SHIPPING_QUOTE, &result);
            assert!(
                reply.text.starts_with("Chưa có báo giá") || reply.text.contains("chưa có báo giá"),
                "{}",
                reply.text
            );
            assert_no_amount(&reply.text);
        }
        let (_, reply) = after_result(
            Assistant::Shipping,
            "ship 2 kg local",
            SHIPPING_QUOTE,
            &failed("EXECUTION_FAILED", "The quote service failed."),
        );
        assert_eq!(
            reply.text,
            "There is no shipping quote: The quote service failed. Please try again later."
        );
        let (_, reply) = after_result(
            Assistant::Shipping,
            "ship 2 kg local",
            SHIPPING_QUOTE,
            &json!({"ok": true, "zone": "local"}),
        );
        assert_eq!(
            reply.text,
            "The quote came back without an amount, so I have no quote."
        );
    }

    // --- Only offered tools.

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

    // --- Reading numbers.

    #[test]
    fn budgets_in_vietnamese_and_english() {
        let cases = [
            ("dưới 50k", Some((None, Some(50_000)))),
            ("dưới 1 triệu", Some((None, Some(1_000_000)))),
            ("từ 300k đến 800k", Some((Some(300_000), Some(800_000)))),
            ("300k-800k", Some((Some(300_000), Some(800_000)))),
            ("300 - 800k", Some((Some(300_000), Some(800_000)))),
            ("khoảng 500k", Some((Some(400_000), Some(600_000)))),
            ("under 500k", Some((None, Some(500_000)))),
            ("1,5 triệu", Some((None, Some(1_500_000)))),
            ("1.5tr", Some((None, Some(1_500_000)))),
            ("tầm 1tr5", Some((Some(1_200_000), Some(1_800_000)))),
            ("500.000đ", Some((None, Some(500_000)))),
            ("dưới 200000 vnd", Some((None, Some(200_000)))),
            ("tối đa 2.000.000", Some((None, Some(2_000_000)))),
            ("trên 1 triệu", Some((Some(1_000_000), None))),
            ("2 triệu trở lên", Some((Some(2_000_000), None))),
            ("at least 300k", Some((Some(300_000), None))),
            ("200 nghìn", Some((None, Some(200_000)))),
            ("mẹ 55 tuổi", None),
            ("dưới 5 tuổi", None),
            ("2kg", None),
            ("BK-1A2B3C4D", None),
        ];
        for (text, expected) in cases {
            let expected = expected.map(|(min, max)| Budget { min, max });
            assert_eq!(budget(text), expected, "{text}");
        }
        assert_eq!(vnd(0), "0");
        assert_eq!(vnd(450_000), "450.000");
        assert_eq!(vnd(1_250_000), "1.250.000");
    }

    #[test]
    fn weights_are_copied_not_computed() {
        for (text, expected) in [
            ("2 kg", Some("2")),
            ("2kg", Some("2")),
            ("2,5 kg", Some("2.5")),
            ("2.5kg", Some("2.5")),
            ("0.75 ký", Some("0.75")),
            ("3 cân", Some("3")),
            ("1,10 kg", Some("1.10")),
            ("02 kg", Some("2")),
            ("nặng ,5 kg", Some("0.5")),
            ("10 ki lô", Some("10")),
            ("0.1 kg", Some("0.1")),
            ("nặng 2", None),
            ("3 cái", None),
            ("BK-2KG", None),
        ] {
            assert_eq!(weight_text(text).as_deref(), expected, "{text}");
        }
    }

    #[test]
    fn who_a_gift_is_for() {
        for (text, expected) in [
            ("quà cho mẹ chồng", Some(RelationshipType::Parent)),
            ("quà cho bà xã", Some(RelationshipType::Partner)),
            ("quà cho bà ngoại", Some(RelationshipType::Grandparent)),
            ("quà cho người yêu", Some(RelationshipType::Partner)),
            ("quà cho bạn gái", Some(RelationshipType::Partner)),
            ("quà cho bạn", Some(RelationshipType::Friend)),
            ("quà cho anh trai", Some(RelationshipType::Sibling)),
            ("quà cho chị", Some(RelationshipType::Sibling)),
            ("quà tặng thầy", Some(RelationshipType::Teacher)),
            ("quà cho cô, cô thích trà", Some(RelationshipType::Teacher)),
            ("tôi cần quà, anh ấy thích game", None),
            ("Con muốn tặng quà cho bố", Some(RelationshipType::Parent)),
            ("gift for my mom's birthday", Some(RelationshipType::Parent)),
            ("a present for my boss", Some(RelationshipType::Colleague)),
            (
                "gift for my grandmother",
                Some(RelationshipType::Grandparent),
            ),
            ("bạn thân", Some(RelationshipType::Friend)),
            ("Bạn gợi ý quà nhé", None),
        ] {
            assert_eq!(Utterance::new(text).relationship(), expected, "{text}");
        }
    }
}

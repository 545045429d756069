//! The offline model: a scripted, deterministic stand-in for an LLM, used when no API key is
//! configured (local development, end-to-end tests, demos without network).
//!
//! It reads the history the way a model would and proposes the same kinds of tool calls,
//! streamed in small pieces, so the whole agent loop (validation, approval, tool errors,
//! step limits) runs for real. It books with exactly what the person said: a missing party
//! size or time is left out of the call rather than asked for first, so the server's
//! validation path, and the "never claim a booking that failed" rule, get exercised.
//!
//! QA can force failure paths with these exact substrings in a message:
//! - [`TRIGGER_UNKNOWN_TOOL`]: a call to `launchRocket`, a tool that does not exist.
//! - [`TRIGGER_BAD_JSON`]: a createBooking call whose argument text is not JSON.
//! - [`TRIGGER_TOOL_ERROR`]: getWeather for the city `#fail`, which the executor fails.
//! - [`TRIGGER_LOOP`]: getWeather for Hà Nội, again every turn, until the step limit.
//! - [`TRIGGER_BAD_ARGS`]: the same ill-typed createBooking call every turn, until the
//!   tool-error bound ends the run.

use crate::tools::city::fold;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Datelike, Days, FixedOffset, NaiveDate, NaiveTime, Utc};
use serde_json::{Map, Value};
use shared::tools::ToolName;

use super::{
    FinishReason, ModelEvent, ModelMessage, ModelProvider, ModelRequest, ProposedCall, TurnStream,
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

/// The tool name `#unknown-tool` calls.
const UNKNOWN_TOOL_NAME: &str = "launchRocket";
const BAD_JSON_ARGUMENTS: &str = r#"{"restaurantId": "hn-cha-ca-thang-long", "partySize": }"#;
const BAD_ARGS_ARGUMENTS: &str =
    r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":"bốn","startsAt":"tối mai"}"#;
const FAILING_CITY: &str = "#fail";

const GET_WEATHER: &str = ToolName::GetWeather.as_str();
const SEARCH_RESTAURANTS: &str = ToolName::SearchRestaurants.as_str();
const CREATE_BOOKING: &str = ToolName::CreateBooking.as_str();

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
        Planner::new(&request.messages, now)
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
            "giúp|nhé|ạ|toi|nguoi|khong|thoi tiet|nha hang|dat ban|muon|giup",
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
}

impl<'a> Planner<'a> {
    fn new(messages: &'a [ModelMessage], now: DateTime<FixedOffset>) -> Self {
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
        }
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
        if raw.contains(TRIGGER_BAD_JSON) {
            return Reply::call(
                self.lang.pick("Để tôi đặt bàn…", "Let me book that…"),
                CREATE_BOOKING,
                BAD_JSON_ARGUMENTS,
            );
        }
        if raw.contains(TRIGGER_TOOL_ERROR) {
            let arguments = serde_json::json!({ "city": FAILING_CITY }).to_string();
            return Reply::call(
                self.lang
                    .pick("Để tôi xem thời tiết…", "Let me check the weather…"),
                GET_WEATHER,
                arguments,
            );
        }
        if raw.contains(TRIGGER_LOOP) {
            return self.loop_call();
        }
        if raw.contains(TRIGGER_BAD_ARGS) {
            return self.bad_args_call();
        }
        if self.user.is_weather() {
            return self.weather();
        }
        if self.user.is_booking() {
            return self.book();
        }
        if self.user.is_search() {
            return self.search();
        }
        if let Some(reply) = self.follow_up() {
            return reply;
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
        let Some(city) = cities.first().copied() else {
            return self.ask_city(self.lang.pick(
                "Bạn muốn đặt bàn ở thành phố nào (hoặc nhà hàng nào)?",
                "Which city (or which restaurant) should I book in?",
            ));
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
        Reply::text(self.lang.pick(
            "Xin chào! Tôi có thể giúp bạn: xem thời tiết ở Hà Nội, TP. Hồ Chí Minh, Đà Lạt, Đà \
             Nẵng và Huế; tìm nhà hàng theo thành phố, món ăn và số người; và đặt bàn (bạn xác \
             nhận trước khi tôi đặt). Bạn muốn bắt đầu từ đâu?",
            "Hi! I can help you check the weather in Hà Nội, TP. Hồ Chí Minh, Đà Lạt, Đà Nẵng and \
             Huế; find restaurants by city, cuisine and party size; and book a table (you confirm \
             before anything is booked). What would you like to do?",
        ))
    }

    // --- Tool results just came back.

    fn answer_results(&self) -> Reply {
        if self.user.raw.contains(TRIGGER_LOOP) {
            return self.loop_call();
        }
        if self.user.raw.contains(TRIGGER_BAD_ARGS) {
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
        if !self.user.is_booking() || self.user.is_weather() || self.booked_since_user() {
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
        if name == CREATE_BOOKING {
            return self.booking_failure(code, message, &quoted);
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

    fn now() -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339("2026-11-29T10:00:00+07:00").unwrap()
    }

    fn model() -> OfflineModel {
        OfflineModel::new(Duration::ZERO).with_now(now())
    }

    fn request(messages: Vec<ModelMessage>) -> ModelRequest {
        ModelRequest {
            system: "You are datban.".into(),
            messages,
            tools: Vec::new(),
        }
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
        ] {
            for name in [
                GET_WEATHER,
                SEARCH_RESTAURANTS,
                CREATE_BOOKING,
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
}

//! The restaurant assistant's search: the searchRestaurants call, the list it returns, and
//! restaurants seen earlier in the conversation.

use super::catalogue::{aliases_of, mention, named_in};
use super::planner::{join_names, outcome, plural, text_field, trim_message, Outcome, Planner};
use super::read::{Lang, Utterance};
use super::read_date::DayPart;
use super::read_request::{Intent, Request};
use super::reply::Reply;
use super::SEARCH_RESTAURANTS;
use crate::model::ModelMessage;
use crate::tools::city::CITIES;
use chrono::{DateTime, NaiveTime, Timelike};
use serde_json::{Map, Value};
use shared::tools::ToolName;

/// How many restaurants a search reply lists; more reads like a wall of text in a chat.
const LISTED_RESTAURANTS: usize = 5;

const LISTED_SLOTS: usize = 6;

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Restaurant {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) address: Option<String>,
    pub(super) city: Option<String>,
    pub(super) cuisine: Option<String>,
    pub(super) price_level: Option<u64>,
    /// As the tool writes them: "08:00–20:30".
    pub(super) opening_hours: Option<String>,
    /// Free times, in the restaurant's local time.
    pub(super) slots: Vec<NaiveTime>,
}

impl Restaurant {
    /// What people call the restaurant once a search has shown it, besides its name: the
    /// catalogue's aliases, and the name without the dish it is named after when two words
    /// or more are left ("Lã Vọng" for "Chả Cá Lã Vọng", "Thăng Long" for "Chả Cá Thăng
    /// Long"). Such words can mean other things (a citadel, "ông bà cả nhà"), so they name
    /// only a place the person has been shown.
    pub(super) fn spoken_names(&self) -> Vec<String> {
        let mut names: Vec<String> = aliases_of(&self.name)
            .iter()
            .map(|alias| (*alias).to_owned())
            .collect();
        let folded = |text: &str| -> Vec<String> {
            Utterance::new(text)
                .tokens
                .into_iter()
                .map(|token| token.folded)
                .collect()
        };
        let name = folded(&self.name);
        let dish = self.cuisine.as_deref().map(folded).unwrap_or_default();
        if !dish.is_empty() && name.len() >= dish.len() + 2 && name.starts_with(&dish) {
            names.push(name[dish.len()..].join(" "));
        }
        names
    }

    /// Where `utterance` names this restaurant (see [`mention`]), by its name or a
    /// [`Restaurant::spoken_names`] one.
    pub(super) fn mentioned_in(&self, utterance: &Utterance) -> Option<(usize, usize)> {
        let spoken = self.spoken_names();
        let spoken: Vec<&str> = spoken.iter().map(String::as_str).collect();
        mention(utterance, &self.name, &spoken)
    }
}

pub(super) fn restaurants_of(value: &Value) -> Vec<Restaurant> {
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
                        .map(|at| at.time())
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
                opening_hours: text_field(entry, "openingHours").map(str::to_owned),
                slots,
            })
        })
        .collect()
}

/// Restaurants of each successful search in `messages`, oldest search first.
pub(super) fn seen_restaurants(messages: &[ModelMessage]) -> Vec<Vec<Restaurant>> {
    messages
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

/// When `hours` ("10:00–22:00", "17:00–02:00") open and close, in minutes after the
/// opening day's midnight: a closing time before the opening one is the next day.
fn opening_span(hours: &str) -> Option<(u32, u32)> {
    let minutes = |clock: &str| {
        let (hour, minute) = clock.trim().split_once(':')?;
        Some(hour.parse::<u32>().ok()? * 60 + minute.parse::<u32>().ok()?)
    };
    let (opens, closes) = hours.split_once(['–', '-'])?;
    let (opens, closes) = (minutes(opens)?, minutes(closes)?);
    let closes = if closes <= opens {
        closes + 24 * 60
    } else {
        closes
    };
    Some((opens, closes))
}

impl Planner<'_> {
    /// "Which one is open late?", "quán nào mở khuya?" after a search: the places found,
    /// latest closing first, with their hours as the tool gave them.
    pub(super) fn opening_hours(&self) -> Option<Reply> {
        // Checked in this order so that most messages stop at the first, cheapest test. A
        // city named is a new search ("quán mở khuya ở Huế"), a booking verb a booking.
        let answers = self.offers(ToolName::SearchRestaurants)
            && self.asks_hours()
            && !self.user.has("tìm|find|search|tim")
            && self.user.cities().is_empty();
        if !answers {
            return None;
        }
        let searches = self.search_results();
        self.hours_answer(searches.last()?).map(Reply::text)
    }

    /// Whether the latest message asks when places open or close (and books nothing).
    pub(super) fn asks_hours(&self) -> bool {
        self.user.has(
            "open|opens|close|closes|closing|opening|hours|mở khuya|mở muộn|mở đến|mở tới|\
             mở sớm|mở cửa|đóng cửa|giờ mở|mo khuya|mo muon|mo den|mo som|mo cua|dong cua|\
             gio mo",
        ) && !self.user.has("đặt|book|reserve|dat")
    }

    /// The opening hours `latest` places have, as the latest message asks for them: one
    /// place's if it names one, else every place's, latest closing (or earliest opening)
    /// first. `None` when no place has hours.
    pub(super) fn hours_answer(&self, latest: &[Restaurant]) -> Option<String> {
        // "What time does Cơm Hến Bà Cả close?": that place only.
        if let Some(restaurant) = name_match(&self.user, latest.iter()) {
            let name = &restaurant.name;
            return Some(match restaurant.opening_hours.as_deref() {
                Some(hours) => match self.lang {
                    Lang::Vi => format!("{name} mở cửa {hours}."),
                    Lang::En => format!("{name} is open {hours}."),
                },
                None => match self.lang {
                    Lang::Vi => format!("Kết quả tìm kiếm không có giờ mở cửa của {name}."),
                    Lang::En => format!("The search results do not give {name}'s hours."),
                },
            });
        }
        // "Which opens earliest?" ranks by opening time; anything else by closing time.
        let early = self.user.has("sớm|som|early|earliest");
        let mut shown: Vec<(u32, &str, &str)> = Vec::new();
        for restaurant in latest {
            let Some(hours) = restaurant.opening_hours.as_deref() else {
                continue;
            };
            let rank = match opening_span(hours) {
                Some((opens, _)) if early => opens,
                // Latest closing first.
                Some((_, closes)) => u32::MAX - closes,
                None => u32::MAX,
            };
            shown.push((rank, restaurant.name.as_str(), hours));
        }
        if shown.is_empty() {
            return None;
        }
        // A stable sort: the list's own order among equals.
        shown.sort_by_key(|(rank, _, _)| *rank);
        let mut text = if early {
            self.lang.pick(
                "Giờ mở cửa của các nhà hàng vừa tìm, quán mở cửa sớm nhất trước:",
                "Opening hours of the places I found, earliest opening first:",
            )
        } else {
            self.lang.pick(
                "Giờ mở cửa của các nhà hàng vừa tìm, quán đóng cửa muộn nhất trước:",
                "Opening hours of the places I found, latest closing first:",
            )
        }
        .to_owned();
        for (_, name, hours) in shown {
            text.push_str(&format!("\n- {name}: {hours}"));
        }
        Some(text)
    }

    /// "Có bàn trống lúc 8h tối nay ở Chả Cá Thăng Long không?", "is there a table at 7pm":
    /// whether the places found (the one named, else each) are free at the time asked, and
    /// the free times nearest it where they are not. `None` when the latest message asks
    /// no such thing, names no time, or books (a booking's own reply says it).
    pub(super) fn availability_answer(&self, restaurants: &[Restaurant]) -> Option<String> {
        let asks = self.user.has(
            "trống|còn bàn|còn chỗ|hết chỗ|hết bàn|free|available|availability|a table|any table|\
             con ban|con cho|het cho",
        ) && !self.user.has("đặt|book|reserve|dat");
        if !asks || restaurants.is_empty() {
            return None;
        }
        let part = self.details.day_part();
        let time = self.details.time_in(part)?;
        let asked: Vec<&Restaurant> = match name_match(&self.user, restaurants.iter()) {
            Some(named) => vec![named],
            None => restaurants.iter().take(LISTED_RESTAURANTS).collect(),
        };
        let at = time.format("%H:%M").to_string();
        let mut lines = Vec::new();
        for restaurant in asked {
            let name = &restaurant.name;
            if restaurant.slots.contains(&time) {
                lines.push(match self.lang {
                    Lang::Vi => format!("- {name}: còn bàn lúc {at}."),
                    Lang::En => format!("- {name}: free at {at}."),
                });
                continue;
            }
            // The free times nearest the one asked for, in the day's order.
            let mut nearest: Vec<NaiveTime> = restaurant.slots.clone();
            nearest.sort_by_key(|slot| (*slot - time).num_minutes().abs());
            nearest.truncate(3);
            nearest.sort();
            let nearest: Vec<String> = nearest
                .iter()
                .map(|slot| slot.format("%H:%M").to_string())
                .collect();
            lines.push(match (self.lang, nearest.is_empty()) {
                (Lang::Vi, true) => format!("- {name}: không còn bàn lúc {at}."),
                (Lang::Vi, false) => format!(
                    "- {name}: không còn bàn lúc {at}; giờ trống gần nhất: {}.",
                    nearest.join(", ")
                ),
                (Lang::En, true) => format!("- {name}: nothing free at {at}."),
                (Lang::En, false) => format!(
                    "- {name}: nothing free at {at}; the nearest free times: {}.",
                    nearest.join(", ")
                ),
            });
        }
        let header = self.lang.pick("Bàn trống lúc", "Free tables at");
        let next = self.lang.pick(
            "Muốn đặt, bạn cứ nói “đặt bàn ở … lúc … cho … người”.",
            "To book, just say “book … at … for … people”.",
        );
        Some(format!("{header} {at}:\n{}\n\n{next}", lines.join("\n")))
    }

    pub(super) fn search(&self, request: &Request) -> Reply {
        let named = named_in(&request.said);
        let city = request
            .cities
            .first()
            .copied()
            .or_else(|| named.first().map(|restaurant| restaurant.city));
        let Some(city) = city else {
            if let Some(reply) = self.unserved(&request.said) {
                return reply;
            }
            return self.ask_city(self.lang.pick(
                "Bạn muốn tìm nhà hàng ở thành phố nào?",
                "Which city should I look for restaurants in?",
            ));
        };
        let mut arguments = Map::new();
        arguments.insert("city".into(), Value::from(city));
        if let Some(cuisine) = request.said.cuisine(self.lang) {
            arguments.insert("cuisine".into(), Value::from(cuisine));
        }
        if let Some(size) = request.details.party_size() {
            arguments.insert("partySize".into(), Value::from(size));
        }
        if let Some(date) = request.details.date(self.today()) {
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

    /// The cities we cover, as a sentence of replies.
    pub(super) fn covered_cities(&self) -> String {
        let cities = join_names(&CITIES, self.lang);
        match self.lang {
            Lang::Vi => format!("Tôi có thông tin ở {cities}."),
            Lang::En => format!("I cover {cities}."),
        }
    }

    pub(super) fn ask_city(&self, question: &str) -> Reply {
        Reply::text(format!("{question} {}", self.covered_cities()))
    }

    /// Whether a tool's own sentence (a `noResultsReason`) can be quoted in the reply: the
    /// tools write them in Vietnamese, which an English reply leaves out.
    pub(super) fn readable(&self, sentence: &str) -> bool {
        self.lang == Lang::Vi || Utterance::new(sentence).language_signal() != Some(Lang::Vi)
    }

    /// The answer to a request about a place we have no data for, if it names one.
    pub(super) fn unserved(&self, said: &Utterance) -> Option<Reply> {
        let place = said.unserved_place()?;
        let covered = self.covered_cities();
        Some(Reply::text(match self.lang {
            Lang::Vi => format!("Xin lỗi, tôi chưa có dữ liệu ở {place}. {covered}"),
            Lang::En => format!("Sorry, I have no data for {place}. {covered}"),
        }))
    }

    /// Restaurants of each successful search, oldest search first.
    pub(super) fn search_results(&self) -> Vec<Vec<Restaurant>> {
        seen_restaurants(self.messages)
    }

    pub(super) fn restaurant_name(&self, id: &str) -> Option<String> {
        self.search_results()
            .into_iter()
            .rev()
            .flatten()
            .find(|restaurant| restaurant.id == id)
            .map(|restaurant| restaurant.name)
    }

    pub(super) fn search_report(&self, value: &Value, restaurants: &[Restaurant]) -> String {
        if restaurants.is_empty() {
            let reason = text_field(value, "noResultsReason").filter(|r| self.readable(r));
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
            (Lang::En, false) => format!(
                "I found {count} {}:",
                plural(count, "restaurant", "restaurants")
            ),
            (Lang::En, true) => {
                format!("I found {count} restaurants; here are the first {LISTED_RESTAURANTS}:")
            }
        };
        // "Friday night": the free times of that part of the day, not the morning's. The
        // order stays the tool's, which "the second one" counts in.
        let asked = self
            .request(Intent::Search)
            .or_else(|| self.request(Intent::Book));
        let part = asked.and_then(|request| request.details.day_part());
        // "tối mai 8h": the free times around 20:00, not the evening's first six.
        let at = asked.and_then(|request| request.details.time_in(part));
        let mut lines = vec![header];
        for restaurant in restaurants.iter().take(LISTED_RESTAURANTS) {
            lines.push(self.restaurant_line(restaurant, part, at));
        }
        lines.join("\n")
    }

    fn restaurant_line(
        &self,
        restaurant: &Restaurant,
        part: Option<DayPart>,
        at: Option<NaiveTime>,
    ) -> String {
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
        if restaurant.slots.is_empty() {
            return line;
        }
        let in_part: Vec<NaiveTime> = restaurant
            .slots
            .iter()
            .copied()
            .filter(|slot| part.is_none_or(|part| starts_in(*slot, part)))
            .collect();
        if in_part.is_empty() {
            // Free times, just none then: said, so nobody books a morning by mistake.
            if let Some(part) = part {
                line.push_str(&match self.lang {
                    Lang::Vi => format!(" · {} không còn giờ trống", part_name(part, Lang::Vi)),
                    Lang::En => format!(" · nothing free {}", part_name(part, Lang::En)),
                });
            }
            return line;
        }
        // The slots shown: the first ones, or those around the time asked for.
        let start = match at {
            Some(at) if in_part.len() > LISTED_SLOTS => {
                let nearest = (0..in_part.len())
                    .min_by_key(|&i| (in_part[i] - at).num_minutes().abs())
                    .unwrap_or(0);
                nearest
                    .saturating_sub(LISTED_SLOTS / 2)
                    .min(in_part.len() - LISTED_SLOTS)
            }
            _ => 0,
        };
        let shown = &in_part[start..in_part.len().min(start + LISTED_SLOTS)];
        let mut slots = shown
            .iter()
            .map(|slot| slot.format("%H:%M").to_string())
            .collect::<Vec<_>>()
            .join(", ");
        if start > 0 {
            slots = format!("…, {slots}");
        }
        if start + shown.len() < in_part.len() {
            slots.push_str(", …");
        }
        line.push_str(&match (self.lang, part) {
            (Lang::Vi, None) => format!(" · giờ còn trống: {slots}"),
            (Lang::Vi, Some(part)) => {
                format!(" · giờ còn trống {}: {slots}", part_name(part, Lang::Vi))
            }
            (Lang::En, None) => format!(" · free at {slots}"),
            (Lang::En, Some(part)) => {
                format!(" · free {} at {slots}", part_name(part, Lang::En))
            }
        });
        line
    }
}

/// Whether a free time starts in `part` of the day. "Night" is read as the evening:
/// "Friday night" is a dinner, and late tables start in the evening's hours too.
fn starts_in(slot: NaiveTime, part: DayPart) -> bool {
    let hour = slot.hour();
    let (from, to) = match part {
        DayPart::Morning => (5, 11),
        DayPart::Noon => (11, 14),
        DayPart::Afternoon => (14, 17),
        DayPart::Evening | DayPart::Night => (17, 24),
    };
    (from..to).contains(&hour)
}

/// A part of the day as the listing says it ("buổi tối", "in the evening").
fn part_name(part: DayPart, lang: Lang) -> &'static str {
    match (part, lang) {
        (DayPart::Morning, Lang::Vi) => "buổi sáng",
        (DayPart::Noon, Lang::Vi) => "buổi trưa",
        (DayPart::Afternoon, Lang::Vi) => "buổi chiều",
        (DayPart::Evening | DayPart::Night, Lang::Vi) => "buổi tối",
        (DayPart::Morning, Lang::En) => "in the morning",
        (DayPart::Noon, Lang::En) => "at lunchtime",
        (DayPart::Afternoon, Lang::En) => "in the afternoon",
        (DayPart::Evening | DayPart::Night, Lang::En) => "in the evening",
    }
}

/// The restaurant the message names, if any, by its name or what people call it
/// ([`Restaurant::spoken_names`]); the longest name wins ("Phở Thìn Bờ Hồ" over "Phở
/// Thìn"), then the earliest candidate.
pub(super) fn name_match<'r>(
    utterance: &Utterance,
    candidates: impl Iterator<Item = &'r Restaurant>,
) -> Option<&'r Restaurant> {
    let mut best: Option<(usize, &Restaurant)> = None;
    for restaurant in candidates {
        if let Some((_, length)) = restaurant.mentioned_in(utterance) {
            if best.is_none_or(|(best_length, _)| length > best_length) {
                best = Some((length, restaurant));
            }
        }
    }
    best.map(|(_, restaurant)| restaurant)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        after_search, arguments, plan, searched_with, tool_result, user, validation_error,
    };
    use super::*;
    use crate::model::{FinishReason, ProposedCall};
    use serde_json::json;

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
        // "gợi ý" is "suggest", "phố" is "street", "chủ nhật" is Sunday (today).
        let turn = plan(vec![user("Gợi ý nhà hàng ở phố cổ Hà Nội chủ nhật")]);
        assert_eq!(
            arguments(turn.only_call()),
            json!({"city": "Hà Nội", "date": "2026-11-29"})
        );
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

    /// A search for "Friday night" lists each place's evening times, and says so of a
    /// place whose free times are all earlier, in the order the tool gave.
    #[test]
    fn a_search_for_a_part_of_the_day_lists_the_free_times_then() {
        let result = json!({"ok": true, "restaurants": [
            {"id": "a", "name": "Sáng Quán", "cuisine": "phở", "freeSlots": [
                {"startsAt": "2026-12-04T07:00:00+07:00", "seatsLeft": 10},
                {"startsAt": "2026-12-04T08:30:00+07:00", "seatsLeft": 10}]},
            {"id": "b", "name": "Tối Quán", "cuisine": "lẩu", "freeSlots": [
                {"startsAt": "2026-12-04T11:00:00+07:00", "seatsLeft": 10},
                {"startsAt": "2026-12-04T18:00:00+07:00", "seatsLeft": 10},
                {"startsAt": "2026-12-04T19:30:00+07:00", "seatsLeft": 10}]}]});
        for (asked, listed) in [
            (
                "Find a restaurant in Hanoi for Friday night",
                "- Sáng Quán (phở) · nothing free in the evening\n\
                 - Tối Quán (lẩu) · free in the evening at 18:00, 19:30",
            ),
            (
                "Tìm nhà hàng ở Hà Nội tối thứ Sáu",
                "- Sáng Quán (phở) · buổi tối không còn giờ trống\n\
                 - Tối Quán (lẩu) · giờ còn trống buổi tối: 18:00, 19:30",
            ),
            (
                "Tìm nhà hàng ở Hà Nội sáng thứ Sáu",
                "- Sáng Quán (phở) · giờ còn trống buổi sáng: 07:00, 08:30\n\
                 - Tối Quán (lẩu) · buổi sáng không còn giờ trống",
            ),
            (
                "Find a restaurant in Hanoi on Friday",
                "- Sáng Quán (phở) · free at 07:00, 08:30\n\
                 - Tối Quán (lẩu) · free at 11:00, 18:00, 19:30",
            ),
        ] {
            let turn = plan(searched_with(asked, &result));
            assert!(turn.text.ends_with(listed), "{asked}: {}", turn.text);
        }
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
    fn a_refused_search_says_why_it_did_not_search() {
        // Counts past the tool's limit are passed on as said, so the tool's refusal (with
        // its limit) is what the person reads, never a question for a count already given.
        for (text, size, sorry) in [
            (
                "Find chả cá in Hanoi for 30 people tomorrow",
                30,
                "Sorry, I couldn't search for restaurants: ",
            ),
            (
                "Book a table for 500 people tomorrow at 7pm in Hanoi",
                500,
                "Sorry, I couldn't search for restaurants: ",
            ),
            (
                "Đặt bàn cho 120 khách tối mai ở Hà Nội",
                120,
                "Xin lỗi, tôi không tìm được nhà hàng: ",
            ),
        ] {
            let search = plan(vec![user(text)]);
            let call = search.only_call();
            assert_eq!(arguments(call)["partySize"], json!(size), "{text}");
            let refused = validation_error(SEARCH_RESTAURANTS, &call.arguments);
            let reply = plan(vec![
                user(text),
                search.assistant(),
                tool_result(&call.id, SEARCH_RESTAURANTS, &refused),
            ]);
            assert!(reply.calls.is_empty(), "{text}: {reply:?}");
            assert!(
                reply.text.contains(sorry) && reply.text.contains("20"),
                "{text}: {}",
                reply.text
            );
        }
    }

    /// A question that needs a search is answered once the search is in: the hours it
    /// asked for, or whether a table is free at the time it asked about.
    #[test]
    fn a_search_made_for_a_question_answers_it() {
        let answer = |text: &str| {
            let search = plan(vec![user(text)]);
            assert_eq!(search.only_call().name, SEARCH_RESTAURANTS, "{text}");
            let turn = plan(vec![
                user(text),
                search.assistant(),
                tool_result(
                    &search.only_call().id,
                    SEARCH_RESTAURANTS,
                    &super::super::testing::hanoi_search(),
                ),
            ]);
            assert!(turn.calls.is_empty(), "{text}: {turn:?}");
            turn.text
        };
        assert_eq!(
            answer("Quán nào ở Hà Nội mở cửa muộn nhất?"),
            "Giờ mở cửa của các nhà hàng vừa tìm, quán đóng cửa muộn nhất trước:\n\
             - Chả Cá Thăng Long: 10:00–22:00\n- Bún Chả Hương Liên: 08:00–20:30"
        );
        assert_eq!(
            answer("Có bàn trống lúc 7 rưỡi tối mai ở Chả Cá Thăng Long không?"),
            "Bàn trống lúc 19:30:\n- Chả Cá Thăng Long: còn bàn lúc 19:30.\n\n\
             Muốn đặt, bạn cứ nói “đặt bàn ở … lúc … cho … người”."
        );
        assert_eq!(
            answer("Is there a table free at 7pm tomorrow in Hanoi?"),
            "Free tables at 19:00:\n- Bún Chả Hương Liên: nothing free at 19:00.\n\
             - Chả Cá Thăng Long: nothing free at 19:00; the nearest free times: 18:00, 19:30.\n\n\
             To book, just say “book … at … for … people”."
        );
        // A plain search is listed as before.
        assert!(answer("Tìm nhà hàng ở Hà Nội").starts_with("Tôi tìm được 2 nhà hàng:"));
    }

    /// A search for "tối mai 8h" lists the free times around 20:00: the first six of the
    /// evening stopped at 19:30 and hid the one asked for behind "…".
    #[test]
    fn the_free_times_listed_are_those_around_the_time_asked() {
        let evening: Vec<Value> = (0..10)
            .map(|i| {
                let (hour, minute) = (17 + i / 2, (i % 2) * 30);
                json!({"startsAt": format!("2026-11-30T{hour:02}:{minute:02}:00+07:00"),
                       "seatsLeft": 6})
            })
            .collect();
        let result = json!({"ok": true, "restaurants": [
            {"id": "hn-cha-ca-thang-long", "name": "Chả Cá Thăng Long",
             "address": "21 Đường Thành, Hoàn Kiếm", "city": "Hà Nội", "cuisine": "chả cá",
             "priceLevel": 2, "openingHours": "10:00–22:00", "freeSlots": evening}]});
        let listed = |text: &str| {
            let history = searched_with(text, &result);
            plan(history).text
        };
        assert!(
            listed("Tìm nhà hàng chả cá ở Hà Nội tối mai 8h cho 4 người").ends_with(
                "giờ còn trống buổi tối: …, 18:30, 19:00, 19:30, 20:00, 20:30, 21:00, …"
            ),
            "{}",
            listed("Tìm nhà hàng chả cá ở Hà Nội tối mai 8h cho 4 người")
        );
        // Late: the last six, nothing after them.
        let late = listed("Find chả cá in Hanoi tomorrow at 9:30pm");
        assert!(
            late.ends_with("…, 19:00, 19:30, 20:00, 20:30, 21:00, 21:30"),
            "{late}"
        );
        // No time asked: the evening's first six, as before.
        assert!(listed("Tìm nhà hàng chả cá ở Hà Nội tối mai")
            .ends_with("giờ còn trống buổi tối: 17:00, 17:30, 18:00, 18:30, 19:00, 19:30, …"));
    }

    #[test]
    fn opening_hours_after_a_search_latest_closing_first() {
        for (text, expected) in [
            (
                "Which one is open late?",
                "Opening hours of the places I found, latest closing first:\n\
                 - Chả Cá Thăng Long: 10:00–22:00\n- Bún Chả Hương Liên: 08:00–20:30",
            ),
            (
                "Quán nào mở khuya?",
                "Giờ mở cửa của các nhà hàng vừa tìm, quán đóng cửa muộn nhất trước:\n\
                 - Chả Cá Thăng Long: 10:00–22:00\n- Bún Chả Hương Liên: 08:00–20:30",
            ),
        ] {
            let turn = plan(after_search(text));
            assert!(turn.calls.is_empty(), "{text}: {turn:?}");
            assert_eq!(turn.text, expected, "{text}");
        }
        // With no search to answer from, it is not made up; a city named is a new search.
        let turn = plan(vec![user("Which one is open late?")]);
        assert!(!turn.text.contains("Opening hours"), "{}", turn.text);
        for (text, expected) in [
            (
                "What time does Chả Cá Thăng Long close?",
                "Chả Cá Thăng Long is open 10:00–22:00.",
            ),
            (
                "Bún Chả Hương Liên mở cửa mấy giờ?",
                "Bún Chả Hương Liên mở cửa 08:00–20:30.",
            ),
        ] {
            assert_eq!(plan(after_search(text)).text, expected, "{text}");
        }
        let turn = plan(after_search("Quán nào mở khuya ở Huế?"));
        assert_eq!(turn.only_call().name, SEARCH_RESTAURANTS);
        assert_eq!(
            plan(after_search("Quán nào mở sớm nhất?")).text,
            "Giờ mở cửa của các nhà hàng vừa tìm, quán mở cửa sớm nhất trước:\n\
             - Bún Chả Hương Liên: 08:00–20:30\n- Chả Cá Thăng Long: 10:00–22:00"
        );
        assert_eq!(opening_span("17:00–02:00"), Some((17 * 60, 26 * 60)));
        assert_eq!(opening_span("08:00-20:30"), Some((8 * 60, 20 * 60 + 30)));
        assert_eq!(opening_span("all day"), None);
    }

    #[test]
    fn english_counts_say_one_restaurant_and_two_restaurants() {
        let text = "Find restaurants in Hanoi";
        let search = plan(vec![user(text)]);
        let call = search.only_call();
        let mut results = super::super::testing::hanoi_search();
        let reply = |results: &Value| {
            plan(vec![
                user(text),
                search.assistant(),
                tool_result(&call.id, SEARCH_RESTAURANTS, results),
            ])
            .text
        };
        assert!(reply(&results).starts_with("I found 2 restaurants:\n"));
        results["restaurants"].as_array_mut().unwrap().truncate(1);
        assert!(reply(&results).starts_with("I found 1 restaurant:\n"));
    }
}

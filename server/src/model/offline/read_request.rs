//! One message, one or more requests: "What's the weather in Da Nang this weekend? Then
//! find me a seafood place there." is a forecast and a search, each read from its own
//! words, the search in the city the forecast named.

use super::read::{alternatives, is_one_of, word_count, Utterance};
use super::Offered;
use shared::tools::ToolName;
use std::ops::Range;
use std::sync::LazyLock;

/// What the restaurant assistant is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Intent {
    Weather,
    Book,
    Search,
}

impl Intent {
    fn is_restaurant(self) -> bool {
        matches!(self, Intent::Book | Intent::Search)
    }
}

/// One request of a message and the words it was made with.
#[derive(Debug, Clone)]
pub(super) struct Request {
    pub(super) intent: Intent,
    /// Its words as written: cities, cuisines and restaurant names are read here.
    pub(super) said: Utterance,
    /// The same words with restaurant names masked: numbers, days and times are read
    /// here, so "Lẩu Bò Ông Tám" is not eight people.
    pub(super) details: Utterance,
    /// The cities it names, or those of the rest of the message when it names none ("tìm
    /// quán hải sản ở đó", "find a place there").
    pub(super) cities: Vec<&'static str>,
}

/// Words that start another request ("rồi tìm…", "then book…").
const CONNECTORS: &str = "then|and then|after that|afterwards|also|rồi|sau đó|tiện thể|\
                          nhân tiện|thêm nữa|với lại|roi|sau do|tien the|nhan tien";

/// Words that start another request after "and"/"và"/"với".
const VERBS: &str = "find|book|search|look|recommend|suggest|reserve|get|check|tell|tìm|đặt|\
                     gợi|kiếm|xem|cho|tim|dat|goi|kiem";

/// Characters that end a clause. All of them also separate words, so clauses are runs of
/// the message's words.
fn ends_clause(c: char) -> bool {
    ".?!;,\n".contains(c)
}

impl Utterance {
    /// What this message asks for, if anything, among what is offered; a forecast first,
    /// then a booking, then a search ("đặt bàn ở quán hải sản" is a booking).
    fn intent(&self, offered: Offered) -> Option<Intent> {
        if offered.has(ToolName::GetWeather) && self.is_weather() {
            Some(Intent::Weather)
        } else if offered.has(ToolName::CreateBooking) && self.is_booking() {
            Some(Intent::Book)
        } else if offered.has(ToolName::SearchRestaurants) && self.is_search() {
            Some(Intent::Search)
        } else {
            None
        }
    }

    /// The word ranges of the message's clauses: split at punctuation, and before words
    /// that start another request.
    fn clause_ranges(&self) -> Vec<Range<usize>> {
        let mut ranges = Vec::new();
        let mut start = 0;
        for piece in self.raw.split(ends_clause) {
            let length = word_count(piece);
            if length > 0 {
                ranges.push(start..start + length);
            }
            start += length;
        }
        let connector_at = |index: usize| {
            let word = self.lower(index);
            let before = index.checked_sub(1).map(|i| self.lower(i));
            // Split once: this is asked at every word of every message read.
            static CONNECTOR_WORDS: LazyLock<Vec<Vec<&str>>> = LazyLock::new(|| {
                alternatives(CONNECTORS)
                    .map(|phrase| phrase.split(' ').collect())
                    .collect()
            });
            let starts_with_connector = CONNECTOR_WORDS.iter().any(|phrase| {
                phrase
                    .iter()
                    .enumerate()
                    .all(|(offset, part)| self.lower(index + offset) == *part)
            });
            // "and then": split before "and", not again before "then".
            let continues = before == Some("and") && word == "then";
            let joined_verb = matches!(word, "and" | "và" | "va" | "với")
                && is_one_of(VERBS, self.lower(index + 1));
            (starts_with_connector && !continues) || joined_verb
        };
        ranges
            .into_iter()
            .flat_map(|range| {
                let mut cuts: Vec<usize> = range
                    .clone()
                    .skip(1)
                    .filter(|index| connector_at(*index))
                    .collect();
                cuts.insert(0, range.start);
                cuts.push(range.end);
                cuts.windows(2)
                    .map(|pair| pair[0]..pair[1])
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

/// The requests of a message. `said` is the message, `details` the same words with
/// restaurant names masked. One request for the whole message unless its clauses ask
/// for different things; clauses that ask nothing ("tối mai", "2 người") belong to the
/// request before them.
pub(super) fn requests(said: &Utterance, details: &Utterance, offered: Offered) -> Vec<Request> {
    let ranges = said.clause_ranges();
    let intents: Vec<Option<Intent>> = ranges
        .iter()
        .map(|range| said.slice(range.clone()).intent(offered))
        .collect();
    let Some(first) = intents.iter().flatten().next().copied() else {
        return Vec::new();
    };
    // A clause that asks nothing belongs to the one before it (the first ones, to the
    // first request).
    let mut current = first;
    let owned: Vec<Intent> = intents
        .iter()
        .map(|intent| {
            current = intent.unwrap_or(current);
            current
        })
        .collect();
    let whole_cities = said.cities();
    let build = |intent: Intent, ranges: &[Range<usize>]| {
        let said = Utterance::joined(
            &ranges
                .iter()
                .map(|range| said.slice(range.clone()))
                .collect::<Vec<_>>(),
        );
        let details = Utterance::joined(
            &ranges
                .iter()
                .map(|range| details.slice(range.clone()))
                .collect::<Vec<_>>(),
        );
        let own = said.cities();
        Request {
            intent,
            details,
            cities: if own.is_empty() {
                whole_cities.clone()
            } else {
                own
            },
            said,
        }
    };
    // A search and a booking are one restaurant request (the booking searches anyway);
    // forecasts asked one after the other are one request, for all their cities.
    let mut groups: Vec<(Intent, Vec<Range<usize>>)> = Vec::new();
    for (range, intent) in ranges.into_iter().zip(owned) {
        let same = |group: &(Intent, Vec<Range<usize>>)| {
            group.0 == intent || (group.0.is_restaurant() && intent.is_restaurant())
        };
        let previous_is_same = groups.last().is_some_and(same);
        match groups
            .iter_mut()
            .find(|group| intent.is_restaurant() && same(group))
        {
            Some(group) => {
                if intent == Intent::Book {
                    group.0 = Intent::Book;
                }
                group.1.push(range);
            }
            None if previous_is_same => {
                if let Some(group) = groups.last_mut() {
                    group.1.push(range);
                }
            }
            None => groups.push((intent, vec![range])),
        }
    }
    if groups.len() < 2 {
        return vec![Request {
            intent: said.intent(offered).unwrap_or(first),
            said: said.clone(),
            details: details.clone(),
            cities: whole_cities,
        }];
    }
    groups
        .iter()
        .map(|(intent, ranges)| build(*intent, ranges))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::testing::tools_of;
    use super::*;
    use shared::tools::Assistant;

    fn read(text: &str) -> Vec<(Intent, String, Vec<&'static str>)> {
        let offered = Offered::new(&tools_of(Assistant::Restaurant));
        let said = Utterance::new(text);
        requests(&said, &said, offered)
            .into_iter()
            .map(|request| (request.intent, request.said.raw.clone(), request.cities))
            .collect()
    }

    #[test]
    fn one_request_keeps_the_whole_message() {
        let found = read("Đặt bàn ở Chả Cá Thăng Long, tối mai, 2 người");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, Intent::Book);
        assert_eq!(found[0].1, "Đặt bàn ở Chả Cá Thăng Long, tối mai, 2 người");
        assert_eq!(
            read("Thời tiết Hà Nội và Đà Lạt 2 ngày tới")[0].2,
            ["Hà Nội", "Đà Lạt"]
        );
        assert!(read("xin chào").is_empty());
    }

    #[test]
    fn a_forecast_then_a_search_are_two_requests_in_one_city() {
        for text in [
            "What's the weather in Da Nang this weekend? Then find me a seafood place there.",
            "Cuối tuần này Đà Nẵng thời tiết thế nào? Rồi tìm giúp mình quán hải sản ở đó",
            "weather in da nang this weekend and find a seafood restaurant there",
            "thoi tiet da nang cuoi tuan nay roi tim quan hai san o do",
        ] {
            let found = read(text);
            let intents: Vec<Intent> = found.iter().map(|(intent, ..)| *intent).collect();
            assert_eq!(intents, [Intent::Weather, Intent::Search], "{text}");
            for (_, _, cities) in &found {
                assert_eq!(cities, &["Đà Nẵng"], "{text}");
            }
        }
    }

    #[test]
    fn a_search_and_a_booking_are_one_request() {
        let found = read("Tìm quán hải sản ở Đà Nẵng, rồi đặt bàn cho 4 người lúc 19h");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, Intent::Book);
    }
}

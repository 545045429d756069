//! The restaurant assistant's requests of one message, each planned on its own words and
//! proposed together ("weather this weekend, then a seafood place there" is a getWeather
//! and a searchRestaurants call in one turn), and the language every reply is written in.

use super::catalogue::catalogue_spans;
use super::plan_search::seen_restaurants;
use super::planner::Planner;
use super::read::{Lang, Utterance};
use super::read_request::{Intent, Request};
use super::reply::Reply;
use crate::model::ModelMessage;

/// The words of `user` that name a restaurant: of the catalogue, or of a search result
/// earlier in the conversation.
pub(super) fn restaurant_spans(user: &Utterance, messages: &[ModelMessage]) -> Vec<(usize, usize)> {
    let seen = seen_restaurants(messages);
    let mut spans = catalogue_spans(user);
    // By what people call them too: "Hồng Mai", once shown, is a place, not "mai".
    spans.extend(
        seen.iter()
            .flatten()
            .filter_map(|restaurant| restaurant.mentioned_in(user)),
    );
    spans
}

/// The language of the reply: what the latest message is written in; for a message that
/// does not tell ("4", "19:00", a name), the language of the person's earlier messages;
/// English when nothing tells. Names are left out, so "Book Mì Quảng Bà Mua" is English
/// and "thời tiết Hue" Vietnamese.
pub(super) fn conversation_language(
    messages: &[ModelMessage],
    user: &Utterance,
    details: &Utterance,
) -> Lang {
    let without_names =
        |said: &Utterance, masked: &Utterance| masked.masked(&said.place_spans()).language_signal();
    if let Some(lang) = without_names(user, details) {
        return lang;
    }
    let earlier = messages
        .iter()
        .rev()
        .filter_map(|message| match message {
            ModelMessage::User { text } => Some(text.as_str()),
            _ => None,
        })
        .skip(1)
        .find_map(|text| {
            let said = Utterance::new(text);
            without_names(&said, &said.masked(&catalogue_spans(&said)))
        });
    earlier
        .or_else(|| user.language_signal())
        .unwrap_or(Lang::En)
}

impl Planner<'_> {
    /// The restaurant assistant's answer to the latest message, when it asks for a
    /// forecast, a search or a booking.
    pub(super) fn answer_requests(&self) -> Option<Reply> {
        let replies: Vec<Reply> = self
            .requests
            .iter()
            .map(|request| match request.intent {
                Intent::Weather => self.weather(request),
                Intent::Book => self.book(request),
                Intent::Search => self.search(request),
            })
            .collect();
        let mut replies = replies.into_iter();
        let first = replies.next()?;
        Some(replies.fold(first, |mut all, reply| {
            all.text = format!("{} {}", all.text, reply.text);
            all.calls.extend(reply.calls);
            all
        }))
    }

    /// The latest message's request of this kind.
    pub(super) fn request(&self, intent: Intent) -> Option<&Request> {
        self.requests
            .iter()
            .find(|request| request.intent == intent)
    }

    /// The forecast request that asked for `city`, or the first one.
    pub(super) fn weather_request(&self, city: Option<&str>) -> Option<&Request> {
        let forecasts = || {
            self.requests
                .iter()
                .filter(|request| request.intent == Intent::Weather)
        };
        forecasts()
            .find(|request| city.is_some_and(|city| request.cities.contains(&city)))
            .or_else(|| forecasts().next())
    }

    /// The whole latest message as one request, for a follow-up that names no task.
    pub(super) fn whole_request(&self, intent: Intent) -> Request {
        Request {
            intent,
            said: self.user.clone(),
            details: self.details.clone(),
            cities: self.user.cities(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{plan, plan_for, tool_result, user};
    use super::super::{GET_WEATHER, SEARCH_RESTAURANTS};
    use super::*;
    use serde_json::json;

    fn language(history: Vec<ModelMessage>) -> Lang {
        let latest = history
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::User { text } => Some(Utterance::new(text)),
                _ => None,
            })
            .unwrap_or_else(|| Utterance::new(""));
        let details = latest.masked(&restaurant_spans(&latest, &history));
        conversation_language(&history, &latest, &details)
    }

    #[test]
    fn names_do_not_decide_the_language() {
        assert_eq!(language(vec![user("Book Mì Quảng Bà Mua for 4")]), Lang::En);
        assert_eq!(language(vec![user("weather in Đà Nẵng")]), Lang::En);
        assert_eq!(language(vec![user("thời tiết Hue")]), Lang::Vi);
        assert_eq!(language(vec![user("Đà Lạt")]), Lang::Vi);
        assert_eq!(language(vec![user("Da Lat")]), Lang::En);
    }

    #[test]
    fn a_message_that_does_not_tell_keeps_the_conversations_language() {
        for (first, expected) in [("Đặt bàn ở Hà Nội", Lang::Vi), ("Book in Hanoi", Lang::En)]
        {
            for answer in ["4", "19:00", "Chả Cá Thăng Long", "BK-1A2B3C4D"] {
                let history = vec![
                    user(first),
                    ModelMessage::Assistant {
                        text: "?".into(),
                        calls: Vec::new(),
                    },
                    user(answer),
                ];
                assert_eq!(language(history), expected, "{first} / {answer}");
            }
        }
    }

    /// "Which city?" answered with a city alone goes on with what was asked, where the
    /// answer was once read as a greeting.
    #[test]
    fn a_city_that_answers_which_city_goes_on_with_what_was_asked() {
        for (asked, answer, tool, expected) in [
            (
                "Thời tiết thế nào?",
                "Đà Nẵng",
                GET_WEATHER,
                json!({"city": "Đà Nẵng"}),
            ),
            (
                "What's the weather like?",
                "Hue",
                GET_WEATHER,
                json!({"city": "Huế"}),
            ),
            (
                "Tìm quán chay",
                "Huế",
                SEARCH_RESTAURANTS,
                json!({"city": "Huế", "cuisine": "chay"}),
            ),
            (
                "đặt bàn cho 4 người tối mai",
                "ở Hà Nội",
                SEARCH_RESTAURANTS,
                json!({"city": "Hà Nội", "partySize": 4, "date": "2026-11-30"}),
            ),
            (
                "Book a table for 2 tomorrow at 7pm",
                "Hanoi",
                SEARCH_RESTAURANTS,
                json!({"city": "Hà Nội", "partySize": 2, "date": "2026-11-30"}),
            ),
        ] {
            let question = plan(vec![user(asked)]);
            assert!(question.calls.is_empty(), "{asked}: {question:?}");
            let turn = plan(vec![user(asked), question.assistant(), user(answer)]);
            let call = turn.only_call();
            assert_eq!(call.name, tool, "{asked} → {answer}: {turn:?}");
            let arguments: serde_json::Value =
                serde_json::from_str(&call.arguments).unwrap_or_default();
            for (key, value) in expected.as_object().into_iter().flatten() {
                assert_eq!(&arguments[key], value, "{asked} → {answer}: {arguments}");
            }
        }
        // A landmark is its city, asked or not.
        let turn = plan(vec![user("Tìm quán ngon gần Hồ Gươm")]);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&turn.only_call().arguments)
                .unwrap_or_default()["city"],
            json!("Hà Nội")
        );
        // An answer that asks something of its own is that request.
        let question = plan(vec![user("Thời tiết thế nào?")]);
        let turn = plan(vec![
            user("Thời tiết thế nào?"),
            question.assistant(),
            user("Tìm quán phở ở Huế"),
        ]);
        assert_eq!(turn.only_call().name, SEARCH_RESTAURANTS);
        // A city after anything but "which city?" is not joined to an older request.
        let turn = plan(vec![
            user("Thời tiết thế nào?"),
            ModelMessage::Assistant {
                text: "Xin chào!".into(),
                calls: Vec::new(),
            },
            user("Đà Nẵng"),
        ]);
        assert!(
            turn.calls.iter().all(|call| call.name != GET_WEATHER),
            "{turn:?}"
        );
    }

    /// "Còn Huế thì sao?" after a forecast or a search asks the same of another city; a
    /// chain of them goes on ("còn Hà Nội?"). A booking is not moved that way.
    #[test]
    fn what_about_another_city_repeats_the_last_forecast_or_search() {
        // The person's message, the call it made with `result`, and the reply to it.
        let exchange = |history: &mut Vec<ModelMessage>, text: &str, result: serde_json::Value| {
            history.push(user(text));
            let call = plan(history.clone());
            let called = call.only_call().clone();
            history.push(call.assistant());
            history.push(tool_result(&called.id, &called.name, &result));
            let reply = plan(history.clone());
            history.push(reply.assistant());
            called
        };
        let weather = json!({"ok": true, "city": "Đà Nẵng", "days": []});
        let arguments = |call: &crate::model::ProposedCall| {
            serde_json::from_str::<serde_json::Value>(&call.arguments).unwrap_or_default()
        };
        let mut history = Vec::new();
        exchange(
            &mut history,
            "Thời tiết Đà Nẵng mai thế nào?",
            weather.clone(),
        );
        let hue = exchange(&mut history, "còn Huế thì sao?", weather.clone());
        assert_eq!(hue.name, GET_WEATHER);
        assert_eq!(
            arguments(&hue),
            json!({"city": "Huế", "from": "2026-11-30"})
        );
        let hanoi = exchange(&mut history, "còn Hà Nội?", weather.clone());
        assert_eq!(
            arguments(&hanoi),
            json!({"city": "Hà Nội", "from": "2026-11-30"})
        );

        let mut history = Vec::new();
        exchange(
            &mut history,
            "What's the weather in Da Nang tomorrow?",
            weather,
        );
        history.push(user("what about Hue?"));
        assert_eq!(
            arguments(plan(history).only_call()),
            json!({"city": "Huế", "from": "2026-11-30"})
        );

        let mut history = Vec::new();
        let found = json!({"ok": true, "restaurants": []});
        exchange(&mut history, "Tìm quán chay ở Huế", found);
        history.push(user("còn Đà Lạt thì sao?"));
        let turn = plan(history);
        assert_eq!(turn.only_call().name, SEARCH_RESTAURANTS);
        assert_eq!(
            arguments(turn.only_call()),
            json!({"city": "Đà Lạt", "cuisine": "chay"})
        );

        // A booking names its place: "and in Huế?" does not move it there.
        let turn = plan(vec![
            user("Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 19:00"),
            ModelMessage::Assistant {
                text: "Tôi chuẩn bị yêu cầu đặt bàn…".into(),
                calls: Vec::new(),
            },
            user("còn Huế thì sao?"),
        ]);
        assert!(
            turn.calls.iter().all(|call| call.name != "createBooking"),
            "{turn:?}"
        );
    }

    #[test]
    fn every_question_back_is_in_the_persons_language() {
        for (text, start) in [
            (
                "Trời có mưa không?",
                "Bạn muốn xem thời tiết ở thành phố nào?",
            ),
            (
                "Will it rain?",
                "Which city would you like the weather for?",
            ),
            ("Tìm quán chay", "Bạn muốn tìm nhà hàng ở thành phố nào?"),
            (
                "find a vegetarian place",
                "Which city should I look for restaurants in?",
            ),
            ("đặt bàn cho 4 người", "Bạn muốn đặt bàn ở thành phố nào"),
            ("book a table for 4", "Which city (or which restaurant)"),
            (
                "thoi tiet nha trang",
                "Xin lỗi, tôi chưa có dữ liệu ở Nha Trang.",
            ),
            ("weather in Hoi An", "Sorry, I have no data for Hội An."),
            // Places abroad: no data there, not "which city?".
            (
                "What's the weather in Tokyo?",
                "Sorry, I have no data for Tokyo.",
            ),
            (
                "Thời tiết ở Bangkok thế nào?",
                "Xin lỗi, tôi chưa có dữ liệu ở Bangkok.",
            ),
            (
                "Find restaurants in Paris",
                "Sorry, I have no data for Paris.",
            ),
            (
                "Đặt bàn ở Bắc Kinh tối mai cho 2 người",
                "Xin lỗi, tôi chưa có dữ liệu ở Bắc Kinh.",
            ),
        ] {
            let turn = plan(vec![user(text)]);
            assert!(turn.calls.is_empty(), "{text}: {turn:?}");
            assert!(turn.text.starts_with(start), "{text}: {}", turn.text);
        }
    }

    #[test]
    fn a_bare_answer_gets_the_next_question_in_the_conversations_language() {
        use shared::tools::Assistant;
        for (first, expected) in [
            ("Báo giá giao hàng", "Bạn gửi nội thành"),
            ("Quote shipping please", "Is it local"),
        ] {
            let question = plan_for(Assistant::Shipping, vec![user(first)]);
            let history = vec![user(first), question.assistant(), user("2 kg")];
            let next = plan_for(Assistant::Shipping, history);
            assert!(next.text.starts_with(expected), "{first}: {}", next.text);
        }
    }

    #[test]
    fn two_requests_are_proposed_together_and_answered_together() {
        let text =
            "What's the weather in Da Nang this weekend? Then find me a seafood place there.";
        let turn = plan(vec![user(text)]);
        let names: Vec<&str> = turn.calls.iter().map(|call| call.name.as_str()).collect();
        assert_eq!(names, [GET_WEATHER, SEARCH_RESTAURANTS]);
        let mut history = vec![user(text), turn.assistant()];
        history.push(tool_result(
            "call_1_1",
            SEARCH_RESTAURANTS,
            &json!({"ok": true, "restaurants": [
                {"id": "dn-hai-san-be-man", "name": "Hải Sản Bé Mặn", "city": "Đà Nẵng",
                 "cuisine": "hải sản", "priceLevel": 2, "freeSlots": []}]}),
        ));
        history.push(tool_result(
            "call_1_0",
            GET_WEATHER,
            &json!({"ok": true, "city": "Đà Nẵng", "days": [
                {"date": "2026-11-29", "condition": "rain", "tempMinC": 21, "tempMaxC": 26,
                 "precipitationChance": 80}]}),
        ));
        let answer = plan(history);
        assert!(answer.calls.is_empty());
        let weather = answer
            .text
            .find("Weather in Đà Nẵng")
            .expect("the forecast");
        let search = answer.text.find("Hải Sản Bé Mặn").expect("the search");
        assert!(weather < search, "{}", answer.text);
    }
}

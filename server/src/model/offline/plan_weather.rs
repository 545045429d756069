//! The restaurant assistant's weather: a getWeather call per city, and the forecast in words.

use super::planner::{join_names, text_field, Planner};
use super::read::Lang;
use super::reply::{Call, Reply};
use super::GET_WEATHER;
use chrono::NaiveDate;
use serde_json::{Map, Value};

impl Planner<'_> {
    pub(super) fn weather(&self) -> Reply {
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

    pub(super) fn weather_report(&self, value: &Value, arguments: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::super::testing::{arguments, plan, tool_result, user};
    use super::super::SEARCH_RESTAURANTS;
    use super::*;
    use crate::model::FinishReason;
    use serde_json::json;

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
}

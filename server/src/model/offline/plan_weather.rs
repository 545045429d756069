//! The restaurant assistant's weather: a getWeather call per city for exactly the days
//! asked about ("cuối tuần này" on a Thursday is `from` Saturday `to` Sunday, "thứ Sáu"
//! `from` Friday alone, "3 ngày tới" `days` 3 from today), and a reply about exactly
//! those days, picked from the forecast by date.

use super::catalogue::named_in;
use super::planner::{join_names, text_field, Planner};
use super::read::Lang;
use super::read_date::Days;
use super::read_request::Request;
use super::reply::{Call, Reply};
use super::GET_WEATHER;
use crate::tools::city::CITIES;
use chrono::{Datelike, NaiveDate, Weekday};
use serde_json::{Map, Value};
use shared::tools::FORECAST_DAYS as FORECAST_REACH;

/// getWeather forecasts this many days, today included.
const FORECAST_DAYS: i64 = FORECAST_REACH as i64;

/// A chance of rain from which a day counts as rainy in a yes/no answer.
const RAINY_CHANCE: i64 = 50;

/// How the person said which days they want.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Said {
    /// By name: "cuối tuần này", "thứ Sáu", "ngày mai", "24/12".
    Named,
    /// As a count from today: "3 ngày tới", "the next 5 days".
    Counted,
    /// Not at all: today, the tool's default.
    Nothing,
}

/// The days a forecast request is about.
#[derive(Debug, Clone, Copy)]
struct Wanted {
    days: Days,
    said: Said,
}

impl Wanted {
    /// Whether the person said which days; otherwise the reply reports what came back.
    fn named(self) -> bool {
        self.said != Said::Nothing
    }
}

impl Planner<'_> {
    fn wanted_days(&self, request: &Request) -> Wanted {
        let today = self.today();
        if let Some(days) = request.details.days(today) {
            return Wanted {
                days,
                said: Said::Named,
            };
        }
        if let Some(count) = request.details.forecast_length() {
            let last = today
                .checked_add_days(chrono::Days::new(u64::from(count) - 1))
                .unwrap_or(today);
            return Wanted {
                days: Days { first: today, last },
                said: Said::Counted,
            };
        }
        Wanted {
            days: Days::one(today),
            said: Said::Nothing,
        }
    }

    /// The arguments that ask for `wanted`'s days, cut to the forecast's week (the reply
    /// says what the cut left out): named days as `from`/`to`, even today alone, so the
    /// card can say which day it is; a count as `days`; nothing when nothing was said,
    /// which asks for today.
    fn days_arguments(&self, wanted: Wanted, arguments: &mut Map<String, Value>) {
        let today = self.today();
        let reach = today
            .checked_add_days(chrono::Days::new(FORECAST_DAYS.unsigned_abs() - 1))
            .unwrap_or(today);
        let first = wanted.days.first.max(today);
        let last = wanted.days.last.min(reach);
        match wanted.said {
            Said::Named => {
                arguments.insert("from".into(), Value::from(first.to_string()));
                if last != first {
                    arguments.insert("to".into(), Value::from(last.to_string()));
                }
            }
            Said::Counted if last > today => {
                arguments.insert("days".into(), Value::from((last - today).num_days() + 1));
            }
            Said::Counted | Said::Nothing => {}
        }
    }

    pub(super) fn weather(&self, request: &Request) -> Reply {
        let mut cities = request.cities.clone();
        if cities.is_empty() {
            // "Trưa mai ở Chả Cá Thăng Long có mưa không?": the restaurant's city.
            cities.extend(named_in(&request.said).first().map(|r| r.city));
        }
        if cities.is_empty() {
            if let Some(reply) = self.unserved(&request.said) {
                return reply;
            }
            let cities = join_names(&CITIES, self.lang);
            return Reply::text(match self.lang {
                Lang::Vi => {
                    format!("Bạn muốn xem thời tiết ở thành phố nào? Tôi có dự báo cho {cities}.")
                }
                Lang::En => format!(
                    "Which city would you like the weather for? I have forecasts for {cities}."
                ),
            });
        }
        let today = self.today();
        let wanted = self.wanted_days(request);
        let ahead = |day: NaiveDate| (day - today).num_days();
        if ahead(wanted.days.last) < 0 || ahead(wanted.days.first) >= FORECAST_DAYS {
            return Reply::text(self.out_of_range(wanted.days));
        }
        let calls = cities
            .iter()
            .map(|city| {
                let mut arguments = Map::new();
                arguments.insert("city".into(), Value::from(*city));
                self.days_arguments(wanted, &mut arguments);
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

    /// Days before today or past the forecast's reach: said, not asked for.
    fn out_of_range(&self, wanted: Days) -> String {
        let today = self.today();
        let asked = self.day_label(wanted.first);
        if wanted.last < today {
            return match self.lang {
                Lang::Vi => format!("{asked} đã qua, nên tôi không có dự báo cho ngày đó."),
                Lang::En => format!("{asked} has passed, so there is no forecast for it."),
            };
        }
        let last = today
            .checked_add_days(chrono::Days::new(FORECAST_DAYS.unsigned_abs() - 1))
            .map(|day| self.day_label(day))
            .unwrap_or_default();
        match self.lang {
            Lang::Vi => format!(
                "Tôi chỉ có dự báo {FORECAST_DAYS} ngày, từ hôm nay đến {last}, nên chưa xem \
                 được thời tiết {asked}. Bạn hỏi lại gần ngày hơn nhé."
            ),
            Lang::En => format!(
                "I only have a {FORECAST_DAYS}-day forecast, from today to {last}, so I can't \
                 tell the weather for {asked} yet. Ask me again closer to the day."
            ),
        }
    }

    pub(super) fn weather_report(&self, value: &Value, arguments: &str) -> String {
        let asked_city = serde_json::from_str::<Value>(arguments)
            .ok()
            .and_then(|args| text_field(&args, "city").map(str::to_owned));
        let city = text_field(value, "city")
            .map(str::to_owned)
            .or(asked_city)
            .unwrap_or_else(|| self.lang.pick("thành phố này", "this city").to_owned());
        let request = self.weather_request(Some(city.as_str()));
        let wanted = request.map(|request| self.wanted_days(request));
        let forecast: Vec<(Option<NaiveDate>, &Value)> = value
            .get("days")
            .and_then(Value::as_array)
            .map(|days| {
                days.iter()
                    .map(|day| {
                        let date = text_field(day, "date")
                            .and_then(|date| NaiveDate::parse_from_str(date, "%Y-%m-%d").ok());
                        (date, day)
                    })
                    .collect()
            })
            .unwrap_or_default();
        // The days asked about, by date: "this weekend" is Saturday and Sunday, not today.
        let picked: Vec<(Option<NaiveDate>, &Value)> = match wanted {
            Some(wanted) if wanted.named() => forecast
                .iter()
                .copied()
                .filter(|(date, _)| date.is_some_and(|date| wanted.days.contains(date)))
                .collect(),
            _ => forecast.clone(),
        };
        if picked.is_empty() {
            return match (self.lang, wanted.filter(|wanted| wanted.named())) {
                (Lang::Vi, Some(wanted)) => format!(
                    "Dự báo cho {city} không có {}.",
                    self.days_label(wanted.days)
                ),
                (Lang::En, Some(wanted)) => format!(
                    "The forecast for {city} does not cover {}.",
                    self.days_label(wanted.days)
                ),
                (Lang::Vi, None) => format!("Chưa có dữ liệu dự báo cho {city}."),
                (Lang::En, None) => format!("There is no forecast data for {city}."),
            };
        }
        let days: Vec<String> = picked
            .iter()
            .map(|(date, day)| self.forecast_day(*date, day))
            .collect();
        let mut report = match self.lang {
            Lang::Vi => format!("Thời tiết {city}: {}.", days.join("; ")),
            Lang::En => format!("Weather in {city}: {}.", days.join("; ")),
        };
        if let Some(wanted) = wanted.filter(|wanted| wanted.named()) {
            let missing: Vec<String> = dates(wanted.days)
                .filter(|day| !picked.iter().any(|(date, _)| *date == Some(*day)))
                .map(|day| self.day_label(day))
                .collect();
            if !missing.is_empty() {
                let missing = join_names(
                    &missing.iter().map(String::as_str).collect::<Vec<_>>(),
                    self.lang,
                );
                report.push_str(&match self.lang {
                    Lang::Vi => format!(" Chưa có dự báo cho {missing}."),
                    Lang::En => format!(" There is no forecast yet for {missing}."),
                });
            }
        }
        if request.is_some_and(|request| request.said.is_rain_question()) {
            report.push(' ');
            report.push_str(&self.rain_answer(&picked));
        }
        report
    }

    /// "Có mưa không?" answered from the days picked.
    fn rain_answer(&self, picked: &[(Option<NaiveDate>, &Value)]) -> String {
        let chance = |day: &Value| day.get("precipitationChance").and_then(Value::as_i64);
        let rainy: Vec<String> = picked
            .iter()
            .filter(|(_, day)| {
                matches!(text_field(day, "condition"), Some("rain" | "storm"))
                    || chance(day).is_some_and(|chance| chance >= RAINY_CHANCE)
            })
            .map(|(date, day)| {
                let label = date.map_or_else(String::new, |date| self.weekday_date(date));
                match chance(day) {
                    Some(chance) => format!("{label} ({chance}%)"),
                    None => label,
                }
            })
            .collect();
        let highest = picked.iter().filter_map(|(_, day)| chance(day)).max();
        if rainy.is_empty() {
            return match (self.lang, highest) {
                (Lang::Vi, Some(highest)) => {
                    format!("Dự báo không có mưa (khả năng mưa cao nhất {highest}%).")
                }
                (Lang::Vi, None) => "Dự báo không có mưa.".to_owned(),
                (Lang::En, Some(highest)) => {
                    format!("No rain is forecast (at most a {highest}% chance).")
                }
                (Lang::En, None) => "No rain is forecast.".to_owned(),
            };
        }
        let rainy = join_names(
            &rainy.iter().map(String::as_str).collect::<Vec<_>>(),
            self.lang,
        );
        match self.lang {
            Lang::Vi => format!("Có khả năng mưa vào {rainy}."),
            Lang::En => format!("Rain is likely on {rainy}."),
        }
    }

    fn forecast_day(&self, date: Option<NaiveDate>, day: &Value) -> String {
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
        let label = match date {
            Some(date) => Some(self.day_label(date)),
            None => text_field(day, "date").map(str::to_owned),
        };
        match label {
            Some(label) => format!("{label} {}", parts.join(", ")),
            None => parts.join(", "),
        }
    }

    /// A day as the reply names it: "hôm nay (Chủ nhật 29/11)", "thứ Bảy 05/12",
    /// "Saturday 5 Dec".
    pub(super) fn day_label(&self, date: NaiveDate) -> String {
        let named = self.weekday_date(date);
        let ahead = (date - self.today()).num_days();
        match (ahead, self.lang) {
            (0, Lang::Vi) => format!("hôm nay ({named})"),
            (1, Lang::Vi) => format!("ngày mai ({named})"),
            (0, Lang::En) => format!("today ({named})"),
            (1, Lang::En) => format!("tomorrow ({named})"),
            _ => named,
        }
    }

    /// "thứ Bảy 05/12", "Saturday 5 Dec".
    fn weekday_date(&self, date: NaiveDate) -> String {
        match self.lang {
            Lang::Vi => format!(
                "{} {}",
                vietnamese_weekday(date.weekday()),
                date.format("%d/%m")
            ),
            Lang::En => date.format("%A %-d %b").to_string(),
        }
    }

    fn days_label(&self, days: Days) -> String {
        let labels: Vec<String> = dates(days).map(|day| self.day_label(day)).collect();
        join_names(
            &labels.iter().map(String::as_str).collect::<Vec<_>>(),
            self.lang,
        )
    }
}

/// Every day of `days`, in order.
fn dates(days: Days) -> impl Iterator<Item = NaiveDate> {
    days.first
        .iter_days()
        .take_while(move |day| *day <= days.last)
}

fn vietnamese_weekday(weekday: Weekday) -> &'static str {
    match weekday {
        Weekday::Mon => "thứ Hai",
        Weekday::Tue => "thứ Ba",
        Weekday::Wed => "thứ Tư",
        Weekday::Thu => "thứ Năm",
        Weekday::Fri => "thứ Sáu",
        Weekday::Sat => "thứ Bảy",
        Weekday::Sun => "Chủ nhật",
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
    use super::super::testing::{arguments, plan, plan_at, tool_result, user};
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
        assert_eq!(call.arguments, r#"{"city":"Hà Nội","from":"2026-11-29"}"#);
        assert_eq!(
            arguments(call),
            json!({"city": "Hà Nội", "from": "2026-11-29"})
        );
        // Nothing said of the day: the call's default, today.
        let turn = plan(vec![user("Thời tiết Hà Nội thế nào?")]);
        assert_eq!(arguments(turn.only_call()), json!({"city": "Hà Nội"}));
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
            "Thời tiết Hà Nội: hôm nay (Chủ nhật 29/11) nắng, 18–25°C, khả năng mưa 10%; ngày \
             mai (thứ Hai 30/11) ít mây, 17–23°C, khả năng mưa 20%.\n\nThời tiết Huế: hôm nay \
             (Chủ nhật 29/11) mưa, 21–26°C, khả năng mưa 80%. Chưa có dự báo cho ngày mai (thứ \
             Hai 30/11)."
        );
        assert_eq!(turn.finish, FinishReason::Stop);
    }

    /// Saturday 5 and Sunday 6 December in Đà Lạt, as getWeather returns them.
    fn the_weekend_in_da_lat() -> Value {
        let day = |date: &str, condition: &str, chance: u8| {
            json!({"date": date, "condition": condition, "tempMinC": 15, "tempMaxC": 21,
                   "precipitationChance": chance})
        };
        json!({"ok": true, "city": "Đà Lạt",
               "asked": {"from": "2026-12-05", "to": "2026-12-06"},
               "days": [day("2026-12-05", "cloudy", 52), day("2026-12-06", "sunny", 10)]})
    }

    #[test]
    fn this_weekend_on_a_thursday_is_saturday_and_sunday_only() {
        const THURSDAY: &str = "2026-12-03T10:00:00+07:00";
        let question = "Cuối tuần này Đà Lạt có mưa không?";
        let turn = plan_at(THURSDAY, vec![user(question)]);
        assert_eq!(
            arguments(turn.only_call()),
            json!({"city": "Đà Lạt", "from": "2026-12-05", "to": "2026-12-06"})
        );
        let history = vec![
            user(question),
            turn.assistant(),
            tool_result("call_1_0", GET_WEATHER, &the_weekend_in_da_lat()),
        ];
        let reply = plan_at(THURSDAY, history).text;
        assert_eq!(
            reply,
            "Thời tiết Đà Lạt: thứ Bảy 05/12 nhiều mây, 15–21°C, khả năng mưa 52%; Chủ nhật \
             06/12 nắng, 15–21°C, khả năng mưa 10%. Có khả năng mưa vào thứ Bảy 05/12 (52%)."
        );
        // A forecast that still brings today's storm (an older call's `days`) is picked
        // from by date: today and tomorrow are not the weekend's.
        let mut week = the_weekend_in_da_lat();
        week["days"].as_array_mut().unwrap().insert(
            0,
            json!({"date": "2026-12-03", "condition": "storm", "tempMinC": 15,
                              "tempMaxC": 21, "precipitationChance": 90}),
        );
        let history = vec![
            user(question),
            turn.assistant(),
            tool_result("call_1_0", GET_WEATHER, &week),
        ];
        let picked = plan_at(THURSDAY, history).text;
        assert_eq!(picked, reply);
    }

    #[test]
    fn this_weekend_on_saturday_and_on_sunday() {
        let asked = |now: &str, text: &str| arguments(plan_at(now, vec![user(text)]).only_call());
        // Saturday: today and tomorrow. Sunday: today only.
        assert_eq!(
            asked("2026-11-28T09:00:00+07:00", "weather this weekend in Hue?"),
            json!({"city": "Huế", "from": "2026-11-28", "to": "2026-11-29"})
        );
        assert_eq!(
            asked(
                "2026-11-29T09:00:00+07:00",
                "cuối tuần này Huế có mưa không"
            ),
            json!({"city": "Huế", "from": "2026-11-29"})
        );
        // Next weekend from a Sunday: Saturday is the forecast's 7th and last day, Sunday
        // past it; the call asks for Saturday and the reply says Sunday is missing.
        let sunday = "2026-11-29T09:00:00+07:00";
        let question = "Next weekend in Da Lat, will it rain?";
        let turn = plan_at(sunday, vec![user(question)]);
        assert_eq!(
            arguments(turn.only_call()),
            json!({"city": "Đà Lạt", "from": "2026-12-05"})
        );
        let saturday = json!({"ok": true, "city": "Đà Lạt",
            "asked": {"from": "2026-12-05", "to": "2026-12-05"},
            "days": [{"date": "2026-12-05", "condition": "rain", "tempMinC": 15,
                      "tempMaxC": 21, "precipitationChance": 70}]});
        let history = vec![
            user(question),
            turn.assistant(),
            tool_result("call_1_0", GET_WEATHER, &saturday),
        ];
        assert_eq!(
            plan_at(sunday, history).text,
            "Weather in Đà Lạt: Saturday 5 Dec rain, 15–21°C, 70% chance of rain. There is no \
             forecast yet for Sunday 6 Dec. Rain is likely on Saturday 5 Dec (70%)."
        );
    }

    /// Every way of naming days asks for exactly those days by date, in both languages;
    /// the days checked against the reading of each phrase on a Thursday and a Sunday.
    #[test]
    fn named_days_are_asked_for_by_date() {
        const THURSDAY: &str = "2026-12-03T10:00:00+07:00";
        const SUNDAY: &str = "2026-11-29T10:00:00+07:00";
        for (now, text, city, from, to) in [
            (
                THURSDAY,
                "Cuối tuần này Đà Lạt có mưa không?",
                "Đà Lạt",
                "2026-12-05",
                Some("2026-12-06"),
            ),
            (
                THURSDAY,
                "What's the weather in Da Nang this weekend?",
                "Đà Nẵng",
                "2026-12-05",
                Some("2026-12-06"),
            ),
            (
                THURSDAY,
                "Thời tiết Huế cuối tuần",
                "Huế",
                "2026-12-05",
                Some("2026-12-06"),
            ),
            (
                THURSDAY,
                "cuoi tuan da lat co mua khong",
                "Đà Lạt",
                "2026-12-05",
                Some("2026-12-06"),
            ),
            (
                THURSDAY,
                "Weather in Hue at the weekend",
                "Huế",
                "2026-12-05",
                Some("2026-12-06"),
            ),
            (
                THURSDAY,
                "Hanoi weekend weather",
                "Hà Nội",
                "2026-12-05",
                Some("2026-12-06"),
            ),
            (
                THURSDAY,
                "Thời tiết Đà Nẵng thứ Bảy",
                "Đà Nẵng",
                "2026-12-05",
                None,
            ),
            (
                THURSDAY,
                "thoi tiet da nang thu 7",
                "Đà Nẵng",
                "2026-12-05",
                None,
            ),
            (
                THURSDAY,
                "Weather in Da Nang on Saturday",
                "Đà Nẵng",
                "2026-12-05",
                None,
            ),
            (
                THURSDAY,
                "Chủ nhật tới Đà Lạt có mưa không?",
                "Đà Lạt",
                "2026-12-06",
                None,
            ),
            (
                THURSDAY,
                "Will it rain in Dalat on Sunday?",
                "Đà Lạt",
                "2026-12-06",
                None,
            ),
            (
                THURSDAY,
                "Thứ Sáu Hà Nội có mưa không?",
                "Hà Nội",
                "2026-12-04",
                None,
            ),
            (
                THURSDAY,
                "Weather in Hanoi on Friday",
                "Hà Nội",
                "2026-12-04",
                None,
            ),
            (
                THURSDAY,
                "Ngày mai Huế có mưa không?",
                "Huế",
                "2026-12-04",
                None,
            ),
            (
                THURSDAY,
                "Will it rain in Hue tomorrow?",
                "Huế",
                "2026-12-04",
                None,
            ),
            (
                SUNDAY,
                "Weather in Hanoi next Friday",
                "Hà Nội",
                "2026-12-04",
                None,
            ),
            (
                SUNDAY,
                "Thời tiết Hà Nội thứ Sáu tuần sau",
                "Hà Nội",
                "2026-12-04",
                None,
            ),
            (
                SUNDAY,
                "Thứ Bảy tới Đà Lạt có mưa không?",
                "Đà Lạt",
                "2026-12-05",
                None,
            ),
            (
                SUNDAY,
                "Thời tiết Đà Lạt cuối tuần này",
                "Đà Lạt",
                "2026-11-29",
                None,
            ),
        ] {
            let mut expected = json!({"city": city, "from": from});
            if let Some(to) = to {
                expected["to"] = json!(to);
            }
            let turn = plan_at(now, vec![user(text)]);
            assert_eq!(arguments(turn.only_call()), expected, "{text} at {now}");
            let asks = |words: &[&str]| words.iter().any(|word| turn.text.contains(word));
            assert!(
                asks(&["Để tôi xem thời tiết", "Let me check the weather"]),
                "{text}: {}",
                turn.text
            );
        }
    }

    #[test]
    fn a_named_day_past_the_forecast_or_over_is_said_not_asked() {
        const THURSDAY: &str = "2026-12-03T10:00:00+07:00";
        for (text, reply) in [
            (
                "Weather in Hanoi next Friday",
                "I only have a 7-day forecast, from today to Wednesday 9 Dec, so I can't tell \
                 the weather for Friday 11 Dec yet. Ask me again closer to the day.",
            ),
            (
                "Thời tiết Đà Lạt cuối tuần sau",
                "Tôi chỉ có dự báo 7 ngày, từ hôm nay đến thứ Tư 09/12, nên chưa xem được thời \
                 tiết thứ Bảy 12/12. Bạn hỏi lại gần ngày hơn nhé.",
            ),
            (
                "Hôm qua Huế có mưa không?",
                "thứ Tư 02/12 đã qua, nên tôi không có dự báo cho ngày đó.",
            ),
        ] {
            let turn = plan_at(THURSDAY, vec![user(text)]);
            assert!(turn.calls.is_empty(), "{text}: {turn:?}");
            assert!(turn.text.contains(reply), "{text}: {}", turn.text);
        }
    }

    #[test]
    fn a_forecast_without_the_days_asked_says_so() {
        // A forecast that starts on another day than the model's today (clocks apart).
        let question = "Thời tiết Đà Lạt ngày mai";
        let turn = plan(vec![user(question)]);
        let history = vec![
            user(question),
            turn.assistant(),
            tool_result(
                "call_1_0",
                GET_WEATHER,
                &json!({"ok": true, "city": "Đà Lạt", "days": [
                    {"date": "2026-12-24", "condition": "rain", "tempMinC": 15, "tempMaxC": 21,
                     "precipitationChance": 70}]}),
            ),
        ];
        assert_eq!(
            plan(history).text,
            "Dự báo cho Đà Lạt không có ngày mai (thứ Hai 30/11)."
        );
    }
}

//! `getWeather`: a read-only forecast for one city, either for a number of days from
//! today (`days`) or for the days a person named (`from`/`to`: "this weekend", "Friday").

use chrono::{DateTime, Days, NaiveDate, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Access, Risk, Rule, Tool, ToolDefinition, ToolName, ValidationContext, ValidationIssue,
};

/// How many days a forecast reaches, today included: `from` and `to` must fall within
/// today … today + 6, the week a forecast can honestly say something about.
pub const FORECAST_DAYS: u8 = 7;

/// Vietnam's UTC offset: every city the tool knows is there, so "today" and the dates of
/// `from`/`to` are Vietnam's, whatever the server's or the caller's clock says.
const VIETNAM_OFFSET_SECS: i64 = 7 * 3600;

/// The date in Vietnam at `now`: the "today" a forecast starts from.
pub fn vietnam_date(now: DateTime<Utc>) -> NaiveDate {
    let naive = now.naive_utc();
    naive
        .checked_add_signed(chrono::TimeDelta::seconds(VIETNAM_OFFSET_SECS))
        .unwrap_or(naive)
        .date()
}

/// Marker type of the `getWeather` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetWeather;

/// Arguments of `getWeather`.
///
/// Two ways to say which days, never both: `days` counts days from today (what calls
/// stored before `from`/`to` existed say, and still valid), `from`/`to` names them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetWeatherInput {
    /// City name as the user wrote it, e.g. "Hà Nội", "Da Nang", "Đà Lạt".
    #[schemars(length(min = 1, max = 100))]
    pub city: String,
    /// How many days to forecast, starting today (1 = today only; 1 when left out).
    /// Only for "the next N days"; for named days give `from`/`to` instead, never both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 7))]
    pub days: Option<u8>,
    /// The first day to forecast, a local date in Vietnam (YYYY-MM-DD), from today to 6
    /// days ahead. Alone it asks for that one day ("tomorrow", "on Friday"); with `to`,
    /// for the days from `from` to `to` ("this weekend": Saturday to Sunday).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<NaiveDate>,
    /// The last day to forecast, inclusive (YYYY-MM-DD, Vietnam), not before `from` and
    /// at most 6 days from today. Only together with `from`: a day on its own is `from`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<NaiveDate>,
}

/// The run of days one call covers, once its arguments are known to be possible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForecastSpan {
    /// The first day, a local date in Vietnam.
    pub first: NaiveDate,
    /// How many days from `first`, 1 to [`FORECAST_DAYS`].
    pub count: u8,
    /// Whether the call named its days (`from`/`to`) rather than counting them from today,
    /// which the result repeats so a card can say which days were asked.
    pub named: bool,
}

impl ForecastSpan {
    /// The last day of the span.
    pub fn last(self) -> NaiveDate {
        self.first
            .checked_add_days(Days::new(u64::from(self.count.max(1)) - 1))
            .unwrap_or(self.first)
    }
}

impl GetWeatherInput {
    /// The days this call asks for when it is `today` in Vietnam, or every rule the
    /// arguments break. Validation and the executor both ask here, so a stored or
    /// hand-made input that skipped validation cannot reach past the forecast either.
    pub fn span(&self, today: NaiveDate) -> Result<ForecastSpan, Vec<ValidationIssue>> {
        let mut issues = Vec::new();
        if let Some(days) = self.days {
            if !(1..=FORECAST_DAYS).contains(&days) {
                let rule = if days < 1 {
                    Rule::BelowMinimum {
                        min: 1.into(),
                        exclusive: false,
                    }
                } else {
                    Rule::AboveMaximum {
                        max: FORECAST_DAYS.into(),
                        exclusive: false,
                    }
                };
                issues.push(ValidationIssue::broke(
                    "days",
                    rule,
                    format!("must be between 1 and {FORECAST_DAYS}, got {days}"),
                ));
            }
        }
        let last_day = today
            .checked_add_days(Days::new(u64::from(FORECAST_DAYS) - 1))
            .unwrap_or(today);
        let in_reach = |path: &str, date: NaiveDate, issues: &mut Vec<ValidationIssue>| {
            if date < today {
                issues.push(ValidationIssue::broke(
                    path,
                    Rule::InPast,
                    format!("{date} is in the past; the forecast starts today, {today}"),
                ));
            } else if date > last_day {
                issues.push(ValidationIssue::broke(
                    path,
                    Rule::BeyondForecast {
                        days: u32::from(FORECAST_DAYS),
                    },
                    format!(
                        "{date} is beyond the {FORECAST_DAYS}-day forecast, which covers \
                         {today} to {last_day}"
                    ),
                ));
            }
        };
        let span = match (self.from, self.to) {
            (None, None) => ForecastSpan {
                first: today,
                count: self.days.unwrap_or(1),
                named: false,
            },
            (None, Some(_)) => {
                issues.push(ValidationIssue::broke(
                    "from",
                    Rule::Missing,
                    "required when `to` is given; for one day give `from` alone",
                ));
                return Err(issues);
            }
            (Some(from), to) => {
                if self.days.is_some() {
                    issues.push(ValidationIssue::broke(
                        "days",
                        Rule::Exclusive {
                            with: "from".into(),
                        },
                        "give either `days` (a number of days from today) or `from`/`to` \
                         (the days named), not both",
                    ));
                }
                in_reach("from", from, &mut issues);
                let to = to.unwrap_or(from);
                if to != from {
                    in_reach("to", to, &mut issues);
                }
                if from > to {
                    issues.push(ValidationIssue::broke(
                        "from",
                        Rule::MinAboveMax {
                            max_field: "to".into(),
                        },
                        format!("from ({from}) is after to ({to})"),
                    ));
                }
                let count = u8::try_from((to - from).num_days() + 1).unwrap_or(0);
                ForecastSpan {
                    first: from,
                    count,
                    named: true,
                }
            }
        };
        if issues.is_empty() {
            Ok(span)
        } else {
            Err(issues)
        }
    }
}

/// The sky, as a category the UI has an icon for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WeatherCondition {
    /// Clear sky.
    Sunny,
    /// Some clouds.
    PartlyCloudy,
    /// Overcast.
    Cloudy,
    /// Rain showers.
    Rain,
    /// Thunderstorms.
    Storm,
}

/// One day of a forecast.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DailyForecast {
    /// The local date.
    pub date: NaiveDate,
    /// The sky.
    pub condition: WeatherCondition,
    /// Lowest temperature, °C.
    pub temp_min_c: i8,
    /// Highest temperature, °C.
    pub temp_max_c: i8,
    /// Chance of rain, percent.
    pub precipitation_chance: u8,
}

/// The days a call named, first and last (the same day for one day).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskedDays {
    /// The first day asked for.
    pub from: NaiveDate,
    /// The last day asked for, inclusive.
    pub to: NaiveDate,
}

/// Result of `getWeather`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetWeatherOutput {
    /// The city's canonical name, e.g. "Hà Nội".
    pub city: String,
    /// One entry per requested day, in order: from today, or from `asked.from`.
    pub days: Vec<DailyForecast>,
    /// The days the call named with `from`/`to`, so a reader can say "this weekend"
    /// rather than leave the person to work it out from the dates; absent when the call
    /// counted days from today, as in every result stored before calls could name days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<AskedDays>,
}

impl Tool for GetWeather {
    const NAME: ToolName = ToolName::GetWeather;
    const DEFINITION: ToolDefinition = ToolDefinition {
        name: ToolName::GetWeather.as_str(),
        title: "Weather forecast",
        invoking: "Checking the forecast…",
        invoked: "Forecast ready",
        description: "Get the weather forecast for ONE city, for today and at most the 6 days \
            after it (Vietnam time). Call it whenever the user asks about weather, temperature \
            or rain, or whether to sit outside. When the user names days, ask for exactly \
            those with `from`/`to` (YYYY-MM-DD): \"this weekend\" is from Saturday to Sunday \
            (only the days not yet past), \"tomorrow\" or \"Friday\" is `from` alone; use \
            `days` only for \"the next N days\", and never with `from`. A day past the \
            forecast cannot be asked for: say so instead. For two cities make two calls in the \
            same turn. Never describe the weather without calling it; report only what it \
            returns.",
        requires_approval: false,
        risk: Risk {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: true,
        },
        access: Access::Public,
    };
    type Input = GetWeatherInput;
    type Output = GetWeatherOutput;

    fn check(input: &Self::Input, ctx: &ValidationContext) -> Vec<ValidationIssue> {
        let mut issues = Vec::new();
        if input.city.trim().is_empty() {
            issues.push(ValidationIssue::broke(
                "city",
                Rule::Blank,
                "must not be blank",
            ));
        }
        if let Err(found) = input.span(vietnam_date(ctx.now)) {
            issues.extend(found);
        }
        issues
    }
}

#[cfg(all(test, feature = "validate"))]
mod tests {
    use chrono::{TimeZone, Utc};
    use serde_json::json;

    use super::*;
    use crate::tools::{validate_arguments, ToolInput};

    /// Thursday 3 December 2026, 23:30 in Vietnam (16:30 UTC): late enough that a UTC
    /// "today" would still be the 3rd and a careless one the wrong week's end.
    fn ctx() -> ValidationContext {
        ValidationContext {
            now: Utc.with_ymd_and_hms(2026, 12, 3, 16, 30, 0).unwrap(),
        }
    }

    fn valid(arguments: serde_json::Value) -> GetWeatherInput {
        match validate_arguments(ToolName::GetWeather, &arguments.to_string(), &ctx()) {
            Ok(ToolInput::GetWeather(input)) => input,
            other => panic!("{arguments} was not a valid getWeather call: {other:?}"),
        }
    }

    /// The issues of an invalid call, as (path, rule, message).
    fn refused(arguments: serde_json::Value) -> Vec<(String, Rule, String)> {
        match validate_arguments(ToolName::GetWeather, &arguments.to_string(), &ctx()) {
            Err(error) => error
                .issues
                .into_iter()
                .map(|issue| (issue.path, issue.rule, issue.message))
                .collect(),
            Ok(input) => panic!("{arguments} was accepted: {input:?}"),
        }
    }

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn named_days_within_the_week_are_spans_of_exactly_those_days() {
        let today = vietnam_date(ctx().now);
        assert_eq!(today, day("2026-12-03"));
        // The weekend: Saturday and Sunday only.
        let weekend = valid(json!({"city": "Đà Lạt", "from": "2026-12-05", "to": "2026-12-06"}));
        let span = weekend.span(today).unwrap();
        assert_eq!(
            (span.first, span.count, span.named),
            (day("2026-12-05"), 2, true)
        );
        assert_eq!(span.last(), day("2026-12-06"));
        // One day, alone; today and the forecast's last day are both in reach.
        for (from, expected) in [("2026-12-04", "2026-12-04"), ("2026-12-03", "2026-12-03")] {
            let span = valid(json!({"city": "Huế", "from": from}))
                .span(today)
                .unwrap();
            assert_eq!((span.first, span.count), (day(expected), 1), "{from}");
        }
        let last = valid(json!({"city": "Huế", "from": "2026-12-09", "to": "2026-12-09"}));
        assert_eq!(last.span(today).unwrap().count, 1);
        let week = valid(json!({"city": "Huế", "from": "2026-12-03", "to": "2026-12-09"}));
        assert_eq!(week.span(today).unwrap().count, 7);
        // Old callers and stored calls: a count from today, or today alone.
        let counted = valid(json!({"city": "Huế", "days": 3}))
            .span(today)
            .unwrap();
        assert_eq!(
            (counted.first, counted.count, counted.named),
            (today, 3, false)
        );
        let plain = valid(json!({"city": "Huế"})).span(today).unwrap();
        assert_eq!((plain.first, plain.count, plain.named), (today, 1, false));
        // What is stored and streamed says only what was asked.
        assert_eq!(
            ToolInput::GetWeather(weekend).to_json(),
            json!({"city": "Đà Lạt", "from": "2026-12-05", "to": "2026-12-06"})
        );
    }

    #[test]
    fn a_day_before_today_is_refused_at_its_field() {
        assert_eq!(
            refused(json!({"city": "Huế", "from": "2026-12-02"})),
            [(
                "from".to_owned(),
                Rule::InPast,
                "2026-12-02 is in the past; the forecast starts today, 2026-12-03".to_owned()
            )]
        );
        // Both ends past: both said.
        let issues = refused(json!({"city": "Huế", "from": "2026-11-28", "to": "2026-11-29"}));
        let paths: Vec<&str> = issues.iter().map(|(path, _, _)| path.as_str()).collect();
        assert_eq!(paths, ["from", "to"]);
        assert!(issues.iter().all(|(_, rule, _)| *rule == Rule::InPast));
    }

    #[test]
    fn a_day_past_the_forecast_is_refused_with_the_forecasts_reach() {
        let beyond = Rule::BeyondForecast { days: 7 };
        assert_eq!(
            refused(json!({"city": "Huế", "from": "2026-12-05", "to": "2026-12-10"})),
            [(
                "to".to_owned(),
                beyond.clone(),
                "2026-12-10 is beyond the 7-day forecast, which covers 2026-12-03 to 2026-12-09"
                    .to_owned()
            )]
        );
        let issues = refused(json!({"city": "Huế", "from": "2026-12-12"}));
        assert_eq!(issues.len(), 1);
        assert_eq!((issues[0].0.as_str(), &issues[0].1), ("from", &beyond));
    }

    #[test]
    fn from_after_to_is_refused() {
        let issues = refused(json!({"city": "Huế", "from": "2026-12-06", "to": "2026-12-05"}));
        assert_eq!(
            issues,
            [(
                "from".to_owned(),
                Rule::MinAboveMax {
                    max_field: "to".into()
                },
                "from (2026-12-06) is after to (2026-12-05)".to_owned()
            )]
        );
    }

    #[test]
    fn days_and_from_are_two_answers_to_one_question() {
        let issues = refused(json!({"city": "Huế", "days": 2, "from": "2026-12-05"}));
        assert_eq!(issues.len(), 1, "{issues:?}");
        let (path, rule, message) = &issues[0];
        assert_eq!(path, "days");
        assert_eq!(
            *rule,
            Rule::Exclusive {
                with: "from".into()
            }
        );
        assert!(message.contains("not both"), "{message}");
        // `to` alone has no first day: the call must say it.
        let issues = refused(json!({"city": "Huế", "to": "2026-12-05"}));
        assert_eq!(
            issues
                .iter()
                .map(|(p, r, _)| (p.as_str(), r))
                .collect::<Vec<_>>(),
            [("from", &Rule::Missing)]
        );
        // Dates are dates.
        let issues = refused(json!({"city": "Huế", "from": "Saturday"}));
        assert_eq!(
            (issues[0].0.as_str(), &issues[0].1),
            ("from", &Rule::DateFormat)
        );
    }

    #[test]
    fn the_persons_sentences_name_the_days_fields() {
        use crate::explain::reason;
        use crate::lang::Lang;
        use crate::tools::{ErrorCode, ToolError};
        let error = |arguments: serde_json::Value| {
            let invalid = validate_arguments(ToolName::GetWeather, &arguments.to_string(), &ctx())
                .unwrap_err();
            ToolError::from(invalid)
        };
        let both = error(json!({"city": "Huế", "days": 2, "from": "2026-12-05"}));
        assert_eq!(both.code, ErrorCode::ValidationError);
        assert_eq!(
            reason(&both, Lang::Vi),
            "Chỉ nêu số ngày hoặc ngày bắt đầu, không nêu cả hai."
        );
        assert_eq!(
            reason(&both, Lang::En),
            "Give the number of days or the first day, not both."
        );
        let far = error(json!({"city": "Huế", "from": "2026-12-24"}));
        assert_eq!(
            reason(&far, Lang::Vi),
            "Chỉ có dự báo thời tiết cho 7 ngày, tính từ hôm nay."
        );
        let reversed = error(json!({"city": "Huế", "from": "2026-12-06", "to": "2026-12-05"}));
        assert_eq!(
            reason(&reversed, Lang::En),
            "The first day is after the last day."
        );
    }

    #[test]
    fn stored_outputs_without_named_days_still_read() {
        let old: GetWeatherOutput = serde_json::from_value(json!({"city": "Huế", "days": []}))
            .expect("an output stored before `asked`");
        assert_eq!(old.asked, None);
        let new = GetWeatherOutput {
            asked: Some(AskedDays {
                from: day("2026-12-05"),
                to: day("2026-12-06"),
            }),
            ..old
        };
        let written = serde_json::to_value(&new).unwrap();
        assert_eq!(
            written["asked"],
            json!({"from": "2026-12-05", "to": "2026-12-06"})
        );
        assert_eq!(
            serde_json::from_value::<GetWeatherOutput>(written).ok(),
            Some(new)
        );
    }
}

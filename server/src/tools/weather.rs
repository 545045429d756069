//! `getWeather`: a deterministic forecast from each city's early-winter climate.
//!
//! There is no weather service behind it. Each day's numbers come from a stable hash of
//! (city, date), so the same question gets the same answer on every machine and run, and
//! the values stay inside what late November–December is like in that city.

use chrono::{DateTime, NaiveDate, Utc};
use shared::tools::{DailyForecast, GetWeatherInput, GetWeatherOutput, WeatherCondition};

use super::{
    city::{canonical_city, cities_list, vietnam_today},
    ExecError, ToolContext,
};

/// The city name that makes the tool fail as if its backend were down (tests, demos).
pub const FAIL_TRIGGER: &str = "#fail";

/// What late November–December is like in one city.
struct Climate {
    /// Range of the daily low, °C.
    min_c: (i8, i8),
    /// Range of the daily high on a dry day, °C.
    max_c: (i8, i8),
    /// Range of the chance of rain, percent.
    rain: (u8, u8),
    /// Whether the wettest days are thunderstorms (the central coast's rainy season).
    storms: bool,
}

fn climate(city: &str) -> Option<Climate> {
    let climate = match city {
        // Dry, cool winter; drizzle at most.
        "Hà Nội" => Climate {
            min_c: (15, 18),
            max_c: (20, 23),
            rain: (5, 45),
            storms: false,
        },
        // Start of the dry season.
        "TP. Hồ Chí Minh" => Climate {
            min_c: (24, 26),
            max_c: (29, 32),
            rain: (5, 50),
            storms: false,
        },
        // Highlands: cool nights, mild days.
        "Đà Lạt" => Climate {
            min_c: (13, 16),
            max_c: (18, 22),
            rain: (10, 55),
            storms: false,
        },
        // Central coast rainy season.
        "Đà Nẵng" => Climate {
            min_c: (20, 22),
            max_c: (24, 27),
            rain: (40, 95),
            storms: true,
        },
        "Huế" => Climate {
            min_c: (19, 21),
            max_c: (22, 25),
            rain: (45, 95),
            storms: true,
        },
        _ => return None,
    };
    Some(climate)
}

/// 64-bit FNV-1a: stable across runs, platforms and Rust versions (unlike `RandomState`).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// A value in `low..=high` picked by `bits`.
fn pick(bits: u64, low: i16, high: i16) -> i16 {
    let span = u64::from((high - low).unsigned_abs()) + 1;
    // `bits % span` < span <= 256, so it fits.
    low + i16::try_from(bits % span).unwrap_or(0)
}

/// One day's forecast for a city with the given climate.
fn forecast(city: &str, climate: &Climate, date: NaiveDate) -> DailyForecast {
    let hash = fnv1a(format!("{city}\u{0}{date}").as_bytes());
    let rain = pick(
        hash & 0xffff,
        i16::from(climate.rain.0),
        i16::from(climate.rain.1),
    );
    let condition = match rain {
        r if r < 20 => WeatherCondition::Sunny,
        r if r < 40 => WeatherCondition::PartlyCloudy,
        r if r < 60 => WeatherCondition::Cloudy,
        r if r >= 88 && climate.storms => WeatherCondition::Storm,
        _ => WeatherCondition::Rain,
    };
    // Clouds and rain keep the afternoon cooler.
    let cooling = match condition {
        WeatherCondition::Sunny | WeatherCondition::PartlyCloudy => 0,
        WeatherCondition::Cloudy => 1,
        WeatherCondition::Rain => 2,
        WeatherCondition::Storm => 3,
    };
    let min = pick(
        (hash >> 16) & 0xffff,
        i16::from(climate.min_c.0),
        i16::from(climate.min_c.1),
    );
    let max = (pick(
        (hash >> 32) & 0xffff,
        i16::from(climate.max_c.0),
        i16::from(climate.max_c.1),
    ) - cooling)
        .max(i16::from(climate.max_c.0))
        .max(min + 2);
    DailyForecast {
        date,
        condition,
        temp_min_c: i8::try_from(min).unwrap_or(i8::MAX),
        temp_max_c: i8::try_from(max).unwrap_or(i8::MAX),
        precipitation_chance: u8::try_from(rain.clamp(0, 100)).unwrap_or(100),
    }
}

/// The forecast for `days` days starting at `now`'s local date.
fn forecast_days(
    city: &str,
    climate: &Climate,
    now: DateTime<Utc>,
    days: u8,
) -> Result<Vec<DailyForecast>, ExecError> {
    let today = vietnam_today(now);
    (0..u64::from(days))
        .map(|offset| {
            today
                .checked_add_days(chrono::Days::new(offset))
                .map(|date| forecast(city, climate, date))
                .ok_or_else(|| ExecError::Internal(format!("date overflow after {today}")))
        })
        .collect()
}

/// Runs `getWeather`.
pub async fn run(
    input: &GetWeatherInput,
    ctx: &ToolContext,
) -> Result<GetWeatherOutput, ExecError> {
    let typed = input.city.trim();
    if typed == FAIL_TRIGGER {
        return Err(ExecError::Internal(
            "weather backend: connection refused (weather-backend.internal:8443) [test trigger]"
                .into(),
        ));
    }
    if !(1..=7).contains(&input.days) {
        return Err(ExecError::invalid(format!(
            "days must be between 1 and 7, got {}",
            input.days
        )));
    }
    let Some((city, climate)) =
        canonical_city(typed).and_then(|city| climate(city).map(|climate| (city, climate)))
    else {
        return Err(ExecError::invalid(format!(
            "no forecast for \"{typed}\"; available cities: {}",
            cities_list()
        )));
    };
    Ok(GetWeatherOutput {
        city: city.to_owned(),
        days: forecast_days(city, &climate, ctx.now, input.days)?,
    })
}

#[cfg(test)]
mod tests {
    use shared::tools::ErrorCode;

    use super::*;
    use crate::tools::city::CITIES;

    /// A context on a fresh test database (SQLite, or Postgres under
    /// `DATBAN_TEST_POSTGRES_URL`); keep the guard alive for the test.
    async fn context(now: &str) -> (ToolContext, crate::db::test_db::TestDatabase) {
        let (db, guard) = crate::db::test_pool().await;
        let ctx = ToolContext {
            db,
            owner_id: "owner".into(),
            conversation_id: "conversation".into(),
            call_id: "call".into(),
            now: DateTime::parse_from_rfc3339(now)
                .unwrap()
                .with_timezone(&Utc),
            upstreams: Default::default(),
        };
        (ctx, guard)
    }

    fn input(city: &str, days: u8) -> GetWeatherInput {
        GetWeatherInput {
            city: city.into(),
            days,
        }
    }

    fn date(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[tokio::test]
    async fn same_question_same_answer() {
        let (ctx, _db) = context("2026-11-30T03:00:00Z").await;
        let first = run(&input("Hà Nội", 7), &ctx).await.unwrap();
        let second = run(&input("ha noi", 7), &ctx).await.unwrap();
        assert_eq!(first, second);
        assert_eq!(first.city, "Hà Nội");
        // Not one constant day repeated: a hash that ignored the date would fail this.
        let distinct: std::collections::HashSet<_> = first
            .days
            .iter()
            .map(|d| (d.temp_min_c, d.temp_max_c, d.precipitation_chance))
            .collect();
        assert!(distinct.len() > 1, "{first:?}");
    }

    #[tokio::test]
    async fn returns_the_requested_number_of_consecutive_days() {
        let (ctx, _db) = context("2026-11-30T03:00:00Z").await;
        for days in 1..=7 {
            let output = run(&input("Đà Nẵng", days), &ctx).await.unwrap();
            assert_eq!(output.days.len(), usize::from(days));
            for (i, day) in output.days.iter().enumerate() {
                let expected = date("2026-11-30")
                    .checked_add_days(chrono::Days::new(i as u64))
                    .unwrap();
                assert_eq!(day.date, expected);
            }
        }
        let error = run(&input("Đà Nẵng", 8), &ctx).await.unwrap_err();
        assert!(matches!(error, ExecError::Tool(e) if e.code == ErrorCode::ValidationError));
    }

    #[tokio::test]
    async fn days_start_at_the_local_date() {
        // 23:59 in Vietnam on the 29th.
        let (before, _db) = context("2026-11-29T16:59:00Z").await;
        let output = run(&input("Huế", 2), &before).await.unwrap();
        assert_eq!(output.days[0].date, date("2026-11-29"));
        assert_eq!(output.days[1].date, date("2026-11-30"));
        // 00:01 in Vietnam on the 30th, although it is still the 29th in UTC.
        let after = ToolContext {
            now: DateTime::parse_from_rfc3339("2026-11-29T17:01:00Z")
                .unwrap()
                .with_timezone(&Utc),
            ..before
        };
        let output = run(&input("Huế", 2), &after).await.unwrap();
        assert_eq!(output.days[0].date, date("2026-11-30"));
        assert_eq!(output.days[1].date, date("2026-12-01"));
    }

    #[tokio::test]
    async fn values_are_plausible_and_consistent() {
        let ranges: [(&str, i8, i8); 5] = [
            ("Hà Nội", 15, 23),
            ("TP. Hồ Chí Minh", 24, 32),
            ("Đà Lạt", 13, 22),
            ("Đà Nẵng", 20, 27),
            ("Huế", 19, 25),
        ];
        let mut conditions = std::collections::HashSet::new();
        for start in [
            "2026-11-20T03:00:00Z",
            "2026-12-05T03:00:00Z",
            "2026-12-19T03:00:00Z",
        ] {
            let (ctx, _db) = context(start).await;
            for (city, low, high) in ranges {
                let output = run(&input(city, 7), &ctx).await.unwrap();
                assert_eq!(output.city, city);
                for day in &output.days {
                    assert!(low <= day.temp_min_c, "{city} {day:?}");
                    assert!(day.temp_min_c < day.temp_max_c, "{city} {day:?}");
                    assert!(day.temp_max_c <= high, "{city} {day:?}");
                    assert!(day.precipitation_chance <= 100);
                    let rain = day.precipitation_chance;
                    match day.condition {
                        WeatherCondition::Sunny => assert!(rain < 20, "{day:?}"),
                        WeatherCondition::PartlyCloudy => assert!((20..40).contains(&rain)),
                        WeatherCondition::Cloudy => assert!((40..60).contains(&rain)),
                        WeatherCondition::Rain => assert!(rain >= 60, "{day:?}"),
                        WeatherCondition::Storm => {
                            assert!(rain >= 88, "{day:?}");
                            assert!(city == "Đà Nẵng" || city == "Huế");
                        }
                    }
                    conditions.insert(format!("{:?}", day.condition));
                }
            }
        }
        // The hash spreads days over several kinds of sky.
        assert!(conditions.len() >= 3, "{conditions:?}");
    }

    #[tokio::test]
    async fn every_city_has_a_forecast() {
        let (ctx, _db) = context("2026-11-30T03:00:00Z").await;
        for city in CITIES {
            assert_eq!(run(&input(city, 1), &ctx).await.unwrap().city, city);
        }
        assert_eq!(
            run(&input("saigon", 1), &ctx).await.unwrap().city,
            "TP. Hồ Chí Minh"
        );
    }

    #[tokio::test]
    async fn fail_trigger_is_an_internal_error() {
        let (ctx, _db) = context("2026-11-30T03:00:00Z").await;
        match run(&input("#fail", 1), &ctx).await {
            Err(ExecError::Internal(message)) => {
                assert!(message.contains("connection refused"), "{message}")
            }
            other => panic!("expected an internal error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn unknown_city_is_a_validation_error() {
        let (ctx, _db) = context("2026-11-30T03:00:00Z").await;
        match run(&input("Paris", 3), &ctx).await {
            Err(ExecError::Tool(error)) => {
                assert_eq!(error.code, ErrorCode::ValidationError);
                assert!(!error.retryable);
                assert_eq!(
                    error.message,
                    "no forecast for \"Paris\"; available cities: Hà Nội, TP. Hồ Chí Minh, \
                     Đà Lạt, Đà Nẵng, Huế"
                );
            }
            other => panic!("expected a validation error, got {other:?}"),
        }
    }
}

/// A weather service reached over HTTP (being written).
#[derive(Clone, Debug)]
pub struct WeatherService {
    /// Where it answers.
    pub base_url: String,
}

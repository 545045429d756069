//! `getWeather`: a forecast from a weather service, or from each city's early-winter
//! climate when none is configured.
//!
//! Without a service (the default) each day's numbers come from a stable hash of
//! (city, date), so the same question gets the same answer on every machine and run, and
//! the values stay inside what late November–December is like in that city. With one
//! (`DATBAN_WEATHER_URL`), [`WeatherService`] asks it over HTTP, and its failures become
//! structured, retryable infrastructure errors that say nothing about where it lives.

use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Deserialize;
use shared::tools::{
    DailyForecast, ErrorCode, GetWeatherInput, GetWeatherOutput, Rule, ToolError, WeatherCondition,
};

use super::{
    city::{canonical_city, cities_list, vietnam_today, CITIES},
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
        let rule = if input.days < 1 {
            Rule::BelowMinimum {
                min: 1.into(),
                exclusive: false,
            }
        } else {
            Rule::AboveMaximum {
                max: 7.into(),
                exclusive: false,
            }
        };
        return Err(ExecError::invalid_at(
            "days",
            rule,
            format!("days must be between 1 and 7, got {}", input.days),
        ));
    }
    let Some((city, climate)) =
        canonical_city(typed).and_then(|city| climate(city).map(|climate| (city, climate)))
    else {
        return Err(ExecError::invalid_at(
            "city",
            Rule::UnknownCity {
                available: CITIES.iter().map(|city| (*city).to_owned()).collect(),
            },
            format!(
                "no forecast for \"{typed}\"; available cities: {}",
                cities_list()
            ),
        ));
    };
    let days = match &ctx.upstreams.weather {
        Some(service) => {
            service
                .forecast(city, vietnam_today(ctx.now), input.days)
                .await?
        }
        None => forecast_days(city, &climate, ctx.now, input.days)?,
    };
    Ok(GetWeatherOutput {
        city: city.to_owned(),
        days,
    })
}

/// What the model is told when the weather service answers too slowly.
pub const UPSTREAM_TIMEOUT_MESSAGE: &str =
    "The weather service did not answer in time. Try again later.";
/// What the model is told when the weather service is down, busy or answers nonsense.
pub const UPSTREAM_UNAVAILABLE_MESSAGE: &str =
    "The weather service is unavailable right now. Try again later.";

/// Why a [`WeatherService`] could not be set up (at start-up, never per request).
#[derive(Debug, thiserror::Error)]
pub enum WeatherServiceError {
    /// The base URL is not an absolute http:// or https:// URL.
    #[error("the weather service URL must be an http:// or https:// URL")]
    BadUrl,
    /// The HTTP client could not be built.
    #[error("cannot build the weather service's HTTP client: {0}")]
    Client(String),
}

/// A weather service reached over HTTP: `GET {base}/forecast?city=&days=&start=` answers
/// `{"days":[{"date","condition","minC","maxC","rainChance"}, …]}`.
#[derive(Clone)]
pub struct WeatherService {
    client: reqwest::Client,
    /// `{base}/forecast`, without a query.
    forecast_url: reqwest::Url,
}

impl std::fmt::Debug for WeatherService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The host only: a base URL may carry credentials in its user info.
        f.debug_struct("WeatherService")
            .field("host", &self.forecast_url.host_str())
            .finish_non_exhaustive()
    }
}

/// The service's answer.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ForecastBody {
    days: Vec<ForecastDay>,
}

/// One day as the service sends it; [`DailyForecast`] in the service's field names.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ForecastDay {
    date: NaiveDate,
    /// The same kebab-case names as ours ("partly-cloudy").
    condition: WeatherCondition,
    min_c: i8,
    max_c: i8,
    rain_chance: u8,
}

impl WeatherService {
    /// A client for the service at `base_url`; each request (connecting, waiting for the
    /// answer and reading it) is given at most `timeout`.
    pub fn new(base_url: String, timeout: Duration) -> Result<Self, WeatherServiceError> {
        let mut forecast_url =
            reqwest::Url::parse(base_url.trim()).map_err(|_| WeatherServiceError::BadUrl)?;
        if !matches!(forecast_url.scheme(), "http" | "https") {
            return Err(WeatherServiceError::BadUrl);
        }
        forecast_url
            .path_segments_mut()
            .map_err(|()| WeatherServiceError::BadUrl)?
            // "http://host/api/" and "http://host/api" both give ".../api/forecast".
            .pop_if_empty()
            .push("forecast");
        forecast_url.set_query(None);
        // rustls needs a process-wide crypto provider; a second install is a harmless no-op.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(timeout)
            .timeout(timeout)
            .build()
            .map_err(|e| WeatherServiceError::Client(e.to_string()))?;
        Ok(Self {
            client,
            forecast_url,
        })
    }

    /// `days` days of forecast for the canonical `city`, starting at `start`.
    ///
    /// Failures are the model's kind of error: `UPSTREAM_TIMEOUT` or
    /// `UPSTREAM_UNAVAILABLE`, retryable, with a short message. Where the service is, its
    /// status and the HTTP error go to the log only.
    pub async fn forecast(
        &self,
        city: &str,
        start: NaiveDate,
        days: u8,
    ) -> Result<Vec<DailyForecast>, ExecError> {
        let mut url = self.forecast_url.clone();
        url.query_pairs_mut()
            .append_pair("city", city)
            .append_pair("days", &days.to_string())
            .append_pair("start", &start.format("%Y-%m-%d").to_string());
        let response = self
            .client
            .get(url.clone())
            .send()
            .await
            .map_err(|error| request_failed(&url, &error))?;
        let status = response.status();
        if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            tracing::warn!(%url, %status, "weather service unavailable");
            return Err(unavailable());
        }
        if !status.is_success() {
            // A 4xx means our request or configuration is wrong: not worth a retry.
            tracing::warn!(%url, %status, "weather service refused the request");
            return Err(ExecError::Internal(format!(
                "weather service answered {status}"
            )));
        }
        // Read as bytes first, so a slow body is a timeout and a bad one a decode error.
        let bytes = response
            .bytes()
            .await
            .map_err(|error| request_failed(&url, &error))?;
        let body: ForecastBody = serde_json::from_slice(&bytes).map_err(|error| {
            tracing::warn!(%url, %error, "weather service sent a malformed forecast");
            unavailable()
        })?;
        check_days(body, start, days).map_err(|problem| {
            tracing::warn!(%url, %problem, "weather service sent an unusable forecast");
            unavailable()
        })
    }
}

/// The forecast, if it is the days asked for, in order, with sane values.
fn check_days(
    body: ForecastBody,
    start: NaiveDate,
    days: u8,
) -> Result<Vec<DailyForecast>, String> {
    if body.days.len() != usize::from(days) {
        return Err(format!("{} days instead of {days}", body.days.len()));
    }
    body.days
        .into_iter()
        .enumerate()
        .map(|(offset, day)| {
            let expected = start.checked_add_days(chrono::Days::new(offset as u64));
            if Some(day.date) != expected {
                return Err(format!("day {offset} is {}", day.date));
            }
            if day.min_c > day.max_c || day.rain_chance > 100 {
                return Err(format!("impossible values on {}", day.date));
            }
            Ok(DailyForecast {
                date: day.date,
                condition: day.condition,
                temp_min_c: day.min_c,
                temp_max_c: day.max_c,
                precipitation_chance: day.rain_chance,
            })
        })
        .collect()
}

fn unavailable() -> ExecError {
    ExecError::Tool(ToolError::new(
        ErrorCode::UpstreamUnavailable,
        UPSTREAM_UNAVAILABLE_MESSAGE,
    ))
}

/// A request that got no usable answer: too slow, or not reachable at all.
fn request_failed(url: &reqwest::Url, error: &reqwest::Error) -> ExecError {
    if error.is_timeout() {
        tracing::warn!(%url, %error, "weather service timed out");
        ExecError::Tool(ToolError::new(
            ErrorCode::UpstreamTimeout,
            UPSTREAM_TIMEOUT_MESSAGE,
        ))
    } else {
        tracing::warn!(%url, %error, "weather service unreachable");
        unavailable()
    }
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
            take: None,
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

#[cfg(test)]
mod upstream_tests {
    use std::{
        collections::HashMap,
        net::SocketAddr,
        sync::{Arc, Mutex},
    };

    use axum::{extract::Query, http::StatusCode, routing::get, Json, Router};
    use serde_json::{json, Value};

    use super::*;
    use crate::tools::Upstreams;

    /// Queries the fake received.
    type Seen = Arc<Mutex<Vec<HashMap<String, String>>>>;

    /// Serves `router` on 127.0.0.1 on a free port; the server stops with the test's runtime.
    async fn serve(router: Router) -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        addr
    }

    /// A fake that answers each request with a forecast of what was asked, from fixed
    /// values nothing in the climate tables produces (−5…40 °C, 77 %).
    async fn forecasting_fake() -> (SocketAddr, Seen) {
        let seen: Seen = Arc::default();
        let recorded = seen.clone();
        let router = Router::new().route(
            "/forecast",
            get(move |Query(query): Query<HashMap<String, String>>| {
                let recorded = recorded.clone();
                async move {
                    recorded.lock().unwrap().push(query.clone());
                    let start = NaiveDate::parse_from_str(&query["start"], "%Y-%m-%d").unwrap();
                    let days: u64 = query["days"].parse().unwrap();
                    let days: Vec<Value> = (0..days)
                        .map(|i| {
                            json!({
                                "date": start.checked_add_days(chrono::Days::new(i)).unwrap(),
                                "condition": "storm",
                                "minC": -5,
                                "maxC": 40,
                                "rainChance": 77,
                            })
                        })
                        .collect();
                    Json(json!({ "days": days }))
                }
            }),
        );
        (serve(router).await, seen)
    }

    async fn fake_answering(status: StatusCode, body: &'static str) -> SocketAddr {
        serve(Router::new().route("/forecast", get(move || async move { (status, body) }))).await
    }

    fn service(addr: SocketAddr, timeout: Duration) -> WeatherService {
        WeatherService::new(format!("http://{addr}"), timeout).unwrap()
    }

    async fn context(service: WeatherService) -> (ToolContext, crate::db::test_db::TestDatabase) {
        let (db, guard) = crate::db::test_pool().await;
        let ctx = ToolContext {
            db,
            owner_id: "owner".into(),
            conversation_id: "conversation".into(),
            call_id: "call".into(),
            // 10:00 on 30 November in Việt Nam.
            now: DateTime::parse_from_rfc3339("2026-11-30T03:00:00Z")
                .unwrap()
                .with_timezone(&Utc),
            upstreams: Upstreams {
                weather: Some(service),
            },
            take: None,
        };
        (ctx, guard)
    }

    fn input(city: &str, days: u8) -> GetWeatherInput {
        GetWeatherInput {
            city: city.into(),
            days,
        }
    }

    /// Runs getWeather against the service and expects a retryable `code`, whose message
    /// says nothing about where the service is.
    async fn expect_error(service: WeatherService, addr: SocketAddr, code: ErrorCode) {
        let (ctx, _db) = context(service).await;
        match run(&input("Hà Nội", 2), &ctx).await {
            Err(ExecError::Tool(error)) => {
                assert_eq!(error.code, code, "{error:?}");
                assert!(error.retryable, "{error:?}");
                assert_eq!(
                    error.code.class(),
                    shared::tools::ErrorClass::Infrastructure
                );
                let message = &error.message;
                assert!(message.ends_with("Try again later."), "{message}");
                for leak in [
                    "127.0.0.1".to_owned(),
                    addr.port().to_string(),
                    "http".to_owned(),
                    "forecast?".to_owned(),
                ] {
                    assert!(!message.contains(&leak), "{message} contains {leak}");
                }
            }
            other => panic!("expected {code:?}, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_configured_service_is_used() {
        let (addr, seen) = forecasting_fake().await;
        let (ctx, _db) = context(service(addr, Duration::from_secs(5))).await;
        let output = run(&input("ha noi", 3), &ctx).await.unwrap();
        assert_eq!(output.city, "Hà Nội");
        assert_eq!(output.days.len(), 3);
        for (i, day) in output.days.iter().enumerate() {
            let expected = NaiveDate::from_ymd_opt(2026, 11, 30)
                .unwrap()
                .checked_add_days(chrono::Days::new(i as u64))
                .unwrap();
            assert_eq!(day.date, expected);
            assert_eq!(day.condition, WeatherCondition::Storm);
            assert_eq!((day.temp_min_c, day.temp_max_c), (-5, 40));
            assert_eq!(day.precipitation_chance, 77);
        }
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0]["city"], "Hà Nội", "the canonical name is sent");
        assert_eq!(seen[0]["days"], "3");
        assert_eq!(seen[0]["start"], "2026-11-30");
    }

    #[tokio::test]
    async fn a_base_url_with_a_path_keeps_it() {
        let (addr, seen) = forecasting_fake().await;
        // The fake serves /forecast only: a base of "/" (with or without slash) reaches it.
        for base in [format!("http://{addr}/"), format!("http://{addr}")] {
            let service = WeatherService::new(base, Duration::from_secs(5)).unwrap();
            let (ctx, _db) = context(service).await;
            run(&input("Huế", 1), &ctx).await.unwrap();
        }
        assert_eq!(seen.lock().unwrap().len(), 2);
        let nested = WeatherService::new(
            "http://example.invalid/api/v1/".into(),
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(
            nested.forecast_url.as_str(),
            "http://example.invalid/api/v1/forecast"
        );
        for bad in [
            "",
            "weather.local",
            "ftp://example.invalid/",
            "mailto:x@example.invalid",
        ] {
            assert!(
                WeatherService::new(bad.into(), Duration::from_secs(1)).is_err(),
                "{bad} accepted"
            );
        }
    }

    #[tokio::test]
    async fn a_503_is_unavailable() {
        let addr = fake_answering(StatusCode::SERVICE_UNAVAILABLE, "maintenance").await;
        let service = service(addr, Duration::from_secs(5));
        expect_error(service, addr, ErrorCode::UpstreamUnavailable).await;
    }

    #[tokio::test]
    async fn a_429_is_unavailable() {
        let addr = fake_answering(StatusCode::TOO_MANY_REQUESTS, "slow down").await;
        let service = service(addr, Duration::from_secs(5));
        expect_error(service, addr, ErrorCode::UpstreamUnavailable).await;
    }

    #[tokio::test]
    async fn a_malformed_body_is_unavailable() {
        for body in [
            "not json",
            r#"{"days":[{"date":"2026-11-30","condition":"hail","minC":1,"maxC":2,"rainChance":3}]}"#,
            // One day short of the two asked for.
            r#"{"days":[{"date":"2026-11-30","condition":"rain","minC":1,"maxC":2,"rainChance":3}]}"#,
        ] {
            let addr = fake_answering(StatusCode::OK, body).await;
            let service = service(addr, Duration::from_secs(5));
            expect_error(service, addr, ErrorCode::UpstreamUnavailable).await;
        }
    }

    #[tokio::test]
    async fn a_slow_service_times_out() {
        let router = Router::new().route(
            "/forecast",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "too late"
            }),
        );
        let addr = serve(router).await;
        let started = std::time::Instant::now();
        let service = service(addr, Duration::from_millis(200));
        expect_error(service, addr, ErrorCode::UpstreamTimeout).await;
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "the timeout was not applied"
        );
    }

    #[tokio::test]
    async fn nothing_listening_is_unavailable() {
        // A port bound but never listening: connections to it are refused, and since it
        // stays bound no other test's fake can take it meanwhile (a released port could be
        // handed to one, which would then answer this test's request).
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = socket.local_addr().unwrap();
        let service = service(addr, Duration::from_secs(5));
        expect_error(service, addr, ErrorCode::UpstreamUnavailable).await;
        drop(socket);
    }

    #[tokio::test]
    async fn validation_still_comes_first() {
        // Never asked: an unknown city or a bad day count is the model's to fix.
        let (addr, seen) = forecasting_fake().await;
        let (ctx, _db) = context(service(addr, Duration::from_secs(5))).await;
        let error = run(&input("Paris", 1), &ctx).await.unwrap_err();
        assert!(matches!(error, ExecError::Tool(e) if e.code == ErrorCode::ValidationError));
        let error = run(&input("Huế", 8), &ctx).await.unwrap_err();
        assert!(matches!(error, ExecError::Tool(e) if e.code == ErrorCode::ValidationError));
        assert!(seen.lock().unwrap().is_empty());
    }
}

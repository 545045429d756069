//! `getWeather`: a forecast from a weather service, or from each city's early-winter
//! climate when none is configured.
//!
//! Without a service (the default) each day's numbers come from a stable hash of
//! (city, date), so the same question gets the same answer on every machine and run, and
//! the values stay inside what late November–December is like in that city. With one
//! (`DATBAN_WEATHER_URL`), [`WeatherService`] asks it over HTTP, and its failures become
//! structured, retryable infrastructure errors that say nothing about where it lives.

use std::time::Duration;

use chrono::NaiveDate;
use serde::Deserialize;
use shared::tools::{
    AskedDays, DailyForecast, ErrorCode, GetWeatherInput, GetWeatherOutput, Rule, ToolError,
    WeatherCondition,
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

/// The forecast for `count` days from `first`.
fn forecast_days(
    city: &str,
    climate: &Climate,
    first: NaiveDate,
    count: u8,
) -> Result<Vec<DailyForecast>, ExecError> {
    (0..u64::from(count))
        .map(|offset| {
            first
                .checked_add_days(chrono::Days::new(offset))
                .map(|date| forecast(city, climate, date))
                .ok_or_else(|| ExecError::Internal(format!("date overflow after {first}")))
        })
        .collect()
}

/// Runs `getWeather`: exactly the days asked for, counted from today or named.
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
    // The model's calls were validated against the same rules a moment ago; an input
    // that was not (a test's, a stored one run again after midnight) is held to them here,
    // so no forecast reaches past the week or before today.
    let span = input.span(vietnam_today(ctx.now)).map_err(|issues| {
        let message = issues
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        ExecError::Tool(ToolError::new(ErrorCode::ValidationError, message).with_issues(issues))
    })?;
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
        Some(service) => service.forecast(city, span.first, span.count).await?,
        None => forecast_days(city, &climate, span.first, span.count)?,
    };
    Ok(GetWeatherOutput {
        city: city.to_owned(),
        days,
        asked: span.named.then(|| AskedDays {
            from: span.first,
            to: span.last(),
        }),
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

/// `getWeather`'s executor.
impl super::Executor for shared::tools::GetWeather {
    async fn execute(
        input: &shared::tools::GetWeatherInput,
        ctx: &ToolContext,
    ) -> Result<shared::tools::GetWeatherOutput, ExecError> {
        run(input, ctx).await
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod upstream_tests;

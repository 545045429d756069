//! `upstream_tests` of `weather`.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use axum::{extract::Query, http::StatusCode, routing::get, Json, Router};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::*;
use crate::tools::Upstreams;

/// A failure of the code under test ends the test with its message, not a panic at
/// an `unwrap`.
type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Queries the fake received.
type Seen = Arc<Mutex<Vec<HashMap<String, String>>>>;

/// The queries seen so far; a panic elsewhere while holding the lock leaves plain data
/// that is still usable.
fn queries(seen: &Seen) -> MutexGuard<'_, Vec<HashMap<String, String>>> {
    seen.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Serves `router` on 127.0.0.1 on a free port; the server stops with the test's runtime.
async fn serve(router: Router) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        // The test only sees its requests fail; this says why.
        if let Err(error) = axum::serve(listener, router).await {
            eprintln!("the fake weather service stopped: {error}");
        }
    });
    Ok(addr)
}

/// The fake's forecast for `query`: every day asked for, from the fixed values.
fn forecast(query: &HashMap<String, String>) -> Result<Value, Box<dyn std::error::Error>> {
    let start = query.get("start").ok_or("no start in the query")?;
    let start = NaiveDate::parse_from_str(start, "%Y-%m-%d")?;
    let days: u64 = query.get("days").ok_or("no days in the query")?.parse()?;
    let days = (0..days)
        .map(|i| {
            let date = start
                .checked_add_days(chrono::Days::new(i))
                .ok_or("a date out of range")?;
            Ok(json!({
                "date": date,
                "condition": "storm",
                "minC": -5,
                "maxC": 40,
                "rainChance": 77,
            }))
        })
        .collect::<Result<Vec<Value>, Box<dyn std::error::Error>>>()?;
    Ok(json!({ "days": days }))
}

/// A fake that answers each request with a forecast of what was asked, from fixed
/// values nothing in the climate tables produces (−5…40 °C, 77 %).
async fn forecasting_fake() -> std::io::Result<(SocketAddr, Seen)> {
    let seen: Seen = Arc::default();
    let recorded = seen.clone();
    let router = Router::new().route(
        "/forecast",
        get(move |Query(query): Query<HashMap<String, String>>| {
            let recorded = recorded.clone();
            async move {
                queries(&recorded).push(query.clone());
                forecast(&query)
                    .map(Json)
                    .map_err(|error| (StatusCode::BAD_REQUEST, error.to_string()))
            }
        }),
    );
    Ok((serve(router).await?, seen))
}

async fn fake_answering(status: StatusCode, body: &'static str) -> std::io::Result<SocketAddr> {
    serve(Router::new().route("/forecast", get(move || async move { (status, body) }))).await
}

fn service(addr: SocketAddr, timeout: Duration) -> Result<WeatherService, WeatherServiceError> {
    WeatherService::new(format!("http://{addr}"), timeout)
}

async fn context(
    service: WeatherService,
) -> Result<(ToolContext, crate::db::test_db::TestDatabase), chrono::ParseError> {
    let (db, guard) = crate::db::test_pool().await;
    let ctx = ToolContext {
        reads: crate::db::Reads::shared(db.clone()),
        db,
        owner_id: "owner".into(),
        conversation_id: "conversation".into(),
        call_id: "call".into(),
        // 10:00 on 30 November in Việt Nam.
        now: DateTime::parse_from_rfc3339("2026-11-30T03:00:00Z")?.with_timezone(&Utc),
        upstreams: Upstreams {
            weather: Some(service),
        },
        catalogue: Default::default(),
        take: None,
    };
    Ok((ctx, guard))
}

fn input(city: &str, days: u8) -> GetWeatherInput {
    GetWeatherInput {
        city: city.into(),
        days: Some(days),
        from: None,
        to: None,
    }
}

fn date(text: &str) -> Result<NaiveDate, chrono::ParseError> {
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
}

/// Runs getWeather against the service and expects a retryable `code`, whose message
/// says nothing about where the service is.
async fn expect_error(service: WeatherService, addr: SocketAddr, code: ErrorCode) -> TestResult {
    let (ctx, _db) = context(service).await?;
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
    Ok(())
}

#[tokio::test]
async fn a_configured_service_is_used() -> TestResult {
    let (addr, seen) = forecasting_fake().await?;
    let (ctx, _db) = context(service(addr, Duration::from_secs(5))?).await?;
    let output = run(&input("ha noi", 3), &ctx).await?;
    assert_eq!(output.city, "Hà Nội");
    assert_eq!(output.days.len(), 3);
    for (i, day) in output.days.iter().enumerate() {
        let expected = NaiveDate::from_ymd_opt(2026, 11, 30)
            .ok_or("a date out of range")?
            .checked_add_days(chrono::Days::new(i as u64))
            .ok_or("a date out of range")?;
        assert_eq!(day.date, expected);
        assert_eq!(day.condition, WeatherCondition::Storm);
        assert_eq!((day.temp_min_c, day.temp_max_c), (-5, 40));
        assert_eq!(day.precipitation_chance, 77);
    }
    let seen = queries(&seen).clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["city"], "Hà Nội", "the canonical name is sent");
    assert_eq!(seen[0]["days"], "3");
    assert_eq!(seen[0]["start"], "2026-11-30");
    Ok(())
}

#[tokio::test]
async fn a_base_url_with_a_path_keeps_it() -> TestResult {
    let (addr, seen) = forecasting_fake().await?;
    // The fake serves /forecast only: a base of "/" (with or without slash) reaches it.
    for base in [format!("http://{addr}/"), format!("http://{addr}")] {
        let service = WeatherService::new(base, Duration::from_secs(5))?;
        let (ctx, _db) = context(service).await?;
        run(&input("Huế", 1), &ctx).await?;
    }
    assert_eq!(queries(&seen).len(), 2);
    let nested = WeatherService::new(
        "http://example.invalid/api/v1/".into(),
        Duration::from_secs(1),
    )?;
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
    Ok(())
}

#[tokio::test]
async fn a_503_is_unavailable() -> TestResult {
    let addr = fake_answering(StatusCode::SERVICE_UNAVAILABLE, "maintenance").await?;
    let service = service(addr, Duration::from_secs(5))?;
    expect_error(service, addr, ErrorCode::UpstreamUnavailable).await
}

#[tokio::test]
async fn a_429_is_unavailable() -> TestResult {
    let addr = fake_answering(StatusCode::TOO_MANY_REQUESTS, "slow down").await?;
    let service = service(addr, Duration::from_secs(5))?;
    expect_error(service, addr, ErrorCode::UpstreamUnavailable).await
}

#[tokio::test]
async fn a_malformed_body_is_unavailable() -> TestResult {
    for body in [
        "not json",
        r#"{"days":[{"date":"2026-11-30","condition":"hail","minC":1,"maxC":2,"rainChance":3}]}"#,
        // One day short of the two asked for.
        r#"{"days":[{"date":"2026-11-30","condition":"rain","minC":1,"maxC":2,"rainChance":3}]}"#,
    ] {
        let addr = fake_answering(StatusCode::OK, body).await?;
        let service = service(addr, Duration::from_secs(5))?;
        expect_error(service, addr, ErrorCode::UpstreamUnavailable).await?;
    }
    Ok(())
}

#[tokio::test]
async fn a_slow_service_times_out() -> TestResult {
    let router = Router::new().route(
        "/forecast",
        get(|| async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            "too late"
        }),
    );
    let addr = serve(router).await?;
    let started = std::time::Instant::now();
    let service = service(addr, Duration::from_millis(200))?;
    expect_error(service, addr, ErrorCode::UpstreamTimeout).await?;
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the timeout was not applied"
    );
    Ok(())
}

#[tokio::test]
async fn nothing_listening_is_unavailable() -> TestResult {
    // A port bound but never listening: connections to it are refused, and since it
    // stays bound no other test's fake can take it meanwhile (a released port could be
    // handed to one, which would then answer this test's request).
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind("127.0.0.1:0".parse()?)?;
    let addr = socket.local_addr()?;
    let service = service(addr, Duration::from_secs(5))?;
    expect_error(service, addr, ErrorCode::UpstreamUnavailable).await?;
    drop(socket);
    Ok(())
}

#[tokio::test]
async fn validation_still_comes_first() -> TestResult {
    // Never asked: an unknown city or a bad day count is the model's to fix.
    let (addr, seen) = forecasting_fake().await?;
    let (ctx, _db) = context(service(addr, Duration::from_secs(5))?).await?;
    let error = run(&input("Paris", 1), &ctx)
        .await
        .err()
        .ok_or("a forecast for an unknown city was given")?;
    assert!(matches!(error, ExecError::Tool(e) if e.code == ErrorCode::ValidationError));
    let error = run(&input("Huế", 8), &ctx)
        .await
        .err()
        .ok_or("a forecast of 8 days was given")?;
    assert!(matches!(error, ExecError::Tool(e) if e.code == ErrorCode::ValidationError));
    assert!(queries(&seen).is_empty());
    Ok(())
}

#[tokio::test]
async fn named_days_ask_the_service_for_their_first_day_and_count() -> TestResult {
    let (addr, seen) = forecasting_fake().await?;
    let (ctx, _db) = context(service(addr, Duration::from_secs(5))?).await?;
    // Saturday 5 and Sunday 6 December, asked on Monday 30 November.
    let weekend = named("Đà Lạt", "2026-12-05", "2026-12-06")?;
    let output = run(&weekend, &ctx).await?;
    let dates: Vec<NaiveDate> = output.days.iter().map(|day| day.date).collect();
    assert_eq!(dates, [date("2026-12-05")?, date("2026-12-06")?]);
    assert!(output.asked.is_some());
    let seen = queries(&seen).clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["start"], "2026-12-05");
    assert_eq!(seen[0]["days"], "2");
    Ok(())
}

#[tokio::test]
async fn a_service_answering_other_days_than_named_is_unavailable() -> TestResult {
    // Two days, but from today instead of the Saturday asked for: not the weekend.
    let addr = fake_answering(
        StatusCode::OK,
        r#"{"days":[{"date":"2026-11-30","condition":"rain","minC":1,"maxC":2,"rainChance":3},
                    {"date":"2026-12-01","condition":"rain","minC":1,"maxC":2,"rainChance":3}]}"#,
    )
    .await?;
    let (ctx, _db) = context(service(addr, Duration::from_secs(5))?).await?;
    let weekend = named("Đà Lạt", "2026-12-05", "2026-12-06")?;
    match run(&weekend, &ctx).await {
        Err(ExecError::Tool(error)) => assert_eq!(error.code, ErrorCode::UpstreamUnavailable),
        other => panic!("expected UPSTREAM_UNAVAILABLE, got {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn named_days_past_the_forecast_never_reach_the_service() -> TestResult {
    let (addr, seen) = forecasting_fake().await?;
    let (ctx, _db) = context(service(addr, Duration::from_secs(5))?).await?;
    let far = GetWeatherInput {
        city: "Huế".into(),
        days: None,
        from: Some(date("2026-12-24")?),
        to: None,
    };
    let error = run(&far, &ctx)
        .await
        .err()
        .ok_or("a forecast for 24 December")?;
    assert!(matches!(error, ExecError::Tool(e) if e.code == ErrorCode::ValidationError));
    assert!(queries(&seen).is_empty());
    Ok(())
}

/// A call for the named days `from` … `to` in `city`, as a model makes it.
fn named(city: &str, from: &str, to: &str) -> Result<GetWeatherInput, Box<dyn std::error::Error>> {
    Ok(GetWeatherInput {
        city: city.into(),
        days: None,
        from: Some(date(from)?),
        to: Some(date(to)?),
    })
}

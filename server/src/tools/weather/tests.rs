//! `tests` of `weather`.

use chrono::{DateTime, Utc};
use shared::tools::ErrorCode;

use super::*;
use crate::tools::city::CITIES;

/// A failure of the code under test ends the test with its message, not a panic at
/// an `unwrap`.
type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A context on a fresh test database (SQLite, or Postgres under
/// `DATBAN_TEST_POSTGRES_URL`); keep the guard alive for the test.
async fn context(
    now: &str,
) -> Result<(ToolContext, crate::db::test_db::TestDatabase), chrono::ParseError> {
    let (db, guard) = crate::db::test_pool().await;
    let ctx = ToolContext {
        reads: crate::db::Reads::shared(db.clone()),
        db,
        owner_id: "owner".into(),
        conversation_id: "conversation".into(),
        call_id: "call".into(),
        now: DateTime::parse_from_rfc3339(now)?.with_timezone(&Utc),
        upstreams: Default::default(),
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

/// A call that names its days, `to` left out when `None`.
fn named(city: &str, from: &str, to: Option<&str>) -> Result<GetWeatherInput, chrono::ParseError> {
    Ok(GetWeatherInput {
        city: city.into(),
        days: None,
        from: Some(date(from)?),
        to: to.map(date).transpose()?,
    })
}

/// The paths and rules of a validation error, or why it is not one.
fn issues(result: Result<GetWeatherOutput, ExecError>) -> Result<Vec<(String, Rule)>, String> {
    match result {
        Err(ExecError::Tool(error)) if error.code == ErrorCode::ValidationError => Ok(error
            .issues
            .into_iter()
            .map(|issue| (issue.path, issue.rule))
            .collect()),
        other => Err(format!("expected a validation error, got {other:?}")),
    }
}

fn date(s: &str) -> Result<NaiveDate, chrono::ParseError> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
}

#[tokio::test]
async fn same_question_same_answer() -> TestResult {
    let (ctx, _db) = context("2026-11-30T03:00:00Z").await?;
    let first = run(&input("Hà Nội", 7), &ctx).await?;
    let second = run(&input("ha noi", 7), &ctx).await?;
    assert_eq!(first, second);
    assert_eq!(first.city, "Hà Nội");
    // Not one constant day repeated: a hash that ignored the date would fail this.
    let distinct: std::collections::HashSet<_> = first
        .days
        .iter()
        .map(|d| (d.temp_min_c, d.temp_max_c, d.precipitation_chance))
        .collect();
    assert!(distinct.len() > 1, "{first:?}");
    Ok(())
}

#[tokio::test]
async fn returns_the_requested_number_of_consecutive_days() -> TestResult {
    let (ctx, _db) = context("2026-11-30T03:00:00Z").await?;
    for days in 1..=7 {
        let output = run(&input("Đà Nẵng", days), &ctx).await?;
        assert_eq!(output.days.len(), usize::from(days));
        for (i, day) in output.days.iter().enumerate() {
            let expected = date("2026-11-30")?
                .checked_add_days(chrono::Days::new(i as u64))
                .ok_or("a date out of range")?;
            assert_eq!(day.date, expected);
        }
    }
    let error = run(&input("Đà Nẵng", 8), &ctx)
        .await
        .err()
        .ok_or("a forecast of 8 days was given")?;
    assert!(matches!(error, ExecError::Tool(e) if e.code == ErrorCode::ValidationError));
    Ok(())
}

#[tokio::test]
async fn days_start_at_the_local_date() -> TestResult {
    // 23:59 in Vietnam on the 29th.
    let (before, _db) = context("2026-11-29T16:59:00Z").await?;
    let output = run(&input("Huế", 2), &before).await?;
    assert_eq!(output.days[0].date, date("2026-11-29")?);
    assert_eq!(output.days[1].date, date("2026-11-30")?);
    // 00:01 in Vietnam on the 30th, although it is still the 29th in UTC.
    let after = ToolContext {
        now: DateTime::parse_from_rfc3339("2026-11-29T17:01:00Z")?.with_timezone(&Utc),
        ..before
    };
    let output = run(&input("Huế", 2), &after).await?;
    assert_eq!(output.days[0].date, date("2026-11-30")?);
    assert_eq!(output.days[1].date, date("2026-12-01")?);
    Ok(())
}

#[tokio::test]
async fn values_are_plausible_and_consistent() -> TestResult {
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
        let (ctx, _db) = context(start).await?;
        for (city, low, high) in ranges {
            let output = run(&input(city, 7), &ctx).await?;
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
    Ok(())
}

#[tokio::test]
async fn every_city_has_a_forecast() -> TestResult {
    let (ctx, _db) = context("2026-11-30T03:00:00Z").await?;
    for city in CITIES {
        assert_eq!(run(&input(city, 1), &ctx).await?.city, city);
    }
    assert_eq!(
        run(&input("saigon", 1), &ctx).await?.city,
        "TP. Hồ Chí Minh"
    );
    Ok(())
}

#[tokio::test]
async fn fail_trigger_is_an_internal_error() -> TestResult {
    let (ctx, _db) = context("2026-11-30T03:00:00Z").await?;
    match run(&input("#fail", 1), &ctx).await {
        Err(ExecError::Internal(message)) => {
            assert!(message.contains("connection refused"), "{message}")
        }
        other => panic!("expected an internal error, got {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn unknown_city_is_a_validation_error() -> TestResult {
    let (ctx, _db) = context("2026-11-30T03:00:00Z").await?;
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
    Ok(())
}

#[tokio::test]
async fn named_days_are_exactly_those_days() -> TestResult {
    // Thursday 3 December, 10:00 in Vietnam.
    let (ctx, _db) = context("2026-12-03T03:00:00Z").await?;
    let weekend = run(&named("Đà Lạt", "2026-12-05", Some("2026-12-06"))?, &ctx).await?;
    let dates: Vec<NaiveDate> = weekend.days.iter().map(|day| day.date).collect();
    assert_eq!(dates, [date("2026-12-05")?, date("2026-12-06")?]);
    assert_eq!(
        weekend.asked,
        Some(AskedDays {
            from: date("2026-12-05")?,
            to: date("2026-12-06")?
        })
    );
    // The same days as in a forecast counted from today: a day's weather is its date's.
    let week = run(&input("Đà Lạt", 4), &ctx).await?;
    assert_eq!(week.asked, None);
    assert_eq!(&week.days[2..], weekend.days.as_slice());
    // One day alone; the forecast's last day is still in reach.
    for day in ["2026-12-04", "2026-12-09"] {
        let one = run(&named("Huế", day, None)?, &ctx).await?;
        assert_eq!(one.days.len(), 1, "{day}");
        assert_eq!(one.days[0].date, date(day)?);
        let asked = one.asked.ok_or("the day asked is said")?;
        assert_eq!((asked.from, asked.to), (date(day)?, date(day)?));
    }
    Ok(())
}

#[tokio::test]
async fn named_days_out_of_reach_are_refused_again_here() -> TestResult {
    let (ctx, _db) = context("2026-12-03T03:00:00Z").await?;
    assert_eq!(
        issues(run(&named("Huế", "2026-12-02", None)?, &ctx).await)?,
        [("from".to_owned(), Rule::InPast)]
    );
    assert_eq!(
        issues(run(&named("Huế", "2026-12-05", Some("2026-12-10"))?, &ctx).await)?,
        [("to".to_owned(), Rule::BeyondForecast { days: 7 })]
    );
    assert_eq!(
        issues(run(&named("Huế", "2026-12-06", Some("2026-12-05"))?, &ctx).await)?,
        [(
            "from".to_owned(),
            Rule::MinAboveMax {
                max_field: "to".into()
            }
        )]
    );
    let both = GetWeatherInput {
        days: Some(2),
        ..named("Huế", "2026-12-05", None)?
    };
    assert_eq!(
        issues(run(&both, &ctx).await)?,
        [(
            "days".to_owned(),
            Rule::Exclusive {
                with: "from".into()
            }
        )]
    );
    Ok(())
}

#[tokio::test]
async fn named_days_are_vietnams_dates() -> TestResult {
    // 23:59 in Vietnam on the 29th: the 29th is today, and in reach.
    let (before, _db) = context("2026-11-29T16:59:00Z").await?;
    let output = run(&named("Huế", "2026-11-29", None)?, &before).await?;
    assert_eq!(output.days[0].date, date("2026-11-29")?);
    // 00:01 in Vietnam on the 30th (still the 29th in UTC): the 29th has passed.
    let after = ToolContext {
        now: DateTime::parse_from_rfc3339("2026-11-29T17:01:00Z")?.with_timezone(&Utc),
        ..before
    };
    assert_eq!(
        issues(run(&named("Huế", "2026-11-29", None)?, &after).await)?,
        [("from".to_owned(), Rule::InPast)]
    );
    Ok(())
}

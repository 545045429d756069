//! What people type and the tool calls each must produce: one table, in Vietnamese with
//! and without diacritics and in English, run against the offline model on a fixed clock.
//! The real tools answer each call (a test database with the seed catalogue, the built-in
//! forecasts), so a phrasing passes only if its whole conversation works: every call
//! validates against its schema, and a booking passes the checks done before a person is
//! asked to confirm it.

use super::read::Lang;
use super::testing::{assemble, request, user};
use super::OfflineModel;
use crate::model::ModelMessage;
use crate::tools::{execute, precheck, ExecError, ToolContext};
use chrono::{DateTime, FixedOffset, Utc};
use serde_json::Value;
use shared::message::CallOutcome;
use shared::tools::{validate_arguments, ToolName, ValidationContext};
use std::time::Duration;

/// Thursday 3 December 2026, 10:00 in Vietnam: "this weekend" is Saturday 5 and Sunday 6,
/// "next Friday" is the 11th, a week's forecast reaches Wednesday 9.
const NOW: &str = "2026-12-03T10:00:00+07:00";

/// One phrasing and what it must lead to.
pub(super) struct Row {
    text: &'static str,
    /// The language every reply must be in.
    lang: Lang,
    /// Every call of the conversation, in order, as tool name and exact arguments (JSON).
    calls: &'static [(&'static str, &'static str)],
    /// Words the last reply must contain.
    reply: &'static [&'static str],
}

pub(super) const fn row(
    text: &'static str,
    lang: Lang,
    calls: &'static [(&'static str, &'static str)],
    reply: &'static [&'static str],
) -> Row {
    Row {
        text,
        lang,
        calls,
        reply,
    }
}

pub(super) const VI: Lang = Lang::Vi;
pub(super) const EN: Lang = Lang::En;
pub(super) const WEATHER: &str = "getWeather";
pub(super) const SEARCH: &str = "searchRestaurants";
pub(super) const BOOK: &str = "createBooking";

mod bookings;
mod forecasts_and_searches;

/// Every phrasing of the table.
fn rows() -> impl Iterator<Item = &'static Row> {
    forecasts_and_searches::ROWS.iter().chain(bookings::ROWS)
}

/// Whether `text` reads as `lang`: a few function words only one of the languages uses.
fn reads_as(text: &str, lang: Lang) -> bool {
    const VIETNAMESE: [&str; 12] = [
        "tôi",
        "Tôi",
        "bạn",
        "Bạn",
        "Để",
        "Thời tiết",
        "khả năng",
        "Chưa",
        "Không",
        "Xin",
        "nhà hàng",
        "Có",
    ];
    const ENGLISH: [&str; 10] = [
        "Let me",
        "I ",
        "Weather in",
        "Sorry",
        "Which",
        "You",
        "No ",
        "Rain",
        "There",
        "Hi",
    ];
    let vietnamese = VIETNAMESE.iter().any(|word| text.contains(word));
    let english = ENGLISH.iter().any(|word| text.contains(word));
    match lang {
        Lang::Vi => vietnamese && !text.contains("Let me") && !text.contains("Weather in"),
        Lang::En => english && !text.contains("tôi") && !text.contains("Bạn"),
    }
}

/// The conversation `row.text` starts, up to a call that needs the person's approval or
/// a reply without calls; every call is validated and the read-only ones run.
async fn run(model: &OfflineModel, ctx: &ToolContext, row: &Row) -> Result<(), String> {
    let validation = ValidationContext { now: ctx.now };
    let mut history = vec![user(row.text)];
    let mut made: Vec<(String, Value)> = Vec::new();
    let mut last = String::new();
    for _ in 0..4 {
        let turn = assemble(&model.plan_turn(&request(history.clone())));
        if !reads_as(&turn.text, row.lang) {
            return Err(format!("not in {:?}: {:?}", row.lang, turn.text));
        }
        last.clone_from(&turn.text);
        if turn.calls.is_empty() {
            break;
        }
        history.push(turn.assistant());
        let mut awaits_approval = false;
        for call in &turn.calls {
            let arguments: Value = serde_json::from_str(&call.arguments)
                .map_err(|error| format!("{} arguments are not JSON: {error}", call.name))?;
            made.push((call.name.clone(), arguments));
            let tool = ToolName::parse(&call.name).ok_or(format!("no tool {}", call.name))?;
            let input = validate_arguments(tool, &call.arguments, &validation);
            if tool.definition().requires_approval {
                awaits_approval = true;
                let complete =
                    call.arguments.contains("partySize") || tool != ToolName::CreateBooking;
                match (&input, complete) {
                    (Ok(input), true) if tool == ToolName::CreateBooking => {
                        if let Err(error) = precheck(input, ctx).await {
                            return Err(format!("{} would be refused: {error:?}", call.arguments));
                        }
                    }
                    (Err(error), true) => {
                        return Err(format!("{} is invalid: {error}", call.arguments))
                    }
                    _ => {}
                }
                continue;
            }
            let outcome = match input {
                Ok(input) => match execute(&input, ctx).await {
                    Ok(output) => CallOutcome::Output(output),
                    Err(ExecError::Tool(error)) => CallOutcome::Error(error),
                    Err(ExecError::Internal(details)) => {
                        return Err(format!("{} failed: {details}", call.name))
                    }
                },
                Err(error) => return Err(format!("{} is invalid: {error}", call.arguments)),
            };
            let (content, is_error) =
                crate::model::result_content(&outcome).ok_or("a finished call has a result")?;
            history.push(ModelMessage::ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content,
                is_error,
            });
        }
        if awaits_approval {
            break;
        }
    }
    let expected: Vec<(String, Value)> = row
        .calls
        .iter()
        .map(|(name, arguments)| {
            let arguments = serde_json::from_str(arguments)
                .unwrap_or_else(|error| panic!("{arguments} in the table: {error}"));
            ((*name).to_owned(), arguments)
        })
        .collect();
    if made != expected {
        let show = |calls: &[(String, Value)]| {
            calls
                .iter()
                .map(|(name, arguments)| format!("{name} {arguments}"))
                .collect::<Vec<_>>()
                .join(" → ")
        };
        return Err(format!(
            "calls\n    made:     {}\n    expected: {}",
            show(&made),
            show(&expected)
        ));
    }
    for word in row.reply {
        if !last.contains(word) {
            return Err(format!("the reply lacks {word:?}: {last:?}"));
        }
    }
    Ok(())
}

#[tokio::test]
async fn every_phrasing_makes_its_calls() -> Result<(), chrono::ParseError> {
    let count = rows().count();
    assert!(count >= 80, "{count} phrasings");
    let now: DateTime<FixedOffset> = DateTime::parse_from_rfc3339(NOW)?;
    let model = OfflineModel::new(Duration::ZERO).with_now(now);
    let (db, _guard) = crate::db::test_pool().await;
    let ctx = ToolContext {
        reads: crate::db::Reads::shared(db.clone()),
        db,
        owner_id: "owner".into(),
        conversation_id: "conversation".into(),
        call_id: "call".into(),
        now: now.with_timezone(&Utc),
        upstreams: Default::default(),
        catalogue: Default::default(),
        take: None,
    };
    let mut failures = Vec::new();
    for row in rows() {
        if let Err(why) = run(&model, &ctx, row).await {
            failures.push(format!("{:?}: {why}", row.text));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} phrasings failed:\n{}",
        failures.len(),
        count,
        failures.join("\n")
    );
    Ok(())
}

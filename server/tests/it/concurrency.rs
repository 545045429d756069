//! A busy evening on one database: many people chatting and approving at the same moment.
//!
//! SQLite lets one transaction write at a time; with several writer connections they
//! queued on the file lock and, past `busy_timeout`, failed with "database is locked" —
//! and a failed write in the middle of an approval used up the person's decision with
//! nothing booked. Here 100 owners chat at once (every reply is stored while the others
//! write), then approve their bookings at once: every approval ends booked or waitlisted,
//! no request fails, and every stored conversation agrees with itself (a part that asks
//! for approval has its pending row and a message that says so; a receipt has its
//! booking). Run on SQLite and, in the PostgreSQL pass, on PostgreSQL.
//!
//! When our storage does fail during an approval, the decision is given back: the call is
//! pending again, its part still asks, and approving again books it.

use crate::support;

use std::{collections::HashSet, sync::Arc};

use futures::future::join_all;
use serde_json::{json, Value};
use support::{new_client, spawn_app, Reply, TestApp, TestResult};

const OWNERS: usize = 100;

/// Every event of a reply, and how its run ended; panics with the events on anything else.
fn ended(reply: &Reply, status: &str) {
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert!(reply.done, "the stream did not end with [DONE]");
    assert_eq!(
        reply.status_of_run().as_deref(),
        Some(status),
        "{:#?}",
        reply.events
    );
}

/// A restaurant conversation of `client` paused on its createBooking confirmation.
async fn pending_booking(
    app: &TestApp,
    client: &reqwest::Client,
) -> support::Fallible<(String, String)> {
    support::pending_booking(client, &app.url("")).await
}

async fn approve(
    app: &TestApp,
    client: &reqwest::Client,
    conversation: &str,
    call: &str,
) -> support::Fallible<Reply> {
    app.post(
        client,
        "/api/approvals",
        json!({"conversationId": conversation, "toolCallId": call, "approved": true}),
    )
    .await
}

/// The booking a reply's createBooking output names, with its status.
fn booked(reply: &Reply, call: &str) -> Result<(String, String), String> {
    let output = reply
        .of_type("tool-output-available")
        .into_iter()
        .find(|e| e["toolCallId"] == call)
        .map(|e| e["output"].clone())
        .ok_or_else(|| format!("no output for {call}: {:#?}", reply.events))?;
    Ok((
        output["bookingId"].as_str().unwrap_or_default().to_owned(),
        output["status"].as_str().unwrap_or_default().to_owned(),
    ))
}

/// Checks that a stored conversation agrees with itself and with the database: a part
/// waiting for approval has its pending row and its message says it waits; a message that
/// says it waits has such a part; a booking receipt names a committed booking. Returns the
/// parts by call id.
async fn consistent(
    app: &TestApp,
    client: &reqwest::Client,
    conversation: &str,
) -> Result<Vec<Value>, Box<dyn std::error::Error + Send + Sync>> {
    let response = client
        .get(app.url(&format!("/api/conversations/{conversation}")))
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 200);
    let body: Value = response.json().await?;
    assert!(
        body.get("running").is_none(),
        "a reply is still being written: {body:#}"
    );
    let pending: Vec<(String,)> =
        sqlx::query_as("SELECT tool_call_id FROM pending_calls WHERE conversation_id = $1")
            .bind(conversation)
            .fetch_all(&app.pool)
            .await?;
    let pending: HashSet<String> = pending.into_iter().map(|(id,)| id).collect();
    let mut parts = Vec::new();
    for message in body["messages"]
        .as_array()
        .ok_or("the conversation has a list of messages")?
    {
        let status = message["status"].as_str().unwrap_or_default();
        let mut waiting = 0;
        for part in message["parts"].as_array().cloned().unwrap_or_default() {
            let id = part["id"].as_str().unwrap_or_default().to_owned();
            match part["state"].as_str().unwrap_or_default() {
                "approval-requested" => {
                    waiting += 1;
                    assert!(
                        pending.contains(&id),
                        "{id} asks for approval but is not pending"
                    );
                    assert_eq!(status, "awaiting-approval", "{message:#}");
                }
                "approval-responded" | "input-streaming" | "input-available" => {
                    panic!("a finished run left a part half-way: {part:#}")
                }
                "output-available" if part["type"] == "tool-createBooking" => {
                    let id = part["output"]["bookingId"].as_str().unwrap_or_default();
                    let (n,): (i64,) =
                        sqlx::query_as("SELECT COUNT(*) FROM bookings WHERE id = $1")
                            .bind(id)
                            .fetch_one(&app.pool)
                            .await?;
                    assert_eq!(
                        n, 1,
                        "a receipt for booking {id}, which is not in the database"
                    );
                }
                _ => assert!(
                    !pending.contains(&id),
                    "{id} is pending but its part is {part:#}"
                ),
            }
            parts.push(part);
        }
        if status == "awaiting-approval" {
            assert!(waiting > 0, "the message waits for nothing: {message:#}");
        }
    }
    Ok(parts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_people_chat_then_approve_at_the_same_moment() -> TestResult {
    let app = Arc::new(spawn_app().await?);
    let clients: Vec<reqwest::Client> = (0..OWNERS)
        .map(|_| new_client())
        .collect::<Result<_, _>>()?;

    // 200 replies written at once by 100 owners (a search, then a booking request each).
    let started = Arc::new(tokio::sync::Barrier::new(OWNERS));
    let calls = join_all(clients.iter().cloned().map(|client| {
        let (app, started) = (Arc::clone(&app), Arc::clone(&started));
        tokio::spawn(async move {
            started.wait().await;
            let (conversation, call) = pending_booking(&app, &client).await?;
            support::Fallible::Ok((client, conversation, call))
        })
    }))
    .await;
    let calls = calls
        .into_iter()
        .collect::<Result<support::Fallible<Vec<_>>, _>>()??;
    assert_eq!(
        app.count("SELECT COUNT(*) FROM pending_calls").await?,
        OWNERS as i64
    );
    for (client, conversation, _) in &calls {
        consistent(&app, client, conversation).await?;
    }

    // Then every one of them presses "confirm" at the same moment.
    let go = Arc::new(tokio::sync::Barrier::new(OWNERS));
    let replies = join_all(calls.iter().cloned().map(|(client, conversation, call)| {
        let (app, go) = (Arc::clone(&app), Arc::clone(&go));
        tokio::spawn(async move {
            go.wait().await;
            let reply = approve(&app, &client, &conversation, &call).await?;
            support::Fallible::Ok((reply, call))
        })
    }))
    .await;
    let mut statuses = Vec::new();
    let mut ids = HashSet::new();
    for joined in replies {
        let (reply, call) = joined??;
        ended(&reply, "completed");
        assert!(
            reply.of_type("tool-output-error").is_empty() && reply.of_type("error").is_empty(),
            "{:#?}",
            reply.events
        );
        let (id, status) = booked(&reply, &call)?;
        assert!(ids.insert(id), "two approvals got one booking");
        statuses.push(status);
    }
    assert!(
        statuses
            .iter()
            .all(|s| s == "confirmed" || s == "waitlisted"),
        "{statuses:?}"
    );
    // One slot, 4 guests each: it fills up, and the rest wait — none is lost.
    assert!(statuses.iter().any(|s| s == "confirmed"));
    assert_eq!(
        app.count("SELECT COUNT(*) FROM bookings").await?,
        OWNERS as i64
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 0);
    assert_eq!(
        app.count("SELECT COUNT(*) FROM idempotency_keys WHERE state = 'done'")
            .await?,
        OWNERS as i64
    );
    for (client, conversation, call) in &calls {
        let parts = consistent(&app, client, conversation).await?;
        let part = parts
            .iter()
            .find(|p| p["id"] == call.as_str())
            .ok_or("the conversation has the approved part")?;
        assert_eq!(part["state"], "output-available", "{part:#}");
    }
    Ok(())
}

/// Makes every booking insert fail as a broken disk would, until [`heal`].
async fn break_bookings(app: &TestApp) -> Result<(), sqlx::Error> {
    break_inserts(app, "bookings").await
}

/// Makes every insert into `table` fail, as a broken disk would.
async fn break_inserts(app: &TestApp, table: &str) -> Result<(), sqlx::Error> {
    break_writes(app, "INSERT", table).await
}

/// Makes every `write` (`INSERT`, `UPDATE`, `DELETE`) on `table` fail, as a broken disk
/// would, until [`heal_writes`] with the same two.
async fn break_writes(app: &TestApp, write: &str, table: &str) -> Result<(), sqlx::Error> {
    let name = format!("datban_test_fail_{write}_{table}");
    let statements: Vec<String> = if app.db_url.starts_with("postgres") {
        vec![
            "CREATE OR REPLACE FUNCTION datban_test_fail() RETURNS trigger AS $$ BEGIN \
             RAISE EXCEPTION 'disk on fire'; END; $$ LANGUAGE plpgsql"
                .to_owned(),
            format!(
                "CREATE TRIGGER {name} BEFORE {write} ON {table} \
                 FOR EACH ROW EXECUTE FUNCTION datban_test_fail()"
            ),
        ]
    } else {
        vec![format!(
            "CREATE TRIGGER {name} BEFORE {write} ON {table} \
             BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
        )]
    };
    for statement in statements {
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(&app.pool)
            .await?;
    }
    Ok(())
}

async fn heal(app: &TestApp) -> Result<(), sqlx::Error> {
    heal_writes(app, "INSERT", "bookings").await
}

async fn heal_writes(app: &TestApp, write: &str, table: &str) -> Result<(), sqlx::Error> {
    let name = format!("datban_test_fail_{write}_{table}");
    let statement = if app.db_url.starts_with("postgres") {
        format!("DROP TRIGGER {name} ON {table}")
    } else {
        format!("DROP TRIGGER {name}")
    };
    sqlx::query(sqlx::AssertSqlSafe(statement))
        .execute(&app.pool)
        .await?;
    Ok(())
}

/// A turn the storer cannot commit: the request answers 503 with a retry hint and no
/// detail, nothing of the turn is stored, no run is left "running", and the same person
/// chats normally once storage works again.
#[tokio::test]
async fn a_turn_that_cannot_be_stored_answers_503_and_leaves_nothing() -> TestResult {
    let app = spawn_app().await?;
    break_inserts(&app, "messages").await?;
    let response = app
        .client
        .post(app.url("/api/chat"))
        .json(&json!({"text": "Thời tiết Hà Nội hôm nay thế nào?"}))
        .send()
        .await?;
    assert_eq!(response.status(), 503);
    assert_eq!(
        response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("1")
    );
    let body: Value = response.json().await?;
    assert_eq!(body["error"]["code"], "STORAGE_UNAVAILABLE", "{body:#}");
    let text = body.to_string().to_lowercase();
    assert!(
        !text.contains("disk on fire") && !text.contains("sql") && !text.contains("insert"),
        "{body:#}"
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM conversations").await?, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM messages").await?, 0);
    assert_eq!(
        app.count("SELECT COUNT(*) FROM runs WHERE status = 'running'")
            .await?,
        0
    );

    heal_writes(&app, "INSERT", "messages").await?;
    let reply = app.chat(None, "Thời tiết Hà Nội hôm nay thế nào?").await?;
    ended(&reply, "completed");
    assert_eq!(app.count("SELECT COUNT(*) FROM messages").await?, 2);
    Ok(())
}

/// Call `id`'s part in the stored conversation, which is checked for consistency first.
async fn stored_part(app: &TestApp, conversation: &str, id: &str) -> support::Fallible<Value> {
    let parts = consistent(app, &app.client, conversation).await?;
    let part = parts.into_iter().find(|p| p["id"] == id);
    Ok(part.ok_or_else(|| format!("no part {id} in {conversation}"))?)
}

/// A booking's confirmation the person moved on from (a new message closed it): the
/// conversation and the call, and the body that takes it up again.
async fn moved_on_booking(app: &TestApp) -> support::Fallible<(String, String, Value)> {
    let (conversation, call) = pending_booking(app, &app.client).await?;
    let moved_on = app
        .chat(Some(&conversation), "Thời tiết Hà Nội hôm nay thế nào?")
        .await?;
    ended(&moved_on, "completed");
    let body = json!({"conversationId": conversation, "toolCallId": call});
    Ok((conversation, call, body))
}

/// A new message closes the confirmations left open with the same commit, or not at all:
/// when the closed form cannot be stored, the turn answers 503 and the call is still
/// pending, its form still shown and decidable (never a form whose call is gone), and it
/// books once storage works again.
#[tokio::test]
async fn a_new_message_that_cannot_close_a_form_leaves_it_decidable() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app, &app.client).await?;
    break_writes(&app, "UPDATE", "messages").await?;
    let moved_on = app
        .chat(Some(&conversation), "Thời tiết Hà Nội hôm nay thế nào?")
        .await?;
    assert_eq!(moved_on.status, 503, "{:?}", moved_on.body);
    assert_eq!(moved_on.body["error"]["code"], "STORAGE_UNAVAILABLE");
    heal_writes(&app, "UPDATE", "messages").await?;
    assert_eq!(
        app.count("SELECT COUNT(*) FROM pending_calls").await?,
        1,
        "the call was given back with its form"
    );
    let part = stored_part(&app, &conversation, &call).await?;
    assert_eq!(part["state"], "approval-requested", "{part:#}");

    let booked = approve(&app, &app.client, &conversation, &call).await?;
    ended(&booked, "completed");
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);
    Ok(())
}

#[tokio::test]
async fn a_storage_failure_gives_the_decision_back() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app, &app.client).await?;
    break_bookings(&app).await?;

    let failed = approve(&app, &app.client, &conversation, &call).await?;
    ended(&failed, "awaiting-approval");
    // Nothing about the call was answered: no output, no error, no "approved".
    for kind in [
        "tool-output-available",
        "tool-output-error",
        "tool-output-denied",
    ] {
        assert!(
            failed.of_type(kind).is_empty(),
            "{kind}: {:#?}",
            failed.events
        );
    }
    let notice = failed.of_type("error");
    assert_eq!(notice.len(), 1, "{:#?}", failed.events);
    let text = notice[0]["errorText"].as_str().unwrap_or_default();
    assert!(
        !text.contains("disk on fire") && !text.to_lowercase().contains("sql"),
        "{text}"
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 0);
    // Pending again at once (not taken until a lease runs out), and the part still asks.
    assert_eq!(
        app.count("SELECT COUNT(*) FROM pending_calls WHERE taken_by IS NULL")
            .await?,
        1
    );
    let parts = consistent(&app, &app.client, &conversation).await?;
    let part = parts
        .iter()
        .find(|p| p["id"] == call.as_str())
        .ok_or("the conversation has the part that asked for approval")?;
    assert_eq!(part["state"], "approval-requested", "{part:#}");

    // Once storage works again, the same confirmation books.
    heal(&app).await?;
    let booked_now = approve(&app, &app.client, &conversation, &call).await?;
    ended(&booked_now, "completed");
    let (id, status) = booked(&booked_now, &call)?;
    assert!(
        id.starts_with("BK-") && status == "confirmed",
        "{id} {status}"
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);
    consistent(&app, &app.client, &conversation).await?;
    Ok(())
}

/// Taking up a closed confirmation again when its new call cannot be stored: the answer
/// is a retryable 503 that leaves nothing behind (no failed card, no call without a form),
/// and once storage works the same request gives the form, which books once.
#[tokio::test]
async fn a_reopen_that_cannot_be_stored_can_be_tried_again() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call, body) = moved_on_booking(&app).await?;
    let messages = || app.count("SELECT COUNT(*) FROM messages");
    let before = messages().await?;
    break_inserts(&app, "pending_calls").await?;
    let failed = app
        .post(&app.client, "/api/calls/reopen", body.clone())
        .await?;
    assert_eq!(failed.status, 503, "{:#}", failed.body);
    assert_eq!(failed.body["error"]["code"], "STORAGE_UNAVAILABLE");
    assert_eq!(messages().await?, before, "the failed try left nothing");
    heal_writes(&app, "INSERT", "pending_calls").await?;

    let again = app.post(&app.client, "/api/calls/reopen", body).await?;
    assert_eq!(again.status, 200, "{:#}", again.body);
    let again_id = format!("again_{call}");
    let part = stored_part(&app, &conversation, &again_id).await?;
    assert_eq!(part["state"], "approval-requested", "{part:#}");
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 1);

    let booked = approve(&app, &app.client, &conversation, &again_id).await?;
    ended(&booked, "completed");
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);
    Ok(())
}

/// A failed try whose failure could not be cleared either (storage still broken when it
/// tried) is cleared by the next try, which shows the form.
#[tokio::test]
async fn a_reopen_clears_an_earlier_failed_try() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call, body) = moved_on_booking(&app).await?;
    // Inserting the call fails, and so does deleting the failed try's message.
    break_inserts(&app, "pending_calls").await?;
    break_writes(&app, "DELETE", "messages").await?;
    let failed = app
        .post(&app.client, "/api/calls/reopen", body.clone())
        .await?;
    assert_eq!(failed.status, 503, "{:#}", failed.body);
    heal_writes(&app, "INSERT", "pending_calls").await?;
    heal_writes(&app, "DELETE", "messages").await?;
    let again_id = format!("again_{call}");
    let left: (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM messages WHERE conversation_id = $1 AND body LIKE '%EXECUTION_FAILED%'",
    )
    .bind(&conversation)
    .fetch_one(&app.pool)
    .await?;
    assert_eq!(left.0, 1, "the failed try is still stored");

    let again = app.post(&app.client, "/api/calls/reopen", body).await?;
    assert_eq!(again.status, 200, "{:#}", again.body);
    let parts = consistent(&app, &app.client, &conversation).await?;
    let shown: Vec<_> = parts
        .iter()
        .filter(|p| p["id"] == again_id.as_str())
        .collect();
    assert_eq!(shown.len(), 1, "{shown:#?}");
    assert_eq!(shown[0]["state"], "approval-requested");
    Ok(())
}

/// A message in a conversation another process is still writing (its run's row says
/// "running", with a fresh heartbeat) answers 409 before it changes anything: the
/// confirmation it would have closed is still open and decidable.
#[tokio::test]
async fn a_message_refused_for_a_run_elsewhere_closes_no_form() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app, &app.client).await?;
    let messages = app.count("SELECT COUNT(*) FROM messages").await?;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    sqlx::query(
        "INSERT INTO runs (run_id, conversation_id, owner_id, status, node, stop_requested, \
         started_at, updated_at) SELECT 'run_elsewhere', id, owner_id, 'running', \
         'another-process', 0, $2, $2 FROM conversations WHERE id = $1",
    )
    .bind(&conversation)
    .bind(&now)
    .execute(&app.pool)
    .await?;
    let refused = app
        .chat(Some(&conversation), "Thời tiết Hà Nội hôm nay thế nào?")
        .await?;
    assert_eq!(refused.status, 409, "{:?}", refused.body);
    assert_eq!(refused.body["error"]["code"], "RUN_IN_PROGRESS");
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 1);
    assert_eq!(
        app.count("SELECT COUNT(*) FROM messages").await?,
        messages,
        "nothing of the message is stored"
    );
    let (status, body) = app
        .get_json(&format!("/api/conversations/{conversation}"))
        .await?;
    assert_eq!(status, 200, "{body:#}");
    let part = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|message| message["parts"].as_array().cloned().unwrap_or_default())
        .find(|part| part["id"] == call.as_str())
        .ok_or("the form is there")?;
    assert_eq!(part["state"], "approval-requested", "{part:#}");
    Ok(())
}

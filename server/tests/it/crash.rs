//! Crash safety: a server killed (SIGKILL) at any moment of an approved booking leaves
//! exactly one of two states — the booking with its idempotency record and no pending call,
//! or no booking and the call still pending — never a half state, and the call never runs
//! twice.

use crate::support;

use std::time::Duration;

use serde_json::{json, Value};
use support::{
    post_json,
    process::{start_server, ServerProcess},
    TestApp, TestResult,
};

/// How long the test hook holds each side effect inside its transaction.
const HOLD: &[(&str, &str)] = &[("DATBAN_TEST_HOLD_EFFECT_MS", "1500")];

/// A conversation paused on a createBooking confirmation: (conversation id, call id).
async fn pending_booking(
    client: &reqwest::Client,
    server: &ServerProcess,
) -> support::Fallible<(String, String)> {
    support::pending_booking(client, &server.base).await
}

/// Sends a decision to a server that is about to be killed: its reply may never come.
fn decide_in_background(
    client: &reqwest::Client,
    server: &ServerProcess,
    body: Value,
) -> tokio::task::JoinHandle<()> {
    let request = client
        .post(format!("{}/api/approvals", server.base))
        .json(&body);
    tokio::spawn(async move {
        if let Ok(response) = request.send().await {
            let _ = response.bytes().await;
        }
    })
}

fn approval(conversation: &str, call: &str) -> Value {
    json!({"conversationId": conversation, "toolCallId": call, "approved": true})
}

/// What the database holds for one call.
#[derive(Debug, PartialEq, Eq)]
struct CallState {
    bookings: i64,
    done_records: i64,
    pending: i64,
}

async fn state_of(app: &TestApp, conversation: &str, call: &str) -> sqlx::Result<CallState> {
    let count = |sql: &'static str| {
        let pool = app.pool.clone();
        let (conversation, call) = (conversation.to_owned(), call.to_owned());
        async move {
            let (n,): (i64,) = sqlx::query_as(sql)
                .bind(conversation)
                .bind(call)
                .fetch_one(&pool)
                .await?;
            Ok::<_, sqlx::Error>(n)
        }
    };
    Ok(CallState {
        bookings: count(
            "SELECT COUNT(*) FROM bookings WHERE conversation_id = $1 AND tool_call_id = $2",
        )
        .await?,
        done_records: count(
            "SELECT COUNT(*) FROM idempotency_keys WHERE scope = 'createBooking' \
             AND idem_key = $1 || '/' || $2 AND state = 'done'",
        )
        .await?,
        pending: count(
            "SELECT COUNT(*) FROM pending_calls WHERE conversation_id = $1 AND tool_call_id = $2",
        )
        .await?,
    })
}

/// The only two states a kill may leave.
fn assert_whole(state: &CallState) -> bool {
    let booked = CallState {
        bookings: 1,
        done_records: 1,
        pending: 0,
    };
    let still_pending = CallState {
        bookings: 0,
        done_records: 0,
        pending: 1,
    };
    assert!(
        *state == booked || *state == still_pending,
        "half state after a kill: {state:?}"
    );
    *state == booked
}

/// Lets the leases of a killed decision run out, as waiting 30 s would: the taken call,
/// the running idempotency key and the killed run's heartbeat (which another process
/// would otherwise wait out, 15 s, before closing the run as interrupted).
async fn expire_leases(app: &TestApp) -> sqlx::Result<()> {
    sqlx::query("UPDATE runs SET updated_at = '2000-01-01T00:00:00.000Z' WHERE status = 'running'")
        .execute(&app.pool)
        .await?;
    sqlx::query("UPDATE pending_calls SET taken_until = '2000-01-01T00:00:00.000Z' WHERE taken_by IS NOT NULL")
        .execute(&app.pool)
        .await?;
    sqlx::query("UPDATE idempotency_keys SET locked_until = '2000-01-01T00:00:00.000Z' WHERE state = 'running'")
        .execute(&app.pool)
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_kill_during_the_booking_leaves_it_pending_and_it_books_once_later() -> TestResult {
    let app = support::spawn_app().await?;
    let client = support::new_client()?;
    let mut server = start_server(&app.db_url, HOLD).await?;
    let (conversation, call) = pending_booking(&client, &server).await?;

    let decision = decide_in_background(&client, &server, approval(&conversation, &call));
    // Inside the hold: the booking row is written but not committed.
    tokio::time::sleep(Duration::from_millis(700)).await;
    server.kill9();
    let _ = decision.await;

    let after_kill = state_of(&app, &conversation, &call).await?;
    assert!(
        !assert_whole(&after_kill),
        "the kill came before the commit"
    );

    // A new process; once the dead decision's leases end, the person can decide again,
    // and the booking happens exactly once.
    let server = start_server(&app.db_url, &[]).await?;
    expire_leases(&app).await?;
    let reply = post_json(
        &client,
        &server.base,
        "/api/approvals",
        approval(&conversation, &call),
    )
    .await?;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(
        reply.of_type("tool-output-available").len(),
        1,
        "{:#?}",
        reply.events
    );
    assert!(assert_whole(&state_of(&app, &conversation, &call).await?));

    // Deciding again changes nothing.
    let again = post_json(
        &client,
        &server.base,
        "/api/approvals",
        approval(&conversation, &call),
    )
    .await?;
    assert_eq!(again.status, 409, "{:?}", again.body);
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);
    Ok(())
}

#[tokio::test]
async fn kills_at_random_moments_never_leave_a_half_state() -> TestResult {
    let app = support::spawn_app().await?;
    // Spread over the claim, the effect, the hold, the commit and after.
    for delay_ms in [0_u64, 40, 150, 400, 900, 1400, 1700, 2600] {
        // A new person each time: the killed servers' runs count against their owner's
        // concurrent runs until their heartbeats go stale.
        let client = support::new_client()?;
        let mut server = start_server(&app.db_url, HOLD).await?;
        let (conversation, call) = pending_booking(&client, &server).await?;
        let decision = decide_in_background(&client, &server, approval(&conversation, &call));
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        server.kill9();
        let _ = decision.await;
        let booked = assert_whole(&state_of(&app, &conversation, &call).await?);

        // Whatever the kill left, finishing the decision yields exactly one booking.
        if !booked {
            let server = start_server(&app.db_url, &[]).await?;
            expire_leases(&app).await?;
            let reply = post_json(
                &client,
                &server.base,
                "/api/approvals",
                approval(&conversation, &call),
            )
            .await?;
            assert_eq!(reply.status, 200, "after {delay_ms} ms: {:?}", reply.body);
        }
        assert!(
            assert_whole(&state_of(&app, &conversation, &call).await?),
            "after {delay_ms} ms the booking must exist exactly once"
        );
    }
    Ok(())
}

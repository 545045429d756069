//! Forged and replayed decisions execute nothing.
//!
//! `POST /api/approvals` is the only door to a side effect. A hundred decisions at once —
//! unknown call ids, a call id of another conversation of the same owner, another owner's
//! pending call, a call already decided and replayed, malformed bodies — run nothing: each
//! gets a JSON error (400/404/409/422), and bookings, checkouts, idempotency keys and
//! pending calls stay as they were. A replayed decision gets the call's stored outcome
//! (409 `ALREADY_RESOLVED` with `outcome`), never a second execution. Edited input is
//! validated again before anything is taken.

use crate::support;

use futures::future::try_join_all;
use serde_json::{json, Value};
use support::{spawn_app, Reply, TestApp, TestResult};

/// A restaurant conversation of `client` paused on its createBooking confirmation.
async fn pending_booking(
    app: &TestApp,
    client: &reqwest::Client,
) -> support::Fallible<(String, String)> {
    support::pending_booking(client, &app.url("")).await
}

async fn decide(
    app: &TestApp,
    client: &reqwest::Client,
    conversation: &str,
    call: &str,
    approved: bool,
) -> support::Fallible<Reply> {
    app.post(
        client,
        "/api/approvals",
        json!({"conversationId": conversation, "toolCallId": call, "approved": approved}),
    )
    .await
}

/// The call's part as its owner's conversation stores it.
async fn stored_part(
    app: &TestApp,
    conversation: &str,
    call: &str,
) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
    let (status, body) = app
        .get_json(&format!("/api/conversations/{conversation}"))
        .await?;
    assert_eq!(status, 200, "{body}");
    Ok(body["messages"]
        .as_array()
        .ok_or("the conversation's messages")?
        .iter()
        .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
        .find(|p| p["id"] == call)
        .unwrap_or(Value::Null))
}

/// Row counts that any execution would change.
async fn counts(app: &TestApp) -> support::Fallible<[i64; 4]> {
    Ok([
        app.count("SELECT COUNT(*) FROM bookings").await?,
        app.count("SELECT COUNT(*) FROM checkouts").await?,
        app.count("SELECT COUNT(*) FROM idempotency_keys").await?,
        app.count("SELECT COUNT(*) FROM pending_calls").await?,
    ])
}

/// One forged or replayed decision: who sends it, its body, and what it must get.
struct Forgery {
    stranger: bool,
    body: Body,
    expect: u16,
}

enum Body {
    Json(Value),
    Raw(&'static str),
}

async fn send(app: &TestApp, client: &reqwest::Client, body: &Body) -> support::Fallible<Reply> {
    let request = client.post(app.url("/api/approvals"));
    let request = match body {
        Body::Json(value) => request.json(value),
        Body::Raw(text) => request
            .header("content-type", "application/json")
            .body(*text),
    };
    support::read_reply(request.send().await?).await
}

#[tokio::test]
async fn a_hundred_forged_or_replayed_decisions_execute_nothing() -> TestResult {
    let app = spawn_app().await?;
    let a = app.client.clone();
    let b = support::new_client()?;

    // Owner A: one call decided (approved once: exactly one booking), one still pending,
    // and a weather conversation that knows neither call.
    let (decided, decided_call) = pending_booking(&app, &a).await?;
    let first = decide(&app, &a, &decided, &decided_call, true).await?;
    assert_eq!(first.status, 200);
    let receipt = first.of_type("tool-output-available");
    assert_eq!(receipt.len(), 1, "{:#?}", first.events);
    let booking_id = receipt[0]["output"]["bookingId"]
        .as_str()
        .ok_or("the booking's id")?
        .to_owned();
    let (pending, pending_call) = pending_booking(&app, &a).await?;
    let weather = app
        .post(&a, "/api/chat", json!({"text": "Thời tiết Huế hôm nay?"}))
        .await?;
    assert_eq!(weather.status_of_run().as_deref(), Some("completed"));
    let weather = weather.conversation_id();
    // The offline model numbers calls per conversation, so A's two booking calls share an
    // id; the weather conversation must not know it, or the forgery below would be real.
    assert_eq!(
        stored_part(&app, &weather, &pending_call).await?,
        Value::Null
    );
    // Owner B: a call pending for B.
    let (theirs, theirs_call) = pending_booking(&app, &b).await?;

    let stored = stored_part(&app, &decided, &decided_call).await?;
    assert_eq!(stored["state"], "output-available");
    // The outcome is the tool part itself; in a message it is also tagged as a part.
    let mut stored_outcome = stored.clone();
    stored_outcome
        .as_object_mut()
        .ok_or("the stored part as an object")?
        .remove("type");
    let before = counts(&app).await?;
    assert_eq!(before[0], 1, "one booking");
    assert_eq!(before[3], 2, "two pending calls");

    let bad_edit = json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 25,
        "startsAt": "2026-11-30T19:00:00+07:00"});
    let kinds = |i: usize| -> Forgery {
        let forged = |conversation: &str, call: &str| {
            Body::Json(json!({"conversationId": conversation, "toolCallId": call,
                "approved": i.is_multiple_of(2)}))
        };
        let (stranger, body, expect) = match i % 17 {
            // Call ids nobody has, in A's own conversations.
            0 => (false, forged(&pending, &format!("call_forged_{i}")), 404),
            1 => (false, forged(&decided, "call_9_9"), 404),
            // A conversation that does not exist.
            2 => (false, forged("conv_nope", &pending_call), 404),
            // A's pending call, sent with another conversation of A's.
            3 => (false, forged(&weather, &pending_call), 404),
            // B's pending call, sent by A.
            4 => (false, forged(&theirs, &theirs_call), 404),
            // A's calls, sent by B.
            5 => (true, forged(&pending, &pending_call), 404),
            6 => (true, forged(&decided, &decided_call), 404),
            // A's decided call, replayed by A (approve, decline, edit): the stored outcome.
            7 | 8 => (false, forged(&decided, &decided_call), 409),
            9 => (
                false,
                Body::Json(
                    json!({"conversationId": decided, "toolCallId": decided_call,
                    "approved": true, "editedInput": {"restaurantId": "hn-cha-ca-thang-long",
                    "partySize": 2, "startsAt": "2026-11-30T20:00:00+07:00"}}),
                ),
                409,
            ),
            // Malformed bodies aimed at the call that is really pending.
            10 => (
                false,
                Body::Json(
                    json!({"conversationId": pending, "toolCallId": pending_call,
                    "approved": "yes"}),
                ),
                422,
            ),
            11 => (
                false,
                Body::Json(json!({"conversationId": pending, "toolCallId": pending_call})),
                422,
            ),
            12 => (
                false,
                Body::Json(
                    json!({"conversationId": pending, "toolCallId": pending_call,
                    "approved": true, "owner": "own_x"}),
                ),
                422,
            ),
            13 => (
                false,
                Body::Json(
                    json!({"conversationId": pending, "toolCallId": [pending_call],
                    "approved": true}),
                ),
                422,
            ),
            14 => (
                false,
                Body::Json(
                    json!({"conversationId": pending, "toolCallId": pending_call,
                    "approved": true, "editedInput": "book 25 people"}),
                ),
                422,
            ),
            15 => (
                false,
                Body::Json(
                    json!({"conversationId": pending, "toolCallId": pending_call,
                    "approved": true, "editedInput": bad_edit}),
                ),
                422,
            ),
            // Not JSON at all: 400, the one status outside 404/409/422.
            _ => (false, Body::Raw("{\"conversationId\": "), 400),
        };
        Forgery {
            stranger,
            body,
            expect,
        }
    };
    let forgeries: Vec<Forgery> = (0..100).map(kinds).collect();
    let replies = try_join_all(forgeries.iter().map(|forgery| {
        let client = if forgery.stranger { &b } else { &a };
        send(&app, client, &forgery.body)
    }))
    .await?;

    for (index, (forgery, reply)) in forgeries.iter().zip(&replies).enumerate() {
        assert_eq!(
            reply.status, forgery.expect,
            "forgery {index}: {:?} {:?}",
            reply.body, reply.events
        );
        assert!(
            reply.content_type.starts_with("application/json"),
            "forgery {index}: {}",
            reply.content_type
        );
        assert!(reply.events.is_empty(), "forgery {index} streamed a run");
        let code = reply.body["error"]["code"].as_str().unwrap_or_default();
        assert!(!code.is_empty(), "forgery {index}: {}", reply.body);
        assert!(reply.body["error"]["message"].is_string(), "{}", reply.body);
        match reply.status {
            404 => {
                assert_eq!(code, "NOT_FOUND");
                assert!(reply.body.get("outcome").is_none(), "{}", reply.body);
            }
            409 => {
                assert_eq!(code, "ALREADY_RESOLVED");
                // The stored outcome, as the conversation has it: the one booking.
                assert_eq!(reply.body["outcome"], stored_outcome, "{}", reply.body);
                assert_eq!(reply.body["outcome"]["state"], "output-available");
                assert_eq!(
                    reply.body["outcome"]["output"]["bookingId"],
                    json!(booking_id)
                );
            }
            _ => {}
        }
    }
    assert_eq!(counts(&app).await?, before, "nothing executed");
    assert_eq!(
        stored_part(&app, &pending, &pending_call).await?["state"],
        "approval-requested"
    );
    assert_eq!(stored_part(&app, &decided, &decided_call).await?, stored);

    // The pending calls are still their owners' to decide, and run once each.
    let approved = decide(&app, &a, &pending, &pending_call, true).await?;
    assert_eq!(approved.status, 200);
    assert_eq!(
        approved.of_type("tool-output-available").len(),
        1,
        "{:#?}",
        approved.events
    );
    let theirs_approved = decide(&app, &b, &theirs, &theirs_call, true).await?;
    assert_eq!(theirs_approved.of_type("tool-output-available").len(), 1);
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 3);
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 0);
    Ok(())
}

#[tokio::test]
async fn a_replayed_decision_returns_the_stored_outcome_and_runs_nothing() -> TestResult {
    let app = spawn_app().await?;
    let a = app.client.clone();

    // Approved, then replayed: approve again, decline, approve with an edit.
    let (approved, approved_call) = pending_booking(&app, &a).await?;
    let first = decide(&app, &a, &approved, &approved_call, true).await?;
    let output = first.of_type("tool-output-available")[0]["output"].clone();
    let keys = app.count("SELECT COUNT(*) FROM idempotency_keys").await?;
    for body in [
        json!({"conversationId": approved, "toolCallId": approved_call, "approved": true}),
        json!({"conversationId": approved, "toolCallId": approved_call, "approved": false}),
        json!({"conversationId": approved, "toolCallId": approved_call, "approved": true,
            "editedInput": {"restaurantId": "hn-cha-ca-thang-long", "partySize": 6,
            "startsAt": "2026-11-30T20:00:00+07:00"}}),
    ] {
        let replay = app.post(&a, "/api/approvals", body).await?;
        assert_eq!(replay.status, 409, "{}", replay.body);
        assert_eq!(replay.body["error"]["code"], "ALREADY_RESOLVED");
        assert_eq!(replay.body["outcome"]["state"], "output-available");
        assert_eq!(
            replay.body["outcome"]["output"], output,
            "the stored result"
        );
        assert_eq!(
            replay.body["outcome"]["input"]["partySize"], 4,
            "not the edit"
        );
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);
    assert_eq!(
        app.count("SELECT COUNT(*) FROM idempotency_keys").await?,
        keys
    );

    // Declined, then replayed as an approval: still declined, nothing booked.
    let (declined, declined_call) = pending_booking(&app, &a).await?;
    let no = decide(&app, &a, &declined, &declined_call, false).await?;
    assert_eq!(no.of_type("tool-output-denied").len(), 1);
    let replay = decide(&app, &a, &declined, &declined_call, true).await?;
    assert_eq!(replay.status, 409);
    assert_eq!(replay.body["outcome"]["state"], "output-denied");
    assert!(replay.body["outcome"].get("output").is_none());
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);

    // A call id no message of the conversation knows is not "already decided": 404.
    let unknown = decide(&app, &a, &declined, "call_never_made", true).await?;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.body["error"]["code"], "NOT_FOUND");
    assert!(unknown.body.get("outcome").is_none());
    Ok(())
}

#[tokio::test]
async fn edited_input_is_validated_again_and_only_a_valid_edit_is_booked() -> TestResult {
    let app = spawn_app().await?;
    let a = app.client.clone();
    let (conversation, call) = pending_booking(&app, &a).await?;
    let edit = |input: Value| {
        json!({"conversationId": conversation, "toolCallId": call, "approved": true,
            "editedInput": input})
    };
    let invalid = [
        // Too many people for the schema.
        json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 25,
            "startsAt": "2026-11-30T19:00:00+07:00"}),
        // In the past (the test clock is 29 November 2026, 10:00 in Việt Nam).
        json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 4,
            "startsAt": "2026-11-28T19:00:00+07:00"}),
        // Outside the opening hours (the precheck against data).
        json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 4,
            "startsAt": "2026-11-30T23:30:00+07:00"}),
        // A restaurant that does not exist.
        json!({"restaurantId": "hn-nowhere", "partySize": 4,
            "startsAt": "2026-11-30T19:00:00+07:00"}),
        // A field the tool does not have.
        json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 4,
            "startsAt": "2026-11-30T19:00:00+07:00", "ownerId": "own_someone"}),
        // A missing field.
        json!({"restaurantId": "hn-cha-ca-thang-long", "startsAt": "2026-11-30T19:00:00+07:00"}),
        // Not an object.
        json!(["hn-cha-ca-thang-long", 4]),
    ];
    for input in invalid {
        let reply = app.post(&a, "/api/approvals", edit(input.clone())).await?;
        assert_eq!(reply.status, 422, "{input}: {}", reply.body);
        assert_eq!(reply.body["error"]["code"], "VALIDATION_ERROR", "{input}");
        assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 1);
        assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 0);
        assert_eq!(
            stored_part(&app, &conversation, &call).await?["state"],
            "approval-requested",
            "{input}"
        );
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM idempotency_keys").await?, 0);

    let good = app
        .post(
            &a,
            "/api/approvals",
            edit(
                json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 6,
                "startsAt": "2026-11-30T20:00:00+07:00"}),
            ),
        )
        .await?;
    assert_eq!(good.status, 200);
    let output = good.of_type("tool-output-available");
    assert_eq!(output.len(), 1, "{:#?}", good.events);
    assert_eq!(output[0]["output"]["partySize"], 6);
    let (size, starts): (i64, String) =
        sqlx::query_as("SELECT party_size, starts_at FROM bookings")
            .fetch_one(&app.pool)
            .await?;
    assert_eq!((size, starts.as_str()), (6, "2026-11-30T20:00:00+07:00"));
    let part = stored_part(&app, &conversation, &call).await?;
    assert_eq!(part["state"], "output-available");
    assert_eq!(part["input"]["partySize"], 6, "the edit is what was booked");
    Ok(())
}

/// The form shows what the server found (the restaurant's name and address, the local
/// time, room), and a slot that fills up between the request and the decision is
/// reported before anything runs: the decision is refused with the fresh facts, the call
/// stays pending, and the next decision — made knowing them — books exactly that.
#[tokio::test]
async fn a_slot_that_fills_up_is_reported_before_anything_runs() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app, &app.client).await?;
    let part = stored_part(&app, &conversation, &call).await?;
    assert_eq!(part["state"], "approval-requested", "{part}");
    let preview = &part["preview"];
    assert_eq!(preview["kind"], "booking", "{part}");
    assert_eq!(preview["restaurantName"], "Chả Cá Thăng Long");
    assert!(
        preview["address"]
            .as_str()
            .is_some_and(|a| a.contains("Hoàn Kiếm")),
        "{preview}"
    );
    let starts_at = preview["startsAt"]
        .as_str()
        .ok_or("the preview's startsAt")?
        .to_owned();
    assert!(starts_at.ends_with("T19:00:00+07:00"), "{starts_at}");
    assert_eq!(preview["partySize"], 4);
    assert_eq!(preview["availability"]["status"], "available", "{preview}");

    // Others take every seat of that slot (40, at most 20 per booking) meanwhile.
    let slot = chrono::DateTime::parse_from_rfc3339(&starts_at)?
        .with_timezone(&chrono::Utc)
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    for other in ["a", "b"] {
        sqlx::query(
            "INSERT INTO bookings (id, owner_id, conversation_id, tool_call_id, restaurant_id, \
             party_size, starts_at, starts_at_utc, status, created_at) \
             VALUES ($1, 'someone-else', 'c-other', $2, 'hn-cha-ca-thang-long', \
             20, $3, $4, 'confirmed', $5)",
        )
        .bind(format!("BK-OTHER-{other}"))
        .bind(format!("call-other-{other}"))
        .bind(&starts_at)
        .bind(&slot)
        .bind(support::now().to_rfc3339())
        .execute(&app.pool)
        .await?;
    }
    let before = counts(&app).await?;

    let refused = decide(&app, &app.client, &conversation, &call, true).await?;
    assert_eq!(refused.status, 409, "{:?}", refused.body);
    assert_eq!(refused.body["error"]["code"], "PREVIEW_CHANGED");
    assert_eq!(
        refused.body["outcome"]["preview"]["availability"]["status"], "waitlist",
        "{}",
        refused.body
    );
    assert_eq!(
        counts(&app).await?,
        before,
        "nothing ran, the call is still pending"
    );
    let part = stored_part(&app, &conversation, &call).await?;
    assert_eq!(part["state"], "approval-requested");
    assert_eq!(part["preview"]["availability"]["status"], "waitlist");

    // Decided again on the facts now shown: the booking is made, on the waiting list.
    let decided = decide(&app, &app.client, &conversation, &call, true).await?;
    assert_eq!(decided.status, 200, "{:?}", decided.body);
    let output = decided.of_type("tool-output-available");
    assert_eq!(output.len(), 1, "{:#?}", decided.events);
    assert_eq!(output[0]["output"]["status"], "waitlisted");
    assert_eq!(output[0]["output"]["restaurantName"], "Chả Cá Thăng Long");
    assert_eq!(output[0]["output"]["startsAt"], starts_at);
    Ok(())
}

/// A confirmation left open when the person writes something else ends as what happened —
/// `MOVED_ON`, not declined — and can still be taken up: the same input, checked again,
/// becomes a new pending call (the same one however often it is asked for) that books
/// once when approved. Only such a call can be reopened, and only by its owner.
#[tokio::test]
async fn a_confirmation_left_open_is_moved_on_and_can_still_be_booked() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app, &app.client).await?;
    let next = app
        .chat(Some(&conversation), "Thời tiết Hà Nội thế nào?")
        .await?;
    assert_eq!(next.status, 200, "{:?}", next.body);
    let part = stored_part(&app, &conversation, &call).await?;
    assert_eq!(part["state"], "output-error", "{part}");
    assert_eq!(part["error"]["code"], "MOVED_ON", "{part}");
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 0);

    let reopen = |client: reqwest::Client| {
        let body = json!({"conversationId": conversation, "toolCallId": call});
        let url = app.url("/api/calls/reopen");
        async move { support::read_reply(client.post(url).json(&body).send().await?).await }
    };
    let stranger = reopen(support::new_client()?).await?;
    assert_eq!(stranger.status, 404, "{:?}", stranger.body);
    let first = reopen(app.client.clone()).await?;
    assert_eq!(first.status, 200, "{:?}", first.body);
    let again = format!("again_{call}");
    let parts = first.body["message"]["parts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let reopened = parts.iter().find(|p| p["id"] == again.as_str()).cloned();
    let reopened = reopened.ok_or_else(|| first.body.to_string())?;
    assert_eq!(reopened["state"], "approval-requested", "{reopened}");
    assert_eq!(reopened["preview"]["restaurantName"], "Chả Cá Thăng Long");
    assert_eq!(
        reopened["input"], part["input"],
        "the same booking as before"
    );
    let second = reopen(app.client.clone()).await?;
    assert_eq!(second.status, 200);
    assert_eq!(second.body["message"]["id"], first.body["message"]["id"]);
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 1);

    let booked = decide(&app, &app.client, &conversation, &again, true).await?;
    assert_eq!(booked.status, 200, "{:?}", booked.body);
    let output = booked.of_type("tool-output-available");
    assert_eq!(output.len(), 1, "{:#?}", booked.events);
    assert_eq!(output[0]["output"]["status"], "confirmed");
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);

    // The booked call is not one that moved on: nothing to reopen.
    let body = json!({"conversationId": conversation, "toolCallId": again});
    let refused = app.post(&app.client, "/api/calls/reopen", body).await?;
    assert_eq!(refused.status, 409, "{:?}", refused.body);
    assert_eq!(refused.body["error"]["code"], "NOT_REOPENABLE");
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);

    // Call ids are only unique within a conversation: another conversation with the same
    // call id reopens its own.
    let (other, other_call) = pending_booking(&app, &app.client).await?;
    assert_eq!(
        other_call, call,
        "the offline model numbers calls per conversation"
    );
    app.chat(Some(&other), "Thời tiết Huế thế nào?").await?;
    let body = json!({"conversationId": other, "toolCallId": other_call});
    let reopened = app.post(&app.client, "/api/calls/reopen", body).await?;
    assert_eq!(reopened.status, 200, "{:?}", reopened.body);
    assert_ne!(reopened.body["message"]["id"], first.body["message"]["id"]);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The AI SDK chat transport's body: decisions, regeneration and client ids

/// `messages` as an AI SDK client sends them to answer call `call` of reply `reply`.
fn answering(reply: &str, call: &str, approved: bool) -> Value {
    json!([
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": support::BOOK}]},
        {"id": reply, "role": "assistant", "parts": [
            {"type": "tool-createBooking", "toolCallId": call, "state": "approval-responded",
             "input": {"restaurantId": "forged", "partySize": 99},
             "approval": {"id": call, "approved": approved}}
        ]}
    ])
}

/// The stored conversation's messages as AI SDK UIMessages.
async fn ui_messages(
    app: &TestApp,
    client: &reqwest::Client,
    id: &str,
) -> Result<Vec<Value>, Box<dyn std::error::Error + Send + Sync>> {
    let response = client
        .get(app.url(&format!("/api/conversations/{id}?format=ui")))
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 200);
    let body: Value = response.json().await?;
    Ok(body["messages"].as_array().cloned().unwrap_or_default())
}

#[tokio::test]
async fn a_transport_decision_books_the_stored_input_once_and_a_replay_runs_nothing() -> TestResult
{
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app, &app.client).await?;
    let reply_id = stored_reply_id(&app, &conversation).await?;
    let body = json!({"id": conversation, "trigger": "submit-message", "messageId": reply_id,
        "messages": answering(&reply_id, &call, true)});
    let decided = app.post(&app.client, "/api/chat", body.clone()).await?;
    assert_eq!(decided.status, 200, "{:?}", decided.body);
    // The reply goes on in the same message, and the decision is a transient data chunk.
    assert_eq!(decided.events[0]["messageId"], reply_id.as_str());
    let chunk = decided.of_type("data-tool-approval-response");
    assert_eq!(chunk.len(), 1, "{:#?}", decided.events);
    assert_eq!(chunk[0]["transient"], true);
    let output = decided.of_type("tool-output-available");
    // The stored input was booked (4 people), not the forged one the client sent.
    assert_eq!(output[0]["output"]["partySize"], 4, "{:#?}", decided.events);
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);

    let again = app.post(&app.client, "/api/chat", body).await?;
    assert_eq!(again.status, 409);
    assert_eq!(again.body["error"]["code"], "ALREADY_RESOLVED");
    let made_up = app
        .post(
            &app.client,
            "/api/chat",
            json!({"id": conversation, "messages": answering(&reply_id, "call_made_up", true)}),
        )
        .await?;
    assert_eq!(made_up.status, 404, "{:?}", made_up.body);
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);

    // What a reload hands the client: the approval with the output, in UI form.
    let messages = ui_messages(&app, &app.client, &conversation).await?;
    let part = messages
        .iter()
        .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
        .find(|p| p["toolCallId"] == call.as_str())
        .ok_or("the booking call's part")?;
    assert_eq!(part["type"], "tool-createBooking");
    assert_eq!(part["state"], "output-available");
    assert_eq!(part["approval"], json!({"id": call, "approved": true}));
    Ok(())
}

/// The id of the conversation's last message.
async fn stored_reply_id(app: &TestApp, conversation: &str) -> support::Fallible<String> {
    let (_, body) = app
        .get_json(&format!("/api/conversations/{conversation}"))
        .await?;
    Ok(body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["id"].as_str())
        .unwrap_or_default()
        .to_owned())
}

#[tokio::test]
async fn regenerating_keeps_what_was_carried_out_and_books_once() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app, &app.client).await?;
    let decided = decide(&app, &app.client, &conversation, &call, true).await?;
    assert_eq!(decided.status_of_run().as_deref(), Some("completed"));
    let booking_id = decided.of_type("tool-output-available")[0]["output"]["bookingId"].clone();
    let regenerate = json!({"conversationId": conversation, "trigger": "regenerate-message"});
    for round in 0..4 {
        let again = app
            .post(&app.client, "/api/chat", regenerate.clone())
            .await?;
        assert_eq!(again.status, 200, "round {round}: {:?}", again.body);
        assert_eq!(again.status_of_run().as_deref(), Some("completed"));
        // The booking begins the new reply as it ended; nothing asks for approval again.
        let outputs = again.of_type("tool-output-available");
        assert_eq!(outputs[0]["toolCallId"], call.as_str(), "round {round}");
        assert_eq!(outputs[0]["output"]["bookingId"], booking_id);
        assert!(again.of_type("tool-approval-request").len() <= 1);
        assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);
        assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 0);
    }
    // Replaced, not added: the search turn, then the booking turn's message and reply.
    let messages = ui_messages(&app, &app.client, &conversation).await?;
    assert_eq!(messages.len(), 4, "{messages:#?}");
    let booked: Vec<_> = messages
        .iter()
        .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p["type"] == "tool-createBooking")
        .collect();
    assert_eq!(booked.len(), 1);
    assert_eq!(booked[0]["output"]["bookingId"], booking_id);

    // What happened is counted (per process; other tests here count too).
    let response = app.client.get(app.url("/metrics")).send().await?;
    assert_eq!(response.status().as_u16(), 200);
    assert!(
        response.headers().get("set-cookie").is_none(),
        "a probe gets no owner"
    );
    let scraped = response.text().await?;
    for line in [
        "datban_approvals_total{decision=\"approved\"}",
        "datban_tool_calls_total{tool=\"createBooking\",outcome=\"ok\"}",
        "datban_tool_calls_total{tool=\"createBooking\",outcome=\"awaiting_approval\"}",
        "datban_runs_total{status=\"completed\"}",
        "datban_model_turn_seconds_count{provider=\"offline\"}",
    ] {
        assert!(scraped.contains(line), "{line} missing from\n{scraped}");
    }

    // Only the newest reply can be written again.
    let first_reply = messages[1]["id"]
        .as_str()
        .ok_or("the first reply's id")?
        .to_owned();
    let older = app
        .post(
            &app.client,
            "/api/chat",
            json!({"id": conversation, "messages": [], "trigger": "regenerate-message",
                "messageId": first_reply}),
        )
        .await?;
    assert_eq!(older.status, 409);
    assert_eq!(older.body["error"]["code"], "NOT_LAST_REPLY");
    Ok(())
}

#[tokio::test]
async fn a_client_chat_id_is_the_owners_own_and_a_message_is_answered_once() -> TestResult {
    let app = spawn_app().await?;
    let other = support::new_client()?;
    let say = |text: &str, id: &str| {
        json!({"id": "shared-chat-1", "trigger": "submit-message",
            "messages": [{"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}]})
    };
    let mine = app
        .post(&app.client, "/api/chat", say("Xin chào", "m-1"))
        .await?;
    assert_eq!(mine.status, 200, "{:?}", mine.body);
    let theirs = app
        .post(&other, "/api/chat", say("Thời tiết Huế thế nào?", "m-1"))
        .await?;
    assert_eq!(theirs.status, 200, "{:?}", theirs.body);
    assert_ne!(mine.conversation_id(), theirs.conversation_id());
    let seen = ui_messages(&app, &app.client, "shared-chat-1").await?;
    assert_eq!(
        seen[0],
        json!({"id": "m-1", "role": "user", "parts": [{"type": "text", "text": "Xin chào"}]})
    );
    assert_eq!(seen.len(), 2);
    let theirs_seen = ui_messages(&app, &other, "shared-chat-1").await?;
    assert_eq!(theirs_seen[0]["parts"][0]["text"], "Thời tiết Huế thế nào?");

    let twice = app
        .post(&app.client, "/api/chat", say("Xin chào", "m-1"))
        .await?;
    assert_eq!(twice.status, 409);
    assert_eq!(twice.body["error"]["code"], "DUPLICATE_MESSAGE");
    let bad = app
        .post(
            &app.client,
            "/api/chat",
            json!({"id": "no/slashes", "messages": [{"id": "x", "role": "user",
                "parts": [{"type": "text", "text": "hi"}]}]}),
        )
        .await?;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.body["error"]["code"], "INVALID_ID");
    assert_eq!(app.count("SELECT COUNT(*) FROM conversations").await?, 2);
    Ok(())
}

#[tokio::test]
async fn regenerating_a_confirmation_closes_it_and_asks_anew() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app, &app.client).await?;
    let again = app
        .post(
            &app.client,
            "/api/chat",
            json!({"conversationId": conversation, "trigger": "regenerate-message"}),
        )
        .await?;
    assert_eq!(again.status_of_run().as_deref(), Some("awaiting-approval"));
    let asked = again.of_type("tool-approval-request");
    assert_eq!(asked.len(), 1, "{:#?}", again.events);
    // One confirmation is open: the new reply's. The replaced one's went with it.
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 1);
    let old = decide(&app, &app.client, &conversation, &call, true).await?;
    if asked[0]["toolCallId"] != call.as_str() {
        assert_eq!(old.status, 404, "{:?}", old.body);
        assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 0);
    }
    let new_call = asked[0]["toolCallId"]
        .as_str()
        .ok_or("the new confirmation's call id")?
        .to_owned();
    let decided = decide(&app, &app.client, &conversation, &new_call, true).await?;
    assert!(matches!(decided.status, 200 | 409), "{:?}", decided.body);
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);
    Ok(())
}

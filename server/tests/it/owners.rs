//! Owners are walled off from each other: another owner's conversation, pending call,
//! booking and checkout draft look exactly like ones that do not exist (404 over HTTP,
//! `NOT_FOUND` from a tool), and nothing of theirs runs, changes or is declined.
//!
//! Owner A is `app.client`; owner B is a second cookie jar (`support::new_client()`). The
//! model is switchable: the offline model sets A's things up through the real flows, then
//! a fake provider on a socket plays a model that proposes A's ids in B's conversations.

use crate::support;

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use serde_json::{json, Value};
use server::model::{
    offline::OfflineModel, ModelProvider, ModelRequest, SharedProvider, TurnStream,
};
use support::{
    fake_provider::{chat_call, chat_text, openai_chat, spawn},
    Reply, TestApp, TestResult,
};

const SEARCH: &str = "Tìm nhà hàng chả cá ở Hà Nội";
const BOOK: &str = "Đặt bàn ở Chả Cá Thăng Long cho 4 người tối mai lúc 19:00";
const SUGGEST: &str = "Gợi ý quà cho mẹ thích làm vườn dưới 1 triệu";
const BUY: &str = "Mua món đầu tiên";

/// A model that can be replaced while the server runs: each turn goes to the provider set
/// last, so a test can set things up with one model and go on with another.
struct Switch(Mutex<SharedProvider>);

impl Switch {
    fn set(&self, provider: SharedProvider) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = provider;
    }
}

impl ModelProvider for Switch {
    fn stream_turn(&self, request: ModelRequest) -> TurnStream {
        let provider = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        provider.stream_turn(request)
    }
}

fn offline(token_delay: Duration) -> SharedProvider {
    Arc::new(OfflineModel::new(token_delay).with_now(support::local_now()))
}

async fn switchable_app() -> support::Fallible<(TestApp, Arc<Switch>)> {
    let switch = Arc::new(Switch(Mutex::new(offline(Duration::ZERO))));
    let app = support::spawn_app_with_provider(switch.clone()).await?;
    Ok((app, switch))
}

async fn chat(app: &TestApp, client: &reqwest::Client, body: Value) -> support::Fallible<Reply> {
    app.post(client, "/api/chat", body).await
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

async fn get(
    app: &TestApp,
    client: &reqwest::Client,
    path: &str,
) -> Result<(u16, Value), Box<dyn std::error::Error + Send + Sync>> {
    let response = client.get(app.url(path)).send().await?;
    let status = response.status().as_u16();
    Ok((status, response.json().await.unwrap_or(Value::Null)))
}

async fn post_empty(
    app: &TestApp,
    client: &reqwest::Client,
    path: &str,
) -> Result<(u16, Value), Box<dyn std::error::Error + Send + Sync>> {
    let response = client.post(app.url(path)).send().await?;
    let status = response.status().as_u16();
    Ok((status, response.json().await.unwrap_or(Value::Null)))
}

fn assert_not_found(status: u16, body: &Value) {
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], "NOT_FOUND", "{body}");
    // A stranger learns nothing about the call, not even that it was decided.
    assert!(body.get("outcome").is_none(), "{body}");
}

/// A restaurant conversation of `client` paused on its createBooking confirmation.
async fn pending_booking(
    app: &TestApp,
    client: &reqwest::Client,
) -> support::Fallible<(String, String)> {
    let search = chat(app, client, json!({"text": SEARCH})).await?;
    assert_eq!(search.status_of_run().as_deref(), Some("completed"));
    let conversation = search.conversation_id();
    let booking = chat(
        app,
        client,
        json!({"conversationId": conversation, "text": BOOK}),
    )
    .await?;
    assert_eq!(
        booking.status_of_run().as_deref(),
        Some("awaiting-approval"),
        "{:#?}",
        booking.events
    );
    Ok((conversation, booking.call_id("createBooking")))
}

/// A committed booking of `client`: its conversation, call and booking id.
async fn confirmed_booking(
    app: &TestApp,
    client: &reqwest::Client,
) -> Result<(String, String, String), Box<dyn std::error::Error + Send + Sync>> {
    let (conversation, call) = pending_booking(app, client).await?;
    let approved = decide(app, client, &conversation, &call, true).await?;
    let output = approved.of_type("tool-output-available");
    assert_eq!(output.len(), 1, "{:#?}", approved.events);
    assert_eq!(output[0]["output"]["status"], "confirmed");
    let booking = output[0]["output"]["bookingId"]
        .as_str()
        .ok_or("a confirmed booking's id")?
        .to_owned();
    Ok((conversation, call, booking))
}

/// A gifts conversation of `client` paused on its create_checkout_session confirmation:
/// the conversation, the call and the draft it would buy.
async fn pending_purchase(
    app: &TestApp,
    client: &reqwest::Client,
) -> Result<(String, String, String), Box<dyn std::error::Error + Send + Sync>> {
    let first = chat(app, client, json!({"text": SUGGEST, "assistant": "gifts"})).await?;
    assert_eq!(first.status_of_run().as_deref(), Some("completed"));
    let conversation = first.conversation_id();
    let second = chat(
        app,
        client,
        json!({"conversationId": conversation, "text": BUY}),
    )
    .await?;
    assert_eq!(
        second.status_of_run().as_deref(),
        Some("awaiting-approval"),
        "{:#?}",
        second.events
    );
    let call = second.call_id("create_checkout_session");
    let draft = second
        .of_type("tool-input-available")
        .into_iter()
        .find(|e| e["toolCallId"] == call.as_str())
        .and_then(|e| e["input"]["draft_id"].as_str())
        .ok_or("the checkout call's draft_id")?
        .to_owned();
    Ok((conversation, call, draft))
}

/// Row counts that any execution would change.
#[derive(Debug, PartialEq, Eq)]
struct Counts {
    bookings: i64,
    confirmed: i64,
    checkouts: i64,
    open_drafts: i64,
    idempotency_keys: i64,
    pending_calls: i64,
    messages: i64,
}

async fn counts(app: &TestApp) -> support::Fallible<Counts> {
    Ok(Counts {
        bookings: app.count("SELECT COUNT(*) FROM bookings").await?,
        confirmed: app
            .count("SELECT COUNT(*) FROM bookings WHERE status = 'confirmed'")
            .await?,
        checkouts: app.count("SELECT COUNT(*) FROM checkouts").await?,
        open_drafts: app
            .count("SELECT COUNT(*) FROM checkout_drafts WHERE status = 'open'")
            .await?,
        idempotency_keys: app.count("SELECT COUNT(*) FROM idempotency_keys").await?,
        pending_calls: app.count("SELECT COUNT(*) FROM pending_calls").await?,
        messages: app.count("SELECT COUNT(*) FROM messages").await?,
    })
}

/// The stored state of call `call` in `conversation`, as its owner (`client`) sees it.
async fn part_state(
    app: &TestApp,
    client: &reqwest::Client,
    conversation: &str,
    call: &str,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let (status, body) = get(app, client, &format!("/api/conversations/{conversation}")).await?;
    assert_eq!(status, 200, "{body}");
    Ok(body["messages"]
        .as_array()
        .ok_or("the conversation's messages")?
        .iter()
        .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
        .find(|p| p["id"] == call)
        .and_then(|p| p["state"].as_str().map(str::to_owned))
        .unwrap_or_default())
}

#[tokio::test]
async fn another_owners_ids_answer_404_over_http_and_nothing_runs() -> TestResult {
    let (app, switch) = switchable_app().await?;
    let a = app.client.clone();
    let b = support::new_client()?;

    // Owner A: a committed booking, a booking waiting for confirmation, and a purchase
    // waiting for confirmation.
    let (booked, booked_call, booking_id) = confirmed_booking(&app, &a).await?;
    let (pending, pending_call) = pending_booking(&app, &a).await?;
    let (gifts, purchase_call, _draft) = pending_purchase(&app, &a).await?;
    let before = counts(&app).await?;
    assert_eq!(before.bookings, 1);
    assert_eq!(before.pending_calls, 2);
    assert_eq!(before.checkouts, 0);

    // B reads none of A's conversations.
    for conversation in [&booked, &pending, &gifts] {
        let (status, body) = get(&app, &b, &format!("/api/conversations/{conversation}")).await?;
        assert_not_found(status, &body);
    }
    // B cannot write into them: nothing is appended, and A's open confirmations are not
    // declined (a new message in a conversation declines what is pending there).
    for conversation in [&booked, &pending, &gifts] {
        let reply = chat(
            &app,
            &b,
            json!({"conversationId": conversation, "text": "Đồng ý, đặt đi"}),
        )
        .await?;
        assert_not_found(reply.status, &reply.body);
    }
    // B cannot decide A's calls: pending ones, or the one already decided (which would
    // otherwise answer 409 and tell that it exists).
    for (conversation, call) in [
        (&pending, &pending_call),
        (&gifts, &purchase_call),
        (&booked, &booked_call),
    ] {
        for approved in [true, false] {
            let reply = decide(&app, &b, conversation, call, approved).await?;
            assert_not_found(reply.status, &reply.body);
        }
    }
    // Nor with A's call ids in a conversation of B's own.
    let own = chat(&app, &b, json!({"text": "Xin chào"})).await?;
    assert_eq!(own.status, 200);
    let own = own.conversation_id();
    for call in [&pending_call, &purchase_call] {
        let reply = decide(&app, &b, &own, call, true).await?;
        assert_not_found(reply.status, &reply.body);
    }
    // B cannot stop A's conversations.
    for conversation in [&booked, &pending, &gifts] {
        let (status, body) =
            post_empty(&app, &b, &format!("/api/chat/{conversation}/stop")).await?;
        assert_not_found(status, &body);
    }
    // B's bookings are B's: none.
    for path in ["/api/bookings", "/api/bookings?all=1"] {
        let (status, body) = get(&app, &b, path).await?;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["bookings"], json!([]), "{body}");
        assert!(!body.to_string().contains(&booking_id), "{body}");
        let (status, mine) = get(&app, &a, path).await?;
        assert_eq!(status, 200);
        let ids: Vec<&str> = mine["bookings"]
            .as_array()
            .ok_or("A's bookings")?
            .iter()
            .filter_map(|b| b["bookingId"].as_str())
            .collect();
        assert_eq!(ids, [booking_id.as_str()], "{mine}");
    }

    // Nothing ran, changed or was declined: only B's own "Xin chào" was written.
    let after = counts(&app).await?;
    assert_eq!(
        after,
        Counts {
            messages: before.messages + 2,
            ..before
        }
    );
    assert_eq!(
        part_state(&app, &a, &pending, &pending_call).await?,
        "approval-requested"
    );
    assert_eq!(
        part_state(&app, &a, &gifts, &purchase_call).await?,
        "approval-requested"
    );

    // B's stop while A's reply is running answers 404 and stops nothing: A's own stop,
    // after it, still finds the run going.
    switch.set(offline(Duration::from_millis(20)));
    let running = {
        let (app, a, booked) = (&app, a.clone(), booked.clone());
        async move { chat(app, &a, json!({"conversationId": booked, "text": "#loop"})).await }
    };
    let stops = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (status, body) = post_empty(&app, &b, &format!("/api/chat/{booked}/stop")).await?;
        assert_not_found(status, &body);
        tokio::time::sleep(Duration::from_millis(100)).await;
        post_empty(&app, &a, &format!("/api/chat/{booked}/stop")).await
    };
    let (reply, stopped) = tokio::join!(running, stops);
    let reply = reply?;
    let (status, body) = stopped?;
    assert_eq!(status, 200);
    assert_eq!(
        body["stopped"], true,
        "A's run was still going after B's stop"
    );
    assert_eq!(reply.status_of_run().as_deref(), Some("stopped"));
    switch.set(offline(Duration::ZERO));

    // The real owner can still decide: A's pending booking and purchase both go through.
    let booked_now = decide(&app, &a, &pending, &pending_call, true).await?;
    assert_eq!(
        booked_now.of_type("tool-output-available").len(),
        1,
        "{:#?}",
        booked_now.events
    );
    let bought = decide(&app, &a, &gifts, &purchase_call, true).await?;
    let output = bought.of_type("tool-output-available");
    assert_eq!(output.len(), 1, "{:#?}", bought.events);
    assert!(output[0]["output"]["checkout_id"]
        .as_str()
        .ok_or("the checkout's id")?
        .starts_with("CHK-"));
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 2);
    assert_eq!(app.count("SELECT COUNT(*) FROM checkouts").await?, 1);
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 0);
    Ok(())
}

#[tokio::test]
async fn a_model_naming_another_owners_booking_or_draft_gets_not_found_before_any_confirmation(
) -> TestResult {
    let (app, switch) = switchable_app().await?;
    let a = app.client.clone();
    let b = support::new_client()?;

    // Owner A, through the real flows: a confirmed booking and an open checkout draft.
    let (_, _, booking_id) = confirmed_booking(&app, &a).await?;
    let (gifts, purchase_call, draft_id) = pending_purchase(&app, &a).await?;
    let before = counts(&app).await?;

    // From here on the model is a fake that proposes A's ids in B's conversations (and, to
    // compare, an id nobody has).
    let fake = spawn(vec![
        chat_call(
            "call_b1",
            "cancelBooking",
            &json!({"bookingId": booking_id}).to_string(),
        ),
        chat_call(
            "call_b2",
            "cancelBooking",
            &json!({"bookingId": "BK-00000000"}).to_string(),
        ),
        chat_text("Tôi không tìm thấy đặt chỗ đó của bạn."),
        chat_call(
            "call_b3",
            "create_checkout_session",
            &json!({"draft_id": draft_id, "idempotency_key": format!("checkout-{draft_id}")})
                .to_string(),
        ),
        chat_text("Tôi không tìm thấy đơn nháp đó."),
    ])
    .await?;
    switch.set(openai_chat(&fake)?);

    let reply = chat(
        &app,
        &b,
        json!({"text": format!("Huỷ đặt chỗ {booking_id}")}),
    )
    .await?;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.status_of_run().as_deref(),
        Some("completed"),
        "{:#?}",
        reply.events
    );
    // Both calls validate (the ids are well-formed), then the precheck answers NOT_FOUND:
    // no confirmation is ever shown, nothing is stored as pending.
    assert_eq!(reply.of_type("tool-input-available").len(), 2);
    assert!(
        reply.of_type("tool-approval-request").is_empty(),
        "{:#?}",
        reply.events
    );
    let errors = reply.of_type("tool-output-error");
    assert_eq!(errors.len(), 2, "{:#?}", reply.events);
    for error in &errors {
        assert_eq!(error["error"]["code"], "NOT_FOUND", "{error}");
        assert_eq!(error["error"]["retryable"], false, "{error}");
    }
    // Another owner's booking is answered exactly like one that does not exist.
    let message = |index: usize| {
        errors[index]["errorText"]
            .as_str()
            .map(str::to_owned)
            .ok_or("a tool error's text")
    };
    let (theirs, nobodys) = (message(0)?, message(1)?);
    assert_eq!(
        theirs.replace(&booking_id, "BK-00000000"),
        nobodys,
        "the answer must not tell that the booking exists"
    );
    assert!(!theirs.contains("Chả Cá"), "{theirs}");
    let conversation = reply.conversation_id();
    assert_eq!(
        part_state(&app, &b, &conversation, "call_b1").await?,
        "output-error"
    );

    let purchase = chat(
        &app,
        &b,
        json!({"text": "Mua quà đó giúp tôi", "assistant": "gifts"}),
    )
    .await?;
    assert_eq!(
        purchase.status_of_run().as_deref(),
        Some("completed"),
        "{:#?}",
        purchase.events
    );
    assert!(purchase.of_type("tool-approval-request").is_empty());
    let errors = purchase.of_type("tool-output-error");
    assert_eq!(errors.len(), 1, "{:#?}", purchase.events);
    assert_eq!(errors[0]["toolCallId"], "call_b3");
    assert_eq!(errors[0]["error"]["code"], "NOT_FOUND");

    // The model heard the same NOT_FOUND (as a tool result) and nothing else about A.
    let sent = fake.requests();
    assert_eq!(sent.len(), 5);
    let results: Vec<String> = sent[2].body["messages"]
        .as_array()
        .ok_or("the third request's messages")?
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results.iter().all(|r| r.contains("NOT_FOUND")),
        "{results:?}"
    );

    // A's booking is untouched, A's draft still open; nothing ran or was recorded.
    let (status,): (String,) = sqlx::query_as("SELECT status FROM bookings WHERE id = $1")
        .bind(&booking_id)
        .fetch_one(&app.pool)
        .await?;
    assert_eq!(status, "confirmed");
    let after = counts(&app).await?;
    assert_eq!(after.bookings, before.bookings);
    assert_eq!(after.confirmed, before.confirmed);
    assert_eq!(after.checkouts, 0);
    assert_eq!(after.open_drafts, before.open_drafts);
    assert_eq!(after.idempotency_keys, before.idempotency_keys);
    assert_eq!(after.pending_calls, before.pending_calls);

    // And A can still buy with that draft.
    switch.set(offline(Duration::ZERO));
    let bought = decide(&app, &a, &gifts, &purchase_call, true).await?;
    let output = bought.of_type("tool-output-available");
    assert_eq!(output.len(), 1, "{:#?}", bought.events);
    assert_eq!(output[0]["output"]["draft_id"], json!(draft_id));
    assert_eq!(app.count("SELECT COUNT(*) FROM checkouts").await?, 1);
    Ok(())
}

//! The agent loop end to end over a real socket: the offline model proposes, the server
//! validates, executes, pauses for approval and persists.

use crate::support;

use serde_json::{json, Value};
use server::agent::AgentConfig;
use support::{read_reply, spawn_app, spawn_app_on, spawn_app_with, Reply, TestApp, TestResult};

const SEARCH: &str = "Tìm nhà hàng chả cá ở Hà Nội";
const BOOK_NO_SIZE: &str = "Đặt bàn ở Chả Cá Thăng Long tối mai lúc 19:00";
const BOOK_FULL: &str = "Đặt bàn ở Chả Cá Thăng Long cho 4 người tối mai lúc 19:00";

fn assert_well_formed(reply: &Reply) {
    assert_eq!(reply.status, 200);
    assert!(
        reply.content_type.starts_with("text/event-stream"),
        "{}",
        reply.content_type
    );
    assert_eq!(reply.stream_header.as_deref(), Some("v1"));
    assert!(reply.done, "stream must end with [DONE]");
    assert_eq!(
        reply.events.first().map(|e| e["type"].clone()),
        Some(json!("start"))
    );
    assert_eq!(
        reply.events.last().map(|e| e["type"].clone()),
        Some(json!("finish"))
    );
}

/// Search, then ask for a booking that the person must confirm.
async fn pending_booking(
    app: &TestApp,
) -> Result<(String, String), Box<dyn std::error::Error + Send + Sync>> {
    let search = app.chat(None, SEARCH).await?;
    assert_well_formed(&search);
    assert_eq!(
        search.of_type("tool-input-available")[0]["input"],
        json!({"city": "Hà Nội", "cuisine": "chả cá"})
    );
    let found = search.of_type("tool-output-available")[0]["output"]["restaurants"].clone();
    let found = found.as_array().ok_or("the search's restaurants")?;
    assert!(
        found.iter().any(|r| r["id"] == "hn-cha-ca-thang-long"),
        "{found:?}"
    );
    assert!(found.iter().all(|r| r["cuisine"] == "chả cá"), "{found:?}");
    let conversation = search.conversation_id();
    let booking = app.chat(Some(&conversation), BOOK_FULL).await?;
    assert_well_formed(&booking);
    assert_eq!(
        booking.status_of_run().as_deref(),
        Some("awaiting-approval"),
        "{:#?}",
        booking.events
    );
    let call = booking.call_id("createBooking");
    assert!(!call.is_empty());
    assert_eq!(
        booking.of_type("tool-approval-request")[0]["toolCallId"],
        json!(call)
    );
    Ok((conversation, call))
}

#[tokio::test]
async fn weather_for_one_city_streams_a_validated_call_and_its_output() -> TestResult {
    let app = spawn_app().await?;
    let reply = app.chat(None, "Thời tiết Hà Nội hôm nay thế nào?").await?;
    assert_well_formed(&reply);
    let available = reply.of_type("tool-input-available");
    assert_eq!(available.len(), 1);
    assert_eq!(available[0]["toolName"], "getWeather");
    // "Hôm nay" names the day: the test clock's today in Việt Nam.
    assert_eq!(
        available[0]["input"],
        json!({"city": "Hà Nội", "from": "2026-11-29"})
    );
    assert!(
        !reply.of_type("tool-input-delta").is_empty(),
        "arguments stream in pieces"
    );
    let output = reply.of_type("tool-output-available");
    assert_eq!(output.len(), 1);
    assert_eq!(output[0]["output"]["city"], "Hà Nội");
    assert_eq!(reply.status_of_run().as_deref(), Some("completed"));
    assert!(reply.text().contains("Hà Nội"), "{}", reply.text());
    Ok(())
}

#[tokio::test]
async fn two_cities_are_two_calls_in_one_step_matched_by_id() -> TestResult {
    let app = spawn_app().await?;
    let reply = app.chat(None, "Thời tiết Hà Nội và Đà Lạt ra sao?").await?;
    assert_well_formed(&reply);
    let starts = reply.of_type("tool-input-start");
    assert_eq!(starts.len(), 2);
    assert_ne!(starts[0]["toolCallId"], starts[1]["toolCallId"]);
    // Both calls belong to the first step: proposed before any result came back.
    let first_output = reply
        .events
        .iter()
        .position(|e| e["type"] == "tool-output-available")
        .ok_or("a tool output")?;
    let second_start = reply
        .events
        .iter()
        .position(|e| e["type"] == "tool-input-start" && e["toolCallId"] == starts[1]["toolCallId"])
        .ok_or("the second call's start")?;
    assert!(second_start < first_output);
    let outputs = reply.of_type("tool-output-available");
    for start in &starts {
        let output = outputs
            .iter()
            .find(|o| o["toolCallId"] == start["toolCallId"])
            .ok_or("an output for each call")?;
        let input = reply
            .of_type("tool-input-available")
            .into_iter()
            .find(|i| i["toolCallId"] == start["toolCallId"])
            .ok_or("an input for each call")?;
        assert_eq!(output["output"]["city"], input["input"]["city"]);
    }
    assert_eq!(reply.of_type("start-step").len(), 2);
    Ok(())
}

#[tokio::test]
async fn unknown_tool_gets_an_error_listing_the_available_tools() -> TestResult {
    let app = spawn_app().await?;
    let reply = app.chat(None, "#unknown-tool").await?;
    assert_well_formed(&reply);
    let errors = reply.of_type("tool-input-error");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["toolName"], "launchRocket");
    assert_eq!(errors[0]["error"]["code"], "UNKNOWN_TOOL");
    let text = errors[0]["errorText"].as_str().ok_or("the error's text")?;
    for tool in ["getWeather", "searchRestaurants", "createBooking"] {
        assert!(text.contains(tool), "{text}");
    }
    assert!(reply.of_type("tool-output-available").is_empty());
    Ok(())
}

#[tokio::test]
async fn malformed_arguments_are_rejected_before_anything_runs() -> TestResult {
    let app = spawn_app().await?;
    let reply = app.chat(None, "#bad-json").await?;
    assert_well_formed(&reply);
    let errors = reply.of_type("tool-input-error");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["error"]["code"], "VALIDATION_ERROR");
    assert!(errors[0]["errorText"]
        .as_str()
        .ok_or("the error's text")?
        .contains("not valid JSON"));
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 0);
    Ok(())
}

#[tokio::test]
async fn a_failing_tool_tells_the_model_little_and_the_log_everything() -> TestResult {
    let app = spawn_app().await?;
    let reply = app.chat(None, "#tool-error").await?;
    assert_well_formed(&reply);
    let errors = reply.of_type("tool-output-error");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["error"]["code"], "EXECUTION_FAILED");
    assert_eq!(errors[0]["error"]["retryable"], false);
    let everything = serde_json::to_string(&reply.events)?;
    for secret in [
        "weather-backend",
        "8443",
        "connection refused",
        "src/",
        ".rs",
    ] {
        assert!(
            !everything.contains(secret),
            "leaked {secret}: {everything}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_model_that_keeps_calling_tools_hits_the_step_limit() -> TestResult {
    let app = spawn_app().await?;
    let reply = app.chat(None, "#loop").await?;
    assert_well_formed(&reply);
    assert_eq!(reply.status_of_run().as_deref(), Some("step-limit"));
    assert_eq!(reply.of_type("start-step").len(), 6);

    let tight = spawn_app_with(AgentConfig {
        max_steps: 2,
        max_tool_errors: 3,
    })
    .await?;
    let reply = tight.chat(None, "#loop").await?;
    assert_eq!(reply.status_of_run().as_deref(), Some("step-limit"));
    assert_eq!(reply.of_type("start-step").len(), 2);
    Ok(())
}

#[tokio::test]
async fn repeated_invalid_calls_end_with_too_many_tool_errors() -> TestResult {
    let app = spawn_app().await?;
    let reply = app.chat(None, "#bad-args").await?;
    assert_well_formed(&reply);
    assert_eq!(
        reply.status_of_run().as_deref(),
        Some("too-many-tool-errors")
    );
    assert_eq!(reply.of_type("tool-input-error").len(), 3);
    let message = reply.of_type("tool-input-error")[0]["errorText"]
        .as_str()
        .ok_or("the error's text")?
        .to_owned();
    assert!(
        message.contains("partySize: expected integer, received string"),
        "{message}"
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 0);
    Ok(())
}

#[tokio::test]
async fn the_incident_a_booking_without_party_size_books_nothing_and_asks() -> TestResult {
    let app = spawn_app().await?;
    let search = app.chat(None, SEARCH).await?;
    let conversation = search.conversation_id();
    let reply = app.chat(Some(&conversation), BOOK_NO_SIZE).await?;
    assert_well_formed(&reply);
    let errors = reply.of_type("tool-input-error");
    assert_eq!(errors.len(), 1, "{:#?}", reply.events);
    assert_eq!(errors[0]["toolName"], "createBooking");
    assert!(errors[0]["errorText"]
        .as_str()
        .ok_or("the error's text")?
        .contains("partySize: required field is missing"));
    assert!(reply.of_type("tool-approval-request").is_empty());
    assert!(reply.of_type("tool-output-available").is_empty());
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 0);
    let text = reply.text().to_lowercase();
    assert!(text.contains("mấy người"), "{text}");
    assert!(!text.contains("đã đặt"), "{text}");

    // The person answers; the model tries again with the size, and now it needs approval.
    let retry = app.chat(Some(&conversation), "4 người").await?;
    assert_eq!(
        retry.status_of_run().as_deref(),
        Some("awaiting-approval"),
        "{:#?}",
        retry.events
    );
    let available = retry.of_type("tool-input-available");
    assert_eq!(available[0]["input"]["partySize"], 4);
    assert_eq!(
        available[0]["input"]["restaurantId"],
        "hn-cha-ca-thang-long"
    );
    Ok(())
}

#[tokio::test]
async fn approval_commits_exactly_one_booking_and_the_model_reports_it() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app).await?;
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 1);
    assert_eq!(
        app.count("SELECT COUNT(*) FROM bookings").await?,
        0,
        "nothing before approval"
    );

    let reply = app.decide(&conversation, &call, true, None).await?;
    assert_well_formed(&reply);
    let output = reply.of_type("tool-output-available");
    assert_eq!(output.len(), 1, "{:#?}", reply.events);
    let booking_id = output[0]["output"]["bookingId"]
        .as_str()
        .ok_or("the booking's id")?
        .to_owned();
    assert_eq!(output[0]["output"]["status"], "confirmed");
    assert_eq!(output[0]["output"]["partySize"], 4);
    assert_eq!(reply.status_of_run().as_deref(), Some("completed"));
    assert!(reply.text().contains(&booking_id), "{}", reply.text());
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 0);

    // A replayed decision executes nothing.
    let again = app.decide(&conversation, &call, true, None).await?;
    assert_eq!(again.status, 409);
    assert_eq!(again.body["error"]["code"], "ALREADY_RESOLVED");
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);

    // The stored conversation shows the receipt state.
    let (status, body) = app
        .get_json(&format!("/api/conversations/{conversation}"))
        .await?;
    assert_eq!(status, 200);
    let parts = body["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .ok_or("a stored reply")?["parts"]
        .clone();
    let booking = parts
        .as_array()
        .ok_or("the reply's parts")?
        .iter()
        .find(|p| p["tool"] == "createBooking")
        .ok_or("the createBooking part")?;
    assert_eq!(booking["state"], "output-available");
    assert_eq!(booking["output"]["bookingId"], json!(booking_id));
    Ok(())
}

#[tokio::test]
async fn decline_books_nothing_and_the_model_says_so() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app).await?;
    let reply = app.decide(&conversation, &call, false, None).await?;
    assert_well_formed(&reply);
    assert_eq!(reply.of_type("tool-output-denied").len(), 1);
    assert!(reply.of_type("tool-output-available").is_empty());
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 0);
    assert!(
        !reply.text().to_lowercase().contains("đã đặt bàn"),
        "{}",
        reply.text()
    );
    Ok(())
}

#[tokio::test]
async fn edited_input_is_validated_again_and_a_bad_edit_loses_nothing() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app).await?;
    let bad = app
        .decide(
            &conversation,
            &call,
            true,
            Some(json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 25, "startsAt": "2026-11-30T19:00:00+07:00"})),
        )
        .await?;
    assert_eq!(bad.status, 422);
    assert_eq!(bad.body["error"]["code"], "VALIDATION_ERROR");
    assert!(bad.body["error"]["message"]
        .as_str()
        .ok_or("the refusal's message")?
        .contains("partySize"));
    assert_eq!(
        app.count("SELECT COUNT(*) FROM pending_calls").await?,
        1,
        "still pending"
    );

    let closed = app
        .decide(
            &conversation,
            &call,
            true,
            Some(json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 6, "startsAt": "2026-11-30T23:30:00+07:00"})),
        )
        .await?;
    assert_eq!(closed.status, 422, "outside opening hours");

    let good = app
        .decide(
            &conversation,
            &call,
            true,
            Some(json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 6, "startsAt": "2026-11-30T20:00:00+07:00"})),
        )
        .await?;
    assert_well_formed(&good);
    let output = good.of_type("tool-output-available");
    assert_eq!(output[0]["output"]["partySize"], 6);
    let (size, starts): (i64, String) =
        sqlx::query_as("SELECT party_size, starts_at FROM bookings")
            .fetch_one(&app.pool)
            .await?;
    assert_eq!(size, 6);
    assert_eq!(starts, "2026-11-30T20:00:00+07:00");
    Ok(())
}

#[tokio::test]
async fn fifty_simultaneous_decisions_make_exactly_one_booking() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app).await?;
    let decisions = (0..50).map(|_| {
        let client = app.client.clone();
        let url = app.url("/api/approvals");
        let body = json!({"conversationId": conversation, "toolCallId": call, "approved": true});
        async move { read_reply(client.post(url).json(&body).send().await?).await }
    });
    let replies = futures::future::try_join_all(decisions).await?;
    let winners = replies.iter().filter(|r| r.status == 200).count();
    let losers: Vec<&Reply> = replies.iter().filter(|r| r.status == 409).collect();
    assert_eq!(winners, 1);
    assert_eq!(losers.len(), 49);
    assert!(losers
        .iter()
        .all(|r| r.body["error"]["code"] == "ALREADY_RESOLVED"));
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 1);
    Ok(())
}

#[tokio::test]
async fn a_restart_between_pause_and_decision_keeps_the_pending_call() -> TestResult {
    let (url, _db) = support::test_database_url().await?;
    let first = spawn_app_on(url.clone(), AgentConfig::default()).await?;
    let (conversation, call) = pending_booking(&first).await?;
    let client = first.client.clone();
    drop(first);

    let mut second = spawn_app_on(url, AgentConfig::default()).await?;
    second.client = client;
    let (status, body) = second
        .get_json(&format!("/api/conversations/{conversation}"))
        .await?;
    assert_eq!(status, 200);
    assert!(body.to_string().contains("approval-requested"));
    let reply = second.decide(&conversation, &call, true, None).await?;
    assert_well_formed(&reply);
    assert_eq!(reply.of_type("tool-output-available").len(), 1);
    assert_eq!(second.count("SELECT COUNT(*) FROM bookings").await?, 1);
    Ok(())
}

#[tokio::test]
async fn another_owner_can_neither_see_nor_decide() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app).await?;
    let stranger = support::new_client()?;
    let (status, _) = {
        let response = stranger
            .get(app.url(&format!("/api/conversations/{conversation}")))
            .send()
            .await?;
        (response.status().as_u16(), ())
    };
    assert_eq!(status, 404);
    let reply = app
        .post(
            &stranger,
            "/api/approvals",
            json!({"conversationId": conversation, "toolCallId": call, "approved": true}),
        )
        .await?;
    assert_eq!(reply.status, 404);
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 1);
    Ok(())
}

#[tokio::test]
async fn a_new_message_closes_what_was_pending_as_moved_on() -> TestResult {
    let app = spawn_app().await?;
    let (conversation, call) = pending_booking(&app).await?;
    let reply = app
        .chat(Some(&conversation), "Thôi, thời tiết Huế thế nào?")
        .await?;
    assert_well_formed(&reply);
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 0);
    let late = app.decide(&conversation, &call, true, None).await?;
    assert_eq!(late.status, 409);
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 0);
    let (_, body) = app
        .get_json(&format!("/api/conversations/{conversation}"))
        .await?;
    let closed = body["messages"]
        .as_array()
        .ok_or("the conversation's messages")?
        .iter()
        .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default())
        .find(|p| p["toolCallId"] == json!(call) || p["id"] == json!(call))
        .ok_or("the closed call's part")?;
    // Nobody declined: the call ends as what happened, with its input kept.
    assert_eq!(closed["state"], "output-error");
    assert_eq!(closed["error"]["code"], "MOVED_ON");
    assert_eq!(closed["input"]["restaurantId"], "hn-cha-ca-thang-long");
    Ok(())
}

#[tokio::test]
async fn bad_requests_get_clear_json_errors() -> TestResult {
    let app = spawn_app().await?;
    let response = app
        .client
        .post(app.url("/api/chat"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 400);
    let body: Value = response.json().await?;
    assert_eq!(body["error"]["code"], "BAD_REQUEST");

    let empty = app
        .post(&app.client, "/api/chat", json!({"text": "   "}))
        .await?;
    assert_eq!(empty.status, 422);
    assert_eq!(empty.body["error"]["code"], "EMPTY_MESSAGE");

    let long = app
        .post(&app.client, "/api/chat", json!({"text": "a".repeat(4001)}))
        .await?;
    assert_eq!(long.status, 413);

    let missing = app.chat(Some("conv_nope"), "hi").await?;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.body["error"]["code"], "NOT_FOUND");

    let (status, _) = app.get_json("/api/conversations/conv_nope").await?;
    assert_eq!(status, 404);
    Ok(())
}

#[tokio::test]
async fn the_same_model_call_ids_in_two_conversations_are_two_bookings() -> TestResult {
    let app = spawn_app().await?;
    let (first, first_call) = pending_booking(&app).await?;
    let (second, second_call) = pending_booking(&app).await?;
    assert_ne!(first, second);
    // The offline model numbers its calls per conversation, so the ids repeat.
    assert_eq!(first_call, second_call);
    let one = app.decide(&first, &first_call, true, None).await?;
    let two = app.decide(&second, &second_call, true, None).await?;
    assert_eq!(
        one.of_type("tool-output-available").len(),
        1,
        "{:#?}",
        one.events
    );
    assert_eq!(
        two.of_type("tool-output-available").len(),
        1,
        "{:#?}",
        two.events
    );
    assert_ne!(
        one.of_type("tool-output-available")[0]["output"]["bookingId"],
        two.of_type("tool-output-available")[0]["output"]["bookingId"]
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 2);
    Ok(())
}

#[tokio::test]
async fn stop_ends_a_running_reply_and_nothing_runs_after_it() -> TestResult {
    use std::sync::Arc;
    // A slow model, so the reply is still streaming when the stop arrives.
    let slow = server::model::offline::OfflineModel::new(std::time::Duration::from_millis(40))
        .with_now(support::local_now());
    let app = Arc::new(support::spawn_app_with_provider(Arc::new(slow)).await?);
    let first = app.chat(None, "Xin chào").await?;
    let conversation = first.conversation_id();

    let running = {
        let app = app.clone();
        let conversation = conversation.clone();
        tokio::spawn(async move { app.chat(Some(&conversation), "#loop").await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let response = app
        .client
        .post(app.url(&format!("/api/chat/{conversation}/stop")))
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 200);
    let body: Value = response.json().await?;
    assert_eq!(body["stopped"], true);

    let reply = running.await??;
    assert_well_formed(&reply);
    assert_eq!(
        reply.status_of_run().as_deref(),
        Some("stopped"),
        "{:#?}",
        reply.events
    );
    assert!(reply.of_type("start-step").len() < 6);
    // Saved as stopped; the next stop finds nothing running.
    let (_, stored) = app
        .get_json(&format!("/api/conversations/{conversation}"))
        .await?;
    let last = stored["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .ok_or("a stored reply")?;
    assert_eq!(last["status"], "stopped");
    let again: Value = app
        .client
        .post(app.url(&format!("/api/chat/{conversation}/stop")))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(again["stopped"], false);
    let stranger = support::new_client()?
        .post(app.url(&format!("/api/chat/{conversation}/stop")))
        .send()
        .await?;
    assert_eq!(stranger.status().as_u16(), 404);
    Ok(())
}

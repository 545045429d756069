//! Idempotency keys end to end: purchases proposed by the (offline) model in several
//! conversations of one person, all for the same draft and so with the same key, then
//! approved — once, twice, 50 times at once, and across two server processes sharing one
//! database. Exactly one checkout may ever exist.
//!
//! Runs on whichever backend the test database is (SQLite file, or Postgres when the test
//! command sets `DATBAN_TEST_POSTGRES_URL`).

use crate::support;

use futures::future::join_all;
use serde_json::{json, Value};
use support::{post_json, process::start_server, TestResult};

const SUGGEST: &str = "Gợi ý quà cho mẹ thích làm vườn dưới 1 triệu";
const BUY: &str = "Mua món đầu tiên";

/// A conversation paused on its create_checkout_session confirmation.
struct PendingPurchase {
    conversation_id: String,
    call_id: String,
    input: Value,
}

async fn pending_purchase(
    client: &reqwest::Client,
    base: &str,
) -> Result<PendingPurchase, Box<dyn std::error::Error + Send + Sync>> {
    let first = post_json(
        client,
        base,
        "/api/chat",
        json!({"text": SUGGEST, "assistant": "gifts"}),
    )
    .await?;
    assert_eq!(
        first.status_of_run().as_deref(),
        Some("completed"),
        "{:#?}",
        first.events
    );
    let conversation_id = first.conversation_id();
    let second = post_json(
        client,
        base,
        "/api/chat",
        json!({"conversationId": conversation_id, "text": BUY}),
    )
    .await?;
    assert_eq!(
        second.status_of_run().as_deref(),
        Some("awaiting-approval"),
        "{:#?}",
        second.events
    );
    let call_id = second.call_id("create_checkout_session");
    let input = second
        .of_type("tool-input-available")
        .into_iter()
        .find(|e| e["toolCallId"] == call_id.as_str())
        .map(|e| e["input"].clone())
        .ok_or("no input for the create_checkout_session call")?;
    Ok(PendingPurchase {
        conversation_id,
        call_id,
        input,
    })
}

async fn approve(
    client: &reqwest::Client,
    base: &str,
    purchase: &PendingPurchase,
) -> support::Fallible<Result<Value, Value>> {
    let reply = post_json(
        client,
        base,
        "/api/approvals",
        json!({"conversationId": purchase.conversation_id, "toolCallId": purchase.call_id, "approved": true}),
    )
    .await?;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let of_call = |kind: &str| {
        reply
            .of_type(kind)
            .into_iter()
            .find(|e| e["toolCallId"] == purchase.call_id.as_str())
            .cloned()
    };
    Ok(
        match (
            of_call("tool-output-available"),
            of_call("tool-output-error"),
        ) {
            (Some(ok), None) => Ok(ok["output"].clone()),
            (None, Some(error)) => Err(error["error"].clone()),
            other => panic!("expected one outcome, got {other:?}: {:#?}", reply.events),
        },
    )
}

#[tokio::test]
async fn two_conversations_with_one_key_make_one_checkout_and_the_same_result() -> TestResult {
    let app = support::spawn_app().await?;
    let base = app.url("");
    let a = pending_purchase(&app.client, &base).await?;
    let b = pending_purchase(&app.client, &base).await?;
    // The same person buying the same draft: the model chose the same key both times.
    assert_eq!(a.input, b.input);
    assert!(a.input["idempotency_key"]
        .as_str()
        .ok_or("no idempotency_key")?
        .contains(a.input["draft_id"].as_str().ok_or("no draft_id")?));

    let first = approve(&app.client, &base, &a)
        .await?
        .map_err(|error| format!("first approval failed: {error}"))?;
    let second = approve(&app.client, &base, &b)
        .await?
        .map_err(|error| format!("second approval failed: {error}"))?;
    assert_eq!(first, second, "a repeat returns the stored result");
    assert!(first["checkout_id"]
        .as_str()
        .ok_or("no checkout_id")?
        .starts_with("CHK-"));
    assert_eq!(first["fictional"], true);
    assert_eq!(app.count("SELECT COUNT(*) FROM checkouts").await?, 1);
    Ok(())
}

#[tokio::test]
async fn fifty_concurrent_approvals_with_one_key_make_exactly_one_checkout() -> TestResult {
    let app = support::spawn_app().await?;
    let base = app.url("");
    let mut purchases = Vec::new();
    for _ in 0..50 {
        purchases.push(pending_purchase(&app.client, &base).await?);
    }
    let results = join_all(purchases.iter().map(|p| approve(&app.client, &base, p)))
        .await
        .into_iter()
        .collect::<support::Fallible<Vec<_>>>()?;
    assert_eq!(app.count("SELECT COUNT(*) FROM checkouts").await?, 1);
    assert_outcomes(&results);
    Ok(())
}

/// Every outcome is the one checkout, or "in use, retry" — never a second checkout, never
/// another error.
fn assert_outcomes(results: &[Result<Value, Value>]) {
    let successes: Vec<&Value> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert!(!successes.is_empty(), "{results:#?}");
    for success in &successes {
        assert_eq!(*success, successes[0]);
    }
    for error in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(error["code"], "IDEMPOTENCY_KEY_IN_USE", "{error}");
        assert_eq!(error["retryable"], true);
    }
}

#[tokio::test]
async fn two_server_processes_sharing_the_database_make_exactly_one_checkout() -> TestResult {
    // The in-process app only creates and migrates the database and counts rows.
    let app = support::spawn_app().await?;
    let one = start_server(&app.db_url, &[]).await?;
    let two = start_server(&app.db_url, &[]).await?;
    // One cookie jar: the same person on both processes (they share the signing key
    // stored in the database).
    let client = support::new_client()?;
    let mut purchases = Vec::new();
    for index in 0..50 {
        let base = if index % 2 == 0 { &one.base } else { &two.base };
        purchases.push(pending_purchase(&client, base).await?);
    }
    let results = join_all(purchases.iter().enumerate().map(|(index, p)| {
        let base = if index % 2 == 0 { &two.base } else { &one.base };
        approve(&client, base, p)
    }))
    .await
    .into_iter()
    .collect::<support::Fallible<Vec<_>>>()?;
    assert_eq!(app.count("SELECT COUNT(*) FROM checkouts").await?, 1);
    assert_outcomes(&results);
    Ok(())
}

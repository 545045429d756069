//! Durability under a burst: the real server binary is killed (SIGKILL) while dozens of
//! approvals and chats are being written at once. Whatever a person was shown as done
//! survives: every booking whose receipt was streamed is in the database with its
//! idempotency record after the restart, every confirmation that was streamed as asked
//! is either still pending or booked (never lost, never both), and the restarted server
//! carries on.

use crate::support;

use std::{collections::HashSet, time::Duration};

use futures::{future::try_join_all, StreamExt};
use serde_json::{json, Value};
use support::{new_client, process::start_server, TestApp, TestResult};
use tokio::sync::mpsc;

const PEOPLE: usize = 30;
const WEATHER: &str = "Thời tiết Hà Nội và Đà Lạt 2 ngày tới thế nào?";

/// Streams a request's SSE body and reports each booking receipt (its id) the moment
/// its chunk arrives; a connection cut by the kill just ends the stream.
async fn follow_receipts(
    request: reqwest::RequestBuilder,
    receipts: mpsc::UnboundedSender<String>,
) {
    let Ok(response) = request.send().await else {
        return;
    };
    let mut body = response.bytes_stream();
    let mut pending = String::new();
    while let Some(Ok(chunk)) = body.next().await {
        pending.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = pending.find("\n\n") {
            let block: String = pending.drain(..end + 2).collect();
            for line in block.lines() {
                let Some(data) = line.strip_prefix("data: ") else {
                    continue;
                };
                let Ok(event) = serde_json::from_str::<Value>(data) else {
                    continue;
                };
                if event["type"] == "tool-output-available" {
                    if let Some(id) = event["output"]["bookingId"].as_str() {
                        let _ = receipts.send(id.to_owned());
                    }
                }
            }
        }
    }
}

async fn count(app: &TestApp, sql: &'static str, binds: &[&str]) -> sqlx::Result<i64> {
    let mut query = sqlx::query_as(sql);
    for bind in binds {
        query = query.bind(*bind);
    }
    let (n,): (i64,) = query.fetch_one(&app.pool).await?;
    Ok(n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_kill_during_a_burst_keeps_everything_that_was_shown_as_done() -> TestResult {
    // The test's own server only holds the database; the real binary does the work.
    let app = support::spawn_app().await?;
    let mut server = start_server(&app.db_url, &[]).await?;
    let clients: Vec<reqwest::Client> = (0..PEOPLE)
        .map(|_| new_client())
        .collect::<Result<_, _>>()?;

    // Every person gets a confirmation; each was streamed as asked, so each must survive.
    let asked = try_join_all(
        clients
            .iter()
            .map(|client| support::pending_booking(client, &server.base)),
    )
    .await?;

    // The burst: everyone approves while as many new chats are written, and the server
    // is killed once the first receipts have reached people.
    let (receipts_tx, mut receipts) = mpsc::unbounded_channel();
    let mut burst = Vec::new();
    for (client, (conversation, call)) in clients.iter().zip(&asked) {
        let approval = client
            .post(format!("{}/api/approvals", server.base))
            .json(&json!({"conversationId": conversation, "toolCallId": call, "approved": true}));
        burst.push(tokio::spawn(follow_receipts(approval, receipts_tx.clone())));
        let chat = client
            .post(format!("{}/api/chat", server.base))
            .json(&json!({ "text": WEATHER }));
        burst.push(tokio::spawn(follow_receipts(chat, receipts_tx.clone())));
    }
    drop(receipts_tx);
    let mut shown = HashSet::new();
    let first = tokio::time::timeout(Duration::from_secs(60), receipts.recv())
        .await
        .map_err(|_| "no receipt within a minute")?
        .ok_or("the burst ended without a single receipt")?;
    shown.insert(first);
    tokio::time::sleep(Duration::from_millis(5)).await;
    server.kill9();
    for task in burst {
        let _ = task.await;
    }
    while let Ok(id) = receipts.try_recv() {
        shown.insert(id);
    }

    // Whatever was shown as booked is committed, with the record that keeps it to one.
    for id in &shown {
        assert_eq!(
            count(&app, "SELECT COUNT(*) FROM bookings WHERE id = $1", &[id]).await?,
            1,
            "booking {id} was streamed as done but is not in the database"
        );
    }
    // Every confirmation is booked or still pending: never lost, never both.
    let mut booked = 0;
    for (conversation, call) in &asked {
        let key = format!("{conversation}/{call}");
        // Call ids are unique per conversation only (the offline model numbers them).
        let bookings = count(
            &app,
            "SELECT COUNT(*) FROM bookings WHERE conversation_id = $1 AND tool_call_id = $2",
            &[conversation, call],
        )
        .await?;
        let records = count(
            &app,
            "SELECT COUNT(*) FROM idempotency_keys WHERE scope = 'createBooking' \
             AND idem_key = $1 AND state = 'done'",
            &[&key],
        )
        .await?;
        let pending = count(
            &app,
            "SELECT COUNT(*) FROM pending_calls WHERE conversation_id = $1 AND tool_call_id = $2",
            &[conversation, call],
        )
        .await?;
        assert!(
            (bookings, records, pending) == (1, 1, 0) || (bookings, records, pending) == (0, 0, 1),
            "call {call}: {bookings} bookings, {records} records, {pending} pending"
        );
        booked += bookings;
    }
    assert!(booked as usize >= shown.len());

    // The restarted server serves the same people: the conversations are readable.
    let server = start_server(&app.db_url, &[]).await?;
    let status = clients[0]
        .get(format!("{}/api/conversations/{}", server.base, asked[0].0))
        .send()
        .await?
        .status();
    assert_eq!(status, 200);
    Ok(())
}

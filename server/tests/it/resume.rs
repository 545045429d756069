//! Resumable runs: a reply goes on when the browser leaves, and `GET
//! /api/chat/{id}/stream[?after=N]` picks it up again — on the same process from memory, on
//! another process sharing the database from `run_event_batches` — with every event once and in
//! order. Stops reach a running tool (and a run on another process); an owner has at most
//! a few runs at once.
//!
//! Runs on whichever backend the test database is (SQLite file, or Postgres when the test
//! command sets `DATBAN_TEST_POSTGRES_URL`).

use crate::support;

use std::{
    error::Error,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use serde_json::{json, Value};
use server::{
    model::offline::OfflineModel,
    tools::{weather::WeatherService, Upstreams},
};
use shared::{events::AgentEvent, message::Message};
use support::{process::start_server, read_reply, Reply, TestApp, TestResult};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    sync::mpsc,
};

const TWO_CITIES: &str = "Thời tiết Hà Nội và Đà Lạt 2 ngày tới thế nào?";
const SUGGEST: &str = "Gợi ý quà cho mẹ thích làm vườn dưới 1 triệu";
const BUY: &str = "Mua món đầu tiên";
const RUN_ID_HEADER: &str = "x-datban-run-id";

/// A server whose offline model pauses 20 ms before each streamed piece, so a reply is
/// still being written while the test acts.
async fn slow_app() -> support::Fallible<TestApp> {
    let slow = OfflineModel::new(Duration::from_millis(20)).with_now(support::local_now());
    support::spawn_app_with_provider(Arc::new(slow)).await
}

/// Reads a UI message stream event by event, as a browser does.
struct SseReader {
    response: reqwest::Response,
    buffer: Vec<u8>,
    done: bool,
}

impl SseReader {
    fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.status().as_u16(), 200);
        Self {
            response,
            buffer: Vec::new(),
            done: false,
        }
    }

    fn run_id(&self) -> String {
        header(&self.response, RUN_ID_HEADER)
    }

    /// The next event; `None` at `[DONE]` or when the body ends.
    async fn next(&mut self) -> Result<Option<Value>, Box<dyn Error + Send + Sync>> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let block = String::from_utf8(block)?;
                for line in block.lines() {
                    if let Some(data) = line.strip_prefix("data: ") {
                        if data == "[DONE]" {
                            self.done = true;
                            return Ok(None);
                        }
                        return Ok(Some(serde_json::from_str(data)?));
                    }
                }
                continue;
            }
            match self.response.chunk().await? {
                Some(bytes) => self.buffer.extend_from_slice(&bytes),
                None => return Ok(None),
            }
        }
    }

    async fn take(&mut self, n: usize) -> Result<Vec<Value>, Box<dyn Error + Send + Sync>> {
        let mut events = Vec::new();
        while events.len() < n {
            events.push(self.next().await?.ok_or("the stream ended early")?);
        }
        Ok(events)
    }

    /// Every event left, and whether `[DONE]` ended them.
    async fn rest(mut self) -> Result<(Vec<Value>, bool), Box<dyn Error + Send + Sync>> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await? {
            events.push(event);
        }
        Ok((events, self.done))
    }
}

fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

async fn open_chat(
    client: &reqwest::Client,
    base: &str,
    body: Value,
) -> reqwest::Result<SseReader> {
    let response = client
        .post(format!("{base}/api/chat"))
        .json(&body)
        .send()
        .await?;
    Ok(SseReader::new(response))
}

async fn get_stream(client: &reqwest::Client, base: &str, path: &str) -> support::Fallible<Reply> {
    let response = client.get(format!("{base}{path}")).send().await?;
    read_reply(response).await
}

fn conversation_of(start: &Value) -> Result<String, &'static str> {
    assert_eq!(start["type"], "start", "{start}");
    Ok(start["messageMetadata"]["conversationId"]
        .as_str()
        .ok_or("the start event names no conversation")?
        .to_owned())
}

fn status_of(events: &[Value]) -> Option<String> {
    events
        .iter()
        .rev()
        .find(|e| e["type"] == "finish")
        .and_then(|e| e["messageMetadata"]["status"].as_str().map(str::to_owned))
}

/// A whole run: from `start` to `finish`, and `[DONE]`.
fn assert_whole(reply: &Reply) {
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert!(reply.content_type.starts_with("text/event-stream"));
    assert_eq!(reply.stream_header.as_deref(), Some("v1"));
    assert!(reply.done, "must end with [DONE]");
    assert_eq!(
        reply.events.first().map(|e| &e["type"]),
        Some(&json!("start"))
    );
    assert_eq!(
        reply.events.last().map(|e| &e["type"]),
        Some(&json!("finish"))
    );
}

fn fold(mut message: Message, events: &[Value]) -> serde_json::Result<Message> {
    for event in events {
        let event: AgentEvent = serde_json::from_value(event.clone())?;
        message.apply(&event);
    }
    Ok(message)
}

async fn stored_conversation(app: &TestApp, conversation: &str) -> support::Fallible<Value> {
    let (status, body) = app
        .get_json(&format!("/api/conversations/{conversation}"))
        .await?;
    assert_eq!(status, 200, "{body}");
    Ok(body)
}

fn last_message(conversation: &Value) -> Result<Message, Box<dyn Error + Send + Sync>> {
    let messages = conversation["messages"]
        .as_array()
        .ok_or("the conversation has no messages")?;
    let last = messages
        .last()
        .ok_or("the conversation's messages are empty")?;
    Ok(serde_json::from_value(last.clone())?)
}

/// The run's events as stored, checked to be numbered 1, 2, … without gaps.
async fn stored_events(
    app: &TestApp,
    run_id: &str,
) -> Result<Vec<Value>, Box<dyn Error + Send + Sync>> {
    // Stored in batches, one row each, with the batch's events one per line.
    let batches: Vec<(i64, i64, String)> = sqlx::query_as(
        "SELECT first_seq, last_seq, events FROM run_event_batches WHERE run_id = $1 \
         ORDER BY first_seq",
    )
    .bind(run_id)
    .fetch_all(&app.pool)
    .await?;
    let mut rows: Vec<(i64, String)> = Vec::new();
    for (first, last, events) in batches {
        let lines: Vec<&str> = events.split('\n').collect();
        assert_eq!(
            lines.len() as i64,
            last - first + 1,
            "a batch holds its numbers' events"
        );
        rows.extend((first..).zip(lines.into_iter().map(str::to_owned)));
    }
    for (index, (seq, _)) in rows.iter().enumerate() {
        assert_eq!(
            *seq,
            index as i64 + 1,
            "event numbers are 1, 2, … once each"
        );
    }
    Ok(rows
        .into_iter()
        .map(|(_, event)| serde_json::from_str(&event))
        .collect::<serde_json::Result<_>>()?)
}

#[tokio::test]
async fn a_reply_goes_on_when_the_browser_leaves_and_is_picked_up_whole() -> TestResult {
    let app = slow_app().await?;
    let base = app.url("");
    let mut first = open_chat(&app.client, &base, json!({"text": TWO_CITIES})).await?;
    let run_id = first.run_id();
    assert!(run_id.starts_with("run_"), "{run_id}");
    let seen = first.take(5).await?;
    let conversation = conversation_of(&seen[0])?;
    // The browser leaves mid-reply.
    drop(first);

    let reply = get_stream(
        &app.client,
        &base,
        &format!("/api/chat/{conversation}/stream"),
    )
    .await?;
    assert_whole(&reply);
    assert_eq!(status_of(&reply.events).as_deref(), Some("completed"));
    assert_eq!(reply.events[..5], seen[..], "the same run, from its start");
    assert_eq!(
        reply.of_type("tool-output-available").len(),
        2,
        "{:#?}",
        reply.events
    );
    // Every event once, in order: exactly the run's log.
    assert_eq!(stored_events(&app, &run_id).await?, reply.events);
    // The stored reply is what the events fold into.
    let message_id = seen[0]["messageId"]
        .as_str()
        .ok_or("the start event has no messageId")?;
    let folded = fold(Message::assistant(message_id), &reply.events)?;
    let stored = stored_conversation(&app, &conversation).await?;
    assert_eq!(last_message(&stored)?, folded);
    assert!(stored.get("running").is_none(), "{stored}");
    Ok(())
}

#[tokio::test]
async fn the_stored_copy_and_the_rest_of_the_run_make_the_whole_reply() -> TestResult {
    // What a browser does after a reload: show the stored copy, then ask for the rest.
    let app = slow_app().await?;
    let base = app.url("");
    let mut first = open_chat(&app.client, &base, json!({"text": TWO_CITIES})).await?;
    let run_id = first.run_id();
    let conversation = conversation_of(&first.take(1).await?[0])?;
    drop(first);
    // Wait until the stored copy holds part of the reply (saved after the tool calls).
    let (stored, running) = loop {
        let body = stored_conversation(&app, &conversation).await?;
        let running = body["running"].clone();
        assert!(
            !running.is_null(),
            "the reply is still being written: {body}"
        );
        if running["after"]
            .as_u64()
            .ok_or("running.after is no number")?
            > 0
        {
            break (last_message(&body)?, running);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(running["runId"], json!(run_id));
    assert_eq!(running["messageId"], json!(stored.id));
    assert!(stored.status.is_none());
    let after = running["after"]
        .as_u64()
        .ok_or("running.after is no number")?;
    let rest = get_stream(
        &app.client,
        &base,
        &format!("/api/chat/{conversation}/stream?after={after}&run={run_id}"),
    )
    .await?;
    assert_eq!(rest.status, 200);
    assert!(rest.done);
    assert_eq!(status_of(&rest.events).as_deref(), Some("completed"));
    let whole = stored_events(&app, &run_id).await?;
    assert_eq!(rest.events, whole[after as usize..]);
    let final_copy = last_message(&stored_conversation(&app, &conversation).await?)?;
    assert_eq!(fold(stored, &rest.events)?, final_copy);
    Ok(())
}

#[tokio::test]
async fn after_n_replays_only_the_rest() -> TestResult {
    let app = slow_app().await?;
    let base = app.url("");
    let mut first = open_chat(&app.client, &base, json!({"text": TWO_CITIES})).await?;
    let conversation = conversation_of(&first.take(1).await?[0])?;
    let path = format!("/api/chat/{conversation}/stream");
    let after_seven = format!("{path}?after=7");
    let (all, rest, original) = tokio::join!(
        get_stream(&app.client, &base, &path),
        get_stream(&app.client, &base, &after_seven),
        first.rest(),
    );
    let (all, rest) = (all?, rest?);
    assert_whole(&all);
    assert_eq!(rest.status, 200);
    assert!(rest.done);
    assert_eq!(rest.events, all.events[7..]);
    // The first stream, read to its end, saw the same events too.
    let (original, done) = original?;
    assert!(done);
    assert_eq!(original, all.events[1..]);
    Ok(())
}

#[tokio::test]
async fn no_run_answers_204_and_another_owners_conversation_404() -> TestResult {
    let app = slow_app().await?;
    let base = app.url("");
    let done = app.chat(None, "Xin chào").await?;
    let conversation = done.conversation_id();
    let path = format!("/api/chat/{conversation}/stream");
    let response = app.client.get(app.url(&path)).send().await?;
    assert_eq!(response.status().as_u16(), 204);
    assert!(response.text().await?.is_empty());
    assert!(stored_conversation(&app, &conversation)
        .await?
        .get("running")
        .is_none());

    let stranger = support::new_client()?;
    for path in [path.clone(), "/api/chat/conv_nope/stream".to_owned()] {
        let response = stranger.get(app.url(&path)).send().await?;
        assert_eq!(response.status().as_u16(), 404, "{path}");
        let body: Value = response.json().await?;
        assert_eq!(body["error"]["code"], "NOT_FOUND");
    }
    let bad = app
        .client
        .get(app.url(&format!("{path}?after=soon")))
        .send()
        .await?;
    assert_eq!(bad.status().as_u16(), 400);

    // While a run is going, another run's id gets 204 (that run is over), and a stranger
    // still gets 404.
    let mut running = open_chat(
        &app.client,
        &base,
        json!({"conversationId": conversation, "text": TWO_CITIES}),
    )
    .await?;
    running.take(1).await?;
    let other = app
        .client
        .get(app.url(&format!("{path}?run=run_over")))
        .send()
        .await?;
    assert_eq!(other.status().as_u16(), 204);
    let response = stranger.get(app.url(&path)).send().await?;
    assert_eq!(response.status().as_u16(), 404);
    let (_, done) = running.rest().await?;
    assert!(done);
    Ok(())
}

/// A weather service that never answers: it records each request and when the client
/// closed that connection.
struct HoldingWeather {
    addr: std::net::SocketAddr,
    requests: Arc<AtomicUsize>,
    requested: mpsc::UnboundedReceiver<()>,
    closed: mpsc::UnboundedReceiver<()>,
}

impl HoldingWeather {
    async fn start() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(AtomicUsize::new(0));
        let (requested_tx, requested) = mpsc::unbounded_channel();
        let (closed_tx, closed) = mpsc::unbounded_channel();
        let counter = requests.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let (requested_tx, closed_tx) = (requested_tx.clone(), closed_tx.clone());
                let counter = counter.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    counter.fetch_add(1, Ordering::SeqCst);
                    let _ = requested_tx.send(());
                    // Hold the request: no answer; wait for the client to hang up.
                    loop {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(_) => {}
                        }
                    }
                    let _ = closed_tx.send(());
                    let _ = socket.shutdown().await;
                });
            }
        });
        Ok(Self {
            addr,
            requests,
            requested,
            closed,
        })
    }
}

#[tokio::test]
async fn stop_mid_tool_cancels_the_tool_and_nothing_happens_after() -> TestResult {
    let mut fake = HoldingWeather::start().await?;
    let service = WeatherService::new(format!("http://{}", fake.addr), Duration::from_secs(60))?;
    let app = support::spawn_app_with_upstreams(Upstreams {
        weather: Some(service),
    })
    .await?;
    let base = app.url("");
    let conversation = app.chat(None, "Xin chào").await?.conversation_id();
    let reader = open_chat(
        &app.client,
        &base,
        json!({"conversationId": conversation, "text": "Thời tiết Hà Nội ngày mai thế nào?"}),
    )
    .await?;
    let reading = tokio::spawn(reader.rest());
    // The tool is running: the fake holds its request.
    tokio::time::timeout(Duration::from_secs(10), fake.requested.recv())
        .await
        .map_err(|_| "the weather tool did not call the service")?
        .ok_or("the fake weather service stopped")?;

    let stop: Value = app
        .client
        .post(app.url(&format!("/api/chat/{conversation}/stop")))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(stop["stopped"], true);
    // The tool saw the cancellation: its request was dropped.
    tokio::time::timeout(Duration::from_secs(5), fake.closed.recv())
        .await
        .map_err(|_| "the weather request was not cancelled")?
        .ok_or("the fake weather service stopped")?;

    let (events, done) = tokio::time::timeout(Duration::from_secs(10), reading).await???;
    assert!(done);
    assert_eq!(
        status_of(&events).as_deref(),
        Some("stopped"),
        "{events:#?}"
    );
    let errors: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool-output-error")
        .collect();
    assert_eq!(errors.len(), 1, "{events:#?}");
    assert_eq!(errors[0]["error"]["code"], "CANCELLED");
    assert!(events.iter().all(|e| e["type"] != "tool-output-available"));
    // After the cancelled call only the step and the run end: no new step, no new call.
    let at = events
        .iter()
        .position(|e| e["type"] == "tool-output-error")
        .ok_or("no tool-output-error event")?;
    let after = events[at + 1..]
        .iter()
        .map(|e| e["type"].as_str().ok_or("an event without a type"))
        .collect::<Result<Vec<&str>, _>>()?;
    assert_eq!(after, ["finish-step", "finish"], "{events:#?}");

    // Nothing runs after the stop: no other request reaches the service.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(fake.requests.load(Ordering::SeqCst), 1);
    let stored = stored_conversation(&app, &conversation).await?;
    let message = last_message(&stored)?;
    assert_eq!(
        message.status,
        Some(shared::message::RunStatus::Stopped),
        "{stored}"
    );
    let again: Value = app
        .client
        .post(app.url(&format!("/api/chat/{conversation}/stop")))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(again["stopped"], false);
    Ok(())
}

#[tokio::test]
async fn another_process_replays_follows_and_stops_a_run() -> TestResult {
    // The in-process app only creates and migrates the database and reads rows.
    let app = support::spawn_app().await?;
    let one = start_server(&app.db_url, &[("DATBAN_OFFLINE_TOKEN_DELAY_MS", "20")]).await?;
    let two = start_server(&app.db_url, &[]).await?;
    // One cookie jar: the same person on both (they share the key stored in the database).
    let client = support::new_client()?;

    let mut first = open_chat(&client, &one.base, json!({"text": TWO_CITIES})).await?;
    let run_id = first.run_id();
    let seen = first.take(3).await?;
    let conversation = conversation_of(&seen[0])?;
    let path = format!("/api/chat/{conversation}/stream");
    let (reattached, rest) = tokio::join!(get_stream(&client, &two.base, &path), first.rest());
    let reattached = reattached?;
    assert_whole(&reattached);
    assert_eq!(
        reattached.events[0]["messageId"], seen[0]["messageId"],
        "the same reply"
    );
    assert_eq!(status_of(&reattached.events).as_deref(), Some("completed"));
    let (rest, done) = rest?;
    assert!(done);
    let original: Vec<Value> = seen.into_iter().chain(rest).collect();
    assert_eq!(reattached.events, original, "every event once, in order");
    assert_eq!(stored_events(&app, &run_id).await?, original);
    // Nothing is running any more, on either process.
    for base in [&one.base, &two.base] {
        let response = client.get(format!("{base}{path}")).send().await?;
        assert_eq!(response.status().as_u16(), 204);
    }

    // A stop through process two ends the run on process one.
    let mut looping = open_chat(&client, &one.base, json!({"text": "#loop"})).await?;
    let conversation = conversation_of(&looping.take(1).await?[0])?;
    let follower = tokio::spawn({
        let (client, base) = (client.clone(), two.base.clone());
        let path = format!("/api/chat/{conversation}/stream");
        async move { get_stream(&client, &base, &path).await }
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    let stop: Value = client
        .post(format!("{}/api/chat/{conversation}/stop", two.base))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(stop["stopped"], true);
    let (events, done) = tokio::time::timeout(Duration::from_secs(10), looping.rest())
        .await
        .map_err(|_| "the run on process one did not stop")??;
    assert!(done);
    assert_eq!(
        status_of(&events).as_deref(),
        Some("stopped"),
        "{events:#?}"
    );
    assert!(events.iter().filter(|e| e["type"] == "start-step").count() < 6);
    let followed = tokio::time::timeout(Duration::from_secs(10), follower).await???;
    assert_whole(&followed);
    assert_eq!(status_of(&followed.events).as_deref(), Some("stopped"));
    Ok(())
}

#[tokio::test]
async fn a_fourth_run_of_one_person_is_refused_while_others_are_served() -> TestResult {
    let app = support::spawn_app().await?;
    let server = start_server(
        &app.db_url,
        &[
            ("DATBAN_OFFLINE_TOKEN_DELAY_MS", "20"),
            ("DATBAN_MAX_RUNS_PER_OWNER", "3"),
        ],
    )
    .await?;
    let base = &server.base;
    let person = support::new_client()?;
    // A confirmation waiting for this person (a purchase), decided later.
    let post = |body: Value| {
        let request = person.post(format!("{base}/api/chat")).json(&body);
        async move { read_reply(request.send().await?).await }
    };
    let suggested = post(json!({"text": SUGGEST, "assistant": "gifts"})).await?;
    let pending_conversation = suggested.conversation_id();
    let buying = post(json!({"conversationId": pending_conversation, "text": BUY})).await?;
    assert_eq!(
        buying.status_of_run().as_deref(),
        Some("awaiting-approval"),
        "{}",
        buying.text()
    );
    let call = buying.call_id("create_checkout_session");

    let mut running = Vec::new();
    let mut conversations = Vec::new();
    for _ in 0..3 {
        let mut reader = open_chat(&person, base, json!({"text": "#loop"})).await?;
        conversations.push(conversation_of(&reader.take(1).await?[0])?);
        running.push(reader);
    }
    let refused = person
        .post(format!("{base}/api/chat"))
        .json(&json!({"text": "Xin chào"}))
        .send()
        .await?;
    assert_eq!(refused.status().as_u16(), 429);
    let wait: u64 = refused.headers()["retry-after"].to_str()?.parse()?;
    assert!(wait >= 1, "retry-after {wait}");
    let body: Value = refused.json().await?;
    assert_eq!(body["error"]["code"], "TOO_MANY_RUNS", "{body}");
    assert!(!body["error"]["message"]
        .as_str()
        .ok_or("the error has no message")?
        .is_empty());
    let decision =
        json!({"conversationId": pending_conversation, "toolCallId": call, "approved": true});
    let refused = person
        .post(format!("{base}/api/approvals"))
        .json(&decision)
        .send()
        .await?;
    assert_eq!(refused.status().as_u16(), 429);
    let body: Value = refused.json().await?;
    assert_eq!(body["error"]["code"], "TOO_MANY_RUNS", "{body}");

    // Someone else is served meanwhile.
    let other = read_reply(
        support::new_client()?
            .post(format!("{base}/api/chat"))
            .json(&json!({"text": "Xin chào"}))
            .send()
            .await?,
    )
    .await?;
    assert_eq!(other.status, 200);
    assert_eq!(other.status_of_run().as_deref(), Some("completed"));

    // Once the runs end, the person may go on, and the refused decision was kept.
    for conversation in &conversations {
        person
            .post(format!("{base}/api/chat/{conversation}/stop"))
            .send()
            .await?;
    }
    for reader in running {
        let (events, done) = reader.rest().await?;
        assert!(done);
        assert_eq!(status_of(&events).as_deref(), Some("stopped"));
    }
    let decided = read_reply(
        person
            .post(format!("{base}/api/approvals"))
            .json(&decision)
            .send()
            .await?,
    )
    .await?;
    assert_eq!(decided.status, 200, "{:?}", decided.body);
    assert_eq!(decided.of_type("tool-output-available").len(), 1);
    Ok(())
}

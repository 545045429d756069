//! The database backend, and replicas sharing it. Runs on SQLite by default and on
//! PostgreSQL when `DATBAN_TEST_POSTGRES_URL` is set (`cargo xtask test` does both): the
//! backend in use must be the one asked for, so a silent fallback to SQLite fails the
//! suite; two server replicas sharing one database must not oversell a slot, nor write
//! one conversation at once; a reply whose server died or was shut down ends as
//! interrupted, and a stored reply agrees with the effects after a crash.

use crate::support;

use std::{
    sync::{Arc, PoisonError},
    time::{Duration, Instant},
};

use serde_json::{json, Value};
use server::{
    agent::AgentConfig,
    db::{self, Backend},
    model::{offline::OfflineModel, SharedProvider},
};
use support::{
    local_now, new_client, process::start_server, spawn_app, spawn_app_on,
    spawn_app_on_with_provider, spawn_replica_configured, test_database_url,
    test_db::postgres_admin_url, test_pool, TestResult,
};

#[tokio::test]
async fn the_backend_in_use_is_the_one_asked_for() -> TestResult {
    let (pool, _db) = test_pool().await?;
    let asked = if postgres_admin_url().is_some() {
        Backend::Postgres
    } else {
        Backend::Sqlite
    };
    assert_eq!(db::backend(&pool), asked);
    // Ask the server too, not only the URL: each backend has a function the other lacks.
    let version: String = match asked {
        Backend::Postgres => sqlx::query_scalar("SELECT version()"),
        Backend::Sqlite => sqlx::query_scalar("SELECT sqlite_version()"),
    }
    .fetch_one(&pool)
    .await?;
    match asked {
        Backend::Postgres => assert!(version.starts_with("PostgreSQL"), "{version}"),
        Backend::Sqlite => assert!(version.starts_with("3."), "{version}"),
    }
    Ok(())
}

#[tokio::test]
async fn migrations_run_once_however_many_servers_start() -> TestResult {
    let (url, _db) = test_database_url().await?;
    let pools: Vec<db::Pool> = if postgres_admin_url().is_some() {
        // Replicas start together; sqlx's advisory lock lets one migrate, the others wait.
        futures::future::try_join_all((0..3).map(|_| db::connect(&url))).await?
    } else {
        // A SQLite file belongs to one process: its migrator takes no lock.
        let mut pools = Vec::new();
        for _ in 0..3 {
            pools.push(db::connect(&url).await?);
        }
        pools
    };
    let applied: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
        .fetch_one(&pools[0])
        .await?;
    let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations"))?.count();
    assert_eq!(applied, i64::try_from(files)?);
    let restaurants: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM restaurants")
        .fetch_one(&pools[2])
        .await?;
    assert_eq!(restaurants, 48, "the seed ran once");
    Ok(())
}

#[tokio::test]
async fn two_replicas_sharing_a_database_never_oversell_a_slot() -> TestResult {
    let (url, _db) = test_database_url().await?;
    let a = spawn_app_on(url.clone(), AgentConfig::default()).await?;
    let mut b = spawn_app_on(url, AgentConfig::default()).await?;
    // One person on both replicas: cookies are per host, not port, and both sign with the
    // key kept in the shared database.
    b.client = a.client.clone();

    let mut calls = Vec::new();
    for _ in 0..8 {
        let search = a.chat(None, "Tìm nhà hàng chả cá ở Hà Nội").await?;
        let conversation = search.conversation_id();
        let booking = a
            .chat(
                Some(&conversation),
                "Đặt bàn ở Chả Cá Thăng Long cho 4 người tối mai lúc 19:00",
            )
            .await?;
        assert_eq!(
            booking.status_of_run().as_deref(),
            Some("awaiting-approval"),
            "{:#?}",
            booking.events
        );
        calls.push((conversation, booking.call_id("createBooking")));
    }

    // 40 seats: two parties of 20 fit, the other six must wait, whichever replica decides.
    let edited = json!({
        "restaurantId": "hn-cha-ca-thang-long",
        "partySize": 20,
        "startsAt": "2026-11-30T19:00:00+07:00"
    });
    let decisions = calls.iter().enumerate().map(|(i, (conversation, call))| {
        let replica = if i % 2 == 0 { &a } else { &b };
        replica.decide(conversation, call, true, Some(edited.clone()))
    });
    let replies = futures::future::try_join_all(decisions).await?;
    let mut statuses: Vec<String> = replies
        .iter()
        .map(|reply| {
            assert_eq!(reply.status, 200, "{:?}", reply.body);
            let output = reply.of_type("tool-output-available");
            assert_eq!(output.len(), 1, "{:#?}", reply.events);
            output[0]["output"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    statuses.sort();
    assert_eq!(
        statuses,
        [vec!["confirmed"; 2], vec!["waitlisted"; 6]].concat(),
        "capacity 40, eight parties of 20"
    );
    assert_eq!(
        a.count("SELECT CAST(COALESCE(SUM(party_size), 0) AS BIGINT) FROM bookings WHERE status = 'confirmed'")
            .await?,
        40
    );
    assert_eq!(a.count("SELECT COUNT(*) FROM bookings").await?, 8);
    Ok(())
}

fn slow_model(delay_ms: u64) -> SharedProvider {
    Arc::new(OfflineModel::new(Duration::from_millis(delay_ms)).with_now(local_now()))
}

/// Two replicas, one conversation, a message on each at the same moment: one reply, and
/// one `409 RUN_IN_PROGRESS` naming the run to follow, which stored nothing.
#[tokio::test]
async fn two_replicas_never_write_one_conversation_at_once() -> TestResult {
    let (url, _db) = test_database_url().await?;
    let a = spawn_app_on_with_provider(url.clone(), slow_model(5)).await?;
    let mut b = spawn_app_on_with_provider(url, slow_model(5)).await?;
    b.client = a.client.clone();
    let first = a.chat(None, "Xin chào").await?;
    assert_eq!(first.status, 200);
    let conversation = first.conversation_id();
    let rounds = 3;
    for round in 0..rounds {
        let (x, y) = tokio::join!(
            a.chat(Some(&conversation), "Thời tiết Hà Nội ngày mai thế nào?"),
            b.chat(Some(&conversation), "Thời tiết Đà Nẵng ngày mai thế nào?"),
        );
        let (x, y) = (x?, y?);
        let mut statuses = [x.status, y.status];
        statuses.sort_unstable();
        assert_eq!(
            statuses,
            [200, 409],
            "round {round}: {:?} / {:?}",
            x.body,
            y.body
        );
        let (won, lost) = if x.status == 200 { (&x, &y) } else { (&y, &x) };
        assert!(won.done, "the reply that ran is whole");
        assert_eq!(
            lost.body["error"]["code"], "RUN_IN_PROGRESS",
            "{:?}",
            lost.body
        );
        assert!(
            lost.body["running"]["runId"]
                .as_str()
                .is_some_and(|id| id.starts_with("run")),
            "the 409 names the run to follow: {:?}",
            lost.body
        );
    }
    let stored: Value = a
        .client
        .get(a.url(&format!("/api/conversations/{conversation}")))
        .send()
        .await?
        .json()
        .await?;
    let messages = stored["messages"]
        .as_array()
        .ok_or("the conversation's messages")?;
    let people = messages.iter().filter(|m| m["role"] == "user").count();
    assert_eq!(people, 1 + rounds, "a refused message stores nothing");
    assert_eq!(
        messages.len(),
        2 * (1 + rounds),
        "each message answered once"
    );
    assert_eq!(
        a.count("SELECT COUNT(*) FROM runs WHERE status = 'running'")
            .await?,
        0
    );
    Ok(())
}

/// Reads `response` (an SSE reply) until `needle` has arrived; what was read.
async fn read_until(
    response: &mut reqwest::Response,
    needle: &str,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let mut seen = String::new();
    while !seen.contains(needle) {
        let chunk = tokio::time::timeout(Duration::from_secs(20), response.chunk())
            .await
            .map_err(|_| "the reply went quiet")??
            .ok_or("the reply ended early")?;
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    Ok(seen)
}

/// The conversation id in a reply's `start` event.
fn conversation_in(stream: &str) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|event| event["type"] == "start")
        .and_then(|start| {
            start["messageMetadata"]["conversationId"]
                .as_str()
                .map(str::to_owned)
        })
        .ok_or_else(|| "a start event with the conversation id".into())
}

async fn conversation_on(
    client: &reqwest::Client,
    base: &str,
    id: &str,
) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
    Ok(client
        .get(format!("{base}/api/conversations/{id}"))
        .send()
        .await?
        .json()
        .await?)
}

/// A replica killed mid-reply: another one closes the reply as interrupted once its
/// heartbeat is older than the timeout (without anyone asking), the page is told so, and
/// the conversation takes a new message.
#[tokio::test]
async fn a_reply_whose_server_was_killed_is_closed_as_interrupted_by_another() -> TestResult {
    let (url, _db) = test_database_url().await?;
    let env = [
        ("DATBAN_OFFLINE_TOKEN_DELAY_MS", "150"),
        ("DATBAN_HEARTBEAT_TIMEOUT_MS", "2000"),
    ];
    let mut a = start_server(&url, &env).await?;
    let b = start_server(&url, &env).await?;
    let client = new_client()?;
    let mut response = client
        .post(format!("{}/api/chat", a.base))
        .json(&json!({"text": "Thời tiết Hà Nội ngày mai thế nào?"}))
        .send()
        .await?;
    assert_eq!(response.status(), 200);
    let seen = read_until(&mut response, "text-delta").await?;
    let conversation = conversation_in(&seen)?;
    // The storer writes every 100 ms: the turn and its first events are stored.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let running = conversation_on(&client, &b.base, &conversation).await?;
    assert!(running["running"]["runId"].is_string(), "{running}");
    a.kill9();
    let killed = Instant::now();
    drop(response);

    // Nobody reads: the other replica's sweeper closes it.
    let pool = db::connect(&url).await?;
    loop {
        let (closed,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM runs WHERE conversation_id = $1 AND status = 'done' AND interrupted = 1",
        )
        .bind(&conversation)
        .fetch_one(&pool)
        .await?;
        if closed == 1 {
            break;
        }
        // 2 s of heartbeat timeout and a sweep every 0.7 s: about 3 s, bounded loosely
        // for a busy machine.
        assert!(
            killed.elapsed() < Duration::from_secs(30),
            "the dead run was not closed within the heartbeat timeout and a sweep"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = conversation_on(&client, &b.base, &conversation).await?;
    let last = after["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .ok_or("a stored reply")?
        .clone();
    assert_eq!(last["status"], "interrupted", "{last}");
    assert!(after["running"].is_null(), "{after}");
    // Its stream is over (the page stops waiting), and the conversation goes on on B.
    let stream = client
        .get(format!("{}/api/chat/{conversation}/stream", b.base))
        .send()
        .await?;
    assert_eq!(stream.status().as_u16(), 204);
    let next = client
        .post(format!("{}/api/chat", b.base))
        .json(&json!({"conversationId": conversation, "text": "Xin chào"}))
        .send()
        .await?;
    assert_eq!(next.status().as_u16(), 200);
    let _ = next.text().await;
    Ok(())
}

/// SIGTERM during a reply: the reply ends (interrupted: the grace is shorter than the
/// reply), its stream closes, the process exits, and the stored reply says so.
#[tokio::test]
async fn a_shutdown_during_a_reply_ends_it_as_interrupted_never_hanging() -> TestResult {
    let (url, _db) = test_database_url().await?;
    let env = [
        ("DATBAN_OFFLINE_TOKEN_DELAY_MS", "150"),
        ("DATBAN_SHUTDOWN_GRACE_MS", "300"),
    ];
    let mut a = start_server(&url, &env).await?;
    let client = new_client()?;
    let mut response = client
        .post(format!("{}/api/chat", a.base))
        .json(&json!({"text": "Thời tiết Hà Nội ngày mai thế nào?"}))
        .send()
        .await?;
    let seen = read_until(&mut response, "text-delta").await?;
    let conversation = conversation_in(&seen)?;
    a.terminate()?;
    // Bounded well above what it takes (under a second alone): the machine may be busy
    // with other tests, and a hang is for ever.
    let rest = tokio::time::timeout(Duration::from_secs(60), response.text())
        .await
        .map_err(|_| "the reply's stream hung after SIGTERM")??;
    assert!(rest.contains("data: [DONE]"), "{rest}");
    assert!(rest.contains(r#""status":"interrupted""#), "{rest}");
    assert!(
        a.exited_within(Duration::from_secs(30)),
        "the process did not exit"
    );

    let b = start_server(&url, &[]).await?;
    let after = conversation_on(&client, &b.base, &conversation).await?;
    let last = after["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .ok_or("a stored reply")?
        .clone();
    assert_eq!(last["status"], "interrupted", "{last}");
    assert!(after["running"].is_null(), "{after}");
    Ok(())
}

/// The stored reply of `conversation` (its last message) and its id.
async fn last_stored(
    pool: &db::Pool,
    conversation: &str,
) -> Result<(String, String), Box<dyn std::error::Error + Send + Sync>> {
    Ok(sqlx::query_as(
        "SELECT id, body FROM messages WHERE conversation_id = $1 ORDER BY seq DESC LIMIT 1",
    )
    .bind(conversation)
    .fetch_one(pool)
    .await?)
}

/// A crash after a booking committed but before its reply was saved leaves the stored
/// reply showing the form (or the call as stopped): the next read shows the receipt, the
/// booking's own, and nothing is booked again.
#[tokio::test]
async fn a_booking_committed_before_its_reply_was_saved_shows_its_receipt_on_the_next_read(
) -> TestResult {
    let app = spawn_app().await?;
    for stopped in [false, true] {
        let asked = app
            .chat(
                None,
                "Đặt bàn ở Chả Cá Thăng Long cho 4 người tối mai lúc 19:00",
            )
            .await?;
        let conversation = asked.conversation_id();
        let call = asked.call_id("createBooking");
        let (message_id, before) = last_stored(&app.pool, &conversation).await?;
        let decided = app.decide(&conversation, &call, true, None).await?;
        assert_eq!(decided.status, 200, "{:?}", decided.body);
        let receipt = decided.of_type("tool-output-available");
        assert_eq!(receipt.len(), 1, "{:#?}", decided.events);
        let booking_id = receipt[0]["output"]["bookingId"].clone();
        assert!(booking_id.is_string(), "{}", receipt[0]);

        // The crash, as the database holds it: the reply as it was before the decision
        // (the form), or with the call ended as stopped.
        let mut stale: shared::message::Message = serde_json::from_str(&before)?;
        if stopped {
            let error = shared::tools::ToolError::new(
                shared::tools::ErrorCode::Cancelled,
                "Stopped by the person before the tool finished.",
            );
            stale.apply(&shared::events::AgentEvent::decided(&call, true, None));
            stale.apply(&shared::events::AgentEvent::ToolOutputError {
                tool_call_id: call.clone(),
                error_text: error.message.clone(),
                error,
            });
        }
        sqlx::query("UPDATE messages SET body = $1 WHERE id = $2")
            .bind(serde_json::to_string(&stale)?)
            .bind(&message_id)
            .execute(&app.pool)
            .await?;

        let read = conversation_on(&app.client, &app.url(""), &conversation).await?;
        let reply = read["messages"]
            .as_array()
            .and_then(|messages| messages.last())
            .ok_or("a stored reply")?;
        let part = reply["parts"]
            .as_array()
            .ok_or("the reply's parts")?
            .iter()
            .find(|part| part["id"] == call.as_str())
            .ok_or_else(|| format!("no part for {call}: {reply}"))?;
        assert_eq!(
            part["state"], "output-available",
            "stopped={stopped}: {part}"
        );
        assert_eq!(part["output"]["bookingId"], booking_id, "{part}");
        assert_ne!(reply["status"], "awaiting-approval", "{reply}");
        // Stored so, and booked once.
        let (_, now_stored) = last_stored(&app.pool, &conversation).await?;
        assert!(now_stored.contains("output-available"), "{now_stored}");
        let (bookings,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM bookings WHERE id = $1")
            .bind(booking_id.as_str().ok_or("the booking's id")?)
            .fetch_one(&app.pool)
            .await?;
        assert_eq!(bookings, 1);
    }
    Ok(())
}

/// The per-owner message limit on two replicas: on PostgreSQL they count together (the
/// person gets the burst once, not once per replica); on SQLite, one process per file in
/// practice, each counts alone.
#[tokio::test]
async fn the_message_limit_is_counted_across_replicas_on_postgres() -> TestResult {
    let (url, _db) = test_database_url().await?;
    let limit = server::security::RateLimit {
        per_minute: std::num::NonZeroU32::new(6).ok_or("a rate of zero")?,
        burst: std::num::NonZeroU32::new(4).ok_or("a burst of zero")?,
    };
    let configure = |state: &mut server::AppState| state.security.rate_limit = Some(limit);
    let a = spawn_replica_configured(url.clone(), configure).await?;
    let mut b = spawn_replica_configured(url, configure).await?;
    b.client = a.client.clone();
    let mut accepted = 0;
    let mut refused = Vec::new();
    for i in 0..8 {
        let replica = if i % 2 == 0 { &a } else { &b };
        let reply = replica.chat(None, "Xin chào").await?;
        match reply.status {
            200 => accepted += 1,
            429 => refused.push(reply.body),
            other => panic!("unexpected {other}: {:?}", reply.body),
        }
    }
    if postgres_admin_url().is_some() {
        // 10 s per message after the burst: the test is far quicker than that.
        assert_eq!(accepted, 4, "{refused:?}");
        assert!(refused
            .iter()
            .all(|body| body["error"]["code"] == "RATE_LIMITED"));
    } else {
        assert_eq!(accepted, 8, "each replica counts alone on SQLite");
    }
    Ok(())
}

/// A small deterministic generator (xorshift64*), seeded per run and printed, so a
/// failing chaos run can be replayed with `DATBAN_CHAOS_SEED`.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The replicas of a chaos run: their addresses as they come and go.
#[derive(Clone, Default)]
struct Replicas(Arc<std::sync::Mutex<Vec<Option<String>>>>);

impl Replicas {
    fn pick(&self, dice: &mut Dice) -> Option<String> {
        let live: Vec<String> = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .flatten()
            .cloned()
            .collect();
        if live.is_empty() {
            return None;
        }
        Some(live[dice.below(live.len() as u64) as usize].clone())
    }

    fn set(&self, index: usize, base: Option<String>) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)[index] = base;
    }
}

#[derive(Default)]
struct Tally {
    conversations: usize,
    approved: Vec<(String, String)>,
    /// What each decision was answered, for a failure's message.
    answers: std::collections::HashMap<String, String>,
    declined: Vec<(String, String)>,
    approved_twice: usize,
    retries: usize,
    decided_elsewhere: usize,
}

/// Sends `body` to `path` on some live replica until one answers (a replica killed
/// mid-request makes the client try another); the answer, parsed, and where it came from.
async fn send_somewhere(
    client: &reqwest::Client,
    replicas: &Replicas,
    dice: &mut Dice,
    path: &str,
    body: Value,
    tally: &mut Tally,
) -> (support::Reply, String) {
    for _ in 0..200 {
        let Some(base) = replicas.pick(dice) else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let sent = client
            .post(format!("{base}{path}"))
            .json(&body)
            .timeout(Duration::from_secs(60))
            .send()
            .await;
        if let Ok(response) = sent {
            if let Ok(reply) = try_read_reply(response).await {
                // A reply cut off by a kill is not an answer, nor is "try again".
                const AGAIN: [&str; 6] = [
                    "SHUTTING_DOWN",
                    "STORAGE_UNAVAILABLE",
                    "DECISION_IN_PROGRESS",
                    "RUN_IN_PROGRESS",
                    "TOO_MANY_RUNS",
                    "RATE_LIMITED",
                ];
                let again = reply.body["error"]["code"]
                    .as_str()
                    .is_some_and(|code| AGAIN.contains(&code));
                if reply.done || (reply.content_type.starts_with("application/json") && !again) {
                    return (reply, base);
                }
            }
        }
        tally.retries += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no replica answered {path} in 200 tries");
}

async fn try_read_reply(response: reqwest::Response) -> Result<support::Reply, reqwest::Error> {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await?;
    let mut events = Vec::new();
    let mut done = false;
    let mut body = Value::Null;
    if content_type.starts_with("text/event-stream") {
        for line in text.lines() {
            if let Some(data) = line.strip_prefix("data: ") {
                if data == "[DONE]" {
                    done = true;
                } else if let Ok(event) = serde_json::from_str(data) {
                    events.push(event);
                }
            }
        }
    } else {
        body = serde_json::from_str(&text).unwrap_or(Value::Null);
    }
    Ok(support::Reply {
        status,
        events,
        done,
        body,
        content_type,
        stream_header: None,
    })
}

/// A decision's answer in short: its status and error code, or its events' types.
fn answer_of(reply: &support::Reply) -> String {
    if reply.events.is_empty() {
        format!("{} {}", reply.status, reply.body["error"]["code"])
    } else {
        let types: Vec<String> = reply
            .events
            .iter()
            .filter(|e| e["type"] != "text-delta")
            .map(|e| match e["type"].as_str() {
                Some("tool-output-error") => format!("tool-output-error({})", e["error"]["code"]),
                Some("tool-output-available") => format!(
                    "tool-output-available({} {} {})",
                    e["toolCallId"], e["output"]["bookingId"], e["output"]["status"]
                ),
                Some("start") => format!("start({})", e["messageId"]),
                Some(kind) => kind.to_owned(),
                None => "?".to_owned(),
            })
            .collect();
        format!("{} {}", reply.status, types.join(","))
    }
}

/// The stored conversation once no reply is being written in it (a reply whose replica
/// was killed is closed by another after the heartbeat timeout).
async fn settled_conversation(
    client: &reqwest::Client,
    replicas: &Replicas,
    dice: &mut Dice,
    id: &str,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(base) = replicas.pick(dice) {
            let got = client
                .get(format!("{base}/api/conversations/{id}"))
                .timeout(Duration::from_secs(10))
                .send()
                .await;
            if let Ok(response) = got {
                if response.status().is_success() {
                    if let Ok(body) = response.json::<Value>().await {
                        if body["running"].is_null() {
                            return body;
                        }
                    }
                }
            }
        }
        assert!(Instant::now() < deadline, "conversation {id} never settled");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The pending `createBooking` call of a stored conversation's last reply, if any.
fn pending_booking(conversation: &Value) -> Option<String> {
    let last = conversation["messages"].as_array()?.last()?;
    last["parts"].as_array()?.iter().find_map(|part| {
        (part["tool"] == "createBooking" && part["state"] == "approval-requested")
            .then(|| part["id"].as_str().map(str::to_owned))
            .flatten()
    })
}

/// One person's conversations in a chaos run.
async fn chaos_worker(
    replicas: Replicas,
    seed: u64,
    conversations: usize,
) -> Result<Tally, String> {
    let mut dice = Dice(seed | 1);
    let client = new_client().map_err(|e| e.to_string())?;
    let mut tally = Tally::default();
    const PLACES: [(&str, &str); 3] = [
        (
            "Tìm nhà hàng chả cá ở Hà Nội",
            "Đặt bàn ở Chả Cá Thăng Long cho 4 người tối mai lúc 19:00",
        ),
        (
            "Tìm nhà hàng chả cá ở Hà Nội",
            "Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 20:00",
        ),
        (
            "Tìm nhà hàng chả cá ở Hà Nội",
            "Đặt bàn ở Chả Cá Thăng Long cho 6 người tối mai lúc 18:30",
        ),
    ];
    for _ in 0..conversations {
        let (search, booking) = PLACES[dice.below(PLACES.len() as u64) as usize];
        let (first, _) = send_somewhere(
            &client,
            &replicas,
            &mut dice,
            "/api/chat",
            json!({"text": search}),
            &mut tally,
        )
        .await;
        let id = match first.events.iter().find(|e| e["type"] == "start") {
            Some(start) => start["messageMetadata"]["conversationId"]
                .as_str()
                .ok_or("a start event without its conversation id")?
                .to_owned(),
            None => continue,
        };
        tally.conversations += 1;
        settled_conversation(&client, &replicas, &mut dice, &id).await;
        let (asked, asked_on) = send_somewhere(
            &client,
            &replicas,
            &mut dice,
            "/api/chat",
            json!({"conversationId": id, "text": booking}),
            &mut tally,
        )
        .await;
        let _ = asked;
        let stored = settled_conversation(&client, &replicas, &mut dice, &id).await;
        let Some(call) = pending_booking(&stored) else {
            continue;
        };
        let roll = dice.below(10);
        let approved = roll < 7 || roll == 9;
        let decision = json!({"conversationId": id, "toolCallId": call, "approved": approved});
        if roll == 9 {
            // The same approval from two replicas at once: one books, the other is told
            // it was already decided.
            tally.approved_twice += 1;
            let (mut one, mut two) = (Dice(dice.next() | 1), Dice(dice.next() | 1));
            let (mut t1, mut t2) = (Tally::default(), Tally::default());
            let ((x, _), (y, _)) = tokio::join!(
                send_somewhere(
                    &client,
                    &replicas,
                    &mut one,
                    "/api/approvals",
                    decision.clone(),
                    &mut t1
                ),
                send_somewhere(
                    &client,
                    &replicas,
                    &mut two,
                    "/api/approvals",
                    decision.clone(),
                    &mut t2
                ),
            );
            tally.retries += t1.retries + t2.retries;
            tally.answers.insert(
                format!("{id}/{call}"),
                format!("{} / {}", answer_of(&x), answer_of(&y)),
            );
            if [&x, &y]
                .iter()
                .all(|reply| reply.body["error"]["code"] == "PREVIEW_CHANGED")
            {
                let (again, _) = send_somewhere(
                    &client,
                    &replicas,
                    &mut dice,
                    "/api/approvals",
                    decision.clone(),
                    &mut tally,
                )
                .await;
                assert!([200, 409].contains(&again.status), "{:?}", again.body);
            }
            for reply in [&x, &y] {
                assert!(
                    [200, 409].contains(&reply.status),
                    "a decision answered {}: {:?}",
                    reply.status,
                    reply.body
                );
            }
        } else {
            // "What this would do changed" (the slot filled up meanwhile): the person reads
            // the new form and decides again.
            let mut tries = 0;
            let (reply, on) = loop {
                let (reply, on) = send_somewhere(
                    &client,
                    &replicas,
                    &mut dice,
                    "/api/approvals",
                    decision.clone(),
                    &mut tally,
                )
                .await;
                tries += 1;
                if reply.body["error"]["code"] != "PREVIEW_CHANGED" || tries == 5 {
                    break (reply, on);
                }
            };
            tally.answers.insert(
                format!("{id}/{call}"),
                format!("{on}: {}", answer_of(&reply)),
            );
            assert!(
                [200, 409].contains(&reply.status),
                "a decision answered {}: {:?}",
                reply.status,
                reply.body
            );
            if on != asked_on {
                tally.decided_elsewhere += 1;
            }
        }
        // A reload, as a person coming back would; a decision given back (our failure,
        // never theirs) shows the form again, and they answer it again.
        for _ in 0..5 {
            let stored = settled_conversation(&client, &replicas, &mut dice, &id).await;
            if pending_booking(&stored).as_deref() != Some(call.as_str()) {
                break;
            }
            let decision = json!({"conversationId": id, "toolCallId": call, "approved": approved});
            let (reply, _) = send_somewhere(
                &client,
                &replicas,
                &mut dice,
                "/api/approvals",
                decision,
                &mut tally,
            )
            .await;
            tally
                .answers
                .entry(format!("{id}/{call}"))
                .or_default()
                .push_str(&format!(" then {}", answer_of(&reply)));
        }
        if approved {
            tally.approved.push((id.clone(), call));
        } else {
            tally.declined.push((id.clone(), call));
        }
    }
    Ok(tally)
}

/// Three replicas on one PostgreSQL database, one killed (SIGKILL) every few seconds and
/// started again, while people search, book, approve (some twice, on two replicas at
/// once), decline and reload. At the end: every approved booking exists exactly once, no
/// run is left running, and every stored conversation agrees with the bookings table.
/// `DATBAN_CHAOS_CONVERSATIONS` (default 200) and `DATBAN_CHAOS_SECONDS` (the least time
/// the kills go on; default 0: as long as the conversations take) size it; `cargo xtask
/// chaos <seconds>` runs a longer one. On SQLite it does not run (one process per file).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chaos_three_replicas_one_killed_every_few_seconds_lose_nothing() -> TestResult {
    if postgres_admin_url().is_none() {
        eprintln!("chaos: PostgreSQL only (run by the PostgreSQL pass and `cargo xtask chaos`)");
        return Ok(());
    }
    let number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let conversations = number("DATBAN_CHAOS_CONVERSATIONS", 200) as usize;
    let at_least = Duration::from_secs(number("DATBAN_CHAOS_SECONDS", 0));
    let seed = number(
        "DATBAN_CHAOS_SEED",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_nanos() as u64,
    );
    eprintln!("chaos: seed {seed}, {conversations} conversations");
    let (url, _db) = test_database_url().await?;
    let env = [
        ("DATBAN_OFFLINE_TOKEN_DELAY_MS", "10"),
        ("DATBAN_HEARTBEAT_TIMEOUT_MS", "2000"),
        ("DATBAN_SHUTDOWN_GRACE_MS", "500"),
    ];
    let replicas = Replicas(Arc::new(std::sync::Mutex::new(vec![None, None, None])));
    let mut processes = Vec::new();
    for index in 0..3 {
        let process = start_server(&url, &env).await?;
        replicas.set(index, Some(process.base.clone()));
        processes.push(process);
    }
    let started = Instant::now();
    let workers = 16;
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            let replicas = replicas.clone();
            let share = conversations / workers + usize::from(w < conversations % workers);
            tokio::spawn(chaos_worker(
                replicas,
                seed.wrapping_add(w as u64 * 0x9e37_79b9),
                share,
            ))
        })
        .collect();
    let mut dice = Dice(seed | 1);
    let mut kills = 0;
    while !handles.iter().all(|h| h.is_finished()) || started.elapsed() < at_least {
        tokio::time::sleep(Duration::from_millis(2000 + dice.below(2000))).await;
        let index = dice.below(3) as usize;
        replicas.set(index, None);
        processes[index].kill9();
        kills += 1;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let process = start_server(&url, &env).await?;
        replicas.set(index, Some(process.base.clone()));
        processes[index] = process;
    }
    let mut tally = Tally::default();
    for handle in handles {
        let part = handle.await??;
        tally.conversations += part.conversations;
        tally.approved.extend(part.approved);
        tally.answers.extend(part.answers);
        tally.declined.extend(part.declined);
        tally.approved_twice += part.approved_twice;
        tally.retries += part.retries;
        tally.decided_elsewhere += part.decided_elsewhere;
    }

    // Every run left by a kill is closed by a living replica within the timeout.
    let pool = db::connect(&url).await?;
    let count = |sql: &'static str| {
        let pool = pool.clone();
        async move {
            let (n,): (i64,) = sqlx::query_as(sql).fetch_one(&pool).await?;
            Ok::<_, sqlx::Error>(n)
        }
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while count("SELECT COUNT(*) FROM runs WHERE status = 'running'").await? > 0 {
        assert!(Instant::now() < deadline, "runs were left running");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for (conversation, call) in &tally.approved {
        let (n,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM bookings WHERE conversation_id = $1 AND tool_call_id = $2",
        )
        .bind(conversation)
        .bind(call)
        .fetch_one(&pool)
        .await?;
        if n != 1 {
            let bodies: Vec<(String,)> =
                sqlx::query_as("SELECT body FROM messages WHERE conversation_id = $1 ORDER BY seq")
                    .bind(conversation)
                    .fetch_all(&pool)
                    .await?;
            let parts: Vec<Value> = bodies
                .iter()
                .filter_map(|(body,)| serde_json::from_str::<Value>(body).ok())
                .flat_map(|m| {
                    let status = m["status"].clone();
                    m["parts"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|p| p["tool"] == "createBooking")
                        .map(move |mut p| {
                            p["output"] = Value::Null;
                            json!({"status": status, "part": p})
                        })
                })
                .collect();
            let pending: Vec<(String, Option<String>)> = sqlx::query_as(
                "SELECT tool_call_id, taken_by FROM pending_calls WHERE conversation_id = $1",
            )
            .bind(conversation)
            .fetch_all(&pool)
            .await?;
            let runs: Vec<(String, String, i64)> = sqlx::query_as(
                "SELECT run_id, status, interrupted FROM runs WHERE conversation_id = $1 ORDER BY started_at",
            )
            .bind(conversation)
            .fetch_all(&pool)
            .await?;
            let bookings: Vec<(String, Option<String>, String)> =
                sqlx::query_as("SELECT id, conversation_id, tool_call_id FROM bookings")
                    .fetch_all(&pool)
                    .await?;
            let keys: Vec<(String, String)> = sqlx::query_as(
                "SELECT idem_key, state FROM idempotency_keys WHERE idem_key LIKE $1",
            )
            .bind(format!("{conversation}%"))
            .fetch_all(&pool)
            .await?;
            panic!(
                "approved booking {conversation}/{call} exists {n} times; answered {:?}; \
                 parts {parts:#?}; pending {pending:?}; runs {runs:?}; keys {keys:?}; \
                 all bookings {bookings:?}",
                tally.answers.get(&format!("{conversation}/{call}"))
            );
        }
    }
    for (conversation, call) in &tally.declined {
        let (n,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM bookings WHERE conversation_id = $1 AND tool_call_id = $2",
        )
        .bind(conversation)
        .bind(call)
        .fetch_one(&pool)
        .await?;
        assert_eq!(n, 0, "declined booking {conversation}/{call} was made");
    }
    // Every stored conversation agrees with the bookings table (each was read by its
    // person after its last decision: a read brings a reply a crash left behind in line).
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT conversation_id, tool_call_id, id FROM bookings WHERE conversation_id IS NOT NULL",
    )
    .fetch_all(&pool)
    .await?;
    let conversations: Vec<(String,)> = sqlx::query_as("SELECT id FROM conversations")
        .fetch_all(&pool)
        .await?;
    let mut shown = std::collections::HashMap::new();
    for (conversation,) in &conversations {
        let bodies: Vec<(String,)> =
            sqlx::query_as("SELECT body FROM messages WHERE conversation_id = $1")
                .bind(conversation)
                .fetch_all(&pool)
                .await?;
        for (body,) in bodies {
            let message: Value = serde_json::from_str(&body)?;
            for part in message["parts"].as_array().into_iter().flatten() {
                if part["tool"] == "createBooking" && part["state"] == "output-available" {
                    shown.insert(
                        (
                            conversation.clone(),
                            part["id"].as_str().ok_or("a booking part's id")?.to_owned(),
                        ),
                        part["output"]["bookingId"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                    );
                }
            }
        }
    }
    for (conversation, call, booking) in &rows {
        assert_eq!(
            shown.get(&(conversation.clone(), call.clone())),
            Some(booking),
            "booking {booking} ({conversation}/{call}) is not shown as done by its conversation"
        );
    }
    assert_eq!(
        shown.len(),
        rows.len(),
        "a conversation shows a booking that does not exist"
    );
    let interrupted = count("SELECT COUNT(*) FROM runs WHERE interrupted = 1").await?;
    let done = count("SELECT COUNT(*) FROM runs WHERE status = 'done'").await?;
    println!(
        "chaos: {} conversations in {:.0} s, {kills} kills; runs done {done}, interrupted {interrupted}; \
         {} approved ({} twice at once), {} declined, {} decided on another replica than asked; \
         {} requests retried after a kill; {} bookings",
        tally.conversations,
        started.elapsed().as_secs_f64(),
        tally.approved.len(),
        tally.approved_twice,
        tally.declined.len(),
        tally.decided_elsewhere,
        tally.retries,
        rows.len()
    );
    Ok(())
}

/// The same with two real server processes: a message sent to each at the same moment in
/// one conversation gives one reply and one `409 RUN_IN_PROGRESS`, every time.
#[tokio::test]
async fn two_server_processes_never_write_one_conversation_at_once() -> TestResult {
    let (url, _db) = test_database_url().await?;
    let env = [("DATBAN_OFFLINE_TOKEN_DELAY_MS", "5")];
    let a = start_server(&url, &env).await?;
    let b = start_server(&url, &env).await?;
    let client = new_client()?;
    let say = |base: &str, body: Value| {
        let request = client.post(format!("{base}/api/chat")).json(&body);
        async move { support::read_reply(request.send().await?).await }
    };
    let first = say(&a.base, json!({"text": "Xin chào"})).await?;
    let conversation = first.conversation_id();
    let rounds = 4;
    for round in 0..rounds {
        let (x, y) = tokio::join!(
            say(
                &a.base,
                json!({"conversationId": conversation, "text": "Thời tiết Huế ngày mai?"})
            ),
            say(
                &b.base,
                json!({"conversationId": conversation, "text": "Thời tiết Vinh ngày mai?"})
            ),
        );
        let (x, y) = (x?, y?);
        let mut statuses = [x.status, y.status];
        statuses.sort_unstable();
        assert_eq!(
            statuses,
            [200, 409],
            "round {round}: {:?} / {:?}",
            x.body,
            y.body
        );
        let lost = if x.status == 409 { &x } else { &y };
        assert_eq!(lost.body["error"]["code"], "RUN_IN_PROGRESS");
    }
    let stored = conversation_on(&client, &b.base, &conversation).await?;
    let messages = stored["messages"]
        .as_array()
        .ok_or("the conversation's messages")?;
    assert_eq!(messages.len(), 2 * (1 + rounds), "{stored}");
    Ok(())
}

//! The registry's own tests: storing turns and batches, subscribers, places.

use super::*;
use futures::StreamExt;
use shared::tools::Assistant;

/// What a test returns: a failure of the code under test is an error with its message,
/// not a panic at an `unwrap`.
type TestResult = Result<(), Box<dyn std::error::Error>>;

fn delta(n: usize) -> AgentEvent {
    AgentEvent::TextDelta {
        id: "t".into(),
        delta: n.to_string(),
    }
}

/// Turns stored at the same moment share the writer's commit, and one that cannot be
/// stored (its conversation id is taken) fails alone: the others are stored, whole.
#[tokio::test]
async fn turns_stored_together_fail_alone() -> TestResult {
    use shared::message::Message;
    let (pool, _db) = db::test_pool().await;
    let taken =
        crate::store::create_conversation(&pool, "own_x", Assistant::Restaurant, now()).await?;
    let runs = Runs::new(pool.clone());
    let conversation = |id: &str, owner: &str| crate::store::Conversation {
        id: id.to_owned(),
        owner_id: owner.to_owned(),
        assistant: Assistant::Restaurant,
    };
    let cases = [
        conversation("conv_new_1", "own_a"),
        conversation(&taken.id, "own_b"),
        conversation("conv_new_2", "own_c"),
    ];
    let mut reservations = Vec::new();
    for case in &cases {
        let reservation = runs.reserve_unstored(&case.owner_id, &case.id).await?;
        reservations.push(reservation);
    }
    // All three asked before the storer runs (one thread): one tick takes them all.
    let results =
        futures::future::join_all(reservations.iter().zip(&cases).map(|(reservation, case)| {
            let user = Message::user(crate::store::new_row_id("msg"), "hi");
            let reply = Message::assistant(crate::store::new_row_id("msg"));
            reservation.store_turn(crate::store::Turn::new(case, true, &user, &reply, now()))
        }))
        .await;
    assert!(results[0].is_ok(), "{:?}", results[0]);
    assert!(results[1].is_err(), "a taken conversation id must fail");
    assert!(results[2].is_ok(), "{:?}", results[2]);
    for (case, stored) in [(&cases[0], true), (&cases[2], true)] {
        let messages = crate::store::messages(&pool, &case.id).await?;
        assert_eq!(messages.len() == 2, stored, "{}", case.id);
    }
    // The taken conversation keeps its owner and gained nothing.
    let owner: (String,) = sqlx::query_as("SELECT owner_id FROM conversations WHERE id = $1")
        .bind(&taken.id)
        .fetch_one(&pool)
        .await?;
    assert_eq!(owner.0, "own_x");
    assert!(crate::store::messages(&pool, &taken.id).await?.is_empty());
    // Each stored turn's run row is there, "running"; the failed one has none.
    let rows: Vec<(String,)> = sqlx::query_as("SELECT conversation_id FROM runs ORDER BY 1")
        .fetch_all(&pool)
        .await?;
    let rows: Vec<String> = rows.into_iter().map(|(id,)| id).collect();
    assert_eq!(rows, vec!["conv_new_1".to_owned(), "conv_new_2".to_owned()]);
    Ok(())
}

/// Several runs stored in one tick, with texts outside ASCII, quotes and line breaks:
/// each run's events and message read back exactly as they were, none running into
/// another's (on SQLite the script carries them as byte slices of one parameter).
#[tokio::test]
async fn one_tick_stores_each_runs_texts_exactly() -> TestResult {
    use crate::store::{Conversation, MessageSave, Turn};
    use shared::message::Message;
    let (pool, _db) = db::test_pool().await;
    let postgres = db::backend(&pool) == Backend::Postgres;
    let texts = [
        "Đặt bàn cho 4 người lúc 19:00 — chả cá",
        "",
        "\"quoted\" \\ back\nslash ✓ 🍜",
        "x",
    ];
    let mut batches = Vec::new();
    let mut expected = Vec::new();
    for (n, text) in texts.into_iter().enumerate() {
        let conversation = Conversation {
            id: crate::store::new_row_id("conv"),
            owner_id: format!("own_{n}"),
            assistant: Assistant::Restaurant,
        };
        let user = Message::user(crate::store::new_row_id("msg"), text);
        let empty = Message::assistant(crate::store::new_row_id("msg"));
        let mut reply = empty.clone();
        let run = Arc::new(ActiveRun::new(&conversation.id, &conversation.owner_id));
        let id = format!("t{n}");
        let events = [
            AgentEvent::TextStart { id: id.clone() },
            AgentEvent::TextDelta {
                id: id.clone(),
                delta: text.to_owned(),
            },
            AgentEvent::TextEnd { id },
        ];
        for event in &events {
            reply.apply(event);
            run.push(event);
        }
        let (_, stored) = run.unstored();
        batches.push(Batch {
            run: Arc::clone(&run),
            from: 0,
            events: stored.clone(),
            done: true,
            save: Some(MessageSave::of(&conversation.id, &reply, 3)),
            turn: Some(Turn::new(&conversation, true, &user, &empty, now())),
            turn_waiter: None,
            pending: None,
        });
        expected.push((conversation.id, run, vec![user, reply], stored));
    }
    write_batches(&pool, "node_t", &batches, postgres).await?;
    for (conversation_id, run, messages, events) in expected {
        assert_eq!(
            crate::store::messages(&pool, &conversation_id).await?,
            messages
        );
        let (page, more) = stored_events(&pool, run.id(), 0).await?;
        assert!(!more);
        let page: Vec<(i64, Arc<str>)> = page
            .into_iter()
            .map(|(seq, data)| (seq, Arc::from(data)))
            .collect();
        let want: Vec<(i64, Arc<str>)> = (1..).zip(events).collect();
        assert_eq!(page, want);
    }
    Ok(())
}

/// More batches than one read returns, on the backend under test: every event is
/// stored once, numbered in order, and reads back as it was, from any point.
#[tokio::test]
async fn large_batches_are_stored_whole_and_in_order() -> TestResult {
    let (pool, _db) = db::test_pool().await;
    let conversation =
        crate::store::create_conversation(&pool, "own_a", Assistant::Restaurant, now()).await?;
    let run = Arc::new(ActiveRun::new(&conversation.id, "own_a"));
    let total = PAGE * 3 + 50;
    for n in 0..total {
        run.push(&delta(n));
    }
    let (_, events) = run.unstored();
    let postgres = db::backend(&pool) == Backend::Postgres;
    // Many batches of one event (more than one read returns), then bigger ones, as
    // ticks of a storer would make them.
    let mut from = 0;
    while from < total {
        let size = if from < PAGE + 50 { 1 } else { 7 };
        let to = (from + size).min(total);
        let batch = Batch {
            run: Arc::clone(&run),
            from,
            events: events[from..to].to_vec(),
            done: to == total,
            save: None,
            turn: None,
            turn_waiter: None,
            pending: None,
        };
        write_batches(&pool, "node_t", &[batch], postgres).await?;
        from = to;
    }
    for start in [0, 1, 17, total - 1] {
        let mut stored = Vec::new();
        loop {
            let after = (start + stored.len()) as u64;
            let (page, more) = stored_events(&pool, run.id(), after).await?;
            for (seq, data) in page {
                assert_eq!(seq, (start + stored.len()) as i64 + 1);
                stored.push(Arc::<str>::from(data));
            }
            if !more {
                break;
            }
        }
        assert_eq!(numbers(&stored)?, (start..total).collect::<Vec<_>>());
    }
    assert!(matches!(
        row_state(&pool, run.id(), &fresh_since(STALE_AFTER)).await?,
        RowState::Done
    ));
    Ok(())
}

fn numbers(events: &[Arc<str>]) -> Result<Vec<usize>, Box<dyn std::error::Error>> {
    events
        .iter()
        .map(|data| {
            let event: AgentEvent = serde_json::from_str(data)?;
            match event {
                AgentEvent::TextDelta { delta, .. } => Ok(delta.parse()?),
                other => Err(format!("unexpected {other:?}").into()),
            }
        })
        .collect()
}

#[tokio::test]
async fn subscribers_get_every_event_once_in_order_even_when_they_fall_behind() -> TestResult {
    let run = Arc::new(ActiveRun::new("conv", "owner"));
    for n in 0..10 {
        run.push(&delta(n));
    }
    let all = run.subscribe(0);
    let late = run.subscribe(4);
    let ahead = run.subscribe(12);
    // Many events while nobody reads: each subscriber takes them from the log.
    let total = 250;
    for n in 10..total {
        run.push(&delta(n));
    }
    run.close();
    let all: Vec<Arc<str>> = all.collect().await;
    assert_eq!(numbers(&all)?, (0..total).collect::<Vec<_>>());
    let late: Vec<Arc<str>> = late.collect().await;
    assert_eq!(numbers(&late)?, (4..total).collect::<Vec<_>>());
    let ahead: Vec<Arc<str>> = ahead.collect().await;
    assert_eq!(numbers(&ahead)?, (12..total).collect::<Vec<_>>());
    // After the end: the log only, then the stream ends.
    let after_end: Vec<Arc<str>> = run.subscribe(total as u64 - 2).collect().await;
    assert_eq!(numbers(&after_end)?, vec![total - 2, total - 1]);
    Ok(())
}

/// Once the agent is done, its last events wait for the stored end and leave with it:
/// a client never reads `finish` of a reply the server could still lose.
#[tokio::test]
async fn the_last_events_wait_for_the_run_to_be_stored_over() -> TestResult {
    let run = Arc::new(ActiveRun::new("conv", "owner"));
    run.push(&delta(0));
    let mut stream = run.subscribe(0);
    assert_eq!(
        numbers(&[stream.next().await.ok_or("no first event")?])?,
        vec![0]
    );
    run.push(&delta(1));
    run.push(&delta(2));
    run.ending.store(true, Ordering::Release);
    let early = tokio::time::timeout(Duration::from_millis(50), stream.next()).await;
    assert!(early.is_err(), "an event left before the end was stored");
    // A subscriber that comes now waits the same way.
    let mut late = run.subscribe(0);
    let early = tokio::time::timeout(Duration::from_millis(20), late.next()).await;
    assert!(early.is_err(), "an event left before the end was stored");
    run.close();
    let rest: Vec<Arc<str>> = stream.collect().await;
    assert_eq!(numbers(&rest)?, vec![1, 2]);
    let late: Vec<Arc<str>> = late.collect().await;
    assert_eq!(numbers(&late)?, vec![0, 1, 2]);
    Ok(())
}

#[tokio::test]
async fn live_events_follow_the_snapshot_without_a_gap() -> TestResult {
    let run = Arc::new(ActiveRun::new("conv", "owner"));
    run.push(&delta(0));
    let mut stream = run.subscribe(0);
    assert_eq!(
        numbers(&[stream.next().await.ok_or("no first event")?])?,
        vec![0]
    );
    let writer = {
        let run = Arc::clone(&run);
        tokio::spawn(async move {
            for n in 1..200 {
                run.push(&delta(n));
                tokio::task::yield_now().await;
            }
            run.close();
        })
    };
    let rest: Vec<Arc<str>> = stream.collect().await;
    writer.await?;
    assert_eq!(numbers(&rest)?, (1..200).collect::<Vec<_>>());
    Ok(())
}

#[tokio::test]
async fn one_run_per_conversation_and_a_bounded_number_per_owner() -> TestResult {
    let (pool, _db) = crate::db::test_pool().await;
    let at = timestamp(now());
    for id in ["c1", "c2", "c3"] {
        sqlx::query(
            "INSERT INTO conversations (id, owner_id, assistant, created_at, updated_at) \
             VALUES ($1, 'o', 'restaurant', $2, $2)",
        )
        .bind(id)
        .bind(&at)
        .execute(&pool)
        .await?;
    }
    let runs = Runs::new(pool);
    runs.set_max_per_owner(2);
    let first = runs.reserve("o", "c1", None).await?;
    assert_eq!(
        runs.reserve("o", "c1", None).await.err(),
        Some(ReserveError::Busy {
            running: Some(first.run().id().to_owned())
        })
    );
    let second = runs.reserve("o", "c2", None).await?;
    assert_eq!(
        runs.reserve("o", "c3", None).await.err(),
        Some(ReserveError::TooMany { max: 2 })
    );
    assert!(runs.has_room("o").await.is_err());
    assert!(runs.has_room("someone else").await.is_ok());
    // A waiting reservation gets the place once it is given back.
    let waiting = {
        let runs = runs.clone();
        tokio::spawn(async move {
            runs.reserve("o", "c1", Some(Duration::from_secs(5)))
                .await
                .map(|r| r.run().id().to_owned())
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let first_id = first.run().id().to_owned();
    drop(first);
    let next = waiting.await??;
    assert_ne!(next, first_id);
    drop(second);
    assert!(runs.has_room("o").await.is_ok());
    Ok(())
}

/// What is asked of `runs` about running or finished runs is read from an index of those
/// runs only: on a busy server nearly every row is a run finished in the last ten
/// minutes, and the count of replies running elsewhere (every 100 ms while replies start)
/// and the search for dead runs walked them all.
#[tokio::test]
async fn reads_by_status_use_an_index_of_those_runs_only() -> TestResult {
    let (pool, _db) = crate::db::test_pool().await;
    let postgres = db::backend(&pool) == Backend::Postgres;
    // Indexes whose rows are those of one status (partial indexes).
    let running: &[&str] = &["runs_running", "runs_one_running"];
    let done: &[&str] = &["runs_done"];
    let mut conn = pool.acquire().await?;
    if postgres {
        // An empty table is read whole whatever its indexes; what is asked is whether the
        // planner can answer from a partial index, so a sequential scan is made its last
        // resort (it still takes one when no index fits).
        sqlx::query("SET enable_seqscan = off")
            .execute(&mut *conn)
            .await?;
    }
    for (sql, indexes, params) in [
        (storer::STOP_REQUESTS_SQL, running, 1),
        (lifecycle::DEAD_RUNS_SQL, running, 1),
        (reserve::RUNNING_ELSEWHERE_SQL, running, 2),
        (PURGE_EVENTS_SQL, done, 1),
        (PURGE_RUNS_SQL, done, 1),
    ] {
        let explain = if postgres {
            format!("EXPLAIN {sql}")
        } else {
            format!("EXPLAIN QUERY PLAN {sql}")
        };
        let explain = sqlx::AssertSqlSafe(explain.as_str());
        // SQLite: (id, parent, unused, "SCAN|SEARCH runs USING [COVERING] INDEX name …");
        // PostgreSQL: one line of text per plan node, "Index [Only] Scan using name on runs".
        let steps: Vec<String> = if postgres {
            let mut query = sqlx::query_as::<_, (String,)>(explain);
            for _ in 0..params {
                query = query.bind("2026-12-03T00:00:00.000Z");
            }
            let plan = query.fetch_all(&mut *conn).await?;
            plan.into_iter()
                .map(|row| row.0.trim().to_owned())
                .collect()
        } else {
            let mut query = sqlx::query_as::<_, (i64, i64, i64, String)>(explain);
            for _ in 0..params {
                query = query.bind("2026-12-03T00:00:00.000Z");
            }
            let plan = query.fetch_all(&mut *conn).await?;
            plan.into_iter().map(|row| row.3).collect()
        };
        let words =
            |step: &str| -> Vec<String> { step.split_whitespace().map(str::to_owned).collect() };
        if postgres {
            // "Index [Only] Scan using name on runs", or a bitmap read of "runs" led by
            // "Bitmap Index Scan on name"; never "Seq Scan on runs".
            let mut named = false;
            for step in &steps {
                let w = words(step);
                assert!(
                    !w.windows(4).any(|q| q == ["Seq", "Scan", "on", "runs"]),
                    "{sql}: {steps:?}"
                );
                for q in w.windows(3) {
                    if q[0] == "using" && q[2] == "on" && q[1].starts_with("runs") {
                        assert!(indexes.contains(&q[1].as_str()), "{sql}: {steps:?}");
                        named = true;
                    }
                    if q[0] == "Scan" && q[1] == "on" && indexes.contains(&q[2].as_str()) {
                        named = true;
                    }
                }
            }
            assert!(named, "{sql}: {steps:?}");
        } else {
            // Each read of `runs` names one of them: "… USING [COVERING] INDEX name …".
            let reads_runs: Vec<&String> = steps
                .iter()
                .filter(|step| step.starts_with("SCAN runs") || step.starts_with("SEARCH runs"))
                .collect();
            assert!(!reads_runs.is_empty(), "{sql}: {steps:?}");
            assert!(
                reads_runs.iter().all(|step| words(step)
                    .windows(2)
                    .any(|pair| pair[0] == "INDEX" && indexes.contains(&pair[1].as_str()))),
                "{sql}: {steps:?}"
            );
        }
    }
    Ok(())
}

/// A call waiting for approval is stored by the writer's commit together with the message
/// showing its form, and that commit is synced (the writer is back to `NORMAL` after it);
/// one that cannot be stored (its id is taken) fails and leaves the stored message as the
/// first call left it.
#[tokio::test]
async fn a_pending_call_commits_with_the_message_showing_its_form() -> TestResult {
    use crate::store::{Conversation, MessageSave, PendingCall, Turn};
    use shared::message::Message;
    let (pool, _db) = db::test_pool().await;
    let runs = Runs::new(pool.clone());
    let conversation = Conversation {
        id: crate::store::new_row_id("conv"),
        owner_id: "own_p".into(),
        assistant: Assistant::Restaurant,
    };
    let reservation = runs
        .reserve_unstored(&conversation.owner_id, &conversation.id)
        .await?;
    let user = Message::user(crate::store::new_row_id("msg"), "Đặt bàn");
    let reply = Message::assistant(crate::store::new_row_id("msg"));
    reservation
        .store_turn(Turn::new(&conversation, true, &user, &reply, now()))
        .await?;
    let call = PendingCall {
        tool_call_id: "call_1".into(),
        conversation_id: conversation.id.clone(),
        owner_id: conversation.owner_id.clone(),
        message_id: reply.id.clone(),
        tool_name: "create_booking".into(),
        input: r#"{"party_size":4,"note":"cửa sổ \"yên tĩnh\""}"#.into(),
    };
    let shown = |text: &str, seq: i64| MessageSave {
        conversation_id: conversation.id.clone(),
        message_id: reply.id.clone(),
        body: format!(
            r#"{{"id":"{}","role":"assistant","parts":[{{"type":"text","id":"t","text":"{text}"}}]}}"#,
            reply.id
        ),
        run_seq: seq,
    };
    let (first, second) = (shown("form", 3), shown("again", 4));
    let (told, results) = tokio::sync::oneshot::channel();
    let (call_twice, first_body) = (call.clone(), first.body.clone());
    let writer = pool.clone();
    let run = reservation.start(move |tx, _cancel, last| async move {
        drop(tx);
        let once = last.store_pending(call_twice.clone(), now(), first).await;
        // After a commit that stored a call (a failed one resets it on its own).
        let sync = if db::backend(&writer) == Backend::Sqlite {
            // Unreadable counts as not back to NORMAL: the assertion below says so.
            sqlx::query_as::<_, (i64,)>("PRAGMA synchronous")
                .fetch_one(&writer)
                .await
                .map_or(-1, |(sync,)| sync)
        } else {
            1
        };
        let twice = last.store_pending(call_twice, now(), second).await;
        let _ = told.send((once.is_ok(), twice.is_ok(), sync));
    });
    let _: Vec<_> = run.subscribe(0).collect().await;
    let (once, twice, sync) = results.await?;
    assert!(
        once && !twice,
        "the second call id is taken: {once} {twice}"
    );
    assert_eq!(
        sync, 1,
        "the writer must be back to NORMAL after a synced tick"
    );
    let stored: Vec<(String, String)> =
        sqlx::query_as("SELECT tool_call_id, input FROM pending_calls WHERE conversation_id = $1")
            .bind(&conversation.id)
            .fetch_all(&pool)
            .await?;
    assert_eq!(
        stored,
        vec![(call.tool_call_id.clone(), call.input.clone())]
    );
    let body: (String,) = sqlx::query_as("SELECT body FROM messages WHERE id = $1")
        .bind(&reply.id)
        .fetch_one(&pool)
        .await?;
    assert_eq!(body.0, first_body, "the failed call's message was stored");
    Ok(())
}

/// A message in an existing conversation takes its lease: with its turn's commit on
/// SQLite, before it on PostgreSQL, with the same outcomes. A row left by a process that
/// died (its heartbeat too old) is closed as interrupted and the turn stored; a live run
/// of another process keeps the conversation (`Busy`, naming it) and nothing of the turn
/// is stored.
#[tokio::test]
async fn an_existing_conversations_lease_is_taken_or_refused_with_its_turn() -> TestResult {
    use shared::message::Message;
    let (pool, _db) = db::test_pool().await;
    let runs = Runs::new(pool.clone());
    let mut conversations = Vec::new();
    for _ in 0..3 {
        conversations.push(
            crate::store::create_conversation(&pool, "own_l", Assistant::Restaurant, now()).await?,
        );
    }
    let [free, dead, live] = &conversations[..] else {
        return Err("three conversations".into());
    };
    let old = timestamp(now() - chrono::TimeDelta::hours(1));
    let fresh = timestamp(now());
    for (conversation, run, beat) in [(dead, "run_dead", &old), (live, "run_live", &fresh)] {
        sqlx::query(
            "INSERT INTO runs (run_id, conversation_id, owner_id, status, node, \
             stop_requested, started_at, updated_at) \
             VALUES ($1, $2, 'own_l', 'running', 'another-process', 0, $3, $3)",
        )
        .bind(run)
        .bind(&conversation.id)
        .bind(beat)
        .execute(&pool)
        .await?;
    }
    let turn = |conversation: &crate::store::Conversation| {
        let user = Message::user(crate::store::new_row_id("msg"), "hi again");
        let reply = Message::assistant(crate::store::new_row_id("msg"));
        crate::store::Turn::new(conversation, false, &user, &reply, now())
    };
    let running = |conversation: &crate::store::Conversation| {
        let id = conversation.id.clone();
        let pool = pool.clone();
        async move {
            let rows: Vec<(String,)> = sqlx::query_as(
                "SELECT run_id FROM runs WHERE conversation_id = $1 AND status = 'running'",
            )
            .bind(&id)
            .fetch_all(&pool)
            .await?;
            Ok::<_, sqlx::Error>(rows.into_iter().map(|(id,)| id).collect::<Vec<_>>())
        }
    };

    let place = runs.reserve_existing("own_l", &free.id).await?;
    place.store_turn_leased(turn(free)).await??;
    assert_eq!(running(free).await?, vec![place.run().id().to_owned()]);
    assert_eq!(crate::store::messages(&pool, &free.id).await?.len(), 2);
    drop(place);

    let place = runs.reserve_existing("own_l", &dead.id).await?;
    place.store_turn_leased(turn(dead)).await??;
    assert_eq!(running(dead).await?, vec![place.run().id().to_owned()]);
    let (status,): (String,) = sqlx::query_as("SELECT status FROM runs WHERE run_id = 'run_dead'")
        .fetch_one(&pool)
        .await?;
    assert_eq!(status, "done", "the dead run is closed");
    assert_eq!(crate::store::messages(&pool, &dead.id).await?.len(), 2);
    drop(place);

    let refused = match runs.reserve_existing("own_l", &live.id).await {
        Ok(place) => place.store_turn_leased(turn(live)).await.err(),
        Err(error) => Some(error),
    };
    assert_eq!(
        refused,
        Some(ReserveError::Busy {
            running: Some("run_live".to_owned())
        })
    );
    assert_eq!(running(live).await?, vec!["run_live".to_owned()]);
    assert!(crate::store::messages(&pool, &live.id).await?.is_empty());
    Ok(())
}

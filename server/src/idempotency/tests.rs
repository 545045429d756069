//! Tests of `idempotency`.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::db::{self, test_db::TestDatabase};

const SCOPE: &str = "test_tool";

/// What a test returns: a failed step fails it with its error, through `?`.
type Outcome<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// 2026-11-29 12:00 UTC.
fn t0() -> DateTime<Utc> {
    DateTime::<Utc>::UNIX_EPOCH + chrono::TimeDelta::seconds(1_795_953_600)
}

/// A migrated test database (SQLite, or Postgres under `DATBAN_TEST_POSTGRES_URL`) with
/// a table the test effects write to.
async fn database() -> Outcome<(Pool, TestDatabase)> {
    let (pool, guard) = db::test_pool().await;
    sqlx::query("CREATE TABLE test_effects (id TEXT PRIMARY KEY NOT NULL, args TEXT NOT NULL)")
        .execute(&pool)
        .await?;
    Ok((pool, guard))
}

async fn effects(pool: &Pool) -> Outcome<i64> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM test_effects")
        .fetch_one(pool)
        .await?)
}

/// A request of the kind tools make: claim, then the effect and its record in one
/// transaction. Returns the result the caller would see and whether it ran.
async fn request(
    pool: &Pool,
    owner: &str,
    key: &str,
    args: Value,
    now: DateTime<Utc>,
) -> Outcome<(Result<Value, ToolError>, bool)> {
    let lease = match claim(pool, owner, SCOPE, key, &fingerprint(&args), now).await {
        Ok(Claim::Replay(result)) => return Ok((result, false)),
        Ok(Claim::Acquired(lease)) => lease,
        Err(ExecError::Tool(error)) => return Ok((Err(error), false)),
        Err(ExecError::Internal(details)) => panic!("{details}"),
    };
    let mut tx = db::begin_write(pool).await?;
    let id = uuid::Uuid::new_v4().to_string();
    sqlx::query("INSERT INTO test_effects (id, args) VALUES ($1, $2)")
        .bind(&id)
        .bind(args.to_string())
        .execute(&mut *tx)
        .await?;
    let result = Ok(json!({ "effect": id, "args": args }));
    lease.complete(&mut tx, &result).await?;
    tx.commit().await?;
    Ok((result, true))
}

fn code(result: &Result<Value, ToolError>) -> Option<ErrorCode> {
    result.as_ref().err().map(|error| error.code)
}

#[test]
fn fingerprints_ignore_key_order_but_not_values() {
    let a = json!({"b": 1, "a": {"y": [1, {"q": true, "p": null}], "x": "é"}});
    let b = json!({"a": {"x": "é", "y": [1, {"p": null, "q": true}]}, "b": 1});
    assert_eq!(fingerprint(&a), fingerprint(&b));
    assert_eq!(fingerprint(&a).len(), 64);
    assert!(fingerprint(&a).chars().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(fingerprint(&json!({"a": 1})), fingerprint(&json!({"a": 2})));
    assert_ne!(
        fingerprint(&json!({"a": 1})),
        fingerprint(&json!({"a": "1"}))
    );
    // Arrays keep their order: [1, 2] and [2, 1] are different requests.
    assert_ne!(fingerprint(&json!([1, 2])), fingerprint(&json!([2, 1])));
    // Known value: SHA-256 of `{"draft_id":"DR-1"}`.
    let mut expected = String::new();
    write_canonical(&json!({"draft_id": "DR-1"}), &mut expected);
    assert_eq!(expected, r#"{"draft_id":"DR-1"}"#);
}

#[tokio::test]
async fn same_key_and_arguments_run_once_and_replay_the_result() -> Outcome {
    let (pool, _db) = database().await?;
    let args = json!({"draft_id": "DR-1"});
    let (first, ran) = request(&pool, "alice", "key-0001", args.clone(), t0()).await?;
    assert!(ran);
    let later = t0() + TimeDelta::seconds(5);
    let (second, ran_again) = request(&pool, "alice", "key-0001", args, later).await?;
    assert!(!ran_again);
    assert_eq!(first, second);
    assert!(first.is_ok());
    assert_eq!(effects(&pool).await?, 1);
    Ok(())
}

#[tokio::test]
async fn same_key_with_other_arguments_is_refused() -> Outcome {
    let (pool, _db) = database().await?;
    let (first, _) = request(
        &pool,
        "alice",
        "key-0001",
        json!({"draft_id": "DR-1"}),
        t0(),
    )
    .await?;
    assert!(first.is_ok());
    let (other, ran) = request(
        &pool,
        "alice",
        "key-0001",
        json!({"draft_id": "DR-2"}),
        t0(),
    )
    .await?;
    assert!(!ran);
    let error = other.unwrap_err();
    assert_eq!(error.code, ErrorCode::IdempotencyKeyReused);
    assert!(!error.retryable);
    assert_eq!(effects(&pool).await?, 1);
    // peek sees the same.
    let peeked = peek(
        &pool,
        "alice",
        SCOPE,
        "key-0001",
        &fingerprint(&json!({"draft_id": "DR-2"})),
    )
    .await;
    assert!(matches!(peeked, Err(ExecError::Tool(e)) if e.code == ErrorCode::IdempotencyKeyReused));
    let peeked = peek(
        &pool,
        "alice",
        SCOPE,
        "key-0001",
        &fingerprint(&json!({"draft_id": "DR-1"})),
    )
    .await;
    assert!(matches!(peeked, Ok(Some(KeyState::Done))));
    let peeked = peek(&pool, "alice", SCOPE, "key-unused", "x").await;
    assert!(matches!(peeked, Ok(None)));
    Ok(())
}

#[tokio::test]
async fn keys_are_per_owner_and_scope() -> Outcome {
    let (pool, _db) = database().await?;
    let fp = fingerprint(&json!({"n": 1}));
    let a = claim(&pool, "alice", SCOPE, "key-0001", &fp, t0()).await?;
    let b = claim(&pool, "bob", SCOPE, "key-0001", &fp, t0()).await?;
    let c = claim(&pool, "alice", "other_tool", "key-0001", &fp, t0()).await?;
    for claimed in [a, b, c] {
        assert!(matches!(claimed, Claim::Acquired(_)), "{claimed:?}");
    }
    Ok(())
}

#[tokio::test]
async fn stored_failures_are_replayed() -> Outcome {
    let (pool, _db) = database().await?;
    let fp = fingerprint(&json!({"draft_id": "DR-404"}));
    let Claim::Acquired(lease) = claim(&pool, "alice", SCOPE, "key-0001", &fp, t0()).await? else {
        panic!("expected to acquire");
    };
    let failure = Err(ToolError::new(ErrorCode::NotFound, "no such draft"));
    let mut tx = db::begin_write(&pool).await?;
    lease.complete(&mut tx, &failure).await?;
    tx.commit().await?;
    let again = claim(&pool, "alice", SCOPE, "key-0001", &fp, t0()).await?;
    match again {
        Claim::Replay(replayed) => assert_eq!(replayed, failure),
        other => panic!("expected a replay, got {other:?}"),
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claims_of_one_key_acquire_once() -> Outcome {
    let (pool, _db) = database().await?;
    let barrier = Arc::new(tokio::sync::Barrier::new(50));
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let pool = pool.clone();
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                request(&pool, "alice", "key-race-1", json!({"n": 1}), t0()).await
            })
        })
        .collect();
    let mut ran = 0;
    let mut results = Vec::new();
    for task in tasks {
        let (result, did_run) = task.await??;
        ran += usize::from(did_run);
        results.push(result);
    }
    assert_eq!(ran, 1, "{results:?}");
    assert_eq!(effects(&pool).await?, 1);
    let winner = results
        .iter()
        .find(|r| r.is_ok())
        .cloned()
        .ok_or("no claim won")?;
    for result in &results {
        assert!(
            *result == winner || code(result) == Some(ErrorCode::IdempotencyKeyInUse),
            "{result:?}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn an_expired_lease_is_taken_over_and_the_old_holder_cannot_record() -> Outcome {
    let (pool, _db) = database().await?;
    let fp = fingerprint(&json!({"n": 1}));
    let Claim::Acquired(crashed) = claim(&pool, "alice", SCOPE, "key-0001", &fp, t0()).await?
    else {
        panic!("expected to acquire");
    };
    // Within the lease the key is busy, and retryably so.
    let busy = claim(
        &pool,
        "alice",
        SCOPE,
        "key-0001",
        &fp,
        t0() + TimeDelta::seconds(29),
    )
    .await;
    match busy {
        Err(ExecError::Tool(error)) => {
            assert_eq!(error.code, ErrorCode::IdempotencyKeyInUse);
            assert!(error.retryable);
        }
        other => panic!("expected IN_USE, got {other:?}"),
    }
    assert!(matches!(
        peek(&pool, "alice", SCOPE, "key-0001", &fp).await,
        Ok(Some(KeyState::Running))
    ));
    // After it, the next request takes the key over.
    let later = t0() + TimeDelta::seconds(LEASE_SECONDS + 1);
    let Claim::Acquired(taker) = claim(&pool, "alice", SCOPE, "key-0001", &fp, later).await? else {
        panic!("expected a takeover");
    };
    // The first holder was only slow: it may not record a result any more.
    let mut tx = db::begin_write(&pool).await?;
    let lost = crashed.complete(&mut tx, &Ok(json!("old"))).await;
    assert!(matches!(lost, Err(ExecError::Tool(e)) if e.code == ErrorCode::IdempotencyKeyInUse));
    tx.rollback().await?;
    // Nor free the key under the new holder.
    crashed.release(&pool).await?;
    let busy = claim(&pool, "alice", SCOPE, "key-0001", &fp, later).await;
    assert!(matches!(busy, Err(ExecError::Tool(e)) if e.code == ErrorCode::IdempotencyKeyInUse));

    let mut tx = db::begin_write(&pool).await?;
    taker.complete(&mut tx, &Ok(json!("new"))).await?;
    tx.commit().await?;
    match claim(&pool, "alice", SCOPE, "key-0001", &fp, later).await? {
        Claim::Replay(result) => assert_eq!(result, Ok(json!("new"))),
        other => panic!("expected a replay, got {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn release_frees_the_key_for_a_retry() -> Outcome {
    let (pool, _db) = database().await?;
    let fp = fingerprint(&json!({"n": 1}));
    let Claim::Acquired(lease) = claim(&pool, "alice", SCOPE, "key-0001", &fp, t0()).await? else {
        panic!("expected to acquire");
    };
    lease.release(&pool).await?;
    assert!(matches!(
        peek(&pool, "alice", SCOPE, "key-0001", &fp).await,
        Ok(None)
    ));
    let (result, ran) = request(&pool, "alice", "key-0001", json!({"n": 1}), t0()).await?;
    assert!(ran && result.is_ok());
    // Releasing after completion changes nothing.
    let Claim::Replay(replayed) = claim(&pool, "alice", SCOPE, "key-0001", &fp, t0()).await? else {
        panic!("expected a replay");
    };
    assert_eq!(replayed, result);
    Ok(())
}

#[tokio::test]
async fn a_rolled_back_effect_leaves_no_result() -> Outcome {
    let (pool, _db) = database().await?;
    let fp = fingerprint(&json!({"n": 1}));
    let Claim::Acquired(lease) = claim(&pool, "alice", SCOPE, "key-0001", &fp, t0()).await? else {
        panic!("expected to acquire");
    };
    let mut tx = db::begin_write(&pool).await?;
    sqlx::query("INSERT INTO test_effects (id, args) VALUES ('e1', '{}')")
        .execute(&mut *tx)
        .await?;
    lease.complete(&mut tx, &Ok(json!(1))).await?;
    // The process dies before committing: neither the effect nor the record exists.
    tx.rollback().await?;
    drop(lease);
    assert_eq!(effects(&pool).await?, 0);
    assert!(matches!(
        peek(&pool, "alice", SCOPE, "key-0001", &fp).await,
        Ok(Some(KeyState::Running))
    ));
    let later = t0() + TimeDelta::seconds(LEASE_SECONDS + 1);
    let (result, ran) = request(&pool, "alice", "key-0001", json!({"n": 1}), later).await?;
    assert!(ran && result.is_ok());
    assert_eq!(effects(&pool).await?, 1);
    Ok(())
}

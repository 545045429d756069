//! The database backend. Runs on SQLite by default and on PostgreSQL when
//! `DATBAN_TEST_POSTGRES_URL` is set (`cargo xtask test` does both): the backend in use must
//! be the one asked for, so a silent fallback to SQLite fails the suite, and two server
//! replicas sharing one database must not oversell a slot.

mod support;

use serde_json::json;
use server::{
    agent::AgentConfig,
    db::{self, Backend},
};
use support::{spawn_app_on, test_database_url, test_db::postgres_admin_url, test_pool};

#[tokio::test]
async fn the_backend_in_use_is_the_one_asked_for() {
    let (pool, _db) = test_pool().await;
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
    .await
    .unwrap();
    match asked {
        Backend::Postgres => assert!(version.starts_with("PostgreSQL"), "{version}"),
        Backend::Sqlite => assert!(version.starts_with("3."), "{version}"),
    }
}

#[tokio::test]
async fn migrations_run_once_however_many_servers_start() {
    let (url, _db) = test_database_url().await;
    let pools: Vec<db::Pool> = if postgres_admin_url().is_some() {
        // Replicas start together; sqlx's advisory lock lets one migrate, the others wait.
        futures::future::try_join_all((0..3).map(|_| db::connect(&url)))
            .await
            .unwrap()
    } else {
        // A SQLite file belongs to one process: its migrator takes no lock.
        let mut pools = Vec::new();
        for _ in 0..3 {
            pools.push(db::connect(&url).await.unwrap());
        }
        pools
    };
    let applied: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
        .fetch_one(&pools[0])
        .await
        .unwrap();
    let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations"))
        .unwrap()
        .count();
    assert_eq!(applied, i64::try_from(files).unwrap());
    let restaurants: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM restaurants")
        .fetch_one(&pools[2])
        .await
        .unwrap();
    assert_eq!(restaurants, 48, "the seed ran once");
}

#[tokio::test]
async fn two_replicas_sharing_a_database_never_oversell_a_slot() {
    let (url, _db) = test_database_url().await;
    let a = spawn_app_on(url.clone(), AgentConfig::default()).await;
    let mut b = spawn_app_on(url, AgentConfig::default()).await;
    // One person on both replicas: cookies are per host, not port, and both sign with the
    // key kept in the shared database.
    b.client = a.client.clone();

    let mut calls = Vec::new();
    for _ in 0..8 {
        let search = a.chat(None, "Tìm nhà hàng chả cá ở Hà Nội").await;
        let conversation = search.conversation_id();
        let booking = a
            .chat(
                Some(&conversation),
                "Đặt bàn ở Chả Cá Thăng Long cho 4 người tối mai lúc 19:00",
            )
            .await;
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
    let replies = futures::future::join_all(decisions).await;
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
            .await,
        40
    );
    assert_eq!(a.count("SELECT COUNT(*) FROM bookings").await, 8);
}

//! One full offline-model conversation (weather → search → booking request) through the
//! agent loop without HTTP. Prints runs per second and the loop's own cost per step:
//! everything but the model (validation, reducer, tool execution, persistence).
//!
//! `cargo bench -p server --bench agent_loop`

use std::{
    hint::black_box,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use chrono::{FixedOffset, TimeZone, Utc};
use futures::stream;
use server::{
    agent::{Agent, AgentConfig, Clock},
    db,
    model::{offline::OfflineModel, ModelProvider, ModelRequest, TurnStream},
    store,
};
use shared::message::Message;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The offline model, with the time spent planning its turns measured so it can be
/// subtracted from the total.
struct Timed {
    inner: OfflineModel,
    nanos: Arc<AtomicU64>,
}

impl ModelProvider for Timed {
    fn stream_turn(&self, request: ModelRequest) -> TurnStream {
        let started = Instant::now();
        let events = self.inner.plan_turn(&request);
        self.nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Box::pin(stream::iter(events.into_iter().map(Ok)))
    }
}

const SCRIPT: [&str; 3] = [
    "Thời tiết Hà Nội hôm nay thế nào?",
    "Tìm nhà hàng chả cá ở Hà Nội",
    "Đặt bàn ở Chả Cá Thăng Long cho 4 người tối mai lúc 19:00",
];

async fn conversation(agent: &Agent) -> usize {
    let now = (agent.clock)();
    let conv = store::create_conversation(&agent.db, "own_bench", "restaurant", now)
        .await
        .unwrap();
    let mut steps = 0;
    for text in SCRIPT {
        let user = Message::user(store::new_id("msg"), text);
        store::append_message(&agent.db, &conv.id, &user, now)
            .await
            .unwrap();
        let assistant = Message::assistant(store::new_id("msg"));
        store::append_message(&agent.db, &conv.id, &assistant, now)
            .await
            .unwrap();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let tx = tx.into();
        agent
            .run(
                "own_bench",
                &conv.id,
                assistant,
                tx,
                CancellationToken::new(),
            )
            .await;
        while let Ok(event) = rx.try_recv() {
            if matches!(event, shared::events::AgentEvent::StartStep) {
                steps += 1;
            }
            black_box(event);
        }
    }
    steps
}

async fn measure(label: &str, url: &str) {
    let pool = db::connect(url).await.unwrap();
    let now = Utc.with_ymd_and_hms(2026, 11, 29, 3, 0, 0).unwrap();
    let clock: Clock = Arc::new(move || now);
    let nanos = Arc::new(AtomicU64::new(0));
    let provider = Timed {
        inner: OfflineModel::new(Duration::ZERO)
            .with_now(now.with_timezone(&FixedOffset::east_opt(7 * 3600).unwrap())),
        nanos: nanos.clone(),
    };
    let agent = Agent {
        db: pool,
        provider: Arc::new(provider),
        config: AgentConfig::default(),
        clock,
        upstreams: Default::default(),
    };
    // Warm up caches (validators, schemas, prepared statements, page cache).
    for _ in 0..5 {
        conversation(&agent).await;
    }
    nanos.store(0, Ordering::Relaxed);
    let runs: usize = std::env::var("DATBAN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let started = Instant::now();
    let mut steps = 0;
    for _ in 0..runs {
        steps += conversation(&agent).await;
    }
    let total = started.elapsed();
    let model = Duration::from_nanos(nanos.load(Ordering::Relaxed));
    let per_step = |d: Duration| d.as_secs_f64() * 1e6 / steps as f64;
    println!("agent loop, offline model, {label}: {runs} conversations of 3 runs ({steps} steps)");
    println!(
        "  conversations per second: {:.1}",
        runs as f64 / total.as_secs_f64()
    );
    println!(
        "  agent runs per second:    {:.1}",
        (runs * 3) as f64 / total.as_secs_f64()
    );
    println!("  per step, total:          {:.1} µs", per_step(total));
    println!("  per step, model:          {:.1} µs", per_step(model));
    println!(
        "  per step, loop (everything but the model, SQL included): {:.1} µs",
        per_step(total.saturating_sub(model))
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let file = format!("sqlite://{}", dir.path().join("bench.db").display());
        measure("SQLite file (WAL)", &file).await;
        // The same SQL without the file system, to tell the loop's cost from disk writes.
        measure(
            "SQLite in memory",
            "sqlite:file:datban-bench?mode=memory&cache=shared",
        )
        .await;
    });
}

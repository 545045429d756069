//! One full offline-model conversation (weather → search → booking request) through the
//! agent loop and the run registry as the server runs it, without HTTP. Prints runs per second and the loop's own cost per step:
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
use futures::StreamExt;
use server::{
    agent::{Agent, AgentConfig, Clock, Known},
    db,
    model::{offline::OfflineModel, ModelProvider, ModelRequest, TurnStream},
    runs::Runs,
    store,
};
use shared::{message::Message, tools::Assistant};

// The server binary's allocator (server/src/main.rs), so the loop costs here what it
// costs in the server: the C library's malloc made a step's many small allocations about
// a fifth of the instructions measured.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// One conversation the way the server runs it: each turn stored by the run registry's
/// writer, the loop on its own task with its events going to the run's log, and the run
/// over once its end is stored (a subscriber's stream ends then).
async fn conversation(agent: &Arc<Agent>, runs: &Runs) -> usize {
    let now = (agent.clock)();
    let conversation = store::Conversation {
        id: store::new_row_id("conv"),
        // An owner per conversation: a person may have only a few replies at once.
        owner_id: store::new_row_id("own"),
        assistant: shared::tools::Assistant::Restaurant,
    };
    let mut steps = 0;
    for (turn, text) in SCRIPT.into_iter().enumerate() {
        let created = turn == 0;
        // As the chat handler does: a new conversation's place, or for a later turn the
        // conversation found by its id, its place (the lease taken with the turn on SQLite,
        // before it on PostgreSQL) and its messages read once for the run.
        let (reservation, mut earlier) = if created {
            let reservation = runs
                .reserve_unstored(&conversation.owner_id, &conversation.id)
                .await
                .unwrap();
            (reservation, Vec::new())
        } else {
            // The handler first finds the person's conversation by the id they sent.
            let found =
                store::find_conversation(&agent.reads, &conversation.id, &conversation.owner_id)
                    .await
                    .unwrap();
            assert!(found.is_some(), "the conversation's first turn is stored");
            let reservation = runs
                .reserve_existing(&conversation.owner_id, &conversation.id)
                .await
                .unwrap();
            let history =
                store::turn_history(&agent.reads, &conversation.id, &conversation.owner_id, now)
                    .await
                    .unwrap();
            assert!(
                !history.open_calls,
                "the script leaves no form open mid-way"
            );
            (reservation, history.messages)
        };
        let user = Message::user(store::new_row_id("msg"), text);
        let reply = Message::assistant(store::new_row_id("msg"));
        reservation
            .store_turn_leased(store::Turn::new(&conversation, created, &user, &reply, now))
            .await
            .unwrap()
            .unwrap();
        earlier.push(user);
        let known = Known {
            assistant: Assistant::Restaurant,
            earlier: Some(earlier),
        };
        let (agent, id) = (Arc::clone(agent), conversation.id.clone());
        let owner = conversation.owner_id.clone();
        let run = reservation.start(move |tx, cancel, last| async move {
            agent
                .run_known(&owner, &id, Some(known), reply, tx, cancel, Some(last))
                .await;
        });
        let events: Vec<Arc<str>> = run.subscribe(0).collect().await;
        steps += events
            .iter()
            .filter(|data| data.contains(r#""type":"start-step""#))
            .count();
        black_box(events);
    }
    steps
}

/// CPU time this process has used, all threads (the SQLite workers' too, and any that
/// ended), to the nanosecond: `/proc/self/stat` counts in 10 ms ticks, which is ±5 % of
/// a 16-at-a-time batch.
fn process_cpu() -> Option<Duration> {
    cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time of the calling thread: here the runtime's only thread, where every run's
/// loop, the storer's task and the model run, so the rest of the process's CPU is sqlx's
/// SQLite threads (statements, commits, and their side of each hand-off).
fn thread_cpu() -> Option<Duration> {
    cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn cpu_clock(clock: libc::clockid_t) -> Option<Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; the call writes only into it.
    let status = unsafe { libc::clock_gettime(clock, &mut now) };
    if status != 0 {
        return None;
    }
    Some(Duration::new(
        u64::try_from(now.tv_sec).ok()?,
        u32::try_from(now.tv_nsec).ok()?,
    ))
}

/// CPU a batch used: the whole process's, and the runtime thread's share of it.
struct Cpu {
    process: Duration,
    runtime_thread: Duration,
}

/// `conversations` conversations, `at_once` at a time; (steps, wall time, CPU time).
async fn batch(
    agent: &Arc<Agent>,
    registry: &Runs,
    conversations: usize,
    at_once: usize,
) -> (usize, Duration, Option<Cpu>) {
    let cpu = process_cpu().zip(thread_cpu());
    let started = Instant::now();
    let steps: usize = stream::iter(0..conversations)
        .map(|_| conversation(agent, registry))
        .buffer_unordered(at_once)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .sum();
    let wall = started.elapsed();
    let cpu = cpu.zip(process_cpu().zip(thread_cpu())).map(
        |((process, thread), (process_after, thread_after))| Cpu {
            process: process_after - process,
            runtime_thread: thread_after - thread,
        },
    );
    (steps, wall, cpu)
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
    let registry = Runs::new(pool.clone());
    let agent = Arc::new(Agent {
        reads: db::readers(&pool).await,
        db: pool,
        provider: Arc::new(provider),
        config: AgentConfig::default(),
        clock,
        upstreams: Default::default(),
        catalogue: Default::default(),
    });
    // Warm up caches (validators, schemas, prepared statements, page cache).
    for _ in 0..5 {
        conversation(&agent, &registry).await;
    }
    nanos.store(0, Ordering::Relaxed);
    let runs: usize = std::env::var("DATBAN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    // `DATBAN_BENCH_AT_ONCE_ONLY=1` skips the one-at-a-time pass, for a profile of the
    // busy server's steps alone.
    let busy_only = std::env::var_os("DATBAN_BENCH_AT_ONCE_ONLY").is_some();
    let (steps, total, cpu) = batch(&agent, &registry, if busy_only { 0 } else { runs }, 1).await;
    assert!(
        busy_only || steps > 0,
        "no step was counted: the events' format changed?"
    );
    let model = Duration::from_nanos(nanos.swap(0, Ordering::Relaxed));
    let per_step = |d: Duration, steps: usize| d.as_secs_f64() * 1e6 / steps as f64;
    println!("agent loop, offline model, {label}: {runs} conversations of 3 runs ({steps} steps)");
    println!("  one conversation at a time (latency: each step waits for its commit)");
    println!(
        "    conversations per second: {:.1}",
        runs as f64 / total.as_secs_f64()
    );
    println!(
        "    agent runs per second:    {:.1}",
        (runs * 3) as f64 / total.as_secs_f64()
    );
    println!(
        "    per step, wall:           {:.1} µs",
        per_step(total, steps)
    );
    println!(
        "    per step, model:          {:.1} µs",
        per_step(model, steps)
    );
    println!(
        "    per step, loop wall (everything but the model, SQL and commits included): {:.1} µs",
        per_step(total.saturating_sub(model), steps)
    );
    if let Some(cpu) = cpu {
        println!(
            "    per step, loop CPU (all threads, the model's time taken out): {:.1} µs",
            per_step(cpu.process.saturating_sub(model), steps)
        );
    }
    // Many conversations at once, as a busy server has them: commits are shared by
    // every run writing at that moment (group commit), so this is what a step costs.
    let at_once = 16;
    let (steps, total, cpu) = batch(&agent, &registry, runs, at_once).await;
    let model = Duration::from_nanos(nanos.swap(0, Ordering::Relaxed));
    println!("  {at_once} conversations at a time ({steps} steps)");
    println!(
        "    agent runs per second:    {:.1}",
        (runs * 3) as f64 / total.as_secs_f64()
    );
    println!(
        "    per step, loop wall:      {:.1} µs",
        per_step(total.saturating_sub(model), steps)
    );
    if let Some(cpu) = cpu {
        println!(
            "    per step, loop CPU:       {:.1} µs",
            per_step(cpu.process.saturating_sub(model), steps)
        );
        // Where a step's CPU goes: the loop's own work (events, validation, the reducer,
        // tools, serialising, the storer's task) against what SQLite does on its threads.
        // Neither half alone fits in the whole step's target.
        println!(
            "      of which the runtime thread (the loop, its tools and the storer, the model taken out): {:.1} µs",
            per_step(cpu.runtime_thread.saturating_sub(model), steps)
        );
        println!(
            "      of which sqlx's SQLite threads (statements, commits, their side of each hand-off): {:.1} µs",
            per_step(cpu.process.saturating_sub(cpu.runtime_thread), steps)
        );
    }
}

async fn select_one(conn: &mut sqlx::AnyConnection) {
    let one: i64 = sqlx::query_scalar("SELECT 1")
        .fetch_one(conn)
        .await
        .unwrap();
    black_box(one);
}

/// CPU for `SELECT 1` N times through `source`, each taking a connection and giving it
/// back.
async fn one_by_one(source: impl db::Source) -> Option<Duration> {
    const N: u32 = 5_000;
    let cpu = process_cpu();
    for _ in 0..N {
        let one: i64 = sqlx::query_scalar("SELECT 1")
            .fetch_one(source)
            .await
            .unwrap();
        black_box(one);
    }
    cpu.zip(process_cpu()).map(|(before, after)| after - before)
}

/// What one statement costs before it does anything: `SELECT 1` sent to sqlx's SQLite
/// driver, which runs every connection on a thread of its own, so each query is a
/// hand-over to that thread and back. The floor under a step's storage: a step that
/// stores or reads anything pays at least one.
async fn round_trips(pool: &db::Pool, reads: &db::Reads) {
    const N: u32 = 5_000;
    let per_query = |cpu: Option<Duration>| {
        cpu.map_or("-".to_owned(), |cpu| {
            format!("{:.1} µs", cpu.as_secs_f64() * 1e6 / f64::from(N))
        })
    };
    let mut held = reads.acquire().await.unwrap();
    for _ in 0..500 {
        select_one(&mut held).await;
    }
    let cpu = process_cpu();
    for _ in 0..N {
        select_one(&mut held).await;
    }
    let on_held = cpu.zip(process_cpu()).map(|(before, after)| after - before);
    drop(held);
    let through = [one_by_one(reads).await, one_by_one(pool).await];
    println!("  one query's round trip to sqlx's SQLite thread (SELECT 1), CPU, all threads");
    println!("    round trip, connection held: {}", per_query(on_held));
    println!(
        "    round trip, through the read connections: {}",
        per_query(through[0])
    );
    println!(
        "    round trip, through the writer's pool: {}",
        per_query(through[1])
    );
}

fn main() {
    // As the server's main does (server/src/main.rs): mimalloc would otherwise fault in
    // 2 MiB pages, and zeroing them was 4 % of a step's CPU here and nothing in the server.
    server::serve::small_pages_only();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let file = format!("sqlite://{}", dir.path().join("bench.db").display());
        measure("SQLite file (WAL)", &file).await;
        {
            let pool = db::connect(&file).await.unwrap();
            let reads = db::readers(&pool).await;
            round_trips(&pool, &reads).await;
        }
        if std::env::var_os("DATBAN_BENCH_AT_ONCE_ONLY").is_some() {
            return;
        }
        // The same SQL without the file system, to tell the loop's cost from disk writes.
        measure(
            "SQLite in memory",
            "sqlite:file:datban-bench?mode=memory&cache=shared",
        )
        .await;
    });
}

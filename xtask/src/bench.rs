//! `cargo xtask bench [--peer | --quick]`: the release server under load, pinned to one core, with
//! the load generator on the other, and the figures set against the targets of issue 10.
//!
//! Everything is measured in one sitting so that ratios against the peer (an AI SDK 7
//! server, `--peer`) compare like with like on the same machine. Missed targets are
//! reported, never fatal: this is a benchmark. A reply that fails its checks is fatal,
//! after the table: figures from broken replies mean nothing.

mod approvals;
mod load;
mod micro;
mod peer;
mod report;
mod server;
mod sse;
mod sys;

use std::{
    net::SocketAddr,
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use crate::{
    cmd::{self, Failure},
    postgres, site, Workspace,
};
use load::{OpenReplies, Window};
use server::Server;

/// The core the load generator runs on (servers take [`server::SERVER_CORE`]).
const LOAD_CORE: usize = 1;
const CONCURRENCY: [usize; 3] = [1, 16, 64];
const WARMUP: Duration = Duration::from_secs(1);
const WINDOW: Duration = Duration::from_secs(4);
/// Replies held open at once for the memory figure.
const OPEN_REPLIES: [usize; 2] = [1_000, 10_000];
/// The offline model's pause per token while replies are held open: long enough that
/// none finishes while the others are being opened.
const SLOW_TOKEN_DELAY_MS: u64 = 2000;
/// People approving their booking forms at the same moment, and how many times.
const APPROVERS: usize = 100;
const APPROVAL_ROUNDS: usize = 3;
/// How long opening K replies may take before the rest count as failed.
const OPEN_DEADLINE: Duration = Duration::from_secs(120);
/// Open files wanted per process (the generator's end of the held-open sockets, and the
/// server's, which inherits the limit); the hard limit may cap it.
const OPEN_FILES: u64 = 65_536;

/// The figures of one server.
pub struct Measured {
    pub label: String,
    pub windows: Vec<Window>,
    pub open: Vec<OpenReplies>,
    /// [`APPROVERS`] people approving at once (datban's servers only: the peer has no
    /// approvals to take).
    pub approvals: Option<approvals::Approvals>,
    /// Names the processes whose CPU each window's `cpu_seconds` holds, after the server.
    pub extra_cpu: Option<&'static str>,
    /// Whether replies it could not hold open invalidate the run. Not for the peer: how
    /// many streams it can hold is one of its figures, not a fault of the benchmark.
    pub open_failures_fatal: bool,
}

impl Measured {
    fn fatal_failures(&self) -> u64 {
        let open: u64 = self.open.iter().map(|o| o.failures.total).sum();
        // An approval that did not end in a booking is what the store must never do.
        let approvals = self.approvals.as_ref().map_or(0, |a| a.failures.total);
        self.windows.iter().map(|w| w.failures.total).sum::<u64>()
            + approvals
            + if self.open_failures_fatal { open } else { 0 }
    }
}

/// Set in the release-built xtask that does the measuring; see [`command`].
const GENERATOR_ENV: &str = "DATBAN_BENCH_GENERATOR";

/// A server binary to measure instead of building this tree's: two builds (before and
/// after a change) measured one after the other in one sitting, on the same load.
const SERVER_ENV: &str = "DATBAN_BENCH_SERVER";

pub fn command(ws: &Workspace, args: &[String]) -> Result<(), Failure> {
    // `--quick`: only the SQLite windows, no micro benchmarks, held-open replies or
    // PostgreSQL; for a before/after while working on the hot path, or to `perf record`
    // the server under load.
    let (with_peer, quick) = match args {
        [] => (false, false),
        [flag] if flag == "--peer" => (true, false),
        [flag] if flag == "--quick" => (false, true),
        _ => {
            return Err(Failure::new(format!(
                "unexpected arguments {args:?}: `cargo xtask bench [--peer | --quick]`"
            )))
        }
    };
    // `cargo xtask` is a debug build; the load generator checks every event of every run on
    // its own core, so it measures from a release build of itself and stays cheap next to
    // the server it loads.
    if cfg!(debug_assertions) && std::env::var_os(GENERATOR_ENV).is_none() {
        cmd::step("xtask build (release), to generate the load");
        cmd::run(cmd::cargo(ws).args(["build", "--release", "--package", "xtask"]))?;
        return cmd::run(
            Command::new(ws.target.join("release").join("xtask"))
                .arg("bench")
                .args(args)
                .env(GENERATOR_ENV, "1")
                .current_dir(&ws.root),
        )
        .map_err(|_| Failure::new("the benchmark failed (see above)"));
    }
    for tool in ["taskset", "prlimit"] {
        if cmd::output(Command::new("which").arg(tool)).is_none() {
            return Err(Failure::new(format!(
                "`{tool}` (util-linux) is needed to pin the servers and raise the open-files \
                 limit; it is in Debian's util-linux package"
            )));
        }
    }
    // Everything that compiles or installs runs before the pinning, on both cores.
    let peer = if with_peer {
        Some(peer::prepare(ws)?)
    } else {
        None
    };
    let binary = match std::env::var_os(SERVER_ENV).filter(|path| !path.is_empty()) {
        Some(path) => {
            let path = std::path::PathBuf::from(path);
            if !path.is_file() {
                return Err(Failure::new(format!(
                    "{SERVER_ENV}={}: no such file",
                    path.display()
                )));
            }
            path
        }
        None => site::build_server(ws, true)?,
    };
    let floor = if quick { None } else { Some(build_floor(ws)?) };
    if quick {
        sys::pin_self(LOAD_CORE)?;
        let server = start_datban(ws, &binary, "sqlite-quick", None, 0)?;
        let pid = server.pid;
        println!("bench: server pid {pid}");
        let ticks = sys::clock_ticks();
        let probe = move || vec![sys::cpu_ticks(pid).unwrap_or(0) as f64 / ticks];
        let windows = run_windows(&server, &probe);
        for (c, window) in CONCURRENCY.iter().zip(&windows) {
            println!(
                "bench: C={c:>2}: server CPU per run {}",
                window
                    .cpu_per_run_us(0)
                    .map_or("-".to_owned(), |us| format!("{us:.0} µs"))
            );
        }
        let failed: u64 = windows.iter().map(|w| w.failures.total).sum();
        return if failed > 0 {
            Err(Failure::new(format!("{failed} replies failed")))
        } else {
            Ok(())
        };
    }
    let micro = micro::run(ws)?;

    let machine = match sys::load_average() {
        Some(load) => format!(
            "{}, load average {load:.2} when measuring began",
            sys::machine()
        ),
        None => sys::machine(),
    };
    let date =
        cmd::output(Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"])).unwrap_or_default();
    let open_files = sys::raise_open_files(OPEN_FILES);
    sys::pin_self(LOAD_CORE)?;

    cmd::step("datban, SQLite file: runs at C=1/16/64, then replies held open");
    let datban = datban_sqlite(ws, &binary, open_files)?;
    let floor = match &floor {
        Some(program) => {
            cmd::step("the floor: the same accept loop and allocator, an app that only holds replies open");
            Some(measure_floor(program, open_files)?)
        }
        None => None,
    };
    cmd::step("datban, PostgreSQL (a throwaway cluster on the server's core)");
    let postgres = match datban_postgres(ws, &binary) {
        Ok(measured) => Some(measured),
        Err(failure) => {
            println!("bench: PostgreSQL not measured: {failure}");
            None
        }
    };
    let peer = match &peer {
        Some(peer) => {
            cmd::step("the peer: AI SDK 7 on Node 22, the same workload");
            Some(peer::measure(peer, open_files)?)
        }
        None => None,
    };

    let context = report::Context {
        date,
        machine,
        micro,
        open_files,
    };
    report::print(
        &context,
        &datban,
        postgres.as_ref(),
        peer.as_ref(),
        floor.as_ref(),
    );

    let failed: u64 = [
        Some(&datban),
        postgres.as_ref(),
        peer.as_ref(),
        floor.as_ref(),
    ]
    .into_iter()
    .flatten()
    .map(Measured::fatal_failures)
    .sum();
    if failed > 0 {
        return Err(Failure::new(format!(
            "{failed} replies failed (causes listed above); the figures are not valid"
        )));
    }
    Ok(())
}

/// The environment of a datban server under load.
fn datban_env(
    ws: &Workspace,
    addr: SocketAddr,
    database_url: &str,
    delay_ms: u64,
) -> Vec<(&'static str, String)> {
    vec![
        ("LEPTOS_OUTPUT_NAME", site::OUTPUT_NAME.to_owned()),
        ("LEPTOS_SITE_ROOT", ws.site_root().display().to_string()),
        ("LEPTOS_SITE_PKG_DIR", "pkg".to_owned()),
        ("LEPTOS_SITE_ADDR", addr.to_string()),
        ("LEPTOS_ENV", "PROD".to_owned()),
        ("DATABASE_URL", database_url.to_owned()),
        ("DATBAN_PROVIDER", "offline".to_owned()),
        ("DATBAN_OFFLINE_TOKEN_DELAY_MS", delay_ms.to_string()),
        ("DATBAN_RATE_PER_MINUTE", "0".to_owned()),
        // The server's maximum; each virtual client runs one reply at a time anyway.
        ("DATBAN_MAX_RUNS_PER_OWNER", "1000".to_owned()),
        // Every load connection comes from 127.0.0.1; thousands are held open on purpose.
        ("DATBAN_MAX_CONNECTIONS_PER_ADDRESS", "0".to_owned()),
        ("RUST_LOG", "warn".to_owned()),
    ]
}

fn start_datban(
    ws: &Workspace,
    binary: &Path,
    label: &str,
    database_url: Option<&str>,
    delay_ms: u64,
) -> Result<Server, Failure> {
    let dir = server::temp_dir(label)?;
    let addr = server::free_addr()?;
    let sqlite = format!("sqlite://{}", dir.join("bench.db").display());
    let env = datban_env(ws, addr, database_url.unwrap_or(&sqlite), delay_ms);
    Server::start(label, binary, &[], &env, addr, dir)
}

fn datban_sqlite(ws: &Workspace, binary: &Path, open_files: u64) -> Result<Measured, Failure> {
    measure_alone(
        "datban, SQLite file",
        open_files,
        true,
        true,
        |label, delay_ms| start_datban(ws, binary, &format!("sqlite-{label}"), None, delay_ms),
    )
}

/// The windows of a server that is alone on its core (its own CPU is all there is to
/// count), then, on a fresh slow server for each K, the replies held open.
/// `start(label, token_delay_ms)` starts one server.
fn measure_alone(
    label: &str,
    open_files: u64,
    open_failures_fatal: bool,
    with_approvals: bool,
    start: impl Fn(&str, u64) -> Result<Server, Failure>,
) -> Result<Measured, Failure> {
    let server = start("fast", 0)?;
    let pid = server.pid;
    let ticks = sys::clock_ticks();
    let probe = move || vec![sys::cpu_ticks(pid).unwrap_or(0) as f64 / ticks];
    let windows = run_windows(&server, &probe);
    let approvals = with_approvals.then(|| approve_at_once(&server, &probe));
    drop(server);

    let mut open = Vec::new();
    for k in OPEN_REPLIES {
        let Some(k) = fit_open_files(k, open_files) else {
            continue;
        };
        let server = start("open", SLOW_TOKEN_DELAY_MS)?;
        open.push(hold_open(&server, k));
    }
    Ok(Measured {
        label: label.to_owned(),
        windows,
        open,
        approvals,
        extra_cpu: None,
        open_failures_fatal,
    })
}

/// Builds `server/examples/open_floor.rs` (release), the control for memory per open
/// reply: what hyper, axum and tokio hold for a reply, with none of datban's own state.
fn build_floor(ws: &Workspace) -> Result<std::path::PathBuf, Failure> {
    cmd::step("the floor's build (release)");
    cmd::run(cmd::cargo(ws).args([
        "build",
        "--release",
        "--package",
        "server",
        "--example",
        "open_floor",
    ]))?;
    Ok(ws
        .target
        .join("release")
        .join("examples")
        .join("open_floor"))
}

/// Replies held open on the floor, at each K, one fresh process per K as for datban.
fn measure_floor(program: &Path, open_files: u64) -> Result<Measured, Failure> {
    let mut open = Vec::new();
    for k in OPEN_REPLIES {
        let Some(k) = fit_open_files(k, open_files) else {
            continue;
        };
        let dir = server::temp_dir("floor")?;
        let addr = server::free_addr()?;
        let floor = Server::start("floor", program, &[&addr.to_string()], &[], addr, dir)?;
        open.push(hold_open(&floor, k));
    }
    Ok(Measured {
        label: "floor (hyper + axum + tokio alone)".to_owned(),
        windows: Vec::new(),
        open,
        approvals: None,
        extra_cpu: None,
        open_failures_fatal: true,
    })
}

fn datban_postgres(ws: &Workspace, binary: &Path) -> Result<Measured, Failure> {
    let bin = postgres::ensure_binaries()?;
    // The cluster's processes inherit the pinning of the process that starts them: the
    // database shares the server's core, as SQLite does inside the server's process.
    sys::pin_self(server::SERVER_CORE)?;
    let cluster = postgres::Cluster::start(&bin);
    sys::pin_self(LOAD_CORE)?;
    let cluster = cluster?;
    let postmaster = cluster
        .postmaster_pid()
        .ok_or_else(|| Failure::new("cannot read the cluster's postmaster.pid"))?;
    let server = start_datban(ws, binary, "postgres", Some(&cluster.admin_url()), 0)?;
    let pid = server.pid;
    let ticks = sys::clock_ticks();
    let probe = move || {
        let database: u64 = sys::with_children(postmaster)
            .into_iter()
            .filter_map(sys::cpu_ticks)
            .sum();
        vec![
            sys::cpu_ticks(pid).unwrap_or(0) as f64 / ticks,
            database as f64 / ticks,
        ]
    };
    let windows = run_windows(&server, &probe);
    if windows.iter().any(|w| w.failures.total > 0) {
        server.print_log_tail();
    }
    let approvals = approve_at_once(&server, &probe);
    drop(server);
    drop(cluster);
    Ok(Measured {
        label: "datban, PostgreSQL".to_owned(),
        windows,
        open: Vec::new(),
        approvals: Some(approvals),
        extra_cpu: Some("postgres"),
        open_failures_fatal: true,
    })
}

/// [`APPROVERS`] people approving at once, [`APPROVAL_ROUNDS`] times, against a running
/// server.
fn approve_at_once(server: &Server, probe: &(dyn Fn() -> Vec<f64> + Sync)) -> approvals::Approvals {
    let approvals = approvals::at_once(server.addr, APPROVERS, APPROVAL_ROUNDS, probe);
    for (i, round) in approvals.rounds.iter().enumerate() {
        println!(
            "bench: {APPROVERS} approvals at once, round {}: {} confirmed, {} waitlisted, the last after {}, server CPU {}",
            i + 1,
            round.confirmed,
            round.waitlisted,
            report::ms(Some(round.wall)),
            round
                .cpu_seconds
                .first()
                .map_or("-".to_owned(), |s| format!("{:.0} ms", s * 1e3))
        );
    }
    for cause in approvals.failures.describe() {
        println!("  {cause}");
    }
    if approvals.failures.total > 0 && server.log_lines() > 0 {
        server.print_log_tail();
    }
    approvals
}

/// The closed-loop windows at every concurrency, against a running server.
fn run_windows(server: &Server, probe: &(dyn Fn() -> Vec<f64> + Sync)) -> Vec<Window> {
    CONCURRENCY
        .iter()
        .map(|&c| {
            let window = load::closed_loop(server.addr, c, WARMUP, WINDOW, probe);
            println!(
                "bench: C={c:>2}: {:.0} runs/s, p50 {}, p99 {}, max {}, {} connections, {} failed",
                window.runs_per_second(),
                report::ms(window.percentile(0.5)),
                report::ms(window.percentile(0.99)),
                report::ms(window.latencies.last().copied()),
                window.connects,
                window.failures.total
            );
            for cause in window.failures.describe() {
                println!("  {cause}");
            }
            if window.failures.total > 0 && server.log_lines() > 0 {
                server.print_log_tail();
            }
            window
        })
        .collect()
}

/// `k` when one end of `k` sockets fits in the open-files limit (the server inherits the
/// same limit for its end); `None` leaves that figure out.
fn fit_open_files(k: usize, limit: u64) -> Option<usize> {
    let room = limit.saturating_sub(256) as usize;
    if room >= k {
        Some(k)
    } else {
        println!("bench: the open-files limit is {limit}; {k} replies held open are left out");
        None
    }
}

fn hold_open(server: &Server, k: usize) -> OpenReplies {
    let pid = server.pid;
    let started = Instant::now();
    let open = load::open_replies(server.addr, k, OPEN_DEADLINE, &|| sys::rss_kib(pid));
    println!(
        "bench: {k} replies held open: {} had their first event after {:.1} s; RSS {} → {} KiB ({})",
        open.open,
        started.elapsed().as_secs_f64(),
        open.rss_before_kib,
        open.rss_after_kib,
        open.kib_per_reply()
            .map_or("-".to_owned(), |kib| format!("{kib:.1} KiB per reply"))
    );
    for cause in open.failures.describe() {
        println!("  {cause}");
    }
    open
}

//! The tables, printed as Markdown so the README's Benchmarks section can show them as
//! they were printed.

use std::time::Duration;

use super::{
    micro::Micro, Measured, APPROVAL_ROUNDS, APPROVERS, CONCURRENCY, SLOW_TOKEN_DELAY_MS, WARMUP,
    WINDOW,
};

pub struct Context {
    pub date: String,
    pub machine: String,
    pub micro: Micro,
    pub open_files: u64,
}

/// Targets of issue 10.
const PEER_RUNS_FACTOR: f64 = 10.0;
const CPU_PER_RUN_US: f64 = 280.0;
const P50_C1_MS: f64 = 1.0;
const PEER_P99_FRACTION: f64 = 0.2;
const LOOP_PER_STEP_US: f64 = 50.0;
const OPEN_REPLY_KIB: f64 = 16.0;

pub fn ms(latency: Option<Duration>) -> String {
    latency.map_or("-".to_owned(), |d| {
        let ms = d.as_secs_f64() * 1e3;
        if ms < 10.0 {
            format!("{ms:.2} ms")
        } else {
            format!("{ms:.1} ms")
        }
    })
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn print(
    context: &Context,
    datban: &Measured,
    postgres: Option<&Measured>,
    peer: Option<&Measured>,
    floor: Option<&Measured>,
) {
    let servers: Vec<&Measured> = [Some(datban), peer, postgres]
        .into_iter()
        .flatten()
        .collect();
    println!("\n==> results\n");
    println!(
        "{}, {}; servers pinned to core 0 and the load generator to core 1 (`taskset`); \
         one run = `POST /api/chat` in a new conversation, 2 model steps, every SSE body read \
         and checked; {} s warm-up and a {} s window per row.\n",
        context.date,
        context.machine,
        WARMUP.as_secs(),
        WINDOW.as_secs()
    );
    println!(
        "| server | C | runs/s | p50 | p99 | server CPU per run | events per run | load core busy | failed |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for server in &servers {
        for w in &server.windows {
            let cpu = cpu_cell(w.cpu_per_run_us(0), server.extra_cpu, w.cpu_per_run_us(1));
            println!(
                "| {} | {} | {:.0} | {} | {} | {cpu} | {} | {:.0}% | {} |",
                server.label,
                w.concurrency,
                w.runs_per_second(),
                ms(w.percentile(0.5)),
                ms(w.percentile(0.99)),
                w.events_per_run,
                w.generator_cpu_seconds * 100.0 / w.seconds,
                w.failures.total
            );
        }
    }

    let held: Vec<&Measured> = servers
        .iter()
        .copied()
        .chain(floor)
        .filter(|s| !s.open.is_empty())
        .collect();
    if !held.is_empty() {
        println!(
            "\nReplies held open at once, each until its first event (model: one token per \
             {SLOW_TOKEN_DELAY_MS} ms); server RSS from /proc before and after:\n"
        );
        println!(
            "| server | replies | first event after | RSS before → after | per reply | failed |"
        );
        println!("|---|---:|---:|---:|---:|---:|");
        for server in held {
            for o in &server.open {
                println!(
                    "| {} | {} | {:.1} s | {} → {} KiB | {} | {} |",
                    server.label,
                    thousands(o.wanted),
                    o.seconds,
                    thousands(o.rss_before_kib as usize),
                    thousands(o.rss_after_kib as usize),
                    o.kib_per_reply()
                        .map_or("-".to_owned(), |kib| format!("{kib:.1} KiB")),
                    o.failures.total
                );
            }
        }
    }
    if open_counts_missing(datban) {
        println!(
            "\n(the open-files limit is {}: some held-open counts were left out)",
            context.open_files
        );
    }
    print_approvals(&servers);

    println!("\n| in-process benchmark | figure |\n|---|---|");
    println!(
        "| loop cost per step (`cargo bench -p server --bench agent_loop`) | {} |",
        microseconds(&context.micro.loop_per_step)
            .unwrap_or_else(|| "not found in its output".into())
    );
    if let Some(trips) = microseconds(&context.micro.round_trip) {
        println!(
            "| one query's round trip to sqlx's SQLite thread, CPU (`agent_loop`; the floor \
             under a step that stores or reads) | {trips} |"
        );
    }
    let rows: Vec<String> = context
        .micro
        .partial_json
        .iter()
        .map(|row| match row.speedup {
            Some(x) => format!(
                "{}: {:.1} ns/byte ({x:.0}× re-parsing)",
                row.size, row.ns_per_byte
            ),
            None => format!("{}: {:.1} ns/byte", row.size, row.ns_per_byte),
        })
        .collect();
    println!(
        "| partial JSON (`cargo bench -p shared --bench partial_json`) | {}{} |",
        if rows.is_empty() {
            "not found in its output".to_owned()
        } else {
            rows.join("; ")
        },
        context
            .micro
            .partial_json_linear
            .as_deref()
            .and_then(|line| line.split_whitespace().nth(1))
            .map_or(String::new(), |verdict| format!("; linear: {verdict}"))
    );

    if let Some(peer) = peer {
        print_ratios(datban, peer);
    }
    if let Some(floor) = floor {
        print_own_share(datban, floor);
    }
    print_targets(context, datban, peer);
}

/// `label: x µs; …`, or `None` when there is no figure.
fn microseconds(figures: &[(String, f64)]) -> Option<String> {
    (!figures.is_empty()).then(|| {
        figures
            .iter()
            .map(|(label, us)| format!("{label}: {us:.1} µs"))
            .collect::<Vec<_>>()
            .join("; ")
    })
}

fn open_counts_missing(datban: &Measured) -> bool {
    datban.open.len() < super::OPEN_REPLIES.len()
}

fn window(m: &Measured, c: usize) -> Option<&super::Window> {
    m.windows.iter().find(|w| w.concurrency == c)
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

fn times(x: Option<f64>) -> String {
    x.map_or("-".to_owned(), |x| {
        if x < 10.0 {
            format!("{x:.2}×")
        } else {
            format!("{x:.1}×")
        }
    })
}

fn secs(d: Option<Duration>) -> Option<f64> {
    d.map(|d| d.as_secs_f64())
}

/// The server's CPU per unit of work in µs, and that of the processes named `extra`
/// (PostgreSQL's) beside it when they were probed.
fn cpu_cell(own: Option<f64>, extra: Option<&str>, extra_us: Option<f64>) -> String {
    match (own, extra, extra_us) {
        (Some(own), Some(name), Some(theirs)) => format!("{own:.0} µs + {theirs:.0} µs in {name}"),
        (Some(own), _, _) => format!("{own:.0} µs"),
        _ => "-".to_owned(),
    }
}

/// The busy evening: everyone with a form open approves at once.
fn print_approvals(servers: &[&Measured]) {
    let approving: Vec<(&Measured, &super::approvals::Approvals)> = servers
        .iter()
        .filter_map(|s| Some((*s, s.approvals.as_ref()?)))
        .collect();
    if approving.is_empty() {
        return;
    }
    println!(
        "\n{APPROVERS} people, each with a booking form open (a new owner each), approve at the \
         same moment (`POST /api/approvals`, each on its own connection); the median of \
         {APPROVAL_ROUNDS} rounds by time:\n"
    );
    println!(
        "| server | approvals | confirmed | waitlisted | the last one done after | server CPU per approval | failed (all rounds) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (server, approvals) in approving {
        let Some(round) = approvals.median() else {
            continue;
        };
        let per = |i: usize| {
            round
                .cpu_seconds
                .get(i)
                .map(|s| s * 1e6 / approvals.people.max(1) as f64)
        };
        let cpu = cpu_cell(per(0), server.extra_cpu, per(1));
        println!(
            "| {} | {} | {} | {} | {} | {cpu} | {} |",
            server.label,
            approvals.people,
            round.confirmed,
            round.waitlisted,
            ms(Some(round.wall)),
            approvals.failures.total
        );
    }
}

fn print_ratios(datban: &Measured, peer: &Measured) {
    println!(
        "\n| datban / peer | {} |",
        CONCURRENCY.map(|c| format!("C={c}")).join(" | ")
    );
    println!("|---|{}", "---:|".repeat(CONCURRENCY.len()));
    let row = |name: &str, f: &dyn Fn(&super::Window) -> Option<f64>| {
        let cells: Vec<String> = CONCURRENCY
            .iter()
            .map(|&c| {
                times(ratio(
                    window(datban, c).and_then(f),
                    window(peer, c).and_then(f),
                ))
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    };
    row("runs/s", &|w| Some(w.runs_per_second()));
    row("p50", &|w| secs(w.percentile(0.5)));
    row("p99", &|w| secs(w.percentile(0.99)));
    row("server CPU per run", &|w| w.cpu_per_run_us(0));
    let memory: Vec<String> = datban
        .open
        .iter()
        .filter_map(|d| {
            let p = peer.open.iter().find(|p| p.wanted == d.wanted)?;
            Some(format!(
                "{}: {}",
                thousands(d.wanted),
                times(ratio(d.kib_per_reply(), p.kib_per_reply()))
            ))
        })
        .collect();
    if !memory.is_empty() {
        println!(
            "\nmemory per open reply, datban / peer: {}",
            memory.join(", ")
        );
    }
}

/// What datban holds per open reply beyond the floor: the part the app's own changes can
/// reduce (the floor is hyper's buffers, the connection's task and the socket's
/// registration, the same in both).
fn print_own_share(datban: &Measured, floor: &Measured) {
    let rows: Vec<String> = datban
        .open
        .iter()
        .filter_map(|d| {
            let f = floor.open.iter().find(|f| f.wanted == d.wanted)?;
            let (ours, base) = (d.kib_per_reply()?, f.kib_per_reply()?);
            Some(format!(
                "{} open: {ours:.1} KiB = {base:.1} KiB floor + {:.1} KiB datban's own",
                thousands(d.wanted),
                ours - base
            ))
        })
        .collect();
    if !rows.is_empty() {
        println!(
            "\nmemory per open reply against the floor: {}",
            rows.join("; ")
        );
    }
}

fn verdict(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "met",
        Some(false) => "NOT met",
        None => "not measured",
    }
}

fn print_targets(context: &Context, datban: &Measured, peer: Option<&Measured>) {
    println!("\n| target (issue 10) | measured | |\n|---|---|---|");
    let line = |target: String, figure: String, met: Option<bool>| {
        println!("| {target} | {figure} | {} |", verdict(met));
    };
    let no_peer = || "needs `--peer`".to_owned();

    let ours = window(datban, 16).map(|w| w.runs_per_second());
    let theirs = peer
        .and_then(|p| window(p, 16))
        .map(|w| w.runs_per_second());
    let x = ratio(ours, theirs);
    line(
        format!("runs/s at C=16 ≥ {PEER_RUNS_FACTOR:.0}× the peer's"),
        match (ours, theirs) {
            (Some(o), Some(t)) => format!("{o:.0} vs {t:.0}: {}", times(x)),
            (Some(o), None) => format!("{o:.0}; {}", no_peer()),
            _ => "-".to_owned(),
        },
        x.map(|x| x >= PEER_RUNS_FACTOR),
    );

    let cpu = window(datban, 16).and_then(|w| w.cpu_per_run_us(0));
    line(
        format!("server CPU per run at C=16 ≤ {CPU_PER_RUN_US:.0} µs"),
        cpu.map_or("-".to_owned(), |us| format!("{us:.0} µs")),
        cpu.map(|us| us <= CPU_PER_RUN_US),
    );

    let p50 = window(datban, 1).and_then(|w| w.percentile(0.5));
    line(
        format!("p50 at C=1 ≤ {P50_C1_MS:.0} ms"),
        ms(p50),
        secs(p50).map(|s| s * 1e3 <= P50_C1_MS),
    );

    let ours = window(datban, 64).and_then(|w| w.percentile(0.99));
    let theirs = peer
        .and_then(|p| window(p, 64))
        .and_then(|w| w.percentile(0.99));
    let fraction = ratio(secs(ours), secs(theirs));
    line(
        "p99 at C=64 ≤ 1/5 of the peer's".to_owned(),
        match theirs {
            Some(_) => format!(
                "{} vs {}: {}",
                ms(ours),
                ms(theirs),
                fraction.map_or("-".to_owned(), |f| format!("{f:.2} of it"))
            ),
            None => format!("{}; {}", ms(ours), no_peer()),
        },
        fraction.map(|f| f <= PEER_P99_FRACTION),
    );

    let loop_cost = super::micro::loop_cost_figure(&context.micro.loop_per_step);
    line(
        format!("loop cost per step ≤ {LOOP_PER_STEP_US:.0} µs (`agent_loop`)"),
        loop_cost.map_or("-".to_owned(), |(label, us)| {
            let split = context.micro.loop_split.map_or(String::new(), |split| {
                format!(
                    "; of it the runtime thread {:.1} µs, sqlx's SQLite threads {:.1} µs",
                    split.runtime_thread_us, split.sqlite_threads_us
                )
            });
            format!("{us:.1} µs ({label}{split})")
        }),
        loop_cost.map(|(_, us)| *us <= LOOP_PER_STEP_US),
    );

    for open in &datban.open {
        let ours = open.kib_per_reply();
        let theirs = peer.and_then(|p| p.open.iter().find(|p| p.wanted == open.wanted));
        let kib = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{x:.1} KiB"));
        let within = ours.map(|o| o <= OPEN_REPLY_KIB);
        let (figure, met) = match theirs {
            Some(p) if p.kib_per_reply().is_some() => (
                format!("{} vs {}", kib(ours), kib(p.kib_per_reply())),
                ratio(ours, p.kib_per_reply()).map(|r| r <= 1.0 && within == Some(true)),
            ),
            // A peer that cannot hold them all has no figure to be under.
            Some(p) => (
                format!(
                    "{}; the peer held {} of {} open",
                    kib(ours),
                    thousands(p.open),
                    thousands(p.wanted)
                ),
                within,
            ),
            None => (
                format!("{}; the peer's {}", kib(ours), no_peer()),
                within.filter(|within| !within),
            ),
        };
        line(
            format!(
                "memory per open reply ≤ {OPEN_REPLY_KIB:.0} KiB and ≤ the peer's, {} open",
                thousands(open.wanted)
            ),
            figure,
            met,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(10_000), "10,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(ms(Some(Duration::from_micros(750))), "0.75 ms");
        assert_eq!(ms(Some(Duration::from_millis(215))), "215.0 ms");
        assert_eq!(times(Some(10.04)), "10.0×");
        assert_eq!(ratio(Some(1.0), Some(0.0)), None);
        assert_eq!(
            microseconds(&[("held".into(), 29.54), ("pool".into(), 22.0)]).as_deref(),
            Some("held: 29.5 µs; pool: 22.0 µs")
        );
        assert_eq!(microseconds(&[]), None);
    }
}

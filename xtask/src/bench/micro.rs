//! The in-process benchmarks (`cargo bench`), run as they are and their figures read
//! from what they print, so the table and the bench's own output never disagree.

use std::process::{Command, Stdio};

use crate::{
    cmd::{self, Failure},
    Workspace,
};

/// What the two `cargo bench` targets measured.
#[derive(Debug, Default, Clone)]
pub struct Micro {
    /// `agent_loop`: (label, loop cost per step in µs), one per storage it ran on.
    pub loop_per_step: Vec<(String, f64)>,
    /// `agent_loop`: (how, µs of CPU) for one `SELECT 1` to sqlx's SQLite thread and
    /// back, the floor under a step's storage.
    pub round_trip: Vec<(String, f64)>,
    /// `agent_loop`: the judged figure's CPU per step split into the runtime thread's
    /// (the loop's own work) and sqlx's SQLite threads', in µs.
    pub loop_split: Option<LoopSplit>,
    /// `partial_json`: one row per argument size.
    pub partial_json: Vec<PartialJsonRow>,
    /// `partial_json`'s verdict on linearity, as it printed it.
    pub partial_json_linear: Option<String>,
}

/// Where a step's CPU went, on a SQLite file with many conversations at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopSplit {
    pub runtime_thread_us: f64,
    pub sqlite_threads_us: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PartialJsonRow {
    pub size: String,
    pub ns_per_byte: f64,
    /// How many times faster than re-parsing the prefix for every delta, where measured.
    pub speedup: Option<f64>,
}

pub fn run(ws: &Workspace) -> Result<Micro, Failure> {
    cmd::step("cargo bench -p server --bench agent_loop");
    let agent_loop =
        capture(cmd::cargo(ws).args(["bench", "-p", "server", "--bench", "agent_loop"]))?;
    cmd::step("cargo bench -p shared --bench partial_json");
    let partial =
        capture(cmd::cargo(ws).args(["bench", "-p", "shared", "--bench", "partial_json"]))?;
    let (partial_json, partial_json_linear) = parse_partial_json(&partial);
    Ok(Micro {
        loop_per_step: parse_agent_loop(&agent_loop),
        round_trip: parse_round_trips(&agent_loop),
        loop_split: parse_loop_split(&agent_loop),
        partial_json,
        partial_json_linear,
    })
}

/// Runs `command` with its stdout captured (and echoed), its stderr (cargo's progress)
/// shown as it comes.
fn capture(command: &mut Command) -> Result<String, Failure> {
    let out = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Failure::new(format!("could not start cargo bench: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    print!("{text}");
    if out.status.success() {
        Ok(text)
    } else {
        Err(Failure::new(format!("cargo bench failed ({})", out.status)))
    }
}

/// `agent loop, offline model, <label>: …` opens each storage's block, a line ending
/// `at a time…` each way of running it (one conversation at a time, many at once), and
/// each `per step, loop wall …: <x> µs` / `per step, loop CPU …: <x> µs` line is a figure,
/// labelled `<storage>, <way>, wall|CPU`.
fn parse_agent_loop(text: &str) -> Vec<(String, f64)> {
    let mut label = None;
    let mut way = String::new();
    let mut figures = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = line.strip_prefix("agent loop, offline model, ") {
            label = rest.split(':').next().map(str::to_owned);
            way.clear();
        } else if trimmed.contains(" at a time") {
            way = trimmed
                .split(" at a time")
                .next()
                .unwrap_or_default()
                .to_owned();
        } else if trimmed.starts_with("per step, loop") {
            let kind = if trimmed.starts_with("per step, loop CPU") {
                "CPU"
            } else {
                "wall"
            };
            let number = trailing_figure(line);
            if let (Some(label), Some(number)) = (label.clone(), number) {
                let way = if way.is_empty() { "one" } else { way.as_str() };
                figures.push((format!("{label}, {way} at a time, {kind}"), number));
            }
        }
    }
    figures
}

/// The `of which the runtime thread …: <x> µs` and `of which sqlx's SQLite threads …:
/// <y> µs` lines under the figure [`loop_cost_figure`] judges (a SQLite file, many
/// conversations at once).
fn parse_loop_split(text: &str) -> Option<LoopSplit> {
    let mut on_file = false;
    let mut many = false;
    let (mut runtime, mut sqlite) = (None, None);
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = line.strip_prefix("agent loop, offline model, ") {
            on_file = rest.starts_with("SQLite file");
            many = false;
        } else if trimmed.contains(" at a time") {
            many = !trimmed.starts_with("one ");
        } else if on_file && many {
            if trimmed.starts_with("of which the runtime thread") {
                runtime = trailing_figure(trimmed);
            } else if trimmed.starts_with("of which sqlx's SQLite threads") {
                sqlite = trailing_figure(trimmed);
            }
        }
    }
    Some(LoopSplit {
        runtime_thread_us: runtime?,
        sqlite_threads_us: sqlite?,
    })
}

/// The number after a line's last `:` (`… : 117.6 µs` → 117.6).
fn trailing_figure(line: &str) -> Option<f64> {
    line.rsplit(':')
        .next()
        .and_then(|tail| tail.split_whitespace().next())
        .and_then(|n| n.parse::<f64>().ok())
}

/// Lines `round trip, <how>: <x> µs`.
fn parse_round_trips(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("round trip, ")?;
            let (how, figure) = rest.rsplit_once(':')?;
            let us = figure.split_whitespace().next()?.parse::<f64>().ok()?;
            Some((how.trim().to_owned(), us))
        })
        .collect()
}

/// The figure the target is judged on: what a step costs a busy server on a SQLite file
/// (CPU with many conversations at once, commits shared), else the first one printed.
pub fn loop_cost_figure(figures: &[(String, f64)]) -> Option<&(String, f64)> {
    figures
        .iter()
        .find(|(label, _)| {
            label.starts_with("SQLite file") && !label.contains(", one ") && label.ends_with("CPU")
        })
        .or_else(|| figures.first())
}

/// Rows `<size> <unit> <bytes> <deltas> | <ms> <ns/byte> | <baseline ms> <ratio>x` and
/// the `linear: …` line.
fn parse_partial_json(text: &str) -> (Vec<PartialJsonRow>, Option<String>) {
    let mut rows = Vec::new();
    let mut linear = None;
    for line in text.lines() {
        if line.starts_with("linear:") {
            linear = Some(line.to_owned());
            continue;
        }
        let parts: Vec<&str> = line.split('|').collect();
        let [head, fast, slow] = parts.as_slice() else {
            continue;
        };
        let head: Vec<&str> = head.split_whitespace().collect();
        let fast: Vec<&str> = fast.split_whitespace().collect();
        let (Some(size), Some(unit), Some(ns)) = (head.first(), head.get(1), fast.get(1)) else {
            continue;
        };
        let Ok(ns_per_byte) = ns.parse::<f64>() else {
            continue;
        };
        let speedup = slow
            .split_whitespace()
            .nth(1)
            .and_then(|ratio| ratio.trim_end_matches('x').parse::<f64>().ok());
        rows.push(PartialJsonRow {
            size: format!("{size} {unit}"),
            ns_per_byte,
            speedup,
        });
    }
    (rows, linear)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_loop_figures_are_read_per_storage_and_way() {
        let text = "agent loop, offline model, SQLite file (WAL): 200 conversations of 3 runs (1200 steps)\n\
                    \x20 one conversation at a time (latency: each step waits for its commit)\n\
                    \x20   per step, wall:           600.0 µs\n\
                    \x20   per step, loop wall (everything but the model, SQL and commits included): 534.2 µs\n\
                    \x20   per step, loop CPU (all threads, the model's time taken out): 120.5 µs\n\
                    \x20 16 conversations at a time (1200 steps)\n\
                    \x20   per step, loop wall:      80.0 µs\n\
                    \x20   per step, loop CPU:       70.5 µs\n\
                    agent loop, offline model, SQLite in memory: 200 conversations\n\
                    \x20   per step, loop wall (everything but the model, SQL included): 313.0 µs\n";
        let figures = parse_agent_loop(text);
        assert_eq!(
            figures,
            vec![
                (
                    "SQLite file (WAL), one conversation at a time, wall".to_owned(),
                    534.2
                ),
                (
                    "SQLite file (WAL), one conversation at a time, CPU".to_owned(),
                    120.5
                ),
                (
                    "SQLite file (WAL), 16 conversations at a time, wall".to_owned(),
                    80.0
                ),
                (
                    "SQLite file (WAL), 16 conversations at a time, CPU".to_owned(),
                    70.5
                ),
                ("SQLite in memory, one at a time, wall".to_owned(), 313.0),
            ]
        );
        assert_eq!(
            loop_cost_figure(&figures),
            Some(&(
                "SQLite file (WAL), 16 conversations at a time, CPU".to_owned(),
                70.5
            ))
        );
    }

    #[test]
    fn the_judged_figures_split_is_read_and_no_other() {
        let text = "agent loop, offline model, SQLite file (WAL): 200 conversations of 3 runs (1000 steps)\n\
                    \x20 one conversation at a time (latency: each step waits for its commit)\n\
                    \x20   per step, loop CPU (all threads, the model's time taken out): 400.0 µs\n\
                    \x20     of which the runtime thread (the loop): 150.0 µs\n\
                    \x20     of which sqlx's SQLite threads (statements): 250.0 µs\n\
                    \x20 16 conversations at a time (1000 steps)\n\
                    \x20   per step, loop CPU:       125.8 µs\n\
                    \x20     of which the runtime thread (the loop, the model taken out): 51.9 µs\n\
                    \x20     of which sqlx's SQLite threads (statements, commits): 73.9 µs\n\
                    agent loop, offline model, SQLite in memory: 200 conversations\n\
                    \x20 16 conversations at a time (1000 steps)\n\
                    \x20     of which the runtime thread (the loop): 60.0 µs\n\
                    \x20     of which sqlx's SQLite threads (statements): 70.0 µs\n";
        assert_eq!(
            parse_loop_split(text),
            Some(LoopSplit {
                runtime_thread_us: 51.9,
                sqlite_threads_us: 73.9
            })
        );
        // The split lines are not figures of their own.
        assert_eq!(parse_agent_loop(text).len(), 2);
        // A bench without the split (an older build) has none.
        assert_eq!(
            parse_loop_split(
                "agent loop, offline model, SQLite file (WAL): 1\n  16 conversations at a time\n"
            ),
            None
        );
    }

    #[test]
    fn round_trips_are_read_and_loop_lines_are_not() {
        let text = "agent loop, offline model, SQLite file (WAL): 200 conversations\n\
                    \x20 16 conversations at a time (1000 steps)\n\
                    \x20   per step, loop CPU:       226.2 µs\n\
                    \x20 one query's round trip to sqlx's SQLite thread (SELECT 1), CPU, all threads\n\
                    \x20   round trip, connection held: 33.7 µs\n\
                    \x20   round trip, through the writer's pool: 52.1 µs\n\
                    \x20   round trip, through the readers' pool: - µs\n";
        assert_eq!(
            parse_round_trips(text),
            vec![
                ("connection held".to_owned(), 33.7),
                ("through the writer's pool".to_owned(), 52.1),
            ]
        );
        assert_eq!(parse_agent_loop(text).len(), 1);
    }

    #[test]
    fn partial_json_rows_are_read() {
        let text = "partial_json: tool argument streamed in 16-byte deltas\n\
                    \x20  size    bytes  deltas | incremental ms  ns/byte | baseline ms     ratio\n\
                    \x20 16 KB    16390    1025 |          0.101      6.2 |        40.1      397x\n\
                    \x20256 KB   262150   16385 |          1.700      6.5 |     skipped         -\n\
                    linear: yes (incremental ns/byte 6.2 / 6.5)\n";
        let (rows, linear) = parse_partial_json(text);
        assert_eq!(
            rows,
            vec![
                PartialJsonRow {
                    size: "16 KB".into(),
                    ns_per_byte: 6.2,
                    speedup: Some(397.0)
                },
                PartialJsonRow {
                    size: "256 KB".into(),
                    ns_per_byte: 6.5,
                    speedup: None
                },
            ]
        );
        assert!(linear.is_some_and(|l| l.starts_with("linear: yes")));
    }
}

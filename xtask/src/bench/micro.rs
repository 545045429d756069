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
    /// `partial_json`: one row per argument size.
    pub partial_json: Vec<PartialJsonRow>,
    /// `partial_json`'s verdict on linearity, as it printed it.
    pub partial_json_linear: Option<String>,
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

/// `agent loop, offline model, <label>: …` opens each storage's block; its
/// `per step, loop (…): <x> µs` line is the figure.
fn parse_agent_loop(text: &str) -> Vec<(String, f64)> {
    let mut label = None;
    let mut figures = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("agent loop, offline model, ") {
            label = rest.split(':').next().map(str::to_owned);
        } else if line.trim_start().starts_with("per step, loop") {
            let number = line
                .rsplit(':')
                .next()
                .and_then(|tail| tail.split_whitespace().next())
                .and_then(|n| n.parse::<f64>().ok());
            if let (Some(label), Some(number)) = (label.clone(), number) {
                figures.push((label, number));
            }
        }
    }
    figures
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
    fn agent_loop_figures_are_read_per_storage() {
        let text = "agent loop, offline model, SQLite file (WAL): 200 conversations of 3 runs (1200 steps)\n\
                    \x20 conversations per second: 10.0\n\
                    \x20 per step, total:          600.0 µs\n\
                    \x20 per step, loop (everything but the model, SQL included): 534.2 µs\n\
                    agent loop, offline model, SQLite in memory: 200 conversations\n\
                    \x20 per step, loop (everything but the model, SQL included): 313.0 µs\n";
        assert_eq!(
            parse_agent_loop(text),
            vec![
                ("SQLite file (WAL)".to_owned(), 534.2),
                ("SQLite in memory".to_owned(), 313.0)
            ]
        );
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

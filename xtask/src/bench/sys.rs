//! What the benchmark reads from and asks of Linux: CPU time and resident memory from
//! `/proc`, core pinning with util-linux `taskset`, the open-files limit with `prlimit`.

use std::{fs, process::Command};

use crate::cmd::{self, Failure};

/// Clock ticks per second of `/proc/<pid>/stat`'s times.
pub fn clock_ticks() -> f64 {
    cmd::output(Command::new("getconf").arg("CLK_TCK"))
        .and_then(|text| text.parse::<f64>().ok())
        .filter(|ticks| *ticks > 0.0)
        .unwrap_or(100.0)
}

/// Fields of `/proc/<pid>/stat` after the command name (which may hold spaces and
/// parentheses, so it is skipped up to the last `)`): index 0 is field 3, `state`.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// utime + stime of every thread of `pid`, in clock ticks.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let fields = stat_fields(pid)?;
    // Fields 14 and 15 of proc(5).
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// `pid` and every process whose parent it is (a PostgreSQL postmaster and its backends).
pub fn with_children(pid: u32) -> Vec<u32> {
    let mut pids = vec![pid];
    let Ok(entries) = fs::read_dir("/proc") else {
        return pids;
    };
    for entry in entries.filter_map(Result::ok) {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let parent = stat_fields(child).and_then(|f| f.get(1)?.parse::<u32>().ok());
        if parent == Some(pid) {
            pids.push(child);
        }
    }
    pids
}

/// Resident memory of `pid` (`VmRSS`), in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
}

/// Pins every thread of this process to `core`; threads and processes started later
/// inherit it.
pub fn pin_self(core: usize) -> Result<(), Failure> {
    cmd::output(
        Command::new("taskset")
            .args(["-a", "-p", "-c", &core.to_string()])
            .arg(std::process::id().to_string()),
    )
    .map(drop)
    .ok_or_else(|| {
        Failure::new(format!(
            "`taskset -a -p -c {core} <xtask>` failed (util-linux's taskset is needed to pin \
             the benchmark to cores)"
        ))
    })
}

/// Raises this process's open-files limit (inherited by the servers it starts) to `want`,
/// or as far as the hard limit lets; returns the soft limit in force.
pub fn raise_open_files(want: u64) -> u64 {
    let pid = std::process::id().to_string();
    let raised = cmd::output(
        Command::new("prlimit")
            .args(["--pid", &pid])
            .arg(format!("--nofile={want}:{want}")),
    );
    if raised.is_none() {
        // Not allowed past the hard limit: take the soft limit up to it.
        let _ = cmd::output(
            Command::new("prlimit")
                .args(["--pid", &pid])
                .arg(format!("--nofile={}:", hard_open_files().unwrap_or(1024))),
        );
    }
    open_files_limit().unwrap_or(1024)
}

fn limits_line() -> Option<Vec<String>> {
    let limits = fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))?;
    Some(
        line.trim_start_matches("Max open files")
            .split_whitespace()
            .map(str::to_owned)
            .collect(),
    )
}

fn open_files_limit() -> Option<u64> {
    limits_line()?.first()?.parse().ok()
}

fn hard_open_files() -> Option<u64> {
    limits_line()?.get(1)?.parse().ok()
}

/// The 1-minute load average: other work on the machine makes every figure noisier.
pub fn load_average() -> Option<f64> {
    fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The machine's CPU model and core count, for the table's heading.
pub fn machine() -> String {
    let model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|line| line.strip_prefix("model name"))
                .and_then(|rest| rest.split_once(':'))
                .map(|(_, name)| name.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    format!("{model}, {cores} cores")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_cpu_time_and_memory() {
        let pid = std::process::id();
        assert!(cpu_ticks(pid).is_some());
        assert!(rss_kib(pid).is_some_and(|kib| kib > 0));
        assert!(with_children(pid).contains(&pid));
        assert!(open_files_limit().is_some());
        assert!(load_average().is_some());
    }
}

//! The server process's memory settings, read from the running binary's `/proc` entry.

use crate::support::{process::start_server, TestResult};

/// mimalloc asks for transparent huge pages on its whole arena; the server turns them off
/// for itself, or each reply held open costs several KiB more (README, "Benchmarks").
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_server_runs_without_transparent_huge_pages() -> TestResult {
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("thp.db").display());
    let server = start_server(&url, &[]).await?;
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid()))?;
    // The line exists since Linux 5.0; "1" while huge pages are allowed, as for any
    // process that did not turn them off.
    let Some(line) = status.lines().find(|line| line.starts_with("THP_enabled:")) else {
        eprintln!("this kernel does not report THP_enabled; nothing to check");
        return Ok(());
    };
    assert_eq!(line.split_whitespace().nth(1), Some("0"), "{line}");
    Ok(())
}

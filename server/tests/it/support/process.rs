//! The real `server` binary as a child process on its own port: for tests that need
//! several server processes on one database, or that kill one.

#![allow(dead_code)]

use std::{
    net::TcpListener,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use super::Fallible;

/// A running `server` process; killed (SIGKILL) and reaped when dropped.
pub struct ServerProcess {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
}

impl ServerProcess {
    /// The process's id, to read its `/proc` entries.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the process at once, as a power cut or OOM kill would (no graceful shutdown).
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ServerProcess {
    /// Asks the process to shut down (SIGTERM), as a deploy or `docker stop` does.
    pub fn terminate(&self) -> Fallible<()> {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .map_err(|error| format!("cannot run kill: {error}"))?;
        assert!(status.success(), "kill -TERM failed");
        Ok(())
    }

    /// Waits up to `max` for the process to exit; whether it did.
    pub fn exited_within(&mut self, max: Duration) -> bool {
        let deadline = Instant::now() + max;
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill9();
    }
}

fn free_port() -> std::io::Result<u16> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
}

/// Starts the server binary on `db_url` with the offline model (no token delay) plus
/// `env`, and waits until `/healthz` answers.
pub async fn start_server(db_url: &str, env: &[(&str, &str)]) -> Fallible<ServerProcess> {
    let port = free_port()?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_server"));
    command
        .env("DATABASE_URL", db_url)
        .env("LEPTOS_SITE_ADDR", format!("127.0.0.1:{port}"))
        .env("LEPTOS_OUTPUT_NAME", "datban")
        .env("DATBAN_PROVIDER", "offline")
        .env("DATBAN_OFFLINE_TOKEN_DELAY_MS", "0")
        .env("RUST_LOG", "warn")
        // Tests drive hundreds of requests per minute as one person.
        .env("DATBAN_RATE_PER_MINUTE", "10000")
        // … and keep dozens of replies going at once (tests of the limit set their own).
        .env("DATBAN_MAX_RUNS_PER_OWNER", "1000")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    for (name, value) in env {
        command.env(name, value);
    }
    let child = command
        .spawn()
        .map_err(|error| format!("cannot start the server binary: {error}"))?;
    let process = ServerProcess {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    let client = super::new_client()?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let health = client.get(format!("{}/healthz", process.base)).send().await;
        if health.is_ok_and(|r| r.status().is_success()) {
            return Ok(process);
        }
        assert!(
            Instant::now() < deadline,
            "server on port {port} did not start"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

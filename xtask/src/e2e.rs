//! The Playwright suite against a freshly started server with its own empty database.

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command},
    time::{Duration, Instant},
};

use crate::{
    cmd::{self, Failure},
    site, Workspace,
};

/// How long a freshly started server may take to answer `/healthz`.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// Kills the server however the test run ends, so no orphan keeps the port.
struct RunningServer {
    child: Child,
    data_dir: PathBuf,
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        // SIGTERM first so the server shuts down gracefully and flushes its log.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// Starts `server` on a free loopback port, runs Playwright against it, then stops it.
pub fn run_playwright(ws: &Workspace, server: &Path) -> Result<(), Failure> {
    let addr = free_port()?;
    let data_dir = std::env::temp_dir().join(format!("datban-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&data_dir)
        .map_err(|e| Failure::new(format!("cannot create {}: {e}", data_dir.display())))?;
    let mut command = Command::new(server);
    command
        .current_dir(&ws.root)
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", data_dir.join("e2e.db").display()),
        )
        // Still streamed token by token, just faster than a person needs to read it.
        .env("DATBAN_OFFLINE_TOKEN_DELAY_MS", "2");
    site::server_env(&mut command, ws, &addr.to_string());
    let child = command
        .spawn()
        .map_err(|e| Failure::new(format!("cannot start {}: {e}", server.display())))?;
    let mut running = RunningServer { child, data_dir };
    wait_until_healthy(addr, &mut running.child)?;

    let base_url = format!("http://{addr}");
    println!("e2e: server ready at {base_url}");
    cmd::run(
        Command::new("npx")
            .args(["--no-install", "playwright", "test"])
            .current_dir(ws.root.join("end2end"))
            .env("DATBAN_BASE_URL", &base_url)
            .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1"),
    )
}

fn free_port() -> Result<SocketAddr, Failure> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|e| Failure::new(format!("cannot find a free port on 127.0.0.1: {e}")))
}

fn wait_until_healthy(addr: SocketAddr, child: &mut Child) -> Result<(), Failure> {
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Failure::new(format!(
                "the server exited during start-up ({status}); its log is above"
            )));
        }
        if health_status(addr) == Some(200) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err(Failure::new(format!(
        "the server did not answer GET /healthz on {addr} within {} s",
        STARTUP_TIMEOUT.as_secs()
    )))
}

/// A minimal HTTP/1.1 GET, so xtask needs no HTTP client crate for one request.
fn health_status(addr: SocketAddr) -> Option<u16> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        stream,
        "GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    parse_status(&response)
}

fn parse_status(response: &str) -> Option<u16> {
    let status_line = response.lines().next()?;
    let mut parts = status_line.split_whitespace();
    parts.next().filter(|v| v.starts_with("HTTP/"))?;
    parts.next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::parse_status;

    #[test]
    fn reads_the_status_code_of_a_response() {
        assert_eq!(
            parse_status("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"),
            Some(200)
        );
        assert_eq!(
            parse_status("HTTP/1.1 503 Service Unavailable\r\n\r\n"),
            Some(503)
        );
        assert_eq!(parse_status("garbage"), None);
        assert_eq!(parse_status(""), None);
    }
}

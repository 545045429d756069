//! The Playwright suite against freshly started servers, each with its own empty database.
//!
//! Three passes: every test but the `@provider` and `@slow` ones against the built-in
//! offline model; the `@slow` tests against an offline model that streams slowly, so a test
//! can reload the page or press stop while a reply is being written; then the `@provider`
//! tests against a server whose model is `end2end/fake-openai.mjs`, a fake OpenAI-compatible
//! provider on a real socket (`DATBAN_PROVIDER=openai`).
//!
//! Then `end2end/aisdk`: the AI SDK's own chat clients (ai 7 and ai 6) against a server
//! of their own, so a change that breaks `useChat` and friends fails here and not in
//! someone's app.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use crate::{
    cmd::{self, Failure},
    site, Workspace,
};

/// How long a freshly started server may take to answer `/healthz`.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the fake provider may take to say which port it listens on.
const FAKE_STARTUP_TIMEOUT: Duration = Duration::from_secs(15);

/// The fake provider's script, relative to the workspace root.
const FAKE_PROVIDER_SCRIPT: &str = "end2end/fake-openai.mjs";

/// The key the fake provider demands and the provider-pass server sends.
const FAKE_PROVIDER_KEY: &str = "fake-key";

/// The Playwright tag of the tests that need the fake provider.
const PROVIDER_TAG: &str = "@provider";

/// The Playwright tag of the tests that act while a reply is being written.
const SLOW_TAG: &str = "@slow";

/// The offline model's pause per streamed piece in the `@slow` pass: a two-city weather
/// reply then takes a few seconds, longer than a page reload.
const SLOW_TOKEN_DELAY_MS: &str = "40";

/// The heartbeat timeout in the slow pass: a killed server's reply is closed as
/// interrupted by the other after this (the default, 15 s, would make its test wait).
const SLOW_HEARTBEAT_TIMEOUT_MS: &str = "3000";

/// The AI SDK suite's package, relative to the workspace root.
const AISDK_DIR: &str = "end2end/aisdk";

/// The suite's Node.js, installed by its package: ai 7 needs Node 22, newer than the
/// machine's, and both SDK versions then run on the one Node their lock pins.
const AISDK_NODE: &str = "node_modules/.bin/node";

/// The lock file `npm ci` last installed from, kept inside what it installed, so a lock
/// that changed since (another SDK version) installs again and an unchanged one does not.
const AISDK_INSTALLED_LOCK: &str = "node_modules/.datban-installed-lock";

/// The offline model's pause per streamed piece for the AI SDK suite. Its reconnect test
/// cuts a two-city weather reply off at its first text and must find the run still
/// writing when the new client asks for it: at 20 ms that reply takes over a second, far
/// longer than a stop and a reconnect on loopback, while the ten regenerations of a
/// booking reply still finish in seconds.
const AISDK_TOKEN_DELAY_MS: &str = "20";

/// Messages per minute per owner for the AI SDK suite: one person regenerates a reply ten
/// times in a few seconds, which the default limit (20) would refuse.
const AISDK_RATE_PER_MINUTE: &str = "600";

/// Messages per minute per owner for the browser suites. A test types faster than a person:
/// one that sends six messages and confirms in three seconds would meet the default limit
/// (a burst of five), and only on a fast run. The limit itself is tested in
/// `server/tests/it/limits.rs`.
const E2E_RATE_PER_MINUTE: &str = "600";

/// Playwright workers in the offline pass, each with a server and database of its own.
const PLAYWRIGHT_WORKERS: usize = 2;

/// Kills the server however the test run ends, so no orphan keeps the port.
struct RunningServer {
    child: Child,
    data_dir: PathBuf,
    base_url: String,
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        cmd::terminate(&mut self.child, Duration::from_secs(10));
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// Kills the fake provider however the test run ends.
struct FakeProvider {
    child: Child,
    /// `http://127.0.0.1:<port>`, without `/v1`.
    url: String,
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the three Playwright passes against `server`, each with a server of its own.
pub fn run_playwright(ws: &Workspace, server: &Path) -> Result<(), Failure> {
    offline_pass(ws, server)?;
    cmd::step("Playwright @slow tests: the offline model streams slowly (reload, stop)");
    slow_pass(ws, server)?;
    cmd::step("Playwright @provider tests: the server talks to a fake OpenAI provider");
    provider_pass(ws, server)
}

/// The AI SDK suite (`end2end/aisdk`, `node --test`) against a server of its own with the
/// offline model, its packages installed first when they are missing or stale.
pub fn run_aisdk(ws: &Workspace, server: &Path) -> Result<(), Failure> {
    let dir = ws.root.join(AISDK_DIR);
    install_aisdk(&dir)?;
    let running = start_server(
        ws,
        server,
        "aisdk",
        &[
            ("DATBAN_PROVIDER", "offline"),
            ("DATBAN_OFFLINE_TOKEN_DELAY_MS", AISDK_TOKEN_DELAY_MS),
            ("DATBAN_RATE_PER_MINUTE", AISDK_RATE_PER_MINUTE),
        ],
        None,
    )?;
    let mut command = Command::new(dir.join(AISDK_NODE));
    command
        // Should the suite grow more files, one after another: they share this server,
        // and the reconnect test needs the reply it cuts off to still be running.
        .args(["--test", "--test-concurrency=1", "chat.test.mjs"])
        .current_dir(&dir)
        .env("DATBAN_BASE_URL", &running.base_url);
    cmd::run(&mut command)
}

/// `npm ci` in `dir` unless what it installed last is still there and from the same lock.
fn install_aisdk(dir: &Path) -> Result<(), Failure> {
    let lock_path = dir.join("package-lock.json");
    let lock = std::fs::read(&lock_path)
        .map_err(|e| Failure::new(format!("cannot read {}: {e}", lock_path.display())))?;
    let installed = std::fs::read(dir.join(AISDK_INSTALLED_LOCK)).ok();
    if !needs_install(&lock, installed.as_deref(), dir.join(AISDK_NODE).is_file()) {
        return Ok(());
    }
    println!("e2e: installing {AISDK_DIR} (npm ci)");
    cmd::run(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(dir),
    )?;
    // Written only after a complete install: an interrupted one installs again next time.
    let copy = dir.join(AISDK_INSTALLED_LOCK);
    std::fs::write(&copy, &lock)
        .map_err(|e| Failure::new(format!("cannot write {}: {e}", copy.display())))
}

/// Whether the AI SDK suite's packages must be installed: no Node of its own yet, never
/// installed by us, or installed from another lock.
fn needs_install(lock: &[u8], installed: Option<&[u8]>, has_node: bool) -> bool {
    !has_node || installed != Some(lock)
}

/// Every test except the `@provider` and `@slow` ones, with the built-in offline model:
/// [`PLAYWRIGHT_WORKERS`] workers, each on a server of its own (`DATBAN_BASE_URLS`, read by
/// `end2end/playwright.config.ts`), so one worker's bookings never fill another's slots.
fn offline_pass(ws: &Workspace, server: &Path) -> Result<(), Failure> {
    let env = [
        ("DATBAN_PROVIDER", "offline"),
        // Still streamed token by token, just faster than a person needs to read it.
        ("DATBAN_OFFLINE_TOKEN_DELAY_MS", "2"),
        ("DATBAN_RATE_PER_MINUTE", E2E_RATE_PER_MINUTE),
    ];
    let servers = (0..PLAYWRIGHT_WORKERS)
        .map(|worker| start_server(ws, server, &format!("offline-{worker}"), &env, None))
        .collect::<Result<Vec<_>, _>>()?;
    let urls: Vec<&str> = servers.iter().map(|s| s.base_url.as_str()).collect();
    let other_passes = format!("{PROVIDER_TAG}|{SLOW_TAG}");
    let workers = PLAYWRIGHT_WORKERS.to_string();
    playwright(
        ws,
        &servers[0],
        &["--grep-invert", &other_passes, "--workers", &workers],
        &[("DATBAN_BASE_URLS", &urls.join(","))],
    )
}

/// The `@slow` tests, with an offline model slow enough to act mid-reply.
fn slow_pass(ws: &Workspace, server: &Path) -> Result<(), Failure> {
    let env = [
        ("DATBAN_PROVIDER", "offline"),
        ("DATBAN_OFFLINE_TOKEN_DELAY_MS", SLOW_TOKEN_DELAY_MS),
        ("DATBAN_HEARTBEAT_TIMEOUT_MS", SLOW_HEARTBEAT_TIMEOUT_MS),
        ("DATBAN_RATE_PER_MINUTE", E2E_RATE_PER_MINUTE),
    ];
    let running = start_server(ws, server, "slow", &env, None)?;
    // A second server on the same database, for the test that kills one mid-reply.
    let victim = start_server(ws, server, "slow-victim", &env, Some(&running.data_dir))?;
    let pid = victim.child.id().to_string();
    playwright(
        ws,
        &running,
        &["--grep", SLOW_TAG],
        &[
            ("DATBAN_VICTIM_URL", &victim.base_url),
            ("DATBAN_VICTIM_PID", &pid),
        ],
    )
}

/// The `@provider` tests, with the server's model behind `end2end/fake-openai.mjs`.
fn provider_pass(ws: &Workspace, server: &Path) -> Result<(), Failure> {
    let fake = start_fake_provider(ws)?;
    println!("e2e: fake OpenAI provider ready at {}", fake.url);
    let base_url = format!("{}/v1", fake.url);
    let running = start_server(
        ws,
        server,
        "provider",
        &[
            ("DATBAN_PROVIDER", "openai"),
            ("OPENAI_BASE_URL", &base_url),
            ("OPENAI_API_KEY", FAKE_PROVIDER_KEY),
            ("DATBAN_MODEL", "fake-model"),
            ("DATBAN_RATE_PER_MINUTE", E2E_RATE_PER_MINUTE),
        ],
        None,
    )?;
    playwright(
        ws,
        &running,
        &["--grep", PROVIDER_TAG],
        &[("FAKE_OPENAI_URL", &fake.url)],
    )
}

/// Starts `server` on a free loopback port with a fresh database and waits until it is healthy.
///
/// With `shared_db`, the server uses the database in that folder (another server's: two
/// processes on one SQLite file) and leaves the folder to its owner.
fn start_server(
    ws: &Workspace,
    server: &Path,
    label: &str,
    env: &[(&str, &str)],
    shared_db: Option<&Path>,
) -> Result<RunningServer, Failure> {
    let addr = free_port()?;
    let own_dir = std::env::temp_dir().join(format!("datban-e2e-{}-{label}", std::process::id()));
    let data_dir = match shared_db {
        Some(dir) => dir.to_path_buf(),
        None => {
            // A leftover from an interrupted run must not hand this pass an old database.
            let _ = std::fs::remove_dir_all(&own_dir);
            std::fs::create_dir_all(&own_dir)
                .map_err(|e| Failure::new(format!("cannot create {}: {e}", own_dir.display())))?;
            own_dir.clone()
        }
    };
    let mut command = Command::new(server);
    command
        .current_dir(&ws.root)
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", data_dir.join("e2e.db").display()),
        )
        .stdout(cmd::output_sink())
        .stderr(cmd::output_sink());
    // A request's INFO lines, thousands a suite, bury a failure's cause; warnings stay.
    if std::env::var_os("RUST_LOG").is_none() {
        command.env("RUST_LOG", "warn");
    }
    for (name, value) in env {
        command.env(name, value);
    }
    site::server_env(&mut command, ws, &addr.to_string());
    let child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&own_dir);
            return Err(Failure::new(format!(
                "cannot start {}: {e}",
                server.display()
            )));
        }
    };
    let mut running = RunningServer {
        child,
        // Only its own folder is removed when it stops.
        data_dir: own_dir,
        base_url: format!("http://{addr}"),
    };
    wait_until_healthy(addr, &mut running.child)?;
    println!("e2e: {label} server ready at {}", running.base_url);
    Ok(running)
}

/// `npx playwright test` in end2end/ against `server`, with extra arguments and variables.
fn playwright(
    ws: &Workspace,
    server: &RunningServer,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<(), Failure> {
    let mut command = Command::new("npx");
    command
        .args(["--no-install", "playwright", "test"])
        .args(args)
        .current_dir(ws.root.join("end2end"))
        .env("DATBAN_BASE_URL", &server.base_url)
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1");
    for (name, value) in env {
        command.env(name, value);
    }
    cmd::run(&mut command)
}

/// Starts `node end2end/fake-openai.mjs` on a free port and learns the port from its
/// first line of output.
fn start_fake_provider(ws: &Workspace) -> Result<FakeProvider, Failure> {
    let script = ws.root.join(FAKE_PROVIDER_SCRIPT);
    if !script.is_file() {
        return Err(Failure::new(format!(
            "the fake OpenAI provider {} is missing",
            script.display()
        )));
    }
    let mut child = Command::new("node")
        .arg(&script)
        .current_dir(&ws.root)
        .env("FAKE_OPENAI_PORT", "0")
        .env("FAKE_OPENAI_KEY", FAKE_PROVIDER_KEY)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(cmd::output_sink())
        .spawn()
        .map_err(|e| {
            Failure::new(format!(
                "cannot start `node {FAKE_PROVIDER_SCRIPT}` for the @provider tests: {e} \
                 (Node.js must be on PATH; `cargo xtask setup` installs it)"
            ))
        })?;
    let Some(stdout) = child.stdout.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(Failure::new("the fake OpenAI provider has no stdout pipe"));
    };
    // The guard owns the child from here on, so every early return below kills it.
    let mut fake = FakeProvider {
        child,
        url: String::new(),
    };

    // Reading blocks, so a thread reads and the wait below can time out.
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let first = reader.read_line(&mut line).map(|_| line);
        let _ = sender.send(first);
        // Keep draining, so a later write by the fake never meets a closed pipe.
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    let line = match receiver.recv_timeout(FAKE_STARTUP_TIMEOUT) {
        Ok(Ok(line)) => line,
        Ok(Err(e)) => {
            return Err(Failure::new(format!(
                "cannot read the fake OpenAI provider's output: {e}"
            )))
        }
        Err(_) => {
            return Err(Failure::new(format!(
                "the fake OpenAI provider did not say `listening <port>` within {} s",
                FAKE_STARTUP_TIMEOUT.as_secs()
            )))
        }
    };
    let Some(port) = parse_listening(&line) else {
        let status = match fake.child.try_wait() {
            Ok(Some(status)) => format!("it exited ({status}); its log is above"),
            _ => format!("it printed {:?}", line.trim_end()),
        };
        return Err(Failure::new(format!(
            "the fake OpenAI provider did not start: {status}"
        )));
    };
    fake.url = format!("http://127.0.0.1:{port}");
    Ok(fake)
}

/// The port in the fake provider's `listening <port>` line.
fn parse_listening(line: &str) -> Option<u16> {
    let port = line.trim().strip_prefix("listening ")?;
    port.trim().parse().ok().filter(|&port| port != 0)
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
    use super::{needs_install, parse_listening, parse_status};

    #[test]
    fn installs_the_ai_sdk_suite_when_missing_or_its_lock_changed() {
        let lock = br#"{"lockfileVersion": 3}"#.as_slice();
        assert!(!needs_install(lock, Some(lock), true));
        assert!(needs_install(lock, None, true));
        assert!(needs_install(
            lock,
            Some(br#"{"lockfileVersion": 2}"#),
            true
        ));
        assert!(needs_install(lock, Some(lock), false));
        assert!(needs_install(lock, None, false));
    }

    #[test]
    fn reads_the_port_the_fake_provider_listens_on() {
        assert_eq!(parse_listening("listening 41234\n"), Some(41234));
        assert_eq!(parse_listening("listening 0\n"), None);
        assert_eq!(parse_listening("listening\n"), None);
        assert_eq!(parse_listening(""), None);
        assert_eq!(parse_listening("Error: EADDRINUSE"), None);
    }

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

//! The server's tests on PostgreSQL: a throwaway cluster in a temporary folder, started on
//! a free port for this one run and removed afterwards, whether the tests pass or not.
//!
//! Nothing outside the folder is touched: no service, no system cluster, no port but the
//! one chosen here. Speed over durability (`fsync=off`): the data lives for one run.

use std::{
    fs,
    net::{SocketAddr, TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use crate::{
    cmd::{self, Failure},
    setup::Setup,
    Workspace,
};

/// Set to `1` to leave the PostgreSQL pass out (documented in the README).
const SKIP_ENV: &str = "DATBAN_SKIP_POSTGRES";
/// The variable the server's test support reads (`server/tests/it/support/test_db.rs`).
pub const TEST_URL_ENV: &str = "DATBAN_TEST_POSTGRES_URL";
/// Debian installs each major version's server tools under `<here>/<version>/bin`.
const BIN_ROOT: &str = "/usr/lib/postgresql";
/// The Debian package that brings them.
const PACKAGE: &str = "postgresql";
/// The account Debian's package creates; initdb refuses to run as root, so root uses it.
const OS_USER: &str = "postgres";
/// How long the server may take to accept connections.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `tests` with the admin URL of a fresh throwaway cluster, which is removed
/// afterwards whatever the tests did; `Ok` without running them when [`SKIP_ENV`] is set.
/// `tests` gets the URL to pass on as `DATBAN_TEST_POSTGRES_URL` ([`TEST_URL_ENV`]).
pub fn with_cluster(tests: impl FnOnce(&str) -> Result<(), Failure>) -> Result<(), Failure> {
    if std::env::var(SKIP_ENV).is_ok_and(|v| v == "1") {
        println!("postgres: {SKIP_ENV}=1: the server tests on PostgreSQL are SKIPPED");
        return Ok(());
    }
    let bin = ensure_binaries()?;
    let started = Instant::now();
    let cluster = Cluster::start(&bin)?;
    println!(
        "postgres: {} ready on 127.0.0.1:{} in {:.1} s (cluster in {})",
        bin.display(),
        cluster.port,
        started.elapsed().as_secs_f64(),
        cluster.base.display()
    );
    let tests_started = Instant::now();
    let result = tests(&cluster.admin_url());
    let tests = tests_started.elapsed();
    if result.is_err() {
        cluster.print_log_tail();
    }
    drop(cluster);
    println!(
        "postgres: the tests took {:.0} s; {:.0} s with the cluster's start and removal",
        tests.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    result.map_err(|failure| Failure::new(format!("the server tests on PostgreSQL: {failure}")))
}

/// The chaos test (`server/tests/it/postgres.rs`), by its name's prefix.
const CHAOS_TEST: &str = "postgres::chaos_";

/// `cargo test` of the chaos test alone on `cluster`, its figures printed; sized by
/// `(seconds, conversations)` when given, else its defaults.
fn chaos_command(ws: &Workspace, url: &str, size: Option<(u64, u64)>) -> std::process::Command {
    let mut command = cmd::cargo(ws);
    command
        .args([
            "test",
            "-p",
            "server",
            "--test",
            "it",
            CHAOS_TEST,
            "--",
            "--nocapture",
        ])
        .env(TEST_URL_ENV, url);
    if let Some((seconds, conversations)) = size {
        command
            .env("DATBAN_CHAOS_SECONDS", seconds.to_string())
            .env("DATBAN_CHAOS_CONVERSATIONS", conversations.to_string());
    }
    command
}

/// Runs the chaos test alone against a fresh cluster, with kills for at least `seconds`
/// over `conversations` conversations.
pub fn chaos(ws: &Workspace, seconds: u64, conversations: u64) -> Result<(), Failure> {
    let bin = ensure_binaries()?;
    let cluster = Cluster::start(&bin)?;
    let result = cmd::run(&mut chaos_command(
        ws,
        &cluster.admin_url(),
        Some((seconds, conversations)),
    ));
    if result.is_err() {
        cluster.print_log_tail();
    }
    drop(cluster);
    result.map_err(|failure| Failure::new(format!("the chaos test: {failure}")))
}

/// The newest `/usr/lib/postgresql/<version>/bin`, installing the package when there is none.
pub(crate) fn ensure_binaries() -> Result<PathBuf, Failure> {
    if let Some(bin) = find_bin_dir(Path::new(BIN_ROOT)) {
        return Ok(bin);
    }
    Setup::detect()?.apt_install(&[PACKAGE], "the server tests on PostgreSQL")?;
    find_bin_dir(Path::new(BIN_ROOT)).ok_or_else(|| {
        Failure::new(format!(
            "the `{PACKAGE}` package is installed but no {BIN_ROOT}/<version>/bin holds \
             initdb and pg_ctl"
        ))
    })
}

/// Of `root`'s version folders with `bin/initdb` and `bin/pg_ctl`, the highest version's `bin`.
fn find_bin_dir(root: &Path) -> Option<PathBuf> {
    fs::read_dir(root)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version = parse_version(&entry.file_name().to_string_lossy())?;
            let bin = entry.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("pg_ctl").is_file()).then_some((version, bin))
        })
        .max()
        .map(|(_, bin)| bin)
}

/// "15" → [15], "9.6" → [9, 6]; anything else is not a version folder.
fn parse_version(name: &str) -> Option<Vec<u32>> {
    name.split('.').map(|part| part.parse().ok()).collect()
}

/// A running throwaway cluster. Dropping it stops the server and deletes the folder, so a
/// failing test run or a failed start leaves nothing behind.
pub(crate) struct Cluster {
    /// The temporary folder: `data/`, `sock/` and `postgres.log`.
    base: PathBuf,
    /// The server tools.
    bin: PathBuf,
    /// Root runs the tools as the `postgres` account (initdb refuses root).
    as_os_user: bool,
    port: u16,
    /// Whether `pg_ctl start` ran, so Drop must stop the server.
    started: bool,
}

impl Cluster {
    pub(crate) fn start(bin: &Path) -> Result<Self, Failure> {
        let as_os_user = cmd::is_root();
        if as_os_user && cmd::output(Command::new("id").args(["-u", OS_USER])).is_none() {
            return Err(Failure::new(format!(
                "running as root, the PostgreSQL tools must run as the `{OS_USER}` account \
                 (initdb refuses root), and there is none. The `{PACKAGE}` package creates it: \
                 apt-get install -y {PACKAGE}"
            )));
        }
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let base =
            std::env::temp_dir().join(format!("datban-pg-{}-{nanos:08x}", std::process::id()));
        fs::create_dir(&base).map_err(|e| {
            Failure::new(format!("cannot create the folder {}: {e}", base.display()))
        })?;
        // From here on, Drop removes the folder however the start ends.
        let mut cluster = Cluster {
            base,
            bin: bin.to_owned(),
            as_os_user,
            port: 0,
            started: false,
        };
        let sock = cluster.base.join("sock");
        fs::create_dir(&sock).map_err(|e| {
            Failure::new(format!("cannot create the folder {}: {e}", sock.display()))
        })?;
        if as_os_user {
            cmd::run(
                Command::new("chown")
                    .args(["-R", &format!("{OS_USER}:")])
                    .arg(&cluster.base),
            )?;
        }

        let data = cluster.base.join("data");
        // UTF-8 and the C collation whatever the caller's locale: the same sort order
        // and encoding on every machine.
        let initdb = cluster
            .tool("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "postgres", "--no-sync"])
            .args(["-E", "UTF8", "--locale=C.UTF-8"])
            .output()
            .map_err(|e| Failure::new(format!("could not start initdb: {e}")))?;
        if !initdb.status.success() {
            return Err(Failure::new(format!(
                "initdb failed ({}):\n{}{}",
                initdb.status,
                String::from_utf8_lossy(&initdb.stdout),
                String::from_utf8_lossy(&initdb.stderr)
            )));
        }

        cluster.port = free_port()?;
        let options = format!(
            "-k '{}' -p {} -c listen_addresses=127.0.0.1 -c max_connections=200 \
             -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
            sock.display(),
            cluster.port
        );
        // Set first: a start that fails half-way may still leave a server to stop.
        cluster.started = true;
        let start = cluster
            .tool("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(cluster.log())
            .args(["-w", "-t", &STARTUP_TIMEOUT.as_secs().to_string()])
            .args(["-o", &options, "start"])
            .stdout(Stdio::null())
            .status()
            .map_err(|e| Failure::new(format!("could not start pg_ctl: {e}")))?;
        if !start.success() {
            cluster.print_log_tail();
            return Err(Failure::new(format!(
                "pg_ctl start failed ({start}); the server log is above"
            )));
        }
        cluster.wait_for_connections()?;
        Ok(cluster)
    }

    /// A server tool, as the `postgres` account when we are root.
    fn tool(&self, name: &str) -> Command {
        let path = self.bin.join(name);
        let mut command = if self.as_os_user {
            let mut command = Command::new("runuser");
            command.args(["-u", OS_USER, "--"]).arg(path);
            command
        } else {
            Command::new(path)
        };
        // The postgres account may not be allowed into the caller's working directory.
        command.current_dir(&self.base);
        command
    }

    fn log(&self) -> PathBuf {
        self.base.join("postgres.log")
    }

    pub(crate) fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The server's process, the parent of every backend (first line of `postmaster.pid`).
    pub(crate) fn postmaster_pid(&self) -> Option<u32> {
        fs::read_to_string(self.base.join("data/postmaster.pid"))
            .ok()?
            .lines()
            .next()?
            .trim()
            .parse()
            .ok()
    }

    /// pg_ctl -w already waited for the server to be ready; this checks it is ready on
    /// the TCP address the tests use.
    fn wait_for_connections(&self) -> Result<(), Failure> {
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        while Instant::now() < deadline {
            if TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.print_log_tail();
        Err(Failure::new(format!(
            "PostgreSQL did not accept connections on {addr} within {} s",
            STARTUP_TIMEOUT.as_secs()
        )))
    }

    fn print_log_tail(&self) {
        let Ok(log) = fs::read_to_string(self.log()) else {
            return;
        };
        let lines: Vec<&str> = log.lines().collect();
        println!("postgres: the server log ends with:");
        for line in &lines[lines.len().saturating_sub(40)..] {
            println!("  {line}");
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.started {
            // fast: ends the sessions a killed test may have left, without waiting for them.
            let _ = self
                .tool("pg_ctl")
                .arg("-D")
                .arg(self.base.join("data"))
                .args(["-m", "fast", "-w", "stop"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        if let Err(error) = fs::remove_dir_all(&self.base) {
            eprintln!(
                "postgres: could not remove {}: {error}",
                self.base.display()
            );
        }
    }
}

fn free_port() -> Result<u16, Failure> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|e| Failure::new(format!("cannot find a free port on 127.0.0.1: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_numbers() {
        assert_eq!(parse_version("15"), Some(vec![15]));
        assert_eq!(parse_version("9.6"), Some(vec![9, 6]));
        assert_eq!(parse_version("main"), None);
        assert!(parse_version("16") > parse_version("9.6"));
    }

    #[test]
    fn the_highest_version_with_both_tools_wins() {
        let root = std::env::temp_dir().join(format!("datban-pg-find-{}", std::process::id()));
        let make = |version: &str, tools: &[&str]| {
            let bin = root.join(version).join("bin");
            fs::create_dir_all(&bin).unwrap();
            for tool in tools {
                fs::write(bin.join(tool), "").unwrap();
            }
        };
        make("9.6", &["initdb", "pg_ctl"]);
        make("13", &["initdb", "pg_ctl"]);
        make("16", &["pg_ctl"]);
        make("common", &["initdb", "pg_ctl"]);
        let found = find_bin_dir(&root);
        fs::remove_dir_all(&root).unwrap();
        assert_eq!(found, Some(root.join("13").join("bin")));
        assert_eq!(find_bin_dir(&root), None);
    }
}

//! A server under test: started pinned to core 0 on a free port, with its own temporary
//! folder and log, and stopped (folder removed) however the benchmark ends.

use std::{
    fs,
    net::{SocketAddr, TcpListener},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use super::load;
use crate::cmd::Failure;

/// The core servers run on; the load generator takes the other one.
pub const SERVER_CORE: usize = 0;
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Server {
    child: Child,
    /// The server's own pid: `taskset` execs it, so the child is the server.
    pub pid: u32,
    pub addr: SocketAddr,
    dir: PathBuf,
    label: String,
}

/// A fresh, empty folder for one server's database and log.
pub fn temp_dir(label: &str) -> Result<PathBuf, Failure> {
    let dir = std::env::temp_dir().join(format!("datban-bench-{}-{label}", std::process::id()));
    // A leftover of an interrupted run must not hand this one an old database.
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir)
        .map_err(|e| Failure::new(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir)
}

pub fn free_addr() -> Result<SocketAddr, Failure> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|e| Failure::new(format!("cannot find a free port on 127.0.0.1: {e}")))
}

impl Server {
    /// Starts `program args…` under `taskset -c 0` with `env`, logging to `dir/server.log`,
    /// and waits until `GET /healthz` on `addr` answers 200.
    pub fn start(
        label: &str,
        program: &Path,
        args: &[&str],
        env: &[(&str, String)],
        addr: SocketAddr,
        dir: PathBuf,
    ) -> Result<Self, Failure> {
        let log_path = dir.join("server.log");
        let log = fs::File::create(&log_path)
            .and_then(|log| Ok((log.try_clone()?, log)))
            .map_err(|e| Failure::new(format!("cannot create {}: {e}", log_path.display())))?;
        let mut command = Command::new("taskset");
        command
            .args(["-c", &SERVER_CORE.to_string()])
            .arg(program)
            .args(args)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(log.0)
            .stderr(log.1);
        for (name, value) in env {
            command.env(name, value);
        }
        let child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                return Err(Failure::new(format!(
                    "cannot start {} under taskset: {e}",
                    program.display()
                )));
            }
        };
        let mut server = Server {
            pid: child.id(),
            child,
            addr,
            dir,
            label: label.to_owned(),
        };
        server.wait_until_healthy()?;
        Ok(server)
    }

    fn wait_until_healthy(&mut self) -> Result<(), Failure> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.print_log_tail();
                return Err(Failure::new(format!(
                    "{} exited at start ({status}); its log is above",
                    self.label
                )));
            }
            if load::get_status(self.addr, "/healthz") == Some(200) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.print_log_tail();
        Err(Failure::new(format!(
            "{} did not answer /healthz on {} within {} s",
            self.label,
            self.addr,
            STARTUP_TIMEOUT.as_secs()
        )))
    }

    pub fn print_log_tail(&self) {
        let Ok(log) = fs::read_to_string(self.dir.join("server.log")) else {
            return;
        };
        let lines: Vec<&str> = log.lines().collect();
        println!("bench: the log of {} ends with:", self.label);
        for line in &lines[lines.len().saturating_sub(30)..] {
            println!("  {line}");
        }
    }

    /// Whether the server logged anything (it runs with `RUST_LOG=warn`).
    pub fn log_lines(&self) -> usize {
        fs::read_to_string(self.dir.join("server.log")).map_or(0, |log| log.lines().count())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        crate::cmd::terminate(&mut self.child, STOP_TIMEOUT);
        let _ = fs::remove_dir_all(&self.dir);
    }
}

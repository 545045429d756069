//! Running child processes with readable failures.

use std::{
    fmt,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use crate::Workspace;

/// A step that could not be done, with a message written for the person at the terminal.
#[derive(Debug)]
pub struct Failure(String);

impl Failure {
    /// A failure with the given explanation.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Prints a banner so a long log shows where each step starts.
pub fn step(title: &str) {
    println!("\n==> {title}");
}

/// `cargo` run from the workspace root through the rustup proxy, so that a
/// `RUSTUP_TOOLCHAIN` set on the command picks the toolchain.
pub fn cargo(ws: &Workspace) -> Command {
    let mut command = Command::new("cargo");
    // `cargo xtask` exports the path of the cargo that started it; a child cargo of
    // another toolchain must not inherit it.
    command
        .current_dir(&ws.root)
        .env_remove("CARGO")
        .env_remove("RUSTC");
    command
}

fn describe(command: &Command) -> String {
    let mut text = command.get_program().to_string_lossy().into_owned();
    for arg in command.get_args() {
        text.push(' ');
        text.push_str(&arg.to_string_lossy());
    }
    text
}

/// Runs a command with inherited stdio; a non-zero exit is a [`Failure`] naming the command.
pub fn run(command: &mut Command) -> Result<(), Failure> {
    let status = command.status().map_err(|error| {
        Failure::new(format!("could not start `{}`: {error}", describe(command)))
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(Failure::new(format!(
            "`{}` failed ({status})",
            describe(command)
        )))
    }
}

/// Runs a command quietly and returns its trimmed stdout, or `None` if it could not run or failed.
pub fn output(command: &mut Command) -> Option<String> {
    let out = command.stderr(Stdio::null()).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Whether we may install system packages ourselves.
pub fn is_root() -> bool {
    output(Command::new("id").arg("-u")).as_deref() == Some("0")
}

/// Stops a child server: SIGTERM first, so it shuts down gracefully and its log is
/// complete, then SIGKILL if it is still there after `grace`; always reaped.
pub fn terminate(child: &mut Child, grace: Duration) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

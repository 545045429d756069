//! Running child processes with readable failures.

use std::{
    cell::{Cell, RefCell},
    fmt,
    fs::File,
    path::Path,
    process::{Child, Command, ExitStatus, Stdio},
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

thread_local! {
    /// Where this thread's child processes write: a stage running beside others writes to
    /// a log of its own, printed whole when it ends, so two stages never interleave lines.
    static LOG: RefCell<Option<File>> = const { RefCell::new(None) };
    /// CPU time (user + system) of the children this thread has reaped, with theirs.
    static CHILD_CPU: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// Sends this thread's child processes' output to `path` (created anew) until [`log_to`]
/// is called again; `None` gives them the terminal back.
pub fn log_to(path: Option<&Path>) -> Result<(), Failure> {
    let file = path
        .map(|path| {
            File::create(path)
                .map_err(|e| Failure::new(format!("cannot create {}: {e}", path.display())))
        })
        .transpose()?;
    LOG.with(|log| *log.borrow_mut() = file);
    Ok(())
}

/// What a child's stdout or stderr should be: this thread's log, else the terminal.
pub fn output_sink() -> Stdio {
    LOG.with(|log| {
        log.borrow()
            .as_ref()
            .and_then(|file| file.try_clone().ok())
            .map_or_else(Stdio::inherit, Stdio::from)
    })
}

/// The CPU time of every child this thread has reaped so far (see [`wait`]).
pub fn children_cpu() -> Duration {
    CHILD_CPU.with(Cell::get)
}

/// Waits for `child` and adds its CPU time (and that of the processes it reaped) to
/// [`children_cpu`]; `std`'s wait cannot tell it, `wait4` can.
pub fn wait(child: &mut Child) -> std::io::Result<ExitStatus> {
    let pid = libc::pid_t::try_from(child.id())
        .map_err(|_| std::io::Error::other("process id out of range"))?;
    let mut status: libc::c_int = 0;
    // SAFETY: a zeroed rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own unreaped child; both pointers are valid for the call.
        let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if reaped == pid {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            // Already reaped (or never ours): std knows its status, if anyone does.
            return child.wait();
        }
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    CHILD_CPU.with(|cpu| cpu.set(cpu.get() + time(usage.ru_utime) + time(usage.ru_stime)));
    Ok(std::os::unix::process::ExitStatusExt::from_raw(status))
}

/// Makes `command` (and every process it starts) run at the lowest CPU priority (nice 19).
pub fn lowest_priority(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: `setpriority` is async-signal-safe and touches only the new process.
    unsafe {
        command.pre_exec(|| {
            libc::setpriority(libc::PRIO_PROCESS, 0, 19);
            Ok(())
        });
    }
}

/// Runs a command with its output on the terminal (or this thread's log); a non-zero exit
/// is a [`Failure`] naming the command.
pub fn run(command: &mut Command) -> Result<(), Failure> {
    let status = command
        .stdout(output_sink())
        .stderr(output_sink())
        .spawn()
        .and_then(|mut child| wait(&mut child))
        .map_err(|error| {
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
    // SAFETY: a zeroed siginfo_t is a valid value of this plain C struct.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let pid: libc::id_t = child.id();
    while Instant::now() < deadline {
        // WNOWAIT: only look, so that `wait` below reaps it and counts its CPU time.
        // SAFETY: `info` is valid for the call; `pid` is our own child.
        let looked = unsafe {
            libc::waitid(
                libc::P_PID,
                pid,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        // SAFETY: reading the pid field of a siginfo_t that waitid filled (or zeroed).
        if looked == 0 && unsafe { info.si_pid() } != 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = wait(child);
}

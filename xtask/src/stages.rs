//! The test command's stages and the table of where their time went.
//!
//! Stages run on threads beside each other (a build while tests run, say). Each records
//! when it began after the command's start, how long it took and the CPU time of the
//! processes it ran, so the table at the end shows both what was waited for and what
//! kept the two cores busy. A stage beside others writes its processes' output to a log
//! of its own, printed whole when it ends.

use std::{
    io::Write,
    path::{Path, PathBuf},
    sync::Mutex,
    time::{Duration, Instant},
};

use crate::cmd::{self, Failure};

/// One finished stage.
struct Row {
    name: String,
    began: Duration,
    took: Duration,
    cpu: Duration,
    ok: bool,
}

/// The stages of one command, as they end.
pub struct Stages {
    started: Instant,
    logs: PathBuf,
    rows: Mutex<Vec<Row>>,
    /// Held while a log is printed, so two logs never interleave.
    printing: Mutex<()>,
}

impl Stages {
    /// A table whose clock starts now; logged stages write into `logs` (created).
    pub fn new(logs: &Path) -> Result<Self, Failure> {
        std::fs::create_dir_all(logs)
            .map_err(|e| Failure::new(format!("cannot create {}: {e}", logs.display())))?;
        Ok(Self {
            started: Instant::now(),
            logs: logs.to_owned(),
            rows: Mutex::new(Vec::new()),
            printing: Mutex::new(()),
        })
    }

    /// Runs `work` as the stage `name`, its processes' output on the terminal.
    pub fn run<T>(
        &self,
        name: &str,
        work: impl FnOnce() -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        cmd::step(name);
        self.timed(name, work)
    }

    /// Runs `work` as the stage `name` with its processes' output in a log of its own,
    /// printed when the stage ends (whole, so a failure's cause is there).
    pub fn logged<T>(
        &self,
        name: &str,
        work: impl FnOnce() -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        let file: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let log = self.logs.join(format!("{file}.log"));
        println!("\n==> {name} (started; its output follows when it ends)");
        cmd::log_to(Some(&log))?;
        let result = self.timed(name, work);
        cmd::log_to(None)?;
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let _printing = self.printing.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "\n==> {name}: output");
        let _ = out.write_all(text.as_bytes());
        let verdict = if result.is_ok() { "done" } else { "FAILED" };
        let _ = writeln!(out, "==> {name}: {verdict}");
        let _ = out.flush();
        result
    }

    fn timed<T>(
        &self,
        name: &str,
        work: impl FnOnce() -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        let began = self.started.elapsed();
        let cpu_before = cmd::children_cpu();
        let result = work();
        let row = Row {
            name: name.to_owned(),
            began,
            took: self.started.elapsed().saturating_sub(began),
            cpu: cmd::children_cpu().saturating_sub(cpu_before),
            ok: result.is_ok(),
        };
        self.rows
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(row);
        result
    }

    /// The table: each stage by when it began, then the whole command's wall time.
    pub fn table(&self) -> String {
        let mut rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        rows.sort_by_key(|row| row.began);
        let width = rows
            .iter()
            .map(|row| row.name.len())
            .max()
            .unwrap_or(5)
            .max(5);
        let mut text = format!(
            "{:<width$}  {:>7}  {:>7}  {:>7}  {:>7}\n",
            "stage", "from s", "to s", "wall s", "cpu s"
        );
        for row in rows.iter() {
            let flag = if row.ok { "" } else { "  FAILED" };
            text.push_str(&format!(
                "{:<width$}  {:>7.1}  {:>7.1}  {:>7.1}  {:>7.1}{flag}\n",
                row.name,
                row.began.as_secs_f64(),
                (row.began + row.took).as_secs_f64(),
                row.took.as_secs_f64(),
                row.cpu.as_secs_f64(),
            ));
        }
        text.push_str(&format!(
            "{:<width$}  {:>7}  {:>7.1}\n",
            "all",
            "",
            self.started.elapsed().as_secs_f64()
        ));
        text
    }
}

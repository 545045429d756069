//! Fuzzing with cargo-fuzz (libFuzzer): the targets in `fuzz/fuzz_targets/` feed arbitrary
//! bytes to the code that reads untrusted text (the partial-JSON parser, tool-argument
//! validation, each provider's stream decoder).
//!
//! `cargo xtask test` runs every target for a few seconds from the committed seed corpus
//! (`fuzz/corpus/<target>/`); `cargo xtask fuzz <target> <seconds>` runs one for longer.
//! What libFuzzer finds goes to `fuzz/artifacts/<target>/`, and the step fails naming it.
//!
//! cargo-fuzz is compiled once per machine at a pinned version into the tools cache
//! (`~/.cache/datban/tools`, or `DATBAN_TOOLS_DIR`), like wasm-bindgen-cli. The targets are
//! built without a sanitizer, which a stable compiler can do, into `<target dir>/fuzz`.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    time::{Instant, SystemTime},
};

use crate::{
    cmd::{self, Failure},
    setup::Setup,
    Workspace,
};

/// The cargo-fuzz version installed into the tools cache.
pub const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// Every fuzz target, as named in `fuzz/Cargo.toml`.
pub const TARGETS: &[&str] = &[
    "partial_json",
    "validate_arguments",
    "decode_openai_chat",
    "decode_openai_responses",
    "decode_anthropic",
];

/// Seconds per target in `cargo xtask test`.
pub const TEST_SECONDS: u64 = 10;

/// Options of every cargo-fuzz build and run; a run with other options would rebuild.
///
/// - `--sanitizer none`: AddressSanitizer needs a nightly compiler (`-Zsanitizer`). The
///   targets are safe Rust, where libFuzzer's coverage guidance and Rust's own checks
///   (panics, overflow, debug assertions) find what matters; with no sanitizer cargo-fuzz
///   passes only flags a stable rustc accepts, so no `RUSTC_BOOTSTRAP` is needed.
/// - `--debug-assertions`: overflow checks and `debug_assert!`s are part of what is tested.
/// - release mode (cargo-fuzz's default) with one codegen unit (its default there): the
///   instrumented code is several times faster that way; `fuzz/Cargo.toml` leaves the
///   crates the targets do not exercise unoptimised to keep a cold build short.
const BUILD_OPTIONS: &[&str] = &["--sanitizer", "none", "--debug-assertions"];

/// Runs every target for `seconds_per_target` seconds, each from the committed seeds (new
/// inputs go to a temporary folder, so the committed corpus never grows). All targets run
/// even when one fails; the failure then names every input that failed.
pub fn run_all(ws: &Workspace, seconds_per_target: u64) -> Result<(), Failure> {
    Fuzz::prepare(ws, false)?.run_every_target(seconds_per_target)
}

impl Fuzz {
    /// Every target for `seconds_per_target` seconds, as [`run_all`] describes.
    pub fn run_every_target(&self, seconds_per_target: u64) -> Result<(), Failure> {
        let fuzz = self;
        let started = Instant::now();
        let mut failures = Vec::new();
        for target in TARGETS {
            let scratch = scratch_dir(target)?;
            let outcome = fuzz.run(target, &scratch, seconds_per_target);
            // Best effort: a leftover folder in the temporary directory harms nothing.
            let _ = fs::remove_dir_all(&scratch);
            if let Err(failure) = outcome {
                failures.push(failure.to_string());
            }
        }
        if failures.is_empty() {
            println!(
                "fuzz: {} targets × {seconds_per_target} s: no failure ({:.0} s with start-up)",
                TARGETS.len(),
                started.elapsed().as_secs_f64()
            );
            Ok(())
        } else {
            Err(Failure::new(failures.join("\n\n")))
        }
    }
}

/// Runs one target for `seconds` seconds: a longer run than the test command's. It starts
/// from the committed seeds plus what earlier long runs found, which is kept in
/// `<target dir>/fuzz/corpus/<target>` (outside the repository).
pub fn run_one(ws: &Workspace, target: &str, seconds: u64) -> Result<(), Failure> {
    check_target(target)?;
    let fuzz = Fuzz::prepare(ws, false)?;
    let corpus = fuzz.target_dir.join("corpus").join(target);
    fs::create_dir_all(&corpus).map_err(|e| io_error("create", &corpus, e))?;
    fuzz.run(target, &corpus, seconds)
}

/// Runs one target on one input (a file libFuzzer reported), to reproduce a failure with
/// its full panic message.
pub fn reproduce(ws: &Workspace, target: &str, input: &Path) -> Result<(), Failure> {
    check_target(target)?;
    // cargo-fuzz runs from the workspace root, not from where the path was typed.
    let input = fs::canonicalize(input).map_err(|e| io_error("find", input, e))?;
    let fuzz = Fuzz::prepare(ws, false)?;
    cmd::step(&format!("fuzz target {target} on {}", input.display()));
    cmd::run(fuzz.cargo_fuzz("run").arg(target).arg(&input))
}

/// `cargo xtask fuzz [<target> [<seconds> | <input file>]]`: no target runs every target
/// for [`TEST_SECONDS`]; a target alone runs it for 300 s.
pub fn command(ws: &Workspace, args: &[String]) -> Result<(), Failure> {
    const USAGE: &str = "usage: cargo xtask fuzz [<target> [<seconds> | <input file>]]";
    match args {
        [] => run_all(ws, TEST_SECONDS),
        [target] => run_one(ws, target, 300),
        [target, arg] => match arg.parse::<u64>() {
            Ok(seconds) if seconds > 0 => run_one(ws, target, seconds),
            _ if Path::new(arg).is_file() => reproduce(ws, target, Path::new(arg)),
            _ => Err(Failure::new(format!(
                "`{arg}` is neither a number of seconds nor an input file\n{USAGE}"
            ))),
        },
        _ => Err(Failure::new(USAGE)),
    }
}

/// A built fuzz project, ready to run.
pub struct Fuzz {
    /// The cargo-fuzz binary.
    cargo_fuzz: PathBuf,
    /// The workspace root (cargo-fuzz runs from there).
    root: PathBuf,
    /// `fuzz/` in the workspace.
    project: PathBuf,
    /// Where the fuzz project builds: `<target dir>/fuzz`, apart from the main build so
    /// that neither waits for the other's lock or rebuilds for the other's flags.
    target_dir: PathBuf,
}

impl Fuzz {
    /// Makes sure cargo-fuzz and a C++ compiler are there, then builds every target; with
    /// `background`, at the lowest CPU priority, so that a build beside the test command's
    /// other stages only takes the time they leave idle.
    pub fn prepare(ws: &Workspace, background: bool) -> Result<Self, Failure> {
        cmd::step("fuzz targets: set-up and build (cargo-fuzz, libFuzzer)");
        ensure_cxx()?;
        let fuzz = Self {
            cargo_fuzz: ensure_cargo_fuzz()?,
            root: ws.root.clone(),
            project: ws.root.join("fuzz"),
            target_dir: ws.target.join("fuzz"),
        };
        let started = Instant::now();
        let mut build = fuzz.cargo_fuzz("build");
        if background {
            cmd::lowest_priority(&mut build);
        }
        cmd::run(&mut build)?;
        println!(
            "fuzz: targets built in {:.0} s",
            started.elapsed().as_secs_f64()
        );
        Ok(fuzz)
    }

    /// `cargo fuzz <subcommand>` with the shared options.
    fn cargo_fuzz(&self, subcommand: &str) -> Command {
        let mut command = Command::new(&self.cargo_fuzz);
        command
            .current_dir(&self.root)
            // `cargo xtask` exports the path of the cargo that started it; cargo-fuzz
            // runs `cargo` itself and must find the rustup proxy, like `cmd::cargo`.
            .env_remove("CARGO")
            .env_remove("RUSTC")
            // cargo-fuzz sets RUSTFLAGS, appending the caller's: the server's `app`
            // needs the flag `.cargo/config.toml` would otherwise give.
            .env("RUSTFLAGS", crate::site::with_erased_views())
            // The binary is called directly, so its first argument is the subcommand name
            // cargo would pass.
            .args(["fuzz", subcommand, "--fuzz-dir"])
            .arg(&self.project)
            .args(BUILD_OPTIONS)
            .arg("--target-dir")
            .arg(&self.target_dir);
        command
    }

    /// Fuzzes `target` for `seconds`, writing new inputs to `corpus` and reading the
    /// committed seeds too. A crash, a timeout or running out of memory is a failure
    /// naming the input libFuzzer saved.
    fn run(&self, target: &str, corpus: &Path, seconds: u64) -> Result<(), Failure> {
        cmd::step(&format!("fuzz target {target} for {seconds} s"));
        let seeds = self.project.join("corpus").join(target);
        let started = SystemTime::now();
        let mut command = self.cargo_fuzz("run");
        command
            .arg(target)
            // libFuzzer writes what it finds to the first folder and only reads the others.
            .arg(corpus)
            .arg(&seeds)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .args([
                // An input that takes this long is reported as a hang.
                "-timeout=10",
                "-rss_limit_mb=2048",
                "-print_final_stats=1",
            ]);
        match cmd::run(&mut command) {
            Ok(()) => Ok(()),
            Err(failure) => {
                let found = self.artifacts_since(target, started);
                if found.is_empty() {
                    return Err(failure);
                }
                let list: Vec<String> = found
                    .iter()
                    .map(|path| format!("    {}", path.display()))
                    .collect();
                Err(Failure::new(format!(
                    "fuzz target {target} found a failing input:\n{}\n\
                     Reproduce with `cargo xtask fuzz {target} <file>`; add the file to \
                     fuzz/corpus/{target}/ once it is fixed.",
                    list.join("\n")
                )))
            }
        }
    }

    /// Inputs libFuzzer saved for `target` (crash-, timeout-, oom-, leak-…) since `since`.
    fn artifacts_since(&self, target: &str, since: SystemTime) -> Vec<PathBuf> {
        let dir = self.project.join("artifacts").join(target);
        let Ok(entries) = fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|entry| {
                entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|modified| modified >= since)
            })
            .map(|entry| entry.path())
            .collect();
        found.sort();
        found
    }
}

fn check_target(target: &str) -> Result<(), Failure> {
    if TARGETS.contains(&target) {
        Ok(())
    } else {
        Err(Failure::new(format!(
            "no fuzz target `{target}`; the targets are {}",
            TARGETS.join(", ")
        )))
    }
}

/// A fresh temporary folder for what one short run finds.
fn scratch_dir(target: &str) -> Result<PathBuf, Failure> {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!(
        "datban-fuzz-{target}-{}-{nanos:08x}",
        std::process::id()
    ));
    fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, e))?;
    Ok(dir)
}

/// libfuzzer-sys compiles libFuzzer (C++) in its build script, with `c++` unless `CXX`
/// names another compiler.
fn ensure_cxx() -> Result<(), Failure> {
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
    if cmd::output(Command::new(&compiler).arg("--version")).is_some() {
        return Ok(());
    }
    Setup::detect()?.apt_install(&["g++"], "libFuzzer (a C++ compiler)")
}

/// cargo-fuzz at [`CARGO_FUZZ_VERSION`] in the tools cache, compiled if missing (about a
/// minute and a half on two cores).
fn ensure_cargo_fuzz() -> Result<PathBuf, Failure> {
    let root = crate::setup::tools_dir().join(format!("cargo-fuzz-{CARGO_FUZZ_VERSION}"));
    let bin = root.join("bin/cargo-fuzz");
    // `cargo-fuzz --version` prints `cargo-fuzz 0.13.2`.
    let installed = cmd::output(Command::new(&bin).arg("--version"))
        .is_some_and(|out| out.split_whitespace().nth(1) == Some(CARGO_FUZZ_VERSION));
    if installed {
        return Ok(bin);
    }
    println!("fuzz: compiling cargo-fuzz {CARGO_FUZZ_VERSION} (once per machine)");
    cmd::run(
        Command::new("cargo")
            .args(["install", "cargo-fuzz", "--locked", "--force", "--version"])
            .arg(format!("={CARGO_FUZZ_VERSION}"))
            .arg("--root")
            .arg(&root)
            .current_dir(std::env::temp_dir())
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO")
            .env_remove("RUSTC"),
    )?;
    Ok(bin)
}

fn io_error(what: &str, path: &Path, error: std::io::Error) -> Failure {
    Failure::new(format!("cannot {what} {}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_has_a_source_and_seeds() {
        let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
        let manifest = fs::read_to_string(fuzz.join("Cargo.toml")).unwrap();
        for target in TARGETS {
            assert!(
                manifest.contains(&format!("name = \"{target}\"")),
                "{target} is not a [[bin]] of fuzz/Cargo.toml"
            );
            assert!(fuzz.join(format!("fuzz_targets/{target}.rs")).is_file());
            let seeds = fs::read_dir(fuzz.join("corpus").join(target))
                .map(|dir| dir.count())
                .unwrap_or(0);
            assert!(seeds > 0, "no seed corpus for {target}");
        }
        assert_eq!(manifest.matches("[[bin]]").count(), TARGETS.len());
    }
}

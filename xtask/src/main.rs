//! `cargo xtask <command>`: set-up, build, run and test datban without cargo-leptos.
//!
//! cargo-leptos takes most of an hour to compile on a two-core machine, so the run and
//! test commands build the site themselves (cargo + wasm-bindgen), writing the same
//! files to the same places cargo-leptos does, so one server binary serves either.

mod async_hydration;
mod bench;
mod cmd;
mod e2e;
mod fuzz;
mod layers;
mod postgres;
mod setup;
mod site;
mod stages;

use std::{path::PathBuf, process::ExitCode};

pub use cmd::Failure;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  run [--release]   set up what is missing, build the site and serve it
                    (LEPTOS_SITE_ADDR, default 127.0.0.1:3000)
  test [--quick]    set up what is missing and run every check and test:
                    fmt, clippy, every crate's tests (nextest), the server
                    tests again on a throwaway PostgreSQL, the fuzz targets
                    briefly, wasm32 tests, Playwright, the AI SDK chat
                    clients (ai 7, ai 6); stages run side by side, and a
                    table at the end says where the time went. --quick:
                    only the unit and integration tests on SQLite
  test-postgres     only the server tests on a throwaway PostgreSQL
  chaos <seconds> [<conversations>]
                    the chaos test alone, longer: three server processes on
                    a throwaway PostgreSQL, one killed every few seconds for
                    at least <seconds> (default 200 conversations)
  fuzz [<target> [<seconds>|<file>]]
                    fuzz every target 10 s, one target longer, or replay
                    one input
  setup             only the set-up steps (idempotent)
  build [--release] set up, then build the site and the server
  setup-dev         also install cargo-leptos, for `cargo leptos watch`
  watch             `cargo leptos watch` with the toolchain set-up chose
  bench [--peer|--quick]  build the server in release and print its benchmark
                    table (server and load pinned to one core each); with
                    --peer, the same workload against an AI SDK 7 server
  layers            each crate's module graph, read from the source; fails
                    on a cycle (also a test of `cargo test`)
  help              this text
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("test") => test(&args[1..]),
        Some("test-postgres") => test_postgres(&args[1..]),
        Some("chaos") => chaos(&args[1..]),
        Some("fuzz") => Workspace::locate().and_then(|ws| fuzz::command(&ws, &args[1..])),
        Some("setup") => setup::Setup::detect()
            .and_then(|s| s.ensure_all())
            .map(drop),
        Some("build") => build(&args[1..]).map(drop),
        Some("setup-dev") => setup::Setup::detect()
            .and_then(|s| s.ensure_dev_tools())
            .map(drop),
        Some("watch") => watch(),
        Some("layers") => {
            Workspace::locate().and_then(|ws| layers::run(&ws.root).map_err(Failure::new))
        }
        Some("bench") => Workspace::locate().and_then(|ws| bench::command(&ws, &args[1..])),
        Some("help" | "--help" | "-h") | None => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(Failure::new(format!(
            "unknown command `{other}`\n\n{USAGE}"
        ))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("\nxtask: {failure}");
            ExitCode::FAILURE
        }
    }
}

/// Paths every command needs.
pub struct Workspace {
    /// The folder holding the workspace `Cargo.toml`.
    pub root: PathBuf,
    /// cargo's target directory (honours `CARGO_TARGET_DIR`).
    pub target: PathBuf,
}

impl Workspace {
    fn locate() -> Result<Self, Failure> {
        // CARGO_MANIFEST_DIR is xtask/; the workspace is its parent. `cargo run` sets it
        // for the run too, which wins: two clones sharing one CARGO_TARGET_DIR (CI's cache)
        // may run a binary the other compiled, whose compile-time path is the other clone.
        let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
            .filter(|dir| !dir.is_empty())
            .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
        let root = manifest
            .parent()
            .map(PathBuf::from)
            .ok_or_else(|| Failure::new("cannot find the workspace root"))?;
        let target = match std::env::var_os("CARGO_TARGET_DIR") {
            Some(dir) if !dir.is_empty() => {
                let dir = PathBuf::from(dir);
                if dir.is_absolute() {
                    dir
                } else {
                    root.join(dir)
                }
            }
            _ => root.join("target"),
        };
        Ok(Self { root, target })
    }

    /// Where the site (pkg files and public assets) is written, as cargo-leptos lays it out.
    pub fn site_root(&self) -> PathBuf {
        self.target.join("site")
    }
}

fn parse_release(args: &[String]) -> Result<bool, Failure> {
    match args {
        [] => Ok(false),
        [flag] if flag == "--release" => Ok(true),
        _ => Err(Failure::new(format!(
            "unexpected arguments {args:?}\n\n{USAGE}"
        ))),
    }
}

fn build(args: &[String]) -> Result<(Workspace, PathBuf), Failure> {
    let release = parse_release(args)?;
    let ws = Workspace::locate()?;
    let tools = setup::Setup::detect()?.ensure_all()?;
    site::build_site(&ws, &tools, false)?;
    let server = site::build_server(&ws, release)?;
    Ok((ws, server))
}

fn run(args: &[String]) -> Result<(), Failure> {
    let (ws, server) = build(args)?;
    let addr = std::env::var("LEPTOS_SITE_ADDR").unwrap_or_else(|_| "127.0.0.1:3000".into());
    println!("\nxtask: serving datban on http://{addr} (Ctrl-C stops it)\n");
    let mut command = std::process::Command::new(&server);
    command.current_dir(&ws.root);
    site::server_env(&mut command, &ws, &addr);
    cmd::run(&mut command)
}

fn test(args: &[String]) -> Result<(), Failure> {
    let quick = match args {
        [] => false,
        [flag] if flag == "--quick" => true,
        _ => {
            return Err(Failure::new(format!(
                "`test` takes only `--quick`\n\n{USAGE}"
            )))
        }
    };
    let ws = Workspace::locate()?;
    if quick {
        return test_quick(&ws);
    }
    let tools = setup::Setup::detect()?.ensure_all()?;
    let stages = stages::Stages::new(&ws.target.join("xtask-logs"))?;
    let result = test_stages(&ws, &tools, &stages);
    println!("\nxtask: where the time went (seconds since the tests began)\n");
    print!("{}", stages.table());
    result?;
    println!("\nxtask: every check passed");
    Ok(())
}

/// Every check and test, each stage as early as what it needs allows.
///
/// On two cores the order is what sets the time. Three chains start at once: the native
/// one (clippy, then the test build, then the tests on SQLite and on PostgreSQL side by
/// side), the wasm one (the hydrate bundle, then `shared`'s tests on wasm32; in a target
/// directory of its own, so that neither chain waits for the other's lock, and niced, so
/// that it takes what the native chain leaves idle) and the fuzz build (niced the most; it
/// has its own target directory already). The browser suites need the server binary of
/// the test build and the bundle; the fuzz runs need their build.
fn test_stages(
    ws: &Workspace,
    tools: &setup::Tools,
    stages: &stages::Stages,
) -> Result<(), Failure> {
    stages.run("cargo fmt --check", || {
        cmd::run(cmd::cargo(ws).args(["fmt", "--all", "--check"]))
    })?;
    std::thread::scope(|scope| {
        let fuzz = scope.spawn(|| {
            let fuzz = stages.logged("fuzz build (niced)", || fuzz::Fuzz::prepare(ws, true))?;
            stages.logged("fuzz runs (libFuzzer, 10 s a target)", || {
                fuzz.run_every_target(fuzz::TEST_SECONDS)
            })
        });
        let wasm = scope.spawn(|| {
            stages.logged("hydrate bundle (wasm32, niced)", || {
                site::build_site(ws, tools, true)
            })?;
            stages.logged("shared's tests on wasm32", || {
                site::test_shared_on_wasm(ws, tools)
            })
        });
        let native = (|| {
            // Clippy's lints run inside the test build's own compile of the workspace's
            // crates (clippy-driver as cargo's workspace wrapper, as `cargo clippy` does
            // for a check): a separate `cargo clippy` checked every dependency a second
            // time, about 300 CPU-s of a cold run on two cores.
            let lints = Lints::find();
            if lints.is_none() {
                stages.run("cargo clippy", || cmd::run(cmd::cargo(ws).args(CLIPPY)))?;
            }
            let cargo = || {
                let mut command = cmd::cargo(ws);
                if let Some(lints) = &lints {
                    lints.apply(&mut command);
                }
                command
            };
            let title = if lints.is_some() {
                "test build with clippy (every crate's tests, the server binary)"
            } else {
                "test build (every crate's tests, the server binary)"
            };
            stages.run(title, || {
                cmd::run(cargo().args(["test", "--workspace", "--all-targets", "--no-run"]))
            })?;
            std::thread::scope(|tests| {
                let postgres = tests.spawn(|| {
                    stages.logged("server tests on PostgreSQL (nextest)", || {
                        postgres::with_cluster(|url| cmd::run(&mut rust_tests(cargo(), Some(url))))
                    })
                });
                let sqlite = stages.logged("every crate's tests on SQLite (nextest)", || {
                    cmd::run(&mut rust_tests(cargo(), None))?;
                    cmd::run(cargo().args(["test", "--workspace", "--doc"]))
                });
                join(postgres).and(sqlite)
            })
        })();
        // The browser suites need the bundle and the server the test build linked.
        let wasm = join(wasm);
        let browser = native.as_ref().ok().and(wasm.as_ref().ok()).map(|_| {
            let server = site::test_server_binary(ws);
            std::thread::scope(|suites| {
                let aisdk = suites.spawn(|| {
                    stages.logged("AI SDK chat clients (ai 7, ai 6)", || {
                        e2e::run_aisdk(ws, &server)
                    })
                });
                let playwright = stages.logged("Playwright in Chromium", || {
                    e2e::run_playwright(ws, &server)
                });
                join(aisdk).and(playwright)
            })
        });
        let fuzz = join(fuzz);
        native.and(wasm).and(browser.unwrap_or(Ok(()))).and(fuzz)
    })
}

/// `cargo xtask test --quick`: the inner loop, every crate's unit and integration tests on
/// SQLite, without set-up, the browser, PostgreSQL or the fuzzers.
fn test_quick(ws: &Workspace) -> Result<(), Failure> {
    let stages = stages::Stages::new(&ws.target.join("xtask-logs"))?;
    let result = stages.run("every crate's tests on SQLite (nextest)", || {
        cmd::run(&mut rust_tests(cmd::cargo(ws), None))
    });
    println!();
    print!("{}", stages.table());
    result
}

/// How many tests of one nextest run go at once: on SQLite, and on PostgreSQL, whose tests
/// mostly wait on the database server (a database created and dropped for each). Most
/// of the integration tests wait (on a server process starting, a killed process), so
/// more than the two cores; the SQLite and PostgreSQL runs go side by side.
const TEST_THREADS: [&str; 2] = ["4", "6"];

/// The workspace's unit and integration tests: on SQLite, or with `postgres` (an admin
/// URL) the server's on PostgreSQL. Through cargo-nextest where it is installed (a
/// process a test, several at once), else `cargo test`. Either way the same
/// `--workspace` build as the test build, so nothing is compiled twice.
fn rust_tests(mut command: std::process::Command, postgres: Option<&str>) -> std::process::Command {
    let nextest =
        cmd::output(std::process::Command::new("cargo").args(["nextest", "--version"])).is_some();
    if nextest {
        let threads = TEST_THREADS[usize::from(postgres.is_some())];
        command.args(["nextest", "run", "--workspace", "--test-threads", threads]);
        command.args(["--no-fail-fast", "--cargo-quiet"]);
        if postgres.is_some() {
            command.args(["-E", "package(server)"]);
        }
    } else {
        println!("xtask: cargo-nextest is not installed; the tests run with `cargo test`");
        command.args(["test", "--workspace"]);
    }
    if let Some(url) = postgres {
        command.env(postgres::TEST_URL_ENV, url);
    }
    command
}

/// `cargo clippy`'s arguments, where clippy runs on its own.
const CLIPPY: [&str; 6] = [
    "clippy",
    "--workspace",
    "--all-targets",
    "--",
    "-D",
    "warnings",
];

/// Clippy's driver, to compile the workspace's own crates with its lints on (what
/// `cargo clippy` sets up for `cargo check`): the crates are then linted and built in one
/// compile. Every cargo command of one build must carry it, or cargo would compile the
/// workspace's crates again without it.
struct Lints {
    driver: std::path::PathBuf,
}

impl Lints {
    /// The toolchain's `clippy-driver`, when it has one.
    fn find() -> Option<Self> {
        let sysroot =
            cmd::output(std::process::Command::new("rustc").args(["--print", "sysroot"]))?;
        let driver = std::path::Path::new(sysroot.trim())
            .join("bin")
            .join(format!("clippy-driver{}", std::env::consts::EXE_SUFFIX));
        driver.is_file().then_some(Self { driver })
    }

    fn apply(&self, command: &mut std::process::Command) {
        // cargo-clippy's own protocol: each argument for the driver ends with this mark.
        let args: String = CLIPPY[4..]
            .iter()
            .map(|arg| format!("{arg}__CLIPPY_HACKERY__"))
            .collect();
        command
            .env("RUSTC_WORKSPACE_WRAPPER", &self.driver)
            .env("CLIPPY_ARGS", args);
    }
}

/// A stage thread's result; a panic in it is a failure, not a second panic here.
fn join(handle: std::thread::ScopedJoinHandle<'_, Result<(), Failure>>) -> Result<(), Failure> {
    handle
        .join()
        .unwrap_or_else(|_| Err(Failure::new("a stage of the test command panicked")))
}

fn test_postgres(args: &[String]) -> Result<(), Failure> {
    if !args.is_empty() {
        return Err(Failure::new(format!(
            "`test-postgres` takes no arguments\n\n{USAGE}"
        )));
    }
    let ws = Workspace::locate()?;
    cmd::step("server tests on PostgreSQL (a throwaway cluster)");
    postgres::with_cluster(|url| cmd::run(&mut rust_tests(cmd::cargo(&ws), Some(url))))
}

fn chaos(args: &[String]) -> Result<(), Failure> {
    let number = |index: usize, default: u64| -> Result<u64, Failure> {
        match args.get(index) {
            None => Ok(default),
            Some(text) => text.parse().map_err(|_| {
                Failure::new(format!(
                    "`chaos` takes whole numbers, not `{text}`\n\n{USAGE}"
                ))
            }),
        }
    };
    if args.len() > 2 {
        return Err(Failure::new(format!(
            "`chaos` takes at most two numbers\n\n{USAGE}"
        )));
    }
    let seconds = number(0, 120)?;
    let conversations = number(1, 200)?;
    let ws = Workspace::locate()?;
    cmd::step(&format!(
        "chaos: {conversations} conversations, kills for at least {seconds} s (a throwaway PostgreSQL)"
    ));
    postgres::chaos(&ws, seconds, conversations)
}

fn watch() -> Result<(), Failure> {
    let ws = Workspace::locate()?;
    setup::Setup::detect()?.ensure_dev_tools()?;
    let mut command = std::process::Command::new("cargo");
    command
        .current_dir(&ws.root)
        // `--split`: the `#[wasm_split]` chunks are cut out of the bundle as in
        // `cargo xtask build`; without it their loader imports could not be resolved.
        .args(["leptos", "watch", "--split"])
        .env_remove("CARGO")
        .env_remove("RUSTC")
        // cargo-leptos may set RUSTFLAGS for its builds, which replaces the config's list.
        .env("RUSTFLAGS", site::with_erased_views());
    setup::cargo_leptos_env(&mut command, &ws);
    cmd::run(&mut command)
}

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

use std::{path::PathBuf, process::ExitCode};

pub use cmd::Failure;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  run [--release]   set up what is missing, build the site and serve it
                    (LEPTOS_SITE_ADDR, default 127.0.0.1:3000)
  test              set up what is missing and run every check and test:
                    fmt, clippy, cargo test, the server tests again on a
                    throwaway PostgreSQL, the fuzz targets briefly, wasm32
                    tests, Playwright, the AI SDK chat clients (ai 7, ai 6)
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
        // CARGO_MANIFEST_DIR is xtask/ at compile time; the workspace is its parent.
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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
    site::build_site(&ws, &tools)?;
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
    if !args.is_empty() {
        return Err(Failure::new(format!(
            "`test` takes no arguments\n\n{USAGE}"
        )));
    }
    let ws = Workspace::locate()?;
    let tools = setup::Setup::detect()?.ensure_all()?;
    let started = std::time::Instant::now();

    cmd::step("cargo fmt --check");
    cmd::run(cmd::cargo(&ws).args(["fmt", "--all", "--check"]))?;
    cmd::step("cargo clippy");
    cmd::run(cmd::cargo(&ws).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    cmd::step("cargo test --workspace");
    cmd::run(cmd::cargo(&ws).args(["test", "--workspace"]))?;
    cmd::step("server tests on PostgreSQL (a throwaway cluster)");
    postgres::test_server(&ws)?;
    cmd::step("fuzz targets (libFuzzer), each briefly");
    fuzz::run_all(&ws, fuzz::TEST_SECONDS)?;

    site::build_site(&ws, &tools)?;
    cmd::step("shared tests on wasm32 (wasm-bindgen-test-runner, Node.js)");
    site::test_shared_on_wasm(&ws, &tools)?;

    let server = site::build_server(&ws, false)?;
    cmd::step("Playwright end-to-end tests in Chromium");
    e2e::run_playwright(&ws, &server)?;
    cmd::step("AI SDK chat clients (ai 7 and ai 6) over a socket");
    e2e::run_aisdk(&ws, &server)?;

    println!(
        "\nxtask: every check passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn test_postgres(args: &[String]) -> Result<(), Failure> {
    if !args.is_empty() {
        return Err(Failure::new(format!(
            "`test-postgres` takes no arguments\n\n{USAGE}"
        )));
    }
    let ws = Workspace::locate()?;
    cmd::step("server tests on PostgreSQL (a throwaway cluster)");
    postgres::test_server(&ws)
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

//! Idempotent set-up: everything the build and the tests need that a fresh machine lacks.
//!
//! Each step first checks whether its result is already there, so a second run does
//! nothing and takes seconds. Compiled tools are cached outside the clone
//! (`~/.cache/datban/tools`, or `DATBAN_TOOLS_DIR`) so every clone reuses them.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
    process::Command,
};

use crate::{
    cmd::{self, Failure},
    Workspace,
};

/// The rustup toolchain name under which Debian's rustc-web is linked.
const DEBIAN_TOOLCHAIN: &str = "debian-web";
/// Where Debian's rust-web-src puts the standard library sources that build-std needs.
const DEBIAN_STD_SRC: &str = "/usr/lib/rustlib/src/rust/library/std";
/// Debian packages of the wasm route (see README, "Toolchain").
const DEBIAN_WASM_PACKAGES: &[&str] = &["rustc-web", "cargo-web", "rust-web-src", "lld-22"];
/// The browser the Playwright suite drives.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// cargo-leptos version `cargo xtask setup-dev` installs.
const CARGO_LEPTOS_VERSION: &str = "0.3.11";

/// How this machine builds for `wasm32-unknown-unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WasmToolchain {
    /// rustup's own toolchain has the wasm32 target installed: a plain cargo build.
    Rustup,
    /// Debian's rustc-web linked as a rustup toolchain; std is built from source.
    DebianWeb,
}

impl WasmToolchain {
    /// Sets the environment a cargo command needs to build for wasm32 with this toolchain.
    pub fn apply_env(self, command: &mut Command) {
        if self == Self::DebianWeb {
            // -Zbuild-std is accepted by a stable cargo only with RUSTC_BOOTSTRAP.
            command
                .env("RUSTC_BOOTSTRAP", "1")
                .env("RUSTUP_TOOLCHAIN", DEBIAN_TOOLCHAIN);
        }
    }

    /// Extra cargo arguments for a wasm32 build.
    pub fn cargo_args(self) -> &'static [&'static str] {
        match self {
            Self::Rustup => &[],
            Self::DebianWeb => &["-Zbuild-std=std,panic_abort"],
        }
    }
}

/// What set-up found or installed, for the build steps to use.
pub struct Tools {
    /// How to build the wasm half.
    pub wasm: WasmToolchain,
    /// `wasm-bindgen` at exactly the version in Cargo.lock.
    pub wasm_bindgen: PathBuf,
    /// The matching `wasm-bindgen-test-runner`.
    pub wasm_bindgen_test_runner: PathBuf,
    /// binaryen's `wasm-opt` from the end2end npm packages.
    pub wasm_opt: PathBuf,
    /// Whether the hydrate build can compile std from source (`-Zbuild-std`), which lets
    /// it drop the panic machinery: always on the Debian route, on the rustup route when
    /// the `rust-src` component is there or can be added.
    pub std_sources: bool,
}

/// The set-up steps and what they need to know about this machine.
pub struct Setup {
    ws: Workspace,
    root: bool,
    apt_updated: bool,
}

impl Setup {
    /// Looks at the workspace and the current user.
    pub fn detect() -> Result<Self, Failure> {
        Ok(Self {
            ws: Workspace::locate()?,
            root: cmd::is_root(),
            apt_updated: false,
        })
    }

    /// Runs every set-up step the run and test commands need.
    pub fn ensure_all(mut self) -> Result<Tools, Failure> {
        cmd::step("set-up (skips what is already there)");
        self.ensure_node()?;
        self.ensure_chromium()?;
        let wasm = self.ensure_wasm_toolchain()?;
        let std_sources = match wasm {
            WasmToolchain::DebianWeb => true,
            WasmToolchain::Rustup => self.ensure_rust_src(),
        };
        let (wasm_bindgen, wasm_bindgen_test_runner) = self.ensure_wasm_bindgen()?;
        self.ensure_npm_packages()?;
        let wasm_opt = self.ws.root.join("end2end/node_modules/.bin/wasm-opt");
        if !wasm_opt.exists() {
            return Err(Failure::new(format!(
                "{} is missing after `npm ci`; is binaryen in end2end/package.json?",
                wasm_opt.display()
            )));
        }
        println!("set-up: done");
        Ok(Tools {
            wasm,
            wasm_bindgen,
            wasm_bindgen_test_runner,
            wasm_opt,
            std_sources,
        })
    }

    /// Set-up plus what `cargo leptos watch` needs: the Debian toolchain (cargo-leptos
    /// needs cargo ≥ 1.96 to compile, and its wasm builds use `-Zbuild-std`, which needs
    /// std sources that toolchain ships) and cargo-leptos itself.
    pub fn ensure_dev_tools(mut self) -> Result<Tools, Failure> {
        self.ensure_debian_toolchain("cargo-leptos (it needs cargo 1.96 or newer)")?;
        ensure_cargo_leptos()?;
        self.ensure_all()
    }

    /// Installs Debian packages as root, or stops with the exact `apt-get` line to run.
    pub fn apt_install(&mut self, packages: &[&str], why: &str) -> Result<(), Failure> {
        if !self.root {
            return Err(Failure::new(format!(
                "{why} needs Debian packages that are not installed, and only root can install them.\n\
                 Run as root (or with sudo):\n\n    apt-get update && apt-get install -y {}\n\n\
                 then run this command again.",
                packages.join(" ")
            )));
        }
        if !self.apt_updated {
            println!("set-up: apt-get update");
            cmd::run(Command::new("apt-get").args(["update", "-qq"]))?;
            self.apt_updated = true;
        }
        println!("set-up: apt-get install {}", packages.join(" "));
        cmd::run(
            Command::new("apt-get")
                .args(["install", "-y", "-qq"])
                .args(packages)
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )
        .map_err(|failure| Failure::new(format!("installing packages for {why}: {failure}")))
    }

    fn ensure_node(&mut self) -> Result<(), Failure> {
        let has = |tool: &str| cmd::output(Command::new(tool).arg("--version")).is_some();
        if has("node") && has("npm") {
            return Ok(());
        }
        self.apt_install(&["nodejs", "npm"], "the Playwright tests (Node.js and npm)")
    }

    fn ensure_chromium(&mut self) -> Result<(), Failure> {
        if Path::new(CHROMIUM).exists() {
            return Ok(());
        }
        self.apt_install(&["chromium"], "the browser tests (Chromium)")
    }

    fn ensure_wasm_toolchain(&mut self) -> Result<WasmToolchain, Failure> {
        let rustup_has_target = || {
            cmd::output(Command::new("rustup").current_dir(&self.ws.root).args([
                "target",
                "list",
                "--installed",
            ]))
            .is_some_and(|out| out.lines().any(|l| l.trim() == "wasm32-unknown-unknown"))
        };
        // Lets a developer (or a test of this set-up) take the Debian route on a machine
        // where rustup could download the target too.
        let forced = std::env::var("DATBAN_WASM_TOOLCHAIN").unwrap_or_default();
        match forced.as_str() {
            "" => {}
            "rustup" | DEBIAN_TOOLCHAIN => {}
            other => {
                return Err(Failure::new(format!(
                    "DATBAN_WASM_TOOLCHAIN={other}: expected `rustup` or `{DEBIAN_TOOLCHAIN}`"
                )))
            }
        }
        let force_debian = forced == DEBIAN_TOOLCHAIN;
        if !force_debian && rustup_has_target() {
            return Ok(WasmToolchain::Rustup);
        }
        if debian_toolchain_ready() {
            return Ok(WasmToolchain::DebianWeb);
        }
        // The usual route on a machine that can download toolchains; bounded, because
        // on a closed network it may hang instead of failing.
        if !force_debian {
            println!("set-up: trying `rustup target add wasm32-unknown-unknown` (60 s at most)");
            let added = Command::new("timeout")
                .args(["60", "rustup", "target", "add", "wasm32-unknown-unknown"])
                .current_dir(&self.ws.root)
                .status()
                .is_ok_and(|s| s.success());
            if added && rustup_has_target() {
                return Ok(WasmToolchain::Rustup);
            }
        }
        if force_debian {
            println!(
                "set-up: DATBAN_WASM_TOOLCHAIN=debian-web: using Debian's rustc-web with build-std"
            );
        } else {
            println!(
                "set-up: rustup cannot add wasm32 here; using Debian's rustc-web with build-std"
            );
        }
        self.ensure_debian_toolchain("building the wasm32 client")?;
        Ok(WasmToolchain::DebianWeb)
    }

    /// rustup's `rust-src` component (std's sources, for `-Zbuild-std`): tried once, briefly;
    /// without it the hydrate bundle is built anyway, only somewhat larger.
    fn ensure_rust_src(&self) -> bool {
        let installed = || {
            cmd::output(Command::new("rustup").current_dir(&self.ws.root).args([
                "component",
                "list",
                "--installed",
            ]))
            .is_some_and(|out| out.lines().any(|l| l.trim().starts_with("rust-src")))
        };
        if installed() {
            return true;
        }
        println!("set-up: trying `rustup component add rust-src` (60 s at most)");
        let added = Command::new("timeout")
            .args(["60", "rustup", "component", "add", "rust-src"])
            .current_dir(&self.ws.root)
            .status()
            .is_ok_and(|s| s.success());
        if added && installed() {
            return true;
        }
        println!(
            "set-up: no rust-src for rustup's toolchain: the hydrate build keeps std's panic \
             code (a larger bundle)"
        );
        false
    }

    /// Debian's rustc-web (1.96, with std sources) linked as the rustup toolchain `debian-web`.
    fn ensure_debian_toolchain(&mut self, why: &str) -> Result<(), Failure> {
        if debian_toolchain_ready() {
            return Ok(());
        }
        let missing: Vec<&str> = DEBIAN_WASM_PACKAGES
            .iter()
            .copied()
            .filter(|p| !deb_installed(p))
            .collect();
        if !missing.is_empty() {
            self.apt_install(&missing, why)?;
        }
        let rustup_lists_it = cmd::output(Command::new("rustup").args(["toolchain", "list"]))
            .is_some_and(|out| out.lines().any(|l| l.starts_with(DEBIAN_TOOLCHAIN)));
        if !rustup_lists_it {
            cmd::run(Command::new("rustup").args(["toolchain", "link", DEBIAN_TOOLCHAIN, "/usr"]))?;
        }
        if debian_toolchain_ready() {
            Ok(())
        } else {
            Err(Failure::new(
                "Debian's rustc-web is installed but the `debian-web` toolchain does not work: \
                 check `RUSTUP_TOOLCHAIN=debian-web rustc --version`, the std sources in \
                 /usr/lib/rustlib/src and /usr/bin/rust-lld",
            ))
        }
    }

    fn ensure_wasm_bindgen(&self) -> Result<(PathBuf, PathBuf), Failure> {
        let version = wasm_bindgen_version(&self.ws.root.join("Cargo.lock"))?;
        let root = tools_dir().join(format!("wasm-bindgen-cli-{version}"));
        let bin = root.join("bin/wasm-bindgen");
        let runner = root.join("bin/wasm-bindgen-test-runner");
        let installed = cmd::output(Command::new(&bin).arg("--version"))
            .is_some_and(|out| out.split_whitespace().nth(1) == Some(version.as_str()));
        if installed && runner.exists() {
            return Ok((bin, runner));
        }
        println!(
            "set-up: compiling wasm-bindgen-cli {version} (once per machine; several minutes)"
        );
        // `--locked` fails: a version its lock file pins is no longer on crates.io.
        cmd::run(
            Command::new("cargo")
                .args(["install", "wasm-bindgen-cli", "--force", "--version"])
                .arg(format!("={version}"))
                .arg("--root")
                .arg(&root)
                .current_dir(std::env::temp_dir())
                .env_remove("CARGO_TARGET_DIR")
                // A tool, not our product: a quick build beats a few percent of speed.
                .env("CARGO_PROFILE_RELEASE_LTO", "false")
                .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16"),
        )?;
        Ok((bin, runner))
    }

    fn ensure_npm_packages(&self) -> Result<(), Failure> {
        let dir = self.ws.root.join("end2end");
        let lock = read(&dir.join("package-lock.json"))?;
        let stamp = dir.join("node_modules/.datban-installed-lock");
        if std::fs::read_to_string(&stamp).is_ok_and(|installed| installed == lock) {
            return Ok(());
        }
        println!("set-up: npm ci in end2end/");
        cmd::run(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&dir)
                // Playwright must use Debian's Chromium; its own download cannot work here.
                .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1"),
        )?;
        std::fs::write(&stamp, lock)
            .map_err(|e| Failure::new(format!("cannot write {}: {e}", stamp.display())))
    }
}

/// Installs cargo-leptos (into `~/.cargo/bin`, where cargo finds subcommands) if missing.
fn ensure_cargo_leptos() -> Result<(), Failure> {
    let installed = cmd::output(Command::new("cargo-leptos").arg("--version"))
        .is_some_and(|out| out.ends_with(CARGO_LEPTOS_VERSION));
    if installed {
        return Ok(());
    }
    cmd::step(&format!(
        "installing cargo-leptos {CARGO_LEPTOS_VERSION} (once per machine; long)"
    ));
    cmd::run(
        Command::new("cargo")
            .args([
                "install",
                "cargo-leptos",
                "--locked",
                "--features",
                "no_downloads",
            ])
            .args(["--version", CARGO_LEPTOS_VERSION])
            .current_dir(std::env::temp_dir())
            .env("RUSTUP_TOOLCHAIN", DEBIAN_TOOLCHAIN)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO")
            .env_remove("RUSTC")
            // Its release profile uses fat LTO on one codegen unit: 47 minutes on two cores.
            .env("CARGO_PROFILE_RELEASE_LTO", "false")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16"),
    )
}

/// The environment `cargo leptos` needs: the Debian toolchain (the workspace passes
/// `-Zbuild-std` to its wasm build) and, first on PATH, our cached wasm-bindgen and the
/// end2end npm binaries (wasm-opt), which cargo-leptos looks for there.
pub fn cargo_leptos_env(command: &mut Command, ws: &Workspace) {
    WasmToolchain::DebianWeb.apply_env(command);
    command.env("PATH", path_with_tools(ws));
}

fn path_with_tools(ws: &Workspace) -> OsString {
    let mut dirs = vec![ws.root.join("end2end/node_modules/.bin")];
    if let Ok(version) = wasm_bindgen_version(&ws.root.join("Cargo.lock")) {
        dirs.push(tools_dir().join(format!("wasm-bindgen-cli-{version}/bin")));
    }
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).unwrap_or_else(|_| std::env::var_os("PATH").unwrap_or_default())
}

/// The tools cache (`DATBAN_TOOLS_DIR`, else `~/.cache/datban/tools`).
pub(crate) fn tools_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("DATBAN_TOOLS_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("datban/tools")
}

fn debian_toolchain_ready() -> bool {
    Path::new(DEBIAN_STD_SRC).exists()
        && Path::new("/usr/bin/rust-lld").exists()
        && cmd::output(
            Command::new("rustc")
                .env("RUSTUP_TOOLCHAIN", DEBIAN_TOOLCHAIN)
                .arg("--version"),
        )
        .is_some()
}

fn deb_installed(package: &str) -> bool {
    cmd::output(Command::new("dpkg-query").args(["-W", "-f=${Status}", package]))
        .is_some_and(|status| status.ends_with("installed") && !status.contains("not-installed"))
}

fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::new(format!("cannot read {}: {e}", path.display())))
}

/// The `wasm-bindgen` version Cargo.lock pins; the CLI must match it exactly.
fn wasm_bindgen_version(lock: &Path) -> Result<String, Failure> {
    parse_locked_version(&read(lock)?, "wasm-bindgen").ok_or_else(|| {
        Failure::new(format!(
            "{} has no wasm-bindgen package; run `cargo generate-lockfile`",
            lock.display()
        ))
    })
}

fn parse_locked_version(lock: &str, package: &str) -> Option<String> {
    let wanted = format!("name = \"{package}\"");
    let mut lines = lock.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line == wanted {
            let version = lines
                .next()?
                .strip_prefix("version = \"")?
                .strip_suffix('"')?;
            return Some(version.to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_exact_package_not_a_prefix() {
        let lock = "[[package]]\nname = \"wasm-bindgen-macro\"\nversion = \"9.9.9\"\n\n\
                    [[package]]\nname = \"wasm-bindgen\"\nversion = \"0.2.130\"\n";
        assert_eq!(
            parse_locked_version(lock, "wasm-bindgen").as_deref(),
            Some("0.2.130")
        );
        assert_eq!(parse_locked_version(lock, "leptos"), None);
    }

    #[test]
    fn this_workspace_pins_wasm_bindgen() {
        let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
        let version = wasm_bindgen_version(&lock).unwrap();
        assert!(version.starts_with("0.2."), "{version}");
    }
}

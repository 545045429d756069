//! Building the site the way cargo-leptos lays it out:
//! `<target>/site/pkg/datban.{js,wasm,css}` plus everything in `public/`.

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
    process::Command,
};

use crate::{
    cmd::{self, Failure},
    setup::Tools,
    Workspace,
};

/// Must match `name` in `[[workspace.metadata.leptos]]` and `LEPTOS_OUTPUT_NAME` in
/// `.cargo/config.toml`.
pub const OUTPUT_NAME: &str = "datban";
const WASM_TARGET: &str = "wasm32-unknown-unknown";
/// The size-optimised profile, used for the hydrate build only.
const WASM_PROFILE: &str = "wasm-release";
/// Compiler flags of the hydrate build only (unstable, hence `RUSTC_BOOTSTRAP`, which both
/// toolchain routes accept): no file/line/column strings for panics, and `{:?}` prints
/// nothing, so no `Debug` impl is kept; the browser shows neither.
const WASM_RUSTFLAGS: &[&str] = &["-Zlocation-detail=none", "-Zfmt-debug=none"];
/// With std built from source as well: a panic traps at once, so std's panic and
/// formatting code is left out. (The `panic_immediate_abort` std feature became this
/// panic strategy in Rust 1.92.)
const WASM_IMMEDIATE_ABORT_RUSTFLAGS: &[&str] = &["-Zunstable-options", "-Cpanic=immediate-abort"];
/// binaryen's passes for the hydrate bundle: size first, and no custom sections (names,
/// debug info, the producers list) the browser does not need. (`--converge` doubles the
/// time for 0.1 %; `--low-memory-unused` saves 0.7 % but assumes the stack never reaches
/// the first KiB of memory.)
const WASM_OPT_FLAGS: &[&str] = &["-Oz", "--strip-debug", "--strip-producers"];

fn io_error(what: &str, path: &Path, error: std::io::Error) -> Failure {
    Failure::new(format!("cannot {what} {}: {error}", path.display()))
}

/// Builds the hydrate bundle, stylesheet and assets into the site root.
pub fn build_site(ws: &Workspace, tools: &Tools) -> Result<(), Failure> {
    let site = ws.site_root();
    let pkg = site.join("pkg");
    fs::create_dir_all(&pkg).map_err(|e| io_error("create", &pkg, e))?;

    cmd::step("hydrate build (wasm32, size-optimised profile)");
    let mut cargo = cmd::cargo(ws);
    cargo
        .args([
            "build",
            "--package",
            "frontend",
            "--lib",
            "--target",
            WASM_TARGET,
        ])
        .args([
            "--profile",
            WASM_PROFILE,
            "--no-default-features",
            "--features",
            "hydrate",
        ])
        .args(tools.wasm.cargo_args());
    tools.wasm.apply_env(&mut cargo);
    let mut rustflags: Vec<&str> = WASM_RUSTFLAGS.to_vec();
    if tools.std_sources {
        if tools.wasm.cargo_args().is_empty() {
            cargo.arg("-Zbuild-std=std,panic_abort");
        }
        rustflags.extend(WASM_IMMEDIATE_ABORT_RUSTFLAGS);
    }
    // Appended to the caller's flags; with `--target`, cargo applies them to the wasm
    // crates only, not to build scripts and proc macros.
    let existing = std::env::var("RUSTFLAGS").unwrap_or_default();
    let rustflags = existing
        .split_whitespace()
        .chain(rustflags)
        .collect::<Vec<_>>()
        .join(" ");
    cargo
        .env("RUSTC_BOOTSTRAP", "1")
        .env("RUSTFLAGS", rustflags);
    cmd::run(&mut cargo)?;

    let wasm_in = ws
        .target
        .join(WASM_TARGET)
        .join(WASM_PROFILE)
        .join("frontend.wasm");
    cmd::step("wasm-bindgen and wasm-opt");
    let bindgen_out = ws.target.join("xtask-bindgen");
    cmd::run(
        Command::new(&tools.wasm_bindgen)
            .args([
                "--target",
                "web",
                "--no-typescript",
                "--out-name",
                OUTPUT_NAME,
            ])
            .arg("--out-dir")
            .arg(&bindgen_out)
            .arg(&wasm_in),
    )?;
    // cargo-leptos renames `<name>_bg.wasm` to `<name>.wasm`, and Leptos's hydration
    // script asks for that name; do the same so either build tool's output works.
    let wasm_out = pkg.join(format!("{OUTPUT_NAME}.wasm"));
    cmd::run(
        Command::new(&tools.wasm_opt)
            .args(WASM_OPT_FLAGS)
            .args(["--enable-bulk-memory", "--enable-nontrapping-float-to-int"])
            .args([
                "--enable-sign-ext",
                "--enable-mutable-globals",
                "--enable-reference-types",
            ])
            .args(["--enable-multivalue"])
            .arg(bindgen_out.join(format!("{OUTPUT_NAME}_bg.wasm")))
            .arg("-o")
            .arg(&wasm_out),
    )?;
    let js_out = pkg.join(format!("{OUTPUT_NAME}.js"));
    copy(&bindgen_out.join(format!("{OUTPUT_NAME}.js")), &js_out)?;

    let css_out = pkg.join(format!("{OUTPUT_NAME}.css"));
    copy(&ws.root.join("style/main.css"), &css_out)?;
    copy_dir(&ws.root.join("public"), &site)?;

    for file in [&wasm_out, &js_out, &css_out] {
        precompress(file)?;
    }
    let raw = fs::metadata(&wasm_out)
        .map_err(|e| io_error("read", &wasm_out, e))?
        .len();
    let gz = fs::metadata(wasm_out.with_extension("wasm.gz"))
        .map(|m| m.len())
        .unwrap_or(0);
    let br = fs::metadata(wasm_out.with_extension("wasm.br"))
        .map(|m| m.len())
        .unwrap_or(0);
    println!(
        "site: {} ({raw} bytes; gzip {gz}; brotli {br})",
        wasm_out.display()
    );
    Ok(())
}

/// Builds the server binary and returns its path.
pub fn build_server(ws: &Workspace, release: bool) -> Result<PathBuf, Failure> {
    cmd::step(if release {
        "server build (release)"
    } else {
        "server build (dev profile, shared with the tests)"
    });
    let mut cargo = cmd::cargo(ws);
    cargo.args(["build", "--package", "server", "--bin", "server"]);
    if release {
        cargo.arg("--release");
    }
    cmd::run(&mut cargo)?;
    Ok(ws
        .target
        .join(if release { "release" } else { "debug" })
        .join("server"))
}

/// The environment a server built by xtask needs to find the site (cargo-leptos sets
/// the same variables when it starts the server).
pub fn server_env(command: &mut Command, ws: &Workspace, addr: &str) {
    command
        .env("LEPTOS_OUTPUT_NAME", OUTPUT_NAME)
        .env("LEPTOS_SITE_ROOT", ws.site_root())
        .env("LEPTOS_SITE_PKG_DIR", "pkg")
        .env("LEPTOS_SITE_ADDR", addr)
        .env("LEPTOS_ENV", "PROD");
}

/// Runs `shared`'s unit tests compiled for wasm32, under Node.js.
pub fn test_shared_on_wasm(ws: &Workspace, tools: &Tools) -> Result<(), Failure> {
    // The ordinary test profile: the size-optimised one sets panic=abort, which tests
    // ignore, and with build-std that links two copies of alloc.
    let mut cargo = cmd::cargo(ws);
    cargo
        .args(["test", "--package", "shared", "--target", WASM_TARGET])
        .args(tools.wasm.cargo_args())
        .env(
            "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER",
            &tools.wasm_bindgen_test_runner,
        );
    tools.wasm.apply_env(&mut cargo);
    cmd::run(&mut cargo)
}

fn copy(from: &Path, to: &Path) -> Result<(), Failure> {
    fs::copy(from, to).map(drop).map_err(|e| {
        Failure::new(format!(
            "cannot copy {} to {}: {e}",
            from.display(),
            to.display()
        ))
    })
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), Failure> {
    let entries = fs::read_dir(from).map_err(|e| io_error("read", from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io_error("read", from, e))?;
        let path = entry.path();
        let dest = to.join(entry.file_name());
        if path.is_dir() {
            fs::create_dir_all(&dest).map_err(|e| io_error("create", &dest, e))?;
            copy_dir(&path, &dest)?;
        } else {
            copy(&path, &dest)?;
        }
    }
    Ok(())
}

/// Writes `<file>.gz` and `<file>.br` beside `file`; the server sends them to browsers
/// that accept the encoding instead of compressing on every request.
fn precompress(file: &Path) -> Result<(), Failure> {
    let data = fs::read(file).map_err(|e| io_error("read", file, e))?;
    let gz_path = PathBuf::from(format!("{}.gz", file.display()));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&data)
        .and_then(|()| gz.finish())
        .and_then(|bytes| fs::write(&gz_path, bytes))
        .map_err(|e| io_error("write", &gz_path, e))?;

    let br_path = PathBuf::from(format!("{}.br", file.display()));
    let mut br = Vec::new();
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: 22,
        ..Default::default()
    };
    brotli::BrotliCompress(&mut data.as_slice(), &mut br, &params)
        .and_then(|_| fs::write(&br_path, br))
        .map_err(|e| io_error("write", &br_path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precompressed_files_decode_to_the_original() {
        let dir = std::env::temp_dir().join(format!("xtask-precompress-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("app.js");
        let content = "export function hydrate() {}\n".repeat(200);
        fs::write(&file, &content).unwrap();
        precompress(&file).unwrap();

        let gz = fs::read(dir.join("app.js.gz")).unwrap();
        let mut decoded = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(gz.as_slice()),
            &mut decoded,
        )
        .unwrap();
        assert_eq!(decoded, content);

        let br = fs::read(dir.join("app.js.br")).unwrap();
        let mut out = Vec::new();
        brotli::BrotliDecompress(&mut br.as_slice(), &mut out).unwrap();
        assert_eq!(out, content.as_bytes());
        assert!(br.len() < content.len() / 10);
        fs::remove_dir_all(&dir).unwrap();
    }
}

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
/// nothing, so no `Debug` impl is kept; the browser shows neither. And Leptos's erased
/// views ([`ERASED_VIEWS`]).
const WASM_RUSTFLAGS: &[&str] = &[
    "-Zlocation-detail=none",
    "-Zfmt-debug=none",
    ERASED_VIEWS[0],
    ERASED_VIEWS[1],
];
/// What `.cargo/config.toml` sets for every build: a command that sets RUSTFLAGS (this
/// wasm build, cargo-fuzz) replaces that list and must add it again, since `app` refuses
/// to build without it (a page only hydrates when server and browser agree).
pub const ERASED_VIEWS: [&str; 2] = ["--cfg", "erase_components"];
/// With std built from source as well: a panic traps at once, so std's panic and
/// formatting code is left out. (The `panic_immediate_abort` std feature became this
/// panic strategy in Rust 1.92.)
const WASM_IMMEDIATE_ABORT_RUSTFLAGS: &[&str] = &["-Zunstable-options", "-Cpanic=immediate-abort"];
/// std's features when it is built from source: its size-optimised variants of sorting,
/// formatting and the like, instead of the default `panic-unwind`, which a bundle that
/// aborts on panic has no use for.
const WASM_STD_FEATURES: &str = "-Zbuild-std-features=optimize_for_size";
/// binaryen's passes for the hydrate bundle: size first, and no custom sections (names,
/// debug info, the producers list) the browser does not need. (`--converge` doubles the
/// time for 0.1 %; `--low-memory-unused` saves 0.7 % but assumes the stack never reaches
/// the first KiB of memory.)
const WASM_OPT_FLAGS: &[&str] = &["-Oz", "--strip-debug", "--strip-producers"];

/// The caller's RUSTFLAGS with [`ERASED_VIEWS`] added.
pub fn with_erased_views() -> String {
    let existing = std::env::var("RUSTFLAGS").unwrap_or_default();
    existing
        .split_whitespace()
        .chain(ERASED_VIEWS)
        .collect::<Vec<_>>()
        .join(" ")
}

fn io_error(what: &str, path: &Path, error: std::io::Error) -> Failure {
    Failure::new(format!("cannot {what} {}: {error}", path.display()))
}

/// Builds the hydrate bundle, stylesheet and assets into the site root.
///
/// The bundle is split the way `cargo leptos build --split` does it: the linker keeps its
/// relocations (`--emit-relocs`), `wasm_split_cli_support` cuts every `#[wasm_split]`
/// function (and what only it reaches) out of the linked module into chunks and writes the
/// JS loader they are fetched through, wasm-bindgen then runs on the main module alone
/// (keeping the linker's exports, which the chunks import), the main module's table drops
/// its async hydration entries (`crate::async_hydration`), and wasm-opt shrinks the main
/// module and each chunk separately.
///
/// The wasm builds have a target directory of their own ([`wasm_target_dir`]), so that
/// they can run beside the native builds without waiting for their lock; `background`
/// runs the compiler at the lowest CPU priority, taking what the native builds leave.
pub fn build_site(ws: &Workspace, tools: &Tools, background: bool) -> Result<(), Failure> {
    let site = ws.site_root();
    let pkg = site.join("pkg");
    fs::create_dir_all(&pkg).map_err(|e| io_error("create", &pkg, e))?;

    cmd::step("hydrate build (wasm32, size-optimised profile)");
    let mut cargo = wasm_cargo(ws);
    if background {
        cmd::lowest_priority(&mut cargo);
    }
    // `cargo rustc` so the link flag reaches the final link only: as a RUSTFLAGS entry it
    // would change every crate's fingerprint and rebuild the whole wasm tree.
    cargo
        .args([
            "rustc",
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
        cargo.arg(WASM_STD_FEATURES);
    }
    // The splitter follows calls and data references through the relocations.
    cargo.args(["--", "-Clink-arg=--emit-relocs"]);
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

    let wasm_in = wasm_target_dir(ws)
        .join(WASM_TARGET)
        .join(WASM_PROFILE)
        .join("frontend.wasm");
    cmd::step("wasm split, wasm-bindgen and wasm-opt");
    remove_split_files(&pkg)?;
    let split_dir = ws.target.join("xtask-split");
    let split = split_wasm(&wasm_in, &split_dir)?;

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
            // The chunks import the memory, the function table, the stack pointer and
            // the functions they share with the main module under the linker's names.
            .args(["--keep-lld-exports", "--no-demangle"])
            .arg("--out-dir")
            .arg(&bindgen_out)
            .arg(&split.main),
    )?;
    // cargo-leptos renames `<name>_bg.wasm` to `<name>.wasm`, and Leptos's hydration
    // script asks for that name; do the same so either build tool's output works.
    let wasm_out = pkg.join(format!("{OUTPUT_NAME}.wasm"));
    let bound = bindgen_out.join(format!("{OUTPUT_NAME}_bg.wasm"));
    let bytes = fs::read(&bound).map_err(|e| io_error("read", &bound, e))?;
    let (bytes, dropped) = crate::async_hydration::drop_async_hydration(&bytes)?;
    println!(
        "site: async hydration dropped: {} functions, {} table entries",
        dropped.functions, dropped.entries
    );
    let stubbed = bindgen_out.join(format!("{OUTPUT_NAME}_sync.wasm"));
    fs::write(&stubbed, bytes).map_err(|e| io_error("write", &stubbed, e))?;
    wasm_opt(tools, &stubbed, &wasm_out)?;
    let mut chunks = Vec::new();
    let mut chunk_functions = 0;
    for chunk in &split.chunks {
        let name = chunk
            .file_name()
            .ok_or_else(|| Failure::new(format!("{} has no file name", chunk.display())))?;
        let out = pkg.join(name);
        // A chunk's views are built in the browser, never hydrated: the same holds there.
        let bytes = fs::read(chunk).map_err(|e| io_error("read", chunk, e))?;
        let (bytes, dropped) = crate::async_hydration::drop_async_hydration(&bytes)?;
        chunk_functions += dropped.functions;
        let stubbed = bindgen_out.join(name);
        fs::write(&stubbed, bytes).map_err(|e| io_error("write", &stubbed, e))?;
        wasm_opt(tools, &stubbed, &out)?;
        chunks.push(out);
    }
    println!("site: async hydration dropped from the chunks: {chunk_functions} functions");
    let loader_out = pkg.join(SPLIT_LOADER);
    copy(&split_dir.join(SPLIT_LOADER), &loader_out)?;
    let manifest_out = pkg.join(SPLIT_MANIFEST);
    fs::write(&manifest_out, &split.manifest).map_err(|e| io_error("write", &manifest_out, e))?;

    let js_out = pkg.join(format!("{OUTPUT_NAME}.js"));
    copy(&bindgen_out.join(format!("{OUTPUT_NAME}.js")), &js_out)?;

    let css_out = pkg.join(format!("{OUTPUT_NAME}.css"));
    copy(&ws.root.join("style/main.css"), &css_out)?;
    copy_dir(&ws.root.join("public"), &site)?;

    for file in [&wasm_out, &js_out, &loader_out, &css_out]
        .into_iter()
        .chain(&chunks)
    {
        precompress(file)?;
    }
    // What every page downloads (the main module and its two scripts), then each chunk.
    let main = Sizes::of(&wasm_out)?;
    let scripts = Sizes::of(&js_out)?.plus(Sizes::of(&loader_out)?);
    println!("site: {} ({main})", wasm_out.display());
    println!("site: first load, wasm + js: {}", main.plus(scripts));
    for chunk in &chunks {
        println!("site: lazy {} ({})", chunk.display(), Sizes::of(chunk)?);
    }
    Ok(())
}

/// The JS loader of the chunks. Leptos's `HydrationScripts` preloads it under this name
/// (cargo-leptos's placeholder for a content hash, which this build does not add).
const SPLIT_LOADER: &str = "__wasm_split.______________________.js";
/// Which chunks each split point needs, read by Leptos's `HydrationScripts` to preload
/// the chunks of the `#[lazy]` functions a server render used.
const SPLIT_MANIFEST: &str = "__wasm_split_manifest.json";

/// What [`split_wasm`] wrote.
struct Split {
    /// The main module, for wasm-bindgen.
    main: PathBuf,
    /// The chunks (`split_<name>.wasm`, one per split point's module, and `chunk_<n>.wasm`
    /// for code two of them share).
    chunks: Vec<PathBuf>,
    /// `__wasm_split_manifest.json`'s content.
    manifest: String,
}

/// Splits the linked module into `dir`: the main module, the chunks and [`SPLIT_LOADER`].
fn split_wasm(linked: &Path, dir: &Path) -> Result<Split, Failure> {
    // A chunk of an earlier build must not be taken for one of this build.
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| io_error("remove", dir, e))?;
    }
    fs::create_dir_all(dir).map_err(|e| io_error("create", dir, e))?;
    let input = fs::read(linked).map_err(|e| io_error("read", linked, e))?;
    let main = dir.join(format!("{OUTPUT_NAME}_split.wasm"));
    let loader = format!("./{SPLIT_LOADER}");
    let main_module = format!("./{OUTPUT_NAME}.js");
    let mut options = wasm_split_cli_support::Options::new(&input);
    options.output_dir = dir;
    options.main_out_path = &main;
    // The loader imports `initSync` from wasm-bindgen's glue, which sits beside it in
    // /pkg, and fetches the chunks relative to itself.
    options.main_module = &main_module;
    options.link_name = &loader;
    let split = wasm_split_cli_support::transform(options)
        .map_err(|e| Failure::new(format!("cannot split {}: {e:#}", linked.display())))?;
    let manifest: std::collections::BTreeMap<_, _> = split.prefetch_map.into_iter().collect();
    let manifest = serde_json::to_string_pretty(&manifest)
        .map_err(|e| Failure::new(format!("cannot write the split manifest: {e}")))?;
    let mut chunks = split.split_modules;
    chunks.sort();
    Ok(Split {
        main,
        chunks,
        manifest,
    })
}

/// Deletes the chunks, loader and manifest of an earlier build from `pkg`, so a chunk that
/// no longer exists is not served.
fn remove_split_files(pkg: &Path) -> Result<(), Failure> {
    let entries = fs::read_dir(pkg).map_err(|e| io_error("read", pkg, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io_error("read", pkg, e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if ["split_", "chunk_", "__wasm_split"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            let path = entry.path();
            fs::remove_file(&path).map_err(|e| io_error("remove", &path, e))?;
        }
    }
    Ok(())
}

/// `wasm-opt` with the bundle's passes, from `input` to `output`.
fn wasm_opt(tools: &Tools, input: &Path, output: &Path) -> Result<(), Failure> {
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
            .arg(input)
            .arg("-o")
            .arg(output),
    )
}

/// A file's size raw and as its precompressed `.gz` and `.br` siblings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sizes {
    raw: u64,
    gzip: u64,
    brotli: u64,
}

impl Sizes {
    fn of(file: &Path) -> Result<Self, Failure> {
        let len = |path: &Path| {
            fs::metadata(path)
                .map(|m| m.len())
                .map_err(|e| io_error("read", path, e))
        };
        Ok(Self {
            raw: len(file)?,
            gzip: len(&PathBuf::from(format!("{}.gz", file.display())))?,
            brotli: len(&PathBuf::from(format!("{}.br", file.display())))?,
        })
    }

    fn plus(self, other: Self) -> Self {
        Self {
            raw: self.raw + other.raw,
            gzip: self.gzip + other.gzip,
            brotli: self.brotli + other.brotli,
        }
    }
}

impl std::fmt::Display for Sizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} bytes; gzip {}; brotli {}",
            self.raw, self.gzip, self.brotli
        )
    }
}

/// Where the wasm builds write: apart from the native builds (see [`build_site`]).
fn wasm_target_dir(ws: &Workspace) -> PathBuf {
    ws.target.join("wasm")
}

/// `cargo` for a wasm32 build, in [`wasm_target_dir`].
fn wasm_cargo(ws: &Workspace) -> Command {
    let mut cargo = cmd::cargo(ws);
    cargo.env("CARGO_TARGET_DIR", wasm_target_dir(ws));
    cargo
}

/// The server binary `cargo test --workspace` links for the integration tests, with the
/// same features as every test: the browser suites run it rather than build another
/// (`cargo build -p server` resolves the features apart and compiles again).
pub fn test_server_binary(ws: &Workspace) -> PathBuf {
    ws.target.join("debug").join("server")
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
    let mut cargo = wasm_cargo(ws);
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

    #[test]
    fn an_earlier_builds_chunks_are_removed_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("xtask-split-files-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let old = [
            "split_gifts.wasm",
            "split_gifts.wasm.br",
            "chunk_3.wasm.gz",
            "__wasm_split.______________________.js",
            "__wasm_split_manifest.json",
        ];
        let kept = ["datban.wasm", "datban.js.gz", "datban.css"];
        for name in old.iter().chain(&kept) {
            fs::write(dir.join(name), name).unwrap();
        }
        remove_split_files(&dir).unwrap();
        for name in old {
            assert!(!dir.join(name).exists(), "{name} is left");
        }
        for name in kept {
            assert!(dir.join(name).exists(), "{name} is gone");
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}

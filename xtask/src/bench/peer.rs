//! The peer: a small AI SDK 7 server (`xtask/peer/server.mjs`) on Node 22, both installed
//! from npm (exact versions, `xtask/peer/package-lock.json`) into a cache folder outside
//! the clone, so every clone and every run reuses one install.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use super::{server, Measured};
use crate::{
    cmd::{self, Failure},
    setup, Workspace,
};

/// The committed files of the peer, relative to the workspace root.
const SOURCE: &str = "xtask/peer";
const FILES: [&str; 3] = ["package.json", "package-lock.json", "server.mjs"];
/// The Node.js major the figures were taken with (the npm `node` package).
const NODE_MAJOR: &str = "v22.";

/// An installed peer, ready to start.
pub struct Peer {
    dir: PathBuf,
    node: PathBuf,
    label: String,
}

/// `$DATBAN_TOOLS_DIR/bench-peer` when that is set, else `~/.cache/datban/bench-peer`,
/// beside the set-up's tools.
fn cache_dir() -> PathBuf {
    let tools = setup::tools_dir();
    if std::env::var_os("DATBAN_TOOLS_DIR").is_some_and(|d| !d.is_empty()) {
        return tools.join("bench-peer");
    }
    tools.parent().map_or_else(
        || tools.join("bench-peer"),
        |cache| cache.join("bench-peer"),
    )
}

pub fn prepare(ws: &Workspace) -> Result<Peer, Failure> {
    let dir = cache_dir();
    cmd::step(&format!(
        "the peer: AI SDK 7 and Node 22 from npm in {}",
        dir.display()
    ));
    fs::create_dir_all(&dir)
        .map_err(|e| Failure::new(format!("cannot create {}: {e}", dir.display())))?;
    // An install is reused until the committed package files change.
    let mut changed = false;
    for file in FILES {
        let from = ws.root.join(SOURCE).join(file);
        let to = dir.join(file);
        let wanted = fs::read(&from)
            .map_err(|e| Failure::new(format!("cannot read {}: {e}", from.display())))?;
        if fs::read(&to).ok().as_ref() != Some(&wanted) {
            fs::write(&to, &wanted)
                .map_err(|e| Failure::new(format!("cannot write {}: {e}", to.display())))?;
            changed |= file != "server.mjs";
        }
    }
    let node = dir.join("node_modules/.bin/node");
    if changed || !node.is_file() {
        cmd::run(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&dir),
        )
        .inspect_err(|_| {
            // A half-done install must not look finished next time.
            let _ = fs::remove_file(dir.join("package-lock.json"));
        })?;
    }
    let node_version = cmd::output(Command::new(&node).arg("--version"))
        .ok_or_else(|| Failure::new(format!("{} does not run", node.display())))?;
    if !node_version.starts_with(NODE_MAJOR) {
        return Err(Failure::new(format!(
            "{} is {node_version}, not Node 22",
            node.display()
        )));
    }
    let ai_version = package_version(&dir.join("node_modules/ai/package.json"))
        .ok_or_else(|| Failure::new("cannot read the installed `ai` package's version"))?;
    println!("peer: ai {ai_version} on Node {node_version}");
    Ok(Peer {
        dir,
        node,
        label: format!(
            "AI SDK {ai_version}, Node {}",
            node_version.trim_start_matches('v')
        ),
    })
}

/// `"version": "…"` of a package.json (the first one is the package's own).
fn package_version(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let after = &text[text.find("\"version\"")? + "\"version\"".len()..];
    let start = after.find('"')? + 1;
    let len = after[start..].find('"')?;
    Some(after[start..start + len].to_owned())
}

fn start(peer: &Peer, label: &str, delay_ms: u64) -> Result<server::Server, Failure> {
    let dir = server::temp_dir(label)?;
    let addr = server::free_addr()?;
    let script = peer.dir.join("server.mjs");
    let script = script.to_string_lossy();
    let env = [
        ("PEER_ADDR", addr.to_string()),
        ("PEER_CHUNK_DELAY_MS", delay_ms.to_string()),
        ("NODE_ENV", "production".to_owned()),
    ];
    server::Server::start(label, &peer.node, &[&script], &env, addr, dir)
}

pub fn measure(peer: &Peer, open_files: u64) -> Result<Measured, Failure> {
    super::measure_alone(&peer.label, open_files, false, false, |label, delay_ms| {
        start(peer, &format!("peer-{label}"), delay_ms)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_peer_pins_exact_versions() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("peer");
        let manifest = fs::read_to_string(root.join("package.json")).unwrap();
        for dependency in ["\"ai\": \"7.", "\"node\": \"22."] {
            assert!(manifest.contains(dependency), "{dependency}");
        }
        assert!(!manifest.contains('^') && !manifest.contains('~'));
        assert!(root.join("package-lock.json").is_file());
        assert_eq!(
            package_version(&root.join("package.json")).as_deref(),
            Some("0.0.0")
        );
    }
}

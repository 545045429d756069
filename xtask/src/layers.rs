//! `cargo xtask layers`: the graph of each crate's top-level modules, read from the source,
//! and a check that it has no cycle.
//!
//! A cycle between modules (`a` uses `b`, `b` uses `a`) means neither can be read, tested
//! or moved without the other; the workspace keeps every crate's modules in layers. The
//! graph counts what code names (`crate::x::…` and `use crate::{x, …}`), not doc links or
//! comments, and leaves out test-only code (`tests.rs`, `proptests.rs`, a `#[cfg(test)]`
//! module), which may reach across layers to check them.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

/// The crates whose modules are checked.
pub const CRATES: [&str; 4] = ["shared", "app", "server", "xtask"];

/// One use of another module: which module uses which, and where.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    /// The module that names the other.
    pub from: String,
    /// The module named.
    pub to: String,
    /// `path:line` of the first such use.
    pub at: String,
}

/// A crate's module graph: for each top-level module, the modules it uses.
#[derive(Debug, Default)]
pub struct Graph {
    edges: BTreeMap<String, BTreeMap<String, String>>,
}

impl Graph {
    /// Reads the graph of the crate whose sources are under `src`.
    pub fn read(src: &Path) -> Result<Self, String> {
        let mut graph = Self::default();
        let mut files = Vec::new();
        collect(src, &mut files)?;
        let test_only = test_only_paths(&files)?;
        for file in &files {
            let relative = file.strip_prefix(src).map_err(|error| error.to_string())?;
            let Some(top) = top_module(relative) else {
                continue;
            };
            if is_test_file(relative) || test_only.iter().any(|path| file.starts_with(path)) {
                continue;
            }
            let text = fs::read_to_string(file)
                .map_err(|error| format!("cannot read {}: {error}", file.display()))?;
            for (line, used) in uses(&text) {
                if used != top && !matches!(used.as_str(), "self" | "super") {
                    graph
                        .edges
                        .entry(top.clone())
                        .or_default()
                        .entry(used)
                        .or_insert_with(|| format!("{}:{line}", file.display()));
                }
            }
        }
        Ok(graph)
    }

    /// Every edge, in order.
    pub fn edges(&self) -> Vec<Edge> {
        self.edges
            .iter()
            .flat_map(|(from, to)| {
                to.iter().map(move |(to, at)| Edge {
                    from: from.clone(),
                    to: to.clone(),
                    at: at.clone(),
                })
            })
            .collect()
    }

    /// The cycles: each strongly connected set of two or more modules, as the edges
    /// inside it.
    pub fn cycles(&self) -> Vec<Vec<Edge>> {
        let nodes: BTreeSet<&String> = self
            .edges
            .iter()
            .flat_map(|(from, to)| std::iter::once(from).chain(to.keys()))
            .collect();
        let mut tarjan = Tarjan::default();
        for node in nodes {
            if !tarjan.index.contains_key(node.as_str()) {
                tarjan.visit(self, node);
            }
        }
        tarjan
            .components
            .into_iter()
            .filter(|component| component.len() > 1)
            .map(|component| {
                self.edges()
                    .into_iter()
                    .filter(|edge| component.contains(&edge.from) && component.contains(&edge.to))
                    .collect()
            })
            .collect()
    }
}

/// Tarjan's strongly connected components, recursively (the graphs have tens of nodes).
#[derive(Default)]
struct Tarjan {
    next: usize,
    index: BTreeMap<String, usize>,
    low: BTreeMap<String, usize>,
    stack: Vec<String>,
    components: Vec<BTreeSet<String>>,
}

impl Tarjan {
    fn visit(&mut self, graph: &Graph, node: &str) {
        self.index.insert(node.to_owned(), self.next);
        self.low.insert(node.to_owned(), self.next);
        self.next += 1;
        self.stack.push(node.to_owned());
        for next in graph.edges.get(node).into_iter().flat_map(BTreeMap::keys) {
            if !self.index.contains_key(next) {
                self.visit(graph, next);
                let low = self.low[next].min(self.low[node]);
                self.low.insert(node.to_owned(), low);
            } else if self.stack.contains(next) {
                let low = self.index[next].min(self.low[node]);
                self.low.insert(node.to_owned(), low);
            }
        }
        if self.low[node] == self.index[node] {
            let mut component = BTreeSet::new();
            while let Some(member) = self.stack.pop() {
                let last = member == node;
                component.insert(member);
                if last {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        fs::read_dir(dir).map_err(|error| format!("cannot read {}: {error}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    Ok(())
}

/// The top-level module a file belongs to; `None` for the crate root and binaries.
fn top_module(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main" | "bin")).then(|| name.to_owned())
}

fn is_test_file(relative: &Path) -> bool {
    relative.components().any(|part| {
        matches!(
            part.as_os_str().to_str(),
            Some("tests.rs" | "proptests.rs" | "tests" | "testing.rs")
        )
    })
}

/// Files and folders of modules declared `#[cfg(test)] mod name;`.
fn test_only_paths(files: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut paths = Vec::new();
    for file in files {
        let text = fs::read_to_string(file)
            .map_err(|error| format!("cannot read {}: {error}", file.display()))?;
        let Some(dir) = file.parent() else { continue };
        let stem = file
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or("");
        // `a.rs` holds the children of `a/`; `mod.rs`, `lib.rs` and `main.rs` those of their folder.
        let children = if matches!(stem, "mod" | "lib" | "main") {
            dir.to_path_buf()
        } else {
            dir.join(stem)
        };
        let mut test_attribute = false;
        for line in text.lines().map(str::trim) {
            if line == "#[cfg(test)]" {
                test_attribute = true;
                continue;
            }
            if test_attribute {
                if let Some(name) = line
                    .strip_prefix("mod ")
                    .or_else(|| line.strip_prefix("pub mod "))
                    .or_else(|| line.strip_prefix("pub(crate) mod "))
                    .and_then(|rest| rest.strip_suffix(';'))
                {
                    paths.push(children.join(format!("{name}.rs")));
                    paths.push(children.join(name));
                }
            }
            test_attribute = false;
        }
    }
    Ok(paths)
}

/// Where a file's inline test module starts: `mod tests {` under a `#[cfg(…)]` that names
/// `test` (`#[cfg(test)]`, `#[cfg(all(test, feature = "validate"))]`).
fn inline_test_module(text: &str) -> Option<usize> {
    let mut offset = 0;
    let mut previous: Option<(usize, &str)> = None;
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "mod tests {" {
            if let Some((start, attribute)) = previous {
                let attribute = attribute.trim();
                if attribute.starts_with("#[cfg(")
                    && attribute
                        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                        .any(|word| word == "test")
                {
                    return Some(start);
                }
            }
        }
        previous = Some((offset, line));
        offset += line.len();
    }
    None
}

/// The modules a file's code names, with the line of each use: `crate::name` anywhere,
/// and the first names of `use crate::{a, b::c}`. Comments and inline test modules are
/// left out.
fn uses(text: &str) -> Vec<(usize, String)> {
    let code = match inline_test_module(text) {
        Some(end) => &text[..end],
        None => text,
    };
    let lines: Vec<&str> = code
        .lines()
        .map(|line| match line.find("//") {
            Some(comment) => &line[..comment],
            None => line,
        })
        .collect();
    let mut found = Vec::new();
    for (number, line) in lines.iter().enumerate() {
        let mut rest = *line;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let preceded = rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            if !preceded {
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.push((number + 1, name));
                } else if after.starts_with('{') {
                    // A grouped use may span lines: read to its closing brace.
                    let joined: String = lines[number..].join("\n");
                    let start = joined.find("crate::{").map_or(0, |i| i + "crate::{".len());
                    found.extend(
                        group_names(&joined[start..])
                            .into_iter()
                            .map(|n| (number + 1, n)),
                    );
                }
            }
            rest = after;
        }
    }
    found
}

/// The first name of each top-level item of a `{…}` use group (read up to its end).
fn group_names(group: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut item = String::new();
    let flush = |item: &mut String, names: &mut Vec<String>| {
        let name: String = item
            .trim()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            names.push(name);
        }
        item.clear();
    };
    for c in group.chars() {
        match c {
            '{' => {
                if depth == 0 {
                    flush(&mut item, &mut names);
                }
                depth += 1;
            }
            '}' if depth == 0 => {
                flush(&mut item, &mut names);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => flush(&mut item, &mut names),
            _ if depth == 0 => item.push(c),
            _ => {}
        }
    }
    names
}

/// `cargo xtask layers`: prints each crate's module graph; fails on a cycle.
pub fn run(workspace: &Path) -> Result<(), String> {
    let mut failed = Vec::new();
    for name in CRATES {
        let graph = Graph::read(&workspace.join(name).join("src"))?;
        println!("{name}:");
        for edge in graph.edges() {
            println!("  {} -> {}", edge.from, edge.to);
        }
        for cycle in graph.cycles() {
            failed.push(describe(name, &cycle));
        }
    }
    if failed.is_empty() {
        println!("no module cycle");
        Ok(())
    } else {
        Err(failed.join("\n"))
    }
}

fn describe(name: &str, cycle: &[Edge]) -> String {
    let mut text = format!("{name}: a cycle between modules:");
    for edge in cycle {
        text.push_str(&format!("\n  {} -> {} ({})", edge.from, edge.to, edge.at));
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_inline_test_module_under_any_test_cfg_is_left_out() {
        for cfg in ["#[cfg(test)]", "#[cfg(all(test, feature = \"validate\"))]"] {
            let text = format!("use crate::a;\n{cfg}\nmod tests {{\n    use crate::b;\n}}\n");
            let names: Vec<String> = uses(&text).into_iter().map(|(_, name)| name).collect();
            assert_eq!(names, ["a"], "{cfg}");
        }
        // A cfg that is not about tests keeps its module's uses.
        let text = "#[cfg(feature = \"testing\")]\nmod tests {\n    use crate::b;\n}\n";
        let names: Vec<String> = uses(text).into_iter().map(|(_, name)| name).collect();
        assert_eq!(names, ["b"]);
    }

    use super::*;

    fn workspace() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    #[test]
    fn no_crate_has_a_module_cycle() {
        for name in CRATES {
            let graph = Graph::read(&workspace().join(name).join("src")).unwrap();
            assert!(graph.edges().len() > 2, "{name}: the graph was not read");
            let cycles = graph.cycles();
            assert!(
                cycles.is_empty(),
                "{}",
                cycles
                    .iter()
                    .map(|cycle| describe(name, cycle))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }

    #[test]
    fn a_cycle_is_found_with_where_each_use_is() {
        let dir = std::env::temp_dir().join(format!("datban-layers-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("b")).unwrap();
        fs::write(dir.join("lib.rs"), "mod a;\nmod b;\nmod c;\n").unwrap();
        fs::write(
            dir.join("a.rs"),
            "use crate::{\n    b::Thing,\n    c,\n};\n",
        )
        .unwrap();
        fs::write(
            dir.join("b/mod.rs"),
            "// crate::c is only a comment\nmod d;\n",
        )
        .unwrap();
        fs::write(dir.join("b/d.rs"), "fn f() { crate::a::g() }\n").unwrap();
        fs::write(
            dir.join("c.rs"),
            "#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n",
        )
        .unwrap();
        let graph = Graph::read(&dir).unwrap();
        let edges: Vec<(String, String)> = graph
            .edges()
            .into_iter()
            .map(|edge| (edge.from, edge.to))
            .collect();
        let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        assert_eq!(edges, vec![pair("a", "b"), pair("a", "c"), pair("b", "a")]);
        let cycles = graph.cycles();
        assert_eq!(cycles.len(), 1);
        assert!(
            cycles[0].iter().any(|edge| edge.at.ends_with("d.rs:1")),
            "{cycles:?}"
        );
        let _ = fs::remove_dir_all(&dir);
    }
}

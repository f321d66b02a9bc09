//! The module rules of docs/ARCHITECTURE.md that a compiler does not check: no import cycles
//! between the crate's top-level modules (`crate::x` paths), and authorization only in the
//! area extractors (no handler module reads a cookie or authenticates by itself).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Top-level module of a source file: `src/models/org/company.rs` -> `models`.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_owned())
}

/// The crate's top-level modules each file's code (not its comments) names as `crate::x`.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let Some(module) = module_of(&src, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        // Unit tests may reach anywhere.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let entry = graph.entry(module.clone()).or_default();
        for line in code.lines() {
            let line = line.split("//").next().unwrap_or("");
            for (i, _) in line.match_indices("crate::") {
                let rest = &line[i + "crate::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    entry.insert(name);
                }
            }
        }
    }
    graph
}

#[test]
fn the_top_level_modules_import_each_other_without_a_cycle() {
    let graph = imports();
    assert!(graph.len() > 15, "{:?}", graph.keys());
    // Depth-first search for a back edge; report the cycle.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if let Some(start) = path.iter().position(|n| n == node) {
            panic!("import cycle: {} -> {node}", path[start..].join(" -> "));
        }
        if done.contains(node) {
            return;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            visit(next, graph, path, done);
        }
        path.pop();
        done.insert(node.to_owned());
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        visit(node, &graph, &mut Vec::new(), &mut done);
    }
}

#[test]
fn the_data_layer_and_the_session_contexts_import_nothing_above_them() {
    let graph = imports();
    for (module, allowed) in [
        ("db", &[][..]),
        ("contexts", &[][..]),
        ("mfa", &[][..]),
        ("mail", &["db", "metrics"][..]),
        ("metrics", &[][..]),
        ("audit", &[][..]),
        ("demo", &[][..]),
        ("timestamp", &[][..]),
    ] {
        let found: Vec<&String> = graph[module]
            .iter()
            .filter(|m| !allowed.contains(&m.as_str()))
            .collect();
        assert!(found.is_empty(), "{module} imports {found:?}");
    }
}

#[test]
fn no_handler_module_reads_cookies_or_authenticates_by_itself() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/areas");
    let mut files = Vec::new();
    sources(&src, &mut files);
    for file in files {
        if file.ends_with("mod.rs") || file.ends_with("sessions.rs") {
            // The extractors, and the session routes, which are the engine's own operations.
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for forbidden in ["read_cookie", ".authenticate(", ".identify(", "HeaderMap"] {
            assert!(
                !text.contains(forbidden),
                "{} uses {forbidden}: authorization belongs in the area extractors",
                file.display()
            );
        }
    }
}

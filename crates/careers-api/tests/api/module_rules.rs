//! The module rules of docs/ARCHITECTURE.md that a compiler does not check, on the crate's
//! source parsed with `syn`: no import cycle between source files, the HTTP line below the areas
//! (models and the data layer import neither `error`, `views`, `answers` nor axum), and
//! authorization only in the area extractors. Code under `#[cfg(test)]` is left out (unit tests
//! may reach anywhere); everything else in a file counts, wherever it stands.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

/// A source file's module path: `src/models/org/company.rs` -> `models::org::company`,
/// `src/db/mod.rs` -> `db`, `src/lib.rs` -> `` (the crate root).
fn module_path(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().to_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

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

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Meta>()
                .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

/// Every path a file's live code names, as written (`crate::db::Db`, `super::entity::Model`,
/// `axum::Json`), with the depth of the inline module it stands in, and the `mod x;` children
/// it declares.
#[derive(Default)]
struct Names {
    paths: Vec<(usize, Vec<String>)>,
    children: BTreeSet<String>,
    depth: usize,
}

impl Names {
    fn add_use(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.add_use(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                if n.ident != "self" {
                    path.push(n.ident.to_string());
                }
                self.paths.push((self.depth, path));
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                self.paths.push((self.depth, path));
            }
            syn::UseTree::Glob(_) => self.paths.push((self.depth, prefix.clone())),
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.add_use(prefix, item);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Trait(t) => &t.attrs,
            syn::Item::Type(t) => &t.attrs,
            syn::Item::Macro(m) => &m.attrs,
            _ => return visit::visit_item(self, item),
        };
        if is_cfg_test(attrs) {
            return;
        }
        match item {
            syn::Item::Mod(m) if m.content.is_none() => {
                self.children.insert(m.ident.to_string());
            }
            syn::Item::Mod(m) => {
                self.depth += 1;
                visit::visit_item_mod(self, m);
                self.depth -= 1;
            }
            // `use ::x` names an outside crate.
            syn::Item::Use(u) if u.leading_colon.is_some() => {}
            syn::Item::Use(u) => self.add_use(&mut Vec::new(), &u.tree),
            _ => visit::visit_item(self, item),
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_cfg_test(&f.attrs) {
            visit::visit_impl_item_fn(self, f);
        }
    }

    // `pub(super)`, `pub(in crate::x)`: who may see an item, not what it uses.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, path: &'ast syn::Path) {
        // `::x::y` names an outside crate.
        if path.leading_colon.is_none() {
            let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.paths.push((self.depth, segments));
        }
        visit::visit_path(self, path);
    }

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        // Paths in attribute strings (SeaORM's `belongs_to = "super::super::x::entity::Entity"`,
        // serde's `serialize_with = "crate::timestamp::serialize"`) are code too.
        if let syn::Meta::List(list) = &attr.meta {
            for token in list.tokens.clone() {
                if let proc_macro2::TokenTree::Literal(literal) = token
                    && let Ok(syn::Lit::Str(text)) =
                        syn::parse_str::<syn::Lit>(&literal.to_string())
                    && let Ok(path) = syn::parse_str::<syn::Path>(&text.value())
                {
                    self.visit_path(&path);
                }
            }
        }
        visit::visit_attribute(self, attr);
    }
}

/// The crate's source files: module path -> the module paths of crate files each one names
/// (edges to itself left out), plus the outside crates each names (`axum`, `http`).
struct Graph {
    files: BTreeMap<String, BTreeSet<String>>,
    outside: BTreeMap<String, BTreeSet<String>>,
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_path(&src, f)).collect();
    let mut graph = Graph {
        files: BTreeMap::new(),
        outside: BTreeMap::new(),
    };
    for file in &files {
        let module = module_path(&src, file);
        let text = std::fs::read_to_string(file).unwrap();
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut names = Names::default();
        names.visit_file(&parsed);
        let here: Vec<&str> = if module.is_empty() {
            Vec::new()
        } else {
            module.split("::").collect()
        };
        let edges = graph.files.entry(module.clone()).or_default();
        let outside = graph.outside.entry(module.clone()).or_default();
        for (depth, path) in names.paths {
            let Some(first) = path.first() else { continue };
            let (mut base, rest): (Vec<&str>, &[String]) = match first.as_str() {
                "crate" => (Vec::new(), &path[1..]),
                "self" => (here.clone(), &path[1..]),
                "super" => {
                    let supers = path.iter().take_while(|s| *s == "super").count();
                    // An inline module's `super` is still this file.
                    let up = supers.saturating_sub(depth);
                    (
                        here[..here.len().saturating_sub(up)].to_vec(),
                        &path[supers..],
                    )
                }
                child if names.children.contains(child) => (here.clone(), &path[..]),
                "axum" | "http" | "tower" | "tower_http" => {
                    outside.insert(first.clone());
                    continue;
                }
                _ => continue,
            };
            // The longest prefix that is a source file of the crate.
            let mut target = base.join("::");
            for segment in rest {
                base.push(segment);
                let candidate = base.join("::");
                if modules.contains(&candidate) {
                    target = candidate;
                } else {
                    break;
                }
            }
            if target != module && !target.is_empty() {
                edges.insert(target);
            }
        }
    }
    graph
}

/// Whether an edge is one of SeaORM's entity relations, which name each other both ways by
/// construction (`belongs_to` on one side, `has_many` and `Related` on the other): allowed.
fn entity_relation(from: &str, to: &str) -> bool {
    from.ends_with("::entity") && to.ends_with("::entity")
}

/// The first import cycle between source files, if any.
fn find_cycle(files: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        files: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in files.get(node).into_iter().flatten() {
            if entity_relation(node, next) {
                continue;
            }
            if let Some(cycle) = visit(next, files, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    files
        .keys()
        .find_map(|node| visit(node, files, &mut Vec::new(), &mut done))
}

#[test]
fn source_files_import_each_other_without_a_cycle() {
    let graph = graph();
    assert!(graph.files.len() > 60, "{:?}", graph.files.keys());
    assert!(
        graph.files["areas::org"].contains("models::careers::job_application"),
        "the graph sees imports: {:?}",
        graph.files["areas::org"]
    );
    if let Some(cycle) = find_cycle(&graph.files) {
        panic!("import cycle: {}", cycle.join(" -> "));
    }
}

/// The oracle of the cycle search: a cycle between two files, or through three, is found; a
/// chain is not; entity relations are allowed.
#[test]
fn the_cycle_search_finds_a_cycle_between_files() {
    let edges = |list: &[(&str, &str)]| {
        let mut files: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in list {
            files
                .entry((*from).into())
                .or_default()
                .insert((*to).into());
        }
        files
    };
    assert!(find_cycle(&edges(&[("a", "b"), ("b", "a")])).is_some());
    assert!(find_cycle(&edges(&[("a", "b"), ("b", "c"), ("c", "a")])).is_some());
    assert!(find_cycle(&edges(&[("a", "b"), ("b", "c"), ("a", "c")])).is_none());
    assert!(
        find_cycle(&edges(&[
            ("x::entity", "y::entity"),
            ("y::entity", "x::entity")
        ]))
        .is_none()
    );
}

/// The top-level module of a module path: `models::org::company` -> `models`.
fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

#[test]
fn models_and_the_data_layer_know_nothing_of_http() {
    let graph = graph();
    let mut found = Vec::new();
    for (module, edges) in &graph.files {
        if !matches!(top(module), "models" | "db") {
            continue;
        }
        for target in edges {
            if matches!(
                top(target),
                "error" | "views" | "answers" | "areas" | "extract" | "state" | "app" | "edge"
            ) {
                found.push(format!("{module} -> {target}"));
            }
        }
        for name in &graph.outside[module] {
            found.push(format!("{module} -> {name}"));
        }
    }
    assert!(found.is_empty(), "the HTTP line is crossed: {found:?}");
}

#[test]
fn the_lower_modules_import_nothing_above_them() {
    let graph = graph();
    for (module, allowed) in [
        // Migrations derive stored values with the forms' pure functions (a company's slug).
        ("db", &["forms"][..]),
        ("contexts", &[][..]),
        ("mfa", &[][..]),
        ("mail", &["db", "metrics", "mfa"][..]),
        ("webhooks", &["metrics", "mfa"][..]),
        ("metrics", &[][..]),
        ("audit", &[][..]),
        ("demo", &[][..]),
        ("timestamp", &[][..]),
        ("forms", &[][..]),
    ] {
        let found: Vec<&String> = graph
            .files
            .iter()
            .filter(|(m, _)| top(m) == module)
            .flat_map(|(_, edges)| edges)
            .filter(|m| top(m) != module && !allowed.contains(&top(m)))
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

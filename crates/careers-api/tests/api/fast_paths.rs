//! The fast-path register of docs/PERFORMANCE.md: every hand-written replacement of a library
//! names an oracle test that holds it to the library, and that test exists.

use std::path::{Path, PathBuf};

fn rust_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && !path.ends_with("target") {
            rust_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The rows of the register's table: (component, oracle column).
fn register_rows(text: &str) -> Vec<(String, String)> {
    let start = text
        .find("## The fast-path register")
        .expect("PERFORMANCE.md has the register");
    text[start..]
        .lines()
        .skip_while(|line| !line.starts_with("| Component"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            (cells[1].to_owned(), cells[4].to_owned())
        })
        .collect()
}

/// The test paths named in backticks (`module::tests::name`, `module::*`).
fn test_paths(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .filter(|name| name.contains("::"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_fast_path_names_an_oracle_test_that_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let register = std::fs::read_to_string(root.join("docs/PERFORMANCE.md")).unwrap();
    let mut files = Vec::new();
    rust_sources(&root.join("crates"), &mut files);
    let sources: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            (f, text)
        })
        .collect();
    let rows = register_rows(&register);
    assert!(rows.len() >= 5, "{rows:?}");
    for (component, oracle) in rows {
        let paths = test_paths(&oracle);
        assert!(!paths.is_empty(), "{component}: names no oracle test");
        for path in paths {
            let segments: Vec<&str> = path.split("::").collect();
            let (module, last) = (segments[segments.len() - 2], segments[segments.len() - 1]);
            let found = if last == "tests" {
                // Every test of a file's unit-test module.
                sources.iter().any(|(file, text)| {
                    file.file_stem().is_some_and(|stem| stem == module)
                        && text.contains("mod tests {")
                })
            } else if last == "*" {
                // A whole test module: its file, or a `mod name` in one.
                sources.iter().any(|(file, text)| {
                    file.file_stem().is_some_and(|stem| stem == module)
                        || text.contains(&format!("mod {module} {{"))
                })
            } else {
                sources
                    .iter()
                    .any(|(_, text)| text.contains(&format!("fn {last}(")))
            };
            assert!(found, "{component}: the oracle test {path} does not exist");
        }
    }
}

#[test]
fn the_register_check_sees_a_missing_test() {
    let text = "## The fast-path register\n\n| Component | Replaces | Gain | Oracle | Revert |\n\
                |---|---|---|---|---|\n| a | b | c | `x::tests::no_such_test` | d |\n";
    let rows = register_rows(text);
    assert_eq!(rows.len(), 1);
    assert_eq!(test_paths(&rows[0].1), ["x::tests::no_such_test"]);
}

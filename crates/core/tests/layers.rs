//! The core's modules form layers: no module imports one that imports it back, directly or
//! through others. A cycle makes two files one unit in all but name: neither can be read,
//! tested or changed without the other. Read from the sources, so the rule holds as code moves.

// A test fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path below the crate root, `actions::scale`; the root is "".
type Module = String;

#[test]
fn no_module_of_the_core_imports_one_that_imports_it_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let sources = modules(&src);
    let known: BTreeSet<Module> = sources.keys().cloned().collect();
    let reexports: BTreeMap<Module, BTreeMap<String, Module>> = sources
        .iter()
        .map(|(module, text)| (module.clone(), reexported(module, text, &known)))
        .collect();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, text) in &sources {
        for path in used_paths(module, text) {
            if let Some(target) = resolve(&path, &known, &reexports)
                && target != *module
                && !is_ancestor(&target, module)
            {
                edges.entry(module.clone()).or_default().insert(target);
            }
        }
    }
    let cycles = cycles(&edges);
    assert!(
        cycles.is_empty(),
        "modules that import each other (each line a cycle):\n{}",
        cycles
            .iter()
            .map(|c| c.join(" → "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_check_finds_a_cycle_and_reads_reexports() {
    let known: BTreeSet<Module> = ["a", "a::x", "a::y", "b"].map(String::from).into();
    let mut reexports = BTreeMap::new();
    reexports.insert(
        "a".to_string(),
        BTreeMap::from([("Thing".to_string(), "a::y".to_string())]),
    );
    let path = |p: &str| p.split("::").map(String::from).collect::<Vec<_>>();
    assert_eq!(
        resolve(&path("a::Thing"), &known, &reexports).as_deref(),
        Some("a::y")
    );
    assert_eq!(
        resolve(&path("a::x::f"), &known, &reexports).as_deref(),
        Some("a::x")
    );
    let edges = BTreeMap::from([
        ("a::x".to_string(), BTreeSet::from(["a::y".to_string()])),
        ("a::y".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["a::x".to_string()])),
    ]);
    assert_eq!(cycles(&edges).len(), 1);
    assert_eq!(
        used_paths(
            "a::x",
            "use super::{y::Thing, z};\nfn f() { crate::b::go(); }"
        ),
        [path("a::y::Thing"), path("a::z"), path("b::go")]
    );
    // A module's own children are read too: `pub use x::Thing` in `a` is `a::x::Thing`.
    assert_eq!(used_paths("a", "pub use x::Thing;"), [path("a::x::Thing")]);
}

/// Every module's source, by module path.
fn modules(src: &Path) -> BTreeMap<Module, String> {
    let mut found = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).expect("read source");
                found.insert(module_of(src, &path), without_tests(&text));
            }
        }
    }
    found
}

fn module_of(src: &Path, file: &Path) -> Module {
    let relative: PathBuf = file
        .strip_prefix(src)
        .expect("under src")
        .with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// Test modules may reach anywhere: only what ships counts.
fn without_tests(text: &str) -> String {
    match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => text[..at].to_string(),
        None => text.to_string(),
    }
}

/// Paths named by `use` items and inline `crate::`/`super::` paths, made absolute. rustfmt
/// starts every `use` item on a line of its own.
fn used_paths(module: &str, text: &str) -> Vec<Vec<String>> {
    let (mut items, mut code, mut item) = (Vec::new(), String::new(), None::<String>);
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let trimmed = line.trim_start();
        let starts = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "]
            .iter()
            .find_map(|p| trimmed.strip_prefix(p));
        match (&mut item, starts) {
            (Some(open), _) => open.push_str(trimmed),
            (None, Some(tree)) => item = Some(tree.to_string()),
            (None, None) => {
                code.push_str(line);
                code.push('\n');
            }
        }
        if item.as_ref().is_some_and(|i| i.trim_end().ends_with(';')) {
            items.extend(item.take());
        }
    }
    let mut paths: Vec<Vec<String>> = items
        .iter()
        .flat_map(|tree| expand(tree.trim_end().trim_end_matches(';')))
        .collect();
    for prefix in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(prefix) {
            let start = from + at;
            from = start + prefix.len();
            let preceded = code[..start].chars().last();
            if preceded.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = code[start..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            paths.push(split(&path));
        }
    }
    paths
        .into_iter()
        .filter_map(|path| absolute(module, &path))
        .collect()
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`; `self` in a group is the prefix.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![split(tree)];
    };
    let prefix = split(tree[..open].trim_end_matches("::"));
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut out = Vec::new();
    for part in top_level(inner)
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
    {
        for tail in expand(part) {
            let mut path = prefix.clone();
            if tail != ["self"] {
                path.extend(tail);
            }
            out.push(path);
        }
    }
    out
}

fn split(path: &str) -> Vec<String> {
    let path = path.split(" as ").next().unwrap_or(path);
    path.split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// The comma-separated parts of a group, braces kept together.
fn top_level(inner: &str) -> Vec<String> {
    let (mut parts, mut depth, mut current) = (Vec::new(), 0, String::new());
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

/// A path relative to `module` as one from the crate root.
fn absolute(module: &str, path: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").map(String::from).collect()
    };
    let mut parts = path.iter().peekable();
    match parts.peek().map(|s| s.as_str()) {
        Some("crate") => {
            base.clear();
            parts.next();
        }
        Some("super") => {
            while parts.peek().map(|s| s.as_str()) == Some("super") {
                base.pop();
                parts.next();
            }
        }
        Some("self") => {
            parts.next();
        }
        // A child module's (`use audit::AuditConfig` in `config`), or another crate's, which
        // resolves to no module of this one but `module` itself, and is dropped.
        _ => {}
    }
    base.extend(parts.cloned());
    Some(base)
}

/// The module a path lands in: the deepest module it names, or, when that module re-exports
/// the next name, the module the name comes from.
fn resolve(
    path: &[String],
    known: &BTreeSet<Module>,
    reexports: &BTreeMap<Module, BTreeMap<String, Module>>,
) -> Option<Module> {
    let mut deepest = None;
    for len in 1..=path.len() {
        let candidate = path[..len].join("::");
        if known.contains(&candidate) {
            deepest = Some(len);
        }
    }
    let len = deepest?;
    let module = path[..len].join("::");
    if let Some(name) = path.get(len)
        && let Some(origin) = reexports.get(&module).and_then(|names| names.get(name))
    {
        return Some(origin.clone());
    }
    Some(module)
}

/// The names `module` re-exports (`pub use child::Name`), and the module each comes from.
fn reexported(module: &str, text: &str, known: &BTreeSet<Module>) -> BTreeMap<String, Module> {
    let mut names = BTreeMap::new();
    for item in text.split(';') {
        let item = item.trim();
        let Some(tree) = item
            .strip_prefix("pub use ")
            .or_else(|| item.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let tree = tree.strip_prefix("self::").unwrap_or(tree);
        let tree = if tree.starts_with("crate::") || tree.starts_with("super::") {
            tree.to_string()
        } else {
            format!("self::{tree}")
        };
        for path in expand(&tree) {
            let Some(absolute) = absolute(module, &path) else {
                continue;
            };
            let (Some(name), Some(origin)) =
                (absolute.last(), resolve(&absolute, known, &BTreeMap::new()))
            else {
                continue;
            };
            if origin != module {
                names.insert(name.clone(), origin);
            }
        }
    }
    names
}

fn is_ancestor(ancestor: &str, module: &str) -> bool {
    ancestor.is_empty() || module.starts_with(&format!("{ancestor}::"))
}

/// Each cycle once, as the modules along it.
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    let mut found: Vec<Vec<Module>> = Vec::new();
    let mut seen_sets: BTreeSet<BTreeSet<Module>> = BTreeSet::new();
    for start in edges.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        while let Some((at, path)) = stack.pop() {
            for next in edges.get(&at).into_iter().flatten() {
                if next == start {
                    let set: BTreeSet<Module> = path.iter().cloned().collect();
                    if seen_sets.insert(set) {
                        let mut cycle = path.clone();
                        cycle.push(start.clone());
                        found.push(cycle);
                    }
                } else if !path.contains(next) && next > start {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    found
}

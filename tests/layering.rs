//! The layering of `src/`, read from its `use` lines and paths: no module
//! uses one above it in the module map of `src/lib.rs` (listed from the
//! top: each uses only those below it), the map lists the modules in that
//! order, and no files of `src/tui/` use each other in a loop.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The modules from the top: each may use only the ones after it.
const ORDER: &[&str] = &[
    "cli", "demo", "tui", "engine", "watch", "notify", "recorder", "audit", "report", "checks",
    "contract", "gate0", "code", "journal", "schema", "history", "parse", "model", "process",
    "redact", "sanitize", "util",
];

/// A source file and its module path (`["tui", "rows", "cells"]`).
struct Source {
    module: Vec<String>,
    text: String,
}

fn sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(Source {
                    module: module_of(&root, &path),
                    text: without_comments(&std::fs::read_to_string(&path).expect("read")),
                });
            }
        }
    }
    out
}

fn module_of(root: &Path, path: &Path) -> Vec<String> {
    let rel: PathBuf = path
        .strip_prefix(root)
        .expect("under src")
        .with_extension("");
    let mut m: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        m.pop();
    }
    m
}

/// The text without its line comments (doc comments included).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path written at the start of `text`: `a::b::c`, and each path of
/// a `a::{b, c::{d, e}}` group, in full.
fn paths_at(text: &str) -> Vec<Vec<String>> {
    let end = text.find(|c| !is_ident(c)).unwrap_or(text.len());
    if end == 0 {
        return vec![Vec::new()];
    }
    let tails = match text[end..].strip_prefix("::") {
        Some(rest) => match rest.strip_prefix('{') {
            Some(group) => group_items(group)
                .into_iter()
                .flat_map(|item| paths_at(item.trim_start()))
                .collect(),
            None => paths_at(rest),
        },
        None => vec![Vec::new()],
    };
    tails
        .into_iter()
        .map(|tail| [vec![text[..end].to_string()], tail].concat())
        .collect()
}

/// Where each item of a `{a, b::{c, d}}` group starts, the group read from
/// after its `{` to its `}`.
fn group_items(group: &str) -> Vec<&str> {
    let mut depth = 0;
    let mut items = vec![group];
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => items.push(&group[i + 1..]),
            _ => {}
        }
    }
    items
}

/// The paths a file writes that start with `word` (`crate`, `super`,
/// `self`, or a child module's name), at a word boundary.
fn paths_from(text: &str, word: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let pat = format!("{word}::");
    let mut from = 0;
    while let Some(at) = text[from..].find(&pat) {
        let i = from + at;
        from = i + pat.len();
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        out.extend(paths_at(&text[i..]));
    }
    out
}

/// The child modules a file declares (`mod x;`).
fn children(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l
                .strip_prefix("pub ")
                .or_else(|| l.strip_prefix("pub(")?.split_once(") ").map(|x| x.1))
                .unwrap_or(l);
            let name = l.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect()
}

/// The modules a file uses, as absolute module paths (unresolved: the
/// longest prefix that is a file is taken by the caller).
fn used(src: &Source) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for p in paths_from(&src.text, "crate") {
        out.push(p[1..].to_vec());
    }
    for p in paths_from(&src.text, "super") {
        let mut base = src.module.clone();
        let mut rest = &p[..];
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        out.push(base);
    }
    for word in children(&src.text)
        .into_iter()
        .chain(std::iter::once("self".to_string()))
    {
        for p in paths_from(&src.text, &word) {
            let mut base = src.module.clone();
            base.extend(p.into_iter().filter(|s| s != "self"));
            out.push(base);
        }
    }
    out
}

#[test]
fn no_module_uses_one_above_it_in_the_module_map() {
    let rank: BTreeMap<&str, usize> = ORDER.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let mut wrong = BTreeSet::new();
    for src in sources() {
        let Some(top) = src.module.first() else {
            continue;
        };
        let Some(&mine) = rank.get(top.as_str()) else {
            panic!("src/{top} is not in the layering order: place it");
        };
        for p in used(&src) {
            if let Some(&theirs) = p.first().and_then(|t| rank.get(t.as_str()))
                && theirs < mine
            {
                wrong.insert(format!("{} uses {}", src.module.join("::"), p[0]));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "modules using one above them:\n{wrong:#?}"
    );
}

#[test]
fn the_module_map_lists_the_modules_in_their_order() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("read lib.rs");
    let listed: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//! - [`")?.split('`').next())
        .collect();
    assert_eq!(listed, ORDER);
}

#[test]
fn no_files_of_the_tui_use_each_other_in_a_loop() {
    let all = sources();
    let files: BTreeSet<Vec<String>> = all.iter().map(|s| s.module.clone()).collect();
    let resolve = |p: &[String]| {
        (1..=p.len())
            .rev()
            .map(|n| p[..n].to_vec())
            .find(|m| files.contains(m))
    };
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for src in all
        .iter()
        .filter(|s| s.module.first().is_some_and(|t| t == "tui"))
    {
        let out = edges.entry(src.module.clone()).or_default();
        for p in used(src) {
            // A module's file may use its own children: they are the module.
            if let Some(to) = resolve(&p)
                && to.first().is_some_and(|t| t == "tui")
                && !to.starts_with(&src.module)
            {
                out.insert(to);
            }
        }
    }
    // Depth-first search for a back edge; the loop it closes is reported.
    fn visit(
        v: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        path: &mut Vec<Vec<String>>,
        done: &mut BTreeSet<Vec<String>>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == v) {
            let mut cycle: Vec<String> = path[at..].iter().map(|m| m.join("/")).collect();
            cycle.push(v.join("/"));
            return Some(cycle);
        }
        if !done.insert(v.clone()) {
            return None;
        }
        path.push(v.clone());
        for w in edges.get(v).into_iter().flatten() {
            if let Some(c) = visit(w, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for v in edges.keys() {
        let mut path = Vec::new();
        if let Some(cycle) = visit(v, &edges, &mut path, &mut done) {
            panic!(
                "files of src/tui use each other in a loop: {}",
                cycle.join(" -> ")
            );
        }
    }
}

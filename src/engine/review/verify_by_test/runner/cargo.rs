//! The cargo test target a repro file belongs to, from where it is and the
//! package's manifest: `--lib` for the library's modules, `--bin <name>`
//! for a binary's, `--test <name>` for an integration test (a file of
//! `tests/`, or a module of a `tests/<name>/main.rs` target), and the
//! module path its tests are named under. A file no target builds (a
//! module several test targets declare, an example) is refused: run with
//! every target, its test would run once per target, or not at all.

use super::{SingleTestError, Worktree};

/// A file's target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The package's folder, relative to the worktree (empty at its top).
    pub package: String,
    /// The options that select the target (`--lib`, `--bin x`, `--test x`).
    pub options: Vec<String>,
    /// The module path of the file inside the target.
    pub module: Vec<String>,
}

fn bad(why: String) -> SingleTestError {
    SingleTestError::BadReference(why)
}

/// The manifest entries that matter: the package's name, its library's
/// root, its binaries' and tests' names and roots.
#[derive(Debug, Default)]
struct Manifest {
    name: String,
    lib: Option<String>,
    bins: Vec<(String, String)>,
    tests: Vec<(String, String)>,
}

fn manifest(text: &str) -> Option<Manifest> {
    let t: toml::Table = text.parse().ok()?;
    let package = t.get("package")?.as_table()?;
    let name = package.get("name")?.as_str()?.to_string();
    let path = |v: &toml::Value| v.get("path").and_then(|p| p.as_str()).map(clean);
    let targets = |key: &str| -> Vec<(String, String)> {
        t.get(key)
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .filter_map(|e| Some((e.get("name")?.as_str()?.to_string(), path(e)?)))
            .collect()
    };
    Some(Manifest {
        name,
        lib: t.get("lib").and_then(path),
        bins: targets("bin"),
        tests: targets("test"),
    })
}

fn clean(p: &str) -> String {
    p.strip_prefix("./").unwrap_or(p).to_string()
}

/// The target of `file` (relative to the worktree).
pub fn target(tree: &dyn Worktree, file: &str) -> Result<Target, SingleTestError> {
    let parts: Vec<&str> = file.split('/').collect();
    // The nearest folder above the file whose Cargo.toml has a [package].
    let mut found = None;
    for n in (0..parts.len()).rev() {
        let dir = parts[..n].join("/");
        let path = if dir.is_empty() {
            "Cargo.toml".to_string()
        } else {
            format!("{dir}/Cargo.toml")
        };
        if let Some(m) = tree.read(&path).as_deref().and_then(manifest) {
            found = Some((dir, m));
            break;
        }
    }
    let Some((package, m)) = found else {
        return Err(bad(format!(
            "no Cargo.toml with a [package] above {}",
            super::names::shown(file)
        )));
    };
    let rel = if package.is_empty() {
        file.to_string()
    } else {
        file[package.len() + 1..].to_string()
    };
    let at = |p: &str| {
        if package.is_empty() {
            p.to_string()
        } else {
            format!("{package}/{p}")
        }
    };
    let (options, module) = select(&m, &rel, &|p| tree.is_file(&at(p)))?;
    Ok(Target {
        package,
        options,
        module,
    })
}

/// The target options and module path of `rel` (relative to the package).
fn select(
    m: &Manifest,
    rel: &str,
    exists: &dyn Fn(&str) -> bool,
) -> Result<(Vec<String>, Vec<String>), SingleTestError> {
    let opt = |kind: &str, name: &str| vec![kind.to_string(), name.to_string()];
    // Targets the manifest names, by their root or the folder of it.
    for (kind, list) in [("--test", &m.tests), ("--bin", &m.bins)] {
        for (name, root) in list.iter() {
            if root == rel {
                return Ok((opt(kind, name), Vec::new()));
            }
            if let Some(dir) = root.strip_suffix("/main.rs")
                && let Some(inner) = rel.strip_prefix(&format!("{dir}/"))
            {
                return Ok((opt(kind, name), module_of(inner)));
            }
        }
    }
    let parts: Vec<&str> = rel.split('/').collect();
    match parts.as_slice() {
        ["tests", one] => {
            let stem = one.strip_suffix(".rs").unwrap_or(one);
            Ok((opt("--test", stem), Vec::new()))
        }
        ["tests", dir, inner @ ..] if exists(&format!("tests/{dir}/main.rs")) => {
            Ok((opt("--test", dir), module_of(&inner.join("/"))))
        }
        ["tests", ..] => Err(bad(format!(
            "{rel} is in no test target: cargo's test targets are tests/*.rs and tests/*/main.rs, and a module the targets declare would run once per target; write the repro in a target"
        ))),
        ["src", "bin", one] => {
            let stem = one.strip_suffix(".rs").unwrap_or(one);
            Ok((opt("--bin", stem), Vec::new()))
        }
        ["src", "bin", dir, inner @ ..] => Ok((opt("--bin", dir), module_of(&inner.join("/")))),
        ["src", "main.rs"] => Ok((opt("--bin", &main_bin(m)), Vec::new())),
        ["src", inner @ ..] => {
            let lib = m.lib.clone().unwrap_or_else(|| "src/lib.rs".into());
            if exists(&lib) {
                Ok((vec!["--lib".into()], module_of(&inner.join("/"))))
            } else if exists("src/main.rs") {
                Ok((opt("--bin", &main_bin(m)), module_of(&inner.join("/"))))
            } else {
                Err(bad(format!(
                    "{rel} is in no target: the package has neither src/lib.rs nor src/main.rs"
                )))
            }
        }
        _ => Err(bad(format!(
            "{rel} is in no cargo test target (src/, src/bin/, tests/)"
        ))),
    }
}

/// The binary whose root is `src/main.rs`: a `[[bin]]` naming it, else the
/// package's name.
fn main_bin(m: &Manifest) -> String {
    m.bins
        .iter()
        .find(|(_, root)| root == "src/main.rs")
        .map_or_else(|| m.name.clone(), |(name, _)| name.clone())
}

/// The module path of a file inside its target's folder (`money/cents.rs`
/// → `money::cents`, `a/mod.rs` → `a`, `lib.rs` → nothing).
fn module_of(inner: &str) -> Vec<String> {
    crate::checks::evidence_gate::module_path(inner)
}

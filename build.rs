//! Sets `cfg(loopwatch_ci)` when the `CI` variable is set, so the checks that
//! need what `.ci/run` installs (headless Chromium) run there under the plain
//! `cargo test`, and are reported as ignored, with why, everywhere else.
//! Sets `cfg(loopwatch_corpus)` when the shared corpus of real contracts and
//! gate outputs is beside the project (`../shared/corpus`): the tests that
//! read it run then, and are reported as ignored, with why, otherwise.
//! Sets `cfg(loopwatch_clis)` when the real agent CLIs (Claude Code and
//! Codex, installed by `.ci/run` into `target/clis`, or the folder named by
//! `LOOPWATCH_CLIS`) are there, or when `CI` is set (then they must be):
//! the tests that drive them run then; `LOOPWATCH_CLIS_BIN` names their
//! `node_modules/.bin` for the tests.
//! Sets `cfg(loopwatch_runner_<name>)` for each test runner the
//! verify-by-test integration tests drive that is installed here (`go` and
//! `node` on the PATH; jest and vitest, and pytest, in
//! tests/fixtures/checks/runners, where .ci/run installs them): without one
//! (and without `CI`), its test is reported as ignored, with why.

/// Whether an executable `name` is in a folder of the PATH.
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(name)).is_ok_and(|m| {
                m.is_file()
                    && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
            })
        })
    })
}

fn runners() {
    let dir = std::path::Path::new("tests/fixtures/checks/runners");
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-changed={}", dir.display());
    let js = ["jest", "vitest"]
        .iter()
        .all(|b| dir.join("node_modules/.bin").join(b).exists());
    let found = [
        ("go", on_path("go")),
        ("node", on_path("node")),
        ("js", js && on_path("node")),
        (
            "pytest",
            dir.join("python/pytest").is_dir() && on_path("python3"),
        ),
    ];
    for (name, here) in found {
        println!("cargo::rustc-check-cfg=cfg(loopwatch_runner_{name})");
        if here {
            println!("cargo::rustc-cfg=loopwatch_runner_{name}");
        }
    }
}

fn main() {
    runners();
    println!("cargo::rustc-check-cfg=cfg(loopwatch_ci)");
    println!("cargo::rustc-check-cfg=cfg(loopwatch_corpus)");
    println!("cargo::rustc-check-cfg=cfg(loopwatch_clis)");
    println!("cargo::rerun-if-env-changed=LOOPWATCH_CLIS");
    println!("cargo::rerun-if-env-changed=CI");
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=loopwatch_ci");
    }
    let clis = std::env::var_os("LOOPWATCH_CLIS")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("target/clis"));
    let clis = std::path::absolute(&clis).unwrap_or(clis);
    let bin = clis.join("node_modules/.bin");
    println!("cargo::rustc-env=LOOPWATCH_CLIS_BIN={}", bin.display());
    let installed = bin.join("claude").exists() && bin.join("codex").exists();
    if installed || std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=loopwatch_clis");
    }
    if bin.is_dir() {
        println!("cargo::rerun-if-changed={}", bin.display());
    }
    let corpus = std::path::Path::new("../shared/corpus");
    if corpus.join("contracts").is_dir() && corpus.join("outputs").is_dir() {
        println!("cargo::rustc-cfg=loopwatch_corpus");
        println!("cargo::rerun-if-changed=../shared/corpus");
    } else {
        // A path that does not exist would rerun this on every build; a
        // corpus put in place later is seen after `cargo clean -p loopwatch`.
        println!("cargo::rerun-if-changed=build.rs");
    }
}

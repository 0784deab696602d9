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

fn main() {
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

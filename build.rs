//! Sets `cfg(loopwatch_ci)` when the `CI` variable is set, so the checks that
//! need what `.ci/run` installs (headless Chromium) run there under the plain
//! `cargo test`, and are reported as ignored, with why, everywhere else.
//! Sets `cfg(loopwatch_corpus)` when the shared corpus of real contracts and
//! gate outputs is beside the project (`../shared/corpus`): the tests that
//! read it run then, and are reported as ignored, with why, otherwise.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(loopwatch_ci)");
    println!("cargo::rustc-check-cfg=cfg(loopwatch_corpus)");
    println!("cargo::rerun-if-env-changed=CI");
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=loopwatch_ci");
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

//! Sets `cfg(loopwatch_ci)` when the `CI` variable is set, so the checks that
//! need what `.ci/run` installs (headless Chromium) run there under the plain
//! `cargo test`, and are reported as ignored, with why, everywhere else.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(loopwatch_ci)");
    println!("cargo::rerun-if-env-changed=CI");
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=loopwatch_ci");
    }
}

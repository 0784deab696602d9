//! Verify-by-test end to end with each real runner: `loopwatch run
//! --headless` on a small project with awkward test names, every verdict
//! as the runner's real output justifies, every red test rerun green once
//! the developer fixed the bug. A runner that is not installed here makes
//! its test ignored, with the reason; CI (`.ci/run`) installs them all and
//! runs every one.

mod case;
#[path = "../support/mod.rs"]
mod support;

mod cargo;
mod go;
mod jest;
mod node;
mod pytest;
mod vitest;

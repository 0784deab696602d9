//! Whole `loopwatch run --headless` runs with the real Claude Code and
//! Codex CLIs (installed by `.ci/run`), each pointed at the test kit's
//! scripted model server on 127.0.0.1: the model is scripted, everything
//! else is real (the CLI, its tools and sandbox, git, cargo, the engine).
//! Reported as ignored where the CLIs are not installed; CI runs them.
//! The tests run one at a time (each starts CLIs, cargo and the engine).

mod support;

#[path = "engine_real_clis/claude.rs"]
mod claude;
#[path = "engine_real_clis/codex.rs"]
mod codex;
#[path = "engine_real_clis/kit.rs"]
mod kit;
#[path = "engine_real_clis/mixed.rs"]
mod mixed;
#[path = "engine_real_clis/resume.rs"]
mod resume;

//! Codex CLI: `codex exec --json`, the instructions then the inputs as the
//! prompt on stdin (`-`), approvals off (`approval_policy="never"`: no
//! command is ever run outside the sandbox on request). The answer is read
//! by `codex_answer`.
//!
//! The sandbox follows the role:
//! - edit roles (developer, triage, verify-by-test): `--sandbox
//!   workspace-write`;
//! - read-only roles: a permission profile extending Codex's own
//!   `:read-only` with one writable folder, the build folder outside the
//!   worktree (`LOOPWATCH_BUILD_DIR`, where `CARGO_TARGET_DIR`, `TMPDIR`
//!   and the caches point), so the project's test command runs with its
//!   build output while the worktree, its git folder and everything else
//!   stay read-only for every command Codex runs; web search off.

use super::{Invocation, Request, build_env, may_edit};

/// The permission profile of the read-only roles.
pub const READ_ONLY_PROFILE: &str = "loopwatch-read-only";

/// The `codex exec` command line of a dispatch.
pub fn invocation(req: &Request<'_>) -> Invocation {
    let mut args: Vec<String> = vec![
        "exec".into(),
        "--json".into(),
        "-c".into(),
        "approval_policy=\"never\"".into(),
    ];
    let mut env = Vec::new();
    if may_edit(req.agent.role) {
        args.extend(["--sandbox".into(), "workspace-write".into()]);
    } else {
        args.extend([
            "-c".into(),
            format!("default_permissions={}", toml_string(READ_ONLY_PROFILE)),
            "-c".into(),
            format!("permissions.{READ_ONLY_PROFILE}.extends=\":read-only\""),
            "-c".into(),
            "web_search=\"disabled\"".into(),
        ]);
        if let Some(dir) = req.build_dir {
            args.extend([
                "-c".into(),
                format!(
                    "permissions.{READ_ONLY_PROFILE}.filesystem={{{}=\"write\"}}",
                    toml_string(&dir.display().to_string())
                ),
            ]);
            env = build_env(dir);
        }
    }
    if let Some(m) = &req.agent.model {
        args.extend(["-m".into(), m.clone()]);
    }
    args.extend(["-C".into(), req.worktree.display().to_string(), "-".into()]);
    Invocation {
        program: req.agent.command.clone().into(),
        args: args.into_iter().map(Into::into).collect(),
        stdin: req.full_text().into_bytes(),
        env,
    }
}

/// `s` as a TOML basic string (what `-c key=value` parses).
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

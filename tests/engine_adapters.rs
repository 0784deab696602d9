//! The Claude Code and Codex adapters where no CLI is needed: a CLI that
//! is not installed is a configuration error naming it and what the
//! adapter expects, before anything runs. The adapters with the real
//! CLIs are in `engine_real_clis.rs`; their reading of the CLIs' streams
//! is tested on recorded sessions (`tests/fixtures/engine/`).

mod support;

use support::engine::*;

#[test]
fn a_cli_that_is_not_installed_is_named_with_what_was_expected() {
    for (adapter, cli, package) in [
        ("claude", "Claude Code", "@anthropic-ai/claude-code"),
        ("codex", "Codex", "@openai/codex"),
    ] {
        let p = Project::new(&format!(
            "[agents.developer]\ncommand = \"true\"\n[agents.verifier]\nadapter = \"{adapter}\"\n[agents.auditor]\ncommand = \"true\"\n"
        ));
        let empty = p.out.join("empty-path");
        std::fs::create_dir_all(&empty).unwrap();
        let out = p
            .cmd()
            .env("PATH", &empty)
            .args(["run", "--headless", CONTRACT])
            .output()
            .unwrap();
        p.assert_exit(&out, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "loopwatch.toml:3: agents.verifier.command: command not found: '{adapter}' (not a file, not on PATH): the {adapter} adapter runs {cli} (npm {package}, tested with "
            )),
            "{err}"
        );
        assert!(p.events().is_empty(), "nothing ran");
    }
}

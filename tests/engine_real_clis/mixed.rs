//! Both CLIs in one run, each with instructions larger than one argument
//! of a command line may be (128 KiB): they reach the model whole, through
//! a file (Claude Code's system prompt) and stdin (Codex's prompt).

use crate::kit::*;
use crate::support::model_server::{ModelRequest, Script, Turn};

/// Instructions of 200 KiB ending with `tail`.
fn big(tail: &str) -> String {
    let line =
        "Read the contract, then the diff, then run the tests; answer in the gate's format.\n";
    let mut s = String::new();
    while s.len() < 200 * 1024 {
        s.push_str(line);
    }
    s.push_str(tail);
    s.push('\n');
    s
}

fn holds(
    where_: &'static str,
    needle: &'static str,
) -> impl Fn(&ModelRequest) -> Result<(), String> + Send + Sync {
    move |r| {
        let text = if where_ == "system" {
            r.system_text()
        } else {
            r.user_text()
        };
        if text.contains(needle) && text.len() > 200 * 1024 {
            Ok(())
        } else {
            Err(format!(
                "{where_} ({} bytes) does not hold {needle}",
                text.len()
            ))
        }
    }
}

#[test]
#[cfg_attr(
    not(loopwatch_clis),
    ignore = "needs the real Claude Code and Codex CLIs: .ci/run installs them into target/clis (CI runs this)"
)]
fn instructions_over_128_kib_reach_both_clis_whole() {
    let _s = crate::support::serial();
    let mut agents = format!(
        "{}\n{}",
        agents("codex", &["developer"], "3m"),
        agents("claude", &["verifier", "auditor"], "3m")
    );
    agents = agents
        .replacen(
            "[agents.developer]\n",
            "[agents.developer]\nprompt_file = \"../agents/developer.md\"\n",
            1,
        )
        .replacen(
            "[agents.verifier]\n",
            "[agents.verifier]\nprompt_file = \"../agents/verifier.md\"\n",
            1,
        );
    let r = Real::new(&agents, |_| {
        Script::new()
            .then(
                apply_patch_add(TOTAL, "total: 3.75 cents")
                    .expect(holds("user", "END OF THE DEVELOPER'S INSTRUCTIONS")),
            )
            .then(Turn::text("Implemented the total with cents."))
            .then(
                Turn::text(&conforme())
                    .expect(holds("system", "END OF THE VERIFIER'S INSTRUCTIONS")),
            )
            .then(Turn::text(PASS))
    });
    let agents_dir = r.p.root.parent().unwrap().join("agents");
    std::fs::write(
        agents_dir.join("developer.md"),
        big("END OF THE DEVELOPER'S INSTRUCTIONS"),
    )
    .unwrap();
    std::fs::write(
        agents_dir.join("verifier.md"),
        big("END OF THE VERIFIER'S INSTRUCTIONS"),
    )
    .unwrap();
    r.passes();
    // Claude Code's instructions were a file beside the input, not argv.
    let inst = r.p.pipeline().join("agents/002-verifier.instructions");
    assert!(std::fs::metadata(&inst).unwrap().len() > 200 * 1024);
}

//! The decision policy while `loopwatch run` drives the run: decisions
//! reach the engine through its door, which holds them to the policy the
//! engine read at its start; a two-person gate waits for the second person.

mod support;

use std::path::Path;

use support::assert_failed;
use support::engine::*;
use support::ssh::{allowed_signers, keygen};

/// The developer adds a Makefile outside FILE SCOPE on its first dispatch
/// (and removes it when denied); the verifier flags an ungated Makefile.
const AGENT: &str = r#"case $role in
  developer)
    mkdir -p src
    echo "total: 3.75 cents" >src/total.txt
    case $input in
      *REQUEST*) echo "all:" >Makefile ;;
      *"out-of-scope: Makefile"*) rm -f Makefile ;;
    esac
    echo done
    ;;
  verifier)
    if [ -f Makefile ] && ! grep -q 'Makefile \[gated' "$LW_CONTRACT"; then
      printf 'VERIFY — VERDICT: ECARTS(1)\nCONTRACT: %s\nCRITERIA:\n  1. The total shows cents — MET — ran the check\nSCOPE: in-scope 1 files; out-of-scope: Makefile\nFLOOR: clean\nPROOF: read 1 files\n' "$LW_CONTRACT"
    else
      conforme
    fi
    ;;
  auditor) pass ;;
esac
"#;

#[test]
fn a_two_person_gate_waits_at_the_engines_door_for_a_second_signer() {
    let config = format!(
        "[run]\ntest = \"true\"\nmax_rounds = 3\ngrace = \"1s\"\n\n{}",
        agent_tables("oos.sh", &["developer", "verifier", "auditor"])
    );
    let p = Project::new(&config);
    p.write_agent("oos.sh", AGENT);
    let home = p.out.join("config");
    std::fs::create_dir_all(home.join("loopwatch")).unwrap();
    let ana = keygen(&p.out, "ana");
    let bo = keygen(&p.out, "bo");
    let allowed = p.out.join("allowed_signers");
    allowed_signers(
        &allowed,
        &[("ana@example.org", &ana), ("bo@example.org", &bo)],
    );
    std::fs::write(
        home.join("loopwatch/policy.toml"),
        format!(
            "allowed_signers = \"{}\"\n[gate.out-of-scope]\nrequired = 2\nsignature = true\n",
            allowed.display()
        ),
    )
    .unwrap();
    let cmd = |args: &[&str]| {
        let mut c = p.cmd();
        c.env("XDG_CONFIG_HOME", &home).args(args);
        c
    };
    let run = Engine::spawn(&mut cmd(&["run", "--headless", CONTRACT]));
    let req = p.wait_for_gate("the out-of-scope gate");
    let id = req["id"].as_str().unwrap().to_string();
    let decide = |key: &Path| {
        cmd(&[
            "decide",
            &id,
            "approve",
            "--reason",
            "the Makefile belongs to the change",
            "--sign",
            "--key",
            key.to_str().unwrap(),
        ])
        .output()
        .unwrap()
    };
    let out = decide(&ana);
    assert!(
        out.status.success() || out.status.code() == Some(10),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let approved = p.wait_for("the first approval", |e| {
        e.iter().any(|e| e["type"] == "human.approved")
    });
    assert!(!approved.iter().any(|e| e["type"] == "human.decided"));
    assert_eq!(p.open_gates(), vec![id.clone()]);
    // The same signer again: refused by the rule, at the door.
    assert_failed(
        &decide(&ana),
        2,
        "was already approved by signer ana@example.org",
    );
    let out = decide(&bo);
    assert!(
        matches!(out.status.code(), Some(0 | 10..=14)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    p.wait_for("the run's end", |e| {
        e.iter().any(|e| e["type"] == "run.ended")
    });
    let out = run.wait_with_output();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decided = p.of_type("human.decided");
    assert_eq!(decided.len(), 1, "{:#?}", p.events());
    assert_eq!(decided[0]["approvedBy"][0], "signer ana@example.org");
    let v = cmd(&[
        "verify",
        ".",
        "--allowed-signers",
        allowed.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert_eq!(
        v.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&v.stdout)
    );
}

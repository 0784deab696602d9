use super::*;

const GOOD: &str = r#"[run]
test = "cargo test"
diff = "main"
max_rounds = 2

[agents.developer]
command = "sh ./dev.sh"
timeout = "20m"

[agents.verifier]
command = "cat"
adapter = "generic"
model = "sonnet"

[agents.auditor]
command = "cat"
timeout = "1h 30m"

[agents.finding-verifier]
command = "cat"
max_concurrency = 8

[verify_by_test]
enabled = true
step_timeout = "600s"
"#;

fn parse(text: &str) -> Result<Config, ConfigError> {
    let path = std::env::var_os("PATH");
    Config::parse(Path::new("/w/loopwatch.toml"), text, path.as_deref())
}

#[test]
fn a_full_file_is_read() {
    let c = parse(GOOD).unwrap();
    assert_eq!(c.run.test, "cargo test");
    assert_eq!(c.run.diff.as_deref(), Some("main"));
    assert_eq!(c.run.max_rounds, 2);
    let dev = c.agent(AgentRole::Developer).unwrap();
    assert_eq!(dev.timeout, Duration::from_secs(1200));
    assert_eq!(dev.adapter, AdapterKind::Generic);
    assert_eq!(
        c.agent(AgentRole::Auditor).unwrap().timeout,
        Duration::from_secs(5400)
    );
    assert_eq!(
        c.agent(AgentRole::Verifier).unwrap().model.as_deref(),
        Some("sonnet")
    );
    assert_eq!(
        c.agent(AgentRole::FindingVerifier).unwrap().max_concurrency,
        8
    );
    assert!(c.verify_by_test.enabled);
}

fn err(text: &str) -> ConfigError {
    parse(text).unwrap_err()
}

#[test]
fn an_unknown_key_names_its_line_and_key() {
    let e = err(&GOOD.replace("timeout = \"20m\"", "timout = \"20m\""));
    assert_eq!(e.line, 8, "{e}");
    assert_eq!(e.key, "agents.developer.timout", "{e}");
    assert!(e.message.contains("unknown field"), "{e}");
    assert!(
        e.to_string()
            .starts_with("/w/loopwatch.toml:8: agents.developer.timout: "),
        "{e}"
    );
    let e = err(&GOOD.replace("[agents.auditor]", "[agents.auditorr]"));
    assert_eq!(e.line, 15, "{e}");
    assert!(e.message.contains("auditorr"), "{e}");
}

#[test]
fn a_missing_required_agent_is_named() {
    let text = GOOD.replace(
        "[agents.auditor]\ncommand = \"cat\"\ntimeout = \"1h 30m\"\n",
        "",
    );
    let e = err(&text);
    assert_eq!(e.key, "agents.auditor");
    assert_eq!(e.line, 6);
    assert!(e.message.contains("missing required agent"), "{e}");
}

#[test]
fn a_command_that_does_not_exist_is_refused() {
    let e = err(&GOOD.replace(
        "command = \"cat\"\nadapter",
        "command = \"no-such-program-lw --x\"\nadapter",
    ));
    assert_eq!(
        (e.line, e.key.as_str()),
        (11, "agents.verifier.command"),
        "{e}"
    );
    assert!(
        e.message
            .contains("command not found: 'no-such-program-lw'"),
        "{e}"
    );
    // A claude agent without a command needs `claude` on PATH.
    let e = Config::parse(
        Path::new("/w/loopwatch.toml"),
        &GOOD
            .replace("adapter = \"generic\"", "adapter = \"claude\"")
            .replace("command = \"cat\"\nadapter", "adapter"),
        Some(std::ffi::OsStr::new("/nonexistent")),
    )
    .unwrap_err();
    assert!(e.message.contains("command not found"), "{e}");
}

#[test]
fn a_command_that_is_not_executable_is_refused_naming_the_file() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("dev.sh"), "#!/bin/sh\necho done\n").unwrap();
    let config = d.path().join("loopwatch.toml");
    let text = GOOD.replace(
        "command = \"cat\"\nadapter",
        "command = \"./dev.sh --fast\"\nadapter",
    );
    let parse = || Config::parse(&config, &text, std::env::var_os("PATH").as_deref());
    let e = parse().unwrap_err();
    assert_eq!(e.key, "agents.verifier.command", "{e}");
    assert!(
        e.message.contains("command './dev.sh' is not executable"),
        "{e}"
    );
    assert!(e.message.contains("chmod +x"), "{e}");
    // The same file, executable, is taken.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        d.path().join("dev.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    assert!(parse().is_ok());
}

#[test]
fn bad_values_name_their_key() {
    let e = err(&GOOD.replace("\"20m\"", "\"twenty\""));
    assert_eq!(
        (e.line, e.key.as_str()),
        (8, "agents.developer.timeout"),
        "{e}"
    );
    assert!(e.message.contains("not a duration"), "{e}");
    let e = err(&GOOD.replace("\"20m\"", "\"0s\""));
    assert!(e.message.contains("above zero"), "{e}");
    let e = err(&GOOD.replace("max_rounds = 2", "max_rounds = 0"));
    assert_eq!((e.line, e.key.as_str()), (4, "run.max_rounds"), "{e}");
    let e = err(&GOOD.replace("max_rounds = 2", "max_rounds = \"two\""));
    assert_eq!((e.line, e.key.as_str()), (4, "run.max_rounds"), "{e}");
    let e = err(&GOOD.replace("adapter = \"generic\"", "adapter = \"gpt\""));
    assert_eq!(
        (e.line, e.key.as_str()),
        (12, "agents.verifier.adapter"),
        "{e}"
    );
    let e = err(&GOOD.replace("model = \"sonnet\"", "prompt_file = \"nope.md\""));
    assert_eq!(
        (e.line, e.key.as_str()),
        (13, "agents.verifier.prompt_file"),
        "{e}"
    );
    let e = err("[run\n");
    assert_eq!(e.line, 1, "{e}");
}

#[test]
fn a_review_stage_needs_its_finding_verifier_and_verify_by_test_its_agent() {
    let text = "[agents.developer]\ncommand = \"cat\"\n[agents.verifier]\ncommand = \"cat\"\n[agents.auditor]\ncommand = \"cat\"\n[agents.reviewer]\ncommand = \"cat\"\n";
    let e = err(text);
    assert_eq!(e.line, 7);
    assert_eq!(e.key, "agents.finding-verifier");
    assert!(
        e.message.contains("needs an [agents.finding-verifier]"),
        "{e}"
    );
    let ok = parse(&format!(
        "{text}[agents.finding-verifier]\ncommand = \"cat\"\n[verify_by_test]\nenabled = true\n"
    ))
    .unwrap();
    let off = ok.verify_by_test_off().unwrap();
    assert!(
        off.ends_with("there is no [agents.verify-by-test]: verify-by-test is off for this run"),
        "{off}"
    );
    assert_eq!(
        parse(GOOD)
            .unwrap()
            .verify_by_test_off()
            .map(|s| s.contains("[agents.reviewer]")),
        Some(true)
    );
}

#[test]
fn notify_and_expiry_are_read_and_their_errors_name_the_line_and_key() {
    let c = parse(&format!(
        "{GOOD}\n[notify]\nwebhook = \"http://127.0.0.1:9/x\"\ndelay = \"30s\"\n\n[expiry.out-of-scope]\nafter = \"30m\"\naction = \"deny\"\n"
    ))
    .unwrap();
    assert!(c.notify.webhook.is_some());
    assert_eq!(c.notify.delay, Duration::from_secs(30));
    let rule = &c.expiry[&crate::model::HumanGateKind::OutOfScope];
    assert_eq!((rule.after.as_str(), rule.action.as_str()), ("30m", "deny"));
    assert!(parse(GOOD).unwrap().expiry.is_empty());

    // Each bad table after GOOD: the line of its problem and the key named.
    let lines = GOOD.lines().count();
    for (extra, line, key) in [
        (
            "[notify]\ndelay = \"1s\"\nremind = \"0s\"\n",
            4,
            Some("notify.remind"),
        ),
        (
            "[notify]\nwebhook = \"ftp://x\"\n",
            3,
            Some("notify.webhook"),
        ),
        ("[notify]\nloud = true\n", 3, None),
        (
            "[expiry.out-of-scope]\nafter = \"0s\"\naction = \"deny\"\n",
            3,
            Some("expiry.out-of-scope.after"),
        ),
        (
            "[expiry.out-of-scope]\nafter = \"5m\"\naction = \"accept\"\n",
            4,
            Some("expiry.out-of-scope.action"),
        ),
        (
            "[expiry.sideways]\nafter = \"5m\"\naction = \"deny\"\n",
            2,
            Some("expiry.sideways"),
        ),
    ] {
        let e = parse(&format!("{GOOD}\n{extra}")).unwrap_err();
        assert_eq!(e.line, lines + line, "{extra}: {e}");
        if let Some(key) = key {
            assert_eq!(e.key, key, "{extra}: {e}");
        }
    }
}

#[test]
fn a_prompt_file_no_dispatch_could_use_is_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("loopwatch.toml");
    let fv = d.path().join("fv.md");
    let with = |prompt: &str| {
        let text = GOOD.replace(
            "max_concurrency = 8",
            &format!("max_concurrency = 8\nprompt_file = \"{prompt}\""),
        );
        let path = std::env::var_os("PATH");
        Config::parse(&file, &text, path.as_deref())
    };
    std::fs::write(
        &fv,
        "Shared.\n<!-- step: parse -->\nP\n<!-- step: verify -->\nV\n",
    )
    .unwrap();
    let c = with("fv.md").unwrap();
    assert_eq!(
        c.agent(AgentRole::FindingVerifier)
            .unwrap()
            .prompt_file
            .as_deref(),
        Some(fv.as_path())
    );
    std::fs::write(
        &fv,
        "Shared.\n<!-- step: parse -->\nP\n<!-- step: check -->\nV\n",
    )
    .unwrap();
    let e = with("fv.md").unwrap_err();
    assert_eq!(
        (e.line, e.key.as_str()),
        (22, "agents.finding-verifier.prompt_file"),
        "{e}"
    );
    assert!(
        e.message.ends_with(
            "fv.md: line 4: `<!-- step: check -->` names no step of the finding-verifier (the steps of the finding-verifier are parse, verify)"
        ),
        "{e}"
    );
    std::fs::write(&fv, b"caf\xe9\n").unwrap();
    let e = with("fv.md").unwrap_err();
    assert!(e.message.ends_with("fv.md: line 1: not UTF-8 text"), "{e}");
}

#[test]
fn a_budget_is_read_for_the_run_and_per_role() {
    let budget = "[budget]\nusd = 5\ntokens = 200000\nwall = \"1h 30m\"\nhard = true\n\n[budget.developer]\nusd = 2.5\n";
    // An unknown table after it is still refused by name.
    assert!(parse(&format!("{GOOD}\n{budget}\n[run2]\n")).is_err());
    let c = parse(&format!("{GOOD}\n{budget}")).unwrap();
    assert_eq!(c.budget.run.usd, Some(5.0));
    assert_eq!(c.budget.run.tokens, Some(200_000));
    assert_eq!(c.budget.run.wall, Some(Duration::from_secs(5400)));
    assert!(c.budget.hard);
    assert_eq!(c.budget.roles[&AgentRole::Developer].usd, Some(2.5));
    // The defaults of [run]'s new keys.
    assert!(!c.run.wait_for_limit);
    assert_eq!(c.run.stagnant_after, 1);
    let c = parse(&GOOD.replace(
        "max_rounds = 2",
        "max_rounds = 2\nwait_for_limit = true\nstagnant_after = 2",
    ))
    .unwrap();
    assert!(c.run.wait_for_limit);
    assert_eq!(c.run.stagnant_after, 2);
}

#[test]
fn a_bad_budget_names_its_key_and_line() {
    let with = |budget: &str| err(&format!("{GOOD}\n{budget}"));
    let lines_before = GOOD.lines().count() + 1;
    for (budget, key, says, line) in [
        (
            "[budget]\nusd = 0\nwall = \"1h\"\n",
            "budget.usd",
            "0 must be above zero",
            2,
        ),
        (
            "[budget]\nusd = -2\nwall = \"1h\"\n",
            "budget.usd",
            "-2 must be above zero",
            2,
        ),
        (
            "[budget]\nwall = \"1h\"\nusd = \"five\"\n",
            "budget.usd",
            "must be a number of US dollars",
            3,
        ),
        (
            "[budget]\ntokens = 0\n",
            "budget.tokens",
            "0 must be above zero",
            2,
        ),
        (
            "[budget]\ntokens = 1.5\n",
            "budget.tokens",
            "whole number of tokens",
            2,
        ),
        (
            "[budget]\nwall = \"soon\"\n",
            "budget.wall",
            "'soon' is not a duration",
            2,
        ),
        (
            "[budget]\nwall = 60\n",
            "budget.wall",
            "must be a duration in quotes",
            2,
        ),
        (
            "[budget]\nhard = \"yes\"\n",
            "budget.hard",
            "must be true or false",
            2,
        ),
        (
            "[budget]\ndollars = 3\n",
            "budget.dollars",
            "unknown key",
            2,
        ),
        (
            "[budget.wizard]\nusd = 1\n",
            "budget.wizard",
            "unknown agent role",
            1,
        ),
        (
            "[budget.developer]\nwall = \"1h\"\ncost = 1\n",
            "budget.developer.cost",
            "unknown key",
            3,
        ),
        (
            "[budget.developer]\nusd = 0\n",
            "budget.developer.usd",
            "must be above zero",
            2,
        ),
    ] {
        let e = with(budget);
        assert_eq!(e.key, key, "{budget}: {e}");
        assert!(e.message.contains(says), "{budget}: {e}");
        assert_eq!(e.line, lines_before + line, "{budget}: {e}");
    }
}

#[test]
fn a_dollar_budget_is_refused_when_a_role_reports_no_cost() {
    // Generic agents report no cost: dollars alone cannot be kept.
    let e = err(&format!("{GOOD}\n[budget]\nusd = 5\n"));
    assert_eq!(e.key, "budget.usd");
    assert!(
        e.message.contains("reports no cost") && e.message.contains("add tokens or wall"),
        "{e}"
    );
    let e = err(&format!("{GOOD}\n[budget.verifier]\nusd = 1\n"));
    assert_eq!(e.key, "budget.verifier.usd");
    assert!(
        e.message.contains("[agents.verifier] (adapter generic)"),
        "{e}"
    );
    // Covered by agent time or tokens: taken.
    assert!(parse(&format!("{GOOD}\n[budget]\nusd = 5\nwall = \"2h\"\n")).is_ok());
    assert!(
        parse(&format!(
            "{GOOD}\n[budget]\nusd = 5\n\n[budget.developer]\ntokens = 900\n"
        ))
        .is_err()
    );
}

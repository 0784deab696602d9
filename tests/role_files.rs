//! The role files shipped with loopwatch (`assets/agents/*.md`), read the
//! way loopwatch reads the agents that follow them: every example answer is
//! parsed with the parser of its role's gate and must give the verdict it
//! claims, and every example input must be exactly what loopwatch's own
//! code builds for it. So the prompts and the parsers cannot drift apart.
//!
//! An example is a fenced block whose info string starts with `answer` or
//! `input`, followed by the claims (`key=value`, shell-quoted when the
//! value holds blanks): ```` ```answer verdict=ECARTS(3) ````. An answer is
//! judged with the inputs of the last `input` example before it (the
//! findings a triage sorts, the finding a lane verifies).

mod support;

use support::role_files::{Example, VbtInput, examples, triage_input};

use loopwatch::engine::review::verify_by_test::{answer, runner};
use loopwatch::engine::review::{graph, lane, triage, verdict_gate};
use loopwatch::engine::roles::{self, ROLE_FILES};
use loopwatch::model::event::{AgentRole, RunInfo};
use loopwatch::model::{State, rules};
use loopwatch::parse::{StructuralKind, parse_conformity, parse_security};
use serde_json::Value;

/// What a role's (or step's) examples are checked with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checker {
    Developer,
    Verifier,
    Auditor,
    Reviewer,
    Parse,
    Lane,
    Triage,
    VerifyByTest,
}

/// The parts of each role file and the checker of each.
fn parts(role: AgentRole) -> Vec<(Option<&'static str>, Checker)> {
    match role {
        AgentRole::Developer => vec![(None, Checker::Developer)],
        AgentRole::Verifier => vec![(None, Checker::Verifier)],
        AgentRole::Auditor => vec![(None, Checker::Auditor)],
        AgentRole::Reviewer => vec![(None, Checker::Reviewer)],
        AgentRole::FindingVerifier => {
            vec![
                (Some("parse"), Checker::Parse),
                (Some("verify"), Checker::Lane),
            ]
        }
        AgentRole::Triage => vec![(None, Checker::Triage)],
        AgentRole::VerifyByTest => vec![(None, Checker::VerifyByTest)],
    }
}

/// The claims an answer of each checker must make (all of them, no other).
fn answer_claims(c: Checker) -> &'static [&'static str] {
    match c {
        Checker::Developer | Checker::Verifier => &["verdict"],
        Checker::Auditor => &["verdict", "degraded?"],
        Checker::Reviewer | Checker::Parse => &["findings"],
        Checker::Lane => &["verdict", "finding"],
        Checker::Triage => &["accepted", "deferred", "rejected"],
        Checker::VerifyByTest => &["tests"],
    }
}

/// The verdict kinds (or list shapes) every role file must show an example of.
fn required_kinds(c: Checker) -> &'static [&'static str] {
    match c {
        Checker::Verifier => &["CONFORME", "ECARTS", "ABANDONED", "ERROR"],
        Checker::Auditor => &["PASS", "BLOCK", "DEGRADED", "ERROR"],
        Checker::Lane => &["VERIFIED", "FALSE", "UNVERIFIABLE"],
        Checker::Reviewer | Checker::Parse => &["some", "none"],
        Checker::Developer => &["none"],
        Checker::Triage => &["some"],
        Checker::VerifyByTest => &["some", "none"],
    }
}

/// Everything wrong with the examples of one role file's text; empty when
/// every example reads as it claims.
fn problems(name: &str, role: AgentRole, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let whole = match examples(text) {
        Ok(e) => e,
        Err(e) => return vec![format!("{name}: {e}")],
    };
    let mut counted = 0;
    for (step, checker) in parts(role) {
        let at = match step {
            Some(s) => format!("{name} (step {s})"),
            None => name.to_string(),
        };
        let part = match roles::for_step(role, text, step) {
            Ok(p) => p.into_owned(),
            Err(e) => {
                out.push(format!("{at}: {e}"));
                continue;
            }
        };
        let found = match examples(&part) {
            Ok(e) => e,
            Err(e) => {
                out.push(format!("{at}: {e}"));
                continue;
            }
        };
        counted += found.len();
        let mut kinds = Vec::new();
        let mut last_input: Option<Example> = None;
        let (mut answers, mut inputs) = (0, 0);
        for ex in &found {
            let label = format!(
                "{at}: the example at line {} of its part (```{} …)",
                ex.line, ex.kind
            );
            let result = if ex.kind == "input" {
                inputs += 1;
                last_input = Some(ex.clone());
                check_input(checker, ex)
            } else {
                answers += 1;
                check_answer(checker, ex, last_input.as_ref()).map(|k| kinds.push(k))
            };
            if let Err(e) = result {
                out.push(format!("{label}: {e}"));
            }
        }
        if answers == 0 {
            out.push(format!("{at}: no ```answer example"));
        }
        if inputs == 0 {
            out.push(format!("{at}: no ```input example"));
        }
        for want in required_kinds(checker) {
            if answers > 0 && !kinds.iter().any(|k| k == want) {
                out.push(format!(
                    "{at}: no example answer of kind {want} (found {kinds:?})"
                ));
            }
        }
    }
    if counted != whole.len() {
        out.push(format!(
            "{name}: {} example(s) in the file, {counted} in its steps: an example outside a step's section reaches every step",
            whole.len()
        ));
    }
    out
}

/// An example reads as it is: nothing had to be removed to read it.
fn clean(normalized: &[String]) -> Result<(), String> {
    if normalized.is_empty() {
        Ok(())
    } else {
        Err(format!("reads only after normalising it: {normalized:?}"))
    }
}

fn claim<'a>(ex: &'a Example, key: &str) -> Result<&'a str, String> {
    ex.claims
        .get(key)
        .map(String::as_str)
        .ok_or_else(|| format!("no `{key}=` claim"))
}

fn count_claim(ex: &Example, key: &str) -> Result<usize, String> {
    claim(ex, key)?
        .parse()
        .map_err(|_| format!("`{key}=` is not a number"))
}

/// Checks one answer against its claims; `Ok` gives its kind (for the
/// coverage of verdict kinds).
fn check_answer(c: Checker, ex: &Example, input: Option<&Example>) -> Result<String, String> {
    let allowed = answer_claims(c);
    for k in ex.claims.keys() {
        if !allowed.iter().any(|a| a.trim_end_matches('?') == k) {
            return Err(format!("unknown claim `{k}=` (expected {allowed:?})"));
        }
    }
    for k in allowed.iter().filter(|k| !k.ends_with('?')) {
        claim(ex, k)?;
    }
    let body = ex.body.as_bytes();
    match c {
        Checker::Developer => {
            if claim(ex, "verdict")? != "none" {
                return Err("a developer's answer claims verdict=none".into());
            }
            if ex.body.trim().is_empty() {
                return Err("the report is empty".into());
            }
            for (gate, r) in [
                ("GATE 1", parse_conformity("example", body).map(|_| ())),
                ("GATE 2", parse_security("example", body).map(|_| ())),
            ] {
                match r {
                    Err(e) if e.kind == StructuralKind::NoVerdict => {}
                    _ => {
                        return Err(format!(
                            "the developer's report holds a {gate} verdict line"
                        ));
                    }
                }
            }
            Ok("none".into())
        }
        Checker::Verifier | Checker::Auditor => {
            let parsed = if c == Checker::Verifier {
                parse_conformity("example", body)
            } else {
                parse_security("example", body)
            };
            let out = parsed.map_err(|e| format!("does not parse: {e}"))?;
            clean(&out.normalized)?;
            let want = claim(ex, "verdict")?;
            let got = out.verdict.to_string();
            if got != want {
                return Err(format!("claims verdict {want}, parses as {got}"));
            }
            let degraded = ex
                .claims
                .get("degraded")
                .map(String::as_str)
                .unwrap_or("false");
            if c == Checker::Auditor && degraded != out.degraded.to_string() {
                return Err(format!(
                    "claims degraded={degraded}, parses as {}",
                    out.degraded
                ));
            }
            Ok(out.verdict.kind.as_str().to_string())
        }
        Checker::Reviewer | Checker::Parse => {
            let p = graph::parse_answer(body)
                .map_err(|e| format!("is refused by the parse step's gate: {e}"))?;
            clean(&p.normalized)?;
            let want = count_claim(ex, "findings")?;
            if p.findings.len() != want {
                return Err(format!(
                    "claims {want} findings, parses as {}",
                    p.findings.len()
                ));
            }
            if c == Checker::Reviewer {
                for f in &p.findings {
                    let sev = f.item["severity"].as_str().unwrap_or_default();
                    if !["blocking", "major", "minor", "nit"].contains(&sev) {
                        return Err(format!(
                            "{}: severity {sev:?} is not one the reviewer is told to use",
                            f.id
                        ));
                    }
                }
            }
            Ok(if want == 0 { "none" } else { "some" }.into())
        }
        Checker::Lane => {
            let id = claim(ex, "finding")?;
            let input =
                input.ok_or("no ```input example before it: which finding does it judge?")?;
            let asked: Value = serde_json::from_str(&input.body).map_err(|e| e.to_string())?;
            if asked["finding"]["id"] != id {
                return Err(format!(
                    "judges {id}, but the input before it is about {}",
                    asked["finding"]["id"]
                ));
            }
            let j = verdict_gate::judge(body, id)
                .map_err(|e| format!("is rejected by the verdict gate: {e}"))?;
            clean(&j.normalized)?;
            let want = claim(ex, "verdict")?;
            if j.verdict.as_str() != want {
                return Err(format!(
                    "claims verdict {want}, the gate reads {}",
                    j.verdict.as_str()
                ));
            }
            Ok(want.to_string())
        }
        Checker::Triage => {
            let input =
                input.ok_or("no ```input example before it: which findings does it sort?")?;
            let (iteration, findings) = triage_input(&input.body)?;
            let t = triage::agent_triage(body, iteration, &findings)
                .map_err(|e| format!("is refused as a triage file: {e}"))?;
            for (bucket, n) in [
                ("accepted", t.accepted.len()),
                ("deferred", t.deferred.len()),
                ("rejected", t.rejected.len()),
            ] {
                let want = count_claim(ex, bucket)?;
                if want != n {
                    return Err(format!("claims {bucket}={want}, holds {n}"));
                }
            }
            if let Some(f) = t
                .deferred
                .iter()
                .chain(&t.rejected)
                .find(|f| f.reason.as_deref().is_none_or(|r| r.trim().is_empty()))
            {
                return Err(format!("{} is deferred or rejected without a reason", f.id));
            }
            Ok("some".into())
        }
        Checker::VerifyByTest => {
            let input =
                input.ok_or("no ```input example before it: which findings are asked for?")?;
            let v = VbtInput::read(&input.body)?;
            let asked: Vec<String> = v.findings.iter().map(|f| f.id.clone()).collect();
            let a = answer::read(body, &asked).map_err(|e| format!("is refused: {e}"))?;
            if !a.normalized.is_empty() || !a.ignored.is_empty() {
                return Err(format!(
                    "normalised {:?}, ignored {:?}",
                    a.normalized, a.ignored
                ));
            }
            let cmd = runner::detect(&v.test).map_err(|e| e.to_string())?;
            for (finding, entry) in &a.by_finding {
                let r = entry.as_ref().map_err(|e| format!("{finding}: {e}"))?;
                let report = std::path::Path::new("/p/.pipeline/verify-1.report");
                runner::invocation(&cmd, &ExampleProject, &r.file, &r.test_ref, report)
                    .map_err(|e| format!("{finding}: loopwatch cannot run {}: {e}", r.test_ref))?;
            }
            let want = count_claim(ex, "tests")?;
            if a.by_finding.len() != want {
                return Err(format!("claims {want} tests, reads {}", a.by_finding.len()));
            }
            Ok(if want == 0 { "none" } else { "some" }.into())
        }
    }
}

/// The project of the role file's examples: a cargo package at the top
/// (what `runner::invocation` reads of a worktree).
struct ExampleProject;

impl runner::Worktree for ExampleProject {
    fn read(&self, rel: &str) -> Option<String> {
        (rel == "Cargo.toml").then(|| "[package]\nname = \"shop\"\n".to_string())
    }
    fn is_file(&self, rel: &str) -> bool {
        rel == "Cargo.toml" || rel == "src/lib.rs"
    }
    fn files(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Checks one example input: rebuilt from its own values with the code
/// loopwatch builds the role's input with, it must come out the same.
fn check_input(c: Checker, ex: &Example) -> Result<(), String> {
    if !ex.claims.is_empty() {
        return Err("an input makes no claim".into());
    }
    let field = |name: &str| {
        ex.body
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}: ")))
            .map(str::to_string)
            .ok_or_else(|| format!("no `{name}:` line"))
    };
    let run = |diff: String| -> Result<RunInfo, String> {
        Ok(RunInfo {
            contract: field("CONTRACT").unwrap_or_default(),
            diff,
            test: field("TEST")
                .map(|t| if t == "none" { String::new() } else { t })
                .unwrap_or_default(),
            ..RunInfo::default()
        })
    };
    let state = |run: RunInfo| State {
        run: Some(run),
        ..State::default()
    };
    let built = match c {
        Checker::Developer => {
            let request = ex
                .body
                .split_once("\nREQUEST:\n")
                .map(|(_, r)| r.to_string())
                .ok_or("no `REQUEST:` section")?;
            rules::developer_input(&state(run(String::new())?), 1, &request)
        }
        Checker::Verifier => rules::verifier_input(&run(field("DIFF")?)?),
        Checker::Auditor => rules::auditor_input(&run(field("SCOPE")?)?),
        Checker::Reviewer => rules::review::reviewer_input(&state(run(field("DIFF")?)?)),
        Checker::Parse => {
            let review = ex
                .body
                .strip_prefix("REVIEW:\n")
                .ok_or("does not start with `REVIEW:`")?;
            graph::parse_input(review, None)
        }
        Checker::Lane => {
            let v: Value = serde_json::from_str(&ex.body).map_err(|e| e.to_string())?;
            let job = lane::LaneJob {
                iteration: 1,
                index: 0,
                finding: v["finding"]["id"].as_str().unwrap_or_default().to_string(),
                item: v["finding"].clone(),
                project_dir: v["project_dir"]
                    .as_str()
                    .ok_or("no project_dir")?
                    .to_string(),
            };
            lane::input(&job, None)
        }
        Checker::Triage => {
            let (iteration, findings) = triage_input(&ex.body)?;
            triage::input(iteration, &findings)
        }
        Checker::VerifyByTest => VbtInput::read(&ex.body)?.rebuild(),
    };
    if built != ex.body {
        return Err(format!(
            "is not what loopwatch sends for the same values:\n--- the example\n{}--- loopwatch's\n{built}",
            ex.body
        ));
    }
    Ok(())
}

#[test]
fn every_example_of_every_role_file_reads_as_it_claims() {
    let mut all = Vec::new();
    for f in &ROLE_FILES {
        all.extend(problems(f.file_name, f.role, f.text));
    }
    assert!(all.is_empty(), "\n{}", all.join("\n\n"));
}

#[test]
fn the_role_files_are_the_assets_and_cover_every_role() {
    for role in AgentRole::ALL {
        let f = roles::role_file(role);
        let on_disk = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("assets/agents")
                .join(f.file_name),
        )
        .unwrap();
        assert_eq!(on_disk, f.text, "{}", f.file_name);
    }
}

/// The checker itself: a file without examples, an example that does not
/// parse, a verdict that is not the one claimed, an input loopwatch would
/// not send, an example shared by two steps: each is a problem.
#[test]
fn the_check_fails_on_a_file_that_drifted() {
    let verifier = roles::role_file(AgentRole::Verifier).text;
    let p = problems(
        "v.md",
        AgentRole::Verifier,
        "# Verifier\nNo examples at all.\n",
    );
    assert!(p.iter().any(|x| x == "v.md: no ```answer example"), "{p:?}");
    assert!(p.iter().any(|x| x == "v.md: no ```input example"), "{p:?}");

    let wrong = verifier.replace("```answer verdict=ECARTS(3)", "```answer verdict=ECARTS(2)");
    let p = problems("v.md", AgentRole::Verifier, &wrong);
    assert!(
        p.iter()
            .any(|x| x.ends_with("claims verdict ECARTS(2), parses as ECARTS(3)")),
        "{p:?}"
    );

    let broken = verifier.replacen("PROOF: read 6 files", "PROOFS: read 6 files", 1);
    let p = problems("v.md", AgentRole::Verifier, &broken);
    assert!(
        p.iter()
            .any(|x| x.contains("does not parse") && x.contains("fits no section")),
        "{p:?}"
    );

    let only_conforme = verifier.replace("```answer verdict=ABANDONED(1)", "```text");
    let p = problems("v.md", AgentRole::Verifier, &only_conforme);
    assert!(
        p.iter()
            .any(|x| x.contains("no example answer of kind ABANDONED")),
        "{p:?}"
    );

    let input = verifier.replace("TEST: cargo test\n```", "TESTS: cargo test\n```");
    let p = problems("v.md", AgentRole::Verifier, &input);
    assert!(
        p.iter().any(|x| x.contains("is not what loopwatch sends")),
        "{p:?}"
    );

    let fv = roles::role_file(AgentRole::FindingVerifier).text;
    let shared = fv.replacen(
        "<!-- step: parse -->",
        "```answer findings=0\n{\"findings_list\": [], \"project_dir\": \".\"}\n```\n<!-- step: parse -->",
        1,
    );
    let p = problems("fv.md", AgentRole::FindingVerifier, &shared);
    assert!(
        p.iter()
            .any(|x| x.contains("an example outside a step's section")),
        "{p:?}"
    );

    let lane = fv.replace(
        "\"verdict\": \"FALSE\", \"evidence\": \"src/export/csv.rs:88",
        "\"verdict\": \"FALSE\", \"evidence\": \"\", \"was\": \"src/export/csv.rs:88",
    );
    let p = problems("fv.md", AgentRole::FindingVerifier, &lane);
    assert!(
        p.iter()
            .any(|x| x.contains("rejected by the verdict gate: FALSE without evidence")),
        "{p:?}"
    );
}

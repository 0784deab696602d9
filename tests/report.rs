//! The run report on a constructed run whose abandonment was accepted as
//! partial although `complete` was recorded: markdown and JSON snapshots
//! through the real binary, deferred findings read from the triage file,
//! every decision with who, when, why and hash, the red tests; the HTML is
//! one self-contained file that headless Chromium opens and shows whole.
//! A second run, in a real git repository with snapshots, agents' usage and
//! secrets planted in a reason, in evidence and in the code: the criteria
//! and findings tables, the code changes per iteration, tokens and cost,
//! the SVG picture, and no planted secret left in any format.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use loopwatch::journal::{Pipeline, snapshot};
use loopwatch::report::Report;
use support::assert_has;
use support::code::{journal_text, loopwatch, repo, stdout_of, write};

/// The decisions of the constructed run: id, decision, by, at, reason, hash.
const DECISIONS: [[&str; 6]; 2] = [
    [
        "hg-2-conformity-1",
        "approve",
        "ana@desk",
        "2026-12-04T09:30:00Z",
        "the build script embeds the fonts",
        "sha256:4444444444444444444444444444444444444444444444444444444444444444",
    ],
    [
        "hg-2-conformity-2",
        "accept-partial",
        "bo@box",
        "2026-12-04T09:31:00Z",
        "speed target moves to the next release",
        "sha256:5555555555555555555555555555555555555555555555555555555555555555",
    ],
];

/// A worktree whose `.pipeline` holds the constructed run and its triage file.
fn worktree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let pipeline = dir.path().join(".pipeline");
    std::fs::create_dir(&pipeline).expect("mkdir");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay/report-run");
    for name in ["events.jsonl", "triage-2.json"] {
        std::fs::copy(src.join(name), pipeline.join(name)).expect("copy fixture");
    }
    dir
}

fn report_stdout(dir: &Path, format: &str) -> String {
    stdout_of(loopwatch(dir).args(["report", "--format", format]))
}

#[test]
fn markdown_report_of_a_run_accepted_as_partial() {
    let w = worktree();
    insta::assert_snapshot!("report_partial_md", report_stdout(w.path(), "md"));
}

#[test]
fn json_report_of_a_run_accepted_as_partial() {
    let w = worktree();
    insta::assert_snapshot!("report_partial_json", report_stdout(w.path(), "json"));
}

#[test]
fn the_report_is_partial_with_every_decision_the_deferred_findings_and_red_tests() {
    let w = worktree();
    let json: serde_json::Value =
        serde_json::from_str(&report_stdout(w.path(), "json")).expect("json report");
    assert_eq!(json["finalStatus"], "partial");
    assert_eq!(
        json["statusNote"],
        "recorded as complete, but an abandonment was accepted: reported as partial"
    );
    let decisions: Vec<[String; 6]> = json["decisions"]
        .as_array()
        .expect("decisions")
        .iter()
        .map(|d| {
            ["id", "decision", "by", "at", "reason", "evidenceHash"]
                .map(|k| d[k].as_str().unwrap_or("").to_string())
        })
        .collect();
    assert_eq!(decisions, DECISIONS.map(|d| d.map(String::from)).to_vec());
    assert_eq!(
        json["deferred"],
        serde_json::json!([
            {"iteration": 2, "id": "F2", "title": "slow on network mounts", "reason": "unverifiable without a network mount"},
            {"iteration": 2, "id": "F3", "title": "module doc missing", "reason": "docs pass next sprint"}
        ])
    );
    assert_eq!(
        json["redTests"],
        serde_json::json!([{"file": "tests/pdf.rs", "testRef": "tests/pdf.rs::pages_restart", "issue": "F1"}])
    );
}

#[test]
fn without_the_triage_file_no_deferred_finding_is_invented() {
    let w = worktree();
    std::fs::remove_file(w.path().join(".pipeline/triage-2.json")).expect("remove triage file");
    let json: serde_json::Value =
        serde_json::from_str(&report_stdout(w.path(), "json")).expect("json report");
    assert_eq!(json["deferred"], serde_json::json!([]));
    assert_eq!(json["finalStatus"], "partial");
}

#[test]
fn a_run_recorded_complete_without_an_accepted_abandonment_stays_complete() {
    let w = worktree();
    let journal = w.path().join(".pipeline/events.jsonl");
    let text = std::fs::read_to_string(&journal).expect("journal");
    std::fs::write(
        &journal,
        text.replace("\"decision\":\"accept-partial\"", "\"decision\":\"lift\""),
    )
    .expect("write");
    let snap = snapshot(&Pipeline::at(w.path().join(".pipeline")))
        .expect("read")
        .expect("journal");
    let r = Report::build(&snap.state, None);
    assert_eq!(r.final_status, "complete");
    assert_eq!(r.status_note, None);
    assert_eq!(r.abandonments.len(), 1);
    assert_eq!(r.abandonments[0].decision, "lift");
    assert_eq!(
        r.deferred.len(),
        0,
        "no pipeline folder given: no triage file read"
    );
}

#[test]
fn report_without_a_pipeline_exits_3() {
    let empty = tempfile::tempdir().expect("temp dir");
    let arg = empty.path().to_str().expect("utf-8 path");
    loopwatch(empty.path())
        .args(["report", arg])
        .assert()
        .code(3)
        .stdout("")
        .stderr(format!("loopwatch: no pipeline at {arg}/.pipeline\n"));
}

/// Writes the HTML report with `-o` and returns its path and text.
fn html_report(w: &Path) -> (PathBuf, String) {
    let path = w.join("report.html");
    loopwatch(w)
        .args(["report", "--format", "html", "-o"])
        .arg(&path)
        .assert()
        .code(0)
        .stdout("")
        .stderr("");
    let text = std::fs::read_to_string(&path).expect("html written");
    (path, text)
}

#[test]
fn the_html_report_is_one_self_contained_file() {
    let w = worktree();
    let (_, html) = html_report(w.path());
    let lower = html.to_ascii_lowercase();
    assert!(lower.starts_with("<!doctype html>"));
    for banned in [
        "http://", "https://", "//", "<script", "src=", "href=", "url(", "@import", "<link",
        "<iframe", "<object",
    ] {
        let hits = lower
            .match_indices(banned)
            .map(|(i, _)| &html[i.saturating_sub(30)..(i + 40).min(html.len())])
            .collect::<Vec<_>>();
        assert!(hits.is_empty(), "{banned:?} in the HTML report: {hits:?}");
    }
    assert!(html.contains("<span class=\"status\" id=\"final-status\">partial</span>"));
}

/// A chromium binary on PATH, if any.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
}

/// Under CI the browser checks must be able to run: Chromium is there.
#[test]
fn chromium_is_on_path_under_ci() {
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        assert!(
            chromium().is_some(),
            "CI is set but no chromium binary is on PATH: .ci/run must install it"
        );
    }
}

/// The DOM headless Chromium builds from an HTML file.
fn dump_dom(path: &Path) -> String {
    let browser = chromium().expect("a chromium binary on PATH (this check needs one)");
    let profile = tempfile::tempdir().expect("profile dir");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", path.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let started = Instant::now();
    while child.try_wait().expect("wait for chromium").is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("chromium output");
    assert!(out.status.success(), "chromium failed: {:?}", out.status);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[cfg_attr(
    not(loopwatch_ci),
    ignore = "opens the HTML report in headless Chromium, which CI installs: runs when CI is set (or with -- --ignored)"
)]
fn the_html_report_opens_in_headless_chromium() {
    let w = worktree();
    let (path, _) = html_report(w.path());
    let dom = dump_dom(&path);
    assert!(
        dom.contains("<span class=\"status\" id=\"final-status\">partial</span>"),
        "the final status is not in the page Chromium shows:\n{dom}"
    );
    let rows = dom.matches("<tr class=\"decision\">").count();
    assert_eq!(rows, DECISIONS.len(), "one table row per decision:\n{dom}");
    for d in DECISIONS {
        for field in d {
            assert!(
                dom.contains(&format!("<td>{field}</td>"))
                    || dom.contains(&format!("<code>{field}</code>")),
                "{field} missing:\n{dom}"
            );
        }
    }
}

/// Secrets planted in the run below, none of which may reach a report.
const PLANTED: [&str; 5] = [
    "AKIAIOSFODNN7EXAMPLE",
    "hunter22secret",
    "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "MIIEowIBAAKCAQEA7planted",
    "s3cr3tpass",
];

/// A git worktree whose journal names three real snapshots (base,
/// iteration 1, iteration 2), with a human gate waited on, agents' usage,
/// and the planted secrets in a decision's reason, a gate's evidence and
/// the code of iteration 2.
fn run_with_code() -> tempfile::TempDir {
    let dir = repo();
    let root = dir.path();
    let base = loopwatch::code::snapshot(root).expect("base");
    write(root, "src/lib.rs", "pub fn one() -> u32 {\n    2\n}\n");
    write(root, "src/pdf.rs", "pub fn pages() -> u32 {\n    0\n}\n");
    let first = loopwatch::code::snapshot(root).expect("iteration 1");
    write(
        root,
        "src/pdf.rs",
        "pub fn pages() -> u32 {\n    // key AKIAIOSFODNN7EXAMPLE\n    1\n}\n",
    );
    write(
        root,
        "deploy/key.pem",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7planted\nabcdef\n-----END RSA PRIVATE KEY-----\n",
    );
    let second = loopwatch::code::snapshot(root).expect("iteration 2");
    let floor_rows = |state: &str, evidence: &str| {
        serde_json::json!([
            {"id": "1", "state": state, "text": "pages are numbered", "evidence": evidence},
            {"id": "2", "state": "MANUAL", "text": "fonts embedded", "evidence": ""}
        ])
    };
    let lines = [
        serde_json::json!({"type": "run.started", "run": {"id": "2026-12-05-pdf", "flow": "feat", "contract": "c.md"}, "tree": base.as_str()}),
        serde_json::json!({"type": "iteration.started", "iteration": 1, "trigger": "initial"}),
        serde_json::json!({"type": "agent.started", "dispatch": 1, "role": "developer", "iteration": 1, "adapter": "generic", "pid": 10, "pgid": 10, "inputSha256": "sha256:00", "log": "agents/1.log"}),
        serde_json::json!({"type": "agent.finished", "dispatch": 1, "role": "developer", "exitCode": 0, "durationMs": 60000, "tokensIn": 1200, "tokensOut": 300, "costUsd": 0.25}),
        serde_json::json!({"type": "gate.started", "gate": "floor", "iteration": 1, "round": 1, "tree": first.as_str()}),
        serde_json::json!({"type": "gate.finished", "gate": "floor", "iteration": 1, "round": 1, "verdict": {"kind": "UNMET", "n": 1}, "rows": floor_rows("NOT-MET", "NOT-MET exit=1 (nonzero)")}),
        serde_json::json!({"type": "dev.dispatched", "iteration": 1, "inputs": []}),
        serde_json::json!({"type": "iteration.started", "iteration": 2, "trigger": "floor-unmet"}),
        serde_json::json!({"type": "agent.started", "dispatch": 2, "role": "developer", "iteration": 2, "adapter": "generic", "pid": 11, "pgid": 11, "inputSha256": "sha256:01", "log": "agents/2.log"}),
        serde_json::json!({"type": "agent.finished", "dispatch": 2, "role": "developer", "exitCode": 0, "durationMs": 30000, "tokensIn": 800, "tokensOut": 200, "costUsd": null}),
        serde_json::json!({"type": "gate.started", "gate": "floor", "iteration": 2, "round": 1, "tree": second.as_str()}),
        serde_json::json!({"type": "gate.finished", "gate": "floor", "iteration": 2, "round": 1, "verdict": {"kind": "MET"}, "rows": floor_rows("MET", "MET exit=0 marker-found :: PAGES_OK")}),
        serde_json::json!({"type": "gate.started", "gate": "conformity", "iteration": 2, "round": 1}),
        serde_json::json!({"type": "gate.finished", "gate": "conformity", "iteration": 2, "round": 1, "verdict": {"kind": "CONFORME"}, "rows": [
            {"id": "1", "text": "pages are numbered", "status": "MET", "detail": "src/pdf.rs:3 returns 1"},
            {"id": "2", "text": "fonts embedded", "status": "UNVERIFIABLE", "detail": "no font in the fixture"}
        ], "scope": {"inScope": 2, "outOfScope": ["deploy/key.pem"]}}),
        serde_json::json!({"type": "human.requested", "id": "hg-2-conformity-1", "kind": "out-of-scope", "gate": "conformity", "iteration": 2, "subject": "deploy/key.pem", "summary": "deploy/key.pem changed outside FILE SCOPE", "options": ["approve", "deny"],
            "evidence": {"diffStat": "deploy/key.pem | 4 ++++", "excerpt": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7planted\n-----END RSA PRIVATE KEY-----"}}),
        serde_json::json!({"type": "human.decided", "id": "hg-2-conformity-1", "decision": "deny", "reason": "never commit keys; the old one was password=hunter22secret and the CI token ghp_0123456789abcdefghijABCDEFGHIJ012345, see https://ana:s3cr3tpass@git.example.org", "by": "ana@desk", "evidenceHash": "sha256:6666666666666666666666666666666666666666666666666666666666666666"}),
        serde_json::json!({"type": "findings.verified", "iteration": 2, "findings": [
            {"id": "F1", "severity": "major", "path": "src/pdf.rs", "lines": "3", "claim": "page count is off by one", "verdict": "VERIFIED", "evidence": "src/pdf.rs:3: 1", "note": ""},
            {"id": "F2", "severity": "minor", "path": "src/lib.rs", "lines": "2", "claim": "magic number", "verdict": "FALSE", "evidence": "", "note": "a documented constant"}
        ]}),
        serde_json::json!({"type": "triage.recorded", "iteration": 2, "file": "triage-2.json", "counts": {"accepted": 1, "deferred": 0, "rejected": 1}, "buckets": {"accepted": ["F1"], "deferred": [], "rejected": ["F2"]}}),
        serde_json::json!({"type": "verify.result", "iteration": 2, "finding": "F1", "result": "confirmed", "testRef": "tests/pdf.rs::count", "file": "tests/pdf.rs", "log": "verify-1.test.log", "note": ""}),
    ];
    let minutes = [
        0, 1, 1, 5, 6, 7, 8, 10, 10, 14, 15, 16, 17, 20, 21, 45, 46, 47, 48,
    ];
    let text = journal_text(&lines, |i| format!("2026-12-05T09:{:02}:00Z", minutes[i]));
    write(root, ".pipeline/events.jsonl", &text);
    dir
}

fn assert_no_planted_secret(format: &str, text: &str) {
    for secret in PLANTED {
        assert!(
            !text.contains(secret),
            "{secret} leaked into the {format} report:\n{text}"
        );
    }
}

#[test]
fn a_report_with_code_usage_and_secrets_scrubbed_in_every_format() {
    let w = run_with_code();
    let json_text = report_stdout(w.path(), "json");
    let md = report_stdout(w.path(), "md");
    let (_, html) = html_report(w.path());
    assert_no_planted_secret("json", &json_text);
    assert_no_planted_secret("markdown", &md);
    assert_no_planted_secret("html", &html);
    let journal =
        std::fs::read_to_string(w.path().join(".pipeline/events.jsonl")).expect("journal");
    assert!(
        journal.contains("hunter22secret"),
        "the journal keeps what was written"
    );

    let json: serde_json::Value = serde_json::from_str(&json_text).expect("json report");
    assert_eq!(
        json["decisions"][0]["reason"],
        "never commit keys; the old one was password=[redacted:password] and the CI token [redacted:github-token], see https://[redacted:url-credentials]@git.example.org"
    );
    assert_eq!(
        json["decisions"][0]["evidence"],
        serde_json::json!([
            "diffStat: deploy/key.pem | 4 ++++",
            "excerpt: [redacted:private-key]"
        ])
    );
    // The criteria table: GATE 0 evidence beside GATE 1 status.
    assert_eq!(
        json["criteria"][1],
        serde_json::json!({"iteration": 2, "rows": [
            {"id": "1", "text": "pages are numbered", "floor": "MET", "floorEvidence": "MET exit=0 marker-found :: PAGES_OK", "conformity": "MET", "conformityDetail": "src/pdf.rs:3 returns 1"},
            {"id": "2", "text": "fonts embedded", "floor": "MANUAL", "floorEvidence": "", "conformity": "UNVERIFIABLE", "conformityDetail": "no font in the fixture"}
        ]})
    );
    assert_eq!(
        json["criteria"][0]["rows"][0]["conformity"],
        serde_json::Value::Null
    );
    let findings: Vec<[String; 4]> = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            ["id", "verdict", "verifyByTest", "triage"]
                .map(|k| f[k].as_str().unwrap_or("—").to_string())
        })
        .collect();
    assert_eq!(
        findings,
        [
            ["F1", "VERIFIED", "confirmed", "accepted"],
            ["F2", "FALSE", "—", "rejected"]
        ]
        .map(|r| r.map(String::from))
    );
    // Code changes per iteration, from the snapshots.
    let files = |i: usize| -> Vec<(String, String)> {
        json["code"][i]["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap().into(),
                    f["status"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    assert_eq!(json["code"][0]["from"], 0);
    assert_eq!(
        files(0),
        [
            ("src/lib.rs".into(), "modified".into()),
            ("src/pdf.rs".into(), "added".into())
        ]
    );
    assert_eq!(json["code"][1]["from"], 1);
    assert_eq!(
        files(1),
        [
            ("deploy/key.pem".into(), "added".into()),
            ("src/pdf.rs".into(), "modified".into())
        ]
    );
    assert_eq!(
        json["code"][1]["files"][0]["hunks"][0]["lines"],
        serde_json::json!(["+[redacted:private-key]"])
    );
    assert_eq!(
        json["code"][1]["files"][1]["hunks"][0]["lines"][2],
        "+    // key [redacted:aws-access-key]"
    );
    // Tokens and cost where recorded.
    assert_eq!(json["usage"]["tokensIn"], 2000);
    assert_eq!(json["usage"]["tokensOut"], 500);
    assert_eq!(json["usage"]["costUsd"], 0.25);
    assert_eq!(json["usage"]["costUnknown"], 1);
    assert_eq!(json["usage"]["agents"][1]["iteration"], 2);
    // The timeline: four gate rounds and the wait on a person.
    let spans: Vec<(String, String, f64, f64)> = json["timeline"]
        .as_array()
        .expect("timeline")
        .iter()
        .map(|s| {
            (
                s["lane"].as_str().unwrap().into(),
                s["outcome"].as_str().unwrap().into(),
                s["start"].as_f64().unwrap(),
                s["end"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        spans,
        [
            ("floor".into(), "fail".into(), 360.0, 420.0),
            ("floor".into(), "pass".into(), 900.0, 960.0),
            ("conformity".into(), "pass".into(), 1020.0, 1200.0),
            ("person".into(), "decided".into(), 1260.0, 2700.0),
        ]
    );

    // Markdown: the tables and the code changes.
    assert!(md.contains("| 1 | pages are numbered | MET | MET exit=0 marker-found :: PAGES\\_OK | MET | src/pdf.rs:3 returns 1 |")
        || md.contains("| 1 | pages are numbered | MET | MET exit=0 marker-found :: PAGES_OK | MET | src/pdf.rs:3 returns 1 |"), "{md}");
    assert!(md.contains("| 2 | F1 | major | src/pdf.rs:3 | page count is off by one | VERIFIED | confirmed (tests/pdf.rs::count) | accepted |"), "{md}");
    assert!(md.contains("### Iteration 2 (from iteration 1)\n\n- added deploy/key.pem (+4 −0)\n- modified src/pdf.rs (+2 −1)\n"), "{md}");
    assert_has(&md, "| 1 | developer | 1 | 1200 | 300 | $0.2500 |");
    assert_has(&md, "| total | | | 2000 | 500 | $0.2500 |");
    assert_has(&md, "\ncost unknown for 1 dispatch\n");
}

#[test]
fn the_html_report_draws_the_run_and_stays_self_contained() {
    let w = run_with_code();
    let (_, html) = html_report(w.path());
    let lower = html.to_ascii_lowercase();
    // A URL in a reason is text, not a reference: only what loads something is banned.
    for banned in [
        "<script", "src=", "href=", "url(", "@import", "<link", "xmlns", "<iframe", "<object",
    ] {
        assert!(!lower.contains(banned), "{banned:?} in the HTML report");
    }
    let svg_start = html
        .find("<svg class=\"run-picture\"")
        .expect("an inline SVG");
    let svg = &html[svg_start
        ..html[svg_start..]
            .find("</svg>")
            .map(|e| svg_start + e)
            .expect("svg end")];
    assert_eq!(svg.matches("<rect class=\"span ").count(), 4, "{svg}");
    assert_eq!(svg.matches("<rect class=\"span fail\"").count(), 1, "{svg}");
    assert_eq!(
        svg.matches("<rect class=\"wait-shade\"").count(),
        1,
        "{svg}"
    );
    for lane in [
        "GATE 0 floor",
        "GATE 1 conformity",
        "GATE 2 security",
        "waits on a person",
    ] {
        assert!(
            svg.contains(&format!(">{lane}</text>")),
            "{lane} lane missing"
        );
    }
    assert_has(
        svg,
        "<title>hg-2-conformity-1: decided, 21m 00s to 45m 00s</title>",
    );
    assert_has(
        &html,
        "<span class=\"add\">+    // key [redacted:aws-access-key]</span>",
    );
}

#[test]
#[cfg_attr(
    not(loopwatch_ci),
    ignore = "opens the HTML report in headless Chromium, which CI installs: runs when CI is set (or with -- --ignored)"
)]
fn the_html_report_with_code_and_secrets_renders_in_headless_chromium() {
    let w = run_with_code();
    let (path, _) = html_report(w.path());
    let dom = dump_dom(&path);
    assert_no_planted_secret("rendered html", &dom);
    assert!(
        dom.contains("<svg class=\"run-picture\""),
        "no picture in the page Chromium shows"
    );
    assert_eq!(dom.matches("<tr class=\"criterion\">").count(), 4, "{dom}");
    assert_eq!(dom.matches("<tr class=\"finding\">").count(), 2, "{dom}");
    assert_eq!(dom.matches("<tr class=\"code-file\">").count(), 4, "{dom}");
    assert_eq!(dom.matches("<tr class=\"agent\">").count(), 2, "{dom}");
    assert_has(&dom, "<td>deny</td>");
}

//! `loopwatch ask`, `await` and `decide`: the human gates from the command line.

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;

use super::Globals;
use super::output::{finish, say, shown, warn};
use crate::journal::{JournalError, Pipeline};
use crate::model::event::{ExpiryRule, HumanDecision};
use crate::model::rules::GateRequest;
use crate::model::*;
use crate::recorder::evidence::Sources;
use crate::recorder::{Caller, RecordError, Recorder, Refusal, expires_at};
use crate::watch::{Feed, PipelineWatch, WatchEvent};

/// `ask`.
#[derive(Debug, Args)]
#[command(
    after_long_help = "Prints the new gate's id on the first line.\n\nExit codes: 10 the gate is open (await it), 2 bad input (an empty --subject or --summary, --evidence not JSON), 4 recorded but state.json is stale (do not retry)."
)]
pub struct AskArgs {
    /// abandoned, unverifiable, unverifiable-finding, out-of-scope,
    /// cap-reached, structural, contract-changed, budget or stagnant (see
    /// `decide --help` for each kind's options).
    #[arg(value_parser = super::output::escaped::<HumanGateKind>)]
    pub kind: HumanGateKind,
    /// Criterion id, finding id, file path or gate.
    #[arg(long)]
    pub subject: String,
    /// One line for the person.
    #[arg(long)]
    pub summary: String,
    /// The gate that asks (floor, conformity, security).
    #[arg(long, value_parser = super::output::escaped::<GateName>)]
    pub gate: Option<GateName>,
    /// What to show the person, as JSON (rows, paths, output).
    #[arg(long)]
    pub evidence: Option<String>,
    /// Expire the gate when nobody decided within DURATION (90s, 30m, 1h30m, 2d;
    /// more than 0). Overrides `[expiry.<kind>]` of the config.
    #[arg(
        long,
        value_name = "DURATION",
        requires = "on_expiry",
        allow_hyphen_values = true
    )]
    pub expires: Option<String>,
    /// The option that applies when the gate expires (one of the kind's options).
    #[arg(long, value_name = "OPTION", requires = "expires")]
    pub on_expiry: Option<Decision>,
}

/// `await`.
#[derive(Debug, Args)]
#[command(after_long_help = await_help())]
pub struct AwaitArgs {
    /// The human gate id (`hg-<iter>-<gate>-<n>`).
    pub id: String,
    /// Give up after this many seconds (exit 124); at most a year.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout, allow_negative_numbers = true)]
    pub timeout: Option<Duration>,
}

/// `decide`.
#[derive(Debug, Args)]
#[command(after_long_help = decide_help())]
pub struct DecideArgs {
    /// The human gate id.
    pub id: String,
    /// The decision: one of the gate's options (`status` lists them for an
    /// open gate; every kind's are below, with what each does).
    #[arg(value_parser = super::output::escaped::<Decision>)]
    pub decision: Decision,
    /// Why (required).
    #[arg(long)]
    pub reason: String,
    /// Decide on the evidence as it is now when it changed since the gate opened.
    #[arg(long)]
    pub refresh: bool,
    /// A note to the developer: the next developer dispatch receives it
    /// under its own heading (any decision may carry one).
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// Sign the decision with your SSH key (ssh-keygen -Y sign -n loopwatch): its
    /// `signature` field, checked by `verify --allowed-signers` and the decision policy.
    #[arg(long)]
    pub sign: bool,
    /// The SSH key to sign with (default: LOOPWATCH_SIGNING_KEY, git's user.signingkey,
    /// ~/.ssh/id_ed25519).
    #[arg(long, value_name = "FILE", requires = "sign")]
    pub key: Option<std::path::PathBuf>,
}

/// `split`.
#[derive(Debug, Args)]
#[command(
    after_long_help = "A finding a review raises again that the finding ledger matched with an earlier \
settled finding (dismissed by a person, found FALSE, left as it is by the triage) is marked \
`raised again` and never verified, asked or handed to the developer. When the match is wrong, \
split it: from the next review on, the earlier finding is never matched with this finding, nor \
with any finding that is the same as it, and such a finding is verified as a new one. The \
review under way is not redone.

Exit codes: 0 recorded, 2 refused (not raised again, already split, blank reason), 3 no pipeline."
)]
pub struct SplitArgs {
    /// The iteration of the finding raised again.
    pub iteration: u32,
    /// Its id (`F3`).
    pub finding: String,
    /// Why they are not the same (required).
    #[arg(long)]
    pub reason: String,
}

/// Runs `split`.
pub fn split(a: SplitArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let rec = Recorder::new(globals.pipeline_for_reading()?).admitted(Caller::Person)?;
    let out = rec.split(
        a.iteration,
        &a.finding,
        a.reason,
        crate::util::user_at_host(),
    )?;
    let earlier = out.events.iter().find_map(|e| match &e.body {
        EventBody::FindingSplit(x) => Some(format!(
            "{} of iteration {}",
            x.earlier, x.earlier_iteration
        )),
        _ => None,
    });
    say(&format!(
        "split: {} of iteration {} is not {}",
        shown(&a.finding),
        a.iteration,
        shown(&earlier.unwrap_or_default())
    ));
    Ok(ExitCode::SUCCESS)
}

/// Every kind of human gate with its options, each with what it does, in
/// the rules' words (`model::kinds`): the one table the dialog, `status`
/// and the refusals read too.
pub fn options_help() -> String {
    let mut out = String::from("Options, by kind of gate, with what each does:\n");
    for &kind in HumanGateKind::ALL {
        out.push_str(&format!("  {kind}\n"));
        for c in kind.spec().choices {
            out.push_str(&format!(
                "    {:<15} {}\n",
                c.decision.as_str(),
                c.words(None)
            ));
        }
    }
    out.push_str(
        "(\"one more round\" and \"again\" are of the gate that asked; the dialog and `status` name it.)\n",
    );
    out
}

fn decide_help() -> String {
    format!(
        "{}
A finding gate recorded by an earlier version as `unverifiable` with `accept`/`reject` is \
read as `unverifiable-finding`: accept is dismiss, reject is stop.

The decision is taken on the gate's evidence: the text its dialog shows, saved as \
.pipeline/evidence/<id>.txt, its sha256 recorded as evidenceHash. That evidence is the one \
captured when the gate opened; before deciding it is recomputed from what is there now. When \
it changed (a file edited, cited lines moved, a file vanished, the contract edited), each \
change is said on stderr and the decision is refused unless --refresh: then the evidence as \
it is now is the one saved and hashed.

Exit codes: 0 recorded (the NEXT line says what follows), 10 another gate is still open, 2 refused \
(unknown gate, already decided, not an option: the gate's options are listed with what each does; \
blank reason, changed evidence), 3 no pipeline, 4 recorded but state.json is stale (do not retry).",
        options_help()
    )
}

fn await_help() -> String {
    format!(
        "\
Blocks until the human gate ID is decided (in the TUI, by `loopwatch decide`, or by
another program appending to the journal), then prints the decision as one JSON line:
{{\"id\",\"decision\",\"reason\",\"by\",\"at\",\"expired\"}}. It wakes on filesystem events, not by polling.

A gate asked with an expiry (`ask --expires`, or `[expiry.<kind>]` in the config)
that is still open when it falls due is recorded as expired (`human.expired`, never
a decision), and the JSON line says {{\"expired\": true, \"decision\": <the expiry's
option>, \"by\": \"\", \"after\": <the delay>}}. When a person decides at the same
moment, exactly one of the two is recorded; the other is told on stderr.

What the orchestrator does with each decision:
{}
lift only says the criterion is a normal one again: nothing is removed from the
contract by the decision itself; the orchestrator removes the ABANDON line.

The JSON escapes control, bidirectional and invisible characters as \\uXXXX: it parses
back to the very strings recorded.

Exit codes: 0 decided or expired (JSON on stdout), 124 timed out, 2 no such gate or bad input
(a --timeout that is negative, not finite or over a year), 3 no pipeline.",
        options_help()
    )
}

/// The longest `await --timeout`: a year (a larger value is a mistake,
/// and would overflow the clock).
pub const MAX_AWAIT_SECS: f64 = 365.0 * 24.0 * 3600.0;

fn parse_timeout(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| "not a number of seconds".to_string())?;
    if !secs.is_finite() || !(0.0..=MAX_AWAIT_SECS).contains(&secs) {
        return Err(format!(
            "must be between 0 and {MAX_AWAIT_SECS} seconds (a year)"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Runs `ask`.
pub fn ask(a: AskArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let evidence = match a.evidence {
        Some(s) => serde_json::from_str(&s).context("--evidence is not JSON")?,
        None => serde_json::Value::Null,
    };
    let expires = match (&a.expires, a.on_expiry) {
        (Some(after), Some(action)) => Some(
            ExpiryRule::new(after, action, a.kind)
                .map_err(|e| anyhow::anyhow!("--expires/--on-expiry: {e}"))?,
        ),
        _ => None,
    };
    let rec = Recorder::new(globals.pipeline_for_writing()?)
        .with_expiry(expiry_policy()?)
        .admitted(Caller::Person)?;
    let (id, out) = rec.ask_expiring(
        GateRequest {
            kind: a.kind,
            gate: a.gate,
            subject: a.subject,
            summary: a.summary,
            evidence,
        },
        expires,
    )?;
    say(&shown(&id));
    Ok(finish(&out, false))
}

/// The per-kind expiry of the config file (`[expiry.<kind>]`); none when
/// there is no config file. A config that cannot be read never stops the
/// loop's recording: it is reported on stderr and no expiry applies.
pub fn expiry_policy() -> anyhow::Result<std::collections::HashMap<HumanGateKind, ExpiryRule>> {
    match crate::notify::UserSettings::load_user() {
        Ok(c) => Ok(c.expiry),
        Err(e) => {
            warn(&format!("loopwatch: {e} (no expiry from the config)"));
            Ok(Default::default())
        }
    }
}

/// Runs `decide`.
pub fn decide(a: DecideArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let rec = Recorder::new(globals.pipeline_for_reading()?).admitted(Caller::Person)?;
    // The evidence the dialog would show, saved and hashed the same way;
    // recomputed first, as the dialog does when it opens.
    let state = crate::journal::snapshot(rec.pipeline())?.map(|s| s.state);
    let gate = state
        .as_ref()
        .and_then(|s| s.human_gate(&a.id).map(|g| (s, g)));
    let mut request = gate.map(|(_, g)| g.request.clone());
    if let (Some((s, g)), Some(req)) = (gate, request.as_mut())
        && g.is_open()
    {
        let fresh = crate::recorder::evidence::refresh(rec.pipeline(), &Sources::of(s), &g.request);
        if !fresh.changes.is_empty() {
            for c in &fresh.changes {
                warn(&format!(
                    "loopwatch: {}: the evidence changed since the gate opened: {c}",
                    shown(&a.id)
                ));
            }
            if !a.refresh {
                anyhow::bail!(
                    "{} not decided: its evidence changed since the gate opened; pass --refresh to decide on it as it is now (or see it first with `loopwatch watch`, ctrl-r in the gate's dialog)",
                    shown(&a.id)
                );
            }
            warn(&format!(
                "loopwatch: {}: deciding on the evidence as it is now (--refresh)",
                shown(&a.id)
            ));
            req.evidence = fresh.evidence;
        }
    }
    let evidence = request
        .map(|r| {
            crate::recorder::evidence::lines::evidence_text(
                &crate::recorder::evidence::lines::evidence_lines(&r),
            )
        })
        .unwrap_or_default();
    let mut decision = HumanDecision {
        id: a.id.clone(),
        decision: a.decision,
        reason: a.reason,
        by: crate::util::user_at_host(),
        evidence_hash: String::new(),
        contract_edit: None,
        note: a.note.filter(|n| !n.trim().is_empty()),
        extra: Default::default(),
    };
    if a.sign {
        use crate::audit::sign;
        let key = sign::signing_key(a.key.as_deref())?;
        // The hash the recorder records, signed with the rest.
        decision.evidence_hash = crate::util::sha256_tagged(evidence.as_bytes());
        let signature = sign::sign(&key, &sign::canonical(&decision))?;
        decision.extra.insert("signature".into(), signature.into());
    }
    let out = rec.decide_on(decision, evidence.as_bytes())?;
    say(&format!(
        "decision saved ({}: {})",
        shown(&a.id),
        a.decision
    ));
    Ok(finish(&out, false))
}

/// Runs `await`.
pub fn await_decision(a: AwaitArgs, globals: &Globals) -> anyhow::Result<ExitCode> {
    let pipeline = globals.pipeline_for_reading()?;
    crate::recorder::admit(&pipeline, Caller::Person).map_err(RecordError::from)?;
    // Bounded by the parser; checked anyway, an overflow waits forever.
    let deadline = a.timeout.and_then(|t| Instant::now().checked_add(t));
    // The same watch/read/fold path as the TUI: the folder and its parent are
    // watched (a pipeline replaced or recreated is picked up again), the
    // journal is read from its last offset.
    let (tx, rx) = mpsc::channel();
    let watch = PipelineWatch::start(pipeline.dir(), move |ev| {
        let _ = tx.send(ev);
    })
    .with_context(|| format!("watch {}", pipeline.dir().display()))?;
    let mut feed = Feed::new(pipeline.clone());
    feed.refresh();
    if feed.state().human_gate(&a.id).is_none() {
        return Err(Refusal::UnknownGate { id: a.id }.into());
    }
    let report: crate::notify::attend::Report = std::sync::Arc::new(|id: &str, r| match r {
        Ok(crate::notify::Announced { failures, .. }) => {
            for f in failures {
                warn(&format!("loopwatch: notification of {}: {f}", shown(id)));
            }
        }
        Err(e) => warn(&format!(
            "loopwatch: notification of {}: cannot record notify.sent: {e}",
            shown(id)
        )),
    });
    let mut attendant =
        crate::notify::Attendant::new(Recorder::new(pipeline.clone()), notifier(), report);
    // A read-only copy is never written: its expiry is recorded by the host
    // that writes the journal, and shows up here when the copy is synced.
    if attendant.is_read_only()
        && feed
            .state()
            .human_gate(&a.id)
            .and_then(expires_at)
            .is_some()
    {
        warn(&format!(
            "loopwatch: {} is read-only here: the expiry of {} is left to the host that writes it",
            pipeline.dir().display(),
            shown(&a.id)
        ));
    }
    loop {
        let Some(gate) = feed.state().human_gate(&a.id) else {
            anyhow::bail!("{} is no longer in the journal", shown(&a.id));
        };
        if let Some(out) = outcome_json(gate) {
            say(&crate::sanitize::json::to_string(&out)?);
            return Ok(ExitCode::SUCCESS);
        }
        // Recorded under the lock: a decision that got there first wins,
        // and this process then prints that decision.
        let look = attendant
            .look([gate], feed.is_foreign())
            .with_context(|| format!("recording the expiry of {}", shown(&a.id)))?;
        for lost in &look.lost {
            warn(&format!("loopwatch: not expired: {lost}"));
        }
        if look.changed() {
            feed.refresh();
            continue;
        }
        let mut wait = look.wake();
        // Wake on filesystem events; a slow re-read guards against a missed one.
        if let Some(d) = deadline {
            match d.checked_duration_since(Instant::now()) {
                Some(left) => wait = wait.min(left),
                None => {
                    warn(&format!(
                        "loopwatch: {} still open after the timeout",
                        shown(&a.id)
                    ));
                    return Ok(ExitCode::from(124));
                }
            }
        }
        let mut rescan = false;
        match rx.recv_timeout(wait) {
            Ok(ev) => {
                rescan |= ev == WatchEvent::Rescan;
                while let Ok(ev) = rx.try_recv() {
                    rescan |= ev == WatchEvent::Rescan;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => anyhow::bail!("the watcher stopped"),
        }
        if rescan {
            watch.rearm();
            feed.rescan();
        } else {
            feed.refresh();
        }
    }
}

/// The hook and webhook of the config file; none (with a warning) when the
/// config cannot be read.
fn notifier() -> crate::notify::Notifier {
    match crate::notify::UserSettings::load_user() {
        Ok(c) => crate::notify::Notifier {
            hook: c.on_human_gate,
            settings: c.notify,
        },
        Err(e) => {
            warn(&format!("loopwatch: {e} (no notifications)"));
            Default::default()
        }
    }
}

/// The JSON line `await` prints once a gate has an outcome.
fn outcome_json(gate: &HumanGate) -> Option<serde_json::Value> {
    if let Some(d) = &gate.decision {
        return Some(serde_json::json!({
            "id": d.decision.id,
            "decision": d.decision.decision,
            "reason": d.decision.reason,
            "by": d.decision.by,
            "at": d.at,
            "expired": false,
        }));
    }
    let x = gate.expired.as_ref()?;
    Some(serde_json::json!({
        "id": gate.request.id,
        "decision": x.action,
        "reason": format!("expired: nobody decided within {}", x.after),
        "by": "",
        "at": x.at,
        "expired": true,
        "after": x.after,
    }))
}

impl Globals {
    /// The pipeline to write to: `--pipeline`, else found upwards, else a new
    /// one at the worktree root.
    pub fn pipeline_for_writing(&self) -> anyhow::Result<Pipeline> {
        match &self.pipeline {
            Some(p) => Ok(Pipeline::from_user_path(p)),
            None => Ok(Pipeline::discover_or_new(
                &std::env::current_dir().context("current directory")?,
            )),
        }
    }

    /// The pipeline named by `--pipeline`, else one found upwards from the
    /// current folder, if it exists: for commands that record their result
    /// only when there is a run to record it in.
    pub fn existing_pipeline(&self) -> Option<Pipeline> {
        let p = match &self.pipeline {
            Some(p) => Some(Pipeline::from_user_path(p)),
            None => std::env::current_dir()
                .ok()
                .and_then(|d| Pipeline::discover(&d)),
        };
        p.filter(Pipeline::exists)
    }

    /// The pipeline to read: `--pipeline`, else found upwards; an error
    /// naming where it looked when there is none (exit 3).
    pub fn pipeline_for_reading(&self) -> anyhow::Result<Pipeline> {
        let p = match &self.pipeline {
            Some(p) => Pipeline::from_user_path(p),
            None => {
                let cwd = std::env::current_dir().context("current directory")?;
                Pipeline::discover(&cwd).ok_or_else(|| JournalError::NoPipeline {
                    start: Pipeline::search_hint(&cwd),
                })?
            }
        };
        if !p.exists() {
            return Err(p.missing().into());
        }
        Ok(p)
    }
}

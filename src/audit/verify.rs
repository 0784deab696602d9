//! `loopwatch verify`: whether a run's record is what was written.
//!
//! Checked, each break named with where it is and what differs: the hash
//! chain and the seq of every journal line, and the journal's end against
//! the `state.json` written with it; every decision's
//! `evidenceHash` against `evidence/<id>.txt`; every decision names a gate
//! that was asked; every snapshot tree an event names is in the repository;
//! every change of the contract's judged parts is backed by a decision; and,
//! given an allowed-signers file, every signature.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::code::TreeId;
use crate::journal::{Chain, MAX_LINE_BYTES};
use crate::model::{Event, EventBody, GateName};

use super::sign::{self, Signature};

/// Largest evidence file read (a decision's evidence is at most this).
pub const MAX_EVIDENCE_BYTES: u64 = 64 << 20;

/// One break: where, and what differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Break {
    /// `events.jsonl line 4 (seq 4, note)`, `evidence/hg-1.txt`, `archive`.
    pub place: String,
    /// What differs.
    pub what: String,
}

impl std::fmt::Display for Break {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.place, self.what)
    }
}

/// What was checked, and every break found.
#[derive(Debug, Clone, Default)]
pub struct Verified {
    /// Journal lines read.
    pub lines: u64,
    /// Decisions checked.
    pub decisions: usize,
    /// Evidence files compared.
    pub evidence: usize,
    /// Snapshot trees looked up.
    pub snapshots: usize,
    /// Signatures checked.
    pub signatures: usize,
    /// Every break, in the order found.
    pub breaks: Vec<Break>,
}

impl Verified {
    /// True when nothing is broken.
    pub fn ok(&self) -> bool {
        self.breaks.is_empty()
    }

    /// The one-line summary of what was checked.
    pub fn summary(&self) -> String {
        format!(
            "{} journal lines chained, {} decisions, {} evidence files, {} snapshots, {} signatures",
            self.lines, self.decisions, self.evidence, self.snapshots, self.signatures
        )
    }

    pub(crate) fn broken(&mut self, place: impl Into<String>, what: impl Into<String>) {
        self.breaks.push(Break {
            place: crate::sanitize::field(&place.into()),
            what: crate::sanitize::field(&what.into()),
        });
    }
}

/// Where the record to check is.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// The `.pipeline` folder.
    pub pipeline_dir: &'a Path,
    /// Where the snapshots are looked up (a git worktree or repository).
    pub repo: &'a Path,
    /// An allowed-signers file: signatures are checked against it.
    pub allowed_signers: Option<&'a Path>,
}

/// Verifies the pipeline at `t`, adding to `out`.
pub fn verify_pipeline(t: &Target<'_>, out: &mut Verified) {
    let journal = t.pipeline_dir.join("events.jsonl");
    let events = match read_chain(&journal, out) {
        Ok(e) => e,
        Err(why) => {
            out.broken("events.jsonl", why);
            return;
        }
    };
    check_state(t.pipeline_dir, &events, out);
    check_decisions(t, &events, out);
    check_snapshots(t.repo, &events, out);
    check_contract(&events, out);
}

/// The journal's end, which no later line's `prev` vouches for, against
/// `state.json`, written with it under the same lock: the journal must
/// reach the seq the state was written at, and fold to that state.
fn check_state(dir: &Path, events: &[(u64, Event)], out: &mut Verified) {
    let Ok(bytes) =
        crate::util::read_regular(&dir.join("state.json"), crate::journal::MAX_STATE_BYTES)
    else {
        return; // none (or not ours to read): the chain is all there is
    };
    let state = match serde_json::from_slice::<crate::model::State>(&bytes) {
        Ok(s) if s.v == crate::model::state::STATE_VERSION => s,
        Ok(_) => return, // another version's snapshot: not comparable
        Err(e) => {
            out.broken("state.json", format!("not a state: {e}"));
            return;
        }
    };
    let last = events.last().map_or(0, |(_, e)| e.seq);
    if state.seq > last {
        out.broken(
            "state.json",
            format!(
                "written after seq {}, but the journal ends at seq {last}: lines were removed from its end",
                state.seq
            ),
        );
    } else if state.seq == last && crate::model::fold(events.iter().map(|(_, e)| e)) != state {
        out.broken(
            format!("events.jsonl line {}", events.last().map_or(0, |(n, _)| *n)),
            format!(
                "the journal up to seq {last} does not fold to the state.json written with it: a line was changed after it was written"
            ),
        );
    }
    // A state behind the journal is a writer stopped between its append
    // and its snapshot: nothing was changed.
}

fn place(line: u64, ev: &Event) -> String {
    format!(
        "events.jsonl line {line} (seq {}, {})",
        ev.seq,
        ev.body.type_name()
    )
}

/// Reads the journal line by line, checking the chain and the seq; returns
/// the events with their line numbers.
fn read_chain(path: &Path, out: &mut Verified) -> Result<Vec<(u64, Event)>, String> {
    let file = crate::util::open_regular(path).map_err(|e| format!("cannot be read: {e}"))?;
    let mut input = BufReader::with_capacity(256 * 1024, file);
    let mut chain = Chain::new();
    let mut events = Vec::new();
    let mut line = Vec::new();
    let mut last_seq = 0u64;
    let max = MAX_LINE_BYTES as u64;
    loop {
        line.clear();
        let read = Read::by_ref(&mut input)
            .take(max + 2)
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("cannot be read: {e}"))?;
        if read == 0 {
            break;
        }
        let n = chain.lines() + 1;
        if line.last() != Some(&b'\n') {
            if line.len() as u64 > max {
                out.broken(
                    format!("events.jsonl line {n}"),
                    "longer than any reader reads",
                );
                return Ok(events);
            }
            out.broken(
                format!("events.jsonl line {n}"),
                "the last line has no newline: cut, or a write in progress",
            );
            break;
        }
        line.pop();
        if let Some(b) = chain.next(&line) {
            out.broken(format!("events.jsonl {}", b.place()), b.what);
        }
        match Event::parse_line(&line) {
            Ok(ev) => {
                if ev.seq != last_seq + 1 {
                    out.broken(
                        place(n, &ev),
                        format!("seq {} follows seq {last_seq}", ev.seq),
                    );
                }
                last_seq = ev.seq;
                events.push((n, ev));
            }
            Err(e) => out.broken(
                format!("events.jsonl line {n}"),
                format!("not an event: {e}"),
            ),
        }
    }
    out.lines = chain.lines();
    if chain.lines() == 0 {
        out.broken("events.jsonl", "empty: no run recorded");
    } else if !chain.unchained.is_empty() || (!chain.started() && chain.lines() > 1) {
        let first = chain.unchained.first().copied().unwrap_or(2);
        out.broken(
            format!("events.jsonl line {first}"),
            format!(
                "{} lines carry no `prev`: written before the hash chain, they cannot be verified",
                chain.unchained.len().max(1)
            ),
        );
    }
    Ok(events)
}

/// A gate id that can name a file under `evidence/` (the recorder's rule).
pub fn evidence_name_ok(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn check_decisions(t: &Target<'_>, events: &[(u64, Event)], out: &mut Verified) {
    let mut asked = std::collections::HashSet::new();
    let mut approvals = std::collections::HashMap::<String, usize>::new();
    for (n, ev) in events {
        let (d, file) = match &ev.body {
            EventBody::HumanRequested(r) => {
                asked.insert(r.id.clone());
                continue;
            }
            EventBody::HumanDecided(d) => (d, d.id.clone()),
            EventBody::HumanApproved(d) => {
                let k = approvals.entry(d.id.clone()).or_default();
                *k += 1;
                (d, format!("{}.{k}", d.id))
            }
            _ => continue,
        };
        out.decisions += 1;
        let at = place(*n, ev);
        if !asked.contains(&d.id) {
            out.broken(&at, format!("decides {}, a gate never asked", d.id));
        }
        if !d.evidence_hash.is_empty() {
            check_evidence(t.pipeline_dir, &at, d, &file, out);
        }
        if let (Some(s), Some(allowed)) = (Signature::of(d), t.allowed_signers) {
            out.signatures += 1;
            if let Err(why) = sign::verify_decision(allowed, d, &s) {
                out.broken(&at, format!("signature of {}: {why}", d.id));
            }
        }
    }
}

fn check_evidence(
    dir: &Path,
    at: &str,
    d: &crate::model::event::HumanDecision,
    file: &str,
    out: &mut Verified,
) {
    if !evidence_name_ok(file) {
        out.broken(
            at,
            format!("gate id {:?} cannot name an evidence file", d.id),
        );
        return;
    }
    let rel = format!("evidence/{file}.txt");
    out.evidence += 1;
    match crate::util::read_regular(&dir.join(&rel), MAX_EVIDENCE_BYTES) {
        Ok(bytes) if bytes.len() as u64 > MAX_EVIDENCE_BYTES => out.broken(
            at,
            format!("{rel}: larger than the evidence a decision carries"),
        ),
        Ok(bytes) => {
            let h = crate::util::sha256_tagged(&bytes);
            if h != d.evidence_hash {
                out.broken(
                    at,
                    format!(
                        "{rel} was edited: its hash is {h}, the decision recorded {}",
                        d.evidence_hash
                    ),
                );
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            out.broken(at, format!("{rel} is missing (the decision's evidence)"))
        }
        Err(e) => out.broken(at, format!("{rel} cannot be read: {e}")),
    }
}

/// Every tree an event names, with where.
fn named_trees(events: &[(u64, Event)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (n, ev) in events {
        let tree = match &ev.body {
            EventBody::RunStarted { tree, .. } => tree.clone(),
            EventBody::GateStarted {
                gate: GateName::Floor,
                tree,
                ..
            } => tree.clone(),
            EventBody::VerifySummary(s) => s.tree.clone(),
            _ => None,
        };
        if let Some(t) = tree {
            out.push((place(*n, ev), t));
        }
    }
    out
}

fn check_snapshots(repo: &Path, events: &[(u64, Event)], out: &mut Verified) {
    let named = named_trees(events);
    if named.is_empty() {
        return;
    }
    let mut ids = Vec::new();
    let mut places = Vec::new();
    for (at, t) in named {
        match TreeId::parse(&t) {
            Some(id) => {
                ids.push(id);
                places.push(at);
            }
            None => out.broken(at, format!("{t:?} is not a tree id")),
        }
    }
    out.snapshots += ids.len();
    match crate::code::trees_present(repo, &ids) {
        Ok(present) => {
            for ((id, at), here) in ids.iter().zip(&places).zip(present) {
                if !here {
                    out.broken(
                        at,
                        format!(
                            "snapshot tree {id} is not in the repository (pruned, or never kept)"
                        ),
                    );
                }
            }
        }
        Err(e) => {
            for (id, at) in ids.iter().zip(&places) {
                out.broken(at, format!("snapshot tree {id} cannot be looked up: {e}"));
            }
        }
    }
}

/// Every change of the contract's judged parts after the first record is
/// one a person decided: its `contract.judged` names a gate decided
/// before it.
fn check_contract(events: &[(u64, Event)], out: &mut Verified) {
    let mut decided = std::collections::HashSet::new();
    let mut judged: Option<String> = None;
    for (n, ev) in events {
        match &ev.body {
            EventBody::HumanDecided(d) => {
                decided.insert(d.id.clone());
            }
            EventBody::RunStarted { .. } => judged = None,
            EventBody::ContractJudged(c) => {
                let at = place(*n, ev);
                match &c.gate {
                    Some(g) if !decided.contains(g) => out.broken(
                        &at,
                        format!("applies gate {g}, which no decision before it decided"),
                    ),
                    None if judged.as_ref().is_some_and(|j| *j != c.judged) => out.broken(
                        &at,
                        format!(
                            "the contract's judged parts changed ({} → {}) with no decision",
                            judged.as_deref().unwrap_or(""),
                            c.judged
                        ),
                    ),
                    _ => {}
                }
                judged = Some(c.judged.clone());
            }
            _ => {}
        }
    }
}

/// The pipeline folder of a path a person gave: a worktree or a
/// `.pipeline` folder.
pub fn pipeline_dir_of(path: &Path) -> PathBuf {
    crate::journal::Pipeline::from_user_path(path)
        .dir()
        .to_path_buf()
}

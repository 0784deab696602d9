//! The finding ledger: across the review rounds of a run, a finding that
//! was settled — dismissed by a person, found FALSE by the finding
//! verifier, or left as it is by the triage — and that a later review
//! raises again is recognised, marked `raised again` with its earlier
//! outcome, and neither verified, asked nor handed to the developer again
//! (PROTOCOL §5c, "The finding ledger").
//!
//! Two findings are **the same** when ([`same`]):
//! - they name the same file (`./`, `\` and surrounding blanks aside; two
//!   findings without a file compare on their words alone), and
//! - their claims say the same thing: the [`similarity`] of their words
//!   (Dice coefficient of the normalised word sets: lower case, split on
//!   anything but letters, digits and `_`, function words, numbers and
//!   one-letter words dropped, plural, `-ed`/`-ing` and final `e` endings
//!   cut) reaches
//!   [`NEAR_THRESHOLD`] when their line ranges overlap (each widened by
//!   [`LINE_SLACK`] lines), or [`FAR_THRESHOLD`] when they do not (the
//!   code moved between rounds) or a range cannot be read; and they share
//!   at least [`MIN_COMMON_WORDS`] words, unless their words are all the
//!   same.
//!
//! A finding with an empty claim is never the same as anything. A person
//! splits a wrong match with `loopwatch split` (a `finding.split` event):
//! the earlier finding is then never matched with that finding, nor with
//! any later one that is the same as it.
//!
//! Pure: the rules and the engine ask it, the TUI and the report show it.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::kinds::Effect;
use super::state::{Iteration, State};
use super::types::{Finding, FindingVerdict};

/// Similarity (percent) two claims about overlapping lines need to be the same.
pub const NEAR_THRESHOLD: u32 = 38;

/// Similarity (percent) two claims need when their lines do not overlap.
pub const FAR_THRESHOLD: u32 = 55;

/// Words two claims must share to be the same, unless their words are all
/// the same (a two-word claim is not evidence enough).
pub const MIN_COMMON_WORDS: usize = 3;

/// Lines a range is widened by on each side before ranges are compared.
pub const LINE_SLACK: u32 = 5;

/// The key of a finding's `raisedAgain` field (in `findings.verified`).
pub const RAISED_AGAIN_KEY: &str = "raisedAgain";

/// What became of the earlier finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum EarlierOutcome {
    /// A person's decision (or the gate's expiry) let the loop go on past it.
    Dismissed,
    /// The finding verifier found it FALSE.
    False,
    /// The triage left it as it is (deferred or rejected while VERIFIED).
    AcceptedAsIs,
}

impl EarlierOutcome {
    /// The token as written in files.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A finding raised again: the earlier finding it is the same as (the
/// first of its kind) and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RaisedAgain {
    /// The iteration of the earlier finding.
    pub iteration: u32,
    /// Its id.
    pub finding: String,
    /// The review round it was raised in (1-based).
    pub round: u32,
    /// What became of it.
    pub outcome: EarlierOutcome,
    /// Its verdict, carried over.
    pub verdict: FindingVerdict,
    /// Its evidence, carried over.
    #[serde(default)]
    pub evidence: String,
    /// One line: who or what settled it, and why.
    pub why: String,
    /// How alike the two claims are (percent, see [`similarity`]).
    pub similarity: u32,
}

impl RaisedAgain {
    /// `FALSE in round 1 (F2)`, `dismissed in round 2 (F1)`.
    pub fn short(&self) -> String {
        let what = match self.outcome {
            EarlierOutcome::Dismissed => "dismissed",
            EarlierOutcome::False => "FALSE",
            EarlierOutcome::AcceptedAsIs => "left as is",
        };
        format!("{what} in round {} ({})", self.round, self.finding)
    }

    /// The sentence the journal and the report give for it.
    pub fn sentence(&self) -> String {
        format!(
            "raised again: {} in round {} (iteration {}, {}): {}",
            match self.outcome {
                EarlierOutcome::Dismissed => "dismissed",
                EarlierOutcome::False => "found FALSE",
                EarlierOutcome::AcceptedAsIs => "left as is by the triage",
            },
            self.round,
            self.iteration,
            self.finding,
            self.why
        )
    }

    /// The triage bucket a raised-again finding goes to: rejected for a
    /// dismissed or FALSE one, the earlier bucket for one left as is.
    pub fn bucket(&self) -> &'static str {
        match self.outcome {
            EarlierOutcome::AcceptedAsIs if self.why.starts_with("deferred") => "deferred",
            _ => "rejected",
        }
    }
}

/// A finding's `raisedAgain`, when it has one.
pub fn raised_again_of(f: &Finding) -> Option<RaisedAgain> {
    serde_json::from_value(f.extra.get(RAISED_AGAIN_KEY)?.clone()).ok()
}

/// The findings that are not raised again (the ones a person is asked about).
pub fn asked(findings: &[Finding]) -> Vec<Finding> {
    findings
        .iter()
        .filter(|f| raised_again_of(f).is_none())
        .cloned()
        .collect()
}

/// Payload of `finding.split`: a person says a finding raised again is
/// not the same as the earlier one it was matched with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindingSplit {
    /// The iteration of the finding raised again.
    pub iteration: u32,
    /// Its id.
    pub finding: String,
    /// The iteration of the earlier finding it was matched with.
    pub earlier_iteration: u32,
    /// The earlier finding's id.
    pub earlier: String,
    /// Why (never empty).
    pub reason: String,
    /// `user@host`.
    #[serde(default)]
    pub by: String,
    /// Unknown fields, kept.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: super::types::Extra,
}

/// What a finding is compared on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim<'a> {
    /// Its file.
    pub path: &'a str,
    /// Its line or range, as written.
    pub lines: &'a str,
    /// What it says.
    pub claim: &'a str,
}

impl<'a> Claim<'a> {
    /// The claim of a verified finding.
    pub fn of(f: &'a Finding) -> Claim<'a> {
        Claim {
            path: &f.path,
            lines: &f.lines,
            claim: &f.claim,
        }
    }

    /// The claim of the fields [`claim_fields`] read.
    pub fn of_fields((path, lines, claim): &'a (String, String, String)) -> Claim<'a> {
        Claim { path, lines, claim }
    }
}

/// The path, lines and claim of a finding as parsed (`lines` may be a
/// number); `None` when a field is missing.
pub fn claim_fields(item: &Value) -> (String, String, String) {
    let text = |k: &str| match item.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    (text("path"), text("lines"), text("claim"))
}

/// Function words that say nothing about what a finding is about.
const STOP: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "because", "before", "being", "but", "by", "can", "could", "does", "doesn", "did", "do",
    "each", "even", "every", "for", "from", "had", "has", "have", "here", "how", "if", "in",
    "instead", "into", "is", "it", "its", "itself", "just", "may", "might", "more", "must", "no",
    "not", "of", "on", "one", "only", "or", "other", "out", "same", "should", "so", "some", "such",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "through", "to", "too", "up", "upon", "very", "was", "were", "what", "when", "where",
    "whether", "which", "while", "who", "why", "will", "with", "without", "would", "yet",
];

/// The normalised words of a claim (see the module's rule).
pub fn words(claim: &str) -> BTreeSet<String> {
    claim
        .to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| {
            w.chars().count() > 1 && !STOP.contains(w) && !w.chars().all(|c| c.is_ascii_digit())
        })
        .map(stem)
        .collect()
}

/// A word without its ending: `entries` → `entry`, `indexes` → `index`,
/// `rows` → `row`, `rounded`/`rounding` → `round`, `formatted` →
/// `format`, then a final `e` of a longer word (`quote`, `quoted`,
/// `quoting` → `quot`). Words with digits or `_` are kept as they are.
fn stem(w: &str) -> String {
    if w.chars().count() < 4 || !w.chars().all(|c| c.is_ascii_lowercase()) {
        return w.to_string();
    }
    let mut w = w.to_string();
    let sibilant = ["ses", "xes", "zes", "ches", "shes"];
    if w.len() > 4 && w.ends_with("ies") {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if w.len() > 4 && sibilant.iter().any(|e| w.ends_with(e)) {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !w.ends_with("ss") {
        w.truncate(w.len() - 1);
    } else if let Some(base) = ["ing", "ed"]
        .iter()
        .find_map(|end| w.strip_suffix(end).filter(|b| b.len() >= 3))
    {
        let mut base = base.to_string();
        let b = base.as_bytes();
        if b.len() >= 4 && b[b.len() - 1] == b[b.len() - 2] && !b"lsz".contains(&b[b.len() - 1]) {
            base.pop();
        }
        w = base;
    }
    if w.len() >= 5 && w.ends_with('e') {
        w.pop();
    }
    w
}

/// How alike two claims are, in percent: the Dice coefficient of their
/// normalised words (0 when either has none).
pub fn similarity(a: &str, b: &str) -> u32 {
    alike(a, b).0
}

/// The similarity of two claims and the number of words they share.
fn alike(a: &str, b: &str) -> (u32, usize) {
    let (a, b) = (words(a), words(b));
    if a.is_empty() || b.is_empty() {
        return (0, 0);
    }
    let common = a.intersection(&b).count();
    let score = u32::try_from(200 * common / (a.len() + b.len())).unwrap_or(0);
    (score, common)
}

/// A file name as compared: blanks, a leading `./` and `\` separators aside.
fn norm_path(p: &str) -> String {
    let p = p.trim().replace('\\', "/");
    let mut p = p.as_str();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p.to_string()
}

/// The line ranges of `80-92`, `88`, `L80-L92`, `80–92`, `80, 85-86`;
/// `None` when nothing can be read.
pub fn line_ranges(lines: &str) -> Option<Vec<(u32, u32)>> {
    let mut out = Vec::new();
    for part in lines.split([',', ';']) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let mut ends = part
            .split(['-', '–', '—', ':'])
            .map(|e| e.trim().trim_start_matches(['L', 'l']).trim());
        let start: u32 = ends.next()?.parse().ok()?;
        let end: u32 = match ends.next() {
            Some(e) if !e.is_empty() => e.parse().ok()?,
            _ => start,
        };
        out.push((start.min(end), start.max(end)));
    }
    (!out.is_empty()).then_some(out)
}

/// True when two line fields overlap once each range is widened by
/// [`LINE_SLACK`]; `None` when either cannot be read.
fn lines_overlap(a: &str, b: &str) -> Option<bool> {
    let (a, b) = (line_ranges(a)?, line_ranges(b)?);
    Some(a.iter().any(|(s1, e1)| {
        b.iter().any(|(s2, e2)| {
            s1.saturating_sub(LINE_SLACK) <= e2.saturating_add(LINE_SLACK)
                && s2.saturating_sub(LINE_SLACK) <= e1.saturating_add(LINE_SLACK)
        })
    }))
}

/// The similarity of two findings when they are the same (see the
/// module's rule), else `None`.
pub fn same(a: Claim<'_>, b: Claim<'_>) -> Option<u32> {
    if a.claim.trim().is_empty() || b.claim.trim().is_empty() {
        return None;
    }
    if norm_path(a.path) != norm_path(b.path) {
        return None;
    }
    let (score, common) = alike(a.claim, b.claim);
    if common < MIN_COMMON_WORDS && score < 100 {
        return None;
    }
    let near = !a.path.trim().is_empty() && lines_overlap(a.lines, b.lines) == Some(true);
    let needed = if near { NEAR_THRESHOLD } else { FAR_THRESHOLD };
    (score >= needed).then_some(score)
}

/// The review round of an iteration: its `review.finished` round, else
/// one more than the reviews finished before it.
pub fn round_of(s: &State, iteration: u32) -> u32 {
    if let Some(r) = s
        .iteration(iteration)
        .and_then(|it| it.review.as_ref())
        .and_then(|r| r.finished.as_ref())
    {
        return r.round;
    }
    let before = s
        .review_iterations
        .iter()
        .filter(|it| it.iteration < iteration)
        .filter(|it| it.review.as_ref().is_some_and(|r| r.finished.is_some()))
        .count();
    u32::try_from(before + 1).unwrap_or(u32::MAX)
}

/// Why a finding of `it` is settled (its outcome and one line saying by
/// whom and why), when it is: FALSE first, then a person's dismissal
/// (an outcome that lets the loop go on, on the gate whose subject it
/// is), then the triage leaving a VERIFIED finding as it is.
pub fn settled(s: &State, it: &Iteration, f: &Finding) -> Option<(EarlierOutcome, String)> {
    if f.claim.trim().is_empty() || raised_again_of(f).is_some() {
        return None;
    }
    if f.verdict == FindingVerdict::False {
        let why = if f.evidence.trim().is_empty() {
            "the finding verifier found it FALSE".to_string()
        } else {
            format!("the finding verifier found it FALSE: {}", f.evidence)
        };
        return Some((EarlierOutcome::False, super::rules::one_line(&why)));
    }
    let gate = s.human_gates.iter().find(|g| {
        g.request.gate.is_none()
            && g.request.iteration == it.iteration
            && g.request.subject == f.id
            && matches!(g.effect(), Some(Effect::Dismiss | Effect::GoOn))
    });
    if let Some(g) = gate {
        let why = match (&g.decision, &g.expired) {
            (Some(d), _) => format!(
                "{} by {} ({}): {}",
                d.decision.decision, d.decision.by, g.request.id, d.decision.reason
            ),
            (None, Some(x)) => format!(
                "{} applied when {} expired after {}",
                x.action, g.request.id, x.after
            ),
            (None, None) => g.request.id.clone(),
        };
        return Some((EarlierOutcome::Dismissed, super::rules::one_line(&why)));
    }
    if f.verdict == FindingVerdict::Verified
        && let Some(b) = it
            .triage
            .as_ref()
            .and_then(|t| t.buckets.as_ref())
            .and_then(|b| b.bucket_of(&f.id))
            .filter(|b| *b != "accepted")
    {
        return Some((
            EarlierOutcome::AcceptedAsIs,
            format!("{b} by the triage of iteration {}", it.iteration),
        ));
    }
    None
}

/// True when a person split finding `id` of `iteration` from the earlier
/// finding it was matched with.
pub fn is_split(s: &State, iteration: u32, id: &str) -> bool {
    s.finding_splits
        .iter()
        .any(|x| x.iteration == iteration && x.finding == id)
}

/// The finding `id` of `iteration` as verified, else as its lane parsed it.
fn claim_of(s: &State, iteration: u32, id: &str) -> Option<(String, String, String)> {
    let it = s.iteration(iteration)?;
    if let Some(f) = it.findings.iter().find(|f| f.id == id) {
        return Some((f.path.clone(), f.lines.clone(), f.claim.clone()));
    }
    let lane = it.review.as_ref()?.lanes.iter().find(|l| l.finding == id)?;
    Some(claim_fields(&lane.item))
}

/// True when a person split, from the earlier finding `(iteration, id)`,
/// a finding that is the same as `c`.
fn split_off(s: &State, iteration: u32, id: &str, c: Claim<'_>) -> bool {
    s.finding_splits
        .iter()
        .filter(|x| x.earlier_iteration == iteration && x.earlier == id)
        .any(|x| {
            claim_of(s, x.iteration, &x.finding)
                .is_some_and(|f| same(c, Claim::of_fields(&f)).is_some())
        })
}

/// The earlier settled finding `c` (a finding of the review of
/// `iteration`) is the same as, if any: compared with every finding of the
/// earlier iterations that is settled or raised again (the words of a
/// claim drift from round to round), the most alike wins, the earliest
/// on a tie. A finding split off is never matched again with the earlier
/// finding, nor is one the same as it.
pub fn raised_again(s: &State, iteration: u32, c: Claim<'_>) -> Option<RaisedAgain> {
    let mut best: Option<RaisedAgain> = None;
    for it in s
        .review_iterations
        .iter()
        .filter(|i| i.iteration < iteration)
    {
        for f in &it.findings {
            let origin = match raised_again_of(f) {
                Some(r) if !is_split(s, it.iteration, &f.id) => r,
                Some(_) => continue,
                None => {
                    let Some((outcome, why)) = settled(s, it, f) else {
                        continue;
                    };
                    RaisedAgain {
                        iteration: it.iteration,
                        finding: f.id.clone(),
                        round: round_of(s, it.iteration),
                        outcome,
                        verdict: f.verdict,
                        evidence: f.evidence.clone(),
                        why,
                        similarity: 0,
                    }
                }
            };
            let Some(score) = same(c, Claim::of(f)) else {
                continue;
            };
            if best.as_ref().is_some_and(|b| b.similarity >= score)
                || split_off(s, origin.iteration, &origin.finding, c)
            {
                continue;
            }
            best = Some(RaisedAgain {
                similarity: score,
                ..origin
            });
        }
    }
    best
}

/// The review rounds in which finding `id` of `iteration` was seen: its
/// own, those of the earlier finding it was raised again from and of every
/// other finding raised again from that one, and those of the findings of
/// other rounds that are the same as it (and not split from it); in order.
pub fn seen_in(s: &State, iteration: u32, f: &Finding) -> Vec<u32> {
    let origin = raised_again_of(f)
        .filter(|_| !is_split(s, iteration, &f.id))
        .map_or((iteration, f.id.clone()), |r| (r.iteration, r.finding));
    let mut rounds = BTreeSet::new();
    rounds.insert(round_of(s, iteration));
    for it in &s.review_iterations {
        if it.iteration == iteration {
            continue;
        }
        for g in &it.findings {
            let linked = (it.iteration, g.id.clone()) == origin
                || raised_again_of(g).is_some_and(|r| {
                    (r.iteration, r.finding) == origin && !is_split(s, it.iteration, &g.id)
                });
            let alike = same(Claim::of(f), Claim::of(g)).is_some()
                && !split_pair(s, (iteration, &f.id), (it.iteration, &g.id));
            if linked || alike {
                rounds.insert(round_of(s, it.iteration));
            }
        }
    }
    rounds.into_iter().collect()
}

/// True when a person split one of the two findings from the other.
fn split_pair(s: &State, a: (u32, &str), b: (u32, &str)) -> bool {
    s.finding_splits.iter().any(|x| {
        let one = (x.iteration, x.finding.as_str());
        let other = (x.earlier_iteration, x.earlier.as_str());
        (one == a && other == b) || (one == b && other == a)
    })
}

#[cfg(test)]
mod tests;

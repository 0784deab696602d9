//! "While you were away": when the terminal regains focus, or on start, a
//! one-line digest of the gates opened and the runs ended since the person
//! last looked; any key dismisses it.

use super::App;
use crate::model::EventBody;

impl App {
    /// The terminal lost focus: what is on record now is what was seen.
    pub fn on_focus_lost(&mut self) {
        if self.away_from.is_none() {
            self.away_from = Some(self.seen());
        }
    }

    /// The terminal regained focus: the digest of what happened meanwhile.
    pub fn on_focus_gained(&mut self) {
        if let Some(marks) = self.away_from.take() {
            self.digest = self.digest_since(&marks);
        }
    }

    /// On start: the digest since the seq each run had when last looked at
    /// (`None` for a run never seen before).
    pub fn digest_since_last_look(&mut self, marks: &[Option<u64>]) {
        for (r, m) in self.runs.iter_mut().zip(marks) {
            r.looked_mark = *m;
        }
        self.refresh();
        let marks: Vec<u64> = self
            .runs
            .iter()
            .zip(marks)
            .map(|(r, m)| m.unwrap_or(r.state.seq))
            .collect();
        self.digest = self.digest_since(&marks);
    }

    /// The last seq of every run watched.
    pub fn seen(&self) -> Vec<u64> {
        self.runs.iter().map(|r| r.state.seq).collect()
    }

    /// The digest now on screen.
    pub fn digest(&self) -> Option<&str> {
        self.digest.as_deref()
    }

    fn digest_since(&self, marks: &[u64]) -> Option<String> {
        let mut opened = Vec::new();
        let mut ended = Vec::new();
        for (run, &mark) in self.runs.iter().zip(marks) {
            // A journal replaced by a shorter one: nothing to compare.
            if mark > run.state.seq {
                continue;
            }
            for ev in run.events.iter().filter(|e| e.seq > mark) {
                match &ev.body {
                    EventBody::HumanRequested(r) => opened.push(r.id.clone()),
                    EventBody::RunEnded(e) => {
                        let id = run.state.run.as_ref().map_or("run", |r| r.id.as_str());
                        ended.push(format!("{id} {}", e.status.as_str()));
                    }
                    _ => {}
                }
            }
        }
        if opened.is_empty() && ended.is_empty() {
            return None;
        }
        let mut parts = Vec::new();
        if !opened.is_empty() {
            let still = opened
                .iter()
                .filter(|id| {
                    self.runs
                        .iter()
                        .any(|r| r.state.human_gate(id).is_some_and(|g| g.is_open()))
                })
                .count();
            parts.push(format!(
                "{} opened ({}; {still} still waiting)",
                crate::util::count(opened.len(), "gate"),
                opened.join(", ")
            ));
        }
        if !ended.is_empty() {
            parts.push(format!(
                "{} ended ({})",
                crate::util::count(ended.len(), "run"),
                ended.join(", ")
            ));
        }
        Some(format!(
            "while you were away: {} · any key dismisses",
            parts.join(", ")
        ))
    }
}

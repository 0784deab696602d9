//! The snapshots a journal names: the run's base (`run.started`) and each
//! iteration's code (the `gate.started` of its last GATE 0 round), and the
//! code changes between two of them.

use std::collections::BTreeMap;
use std::path::Path;

use crate::model::{Event, EventBody, GateName};

use super::{CodeSnapshot, FileDiff, diff};

/// The snapshots of the last run of a journal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunTrees {
    /// Run id.
    pub run_id: String,
    /// The base (iteration 0), when `run.started` recorded one or said why not.
    pub base: Option<CodeSnapshot>,
    /// Per iteration, the snapshot of its last GATE 0 round.
    pub iterations: BTreeMap<u32, CodeSnapshot>,
}

/// The code changes between two iterations, or why they cannot be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeChanges {
    /// The changed files.
    Files(Vec<FileDiff>),
    /// No snapshot for one side, or git could not read it.
    Unavailable(String),
}

impl RunTrees {
    /// Reads the snapshots from the events (of the last `run.started` on).
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> RunTrees {
        let mut t = RunTrees::default();
        for ev in events {
            match &ev.body {
                EventBody::RunStarted {
                    run,
                    tree,
                    tree_missing,
                } => {
                    t = RunTrees {
                        run_id: run.id.clone(),
                        base: CodeSnapshot::from_fields(tree.as_deref(), tree_missing.as_deref()),
                        iterations: BTreeMap::new(),
                    };
                }
                EventBody::GateStarted {
                    gate: GateName::Floor,
                    iteration,
                    tree,
                    tree_missing,
                    ..
                } => {
                    if let Some(s) =
                        CodeSnapshot::from_fields(tree.as_deref(), tree_missing.as_deref())
                    {
                        t.iterations.insert(*iteration, s);
                    }
                }
                _ => {}
            }
        }
        t
    }

    /// The snapshot of an iteration; 0 is the run's base.
    pub fn of(&self, iteration: u32) -> Option<&CodeSnapshot> {
        if iteration == 0 {
            self.base.as_ref()
        } else {
            self.iterations.get(&iteration)
        }
    }

    /// The code changes from iteration `from` to iteration `to` (0 = base).
    pub fn changes(&self, worktree: &Path, from: u32, to: u32) -> CodeChanges {
        let side = |n: u32| match self.of(n) {
            Some(CodeSnapshot::Tree(t)) => Ok(t),
            Some(CodeSnapshot::Missing(why)) => Err(format!("no snapshot of {}: {why}", name(n))),
            None => Err(format!("no snapshot of {} in the journal", name(n))),
        };
        match (side(from), side(to)) {
            (Ok(a), Ok(b)) => match diff(worktree, a, b) {
                Ok(files) => CodeChanges::Files(files),
                Err(e) => CodeChanges::Unavailable(e.to_string()),
            },
            (Err(why), _) | (_, Err(why)) => CodeChanges::Unavailable(why),
        }
    }
}

fn name(iteration: u32) -> String {
    if iteration == 0 {
        "the run's base".into()
    } else {
        format!("iteration {iteration}")
    }
}

impl CodeChanges {
    /// `code changes, iteration I → J` then the file list and hunks, or
    /// why they cannot be shown.
    pub fn to_text(&self, from: u32, to: u32) -> String {
        let mut o = format!("\ncode changes, {} → {}\n", name(from), name(to));
        match self {
            CodeChanges::Files(files) => o.push_str(&super::diff_text(files)),
            CodeChanges::Unavailable(why) => {
                o.push_str("  not available: ");
                o.push_str(why);
                o.push('\n');
            }
        }
        o
    }

    /// Adds `code` (the array of changed files, or null) and, when null,
    /// `codeUnavailable` (why) to a JSON object.
    pub fn add_to_json(&self, target: &mut serde_json::Value) {
        let Some(map) = target.as_object_mut() else {
            return;
        };
        match self {
            CodeChanges::Files(files) => {
                map.insert(
                    "code".into(),
                    serde_json::to_value(files).unwrap_or(serde_json::Value::Null),
                );
            }
            CodeChanges::Unavailable(why) => {
                map.insert("code".into(), serde_json::Value::Null);
                map.insert(
                    "codeUnavailable".into(),
                    serde_json::Value::from(why.as_str()),
                );
            }
        }
    }
}

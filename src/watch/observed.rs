//! The versions of a foreign `state.json` the TUI has seen, kept so that a
//! pipeline written by another program (no journal) can still be replayed
//! for what was observed.
//!
//! Stored outside the pipeline (it belongs to another program): one JSONL
//! file per pipeline under `$XDG_STATE_HOME/loopwatch/observed/` (else
//! `~/.local/state/...`), each line `{"observedAt", "hash", "state"}`,
//! deduplicated by the hash of the state.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::State;

/// One observed version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observed {
    /// When it was seen (RFC 3339 UTC).
    pub observed_at: String,
    /// `sha256:<hex>` of the state's JSON.
    pub hash: String,
    /// The state.
    pub state: State,
}

/// The observation log of one pipeline.
#[derive(Debug, Clone)]
pub struct ObservedLog {
    path: PathBuf,
    last_hash: Option<String>,
}

impl ObservedLog {
    /// The log of the pipeline at `dir` under `base` (the state folder).
    pub fn at(base: &Path, pipeline_dir: &Path) -> Self {
        let canon =
            std::fs::canonicalize(pipeline_dir).unwrap_or_else(|_| pipeline_dir.to_path_buf());
        let key = crate::util::sha256_tagged(canon.as_os_str().as_encoded_bytes());
        let name = format!(
            "{}.jsonl",
            key.get("sha256:".len().."sha256:".len() + 16)
                .unwrap_or("pipeline")
        );
        let path = base.join("observed").join(name);
        let last_hash = load(&path).last().map(|o| o.hash.clone());
        ObservedLog { path, last_hash }
    }

    /// The log in the user's state folder, when there is one.
    pub fn for_pipeline(pipeline_dir: &Path) -> Option<Self> {
        crate::util::state_dir().map(|base| Self::at(&base, pipeline_dir))
    }

    /// Records a version unless it equals the last one recorded.
    pub fn record(&mut self, state: &State) -> std::io::Result<bool> {
        let json = serde_json::to_vec(state).map_err(std::io::Error::other)?;
        let hash = crate::util::sha256_tagged(&json);
        if self.last_hash.as_deref() == Some(hash.as_str()) {
            return Ok(false);
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let line = serde_json::to_string(&Observed {
            observed_at: crate::util::now_rfc3339(),
            hash: hash.clone(),
            state: state.clone(),
        })
        .map_err(std::io::Error::other)?;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        f.write_all(format!("{line}\n").as_bytes())?;
        self.last_hash = Some(hash);
        Ok(true)
    }

    /// Every version recorded, oldest first.
    pub fn versions(&self) -> Vec<Observed> {
        load(&self.path)
    }
}

fn load(path: &Path) -> Vec<Observed> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EventBody, fold};

    #[test]
    fn versions_are_deduplicated_and_reloaded() {
        let d = tempfile::tempdir().unwrap();
        let pipe = d.path().join("wt/.pipeline");
        std::fs::create_dir_all(&pipe).unwrap();
        let mut log = ObservedLog::at(d.path(), &pipe);
        let a = State::default();
        let b = fold(&[crate::model::Event {
            v: 1,
            seq: 1,
            at: "t".into(),
            prev: None,
            body: EventBody::Note { text: "x".into() },
        }]);
        assert!(log.record(&a).unwrap());
        assert!(!log.record(&a).unwrap());
        assert!(log.record(&b).unwrap());
        let again = ObservedLog::at(d.path(), &pipe);
        let v = again.versions();
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].state, b);
    }
}

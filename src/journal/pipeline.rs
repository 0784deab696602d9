//! Finding the `.pipeline` folder and the paths inside it.

use std::path::{Path, PathBuf};

use super::{JournalError, PathError};

/// The writer lock's file in `.pipeline/`: its content (the holder's pid,
/// rewritten at each take) says nothing about the run, so watchers ignore it.
pub const WRITER_LOCK: &str = "lock";

/// A `.pipeline` folder (it may not exist yet). Two pipelines are equal
/// when they name the same folder, guarded or not.
#[derive(Debug, Clone)]
pub struct Pipeline {
    dir: PathBuf,
    guard: Option<super::Guard>,
}

impl PartialEq for Pipeline {
    fn eq(&self, other: &Self) -> bool {
        self.dir == other.dir
    }
}

impl Eq for Pipeline {}

impl Pipeline {
    /// The folder name.
    pub const DIR_NAME: &'static str = ".pipeline";

    /// A pipeline at exactly this folder.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Pipeline {
            dir: dir.into(),
            guard: None,
        }
    }

    /// The same pipeline, its journal guarded (see [`super::Guard`]): what
    /// other writers append is checked before each append and each
    /// [`super::check_guard`]. Clones share the guard.
    pub fn guarded(mut self, allowed: super::Allowed) -> Self {
        self.guard = Some(super::Guard::new(allowed));
        self
    }

    /// The guard, when the pipeline is guarded.
    pub fn guard(&self) -> Option<&super::Guard> {
        self.guard.as_ref()
    }

    /// Interprets a path given by a person: a `.pipeline` folder itself (its
    /// name, or it holds `events.jsonl` / `state.json`), or a worktree whose
    /// `.pipeline` is meant.
    pub fn from_user_path(path: &Path) -> Self {
        let is_pipeline = path.file_name().is_some_and(|n| n == Self::DIR_NAME)
            || path.join("events.jsonl").exists()
            || path.join("state.json").exists();
        if is_pipeline {
            Pipeline::at(path)
        } else {
            Pipeline::at(path.join(Self::DIR_NAME))
        }
    }

    /// Walks up from `start` like git finds `.git`: the first existing
    /// `.pipeline` folder.
    pub fn discover(start: &Path) -> Option<Self> {
        start
            .ancestors()
            .map(|a| a.join(Self::DIR_NAME))
            .find(|p| p.is_dir())
            .map(Pipeline::at)
    }

    /// The pipeline to write to from `start`: an existing one found upwards,
    /// else a new one at the root of the enclosing git worktree, else in `start`.
    pub fn discover_or_new(start: &Path) -> Self {
        if let Some(p) = Self::discover(start) {
            return p;
        }
        let root = start
            .ancestors()
            .find(|a| a.join(".git").exists())
            .unwrap_or(start);
        Pipeline::at(root.join(Self::DIR_NAME))
    }

    /// Where a pipeline would be looked for from `start` (for messages).
    pub fn search_hint(start: &Path) -> PathBuf {
        Self::discover_or_new(start).dir
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The worktree holding it (its parent folder).
    pub fn worktree(&self) -> &Path {
        self.dir.parent().unwrap_or(Path::new("."))
    }

    /// `events.jsonl`.
    pub fn journal_path(&self) -> PathBuf {
        self.dir.join("events.jsonl")
    }

    /// `state.json`.
    pub fn state_path(&self) -> PathBuf {
        self.dir.join("state.json")
    }

    /// `lock`.
    pub fn lock_path(&self) -> PathBuf {
        self.dir.join(WRITER_LOCK)
    }

    /// `gates/`.
    pub fn gates_dir(&self) -> PathBuf {
        self.dir.join("gates")
    }

    /// `.gitignore` (holding `*`: a pipeline is never committed by accident,
    /// and a cloned repository cannot carry links into someone's pipeline).
    pub fn gitignore_path(&self) -> PathBuf {
        self.dir.join(".gitignore")
    }

    /// Creates the folder when missing, and its `.gitignore` when missing
    /// (at creation and on any later write). The `.gitignore` is created
    /// exclusively and never through a link; failing to write it does not
    /// stop a write (it is a safeguard, not data).
    pub fn ensure_dir(&self) -> Result<(), JournalError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| JournalError::io("create", &self.dir, e))?;
        let path = self.gitignore_path();
        if std::fs::symlink_metadata(&path).is_err() {
            let made = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, GITIGNORE));
            if let Err(e) = made
                && e.kind() != std::io::ErrorKind::AlreadyExists
            {
                tracing::warn!(path = %path.display(), error = %e, "could not write the pipeline's .gitignore");
            }
        }
        Ok(())
    }

    /// True when the folder exists.
    pub fn exists(&self) -> bool {
        self.dir.is_dir()
    }

    /// The error that says there is no pipeline here (exit 3).
    pub fn missing(&self) -> JournalError {
        JournalError::NoPipelineAt {
            dir: self.dir.clone(),
        }
    }

    /// Resolves a path recorded in an event (relative to `.pipeline/`),
    /// refusing anything that would leave the pipeline's worktree: absolute
    /// paths, `..` components. Returns why it is refused.
    pub fn resolve_recorded(&self, rel: &str) -> Result<PathBuf, PathError> {
        let p = Path::new(rel);
        if rel.is_empty() {
            return Err(PathError::Empty);
        }
        if p.is_absolute() {
            return Err(PathError::Absolute(rel.into()));
        }
        if p.components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(PathError::LeavesPipeline(rel.into()));
        }
        Ok(self.dir.join(p))
    }
}

/// The pid file `loopwatch run` keeps beside its lock on the folder.
pub const ENGINE_LOCK: &str = "engine.lock";

/// The pid of the `loopwatch run` driving the pipeline in `dir`, while one
/// does (`Some(0)` when its pid cannot be told); `None` when none does.
pub fn running_engine(dir: &Path) -> Option<u32> {
    let folder = std::fs::File::open(dir).ok()?;
    match folder.try_lock_shared() {
        Ok(()) => {
            let _ = folder.unlock();
            None
        }
        Err(std::fs::TryLockError::WouldBlock) => Some(engine_holder(dir).unwrap_or(0)),
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// Who holds the folder's lock: the pid in `engine.lock` when that process
/// is alive, else the one the kernel names in `/proc/locks`.
pub fn engine_holder(dir: &Path) -> Option<u32> {
    let named = std::fs::File::open(dir.join(ENGINE_LOCK))
        .ok()
        .and_then(|f| {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::Read::take(f, 32), &mut s).ok()?;
            s.trim().parse().ok()
        })
        .filter(|&p| crate::util::process_alive(p));
    named.or_else(|| {
        use std::os::unix::fs::MetadataExt;
        let ino = std::fs::metadata(dir).ok()?.ino();
        let locks = std::fs::read_to_string("/proc/locks").ok()?;
        locks.lines().find_map(|l| {
            // `1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF`
            let f: Vec<&str> = l.split_whitespace().collect();
            let (pid, id) = (f.get(4)?, f.get(5)?);
            (id.rsplit(':').next()?.parse::<u64>().ok()? == ino).then(|| pid.parse().ok())?
        })
    })
}

/// What `.pipeline/.gitignore` holds.
pub const GITIGNORE: &[u8] =
    b"# written by loopwatch: a pipeline is local state, never committed\n*\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovers_upwards_and_creates_at_git_root() {
        let d = tempfile::tempdir().unwrap();
        let deep = d.path().join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir(d.path().join(".git")).unwrap();
        assert_eq!(Pipeline::discover(&deep), None);
        assert_eq!(
            Pipeline::discover_or_new(&deep).dir(),
            d.path().join(".pipeline")
        );
        std::fs::create_dir(d.path().join("a/.pipeline")).unwrap();
        assert_eq!(
            Pipeline::discover(&deep).unwrap().dir(),
            d.path().join("a/.pipeline")
        );
    }

    #[test]
    fn recorded_paths_stay_inside() {
        let p = Pipeline::at("/w/.pipeline");
        assert_eq!(
            p.resolve_recorded("gates/1-floor-1.out").unwrap(),
            Path::new("/w/.pipeline/gates/1-floor-1.out")
        );
        assert!(p.resolve_recorded("../etc/passwd").is_err());
        assert!(p.resolve_recorded("/etc/passwd").is_err());
    }
}

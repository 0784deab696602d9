//! Finding the `.pipeline` folders under the folders given to `loopwatch
//! watch DIR...`, and the ones that appear later.
//!
//! New pipelines are found by a periodic rescan, not by watching the
//! folders: a watch per folder searched would spend the system's inotify
//! watches (which the pipelines themselves need, one each) on source trees.
//! The rescan stays cheap by remembering each folder's modification time:
//! a folder whose entries did not change is not listed again (one `stat`),
//! only descended into. `.git`, `node_modules` and `target` are never
//! entered, nor the `.pipeline` folders themselves, nor symbolic links to
//! folders (no loops).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::journal::Pipeline;

/// How many levels below a DIR `.pipeline` folders are looked for, unless told.
pub const DEFAULT_DEPTH: usize = 4;

/// Folders never entered.
pub const SKIPPED: [&str; 3] = [".git", "node_modules", "target"];

/// How often the DIRs are searched again for new pipelines.
pub const RESCAN_EVERY: Duration = Duration::from_secs(3);

/// What a path given on the command line stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// One pipeline: a `.pipeline` folder, a worktree (it holds `.git` or
    /// `.pipeline`), or a path that does not exist yet (watched for it).
    Pipeline(Pipeline),
    /// A folder to search for pipelines.
    Search(PathBuf),
}

impl Target {
    /// Classifies a path given by a person.
    pub fn of(path: &Path) -> Target {
        let p = Pipeline::from_user_path(path);
        let worktree = path.join(".git").exists() || path.join(Pipeline::DIR_NAME).exists();
        if p.dir() == path || worktree || !path.is_dir() {
            Target::Pipeline(p)
        } else {
            Target::Search(path.to_path_buf())
        }
    }
}

/// A folder that could not be searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchProblem {
    /// The folder.
    pub dir: PathBuf,
    /// Why.
    pub message: String,
}

/// What one scan found.
#[derive(Debug, Default)]
pub struct Scan {
    /// Pipelines not found by an earlier scan, in path order.
    pub new: Vec<Pipeline>,
    /// Folders that could not be listed (each reported once until it can be again).
    pub problems: Vec<SearchProblem>,
}

/// What a folder held when it was last listed.
#[derive(Debug)]
struct Listed {
    mtime: SystemTime,
    /// When it was listed: a folder modified within the clock's grain of
    /// that moment is listed again (a change in the same tick keeps the mtime).
    at: SystemTime,
    subdirs: Vec<PathBuf>,
    /// The scan that last walked it.
    seen: u64,
}

/// The search of some folders, remembered between scans.
#[derive(Debug)]
pub struct Discovery {
    roots: Vec<PathBuf>,
    depth: usize,
    listed: HashMap<PathBuf, Listed>,
    found: BTreeSet<PathBuf>,
    failing: BTreeSet<PathBuf>,
    generation: u64,
}

impl Discovery {
    /// A search of `roots`, `depth` levels down.
    pub fn new(roots: Vec<PathBuf>, depth: usize) -> Self {
        Discovery {
            roots,
            depth,
            listed: HashMap::new(),
            found: BTreeSet::new(),
            failing: BTreeSet::new(),
            generation: 0,
        }
    }

    /// The folders searched.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// True when there is nothing to search.
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// Marks pipelines as already known (named on the command line).
    pub fn know(&mut self, dir: &Path) {
        self.found.insert(dir.to_path_buf());
    }

    /// Searches every root; returns what is new since the last scan.
    pub fn scan(&mut self) -> Scan {
        let mut scan = Scan::default();
        self.generation += 1;
        for root in self.roots.clone() {
            self.walk(&root, 0, &mut scan);
        }
        scan.new.sort_by(|a, b| a.dir().cmp(b.dir()));
        // Forget folders gone since (their cache would grow forever).
        let generation = self.generation;
        self.listed.retain(|_, l| l.seen == generation);
        scan
    }

    fn walk(&mut self, dir: &Path, level: usize, scan: &mut Scan) {
        let mtime = match std::fs::metadata(dir).and_then(|m| m.modified()) {
            Ok(t) => t,
            Err(e) => {
                self.listed.remove(dir);
                self.fail(dir, &e, scan);
                return;
            }
        };
        let fresh = self.listed.get(dir).is_some_and(|l| {
            l.mtime == mtime
                && l.at
                    .duration_since(mtime)
                    .is_ok_and(|d| d > Duration::from_secs(1))
        });
        // The cached sub-folders are taken out while they are walked (no copy).
        let subdirs = if fresh {
            self.listed
                .get_mut(dir)
                .map(|l| std::mem::take(&mut l.subdirs))
                .unwrap_or_default()
        } else {
            match self.list(dir, level, scan) {
                Ok(subdirs) => {
                    self.failing.remove(dir);
                    subdirs
                }
                Err(e) => {
                    self.listed.remove(dir);
                    self.fail(dir, &e, scan);
                    return;
                }
            }
        };
        if level < self.depth {
            for sub in &subdirs {
                self.walk(sub, level + 1, scan);
            }
        }
        let generation = self.generation;
        match self.listed.get_mut(dir) {
            Some(l) if fresh => {
                l.subdirs = subdirs;
                l.seen = generation;
            }
            _ => {
                self.listed.insert(
                    dir.to_path_buf(),
                    Listed {
                        mtime,
                        at: SystemTime::now(),
                        subdirs,
                        seen: generation,
                    },
                );
            }
        }
    }

    /// Lists `dir`: records a `.pipeline` in it, returns the folders to descend into.
    fn list(&mut self, dir: &Path, level: usize, scan: &mut Scan) -> std::io::Result<Vec<PathBuf>> {
        let mut subdirs = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let Ok(entry) = entry else { continue };
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if name == Pipeline::DIR_NAME {
                // A link to a folder counts (a synced copy may be one); a file does not.
                let is_dir = kind.is_dir() || (kind.is_symlink() && entry.path().is_dir());
                if is_dir && self.found.insert(entry.path()) {
                    scan.new.push(Pipeline::at(entry.path()));
                }
                continue;
            }
            if kind.is_dir()
                && level < self.depth
                && !SKIPPED.iter().any(|s| name == std::ffi::OsStr::new(s))
            {
                subdirs.push(entry.path());
            }
        }
        subdirs.sort();
        Ok(subdirs)
    }

    fn fail(&mut self, dir: &Path, e: &std::io::Error, scan: &mut Scan) {
        // A folder removed since it was listed is simply gone (a root that
        // does not exist is still worth saying).
        if e.kind() == std::io::ErrorKind::NotFound && !self.roots.iter().any(|r| r == dir) {
            return;
        }
        if self.failing.insert(dir.to_path_buf()) {
            scan.problems.push(SearchProblem {
                dir: dir.to_path_buf(),
                message: e.to_string(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipe(root: &Path, rel: &str) -> PathBuf {
        let p = root.join(rel).join(".pipeline");
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    fn dirs(s: &Scan) -> Vec<PathBuf> {
        s.new.iter().map(|p| p.dir().to_path_buf()).collect()
    }

    #[test]
    fn pipelines_are_found_to_the_depth_and_skipped_folders_are_not_entered() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let a = pipe(r, "a");
        let b = pipe(r, "x/b");
        let c = pipe(r, "x/y/z/c");
        pipe(r, "x/y/z/c/too-deep");
        pipe(r, "node_modules/m");
        pipe(r, "w/target/t");
        pipe(r, "w/.git/g");
        let mut disc = Discovery::new(vec![r.to_path_buf()], 4);
        let s = disc.scan();
        assert_eq!(dirs(&s), vec![a, b, c]);
        assert!(s.problems.is_empty());
        assert!(disc.scan().new.is_empty(), "found once");
    }

    #[test]
    fn a_pipeline_created_later_is_found_by_the_next_scan_even_in_a_listed_folder() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir_all(r.join("wt/src")).unwrap();
        let mut disc = Discovery::new(vec![r.to_path_buf()], 4);
        assert!(disc.scan().new.is_empty());
        let p = pipe(r, "wt");
        assert_eq!(dirs(&disc.scan()), vec![p]);
        let q = pipe(r, "wt/src/nested");
        assert_eq!(dirs(&disc.scan()), vec![q]);
    }

    #[test]
    fn an_unreadable_folder_is_reported_once_and_the_rest_is_searched() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let ok = pipe(r, "ok");
        let locked = r.join("locked");
        pipe(r, "locked/inside");
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        // A root that is not a folder cannot be listed, whoever runs this.
        let file = r.join("a-file");
        std::fs::write(&file, "x").unwrap();
        let mut disc = Discovery::new(vec![r.to_path_buf(), file.clone()], 4);
        let s = disc.scan();
        let mut failed: Vec<PathBuf> = s.problems.iter().map(|p| p.dir.clone()).collect();
        // Permissions stop a search only for a user other than root.
        let locked_fails = std::fs::read_dir(&locked).is_err();
        let mut want = vec![file];
        let mut found = vec![ok];
        if locked_fails {
            want.push(locked.clone());
        } else {
            found.push(locked.join("inside/.pipeline"));
        }
        failed.sort();
        want.sort();
        found.sort();
        assert_eq!(failed, want);
        assert_eq!(dirs(&s), found);
        assert!(disc.scan().problems.is_empty(), "reported once");
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A folder removed between two scans is not a problem.
        std::fs::remove_dir_all(r.join("ok")).unwrap();
        assert!(disc.scan().problems.is_empty());
    }

    #[test]
    fn targets_keep_a_worktree_or_a_pipeline_as_one_run() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir_all(r.join("wt/.git")).unwrap();
        std::fs::create_dir_all(r.join("many/a/.pipeline")).unwrap();
        assert_eq!(
            Target::of(&r.join("wt")),
            Target::Pipeline(Pipeline::at(r.join("wt/.pipeline")))
        );
        assert_eq!(
            Target::of(&r.join("many/a/.pipeline")),
            Target::Pipeline(Pipeline::at(r.join("many/a/.pipeline")))
        );
        assert_eq!(
            Target::of(&r.join("many/a")),
            Target::Pipeline(Pipeline::at(r.join("many/a/.pipeline")))
        );
        assert_eq!(Target::of(&r.join("many")), Target::Search(r.join("many")));
        assert_eq!(
            Target::of(&r.join("nothing-yet")),
            Target::Pipeline(Pipeline::at(r.join("nothing-yet/.pipeline")))
        );
    }
}

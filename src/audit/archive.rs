//! A run in one file (`loopwatch export`), and that file opened again,
//! read as hostile input.
//!
//! The archive is a plain tar of one folder, `loopwatch-export/`:
//!
//! ```text
//! loopwatch-export/MANIFEST.json        what the archive holds: every file with its size and sha256
//! loopwatch-export/MANIFEST.json.sig    the manifest's SSH signature (export --sign)
//! loopwatch-export/pipeline/…           the .pipeline folder: events.jsonl, state.json, evidence/,
//!                                       gates/, triage and verify files, report.md (agents/ with --logs)
//! loopwatch-export/code.bundle          the run's snapshot refs as a git bundle
//! ```
//!
//! Opening one extracts it, entry by entry, into a private temporary
//! folder: only regular files and folders, each path relative and inside
//! `loopwatch-export/` (no `..`, no absolute path, no link of any kind),
//! each file at most [`MAX_ENTRY_BYTES`], no path twice. The bundle is
//! fetched into a fresh repository there (no network), and the pipeline
//! made read-only: replay and report read it, nothing decides in it.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::journal::Pipeline;

/// The archive's top folder.
pub const TOP: &str = "loopwatch-export";
/// The manifest's name in the top folder.
pub const MANIFEST: &str = "MANIFEST.json";
/// The manifest signature's name.
pub const MANIFEST_SIG: &str = "MANIFEST.json.sig";
/// The bundle's name.
pub const BUNDLE: &str = "code.bundle";
/// Largest file an archive may hold (a pipeline file is far smaller).
pub const MAX_ENTRY_BYTES: u64 = 1 << 30;
/// Largest file exported from a pipeline.
const MAX_EXPORTED: u64 = 256 << 20;

/// What an archive holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// `loopwatch-export`.
    pub format: String,
    /// 1.
    pub version: u32,
    /// The run's id.
    #[serde(default)]
    pub run: String,
    /// When the archive was made (RFC 3339 UTC).
    #[serde(default)]
    pub created_at: String,
    /// Who made it (`user@host`).
    #[serde(default)]
    pub by: String,
    /// Every file but the manifest and its signature.
    pub files: Vec<ManifestFile>,
    /// Why there is no `code.bundle`, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_missing: Option<String>,
}

/// One file of an archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Relative to the top folder.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// `sha256:<hex>`.
    pub sha256: String,
}

/// Why an archive cannot be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// A filesystem or tar error while writing.
    #[error("{op} {}: {cause}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// On what.
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// The archive ends before its end: cut, or a read error.
    #[error("the archive is truncated or corrupt at entry {entry}: {why}")]
    Truncated {
        /// 1-based entry count.
        entry: usize,
        /// The reader's message.
        why: String,
    },
    /// A path that would leave the archive's folder.
    #[error("entry {path:?} leaves the archive's folder ({why}): refused")]
    Escapes {
        /// The path as written in the archive.
        path: String,
        /// `..`, absolute, outside `loopwatch-export/`.
        why: &'static str,
    },
    /// A link or special file.
    #[error("entry {path:?} is a {kind}, not a file or folder: refused")]
    NotAFile {
        /// The path.
        path: String,
        /// symbolic link, hard link, device, FIFO…
        kind: String,
    },
    /// A file larger than any pipeline file.
    #[error("entry {path:?} is larger than 1 GiB: refused")]
    TooLarge {
        /// The path.
        path: String,
    },
    /// A path written twice.
    #[error("entry {path:?} appears twice: refused")]
    Duplicate {
        /// The path.
        path: String,
    },
    /// No manifest (not an export, or cut before it).
    #[error("no {TOP}/{MANIFEST}: not a loopwatch export, or truncated")]
    NoManifest,
    /// A manifest that does not parse.
    #[error("{TOP}/{MANIFEST} is not a manifest: {0}")]
    BadManifest(String),
    /// Nothing to export.
    #[error("{0}")]
    Nothing(String),
}

fn io(op: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ArchiveError + use<> {
    let path = path.to_path_buf();
    move |cause| ArchiveError::Io { op, path, cause }
}

/// What to put in an export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// The agents' logs (`agents/`) too.
    pub logs: bool,
    /// Sign the manifest with this SSH key.
    pub sign_with: Option<PathBuf>,
}

/// What an export wrote.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The manifest written.
    pub manifest: Manifest,
    /// Whether it is signed.
    pub signed: bool,
}

/// Files of the pipeline never exported: locks and temp files.
fn skipped(rel: &Path) -> bool {
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name == crate::journal::WRITER_LOCK
        || name == crate::journal::ENGINE_LOCK
        || name.starts_with(crate::util::TEMP_PREFIX)
}

/// The regular files under `dir`, relative, sorted; links and special
/// files are never followed nor taken.
fn pipeline_files(dir: &Path, logs: bool) -> Result<Vec<PathBuf>, ArchiveError> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let here = dir.join(&rel);
        for entry in std::fs::read_dir(&here).map_err(io("read", &here))? {
            let entry = entry.map_err(io("read", &here))?;
            let r = rel.join(entry.file_name());
            let t = entry.file_type().map_err(io("stat", &entry.path()))?;
            if t.is_dir() {
                if r == Path::new("agents") && !logs {
                    continue;
                }
                stack.push(r);
            } else if t.is_file() && !skipped(&r) {
                out.push(r);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Writes `pipeline`'s run to the archive `out` (atomically: a temp file
/// beside it, renamed).
pub fn export(
    pipeline: &Pipeline,
    out: &Path,
    opts: &ExportOptions,
) -> Result<Exported, ArchiveError> {
    let dir = pipeline.dir();
    if !dir.join("events.jsonl").is_file() {
        return Err(ArchiveError::Nothing(format!(
            "{} has no journal: nothing to export",
            dir.display()
        )));
    }
    let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
    for rel in pipeline_files(dir, opts.logs)? {
        let path = dir.join(&rel);
        let bytes = crate::util::read_regular(&path, MAX_EXPORTED).map_err(io("read", &path))?;
        if bytes.len() as u64 > MAX_EXPORTED {
            return Err(ArchiveError::Io {
                op: "read",
                path,
                cause: std::io::Error::other("larger than 256 MiB"),
            });
        }
        entries.push((format!("pipeline/{}", rel.to_string_lossy()), bytes));
    }
    let snap = crate::journal::snapshot(pipeline).ok().flatten();
    let run = snap
        .as_ref()
        .and_then(|s| s.state.run.as_ref())
        .map(|r| r.id.clone())
        .unwrap_or_default();
    let work = tempfile::tempdir().map_err(io("create a temp folder for", out))?;
    let bundle = work.path().join(BUNDLE);
    let bundle_missing = if run.is_empty() {
        Some("the journal names no run".to_string())
    } else {
        match crate::code::bundle_run(pipeline.worktree(), &run, &bundle) {
            Ok(refs) if refs.is_empty() => Some("the run keeps no snapshot refs".to_string()),
            Ok(_) => {
                let bytes = std::fs::read(&bundle).map_err(io("read", &bundle))?;
                entries.push((BUNDLE.to_string(), bytes));
                None
            }
            Err(e) => Some(e.to_string()),
        }
    };
    let manifest = Manifest {
        format: TOP.into(),
        version: 1,
        run,
        created_at: crate::util::now_rfc3339(),
        by: crate::util::user_at_host(),
        files: entries
            .iter()
            .map(|(p, b)| ManifestFile {
                path: p.clone(),
                size: b.len() as u64,
                sha256: crate::util::sha256_tagged(b),
            })
            .collect(),
        bundle_missing,
    };
    let mut manifest_bytes =
        serde_json::to_vec_pretty(&manifest).map_err(|e| io("write", out)(e.into()))?;
    manifest_bytes.push(b'\n');
    let sig = match &opts.sign_with {
        Some(key) => Some(
            super::sign::sign(key, &manifest_bytes)
                .map_err(|e| io("sign", out)(std::io::Error::other(e.to_string())))?,
        ),
        None => None,
    };
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp =
        tempfile::NamedTempFile::new_in(&parent).map_err(io("create a temp file in", &parent))?;
    {
        let mut b = tar::Builder::new(tmp.as_file());
        b.mode(tar::HeaderMode::Deterministic);
        let mut add = |name: &str, bytes: &[u8]| -> Result<(), ArchiveError> {
            let mut h = tar::Header::new_ustar();
            h.set_size(bytes.len() as u64);
            h.set_mode(0o644);
            h.set_entry_type(tar::EntryType::Regular);
            b.append_data(&mut h, format!("{TOP}/{name}"), bytes)
                .map_err(io("write", out))
        };
        add(MANIFEST, &manifest_bytes)?;
        if let Some(s) = &sig {
            add(MANIFEST_SIG, s.as_bytes())?;
        }
        for (name, bytes) in &entries {
            add(name, bytes)?;
        }
        b.finish().map_err(io("write", out))?;
    }
    tmp.as_file().sync_all().map_err(io("fsync", out))?;
    tmp.persist(out).map_err(|e| ArchiveError::Io {
        op: "rename into",
        path: out.to_path_buf(),
        cause: e.error,
    })?;
    Ok(Exported {
        manifest,
        signed: sig.is_some(),
    })
}

/// An archive opened: its files extracted into a private temporary folder
/// (removed when this is dropped), the pipeline read-only.
#[derive(Debug)]
pub struct Opened {
    /// The worktree the archive was opened into (a git repository holding
    /// the bundle's snapshots when there was one).
    pub worktree: PathBuf,
    /// Its `.pipeline` folder.
    pub pipeline: PathBuf,
    /// The manifest.
    pub manifest: Manifest,
    /// The manifest's bytes (what its signature covers).
    pub manifest_bytes: Vec<u8>,
    /// The manifest's signature, when there is one.
    pub signature: Option<String>,
    /// What does not match the manifest (files missing, extra, changed),
    /// and a bundle git refused.
    pub problems: Vec<(String, String)>,
    dir: tempfile::TempDir,
}

impl Drop for Opened {
    fn drop(&mut self) {
        // Give the write bits back so the temp folder can be removed.
        set_tree_mode(self.dir.path(), true);
    }
}

fn set_tree_mode(root: &Path, writable: bool) {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let dir_mode = if writable { 0o700 } else { 0o500 };
        let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(dir_mode));
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                let m = if writable { 0o600 } else { 0o400 };
                let _ = std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(m));
            }
        }
    }
}

/// The path inside the top folder an entry names, or why it is refused.
fn inside(raw: &Path) -> Result<PathBuf, ArchiveError> {
    let shown = raw.to_string_lossy().into_owned();
    let mut parts = raw.components();
    match parts.next() {
        Some(Component::Normal(t)) if t == TOP => {}
        Some(Component::RootDir | Component::Prefix(_)) => {
            return Err(ArchiveError::Escapes {
                path: shown,
                why: "an absolute path",
            });
        }
        _ => {
            return Err(ArchiveError::Escapes {
                path: shown,
                why: "not under loopwatch-export/",
            });
        }
    }
    let mut rel = PathBuf::new();
    for c in parts {
        match c {
            Component::Normal(n) => rel.push(n),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(ArchiveError::Escapes {
                    path: shown,
                    why: "a `..` component",
                });
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(ArchiveError::Escapes {
                    path: shown,
                    why: "an absolute path",
                });
            }
        }
    }
    Ok(rel)
}

/// Opens the archive at `path`: extracts it as the module says, checks
/// every file against the manifest, fetches the bundle. An archive that
/// cannot be read safely is an error; what merely differs from its
/// manifest is in `problems`.
pub fn open(path: &Path) -> Result<Opened, ArchiveError> {
    let file = crate::util::open_regular(path).map_err(io("open", path))?;
    let dir = tempfile::Builder::new()
        .prefix("loopwatch-export-")
        .tempdir()
        .map_err(io("create a temp folder for", path))?;
    let root = dir.path().join("files");
    std::fs::create_dir(&root).map_err(io("create", &root))?;
    let mut archive = tar::Archive::new(std::io::BufReader::new(file));
    let entries = archive.entries().map_err(|e| ArchiveError::Truncated {
        entry: 0,
        why: e.to_string(),
    })?;
    let mut seen = std::collections::BTreeMap::<PathBuf, String>::new();
    for (i, entry) in entries.enumerate() {
        let n = i + 1;
        let cut = |e: std::io::Error| ArchiveError::Truncated {
            entry: n,
            why: e.to_string(),
        };
        let mut entry = entry.map_err(cut)?;
        let raw = entry.path().map_err(cut)?.into_owned();
        let shown = raw.to_string_lossy().into_owned();
        let kind = entry.header().entry_type();
        let rel = inside(&raw)?;
        match kind {
            tar::EntryType::Directory => {
                if !rel.as_os_str().is_empty() {
                    std::fs::create_dir_all(root.join(&rel)).map_err(io("create", &rel))?;
                }
                continue;
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {}
            other => {
                let kind = match other {
                    tar::EntryType::Symlink => "symbolic link".to_string(),
                    tar::EntryType::Link => "hard link".to_string(),
                    tar::EntryType::Char | tar::EntryType::Block => "device".to_string(),
                    tar::EntryType::Fifo => "FIFO".to_string(),
                    o => format!("{o:?} entry"),
                };
                return Err(ArchiveError::NotAFile { path: shown, kind });
            }
        }
        if rel.as_os_str().is_empty() {
            return Err(ArchiveError::NotAFile {
                path: shown,
                kind: "file named as the top folder".into(),
            });
        }
        let size = entry.header().size().map_err(cut)?;
        if size > MAX_ENTRY_BYTES {
            return Err(ArchiveError::TooLarge { path: shown });
        }
        let mut bytes = Vec::with_capacity(size.min(64 << 20) as usize);
        Read::by_ref(&mut entry)
            .take(MAX_ENTRY_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(cut)?;
        if bytes.len() as u64 != size {
            return Err(cut(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{shown}: {} of {size} bytes", bytes.len()),
            )));
        }
        let target = root.join(&rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => ArchiveError::Duplicate {
                    path: shown.clone(),
                },
                _ => io("write", &target)(e),
            })?;
        f.write_all(&bytes).map_err(io("write", &target))?;
        seen.insert(rel, crate::util::sha256_tagged(&bytes));
    }
    let manifest_bytes =
        std::fs::read(root.join(MANIFEST)).map_err(|_| ArchiveError::NoManifest)?;
    let manifest: Manifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| ArchiveError::BadManifest(e.to_string()))?;
    if manifest.format != TOP || manifest.version != 1 {
        return Err(ArchiveError::BadManifest(format!(
            "format {:?} version {}, not {TOP} 1",
            manifest.format, manifest.version
        )));
    }
    let signature = std::fs::read_to_string(root.join(MANIFEST_SIG)).ok();
    let mut problems = Vec::new();
    let mut listed = std::collections::BTreeSet::new();
    for f in &manifest.files {
        let rel = match inside(&Path::new(TOP).join(&f.path)) {
            Ok(r) => r,
            Err(e) => {
                problems.push((MANIFEST.to_string(), e.to_string()));
                continue;
            }
        };
        listed.insert(rel.clone());
        match seen.get(&rel) {
            None => problems.push((
                format!("archive {}", f.path),
                "listed in the manifest but not in the archive (truncated, or removed)".into(),
            )),
            Some(h) if *h != f.sha256 => problems.push((
                format!("archive {}", f.path),
                format!("changed: its hash is {h}, the manifest says {}", f.sha256),
            )),
            Some(_) => {}
        }
    }
    for rel in seen.keys() {
        let name = rel.to_string_lossy();
        if !listed.contains(rel) && name != MANIFEST && name != MANIFEST_SIG {
            problems.push((
                format!("archive {name}"),
                "not in the manifest (added after the export)".into(),
            ));
        }
    }
    // The layout replay and report expect: <worktree>/.pipeline.
    let worktree = dir.path().join("worktree");
    std::fs::create_dir(&worktree).map_err(io("create", &worktree))?;
    let pipeline = worktree.join(".pipeline");
    let from = root.join("pipeline");
    if from.is_dir() {
        std::fs::rename(&from, &pipeline).map_err(io("move", &from))?;
    } else {
        std::fs::create_dir(&pipeline).map_err(io("create", &pipeline))?;
    }
    let bundle = root.join(BUNDLE);
    if bundle.is_file() {
        if let Err(e) = crate::code::unbundle_into(&worktree, &bundle) {
            problems.push((format!("archive {BUNDLE}"), e.to_string()));
        }
    } else if let Err(e) = crate::code::git_stdout(&worktree, &["init", "-q"]) {
        problems.push((format!("archive {BUNDLE}"), e.to_string()));
    }
    set_tree_mode(&pipeline, false);
    Ok(Opened {
        worktree,
        pipeline,
        manifest,
        manifest_bytes,
        signature,
        problems,
        dir,
    })
}

/// True when `path` is a file (an archive), not a folder.
pub fn is_archive(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

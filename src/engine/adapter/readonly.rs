//! The read-only roles' build folder. A verifier must run the project's
//! test command, and a test command writes (Cargo's `target/`, temporary
//! files, caches); a read-only role may not write in the worktree. So its
//! CLI is given one writable folder outside the worktree, and the test
//! command's usual output places are pointed into it through the
//! environment. Codex's sandbox is opened for that folder alone; Claude
//! Code's Bash may run only the test command.
//!
//! The folder is per worktree and kept between dispatches, so the second
//! verifier of a run reuses the first one's build:
//! `$XDG_CACHE_HOME/loopwatch/build/<worktree name>-<hash>` (or
//! `~/.cache/…`, or the system temporary folder without a home).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The build folder of `worktree`.
pub fn build_dir(worktree: &Path) -> PathBuf {
    let base = crate::util::xdg_dir("XDG_CACHE_HOME", ".cache")
        .filter(|p| p.is_absolute())
        .unwrap_or_else(std::env::temp_dir);
    build_dir_in(&base, worktree)
}

/// [`build_dir`] under the cache folder `base`.
pub fn build_dir_in(base: &Path, worktree: &Path) -> PathBuf {
    let abs = std::path::absolute(worktree).unwrap_or_else(|_| worktree.to_path_buf());
    let hash = Sha256::digest(abs.as_os_str().as_encoded_bytes());
    let hex: String = hash.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let name: String = abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    base.join("loopwatch")
        .join("build")
        .join(format!("{name}-{hex}"))
}

/// The folders to create before the agent starts (the sandbox is opened
/// for folders that exist).
pub fn build_folders(dir: &Path) -> Vec<PathBuf> {
    vec![dir.to_path_buf(), dir.join("tmp")]
}

/// The environment that points a test command's output into `dir`:
/// `LOOPWATCH_BUILD_DIR` itself (for a test command that writes somewhere
/// of its own), Cargo's target folder, the temporary folder, and the
/// caches of Go, Python and npm.
pub fn build_env(dir: &Path) -> Vec<(String, String)> {
    let at = |sub: &str| dir.join(sub).display().to_string();
    vec![
        ("LOOPWATCH_BUILD_DIR".into(), dir.display().to_string()),
        ("CARGO_TARGET_DIR".into(), at("cargo-target")),
        ("TMPDIR".into(), at("tmp")),
        ("GOCACHE".into(), at("go-build")),
        ("PYTHONPYCACHEPREFIX".into(), at("pycache")),
        ("npm_config_cache".into(), at("npm")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_is_outside_the_worktree_and_names_it() {
        let d = build_dir_in(Path::new("/home/u/.cache"), Path::new("/w/my repo"));
        assert!(
            d.to_string_lossy()
                .starts_with("/home/u/.cache/loopwatch/build/my_repo-"),
            "{d:?}"
        );
        assert!(!d.starts_with("/w"));
        // Two worktrees of the same name do not share a folder.
        let other = build_dir_in(Path::new("/home/u/.cache"), Path::new("/x/my repo"));
        assert_ne!(d, other);
        let env = build_env(Path::new("/b"));
        assert!(env.contains(&("CARGO_TARGET_DIR".into(), "/b/cargo-target".into())));
        assert!(env.contains(&("TMPDIR".into(), "/b/tmp".into())));
        assert_eq!(build_folders(Path::new("/b"))[1], Path::new("/b/tmp"));
    }
}

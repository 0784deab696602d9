//! SSH keys made with the real ssh-keygen, and the allowed-signers file
//! (git's format) that `loopwatch verify` and the decision policy read.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A new ed25519 key `dir/name` (no passphrase, commented `name`); its path.
pub fn keygen(dir: &Path, name: &str) -> PathBuf {
    let key = dir.join(name);
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key)
        .status()
        .expect("ssh-keygen runs");
    assert!(st.success(), "ssh-keygen made no key {}", key.display());
    key
}

/// Writes an allowed-signers file at `path` listing each principal with
/// its key's public half, for loopwatch's namespace.
pub fn allowed_signers(path: &Path, who: &[(&str, &Path)]) {
    let mut text = String::new();
    for (principal, key) in who {
        let public = std::fs::read_to_string(key.with_extension("pub")).expect("the public key");
        text.push_str(&format!("{principal} namespaces=\"loopwatch\" {public}"));
    }
    std::fs::write(path, text).expect("write the allowed signers");
}

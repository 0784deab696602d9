//! Signatures with the SSH keys people already have, made and checked the
//! way git signs commits: `ssh-keygen -Y sign -n loopwatch` and
//! `ssh-keygen -Y verify` against an allowed-signers file (the format of
//! git's `gpg.ssh.allowedSignersFile`), run through [`crate::process`]
//! (a deadline, its own process group).
//!
//! A decision's signature is the `signature` field of its `human.decided`
//! (the armored `SSH SIGNATURE` text), over [`canonical`]: the decision's
//! gate, option, reason, author, evidence hash and note as one JSON object
//! in a fixed order. An export's signature is `MANIFEST.json.sig`, over
//! the manifest's bytes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::model::event::HumanDecision;
use crate::process::Sink;

/// The signature namespace (`-n`): a loopwatch signature can never pass
/// for a git commit's, a file's, or another program's.
pub const NAMESPACE: &str = "loopwatch";

/// How long ssh-keygen may take (a hardware key waits for a touch).
const DEADLINE: Duration = Duration::from_secs(60);

/// Why a signature could not be made or is not good.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// No key to sign with.
    #[error("no signing key: {0}")]
    NoKey(String),
    /// ssh-keygen could not run or failed.
    #[error("ssh-keygen {what}: {why}")]
    Tool {
        /// sign, verify, find-principals.
        what: &'static str,
        /// Its message.
        why: String,
    },
    /// The key that signed is not in the allowed-signers file.
    #[error("signed by a key that is not allowed ({0})")]
    NotAllowed(String),
    /// The signature does not match what it signs.
    #[error("the signature does not match ({0})")]
    Bad(String),
}

/// The armored signature a decision carries, when it carries one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature(pub String);

impl Signature {
    /// The `signature` field of a decision.
    pub fn of(d: &HumanDecision) -> Option<Signature> {
        d.extra
            .get("signature")
            .and_then(Value::as_str)
            .map(|s| Signature(s.to_string()))
    }
}

/// The bytes a decision's signature covers.
pub fn canonical(d: &HumanDecision) -> Vec<u8> {
    let mut m = Map::new();
    m.insert("signed".into(), Value::from("loopwatch decision 1"));
    m.insert("id".into(), Value::from(d.id.clone()));
    m.insert("decision".into(), Value::from(d.decision.to_string()));
    m.insert("reason".into(), Value::from(d.reason.clone()));
    m.insert("by".into(), Value::from(d.by.clone()));
    m.insert("evidenceHash".into(), Value::from(d.evidence_hash.clone()));
    m.insert(
        "note".into(),
        d.note.clone().map(Value::from).unwrap_or(Value::Null),
    );
    Value::Object(m).to_string().into_bytes()
}

/// The key to sign with: `flag`, else `LOOPWATCH_SIGNING_KEY`, else
/// `signing_key` of the person's `policy.toml`, else git's
/// `user.signingkey` when it names a file, else `~/.ssh/id_ed25519`.
pub fn signing_key(flag: Option<&Path>) -> Result<PathBuf, SignError> {
    let key = if let Some(k) = flag {
        k.to_path_buf()
    } else if let Some(k) = std::env::var_os("LOOPWATCH_SIGNING_KEY").filter(|k| !k.is_empty()) {
        PathBuf::from(k)
    } else if let Some(k) = super::policy::Policy::load_user()
        .ok()
        .and_then(|p| p.signing_key)
    {
        k
    } else if let Some(k) = git_signing_key() {
        super::policy::expand(&k)
    } else {
        super::policy::expand("~/.ssh/id_ed25519")
    };
    if !key.is_file() {
        return Err(SignError::NoKey(format!(
            "{} is not a file (pass --key, or set LOOPWATCH_SIGNING_KEY or git's user.signingkey)",
            key.display()
        )));
    }
    Ok(key)
}

/// git's `user.signingkey`, when it names a key file (not a literal
/// `key::` or an agent key).
fn git_signing_key() -> Option<String> {
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let k = crate::code::git_answer(&home, &["config", "--global", "--get", "user.signingkey"])?;
    (!k.starts_with("key::") && !k.starts_with("ssh-")).then_some(k)
}

fn ssh_keygen(
    args: &[&str],
    input: Vec<u8>,
    what: &'static str,
) -> Result<(bool, String, String), SignError> {
    let cwd = std::env::temp_dir();
    let ended = crate::process::Command::new("ssh-keygen", &cwd)
        .args(args)
        .stdin(input)
        .deadline(DEADLINE)
        .grace(Duration::from_millis(200))
        .stdout(Sink::capture(1 << 20))
        .stderr(Sink::capture(64 * 1024))
        .run()
        .map_err(|e| SignError::Tool {
            what,
            why: e.to_string(),
        })?;
    if ended.timed_out() {
        return Err(SignError::Tool {
            what,
            why: format!("no answer in {} s", DEADLINE.as_secs()),
        });
    }
    Ok((
        ended.success(),
        String::from_utf8_lossy(&ended.stdout.head).into_owned(),
        String::from_utf8_lossy(&ended.stderr.head)
            .trim()
            .to_string(),
    ))
}

/// Signs `data` with the key at `key`; the armored signature.
pub fn sign(key: &Path, data: &[u8]) -> Result<String, SignError> {
    let key_s = key.to_string_lossy();
    let (ok, out, err) = ssh_keygen(
        &["-Y", "sign", "-q", "-f", &key_s, "-n", NAMESPACE],
        data.to_vec(),
        "sign",
    )?;
    if !ok || !out.contains("BEGIN SSH SIGNATURE") {
        return Err(SignError::Tool {
            what: "sign",
            why: one_line(&err),
        });
    }
    Ok(out)
}

fn one_line(s: &str) -> String {
    let s = s.lines().take(3).collect::<Vec<_>>().join("; ");
    if s.is_empty() { "failed".into() } else { s }
}

/// A temporary folder holding `signature` in a file, and that file's path.
fn signature_file(signature: &str) -> Result<(tempfile::TempDir, PathBuf), SignError> {
    let tool = |e: std::io::Error| SignError::Tool {
        what: "find-principals",
        why: e.to_string(),
    };
    let dir = tempfile::tempdir().map_err(tool)?;
    let sig = dir.path().join("sig");
    std::fs::write(&sig, signature).map_err(tool)?;
    Ok((dir, sig))
}

/// The principals `allowed` gives the key that made the signature in `sig`.
fn principals(allowed: &Path, sig: &Path) -> Result<Vec<String>, SignError> {
    let (ok, out, err) = ssh_keygen(
        &[
            "-Y",
            "find-principals",
            "-s",
            &sig.to_string_lossy(),
            "-f",
            &allowed.to_string_lossy(),
        ],
        Vec::new(),
        "find-principals",
    )?;
    let found: Vec<String> = out
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    if !ok || found.is_empty() {
        return Err(SignError::NotAllowed(one_line(&err)));
    }
    Ok(found)
}

/// Checks that `signature` over `data` was made by a key `allowed` lists;
/// the principal it lists the key under.
pub fn verify(allowed: &Path, data: &[u8], signature: &str) -> Result<String, SignError> {
    let (_dir, sig) = signature_file(signature)?;
    let who = principals(allowed, &sig)?;
    let mut last = String::new();
    for principal in &who {
        let (ok, _, err) = ssh_keygen(
            &[
                "-Y",
                "verify",
                "-f",
                &allowed.to_string_lossy(),
                "-I",
                principal,
                "-n",
                NAMESPACE,
                "-s",
                &sig.to_string_lossy(),
            ],
            data.to_vec(),
            "verify",
        )?;
        if ok {
            return Ok(principal.clone());
        }
        last = one_line(&err);
    }
    Err(SignError::Bad(last))
}

/// Checks a decision's signature; the signer's principal.
pub fn verify_decision(
    allowed: &Path,
    d: &HumanDecision,
    s: &Signature,
) -> Result<String, SignError> {
    verify(allowed, &canonical(d), &s.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn keygen(dir: &Path, name: &str) -> PathBuf {
        let key = dir.join(name);
        let st = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
            .arg(&key)
            .status()
            .unwrap();
        assert!(st.success());
        key
    }

    fn allowed(dir: &Path, entries: &[(&str, &Path)]) -> PathBuf {
        let mut text = String::new();
        for (who, key) in entries {
            let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
            text.push_str(&format!("{who} namespaces=\"loopwatch\" {public}"));
        }
        let p = dir.join("allowed_signers");
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn a_signature_verifies_for_its_allowed_key_only() {
        let d = tempfile::tempdir().unwrap();
        let ana = keygen(d.path(), "ana");
        let bo = keygen(d.path(), "bo");
        let list = allowed(d.path(), &[("ana@example.org", &ana)]);
        let sig = sign(&ana, b"hello").unwrap();
        assert_eq!(verify(&list, b"hello", &sig).unwrap(), "ana@example.org");
        let err = verify(&list, b"hullo", &sig).unwrap_err();
        assert!(matches!(err, SignError::Bad(_)), "{err}");
        let other = sign(&bo, b"hello").unwrap();
        let err = verify(&list, b"hello", &other).unwrap_err();
        assert!(matches!(err, SignError::NotAllowed(_)), "{err}");
        assert!(matches!(
            signing_key(Some(&d.path().join("none"))),
            Err(SignError::NoKey(_))
        ));
    }
}

//! Who may decide which human gate: the decision policy, read from the
//! person's own config folder (`$XDG_CONFIG_HOME/loopwatch/policy.toml`,
//! else `~/.config/loopwatch/policy.toml`), never from the worktree the
//! agents write.
//!
//! ```toml
//! allowed_signers = "~/.config/loopwatch/allowed_signers"  # git's format
//! signing_key = "~/.ssh/id_ed25519"                       # what --sign signs with
//!
//! [gate.out-of-scope]
//! deciders = ["ana@desk", "bo@example.org"]  # user@host, or a signer's principal
//! required = 2                               # distinct people who must approve
//! signature = true                           # an SSH signature is needed
//! ```
//!
//! A kind without a `[gate.<kind>]` table keeps today's rule: anyone
//! outside the run decides alone, signed or not. With `required = n`, an
//! option that lets the change through (approve, accept, dismiss, adopt,
//! extend, retry, lift, accept-partial) is counted (`human.approved`) and
//! the gate stays open until `n` distinct people chose it; any other
//! option decides at once ("one deny decides"). A person is their
//! verified signer principal when they signed, else the account
//! `user@host` of the process (the login name of its uid: the
//! `LOOPWATCH_USER` override never counts for the policy).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::model::event::HumanDecision;
use crate::model::state::HumanGate;
use crate::model::{Decision, HumanGateKind};

/// A decision a rule of the policy refuses; each names its rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyRefusal {
    /// The policy names who may decide this kind of gate, and not this person.
    #[error("refused by the decision policy {rule} deciders: {who} may not decide this gate")]
    NotADecider {
        /// The person (account or signer).
        who: String,
        /// `<policy file> [gate.<kind>]`.
        rule: String,
    },
    /// The policy needs a signature this decision does not carry.
    #[error(
        "refused by the decision policy {rule} signature = true: sign the decision (decide --sign)"
    )]
    SignatureRequired {
        /// `<policy file> [gate.<kind>]`.
        rule: String,
    },
    /// The decision's signature is not one the policy's allowed signers accept.
    #[error("refused by the decision policy {policy} allowed_signers: {why}")]
    BadSignature {
        /// The policy file.
        policy: String,
        /// What ssh-keygen said.
        why: String,
    },
    /// The same person approving twice a gate that needs several people.
    #[error(
        "refused by the decision policy {rule} required = {required}: {id} was already approved by {who}; the other approvals must come from other people"
    )]
    AlreadyApproved {
        /// The gate.
        id: String,
        /// The person.
        who: String,
        /// People required.
        required: u32,
        /// `<policy file> [gate.<kind>]`.
        rule: String,
    },
    /// An approval choosing another option than the approvals before it.
    #[error(
        "refused by the decision policy {rule}: {id}'s approvals so far chose {first}, not {this} (deny to close it, or choose {first})"
    )]
    ApprovalDiffers {
        /// The gate.
        id: String,
        /// The option of the approvals so far.
        first: Decision,
        /// The option given.
        this: Decision,
        /// `<policy file> [gate.<kind>]`.
        rule: String,
    },
}

/// The most people a gate may require.
pub const MAX_REQUIRED: u32 = 16;

/// The rule of one kind of gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Who may decide (`None`: anyone).
    pub deciders: Option<Vec<String>>,
    /// Distinct people who must approve.
    pub required: u32,
    /// A verified SSH signature is needed.
    pub signature: bool,
}

/// The policy in force.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// The file it was read from.
    pub path: Option<PathBuf>,
    /// The allowed-signers file signatures are checked against.
    pub allowed_signers: Option<PathBuf>,
    /// The key `--sign` signs with when no `--key` is given.
    pub signing_key: Option<PathBuf>,
    /// Per kind.
    pub rules: HashMap<HumanGateKind, Rule>,
}

/// A policy file that cannot be used: file, line, key and problem.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("{}:{line}: {key}: {message}", path.display())]
pub struct PolicyError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// The key at fault.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    allowed_signers: Option<String>,
    signing_key: Option<String>,
    #[serde(default)]
    gate: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    deciders: Option<Vec<String>>,
    required: Option<i64>,
    #[serde(default)]
    signature: bool,
}

/// Who is deciding, as the policy counts people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decider {
    /// `user@host` of the process's account.
    pub account: String,
    /// The principal the allowed-signers file gives the key that signed.
    pub signer: Option<String>,
}

impl Decider {
    /// The person, for counting distinct approvals.
    pub fn identity(&self) -> String {
        match &self.signer {
            Some(s) => format!("signer {s}"),
            None => self.account.clone(),
        }
    }

    fn is(&self, name: &str) -> bool {
        self.account == name || self.signer.as_deref() == Some(name)
    }
}

/// What a decision does under a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It decides the gate.
    Decides,
    /// It is counted; `awaiting` more approvals are needed.
    Approves {
        /// Approvals still needed after this one.
        awaiting: u32,
    },
}

/// True for the options that let a change through (counted towards
/// `required`); the others decide alone.
pub fn lets_through(d: Decision) -> bool {
    matches!(
        d,
        Decision::Approve
            | Decision::Accept
            | Decision::Dismiss
            | Decision::Adopt
            | Decision::Extend
            | Decision::Retry
            | Decision::Lift
            | Decision::AcceptPartial
    )
}

/// The line of `key` inside the table starting at line `table` (1-based).
fn line_in(text: &str, table: usize, key: &str) -> usize {
    text.lines()
        .enumerate()
        .skip(table)
        .take_while(|(_, l)| !l.trim_start().starts_with('['))
        .find(|(_, l)| l.trim_start().starts_with(key))
        .map_or(table, |(i, _)| i + 1)
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.trim_start().starts_with(needle))
        .map_or(0, |i| i + 1)
}

/// `s` with a leading `~/` read as the home folder.
pub(crate) fn expand(s: &str) -> PathBuf {
    match (s.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(s),
    }
}

impl Policy {
    /// Where this user's policy file is (beside the TUI's config file).
    pub fn user_path() -> Option<PathBuf> {
        crate::util::user_config_dir_from_env().map(|d| d.join("policy.toml"))
    }

    /// This user's policy; none (every kind decided as before) when there
    /// is no file.
    pub fn load_user() -> Result<Policy, PolicyError> {
        match Policy::user_path() {
            Some(p) => Policy::load(&p),
            None => Ok(Policy::default()),
        }
    }

    /// The policy at `path`; none when the file does not exist.
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        match crate::util::read_regular(path, 1 << 20) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).map_err(|_| PolicyError {
                    path: path.to_path_buf(),
                    line: 0,
                    key: "(file)".into(),
                    message: "not UTF-8 text".into(),
                })?;
                Policy::parse(&text, path)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Policy::default()),
            Err(e) => Err(PolicyError {
                path: path.to_path_buf(),
                line: 0,
                key: "(file)".into(),
                message: format!("cannot read: {e}"),
            }),
        }
    }

    /// Parses policy text; `path` names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Policy, PolicyError> {
        let err = |line: usize, key: &str, message: String| PolicyError {
            path: path.to_path_buf(),
            line,
            key: key.to_string(),
            message,
        };
        let raw: RawPolicy = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(0, |s| {
                text[..s.start.min(text.len())].matches('\n').count() + 1
            });
            err(line, "(file)", e.message().to_string())
        })?;
        let mut rules = HashMap::new();
        for (name, value) in raw.gate {
            let table = format!("[gate.{name}]");
            let line = line_of(text, &table);
            let kind: HumanGateKind = name.parse().map_err(|e: String| err(line, &table, e))?;
            let r: RawRule = value
                .try_into()
                .map_err(|e: toml::de::Error| err(line, &table, e.message().to_string()))?;
            let required = r.required.unwrap_or(1);
            if !(1..=i64::from(MAX_REQUIRED)).contains(&required) {
                return Err(err(
                    line_in(text, line, "required"),
                    &format!("{table} required"),
                    format!("{required} is not a count of people (1 to {MAX_REQUIRED})"),
                ));
            }
            if let Some(d) = &r.deciders {
                if d.is_empty() || d.iter().any(|x| x.trim().is_empty()) {
                    return Err(err(
                        line,
                        &format!("{table} deciders"),
                        "an empty list or name: nobody could decide".into(),
                    ));
                }
                if (d.len() as i64) < required {
                    return Err(err(
                        line,
                        &format!("{table} deciders"),
                        format!("{} deciders cannot make {required} approvals", d.len()),
                    ));
                }
            }
            if r.signature && raw.allowed_signers.is_none() {
                return Err(err(
                    line,
                    &format!("{table} signature"),
                    "a signature is required but no allowed_signers file is named".into(),
                ));
            }
            rules.insert(
                kind,
                Rule {
                    deciders: r.deciders,
                    required: required as u32,
                    signature: r.signature,
                },
            );
        }
        let allowed_signers = raw.allowed_signers.as_deref().map(expand);
        if let Some(a) = &allowed_signers
            && !a.is_file()
        {
            return Err(err(
                line_of(text, "allowed_signers"),
                "allowed_signers",
                format!("{} is not a file", a.display()),
            ));
        }
        Ok(Policy {
            path: Some(path.to_path_buf()),
            allowed_signers,
            signing_key: raw.signing_key.as_deref().map(expand),
            rules,
        })
    }

    fn file(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| "the decision policy".into(), |p| p.display().to_string())
    }

    /// Who decides: the account, and the signer when the decision carries
    /// a signature this policy's allowed-signers file accepts (a signature
    /// it refuses is a refusal).
    pub fn decider(&self, d: &HumanDecision) -> Result<Decider, PolicyRefusal> {
        let account = crate::util::account_at_host();
        let signer = match (super::sign::Signature::of(d), &self.allowed_signers) {
            (Some(s), Some(allowed)) => {
                Some(super::sign::verify_decision(allowed, d, &s).map_err(|e| {
                    PolicyRefusal::BadSignature {
                        policy: self.file(),
                        why: e.to_string(),
                    }
                })?)
            }
            _ => None,
        };
        Ok(Decider { account, signer })
    }

    /// What `d`, by `who`, does to `gate` under this policy (the gate is
    /// open and `d` one of its options: the recorder checked).
    pub fn judge(
        &self,
        gate: &HumanGate,
        d: &HumanDecision,
        who: &Decider,
    ) -> Result<Outcome, PolicyRefusal> {
        let kind = gate.request.kind;
        let Some(rule) = self.rules.get(&kind) else {
            return Ok(Outcome::Decides);
        };
        let table = format!("{} [gate.{}]", self.file(), kind.as_str());
        if rule.signature && who.signer.is_none() {
            return Err(PolicyRefusal::SignatureRequired { rule: table });
        }
        if let Some(list) = &rule.deciders
            && !list.iter().any(|n| who.is(n))
        {
            return Err(PolicyRefusal::NotADecider {
                who: who.signer.clone().unwrap_or_else(|| who.account.clone()),
                rule: table,
            });
        }
        if rule.required <= 1 || !lets_through(d.decision) {
            return Ok(Outcome::Decides);
        }
        if let Some(first) = gate.approvals.first()
            && first.decision.decision != d.decision
        {
            return Err(PolicyRefusal::ApprovalDiffers {
                id: d.id.clone(),
                first: first.decision.decision,
                this: d.decision,
                rule: table,
            });
        }
        let me = who.identity();
        if gate.approvals.iter().any(|a| approver(&a.decision) == me) {
            return Err(PolicyRefusal::AlreadyApproved {
                id: d.id.clone(),
                who: me,
                required: rule.required,
                rule: table,
            });
        }
        let have = gate.approvals.len() as u32 + 1;
        Ok(if have >= rule.required {
            Outcome::Decides
        } else {
            Outcome::Approves {
                awaiting: rule.required - have,
            }
        })
    }

    /// Who has approved `gate` so far and who is still awaited, for the
    /// dialog and `status` (`None` when no rule asks for more than one).
    pub fn awaiting(&self, gate: &HumanGate) -> Option<String> {
        let rule = self.rules.get(&gate.request.kind)?;
        if rule.required <= 1 || !gate.is_open() {
            return None;
        }
        let done: Vec<String> = gate
            .approvals
            .iter()
            .map(|a| approver(&a.decision))
            .collect();
        let left = rule.required.saturating_sub(done.len() as u32);
        let mut s = format!("{} of {} approvals", done.len(), rule.required);
        if !done.is_empty() {
            s.push_str(&format!(" (by {})", done.join(", ")));
        }
        s.push_str(&format!("; {left} more awaited"));
        if let Some(list) = &rule.deciders {
            let others: Vec<&str> = list
                .iter()
                .map(String::as_str)
                .filter(|n| {
                    !done
                        .iter()
                        .any(|d| d == n || d.strip_prefix("signer ") == Some(n))
                })
                .collect();
            s.push_str(&format!(" from {}", others.join(", ")));
        }
        Some(s)
    }
}

/// The line the decision dialog and `status` show for a gate with
/// approvals or a rule needing several people: who approved so far and
/// who is still awaited (`None` for a gate decided as before).
pub fn approvals_line(gate: &HumanGate, policy: Option<&Policy>) -> Option<String> {
    if let Some(line) = policy.and_then(|p| p.awaiting(gate)) {
        return Some(line);
    }
    if gate.approvals.is_empty() {
        return None;
    }
    let by: Vec<String> = gate
        .approvals
        .iter()
        .map(|a| approver(&a.decision))
        .collect();
    Some(format!("approved so far by {}", by.join(", ")))
}

/// The person an approval counted (its `approver` field, else its `by`).
pub fn approver(d: &HumanDecision) -> String {
    d.extra
        .get("approver")
        .and_then(|v| v.as_str())
        .map_or_else(|| d.by.clone(), String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Policy, PolicyError> {
        Policy::parse(text, Path::new("/home/ana/.config/loopwatch/policy.toml"))
    }

    #[test]
    fn a_policy_reads_per_kind_rules() {
        let p = parse(
            "[gate.out-of-scope]\ndeciders = [\"ana@desk\", \"bo@desk\"]\nrequired = 2\n\n[gate.unverifiable]\nrequired = 1\n",
        )
        .unwrap();
        let r = &p.rules[&HumanGateKind::OutOfScope];
        assert_eq!(r.required, 2);
        assert!(!r.signature);
        assert_eq!(p.rules[&HumanGateKind::Unverifiable].deciders, None);
    }

    #[test]
    fn an_unknown_kind_a_bad_count_or_key_name_file_line_and_key() {
        let e = parse("# policy\n\n[gate.out-of-skope]\nrequired = 2\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(e.key, "[gate.out-of-skope]");
        assert!(e.to_string().starts_with("/home/ana/.config/loopwatch/policy.toml:3: [gate.out-of-skope]: unknown human gate kind"), "{e}");
        let e = parse("[gate.out-of-scope]\nrequired = 0\n").unwrap_err();
        assert_eq!(
            (e.line, e.key.as_str()),
            (2, "[gate.out-of-scope] required")
        );
        assert!(e.message.contains("0 is not a count of people"), "{e}");
        let e = parse("[gate.out-of-scope]\nrequired = 3\ndeciders = [\"a@b\"]\n").unwrap_err();
        assert!(
            e.message.contains("1 deciders cannot make 3 approvals"),
            "{e}"
        );
        let e = parse("[gate.out-of-scope]\nrequird = 2\n").unwrap_err();
        assert!(e.message.contains("unknown field `requird`"), "{e}");
        let e = parse("[gate.out-of-scope]\nsignature = true\n").unwrap_err();
        assert!(e.message.contains("no allowed_signers"), "{e}");
        let e = parse("[gate.out-of-scope]\nrequired = \"two\"\n").unwrap_err();
        assert_eq!(e.line, 1);
    }
}

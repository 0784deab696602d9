//! Budgets (`[budget]` of `loopwatch.toml`): what a run may spend, in US
//! dollars, tokens and agent time, for the run and per role; what it spent,
//! summed from `agent.finished`; and the first limit the next dispatch
//! would start at or past.
//!
//! Spending is read from the journal only: a dispatch with no reported
//! cost is unknown (`$?`), never zero, so a dollar limit is a floor of what
//! was spent when some dispatch reported none. A limit a person raised
//! (`raise` on a `budget` gate) rises by its configured amount once per
//! decision: the limit in force is the configured one times one plus the
//! raises of its key.

use std::collections::BTreeMap;
use std::time::Duration;

use super::event::AgentRole;
use super::kinds::Effect;
use super::state::State;
use super::types::HumanGateKind;

/// The limits of one scope (the run, or one role).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    /// US dollars.
    pub usd: Option<f64>,
    /// Tokens, in and out.
    pub tokens: Option<u64>,
    /// Agent time: the durations of the dispatches, summed.
    pub wall: Option<Duration>,
}

impl Limits {
    /// True when no limit is set.
    pub fn is_empty(&self) -> bool {
        self.usd.is_none() && self.tokens.is_none() && self.wall.is_none()
    }
}

/// `[budget]`: the run's limits, each role's, and whether a dispatch under
/// way is stopped when a limit is crossed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Budget {
    /// `[budget] usd / tokens / wall`.
    pub run: Limits,
    /// `[budget.<role>]`.
    pub roles: BTreeMap<AgentRole, Limits>,
    /// `[budget] hard`: a dispatch under way is stopped at the agent-time
    /// limit (dollars and tokens are only known when a dispatch ends).
    pub hard: bool,
}

/// What a limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Measure {
    /// US dollars.
    Usd,
    /// Tokens.
    Tokens,
    /// Agent time.
    Wall,
}

impl Measure {
    /// The key in `[budget]`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What a set of dispatches spent.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    /// Dollars of the dispatches that reported a cost.
    pub usd: f64,
    /// Dispatches that reported no cost (unknown, not zero).
    pub unpriced: u32,
    /// Tokens in and out.
    pub tokens: u64,
    /// Agent time.
    pub wall: Duration,
}

impl Spent {
    /// What the finished dispatches of `role` (every role: `None`) spent.
    pub fn of(s: &State, role: Option<AgentRole>) -> Spent {
        let mut out = Spent::default();
        for d in &s.agents {
            if role.is_some_and(|r| r != d.started.role) {
                continue;
            }
            let Some(f) = &d.finished else { continue };
            match f.cost_usd {
                Some(c) if c.is_finite() && c >= 0.0 => out.usd += c,
                _ => out.unpriced += 1,
            }
            out.tokens = out
                .tokens
                .saturating_add(f.tokens_in.unwrap_or(0))
                .saturating_add(f.tokens_out.unwrap_or(0));
            out.wall += Duration::from_millis(f.duration_ms);
        }
        out
    }

    /// `$1.2000` (`$1.2000+?` when some dispatch reported no cost, `$?`
    /// when none reported one).
    pub fn usd_text(&self) -> String {
        if self.unpriced == 0 {
            format!("${:.4}", self.usd)
        } else if self.usd > 0.0 {
            format!("${:.4}+?", self.usd)
        } else {
            "$?".into()
        }
    }

    /// The amount of `m` in words (`$2.1000`, `$?`, `12000 tokens`, `1m 30s`).
    fn words(&self, m: Measure) -> String {
        match m {
            Measure::Usd => self.usd_text(),
            _ => words(m, self.amount(m)),
        }
    }

    /// The amount of `m`, in the units of its limit.
    fn amount(&self, m: Measure) -> f64 {
        match m {
            Measure::Usd => self.usd,
            Measure::Tokens => self.tokens as f64,
            Measure::Wall => self.wall.as_secs_f64(),
        }
    }
}

/// One limit the next dispatch would start at or past.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    /// The key: `usd`, `tokens`, `wall`, or `<role>.usd`…
    pub key: String,
    /// The role of a per-role limit.
    pub role: Option<AgentRole>,
    /// What it counts.
    pub measure: Measure,
    /// What was spent, in words (`$2.1000`, `$?`, `12000 tokens`, `1m 30s`).
    pub spent: String,
    /// The limit in force, in words.
    pub limit: String,
    /// The limit as configured, in words (what `raise` adds).
    pub step: String,
    /// Times a person raised it.
    pub raises: u32,
}

impl Crossing {
    /// One line: `budget developer.usd: spent $2.1000 of $2.0000`.
    pub fn summary(&self) -> String {
        format!(
            "budget {}: spent {} of {}",
            self.key, self.spent, self.limit
        )
    }
}

/// The key of a limit: `usd`, or `developer.usd` for a role's.
pub fn key(role: Option<AgentRole>, m: Measure) -> String {
    match role {
        Some(r) => format!("{r}.{}", m.as_str()),
        None => m.as_str().to_string(),
    }
}

/// Times a person raised the limit `key` (`raise` decided on a `budget`
/// gate whose subject is the key).
pub fn raises(s: &State, key: &str) -> u32 {
    let n = s
        .human_gates
        .iter()
        .filter(|g| {
            g.request.kind == HumanGateKind::Budget
                && g.request.subject == key
                && g.effect() == Some(Effect::RaiseBudget)
        })
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The limit in force: the configured one, once more per raise.
fn in_force(configured: f64, raises: u32) -> f64 {
    configured * (1.0 + f64::from(raises))
}

fn words(m: Measure, amount: f64) -> String {
    match m {
        Measure::Usd => format!("${amount:.4}"),
        Measure::Tokens => format!("{} tokens", amount.round() as u64),
        Measure::Wall => {
            let secs = amount.round() as u64;
            match (secs / 3600, (secs % 3600) / 60, secs % 60) {
                (0, 0, s) => format!("{s}s"),
                (0, m, s) => format!("{m}m {s}s"),
                (h, m, _) => format!("{h}h {m}m"),
            }
        }
    }
}

impl Budget {
    /// True when no limit is set anywhere.
    pub fn is_empty(&self) -> bool {
        self.run.is_empty() && self.roles.values().all(Limits::is_empty)
    }

    /// Every limit: its role (`None`: the run's), what it counts, its
    /// configured amount.
    pub fn limits(&self) -> Vec<(Option<AgentRole>, Measure, f64)> {
        let mut out = Vec::new();
        let mut push = |role: Option<AgentRole>, l: &Limits| {
            if let Some(u) = l.usd {
                out.push((role, Measure::Usd, u));
            }
            if let Some(t) = l.tokens {
                out.push((role, Measure::Tokens, t as f64));
            }
            if let Some(w) = l.wall {
                out.push((role, Measure::Wall, w.as_secs_f64()));
            }
        };
        push(None, &self.run);
        for (r, l) in &self.roles {
            push(Some(*r), l);
        }
        out
    }

    /// The first limit a dispatch of one of `roles` would start at or past
    /// (the run's limits, then those of the roles), given the state.
    pub fn crossed(&self, s: &State, roles: &[AgentRole]) -> Option<Crossing> {
        self.limits()
            .into_iter()
            .filter(|(role, _, _)| role.is_none_or(|r| roles.contains(&r)))
            .find_map(|(role, m, configured)| {
                let k = key(role, m);
                let n = raises(s, &k);
                let limit = in_force(configured, n);
                let spent = Spent::of(s, role);
                (spent.amount(m) >= limit).then(|| Crossing {
                    spent: spent.words(m),
                    limit: words(m, limit),
                    step: words(m, configured),
                    key: k,
                    role,
                    measure: m,
                    raises: n,
                })
            })
    }

    /// The agent time a dispatch of `role` may still use before a limit
    /// (`None`: no agent-time limit applies).
    pub fn wall_left(&self, s: &State, role: AgentRole) -> Option<Duration> {
        self.left(s, role, Measure::Wall)
            .map(Duration::from_secs_f64)
    }

    /// The dollars a dispatch of `role` may still spend before a dollar
    /// limit (`None`: none applies).
    pub fn usd_left(&self, s: &State, role: AgentRole) -> Option<f64> {
        self.left(s, role, Measure::Usd)
    }

    /// What a dispatch of `role` may still use of `measure` before the
    /// tightest of its limits, in their units (`None`: none applies).
    fn left(&self, s: &State, role: AgentRole, measure: Measure) -> Option<f64> {
        self.limits()
            .into_iter()
            .filter(|(r, m, _)| *m == measure && r.is_none_or(|r| r == role))
            .map(|(r, m, configured)| {
                let limit = in_force(configured, raises(s, &key(r, m)));
                (limit - Spent::of(s, r).amount(m)).max(0.0)
            })
            .reduce(f64::min)
    }

    /// `spent / limit` of each limit, for the header and the Gates tab:
    /// `usd $1.2000 / $5.0000`.
    pub fn lines(&self, s: &State) -> Vec<String> {
        self.limits()
            .into_iter()
            .map(|(role, m, configured)| {
                let k = key(role, m);
                let limit = in_force(configured, raises(s, &k));
                let spent = Spent::of(s, role).words(m);
                format!("{k} {spent} / {}", words(m, limit))
            })
            .collect()
    }
}

/// The budget's limits as `run.started` records them (the TUI and the
/// reports read them from the journal): `{"usd": 5.0, "developer.usd": 2.0,
/// "wall": 3600, "hard": false}` (agent time in seconds).
pub fn to_json(b: &Budget) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for (role, measure, amount) in b.limits() {
        m.insert(key(role, measure), serde_json::json!(amount));
    }
    if b.hard {
        m.insert("hard".into(), serde_json::Value::Bool(true));
    }
    serde_json::Value::Object(m)
}

/// The budget recorded by [`to_json`] (keys it does not know are left out).
pub fn from_json(v: &serde_json::Value) -> Budget {
    let mut b = Budget::default();
    let Some(m) = v.as_object() else { return b };
    for (k, val) in m {
        if k == "hard" {
            b.hard = val.as_bool().unwrap_or(false);
            continue;
        }
        let Some(amount) = val.as_f64().filter(|a| a.is_finite() && *a > 0.0) else {
            continue;
        };
        let (role, measure) = match k.rsplit_once('.') {
            Some((r, m)) => (r.parse::<AgentRole>().ok(), m),
            None => (None, k.as_str()),
        };
        if k.contains('.') && role.is_none() {
            continue;
        }
        let limits = match role {
            Some(r) => b.roles.entry(r).or_default(),
            None => &mut b.run,
        };
        match measure {
            "usd" => limits.usd = Some(amount),
            "tokens" => limits.tokens = Some(amount as u64),
            "wall" => limits.wall = Some(Duration::from_secs_f64(amount)),
            _ => {}
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_journal::state;

    fn dispatch(n: u32, role: &str, cost: Option<f64>, tokens: u64, ms: u64) -> [String; 2] {
        let cost = cost.map_or("null".to_string(), |c| c.to_string());
        [
            format!(
                r#"{{"type":"agent.started","dispatch":{n},"role":"{role}","iteration":1,"adapter":"generic","pid":1,"pgid":1,"inputSha256":"sha256:0","log":"agents/x.log"}}"#
            ),
            format!(
                r#"{{"type":"agent.finished","dispatch":{n},"role":"{role}","exitCode":0,"durationMs":{ms},"tokensIn":{tokens},"tokensOut":0,"costUsd":{cost}}}"#
            ),
        ]
    }

    #[test]
    fn spending_is_summed_and_an_unknown_cost_is_never_zero() {
        let mut lines =
            vec![r#"{"type":"run.started","run":{"id":"r","engine":true}}"#.to_string()];
        lines.extend(dispatch(1, "developer", Some(1.5), 100, 2000));
        lines.extend(dispatch(2, "verifier", None, 50, 1000));
        let s = state(&lines);
        let all = Spent::of(&s, None);
        assert_eq!((all.tokens, all.unpriced), (150, 1));
        assert_eq!(all.usd_text(), "$1.5000+?");
        let v = Spent::of(&s, Some(AgentRole::Verifier));
        assert_eq!(v.usd_text(), "$?");
        assert_eq!(v.wall, Duration::from_secs(1));
        let b = Budget {
            run: Limits {
                usd: Some(1.5),
                ..Limits::default()
            },
            roles: BTreeMap::from([(
                AgentRole::Verifier,
                Limits {
                    tokens: Some(40),
                    ..Limits::default()
                },
            )]),
            hard: false,
        };
        // At the limit is past it.
        let c = b.crossed(&s, &[AgentRole::Developer]).unwrap();
        assert_eq!(c.summary(), "budget usd: spent $1.5000+? of $1.5000");
        assert_eq!(
            b.lines(&s),
            [
                "usd $1.5000+? / $1.5000",
                "verifier.tokens 50 tokens / 40 tokens"
            ]
        );
        assert_eq!(from_json(&to_json(&b)), b);
    }

    #[test]
    fn a_raise_adds_the_configured_amount_once_per_decision() {
        let mut lines =
            vec![r#"{"type":"run.started","run":{"id":"r","engine":true}}"#.to_string()];
        lines.extend(dispatch(1, "developer", Some(2.0), 0, 10));
        lines.push(r#"{"type":"human.requested","id":"hg-1-budget-1","kind":"budget","iteration":1,"subject":"developer.usd","summary":"s","options":["raise","stop"]}"#.into());
        lines.push(r#"{"type":"human.decided","id":"hg-1-budget-1","decision":"raise","by":"t","reason":"r"}"#.into());
        let s = state(&lines);
        let b = Budget {
            roles: BTreeMap::from([(
                AgentRole::Developer,
                Limits {
                    usd: Some(1.5),
                    ..Limits::default()
                },
            )]),
            ..Budget::default()
        };
        assert_eq!(raises(&s, "developer.usd"), 1);
        assert_eq!(b.crossed(&s, &[AgentRole::Developer]), None);
        assert_eq!(b.usd_left(&s, AgentRole::Developer), Some(1.0));
        assert_eq!(b.usd_left(&s, AgentRole::Verifier), None);
        assert_eq!(b.lines(&s), ["developer.usd $2.0000 / $3.0000"]);
    }
}

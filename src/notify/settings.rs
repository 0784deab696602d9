//! `[notify]` of the config file: the terminal notification, the webhook,
//! and when to send (`delay`, `remind`); and [`UserSettings`], the tables
//! of the user's config file that the TUI and the headless commands share.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::webhook::{Webhook, WebhookFormat};
use crate::model::HumanGateKind;
use crate::model::event::{ExpiryRule, expiry_table, parse_duration};

/// The terminal notification written beside the bell when a gate opens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TerminalNotice {
    /// `ESC ] 9 ; text BEL` (iTerm2, Windows Terminal, WezTerm, kitty, foot…).
    #[default]
    Osc9,
    /// `ESC ] 777 ; notify ; title ; text BEL` (rxvt-unicode, VTE terminals).
    Osc777,
    /// None.
    Off,
}

/// How long a webhook may take, unless configured.
pub const DEFAULT_WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// The settings in force.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NotifySettings {
    /// The terminal notification.
    pub terminal: TerminalNotice,
    /// Where to POST the gate, if anywhere.
    pub webhook: Option<Webhook>,
    /// Send only when the gate is still open this long after it opened.
    pub delay: Duration,
    /// Send again every this long while the gate stays open.
    pub remind: Option<Duration>,
}

/// `[notify]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNotify {
    terminal: Option<TerminalNotice>,
    webhook: Option<String>,
    format: Option<WebhookFormat>,
    timeout: Option<String>,
    delay: Option<String>,
    remind: Option<String>,
}

impl RawNotify {
    /// The settings, or what is wrong (naming the setting).
    pub fn resolve(self) -> Result<NotifySettings, String> {
        let dur = |name: &str, v: Option<String>| -> Result<Option<Duration>, String> {
            v.map(|s| parse_duration(&s).map_err(|e| format!("[notify] {name}: {e}")))
                .transpose()
        };
        let timeout = dur("timeout", self.timeout)?.unwrap_or(DEFAULT_WEBHOOK_TIMEOUT);
        if timeout.is_zero() {
            return Err("[notify] timeout: must be longer than 0".into());
        }
        let remind = dur("remind", self.remind)?;
        if remind.is_some_and(|r| r.is_zero()) {
            return Err(
                "[notify] remind: must be longer than 0 (leave it out for no reminder)".into(),
            );
        }
        let webhook = match self.webhook.filter(|u| !u.trim().is_empty()) {
            Some(url) => Some(
                Webhook::new(&url, self.format.unwrap_or_default(), timeout)
                    .map_err(|e| format!("[notify] webhook: {e}"))?,
            ),
            None => None,
        };
        Ok(NotifySettings {
            terminal: self.terminal.unwrap_or_default(),
            webhook,
            delay: dur("delay", self.delay)?.unwrap_or_default(),
            remind,
        })
    }
}

/// Why the user's config file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Not TOML, or a setting of the wrong type.
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line (0 when unknown).
        line: usize,
        /// 1-based column (0 when unknown).
        column: usize,
        /// What was expected.
        message: String,
    },
}

impl ConfigError {
    /// A problem at the line `text` starts with `key` on, column 1.
    pub fn at_key(text: &str, path: &Path, key: &str, message: String) -> Self {
        let line = text
            .lines()
            .position(|l| l.trim_start().starts_with(key))
            .map_or(0, |i| i + 1);
        ConfigError::Parse {
            path: path.to_path_buf(),
            line,
            column: 1,
            message,
        }
    }

    /// TOML that does not parse, or a setting of the wrong type.
    pub fn toml(text: &str, path: &Path, e: &toml::de::Error) -> Self {
        let (line, column) = e.span().map_or((0, 0), |s| {
            let before = &text[..s.start.min(text.len())];
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
            (before.matches('\n').count() + 1, column + 1)
        });
        ConfigError::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message: e.message().to_string(),
        }
    }
}

/// The tables of the user's config file (`config.toml`) read by every
/// command, the TUI and the headless ones alike: the command run when a
/// human gate opens, `[notify]` and `[expiry.<kind>]`.
#[derive(Debug, Clone, Default)]
pub struct UserSettings {
    /// Shell command run when a new human gate opens.
    pub on_human_gate: Option<String>,
    /// `[notify]`.
    pub notify: NotifySettings,
    /// Per kind of human gate, when it expires and what then applies; a
    /// kind not listed never expires.
    pub expiry: HashMap<HumanGateKind, ExpiryRule>,
}

/// The shared tables as written (the rest of the file is the TUI's).
#[derive(Debug, Deserialize)]
struct RawUser {
    on_human_gate: Option<String>,
    notify: Option<RawNotify>,
    #[serde(default)]
    expiry: BTreeMap<String, RawExpiry>,
}

/// `[expiry.<kind>]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpiry {
    after: String,
    action: crate::model::Decision,
}

impl UserSettings {
    /// The top-level keys read here.
    pub const KEYS: [&str; 3] = ["on_human_gate", "notify", "expiry"];

    /// Where the file is: `$XDG_CONFIG_HOME/loopwatch/config.toml`, else
    /// `$HOME/.config/loopwatch/config.toml`.
    pub fn path(xdg_config_home: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
        crate::util::user_config_dir(xdg_config_home, home).map(|d| d.join("config.toml"))
    }

    /// Where this user's file is, from the environment (`None` when
    /// neither `XDG_CONFIG_HOME` nor `HOME` is set).
    pub fn user_path() -> Option<PathBuf> {
        crate::util::user_config_dir_from_env().map(|d| d.join("config.toml"))
    }

    /// The text of the file at `path`; `None` when there is none.
    pub fn read(path: &Path) -> Result<Option<String>, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// This user's settings; the defaults when there is no file.
    pub fn load_user() -> Result<UserSettings, ConfigError> {
        match Self::user_path().map(|p| Self::read(&p).map(|t| (t, p))) {
            Some(Ok((Some(text), path))) => Self::parse(&text, &path),
            Some(Err(e)) => Err(e),
            _ => Ok(UserSettings::default()),
        }
    }

    /// Reads the shared tables of config text; `path` only names the file
    /// in errors.
    pub fn parse(text: &str, path: &Path) -> Result<UserSettings, ConfigError> {
        let raw: RawUser = toml::from_str(text).map_err(|e| ConfigError::toml(text, path, &e))?;
        let mut expiry = HashMap::new();
        for (kind, rule) in &raw.expiry {
            let (k, r) = expiry_table(kind, &rule.after, rule.action.as_str()).map_err(|e| {
                let head = format!("[expiry.{kind}]");
                ConfigError::at_key(text, path, &head, format!("{head}: {e}"))
            })?;
            expiry.insert(k, r);
        }
        let notify = raw
            .notify
            .unwrap_or_default()
            .resolve()
            .map_err(|m| ConfigError::at_key(text, path, "[notify]", m))?;
        Ok(UserSettings {
            on_human_gate: raw.on_human_gate.filter(|c| !c.trim().is_empty()),
            notify,
            expiry,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_tables_are_read_and_the_rest_left_to_the_tui() {
        let text = "theme = 3\non_human_gate = \"x\"\n[keys]\nquit = 1\n\
                    [notify]\ndelay = \"1h 30m\"\n[expiry.cap-reached]\nafter = \"2d\"\naction = \"abort\"\n";
        let u = UserSettings::parse(text, Path::new("c.toml")).unwrap();
        assert_eq!(u.on_human_gate.as_deref(), Some("x"));
        assert_eq!(u.notify.delay, Duration::from_secs(5400));
        assert_eq!(
            u.expiry[&HumanGateKind::CapReached].seconds(),
            Some(172_800)
        );
        let bad = "\n[notify]\nremind = \"500ms\"\n";
        let e = UserSettings::parse(bad, Path::new("c.toml")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "c.toml:2:1: [notify] remind: '500ms' is not a duration (expected e.g. \"90s\", \"30m\", \"1h30m\", \"2d\")"
        );
    }
}

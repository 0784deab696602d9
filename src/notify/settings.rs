//! `[notify]` of the config file: the terminal notification, the webhook,
//! and when to send (`delay`, `remind`).

use std::time::Duration;

use serde::Deserialize;

use super::webhook::{Webhook, WebhookFormat};
use crate::model::event::parse_duration;

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

//! The config file: keymap, theme, bell, the command run when a human gate
//! opens, notifications (`[notify]`), expiry per kind (`[expiry.<kind>]`),
//! and when the header's age turns to a warning.
//!
//! Looked up at `$XDG_CONFIG_HOME/loopwatch/config.toml`, falling back to
//! `~/.config/loopwatch/config.toml`; a missing file means the defaults of
//! `assets/config/default.toml`. A setting of the wrong type is an error
//! naming the file, line and column; an unknown setting, an unknown action
//! or key name, or a key bound twice is a warning the app shows at start.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::keymap::Keymap;
use crate::model::event::parse_duration;
pub use crate::notify::ConfigError;
use crate::notify::UserSettings;

/// The default config file, as `loopwatch config --default` prints it.
pub const DEFAULT_CONFIG: &str = include_str!("../../assets/config/default.toml");

/// Age of the last event past which the header warns, unless configured.
pub const DEFAULT_STALE_AFTER: Duration = Duration::from_secs(600);

/// The theme asked for in the config file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThemeChoice {
    /// Colours for a dark background.
    Dark,
    /// Colours for a light background.
    Light,
    /// Guess from `COLORFGBG`, dark when unknown.
    #[default]
    Auto,
}

/// The theme in force once the environment is taken into account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThemeKind {
    /// Colours for a dark background.
    Dark,
    /// Colours for a light background.
    Light,
    /// No colour at all (`NO_COLOR`): bold, reverse and symbols only.
    NoColor,
}

impl ThemeChoice {
    /// Resolves the choice: a non-empty `NO_COLOR` always wins; `auto`
    /// reads the background from `COLORFGBG` (`fg;bg`, bg 7 or 15 is light).
    pub fn resolve(self, no_color: Option<&str>, colorfgbg: Option<&str>) -> ThemeKind {
        if no_color.is_some_and(|v| !v.is_empty()) {
            return ThemeKind::NoColor;
        }
        match self {
            ThemeChoice::Dark => ThemeKind::Dark,
            ThemeChoice::Light => ThemeKind::Light,
            ThemeChoice::Auto => match colorfgbg.and_then(|v| v.rsplit(';').next()) {
                Some("7" | "15") => ThemeKind::Light,
                _ => ThemeKind::Dark,
            },
        }
    }
}

/// The settings in force.
#[derive(Debug, Clone)]
pub struct Config {
    /// Theme asked for.
    pub theme: ThemeChoice,
    /// Ring the terminal bell when a new human gate opens.
    pub bell: bool,
    /// Age of the last event past which the header warns.
    pub stale_after: Duration,
    /// Keys to actions.
    pub keymap: Keymap,
    /// The command run (by the event loop) when a new human gate opens,
    /// `[notify]` and `[expiry.<kind>]`: the tables every command reads.
    pub shared: UserSettings,
    /// Problems found in the file that did not stop it from loading.
    pub warnings: Vec<String>,
}

/// The file as written, before defaults are filled in.
#[derive(Debug, Deserialize)]
struct RawConfig {
    theme: Option<ThemeChoice>,
    bell: Option<bool>,
    stale_after: Option<String>,
    #[serde(default)]
    keys: BTreeMap<String, Vec<String>>,
    #[serde(flatten)]
    other: BTreeMap<String, toml::Value>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            theme: ThemeChoice::Auto,
            bell: true,
            stale_after: DEFAULT_STALE_AFTER,
            keymap: Keymap::default(),
            shared: UserSettings::default(),
            warnings: Vec::new(),
        }
    }
}

impl Config {
    /// Loads the file at `path`; a missing file gives the defaults.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        UserSettings::read(path)?.map_or_else(|| Ok(Config::default()), |t| Config::parse(&t, path))
    }

    /// Loads this user's config file; the defaults when there is none.
    pub fn load_user() -> Result<Config, ConfigError> {
        UserSettings::user_path().map_or_else(|| Ok(Config::default()), |p| Config::load(&p))
    }

    /// Parses config text; `path` only names the file in errors and warnings.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::toml(text, path, &e))?;
        let mut warnings: Vec<String> = raw
            .other
            .keys()
            .filter(|k| !UserSettings::KEYS.contains(&k.as_str()))
            .map(|k| format!("{}: unknown setting '{k}' ignored", path.display()))
            .collect();
        let stale_after = match raw.stale_after.as_deref() {
            None => DEFAULT_STALE_AFTER,
            Some(s) => parse_duration(s).map_err(|_| {
                let message = format!("stale_after: '{s}' is not a duration (expected e.g. \"90s\", \"10m\", \"1h30m\")");
                ConfigError::at_key(text, path, "stale_after", message)
            })?,
        };
        let (keymap, key_warnings) = Keymap::from_user(&raw.keys);
        warnings.extend(
            key_warnings
                .into_iter()
                .map(|w| format!("{}: {w}", path.display())),
        );
        Ok(Config {
            theme: raw.theme.unwrap_or_default(),
            bell: raw.bell.unwrap_or(true),
            stale_after,
            keymap,
            shared: UserSettings::parse(text, path)?,
            warnings,
        })
    }
}

#[cfg(test)]
mod tests;

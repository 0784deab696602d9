//! Keys to actions: the keymap in force, built from the defaults and the
//! `[keys]` table of the config file.
//!
//! A key is written as in the config file: `j`, `G`, `?`, `ctrl-s`,
//! `shift-tab`, `enter`, `esc`, `up`, `pgdn`, `home`, `f1`. Shift is folded
//! into the character for printable keys (`G`, not `shift-g`), so a binding
//! matches whatever the terminal reports.

use std::collections::BTreeMap;
use std::fmt;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;

/// A key with its modifiers, normalised so that equal keys compare equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    code: KeyCodeOrd,
    ctrl: bool,
    alt: bool,
}

/// `KeyCode` subset with an order, so keymaps print in a stable order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum KeyCodeOrd {
    Char(char),
    F(u8),
    Named(Named),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Named {
    Enter,
    Esc,
    Tab,
    BackTab,
    Backspace,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Delete,
    Insert,
}

const NAMES: [(&str, Named); 18] = [
    ("enter", Named::Enter),
    ("esc", Named::Esc),
    ("tab", Named::Tab),
    ("backtab", Named::BackTab),
    ("backspace", Named::Backspace),
    ("up", Named::Up),
    ("down", Named::Down),
    ("left", Named::Left),
    ("right", Named::Right),
    ("home", Named::Home),
    ("end", Named::End),
    ("pgup", Named::PageUp),
    ("pgdn", Named::PageDown),
    ("delete", Named::Delete),
    ("insert", Named::Insert),
    ("pageup", Named::PageUp),
    ("pagedown", Named::PageDown),
    ("escape", Named::Esc),
];

impl Key {
    /// The key a terminal event stands for, or `None` for keys no binding can name.
    pub fn from_event(ev: &KeyEvent) -> Option<Key> {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        let alt = ev.modifiers.contains(KeyModifiers::ALT);
        let code = match ev.code {
            KeyCode::Char(c) => KeyCodeOrd::Char(c),
            KeyCode::F(n) => KeyCodeOrd::F(n),
            KeyCode::Enter => KeyCodeOrd::Named(Named::Enter),
            KeyCode::Esc => KeyCodeOrd::Named(Named::Esc),
            KeyCode::Tab if ev.modifiers.contains(KeyModifiers::SHIFT) => {
                KeyCodeOrd::Named(Named::BackTab)
            }
            KeyCode::Tab => KeyCodeOrd::Named(Named::Tab),
            KeyCode::BackTab => KeyCodeOrd::Named(Named::BackTab),
            KeyCode::Backspace => KeyCodeOrd::Named(Named::Backspace),
            KeyCode::Up => KeyCodeOrd::Named(Named::Up),
            KeyCode::Down => KeyCodeOrd::Named(Named::Down),
            KeyCode::Left => KeyCodeOrd::Named(Named::Left),
            KeyCode::Right => KeyCodeOrd::Named(Named::Right),
            KeyCode::Home => KeyCodeOrd::Named(Named::Home),
            KeyCode::End => KeyCodeOrd::Named(Named::End),
            KeyCode::PageUp => KeyCodeOrd::Named(Named::PageUp),
            KeyCode::PageDown => KeyCodeOrd::Named(Named::PageDown),
            KeyCode::Delete => KeyCodeOrd::Named(Named::Delete),
            KeyCode::Insert => KeyCodeOrd::Named(Named::Insert),
            _ => return None,
        };
        Some(Key { code, ctrl, alt })
    }

    /// Parses a key as written in the config file.
    pub fn parse(spec: &str) -> Result<Key, String> {
        let mut ctrl = false;
        let mut alt = false;
        let mut shift = false;
        let mut rest = spec;
        // A lone "-" is the minus key, not an empty modifier list.
        while rest.len() > 1
            && let Some((m, tail)) = rest.split_once('-')
        {
            match m.to_ascii_lowercase().as_str() {
                "ctrl" | "c" => ctrl = true,
                "alt" | "a" | "m" => alt = true,
                "shift" | "s" => shift = true,
                _ => break,
            }
            rest = tail;
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => KeyCodeOrd::Char(if shift { c.to_ascii_uppercase() } else { c }),
            _ => {
                let lower = rest.to_ascii_lowercase();
                if lower == "space" {
                    KeyCodeOrd::Char(' ')
                } else if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
                    KeyCodeOrd::F(n)
                } else if let Some((_, named)) = NAMES.iter().find(|(n, _)| *n == lower) {
                    if shift && *named == Named::Tab {
                        KeyCodeOrd::Named(Named::BackTab)
                    } else {
                        KeyCodeOrd::Named(*named)
                    }
                } else {
                    return Err(format!("unknown key '{spec}'"));
                }
            }
        };
        Ok(Key { code, ctrl, alt })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        match self.code {
            KeyCodeOrd::Char(' ') => f.write_str("space"),
            KeyCodeOrd::Char(c) => write!(f, "{c}"),
            KeyCodeOrd::F(n) => write!(f, "f{n}"),
            KeyCodeOrd::Named(Named::BackTab) => f.write_str("shift-tab"),
            KeyCodeOrd::Named(n) => {
                let name = NAMES.iter().find(|(_, x)| *x == n).map_or("?", |(s, _)| s);
                f.write_str(name)
            }
        }
    }
}

/// The keymap in force: every key bound to one action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    keys: BTreeMap<Key, Action>,
}

impl Keymap {
    /// Builds a keymap from bindings per action, in action order. A key
    /// bound twice keeps its first action; each clash and each unknown key
    /// is reported in the returned warnings.
    pub fn build(bindings: &[(Action, Vec<String>)]) -> (Keymap, Vec<String>) {
        let mut keys: BTreeMap<Key, Action> = BTreeMap::new();
        let mut warnings = Vec::new();
        for (action, specs) in bindings {
            for spec in specs {
                match Key::parse(spec) {
                    Ok(key) => match keys.get(&key) {
                        Some(first) if first != action => warnings.push(format!(
                            "key '{key}' is bound to both {} and {}; {} keeps it",
                            first.name(),
                            action.name(),
                            first.name()
                        )),
                        Some(_) => {}
                        None => {
                            keys.insert(key, *action);
                        }
                    },
                    Err(e) => warnings.push(format!("{}: {e}", action.name())),
                }
            }
        }
        (Keymap { keys }, warnings)
    }

    /// The action bound to a terminal key event, if any.
    pub fn action(&self, ev: &KeyEvent) -> Option<Action> {
        Key::from_event(ev).and_then(|k| self.keys.get(&k).copied())
    }

    /// The keys bound to an action, in a stable order.
    pub fn keys_of(&self, action: Action) -> Vec<Key> {
        self.keys
            .iter()
            .filter(|(_, a)| **a == action)
            .map(|(k, _)| *k)
            .collect()
    }

    /// The keys of an action joined for display (`j/down`), or `-` when unbound.
    pub fn label(&self, action: Action) -> String {
        let keys = self.keys_of(action);
        if keys.is_empty() {
            return "-".to_string();
        }
        keys.iter()
            .map(Key::to_string)
            .collect::<Vec<_>>()
            .join("/")
    }
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap::build(default_bindings()).0
    }
}

/// The config file shipped with loopwatch, read here for its `[keys]`.
const DEFAULT_KEYS: &str = include_str!("../../assets/config/default.toml");

/// `[keys]` of the shipped config file (the rest of it is the config's).
#[derive(serde::Deserialize)]
struct DefaultKeys {
    #[serde(default)]
    keys: BTreeMap<String, Vec<String>>,
}

/// The default keys of every action, in action order, read from
/// `assets/config/default.toml`: the one place the default keymap is written.
pub fn default_bindings() -> &'static [(Action, Vec<String>)] {
    static DEFAULTS: std::sync::LazyLock<Vec<(Action, Vec<String>)>> =
        std::sync::LazyLock::new(|| {
            // Invariant: the file is compiled in, and the tests check that it
            // parses and binds every action.
            let raw: DefaultKeys =
                toml::from_str(DEFAULT_KEYS).expect("assets/config/default.toml parses");
            let mut b: Vec<(Action, Vec<String>)> = raw
                .keys
                .into_iter()
                .filter_map(|(name, keys)| Action::from_name(&name).map(|a| (a, keys)))
                .collect();
            b.sort_by_key(|(a, _)| Action::ALL.iter().position(|x| x == a));
            b
        });
    &DEFAULTS
}

impl Keymap {
    /// User bindings first (a clash between two of them is a warning), then
    /// the defaults of the actions the user did not rebind, minus the keys the
    /// user took over.
    pub fn from_user(user: &BTreeMap<String, Vec<String>>) -> (Keymap, Vec<String>) {
        let mut warnings = Vec::new();
        let mut bindings: Vec<(Action, Vec<String>)> = Vec::new();
        for (name, keys) in user {
            match Action::from_name(name) {
                Some(a) => bindings.push((a, keys.clone())),
                None => warnings.push(format!("[keys]: unknown action '{name}' ignored")),
            }
        }
        bindings.sort_by_key(|(a, _)| Action::ALL.iter().position(|x| x == a));
        let taken: Vec<Key> = bindings
            .iter()
            .flat_map(|(_, ks)| ks.iter().filter_map(|k| Key::parse(k).ok()))
            .collect();
        for (action, keys) in default_bindings() {
            if bindings.iter().any(|(a, _)| a == action) {
                continue;
            }
            let kept = keys
                .iter()
                .filter(|k| Key::parse(k).is_ok_and(|key| !taken.contains(&key)))
                .cloned()
                .collect();
            bindings.push((*action, kept));
        }
        let (map, build_warnings) = Keymap::build(&bindings);
        warnings.extend(build_warnings.into_iter().map(|w| format!("[keys]: {w}")));
        for &a in Action::ALL {
            if map.keys_of(a).is_empty() {
                warnings.push(format!("[keys]: {} has no key", a.name()));
            }
        }
        (map, warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_cover_every_action_without_clash() {
        let (map, warnings) = Keymap::build(default_bindings());
        assert_eq!(warnings, Vec::<String>::new());
        for &a in Action::ALL {
            assert!(!map.keys_of(a).is_empty(), "{} unbound", a.name());
        }
        let listed: Vec<Action> = default_bindings().iter().map(|(a, _)| *a).collect();
        assert_eq!(listed, Action::ALL.to_vec());
    }

    #[test]
    fn terminal_events_match_bindings() {
        let map = Keymap::default();
        for (code, modifiers, want) in [
            (
                KeyCode::Char('G'),
                KeyModifiers::SHIFT,
                Some(Action::Bottom),
            ),
            (KeyCode::Char('?'), KeyModifiers::SHIFT, Some(Action::Help)),
            (KeyCode::BackTab, KeyModifiers::SHIFT, Some(Action::PrevTab)),
            (KeyCode::Tab, KeyModifiers::SHIFT, Some(Action::PrevTab)),
            (KeyCode::Down, KeyModifiers::NONE, Some(Action::Down)),
            (
                KeyCode::Char('d'),
                KeyModifiers::CONTROL,
                Some(Action::PageDown),
            ),
            (KeyCode::Char('d'), KeyModifiers::NONE, Some(Action::Diff)),
            (KeyCode::Char('z'), KeyModifiers::NONE, None),
        ] {
            let ev = KeyEvent::new(code, modifiers);
            assert_eq!(map.action(&ev), want, "{code:?} with {modifiers:?}");
        }
    }

    #[test]
    fn parse_and_display_round_trip() {
        for spec in [
            "j",
            "G",
            "?",
            "ctrl-s",
            "shift-tab",
            "pgdn",
            "f5",
            "space",
            "-",
            "alt-x",
            "ctrl-home",
        ] {
            let k = Key::parse(spec).expect(spec);
            assert_eq!(k.to_string(), spec);
        }
        assert_eq!(
            Key::parse("PageDown").map(|k| k.to_string()),
            Ok("pgdn".to_string())
        );
        assert_eq!(
            Key::parse("shift-g").map(|k| k.to_string()),
            Ok("G".to_string())
        );
        assert_eq!(
            Key::parse("hyper-q"),
            Err("unknown key 'hyper-q'".to_string())
        );
    }

    #[test]
    fn duplicate_binding_is_reported_and_first_wins() {
        let (map, warnings) = Keymap::build(&[
            (Action::Down, vec!["j".into()]),
            (Action::Quit, vec!["j".into(), "nope-key".into()]),
        ]);
        assert_eq!(
            warnings,
            vec![
                "key 'j' is bound to both down and quit; down keeps it".to_string(),
                "quit: unknown key 'nope-key'".to_string()
            ]
        );
        assert_eq!(
            map.action(&KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE)),
            Some(Action::Down)
        );
        assert_eq!(map.label(Action::Quit), "-");
    }
}

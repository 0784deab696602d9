//! Tests of config loading: defaults, overrides, warnings and errors.

use super::*;
use crate::tui::action::Action;
use crate::tui::testkit::ch;
use std::path::PathBuf;

#[test]
fn default_file_is_the_builtin_default() {
    let c = Config::parse(DEFAULT_CONFIG, Path::new("default.toml")).expect("shipped file parses");
    assert_eq!(c.warnings, Vec::<String>::new());
    assert_eq!(c.keymap, Keymap::default());
    assert_eq!(c.theme, ThemeChoice::Auto);
    assert!(c.bell);
    assert_eq!(c.shared.on_human_gate, None);
    assert_eq!(c.stale_after, Duration::from_secs(600));
}

#[test]
fn user_keys_replace_defaults_and_clashes_are_warned() {
    let text = "theme = \"light\"\nbell = false\non_human_gate = \"notify-send hi\"\nstale_after = \"1h30m\"\ncolour = 3\n\
                [keys]\nquit = [\"n\"]\nhelp = [\"n\", \"h\"]\nwarp = [\"w\"]\n";
    let c = Config::parse(text, Path::new("c.toml")).expect("valid");
    assert_eq!(c.theme, ThemeChoice::Light);
    assert!(!c.bell);
    assert_eq!(c.shared.on_human_gate.as_deref(), Some("notify-send hi"));
    assert_eq!(c.stale_after, Duration::from_secs(5400));
    assert_eq!(
        c.warnings,
        vec![
            "c.toml: unknown setting 'colour' ignored".to_string(),
            "c.toml: [keys]: unknown action 'warp' ignored".to_string(),
            "c.toml: [keys]: key 'n' is bound to both help and quit; help keeps it".to_string(),
            "c.toml: [keys]: next-human-gate has no key".to_string(),
            "c.toml: [keys]: quit has no key".to_string(),
        ]
    );
    assert_eq!(c.keymap.action(&ch('n')), Some(Action::Help));
    assert_eq!(c.keymap.action(&ch('h')), Some(Action::Help));
    // `q` is no longer quit and `?` no longer help: the user replaced them.
    assert_eq!(c.keymap.action(&ch('q')), None);
    assert_eq!(c.keymap.action(&ch('?')), None);
    // next-human-gate lost `n` to the user's bindings.
    assert_eq!(c.keymap.label(Action::NextHumanGate), "-");
}

#[test]
fn wrong_type_names_file_line_and_column() {
    let err =
        Config::parse("bell = true\ntheme = 3\n", Path::new("/x/c.toml")).expect_err("bad type");
    let msg = err.to_string();
    assert!(msg.starts_with("/x/c.toml:2:9: "), "{msg}");
    let err =
        Config::parse("stale_after = \"soon\"\n", Path::new("c.toml")).expect_err("bad duration");
    assert_eq!(
        err.to_string(),
        "c.toml:1:1: stale_after: 'soon' is not a duration (expected e.g. \"90s\", \"10m\", \"1h30m\")"
    );
}

#[test]
fn path_prefers_xdg_then_home() {
    assert_eq!(
        crate::notify::UserSettings::path(Some("/xdg".into()), Some("/home/u".into())),
        Some(PathBuf::from("/xdg/loopwatch/config.toml"))
    );
    assert_eq!(
        crate::notify::UserSettings::path(Some("".into()), Some("/home/u".into())),
        Some(PathBuf::from("/home/u/.config/loopwatch/config.toml"))
    );
    assert_eq!(crate::notify::UserSettings::path(None, None), None);
}

#[test]
fn missing_file_gives_defaults() {
    let d = tempfile::tempdir().expect("tempdir");
    let c = Config::load(&d.path().join("none.toml")).expect("missing is fine");
    assert_eq!(c.keymap, Keymap::default());
}

#[test]
fn theme_resolution() {
    assert_eq!(
        ThemeChoice::Light.resolve(Some("1"), None),
        ThemeKind::NoColor
    );
    assert_eq!(ThemeChoice::Light.resolve(Some(""), None), ThemeKind::Light);
    assert_eq!(
        ThemeChoice::Auto.resolve(None, Some("0;15")),
        ThemeKind::Light
    );
    assert_eq!(
        ThemeChoice::Auto.resolve(None, Some("15;0")),
        ThemeKind::Dark
    );
    assert_eq!(ThemeChoice::Auto.resolve(None, None), ThemeKind::Dark);
    assert_eq!(
        ThemeChoice::Dark.resolve(None, Some("0;15")),
        ThemeKind::Dark
    );
}

#[test]
fn notify_and_expiry_sections() {
    let d = Config::parse(DEFAULT_CONFIG, Path::new("default.toml")).unwrap();
    assert_eq!(d.shared.notify, crate::notify::NotifySettings::default());
    assert!(d.shared.expiry.is_empty());
    let text = "[notify]\nterminal = \"osc777\"\nwebhook = \"http://127.0.0.1:9/h\"\nformat = \"ntfy\"\n\
                timeout = \"3s\"\ndelay = \"2m\"\nremind = \"1h\"\n\
                [expiry.cap-reached]\nafter = \"1d\"\naction = \"abort\"\n";
    let c = Config::parse(text, Path::new("c.toml")).unwrap();
    assert_eq!(
        c.shared.notify.terminal,
        crate::notify::TerminalNotice::Osc777
    );
    assert_eq!(
        c.shared.notify.webhook.as_ref().map(|w| w.url()),
        Some("http://127.0.0.1:9/h")
    );
    assert_eq!(c.shared.notify.delay, Duration::from_secs(120));
    assert_eq!(c.shared.notify.remind, Some(Duration::from_secs(3600)));
    let rule = &c.shared.expiry[&crate::model::HumanGateKind::CapReached];
    assert_eq!(
        (rule.after.as_str(), rule.action),
        ("1d", crate::model::Decision::Abort)
    );
    for (bad, want) in [
        (
            "[notify]\nremind = \"0\"\n",
            "c.toml:1:1: [notify] remind: must be longer than 0",
        ),
        (
            "[notify]\ndelay = \"-1m\"\n",
            "c.toml:1:1: [notify] delay: '-1m' is not a duration",
        ),
        ("[notify]\nterminal = \"loud\"\n", "c.toml:2:"),
        ("[notify]\ncolour = 1\n", "c.toml:2:"),
        (
            "\n[expiry.out-of-scope]\nafter = \"30m\"\naction = \"lift\"\n",
            "c.toml:2:1: [expiry.out-of-scope]: lift is not an option",
        ),
        (
            "[expiry.someday]\nafter = \"30m\"\naction = \"deny\"\n",
            "c.toml:1:1: [expiry.someday]: unknown",
        ),
    ] {
        let err = Config::parse(bad, Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(want), "{bad:?}: {err}");
    }
}

#[test]
fn the_default_file_says_webhooks_take_https() {
    assert!(!DEFAULT_CONFIG.contains("no TLS"), "{DEFAULT_CONFIG}");
    assert!(!DEFAULT_CONFIG.contains("http:// only"), "{DEFAULT_CONFIG}");
    assert!(DEFAULT_CONFIG.contains("http:// or\n# https://"));
    // As it says: an https webhook is taken.
    let c = Config::parse(
        "[notify]\nwebhook = \"https://ntfy.example/loopwatch\"\n",
        Path::new("c.toml"),
    )
    .unwrap();
    assert_eq!(
        c.shared.notify.webhook.as_ref().map(|w| w.url()),
        Some("https://ntfy.example/loopwatch")
    );
    // Every kind it names for [expiry.<kind>] is one.
    let kinds = DEFAULT_CONFIG
        .split("Kinds: ")
        .nth(1)
        .and_then(|t| t.split('.').next())
        .unwrap()
        .replace("\n#", "");
    let named: Vec<&str> = kinds.split(',').map(str::trim).collect();
    let all: Vec<&str> = crate::model::HumanGateKind::ALL
        .iter()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(named, all);
}

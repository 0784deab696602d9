//! Small filesystem and hashing helpers shared by every reader and writer.
//!
//! Files from outside are hostile until opened: [`open_regular`] and
//! [`read_regular`] open without blocking (a FIFO never hangs a reader),
//! refuse anything but a regular file (a device never feeds gigabytes) and
//! read at most a stated size. [`replace_atomically`] is the one way this
//! program replaces a file that someone else may read at the same time:
//! temp file in the same folder, same permissions, fsync, rename, fsync of
//! the folder; [`replace_in_pipeline`] does the same and refuses a link.
//! Temp files are named `.loopwatch-<pid>-<random>.tmp`, so that the next
//! writer in a folder can remove those of writers that died (kill -9).

mod duration;
mod open;
mod replace;

pub use duration::{DurationError, parse_duration, parse_seconds};

pub use open::{
    FileRefusal, MAX_TEXT_BYTES, open_pipeline_file, open_regular, read_bounded, read_regular,
    size_text,
};
pub use replace::{
    TEMP_PREFIX, TEMP_SUFFIX, pipeline_dir, process_alive, remove_dead_temps, replace_atomically,
    replace_in_pipeline, resolve_target, sync_dir,
};

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// `sha256:<hex>` of some bytes (the form used in events).
pub fn sha256_tagged(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    for b in digest {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// `user@host` of the person or process writing a decision.
pub fn user_at_host() -> String {
    let user = std::env::var("LOOPWATCH_USER")
        .or_else(|_| std::env::var("USER"))
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(user_from_passwd)
        .unwrap_or_else(|| format!("uid{}", rustix::process::getuid().as_raw()));
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    format!("{user}@{host}")
}

/// `user@host` of the account this process runs as: the login name of
/// its uid (no environment variable changes it), for what a person's
/// identity must not be claimed by (the decision policy).
pub fn account_at_host() -> String {
    let user =
        user_from_passwd().unwrap_or_else(|| format!("uid{}", rustix::process::getuid().as_raw()));
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    format!("{user}@{host}")
}

/// The login name of the current uid, from `/etc/passwd`.
fn user_from_passwd() -> Option<String> {
    let uid = rustix::process::getuid().as_raw().to_string();
    let bytes = read_regular(Path::new("/etc/passwd"), 16 * 1024 * 1024).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    text.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        (f.nth(1)? == uid).then(|| name.to_string())
    })
}

/// Current UTC time as RFC 3339 with seconds (the `at` of events).
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A serde_json error's message without the " at line L column C" it
/// appends: callers that report their own position say it first.
pub fn json_message(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    }
}

/// The strings of a JSON array (its other values skipped; none when `v`
/// is not an array).
pub fn json_strings(v: Option<&serde_json::Value>) -> Vec<String> {
    v.and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// `n` with its noun, singular or plural.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// loopwatch's own state folder (the TUI's log, observed foreign states):
/// `$XDG_STATE_HOME/loopwatch`, else `~/.local/state/loopwatch`.
pub fn state_dir() -> Option<PathBuf> {
    Some(xdg_dir("XDG_STATE_HOME", ".local/state")?.join("loopwatch"))
}

/// The folder `$<var>` names, else `$HOME/<under_home>` (`None` when
/// neither is set).
pub fn xdg_dir(var: &str, under_home: &str) -> Option<PathBuf> {
    let set = |v: &str| std::env::var_os(v).filter(|v| !v.is_empty());
    set(var)
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from(set("HOME")?).join(under_home)))
}

/// A duration for messages: `500ms`, `2.5s`, `45s`, `20m`, `1h30m`.
pub fn duration_text(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let secs = d.as_secs();
    if secs < 60 {
        let tenths = ms / 100;
        return if tenths.is_multiple_of(10) {
            format!("{secs}s")
        } else {
            format!("{}.{}s", tenths / 10, tenths % 10)
        };
    }
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 {
        out.push_str(&format!("{s}s"));
    }
    out
}

/// `SIGTERM`, `SIGKILL`, … for the usual signals, else `signal N`.
pub fn signal_name(n: i32) -> String {
    let name = match n {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        _ => return format!("signal {n}"),
    };
    name.to_string()
}

/// This user's loopwatch config folder: `$XDG_CONFIG_HOME/loopwatch`, else
/// `$HOME/.config/loopwatch` (`None` when neither is set).
pub fn user_config_dir(
    xdg_config_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<std::path::PathBuf> {
    let base = match xdg_config_home.filter(|v| !v.is_empty()) {
        Some(x) => std::path::PathBuf::from(x),
        None => std::path::PathBuf::from(home.filter(|v| !v.is_empty())?).join(".config"),
    };
    Some(base.join("loopwatch"))
}

/// [`user_config_dir`] from this process's environment.
pub fn user_config_dir_from_env() -> Option<std::path::PathBuf> {
    user_config_dir(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn sha256_of_empty() {
        assert_eq!(
            sha256_tagged(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn replace_keeps_permissions_and_link() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.md");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = d.path().join("link.md");
        symlink(&real, &link).unwrap();
        replace_atomically(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }

    #[test]
    fn durations_read_the_way_a_person_writes_them() {
        use std::time::Duration;
        assert_eq!(super::duration_text(Duration::from_millis(500)), "500ms");
        assert_eq!(super::duration_text(Duration::from_millis(2500)), "2.5s");
        assert_eq!(super::duration_text(Duration::from_secs(45)), "45s");
        assert_eq!(super::duration_text(Duration::from_secs(1200)), "20m");
        assert_eq!(super::duration_text(Duration::from_secs(5400)), "1h30m");
        assert_eq!(super::signal_name(15), "SIGTERM");
        assert_eq!(super::signal_name(64), "signal 64");
    }
}

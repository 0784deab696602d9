//! Times as the rows show them (UTC).

use jiff::Timestamp;

/// `HH:MM:SS` (UTC) of an RFC 3339 time, or the text itself when it is not one.
pub fn time_of(at: &str) -> String {
    match at.parse::<Timestamp>() {
        Ok(t) => t.strftime("%H:%M:%S").to_string(),
        Err(_) => at.to_string(),
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of an RFC 3339 time.
pub fn date_time_of(at: &str) -> String {
    match at.parse::<Timestamp>() {
        Ok(t) => t.strftime("%Y-%m-%d %H:%M:%S").to_string(),
        Err(_) => at.to_string(),
    }
}

/// A short age: `4s`, `12m`, `1h05m`, `3d`.
pub fn short_age(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d", secs / 86_400),
    }
}

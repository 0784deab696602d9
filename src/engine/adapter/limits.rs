//! Usage and rate limits as the agent CLIs report them, read into a
//! [`Limit`]: the dispatch is recorded limited (`agent.limited`), not
//! failed.
//!
//! - Claude Code (`stream-json`): a `rate_limit_event` whose
//!   `rate_limit_info.status` is `rejected`, its `resetsAt` in Unix
//!   seconds (`allowed` and `allowed_warning` are the served requests'
//!   heartbeats, never a limit); and the final `result` with `is_error` whose
//!   text is `Claude AI usage limit reached|<unix seconds>` (older
//!   versions) or `You've hit your limit · resets 2pm (Europe/Berlin)`
//!   (a time of day without a date: no reset time is read from it).
//! - Codex (`exec --json`): the `error` / `turn.failed` message of its
//!   usage-limit error, `You've hit your usage limit. … Try again at
//!   3:15 PM.` (today, in the machine's time zone) or `… Try again at
//!   Dec 3rd, 2026 3:15 PM.`; `Try again later.` gives no reset time.
//! - A generic agent reports one in its usage file (`$LW_USAGE_FILE`):
//!   `{"limited": true, "until": "<RFC 3339>"}` (see [`usage_file`]).

use jiff::Timestamp;
use serde_json::Value;

use crate::parse::agent_stream::{Line, lines};

use super::Answer;

/// A usage limit an agent's CLI answered with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// When it resets, when the CLI said.
    pub until: Option<Timestamp>,
    /// The CLI's words (one line, at most 300 characters).
    pub message: String,
}

/// The limit in a Claude Code `stream-json` session, given the error the
/// adapter read from it.
pub fn claude(stdout: &[u8], error: Option<&str>) -> Option<Limit> {
    let mut until: Option<Timestamp> = None;
    let mut rejected = false;
    for line in lines(stdout) {
        let Line::Json(v) = line else { continue };
        if v.get("type").and_then(Value::as_str) != Some("rate_limit_event") {
            continue;
        }
        let info = v.get("rate_limit_info").unwrap_or(&Value::Null);
        if info.get("status").and_then(Value::as_str) == Some("rejected") {
            rejected = true;
            until = info
                .get("resetsAt")
                .and_then(Value::as_i64)
                .and_then(|s| Timestamp::from_second(s).ok());
        }
    }
    let text = error.unwrap_or_default();
    let said = text.contains("usage limit reached")
        || text.contains("hit your limit")
        || text.contains("out of extra usage");
    if !rejected && !said {
        return None;
    }
    if until.is_none()
        && let Some((_, rest)) = text.split_once("usage limit reached|")
    {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        until = digits
            .parse::<i64>()
            .ok()
            .and_then(|s| Timestamp::from_second(s).ok());
    }
    let message = if text.is_empty() {
        "Claude Code: rate limit rejected".to_string()
    } else {
        one_line(text)
    };
    Some(Limit { until, message })
}

/// The limit in a Codex `exec --json` failure message.
pub fn codex(error: Option<&str>, now: Timestamp) -> Option<Limit> {
    let text = error?;
    let lower = text.to_lowercase().replace('’', "'");
    if !lower.contains("hit your usage limit") {
        return None;
    }
    let until = lower
        .split_once("try again at ")
        .and_then(|(_, rest)| codex_time(rest.trim_end_matches('.').trim(), now));
    Some(Limit {
        until,
        message: one_line(text),
    })
}

/// `3:15 pm` (today, local) or `dec 3rd, 2026 3:15 pm` (lower case).
fn codex_time(s: &str, now: Timestamp) -> Option<Timestamp> {
    let tz = jiff::tz::TimeZone::system();
    let s = s.split(['.', '\n']).next()?.trim();
    let (date, time) = match s.rsplit_once(", ") {
        Some((date, rest)) => {
            // `dec 3rd, 2026 3:15 pm`: the year leads the time.
            let (year, time) = rest.split_once(' ')?;
            let (month, day) = date.split_once(' ')?;
            let day: String = day.chars().take_while(char::is_ascii_digit).collect();
            let month = [
                "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
            ]
            .iter()
            .position(|m| month.starts_with(m))?;
            let d = jiff::civil::date(
                year.parse().ok()?,
                i8::try_from(month + 1).ok()?,
                day.parse().ok()?,
            );
            (Some(d), time)
        }
        None => (None, s),
    };
    let (hm, meridiem) = time.split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let (mut h, m): (i8, i8) = (h.parse().ok()?, m.parse().ok()?);
    if !(1..=12).contains(&h) || !(0..60).contains(&m) {
        return None;
    }
    match meridiem {
        "am" if h == 12 => h = 0,
        "am" => {}
        "pm" if h == 12 => {}
        "pm" => h += 12,
        _ => return None,
    }
    let date = date.unwrap_or_else(|| now.to_zoned_datetime(tz.clone()).date());
    let dt = date.at(h, m, 0, 0);
    dt.to_zoned_datetime(tz).ok().map(|z| z.timestamp())
}

/// Reads a generic agent's usage file: `tokensIn`, `tokensOut`,
/// `costUsd` (numbers at or above zero), `limited` (true) with `until`
/// (RFC 3339) and `message`. Anything else in it is refused with the
/// reason, as a note; nothing of a refused file is used.
pub fn usage_file(bytes: &[u8], a: &mut Answer) -> Result<(), String> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the usage file is not JSON: {e}"))?;
    let Some(o) = v.as_object() else {
        return Err("the usage file is not a JSON object".into());
    };
    let count = |k: &str| -> Result<Option<u64>, String> {
        match o.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(x) => x.as_u64().map(Some).ok_or_else(|| {
                format!("the usage file's {k} is not a whole number at or above zero")
            }),
        }
    };
    let tokens_in = count("tokensIn")?;
    let tokens_out = count("tokensOut")?;
    let cost = match o.get("costUsd") {
        None | Some(Value::Null) => None,
        Some(x) => Some(
            x.as_f64()
                .filter(|c| c.is_finite() && *c >= 0.0)
                .ok_or("the usage file's costUsd is not a number at or above zero")?,
        ),
    };
    let limit = match o.get("limited") {
        None | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => {
            let until =
                match o.get("until") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(t)) => Some(t.parse::<Timestamp>().map_err(|e| {
                        format!("the usage file's until is not an RFC 3339 time: {e}")
                    })?),
                    Some(_) => return Err("the usage file's until is not a string".into()),
                };
            let message = o
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| "usage limit reached".to_string(), one_line);
            Some(Limit { until, message })
        }
        Some(_) => return Err("the usage file's limited is not true or false".into()),
    };
    a.tokens_in = tokens_in.or(a.tokens_in);
    a.tokens_out = tokens_out.or(a.tokens_out);
    a.cost_usd = cost.or(a.cost_usd);
    if limit.is_some() {
        a.limited = limit;
    }
    Ok(())
}

/// The longest a reset may be away and still be waited out.
pub const LONGEST_WAIT: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Whether a limit may be waited out at `now`: its reset time, or why a
/// person is asked instead (none given, in the past, days away).
pub fn waitable(until: Option<&str>, now: Timestamp) -> Result<Timestamp, String> {
    let Some(u) = until else {
        return Err("the CLI gave no reset time".into());
    };
    let t: Timestamp = u
        .parse()
        .map_err(|e| format!("its reset time '{u}' cannot be read: {e}"))?;
    if t <= now {
        return Err(format!("its reset time {t} is in the past"));
    }
    let away = now.duration_until(t);
    if away.as_secs() > LONGEST_WAIT.as_secs() as i64 {
        return Err(format!("its reset time {t} is more than a day away"));
    }
    Ok(t)
}

fn one_line(s: &str) -> String {
    crate::model::rules::one_line(s).chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn claude_codes_rejected_rate_limit_event_gives_its_reset() {
        // The shape Claude Code 2.1 prints when a plan's window is spent,
        // then its result.
        let out = concat!(
            r#"{"type":"system","subtype":"init","session_id":"s1","cwd":"/w","tools":[]}"#,
            "\n",
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1796227200,"rateLimitType":"five_hour","overageStatus":"rejected","isUsingOverage":false},"session_id":"s1"}"#,
            "\n",
            r#"{"type":"result","subtype":"success","is_error":true,"result":"You've hit your limit · resets 2pm (Europe/Berlin)","session_id":"s1","total_cost_usd":0}"#,
            "\n",
        );
        let l = claude(
            out.as_bytes(),
            Some("You've hit your limit · resets 2pm (Europe/Berlin)"),
        )
        .unwrap();
        assert_eq!(
            l.until,
            Some(Timestamp::from_second(1_796_227_200).unwrap())
        );
        assert!(l.message.contains("hit your limit"));
        // A served request's heartbeat is no limit.
        let fine = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1796227200}}"#;
        assert_eq!(claude(fine.as_bytes(), None), None);
    }

    #[test]
    fn claude_codes_older_result_text_carries_unix_seconds() {
        let l = claude(b"", Some("Claude AI usage limit reached|1753441200")).unwrap();
        assert_eq!(
            l.until,
            Some(Timestamp::from_second(1_753_441_200).unwrap())
        );
        // The newer text alone gives a time of day, no date: no reset time.
        let l = claude(
            b"",
            Some("You've hit your limit · resets 11:30am (Asia/Calcutta)"),
        )
        .unwrap();
        assert_eq!(l.until, None);
        assert_eq!(claude(b"", Some("API Error: 500 Internal")), None);
    }

    #[test]
    fn codexs_usage_limit_error_reads_its_try_again_time() {
        let now = ts("2026-12-02T06:00:00Z");
        let tz = jiff::tz::TimeZone::system();
        let msg = "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at Dec 3rd, 2026 3:15 PM.";
        let l = codex(Some(msg), now).unwrap();
        let want = jiff::civil::date(2026, 12, 3)
            .at(15, 15, 0, 0)
            .to_zoned_datetime(tz.clone())
            .unwrap()
            .timestamp();
        assert_eq!(l.until, Some(want));
        // Today's reset: a time of day, in the machine's zone.
        let today = now.to_zoned_datetime(tz.clone()).date();
        let l = codex(
            Some("You’ve hit your usage limit. Try again at 11:05 PM."),
            now,
        )
        .unwrap();
        assert_eq!(
            l.until,
            Some(
                today
                    .at(23, 5, 0, 0)
                    .to_zoned_datetime(tz)
                    .unwrap()
                    .timestamp()
            )
        );
        let l = codex(Some("You've hit your usage limit. Try again later."), now).unwrap();
        assert_eq!(l.until, None);
        assert_eq!(
            codex(Some("stream disconnected before completion"), now),
            None
        );
    }

    #[test]
    fn a_reset_with_no_time_in_the_past_or_days_away_is_not_waited_out() {
        let now = ts("2026-12-02T06:00:00Z");
        for (until, why) in [
            (None, "no reset time"),
            (Some("2026-12-02T05:00:00Z"), "in the past"),
            (Some("2026-12-05T06:00:00Z"), "more than a day"),
            (Some("soon"), "cannot be read"),
        ] {
            let e = waitable(until, now).unwrap_err();
            assert!(e.contains(why), "{until:?}: {e}");
        }
        assert_eq!(
            waitable(Some("2026-12-02T06:00:02Z"), now),
            Ok(ts("2026-12-02T06:00:02Z"))
        );
    }

    #[test]
    fn a_generic_usage_file_is_read_or_refused_whole() {
        let mut a = Answer::default();
        usage_file(br#"{"tokensIn":10,"tokensOut":5,"costUsd":0.25}"#, &mut a).unwrap();
        assert_eq!(
            (a.tokens_in, a.tokens_out, a.cost_usd),
            (Some(10), Some(5), Some(0.25))
        );
        let mut b = Answer::default();
        usage_file(
            br#"{"limited":true,"until":"2026-12-02T06:00:02Z"}"#,
            &mut b,
        )
        .unwrap();
        assert_eq!(b.limited.unwrap().until, Some(ts("2026-12-02T06:00:02Z")));
        for bad in [
            &br#"{"costUsd":-1}"#[..],
            br#"{"tokensIn":"many"}"#,
            br#"{"limited":true,"until":"tomorrow"}"#,
            br#"[1]"#,
            b"not json",
        ] {
            let mut c = Answer::default();
            assert!(
                usage_file(bad, &mut c).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
            assert_eq!(c, Answer::default());
        }
    }
}

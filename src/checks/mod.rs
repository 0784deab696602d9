//! The loop's other deterministic checks: floor-guard (a weakened quality
//! bar in the diff), evidence-gate (does a test log prove a claim) and
//! triage apply (verify-by-test results into a triage file).
//!
//! Each check has a pure core (text in, typed result out) and a thin layer
//! that reads files or runs git. Never touches the terminal: the CLI prints.

pub mod evidence_gate;
pub mod floor_guard;
pub mod triage;

/// Makes text that came from files safe to print on a terminal: every
/// control character (ESC, CR, BEL, ...) is shown as an escape sequence.
pub fn escape_controls(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_text_is_kept() {
        assert_eq!(
            escape_controls("a\u{1b}[31mb\r\tc é"),
            "a\\u{1b}[31mb\\r\\tc é"
        );
        assert_eq!(escape_controls("plain"), "plain");
    }
}

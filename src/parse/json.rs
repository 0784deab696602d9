//! Locating and reading the JSON array an agent printed.
//!
//! The finding verifier prints either a bare JSON array, or a
//! `FINDING_VERIFIER_RESULTS` line, at most one line of prose, then the
//! array. This module finds where the array starts, parses it, and reports
//! errors with the line and byte column in the whole input (not in the
//! slice handed to the JSON parser). It also tells where each top-level
//! element starts, so later errors about one entry can point at it.

use serde_json::Value;

use super::lines::decode;

/// A JSON input that cannot be read. Displays as `<input>:<line>:<column>: <message>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonInputError {
    /// The bytes are not UTF-8.
    #[error("{input}:{line}:{column}: invalid UTF-8; expected JSON text")]
    InvalidUtf8 {
        /// Input name.
        input: String,
        /// 1-based line.
        line: usize,
        /// 1-based byte column.
        column: usize,
    },
    /// No array where one was expected (empty input, nothing after the marker).
    #[error("{input}:{line}: {message}")]
    NoArray {
        /// Input name.
        input: String,
        /// 1-based line where the array was expected.
        line: usize,
        /// What was found and expected.
        message: String,
    },
    /// Invalid or truncated JSON.
    #[error("{input}:{line}:{column}: {message}")]
    Syntax {
        /// Input name.
        input: String,
        /// 1-based line.
        line: usize,
        /// 1-based byte column.
        column: usize,
        /// The JSON parser's complaint and what was expected.
        message: String,
    },
    /// Valid JSON of the wrong shape.
    #[error("{input}:{line}:{column}: {message}")]
    Shape {
        /// Input name.
        input: String,
        /// 1-based line of the offending value.
        line: usize,
        /// 1-based byte column of the offending value.
        column: usize,
        /// What was found and expected.
        message: String,
    },
}

/// The marker line that may precede the finding verifier's array.
pub const MARKER: &str = "FINDING_VERIFIER_RESULTS";

/// A parsed top-level array and where each element starts.
#[derive(Debug)]
pub struct Located {
    /// The elements.
    pub items: Vec<Value>,
    /// `(line, column)` of each element, parallel to `items`.
    pub positions: Vec<(usize, usize)>,
}

/// Reads the top-level JSON array of `bytes`, after an optional
/// [`MARKER`] line (when `allow_marker`) and one line of prose.
pub fn read_array(
    input: &str,
    bytes: &[u8],
    allow_marker: bool,
    what: &str,
) -> Result<Located, JsonInputError> {
    let text = decode(bytes).map_err(|e| JsonInputError::InvalidUtf8 {
        input: input.to_owned(),
        line: e.line,
        column: e.column,
    })?;
    let (start, first_line) = if allow_marker {
        array_start(input, text)?
    } else {
        (0, 1)
    };
    let json = text.get(start..).unwrap_or_default();
    let pos = |line: usize, column: usize| (line + first_line - 1, column);
    let value: Value = serde_json::from_str(json).map_err(|e| {
        let (line, column) = pos(e.line(), e.column());
        let full = e.to_string();
        let code = full
            .rfind(" at line ")
            .and_then(|i| full.get(..i))
            .unwrap_or(&full);
        let hint = if e.is_eof() { " (truncated?)" } else { "" };
        JsonInputError::Syntax {
            input: input.to_owned(),
            line,
            column,
            message: format!("{code}{hint}; expected a JSON array of {what}"),
        }
    })?;
    let Value::Array(items) = value else {
        let lead = json
            .get(..json.len() - json.trim_start().len())
            .unwrap_or_default();
        let column = 1 + lead.rfind('\n').map_or(lead.len(), |p| lead.len() - p - 1);
        let (line, column) = pos(1 + lead.matches('\n').count(), column);
        return Err(JsonInputError::Shape {
            input: input.to_owned(),
            line,
            column,
            message: format!("found {}; expected a JSON array of {what}", kind_of(&value)),
        });
    };
    let positions = element_starts(json)
        .into_iter()
        .map(|(l, c)| pos(l, c))
        .collect();
    Ok(Located { items, positions })
}

/// A short name of a JSON value's type, for messages.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Byte offset and line number where the array starts, honouring the marker.
fn array_start(input: &str, text: &str) -> Result<(usize, usize), JsonInputError> {
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').enumerate().map(|(i, l)| {
        let at = offset;
        offset += l.len();
        (i + 1, at, l)
    });
    let Some((marker_line, _, _)) = lines.by_ref().find(|(_, _, l)| l.trim() == MARKER) else {
        return Ok((0, 1));
    };
    let mut prose_seen = false;
    for (number, at, l) in lines {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with('[') {
            return Ok((at, number));
        }
        if prose_seen {
            return Err(JsonInputError::NoArray {
                input: input.to_owned(),
                line: number,
                message: format!(
                    "a second line of prose after `{MARKER}` (line {marker_line}); expected the JSON array"
                ),
            });
        }
        prose_seen = true;
    }
    Err(JsonInputError::NoArray {
        input: input.to_owned(),
        line: marker_line,
        message: format!("nothing after `{MARKER}`; expected a JSON array"),
    })
}

/// 1-based `(line, byte column)` of each top-level element of a valid JSON
/// array, in one pass.
fn element_starts(json: &str) -> Vec<(usize, usize)> {
    let mut starts = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut want) = (0usize, false, false, false);
    let (mut line, mut line_start) = (1usize, 0usize);
    for (i, b) in json.bytes().enumerate() {
        if b == b'\n' {
            line += 1;
            line_start = i + 1;
        }
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if want && !b.is_ascii_whitespace() && b != b']' {
            starts.push((line, i - line_start + 1));
            want = false;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                want = depth == 1;
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => want = true,
            _ => {}
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_positions_skip_strings_and_nesting() {
        let json = "[\n {\"a\": \"[,]\\\"\"},\n  [1, 2], 3\n]";
        assert_eq!(element_starts(json), vec![(2, 2), (3, 3), (3, 11)]);
        assert!(element_starts("[]").is_empty());
    }

    #[test]
    fn marker_and_one_line_of_prose() {
        let got = read_array(
            "f",
            b"x\nFINDING_VERIFIER_RESULTS\nsome prose\n\n[1,\n 2]",
            true,
            "v",
        )
        .unwrap();
        assert_eq!(got.positions, vec![(5, 2), (6, 2)]);
        let e = read_array("f", b"FINDING_VERIFIER_RESULTS\na\nb\n[]", true, "v").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f:3: a second line of prose after `FINDING_VERIFIER_RESULTS` (line 1); expected the JSON array"
        );
        let e = read_array("f", b"FINDING_VERIFIER_RESULTS\n", true, "v").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f:1: nothing after `FINDING_VERIFIER_RESULTS`; expected a JSON array"
        );
    }

    #[test]
    fn syntax_errors_are_positioned_in_the_whole_input() {
        let e = read_array(
            "f",
            b"FINDING_VERIFIER_RESULTS\n[\n  {\"id\": 1,",
            true,
            "v",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "f:3:11: EOF while parsing a value (truncated?); expected a JSON array of v"
        );
        let e = read_array("f", b"  {}", false, "v").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f:1:3: found an object; expected a JSON array of v"
        );
        let e = read_array("f", b"[1] trailing", false, "v").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f:1:5: trailing characters; expected a JSON array of v"
        );
    }
}

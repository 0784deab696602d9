//! Small pieces shared by the gate-output readers: header fields, sections
//! seen once, and the skeleton "lines → verdict line → body".

use super::error::{Structural, StructuralKind};
use super::lines::{self, Line};
use super::verdict::{self, VerdictLine};
use super::{GateOutput, verdict::gate_word};
use crate::model::GateName;

/// Decoded lines and the verdict line of a gate output.
pub struct Skeleton<'a> {
    /// Every line of the input.
    pub lines: Vec<Line<'a>>,
    /// The single verdict line.
    pub verdict_line: VerdictLine<'a>,
    /// What the verdict line says.
    pub output: GateOutput,
}

impl<'a> Skeleton<'a> {
    /// The lines after the verdict line (the body).
    pub fn body(&self) -> &[Line<'a>] {
        self.lines
            .get(self.verdict_line.index + 1..)
            .unwrap_or_default()
    }
}

/// Decodes `text`, finds the single verdict line of `gate` and reads it.
pub fn skeleton<'a>(
    input: &str,
    gate: GateName,
    text: &'a [u8],
) -> Result<Skeleton<'a>, Structural> {
    let lines = lines::lines(text).map_err(|e| {
        Structural::new(
            input,
            StructuralKind::InvalidUtf8,
            Some(e.line),
            format!(
                "invalid UTF-8 at byte column {}; expected the {} output as UTF-8 text",
                e.column,
                gate_word(gate)
            ),
        )
    })?;
    let verdict_line = verdict::find(input, gate, &lines)?;
    let verdict = verdict::parse_token(input, gate, &verdict_line)?;
    Ok(Skeleton {
        lines,
        verdict_line,
        output: GateOutput::new(gate, verdict),
    })
}

/// The trimmed value of a `NAME: value` header at column 0.
pub fn field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    Some(text.strip_prefix(name)?.strip_prefix(':')?.trim())
}

/// Remembers the line where a section header was seen, and refuses a second.
pub fn once(
    input: &str,
    seen: &mut Option<usize>,
    line: &Line<'_>,
    name: &str,
) -> Result<(), Structural> {
    if let Some(first) = *seen {
        return Err(Structural::new(
            input,
            StructuralKind::DuplicateSection,
            Some(line.number),
            format!("second `{name}:` line (the first is line {first}); expected one"),
        ));
    }
    *seen = Some(line.number);
    Ok(())
}

/// True when a header that opens a list carries no inline value
/// (empty, or the word `none`).
pub fn is_empty_list(value: &str) -> bool {
    value.is_empty() || value.eq_ignore_ascii_case("none") || value == "(none)"
}

/// Refuses an inline value on the `name:` header that opens a list: its
/// rows go on the lines below.
pub fn list_header(
    input: &str,
    line: &Line<'_>,
    name: &str,
    value: &str,
) -> Result<(), Structural> {
    if is_empty_list(value) {
        return Ok(());
    }
    Err(Structural::new(
        input,
        StructuralKind::MalformedField,
        Some(line.number),
        format!("`{name}:` followed by `{value}`; expected the rows on the lines below"),
    ))
}

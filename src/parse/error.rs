//! Why a gate output is structurally invalid.
//!
//! A structural failure is not a verdict: it means the verifier or auditor
//! did not follow the output format, so its verdict cannot be trusted (a mute
//! or garbled gate is never a pass). Each failure is one [`StructuralKind`],
//! the line where it applies when there is one, and a message saying what was
//! expected. When the verdict line could be read, the error also carries what
//! was read so far, so the journal can still show the rows.

use super::GateOutput;

/// The named structural failures of a gate output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::Display)]
#[strum(serialize_all = "kebab-case")]
pub enum StructuralKind {
    /// The input is not UTF-8.
    InvalidUtf8,
    /// No VERDICT line at all.
    NoVerdict,
    /// A second VERDICT line.
    DuplicateVerdict,
    /// The VERDICT line holds a token this gate does not print.
    UnknownVerdict,
    /// CONFORME without a (non-empty) PROOF line.
    ConformeWithoutProof,
    /// CONFORME without a (non-empty) FLOOR line.
    ConformeWithoutFloor,
    /// CONFORME with a row that is not MET, or with an out-of-scope file.
    ConformeNotClean,
    /// PASS (or DEGRADED) with BLOCKING rows.
    PassWithBlocking,
    /// The count `n` of the verdict disagrees with the rows.
    CountMismatch,
    /// A line after the VERDICT line that fits no section.
    UnknownLine,
    /// A section header that appears twice.
    DuplicateSection,
    /// A header line (SCOPE, RUNNABLE…) whose value has the wrong shape.
    MalformedField,
    /// A row of a section that has the wrong shape.
    MalformedRow,
    /// The agent that should have printed the output failed (exit status,
    /// timeout, no answer, an answer too large).
    AgentFailed,
}

impl StructuralKind {
    /// A stable kebab-case name, for `gate.finished.structural` and tests.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A structurally invalid gate output. Displays as `<input>:<line>: <message>`
/// (or `<input>: <message>` when no single line is to blame).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{input}{}: {message}", line_suffix(*line))]
pub struct Structural {
    /// The name of the input, as given to the reader.
    pub input: String,
    /// Which failure.
    pub kind: StructuralKind,
    /// 1-based line where it applies, when it applies to one line.
    pub line: Option<usize>,
    /// What was found and what was expected.
    pub message: String,
    /// What could be read before the failure (verdict known), if anything.
    pub partial: Option<Box<GateOutput>>,
    /// What was normalised before the strict reader judged the output.
    pub normalized: Vec<String>,
}

impl Structural {
    /// A failure without partial output.
    pub fn new(
        input: &str,
        kind: StructuralKind,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        Structural {
            input: input.to_owned(),
            kind,
            line,
            message: message.into(),
            partial: None,
            normalized: Vec::new(),
        }
    }

    /// The same failure, carrying what was read.
    pub fn with_partial(mut self, partial: GateOutput) -> Self {
        self.partial = Some(Box::new(partial));
        self
    }

    /// The text for `gate.finished.structural`: `<kind>: [line <n>: ]<message>`.
    pub fn summary(&self) -> String {
        match self.line {
            Some(line) => format!("{}: line {line}: {}", self.kind, self.message),
            None => format!("{}: {}", self.kind, self.message),
        }
    }
}

/// `:<line>` or nothing: the line part of an `<input>:<line>:` prefix.
pub(crate) fn line_suffix(line: Option<usize>) -> String {
    line.map(|l| format!(":{l}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_input_and_line() {
        let e = Structural::new(
            "out.txt",
            StructuralKind::NoVerdict,
            None,
            "no VERDICT line",
        );
        assert_eq!(e.to_string(), "out.txt: no VERDICT line");
        let e = Structural::new("o", StructuralKind::UnknownLine, Some(7), "what is this");
        assert_eq!(e.to_string(), "o:7: what is this");
        assert_eq!(e.summary(), "unknown-line: line 7: what is this");
    }
}

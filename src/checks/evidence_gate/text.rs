//! Log text made matchable: ANSI escape sequences removed, carriage-return
//! overwrites resolved, go's `-json` events (test2json) turned back into the
//! text they carry; the command line of loopwatch's own run read from the
//! log's last line; which segment of a name is a file. `--test` references
//! are matched in [`super::reference`].

use std::sync::LazyLock;

use regex::Regex;

static ANSI: LazyLock<Regex> =
    static_regex!(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]");

/// One test2json event (`go test -json`): only what the gate reads.
#[derive(serde::Deserialize)]
struct GoEvent {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Output")]
    output: Option<String>,
}

/// The log's lines without colour codes; of a line a terminal would have
/// overwritten with `\r`, only the last non-empty part is kept. A line that
/// is a test2json event stands for the text of its `Output` (the
/// concatenation of the outputs is what `go test -v` prints); its other
/// events (`run`, `pass`, `fail`) repeat what that text says.
pub(super) fn clean_lines(log: &str) -> Vec<String> {
    let plain = ANSI.replace_all(log, "");
    let mut out = Vec::new();
    // The output of go events not yet ended by a newline.
    let mut partial = String::new();
    for raw in plain.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some(event) = go_event(line) {
            if let Some(text) = event.output.filter(|_| event.action == "output") {
                partial.push_str(&text);
                while let Some(i) = partial.find('\n') {
                    let done: String = partial.drain(..=i).collect();
                    out.push(overwritten(done.trim_end_matches('\n')));
                }
            }
            continue;
        }
        if !partial.is_empty() {
            out.push(overwritten(&std::mem::take(&mut partial)));
        }
        out.push(overwritten(line));
    }
    if !partial.is_empty() {
        out.push(overwritten(&partial));
    }
    out
}

/// A test2json event, when the line is one.
fn go_event(line: &str) -> Option<GoEvent> {
    let t = line.trim_start();
    if !t.starts_with("{\"") || !t.contains("\"Action\"") {
        return None;
    }
    serde_json::from_str(t).ok()
}

/// Of a line a terminal would have overwritten with `\r`, the last
/// non-empty part, without trailing blanks.
fn overwritten(line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let last = line
        .rsplit('\r')
        .find(|part| !part.is_empty())
        .unwrap_or("");
    last.trim_end().to_string()
}

/// The line loopwatch ends the log of its own run with (docs/protocol.md §5b).
static LOOPWATCH_END: LazyLock<Regex> = static_regex!(
    r"^\[loopwatch: `(.+)` (?:exited|killed|ended|stopped)\b.* after \d+(?:\.\d+)? s\]$"
);

/// The words of the command whose output the log is, when its last
/// non-empty line is the one loopwatch ends its own runs' logs with.
pub(super) fn loopwatch_command(lines: &[String]) -> Option<Vec<String>> {
    let last = lines.iter().rev().find(|l| !l.trim().is_empty())?;
    let c = LOOPWATCH_END.captures(last)?;
    shlex::split(&c[1])
}

/// The one test file a `node --test` command ran, when it is its last word
/// (loopwatch's own one-test command).
pub(super) fn node_file(command: &[String]) -> Option<String> {
    let mut words = command
        .iter()
        .skip_while(|w| w.split_once('=').is_some_and(|(k, _)| is_env_name(k)));
    let program = words.next()?;
    let base = program.rsplit('/').next().unwrap_or(program);
    let rest: Vec<&String> = words.collect();
    let last = rest.last()?;
    let ok = base == "node"
        && rest.iter().any(|w| *w == "--test")
        && !last.starts_with('-')
        && is_file(last);
    ok.then(|| last.strip_prefix("./").unwrap_or(last).to_string())
}

fn is_env_name(k: &str) -> bool {
    !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Extensions of a test file's name (the file part of a reference).
const SOURCE_EXTENSIONS: [&str; 21] = [
    "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "py", "rs", "go", "java", "kt", "kts",
    "swift", "rb", "php", "cs", "scala", "m", "mm",
];

/// A segment names a file: it holds a `/` or ends in a source extension.
pub(super) fn is_file(segment: &str) -> bool {
    !segment.contains(' ')
        && (segment.contains('/')
            || segment
                .rsplit_once('.')
                .is_some_and(|(stem, ext)| !stem.is_empty() && SOURCE_EXTENSIONS.contains(&ext)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_overwrites_and_go_events_are_removed() {
        let log = "\u{1b}[32mtest a ... \u{1b}[0mok\r\nprogress 10%\rprogress 100%\r\n\u{1b}]0;title\u{7}x";
        assert_eq!(clean_lines(log), ["test a ... ok", "progress 100%", "x"]);
        let go = "{\"Action\":\"run\",\"Test\":\"TestA\"}\n{\"Action\":\"output\",\"Test\":\"TestA\",\"Output\":\"--- PASS: Te\"}\n{\"Action\":\"output\",\"Output\":\"stA (0.00s)\\nok  \\tx\\t0.1s\\n\"}\nFAIL\tx/y [build failed]\n";
        assert_eq!(
            clean_lines(go),
            [
                "--- PASS: TestA (0.00s)",
                "ok  \tx\t0.1s",
                "FAIL\tx/y [build failed]",
                ""
            ]
        );
    }

    #[test]
    fn the_command_of_loopwatchs_own_run_is_read_from_its_last_line() {
        let lines: Vec<String> = [
            "✔ a (1ms)",
            "",
            "[loopwatch: `NO_X=1 node --test --test-name-pattern '^a b$' test/a.test.mjs` killed by SIGSEGV (not sent by loopwatch) after 0.3 s]",
            "",
        ]
        .map(str::to_string)
        .to_vec();
        let cmd = loopwatch_command(&lines).unwrap();
        assert_eq!(node_file(&cmd).as_deref(), Some("test/a.test.mjs"));
        assert_eq!(loopwatch_command(&lines[..2]), None);
        let other = shlex::split("cargo test --test a x -- --exact").unwrap();
        assert_eq!(node_file(&other), None);
    }
}

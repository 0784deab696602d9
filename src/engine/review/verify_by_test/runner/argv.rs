//! The words of `[run] test` read the way each runner reads them: which
//! options take a value (separate or after `=`), which take one only when
//! the next word is not an option, which are flags; what is a positional
//! (a file or name filter). loopwatch keeps every option with its value
//! except those that choose the tests or the report it needs, which it
//! replaces; positionals are the user's selection and are replaced too.
//!
//! The tables follow each runner's own parser: argparse (pytest), yargs
//! (jest), cac/mri (vitest), Go's flag package, node's option parser,
//! cargo's clap and libtest's getopts. For parsers that give an unknown
//! option the next word (mri, yargs), so does [`split`].

mod tables;

pub use tables::{
    CARGO, CARGO_REPLACED, GO, GO_REPLACED, JEST, JEST_REPLACED, LIBTEST, LIBTEST_REPLACED,
    NEXTEST, NEXTEST_CARGO, NODE, NODE_REPLACED, PYTEST, PYTEST_REPLACED, VITEST, VITEST_REPLACED,
};

/// One option or positional of a command line, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The option's name (`--reporter`, `-k`), empty for a positional.
    pub name: String,
    /// Its value, when it has one.
    pub value: Option<String>,
    /// The words it was written as (one, or the option and its value).
    pub words: Vec<String>,
}

impl Arg {
    /// A positional (a file or a filter).
    pub fn is_positional(&self) -> bool {
        self.name.is_empty()
    }
}

/// How a runner reads its options.
pub struct Table {
    /// Options that always take a value.
    pub value: &'static [&'static str],
    /// Options whose value is optional: the next word is theirs unless it
    /// starts with `-` (argparse's `nargs='?'`, cac's `[value]`).
    pub optional: &'static [&'static str],
    /// Flags: never the next word (unless `true`/`false` with `bool_words`).
    pub flags: &'static [&'static str],
    /// An option the table does not know takes the next word when it is
    /// not an option (mri, yargs); else it is a flag.
    pub unknown_takes_value: bool,
    /// A flag may be followed by `true` or `false` (yargs).
    pub bool_words: bool,
    /// `-kEXPR`: a short option's value may follow it in the same word.
    pub short_attached: bool,
    /// Long options are written with one dash (`-run`, `-tags`: Go).
    pub single_dash: bool,
}

/// The options and positionals of `words` (up to a `--`, returned apart).
pub fn split(words: &[String], table: &Table) -> (Vec<Arg>, Option<Vec<String>>) {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if w == "--" {
            return (out, Some(words[i + 1..].to_vec()));
        }
        if !w.starts_with('-') || w == "-" {
            out.push(Arg {
                name: String::new(),
                value: None,
                words: vec![w.clone()],
            });
            i += 1;
            continue;
        }
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (w.clone(), None),
        };
        let key = normal(&name, table);
        if let Some(value) = inline {
            out.push(Arg {
                name,
                value: Some(value),
                words: vec![w.clone()],
            });
            i += 1;
            continue;
        }
        // `-kEXPR`, `-n4`, `-pno:cacheprovider`.
        if table.short_attached && !w.starts_with("--") && w.chars().count() > 2 {
            let short: String = w.chars().take(2).collect();
            if table.value.contains(&short.as_str()) || table.optional.contains(&short.as_str()) {
                out.push(Arg {
                    value: Some(w[short.len()..].to_string()),
                    name: short,
                    words: vec![w.clone()],
                });
                i += 1;
                continue;
            }
        }
        let next = words.get(i + 1).filter(|n| *n != "--");
        let takes = if table.value.contains(&key.as_str()) {
            next.is_some()
        } else if table.optional.contains(&key.as_str()) {
            next.is_some_and(|n| !n.starts_with('-'))
        } else if table.flags.contains(&key.as_str()) || key.starts_with("--no-") {
            table.bool_words && next.is_some_and(|n| n == "true" || n == "false")
        } else {
            table.unknown_takes_value && next.is_some_and(|n| !n.starts_with('-'))
        };
        match (takes, next) {
            (true, Some(v)) => {
                out.push(Arg {
                    name,
                    value: Some(v.clone()),
                    words: vec![w.clone(), v.clone()],
                });
                i += 2;
            }
            _ => {
                out.push(Arg {
                    name,
                    value: None,
                    words: vec![w.clone()],
                });
                i += 1;
            }
        }
    }
    (out, None)
}

/// The table key of an option: Go accepts `--flag` for `-flag`.
fn normal(name: &str, table: &Table) -> String {
    match (table.single_dash, name.strip_prefix("--")) {
        (true, Some(rest)) => format!("-{rest}"),
        _ => name.to_string(),
    }
}

/// The option's name as the table knows it (`--flag` → `-flag` for Go).
pub fn key(arg: &Arg, table: &Table) -> String {
    normal(&arg.name, table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        shlex::split(s).unwrap()
    }

    fn shown(s: &str, t: &Table) -> Vec<(String, Option<String>)> {
        split(&words(s), t)
            .0
            .into_iter()
            .map(|a| (a.name, a.value))
            .collect()
    }

    fn pair(n: &str, v: Option<&str>) -> (String, Option<String>) {
        (n.to_string(), v.map(str::to_string))
    }

    #[test]
    fn values_are_kept_with_their_options() {
        assert_eq!(
            shown(
                "--test-reporter spec --import x.mjs --test-concurrency 2 test/",
                &NODE
            ),
            [
                pair("--test-reporter", Some("spec")),
                pair("--import", Some("x.mjs")),
                pair("--test-concurrency", Some("2")),
                pair("", None),
            ]
        );
        assert_eq!(
            shown("-q -kslow -n 4 --cov src tests/ -p no:randomly", &PYTEST),
            [
                pair("-q", None),
                pair("-k", Some("slow")),
                pair("-n", Some("4")),
                pair("--cov", Some("src")),
                pair("", None),
                pair("-p", Some("no:randomly")),
            ]
        );
        assert_eq!(
            shown("--cov --tb=short", &PYTEST),
            [pair("--cov", None), pair("--tb", Some("short"))]
        );
        // mri: an unknown option takes the next word; a known flag does not.
        assert_eq!(
            shown("--coverage src/ --pool threads --maxWorkers 2", &VITEST),
            [
                pair("--coverage", None),
                pair("", None),
                pair("--pool", Some("threads")),
                pair("--maxWorkers", Some("2")),
            ]
        );
        // yargs: a flag may take true or false.
        assert_eq!(
            shown("--verbose false --ci src", &JEST),
            [
                pair("--verbose", Some("false")),
                pair("--ci", None),
                pair("", None)
            ]
        );
        assert_eq!(
            shown("-race --tags integration -count=2 ./...", &GO),
            [
                pair("-race", None),
                pair("--tags", Some("integration")),
                pair("-count", Some("2")),
                pair("", None),
            ]
        );
        let (args, rest) = split(&words("--release -- --nocapture x"), &CARGO);
        assert_eq!(args.len(), 1);
        assert_eq!(rest.unwrap(), ["--nocapture", "x"]);
    }
}

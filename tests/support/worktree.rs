//! A throwaway worktree holding the e2e fixtures, and the real binary run in it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_loopwatch");

/// `record run-start` on the fixtures' contract, as a feature run.
pub const RUN_START: [&str; 6] = [
    "record",
    "run-start",
    "--flow",
    "feat",
    "--contract",
    "contract.md",
];

/// `ask unverifiable --subject <subject> --summary <summary>`: opens a
/// manual gate.
pub fn ask_unverifiable<'a>(subject: &'a str, summary: &'a str) -> [&'a str; 6] {
    [
        "ask",
        "unverifiable",
        "--subject",
        subject,
        "--summary",
        summary,
    ]
}

/// `record gate <gate> --output <output>`: records a gate's output.
pub fn record_gate<'a>(gate: &'a str, output: &'a str) -> [&'a str; 5] {
    ["record", "gate", gate, "--output", output]
}

/// `decide <gate> <decision> --reason <reason>`: a person's decision.
pub fn decide<'a>(gate: &'a str, decision: &'a str, reason: &'a str) -> [&'a str; 5] {
    ["decide", gate, decision, "--reason", reason]
}

/// A temp folder that looks like a git worktree, with the fixtures copied in.
pub struct Worktree {
    _dir: tempfile::TempDir,
    /// Its root.
    pub root: PathBuf,
}

impl Worktree {
    /// A worktree with every file of `tests/fixtures/e2e` at its root.
    pub fn new() -> Worktree {
        Worktree::from_fixtures("e2e", None)
    }

    /// A worktree (an empty `.git` marks its root) holding the files of
    /// `tests/fixtures/<folder>`: the ones named, or all of them.
    pub fn from_fixtures(folder: &str, names: Option<&[&str]>) -> Worktree {
        let dir = tempfile::tempdir().expect("temp worktree");
        let root = dir.path().join("wt");
        std::fs::create_dir_all(root.join(".git")).expect("create .git");
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(folder);
        for entry in std::fs::read_dir(&fixtures).expect("read the fixtures") {
            let entry = entry.expect("fixture entry");
            let name = entry.file_name();
            if names.is_none_or(|n| n.iter().any(|x| name == **x)) {
                std::fs::copy(entry.path(), root.join(&name)).expect("copy a fixture");
            }
        }
        Worktree { _dir: dir, root }
    }

    /// Runs the binary here (as user `dana`, with a short lock wait) and
    /// returns what it did.
    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(&self.root)
            .env("LOOPWATCH_USER", "dana")
            .env("LOOPWATCH_LOCK_TIMEOUT", "0.3")
            .env_remove("LOOPWATCH_PIPELINE")
            .output()
            .expect("run loopwatch")
    }

    /// Writes a file into the worktree; returns its name.
    pub fn write(&self, name: &str, text: &str) -> String {
        std::fs::write(self.root.join(name), text).unwrap_or_else(|e| panic!("write {name}: {e}"));
        name.to_string()
    }

    /// The journal's bytes (empty when there is none).
    pub fn journal(&self) -> Vec<u8> {
        std::fs::read(self.root.join(".pipeline/events.jsonl")).unwrap_or_default()
    }

    /// Runs the binary here; fails the test, showing stdout and stderr,
    /// unless it exits with `code`.
    pub fn expect(&self, args: &[&str], code: i32) -> Output {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "loopwatch {args:?}\nstdout:\n{}\nstderr:\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        out
    }

    /// [`Worktree::expect`], returning stdout.
    pub fn lw(&self, args: &[&str], code: i32) -> String {
        text(&self.expect(args, code).stdout)
    }

    /// `record run-start` on the fixture contract, then `extra` arguments;
    /// fails the test unless it succeeds.
    pub fn start_run_with(&self, extra: &[&str]) {
        self.lw(&[&RUN_START[..], extra].concat(), 0);
    }

    /// `record run-start` on the fixture contract.
    pub fn start_run(&self) {
        self.start_run_with(&[]);
    }

    /// GATE 0 on the fixture contract (MET).
    pub fn gate0(&self) {
        self.lw(&["gate0", "run", "contract.md"], 0);
    }

    /// GATE 1 with an out-of-scope file: opens `hg-1-conformity-1`.
    pub fn conformity_out_of_scope(&self) {
        self.lw(&record_gate("conformity", "conformity-ecarts.txt"), 10);
    }

    /// The command line that opens the TUI on this worktree.
    pub fn watch_command(&self) -> String {
        format!("{} watch '{}'", BIN, self.root.display())
    }

    /// A file of the worktree, read as text.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.root.join(name)).unwrap_or_else(|e| panic!("read {name}: {e}"))
    }
}

/// The loop fixture's worktree with its run started.
pub fn started_loop() -> Worktree {
    let w = Worktree::from_fixtures("loop", Some(&["contract.md"]));
    w.start_run();
    w
}

/// Fails the test, showing `text`, unless `text` contains `needle`.
#[track_caller]
pub fn assert_has(text: &str, needle: &str) {
    assert!(text.contains(needle), "{needle:?} is not in:\n{text}");
}

/// Bytes a command printed, as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

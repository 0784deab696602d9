//! A tmux server of its own per test: one detached session whose pane runs
//! the command under test, kept on screen after it exits (`remain-on-exit`)
//! so its exit status and the terminal it left behind can be read. Every
//! wait polls the pane against a deadline and fails with the last screen;
//! the server is killed when the [`Session`] is dropped.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How long a wait lasts before the test fails (generous: a passing test
/// never waits this long, and the machine may be busy building).
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Pause between two polls of the pane.
const POLL: Duration = Duration::from_millis(15);

static NEXT_SOCKET: AtomicU32 = AtomicU32::new(0);

/// One tmux server with one session `S` of one pane. Its socket lives in
/// the session's temp folder (`tmux -S`, a unique name per test like
/// `-L`, but removed with the folder instead of left in /tmp).
pub struct Session {
    socket: PathBuf,
    dir: tempfile::TempDir,
}

/// Polls `probe` until it returns `Some`, or fails after `within` naming `what`
/// and the last value `describe` gives.
pub fn poll<T>(
    what: &str,
    within: Duration,
    mut probe: impl FnMut() -> Option<T>,
    describe: impl Fn() -> String,
) -> T {
    let end = Instant::now() + within;
    loop {
        if let Some(v) = probe() {
            return v;
        }
        if Instant::now() >= end {
            panic!(
                "timed out after {within:?} waiting for {what}\n--- last seen ---\n{}",
                describe()
            );
        }
        std::thread::sleep(POLL);
    }
}

impl Session {
    /// Starts a server and a `cols` x `rows` session running `command`
    /// (through `sh -c`) with `env` added to its environment.
    pub fn start(cols: u16, rows: u16, command: &str, env: &[(&str, &str)]) -> Session {
        let dir = tempfile::tempdir().expect("temp dir for the tmux config");
        let conf = dir.path().join("tmux.conf");
        std::fs::write(
            &conf,
            "set -g remain-on-exit on\nset -g status off\nset -g history-limit 2000\n",
        )
        .expect("write tmux.conf");
        let n = NEXT_SOCKET.fetch_add(1, Ordering::SeqCst);
        let socket = dir
            .path()
            .join(format!("lw-e2e-{}-{n}", std::process::id()));
        let session = Session { socket, dir };
        let (cols, rows) = (cols.to_string(), rows.to_string());
        let mut args = vec!["-f".to_string(), conf.display().to_string()];
        args.extend(["new-session", "-d", "-s", "S", "-x", &cols, "-y", &rows].map(String::from));
        for (k, v) in env {
            args.push("-e".into());
            args.push(format!("{k}={v}"));
        }
        // tmux sometimes marks a pane dead without ever learning its exit
        // status; the shell records it itself on the way out.
        args.push(format!(
            "trap 'printf %s \"$?\" > \"{}\"' EXIT; {command}",
            session.status_path().display()
        ));
        let out = session.tmux_raw(&args);
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        session
    }

    /// Like [`Session::start`], but every byte the pane writes from the first
    /// one on is also recorded (see [`Session::raw_output`]): the command
    /// waits for a line on its terminal until the recording is on.
    pub fn start_recorded(cols: u16, rows: u16, command: &str, env: &[(&str, &str)]) -> Session {
        let ready = format!("read _ready; {command}");
        let s = Session::start(cols, rows, &ready, env);
        let log = s.raw_log_path();
        s.run(&[
            "pipe-pane",
            "-o",
            "-t",
            "S",
            &format!("cat >> '{}'", log.display()),
        ]);
        s.send(&["Enter"]);
        s
    }

    /// Every byte the pane wrote, for a session started with [`Session::start_recorded`].
    pub fn raw_output(&self) -> Vec<u8> {
        std::fs::read(self.raw_log_path()).unwrap_or_default()
    }

    /// Runs a tmux command on this server; fails the test if tmux refuses it.
    pub fn run(&self, args: &[&str]) -> String {
        let out = self.tmux(args);
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs a tmux command on this server and returns what it did.
    pub fn tmux(&self, args: &[&str]) -> Output {
        let args: Vec<String> = args.iter().map(|s| (*s).to_string()).collect();
        self.tmux_raw(&args)
    }

    /// The visible screen, one line per row (trailing blanks trimmed by tmux).
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "S"])
    }

    /// The screen with the scrollback above it (tmux scrolls the screen up
    /// a line to print "Pane is dead" at the bottom).
    pub fn history(&self) -> String {
        self.run(&["capture-pane", "-p", "-S", "-", "-t", "S"])
    }

    /// A tmux format (`#{pane_title}`) expanded for the pane.
    pub fn display(&self, format: &str) -> String {
        self.run(&["display-message", "-p", "-t", "S", format])
            .trim_end_matches('\n')
            .to_string()
    }

    /// Sends keys by tmux name (`Enter`, `C-s`, `q`).
    pub fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "S"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Types text literally.
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "S", "-l", text]);
    }

    /// Resizes the window.
    pub fn resize(&self, cols: u16, rows: u16) {
        self.run(&[
            "resize-window",
            "-t",
            "S",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
        ]);
    }

    /// The process the pane started.
    pub fn pane_pid(&self) -> u32 {
        let pid = self.display("#{pane_pid}");
        pid.parse()
            .unwrap_or_else(|_| panic!("pane_pid is not a number: {pid:?}"))
    }

    /// True while the terminal is on the alternate screen.
    pub fn alternate_on(&self) -> bool {
        self.display("#{alternate_on}") == "1"
    }

    /// Waits until the screen satisfies `pred`; returns that screen.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.wait_for_within(what, DEADLINE, pred)
    }

    /// [`Session::wait_for`] with its own deadline.
    pub fn wait_for_within(
        &self,
        what: &str,
        within: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        poll(
            what,
            within,
            || {
                let s = self.screen();
                pred(&s).then_some(s)
            },
            || self.screen(),
        )
    }

    /// Waits until the pane's command has exited; returns its exit status
    /// (fails the test if a signal killed it).
    pub fn wait_dead(&self) -> i32 {
        let status = poll(
            "the pane's command to exit",
            DEADLINE,
            || {
                let v = self.display("#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}");
                let mut parts = v.split(':');
                let (dead, status, signal) = (parts.next()?, parts.next()?, parts.next()?);
                if dead != "1" {
                    return None;
                }
                // The status the shell recorded, else what tmux learned.
                if let Ok(recorded) = std::fs::read_to_string(self.status_path()) {
                    return Some((recorded.trim().to_string(), String::new()));
                }
                (!status.is_empty() || !signal.is_empty())
                    .then(|| (status.to_string(), signal.to_string()))
            },
            || self.screen(),
        );
        match status {
            (s, sig) if s.is_empty() => panic!(
                "the pane's command was killed by signal {sig}\n{}",
                self.screen()
            ),
            (s, _) => s
                .parse()
                .unwrap_or_else(|_| panic!("exit status is not a number: {s:?}")),
        }
    }

    fn status_path(&self) -> PathBuf {
        self.dir.path().join("pane.status")
    }

    fn raw_log_path(&self) -> PathBuf {
        self.dir.path().join("pane.raw")
    }

    fn tmux_raw(&self, args: &[String]) -> Output {
        // The server (started by the first call) passes this environment
        // on: no user configuration, no pipeline chosen from outside.
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .env_remove("LOOPWATCH_PIPELINE")
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .output()
            .expect("tmux must be installed to run the end-to-end tests (.ci/run installs it)")
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

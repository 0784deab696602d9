//! The real binary in a pseudo-terminal: a reader thread feeds everything it
//! prints into a terminal emulator, and the benchmark polls the screen text,
//! sends keys, and reads the process's counters from `/proc`.

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

/// A child process on a pty, with the screen it drew.
pub struct Session {
    child: Box<dyn Child + Send + Sync>,
    _master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    screen: Arc<Mutex<vt100::Parser>>,
    pid: u32,
}

impl Session {
    /// `loopwatch watch <root>` run in `root`, as [`Session::spawn`] runs it.
    pub fn watch(
        bin: &str,
        root: &Path,
        config_home: &Path,
        cols: u16,
        rows: u16,
    ) -> anyhow::Result<Session> {
        let arg = root.to_string_lossy();
        Session::spawn(bin, &["watch", &arg], root, config_home, cols, rows)
    }

    /// Spawns `bin args…` in `cwd` on a `cols`×`rows` pty, with a fresh
    /// config home (so no user config changes what is measured).
    pub fn spawn(
        bin: &str,
        args: &[&str],
        cwd: &Path,
        config_home: &Path,
        cols: u16,
        rows: u16,
    ) -> anyhow::Result<Session> {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| anyhow!("open a pty: {e}"))?;
        let mut cmd = CommandBuilder::new(bin);
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env("TERM", "xterm-256color");
        cmd.env("XDG_CONFIG_HOME", config_home);
        cmd.env_remove("NO_COLOR");
        let child = pair
            .slave
            .spawn_command(cmd)
            .map_err(|e| anyhow!("spawn {bin} on a pty: {e}"))?;
        drop(pair.slave);
        let pid = child.process_id().context("the child has no pid")?;
        let mut reader = pair
            .master
            .try_clone_reader()
            .map_err(|e| anyhow!("pty reader: {e}"))?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|e| anyhow!("pty writer: {e}"))?;
        let (r, c) = (
            NonZeroU16::new(rows).context("zero rows")?,
            NonZeroU16::new(cols).context("zero columns")?,
        );
        let screen = Arc::new(Mutex::new(vt100::Parser::new(r, c, 0)));
        let feed = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 16 * 1024];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => match feed.lock() {
                        Ok(mut p) => p.process(&buf[..n]),
                        Err(_) => break,
                    },
                }
            }
        });
        Ok(Session {
            child,
            _master: pair.master,
            writer,
            screen,
            pid,
        })
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The screen's text now.
    pub fn text(&self) -> String {
        self.screen
            .lock()
            .map(|p| p.screen().contents())
            .unwrap_or_default()
    }

    /// Polls the screen (every `step`) until it contains `needle`; the time
    /// it took, or an error with the screen at the deadline.
    pub fn wait_for(
        &self,
        needle: &str,
        deadline: Duration,
        step: Duration,
    ) -> anyhow::Result<Duration> {
        let t = Instant::now();
        loop {
            if self.text().contains(needle) {
                return Ok(t.elapsed());
            }
            if t.elapsed() > deadline {
                anyhow::bail!(
                    "'{needle}' not on screen after {deadline:?}; screen:\n{}",
                    self.text()
                );
            }
            std::thread::sleep(step);
        }
    }

    /// Types bytes (keys) into the pty.
    pub fn send(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        self.writer.write_all(bytes).context("write to the pty")?;
        self.writer.flush().context("flush the pty")
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// CPU time (user + system) a process has used so far.
pub fn cpu_time(pid: u32) -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("read /proc/{pid}/stat"))?;
    // The command name may hold spaces: fields are counted after its ')'.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .context("no ')' in /proc/pid/stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After ')': state is field 3 of the man page, so utime (14) and stime (15) are at 11 and 12.
    let ticks: u64 = [11, 12]
        .iter()
        .map(|&i| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        })
        .sum();
    Ok(Duration::from_secs_f64(ticks as f64 / clock_ticks() as f64))
}

/// A `VmHWM`-style line of `/proc/<pid>/status`, in bytes.
pub fn status_bytes(pid: u32, key: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("read /proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|l| l.starts_with(key))
        .with_context(|| format!("no {key} in /proc/{pid}/status"))?;
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("bad line: {line}"))?;
    Ok(kb * 1024)
}

/// Clock ticks per second of `/proc` CPU counters.
fn clock_ticks() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}

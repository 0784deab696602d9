//! A pseudo-terminal for the tests that read the raw bytes the TUI writes
//! (titles, OSC notifications, focus reporting): the binary runs as the
//! session leader on the slave side, a thread drains the master into a
//! buffer, and the test types into the master. Built on `rustix`, which the
//! crate already uses, and util-linux's `setsid`, so no pty crate is
//! compiled for `cargo test`.

use std::fs::File;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::fd::{AsFd, OwnedFd};
use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};

/// A child on a pty: everything it printed, and a way to type into it.
pub struct Pty {
    bytes: Arc<Mutex<Vec<u8>>>,
    writer: File,
    child: Child,
}

impl Pty {
    /// Starts `cmd` on a fresh `rows` × `cols` pty as its controlling terminal.
    pub fn spawn(cmd: Command, rows: u16, cols: u16) -> Pty {
        let master =
            openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).expect("openpt");
        grantpt(&master).expect("grantpt");
        unlockpt(&master).expect("unlockpt");
        let name = ptsname(&master, Vec::new()).expect("ptsname");
        let slave: OwnedFd = File::options()
            .read(true)
            .write(true)
            .open(name.to_str().expect("pts name"))
            .expect("open the pty's slave")
            .into();
        rustix::termios::tcsetwinsize(
            &slave,
            rustix::termios::Winsize {
                ws_row: rows,
                ws_col: cols,
                ws_xpixel: 0,
                ws_ypixel: 0,
            },
        )
        .expect("window size");
        // `setsid --ctty` makes the child a session leader with the pty as
        // its controlling terminal (the crate forbids `unsafe`, so no
        // pre_exec); `--wait` keeps its exit status ours to read.
        let mut run = Command::new("setsid");
        run.args(["--wait", "--ctty"])
            .arg(cmd.get_program())
            .args(cmd.get_args());
        if let Some(dir) = cmd.get_current_dir() {
            run.current_dir(dir);
        }
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => run.env(k, v),
                None => run.env_remove(k),
            };
        }
        let io = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("dup the slave"));
        run.stdin(io(&slave)).stdout(io(&slave)).stderr(io(&slave));
        let child = run.spawn().expect("spawn on the pty");
        drop(slave);
        let mut reader = File::from(master.as_fd().try_clone_to_owned().expect("dup master"));
        let writer = File::from(master);
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let sink = bytes.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // EIO once the child side is closed ends the loop.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pty {
            bytes,
            writer,
            child,
        }
    }

    /// True when `needle` was printed.
    pub fn has(&self, needle: &[u8]) -> bool {
        let b = self.bytes.lock().unwrap();
        b.windows(needle.len()).any(|w| w == needle)
    }

    /// Waits until `needle` is printed (30 s, then fails with what was).
    pub fn wait_for(&self, needle: &[u8]) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.has(needle) {
            assert!(
                Instant::now() < deadline,
                "{:?} never printed; got {:?}",
                String::from_utf8_lossy(needle),
                String::from_utf8_lossy(&self.bytes.lock().unwrap())
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `bytes`.
    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    /// True once the child has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Everything printed so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.bytes.lock().unwrap().clone()
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if !self.exited() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

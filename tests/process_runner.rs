//! The process runner with its supervisor (the real `loopwatch` binary):
//! children that outlive the thread that started them, trees that detach
//! (`setsid`, a double-forked daemon) stopped whole after a normal end, a
//! deadline and a stop, hostile output, programs that cannot start, and no
//! other way of starting a process in the product code.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use loopwatch::process::{Command, Exit, LogFile, Sink, SpawnError, Stop};
use support::engine::poll;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loopwatch"))
}

fn sh(dir: &Path, script: &str) -> Command {
    Command::new("sh", dir)
        .args(["-c", script])
        .supervisor(bin())
        .grace(Duration::from_millis(300))
}

/// True while `pid` runs (a zombie does not).
fn alive(pid: u32) -> bool {
    loopwatch::process::tree::alive(pid)
}

/// Waits (bounded) for a file to hold a pid, and returns it.
fn pid_in(path: &Path) -> u32 {
    let read = || std::fs::read_to_string(path).ok()?.trim().parse().ok();
    let held = poll(Duration::from_secs(20), || read().is_some());
    assert!(held, "{} never held a pid", path.display());
    read().unwrap()
}

/// Processes that detach from the agent: a grandchild in a session of its
/// own, and a daemon whose parent exited at once (a double fork). The
/// script waits for both to have written their pid, then does `then`.
fn detaching_tree(then: &str) -> String {
    format!(
        "setsid sh -c 'echo $$ > setsid.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &\n\
         sh -c 'sh -c \"echo \\$\\$ > daemon.pid; exec sleep 300\" </dev/null >/dev/null 2>&1 &' \n\
         while [ ! -s setsid.pid ] || [ ! -s daemon.pid ]; do sleep 0.01; done\n\
         {then}\n"
    )
}

fn assert_all_gone(dir: &Path, what: &str) {
    for f in ["setsid.pid", "daemon.pid"] {
        let pid = pid_in(&dir.join(f));
        assert!(
            !alive(pid),
            "{what}: the {f} process {pid} is still running"
        );
    }
}

#[test]
fn a_child_outlives_the_thread_that_started_it_and_stops_at_its_deadline() {
    let _serial = support::serial();
    let dir = tempfile::tempdir().unwrap();
    let cmd = sh(dir.path(), "sleep 12; echo survived > alive.txt; sleep 300")
        .deadline(Duration::from_secs(14));
    // Started from a thread that ends at once, as a runtime's idle worker
    // does: nothing ties the child's life to that thread.
    let running = std::thread::spawn(move || cmd.spawn().unwrap())
        .join()
        .unwrap();
    let pid = running.pid();
    let ended = running.wait();
    assert!(ended.timed_out(), "{ended:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("alive.txt")).unwrap(),
        "survived\n"
    );
    assert!(!alive(pid));
    assert!(
        ended.duration >= Duration::from_secs(14),
        "{:?}",
        ended.duration
    );
    assert!(
        ended
            .describe()
            .contains("killed by SIGTERM, sent by loopwatch at its deadline"),
        "{}",
        ended.describe()
    );
}

#[test]
fn nothing_a_child_starts_outlives_it_after_a_normal_end() {
    let _serial = support::serial();
    let dir = tempfile::tempdir().unwrap();
    let ended = sh(dir.path(), &detaching_tree("exit 0")).run().unwrap();
    assert_eq!(ended.exit, Exit::Code(0));
    assert_eq!(ended.cause, None);
    assert!(ended.leftovers >= 2, "{ended:?}");
    assert_all_gone(dir.path(), "after the child exited");
}

#[test]
fn nothing_a_child_starts_outlives_its_deadline() {
    let _serial = support::serial();
    let dir = tempfile::tempdir().unwrap();
    let ended = sh(dir.path(), &detaching_tree("sleep 300"))
        .deadline(Duration::from_secs(3))
        .run()
        .unwrap();
    assert!(ended.timed_out(), "{ended:?}");
    assert_eq!(ended.exit, Exit::Signal(15));
    assert_all_gone(dir.path(), "after the deadline");
}

#[test]
fn nothing_a_child_starts_outlives_a_stop() {
    let _serial = support::serial();
    let dir = tempfile::tempdir().unwrap();
    let stop = Stop::new();
    let running = sh(dir.path(), &detaching_tree("touch ready; sleep 300"))
        .stop(&stop)
        .spawn()
        .unwrap();
    let ready = dir.path().join("ready");
    let asker = stop.clone();
    std::thread::spawn(move || {
        while !ready.exists() {
            std::thread::yield_now();
        }
        asker.ask(143);
    });
    let ended = running.wait();
    assert_eq!(ended.stopped(), Some(143), "{ended:?}");
    assert_all_gone(dir.path(), "after the stop");
}

#[test]
fn a_child_whose_handle_is_dropped_is_stopped_with_its_tree() {
    let _serial = support::serial();
    let dir = tempfile::tempdir().unwrap();
    let running = sh(dir.path(), &detaching_tree("touch ready; sleep 300"))
        .spawn()
        .unwrap();
    let pid = running.pid();
    let ready = dir.path().join("ready");
    let got_ready = poll(Duration::from_secs(20), || ready.exists());
    assert!(got_ready, "the child never got ready");
    drop(running);
    let pids = [
        pid,
        pid_in(&dir.path().join("setsid.pid")),
        pid_in(&dir.path().join("daemon.pid")),
    ];
    let gone = poll(Duration::from_secs(5), || !pids.iter().any(|&p| alive(p)));
    assert!(gone, "still running 5 s after the drop: {pids:?}");
}

#[test]
fn hostile_output_stays_bounded_and_is_read_whole() {
    let _serial = support::serial();
    let dir = tempfile::tempdir().unwrap();
    let log = LogFile::create(&dir.path().join("a.log"), 1 << 20).unwrap();
    // 256 MiB on stdout, binary on stderr, stdin never read.
    let ended = sh(
        dir.path(),
        "head -c 268435456 /dev/zero; head -c 4096 /dev/urandom >&2",
    )
    .stdin(vec![b'i'; 8 << 20])
    .stdout(Sink::capture(1 << 20).log(&log))
    .stderr(Sink::read().tail(1024).log(&log))
    .run()
    .unwrap();
    assert!(ended.success(), "{ended:?}");
    assert_eq!(ended.stdout.total, 268_435_456);
    assert_eq!(ended.stdout.head.len(), 1 << 20);
    assert!(ended.stdout.truncated);
    assert_eq!(ended.stderr.total, 4096);
    assert_eq!(ended.stderr.tail.len(), 1024);
    let size = std::fs::metadata(dir.path().join("a.log")).unwrap().len();
    assert!(size < (1 << 20) + 200, "the log grew to {size} bytes");
    // An agent that closes its stdout at once and exits 0 with nothing.
    let ended = sh(dir.path(), "exec >&- 2>&-; sleep 0.1")
        .stdout(Sink::capture(10))
        .run()
        .unwrap();
    assert!(ended.success());
    assert_eq!(ended.stdout.total, 0);
}

#[test]
fn a_program_that_cannot_start_is_named_with_the_reason_before_anything_runs() {
    let _serial = support::serial();
    let dir = tempfile::tempdir().unwrap();
    let missing = Command::new("no-such-agent-cli", dir.path())
        .supervisor(bin())
        .spawn()
        .err()
        .expect("refused");
    assert!(
        matches!(&missing, SpawnError::Program { program, reason } if program == "no-such-agent-cli" && reason.starts_with("not found")),
        "{missing}"
    );
    let script = dir.path().join("agent.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    let not_exec = Command::new(&script, dir.path())
        .supervisor(bin())
        .spawn()
        .err()
        .expect("refused");
    assert!(
        not_exec.to_string().contains("permission denied"),
        "{not_exec}"
    );
    let no_supervisor = Command::new("true", dir.path())
        .supervisor(dir.path().join("no-loopwatch"))
        .spawn()
        .err()
        .expect("refused");
    assert!(
        matches!(no_supervisor, SpawnError::Supervisor { .. }),
        "{no_supervisor}"
    );
}

#[test]
fn a_signal_from_outside_is_told_apart_from_loopwatchs_own() {
    let _serial = support::serial();
    let dir = tempfile::tempdir().unwrap();
    let ended = sh(dir.path(), "kill -KILL $$").run().unwrap();
    assert_eq!(ended.exit, Exit::Signal(9));
    assert_eq!(ended.cause, None);
    assert_eq!(
        ended.describe(),
        "killed by SIGKILL (not sent by loopwatch)"
    );
}

/// Product code starts processes through `loopwatch::process` only.
#[test]
fn no_process_is_started_outside_the_runner() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                if !path.ends_with("process") {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|x| x != "rs")
                || path.ends_with("testkit.rs")
                || path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().contains("tests"))
            {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Unit tests at the end of a file may spawn tools to set up.
            let product = text.split("#[cfg(test)]").next().unwrap_or("");
            for (i, line) in product.lines().enumerate() {
                let other_runner = line.contains("std::process::Command")
                    || line.contains("tokio::process::")
                    || line.contains("std::process::Child")
                    || (line.contains("Command::new(") && !line.contains("process::Command::new("));
                if other_runner {
                    found.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "started outside src/process/:\n{}",
        found.join("\n")
    );
}

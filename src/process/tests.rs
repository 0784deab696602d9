//! The runner without a supervisor (a process group of its own): the
//! supervised runner, with trees that detach, is tested through the real
//! binary in tests/process_runner.rs.

use super::*;

fn sh(script: &str) -> Command {
    Command::new("sh", std::env::temp_dir())
        .args(["-c", script])
        .unsupervised()
}

#[test]
fn output_is_captured_per_stream_or_merged_in_order() {
    let e = sh("printf out; printf err >&2; exit 3")
        .stdout(Sink::capture(100))
        .stderr(Sink::capture(100).tail(2))
        .run()
        .unwrap();
    assert_eq!(e.exit, Exit::Code(3));
    assert_eq!(e.cause, None);
    assert_eq!(e.stdout.head, b"out");
    assert_eq!(e.stderr.head, b"err");
    assert_eq!(e.stderr.tail, b"rr");
    let e = sh("echo 1; echo 2 >&2; echo 3")
        .stdout(Sink::capture(100))
        .merge_stderr()
        .run()
        .unwrap();
    assert_eq!(e.stdout.head, b"1\n2\n3\n");
}

#[test]
fn stdin_is_read_at_the_childs_pace_and_a_large_output_does_not_block() {
    let input = vec![b'x'; 3 << 20];
    let e = sh("sleep 0.1; cat")
        .stdin(input.clone())
        .stdout(Sink::capture(1 << 20))
        .run()
        .unwrap();
    assert!(e.success());
    assert_eq!(e.stdout.total, input.len() as u64);
    assert_eq!(e.stdout.head.len(), 1 << 20);
    assert!(e.stdout.truncated);
    // A child that never reads its stdin is not held up by it.
    assert!(sh("exit 0").stdin(input).run().unwrap().success());
}

#[test]
fn a_deadline_stops_the_group_and_says_so() {
    let e = sh("trap '' TERM; sleep 30 & wait")
        .deadline(Duration::from_millis(200))
        .grace(Duration::from_millis(100))
        .run()
        .unwrap();
    assert!(e.timed_out(), "{e:?}");
    assert_eq!(
        e.exit,
        Exit::Signal(9),
        "TERM ignored: KILL after the grace"
    );
    assert!(e.duration < Duration::from_secs(10));
    assert!(
        e.describe().contains("sent by loopwatch at its deadline"),
        "{}",
        e.describe()
    );
}

#[test]
fn a_stop_reaches_a_running_child_and_one_started_after_it() {
    let stop = Stop::new();
    let running = sh("sleep 30").stop(&stop).spawn().unwrap();
    let pid = running.pid();
    let asker = stop.clone();
    std::thread::spawn(move || asker.ask(143));
    let e = running.wait();
    assert_eq!(e.stopped(), Some(143));
    assert_eq!(e.exit, Exit::Signal(15));
    assert!(!tree::alive(pid));
    let e = sh("sleep 30").stop(&stop).run().unwrap();
    assert_eq!(e.stopped(), Some(143));
}

#[test]
fn a_missing_program_is_an_error_naming_it() {
    let err = Command::new("/nonexistent/agent", std::env::temp_dir())
        .unsupervised()
        .spawn()
        .err()
        .unwrap();
    let msg = err.to_string();
    assert!(msg.contains("/nonexistent/agent"), "{msg}");
}

#[test]
fn the_working_folder_and_environment_are_the_commands_own() {
    let dir = tempfile::tempdir().unwrap();
    let e = Command::new("sh", dir.path())
        .args(["-c", "pwd; echo \"[$A][$HOME]\""])
        .env_clear()
        .env("A", "1")
        .unsupervised()
        .stdout(Sink::capture(1000))
        .run()
        .unwrap();
    let text = String::from_utf8(e.stdout.head).unwrap();
    let real = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(text, format!("{}\n[1][]\n", real.display()));
}

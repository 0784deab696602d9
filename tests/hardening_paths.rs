//! Paths that come from files (a repro log in `verify.result`, a gate's
//! `output`, the run's `contract`) are never trusted: `read_tail` refuses
//! what leaves the worktree or is not a regular file, and never blocks;
//! `recorder::contract_path` and `Pipeline::resolve_recorded` refuse `..`
//! and absolute paths outside the worktree.

use std::path::{Path, PathBuf};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use loopwatch::journal::{Pipeline, TAIL_BYTES, read_tail};
use loopwatch::recorder::contract_path;
use rustix::fs::{CWD, FileType, Mode, mkfifoat, mknodat};

struct Tree {
    _dir: tempfile::TempDir,
    outside: PathBuf,
    wt: PathBuf,
    p: Pipeline,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let wt = base.join("wt");
    std::fs::create_dir_all(wt.join(".pipeline/gates")).unwrap();
    std::fs::write(base.join("secret.txt"), b"not yours").unwrap();
    std::fs::write(
        wt.join(".pipeline/gates/1-floor-1.out"),
        b"GATES \xe2\x80\x94 VERDICT: MET\n",
    )
    .unwrap();
    Tree {
        _dir: dir,
        outside: base.join("secret.txt"),
        p: Pipeline::at(wt.join(".pipeline")),
        wt,
    }
}

/// Runs `read_tail` on a thread; it must answer within a second.
fn tail_within_a_second(p: &Pipeline, path: &Path) -> Result<Vec<u8>, String> {
    let (tx, rx) = channel();
    let (p, path) = (p.clone(), path.to_path_buf());
    let started = Instant::now();
    std::thread::spawn(move || {
        let _ = tx.send(read_tail(&p, &path, TAIL_BYTES).map_err(|e| e.to_string()));
    });
    let r = rx
        .recv_timeout(Duration::from_secs(1))
        .expect("read_tail blocked for a second");
    eprintln!("read_tail answered in {:?}", started.elapsed());
    r
}

fn refused(t: &Tree, path: &Path) -> String {
    tail_within_a_second(&t.p, path).expect_err("must be refused")
}

#[test]
fn a_regular_file_inside_is_read_and_a_huge_one_costs_its_tail() {
    let t = tree();
    let out = t.wt.join(".pipeline/gates/1-floor-1.out");
    assert_eq!(
        tail_within_a_second(&t.p, &out).unwrap(),
        b"GATES \xe2\x80\x94 VERDICT: MET\n"
    );
    let big = t.wt.join(".pipeline/verify-1.test.log");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(1 << 30).unwrap();
    assert_eq!(
        tail_within_a_second(&t.p, &big).unwrap().len(),
        TAIL_BYTES as usize
    );
}

#[test]
fn dot_dot_absolute_and_symlinks_out_are_refused_with_the_reason() {
    let t = tree();
    let dotdot = t.wt.join(".pipeline/../../secret.txt");
    assert_eq!(
        refused(&t, &dotdot),
        format!(
            "refused: {} resolves outside the worktree",
            dotdot.display()
        )
    );
    assert_eq!(
        refused(&t, &t.outside),
        format!(
            "refused: {} resolves outside the worktree",
            t.outside.display()
        )
    );
    let etc = Path::new("/etc/hostname");
    assert_eq!(
        refused(&t, etc),
        "refused: /etc/hostname resolves outside the worktree"
    );
    let link = t.wt.join(".pipeline/gates/link.out");
    std::os::unix::fs::symlink(&t.outside, &link).unwrap();
    assert_eq!(
        refused(&t, &link),
        format!("refused: {} resolves outside the worktree", link.display())
    );
    let dir_link = t.wt.join(".pipeline/up");
    std::os::unix::fs::symlink(t.wt.parent().unwrap(), &dir_link).unwrap();
    let through = dir_link.join("secret.txt");
    assert_eq!(
        refused(&t, &through),
        format!(
            "refused: {} resolves outside the worktree",
            through.display()
        )
    );
    let missing = t.wt.join(".pipeline/gates/none.out");
    assert!(refused(&t, &missing).starts_with(&format!("cannot open {}: ", missing.display())));
}

#[test]
fn fifos_devices_and_directories_are_refused_at_once() {
    let t = tree();
    let fifo = t.wt.join(".pipeline/verify-1.test.log");
    mkfifoat(CWD, &fifo, Mode::from_raw_mode(0o600)).unwrap();
    assert_eq!(
        refused(&t, &fifo),
        format!("refused: {} is not a regular file", fifo.display())
    );

    assert_eq!(
        refused(&t, Path::new("/dev/zero")),
        "refused: /dev/zero resolves outside the worktree"
    );
    let zero_link = t.wt.join(".pipeline/zero.log");
    std::os::unix::fs::symlink("/dev/zero", &zero_link).unwrap();
    assert_eq!(
        refused(&t, &zero_link),
        format!(
            "refused: {} resolves outside the worktree",
            zero_link.display()
        )
    );
    // The same device made inside the worktree (the suite runs as root).
    let zero = t.wt.join(".pipeline/zero.dev");
    mknodat(
        CWD,
        &zero,
        FileType::CharacterDevice,
        Mode::from_raw_mode(0o600),
        rustix::fs::makedev(1, 5),
    )
    .expect("mknod (the hardening suite runs as root)");
    assert_eq!(
        refused(&t, &zero),
        format!("refused: {} is not a regular file", zero.display())
    );

    let dir = t.wt.join(".pipeline/gates");
    assert_eq!(
        refused(&t, &dir),
        format!("refused: {} is not a regular file", dir.display())
    );
}

#[test]
fn recorded_paths_that_leave_are_refused() {
    let t = tree();
    for bad in ["../secret.txt", "gates/../../secret.txt", "/etc/passwd"] {
        assert!(t.p.resolve_recorded(bad).is_err(), "{bad}");
    }
    assert_eq!(
        t.p.resolve_recorded("gates/1-floor-1.out").unwrap(),
        t.wt.join(".pipeline/gates/1-floor-1.out")
    );

    assert_eq!(
        contract_path(&t.wt, "docs/contract.md").unwrap(),
        t.wt.join("docs/contract.md")
    );
    let inside = t.wt.join("docs/contract.md");
    assert_eq!(
        contract_path(&t.wt, inside.to_str().unwrap()).unwrap(),
        inside
    );
    assert_eq!(
        contract_path(&t.wt, "../contract.md")
            .unwrap_err()
            .to_string(),
        "contract path refused: ../contract.md leaves the worktree"
    );
    assert_eq!(
        contract_path(&t.wt, "docs/../../contract.md")
            .unwrap_err()
            .to_string(),
        "contract path refused: docs/../../contract.md leaves the worktree"
    );
    assert_eq!(
        contract_path(&t.wt, "/etc/passwd").unwrap_err().to_string(),
        format!(
            "contract path refused: /etc/passwd is outside the worktree {}",
            t.wt.display()
        )
    );
    let sneaky = format!("{}/../contract.md", t.wt.display());
    assert_eq!(
        contract_path(&t.wt, &sneaky).unwrap_err().to_string(),
        format!("contract path refused: {sneaky} leaves the worktree")
    );
}

#[test]
fn a_contract_symlinked_out_of_the_worktree_is_refused_and_one_inside_followed() {
    let t = tree();
    std::os::unix::fs::symlink(&t.outside, t.wt.join("contract.md")).unwrap();
    assert_eq!(
        contract_path(&t.wt, "contract.md").unwrap_err().to_string(),
        "contract path refused: contract.md resolves outside the worktree"
    );
    std::fs::create_dir(t.wt.join("docs")).unwrap();
    std::fs::write(t.wt.join("docs/real.md"), b"# CONTRACT\n").unwrap();
    std::os::unix::fs::symlink("docs/real.md", t.wt.join("linked.md")).unwrap();
    assert_eq!(
        contract_path(&t.wt, "linked.md").unwrap(),
        t.wt.join("linked.md")
    );
}

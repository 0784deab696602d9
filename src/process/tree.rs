//! Processes as `/proc` shows them: the descendants of a process (its
//! tree), the processes carrying a dispatch's marker, and stopping a set of
//! them the one way loopwatch stops anything: TERM (and CONT, so a stopped
//! process gets it), a grace period, then KILL until none is left.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// One process of `/proc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    /// Its id.
    pub pid: u32,
    /// Its parent's.
    pub ppid: u32,
    /// Its process group's.
    pub pgid: u32,
    /// A zombie (ended, not yet reaped): nothing left to stop.
    pub zombie: bool,
}

/// Every process visible in `/proc`.
pub fn all() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(read)
        .collect()
}

/// `/proc/<pid>/stat`: the fields after the parenthesised command name
/// (which may itself hold spaces and parentheses).
pub fn read(pid: u32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let state = f.next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgid = f.next()?.parse().ok()?;
    Some(Proc {
        pid,
        ppid,
        pgid,
        zombie: matches!(state, "Z" | "X"),
    })
}

/// The live (not zombie) descendants of `root`, `root` left out.
pub fn descendants(root: u32) -> Vec<u32> {
    descendants_in(&all(), root)
}

fn descendants_in(procs: &[Proc], root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<&Proc>> = HashMap::new();
    for p in procs {
        children.entry(p.ppid).or_default().push(p);
    }
    let mut out = Vec::new();
    let mut queue = vec![root];
    let mut seen = HashSet::from([root]);
    while let Some(parent) = queue.pop() {
        for c in children.get(&parent).into_iter().flatten() {
            if seen.insert(c.pid) {
                if !c.zombie {
                    out.push(c.pid);
                }
                queue.push(c.pid);
            }
        }
    }
    out
}

/// True while `pid` runs (a zombie does not).
pub fn alive(pid: u32) -> bool {
    read(pid).is_some_and(|p| !p.zombie)
}

/// Sends `sig` to `pid` (gone already: nothing to do).
pub fn signal(pid: u32, sig: Signal) {
    if let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::kill_process(p, sig);
    }
}

/// Sends `sig` to the process group `pgid`.
pub fn signal_group(pgid: u32, sig: Signal) {
    if let Some(p) = i32::try_from(pgid).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::kill_process_group(p, sig);
    }
}

/// Stops the processes `find` returns, asked again after each step (so a
/// process started meanwhile is found too): TERM and CONT to each, up to
/// `grace` for them to go (calling `reap` meanwhile, which collects the
/// caller's zombies), then KILL until `find` returns nothing or 5 more
/// seconds passed. Returns how many processes were signalled.
pub fn stop_all(
    mut find: impl FnMut() -> Vec<u32>,
    grace: Duration,
    mut reap: impl FnMut(),
) -> usize {
    let mut signalled: HashSet<u32> = HashSet::new();
    let until = Instant::now() + grace;
    loop {
        reap();
        let alive = find();
        if alive.is_empty() {
            return signalled.len();
        }
        for &pid in &alive {
            if signalled.insert(pid) {
                signal(pid, Signal::TERM);
                signal(pid, Signal::CONT);
            }
        }
        if Instant::now() >= until {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let alive = find();
        if alive.is_empty() || Instant::now() >= until {
            break;
        }
        for &pid in &alive {
            signalled.insert(pid);
            signal(pid, Signal::KILL);
        }
        std::thread::sleep(Duration::from_millis(2));
        reap();
    }
    reap();
    signalled.len()
}

/// The environment variable that marks every process of a dispatch:
/// `<pipeline dir>#<dispatch>`. A later engine finds and stops the
/// processes of a dead one by it, should any have outlived their
/// supervisor.
pub const MARKER_ENV: &str = "LOOPWATCH_DISPATCH";

/// Stops every process still carrying the marker of a dispatch of
/// `pipeline_dir` (left by an engine that died) with their descendants;
/// returns how many were found. Only processes of the same user are
/// visible. Blocks up to `grace` and a little.
pub fn stop_marked(pipeline_dir: &std::path::Path, grace: Duration) -> usize {
    let prefix = marker(pipeline_dir, "");
    let me = std::process::id();
    let find = || {
        let procs = all();
        let mut out: Vec<u32> = Vec::new();
        for p in procs.iter().filter(|p| !p.zombie && p.pid != me) {
            if env_marker(p.pid, &prefix).is_some() {
                out.push(p.pid);
                out.extend(descendants_in(&procs, p.pid));
            }
        }
        out.sort_unstable();
        out.dedup();
        out.retain(|&p| p != me);
        out
    };
    let found = find().len();
    if found > 0 {
        stop_all(find, grace, || {});
    }
    found
}

/// The dispatch marker in the environment of `pid` that starts with
/// `prefix` (a run's marker prefix), if it carries one.
fn env_marker(pid: u32, prefix: &str) -> Option<String> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let key = format!("{MARKER_ENV}=");
    env.split(|&b| b == 0)
        .filter_map(|kv| kv.strip_prefix(key.as_bytes()))
        .map(|m| String::from_utf8_lossy(m).into_owned())
        .find(|m| m.starts_with(prefix))
}

/// The marker of a child working for the run of `pipeline_dir`:
/// `<its canonical path>#<tag>`.
pub fn marker(pipeline_dir: &std::path::Path, tag: &str) -> String {
    let dir = std::fs::canonicalize(pipeline_dir)
        .or_else(|_| std::path::absolute(pipeline_dir))
        .unwrap_or_else(|_| pipeline_dir.to_path_buf());
    format!("{}#{tag}", dir.display())
}

/// Where a process runs on behalf of a run: the supervisor that holds it
/// and the marker it was started with (`<pipeline>#<what>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnBehalf {
    /// The supervisor's pid (0 when only the environment said so).
    pub supervisor: u32,
    /// The marker.
    pub marker: String,
}

impl OnBehalf {
    /// What it runs for: `dispatch #3`, `the repro test of F2`, `GATE 0`.
    pub fn what(&self) -> String {
        let tag = self.marker.rsplit('#').next().unwrap_or("");
        if let Ok(n) = tag.parse::<u32>() {
            format!("agent dispatch #{n}")
        } else if let Some(f) = tag.strip_prefix("verify-by-test-") {
            format!("the repro test of {f}")
        } else if let Some(f) = tag.strip_prefix("green-") {
            format!("the red-test rerun of {f}")
        } else if tag == "gate0" {
            "a GATE 0 check".into()
        } else {
            tag.to_string()
        }
    }
}

/// True when this process runs inside the tree of a child working for the
/// run of `pipeline_dir`: one of its ancestors is a supervisor started
/// `--for <pipeline_dir>#…`, or its environment carries that run's
/// dispatch marker. A child cannot leave its supervisor's tree (the
/// supervisor is its subreaper), and the supervisor's command line is not
/// the child's to change, so clearing the environment does not hide it.
pub fn dispatch_of(pipeline_dir: &std::path::Path) -> Option<OnBehalf> {
    let prefix = marker(pipeline_dir, "");
    under_supervisor(&prefix, std::process::id()).or_else(|| {
        std::env::var(MARKER_ENV)
            .ok()
            .filter(|m| m.starts_with(&prefix))
            .map(|marker| OnBehalf {
                supervisor: 0,
                marker,
            })
    })
}

/// [`dispatch_of`] for another process, `pid` (the caller at the engine's
/// door): its ancestors, and the marker in its environment.
pub fn dispatch_of_pid(pipeline_dir: &std::path::Path, pid: u32) -> Option<OnBehalf> {
    let prefix = marker(pipeline_dir, "");
    under_supervisor(&prefix, pid).or_else(|| {
        env_marker(pid, &prefix).map(|marker| OnBehalf {
            supervisor: 0,
            marker,
        })
    })
}

/// The supervisor started `--for <prefix>…` among the ancestors of `pid`.
fn under_supervisor(prefix: &str, pid: u32) -> Option<OnBehalf> {
    let mut pid = read(pid)?.ppid;
    let mut hops = 0;
    while pid > 1 && hops < 4096 {
        if let Some(marker) = supervisor_marker(pid).filter(|m| m.starts_with(prefix)) {
            return Some(OnBehalf {
                supervisor: pid,
                marker,
            });
        }
        pid = read(pid)?.ppid;
        hops += 1;
    }
    None
}

/// The `--for` marker of a supervisor process (`None` for any other).
fn supervisor_marker(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<&[u8]> = raw.split(|&b| b == 0).collect();
    if args.get(1).copied() != Some(super::supervise::SUBCOMMAND.as_bytes()) {
        return None;
    }
    let at = args
        .iter()
        .take_while(|a| **a != b"--")
        .position(|a| *a == super::supervise::FOR.as_bytes())?;
    Some(String::from_utf8_lossy(args.get(at + 1)?).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: u32, ppid: u32, zombie: bool) -> Proc {
        Proc {
            pid,
            ppid,
            pgid: pid,
            zombie,
        }
    }

    #[test]
    fn descendants_are_the_whole_subtree_but_zombies() {
        let procs = [
            p(1, 0, false),
            p(10, 1, false),
            p(11, 10, false),
            p(12, 11, true),
            p(13, 12, false),
            p(20, 1, false),
        ];
        let mut d = descendants_in(&procs, 10);
        d.sort_unstable();
        assert_eq!(d, [11, 13]);
        assert!(descendants_in(&procs, 13).is_empty());
    }

    #[test]
    fn this_process_reads_itself() {
        let me = read(std::process::id()).unwrap();
        assert_eq!(me.pid, std::process::id());
        assert!(!me.zombie);
        assert!(alive(std::process::id()));
    }
}

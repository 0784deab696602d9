//! The engine's door: while `loopwatch run` drives a pipeline, a person's
//! decision is written by the engine's process, never appended by the
//! decider itself.
//!
//! The journal is the engine's to write while it runs; its guard refuses
//! every line another writer appends, and a decision is no exception: a
//! line in the journal cannot say who wrote it, so an agent that appended a
//! well-formed `human.decided` itself would pass for a person. Instead,
//! `decide` (the command and the TUI's dialog, in any process) hands the
//! decision to the engine over a Unix socket in the abstract namespace
//! named after the pipeline. The engine asks the kernel who is calling
//! (`SO_PEERCRED`): a caller inside the tree of one of the run's children
//! (an agent, a check, a repro test, whatever it started, however it
//! detached) is refused, since every such process has the child's
//! supervisor, its subreaper, among its ancestors. Anyone else's decision
//! is recorded by the engine with the recorder's own rules, and noted in
//! the door's ledger, which the guard asks: a decision that did not come
//! through the door is foreign.
//!
//! The request is one JSON line (`{"decide": {…HumanDecision}, "evidence":
//! "…"}`), the answer one JSON line (`{"ok": {"events": […], "state":
//! {…}}}` or `{"refused": {"<why>": "…"}}`, a [`DoorRefusal`]).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{RecordError, Recorder, Refusal};
use crate::journal::{Appended, Pipeline};
use crate::model::event::HumanDecision;
use crate::model::{Event, State};

/// The most a request may hold (the evidence shown is most of it).
const MAX_REQUEST: u64 = 64 << 20;
/// How long either side waits on the other.
const PATIENCE: Duration = Duration::from_secs(60);

/// The decisions the door recorded that the guard has not seen yet.
#[derive(Debug, Clone, Default)]
pub struct Ledger(Arc<Mutex<Vec<HumanDecision>>>);

impl Ledger {
    /// True when `d` is a decision the door recorded (then forgotten: each
    /// is taken once).
    pub fn took(&self, d: &HumanDecision) -> bool {
        let Ok(mut pending) = self.0.lock() else {
            return false;
        };
        match pending.iter().position(|p| same(p, d)) {
            Some(i) => {
                pending.remove(i);
                true
            }
            None => false,
        }
    }

    fn note(&self, d: &HumanDecision) {
        if let Ok(mut pending) = self.0.lock() {
            pending.push(d.clone());
        }
    }

    fn forget(&self, d: &HumanDecision) {
        if let Ok(mut pending) = self.0.lock()
            && let Some(i) = pending.iter().position(|p| same(p, d))
        {
            pending.remove(i);
        }
    }
}

/// The fields a decision line carries as the door wrote them (the contract
/// edit is the recorder's, made under the lock).
fn same(a: &HumanDecision, b: &HumanDecision) -> bool {
    a.id == b.id
        && a.decision == b.decision
        && a.reason == b.reason
        && a.by == b.by
        && a.evidence_hash == b.evidence_hash
        && a.note == b.note
}

/// The door's socket address for the pipeline at `dir`: an abstract name
/// (no file an agent could replace) made from the folder's canonical path.
pub fn address(dir: &std::path::Path) -> std::io::Result<SocketAddr> {
    let canonical = crate::process::tree::marker(dir, "");
    let hash = crate::util::sha256_tagged(canonical.as_bytes());
    let hex = hash.rsplit(':').next().unwrap_or(&hash);
    SocketAddr::from_abstract_name(format!("loopwatch/door/{}", &hex[..32.min(hex.len())]))
}

/// An open door: served on its own thread until dropped.
#[derive(Debug)]
pub struct Door {
    closed: Arc<AtomicBool>,
    addr: SocketAddr,
}

impl Door {
    /// Opens the door of `pipeline` (whose engine lock the caller holds),
    /// noting what it records in `ledger` (a clone of the one its guard asks).
    pub fn open(pipeline: &Pipeline, ledger: Ledger) -> std::io::Result<Door> {
        // The decision policy the door's decisions are held to: a file that
        // cannot be used stops the run at its start, not at its first gate.
        crate::audit::policy::Policy::load_user()
            .map_err(|e| std::io::Error::other(format!("the decision policy: {e}")))?;
        let addr = address(pipeline.dir())?;
        let listener = UnixListener::bind_addr(&addr)?;
        let closed = Arc::new(AtomicBool::new(false));
        let served = Serve {
            recorder: Recorder::new(Pipeline::at(pipeline.dir().to_path_buf())).direct(),
            ledger,
            closed: closed.clone(),
        };
        std::thread::Builder::new()
            .name("loopwatch-door".into())
            .spawn(move || served.run(&listener))?;
        Ok(Door { closed, addr })
    }
}

impl Drop for Door {
    fn drop(&mut self) {
        self.closed.store(true, Ordering::SeqCst);
        // Wakes the blocked accept, which then sees the door closed.
        let _ = UnixStream::connect_addr(&self.addr);
    }
}

struct Serve {
    recorder: Recorder,
    ledger: Ledger,
    closed: Arc<AtomicBool>,
}

#[derive(Serialize, Deserialize)]
struct Request {
    decide: HumanDecision,
    evidence: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Answer {
    /// The lines written, as JSON, and the state after them.
    Ok {
        events: Vec<serde_json::Value>,
        state: Box<State>,
    },
    Refused(DoorRefusal),
}

/// Why the engine refused a decision at its door; the decider is told
/// it in these words (exit 2, like every refusal).
#[derive(Debug, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DoorRefusal {
    /// The kernel could not tell who is calling.
    #[error("cannot tell who is calling: {0}")]
    UnknownCaller(String),
    /// The request could not be read.
    #[error("reading the request: {0}")]
    Unread(String),
    /// The request is not one.
    #[error("not a request: {0}")]
    NotARequest(String),
    /// The loop's rules refused it (the recorder's words, or the refusal
    /// of a caller inside the run).
    #[error("{0}")]
    Recorder(String),
}

impl Serve {
    fn run(self, listener: &UnixListener) {
        for conn in listener.incoming() {
            if self.closed.load(Ordering::SeqCst) {
                return;
            }
            let Ok(conn) = conn else { continue };
            // One at a time: decisions are rare, and each is one append.
            let _ = self.answer(conn);
        }
    }

    fn answer(&self, conn: UnixStream) -> std::io::Result<()> {
        conn.set_read_timeout(Some(PATIENCE))?;
        conn.set_write_timeout(Some(PATIENCE))?;
        let answer = match self.decide(&conn) {
            Ok(a) => Answer::Ok {
                events: a.events.iter().map(Event::to_value).collect(),
                state: Box::new(a.state),
            },
            Err(why) => Answer::Refused(why),
        };
        let mut out = serde_json::to_vec(&answer).map_err(std::io::Error::other)?;
        out.push(b'\n');
        (&conn).write_all(&out)
    }

    fn decide(&self, conn: &UnixStream) -> Result<Appended, DoorRefusal> {
        let pid = rustix::net::sockopt::socket_peercred(conn)
            .map(|c| c.pid.as_raw_nonzero().get().unsigned_abs())
            .map_err(|e| DoorRefusal::UnknownCaller(e.to_string()))?;
        if let Some(inside) =
            crate::process::tree::dispatch_of_pid(self.recorder.pipeline().dir(), pid)
        {
            let inside = Refusal::InsideRun {
                what: inside.what(),
                supervisor: inside.supervisor,
            };
            return Err(DoorRefusal::Recorder(inside.to_string()));
        }
        let mut line = Vec::new();
        BufReader::new(conn.take(MAX_REQUEST))
            .read_until(b'\n', &mut line)
            .map_err(|e| DoorRefusal::Unread(e.to_string()))?;
        let req: Request =
            serde_json::from_slice(&line).map_err(|e| DoorRefusal::NotARequest(e.to_string()))?;
        let mut d = req.decide;
        if let Some(ev) = &req.evidence {
            d.evidence_hash = crate::util::sha256_tagged(ev.as_bytes());
        }
        self.ledger.note(&d);
        let out = match &req.evidence {
            Some(ev) => self.recorder.decide_on(d.clone(), ev.as_bytes()),
            None => self.recorder.decide(d.clone()),
        };
        if out.is_err() {
            self.ledger.forget(&d);
        }
        out.map_err(|e| DoorRefusal::Recorder(e.to_string()))
    }
}

/// Hands a decision to the engine (pid `engine`) that drives `pipeline`,
/// and returns what it wrote.
pub fn decide_through(
    pipeline: &Pipeline,
    engine: u32,
    decision: HumanDecision,
    evidence: Option<&[u8]>,
) -> Result<Appended, RecordError> {
    let closed = |why: String| RecordError::from(Refusal::DoorClosed { pid: engine, why });
    let addr = address(pipeline.dir()).map_err(|e| closed(e.to_string()))?;
    let conn = connect(pipeline, &addr).map_err(|e| closed(e.to_string()))?;
    conn.set_read_timeout(Some(PATIENCE))
        .and_then(|()| conn.set_write_timeout(Some(PATIENCE)))
        .map_err(|e| closed(e.to_string()))?;
    // Only the engine itself is told the decision, never a process that
    // took its door's name.
    let server = rustix::net::sockopt::socket_peercred(&conn)
        .map(|c| c.pid.as_raw_nonzero().get().unsigned_abs())
        .map_err(|e| closed(format!("cannot tell who answers: {e}")))?;
    if engine != 0 && server != engine {
        return Err(closed(format!(
            "pid {server} answers at its door, not the engine"
        )));
    }
    let evidence = evidence.map(|b| String::from_utf8_lossy(b).into_owned());
    let mut req = serde_json::to_vec(&Request {
        decide: decision,
        evidence,
    })
    .map_err(|e| closed(e.to_string()))?;
    req.push(b'\n');
    (&conn)
        .write_all(&req)
        .map_err(|e| closed(format!("sending the decision: {e}")))?;
    let mut line = Vec::new();
    BufReader::new((&conn).take(MAX_REQUEST * 4))
        .read_until(b'\n', &mut line)
        .map_err(|e| closed(format!("waiting for its answer: {e}")))?;
    match serde_json::from_slice::<Answer>(&line) {
        Ok(Answer::Ok { events, state }) => Ok(Appended {
            events: events
                .iter()
                .filter_map(|v| Event::parse_line(v.to_string().as_bytes()).ok())
                .collect(),
            state: *state,
        }),
        Ok(Answer::Refused(why)) => Err(Refusal::AtTheDoor(why).into()),
        Err(e) => Err(closed(format!("its answer is not one: {e}"))),
    }
}

/// Connects to the door; an engine that holds the run but has not opened
/// its door yet (it is starting) is given a few seconds.
fn connect(pipeline: &Pipeline, addr: &SocketAddr) -> std::io::Result<UnixStream> {
    let until = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match UnixStream::connect_addr(addr) {
            Ok(c) => return Ok(c),
            Err(e)
                if e.kind() == std::io::ErrorKind::ConnectionRefused
                    && std::time::Instant::now() < until
                    && crate::journal::running_engine(pipeline.dir()).is_some() =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    }
}

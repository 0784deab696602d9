//! A scripted model server on 127.0.0.1: it stands in for the model (never
//! for a CLI) and speaks the two APIs the real CLIs use, as they use them:
//! the Anthropic Messages API (`POST /v1/messages`, streamed as server-sent
//! events, and `/v1/messages/count_tokens`) for Claude Code, and the OpenAI
//! Responses API (`POST /v1/responses`, streamed) for Codex.
//!
//! A test gives it a [`Script`]: the model's turns in order. Each turn is
//! the model's reply (text, tool calls the CLI then really runs, an HTTP
//! error, a connection cut in the middle), optionally computed from the
//! request (a Codex command still running is polled by its session id),
//! optionally after a delay, and optionally checked against the request
//! (the tool result came back, the instructions are in the system prompt).
//! Requests that are not a turn of the agent (a token count, a request
//! without tools) are answered without using a turn. [`ModelServer::finish`]
//! fails the test if a check failed, a request came after the last turn,
//! or turns were left.

mod anthropic;
mod http;
mod openai;

use std::collections::VecDeque;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// Which API a request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages (Claude Code).
    Anthropic,
    /// OpenAI Responses (Codex).
    OpenAi,
}

/// A tool call the model makes.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool (`Bash`, `Edit`, `exec_command`, ...).
    pub name: String,
    /// Its input, as the tool's schema wants it.
    pub input: Value,
}

/// What the model does in one turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Answers with text and ends its turn.
    Text(String),
    /// Says `text` (may be empty) and calls tools.
    Tools(String, Vec<ToolCall>),
    /// An HTTP error with the API's error body.
    Status {
        /// 401, 429, 500, 529...
        code: u16,
        /// The error's message.
        message: String,
    },
    /// Starts streaming `text` and cuts the connection before the end.
    Cut(String),
}

/// A request of a CLI, as the server read it.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// The API it used.
    pub api: Api,
    /// Its path.
    pub path: String,
    /// Its JSON body (`Null` when the body was not JSON).
    pub body: Value,
}

impl ModelRequest {
    /// The results of tool calls sent back, oldest first: (call id, text).
    pub fn tool_results(&self) -> Vec<(String, String)> {
        match self.api {
            Api::Anthropic => anthropic::tool_results(&self.body),
            Api::OpenAi => openai::tool_results(&self.body),
        }
    }

    /// The text of the last tool result sent back (empty when none).
    pub fn last_tool_result(&self) -> String {
        self.tool_results()
            .pop()
            .map(|(_, t)| t)
            .unwrap_or_default()
    }

    /// Everything the model is told before the conversation (the system
    /// prompt, Codex's instructions and developer messages).
    pub fn system_text(&self) -> String {
        match self.api {
            Api::Anthropic => anthropic::system_text(&self.body),
            Api::OpenAi => openai::system_text(&self.body),
        }
    }

    /// The user's messages' text (the prompt), joined.
    pub fn user_text(&self) -> String {
        match self.api {
            Api::Anthropic => anthropic::user_text(&self.body),
            Api::OpenAi => openai::user_text(&self.body),
        }
    }

    /// The names of the tools offered to the model.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| t["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }
}

type Check = Arc<dyn Fn(&ModelRequest) -> Result<(), String> + Send + Sync>;
type Compute = Arc<dyn Fn(&ModelRequest) -> Reply + Send + Sync>;

/// One turn of the model.
#[derive(Clone)]
pub struct Turn {
    reply: Result<Reply, Compute>,
    check: Option<Check>,
    delay: Duration,
    usage: (u64, u64),
}

impl Turn {
    /// The model answers `text`.
    pub fn text(text: &str) -> Turn {
        Turn::reply(Reply::Text(text.to_string()))
    }

    /// The model calls one tool.
    pub fn tool(name: &str, input: Value) -> Turn {
        Turn::reply(Reply::Tools(
            String::new(),
            vec![ToolCall {
                name: name.into(),
                input,
            }],
        ))
    }

    /// An HTTP error.
    pub fn status(code: u16, message: &str) -> Turn {
        Turn::reply(Reply::Status {
            code,
            message: message.into(),
        })
    }

    /// The connection cut after the start of `text`.
    pub fn cut(text: &str) -> Turn {
        Turn::reply(Reply::Cut(text.into()))
    }

    /// Any reply.
    pub fn reply(reply: Reply) -> Turn {
        Turn {
            reply: Ok(reply),
            check: None,
            delay: Duration::ZERO,
            usage: (100, 20),
        }
    }

    /// A reply computed from the request.
    pub fn compute(f: impl Fn(&ModelRequest) -> Reply + Send + Sync + 'static) -> Turn {
        Turn {
            reply: Err(Arc::new(f)),
            ..Turn::text("")
        }
    }

    /// Checks the request of this turn (a failure is reported by
    /// [`ModelServer::finish`]).
    pub fn expect(
        mut self,
        f: impl Fn(&ModelRequest) -> Result<(), String> + Send + Sync + 'static,
    ) -> Turn {
        self.check = Some(Arc::new(f));
        self
    }

    /// Waits before replying.
    pub fn after(mut self, d: Duration) -> Turn {
        self.delay = d;
        self
    }

    /// The tokens reported for this turn (input, output).
    pub fn usage(mut self, input: u64, output: u64) -> Turn {
        self.usage = (input, output);
        self
    }
}

/// The turns of a test, in order.
#[derive(Clone, Default)]
pub struct Script(VecDeque<Turn>);

impl Script {
    /// No turn yet.
    pub fn new() -> Script {
        Script::default()
    }

    /// Then `t`.
    pub fn then(mut self, t: Turn) -> Script {
        self.0.push_back(t);
        self
    }

    /// Then `t`, `n` times.
    pub fn repeat(mut self, n: usize, t: Turn) -> Script {
        for _ in 0..n {
            self.0.push_back(t.clone());
        }
        self
    }
}

struct State {
    script: VecDeque<Turn>,
    served: usize,
    requests: Vec<ModelRequest>,
    failures: Vec<String>,
}

/// The running server; stopped when dropped.
pub struct ModelServer {
    port: u16,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ModelServer {
    /// Starts serving `script` on a free port of 127.0.0.1.
    pub fn start(script: Script) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local addr").port();
        let state = Arc::new(Mutex::new(State {
            script: script.0,
            served: 0,
            requests: Vec::new(),
            failures: Vec::new(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if sp.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let st = st.clone();
                std::thread::spawn(move || serve(&conn, &st));
            }
        });
        ModelServer {
            port,
            state,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:<port>` (Claude Code's `ANTHROPIC_BASE_URL`).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request received so far (turns and the others).
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.lock().requests.clone()
    }

    /// Turns served so far.
    pub fn served(&self) -> usize {
        self.lock().served
    }

    /// What went against the script: a check that failed, a request with
    /// no turn left, turns never asked for.
    pub fn problems(&self) -> Vec<String> {
        let s = self.lock();
        let mut problems = s.failures.clone();
        if !s.script.is_empty() {
            problems.push(format!(
                "{} turn(s) of the script were never asked for ({} served)",
                s.script.len(),
                s.served
            ));
        }
        problems
    }

    /// Fails the test when there are [`ModelServer::problems`].
    pub fn finish(&self) {
        let problems = self.problems();
        assert!(
            problems.is_empty(),
            "the scripted model server: {problems:#?}"
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(conn: &TcpStream, state: &Mutex<State>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let Some(req) = http::read_request(conn) else {
        return;
    };
    let lock = || {
        state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    let api = if req.path.starts_with("/v1/responses") {
        Api::OpenAi
    } else {
        Api::Anthropic
    };
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let mr = ModelRequest {
        api,
        path: req.path.clone(),
        body,
    };
    lock().requests.push(mr.clone());
    if req.method != "POST" {
        return http::reply(conn, 404, &[], "application/json", b"{}");
    }
    if let Some(enc) = req.header("content-encoding") {
        lock()
            .failures
            .push(format!("{} came with content-encoding {enc}", req.path));
    }
    let path = req.path.split('?').next().unwrap_or_default();
    match path {
        "/v1/messages/count_tokens" => {
            return http::reply(
                conn,
                200,
                &[],
                "application/json",
                br#"{"input_tokens":100}"#,
            );
        }
        "/v1/messages" | "/v1/responses" => {}
        _ => return http::reply(conn, 404, &[], "application/json", b"{}"),
    }
    // A request without tools is not a turn of the agent (a title, a
    // summary): answered, no turn used.
    if mr.tool_names().is_empty() {
        let reply = Reply::Text("ok".into());
        return answer(conn, &mr, &reply, (10, 1), 0);
    }
    let turn = {
        let mut s = lock();
        match s.script.pop_front() {
            Some(t) => {
                s.served += 1;
                Some((t, s.served))
            }
            None => {
                s.failures
                    .push(format!("a request came after the last turn: {}", mr.path));
                None
            }
        }
    };
    let Some((turn, n)) = turn else {
        let reply = Reply::Status {
            code: 500,
            message: "the test's script has no turn left".into(),
        };
        return answer(conn, &mr, &reply, (0, 0), 0);
    };
    if let Some(check) = &turn.check
        && let Err(e) = check(&mr)
    {
        lock().failures.push(format!("turn {n}: {e}"));
    }
    if !turn.delay.is_zero() {
        std::thread::sleep(turn.delay);
    }
    let reply = match &turn.reply {
        Ok(r) => r.clone(),
        Err(f) => f(&mr),
    };
    answer(conn, &mr, &reply, turn.usage, n);
}

fn answer(conn: &TcpStream, req: &ModelRequest, reply: &Reply, usage: (u64, u64), n: usize) {
    match req.api {
        Api::Anthropic => anthropic::answer(conn, req, reply, usage, n),
        Api::OpenAi => openai::answer(conn, req, reply, usage, n),
    }
}

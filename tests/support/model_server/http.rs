//! Just enough HTTP/1.1 for the CLIs' model clients: one request per
//! connection (the reply says `Connection: close`), a body by
//! `Content-Length` or chunked, replies as JSON or as a chunked event
//! stream that can be cut in the middle.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// A request as it arrived.
pub struct Request {
    /// `POST`, `GET`, ...
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// The value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one request; `None` when the peer closed first or sent garbage.
pub fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut r = BufReader::new(stream);
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let mut req = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if req
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            if n == 0 {
                let mut end = String::new();
                r.read_line(&mut end).ok()?;
                break;
            }
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).ok()?;
            req.body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = req
        .header("content-length")
        .and_then(|v| v.parse::<usize>().ok())
    {
        let mut body = vec![0; n];
        r.read_exact(&mut body).ok()?;
        req.body = body;
    }
    Some(req)
}

/// Writes a whole reply with a body and closes.
pub fn reply(
    mut stream: &TcpStream,
    status: u16,
    extra: &[(String, String)],
    content_type: &str,
    body: &[u8],
) {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
        reason(status),
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
    let _ = stream.flush();
}

/// A chunked `text/event-stream` reply being written.
pub struct EventStream<'a> {
    stream: &'a TcpStream,
}

impl<'a> EventStream<'a> {
    /// Sends the head.
    pub fn start(mut stream: &'a TcpStream) -> EventStream<'a> {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.flush();
        EventStream { stream }
    }

    /// Sends one server-sent event.
    pub fn event(&mut self, name: &str, data: &serde_json::Value) {
        let text = format!("event: {name}\ndata: {data}\n\n");
        let mut s = self.stream;
        let _ = write!(s, "{:x}\r\n", text.len());
        let _ = s.write_all(text.as_bytes());
        let _ = s.write_all(b"\r\n");
        let _ = s.flush();
    }

    /// Ends the stream properly.
    pub fn finish(self) {
        let mut s = self.stream;
        let _ = s.write_all(b"0\r\n\r\n");
        let _ = s.flush();
    }

    /// Cuts the connection in the middle of the stream (no final chunk).
    pub fn cut(self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

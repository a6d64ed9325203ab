//! Plain HTTP/1.1 to `rnt serve` on loopback, one request a connection, as a test needs
//! to send it: any method, path, token and extra headers, and the whole answer back.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// An HTTP answer.
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The head, lower-cased.
    pub head: String,
    /// The body (unchunked).
    pub body: String,
}

impl Answer {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// Sends one request (`Connection: close`) and reads the whole answer.
pub fn request(
    address: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &[u8],
) -> Answer {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let headers = format!("Host: {address}\r\n{auth}");
    send(address, method, path, &headers, body)
}

/// Sends one request with exactly `headers` (each line ending in CRLF; `Content-Length`
/// and `Connection: close` are added) and reads the whole answer.
pub fn send(address: &str, method: &str, path: &str, headers: &str, body: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        unchunk(body)
    } else {
        body.to_string()
    };
    Answer {
        status,
        head: head.to_ascii_lowercase(),
        body,
    }
}

/// The body of a chunked answer.
fn unchunk(mut text: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = text.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        text = &rest[size + 2..];
    }
    out
}

/// A GET without a token.
pub fn get(address: &str, path: &str) -> Answer {
    request(address, "GET", path, None, b"")
}

/// Reads server-sent events until `count` commit events came: (id, data) each.
pub fn read_events(
    stream: &mut BufReader<TcpStream>,
    count: usize,
) -> Vec<(String, serde_json::Value)> {
    let mut events = Vec::new();
    let (mut id, mut data) = (None, None);
    let mut line = String::new();
    while events.len() < count {
        line.clear();
        if stream.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let text = line.trim_end();
        if let Some(value) = text.strip_prefix("id: ") {
            id = Some(value.to_string());
        } else if let Some(value) = text.strip_prefix("data: ") {
            data = Some(serde_json::from_str(value).unwrap());
        } else if text.is_empty() {
            if let (Some(i), Some(d)) = (id.take(), data.take()) {
                events.push((i, d));
            }
        }
    }
    events
}

/// Opens a subscription stream to `relation` from `since`.
pub fn subscribe(address: &str, relation: &str, since: &str) -> BufReader<TcpStream> {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET /api/subscribe/{relation}?since={since} HTTP/1.1\r\nHost: {address}\r\n\r\n"
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        assert!(
            !line.is_empty(),
            "the subscription closed before its events"
        );
        if line == "\r\n" {
            return reader;
        }
    }
}

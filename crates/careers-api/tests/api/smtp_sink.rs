//! A small SMTP server on a loopback port for the mail tests: it speaks enough of RFC 5321
//! (greeting, EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT) for `lettre` to deliver to it, and
//! keeps every message it accepted. It can be down: a port reserved but not listened on.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::JoinHandle;

/// One accepted message: its envelope and its data (headers and body, dot-unstuffed).
#[derive(Debug, Clone)]
pub struct Received {
    pub from: String,
    pub to: Vec<String>,
    pub data: String,
}

pub struct SmtpSink {
    pub port: u16,
    /// While down: a socket bound to the port but not listening, so that a connection is
    /// refused at once and no other test's listener can take the port meanwhile (one that did
    /// would hold the mail worker's connection until the SMTP timeout).
    reserved: Option<TcpSocket>,
    received: Arc<Mutex<Vec<Received>>>,
    server: Option<JoinHandle<()>>,
}

impl SmtpSink {
    /// A sink that is down: its port is reserved and nothing listens on it.
    pub fn down() -> Self {
        // Without `SO_REUSEADDR`, no other socket can bind the port while this one holds it.
        let reserved = TcpSocket::new_v4().unwrap();
        reserved.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let port = reserved.local_addr().unwrap().port();
        Self {
            port,
            reserved: Some(reserved),
            received: Arc::default(),
            server: None,
        }
    }

    /// A sink listening on a port of its own.
    pub async fn up() -> Self {
        let mut sink = Self::down();
        sink.start().await;
        sink
    }

    /// `smtp://127.0.0.1:<port>`, for `SMTP_URL`.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Starts listening on the sink's port.
    pub async fn start(&mut self) {
        drop(self.reserved.take());
        let listener = TcpListener::bind(("127.0.0.1", self.port)).await.unwrap();
        let received = self.received.clone();
        self.server = Some(tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, received.clone()));
            }
        }));
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits until at least `n` messages arrived (at most `seconds`), then returns them all.
    pub async fn wait_for(&self, n: usize, seconds: u64) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
        loop {
            let received = self.received();
            if received.len() >= n || tokio::time::Instant::now() > deadline {
                return received;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            server.abort();
        }
    }
}

async fn serve(stream: TcpStream, received: Arc<Mutex<Vec<Received>>>) {
    let (reader, mut writer) = stream.into_split();
    let mut lines = BufReader::new(reader).lines();
    if reply(&mut writer, "220 sink ESMTP ready").await.is_err() {
        return;
    }
    let (mut from, mut to) = (String::new(), Vec::new());
    while let Ok(Some(line)) = lines.next_line().await {
        let verb = line
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        let answer = match verb.as_str() {
            "EHLO" => "250-sink greets you\r\n250 8BITMIME".to_string(),
            "HELO" | "RSET" | "NOOP" => "250 OK".to_string(),
            "MAIL" => {
                from = envelope_address(&line);
                "250 OK".to_string()
            }
            "RCPT" => {
                to.push(envelope_address(&line));
                "250 OK".to_string()
            }
            "DATA" => {
                if reply(&mut writer, "354 end with <CRLF>.<CRLF>")
                    .await
                    .is_err()
                {
                    return;
                }
                let mut data = String::new();
                while let Ok(Some(line)) = lines.next_line().await {
                    if line == "." {
                        break;
                    }
                    data.push_str(line.strip_prefix('.').unwrap_or(&line));
                    data.push('\n');
                }
                received.lock().unwrap().push(Received {
                    from: std::mem::take(&mut from),
                    to: std::mem::take(&mut to),
                    data,
                });
                "250 OK queued".to_string()
            }
            "QUIT" => {
                let _ = reply(&mut writer, "221 bye").await;
                return;
            }
            _ => "502 command not implemented".to_string(),
        };
        if reply(&mut writer, &answer).await.is_err() {
            return;
        }
    }
}

async fn reply(writer: &mut OwnedWriteHalf, text: &str) -> std::io::Result<()> {
    writer.write_all(format!("{text}\r\n").as_bytes()).await
}

/// The `<address>` of `MAIL FROM:<address>` or `RCPT TO:<address>`.
fn envelope_address(line: &str) -> String {
    let start = line.find('<').unwrap_or(0);
    let end = line.rfind('>').map_or(line.len(), |i| i + 1);
    line[start..end].to_string()
}

impl Received {
    /// The body as text: quoted-printable soft line breaks joined and `=XX` escapes decoded.
    pub fn text(&self) -> String {
        let joined = self.data.replace("=\n", "");
        let bytes = joined.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'='
                && i + 2 < bytes.len()
                && let Ok(byte) = u8::from_str_radix(&joined[i + 1..i + 3], 16)
            {
                out.push(byte);
                i += 3;
                continue;
            }
            out.push(bytes[i]);
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[tokio::test]
async fn a_down_sink_refuses_connections_and_keeps_its_port_until_it_starts() {
    let mut sink = SmtpSink::down();
    let address = ("127.0.0.1", sink.port);
    let refused = TcpStream::connect(address).await.unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
    // Another test's listener cannot take the port meanwhile.
    let taken = TcpListener::bind(address).await.unwrap_err();
    assert_eq!(taken.kind(), std::io::ErrorKind::AddrInUse);
    sink.start().await;
    let mut greeting = String::new();
    let stream = TcpStream::connect(address).await.unwrap();
    BufReader::new(stream)
        .read_line(&mut greeting)
        .await
        .unwrap();
    assert!(greeting.starts_with("220"), "{greeting}");
}

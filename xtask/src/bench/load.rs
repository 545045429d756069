//! The load generator: blocking HTTP/1.1 clients on std threads, one keep-alive
//! connection each, reading every reply to its end and checking it.
//!
//! Blocking sockets and a hand-written request keep the generator's own cost per run
//! small and predictable, so the core it runs on is not what limits the figures.

use std::{
    collections::HashMap,
    io::{BufRead, BufReader, ErrorKind, Read, Write},
    net::{SocketAddr, TcpStream},
    time::{Duration, Instant},
};

use super::sse;

/// The one run the benchmark repeats: a new conversation asking for today's weather.
pub const CHAT_BODY: &str = r#"{"text":"Thời tiết Hà Nội hôm nay thế nào?"}"#;
/// How long one reply may take before it counts as failed.
const IO_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A reply is a few KiB; anything this large is broken.
const MAX_BODY: usize = 1 << 20;
const MAX_HEADER_LINES: usize = 100;
/// Runs per client thread at most; far more than a few seconds hold.
const MAX_SAMPLES: usize = 4_000_000;
/// The owner cookie the server issues (`server/src/owner.rs`); sending it back makes each
/// virtual client one person, as a browser would be.
const OWNER_COOKIE: &str = "datban_owner=";

/// One virtual client: a keep-alive connection and the owner cookie it was given.
pub struct Client {
    addr: SocketAddr,
    conn: Option<BufReader<TcpStream>>,
    /// Connections opened so far: more than one means the server closed kept-alive ones.
    connects: u64,
    cookie: Option<String>,
    request: Vec<u8>,
    body: Vec<u8>,
}

/// What went wrong with one run; short and without per-run details, so equal causes add up.
pub type RunError = String;

/// A read reply.
struct Reply {
    status: u16,
    close: bool,
}

impl Client {
    pub fn new(addr: SocketAddr) -> Self {
        let mut client = Self {
            addr,
            conn: None,
            connects: 0,
            cookie: None,
            request: Vec::new(),
            body: Vec::with_capacity(8 << 10),
        };
        client.build_request();
        client
    }

    /// The chat request `run` sends, with the owner cookie the client holds.
    fn build_request(&mut self) {
        self.request = self.request_to("/api/chat", CHAT_BODY);
    }

    fn request_to(&self, path: &str, body: &str) -> Vec<u8> {
        let cookie = self
            .cookie
            .as_ref()
            .map(|c| format!("Cookie: {c}\r\n"))
            .unwrap_or_default();
        format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: text/event-stream\r\nContent-Length: {}\r\n{cookie}\r\n{body}",
            self.addr,
            body.len()
        )
        .into_bytes()
    }

    fn connect(&mut self) -> Result<&mut BufReader<TcpStream>, RunError> {
        if self.conn.is_none() {
            let stream = connect(self.addr)?;
            self.connects += 1;
            self.conn = Some(BufReader::with_capacity(16 << 10, stream));
        }
        self.conn.as_mut().ok_or_else(|| "no connection".to_owned())
    }

    /// One run: request, whole reply, check. A kept-alive connection the server closed
    /// in between is reopened once, as any HTTP client does.
    pub fn run(&mut self) -> Result<sse::Summary, RunError> {
        self.exchange_reconnecting()?;
        sse::check_body(&self.body)
    }

    /// The request once more on a new connection when a kept-alive one was closed before
    /// any byte of the reply.
    fn exchange_reconnecting(&mut self) -> Result<(), RunError> {
        let reused = self.conn.is_some();
        match self.exchange() {
            Err(Attempt::Unanswered(_)) if reused => {
                self.conn = None;
                self.exchange().map_err(Attempt::into_error)
            }
            other => other.map_err(Attempt::into_error),
        }
    }

    /// `POST path` with `body` (JSON) and the client's owner cookie, on its kept-alive
    /// connection: the reply's body, which must come with status 200.
    pub fn post(&mut self, path: &str, body: &str) -> Result<Vec<u8>, RunError> {
        self.request = self.request_to(path, body);
        let result = self.exchange_reconnecting();
        // Back to the chat request `run` sends, with whatever cookie the reply gave.
        self.build_request();
        result.map(|()| self.body.clone())
    }

    fn exchange(&mut self) -> Result<(), Attempt> {
        self.body.clear();
        let request = std::mem::take(&mut self.request);
        let sent = self.connect().map_err(Attempt::Failed).and_then(|conn| {
            conn.get_mut()
                .write_all(&request)
                .map_err(|e| Attempt::Unanswered(format!("write: {}", e.kind())))
        });
        self.request = request;
        sent?;
        let mut body = std::mem::take(&mut self.body);
        let result = self.read_reply(&mut body);
        self.body = body;
        match result {
            Ok(reply) => {
                if reply.close {
                    self.conn = None;
                }
                if reply.status != 200 {
                    return Err(Attempt::Failed(format!("HTTP {}", reply.status)));
                }
                Ok(())
            }
            Err(error) => {
                self.conn = None;
                Err(error)
            }
        }
    }

    fn read_reply(&mut self, body: &mut Vec<u8>) -> Result<Reply, Attempt> {
        let conn = self
            .conn
            .as_mut()
            .ok_or(Attempt::Failed("no connection".into()))?;
        let mut line = String::new();
        match conn.read_line(&mut line) {
            Ok(0) => return Err(Attempt::Unanswered("closed before the reply".into())),
            Ok(_) => {}
            Err(e) => return Err(Attempt::Unanswered(format!("read: {}", e.kind()))),
        }
        let status = parse_status(&line).ok_or(Attempt::Failed("bad status line".into()))?;
        let mut chunked = false;
        let mut length = None;
        let mut close = false;
        let mut cookie = None;
        for _ in 0..MAX_HEADER_LINES {
            line.clear();
            read_line(conn, &mut line)?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let Some((name, value)) = header.split_once(':') else {
                return Err(Attempt::Failed("bad header line".into()));
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            } else if name.eq_ignore_ascii_case("content-length") {
                length = Some(
                    value
                        .parse::<usize>()
                        .map_err(|_| Attempt::Failed("bad content-length".into()))?,
                );
            } else if name.eq_ignore_ascii_case("connection") {
                close = value.eq_ignore_ascii_case("close");
            } else if name.eq_ignore_ascii_case("set-cookie") && value.starts_with(OWNER_COOKIE) {
                cookie = value.split(';').next().map(str::to_owned);
            }
        }
        if chunked {
            read_chunked(conn, body, &mut line)?;
        } else if let Some(length) = length {
            if length > MAX_BODY {
                return Err(Attempt::Failed("body too large".into()));
            }
            body.resize(length, 0);
            conn.read_exact(body)
                .map_err(|e| Attempt::Failed(format!("body: {}", e.kind())))?;
        } else {
            // Neither framing: the body runs to the end of the connection.
            close = true;
            conn.take(MAX_BODY as u64)
                .read_to_end(body)
                .map_err(|e| Attempt::Failed(format!("body: {}", e.kind())))?;
        }
        if cookie.is_some() && cookie != self.cookie {
            self.cookie = cookie;
            self.build_request();
        }
        Ok(Reply { status, close })
    }
}

/// How one exchange failed: before any byte of a reply (the server may just have closed a
/// kept-alive connection), or later.
enum Attempt {
    Unanswered(RunError),
    Failed(RunError),
}

impl Attempt {
    fn into_error(self) -> RunError {
        match self {
            Attempt::Unanswered(e) | Attempt::Failed(e) => e,
        }
    }
}

fn connect(addr: SocketAddr) -> Result<TcpStream, RunError> {
    let stream = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)
        .map_err(|e| format!("connect: {}", e.kind()))?;
    // The request goes out in one write; no reason to let Nagle hold anything.
    let _ = stream.set_nodelay(true);
    stream
        .set_read_timeout(Some(IO_TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(IO_TIMEOUT)))
        .map_err(|e| format!("socket options: {}", e.kind()))?;
    Ok(stream)
}

fn parse_status(line: &str) -> Option<u16> {
    let mut parts = line.split(' ');
    let version = parts.next()?;
    if !version.starts_with("HTTP/1.") {
        return None;
    }
    parts.next()?.trim().parse().ok()
}

fn read_line(conn: &mut BufReader<TcpStream>, line: &mut String) -> Result<(), Attempt> {
    // Bounded: a line longer than a body could be is not HTTP.
    match conn.take(MAX_BODY as u64).read_line(line) {
        Ok(0) => Err(Attempt::Failed("closed mid-reply".into())),
        Ok(_) => Ok(()),
        Err(e) => Err(Attempt::Failed(format!("read: {}", e.kind()))),
    }
}

fn read_chunked(
    conn: &mut BufReader<TcpStream>,
    body: &mut Vec<u8>,
    line: &mut String,
) -> Result<(), Attempt> {
    // At most one chunk per byte of body, plus the last one.
    for _ in 0..=MAX_BODY {
        line.clear();
        read_line(conn, line)?;
        let size_text = line.trim_end().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size_text.trim(), 16)
            .map_err(|_| Attempt::Failed("bad chunk size".into()))?;
        if size == 0 {
            // Trailers, then the blank line that ends the message.
            for _ in 0..MAX_HEADER_LINES {
                line.clear();
                read_line(conn, line)?;
                if line.trim_end().is_empty() {
                    return Ok(());
                }
            }
            return Err(Attempt::Failed("too many trailers".into()));
        }
        if body.len() + size > MAX_BODY {
            return Err(Attempt::Failed("body too large".into()));
        }
        let start = body.len();
        body.resize(start + size, 0);
        conn.read_exact(&mut body[start..])
            .map_err(|e| Attempt::Failed(format!("chunk: {}", e.kind())))?;
        let mut crlf = [0u8; 2];
        conn.read_exact(&mut crlf)
            .map_err(|e| Attempt::Failed(format!("chunk end: {}", e.kind())))?;
        if &crlf != b"\r\n" {
            return Err(Attempt::Failed("bad chunk end".into()));
        }
    }
    Err(Attempt::Failed("too many chunks".into()))
}

/// A plain `GET` on a fresh connection: the status, or `None` when nothing answered.
pub fn get_status(addr: SocketAddr, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut line = String::new();
    BufReader::new(stream)
        .take(4096)
        .read_line(&mut line)
        .ok()?;
    parse_status(&line)
}

/// Runs that failed, by cause.
#[derive(Debug, Default, Clone)]
pub struct Failures {
    pub total: u64,
    pub by_cause: HashMap<RunError, u64>,
}

impl Failures {
    pub fn add(&mut self, cause: RunError) {
        self.total += 1;
        *self.by_cause.entry(cause).or_default() += 1;
    }

    fn merge(&mut self, other: Failures) {
        self.total += other.total;
        for (cause, count) in other.by_cause {
            *self.by_cause.entry(cause).or_default() += count;
        }
    }

    /// The causes, most frequent first.
    pub fn describe(&self) -> Vec<String> {
        let mut causes: Vec<_> = self.by_cause.iter().collect();
        causes.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        causes
            .into_iter()
            .take(8)
            .map(|(cause, count)| format!("{count} × {cause}"))
            .collect()
    }
}

/// One measured window at a fixed concurrency.
#[derive(Debug, Clone)]
pub struct Window {
    pub concurrency: usize,
    /// Checked runs that ended inside the window.
    pub runs: u64,
    pub seconds: f64,
    /// Sorted latencies of those runs.
    pub latencies: Vec<Duration>,
    /// Failures during warm-up and window alike.
    pub failures: Failures,
    /// `data:` lines per run (of the last run seen), to show the workload is what it says.
    pub events_per_run: usize,
    /// Per process whose CPU was probed: its CPU time over the window, in seconds.
    pub cpu_seconds: Vec<f64>,
    /// Connections the clients opened, warm-up included (one each when all are kept alive).
    pub connects: u64,
    /// The load generator's own CPU time over the window, in seconds: near the window's
    /// length, the generator's core was what limited the figures.
    pub generator_cpu_seconds: f64,
}

impl Window {
    pub fn runs_per_second(&self) -> f64 {
        self.runs as f64 / self.seconds
    }

    pub fn percentile(&self, p: f64) -> Option<Duration> {
        if self.latencies.is_empty() {
            return None;
        }
        let rank = ((self.latencies.len() as f64 * p).ceil() as usize).max(1);
        self.latencies.get(rank - 1).copied()
    }

    /// CPU per completed run of probe `i`, in µs.
    pub fn cpu_per_run_us(&self, i: usize) -> Option<f64> {
        let cpu = *self.cpu_seconds.get(i)?;
        (self.runs > 0).then(|| cpu * 1e6 / self.runs as f64)
    }
}

/// `concurrency` clients, each running the workload back to back: `warmup`, then a
/// measured `window`. `probe` reads the CPU seconds of the processes being measured.
pub fn closed_loop(
    addr: SocketAddr,
    concurrency: usize,
    warmup: Duration,
    window: Duration,
    probe: &(dyn Fn() -> Vec<f64> + Sync),
) -> Window {
    let started = Instant::now();
    let measure_from = started + warmup;
    let end = measure_from + window;
    let mut cpu_before = Vec::new();
    let mut cpu_after = Vec::new();
    let own = || super::sys::cpu_ticks(std::process::id()).unwrap_or(0);
    let mut own_before = 0;
    let mut own_after = 0;
    let results: Vec<Tally> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..concurrency)
            .map(|_| scope.spawn(move || client_loop(addr, measure_from, end)))
            .collect();
        sleep_until(measure_from);
        cpu_before = probe();
        own_before = own();
        sleep_until(end);
        cpu_after = probe();
        own_after = own();
        workers
            .into_iter()
            .map(|worker| {
                worker.join().unwrap_or_else(|_| {
                    let mut tally = Tally::default();
                    tally.failures.add("load generator thread panicked".into());
                    tally
                })
            })
            .collect()
    });
    let mut out = Window {
        concurrency,
        runs: 0,
        seconds: window.as_secs_f64(),
        latencies: Vec::new(),
        failures: Failures::default(),
        events_per_run: 0,
        connects: 0,
        cpu_seconds: cpu_after
            .iter()
            .zip(&cpu_before)
            .map(|(after, before)| after - before)
            .collect(),
        generator_cpu_seconds: own_after.saturating_sub(own_before) as f64
            / super::sys::clock_ticks(),
    };
    for tally in results {
        out.runs += tally.runs;
        out.latencies.extend(tally.latencies);
        out.failures.merge(tally.failures);
        out.events_per_run = out.events_per_run.max(tally.events);
        out.connects += tally.connects;
    }
    out.latencies.sort_unstable();
    out
}

fn sleep_until(when: Instant) {
    let now = Instant::now();
    if when > now {
        std::thread::sleep(when - now);
    }
}

/// What one client thread did.
#[derive(Default)]
struct Tally {
    runs: u64,
    latencies: Vec<Duration>,
    failures: Failures,
    events: usize,
    connects: u64,
}

fn client_loop(addr: SocketAddr, measure_from: Instant, end: Instant) -> Tally {
    let mut client = Client::new(addr);
    let mut tally = Tally::default();
    for _ in 0..MAX_SAMPLES {
        let started = Instant::now();
        if started >= end {
            break;
        }
        let result = client.run();
        let finished = Instant::now();
        match result {
            Ok(summary) => {
                tally.events = summary.events;
                if finished >= measure_from && finished <= end {
                    tally.runs += 1;
                    tally.latencies.push(finished - started);
                }
            }
            Err(cause) => {
                tally.failures.add(cause);
                // A server that refuses at once must not turn this into a busy loop.
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
    tally.connects = client.connects;
    tally
}

/// K replies held open at once, each until its first event.
#[derive(Debug, Clone)]
pub struct OpenReplies {
    pub wanted: usize,
    /// Replies whose first event arrived.
    pub open: usize,
    pub failures: Failures,
    /// From the first connect until every reply had its first event.
    pub seconds: f64,
    pub rss_before_kib: u64,
    pub rss_after_kib: u64,
}

impl OpenReplies {
    /// Only when every reply was held open: a partial count says nothing per reply.
    pub fn kib_per_reply(&self) -> Option<f64> {
        (self.open > 0 && self.open == self.wanted)
            .then(|| (self.rss_after_kib as f64 - self.rss_before_kib as f64) / self.open as f64)
    }
}

/// Opens `k` replies (each a new owner: no cookie), waits until each has streamed its first
/// event, and reads the server's resident memory before and after. No thread per socket:
/// every request is written first, then each socket is read in turn.
pub fn open_replies(
    addr: SocketAddr,
    k: usize,
    deadline: Duration,
    rss_kib: &dyn Fn() -> Option<u64>,
) -> OpenReplies {
    let started = Instant::now();
    let give_up = started + deadline;
    let rss_before_kib = rss_kib().unwrap_or(0);
    let request = format!(
        "POST /api/chat HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\nContent-Length: {}\r\n\r\n{CHAT_BODY}",
        CHAT_BODY.len()
    );
    let mut failures = Failures::default();
    let mut streams = Vec::with_capacity(k);
    for _ in 0..k {
        if Instant::now() >= give_up {
            failures.add("not opened before the deadline".into());
            continue;
        }
        match connect(addr).and_then(|mut stream| {
            stream
                .write_all(request.as_bytes())
                .map_err(|e| format!("write: {}", e.kind()))?;
            Ok(stream)
        }) {
            Ok(stream) => streams.push(stream),
            Err(cause) => failures.add(cause),
        }
    }
    let mut open = 0;
    let mut buf = vec![0u8; 16 << 10];
    for stream in &mut streams {
        match first_event(stream, &mut buf, give_up) {
            Ok(()) => open += 1,
            Err(cause) => failures.add(cause),
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let rss_after_kib = rss_kib().unwrap_or(0);
    drop(streams);
    OpenReplies {
        wanted: k,
        open,
        failures,
        seconds,
        rss_before_kib,
        rss_after_kib,
    }
}

/// Reads until a `200` reply has delivered one whole `data:` event.
fn first_event(stream: &mut TcpStream, buf: &mut [u8], give_up: Instant) -> Result<(), RunError> {
    let mut filled = 0;
    // Each read returns at least one byte or fails, so this is bounded by the buffer.
    while filled < buf.len() {
        // Past the deadline, what already arrived still counts: opening the others may be
        // what took the time.
        let left = give_up
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        stream
            .set_read_timeout(Some(left))
            .map_err(|e| format!("socket options: {}", e.kind()))?;
        let n = match stream.read(&mut buf[filled..]) {
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err("no first event before the deadline".into())
            }
            Err(e) => return Err(format!("read: {}", e.kind())),
        };
        if n == 0 {
            return Err("closed before the first event".into());
        }
        filled += n;
        let seen = &buf[..filled];
        let Some(head_end) = find(seen, b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&seen[..head_end]);
        match head.lines().next().and_then(parse_status) {
            Some(200) => {}
            Some(status) => return Err(format!("HTTP {status}")),
            None => return Err("bad status line".into()),
        }
        let body = &seen[head_end + 4..];
        if let Some(data) = find(body, b"data:") {
            if find(&body[data..], b"\n\n").is_some() {
                return Ok(());
            }
        }
    }
    Err("no event in the first 16 KiB".into())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A one-connection server that answers every request with `reply`.
    fn serve(reply: &'static str, requests: usize) -> SocketAddr {
        serve_seen(reply, requests).0
    }

    /// [`serve`], telling each request it read (its head and its body).
    fn serve_seen(
        reply: &'static str,
        requests: usize,
    ) -> (SocketAddr, std::sync::mpsc::Receiver<(String, String)>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (seen, read) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            for _ in 0..requests {
                let (mut head, mut length) = (String::new(), 0);
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        length = v.trim().parse().unwrap();
                    }
                    if line == "\r\n" {
                        break;
                    }
                    head.push_str(&line);
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                // The test may have stopped listening.
                let _ = seen.send((head, String::from_utf8_lossy(&body).into_owned()));
                reader.get_mut().write_all(reply.as_bytes()).unwrap();
            }
        });
        (addr, read)
    }

    const EVENTS: &str = "data: {\"type\":\"tool-output-available\"}\n\ndata: {\"type\":\"finish\"}\n\ndata: [DONE]\n\n";

    #[test]
    fn chunked_replies_are_read_and_the_cookie_is_kept() {
        let reply: &'static str = Box::leak(
            format!(
                "HTTP/1.1 200 OK\r\nset-cookie: datban_owner=abc; Path=/\r\n\
                 transfer-encoding: chunked\r\n\r\n{:x}\r\n{EVENTS}\r\n0\r\n\r\n",
                EVENTS.len()
            )
            .into_boxed_str(),
        );
        let mut client = Client::new(serve(reply, 2));
        assert_eq!(client.run().unwrap().events, 3);
        assert_eq!(client.cookie.as_deref(), Some("datban_owner=abc"));
        assert!(String::from_utf8_lossy(&client.request).contains("Cookie: datban_owner=abc\r\n"));
        assert_eq!(client.run().unwrap().events, 3);
    }

    #[test]
    fn a_post_goes_to_its_path_with_the_cookie_and_runs_chat_again_after() {
        let reply: &'static str = Box::leak(
            format!(
                "HTTP/1.1 200 OK\r\nset-cookie: datban_owner=abc; Path=/\r\n\
                 content-length: {}\r\n\r\n{EVENTS}",
                EVENTS.len()
            )
            .into_boxed_str(),
        );
        let (addr, requests) = serve_seen(reply, 3);
        let mut client = Client::new(addr);
        client.run().unwrap();
        let reply = client
            .post("/api/approvals", r#"{"approved":true}"#)
            .unwrap();
        assert_eq!(reply, EVENTS.as_bytes());
        client.run().unwrap();
        let requests: Vec<(String, String)> = requests.iter().take(3).collect();
        assert!(requests[0].0.starts_with("POST /api/chat "), "{requests:?}");
        assert!(!requests[0].0.contains("Cookie:"), "{requests:?}");
        assert!(
            requests[1].0.starts_with("POST /api/approvals "),
            "{requests:?}"
        );
        assert!(
            requests[1].0.contains("Cookie: datban_owner=abc\r\n"),
            "{requests:?}"
        );
        assert_eq!(requests[1].1, r#"{"approved":true}"#);
        assert!(requests[2].0.starts_with("POST /api/chat "), "{requests:?}");
        assert_eq!(requests[2].1, CHAT_BODY);
        // One kept-alive connection for all three.
        assert_eq!(client.connects, 1);
    }

    fn chunked(events: &str) -> &'static str {
        Box::leak(
            format!(
                "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{events}\r\n0\r\n\r\n",
                events.len()
            )
            .into_boxed_str(),
        )
    }

    #[test]
    fn a_kept_alive_connection_the_server_closed_is_reopened_once() {
        // Each connection answers one request and is then closed without a word.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let reply = chunked(EVENTS);
        std::thread::spawn(move || {
            for _ in 0..2 {
                let (stream, _) = listener.accept().unwrap();
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                while line != "\r\n" {
                    line.clear();
                    reader.read_line(&mut line).unwrap();
                }
                let mut body = vec![0; CHAT_BODY.len()];
                reader.read_exact(&mut body).unwrap();
                reader.get_mut().write_all(reply.as_bytes()).unwrap();
            }
        });
        let mut client = Client::new(addr);
        assert!(client.run().is_ok());
        assert!(client.run().is_ok());
        assert_eq!(client.connects, 2);
    }

    #[test]
    fn held_open_replies_count_once_their_first_event_is_in() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for i in 0..3 {
                let (mut stream, _) = listener.accept().unwrap();
                let reply = if i == 2 {
                    "HTTP/1.1 429 Too Many Requests\r\ncontent-length: 2\r\n\r\n{}".to_owned()
                } else {
                    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\
                     12\r\ndata: {\"type\":1}\n\n\r\n"
                        .to_owned()
                };
                stream.write_all(reply.as_bytes()).unwrap();
                held.push(stream);
            }
            std::thread::sleep(Duration::from_secs(5));
        });
        let rss = std::cell::Cell::new(1000);
        let open = open_replies(addr, 3, Duration::from_secs(5), &|| {
            rss.set(rss.get() + 300);
            Some(rss.get())
        });
        assert_eq!(open.open, 2);
        assert_eq!(open.failures.describe(), vec!["1 × HTTP 429".to_owned()]);
        assert_eq!((open.rss_before_kib, open.rss_after_kib), (1300, 1600));
        // Not every reply was held: no figure per reply.
        assert_eq!(open.kib_per_reply(), None);
    }

    #[test]
    fn an_error_status_is_a_failure() {
        let reply = "HTTP/1.1 429 Too Many Requests\r\ncontent-length: 2\r\n\r\n{}";
        let mut client = Client::new(serve(reply, 1));
        assert_eq!(client.run().unwrap_err(), "HTTP 429");
    }
}

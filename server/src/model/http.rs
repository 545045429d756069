//! HTTP and SSE plumbing shared by the provider adapters: timeouts, retries before the
//! first byte, and server-sent events decoded by `eventsource-stream`.

use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use reqwest::{RequestBuilder, Response, StatusCode};

use super::{ModelEvent, ProviderError, TurnStream};

/// Timeouts and retry policy of provider requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpSettings {
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// Longest silence between two pieces of a streamed answer.
    pub read_timeout: Duration,
    /// Extra attempts after a connection error, 429 or 5xx (before anything streamed).
    pub max_retries: u32,
    /// First backoff; doubled on each retry (a `retry-after` header wins, capped at 30 s).
    pub backoff: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(60),
            max_retries: 2,
            backoff: Duration::from_millis(500),
        }
    }
}

/// A client for provider requests.
pub fn client(settings: &HttpSettings) -> Result<reqwest::Client, ProviderError> {
    // rustls needs a process-wide crypto provider; a second install is a harmless no-op.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        // reqwest's default today, stated so it stays: a streamed request body or many
        // small requests must not wait for delayed ACKs.
        .tcp_nodelay(true)
        .connect_timeout(settings.connect_timeout)
        .read_timeout(settings.read_timeout)
        .build()
        .map_err(|e| ProviderError {
            message: format!("cannot build the HTTP client: {e}"),
        })
}

fn retryable(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

fn retry_after(response: &Response) -> Option<Duration> {
    let seconds: u64 = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds.min(30)))
}

/// Sends a request, retrying connection errors, 429 and 5xx answers with backoff. Nothing
/// has streamed yet when a retry happens, so a retry can never duplicate output. A final
/// failure carries the status and the start of the body, for the log only.
pub async fn send(
    make: impl Fn() -> RequestBuilder,
    settings: &HttpSettings,
) -> Result<Response, ProviderError> {
    let mut delay = settings.backoff;
    let mut attempt = 0;
    loop {
        let outcome = make().send().await;
        let wait = match outcome {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) if retryable(response.status()) && attempt < settings.max_retries => {
                let wait = retry_after(&response).unwrap_or(delay);
                tracing::warn!(status = %response.status(), attempt, "provider busy; retrying");
                wait
            }
            Ok(response) => {
                let status = response.status();
                let body = response.text().await.unwrap_or_default();
                let body: String = body.chars().take(2000).collect();
                return Err(ProviderError {
                    message: format!("provider answered {status}: {body}"),
                });
            }
            Err(error)
                if (error.is_connect() || error.is_timeout()) && attempt < settings.max_retries =>
            {
                tracing::warn!(%error, attempt, "provider unreachable; retrying");
                delay
            }
            Err(error) => {
                return Err(ProviderError {
                    message: format!("provider request failed: {error}"),
                })
            }
        };
        tokio::time::sleep(wait).await;
        delay = delay.saturating_mul(2);
        attempt += 1;
    }
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field (`"message"` when absent).
    pub event: String,
    /// The `data:` field.
    pub data: String,
}

/// The events of a streamed response body.
pub fn events(response: Response) -> impl Stream<Item = Result<SseEvent, ProviderError>> + Send {
    without_bom(response.bytes_stream())
        .eventsource()
        .map(|item| match item {
            Ok(event) => Ok(SseEvent {
                event: event.event,
                data: event.data,
            }),
            Err(error) => Err(ProviderError {
                message: format!("provider stream broke: {error}"),
            }),
        })
}

/// The body without the byte-order mark(s) at its start.
///
/// eventsource-stream 0.2.3 panics when the first text it sees starts with a BOM (it
/// slices one byte into the 3-byte character; upstream PR jpopesculian/eventsource-stream#10),
/// so it must never see one there — not even a second BOM right after the one the SSE
/// format allows (the fuzzer found that). The first bytes are held until they can no
/// longer be the start of a BOM, since a body may arrive one byte at a time.
fn without_bom<E>(
    body: impl Stream<Item = Result<Bytes, E>> + Send,
) -> impl Stream<Item = Result<Bytes, E>> + Send {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let mut head: Option<Vec<u8>> = Some(Vec::new());
    body.map(move |chunk| {
        let chunk = chunk?;
        let Some(mut held) = head.take() else {
            return Ok(chunk);
        };
        held.extend_from_slice(&chunk);
        let mut start = 0;
        while held[start..].starts_with(BOM) {
            start += BOM.len();
        }
        let rest = &held[start..];
        if rest.len() < BOM.len() && BOM.starts_with(rest) {
            head = Some(rest.to_vec());
            return Ok(Bytes::new());
        }
        Ok(Bytes::from(held).slice(start..))
    })
}

/// Where one provider event leaves the turn.
pub enum Step {
    /// These events came out of it; the turn goes on.
    Continue(Vec<ModelEvent>),
    /// The last events, ending with [`ModelEvent::Finish`]; the turn is over.
    Done(Vec<ModelEvent>),
}

/// A provider's stream decoder, fed one server-sent event at a time.
pub trait Decode: Default + Send + 'static {
    /// What this event means for the turn.
    fn feed(&mut self, event: &SseEvent) -> Result<Step, ProviderError>;
}

/// Runs a decoder over a response's events. The turn ends after [`Step::Done`] or the
/// first error, and nothing after either is read; events running out first is an error,
/// so a cut stream never looks like a finished turn.
pub fn decode_with<D: Decode>(
    events: impl Stream<Item = Result<SseEvent, ProviderError>> + Send + 'static,
) -> TurnStream {
    Box::pin(async_stream::stream! {
        let mut events = Box::pin(events);
        let mut decoder = D::default();
        while let Some(item) = events.next().await {
            let step = match item {
                Ok(event) => decoder.feed(&event),
                Err(error) => Err(error),
            };
            match step {
                Ok(Step::Continue(out)) => {
                    for event in out {
                        yield Ok(event);
                    }
                }
                Ok(Step::Done(out)) => {
                    for event in out {
                        yield Ok(event);
                    }
                    return;
                }
                Err(error) => {
                    yield Err(error);
                    return;
                }
            }
        }
        yield Err(ProviderError {
            message: "stream ended before the turn finished".to_owned(),
        });
    })
}

/// An OpenAI-style HTTP endpoint: base URL, optional bearer key, model name. Shared by the
/// Chat Completions and Responses adapters so both send, stream and redact alike.
#[derive(Clone)]
pub struct Endpoint {
    /// The HTTP client.
    pub client: reqwest::Client,
    /// Timeouts and retries.
    pub settings: HttpSettings,
    /// Base URL without a trailing `/`.
    pub base_url: String,
    /// The key, sent as `Authorization: Bearer`; never printed.
    pub api_key: Option<String>,
    /// The model name.
    pub model: String,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[set]"))
            .field("settings", &self.settings)
            .finish()
    }
}

impl Endpoint {
    /// An endpoint; a trailing `/` on `base_url` is dropped and a blank key counts as none.
    pub fn new(
        base_url: impl Into<String>,
        api_key: Option<String>,
        model: impl Into<String>,
        settings: HttpSettings,
    ) -> Result<Self, ProviderError> {
        Ok(Self {
            client: client(&settings)?,
            settings,
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            api_key: api_key.filter(|key| !key.trim().is_empty()),
            model: model.into(),
        })
    }

    /// `{base_url}{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// Adds the bearer key when there is one.
    pub fn authorize(&self, request: RequestBuilder) -> RequestBuilder {
        match &self.api_key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }

    /// Removes the key from a message bound for the log (an error body could echo it).
    pub fn redact(&self, mut error: ProviderError) -> ProviderError {
        if let Some(key) = &self.api_key {
            if error.message.contains(key.as_str()) {
                error.message = error.message.replace(key.as_str(), "[redacted]");
            }
        }
        error
    }

    /// POSTs `body` to `path` and decodes the streamed answer with `D`; every error is
    /// redacted.
    pub fn stream<D: Decode>(&self, path: &str, body: serde_json::Value) -> TurnStream {
        let this = self.clone();
        let url = self.url(path);
        Box::pin(async_stream::stream! {
            let make = || {
                this.authorize(
                    this.client
                        .post(&url)
                        .header(reqwest::header::ACCEPT, "text/event-stream")
                        .json(&body),
                )
            };
            match send(make, &this.settings).await {
                Ok(response) => {
                    let mut turn = decode_with::<D>(events(response));
                    while let Some(item) = turn.next().await {
                        yield item.map_err(|error| this.redact(error));
                    }
                }
                Err(error) => yield Err(this.redact(error)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    async fn through(pieces: Vec<&[u8]>) -> Vec<u8> {
        let pieces: Vec<Result<bytes::Bytes, std::convert::Infallible>> = pieces
            .into_iter()
            .map(|p| Ok(bytes::Bytes::copy_from_slice(p)))
            .collect();
        super::without_bom(futures::stream::iter(pieces))
            .map(|b| b.map(|b| b.to_vec()).unwrap_or_default())
            .concat()
            .await
    }

    #[tokio::test]
    async fn a_leading_bom_is_dropped_however_the_body_is_cut() {
        let body: &[u8] = b"\xEF\xBB\xBFdata: [DONE]\n\n";
        for cut in 0..body.len() {
            let out = through(vec![&body[..cut], &body[cut..]]).await;
            assert_eq!(out, b"data: [DONE]\n\n", "cut at {cut}");
        }
        // Repeated marks go too: the parser would panic on the second one.
        let twice: &[u8] = b"\xEF\xBB\xBF\xEF\xBB\xBFevent: ping\n";
        for cut in 0..twice.len() {
            let out = through(vec![&twice[..cut], &twice[cut..]]).await;
            assert_eq!(out, b"event: ping\n", "cut at {cut}");
        }
        // Anything else passes untouched, including what merely starts like a BOM.
        assert_eq!(through(vec![b"\xEF", b"data"]).await, b"\xEFdata");
        assert_eq!(through(vec![b"data: x\n\n"]).await, b"data: x\n\n");
    }
}

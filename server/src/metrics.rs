//! What the server does, counted: `GET /metrics` in the Prometheus text format
//! (OpenMetrics), for a scraper behind the same proxy that keeps `/metrics` from the
//! public.
//!
//! One set per process (replicas are scraped one by one and summed by Prometheus).
//! Counters only grow; tests read them before and after.

use std::sync::OnceLock;
use std::time::Duration;

use axum::{
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use prometheus_client::{
    encoding::{text::encode, EncodeLabelSet},
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{exponential_buckets, Histogram},
    },
    registry::Registry,
};
use shared::message::RunStatus;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    tool: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabel {
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    decision: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProviderLabel {
    provider: String,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Seconds from 1 ms to about 65 s, doubling: model turns and tool calls both fit.
fn latency() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

struct Metrics {
    registry: Registry,
    runs: Family<StatusLabels, Counter>,
    tool_calls: Family<ToolLabels, Counter>,
    approvals: Family<DecisionLabels, Counter>,
    model_turns: Histograms<ProviderLabel>,
    tool_seconds: Histograms<ToolLabel>,
    open_streams: Gauge,
}

fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let mut registry = Registry::with_prefix("datban");
        let runs = Family::<StatusLabels, Counter>::default();
        registry.register(
            "runs",
            "Replies the agent loop finished, by how they ended",
            runs.clone(),
        );
        let tool_calls = Family::<ToolLabels, Counter>::default();
        registry.register(
            "tool_calls",
            "Tool calls the model proposed, by tool and outcome (ok, failed, invalid, \
             awaiting_approval, declined)",
            tool_calls.clone(),
        );
        let approvals = Family::<DecisionLabels, Counter>::default();
        registry.register(
            "approvals",
            "Decisions people made on confirmations, by decision",
            approvals.clone(),
        );
        let model_turns: Histograms<ProviderLabel> = Family::new_with_constructor(latency);
        registry.register(
            "model_turn_seconds",
            "How long a model turn took to stream, by provider",
            model_turns.clone(),
        );
        let tool_seconds: Histograms<ToolLabel> = Family::new_with_constructor(latency);
        registry.register(
            "tool_call_seconds",
            "How long a tool took to run, by tool",
            tool_seconds.clone(),
        );
        let open_streams = Gauge::default();
        registry.register(
            "open_streams",
            "Reply streams being sent to clients right now",
            open_streams.clone(),
        );
        Metrics {
            registry,
            runs,
            tool_calls,
            approvals,
            model_turns,
            tool_seconds,
            open_streams,
        }
    })
}

/// A run ended with `status`.
pub fn run_ended(status: RunStatus) {
    let status = serde_json::to_value(status)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default();
    metrics().runs.get_or_create(&StatusLabels { status }).inc();
}

/// What became of a proposed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The tool ran and returned.
    Ok,
    /// The tool ran and failed (or our side did).
    Failed,
    /// Refused before running: unknown tool, invalid arguments, a failed pre-check.
    Invalid,
    /// Stored to wait for the person's decision.
    AwaitingApproval,
    /// The person said no.
    Declined,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed => "failed",
            Outcome::Invalid => "invalid",
            Outcome::AwaitingApproval => "awaiting_approval",
            Outcome::Declined => "declined",
        }
    }
}

/// A call of `tool` ended `outcome`; `took` is how long the tool ran, when it did.
pub fn tool_call(tool: &str, outcome: Outcome, took: Option<Duration>) {
    let m = metrics();
    m.tool_calls
        .get_or_create(&ToolLabels {
            tool: tool.to_owned(),
            outcome: outcome.as_str().to_owned(),
        })
        .inc();
    if let Some(took) = took {
        m.tool_seconds
            .get_or_create(&ToolLabel {
                tool: tool.to_owned(),
            })
            .observe(took.as_secs_f64());
    }
}

/// A person decided a confirmation.
pub fn decided(approved: bool) {
    let decision = if approved { "approved" } else { "declined" };
    metrics()
        .approvals
        .get_or_create(&DecisionLabels {
            decision: decision.to_owned(),
        })
        .inc();
}

/// A model turn of `provider` took `took` to stream.
pub fn model_turn(provider: &str, took: Duration) {
    metrics()
        .model_turns
        .get_or_create(&ProviderLabel {
            provider: provider.to_owned(),
        })
        .observe(took.as_secs_f64());
}

/// Counts a reply stream as open while it lives.
#[derive(Debug)]
pub struct OpenStream(());

impl OpenStream {
    /// A stream opens.
    pub fn new() -> Self {
        metrics().open_streams.inc();
        Self(())
    }
}

impl Default for OpenStream {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        metrics().open_streams.dec();
    }
}

/// `GET /metrics`.
pub async fn handler() -> Response {
    let mut text = String::new();
    if encode(&mut text, &metrics().registry).is_err() {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    let mut response = text.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn scraped() -> String {
        let response = handler().await;
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        String::from_utf8(body.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn what_is_counted_is_scraped() {
        run_ended(RunStatus::AwaitingApproval);
        tool_call("createBooking", Outcome::AwaitingApproval, None);
        tool_call("getWeather", Outcome::Ok, Some(Duration::from_millis(3)));
        decided(true);
        model_turn("offline", Duration::from_millis(20));
        let open = OpenStream::new();
        let text = scraped().await;
        for line in [
            "datban_runs_total{status=\"awaiting-approval\"}",
            "datban_tool_calls_total{tool=\"createBooking\",outcome=\"awaiting_approval\"}",
            "datban_approvals_total{decision=\"approved\"}",
            "datban_model_turn_seconds_count{provider=\"offline\"}",
            "datban_tool_call_seconds_bucket{le=\"0.004\",tool=\"getWeather\"}",
            "datban_open_streams",
        ] {
            assert!(text.contains(line), "{line} missing from:\n{text}");
        }
        drop(open);
        assert!(text.ends_with("# EOF\n"));
    }
}

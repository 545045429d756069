//! `GET /healthz` through the whole router, without a socket.

use crate::support;

use axum::{body::Body, http::Request};
use http_body_util::BodyExt;
use server::{app, AppState};
use support::{test_pool, test_state, TestDatabase, TestResult};
use tower::ServiceExt;

async fn state() -> support::Fallible<(AppState, TestDatabase)> {
    let (pool, guard) = test_pool().await?;
    Ok((test_state(pool).await?, guard))
}

async fn get(
    app: axum::Router,
    uri: &str,
) -> Result<(u16, serde_json::Value), Box<dyn std::error::Error + Send + Sync>> {
    let response = app.oneshot(Request::get(uri).body(Body::empty())?).await?;
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await?.to_bytes();
    Ok((
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    ))
}

#[tokio::test]
async fn healthz_reports_ok_and_version() -> TestResult {
    let (state, _db) = state().await?;
    let (status, body) = get(app(state), "/healthz").await?;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        serde_json::json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")})
    );
    Ok(())
}

#[tokio::test]
async fn healthz_reports_unavailable_when_the_database_is_gone() -> TestResult {
    let (state, _db) = state().await?;
    state.db.close().await;
    let (status, body) = get(app(state), "/healthz").await?;
    assert_eq!(status, 503);
    assert_eq!(body["status"], "unavailable");
    Ok(())
}

/// The log lines a test subscriber wrote, shared with it.
#[derive(Clone, Default)]
struct Lines(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Lines {
    fn text(&self) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
        let bytes = self.0.lock().map_err(|e| e.to_string())?.clone();
        Ok(String::from_utf8(bytes)?)
    }
}

impl std::io::Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|e| std::io::Error::other(e.to_string()))?
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Lines {
    type Writer = Lines;

    fn make_writer(&'a self) -> Lines {
        self.clone()
    }
}

/// One run followed through the log: every line the agent writes for it (model turns, tool
/// calls, its end) carries the run's id and its conversation, from the run's span.
#[tokio::test]
async fn every_line_of_a_run_carries_its_run_id() -> TestResult {
    let lines = Lines::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(lines.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    // One thread runs the test, the server and the run: they all log here.
    let _guard = tracing::subscriber::set_default(subscriber);
    let app = support::spawn_app().await?;
    let reply = app.chat(None, "Thời tiết Hà Nội ngày mai thế nào?").await?;
    assert_eq!(reply.status, 200);
    let conversation = reply.conversation_id();
    // The run's task logs its end after the reply's last event has left: on a busy
    // machine the test can read the log first.
    let mut text = lines.text()?;
    for _ in 0..100 {
        if text.contains("run ended") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        text = lines.text()?;
    }
    let agent: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("server::agent"))
        .collect();
    assert!(
        agent.iter().any(|line| line.contains("run ended")),
        "no run in the log: {text}"
    );
    assert!(
        agent.iter().any(|line| line.contains("tool call")),
        "{text}"
    );
    for line in &agent {
        assert!(line.contains("run{run=run_"), "no run id: {line}");
        assert!(
            line.contains(&format!("conversation={conversation}")),
            "no conversation: {line}"
        );
    }
    Ok(())
}

/// A refusal caused inside (our storage failed) is logged once, with its cause and the
/// request's route, and the answer says nothing of it.
#[tokio::test]
async fn a_failure_is_logged_once_and_its_cause_never_sent() -> TestResult {
    let lines = Lines::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(lines.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let (state, _db) = state().await?;
    let reads = state.reads.clone();
    state.db.close().await;
    reads.close().await;
    let (status, body) = get(app(state), "/api/conversations/conv_1").await?;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "STORAGE_UNAVAILABLE");
    let sent = body.to_string().to_lowercase();
    for inside in ["database", "pool", "sqlx", "closed"] {
        assert!(!sent.contains(inside), "{sent}");
    }
    let text = lines.text()?;
    let logged: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("storage failed"))
        .collect();
    assert_eq!(logged.len(), 1, "{text}");
    assert!(logged[0].contains("ERROR"), "{}", logged[0]);
    assert!(
        logged[0].contains("/api/conversations/{id}"),
        "no route: {}",
        logged[0]
    );
    Ok(())
}

/// `GET /metrics` counts what happened: a finished reply and its tool call move the
/// counters (other tests of this binary may move them too, never back).
#[tokio::test]
async fn metrics_move_after_a_run() -> TestResult {
    let app = support::spawn_app().await?;
    let scrape = || async {
        let text = app
            .client
            .get(app.url("/metrics"))
            .send()
            .await?
            .text()
            .await?;
        let value = |prefix: &str| -> f64 {
            text.lines()
                .find(|line| line.starts_with(prefix))
                .and_then(|line| line.rsplit(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0.0)
        };
        Ok::<_, reqwest::Error>((
            value(r#"datban_runs_total{status="completed"}"#),
            value(r#"datban_tool_calls_total{tool="getWeather",outcome="ok"}"#),
        ))
    };
    let (runs, weather) = scrape().await?;
    let reply = app.chat(None, "Thời tiết Hà Nội ngày mai thế nào?").await?;
    assert_eq!(reply.status_of_run().as_deref(), Some("completed"));
    let (runs_after, weather_after) = scrape().await?;
    assert!(runs_after >= runs + 1.0, "{runs} → {runs_after}");
    assert!(
        weather_after >= weather + 1.0,
        "{weather} → {weather_after}"
    );
    Ok(())
}

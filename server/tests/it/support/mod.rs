//! `spawn_app()`: the whole server on a real socket with a fresh test database (a temporary
//! SQLite file, or a new database on the PostgreSQL server `DATBAN_TEST_POSTGRES_URL` names:
//! see `test_db`), the offline model without delays and a pinned clock.

#![allow(dead_code)]

use std::{net::SocketAddr, sync::Arc};

use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use leptos::prelude::LeptosOptions;
use serde_json::{json, Value};
use server::{
    agent::{AgentConfig, Clock},
    db,
    model::{offline::OfflineModel, SharedProvider},
    AppState,
};

/// The error of a support step and of a test. `Send + Sync`, so that steps run in spawned
/// tasks can hand theirs back, and one type, since `?` cannot turn a
/// `Box<dyn Error + Send + Sync>` into a `Box<dyn Error>`.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// What a support step returns: a failed request or an unreadable answer ends the test with
/// its error, where an `unwrap()` would panic without saying which step it was.
pub type Fallible<T> = Result<T, Error>;

/// What a test returns.
pub type TestResult = Fallible<()>;

/// 10:00 in Việt Nam on 29 November 2026. A constant, so a wrong date stops the build
/// rather than a test.
const NOW: DateTime<Utc> = match NaiveDate::from_ymd_opt(2026, 11, 29) {
    Some(date) => match date.and_hms_opt(3, 0, 0) {
        Some(time) => time.and_utc(),
        None => panic!("03:00:00 is a time of day"),
    },
    None => panic!("29 November 2026 is a date"),
};

/// Việt Nam's time zone (UTC+7, no daylight saving).
const VIETNAM: FixedOffset = match FixedOffset::east_opt(7 * 3600) {
    Some(offset) => offset,
    None => panic!("UTC+7 is an offset"),
};

/// 10:00 in Việt Nam on 29 November 2026.
pub fn now() -> DateTime<Utc> {
    NOW
}

pub fn local_now() -> DateTime<FixedOffset> {
    now().with_timezone(&VIETNAM)
}

pub struct TestApp {
    pub addr: SocketAddr,
    pub db_url: String,
    pub pool: db::Pool,
    pub client: reqwest::Client,
    server: tokio::task::JoinHandle<()>,
    // Declared last: dropped after the pool, so a Postgres database is removed last.
    _db: Option<TestDatabase>,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.server.abort();
    }
}

pub struct Reply {
    pub status: u16,
    pub events: Vec<Value>,
    pub done: bool,
    pub body: Value,
    pub content_type: String,
    pub stream_header: Option<String>,
}

impl Reply {
    pub fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }

    pub fn status_of_run(&self) -> Option<String> {
        self.of_type("finish")
            .last()
            .and_then(|e| e["messageMetadata"]["status"].as_str().map(str::to_owned))
    }

    pub fn text(&self) -> String {
        self.of_type("text-delta")
            .iter()
            .filter_map(|e| e["delta"].as_str())
            .collect()
    }

    pub fn conversation_id(&self) -> String {
        self.events[0]["messageMetadata"]["conversationId"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub fn call_id(&self, tool: &str) -> String {
        self.of_type("tool-input-start")
            .iter()
            .find(|e| e["toolName"] == tool)
            .and_then(|e| e["toolCallId"].as_str())
            .unwrap_or_default()
            .to_owned()
    }
}

/// A migrated pool on a fresh test database; keep the guard alive for the test.
pub async fn test_pool() -> Fallible<(db::Pool, TestDatabase)> {
    let (url, guard) = test_database_url().await?;
    Ok((db::connect(&url).await?, guard))
}

/// State for router tests without a socket (`oneshot`).
pub async fn test_state(pool: db::Pool) -> Fallible<AppState> {
    Ok(AppState::new(
        LeptosOptions::builder().output_name("datban").build(),
        pool,
        Arc::new(OfflineModel::new(std::time::Duration::ZERO)),
        AgentConfig::default(),
        Arc::new(now),
    )
    .await?)
}

pub async fn spawn_app() -> Fallible<TestApp> {
    spawn_app_with(AgentConfig::default()).await
}

pub async fn spawn_app_with(config: AgentConfig) -> Fallible<TestApp> {
    let (url, guard) = test_database_url().await?;
    let mut app = spawn_app_on(url, config).await?;
    app._db = Some(guard);
    Ok(app)
}

/// A server over an existing database (to test restarts); the caller keeps its guard.
pub async fn spawn_app_on(db_url: String, config: AgentConfig) -> Fallible<TestApp> {
    let provider: SharedProvider =
        Arc::new(OfflineModel::new(std::time::Duration::ZERO).with_now(local_now()));
    spawn_app_full(db_url, config, provider, |_| {}).await
}

/// A server over an existing database whose model is `provider` (a replica of another
/// test server, with a slow model, say); the caller keeps the database's guard.
pub async fn spawn_app_on_with_provider(
    db_url: String,
    provider: SharedProvider,
) -> Fallible<TestApp> {
    spawn_app_full(db_url, AgentConfig::default(), provider, |_| {}).await
}

/// A server whose model is `provider`, with the given bounds.
pub async fn spawn_app_with_provider_and(
    provider: SharedProvider,
    config: AgentConfig,
) -> Fallible<TestApp> {
    let (url, guard) = test_database_url().await?;
    let mut app = spawn_app_full(url, config, provider, |_| {}).await?;
    app._db = Some(guard);
    Ok(app)
}

/// A server whose model is `provider` (a slow offline model, an adapter pointed at a fake…).
pub async fn spawn_app_with_provider(provider: SharedProvider) -> Fallible<TestApp> {
    spawn_app_with_provider_and(provider, AgentConfig::default()).await
}

/// The one way a test server starts; `configure` adjusts the state before it serves.
async fn spawn_app_full(
    db_url: String,
    config: AgentConfig,
    provider: SharedProvider,
    configure: impl FnOnce(&mut AppState),
) -> Fallible<TestApp> {
    let pool = db::connect(&db_url).await?;
    let clock: Clock = Arc::new(now);
    let mut state = AppState::new(
        LeptosOptions::builder().output_name("datban").build(),
        pool.clone(),
        provider,
        config,
        clock,
    )
    .await?;
    configure(&mut state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(async move {
        // The server's own accept loop (header deadline, per-address bound), as
        // `server::run` serves.
        let app = server::app(state).with_state(());
        // A panic here would only end this task, never the test: say why the server
        // stopped, and let the test fail on the requests it no longer answers.
        if let Err(error) = server::serve::serve(
            listener,
            app,
            server::serve::EdgeLimits::default(),
            std::future::pending(),
        )
        .await
        {
            eprintln!("test server on {addr} stopped: {error}");
        }
    });
    Ok(TestApp {
        addr,
        db_url,
        pool,
        client: new_client()?,
        server,
        _db: None,
    })
}

/// A replica over an existing database (offline model) with `configure` applied to its
/// state; the caller keeps the database's guard.
pub async fn spawn_replica_configured(
    db_url: String,
    configure: impl FnOnce(&mut AppState),
) -> Fallible<TestApp> {
    let provider: SharedProvider =
        Arc::new(OfflineModel::new(std::time::Duration::ZERO).with_now(local_now()));
    spawn_app_full(db_url, AgentConfig::default(), provider, configure).await
}

/// Like [`spawn_app`] (offline model, fresh database) with `configure` applied to the state.
async fn spawn_app_configured(configure: impl FnOnce(&mut AppState)) -> Fallible<TestApp> {
    let (db_url, guard) = test_database_url().await?;
    let provider: SharedProvider =
        Arc::new(OfflineModel::new(std::time::Duration::ZERO).with_now(local_now()));
    let mut app = spawn_app_full(db_url, AgentConfig::default(), provider, configure).await?;
    app._db = Some(guard);
    Ok(app)
}

pub fn new_client() -> Fallible<reqwest::Client> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Ok(reqwest::Client::builder().cookie_store(true).build()?)
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub async fn post(&self, client: &reqwest::Client, path: &str, body: Value) -> Fallible<Reply> {
        let response = client.post(self.url(path)).json(&body).send().await?;
        read_reply(response).await
    }

    pub async fn chat(&self, conversation: Option<&str>, text: &str) -> Fallible<Reply> {
        let body = match conversation {
            Some(id) => json!({"conversationId": id, "text": text}),
            None => json!({"text": text}),
        };
        self.post(&self.client, "/api/chat", body).await
    }

    pub async fn decide(
        &self,
        conversation: &str,
        call_id: &str,
        approved: bool,
        edited: Option<Value>,
    ) -> Fallible<Reply> {
        let mut body =
            json!({"conversationId": conversation, "toolCallId": call_id, "approved": approved});
        if let Some(edited) = edited {
            body["editedInput"] = edited;
        }
        self.post(&self.client, "/api/approvals", body).await
    }

    pub async fn get_json(&self, path: &str) -> Fallible<(u16, Value)> {
        let response = self.client.get(self.url(path)).send().await?;
        let status = response.status().as_u16();
        Ok((status, response.json().await.unwrap_or(Value::Null)))
    }

    pub async fn count(&self, sql: &'static str) -> Fallible<i64> {
        let (n,): (i64,) = sqlx::query_as(sql).fetch_one(&self.pool).await?;
        Ok(n)
    }
}

/// A search for a restaurant, then a booking request that needs confirming.
pub const SEARCH: &str = "Tìm nhà hàng chả cá ở Hà Nội";
pub const BOOK: &str = "Đặt bàn ở Chả Cá Thăng Long cho 4 người tối mai lúc 19:00";

/// A restaurant conversation of `client` on the server at `base` (`http://host:port`),
/// paused on its createBooking confirmation: (conversation id, call id).
pub async fn pending_booking(client: &reqwest::Client, base: &str) -> Fallible<(String, String)> {
    let post = |body: Value| {
        let request = client.post(format!("{base}/api/chat")).json(&body);
        async move { read_reply(request.send().await?).await }
    };
    let search = post(json!({ "text": SEARCH })).await?;
    assert_eq!(
        search.status_of_run().as_deref(),
        Some("completed"),
        "{:#?}",
        search.events
    );
    let conversation = search.conversation_id();
    let booking = post(json!({ "conversationId": conversation, "text": BOOK })).await?;
    assert_eq!(
        booking.status_of_run().as_deref(),
        Some("awaiting-approval"),
        "{:#?}",
        booking.events
    );
    assert_eq!(booking.of_type("tool-approval-request").len(), 1);
    let call = booking.call_id("createBooking");
    assert!(!call.is_empty());
    Ok((conversation, call))
}

/// The reply's status, headers and body: its events when it is a stream (a `data:` line
/// that is not JSON is an error naming the line), else its JSON body (`Null` if none).
/// `body` as JSON to `base` + `path`, from the page's own origin, and its reply read.
pub async fn post_json(
    client: &reqwest::Client,
    base: &str,
    path: &str,
    body: Value,
) -> Fallible<Reply> {
    let response = client
        .post(format!("{base}{path}"))
        .header("origin", base)
        .json(&body)
        .send()
        .await?;
    read_reply(response).await
}

pub async fn read_reply(response: reqwest::Response) -> Fallible<Reply> {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let stream_header = response
        .headers()
        .get("x-vercel-ai-ui-message-stream")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await?;
    let mut events = Vec::new();
    let mut done = false;
    let mut body = Value::Null;
    if content_type.starts_with("text/event-stream") {
        for block in text.split("\n\n") {
            for line in block.lines() {
                if let Some(data) = line.strip_prefix("data: ") {
                    if data == "[DONE]" {
                        done = true;
                    } else {
                        let event = serde_json::from_str(data)
                            .map_err(|error| format!("not a JSON event: {line:?}: {error}"))?;
                        events.push(event);
                    }
                }
            }
        }
    } else {
        body = serde_json::from_str(&text).unwrap_or(Value::Null);
    }
    Ok(Reply {
        status,
        events,
        done,
        body,
        content_type,
        stream_header,
    })
}
pub mod fake_provider;
pub mod oauth;
pub mod process;
pub mod test_db;

pub use test_db::{test_database_url, TestDatabase};

/// Like [`spawn_app`], with the tools' outside services set to `upstreams` (fakes on
/// local sockets), to test how their failures travel through the agent loop.
pub async fn spawn_app_with_upstreams(upstreams: server::tools::Upstreams) -> Fallible<TestApp> {
    spawn_app_configured(|state| state.agent.upstreams = upstreams).await
}

/// Like [`spawn_app`] (offline model, fresh database), with the edge's settings (rate
/// limit, public origin) set: the other constructors leave the rate limit off, since tests
/// send many requests per owner.
pub async fn spawn_app_with_security(
    security: server::security::SecuritySettings,
) -> Fallible<TestApp> {
    spawn_app_configured(|state| state.security = security).await
}

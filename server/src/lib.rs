//! datban's server: renders the Leptos app, serves the hydrate bundle and the API.

use std::{net::SocketAddr, time::Duration};

use axum::{extract::FromRef, Router};
use leptos_config::LeptosOptions;
use tower_http::trace::TraceLayer;

pub mod agent;
pub mod api;
pub mod config;
pub mod db;
pub mod error;
pub mod exec;
mod health;
pub mod history;
pub mod idempotency;
pub mod mcp;
pub mod metrics;
pub mod model;
pub mod oauth;
pub mod owner;
#[cfg(feature = "site")]
pub mod page;
pub mod runs;
pub mod security;
pub mod serve;
pub mod store;
pub mod tools;

pub use config::Config;

/// Everything a request handler may need, cloned cheaply per request: axum clones the
/// state into every extractor and middleware of every request, so it is one shared
/// [`AppStateFields`]. Its fields read through it
/// (`state.db`); changing one (tests, start-up) copies the fields first if they are
/// shared, so a clone never sees another's change.
#[derive(Clone)]
pub struct AppState(std::sync::Arc<AppStateFields>);

impl std::ops::Deref for AppState {
    type Target = AppStateFields;

    fn deref(&self) -> &AppStateFields {
        &self.0
    }
}

impl std::ops::DerefMut for AppState {
    fn deref_mut(&mut self) -> &mut AppStateFields {
        std::sync::Arc::make_mut(&mut self.0)
    }
}

impl From<AppStateFields> for AppState {
    fn from(fields: AppStateFields) -> Self {
        Self(std::sync::Arc::new(fields))
    }
}

/// What [`AppState`] holds.
#[derive(Clone)]
pub struct AppStateFields {
    /// Site layout and address, as cargo-leptos and `cargo xtask` agree on them.
    pub leptos_options: LeptosOptions,
    /// The application database (on SQLite its one writer connection).
    pub db: db::Pool,
    /// Connections for reads only ([`db::readers`]): on SQLite they never queue behind
    /// a write; elsewhere the same pool as `db`.
    pub reads: crate::db::Reads,
    /// The agent loop (model, bounds, clock).
    pub agent: agent::Agent,
    /// The replies being written: one per conversation, their events and stop switches;
    /// `new` sets no limit per owner, `run` applies the configured one.
    pub runs: runs::Runs,
    /// Signs the owner cookie.
    pub cookie_key: axum_extra::extract::cookie::Key,
    /// Origin check and rate limit settings; `new` leaves the rate limit off, `run`
    /// applies the configured one.
    pub security: security::SecuritySettings,
}

impl AppState {
    /// State over an opened database, with the given model and agent bounds.
    pub async fn new(
        leptos_options: LeptosOptions,
        db: db::Pool,
        provider: model::SharedProvider,
        config: agent::AgentConfig,
        clock: agent::Clock,
    ) -> Result<Self, owner::KeyError> {
        let cookie_key = owner::load_key(&db).await?;
        let reads = db::readers(&db).await;
        Ok(Self::from(AppStateFields {
            leptos_options,
            agent: agent::Agent {
                db: db.clone(),
                reads: reads.clone(),
                provider,
                config,
                clock,
                upstreams: tools::Upstreams::default(),
                catalogue: tools::restaurants::Catalogue::default(),
            },
            runs: {
                // Like the rate limit, no limit here (tests run many replies as one
                // person); `run` applies the configured one (default 3).
                let runs = runs::Runs::with_reader(db.clone(), reads.clone());
                runs.set_max_per_owner(usize::MAX);
                runs
            },
            db,
            reads,
            cookie_key,
            security: security::SecuritySettings::default(),
        }))
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}

/// The whole HTTP application, without a socket, so tests can drive it with `oneshot`.
pub fn app(state: AppState) -> Router {
    let routes = Router::new()
        .merge(health::routes())
        .merge(api::routes().layer(security::api_cors(&state.security)))
        .merge(mcp::routes(&state))
        .merge(oauth::routes());
    #[cfg(feature = "site")]
    let routes = pages(routes, &state);
    routes
        // One layer around every route, not one `Router::layer` per middleware: axum boxes
        // a route again at each `Router::layer`, and every middleware clones the rest of
        // the route for each request, so six layers were some forty boxed clones per
        // request. Listed outermost first.
        .layer(
            tower::ServiceBuilder::new()
                // One span per request, named by its route (`/api/chat/{id}/stream`, never
                // the ids in the path).
                .layer(TraceLayer::new_for_http().make_span_with(
                    |request: &axum::http::Request<_>| {
                        let route = request
                            .extensions()
                            .get::<axum::extract::MatchedPath>()
                            .map_or("(unmatched)", axum::extract::MatchedPath::as_str);
                        tracing::info_span!("request", method = %request.method(), route)
                    },
                ))
                .layer(axum::middleware::from_fn(security::headers))
                // Whatever answers under /api/ (the fallback's 404 page, a 405, an
                // extractor's text) reaches the client as JSON.
                .layer(axum::middleware::from_fn(api::json_answers))
                // Cross-site and oversized API requests are refused before an owner is
                // issued.
                .layer(axum::middleware::from_fn_with_state(
                    security::ApiGuard::new(&state.security),
                    security::guard_api,
                ))
                .layer(axum::middleware::from_fn_with_state(
                    state.clone(),
                    owner::ensure_owner,
                ))
                // Innermost: the rate limit is per owner, so it runs after the owner is
                // known.
                .layer(axum::middleware::from_fn_with_state(
                    security::MessageLimiter::new(state.security.rate_limit)
                        .shared_in(&state.db, state.security.rate_limit),
                    security::limit_messages,
                )),
        )
        .with_state(state)
}

/// The pages, and what answers any other path.
#[cfg(feature = "site")]
fn pages(routes: Router<AppState>, state: &AppState) -> Router<AppState> {
    use app::shell;
    use leptos_axum::file_and_error_handler_with_context;
    let options = state.leptos_options.clone();
    routes
        .merge(page::routes())
        // Pages carry a Content-Security-Policy with the nonce of their hydration scripts,
        // and are in the person's language.
        .merge(page::pages(state, move || shell(options.clone())))
        // Files under the site root (the hydrate bundle in /pkg, favicon, …), served
        // precompressed (.br/.gz) when present; anything else renders the 404 page.
        .fallback(file_and_error_handler_with_context::<AppState, _>(
            {
                let state = state.clone();
                move || page::provide_page_context(&state)
            },
            shell,
        ))
}

/// Why the server could not start. Each variant's message is meant for the operator.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// The environment holds a value the server cannot use.
    #[error("configuration: {0}")]
    Config(#[from] config::ConfigError),
    /// The database could not be opened or migrated.
    #[error("database: {0}")]
    Database(#[from] db::DbError),
    /// The model provider could not be set up.
    #[error("model provider: {0}")]
    Provider(#[from] model::ProviderError),
    /// The cookie signing key is unusable.
    #[error("{0}")]
    CookieKey(#[from] owner::KeyError),
    /// The listening socket could not be opened.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address from `LEPTOS_SITE_ADDR`.
        addr: SocketAddr,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The server stopped with an I/O error.
    #[error("server: {0}")]
    Serve(std::io::Error),
}

/// Opens the database, runs migrations and serves until SIGINT or SIGTERM.
pub async fn run(config: Config) -> Result<(), StartupError> {
    let pool = db::connect(&config.database_url).await?;
    let addr = config.leptos_options.site_addr;
    let provider = provider(&config).await?;
    let mut state = AppState::new(
        config.leptos_options,
        pool,
        provider,
        config.agent,
        agent::system_clock(),
    )
    .await?;
    state.security = config.security;
    state.runs.set_max_per_owner(config.max_runs_per_owner);
    state.runs.set_stale_after(config.heartbeat_timeout);
    // Runs of processes that died while this one was down are closed from the start.
    state.runs.watch_for_dead();
    if let Some(url) = config.weather_url {
        let service = tools::weather::WeatherService::new(url, config.weather_timeout)
            .map_err(|error| config::ConfigError::Weather(error.to_string()))?;
        // Not the URL: it may carry a key in its query.
        tracing::info!("forecasts from the weather service (DATBAN_WEATHER_URL)");
        state.agent.upstreams.weather = Some(service);
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| StartupError::Bind { addr, source })?;
    tracing::info!("datban listening on http://{addr}");
    let stopping = tokio_util::sync::CancellationToken::new();
    {
        let stopping = stopping.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            stopping.cancel();
        });
    }
    let runs = state.runs.clone();
    let grace = config.edge.shutdown_grace;
    // On the signal both at once: the listener closes and open connections get the grace
    // to finish, while the replies being written get it too and are then stopped as
    // interrupted (their streams end with that, which lets their connections close).
    let drain_runs = async {
        stopping.cancelled().await;
        let stopped = runs.shut_down(grace).await;
        if stopped > 0 {
            tracing::warn!(runs = stopped, "replies still being written at the end of the grace period were stopped as interrupted");
        }
    };
    // The connections' grace outlasts the replies': a reply stopped as interrupted at the
    // end of its grace still has to write that end to its socket, and with equal graces
    // the process could exit first, cutting the stream mid-frame (seen on a busy machine).
    // Connections that have ended do not wait for it.
    let mut edge = config.edge;
    edge.shutdown_grace = grace + FLUSH_AFTER_DRAIN;
    let (served, ()) = tokio::join!(
        serve::serve(
            listener,
            app(state).with_state(()),
            edge,
            stopping.clone().cancelled_owned(),
        ),
        drain_runs,
    );
    served.map_err(StartupError::Serve)
}

/// How long open connections may go on after the replies' shutdown grace: time for the
/// replies stopped then to write their end.
const FLUSH_AFTER_DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

/// [`app`] as the service each connection gets. axum's own way of serving a `Router`
/// rebuilds every route for each new connection (`with_state` per connection: about
/// 27 KiB of boxed services and maps held as long as the connection is open, and the work
/// of building them); built once here, a connection gets a clone of one `Arc`.
pub fn service(state: AppState) -> axum::routing::IntoMakeService<Router> {
    app(state).with_state(()).into_make_service()
}

/// The model the configuration asks for.
async fn provider(config: &Config) -> Result<model::SharedProvider, StartupError> {
    use config::ProviderConfig;
    use std::sync::Arc;
    let settings = model::http::HttpSettings::default();
    let provider: model::SharedProvider = match &config.provider {
        ProviderConfig::Offline => Arc::new(model::offline::OfflineModel::new(
            config.offline_token_delay,
        )),
        ProviderConfig::OpenAiChat(remote) => {
            let adapter = model::openai_chat::OpenAiChat::new(
                remote.base_url.clone(),
                remote.api_key.clone(),
                remote.model.clone(),
                settings,
            )?;
            if remote.model.is_empty() {
                let model = adapter.discover_model().await?;
                tracing::info!(%model, "using the server's first model");
                Arc::new(adapter.with_model(model))
            } else {
                Arc::new(adapter)
            }
        }
        ProviderConfig::OpenAiResponses(remote) => {
            Arc::new(model::openai_responses::OpenAiResponses::new(
                remote.base_url.clone(),
                remote.api_key.clone(),
                remote.model.clone(),
                settings,
            )?)
        }
        ProviderConfig::Anthropic(remote) => Arc::new(model::anthropic::Anthropic::new(
            remote.base_url.clone(),
            remote.api_key.clone().unwrap_or_default(),
            remote.model.clone(),
            settings,
        )?),
    };
    tracing::info!(provider = ?config.provider, "model provider");
    Ok(provider)
}

async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}

/// How long a health check waits for the database before reporting it unavailable.
pub(crate) const HEALTH_DB_TIMEOUT: Duration = Duration::from_secs(2);

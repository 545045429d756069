//! Defences at the HTTP edge, each answering with a clear JSON error
//! (`{"error":{"code","message"}}`) so the page can say what happened:
//!
//! - security headers on every response, and on pages a Content-Security-Policy whose
//!   script nonce is the one Leptos puts on its inline hydration scripts;
//! - the Origin check: a state-changing API request from another site is refused (403
//!   `CROSS_SITE_REQUEST`), so a page elsewhere cannot chat or approve with the person's
//!   cookie;
//! - the API body limit (413 `BODY_TOO_LARGE`);
//! - the per-owner rate limit on messages and approvals (429 `RATE_LIMITED`).
//!
//! The limits on what a model streams ([`MAX_ARGUMENT_BYTES`], [`MAX_RUN_BYTES`]) are
//! enforced by the agent loop.

use std::{
    convert::Infallible,
    num::NonZeroU32,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::Duration,
};

use axum::{
    body::{Body, HttpBody},
    extract::{Request, State},
    http::{header, HeaderMap, HeaderName, HeaderValue, Method},
    middleware::Next,
    response::{IntoResponse, Response},
};
use governor::middleware::NoOpMiddleware;
use http_body_util::BodyExt;
use tower::{Layer, ServiceExt};
use tower_governor::{
    governor::{GovernorConfigBuilder, SharedRateLimiter},
    key_extractor::KeyExtractor,
    GovernorError, GovernorLayer,
};

use shared::http::ApiCode;

use crate::{error::ApiError, owner::OwnerId};

/// Largest request body an `/api/` request may have. Every API body is a small JSON
/// object; a message is at most 4000 characters (`api::MAX_MESSAGE_CHARS`).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Largest body of `POST /api/chat`: an AI SDK client sends the whole conversation with
/// every message (of which the server reads only the last), so a long chat with tool
/// results is far more than one message. The same as axum's own JSON limit.
pub const MAX_CHAT_BODY_BYTES: usize = 2 * 1024 * 1024;

/// How long an API request's body may take to arrive, whole.
pub const BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The body limit of a request to `path`.
fn body_limit(path: &str) -> usize {
    if path == "/api/chat" {
        MAX_CHAT_BODY_BYTES
    } else {
        MAX_BODY_BYTES
    }
}

/// Largest argument text of one tool call the agent loop keeps; a longer one is answered
/// with `VALIDATION_ERROR` without being parsed.
pub const MAX_ARGUMENT_BYTES: usize = 16 * 1024;

/// Most text and argument bytes one run may stream from the model; beyond it the model's
/// stream is dropped and the run ends with an error.
pub const MAX_RUN_BYTES: usize = 256 * 1024;

/// Messages and approvals per minute per owner when `DATBAN_RATE_PER_MINUTE` is not set.
pub const DEFAULT_RATE_PER_MINUTE: u32 = 20;

/// The share of the per-minute budget an owner may send at once, before the steady pace
/// applies: a quarter (5 of the default 20).
const BURST_DIVISOR: u32 = 4;

/// How many messages and approvals an owner may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// The sustained pace: one request's allowance comes back every `60 s / per_minute`.
    pub per_minute: NonZeroU32,
    /// How many requests may come at once (at least 1).
    pub burst: NonZeroU32,
}

impl RateLimit {
    /// `per_minute` with a small burst: a quarter of it (at least 1), so a person can send
    /// a few messages quickly, and a script is held to the pace after those.
    pub fn per_minute(per_minute: NonZeroU32) -> Self {
        let burst = NonZeroU32::new(per_minute.get() / BURST_DIVISOR).unwrap_or(NonZeroU32::MIN);
        Self { per_minute, burst }
    }
}

/// The edge's settings, from `Config` (`DATBAN_PUBLIC_ORIGIN`, `DATBAN_RATE_PER_MINUTE`).
///
/// The default, which `AppState::new` uses, has no rate limit and no public origin: test
/// servers send many requests per owner. `server::run` applies the configured settings,
/// whose rate limit is [`DEFAULT_RATE_PER_MINUTE`] unless set otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecuritySettings {
    /// The origin browsers use when the server is behind a proxy that changes `Host`
    /// (`https://datban.example`), accepted besides the request's own `Host`.
    pub public_origin: Option<String>,
    /// The per-owner limit on `POST /api/chat` and `POST /api/approvals`; `None`: none.
    pub rate_limit: Option<RateLimit>,
    /// How long an API request's body may take to arrive, whole; `None`:
    /// [`BODY_READ_TIMEOUT`].
    pub body_timeout: Option<std::time::Duration>,
    /// Other origins whose pages may call `/api/` with the person's cookie
    /// (`DATBAN_CORS_ORIGINS`: an AI SDK front end served elsewhere), normalised.
    pub cors_origins: Vec<String>,
}

/// `{"error":{"code","message"}}` with `status`, the shape every API error has.
fn json_error(code: ApiCode, message: &str) -> Response {
    ApiError::new(code, message).into_response()
}

// ---------------------------------------------------------------------------------------
// Headers and the page's Content-Security-Policy

/// CORS for `/api/` from the configured other origins ([`SecuritySettings::cors_origins`]):
/// their pages may send the person's cookie and read the replies, including the headers
/// the AI SDK's transport and our page read. Without any configured, browsers keep the API
/// to pages of our own origin.
pub fn api_cors(settings: &SecuritySettings) -> tower_http::cors::CorsLayer {
    use tower_http::cors::{AllowOrigin, CorsLayer};
    let origins: Vec<HeaderValue> = settings
        .cors_origins
        .iter()
        .filter_map(|origin| HeaderValue::from_str(origin).ok())
        .collect();
    CorsLayer::new()
        .allow_origin(AllowOrigin::list(origins))
        .allow_credentials(true)
        .allow_methods([axum::http::Method::GET, axum::http::Method::POST])
        .allow_headers([header::CONTENT_TYPE])
        .expose_headers([
            HeaderName::from_static("x-datban-run-id"),
            HeaderName::from_static("x-vercel-ai-ui-message-stream"),
            HeaderName::from_static("retry-after"),
        ])
        .max_age(std::time::Duration::from_secs(600))
}

/// The Content-Security-Policy of a page: only our own scripts, the inline scripts that
/// carry this response's `nonce` (Leptos's hydration scripts), and compiling our wasm
/// (`'wasm-unsafe-eval'`, which allows WebAssembly but not `eval`). Without a nonce no
/// inline script may run.
pub fn content_security_policy(nonce: Option<&str>) -> String {
    let nonce = nonce
        .map(|nonce| format!(" 'nonce-{nonce}'"))
        .unwrap_or_default();
    // `cargo leptos watch` reloads the page over a websocket on another port; outside it
    // the page only talks to its own origin.
    let connect = if std::env::var_os("LEPTOS_WATCH").is_some() {
        "'self' ws: wss:"
    } else {
        "'self'"
    };
    format!(
        "default-src 'self'; script-src 'self'{nonce} 'wasm-unsafe-eval'; style-src 'self'; \
         img-src 'self' data:; connect-src {connect}; base-uri 'none'; form-action 'self'; \
         frame-ancestors 'none'; object-src 'none'"
    )
}

/// Leptos context for server rendering (`leptos_routes_with_context`): sets the page's
/// Content-Security-Policy with the nonce leptos_axum generated for this response, the
/// one `HydrationScripts` puts on its inline scripts.
#[cfg(feature = "site")]
pub fn provide_page_csp() {
    use leptos::prelude::use_context;
    let Some(nonce) = leptos::nonce::use_nonce() else {
        return;
    };
    let Some(response) = use_context::<leptos_axum::ResponseOptions>() else {
        return;
    };
    // The nonce is URL-safe base64, always a valid header value; if it ever were not, the
    // fallback policy of `headers` (no inline scripts) applies.
    if let Ok(value) = HeaderValue::from_str(&content_security_policy(Some(&nonce))) {
        response.insert_header(header::CONTENT_SECURITY_POLICY, value);
    }
}

fn is_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/html"))
}

/// Middleware: the security headers of every response. A page without the rendered
/// policy (none should exist) gets one that allows no inline script at all.
pub async fn headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    // Files are never sniffed into another type (an uploaded text run as a script).
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Conversation ids are in our URLs (`?c=`); other sites never see them.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    // No other site may frame the page to trick a click on "Xác nhận" (clickjacking).
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if is_html(headers) && !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        if let Ok(value) = HeaderValue::from_str(&content_security_policy(None)) {
            headers.insert(header::CONTENT_SECURITY_POLICY, value);
        }
    }
    response
}

// ---------------------------------------------------------------------------------------
// The Origin check and the body limit

/// A web origin reduced to what identifies it: scheme, host and port (default ports filled
/// in), lower-cased.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

impl Origin {
    /// `scheme://host[:port]`, as browsers send it in `Origin` (a trailing `/` is
    /// tolerated for configured values); `None` for `null`, paths, or other schemes.
    fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let text = text.strip_suffix('/').unwrap_or(text);
        let (scheme, authority) = text.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default = default_port(&scheme)?;
        if authority.is_empty() || authority.contains(['/', '?', '#', '@']) {
            return None;
        }
        let authority: axum::http::uri::Authority = authority.parse().ok()?;
        Some(Self {
            host: authority.host().to_ascii_lowercase(),
            port: authority.port_u16().unwrap_or(default),
            scheme,
        })
    }

    /// Whether `authority` (a `Host` header) names this origin's host and port; a `Host`
    /// without a port means the scheme's default one.
    fn matches_host(&self, authority: &str) -> bool {
        let Ok(authority) = authority.trim().parse::<axum::http::uri::Authority>() else {
            return false;
        };
        let port = authority
            .port_u16()
            .or_else(|| default_port(&self.scheme))
            .unwrap_or(0);
        authority.host().eq_ignore_ascii_case(&self.host) && port == self.port
    }
}

/// Normalises a configured public origin (`DATBAN_PUBLIC_ORIGIN`); `None` when it is not
/// `http(s)://host[:port]`.
pub fn normalize_origin(text: &str) -> Option<String> {
    let origin = Origin::parse(text)?;
    let port = match default_port(&origin.scheme) {
        Some(default) if default == origin.port => String::new(),
        _ => format!(":{}", origin.port),
    };
    Some(format!("{}://{}{port}", origin.scheme, origin.host))
}

/// The state of [`guard_api`]: the configured public origin, if any, and the body deadline.
#[derive(Debug, Clone)]
pub struct ApiGuard {
    public_origin: Option<Arc<Origin>>,
    /// Origins allowed besides ours ([`SecuritySettings::cors_origins`]).
    allowed: Arc<[Origin]>,
    body_timeout: std::time::Duration,
}

impl Default for ApiGuard {
    fn default() -> Self {
        Self::new(&SecuritySettings::default())
    }
}

impl ApiGuard {
    /// The guard for these settings.
    pub fn new(settings: &SecuritySettings) -> Self {
        Self {
            public_origin: settings
                .public_origin
                .as_deref()
                .and_then(Origin::parse)
                .map(Arc::new),
            allowed: settings
                .cors_origins
                .iter()
                .filter_map(|origin| Origin::parse(origin))
                .collect(),
            body_timeout: settings.body_timeout.unwrap_or(BODY_READ_TIMEOUT),
        }
    }

    /// Whether a state-changing request may come from where the browser says it comes
    /// from. `Origin` is sent by browsers on every cross-origin request and on same-origin
    /// POSTs; when it is missing, `Sec-Fetch-Site` (sent by current browsers) still tells a
    /// cross-site request. A request with neither is not from a browser page (curl, tests)
    /// and carries no ambient authority worth forging.
    fn allows(&self, request: &Request) -> bool {
        let headers = request.headers();
        if headers.get_all(header::ORIGIN).iter().nth(1).is_some() {
            // A browser sends one; two are a forgery that hopes one check reads the first
            // and another the last.
            return false;
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let Some(origin) = origin.to_str().ok().and_then(Origin::parse) else {
                // `null` (sandboxed frames, some redirects) or garbage: not us.
                return false;
            };
            if self.public_origin.as_deref() == Some(&origin) || self.allowed.contains(&origin) {
                return true;
            }
            // This server speaks plain HTTP: a page of `https://` the same host is another
            // origin (behind a TLS proxy, the page's origin is `DATBAN_PUBLIC_ORIGIN`).
            if origin.scheme != "http" {
                return false;
            }
            // HTTP/1 has `Host`; HTTP/2 carries the authority in the request target.
            let host = headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .map(str::to_owned)
                .or_else(|| request.uri().authority().map(|a| a.as_str().to_owned()));
            return host.is_some_and(|host| origin.matches_host(&host));
        }
        let site = headers
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .map(str::trim);
        !site.is_some_and(|site| site.eq_ignore_ascii_case("cross-site"))
    }
}

fn changes_state(method: &Method) -> bool {
    [Method::POST, Method::PUT, Method::PATCH, Method::DELETE].contains(method)
}

fn body_too_large(limit: usize) -> Response {
    json_error(
        ApiCode::BodyTooLarge,
        &format!(
            "The request body is too large (limit {} KiB).",
            limit / 1024
        ),
    )
}

/// Middleware for `/api/`: refuses cross-site state-changing requests (403
/// `CROSS_SITE_REQUEST`) and bodies over [`MAX_BODY_BYTES`] (413 `BODY_TOO_LARGE`), before
/// any handler runs, so nothing is stored for either.
pub async fn guard_api(State(guard): State<ApiGuard>, request: Request, next: Next) -> Response {
    if !request.uri().path().starts_with("/api/") {
        return next.run(request).await;
    }
    if changes_state(request.method()) && !guard.allows(&request) {
        tracing::warn!(
            method = %request.method(),
            path = %request.uri().path(),
            "refused a cross-site request"
        );
        return json_error(
            ApiCode::CrossSiteRequest,
            "This request came from another site and was refused.",
        );
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let limit = body_limit(request.uri().path());
    if declared.is_some_and(|length| length > limit as u64) {
        return body_too_large(limit);
    }
    // A body is read here, whole, up to the limit and within a deadline: an oversized one
    // (chunked, without a declared length) gets the same JSON answer instead of the
    // extractor's plain text, and one that trickles in is cut off instead of holding its
    // connection and task for as long as the client likes.
    if declared != Some(0) && request.body().size_hint().exact() != Some(0) {
        let (parts, body) = request.into_parts();
        let read = http_body_util::Limited::new(body, limit).collect();
        let Ok(read) = tokio::time::timeout(guard.body_timeout, read).await else {
            tracing::info!(path = %parts.uri.path(), "a request body did not arrive in time");
            return json_error(
                ApiCode::RequestTimeout,
                &format!(
                    "The request body did not arrive within {} ms.",
                    guard.body_timeout.as_millis()
                ),
            );
        };
        let bytes = match read {
            Ok(collected) => collected.to_bytes(),
            Err(error) if error.is::<http_body_util::LengthLimitError>() => {
                return body_too_large(limit);
            }
            Err(error) => {
                tracing::info!(%error, "reading a request body failed");
                return json_error(ApiCode::BadRequest, "The request body could not be read.");
            }
        };
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    }
    next.run(request).await
}

// ---------------------------------------------------------------------------------------
// The per-owner rate limit

/// Keys the rate limit by the owner `owner::ensure_owner` attached to the request.
#[derive(Debug, Clone, Copy)]
pub struct OwnerKey;

impl KeyExtractor for OwnerKey {
    type Key = String;

    fn extract<T>(&self, request: &axum::http::Request<T>) -> Result<String, GovernorError> {
        request
            .extensions()
            .get::<OwnerId>()
            .map(|owner| owner.0.clone())
            .ok_or(GovernorError::UnableToExtractKey)
    }
}

type OwnerLayer = GovernorLayer<OwnerKey, NoOpMiddleware, Body>;

/// The state of [`limit_messages`]: the per-owner limiter, or none.
#[derive(Clone, Default)]
pub struct MessageLimiter {
    /// The middleware, and the limiter it shares (kept to prune it).
    layer: Option<(OwnerLayer, SharedRateLimiter<String, NoOpMiddleware>)>,
    /// On PostgreSQL: the same limit counted in the database, across every replica.
    shared: Option<SharedLimit>,
    /// Limited requests so far, to prune idle owners from the limiter now and then.
    checks: Arc<AtomicU64>,
}

/// After this many limited requests the limiter forgets owners whose allowance is full
/// again, so owners that come and go (each cleared cookie is a new one) do not pile up.
const PRUNE_EVERY: u64 = 1024;

impl MessageLimiter {
    /// A limiter for `limit`; `None` lets every request through.
    pub fn new(limit: Option<RateLimit>) -> Self {
        let layer = limit.and_then(|limit| {
            let period = Duration::from_secs(60) / limit.per_minute.get();
            let config = GovernorConfigBuilder::default()
                .period(period)
                .burst_size(limit.burst.get())
                .key_extractor(OwnerKey)
                .finish()?;
            let limiter = config.limiter().clone();
            Some((
                GovernorLayer::new(config).error_handler(rate_limit_error),
                limiter,
            ))
        });
        Self {
            layer,
            shared: None,
            checks: Arc::default(),
        }
    }

    /// The same limit also counted in `db` when it is PostgreSQL (several replicas share
    /// it: each alone would let N times as much through); on SQLite nothing changes.
    pub fn shared_in(mut self, db: &crate::db::Pool, limit: Option<RateLimit>) -> Self {
        if crate::db::backend(db) == crate::db::Backend::Postgres {
            self.shared = limit.map(|limit| SharedLimit {
                db: db.clone(),
                limit,
            });
        }
        self
    }

    fn prune(&self, limiter: &SharedRateLimiter<String, NoOpMiddleware>) {
        if self.checks.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            // The governor's own pruning: an owner whose allowance is full again is
            // indistinguishable from one never seen.
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
    }
}

/// Now, in milliseconds since 1970 (the shared limit compares clocks of replicas).
fn epoch_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// A per-owner limit counted in the database (the generic cell rate algorithm, one row
/// per owner, one conditional upsert per request).
#[derive(Clone)]
struct SharedLimit {
    db: crate::db::Pool,
    limit: RateLimit,
}

impl SharedLimit {
    /// `Ok(None)`: allowed and counted; `Ok(Some(seconds))`: refused, retry after that.
    async fn check(&self, owner: &str) -> Result<Option<u64>, sqlx::Error> {
        let now = epoch_ms();
        let period = 60_000 / i64::from(self.limit.per_minute.get()).max(1);
        let window = period * i64::from(self.limit.burst.get());
        let allowed: Option<(i64,)> = sqlx::query_as(
            "INSERT INTO rate_allowances (owner_id, tat) VALUES ($1, $2 + $3) \
             ON CONFLICT (owner_id) DO UPDATE \
             SET tat = GREATEST(rate_allowances.tat, $2) + $3 \
             WHERE GREATEST(rate_allowances.tat, $2) + $3 - $4 <= $2 RETURNING tat",
        )
        .bind(owner)
        .bind(now)
        .bind(period)
        .bind(window)
        .fetch_optional(&self.db)
        .await?;
        if allowed.is_some() {
            return Ok(None);
        }
        let tat: Option<(i64,)> =
            sqlx::query_as("SELECT tat FROM rate_allowances WHERE owner_id = $1")
                .bind(owner)
                .fetch_optional(&self.db)
                .await?;
        let wait_ms = tat.map_or(period, |(tat,)| tat.max(now) + period - window - now);
        Ok(Some(u64::try_from(wait_ms.max(0) / 1000 + 1).unwrap_or(1)))
    }

    /// Forgets owners whose allowance is whole again (in the background).
    fn prune(&self) {
        let db = self.db.clone();
        tokio::spawn(async move {
            let before = epoch_ms();
            if let Err(error) = sqlx::query("DELETE FROM rate_allowances WHERE tat < $1")
                .bind(before)
                .execute(&db)
                .await
            {
                tracing::warn!(%error, "forgetting old rate allowances failed");
            }
        });
    }
}

/// The answer for a refused request: retry after `seconds`.
fn too_many(seconds: u64) -> Response {
    ApiError::new(
        ApiCode::RateLimited,
        format!("Too many messages in a short time. Please wait {seconds} s and try again."),
    )
    .retry_after(seconds)
    .into_response()
}

fn rate_limit_error(error: GovernorError) -> Response {
    match error {
        GovernorError::TooManyRequests { wait_time, .. } => {
            // The governor rounds down; "0" would invite an immediate retry that fails.
            too_many(wait_time.max(1))
        }
        GovernorError::UnableToExtractKey | GovernorError::Other { .. } => {
            // Only possible if the owner middleware were not in front of this one.
            tracing::error!(?error, "rate limit could not identify the owner");
            json_error(
                ApiCode::Internal,
                "Something went wrong on our side. Please try again.",
            )
        }
    }
}

fn is_limited(request: &Request) -> bool {
    request.method() == Method::POST
        && matches!(request.uri().path(), "/api/chat" | "/api/approvals")
}

/// Middleware (behind `owner::ensure_owner`): `POST /api/chat` and `POST /api/approvals`
/// go through the per-owner limiter; one owner's bursts never use another's allowance.
/// Everything else (pages, reads, stop) is not limited: stopping a reply must always work.
pub async fn limit_messages(
    State(limiter): State<MessageLimiter>,
    request: Request,
    next: Next,
) -> Response {
    let Some((layer, shared)) = limiter.layer.as_ref().filter(|_| is_limited(&request)) else {
        return next.run(request).await;
    };
    limiter.prune(shared);
    let across = limiter.shared.clone();
    if let Some(across) = &across {
        if limiter.checks.load(Ordering::Relaxed) % PRUNE_EVERY == 0 {
            across.prune();
        }
    }
    let service = layer.layer(tower::service_fn(move |request: Request| {
        let next = next.clone();
        let across = across.clone();
        async move {
            // Past this process's own count: the one all replicas share.
            if let (Some(across), Some(owner)) = (&across, request.extensions().get::<OwnerId>()) {
                match across.check(&owner.0).await {
                    Ok(None) => {}
                    Ok(Some(seconds)) => return Ok(too_many(seconds)),
                    // The database is needed for the message anyway; this process's own
                    // count still holds meanwhile.
                    Err(error) => tracing::warn!(%error, "the shared rate limit could not be read"),
                }
            }
            Ok::<_, Infallible>(next.run(request).await)
        }
    }));
    match service.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> Request {
        let mut builder = Request::post("/api/chat");
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(Body::empty()).unwrap()
    }

    #[test]
    fn same_origin_passes_and_other_sites_do_not() {
        let guard = ApiGuard::default();
        let host = ("host", "127.0.0.1:3000");
        assert!(guard.allows(&request(&[host, ("origin", "http://127.0.0.1:3000")])));
        assert!(guard.allows(&request(&[host])));
        assert!(guard.allows(&request(&[host, ("sec-fetch-site", "same-origin")])));
        assert!(!guard.allows(&request(&[host, ("origin", "https://evil.example")])));
        assert!(!guard.allows(&request(&[host, ("origin", "http://127.0.0.1:3001")])));
        assert!(!guard.allows(&request(&[host, ("origin", "null")])));
        assert!(!guard.allows(&request(&[host, ("sec-fetch-site", "cross-site")])));
        // Default ports are the same origin with or without them.
        let plain = ("host", "datban.example");
        assert!(guard.allows(&request(&[plain, ("origin", "http://datban.example:80")])));
        assert!(guard.allows(&request(&[plain, ("origin", "http://DATBAN.example")])));
        // This server speaks HTTP: the same host under https is another origin (a TLS
        // proxy's page is `DATBAN_PUBLIC_ORIGIN`), and so is the same port under https.
        assert!(!guard.allows(&request(&[plain, ("origin", "https://datban.example")])));
        assert!(!guard.allows(&request(&[host, ("origin", "https://127.0.0.1:3000")])));
        // Two Origin headers are refused, even if both are ours.
        let ours = ("origin", "http://127.0.0.1:3000");
        assert!(!guard.allows(&request(&[host, ours, ours])));
    }

    #[test]
    fn a_configured_public_origin_is_accepted_behind_a_proxy() {
        let guard = ApiGuard::new(&SecuritySettings {
            public_origin: normalize_origin("https://datban.example/"),
            rate_limit: None,
            body_timeout: None,
            cors_origins: Vec::new(),
        });
        let internal = ("host", "10.0.0.5:3000");
        assert!(guard.allows(&request(&[internal, ("origin", "https://datban.example")])));
        assert!(!guard.allows(&request(&[internal, ("origin", "http://datban.example")])));
        assert!(!guard.allows(&request(&[internal, ("origin", "https://evil.example")])));
    }

    #[test]
    fn public_origins_are_normalised_or_refused() {
        assert_eq!(
            normalize_origin("HTTPS://Datban.Example:443/").as_deref(),
            Some("https://datban.example")
        );
        assert_eq!(
            normalize_origin("http://localhost:8080").as_deref(),
            Some("http://localhost:8080")
        );
        for bad in [
            "datban.example",
            "ftp://x",
            "https://x/path",
            "https://",
            "null",
        ] {
            assert_eq!(normalize_origin(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_policy_allows_only_our_scripts_and_wasm() {
        let policy = content_security_policy(Some("abc123"));
        assert!(policy.contains("script-src 'self' 'nonce-abc123' 'wasm-unsafe-eval'"));
        assert!(policy.contains("frame-ancestors 'none'"));
        assert!(!policy.contains("unsafe-inline"));
        assert!(!content_security_policy(None).contains("nonce-"));
    }

    #[test]
    fn the_burst_is_a_quarter_of_the_budget() {
        let burst = |n: u32| {
            RateLimit::per_minute(NonZeroU32::new(n).unwrap())
                .burst
                .get()
        };
        assert_eq!(burst(DEFAULT_RATE_PER_MINUTE), 5);
        assert_eq!(burst(2), 1);
        assert_eq!(burst(10_000), 2500);
    }
}

//! OAuth 2.1 for the MCP endpoints (`/mcp/restaurant`, `/mcp/gifts`, `/mcp/shipping`).
//!
//! Those endpoints are OAuth resource servers and datban is their authorization server:
//!
//! - metadata: RFC 9728 protected-resource documents (one per MCP server, path-suffixed)
//!   and RFC 8414 authorization-server metadata (also at `openid-configuration`, where some
//!   clients look first);
//! - dynamic client registration (RFC 7591, `POST /oauth/register`);
//! - authorization code with PKCE S256 and an audience (RFC 8707 `resource`): `GET
//!   /oauth/authorize` checks the request and sends the browser to the consent page of
//!   the Leptos app (`/oauth/consent`), whose answer (`POST /api/oauth/consent`) makes a
//!   single-use code bound to the browser's owner;
//! - `POST /oauth/token` (code exchange, refresh with rotation and reuse detection) and
//!   `POST /oauth/revoke` (RFC 7009);
//! - the owner's connected apps (`GET /api/connections`, `DELETE /api/connections/{id}`).
//!
//! The MCP handlers call [`verify_bearer`] and answer 401 with [`challenge`] when it
//! gives nothing usable. Secrets are never stored, only their SHA-256.

use std::time::Duration;

use axum::{
    extract::{Path, Request, State},
    http::{header, HeaderMap, HeaderValue, Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
    routing::{delete, get, post},
    Json, Router,
};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::json;
use shared::http;

use crate::{store::StoreError, AppState};

mod flow;
mod rows;
mod secret;

pub use secret::pkce_challenge;

/// The scope that lets a client find restaurants and make, list and cancel the owner's
/// bookings.
pub const SCOPE_BOOKINGS: &str = "bookings";
/// The scope that lets a client prepare and create gift checkouts in the owner's name.
pub const SCOPE_CHECKOUT: &str = "checkout";
/// Every scope, in the order they are shown and issued.
pub const SCOPES: [&str; 2] = [SCOPE_BOOKINGS, SCOPE_CHECKOUT];

/// The assistants that have an MCP server, each at `/mcp/<assistant>`.
pub const ASSISTANTS: [&str; 3] = ["restaurant", "gifts", "shipping"];

/// How long an access token is accepted.
pub const ACCESS_TOKEN_LIFETIME: Duration = Duration::from_secs(3600);
/// How long a refresh token may be exchanged (each exchange gives a new one).
pub const REFRESH_TOKEN_LIFETIME: Duration = Duration::from_secs(30 * 24 * 3600);
/// How long an authorization code may be exchanged.
pub const CODE_LIFETIME: Duration = Duration::from_secs(60);
/// How long a checked authorization request waits for the person's answer.
pub const REQUEST_LIFETIME: Duration = Duration::from_secs(600);

/// A valid access token's grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The person (the browser's owner) who allowed the client.
    pub owner_id: String,
    /// The registered client the token was issued to.
    pub client_id: String,
    /// What the token allows, from [`SCOPES`].
    pub scopes: Vec<String>,
}

/// Why a request's bearer token cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BearerError {
    /// Not a bearer token, or unknown, expired, revoked, or issued for another resource:
    /// answer 401 with `challenge(…, Some("invalid_token"), …)`. The reasons are not told
    /// apart on purpose: a client can do nothing different about them.
    #[error("the access token is not valid for this resource")]
    Invalid,
    /// Our database failed; nothing can be said about the token (answer 503).
    #[error("storage: {0}")]
    Storage(#[from] StoreError),
}

/// The grant of the request's access token, if it is valid for `resource`.
///
/// `resource` is the absolute resource URL ([`resource_url`]), or its path
/// (`"/mcp/restaurant"`), which is resolved against this request's origin. `Ok(None)`
/// when the request has no `Authorization` header at all.
pub async fn verify_bearer(
    state: &AppState,
    headers: &HeaderMap,
    resource: &str,
) -> Result<Option<Grant>, BearerError> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(BearerError::Invalid);
    }
    let token = value
        .to_str()
        .ok()
        .and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
        .filter(|token| !token.is_empty() && token.len() <= 512)
        .ok_or(BearerError::Invalid)?;
    let resource = if resource.starts_with('/') {
        resource_url(state, headers, resource).ok_or(BearerError::Invalid)?
    } else {
        resource.to_owned()
    };
    let now = (state.agent.clock)();
    let found = rows::access_token(&state.reads, &secret::hash(token)).await?;
    let Some(found) = found else {
        return Err(BearerError::Invalid);
    };
    if found.revoked || found.expires_at.as_str() <= timestamp(now).as_str() {
        return Err(BearerError::Invalid);
    }
    if found.resource != resource {
        return Err(BearerError::Invalid);
    }
    // "Last used" is for the person's list of connected apps: a minute's precision is
    // plenty, and it keeps most MCP calls from writing.
    let stale = timestamp(now - chrono::Duration::seconds(60));
    if found
        .last_used_at
        .as_deref()
        .is_none_or(|last| last < stale.as_str())
    {
        if let Err(error) = rows::touch_grant(&state.db, &found.grant_id, &timestamp(now)).await {
            tracing::warn!(%error, "cannot record when a grant was last used");
        }
    }
    Ok(Some(Grant {
        owner_id: found.owner_id,
        client_id: found.client_id,
        scopes: split_scopes(&found.scopes),
    }))
}

/// The absolute URL of the RFC 9728 document for a resource path like
/// `"/mcp/restaurant"` (`None` when the origin cannot be known).
pub fn resource_metadata_url(
    state: &AppState,
    headers: &HeaderMap,
    resource_path: &str,
) -> Option<String> {
    let origin = origin(state, headers)?;
    Some(format!(
        "{origin}/.well-known/oauth-protected-resource{resource_path}"
    ))
}

/// The absolute resource URL (`<origin>/mcp/restaurant`).
pub fn resource_url(state: &AppState, headers: &HeaderMap, resource_path: &str) -> Option<String> {
    let origin = origin(state, headers)?;
    Some(format!("{origin}{resource_path}"))
}

/// A `WWW-Authenticate` value: `Bearer resource_metadata="…"` plus `error="invalid_token"`
/// / `scope="…"` when given.
pub fn challenge(metadata_url: &str, error: Option<&str>, scope: Option<&str>) -> String {
    let mut value = format!("Bearer resource_metadata=\"{}\"", quoted(metadata_url));
    if let Some(error) = error {
        value.push_str(&format!(", error=\"{}\"", quoted(error)));
    }
    if let Some(scope) = scope {
        value.push_str(&format!(", scope=\"{}\"", quoted(scope)));
    }
    value
}

/// The inside of an HTTP quoted-string (RFC 9110 §5.6.4).
fn quoted(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The origin the server is reached at, as clients must see it in every URL we give them:
/// `DATBAN_PUBLIC_ORIGIN` when set; otherwise the request's `Host`, but only when it is a
/// loopback host over plain HTTP (development and tests). A `Host` of any other name could
/// be chosen by whoever sends the request, so metadata built from it would let a proxy or
/// a client set our issuer.
pub fn origin(state: &AppState, headers: &HeaderMap) -> Option<String> {
    if let Some(origin) = &state.security.public_origin {
        return Some(origin.clone());
    }
    let host = headers.get(header::HOST)?.to_str().ok()?.trim();
    let authority: axum::http::uri::Authority = host.parse().ok()?;
    let name = authority.host().to_ascii_lowercase();
    let loopback = matches!(name.as_str(), "127.0.0.1" | "localhost" | "[::1]");
    (loopback && !host.contains('@'))
        .then(|| format!("http://{}", authority.as_str().to_ascii_lowercase()))
}

/// The resource URLs of the MCP servers at `origin`.
fn resources(origin: &str) -> impl Iterator<Item = String> + '_ {
    ASSISTANTS
        .iter()
        .map(move |assistant| format!("{origin}/mcp/{assistant}"))
}

/// Scopes as stored and sent: known ones only, each once, in [`SCOPES`] order.
fn split_scopes(text: &str) -> Vec<String> {
    let asked: Vec<&str> = text.split_ascii_whitespace().collect();
    SCOPES
        .iter()
        .filter(|scope| asked.contains(scope))
        .map(|scope| (*scope).to_owned())
        .collect()
}

/// Time as every table stores it (ordered as text).
fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn later(at: DateTime<Utc>, by: Duration) -> DateTime<Utc> {
    at + chrono::Duration::from_std(by).unwrap_or(chrono::Duration::zero())
}

/// The OAuth routes; `app()` merges them.
pub fn routes() -> Router<AppState> {
    // Called by other servers and by browser-based clients (the MCP Inspector) from other
    // origins, without cookies: open CORS is safe here, and needed.
    let public = Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(protected_resource_root),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp/{assistant}",
            get(protected_resource_of),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(authorization_server),
        )
        .route(
            "/.well-known/openid-configuration",
            get(authorization_server),
        )
        .route("/oauth/register", post(flow::register))
        .route("/oauth/token", post(flow::token))
        .route("/oauth/revoke", post(flow::revoke))
        .layer(axum::extract::DefaultBodyLimit::max(flow::MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(open_cors));
    // The browser's own pages: same-origin only, under the owner cookie and the API guard.
    let pages = Router::new()
        .route("/oauth/authorize", get(flow::authorize))
        .route(http::CONSENT_REQUEST_ROUTE, get(flow::consent_request))
        .route(http::CONSENT_URL, post(flow::consent))
        .route(http::CONNECTIONS_URL, get(flow::connections))
        .route(http::CONNECTION_ROUTE, delete(flow::disconnect));
    public.merge(pages)
}

/// CORS for endpoints that use no cookies: any origin may read them, and a preflight is
/// answered here (before the method router, which would answer 405).
async fn open_cors(request: Request, next: Next) -> Response {
    let preflight = request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = if preflight {
        let mut response = StatusCode::NO_CONTENT.into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, OPTIONS"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("authorization, content-type, mcp-protocol-version"),
        );
        headers.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("86400"),
        );
        response
    } else {
        next.run(request).await
    };
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

/// RFC 6749 §5.2's error shape, which every OAuth endpoint answers with.
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    let mut response = (
        status,
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn no_origin() -> Response {
    oauth_error(
        StatusCode::BAD_REQUEST,
        "invalid_request",
        "The server's public origin is not configured (DATBAN_PUBLIC_ORIGIN), and this \
         request's Host is not a loopback address.",
    )
}

/// The bare document describes the restaurant server.
///
/// RFC 9728 §3.1 forms a path resource's document URL by inserting the well-known path
/// before the resource's path, so `<origin>/mcp/gifts` is described at
/// `/.well-known/oauth-protected-resource/mcp/gifts`, and our 401 challenges point there.
/// The bare URL would strictly describe the resource `<origin>`, which has no tokens of
/// its own; clients that fall back to it (MCP's discovery does, after the path-suffixed
/// one) compare its `resource` with the server they want by prefix, so answering with
/// the default assistant's server makes the common case work, and a client of another
/// server sees a resource that is not its own and stops instead of getting a token for the
/// wrong audience.
async fn protected_resource_root(State(state): State<AppState>, headers: HeaderMap) -> Response {
    protected_resource(&state, &headers, "restaurant")
}

async fn protected_resource_of(
    State(state): State<AppState>,
    Path(assistant): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !ASSISTANTS.contains(&assistant.as_str()) {
        return oauth_error(
            StatusCode::NOT_FOUND,
            "invalid_request",
            "There is no MCP server at that path.",
        );
    }
    protected_resource(&state, &headers, &assistant)
}

fn protected_resource(state: &AppState, headers: &HeaderMap, assistant: &str) -> Response {
    let Some(origin) = origin(state, headers) else {
        return no_origin();
    };
    let name = match assistant {
        "restaurant" => "datban: restaurant bookings (MCP)",
        "gifts" => "datban: GiftGenius gifts (MCP)",
        _ => "datban: shipping quotes (MCP)",
    };
    Json(json!({
        "resource": format!("{origin}/mcp/{assistant}"),
        "authorization_servers": [origin],
        "scopes_supported": SCOPES,
        "bearer_methods_supported": ["header"],
        "resource_name": name,
    }))
    .into_response()
}

async fn authorization_server(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let Some(origin) = origin(&state, &headers) else {
        return no_origin();
    };
    let auth_methods = ["none", "client_secret_post"];
    Json(json!({
        "issuer": origin,
        "authorization_endpoint": format!("{origin}/oauth/authorize"),
        "token_endpoint": format!("{origin}/oauth/token"),
        "registration_endpoint": format!("{origin}/oauth/register"),
        "revocation_endpoint": format!("{origin}/oauth/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": auth_methods,
        "revocation_endpoint_auth_methods_supported": auth_methods,
        "scopes_supported": SCOPES,
        "authorization_response_iss_parameter_supported": true,
    }))
    .into_response()
}

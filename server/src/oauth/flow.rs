//! The OAuth endpoints: registration, authorization and consent, tokens, revocation, and
//! the owner's connected apps.

use std::collections::HashMap;

use axum::{
    body::Bytes,
    extract::{Path, RawQuery, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{Html, IntoResponse, Redirect, Response},
    Extension, Json,
};
use serde_json::{json, Value};
use shared::http::{
    ApiCode, Connection, ConnectionList, ConsentAnswer, ConsentRedirect, ConsentRequest,
};

use super::{
    later, oauth_error, origin, resources, rows, secret, split_scopes, timestamp,
    ACCESS_TOKEN_LIFETIME, CODE_LIFETIME, REFRESH_TOKEN_LIFETIME, REQUEST_LIFETIME, SCOPES,
};
use crate::{api::ApiError, owner::OwnerId, store::StoreError, AppState};

/// Largest body the registration, token and revocation endpoints read.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

const MAX_REDIRECT_URIS: usize = 10;
const MAX_URI_BYTES: usize = 2048;
const MAX_NAME_CHARS: usize = 100;
const MAX_STATE_BYTES: usize = 2048;

// ---------------------------------------------------------------------------------------
// Answers

fn storage_failed(error: StoreError) -> Response {
    tracing::error!(%error, "OAuth storage failed");
    let mut response = oauth_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "temporarily_unavailable",
        "Something went wrong on our side; nothing was changed. Please try again.",
    );
    response
        .headers_mut()
        .insert("retry-after", HeaderValue::from_static("1"));
    response
}

fn no_random(error: secret::NoRandom) -> Response {
    tracing::error!(%error, "OAuth secret");
    oauth_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "server_error",
        "Something went wrong on our side. Please try again.",
    )
}

fn bad_request(error: &str, description: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, error, description)
}

fn invalid_client(description: &str) -> Response {
    oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", description)
}

/// Whether the browser prefers English to Vietnamese (`Accept-Language`); Vietnamese is
/// the default for everything else.
pub(super) fn prefers_english(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let (mut en, mut vi) = (0.0f32, 0.0f32);
    for item in value.split(',') {
        let mut parts = item.split(';');
        let tag = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let q = parts
            .find_map(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
            })
            .unwrap_or(1.0);
        let primary = tag.split('-').next().unwrap_or_default();
        match primary {
            "en" => en = en.max(q),
            "vi" => vi = vi.max(q),
            _ => {}
        }
    }
    en > vi
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page for an authorization request that cannot be sent back to its client: the
/// redirect URI is not one we may trust, so the person is told here instead.
fn error_page(headers: &HeaderMap, vi: &str, en: &str) -> Response {
    let english = prefers_english(headers);
    let (lang, title, message, back) = if english {
        ("en", "This app cannot be connected", en, "Back to datban")
    } else {
        ("vi", "Không thể kết nối ứng dụng", vi, "Về datban")
    };
    let page = format!(
        "<!DOCTYPE html><html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} — datban</title></head><body><main class=\"oauth-error\">\
         <h1>{title}</h1><p>{}</p><p><a href=\"/\">{back}</a></p></main></body></html>",
        escape_html(message)
    );
    (StatusCode::BAD_REQUEST, Html(page)).into_response()
}

/// `redirect_uri` with the given query parameters added (its own query is kept).
fn with_query(redirect_uri: &str, pairs: &[(&str, &str)]) -> Option<String> {
    let mut url = url::Url::parse(redirect_uri).ok()?;
    {
        let mut query = url.query_pairs_mut();
        for (name, value) in pairs {
            query.append_pair(name, value);
        }
    }
    Some(url.into())
}

/// Query or form parameters; `None` when one is given twice (RFC 6749 §3.1: "parameters
/// MUST NOT be included more than once").
fn parameters(text: &[u8]) -> Option<HashMap<String, String>> {
    let mut map = HashMap::new();
    for (name, value) in url::form_urlencoded::parse(text) {
        if map.insert(name.into_owned(), value.into_owned()).is_some() {
            return None;
        }
    }
    Some(map)
}

/// A form body (`application/x-www-form-urlencoded`, as RFC 6749 requires); the error
/// answer when it is not one.
fn form(headers: &HeaderMap, body: &[u8]) -> Result<HashMap<String, String>, &'static str> {
    let form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim()
                .to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        });
    if !form {
        return Err("The body must be application/x-www-form-urlencoded.");
    }
    parameters(body).ok_or("A parameter is given more than once.")
}

fn filled<'a>(params: &'a HashMap<String, String>, name: &str) -> Option<&'a str> {
    params
        .get(name)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

// ---------------------------------------------------------------------------------------
// Registration (RFC 7591)

fn invalid_metadata(description: &str) -> Response {
    bad_request("invalid_client_metadata", description)
}

fn invalid_redirect(description: &str) -> Response {
    bad_request("invalid_redirect_uri", description)
}

/// Whether a redirect URI may be registered: absolute, no fragment and no user info;
/// `https`, or `http` only to this machine (RFC 8252 §7.3 loopback redirects), so a code
/// never travels in clear text over a network.
fn redirect_uri_problem(text: &str) -> Option<&'static str> {
    if text.len() > MAX_URI_BYTES {
        return Some("A redirect URI is too long.");
    }
    let Ok(url) = url::Url::parse(text) else {
        return Some("A redirect URI is not an absolute URL.");
    };
    if url.fragment().is_some() || text.contains('#') {
        return Some("A redirect URI must not have a fragment.");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Some("A redirect URI must not carry user information.");
    }
    match (url.scheme(), url.host()) {
        ("https", Some(_)) => None,
        ("http", Some(url::Host::Domain("localhost"))) => None,
        ("http", Some(url::Host::Ipv4(ip))) if ip.is_loopback() => None,
        ("http", Some(url::Host::Ipv6(ip))) if ip.is_loopback() => None,
        ("http", _) => Some("An http redirect URI must point to this machine (127.0.0.1, [::1] or localhost); use https."),
        _ => Some("A redirect URI must use https (or http to a loopback address)."),
    }
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|item| item.as_str().map(str::to_owned))
        .collect()
}

/// `POST /oauth/register`: any client may register (ChatGPT and Claude do so on first
/// use); what it can then do is still only what a person allows on the consent page.
pub async fn register(State(state): State<AppState>, body: Bytes) -> Response {
    let Ok(Value::Object(metadata)) = serde_json::from_slice::<Value>(&body) else {
        return invalid_metadata("The body must be a JSON object of client metadata.");
    };
    let Some(redirect_uris) = metadata.get("redirect_uris").and_then(strings) else {
        return invalid_redirect("redirect_uris must be an array of URLs.");
    };
    if redirect_uris.is_empty() || redirect_uris.len() > MAX_REDIRECT_URIS {
        return invalid_redirect("redirect_uris must hold from 1 to 10 URLs.");
    }
    if let Some(problem) = redirect_uris
        .iter()
        .find_map(|uri| redirect_uri_problem(uri))
    {
        return invalid_redirect(problem);
    }
    let name = match metadata.get("client_name") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(name.trim().to_owned()),
        Some(_) => return invalid_metadata("client_name must be a string."),
    };
    if let Some(name) = &name {
        if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
            return invalid_metadata(
                "client_name must be at most 100 characters, without control characters.",
            );
        }
    }
    // Without a name the consent page shows where the person would be sent back to.
    let name = name.filter(|n| !n.is_empty()).unwrap_or_else(|| {
        url::Url::parse(&redirect_uris[0])
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_else(|| "?".to_owned())
    });
    let grant_types = match metadata.get("grant_types") {
        None | Some(Value::Null) => vec!["authorization_code".to_owned()],
        Some(value) => match strings(value) {
            Some(grants) => grants,
            None => return invalid_metadata("grant_types must be an array of strings."),
        },
    };
    if !grant_types.iter().any(|g| g == "authorization_code")
        || grant_types
            .iter()
            .any(|g| g != "authorization_code" && g != "refresh_token")
    {
        return invalid_metadata(
            "grant_types must include authorization_code and may add refresh_token; no others are supported.",
        );
    }
    let grant_types: Vec<String> = ["authorization_code", "refresh_token"]
        .into_iter()
        .filter(|g| grant_types.iter().any(|asked| asked == g))
        .map(str::to_owned)
        .collect();
    if let Some(value) = metadata.get("response_types") {
        if strings(value).is_none_or(|types| types.iter().any(|t| t != "code")) {
            return invalid_metadata("response_types may only be [\"code\"].");
        }
    }
    let auth_method = match metadata.get("token_endpoint_auth_method") {
        None | Some(Value::Null) => "none",
        Some(Value::String(method)) if method == "none" => "none",
        Some(Value::String(method)) if method == "client_secret_post" => "client_secret_post",
        Some(_) => {
            return invalid_metadata(
                "token_endpoint_auth_method must be \"none\" (a public client, with PKCE) or \"client_secret_post\".",
            )
        }
    };
    let client_secret = if auth_method == "none" {
        None
    } else {
        match secret::new_secret("dcs_") {
            Ok(secret) => Some(secret),
            Err(error) => return no_random(error),
        }
    };
    let now = (state.agent.clock)();
    let client = rows::Client {
        id: crate::store::new_id("dcl"),
        name,
        redirect_uris,
        grant_types,
        auth_method: auth_method.to_owned(),
        secret_hash: client_secret.as_deref().map(secret::hash),
    };
    if let Err(error) = rows::insert_client(&state.db, &client, &timestamp(now)).await {
        return storage_failed(error);
    }
    let mut answer = json!({
        "client_id": client.id,
        "client_id_issued_at": now.timestamp(),
        "client_name": client.name,
        "redirect_uris": client.redirect_uris,
        "grant_types": client.grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": client.auth_method,
    });
    if let Some(secret) = client_secret {
        answer["client_secret"] = json!(secret);
        answer["client_secret_expires_at"] = json!(0);
    }
    let mut response = (StatusCode::CREATED, Json(answer)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

// ---------------------------------------------------------------------------------------
// Authorization and consent

/// `GET /oauth/authorize`: checks the request and sends the browser to the consent page.
///
/// Until the client and its redirect URI are known to match, errors are shown here:
/// redirecting to an unchecked URI would make us an open redirector that hands out error
/// codes (RFC 6749 §4.1.2.1). After that, errors go back to the client with `error`,
/// `state` and `iss`.
pub async fn authorize(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let Some(issuer) = origin(&state, &headers) else {
        return error_page(
            &headers,
            "Máy chủ chưa được cấu hình địa chỉ công khai (DATBAN_PUBLIC_ORIGIN).",
            "The server's public origin is not configured (DATBAN_PUBLIC_ORIGIN).",
        );
    };
    let Some(params) = parameters(query.unwrap_or_default().as_bytes()) else {
        return error_page(
            &headers,
            "Yêu cầu có một tham số bị lặp lại.",
            "The request gives a parameter more than once.",
        );
    };
    let Some(client_id) = filled(&params, "client_id") else {
        return error_page(
            &headers,
            "Yêu cầu thiếu client_id.",
            "The request has no client_id.",
        );
    };
    let client = match rows::client(&state.reads, client_id).await {
        Ok(Some(client)) => client,
        Ok(None) => {
            return error_page(
                &headers,
                "Ứng dụng này chưa đăng ký với datban (client_id không đúng).",
                "This app is not registered with datban (unknown client_id).",
            )
        }
        Err(error) => return storage_failed(error),
    };
    let redirect_uri = filled(&params, "redirect_uri");
    let Some(redirect_uri) =
        redirect_uri.filter(|uri| client.redirect_uris.iter().any(|r| r == uri))
    else {
        return error_page(
            &headers,
            "Địa chỉ quay lại (redirect_uri) không phải địa chỉ ứng dụng đã đăng ký.",
            "The redirect_uri is not one the app registered.",
        );
    };
    let client_state = filled(&params, "state");
    let refuse = |error: &str, description: &str| -> Response {
        let mut pairs = vec![
            ("error", error),
            ("error_description", description),
            ("iss", issuer.as_str()),
        ];
        if let Some(client_state) = client_state.filter(|s| s.len() <= MAX_STATE_BYTES) {
            pairs.push(("state", client_state));
        }
        match with_query(redirect_uri, &pairs) {
            Some(url) => Redirect::to(&url).into_response(),
            None => error_page(&headers, description, description),
        }
    };
    if client_state.is_some_and(|s| s.len() > MAX_STATE_BYTES) {
        return refuse("invalid_request", "state is longer than 2048 bytes.");
    }
    if filled(&params, "response_type") != Some("code") {
        return refuse(
            "unsupported_response_type",
            "Only response_type=code is supported.",
        );
    }
    match filled(&params, "code_challenge_method") {
        Some("S256") => {}
        Some("plain") => {
            return refuse(
                "invalid_request",
                "code_challenge_method plain is not accepted; use S256.",
            )
        }
        _ => {
            return refuse(
                "invalid_request",
                "PKCE is required: code_challenge_method must be S256.",
            )
        }
    }
    let Some(challenge) = filled(&params, "code_challenge").filter(|c| secret::valid_challenge(c))
    else {
        return refuse(
            "invalid_request",
            "code_challenge must be the 43-character BASE64URL(SHA-256) of the code verifier.",
        );
    };
    let asked = filled(&params, "scope").unwrap_or_default();
    if asked.len() > 200 || asked.split_ascii_whitespace().any(|s| !SCOPES.contains(&s)) {
        return refuse(
            "invalid_scope",
            "scope may only hold \"bookings\" and \"checkout\".",
        );
    }
    let mut scopes = split_scopes(asked);
    if scopes.is_empty() {
        scopes = SCOPES.iter().map(|s| (*s).to_owned()).collect();
    }
    let Some(resource) = filled(&params, "resource") else {
        return refuse(
            "invalid_target",
            "resource is required: the URL of the MCP server the token is for.",
        );
    };
    if !resources(&issuer).any(|known| known == resource) {
        return refuse(
            "invalid_target",
            "resource must be the URL of one of this server's MCP servers (/mcp/restaurant, /mcp/gifts or /mcp/shipping).",
        );
    }
    let now = (state.agent.clock)();
    let id = crate::store::new_id("oar");
    let request = rows::Request {
        client_id: client.id,
        redirect_uri: redirect_uri.to_owned(),
        scopes: scopes.join(" "),
        resource: resource.to_owned(),
        code_challenge: challenge.to_owned(),
        state: client_state.map(str::to_owned),
        expires_at: timestamp(later(now, REQUEST_LIFETIME)),
    };
    if let Err(error) = rows::insert_request(&state.db, &id, &request, &timestamp(now)).await {
        return storage_failed(error);
    }
    Redirect::to(&format!("/oauth/consent?request={id}")).into_response()
}

fn assistant_of(resource: &str) -> &str {
    resource.rsplit('/').next().unwrap_or_default()
}

/// `GET /api/oauth/requests/{id}`: what the consent page shows.
pub async fn consent_request(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<ConsentRequest>, ApiError> {
    let now = timestamp((state.agent.clock)());
    let (request, client_name) = rows::pending_request(&state.reads, &id, &now)
        .await?
        .ok_or_else(|| ApiError::not_found("Authorization request"))?;
    let redirect_host = url::Url::parse(&request.redirect_uri)
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
        .unwrap_or_default();
    Ok(Json(ConsentRequest {
        request: id,
        client_name,
        scopes: split_scopes(&request.scopes),
        assistant: assistant_of(&request.resource).to_owned(),
        resource: request.resource,
        redirect_host,
        lang: lang_of(&headers),
    }))
}

/// `POST /api/oauth/consent`: the person's answer. Takes the request (so it is answered
/// once), and on "allow" makes a code bound to this browser's owner; answers with the URL
/// the page goes to.
pub async fn consent(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    headers: HeaderMap,
    crate::api::AppJson(body): crate::api::AppJson<ConsentAnswer>,
) -> Result<Json<ConsentRedirect>, ApiError> {
    let issuer = origin(&state, &headers).ok_or_else(|| {
        ApiError::new(
            ApiCode::NoPublicOrigin,
            "The server's public origin is not configured (DATBAN_PUBLIC_ORIGIN).",
        )
    })?;
    let now = (state.agent.clock)();
    let mut tx = crate::db::begin_write(&state.db)
        .await
        .map_err(StoreError::from)?;
    let request = rows::take_request(&mut tx, &body.request).await?;
    let Some(request) = request.filter(|r| r.expires_at > timestamp(now)) else {
        tx.commit().await.map_err(StoreError::from)?;
        return Err(ApiError::not_found("Authorization request"));
    };
    let mut pairs: Vec<(&str, String)> = Vec::new();
    if body.allow {
        let code = secret::new_secret("dac_").map_err(|error| {
            ApiError::new(
                ApiCode::Internal,
                "Something went wrong on our side. Please try again.",
            )
            .caused_by(format_args!("OAuth code: {error}"))
        })?;
        let bound = rows::Request {
            expires_at: timestamp(later(now, CODE_LIFETIME)),
            ..request.clone()
        };
        let forget_before = timestamp(now - chrono::Duration::days(1));
        rows::insert_code(
            &mut tx,
            &secret::hash(&code),
            &owner,
            &bound,
            &timestamp(now),
            &forget_before,
        )
        .await?;
        pairs.push(("code", code));
    } else {
        pairs.push(("error", "access_denied".to_owned()));
        pairs.push((
            "error_description",
            "The person declined the request.".to_owned(),
        ));
    }
    if let Some(client_state) = &request.state {
        pairs.push(("state", client_state.clone()));
    }
    pairs.push(("iss", issuer));
    let borrowed: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let redirect = with_query(&request.redirect_uri, &borrowed).ok_or_else(|| {
        ApiError::new(ApiCode::Internal, "The app's redirect URI cannot be used.")
    })?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(Json(ConsentRedirect { redirect }))
}

// ---------------------------------------------------------------------------------------
// Tokens (RFC 6749 §4.1.3, §6) and revocation (RFC 7009)

/// The consent and connections pages' language, from the browser's `Accept-Language`.
fn lang_of(headers: &HeaderMap) -> String {
    if prefers_english(headers) { "en" } else { "vi" }.to_owned()
}

/// `GET /api/connections`: the owner's connected apps.
pub async fn connections(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    headers: HeaderMap,
) -> Result<Json<ConnectionList>, ApiError> {
    let now = timestamp((state.agent.clock)());
    let list = rows::connections(&state.reads, &owner, &now).await?;
    let connections = list
        .into_iter()
        .map(|c| Connection {
            scopes: split_scopes(&c.scopes),
            assistant: assistant_of(&c.resource).to_owned(),
            id: c.id,
            client_name: c.client_name,
            connected_at: c.created_at,
            last_used_at: c.last_used_at,
        })
        .collect();
    Ok(Json(ConnectionList {
        connections,
        lang: lang_of(&headers),
    }))
}

/// `DELETE /api/connections/{id}`: "Ngắt kết nối", every token of the grant at once.
pub async fn disconnect(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let now = timestamp((state.agent.clock)());
    if rows::revoke_owner_grant(&state.db, &owner, &id, &now).await? {
        Ok(Json(json!({ "disconnected": true })))
    } else {
        Err(ApiError::not_found("Connection"))
    }
}

mod token;

pub use token::{revoke, token};

#[cfg(test)]
mod tests;

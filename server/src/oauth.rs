//! Placeholder until the OAuth authorization server lands: no token is accepted yet, so
//! personal tools over MCP answer with the sign-in challenge. Replaced by the real module.

use axum::http::HeaderMap;

use crate::AppState;

/// A valid access token's grant.
pub struct Grant {
    /// The owner who granted it.
    pub owner_id: String,
    /// The client it was granted to.
    pub client_id: String,
    /// What the person allowed.
    pub scopes: Vec<String>,
}

/// Why a bearer token was refused.
pub enum BearerError {
    /// Unknown, expired, revoked or for another resource.
    Invalid,
    /// Our storage failed.
    Storage(crate::store::StoreError),
}

/// `None` when the request has no Authorization header.
pub async fn verify_bearer(
    _state: &AppState,
    headers: &HeaderMap,
    _resource: &str,
) -> Result<Option<Grant>, BearerError> {
    match headers.get(axum::http::header::AUTHORIZATION) {
        None => Ok(None),
        Some(_) => Err(BearerError::Invalid),
    }
}

fn origin(state: &AppState, headers: &HeaderMap) -> Option<String> {
    if let Some(public) = state.security.public_origin.as_deref() {
        return Some(public.to_owned());
    }
    let host = headers.get(axum::http::header::HOST)?.to_str().ok()?;
    let name = host.rsplit_once(':').map_or(host, |(name, _)| name);
    ["127.0.0.1", "localhost", "[::1]"]
        .contains(&name)
        .then(|| format!("http://{host}"))
}

/// The absolute URL of the RFC 9728 document for a resource path.
pub fn resource_metadata_url(
    state: &AppState,
    headers: &HeaderMap,
    resource_path: &str,
) -> Option<String> {
    Some(format!(
        "{}/.well-known/oauth-protected-resource{resource_path}",
        origin(state, headers)?
    ))
}

/// The absolute resource URL.
pub fn resource_url(state: &AppState, headers: &HeaderMap, resource_path: &str) -> Option<String> {
    Some(format!("{}{resource_path}", origin(state, headers)?))
}

/// A `WWW-Authenticate` value.
pub fn challenge(metadata_url: &str, error: Option<&str>, scope: Option<&str>) -> String {
    let mut value = format!("Bearer resource_metadata=\"{metadata_url}\"");
    if let Some(error) = error {
        value.push_str(&format!(", error=\"{error}\""));
    }
    if let Some(scope) = scope {
        value.push_str(&format!(", scope=\"{scope}\""));
    }
    value
}

//! Anonymous owners: every browser gets an id in a signed, HttpOnly cookie; conversations,
//! pending calls and bookings belong to it.

use axum::{
    extract::{FromRef, Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};
use axum_extra::extract::cookie::{Cookie, Key, SameSite, SignedCookieJar};

use crate::{store, AppState};

const COOKIE: &str = "datban_owner";
const SETTING: &str = "cookie_key";

/// The owner of the current request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerId(pub String);

impl FromRef<AppState> for Key {
    fn from_ref(state: &AppState) -> Self {
        state.cookie_key.clone()
    }
}

/// Why no signing key could be had.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// `DATBAN_COOKIE_KEY` is set but unusable.
    #[error("DATBAN_COOKIE_KEY must be at least 64 bytes written as hex")]
    BadEnv,
    /// The stored key could not be read or written.
    #[error("cookie key in the database: {0}")]
    Store(#[from] store::StoreError),
}

/// Bytes from lowercase or uppercase hex; `None` for anything else.
pub(crate) fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
        })
        .collect()
}

/// Lowercase hex of `bytes`.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The signing key: `DATBAN_COOKIE_KEY` (hex), else one generated on first start and kept
/// in the database so cookies survive restarts and are shared by every server process.
pub async fn load_key(db: &crate::db::Pool) -> Result<Key, KeyError> {
    if let Ok(text) = std::env::var("DATBAN_COOKIE_KEY") {
        let bytes = from_hex(text.trim())
            .filter(|b| b.len() >= 64)
            .ok_or(KeyError::BadEnv)?;
        return Ok(Key::from(&bytes));
    }
    let fresh = to_hex(Key::generate().master());
    let stored = store::setting_or_insert(db, SETTING, &fresh).await?;
    match from_hex(&stored).filter(|b| b.len() >= 64) {
        Some(bytes) => Ok(Key::from(&bytes)),
        None => Err(KeyError::Store(store::StoreError::Corrupt {
            id: SETTING.to_owned(),
            reason: "not 64 bytes of hex".to_owned(),
        })),
    }
}

fn plausible(id: &str) -> bool {
    id.len() <= 64
        && id.starts_with("own_")
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Paths whose callers are not a person's browser: the MCP servers, the OAuth metadata,
/// the health and metrics probes, and the endpoints OAuth clients call directly (the consent page and `/oauth/authorize` are
/// the browser's, and keep its owner).
fn acts_by_token(path: &str) -> bool {
    path.starts_with("/mcp/")
        || path.starts_with("/.well-known/oauth-")
        || path == "/.well-known/openid-configuration"
        || matches!(
            path,
            "/oauth/register" | "/oauth/token" | "/oauth/revoke" | "/metrics" | "/healthz"
        )
}

/// Attaches an [`OwnerId`] to every request, issuing a new signed cookie when the request
/// has none (or a forged one).
pub async fn ensure_owner(
    State(_state): State<AppState>,
    jar: SignedCookieJar,
    mut request: Request,
    next: Next,
) -> Response {
    if acts_by_token(request.uri().path()) {
        // MCP clients and OAuth clients are servers (or the MCP Inspector): who they act
        // for comes from their bearer token or their grant only, never from a cookie, and
        // they get none.
        return next.run(request).await;
    }
    let known = jar
        .get(COOKIE)
        .map(|cookie| cookie.value().to_owned())
        .filter(|id| plausible(id));
    let (owner, issue) = match known {
        Some(id) => (id, false),
        None => (store::new_id("own"), true),
    };
    request.extensions_mut().insert(OwnerId(owner.clone()));
    let response = next.run(request).await;
    if !issue {
        return response;
    }
    let secure = std::env::var("DATBAN_SECURE_COOKIES").is_ok_and(|v| v == "1");
    let cookie = Cookie::build((COOKIE, owner))
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(secure)
        .max_age(cookie::time::Duration::days(365))
        .build();
    (jar.add(cookie), response).into_response()
}

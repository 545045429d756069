//! The token endpoint (an authorization code or a refresh token for tokens, with the
//! client's authentication) and revocation.

use super::*;

/// The client a token or revocation request authenticates as: by `client_id` alone for
/// public clients, with `client_secret` for the ones that registered a secret.
async fn authenticate(
    state: &AppState,
    params: &HashMap<String, String>,
) -> Result<rows::Client, Response> {
    let Some(client_id) = filled(params, "client_id") else {
        return Err(invalid_client("client_id is required."));
    };
    let client = match rows::client(&state.reads, client_id).await {
        Ok(Some(client)) => client,
        Ok(None) => return Err(invalid_client("Unknown client_id.")),
        Err(error) => return Err(storage_failed(error)),
    };
    if let Some(stored) = &client.secret_hash {
        let given = filled(params, "client_secret").unwrap_or_default();
        if !secret::hash_matches(given, stored) {
            return Err(invalid_client(
                "client_secret is missing or wrong for this client.",
            ));
        }
    }
    Ok(client)
}

/// `POST /oauth/token`.
pub async fn token(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let params = match form(&headers, &body) {
        Ok(params) => params,
        Err(description) => return bad_request("invalid_request", description),
    };
    let grant_type = filled(&params, "grant_type");
    if !matches!(grant_type, Some("authorization_code" | "refresh_token")) {
        return match grant_type {
            None => bad_request("invalid_request", "grant_type is required."),
            Some(_) => bad_request(
                "unsupported_grant_type",
                "grant_type must be authorization_code or refresh_token.",
            ),
        };
    }
    let client = match authenticate(&state, &params).await {
        Ok(client) => client,
        Err(response) => return response,
    };
    let outcome = if grant_type == Some("authorization_code") {
        exchange_code(&state, &params, &client).await
    } else {
        refresh(&state, &params, &client).await
    };
    match outcome {
        Ok(response) | Err(Refusal::Answer(response)) => response,
        Err(Refusal::Storage(error)) => storage_failed(error),
    }
}

/// Why a token request gets no token.
enum Refusal {
    Answer(Response),
    Storage(StoreError),
}

impl From<StoreError> for Refusal {
    fn from(error: StoreError) -> Self {
        Refusal::Storage(error)
    }
}

impl From<sqlx::Error> for Refusal {
    fn from(error: sqlx::Error) -> Self {
        Refusal::Storage(error.into())
    }
}

fn refuse(error: &str, description: &str) -> Refusal {
    Refusal::Answer(bad_request(error, description))
}

/// Makes and stores a new access token (and refresh token) of a grant, in `tx`.
async fn issue(
    tx: &mut sqlx::AnyConnection,
    grant_id: &str,
    scopes: &str,
    with_refresh: bool,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Response, Refusal> {
    let access = secret::new_secret("dat_").map_err(|e| Refusal::Answer(no_random(e)))?;
    let at = timestamp(now);
    rows::insert_token(
        tx,
        &secret::hash(&access),
        grant_id,
        rows::Kind::Access,
        scopes,
        &at,
        &timestamp(later(now, ACCESS_TOKEN_LIFETIME)),
    )
    .await?;
    let mut body = json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": ACCESS_TOKEN_LIFETIME.as_secs(),
        "scope": scopes,
    });
    if with_refresh {
        let refresh = secret::new_secret("drt_").map_err(|e| Refusal::Answer(no_random(e)))?;
        rows::insert_token(
            tx,
            &secret::hash(&refresh),
            grant_id,
            rows::Kind::Refresh,
            scopes,
            &at,
            &timestamp(later(now, REFRESH_TOKEN_LIFETIME)),
        )
        .await?;
        body["refresh_token"] = json!(refresh);
    }
    let mut response = Json(body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    Ok(response)
}

async fn exchange_code(
    state: &AppState,
    params: &HashMap<String, String>,
    client: &rows::Client,
) -> Result<Response, Refusal> {
    let (Some(code), Some(redirect_uri), Some(verifier)) = (
        filled(params, "code"),
        filled(params, "redirect_uri"),
        filled(params, "code_verifier"),
    ) else {
        return Err(refuse(
            "invalid_request",
            "code, redirect_uri and code_verifier are required.",
        ));
    };
    if !secret::valid_verifier(verifier) {
        return Err(refuse(
            "invalid_request",
            "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.",
        ));
    }
    let now = (state.agent.clock)();
    let at = timestamp(now);
    let code_hash = secret::hash(code);
    let mut tx = crate::db::begin_write(&state.db).await?;
    let (owner_id, bound) = match rows::use_code(&mut tx, &code_hash, &at).await? {
        rows::CodeUse::Unknown => {
            return Err(refuse("invalid_grant", "The code is not valid."));
        }
        rows::CodeUse::Again { grant_id } => {
            // RFC 6749 §4.1.2: a code used twice was stolen, or replayed; whatever the
            // first use obtained must not be trusted either.
            if let Some(grant_id) = grant_id {
                rows::revoke_grant(&mut tx, &grant_id, &at).await?;
                tracing::warn!(%grant_id, "an authorization code was used twice; its grant is revoked");
            }
            tx.commit().await?;
            return Err(refuse(
                "invalid_grant",
                "The code was already used; the tokens issued for it are revoked.",
            ));
        }
        rows::CodeUse::First { owner_id, code } => (owner_id, code),
    };
    // The code is spent whatever follows: a stolen code tried with a guessed verifier
    // cannot be tried again.
    let problem = if bound.expires_at <= at {
        Some(("invalid_grant", "The code has expired."))
    } else if bound.client_id != client.id {
        Some(("invalid_grant", "The code was issued to another client."))
    } else if bound.redirect_uri != redirect_uri {
        Some((
            "invalid_grant",
            "redirect_uri is not the one of the authorization request.",
        ))
    } else if !secret::pkce_matches(verifier, &bound.code_challenge) {
        Some((
            "invalid_grant",
            "code_verifier does not match the code_challenge.",
        ))
    } else if filled(params, "resource").is_some_and(|r| r != bound.resource) {
        Some((
            "invalid_target",
            "resource is not the one the code was issued for.",
        ))
    } else {
        None
    };
    if let Some((error, description)) = problem {
        tx.commit().await?;
        return Err(refuse(error, description));
    }
    let grant = rows::GrantRow {
        id: crate::store::new_id("grt"),
        owner_id,
        client_id: client.id.clone(),
        scopes: bound.scopes.clone(),
        resource: bound.resource.clone(),
        revoked: false,
    };
    rows::insert_grant(&mut tx, &grant, &at).await?;
    rows::link_code(&mut tx, &code_hash, &grant.id).await?;
    let response = issue(&mut tx, &grant.id, &bound.scopes, client.refreshes(), now).await?;
    tx.commit().await?;
    Ok(response)
}

async fn refresh(
    state: &AppState,
    params: &HashMap<String, String>,
    client: &rows::Client,
) -> Result<Response, Refusal> {
    let Some(refresh_token) = filled(params, "refresh_token") else {
        return Err(refuse("invalid_request", "refresh_token is required."));
    };
    let now = (state.agent.clock)();
    let at = timestamp(now);
    let mut tx = crate::db::begin_write(&state.db).await?;
    let (grant_id, scopes, expires_at) = match rows::use_refresh(
        &mut tx,
        &secret::hash(refresh_token),
        &at,
    )
    .await?
    {
        rows::RefreshUse::Unknown => {
            return Err(refuse("invalid_grant", "The refresh token is not valid."));
        }
        rows::RefreshUse::Again { grant_id } => {
            // A rotated refresh token came back: it was copied, and either copy may
            // be the thief's. The grant ends; the person connects again.
            rows::revoke_grant(&mut tx, &grant_id, &at).await?;
            tx.commit().await?;
            tracing::warn!(%grant_id, "a rotated refresh token was reused; its grant is revoked");
            return Err(refuse(
                "invalid_grant",
                "The refresh token was already used; the connection is revoked.",
            ));
        }
        rows::RefreshUse::First {
            grant_id,
            scopes,
            expires_at,
        } => (grant_id, scopes, expires_at),
    };
    // Each refusal below drops `tx`, which rolls the rotation back.
    let grant = rows::grant(&mut tx, &grant_id).await?;
    let Some(grant) = grant.filter(|g| !g.revoked && g.client_id == client.id) else {
        return Err(refuse("invalid_grant", "The refresh token is not valid."));
    };
    if expires_at <= at {
        return Err(refuse("invalid_grant", "The refresh token has expired."));
    }
    let held = split_scopes(&scopes);
    let scopes = match filled(params, "scope") {
        None => held.join(" "),
        Some(asked) => {
            let known = asked
                .split_ascii_whitespace()
                .all(|s| held.iter().any(|h| h == s));
            if !known {
                return Err(refuse(
                    "invalid_scope",
                    "scope may only narrow the scopes granted.",
                ));
            }
            split_scopes(asked).join(" ")
        }
    };
    if filled(params, "resource").is_some_and(|r| r != grant.resource) {
        return Err(refuse(
            "invalid_target",
            "resource is not the one the grant is for.",
        ));
    }
    let response = issue(&mut tx, &grant.id, &scopes, true, now).await?;
    tx.commit().await?;
    Ok(response)
}

/// `POST /oauth/revoke`: revokes the token's whole grant (its access and refresh tokens),
/// if the token is the calling client's. Answers 200 for unknown tokens too (RFC 7009
/// §2.2: the client has nothing else to do about them).
pub async fn revoke(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let params = match form(&headers, &body) {
        Ok(params) => params,
        Err(description) => return bad_request("invalid_request", description),
    };
    let client = match authenticate(&state, &params).await {
        Ok(client) => client,
        Err(response) => return response,
    };
    let Some(token) = filled(&params, "token") else {
        return bad_request("invalid_request", "token is required.");
    };
    let now = timestamp((state.agent.clock)());
    let revoked = async {
        let mut tx = crate::db::begin_write(&state.db).await?;
        if let Some(grant_id) = rows::grant_of_token(&mut tx, &secret::hash(token)).await? {
            let grant = rows::grant(&mut tx, &grant_id).await?;
            if grant.is_some_and(|g| g.client_id == client.id) {
                rows::revoke_grant(&mut tx, &grant_id, &now).await?;
            }
        }
        tx.commit().await?;
        Ok::<(), StoreError>(())
    }
    .await;
    match revoked {
        Ok(()) => {
            let mut response = StatusCode::OK.into_response();
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(error) => storage_failed(error),
    }
}

// ---------------------------------------------------------------------------------------
// Connected apps

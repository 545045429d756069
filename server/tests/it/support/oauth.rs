//! OAuth for tests: a registered client and tokens for a browser's owner, obtained
//! through the real endpoints, the way ChatGPT or Claude get them (register, authorize,
//! consent on the person's page, code exchange with PKCE).
//!
//! For MCP tests: `let tokens = support::oauth::access_token(&app, &app.client,
//! "/mcp/restaurant", "bookings").await?;` then send `Authorization: Bearer
//! {tokens.access_token}`. The grant's owner is the owner of `browser`'s cookie, so what
//! the MCP call books shows in `GET /api/bookings` of that same client.

use std::sync::{
    atomic::{AtomicI64, Ordering},
    Arc,
};

use serde_json::{json, Value};

use super::{Fallible, TestApp};

/// Where test clients are sent back to; nothing listens there (redirects are not followed).
pub const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

/// A PKCE code verifier (43 to 128 unreserved characters).
pub const VERIFIER: &str = "test-code-verifier-0123456789-abcdefghijklmnopqrstuvwxyz";

/// What `POST /oauth/token` answered, with the client it was for.
#[derive(Debug, Clone)]
pub struct Tokens {
    /// The registered client's id.
    pub client_id: String,
    /// `access_token`.
    pub access_token: String,
    /// `refresh_token` (the helpers' clients register the refresh_token grant).
    pub refresh_token: String,
    /// The whole answer.
    pub body: Value,
}

/// A client that does not follow redirects, to read `Location` of `/oauth/authorize`.
pub fn no_redirects() -> Fallible<reqwest::Client> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Ok(reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?)
}

/// A form body (`application/x-www-form-urlencoded`).
pub fn form(pairs: &[(&str, &str)]) -> String {
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        serializer.append_pair(name, value);
    }
    serializer.finish()
}

/// `POST`s a form to `path`: (status, JSON body or `Null`).
pub async fn post_form(
    app: &TestApp,
    path: &str,
    pairs: &[(&str, &str)],
) -> Fallible<(u16, Value)> {
    let response = reqwest::Client::new()
        .post(app.url(path))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(pairs))
        .send()
        .await?;
    let status = response.status().as_u16();
    Ok((status, response.json().await.unwrap_or(Value::Null)))
}

/// Registers a public client (PKCE, no secret) with [`REDIRECT_URI`]; its `client_id`.
pub async fn register(app: &TestApp, name: &str) -> Fallible<String> {
    let response = reqwest::Client::new()
        .post(app.url("/oauth/register"))
        .json(&json!({
            "client_name": name,
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        }))
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 201);
    let body: Value = response.json().await?;
    Ok(body["client_id"]
        .as_str()
        .ok_or_else(|| format!("no client_id in {body}"))?
        .to_owned())
}

/// The `/oauth/authorize` URL of a valid request for `resource_path` (`/mcp/restaurant`).
pub fn authorize_url(app: &TestApp, client_id: &str, resource_path: &str, scope: &str) -> String {
    let query = form(&[
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT_URI),
        ("code_challenge", &server::oauth::pkce_challenge(VERIFIER)),
        ("code_challenge_method", "S256"),
        ("state", "st-123"),
        ("scope", scope),
        ("resource", &app.url(resource_path)),
    ]);
    app.url(&format!("/oauth/authorize?{query}"))
}

/// Opens the authorize URL; the consent request id it redirects to.
pub async fn consent_request(
    app: &TestApp,
    client_id: &str,
    resource_path: &str,
    scope: &str,
) -> Fallible<String> {
    let response = no_redirects()?
        .get(authorize_url(app, client_id, resource_path, scope))
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 303);
    let location = response
        .headers()
        .get("location")
        .ok_or("a 303 without a location")?
        .to_str()?
        .to_owned();
    let request = location
        .strip_prefix("/oauth/consent?request=")
        .ok_or_else(|| format!("not the consent page: {location}"))?;
    Ok(request.to_owned())
}

/// Answers the consent page as `browser`'s owner: the URL the page would go to.
pub async fn answer(
    app: &TestApp,
    browser: &reqwest::Client,
    request: &str,
    allow: bool,
) -> Fallible<String> {
    let response = browser
        .post(app.url("/api/oauth/consent"))
        .json(&json!({"request": request, "allow": allow}))
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 200);
    let body: Value = response.json().await?;
    Ok(body["redirect"]
        .as_str()
        .ok_or_else(|| format!("no redirect in {body}"))?
        .to_owned())
}

/// A query parameter of a URL; an error if `url` is not one.
pub fn param(url: &str, name: &str) -> Fallible<Option<String>> {
    let url = url::Url::parse(url).map_err(|error| format!("not a URL: {url:?}: {error}"))?;
    Ok(url
        .query_pairs()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned()))
}

/// A code for `browser`'s owner, from a new request of `client_id`.
pub async fn code(
    app: &TestApp,
    browser: &reqwest::Client,
    client_id: &str,
    resource_path: &str,
    scope: &str,
) -> Fallible<String> {
    let request = consent_request(app, client_id, resource_path, scope).await?;
    let redirect = answer(app, browser, &request, true).await?;
    Ok(param(&redirect, "code")?.ok_or_else(|| format!("no code in {redirect}"))?)
}

/// Exchanges a code made by [`code`] (right verifier and redirect URI).
pub async fn exchange(app: &TestApp, client_id: &str, code: &str) -> Fallible<(u16, Value)> {
    post_form(
        app,
        "/oauth/token",
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT_URI),
            ("client_id", client_id),
            ("code_verifier", VERIFIER),
        ],
    )
    .await
}

/// Tokens for `browser`'s owner (the owner of its cookie; a browser without one gets an
/// owner on its first request) and the MCP server at `resource_path`
/// (`"/mcp/restaurant"`), with `scope` (`"bookings"`, `"checkout"`, both, or `""` for
/// both): a new client, authorize, consent, exchange.
pub async fn access_token(
    app: &TestApp,
    browser: &reqwest::Client,
    resource_path: &str,
    scope: &str,
) -> Fallible<Tokens> {
    let client_id = register(app, "Test MCP client").await?;
    let code = code(app, browser, &client_id, resource_path, scope).await?;
    let (status, body) = exchange(app, &client_id, &code).await?;
    assert_eq!(status, 200, "{body}");
    let token = |name: &str| {
        body[name]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("no {name} in {body}"))
    };
    Ok(Tokens {
        client_id,
        access_token: token("access_token")?,
        refresh_token: token("refresh_token")?,
        body,
    })
}

/// A server whose clock can be moved on: `offset` seconds are added to the tests' pinned
/// time (`support::now`), for the token, code and grant expiries.
pub async fn spawn_app_with_movable_clock() -> Fallible<(TestApp, Arc<AtomicI64>)> {
    let offset = Arc::new(AtomicI64::new(0));
    let seen = offset.clone();
    let app = super::spawn_app_configured(move |state| {
        state.agent.clock =
            Arc::new(move || super::now() + chrono::Duration::seconds(seen.load(Ordering::SeqCst)));
    })
    .await?;
    Ok((app, offset))
}

//! OAuth 2.1 for the MCP servers, over a real socket and database: metadata, dynamic
//! registration, authorize errors, the code flow with PKCE and consent by the browser's
//! owner, code and refresh-token replay, revocation, expiry, audience, and the owner's
//! connected apps.

use crate::support;

use std::sync::atomic::Ordering;

use axum::http::{header, HeaderMap, HeaderValue};
use serde_json::{json, Value};
use server::{
    oauth::{self, BearerError},
    security::SecuritySettings,
    AppState,
};
use support::{
    oauth::{
        access_token, answer, code, consent_request, exchange, no_redirects, param, post_form,
        register, spawn_app_with_movable_clock, REDIRECT_URI, VERIFIER,
    },
    TestApp, TestResult,
};

async fn get(app: &TestApp, path: &str) -> reqwest::Result<(u16, HeaderMap, Value)> {
    let response = reqwest::Client::new().get(app.url(path)).send().await?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    Ok((
        status,
        headers,
        response.json().await.unwrap_or(Value::Null),
    ))
}

async fn register_with(app: &TestApp, body: Value) -> reqwest::Result<(u16, Value)> {
    let response = reqwest::Client::new()
        .post(app.url("/oauth/register"))
        .json(&body)
        .send()
        .await?;
    let status = response.status().as_u16();
    Ok((status, response.json().await.unwrap_or(Value::Null)))
}

/// State over the server's database, to call `verify_bearer` as an MCP handler would.
async fn state_of(app: &TestApp) -> support::Fallible<AppState> {
    support::test_state(app.pool.clone()).await
}

/// The headers an MCP request from a client of `app` carries.
fn bearer(app: &TestApp, token: &str) -> Result<HeaderMap, header::InvalidHeaderValue> {
    let mut headers = HeaderMap::new();
    headers.insert(header::HOST, HeaderValue::from_str(&app.addr.to_string())?);
    headers.insert(
        header::AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {token}"))?,
    );
    Ok(headers)
}

async fn verify(
    state: &AppState,
    app: &TestApp,
    token: &str,
    resource_path: &str,
) -> Result<Result<Option<oauth::Grant>, BearerError>, header::InvalidHeaderValue> {
    Ok(oauth::verify_bearer(state, &bearer(app, token)?, &app.url(resource_path)).await)
}

fn valid(result: Result<Option<oauth::Grant>, BearerError>) -> oauth::Grant {
    match result {
        Ok(Some(grant)) => grant,
        Ok(None) => panic!("no grant: no header"),
        Err(error) => panic!("not valid: {error}"),
    }
}

fn invalid(result: Result<Option<oauth::Grant>, BearerError>) {
    assert!(
        matches!(result, Err(BearerError::Invalid)),
        "expected Invalid, got {result:?}"
    );
}

async fn refresh(
    app: &TestApp,
    client_id: &str,
    refresh_token: &str,
) -> support::Fallible<(u16, Value)> {
    post_form(
        app,
        "/oauth/token",
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", client_id),
        ],
    )
    .await
}

/// The owner cookie of a browser session: a GET of a page sets it.
async fn browser(app: &TestApp) -> support::Fallible<reqwest::Client> {
    let client = support::new_client()?;
    let page = client.get(app.url("/bookings")).send().await?;
    assert_eq!(page.status().as_u16(), 200);
    Ok(client)
}

#[tokio::test]
async fn metadata_documents_describe_each_mcp_server_and_the_authorization_server() -> TestResult {
    let app = support::spawn_app().await?;
    let origin = app.url("");
    for assistant in ["restaurant", "gifts", "shipping"] {
        let (status, headers, body) = get(
            &app,
            &format!("/.well-known/oauth-protected-resource/mcp/{assistant}"),
        )
        .await?;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["resource"], format!("{origin}/mcp/{assistant}"));
        assert_eq!(body["authorization_servers"], json!([origin]));
        assert_eq!(body["bearer_methods_supported"], json!(["header"]));
        assert_eq!(body["scopes_supported"], json!(["bookings", "checkout"]));
        assert!(body["resource_name"]
            .as_str()
            .ok_or("no resource_name")?
            .contains("datban"));
        assert_eq!(headers["access-control-allow-origin"], "*");
    }
    // The bare document describes the default assistant's server (see oauth::mod).
    let (status, _, body) = get(&app, "/.well-known/oauth-protected-resource").await?;
    assert_eq!(status, 200);
    assert_eq!(body["resource"], format!("{origin}/mcp/restaurant"));
    let (status, _, _) = get(&app, "/.well-known/oauth-protected-resource/mcp/rocket").await?;
    assert_eq!(status, 404);

    let (status, _, server) = get(&app, "/.well-known/oauth-authorization-server").await?;
    assert_eq!(status, 200);
    assert_eq!(server["issuer"], origin);
    assert_eq!(
        server["authorization_endpoint"],
        format!("{origin}/oauth/authorize")
    );
    assert_eq!(server["token_endpoint"], format!("{origin}/oauth/token"));
    assert_eq!(
        server["registration_endpoint"],
        format!("{origin}/oauth/register")
    );
    assert_eq!(
        server["revocation_endpoint"],
        format!("{origin}/oauth/revoke")
    );
    assert_eq!(server["response_types_supported"], json!(["code"]));
    assert_eq!(
        server["grant_types_supported"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(server["code_challenge_methods_supported"], json!(["S256"]));
    assert!(server["token_endpoint_auth_methods_supported"]
        .as_array()
        .ok_or("no token_endpoint_auth_methods_supported")?
        .contains(&json!("none")));
    let (_, _, openid) = get(&app, "/.well-known/openid-configuration").await?;
    assert_eq!(openid, server);

    // A browser-based client's preflight for the token endpoint.
    let preflight = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, app.url("/oauth/token"))
        .header("origin", "http://localhost:6274")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await?;
    assert_eq!(preflight.status().as_u16(), 204);
    assert_eq!(preflight.headers()["access-control-allow-origin"], "*");
    assert!(preflight.headers()["access-control-allow-headers"]
        .to_str()?
        .contains("content-type"));

    // A Host that is not loopback cannot name our issuer.
    let response = reqwest::Client::new()
        .get(app.url("/.well-known/oauth-authorization-server"))
        .header("host", "evil.example")
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 400);
    Ok(())
}

#[tokio::test]
async fn the_public_origin_is_the_issuer_behind_a_proxy() -> TestResult {
    let app = support::spawn_app_with_security(SecuritySettings {
        public_origin: Some("https://datban.example".to_owned()),
        rate_limit: None,
        body_timeout: None,
        cors_origins: Vec::new(),
    })
    .await?;
    let (_, _, server) = get(&app, "/.well-known/oauth-authorization-server").await?;
    assert_eq!(server["issuer"], "https://datban.example");
    assert_eq!(
        server["token_endpoint"],
        "https://datban.example/oauth/token"
    );
    let (_, _, resource) = get(&app, "/.well-known/oauth-protected-resource/mcp/gifts").await?;
    assert_eq!(resource["resource"], "https://datban.example/mcp/gifts");
    let state = {
        let mut state = state_of(&app).await?;
        state.security.public_origin = Some("https://datban.example".to_owned());
        state
    };
    let headers = HeaderMap::new();
    assert_eq!(
        oauth::resource_metadata_url(&state, &headers, "/mcp/gifts").as_deref(),
        Some("https://datban.example/.well-known/oauth-protected-resource/mcp/gifts")
    );
    assert_eq!(
        oauth::resource_url(&state, &headers, "/mcp/gifts").as_deref(),
        Some("https://datban.example/mcp/gifts")
    );
    let plain = state_of(&app).await?;
    assert_eq!(oauth::resource_url(&plain, &headers, "/mcp/gifts"), None);
    assert_eq!(
        oauth::challenge(
            "https://datban.example/.well-known/oauth-protected-resource/mcp/gifts",
            Some("invalid_token"),
            Some("checkout"),
        ),
        "Bearer resource_metadata=\"https://datban.example/.well-known/oauth-protected-resource/mcp/gifts\", \
         error=\"invalid_token\", scope=\"checkout\""
    );
    Ok(())
}

#[tokio::test]
async fn registration_checks_the_metadata() -> TestResult {
    let app = support::spawn_app().await?;
    let (status, body) = register_with(
        &app,
        json!({
            "client_name": "ChatGPT",
            "redirect_uris": ["https://chatgpt.com/connector_platform_oauth_redirect"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "scope": "bookings",
        }),
    )
    .await?;
    assert_eq!(status, 201, "{body}");
    assert!(body["client_id"]
        .as_str()
        .ok_or("no client_id")?
        .starts_with("dcl_"));
    assert!(
        body["client_id_issued_at"]
            .as_i64()
            .ok_or("no client_id_issued_at")?
            > 0
    );
    assert_eq!(body["token_endpoint_auth_method"], "none");
    assert!(body.get("client_secret").is_none());
    assert_eq!(
        body["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );

    // Defaults: no name (the redirect host is shown), the code grant only.
    let (status, body) =
        register_with(&app, json!({"redirect_uris": ["http://localhost:6274/cb"]})).await?;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["client_name"], "localhost");
    assert_eq!(body["grant_types"], json!(["authorization_code"]));

    let cases = [
        (json!({"client_name": "x"}), "invalid_redirect_uri"),
        (json!({"redirect_uris": []}), "invalid_redirect_uri"),
        (
            json!({"redirect_uris": ["http://example.com/cb"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["https://example.com/cb#x"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["not a url"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": "https://example.com/cb"}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["https://example.com/cb"], "grant_types": ["implicit"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["https://example.com/cb"], "grant_types": ["refresh_token"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["https://example.com/cb"], "response_types": ["token"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["https://example.com/cb"], "token_endpoint_auth_method": "private_key_jwt"}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["https://example.com/cb"], "client_name": "x".repeat(101)}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["https://example.com/cb"], "client_name": 7}),
            "invalid_client_metadata",
        ),
        (json!([1, 2]), "invalid_client_metadata"),
    ];
    for (metadata, error) in cases {
        let (status, body) = register_with(&app, metadata.clone()).await?;
        assert_eq!(status, 400, "{metadata}: {body}");
        assert_eq!(body["error"], error, "{metadata}: {body}");
        assert!(body["error_description"].as_str().is_some());
    }
    // Bounded: a body over 16 KiB is not read.
    let huge =
        json!({"redirect_uris": ["https://example.com/cb"], "client_name": "x".repeat(20_000)});
    let (status, _) = register_with(&app, huge).await?;
    assert_eq!(status, 413);
    assert_eq!(app.count("SELECT COUNT(*) FROM oauth_clients").await?, 2);
    Ok(())
}

#[tokio::test]
async fn authorize_errors_never_redirect_to_an_unchecked_uri() -> TestResult {
    let app = support::spawn_app().await?;
    let client_id = register(&app, "Claude").await?;
    let resource = app.url("/mcp/restaurant");
    let challenge = oauth::pkce_challenge(VERIFIER);
    let authorize = |pairs: Vec<(&str, &str)>| {
        let url = app.url(&format!(
            "/oauth/authorize?{}",
            support::oauth::form(&pairs)
        ));
        async move { support::Fallible::Ok(no_redirects()?.get(url).send().await?) }
    };
    let base = |redirect: &'static str| {
        vec![
            ("response_type", "code"),
            ("client_id", client_id.as_str()),
            ("redirect_uri", redirect),
            ("code_challenge_method", "S256"),
            ("code_challenge", challenge.as_str()),
            ("state", "s1"),
            ("resource", resource.as_str()),
        ]
    };

    // Not trusted: shown here, no Location.
    for pairs in [
        base("https://attacker.example/cb"),
        base("http://127.0.0.1:9/callback/other"),
        {
            let mut pairs = base(REDIRECT_URI);
            pairs[1] = ("client_id", "dcl_unknown");
            pairs
        },
        {
            let mut pairs = base(REDIRECT_URI);
            pairs.push(("client_id", "dcl_second"));
            pairs
        },
    ] {
        let response = authorize(pairs.clone()).await?;
        assert_eq!(response.status().as_u16(), 400, "{pairs:?}");
        assert!(response.headers().get("location").is_none(), "{pairs:?}");
        let page = response.text().await?;
        assert!(page.contains("Không thể kết nối ứng dụng"), "{page}");
    }

    // Trusted redirect URI: the error goes back with state and iss.
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (
            {
                let mut pairs = base(REDIRECT_URI);
                pairs[3] = ("code_challenge_method", "plain");
                pairs[4] = ("code_challenge", VERIFIER);
                pairs
            },
            "invalid_request",
        ),
        (
            base(REDIRECT_URI)
                .into_iter()
                .filter(|(k, _)| *k != "code_challenge_method")
                .collect(),
            "invalid_request",
        ),
        (
            base(REDIRECT_URI)
                .into_iter()
                .filter(|(k, _)| *k != "code_challenge")
                .collect(),
            "invalid_request",
        ),
        (
            {
                let mut pairs = base(REDIRECT_URI);
                pairs[0] = ("response_type", "token");
                pairs
            },
            "unsupported_response_type",
        ),
        (
            {
                let mut pairs = base(REDIRECT_URI);
                pairs[6] = ("resource", "https://other.example/mcp");
                pairs
            },
            "invalid_target",
        ),
        (
            base(REDIRECT_URI)
                .into_iter()
                .filter(|(k, _)| *k != "resource")
                .collect(),
            "invalid_target",
        ),
        (
            {
                let mut pairs = base(REDIRECT_URI);
                pairs.push(("scope", "bookings admin"));
                pairs
            },
            "invalid_scope",
        ),
    ];
    for (pairs, error) in cases {
        let response = authorize(pairs.clone()).await?;
        assert_eq!(response.status().as_u16(), 303, "{pairs:?}");
        let location = response.headers()["location"].to_str()?.to_owned();
        assert!(location.starts_with(REDIRECT_URI), "{location}");
        assert_eq!(
            param(&location, "error")?.as_deref(),
            Some(error),
            "{pairs:?}"
        );
        assert_eq!(param(&location, "state")?.as_deref(), Some("s1"));
        assert_eq!(param(&location, "iss")?, Some(app.url("")));
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM oauth_requests").await?, 0);
    Ok(())
}

#[tokio::test]
async fn the_code_flow_with_pkce_gives_tokens_for_the_owner_and_resource() -> TestResult {
    let app = support::spawn_app().await?;
    let browser = browser(&app).await?;
    let client_id = register(&app, "Claude").await?;
    let request = consent_request(&app, &client_id, "/mcp/restaurant", "bookings").await?;

    // What the consent page shows.
    let details: Value = browser
        .get(app.url(&format!("/api/oauth/requests/{request}")))
        .header("accept-language", "en-GB,en;q=0.9")
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(details["clientName"], "Claude");
    assert_eq!(details["scopes"], json!(["bookings"]));
    assert_eq!(details["assistant"], "restaurant");
    assert_eq!(details["redirectHost"], "127.0.0.1");
    assert_eq!(details["lang"], "en");

    let redirect = answer(&app, &browser, &request, true).await?;
    assert!(redirect.starts_with(REDIRECT_URI), "{redirect}");
    assert_eq!(param(&redirect, "state")?.as_deref(), Some("st-123"));
    assert_eq!(param(&redirect, "iss")?, Some(app.url("")));
    let code = param(&redirect, "code")?.ok_or("no code in the redirect")?;
    // The request was answered: a second answer finds nothing.
    let again = browser
        .post(app.url("/api/oauth/consent"))
        .json(&json!({"request": request, "allow": true}))
        .send()
        .await?;
    assert_eq!(again.status().as_u16(), 404);

    let (status, body) = exchange(&app, &client_id, &code).await?;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["scope"], "bookings");
    let access = body["access_token"].as_str().ok_or("no access_token")?;
    assert!(access.len() >= 43, "{access}");
    assert!(body["refresh_token"].as_str().is_some());

    let state = state_of(&app).await?;
    let grant = valid(verify(&state, &app, access, "/mcp/restaurant").await?);
    assert_eq!(grant.client_id, client_id);
    assert_eq!(grant.scopes, vec!["bookings".to_owned()]);
    // The grant's owner is the browser's: the connection is in its list.
    let list: Value = browser
        .get(app.url("/api/connections"))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(
        list["connections"]
            .as_array()
            .ok_or("no connections")?
            .len(),
        1,
        "{list}"
    );
    assert!(grant.owner_id.starts_with("own_"));
    // A path is resolved against the request's origin.
    valid(oauth::verify_bearer(&state, &bearer(&app, access)?, "/mcp/restaurant").await);
    // No header: no grant, no error.
    let mut anonymous = HeaderMap::new();
    anonymous.insert(header::HOST, HeaderValue::from_str(&app.addr.to_string())?);
    assert!(matches!(
        oauth::verify_bearer(&state, &anonymous, "/mcp/restaurant").await,
        Ok(None)
    ));
    // Another scheme, or garbage, is invalid.
    let mut basic = anonymous.clone();
    basic.insert(
        header::AUTHORIZATION,
        HeaderValue::from_static("Basic dXNlcjpwdw=="),
    );
    invalid(oauth::verify_bearer(&state, &basic, "/mcp/restaurant").await);
    invalid(verify(&state, &app, "dat_not-a-token", "/mcp/restaurant").await?);

    // Only hashes are stored.
    let raw: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM oauth_tokens WHERE token_hash = $1")
        .bind(access)
        .fetch_one(&app.pool)
        .await?;
    assert_eq!(raw, 0);
    let hashed = sha256_hex(access);
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM oauth_tokens WHERE token_hash = $1")
        .bind(&hashed)
        .fetch_one(&app.pool)
        .await?;
    assert_eq!(stored, 1);
    let codes: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM oauth_codes WHERE code_hash = $1")
        .bind(&code)
        .fetch_one(&app.pool)
        .await?;
    assert_eq!(codes, 0);
    Ok(())
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test]
async fn a_wrong_verifier_redirect_or_client_gets_invalid_grant_and_spends_the_code() -> TestResult
{
    let app = support::spawn_app().await?;
    let browser = browser(&app).await?;
    let client_id = register(&app, "Claude").await?;
    let other = register(&app, "Other").await?;

    let bad_verifier = "another-verifier-0123456789-abcdefghijklmnopqrstuvwxyz";
    let cases: [(&str, &str, &str); 3] = [
        (client_id.as_str(), REDIRECT_URI, bad_verifier),
        (client_id.as_str(), "http://127.0.0.1:9/elsewhere", VERIFIER),
        (other.as_str(), REDIRECT_URI, VERIFIER),
    ];
    for (client, redirect, verifier) in cases {
        let code = code(&app, &browser, &client_id, "/mcp/restaurant", "").await?;
        let (status, body) = post_form(
            &app,
            "/oauth/token",
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", redirect),
                ("client_id", client),
                ("code_verifier", verifier),
            ],
        )
        .await?;
        assert_eq!(status, 400, "{body}");
        assert_eq!(body["error"], "invalid_grant", "{body}");
        // Spent: the right exchange fails too.
        let (status, body) = exchange(&app, &client_id, &code).await?;
        assert_eq!(status, 400);
        assert_eq!(body["error"], "invalid_grant");
    }
    // A resource other than the code's.
    let code = code(&app, &browser, &client_id, "/mcp/restaurant", "").await?;
    let (status, body) = post_form(
        &app,
        "/oauth/token",
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT_URI),
            ("client_id", &client_id),
            ("code_verifier", VERIFIER),
            ("resource", &app.url("/mcp/gifts")),
        ],
    )
    .await?;
    assert_eq!(status, 400);
    assert_eq!(body["error"], "invalid_target");
    assert_eq!(app.count("SELECT COUNT(*) FROM oauth_grants").await?, 0);

    // Malformed requests.
    let (status, body) = post_form(&app, "/oauth/token", &[("grant_type", "password")]).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );
    let (status, body) = post_form(&app, "/oauth/token", &[]).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request"))
    );
    let (status, body) = post_form(
        &app,
        "/oauth/token",
        &[
            ("grant_type", "authorization_code"),
            ("client_id", "dcl_nobody"),
        ],
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
    let (status, body) = post_form(
        &app,
        "/oauth/token",
        &[
            ("grant_type", "authorization_code"),
            ("client_id", &client_id),
        ],
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request"))
    );
    let json_body = reqwest::Client::new()
        .post(app.url("/oauth/token"))
        .json(&json!({"grant_type": "authorization_code"}))
        .send()
        .await?;
    assert_eq!(json_body.status().as_u16(), 400);
    assert_eq!(json_body.headers()["cache-control"], "no-store");
    Ok(())
}

#[tokio::test]
async fn a_reused_code_is_refused_and_revokes_its_grant() -> TestResult {
    let app = support::spawn_app().await?;
    let browser = browser(&app).await?;
    let client_id = register(&app, "Claude").await?;
    let code = code(&app, &browser, &client_id, "/mcp/gifts", "checkout").await?;

    // Two exchanges at once: exactly one gets tokens.
    let (first, second) = tokio::join!(
        exchange(&app, &client_id, &code),
        exchange(&app, &client_id, &code)
    );
    let (first, second) = (first?, second?);
    let (won, lost) = if first.0 == 200 {
        (first, second)
    } else {
        (second, first)
    };
    assert_eq!(won.0, 200, "{}", won.1);
    assert_eq!(lost.0, 400, "{}", lost.1);
    assert_eq!(lost.1["error"], "invalid_grant");
    // The replay revoked what the first exchange obtained.
    let state = state_of(&app).await?;
    let access = won.1["access_token"].as_str().ok_or("no access_token")?;
    invalid(verify(&state, &app, access, "/mcp/gifts").await?);
    let (status, body) = refresh(
        &app,
        &client_id,
        won.1["refresh_token"].as_str().ok_or("no refresh_token")?,
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    // And a third try is refused as well.
    let (status, _) = exchange(&app, &client_id, &code).await?;
    assert_eq!(status, 400);
    Ok(())
}

#[tokio::test]
async fn refresh_tokens_rotate_and_a_reused_one_revokes_the_grant() -> TestResult {
    let app = support::spawn_app().await?;
    let browser = browser(&app).await?;
    let tokens = access_token(&app, &browser, "/mcp/restaurant", "").await?;
    assert_eq!(tokens.body["scope"], "bookings checkout");
    let state = state_of(&app).await?;

    let (status, second) = refresh(&app, &tokens.client_id, &tokens.refresh_token).await?;
    assert_eq!(status, 200, "{second}");
    let second_refresh = second["refresh_token"].as_str().ok_or("no refresh_token")?;
    let second_access = second["access_token"].as_str().ok_or("no access_token")?;
    assert_ne!(second_refresh, tokens.refresh_token);
    assert_ne!(second_access, tokens.access_token);
    valid(verify(&state, &app, second_access, "/mcp/restaurant").await?);

    // Narrowing the scope works; widening is refused.
    let (status, third) = refresh(&app, &tokens.client_id, second_refresh).await?;
    assert_eq!(status, 200);
    let third_refresh = third["refresh_token"]
        .as_str()
        .ok_or("no refresh_token")?
        .to_owned();
    let (status, narrowed) = post_form(
        &app,
        "/oauth/token",
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &third_refresh),
            ("client_id", &tokens.client_id),
            ("scope", "bookings"),
        ],
    )
    .await?;
    assert_eq!(status, 200, "{narrowed}");
    assert_eq!(narrowed["scope"], "bookings");
    let narrow_access = narrowed["access_token"].as_str().ok_or("no access_token")?;
    assert_eq!(
        valid(verify(&state, &app, narrow_access, "/mcp/restaurant").await?).scopes,
        vec!["bookings".to_owned()]
    );
    let latest = narrowed["refresh_token"]
        .as_str()
        .ok_or("no refresh_token")?
        .to_owned();
    let (status, body) = post_form(
        &app,
        "/oauth/token",
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &latest),
            ("client_id", &tokens.client_id),
            ("scope", "bookings checkout"),
        ],
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_scope"))
    );
    // A refused refresh does not spend the token; another client cannot use it.
    let other = register(&app, "Other").await?;
    let (status, _) = refresh(&app, &other, &latest).await?;
    assert_eq!(status, 400);
    let (status, body) = refresh(&app, &tokens.client_id, &latest).await?;
    assert_eq!(status, 200, "{body}");
    let newest_access = body["access_token"]
        .as_str()
        .ok_or("no access_token")?
        .to_owned();
    let newest_refresh = body["refresh_token"]
        .as_str()
        .ok_or("no refresh_token")?
        .to_owned();

    // The first refresh token again: a replay. The whole grant ends.
    let (status, body) = refresh(&app, &tokens.client_id, &tokens.refresh_token).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    invalid(verify(&state, &app, &newest_access, "/mcp/restaurant").await?);
    invalid(verify(&state, &app, &tokens.access_token, "/mcp/restaurant").await?);
    let (status, _) = refresh(&app, &tokens.client_id, &newest_refresh).await?;
    assert_eq!(status, 400);
    let list: Value = browser
        .get(app.url("/api/connections"))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(list["connections"], json!([]));
    Ok(())
}

#[tokio::test]
async fn revoking_a_token_revokes_its_grant() -> TestResult {
    let app = support::spawn_app().await?;
    let browser = browser(&app).await?;
    let tokens = access_token(&app, &browser, "/mcp/restaurant", "bookings").await?;
    let state = state_of(&app).await?;
    valid(verify(&state, &app, &tokens.access_token, "/mcp/restaurant").await?);

    // Another client cannot revoke it; an unknown token is answered 200 all the same.
    let other = register(&app, "Other").await?;
    let (status, _) = post_form(
        &app,
        "/oauth/revoke",
        &[("token", &tokens.access_token), ("client_id", &other)],
    )
    .await?;
    assert_eq!(status, 200);
    valid(verify(&state, &app, &tokens.access_token, "/mcp/restaurant").await?);
    let (status, _) = post_form(
        &app,
        "/oauth/revoke",
        &[("token", "dat_unknown"), ("client_id", &tokens.client_id)],
    )
    .await?;
    assert_eq!(status, 200);
    let (status, body) = post_form(&app, "/oauth/revoke", &[("token", "dat_unknown")]).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );

    let (status, _) = post_form(
        &app,
        "/oauth/revoke",
        &[
            ("token", &tokens.access_token),
            ("token_type_hint", "access_token"),
            ("client_id", &tokens.client_id),
        ],
    )
    .await?;
    assert_eq!(status, 200);
    invalid(verify(&state, &app, &tokens.access_token, "/mcp/restaurant").await?);
    let (status, body) = refresh(&app, &tokens.client_id, &tokens.refresh_token).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    Ok(())
}

#[tokio::test]
async fn tokens_and_codes_expire() -> TestResult {
    let (app, offset) = spawn_app_with_movable_clock().await?;
    let browser = browser(&app).await?;
    let tokens = access_token(&app, &browser, "/mcp/restaurant", "bookings").await?;
    let mut state = state_of(&app).await?;
    let seen = offset.clone();
    state.agent.clock = std::sync::Arc::new(move || {
        support::now() + chrono::Duration::seconds(seen.load(Ordering::SeqCst))
    });
    offset.store(3599, Ordering::SeqCst);
    valid(verify(&state, &app, &tokens.access_token, "/mcp/restaurant").await?);
    offset.store(3600, Ordering::SeqCst);
    invalid(verify(&state, &app, &tokens.access_token, "/mcp/restaurant").await?);
    // An hour on, the refresh token still works, and gives a fresh access token.
    let (status, body) = refresh(&app, &tokens.client_id, &tokens.refresh_token).await?;
    assert_eq!(status, 200, "{body}");
    valid(
        verify(
            &state,
            &app,
            body["access_token"].as_str().ok_or("no access_token")?,
            "/mcp/restaurant",
        )
        .await?,
    );
    // Thirty days on, it does not.
    offset.store(3600 + 30 * 24 * 3600, Ordering::SeqCst);
    let (status, body) = refresh(
        &app,
        &tokens.client_id,
        body["refresh_token"].as_str().ok_or("no refresh_token")?,
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    // A code is good for 60 s.
    offset.store(0, Ordering::SeqCst);
    let client_id = register(&app, "Slow").await?;
    let code = code(&app, &browser, &client_id, "/mcp/restaurant", "").await?;
    offset.store(61, Ordering::SeqCst);
    let (status, body) = exchange(&app, &client_id, &code).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    // A consent request is good for 10 minutes.
    offset.store(0, Ordering::SeqCst);
    let request = consent_request(&app, &client_id, "/mcp/restaurant", "").await?;
    offset.store(601, Ordering::SeqCst);
    let late = browser
        .post(app.url("/api/oauth/consent"))
        .json(&json!({"request": request, "allow": true}))
        .send()
        .await?;
    assert_eq!(late.status().as_u16(), 404);
    Ok(())
}

#[tokio::test]
async fn a_token_is_only_good_for_its_own_resource() -> TestResult {
    let app = support::spawn_app().await?;
    let browser = browser(&app).await?;
    let tokens = access_token(&app, &browser, "/mcp/restaurant", "bookings").await?;
    let state = state_of(&app).await?;
    valid(verify(&state, &app, &tokens.access_token, "/mcp/restaurant").await?);
    invalid(verify(&state, &app, &tokens.access_token, "/mcp/gifts").await?);
    invalid(verify(&state, &app, &tokens.access_token, "/mcp/shipping").await?);
    // The same path at another origin is another resource.
    invalid(
        oauth::verify_bearer(
            &state,
            &bearer(&app, &tokens.access_token)?,
            "https://datban.example/mcp/restaurant",
        )
        .await,
    );
    Ok(())
}

#[tokio::test]
async fn denying_sends_access_denied_back_and_spends_the_request() -> TestResult {
    let app = support::spawn_app().await?;
    let browser = browser(&app).await?;
    let client_id = register(&app, "Claude").await?;
    let request = consent_request(&app, &client_id, "/mcp/restaurant", "").await?;
    let redirect = answer(&app, &browser, &request, false).await?;
    assert_eq!(param(&redirect, "error")?.as_deref(), Some("access_denied"));
    assert_eq!(param(&redirect, "state")?.as_deref(), Some("st-123"));
    assert_eq!(param(&redirect, "code")?, None);
    let details = browser
        .get(app.url(&format!("/api/oauth/requests/{request}")))
        .send()
        .await?;
    assert_eq!(details.status().as_u16(), 404);
    // Another site cannot answer for the person.
    let request = consent_request(&app, &client_id, "/mcp/restaurant", "").await?;
    let forged = browser
        .post(app.url("/api/oauth/consent"))
        .header("origin", "https://evil.example")
        .json(&json!({"request": request, "allow": true}))
        .send()
        .await?;
    assert_eq!(forged.status().as_u16(), 403);
    Ok(())
}

#[tokio::test]
async fn a_client_with_a_secret_must_send_it() -> TestResult {
    let app = support::spawn_app().await?;
    let browser = browser(&app).await?;
    let (status, body) = register_with(
        &app,
        json!({
            "client_name": "Confidential",
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "client_secret_post",
        }),
    )
    .await?;
    assert_eq!(status, 201, "{body}");
    let client_id = body["client_id"].as_str().ok_or("no client_id")?.to_owned();
    let secret = body["client_secret"]
        .as_str()
        .ok_or("no client_secret")?
        .to_owned();
    assert_eq!(body["client_secret_expires_at"], 0);
    let code_one = code(&app, &browser, &client_id, "/mcp/restaurant", "").await?;
    let (status, body) = exchange(&app, &client_id, &code_one).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
    let code_two = code(&app, &browser, &client_id, "/mcp/restaurant", "").await?;
    let (status, body) = post_form(
        &app,
        "/oauth/token",
        &[
            ("grant_type", "authorization_code"),
            ("code", &code_two),
            ("redirect_uri", REDIRECT_URI),
            ("client_id", &client_id),
            ("client_secret", &secret),
            ("code_verifier", VERIFIER),
        ],
    )
    .await?;
    assert_eq!(status, 200, "{body}");
    // No refresh_token grant registered: no refresh token.
    assert!(body.get("refresh_token").is_none());
    Ok(())
}

#[tokio::test]
async fn connections_are_listed_and_disconnected_only_by_their_owner() -> TestResult {
    let app = support::spawn_app().await?;
    let alice = browser(&app).await?;
    let bob = browser(&app).await?;
    let tokens = access_token(&app, &alice, "/mcp/restaurant", "bookings").await?;
    let state = state_of(&app).await?;
    valid(verify(&state, &app, &tokens.access_token, "/mcp/restaurant").await?);

    let list = |client: reqwest::Client| {
        let url = app.url("/api/connections");
        async move {
            let response = client.get(url).send().await?;
            assert_eq!(response.status().as_u16(), 200);
            response.json::<Value>().await
        }
    };
    let mine = list(alice.clone()).await?;
    let connections = mine["connections"].as_array().ok_or("no connections")?;
    assert_eq!(connections.len(), 1, "{mine}");
    let connection = &connections[0];
    assert_eq!(connection["clientName"], "Test MCP client");
    assert_eq!(connection["scopes"], json!(["bookings"]));
    assert_eq!(connection["assistant"], "restaurant");
    assert!(connection["connectedAt"]
        .as_str()
        .ok_or("no connectedAt")?
        .starts_with("2026-11-29T03:00"));
    // verify_bearer recorded the use.
    assert!(connection["lastUsedAt"].as_str().is_some(), "{connection}");
    let id = connection["id"].as_str().ok_or("no id")?.to_owned();

    assert_eq!(list(bob.clone()).await?["connections"], json!([]));
    let stranger = bob
        .delete(app.url(&format!("/api/connections/{id}")))
        .send()
        .await?;
    assert_eq!(stranger.status().as_u16(), 404);
    let body: Value = stranger.json().await?;
    assert_eq!(body["error"]["code"], "NOT_FOUND");
    valid(verify(&state, &app, &tokens.access_token, "/mcp/restaurant").await?);

    let mine = alice
        .delete(app.url(&format!("/api/connections/{id}")))
        .send()
        .await?;
    assert_eq!(mine.status().as_u16(), 200);
    invalid(verify(&state, &app, &tokens.access_token, "/mcp/restaurant").await?);
    let (status, _) = refresh(&app, &tokens.client_id, &tokens.refresh_token).await?;
    assert_eq!(status, 400);
    assert_eq!(list(alice.clone()).await?["connections"], json!([]));
    let again = alice
        .delete(app.url(&format!("/api/connections/{id}")))
        .send()
        .await?;
    assert_eq!(again.status().as_u16(), 404);
    Ok(())
}

//! The edge's limits and defences over real sockets: body size, message length, the
//! per-owner rate limit, the Origin check, security headers and the page's CSP nonce, and
//! the agent loop's bounds on what a model streams (argument size, bytes per run).

use crate::support;

use std::{num::NonZeroU32, sync::Arc, time::Duration};

use serde_json::{json, Value};
use server::{
    model::{http::HttpSettings, openai_chat::OpenAiChat, ProviderError, SharedProvider},
    security::{RateLimit, SecuritySettings, MAX_ARGUMENT_BYTES, MAX_RUN_BYTES},
};
use support::{
    fake_provider::{spawn, FakeProvider, Script, Wire},
    read_reply, spawn_app, spawn_app_with_provider, spawn_app_with_security, Reply, TestApp,
    TestResult,
};

fn assert_json_error(reply: &Reply, status: u16, code: &str) {
    assert_eq!(reply.status, status, "{:?}", reply.body);
    assert!(
        reply.content_type.starts_with("application/json"),
        "{}",
        reply.content_type
    );
    assert_eq!(reply.body["error"]["code"], code, "{:?}", reply.body);
    let message = reply.body["error"]["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty(), "{:?}", reply.body);
}

async fn stored_conversations(app: &TestApp) -> support::Fallible<i64> {
    app.count("SELECT COUNT(*) FROM conversations").await
}

// ---------------------------------------------------------------------------------------
// Body size and message length

#[tokio::test]
async fn an_oversized_body_is_refused_with_a_json_413_and_nothing_is_stored() -> TestResult {
    let app = spawn_app().await?;
    // Other API bodies are small; a chat body may hold an AI SDK client's whole history.
    let big = "a".repeat(100 * 1024);
    let reply = app
        .post(
            &app.client,
            "/api/approvals",
            json!({"conversationId": big, "toolCallId": "c", "approved": true}),
        )
        .await?;
    assert_json_error(&reply, 413, "BODY_TOO_LARGE");
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .ok_or("the error has a message")?
            .contains("64 KiB"),
        "{:?}",
        reply.body
    );
    let text = "a".repeat(3 * 1024 * 1024);
    let reply = app
        .post(&app.client, "/api/chat", json!({ "text": text }))
        .await?;
    assert_json_error(&reply, 413, "BODY_TOO_LARGE");
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .ok_or("the error has a message")?
            .contains("2048 KiB"),
        "{:?}",
        reply.body
    );

    // The same body without a declared length (chunked) gets the same answer.
    let body = json!({ "text": text }).to_string().into_bytes();
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        body.chunks(8 * 1024).map(|c| Ok(c.to_vec())).collect();
    let response = app
        .client
        .post(app.url("/api/chat"))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await?;
    let reply = read_reply(response).await?;
    assert_json_error(&reply, 413, "BODY_TOO_LARGE");

    assert_eq!(stored_conversations(&app).await?, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM messages").await?, 0);

    // The server goes on serving.
    let reply = app.chat(None, "Xin chào").await?;
    assert_eq!(reply.status, 200);
    assert!(reply.done);
    Ok(())
}

#[tokio::test]
async fn a_message_over_4000_characters_is_a_413_message_too_long() -> TestResult {
    let app = spawn_app().await?;
    // 4001 characters of two bytes each: under the body limit, over the message limit.
    let text = "ă".repeat(4001);
    let reply = app
        .post(&app.client, "/api/chat", json!({ "text": text }))
        .await?;
    assert_json_error(&reply, 413, "MESSAGE_TOO_LONG");
    assert_eq!(stored_conversations(&app).await?, 0);

    // Exactly 4000 is allowed.
    let reply = app
        .post(
            &app.client,
            "/api/chat",
            json!({ "text": "ă".repeat(4000) }),
        )
        .await?;
    assert_eq!(reply.status, 200);
    assert!(reply.done);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Rate limit

#[tokio::test]
async fn an_owner_over_the_budget_gets_429_while_another_owner_goes_on() -> TestResult {
    let app = spawn_app_with_security(SecuritySettings {
        public_origin: None,
        rate_limit: Some(RateLimit {
            per_minute: NonZeroU32::try_from(2)?,
            burst: NonZeroU32::try_from(2)?,
        }),
        body_timeout: None,
        cors_origins: Vec::new(),
    })
    .await?;
    let first = app.chat(None, "Xin chào").await?;
    assert_eq!(first.status, 200);
    let conversation = first.conversation_id();
    assert_eq!(app.chat(Some(&conversation), "Cảm ơn").await?.status, 200);

    let limited = app.chat(Some(&conversation), "Còn gì nữa?").await?;
    assert_json_error(&limited, 429, "RATE_LIMITED");
    // Approvals share the budget.
    let response = app
        .client
        .post(app.url("/api/approvals"))
        .json(&json!({"conversationId": conversation, "toolCallId": "x", "approved": true}))
        .send()
        .await?;
    let retry_after: u64 = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .ok_or("a 429 says when to retry")?;
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    assert_json_error(&read_reply(response).await?, 429, "RATE_LIMITED");
    // Nothing of the refused message was stored.
    assert_eq!(app.count("SELECT COUNT(*) FROM messages").await?, 4);

    // Reading and stopping are not limited.
    let (status, _) = app
        .get_json(&format!("/api/conversations/{conversation}"))
        .await?;
    assert_eq!(status, 200);
    let stop = app
        .post(
            &app.client,
            &format!("/api/chat/{conversation}/stop"),
            json!({}),
        )
        .await?;
    assert_ne!(stop.status, 429);

    // Another owner (another cookie jar) has a budget of its own.
    let other = support::new_client()?;
    let reply = app
        .post(&other, "/api/chat", json!({"text": "Xin chào"}))
        .await?;
    assert_eq!(reply.status, 200);
    assert!(reply.done);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Origin check

#[tokio::test]
async fn cross_site_posts_are_refused_and_same_origin_ones_pass() -> TestResult {
    let app = spawn_app().await?;
    let send = |headers: Vec<(&'static str, String)>| {
        let mut request = app
            .client
            .post(app.url("/api/chat"))
            .json(&json!({"text": "Xin chào"}));
        for (name, value) in headers {
            request = request.header(name, value);
        }
        async move { read_reply(request.send().await?).await }
    };

    let evil = send(vec![("origin", "https://evil.example".to_owned())]).await?;
    assert_json_error(&evil, 403, "CROSS_SITE_REQUEST");
    let fetched = send(vec![("sec-fetch-site", "cross-site".to_owned())]).await?;
    assert_json_error(&fetched, 403, "CROSS_SITE_REQUEST");
    let null = send(vec![("origin", "null".to_owned())]).await?;
    assert_json_error(&null, 403, "CROSS_SITE_REQUEST");
    // The same host and port under another scheme is another origin.
    let other_scheme = send(vec![("origin", format!("https://{}", app.addr))]).await?;
    assert_json_error(&other_scheme, 403, "CROSS_SITE_REQUEST");
    // Two Origin headers, even both ours: refused (a browser sends one; a forgery hopes
    // one check reads the first and another the last).
    let twice = send(vec![
        ("origin", format!("http://{}", app.addr)),
        ("origin", format!("http://{}", app.addr)),
    ])
    .await?;
    assert_json_error(&twice, 403, "CROSS_SITE_REQUEST");
    assert_eq!(stored_conversations(&app).await?, 0);

    // A cross-site read is not a state change: the same-origin policy keeps its answer
    // from the other site, and nothing changes.
    let response = app
        .client
        .get(app.url("/api/bookings"))
        .header("origin", "https://evil.example")
        .send()
        .await?;
    assert_eq!(response.status(), 200);

    let own = send(vec![
        ("origin", format!("http://{}", app.addr)),
        ("sec-fetch-site", "same-origin".to_owned()),
    ])
    .await?;
    assert_eq!(own.status, 200);
    assert!(own.done);
    // Without either header (curl, scripts): allowed.
    assert_eq!(send(vec![]).await?.status, 200);
    Ok(())
}

#[tokio::test]
async fn a_configured_public_origin_is_accepted_behind_a_proxy() -> TestResult {
    let app = spawn_app_with_security(SecuritySettings {
        public_origin: Some("https://datban.example".to_owned()),
        rate_limit: None,
        body_timeout: None,
        cors_origins: Vec::new(),
    })
    .await?;
    let response = app
        .client
        .post(app.url("/api/chat"))
        .header("origin", "https://datban.example")
        .json(&json!({"text": "Xin chào"}))
        .send()
        .await?;
    assert_eq!(response.status(), 200);
    let _ = response.text().await;
    let response = app
        .client
        .post(app.url("/api/chat"))
        .header("origin", "https://other.example")
        .json(&json!({"text": "Xin chào"}))
        .send()
        .await?;
    assert_eq!(response.status(), 403);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Headers and the page's Content-Security-Policy

fn assert_security_headers(headers: &reqwest::header::HeaderMap) {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(get("x-content-type-options"), "nosniff");
    assert_eq!(get("referrer-policy"), "same-origin");
    assert_eq!(get("x-frame-options"), "DENY");
}

/// The nonce of a policy's `script-src`.
fn policy_nonce(policy: &str) -> Result<String, &'static str> {
    let start = policy.find("'nonce-").ok_or("the policy has a nonce")? + "'nonce-".len();
    let end = policy[start..].find('\'').ok_or("the nonce ends")? + start;
    Ok(policy[start..end].to_owned())
}

async fn page(
    app: &TestApp,
    path: &str,
) -> Result<(u16, String, String), Box<dyn std::error::Error + Send + Sync>> {
    let response = app.client.get(app.url(path)).send().await?;
    assert_security_headers(response.headers());
    let policy = response
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .ok_or("a page has a Content-Security-Policy")?
        .to_owned();
    let status = response.status().as_u16();
    Ok((status, policy, response.text().await?))
}

#[tokio::test]
async fn pages_have_a_csp_whose_nonce_is_on_every_inline_script() -> TestResult {
    let app = spawn_app().await?;
    let (status, policy, html) = page(&app, "/").await?;
    assert_eq!(status, 200);
    for directive in [
        "default-src 'self'",
        "'wasm-unsafe-eval'",
        "style-src 'self'",
        "connect-src 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "object-src 'none'",
    ] {
        assert!(policy.contains(directive), "{directive} in {policy}");
    }
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    let nonce = policy_nonce(&policy)?;
    assert!(nonce.len() >= 16, "{nonce}");
    let scripts: Vec<&str> = html.split("<script").skip(1).collect();
    assert!(!scripts.is_empty(), "{html}");
    for script in &scripts {
        let tag = &script[..script.find('>').ok_or("the script tag ends")?];
        assert!(
            tag.contains(&format!("nonce=\"{nonce}\"")),
            "script without the nonce: <script{tag}>"
        );
    }

    // Every response has a nonce of its own.
    let (_, again, _) = page(&app, "/").await?;
    assert_ne!(policy_nonce(&again)?, nonce);

    // The 404 page too.
    let (status, policy, html) = page(&app, "/khong-co-trang-nay").await?;
    assert_eq!(status, 404);
    let nonce = policy_nonce(&policy)?;
    assert!(html.contains(&format!("nonce=\"{nonce}\"")), "{html}");
    Ok(())
}

#[tokio::test]
async fn api_responses_and_errors_have_the_security_headers() -> TestResult {
    let app = spawn_app().await?;
    let response = app.client.get(app.url("/api/bookings")).send().await?;
    assert_eq!(response.status(), 200);
    assert_security_headers(response.headers());
    let response = app
        .client
        .post(app.url("/api/chat"))
        .header("origin", "https://evil.example")
        .json(&json!({"text": "x"}))
        .send()
        .await?;
    assert_eq!(response.status(), 403);
    assert_security_headers(response.headers());
    let response = app.client.get(app.url("/healthz")).send().await?;
    assert_security_headers(response.headers());
    Ok(())
}

#[tokio::test]
async fn every_api_answer_is_json_a_client_can_act_on() -> TestResult {
    let app = spawn_app().await?;
    let send = |method: reqwest::Method, path: &str| {
        app.client
            .request(method, app.url(path))
            .header("content-type", "application/json")
    };
    // An unknown path under /api/ is not the HTML 404 page.
    let reply = read_reply(
        send(reqwest::Method::GET, "/api/nothing/here")
            .send()
            .await?,
    )
    .await?;
    assert_json_error(&reply, 404, "NOT_FOUND");
    assert!(reply.body["error"]["message"]
        .as_str()
        .ok_or("the error has a message")?
        .contains("/api/nothing/here"));
    // A method the path does not take: 405 saying which one it takes.
    let response = send(reqwest::Method::DELETE, "/api/chat").send().await?;
    assert_eq!(response.headers()["allow"], "POST");
    let reply = read_reply(response).await?;
    assert_json_error(&reply, 405, "METHOD_NOT_ALLOWED");
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .ok_or("the error has a message")?
            .contains("DELETE"),
        "{:?}",
        reply.body
    );
    // A path segment that is not UTF-8.
    let reply = read_reply(
        send(reqwest::Method::GET, "/api/conversations/%FF%FE")
            .send()
            .await?,
    )
    .await?;
    assert_json_error(&reply, 400, "BAD_REQUEST");
    // Wrong JSON types are said in JSON terms, with the field, never a Rust type name.
    let cases = [
        (json!(["x"]), "a JSON object"),
        (json!({"text": 5}), "text"),
        (
            json!({"conversationId": "c", "toolCallId": "t", "approved": "yes"}),
            "true or false",
        ),
    ];
    for (index, (body, said)) in cases.into_iter().enumerate() {
        let path = if index == 2 {
            "/api/approvals"
        } else {
            "/api/chat"
        };
        let reply = app.post(&app.client, path, body.clone()).await?;
        assert!(
            matches!(reply.status, 400 | 422),
            "{body}: {:?}",
            reply.body
        );
        let message = reply.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(said), "{body}: {message}");
        for rust in [
            "struct ",
            "ChatBody",
            "ApprovalRequest",
            "u8",
            "usize",
            "bool",
        ] {
            assert!(!message.contains(rust), "{body}: {message}");
        }
    }
    // A body that is not said to be JSON: 415, with what to send instead.
    let response = app
        .client
        .post(app.url("/api/chat"))
        .body(r#"{"text":"hi"}"#)
        .send()
        .await?;
    let reply = read_reply(response).await?;
    assert_json_error(&reply, 415, "UNSUPPORTED_MEDIA_TYPE");
    assert!(reply.body["error"]["message"]
        .as_str()
        .ok_or("the error has a message")?
        .contains("application/json"));
    // A query value of the wrong type names the parameter and what it takes.
    let reply = read_reply(
        send(reqwest::Method::GET, "/api/chat/x/stream?after=1.5")
            .send()
            .await?,
    )
    .await?;
    assert_json_error(&reply, 400, "BAD_REQUEST");
    let message = reply.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("after") && message.contains("whole number"),
        "{message}"
    );
    // JSON answers are not kept by caches.
    let response = send(reqwest::Method::GET, "/api/bookings").send().await?;
    assert_eq!(response.headers()["cache-control"], "no-store");
    let response = send(reqwest::Method::GET, "/api/nothing").send().await?;
    assert_eq!(response.headers()["cache-control"], "no-store");
    Ok(())
}

// ---------------------------------------------------------------------------------------
// What a model may stream

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
    .to_string()
}

fn call_piece(id: Option<&str>, name: Option<&str>, args: &str) -> Value {
    let mut piece = json!({"index": 0, "function": {"arguments": args}});
    if let Some(id) = id {
        piece["id"] = json!(id);
        piece["type"] = json!("function");
    }
    if let Some(name) = name {
        piece["function"]["name"] = json!(name);
    }
    json!({"tool_calls": [piece]})
}

fn stream(events: Vec<String>) -> Script {
    Script::Stream {
        events,
        wire: Wire::ChatCompletions,
        cut_after: None,
    }
}

fn text_answer(text: &str) -> Script {
    stream(vec![
        chunk(json!({"role": "assistant", "content": text}), None),
        chunk(json!({}), Some("stop")),
    ])
}

/// A model turn proposing `tool` with `args`, streamed in pieces of `piece` bytes.
fn call_events(tool: &str, args: &str, piece: usize) -> Result<Vec<String>, std::str::Utf8Error> {
    let mut events = vec![
        chunk(json!({"role": "assistant", "content": null}), None),
        chunk(call_piece(Some("call_big"), Some(tool), ""), None),
    ];
    let bytes = args.as_bytes();
    for part in bytes.chunks(piece) {
        let part = std::str::from_utf8(part)?;
        events.push(chunk(call_piece(None, None, part), None));
    }
    Ok(events)
}

fn provider_for(fake: &FakeProvider) -> Result<SharedProvider, ProviderError> {
    let settings = HttpSettings {
        backoff: Duration::from_millis(10),
        ..Default::default()
    };
    Ok(Arc::new(OpenAiChat::new(
        fake.base_url("/v1"),
        None,
        "test-model",
        settings,
    )?))
}

#[tokio::test]
async fn an_oversized_tool_argument_is_a_validation_error_and_nothing_runs() -> TestResult {
    // A booking whose arguments are 20 KiB: over the 16 KiB limit.
    let args = json!({
        "restaurantId": "r_cha_ca_thang_long",
        "partySize": 4,
        "startsAt": "2026-11-30T19:00:00+07:00",
        "note": "x".repeat(20 * 1024),
    })
    .to_string();
    let mut events = call_events("createBooking", &args, 1024)?;
    events.push(chunk(json!({}), Some("tool_calls")));
    let fake = spawn(vec![stream(events), text_answer("Không đặt được.")]).await?;
    let app = spawn_app_with_provider(provider_for(&fake)?).await?;
    let reply = app.chat(None, "Đặt bàn").await?;
    assert_eq!(reply.status, 200);
    assert!(reply.done);

    // What was streamed to the page stopped at the limit.
    let streamed: usize = reply
        .of_type("tool-input-delta")
        .iter()
        .filter_map(|e| e["inputTextDelta"].as_str())
        .map(str::len)
        .sum();
    assert!(streamed <= MAX_ARGUMENT_BYTES, "{streamed}");
    let errors = reply.of_type("tool-input-error");
    assert_eq!(errors.len(), 1, "{:#?}", reply.of_type("tool-input-error"));
    assert_eq!(errors[0]["error"]["code"], "VALIDATION_ERROR");
    let text = errors[0]["errorText"]
        .as_str()
        .ok_or("the input error has a text")?;
    assert!(
        text.contains("arguments too large (limit 16 KiB)"),
        "{text}"
    );
    assert!(reply.of_type("tool-input-available").is_empty());
    assert!(reply.of_type("tool-approval-request").is_empty());
    assert_eq!(app.count("SELECT COUNT(*) FROM pending_calls").await?, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM bookings").await?, 0);
    assert_eq!(reply.text(), "Không đặt được.");
    assert_eq!(reply.status_of_run().as_deref(), Some("completed"));

    // The model was told, and shown no 20 KiB of arguments.
    let sent = fake.requests();
    assert_eq!(sent.len(), 2);
    let second = sent[1].body.to_string();
    assert!(second.contains("arguments too large"), "{second}");
    assert!(second.len() < 16 * 1024, "{}", second.len());
    Ok(())
}

#[tokio::test]
async fn a_run_streaming_more_than_256_kib_is_stopped_with_an_error() -> TestResult {
    // 250 KiB of text, then a call whose arguments cross the run's budget.
    let mut events = vec![chunk(json!({"role": "assistant"}), None)];
    for _ in 0..250 {
        events.push(chunk(json!({"content": "a".repeat(1024)}), None));
    }
    let args = format!(
        "{{\"city\":\"Hà Nội\",\"pad\":\"{}\"}}",
        "b".repeat(12 * 1024)
    );
    events.extend(call_events("getWeather", &args, 1024)?.into_iter().skip(1));
    events.push(chunk(json!({}), Some("tool_calls")));
    let fake = spawn(vec![stream(events)]).await?;
    let app = spawn_app_with_provider(provider_for(&fake)?).await?;
    let reply = app.chat(None, "Kể chuyện dài").await?;
    assert_eq!(reply.status, 200);
    assert!(reply.done, "the stream ends properly");

    assert_eq!(reply.status_of_run().as_deref(), Some("error"));
    let errors = reply.of_type("error");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0]["errorText"],
        "The reply was too long and was stopped."
    );
    let text_bytes = reply.text().len();
    let arg_bytes: usize = reply
        .of_type("tool-input-delta")
        .iter()
        .filter_map(|e| e["inputTextDelta"].as_str())
        .map(str::len)
        .sum();
    assert!(
        text_bytes + arg_bytes <= MAX_RUN_BYTES,
        "{text_bytes} + {arg_bytes}"
    );
    assert!(text_bytes >= 250 * 1024);
    // The call whose arguments were cut off is marked as not run, and nothing ran.
    let not_run = reply.of_type("tool-input-error");
    assert_eq!(not_run.len(), 1, "{not_run:?}");
    assert_eq!(not_run[0]["error"]["code"], "INTERRUPTED");
    assert!(reply.of_type("tool-output-available").is_empty());
    assert_eq!(fake.requests().len(), 1, "the run did not go on");

    // The stored message says the same, and the server goes on serving.
    let (status, body) = app
        .get_json(&format!("/api/conversations/{}", reply.conversation_id()))
        .await?;
    assert_eq!(status, 200);
    let last = body["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .ok_or("the conversation has a message")?
        .clone();
    assert_eq!(last["status"], "error", "{last:#}");
    let (status, _) = app.get_json("/api/bookings").await?;
    assert_eq!(status, 200);
    Ok(())
}

#[tokio::test]
async fn a_configured_front_end_origin_may_call_the_api_with_cookies() -> TestResult {
    let front = "http://localhost:5173";
    let app = spawn_app_with_security(SecuritySettings {
        cors_origins: vec![front.to_owned()],
        ..SecuritySettings::default()
    })
    .await?;
    // The browser's preflight for the AI SDK transport's POST.
    let preflight = app
        .client
        .request(reqwest::Method::OPTIONS, app.url("/api/chat"))
        .header("origin", front)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await?;
    assert!(preflight.status().is_success(), "{}", preflight.status());
    let headers = preflight.headers();
    assert_eq!(headers["access-control-allow-origin"], front);
    assert_eq!(headers["access-control-allow-credentials"], "true");
    let reply = app
        .client
        .post(app.url("/api/chat"))
        .header("origin", front)
        .json(&json!({"text": "Xin chào"}))
        .send()
        .await?;
    assert_eq!(reply.status(), 200);
    assert_eq!(reply.headers()["access-control-allow-origin"], front);
    let exposed = reply.headers()["access-control-expose-headers"]
        .to_str()?
        .to_owned();
    assert!(exposed.contains("x-datban-run-id"), "{exposed}");
    // Any other origin is still refused, and told nothing.
    let other = app
        .client
        .post(app.url("/api/chat"))
        .header("origin", "http://localhost:5174")
        .json(&json!({"text": "Xin chào"}))
        .send()
        .await?;
    assert_eq!(other.status(), 403);
    assert!(other.headers().get("access-control-allow-origin").is_none());
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Slow and odd clients

/// The server's accept loop on a free port with `limits`; its address.

#[tokio::test]
async fn a_long_uri_and_too_many_headers_are_refused_in_json() -> TestResult {
    let (addr, _db) =
        serve_with(server::serve::EdgeLimits::default(), Duration::from_secs(5)).await?;
    let client = support::new_client()?;
    let base = format!("http://{addr}");
    let long = "a".repeat(9_000);
    let response = client
        .get(format!("{base}/api/conversations/{long}"))
        .send()
        .await?;
    let reply = read_reply(response).await?;
    assert_json_error(&reply, 414, "URI_TOO_LONG");
    let mut many = reqwest::header::HeaderMap::new();
    for n in 0..150 {
        many.insert(
            reqwest::header::HeaderName::try_from(format!("x-extra-{n}"))?,
            reqwest::header::HeaderValue::from_static("1"),
        );
    }
    let response = client
        .get(format!("{base}/api/bookings"))
        .headers(many)
        .send()
        .await?;
    let reply = read_reply(response).await?;
    assert_json_error(&reply, 431, "HEADERS_TOO_LARGE");
    assert!(reply.body["error"]["message"]
        .as_str()
        .ok_or("the error has a message")?
        .contains("header lines"));
    let response = client
        .get(format!("{base}/api/bookings"))
        .header("x-big", "b".repeat(40 * 1024))
        .send()
        .await?;
    let reply = read_reply(response).await?;
    assert_json_error(&reply, 431, "HEADERS_TOO_LARGE");
    // Within the limits the same requests are served.
    let response = client
        .get(format!("{base}/api/bookings"))
        .header("x-big", "b".repeat(1024))
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 200);
    Ok(())
}

async fn serve_with(
    limits: server::serve::EdgeLimits,
    body_timeout: Duration,
) -> support::Fallible<(std::net::SocketAddr, support::TestDatabase)> {
    let (pool, guard) = support::test_pool().await?;
    let mut state = support::test_state(pool).await?;
    state.security.body_timeout = Some(body_timeout);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let app = server::app(state).with_state(());
    tokio::spawn(server::serve::serve(
        listener,
        app,
        limits,
        std::future::pending(),
    ));
    Ok((addr, guard))
}

/// Reads until the server closes the connection (or `within` passes: `false`).
async fn closed_within(stream: &mut tokio::net::TcpStream, within: Duration) -> bool {
    use tokio::io::AsyncReadExt;
    let mut buffer = [0u8; 1024];
    tokio::time::timeout(within, async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// A GET of `/healthz` from source address `from`, over a fresh connection; its status line.
async fn health_from(
    addr: std::net::SocketAddr,
    from: &str,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(format!("{from}:0").parse()?)?;
    let mut stream = socket.connect(addr).await?;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await?;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
    Ok(String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned())
}

#[tokio::test]
async fn slow_loris_connections_are_closed_and_bounded_while_others_are_served() -> TestResult {
    use tokio::io::AsyncWriteExt;
    let limits = server::serve::EdgeLimits {
        header_timeout: Duration::from_millis(800),
        per_address: 100,
        shutdown_grace: Duration::from_secs(1),
    };
    let (addr, _db) = serve_with(limits, Duration::from_secs(10)).await?;
    // 1,000 connections from one address, each sending half its headers, then nothing.
    let mut held = Vec::new();
    for _ in 0..1000 {
        let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else {
            continue;
        };
        let _ = stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .await;
        held.push(stream);
    }
    assert_eq!(held.len(), 1000);
    // Another client is served meanwhile.
    assert_eq!(health_from(addr, "127.0.0.2").await?, "HTTP/1.1 200 OK");
    // Every slow one is closed: over the bound at once, the others at the deadline.
    let started = std::time::Instant::now();
    let closed = futures::future::join_all(
        held.iter_mut()
            .map(|stream| closed_within(stream, Duration::from_secs(5))),
    )
    .await;
    assert!(
        closed.iter().all(|c| *c),
        "{} left open",
        closed.iter().filter(|c| !**c).count()
    );
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    drop(held);
    // Their places are given back: the address is served again.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(health_from(addr, "127.0.0.1").await?, "HTTP/1.1 200 OK");
    Ok(())
}

#[tokio::test]
async fn a_body_that_trickles_in_is_cut_off_with_a_json_408() -> TestResult {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (addr, _db) = serve_with(
        server::serve::EdgeLimits::default(),
        Duration::from_millis(500),
    )
    .await?;
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(
            b"POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
              Content-Length: 100\r\n\r\n{\"text\":",
        )
        .await?;
    let mut answer = vec![0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut answer))
        .await
        .map_err(|_| "no answer before the client sent the rest")??;
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("REQUEST_TIMEOUT"), "{answer}");
    Ok(())
}

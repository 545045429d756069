//! Tests of `flow`.

use super::*;

#[test]
fn redirect_uris_must_be_https_or_loopback_without_fragments() {
    for good in [
        "https://chatgpt.com/connector_platform_oauth_redirect",
        "https://claude.ai/api/mcp/auth_callback?x=1",
        "http://127.0.0.1:33418/callback",
        "http://localhost:6274/oauth/callback",
        "http://[::1]:8080/cb",
    ] {
        assert_eq!(redirect_uri_problem(good), None, "{good}");
    }
    for bad in [
        "http://example.com/cb",
        "https://example.com/cb#frag",
        "https://user:pw@example.com/cb",
        "javascript:alert(1)",
        "/relative",
        "ftp://example.com/",
        "http://localhost.evil.example/cb",
    ] {
        assert!(redirect_uri_problem(bad).is_some(), "{bad}");
    }
}

#[test]
fn english_only_when_preferred_over_vietnamese() {
    let with = |value: &'static str| {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT_LANGUAGE, HeaderValue::from_static(value));
        prefers_english(&headers)
    };
    assert!(with("en-US,en;q=0.9"));
    assert!(with("fr-FR,en;q=0.5"));
    assert!(!with("vi-VN,vi;q=0.9,en;q=0.8"));
    assert!(!with("fr-FR"));
    assert!(!prefers_english(&HeaderMap::new()));
}

#[test]
fn duplicate_parameters_are_refused() {
    assert!(parameters(b"a=1&b=2").is_some());
    assert!(parameters(b"a=1&a=2").is_none());
}

//! Every answer under `/api/` is JSON a client developer can act on.
//!
//! The handlers answer `{"error":{"code","message"}}` themselves; this layer covers what
//! never reaches them: an unknown path (which would otherwise render the HTML 404 page),
//! a method the path does not take (405), a path segment that is not UTF-8, and
//! extractors' plain-text refusals. It also keeps API answers out of caches, and rewrites
//! serde's wording (Rust type names) into JSON terms.

use axum::{
    extract::Request,
    http::{header, HeaderValue, Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
};
use shared::http::ApiCode;

use crate::error::{plain, ApiError, Cause};

/// Longest plain-text refusal read to be passed on (an extractor's message is short).
const TEXT_LIMIT: usize = 4 * 1024;

/// Longest path and query the API reads; hyper itself refuses (without a body) past 64 KiB.
pub const MAX_URI_BYTES: usize = 8 * 1024;
/// Most header lines the API reads (the HTTP/1 server is set to accept more, so this
/// layer is the one that refuses, in JSON).
pub const MAX_HEADERS: usize = 100;
/// Most header bytes (names and values) the API reads.
pub const MAX_HEADER_BYTES: usize = 32 * 1024;

/// Middleware for `/api/`: JSON for every error, `Cache-Control: no-store` on JSON, and
/// the one log line of each refusal's cause (in the request's span).
pub async fn json_answers(request: Request, next: Next) -> Response {
    if !request.uri().path().starts_with("/api/") {
        return next.run(request).await;
    }
    let mut response = match oversized(&request) {
        Some(refusal) => refusal.into_response(),
        None => {
            let method = request.method().clone();
            let path = request.uri().path().to_owned();
            let response = next.run(request).await;
            let status = response.status();
            if (status.is_client_error() || status.is_server_error()) && !is_json(&response) {
                as_json(method, &path, response).await
            } else {
                response
            }
        }
    };
    if let Some(Cause(cause)) = response.extensions_mut().remove::<Cause>() {
        if response.status().is_server_error() {
            tracing::error!(status = response.status().as_u16(), %cause, "request failed");
        } else {
            tracing::info!(status = response.status().as_u16(), %cause, "request refused");
        }
    }
    if is_json(&response) {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// A request past the API's limits on its path or its headers.
fn oversized(request: &Request) -> Option<ApiError> {
    let uri = request
        .uri()
        .path_and_query()
        .map_or(0, |path| path.as_str().len());
    if uri > MAX_URI_BYTES {
        return Some(ApiError::new(
            ApiCode::UriTooLong,
            format!("The path and query are {uri} bytes; the API reads at most {MAX_URI_BYTES}."),
        ));
    }
    let headers = request.headers();
    let bytes: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum();
    if headers.len() > MAX_HEADERS || bytes > MAX_HEADER_BYTES {
        return Some(ApiError::new(
            ApiCode::HeadersTooLarge,
            format!(
                "The request has {} header lines and {bytes} bytes of headers; the API reads \
                 at most {MAX_HEADERS} lines and {MAX_HEADER_BYTES} bytes.",
                headers.len()
            ),
        ));
    }
    None
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"))
}

/// A refusal that is not JSON, said again as JSON with the same status.
async fn as_json(method: Method, path: &str, response: Response) -> Response {
    let status = response.status();
    let html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/html"));
    let allow = response.headers().get(header::ALLOW).cloned();
    let retry_after = response.headers().get(header::RETRY_AFTER).cloned();
    let text = if html {
        String::new()
    } else {
        let bytes = axum::body::to_bytes(response.into_body(), TEXT_LIMIT)
            .await
            .unwrap_or_default();
        String::from_utf8_lossy(&bytes).trim().to_owned()
    };
    let (code, message) = match status {
        StatusCode::NOT_FOUND => (
            ApiCode::NotFound,
            format!("There is no API endpoint {method} {path}."),
        ),
        StatusCode::METHOD_NOT_ALLOWED => {
            // The router adds `Allow` after this layer has run, so it is named, not read.
            let allowed = allow
                .as_ref()
                .and_then(|value| value.to_str().ok())
                .filter(|value| !value.is_empty())
                .map_or_else(
                    || " The `Allow` header lists the methods it accepts.".to_owned(),
                    |value| format!(" It accepts {value}."),
                );
            (
                ApiCode::MethodNotAllowed,
                format!("{path} does not accept {method}.{allowed}"),
            )
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (
            ApiCode::UnsupportedMediaType,
            "Send the body as JSON, with `Content-Type: application/json`.".to_owned(),
        ),
        StatusCode::PAYLOAD_TOO_LARGE => (
            ApiCode::BodyTooLarge,
            "The request is too large.".to_owned(),
        ),
        StatusCode::TOO_MANY_REQUESTS => (
            ApiCode::RateLimited,
            "Too many requests; wait a little and try again.".to_owned(),
        ),
        status if status.is_server_error() => (
            ApiCode::Internal,
            "Something went wrong on our side. Please try again.".to_owned(),
        ),
        _ if text.is_empty() => (
            ApiCode::BadRequest,
            "The request could not be read.".to_owned(),
        ),
        _ => (ApiCode::BadRequest, plain(&text)),
    };
    let mut answer = ApiError::new(code, message)
        .with_status(status)
        .into_response();
    if let Some(allow) = allow {
        answer.headers_mut().insert(header::ALLOW, allow);
    }
    if let Some(retry_after) = retry_after {
        answer
            .headers_mut()
            .insert(header::RETRY_AFTER, retry_after);
    }
    answer
}

/// An empty answer body, for tests of the layer.
#[cfg(test)]
fn empty(status: StatusCode) -> Response {
    (status, axum::body::Body::empty()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn refusals_without_a_body_become_json() {
        let answer = as_json(Method::DELETE, "/api/chat", {
            let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
            response
        })
        .await;
        assert_eq!(answer.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(answer.headers()[header::ALLOW], "POST");
        let body = axum::body::to_bytes(answer.into_body(), 1024)
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "METHOD_NOT_ALLOWED");
        assert_eq!(
            body["error"]["message"],
            "/api/chat does not accept DELETE. It accepts POST."
        );
    }
}

//! datban over MCP: `/mcp/restaurant`, `/mcp/gifts` and `/mcp/shipping`, one MCP server per
//! assistant, exposing exactly the tools that assistant's loop allows.
//!
//! Nothing here is a second way to run a tool. A call goes through the loop's own steps
//! (`agent::direct`): the allow-list, the validator and its cross-field rules, the
//! pre-checks, the pending row of a call that needs approval, the executors and their
//! error mapping; a decision goes through the same atomic take and execution as `POST
//! /api/approvals`. What is particular to MCP is only the shape of what goes in and out
//! (`results.rs`), who the caller is (a bearer token, `auth.rs`), and the widget
//! (`widget.rs`).
//!
//! Streamable HTTP through the official SDK (`rmcp`), stateless: no session lives in the
//! process, so any replica answers any request, and every protocol revision rmcp knows
//! (2024-11-05 … 2026-07-28) is served from the same handler.

mod auth;
mod calls;
mod registry;
mod results;
mod widget;

use std::sync::Arc;

use axum::{
    extract::Request,
    http::{header, HeaderMap, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
    Router,
};
use rmcp::{
    model::{
        CallToolRequestParams, CallToolResponse, Implementation, ListResourcesResult,
        ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
        ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
    transport::streamable_http_server::{
        session::never::NeverSessionManager, StreamableHttpServerConfig, StreamableHttpService,
    },
    ErrorData, RoleServer, ServerHandler,
};
use shared::tools::Assistant;

use crate::{security::MAX_BODY_BYTES, AppState};

pub use auth::McpLimiter;

/// The path of an assistant's MCP endpoint.
pub fn endpoint_path(assistant: Assistant) -> String {
    format!("/mcp/{}", assistant.as_str())
}

/// One assistant's MCP server, made for each request (it holds only shared handles).
#[derive(Clone)]
struct McpServer {
    state: AppState,
    assistant: Assistant,
    limiter: McpLimiter,
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        capabilities.extensions = Some(widget::extension_capabilities());
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new(
                    format!("datban-{}", self.assistant.as_str()),
                    env!("CARGO_PKG_VERSION"),
                )
                .with_title(format!("datban — {}", self.assistant.label())),
            )
            .with_instructions(registry::instructions(self.assistant))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            registry::tools(self.assistant).to_vec(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        registry::tools(self.assistant)
            .iter()
            .find(|tool| tool.name == name)
            .cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let headers = parts.map(|parts| parts.headers.clone()).unwrap_or_default();
        // Set by `identify` before rmcp saw the request; absent only when it did not run.
        let identity = parts
            .and_then(|parts| parts.extensions.get::<auth::Identity>())
            .cloned()
            .unwrap_or(auth::Identity::Anonymous);
        let caller = calls::Caller {
            state: &self.state,
            assistant: self.assistant,
            headers: &headers,
            identity: &identity,
            limiter: &self.limiter,
        };
        Ok(caller.call(request).await.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(widget::resources()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        widget::read(&request.uri)
            .map(Into::into)
            .ok_or_else(|| ErrorData::resource_not_found("No such resource.", None))
    }
}

/// The three MCP endpoints, on the application's state.
pub(crate) fn routes(state: &AppState) -> Router<AppState> {
    let limiter = McpLimiter::new(state.security.rate_limit);
    let mut router = Router::new();
    for assistant in Assistant::ALL {
        let server = McpServer {
            state: state.clone(),
            assistant,
            limiter: limiter.clone(),
        };
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            transport_config(state),
        );
        router = router.route_service(&endpoint_path(assistant), service);
    }
    router
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            identify,
        ))
        .layer(cors(state))
        .layer(axum::middleware::from_fn(one_origin))
}

/// Reads the caller's bearer token before the MCP layer sees the request: an invalid one
/// is refused with HTTP 401 and the challenge that leads to sign-in (RFC 6750, RFC 9728),
/// a valid one travels to the handler as the request's [`auth::Identity`].
async fn identify(
    axum::extract::State(state): axum::extract::State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let assistant = request
        .uri()
        .path()
        .strip_prefix("/mcp/")
        .and_then(Assistant::parse);
    let Some(assistant) = assistant else {
        return next.run(request).await;
    };
    match auth::identify(&state, request.headers(), assistant).await {
        Ok(identity) => {
            request.extensions_mut().insert(identity);
            next.run(request).await
        }
        Err(auth::AuthFailure::Invalid) => {
            let challenge = auth::challenge(
                &state,
                request.headers(),
                assistant,
                Some("invalid_token"),
                None,
            );
            let mut response = (
                StatusCode::UNAUTHORIZED,
                axum::Json(serde_json::json!({
                    "error": "invalid_token",
                    "error_description": "The access token is invalid, expired or revoked, \
                        or was issued for another server. Sign in again."
                })),
            )
                .into_response();
            if let Some(value) = challenge.and_then(|c| header::HeaderValue::from_str(&c).ok()) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
            response
        }
        Err(auth::AuthFailure::Unavailable) => {
            let mut response = (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(serde_json::json!({
                    "error": "temporarily_unavailable",
                    "error_description": "Something went wrong on our side. Please try again."
                })),
            )
                .into_response();
            response
                .headers_mut()
                .insert("retry-after", header::HeaderValue::from_static("1"));
            response
        }
    }
}

/// Stateless, JSON answers, our body limit, and the hosts and origins we serve.
fn transport_config(state: &AppState) -> StreamableHttpServerConfig {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"]
        .map(str::to_owned)
        .to_vec();
    // Browsers' MCP clients on this machine (the MCP Inspector) run on any port.
    let mut origins: Vec<String> = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
        .map(str::to_owned)
        .to_vec();
    if let Some(public) = state.security.public_origin.as_deref() {
        if let Some(host) = public_host(public) {
            hosts.push(host);
        }
        origins.push(public.to_owned());
    }
    StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(MAX_BODY_BYTES)
}

/// The host of a normalised origin (`https://datban.example:8443` → `datban.example`); a
/// host entry without a port admits any port.
fn public_host(origin: &str) -> Option<String> {
    let authority = origin.split_once("://")?.1;
    let host = if authority.ends_with(']') {
        authority
    } else {
        authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host)
    };
    Some(host.to_owned())
}

/// Browser-based MCP clients on an allowed origin (the MCP Inspector on this machine, a
/// page on the public origin) may call, send the MCP headers and read the challenge;
/// other origins get no CORS headers (and 403 from the Origin check).
fn cors(state: &AppState) -> tower_http::cors::CorsLayer {
    use tower_http::cors::{AllowOrigin, CorsLayer};
    let public = state.security.public_origin.clone();
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            let Ok(origin) = origin.to_str() else {
                return false;
            };
            public.as_deref() == Some(origin) || loopback_origin(origin)
        }))
        .allow_methods([
            axum::http::Method::GET,
            axum::http::Method::POST,
            axum::http::Method::DELETE,
        ])
        .allow_headers([
            header::CONTENT_TYPE,
            header::AUTHORIZATION,
            header::ACCEPT,
            header::HeaderName::from_static("mcp-protocol-version"),
            header::HeaderName::from_static("mcp-method"),
            header::HeaderName::from_static("mcp-name"),
            header::HeaderName::from_static("mcp-session-id"),
            header::HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([
            header::WWW_AUTHENTICATE,
            header::HeaderName::from_static("mcp-session-id"),
            header::HeaderName::from_static("mcp-protocol-version"),
        ])
}

/// `http://localhost[:port]`, `http://127.0.0.1[:port]`, `http://[::1][:port]`.
fn loopback_origin(origin: &str) -> bool {
    let Some(authority) = origin.strip_prefix("http://") else {
        return false;
    };
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((host, port)) => (host, port),
            None => return false,
        },
        None => match authority.split_once(':') {
            Some((host, port)) => (host, port),
            None => (authority, ""),
        },
    };
    let port_ok = match port.strip_prefix(':') {
        Some(number) => number.parse::<u16>().is_ok(),
        None => port.is_empty() || (!authority.starts_with('[') && port.parse::<u16>().is_ok()),
    };
    port_ok && matches!(host, "localhost" | "127.0.0.1" | "::1")
}

/// A request that names two origins is refused outright: which one a check reads would
/// decide whether it passes (rmcp reads the first).
async fn one_origin(request: Request, next: Next) -> Response {
    if origins(request.headers()) > 1 {
        return (
            StatusCode::FORBIDDEN,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "Forbidden: more than one Origin header",
        )
            .into_response();
    }
    next.run(request).await
}

fn origins(headers: &HeaderMap) -> usize {
    headers.get_all(header::ORIGIN).iter().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_on_any_port_and_nothing_else() {
        for origin in [
            "http://localhost:6274",
            "http://127.0.0.1:3000",
            "http://[::1]:8080",
            "http://localhost",
        ] {
            assert!(loopback_origin(origin), "{origin}");
        }
        for origin in [
            "https://localhost:6274",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil.example:80",
            "http://evil.example",
            "http://localhost:notaport",
            "null",
        ] {
            assert!(!loopback_origin(origin), "{origin}");
        }
        assert_eq!(
            public_host("https://datban.example:8443").as_deref(),
            Some("datban.example")
        );
        assert_eq!(
            public_host("https://[2001:db8::1]").as_deref(),
            Some("[2001:db8::1]")
        );
    }
}

//! Who calls: public tools need nobody; personal ones need a bearer token of a datban
//! owner, bound to this very MCP server (its audience), with the tool's scope. The tokens
//! themselves are the OAuth module's; here is only what a tool call needs from them.

use std::{sync::Arc, time::Duration};

use axum::http::HeaderMap;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use shared::tools::Assistant;

use crate::{oauth, security::RateLimit, AppState};

/// The caller a call is made for.
#[derive(Debug, Clone)]
pub enum Identity {
    /// No token came: only public tools may run.
    Anonymous,
    /// A valid token of this owner with these scopes.
    Owner {
        /// The datban owner the token was granted by.
        owner_id: String,
        /// What the person allowed.
        scopes: Vec<String>,
    },
}

/// Why a caller could not be identified.
pub enum AuthFailure {
    /// The token is unknown, expired, revoked or for another resource.
    Invalid,
    /// Our storage failed; the caller may retry.
    Unavailable,
}

/// Reads the bearer token of a request to an assistant's endpoint.
pub async fn identify(
    state: &AppState,
    headers: &HeaderMap,
    assistant: Assistant,
) -> Result<Identity, AuthFailure> {
    let Some(resource) = oauth::resource_url(state, headers, &super::endpoint_path(assistant))
    else {
        // Without a known origin no token can have been issued for us.
        return match headers.get(axum::http::header::AUTHORIZATION) {
            Some(_) => Err(AuthFailure::Invalid),
            None => Ok(Identity::Anonymous),
        };
    };
    match oauth::verify_bearer(state, headers, &resource).await {
        Ok(None) => Ok(Identity::Anonymous),
        Ok(Some(grant)) => Ok(Identity::Owner {
            owner_id: grant.owner_id,
            scopes: grant.scopes,
        }),
        Err(oauth::BearerError::Invalid) => Err(AuthFailure::Invalid),
        Err(oauth::BearerError::Storage(error)) => {
            tracing::error!(%error, "checking a bearer token failed");
            Err(AuthFailure::Unavailable)
        }
    }
}

/// The `WWW-Authenticate` challenge that starts (or restarts) sign-in for this endpoint;
/// `None` when the origin cannot be known (then no sign-in can work either).
pub fn challenge(
    state: &AppState,
    headers: &HeaderMap,
    assistant: Assistant,
    error: Option<&str>,
    scope: Option<&str>,
) -> Option<String> {
    let metadata = oauth::resource_metadata_url(state, headers, &super::endpoint_path(assistant))?;
    Some(oauth::challenge(&metadata, error, scope))
}

/// The per-owner pace of personal tool calls over MCP: the same allowance as messages on
/// the page (`DATBAN_RATE_PER_MINUTE`), counted apart from them. Public tools store
/// nothing and are not paced; decisions are not either (each call is carried out once).
#[derive(Clone, Default)]
pub struct McpLimiter(Option<Arc<DefaultKeyedRateLimiter<String>>>);

impl McpLimiter {
    /// A limiter for `limit`; `None` lets every call through.
    pub fn new(limit: Option<RateLimit>) -> Self {
        Self(limit.and_then(|limit| {
            let period = Duration::from_secs(60) / limit.per_minute.get();
            // A whole minute's allowance at once: hosts call several tools in one turn and
            // repeat calls, which a person typing on the page never does.
            let quota = Quota::with_period(period)?.allow_burst(limit.per_minute);
            Some(Arc::new(RateLimiter::keyed(quota)))
        }))
    }

    /// `Err(seconds to wait)` when this owner called too often.
    pub fn check(&self, owner_id: &str) -> Result<(), u64> {
        let Some(limiter) = &self.0 else {
            return Ok(());
        };
        if limiter.len() > 10_000 {
            // Owners whose allowance is full again need no entry.
            limiter.retain_recent();
        }
        limiter
            .check_key(&owner_id.to_owned())
            .map_err(|not_until| {
                let wait = not_until.wait_time_from(governor::clock::Clock::now(
                    &governor::clock::DefaultClock::default(),
                ));
                wait.as_secs().max(1)
            })
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;

    #[test]
    fn each_owner_has_an_allowance_of_their_own() {
        let limiter = McpLimiter::new(Some(RateLimit {
            per_minute: NonZeroU32::new(2).unwrap(),
            burst: NonZeroU32::new(1).unwrap(),
        }));
        assert!(limiter.check("own_a").is_ok());
        assert!(limiter.check("own_a").is_ok());
        let wait = limiter.check("own_a").unwrap_err();
        assert!((1..=30).contains(&wait), "{wait}");
        // Another person is not slowed down by the first.
        assert!(limiter.check("own_b").is_ok());
        // No limit configured: nothing is counted.
        let open = McpLimiter::new(None);
        assert!((0..100).all(|_| open.check("own_a").is_ok()));
    }
}

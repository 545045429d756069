//! `GET /healthz` through the whole router, without a socket.

mod support;

use axum::{body::Body, http::Request};
use http_body_util::BodyExt;
use server::{app, AppState};
use support::{test_pool, test_state, TestDatabase};
use tower::ServiceExt;

async fn state() -> (AppState, TestDatabase) {
    let (pool, guard) = test_pool().await;
    (test_state(pool).await, guard)
}

async fn get(app: axum::Router, uri: &str) -> (u16, serde_json::Value) {
    let response = app
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

#[tokio::test]
async fn healthz_reports_ok_and_version() {
    let (state, _db) = state().await;
    let (status, body) = get(app(state), "/healthz").await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        serde_json::json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")})
    );
}

#[tokio::test]
async fn healthz_reports_unavailable_when_the_database_is_gone() {
    let (state, _db) = state().await;
    state.db.close().await;
    let (status, body) = get(app(state), "/healthz").await;
    assert_eq!(status, 503);
    assert_eq!(body["status"], "unavailable");
}

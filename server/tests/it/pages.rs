//! Server-side rendering of the chat page, without a socket.

use crate::support;

use axum::{body::Body, http::Request};
use http_body_util::BodyExt;
use server::app;
use support::{test_pool, test_state, TestResult};
use tower::ServiceExt;

async fn get_html(uri: &str) -> Result<(u16, String), Box<dyn std::error::Error + Send + Sync>> {
    let (pool, _db) = test_pool().await?;
    let state = test_state(pool).await?;
    let response = app(state)
        .oneshot(Request::get(uri).body(Body::empty())?)
        .await?;
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await?.to_bytes();
    Ok((status, String::from_utf8(bytes.to_vec())?))
}

#[tokio::test]
async fn chat_page_is_rendered_in_vietnamese_with_hydration_scripts() -> TestResult {
    let (status, html) = get_html("/").await?;
    assert_eq!(status, 200);
    assert!(html.contains(r#"<html lang="vi""#), "{html}");
    assert!(html.contains("Đặt bàn cùng trợ lý"), "{html}");
    assert!(html.contains("/pkg/datban.js"), "{html}");
    assert!(html.contains("/pkg/datban.wasm"), "{html}");
    Ok(())
}

#[tokio::test]
async fn unknown_page_is_a_404_with_a_vietnamese_message() -> TestResult {
    let (status, html) = get_html("/khong-co-trang-nay").await?;
    assert_eq!(status, 404);
    assert!(html.contains("Không tìm thấy trang"), "{html}");
    Ok(())
}

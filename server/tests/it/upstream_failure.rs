//! An outside service failing, through the whole loop: the weather service answers 503,
//! and the person's stream carries a structured, retryable infrastructure error that says
//! nothing about where the service is or what it answered.

use crate::support;

use std::{net::SocketAddr, time::Duration};

use axum::{http::StatusCode, routing::get, Router};
use serde_json::{json, Value};
use server::tools::{weather::WeatherService, Upstreams};
use support::{spawn_app_with_upstreams, TestResult};

/// A weather service that is always down: 503 with a telling body.
async fn failing_weather_service() -> std::io::Result<SocketAddr> {
    let router = Router::new().route(
        "/forecast",
        get(|| async {
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "503 upstream maintenance at weather-backend.internal",
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(addr)
}

/// `stream` with every id value of `events` (keys `id` or ending in `Id`) replaced.
fn mask_ids(stream: &str, events: &[Value]) -> String {
    fn collect(value: &Value, ids: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    match value {
                        Value::String(id) if key == "id" || key.ends_with("Id") => {
                            ids.push(id.clone())
                        }
                        other => collect(other, ids),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| collect(item, ids)),
            _ => {}
        }
    }
    let mut ids = Vec::new();
    events.iter().for_each(|event| collect(event, &mut ids));
    ids.iter()
        .filter(|id| !id.is_empty())
        .fold(stream.to_owned(), |text, id| {
            text.replace(id.as_str(), "<id>")
        })
}

/// The `data:` events of a UI message stream, and whether it ended with `[DONE]`.
fn events(stream: &str) -> serde_json::Result<(Vec<Value>, bool)> {
    let mut events = Vec::new();
    let mut done = false;
    for line in stream.lines() {
        if let Some(data) = line.strip_prefix("data: ") {
            if data == "[DONE]" {
                done = true;
            } else {
                events.push(serde_json::from_str(data)?);
            }
        }
    }
    Ok((events, done))
}

#[tokio::test]
async fn a_weather_service_outage_reaches_the_model_as_a_retryable_error() -> TestResult {
    let fake = failing_weather_service().await?;
    let service = WeatherService::new(format!("http://{fake}"), Duration::from_secs(5))?;
    let app = spawn_app_with_upstreams(Upstreams {
        weather: Some(service),
    })
    .await?;

    let response = app
        .client
        .post(app.url("/api/chat"))
        .json(&json!({"text": "Thời tiết Hà Nội ngày mai thế nào?"}))
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 200);
    let stream = response.text().await?;
    let (events, done) = events(&stream)?;
    assert!(done, "{stream}");

    let call = events
        .iter()
        .find(|e| e["type"] == "tool-input-available" && e["toolName"] == "getWeather")
        .ok_or_else(|| format!("no getWeather call: {stream}"))?;
    assert_eq!(call["input"]["city"], "Hà Nội");
    let errors: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool-output-error" && e["toolCallId"] == call["toolCallId"])
        .collect();
    assert_eq!(errors.len(), 1, "{stream}");
    let error = &errors[0]["error"];
    assert_eq!(error["code"], "UPSTREAM_UNAVAILABLE", "{stream}");
    assert_eq!(error["retryable"], true, "{stream}");
    assert!(
        events.iter().all(|e| e["type"] != "tool-output-available"),
        "no forecast may be invented: {stream}"
    );

    // Nothing about the service leaks: not its address, not its status, not its body.
    // Random ids (hex) are masked first: one could hold "503" by chance.
    let stream = mask_ids(&stream, &events);
    for leak in [
        fake.to_string(),
        fake.ip().to_string(),
        format!(":{}", fake.port()),
        "503".to_owned(),
        "weather-backend".to_owned(),
        "maintenance".to_owned(),
    ] {
        assert!(!stream.contains(&leak), "leaked {leak}: {stream}");
    }
    Ok(())
}

//! The OpenAI Responses adapter against a recorded real stream, replayed over a socket.

use crate::support;

use std::{collections::BTreeMap, time::Duration};

use futures::StreamExt;
use serde_json::{json, Value};
use server::model::{
    http::{HttpSettings, SseEvent},
    openai_responses::{decode, OpenAiResponses},
    FinishReason, ModelEvent, ModelMessage, ModelProvider, ModelRequest, ProposedCall,
    ProviderError, ToolSpec,
};
use support::{
    fake_provider::{fixture, spawn, Script, Wire},
    TestResult,
};

const FIXTURE: &str = "openai-client-tool-search.2.chunks.txt";

fn settings() -> HttpSettings {
    HttpSettings {
        backoff: Duration::from_millis(10),
        ..Default::default()
    }
}

fn provider(base_url: String) -> Result<OpenAiResponses, ProviderError> {
    OpenAiResponses::new(base_url, Some("test-key".into()), "gpt-test", settings())
}

fn request() -> ModelRequest {
    ModelRequest {
        system: "You are a booking assistant.".into(),
        messages: vec![
            ModelMessage::User {
                text: "Weather in Hà Nội?".into(),
            },
            ModelMessage::Assistant {
                text: "Let me check.".into(),
                calls: vec![ProposedCall {
                    id: "call_abc".into(),
                    name: "getWeather".into(),
                    arguments: r#"{"city":"Hà Nội"}"#.into(),
                }],
            },
            ModelMessage::ToolResult {
                call_id: "call_abc".into(),
                name: "getWeather".into(),
                content: r#"{"ok":true,"tempC":24}"#.into(),
                is_error: false,
            },
            ModelMessage::Assistant {
                text: String::new(),
                calls: vec![ProposedCall {
                    id: "call_def".into(),
                    name: "createBooking".into(),
                    arguments: "{}".into(),
                }],
            },
            ModelMessage::ToolResult {
                call_id: "call_def".into(),
                name: "createBooking".into(),
                content:
                    r#"{"ok":false,"error":{"code":"invalid","message":"x","retryable":false}}"#
                        .into(),
                is_error: true,
            },
        ],
        tools: vec![ToolSpec {
            name: "getWeather".into(),
            description: "The weather in a city.".into(),
            parameters: json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}),
        }]
        .into(),
    }
}

async fn collect(
    stream: server::model::TurnStream,
) -> Result<Vec<Result<ModelEvent, ProviderError>>, &'static str> {
    tokio::time::timeout(Duration::from_secs(20), stream.collect::<Vec<_>>())
        .await
        .map_err(|_| "the turn stream did not end")
}

/// What the fixture itself says the turn contains.
#[derive(Debug, Default)]
struct Expected {
    /// call_id → name, in order.
    calls: Vec<(String, String)>,
    /// call_id → argument text reassembled from the deltas.
    from_deltas: BTreeMap<String, String>,
    /// call_id → `arguments` of output_item.done.
    from_done: BTreeMap<String, String>,
    text: String,
    finish: Option<FinishReason>,
}

fn expected(lines: &[String]) -> Result<Expected, Box<dyn std::error::Error + Send + Sync>> {
    let mut out = Expected::default();
    let mut by_item: BTreeMap<String, String> = BTreeMap::new();
    for line in lines {
        let v: Value = serde_json::from_str(line)?;
        let item = &v["item"];
        match v["type"].as_str().ok_or("an event has a type")? {
            "response.output_item.added" if item["type"] == "function_call" => {
                let call_id = item["call_id"].as_str().ok_or("a call has a call_id")?;
                let item_id = item["id"].as_str().ok_or("an item has an id")?;
                by_item.insert(item_id.into(), call_id.to_owned());
                let name = item["name"].as_str().ok_or("a call has a name")?;
                out.calls.push((call_id.to_owned(), name.into()));
            }
            "response.function_call_arguments.delta" => {
                let item_id = v["item_id"].as_str().ok_or("a delta has an item_id")?;
                let call_id = by_item
                    .get(item_id)
                    .ok_or("an argument delta belongs to an added call")?;
                out.from_deltas
                    .entry(call_id.clone())
                    .or_default()
                    .push_str(v["delta"].as_str().ok_or("a delta has text")?);
            }
            "response.output_item.done" if item["type"] == "function_call" => {
                out.from_done.insert(
                    item["call_id"]
                        .as_str()
                        .ok_or("a call has a call_id")?
                        .into(),
                    item["arguments"]
                        .as_str()
                        .ok_or("a done call has its arguments")?
                        .into(),
                );
            }
            "response.output_text.delta" => out
                .text
                .push_str(v["delta"].as_str().ok_or("a text delta has text")?),
            "response.completed" => {
                out.finish = Some(if out.calls.is_empty() {
                    FinishReason::Stop
                } else {
                    FinishReason::ToolCalls
                })
            }
            "response.incomplete" => out.finish = Some(FinishReason::Length),
            _ => {}
        }
    }
    Ok(out)
}

#[tokio::test]
async fn replays_the_recorded_stream() -> TestResult {
    let lines = fixture(FIXTURE)?;
    let want = expected(&lines)?;
    assert!(!want.calls.is_empty(), "the fixture has a function call");
    assert!(want.finish.is_some(), "the fixture ends the turn");

    let fake = spawn(vec![Script::Stream {
        events: lines.clone(),
        wire: Wire::NamedEvents,
        cut_after: None,
    }])
    .await?;
    let model = provider(fake.base_url("/v1"))?;
    let items = collect(model.stream_turn(request())).await?;
    let events: Vec<ModelEvent> = items
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("an error in the recorded stream: {e}"))?;

    // Exactly one Finish, last, with the fixture's reason.
    assert_eq!(
        events.last(),
        Some(&ModelEvent::Finish(
            want.finish.ok_or("the fixture ends the turn")?
        ))
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, ModelEvent::Finish(_)))
            .count(),
        1
    );

    // One start per function call, with the call_id (not the item id) and the name.
    let starts: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolCallStart { id, name } => Some((id.clone(), name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(starts, want.calls);
    for (id, _) in &starts {
        assert!(id.starts_with("call_"), "{id} is a call id, not an item id");
    }

    // Argument text per call equals both the deltas and the final item's arguments.
    let mut arguments: BTreeMap<String, String> = BTreeMap::new();
    for event in &events {
        if let ModelEvent::ToolCallDelta { id, delta } = event {
            assert!(!delta.is_empty(), "no empty deltas");
            arguments.entry(id.clone()).or_default().push_str(delta);
        }
    }
    assert_eq!(arguments, want.from_deltas);
    assert_eq!(arguments, want.from_done);
    for text in arguments.values() {
        serde_json::from_str::<Value>(text)
            .map_err(|e| format!("reassembled arguments are not JSON: {e}: {text}"))?;
    }

    // Each call: start, deltas, one end, in that order.
    for (id, _) in &want.calls {
        let positions = |pred: &dyn Fn(&ModelEvent) -> bool| -> Vec<usize> {
            events
                .iter()
                .enumerate()
                .filter(|(_, e)| pred(e))
                .map(|(i, _)| i)
                .collect()
        };
        let start = positions(&|e| matches!(e, ModelEvent::ToolCallStart { id: i, .. } if i == id));
        let deltas =
            positions(&|e| matches!(e, ModelEvent::ToolCallDelta { id: i, .. } if i == id));
        let ends = positions(&|e| matches!(e, ModelEvent::ToolCallEnd { id: i } if i == id));
        assert_eq!(start.len(), 1);
        assert_eq!(ends.len(), 1, "one end per call");
        assert!(deltas.iter().all(|d| *d > start[0] && *d < ends[0]));
    }

    // The text, concatenated.
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, want.text);
    Ok(())
}

#[tokio::test]
async fn sends_the_request_body_and_key() -> TestResult {
    let fake = spawn(vec![Script::Stream {
        events: fixture(FIXTURE)?,
        wire: Wire::NamedEvents,
        cut_after: None,
    }])
    .await?;
    let model = provider(fake.base_url("/v1"))?;
    let body = model.request_body(&request());

    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["stream"], true);
    assert_eq!(body["store"], false);
    assert_eq!(body["instructions"], "You are a booking assistant.");
    assert_eq!(
        body["tools"],
        json!([{
            "type": "function",
            "name": "getWeather",
            "description": "The weather in a city.",
            "parameters": {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},
        }])
    );
    assert_eq!(
        body["input"],
        json!([
            {"role": "user", "content": [{"type": "input_text", "text": "Weather in Hà Nội?"}]},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Let me check."}]},
            {"type": "function_call", "call_id": "call_abc", "name": "getWeather", "arguments": "{\"city\":\"Hà Nội\"}"},
            {"type": "function_call_output", "call_id": "call_abc", "output": "{\"ok\":true,\"tempC\":24}"},
            {"type": "function_call", "call_id": "call_def", "name": "createBooking", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_def",
             "output": "{\"ok\":false,\"error\":{\"code\":\"invalid\",\"message\":\"x\",\"retryable\":false}}"},
        ])
    );

    let items = collect(model.stream_turn(request())).await?;
    assert!(items.iter().all(Result::is_ok));
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/responses");
    assert_eq!(requests[0].body, body);
    assert_eq!(
        requests[0]
            .headers
            .get("authorization")
            .ok_or("the request has an authorization header")?,
        "Bearer test-key"
    );
    Ok(())
}

#[tokio::test]
async fn no_key_sends_no_authorization() -> TestResult {
    let fake = spawn(vec![Script::Stream {
        events: fixture(FIXTURE)?,
        wire: Wire::NamedEvents,
        cut_after: None,
    }])
    .await?;
    let model = OpenAiResponses::new(fake.base_url("/v1/"), None, "m", settings())?;
    let items = collect(model.stream_turn(request())).await?;
    assert!(items.iter().all(Result::is_ok));
    let requests = fake.requests();
    assert_eq!(requests[0].path, "/v1/responses");
    assert!(requests[0].headers.get("authorization").is_none());
    Ok(())
}

#[tokio::test]
async fn a_cut_stream_is_an_error_without_finish() -> TestResult {
    let lines = fixture(FIXTURE)?;
    let deltas: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("\"response.function_call_arguments.delta\""))
        .map(|(i, _)| i)
        .collect();
    assert!(deltas.len() >= 2);
    let cut = deltas[deltas.len() / 2] + 1;
    let fake = spawn(vec![Script::Stream {
        events: lines,
        wire: Wire::NamedEvents,
        cut_after: Some(cut),
    }])
    .await?;
    let items = collect(provider(fake.base_url("/v1"))?.stream_turn(request())).await?;
    let (last, rest) = items.split_last().ok_or("the stream yields something")?;
    let error = last.as_ref().err().ok_or("the stream ends with an error")?;
    assert_eq!(error.message, "stream ended before the turn finished");
    assert!(rest.iter().all(Result::is_ok));
    assert!(rest
        .iter()
        .any(|e| matches!(e, Ok(ModelEvent::ToolCallDelta { .. }))));
    assert!(!rest.iter().any(|e| matches!(
        e,
        Ok(ModelEvent::Finish(_)) | Ok(ModelEvent::ToolCallEnd { .. })
    )));
    Ok(())
}

/// A `response.failed` in the API's own shape, after some text.
fn failed_stream() -> Vec<String> {
    let response = |status: &str, error: Value| {
        json!({
            "id": "resp_failed_1", "object": "response", "created_at": 1772840758,
            "status": status, "error": error, "incomplete_details": null,
            "model": "gpt-test", "output": [], "usage": null,
        })
    };
    vec![
        json!({"type": "response.created", "response": response("in_progress", Value::Null), "sequence_number": 0}),
        json!({"type": "response.output_item.added", "output_index": 0, "sequence_number": 1,
               "item": {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
               "content_index": 0, "delta": "Đang", "sequence_number": 2}),
        json!({"type": "response.failed", "sequence_number": 3, "response": response(
            "failed",
            json!({"code": "server_error", "message": "The model produced invalid content."}),
        )}),
    ]
    .into_iter()
    .map(|v| v.to_string())
    .collect()
}

#[tokio::test]
async fn a_failed_response_is_an_error() -> TestResult {
    let fake = spawn(vec![Script::Stream {
        events: failed_stream(),
        wire: Wire::NamedEvents,
        cut_after: None,
    }])
    .await?;
    let items = collect(provider(fake.base_url("/v1"))?.stream_turn(request())).await?;
    assert_eq!(items[0], Ok(ModelEvent::TextDelta("Đang".into())));
    let (last, rest) = items.split_last().ok_or("the stream yields something")?;
    let error = last.as_ref().err().ok_or("the stream ends with an error")?;
    assert!(error.message.contains("server_error"), "{}", error.message);
    assert!(error
        .message
        .contains("The model produced invalid content."));
    assert!(!error.message.contains("test-key"));
    assert!(!rest.iter().any(|e| matches!(e, Ok(ModelEvent::Finish(_)))));
    Ok(())
}

#[tokio::test]
async fn an_error_event_is_an_error() -> TestResult {
    let events = vec![
        json!({"type": "error", "code": "rate_limit_exceeded", "message": "Slow down.",
               "param": null, "sequence_number": 1})
        .to_string(),
    ];
    let fake = spawn(vec![Script::Stream {
        events,
        wire: Wire::NamedEvents,
        cut_after: None,
    }])
    .await?;
    let items = collect(provider(fake.base_url("/v1"))?.stream_turn(request())).await?;
    assert_eq!(items.len(), 1);
    let error = items[0].as_ref().err().ok_or("the only item is an error")?;
    assert!(error.message.contains("Slow down."), "{}", error.message);
    Ok(())
}

#[tokio::test]
async fn an_error_status_keeps_the_key_out_of_the_message() -> TestResult {
    let fake = spawn(vec![Script::Status {
        status: 401,
        body:
            r#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error"}}"#
                .into(),
        retry_after: None,
    }])
    .await?;
    let items = collect(provider(fake.base_url("/v1"))?.stream_turn(request())).await?;
    assert_eq!(items.len(), 1);
    let error = items[0].as_ref().err().ok_or("the only item is an error")?;
    assert!(error.message.contains("401"), "{}", error.message);
    assert!(!error.message.contains("test-key"));
    assert!(!format!("{:?}", provider(fake.base_url("/v1"))?).contains("test-key"));
    Ok(())
}

fn sse(lines: Vec<Value>) -> impl futures::Stream<Item = Result<SseEvent, ProviderError>> {
    futures::stream::iter(lines.into_iter().map(|v| {
        Ok(SseEvent {
            event: v["type"].as_str().unwrap_or("message").to_owned(),
            data: v.to_string(),
        })
    }))
}

#[tokio::test]
async fn arguments_on_the_added_item_are_emitted_once() -> TestResult {
    let item = json!({"id": "fc_1", "type": "function_call", "status": "completed",
                      "call_id": "call_1", "name": "getWeather", "arguments": "{\"city\":\"Huế\"}"});
    let items = collect(decode(sse(vec![
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": {"status": "completed"}}),
    ])))
    .await?;
    let events = items.into_iter().collect::<Result<Vec<_>, _>>()?;
    assert_eq!(
        events,
        vec![
            ModelEvent::ToolCallStart {
                id: "call_1".into(),
                name: "getWeather".into()
            },
            ModelEvent::ToolCallDelta {
                id: "call_1".into(),
                delta: "{\"city\":\"Huế\"}".into()
            },
            ModelEvent::ToolCallEnd {
                id: "call_1".into()
            },
            ModelEvent::Finish(FinishReason::ToolCalls),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn text_and_reasoning_then_incomplete() -> TestResult {
    let items = collect(decode(sse(vec![
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": {"id": "rs_1", "type": "reasoning", "summary": []}}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "delta": "hmm"}),
        json!({"type": "response.output_item.done", "output_index": 0,
               "item": {"id": "rs_1", "type": "reasoning", "summary": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Xin "}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "chào"}),
        json!({"type": "response.incomplete", "response": {"status": "incomplete",
               "incomplete_details": {"reason": "max_output_tokens"}}}),
    ])))
    .await?;
    let events = items.into_iter().collect::<Result<Vec<_>, _>>()?;
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta("Xin ".into()),
            ModelEvent::TextDelta("chào".into()),
            ModelEvent::Finish(FinishReason::Length),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn plain_text_completes_with_stop() -> TestResult {
    let items = collect(decode(sse(vec![
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Chào"}),
        json!({"type": "response.completed", "response": {"status": "completed"}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "ignored"}),
    ])))
    .await?;
    let events = items.into_iter().collect::<Result<Vec<_>, _>>()?;
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta("Chào".into()),
            ModelEvent::Finish(FinishReason::Stop),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn garbage_is_an_error_not_a_panic() -> TestResult {
    let items = collect(decode(futures::stream::iter(vec![Ok(SseEvent {
        event: "response.output_text.delta".into(),
        data: "{not json".into(),
    })])))
    .await?;
    assert_eq!(items.len(), 1);
    assert!(items[0].is_err());
    Ok(())
}

//! The Anthropic Messages adapter against recorded real streams, replayed over a socket.

use crate::support;

use std::{collections::BTreeMap, time::Duration};

use futures::StreamExt;
use serde_json::{json, Value};
use server::model::{
    anthropic::{decode, Anthropic},
    http::{HttpSettings, SseEvent},
    FinishReason, ModelEvent, ModelMessage, ModelProvider, ModelRequest, ProposedCall,
    ProviderError, ToolSpec,
};
use support::{
    fake_provider::{fixture, spawn, FakeProvider, Script, Wire},
    TestResult,
};

const KEY: &str = "sk-ant-test-key-0123456789";

fn settings() -> HttpSettings {
    HttpSettings {
        backoff: Duration::from_millis(10),
        ..Default::default()
    }
}

fn adapter(fake: &FakeProvider) -> Result<Anthropic, ProviderError> {
    Anthropic::new(fake.base_url(""), KEY.to_owned(), "claude-test", settings())
}

fn stream(events: Vec<String>, cut_after: Option<usize>) -> Script {
    Script::Stream {
        events,
        wire: Wire::NamedEvents,
        cut_after,
    }
}

fn simple_request() -> ModelRequest {
    ModelRequest {
        system: "You are a test.".into(),
        messages: vec![ModelMessage::User { text: "hi".into() }],
        tools: Vec::new().into(),
    }
}

async fn collect(
    provider: &Anthropic,
    request: ModelRequest,
) -> Result<Vec<Result<ModelEvent, ProviderError>>, &'static str> {
    tokio::time::timeout(
        Duration::from_secs(20),
        provider.stream_turn(request).collect::<Vec<_>>(),
    )
    .await
    .map_err(|_| "the turn stream did not end")
}

/// What a fixture holds, computed straight from its lines.
#[derive(Debug, Default, PartialEq)]
struct Turn {
    /// id → (name, argument text), for every tool call.
    calls: BTreeMap<String, (String, String)>,
    text: String,
    finish: Option<FinishReason>,
}

fn expected(lines: &[String]) -> Result<(Turn, usize), Box<dyn std::error::Error + Send + Sync>> {
    let mut by_index: BTreeMap<u64, (String, String, String)> = BTreeMap::new();
    let mut turn = Turn::default();
    for line in lines {
        let v: Value = serde_json::from_str(line)?;
        match v["type"].as_str().ok_or("an event has a type")? {
            "content_block_start" if v["content_block"]["type"] == "tool_use" => {
                by_index.insert(
                    v["index"].as_u64().ok_or("a block has an index")?,
                    (
                        v["content_block"]["id"]
                            .as_str()
                            .ok_or("a tool_use block has an id")?
                            .to_owned(),
                        v["content_block"]["name"]
                            .as_str()
                            .ok_or("a tool_use block has a name")?
                            .to_owned(),
                        String::new(),
                    ),
                );
            }
            "content_block_delta" => {
                match v["delta"]["type"].as_str().ok_or("a delta has a type")? {
                    "input_json_delta" => by_index
                        .get_mut(&v["index"].as_u64().ok_or("a delta has an index")?)
                        .ok_or("an argument delta belongs to a tool_use block")?
                        .2
                        .push_str(
                            v["delta"]["partial_json"]
                                .as_str()
                                .ok_or("an argument delta has partial_json")?,
                        ),
                    "text_delta" => turn
                        .text
                        .push_str(v["delta"]["text"].as_str().ok_or("a text delta has text")?),
                    _ => {}
                }
            }
            "message_delta" => {
                turn.finish = Some(
                    match v["delta"]["stop_reason"]
                        .as_str()
                        .ok_or("message_delta has a stop_reason")?
                    {
                        "tool_use" => FinishReason::ToolCalls,
                        "end_turn" | "stop_sequence" => FinishReason::Stop,
                        "max_tokens" => FinishReason::Length,
                        _ => FinishReason::Other,
                    },
                )
            }
            _ => {}
        }
    }
    let blocks = by_index.len();
    for (_, (id, name, args)) in by_index {
        turn.calls.insert(id, (name, args));
    }
    Ok((turn, blocks))
}

/// Folds decoded events into a turn; fails on protocol violations (a delta or end for a
/// call never started, a second start, events after Finish, any error).
fn fold(
    events: &[Result<ModelEvent, ProviderError>],
) -> Result<(Turn, usize), Box<dyn std::error::Error + Send + Sync>> {
    let mut turn = Turn::default();
    let mut starts = 0;
    let mut ended = BTreeMap::new();
    for event in events {
        assert!(turn.finish.is_none(), "event after Finish: {event:?}");
        match event.as_ref().map_err(Clone::clone)? {
            ModelEvent::TextDelta(t) => {
                assert!(!t.is_empty());
                turn.text.push_str(t)
            }
            ModelEvent::ToolCallStart { id, name } => {
                starts += 1;
                let old = turn.calls.insert(id.clone(), (name.clone(), String::new()));
                assert!(old.is_none(), "second start for {id}");
            }
            ModelEvent::ToolCallDelta { id, delta } => {
                assert!(!delta.is_empty());
                assert!(!ended.contains_key(id), "delta after end for {id}");
                turn.calls
                    .get_mut(id)
                    .ok_or("delta before start")?
                    .1
                    .push_str(delta)
            }
            ModelEvent::ToolCallEnd { id } => {
                assert!(turn.calls.contains_key(id), "end before start");
                assert!(
                    ended.insert(id.clone(), ()).is_none(),
                    "second end for {id}"
                );
            }
            ModelEvent::Finish(reason) => turn.finish = Some(*reason),
        }
    }
    assert_eq!(ended.len(), turn.calls.len(), "every call must end");
    Ok((turn, starts))
}

#[tokio::test]
async fn replays_recorded_streams_over_a_socket() -> TestResult {
    for name in [
        "anthropic-json-tool.1.chunks.txt",
        "anthropic-tool-no-args.chunks.txt",
    ] {
        let lines = fixture(name)?;
        let (want, blocks) = expected(&lines)?;
        assert!(blocks >= 1, "{name} has tool blocks");
        let fake = spawn(vec![stream(lines, None)]).await?;
        let events = collect(&adapter(&fake)?, simple_request()).await?;
        let (got, starts) = fold(&events)?;
        assert_eq!(got, want, "{name}");
        assert_eq!(starts, blocks, "{name}: one ToolCallStart per tool block");
        assert!(matches!(events.last(), Some(Ok(ModelEvent::Finish(_)))));
        assert_eq!(fake.requests().len(), 1);
    }
    Ok(())
}

#[tokio::test]
async fn recorded_streams_have_the_expected_content() -> TestResult {
    // Guards the independent computation above against a fixture that changed under it.
    let (json_tool, _) = expected(&fixture("anthropic-json-tool.1.chunks.txt")?)?;
    let (id, (name, args)) = json_tool
        .calls
        .iter()
        .next()
        .ok_or("the fixture has a tool call")?;
    assert_eq!(id, "toolu_01KFbKqPYSuAKujiL6mTfzYA");
    assert_eq!(name, "json");
    let args: Value = serde_json::from_str(args)?;
    assert_eq!(args["elements"][0]["temperature"], 58);
    assert_eq!(json_tool.finish, Some(FinishReason::ToolCalls));

    let (no_args, _) = expected(&fixture("anthropic-tool-no-args.chunks.txt")?)?;
    assert_eq!(no_args.text, "I'll update the issue list for you.");
    let (name, args) = &no_args.calls["toolu_01QE1WLsSVp5hy5Q3GmGTmjP"];
    assert_eq!((name.as_str(), args.as_str()), ("updateIssueList", ""));
    Ok(())
}

fn history_request() -> ModelRequest {
    ModelRequest {
        system: "You book tables.".into(),
        messages: vec![
            ModelMessage::User {
                text: "Weather in Hà Nội, and find phở?".into(),
            },
            ModelMessage::Assistant {
                text: "Let me check.".into(),
                calls: vec![
                    ProposedCall {
                        id: "toolu_a".into(),
                        name: "getWeather".into(),
                        arguments: r#"{"city":"Hà Nội"}"#.into(),
                    },
                    ProposedCall {
                        id: "toolu_b".into(),
                        name: "searchRestaurants".into(),
                        arguments: r#"{"query": "#.into(),
                    },
                ],
            },
            ModelMessage::ToolResult {
                call_id: "toolu_a".into(),
                name: "getWeather".into(),
                content: r#"{"ok":true,"tempC":24}"#.into(),
                is_error: false,
            },
            ModelMessage::ToolResult {
                call_id: "toolu_b".into(),
                name: "searchRestaurants".into(),
                content: r#"{"ok":false,"error":{"code":"invalid_input","message":"bad","retryable":false}}"#
                    .into(),
                is_error: true,
            },
            ModelMessage::User {
                text: "Also tomorrow?".into(),
            },
        ],
        tools: vec![ToolSpec {
            name: "getWeather".into(),
            description: "Weather for a city.".into(),
            parameters: json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}),
        }]
        .into(),
    }
}

#[tokio::test]
async fn request_body_and_headers() -> TestResult {
    let fake = spawn(vec![stream(
        fixture("anthropic-json-tool.1.chunks.txt")?,
        None,
    )])
    .await?;
    let provider = adapter(&fake)?;
    let request = history_request();
    let body = provider.request_body(&request);

    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"], "You book tables.");
    assert_eq!(
        body["tools"],
        json!([{
            "name": "getWeather",
            "description": "Weather for a city.",
            "input_schema": {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},
        }])
    );
    let messages = body["messages"].as_array().ok_or("the body has messages")?;
    let roles = messages
        .iter()
        .map(|m| m["role"].as_str().ok_or("every message has a role"))
        .collect::<Result<Vec<_>, _>>()?;
    assert_eq!(roles, ["user", "assistant", "user"], "roles alternate");
    assert_eq!(
        messages[0]["content"],
        json!([{"type":"text","text":"Weather in Hà Nội, and find phở?"}])
    );
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type":"text","text":"Let me check."},
            {"type":"tool_use","id":"toolu_a","name":"getWeather","input":{"city":"Hà Nội"}},
            {"type":"tool_use","id":"toolu_b","name":"searchRestaurants","input":{}},
        ])
    );
    assert_eq!(
        messages[2]["content"],
        json!([
            {"type":"tool_result","tool_use_id":"toolu_a","content":r#"{"ok":true,"tempC":24}"#,"is_error":false},
            {"type":"tool_result","tool_use_id":"toolu_b",
             "content":r#"{"ok":false,"error":{"code":"invalid_input","message":"bad","retryable":false}}"#,
             "is_error":true},
            {"type":"text","text":"Also tomorrow?"},
        ])
    );

    // Over the socket: the same body, the right path and headers.
    let events = collect(&provider, request).await?;
    assert!(events.iter().all(Result::is_ok));
    let recorded = fake.requests();
    assert_eq!(recorded.len(), 1);
    let recorded = &recorded[0];
    assert_eq!(recorded.path, "/v1/messages");
    assert_eq!(recorded.body, body);
    assert_eq!(recorded.headers["x-api-key"], KEY);
    assert_eq!(recorded.headers["anthropic-version"], "2023-06-01");
    assert!(recorded.headers["content-type"]
        .to_str()?
        .starts_with("application/json"));
    Ok(())
}

#[tokio::test]
async fn assistant_turn_without_text_and_empty_tools() -> TestResult {
    let fake = spawn(vec![stream(
        fixture("anthropic-json-tool.1.chunks.txt")?,
        None,
    )])
    .await?;
    let body = adapter(&fake)?.request_body(&ModelRequest {
        system: String::new(),
        messages: vec![
            ModelMessage::User { text: "go".into() },
            ModelMessage::Assistant {
                text: String::new(),
                calls: vec![ProposedCall {
                    id: "t1".into(),
                    name: "x".into(),
                    arguments: String::new(),
                }],
            },
            ModelMessage::ToolResult {
                call_id: "t1".into(),
                name: "x".into(),
                content: "{}".into(),
                is_error: false,
            },
        ],
        tools: Vec::new().into(),
    });
    assert_eq!(
        body["messages"][1]["content"],
        json!([{"type":"tool_use","id":"t1","name":"x","input":{}}])
    );
    assert_eq!(
        body["messages"]
            .as_array()
            .ok_or("the body has messages")?
            .len(),
        3
    );
    Ok(())
}

#[tokio::test]
async fn a_cut_stream_is_an_error() -> TestResult {
    let lines = fixture("anthropic-json-tool.1.chunks.txt")?;
    // Cut right after the first non-empty argument piece, before the rest arrives.
    let parsed = lines
        .iter()
        .map(|l| serde_json::from_str::<Value>(l))
        .collect::<Result<Vec<_>, _>>()?;
    let first_piece = parsed
        .iter()
        .position(|v| v["delta"]["type"] == "input_json_delta" && v["delta"]["partial_json"] != "")
        .ok_or("the fixture has a non-empty argument piece")?;
    let fake = spawn(vec![stream(lines, Some(first_piece + 1))]).await?;
    let events = collect(&adapter(&fake)?, simple_request()).await?;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Ok(ModelEvent::ToolCallDelta { .. }))),
        "the part before the cut still streams: {events:?}"
    );
    assert!(!events
        .iter()
        .any(|e| matches!(e, Ok(ModelEvent::Finish(_)))));
    let last = events
        .last()
        .and_then(|e| e.as_ref().err())
        .ok_or("a cut stream ends with an error")?;
    assert!(last.message.contains("before the turn finished"), "{last}");

    // Cut right before message_stop: everything arrived but the end. Still an error.
    let lines = fixture("anthropic-json-tool.1.chunks.txt")?;
    let n = lines.len();
    let fake = spawn(vec![stream(lines, Some(n - 1))]).await?;
    let events = collect(&adapter(&fake)?, simple_request()).await?;
    assert!(!events
        .iter()
        .any(|e| matches!(e, Ok(ModelEvent::Finish(_)))));
    assert!(events.last().is_some_and(Result::is_err), "{events:?}");
    Ok(())
}

#[tokio::test]
async fn an_error_event_is_an_error() -> TestResult {
    let lines = fixture("anthropic-json-tool.1.chunks.txt")?;
    let events = vec![
        lines[0].clone(),
        lines[1].clone(),
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.to_owned(),
        // Nothing after an error is read.
        lines[lines.len() - 1].clone(),
    ];
    let fake = spawn(vec![stream(events, None)]).await?;
    let events = collect(&adapter(&fake)?, simple_request()).await?;
    assert!(!events
        .iter()
        .any(|e| matches!(e, Ok(ModelEvent::Finish(_)))));
    assert_eq!(events.iter().filter(|e| e.is_err()).count(), 1);
    let error = events
        .last()
        .and_then(|e| e.as_ref().err())
        .ok_or("the stream ends with the error event")?;
    assert!(error.message.contains("overloaded_error"), "{error}");
    assert!(error.message.contains("Overloaded"), "{error}");
    Ok(())
}

#[tokio::test]
async fn http_errors_are_retried_then_reported_without_the_key() -> TestResult {
    // A 529 (overloaded) before anything streamed is retried.
    let fake = spawn(vec![
        Script::Status {
            status: 529,
            body: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
                .into(),
            retry_after: None,
        },
        stream(fixture("anthropic-tool-no-args.chunks.txt")?, None),
    ])
    .await?;
    let events = collect(&adapter(&fake)?, simple_request()).await?;
    assert!(matches!(
        events.last(),
        Some(Ok(ModelEvent::Finish(FinishReason::ToolCalls)))
    ));
    assert_eq!(fake.requests().len(), 2);

    // A 401 is final, and its error never carries the key.
    let fake = spawn(vec![Script::Status {
        status: 401,
        body: r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
            .into(),
        retry_after: None,
    }])
    .await?;
    let events = collect(&adapter(&fake)?, simple_request()).await?;
    assert_eq!(events.len(), 1);
    let error = events[0].as_ref().err().ok_or("a 401 is an error")?;
    assert!(error.message.contains("401"), "{error}");
    assert!(!error.message.contains(KEY));
    assert_eq!(fake.requests().len(), 1);
    assert!(!format!("{:?}", adapter(&fake)?).contains(KEY));
    Ok(())
}

fn sse(
    lines: &[&str],
) -> Result<
    impl futures::Stream<Item = Result<SseEvent, ProviderError>> + Send + 'static,
    Box<dyn std::error::Error + Send + Sync>,
> {
    let events = lines
        .iter()
        .map(
            |l| -> Result<SseEvent, Box<dyn std::error::Error + Send + Sync>> {
                let v: Value = serde_json::from_str(l)?;
                Ok(SseEvent {
                    event: v["type"].as_str().ok_or("an event has a type")?.to_owned(),
                    data: (*l).to_owned(),
                })
            },
        )
        .collect::<Result<Vec<_>, _>>()?;
    Ok(futures::stream::iter(events.into_iter().map(Ok)))
}

#[tokio::test]
async fn decode_handles_whole_input_thinking_and_end_turn() -> TestResult {
    let events: Vec<_> = decode(sse(&[
        r#"{"type":"message_start","message":{"id":"m","content":[]}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"getWeather","input":{"city":"Huế"}}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":""}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"ok"}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#,
        r#"{"type":"message_stop"}"#,
    ])?)
    .collect()
    .await;
    let events = events.into_iter().collect::<Result<Vec<_>, _>>()?;
    assert_eq!(
        events,
        vec![
            ModelEvent::ToolCallStart {
                id: "t1".into(),
                name: "getWeather".into()
            },
            ModelEvent::ToolCallDelta {
                id: "t1".into(),
                delta: r#"{"city":"Huế"}"#.into()
            },
            ModelEvent::ToolCallEnd { id: "t1".into() },
            ModelEvent::TextDelta("ok".into()),
            ModelEvent::Finish(FinishReason::Stop),
        ]
    );

    let reason = |stop: &'static str| async move {
        let line = format!(r#"{{"type":"message_delta","delta":{{"stop_reason":"{stop}"}}}}"#);
        let events: Vec<_> = decode(sse(&[&line, r#"{"type":"message_stop"}"#])?)
            .collect()
            .await;
        events
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .map_err(Box::<dyn std::error::Error + Send + Sync>::from)
    };
    assert_eq!(
        reason("max_tokens").await?,
        [ModelEvent::Finish(FinishReason::Length)]
    );
    assert_eq!(
        reason("stop_sequence").await?,
        [ModelEvent::Finish(FinishReason::Stop)]
    );
    assert_eq!(
        reason("refusal").await?,
        [ModelEvent::Finish(FinishReason::Other)]
    );

    // Garbage data is an error, not a panic.
    let events: Vec<_> = decode(futures::stream::iter(vec![Ok(SseEvent {
        event: "content_block_delta".into(),
        data: "{not json".into(),
    })]))
    .collect()
    .await;
    assert_eq!(events.len(), 1);
    assert!(events[0].is_err());
    Ok(())
}

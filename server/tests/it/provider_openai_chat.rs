//! The OpenAI Chat Completions adapter against recorded real streams served over a real
//! socket, its request bodies, its decoder on edge cases, and the whole server running on
//! it through a fake provider.

use crate::support;

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use futures::StreamExt;
use serde_json::{json, Value};
use server::{
    agent::AgentConfig,
    model::{
        http::{HttpSettings, SseEvent},
        openai_chat::{decode, OpenAiChat},
        FinishReason, ModelEvent, ModelMessage, ModelProvider, ModelRequest, ProposedCall,
        ProviderError, SharedProvider, ToolSpec,
    },
};
use support::{
    fake_provider::{fixture, spawn, FakeProvider, Script, Wire},
    Reply, TestResult,
};

const KEY: &str = "test-key";

const CHAT_FIXTURES: [&str; 4] = [
    "deepseek-tool-call.chunks.txt",
    "groq-tool-call.chunks.txt",
    "mistral-incremental-tool-call.chunks.txt",
    "xai-tool-call.chunks.txt",
];

fn settings() -> HttpSettings {
    HttpSettings {
        backoff: Duration::from_millis(10),
        ..Default::default()
    }
}

fn adapter(fake: &FakeProvider, key: Option<&str>) -> Result<OpenAiChat, ProviderError> {
    OpenAiChat::new(
        fake.base_url("/v1"),
        key.map(str::to_owned),
        "test-model",
        settings(),
    )
}

fn weather_tool() -> ToolSpec {
    ToolSpec {
        name: "getWeather".into(),
        description: "Weather forecast for a city in Vietnam.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        }),
    }
}

fn simple_request() -> ModelRequest {
    ModelRequest {
        system: "You are a test.".into(),
        messages: vec![ModelMessage::User {
            text: "Weather in Hà Nội?".into(),
        }],
        tools: vec![weather_tool()].into(),
    }
}

fn history_request() -> ModelRequest {
    ModelRequest {
        system: "You are a test.".into(),
        messages: vec![
            ModelMessage::User {
                text: "Weather in Hà Nội?".into(),
            },
            ModelMessage::Assistant {
                text: String::new(),
                calls: vec![ProposedCall {
                    id: "call_1".into(),
                    name: "getWeather".into(),
                    arguments: r#"{"city":"Hà Nội"}"#.into(),
                }],
            },
            ModelMessage::ToolResult {
                call_id: "call_1".into(),
                name: "getWeather".into(),
                content: r#"{"ok":true,"tempC":31}"#.into(),
                is_error: false,
            },
            ModelMessage::Assistant {
                text: "It is 31 °C.".into(),
                calls: vec![],
            },
            ModelMessage::User {
                text: "And tomorrow?".into(),
            },
        ],
        tools: vec![weather_tool()].into(),
    }
}

async fn collect(
    provider: &OpenAiChat,
    request: ModelRequest,
) -> Vec<Result<ModelEvent, ProviderError>> {
    provider.stream_turn(request).collect().await
}

fn ok_events(items: Vec<Result<ModelEvent, ProviderError>>) -> Result<Vec<ModelEvent>, String> {
    items
        .into_iter()
        .map(|item| item.map_err(|e| format!("unexpected error: {e}")))
        .collect()
}

// ---------------------------------------------------------------------------------------
// What a fixture holds, computed from its JSON lines independently of the adapter.

#[derive(Debug, Default)]
struct Recorded {
    /// index -> (first non-empty id, first non-empty name, concatenated arguments)
    calls: BTreeMap<u64, (String, String, String)>,
    content: String,
    reasoning: String,
    finish: Option<String>,
}

fn recorded(lines: &[String]) -> Result<Recorded, Box<dyn std::error::Error + Send + Sync>> {
    let mut out = Recorded::default();
    for line in lines {
        let chunk: Value = serde_json::from_str(line)?;
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str() {
                out.content.push_str(text);
            }
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta[key].as_str() {
                    out.reasoning.push_str(text);
                }
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"]
                    .as_u64()
                    .ok_or("a tool call piece has an index")?;
                let entry = out.calls.entry(index).or_default();
                if let Some(id) = call["id"].as_str().filter(|s| !s.is_empty()) {
                    if entry.0.is_empty() {
                        entry.0 = id.to_owned();
                    }
                }
                if let Some(name) = call["function"]["name"].as_str().filter(|s| !s.is_empty()) {
                    if entry.1.is_empty() {
                        entry.1 = name.to_owned();
                    }
                }
                if let Some(args) = call["function"]["arguments"].as_str() {
                    entry.2.push_str(args);
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                out.finish = Some(reason.to_owned());
            }
        }
    }
    Ok(out)
}

/// The adapter's events folded the same way: id -> (name, start count, arguments, ended).
#[derive(Debug, Default)]
struct Decoded {
    order: Vec<String>,
    calls: BTreeMap<String, (String, usize, String, bool)>,
    text: String,
    finish: Option<FinishReason>,
    after_finish: usize,
}

fn fold(events: &[ModelEvent]) -> Decoded {
    let mut out = Decoded::default();
    for event in events {
        if out.finish.is_some() {
            out.after_finish += 1;
        }
        match event {
            ModelEvent::TextDelta(text) => out.text.push_str(text),
            ModelEvent::ToolCallStart { id, name } => {
                let entry = out.calls.entry(id.clone()).or_default();
                entry.0 = name.clone();
                entry.1 += 1;
                out.order.push(id.clone());
            }
            ModelEvent::ToolCallDelta { id, delta } => {
                let entry = out
                    .calls
                    .get_mut(id)
                    .unwrap_or_else(|| panic!("delta before start for {id}"));
                assert!(!entry.3, "delta after end for {id}");
                entry.2.push_str(delta);
            }
            ModelEvent::ToolCallEnd { id } => {
                let entry = out
                    .calls
                    .get_mut(id)
                    .unwrap_or_else(|| panic!("end before start for {id}"));
                entry.3 = true;
            }
            ModelEvent::Finish(reason) => out.finish = Some(*reason),
        }
    }
    out
}

fn mapped(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        _ => FinishReason::Other,
    }
}

// ---------------------------------------------------------------------------------------
// 1. Replays of recorded streams over a socket.

async fn replay(name: &str) -> TestResult {
    let lines = fixture(name)?;
    let expected = recorded(&lines)?;
    let fake = spawn(vec![Script::Stream {
        events: lines.clone(),
        wire: Wire::ChatCompletions,
        cut_after: None,
    }])
    .await?;
    let provider = adapter(&fake, Some(KEY))?;
    let events = ok_events(collect(&provider, simple_request()).await)?;
    let got = fold(&events);

    assert_eq!(fake.requests().len(), 1, "{name}");
    assert_eq!(fake.requests()[0].path, "/v1/chat/completions", "{name}");
    assert!(
        !expected.calls.is_empty(),
        "{name}: the fixture proposes a call"
    );
    assert_eq!(got.calls.len(), expected.calls.len(), "{name}: {events:#?}");
    let expected_order: Vec<String> = expected.calls.values().map(|c| c.0.clone()).collect();
    assert_eq!(
        got.order, expected_order,
        "{name}: one start per call, in order"
    );
    for (id, name_, args) in expected.calls.values() {
        let (got_name, starts, got_args, ended) = &got.calls[id];
        assert_eq!(got_name, name_, "{name}");
        assert_eq!(*starts, 1, "{name}: exactly one ToolCallStart for {id}");
        assert_eq!(got_args, args, "{name}: arguments of {id}");
        assert!(*ended, "{name}: {id} ended");
        assert!(
            serde_json::from_str::<Value>(got_args).is_ok(),
            "{name}: arguments are JSON: {got_args}"
        );
    }
    assert_eq!(got.text, expected.content, "{name}");
    if !expected.reasoning.is_empty() {
        assert!(
            !got.text.contains(expected.reasoning.trim()),
            "{name}: reasoning leaked into the text"
        );
    }
    for event in &events {
        if let ModelEvent::TextDelta(text) = event {
            assert!(!text.is_empty(), "{name}: empty text delta");
        }
    }
    let reason = expected.finish.as_deref().ok_or("the fixture finishes")?;
    assert_eq!(got.finish, Some(mapped(reason)), "{name}");
    assert_eq!(got.after_finish, 0, "{name}: Finish is last");
    assert!(
        matches!(events.last(), Some(ModelEvent::Finish(_))),
        "{name}"
    );
    Ok(())
}

#[tokio::test]
async fn replays_deepseek_reasoning_then_incremental_call() -> TestResult {
    let expected = recorded(&fixture(CHAT_FIXTURES[0])?)?;
    assert!(!expected.reasoning.is_empty(), "deepseek reasons first");
    replay(CHAT_FIXTURES[0]).await
}

#[tokio::test]
async fn replays_groq_arguments_in_one_chunk() -> TestResult {
    replay(CHAT_FIXTURES[1]).await
}

#[tokio::test]
async fn replays_mistral_with_empty_name_on_later_chunk() -> TestResult {
    replay(CHAT_FIXTURES[2]).await
}

#[tokio::test]
async fn replays_xai_long_reasoning_and_usage_only_chunk() -> TestResult {
    let lines = fixture(CHAT_FIXTURES[3])?;
    assert!(
        lines.iter().any(|l| l.contains(r#""choices":[]"#)),
        "the xai fixture ends with a usage-only chunk"
    );
    replay(CHAT_FIXTURES[3]).await
}

// ---------------------------------------------------------------------------------------
// 2. Request bodies.

#[test]
fn request_body_maps_tools_and_starts_with_the_system_message() -> TestResult {
    let provider = OpenAiChat::new("http://localhost:11434/v1/", None, "qwen3", settings())?;
    let body = provider.request_body(&simple_request());
    assert_eq!(body["model"], "qwen3");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(
        body["tools"],
        json!([{
            "type": "function",
            "function": {
                "name": "getWeather",
                "description": "Weather forecast for a city in Vietnam.",
                "parameters": weather_tool().parameters,
            },
        }])
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are a test."},
            {"role": "user", "content": "Weather in Hà Nội?"},
        ])
    );
    assert_eq!(provider.url(), "http://localhost:11434/v1/chat/completions");
    Ok(())
}

#[test]
fn request_body_without_tools_has_no_tools_or_tool_choice() -> TestResult {
    let provider = OpenAiChat::new("http://x/v1", None, "m", settings())?;
    let mut request = simple_request();
    request.tools = Vec::new().into();
    let body = provider.request_body(&request);
    assert!(body.get("tools").is_none(), "{body}");
    assert!(body.get("tool_choice").is_none(), "{body}");
    Ok(())
}

#[test]
fn request_body_carries_calls_and_tool_results() -> TestResult {
    let provider = OpenAiChat::new("http://x/v1", None, "m", settings())?;
    let body = provider.request_body(&history_request());
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are a test."},
            {"role": "user", "content": "Weather in Hà Nội?"},
            {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "getWeather", "arguments": r#"{"city":"Hà Nội"}"#},
                }],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": r#"{"ok":true,"tempC":31}"#},
            {"role": "assistant", "content": "It is 31 °C."},
            {"role": "user", "content": "And tomorrow?"},
        ])
    );
    Ok(())
}

#[tokio::test]
async fn the_body_sent_over_the_socket_is_request_body_with_the_bearer_key() -> TestResult {
    let fake = spawn(vec![Script::Stream {
        events: fixture(CHAT_FIXTURES[1])?,
        wire: Wire::ChatCompletions,
        cut_after: None,
    }])
    .await?;
    let provider = adapter(&fake, Some(KEY))?;
    let request = history_request();
    let expected = provider.request_body(&request);
    ok_events(collect(&provider, request).await)?;
    let sent = fake.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].body, expected);
    assert_eq!(
        sent[0]
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer test-key")
    );
    assert!(sent[0]
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json")));
    Ok(())
}

#[tokio::test]
async fn without_a_key_there_is_no_authorization_header() -> TestResult {
    let fake = spawn(vec![Script::Stream {
        events: fixture(CHAT_FIXTURES[1])?,
        wire: Wire::ChatCompletions,
        cut_after: None,
    }])
    .await?;
    for key in [None, Some("")] {
        let provider = adapter(&fake, key)?;
        ok_events(collect(&provider, simple_request()).await)?;
    }
    let sent = fake.requests();
    assert_eq!(sent.len(), 2);
    for request in sent {
        assert!(request.headers.get("authorization").is_none());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Errors from the provider.

#[tokio::test]
async fn a_500_is_retried_before_anything_streamed() -> TestResult {
    let fake = spawn(vec![
        Script::Status {
            status: 500,
            body: r#"{"error":{"message":"overloaded"}}"#.into(),
            retry_after: None,
        },
        Script::Stream {
            events: fixture(CHAT_FIXTURES[1])?,
            wire: Wire::ChatCompletions,
            cut_after: None,
        },
    ])
    .await?;
    let provider = adapter(&fake, Some(KEY))?;
    let events = ok_events(collect(&provider, simple_request()).await)?;
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(fake.requests()[0].body, fake.requests()[1].body);
    assert_eq!(fold(&events).finish, Some(FinishReason::ToolCalls));
    Ok(())
}

#[tokio::test]
async fn a_401_is_one_error_that_never_shows_the_key() -> TestResult {
    let secret = "sk-very-secret-0123456789";
    let fake = spawn(vec![Script::Status {
        status: 401,
        body: format!(r#"{{"error":{{"message":"Incorrect API key provided: {secret}"}}}}"#),
        retry_after: None,
    }])
    .await?;
    let provider = adapter(&fake, Some(secret))?;
    let items = collect(&provider, simple_request()).await;
    assert_eq!(items.len(), 1, "{items:?}");
    let error = items[0].clone().err().ok_or("a 401 is an error")?;
    assert!(error.message.contains("401"), "{}", error.message);
    assert!(!error.message.contains(secret), "{}", error.message);
    assert_eq!(fake.requests().len(), 1, "a 401 is not retried");
    assert!(!format!("{provider:?}").contains(secret));
    Ok(())
}

#[tokio::test]
async fn an_error_object_in_the_stream_is_an_error_with_its_message() -> TestResult {
    let fake = spawn(vec![Script::Stream {
        events: vec![
            chunk(json!({"role": "assistant", "content": "Hi"}), None),
            json!({"error": {"message": "upstream model crashed", "code": 502}}).to_string(),
        ],
        wire: Wire::ChatCompletions,
        cut_after: None,
    }])
    .await?;
    let provider = adapter(&fake, None)?;
    let items = collect(&provider, simple_request()).await;
    assert_eq!(items[0], Ok(ModelEvent::TextDelta("Hi".into())));
    let last = items
        .last()
        .cloned()
        .and_then(Result::err)
        .ok_or("the stream ends with an error")?;
    assert!(
        last.message.contains("upstream model crashed"),
        "{}",
        last.message
    );
    assert_eq!(items.len(), 2, "{items:?}");
    Ok(())
}

#[tokio::test]
async fn a_cut_stream_is_an_error_not_a_finish() -> TestResult {
    let lines = fixture(CHAT_FIXTURES[0])?;
    // In the middle of the call's arguments.
    let cut = lines
        .iter()
        .position(|l| l.contains(r#""location""#))
        .ok_or("the fixture's arguments have a location")?
        + 1;
    let fake = spawn(vec![Script::Stream {
        events: lines,
        wire: Wire::ChatCompletions,
        cut_after: Some(cut),
    }])
    .await?;
    let provider = adapter(&fake, None)?;
    let items = collect(&provider, simple_request()).await;
    let last = items
        .last()
        .cloned()
        .and_then(Result::err)
        .ok_or("the stream ends with an error")?;
    assert_eq!(last.message, "stream ended before the turn finished");
    assert!(items.iter().all(|i| !matches!(
        i,
        Ok(ModelEvent::Finish(_)) | Ok(ModelEvent::ToolCallEnd { .. })
    )));
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The decoder on hand-written streams.

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
    .to_string()
}

fn call_piece(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> Value {
    let mut piece = json!({"index": index, "function": {"arguments": args}});
    if let Some(id) = id {
        piece["id"] = json!(id);
        piece["type"] = json!("function");
    }
    if let Some(name) = name {
        piece["function"]["name"] = json!(name);
    }
    json!({"tool_calls": [piece]})
}

async fn decode_lines(lines: &[&str]) -> Vec<Result<ModelEvent, ProviderError>> {
    let events: Vec<Result<SseEvent, ProviderError>> = lines
        .iter()
        .map(|data| {
            Ok(SseEvent {
                event: "message".into(),
                data: (*data).to_owned(),
            })
        })
        .collect();
    decode(futures::stream::iter(events)).collect().await
}

fn start(id: &str, name: &str) -> ModelEvent {
    ModelEvent::ToolCallStart {
        id: id.into(),
        name: name.into(),
    }
}

fn delta(id: &str, text: &str) -> ModelEvent {
    ModelEvent::ToolCallDelta {
        id: id.into(),
        delta: text.into(),
    }
}

fn end(id: &str) -> ModelEvent {
    ModelEvent::ToolCallEnd { id: id.into() }
}

#[tokio::test]
async fn an_id_after_argument_pieces_starts_the_call_then_replays_them() -> TestResult {
    let a = chunk(call_piece(0, None, Some("getWeather"), "{\"ci"), None);
    let b = chunk(call_piece(0, Some("call_late"), None, "ty\":"), None);
    let c = chunk(call_piece(0, Some(""), Some(""), "\"Huế\"}"), None);
    let d = chunk(json!({}), Some("tool_calls"));
    let items = decode_lines(&[&a, &b, &c, &d]).await;
    assert_eq!(
        ok_events(items)?,
        vec![
            start("call_late", "getWeather"),
            delta("call_late", "{\"ci"),
            delta("call_late", "ty\":"),
            delta("call_late", "\"Huế\"}"),
            end("call_late"),
            ModelEvent::Finish(FinishReason::ToolCalls),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn parallel_calls_are_kept_apart_by_index_and_later_ids_are_ignored() -> TestResult {
    let lines = [
        chunk(json!({"role": "assistant", "content": "Checking "}), None),
        chunk(json!({"content": "both."}), None),
        chunk(call_piece(0, Some("a"), Some("getWeather"), ""), None),
        chunk(call_piece(1, Some("b"), Some("getWeather"), ""), None),
        chunk(call_piece(1, None, None, "{\"city\":\"Huế\"}"), None),
        chunk(
            call_piece(0, Some("other"), Some("other"), "{\"city\":\"Hà Nội\"}"),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        "[DONE]".to_owned(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    assert_eq!(
        ok_events(decode_lines(&lines).await)?,
        vec![
            ModelEvent::TextDelta("Checking ".into()),
            ModelEvent::TextDelta("both.".into()),
            start("a", "getWeather"),
            start("b", "getWeather"),
            delta("b", "{\"city\":\"Huế\"}"),
            delta("a", "{\"city\":\"Hà Nội\"}"),
            end("a"),
            end("b"),
            ModelEvent::Finish(FinishReason::ToolCalls),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn done_without_a_finish_reason_is_a_stop_and_ends_calls() -> TestResult {
    let a = chunk(call_piece(0, Some("c1"), Some("getWeather"), "{}"), None);
    let items = decode_lines(&[&a, "[DONE]"]).await;
    assert_eq!(
        ok_events(items)?,
        vec![
            start("c1", "getWeather"),
            delta("c1", "{}"),
            end("c1"),
            ModelEvent::Finish(FinishReason::Stop),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn end_of_stream_without_finish_or_done_is_an_error() {
    let a = chunk(json!({"content": "Hel"}), None);
    let items = decode_lines(&[&a]).await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[0], Ok(ModelEvent::TextDelta("Hel".into())));
    assert_eq!(
        items[1],
        Err(ProviderError {
            message: "stream ended before the turn finished".into()
        })
    );
}

#[tokio::test]
async fn malformed_json_stops_with_an_error() {
    let a = chunk(json!({"content": "ok"}), None);
    let b = chunk(json!({}), Some("stop"));
    let items = decode_lines(&[&a, "{\"choices\": [", &b]).await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(items[1]
        .as_ref()
        .is_err_and(|e| e.message.contains("malformed JSON")));
}

#[tokio::test]
async fn usage_only_chunks_reasoning_and_finish_reasons_map() -> TestResult {
    let usage = json!({"choices": [], "usage": {"total_tokens": 3}}).to_string();
    let reasoning = chunk(
        json!({"reasoning_content": "hmm", "reasoning": "hmm", "content": null}),
        None,
    );
    for (reason, mapped) in [
        ("stop", FinishReason::Stop),
        ("length", FinishReason::Length),
        ("tool_calls", FinishReason::ToolCalls),
        ("content_filter", FinishReason::Other),
    ] {
        let text = chunk(json!({"content": "Xin chào"}), None);
        let fin = chunk(json!({"content": ""}), Some(reason));
        let items = decode_lines(&[&reasoning, &usage, &text, &fin, &usage, "[DONE]"]).await;
        assert_eq!(
            ok_events(items)?,
            vec![
                ModelEvent::TextDelta("Xin chào".into()),
                ModelEvent::Finish(mapped)
            ]
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_transport_error_is_passed_on_and_stops() {
    let a = chunk(json!({"content": "Hi"}), None);
    let events = vec![
        Ok(SseEvent {
            event: "message".into(),
            data: a,
        }),
        Err(ProviderError {
            message: "provider stream broke: reset".into(),
        }),
        Ok(SseEvent {
            event: "message".into(),
            data: "[DONE]".into(),
        }),
    ];
    let items: Vec<_> = decode(futures::stream::iter(events)).collect().await;
    assert_eq!(items.len(), 2);
    assert_eq!(
        items[1],
        Err(ProviderError {
            message: "provider stream broke: reset".into()
        })
    );
}

// ---------------------------------------------------------------------------------------
// 3. The whole server on this adapter.

fn provider_for(fake: &FakeProvider) -> Result<SharedProvider, ProviderError> {
    Ok(Arc::new(adapter(fake, Some(KEY))?))
}

fn text_answer(text: &str) -> Script {
    Script::Stream {
        events: vec![
            chunk(json!({"role": "assistant", "content": text}), None),
            chunk(json!({}), Some("stop")),
            json!({"choices": [], "usage": {"total_tokens": 9}}).to_string(),
        ],
        wire: Wire::ChatCompletions,
        cut_after: None,
    }
}

fn assert_ends_well_formed(reply: &Reply) {
    assert_eq!(reply.status, 200);
    assert!(reply.done, "stream must end with [DONE]");
    assert_eq!(
        reply.events.first().map(|e| e["type"].clone()),
        Some(json!("start"))
    );
    assert_eq!(
        reply.events.last().map(|e| e["type"].clone()),
        Some(json!("finish"))
    );
}

#[tokio::test]
async fn server_answers_an_unknown_tool_with_the_list_of_tools() -> TestResult {
    let rocket = Script::Stream {
        events: vec![
            chunk(json!({"role": "assistant", "content": null}), None),
            chunk(
                call_piece(0, Some("call_rocket"), Some("launchRocket"), ""),
                None,
            ),
            chunk(call_piece(0, None, None, "{\"target\":"), None),
            chunk(call_piece(0, None, None, "\"moon\"}"), None),
            chunk(json!({}), Some("tool_calls")),
        ],
        wire: Wire::ChatCompletions,
        cut_after: None,
    };
    let fake = spawn(vec![rocket, text_answer("I cannot launch rockets.")]).await?;
    let app = support::spawn_app_with_provider(provider_for(&fake)?).await?;
    let reply = app.chat(None, "Launch a rocket").await?;
    assert_ends_well_formed(&reply);
    let errors = reply.of_type("tool-input-error");
    assert_eq!(errors.len(), 1, "{:#?}", reply.events);
    assert_eq!(errors[0]["toolName"], "launchRocket");
    assert_eq!(errors[0]["error"]["code"], "UNKNOWN_TOOL");
    assert_eq!(errors[0]["input"], json!({"target": "moon"}));
    let text = errors[0]["errorText"]
        .as_str()
        .ok_or("the input error has a text")?;
    for tool in ["getWeather", "searchRestaurants", "createBooking"] {
        assert!(text.contains(tool), "{text}");
    }
    assert!(reply.of_type("tool-output-available").is_empty());
    assert_eq!(reply.text(), "I cannot launch rockets.");
    assert_eq!(reply.status_of_run().as_deref(), Some("completed"));

    // The second turn told the model about the error, matched by the call id.
    let sent = fake.requests();
    assert_eq!(sent.len(), 2);
    let messages = sent[1].body["messages"]
        .as_array()
        .ok_or("the second request has messages")?;
    let call = messages
        .iter()
        .find(|m| m["role"] == "assistant" && m.get("tool_calls").is_some())
        .ok_or("the second request repeats the call")?;
    assert_eq!(call["tool_calls"][0]["function"]["name"], "launchRocket");
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .ok_or("the second request has the tool result")?;
    assert_eq!(result["tool_call_id"], call["tool_calls"][0]["id"]);
    assert!(
        result["content"]
            .as_str()
            .ok_or("the tool result has a content")?
            .contains("UNKNOWN_TOOL"),
        "{result}"
    );
    Ok(())
}

#[tokio::test]
async fn server_retries_a_500_then_streams_the_recorded_groq_call() -> TestResult {
    let fake = spawn(vec![
        Script::Status {
            status: 500,
            body: r#"{"error":{"message":"internal"}}"#.into(),
            retry_after: None,
        },
        Script::Stream {
            events: fixture(CHAT_FIXTURES[1])?,
            wire: Wire::ChatCompletions,
            cut_after: None,
        },
    ])
    .await?;
    // One failed call ends the run, so the model is asked exactly once (plus the retry).
    let config = AgentConfig {
        max_tool_errors: 1,
        ..AgentConfig::default()
    };
    let app = support::spawn_app_with_provider_and(provider_for(&fake)?, config).await?;
    let reply = app.chat(None, "Weather?").await?;
    assert_ends_well_formed(&reply);
    assert_eq!(fake.requests().len(), 2);
    let expected = recorded(&fixture(CHAT_FIXTURES[1])?)?;
    let (id, name, args) = expected
        .calls
        .get(&0)
        .cloned()
        .ok_or("the fixture has a call")?;
    let starts = reply.of_type("tool-input-start");
    assert_eq!(starts.len(), 1, "{:#?}", reply.events);
    assert_eq!(starts[0]["toolName"], name.as_str());
    assert_eq!(starts[0]["toolCallId"], id.as_str());
    let deltas: String = reply
        .of_type("tool-input-delta")
        .iter()
        .filter_map(|e| e["inputTextDelta"].as_str())
        .collect();
    assert_eq!(deltas, args);
    // "weather" is not one of our tools: it is answered, never run.
    let errors = reply.of_type("tool-input-error");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["error"]["code"], "UNKNOWN_TOOL");
    assert!(reply.of_type("tool-output-available").is_empty());
    assert_eq!(
        reply.status_of_run().as_deref(),
        Some("too-many-tool-errors")
    );
    Ok(())
}

async fn cut_run(events: Vec<String>, cut: usize, tool: &str) -> TestResult {
    assert!(cut < events.len());
    let fake = spawn(vec![Script::Stream {
        events,
        wire: Wire::ChatCompletions,
        cut_after: Some(cut),
    }])
    .await?;
    let app = support::spawn_app_with_provider(provider_for(&fake)?).await?;
    let reply = app.chat(None, "Thời tiết Hà Nội?").await?;
    assert_ends_well_formed(&reply);
    assert_eq!(
        reply.status_of_run().as_deref(),
        Some("error"),
        "{:#?}",
        reply.events
    );
    assert!(reply.of_type("tool-output-available").is_empty());
    assert!(reply.of_type("tool-input-available").is_empty());
    let starts = reply.of_type("tool-input-start");
    assert_eq!(starts.len(), 1, "{:#?}", reply.events);
    assert_eq!(starts[0]["toolName"], tool);
    let errors = reply.of_type("tool-input-error");
    assert_eq!(errors.len(), 1, "{:#?}", reply.events);
    assert_eq!(errors[0]["toolCallId"], starts[0]["toolCallId"]);
    assert_eq!(errors[0]["error"]["code"], "INTERRUPTED");
    assert_eq!(fake.requests().len(), 1, "a cut stream is not retried");
    Ok(())
}

#[tokio::test]
async fn server_never_runs_a_call_whose_stream_was_cut_mid_arguments() -> TestResult {
    let events = vec![
        chunk(json!({"role": "assistant", "content": null}), None),
        chunk(call_piece(0, Some("call_w"), Some("getWeather"), ""), None),
        chunk(call_piece(0, None, None, "{\"city\":"), None),
        chunk(call_piece(0, None, None, "\"Hà Nội\","), None),
        chunk(call_piece(0, None, None, "\"days\":1}"), None),
        chunk(json!({}), Some("tool_calls")),
    ];
    // After `{"city":"Hà Nội",` — valid-looking so far, but incomplete.
    cut_run(events, 4, "getWeather").await
}

#[tokio::test]
async fn server_never_runs_the_recorded_mistral_call_when_cut_before_finish() -> TestResult {
    let events = fixture(CHAT_FIXTURES[2])?;
    // Complete arguments, but neither finish_reason nor [DONE]: still not run.
    let cut = events.len() - 1;
    cut_run(events, cut, "webSearchTool").await
}

#[tokio::test]
async fn a_local_server_without_a_model_name_uses_its_first_model() -> TestResult {
    let fake = spawn(vec![Script::Status {
        status: 200,
        body: r#"{"object":"list","data":[{"id":"qwen2.5:7b","object":"model"},{"id":"llama3.2","object":"model"}]}"#.to_owned(),
        retry_after: None,
    }])
    .await?;
    let adapter = OpenAiChat::new(fake.base_url("/v1"), None, "", settings())?;
    assert_eq!(adapter.discover_model().await?, "qwen2.5:7b");
    assert_eq!(fake.requests()[0].path, "/v1/models");

    let missing = spawn(vec![Script::Status {
        status: 404,
        body: "{}".to_owned(),
        retry_after: None,
    }])
    .await?;
    let adapter = OpenAiChat::new(missing.base_url("/v1"), None, "", settings())?;
    let error = adapter
        .discover_model()
        .await
        .err()
        .ok_or("a server without a model list is an error")?
        .to_string();
    assert!(error.contains("DATBAN_MODEL"), "{error}");
    Ok(())
}

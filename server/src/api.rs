//! The JSON + SSE API: chat, approvals, conversations.
//!
//! Replies stream as the AI SDK's UI Message Stream v1 (`data: {json}` chunks ending with
//! `data: [DONE]`). A run is spawned on its own task: a closed browser does not stop it,
//! and its result is saved either way.

use std::{
    collections::HashMap,
    convert::Infallible,
    sync::{Arc, Mutex},
};

use axum::{
    extract::{rejection::JsonRejection, Path, State},
    http::{HeaderValue, StatusCode},
    response::{
        sse::{Event, Sse},
        IntoResponse, Response,
    },
    routing::{get, post},
    Extension, Json, Router,
};
use futures::{stream, Stream, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shared::{
    events::{AgentEvent, UI_MESSAGE_STREAM_VERSION},
    message::{Message, MessageMetadata, RunStatus},
    tools::{validate_arguments, Assistant, ToolName, ValidationContext},
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tokio_util::sync::CancellationToken;

use crate::{
    agent::Decision,
    owner::OwnerId,
    store::{self, StoreError},
    tools::{self, ExecError, ToolContext},
    AppState,
};

/// Longest message a person may send, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4000;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/chat", post(chat))
        .route("/api/approvals", post(approve))
        .route("/api/conversations/{id}", get(conversation))
        .route("/api/chat/{id}/stop", post(stop))
        .route("/api/bookings", get(bookings))
}

/// An API error: `{"error":{"code","message"}}` with an HTTP status.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    fn not_found(what: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            format!("{what} not found."),
        )
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        tracing::error!(%error, "storage failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL",
            "Something went wrong on our side. Please try again.",
        )
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        let status = match rejection {
            JsonRejection::MissingJsonContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            JsonRejection::JsonDataError(_) => StatusCode::UNPROCESSABLE_ENTITY,
            _ => StatusCode::BAD_REQUEST,
        };
        Self::new(status, "BAD_REQUEST", rejection.body_text())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        #[derive(Serialize)]
        struct Body<'a> {
            error: Inner<'a>,
        }
        #[derive(Serialize)]
        struct Inner<'a> {
            code: &'a str,
            message: &'a str,
        }
        let body = Body {
            error: Inner {
                code: self.code,
                message: &self.message,
            },
        };
        (self.status, Json(body)).into_response()
    }
}

/// One lock per conversation, so two runs never write the same conversation at once.
#[derive(Clone, Default)]
pub struct ConversationLocks(Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>);

impl ConversationLocks {
    fn get(&self, id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = match self.0.lock() {
            Ok(map) => map,
            Err(poisoned) => poisoned.into_inner(),
        };
        // Drop locks nobody holds, so the map stays as small as the set of active runs.
        map.retain(|_, lock| Arc::strong_count(lock) > 1);
        map.entry(id.to_owned()).or_default().clone()
    }
}

/// The stop switch of each conversation's run in progress.
#[derive(Clone, Default)]
pub struct ActiveRuns(Arc<Mutex<HashMap<String, (u64, CancellationToken)>>>);

/// One registered run: its number (to tell it from a later run) and its token.
struct RunHandle {
    number: u64,
    token: CancellationToken,
}

impl ActiveRuns {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, CancellationToken)>> {
        match self.0.lock() {
            Ok(map) => map,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Registers a run starting in `conversation_id`.
    fn start(&self, conversation_id: &str) -> RunHandle {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let number = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let token = CancellationToken::new();
        self.map()
            .insert(conversation_id.to_owned(), (number, token.clone()));
        RunHandle { number, token }
    }

    /// Forgets a finished run, unless a newer run of the conversation replaced it.
    fn end(&self, conversation_id: &str, run: &RunHandle) {
        let mut map = self.map();
        if map
            .get(conversation_id)
            .is_some_and(|(n, _)| *n == run.number)
        {
            map.remove(conversation_id);
        }
    }

    /// Cancels the conversation's run; whether one was running.
    fn stop(&self, conversation_id: &str) -> bool {
        match self.map().remove(conversation_id) {
            Some((_, token)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
}

fn sse(rx: mpsc::UnboundedReceiver<AgentEvent>) -> Response {
    let events = UnboundedReceiverStream::new(rx).map(|event| {
        let data = serde_json::to_string(&event).unwrap_or_else(|_| "{}".to_owned());
        Ok::<_, Infallible>(Event::default().data(data))
    });
    let done = stream::once(async { Ok::<_, Infallible>(Event::default().data("[DONE]")) });
    let body: std::pin::Pin<Box<dyn Stream<Item = Result<Event, Infallible>> + Send>> =
        Box::pin(events.chain(done));
    let mut response = Sse::new(body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        "x-vercel-ai-ui-message-stream",
        HeaderValue::from_static(UI_MESSAGE_STREAM_VERSION),
    );
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ChatRequest {
    #[serde(default)]
    conversation_id: Option<String>,
    text: String,
    #[serde(default)]
    assistant: Option<String>,
}

async fn chat(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    body: Result<Json<ChatRequest>, JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(request) = body?;
    let text = request.text.trim().to_owned();
    if text.is_empty() {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "EMPTY_MESSAGE",
            "The message is empty.",
        ));
    }
    if text.chars().count() > MAX_MESSAGE_CHARS {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "MESSAGE_TOO_LONG",
            format!("A message may have at most {MAX_MESSAGE_CHARS} characters."),
        ));
    }
    let now = (state.agent.clock)();
    let conversation = match &request.conversation_id {
        Some(id) => store::find_conversation(&state.db, id, &owner)
            .await?
            .ok_or_else(|| ApiError::not_found("Conversation"))?,
        None => {
            let assistant = match request.assistant.as_deref() {
                None => Assistant::default(),
                Some(name) => Assistant::parse(name).ok_or_else(|| {
                    ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "UNKNOWN_ASSISTANT",
                        "Unknown assistant; available: restaurant, gifts, shipping.",
                    )
                })?,
            };
            store::create_conversation(&state.db, &owner, assistant.as_str(), now).await?
        }
    };
    let lock = state.locks.get(&conversation.id);
    let guard = lock.clone().try_lock_owned().map_err(|_| {
        ApiError::new(
            StatusCode::CONFLICT,
            "RUN_IN_PROGRESS",
            "The assistant is still answering in this conversation.",
        )
    })?;

    decline_pending(&state, &conversation.id, &owner).await?;
    let user = Message::user(store::new_id("msg"), text);
    store::append_message(&state.db, &conversation.id, &user, now).await?;
    let assistant = Message::assistant(store::new_id("msg"));
    store::append_message(&state.db, &conversation.id, &assistant, now).await?;

    let (tx, rx) = mpsc::unbounded_channel();
    let agent = state.agent.clone();
    let runs = state.runs.clone();
    let run = runs.start(&conversation.id);
    tokio::spawn(async move {
        let _guard = guard;
        agent
            .run(&owner, &conversation.id, assistant, tx, run.token.clone())
            .await;
        runs.end(&conversation.id, &run);
    });
    Ok(sse(rx))
}

/// A new message answers every open confirmation with "no": the person moved on.
async fn decline_pending(
    state: &AppState,
    conversation_id: &str,
    owner: &str,
) -> Result<(), ApiError> {
    for pending in store::take_all_pending(&state.db, conversation_id, owner).await? {
        let Some(mut message) =
            store::message(&state.db, conversation_id, &pending.message_id).await?
        else {
            continue;
        };
        message.apply(&AgentEvent::ToolOutputDenied {
            tool_call_id: pending.tool_call_id.clone(),
        });
        message.apply(&AgentEvent::Finish {
            message_metadata: MessageMetadata {
                status: Some(RunStatus::Completed),
                conversation_id: None,
            },
        });
        store::save_message(&state.db, conversation_id, &message).await?;
    }
    Ok(())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ApprovalRequest {
    conversation_id: String,
    tool_call_id: String,
    approved: bool,
    #[serde(default)]
    edited_input: Option<Value>,
}

async fn approve(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    body: Result<Json<ApprovalRequest>, JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(request) = body?;
    store::find_conversation(&state.db, &request.conversation_id, &owner)
        .await?
        .ok_or_else(|| ApiError::not_found("Conversation"))?;
    let already = || {
        ApiError::new(
            StatusCode::CONFLICT,
            "ALREADY_RESOLVED",
            "This confirmation was already answered; nothing more was done.",
        )
    };
    // Validate an edit before taking the call, so a bad edit loses nothing.
    let Some(peeked) = store::peek_pending(
        &state.db,
        &request.conversation_id,
        &request.tool_call_id,
        &owner,
    )
    .await?
    else {
        return Err(resolved_or_missing(&state, &request, already()).await?);
    };
    let tool = ToolName::parse(&peeked.tool_name).ok_or_else(|| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL",
            "Unknown tool.",
        )
    })?;
    let edited = match (&request.edited_input, request.approved) {
        (Some(value), true) => {
            if !value.is_object() {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "VALIDATION_ERROR",
                    "editedInput must be an object.",
                ));
            }
            let now = (state.agent.clock)();
            let input = validate_arguments(tool, &value.to_string(), &ValidationContext { now })
                .map_err(|invalid| {
                    ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "VALIDATION_ERROR",
                        invalid.to_string(),
                    )
                })?;
            let ctx = ToolContext {
                db: state.db.clone(),
                owner_id: owner.clone(),
                conversation_id: request.conversation_id.clone(),
                call_id: request.tool_call_id.clone(),
                now,
                upstreams: state.agent.upstreams.clone(),
            };
            match tools::precheck(&input, &ctx).await {
                Ok(()) => {}
                Err(ExecError::Tool(error)) => {
                    return Err(ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "VALIDATION_ERROR",
                        error.message,
                    ))
                }
                Err(ExecError::Internal(details)) => {
                    tracing::error!(%details, "precheck of edited input failed");
                    return Err(ApiError::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "INTERNAL",
                        "Something went wrong on our side. Please try again.",
                    ));
                }
            }
            Some(input)
        }
        _ => None,
    };
    // The atomic take: of simultaneous decisions exactly one gets the call.
    let Some(pending) = store::take_pending(
        &state.db,
        &request.conversation_id,
        &request.tool_call_id,
        &owner,
    )
    .await?
    else {
        return Err(already());
    };
    let lock = state.locks.get(&pending.conversation_id);
    let (tx, rx) = mpsc::unbounded_channel();
    let agent = state.agent.clone();
    let runs = state.runs.clone();
    tokio::spawn(async move {
        // Waits for a run still writing this conversation (another decision of the turn).
        let _guard = lock.lock_owned().await;
        let decision = Decision {
            approved: request.approved,
            edited,
        };
        let conversation_id = pending.conversation_id.clone();
        let run = runs.start(&conversation_id);
        agent.resume(pending, decision, tx, run.token.clone()).await;
        runs.end(&conversation_id, &run);
    });
    Ok(sse(rx))
}

async fn resolved_or_missing(
    state: &AppState,
    request: &ApprovalRequest,
    already: ApiError,
) -> Result<ApiError, ApiError> {
    let messages = store::messages(&state.db, &request.conversation_id).await?;
    let known = messages
        .iter()
        .any(|message| message.tool_part(&request.tool_call_id).is_some());
    Ok(if known {
        already
    } else {
        ApiError::not_found("Confirmation")
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConversationBody {
    id: String,
    assistant: String,
    messages: Vec<Message>,
}

async fn conversation(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    Path(id): Path<String>,
) -> Result<Json<ConversationBody>, ApiError> {
    let conversation = store::find_conversation(&state.db, &id, &owner)
        .await?
        .ok_or_else(|| ApiError::not_found("Conversation"))?;
    let messages = store::messages(&state.db, &conversation.id).await?;
    Ok(Json(ConversationBody {
        id: conversation.id,
        assistant: conversation.assistant,
        messages,
    }))
}

#[derive(Serialize)]
struct Stopped {
    stopped: bool,
}

/// Stops the conversation's reply in progress: the model request is cancelled, running
/// tools are dropped, and the reply is saved as stopped.
async fn stop(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    Path(id): Path<String>,
) -> Result<Json<Stopped>, ApiError> {
    store::find_conversation(&state.db, &id, &owner)
        .await?
        .ok_or_else(|| ApiError::not_found("Conversation"))?;
    Ok(Json(Stopped {
        stopped: state.runs.stop(&id),
    }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BookingsQuery {
    /// `1` also lists cancelled bookings and past ones.
    #[serde(default)]
    all: Option<u8>,
}

/// The owner's bookings for the "my bookings" page: the same list `listBookings` gives the
/// model, and only ever the owner's own.
async fn bookings(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    query: Result<axum::extract::Query<BookingsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<shared::tools::ListBookingsOutput>, ApiError> {
    let axum::extract::Query(query) = query.map_err(|rejection| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
            rejection.body_text(),
        )
    })?;
    let now = (state.agent.clock)();
    let include_all = query.all == Some(1);
    tools::my_bookings::list_for_owner(&state.db, &owner, now, include_all)
        .await
        .map(Json)
        .map_err(|error| {
            let details = match error {
                ExecError::Tool(error) => error.message,
                ExecError::Internal(details) => details,
            };
            tracing::error!(%details, "listing bookings failed");
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "INTERNAL",
                "Something went wrong on our side. Please try again.",
            )
        })
}

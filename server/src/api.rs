//! The JSON + SSE API: chat, approvals, conversations.
//!
//! Replies stream as the AI SDK's UI Message Stream v1 (`data: {json}` chunks ending with
//! `data: [DONE]`). A run is spawned on its own task: a closed browser does not stop it,
//! and its result is saved either way. Every run stream (`POST /api/chat`, `POST
//! /api/approvals`, `GET /api/chat/{id}/stream`) is a subscription to the run's event log
//! (`runs.rs`), so a browser that lost its stream can pick the reply up again.

use std::{sync::Arc, time::Duration};

use axum::{
    body::Body,
    extract::{Path, Query, State},
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
    Extension, Json, Router,
};
use futures::{stream, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use shared::{
    events::{AgentEvent, UI_MESSAGE_STREAM_VERSION},
    message::{CallOutcome, Message, Role, RunStatus},
    tools::{Assistant, ErrorCode, ToolError, ToolName},
};

mod decisions;
pub use crate::error::ApiError;
pub(crate) use crate::error::AppJson;
pub(crate) mod edge;
mod frames;
mod transport;

use decisions::{approve, decide_all, regenerate, reopen, Wanted};

pub use edge::json_answers;

use transport::{Action, ConversationRef};

pub use shared::http::RUN_ID_HEADER;
use shared::http::{self as http, ApiCode, ConversationBody, RunningReply};

use crate::{
    agent::{self, Decision, EditRejected, Known},
    owner::OwnerId,
    runs::{self, Current, ReserveError},
    store::{self, StoreError},
    tools::{self, ExecError},
    AppState,
};

/// Longest message a person may send, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4000;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route(http::CHAT_URL, post(chat))
        .route(http::APPROVALS_URL, post(approve))
        .route(http::REOPEN_URL, post(reopen))
        .route(http::CONVERSATION_ROUTE, get(conversation))
        .route(http::STOP_ROUTE, post(stop))
        .route(http::STREAM_ROUTE, get(stream_run))
        .route(http::BOOKINGS_ROUTE, get(bookings))
}

impl From<ReserveError> for ApiError {
    fn from(error: ReserveError) -> Self {
        match error {
            ReserveError::Busy { running } => Self::new(
                ApiCode::RunInProgress,
                "The assistant is still answering in this conversation: follow that \
                     reply (GET /api/chat/{id}/stream) or wait for it to end.",
            )
            .with_running(running),
            ReserveError::ShuttingDown => Self::new(
                ApiCode::ShuttingDown,
                "This server is restarting and starts no new reply; nothing was changed. \
                 Please try again in a moment.",
            ),
            ReserveError::TooMany { max } => Self::new(
                ApiCode::TooManyRuns,
                format!(
                    "You already have {max} replies being written. Wait for one to finish, \
                     or stop one, and try again."
                ),
            ),
        }
    }
}

/// How long a decision waits for a run still writing its conversation (another decision
/// of the same turn) before it is refused with `RUN_IN_PROGRESS`.
const DECISION_WAIT: Duration = Duration::from_secs(120);

/// How long a new run's response waits for the run's first events, to send them with its
/// head ([`frames::Frames::prime`]). A run writes its `start` at once; this only bounds a
/// run held up before that (its end waiting to be stored, on a busy database).
const FIRST_FRAME_WAIT: Duration = Duration::from_millis(50);

/// A run just started, as a UI Message Stream response whose head leaves with the run's
/// first events.
async fn run_sse(run: &Arc<runs::ActiveRun>) -> Response {
    let mut frames = frames::Frames::new(run.subscribe(0));
    frames.prime(FIRST_FRAME_WAIT).await;
    sse_response(frames, run.id())
}

/// A run's events as a UI Message Stream response: each event arrives serialised once (by
/// the run's log) and is only framed ([`frames::Frames`]).
fn sse(events: runs::EventStream, run_id: &str) -> Response {
    sse_response(frames::Frames::new(events), run_id)
}

fn sse_response(frames: frames::Frames, run_id: &str) -> Response {
    let mut response = Response::new(Body::from_stream(frames));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    let headers = response.headers_mut();
    headers.insert(
        "x-vercel-ai-ui-message-stream",
        HeaderValue::from_static(UI_MESSAGE_STREAM_VERSION),
    );
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    // Run ids are "run_" and hex digits, always a valid header value.
    if let Ok(value) = HeaderValue::from_str(run_id) {
        headers.insert(RUN_ID_HEADER, value);
    }
    response
}

/// `POST /api/chat`: a person's message, the regeneration of the last reply, or (from an
/// AI SDK client) decisions on the last reply's confirmations; see [`transport`] for the
/// two bodies it reads.
async fn chat(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    AppJson(body): AppJson<transport::ChatBody>,
) -> Result<Response, ApiError> {
    let request = body.into_request()?;
    match request.action {
        Action::Say { text, client_id } => {
            say(
                &state,
                owner,
                &request.conversation,
                request.assistant,
                text,
                client_id,
            )
            .await
        }
        Action::Decide(decisions) => {
            let conversation = existing(&state, &owner, &request.conversation).await?;
            let wanted = decisions
                .into_iter()
                .map(|decision| Wanted {
                    call_id: decision.approval_id,
                    approved: decision.approved,
                    edited_input: None,
                    reason: decision.reason,
                })
                .collect();
            decide_all(&state, owner, &conversation.id, wanted).await
        }
        Action::Regenerate { message_id } => {
            let conversation = existing(&state, &owner, &request.conversation).await?;
            regenerate(&state, owner, conversation, message_id.as_deref()).await
        }
    }
}

/// The owner's conversation a client calls `id`: ours of that id, else the one keyed by
/// the client's id (see [`transport::client_conversation_id`]). Another owner's
/// conversation of either id is not found.
pub(crate) async fn find_client_conversation(
    state: &AppState,
    owner: &str,
    id: &str,
) -> Result<Option<store::Conversation>, ApiError> {
    if let Some(conversation) = store::find_conversation(&state.reads, id, owner).await? {
        return Ok(Some(conversation));
    }
    if transport::check_client_id(id, "id").is_err() {
        return Ok(None);
    }
    let keyed = transport::client_conversation_id(state.cookie_key.signing(), owner, id);
    Ok(store::find_conversation(&state.reads, &keyed, owner).await?)
}

/// The stored conversation a request names; a new one is not there to act on.
async fn existing(
    state: &AppState,
    owner: &str,
    conversation: &ConversationRef,
) -> Result<store::Conversation, ApiError> {
    let found = match conversation {
        ConversationRef::New => None,
        ConversationRef::Ours(id) => store::find_conversation(&state.reads, id, owner).await?,
        ConversationRef::Client(id) => find_client_conversation(state, owner, id).await?,
    };
    found.ok_or_else(|| ApiError::not_found("Conversation"))
}

/// A person's message: stored with the empty reply in one commit, then answered by a run.
async fn say(
    state: &AppState,
    owner: String,
    conversation_ref: &ConversationRef,
    assistant: Option<Assistant>,
    text: String,
    client_id: Option<String>,
) -> Result<Response, ApiError> {
    // An AI SDK client keeps the words as typed and compares its copy with ours after a
    // reload; our own page's are trimmed.
    let text = if client_id.is_some() {
        text
    } else {
        text.trim().to_owned()
    };
    if text.trim().is_empty() {
        return Err(ApiError::new(
            ApiCode::EmptyMessage,
            "The message is empty.",
        ));
    }
    if text.chars().count() > MAX_MESSAGE_CHARS {
        return Err(ApiError::new(
            ApiCode::MessageTooLong,
            format!("A message may have at most {MAX_MESSAGE_CHARS} characters."),
        ));
    }
    let now = (state.agent.clock)();
    let found = match conversation_ref {
        ConversationRef::New => None,
        ConversationRef::Ours(id) => Some(
            store::find_conversation(&state.reads, id, &owner)
                .await?
                .ok_or_else(|| ApiError::not_found("Conversation"))?,
        ),
        ConversationRef::Client(id) => find_client_conversation(state, &owner, id).await?,
    };
    let (conversation, created) = match found {
        Some(conversation) => (conversation, false),
        None => {
            let assistant = assistant.unwrap_or_default();
            // Stored below with its first turn, so a refused run creates nothing.
            let mut conversation = store::new_conversation(&owner, assistant);
            if let ConversationRef::Client(id) = conversation_ref {
                conversation.id =
                    transport::client_conversation_id(state.cookie_key.signing(), &owner, id);
            }
            (conversation, true)
        }
    };
    let assistant = conversation.assistant;
    // The conversation's place before anything is stored: one run per conversation, and
    // a bounded number per owner. Dropped on any error below, which gives it back.
    // A run of another process in an existing conversation is found before anything in
    // it changes (409, nothing changed): on PostgreSQL here, on SQLite by the turn's
    // commit, or before the confirmations it closes. A new conversation's lease is
    // stored with its first turn.
    let mut reservation = if created {
        state
            .runs
            .reserve_unstored(&owner, &conversation.id)
            .await?
    } else {
        state
            .runs
            .reserve_existing(&owner, &conversation.id)
            .await?
    };

    // An older conversation's messages, read once: to answer a client's retry, to close
    // the confirmations this message leaves behind, and as the run's history.
    let mut earlier = Vec::new();
    if !created {
        let mut history = store::turn_history(&state.reads, &conversation.id, &owner, now).await?;
        if let Some(client_id) = &client_id {
            // A client that sends its message again (a retry after a lost answer) must
            // not have it answered twice.
            if history
                .messages
                .iter()
                .any(|message| message.client_id.as_ref() == Some(client_id))
            {
                return Err(ApiError::new(
                    ApiCode::DuplicateMessage,
                    "A message with this id was already received, and it is answered once \
                     (an earlier message cannot be edited: send a new one). Reload the \
                     conversation to see the answer.",
                ));
            }
        }
        if history.open_calls {
            reservation.lease_now().await?;
            close_open_calls(state, &conversation.id, &owner, &mut history.messages).await?;
        }
        earlier = history.messages;
    }
    let mut user = Message::user(store::new_row_id("msg"), text);
    user.client_id = client_id;
    let reply = Message::assistant(store::new_row_id("msg"));
    // The turn in one transaction: (a new conversation,) the person's message, the empty
    // reply and the run's row commit together or not at all, in the commit the run
    // registry's writer shares with every other reply being stored at that moment.
    reservation
        .store_turn_leased(store::Turn::new(&conversation, created, &user, &reply, now))
        .await?
        .map_err(store::StoreError::from)?;

    let agent = state.agent.clone();
    earlier.push(user);
    let known = Known {
        assistant,
        earlier: Some(earlier),
    };
    let run = reservation.start(move |tx, cancel, last| async move {
        agent
            .run_known(
                &owner,
                &conversation.id,
                Some(known),
                reply,
                tx,
                cancel,
                Some(last),
            )
            .await;
    });
    // From the first event, like every later reader of this run.
    Ok(run_sse(&run).await)
}

/// A new message closes every open confirmation: the person moved on. It is not a "no"
/// (nobody declined), so the call ends `MOVED_ON`, which the page shows as what happened
/// and from which the person can still go ahead (`POST /api/calls/reopen`).
async fn close_open_calls(
    state: &AppState,
    conversation_id: &str,
    owner: &str,
    messages: &mut [Message],
) -> Result<(), ApiError> {
    let now = (state.agent.clock)();
    let close = |message: &mut Message, pending: &store::PendingCall| {
        let error = ToolError::new(
            ErrorCode::MovedOn,
            "The user wrote a new message instead of answering this confirmation, so nothing \
             was done. Do not say it was done; if it still matters, ask whether they want it.",
        );
        message.apply(&AgentEvent::ToolOutputError {
            tool_call_id: pending.tool_call_id.clone(),
            error_text: error.message.clone(),
            error,
        });
        message.apply(&AgentEvent::finish(RunStatus::Completed, None));
    };
    store::close_open_calls(&state.db, conversation_id, owner, now, messages, close).await?;
    Ok(())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConversationQuery {
    /// `ui`: the messages as AI SDK `UIMessage`s.
    #[serde(default)]
    format: Option<String>,
}

async fn conversation(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    Path(id): Path<String>,
    query: Result<Query<ConversationQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(ApiError::from)?;
    let body = conversation_body(&state, &owner, &id).await?;
    match query.format.as_deref() {
        None | Some("datban") => Ok(Json(body).into_response()),
        Some("ui") => {
            let messages: Vec<Value> = body
                .messages
                .iter()
                .map(|message| shared::ui_message::to_ui(message, &body.id))
                .collect();
            Ok(Json(json!({
                "id": id,
                "conversationId": body.id,
                "assistant": body.assistant,
                "messages": messages,
                "running": body.running,
            }))
            .into_response())
        }
        Some(_) => Err(ApiError::new(
            ApiCode::BadRequest,
            "Unknown `format`; expected `ui` (AI SDK UIMessages) or `datban`.",
        )),
    }
}

/// With no run writing it, the conversation's last reply brought in line with what
/// happened (`runs::settle_conversation`) when a crash left them apart — cheaply: only a
/// reply that looks unfinished (no final status, or a call not at its end, or one ended
/// as stopped) is looked at in a write transaction. A failure leaves the reply as stored.
async fn settle_last_reply(state: &AppState, owner: &str, conversation_id: &str) {
    let last = match store::last_message(&state.reads, conversation_id).await {
        Ok(last) => last,
        Err(error) => {
            tracing::warn!(%error, "reading a conversation's last message failed");
            return;
        }
    };
    let Some(message) = last.filter(|message| message.role != Some(Role::User)) else {
        return;
    };
    // A reply nobody finished; else a call whose effect may have committed unseen — the
    // common case (a form waiting for its answer) costs one read per call.
    let unsettled = message.status.is_none() || {
        let mut found = false;
        for part in &message.parts {
            let shared::message::MessagePart::Tool(part) = part else {
                continue;
            };
            let cut_short = part.error().is_some_and(|error| {
                matches!(error.code, ErrorCode::Cancelled | ErrorCode::Interrupted)
            });
            if (part.is_final() && !cut_short)
                || !ToolName::parse(part.tool_name())
                    .is_some_and(|tool| tool.definition().requires_approval)
            {
                continue;
            }
            match runs::has_record(&state.reads, owner, conversation_id, part).await {
                Ok(true) => {
                    found = true;
                    break;
                }
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(%error, "reading a call's idempotency record failed");
                    return;
                }
            }
        }
        found
    };
    if !unsettled {
        return;
    }
    if let Err(error) = runs::settle_conversation(&state.db, owner, conversation_id).await {
        tracing::warn!(%error, "bringing a stored reply in line failed");
    }
}

/// Conversation `id` of `owner` with its messages, and the reply being written if any.
pub(crate) async fn conversation_body(
    state: &AppState,
    owner: &str,
    id: &str,
) -> Result<ConversationBody, ApiError> {
    let conversation = find_client_conversation(state, owner, id)
        .await?
        .ok_or_else(|| ApiError::not_found("Conversation"))?;
    // The run before the messages: a run is registered before it stores anything, so a
    // reply without status read below was written by this run — or by a later one, and
    // then this run is over and asking for it answers 204 (the client reloads).
    let current = state
        .runs
        .current(&conversation.id)
        .await
        .map_err(StoreError::from)?;
    if matches!(current, Current::None) {
        settle_last_reply(state, owner, &conversation.id).await;
    }
    let stored = store::messages_with_run_seq(&state.reads, &conversation.id).await?;
    let running = stored.last().and_then(|(message, after)| {
        let writing = message.role != Some(Role::User) && message.status.is_none();
        writing.then(|| RunningReply {
            message_id: message.id.clone(),
            run_id: current.run_id().map(str::to_owned),
            after: *after,
        })
    });
    Ok(ConversationBody {
        id: conversation.id,
        assistant: conversation.assistant,
        messages: stored.into_iter().map(|(message, _)| message).collect(),
        running,
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StreamQuery {
    /// Events already applied: the stream starts after this many (default 0: all).
    #[serde(default)]
    after: Option<u64>,
    /// The run the client follows; another run (or none) answers 204.
    #[serde(default)]
    run: Option<String>,
}

/// Reattaches to the conversation's run in progress, on this process or another: its
/// events after `after`, then live ones until it is over (`finish`, `[DONE]`). `204 No
/// Content` when no run is going (or not the one asked for).
async fn stream_run(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    Path(id): Path<String>,
    query: Result<Query<StreamQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(ApiError::from)?;
    let id = find_client_conversation(&state, &owner, &id)
        .await?
        .ok_or_else(|| ApiError::not_found("Conversation"))?
        .id;
    let current = state.runs.current(&id).await.map_err(StoreError::from)?;
    let wanted = |run_id: &str| query.run.as_deref().is_none_or(|wanted| wanted == run_id);
    let after = query.after.unwrap_or(0);
    let (events, run_id) = match current {
        Current::Local(run) if wanted(run.id()) => (run.subscribe(after), run.id().to_owned()),
        Current::Remote(run_id) if wanted(&run_id) => {
            (state.runs.follow(run_id.clone(), after), run_id)
        }
        _ => return Ok(StatusCode::NO_CONTENT.into_response()),
    };
    let events = match query.after {
        Some(_) => events,
        None => whole_reply(&state, &id, events).await?,
    };
    Ok(sse(events, &run_id))
}

/// A run's events from its start as the whole reply, for a client that asks without
/// `after` (the AI SDK's `reconnectToStream`, which starts the message over at `start`).
/// A run that writes a new message is whole by itself. One that continues a stored
/// message (after a decision) is not: its `start` is followed by the stored copy told
/// again as events ([`shared::replay`]), then the run's events after those the copy holds.
async fn whole_reply(
    state: &AppState,
    conversation_id: &str,
    mut events: runs::EventStream,
) -> Result<runs::EventStream, ApiError> {
    let Some(first) = events.next().await else {
        return Ok(events);
    };
    let resumed = match serde_json::from_str::<AgentEvent>(&first) {
        Ok(AgentEvent::Start {
            message_id,
            resumed: true,
            ..
        }) => Some(message_id),
        _ => None,
    };
    let Some(message_id) = resumed else {
        return Ok(Box::pin(stream::once(async move { first }).chain(events)));
    };
    let stored = store::messages_with_run_seq(&state.reads, conversation_id).await?;
    let Some((message, held)) = stored
        .into_iter()
        .find(|(message, _)| message.id == message_id)
    else {
        return Ok(Box::pin(stream::once(async move { first }).chain(events)));
    };
    let mut told = shared::replay::replay(&message);
    // A copy with a status is the run's last: it holds every event, so it is the whole.
    let finished = message.status;
    if let Some(status) = finished {
        told.push(AgentEvent::finish(status, Some(conversation_id.to_owned())));
    }
    let mut prefix: Vec<Arc<str>> = vec![first];
    // Plain data: serialising an event cannot fail.
    prefix.extend(
        told.iter()
            .filter_map(|event| serde_json::to_string(event).ok())
            .map(Arc::from),
    );
    if finished.is_some() {
        return Ok(Box::pin(stream::iter(prefix)));
    }
    let skip = usize::try_from(held.saturating_sub(1)).unwrap_or(usize::MAX);
    Ok(Box::pin(stream::iter(prefix).chain(events.skip(skip))))
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
    let id = find_client_conversation(&state, &owner, &id)
        .await?
        .ok_or_else(|| ApiError::not_found("Conversation"))?
        .id;
    let stopped = state.runs.stop(&id).await.map_err(StoreError::from)?;
    Ok(Json(Stopped { stopped }))
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
    let axum::extract::Query(query) = query.map_err(ApiError::from)?;
    bookings_list(&state, &owner, query.all == Some(1))
        .await
        .map(Json)
}

/// The owner's bookings (with `include_all`, cancelled and past ones too).
pub(crate) async fn bookings_list(
    state: &AppState,
    owner: &str,
    include_all: bool,
) -> Result<shared::tools::ListBookingsOutput, ApiError> {
    let now = (state.agent.clock)();
    tools::my_bookings::list_for_owner(&state.db, owner, now, include_all)
        .await
        .map_err(|error| {
            let details = match error {
                ExecError::Tool(error) => error.message,
                ExecError::Internal(details) => details,
            };
            ApiError::new(
                ApiCode::Internal,
                "Something went wrong on our side. Please try again.",
            )
            .caused_by(format_args!("listing bookings failed: {details}"))
        })
}

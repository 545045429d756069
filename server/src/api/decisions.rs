//! Decisions on confirmations (`POST /api/approvals`, and an AI SDK client's answered
//! approvals), regenerating the last reply, and reopening a confirmation closed unanswered:
//! everything that takes a stored pending call or replaces stored replies.

use super::*;

use shared::http::{ApiCode, ApprovalRequest, ReopenRequest};

pub(super) async fn approve(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    AppJson(request): AppJson<ApprovalRequest>,
) -> Result<Response, ApiError> {
    store::find_conversation(&state.reads, &request.conversation_id, &owner)
        .await?
        .ok_or_else(|| ApiError::not_found("Conversation"))?;
    let wanted = vec![Wanted {
        call_id: request.tool_call_id,
        approved: request.approved,
        edited_input: request.edited_input,
        reason: None,
    }];
    decide_all(&state, owner, &request.conversation_id, wanted).await
}

/// One decision a request carries.
pub(super) struct Wanted {
    /// The pending call's id (our approval ids are call ids).
    pub call_id: String,
    /// The decision.
    pub approved: bool,
    /// The input as the person edited it, not validated yet.
    pub edited_input: Option<Value>,
    /// Why, when the person's client said so.
    pub reason: Option<String>,
}

fn already_resolved() -> ApiError {
    ApiError::new(
        ApiCode::AlreadyResolved,
        "This confirmation was already answered; nothing more was done.",
    )
}

/// Carries out decisions on pending calls of one reply, then continues that reply in one
/// run: `POST /api/approvals` sends one, an AI SDK client every confirmation of the reply
/// at once. A call id no message of the conversation knows is `404` and nothing runs;
/// when every call was already decided it is `409 ALREADY_RESOLVED` with the stored part;
/// otherwise the calls still pending are decided and the others left as they are.
pub(super) async fn decide_all(
    state: &AppState,
    owner: String,
    conversation_id: &str,
    wanted: Vec<Wanted>,
) -> Result<Response, ApiError> {
    let mut resolved = None;
    let mut peeked = Vec::new();
    // Edits are validated before anything is taken, so a bad edit loses nothing.
    for wanted in wanted {
        let Some(pending) =
            store::peek_pending(&state.reads, conversation_id, &wanted.call_id, &owner).await?
        else {
            let answer =
                resolved_or_missing(state, conversation_id, &wanted.call_id, already_resolved())
                    .await?;
            if answer.code() == ApiCode::NotFound {
                return Err(answer);
            }
            resolved.get_or_insert(answer);
            continue;
        };
        let tool = ToolName::parse(&pending.tool_name).ok_or_else(|| {
            ApiError::new(ApiCode::Internal, "Unknown tool.").caused_by(format_args!(
                "a pending call names a tool this server has not: {}",
                pending.tool_name
            ))
        })?;
        let edited = match (&wanted.edited_input, wanted.approved) {
            (Some(value), true) => Some(
                agent::check_edit(
                    &state.agent,
                    tool,
                    value,
                    &owner,
                    conversation_id,
                    &wanted.call_id,
                )
                .await
                .map_err(rejected)?,
            ),
            _ => None,
        };
        peeked.push((wanted, pending, tool, edited));
    }
    if peeked.is_empty() {
        return Err(resolved.unwrap_or_else(already_resolved));
    }
    // The conversation's place, before the take: a refused decision (too many runs) must
    // leave the calls pending. Waits for a run still writing this conversation (another
    // decision of the same turn); dropped, it is given back (when the take finds nothing).
    let reservation = state
        .runs
        .reserve(&owner, conversation_id, Some(DECISION_WAIT))
        .await?;
    // An unedited approval is taken only on the facts the form showed: when they changed
    // (the slot filled up), the person sees the new ones and decides again.
    for (wanted, pending, tool, edited) in &peeked {
        if wanted.approved && edited.is_none() {
            if let Err(changed) = agent::recheck_preview(&state.agent, *tool, pending).await {
                return Err(ApiError::new(
                    ApiCode::PreviewChanged,
                    "What this confirmation would do changed since it was shown (for \
                         example the time slot filled up); nothing was done. Review the \
                         updated form and decide again.",
                )
                .with_outcome(Some(changed.part)));
            }
        }
    }
    // The atomic takes: of simultaneous decisions on a call exactly one gets it.
    let mut taken = Vec::new();
    let mut held = false;
    for (wanted, pending, _, edited) in peeked {
        let Some(call) = store::take_pending(
            &state.db,
            conversation_id,
            &pending.tool_call_id,
            &owner,
            (state.agent.clock)(),
            Some(reservation.run().id()),
        )
        .await?
        else {
            // Decided meanwhile, or held by a decision being carried out (here or on
            // another replica, alive or not yet found dead): the latter is no answer.
            held |=
                store::peek_pending(&state.reads, conversation_id, &pending.tool_call_id, &owner)
                    .await?
                    .is_some();
            continue;
        };
        taken.push((
            call,
            Decision {
                approved: wanted.approved,
                edited,
                reason: wanted.reason,
            },
        ));
    }
    if taken.is_empty() {
        if held {
            return Err(ApiError::new(
                ApiCode::DecisionInProgress,
                "This confirmation is being carried out right now; nothing more was done. \
                 Reload the conversation in a moment to see the result (if the server \
                 carrying it out stopped, the confirmation can be answered again then).",
            ));
        }
        return Err(already_resolved());
    }
    let agent = state.agent.clone();
    let run = reservation.start(move |tx, cancel, last| async move {
        agent.resume(taken, tx, cancel, Some(last)).await;
    });
    Ok(run_sse(&run).await)
}

/// The last reply written again, as a new run: the replies after the person's last
/// message are replaced by one new reply. Their open confirmations close with them. What
/// they already did stays done and is not done again: each call that was carried out
/// (approved and executed) begins the new reply as it ended, so the model and the person
/// see it; a side effect the model proposes anew needs a new approval.
pub(super) async fn regenerate(
    state: &AppState,
    owner: String,
    conversation: store::Conversation,
    message_id: Option<&str>,
) -> Result<Response, ApiError> {
    let assistant = conversation.assistant;
    let reservation = state.runs.reserve(&owner, &conversation.id, None).await?;
    let now = (state.agent.clock)();
    let mut messages = store::messages(&state.db, &conversation.id).await?;
    let Some(last_user) = messages
        .iter()
        .rposition(|message| message.role == Some(Role::User))
    else {
        return Err(ApiError::new(
            ApiCode::NothingToRegenerate,
            "This conversation has no message to answer again.",
        ));
    };
    let replaced = messages.split_off(last_user + 1);
    // Only the newest reply can be written again: an older one is followed by what came
    // after it, which a client that asked for it would drop and the server would keep.
    let names =
        |message: &Message, id: &str| message.id == id || message.client_id.as_deref() == Some(id);
    if let Some(id) = message_id {
        let newest = replaced.iter().any(|message| names(message, id))
            || messages.last().is_some_and(|message| names(message, id));
        if !newest {
            return Err(ApiError::new(
                ApiCode::NotLastReply,
                "Only the last reply can be regenerated; send a new message instead.",
            ));
        }
    }
    let carried: Vec<_> = replaced
        .iter()
        .flat_map(|message| &message.parts)
        .filter_map(|part| match part {
            shared::message::MessagePart::Tool(tool) if agent::was_carried_out(tool) => {
                Some(tool.as_ref().clone())
            }
            _ => None,
        })
        .collect();
    let reply = Message::assistant(store::new_row_id("msg"));
    let replaced_ids: Vec<&str> = replaced.iter().map(|message| message.id.as_str()).collect();
    store::replace_replies(
        &state.db,
        &conversation.id,
        &owner,
        &replaced_ids,
        &reply,
        now,
    )
    .await?;
    let agent = state.agent.clone();
    let known = Known {
        assistant,
        earlier: Some(messages),
    };
    let conversation_id = conversation.id;
    let run = reservation.start(move |tx, cancel, last| async move {
        agent
            .regenerate(
                &owner,
                &conversation_id,
                known,
                reply,
                carried,
                tx,
                cancel,
                last,
            )
            .await;
    });
    Ok(run_sse(&run).await)
}

/// A refused edit or reopened call, as the page reads it: `422 VALIDATION_ERROR` with the
/// issues, so the person is told which field and why in their language.
fn rejected(rejected: EditRejected) -> ApiError {
    match rejected {
        EditRejected::Invalid(error) => {
            ApiError::new(ApiCode::ValidationError, error.message).with_issues(error.issues)
        }
        EditRejected::Internal => ApiError::new(
            ApiCode::Internal,
            "Something went wrong on our side. Please try again.",
        ),
    }
}

/// Takes up again a confirmation that was closed because the person wrote something else
/// (`MOVED_ON`): the same input, validated and checked against the data as a new call,
/// stored as a new pending call in a new assistant message, which the answer carries. The
/// new call's id is derived from the old one, so reopening twice gives the same call (and
/// its effect, keyed by that id, can happen once). Nothing runs until it is approved.
pub(super) async fn reopen(
    State(state): State<AppState>,
    Extension(OwnerId(owner)): Extension<OwnerId>,
    AppJson(request): AppJson<ReopenRequest>,
) -> Result<Response, ApiError> {
    let conversation = store::find_conversation(&state.reads, &request.conversation_id, &owner)
        .await?
        .ok_or_else(|| ApiError::not_found("Conversation"))?;
    let again_id = format!("again_{}", request.tool_call_id);
    // One writer per conversation: no run, decision or other reopen meanwhile.
    let reservation = state
        .runs
        .reserve(&owner, &conversation.id, Some(DECISION_WAIT))
        .await?;
    let messages = store::messages(&state.reads, &conversation.id).await?;
    // An earlier try that failed on our side is tried again, not given as the answer.
    let mut failed_try = None;
    if let Some(existing) = messages
        .iter()
        .find(|message| message.tool_part(&again_id).is_some())
    {
        if !failed_on_our_side(existing, &again_id) {
            return Ok(Json(json!({ "message": existing })).into_response());
        }
        failed_try = Some(existing.id.as_str());
    }
    let part = messages
        .iter()
        .find_map(|message| message.tool_part(&request.tool_call_id))
        .ok_or_else(|| ApiError::not_found("Confirmation"))?;
    let moved_on =
        matches!(part.outcome(), CallOutcome::Error(error) if error.code == ErrorCode::MovedOn);
    let tool = ToolName::parse(part.tool_name()).filter(|_| moved_on);
    let (Some(tool), Some(input)) = (tool, part.input_json()) else {
        return Err(ApiError::new(
            ApiCode::NotReopenable,
            "Only a confirmation that was closed because a new message was sent can be taken \
             up again.",
        ));
    };
    let assistant = conversation.assistant;
    agent::check_edit(
        &state.agent,
        tool,
        &input,
        &owner,
        &conversation.id,
        &again_id,
    )
    .await
    .map_err(rejected)?;
    // What an earlier try left (its failed message, a call stored without its form) goes
    // first, so this try stores the call once and shows it once.
    store::forget_failed_call(&state.db, &conversation.id, &owner, &again_id, failed_try).await?;
    let message = Message::assistant(store::new_id("msg"));
    store::append_message(&state.db, &conversation.id, &message, (state.agent.clock)()).await?;
    let message = state
        .agent
        .call_directly(
            assistant,
            agent::Home::Stored {
                owner_id: &owner,
                conversation_id: &conversation.id,
            },
            message,
            agent::DirectCall {
                id: again_id.clone(),
                name: tool.as_str().to_owned(),
                arguments: input.to_string(),
            },
        )
        .await;
    if failed_on_our_side(&message, &again_id) {
        // Our storage failed, not the person's request: nothing is left to decide, and
        // the person may try again (which clears this try if this could not).
        if let Err(error) = store::forget_failed_call(
            &state.db,
            &conversation.id,
            &owner,
            &again_id,
            Some(&message.id),
        )
        .await
        {
            tracing::warn!(%error, "clearing a failed reopen failed");
        }
        drop(reservation);
        return Err(ApiError::new(
            ApiCode::StorageUnavailable,
            "Something went wrong on our side; nothing was changed. Please try again.",
        ));
    }
    drop(reservation);
    Ok(Json(json!({ "message": message })).into_response())
}

/// Whether call `id` of `message` ended because something failed on our side before its
/// form could be shown (its call could not be stored, say), not for anything the person
/// or the data decided.
fn failed_on_our_side(message: &Message, id: &str) -> bool {
    message.tool_part(id).is_some_and(|part| {
        matches!(part.outcome(), CallOutcome::Error(error) if error.code == ErrorCode::ExecutionFailed)
    })
}

/// The answer to a decision on a call that is not pending (any more): `409
/// ALREADY_RESOLVED` carrying the call's part as the conversation stores it (its state, and
/// its output or error), so a replayed decision gets the stored outcome and nothing runs a
/// second time; `404` when no message of this conversation knows the call id (an id made
/// up, or one of another conversation).
async fn resolved_or_missing(
    state: &AppState,
    conversation_id: &str,
    call_id: &str,
    already: ApiError,
) -> Result<ApiError, ApiError> {
    let messages = store::messages(&state.reads, conversation_id).await?;
    let part = messages
        .iter()
        .find_map(|message| message.tool_part(call_id));
    Ok(match part {
        Some(part) => {
            // A part is plain data; should it ever fail to serialise, the 409 still says
            // that nothing more was done, only without the details.
            already.with_outcome(serde_json::to_value(part).ok())
        }
        None => ApiError::not_found("Confirmation"),
    })
}

//! Tool calls that come from outside the loop (an MCP host calling a tool itself), handled
//! by the loop's own steps: the allow-list, the validator and its cross-field rules, the
//! pre-checks against data, the pending row of a call that waits for approval, the
//! executors and their error mapping, and the decision path of `POST /api/approvals`.
//! Only the model is missing: nothing here asks it to continue.

use serde_json::Value;
use shared::{
    events::AgentEvent,
    message::{Message, RunStatus},
    tools::{
        validate_arguments, Assistant, ErrorCode, Rule, ToolError, ToolInput, ToolName,
        ValidationContext,
    },
};
use tokio_util::sync::CancellationToken;

use super::{
    decisions::{give_back, Decided, DECISION_NOT_SAVED},
    Agent, Call, Decision, EventSender, Run,
};
use crate::{
    security::MAX_ARGUMENT_BYTES,
    store::{self, PendingCall, TakenCall},
    tools::{self, ExecError, ToolContext},
};

/// Why a person's edit of a pending call was refused; the call stays pending.
#[derive(Debug)]
pub enum EditRejected {
    /// The edit breaks the schema, a rule, or the data (the restaurant is closed then…):
    /// the error says which, as precisely as for a model's call, with its issues for the
    /// person's sentence.
    Invalid(ToolError),
    /// Checking it failed on our side (logged).
    Internal,
}

/// Checks a person's edit of a pending call of `tool` as the call itself was checked
/// (schema, cross-field rules, pre-checks against data), before the call is taken, so a
/// bad edit loses nothing.
pub async fn check_edit(
    agent: &Agent,
    tool: ToolName,
    edited: &Value,
    owner_id: &str,
    conversation_id: &str,
    call_id: &str,
) -> Result<ToolInput, EditRejected> {
    if !edited.is_object() {
        return Err(EditRejected::Invalid(
            ToolError::new(
                ErrorCode::ValidationError,
                "The edited input must be an object.",
            )
            .at("", Rule::NotObject),
        ));
    }
    let now = (agent.clock)();
    let input = validate_arguments(tool, &edited.to_string(), &ValidationContext { now })
        .map_err(|invalid| EditRejected::Invalid(ToolError::from(invalid)))?;
    let ctx = ToolContext {
        reads: agent.reads.clone(),
        db: agent.db.clone(),
        owner_id: owner_id.to_owned(),
        conversation_id: conversation_id.to_owned(),
        call_id: call_id.to_owned(),
        now,
        upstreams: agent.upstreams.clone(),
        catalogue: agent.catalogue.clone(),
        take: None,
    };
    match tools::precheck(&input, &ctx).await {
        Ok(_) => Ok(input),
        Err(ExecError::Tool(error)) => Err(EditRejected::Invalid(error)),
        Err(ExecError::Internal(details)) => {
            tracing::error!(%details, "precheck of edited input failed");
            Err(EditRejected::Internal)
        }
    }
}

/// Why a decision to approve was not taken: the facts the person saw changed.
#[derive(Debug)]
pub struct PreviewChanged {
    /// The call's part as stored now, with the fresh preview the form must show.
    pub part: Value,
}

/// Before an unedited approval is taken: computes the call's preview again and compares it
/// with the one the person was shown. When they differ in what matters (the slot filled
/// up, the booking changed), the stored part gets the fresh preview and the decision is
/// refused, so nothing runs on facts the person never saw; the call stays pending.
///
/// Anything else — no preview was shown (a message stored before previews), the input is
/// now invalid, a check failed — is left to the decision itself, which validates and
/// reports exactly as for a fresh call.
pub async fn recheck_preview(
    agent: &Agent,
    tool: ToolName,
    pending: &PendingCall,
) -> Result<(), PreviewChanged> {
    let now = (agent.clock)();
    let Ok(input) = validate_arguments(tool, &pending.input, &ValidationContext { now }) else {
        return Ok(());
    };
    let ctx = ToolContext {
        reads: agent.reads.clone(),
        db: agent.db.clone(),
        owner_id: pending.owner_id.clone(),
        conversation_id: pending.conversation_id.clone(),
        call_id: pending.tool_call_id.clone(),
        now,
        upstreams: agent.upstreams.clone(),
        catalogue: agent.catalogue.clone(),
        take: None,
    };
    let fresh = match tools::precheck(&input, &ctx).await {
        Ok(Some(fresh)) => fresh,
        Ok(None) | Err(ExecError::Tool(_)) => return Ok(()),
        Err(ExecError::Internal(details)) => {
            tracing::warn!(%details, "preview re-check failed; the decision goes on");
            return Ok(());
        }
    };
    let message =
        match store::message(&agent.reads, &pending.conversation_id, &pending.message_id).await {
            Ok(Some(message)) => message,
            Ok(None) => return Ok(()),
            Err(error) => {
                tracing::warn!(%error, "reading the pending call's message failed");
                return Ok(());
            }
        };
    let shown = message
        .tool_part(&pending.tool_call_id)
        .and_then(|part| part.preview().cloned());
    let Some(shown) = shown else {
        return Ok(());
    };
    if !shown.differs_materially(&fresh) {
        return Ok(());
    }
    let mut message = message;
    message.apply(&AgentEvent::ToolApprovalRequest {
        approval_id: pending.tool_call_id.clone(),
        tool_call_id: pending.tool_call_id.clone(),
        preview: Some(fresh),
    });
    if let Err(error) = store::save_message(&agent.db, &pending.conversation_id, &message).await {
        // Not saved: the person is still told, and the next decision checks again.
        tracing::warn!(%error, "saving the fresh preview failed");
    }
    let part = message
        .tool_part(&pending.tool_call_id)
        .and_then(|part| serde_json::to_value(part).ok())
        .unwrap_or(Value::Null);
    Err(PreviewChanged { part })
}

/// One call proposed outside the loop.
#[derive(Debug, Clone)]
pub struct DirectCall {
    /// Its id: unique in its conversation, and the idempotency key of its effect.
    pub id: String,
    /// The tool's name as the caller wrote it (checked against the allow-list).
    pub name: String,
    /// The arguments, JSON text as received.
    pub arguments: String,
}

/// Where a direct call's message lives.
pub enum Home<'a> {
    /// Stored in this conversation of this owner; the message was appended (empty) by the
    /// caller. Calls that need approval can only be made here.
    Stored {
        /// Whose call it is.
        owner_id: &'a str,
        /// The conversation holding its message.
        conversation_id: &'a str,
    },
    /// Nothing is stored: a public tool called by nobody in particular.
    Nowhere,
}

impl Agent {
    /// Handles one call exactly as a step handles a model's, and returns the message with
    /// the call's part in its final state (or waiting for approval).
    pub async fn call_directly(
        &self,
        assistant: Assistant,
        home: Home<'_>,
        message: Message,
        call: DirectCall,
    ) -> Message {
        let (owner_id, conversation_id, persist) = match home {
            Home::Stored {
                owner_id,
                conversation_id,
            } => (owner_id, conversation_id, true),
            Home::Nowhere => ("", "", false),
        };
        let mut run = Run::new(
            self,
            owner_id,
            conversation_id,
            message,
            EventSender::calling(|_| {}),
            CancellationToken::new(),
        );
        run.persist = persist;
        run.assistant = assistant;
        run.start();
        run.emit(AgentEvent::StartStep);
        run.emit(AgentEvent::ToolInputStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
        });
        let oversize = call.arguments.len() > MAX_ARGUMENT_BYTES;
        let (_, pending) = run
            .handle_calls(vec![Call {
                id: call.id,
                name: call.name,
                raw: call.arguments,
                oversize,
            }])
            .await;
        run.emit(AgentEvent::FinishStep);
        let status = if pending > 0 {
            RunStatus::AwaitingApproval
        } else {
            RunStatus::Completed
        };
        run.close(status).await;
        run.message
    }

    /// Carries out a person's decision on a taken pending call as `POST /api/approvals`
    /// does (re-validation, the effect with its idempotency record, the decision given
    /// back if our storage fails), without the model's turn that follows on the page.
    /// Returns the message and whether the decision was carried out (`false`: given back,
    /// the call is pending again).
    pub async fn decide_directly(
        &self,
        taken: TakenCall,
        decision: Decision,
    ) -> Result<(Message, bool), crate::store::StoreError> {
        let pending = taken.call.clone();
        let message = match crate::store::message(
            &self.db,
            &pending.conversation_id,
            &pending.message_id,
        )
        .await
        {
            Ok(Some(message)) => message,
            Ok(None) => {
                tracing::error!(call = %pending.tool_call_id, "pending call's message is missing");
                give_back(&self.db, &taken).await;
                return Err(crate::store::StoreError::Corrupt {
                    id: pending.message_id,
                    reason: "missing".into(),
                });
            }
            Err(error) => {
                give_back(&self.db, &taken).await;
                return Err(error);
            }
        };
        let mut run = Run::new(
            self,
            &pending.owner_id,
            &pending.conversation_id,
            message,
            EventSender::calling(|_| {}),
            CancellationToken::new(),
        );
        if !run.load_assistant().await {
            give_back(&self.db, &taken).await;
            return Err(crate::store::StoreError::Corrupt {
                id: pending.conversation_id,
                reason: "unknown assistant".into(),
            });
        }
        run.start();
        let decided = run.decide(&taken, decision).await;
        if decided == Decided::GivenBack {
            run.emit(AgentEvent::Error {
                error_text: DECISION_NOT_SAVED.into(),
            });
            run.close(RunStatus::AwaitingApproval).await;
            return Ok((run.message, false));
        }
        run.close(RunStatus::Completed).await;
        Ok((run.message, true))
    }
}

//! People's decisions: carrying out the taken pending calls of a reply and going on with
//! it, and writing the last reply again with the calls it carried out kept as they ended.

use super::*;

/// What a person is told when our own storage failed while carrying out their decision:
/// nothing happened, and the confirmation is theirs to send again.
pub(super) const DECISION_NOT_SAVED: &str = "Chưa thực hiện được vì máy chủ đang bận — chưa có gì \
được đặt. Xác nhận vẫn còn đó, bạn hãy thử lại. (The server could not carry this out; \
nothing was done. The confirmation is still open: please try again.)";

/// Whether a decision was carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Decided {
    /// Answered: the call's part is final (output, error or denied).
    Answered,
    /// Our storage failed before anything happened: the call is pending again and its
    /// part still asks for approval.
    GivenBack,
}

/// Makes a taken call pending again; if even that fails, its take expires by itself.
pub(super) async fn give_back(db: &Pool, taken: &TakenCall) {
    if let Err(error) = store::release_pending(db, taken).await {
        tracing::error!(%error, call = %taken.call.tool_call_id, "giving a decision back failed");
    }
}

/// Whether a call in a reply was carried out: approved and executed, with a result. Such a
/// call is kept when the reply is written again, never run a second time.
pub fn was_carried_out(part: &ToolPart) -> bool {
    let effect =
        ToolName::parse(part.tool_name()).is_some_and(|tool| tool.definition().requires_approval);
    effect && matches!(part.outcome(), CallOutcome::Output(_))
}

/// The events that rebuild a carried-out call's part as it ended, its approval restated
/// as an earlier one (the person is not asked again).
fn carried_events(part: &ToolPart) -> Vec<AgentEvent> {
    let (Some(input), CallOutcome::Output(output)) = (part.input_json(), part.outcome()) else {
        return Vec::new();
    };
    let id = part.id().to_owned();
    let approval_id = part
        .approval()
        .map_or_else(|| id.clone(), |approval| approval.id.clone());
    let mut decided = AgentEvent::decided(&id, true, None);
    if let AgentEvent::ToolApprovalResponse { data, .. } = &mut decided {
        data.approval_id.clone_from(&approval_id);
        data.earlier = true;
    }
    vec![
        AgentEvent::ToolInputAvailable {
            tool_call_id: id.clone(),
            tool_name: part.tool_name().to_owned(),
            input,
        },
        AgentEvent::ToolApprovalRequest {
            approval_id,
            tool_call_id: id.clone(),
            preview: None,
        },
        decided,
        AgentEvent::ToolOutputAvailable {
            tool_call_id: id,
            output,
        },
    ]
}

impl Agent {
    /// Records the person's decisions on taken pending calls of one message, executes the
    /// approved ones, and resumes the loop once no call of that message is pending any more.
    pub async fn resume(
        &self,
        taken: Vec<(TakenCall, Decision)>,
        tx: EventSender,
        cancel: CancellationToken,
        last: Option<LastSave>,
    ) -> RunStatus {
        let Some((first, _)) = taken.first() else {
            tx.send(AgentEvent::Error {
                error_text: "Nothing to decide.".into(),
            });
            return RunStatus::Error;
        };
        let pending = first.call.clone();
        let loaded =
            store::message(&self.reads, &pending.conversation_id, &pending.message_id).await;
        let message = match loaded {
            Ok(Some(message)) => message,
            Ok(None) => {
                tracing::error!(call = %pending.tool_call_id, "pending call's message is missing");
                tx.send(AgentEvent::Error {
                    error_text: "This conversation could not be loaded.".into(),
                });
                return RunStatus::Error;
            }
            Err(error) => {
                // Nothing was decided: the person's decisions are given back, not used up.
                tracing::error!(%error, call = %pending.tool_call_id, "loading message failed");
                for (call, _) in &taken {
                    give_back(&self.db, call).await;
                }
                tx.send(AgentEvent::Error {
                    error_text: DECISION_NOT_SAVED.into(),
                });
                return RunStatus::Error;
            }
        };
        let mut run = Run::new(
            self,
            &pending.owner_id,
            &pending.conversation_id,
            message,
            tx,
            cancel,
        );
        run.last = last;
        // Saved at once: the stored copy then says the reply is being written again (no
        // status), so a reload now follows this run instead of showing the old pause.
        run.start_resumed().await;
        if !run.load_assistant().await {
            for (call, _) in &taken {
                give_back(&self.db, call).await;
            }
            return run.finish(RunStatus::Error).await;
        }
        let mut given_back = false;
        for (call, decision) in taken {
            if call.call.message_id != pending.message_id {
                // Decisions continue one reply; a call of another waits for its own.
                give_back(&self.db, &call).await;
                continue;
            }
            given_back |= run.decide(&call, decision).await == Decided::GivenBack;
        }
        if given_back {
            // Such a part is still "approval-requested" and its call pending: the stored
            // message says so too, and the form can be sent again.
            run.emit(AgentEvent::Error {
                error_text: DECISION_NOT_SAVED.into(),
            });
            return run.finish(RunStatus::AwaitingApproval).await;
        }
        run.save().await;
        match store::pending_count(&self.reads, &pending.message_id).await {
            Ok(0) => {}
            Ok(_) => return run.finish(RunStatus::AwaitingApproval).await,
            Err(error) => {
                tracing::error!(%error, "counting pending calls failed");
                return run.finish(RunStatus::Error).await;
            }
        }
        let status = run.steps().await;
        run.finish(status).await
    }

    /// Writes `reply` (stored, empty) as the new answer to the conversation's last
    /// message: the calls `carried` from the replies it replaces first, as they ended
    /// (they are not run again), then the model's turns.
    #[allow(clippy::too_many_arguments)]
    pub async fn regenerate(
        &self,
        owner_id: &str,
        conversation_id: &str,
        known: Known,
        reply: Message,
        carried: Vec<ToolPart>,
        tx: EventSender,
        cancel: CancellationToken,
        last: LastSave,
    ) -> RunStatus {
        let mut run = Run::new(self, owner_id, conversation_id, reply, tx, cancel);
        run.last = Some(last);
        run.assistant = known.assistant;
        run.earlier = known.earlier;
        run.start();
        if !carried.is_empty() {
            run.emit(AgentEvent::StartStep);
            for part in &carried {
                for event in carried_events(part) {
                    run.emit(event);
                }
            }
            run.emit(AgentEvent::FinishStep);
            run.save_later().await;
        }
        let status = run.steps().await;
        run.finish(status).await
    }
}

impl Run<'_> {
    /// Records the decision and runs the call if approved. The taken pending row goes away
    /// with the effect's transaction when there is an effect, and right after the decision
    /// otherwise, before the message is saved: a crash can then leave a call pending, or
    /// answered, but never answered-but-not-done nor done twice.
    pub(super) async fn decide(&mut self, taken: &TakenCall, decision: Decision) -> Decided {
        let pending = &taken.call;
        let edited_json = decision.edited.as_ref().map(ToolInput::to_json);
        let mut response =
            AgentEvent::decided(&pending.tool_call_id, decision.approved, edited_json);
        if let AgentEvent::ToolApprovalResponse { data, .. } = &mut response {
            data.reason.clone_from(&decision.reason);
        }
        if !decision.approved {
            // The decline is recorded (the row deleted) before the part says so.
            if !self.finish_pending(taken).await {
                give_back(&self.agent.db, taken).await;
                return Decided::GivenBack;
            }
            crate::metrics::decided(false);
            crate::metrics::tool_call(&pending.tool_name, Outcome::Declined, None);
            tracing::info!(tool = %pending.tool_name, call = %pending.tool_call_id, "declined");
            self.emit(response);
            self.emit(AgentEvent::ToolOutputDenied {
                tool_call_id: pending.tool_call_id.clone(),
            });
            return Decided::Answered;
        }
        let Some(tool) = ToolName::parse(&pending.tool_name) else {
            self.finish_pending(taken).await;
            self.emit(response);
            self.output_error(
                &pending.tool_call_id,
                ToolName::CreateBooking,
                ExecError::Internal(format!(
                    "pending call has unknown tool {}",
                    pending.tool_name
                )),
            );
            return Decided::Answered;
        };
        // The stored input is validated again: time has passed since it was proposed.
        let now = (self.agent.clock)();
        let input = match decision.edited {
            Some(input) => Ok(input),
            None => validate_arguments(tool, &pending.input, &ValidationContext { now }),
        };
        let input = match input {
            Ok(input) => input,
            Err(invalid) => {
                self.finish_pending(taken).await;
                self.emit(response);
                self.output_error(
                    &pending.tool_call_id,
                    tool,
                    ExecError::Tool(
                        ToolError::new(
                            ErrorCode::ValidationError,
                            format!("Invalid arguments for {tool}: {invalid}. Nothing was run."),
                        )
                        .with_issues(invalid.issues),
                    ),
                );
                return Decided::Answered;
            }
        };
        let mut ctx = self.context(&pending.tool_call_id);
        ctx.take = Some(taken.token.clone());
        let started = std::time::Instant::now();
        let result = tools::execute(&input, &ctx)
            .instrument(tracing::info_span!("tool_call", %tool, call = %pending.tool_call_id, approved = true))
            .await;
        let took = started.elapsed();
        if let Err(ExecError::Internal(details)) = &result {
            // An effect runs in one transaction with its idempotency record and the
            // deletion of its pending row; an internal failure rolled all of it back.
            // Our failure must not use up the person's decision: the call is pending
            // again, and its part (no response was emitted yet) still asks for approval.
            tracing::error!(%tool, call = %pending.tool_call_id, %details, "an approved call failed on our side; its decision is given back");
            give_back(&self.agent.db, taken).await;
            return Decided::GivenBack;
        }
        crate::metrics::decided(true);
        let outcome = if result.is_ok() {
            Outcome::Ok
        } else {
            Outcome::Failed
        };
        crate::metrics::tool_call(tool.as_str(), outcome, Some(took));
        tracing::info!(%tool, call = %pending.tool_call_id, outcome = ?outcome, ms = took.as_millis() as u64, "approved call ran");
        // A success deleted the row with its effect; a failure is answered now.
        self.finish_pending(taken).await;
        // The response only now, with its outcome: until the effect is done (or surely
        // failed) the decision may still be given back.
        self.emit(response);
        match result {
            Ok(output) => self.emit(AgentEvent::ToolOutputAvailable {
                tool_call_id: pending.tool_call_id.clone(),
                output,
            }),
            Err(error) => self.output_error(&pending.tool_call_id, tool, error),
        }
        Decided::Answered
    }

    /// Deletes a decided call's row; `false` when storage failed (then its take expires
    /// by itself, and its idempotency key still keeps any effect to one).
    async fn finish_pending(&self, taken: &TakenCall) -> bool {
        match store::finish_pending(&self.agent.db, taken).await {
            Ok(()) => true,
            Err(error) => {
                tracing::error!(%error, call = %taken.call.tool_call_id, "finishing a pending call failed");
                false
            }
        }
    }
}

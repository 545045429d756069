//! One step's proposed calls: each answered, run or stored for approval, and the errors
//! the model and the person are told.

use super::*;

impl Run<'_> {
    /// Handles one turn's calls; returns (failed calls, calls now pending approval).
    pub(super) async fn handle_calls(&mut self, calls: Vec<Call>) -> (usize, usize) {
        let now = (self.agent.clock)();
        let mut errors = 0;
        let mut pending = 0;
        let mut runnable = Vec::new();
        for call in calls {
            // The allow-list: another assistant's tool is as unknown here as a made-up one.
            let allowed = ToolName::parse(&call.name).filter(|t| self.assistant.allows(*t));
            let Some(tool) = allowed else {
                errors += 1;
                crate::metrics::tool_call(&call.name, Outcome::Invalid, None);
                let error = ToolError::new(
                    ErrorCode::UnknownTool,
                    format!(
                        "There is no tool named \"{}\". Available tools: {}.",
                        call.name,
                        self.assistant.available()
                    ),
                )
                .at(
                    "",
                    Rule::NoSuch {
                        entity: Entity::Tool,
                    },
                );
                self.input_error(&call, error);
                continue;
            };
            if call.oversize {
                // Not parsed: the text is cut short, and parsing it would only cost time.
                errors += 1;
                crate::metrics::tool_call(tool.as_str(), Outcome::Invalid, None);
                let error = ToolError::new(
                    ErrorCode::ValidationError,
                    format!(
                        "Invalid arguments for {tool}: arguments too large (limit {} KiB). \
                         Nothing was run.",
                        crate::security::MAX_ARGUMENT_BYTES / 1024
                    ),
                )
                .at(
                    "",
                    Rule::TooLarge {
                        limit_kib: u32::try_from(crate::security::MAX_ARGUMENT_BYTES / 1024)
                            .unwrap_or(u32::MAX),
                    },
                );
                self.emit(AgentEvent::ToolInputError {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    input: Value::Object(serde_json::Map::new()),
                    error_text: error.message.clone(),
                    error,
                });
                continue;
            }
            let input = match validate_arguments(tool, &call.raw, &ValidationContext { now }) {
                Ok(input) => input,
                Err(invalid) => {
                    errors += 1;
                    crate::metrics::tool_call(tool.as_str(), Outcome::Invalid, None);
                    let error = ToolError::new(
                        ErrorCode::ValidationError,
                        format!(
                            "Invalid arguments for {tool}: {invalid}. Nothing was run. Fix the \
                             arguments, or ask the user for what is missing; do not guess."
                        ),
                    )
                    .with_issues(invalid.issues);
                    self.input_error(&call, error);
                    continue;
                }
            };
            self.emit(AgentEvent::ToolInputAvailable {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                input: input.to_json(),
            });
            if !tool.definition().requires_approval {
                runnable.push((call.id, input));
                continue;
            }
            if !self.persist {
                // Only a person may be asked, and only in a stored conversation; callers
                // outside the page sign in before reaching a tool with effects.
                errors += 1;
                self.output_error(
                    &call.id,
                    tool,
                    ExecError::Internal("a call that needs approval came without an owner".into()),
                );
                continue;
            }
            let ctx = self.context(&call.id);
            let preview = match tools::precheck(&input, &ctx).await {
                Ok(preview) => preview,
                Err(error) => {
                    errors += 1;
                    crate::metrics::tool_call(tool.as_str(), Outcome::Invalid, None);
                    self.output_error(&call.id, tool, error);
                    continue;
                }
            };
            let stored = PendingCall {
                tool_call_id: call.id.clone(),
                conversation_id: self.conversation_id.clone(),
                owner_id: self.owner_id.clone(),
                message_id: self.message.id.clone(),
                tool_name: tool.as_str().to_owned(),
                input: input.to_json().to_string(),
            };
            let request = AgentEvent::ToolApprovalRequest {
                approval_id: call.id.clone(),
                tool_call_id: call.id.clone(),
                preview,
            };
            if let Err(error) = Box::pin(self.store_pending(stored, &request, now)).await {
                errors += 1;
                self.output_error(&call.id, tool, ExecError::Internal(error.to_string()));
                continue;
            }
            pending += 1;
            crate::metrics::tool_call(tool.as_str(), Outcome::AwaitingApproval, None);
            tracing::info!(%tool, call = %call.id, "call waits for the person's decision");
            self.emit(request);
        }

        // Read-only calls of one turn run concurrently; each result is matched by call id.
        let mut running: FuturesUnordered<_> =
            runnable
                .into_iter()
                .map(|(id, input)| {
                    let ctx = self.context(&id);
                    let cancel = self.cancel.clone();
                    let span = tracing::info_span!("tool_call", tool = %input.tool(), call = %id);
                    async move {
                    let started = std::time::Instant::now();
                    // A stop drops the running tool's future: it is cancelled where it
                    // awaits, and a transaction it had open rolls back.
                    let result = tokio::select! {
                        () = cancel.cancelled() => Err(ExecError::Tool(ToolError::new(
                            ErrorCode::Cancelled,
                            "Stopped by the person before the tool finished.",
                        ))),
                        result = tools::execute(&input, &ctx) => result,
                    };
                    let took = started.elapsed();
                    let outcome = if result.is_ok() { Outcome::Ok } else { Outcome::Failed };
                    crate::metrics::tool_call(input.tool().as_str(), outcome, Some(took));
                    tracing::info!(outcome = ?outcome, ms = took.as_millis() as u64, "tool call");
                    (id, input.tool(), result)
                }
                .instrument(span)
                })
                .collect();
        let mut finished = Vec::new();
        while let Some(done) = running.next().await {
            finished.push(done);
        }
        drop(running);
        for (id, tool, result) in finished {
            match result {
                Ok(output) => self.emit(AgentEvent::ToolOutputAvailable {
                    tool_call_id: id,
                    output,
                }),
                Err(error) => {
                    errors += 1;
                    self.output_error(&id, tool, error);
                }
            }
        }
        (errors, pending)
    }

    /// Stores a call waiting for approval, durably, before its form (`request`) is
    /// streamed. With the run registry, the call and the message as `request` will leave
    /// it (showing the form) go in one synced commit of the registry's writer; without
    /// it, the call is stored on its own and the message after the step.
    async fn store_pending(
        &self,
        call: PendingCall,
        request: &AgentEvent,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), store::StoreError> {
        let Some(last) = &self.last else {
            return store::insert_pending(&self.agent.db, &call, now).await;
        };
        let mut shown = self.message.clone();
        shown.apply(request);
        let save = store::MessageSave::of(&self.conversation_id, &shown, self.emitted + 1);
        last.store_pending(call, now, save).await
    }

    pub(super) fn input_error(&mut self, call: &Call, error: ToolError) {
        let input =
            serde_json::from_str(&call.raw).unwrap_or_else(|_| Value::String(call.raw.clone()));
        self.emit(AgentEvent::ToolInputError {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            input,
            error_text: error.message.clone(),
            error,
        });
    }

    pub(super) fn output_error(&mut self, call_id: &str, tool: ToolName, error: ExecError) {
        let error = match error {
            ExecError::Tool(error) => error,
            ExecError::Internal(details) => {
                // The full story stays here; the model and the person get a short message.
                tracing::error!(%tool, call = %call_id, %details, "tool execution failed");
                ToolError::new(ErrorCode::ExecutionFailed, EXECUTION_FAILED)
            }
        };
        self.emit(AgentEvent::ToolOutputError {
            tool_call_id: call_id.to_owned(),
            error_text: error.message.clone(),
            error,
        });
    }
}

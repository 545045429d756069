//! How each kind of call moves from state to state ([`ToolCallOps`]), written once for
//! every typed tool and once for calls of tools we do not have.

use serde_json::Value;

use super::*;

impl<T: Tool> ToolCall<T> {
    pub(super) fn ui_input(&self) -> Option<Value> {
        match &self.state {
            ToolState::InputStreaming(input) => Some(input.partial().clone()),
            _ => self.input_json(),
        }
    }

    pub(super) fn approval(&self) -> Option<&Approval> {
        self.approval.as_ref()
    }

    pub(super) fn error(&self) -> Option<&ToolError> {
        match &self.state {
            ToolState::OutputError { error, .. } => Some(error),
            _ => None,
        }
    }

    pub(super) fn input_json(&self) -> Option<Value> {
        match &self.state {
            ToolState::InputStreaming(input) => Some(Value::String(input.raw().to_owned())),
            ToolState::OutputError { input, .. } => input.clone(),
            other => other
                .input()
                .and_then(|input| serde_json::to_value(input).ok()),
        }
    }

    pub(super) fn preview(&self) -> Option<&ApprovalPreview> {
        match &self.state {
            ToolState::ApprovalRequested { preview, .. } => preview.as_ref(),
            _ => None,
        }
    }

    pub(super) fn outcome(&self) -> CallOutcome {
        match &self.state {
            ToolState::InputStreaming(_) => CallOutcome::Incomplete,
            ToolState::InputAvailable { .. }
            | ToolState::ApprovalRequested { .. }
            | ToolState::ApprovalResponded { .. } => CallOutcome::Pending,
            ToolState::OutputAvailable { output, .. } => {
                CallOutcome::Output(serde_json::to_value(output).unwrap_or(Value::Null))
            }
            ToolState::OutputError { error, .. } => CallOutcome::Error(error.clone()),
            ToolState::OutputDenied { .. } => CallOutcome::Denied,
        }
    }
}

impl<T: Tool> ToolCallOps for ToolCall<T> {
    fn id(&self) -> &str {
        &self.id
    }

    fn state_name(&self) -> &'static str {
        self.state.name()
    }

    fn is_final(&self) -> bool {
        self.state.is_final()
    }

    fn stream_input(&mut self, delta: &str) -> bool {
        match &mut self.state {
            ToolState::InputStreaming(input) => {
                input.push(delta);
                true
            }
            _ => false,
        }
    }

    fn input_available(&mut self, input: Value) -> bool {
        if !matches!(self.state, ToolState::InputStreaming(_)) {
            return false;
        }
        self.state = match hold::<T::Input>(input.clone()) {
            Ok(input) => ToolState::InputAvailable { input },
            Err(message) => held::invalid_input(input, &message),
        };
        true
    }

    fn approval_requested(&mut self, approval_id: &str, preview: Option<ApprovalPreview>) -> bool {
        match &mut self.state {
            ToolState::InputAvailable { input } => {
                self.state = ToolState::ApprovalRequested {
                    input: input.clone(),
                    preview,
                };
                self.approval = Some(Approval {
                    id: approval_id.to_owned(),
                    approved: None,
                    reason: None,
                });
                true
            }
            // Asked again with fresh facts (the slot filled up before the decision): the
            // form shows what is true now.
            ToolState::ApprovalRequested { preview: shown, .. } if preview.is_some() => {
                *shown = preview;
                true
            }
            _ => false,
        }
    }

    fn approval_responded(&mut self, decision: &Decision) -> bool {
        let ToolState::ApprovalRequested { input, .. } = &self.state else {
            return false;
        };
        let input = match decision.input.clone().map(hold::<T::Input>) {
            Some(Ok(edited)) => edited,
            Some(Err(_)) => return false,
            None => input.clone(),
        };
        self.state = ToolState::ApprovalResponded {
            input,
            approved: decision.approved,
        };
        let approval = self.approval.get_or_insert_with(|| Approval {
            id: decision.approval_id.clone(),
            approved: None,
            reason: None,
        });
        if !decision.earlier {
            approval.approved = Some(decision.approved);
            approval.reason.clone_from(&decision.reason);
        }
        true
    }

    fn output_available(&mut self, output: Value) -> bool {
        let input = match &self.state {
            // A tool that needs approval has no result without it: no receipt can appear
            // for a booking the person never confirmed, whatever the stream says.
            ToolState::InputAvailable { input } if !T::DEFINITION.requires_approval => {
                input.clone()
            }
            ToolState::ApprovalResponded {
                input,
                approved: true,
            } => input.clone(),
            _ => return false,
        };
        self.state = match hold::<T::Output>(output) {
            Ok(output) => ToolState::OutputAvailable { input, output },
            Err(_) => held::unreadable_output(serde_json::to_value(&input).ok()),
        };
        true
    }

    fn output_error(&mut self, input: Option<Value>, error: ToolError) -> bool {
        if self.state.is_final() {
            return false;
        }
        let input = input.or_else(|| {
            self.state
                .input()
                .and_then(|input| serde_json::to_value(input).ok())
        });
        self.state = ToolState::OutputError { input, error };
        true
    }

    fn output_denied(&mut self) -> bool {
        match &self.state {
            ToolState::ApprovalRequested { input, .. }
            | ToolState::ApprovalResponded {
                input,
                approved: false,
            } => {
                self.state = ToolState::OutputDenied {
                    input: input.clone(),
                };
                true
            }
            _ => false,
        }
    }
}

impl UnknownToolCall {
    pub(super) fn preview(&self) -> Option<&ApprovalPreview> {
        None
    }

    pub(super) fn ui_input(&self) -> Option<Value> {
        self.input_json()
    }

    pub(super) fn error(&self) -> Option<&ToolError> {
        self.error.as_ref()
    }

    pub(super) fn approval(&self) -> Option<&Approval> {
        None
    }

    pub(super) fn input_json(&self) -> Option<Value> {
        Some(
            serde_json::from_str(&self.raw_input)
                .unwrap_or_else(|_| Value::String(self.raw_input.clone())),
        )
    }

    pub(super) fn outcome(&self) -> CallOutcome {
        match &self.error {
            Some(error) => CallOutcome::Error(error.clone()),
            None => CallOutcome::Incomplete,
        }
    }
}

impl ToolCallOps for UnknownToolCall {
    fn id(&self) -> &str {
        &self.id
    }

    fn state_name(&self) -> &'static str {
        if self.error.is_some() {
            "output-error"
        } else {
            "input-streaming"
        }
    }

    fn is_final(&self) -> bool {
        self.error.is_some()
    }

    fn stream_input(&mut self, delta: &str) -> bool {
        if self.error.is_some() {
            return false;
        }
        self.raw_input.push_str(delta);
        true
    }

    fn input_available(&mut self, _input: Value) -> bool {
        false
    }

    fn approval_requested(
        &mut self,
        _approval_id: &str,
        _preview: Option<ApprovalPreview>,
    ) -> bool {
        false
    }

    fn approval_responded(&mut self, _decision: &Decision) -> bool {
        false
    }

    fn output_available(&mut self, _output: Value) -> bool {
        false
    }

    fn output_error(&mut self, _input: Option<Value>, error: ToolError) -> bool {
        if self.error.is_some() {
            return false;
        }
        self.error = Some(error);
        true
    }

    fn output_denied(&mut self) -> bool {
        false
    }
}

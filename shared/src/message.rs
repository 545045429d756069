//! Chat messages as the UI renders them: typed parts, each tool part in one state.

use serde::{de::DeserializeOwned, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::by_hand::{take, take_field, take_opt, take_str, typed, Fields};
use crate::preview::ApprovalPreview;
use crate::{
    partial_json::PartialJson,
    tools::{Tool, ToolError, ToolName},
};

/// A person's decision on a call that asked for one.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// Call id.
    pub tool_call_id: String,
    /// The approval the decision answers (the AI SDK's `approval.id`).
    pub approval_id: String,
    /// The decision.
    pub approved: bool,
    /// The input as approved, when the person edited it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// Why, when the person's client said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A decision made in a reply this one replaces (a regenerated reply), restated so
    /// its carried-out call ends as it did: the person was not asked again, so the part
    /// records no new decision.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub earlier: bool,
}

crate::by_hand::struct_by_hand!(
    decision_from_value,
    Decision {
        tool_call_id: "toolCallId",
        approval_id: "approvalId",
        approved: "approved",
        input: "input" = default,
        reason: "reason" = default,
        earlier: "earlier" = default
    }
);

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person.
    User,
    /// The assistant (model text and tool parts).
    Assistant,
}

crate::by_hand::unit_enum_by_hand!(role_from_value, Role { User = "user", Assistant = "assistant" });

/// How an assistant's run ended (or that it is waiting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// The model answered with text; nothing is pending.
    Completed,
    /// A call waits for the person's decision; the run resumes after it.
    AwaitingApproval,
    /// The run hit its step bound before the model finished.
    StepLimit,
    /// The run hit its bound on failed tool calls.
    TooManyToolErrors,
    /// The person stopped the reply.
    Stopped,
    /// The model provider failed; what was streamed is kept, nothing half-received ran.
    Error,
    /// The server writing the reply stopped before it finished (it crashed, or was shut
    /// down past its grace period); another server closed it. What was stored is kept,
    /// a confirmation it had asked for can still be answered, and nothing else it was
    /// doing ran.
    Interrupted,
}

crate::by_hand::unit_enum_by_hand!(run_status_from_value, RunStatus { Completed = "completed", AwaitingApproval = "awaiting-approval", StepLimit = "step-limit", TooManyToolErrors = "too-many-tool-errors", Stopped = "stopped", Error = "error", Interrupted = "interrupted" });

impl RunStatus {
    /// Whether the run is over for good (not waiting for anything).
    pub fn is_final(self) -> bool {
        !matches!(self, RunStatus::AwaitingApproval)
    }
}

/// Extra data of ours carried in the stream's `messageMetadata`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct MessageMetadata {
    /// Set when a run stops or pauses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    /// The conversation the message belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
}

crate::by_hand::struct_by_hand!(
    metadata_from_value,
    MessageMetadata {
        status: "status" = default,
        conversation_id: "conversationId" = default
    }
);

/// One chat message.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Stable id.
    pub id: String,
    /// Who wrote it.
    pub role: Option<Role>,
    /// Its parts, in the order they arrived.
    pub parts: Vec<MessagePart>,
    /// How the run that wrote it ended, for assistant messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    /// The id the person's own client gave this message (an AI SDK front end names the
    /// messages it sends): that client is shown this id, while ours stays unique across
    /// every owner's conversations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
}

crate::by_hand::struct_by_hand!(
    message_from_value,
    Message {
        id: "id",
        role: "role" = default,
        parts: "parts",
        status: "status" = default,
        client_id: "clientId" = default
    }
);

impl Message {
    /// A message written by the person.
    pub fn user(id: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            role: Some(Role::User),
            parts: vec![MessagePart::Text {
                id: String::new(),
                text: text.into(),
            }],
            ..Self::default()
        }
    }

    /// An empty assistant message that events will fill.
    pub fn assistant(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            role: Some(Role::Assistant),
            ..Self::default()
        }
    }

    /// The message's text parts joined, for previews and the model's history.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|part| match part {
                MessagePart::Text { text, .. } => Some(text.as_str()),
                MessagePart::Tool(_) | MessagePart::StepStart => None,
            })
            .collect::<Vec<_>>()
            .join("")
    }

    /// The tool part with this call id.
    pub fn tool_part(&self, call_id: &str) -> Option<&ToolPart> {
        self.parts.iter().find_map(|part| match part {
            MessagePart::Tool(tool) if tool.id() == call_id => Some(tool.as_ref()),
            _ => None,
        })
    }

    pub(crate) fn tool_part_mut(&mut self, call_id: &str) -> Option<&mut ToolPart> {
        self.parts.iter_mut().find_map(|part| match part {
            MessagePart::Tool(tool) if tool.id() == call_id => Some(tool.as_mut()),
            _ => None,
        })
    }
}

/// Arguments still arriving: the text so far and its incremental parser, so each delta
/// costs work proportional to the delta. Serialises as `rawInput` + `partialInput`.
#[derive(Debug, Clone, Default)]
pub struct StreamingInput {
    parser: PartialJson,
}

impl StreamingInput {
    /// Everything received so far.
    pub fn raw(&self) -> &str {
        self.parser.raw()
    }

    /// The best-effort value of what arrived: for display only, never validated or acted on.
    pub fn partial(&self) -> &Value {
        self.parser.value()
    }

    /// A streaming input holding `raw` (for example one loaded from storage).
    pub fn from_raw(raw: &str) -> Self {
        let mut input = Self::default();
        input.push(raw);
        input
    }

    fn push(&mut self, delta: &str) {
        // A syntax error only freezes the preview; the server's validation decides.
        let _ = self.parser.push(delta);
    }
}

impl PartialEq for StreamingInput {
    fn eq(&self, other: &Self) -> bool {
        self.raw() == other.raw()
    }
}

impl Serialize for StreamingInput {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut state = serializer.serialize_struct("StreamingInput", 2)?;
        state.serialize_field("rawInput", self.raw())?;
        state.serialize_field("partialInput", self.partial())?;
        state.end()
    }
}

impl<'de> Deserialize<'de> for StreamingInput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Stored {
            #[serde(default)]
            raw_input: String,
        }
        let stored = Stored::deserialize(deserializer)?;
        Ok(Self::from_raw(&stored.raw_input))
    }
}

/// A piece of a message.
// In the browser, `Deserialize` is the hand-written [`part_from_value`] instead of the
// derived one: the derived impl buffers each internally tagged level (`type`, `tool`,
// `state`) and so compiles a second deserializer for every tool's input and output, about
// a sixth of the hydrate bundle. The server keeps the derived impl; tests check both agree.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum MessagePart {
    /// Text, shown as plain text (never HTML).
    Text {
        /// The stream's id for this text block (empty for a person's message).
        #[serde(default)]
        id: String,
        /// The text so far.
        text: String,
    },
    /// A tool call and its state.
    Tool(Box<ToolPart>),
    /// The model started a new turn: splits a message into the turns the model history needs.
    StepStart,
}

crate::by_hand::deserialize_by_hand_in_the_browser!(MessagePart, part_from_value);

/// Reads a part in the wire format the derived `Deserialize` of [`MessagePart`] accepts,
/// from an already parsed value, so each tool's input and output is read by the one
/// `from_value` deserializer the reducer needs anyway.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn part_from_value(value: Value) -> Result<MessagePart, String> {
    let Value::Object(mut fields) = value else {
        return Err("a message part must be an object".to_owned());
    };
    match take_str(&mut fields, "type")?.as_str() {
        "text" => Ok(MessagePart::Text {
            id: take_opt_str(&mut fields, "id")?.unwrap_or_default(),
            text: take_str(&mut fields, "text")?,
        }),
        "step-start" => Ok(MessagePart::StepStart),
        "tool" => tool_part_from_fields(fields).map(|part| MessagePart::Tool(Box::new(part))),
        other => Err(format!("unknown variant `{other}`")),
    }
}

fn tool_part_from_fields(mut fields: Fields) -> Result<ToolPart, String> {
    let tool = take_str(&mut fields, "tool")?;
    if tool == "unknown" {
        return Ok(ToolPart::Unknown(UnknownToolCall {
            id: take_str(&mut fields, "id")?,
            name: take_str(&mut fields, "name")?,
            raw_input: take_str(&mut fields, "rawInput")?,
            error: take_opt(&mut fields, "error")?,
        }));
    }
    let name = ToolName::parse(&tool).ok_or_else(|| format!("unknown variant `{tool}`"))?;
    typed_part(name, fields)
}

/// A call as the wire has it, its input and output still JSON: read once for every tool,
/// so the browser's bundle has one copy of this reader rather than one per tool.
struct RawCall {
    id: String,
    state: ToolState<Value, Value>,
    approval: Option<Approval>,
}

// Never inlined: in the browser `Held<_>` is the JSON whatever the tool, so each tool's copy
// of this is the same code, which the build's duplicate-function pass then keeps once;
// inlined into `typed_part`, nine copies would stay.
#[inline(never)]
fn call_from_fields<T: Tool>(fields: Fields) -> Result<ToolCall<T>, String> {
    let RawCall {
        id,
        state,
        approval,
    } = raw_call(fields)?;
    let state = match state {
        ToolState::InputStreaming(input) => ToolState::InputStreaming(input),
        ToolState::InputAvailable { input } => ToolState::InputAvailable {
            input: hold(input)?,
        },
        ToolState::ApprovalRequested { input, preview } => ToolState::ApprovalRequested {
            input: hold(input)?,
            preview,
        },
        ToolState::ApprovalResponded { input, approved } => ToolState::ApprovalResponded {
            input: hold(input)?,
            approved,
        },
        ToolState::OutputAvailable { input, output } => ToolState::OutputAvailable {
            input: hold(input)?,
            output: hold(output)?,
        },
        ToolState::OutputError { input, error } => ToolState::OutputError { input, error },
        ToolState::OutputDenied { input } => ToolState::OutputDenied {
            input: hold(input)?,
        },
    };
    Ok(ToolCall {
        id,
        state,
        approval,
    })
}

fn raw_call(mut fields: Fields) -> Result<RawCall, String> {
    let id = take_str(&mut fields, "id")?;
    let state = take_str(&mut fields, "state")?;
    let state = match state.as_str() {
        "input-streaming" => ToolState::InputStreaming(StreamingInput::from_raw(
            &take_opt_str(&mut fields, "rawInput")?.unwrap_or_default(),
        )),
        "input-available" => ToolState::InputAvailable {
            input: take(&mut fields, "input")?,
        },
        "approval-requested" => ToolState::ApprovalRequested {
            input: take(&mut fields, "input")?,
            preview: take_opt(&mut fields, "preview")?,
        },
        "approval-responded" => ToolState::ApprovalResponded {
            input: take(&mut fields, "input")?,
            approved: typed(take(&mut fields, "approved")?)?,
        },
        "output-available" => ToolState::OutputAvailable {
            input: take(&mut fields, "input")?,
            output: take(&mut fields, "output")?,
        },
        "output-error" => ToolState::OutputError {
            input: take_field(&mut fields, "input").filter(|input| !input.is_null()),
            error: typed(take(&mut fields, "error")?)?,
        },
        "output-denied" => ToolState::OutputDenied {
            input: take(&mut fields, "input")?,
        },
        other => return Err(format!("unknown variant `{other}`")),
    };
    let approval = take_opt(&mut fields, "approval")?;
    Ok(RawCall {
        id,
        state,
        approval,
    })
}

fn take_opt_str(fields: &mut Fields, name: &str) -> Result<Option<String>, String> {
    take_opt(fields, name)
}

/// The states a tool call moves through, with the data each state has.
///
/// `input-streaming → input-available → (approval-requested → approval-responded →)
/// output-available | output-error | output-denied`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "state",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase",
    bound(
        serialize = "I: Serialize, O: Serialize",
        deserialize = "I: DeserializeOwned, O: DeserializeOwned"
    )
)]
pub enum ToolState<I, O> {
    /// Arguments are arriving; the partial value is for display only, never acted on.
    InputStreaming(StreamingInput),
    /// Arguments are complete and valid; the tool is running.
    InputAvailable {
        /// The validated input.
        input: I,
    },
    /// The server stored the call and waits for the person's decision.
    ApprovalRequested {
        /// The validated input, shown in the confirmation form.
        input: I,
        /// What the call would do, as the server found it in its data (names, local
        /// time, room, prices); absent in messages stored before previews existed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        preview: Option<ApprovalPreview>,
    },
    /// The person decided; the tool runs if approved.
    ApprovalResponded {
        /// The input as approved (possibly edited by the person).
        input: I,
        /// The decision.
        approved: bool,
    },
    /// The tool ran and returned this.
    OutputAvailable {
        /// The input it ran with.
        input: I,
        /// Its result.
        output: O,
    },
    /// The call failed: invalid arguments, or the tool failed. Nothing was done.
    OutputError {
        /// The arguments as received, when they were JSON (possibly invalid).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input: Option<Value>,
        /// What went wrong.
        error: ToolError,
    },
    /// The person declined; nothing was done.
    OutputDenied {
        /// The input that was declined.
        input: I,
    },
}

impl<I, O> ToolState<I, O> {
    /// The state's name as in the stream protocol and the `data-state` attribute.
    pub fn name(&self) -> &'static str {
        match self {
            ToolState::InputStreaming(_) => "input-streaming",
            ToolState::InputAvailable { .. } => "input-available",
            ToolState::ApprovalRequested { .. } => "approval-requested",
            ToolState::ApprovalResponded { .. } => "approval-responded",
            ToolState::OutputAvailable { .. } => "output-available",
            ToolState::OutputError { .. } => "output-error",
            ToolState::OutputDenied { .. } => "output-denied",
        }
    }

    /// Whether nothing more will happen to this call.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            ToolState::OutputAvailable { .. }
                | ToolState::OutputError { .. }
                | ToolState::OutputDenied { .. }
        )
    }

    /// The typed input, in the states that have one.
    pub fn input(&self) -> Option<&I> {
        match self {
            ToolState::InputAvailable { input }
            | ToolState::ApprovalRequested { input, .. }
            | ToolState::ApprovalResponded { input, .. }
            | ToolState::OutputAvailable { input, .. }
            | ToolState::OutputDenied { input } => Some(input),
            ToolState::InputStreaming(_) | ToolState::OutputError { .. } => None,
        }
    }
}

/// One call of tool `T`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", bound(serialize = "", deserialize = ""))]
pub struct ToolCall<T: Tool> {
    /// The provider's call id; results are matched to calls by it.
    pub id: String,
    /// Where the call is.
    #[serde(flatten)]
    pub state: ToolState<Held<T::Input>, Held<T::Output>>,
    /// The person's part in the call, once they were asked: kept after the call ends,
    /// because the state alone cannot say whether a failed call was approved first, and
    /// AI SDK clients show the approval with every later state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
}

/// A call's request for the person's decision, and the decision once made (the AI SDK's
/// `approval` of a tool part).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// The id a decision names (in datban, the call id).
    pub id: String,
    /// The decision; absent while it is awaited, and for a confirmation closed unanswered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    /// Why, when the person's client said so with the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

crate::by_hand::struct_by_hand!(
    approval_from_value,
    Approval {
        id: "id",
        approved: "approved" = default,
        reason: "reason" = default
    }
);

/// A call the model made to a tool we do not have; shown as an error, never run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnknownToolCall {
    /// The provider's call id.
    pub id: String,
    /// The name the model used.
    pub name: String,
    /// Arguments as received.
    pub raw_input: String,
    /// Set once the server rejected the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
}

macro_rules! define_tool_part {
    (() [$(($name:ident, $wire:literal, $assistant:ident)),* $(,)?]) => {
        /// A tool call in a message: one variant per tool of the registry
        /// (`tools/registry.rs`), so renderers must handle each.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "tool")]
        pub enum ToolPart {
            $(
                #[doc = concat!("A `", $wire, "` call.")]
                #[serde(rename = $wire)]
                $name(ToolCall<crate::tools::$name>),
            )*
            /// A call to a tool that does not exist.
            #[serde(rename = "unknown")]
            Unknown(UnknownToolCall),
        }

        impl ToolPart {
            /// A new part for a call that just started streaming.
            pub fn start(id: impl Into<String>, tool_name: &str) -> Self {
                let id = id.into();
                match ToolName::parse(tool_name) {
                    $(Some(ToolName::$name) => ToolPart::$name(ToolCall::streaming(id)),)*
                    None => ToolPart::Unknown(UnknownToolCall {
                        id,
                        name: tool_name.to_owned(),
                        raw_input: String::new(),
                        error: None,
                    }),
                }
            }

            /// The tool's name as the model called it.
            pub fn tool_name(&self) -> &str {
                match self {
                    $(ToolPart::$name(_) => ToolName::$name.as_str(),)*
                    ToolPart::Unknown(call) => &call.name,
                }
            }

            /// The call's input as JSON: the validated input, or the arguments as received
            /// when they were rejected (a JSON string when they were not JSON at all).
            pub fn input_json(&self) -> Option<Value> {
                match self {
                    $(ToolPart::$name(call) => call.input_json(),)*
                    ToolPart::Unknown(call) => call.input_json(),
                }
            }

            /// The input as an AI SDK client holds it: while it streams, what arrived so
            /// far as a value; afterwards as [`ToolPart::input_json`].
            pub fn ui_input(&self) -> Option<Value> {
                match self {
                    $(ToolPart::$name(call) => call.ui_input(),)*
                    ToolPart::Unknown(call) => call.ui_input(),
                }
            }

            /// What went wrong, once the call failed.
            pub fn error(&self) -> Option<&ToolError> {
                match self {
                    $(ToolPart::$name(call) => call.error(),)*
                    ToolPart::Unknown(call) => call.error(),
                }
            }

            /// The person's part in the call, once they were asked.
            pub fn approval(&self) -> Option<&Approval> {
                match self {
                    $(ToolPart::$name(call) => call.approval(),)*
                    ToolPart::Unknown(call) => call.approval(),
                }
            }

            /// Where the call ended up, for the model's history.
            pub fn outcome(&self) -> CallOutcome {
                match self {
                    $(ToolPart::$name(call) => call.outcome(),)*
                    ToolPart::Unknown(call) => call.outcome(),
                }
            }

            /// The preview the confirmation form shows, while the call waits for approval.
            pub fn preview(&self) -> Option<&ApprovalPreview> {
                match self {
                    $(ToolPart::$name(call) => call.preview(),)*
                    ToolPart::Unknown(call) => call.preview(),
                }
            }

            // `input_json` and `outcome` are matched per variant instead of going through
            // `ops()`: the browser never calls them, and as methods of the `dyn
            // ToolCallOps` vtables they would keep every tool's output serializer in the
            // hydrate bundle.
            pub(crate) fn ops(&self) -> &dyn ToolCallOps {
                match self {
                    $(ToolPart::$name(call) => call,)*
                    ToolPart::Unknown(call) => call,
                }
            }

            pub(crate) fn ops_mut(&mut self) -> &mut dyn ToolCallOps {
                match self {
                    $(ToolPart::$name(call) => call,)*
                    ToolPart::Unknown(call) => call,
                }
            }
        }

        /// The part a stored or streamed call of tool `name` reads as, in the browser.
        #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
        fn typed_part(name: ToolName, fields: Fields) -> Result<ToolPart, String> {
            Ok(match name {
                $(ToolName::$name => ToolPart::$name(call_from_fields(fields)?),)*
            })
        }
    };
}

crate::tool_registry!(define_tool_part);

impl ToolPart {
    /// The call id.
    pub fn id(&self) -> &str {
        self.ops().id()
    }

    /// The state's name (`input-streaming`, …, `output-error`).
    pub fn state_name(&self) -> &'static str {
        self.ops().state_name()
    }

    /// Whether nothing more will happen to this call.
    pub fn is_final(&self) -> bool {
        self.ops().is_final()
    }

    /// The result as JSON, once the tool returned.
    pub fn output_json(&self) -> Option<Value> {
        match self.outcome() {
            CallOutcome::Output(output) => Some(output),
            _ => None,
        }
    }
}

impl<T: Tool> ToolCall<T> {
    fn streaming(id: String) -> Self {
        Self {
            id,
            state: ToolState::InputStreaming(StreamingInput::default()),
            approval: None,
        }
    }
}

/// Where a call ended up, as the model's history needs it.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// Arguments never completed (the reply was cut off): the call did not happen.
    Incomplete,
    /// Waiting: for its result or for the person's decision.
    Pending,
    /// The tool returned this.
    Output(Value),
    /// It failed or was rejected.
    Error(ToolError),
    /// The person declined it.
    Denied,
}

/// Transitions the reducer applies to a call, implemented once per kind of call so the
/// reducer needs no per-tool code. Each returns `false` when the transition does not fit
/// the call's state (the event is then ignored).
pub(crate) trait ToolCallOps {
    fn id(&self) -> &str;
    fn state_name(&self) -> &'static str;
    fn is_final(&self) -> bool;
    fn stream_input(&mut self, delta: &str) -> bool;
    fn input_available(&mut self, input: Value) -> bool;
    fn approval_requested(&mut self, approval_id: &str, preview: Option<ApprovalPreview>) -> bool;
    fn approval_responded(&mut self, decision: &Decision) -> bool;
    fn output_available(&mut self, output: Value) -> bool;
    fn output_error(&mut self, input: Option<Value>, error: ToolError) -> bool;
    fn output_denied(&mut self) -> bool;
}

mod held;
mod transitions;

use held::hold;
pub use held::Held;
#[cfg(target_arch = "wasm32")]
pub use held::Unread;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

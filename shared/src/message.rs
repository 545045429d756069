//! Chat messages as the UI renders them: typed parts, each tool part in one state.

use serde::{de::DeserializeOwned, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::events::Decision;
use crate::preview::ApprovalPreview;
use crate::{
    partial_json::PartialJson,
    tools::{
        CancelBooking, CreateBooking, CreateCheckoutSession, GetWeather, ListBookings,
        PrepareCheckout, SearchRestaurants, ShippingQuote, SuggestGifts, Tool, ToolError, ToolName,
    },
};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person.
    User,
    /// The assistant (model text and tool parts).
    Assistant,
}

/// How an assistant's run ended (or that it is waiting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

impl RunStatus {
    /// Whether the run is over for good (not waiting for anything).
    pub fn is_final(self) -> bool {
        !matches!(self, RunStatus::AwaitingApproval)
    }
}

/// Extra data of ours carried in the stream's `messageMetadata`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageMetadata {
    /// Set when a run stops or pauses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    /// The conversation the message belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
}

/// One chat message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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

#[cfg(target_arch = "wasm32")]
impl<'de> Deserialize<'de> for MessagePart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        part_from_value(value).map_err(serde::de::Error::custom)
    }
}

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

pub(crate) type Fields = serde_json::Map<String, Value>;

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
    Ok(match name {
        ToolName::GetWeather => ToolPart::GetWeather(call_from_fields(fields)?),
        ToolName::SearchRestaurants => ToolPart::SearchRestaurants(call_from_fields(fields)?),
        ToolName::CreateBooking => ToolPart::CreateBooking(call_from_fields(fields)?),
        ToolName::ListBookings => ToolPart::ListBookings(call_from_fields(fields)?),
        ToolName::CancelBooking => ToolPart::CancelBooking(call_from_fields(fields)?),
        ToolName::SuggestGifts => ToolPart::SuggestGifts(call_from_fields(fields)?),
        ToolName::PrepareCheckout => ToolPart::PrepareCheckout(call_from_fields(fields)?),
        ToolName::CreateCheckoutSession => {
            ToolPart::CreateCheckoutSession(call_from_fields(fields)?)
        }
        ToolName::ShippingQuote => ToolPart::ShippingQuote(call_from_fields(fields)?),
    })
}

fn call_from_fields<T: Tool>(mut fields: Fields) -> Result<ToolCall<T>, String> {
    let id = take_str(&mut fields, "id")?;
    let state = take_str(&mut fields, "state")?;
    let input = |fields: &mut Fields| typed::<T::Input>(take(fields, "input")?);
    let state = match state.as_str() {
        "input-streaming" => ToolState::InputStreaming(StreamingInput::from_raw(
            &take_opt_str(&mut fields, "rawInput")?.unwrap_or_default(),
        )),
        "input-available" => ToolState::InputAvailable {
            input: input(&mut fields)?,
        },
        "approval-requested" => ToolState::ApprovalRequested {
            input: input(&mut fields)?,
            preview: take_opt(&mut fields, "preview")?,
        },
        "approval-responded" => ToolState::ApprovalResponded {
            input: input(&mut fields)?,
            approved: typed(take(&mut fields, "approved")?)?,
        },
        "output-available" => ToolState::OutputAvailable {
            input: input(&mut fields)?,
            output: typed(take(&mut fields, "output")?)?,
        },
        "output-error" => ToolState::OutputError {
            input: fields.remove("input").filter(|input| !input.is_null()),
            error: typed(take(&mut fields, "error")?)?,
        },
        "output-denied" => ToolState::OutputDenied {
            input: input(&mut fields)?,
        },
        other => return Err(format!("unknown variant `{other}`")),
    };
    let approval = take_opt(&mut fields, "approval")?;
    Ok(ToolCall {
        id,
        state,
        approval,
    })
}

pub(crate) fn take(fields: &mut Fields, name: &str) -> Result<Value, String> {
    fields
        .remove(name)
        .ok_or_else(|| format!("missing field `{name}`"))
}

pub(crate) fn take_str(fields: &mut Fields, name: &str) -> Result<String, String> {
    typed(take(fields, name)?)
}

/// An optional field: absent and `null` are both `None`, as for a derived `Option`.
pub(crate) fn take_opt<V: DeserializeOwned>(
    fields: &mut Fields,
    name: &str,
) -> Result<Option<V>, String> {
    fields.remove(name).map_or(Ok(None), typed)
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
    pub state: ToolState<T::Input, T::Output>,
    /// The person's part in the call, once they were asked: kept after the call ends,
    /// because the state alone cannot say whether a failed call was approved first, and
    /// AI SDK clients show the approval with every later state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
}

/// A call's request for the person's decision, and the decision once made (the AI SDK's
/// `approval` of a tool part).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// A tool call in a message: one variant per tool, so renderers must handle each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "tool")]
pub enum ToolPart {
    /// A `getWeather` call.
    #[serde(rename = "getWeather")]
    GetWeather(ToolCall<GetWeather>),
    /// A `searchRestaurants` call.
    #[serde(rename = "searchRestaurants")]
    SearchRestaurants(ToolCall<SearchRestaurants>),
    /// A `createBooking` call.
    #[serde(rename = "createBooking")]
    CreateBooking(ToolCall<CreateBooking>),
    /// A `listBookings` call.
    #[serde(rename = "listBookings")]
    ListBookings(ToolCall<ListBookings>),
    /// A `cancelBooking` call.
    #[serde(rename = "cancelBooking")]
    CancelBooking(ToolCall<CancelBooking>),
    /// A `suggest_gifts` call.
    #[serde(rename = "suggest_gifts")]
    SuggestGifts(ToolCall<SuggestGifts>),
    /// A `prepare_checkout` call.
    #[serde(rename = "prepare_checkout")]
    PrepareCheckout(ToolCall<PrepareCheckout>),
    /// A `create_checkout_session` call.
    #[serde(rename = "create_checkout_session")]
    CreateCheckoutSession(ToolCall<CreateCheckoutSession>),
    /// A `shipping_quote` call.
    #[serde(rename = "shipping_quote")]
    ShippingQuote(ToolCall<ShippingQuote>),
    /// A call to a tool that does not exist.
    #[serde(rename = "unknown")]
    Unknown(UnknownToolCall),
}

/// Runs `$body` with `$call` bound to the call inside any variant of a [`ToolPart`].
macro_rules! each_call {
    ($part:expr, $call:ident => $body:expr) => {
        match $part {
            ToolPart::GetWeather($call) => $body,
            ToolPart::SearchRestaurants($call) => $body,
            ToolPart::CreateBooking($call) => $body,
            ToolPart::ListBookings($call) => $body,
            ToolPart::CancelBooking($call) => $body,
            ToolPart::SuggestGifts($call) => $body,
            ToolPart::PrepareCheckout($call) => $body,
            ToolPart::CreateCheckoutSession($call) => $body,
            ToolPart::ShippingQuote($call) => $body,
            ToolPart::Unknown($call) => $body,
        }
    };
}

impl ToolPart {
    /// A new part for a call that just started streaming.
    pub fn start(id: impl Into<String>, tool_name: &str) -> Self {
        let id = id.into();
        match ToolName::parse(tool_name) {
            Some(ToolName::GetWeather) => ToolPart::GetWeather(ToolCall::streaming(id)),
            Some(ToolName::SearchRestaurants) => {
                ToolPart::SearchRestaurants(ToolCall::streaming(id))
            }
            Some(ToolName::CreateBooking) => ToolPart::CreateBooking(ToolCall::streaming(id)),
            Some(ToolName::ListBookings) => ToolPart::ListBookings(ToolCall::streaming(id)),
            Some(ToolName::CancelBooking) => ToolPart::CancelBooking(ToolCall::streaming(id)),
            Some(ToolName::SuggestGifts) => ToolPart::SuggestGifts(ToolCall::streaming(id)),
            Some(ToolName::PrepareCheckout) => ToolPart::PrepareCheckout(ToolCall::streaming(id)),
            Some(ToolName::CreateCheckoutSession) => {
                ToolPart::CreateCheckoutSession(ToolCall::streaming(id))
            }
            Some(ToolName::ShippingQuote) => ToolPart::ShippingQuote(ToolCall::streaming(id)),
            None => ToolPart::Unknown(UnknownToolCall {
                id,
                name: tool_name.to_owned(),
                raw_input: String::new(),
                error: None,
            }),
        }
    }

    /// The call id.
    pub fn id(&self) -> &str {
        self.ops().id()
    }

    /// The tool's name as the model called it.
    pub fn tool_name(&self) -> &str {
        match self {
            ToolPart::GetWeather(_) => GetWeather::DEFINITION.name,
            ToolPart::SearchRestaurants(_) => SearchRestaurants::DEFINITION.name,
            ToolPart::CreateBooking(_) => CreateBooking::DEFINITION.name,
            ToolPart::ListBookings(_) => ListBookings::DEFINITION.name,
            ToolPart::CancelBooking(_) => CancelBooking::DEFINITION.name,
            ToolPart::SuggestGifts(_) => SuggestGifts::DEFINITION.name,
            ToolPart::PrepareCheckout(_) => PrepareCheckout::DEFINITION.name,
            ToolPart::CreateCheckoutSession(_) => CreateCheckoutSession::DEFINITION.name,
            ToolPart::ShippingQuote(_) => ShippingQuote::DEFINITION.name,
            ToolPart::Unknown(call) => &call.name,
        }
    }

    /// The state's name (`input-streaming`, …, `output-error`).
    pub fn state_name(&self) -> &'static str {
        self.ops().state_name()
    }

    /// Whether nothing more will happen to this call.
    pub fn is_final(&self) -> bool {
        self.ops().is_final()
    }

    /// The call's input as JSON: the validated input, or the arguments as received when
    /// they were rejected (a JSON string when they were not JSON at all).
    pub fn input_json(&self) -> Option<Value> {
        each_call!(self, call => call.input_json())
    }

    /// The input as an AI SDK client holds it: while it streams, what arrived so far as
    /// a value; afterwards as [`ToolPart::input_json`].
    pub fn ui_input(&self) -> Option<Value> {
        each_call!(self, call => call.ui_input())
    }

    /// The result as JSON, once the tool returned.
    pub fn output_json(&self) -> Option<Value> {
        match self.outcome() {
            CallOutcome::Output(output) => Some(output),
            _ => None,
        }
    }

    /// What went wrong, once the call failed.
    pub fn error(&self) -> Option<&ToolError> {
        each_call!(self, call => call.error())
    }

    /// The person's part in the call, once they were asked.
    pub fn approval(&self) -> Option<&Approval> {
        each_call!(self, call => call.approval())
    }

    /// Where the call ended up, for the model's history.
    pub fn outcome(&self) -> CallOutcome {
        each_call!(self, call => call.outcome())
    }

    /// The preview the confirmation form shows, while the call waits for approval.
    pub fn preview(&self) -> Option<&ApprovalPreview> {
        each_call!(self, call => call.preview())
    }

    // `input_json` and `outcome` are matched per variant instead of going through
    // `ops()`: the browser never calls them, and as methods of the `dyn ToolCallOps`
    // vtables they would keep every tool's output serializer in the hydrate bundle.
    pub(crate) fn ops(&self) -> &dyn ToolCallOps {
        match self {
            ToolPart::GetWeather(call) => call,
            ToolPart::SearchRestaurants(call) => call,
            ToolPart::CreateBooking(call) => call,
            ToolPart::ListBookings(call) => call,
            ToolPart::CancelBooking(call) => call,
            ToolPart::SuggestGifts(call) => call,
            ToolPart::PrepareCheckout(call) => call,
            ToolPart::CreateCheckoutSession(call) => call,
            ToolPart::ShippingQuote(call) => call,
            ToolPart::Unknown(call) => call,
        }
    }

    pub(crate) fn ops_mut(&mut self) -> &mut dyn ToolCallOps {
        match self {
            ToolPart::GetWeather(call) => call,
            ToolPart::SearchRestaurants(call) => call,
            ToolPart::CreateBooking(call) => call,
            ToolPart::ListBookings(call) => call,
            ToolPart::CancelBooking(call) => call,
            ToolPart::SuggestGifts(call) => call,
            ToolPart::PrepareCheckout(call) => call,
            ToolPart::CreateCheckoutSession(call) => call,
            ToolPart::ShippingQuote(call) => call,
            ToolPart::Unknown(call) => call,
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

pub(crate) fn typed<V: DeserializeOwned>(value: Value) -> Result<V, String> {
    serde_json::from_value(value).map_err(|e| e.to_string())
}

impl<T: Tool> ToolCall<T> {
    fn ui_input(&self) -> Option<Value> {
        match &self.state {
            ToolState::InputStreaming(input) => Some(input.partial().clone()),
            _ => self.input_json(),
        }
    }

    fn approval(&self) -> Option<&Approval> {
        self.approval.as_ref()
    }

    fn error(&self) -> Option<&ToolError> {
        match &self.state {
            ToolState::OutputError { error, .. } => Some(error),
            _ => None,
        }
    }

    fn input_json(&self) -> Option<Value> {
        match &self.state {
            ToolState::InputStreaming(input) => Some(Value::String(input.raw().to_owned())),
            ToolState::OutputError { input, .. } => input.clone(),
            other => other
                .input()
                .and_then(|input| serde_json::to_value(input).ok()),
        }
    }

    fn preview(&self) -> Option<&ApprovalPreview> {
        match &self.state {
            ToolState::ApprovalRequested { preview, .. } => preview.as_ref(),
            _ => None,
        }
    }

    fn outcome(&self) -> CallOutcome {
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
        self.state = match typed::<T::Input>(input.clone()) {
            Ok(input) => ToolState::InputAvailable { input },
            Err(message) => ToolState::OutputError {
                input: Some(input),
                error: ToolError::new(
                    crate::tools::ErrorCode::ValidationError,
                    format!("Invalid arguments: {message}"),
                ),
            },
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
        let input = match decision.input.clone().map(typed::<T::Input>) {
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
        self.state = match typed::<T::Output>(output) {
            Ok(output) => ToolState::OutputAvailable { input, output },
            Err(_) => ToolState::OutputError {
                input: serde_json::to_value(&input).ok(),
                error: ToolError::new(
                    crate::tools::ErrorCode::ExecutionFailed,
                    "The tool returned a result this page cannot read.",
                ),
            },
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
    fn preview(&self) -> Option<&ApprovalPreview> {
        None
    }

    fn ui_input(&self) -> Option<Value> {
        self.input_json()
    }

    fn error(&self) -> Option<&ToolError> {
        self.error.as_ref()
    }

    fn approval(&self) -> Option<&Approval> {
        None
    }

    fn input_json(&self) -> Option<Value> {
        Some(
            serde_json::from_str(&self.raw_input)
                .unwrap_or_else(|_| Value::String(self.raw_input.clone())),
        )
    }

    fn outcome(&self) -> CallOutcome {
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

// Natively `Deserialize` is the derived impl, so these compare the browser's reader with it.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use serde_json::json;

    use super::*;

    fn both(value: Value) -> (Result<MessagePart, String>, Option<MessagePart>) {
        let derived = serde_json::from_value::<MessagePart>(value.clone()).ok();
        (part_from_value(value), derived)
    }

    #[test]
    fn the_browsers_reader_accepts_what_the_derived_one_does() {
        let accepted = [
            json!({"type": "text", "text": "Chào"}),
            json!({"type": "text", "id": "t1", "text": "Chào", "extra": 1}),
            json!({"type": "step-start"}),
            json!({"type": "tool", "tool": "getWeather", "id": "c1", "state": "input-streaming",
                   "rawInput": "{\"city\":\"Hu", "partialInput": {"city": "Hu"}}),
            json!({"type": "tool", "tool": "getWeather", "id": "c1", "state": "input-streaming"}),
            json!({"type": "tool", "tool": "createBooking", "id": "b1", "state": "approval-requested",
                   "input": {"restaurantId": "hn-1", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"}}),
            json!({"type": "tool", "tool": "createBooking", "id": "b1", "state": "approval-responded",
                   "approved": false,
                   "input": {"restaurantId": "hn-1", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"}}),
            json!({"type": "tool", "tool": "createBooking", "id": "b1", "state": "output-denied",
                   "input": {"restaurantId": "hn-1", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"}}),
            json!({"type": "tool", "tool": "cancelBooking", "id": "x", "state": "output-error",
                   "error": {"code": "NOT_FOUND", "message": "Không có", "retryable": false}}),
            json!({"type": "tool", "tool": "shipping_quote", "id": "s", "state": "output-error",
                   "input": null,
                   "error": {"code": "VALIDATION_ERROR", "message": "x", "retryable": false}}),
            json!({"type": "tool", "tool": "shipping_quote", "id": "s", "state": "output-error",
                   "input": "{not json",
                   "error": {"code": "VALIDATION_ERROR", "message": "x", "retryable": false}}),
            json!({"type": "tool", "tool": "unknown", "id": "u", "name": "launchRocket",
                   "rawInput": "{}"}),
            json!({"type": "tool", "tool": "unknown", "id": "u", "name": "launchRocket",
                   "rawInput": "{}",
                   "error": {"code": "UNKNOWN_TOOL", "message": "x", "retryable": false}}),
        ];
        for value in accepted {
            let (ours, derived) = both(value.clone());
            assert!(derived.is_some(), "the derived reader rejects {value}");
            assert_eq!(ours.ok(), derived, "{value}");
        }
    }

    #[test]
    fn the_browsers_reader_rejects_what_the_derived_one_does() {
        let rejected = [
            json!("text"),
            json!({"text": "no type"}),
            json!({"type": "image"}),
            json!({"type": "text"}),
            json!({"type": "tool", "tool": "launchRocket", "id": "c", "state": "input-streaming"}),
            json!({"type": "tool", "tool": "getWeather", "id": "c", "state": "thinking"}),
            json!({"type": "tool", "tool": "getWeather", "state": "input-streaming"}),
            json!({"type": "tool", "tool": "createBooking", "id": "b", "state": "approval-requested"}),
            json!({"type": "tool", "tool": "createBooking", "id": "b", "state": "approval-requested",
                   "input": {"restaurantId": "hn-1"}}),
            json!({"type": "tool", "tool": "createBooking", "id": "b1", "state": "approval-responded",
                   "input": {"restaurantId": "hn-1", "partySize": 4, "startsAt": "2026-12-24T19:00:00+07:00"}}),
            json!({"type": "tool", "tool": "cancelBooking", "id": "x", "state": "output-error"}),
            json!({"type": "tool", "tool": "unknown", "id": "u", "name": "launchRocket"}),
        ];
        for value in rejected {
            let (ours, derived) = both(value.clone());
            assert_eq!(derived, None, "the derived reader accepts {value}");
            assert!(ours.is_err(), "{value}");
        }
    }
}

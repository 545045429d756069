//! Tools defined once: name, prompt-style description, risk hints, typed input and output.
//!
//! Everything about a tool comes from its [`Tool`] implementation: the JSON Schema sent to
//! the model ([`ToolName::input_schema`]), argument validation (feature `validate`), the
//! typed parts the browser renders ([`crate::message::ToolPart`]). The closed enums
//! [`ToolName`], [`ToolInput`] and [`crate::message::ToolPart`] make the compiler point at
//! every `match` that must handle a new tool: the server's executor and the app's renderer.

mod availability;
mod booking;
mod error;
#[cfg(test)]
pub(crate) use error::every_kind as every_rule_kind;
mod gifts;
mod my_bookings;
mod registry;
mod restaurants;
mod shipping;
#[cfg(feature = "validate")]
mod validate;
mod weather;

pub use availability::{
    CheckAvailability, CheckAvailabilityInput, CheckAvailabilityOutput, NEAREST_SLOTS,
};
pub use booking::{BookingStatus, CreateBooking, CreateBookingInput, CreateBookingOutput};
pub use error::{Entity, ErrorClass, ErrorCode, Rule, ToolError, ValidationError, ValidationIssue};
pub use gifts::{
    format_vnd, CheckoutDraft, CheckoutSession, CreateCheckoutSession, CreateCheckoutSessionInput,
    GiftSuggestion, PrepareCheckout, PrepareCheckoutInput, RelationshipType, SuggestGifts,
    SuggestGiftsInput, SuggestGiftsOutput, MAX_VND,
};
pub use my_bookings::{
    BookingState, BookingSummary, CancelBooking, CancelBookingInput, CancelBookingOutput,
    ListBookings, ListBookingsInput, ListBookingsOutput,
};
// The browser's readers, for the test that holds them to the derived impls
// (`crate::by_hand`).
pub use restaurants::{
    FreeSlot, RestaurantSummary, SearchRestaurants, SearchRestaurantsInput, SearchRestaurantsOutput,
};
pub use shipping::{
    Kilograms, ShippingQuote, ShippingQuoteInput, ShippingQuoteOutput, Zone, MAX_GRAMS,
};
#[cfg(feature = "validate")]
pub use validate::validate_arguments;
pub use weather::{
    vietnam_date, AskedDays, DailyForecast, ForecastSpan, GetWeather, GetWeatherInput,
    GetWeatherOutput, WeatherCondition, FORECAST_DAYS,
};
#[cfg(test)]
pub(crate) use {
    error::{entity_from_value, error_code_from_value, issue_from_value, tool_error_from_value},
    gifts::checkout_draft_from_value,
    my_bookings::{
        booking_state_from_value, booking_summary_from_value, list_bookings_output_from_value,
    },
};

use std::fmt;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// What running a tool may do to the world; shown to the model and used by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Risk {
    /// Only reads: safe to run without asking anyone.
    pub read_only: bool,
    /// Removes or overwrites something a person cares about.
    pub destructive: bool,
    /// Running it twice with the same arguments has the effect of running it once.
    pub idempotent: bool,
    /// Reaches outside datban (a weather service…), whose answers we do not control.
    pub open_world: bool,
}

/// The OAuth scope of tools that read or change a person's bookings.
pub const SCOPE_BOOKINGS: &str = "bookings";
/// The OAuth scope of tools that prepare or make a person's (fictional) purchases.
pub const SCOPE_CHECKOUT: &str = "checkout";

/// Whose data a tool touches, which decides what a client outside datban's own page (an
/// MCP host such as ChatGPT) must prove before calling it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Public data only (forecasts, the restaurant list, gift ideas, shipping prices):
    /// anyone may call it.
    Public,
    /// A person's own data: the caller needs a token of that person with this scope.
    Personal(&'static str),
}

/// The static facts about one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolDefinition {
    /// The name the model calls it by.
    pub name: &'static str,
    /// A short title people read (an MCP host's tool list).
    pub title: &'static str,
    /// What a host may show while it runs (at most 64 characters).
    pub invoking: &'static str,
    /// What a host may show once it is done (at most 64 characters).
    pub invoked: &'static str,
    /// Written as a prompt: when to call it, when not, and what its result means.
    pub description: &'static str,
    /// The server pauses and asks the person before running it.
    pub requires_approval: bool,
    /// Risk hints.
    pub risk: Risk,
    /// Whose data it touches.
    pub access: Access,
}

impl ToolDefinition {
    /// The description as the model reads it: the prompt text followed by the risk hints,
    /// so a model that reads only descriptions still learns what a call may do.
    pub fn model_description(&self) -> String {
        let mut hints: Vec<&str> = Vec::new();
        if self.risk.read_only {
            hints.push("read-only");
        } else {
            hints.push("changes data");
        }
        if self.risk.destructive {
            hints.push("destructive");
        }
        if self.risk.idempotent {
            hints.push("idempotent");
        }
        if self.requires_approval {
            hints.push("runs only after the user approves it");
        }
        format!("{} [{}]", self.description, hints.join("; "))
    }
}

/// A tool: its definition and its typed input and output.
pub trait Tool: 'static {
    /// Which tool this is.
    const NAME: ToolName;
    /// Its static facts.
    const DEFINITION: ToolDefinition;
    /// Arguments, as validated against the schema the model was given.
    type Input: Serialize + DeserializeOwned + JsonSchema + Clone + PartialEq + fmt::Debug;
    /// The result the executor returns and the browser renders.
    type Output: Serialize + DeserializeOwned + JsonSchema + Clone + PartialEq + fmt::Debug;

    /// Rules across fields that a schema cannot say (for example "not in the past").
    /// Returns one issue per broken rule; empty when the input is fine.
    fn check(input: &Self::Input, ctx: &ValidationContext) -> Vec<ValidationIssue>;

    /// Rules on the raw JSON that the typed parse would only report without a path (a
    /// custom type's own limits); run after the schema, before the parse.
    fn check_json(_arguments: &serde_json::Value) -> Vec<ValidationIssue> {
        Vec::new()
    }
}

macro_rules! define_tools {
    (() [$(($name:ident, $wire:literal, $assistant:ident)),* $(,)?]) => {
        /// Every tool the assistant has, from the registry (`registry.rs`). A new line there
        /// makes the compiler list each `match` that must learn about it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum ToolName {
            $(
                #[doc = concat!("[`", stringify!($name), "`]: `", $wire, "`.")]
                #[serde(rename = $wire)]
                $name,
            )*
        }

        impl ToolName {
            /// All tools, in the order they are offered to the model.
            pub const ALL: [ToolName; [$(stringify!($name)),*].len()] = [$(ToolName::$name),*];

            /// The tool's static facts.
            pub const fn definition(self) -> &'static ToolDefinition {
                match self {
                    $(ToolName::$name => &<$name as Tool>::DEFINITION,)*
                }
            }

            /// The name the model uses (written once, in the registry).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ToolName::$name => $wire,)*
                }
            }

            /// The JSON Schema of the tool's input as the model sees it: fields with a
            /// default are optional, no other keys are allowed, no `$ref`s.
            pub fn input_schema(self) -> serde_json::Value {
                match self {
                    $(ToolName::$name => input_schema::<<$name as Tool>::Input>(),)*
                }
            }

            /// The assistant whose tool this is: each tool belongs to exactly one.
            pub const fn assistant(self) -> Assistant {
                match self {
                    $(ToolName::$name => Assistant::$assistant,)*
                }
            }
        }

        // Each tool's `NAME` is its own registry line, checked when the crate compiles.
        $(const _: () = assert!(matches!(<$name as Tool>::NAME, ToolName::$name));)*

        /// A validated input of some tool; matching on it is how the server dispatches.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ToolInput {
            $(
                #[doc = concat!("Input of [`", stringify!($name), "`].")]
                $name(<$name as Tool>::Input),
            )*
        }

        impl ToolInput {
            /// Which tool this input is for.
            pub fn tool(&self) -> ToolName {
                match self {
                    $(ToolInput::$name(_) => ToolName::$name,)*
                }
            }

            /// The input as JSON, as stored and streamed.
            pub fn to_json(&self) -> serde_json::Value {
                let result = match self {
                    $(ToolInput::$name(input) => serde_json::to_value(input),)*
                };
                // Serialising plain structs of strings and numbers cannot fail.
                result.unwrap_or(serde_json::Value::Null)
            }
        }
    };
}

crate::tool_registry!(define_tools);

impl ToolName {
    /// Looks a model-proposed name up; `None` for a tool we do not have.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.as_str() == name)
    }
}

/// The assistants of the app. A conversation talks to one, fixed when it is created, and
/// the model is offered (and allowed to run) only that assistant's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "lowercase")]
pub enum Assistant {
    /// Weather, restaurants and bookings in Vietnam; the default.
    #[default]
    Restaurant,
    /// GiftGenius: gift ideas and (fictional) checkout.
    Gifts,
    /// Shipping quotes with a fictional formula.
    Shipping,
}

crate::by_hand::unit_enum_by_hand!(assistant_from_value, Assistant { Restaurant = "restaurant", Gifts = "gifts", Shipping = "shipping" });

impl Assistant {
    /// Every assistant, in the order the chat page offers them.
    pub const ALL: [Assistant; 3] = [Assistant::Restaurant, Assistant::Gifts, Assistant::Shipping];

    /// The name used in the API and stored with the conversation.
    pub const fn as_str(self) -> &'static str {
        match self {
            Assistant::Restaurant => "restaurant",
            Assistant::Gifts => "gifts",
            Assistant::Shipping => "shipping",
        }
    }

    /// Looks a stored or requested name up.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == name)
    }

    /// The name people see (Vietnamese UI).
    pub const fn label(self) -> &'static str {
        match self {
            Assistant::Restaurant => "Đặt bàn nhà hàng",
            Assistant::Gifts => "GiftGenius — gợi ý quà",
            Assistant::Shipping => "Báo giá giao hàng",
        }
    }

    /// This assistant's tools, in the order they are offered to the model.
    pub fn tools(self) -> Vec<ToolName> {
        ToolName::ALL
            .into_iter()
            .filter(|tool| tool.assistant() == self)
            .collect()
    }

    /// Whether the model of a conversation with this assistant may run `tool`.
    pub fn allows(self, tool: ToolName) -> bool {
        tool.assistant() == self
    }

    /// The names of this assistant's tools, for "unknown tool" errors.
    pub fn available(self) -> String {
        self.tools()
            .into_iter()
            .map(ToolName::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Assistant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn input_schema<T: JsonSchema>() -> serde_json::Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Some(object) = schema.as_object_mut() {
        // The title is the Rust type name: noise for the model.
        object.remove("title");
    }
    schema
}

/// What validation rules that depend on the moment need to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValidationContext {
    /// The current time, passed in so rules are testable and the crate needs no clock.
    pub now: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn risk_hints_are_consistent_and_reach_the_model() {
        for tool in ToolName::ALL {
            let definition = tool.definition();
            let risk = definition.risk;
            // Anything that changes data waits for a person; nothing read-only does.
            assert_eq!(definition.requires_approval, !risk.read_only, "{tool}");
            assert!(!(risk.read_only && risk.destructive), "{tool}");
            // Every side effect must be safe to repeat (idempotency keys or call ids).
            assert!(risk.idempotent, "{tool}");
            let text = definition.model_description();
            assert!(text.starts_with(definition.description), "{tool}");
            assert_eq!(
                text.contains("runs only after the user approves it"),
                definition.requires_approval,
                "{tool}"
            );
            assert_eq!(text.contains("destructive"), risk.destructive, "{tool}");
            for said in [definition.title, definition.invoking, definition.invoked] {
                assert!(
                    !said.is_empty() && said.chars().count() <= 64,
                    "{tool}: {said}"
                );
            }
        }
        assert!(ToolName::CancelBooking.definition().risk.destructive);
    }

    #[test]
    fn every_tool_that_changes_data_is_personal() {
        for tool in ToolName::ALL {
            let definition = tool.definition();
            // A side effect always belongs to someone: no anonymous caller may start one.
            if !definition.risk.read_only {
                assert!(
                    matches!(definition.access, Access::Personal(_)),
                    "{tool} changes data but is public"
                );
            }
        }
        assert_eq!(
            ToolName::ListBookings.definition().access,
            Access::Personal(SCOPE_BOOKINGS)
        );
        assert_eq!(ToolName::GetWeather.definition().access, Access::Public);
    }

    #[test]
    fn every_tool_belongs_to_one_assistant_and_names_round_trip() {
        let mut seen = 0;
        for assistant in Assistant::ALL {
            for tool in assistant.tools() {
                assert!(assistant.allows(tool));
                assert_eq!(ToolName::parse(tool.as_str()), Some(tool));
                seen += 1;
            }
            assert_eq!(Assistant::parse(assistant.as_str()), Some(assistant));
        }
        assert_eq!(seen, ToolName::ALL.len());
        assert!(!Assistant::Shipping.allows(ToolName::CreateBooking));
        assert_eq!(Assistant::parse("weather"), None);
        assert_eq!(Assistant::default(), Assistant::Restaurant);
    }

    #[test]
    fn error_codes_sort_into_their_classes() {
        assert_eq!(ErrorCode::ValidationError.class(), ErrorClass::Validation);
        assert_eq!(
            ErrorCode::UpstreamTimeout.class(),
            ErrorClass::Infrastructure
        );
        assert_eq!(
            ErrorCode::IdempotencyKeyReused.class(),
            ErrorClass::Platform
        );
        assert!(ToolError::new(ErrorCode::IdempotencyKeyInUse, "busy").retryable);
        assert!(!ToolError::new(ErrorCode::IdempotencyKeyReused, "other args").retryable);
        assert!(ToolError::new(ErrorCode::UpstreamUnavailable, "down").retryable);
        assert!(!ToolError::new(ErrorCode::ValidationError, "bad").retryable);
        assert_eq!(
            serde_json::to_value(ErrorCode::IdempotencyKeyReused).ok(),
            Some(serde_json::json!("IDEMPOTENCY_KEY_REUSED"))
        );
    }
}

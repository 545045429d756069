//! How a tool call fails, for its two readers: the model gets the precise English
//! `message`, everyone else (the page, the offline model's sentences, other clients) the
//! `code` and the structured [`ValidationIssue`]s, from which [`crate::explain`] writes a
//! sentence in the person's language.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One thing wrong with a tool's arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
pub struct ValidationIssue {
    /// Where, as a dotted path (`partySize`, `items.0.name`); empty for the whole document.
    pub path: String,
    /// What is wrong, short and specific, in English for the model and the log.
    pub message: String,
    /// The rule that was broken, with its limits, for readers that write their own
    /// sentence (the page, in the person's language).
    #[serde(default)]
    pub rule: Rule,
}

crate::by_hand::struct_by_hand!(
    issue_from_value,
    ValidationIssue {
        path: "path",
        message: "message",
        rule: "rule" = default
    }
);

impl ValidationIssue {
    /// An issue at `path` whose rule has no structure of its own ([`Rule::Other`]).
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::broke(path, Rule::Other, message)
    }

    /// An issue at `path` that broke `rule`.
    pub fn broke(path: impl Into<String>, rule: Rule, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
            rule,
        }
    }
}

/// Which rule an argument broke, with what a sentence about it needs (the limit, the
/// opening hours…). Written as `{"kind": "outsideHours", "open": "06:00", …}`.
// In the browser `Deserialize` is the hand-written [`rule_from_value`]: the derived impl of
// an internally tagged enum buffers the object and compiles one buffered deserializer per
// struct variant and per input (a parsed value, a string), about 35 KB of the hydrate
// bundle. The server keeps the derived impl; tests check both agree.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Rule {
    /// A rule with nothing more to say than its message.
    #[default]
    Other,
    /// The arguments were not JSON at all.
    NotJson,
    /// The arguments were JSON but not an object.
    NotObject,
    /// The arguments were larger than the server reads.
    TooLarge {
        /// The limit, in KiB.
        limit_kib: u32,
    },
    /// A required field is absent.
    Missing,
    /// A field the tool does not have.
    UnknownField {
        /// The fields the tool has, where known.
        allowed: Vec<String>,
    },
    /// The value has the wrong JSON type.
    WrongType {
        /// The JSON type(s) expected, as in JSON Schema (`integer`, `string or null`).
        expected: String,
    },
    /// A text that is empty or only spaces.
    Blank,
    /// A number below its minimum.
    BelowMinimum {
        /// The smallest allowed value (or the bound it must exceed, when `exclusive`).
        min: serde_json::Number,
        /// Whether the bound itself is not allowed.
        exclusive: bool,
    },
    /// A number above its maximum.
    AboveMaximum {
        /// The largest allowed value (or the bound it must stay under, when `exclusive`).
        max: serde_json::Number,
        /// Whether the bound itself is not allowed.
        exclusive: bool,
    },
    /// A text or list shorter than allowed.
    TooShort {
        /// The fewest characters or items.
        min: u64,
    },
    /// A text or list longer than allowed.
    TooLong {
        /// The most characters or items.
        max: u64,
    },
    /// A number with more decimals than the value can hold (a weight finer than a gram).
    TooPrecise {
        /// The most decimals allowed.
        decimals: u32,
    },
    /// Not an RFC 3339 date-time with an offset.
    DateTimeFormat,
    /// Not a `YYYY-MM-DD` date.
    DateFormat,
    /// Not one of the allowed values.
    OneOf {
        /// The allowed values.
        allowed: Vec<String>,
    },
    /// A time that has already passed.
    InPast,
    /// A time further ahead than bookings are taken.
    TooFarAhead {
        /// How many days ahead bookings are taken.
        days: u32,
    },
    /// A day past the end of a forecast.
    BeyondForecast {
        /// How many days the forecast covers, today included.
        days: u32,
    },
    /// A field given together with one it excludes (`days` with `from`: two ways of
    /// saying which days, which could disagree).
    Exclusive {
        /// The path of the other field.
        with: String,
    },
    /// A lower bound above its upper bound (`budget_min` over `budget_max`, `from` after
    /// `to`).
    MinAboveMax {
        /// The path of the upper bound.
        max_field: String,
    },
    /// Nothing with this id exists for the person.
    NoSuch {
        /// What kind of thing.
        entity: Entity,
    },
    /// The restaurant does not seat guests then.
    OutsideHours {
        /// The restaurant's name.
        restaurant: String,
        /// Opening, local `HH:MM`.
        open: String,
        /// Closing, local `HH:MM`; the last seating is an hour before.
        close: String,
        /// The time asked for, local `HH:MM`.
        requested: String,
    },
    /// More guests than the restaurant takes in one booking.
    PartyTooLarge {
        /// The restaurant's name.
        restaurant: String,
        /// The most guests per booking.
        max: u32,
    },
    /// A city the tool has no data for.
    UnknownCity {
        /// The cities it has.
        available: Vec<String>,
    },
    /// The same call already did something with other arguments.
    ConflictsWithEarlier,
}

crate::by_hand::deserialize_by_hand_in_the_browser!(Rule, rule_from_value);

/// Reads a rule in the wire format the derived `Deserialize` of [`Rule`] accepts: the
/// variant by `kind`, its fields by their camelCase names, anything else ignored.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn rule_from_value(value: serde_json::Value) -> Result<Rule, String> {
    use crate::by_hand::{take, take_str, typed};
    let serde_json::Value::Object(mut fields) = value else {
        return Err("a rule must be an object".to_owned());
    };
    let fields = &mut fields;
    let kind = take_str(fields, "kind")?;
    Ok(match kind.as_str() {
        "other" => Rule::Other,
        "notJson" => Rule::NotJson,
        "notObject" => Rule::NotObject,
        "tooLarge" => Rule::TooLarge {
            limit_kib: typed(take(fields, "limitKib")?)?,
        },
        "missing" => Rule::Missing,
        "unknownField" => Rule::UnknownField {
            allowed: typed(take(fields, "allowed")?)?,
        },
        "wrongType" => Rule::WrongType {
            expected: take_str(fields, "expected")?,
        },
        "blank" => Rule::Blank,
        "belowMinimum" => Rule::BelowMinimum {
            min: typed(take(fields, "min")?)?,
            exclusive: typed(take(fields, "exclusive")?)?,
        },
        "aboveMaximum" => Rule::AboveMaximum {
            max: typed(take(fields, "max")?)?,
            exclusive: typed(take(fields, "exclusive")?)?,
        },
        "tooShort" => Rule::TooShort {
            min: typed(take(fields, "min")?)?,
        },
        "tooLong" => Rule::TooLong {
            max: typed(take(fields, "max")?)?,
        },
        "tooPrecise" => Rule::TooPrecise {
            decimals: typed(take(fields, "decimals")?)?,
        },
        "dateTimeFormat" => Rule::DateTimeFormat,
        "dateFormat" => Rule::DateFormat,
        "oneOf" => Rule::OneOf {
            allowed: typed(take(fields, "allowed")?)?,
        },
        "inPast" => Rule::InPast,
        "tooFarAhead" => Rule::TooFarAhead {
            days: typed(take(fields, "days")?)?,
        },
        "beyondForecast" => Rule::BeyondForecast {
            days: typed(take(fields, "days")?)?,
        },
        "exclusive" => Rule::Exclusive {
            with: take_str(fields, "with")?,
        },
        "minAboveMax" => Rule::MinAboveMax {
            max_field: take_str(fields, "maxField")?,
        },
        "noSuch" => Rule::NoSuch {
            entity: typed(take(fields, "entity")?)?,
        },
        "outsideHours" => Rule::OutsideHours {
            restaurant: take_str(fields, "restaurant")?,
            open: take_str(fields, "open")?,
            close: take_str(fields, "close")?,
            requested: take_str(fields, "requested")?,
        },
        "partyTooLarge" => Rule::PartyTooLarge {
            restaurant: take_str(fields, "restaurant")?,
            max: typed(take(fields, "max")?)?,
        },
        "unknownCity" => Rule::UnknownCity {
            available: typed(take(fields, "available")?)?,
        },
        "conflictsWithEarlier" => Rule::ConflictsWithEarlier,
        other => return Err(format!("unknown variant `{other}`")),
    })
}

/// The kinds of thing a tool's arguments refer to by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "camelCase")]
pub enum Entity {
    /// A restaurant (`restaurantId`).
    Restaurant,
    /// One of the person's bookings (`bookingId`).
    Booking,
    /// A gift of the catalogue (`gift_id`).
    Gift,
    /// A checkout draft (`draft_id`).
    Draft,
    /// A tool (the call's name).
    Tool,
}

crate::by_hand::unit_enum_by_hand!(entity_from_value, Entity { Restaurant = "restaurant", Booking = "booking", Gift = "gift", Draft = "draft", Tool = "tool" });

impl fmt::Display for ValidationIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Why a tool's arguments were rejected: every issue found, in path order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidationError {
    /// The issues; never empty.
    pub issues: Vec<ValidationIssue>,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, issue) in self.issues.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{issue}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationError {}

/// Machine-readable error codes of tool results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// The arguments broke the schema or a rule; the model should fix them.
    ValidationError,
    /// The model asked for a tool we do not have.
    UnknownTool,
    /// The tool failed for a reason on our side.
    ExecutionFailed,
    /// A service the tool needs did not answer.
    UpstreamUnavailable,
    /// A service the tool needs answered too slowly.
    UpstreamTimeout,
    /// The person declined the call.
    Declined,
    /// The person stopped the reply before the tool finished.
    Cancelled,
    /// The model's reply was cut off before the call's arguments were complete; not run.
    Interrupted,
    /// The person wrote something else instead of answering the confirmation; not run.
    /// Unlike [`ErrorCode::Declined`], nobody said no: the page offers to do it still.
    MovedOn,
    /// What the call refers to does not exist, or is not the person's (the same answer
    /// either way, so ids cannot be probed).
    NotFound,
    /// The idempotency key was already used for a request with other arguments.
    IdempotencyKeyReused,
    /// A request with this idempotency key is still running; retry shortly.
    IdempotencyKeyInUse,
    /// The draft was already committed (by a request with another key).
    DraftAlreadyCommitted,
}

crate::by_hand::unit_enum_by_hand!(error_code_from_value, ErrorCode { ValidationError = "VALIDATION_ERROR", UnknownTool = "UNKNOWN_TOOL", ExecutionFailed = "EXECUTION_FAILED", UpstreamUnavailable = "UPSTREAM_UNAVAILABLE", UpstreamTimeout = "UPSTREAM_TIMEOUT", Declined = "DECLINED", Cancelled = "CANCELLED", Interrupted = "INTERRUPTED", MovedOn = "MOVED_ON", NotFound = "NOT_FOUND", IdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED", IdempotencyKeyInUse = "IDEMPOTENCY_KEY_IN_USE", DraftAlreadyCommitted = "DRAFT_ALREADY_COMMITTED" });

/// The four kinds of failure, kept apart because each asks for a different reaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorClass {
    /// The arguments were wrong: the model (or the person, in a form) should fix them.
    Validation,
    /// Something the tool needs is down or slow: try again later.
    Infrastructure,
    /// A repeated or concurrent request, handled by idempotency.
    Platform,
    /// The call did not run or ended on purpose: declined, stopped, cut off.
    NotRun,
    /// A failure of ours; details are in the server log only.
    Internal,
}

impl ErrorCode {
    /// Which kind of failure this code is.
    pub const fn class(self) -> ErrorClass {
        match self {
            ErrorCode::ValidationError
            | ErrorCode::UnknownTool
            | ErrorCode::NotFound
            | ErrorCode::DraftAlreadyCommitted => ErrorClass::Validation,
            ErrorCode::UpstreamUnavailable | ErrorCode::UpstreamTimeout => {
                ErrorClass::Infrastructure
            }
            ErrorCode::IdempotencyKeyReused | ErrorCode::IdempotencyKeyInUse => {
                ErrorClass::Platform
            }
            ErrorCode::Declined
            | ErrorCode::Cancelled
            | ErrorCode::Interrupted
            | ErrorCode::MovedOn => ErrorClass::NotRun,
            ErrorCode::ExecutionFailed => ErrorClass::Internal,
        }
    }

    /// Whether calling again later may succeed.
    pub const fn retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::UpstreamUnavailable
                | ErrorCode::UpstreamTimeout
                | ErrorCode::IdempotencyKeyInUse
        )
    }
}

/// A tool failure as the model and the person see it; details stay in the server log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
pub struct ToolError {
    /// What kind of failure.
    pub code: ErrorCode,
    /// Short text for the model and the person; never a stack trace, SQL or path.
    pub message: String,
    /// Whether calling again later may succeed.
    pub retryable: bool,
    /// What exactly was wrong, field by field, when the call was rejected for its
    /// arguments; empty for the other failures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<ValidationIssue>,
}

crate::by_hand::struct_by_hand!(
    tool_error_from_value,
    ToolError {
        code: "code",
        message: "message",
        retryable: "retryable",
        issues: "issues" = default
    }
);

impl ToolError {
    /// An error with the given code and message; retryable as the code says.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: code.retryable(),
            issues: Vec::new(),
        }
    }

    /// The same error, saying which fields broke which rules.
    pub fn with_issues(mut self, issues: Vec<ValidationIssue>) -> Self {
        self.issues = issues;
        self
    }

    /// The same error about one field.
    pub fn at(self, path: impl Into<String>, rule: Rule) -> Self {
        let issue = ValidationIssue::broke(path, rule, self.message.clone());
        self.with_issues(vec![issue])
    }

    /// The first issue's rule, or [`Rule::Other`].
    pub fn rule(&self) -> &Rule {
        static OTHER: Rule = Rule::Other;
        self.issues.first().map_or(&OTHER, |issue| &issue.rule)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<ValidationError> for ToolError {
    fn from(error: ValidationError) -> Self {
        ToolError::new(
            ErrorCode::ValidationError,
            format!("Invalid arguments: {error}"),
        )
        .with_issues(error.issues)
    }
}

/// One rule of every kind, for tests. The match has no wildcard, so a new kind does not
/// compile until it is here, and the tests that read every kind (the browser's reader,
/// the sentences of `explain`) cover it.
#[cfg(test)]
pub(crate) fn every_kind() -> Vec<Rule> {
    let rules = vec![
        Rule::Other,
        Rule::NotJson,
        Rule::NotObject,
        Rule::TooLarge { limit_kib: 64 },
        Rule::Missing,
        Rule::UnknownField {
            allowed: vec!["city".into(), "days".into()],
        },
        Rule::WrongType {
            expected: "integer".into(),
        },
        Rule::Blank,
        Rule::BelowMinimum {
            min: 1.into(),
            exclusive: false,
        },
        Rule::AboveMaximum {
            max: serde_json::Number::from_f64(0.5).unwrap(),
            exclusive: true,
        },
        Rule::TooShort { min: 2 },
        Rule::TooLong { max: 200 },
        Rule::TooPrecise { decimals: 3 },
        Rule::DateTimeFormat,
        Rule::DateFormat,
        Rule::OneOf {
            allowed: vec!["friend".into()],
        },
        Rule::InPast,
        Rule::TooFarAhead { days: 60 },
        Rule::BeyondForecast { days: 7 },
        Rule::Exclusive {
            with: "from".into(),
        },
        Rule::MinAboveMax {
            max_field: "budget_max".into(),
        },
        Rule::NoSuch {
            entity: Entity::Restaurant,
        },
        Rule::OutsideHours {
            restaurant: "Nha Hang A".into(),
            open: "06:00".into(),
            close: "22:00".into(),
            requested: "23:30".into(),
        },
        Rule::PartyTooLarge {
            restaurant: "Nha Hang A".into(),
            max: 12,
        },
        Rule::UnknownCity {
            available: vec!["Da Nang".into()],
        },
        Rule::ConflictsWithEarlier,
    ];
    for rule in &rules {
        match rule {
            Rule::Other
            | Rule::NotJson
            | Rule::NotObject
            | Rule::TooLarge { .. }
            | Rule::Missing
            | Rule::UnknownField { .. }
            | Rule::WrongType { .. }
            | Rule::Blank
            | Rule::BelowMinimum { .. }
            | Rule::AboveMaximum { .. }
            | Rule::TooShort { .. }
            | Rule::TooLong { .. }
            | Rule::TooPrecise { .. }
            | Rule::DateTimeFormat
            | Rule::DateFormat
            | Rule::OneOf { .. }
            | Rule::InPast
            | Rule::TooFarAhead { .. }
            | Rule::BeyondForecast { .. }
            | Rule::Exclusive { .. }
            | Rule::MinAboveMax { .. }
            | Rule::NoSuch { .. }
            | Rule::OutsideHours { .. }
            | Rule::PartyTooLarge { .. }
            | Rule::UnknownCity { .. }
            | Rule::ConflictsWithEarlier => {}
        }
    }
    rules
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn both(value: &Value) -> (Result<Rule, String>, Option<Rule>) {
        let derived = serde_json::from_value::<Rule>(value.clone()).ok();
        (rule_from_value(value.clone()), derived)
    }

    #[test]
    fn the_browsers_reader_reads_every_kind_as_written() {
        let rules = super::every_kind();
        let kinds: std::collections::HashSet<_> =
            rules.iter().map(std::mem::discriminant).collect();
        assert_eq!(kinds.len(), rules.len(), "one rule of each kind");
        for rule in rules {
            let written = serde_json::to_value(&rule).unwrap();
            let (ours, derived) = both(&written);
            assert_eq!(derived.as_ref(), Some(&rule), "{written}");
            assert_eq!(ours.as_ref().ok(), Some(&rule), "{written}: {ours:?}");
        }
    }

    #[test]
    fn the_browsers_reader_accepts_what_the_derived_one_does() {
        let accepted = [
            json!({"kind": "blank", "extra": true}),
            json!({"kind": "tooLarge", "limitKib": 64, "limit_kib": "ignored"}),
            json!({"kind": "belowMinimum", "min": -2.5, "exclusive": true}),
            json!({"kind": "noSuch", "entity": "draft"}),
            json!({"kind": "tooShort", "min": 18446744073709551615u64}),
        ];
        for value in accepted {
            let (ours, derived) = both(&value);
            assert!(derived.is_some(), "the derived reader rejects {value}");
            assert_eq!(ours.ok(), derived, "{value}");
        }
    }

    #[test]
    fn the_browsers_reader_rejects_what_the_derived_one_does() {
        let rejected = [
            json!("blank"),
            json!(null),
            json!({}),
            json!({"kind": 3}),
            json!({"kind": "launchRocket"}),
            json!({"kind": "TooLarge", "limitKib": 64}),
            json!({"kind": "tooLarge"}),
            json!({"kind": "tooLarge", "limit_kib": 64}),
            json!({"kind": "tooLarge", "limitKib": -1}),
            json!({"kind": "tooLarge", "limitKib": 4294967296u64}),
            json!({"kind": "tooPrecise", "decimals": 1.5}),
            json!({"kind": "belowMinimum", "min": "1", "exclusive": false}),
            json!({"kind": "belowMinimum", "min": 1}),
            json!({"kind": "oneOf", "allowed": ["a", 1]}),
            json!({"kind": "noSuch", "entity": "Restaurant"}),
            json!({"kind": "outsideHours", "restaurant": "x", "open": "06:00", "close": "22:00"}),
            json!({"kind": "minAboveMax", "maxField": null}),
            json!({"kind": "beyondForecast"}),
            json!({"kind": "exclusive", "with": 3}),
        ];
        for value in rejected {
            let (ours, derived) = both(&value);
            assert!(derived.is_none(), "the derived reader accepts {value}");
            assert!(
                ours.is_err(),
                "the browser's reader accepts {value}: {ours:?}"
            );
        }
    }
}

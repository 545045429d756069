//! Strict validation of model-proposed arguments against the schema the model was given,
//! then the typed parse and the cross-field rules. Runs before anything executes.

use std::sync::OnceLock;

use jsonschema::{
    error::{TypeKind, ValidationErrorKind},
    Validator,
};
use serde_json::Value;

use super::{Rule, Tool, ToolInput, ToolName, ValidationContext, ValidationError, ValidationIssue};

/// Parses and validates a tool call's raw argument text.
///
/// Every problem is reported with its path, e.g. `partySize: expected integer, received
/// string`; nothing is coerced (`"4"` is not a number, `true` is not a number).
pub fn validate_arguments(
    tool: ToolName,
    raw: &str,
    ctx: &ValidationContext,
) -> Result<ToolInput, ValidationError> {
    // Some providers send an empty string for a call without arguments.
    let text = if raw.trim().is_empty() { "{}" } else { raw };
    let value: Value = serde_json::from_str(text).map_err(|error| {
        single_issue(
            "",
            Rule::NotJson,
            format!("arguments are not valid JSON ({error})"),
        )
    })?;
    if !value.is_object() {
        return Err(single_issue(
            "",
            Rule::NotObject,
            format!(
                "expected an object of arguments, received {}",
                type_name(&value)
            ),
        ));
    }
    let Some(validator) = validator(tool) else {
        return Err(single_issue(
            "",
            Rule::Other,
            "this tool's schema is unavailable",
        ));
    };
    let mut issues: Vec<ValidationIssue> = validator
        .iter_errors(&value)
        .flat_map(|error| describe(tool, &error))
        .collect();
    if !issues.is_empty() {
        issues.sort_by(|a, b| a.path.cmp(&b.path).then(a.message.cmp(&b.message)));
        issues.dedup();
        return Err(ValidationError { issues });
    }
    dispatch(tool, value, ctx)
}

macro_rules! define_dispatch {
    (() [$(($name:ident, $wire:literal, $assistant:ident)),* $(,)?]) => {
        /// The typed parse and cross-field rules of `tool`, for arguments the schema passed.
        fn dispatch(
            tool: ToolName,
            value: serde_json::Value,
            ctx: &ValidationContext,
        ) -> Result<ToolInput, ValidationError> {
            match tool {
                $(ToolName::$name => typed::<crate::tools::$name>(value, ctx).map(ToolInput::$name),)*
            }
        }
    };
}

crate::tool_registry!(define_dispatch);

fn typed<T: Tool>(value: Value, ctx: &ValidationContext) -> Result<T::Input, ValidationError> {
    let issues = T::check_json(&value);
    if !issues.is_empty() {
        return Err(ValidationError { issues });
    }
    // The schema already holds; what is left is what only the type knows (date-time
    // parsing) and the cross-field rules.
    let input: T::Input = serde_json::from_value(value)
        .map_err(|error| single_issue("", Rule::Other, clean_serde_message(&error.to_string())))?;
    let issues = T::check(&input, ctx);
    if issues.is_empty() {
        Ok(input)
    } else {
        Err(ValidationError { issues })
    }
}

fn single_issue(path: &str, rule: Rule, message: impl Into<String>) -> ValidationError {
    ValidationError {
        issues: vec![ValidationIssue::broke(path, rule, message)],
    }
}

fn validator(tool: ToolName) -> Option<&'static Validator> {
    static VALIDATORS: OnceLock<Vec<(ToolName, Option<Validator>)>> = OnceLock::new();
    let all = VALIDATORS.get_or_init(|| {
        ToolName::ALL
            .into_iter()
            .map(|tool| {
                let built = jsonschema::options()
                    .should_validate_formats(true)
                    .build(&tool.input_schema())
                    .ok();
                (tool, built)
            })
            .collect()
    });
    all.iter()
        .find(|(name, _)| *name == tool)
        .and_then(|(_, validator)| validator.as_ref())
}

/// JSON pointer (`/items/0/name`) to the dotted form people read (`items.0.name`).
fn dotted(pointer: &str) -> String {
    pointer
        .trim_start_matches('/')
        .split('/')
        .filter(|segment| !segment.is_empty())
        .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_owned()
    } else {
        format!("{parent}.{child}")
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The fields of the arguments object; empty below the top level, where the schema's
/// nested objects would need their own lookup.
fn allowed_fields(tool: ToolName, parent: &str) -> Vec<String> {
    if !parent.is_empty() {
        return Vec::new();
    }
    tool.input_schema()
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}

fn number(limit: &Value) -> serde_json::Number {
    match limit {
        Value::Number(number) => number.clone(),
        _ => serde_json::Number::from(0),
    }
}

fn describe(tool: ToolName, error: &jsonschema::ValidationError<'_>) -> Vec<ValidationIssue> {
    let path = dotted(error.instance_path().as_str());
    let instance = error.instance();
    let (rule, message) = match error.kind() {
        ValidationErrorKind::Type { kind } => {
            // An optional field's schema allows null too; "expected integer" reads better.
            let expected = match kind {
                TypeKind::Single(single) => single.to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.to_string())
                    .filter(|t| t != "null")
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            let message = format!("expected {expected}, received {}", type_name(instance));
            (Rule::WrongType { expected }, message)
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            return vec![ValidationIssue::broke(
                join(&path, name),
                Rule::Missing,
                "required field is missing",
            )];
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let allowed = allowed_fields(tool, &path);
            let hint = if allowed.is_empty() {
                String::new()
            } else {
                format!(" (allowed: {})", allowed.join(", "))
            };
            return unexpected
                .iter()
                .map(|key| {
                    ValidationIssue::broke(
                        join(&path, key),
                        Rule::UnknownField {
                            allowed: allowed.clone(),
                        },
                        format!("unknown field{hint}"),
                    )
                })
                .collect();
        }
        ValidationErrorKind::Minimum { limit } => (
            Rule::BelowMinimum {
                min: number(limit),
                exclusive: false,
            },
            format!("must be at least {limit}, received {instance}"),
        ),
        ValidationErrorKind::Maximum { limit } => (
            Rule::AboveMaximum {
                max: number(limit),
                exclusive: false,
            },
            format!("must be at most {limit}, received {instance}"),
        ),
        ValidationErrorKind::ExclusiveMinimum { limit } => (
            Rule::BelowMinimum {
                min: number(limit),
                exclusive: true,
            },
            format!("must be greater than {limit}, received {instance}"),
        ),
        ValidationErrorKind::ExclusiveMaximum { limit } => (
            Rule::AboveMaximum {
                max: number(limit),
                exclusive: true,
            },
            format!("must be less than {limit}, received {instance}"),
        ),
        ValidationErrorKind::MinLength { limit: 1 } => (Rule::Blank, "must not be empty".to_owned()),
        ValidationErrorKind::MinLength { limit } => (
            Rule::TooShort { min: *limit },
            format!("must be at least {limit} characters"),
        ),
        ValidationErrorKind::MaxLength { limit } => (
            Rule::TooLong { max: *limit },
            format!("must be at most {limit} characters"),
        ),
        ValidationErrorKind::MinItems { limit } => (
            Rule::TooShort { min: *limit },
            format!("must have at least {limit} items"),
        ),
        ValidationErrorKind::MaxItems { limit } => (
            Rule::TooLong { max: *limit },
            format!("must have at most {limit} items"),
        ),
        ValidationErrorKind::Format { format } if format == "date-time" => (
            Rule::DateTimeFormat,
            format!(
                "expected an RFC 3339 date-time with offset such as 2026-12-24T19:00:00+07:00, received {instance}"
            ),
        ),
        ValidationErrorKind::Format { format } if format == "date" => (
            Rule::DateFormat,
            format!("expected a date as YYYY-MM-DD, received {instance}"),
        ),
        ValidationErrorKind::Enum { options } => {
            let allowed = options
                .as_array()
                .map(|values| {
                    values
                        .iter()
                        .filter_map(|value| value.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            (Rule::OneOf { allowed }, format!("must be one of {options}"))
        }
        _ => (Rule::Other, error.to_string()),
    };
    vec![ValidationIssue::broke(path, rule, message)]
}

/// serde's messages end with "at line 1 column 42"; the path already says where.
fn clean_serde_message(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(index) => message[..index].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    fn ctx() -> ValidationContext {
        ValidationContext {
            now: Utc.with_ymd_and_hms(2026, 11, 29, 12, 0, 0).unwrap(),
        }
    }

    fn issues(tool: ToolName, raw: &str) -> Vec<String> {
        match validate_arguments(tool, raw, &ctx()) {
            Ok(input) => panic!("expected rejection, got {input:?}"),
            Err(error) => error.issues.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn accepts_valid_input_and_fills_defaults() {
        let input =
            validate_arguments(ToolName::GetWeather, r#"{"city":"Hà Nội"}"#, &ctx()).unwrap();
        assert_eq!(
            input,
            ToolInput::GetWeather(crate::tools::GetWeatherInput {
                city: "Hà Nội".into(),
                days: None,
                from: None,
                to: None,
            })
        );
        let booking = validate_arguments(
            ToolName::CreateBooking,
            r#"{"restaurantId":"hn-1","partySize":4,"startsAt":"2026-12-24T19:00:00+07:00"}"#,
            &ctx(),
        )
        .unwrap();
        assert_eq!(booking.tool(), ToolName::CreateBooking);
    }

    #[test]
    fn a_booking_is_taken_up_to_180_days_ahead() {
        let at = |starts: &str| {
            format!(r#"{{"restaurantId":"hn-1","partySize":2,"startsAt":"{starts}"}}"#)
        };
        // 2026-11-29 12:00 UTC + 180 days = 2027-05-28 12:00 UTC.
        assert!(validate_arguments(
            ToolName::CreateBooking,
            &at("2027-05-28T18:00:00+07:00"),
            &ctx()
        )
        .is_ok());
        for far in ["2027-05-29T19:00:00+07:00", "9999-12-31T19:00:00+07:00"] {
            let error = validate_arguments(ToolName::CreateBooking, &at(far), &ctx()).unwrap_err();
            assert_eq!(error.issues.len(), 1, "{far}");
            assert_eq!(error.issues[0].path, "startsAt");
            assert_eq!(error.issues[0].rule, Rule::TooFarAhead { days: 180 });
            assert!(
                error.issues[0].message.contains("180 days"),
                "{}",
                error.issues[0].message
            );
        }
    }

    #[test]
    fn malformed_json_is_rejected() {
        let found = issues(ToolName::GetWeather, r#"{"city": "Huế""#);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with("arguments are not valid JSON"),
            "{found:?}"
        );
        assert_eq!(
            issues(ToolName::GetWeather, "[1,2]"),
            ["expected an object of arguments, received array"]
        );
    }

    #[test]
    fn wrong_types_are_not_coerced() {
        let raw =
            r#"{"restaurantId":"hn-1","partySize":"bốn","startsAt":"2026-12-24T19:00:00+07:00"}"#;
        assert_eq!(
            issues(ToolName::CreateBooking, raw),
            ["partySize: expected integer, received string"]
        );
        let raw =
            r#"{"restaurantId":"hn-1","partySize":true,"startsAt":"2026-12-24T19:00:00+07:00"}"#;
        assert_eq!(
            issues(ToolName::CreateBooking, raw),
            ["partySize: expected integer, received boolean"]
        );
        let raw =
            r#"{"restaurantId":"hn-1","partySize":4.5,"startsAt":"2026-12-24T19:00:00+07:00"}"#;
        assert_eq!(
            issues(ToolName::CreateBooking, raw),
            ["partySize: expected integer, received number"]
        );
        assert_eq!(
            issues(
                ToolName::SearchRestaurants,
                r#"{"city":"Huế","partySize":"2"}"#
            ),
            ["partySize: expected integer, received string"]
        );
    }

    #[test]
    fn missing_and_extra_keys_are_named() {
        let raw = r#"{"restaurantId":"hn-1","startsAt":"2026-12-24T19:00:00+07:00","note":"x"}"#;
        let found = issues(ToolName::CreateBooking, raw);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found.contains(&"partySize: required field is missing".to_owned()));
        assert!(found
            .iter()
            .any(|m| m.starts_with("note: unknown field (allowed: ")));
    }

    #[test]
    fn bounds_are_enforced() {
        assert_eq!(
            issues(ToolName::GetWeather, r#"{"city":"Huế","days":8}"#),
            ["days: must be at most 7, received 8"]
        );
        assert_eq!(
            issues(ToolName::GetWeather, r#"{"city":"Huế","days":0}"#),
            ["days: must be at least 1, received 0"]
        );
        assert_eq!(
            issues(ToolName::GetWeather, r#"{"city":""}"#),
            ["city: must not be empty"]
        );
        assert_eq!(
            issues(ToolName::GetWeather, r#"{"city":"   "}"#),
            ["city: must not be blank"]
        );
        let raw =
            r#"{"restaurantId":"hn-1","partySize":21,"startsAt":"2026-12-24T19:00:00+07:00"}"#;
        assert_eq!(
            issues(ToolName::CreateBooking, raw),
            ["partySize: must be at most 20, received 21"]
        );
    }

    #[test]
    fn date_times_need_an_offset_and_the_future() {
        let raw = r#"{"restaurantId":"hn-1","partySize":2,"startsAt":"2026-12-24T19:00:00"}"#;
        let found = issues(ToolName::CreateBooking, raw);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with("startsAt: expected an RFC 3339 date-time"),
            "{found:?}"
        );
        let raw = r#"{"restaurantId":"hn-1","partySize":2,"startsAt":"tối mai 7 giờ"}"#;
        assert!(
            issues(ToolName::CreateBooking, raw)[0].starts_with("startsAt: expected an RFC 3339")
        );
        let raw = r#"{"restaurantId":"hn-1","partySize":2,"startsAt":"2026-11-01T19:00:00+07:00"}"#;
        assert_eq!(
            issues(ToolName::CreateBooking, raw),
            ["startsAt: 2026-11-01T19:00:00+07:00 is in the past"]
        );
    }

    #[test]
    fn several_problems_are_all_reported_in_path_order() {
        let raw = r#"{"partySize":"bốn","startsAt":false}"#;
        let found = issues(ToolName::CreateBooking, raw);
        assert_eq!(
            found,
            [
                "partySize: expected integer, received string",
                "restaurantId: required field is missing",
                "startsAt: expected string, received boolean",
            ]
        );
    }

    #[test]
    fn empty_arguments_mean_an_empty_object() {
        assert_eq!(
            issues(ToolName::GetWeather, "  "),
            ["city: required field is missing"]
        );
    }

    #[test]
    fn schema_sent_to_the_model_has_input_semantics() {
        let schema = ToolName::GetWeather.input_schema();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], serde_json::json!(["city"]));
        assert_eq!(schema["properties"]["days"]["maximum"], 7);
        // Named days are dates, which the validator checks as such.
        for field in ["from", "to"] {
            assert_eq!(schema["properties"][field]["format"], "date", "{field}");
        }
        let booking = ToolName::CreateBooking.input_schema();
        assert_eq!(booking["properties"]["startsAt"]["format"], "date-time");
        assert!(!booking.to_string().contains("$ref"));
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod proptests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use proptest::prelude::*;
    use serde_json::json;

    fn ctx() -> ValidationContext {
        ValidationContext {
            now: Utc.with_ymd_and_hms(2026, 11, 29, 12, 0, 0).unwrap(),
        }
    }

    fn any_json() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            (-1e6f64..1e6).prop_map(|n| json!(n)),
            "\\PC{0,8}".prop_map(Value::String),
            Just(json!([])),
            Just(json!({})),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// A party size is accepted exactly when it is an integer from 1 to 20; anything
        /// else is rejected with an issue naming `partySize`.
        #[test]
        fn party_size_is_accepted_exactly_when_valid(size in any_json()) {
            let raw = json!({"restaurantId": "hn-1", "partySize": size, "startsAt": "2026-12-24T19:00:00+07:00"});
            let valid = size.as_i64().is_some_and(|n| (1..=20).contains(&n)) && !size.is_f64();
            match validate_arguments(ToolName::CreateBooking, &raw.to_string(), &ctx()) {
                Ok(ToolInput::CreateBooking(input)) => {
                    prop_assert!(valid, "accepted {size}");
                    prop_assert_eq!(Some(i64::from(input.party_size)), size.as_i64());
                }
                Ok(other) => prop_assert!(false, "wrong tool {other:?}"),
                Err(error) => {
                    prop_assert!(!valid, "rejected {size}: {error}");
                    prop_assert!(error.issues.iter().all(|i| i.path == "partySize"), "{error}");
                }
            }
        }

        /// Arbitrary text never panics the validator and a rejection always says something.
        #[test]
        fn any_text_is_accepted_or_explained(raw in "\\PC{0,80}") {
            for tool in ToolName::ALL {
                if let Err(error) = validate_arguments(tool, &raw, &ctx()) {
                    prop_assert!(!error.issues.is_empty());
                    prop_assert!(error.issues.iter().all(|i| !i.message.is_empty()));
                }
            }
        }
    }
}

//! `checkAvailability`: whether one restaurant has room for a party at a time, and the
//! nearest times that day that do — what a person asks before deciding to book.

use chrono::{DateTime, FixedOffset};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    booking::BOOKING_HORIZON_DAYS, Access, FreeSlot, Risk, Rule, Tool, ToolDefinition, ToolName,
    ValidationContext, ValidationIssue,
};

/// Marker type of the `checkAvailability` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckAvailability;

/// Arguments of `checkAvailability`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckAvailabilityInput {
    /// The `id` of a restaurant from searchRestaurants.
    #[schemars(length(min = 1, max = 100))]
    pub restaurant_id: String,
    /// Number of people, as the user said it. Never guess it.
    #[schemars(range(min = 1, max = 20))]
    pub party_size: u8,
    /// The time the user would like, RFC 3339 with the restaurant's UTC offset,
    /// e.g. "2026-12-24T19:00:00+07:00".
    #[cfg_attr(
        target_arch = "wasm32",
        serde(deserialize_with = "crate::by_hand::rfc3339")
    )]
    pub starts_at: DateTime<FixedOffset>,
}

/// Most free times listed besides the one asked for.
pub const NEAREST_SLOTS: usize = 4;

/// Result of `checkAvailability`: the time asked for and the nearest free times that day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckAvailabilityOutput {
    /// The restaurant's id (pass it to createBooking).
    pub restaurant_id: String,
    /// The restaurant's name.
    pub restaurant_name: String,
    /// Opening hours, local time, e.g. "10:00–22:00".
    pub opening_hours: String,
    /// Number of people asked about.
    pub party_size: u8,
    /// The time asked about, in the restaurant's offset.
    #[cfg_attr(
        target_arch = "wasm32",
        serde(deserialize_with = "crate::by_hand::rfc3339")
    )]
    pub starts_at: DateTime<FixedOffset>,
    /// Whether a table for the party is free at exactly that time. `false` also when the
    /// restaurant does not seat anyone then (see `seatsLeft`).
    pub available: bool,
    /// Seats still free at that time; `null` when it is not a seating time (outside the
    /// hours, or not on the half hour).
    pub seats_left: Option<u32>,
    /// Up to four other times that day with room for the party, nearest first.
    pub nearest: Vec<FreeSlot>,
}

impl Tool for CheckAvailability {
    const NAME: ToolName = ToolName::CheckAvailability;
    const DEFINITION: ToolDefinition = ToolDefinition {
        name: ToolName::CheckAvailability.as_str(),
        title: "Check a table",
        invoking: "Checking for a free table…",
        invoked: "Availability checked",
        description: "Check whether ONE restaurant has a table for the party at a given time, \
            and the nearest free times that day. Call it when the user asks whether a place has \
            room (\"còn bàn không?\"), before suggesting a time. It books nothing: to book, call \
            createBooking. Report only what it returns; if `available` is false, offer the \
            `nearest` times.",
        requires_approval: false,
        risk: Risk {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        access: Access::Public,
    };
    type Input = CheckAvailabilityInput;
    type Output = CheckAvailabilityOutput;

    fn check(input: &Self::Input, ctx: &ValidationContext) -> Vec<ValidationIssue> {
        let mut issues = Vec::new();
        if input.restaurant_id.trim().is_empty() {
            issues.push(ValidationIssue::broke(
                "restaurantId",
                Rule::Blank,
                "must not be blank",
            ));
        }
        let starts = input.starts_at.with_timezone(&chrono::Utc);
        if starts <= ctx.now {
            issues.push(ValidationIssue::broke(
                "startsAt",
                Rule::InPast,
                format!("{} is in the past", input.starts_at.to_rfc3339()),
            ));
        } else if starts > ctx.now + chrono::Duration::days(i64::from(BOOKING_HORIZON_DAYS)) {
            issues.push(ValidationIssue::broke(
                "startsAt",
                Rule::TooFarAhead {
                    days: BOOKING_HORIZON_DAYS,
                },
                format!(
                    "{} is more than {BOOKING_HORIZON_DAYS} days ahead; tables are taken up to \
                     {BOOKING_HORIZON_DAYS} days in advance",
                    input.starts_at.to_rfc3339()
                ),
            ));
        }
        issues
    }
}

#[cfg(all(test, feature = "validate"))]
mod tests {
    use chrono::{TimeZone, Utc};
    use serde_json::json;

    use crate::tools::{validate_arguments, ToolInput, ToolName, ValidationContext};

    fn ctx() -> ValidationContext {
        ValidationContext {
            now: Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap(),
        }
    }

    #[test]
    fn a_time_ahead_is_read_and_a_past_one_is_refused_with_its_field() {
        let good = json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 4,
            "startsAt": "2026-12-02T19:00:00+07:00"});
        let input = validate_arguments(ToolName::CheckAvailability, &good.to_string(), &ctx());
        assert!(matches!(input, Ok(ToolInput::CheckAvailability(ref i)) if i.party_size == 4));
        let past = json!({"restaurantId": "x", "partySize": 2,
            "startsAt": "2026-11-30T19:00:00+07:00"});
        let error = validate_arguments(ToolName::CheckAvailability, &past.to_string(), &ctx())
            .expect_err("in the past");
        assert_eq!(error.issues[0].path, "startsAt");
        let none = json!({"restaurantId": "x", "partySize": 0,
            "startsAt": "2026-12-02T19:00:00+07:00"});
        let error = validate_arguments(ToolName::CheckAvailability, &none.to_string(), &ctx())
            .expect_err("nobody");
        assert_eq!(error.issues[0].path, "partySize");
    }
}

//! `createBooking`: reserves a table. Changes the world, so it needs the person's approval.

use chrono::{DateTime, FixedOffset};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Access, Risk, Rule, Tool, ToolDefinition, ToolName, ValidationContext, ValidationIssue,
    SCOPE_BOOKINGS,
};

/// Marker type of the `createBooking` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateBooking;

/// Arguments of `createBooking`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateBookingInput {
    /// The `id` of a restaurant from searchRestaurants.
    #[schemars(length(min = 1, max = 100))]
    pub restaurant_id: String,
    /// Number of people, as the user said it. Never guess it.
    #[schemars(range(min = 1, max = 20))]
    pub party_size: u8,
    /// Date and time of arrival, RFC 3339 with the restaurant's UTC offset,
    /// e.g. "2026-12-24T19:00:00+07:00".
    #[cfg_attr(
        target_arch = "wasm32",
        serde(deserialize_with = "crate::by_hand::rfc3339")
    )]
    pub starts_at: DateTime<FixedOffset>,
}

/// Whether the restaurant had room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BookingStatus {
    /// A table is held for the party.
    Confirmed,
    /// No room at that time; the party is on the waiting list and will be told.
    Waitlisted,
}

/// Result of `createBooking`: exists only when a booking was committed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateBookingOutput {
    /// The booking's reference, to show the person.
    pub booking_id: String,
    /// Confirmed or waitlisted.
    pub status: BookingStatus,
    /// The restaurant's id.
    pub restaurant_id: String,
    /// The restaurant's name.
    pub restaurant_name: String,
    /// Number of people.
    pub party_size: u8,
    /// Date and time of arrival.
    #[cfg_attr(
        target_arch = "wasm32",
        serde(deserialize_with = "crate::by_hand::rfc3339")
    )]
    pub starts_at: DateTime<FixedOffset>,
}

/// How many days ahead a table can be booked: restaurants plan their rooms a season
/// ahead, and a date years away (9999-12-31) is a typo or a model's guess, not a plan.
pub const BOOKING_HORIZON_DAYS: u32 = 180;

impl Tool for CreateBooking {
    const NAME: ToolName = ToolName::CreateBooking;
    const DEFINITION: ToolDefinition = ToolDefinition {
        name: ToolName::CreateBooking.as_str(),
        title: "Book a table",
        invoking: "Preparing the booking…",
        invoked: "Booking ready to confirm",
        description: "Book a table. Call it ONLY when the user asked to book and you know the \
            restaurant's id (from searchRestaurants), the party size and the exact date and time; \
            never invent a missing value, ask the user instead. The user confirms or edits the \
            booking in a form before it is made. A table is booked ONLY if this tool returns \
            status \"confirmed\" (or \"waitlisted\": then say it is on the waiting list). If it \
            returns an error or the user declines, say clearly that nothing was booked.",
        requires_approval: true,
        risk: Risk {
            read_only: false,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        access: Access::Personal(SCOPE_BOOKINGS),
    };
    type Input = CreateBookingInput;
    type Output = CreateBookingOutput;

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
                    "{} is more than {BOOKING_HORIZON_DAYS} days ahead; bookings are taken \
                     up to {BOOKING_HORIZON_DAYS} days in advance",
                    input.starts_at.to_rfc3339()
                ),
            ));
        }
        issues
    }
}

//! Executors: one per tool, dispatched by an exhaustive `match` on the validated input.

pub mod booking;
pub mod city;
pub mod gifts;
pub mod my_bookings;
pub mod restaurants;
pub mod shipping;
pub mod weather;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use shared::preview::{ApprovalPreview, CancellationPreview};
use shared::tools::ToolInput;

use crate::db::Pool;

/// What an executor may know about the call it serves.
#[derive(Clone)]
pub struct ToolContext {
    /// The database.
    pub db: Pool,
    /// Whose conversation this is.
    pub owner_id: String,
    /// The conversation.
    pub conversation_id: String,
    /// The call's id; the idempotency key of side effects.
    pub call_id: String,
    /// The moment the call is handled.
    pub now: DateTime<Utc>,
    /// Services outside the process that some tools call.
    pub upstreams: Upstreams,
    /// When the call runs on a person's approval: the take token of its pending row, which
    /// the effect's transaction deletes (see [`crate::store::take_pending`]).
    pub take: Option<String>,
}

impl ToolContext {
    /// The idempotency key of this call's side effect: call ids are unique only within
    /// their conversation, so the conversation is part of the key.
    pub fn call_key(&self) -> String {
        format!("{}/{}", self.conversation_id, self.call_id)
    }

    /// What this call's side effect runs for, and what commits with it: when the call
    /// runs on a person's approval, its pending row is deleted in the effect's own
    /// transaction (a crash leaves the call pending, or done, never decided-but-not-done).
    pub fn effect(&self) -> idempotency::Effect<'_> {
        idempotency::Effect {
            db: &self.db,
            owner_id: &self.owner_id,
            now: self.now,
            on_commit: self.take.as_deref().map(|token| {
                let (conversation_id, call_id) = (self.conversation_id.clone(), self.call_id.clone());
                let token = token.to_owned();
                idempotency::on_commit(move |tx| {
                    Box::pin(async move {
                        if crate::store::delete_taken(tx, &conversation_id, &call_id, &token).await? {
                            Ok(())
                        } else {
                            // Its take expired and another decision took it: this one
                            // rolls back and the other runs (under the same key, once).
                            tracing::warn!(call = %call_id, "the decision's take expired before its effect committed");
                            Err(ExecError::Tool(idempotency::key_in_use()))
                        }
                    })
                })
            }),
        }
    }
}

/// Services outside the process that tools call; each is optional, with a local fallback.
#[derive(Clone, Default)]
pub struct Upstreams {
    /// A weather service; without one, forecasts come from the built-in climate tables.
    pub weather: Option<weather::WeatherService>,
}

fn to_json<T: Serialize>(output: T) -> Result<Value, ExecError> {
    serde_json::to_value(output)
        .map_err(|e| ExecError::Internal(format!("serialising output: {e}")))
}

pub use crate::exec::ExecError;
use crate::idempotency;

/// Runs a validated call. Side-effecting tools are idempotent on `ctx.call_id`.
pub async fn execute(input: &ToolInput, ctx: &ToolContext) -> Result<Value, ExecError> {
    match input {
        ToolInput::GetWeather(input) => to_json(weather::run(input, ctx).await?),
        ToolInput::SearchRestaurants(input) => to_json(restaurants::run(input, ctx).await?),
        ToolInput::CheckAvailability(input) => {
            to_json(restaurants::availability(input, ctx).await?)
        }
        ToolInput::CreateBooking(input) => to_json(booking::run(input, ctx).await?),
        ToolInput::ListBookings(input) => to_json(my_bookings::list(input, ctx).await?),
        ToolInput::CancelBooking(input) => to_json(my_bookings::cancel(input, ctx).await?),
        ToolInput::SuggestGifts(input) => to_json(gifts::suggest(input, ctx).await?),
        ToolInput::PrepareCheckout(input) => to_json(gifts::prepare(input, ctx).await?),
        ToolInput::CreateCheckoutSession(input) => to_json(gifts::commit(input, ctx).await?),
        ToolInput::ShippingQuote(input) => to_json(shipping::quote(input)?),
    }
}

/// Checks against data that must pass before a call is offered for approval (so a person
/// is never asked to confirm something that cannot happen), and what the call would do as
/// the data says now, for the confirmation form. Read-only; `None` for calls without
/// approval.
pub async fn precheck(
    input: &ToolInput,
    ctx: &ToolContext,
) -> Result<Option<ApprovalPreview>, ExecError> {
    match input {
        ToolInput::GetWeather(_)
        | ToolInput::SearchRestaurants(_)
        | ToolInput::CheckAvailability(_)
        | ToolInput::ListBookings(_)
        | ToolInput::SuggestGifts(_)
        | ToolInput::PrepareCheckout(_)
        | ToolInput::ShippingQuote(_) => Ok(None),
        ToolInput::CreateBooking(input) => booking::preview(input, ctx)
            .await
            .map(|preview| Some(ApprovalPreview::Booking(preview))),
        ToolInput::CancelBooking(input) => my_bookings::precheck(input, ctx).await.map(|booking| {
            Some(ApprovalPreview::Cancellation(CancellationPreview {
                booking,
            }))
        }),
        ToolInput::CreateCheckoutSession(input) => gifts::precheck(input, ctx)
            .await
            .map(|draft| Some(ApprovalPreview::Checkout(draft))),
    }
}

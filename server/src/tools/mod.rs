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
use std::future::Future;

use shared::preview::ApprovalPreview;
use shared::tools::{Tool, ToolInput};

use crate::db::Pool;

/// What an executor may know about the call it serves.
#[derive(Clone)]
pub struct ToolContext {
    /// The database.
    pub db: Pool,
    /// Connections for reading only ([`crate::db::readers`]): a tool's reads that decide
    /// nothing (a search, a shown availability) go here, so they neither queue behind
    /// the writer nor hold it. A decision reads in its own write transaction instead.
    pub reads: crate::db::Reads,
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
    /// The restaurants as this process last read them (shared by every call).
    pub catalogue: restaurants::Catalogue,
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

/// What the server does with one tool: each tool's executor file implements it for the
/// tool's type, and the dispatch below is generated from the registry, so a tool without
/// an executor does not compile (`the trait bound ...: Executor is not satisfied`).
pub trait Executor: Tool {
    /// Runs a validated call. Side-effecting tools are idempotent on `ctx.call_id`.
    fn execute(
        input: &Self::Input,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<Self::Output, ExecError>> + Send;

    /// For a tool that needs approval: the checks against data that must pass before the
    /// person is asked (so nobody confirms what cannot happen), and what the call would do
    /// as the data says now, for the form. Read-only; `None` for the others.
    fn precheck(
        _input: &Self::Input,
        _ctx: &ToolContext,
    ) -> impl Future<Output = Result<Option<ApprovalPreview>, ExecError>> + Send {
        std::future::ready(Ok(None))
    }
}

/// `execute` and `precheck` over [`ToolInput`], one arm per registry line.
macro_rules! dispatch {
    (() [$(($name:ident, $wire:literal, $assistant:ident)),* $(,)?]) => {
        /// Runs a validated call with its tool's [`Executor`].
        pub async fn execute(input: &ToolInput, ctx: &ToolContext) -> Result<Value, ExecError> {
            match input {
                $(ToolInput::$name(input) => {
                    to_json(<shared::tools::$name as Executor>::execute(input, ctx).await?)
                })*
            }
        }

        /// The checks and the confirmation preview of a call, from its tool's
        /// [`Executor::precheck`]; `None` for calls without approval.
        pub async fn precheck(
            input: &ToolInput,
            ctx: &ToolContext,
        ) -> Result<Option<ApprovalPreview>, ExecError> {
            match input {
                $(ToolInput::$name(input) => {
                    <shared::tools::$name as Executor>::precheck(input, ctx).await
                })*
            }
        }
    };
}

shared::tool_registry!(dispatch);

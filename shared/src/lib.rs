//! Types shared by the datban server and the hydrated browser client.
//!
//! Everything in this crate compiles for the native server and for
//! `wasm32-unknown-unknown`, so it may depend only on platform-neutral crates.

mod by_hand;
pub mod events;
pub mod explain;
pub mod health;
pub mod http;
pub mod lang;
pub mod message;
pub mod partial_json;
pub mod preview;
pub mod replay;
pub mod tools;
pub mod ui_message;

/// The version of the datban crates, reported by `GET /healthz`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

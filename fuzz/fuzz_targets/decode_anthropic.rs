//! The Anthropic Messages stream decoder (`content_block_*` events keyed by `index`), as
//! `server::model::anthropic::Anthropic` runs it.
//!
//! Input: one byte choosing where the body is cut into chunks, then the SSE body. Checked
//! (`datban_fuzz::fuzz_decoder`): no panic, one terminal item, calls started before their
//! text and end, the same turn however the body is cut. Not checked: that every call ends
//! before `Finish` — a `message_stop` while a `tool_use` block is still open finishes the
//! turn without that call's `ToolCallEnd` (the agent loop does not rely on it).
#![no_main]

use libfuzzer_sys::fuzz_target;
use server::model::{anthropic, http, TurnStream};

fn decode(response: reqwest::Response) -> TurnStream {
    anthropic::decode(http::events(response))
}

fuzz_target!(|data: &[u8]| {
    datban_fuzz::fuzz_decoder(data, decode, false);
});

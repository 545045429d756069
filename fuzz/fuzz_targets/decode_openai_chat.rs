//! The OpenAI Chat Completions stream decoder (`choices[].delta.tool_calls` pieces keyed by
//! `index`), as `server::model::openai_chat::OpenAiChat` runs it.
//!
//! Input: one byte choosing where the body is cut into chunks, then the SSE body. Checked
//! (`datban_fuzz::fuzz_decoder`): no panic, one terminal item, calls started before their
//! text and end, every call ended before `Finish`, the same turn however the body is cut.
#![no_main]

use libfuzzer_sys::fuzz_target;
use server::model::{http, openai_chat, TurnStream};

fn decode(response: reqwest::Response) -> TurnStream {
    openai_chat::decode(http::events(response))
}

fuzz_target!(|data: &[u8]| {
    datban_fuzz::fuzz_decoder(data, decode, true);
});

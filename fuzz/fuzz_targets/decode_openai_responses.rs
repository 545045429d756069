//! The OpenAI Responses API stream decoder (`response.*` events, calls keyed by item id),
//! as `server::model::openai_responses::OpenAiResponses` runs it.
//!
//! Input: one byte choosing where the body is cut into chunks, then the SSE body. Checked
//! (`datban_fuzz::fuzz_decoder`): no panic, one terminal item, calls started before their
//! text and end, every call ended before `Finish`, the same turn however the body is cut.
#![no_main]

use libfuzzer_sys::fuzz_target;
use server::model::{http, openai_responses, TurnStream};

fn decode(response: reqwest::Response) -> TurnStream {
    openai_responses::decode(http::events(response))
}

fuzz_target!(|data: &[u8]| {
    datban_fuzz::fuzz_decoder(data, decode, true);
});

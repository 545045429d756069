//! What the fuzz targets in `fuzz_targets/` share: cutting an input into pieces at
//! fuzzer-chosen points, and running a provider stream decoder over a response body
//! exactly as the adapters do (`server::model::http::events`, then the adapter's `decode`).
//!
//! Inputs of every target start with one byte that chooses how the rest is cut
//! ([`pieces`]); the rest is the document, argument text or SSE body. The seed corpus in
//! `corpus/<target>/` follows that layout, so its files are readable with `tail -c +2`.

use std::collections::HashMap;

use futures::StreamExt;
use server::model::{ModelEvent, ProviderError, TurnStream};

/// Cuts `data` into pieces whose lengths a small PRNG derives from `seed`: seed 0 keeps
/// `data` whole, other seeds cut it into pieces of 1 to `seed % 64 + 1` bytes. At most
/// `max_pieces` pieces; the last one takes the rest.
pub fn pieces(data: &[u8], seed: u8, max_pieces: usize) -> Vec<&[u8]> {
    if seed == 0 || data.is_empty() {
        return vec![data];
    }
    let longest = usize::from(seed % 64) + 1;
    // xorshift32: cheap, and the same seed always gives the same cuts.
    let mut state = u32::from(seed) | 0x9e37_7900;
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() && out.len() + 1 < max_pieces {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let len = (state as usize % longest + 1).min(rest.len());
        let (piece, tail) = rest.split_at(len);
        out.push(piece);
        rest = tail;
    }
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

/// As [`pieces`], for text: each cut is moved forward to the next character boundary.
pub fn text_pieces(text: &str, seed: u8, max_pieces: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut end = 0;
    for piece in pieces(text.as_bytes(), seed, max_pieces) {
        end += piece.len();
        if !text.is_char_boundary(end) {
            continue;
        }
        out.push(&text[start..end]);
        start = end;
    }
    if start < text.len() || out.is_empty() {
        out.push(&text[start..]);
    }
    out
}

/// A streamed HTTP response whose body arrives in these chunks, as reqwest hands a real
/// one to the adapters.
pub fn response(chunks: &[&[u8]]) -> reqwest::Response {
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        chunks.iter().map(|chunk| Ok(chunk.to_vec())).collect();
    let body = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
    reqwest::Response::from(http::Response::new(body))
}

/// Everything one decoded turn yielded, in order.
pub type Turn = Vec<Result<ModelEvent, ProviderError>>;

/// Runs a decoder to the end. No timer or I/O is involved, so a plain executor does.
pub fn run(decode: fn(reqwest::Response) -> TurnStream, chunks: &[&[u8]]) -> Turn {
    futures::executor::block_on(decode(response(chunks)).collect())
}

/// What every provider decoder promises about the turn it yields, checked with panics
/// (which libFuzzer reports as crashes):
///
/// - the turn ends with exactly one terminal item, `Finish` or an error, and nothing
///   follows it (`http::decode_with`: a body that runs out early is an error, so a cut
///   stream never looks like a finished turn);
/// - a call starts with a non-empty id (the agent loop drops calls without one);
/// - argument text and `ToolCallEnd` only come for a call that started and has not ended
///   (counted per id, so a provider reusing an id is not flagged here);
/// - with `ends_every_call`, every started call has ended before `Finish`.
pub fn check_turn(turn: &Turn, ends_every_call: bool) {
    let Some((last, before)) = turn.split_last() else {
        panic!("the turn yielded nothing, not even an error");
    };
    assert!(
        matches!(last, Ok(ModelEvent::Finish(_)) | Err(_)),
        "the turn does not end with Finish or an error: {turn:?}"
    );
    for item in before {
        assert!(
            !matches!(item, Ok(ModelEvent::Finish(_)) | Err(_)),
            "something follows the end of the turn: {turn:?}"
        );
    }
    let mut open: HashMap<&str, usize> = HashMap::new();
    for item in turn {
        match item {
            Ok(ModelEvent::ToolCallStart { id, .. }) => {
                assert!(!id.is_empty(), "a call starts without an id: {turn:?}");
                *open.entry(id).or_default() += 1;
            }
            Ok(ModelEvent::ToolCallDelta { id, .. }) => {
                assert!(
                    open.get(id.as_str()).is_some_and(|n| *n > 0),
                    "argument text for call {id:?}, which is not open: {turn:?}"
                );
            }
            Ok(ModelEvent::ToolCallEnd { id }) => {
                let count = open.get_mut(id.as_str());
                assert!(
                    count.as_ref().is_some_and(|n| **n > 0),
                    "end of call {id:?}, which is not open: {turn:?}"
                );
                if let Some(count) = count {
                    *count -= 1;
                }
            }
            Ok(ModelEvent::Finish(_)) if ends_every_call => {
                assert!(
                    open.values().all(|n| *n == 0),
                    "the turn finished with calls still open: {turn:?}"
                );
            }
            Ok(ModelEvent::TextDelta(_) | ModelEvent::Finish(_)) | Err(_) => {}
        }
    }
}

/// The whole check of a decoder target: `data[0]` chooses the cuts, the rest is the body.
/// Besides [`check_turn`], a body that is valid UTF-8 must decode to the same turn however
/// it is cut into chunks (server-sent events are text; where the network splits them must
/// not matter).
pub fn fuzz_decoder(
    data: &[u8],
    decode: fn(reqwest::Response) -> TurnStream,
    ends_every_call: bool,
) {
    let Some((&seed, body)) = data.split_first() else {
        return;
    };
    let chunks = pieces(body, seed, 4096);
    let turn = run(decode, &chunks);
    check_turn(&turn, ends_every_call);
    if chunks.len() > 1 && std::str::from_utf8(body).is_ok() {
        let whole = run(decode, &[body]);
        assert_eq!(
            turn,
            whole,
            "cutting the body into {} chunks changed the turn",
            chunks.len()
        );
    }
}

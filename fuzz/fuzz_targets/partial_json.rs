//! `shared::partial_json::PartialJson`, the incremental parser of streamed tool arguments.
//!
//! Input: one byte choosing where the text is cut into pieces (at most 16), then the text
//! (invalid UTF-8 replaced by U+FFFD). Checked, as the parser documents:
//!
//! - no panic, whatever the text;
//! - after each piece, the outcome is that of one push of everything received so far (how
//!   the text is cut does not matter): the same error offset, or the same value shown and
//!   `is_complete` (after an error the value keeps what earlier pushes showed, by design);
//! - `raw` is everything pushed;
//! - when serde_json accepts the whole text, the parser is complete and its value is
//!   serde_json's; when serde_json rejects it, the parser is not complete. (A bare number
//!   longer than 64 bytes with no whitespace after it is documented to stay incomplete.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use shared::partial_json::PartialJson;

/// `LIVE_NUMBER_MAX_LEN` in shared/src/partial_json.rs.
const LIVE_NUMBER_MAX_LEN: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Some((&seed, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let mut parser = PartialJson::new();
    let mut received = 0;
    for piece in datban_fuzz::text_pieces(&text, seed, 16) {
        let result = parser.push(piece);
        received += piece.len();
        let mut one_push = PartialJson::new();
        let one_result = one_push.push(&text[..received]);
        match (&result, &one_result) {
            (Ok(()), Ok(())) => {
                assert_eq!(
                    parser.value(),
                    one_push.value(),
                    "after {:?}",
                    &text[..received]
                );
                assert_eq!(parser.is_complete(), one_push.is_complete());
            }
            // What stays shown after an error is what earlier pushes showed, which does
            // depend on the cuts (see the parser's tests: `[0, 1e30` then `9`).
            (Err(error), Err(one_error)) => {
                assert_eq!(
                    error.offset,
                    one_error.offset,
                    "after {:?}",
                    &text[..received]
                );
                assert!(!parser.is_complete());
            }
            _ => panic!(
                "after {:?}: {result:?} in pieces, {one_result:?} in one push",
                &text[..received]
            ),
        }
    }
    assert_eq!(parser.raw(), text);

    match serde_json::from_str::<Value>(&text) {
        Ok(expected) => {
            let still_growing = expected.is_number()
                && text.trim_start().len() > LIVE_NUMBER_MAX_LEN
                && !text.ends_with([' ', '\t', '\n', '\r']);
            if !still_growing {
                assert!(parser.is_complete(), "serde_json accepts {text:?}");
                assert_eq!(parser.value(), &expected, "{text:?}");
            }
        }
        Err(_) => assert!(!parser.is_complete(), "serde_json rejects {text:?}"),
    }
});

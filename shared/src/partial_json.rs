//! Incremental parsing of a JSON document that arrives in pieces.
//!
//! A model streams its tool-call arguments as fragments of JSON text, and the UI shows the
//! arguments while they stream. Re-parsing the whole prefix for every fragment costs time
//! proportional to the square of the argument size, which becomes visible for the long
//! arguments models write (documents, lists of bookings). [`PartialJson`] instead keeps a
//! state machine and the value tree between fragments, so each fragment costs time
//! proportional to its own length.
//!
//! The text is model output, hence untrusted: malformed input is reported as a
//! [`PartialJsonError`] and never panics, and nesting is capped so that hostile input cannot
//! make the tree (or code walking it later) arbitrarily deep.

use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use std::fmt;

mod machine;
use machine::{Machine, State};

/// Nesting depth at which the text is rejected: the container that would be the 128th open
/// one is an error. serde_json's default recursion limit rejects exactly the same container,
/// so whatever this parser completes, serde_json parses as well.
const DEPTH_LIMIT: usize = 128;

/// Longest number prefix that is parsed for display while the number is still growing.
/// Parsing is linear in the text, so re-parsing an ever longer number on every fragment would
/// make a (pathological) huge number quadratic; beyond this length the display keeps the
/// longest valid prefix within the limit until the number ends. Any number serde_json writes
/// for an `i64`, `u64` or `f64` is shorter.
const LIVE_NUMBER_MAX_LEN: usize = 64;

/// Incremental parser for a JSON document that arrives in pieces (an LLM's streamed tool arguments).
///
/// Feed fragments with [`push`](Self::push) and read the best value so far with
/// [`value`](Self::value). What the partial value shows:
///
/// - a string in progress shows the characters received so far; an escape sequence shows
///   only once complete (including both halves of a surrogate pair);
/// - an object member shows once its key is complete and its value has started, an array
///   element once it has started; a number shows once its text so far is a valid JSON
///   number (`12`, not `-`, `1.` or `1e`), and then shows its longest valid prefix (`1.`
///   still shows `1`); `true`, `false` and `null` show once complete, and an object or
///   array as soon as its bracket arrives;
/// - the partial value depends only on the text received, not on how it was cut into pieces;
/// - complete numbers are exactly what serde_json makes of their text, and a repeated key
///   replaces the earlier member, as in serde_json.
///
/// After an error the parser stays failed: [`push`](Self::push) keeps returning the same
/// error and [`value`](Self::value) keeps what was shown before the offending byte.
#[derive(Debug, Clone, Default)]
pub struct PartialJson {
    raw: String,
    value: Value,
    machine: Machine,
    error: Option<PartialJsonError>,
}

impl PartialJson {
    /// A parser that has received nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next piece. Costs time proportional to `delta.len()` (plus nesting depth), never to the total received so far.
    ///
    /// A fragment may end anywhere (inside a key, an escape, a number or a keyword); only
    /// text that can no longer begin a valid JSON document is an error. The fragment is
    /// appended to [`raw`](Self::raw) even when it is rejected, so that error offsets keep
    /// pointing into what was actually received.
    pub fn push(&mut self, delta: &str) -> Result<(), PartialJsonError> {
        let base = self.raw.len();
        self.raw.push_str(delta);
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        self.machine
            .feed(&mut self.value, delta, base)
            .inspect_err(|error| self.error = Some(error.clone()))
    }

    /// The best value for what has arrived so far (display only). `Value::Null` before anything meaningful arrived. O(1): returns a reference to a tree maintained in place.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Everything pushed so far, verbatim.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// True once one complete JSON value has been parsed (only whitespace may follow).
    ///
    /// Put differently, [`raw`](Self::raw) is then a document serde_json accepts. A bare
    /// top-level number is the one value that can be complete and still grow (`1` may be
    /// followed by `2`, or by `.` which makes it incomplete again); whitespace after it
    /// settles it. (A bare number longer than 64 bytes, which no `i64`, `u64` or `f64`
    /// produces, counts as complete only once that whitespace arrives.)
    pub fn is_complete(&self) -> bool {
        if self.error.is_some() {
            return false;
        }
        match self.machine.state {
            State::Done => true,
            State::Num(num) => {
                let machine = &self.machine;
                machine.stack.is_empty()
                    && num.is_complete()
                    && machine.shown_len == machine.number.len()
            }
            _ => false,
        }
    }

    /// Convenience: a parser that has been fed `text` in one piece.
    pub fn from_text(text: &str) -> Result<Self, PartialJsonError> {
        let mut parser = Self::new();
        parser.push(text)?;
        Ok(parser)
    }
}

/// Why the text can no longer be the prefix of any valid JSON document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartialJsonError {
    /// Byte offset in [`PartialJson::raw`] of the first byte that could not be accepted (for
    /// a number serde_json cannot represent, such as `1e999`, the start of that number).
    pub offset: usize,
    /// What was wrong, for logs and developers rather than end users.
    pub message: String,
}

impl PartialJsonError {
    fn new(offset: usize, message: impl Into<String>) -> Self {
        Self {
            offset,
            message: message.into(),
        }
    }

    /// The tree no longer has the shape the container stack describes. Only a bug in this
    /// module could cause it, but the input is untrusted, so it is an error, not a panic.
    fn lost_track(offset: usize) -> Self {
        Self::new(offset, "internal error: lost track of the open container")
    }
}

impl fmt::Display for PartialJsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for PartialJsonError {}

#[cfg(test)]
mod tests;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod proptests;

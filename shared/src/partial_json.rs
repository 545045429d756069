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

/// Parser state between fragments; everything a fragment boundary may cut through lives
/// here rather than on the Rust stack.
#[derive(Debug, Clone, Default)]
struct Machine {
    state: State,
    /// The open containers, outermost first. Each records which child is being parsed, which
    /// is also the path from the root to the innermost open container.
    stack: Vec<Frame>,
    /// The key being read: keys are not shown until complete, so they are not in the tree.
    key: String,
    /// Decoded characters of the string value being read, not yet appended to the tree.
    /// Batching them lets a fragment touch the tree once per string instead of per character.
    pending: String,
    /// Text of the number being read; serde_json parses it so numbers match it exactly.
    number: String,
    /// Raw offset where `number` starts, for errors about the whole number.
    number_start: usize,
    /// Length of the longest prefix of `number` that is a valid number and at most
    /// [`LIVE_NUMBER_MAX_LEN`] long: what the tree should show while the number grows.
    live_len: usize,
    /// Length of the prefix of `number` the tree shows (0: none), so that an unchanged
    /// prefix is not parsed again.
    shown_len: usize,
}

/// What the parser expects next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    /// A value: at the start, after `:` and after `,` in an array.
    #[default]
    Value,
    /// A value or `]`, right after `[`.
    FirstElement,
    /// A key or `}`, right after `{`.
    FirstKey,
    /// A key, after `,` in an object.
    Key,
    /// The `:` after a key.
    Colon,
    /// `,` or the closing bracket, after a value inside a container.
    AfterValue,
    /// Inside a string; `key` tells whether it is an object key.
    Str { key: bool, escape: Escape },
    /// Inside a number.
    Num(Num),
    /// Inside `true`, `false` or `null`, `matched` bytes in.
    Literal { word: &'static [u8], matched: usize },
    /// The top-level value is complete; only whitespace may follow.
    Done,
}

/// Progress through an escape sequence, kept so that a fragment may end inside one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    /// After `\`.
    Backslash,
    /// Inside `\uXXXX`; `high` is the leading surrogate when this is the second half of a pair.
    Hex {
        high: Option<u32>,
        digits: u8,
        code: u32,
    },
    /// A leading surrogate was read; its trailing half must follow, starting with `\`.
    NeedBackslash(u32),
    /// As above, after that `\`; `u` must follow.
    NeedU(u32),
}

/// Position in the JSON number grammar `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Start,
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpInt,
}

impl Num {
    fn step(self, byte: u8) -> Option<Num> {
        use Num::*;
        match (self, byte) {
            (Start, b'-') => Some(Minus),
            (Start | Minus, b'0') => Some(Zero),
            (Start | Minus | Int, b'0'..=b'9') => Some(Int),
            (Zero | Int, b'.') => Some(Dot),
            (Dot | Frac, b'0'..=b'9') => Some(Frac),
            (Zero | Int | Frac, b'e' | b'E') => Some(Exp),
            (Exp, b'+' | b'-') => Some(ExpSign),
            (Exp | ExpSign | ExpInt, b'0'..=b'9') => Some(ExpInt),
            _ => None,
        }
    }

    /// Whether the text so far is a whole JSON number (and so may be shown).
    fn is_complete(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::ExpInt)
    }
}

/// An open container and the child of it being parsed.
#[derive(Debug, Clone)]
enum Frame {
    /// `started`: whether the element being parsed is already in the tree (as the last one).
    Array { started: bool },
    /// `key`: the member being parsed; `started`: whether its value is already in the tree.
    Object { key: String, started: bool },
}

fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// Walks from the root to the innermost open container (the root itself when none is open).
/// A loop, not recursion, so depth cannot exhaust the call stack.
fn navigate<'v>(root: &'v mut Value, stack: &[Frame]) -> Option<&'v mut Value> {
    let mut node = root;
    let ancestors = stack
        .split_last()
        .map_or(&[][..], |(_, ancestors)| ancestors);
    for frame in ancestors {
        node = match (node, frame) {
            (Value::Array(items), Frame::Array { .. }) => items.last_mut()?,
            (Value::Object(map), Frame::Object { key, .. }) => map.get_mut(key.as_str())?,
            _ => return None,
        };
    }
    Some(node)
}

/// The child of `container` being parsed (the container itself at the top level, where
/// `frame` is `None`).
fn slot<'v>(container: &'v mut Value, frame: Option<&Frame>) -> Option<&'v mut Value> {
    match frame {
        None => Some(container),
        Some(Frame::Array { .. }) => container.as_array_mut()?.last_mut(),
        Some(Frame::Object { key, .. }) => container.as_object_mut()?.get_mut(key.as_str()),
    }
}

/// Shows `value` as the child being parsed, adding the member or element the first time, and
/// returns where it now lives.
fn put<'v>(
    container: &'v mut Value,
    frame: Option<&mut Frame>,
    value: Value,
) -> Option<&'v mut Value> {
    match frame {
        None => {
            *container = value;
            Some(container)
        }
        Some(Frame::Array { started }) => {
            let items = container.as_array_mut()?;
            if *started {
                let last = items.last_mut()?;
                *last = value;
                Some(last)
            } else {
                *started = true;
                items.push(value);
                items.last_mut()
            }
        }
        Some(Frame::Object { key, started }) => {
            let map = container.as_object_mut()?;
            if *started {
                let member = map.get_mut(key.as_str())?;
                *member = value;
                Some(member)
            } else {
                *started = true;
                // A repeated key overwrites in place, which is what serde_json does too.
                match map.entry(key.clone()) {
                    Entry::Occupied(mut entry) => {
                        entry.insert(value);
                        Some(entry.into_mut())
                    }
                    Entry::Vacant(entry) => Some(entry.insert(value)),
                }
            }
        }
    }
}

impl Machine {
    /// Parses one fragment. `base` is the fragment's offset in the raw text.
    ///
    /// The innermost open container is reached through `cursor`, which is found from the root
    /// only when it is first needed in a fragment and again after a container closes (safe
    /// Rust cannot keep references to all ancestors). Opening a container moves the cursor
    /// down without a walk, so a fragment walks from the root at most once plus once per
    /// closing bracket, each walk bounded by the nesting depth.
    fn feed(&mut self, root: &mut Value, delta: &str, base: usize) -> Result<(), PartialJsonError> {
        let bytes = delta.as_bytes();
        let mut cursor: Option<&mut Value> = None;
        let mut i = 0;

        // Takes the cursor, walking from the root if it is not known.
        macro_rules! container {
            () => {
                match cursor.take() {
                    Some(container) => container,
                    None => navigate(&mut *root, &self.stack)
                        .ok_or_else(|| PartialJsonError::lost_track(base + i))?,
                }
            };
        }

        let outcome = loop {
            let Some(&byte) = bytes.get(i) else {
                break Ok(());
            };
            match self.state {
                State::Value | State::FirstElement => match byte {
                    _ if is_whitespace(byte) => i += 1,
                    b'{' | b'[' => {
                        if self.stack.len() + 1 >= DEPTH_LIMIT {
                            break Err(PartialJsonError::new(
                                base + i,
                                format!("nesting reaches the depth limit of {DEPTH_LIMIT}"),
                            ));
                        }
                        let (empty, frame, next) = if byte == b'{' {
                            let frame = Frame::Object {
                                key: String::new(),
                                started: false,
                            };
                            (Value::Object(Map::new()), frame, State::FirstKey)
                        } else {
                            let frame = Frame::Array { started: false };
                            (Value::Array(Vec::new()), frame, State::FirstElement)
                        };
                        let parent = container!();
                        let child = put(parent, self.stack.last_mut(), empty)
                            .ok_or_else(|| PartialJsonError::lost_track(base + i))?;
                        cursor = Some(child);
                        self.stack.push(frame);
                        self.state = next;
                        i += 1;
                    }
                    b'"' => {
                        let parent = container!();
                        put(
                            &mut *parent,
                            self.stack.last_mut(),
                            Value::String(String::new()),
                        )
                        .ok_or_else(|| PartialJsonError::lost_track(base + i))?;
                        cursor = Some(parent);
                        self.state = State::Str {
                            key: false,
                            escape: Escape::None,
                        };
                        i += 1;
                    }
                    b'-' | b'0'..=b'9' => {
                        self.number.clear();
                        self.number_start = base + i;
                        self.live_len = 0;
                        self.shown_len = 0;
                        self.state = State::Num(Num::Start);
                    }
                    b't' | b'f' | b'n' => {
                        let word: &'static [u8] = match byte {
                            b't' => b"true",
                            b'f' => b"false",
                            _ => b"null",
                        };
                        self.state = State::Literal { word, matched: 1 };
                        i += 1;
                    }
                    b']' if self.state == State::FirstElement => {
                        self.close();
                        cursor = None;
                        i += 1;
                    }
                    _ => break Err(PartialJsonError::new(base + i, "expected a JSON value")),
                },
                State::FirstKey | State::Key => match byte {
                    _ if is_whitespace(byte) => i += 1,
                    b'"' => {
                        self.key.clear();
                        self.state = State::Str {
                            key: true,
                            escape: Escape::None,
                        };
                        i += 1;
                    }
                    b'}' if self.state == State::FirstKey => {
                        self.close();
                        cursor = None;
                        i += 1;
                    }
                    _ => {
                        break Err(PartialJsonError::new(
                            base + i,
                            "expected an object key in double quotes",
                        ))
                    }
                },
                State::Colon => match byte {
                    _ if is_whitespace(byte) => i += 1,
                    b':' => {
                        self.state = State::Value;
                        i += 1;
                    }
                    _ => {
                        break Err(PartialJsonError::new(
                            base + i,
                            "expected ':' after an object key",
                        ))
                    }
                },
                State::AfterValue => match (byte, self.stack.last_mut()) {
                    (_, _) if is_whitespace(byte) => i += 1,
                    (b',', Some(Frame::Array { started })) => {
                        *started = false;
                        self.state = State::Value;
                        i += 1;
                    }
                    (b',', Some(Frame::Object { .. })) => {
                        self.state = State::Key;
                        i += 1;
                    }
                    (b']', Some(Frame::Array { .. })) | (b'}', Some(Frame::Object { .. })) => {
                        self.close();
                        cursor = None;
                        i += 1;
                    }
                    (_, Some(Frame::Array { .. })) => {
                        break Err(PartialJsonError::new(
                            base + i,
                            "expected ',' or ']' after an array element",
                        ))
                    }
                    (_, Some(Frame::Object { .. })) => {
                        break Err(PartialJsonError::new(
                            base + i,
                            "expected ',' or '}' after an object member",
                        ))
                    }
                    (_, None) => break Err(PartialJsonError::lost_track(base + i)),
                },
                State::Done => {
                    if !is_whitespace(byte) {
                        break Err(PartialJsonError::new(
                            base + i,
                            "unexpected text after the complete JSON value",
                        ));
                    }
                    i += 1;
                }
                State::Literal { word, matched } => {
                    if word.get(matched) != Some(&byte) {
                        let expected = String::from_utf8_lossy(word);
                        break Err(PartialJsonError::new(
                            base + i,
                            format!("invalid literal, expected `{expected}`"),
                        ));
                    }
                    i += 1;
                    if matched + 1 < word.len() {
                        self.state = State::Literal {
                            word,
                            matched: matched + 1,
                        };
                        continue;
                    }
                    let value = match word {
                        b"true" => Value::Bool(true),
                        b"false" => Value::Bool(false),
                        _ => Value::Null,
                    };
                    let parent = container!();
                    put(&mut *parent, self.stack.last_mut(), value)
                        .ok_or_else(|| PartialJsonError::lost_track(base + i))?;
                    cursor = Some(parent);
                    self.end_value();
                }
                State::Num(mut num) => {
                    let start = i;
                    let len_before = self.number.len();
                    while let Some(next) = bytes.get(i).and_then(|&b| num.step(b)) {
                        num = next;
                        i += 1;
                        let len = len_before + (i - start);
                        if num.is_complete() && len <= LIVE_NUMBER_MAX_LEN {
                            self.live_len = len;
                        }
                    }
                    // The run is ASCII, so its ends are character boundaries.
                    let run = delta
                        .get(start..i)
                        .ok_or_else(|| PartialJsonError::lost_track(base + i))?;
                    self.number.push_str(run);
                    self.state = State::Num(num);
                    if i == bytes.len() {
                        continue;
                    }
                    if !num.is_complete() {
                        break Err(PartialJsonError::new(base + i, "invalid number"));
                    }
                    let number = match serde_json::from_str::<Number>(&self.number) {
                        Ok(number) => number,
                        Err(error) => {
                            break Err(PartialJsonError::new(
                                self.number_start,
                                format!("unrepresentable number: {error}"),
                            ))
                        }
                    };
                    let parent = container!();
                    put(&mut *parent, self.stack.last_mut(), Value::Number(number))
                        .ok_or_else(|| PartialJsonError::lost_track(base + i))?;
                    cursor = Some(parent);
                    // The delimiter is not consumed: the new state decides what it means.
                    self.end_value();
                }
                State::Str { key, escape } => {
                    let closed = match self.scan_string(delta, &mut i, base, key, escape) {
                        Ok(closed) => closed,
                        Err(error) => break Err(error),
                    };
                    if !closed {
                        continue;
                    }
                    if key {
                        match self.stack.last_mut() {
                            Some(Frame::Object { key, started }) => {
                                // Swapping keeps the old key's buffer for the next key.
                                std::mem::swap(key, &mut self.key);
                                *started = false;
                            }
                            _ => break Err(PartialJsonError::lost_track(base + i)),
                        }
                        self.state = State::Colon;
                    } else {
                        if !self.pending.is_empty() {
                            let parent = container!();
                            self.flush_pending(parent, base + i)?;
                            cursor = Some(parent);
                        }
                        self.end_value();
                    }
                }
            }
        };

        // Show what this fragment added to a string or number still in progress, also when
        // the fragment failed further on: the error does not undo valid text before it.
        if !self.pending.is_empty() {
            let parent = container!();
            self.flush_pending(parent, base + i)?;
            cursor = Some(parent);
        }
        if outcome.is_ok() && matches!(self.state, State::Num(_)) && self.live_len != self.shown_len
        {
            let prefix = self
                .number
                .get(..self.live_len)
                .ok_or_else(|| PartialJsonError::lost_track(base + i))?;
            // Only an exponent too large for f64 fails here, and appending digits to an
            // exponent only makes it larger: the number can no longer become valid, so it
            // is reported now rather than when it ends.
            let number = serde_json::from_str::<Number>(prefix).map_err(|error| {
                PartialJsonError::new(
                    self.number_start,
                    format!("unrepresentable number: {error}"),
                )
            })?;
            let parent = container!();
            put(parent, self.stack.last_mut(), Value::Number(number))
                .ok_or_else(|| PartialJsonError::lost_track(base + i))?;
            self.shown_len = self.live_len;
        }
        outcome
    }

    /// Reads string content from `delta[*i..]` until the closing quote (returns `true`, with
    /// `*i` past it) or the end of the fragment (returns `false`). Decoded text goes to the
    /// key buffer or to `pending`, in runs rather than character by character.
    fn scan_string(
        &mut self,
        delta: &str,
        i: &mut usize,
        base: usize,
        key: bool,
        mut escape: Escape,
    ) -> Result<bool, PartialJsonError> {
        let bytes = delta.as_bytes();
        let out = if key {
            &mut self.key
        } else {
            &mut self.pending
        };
        let error = |at: usize, message: &str| PartialJsonError::new(base + at, message);
        while let Some(&byte) = bytes.get(*i) {
            match escape {
                Escape::None => {
                    let start = *i;
                    while bytes
                        .get(*i)
                        .is_some_and(|&b| b != b'"' && b != b'\\' && b >= 0x20)
                    {
                        *i += 1;
                    }
                    // The run stops only at ASCII bytes or at the end, both character boundaries.
                    let run = delta
                        .get(start..*i)
                        .ok_or_else(|| PartialJsonError::lost_track(base + *i))?;
                    out.push_str(run);
                    match bytes.get(*i) {
                        None => break,
                        Some(b'"') => {
                            *i += 1;
                            return Ok(true);
                        }
                        Some(b'\\') => escape = Escape::Backslash,
                        Some(_) => {
                            return Err(error(
                                *i,
                                "control character in a string (it must be escaped)",
                            ))
                        }
                    }
                }
                Escape::Backslash => {
                    let decoded = match byte {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            escape = Escape::Hex {
                                high: None,
                                digits: 0,
                                code: 0,
                            };
                            *i += 1;
                            continue;
                        }
                        _ => return Err(error(*i, "invalid escape sequence")),
                    };
                    out.push(decoded);
                    escape = Escape::None;
                }
                Escape::Hex { high, digits, code } => {
                    let digit = char::from(byte)
                        .to_digit(16)
                        .ok_or_else(|| error(*i, "invalid hexadecimal digit in a \\u escape"))?;
                    let code = code * 16 + digit;
                    if digits < 3 {
                        escape = Escape::Hex {
                            high,
                            digits: digits + 1,
                            code,
                        };
                    } else {
                        let is_leading = (0xD800..0xDC00).contains(&code);
                        let is_trailing = (0xDC00..0xE000).contains(&code);
                        let scalar = match high {
                            None if is_leading => {
                                escape = Escape::NeedBackslash(code);
                                *i += 1;
                                continue;
                            }
                            None if is_trailing => {
                                return Err(error(*i, "trailing surrogate without a leading one"))
                            }
                            None => code,
                            Some(high) if is_trailing => {
                                0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)
                            }
                            Some(_) => {
                                return Err(error(
                                    *i,
                                    "leading surrogate not followed by a trailing one",
                                ))
                            }
                        };
                        let decoded = char::from_u32(scalar)
                            .ok_or_else(|| error(*i, "escape is not a Unicode scalar value"))?;
                        out.push(decoded);
                        escape = Escape::None;
                    }
                }
                Escape::NeedBackslash(high) => {
                    if byte != b'\\' {
                        return Err(error(
                            *i,
                            "leading surrogate not followed by a trailing one",
                        ));
                    }
                    escape = Escape::NeedU(high);
                }
                Escape::NeedU(high) => {
                    if byte != b'u' {
                        return Err(error(
                            *i,
                            "leading surrogate not followed by a trailing one",
                        ));
                    }
                    escape = Escape::Hex {
                        high: Some(high),
                        digits: 0,
                        code: 0,
                    };
                }
            }
            *i += 1;
        }
        self.state = State::Str { key, escape };
        Ok(false)
    }

    /// Appends the batched characters to the string being shown.
    fn flush_pending(
        &mut self,
        container: &mut Value,
        offset: usize,
    ) -> Result<(), PartialJsonError> {
        match slot(container, self.stack.last()) {
            Some(Value::String(text)) => {
                text.push_str(&self.pending);
                self.pending.clear();
                Ok(())
            }
            _ => Err(PartialJsonError::lost_track(offset)),
        }
    }

    /// The innermost container is complete; the tree already holds it.
    fn close(&mut self) {
        self.stack.pop();
        self.end_value();
    }

    fn end_value(&mut self) {
        self.state = if self.stack.is_empty() {
            State::Done
        } else {
            State::AfterValue
        };
    }
}

#[cfg(test)]
mod tests;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod proptests;

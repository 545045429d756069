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
mod tests {
    use super::*;
    use serde_json::json;

    // Lets the same tests run under wasm-bindgen-test-runner for wasm32.
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// The value after each character of `text`, pushed one character at a time.
    fn values_per_char(text: &str) -> Vec<Value> {
        let mut parser = PartialJson::new();
        text.chars()
            .map(|c| {
                parser.push(c.encode_utf8(&mut [0; 4])).unwrap();
                parser.value().clone()
            })
            .collect()
    }

    /// The distinct values shown, in order, while `text` arrives one character at a time.
    fn shown_per_char(text: &str) -> Vec<Value> {
        let mut shown = values_per_char(text);
        shown.dedup();
        shown
    }

    fn error_of(text: &str) -> PartialJsonError {
        PartialJson::from_text(text).unwrap_err()
    }

    fn value_of(text: &str) -> Value {
        PartialJson::from_text(text).unwrap().value().clone()
    }

    #[test]
    fn nothing_meaningful_yet_is_null_and_incomplete() {
        for text in ["", "  \n\t\r ", "{\"a", "[tru", "-", "\"\\u00"] {
            let parser = PartialJson::from_text(text).unwrap();
            assert!(!parser.is_complete(), "{text:?}");
            if !text.starts_with(['{', '[', '"']) {
                assert_eq!(parser.value(), &Value::Null, "{text:?}");
            }
        }
        assert_eq!(PartialJson::new().value(), &Value::Null);
        assert_eq!(PartialJson::default().raw(), "");
    }

    #[test]
    fn tool_arguments_stream_character_by_character() {
        let text = r#"{"city":"Hà Nội","days":3}"#;
        assert_eq!(
            shown_per_char(text),
            vec![
                json!({}),
                json!({"city": ""}),
                json!({"city": "H"}),
                json!({"city": "Hà"}),
                json!({"city": "Hà "}),
                json!({"city": "Hà N"}),
                json!({"city": "Hà Nộ"}),
                json!({"city": "Hà Nội"}),
                json!({"city": "Hà Nội", "days": 3}),
            ]
        );
        let parser = PartialJson::from_text(text).unwrap();
        assert!(parser.is_complete());
        assert_eq!(parser.raw(), text);
    }

    #[test]
    fn strings_in_progress_show_what_arrived() {
        let mut parser = PartialJson::new();
        parser.push(r#"{"note": "Tab"#).unwrap();
        assert_eq!(parser.value(), &json!({"note": "Tab"}));
        parser.push("le for two, 7 pm").unwrap();
        assert_eq!(parser.value(), &json!({"note": "Table for two, 7 pm"}));
        parser.push(r#"\n\"window\"\t\/\\\b\f\r"#).unwrap();
        assert_eq!(
            parser.value(),
            &json!({"note": "Table for two, 7 pm\n\"window\"\t/\\\u{8}\u{c}\r"})
        );
        assert!(!parser.is_complete());
        assert_eq!(value_of(r#""top-level"#), json!("top-level"));
    }

    #[test]
    fn half_received_escapes_are_withheld() {
        let mut parser = PartialJson::new();
        for (delta, shown) in [
            (r#"["a\"#, json!(["a"])),
            ("u", json!(["a"])),
            ("00", json!(["a"])),
            ("e", json!(["a"])),
            ("9b", json!(["aéb"])),
            (r#"\"#, json!(["aéb"])),
            ("n", json!(["aéb\n"])),
            (r#"\u004"#, json!(["aéb\n"])),
            (r#"1""#, json!(["aéb\nA"])),
        ] {
            parser.push(delta).unwrap();
            assert_eq!(parser.value(), &shown, "after {delta:?}");
        }
    }

    #[test]
    fn surrogate_pairs_decode_wherever_the_text_is_cut() {
        let text = r#"{"mood":"ok \ud83d\ude00!"}"#;
        let expected = json!({"mood": "ok 😀!"});
        for cut in 0..=text.len() {
            let mut parser = PartialJson::new();
            parser.push(&text[..cut]).unwrap();
            let shown = parser.value().clone();
            if let Some(mood) = shown.get("mood").and_then(Value::as_str) {
                assert!(
                    ["", "o", "ok", "ok ", "ok 😀", "ok 😀!"].contains(&mood),
                    "{mood:?}"
                );
            }
            parser.push(&text[cut..]).unwrap();
            assert_eq!(parser.value(), &expected, "cut at {cut}");
            assert!(parser.is_complete());
        }
        // Only the completed pair shows: never half a character.
        assert_eq!(value_of(r#"["\ud83d"#), json!([""]));
        assert_eq!(value_of(r#"["\ud83d\ude0"#), json!([""]));
        assert_eq!(value_of(r#"["\uD83D\uDE00"#), json!(["😀"]));
    }

    #[test]
    fn bad_escapes_surrogates_and_control_characters_are_errors() {
        for (text, offset) in [
            (r#""\x""#, 2),
            (r#"{"a\q":1}"#, 4),
            (r#""\u12g4""#, 5),
            (r#""\ud83d""#, 7),
            (r#""\ud83dx""#, 7),
            (r#""\ud83d\n""#, 8),
            (r#""\ud83d\u0041""#, 12),
            (r#""\ud83d\ud83d""#, 12),
            (r#""\ude00""#, 6),
            ("\"a\nb\"", 2),
            ("[\"\u{1}\"]", 2),
            ("{\"\t\":1}", 2),
        ] {
            let error = error_of(text);
            assert_eq!(error.offset, offset, "{text:?}: {error}");
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text:?}");
        }
        // DEL and non-ASCII need no escaping.
        assert_eq!(value_of("\"\u{7f}é\""), json!("\u{7f}é"));
    }

    #[test]
    fn numbers_show_only_while_their_text_is_a_valid_number() {
        assert_eq!(
            values_per_char("[-12.5e+3]"),
            vec![
                json!([]),
                json!([]),
                json!([-1]),
                json!([-12]),
                json!([-12]),
                json!([-12.5]),
                json!([-12.5]),
                json!([-12.5]),
                json!([-12500.0]),
                json!([-12500.0]),
            ]
        );
        assert_eq!(
            shown_per_char(r#"{"n": 0.25, "m": 10}"#),
            vec![
                json!({}),
                json!({"n": 0}),
                json!({"n": 0.2}),
                json!({"n": 0.25}),
                json!({"n": 0.25, "m": 1}),
                json!({"n": 0.25, "m": 10}),
            ]
        );
        assert_eq!(value_of("[1,-"), json!([1]));
        assert_eq!(value_of(r#"{"a":-"#), json!({}));
        // The value depends on the text only: a prefix that never ended a piece still shows.
        assert_eq!(value_of(r#"{"a":1e"#), json!({"a": 1}));
        assert_eq!(value_of("[2.5E+"), json!([2.5]));
    }

    #[test]
    fn numbers_are_exactly_what_serde_json_makes_of_them() {
        for number in [
            "0",
            "-0",
            "7",
            "-7",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "1.5",
            "-0.0",
            "1e3",
            "1E+2",
            "2.5e-3",
            "0.1",
            "123456789012345678901234567890",
            "1e-400",
            "3.141592653589793238462643383279",
        ] {
            let expected: Value = serde_json::from_str(number).unwrap();
            let in_array = format!("[{number}]");
            assert_eq!(value_of(&in_array), json!([expected]), "{number}");
            let top_level = PartialJson::from_text(number).unwrap();
            assert_eq!(top_level.value(), &expected, "{number}");
            assert!(top_level.is_complete(), "{number}");
        }
        // Variants matter, not only numeric equality.
        assert!(value_of("[18446744073709551615]")[0].is_u64());
        assert!(value_of("[-1]")[0].is_i64());
        assert!(value_of("[1.0]")[0].is_f64());
    }

    #[test]
    fn top_level_number_completes_and_may_grow() {
        let mut parser = PartialJson::from_text("12").unwrap();
        assert!(parser.is_complete());
        parser.push(".").unwrap();
        assert!(!parser.is_complete());
        assert_eq!(parser.value(), &json!(12));
        parser.push("5").unwrap();
        assert!(parser.is_complete());
        assert_eq!(parser.value(), &json!(12.5));
        parser.push(" \n").unwrap();
        assert!(parser.is_complete());
        assert_eq!(parser.push("3").unwrap_err().offset, 6);
    }

    #[test]
    fn malformed_numbers_are_errors() {
        for (text, offset) in [
            ("[01]", 2),
            ("[-]", 2),
            ("[1.]", 3),
            ("[1.e5]", 3),
            ("[1e]", 3),
            ("[1e+]", 4),
            ("[.5]", 1),
            ("[+1]", 1),
            ("[1x]", 2),
            ("[--1]", 2),
            ("[1e999]", 1),
            ("{\"a\": -1e400}", 6),
        ] {
            let error = error_of(text);
            assert_eq!(error.offset, offset, "{text:?}: {error}");
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text:?}");
        }
        // Too large for f64 even before it ends, as more exponent digits only make it larger.
        assert_eq!(error_of("1e999").offset, 0);
        let mut parser = PartialJson::from_text("[0, 1e30").unwrap();
        assert_eq!(parser.push("9").unwrap_err().offset, 4);
        assert_eq!(parser.value(), &json!([0, 1e30]));
        // A negative exponent underflows to zero instead.
        assert_eq!(value_of("[1e-999"), json!([0.0]));
    }

    #[test]
    fn literals_show_only_when_complete() {
        assert_eq!(
            shown_per_char(r#"{"a":true,"b":false,"c":null}"#),
            vec![
                json!({}),
                json!({"a": true}),
                json!({"a": true, "b": false}),
                json!({"a": true, "b": false, "c": null}),
            ]
        );
        assert_eq!(value_of("[tr"), json!([]));
        assert_eq!(value_of("[nul"), json!([]));
        let top = PartialJson::from_text("false").unwrap();
        assert!(top.is_complete());
        assert_eq!(top.value(), &json!(false));
        for (text, offset) in [
            ("[tx]", 2),
            ("[truex]", 5),
            ("[True]", 1),
            ("nulL", 3),
            ("fals ", 4),
        ] {
            assert_eq!(error_of(text).offset, offset, "{text:?}");
        }
    }

    #[test]
    fn nested_containers_show_as_soon_as_they_open() {
        assert_eq!(
            shown_per_char(r#"{"a":[{"b":{"c":[[]]}},[]],"d":{}}"#),
            vec![
                json!({}),
                json!({"a": []}),
                json!({"a": [{}]}),
                json!({"a": [{"b": {}}]}),
                json!({"a": [{"b": {"c": []}}]}),
                json!({"a": [{"b": {"c": [[]]}}]}),
                json!({"a": [{"b": {"c": [[]]}}, []]}),
                json!({"a": [{"b": {"c": [[]]}}, []], "d": {}}),
            ]
        );
        // Closing a deep container and going on in its parent, within one push.
        let mut parser = PartialJson::from_text(r#"{"x":[[[1]],"#).unwrap();
        parser.push(r#""s"], "y": [[2], [3"#).unwrap();
        assert_eq!(parser.value(), &json!({"x": [[[1]], "s"], "y": [[2], [3]]}));
    }

    #[test]
    fn members_wait_for_their_value_to_start() {
        for text in [
            r#"{"key"#,
            r#"{"key""#,
            r#"{"key" "#,
            r#"{"key":"#,
            r#"{"key": "#,
            r#"{"key": -"#,
            r#"{"key": t"#,
        ] {
            assert_eq!(value_of(text), json!({}), "{text:?}");
        }
        assert_eq!(value_of(r#"{"key": ""#), json!({"key": ""}));
        assert_eq!(value_of(r#"{"a":1,"b"#), json!({"a": 1}));
        assert_eq!(value_of(r#"{"a":1,"b":["#), json!({"a": 1, "b": []}));
    }

    #[test]
    fn repeated_keys_keep_the_last_value() {
        let text = r#"{"a":1,"b":2,"a":"x"}"#;
        let parsed = PartialJson::from_text(text).unwrap();
        assert_eq!(parsed.value(), &json!({"a": "x", "b": 2}));
        assert_eq!(
            parsed.value(),
            &serde_json::from_str::<Value>(text).unwrap()
        );
        // Until the repeated key's value starts, the earlier value stays shown.
        assert_eq!(value_of(r#"{"a":1,"a":"#), json!({"a": 1}));
        assert_eq!(value_of(r#"{"a":1,"a":"y"#), json!({"a": "y"}));
        assert_eq!(value_of(r#"{"a":[1],"a":{"#), json!({"a": {}}));
    }

    #[test]
    fn whitespace_is_allowed_between_tokens_only() {
        let text = " \r\n\t{ \"a\" :\n[ 1 ,\t2 ] , \"b\" : { } }\n\n ";
        let parser = PartialJson::from_text(text).unwrap();
        assert!(parser.is_complete());
        assert_eq!(parser.value(), &json!({"a": [1, 2], "b": {}}));
        // Only JSON's four whitespace characters count.
        assert_eq!(error_of("\u{a0}{}").offset, 0);
        assert_eq!(error_of("{}\u{b}").offset, 2);
    }

    #[test]
    fn structural_errors_report_the_offending_byte() {
        for (text, offset) in [
            ("x", 0),
            ("{a:1}", 1),
            ("{'a':1}", 1),
            (r#"{"a" 1}"#, 5),
            (r#"{"a":1,}"#, 7),
            ("[1,]", 3),
            ("[,1]", 1),
            ("[1 2]", 3),
            (r#"{"a":1]"#, 6),
            ("[1}", 2),
            ("[1]]", 3),
            ("{} {}", 3),
            ("1 2", 2),
            (r#""a" "b""#, 4),
            (r#"{"a":}"#, 5),
            (r#"{,}"#, 1),
            ("]", 0),
            ("{\"é\":1,é}", 8),
        ] {
            let error = error_of(text);
            assert_eq!(error.offset, offset, "{text:?}: {error}");
            assert!(!error.message.is_empty());
            assert!(error.to_string().contains(&format!("byte {offset}")));
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn an_error_poisons_the_parser_and_keeps_the_last_good_value() {
        let mut parser = PartialJson::from_text(r#"{"a":[1,2],"b":"xy"#).unwrap();
        let error = parser.push(r#"z\q"#).unwrap_err();
        assert_eq!(error.offset, 20);
        // Text before the offending byte, even from the same push, is shown.
        assert_eq!(parser.value(), &json!({"a": [1, 2], "b": "xyz"}));
        assert_eq!(parser.push(r#"","c":3}"#), Err(error.clone()));
        assert_eq!(parser.push(""), Err(error));
        assert_eq!(parser.value(), &json!({"a": [1, 2], "b": "xyz"}));
        assert_eq!(parser.raw(), r#"{"a":[1,2],"b":"xyz\q","c":3}"#);
        assert!(!parser.is_complete());
        // Even a document that went on to look complete is not complete once poisoned.
        let mut parser = PartialJson::new();
        assert!(parser.push("[1,]").is_err());
        assert!(!parser.is_complete());
    }

    #[test]
    fn nesting_depth_is_limited_like_serde_json() {
        let deepest = format!("{}{}", "[".repeat(127), "]".repeat(127));
        let parser = PartialJson::from_text(&deepest).unwrap();
        assert!(parser.is_complete());
        assert_eq!(
            parser.value(),
            &serde_json::from_str::<Value>(&deepest).unwrap()
        );

        let too_deep = format!("{}{}", "[".repeat(128), "]".repeat(128));
        let error = error_of(&too_deep);
        assert_eq!(error.offset, 127);
        assert!(error.message.contains("128"));
        let serde_error = serde_json::from_str::<Value>(&too_deep).unwrap_err();
        assert_eq!(
            serde_error.column(),
            128,
            "serde_json rejects the same bracket"
        );

        let mixed = "[{\"a\":".repeat(64);
        assert_eq!(error_of(&mixed).offset, mixed.len() - 5);
        // The limit holds however the text is cut.
        let mut parser = PartialJson::new();
        let results: Vec<_> = (0..128).map(|_| parser.push("{\"k\":")).collect();
        assert!(results[..127].iter().all(Result::is_ok));
        assert_eq!(results[127].as_ref().unwrap_err().offset, 127 * 5);
    }

    #[test]
    fn pieces_cut_anywhere_give_what_one_piece_gives() {
        let text = r#" {"q": "Phở \"bò\" \u00e9\ud83c\udf5c", "n": [0, -1.5e-3, 18446744073709551615, true, null, {"k": []}], "ok": false} "#;
        let whole = PartialJson::from_text(text).unwrap();
        assert!(whole.is_complete());
        assert_eq!(whole.value(), &serde_json::from_str::<Value>(text).unwrap());
        let boundaries: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        for &first in &boundaries {
            for &second in boundaries.iter().filter(|&&b| b >= first) {
                let mut parser = PartialJson::new();
                for (start, end) in [(0, first), (first, second), (second, text.len())] {
                    parser.push(&text[start..end]).unwrap();
                    let one_piece = PartialJson::from_text(&text[..end]).unwrap();
                    assert_eq!(parser.value(), one_piece.value(), "cut {first}/{second}");
                    assert_eq!(parser.is_complete(), one_piece.is_complete());
                }
                assert_eq!(parser.value(), whole.value());
                assert_eq!(parser.raw(), text);
            }
        }
    }

    #[test]
    fn long_numbers_are_parsed_once_they_end() {
        let digits = "9".repeat(LIVE_NUMBER_MAX_LEN + 10);
        let mut parser = PartialJson::from_text("[").unwrap();
        for digit in digits.chars() {
            parser.push(digit.encode_utf8(&mut [0; 4])).unwrap();
        }
        let shown = parser.value().clone();
        assert_eq!(
            shown,
            value_of(&format!("[{digits}")),
            "pieces do not matter"
        );
        let shown = shown[0].as_f64().unwrap();
        // 64 nines round to 1e64 exactly when serde_json parses with float_roundtrip.
        assert!(shown > 9e63 && shown <= 1e64, "{shown}");
        parser.push("]").unwrap();
        let expected: Value = serde_json::from_str(&format!("[{digits}]")).unwrap();
        assert_eq!(parser.value(), &expected);
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    /// Text with the characters that stress the string scanner: escapes, controls,
    /// multi-byte characters and surrogate-pair characters.
    fn arb_text() -> impl Strategy<Value = String> {
        let special = prop_oneof![
            Just('"'),
            Just('\\'),
            Just('/'),
            Just('\n'),
            Just('\u{0}'),
            Just('\u{1f}'),
            Just('\u{7f}'),
            Just('é'),
            Just('ộ'),
            Just('😀'),
        ];
        let any_char =
            prop_oneof![3 => any::<char>(), 2 => special, 3 => proptest::char::range('a', 'z')];
        proptest::collection::vec(any_char, 0..10).prop_map(|chars| chars.into_iter().collect())
    }

    /// Finite floats that serde_json reads back as exactly the same float (its default float
    /// parsing may be one ULP off, which is serde_json's business, not this parser's).
    fn arb_float() -> impl Strategy<Value = Number> {
        any::<f64>().prop_filter_map("not finite or not round-tripping", |float| {
            let number = Number::from_f64(float)?;
            let text = serde_json::to_string(&number).ok()?;
            let back: Number = serde_json::from_str(&text).ok()?;
            (back == number).then_some(number)
        })
    }

    fn arb_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            arb_float().prop_map(Value::Number),
            arb_text().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((arb_text(), inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    /// A value and its compact or pretty serialisation.
    fn arb_document() -> impl Strategy<Value = (Value, String)> {
        (arb_value(), any::<bool>()).prop_map(|(value, pretty)| {
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                serde_json::to_string(&value).unwrap()
            };
            (value, text)
        })
    }

    /// Cuts `text` into pieces of roughly the given byte sizes, moved forward to character
    /// boundaries; the last piece takes the rest.
    fn cut(text: &str, sizes: &[usize]) -> Vec<String> {
        let mut pieces = Vec::new();
        let mut start = 0;
        for &size in sizes {
            if start >= text.len() {
                break;
            }
            let mut end = (start + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            pieces.push(text[start..end].to_owned());
            start = end;
        }
        pieces.push(text[start..].to_owned());
        pieces
    }

    fn char_boundaries(text: &str) -> impl Iterator<Item = usize> + '_ {
        (0..=text.len()).filter(|&i| text.is_char_boundary(i))
    }

    /// Whether everything `partial` shows is in `complete`: keys a subset, no extra array
    /// elements, strings prefixes, scalars of the same kind. A loop over a work list rather
    /// than recursion, like the parser itself.
    fn only_shows_what_arrives(partial: &Value, complete: &Value) -> bool {
        if partial.is_null() {
            // Nothing shown yet at the top level, or a `null` that must stay one.
            return true;
        }
        let mut work = vec![(partial, complete)];
        while let Some(pair) = work.pop() {
            match pair {
                (Value::Object(shown), Value::Object(all)) => {
                    for (key, value) in shown {
                        match all.get(key) {
                            Some(final_value) => work.push((value, final_value)),
                            None => return false,
                        }
                    }
                }
                (Value::Array(shown), Value::Array(all)) => {
                    if shown.len() > all.len() {
                        return false;
                    }
                    work.extend(shown.iter().zip(all));
                }
                (Value::String(shown), Value::String(all)) => {
                    if !all.starts_with(shown.as_str()) {
                        return false;
                    }
                }
                (Value::Number(_), Value::Number(_)) => {}
                (shown, all) => {
                    if shown != all {
                        return false;
                    }
                }
            }
        }
        true
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn pieces_of_any_size_rebuild_the_original(
            (original, text) in arb_document(),
            sizes in proptest::collection::vec(1usize..9, 0..400),
        ) {
            let mut parser = PartialJson::new();
            for piece in cut(&text, &sizes) {
                // Only a bare number can look complete before its text has all arrived.
                let all_arrived = parser.raw().len() == text.len();
                prop_assert!(all_arrived || !parser.is_complete() || original.is_number());
                prop_assert_eq!(parser.push(&piece), Ok(()));
            }
            prop_assert!(parser.is_complete());
            prop_assert_eq!(parser.value(), &original);
            let reference: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(parser.value(), &reference);
            prop_assert_eq!(parser.raw(), text.as_str());
        }

        #[test]
        fn every_prefix_is_accepted((_original, text) in arb_document()) {
            for end in char_boundaries(&text) {
                let prefix = &text[..end];
                let parsed = PartialJson::from_text(prefix);
                prop_assert!(parsed.is_ok(), "{:?}: {:?}", prefix, parsed.err());
            }
        }

        #[test]
        fn prefixes_show_only_what_the_final_value_has((original, text) in arb_document()) {
            for end in char_boundaries(&text) {
                let prefix = &text[..end];
                let shown = PartialJson::from_text(prefix).unwrap().value().clone();
                prop_assert!(
                    only_shows_what_arrives(&shown, &original),
                    "{:?} shows {} but the value is {}", prefix, shown, original
                );
            }
        }

        #[test]
        fn pushing_in_pieces_shows_what_one_push_shows(
            (_original, text) in arb_document(),
            sizes in proptest::collection::vec(1usize..9, 0..400),
        ) {
            let mut parser = PartialJson::new();
            let mut received = String::new();
            for piece in cut(&text, &sizes) {
                parser.push(&piece).unwrap();
                received.push_str(&piece);
                let one_push = PartialJson::from_text(&received).unwrap();
                prop_assert_eq!(parser.value(), one_push.value(), "after {:?}", received);
                prop_assert_eq!(parser.is_complete(), one_push.is_complete());
            }
        }

        #[test]
        fn agrees_with_serde_json_on_damaged_text(
            (_original, text) in arb_document(),
            position in any::<prop::sample::Index>(),
            damage in prop_oneof![
                Just(None),
                proptest::sample::select(&[
                    '{', '}', '[', ']', '"', '\\', ',', ':', ' ', '0', '1', '-', '.', 'e', 't',
                    'n', 'u', 'x', '\u{1}',
                ][..]).prop_map(Some),
            ],
            replace in any::<bool>(),
        ) {
            // One character deleted, inserted or replaced somewhere.
            let mut chars: Vec<char> = text.chars().collect();
            let at = position.index(chars.len() + 1);
            match damage {
                None if at < chars.len() => { chars.remove(at); }
                None => {}
                Some(c) if replace && at < chars.len() => chars[at] = c,
                Some(c) => chars.insert(at, c),
            }
            let damaged: String = chars.into_iter().collect();
            let ours = PartialJson::from_text(&damaged);
            match serde_json::from_str::<Value>(&damaged) {
                Ok(reference) => {
                    let ours = ours.unwrap();
                    prop_assert!(ours.is_complete(), "{:?}", damaged);
                    prop_assert_eq!(ours.value(), &reference);
                }
                Err(_) => {
                    prop_assert!(
                        ours.as_ref().map_or(true, |parser| !parser.is_complete()),
                        "{:?} is complete for us only", damaged
                    );
                }
            }
        }
    }
}

//! The state machine behind [`super::PartialJson`]: one byte at a time, any byte may be
//! the last of a fragment.

use super::*;

/// Parser state between fragments; everything a fragment boundary may cut through lives
/// here rather than on the Rust stack.
#[derive(Debug, Clone, Default)]
pub(super) struct Machine {
    pub(super) state: State,
    /// The open containers, outermost first. Each records which child is being parsed, which
    /// is also the path from the root to the innermost open container.
    pub(super) stack: Vec<Frame>,
    /// The key being read: keys are not shown until complete, so they are not in the tree.
    pub(super) key: String,
    /// Decoded characters of the string value being read, not yet appended to the tree.
    /// Batching them lets a fragment touch the tree once per string instead of per character.
    pub(super) pending: String,
    /// Text of the number being read; serde_json parses it so numbers match it exactly.
    pub(super) number: String,
    /// Raw offset where `number` starts, for errors about the whole number.
    pub(super) number_start: usize,
    /// Length of the longest prefix of `number` that is a valid number and at most
    /// [`LIVE_NUMBER_MAX_LEN`] long: what the tree should show while the number grows.
    pub(super) live_len: usize,
    /// Length of the prefix of `number` the tree shows (0: none), so that an unchanged
    /// prefix is not parsed again.
    pub(super) shown_len: usize,
}

/// What the parser expects next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum State {
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
pub(super) enum Escape {
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
pub(super) enum Num {
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
    pub(super) fn step(self, byte: u8) -> Option<Num> {
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
    pub(super) fn is_complete(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::ExpInt)
    }
}

/// An open container and the child of it being parsed.
#[derive(Debug, Clone)]
pub(super) enum Frame {
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
    pub(super) fn feed(
        &mut self,
        root: &mut Value,
        delta: &str,
        base: usize,
    ) -> Result<(), PartialJsonError> {
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
    pub(super) fn scan_string(
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
    pub(super) fn flush_pending(
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
    pub(super) fn close(&mut self) {
        self.stack.pop();
        self.end_value();
    }

    pub(super) fn end_value(&mut self) {
        self.state = if self.stack.is_empty() {
            State::Done
        } else {
            State::AfterValue
        };
    }
}

//! Checking a streamed reply the way a client would trust it: every `data:` line is JSON
//! or `[DONE]`, the stream ends with `[DONE]`, and the run really finished with a tool
//! result in it.
//!
//! A hand-written JSON syntax check keeps xtask free of serde (it builds first in CI) and
//! keeps the load generator cheap: the checker runs on the generator's core for every
//! event of every run.

/// Nesting deeper than this is refused rather than recursed into: the input comes from a
/// server under test and must not be able to overflow our stack.
const MAX_DEPTH: usize = 64;

/// What a well-formed reply must contain, besides every line being valid.
const REQUIRED_TYPES: [&str; 2] = ["finish", "tool-output-available"];

/// Checks an SSE body of the UI message stream; `Err` says the first thing wrong.
pub fn check_body(body: &[u8]) -> Result<Summary, String> {
    let text = std::str::from_utf8(body).map_err(|_| "the body is not UTF-8".to_owned())?;
    let mut summary = Summary::default();
    let mut seen = [false; REQUIRED_TYPES.len()];
    let mut done = false;
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let Some(data) = line.strip_prefix("data:") else {
            // Blank separators, `:` comments, `id:`/`event:` fields carry no payload.
            continue;
        };
        let data = data.strip_prefix(' ').unwrap_or(data);
        if done {
            return Err("a data line after [DONE]".to_owned());
        }
        summary.events += 1;
        if data == "[DONE]" {
            done = true;
            continue;
        }
        let kind = json_type_field(data).map_err(|e| {
            format!(
                "data line {} is not JSON ({e}): {}",
                summary.events,
                excerpt(data)
            )
        })?;
        if let Some(kind) = kind {
            if let Some(i) = REQUIRED_TYPES.iter().position(|t| *t == kind) {
                seen[i] = true;
            }
        }
    }
    if !done {
        return Err("the body does not end with data: [DONE]".to_owned());
    }
    for (kind, seen) in REQUIRED_TYPES.iter().zip(seen) {
        if !seen {
            return Err(format!("no `{kind}` chunk in the body"));
        }
    }
    Ok(summary)
}

/// What a checked body held.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// `data:` lines, `[DONE]` included.
    pub events: usize,
}

fn excerpt(text: &str) -> String {
    let end = text
        .char_indices()
        .nth(80)
        .map_or(text.len(), |(index, _)| index);
    text[..end].to_owned()
}

/// Validates `text` as one JSON value and returns the top-level object's `"type"` string
/// (without escapes, which chunk types never have), if it has one.
pub fn json_type_field(text: &str) -> Result<Option<&str>, String> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        at: 0,
        kind: None,
    };
    parser.skip_ws();
    parser.value(0)?;
    parser.skip_ws();
    if parser.at != parser.bytes.len() {
        return Err(format!("trailing bytes at {}", parser.at));
    }
    Ok(parser.kind.map(|(start, end)| &text[start..end]))
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Byte range of the top-level `"type"` value.
    kind: Option<(usize, usize)>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("expected `{}` at {}", byte as char, self.at))
        }
    }

    fn value(&mut self, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("nested too deeply".to_owned());
        }
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(drop),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(other) => Err(format!("unexpected `{}` at {}", other as char, self.at)),
            None => Err("unexpected end".to_owned()),
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), String> {
        self.expect(b'{')?;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.skip_ws();
            let key = self.string()?;
            self.skip_ws();
            self.expect(b':')?;
            self.skip_ws();
            let start = self.at;
            let is_type = depth == 0 && &self.bytes[key.0..key.1] == b"type";
            self.value(depth + 1)?;
            if is_type && self.bytes.get(start) == Some(&b'"') {
                self.kind = Some((start + 1, self.at - 1));
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(format!("expected `,` or `}}` at {}", self.at)),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), String> {
        self.expect(b'[')?;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.skip_ws();
            self.value(depth + 1)?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(format!("expected `,` or `]` at {}", self.at)),
            }
        }
    }

    /// A string; returns the byte range of its contents (escapes left as they are).
    fn string(&mut self) -> Result<(usize, usize), String> {
        self.expect(b'"')?;
        let start = self.at;
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok((start, self.at - 1));
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1;
                        }
                        Some(b'u') => {
                            self.at += 1;
                            for _ in 0..4 {
                                if !self.peek().is_some_and(|b| b.is_ascii_hexdigit()) {
                                    return Err(format!("bad \\u escape at {}", self.at));
                                }
                                self.at += 1;
                            }
                        }
                        _ => return Err(format!("bad escape at {}", self.at)),
                    }
                }
                Some(0..=0x1f) => {
                    return Err(format!("control character in a string at {}", self.at))
                }
                Some(_) => self.at += 1,
                None => return Err("unterminated string".to_owned()),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<(), String> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(format!("bad number at {}", self.at)),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(format!("bad fraction at {}", self.at));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(format!("bad exponent at {}", self.at));
            }
        }
        Ok(())
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), String> {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(format!("bad literal at {}", self.at))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_values_are_validated() {
        for good in [
            r#"{"type":"start","messageId":"m1"}"#,
            r#" {"a":[1,-2.5e+3,true,false,null,{"b":"\u00e9\n"}],"type":"finish"} "#,
            r#"[]"#,
            r#""x""#,
            "0",
        ] {
            assert!(json_type_field(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "{",
            r#"{"a":}"#,
            r#"{"a":1,}"#,
            "[1,]",
            "01",
            "1.",
            "-",
            r#""\x""#,
            "tru",
            "{} {}",
            "\"a\u{1}\"",
        ] {
            assert!(json_type_field(bad).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(MAX_DEPTH + 5) + &"]".repeat(MAX_DEPTH + 5);
        assert!(json_type_field(&deep).is_err());
    }

    #[test]
    fn only_the_top_level_type_is_reported() {
        assert_eq!(
            json_type_field(r#"{"data":{"type":"inner"},"type":"text-delta"}"#),
            Ok(Some("text-delta"))
        );
        assert_eq!(json_type_field(r#"{"data":{"type":"inner"}}"#), Ok(None));
        assert_eq!(json_type_field(r#"{"type":3}"#), Ok(None));
    }

    #[test]
    fn a_complete_reply_passes_and_broken_ones_say_why() {
        let good = "data: {\"type\":\"start\"}\n\ndata: {\"type\":\"tool-output-available\",\"output\":{}}\n\n\
                    data: {\"type\":\"finish\"}\n\ndata: [DONE]\n\n";
        assert_eq!(check_body(good.as_bytes()), Ok(Summary { events: 4 }));
        let crlf = good.replace('\n', "\r\n");
        assert!(check_body(crlf.as_bytes()).is_ok());

        let unfinished = "data: {\"type\":\"start\"}\n\n";
        assert!(check_body(unfinished.as_bytes())
            .unwrap_err()
            .contains("[DONE]"));
        let no_tool = "data: {\"type\":\"finish\"}\n\ndata: [DONE]\n\n";
        assert!(check_body(no_tool.as_bytes())
            .unwrap_err()
            .contains("tool-output-available"));
        let broken = good.replace("{\"type\":\"finish\"}", "{\"type\":\"fin");
        assert!(check_body(broken.as_bytes())
            .unwrap_err()
            .contains("not JSON"));
        let after = format!("{good}data: {{}}\n\n");
        assert!(check_body(after.as_bytes()).is_err());
        assert!(check_body(&[0xff, 0xfe]).is_err());
    }
}

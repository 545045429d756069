//! An incremental decoder for the server-sent events of `/api/chat` and `/api/approvals`.
//!
//! Pure and platform-neutral, so it is tested natively; the browser client feeds it the
//! bytes of each chunk exactly as they arrive. It works on bytes, not text: a line ends at
//! `\n` (an optional `\r` before it is dropped), and a UTF-8 sequence never contains the byte
//! `\n`, so a character split across two chunks is whole again before its line is decoded.
//!
//! Per the SSE format, `data:` lines accumulate until a blank line dispatches the event
//! (several `data:` lines join with `\n`); comments (`:`) and other fields (`event:`,
//! `id:`, `retry:`) are ignored. A lone `\r` as a line ending is not supported: the server
//! writes `\n`.
#![cfg_attr(not(feature = "hydrate"), allow(dead_code))]

use shared::events::AgentEvent;

/// What one dispatched event turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum SseItem {
    /// A chunk of the UI message stream.
    Event(AgentEvent),
    /// `data: [DONE]`: the stream is over; nothing after it is read.
    Done,
    /// Data that is not an [`AgentEvent`] (bad JSON, unknown type, invalid UTF-8): skipped
    /// by the caller, kept here only to be logged.
    Malformed {
        /// The data as received (lossily decoded).
        data: String,
        /// Why it was rejected.
        error: String,
    },
}

/// Turns the bytes of an event stream into [`SseItem`]s, chunk by chunk.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the line not yet ended.
    line: Vec<u8>,
    /// `data:` lines of the event not yet dispatched.
    data: Vec<Vec<u8>>,
    /// Set once `[DONE]` was seen; later input is ignored.
    done: bool,
}

impl SseDecoder {
    /// A decoder that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `[DONE]` was seen.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Feeds the next chunk and returns the events it completed, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseItem> {
        let mut items = Vec::new();
        let mut rest = chunk;
        while !self.done {
            match rest.iter().position(|&byte| byte == b'\n') {
                Some(end) => {
                    self.line.extend_from_slice(&rest[..end]);
                    rest = &rest[end + 1..];
                    let mut line = std::mem::take(&mut self.line);
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    self.line_ended(line, &mut items);
                }
                None => {
                    self.line.extend_from_slice(rest);
                    break;
                }
            }
        }
        items
    }

    /// The stream ended: dispatches an event left without its closing blank line.
    pub fn finish(&mut self) -> Vec<SseItem> {
        let mut items = Vec::new();
        if self.done {
            return items;
        }
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            self.line_ended(line, &mut items);
        }
        if !self.done {
            self.dispatch(&mut items);
        }
        items
    }

    fn line_ended(&mut self, line: Vec<u8>, items: &mut Vec<SseItem>) {
        if line.is_empty() {
            self.dispatch(items);
            return;
        }
        // `field: value` (one optional space after the colon) or a bare `field`.
        let (field, value) = match line.iter().position(|&byte| byte == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &[][..]),
        };
        if field == b"data" {
            self.data.push(value.to_vec());
        }
        // An empty field name is a comment (keep-alive); other fields carry nothing we use.
    }

    fn dispatch(&mut self, items: &mut Vec<SseItem>) {
        if self.data.is_empty() {
            return;
        }
        let data = std::mem::take(&mut self.data).join(&b'\n');
        items.push(parse_data(&data));
        if matches!(items.last(), Some(SseItem::Done)) {
            self.done = true;
            self.line.clear();
        }
    }
}

/// Reads one event's data.
fn parse_data(data: &[u8]) -> SseItem {
    let text = match std::str::from_utf8(data) {
        Ok(text) => text,
        Err(error) => {
            return SseItem::Malformed {
                data: String::from_utf8_lossy(data).into_owned(),
                error: error.to_string(),
            }
        }
    };
    if text.trim() == "[DONE]" {
        return SseItem::Done;
    }
    // Through `Value`, like every JSON the page reads: the typed parts then have one
    // deserializer per type in the bundle (from `Value`) instead of one per input kind.
    match serde_json::from_str::<serde_json::Value>(text).and_then(serde_json::from_value) {
        Ok(event) => SseItem::Event(event),
        Err(error) => SseItem::Malformed {
            data: text.to_owned(),
            error: error.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(text: &str) -> AgentEvent {
        AgentEvent::TextDelta {
            id: "t".into(),
            delta: text.into(),
        }
    }

    fn events(items: &[SseItem]) -> Vec<AgentEvent> {
        items
            .iter()
            .filter_map(|item| match item {
                SseItem::Event(event) => Some(event.clone()),
                SseItem::Done | SseItem::Malformed { .. } => None,
            })
            .collect()
    }

    const STREAM: &str = concat!(
        "data: {\"type\":\"start\",\"messageId\":\"m1\",\"messageMetadata\":{\"conversationId\":\"c1\"}}\n\n",
        "data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"Chào bạn, phở Hà Nội 🍜\"}\n\n",
        "data: {\"type\":\"finish\",\"messageMetadata\":{\"status\":\"completed\"}}\n\n",
        "data: [DONE]\n\n",
    );

    #[test]
    fn whole_stream_in_one_chunk() {
        let mut decoder = SseDecoder::new();
        let items = decoder.push(STREAM.as_bytes());
        assert_eq!(items.len(), 4);
        assert_eq!(items[1], SseItem::Event(delta("Chào bạn, phở Hà Nội 🍜")));
        assert_eq!(items[3], SseItem::Done);
        assert!(decoder.is_done());
        assert!(decoder.finish().is_empty());
    }

    #[test]
    fn any_split_point_gives_the_same_items() {
        let bytes = STREAM.as_bytes();
        let mut whole = SseDecoder::new();
        let expected = whole.push(bytes);
        // Every split, including inside multi-byte characters ("à", "ộ", the emoji) and
        // between the two newlines that end an event.
        for split in 0..=bytes.len() {
            let mut decoder = SseDecoder::new();
            let mut items = decoder.push(&bytes[..split]);
            items.extend(decoder.push(&bytes[split..]));
            items.extend(decoder.finish());
            assert_eq!(items, expected, "split at byte {split}");
        }
    }

    #[test]
    fn byte_by_byte_gives_the_same_items() {
        let mut decoder = SseDecoder::new();
        let items: Vec<SseItem> = STREAM
            .as_bytes()
            .iter()
            .flat_map(|byte| decoder.push(std::slice::from_ref(byte)))
            .collect();
        assert_eq!(items.len(), 4);
        assert_eq!(items[1], SseItem::Event(delta("Chào bạn, phở Hà Nội 🍜")));
    }

    #[test]
    fn nothing_is_read_after_done() {
        let mut decoder = SseDecoder::new();
        let items = decoder.push(
            b"data: [DONE]\n\ndata: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"x\"}\n\n",
        );
        assert_eq!(items, vec![SseItem::Done]);
        assert!(decoder
            .push(b"data: {\"type\":\"start-step\"}\n\n")
            .is_empty());
    }

    #[test]
    fn malformed_data_is_reported_and_the_stream_goes_on() {
        let mut decoder = SseDecoder::new();
        let items = decoder.push(
            concat!(
                "data: {not json\n\n",
                "data: {\"type\":\"no-such-chunk\"}\n\n",
                "data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"ok\"}\n\n",
            )
            .as_bytes(),
        );
        assert_eq!(items.len(), 3);
        assert!(matches!(&items[0], SseItem::Malformed { data, .. } if data == "{not json"));
        assert!(matches!(&items[1], SseItem::Malformed { .. }));
        assert_eq!(events(&items), vec![delta("ok")]);
    }

    #[test]
    fn invalid_utf8_is_malformed_not_a_panic() {
        let mut decoder = SseDecoder::new();
        let mut bytes = b"data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"".to_vec();
        bytes.extend_from_slice(&[0xff, 0xfe]);
        bytes.extend_from_slice(b"\"}\n\ndata: [DONE]\n\n");
        let items = decoder.push(&bytes);
        assert!(matches!(&items[0], SseItem::Malformed { .. }));
        assert_eq!(items[1], SseItem::Done);
    }

    #[test]
    fn crlf_comments_other_fields_and_multiline_data() {
        let mut decoder = SseDecoder::new();
        let items = decoder.push(
            concat!(
                ": keep-alive\r\n\r\n",
                "event: message\r\nid: 7\r\ndata:{\"type\":\"text-delta\",\r\n",
                "data: \"id\":\"t\",\"delta\":\"a\"}\r\n\r\n",
                "retry: 1000\n\n",
            )
            .as_bytes(),
        );
        // The two data lines join with "\n", which JSON accepts as whitespace.
        assert_eq!(items, vec![SseItem::Event(delta("a"))]);
    }

    #[test]
    fn finish_dispatches_an_unterminated_event() {
        let mut decoder = SseDecoder::new();
        assert!(decoder
            .push(b"data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"end\"}")
            .is_empty());
        assert_eq!(decoder.finish(), vec![SseItem::Event(delta("end"))]);
        assert!(!decoder.is_done());
    }
}

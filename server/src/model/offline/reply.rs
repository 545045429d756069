//! What one turn says and proposes, and how it is streamed: in small pieces, the way a real
//! model's tokens arrive, so the agent loop and the page meet the same shapes.

use crate::model::{FinishReason, ModelEvent};

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Reply {
    pub(super) text: String,
    pub(super) calls: Vec<Call>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Call {
    pub(super) name: String,
    pub(super) arguments: String,
}

impl Reply {
    pub(super) fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            calls: Vec::new(),
        }
    }

    pub(super) fn call(text: impl Into<String>, name: &str, arguments: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            calls: vec![Call {
                name: name.to_owned(),
                arguments: arguments.into(),
            }],
        }
    }

    pub(super) fn into_events(self, turn: usize) -> Vec<ModelEvent> {
        let mut events: Vec<ModelEvent> = text_pieces(&self.text)
            .into_iter()
            .map(ModelEvent::TextDelta)
            .collect();
        let finish = if self.calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        for (index, call) in self.calls.into_iter().enumerate() {
            // Unique within a conversation: every earlier turn left one Assistant message.
            let id = format!("call_{turn}_{index}");
            events.push(ModelEvent::ToolCallStart {
                id: id.clone(),
                name: call.name,
            });
            for delta in argument_pieces(&call.arguments) {
                events.push(ModelEvent::ToolCallDelta {
                    id: id.clone(),
                    delta: delta.to_owned(),
                });
            }
            events.push(ModelEvent::ToolCallEnd { id });
        }
        events.push(ModelEvent::Finish(finish));
        // Held until the last piece is streamed, which a slow model makes seconds; the
        // room the pushes left over would be held as long.
        events.shrink_to_fit();
        events
    }
}

/// Splits text into pieces of one to three words, each keeping the whitespace after it, the
/// way real models stream tokens.
pub(super) fn text_pieces(text: &str) -> Vec<String> {
    const WORDS_PER_PIECE: [usize; 3] = [2, 1, 3];
    let mut words = Vec::new();
    let mut start = 0;
    let mut seen_word = false;
    let mut in_space = false;
    for (index, c) in text.char_indices() {
        if c.is_whitespace() {
            in_space = seen_word;
        } else {
            if in_space {
                words.push(&text[start..index]);
                start = index;
                in_space = false;
            }
            seen_word = true;
        }
    }
    if start < text.len() {
        words.push(&text[start..]);
    }
    let mut pieces = Vec::new();
    let mut rest = words.as_slice();
    let mut round = 0;
    while !rest.is_empty() {
        let take = WORDS_PER_PIECE[round % WORDS_PER_PIECE.len()].min(rest.len());
        pieces.push(rest[..take].concat());
        rest = &rest[take..];
        round += 1;
    }
    pieces
}

/// Splits argument text into pieces of about four to eight bytes, cut at char boundaries.
pub(super) fn argument_pieces(arguments: &str) -> Vec<&str> {
    const PIECE_BYTES: [usize; 5] = [5, 7, 4, 8, 6];
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut round = 0;
    while start < arguments.len() {
        let mut end = (start + PIECE_BYTES[round % PIECE_BYTES.len()]).min(arguments.len());
        while !arguments.is_char_boundary(end) {
            end -= 1;
        }
        if end == start {
            // A single char wider than the piece: send it whole.
            end = start + 1;
            while !arguments.is_char_boundary(end) {
                end += 1;
            }
        }
        pieces.push(&arguments[start..end]);
        start = end;
        round += 1;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::super::testing::{plan, user};
    use super::*;

    #[test]
    fn text_is_streamed_in_small_word_pieces() {
        let turn = plan(vec![user("xin chào")]);
        assert!(turn.text_pieces.len() > 10, "{:?}", turn.text_pieces);
        assert_eq!(turn.text_pieces.concat(), turn.text);
        for piece in &turn.text_pieces {
            let words = piece.split_whitespace().count();
            assert!((1..=3).contains(&words), "{piece:?}");
        }
        assert_eq!(text_pieces(" a b  c d\ne f"), [" a b  ", "c ", "d\ne f"]);
        assert!(text_pieces("").is_empty());
    }

    #[test]
    fn arguments_are_streamed_in_small_pieces_at_char_boundaries() {
        let turn = plan(vec![user("Thời tiết Đà Lạt, Đà Nẵng 5 ngày")]);
        assert_eq!(turn.calls.len(), 2);
        assert!(
            turn.argument_pieces.len() >= 6,
            "{:?}",
            turn.argument_pieces
        );
        for piece in &turn.argument_pieces {
            assert!((1..=8).contains(&piece.len()), "{piece:?}");
        }
        let all: String = turn.calls.iter().map(|c| c.arguments.as_str()).collect();
        assert_eq!(turn.argument_pieces.concat(), all);
        assert_eq!(argument_pieces("ẫẫẫẫ"), ["ẫ", "ẫẫ", "ẫ"]);
    }
}

//! Picking a lost reply stream up again, as a pure state machine: what to ask for, after
//! how long, and what each answer means. The browser's side (`state.rs`) only carries the
//! machine's steps out (sleep, request, read, refresh), so every path is tested natively.
#![cfg_attr(not(feature = "hydrate"), allow(dead_code))]

/// Pauses before each attempt, in milliseconds: at once, then backing off.
pub const DELAYS_MS: [u32; 5] = [0, 500, 1000, 2000, 4000];

/// How one attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `204`: no run is going (any more): the stored conversation says how it ended.
    NoRun,
    /// A stream was read until it ended or broke.
    Read {
        /// The run it belonged to, as the server named it.
        run_id: Option<String>,
        /// How the reading ended.
        end: ReadEnd,
        /// Whether the message already said how the run ended (its `finish`).
        finished: bool,
    },
    /// The server refused the request (a 4xx): asking again would not help.
    Refused(String),
    /// Unreachable, or a 5xx: it may answer on the next attempt.
    Unreachable,
}

/// How reading a stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadEnd {
    /// `data: [DONE]` arrived.
    Done,
    /// The body ended or broke without `[DONE]`.
    Cut,
    /// The page stopped reading (it moved on).
    Cancelled,
}

/// What the page does after an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Ask again ([`Reattach::next_request`]).
    Again,
    /// Read the stored conversation: the reply ended without its stream saying so.
    Refresh,
    /// Nothing more: the reply is whole on the page, or the page moved on.
    Stop,
    /// Give up with this sentence for the person.
    Fail(String),
}

/// One attempt to make: wait `delay_ms`, then `GET url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The pause before it.
    pub delay_ms: u32,
    /// `GET /api/chat/{id}/stream?after=…[&run=…]`.
    pub url: String,
}

/// A page following a reply whose stream it lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reattach {
    conversation_id: String,
    /// Events of the run the page holds: the next stream starts after them.
    pub applied: u64,
    /// The run followed, once known: another run's events are never folded in.
    pub run_id: Option<String>,
    attempt: usize,
}

impl Reattach {
    /// Following conversation `conversation_id`'s reply after the first `applied` events of
    /// run `run_id` (when known).
    pub fn new(conversation_id: String, applied: u64, run_id: Option<String>) -> Self {
        Self {
            conversation_id,
            applied,
            run_id,
            attempt: 0,
        }
    }

    /// The next attempt, or `None` once every attempt was made.
    pub fn next_request(&mut self) -> Option<Request> {
        let delay_ms = *DELAYS_MS.get(self.attempt)?;
        self.attempt += 1;
        Some(Request {
            delay_ms,
            url: shared::http::stream_url(
                &self.conversation_id,
                self.applied,
                self.run_id.as_deref(),
            ),
        })
    }

    /// Counts one more event folded into the message.
    pub fn applied_one(&mut self) {
        self.applied += 1;
    }

    /// What an attempt's answer means.
    pub fn on_answer(&mut self, answer: Answer) -> Next {
        match answer {
            Answer::NoRun => Next::Refresh,
            Answer::Read {
                run_id,
                end,
                finished,
            } => {
                if self.run_id.is_none() {
                    self.run_id = run_id;
                }
                match end {
                    ReadEnd::Cancelled => Next::Stop,
                    _ if finished => Next::Stop,
                    // Over without saying how (its server went away): ask the store.
                    ReadEnd::Done => Next::Refresh,
                    // Cut again: the next attempt asks for what is still missing.
                    ReadEnd::Cut => Next::Again,
                }
            }
            Answer::Refused(message) => Next::Fail(message),
            Answer::Unreachable => Next::Again,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(end: ReadEnd, finished: bool) -> Answer {
        Answer::Read {
            run_id: Some("run_b".into()),
            end,
            finished,
        }
    }

    #[test]
    fn attempts_back_off_and_run_out() {
        let mut machine = Reattach::new("c 1".into(), 3, None);
        let delays: Vec<u32> = std::iter::from_fn(|| machine.next_request())
            .map(|request| request.delay_ms)
            .collect();
        assert_eq!(delays, DELAYS_MS);
        assert_eq!(machine.next_request(), None, "no sixth attempt");
    }

    #[test]
    fn each_attempt_asks_for_what_is_still_missing_of_the_same_run() {
        let mut machine = Reattach::new("chat:1".into(), 3, None);
        let first = machine.next_request().unwrap();
        assert_eq!(first.url, "/api/chat/chat%3A1/stream?after=3");
        // Five events arrive, then the connection breaks.
        for _ in 0..5 {
            machine.applied_one();
        }
        assert_eq!(machine.on_answer(read(ReadEnd::Cut, false)), Next::Again);
        let second = machine.next_request().unwrap();
        assert_eq!(second.url, "/api/chat/chat%3A1/stream?after=8&run=run_b");
        // A run named earlier is kept: another run's name never replaces it.
        let mut named = Reattach::new("c".into(), 0, Some("run_a".into()));
        named.on_answer(read(ReadEnd::Cut, false));
        assert_eq!(named.run_id.as_deref(), Some("run_a"));
    }

    #[test]
    fn answers_map_to_what_the_page_does() {
        let mut machine = Reattach::new("c".into(), 0, None);
        assert_eq!(machine.on_answer(Answer::NoRun), Next::Refresh);
        assert_eq!(machine.on_answer(read(ReadEnd::Done, true)), Next::Stop);
        assert_eq!(
            machine.on_answer(read(ReadEnd::Done, false)),
            Next::Refresh,
            "[DONE] without a finish: the stored copy says how it ended"
        );
        assert_eq!(machine.on_answer(read(ReadEnd::Cut, true)), Next::Stop);
        assert_eq!(
            machine.on_answer(read(ReadEnd::Cancelled, false)),
            Next::Stop
        );
        assert_eq!(machine.on_answer(Answer::Unreachable), Next::Again);
        assert_eq!(
            machine.on_answer(Answer::Refused("Not found.".into())),
            Next::Fail("Not found.".into())
        );
    }
}

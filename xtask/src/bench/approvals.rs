//! The evening issue 10 began with, measured: many people, each with a booking form open,
//! approve at the same moment. Every approval must end booked or waitlisted; what the
//! table shows is how long the last one took and what one cost the server.

use std::{
    net::SocketAddr,
    sync::Barrier,
    time::{Duration, Instant},
};

use serde_json::Value;

use super::load::{Client, Failures, RunError};

/// A request the offline model answers with a `createBooking` confirmation. "Tomorrow
/// evening" keeps it in the future whenever the benchmark runs; past the slot's 40 seats
/// the bookings are waitlisted, which counts as decided too.
const BOOKING_TEXT: &str = "Đặt bàn ở Chả Cá Thăng Long cho 2 người tối mai lúc 19:00";

/// One burst: everyone released at once.
#[derive(Debug, Clone)]
pub struct Round {
    pub confirmed: usize,
    pub waitlisted: usize,
    /// From the release until the last reply was read to its end.
    pub wall: Duration,
    /// Per process whose CPU was probed: its CPU time over the burst, in seconds.
    pub cpu_seconds: Vec<f64>,
}

/// Every round of one server.
#[derive(Debug, Clone)]
pub struct Approvals {
    pub people: usize,
    pub rounds: Vec<Round>,
    /// Forms that could not be opened and approvals that did not end in a booking.
    pub failures: Failures,
}

impl Approvals {
    /// The round with the median wall time (rounds are few; the middle one, not a mean
    /// that one slow round would move).
    pub fn median(&self) -> Option<&Round> {
        let mut rounds: Vec<&Round> = self.rounds.iter().collect();
        rounds.sort_by_key(|round| round.wall);
        rounds.get(rounds.len() / 2).copied()
    }
}

/// `rounds` times: `people` new owners each open a booking form (one after another),
/// then all approve at the same moment on their own connections (`POST /api/approvals`).
/// `probe` reads the CPU seconds of the processes being measured.
pub fn at_once(
    addr: SocketAddr,
    people: usize,
    rounds: usize,
    probe: &(dyn Fn() -> Vec<f64> + Sync),
) -> Approvals {
    let mut failures = Failures::default();
    let mut done = Vec::new();
    for _ in 0..rounds {
        let mut forms = Vec::with_capacity(people);
        for _ in 0..people {
            let mut client = Client::new(addr);
            let body = serde_json::json!({ "text": BOOKING_TEXT }).to_string();
            match client
                .post("/api/chat", &body)
                .and_then(|reply| pending_call(&reply))
            {
                Ok((conversation, call)) => forms.push((client, conversation, call)),
                Err(cause) => failures.add(format!("opening the form: {cause}")),
            }
        }
        let release = Barrier::new(forms.len() + 1);
        let (outcomes, started, before) = std::thread::scope(|scope| {
            let handles: Vec<_> = forms
                .iter_mut()
                .map(|(client, conversation, call)| {
                    let release = &release;
                    scope.spawn(move || {
                        let body = serde_json::json!({
                            "conversationId": conversation,
                            "toolCallId": call,
                            "approved": true,
                        })
                        .to_string();
                        release.wait();
                        let outcome = client
                            .post("/api/approvals", &body)
                            .and_then(|reply| booking_status(&reply, call));
                        (outcome, Instant::now())
                    })
                })
                .collect();
            let before = probe();
            release.wait();
            let started = Instant::now();
            let outcomes: Vec<_> = handles
                .into_iter()
                .map(|handle| {
                    handle
                        .join()
                        .unwrap_or_else(|_| (Err("the client thread panicked".into()), started))
                })
                .collect();
            (outcomes, started, before)
        });
        let after = probe();
        let mut round = Round {
            confirmed: 0,
            waitlisted: 0,
            wall: Duration::ZERO,
            cpu_seconds: after.iter().zip(&before).map(|(a, b)| a - b).collect(),
        };
        for (outcome, finished) in outcomes {
            round.wall = round.wall.max(finished.saturating_duration_since(started));
            match outcome {
                Ok(Booked::Confirmed) => round.confirmed += 1,
                Ok(Booked::Waitlisted) => round.waitlisted += 1,
                Err(cause) => failures.add(format!("approving: {cause}")),
            }
        }
        done.push(round);
    }
    Approvals {
        people,
        rounds: done,
        failures,
    }
}

/// The JSON of each `data:` line of an SSE body (`[DONE]` and other lines skipped).
fn events(body: &[u8]) -> Result<Vec<Value>, RunError> {
    let text = std::str::from_utf8(body).map_err(|_| "the reply is not UTF-8".to_owned())?;
    text.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).map_err(|_| "an event is not JSON".to_owned()))
        .collect()
}

/// The conversation and the call a booking request's reply asks to approve.
fn pending_call(body: &[u8]) -> Result<(String, String), RunError> {
    let events = events(body)?;
    let conversation = events
        .iter()
        .find(|e| e["type"] == "start")
        .and_then(|e| e["messageMetadata"]["conversationId"].as_str())
        .ok_or("no conversationId in the start event")?;
    let call = events
        .iter()
        .find(|e| e["type"] == "tool-approval-request")
        .and_then(|e| e["toolCallId"].as_str())
        .ok_or("no confirmation in the reply")?;
    Ok((conversation.to_owned(), call.to_owned()))
}

#[derive(Debug, PartialEq)]
enum Booked {
    Confirmed,
    Waitlisted,
}

/// What an approval's reply says happened to `call`: a booking that is there, or why not.
fn booking_status(body: &[u8], call: &str) -> Result<Booked, RunError> {
    let events = events(body)?;
    if let Some(error) = events
        .iter()
        .find(|e| e["type"] == "tool-output-error" && e["toolCallId"] == call)
    {
        let code = error["error"]["code"].as_str().unwrap_or("no code");
        return Err(format!("the call failed ({code})"));
    }
    let output = events
        .iter()
        .find(|e| e["type"] == "tool-output-available" && e["toolCallId"] == call)
        .map(|e| &e["output"])
        .ok_or("no output for the approved call")?;
    if output["bookingId"].as_str().is_none_or(str::is_empty) {
        return Err("the output names no booking".into());
    }
    if !events.iter().any(|e| e["type"] == "finish") {
        return Err("the reply has no finish".into());
    }
    match output["status"].as_str() {
        Some("confirmed") => Ok(Booked::Confirmed),
        Some("waitlisted") => Ok(Booked::Waitlisted),
        other => Err(format!("a booking {}", other.unwrap_or("without a status"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORM: &str = "data: {\"type\":\"start\",\"messageId\":\"msg_1\",\"messageMetadata\":{\"conversationId\":\"conv_9\"}}\n\n\
        data: {\"type\":\"tool-input-available\",\"toolCallId\":\"call_0_0\",\"toolName\":\"createBooking\",\"input\":{}}\n\n\
        data: {\"type\":\"tool-approval-request\",\"approvalId\":\"call_0_0\",\"toolCallId\":\"call_0_0\"}\n\n\
        data: {\"type\":\"finish\"}\n\ndata: [DONE]\n\n";

    #[test]
    fn a_form_names_its_conversation_and_call() {
        assert_eq!(
            pending_call(FORM.as_bytes()),
            Ok(("conv_9".to_owned(), "call_0_0".to_owned()))
        );
        let no_form = FORM.replace("tool-approval-request", "tool-output-available");
        assert!(pending_call(no_form.as_bytes()).is_err());
    }

    #[test]
    fn only_a_named_booking_counts() {
        let reply = |output: &str| {
            format!(
                "data: {{\"type\":\"start\"}}\n\n\
                 data: {{\"type\":\"tool-output-available\",\"toolCallId\":\"call_0_0\",\"output\":{output}}}\n\n\
                 data: {{\"type\":\"finish\"}}\n\ndata: [DONE]\n\n"
            )
        };
        let confirmed = reply(r#"{"bookingId":"BK-1","status":"confirmed"}"#);
        assert_eq!(
            booking_status(confirmed.as_bytes(), "call_0_0"),
            Ok(Booked::Confirmed)
        );
        let waitlisted = reply(r#"{"bookingId":"BK-2","status":"waitlisted"}"#);
        assert_eq!(
            booking_status(waitlisted.as_bytes(), "call_0_0"),
            Ok(Booked::Waitlisted)
        );
        // Another call's booking, no booking id, a reply cut before its finish: not booked.
        assert!(booking_status(confirmed.as_bytes(), "call_1_0").is_err());
        let unnamed = reply(r#"{"status":"confirmed"}"#);
        assert!(booking_status(unnamed.as_bytes(), "call_0_0").is_err());
        let cut = confirmed.replace("data: {\"type\":\"finish\"}\n\n", "");
        assert!(booking_status(cut.as_bytes(), "call_0_0").is_err());
        let failed = "data: {\"type\":\"tool-output-error\",\"toolCallId\":\"call_0_0\",\
                      \"error\":{\"code\":\"EXECUTION_FAILED\"}}\n\n";
        assert_eq!(
            booking_status(failed.as_bytes(), "call_0_0"),
            Err("the call failed (EXECUTION_FAILED)".to_owned())
        );
    }
}

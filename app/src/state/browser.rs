//! What only the browser does with the chat: sending, reading the reply's stream as it
//! arrives, following a reply being written, and catching up after a lost stream.

use super::*;

impl ChatState {
    pub(super) fn current(&self, generation: u64) -> bool {
        self.generation.try_get_value() == Some(generation)
    }

    pub(super) fn spawn_send(self, text: String) {
        // The server answers open confirmations with "no" when a new message arrives;
        // after the reply, the stored conversation shows what became of them.
        let had_pending = self.has_pending_confirmation();
        let user = self.push(Message::user(
            format!("local-{}", self.next_key.get_value()),
            text.clone(),
        ));
        self.streaming.set(true);
        crate::browser::scroll_to_page_end();
        let generation = self.generation.get_value();
        leptos::task::spawn_local(async move {
            let conversation_id = self.conversation_id.get_untracked();
            // Only a new conversation says which assistant: the server fixes it then.
            let assistant = conversation_id
                .is_none()
                .then(|| self.assistant.get_untracked());
            let request = crate::api::ChatRequest {
                conversation_id,
                text: text.clone(),
                assistant,
            };
            let outcome = self
                .stream(crate::api::CHAT_URL, &request, generation)
                .await;
            if !self.current(generation) {
                return;
            }
            match outcome {
                Ok(()) => {
                    if had_pending {
                        self.refresh(generation).await;
                    }
                }
                Err(StreamFailure::Rejected { message, status }) => {
                    // The server did not take the message: take the bubble back and give the
                    // text back to the box, unless something new was typed meanwhile.
                    self.entries
                        .update(|entries| entries.retain(|entry| entry.key != user.key));
                    if self.draft.get_untracked().trim().is_empty() {
                        self.draft.set(text);
                    }
                    self.error.set(Some(message));
                    if status == Some(409) {
                        // A reply is being written in this conversation (in another tab, or
                        // by another server): shown as it grows instead.
                        self.streaming.set(false);
                        self.catch_up(generation).await;
                        return;
                    }
                }
                Err(StreamFailure::Interrupted(message)) => self.error.set(Some(message)),
            }
            self.streaming.set(false);
        });
    }

    pub(super) fn spawn_regenerate(self, conversation_id: String) {
        self.streaming.set(true);
        let generation = self.generation.get_value();
        // The replies being replaced leave the list now; the new one streams in after.
        let replaced = self.entries.with_untracked(|entries| {
            let after = entries
                .iter()
                .rposition(|entry| {
                    entry
                        .message
                        .with_untracked(|message| message.role == Some(Role::User))
                })
                .map_or(entries.len(), |index| index + 1);
            entries[after..].to_vec()
        });
        let keys: Vec<u64> = replaced.iter().map(|entry| entry.key).collect();
        self.entries
            .update(|entries| entries.retain(|entry| !keys.contains(&entry.key)));
        leptos::task::spawn_local(async move {
            let request = crate::api::RegenerateRequest::new(conversation_id);
            let outcome = self
                .stream(crate::api::CHAT_URL, &request, generation)
                .await;
            if !self.current(generation) {
                return;
            }
            match outcome {
                Ok(()) => {}
                Err(StreamFailure::Rejected { message, .. }) => {
                    // Refused (a reply still being written, too many at once): the old
                    // replies were not replaced, so they come back as they were.
                    self.entries.update(|entries| entries.extend(replaced));
                    self.error.set(Some(message));
                }
                Err(StreamFailure::Interrupted(message)) => self.error.set(Some(message)),
            }
            self.streaming.set(false);
        });
    }

    pub(super) fn spawn_respond(
        self,
        request: crate::api::ApprovalRequest,
        on_end: impl FnOnce(bool) + 'static,
    ) {
        self.streaming.set(true);
        let generation = self.generation.get_value();
        leptos::task::spawn_local(async move {
            let outcome = self
                .stream(crate::api::APPROVALS_URL, &request, generation)
                .await;
            if !self.current(generation) {
                return;
            }
            let ok = match outcome {
                Ok(()) => true,
                Err(StreamFailure::Rejected { message, status }) => {
                    self.error.set(Some(message));
                    // Already decided (another tab) or gone: show what the server has. Other
                    // refusals (an invalid edit) keep the form as the person left it.
                    if matches!(status, Some(404 | 409)) {
                        self.refresh(generation).await;
                    }
                    false
                }
                Err(StreamFailure::Interrupted(message)) => {
                    self.error.set(Some(message));
                    false
                }
            };
            self.streaming.set(false);
            on_end(ok);
        });
    }

    /// Posts `body` and folds the answer's events into the message they belong to. A
    /// stream cut before the run said how it ended is picked up again (see `reattach`).
    async fn stream(
        self,
        url: &str,
        body: &impl serde::Serialize,
        generation: u64,
    ) -> Result<(), StreamFailure> {
        // Refused (or unreachable) before the answer: nothing of it was accepted.
        let opened = crate::client::post_event_stream(url, body)
            .await
            .map_err(|error| StreamFailure::Rejected {
                message: error.message,
                status: error.status,
            })?;
        let Some(stream) = opened else {
            return Ok(());
        };
        let mut follow = Follow {
            target: None,
            applied: 0,
            run_id: stream.run_id.clone(),
        };
        let end = self.read_into(stream, &mut follow, generation).await;
        match end {
            Ok(crate::client::StreamEnd::Done | crate::client::StreamEnd::Cancelled) => Ok(()),
            // Cut off before `[DONE]`: fine if the run had already said how it ended.
            _ if follow.finished() => Ok(()),
            // The run goes on without us (the server does not stop it): follow it again.
            _ => self.reattach(follow, generation).await,
        }
    }

    /// Reads a run's stream into `follow`: each event is folded into the message it is for
    /// and counted (an unreadable one too: it is one of the run's events all the same).
    async fn read_into(
        self,
        stream: crate::client::EventStream,
        follow: &mut Follow,
        generation: u64,
    ) -> Result<crate::client::StreamEnd, crate::client::ClientError> {
        use std::ops::ControlFlow;

        stream
            .read(|item| {
                if !self.current(generation) {
                    return ControlFlow::Break(());
                }
                follow.applied += 1;
                if let Some(event) = item {
                    self.apply(&mut follow.target, &event);
                }
                ControlFlow::Continue(())
            })
            .await
    }

    /// Picks up the conversation's reply being written after the first `follow.applied`
    /// events of its run (`GET /api/chat/{id}/stream?after=…`) and folds the rest in, trying
    /// again a few times while the connection is down. The reducer appends text, so exactly
    /// the missing events are asked for: never one twice. When no run is going any more
    /// (204), the stored conversation says how the reply ended.
    async fn reattach(self, mut follow: Follow, generation: u64) -> Result<(), StreamFailure> {
        use crate::reattach::{Answer, Next, ReadEnd, Reattach};
        let Some(conversation_id) = self.conversation_id.get_untracked() else {
            return Err(StreamFailure::Interrupted(interrupted()));
        };
        let mut machine = Reattach::new(conversation_id, follow.applied, follow.run_id.clone());
        while let Some(request) = machine.next_request() {
            if request.delay_ms > 0 {
                crate::client::sleep_ms(request.delay_ms).await;
            }
            if !self.current(generation) {
                return Ok(());
            }
            let answer = match crate::client::get_event_stream(&request.url).await {
                Ok(None) => Answer::NoRun,
                Ok(Some(stream)) => {
                    let run_id = stream.run_id.clone();
                    if follow.run_id.is_none() {
                        follow.run_id.clone_from(&run_id);
                    }
                    let before = follow.applied;
                    let end = self.read_into(stream, &mut follow, generation).await;
                    for _ in before..follow.applied {
                        machine.applied_one();
                    }
                    Answer::Read {
                        run_id,
                        end: match end {
                            Ok(crate::client::StreamEnd::Done) => ReadEnd::Done,
                            Ok(crate::client::StreamEnd::Cancelled) => ReadEnd::Cancelled,
                            Ok(crate::client::StreamEnd::Eof) | Err(_) => ReadEnd::Cut,
                        },
                        finished: follow.finished(),
                    }
                }
                Err(error) if error.status.is_some_and(|status| status < 500) => {
                    Answer::Refused(error.message)
                }
                Err(_) => Answer::Unreachable,
            };
            match machine.on_answer(answer) {
                Next::Again => {}
                Next::Refresh => {
                    self.refresh(generation).await;
                    return Ok(());
                }
                Next::Stop => return Ok(()),
                Next::Fail(message) => return Err(StreamFailure::Interrupted(message)),
            }
        }
        Err(StreamFailure::Interrupted(interrupted()))
    }

    /// What the browser does once it shows a conversation the page was given: the address
    /// names the conversation it is, the newest message is in view, and a reply still being
    /// written goes on growing.
    pub fn after_open(self, opened: Opened) {
        if let Some(path) = opened.path {
            crate::browser::replace_url(&path);
        }
        if self.entries.with_untracked(|entries| !entries.is_empty()) {
            crate::browser::scroll_to_page_end();
        }
        if let Some(running) = opened.running {
            self.follow_running(running, self.generation.get_value());
        }
    }

    /// After loading a conversation whose last reply is still being written: shows it
    /// growing from the stored copy on (the "Dừng" button stops it as usual).
    pub(super) fn follow_running(self, running: crate::api::RunningReply, generation: u64) {
        let target = self.entries.with_untracked(|entries| {
            entries
                .iter()
                .find(|entry| {
                    entry
                        .message
                        .with_untracked(|m| m.id == running.message_id && m.status.is_none())
                })
                .map(|entry| entry.message.clone())
        });
        let Some(target) = target else {
            return;
        };
        self.streaming.set(true);
        leptos::task::spawn_local(async move {
            let follow = Follow {
                target: Some(target),
                applied: running.after,
                run_id: running.run_id,
            };
            let outcome = self.reattach(follow, generation).await;
            if !self.current(generation) {
                return;
            }
            if let Err(
                StreamFailure::Interrupted(message) | StreamFailure::Rejected { message, .. },
            ) = outcome
            {
                self.error.set(Some(message));
            }
            self.streaming.set(false);
        });
    }

    /// Folds one event into the message it is for: `start` names it (an existing message
    /// when a paused run resumes, else a new one).
    pub(super) fn apply(&self, target: &mut Option<ArcRwSignal<Message>>, event: &AgentEvent) {
        if let AgentEvent::Start {
            message_id,
            message_metadata,
            ..
        } = event
        {
            if let Some(id) = message_metadata
                .as_ref()
                .and_then(|metadata| metadata.conversation_id.clone())
            {
                if self.conversation_id.get_untracked().as_deref() != Some(id.as_str()) {
                    crate::browser::replace_url(&conversation_path(&id));
                    self.conversation_id.set(Some(id));
                }
            }
            let existing = self.entries.with_untracked(|entries| {
                entries
                    .iter()
                    .find(|entry| entry.message.with_untracked(|m| &m.id == message_id))
                    .map(|entry| entry.message.clone())
            });
            *target = Some(
                existing
                    .unwrap_or_else(|| self.push(Message::assistant(message_id.clone())).message),
            );
        }
        let follow = crate::browser::near_page_end();
        let message =
            target.get_or_insert_with(|| self.push(Message::assistant(String::new())).message);
        message.maybe_update(|message| message.apply(event) == shared::events::Applied::Yes);
        if follow {
            crate::browser::scroll_to_page_end();
        }
    }

    /// Whether some call waits for the person's decision.
    pub(super) fn has_pending_confirmation(&self) -> bool {
        self.entries.with_untracked(|entries| {
            entries.iter().any(|entry| {
                entry.message.with_untracked(|message| {
                    message.parts.iter().any(|part| {
                        matches!(part, MessagePart::Tool(tool) if tool.state_name() == "approval-requested")
                    })
                })
            })
        })
    }

    /// The server's copy of the conversation, and the reply it is writing followed.
    pub(super) async fn catch_up(self, generation: u64) {
        let Some(id) = self.conversation_id.get_untracked() else {
            return;
        };
        let url = crate::api::conversation_url(&id);
        if let Ok(conversation) = crate::client::get_json::<crate::api::Conversation>(&url).await {
            if self.current(generation) {
                self.set_messages(conversation.messages);
                if let Some(running) = conversation.running {
                    self.follow_running(running, generation);
                }
            }
        }
    }

    /// Replaces the messages with the server's copy of the conversation; on failure the
    /// list stays as it is.
    pub(super) async fn refresh(self, generation: u64) {
        let Some(id) = self.conversation_id.get_untracked() else {
            return;
        };
        let url = crate::api::conversation_url(&id);
        match crate::client::get_json::<crate::api::Conversation>(&url).await {
            Ok(conversation) if self.current(generation) => {
                self.assistant.set(conversation.assistant);
                self.set_messages(conversation.messages)
            }
            Ok(_) => {}
            Err(error) => {
                leptos::logging::warn!(
                    "datban: could not refresh the conversation: {}",
                    error.message
                );
            }
        }
    }
}

/// What a page that lost a reply's stream knows about the run writing it.
struct Follow {
    /// The message the run writes, once known (its `start` names it).
    target: Option<ArcRwSignal<Message>>,
    /// How many of the run's events the message holds.
    applied: u64,
    /// The run, as the server named it; asking for it by name means another run's events
    /// are never folded into this message.
    run_id: Option<String>,
}

impl Follow {
    /// Whether the run already said how it ended.
    pub(super) fn finished(&self) -> bool {
        self.target
            .as_ref()
            .and_then(|message| message.try_with_untracked(|m| m.status))
            .flatten()
            .is_some()
    }
}

const INTERRUPTED: (&str, &str) = (
    "Kết nối bị gián đoạn khi trợ lý đang trả lời. Vui lòng thử lại.",
    "The connection broke while the assistant was answering. Please try again.",
);

/// [`INTERRUPTED`] in the page's language.
fn interrupted() -> String {
    crate::i18n::t(INTERRUPTED.0, INTERRUPTED.1).to_owned()
}

enum StreamFailure {
    /// The server refused the request (or could not be reached); nothing of it was kept.
    Rejected {
        message: String,
        status: Option<u16>,
    },
    /// The stream broke after it had started.
    Interrupted(String),
}

//! The chat's state and the actions that change it: sending, answering a confirmation,
//! loading and clearing a conversation.
//!
//! Every message lives in its own signal, so an event re-renders only the message (and,
//! through a memo per part, only the part) it changed. Events are folded in with
//! [`Message::apply`], the same reducer the server uses.

use leptos::prelude::*;
use shared::{
    message::{Message, Role},
    tools::Assistant,
};

#[cfg(feature = "hydrate")]
use shared::{events::AgentEvent, message::MessagePart};

/// One message in the list, with a key that stays the same while its id is unknown.
#[derive(Clone)]
pub struct Entry {
    /// Local key for `<For>`.
    pub key: u64,
    /// The message, updated as events arrive.
    pub message: ArcRwSignal<Message>,
}

/// Everything the chat page and its parts share (provided as context).
#[derive(Clone, Copy)]
pub struct ChatState {
    /// The server's conversation id, once there is one (also in the URL as `?c=`).
    pub conversation_id: RwSignal<Option<String>>,
    /// The assistant: chosen in the picker before the conversation exists, then the one
    /// the server fixed for it.
    pub assistant: RwSignal<Assistant>,
    /// The messages, oldest first.
    pub entries: RwSignal<Vec<Entry>>,
    /// What is in the message box.
    pub draft: RwSignal<String>,
    /// A reply is streaming.
    pub streaming: RwSignal<bool>,
    /// A conversation is loading.
    pub loading: RwSignal<bool>,
    /// The notice under the message box.
    pub error: RwSignal<Option<String>>,
    /// Bumped when the conversation is cleared, so streams of the old one stop.
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    generation: StoredValue<u64>,
    next_key: StoredValue<u64>,
}

impl ChatState {
    /// An empty chat.
    pub fn new() -> Self {
        Self {
            conversation_id: RwSignal::new(None),
            assistant: RwSignal::new(Assistant::default()),
            entries: RwSignal::new(Vec::new()),
            draft: RwSignal::new(String::new()),
            streaming: RwSignal::new(false),
            loading: RwSignal::new(false),
            error: RwSignal::new(None),
            generation: StoredValue::new(0),
            next_key: StoredValue::new(0),
        }
    }

    /// Whether a request is under way (sending and confirming wait for it); tracked.
    pub fn busy(&self) -> bool {
        self.streaming.get() || self.loading.get()
    }

    fn busy_untracked(&self) -> bool {
        self.streaming.get_untracked() || self.loading.get_untracked()
    }

    fn entry(&self, message: Message) -> Entry {
        let key = self.next_key.get_value();
        self.next_key.set_value(key + 1);
        Entry {
            key,
            message: ArcRwSignal::new(message),
        }
    }

    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    fn push(&self, message: Message) -> Entry {
        let entry = self.entry(message);
        self.entries.update(|entries| entries.push(entry.clone()));
        entry
    }

    /// Sends the text in the message box. Returns whether a request started.
    pub fn send(&self) -> bool {
        let text = self.draft.get_untracked().trim().to_owned();
        if text.is_empty() || self.busy_untracked() {
            return false;
        }
        self.draft.set(String::new());
        self.send_text(text)
    }

    /// Sends the person's last message again, as a new message: what "Thử lại" on a
    /// failed call does. Returns whether a request started.
    pub fn retry_last(&self) -> bool {
        match self.last_user_text() {
            Some(text) if !self.busy_untracked() => self.send_text(text),
            _ => false,
        }
    }

    /// Whether there is a message of the person's to send again; tracked.
    pub fn can_retry(&self) -> bool {
        !self.busy()
            && self.entries.with(|entries| {
                // A message's role never changes: only the list needs tracking.
                entries.iter().any(|entry| {
                    entry
                        .message
                        .with_untracked(|message| message.role == Some(Role::User))
                })
            })
    }

    /// Whether `message_id` is the newest message; tracked. A retry re-sends the last
    /// message, which only answers the failure of the newest reply.
    pub fn is_latest(&self, message_id: &str) -> bool {
        self.entries.with(|entries| {
            entries
                .last()
                .is_some_and(|entry| entry.message.with(|message| message.id == message_id))
        })
    }

    /// Whether the newest reply can be written again: there is one, after a message of the
    /// person's, and nothing is under way; tracked.
    pub fn can_regenerate(&self) -> bool {
        !self.busy()
            && self.conversation_id.with(Option::is_some)
            && self.entries.with(|entries| {
                let last_is_reply = entries.last().is_some_and(|entry| {
                    entry
                        .message
                        .with_untracked(|message| message.role != Some(Role::User))
                });
                last_is_reply
                    && entries.iter().any(|entry| {
                        entry
                            .message
                            .with_untracked(|message| message.role == Some(Role::User))
                    })
            })
    }

    /// Writes the newest reply again ("Tạo lại"): the replies after the person's last
    /// message give way to a new one. What they already did stays done (a booking made is
    /// kept, not made again); a confirmation they asked for is asked anew. Returns whether
    /// a request started.
    pub fn regenerate(&self) -> bool {
        if self.busy_untracked() {
            return false;
        }
        let Some(conversation_id) = self.conversation_id.get_untracked() else {
            return false;
        };
        self.error.set(None);
        #[cfg(feature = "hydrate")]
        self.spawn_regenerate(conversation_id);
        #[cfg(not(feature = "hydrate"))]
        let _ = conversation_id;
        true
    }

    fn last_user_text(&self) -> Option<String> {
        self.entries.with_untracked(|entries| {
            entries.iter().rev().find_map(|entry| {
                entry.message.with_untracked(|message| {
                    (message.role == Some(Role::User))
                        .then(|| message.text().trim().to_owned())
                        .filter(|text| !text.is_empty())
                })
            })
        })
    }

    /// The one path every message takes to the server: the box's text and retries alike.
    fn send_text(&self, text: String) -> bool {
        if text.is_empty() || self.busy_untracked() {
            return false;
        }
        self.error.set(None);
        #[cfg(feature = "hydrate")]
        self.spawn_send(text);
        #[cfg(not(feature = "hydrate"))]
        let _ = text;
        true
    }

    /// Looks for the tool part with call id `call_id` anywhere in the conversation and
    /// reads it with `read`; untracked, for forms that show what an earlier call returned.
    pub fn find_tool<T>(
        &self,
        mut read: impl FnMut(&shared::message::ToolPart) -> Option<T>,
    ) -> Option<T> {
        self.entries.with_untracked(|entries| {
            entries.iter().rev().find_map(|entry| {
                entry.message.with_untracked(|message| {
                    message.parts.iter().rev().find_map(|part| match part {
                        shared::message::MessagePart::Tool(tool) => read(tool),
                        _ => None,
                    })
                })
            })
        })
    }

    /// Takes up again the confirmation of call `call_id`, closed when the person wrote
    /// something else: the server checks it again and stores a new confirmation, which
    /// appears once the conversation is read again. Returns whether a request started.
    pub fn reopen(&self, call_id: String) -> bool {
        if self.busy_untracked() {
            return false;
        }
        let Some(conversation_id) = self.conversation_id.get_untracked() else {
            return false;
        };
        self.error.set(None);
        #[cfg(feature = "hydrate")]
        {
            let chat = *self;
            chat.streaming.set(true);
            let generation = chat.generation.get_value();
            leptos::task::spawn_local(async move {
                let body = crate::api::ReopenRequest {
                    conversation_id,
                    tool_call_id: call_id,
                };
                let body = serde_json::to_string(&body).unwrap_or_default();
                let answer = crate::client::send_json::<serde_json::Value>(
                    gloo_net::http::Method::POST,
                    crate::api::REOPEN_URL,
                    Some(&body),
                )
                .await;
                if chat.current(generation) {
                    if let Err(failure) = answer {
                        chat.error.set(Some(failure.message));
                    }
                    chat.refresh(generation).await;
                }
                chat.streaming.set(false);
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (conversation_id, call_id);
        true
    }

    /// Answers the confirmation of call `call_id`. `on_end` runs once the request is over
    /// (with `true` when it streamed to the end). Returns whether a request started.
    pub fn respond(
        &self,
        call_id: String,
        approved: bool,
        edited_input: Option<serde_json::Value>,
        on_end: impl FnOnce(bool) + 'static,
    ) -> bool {
        if self.busy_untracked() {
            return false;
        }
        let Some(conversation_id) = self.conversation_id.get_untracked() else {
            self.error.set(Some(
                crate::i18n::t(
                    "Không tìm thấy cuộc trò chuyện của yêu cầu này.",
                    "The conversation of this request cannot be found.",
                )
                .to_owned(),
            ));
            return false;
        };
        self.error.set(None);
        #[cfg(feature = "hydrate")]
        self.spawn_respond(
            crate::api::ApprovalRequest {
                conversation_id,
                tool_call_id: call_id,
                approved,
                edited_input,
            },
            on_end,
        );
        #[cfg(not(feature = "hydrate"))]
        let _ = (conversation_id, call_id, approved, edited_input, on_end);
        true
    }

    /// Asks the server to stop the reply in progress. The stream then ends with the
    /// reply marked stopped, which is what the page shows.
    pub fn stop(&self) {
        let Some(id) = self.conversation_id.get_untracked() else {
            return;
        };
        #[cfg(feature = "hydrate")]
        {
            let error = self.error;
            leptos::task::spawn_local(async move {
                if let Err(failure) = crate::client::post_command(&crate::api::stop_url(&id)).await
                {
                    error.set(Some(failure.message));
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = id;
    }

    /// Forgets the conversation: empty list, no id, `/` as the URL.
    pub fn new_conversation(&self) {
        self.generation.update_value(|generation| *generation += 1);
        self.entries.set(Vec::new());
        self.conversation_id.set(None);
        self.streaming.set(false);
        self.loading.set(false);
        self.error.set(None);
        #[cfg(feature = "hydrate")]
        crate::browser::replace_url("/");
    }

    /// Shows conversation `requested` as the page was given it (`fetched`, see
    /// `crate::page_data`): its messages, or why it could not be read. The same on the
    /// server and in the hydrating browser; what only the browser does is left in the
    /// answer, for [`ChatState::after_open`].
    pub fn open(&self, requested: String, fetched: crate::page_data::Fetched) -> Opened {
        match crate::page_data::parse::<crate::api::Conversation>(fetched) {
            Ok(conversation) => {
                self.assistant.set(conversation.assistant);
                self.set_messages(conversation.messages);
                let path =
                    (conversation.id != requested).then(|| conversation_path(&conversation.id));
                self.conversation_id.set(Some(conversation.id));
                Opened {
                    path,
                    running: conversation.running,
                }
            }
            Err((status, message)) => {
                // Not ours or gone: start afresh rather than post into it.
                let gone = status == Some(404);
                self.conversation_id.set((!gone).then_some(requested));
                self.error.set(Some(format!(
                    "{}{message}",
                    crate::i18n::t(
                        "Không tải được cuộc trò chuyện: ",
                        "Could not load the conversation: "
                    )
                )));
                Opened {
                    path: gone.then(|| "/".to_owned()),
                    running: None,
                }
            }
        }
    }

    /// Replaces the list with `messages`.
    fn set_messages(&self, messages: Vec<Message>) {
        let entries = messages
            .into_iter()
            .map(|message| self.entry(message))
            .collect();
        self.entries.set(entries);
    }
}

impl Default for ChatState {
    fn default() -> Self {
        Self::new()
    }
}

/// The browser half: requests and streams.
#[cfg(feature = "hydrate")]
impl ChatState {
    fn current(&self, generation: u64) -> bool {
        self.generation.try_get_value() == Some(generation)
    }

    fn spawn_send(self, text: String) {
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

    fn spawn_regenerate(self, conversation_id: String) {
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

    fn spawn_respond(
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
    fn follow_running(self, running: crate::api::RunningReply, generation: u64) {
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
    fn apply(&self, target: &mut Option<ArcRwSignal<Message>>, event: &AgentEvent) {
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
    fn has_pending_confirmation(&self) -> bool {
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
    async fn catch_up(self, generation: u64) {
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
    async fn refresh(self, generation: u64) {
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
#[cfg(feature = "hydrate")]
struct Follow {
    /// The message the run writes, once known (its `start` names it).
    target: Option<ArcRwSignal<Message>>,
    /// How many of the run's events the message holds.
    applied: u64,
    /// The run, as the server named it; asking for it by name means another run's events
    /// are never folded into this message.
    run_id: Option<String>,
}

#[cfg(feature = "hydrate")]
impl Follow {
    /// Whether the run already said how it ended.
    fn finished(&self) -> bool {
        self.target
            .as_ref()
            .and_then(|message| message.try_with_untracked(|m| m.status))
            .flatten()
            .is_some()
    }
}

#[cfg(feature = "hydrate")]
const INTERRUPTED: (&str, &str) = (
    "Kết nối bị gián đoạn khi trợ lý đang trả lời. Vui lòng thử lại.",
    "The connection broke while the assistant was answering. Please try again.",
);

/// [`INTERRUPTED`] in the page's language.
#[cfg(feature = "hydrate")]
fn interrupted() -> String {
    crate::i18n::t(INTERRUPTED.0, INTERRUPTED.1).to_owned()
}

#[cfg(feature = "hydrate")]
enum StreamFailure {
    /// The server refused the request (or could not be reached); nothing of it was kept.
    Rejected {
        message: String,
        status: Option<u16>,
    },
    /// The stream broke after it had started.
    Interrupted(String),
}

/// What is left to do in the browser after [`ChatState::open`].
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub struct Opened {
    /// The address to show instead of the one asked for (`/` for a conversation that is
    /// not there).
    path: Option<String>,
    /// The reply still being written, to follow.
    running: Option<crate::api::RunningReply>,
}

/// `/?c=<id>`.
pub fn conversation_path(id: &str) -> String {
    format!("/?c={}", crate::api::encode_component(id))
}

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

#[cfg(feature = "hydrate")]
mod browser;

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

//! The chat page: the conversation so far and the message box.

use leptos::prelude::*;
use shared::message::{Message, Role, RunStatus};

use crate::{parts::render_part, state::ChatState};

/// Longest message the box accepts; the server enforces its own limit too.
const MAX_MESSAGE_CHARS: usize = 4000;

/// The chat page at `/`.
#[component]
pub fn ChatPage() -> impl IntoView {
    let chat = ChatState::new();
    provide_context(chat);
    let draft = chat.draft;

    // Set only in the browser once the page is interactive, so tests and styles can
    // tell a hydrated page from the server-rendered one.
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| {
        set_hydrated.set(true);
        // A conversation named in the URL is loaded in the browser (the server renders
        // the empty page), so a reload shows it again, pending confirmations included.
        #[cfg(feature = "hydrate")]
        untrack(|| {
            if let Some(id) = crate::client::query_param("c") {
                chat.load(id);
            }
        });
    });

    let can_send = move || draft.with(|text| text_fits(text)) && !chat.busy();
    let send = move || {
        if draft.with_untracked(|text| text_fits(text)) {
            chat.send();
        }
    };
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        send();
    };
    // Enter sends, Shift+Enter starts a new line; never while an input method composes.
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            ev.prevent_default();
            send();
        }
    };

    let has_messages = move || chat.entries.with(|entries| !entries.is_empty());

    view! {
        <main
            class="chat"
            data-hydrated=move || hydrated.get().to_string()
            data-streaming=move || chat.streaming.get().to_string()
        >
            <header class="chat-header">
                <div class="chat-header-row">
                    <h1>"Đặt bàn cùng trợ lý"</h1>
                    <button
                        type="button"
                        class="new-conversation"
                        on:click=move |_| chat.new_conversation()
                    >
                        "Cuộc trò chuyện mới"
                    </button>
                </div>
                <p class="tagline">
                    "Hỏi thời tiết, tìm nhà hàng và đặt bàn — mọi thao tác đều cần bạn xác nhận."
                </p>
            </header>
            <section class="messages" aria-label="Cuộc trò chuyện" aria-live="polite">
                <Show
                    when=move || has_messages() || chat.loading.get()
                    fallback=|| view! {
                        <p class="empty-state">
                            "Chưa có tin nhắn nào. Hãy thử: “Đặt bàn cho 4 người ở Hà Nội tối mai lúc 19:00”."
                        </p>
                    }
                >
                    <ol class="message-list">
                        <For
                            each=move || chat.entries.get()
                            key=|entry| entry.key
                            children=|entry| view! { <MessageView message=entry.message/> }
                        />
                    </ol>
                </Show>
                <Show when=move || chat.loading.get()>
                    <p class="loading-note" role="status">"Đang tải cuộc trò chuyện…"</p>
                </Show>
                <Show when=move || chat.streaming.get()>
                    <div class="typing" role="status">
                        <span class="visually-hidden">"Trợ lý đang trả lời…"</span>
                        <span class="typing-dot" aria-hidden="true"></span>
                        <span class="typing-dot" aria-hidden="true"></span>
                        <span class="typing-dot" aria-hidden="true"></span>
                    </div>
                </Show>
            </section>
            <form class="composer" on:submit=on_submit>
                <label class="visually-hidden" for="message">"Tin nhắn"</label>
                <textarea
                    id="message"
                    name="message"
                    rows="2"
                    placeholder="Nhập tin nhắn…"
                    maxlength=MAX_MESSAGE_CHARS.to_string()
                    prop:value=move || draft.get()
                    on:input:target=move |ev| draft.set(ev.target().value())
                    on:keydown=on_keydown
                ></textarea>
                <Show when=move || chat.streaming.get()>
                    <button
                        type="button"
                        class="stop"
                        on:click=move |_| chat.stop()
                    >
                        "Dừng"
                    </button>
                </Show>
                <button type="submit" disabled=move || !can_send()>"Gửi"</button>
            </form>
            {move || chat.error.get().map(|message| view! {
                <p class="notice notice-error composer-error" role="alert">{message}</p>
            })}
        </main>
    }
}

fn text_fits(text: &str) -> bool {
    let trimmed = text.trim();
    !trimmed.is_empty() && trimmed.chars().count() <= MAX_MESSAGE_CHARS
}

/// One message: a bubble for the person's, the parts in order for the assistant's.
#[component]
fn MessageView(message: ArcRwSignal<Message>) -> impl IntoView {
    let message = RwSignal::from(message);
    let (id, role) = message.with_untracked(|m| (m.id.clone(), m.role));
    match role {
        Some(Role::User) => view! {
            <li class="message user" data-message-id=id>
                {move || message.with(Message::text)}
            </li>
        }
        .into_any(),
        Some(Role::Assistant) | None => view! {
            <li class="message assistant" data-message-id=move || message.with(|m| m.id.clone())>
                <For
                    each=move || 0..message.with(|m| m.parts.len())
                    key=|index| *index
                    children=move |index| view! { <PartView message index/> }
                />
                {move || message.with(|m| m.status).and_then(status_notice)}
            </li>
        }
        .into_any(),
    }
}

/// Part `index` of a message. The memo re-renders it only when this part changed, so a
/// confirmation form keeps its edits while other parts stream.
#[component]
fn PartView(message: RwSignal<Message>, index: usize) -> impl IntoView {
    let part = Memo::new(move |_| message.with(|m| m.parts.get(index).cloned()));
    move || part.get().map(render_part)
}

/// The notice under an assistant message saying how its run ended.
fn status_notice(status: RunStatus) -> Option<AnyView> {
    let (key, text, tone) = match status {
        RunStatus::Completed => return None,
        RunStatus::AwaitingApproval => {
            ("awaiting-approval", "Đang chờ bạn xác nhận.", "notice-info")
        }
        RunStatus::StepLimit => (
            "step-limit",
            "Trợ lý dừng lại vì đã dùng quá nhiều bước. Kết quả có thể chưa đầy đủ.",
            "notice-warning",
        ),
        RunStatus::TooManyToolErrors => (
            "too-many-tool-errors",
            "Trợ lý dừng lại vì công cụ lỗi quá nhiều lần.",
            "notice-warning",
        ),
        RunStatus::Stopped => ("stopped", "Đã dừng.", "notice-muted"),
        RunStatus::Error => (
            "error",
            "Có lỗi khi tạo câu trả lời. Vui lòng thử lại.",
            "notice-error",
        ),
    };
    Some(
        view! {
            <p class=format!("notice run-status {tone}") data-status=key role="status">
                {text}
            </p>
        }
        .into_any(),
    )
}

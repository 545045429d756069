//! The chat page: the conversation so far and the message box.

use leptos::prelude::*;

/// Longest message the box accepts; the server enforces its own limit too.
const MAX_MESSAGE_CHARS: usize = 4000;

/// The chat page at `/`.
#[component]
pub fn ChatPage() -> impl IntoView {
    let (draft, set_draft) = signal(String::new());
    let (sent, set_sent) = signal(Vec::<String>::new());
    // Set only in the browser once the page is interactive, so tests and styles can
    // tell a hydrated page from the server-rendered one.
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| set_hydrated.set(true));

    let can_send = move || {
        let text = draft.get();
        let trimmed = text.trim();
        !trimmed.is_empty() && trimmed.chars().count() <= MAX_MESSAGE_CHARS
    };

    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if !can_send() {
            return;
        }
        let text = draft.get_untracked().trim().to_owned();
        set_sent.update(|messages| messages.push(text));
        set_draft.set(String::new());
    };

    view! {
        <main class="chat" data-hydrated=move || hydrated.get().to_string()>
            <header class="chat-header">
                <h1>"Đặt bàn cùng trợ lý"</h1>
                <p class="tagline">
                    "Hỏi thời tiết, tìm nhà hàng và đặt bàn — mọi thao tác đều cần bạn xác nhận."
                </p>
            </header>
            <section class="messages" aria-label="Cuộc trò chuyện" aria-live="polite">
                <Show
                    when=move || !sent.get().is_empty()
                    fallback=|| view! {
                        <p class="empty-state">
                            "Chưa có tin nhắn nào. Hãy thử: “Đặt bàn cho 4 người ở Hà Nội tối mai lúc 19:00”."
                        </p>
                    }
                >
                    <ol class="message-list">
                        <For
                            each=move || sent.get().into_iter().enumerate()
                            key=|(index, _)| *index
                            children=|(_, text)| view! { <li class="message user">{text}</li> }
                        />
                    </ol>
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
                    prop:value=draft
                    on:input:target=move |ev| set_draft.set(ev.target().value())
                ></textarea>
                <button type="submit" disabled=move || !can_send()>"Gửi"</button>
            </form>
        </main>
    }
}

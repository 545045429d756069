//! The chat page: the conversation so far and the message box.

use leptos::{either::Either, prelude::*};
use shared::{
    message::{Message, Role, RunStatus},
    tools::Assistant,
};

use crate::view::{IntoPartView, PartView};
use crate::{
    i18n::{lang, t, Lang, LangSwitch},
    labels,
    page_data::{self, PageQuery},
    parts::{render_part, PartScope},
    state::ChatState,
};

/// Longest message the box accepts; the server enforces its own limit too.
const MAX_MESSAGE_CHARS: usize = 4000;

/// The chat page at `/`; `?c=<id>` shows a stored conversation, rendered by the server
/// with its messages (see `crate::page_data`).
#[component]
pub fn ChatPage() -> impl IntoView {
    // The request's address on the server, the address bar in the browser: the same
    // when the page hydrates, so both render the same page.
    let address = crate::route::Address::current();
    // `?a=gifts` preselects an assistant.
    let preselected = address.param("a").and_then(|name| Assistant::parse(&name));
    let requested = address.param("c");
    // `Either`, not `AnyView`: an `AnyView` would carry hydration code for the whole page
    // twice (sync and async) in the hydrate bundle.
    let Some(id) = requested else {
        return Either::Left(view! { <ChatBody preselected loaded=None/> });
    };
    let data = page_data::fetch(PageQuery::Conversation(id.clone()));
    Either::Right(view! {
        <Suspense fallback=|| view! {
            <main class="chat">
                <p class="loading-note" role="status">
                    {t("Đang tải cuộc trò chuyện…", "Loading the conversation…")}
                </p>
            </main>
        }>
            {move || {
                let id = id.clone();
                Suspend::new(async move {
                    let fetched = data.await;
                    view! { <ChatBody preselected loaded=Some((id, fetched))/> }
                })
            }}
        </Suspense>
    })
}

/// The page itself, with the conversation `loaded` (the id asked for and what the server
/// answered) or a new one.
#[component]
fn ChatBody(
    preselected: Option<Assistant>,
    loaded: Option<(String, page_data::Fetched)>,
) -> impl IntoView {
    let chat = ChatState::new();
    provide_context(chat);
    let draft = chat.draft;
    if let Some(assistant) = preselected {
        chat.assistant.set(assistant);
    }
    // The same state on the server and in the hydrating browser: the same page.
    let opened = loaded.map(|(id, fetched)| chat.open(id, fetched));

    // Set only in the browser once the page is interactive, so tests and styles can
    // tell a hydrated page from the server-rendered one.
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| {
        set_hydrated.set(true);
        // The tool parts' code comes after the page works; most replies need it soon.
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async {
            // A failure is shown where a part needs the code, and retried there.
            let _ = crate::parts::preload_restaurant_parts().await;
        });
        // What only the browser does with a conversation it was given: fix the address
        // and follow a reply still being written.
        #[cfg(feature = "hydrate")]
        if let Some(opened) = opened.clone() {
            untrack(|| chat.after_open(opened));
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = &opened;
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
    // The assistant is fixed once the conversation exists; until then the person picks.
    let picking = move || {
        chat.conversation_id.with(Option::is_none) && !has_messages() && !chat.loading.get()
    };
    let copy = move || AssistantCopy::of(lang(), chat.assistant.get());

    view! {
        <main
            class="chat"
            data-hydrated=move || hydrated.get().to_string()
            data-streaming=move || chat.streaming.get().to_string()
        >
            <header class="chat-header">
                <div class="chat-header-row">
                    <h1>{t("Đặt bàn cùng trợ lý", "Book a table with an assistant")}</h1>
                    <nav class="header-links" aria-label=t("Trang", "Pages")>
                        <a class="header-link" href="/bookings">{t("Đặt chỗ của tôi", "My bookings")}</a>
                        <button
                            type="button"
                            class="new-conversation"
                            on:click=move |_| chat.new_conversation()
                        >
                            {t("Cuộc trò chuyện mới", "New conversation")}
                        </button>
                    </nav>
                    <LangSwitch/>
                </div>
                <Show
                    when=picking
                    fallback=move || {
                        // While a conversation loads its assistant is not known yet.
                        move || (!chat.loading.get()).then(|| view! {
                            <p
                                class="assistant-current"
                                data-assistant=move || chat.assistant.get().as_str()
                            >
                                {t("Trợ lý: ", "Assistant: ")}
                                <strong>{move || labels::assistant(lang(), chat.assistant.get())}</strong>
                            </p>
                        })
                    }
                >
                    <AssistantPicker chat/>
                </Show>
                <p class="tagline">{move || copy().tagline}</p>
            </header>
            <section class="messages" aria-label=t("Cuộc trò chuyện", "Conversation") aria-live="polite">
                <Show
                    when=move || has_messages() || chat.loading.get()
                    fallback=move || view! {
                        <p class="empty-state">
                            {t("Chưa có tin nhắn nào. Hãy thử: “", "No messages yet. Try: “")}
                            {move || copy().example}
                            "”."
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
                <Show when=move || chat.can_regenerate()>
                    <div class="reply-actions">
                        <button
                            type="button"
                            class="regenerate"
                            title=t(
                                "Viết lại câu trả lời cuối; việc đã làm (như bàn đã đặt) vẫn giữ nguyên",
                                "Write the last reply again; what was already done (a table booked) stays done",
                            )
                            on:click=move |_| { chat.regenerate(); }
                        >
                            {t("Tạo lại", "Regenerate")}
                        </button>
                    </div>
                </Show>
                <Show when=move || chat.loading.get()>
                    <p class="loading-note" role="status">
                        {t("Đang tải cuộc trò chuyện…", "Loading the conversation…")}
                    </p>
                </Show>
                <Show when=move || chat.streaming.get()>
                    <div class="typing" role="status">
                        <span class="visually-hidden">
                            {t("Trợ lý đang trả lời…", "The assistant is answering…")}
                        </span>
                        <span class="typing-dot" aria-hidden="true"></span>
                        <span class="typing-dot" aria-hidden="true"></span>
                        <span class="typing-dot" aria-hidden="true"></span>
                    </div>
                </Show>
            </section>
            <form class="composer" on:submit=on_submit>
                <label class="visually-hidden" for="message">{t("Tin nhắn", "Message")}</label>
                <textarea
                    id="message"
                    name="message"
                    rows="2"
                    placeholder=move || copy().placeholder
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
                        {t("Dừng", "Stop")}
                    </button>
                </Show>
                <button type="submit" disabled=move || !can_send()>{t("Gửi", "Send")}</button>
            </form>
            {move || chat.error.get().map(|message| view! {
                <p class="notice notice-error composer-error" role="alert">{message}</p>
            })}
        </main>
    }
}

/// The choice of assistant before the first message; restaurant unless `?a=` said else.
#[component]
fn AssistantPicker(chat: ChatState) -> impl IntoView {
    // The server renders the choice as an attribute; the browser keeps the live property
    // in step, since a checked attribute stops mattering once the person clicks.
    let initial = chat.assistant.get_untracked();
    view! {
        <fieldset class="assistant-picker">
            <legend>{t("Chọn trợ lý", "Choose an assistant")}</legend>
            {Assistant::ALL
                .into_iter()
                .map(|assistant| {
                    view! {
                        <label class="assistant-option" data-assistant=assistant.as_str()>
                            <input
                                type="radio"
                                name="assistant"
                                value=assistant.as_str()
                                checked=assistant == initial
                                prop:checked=move || chat.assistant.get() == assistant
                                on:change=move |_| chat.assistant.set(assistant)
                            />
                            <span>{labels::assistant(lang(), assistant)}</span>
                        </label>
                    }
                })
                .collect_view()}
        </fieldset>
    }
}

/// The words of the page that depend on the assistant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AssistantCopy {
    tagline: &'static str,
    placeholder: &'static str,
    example: &'static str,
}

impl AssistantCopy {
    fn of(lang: Lang, assistant: Assistant) -> Self {
        match (assistant, lang) {
            (Assistant::Restaurant, Lang::Vi) => Self {
                tagline: "Hỏi thời tiết, tìm nhà hàng và đặt bàn — mọi thao tác đều cần bạn xác nhận.",
                placeholder: "Hỏi thời tiết, tìm nhà hàng hoặc đặt bàn…",
                example: "Đặt bàn cho 4 người ở Hà Nội tối mai lúc 19:00",
            },
            (Assistant::Restaurant, Lang::En) => Self {
                tagline: "Ask about the weather, find restaurants and book a table — nothing is done without your confirmation.",
                placeholder: "Ask about the weather, find a restaurant or book a table…",
                example: "Book a table for 4 in Hanoi tomorrow at 19:00",
            },
            (Assistant::Gifts, Lang::Vi) => Self {
                tagline: "Gợi ý quà theo người nhận, sở thích và ngân sách. Thanh toán chỉ là giả lập và luôn cần bạn xác nhận.",
                placeholder: "Quà cho ai, họ thích gì, ngân sách bao nhiêu?…",
                example: "Gợi ý quà cho mẹ thích làm vườn dưới 1 triệu",
            },
            (Assistant::Gifts, Lang::En) => Self {
                tagline: "Gift ideas by recipient, interests and budget. Payment is only simulated and always needs your confirmation.",
                placeholder: "Who is it for, what do they like, what is the budget?…",
                example: "Gift ideas for my mother who loves gardening under 1,000,000 VND",
            },
            (Assistant::Shipping, Lang::Vi) => Self {
                tagline: "Báo giá giao hàng bằng công thức minh hoạ — đơn vị DEMO không phải tiền thật.",
                placeholder: "Nội thành hay liên tỉnh, nặng bao nhiêu kg?…",
                example: "Báo giá giao hàng nội thành 2 kg",
            },
            (Assistant::Shipping, Lang::En) => Self {
                tagline: "Shipping quotes from an illustrative formula — DEMO is not real money.",
                placeholder: "Local or regional, and how many kg?…",
                example: "Shipping quote for a local 2 kg parcel",
            },
        }
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
        .into_part_view(),
        Some(Role::Assistant) | None => view! {
            <li class="message assistant" data-message-id=move || message.with(|m| m.id.clone())>
                <For
                    each=move || 0..message.with(|m| m.parts.len())
                    key=|index| *index
                    children=move |index| view! { <PartAt message index/> }
                />
                {move || message.with(|m| m.status).and_then(status_notice)}
            </li>
        }
        .into_part_view(),
    }
}

/// Part `index` of a message. The memo re-renders it only when this part changed, so a
/// confirmation form keeps its edits while other parts stream.
#[component]
fn PartAt(message: RwSignal<Message>, index: usize) -> impl IntoView {
    // Each part has its own owner (a row of `<For>`), so this reaches only its own views.
    provide_context(PartScope {
        message_id: Signal::derive(move || message.with(|m| m.id.clone())),
    });
    let part = Memo::new(move |_| message.with(|m| m.parts.get(index).cloned()));
    move || part.get().map(render_part)
}

/// What the notice of a run's end says: its key, its sentence and its tone; nothing for a
/// run that simply completed.
fn status_text(
    lang: Lang,
    status: RunStatus,
) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match status {
        RunStatus::Completed => return None,
        RunStatus::AwaitingApproval => (
            "awaiting-approval",
            lang.pick("Đang chờ bạn xác nhận.", "Waiting for your confirmation."),
            "notice-info",
        ),
        RunStatus::StepLimit => (
            "step-limit",
            lang.pick(
                "Trợ lý dừng lại vì đã dùng quá nhiều bước. Kết quả có thể chưa đầy đủ.",
                "The assistant stopped because it took too many steps. The answer may be incomplete.",
            ),
            "notice-warning",
        ),
        RunStatus::TooManyToolErrors => (
            "too-many-tool-errors",
            lang.pick(
                "Trợ lý dừng lại vì công cụ lỗi quá nhiều lần.",
                "The assistant stopped because its tools failed too many times.",
            ),
            "notice-warning",
        ),
        RunStatus::Stopped => ("stopped", lang.pick("Đã dừng.", "Stopped."), "notice-muted"),
        RunStatus::Error => (
            "error",
            lang.pick(
                "Có lỗi khi tạo câu trả lời. Vui lòng thử lại.",
                "Something went wrong while writing the answer. Please try again.",
            ),
            "notice-error",
        ),
        RunStatus::Interrupted => (
            "interrupted",
            lang.pick(
                "Câu trả lời bị gián đoạn vì máy chủ dừng giữa chừng. Bấm “Tạo lại” để thử lại; \
                 các xác nhận đang chờ vẫn trả lời được.",
                "The reply was interrupted: the server stopped partway. Press “Regenerate” to \
                 try again; any confirmation still waiting can still be answered.",
            ),
            "notice-warning",
        ),
    })
}

/// The notice under an assistant message saying how its run ended.
fn status_notice(status: RunStatus) -> Option<PartView> {
    let (key, text, tone) = status_text(lang(), status)?;
    Some(
        view! {
            <p class=format!("notice run-status {tone}") data-status=key role="status">
                {text}
            </p>
        }
        .into_part_view(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Letters only Vietnamese writes: English copy has none.
    fn has_vietnamese_letters(text: &str) -> bool {
        text.chars().any(|c| {
            "àáảãạăằắẳẵặâầấẩẫậèéẻẽẹêềếểễệìíỉĩịòóỏõọôồốổỗộơờớởỡợùúủũụưừứửữựỳýỷỹỵđ"
                .contains(c.to_lowercase().next().unwrap_or(c))
        })
    }

    #[test]
    fn every_run_end_is_said_in_both_languages() {
        let statuses = [
            RunStatus::AwaitingApproval,
            RunStatus::StepLimit,
            RunStatus::TooManyToolErrors,
            RunStatus::Stopped,
            RunStatus::Error,
            RunStatus::Interrupted,
        ];
        for status in statuses {
            let vi = status_text(Lang::Vi, status);
            let en = status_text(Lang::En, status);
            let ((key, vi, tone), (same_key, en, same_tone)) = (vi.unwrap(), en.unwrap());
            assert_eq!((key, tone), (same_key, same_tone));
            assert_ne!(vi, en, "{key}");
            assert!(has_vietnamese_letters(vi), "{key}: {vi}");
            assert!(!has_vietnamese_letters(en), "{key}: {en}");
        }
        assert_eq!(status_text(Lang::En, RunStatus::Completed), None);
    }

    #[test]
    fn every_assistant_has_its_copy_in_both_languages() {
        for assistant in Assistant::ALL {
            let vi = AssistantCopy::of(Lang::Vi, assistant);
            let en = AssistantCopy::of(Lang::En, assistant);
            for (vi, en) in [
                (vi.tagline, en.tagline),
                (vi.placeholder, en.placeholder),
                (vi.example, en.example),
            ] {
                assert_ne!(vi, en);
                assert!(!has_vietnamese_letters(en), "{en}");
            }
        }
    }
}

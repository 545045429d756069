//! What every confirmation form shares: one decision per form, posted to `/api/approvals`
//! through [`ChatState::respond`], and locked from the first click.

use std::cell::RefCell;

use leptos::prelude::*;
use serde_json::Value;

use crate::state::ChatState;
use crate::view::{IntoPartView, PartView};

thread_local! {
    /// The call this page just decided: its result takes the focus when it appears, and
    /// only then (a reloaded conversation's old results leave focus where it is).
    static JUST_DECIDED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A call's result after a decision, focusable, taking the focus when it is the result of
/// the decision this page just sent: the form the person was in is gone, and keyboard and
/// screen reader users land on what happened.
pub(crate) fn decision_result(call_id: String, body: PartView) -> PartView {
    let node = NodeRef::<leptos::html::Div>::new();
    Effect::new(move |_| {
        let Some(element) = node.get() else { return };
        let mine = JUST_DECIDED.with(|decided| decided.borrow().as_deref() == Some(&call_id));
        if mine {
            JUST_DECIDED.with(|decided| decided.borrow_mut().take());
            let _ = element.focus();
        }
    });
    view! { <div class="decision-result" tabindex="-1" node_ref=node>{body}</div> }.into_part_view()
}

/// A confirmation the person left open by writing something else: said as what happened
/// (not done, nobody declined), with a way to go ahead still — the server checks the call
/// again against its data and asks for a fresh confirmation (`POST /api/calls/reopen`).
pub(crate) fn moved_on(
    call_id: String,
    error: shared::tools::ToolError,
    title: &'static str,
    go_ahead: &'static str,
) -> PartView {
    let chat = use_context::<ChatState>();
    let busy = move || chat.is_none_or(|chat| chat.busy());
    let notice = super::error_notice(title.to_owned(), Some(error));
    view! {
        <div class="moved-on">
            {notice}
            <button
                type="button"
                class="button-secondary reopen-button"
                disabled=busy
                on:click=move |_| {
                    if let Some(chat) = chat {
                        chat.reopen(call_id.clone());
                    }
                }
            >
                {go_ahead}
            </button>
        </div>
    }
    .into_part_view()
}

/// Focuses a confirmation form once it is in the page: it is what the person must do next.
pub(crate) fn focus_on_mount(form: NodeRef<leptos::html::Form>) {
    Effect::new(move |_| {
        if let Some(form) = form.get() {
            let _ = form.focus();
        }
    });
}

/// The decision of one pending call, as a form makes it.
///
/// The lock is set before the request leaves, so a double click sends one decision; it is
/// released only when the request did not start or failed, so the person can try again.
#[derive(Clone, Copy)]
pub(crate) struct Approval {
    chat: Option<ChatState>,
    call_id: StoredValue<String>,
    locked: RwSignal<bool>,
}

impl Approval {
    /// The decision of call `call_id`, in the chat of the current context.
    pub fn new(call_id: String) -> Self {
        Self {
            chat: use_context::<ChatState>(),
            call_id: StoredValue::new(call_id),
            locked: RwSignal::new(false),
        }
    }

    /// Whether the decision was sent (and not failed); tracked.
    pub fn locked(&self) -> bool {
        self.locked.get()
    }

    /// Whether the buttons are off: once decided, or while another request runs; tracked.
    pub fn disabled(&self) -> bool {
        self.locked.get() || self.chat.is_some_and(|chat| chat.busy())
    }

    /// Whether a decision can still be sent; check before validating a form's fields, so a
    /// second click does not show errors for a decision already on its way.
    pub fn is_open(&self) -> bool {
        self.chat.is_some() && !self.locked.get_untracked()
    }

    /// Sends the decision. Returns whether a request started.
    pub fn decide(&self, approved: bool, edited_input: Option<Value>) -> bool {
        if self.locked.get_untracked() {
            return false;
        }
        let Some(chat) = self.chat else { return false };
        self.locked.set(true);
        let call_id = self.call_id.get_value();
        JUST_DECIDED.with(|decided| *decided.borrow_mut() = Some(call_id));
        let locked = self.locked;
        // When the answer does not move the call on (a failed request), unlock so the
        // person can try again; when it does, this form is already gone.
        let started = chat.respond(
            self.call_id.get_value(),
            approved,
            edited_input,
            move |_| {
                locked.try_set(false);
            },
        );
        if !started {
            self.locked.set(false);
        }
        started
    }
}

/// The buttons of an open confirmation form: the confirm button submits the form, the
/// decline button calls `on_decline`; both are off while [`Approval::disabled`].
pub(crate) fn decision_buttons(
    approval: Approval,
    confirm: &'static str,
    confirm_class: &'static str,
    decline: &'static str,
    on_decline: impl Fn() + Send + Sync + 'static,
) -> impl IntoView {
    let disabled = move || approval.disabled();
    view! {
        <div class="form-actions">
            <button type="submit" class=confirm_class disabled=disabled>
                {confirm}
            </button>
            <button
                type="button"
                class="button-secondary"
                disabled=disabled
                on:click=move |_| on_decline()
            >
                {decline}
            </button>
        </div>
        <Show when=move || approval.locked()>
            <p class="form-status" role="status">{crate::i18n::t("Đang gửi…", "Sending…")}</p>
        </Show>
    }
}

/// The buttons of a form whose decision is made: both off, and what was decided.
pub(crate) fn decided_buttons(
    confirm: &'static str,
    confirm_class: &'static str,
    decline: &'static str,
    approved: bool,
    status: &'static str,
) -> impl IntoView {
    view! {
        <div class="form-actions">
            <button type="submit" class=confirm_class disabled>{confirm}</button>
            <button type="button" class="button-secondary" disabled>{decline}</button>
        </div>
        <p class="form-status" class:declined=!approved role="status">{status}</p>
    }
}

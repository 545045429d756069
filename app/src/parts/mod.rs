//! Rendering of message parts. Tool parts are matched exhaustively here, one module per
//! tool, and each module matches every [`shared::message::ToolState`] without a wildcard:
//! a new tool or a new state is a compile error until it has a rendering.

use leptos::prelude::*;
use shared::{
    explain::explain,
    lang::Lang,
    message::{MessagePart, ToolPart},
    tools::{ErrorClass, ErrorCode, ToolError},
};

use crate::lazy::lazy_part;
// Parts and the chunk loader both show it; it lives apart so neither imports the other.
pub(crate) use crate::skeleton::skeleton;
use crate::state::ChatState;
use crate::view::{IntoPartView, PartView};

mod approval;
mod availability;
mod booking;
mod gifts;
mod my_bookings;
mod restaurants;
mod shipping;
mod unknown;
mod weather;

/// The `/bookings` page's list (or its empty state). Not a chunk, unlike the chat's
/// bookings parts: the server renders it with the page and the browser hydrates it, which
/// a view of a chunk not yet loaded cannot be.
pub(crate) fn bookings_page_list(list: shared::tools::ListBookingsOutput) -> impl IntoView {
    let shared::tools::ListBookingsOutput {
        bookings,
        no_results_reason,
    } = list;
    if bookings.is_empty() {
        leptos::either::Either::Left(my_bookings::empty_bookings(no_results_reason))
    } else {
        leptos::either::Either::Right(my_bookings::booking_list(bookings, true))
    }
}

/// Fetches the restaurant assistant's parts (`split_restaurant.wasm`) ahead of their first
/// use; the chat page asks for it once it is interactive. A stored conversation's parts
/// are waited for instead: the chat's `Suspense` hydrates once their `lazy_part`s have
/// resolved, so the server's cards stay until the live ones replace them (and the server
/// has the browser preload the chunk with the page: `server::page`).
#[cfg(feature = "hydrate")]
pub async fn preload_restaurant_parts() -> Result<(), crate::lazy::ChunkUnavailable> {
    chunks::preload_restaurant().await?;
    Ok(())
}

/// The split points of the lazily loaded parts: in the browser each body runs from its
/// chunk (`pkg/split_<chunk>.wasm`), fetched at the first call (see `crate::lazy`). One
/// chunk per assistant (the restaurant assistant's holds the person's bookings and the
/// cancellation form too: they are its tools). The restaurant assistant's is fetched as
/// soon as the chat page is interactive, so the page's first download is only what makes
/// it work; each chunk file more is a round trip more on a slow network.
mod chunks {
    use shared::{
        message::ToolCall,
        tools::{
            CancelBooking, CreateCheckoutSession, ListBookings, PrepareCheckout, ShippingQuote,
            SuggestGifts,
        },
    };
    use wasm_split_helpers::wasm_split;

    use super::{gifts, my_bookings, shipping};
    use crate::{lazy::ChunkUnavailable, view::PartView};

    type Rendered = Result<PartView, ChunkUnavailable>;

    #[wasm_split(gifts, fallible)]
    pub fn suggest_gifts(call: ToolCall<SuggestGifts>) -> Rendered {
        Ok(gifts::render_suggestions(call.state.read()))
    }

    #[wasm_split(gifts, fallible)]
    pub fn prepare_checkout(call: ToolCall<PrepareCheckout>) -> Rendered {
        Ok(gifts::render_draft(call.state.read()))
    }

    #[wasm_split(gifts, fallible)]
    pub fn create_checkout_session(call: ToolCall<CreateCheckoutSession>) -> Rendered {
        Ok(gifts::render_checkout(call.id, call.state.read()))
    }

    #[wasm_split(shipping, fallible)]
    pub fn shipping_quote(call: ToolCall<ShippingQuote>) -> Rendered {
        Ok(shipping::render(call.state.read()))
    }

    #[wasm_split(restaurant, fallible, preload(preload_restaurant))]
    pub fn get_weather(call: ToolCall<shared::tools::GetWeather>) -> Rendered {
        Ok(super::weather::render(call.state.read()))
    }

    #[wasm_split(restaurant, fallible)]
    pub fn search_restaurants(call: ToolCall<shared::tools::SearchRestaurants>) -> Rendered {
        Ok(super::restaurants::render(call.state.read()))
    }

    #[wasm_split(restaurant, fallible)]
    pub fn check_availability(call: ToolCall<shared::tools::CheckAvailability>) -> Rendered {
        Ok(super::availability::render(call.state.read()))
    }

    #[wasm_split(restaurant, fallible)]
    pub fn create_booking(call: ToolCall<shared::tools::CreateBooking>) -> Rendered {
        Ok(super::booking::render(call.id, call.state.read()))
    }

    #[wasm_split(restaurant, fallible)]
    pub fn list_bookings(call: ToolCall<ListBookings>) -> Rendered {
        Ok(my_bookings::render_list(call.state.read()))
    }

    #[wasm_split(restaurant, fallible)]
    pub fn cancel_booking(call: ToolCall<CancelBooking>) -> Rendered {
        Ok(my_bookings::render_cancel(call.id, call.state.read()))
    }
}

/// The message a part belongs to, provided by the chat page around each part, so a
/// notice can tell whether its failure is the newest one (only that one can be retried).
#[derive(Clone, Copy)]
pub struct PartScope {
    /// The message's id.
    pub message_id: Signal<String>,
}

/// One part of a message, as it is now.
pub fn render_part(part: MessagePart) -> PartView {
    match part {
        MessagePart::Text { text, .. } if text.is_empty() => ().into_part_view(),
        MessagePart::Text { text, .. } => view! { <p class="bubble">{text}</p> }.into_part_view(),
        MessagePart::Tool(tool) => render_tool(*tool),
        // Marks a model turn for the model's history; nothing to show.
        MessagePart::StepStart => ().into_part_view(),
    }
}

/// A tool part: its root carries the tool, the state and the call id.
pub fn render_tool(part: ToolPart) -> PartView {
    let tool = part.tool_name().to_owned();
    let state = part.state_name();
    let call_id = part.id().to_owned();
    let body = match part {
        // Every tool's view is loaded on first use (see `crate::lazy`): the restaurant
        // assistant's as soon as the chat page is up, the others' (rarely shown) when
        // one first is.
        ToolPart::GetWeather(call) => lazy_part(chunks::get_weather(call)),
        ToolPart::SearchRestaurants(call) => lazy_part(chunks::search_restaurants(call)),
        ToolPart::CheckAvailability(call) => lazy_part(chunks::check_availability(call)),
        ToolPart::CreateBooking(call) => lazy_part(chunks::create_booking(call)),
        ToolPart::ListBookings(call) => lazy_part(chunks::list_bookings(call)),
        ToolPart::CancelBooking(call) => lazy_part(chunks::cancel_booking(call)),
        ToolPart::SuggestGifts(call) => lazy_part(chunks::suggest_gifts(call)),
        ToolPart::PrepareCheckout(call) => lazy_part(chunks::prepare_checkout(call)),
        ToolPart::CreateCheckoutSession(call) => lazy_part(chunks::create_checkout_session(call)),
        ToolPart::ShippingQuote(call) => lazy_part(chunks::shipping_quote(call)),
        ToolPart::Unknown(call) => unknown::render(call),
    };
    view! {
        <div class="tool-part" data-tool=tool data-state=state data-call-id=call_id>
            {body}
        </div>
    }
    .into_part_view()
}

/// The notice for a failed call, shaped by what kind of failure it is
/// ([`ErrorCode::class`]), since each asks the person for something else: fix the input,
/// try again, wait, or nothing at all. The words come from the error's code and issues
/// ([`shared::explain`]) in the page's language; the model-facing `message` is never
/// shown. The root keeps the code in `data-error-code`.
pub(crate) fn error_notice(title: String, error: Option<ToolError>) -> PartView {
    let Some(error) = error else {
        // Not yet answered by the server (an unknown tool still streaming): no code to show.
        return view! {
            <div class="notice notice-error" role="alert">
                <p class="notice-title">{title}</p>
            </div>
        }
        .into_part_view();
    };
    let lang = page_lang();
    let look = NoticeLook::of(error.code, error.retryable);
    let words = explain(&error, lang);
    let role = if look.alert { "alert" } else { "status" };
    view! {
        <div
            class=format!("notice {}", look.class)
            role=role
            data-error-code=code_name(error.code)
            data-error-class=look.class_name
        >
            <p class="notice-kind">{words.kind}</p>
            <p class="notice-title">{title}</p>
            <p class="notice-message">{words.reason}</p>
            <p class="notice-help">{words.next_step}</p>
            {look.retry.then(|| retry_button(lang))}
        </div>
    }
    .into_part_view()
}

/// The page's language, as the shell chose it.
pub(crate) fn page_lang() -> Lang {
    crate::i18n::lang()
}

/// How a notice looks for one error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NoticeLook {
    /// The notice's CSS class.
    class: &'static str,
    /// The error class's name, for `data-error-class`.
    class_name: &'static str,
    /// Whether to offer "Thử lại" (re-sending the last message).
    retry: bool,
    /// Whether it is announced as an alert (else as a status).
    alert: bool,
}

impl NoticeLook {
    fn of(code: ErrorCode, retryable: bool) -> Self {
        let (class, class_name) = match code.class() {
            ErrorClass::Validation => ("notice-validation", "validation"),
            ErrorClass::Infrastructure => ("notice-infrastructure", "infrastructure"),
            ErrorClass::Platform => ("notice-platform", "platform"),
            ErrorClass::NotRun => ("notice-not-run", "not-run"),
            ErrorClass::Internal => ("notice-error", "internal"),
        };
        let retry = match code.class() {
            ErrorClass::Infrastructure => retryable,
            ErrorClass::Platform => code == ErrorCode::IdempotencyKeyInUse || retryable,
            ErrorClass::Validation | ErrorClass::NotRun | ErrorClass::Internal => false,
        };
        Self {
            class,
            class_name,
            retry,
            alert: code.class() != ErrorClass::NotRun,
        }
    }
}

/// The code as the API writes it (`UPSTREAM_UNAVAILABLE`).
fn code_name(code: ErrorCode) -> String {
    serde_json::to_value(code)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// "Thử lại": sends the person's last message again through the chat's one send path.
/// Shown only on the newest reply, since the last message is what that reply answered.
fn retry_button(lang: Lang) -> impl IntoView {
    let chat = use_context::<ChatState>();
    let scope = use_context::<PartScope>();
    let newest = move || match (chat, scope) {
        (Some(chat), Some(scope)) => scope.message_id.with(|id| chat.is_latest(id)),
        (Some(_), None) => true,
        (None, _) => false,
    };
    let disabled = move || !chat.is_some_and(|chat| chat.can_retry());
    view! {
        <Show when=newest>
            <button
                type="button"
                class="retry-button"
                disabled=disabled
                on:click=move |_| {
                    if let Some(chat) = chat {
                        chat.retry_last();
                    }
                }
            >
                {lang.pick("Thử lại", "Try again")}
            </button>
        </Show>
    }
}

/// The string at `key` of a partial input, when it has arrived and is not blank.
pub(crate) fn partial_str(partial: &serde_json::Value, key: &str) -> Option<String> {
    partial
        .get(key)
        .and_then(serde_json::Value::as_str)
        .map(str::trim)
        .filter(|value| !value.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_named_as_in_the_api() {
        assert_eq!(
            code_name(ErrorCode::UpstreamUnavailable),
            "UPSTREAM_UNAVAILABLE"
        );
        assert_eq!(
            code_name(ErrorCode::IdempotencyKeyInUse),
            "IDEMPOTENCY_KEY_IN_USE"
        );
        assert_eq!(code_name(ErrorCode::ValidationError), "VALIDATION_ERROR");
    }

    #[test]
    fn each_class_asks_for_its_own_reaction() {
        let validation = NoticeLook::of(ErrorCode::ValidationError, false);
        assert_eq!(validation.class, "notice-validation");
        assert!(!validation.retry);

        let down = NoticeLook::of(ErrorCode::UpstreamUnavailable, true);
        assert_eq!(down.class, "notice-infrastructure");
        assert!(down.retry);
        // A retry is offered only when the server says one may work.
        assert!(!NoticeLook::of(ErrorCode::UpstreamTimeout, false).retry);

        assert!(NoticeLook::of(ErrorCode::IdempotencyKeyInUse, true).retry);
        let reused = NoticeLook::of(ErrorCode::IdempotencyKeyReused, false);
        assert!(!reused.retry);
        assert_eq!(reused.class, "notice-platform");

        let declined = NoticeLook::of(ErrorCode::Declined, false);
        assert_eq!(declined.class, "notice-not-run");
        assert!(!declined.alert);

        let internal = NoticeLook::of(ErrorCode::ExecutionFailed, false);
        assert_eq!(internal.class, "notice-error");
        assert!(!internal.retry);
    }
}

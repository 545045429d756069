//! Rendering of message parts. Tool parts are matched exhaustively here, one module per
//! tool, and each module matches every [`shared::message::ToolState`] without a wildcard:
//! a new tool or a new state is a compile error until it has a rendering.

use leptos::prelude::*;
use shared::{
    message::{MessagePart, ToolPart},
    tools::ToolError,
};

mod booking;
mod gifts;
mod my_bookings;
mod restaurants;
mod shipping;
mod unknown;
mod weather;

/// One part of a message, as it is now.
pub fn render_part(part: MessagePart) -> AnyView {
    match part {
        MessagePart::Text { text, .. } if text.is_empty() => ().into_any(),
        MessagePart::Text { text, .. } => view! { <p class="bubble">{text}</p> }.into_any(),
        MessagePart::Tool(tool) => render_tool(*tool),
        // Marks a model turn for the model's history; nothing to show.
        MessagePart::StepStart => ().into_any(),
    }
}

/// A tool part: its root carries the tool, the state and the call id.
pub fn render_tool(part: ToolPart) -> AnyView {
    let tool = part.tool_name().to_owned();
    let state = part.state_name();
    let call_id = part.id().to_owned();
    let body = match part {
        ToolPart::GetWeather(call) => weather::render(call.state),
        ToolPart::SearchRestaurants(call) => restaurants::render(call.state),
        ToolPart::CreateBooking(call) => booking::render(call.id, call.state),
        ToolPart::ListBookings(call) => my_bookings::render_placeholder(call.state.name()),
        ToolPart::CancelBooking(call) => my_bookings::render_placeholder(call.state.name()),
        ToolPart::SuggestGifts(call) => gifts::render_placeholder(call.state.name()),
        ToolPart::PrepareCheckout(call) => gifts::render_placeholder(call.state.name()),
        ToolPart::CreateCheckoutSession(call) => gifts::render_placeholder(call.state.name()),
        ToolPart::ShippingQuote(call) => shipping::render_placeholder(call.state.name()),
        ToolPart::Unknown(call) => unknown::render(call),
    };
    view! {
        <div class="tool-part" data-tool=tool data-state=state data-call-id=call_id>
            {body}
        </div>
    }
    .into_any()
}

/// A red notice for a failed call: a heading, the error's message and, when calling again
/// later may work, a note saying so.
pub(crate) fn error_notice(title: String, error: Option<ToolError>) -> AnyView {
    let retryable = error.as_ref().is_some_and(|error| error.retryable);
    let message = error.map(|error| error.message);
    view! {
        <div class="notice notice-error" role="alert">
            <p class="notice-title">{title}</p>
            {message.map(|message| view! { <p class="notice-message">{message}</p> })}
            {retryable.then(|| view! { <p class="notice-retry">"Thử lại sau"</p> })}
        </div>
    }
    .into_any()
}

/// A placeholder card with a shimmer while a call's input arrives or the tool runs.
pub(crate) fn skeleton(title: String, detail: Option<String>) -> AnyView {
    view! {
        <div class="card skeleton" aria-busy="true">
            <p class="skeleton-title">{title}</p>
            {detail.map(|detail| view! { <p class="skeleton-detail">{detail}</p> })}
            <div class="shimmer" aria-hidden="true">
                <span class="shimmer-line"></span>
                <span class="shimmer-line short"></span>
            </div>
        </div>
    }
    .into_any()
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

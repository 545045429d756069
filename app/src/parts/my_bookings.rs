//! The person's own bookings: `listBookings` (a list, or an empty state with the reason)
//! and `cancelBooking` (a destructive confirmation form, then a cancellation receipt only
//! once the booking is cancelled). The list is also what the `/bookings` page shows.

use leptos::prelude::*;
use shared::{
    message::{ToolPart, ToolState},
    preview::ApprovalPreview,
    tools::{
        BookingState, BookingSummary, CancelBookingInput, CancelBookingOutput, ErrorCode,
        ListBookingsInput, ListBookingsOutput,
    },
};

use super::{
    approval::{decided_buttons, decision_buttons, decision_result, moved_on, Approval},
    error_notice, partial_str, skeleton,
};
use crate::i18n::{lang, t, Lang};
use crate::view::{IntoPartView, PartView};
use crate::{format, labels, state::ChatState};

/// What the person types in the chat to cancel `booking_id`, in words the offline model
/// reads in either language.
pub(crate) fn cancel_hint(lang: Lang, booking_id: &str) -> String {
    match lang {
        Lang::Vi => format!("Huỷ đặt chỗ {booking_id}"),
        Lang::En => format!("Cancel booking {booking_id}"),
    }
}

/// A `listBookings` part in its current state.
pub fn render_list(state: ToolState<ListBookingsInput, ListBookingsOutput>) -> PartView {
    let loading = || t("Đang xem các đặt chỗ của bạn…", "Looking at your bookings…").to_owned();
    match state {
        ToolState::InputStreaming(_) | ToolState::InputAvailable { .. } => {
            skeleton(loading(), None)
        }
        // listBookings never asks for approval; a stored part saying so is still loading.
        ToolState::ApprovalRequested { .. } | ToolState::ApprovalResponded { .. } => {
            skeleton(loading(), None)
        }
        ToolState::OutputAvailable { output, .. } => {
            let ListBookingsOutput {
                bookings,
                no_results_reason,
            } = output;
            if bookings.is_empty() {
                return empty_bookings(no_results_reason).into_part_view();
            }
            let count = bookings.len();
            let summary = match (lang(), count) {
                (Lang::Vi, _) => format!("{count} đặt chỗ"),
                (Lang::En, 1) => "1 booking".to_owned(),
                (Lang::En, _) => format!("{count} bookings"),
            };
            view! {
                <section class="my-bookings" aria-label=t("Đặt chỗ của bạn", "Your bookings")>
                    <p class="results-summary">{summary}</p>
                    {booking_list(bookings, false)}
                </section>
            }
            .into_part_view()
        }
        ToolState::OutputError { error, .. } => error_notice(
            t("Không xem được các đặt chỗ", "Could not show your bookings").to_owned(),
            Some(error),
        ),
        ToolState::OutputDenied { .. } => view! {
            <p class="notice notice-muted">
                {t("Đã bỏ qua việc xem các đặt chỗ.", "Skipped looking at your bookings.")}
            </p>
        }
        .into_part_view(),
    }
}

/// The empty state: the reason the server gave, or a plain one.
pub(crate) fn empty_bookings(reason: Option<String>) -> impl IntoView {
    // The tool writes its reason in Vietnamese only: an English page uses its own words.
    let reason = reason
        .map(|reason| reason.trim().to_owned())
        .filter(|reason| lang() == Lang::Vi && !reason.is_empty())
        .unwrap_or_else(|| t("Bạn chưa có đặt chỗ nào.", "You have no bookings.").to_owned());
    view! {
        <div class="card empty-results bookings-empty" role="status">
            <p class="empty-reason">{reason}</p>
            <p class="empty-suggestion">
                {t(
                    "Đặt bàn trong trò chuyện với trợ lý nhà hàng.",
                    "Book a table by chatting with the restaurant assistant.",
                )}
            </p>
        </div>
    }
}

/// Bookings as rows. With `link_to_chat` (the `/bookings` page), a booking that still
/// stands says how to cancel it: in the chat, where the cancellation is confirmed.
pub(crate) fn booking_list(bookings: Vec<BookingSummary>, link_to_chat: bool) -> impl IntoView {
    view! {
        <ul class="booking-list">
            {bookings
                .into_iter()
                .map(|booking| booking_row(booking, link_to_chat))
                .collect_view()}
        </ul>
    }
}

fn booking_row(booking: BookingSummary, link_to_chat: bool) -> impl IntoView {
    let BookingSummary {
        booking_id,
        restaurant_name,
        party_size,
        starts_at,
        status,
    } = booking;
    let lang = lang();
    let (key, label) = labels::booking_state(lang, status);
    let cancel = (link_to_chat && status != BookingState::Cancelled).then(|| {
        view! {
            <p class="booking-cancel-hint">
                <a href="/?a=restaurant">{lang.pick("Huỷ trong trò chuyện", "Cancel in the chat")}</a>
                {lang.pick(" — Nhắn: “", " — Write: “")}
                {cancel_hint(lang, &booking_id)}
                "”"
            </p>
        }
    });
    let row_id = booking_id.clone();
    view! {
        <li
            class=format!("card booking-row booking-{key}")
            data-booking-id=row_id
            data-booking-status=key
        >
            <div class="booking-row-head">
                <span class="booking-row-id">{booking_id}</span>
                <span class=format!("status-badge status-{key}")>{label}</span>
            </div>
            <p class="booking-row-restaurant">{restaurant_name}</p>
            <p class="booking-row-meta">
                {format::datetime(lang, &starts_at)}
                " · "
                {format::people(lang, u64::from(party_size))}
            </p>
            {cancel}
        </li>
    }
}

/// A `cancelBooking` part in its current state.
pub fn render_cancel(
    call_id: String,
    state: ToolState<CancelBookingInput, CancelBookingOutput>,
) -> PartView {
    match state {
        ToolState::InputStreaming(input) => skeleton(
            t(
                "Trợ lý đang soạn yêu cầu huỷ đặt chỗ…",
                "The assistant is writing the cancellation request…",
            )
            .to_owned(),
            partial_str(input.partial(), "bookingId"),
        ),
        ToolState::InputAvailable { input } => skeleton(
            t(
                "Đang chuẩn bị để bạn xác nhận…",
                "Getting it ready for your confirmation…",
            )
            .to_owned(),
            Some(input.booking_id),
        ),
        ToolState::ApprovalRequested { input, preview } => {
            let preview = match preview {
                Some(ApprovalPreview::Cancellation(preview)) => Some(preview.booking),
                _ => None,
            };
            view! { <CancelForm call_id input preview/> }.into_part_view()
        }
        ToolState::ApprovalResponded { input, approved } => decided_cancel(&input, approved),
        ToolState::OutputAvailable { output, .. } => {
            decision_result(call_id, cancel_receipt(output))
        }
        ToolState::OutputError { error, .. } if error.code == ErrorCode::MovedOn => moved_on(
            call_id,
            error,
            t(
                "Chưa huỷ — đặt chỗ vẫn giữ nguyên",
                "Not cancelled — your booking still stands",
            ),
            t("Vẫn huỷ đặt chỗ này", "Cancel it anyway"),
        ),
        ToolState::OutputError { error, .. } => error_notice(
            t(
                "Chưa huỷ được — đặt chỗ vẫn giữ nguyên",
                "Not cancelled — your booking still stands",
            )
            .to_owned(),
            Some(error),
        ),
        ToolState::OutputDenied { input } => view! {
            <p class="notice notice-muted" role="status">
                {t("Bạn đã giữ lại đặt chỗ ", "You kept booking ")}
                {input.booking_id}
                {t(" — không có gì bị huỷ.", " — nothing was cancelled.")}
            </p>
        }
        .into_part_view(),
    }
}

/// What this conversation already knows of booking `booking_id` (its receipt or a list),
/// so the form can say which booking it is about.
fn find_booking(chat: Option<ChatState>, booking_id: &str) -> Option<BookingSummary> {
    chat?.find_tool(|part| match part {
        // Read here, in the chunk, like every view's data (`ToolState::read`).
        ToolPart::CreateBooking(call) => match call.state.clone().read() {
            ToolState::OutputAvailable { output, .. } if output.booking_id == booking_id => {
                Some(BookingSummary {
                    booking_id: output.booking_id,
                    restaurant_name: output.restaurant_name,
                    party_size: output.party_size,
                    starts_at: output.starts_at,
                    status: output.status.into(),
                })
            }
            _ => None,
        },
        ToolPart::ListBookings(call) => match call.state.clone().read() {
            ToolState::OutputAvailable { output, .. } => output
                .bookings
                .into_iter()
                .find(|booking| booking.booking_id == booking_id),
            _ => None,
        },
        _ => None,
    })
}

fn booking_fields(booking: Option<BookingSummary>) -> impl IntoView {
    let lang = lang();
    booking.map(|booking| {
        view! {
            <dl class="fields">
                <div class="field-row">
                    <dt>{lang.pick("Nhà hàng", "Restaurant")}</dt>
                    <dd class="cancel-restaurant">{booking.restaurant_name}</dd>
                </div>
                <div class="field-row">
                    <dt>{lang.pick("Thời gian", "Time")}</dt>
                    <dd class="cancel-time">{format::datetime(lang, &booking.starts_at)}</dd>
                </div>
                <div class="field-row">
                    <dt>{lang.pick("Số người", "Party size")}</dt>
                    <dd class="cancel-party">{format::people(lang, u64::from(booking.party_size))}</dd>
                </div>
            </dl>
        }
    })
}

/// The destructive confirmation: which booking, a red "Huỷ đặt chỗ" and "Giữ lại".
/// Nothing to edit; it locks at the first click.
#[component]
fn CancelForm(
    call_id: String,
    input: CancelBookingInput,
    preview: Option<BookingSummary>,
) -> impl IntoView {
    // The booking as the server has it now; the conversation's copy only for older messages.
    let booking = preview.or_else(|| find_booking(use_context::<ChatState>(), &input.booking_id));
    let approval = Approval::new(call_id);
    let decide = move |approved: bool| {
        if approval.is_open() {
            approval.decide(approved, None);
        }
    };
    view! {
        <form
            class="card cancel-form"
            aria-label=t("Xác nhận huỷ đặt chỗ", "Confirm the cancellation")
            on:submit=move |ev| {
                ev.prevent_default();
                decide(true);
            }
        >
            <p class="card-kicker">{t("Huỷ đặt chỗ", "Cancel a booking")}</p>
            <p class="cancel-question">
                {t("Bạn có chắc muốn huỷ đặt chỗ này?", "Do you really want to cancel this booking?")}
            </p>
            <p class="booking-id cancel-booking-id">{input.booking_id.clone()}</p>
            {booking_fields(booking)}
            <p class="form-hint">
                {t(
                    "Chưa có gì bị huỷ cho đến khi bạn bấm “Huỷ đặt chỗ”. Sau khi huỷ, nhà hàng không giữ bàn cho bạn nữa.",
                    "Nothing is cancelled until you press “Cancel booking”. Once cancelled, the restaurant no longer holds your table.",
                )}
            </p>
            {decision_buttons(
                approval,
                t("Huỷ đặt chỗ", "Cancel booking"),
                "button-danger",
                t("Giữ lại", "Keep it"),
                move || decide(false),
            )}
        </form>
    }
}

/// The form after the decision: locked, with what was decided.
fn decided_cancel(input: &CancelBookingInput, approved: bool) -> PartView {
    let booking = find_booking(use_context::<ChatState>(), &input.booking_id);
    let status = if approved {
        t("Đang huỷ đặt chỗ…", "Cancelling the booking…")
    } else {
        t("Đã giữ lại", "Kept")
    };
    view! {
        <form
            class="card cancel-form locked"
            aria-label=t("Xác nhận huỷ đặt chỗ", "Confirm the cancellation")
            aria-busy=approved.to_string()
        >
            <p class="card-kicker">{t("Huỷ đặt chỗ", "Cancel a booking")}</p>
            <p class="booking-id cancel-booking-id">{input.booking_id.clone()}</p>
            {booking_fields(booking)}
            {decided_buttons(
                t("Huỷ đặt chỗ", "Cancel booking"),
                "button-danger",
                t("Giữ lại", "Keep it"),
                approved,
                status,
            )}
        </form>
    }
    .into_part_view()
}

/// The cancellation receipt: shown only for a booking the tool cancelled.
fn cancel_receipt(output: CancelBookingOutput) -> PartView {
    let CancelBookingOutput {
        booking,
        already_cancelled,
    } = output;
    let booking_id = booking.booking_id.clone();
    let receipt_id = booking_id.clone();
    let note = if already_cancelled {
        t(
            "Đặt chỗ này đã được huỷ từ trước; không có gì thay đổi thêm.",
            "This booking had already been cancelled; nothing else changed.",
        )
    } else {
        t(
            "Nhà hàng không còn giữ bàn cho bạn.",
            "The restaurant is no longer holding a table for you.",
        )
    };
    view! {
        <article
            class="card receipt cancel-receipt"
            data-testid="cancel-receipt"
            data-booking-id=receipt_id
        >
            <p class="receipt-status">{t("Đã huỷ", "Cancelled")}</p>
            <p class="cancel-title">
                {t("Đã huỷ đặt chỗ ", "Cancelled booking ")}
                <span class="cancel-booking-id">{booking_id}</span>
            </p>
            {booking_fields(Some(booking))}
            <p class="receipt-note">{note}</p>
        </article>
    }
    .into_part_view()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_and_hints_in_both_languages() {
        assert_eq!(
            labels::booking_state(Lang::Vi, BookingState::Confirmed),
            ("confirmed", "đã xác nhận")
        );
        assert_eq!(
            labels::booking_state(Lang::En, BookingState::Cancelled),
            ("cancelled", "cancelled")
        );
        assert_eq!(
            cancel_hint(Lang::Vi, "BK-1A2B3C4D"),
            "Huỷ đặt chỗ BK-1A2B3C4D"
        );
        assert_eq!(
            cancel_hint(Lang::En, "BK-1A2B3C4D"),
            "Cancel booking BK-1A2B3C4D"
        );
    }
}

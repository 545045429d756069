//! `createBooking` parts: a draft while the model writes the call, the confirmation form
//! while the server waits for the person, and a receipt only once a booking exists.

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, NaiveDateTime, TimeZone, Timelike};
use leptos::prelude::*;
use serde_json::{json, Value};
use shared::{
    lang::Lang,
    message::ToolState,
    preview::{ApprovalPreview, Availability, BookingPreview},
    tools::{CreateBookingInput, CreateBookingOutput, ErrorCode},
};

use super::{
    approval::{
        decided_buttons, decision_buttons, decision_result, focus_on_mount, moved_on, Approval,
    },
    error_notice, page_lang, partial_str,
};
use crate::format::{datetime, people};
use crate::i18n::{lang, t};
use crate::labels;
use crate::view::{IntoPartView, PartView};

/// The part in its current state.
pub fn render(
    call_id: String,
    state: ToolState<CreateBookingInput, CreateBookingOutput>,
) -> PartView {
    match state {
        ToolState::InputStreaming(input) => draft(
            Draft::from_partial(lang(), input.partial()),
            t(
                "Trợ lý đang soạn yêu cầu đặt bàn…",
                "The assistant is writing the booking request…",
            ),
        ),
        ToolState::InputAvailable { input } => draft(
            Draft::from_input(lang(), &input),
            t(
                "Đang chuẩn bị để bạn xác nhận…",
                "Getting it ready for your confirmation…",
            ),
        ),
        ToolState::ApprovalRequested { input, preview } => {
            let preview = match preview {
                Some(ApprovalPreview::Booking(preview)) => Some(preview),
                _ => None,
            };
            view! { <ConfirmForm call_id input preview/> }.into_part_view()
        }
        ToolState::ApprovalResponded { input, approved } => {
            decided_form(&call_id, &input, approved)
        }
        ToolState::OutputAvailable { output, .. } => decision_result(call_id, receipt(output)),
        ToolState::OutputError { error, .. } if error.code == ErrorCode::MovedOn => moved_on(
            call_id,
            error,
            t("Chưa đặt bàn", "No table booked"),
            t("Vẫn đặt bàn này", "Book it anyway"),
        ),
        ToolState::OutputError { error, .. } => error_notice(
            t("Chưa đặt được bàn", "The table is not booked").to_owned(),
            Some(error),
        ),
        ToolState::OutputDenied { .. } => view! {
            <p class="notice notice-muted" role="status">
                {t("Bạn đã từ chối — chưa đặt bàn nào.", "You declined — no table was booked.")}
            </p>
        }
        .into_part_view(),
    }
}

/// What is known of a booking request so far.
struct Draft {
    restaurant_id: Option<String>,
    party_size: Option<String>,
    starts_at: Option<String>,
}

impl Draft {
    fn from_partial(lang: Lang, partial: &Value) -> Self {
        let starts_at = partial_str(partial, "startsAt").map(|raw| {
            DateTime::parse_from_rfc3339(&raw)
                .map(|at| datetime(lang, &at))
                .unwrap_or(raw)
        });
        Self {
            restaurant_id: partial_str(partial, "restaurantId"),
            party_size: partial
                .get("partySize")
                .and_then(Value::as_u64)
                .map(|size| people(lang, size)),
            starts_at,
        }
    }

    fn from_input(lang: Lang, input: &CreateBookingInput) -> Self {
        Self {
            restaurant_id: Some(input.restaurant_id.clone()),
            party_size: Some(people(lang, u64::from(input.party_size))),
            starts_at: Some(datetime(lang, &input.starts_at)),
        }
    }
}

fn draft(draft: Draft, status: &'static str) -> PartView {
    let lang = lang();
    let row = |label: &'static str, value: Option<String>| {
        let known = value.is_some();
        view! {
            <div class="field-row">
                <dt>{label}</dt>
                <dd class:pending=!known>{value.unwrap_or_else(|| "…".to_owned())}</dd>
            </div>
        }
    };
    view! {
        <div class="card booking-draft" aria-busy="true">
            <p class="card-kicker">{lang.pick("Bản nháp đặt bàn", "Booking draft")}</p>
            <dl class="fields">
                {row(lang.pick("Nhà hàng", "Restaurant"), draft.restaurant_id)}
                {row(lang.pick("Số người", "Party size"), draft.party_size)}
                {row(lang.pick("Thời gian", "Time"), draft.starts_at)}
            </dl>
            <p class="draft-status">{status}</p>
        </div>
    }
    .into_part_view()
}

/// An element id made from a call id (which may hold any characters).
fn field_id(call_id: &str, field: &str) -> String {
    let safe: String = call_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("booking-{safe}-{field}")
}

/// The form's fields as the inputs hold them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormValues {
    /// `partySize` as typed.
    pub party_size: String,
    /// `startsAt` as a `datetime-local` value (`YYYY-MM-DDTHH:MM`), in the input's offset.
    pub starts_at: String,
}

impl FormValues {
    /// The fields pre-filled from the validated input.
    pub fn from_input(input: &CreateBookingInput) -> Self {
        Self {
            party_size: input.party_size.to_string(),
            starts_at: local_minutes(&input.starts_at.naive_local()),
        }
    }
}

/// What to send as `editedInput`: `Ok(None)` when the person changed nothing, the whole
/// input with their values (and the original offset) when they changed a field, or the
/// reason the values cannot be sent.
pub fn edited_input(
    original: &CreateBookingInput,
    values: &FormValues,
) -> Result<Option<Value>, &'static str> {
    let party_size = values
        .party_size
        .trim()
        .parse::<u8>()
        .ok()
        .filter(|size| (1..=20).contains(size))
        .ok_or(t(
            "Số người phải là một số từ 1 đến 20.",
            "The party size must be a number from 1 to 20.",
        ))?;
    let local = parse_local(values.starts_at.trim())
        .ok_or(t("Thời gian chưa hợp lệ.", "The time is not valid."))?;
    // The form shows minutes; an original with seconds is unchanged if its minute is.
    let original_local = original
        .starts_at
        .naive_local()
        .with_second(0)
        .and_then(|at| at.with_nanosecond(0));
    let time_changed = original_local != Some(local);
    if party_size == original.party_size && !time_changed {
        return Ok(None);
    }
    let starts_at = if time_changed {
        original
            .starts_at
            .offset()
            .from_local_datetime(&local)
            .single()
            .ok_or(t("Thời gian chưa hợp lệ.", "The time is not valid."))?
    } else {
        original.starts_at
    };
    Ok(Some(json!({
        "restaurantId": original.restaurant_id,
        "partySize": party_size,
        "startsAt": rfc3339_with_offset(&starts_at),
    })))
}

// The date-time text here is written and read by hand rather than with chrono's
// `format`/`parse_from_str`: their strftime interpreter is the largest part of chrono in the
// hydrate bundle, and these few fixed shapes need none of it.

/// `YYYY-MM-DDTHH:MM`, the value of a `datetime-local` input.
fn local_minutes(at: &NaiveDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}",
        at.year(),
        at.month(),
        at.day(),
        at.hour(),
        at.minute()
    )
}

/// A `datetime-local` value: `YYYY-MM-DDTHH:MM`, optionally with `:SS` and a fraction.
fn parse_local(value: &str) -> Option<NaiveDateTime> {
    fn number(text: &str) -> Option<u32> {
        text.bytes()
            .all(|byte| byte.is_ascii_digit())
            .then(|| text.parse().ok())
            .flatten()
    }
    let (date, time) = value.split_once('T')?;
    let mut date_fields = date.split('-');
    let (year, month, day) = (
        date_fields.next()?,
        date_fields.next()?,
        date_fields.next()?,
    );
    if date_fields.next().is_some() || year.len() != 4 || month.len() != 2 || day.len() != 2 {
        return None;
    }
    let (clock, fraction) = time.split_once('.').unwrap_or((time, ""));
    let mut clock_fields = clock.split(':');
    let (hour, minute) = (clock_fields.next()?, clock_fields.next()?);
    let second = clock_fields.next().unwrap_or("00");
    if clock_fields.next().is_some() || [hour, minute, second].iter().any(|f| f.len() != 2) {
        return None;
    }
    // A fraction only after seconds, of 1 to 9 digits.
    let nanos = if fraction.is_empty() {
        if time.contains('.') {
            return None;
        }
        0
    } else {
        if clock.len() != 8 || fraction.len() > 9 {
            return None;
        }
        number(fraction)? * 10u32.pow(9 - fraction.len() as u32)
    };
    NaiveDate::from_ymd_opt(
        i32::try_from(number(year)?).ok()?,
        number(month)?,
        number(day)?,
    )?
    .and_hms_nano_opt(number(hour)?, number(minute)?, number(second)?, nanos)
}

/// `+07:00`, the offset as RFC 3339 writes it.
fn offset_text(at: &DateTime<FixedOffset>) -> String {
    let seconds = at.offset().local_minus_utc();
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// `YYYY-MM-DDTHH:MM:SS+07:00`.
fn rfc3339_with_offset(at: &DateTime<FixedOffset>) -> String {
    let local = at.naive_local();
    format!(
        "{}:{:02}{}",
        local_minutes(&local),
        local.second(),
        offset_text(at)
    )
}

/// "UTC+07:00", to say which clock the form's time is on.
fn offset_label(at: &DateTime<FixedOffset>) -> String {
    format!("UTC{}", offset_text(at))
}

/// The confirmation form. It locks at the first click: both buttons are disabled before
/// the request leaves, so a double click sends one request.
#[component]
fn ConfirmForm(
    call_id: String,
    input: CreateBookingInput,
    preview: Option<BookingPreview>,
) -> impl IntoView {
    let lang = page_lang();
    let initial = FormValues::from_input(&input);
    let party_size = RwSignal::new(initial.party_size);
    let starts_at = RwSignal::new(initial.starts_at);
    let form_error = RwSignal::new(None::<&'static str>);

    let party_id = field_id(&call_id, "party-size");
    let starts_id = field_id(&call_id, "starts-at");
    let restaurant_id = input.restaurant_id.clone();
    let offset = offset_label(&input.starts_at);
    let stored_input = StoredValue::new(input);
    let approval = Approval::new(call_id);
    let form_ref = NodeRef::<leptos::html::Form>::new();
    focus_on_mount(form_ref);
    let locked = move || approval.locked();

    let decide = move |approved: bool| {
        if !approval.is_open() {
            return;
        }
        let edited = if approved {
            let values = FormValues {
                party_size: party_size.get_untracked(),
                starts_at: starts_at.get_untracked(),
            };
            match stored_input.with_value(|input| edited_input(input, &values)) {
                Ok(edited) => edited,
                Err(reason) => {
                    form_error.set(Some(reason));
                    return;
                }
            }
        } else {
            None
        };
        form_error.set(None);
        approval.decide(approved, edited);
    };

    view! {
        <form
            node_ref=form_ref
            tabindex="-1"
            class="card booking-form"
            aria-label=t("Xác nhận đặt bàn", "Confirm the booking")
            on:submit=move |ev| {
                ev.prevent_default();
                decide(true);
            }
        >
            <p class="card-kicker">{t("Yêu cầu đặt bàn", "Booking request")}</p>
            <p class="form-hint">
                {t(
                    "Kiểm tra lại và sửa nếu cần. Chưa có bàn nào được đặt cho đến khi bạn xác nhận.",
                    "Check it and change it if needed. No table is booked until you confirm.",
                )}
            </p>
            {facts(preview, restaurant_id, lang)}
            <div class="form-field">
                <label for=party_id.clone()>{t("Số người", "Party size")}</label>
                <input
                    id=party_id
                    type="number"
                    name="partySize"
                    min="1"
                    max="20"
                    step="1"
                    required
                    prop:value=party_size
                    on:input:target=move |ev| party_size.set(ev.target().value())
                    disabled=locked
                />
            </div>
            <div class="form-field">
                <label for=starts_id.clone()>{t("Thời gian", "Time")}</label>
                <input
                    id=starts_id
                    type="datetime-local"
                    name="startsAt"
                    required
                    prop:value=starts_at
                    on:input:target=move |ev| starts_at.set(ev.target().value())
                    disabled=locked
                />
                <p class="field-hint">
                    {t("Giờ địa phương của nhà hàng (", "The restaurant's local time (")}
                    {offset}
                    ")"
                </p>
            </div>
            {move || form_error.get().map(|reason| view! {
                <p class="form-error" role="alert">{reason}</p>
            })}
            {decision_buttons(
                approval,
                t("Xác nhận đặt bàn", "Confirm the booking"),
                "button-primary",
                t("Từ chối", "Decline"),
                move || decide(false),
            )}
        </form>
    }
}

/// What the server found the booking would be, above the form's fields: the restaurant by
/// name and address, the local time, and whether there is room. Without a preview (a
/// conversation stored before previews) only the id is known.
fn facts(preview: Option<BookingPreview>, restaurant_id: String, lang: Lang) -> impl IntoView {
    let Some(preview) = preview else {
        return view! {
            <dl class="fields">
                <div class="field-row">
                    <dt>{lang.pick("Nhà hàng", "Restaurant")}</dt>
                    <dd class="restaurant-id">{restaurant_id}</dd>
                </div>
            </dl>
        }
        .into_any();
    };
    let BookingPreview {
        restaurant_name,
        address,
        city,
        starts_at,
        party_size,
        availability,
        ..
    } = preview;
    let when = datetime(lang, &starts_at);
    let (room_key, room) = match availability {
        Availability::Available { seats_left } => (
            "available",
            match lang {
                Lang::Vi => format!("Còn chỗ: còn {seats_left} chỗ trống lúc này."),
                Lang::En => format!("Available: {seats_left} seats free at this time."),
            },
        ),
        Availability::Waitlist => (
            "waitlist",
            match lang {
                Lang::Vi => format!(
                    "Giờ này đã kín chỗ cho {party_size} người: nếu xác nhận, yêu cầu sẽ vào danh sách chờ, chưa có bàn."
                ),
                Lang::En => format!(
                    "This time is full for {party_size}: if you confirm, the request goes on the waiting list, with no table yet."
                ),
            },
        ),
    };
    view! {
        <dl class="fields booking-facts">
            <div class="field-row">
                <dt>{lang.pick("Nhà hàng", "Restaurant")}</dt>
                <dd class="restaurant-name">{restaurant_name}</dd>
            </div>
            <div class="field-row">
                <dt>{lang.pick("Địa chỉ", "Address")}</dt>
                <dd class="restaurant-address">{format!("{address}, {city}")}</dd>
            </div>
            <div class="field-row">
                <dt>{lang.pick("Thời gian", "Time")}</dt>
                <dd class="booking-when">{when}</dd>
            </div>
            <div class="field-row">
                <dt>{lang.pick("Số người", "Party size")}</dt>
                <dd class="booking-party">{party_size.to_string()}</dd>
            </div>
        </dl>
        <p class=format!("availability availability-{room_key}") data-availability=room_key role="status">
            {room}
        </p>
    }
    .into_any()
}

/// The form after the decision: locked, with what was decided.
fn decided_form(call_id: &str, input: &CreateBookingInput, approved: bool) -> PartView {
    let values = FormValues::from_input(input);
    let party_id = field_id(call_id, "party-size");
    let starts_id = field_id(call_id, "starts-at");
    let lang = lang();
    let status = if approved {
        lang.pick("Đang đặt bàn…", "Booking the table…")
    } else {
        lang.pick("Đã từ chối", "Declined")
    };
    let confirm = lang.pick("Xác nhận đặt bàn", "Confirm the booking");
    view! {
        <form class="card booking-form locked" aria-label=confirm aria-busy=approved.to_string()>
            <p class="card-kicker">{lang.pick("Yêu cầu đặt bàn", "Booking request")}</p>
            <dl class="fields">
                <div class="field-row">
                    <dt>{lang.pick("Nhà hàng", "Restaurant")}</dt>
                    <dd class="restaurant-id">{input.restaurant_id.clone()}</dd>
                </div>
            </dl>
            <div class="form-field">
                <label for=party_id.clone()>{lang.pick("Số người", "Party size")}</label>
                <input id=party_id type="number" name="partySize" value=values.party_size disabled/>
            </div>
            <div class="form-field">
                <label for=starts_id.clone()>{lang.pick("Thời gian", "Time")}</label>
                <input id=starts_id type="datetime-local" name="startsAt" value=values.starts_at disabled/>
                <p class="field-hint">
                    {lang.pick("Giờ địa phương của nhà hàng (", "The restaurant's local time (")}
                    {offset_label(&input.starts_at)}
                    ")"
                </p>
            </div>
            {decided_buttons(confirm, "button-primary", lang.pick("Từ chối", "Decline"), approved, status)}
        </form>
    }
    .into_part_view()
}

/// The receipt: shown only for a booking the tool committed.
fn receipt(output: CreateBookingOutput) -> PartView {
    let CreateBookingOutput {
        booking_id,
        status,
        restaurant_id: _,
        restaurant_name,
        party_size,
        starts_at,
    } = output;
    let lang = lang();
    let (status_key, status_text, id_label, note) = labels::booking_status(lang, status);
    view! {
        <article
            class=format!("card receipt receipt-{status_key}")
            data-testid="booking-receipt"
            data-booking-status=status_key
        >
            <p class="receipt-status">{status_text}</p>
            <p class="receipt-id-label">{id_label}</p>
            <p class="booking-id">{booking_id}</p>
            <dl class="fields">
                <div class="field-row">
                    <dt>{lang.pick("Nhà hàng", "Restaurant")}</dt>
                    <dd class="receipt-restaurant">{restaurant_name}</dd>
                </div>
                <div class="field-row">
                    <dt>{lang.pick("Thời gian", "Time")}</dt>
                    <dd class="receipt-time">{datetime(lang, &starts_at)}</dd>
                </div>
                <div class="field-row">
                    <dt>{lang.pick("Số người", "Party size")}</dt>
                    <dd class="receipt-party">{people(lang, u64::from(party_size))}</dd>
                </div>
            </dl>
            <p class="receipt-note">{note}</p>
        </article>
    }
    .into_part_view()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> CreateBookingInput {
        CreateBookingInput {
            restaurant_id: "hn-1".into(),
            party_size: 4,
            starts_at: DateTime::parse_from_rfc3339("2026-12-24T19:00:00+07:00").unwrap(),
        }
    }

    fn values(party_size: &str, starts_at: &str) -> FormValues {
        FormValues {
            party_size: party_size.into(),
            starts_at: starts_at.into(),
        }
    }

    #[test]
    fn form_is_prefilled_in_the_inputs_own_offset() {
        assert_eq!(
            FormValues::from_input(&input()),
            values("4", "2026-12-24T19:00")
        );
        assert_eq!(offset_label(&input().starts_at), "UTC+07:00");
    }

    #[test]
    fn unchanged_form_sends_no_edited_input() {
        let original = input();
        assert_eq!(
            edited_input(&original, &FormValues::from_input(&original)),
            Ok(None)
        );
        // The same values written differently are no change either.
        assert_eq!(
            edited_input(&original, &values(" 04 ", "2026-12-24T19:00:00")),
            Ok(None)
        );
        // Seconds the form cannot show do not count as an edit.
        let mut with_seconds = input();
        with_seconds.starts_at = DateTime::parse_from_rfc3339("2026-12-24T19:00:30+07:00").unwrap();
        assert_eq!(
            edited_input(&with_seconds, &FormValues::from_input(&with_seconds)),
            Ok(None)
        );
    }

    #[test]
    fn changed_time_keeps_the_original_offset() {
        let edited = edited_input(&input(), &values("4", "2026-12-24T20:30")).unwrap();
        assert_eq!(
            edited,
            Some(json!({
                "restaurantId": "hn-1",
                "partySize": 4,
                "startsAt": "2026-12-24T20:30:00+07:00"
            }))
        );
        // And it reads back as the tool's input.
        let back: CreateBookingInput = serde_json::from_value(edited.unwrap()).unwrap();
        assert_eq!(back.starts_at.offset().local_minus_utc(), 7 * 3600);
    }

    #[test]
    fn changed_party_size_sends_the_whole_input() {
        let mut original = input();
        original.starts_at = DateTime::parse_from_rfc3339("2026-12-24T19:00:00-03:30").unwrap();
        assert_eq!(
            edited_input(&original, &values("6", "2026-12-24T19:00")),
            Ok(Some(json!({
                "restaurantId": "hn-1",
                "partySize": 6,
                "startsAt": "2026-12-24T19:00:00-03:30"
            })))
        );
    }

    #[test]
    fn invalid_values_are_refused_not_sent() {
        let original = input();
        for party in ["", "0", "21", "3.5", "bốn", "-1", "999"] {
            assert!(
                edited_input(&original, &values(party, "2026-12-24T19:00")).is_err(),
                "party size {party:?}"
            );
        }
        for time in ["", "24/12/2026 19:00", "2026-13-01T19:00", "2026-12-24"] {
            assert!(
                edited_input(&original, &values("4", time)).is_err(),
                "time {time:?}"
            );
        }
    }

    #[test]
    fn draft_shows_what_the_partial_input_has() {
        let partial = json!({"restaurantId": "hn-1", "partySize": 4});
        let draft = Draft::from_partial(Lang::Vi, &partial);
        assert_eq!(draft.restaurant_id.as_deref(), Some("hn-1"));
        assert_eq!(draft.party_size.as_deref(), Some("4 người"));
        assert_eq!(draft.starts_at, None);
        let draft = Draft::from_partial(Lang::En, &partial);
        assert_eq!(draft.party_size.as_deref(), Some("4 people"));
        let partial = json!({"startsAt": "2026-12-24T19:00:00+07:00"});
        assert_eq!(
            Draft::from_partial(Lang::Vi, &partial).starts_at.as_deref(),
            Some("19:00, thứ Năm, 24/12/2026")
        );
        assert_eq!(
            Draft::from_partial(Lang::En, &partial).starts_at.as_deref(),
            Some("7:00 PM, Thu 24 Dec 2026")
        );
        // Half a timestamp is shown as it is.
        let draft = Draft::from_partial(Lang::En, &json!({"startsAt": "2026-12-2"}));
        assert_eq!(draft.starts_at.as_deref(), Some("2026-12-2"));
    }

    #[test]
    fn date_time_text_matches_chronos_formats() {
        for text in [
            "2026-12-24T19:00:00+07:00",
            "2026-01-02T03:04:05-03:30",
            "2026-06-30T23:59:59+00:00",
            "2026-06-30T23:59:59+05:45",
        ] {
            let at = DateTime::parse_from_rfc3339(text).unwrap();
            assert_eq!(
                rfc3339_with_offset(&at),
                at.format("%Y-%m-%dT%H:%M:%S%:z").to_string()
            );
            assert_eq!(offset_label(&at), format!("UTC{}", at.format("%:z")));
            assert_eq!(
                local_minutes(&at.naive_local()),
                at.format("%Y-%m-%dT%H:%M").to_string()
            );
        }
        for text in [
            "2026-12-24T19:00",
            "2026-12-24T19:00:30",
            "2026-12-24T19:00:30.5",
            "2026-12-24T19:00:30.123456789",
            "2024-02-29T00:00",
        ] {
            let chrono = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M")
                .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f"))
                .ok();
            assert!(chrono.is_some(), "{text}");
            assert_eq!(parse_local(text), chrono, "{text}");
        }
        for text in [
            "",
            "2026-12-24",
            "2026-12-24T19",
            "2026-12-24T19:00:",
            "2026-12-24T19:00.5",
            "2026-12-24T19:00:30.",
            "2026-12-24T19:00:30.1234567890",
            "2026-12-24T24:00",
            "2025-02-29T10:00",
            "2026-12-24T19:0a",
            "2026-12-24T+9:00",
            "2026-12-24 19:00",
            "24/12/2026 19:00",
        ] {
            assert_eq!(parse_local(text), None, "{text}");
        }
    }

    #[test]
    fn field_ids_are_safe() {
        assert_eq!(
            field_id("call_1 x/y", "party-size"),
            "booking-call-1-x-y-party-size"
        );
    }
}

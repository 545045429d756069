//! `checkAvailability` parts: a skeleton while it runs, then whether the time asked for
//! has a table and the nearest times that do. It books nothing, and says so.

use leptos::prelude::*;
use shared::{
    lang::Lang,
    message::ToolState,
    tools::{CheckAvailabilityInput, CheckAvailabilityOutput, FreeSlot},
};

use super::{error_notice, skeleton};
use crate::format::{people, time_hm, weekday_day_month};
use crate::i18n::{lang, t};
use crate::view::{IntoPartView, PartView};

fn loading() -> String {
    t("Đang xem còn bàn không…", "Checking for a free table…").to_owned()
}

/// The part in its current state.
pub fn render(state: ToolState<CheckAvailabilityInput, CheckAvailabilityOutput>) -> PartView {
    match state {
        ToolState::InputStreaming(_) => skeleton(loading(), None),
        ToolState::InputAvailable { input }
        | ToolState::ApprovalRequested { input, .. }
        | ToolState::ApprovalResponded { input, .. } => {
            skeleton(loading(), Some(asked(lang(), &input)))
        }
        ToolState::OutputAvailable { output, .. } => card(lang(), output),
        ToolState::OutputError { error, .. } => error_notice(
            t("Không xem được chỗ trống", "Could not check for a table").to_owned(),
            Some(error),
        ),
        ToolState::OutputDenied { .. } => view! {
            <p class="notice notice-muted">
                {t("Đã bỏ qua việc xem chỗ trống.", "Skipped checking for a table.")}
            </p>
        }
        .into_part_view(),
    }
}

/// "4 người, 19:00 Thứ Tư 2/12": what was asked, for the skeleton.
fn asked(lang: Lang, input: &CheckAvailabilityInput) -> String {
    format!(
        "{}, {} {}",
        people(lang, u64::from(input.party_size)),
        time_hm(lang, &input.starts_at),
        weekday_day_month(lang, input.starts_at.date_naive())
    )
}

/// The answer's headline: a table or not, at the time asked.
fn verdict(lang: Lang, output: &CheckAvailabilityOutput) -> String {
    let at = time_hm(lang, &output.starts_at);
    match (output.available, output.seats_left, lang) {
        (true, _, Lang::Vi) => format!("Còn bàn lúc {at}"),
        (true, _, Lang::En) => format!("A table is free at {at}"),
        (false, Some(_), Lang::Vi) => format!("Hết bàn lúc {at}"),
        (false, Some(_), Lang::En) => format!("No table at {at}"),
        (false, None, Lang::Vi) => format!("Không nhận khách lúc {at}"),
        (false, None, Lang::En) => format!("No seating at {at}"),
    }
}

fn card(lang: Lang, output: CheckAvailabilityOutput) -> PartView {
    let headline = verdict(lang, &output);
    let detail = format!(
        "{} · {} · {}",
        people(lang, u64::from(output.party_size)),
        weekday_day_month(lang, output.starts_at.date_naive()),
        output.opening_hours
    );
    let nearest = if output.nearest.is_empty() {
        view! {
            <p class="slots-none">
                {lang.pick("Hôm đó không còn giờ nào khác đủ chỗ.", "No other time that day has room.")}
            </p>
        }
        .into_part_view()
    } else {
        let label = if output.available {
            lang.pick("Giờ khác còn trống:", "Other free times:")
        } else {
            lang.pick("Giờ gần nhất còn trống:", "Nearest free times:")
        };
        view! {
            <div class="slots">
                <p class="slots-label">{label}</p>
                <ul class="slot-list">
                    {output.nearest.into_iter().map(|slot| slot_chip(lang, slot)).collect_view()}
                </ul>
            </div>
        }
        .into_part_view()
    };
    view! {
        <article class="card availability" data-available=output.available.to_string()>
            <h3 class="card-title">{output.restaurant_name}</h3>
            <p class="availability-verdict">{headline}</p>
            <p class="muted">{detail}</p>
            {nearest}
            <p class="muted availability-note">
                {lang.pick("Chưa đặt bàn nào.", "Nothing is booked yet.")}
            </p>
        </article>
    }
    .into_part_view()
}

fn slot_chip(lang: Lang, slot: FreeSlot) -> impl IntoView {
    let seats = match (lang, slot.seats_left) {
        (Lang::Vi, seats) => format!("Còn {seats} chỗ"),
        (Lang::En, 1) => "1 seat left".to_owned(),
        (Lang::En, seats) => format!("{seats} seats left"),
    };
    view! { <li class="slot-chip" title=seats>{time_hm(lang, &slot.starts_at)}</li> }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(available: bool, seats_left: Option<u32>) -> CheckAvailabilityOutput {
        CheckAvailabilityOutput {
            restaurant_id: "hn-x".into(),
            restaurant_name: "X".into(),
            opening_hours: "10:00–22:00".into(),
            party_size: 4,
            starts_at: "2026-12-02T19:00:00+07:00".parse().unwrap(),
            available,
            seats_left,
            nearest: Vec::new(),
        }
    }

    #[test]
    fn the_verdict_says_which_of_the_three_it_is() {
        assert_eq!(
            verdict(Lang::Vi, &output(true, Some(8))),
            "Còn bàn lúc 19:00"
        );
        assert_eq!(
            verdict(Lang::En, &output(false, Some(2))),
            "No table at 7:00 PM"
        );
        assert_eq!(
            verdict(Lang::En, &output(false, None)),
            "No seating at 7:00 PM"
        );
    }
}

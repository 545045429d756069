//! `getWeather` parts: a skeleton while it runs, then the forecast card.

use leptos::prelude::*;
use shared::{
    message::ToolState,
    tools::{DailyForecast, GetWeatherInput, GetWeatherOutput},
};

use super::{error_notice, partial_str, skeleton};
use crate::format::{days_asked, weekday_day_month};
use crate::i18n::{lang, t};
use crate::labels;
use crate::view::{IntoPartView, PartView};

fn loading() -> String {
    t("Đang xem thời tiết…", "Checking the weather…").to_owned()
}

/// The part in its current state.
pub fn render(state: ToolState<GetWeatherInput, GetWeatherOutput>) -> PartView {
    match state {
        ToolState::InputStreaming(input) => {
            skeleton(loading(), partial_str(input.partial(), "city"))
        }
        ToolState::InputAvailable { input } => skeleton(loading(), Some(input.city)),
        // getWeather never asks for approval; should a stored part say so anyway, it is
        // still just a forecast being fetched.
        ToolState::ApprovalRequested { input, .. } | ToolState::ApprovalResponded { input, .. } => {
            skeleton(loading(), Some(input.city))
        }
        ToolState::OutputAvailable { output, .. } => forecast(output),
        ToolState::OutputError { error, .. } => error_notice(
            t("Không xem được thời tiết", "Could not get the weather").to_owned(),
            Some(error),
        ),
        ToolState::OutputDenied { input } => view! {
            <p class="notice notice-muted">
                {t("Đã bỏ qua việc xem thời tiết ở ", "Skipped the weather for ")} {input.city} "."
            </p>
        }
        .into_part_view(),
    }
}

fn forecast(output: GetWeatherOutput) -> PartView {
    let GetWeatherOutput { city, days, asked } = output;
    // The days the call named, said in the title: the rows alone would leave the person
    // to work out that "Sat 5 Dec" and "Sun 6 Dec" are the weekend they asked about.
    let asked = asked.map(|asked| days_asked(lang(), asked.from, asked.to));
    let body = if days.is_empty() {
        view! { <p class="muted">{t("Không có dữ liệu dự báo.", "No forecast data.")}</p> }
            .into_part_view()
    } else {
        view! { <ul class="forecast">{days.into_iter().map(day_row).collect_view()}</ul> }
            .into_part_view()
    };
    view! {
        <article class="card weather">
            <h3 class="card-title">
                {t("Thời tiết ", "Weather in ")}
                <span class="weather-city">{city}</span>
                {asked.map(|asked| view! { <span class="weather-days">" · " {asked}</span> })}
            </h3>
            {body}
        </article>
    }
    .into_part_view()
}

fn day_row(day: DailyForecast) -> impl IntoView {
    let lang = lang();
    let (emoji, label) = labels::weather(lang, day.condition);
    view! {
        <li class="forecast-day">
            <span class="forecast-date">{weekday_day_month(lang, day.date)}</span>
            <span class="forecast-condition">
                <span class="forecast-emoji" aria-hidden="true">{emoji}</span>
                " "
                {label}
            </span>
            <span class="forecast-temp">
                {format!("{}–{} °C", day.temp_min_c, day.temp_max_c)}
            </span>
            <span class="forecast-rain">
                {format!("{} {}%", lang.pick("Mưa", "Rain"), day.precipitation_chance)}
            </span>
        </li>
    }
}

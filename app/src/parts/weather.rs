//! `getWeather` parts: a skeleton while it runs, then the forecast card.

use leptos::prelude::*;
use shared::{
    message::ToolState,
    tools::{DailyForecast, GetWeatherInput, GetWeatherOutput, WeatherCondition},
};

use super::{error_notice, partial_str, skeleton};
use crate::format::day_month;
use crate::view::{IntoPartView, PartView};

const LOADING: &str = "Đang xem thời tiết…";

/// The part in its current state.
pub fn render(state: ToolState<GetWeatherInput, GetWeatherOutput>) -> PartView {
    match state {
        ToolState::InputStreaming(input) => {
            skeleton(LOADING.to_owned(), partial_str(input.partial(), "city"))
        }
        ToolState::InputAvailable { input } => skeleton(LOADING.to_owned(), Some(input.city)),
        // getWeather never asks for approval; should a stored part say so anyway, it is
        // still just a forecast being fetched.
        ToolState::ApprovalRequested { input, .. } | ToolState::ApprovalResponded { input, .. } => {
            skeleton(LOADING.to_owned(), Some(input.city))
        }
        ToolState::OutputAvailable { output, .. } => forecast(output),
        ToolState::OutputError { error, .. } => {
            error_notice("Không xem được thời tiết".to_owned(), Some(error))
        }
        ToolState::OutputDenied { input } => view! {
            <p class="notice notice-muted">"Đã bỏ qua việc xem thời tiết ở " {input.city} "."</p>
        }
        .into_part_view(),
    }
}

fn forecast(output: GetWeatherOutput) -> PartView {
    let GetWeatherOutput { city, days } = output;
    let body = if days.is_empty() {
        view! { <p class="muted">"Không có dữ liệu dự báo."</p> }.into_part_view()
    } else {
        view! { <ul class="forecast">{days.into_iter().map(day_row).collect_view()}</ul> }
            .into_part_view()
    };
    view! {
        <article class="card weather">
            <h3 class="card-title">"Thời tiết " <span class="weather-city">{city}</span></h3>
            {body}
        </article>
    }
    .into_part_view()
}

fn day_row(day: DailyForecast) -> impl IntoView {
    let (emoji, label) = condition(day.condition);
    view! {
        <li class="forecast-day">
            <span class="forecast-date">{day_month(day.date)}</span>
            <span class="forecast-condition">
                <span class="forecast-emoji" aria-hidden="true">{emoji}</span>
                " "
                {label}
            </span>
            <span class="forecast-temp">
                {format!("{}–{} °C", day.temp_min_c, day.temp_max_c)}
            </span>
            <span class="forecast-rain">{format!("Mưa {}%", day.precipitation_chance)}</span>
        </li>
    }
}

/// Icon and Vietnamese name of the sky.
fn condition(condition: WeatherCondition) -> (&'static str, &'static str) {
    match condition {
        WeatherCondition::Sunny => ("☀️", "Nắng"),
        WeatherCondition::PartlyCloudy => ("⛅", "Có mây"),
        WeatherCondition::Cloudy => ("☁️", "Nhiều mây"),
        WeatherCondition::Rain => ("🌧️", "Mưa"),
        WeatherCondition::Storm => ("⛈️", "Dông"),
    }
}

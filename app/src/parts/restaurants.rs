//! `searchRestaurants` parts: a skeleton while it runs, then restaurant cards or an empty
//! state with the reason.

use leptos::prelude::*;
use shared::{
    message::ToolState,
    tools::{FreeSlot, RestaurantSummary, SearchRestaurantsInput, SearchRestaurantsOutput},
};

use super::{error_notice, partial_str, skeleton};
use crate::format::{price_level, time_hm};
use crate::view::{IntoPartView, PartView};

/// The part in its current state.
pub fn render(state: ToolState<SearchRestaurantsInput, SearchRestaurantsOutput>) -> PartView {
    match state {
        ToolState::InputStreaming(input) => searching(partial_str(input.partial(), "city")),
        ToolState::InputAvailable { input } => searching(Some(input.city)),
        // searchRestaurants never asks for approval; a stored part saying so is still a search.
        ToolState::ApprovalRequested { input, .. } | ToolState::ApprovalResponded { input, .. } => {
            searching(Some(input.city))
        }
        ToolState::OutputAvailable { input, output } => results(input, output),
        ToolState::OutputError { error, .. } => {
            error_notice("Không tìm được nhà hàng".to_owned(), Some(error))
        }
        ToolState::OutputDenied { input } => view! {
            <p class="notice notice-muted">"Đã bỏ qua việc tìm nhà hàng ở " {input.city} "."</p>
        }
        .into_part_view(),
    }
}

fn searching(city: Option<String>) -> PartView {
    let title = match city {
        Some(city) => format!("Đang tìm nhà hàng ở {city}…"),
        None => "Đang tìm nhà hàng…".to_owned(),
    };
    skeleton(title, None)
}

fn results(input: SearchRestaurantsInput, output: SearchRestaurantsOutput) -> PartView {
    let SearchRestaurantsOutput {
        restaurants,
        no_results_reason,
    } = output;
    if restaurants.is_empty() {
        let reason = no_results_reason
            .filter(|reason| !reason.trim().is_empty())
            .unwrap_or_else(|| format!("Không tìm thấy nhà hàng phù hợp ở {}.", input.city));
        return view! {
            <div class="card empty-results" role="status">
                <p class="empty-reason">{reason}</p>
                <p class="empty-suggestion">"Thử đổi ngày, món ăn hoặc số người"</p>
            </div>
        }
        .into_part_view();
    }
    let asked_for_slots = input.date.is_some();
    let count = restaurants.len();
    view! {
        <section class="restaurants" aria-label=format!("Nhà hàng ở {}", input.city)>
            <p class="results-summary">{format!("{count} nhà hàng ở {}", input.city)}</p>
            <ul class="restaurant-list">
                {restaurants
                    .into_iter()
                    .map(|restaurant| restaurant_card(restaurant, asked_for_slots))
                    .collect_view()}
            </ul>
        </section>
    }
    .into_part_view()
}

fn restaurant_card(restaurant: RestaurantSummary, asked_for_slots: bool) -> impl IntoView {
    let RestaurantSummary {
        id,
        name,
        address,
        city: _,
        cuisine,
        price_level: level,
        opening_hours,
        free_slots,
        // Not shown on the card (yet); it is there for the model, as data.
        review: _,
    } = restaurant;
    let price = price_level(level);
    let price_label = format!("Mức giá {}/4", level.clamp(1, 4));
    let price_title = price_label.clone();
    let slots = if !free_slots.is_empty() {
        view! {
            <div class="slots">
                <p class="slots-label">"Giờ còn trống:"</p>
                <ul class="slot-list">{free_slots.into_iter().map(slot_chip).collect_view()}</ul>
            </div>
        }
        .into_part_view()
    } else if asked_for_slots {
        view! { <p class="slots-none">"Không còn giờ trống vào ngày này."</p> }.into_part_view()
    } else {
        ().into_part_view()
    };
    view! {
        <li class="card restaurant-card" data-restaurant-id=id>
            <h3 class="card-title restaurant-name">{name}</h3>
            <p class="restaurant-meta">
                <span class="restaurant-cuisine">{cuisine}</span>
                <span class="restaurant-price" title=price_title>
                    <span aria-hidden="true">{price}</span>
                    <span class="visually-hidden">{price_label}</span>
                </span>
            </p>
            <p class="restaurant-address">{address}</p>
            <p class="restaurant-hours">"Giờ mở cửa: " {opening_hours}</p>
            {slots}
        </li>
    }
}

fn slot_chip(slot: FreeSlot) -> impl IntoView {
    let seats = format!("Còn {} chỗ", slot.seats_left);
    view! {
        <li class="slot-chip" title=seats>
            {time_hm(&slot.starts_at)}
        </li>
    }
}

//! `searchRestaurants` parts: a skeleton while it runs, then restaurant cards or an empty
//! state with the reason.

use leptos::prelude::*;
use shared::{
    message::ToolState,
    tools::{FreeSlot, RestaurantSummary, SearchRestaurantsInput, SearchRestaurantsOutput},
};

use super::{error_notice, partial_str, skeleton};
use crate::format::{price_level, time_hm};
use crate::i18n::{lang, t, Lang};
use crate::labels;
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
        ToolState::OutputError { error, .. } => error_notice(
            t("Không tìm được nhà hàng", "Could not search restaurants").to_owned(),
            Some(error),
        ),
        ToolState::OutputDenied { input } => view! {
            <p class="notice notice-muted">
                {t("Đã bỏ qua việc tìm nhà hàng ở ", "Skipped the restaurant search in ")}
                {input.city}
                "."
            </p>
        }
        .into_part_view(),
    }
}

fn searching(city: Option<String>) -> PartView {
    skeleton(searching_title(lang(), city.as_deref()), None)
}

/// "Đang tìm nhà hàng ở Huế…"; "Searching restaurants in Huế…".
fn searching_title(lang: Lang, city: Option<&str>) -> String {
    match (lang, city) {
        (Lang::Vi, Some(city)) => format!("Đang tìm nhà hàng ở {city}…"),
        (Lang::Vi, None) => "Đang tìm nhà hàng…".to_owned(),
        (Lang::En, Some(city)) => format!("Searching restaurants in {city}…"),
        (Lang::En, None) => "Searching restaurants…".to_owned(),
    }
}

fn results(input: SearchRestaurantsInput, output: SearchRestaurantsOutput) -> PartView {
    let lang = lang();
    let SearchRestaurantsOutput {
        restaurants,
        no_results_reason,
    } = output;
    if restaurants.is_empty() {
        // The tool writes its reason in Vietnamese only: an English page says it in its
        // own words rather than show another language.
        let reason = no_results_reason
            .filter(|reason| lang == Lang::Vi && !reason.trim().is_empty())
            .unwrap_or_else(|| match lang {
                Lang::Vi => format!("Không tìm thấy nhà hàng phù hợp ở {}.", input.city),
                Lang::En => format!("No matching restaurants in {}.", input.city),
            });
        return view! {
            <div class="card empty-results" role="status">
                <p class="empty-reason">{reason}</p>
                <p class="empty-suggestion">
                    {lang.pick(
                        "Thử đổi ngày, món ăn hoặc số người",
                        "Try another date, cuisine or party size",
                    )}
                </p>
            </div>
        }
        .into_part_view();
    }
    let asked_for_slots = input.date.is_some();
    let count = restaurants.len();
    view! {
        <section class="restaurants" aria-label=summary(lang, None, &input.city)>
            <p class="results-summary">{summary(lang, Some(count), &input.city)}</p>
            <ul class="restaurant-list">
                {restaurants
                    .into_iter()
                    .map(|restaurant| restaurant_card(lang, restaurant, asked_for_slots))
                    .collect_view()}
            </ul>
        </section>
    }
    .into_part_view()
}

/// "3 nhà hàng ở Huế"; "3 restaurants in Huế" (without a count: "Nhà hàng ở Huế").
fn summary(lang: Lang, count: Option<usize>, city: &str) -> String {
    match (lang, count) {
        (Lang::Vi, Some(count)) => format!("{count} nhà hàng ở {city}"),
        (Lang::Vi, None) => format!("Nhà hàng ở {city}"),
        (Lang::En, Some(1)) => format!("1 restaurant in {city}"),
        (Lang::En, Some(count)) => format!("{count} restaurants in {city}"),
        (Lang::En, None) => format!("Restaurants in {city}"),
    }
}

fn restaurant_card(
    lang: Lang,
    restaurant: RestaurantSummary,
    asked_for_slots: bool,
) -> impl IntoView {
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
    let price_label = format!(
        "{} {}/4",
        lang.pick("Mức giá", "Price level"),
        level.clamp(1, 4)
    );
    let price_title = price_label.clone();
    let slots = if !free_slots.is_empty() {
        view! {
            <div class="slots">
                <p class="slots-label">{lang.pick("Giờ còn trống:", "Free times:")}</p>
                <ul class="slot-list">
                    {free_slots.into_iter().map(|slot| slot_chip(lang, slot)).collect_view()}
                </ul>
            </div>
        }
        .into_part_view()
    } else if asked_for_slots {
        view! {
            <p class="slots-none">
                {lang.pick("Không còn giờ trống vào ngày này.", "No free times left on that day.")}
            </p>
        }
        .into_part_view()
    } else {
        ().into_part_view()
    };
    view! {
        <li class="card restaurant-card" data-restaurant-id=id>
            <h3 class="card-title restaurant-name">{name}</h3>
            <p class="restaurant-meta">
                <span class="restaurant-cuisine">{labels::cuisine(lang, &cuisine)}</span>
                <span class="restaurant-price" title=price_title>
                    <span aria-hidden="true">{price}</span>
                    <span class="visually-hidden">{price_label}</span>
                </span>
            </p>
            <p class="restaurant-address">{address}</p>
            <p class="restaurant-hours">
                {lang.pick("Giờ mở cửa: ", "Opening hours: ")}
                {opening_hours}
            </p>
            {slots}
        </li>
    }
}

fn slot_chip(lang: Lang, slot: FreeSlot) -> impl IntoView {
    let seats = match (lang, slot.seats_left) {
        (Lang::Vi, seats) => format!("Còn {seats} chỗ"),
        (Lang::En, 1) => "1 seat left".to_owned(),
        (Lang::En, seats) => format!("{seats} seats left"),
    };
    view! {
        <li class="slot-chip" title=seats>
            {time_hm(lang, &slot.starts_at)}
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_in_both_languages() {
        assert_eq!(summary(Lang::Vi, Some(3), "Huế"), "3 nhà hàng ở Huế");
        assert_eq!(summary(Lang::En, Some(3), "Huế"), "3 restaurants in Huế");
        assert_eq!(summary(Lang::En, Some(1), "Huế"), "1 restaurant in Huế");
        assert_eq!(summary(Lang::En, None, "Huế"), "Restaurants in Huế");
        assert_eq!(
            searching_title(Lang::En, Some("Huế")),
            "Searching restaurants in Huế…"
        );
        assert_eq!(searching_title(Lang::Vi, None), "Đang tìm nhà hàng…");
    }
}

//! `shipping_quote` parts: a skeleton while it runs, then the quote card. The amount is in
//! DEMO, a made-up currency, and the card says so; an error shows no amount at all.

use leptos::prelude::*;
use serde_json::Value;
use shared::{
    message::ToolState,
    tools::{ShippingQuoteInput, ShippingQuoteOutput, Zone},
};

use super::{error_notice, partial_str, skeleton};
use crate::view::{IntoPartView, PartView};

const LOADING: &str = "Đang tính phí giao hàng…";

/// The line every quote carries: the amount is not money.
const NOT_MONEY: &str =
    "DEMO là đơn vị tiền giả lập, không phải tiền thật — đây chỉ là báo giá minh hoạ, không ai phải trả khoản này.";

/// The part in its current state.
pub fn render(state: ToolState<ShippingQuoteInput, ShippingQuoteOutput>) -> PartView {
    match state {
        ToolState::InputStreaming(input) => {
            skeleton(LOADING.to_owned(), partial_detail(input.partial()))
        }
        ToolState::InputAvailable { input } => skeleton(LOADING.to_owned(), Some(detail(&input))),
        // shipping_quote never asks for approval; a stored part saying so is still a quote
        // being computed.
        ToolState::ApprovalRequested { input, .. } | ToolState::ApprovalResponded { input, .. } => {
            skeleton(LOADING.to_owned(), Some(detail(&input)))
        }
        ToolState::OutputAvailable { output, .. } => quote(output),
        ToolState::OutputError { error, .. } => {
            error_notice("Chưa có báo giá giao hàng".to_owned(), Some(error))
        }
        ToolState::OutputDenied { input } => view! {
            <p class="notice notice-muted">
                "Đã bỏ qua việc báo giá giao hàng (" {detail(&input)} ")."
            </p>
        }
        .into_part_view(),
    }
}

/// The zone as people here say it.
pub fn zone_vi(zone: Zone) -> &'static str {
    match zone {
        Zone::Local => "Nội thành",
        Zone::Regional => "Liên tỉnh",
    }
}

fn detail(input: &ShippingQuoteInput) -> String {
    format!("{}, {} kg", zone_vi(input.zone), input.weight_kg)
}

/// What of the zone and weight has arrived, for the skeleton.
fn partial_detail(partial: &Value) -> Option<String> {
    let zone = partial_str(partial, "zone").map(|zone| match zone.as_str() {
        "local" => zone_vi(Zone::Local).to_owned(),
        "regional" => zone_vi(Zone::Regional).to_owned(),
        // Half a word, or a value the server will reject: show it as it is.
        _ => zone,
    });
    let weight = partial
        .get("weight_kg")
        .filter(|weight| weight.is_number())
        .map(|weight| format!("{weight} kg"));
    match (zone, weight) {
        (Some(zone), Some(weight)) => Some(format!("{zone}, {weight}")),
        (zone, weight) => zone.or(weight),
    }
}

fn quote(output: ShippingQuoteOutput) -> PartView {
    let ShippingQuoteOutput {
        zone,
        weight_kg,
        amount,
        currency,
        fictional: _,
    } = output;
    view! {
        <article class="card shipping-quote" data-currency=currency.clone()>
            <p class="card-kicker">"Báo giá giao hàng"</p>
            <dl class="fields">
                <div class="field-row">
                    <dt>"Khu vực"</dt>
                    <dd class="quote-zone">{zone_vi(zone)}</dd>
                </div>
                <div class="field-row">
                    <dt>"Khối lượng"</dt>
                    <dd class="quote-weight">{format!("{weight_kg} kg")}</dd>
                </div>
            </dl>
            <p class="quote-amount">{format!("{amount} {currency}")}</p>
            <p class="quote-not-money" role="note">{NOT_MONEY}</p>
        </article>
    }
    .into_part_view()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn skeleton_shows_what_has_arrived() {
        assert_eq!(
            partial_detail(&json!({"zone": "local", "weight_kg": 2})),
            Some("Nội thành, 2 kg".to_owned())
        );
        assert_eq!(
            partial_detail(&json!({"zone": "regional"})),
            Some("Liên tỉnh".to_owned())
        );
        assert_eq!(
            partial_detail(&json!({"weight_kg": 2.5})),
            Some("2.5 kg".to_owned())
        );
        assert_eq!(
            partial_detail(&json!({"zone": "loc"})),
            Some("loc".to_owned())
        );
        assert_eq!(partial_detail(&json!({"weight_kg": "2"})), None);
        assert_eq!(partial_detail(&json!({})), None);
    }

    #[test]
    fn input_is_described_in_vietnamese() {
        let input: ShippingQuoteInput =
            serde_json::from_value(json!({"zone": "local", "weight_kg": 2.3})).unwrap();
        assert_eq!(detail(&input), "Nội thành, 2.3 kg");
    }
}

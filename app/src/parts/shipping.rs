//! `shipping_quote` parts: a skeleton while it runs, then the quote card. The amount is in
//! DEMO, a made-up currency, and the card says so; an error shows no amount at all.

use leptos::prelude::*;
use serde_json::Value;
use shared::{
    message::ToolState,
    tools::{ShippingQuoteInput, ShippingQuoteOutput, Zone},
};

use super::{error_notice, partial_str, skeleton};
use crate::format::decimal;
use crate::i18n::{lang, t, Lang};
use crate::labels;
use crate::view::{IntoPartView, PartView};

fn loading() -> String {
    t("Đang tính phí giao hàng…", "Working out the shipping cost…").to_owned()
}

/// The line every quote carries: the amount is not money.
fn not_money() -> &'static str {
    t(
        "DEMO là đơn vị tiền giả lập, không phải tiền thật — đây chỉ là báo giá minh hoạ, không ai phải trả khoản này.",
        "DEMO is a made-up currency, not real money — this is only an illustrative quote and nobody pays it.",
    )
}

/// The part in its current state.
pub fn render(state: ToolState<ShippingQuoteInput, ShippingQuoteOutput>) -> PartView {
    match state {
        ToolState::InputStreaming(input) => {
            skeleton(loading(), partial_detail(lang(), input.partial()))
        }
        ToolState::InputAvailable { input } => skeleton(loading(), Some(detail(lang(), &input))),
        // shipping_quote never asks for approval; a stored part saying so is still a quote
        // being computed.
        ToolState::ApprovalRequested { input, .. } | ToolState::ApprovalResponded { input, .. } => {
            skeleton(loading(), Some(detail(lang(), &input)))
        }
        ToolState::OutputAvailable { output, .. } => quote(output),
        ToolState::OutputError { error, .. } => error_notice(
            t("Chưa có báo giá giao hàng", "No shipping quote").to_owned(),
            Some(error),
        ),
        ToolState::OutputDenied { input } => view! {
            <p class="notice notice-muted">
                {t("Đã bỏ qua việc báo giá giao hàng (", "Skipped the shipping quote (")}
                {detail(lang(), &input)}
                ")."
            </p>
        }
        .into_part_view(),
    }
}

/// A weight as the language writes it: "2,5 kg"; "2.5 kg".
fn kilograms(lang: Lang, weight: impl std::fmt::Display) -> String {
    format!("{} kg", decimal(lang, &weight.to_string()))
}

fn detail(lang: Lang, input: &ShippingQuoteInput) -> String {
    format!(
        "{}, {}",
        labels::zone(lang, input.zone),
        kilograms(lang, input.weight_kg)
    )
}

/// What of the zone and weight has arrived, for the skeleton.
fn partial_detail(lang: Lang, partial: &Value) -> Option<String> {
    let zone = partial_str(partial, "zone").map(|zone| match zone.as_str() {
        "local" => labels::zone(lang, Zone::Local).to_owned(),
        "regional" => labels::zone(lang, Zone::Regional).to_owned(),
        // Half a word, or a value the server will reject: show it as it is.
        _ => zone,
    });
    let weight = partial
        .get("weight_kg")
        .filter(|weight| weight.is_number())
        .map(|weight| kilograms(lang, weight));
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
    let lang = lang();
    view! {
        <article class="card shipping-quote" data-currency=currency.clone()>
            <p class="card-kicker">{lang.pick("Báo giá giao hàng", "Shipping quote")}</p>
            <dl class="fields">
                <div class="field-row">
                    <dt>{lang.pick("Khu vực", "Zone")}</dt>
                    <dd class="quote-zone">{labels::zone(lang, zone)}</dd>
                </div>
                <div class="field-row">
                    <dt>{lang.pick("Khối lượng", "Weight")}</dt>
                    <dd class="quote-weight">{kilograms(lang, weight_kg)}</dd>
                </div>
            </dl>
            // The amount stays as the tool wrote it ("7.00"): DEMO is no currency of either
            // language, and the tests and the model read the same figure.
            <p class="quote-amount">{format!("{amount} {currency}")}</p>
            <p class="quote-not-money" role="note">{not_money()}</p>
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
            partial_detail(Lang::Vi, &json!({"zone": "local", "weight_kg": 2})),
            Some("Nội thành, 2 kg".to_owned())
        );
        assert_eq!(
            partial_detail(Lang::En, &json!({"zone": "local", "weight_kg": 2})),
            Some("Local (same city), 2 kg".to_owned())
        );
        assert_eq!(
            partial_detail(Lang::Vi, &json!({"zone": "regional"})),
            Some("Liên tỉnh".to_owned())
        );
        assert_eq!(
            partial_detail(Lang::Vi, &json!({"weight_kg": 2.5})),
            Some("2,5 kg".to_owned())
        );
        assert_eq!(
            partial_detail(Lang::En, &json!({"weight_kg": 2.5})),
            Some("2.5 kg".to_owned())
        );
        assert_eq!(
            partial_detail(Lang::En, &json!({"zone": "loc"})),
            Some("loc".to_owned())
        );
        assert_eq!(partial_detail(Lang::Vi, &json!({"weight_kg": "2"})), None);
        assert_eq!(partial_detail(Lang::Vi, &json!({})), None);
    }

    #[test]
    fn input_is_described_in_the_pages_language() {
        let input: ShippingQuoteInput =
            serde_json::from_value(json!({"zone": "local", "weight_kg": 2.3})).unwrap();
        assert_eq!(detail(Lang::Vi, &input), "Nội thành, 2,3 kg");
        assert_eq!(detail(Lang::En, &input), "Local (same city), 2.3 kg");
    }
}

//! GiftGenius parts: `suggest_gifts` (gift cards or an empty state with the reason),
//! `prepare_checkout` (a draft: what would be bought, for how much) and
//! `create_checkout_session` (a confirmation form that can only approve or decline the
//! draft, then a receipt only once the fictional checkout exists).

use leptos::prelude::*;
use serde_json::Value;
use shared::{
    message::{ToolPart, ToolState},
    preview::ApprovalPreview,
    tools::{
        CheckoutDraft, CheckoutSession, CreateCheckoutSessionInput, ErrorCode, GiftSuggestion,
        PrepareCheckoutInput, SuggestGiftsInput, SuggestGiftsOutput,
    },
};

use super::{
    approval::{decided_buttons, decision_buttons, decision_result, moved_on, Approval},
    error_notice, partial_str, skeleton,
};
use crate::i18n::{lang, t, Lang};
use crate::view::{IntoPartView, PartView};
use crate::{format, labels, state::ChatState};

/// Said on every draft, form and receipt: nothing here moves money.
fn fictional() -> &'static str {
    t(
        "Thanh toán giả lập — không trừ tiền thật",
        "Simulated payment — no real money is charged",
    )
}

/// Whole đồng in the page's language.
fn vnd(amount: u32) -> String {
    format::vnd(lang(), amount)
}

/// A `suggest_gifts` part in its current state.
pub fn render_suggestions(state: ToolState<SuggestGiftsInput, SuggestGiftsOutput>) -> PartView {
    match state {
        ToolState::InputStreaming(input) => {
            searching(criteria_from_partial(lang(), input.partial()))
        }
        ToolState::InputAvailable { input } => searching(Some(criteria(lang(), &input))),
        // suggest_gifts never asks for approval; a stored part saying so is still a search.
        ToolState::ApprovalRequested { input, .. } | ToolState::ApprovalResponded { input, .. } => {
            searching(Some(criteria(lang(), &input)))
        }
        ToolState::OutputAvailable { input, output } => suggestions(&input, output),
        ToolState::OutputError { error, .. } => error_notice(
            t("Chưa gợi ý được quà", "Could not suggest gifts").to_owned(),
            Some(error),
        ),
        ToolState::OutputDenied { input } => view! {
            <p class="notice notice-muted">
                {t("Đã bỏ qua việc tìm quà cho ", "Skipped the gift search for ")}
                {labels::relationship(lang(), input.relationship_type)}
                "."
            </p>
        }
        .into_part_view(),
    }
}

/// A `prepare_checkout` part in its current state.
pub fn render_draft(state: ToolState<PrepareCheckoutInput, CheckoutDraft>) -> PartView {
    let preparing = || t("Đang chuẩn bị đơn quà…", "Preparing the gift order…").to_owned();
    match state {
        ToolState::InputStreaming(input) => {
            skeleton(preparing(), partial_str(input.partial(), "gift_id"))
        }
        ToolState::InputAvailable { input } => skeleton(preparing(), Some(input.gift_id)),
        // prepare_checkout only computes a draft and never asks; shown as being prepared.
        ToolState::ApprovalRequested { input, .. } | ToolState::ApprovalResponded { input, .. } => {
            skeleton(preparing(), Some(input.gift_id))
        }
        ToolState::OutputAvailable { output, .. } => draft_card(output),
        ToolState::OutputError { error, .. } => error_notice(
            t(
                "Chưa chuẩn bị được đơn quà",
                "Could not prepare the gift order",
            )
            .to_owned(),
            Some(error),
        ),
        ToolState::OutputDenied { input } => view! {
            <p class="notice notice-muted">
                {t("Đã bỏ qua việc chuẩn bị đơn cho món ", "Skipped preparing an order for ")}
                {input.gift_id}
                "."
            </p>
        }
        .into_part_view(),
    }
}

/// A `create_checkout_session` part in its current state.
pub fn render_checkout(
    call_id: String,
    state: ToolState<CreateCheckoutSessionInput, CheckoutSession>,
) -> PartView {
    match state {
        ToolState::InputStreaming(input) => skeleton(
            t(
                "Trợ lý đang soạn yêu cầu thanh toán…",
                "The assistant is writing the payment request…",
            )
            .to_owned(),
            partial_str(input.partial(), "draft_id"),
        ),
        ToolState::InputAvailable { input } => skeleton(
            t(
                "Đang chuẩn bị để bạn xác nhận…",
                "Getting it ready for your confirmation…",
            )
            .to_owned(),
            Some(input.draft_id),
        ),
        ToolState::ApprovalRequested { input, preview } => {
            let preview = match preview {
                Some(ApprovalPreview::Checkout(draft)) => Some(draft),
                _ => None,
            };
            view! { <CheckoutForm call_id input preview/> }.into_part_view()
        }
        ToolState::ApprovalResponded { input, approved } => decided_checkout(&input, approved),
        ToolState::OutputAvailable { output, .. } => decision_result(call_id, receipt(output)),
        ToolState::OutputError { error, .. } if error.code == ErrorCode::MovedOn => moved_on(
            call_id,
            error,
            t(
                "Chưa mua — không có gì bị trừ",
                "Not bought — you were not charged",
            ),
            t("Vẫn mua món này", "Buy it anyway"),
        ),
        ToolState::OutputError { error, .. } => error_notice(
            t(
                "Chưa mua được quà — không có gì bị trừ",
                "Nothing was bought — you were not charged",
            )
            .to_owned(),
            Some(error),
        ),
        ToolState::OutputDenied { .. } => view! {
            <p class="notice notice-muted" role="status">
                {t("Bạn đã huỷ — chưa mua gì.", "You cancelled — nothing was bought.")}
            </p>
        }
        .into_part_view(),
    }
}

/// The criteria in one line: "bố mẹ · làm vườn · dưới 1.000.000 ₫";
/// "parent · gardening · under 1,000,000 ₫".
fn criteria(lang: Lang, input: &SuggestGiftsInput) -> String {
    let mut pieces = vec![labels::relationship(lang, input.relationship_type).to_owned()];
    if let Some(age) = input.age {
        pieces.push(match lang {
            Lang::Vi => format!("{age} tuổi"),
            Lang::En => format!("age {age}"),
        });
    }
    if !input.interests.is_empty() {
        pieces.push(interests(lang, input.interests.iter().map(String::as_str)));
    }
    if let Some(budget) = budget(lang, input.budget_min, input.budget_max) {
        pieces.push(budget);
    }
    pieces.join(" · ")
}

/// Interests in the page's language, those the catalogue knows translated.
fn interests<'a>(lang: Lang, said: impl Iterator<Item = &'a str>) -> String {
    said.map(|interest| labels::interest(lang, interest))
        .collect::<Vec<_>>()
        .join(", ")
}

fn budget(lang: Lang, min: Option<u32>, max: Option<u32>) -> Option<String> {
    let vnd = |amount| format::vnd(lang, amount);
    match (min, max) {
        (Some(min), Some(max)) => Some(format!("{} – {}", vnd(min), vnd(max))),
        (None, Some(max)) => Some(format!("{} {}", lang.pick("dưới", "under"), vnd(max))),
        (Some(min), None) => Some(format!("{} {}", lang.pick("từ", "from"), vnd(min))),
        (None, None) => None,
    }
}

/// What of the criteria has arrived, for the skeleton; display only.
fn criteria_from_partial(lang: Lang, partial: &Value) -> Option<String> {
    let mut pieces = Vec::new();
    if let Some(interests) = partial.get("interests").and_then(Value::as_array) {
        let interests: Vec<&str> = interests
            .iter()
            .filter_map(Value::as_str)
            .map(str::trim)
            .filter(|interest| !interest.is_empty())
            .collect();
        if !interests.is_empty() {
            pieces.push(self::interests(lang, interests.into_iter()));
        }
    }
    let amount = |key: &str| {
        partial
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|amount| u32::try_from(amount).ok())
    };
    if let Some(budget) = budget(lang, amount("budget_min"), amount("budget_max")) {
        pieces.push(budget);
    }
    (!pieces.is_empty()).then(|| pieces.join(" · "))
}

fn searching(criteria: Option<String>) -> PartView {
    skeleton(
        t("Đang tìm quà phù hợp…", "Looking for fitting gifts…").to_owned(),
        criteria,
    )
}

fn suggestions(input: &SuggestGiftsInput, output: SuggestGiftsOutput) -> PartView {
    let SuggestGiftsOutput {
        gifts,
        no_results_reason,
    } = output;
    let lang = lang();
    let for_whom = criteria(lang, input);
    if gifts.is_empty() {
        // The tool writes its reason in Vietnamese only (see `restaurants::render`).
        let reason = no_results_reason
            .map(|reason| reason.trim().to_owned())
            .filter(|reason| lang == Lang::Vi && !reason.is_empty())
            .unwrap_or_else(|| {
                lang.pick(
                    "Không có món quà nào trong danh mục khớp với yêu cầu.",
                    "No gift in our catalogue matches.",
                )
                .to_owned()
            });
        return view! {
            <div class="card empty-results gift-empty" role="status">
                <p class="empty-reason">{reason}</p>
                <p class="empty-suggestion">
                    {lang.pick(
                        "Thử nới ngân sách hoặc kể thêm về sở thích của người nhận.",
                        "Try a wider budget, or say more about what they like.",
                    )}
                </p>
                <p class="gift-criteria">{lang.pick("Tiêu chí: ", "Criteria: ")} {for_whom}</p>
            </div>
        }
        .into_part_view();
    }
    let count = gifts.len();
    let summary = match (lang, count) {
        (Lang::Vi, _) => format!("{count} gợi ý quà · {for_whom}"),
        (Lang::En, 1) => format!("1 gift idea · {for_whom}"),
        (Lang::En, _) => format!("{count} gift ideas · {for_whom}"),
    };
    view! {
        <section class="gifts" aria-label=lang.pick("Gợi ý quà", "Gift ideas")>
            <p class="results-summary">{summary}</p>
            <ul class="gift-list">
                {gifts.into_iter().map(|gift| gift_card(lang, gift)).collect_view()}
            </ul>
        </section>
    }
    .into_part_view()
}

fn gift_card(lang: Lang, gift: GiftSuggestion) -> impl IntoView {
    let GiftSuggestion {
        gift_id,
        name,
        description,
        price_vnd,
        matched_interests,
    } = gift;
    let interests = (!matched_interests.is_empty()).then(|| {
        view! {
            <p class="gift-interests">
                <span class="gift-interests-label">{lang.pick("Hợp với: ", "Matches: ")}</span>
                {matched_interests
                    .into_iter()
                    .map(|interest| {
                        view! {
                            <span class="interest-chip">{labels::interest(lang, &interest)}</span>
                        }
                    })
                    .collect_view()}
            </p>
        }
    });
    view! {
        <li class="card gift-card" data-gift-id=gift_id>
            <div class="gift-head">
                <h3 class="card-title gift-name">{name}</h3>
                <p class="gift-price">{vnd(price_vnd)}</p>
            </div>
            <p class="gift-description">{description}</p>
            {interests}
        </li>
    }
}

fn delivery(lang: Lang, amount: u32) -> String {
    if amount == 0 {
        lang.pick("Miễn phí", "Free").to_owned()
    } else {
        format::vnd(lang, amount)
    }
}

fn draft_card(draft: CheckoutDraft) -> PartView {
    let CheckoutDraft {
        draft_id,
        gift_id: _,
        gift_name,
        price_vnd,
        delivery_vnd,
        total_vnd,
        fictional: _,
    } = draft;
    let lang = lang();
    view! {
        <article class="card checkout-draft" data-draft-id=draft_id>
            <p class="card-kicker">{lang.pick("Bản nháp thanh toán", "Checkout draft")}</p>
            <dl class="fields">
                <div class="field-row">
                    <dt>{lang.pick("Món quà", "Gift")}</dt>
                    <dd class="checkout-gift">{gift_name}</dd>
                </div>
                <div class="field-row">
                    <dt>{lang.pick("Giá", "Price")}</dt>
                    <dd class="checkout-price">{vnd(price_vnd)}</dd>
                </div>
                <div class="field-row">
                    <dt>{lang.pick("Giao hàng", "Delivery")}</dt>
                    <dd class="checkout-delivery">{delivery(lang, delivery_vnd)}</dd>
                </div>
                <div class="field-row total-row">
                    <dt>{lang.pick("Tổng cộng", "Total")}</dt>
                    <dd class="checkout-total">{vnd(total_vnd)}</dd>
                </div>
            </dl>
            <p class="fictional-note">{fictional()}</p>
            <p class="draft-status">
                {lang.pick(
                    "Chưa mua gì — chỉ mua khi bạn xác nhận.",
                    "Nothing is bought yet — only when you confirm.",
                )}
            </p>
        </article>
    }
    .into_part_view()
}

/// The draft a checkout commits, as `prepare_checkout` returned it in this conversation.
fn find_draft(chat: Option<ChatState>, draft_id: &str) -> Option<CheckoutDraft> {
    chat?.find_tool(|part| match part {
        // Read here, in the chunk, like every view's data (`ToolState::read`).
        ToolPart::PrepareCheckout(call) => match call.state.clone().read() {
            ToolState::OutputAvailable { output, .. } if output.draft_id == draft_id => {
                Some(output)
            }
            _ => None,
        },
        _ => None,
    })
}

/// What the form shows of the draft: read-only, since a confirmation may only approve or
/// decline what the assistant prepared.
fn draft_summary(draft_id: &str, draft: Option<CheckoutDraft>) -> impl IntoView {
    let lang = lang();
    let rows = match draft {
        Some(draft) => view! {
            <div class="field-row">
                <dt>{lang.pick("Món quà", "Gift")}</dt>
                <dd class="checkout-gift">{draft.gift_name}</dd>
            </div>
            <div class="field-row">
                <dt>{lang.pick("Giao hàng", "Delivery")}</dt>
                <dd class="checkout-delivery">{delivery(lang, draft.delivery_vnd)}</dd>
            </div>
            <div class="field-row total-row">
                <dt>{lang.pick("Tổng cộng", "Total")}</dt>
                <dd class="checkout-total">{vnd(draft.total_vnd)}</dd>
            </div>
        }
        .into_part_view(),
        None => view! {
            <div class="field-row">
                <dt>{lang.pick("Chi tiết", "Details")}</dt>
                <dd class="pending">
                    {lang.pick(
                        "Không thấy bản nháp này trong cuộc trò chuyện.",
                        "This draft is not in the conversation.",
                    )}
                </dd>
            </div>
        }
        .into_part_view(),
    };
    view! {
        <dl class="fields">
            {rows}
            <div class="field-row">
                <dt>{lang.pick("Bản nháp", "Draft")}</dt>
                <dd class="draft-id">{draft_id.to_owned()}</dd>
            </div>
        </dl>
    }
}

/// The confirmation form: two buttons and nothing to edit. It locks at the first click.
#[component]
fn CheckoutForm(
    call_id: String,
    input: CreateCheckoutSessionInput,
    preview: Option<CheckoutDraft>,
) -> impl IntoView {
    // The server's figures as of now; the conversation's copy only for older messages.
    let draft = preview.or_else(|| find_draft(use_context::<ChatState>(), &input.draft_id));
    let approval = Approval::new(call_id);
    let decide = move |approved: bool| {
        if approval.is_open() {
            approval.decide(approved, None);
        }
    };
    view! {
        <form
            class="card checkout-form"
            aria-label=t("Xác nhận thanh toán", "Confirm the payment")
            on:submit=move |ev| {
                ev.prevent_default();
                decide(true);
            }
        >
            <p class="card-kicker">{t("Xác nhận mua quà", "Confirm the gift purchase")}</p>
            <p class="form-hint">
                {t(
                    "Chưa có gì được mua cho đến khi bạn xác nhận. ",
                    "Nothing is bought until you confirm. ",
                )}
                {fictional()}
                "."
            </p>
            {draft_summary(&input.draft_id, draft)}
            {decision_buttons(
                approval,
                t("Xác nhận", "Confirm"),
                "button-primary",
                t("Huỷ", "Cancel"),
                move || decide(false),
            )}
        </form>
    }
}

/// The form after the decision: locked, with what was decided.
fn decided_checkout(input: &CreateCheckoutSessionInput, approved: bool) -> PartView {
    let draft = find_draft(use_context::<ChatState>(), &input.draft_id);
    let status = if approved {
        t(
            "Đang tạo thanh toán giả lập…",
            "Creating the simulated payment…",
        )
    } else {
        t("Đã huỷ", "Cancelled")
    };
    view! {
        <form
            class="card checkout-form locked"
            aria-label=t("Xác nhận thanh toán", "Confirm the payment")
            aria-busy=approved.to_string()
        >
            <p class="card-kicker">{t("Xác nhận mua quà", "Confirm the gift purchase")}</p>
            {draft_summary(&input.draft_id, draft)}
            {decided_buttons(
                t("Xác nhận", "Confirm"),
                "button-primary",
                t("Huỷ", "Cancel"),
                approved,
                status,
            )}
        </form>
    }
    .into_part_view()
}

/// The receipt: shown only for a checkout the tool recorded.
fn receipt(session: CheckoutSession) -> PartView {
    let CheckoutSession {
        checkout_id,
        draft_id: _,
        gift_name,
        total_vnd,
        payment_reference,
        fictional: _,
    } = session;
    let lang = lang();
    view! {
        <article class="card receipt checkout-receipt" data-testid="checkout-receipt">
            <p class="receipt-status">{lang.pick("Đã thanh toán (giả lập)", "Paid (simulated)")}</p>
            <p class="receipt-id-label">{lang.pick("Mã thanh toán", "Checkout reference")}</p>
            <p class="booking-id checkout-id">{checkout_id}</p>
            <dl class="fields">
                <div class="field-row">
                    <dt>{lang.pick("Món quà", "Gift")}</dt>
                    <dd class="receipt-gift">{gift_name}</dd>
                </div>
                <div class="field-row">
                    <dt>{lang.pick("Tổng cộng", "Total")}</dt>
                    <dd class="receipt-total">{vnd(total_vnd)}</dd>
                </div>
                <div class="field-row">
                    <dt>{lang.pick("Tham chiếu", "Payment reference")}</dt>
                    <dd class="payment-reference">{payment_reference}</dd>
                </div>
            </dl>
            <p class="receipt-note">
                {lang.pick(
                    "Giao dịch giả lập — không có tiền thật nào bị trừ.",
                    "Simulated transaction — no real money was charged.",
                )}
            </p>
        </article>
    }
    .into_part_view()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn criteria_read_as_one_line() {
        let input: SuggestGiftsInput = serde_json::from_value(json!({
            "relationship_type": "parent",
            "interests": ["làm vườn"],
            "budget_max": 1_000_000
        }))
        .unwrap();
        assert_eq!(
            criteria(Lang::Vi, &input),
            "bố mẹ · làm vườn · dưới 1.000.000 ₫"
        );
        assert_eq!(
            criteria(Lang::En, &input),
            "parent · gardening · under 1,000,000 ₫"
        );
        let input: SuggestGiftsInput = serde_json::from_value(json!({
            "relationship_type": "friend", "age": 30, "budget_min": 100000, "budget_max": 500000
        }))
        .unwrap();
        assert_eq!(
            criteria(Lang::Vi, &input),
            "bạn bè · 30 tuổi · 100.000 ₫ – 500.000 ₫"
        );
        assert_eq!(
            criteria(Lang::En, &input),
            "friend · age 30 · 100,000 ₫ – 500,000 ₫"
        );
    }

    #[test]
    fn partial_criteria_show_only_what_arrived() {
        assert_eq!(criteria_from_partial(Lang::Vi, &json!({})), None);
        assert_eq!(
            criteria_from_partial(
                Lang::Vi,
                &json!({"interests": ["lặn biển", ""], "budget_max": 50000})
            ),
            Some("lặn biển · dưới 50.000 ₫".to_owned())
        );
        assert_eq!(
            criteria_from_partial(
                Lang::En,
                &json!({"interests": ["lặn biển", "origami"], "budget_min": 50000})
            ),
            Some("diving, origami · from 50,000 ₫".to_owned())
        );
        // A number too big for the catalogue is not shown rather than wrapped.
        assert_eq!(
            criteria_from_partial(Lang::Vi, &json!({"budget_max": 10_000_000_000u64})),
            None
        );
    }

    #[test]
    fn free_delivery_says_so() {
        assert_eq!(delivery(Lang::Vi, 0), "Miễn phí");
        assert_eq!(delivery(Lang::En, 0), "Free");
        assert_eq!(delivery(Lang::Vi, 30_000), "30.000 ₫");
        assert_eq!(delivery(Lang::En, 30_000), "30,000 ₫");
    }
}

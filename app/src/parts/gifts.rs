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
        CheckoutDraft, CheckoutSession, CreateCheckoutSessionInput, GiftSuggestion,
        PrepareCheckoutInput, SuggestGiftsInput, SuggestGiftsOutput,
    },
};

use super::{
    approval::{decided_buttons, decision_buttons, Approval},
    error_notice, partial_str, skeleton,
};
use crate::view::{IntoPartView, PartView};
use crate::{format::vnd, state::ChatState};

/// Said on every draft, form and receipt: nothing here moves money.
const FICTIONAL: &str = "Thanh toán giả lập — không trừ tiền thật";

/// A `suggest_gifts` part in its current state.
pub fn render_suggestions(state: ToolState<SuggestGiftsInput, SuggestGiftsOutput>) -> PartView {
    match state {
        ToolState::InputStreaming(input) => searching(criteria_from_partial(input.partial())),
        ToolState::InputAvailable { input } => searching(Some(criteria(&input))),
        // suggest_gifts never asks for approval; a stored part saying so is still a search.
        ToolState::ApprovalRequested { input, .. } | ToolState::ApprovalResponded { input, .. } => {
            searching(Some(criteria(&input)))
        }
        ToolState::OutputAvailable { input, output } => suggestions(&input, output),
        ToolState::OutputError { error, .. } => {
            error_notice("Chưa gợi ý được quà".to_owned(), Some(error))
        }
        ToolState::OutputDenied { input } => view! {
            <p class="notice notice-muted">
                "Đã bỏ qua việc tìm quà cho " {input.relationship_type.label_vi()} "."
            </p>
        }
        .into_part_view(),
    }
}

/// A `prepare_checkout` part in its current state.
pub fn render_draft(state: ToolState<PrepareCheckoutInput, CheckoutDraft>) -> PartView {
    const PREPARING: &str = "Đang chuẩn bị đơn quà…";
    match state {
        ToolState::InputStreaming(input) => skeleton(
            PREPARING.to_owned(),
            partial_str(input.partial(), "gift_id"),
        ),
        ToolState::InputAvailable { input } => skeleton(PREPARING.to_owned(), Some(input.gift_id)),
        // prepare_checkout only computes a draft and never asks; shown as being prepared.
        ToolState::ApprovalRequested { input, .. } | ToolState::ApprovalResponded { input, .. } => {
            skeleton(PREPARING.to_owned(), Some(input.gift_id))
        }
        ToolState::OutputAvailable { output, .. } => draft_card(output),
        ToolState::OutputError { error, .. } => {
            error_notice("Chưa chuẩn bị được đơn quà".to_owned(), Some(error))
        }
        ToolState::OutputDenied { input } => view! {
            <p class="notice notice-muted">
                "Đã bỏ qua việc chuẩn bị đơn cho món " {input.gift_id} "."
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
            "Trợ lý đang soạn yêu cầu thanh toán…".to_owned(),
            partial_str(input.partial(), "draft_id"),
        ),
        ToolState::InputAvailable { input } => skeleton(
            "Đang chuẩn bị để bạn xác nhận…".to_owned(),
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
        ToolState::OutputAvailable { output, .. } => receipt(output),
        ToolState::OutputError { error, .. } => error_notice(
            "Chưa mua được quà — không có gì bị trừ".to_owned(),
            Some(error),
        ),
        ToolState::OutputDenied { .. } => view! {
            <p class="notice notice-muted" role="status">"Bạn đã huỷ — chưa mua gì."</p>
        }
        .into_part_view(),
    }
}

/// The criteria in one line: "bố mẹ · làm vườn · dưới 1.000.000 ₫".
fn criteria(input: &SuggestGiftsInput) -> String {
    let mut pieces = vec![input.relationship_type.label_vi().to_owned()];
    if let Some(age) = input.age {
        pieces.push(format!("{age} tuổi"));
    }
    if !input.interests.is_empty() {
        pieces.push(input.interests.join(", "));
    }
    if let Some(budget) = budget(input.budget_min, input.budget_max) {
        pieces.push(budget);
    }
    pieces.join(" · ")
}

fn budget(min: Option<u32>, max: Option<u32>) -> Option<String> {
    match (min, max) {
        (Some(min), Some(max)) => Some(format!("{} – {}", vnd(min), vnd(max))),
        (None, Some(max)) => Some(format!("dưới {}", vnd(max))),
        (Some(min), None) => Some(format!("từ {}", vnd(min))),
        (None, None) => None,
    }
}

/// What of the criteria has arrived, for the skeleton; display only.
fn criteria_from_partial(partial: &Value) -> Option<String> {
    let mut pieces = Vec::new();
    if let Some(interests) = partial.get("interests").and_then(Value::as_array) {
        let interests: Vec<&str> = interests
            .iter()
            .filter_map(Value::as_str)
            .map(str::trim)
            .filter(|interest| !interest.is_empty())
            .collect();
        if !interests.is_empty() {
            pieces.push(interests.join(", "));
        }
    }
    let amount = |key: &str| {
        partial
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|amount| u32::try_from(amount).ok())
    };
    if let Some(budget) = budget(amount("budget_min"), amount("budget_max")) {
        pieces.push(budget);
    }
    (!pieces.is_empty()).then(|| pieces.join(" · "))
}

fn searching(criteria: Option<String>) -> PartView {
    skeleton("Đang tìm quà phù hợp…".to_owned(), criteria)
}

fn suggestions(input: &SuggestGiftsInput, output: SuggestGiftsOutput) -> PartView {
    let SuggestGiftsOutput {
        gifts,
        no_results_reason,
    } = output;
    let for_whom = criteria(input);
    if gifts.is_empty() {
        let reason = no_results_reason
            .map(|reason| reason.trim().to_owned())
            .filter(|reason| !reason.is_empty())
            .unwrap_or_else(|| "Không có món quà nào trong danh mục khớp với yêu cầu.".to_owned());
        return view! {
            <div class="card empty-results gift-empty" role="status">
                <p class="empty-reason">{reason}</p>
                <p class="empty-suggestion">
                    "Thử nới ngân sách hoặc kể thêm về sở thích của người nhận."
                </p>
                <p class="gift-criteria">"Tiêu chí: " {for_whom}</p>
            </div>
        }
        .into_part_view();
    }
    let count = gifts.len();
    view! {
        <section class="gifts" aria-label="Gợi ý quà">
            <p class="results-summary">{format!("{count} gợi ý quà · {for_whom}")}</p>
            <ul class="gift-list">{gifts.into_iter().map(gift_card).collect_view()}</ul>
        </section>
    }
    .into_part_view()
}

fn gift_card(gift: GiftSuggestion) -> impl IntoView {
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
                <span class="gift-interests-label">"Hợp với: "</span>
                {matched_interests
                    .into_iter()
                    .map(|interest| view! { <span class="interest-chip">{interest}</span> })
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

fn delivery(amount: u32) -> String {
    if amount == 0 {
        "Miễn phí".to_owned()
    } else {
        vnd(amount)
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
    view! {
        <article class="card checkout-draft" data-draft-id=draft_id>
            <p class="card-kicker">"Bản nháp thanh toán"</p>
            <dl class="fields">
                <div class="field-row">
                    <dt>"Món quà"</dt>
                    <dd class="checkout-gift">{gift_name}</dd>
                </div>
                <div class="field-row">
                    <dt>"Giá"</dt>
                    <dd class="checkout-price">{vnd(price_vnd)}</dd>
                </div>
                <div class="field-row">
                    <dt>"Giao hàng"</dt>
                    <dd class="checkout-delivery">{delivery(delivery_vnd)}</dd>
                </div>
                <div class="field-row total-row">
                    <dt>"Tổng cộng"</dt>
                    <dd class="checkout-total">{vnd(total_vnd)}</dd>
                </div>
            </dl>
            <p class="fictional-note">{FICTIONAL}</p>
            <p class="draft-status">"Chưa mua gì — chỉ mua khi bạn xác nhận."</p>
        </article>
    }
    .into_part_view()
}

/// The draft a checkout commits, as `prepare_checkout` returned it in this conversation.
fn find_draft(chat: Option<ChatState>, draft_id: &str) -> Option<CheckoutDraft> {
    chat?.find_tool(|part| match part {
        ToolPart::PrepareCheckout(call) => match &call.state {
            ToolState::OutputAvailable { output, .. } if output.draft_id == draft_id => {
                Some(output.clone())
            }
            _ => None,
        },
        _ => None,
    })
}

/// What the form shows of the draft: read-only, since a confirmation may only approve or
/// decline what the assistant prepared.
fn draft_summary(draft_id: &str, draft: Option<CheckoutDraft>) -> impl IntoView {
    let rows = match draft {
        Some(draft) => view! {
            <div class="field-row">
                <dt>"Món quà"</dt>
                <dd class="checkout-gift">{draft.gift_name}</dd>
            </div>
            <div class="field-row">
                <dt>"Giao hàng"</dt>
                <dd class="checkout-delivery">{delivery(draft.delivery_vnd)}</dd>
            </div>
            <div class="field-row total-row">
                <dt>"Tổng cộng"</dt>
                <dd class="checkout-total">{vnd(draft.total_vnd)}</dd>
            </div>
        }
        .into_part_view(),
        None => view! {
            <div class="field-row">
                <dt>"Chi tiết"</dt>
                <dd class="pending">"Không thấy bản nháp này trong cuộc trò chuyện."</dd>
            </div>
        }
        .into_part_view(),
    };
    view! {
        <dl class="fields">
            {rows}
            <div class="field-row">
                <dt>"Bản nháp"</dt>
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
            aria-label="Xác nhận thanh toán"
            on:submit=move |ev| {
                ev.prevent_default();
                decide(true);
            }
        >
            <p class="card-kicker">"Xác nhận mua quà"</p>
            <p class="form-hint">
                "Chưa có gì được mua cho đến khi bạn xác nhận. " {FICTIONAL} "."
            </p>
            {draft_summary(&input.draft_id, draft)}
            {decision_buttons(approval, "Xác nhận", "button-primary", "Huỷ", move || decide(false))}
        </form>
    }
}

/// The form after the decision: locked, with what was decided.
fn decided_checkout(input: &CreateCheckoutSessionInput, approved: bool) -> PartView {
    let draft = find_draft(use_context::<ChatState>(), &input.draft_id);
    let status = if approved {
        "Đang tạo thanh toán giả lập…"
    } else {
        "Đã huỷ"
    };
    view! {
        <form class="card checkout-form locked" aria-label="Xác nhận thanh toán" aria-busy=approved.to_string()>
            <p class="card-kicker">"Xác nhận mua quà"</p>
            {draft_summary(&input.draft_id, draft)}
            {decided_buttons("Xác nhận", "button-primary", "Huỷ", approved, status)}
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
    view! {
        <article class="card receipt checkout-receipt" data-testid="checkout-receipt">
            <p class="receipt-status">"Đã thanh toán (giả lập)"</p>
            <p class="receipt-id-label">"Mã thanh toán"</p>
            <p class="booking-id checkout-id">{checkout_id}</p>
            <dl class="fields">
                <div class="field-row">
                    <dt>"Món quà"</dt>
                    <dd class="receipt-gift">{gift_name}</dd>
                </div>
                <div class="field-row">
                    <dt>"Tổng cộng"</dt>
                    <dd class="receipt-total">{vnd(total_vnd)}</dd>
                </div>
                <div class="field-row">
                    <dt>"Tham chiếu"</dt>
                    <dd class="payment-reference">{payment_reference}</dd>
                </div>
            </dl>
            <p class="receipt-note">"Giao dịch giả lập — không có tiền thật nào bị trừ."</p>
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
        assert_eq!(criteria(&input), "bố mẹ · làm vườn · dưới 1.000.000 ₫");
        let input: SuggestGiftsInput = serde_json::from_value(json!({
            "relationship_type": "friend", "age": 30, "budget_min": 100000, "budget_max": 500000
        }))
        .unwrap();
        assert_eq!(criteria(&input), "bạn bè · 30 tuổi · 100.000 ₫ – 500.000 ₫");
    }

    #[test]
    fn partial_criteria_show_only_what_arrived() {
        assert_eq!(criteria_from_partial(&json!({})), None);
        assert_eq!(
            criteria_from_partial(&json!({"interests": ["lặn biển", ""], "budget_max": 50000})),
            Some("lặn biển · dưới 50.000 ₫".to_owned())
        );
        // A number too big for the catalogue is not shown rather than wrapped.
        assert_eq!(
            criteria_from_partial(&json!({"budget_max": 10_000_000_000u64})),
            None
        );
    }

    #[test]
    fn free_delivery_says_so() {
        assert_eq!(delivery(0), "Miễn phí");
        assert_eq!(delivery(30_000), "30.000 ₫");
    }
}

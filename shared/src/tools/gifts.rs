//! GiftGenius: `suggest_gifts` (read-only), `prepare_checkout` (read-only, idempotent: a
//! draft) and `create_checkout_session` (commits a draft, needs approval, idempotency key).
//!
//! Money is whole Vietnamese đồng in integers: no binary floats anywhere near a price.
//! Payments are fictional: a checkout gets a made-up payment reference, nothing is charged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Access, Risk, Rule, Tool, ToolDefinition, ToolName, ValidationContext, ValidationIssue,
    SCOPE_CHECKOUT,
};

/// Highest budget or price the catalogue deals in, in đồng (100 million).
pub const MAX_VND: u32 = 100_000_000;

/// Marker type of the `suggest_gifts` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuggestGifts;

/// Who the gift is for, as the person described them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelationshipType {
    /// Wife, husband, girlfriend, boyfriend.
    Partner,
    /// Mother or father.
    Parent,
    /// Son or daughter.
    Child,
    /// Brother or sister.
    Sibling,
    /// Grandmother or grandfather.
    Grandparent,
    /// A friend.
    Friend,
    /// Someone from work.
    Colleague,
    /// A teacher.
    Teacher,
    /// Anyone else.
    Other,
}

impl RelationshipType {
    /// Who the gift is for, in the Vietnamese of the UI and of empty-result reasons
    /// ("dành cho bạn bè").
    pub const fn label_vi(self) -> &'static str {
        match self {
            RelationshipType::Partner => "người yêu hoặc vợ/chồng",
            RelationshipType::Parent => "bố mẹ",
            RelationshipType::Child => "con",
            RelationshipType::Sibling => "anh chị em",
            RelationshipType::Grandparent => "ông bà",
            RelationshipType::Friend => "bạn bè",
            RelationshipType::Colleague => "đồng nghiệp",
            RelationshipType::Teacher => "thầy cô",
            RelationshipType::Other => "người nhận này",
        }
    }
}

/// An amount of đồng as Vietnamese write it: thousands grouped with dots, then the sign
/// ("50.000 ₫", "1.250.000 ₫"); used by the server's reasons and the browser's cards alike.
pub fn format_vnd(amount: i64) -> String {
    let digits = amount.unsigned_abs().to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3 + 5);
    if amount < 0 {
        grouped.push('-');
    }
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push('.');
        }
        grouped.push(digit);
    }
    grouped.push_str(" ₫");
    grouped
}

/// Arguments of `suggest_gifts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuggestGiftsInput {
    /// Who the gift is for. Ask the user if they did not say.
    pub relationship_type: RelationshipType,
    /// The recipient's age in years, if the user said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 120))]
    pub age: Option<u8>,
    /// What the recipient likes, in a few words each, e.g. ["gardening", "tea"].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 10), inner(length(min = 1, max = 40)))]
    pub interests: Vec<String>,
    /// Lowest price in VND (đồng), if the user gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 100_000_000))]
    pub budget_min: Option<u32>,
    /// Highest price in VND (đồng), if the user gave one. Never below budget_min.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 100_000_000))]
    pub budget_max: Option<u32>,
}

/// One gift from the catalogue that fits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GiftSuggestion {
    /// Catalogue id; pass it to prepare_checkout.
    pub gift_id: String,
    /// The gift's name.
    pub name: String,
    /// One sentence about it.
    pub description: String,
    /// Price in VND (đồng).
    pub price_vnd: u32,
    /// The recipient's interests this gift matches (empty when none were given).
    pub matched_interests: Vec<String>,
}

/// Result of `suggest_gifts`. Nothing fitting is a success with a reason, not an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuggestGiftsOutput {
    /// Best matches first, at most five.
    pub gifts: Vec<GiftSuggestion>,
    /// Why nothing fits, with a suggestion; only when `gifts` is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_results_reason: Option<String>,
}

impl Tool for SuggestGifts {
    const NAME: ToolName = ToolName::SuggestGifts;
    const DEFINITION: ToolDefinition = ToolDefinition {
        name: ToolName::SuggestGifts.as_str(),
        title: "Gift ideas",
        invoking: "Finding gift ideas…",
        invoked: "Gift ideas ready",
        description: "Suggest gifts from our catalogue. Call it when the user wants gift ideas \
            and has said who the gift is for. Pass only what the user said: never invent an \
            age, interests or a budget. Prices are in VND. An empty list comes with \
            no_results_reason: tell the user the reason and what to change; do not call it \
            again with made-up criteria.",
        requires_approval: false,
        risk: Risk {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        access: Access::Public,
    };
    type Input = SuggestGiftsInput;
    type Output = SuggestGiftsOutput;

    fn check(input: &Self::Input, _ctx: &ValidationContext) -> Vec<ValidationIssue> {
        let mut issues = Vec::new();
        if let (Some(min), Some(max)) = (input.budget_min, input.budget_max) {
            if min > max {
                issues.push(ValidationIssue::broke(
                    "budget_min",
                    Rule::MinAboveMax {
                        max_field: "budget_max".to_owned(),
                    },
                    format!("must not be greater than budget_max ({min} > {max})"),
                ));
            }
        }
        for (index, interest) in input.interests.iter().enumerate() {
            if interest.trim().is_empty() {
                issues.push(ValidationIssue::broke(
                    format!("interests.{index}"),
                    Rule::Blank,
                    "must not be blank",
                ));
            }
        }
        issues
    }
}

/// Marker type of the `prepare_checkout` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrepareCheckout;

/// Arguments of `prepare_checkout`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrepareCheckoutInput {
    /// A gift_id from suggest_gifts.
    #[schemars(length(min = 1, max = 100))]
    pub gift_id: String,
}

/// A checkout that has not happened: what would be bought, for how much.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
pub struct CheckoutDraft {
    /// The draft's id; the same gift gives the same open draft.
    pub draft_id: String,
    /// The gift's id.
    pub gift_id: String,
    /// The gift's name.
    pub gift_name: String,
    /// The gift's price in VND.
    pub price_vnd: u32,
    /// Delivery in VND.
    pub delivery_vnd: u32,
    /// What the checkout would cost in VND.
    pub total_vnd: u32,
    /// Always true: payments here are fictional.
    pub fictional: bool,
}

crate::by_hand::struct_by_hand!(
    checkout_draft_from_value,
    CheckoutDraft {
        draft_id: "draft_id",
        gift_id: "gift_id",
        gift_name: "gift_name",
        price_vnd: "price_vnd",
        delivery_vnd: "delivery_vnd",
        total_vnd: "total_vnd",
        fictional: "fictional"
    }
);

impl Tool for PrepareCheckout {
    const NAME: ToolName = ToolName::PrepareCheckout;
    const DEFINITION: ToolDefinition = ToolDefinition {
        name: ToolName::PrepareCheckout.as_str(),
        title: "Prepare a checkout",
        invoking: "Preparing the checkout…",
        invoked: "Checkout draft ready",
        description: "Prepare a checkout draft for one gift the user chose. It only computes \
            the price and returns a draft_id; nothing is bought or charged, so you may call it \
            again. To buy, call create_checkout_session with the draft_id — the user then \
            confirms in a form.",
        requires_approval: false,
        risk: Risk {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        access: Access::Personal(SCOPE_CHECKOUT),
    };
    type Input = PrepareCheckoutInput;
    type Output = CheckoutDraft;

    fn check(input: &Self::Input, _ctx: &ValidationContext) -> Vec<ValidationIssue> {
        blank("gift_id", &input.gift_id)
    }
}

/// Marker type of the `create_checkout_session` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateCheckoutSession;

/// Arguments of `create_checkout_session`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateCheckoutSessionInput {
    /// A draft_id from prepare_checkout.
    #[schemars(length(min = 1, max = 100))]
    pub draft_id: String,
    /// A key you choose for this purchase and reuse unchanged if you retry it, e.g.
    /// "checkout-<draft_id>": a repeat with the same key never buys twice.
    #[schemars(length(min = 8, max = 100), regex(pattern = r"^[A-Za-z0-9_.:-]+$"))]
    pub idempotency_key: String,
}

/// A committed (fictional) checkout: exists only when it was really recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckoutSession {
    /// The checkout's reference.
    pub checkout_id: String,
    /// The draft it committed.
    pub draft_id: String,
    /// The gift's name.
    pub gift_name: String,
    /// What was charged in VND (fictionally).
    pub total_vnd: u32,
    /// A made-up payment reference.
    pub payment_reference: String,
    /// Always true: no money moved.
    pub fictional: bool,
}

impl Tool for CreateCheckoutSession {
    const NAME: ToolName = ToolName::CreateCheckoutSession;
    const DEFINITION: ToolDefinition = ToolDefinition {
        name: ToolName::CreateCheckoutSession.as_str(),
        title: "Buy a gift",
        invoking: "Preparing the purchase…",
        invoked: "Purchase ready to confirm",
        description: "Buy a prepared gift. Call it ONLY after the user said they want to buy \
            the gift of a draft from prepare_checkout; the user confirms in a form before \
            anything happens. Choose an idempotency_key once per purchase and reuse it if you \
            retry. The purchase happened ONLY if this returns a checkout_id; on an error or a \
            decline say plainly that nothing was bought.",
        requires_approval: true,
        risk: Risk {
            read_only: false,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        access: Access::Personal(SCOPE_CHECKOUT),
    };
    type Input = CreateCheckoutSessionInput;
    type Output = CheckoutSession;

    fn check(input: &Self::Input, _ctx: &ValidationContext) -> Vec<ValidationIssue> {
        blank("draft_id", &input.draft_id)
    }
}

fn blank(path: &str, value: &str) -> Vec<ValidationIssue> {
    if value.trim().is_empty() {
        vec![ValidationIssue::broke(
            path,
            Rule::Blank,
            "must not be blank",
        )]
    } else {
        Vec::new()
    }
}

#[cfg(all(test, feature = "validate"))]
mod tests {
    use chrono::{TimeZone, Utc};

    use crate::tools::{validate_arguments, ToolInput, ToolName, ValidationContext};

    fn ctx() -> ValidationContext {
        ValidationContext {
            now: Utc.with_ymd_and_hms(2026, 11, 29, 12, 0, 0).unwrap(),
        }
    }

    /// The issues of a rejected `suggest_gifts` call, as "path: message".
    fn issues(raw: &str) -> Vec<String> {
        match validate_arguments(ToolName::SuggestGifts, raw, &ctx()) {
            Ok(input) => panic!("expected rejection, got {input:?}"),
            Err(error) => error.issues.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn a_full_valid_request_is_accepted() {
        let raw = r#"{"relationship_type":"friend","age":30,"interests":["làm vườn","trà"],
            "budget_min":100000,"budget_max":500000}"#;
        let Ok(ToolInput::SuggestGifts(input)) =
            validate_arguments(ToolName::SuggestGifts, raw, &ctx())
        else {
            panic!("expected suggest_gifts input");
        };
        assert_eq!(input.relationship_type, super::RelationshipType::Friend);
        assert_eq!(input.age, Some(30));
        assert_eq!(input.interests, ["làm vườn", "trà"]);
        assert_eq!(
            (input.budget_min, input.budget_max),
            (Some(100_000), Some(500_000))
        );
        // Only the relationship is required; an equal minimum and maximum is a budget.
        validate_arguments(
            ToolName::SuggestGifts,
            r#"{"relationship_type":"other"}"#,
            &ctx(),
        )
        .unwrap();
        validate_arguments(
            ToolName::SuggestGifts,
            r#"{"relationship_type":"parent","budget_min":200000,"budget_max":200000}"#,
            &ctx(),
        )
        .unwrap();
    }

    #[test]
    fn an_age_above_120_is_rejected() {
        assert_eq!(
            issues(r#"{"relationship_type":"grandparent","age":121}"#),
            ["age: must be at most 120, received 121"]
        );
    }

    #[test]
    fn an_age_as_text_is_not_coerced() {
        assert_eq!(
            issues(r#"{"relationship_type":"child","age":"5"}"#),
            ["age: expected integer, received string"]
        );
    }

    #[test]
    fn a_minimum_above_the_maximum_is_rejected_at_budget_min() {
        let found =
            issues(r#"{"relationship_type":"friend","budget_min":500000,"budget_max":100000}"#);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("budget_min: "), "{found:?}");
        assert!(found[0].contains("budget_max"), "{found:?}");
    }

    #[test]
    fn an_extra_key_is_rejected() {
        let found = issues(r#"{"relationship_type":"friend","occasion":"birthday"}"#);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("occasion: unknown field"), "{found:?}");
    }

    #[test]
    fn a_missing_relationship_is_rejected() {
        assert_eq!(
            issues(r#"{"interests":["trà"]}"#),
            ["relationship_type: required field is missing"]
        );
    }

    #[test]
    fn blank_interests_are_rejected() {
        assert_eq!(
            issues(r#"{"relationship_type":"friend","interests":["trà","   "]}"#),
            ["interests.1: must not be blank"]
        );
        assert_eq!(
            issues(r#"{"relationship_type":"friend","interests":[""]}"#),
            ["interests.0: must not be empty"]
        );
    }

    #[test]
    fn checkout_inputs_are_checked() {
        let found = issues_of(
            ToolName::CreateCheckoutSession,
            r#"{"draft_id":"DR-1","idempotency_key":"short"}"#,
        );
        assert_eq!(found, ["idempotency_key: must be at least 8 characters"]);
        let found = issues_of(
            ToolName::CreateCheckoutSession,
            r#"{"draft_id":"DR-1","idempotency_key":"has spaces in it"}"#,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("idempotency_key: "), "{found:?}");
        assert_eq!(
            issues_of(ToolName::PrepareCheckout, r#"{"gift_id":"  "}"#),
            ["gift_id: must not be blank"]
        );
    }

    fn issues_of(tool: ToolName, raw: &str) -> Vec<String> {
        match validate_arguments(tool, raw, &ctx()) {
            Ok(input) => panic!("expected rejection, got {input:?}"),
            Err(error) => error.issues.iter().map(ToString::to_string).collect(),
        }
    }
}

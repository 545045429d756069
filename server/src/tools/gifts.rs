//! GiftGenius executors: `suggest_gifts` (catalogue search), `prepare_checkout` (an
//! idempotent price quote, "draft") and `create_checkout_session` (buys a draft at most
//! once, idempotent on the model's `idempotency_key`).
//!
//! Money is whole đồng in `i64` from the database and `u32` in the tool types; rows are data,
//! so every conversion is checked and bad data is an internal error, never a panic.

use std::cmp::Reverse;

use chrono::SecondsFormat;
use serde_json::json;
use shared::tools::{
    format_vnd, CheckoutDraft, CheckoutSession, CreateCheckoutSessionInput, Entity, ErrorCode,
    GiftSuggestion, PrepareCheckoutInput, RelationshipType, Rule, SuggestGiftsInput,
    SuggestGiftsOutput, ToolError, ToolName,
};

use super::{city::words, ExecError, ToolContext};
use crate::{
    db::{self, Backend, Pool},
    idempotency,
};

/// Most gifts one suggestion returns.
pub const MAX_SUGGESTIONS: usize = 5;

/// Delivery of one gift, in đồng…
pub const DELIVERY_VND: i64 = 30_000;

/// …free for gifts from this price on.
pub const FREE_DELIVERY_FROM_VND: i64 = 1_000_000;

/// Idempotency keys of purchases are scoped to the tool that uses them.
const CHECKOUT_SCOPE: &str = ToolName::CreateCheckoutSession.as_str();
mod checkout;
mod words;

pub use checkout::{commit, precheck, prepare};
pub use words::TAGS;
use words::{SYNONYMS, WHOLE_INTEREST_ONLY};

/// One interest as the person said it and the tags it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Interest {
    /// The person's words, trimmed: what results and reasons quote.
    said: String,
    /// Canonical tags; for words we do not know, the folded words themselves (which no
    /// gift has, so they match nothing).
    tags: Vec<String>,
}

/// The tags `interest` stands for: every tag one of whose phrases it is or contains as
/// whole words; the folded interest itself when none does.
fn interest_tags(interest: &str) -> Vec<String> {
    let folded = words(interest);
    let padded = format!(" {folded} ");
    let mut tags: Vec<String> = SYNONYMS
        .iter()
        .filter(|(_, phrases)| {
            phrases.iter().any(|phrase| {
                folded == *phrase
                    || (!WHOLE_INTEREST_ONLY.contains(phrase)
                        && padded.contains(&format!(" {phrase} ")))
            })
        })
        .map(|(tag, _)| (*tag).to_owned())
        .collect();
    if tags.is_empty() {
        tags.push(folded);
    }
    tags
}

/// The interests of a request, blanks and repeats (after folding) dropped.
fn interests(said: &[String]) -> Vec<Interest> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for interest in said {
        let trimmed = interest.trim();
        let folded = words(trimmed);
        if folded.is_empty() || seen.contains(&folded) {
            continue;
        }
        seen.push(folded);
        out.push(Interest {
            said: trimmed.to_owned(),
            tags: interest_tags(trimmed),
        });
    }
    out
}

/// The word `gifts.relationships` uses for `relationship`.
fn relationship_tag(relationship: RelationshipType) -> &'static str {
    match relationship {
        RelationshipType::Partner => "partner",
        RelationshipType::Parent => "parent",
        RelationshipType::Child => "child",
        RelationshipType::Sibling => "sibling",
        RelationshipType::Grandparent => "grandparent",
        RelationshipType::Friend => "friend",
        RelationshipType::Colleague => "colleague",
        RelationshipType::Teacher => "teacher",
        RelationshipType::Other => "other",
    }
}

/// One row of the catalogue.
#[derive(Debug, Clone, sqlx::FromRow)]
struct GiftRow {
    id: String,
    name: String,
    description: String,
    price_vnd: i64,
    tags: String,
    relationships: String,
    min_age: i64,
    max_age: i64,
}

impl GiftRow {
    fn has_tag(&self, tag: &str) -> bool {
        self.tags.split_whitespace().any(|t| t == tag)
    }

    fn suits(&self, relationship: RelationshipType) -> bool {
        let wanted = relationship_tag(relationship);
        self.relationships
            .split_whitespace()
            .any(|r| r == "any" || r == wanted)
    }

    fn fits_age(&self, age: Option<u8>) -> bool {
        age.is_none_or(|age| (self.min_age..=self.max_age).contains(&i64::from(age)))
    }

    fn fits_budget(&self, min: Option<u32>, max: Option<u32>) -> bool {
        min.is_none_or(|min| self.price_vnd >= i64::from(min))
            && max.is_none_or(|max| self.price_vnd <= i64::from(max))
    }

    /// The interests this gift matches, as the person said them.
    fn matched(&self, interests: &[Interest]) -> Vec<String> {
        interests
            .iter()
            .filter(|interest| interest.tags.iter().any(|tag| self.has_tag(tag)))
            .map(|interest| interest.said.clone())
            .collect()
    }
}

/// Which criteria a gift is checked against; each can be left out to explain an empty
/// result ("without the budget there would be…").
#[derive(Debug, Clone, Copy)]
struct Criteria {
    relationship: bool,
    age: bool,
    budget: bool,
    interests: bool,
}

impl Criteria {
    const ALL: Criteria = Criteria {
        relationship: true,
        age: true,
        budget: true,
        interests: true,
    };
}

/// The gifts of `catalogue` that pass `criteria`, with the interests each matches.
fn candidates<'a>(
    catalogue: &'a [GiftRow],
    input: &SuggestGiftsInput,
    interests: &[Interest],
    criteria: Criteria,
) -> Vec<(&'a GiftRow, Vec<String>)> {
    catalogue
        .iter()
        .filter(|gift| !criteria.relationship || gift.suits(input.relationship_type))
        .filter(|gift| !criteria.age || gift.fits_age(input.age))
        .filter(|gift| !criteria.budget || gift.fits_budget(input.budget_min, input.budget_max))
        .map(|gift| (gift, gift.matched(interests)))
        .filter(|(_, matched)| !criteria.interests || interests.is_empty() || !matched.is_empty())
        .collect()
}

/// The price ranking aims at: the middle of the budget ([0, max] when only a maximum was
/// given); the minimum when only a minimum was given (the cheapest gifts above it); none
/// without a budget (cheapest first).
fn price_target(input: &SuggestGiftsInput) -> Option<i64> {
    match (input.budget_min, input.budget_max) {
        (min, Some(max)) => Some((i64::from(min.unwrap_or(0)) + i64::from(max)) / 2),
        (Some(min), None) => Some(i64::from(min)),
        (None, None) => None,
    }
}

/// Suggestions from `catalogue` for `input`: best first, at most [`MAX_SUGGESTIONS`], or
/// none with the reason.
fn select(
    catalogue: &[GiftRow],
    input: &SuggestGiftsInput,
) -> Result<SuggestGiftsOutput, ExecError> {
    let wanted = interests(&input.interests);
    let mut found = candidates(catalogue, input, &wanted, Criteria::ALL);
    let target = price_target(input);
    // More matched interests first, then closer to the budget's middle; price and id make
    // the order total, so the same request always gives the same list.
    found.sort_by_key(|(gift, matched)| {
        (
            Reverse(matched.len()),
            target.map_or(0, |target| (gift.price_vnd - target).abs()),
            gift.price_vnd,
            gift.id.clone(),
        )
    });
    if found.is_empty() {
        return Ok(SuggestGiftsOutput {
            gifts: Vec::new(),
            no_results_reason: Some(no_results_reason(catalogue, input, &wanted)),
        });
    }
    let gifts = found
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(gift, matched)| {
            Ok(GiftSuggestion {
                gift_id: gift.id.clone(),
                name: gift.name.clone(),
                description: gift.description.clone(),
                price_vnd: vnd(&gift.id, "price_vnd", gift.price_vnd)?,
                matched_interests: matched,
            })
        })
        .collect::<Result<Vec<_>, ExecError>>()?;
    Ok(SuggestGiftsOutput {
        gifts,
        no_results_reason: None,
    })
}

fn quoted(interests: &[&Interest]) -> String {
    interests
        .iter()
        .map(|interest| format!("“{}”", interest.said))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why nothing fits, in Vietnamese: what was asked, what the catalogue lacks, what would
/// give results, and what to try.
fn no_results_reason(
    catalogue: &[GiftRow],
    input: &SuggestGiftsInput,
    wanted: &[Interest],
) -> String {
    let mut asked = format!(
        "Không có món quà nào dành cho {}",
        input.relationship_type.label_vi()
    );
    if let Some(age) = input.age {
        asked.push_str(&format!(" ({age} tuổi)"));
    }
    if !wanted.is_empty() {
        let all: Vec<&Interest> = wanted.iter().collect();
        asked.push_str(&format!(" với sở thích {}", quoted(&all)));
    }
    match (input.budget_min, input.budget_max) {
        (Some(min), Some(max)) => asked.push_str(&format!(
            " trong khoảng {} – {}",
            format_vnd(i64::from(min)),
            format_vnd(i64::from(max))
        )),
        (None, Some(max)) => asked.push_str(&format!(
            " trong khoảng tối đa {}",
            format_vnd(i64::from(max))
        )),
        (Some(min), None) => asked.push_str(&format!(" từ {} trở lên", format_vnd(i64::from(min)))),
        (None, None) => {}
    }
    let mut sentences = vec![format!("{asked}.")];

    let unknown: Vec<&Interest> = wanted
        .iter()
        .filter(|interest| {
            !catalogue
                .iter()
                .any(|gift| interest.tags.iter().any(|tag| gift.has_tag(tag)))
        })
        .collect();
    if !unknown.is_empty() {
        sentences.push(format!(
            "Danh mục hiện chưa có món quà nào cho sở thích {}.",
            quoted(&unknown)
        ));
    }

    let has_budget = input.budget_min.is_some() || input.budget_max.is_some();
    let without_budget = Criteria {
        budget: false,
        ..Criteria::ALL
    };
    let without_interests = Criteria {
        interests: false,
        ..Criteria::ALL
    };
    let without_age = Criteria {
        age: false,
        ..Criteria::ALL
    };
    let advice = if let Some((count, cheapest, dearest)) =
        price_span(&candidates(catalogue, input, wanted, without_budget)).filter(|_| has_budget)
    {
        format!(
            "Ngoài ngân sách này có {count} món phù hợp, giá từ {} đến {}. Hãy thử nới ngân sách.",
            format_vnd(cheapest),
            format_vnd(dearest)
        )
    } else if let Some((count, _, _)) =
        price_span(&candidates(catalogue, input, wanted, without_interests))
            .filter(|_| !wanted.is_empty())
    {
        format!(
            "{} có {count} món quà khác dành cho {}. Hãy thử chọn sở thích khác hoặc bỏ bớt \
             sở thích.",
            if has_budget {
                "Trong ngân sách này vẫn"
            } else {
                "Vẫn"
            },
            input.relationship_type.label_vi()
        )
    } else if let Some((count, _, _)) =
        price_span(&candidates(catalogue, input, wanted, without_age))
            .filter(|_| input.age.is_some())
    {
        format!(
            "Bỏ qua độ tuổi thì có {count} món phù hợp. Hãy kiểm tra lại tuổi người nhận hoặc \
             chọn sở thích khác."
        )
    } else {
        "Hãy thử nới ngân sách hoặc chọn sở thích khác.".to_owned()
    };
    sentences.push(advice);
    sentences.join(" ")
}

/// How many gifts, and the lowest and highest price among them; `None` for none.
fn price_span(found: &[(&GiftRow, Vec<String>)]) -> Option<(usize, i64, i64)> {
    let cheapest = found.iter().map(|(gift, _)| gift.price_vnd).min()?;
    let dearest = found.iter().map(|(gift, _)| gift.price_vnd).max()?;
    Some((found.len(), cheapest, dearest))
}

/// A money column as the tool types hold it.
fn vnd(id: &str, column: &str, value: i64) -> Result<u32, ExecError> {
    u32::try_from(value)
        .map_err(|_| ExecError::Internal(format!("{id}: {column} {value} is out of range")))
}

/// `suggest_gifts`: gifts from the catalogue for the person described, best first.
pub async fn suggest(
    input: &SuggestGiftsInput,
    ctx: &ToolContext,
) -> Result<SuggestGiftsOutput, ExecError> {
    // The catalogue is small and curated (tens of rows), and explaining an empty result
    // needs to know which criterion ruled out what: it is read whole and filtered here.
    let catalogue: Vec<GiftRow> = sqlx::query_as(
        "SELECT id, name, description, price_vnd, tags, relationships, min_age, max_age \
         FROM gifts ORDER BY id",
    )
    .fetch_all(&ctx.reads)
    .await?;
    select(&catalogue, input)
}

/// `suggest_gifts`'s executor.
impl super::Executor for shared::tools::SuggestGifts {
    async fn execute(
        input: &shared::tools::SuggestGiftsInput,
        ctx: &ToolContext,
    ) -> Result<shared::tools::SuggestGiftsOutput, ExecError> {
        suggest(input, ctx).await
    }
}

/// `prepare_checkout`'s executor: a draft, nothing paid.
impl super::Executor for shared::tools::PrepareCheckout {
    async fn execute(
        input: &shared::tools::PrepareCheckoutInput,
        ctx: &ToolContext,
    ) -> Result<<shared::tools::PrepareCheckout as shared::tools::Tool>::Output, ExecError> {
        prepare(input, ctx).await
    }
}

/// `create_checkout_session`'s executor: the draft checked again for the form, then the
/// checkout once approved.
impl super::Executor for shared::tools::CreateCheckoutSession {
    async fn execute(
        input: &shared::tools::CreateCheckoutSessionInput,
        ctx: &ToolContext,
    ) -> Result<<shared::tools::CreateCheckoutSession as shared::tools::Tool>::Output, ExecError>
    {
        commit(input, ctx).await
    }

    async fn precheck(
        input: &shared::tools::CreateCheckoutSessionInput,
        ctx: &ToolContext,
    ) -> Result<Option<shared::preview::ApprovalPreview>, ExecError> {
        precheck(input, ctx)
            .await
            .map(|draft| Some(shared::preview::ApprovalPreview::Checkout(draft)))
    }
}

#[cfg(test)]
mod tests;

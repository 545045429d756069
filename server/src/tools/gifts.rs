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

/// The interest tags the catalogue uses (`gifts.tags`).
pub const TAGS: [&str; 15] = [
    "gardening",
    "reading",
    "cooking",
    "coffee",
    "tea",
    "music",
    "sports",
    "travel",
    "tech",
    "art",
    "games",
    "fashion",
    "beauty",
    "wellness",
    "photography",
];

/// What people say for each tag, folded by [`words`] (lower-case, no accents, đ → d).
/// A phrase matches an interest that is exactly it or contains it as whole words
/// ("thích trồng cây" → gardening). `diving` has words but no gift: asking for it must give
/// an honest empty result, not a loosely related one.
const SYNONYMS: [(&str, &[&str]); 16] = [
    (
        "gardening",
        &[
            "gardening",
            "garden",
            "gardens",
            "plant",
            "plants",
            "lam vuon",
            "trong cay",
            "cay canh",
            "cay xanh",
            "trong rau",
            "trong hoa",
            "vuon",
            "bonsai",
            "sen da",
        ],
    ),
    (
        "reading",
        &[
            "reading",
            "read",
            "book",
            "books",
            "doc sach",
            "sach",
            "doc truyen",
            "truyen",
            "tieu thuyet",
            "van hoc",
        ],
    ),
    (
        "cooking",
        &[
            "cooking",
            "cook",
            "baking",
            "bake",
            "nau an",
            "nau nuong",
            "lam banh",
            "bep",
            "vao bep",
            "am thuc",
        ],
    ),
    ("coffee", &["coffee", "ca phe", "cafe", "caphe", "espresso"]),
    ("tea", &["tea", "tra", "uong tra", "tra dao"]),
    (
        "music",
        &[
            "music",
            "am nhac",
            "nhac",
            "nghe nhac",
            "ca hat",
            "karaoke",
            "guitar",
            "ukulele",
            "piano",
            "choi dan",
            "singing",
            "hat",
            "dan",
        ],
    ),
    (
        "sports",
        &[
            "sports",
            "sport",
            "the thao",
            "chay bo",
            "running",
            "gym",
            "tap gym",
            "the duc",
            "bong da",
            "football",
            "soccer",
            "cau long",
            "badminton",
            "tennis",
            "boi",
            "boi loi",
            "swimming",
            "dap xe",
            "cycling",
            "fitness",
            "tap luyen",
        ],
    ),
    (
        "travel",
        &[
            "travel",
            "traveling",
            "travelling",
            "du lich",
            "phuot",
            "di phuot",
            "cam trai",
            "camping",
            "backpacking",
            "trekking",
            "hiking",
            "leo nui",
        ],
    ),
    (
        "tech",
        &[
            "tech",
            "technology",
            "gadget",
            "gadgets",
            "cong nghe",
            "do cong nghe",
            "dien tu",
            "may tinh",
            "computer",
            "computers",
            "lap trinh",
            "programming",
            "coding",
        ],
    ),
    (
        "art",
        &[
            "art",
            "arts",
            "nghe thuat",
            "hoi hoa",
            "ve tranh",
            "my thuat",
            "drawing",
            "painting",
            "thu cong",
            "handmade",
            "craft",
            "crafts",
            "ve",
        ],
    ),
    (
        "games",
        &[
            "games",
            "game",
            "gaming",
            "tro choi",
            "choi game",
            "board game",
            "boardgame",
            "lego",
            "co tuong",
            "co vua",
            "chess",
            "puzzle",
            "xep hinh",
        ],
    ),
    (
        "fashion",
        &[
            "fashion",
            "thoi trang",
            "quan ao",
            "phu kien",
            "tui xach",
            "trang suc",
            "style",
        ],
    ),
    (
        "beauty",
        &[
            "beauty",
            "lam dep",
            "my pham",
            "skincare",
            "skin care",
            "cham soc da",
            "duong da",
            "trang diem",
            "makeup",
            "make up",
        ],
    ),
    (
        "wellness",
        &[
            "wellness",
            "suc khoe",
            "yoga",
            "thien",
            "thien dinh",
            "meditation",
            "thu gian",
            "spa",
            "massage",
            "relax",
            "relaxing",
            "health",
        ],
    ),
    (
        "photography",
        &[
            "photography",
            "photo",
            "photos",
            "chup anh",
            "chup hinh",
            "nhiep anh",
            "may anh",
            "camera",
            "anh",
        ],
    ),
    (
        "diving",
        &[
            "diving",
            "dive",
            "scuba",
            "snorkeling",
            "lan bien",
            "lan ngam",
            "lan",
        ],
    ),
];

/// Words that mean an interest only when they are the whole interest: inside a phrase they
/// are usually another word spelled the same without accents ("về" in "đi về quê" is not
/// "vẽ", "anh" in "tiếng Anh" is not "ảnh", "thiên nhiên" is not "thiền").
const WHOLE_INTEREST_ONLY: [&str; 7] = ["hat", "dan", "boi", "ve", "thien", "anh", "lan"];

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
    .fetch_all(&ctx.db)
    .await?;
    select(&catalogue, input)
}

/// Delivery for a gift of `price`.
fn delivery_for(price: i64) -> i64 {
    if price >= FREE_DELIVERY_FROM_VND {
        0
    } else {
        DELIVERY_VND
    }
}

/// A draft with its gift's name, as read back.
#[derive(Debug, Clone, sqlx::FromRow)]
struct DraftRow {
    id: String,
    gift_id: String,
    gift_name: String,
    price_vnd: i64,
    delivery_vnd: i64,
    total_vnd: i64,
    status: String,
}

/// The columns `DraftRow` reads, from `checkout_drafts d JOIN gifts g`. A macro so queries
/// stay `&'static str` (sqlx 0.9 refuses SQL built at run time).
macro_rules! draft_select {
    () => {
        "SELECT d.id, d.gift_id, g.name AS gift_name, d.price_vnd, d.delivery_vnd, \
         d.total_vnd, d.status FROM checkout_drafts d JOIN gifts g ON g.id = d.gift_id "
    };
}

impl DraftRow {
    fn output(&self) -> Result<CheckoutDraft, ExecError> {
        Ok(CheckoutDraft {
            draft_id: self.id.clone(),
            gift_id: self.gift_id.clone(),
            gift_name: self.gift_name.clone(),
            price_vnd: vnd(&self.id, "price_vnd", self.price_vnd)?,
            delivery_vnd: vnd(&self.id, "delivery_vnd", self.delivery_vnd)?,
            total_vnd: vnd(&self.id, "total_vnd", self.total_vnd)?,
            fictional: true,
        })
    }
}

fn gift_not_found(gift_id: &str) -> ExecError {
    ExecError::Tool(
        ToolError::new(
            ErrorCode::NotFound,
            format!(
                "gift_id: no gift has the id \"{gift_id}\"; use a gift_id from suggest_gifts. \
             Nothing was prepared."
            ),
        )
        .at(
            "gift_id",
            Rule::NoSuch {
                entity: Entity::Gift,
            },
        ),
    )
}

/// The same answer for a draft that does not exist and one of another person, so draft
/// ids cannot be probed.
fn draft_not_found(draft_id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::NotFound,
        format!(
            "draft_id: no checkout draft has the id \"{draft_id}\"; call prepare_checkout for \
             the gift to get one. Nothing was bought."
        ),
    )
    .at(
        "draft_id",
        Rule::NoSuch {
            entity: Entity::Draft,
        },
    )
}

fn draft_already_committed(draft_id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::DraftAlreadyCommitted,
        format!(
            "draft_id: the draft \"{draft_id}\" was already bought; nothing more was charged. \
             To buy the same gift again, call prepare_checkout for a new draft."
        ),
    )
}

fn short_id(prefix: &str, len: usize) -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string().to_uppercase();
    format!("{prefix}{}", &hex[..len.min(hex.len())])
}

/// The open draft of `owner_id` for `gift_id`, if any.
async fn open_draft(
    db: &Pool,
    owner_id: &str,
    gift_id: &str,
) -> Result<Option<DraftRow>, ExecError> {
    Ok(sqlx::query_as::<_, DraftRow>(concat!(
        draft_select!(),
        "WHERE d.owner_id = $1 AND d.gift_id = $2 AND d.status = 'open'"
    ))
    .bind(owner_id)
    .bind(gift_id)
    .fetch_optional(db)
    .await?)
}

/// `prepare_checkout`: the open draft of this person for this gift, made if there is none.
/// Buys nothing; calling it again returns the same draft until that draft is bought.
pub async fn prepare(
    input: &PrepareCheckoutInput,
    ctx: &ToolContext,
) -> Result<CheckoutDraft, ExecError> {
    let gift_id = input.gift_id.trim();
    let price: Option<i64> = sqlx::query_scalar("SELECT price_vnd FROM gifts WHERE id = $1")
        .bind(gift_id)
        .fetch_optional(&ctx.db)
        .await?;
    let Some(price) = price else {
        return Err(gift_not_found(gift_id));
    };
    let delivery = delivery_for(price);
    let created_at = ctx.now.to_rfc3339_opts(SecondsFormat::Millis, true);
    // Insert-or-get: the partial unique index (owner, gift) WHERE open turns a second insert
    // (sequential or racing) into a no-op, and the read returns whichever draft won. If the
    // open draft is bought between the two statements, the next round makes a new one.
    for _ in 0..3 {
        sqlx::query(
            "INSERT INTO checkout_drafts (id, owner_id, gift_id, price_vnd, delivery_vnd, \
             total_vnd, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, 'open', $7) \
             ON CONFLICT DO NOTHING",
        )
        .bind(short_id("DR-", 8))
        .bind(&ctx.owner_id)
        .bind(gift_id)
        .bind(price)
        .bind(delivery)
        .bind(price + delivery)
        .bind(&created_at)
        .execute(&ctx.db)
        .await?;
        if let Some(draft) = open_draft(&ctx.db, &ctx.owner_id, gift_id).await? {
            return draft.output();
        }
    }
    Err(ExecError::Internal(format!(
        "no open draft for gift {gift_id} after three inserts"
    )))
}

/// What the idempotency key of a purchase stands for: the draft (the key itself and the
/// owner are the record's identity, not its arguments).
fn checkout_fingerprint(draft_id: &str) -> String {
    idempotency::fingerprint(&json!({ "draft_id": draft_id }))
}

/// The checks before the person is asked to confirm a purchase: the key was not used for
/// another draft, the draft exists, is this person's, and is still open. A retry of the
/// purchase that bought it (same key, same draft) passes: it only replays.
pub async fn precheck(
    input: &CreateCheckoutSessionInput,
    ctx: &ToolContext,
) -> Result<CheckoutDraft, ExecError> {
    let draft_id = input.draft_id.trim();
    idempotency::peek(
        &ctx.db,
        &ctx.owner_id,
        CHECKOUT_SCOPE,
        &input.idempotency_key,
        &checkout_fingerprint(draft_id),
    )
    .await?;
    let draft: Option<DraftRow> = sqlx::query_as(concat!(
        draft_select!(),
        "WHERE d.id = $1 AND d.owner_id = $2"
    ))
    .bind(draft_id)
    .bind(&ctx.owner_id)
    .fetch_optional(&ctx.db)
    .await?;
    let Some(draft) = draft else {
        return Err(ExecError::Tool(draft_not_found(draft_id)));
    };
    match draft.status.as_str() {
        "open" => draft.output(),
        "committed" => {
            let bought_with: Option<String> = sqlx::query_scalar(
                "SELECT idempotency_key FROM checkouts WHERE draft_id = $1 AND owner_id = $2",
            )
            .bind(draft_id)
            .bind(&ctx.owner_id)
            .fetch_optional(&ctx.db)
            .await?;
            if bought_with.as_deref() == Some(input.idempotency_key.as_str()) {
                draft.output()
            } else {
                Err(ExecError::Tool(draft_already_committed(draft_id)))
            }
        }
        other => Err(ExecError::Internal(format!(
            "draft {draft_id} has status {other:?}"
        ))),
    }
}

/// `create_checkout_session`: buys the draft, at most once per draft and per key.
///
/// The first request with a key runs; a repeat with the same key and draft gets the same
/// answer (success or failure) without buying again; the same key with another draft is
/// refused. The checkout, the draft's new status and the key's record commit in one
/// transaction.
pub async fn commit(
    input: &CreateCheckoutSessionInput,
    ctx: &ToolContext,
) -> Result<CheckoutSession, ExecError> {
    let draft_id = input.draft_id.trim().to_owned();
    let fingerprint = checkout_fingerprint(&draft_id);
    let (purchase_input, task) = (input.clone(), ctx.clone());
    let stored = idempotency::run_once(
        ctx,
        CHECKOUT_SCOPE,
        &input.idempotency_key,
        &fingerprint,
        move |tx| {
            Box::pin(async move {
                Ok(
                    match purchase(tx, &draft_id, &purchase_input, &task).await? {
                        Ok(session) => Ok(idempotency::stored(&session, CHECKOUT_SCOPE)?),
                        Err(failure) => Err(failure),
                    },
                )
            })
        },
    )
    .await?;
    idempotency::typed(stored, CHECKOUT_SCOPE)
}

/// Inside `tx`: re-reads the draft (locked on Postgres; SQLite's `BEGIN IMMEDIATE` already
/// excludes other writers) and buys it if it is open. `Ok(Err(…))` is a failure that is
/// stored and replayed; `Err` one that is not.
async fn purchase(
    tx: &mut sqlx::AnyConnection,
    draft_id: &str,
    input: &CreateCheckoutSessionInput,
    ctx: &ToolContext,
) -> Result<Result<CheckoutSession, ToolError>, ExecError> {
    // Two requests with different keys for one draft: the second waits for the first's
    // lock, then sees the draft committed (READ COMMITTED re-reads a locked row).
    let read = match db::backend(&ctx.db) {
        Backend::Postgres => concat!(
            draft_select!(),
            "WHERE d.id = $1 AND d.owner_id = $2 FOR UPDATE OF d"
        ),
        Backend::Sqlite => concat!(draft_select!(), "WHERE d.id = $1 AND d.owner_id = $2"),
    };
    let draft: Option<DraftRow> = sqlx::query_as(read)
        .bind(draft_id)
        .bind(&ctx.owner_id)
        .fetch_optional(&mut *tx)
        .await?;
    let outcome = match draft {
        None => Err(draft_not_found(draft_id)),
        Some(draft) if draft.status == "committed" => Err(draft_already_committed(draft_id)),
        Some(draft) if draft.status != "open" => {
            return Err(ExecError::Internal(format!(
                "draft {draft_id} has status {:?}",
                draft.status
            )))
        }
        Some(draft) => Ok(record_checkout(tx, &draft, input, ctx).await?),
    };
    Ok(outcome)
}

/// Inserts the checkout of an open `draft` and marks the draft committed.
async fn record_checkout(
    tx: &mut sqlx::AnyConnection,
    draft: &DraftRow,
    input: &CreateCheckoutSessionInput,
    ctx: &ToolContext,
) -> Result<CheckoutSession, ExecError> {
    let session = CheckoutSession {
        checkout_id: short_id("CHK-", 10),
        draft_id: draft.id.clone(),
        gift_name: draft.gift_name.clone(),
        total_vnd: vnd(&draft.id, "total_vnd", draft.total_vnd)?,
        payment_reference: short_id("DEMO-PAY-", 12),
        fictional: true,
    };
    sqlx::query(
        "INSERT INTO checkouts (id, owner_id, draft_id, gift_name, total_vnd, \
         payment_reference, idempotency_key, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&session.checkout_id)
    .bind(&ctx.owner_id)
    .bind(&draft.id)
    .bind(&draft.gift_name)
    .bind(draft.total_vnd)
    .bind(&session.payment_reference)
    .bind(&input.idempotency_key)
    .bind(ctx.now.to_rfc3339_opts(SecondsFormat::Millis, true))
    .execute(&mut *tx)
    .await?;
    let marked = sqlx::query(
        "UPDATE checkout_drafts SET status = 'committed' WHERE id = $1 AND status = 'open'",
    )
    .bind(&draft.id)
    .execute(&mut *tx)
    .await?;
    if marked.rows_affected() != 1 {
        // The lock (or SQLite's write lock) makes this impossible; if it happens, the
        // transaction must not commit a second purchase.
        return Err(ExecError::Internal(format!(
            "draft {} was not open when marking it committed",
            draft.id
        )));
    }
    Ok(session)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use chrono::{DateTime, Utc};

    use super::*;
    use crate::db::test_db::TestDatabase;

    async fn context() -> (ToolContext, TestDatabase) {
        let (db, guard) = crate::db::test_pool().await;
        let ctx = ToolContext {
            db,
            owner_id: "owner".into(),
            conversation_id: "conversation".into(),
            call_id: "call".into(),
            now: "2026-11-29T12:00:00Z".parse::<DateTime<Utc>>().unwrap(),
            upstreams: Default::default(),
            take: None,
        };
        (ctx, guard)
    }

    fn as_owner(ctx: &ToolContext, owner: &str) -> ToolContext {
        ToolContext {
            owner_id: owner.into(),
            ..ctx.clone()
        }
    }

    fn ask(relationship: RelationshipType) -> SuggestGiftsInput {
        SuggestGiftsInput {
            relationship_type: relationship,
            age: None,
            interests: Vec::new(),
            budget_min: None,
            budget_max: None,
        }
    }

    fn buy(draft_id: &str, key: &str) -> CreateCheckoutSessionInput {
        CreateCheckoutSessionInput {
            draft_id: draft_id.into(),
            idempotency_key: key.into(),
        }
    }

    async fn catalogue(ctx: &ToolContext) -> Vec<GiftRow> {
        sqlx::query_as(
            "SELECT id, name, description, price_vnd, tags, relationships, min_age, max_age \
             FROM gifts ORDER BY id",
        )
        .fetch_all(&ctx.db)
        .await
        .unwrap()
    }

    async fn checkouts(ctx: &ToolContext) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM checkouts")
            .fetch_one(&ctx.db)
            .await
            .unwrap()
    }

    async fn draft_for(ctx: &ToolContext, gift_id: &str) -> CheckoutDraft {
        prepare(
            &PrepareCheckoutInput {
                gift_id: gift_id.into(),
            },
            ctx,
        )
        .await
        .unwrap()
    }

    fn tool_error<T: std::fmt::Debug>(result: Result<T, ExecError>) -> ToolError {
        match result {
            Err(ExecError::Tool(error)) => error,
            other => panic!("expected a tool error, got {other:?}"),
        }
    }

    #[test]
    fn money_is_written_the_vietnamese_way() {
        assert_eq!(format_vnd(50_000), "50.000 ₫");
        assert_eq!(format_vnd(1_250_000), "1.250.000 ₫");
        assert_eq!(format_vnd(999), "999 ₫");
        assert_eq!(format_vnd(0), "0 ₫");
        assert_eq!(format_vnd(100_000_000), "100.000.000 ₫");
    }

    #[test]
    fn interests_are_folded_and_mapped_to_tags() {
        let tags = |s: &str| interest_tags(s);
        assert_eq!(tags("Làm vườn"), ["gardening"]);
        assert_eq!(tags("TRỒNG CÂY"), ["gardening"]);
        assert_eq!(tags("thích trồng cây"), ["gardening"]);
        assert_eq!(tags("đọc sách"), ["reading"]);
        assert_eq!(tags("Sách"), ["reading"]);
        assert_eq!(tags("nấu ăn"), ["cooking"]);
        assert_eq!(tags("Cà phê"), ["coffee"]);
        assert_eq!(tags("trà"), ["tea"]);
        assert_eq!(tags("âm nhạc"), ["music"]);
        assert_eq!(tags("nhạc"), ["music"]);
        assert_eq!(tags("thể thao"), ["sports"]);
        assert_eq!(tags("chạy bộ"), ["sports"]);
        assert_eq!(tags("du lịch"), ["travel"]);
        assert_eq!(tags("công nghệ"), ["tech"]);
        assert_eq!(tags("Lặn biển"), ["diving"]);
        assert_eq!(tags("diving"), ["diving"]);
        assert_eq!(tags("Photography"), ["photography"]);
        // Decomposed accents (typed on some keyboards) fold the same.
        assert_eq!(tags("ca\u{300} phe\u{302}"), ["coffee"]);
        assert_eq!(tags("đọc sách và uống trà"), ["reading", "tea"]);
        // Ambiguous short words count only on their own.
        assert_eq!(tags("vẽ"), ["art"]);
        assert_eq!(tags("đi về quê"), ["di ve que"]);
        assert_eq!(tags("tiếng Anh"), ["tieng anh"]);
        // Unknown words are kept and match nothing.
        assert_eq!(tags("Origami"), ["origami"]);
    }

    #[test]
    fn repeated_and_blank_interests_count_once() {
        let said = vec![
            "Trà".to_owned(),
            " trà ".to_owned(),
            "  ".to_owned(),
            "nhạc".to_owned(),
        ];
        let found = interests(&said);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].said, "Trà");
        assert_eq!(found[1].tags, ["music"]);
    }

    #[tokio::test]
    async fn the_seeded_catalogue_uses_known_tags_and_prices() {
        let (ctx, _db) = context().await;
        let gifts = catalogue(&ctx).await;
        assert!((25..=45).contains(&gifts.len()), "{}", gifts.len());
        let relationships = [
            "partner",
            "parent",
            "child",
            "sibling",
            "grandparent",
            "friend",
            "colleague",
            "teacher",
            "other",
        ];
        let mut used_tags = HashSet::new();
        for gift in &gifts {
            assert!(
                (50_000..=5_000_000).contains(&gift.price_vnd),
                "{}: {}",
                gift.id,
                gift.price_vnd
            );
            assert!(gift.min_age <= gift.max_age, "{}", gift.id);
            assert!(!gift.tags.trim().is_empty(), "{}", gift.id);
            for tag in gift.tags.split_whitespace() {
                assert!(TAGS.contains(&tag), "{}: tag {tag}", gift.id);
                used_tags.insert(tag);
            }
            let rels: Vec<&str> = gift.relationships.split_whitespace().collect();
            assert!(!rels.is_empty(), "{}", gift.id);
            assert!(
                rels == ["any"] || rels.iter().all(|r| relationships.contains(r)),
                "{}: {:?}",
                gift.id,
                gift.relationships
            );
            // What the empty-result example relies on.
            assert!(!gift.has_tag("diving"), "{}", gift.id);
            assert!(
                !(gift.has_tag("sports") && gift.price_vnd < 60_000),
                "{}",
                gift.id
            );
        }
        // Every tag a person can be mapped to has at least one gift.
        for tag in TAGS {
            assert!(used_tags.contains(tag), "no gift for {tag}");
        }
    }

    #[tokio::test]
    async fn suggestions_match_interests_relationship_age_and_budget() {
        let (ctx, _db) = context().await;
        let input = SuggestGiftsInput {
            interests: vec!["làm vườn".into(), "trà".into()],
            age: Some(60),
            budget_min: Some(100_000),
            budget_max: Some(700_000),
            ..ask(RelationshipType::Parent)
        };
        let output = suggest(&input, &ctx).await.unwrap();
        assert!(output.no_results_reason.is_none());
        assert!(!output.gifts.is_empty() && output.gifts.len() <= MAX_SUGGESTIONS);
        let gifts = catalogue(&ctx).await;
        for suggestion in &output.gifts {
            let row = gifts.iter().find(|g| g.id == suggestion.gift_id).unwrap();
            assert!(row.suits(RelationshipType::Parent), "{}", row.id);
            assert!(row.fits_age(Some(60)), "{}", row.id);
            assert!(
                (100_000..=700_000).contains(&suggestion.price_vnd),
                "{}",
                row.id
            );
            assert!(!suggestion.matched_interests.is_empty(), "{}", row.id);
            for said in &suggestion.matched_interests {
                assert!(["làm vườn", "trà"].contains(&said.as_str()));
            }
        }
        let ids: Vec<&str> = output.gifts.iter().map(|g| g.gift_id.as_str()).collect();
        assert!(ids.contains(&"g-bo-lam-vuon-mini"), "{ids:?}");
        assert!(ids.contains(&"g-tra-shan-tuyet"), "{ids:?}");
        // Ranked by matched interests first.
        let counts: Vec<usize> = output
            .gifts
            .iter()
            .map(|g| g.matched_interests.len())
            .collect();
        assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    }

    #[tokio::test]
    async fn equal_matches_rank_by_closeness_to_the_budget_middle() {
        let (ctx, _db) = context().await;
        let input = SuggestGiftsInput {
            budget_min: Some(100_000),
            budget_max: Some(500_000),
            ..ask(RelationshipType::Friend)
        };
        let output = suggest(&input, &ctx).await.unwrap();
        assert_eq!(output.gifts.len(), MAX_SUGGESTIONS);
        let distances: Vec<i64> = output
            .gifts
            .iter()
            .map(|g| (i64::from(g.price_vnd) - 300_000).abs())
            .collect();
        assert!(distances.windows(2).all(|w| w[0] <= w[1]), "{distances:?}");
        assert!(output.gifts.iter().all(|g| g.matched_interests.is_empty()));
    }

    #[tokio::test]
    async fn young_children_get_gifts_for_their_age() {
        let (ctx, _db) = context().await;
        let input = SuggestGiftsInput {
            age: Some(6),
            ..ask(RelationshipType::Child)
        };
        let output = suggest(&input, &ctx).await.unwrap();
        let gifts = catalogue(&ctx).await;
        assert!(!output.gifts.is_empty());
        for suggestion in &output.gifts {
            let row = gifts.iter().find(|g| g.id == suggestion.gift_id).unwrap();
            assert!(row.min_age <= 6, "{}", row.id);
        }
    }

    #[tokio::test]
    async fn nothing_for_a_diver_under_50k_comes_with_a_reason() {
        let (ctx, _db) = context().await;
        let input = SuggestGiftsInput {
            interests: vec!["lặn biển".into()],
            budget_max: Some(50_000),
            ..ask(RelationshipType::Friend)
        };
        let output = suggest(&input, &ctx).await.unwrap();
        assert!(output.gifts.is_empty());
        let reason = output.no_results_reason.unwrap();
        assert!(reason.contains("“lặn biển”"), "{reason}");
        assert!(reason.contains("tối đa 50.000 ₫"), "{reason}");
        assert!(reason.contains("bạn bè"), "{reason}");
        assert!(
            reason.contains("chưa có món quà nào cho sở thích “lặn biển”"),
            "{reason}"
        );
        assert!(reason.contains("Hãy thử"), "{reason}");
        // "diving" in English is the same request.
        let english = SuggestGiftsInput {
            interests: vec!["diving".into()],
            ..input
        };
        assert!(suggest(&english, &ctx).await.unwrap().gifts.is_empty());
    }

    #[tokio::test]
    async fn a_too_small_budget_says_what_the_catalogue_has() {
        let (ctx, _db) = context().await;
        let input = SuggestGiftsInput {
            interests: vec!["cà phê".into()],
            budget_max: Some(100_000),
            ..ask(RelationshipType::Colleague)
        };
        let output = suggest(&input, &ctx).await.unwrap();
        assert!(output.gifts.is_empty());
        let reason = output.no_results_reason.unwrap();
        assert!(reason.contains("nới ngân sách"), "{reason}");
        assert!(
            reason.contains("180.000 ₫"),
            "cheapest coffee gift: {reason}"
        );
        assert!(!reason.contains("chưa có"), "{reason}");
    }

    #[tokio::test]
    async fn unknown_interests_match_nothing() {
        let (ctx, _db) = context().await;
        let input = SuggestGiftsInput {
            interests: vec!["origami".into()],
            ..ask(RelationshipType::Friend)
        };
        let output = suggest(&input, &ctx).await.unwrap();
        assert!(output.gifts.is_empty());
        let reason = output.no_results_reason.unwrap();
        assert!(reason.contains("“origami”"), "{reason}");
        // Some interests known, some not: the known ones still find gifts.
        let mixed = SuggestGiftsInput {
            interests: vec!["origami".into(), "board game".into()],
            ..ask(RelationshipType::Friend)
        };
        let output = suggest(&mixed, &ctx).await.unwrap();
        assert!(!output.gifts.is_empty());
        assert!(output
            .gifts
            .iter()
            .all(|g| g.matched_interests == ["board game"]));
    }

    #[tokio::test]
    async fn prepare_twice_gives_the_same_draft() {
        let (ctx, _db) = context().await;
        let first = draft_for(&ctx, "g-bo-lam-vuon-mini").await;
        let second = draft_for(&ctx, "g-bo-lam-vuon-mini").await;
        assert_eq!(first, second);
        assert!(first.draft_id.starts_with("DR-") && first.draft_id.len() == 11);
        assert_eq!(first.gift_name, "Bộ dụng cụ làm vườn mini");
        assert_eq!(first.price_vnd, 250_000);
        assert_eq!(first.delivery_vnd, 30_000);
        assert_eq!(first.total_vnd, 280_000);
        assert!(first.fictional);
        // Another person gets a draft of their own.
        let theirs = draft_for(&as_owner(&ctx, "someone-else"), "g-bo-lam-vuon-mini").await;
        assert_ne!(theirs.draft_id, first.draft_id);
        // Delivery is free from 1.000.000 ₫.
        let dear = draft_for(&ctx, "g-tra-sen-tay-ho").await;
        assert_eq!((dear.delivery_vnd, dear.total_vnd), (0, 1_200_000));
    }

    #[tokio::test]
    async fn concurrent_prepares_make_one_draft() {
        let (ctx, _db) = context().await;
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let ctx = ctx.clone();
                tokio::spawn(async move { draft_for(&ctx, "g-tham-yoga").await })
            })
            .collect();
        let mut ids = HashSet::new();
        for task in tasks {
            ids.insert(task.await.unwrap().draft_id);
        }
        assert_eq!(ids.len(), 1, "{ids:?}");
    }

    #[tokio::test]
    async fn prepare_of_an_unknown_gift_is_not_found() {
        let (ctx, _db) = context().await;
        let error = tool_error(
            prepare(
                &PrepareCheckoutInput {
                    gift_id: "g-khong-co".into(),
                },
                &ctx,
            )
            .await,
        );
        assert_eq!(error.code, ErrorCode::NotFound);
        assert!(error.message.contains("suggest_gifts"), "{}", error.message);
        assert!(!error.retryable);
    }

    #[tokio::test]
    async fn precheck_accepts_an_open_draft_of_the_owner_only() {
        let (ctx, _db) = context().await;
        let draft = draft_for(&ctx, "g-co-tuong-go").await;
        let checked = precheck(&buy(&draft.draft_id, "checkout-0001"), &ctx)
            .await
            .unwrap();
        assert_eq!(checked, draft);

        let theirs = tool_error(
            precheck(
                &buy(&draft.draft_id, "checkout-0001"),
                &as_owner(&ctx, "intruder"),
            )
            .await,
        );
        let missing = tool_error(precheck(&buy("DR-NOPE0000", "checkout-0001"), &ctx).await);
        assert_eq!(theirs.code, ErrorCode::NotFound);
        assert_eq!(missing.code, ErrorCode::NotFound);
        // The same words, ids aside: nobody learns whether someone else's draft exists.
        assert_eq!(
            theirs.message.replace(&draft.draft_id, "ID"),
            missing.message.replace("DR-NOPE0000", "ID")
        );

        commit(&buy(&draft.draft_id, "checkout-0001"), &ctx)
            .await
            .unwrap();
        // A retry of the purchase that happened only replays: nothing to refuse.
        precheck(&buy(&draft.draft_id, "checkout-0001"), &ctx)
            .await
            .unwrap();
        let again = tool_error(precheck(&buy(&draft.draft_id, "checkout-0002"), &ctx).await);
        assert_eq!(again.code, ErrorCode::DraftAlreadyCommitted);
        // The key of that purchase cannot buy another draft.
        let other = draft_for(&ctx, "g-bo-mau-nuoc").await;
        let reused = tool_error(precheck(&buy(&other.draft_id, "checkout-0001"), &ctx).await);
        assert_eq!(reused.code, ErrorCode::IdempotencyKeyReused);
    }

    #[tokio::test]
    async fn commit_twice_with_the_same_key_buys_once() {
        let (ctx, _db) = context().await;
        let draft = draft_for(&ctx, "g-dan-ukulele").await;
        let first = commit(&buy(&draft.draft_id, "checkout-0001"), &ctx)
            .await
            .unwrap();
        assert!(first.checkout_id.starts_with("CHK-"));
        assert!(first.payment_reference.starts_with("DEMO-PAY-"));
        assert_eq!(first.total_vnd, draft.total_vnd);
        assert_eq!(first.gift_name, draft.gift_name);
        assert!(first.fictional);
        let second = commit(&buy(&draft.draft_id, "checkout-0001"), &ctx)
            .await
            .unwrap();
        assert_eq!(first, second);
        assert_eq!(checkouts(&ctx).await, 1);
        // After the purchase, preparing the same gift again makes a new draft.
        let next = draft_for(&ctx, "g-dan-ukulele").await;
        assert_ne!(next.draft_id, draft.draft_id);
    }

    #[tokio::test]
    async fn the_same_key_for_another_draft_is_refused() {
        let (ctx, _db) = context().await;
        let draft = draft_for(&ctx, "g-dan-ukulele").await;
        let other = draft_for(&ctx, "g-lego-creator").await;
        commit(&buy(&draft.draft_id, "checkout-0001"), &ctx)
            .await
            .unwrap();
        let error = tool_error(commit(&buy(&other.draft_id, "checkout-0001"), &ctx).await);
        assert_eq!(error.code, ErrorCode::IdempotencyKeyReused);
        assert!(!error.retryable);
        assert_eq!(checkouts(&ctx).await, 1);
        // The other draft is still open and can be bought with a key of its own.
        commit(&buy(&other.draft_id, "checkout-0002"), &ctx)
            .await
            .unwrap();
        assert_eq!(checkouts(&ctx).await, 2);
    }

    #[tokio::test]
    async fn another_key_cannot_buy_a_committed_draft_again() {
        let (ctx, _db) = context().await;
        let draft = draft_for(&ctx, "g-khan-lua-ha-dong").await;
        commit(&buy(&draft.draft_id, "checkout-0001"), &ctx)
            .await
            .unwrap();
        let error = tool_error(commit(&buy(&draft.draft_id, "checkout-0002"), &ctx).await);
        assert_eq!(error.code, ErrorCode::DraftAlreadyCommitted);
        assert!(!error.retryable);
        assert_eq!(checkouts(&ctx).await, 1);
        // The failure is stored under its key: a retry gets the same answer.
        let again = tool_error(commit(&buy(&draft.draft_id, "checkout-0002"), &ctx).await);
        assert_eq!(again, error);
    }

    #[tokio::test]
    async fn another_owners_draft_is_not_found_and_not_bought() {
        let (ctx, _db) = context().await;
        let draft = draft_for(&ctx, "g-phieu-spa").await;
        let intruder = as_owner(&ctx, "intruder");
        let error = tool_error(commit(&buy(&draft.draft_id, "checkout-0001"), &intruder).await);
        assert_eq!(error.code, ErrorCode::NotFound);
        assert!(!error.message.contains("SELECT"), "{}", error.message);
        assert_eq!(checkouts(&ctx).await, 0);
        // The owner can still buy it, even with the same key string (keys are per person).
        commit(&buy(&draft.draft_id, "checkout-0001"), &ctx)
            .await
            .unwrap();
        assert_eq!(checkouts(&ctx).await, 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn fifty_concurrent_commits_with_one_key_buy_once() {
        let (ctx, _db) = context().await;
        let draft = draft_for(&ctx, "g-may-anh-instax").await;
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(50));
        let tasks: Vec<_> = (0..50)
            .map(|_| {
                let ctx = ctx.clone();
                let input = buy(&draft.draft_id, "checkout-race-1");
                let barrier = barrier.clone();
                tokio::spawn(async move {
                    barrier.wait().await;
                    commit(&input, &ctx).await
                })
            })
            .collect();
        let mut results = Vec::new();
        for task in tasks {
            results.push(task.await.unwrap());
        }
        assert_eq!(checkouts(&ctx).await, 1);
        let (id,): (String,) = sqlx::query_as("SELECT id FROM checkouts")
            .fetch_one(&ctx.db)
            .await
            .unwrap();
        for result in results {
            match result {
                Ok(session) => assert_eq!(session.checkout_id, id),
                Err(ExecError::Tool(error)) => {
                    assert_eq!(error.code, ErrorCode::IdempotencyKeyInUse, "{error:?}");
                    assert!(error.retryable);
                }
                Err(ExecError::Internal(details)) => panic!("{details}"),
            }
        }
        // Once the race is over, every retry gets the one checkout.
        let session = commit(&buy(&draft.draft_id, "checkout-race-1"), &ctx)
            .await
            .unwrap();
        assert_eq!(session.checkout_id, id);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_commits_with_different_keys_buy_once() {
        let (ctx, _db) = context().await;
        let draft = draft_for(&ctx, "g-vot-cau-long").await;
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(20));
        let tasks: Vec<_> = (0..20)
            .map(|n| {
                let ctx = ctx.clone();
                let input = buy(&draft.draft_id, &format!("checkout-key-{n:02}"));
                let barrier = barrier.clone();
                tokio::spawn(async move {
                    barrier.wait().await;
                    commit(&input, &ctx).await
                })
            })
            .collect();
        let mut bought = 0;
        for task in tasks {
            match task.await.unwrap() {
                Ok(_) => bought += 1,
                Err(ExecError::Tool(error)) => {
                    assert_eq!(error.code, ErrorCode::DraftAlreadyCommitted, "{error:?}")
                }
                Err(ExecError::Internal(details)) => panic!("{details}"),
            }
        }
        assert_eq!(bought, 1);
        assert_eq!(checkouts(&ctx).await, 1);
    }
}

//! The gift assistant: suggest_gifts from what the person said, then a draft and a checkout
//! bought once, with a key taken from the draft.

use super::planner::{outcome, plural, text_field, trim_message, Outcome, Planner};
use super::read::{Lang, Utterance};
use super::read_gift::ItemRef;
use super::read_money::{vnd, Budget};
use super::reply::{Call, Reply};
use super::{CREATE_CHECKOUT_SESSION, PREPARE_CHECKOUT, SUGGEST_GIFTS};
use crate::model::ModelMessage;
use serde_json::{Map, Value};
use shared::tools::{RelationshipType, ToolName};

/// Limits of create_checkout_session's idempotency key.
const MAX_IDEMPOTENCY_KEY_CHARS: usize = 100;

/// The idempotency key of a checkout of `draft_id`: the same draft always gets the same
/// key, so buying it again cannot buy twice. Characters the key may not hold become `-`.
fn checkout_key(draft_id: &str) -> String {
    format!("checkout-{draft_id}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.:-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(MAX_IDEMPOTENCY_KEY_CHARS)
        .collect()
}

const RECIPIENT_QUESTION_VI: &str = "Món quà dành cho ai?";

const RECIPIENT_QUESTION_EN: &str = "Who is the gift for?";

/// One gift of a suggest_gifts result.
#[derive(Debug, Clone, PartialEq)]
struct Gift {
    id: String,
    name: String,
    price: Option<u64>,
}

fn gifts_of(value: &Value) -> Vec<Gift> {
    let Some(list) = value.get("gifts").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|entry| {
            Some(Gift {
                id: text_field(entry, "gift_id")?.to_owned(),
                name: text_field(entry, "name")?.to_owned(),
                price: entry.get("price_vnd").and_then(Value::as_u64),
            })
        })
        .collect()
}

/// The gift whose name the message says ("mua Bình trà gốm"); the longest name wins.
fn gift_named(utterance: &Utterance, gifts: &[Gift]) -> Option<usize> {
    gifts
        .iter()
        .enumerate()
        .filter_map(|(index, gift)| {
            let name = Utterance::new(&gift.name);
            let words: Vec<&str> = name.tokens.iter().map(|t| t.folded.as_str()).collect();
            let spelling = words.join(" ");
            (words.len() >= 2 && utterance.find(&spelling, |t| &t.folded).is_some())
                .then_some((words.len(), index))
        })
        .max_by_key(|(length, index)| (*length, usize::MAX - index))
        .map(|(_, index)| index)
}

/// What suggest_gifts is asked with, gathered from what the person said.
#[derive(Debug, Clone, Default, PartialEq)]
struct GiftCriteria {
    relationship: Option<RelationshipType>,
    age: Option<u8>,
    interests: Vec<String>,
    budget: Option<Budget>,
}

impl GiftCriteria {
    fn of(utterance: &Utterance) -> Self {
        Self {
            relationship: utterance.relationship(),
            age: utterance.age(),
            interests: utterance
                .interests()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            budget: utterance.budget(),
        }
    }

    /// Fills what is missing from `older`.
    pub(super) fn or(mut self, older: Self) -> Self {
        self.relationship = self.relationship.or(older.relationship);
        self.age = self.age.or(older.age);
        if self.interests.is_empty() {
            self.interests = older.interests;
        }
        self.budget = self.budget.or(older.budget);
        self
    }

    /// The criteria of an earlier suggest_gifts call.
    fn from_arguments(arguments: &str) -> Self {
        let Ok(Value::Object(args)) = serde_json::from_str::<Value>(arguments) else {
            return Self::default();
        };
        let budget = |key: &str| {
            args.get(key)
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
        };
        let (min, max) = (budget("budget_min"), budget("budget_max"));
        Self {
            relationship: args
                .get("relationship_type")
                .cloned()
                .and_then(|value| serde_json::from_value(value).ok()),
            age: args
                .get("age")
                .and_then(Value::as_u64)
                .and_then(|n| u8::try_from(n).ok()),
            interests: args
                .get("interests")
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            budget: (min.is_some() || max.is_some()).then_some(Budget { min, max }),
        }
    }

    pub(super) fn to_json(&self, relationship: RelationshipType) -> String {
        let mut object = Map::new();
        object.insert(
            "relationship_type".into(),
            serde_json::to_value(relationship).unwrap_or(Value::Null),
        );
        if let Some(age) = self.age {
            object.insert("age".into(), Value::from(age));
        }
        if !self.interests.is_empty() {
            object.insert("interests".into(), Value::from(self.interests.clone()));
        }
        if let Some(budget) = self.budget {
            if let Some(min) = budget.min {
                object.insert("budget_min".into(), Value::from(min));
            }
            if let Some(max) = budget.max {
                object.insert("budget_max".into(), Value::from(max));
            }
        }
        Value::Object(object).to_string()
    }
}

impl Planner<'_> {
    pub(super) fn gifts(&self) -> Option<Reply> {
        if !self.offered.gifts() {
            return None;
        }
        let relationship = self.user.relationship();
        if self.offers(ToolName::PrepareCheckout) {
            let suggested = self
                .latest_ok(SUGGEST_GIFTS)
                .map(|value| gifts_of(&value))
                .unwrap_or_default();
            let named = gift_named(&self.user, &suggested);
            let reference = self.user.item_reference();
            let refers = named.is_some() || reference.is_some();
            let buys = self.user.is_buy();
            let chooses = self.user.is_choice();
            // "mua món 1", "buy #2", "chọn món số 2", or just "món số 2" after a list; a
            // message naming someone ("quà cho con thứ hai") is a new request instead.
            let wants_listed = refers && (buys || relationship.is_none());
            // "mua" alone: a purchase, but of which gift?
            let wants_some = buys && relationship.is_none() && !self.user.is_gift_request();
            if wants_listed && !suggested.is_empty() {
                return Some(self.buy(&suggested, named, reference));
            }
            if (wants_listed && (buys || chooses)) || wants_some {
                return Some(if suggested.is_empty() {
                    Reply::text(self.lang.pick(
                        "Bạn muốn mua món quà nào? Tôi chưa gợi ý món nào — món quà dành cho ai?",
                        "Which gift would you like to buy? I haven't suggested any yet — who is \
                         the gift for?",
                    ))
                } else {
                    self.buy(&suggested, named, reference)
                });
            }
        }
        if !self.offers(ToolName::SuggestGifts) {
            return None;
        }
        let asked_recipient = self.last_assistant_text().is_some_and(|text| {
            let text = text.to_lowercase();
            text.contains(&RECIPIENT_QUESTION_VI.to_lowercase())
                || text.contains(&RECIPIENT_QUESTION_EN.to_lowercase())
        });
        // In the gift assistant's own conversation, "cho mẹ, thích trà" needs no "quà".
        let own_conversation = !self.offered.restaurant() && self.user.has_gift_criteria();
        if self.user.is_gift_request() || own_conversation || asked_recipient {
            return Some(self.suggest());
        }
        None
    }

    fn gift_criteria(&self) -> GiftCriteria {
        let mut criteria = GiftCriteria::of(&self.user);
        let said_who = criteria.relationship.is_some();
        for earlier in self.open_request_messages(SUGGEST_GIFTS) {
            criteria = criteria.or(GiftCriteria::of(&earlier));
        }
        if !said_who {
            // "dưới 500k thôi" refines the last suggestion: same person, same interests.
            let previous = self
                .proposed_calls()
                .rev()
                .find(|call| call.name == SUGGEST_GIFTS)
                .map(|call| GiftCriteria::from_arguments(&call.arguments));
            if let Some(previous) = previous {
                criteria = criteria.or(previous);
            }
        }
        criteria
    }

    fn suggest(&self) -> Reply {
        let criteria = self.gift_criteria();
        let Some(relationship) = criteria.relationship else {
            return Reply::text(self.lang.pick(RECIPIENT_QUESTION_VI, RECIPIENT_QUESTION_EN));
        };
        Reply::call(
            self.lang.pick(
                "Để tôi tìm vài món quà phù hợp…",
                "Let me find some gift ideas…",
            ),
            SUGGEST_GIFTS,
            criteria.to_json(relationship),
        )
    }

    fn buy(&self, gifts: &[Gift], named: Option<usize>, reference: Option<ItemRef>) -> Reply {
        let count = gifts.len();
        let index = match (named, reference) {
            (Some(index), _) => index,
            (None, Some(ItemRef::Nth(nth))) if (1..=count).contains(&nth) => nth - 1,
            (None, Some(ItemRef::Nth(_))) => {
                return Reply::text(match self.lang {
                    Lang::Vi => {
                        format!("Danh sách gợi ý chỉ có {count} món. Bạn muốn mua món số mấy?")
                    }
                    Lang::En => format!(
                        "The list only has {count} {}. Which number would you like to buy?",
                        plural(count, "gift", "gifts")
                    ),
                });
            }
            (None, Some(ItemRef::Last)) => count - 1,
            (None, None) if count == 1 => 0,
            (None, None) => {
                return Reply::text(match self.lang {
                    Lang::Vi => format!(
                        "Bạn muốn mua món nào? Hãy chọn một số từ 1 đến {count} (ví dụ: \"mua \
                         món 1\")."
                    ),
                    Lang::En => format!(
                        "Which one would you like to buy? Pick a number from 1 to {count} (for \
                         example: \"buy #1\")."
                    ),
                });
            }
        };
        let gift = &gifts[index];
        let price = gift
            .price
            .map(|price| format!(" ({} ₫)", vnd(price)))
            .unwrap_or_default();
        let text = match self.lang {
            Lang::Vi => format!(
                "Tôi chuẩn bị bản nháp thanh toán (giả lập) cho {}{price}…",
                gift.name
            ),
            Lang::En => format!(
                "Let me prepare a (simulated) checkout draft for {}{price}…",
                gift.name
            ),
        };
        let arguments = serde_json::json!({ "gift_id": gift.id }).to_string();
        Reply::call(text, PREPARE_CHECKOUT, arguments)
    }

    pub(super) fn gifts_report(&self, value: &Value) -> String {
        let gifts = gifts_of(value);
        if gifts.is_empty() {
            let reason = text_field(value, "no_results_reason").map(trim_message);
            return match (self.lang, reason) {
                (Lang::Vi, Some(reason)) => format!(
                    "Không tìm thấy món quà phù hợp: {reason}. Bạn thử đổi ngân sách hoặc sở \
                     thích nhé."
                ),
                (Lang::Vi, None) => "Không tìm thấy món quà phù hợp. Bạn thử đổi ngân sách hoặc \
                                     sở thích nhé."
                    .to_owned(),
                (Lang::En, Some(reason)) => format!(
                    "No gifts matched: {reason}. Try a different budget or other interests."
                ),
                (Lang::En, None) => {
                    "No gifts matched. Try a different budget or other interests.".to_owned()
                }
            };
        }
        let count = gifts.len();
        let mut lines = vec![match self.lang {
            Lang::Vi => format!("Tôi gợi ý {count} món quà:"),
            Lang::En => format!(
                "Here are {count} {}:",
                plural(count, "gift idea", "gift ideas")
            ),
        }];
        for (index, gift) in gifts.iter().enumerate() {
            let number = index + 1;
            lines.push(match gift.price {
                Some(price) => format!("{number}. {} — {} ₫", gift.name, vnd(price)),
                None => format!("{number}. {}", gift.name),
            });
        }
        let mut text = lines.join("\n");
        if self.offers(ToolName::PrepareCheckout) {
            text.push_str(self.lang.pick(
                "\n\nBạn muốn mua món nào? Ví dụ: \"mua món 1\".",
                "\n\nWhich one would you like to buy? For example: \"buy #1\".",
            ));
        }
        text
    }

    /// The draft, and the call that buys it (once per message of the person).
    pub(super) fn draft_report(&self, value: &Value) -> (String, Option<Call>) {
        let Some(draft_id) = text_field(value, "draft_id") else {
            return (
                self.lang
                    .pick(
                        "Bản nháp thanh toán không có mã, nên chưa mua được gì.",
                        "The checkout draft has no id, so nothing was bought.",
                    )
                    .to_owned(),
                None,
            );
        };
        let name = text_field(value, "gift_name").unwrap_or("?");
        let amount = |key: &str| value.get(key).and_then(Value::as_u64).map(vnd);
        let cost = match (
            amount("price_vnd"),
            amount("delivery_vnd"),
            amount("total_vnd"),
        ) {
            (Some(price), Some(delivery), Some(total)) => match self.lang {
                Lang::Vi => format!(": {price} ₫ + phí giao {delivery} ₫ = {total} ₫"),
                Lang::En => format!(": {price} ₫ + delivery {delivery} ₫ = {total} ₫"),
            },
            (_, _, Some(total)) => match self.lang {
                Lang::Vi => format!(": tổng {total} ₫"),
                Lang::En => format!(": {total} ₫ in total"),
            },
            _ => String::new(),
        };
        let mut line = match self.lang {
            Lang::Vi => format!("Bản nháp thanh toán (giả lập) cho {name}{cost}."),
            Lang::En => format!("Simulated checkout draft for {name}{cost}."),
        };
        let buys = self.offers(ToolName::CreateCheckoutSession)
            && !self.called_since_user(CREATE_CHECKOUT_SESSION);
        if !buys {
            line.push_str(self.lang.pick(" Chưa mua gì cả.", " Nothing was bought."));
            return (line, None);
        }
        line.push_str(self.lang.pick(
            " Tôi tạo phiên thanh toán; bạn xác nhận trong biểu mẫu trước khi có gì xảy ra…",
            " Let me create the checkout session; you confirm in a form before anything \
             happens…",
        ));
        let arguments = serde_json::json!({
            "draft_id": draft_id,
            "idempotency_key": checkout_key(draft_id),
        })
        .to_string();
        let call = Call {
            name: CREATE_CHECKOUT_SESSION.to_owned(),
            arguments,
        };
        (line, Some(call))
    }

    /// The successful prepare_checkout result for `draft_id`, if the history has one.
    pub(super) fn draft(&self, draft_id: &str) -> Option<Value> {
        self.messages
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::ToolResult {
                    name,
                    content,
                    is_error,
                    ..
                } if name == PREPARE_CHECKOUT => match outcome(content, *is_error) {
                    Outcome::Ok(value) if text_field(&value, "draft_id") == Some(draft_id) => {
                        Some(value)
                    }
                    _ => None,
                },
                _ => None,
            })
    }

    pub(super) fn checkout_report(&self, value: &Value, arguments: &str) -> String {
        let Some(checkout_id) = text_field(value, "checkout_id") else {
            return self
                .lang
                .pick(
                    "Kết quả thanh toán không có mã thanh toán, nên tôi không thể xác nhận là \
                     đã mua.",
                    "The checkout result has no checkout id, so I can't confirm that anything \
                     was bought.",
                )
                .to_owned();
        };
        let draft_id = text_field(value, "draft_id")
            .map(str::to_owned)
            .or_else(|| {
                serde_json::from_str::<Value>(arguments)
                    .ok()
                    .and_then(|args| text_field(&args, "draft_id").map(str::to_owned))
            });
        let draft = draft_id.and_then(|id| self.draft(&id));
        let draft = draft.as_ref();
        let name = text_field(value, "gift_name")
            .or_else(|| draft.and_then(|d| text_field(d, "gift_name")))
            .unwrap_or("?");
        let total = value
            .get("total_vnd")
            .and_then(Value::as_u64)
            .or_else(|| draft.and_then(|d| d.get("total_vnd").and_then(Value::as_u64)))
            .map(|total| format!(": {} ₫", vnd(total)))
            .unwrap_or_default();
        match self.lang {
            Lang::Vi => format!(
                "Đã tạo thanh toán (giả lập) {checkout_id} cho {name}{total}. Không có tiền thật \
                 nào bị trừ."
            ),
            Lang::En => format!(
                "Created a simulated checkout {checkout_id} for {name}{total}. No real money was \
                 charged."
            ),
        }
    }

    pub(super) fn checkout_failure(&self, code: &str, quoted: &str) -> String {
        match (code, self.lang) {
            ("DECLINED", Lang::Vi) => "Chưa mua gì cả.".to_owned(),
            ("DECLINED", Lang::En) => "Nothing was bought.".to_owned(),
            (_, Lang::Vi) => format!("Chưa mua được: {quoted}."),
            (_, Lang::En) => format!("Nothing was bought: {quoted}."),
        }
    }
}

#[cfg(test)]
mod tests;

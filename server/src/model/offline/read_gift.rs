//! Reading a gift request: who it is for, their age and interests, and which gift of a
//! list the person means.

use super::lexicon::{COUNTED_WORDS, GIFT_ANCHORS, INTERESTS, PRONOUN_MARKERS, RELATIONSHIPS};
use super::read::{alternatives, digits, is_one_of, number, Utterance};
use shared::tools::RelationshipType;

/// The most interests passed to suggest_gifts (its schema's limit).
const MAX_INTERESTS: usize = 10;

/// Which gift of a suggestion list the person means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ItemRef {
    /// The n-th, counting from 1.
    Nth(usize),
    Last,
}

impl ItemRef {
    /// The item of `list` this refers to; `None` past its end.
    pub(super) fn pick<T>(self, list: &[T]) -> Option<&T> {
        match self {
            ItemRef::Nth(nth) => nth.checked_sub(1).and_then(|at| list.get(at)),
            ItemRef::Last => list.last(),
        }
    }
}

impl Utterance {
    pub(super) fn is_gift_request(&self) -> bool {
        self.has("quà|tặng|biếu|qua tang|mon qua|goi y qua|gift|gifts|present|presents")
    }

    /// Who the gift is for. A word after "cho"/"tặng"/"for" wins; before such a word, or
    /// without one, only words that cannot be pronouns count (unless there is no such word
    /// at all: "bạn thân" alone answers "who is it for?").
    pub(super) fn relationship(&self) -> Option<RelationshipType> {
        // (position, length, kind, ambiguous)
        let mut found: Vec<(usize, usize, RelationshipType, bool)> = Vec::new();
        for rule in RELATIONSHIPS {
            for phrase in alternatives(rule.phrases) {
                let length = phrase.split(' ').count();
                for position in self.positions(phrase) {
                    let next = self.lower(position + length);
                    let pronoun = length == 1 && rule.ambiguous && is_one_of(PRONOUN_MARKERS, next);
                    let number = phrase == "ba" && is_one_of(COUNTED_WORDS, next);
                    if !pronoun && !number {
                        found.push((position, length, rule.kind, rule.ambiguous));
                    }
                }
            }
        }
        // "bạn gái" is a partner, not a friend: drop matches inside longer ones.
        let mut kept: Vec<(usize, usize, RelationshipType, bool)> = found
            .iter()
            .copied()
            .filter(|(position, length, ..)| {
                !found.iter().any(|(other, other_length, ..)| {
                    other_length > length
                        && other <= position
                        && position + length <= other + other_length
                })
            })
            .collect();
        kept.sort_by_key(|(position, ..)| *position);
        let anchor = self
            .tokens
            .iter()
            .position(|token| is_one_of(GIFT_ANCHORS, &token.lower));
        match anchor {
            Some(anchor) => kept
                .iter()
                .find(|(position, ..)| *position > anchor)
                .or_else(|| kept.iter().find(|(.., ambiguous)| !ambiguous)),
            None => kept.first(),
        }
        .map(|(_, _, kind, _)| *kind)
    }

    /// "55 tuổi", "năm tuổi", "30 years old", "a 30-year-old", "aged 30".
    pub(super) fn age(&self) -> Option<u8> {
        let years = |word: &str| {
            digits(word)
                .filter(|n| *n <= 120)
                .and_then(|n| u8::try_from(n).ok())
                .or_else(|| number(word))
        };
        for index in 0..self.tokens.len() {
            let word = self.lower(index);
            for suffix in ["-year-old", "-years-old"] {
                if let Some(age) = word.strip_suffix(suffix).and_then(digits) {
                    if let Ok(age) = u8::try_from(age) {
                        if age <= 120 {
                            return Some(age);
                        }
                    }
                }
            }
            if word == "aged" {
                if let Some(age) = years(self.lower(index + 1)) {
                    return Some(age);
                }
            }
            let Some(age) = years(word) else { continue };
            let unit = self.folded(index + 1) == "tuoi"
                || (matches!(self.lower(index + 1), "years" | "year")
                    && self.lower(index + 2) == "old");
            if unit {
                return Some(age);
            }
        }
        None
    }

    /// Interests as canonical tags, in the order they are mentioned.
    pub(super) fn interests(&self) -> Vec<&'static str> {
        let mut found: Vec<(usize, &'static str)> = INTERESTS
            .iter()
            .filter_map(|(tag, phrases)| {
                alternatives(phrases)
                    .filter_map(|phrase| self.positions(phrase).first().copied())
                    .min()
                    .map(|position| (position, *tag))
            })
            .collect();
        found.sort_by_key(|(position, _)| *position);
        found
            .into_iter()
            .map(|(_, tag)| tag)
            .take(MAX_INTERESTS)
            .collect()
    }

    /// Whether the message says anything suggest_gifts can use.
    pub(super) fn has_gift_criteria(&self) -> bool {
        self.relationship().is_some()
            || self.age().is_some()
            || !self.interests().is_empty()
            || self.budget().is_some()
    }

    /// "mua", "buy": a purchase, even without saying which gift.
    pub(super) fn is_buy(&self) -> bool {
        self.has("mua|đặt mua|buy|purchase|order")
    }

    /// "chọn", "lấy", "take": a choice, when it names which gift.
    pub(super) fn is_choice(&self) -> bool {
        self.has("chọn|lấy|chon|lay|take|choose|pick|get|want")
    }

    /// Which gift of a list: "món đầu tiên", "món 1", "món số 2", "cái thứ hai", "the first
    /// one", "#2", "the 2nd", "the last one".
    pub(super) fn item_reference(&self) -> Option<ItemRef> {
        const ORDINALS: &[(&str, usize)] = &[
            ("đầu tiên|thứ nhất|dau tien|thu nhat|first|1st", 1),
            ("second|2nd", 2),
            ("third|3rd", 3),
            ("fourth|4th", 4),
            ("fifth|5th", 5),
        ];
        const MARKERS: &str = "món|số|cái|thứ|mon|so|cai|thu|number|no|option|item|gift|choice";
        self.list_reference(ORDINALS, "cuối cùng|cuối|cuoi cung|last", |index| {
            let word = self.lower(index);
            if let Some(written) = word.strip_prefix('#') {
                digits(written)
            } else if is_one_of(MARKERS, word) {
                let next = self.lower(index + 1);
                digits(next).or(number(next).map(u32::from))
            } else {
                None
            }
        })
    }

    /// Which item of a list the message means, the first it names: an ordinal of
    /// `ordinals`, a phrase of `last`, or a rank that `rank_at` reads from a word on.
    pub(super) fn list_reference(
        &self,
        ordinals: &[(&str, usize)],
        last: &str,
        rank_at: impl Fn(usize) -> Option<u32>,
    ) -> Option<ItemRef> {
        let mut found: Vec<(usize, ItemRef)> = Vec::new();
        for (phrases, nth) in ordinals {
            if let Some(position) = self.first_position(phrases, false) {
                found.push((position, ItemRef::Nth(*nth)));
            }
        }
        if let Some(position) = self.first_position(last, false) {
            found.push((position, ItemRef::Last));
        }
        for index in 0..self.tokens.len() {
            if let Some(nth) = rank_at(index).and_then(|n| usize::try_from(n).ok()) {
                found.push((index, ItemRef::Nth(nth)));
            }
        }
        found.sort_by_key(|(position, _)| *position);
        found.first().map(|(_, reference)| *reference)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn who_a_gift_is_for() {
        for (text, expected) in [
            ("quà cho mẹ chồng", Some(RelationshipType::Parent)),
            ("quà cho bà xã", Some(RelationshipType::Partner)),
            ("quà cho bà ngoại", Some(RelationshipType::Grandparent)),
            ("quà cho người yêu", Some(RelationshipType::Partner)),
            ("quà cho bạn gái", Some(RelationshipType::Partner)),
            ("quà cho bạn", Some(RelationshipType::Friend)),
            ("quà cho anh trai", Some(RelationshipType::Sibling)),
            ("quà cho chị", Some(RelationshipType::Sibling)),
            ("quà tặng thầy", Some(RelationshipType::Teacher)),
            ("quà cho cô, cô thích trà", Some(RelationshipType::Teacher)),
            ("tôi cần quà, anh ấy thích game", None),
            ("Con muốn tặng quà cho bố", Some(RelationshipType::Parent)),
            ("gift for my mom's birthday", Some(RelationshipType::Parent)),
            ("a present for my boss", Some(RelationshipType::Colleague)),
            (
                "gift for my grandmother",
                Some(RelationshipType::Grandparent),
            ),
            ("bạn thân", Some(RelationshipType::Friend)),
            ("Bạn gợi ý quà nhé", None),
            ("gift for a 5 year old boy", Some(RelationshipType::Child)),
            ("a present for my niece", Some(RelationshipType::Child)),
            ("quà cho bé gái 3 tuổi", Some(RelationshipType::Child)),
            ("gift for my girlfriend", Some(RelationshipType::Partner)),
        ] {
            assert_eq!(Utterance::new(text).relationship(), expected, "{text}");
        }
    }
}

//! Reading the person's words: a message split into words, phrase matching, the language
//! of the message and small numbers. The readers of dates, money, gifts and parcels build on it.

use crate::tools::city::fold;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lang {
    Vi,
    En,
}

impl Lang {
    /// The same language as the page and the error catalogue know it.
    pub(super) fn shared(self) -> shared::lang::Lang {
        match self {
            Lang::Vi => shared::lang::Lang::Vi,
            Lang::En => shared::lang::Lang::En,
        }
    }

    pub(super) fn pick(self, vi: &'static str, en: &'static str) -> &'static str {
        match self {
            Lang::Vi => vi,
            Lang::En => en,
        }
    }
}

/// One word as written (lowercased) and with its diacritics folded away.
#[derive(Debug, Clone)]
pub(super) struct Token {
    pub(super) lower: String,
    pub(super) folded: String,
}

/// A message split into words. Vietnamese tone marks change meaning ("tối" is evening,
/// "tôi" is I; "nắng" is sunny, "Nẵng" a city), so keywords match the lowercased words and
/// only names (cities, restaurants) match with diacritics folded away.
#[derive(Debug, Clone)]
pub(super) struct Utterance {
    pub(super) raw: String,
    pub(super) tokens: Vec<Token>,
}

const VIETNAMESE_LETTERS: &str =
    "àáảãạăằắẳẵặâầấẩẫậèéẻẽẹêềếểễệìíỉĩịòóỏõọôồốổỗộơờớởỡợùúủũụưừứửữựỳýỷỹỵđ";

fn is_separator(c: char) -> bool {
    c.is_whitespace() || ",;!?()[]{}\"“”‘’…*.".contains(c)
}

impl Utterance {
    pub(super) fn new(text: &str) -> Self {
        let tokens = text
            .to_lowercase()
            .split(is_separator)
            .map(|piece| piece.trim_matches(|c| ":-/'".contains(c)))
            .filter(|piece| !piece.is_empty())
            .map(|piece| Token {
                lower: piece.to_owned(),
                folded: fold(piece),
            })
            .collect();
        Self {
            raw: text.to_owned(),
            tokens,
        }
    }

    pub(super) fn lower(&self, index: usize) -> &str {
        self.tokens
            .get(index)
            .map_or("", |token| token.lower.as_str())
    }

    pub(super) fn folded(&self, index: usize) -> &str {
        self.tokens
            .get(index)
            .map_or("", |token| token.folded.as_str())
    }

    /// Where the words of `phrase` first appear in a row, comparing with `field`.
    pub(super) fn find(&self, phrase: &str, field: fn(&Token) -> &str) -> Option<usize> {
        let words: Vec<&str> = phrase.split(' ').collect();
        if words.is_empty() || words.len() > self.tokens.len() {
            return None;
        }
        self.tokens.windows(words.len()).position(|window| {
            window
                .iter()
                .zip(&words)
                .all(|(token, word)| field(token) == *word)
        })
    }

    /// Whether one of the `|`-separated phrases appears, as written.
    pub(super) fn has(&self, phrases: &str) -> bool {
        alternatives(phrases).any(|phrase| self.find(phrase, |t| &t.lower).is_some())
    }

    /// Whether one of the `|`-separated phrases appears, ignoring diacritics.
    pub(super) fn has_folded(&self, phrases: &str) -> bool {
        alternatives(phrases).any(|phrase| self.find(phrase, |t| &t.folded).is_some())
    }

    /// English stems: "book" covers "booking", "reserv" covers "reservation".
    pub(super) fn has_stem(&self, stems: &str) -> bool {
        self.tokens
            .iter()
            .any(|token| alternatives(stems).any(|stem| token.lower.starts_with(stem)))
    }

    pub(super) fn language(&self) -> Lang {
        const VIETNAMESE_WORDS: &str = concat!(
            "tôi|cho|người|bàn|không|thời tiết|nhà hàng|đặt|ở|muốn|mình|bạn|và|có|thế nào|",
            "giúp|nhé|ạ|toi|nguoi|khong|thoi tiet|nha hang|dat ban|muon|giup|",
            "dat cho|huy|mua|mon|qua tang|giao hang|noi thanh|lien tinh|ngoai tinh|tinh khac",
        );
        const ENGLISH_WORDS: &str = concat!(
            "the|a|an|for|at|in|is|what|weather|book|table|please|how|find|restaurant|",
            "restaurants|i|me|my|to|tomorrow|today|people|and|of|with|can|you|hi|hello|will|",
            "it|rain|help|thanks",
        );
        if self.has(VIETNAMESE_WORDS) {
            Lang::Vi
        } else if self.has(ENGLISH_WORDS) {
            // "weather in Hà Nội" is English even though the city has Vietnamese letters.
            Lang::En
        } else if self
            .raw
            .to_lowercase()
            .chars()
            .any(|c| VIETNAMESE_LETTERS.contains(c))
        {
            Lang::Vi
        } else {
            Lang::En
        }
    }
}

/// The items of a `|`-separated list; long word lists stay compact that way.
pub(super) fn alternatives(list: &str) -> impl Iterator<Item = &str> {
    list.split('|').filter(|item| !item.is_empty())
}

pub(super) fn is_one_of(list: &str, word: &str) -> bool {
    alternatives(list).any(|item| item == word)
}

pub(super) fn digits(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 4 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A count from 1 to 99, in digits or as a Vietnamese or English word.
pub(super) fn number(word: &str) -> Option<u8> {
    if let Some(value) = digits(word) {
        return u8::try_from(value).ok().filter(|n| (1..=99).contains(n));
    }
    Some(match word {
        "một" | "mot" | "one" => 1,
        "hai" | "two" => 2,
        "ba" | "three" => 3,
        "bốn" | "bon" | "tư" | "four" => 4,
        "năm" | "nam" | "five" => 5,
        "sáu" | "sau" | "six" => 6,
        "bảy" | "bay" | "seven" => 7,
        "tám" | "tam" | "eight" => 8,
        "chín" | "chin" | "nine" => 9,
        "mười" | "muoi" | "ten" => 10,
        _ => return None,
    })
}

impl Utterance {
    /// Where each occurrence of `phrase` starts, comparing the lowercased words (an English
    /// possessive "mom's" counts as "mom").
    pub(super) fn positions(&self, phrase: &str) -> Vec<usize> {
        let words: Vec<&str> = phrase.split(' ').collect();
        if words.is_empty() || words.len() > self.tokens.len() {
            return Vec::new();
        }
        self.tokens
            .windows(words.len())
            .enumerate()
            .filter(|(_, window)| {
                window.iter().zip(&words).all(|(token, word)| {
                    let lower = token.lower.as_str();
                    lower == *word
                        || lower.strip_suffix("'s").or(lower.strip_suffix("’s")) == Some(*word)
                })
            })
            .map(|(index, _)| index)
            .collect()
    }

    /// The earliest position of one of the `|`-separated phrases.
    pub(super) fn first_position(&self, phrases: &str, folded: bool) -> Option<usize> {
        let field: fn(&Token) -> &str = if folded { |t| &t.folded } else { |t| &t.lower };
        alternatives(phrases)
            .filter_map(|phrase| self.find(phrase, field))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_detection() {
        assert_eq!(Utterance::new("weather in Hà Nội").language(), Lang::En);
        assert_eq!(Utterance::new("Hà Nội").language(), Lang::Vi);
        assert_eq!(Utterance::new("toi muon dat ban").language(), Lang::Vi);
        assert_eq!(Utterance::new("book for 4").language(), Lang::En);
    }
}

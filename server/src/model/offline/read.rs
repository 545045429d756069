//! Reading the person's words: a message split into words, phrase matching, the language
//! of the message and small numbers. The readers of dates, money, gifts and parcels build on it.

use std::{collections::HashMap, sync::LazyLock};

use crate::tools::city::fold;

/// The person's language is the one the page and the error catalogue use.
pub(super) use shared::lang::Lang;

/// One word as written (lowercased) and with its diacritics folded away.
#[derive(Debug, Clone)]
pub(super) struct Token {
    pub(super) lower: String,
    pub(super) folded: String,
}

impl Token {
    /// Whether this is `word` as written, an English possessive ("mom's") counting as
    /// its word.
    fn is_lower(&self, word: &str) -> bool {
        self.lower == word || self.possessive_of() == Some(word)
    }

    /// "mom" for "mom's" (or "mom’s").
    fn possessive_of(&self) -> Option<&str> {
        let lower = self.lower.as_str();
        lower.strip_suffix("'s").or(lower.strip_suffix("’s"))
    }
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
    matches!(
        c,
        ',' | ';'
            | '!'
            | '?'
            | '('
            | ')'
            | '['
            | ']'
            | '{'
            | '}'
            | '"'
            | '“'
            | '”'
            | '‘'
            | '’'
            | '…'
            | '*'
            | '.'
    ) || c.is_whitespace()
}

/// The words of a text as [`Utterance::new`] splits it.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(is_separator)
        .map(|piece| piece.trim_matches([':', '-', '/', '\'']))
        .filter(|piece| !piece.is_empty())
}

/// How many words [`Utterance::new`] makes of `text`, without making them: lowercasing
/// maps letters to letters, so it changes no separator and the count is the same.
pub(super) fn word_count(text: &str) -> usize {
    words(text).count()
}

impl Utterance {
    pub(super) fn new(text: &str) -> Self {
        let tokens = words(&text.to_lowercase())
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
        self.starts(phrase, |token, word| field(token) == word)
            .next()
    }

    /// Where each occurrence of `phrase` starts, its words compared with `same`. Phrases
    /// are looked for by the hundred in every message read: the first word is compared
    /// before the phrase is split any further, and nothing is collected.
    fn starts<'s>(
        &'s self,
        phrase: &'s str,
        same: impl Fn(&Token, &str) -> bool + 's,
    ) -> impl Iterator<Item = usize> + 's {
        let (first, rest) = phrase.split_once(' ').unwrap_or((phrase, ""));
        (0..self.tokens.len()).filter(move |&start| {
            let mut tokens = self.tokens[start..].iter();
            tokens.next().is_some_and(|token| same(token, first))
                && (rest.is_empty()
                    || rest
                        .split(' ')
                        .all(|word| tokens.next().is_some_and(|token| same(token, word))))
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

    /// The language of the message, English when nothing in it tells.
    #[cfg(test)]
    pub(super) fn language(&self) -> Lang {
        self.language_signal().unwrap_or(Lang::En)
    }

    /// The language the words say, if they say one: the language with more of its common
    /// words, then Vietnamese letters. Names are best masked first ("Bà Mua" is no
    /// Vietnamese "mua", "Hà Nội" no sign of either language in "weather in Hà Nội").
    pub(super) fn language_signal(&self) -> Option<Lang> {
        const VIETNAMESE_WORDS: &str = concat!(
            "tôi|cho|người|bàn|không|thời tiết|nhà hàng|đặt|ở|muốn|mình|bạn|và|có|thế nào|",
            "giúp|nhé|nhe|ạ|toi|nguoi|khong|thoi tiet|nha hang|dat ban|muon|giup|",
            "dat cho|huy|mua|mon|qua tang|giao hang|noi thanh|lien tinh|ngoai tinh|tinh khac|",
            "cuối tuần|cuoi tuan|ngày mai|ngay mai|hôm nay|hom nay|tối|trưa|trua|chiều|chieu|",
            "sáng|giờ|gio|rưỡi|ruoi|lúc|luc|thứ|chủ nhật|chu nhat|tuần|tuan|tìm|tim|quán|",
            "rồi|đó|gì|nào|được|với|của|khách|khach|mưa|nắng|cảm ơn|cam on|vâng|dạ|nha|",
            "hai|bốn|mười|muoi|ngày|ngay|tháng|thang|trời|troi|ký|nội thành|liên tỉnh",
        );
        const ENGLISH_WORDS: &str = concat!(
            "the|a|an|for|at|in|is|what|weather|book|table|please|how|find|restaurant|",
            "restaurants|i|me|my|to|tomorrow|today|people|and|of|with|can|you|hi|hello|will|",
            "it|rain|help|thanks|weekend|tonight|there|then|place|seafood|lunch|dinner|noon|",
            "next|this|on|party|two|four|what's|whats|going|want|thank|cancel|show|list|",
            "bookings|where|which|monday|tuesday|wednesday|thursday|friday|saturday|sunday|",
            "gift|gifts|buy|ship|shipping|parcel|quote|some|get|be|are|we|us|our",
        );
        static VIETNAMESE: LazyLock<PhraseList> =
            LazyLock::new(|| PhraseList::new(VIETNAMESE_WORDS));
        static ENGLISH: LazyLock<PhraseList> = LazyLock::new(|| PhraseList::new(ENGLISH_WORDS));
        // A word inside a Vietnamese phrase is not English: the "on" of an unaccented
        // "cam on" (cảm ơn) made a tie, and a tie without marks reads as English.
        let mut vietnamese = 0;
        let mut phrases: Vec<(usize, usize)> = Vec::new();
        for (start, length, _) in VIETNAMESE.0.lower_in(self) {
            vietnamese += 1;
            if length > 1 {
                phrases.push((start, length));
            }
        }
        let english = ENGLISH
            .0
            .lower_in(self)
            .filter(|(at, _, _)| {
                !phrases
                    .iter()
                    .any(|(start, length)| (*start..start + length).contains(at))
            })
            .count();
        let letters = self
            .tokens
            .iter()
            .any(|token| token.lower.chars().any(|c| VIETNAMESE_LETTERS.contains(c)));
        match vietnamese.cmp(&english) {
            std::cmp::Ordering::Greater => Some(Lang::Vi),
            std::cmp::Ordering::Less => Some(Lang::En),
            // "weather Huế" and "thời tiết Hue" alike: the marks decide.
            std::cmp::Ordering::Equal if letters => Some(Lang::Vi),
            std::cmp::Ordering::Equal if vietnamese > 0 => Some(Lang::En),
            std::cmp::Ordering::Equal => None,
        }
    }

    /// The message with the words of `spans` (start, length) blanked out, positions kept.
    pub(super) fn masked(&self, spans: &[(usize, usize)]) -> Utterance {
        let mut tokens = self.tokens.clone();
        for (start, length) in spans {
            for token in tokens.iter_mut().skip(*start).take(*length) {
                *token = Token {
                    lower: MASK.to_owned(),
                    folded: MASK.to_owned(),
                };
            }
        }
        Utterance {
            raw: self.raw.clone(),
            tokens,
        }
    }

    /// Some of the words, as a message of their own (a clause of a longer message).
    pub(super) fn slice(&self, range: std::ops::Range<usize>) -> Utterance {
        let tokens: Vec<Token> = self.tokens.get(range).unwrap_or_default().to_vec();
        let raw = tokens
            .iter()
            .map(|token| token.lower.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        Utterance { raw, tokens }
    }

    /// Clauses put back together, in order.
    pub(super) fn joined(parts: &[Utterance]) -> Utterance {
        Utterance {
            raw: parts
                .iter()
                .map(|part| part.raw.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            tokens: parts
                .iter()
                .flat_map(|part| part.tokens.iter().cloned())
                .collect(),
        }
    }
}

/// What a masked word reads as: nothing any reader matches.
const MASK: &str = "\u{2022}";

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

/// A count from 1 to 99 written as one word, in digits or as a Vietnamese or English word.
pub(super) fn number(word: &str) -> Option<u8> {
    if let Some(value) = digits(word) {
        return u8::try_from(value).ok().filter(|n| (1..=99).contains(n));
    }
    if let Some(value) = english_number(word) {
        return Some(value);
    }
    unit_word(word)
}

fn unit_word(word: &str) -> Option<u8> {
    Some(match word {
        "một" | "mot" => 1,
        "hai" => 2,
        "ba" => 3,
        "bốn" | "bon" | "tư" => 4,
        "năm" | "nam" => 5,
        "sáu" | "sau" => 6,
        "bảy" | "bay" => 7,
        "tám" | "tam" => 8,
        "chín" | "chin" => 9,
        "mười" | "muoi" => 10,
        _ => return None,
    })
}

fn english_number(word: &str) -> Option<u8> {
    const ONES: [&str; 20] = [
        "",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    let position = |word: &str| ONES.iter().position(|one| !one.is_empty() && *one == word);
    if let Some(value) = position(word) {
        return u8::try_from(value).ok();
    }
    let (tens, rest) = word.split_once('-').unwrap_or((word, ""));
    let base: u8 = match tens {
        "twenty" => 20,
        "thirty" => 30,
        _ => return None,
    };
    if rest.is_empty() {
        return Some(base);
    }
    let one = u8::try_from(position(rest)?).ok().filter(|n| *n < 10)?;
    Some(base + one)
}

impl Utterance {
    /// A count starting at word `index`, and how many words it takes: "4", "bốn", "mười
    /// hai" (12), "hai mươi mốt" (21), "twenty one".
    pub(super) fn number_at(&self, index: usize) -> Option<(u8, usize)> {
        let word = self.lower(index);
        let next = self.lower(index + 1);
        if let Some(value) = digits(word) {
            return u8::try_from(value)
                .ok()
                .filter(|n| (1..=99).contains(n))
                .map(|n| (n, 1));
        }
        if let Some(tens) = english_number(word).filter(|n| *n >= 20 && n % 10 == 0) {
            if let Some(one) = english_number(next).filter(|n| (1..10).contains(n)) {
                return Some((tens + one, 2));
            }
            return Some((tens, 1));
        }
        if let Some(value) = english_number(word) {
            return Some((value, 1));
        }
        // After "mười"/"mươi" five is "lăm", one after "mươi" is "mốt", four may be "tư".
        let last_digit = |word: &str| match word {
            "lăm" | "lam" | "nhăm" => Some(5),
            "mốt" => Some(1),
            other => unit_word(other).filter(|n| *n < 10),
        };
        if matches!(word, "mười" | "muoi") {
            return Some(match last_digit(next) {
                Some(one) => (10 + one, 2),
                None => (10, 1),
            });
        }
        let unit = unit_word(word)?;
        // "hai mươi" (20); unaccented "hai muoi" reads the same way.
        if (2..10).contains(&unit) && self.folded(index + 1) == "muoi" && next != "mười" {
            return Some(match last_digit(self.lower(index + 2)) {
                Some(one) => (unit * 10 + one, 3),
                None => (unit * 10, 2),
            });
        }
        Some((unit, 1))
    }
}

/// Phrases made ready to be found all at once, each filed under its first word: a message
/// is then read once, word by word, however many phrases there are. Every reading of a
/// message looks for every restaurant name, city and place, and trying each phrase at
/// each word was most of what the offline model cost per reply.
pub(super) struct PhraseIndex<T> {
    /// Each phrase's words, and what it stands for.
    phrases: Vec<(Vec<String>, T)>,
    /// First word → the phrases starting with it, in the order they were given.
    by_first: HashMap<String, Vec<usize>>,
}

impl<T> PhraseIndex<T> {
    /// `phrases` are words separated by single spaces; an empty one is never found.
    pub(super) fn new(phrases: impl IntoIterator<Item = (String, T)>) -> Self {
        let mut index = Self {
            phrases: Vec::new(),
            by_first: HashMap::new(),
        };
        for (phrase, value) in phrases {
            let words: Vec<String> = phrase.split(' ').map(str::to_owned).collect();
            let Some(first) = words.first().filter(|word| !word.is_empty()).cloned() else {
                continue;
            };
            index
                .by_first
                .entry(first)
                .or_default()
                .push(index.phrases.len());
            index.phrases.push((words, value));
        }
        index
    }

    /// Every occurrence in `said`, compared on the folded words: (first word, how many
    /// words, the phrase's value), by position, then in the order the phrases were given.
    pub(super) fn folded_in<'s>(
        &'s self,
        said: &'s Utterance,
    ) -> impl Iterator<Item = (usize, usize, &'s T)> + 's {
        self.occurrences(
            said,
            |token| [Some(token.folded.as_str()), None],
            |token, word| token.folded == word,
        )
    }

    /// Every occurrence in `said`, compared on the lowercased words with an English
    /// possessive counting as its word, as [`Utterance::count`] compares.
    fn lower_in<'s>(
        &'s self,
        said: &'s Utterance,
    ) -> impl Iterator<Item = (usize, usize, &'s T)> + 's {
        self.occurrences(
            said,
            |token| [Some(token.lower.as_str()), token.possessive_of()],
            Token::is_lower,
        )
    }

    fn occurrences<'s>(
        &'s self,
        said: &'s Utterance,
        keys: fn(&Token) -> [Option<&str>; 2],
        same: fn(&Token, &str) -> bool,
    ) -> impl Iterator<Item = (usize, usize, &'s T)> + 's {
        said.tokens
            .iter()
            .enumerate()
            .flat_map(move |(start, token)| {
                // Two keys are never the same word ("mom's", "mom"): no phrase comes twice.
                let candidates = keys(token)
                    .into_iter()
                    .flatten()
                    .filter_map(|key| self.by_first.get(key))
                    .flatten()
                    .copied();
                candidates.filter_map(move |id| {
                    let (words, value) = &self.phrases[id];
                    let rest = said.tokens.get(start + 1..start + words.len())?;
                    rest.iter()
                        .zip(&words[1..])
                        .all(|(token, word)| same(token, word))
                        .then_some((start, words.len(), value))
                })
            })
    }
}

/// A `|`-separated list of phrases made ready for counting (a word is a phrase of one).
struct PhraseList(PhraseIndex<()>);

impl PhraseList {
    fn new(list: &'static str) -> Self {
        Self(PhraseIndex::new(
            alternatives(list).map(|phrase| (phrase.to_owned(), ())),
        ))
    }

    /// The occurrences of all the list's phrases, as [`Utterance::count`] counts each.
    /// (`language_signal` counts its lists with the places of their phrases; this is what
    /// the tests compare with.)
    #[cfg(test)]
    fn count_in(&self, said: &Utterance) -> usize {
        self.0.lower_in(said).count()
    }
}

impl Utterance {
    /// Where each occurrence of `phrase` starts, comparing the lowercased words (an English
    /// possessive "mom's" counts as "mom").
    pub(super) fn positions(&self, phrase: &str) -> Vec<usize> {
        self.starts(phrase, Token::is_lower).collect()
    }

    /// How many times `phrase` occurs, as [`Self::positions`] finds them, without
    /// collecting them. (The readers count lists through [`PhraseList`]; this is what
    /// its tests compare with.)
    #[cfg(test)]
    pub(super) fn count(&self, phrase: &str) -> usize {
        self.starts(phrase, Token::is_lower).count()
    }

    /// Where each occurrence of `phrase` starts, ignoring diacritics. (The readers find
    /// names and places through a [`PhraseIndex`]; this is what its tests compare with.)
    #[cfg(test)]
    pub(super) fn positions_folded(&self, phrase: &str) -> Vec<usize> {
        self.starts(phrase, |token, word| token.folded == word)
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
    fn a_phrase_list_counts_as_its_phrases_one_by_one() {
        const LIST: &str =
            "mom|the|thời tiết|ha noi|mom|it|what's|dat ban|mom gift|mom's gift|it is|the the";
        let list = PhraseList::new(LIST);
        for text in [
            "Mom's birthday: the weather, thời tiết Hà Nội, the the",
            "it's what's it it's MOM’s",
            "dat ban dat ban ha noi",
            "",
            "thời",
            "a mom's gift, mom gift, mom’s gift: it is",
            "the the the",
        ] {
            let said = Utterance::new(text);
            let one_by_one: usize = alternatives(LIST).map(|phrase| said.count(phrase)).sum();
            assert_eq!(list.count_in(&said), one_by_one, "{text}");
        }
        assert_eq!(list.count_in(&Utterance::new("mom mom")), 4);
    }

    #[test]
    fn a_phrase_index_finds_each_phrase_where_it_alone_is_found() {
        const PHRASES: [&str; 9] = [
            "ha noi",
            "ha noi dong",
            "ha",
            "noi",
            "ha noi",
            "ho chi minh",
            "chi",
            "",
            "ca phe muoi hue",
        ];
        let index = PhraseIndex::new(PHRASES.iter().map(|p| ((*p).to_owned(), *p)));
        for text in [
            "Hà Nội, Hà Nội Đông và Hồ Chí Minh",
            "ha noi ha noi ha",
            "Cà phê muối Huế ở Huế? cà phê muối",
            "ho chi",
            "",
            "noi",
        ] {
            let said = Utterance::new(text);
            let found: Vec<(usize, usize, &str)> = index
                .folded_in(&said)
                .map(|(at, len, p)| (at, len, *p))
                .collect();
            let mut one_by_one: Vec<(usize, usize, usize)> = PHRASES
                .iter()
                .enumerate()
                .flat_map(|(given, phrase)| {
                    let len = phrase.split(' ').count();
                    said.positions_folded(phrase)
                        .into_iter()
                        .map(move |at| (at, given, len))
                })
                .collect();
            // By position, then in the order the phrases were given.
            one_by_one.sort_unstable();
            let one_by_one: Vec<(usize, usize, &str)> = one_by_one
                .into_iter()
                .map(|(at, given, len)| (at, len, PHRASES[given]))
                .collect();
            assert_eq!(found, one_by_one, "{text}");
        }
    }

    #[test]
    fn words_are_counted_as_an_utterance_makes_them() {
        for text in [
            "ĐẶT BÀN ở Hà Nội: 19:00 - 4 người!",
            "İstanbul'dan 'quoted' -/- :: ",
            "Σ ΣΑΣ ǅ ǈ ß ﬃ",
            "a…b“c”d‘e’f",
            "",
            "   \t\n",
        ] {
            assert_eq!(
                word_count(text),
                Utterance::new(text).tokens.len(),
                "{text}"
            );
        }
        assert_eq!(word_count("Thời tiết Hà Nội hôm nay thế nào?"), 8);
    }

    #[test]
    fn language_detection() {
        assert_eq!(Utterance::new("weather in Hà Nội").language(), Lang::En);
        assert_eq!(Utterance::new("Hà Nội").language(), Lang::Vi);
        assert_eq!(Utterance::new("toi muon dat ban").language(), Lang::Vi);
        assert_eq!(Utterance::new("book for 4").language(), Lang::En);
    }
}

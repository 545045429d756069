//! Reading money: amounts in đồng as people write them ("500k", "1,5 triệu", "1tr5",
//! "500.000đ"), the budget they make ("dưới", "từ … đến", "khoảng"), and đồng written back.

use super::lexicon::{ABOUT, AT_LEAST, AT_MOST, MONEY_UNITS, RANGE_JOINS};
use super::read::{alternatives, is_one_of, Utterance};

/// A price range from the person's words, in đồng.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Budget {
    pub(super) min: Option<u32>,
    pub(super) max: Option<u32>,
}

impl Utterance {
    pub(super) fn budget(&self) -> Option<Budget> {
        budget(&self.raw)
    }
}

/// A number in the text, maybe with a money unit.
#[derive(Debug, Clone, PartialEq)]
struct Amount {
    /// Byte range in the lowercased text, unit included.
    start: usize,
    end: usize,
    /// Digit groups between `.`/`,`: "1,5" is ["1", "5"], "500.000" is ["500", "000"].
    groups: Vec<String>,
    unit: Option<u64>,
    /// "1tr5": the 5 hundred thousands after the unit.
    tail: u64,
}

impl Amount {
    /// The amount in đồng, with `multiplier` for its unit. Groups of three digits are
    /// thousands ("500.000đ"); otherwise a separator is a decimal point ("1,5 triệu").
    fn vnd(&self, multiplier: u64) -> Option<u64> {
        let groups = &self.groups;
        let grouped = groups.len() > 1
            && groups[1..].iter().all(|group| group.len() == 3)
            && (multiplier == 1 || groups.len() > 2);
        let value = if groups.len() == 1 || grouped {
            groups
                .concat()
                .parse::<u64>()
                .ok()?
                .checked_mul(multiplier)?
        } else if groups.len() == 2 && groups[1].len() <= 6 {
            let whole = groups[0].parse::<u64>().ok()?.checked_mul(multiplier)?;
            let fraction: u64 = groups[1].parse().ok()?;
            let scale = 10u64.pow(u32::try_from(groups[1].len()).ok()?);
            whole.checked_add(fraction.checked_mul(multiplier)? / scale)?
        } else {
            return None;
        };
        value.checked_add(self.tail)
    }
}

/// Every number in `lower` (lowercased text), with its money unit if it has one. A number
/// glued to letters that are not a unit ("2kg", "25t", "bk-1a2b") is not an amount.
fn money_amounts(lower: &str) -> Vec<Amount> {
    let chars: Vec<(usize, char)> = lower.char_indices().collect();
    let byte = |index: usize| chars.get(index).map_or(lower.len(), |(at, _)| *at);
    let mut amounts = Vec::new();
    let mut index = 0;
    while index < chars.len() {
        let (start, c) = chars[index];
        let glued = index
            .checked_sub(1)
            .is_some_and(|before| chars[before].1.is_alphanumeric());
        if !c.is_ascii_digit() || glued {
            index += 1;
            continue;
        }
        let mut groups = vec![String::new()];
        let mut cursor = index;
        loop {
            while let Some((_, digit)) = chars.get(cursor).filter(|(_, c)| c.is_ascii_digit()) {
                if let Some(group) = groups.last_mut() {
                    group.push(*digit);
                }
                cursor += 1;
            }
            let separator = chars
                .get(cursor)
                .is_some_and(|(_, c)| matches!(c, '.' | ','));
            let digit_after = chars
                .get(cursor + 1)
                .is_some_and(|(_, c)| c.is_ascii_digit());
            if separator && digit_after {
                groups.push(String::new());
                cursor += 1;
            } else {
                break;
            }
        }
        let number_end = cursor;
        let mut unit_start = cursor;
        while chars.get(unit_start).is_some_and(|(_, c)| *c == ' ') {
            unit_start += 1;
        }
        let rest = &lower[byte(unit_start)..];
        let mut unit = None;
        let mut tail = 0;
        let mut end = byte(number_end);
        for (word, multiplier) in MONEY_UNITS {
            let Some(after) = rest.strip_prefix(word) else {
                continue;
            };
            let mut next = after.chars();
            match next.next() {
                None => {}
                Some(c) if !c.is_alphanumeric() => {}
                // "1tr5" is 1,5 triệu.
                Some(c)
                    if *multiplier == 1_000_000
                        && c.is_ascii_digit()
                        && next.next().is_none_or(|c| !c.is_alphanumeric()) =>
                {
                    tail = u64::from(c.to_digit(10).unwrap_or(0)) * multiplier / 10;
                    end = byte(unit_start) + word.len() + 1;
                    unit = Some(*multiplier);
                    break;
                }
                Some(_) => continue,
            }
            end = byte(unit_start) + word.len();
            unit = Some(*multiplier);
            break;
        }
        let glued_after = chars
            .get(number_end)
            .is_some_and(|(_, c)| c.is_alphanumeric());
        if unit.is_some() || !glued_after {
            amounts.push(Amount {
                start,
                end,
                groups,
                unit,
                tail,
            });
        }
        index = chars
            .iter()
            .position(|(at, _)| *at >= end)
            .unwrap_or(chars.len())
            .max(number_end);
    }
    amounts
}

/// Whether `text` ends with `word` as a whole word.
fn ends_with_word(text: &str, word: &str) -> bool {
    text.strip_suffix(word).is_some_and(|rest| {
        word.chars().all(|c| !c.is_alphanumeric())
            || rest
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric())
    })
}

/// The budget in `raw`: "dưới 50k", "từ 300k đến 800k", "300k-800k", "khoảng 500k" (±20%),
/// "under 500k", "1,5 triệu", "1.5tr"; a bare amount with a unit is the most to spend.
pub(super) fn budget(raw: &str) -> Option<Budget> {
    let lower = raw.to_lowercase();
    let amounts = money_amounts(&lower);
    let small = |value: u64| u32::try_from(value).ok();
    for (index, amount) in amounts.iter().enumerate() {
        if let Some(next) = amounts.get(index + 1) {
            let between = lower[amount.end..next.start].trim();
            if is_one_of(RANGE_JOINS, between) && (amount.unit.is_some() || next.unit.is_some()) {
                // "300-800k": the first number takes the second's unit.
                let low = amount.vnd(amount.unit.or(next.unit).unwrap_or(1));
                let high = next.vnd(next.unit.or(amount.unit).unwrap_or(1));
                if let (Some(low), Some(high)) = (low.and_then(small), high.and_then(small)) {
                    return Some(Budget {
                        min: Some(low),
                        max: Some(high),
                    });
                }
            }
        }
        let Some(value) = amount.vnd(amount.unit.unwrap_or(1)).and_then(small) else {
            continue;
        };
        let before_start = index.checked_sub(1).map_or(0, |before| amounts[before].end);
        let before = lower[before_start..amount.start].trim_end();
        let after = lower[amount.end..].trim_start();
        let qualifier = |list: &str| alternatives(list).any(|word| ends_with_word(before, word));
        let (at_most, at_least, about) =
            (qualifier(AT_MOST), qualifier(AT_LEAST), qualifier(ABOUT));
        let or_more = ["trở lên", "tro len", "or more", "and up", "+"]
            .iter()
            .any(|word| after.starts_with(word));
        let or_less = ["trở xuống", "tro xuong", "or less"]
            .iter()
            .any(|word| after.starts_with(word));
        let qualified = at_most || at_least || about || or_more || or_less;
        // A number without a unit is money only after a budget word, and then not "5 tuổi".
        if amount.unit.is_none() && !(qualified && value >= 1000) {
            continue;
        }
        return Some(if about {
            Budget {
                min: Some(value - value / 5),
                max: value.checked_add(value / 5),
            }
        } else if (at_least || or_more) && !or_less {
            Budget {
                min: Some(value),
                max: None,
            }
        } else {
            Budget {
                min: None,
                max: Some(value),
            }
        });
    }
    None
}

/// Whole đồng with a point between thousands: 450000 → "450.000".
pub(super) fn vnd(amount: u64) -> String {
    let digits = amount.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push('.');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_in_vietnamese_and_english() {
        let cases = [
            ("dưới 50k", Some((None, Some(50_000)))),
            ("dưới 1 triệu", Some((None, Some(1_000_000)))),
            ("từ 300k đến 800k", Some((Some(300_000), Some(800_000)))),
            ("300k-800k", Some((Some(300_000), Some(800_000)))),
            ("300 - 800k", Some((Some(300_000), Some(800_000)))),
            ("khoảng 500k", Some((Some(400_000), Some(600_000)))),
            ("under 500k", Some((None, Some(500_000)))),
            ("1,5 triệu", Some((None, Some(1_500_000)))),
            ("1.5tr", Some((None, Some(1_500_000)))),
            ("tầm 1tr5", Some((Some(1_200_000), Some(1_800_000)))),
            ("500.000đ", Some((None, Some(500_000)))),
            ("dưới 200000 vnd", Some((None, Some(200_000)))),
            ("tối đa 2.000.000", Some((None, Some(2_000_000)))),
            ("trên 1 triệu", Some((Some(1_000_000), None))),
            ("2 triệu trở lên", Some((Some(2_000_000), None))),
            ("at least 300k", Some((Some(300_000), None))),
            ("200 nghìn", Some((None, Some(200_000)))),
            ("mẹ 55 tuổi", None),
            ("dưới 5 tuổi", None),
            ("2kg", None),
            ("BK-1A2B3C4D", None),
        ];
        for (text, expected) in cases {
            let expected = expected.map(|(min, max)| Budget { min, max });
            assert_eq!(budget(text), expected, "{text}");
        }
        assert_eq!(vnd(0), "0");
        assert_eq!(vnd(450_000), "450.000");
        assert_eq!(vnd(1_250_000), "1.250.000");
    }
}

//! Reading a parcel: the shipping zone and the weight, the weight kept as the person typed it.

use super::lexicon::WEIGHT_UNITS;
use super::read::Utterance;

impl Utterance {
    pub(super) fn is_shipping(&self) -> bool {
        self.has_folded(concat!(
            "giao hang|gui hang|van chuyen|phi ship|bao gia|cuoc|buu kien|goi hang|phi giao|",
            "ship|gui",
        )) || self.has_stem("ship|deliver|parcel|package|quote|send|courier")
    }

    /// "local" (nội thành, trong thành phố) or "regional" (liên tỉnh, ngoại tỉnh, tỉnh
    /// khác); the first one mentioned.
    pub(super) fn zone(&self) -> Option<&'static str> {
        let local = [
            self.first_position(
                "noi thanh|trong thanh pho|cung thanh pho|noi tinh|trong tp|noi do",
                true,
            ),
            self.first_position(
                "local|same city|within the city|in town|in the city|in-city",
                false,
            ),
        ]
        .into_iter()
        .flatten()
        .min();
        let regional = [
            self.first_position(
                "lien tinh|ngoai tinh|tinh khac|di tinh|khac tinh|ngoai thanh pho",
                true,
            ),
            self.first_position(
                "regional|another province|other province|another city|other city|out of town|\
                 interprovincial",
                false,
            ),
        ]
        .into_iter()
        .flatten()
        .min();
        match (local, regional) {
            (Some(l), Some(r)) if r < l => Some("regional"),
            (Some(_), _) => Some("local"),
            (None, Some(_)) => Some("regional"),
            // "từ Hà Nội vào Sài Gòn", "from Hue to Da Nang": two places are two provinces.
            (None, None) => (self.places_named() >= 2).then_some("regional"),
        }
    }

    /// The parcel's weight, as JSON number text exactly as written ("2,5 kg" → "2.5").
    pub(super) fn weight(&self) -> Option<String> {
        weight_text(&self.raw)
    }
}

/// The first weight in kilograms in `raw` ("2 kg", "2kg", "2,5 kg", "0.75 ký", "3 cân"),
/// as JSON number text exactly as typed: a decimal comma becomes a point, nothing else
/// changes except leading zeros JSON does not allow ("02" → "2", ",5" → "0.5"). It never
/// goes through a float, so "2.3" stays "2.3".
fn weight_text(raw: &str) -> Option<String> {
    let lower = raw.to_lowercase();
    let chars: Vec<(usize, char)> = lower.char_indices().collect();
    let byte = |index: usize| chars.get(index).map_or(lower.len(), |(at, _)| *at);
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index].1;
        let alphanumeric = |at: Option<usize>| at.is_some_and(|at| chars[at].1.is_alphanumeric());
        // "a2", or "bk-2kg" (an id, not a weight).
        let glued = alphanumeric(index.checked_sub(1))
            || (index.checked_sub(1).is_some_and(|at| chars[at].1 == '-')
                && alphanumeric(index.checked_sub(2)));
        if !c.is_ascii_digit() || glued {
            index += 1;
            continue;
        }
        // ",5 kg": a leading separator after a space means "0,5".
        let leading_point = index
            .checked_sub(1)
            .is_some_and(|before| matches!(chars[before].1, '.' | ','))
            && index
                .checked_sub(2)
                .is_none_or(|before| !chars[before].1.is_alphanumeric());
        let mut cursor = index;
        let mut whole = String::new();
        while let Some((_, digit)) = chars.get(cursor).filter(|(_, c)| c.is_ascii_digit()) {
            whole.push(*digit);
            cursor += 1;
        }
        let mut fraction = String::new();
        let separator = chars
            .get(cursor)
            .is_some_and(|(_, c)| matches!(c, '.' | ','));
        if separator
            && chars
                .get(cursor + 1)
                .is_some_and(|(_, c)| c.is_ascii_digit())
        {
            cursor += 1;
            while let Some((_, digit)) = chars.get(cursor).filter(|(_, c)| c.is_ascii_digit()) {
                fraction.push(*digit);
                cursor += 1;
            }
        }
        let number_end = cursor;
        let mut unit_start = cursor;
        while chars.get(unit_start).is_some_and(|(_, c)| *c == ' ') {
            unit_start += 1;
        }
        let rest = &lower[byte(unit_start)..];
        let has_unit = WEIGHT_UNITS.iter().any(|unit| starts_with_unit(rest, unit));
        let grams = !has_unit && !leading_point && gram_unit(rest, whole.len(), &fraction);
        if grams {
            return Some(grams_as_kilograms(&whole, &fraction));
        }
        if has_unit {
            let (whole, fraction) = if leading_point {
                ("0".to_owned(), whole)
            } else {
                (whole, fraction)
            };
            let trimmed = whole.trim_start_matches('0');
            let whole = if trimmed.is_empty() { "0" } else { trimmed };
            return Some(if fraction.is_empty() {
                whole.to_owned()
            } else {
                format!("{whole}.{fraction}")
            });
        }
        index = number_end.max(index + 1);
    }
    None
}

/// Whether `rest` starts with a unit of grams. A bare "g" counts only after three digits
/// or more ("500g"): "9g", "19g" are hours in Vietnamese ("9 giờ").
fn gram_unit(rest: &str, whole_digits: usize, fraction: &str) -> bool {
    ["grams", "gram", "gam", "gr"]
        .iter()
        .any(|unit| starts_with_unit(rest, unit))
        || (whole_digits >= 3 && fraction.is_empty() && starts_with_unit(rest, "g"))
}

/// Whether `rest` starts with the word `unit` ("kg" in "kg nội thành", not in "kgx").
fn starts_with_unit(rest: &str, unit: &str) -> bool {
    rest.strip_prefix(unit)
        .is_some_and(|after| after.chars().next().is_none_or(|c| !c.is_alphanumeric()))
}

/// Grams written as `whole`.`fraction`, in kilograms: the decimal point moved three places
/// on the digits as typed, so "500" is "0.5" and "1250" is "1.25", never via a float.
fn grams_as_kilograms(whole: &str, fraction: &str) -> String {
    let whole = whole.trim_start_matches('0');
    let padded = format!("{whole:0>4}");
    let (kilos, grams) = padded.split_at(padded.len() - 3);
    let kilos = kilos.trim_start_matches('0');
    let kilos = if kilos.is_empty() { "0" } else { kilos };
    let decimals = format!("{grams}{fraction}");
    let decimals = decimals.trim_end_matches('0');
    if decimals.is_empty() {
        kilos.to_owned()
    } else {
        format!("{kilos}.{decimals}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_copied_not_computed() {
        for (text, expected) in [
            ("2 kg", Some("2")),
            ("2kg", Some("2")),
            ("2,5 kg", Some("2.5")),
            ("2.5kg", Some("2.5")),
            ("0.75 ký", Some("0.75")),
            ("3 cân", Some("3")),
            ("1,10 kg", Some("1.10")),
            ("02 kg", Some("2")),
            ("nặng ,5 kg", Some("0.5")),
            ("10 ki lô", Some("10")),
            ("0.1 kg", Some("0.1")),
            ("nặng 2", None),
            ("3 cái", None),
            ("BK-2KG", None),
            ("500g", Some("0.5")),
            ("ship 500 g from Hue", Some("0.5")),
            ("1250 gram", Some("1.25")),
            ("300 gam", Some("0.3")),
            ("2,5 gr", Some("0.0025")),
            ("2000g", Some("2")),
            ("50 grams", Some("0.05")),
            // Hours, not grams.
            ("gửi lúc 9g sáng", None),
            ("19g tối nay", None),
        ] {
            assert_eq!(weight_text(text).as_deref(), expected, "{text}");
        }
    }
}

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
            (None, None) => None,
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
        let has_unit = WEIGHT_UNITS.iter().any(|unit| {
            rest.strip_prefix(unit)
                .is_some_and(|after| after.chars().next().is_none_or(|c| !c.is_alphanumeric()))
        });
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
        ] {
            assert_eq!(weight_text(text).as_deref(), expected, "{text}");
        }
    }
}

//! The two languages people use datban in, and how one is chosen.
//!
//! One type for the page, the error catalogue and the offline model, so "the person's
//! language" means the same thing everywhere.

use serde::{Deserialize, Serialize};

/// A language of the page and of the sentences people read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// Vietnamese, datban's first language and the default.
    #[default]
    Vi,
    /// English.
    En,
}

impl Lang {
    /// Both languages, in the order the switch shows them.
    pub const ALL: [Lang; 2] = [Lang::Vi, Lang::En];

    /// The BCP 47 tag, as in `<html lang>` and the `lang` cookie.
    pub const fn code(self) -> &'static str {
        match self {
            Lang::Vi => "vi",
            Lang::En => "en",
        }
    }

    /// The language's own name, for the switch.
    pub const fn native_name(self) -> &'static str {
        match self {
            Lang::Vi => "Tiếng Việt",
            Lang::En => "English",
        }
    }

    /// The text for this language of a pair written side by side.
    pub fn pick<T>(self, vi: T, en: T) -> T {
        match self {
            Lang::Vi => vi,
            Lang::En => en,
        }
    }

    /// A tag as written in a cookie or a query (`vi`, `en-GB`); `None` for the others.
    pub fn parse(tag: &str) -> Option<Lang> {
        let primary = tag
            .trim()
            .split(['-', '_'])
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        match primary.as_str() {
            "vi" => Some(Lang::Vi),
            "en" => Some(Lang::En),
            _ => None,
        }
    }

    /// The best of our languages for an `Accept-Language` header (RFC 9110 §12.5.4):
    /// the one with the highest weight, the earlier on a tie; `None` when the header
    /// names neither (the caller then uses the default).
    pub fn from_accept_language(header: &str) -> Option<Lang> {
        let mut best: Option<(Lang, u16)> = None;
        for item in header.split(',') {
            let mut pieces = item.split(';');
            let Some(lang) = pieces.next().and_then(Lang::parse) else {
                continue;
            };
            let weight = pieces
                .find_map(|param| {
                    let (key, value) = param.split_once('=')?;
                    (key.trim().eq_ignore_ascii_case("q")).then(|| parse_weight(value.trim()))
                })
                .unwrap_or(Some(1000));
            let Some(weight) = weight.filter(|w| *w > 0) else {
                continue;
            };
            if best.is_none_or(|(_, w)| weight > w) {
                best = Some((lang, weight));
            }
        }
        best.map(|(lang, _)| lang)
    }
}

/// A `q` value in thousandths; `None` when it is not a weight (then the item is ignored).
fn parse_weight(text: &str) -> Option<u16> {
    let value: f32 = text.parse().ok()?;
    (0.0..=1.0)
        .contains(&value)
        .then(|| (value * 1000.0).round() as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_language_picks_the_heaviest_of_ours() {
        assert_eq!(Lang::from_accept_language("en-US,en;q=0.9"), Some(Lang::En));
        assert_eq!(
            Lang::from_accept_language("fr-FR, en;q=0.5, vi;q=0.8"),
            Some(Lang::Vi)
        );
        assert_eq!(
            Lang::from_accept_language("vi-VN,vi;q=0.9,en;q=0.8"),
            Some(Lang::Vi)
        );
        assert_eq!(Lang::from_accept_language("de, fr;q=0.7"), None);
        assert_eq!(
            Lang::from_accept_language("en;q=0, vi;q=0.1"),
            Some(Lang::Vi)
        );
        assert_eq!(Lang::from_accept_language("en;q=abc"), None);
        assert_eq!(Lang::from_accept_language(""), None);
        assert_eq!(Lang::from_accept_language("*"), None);
    }

    #[test]
    fn tags_parse_by_their_primary_subtag() {
        assert_eq!(Lang::parse("EN-gb"), Some(Lang::En));
        assert_eq!(Lang::parse("vi_VN"), Some(Lang::Vi));
        assert_eq!(Lang::parse("e"), None);
        for lang in Lang::ALL {
            assert_eq!(Lang::parse(lang.code()), Some(lang));
        }
    }
}

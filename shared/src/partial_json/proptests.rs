//! `proptests` of `partial_json`.

use super::*;
use proptest::prelude::*;

/// Text with the characters that stress the string scanner: escapes, controls,
/// multi-byte characters and surrogate-pair characters.
fn arb_text() -> impl Strategy<Value = String> {
    let special = prop_oneof![
        Just('"'),
        Just('\\'),
        Just('/'),
        Just('\n'),
        Just('\u{0}'),
        Just('\u{1f}'),
        Just('\u{7f}'),
        Just('é'),
        Just('ộ'),
        Just('😀'),
    ];
    let any_char =
        prop_oneof![3 => any::<char>(), 2 => special, 3 => proptest::char::range('a', 'z')];
    proptest::collection::vec(any_char, 0..10).prop_map(|chars| chars.into_iter().collect())
}

/// Finite floats that serde_json reads back as exactly the same float (its default float
/// parsing may be one ULP off, which is serde_json's business, not this parser's).
fn arb_float() -> impl Strategy<Value = Number> {
    any::<f64>().prop_filter_map("not finite or not round-tripping", |float| {
        let number = Number::from_f64(float)?;
        let text = serde_json::to_string(&number).ok()?;
        let back: Number = serde_json::from_str(&text).ok()?;
        (back == number).then_some(number)
    })
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        arb_float().prop_map(Value::Number),
        arb_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((arb_text(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// A value and its compact or pretty serialisation.
fn arb_document() -> impl Strategy<Value = (Value, String)> {
    (arb_value(), any::<bool>()).prop_map(|(value, pretty)| {
        // Value's Display is serde_json's writer (pretty with `#`), and cannot fail.
        let text = if pretty {
            format!("{value:#}")
        } else {
            value.to_string()
        };
        (value, text)
    })
}

/// Cuts `text` into pieces of roughly the given byte sizes, moved forward to character
/// boundaries; the last piece takes the rest.
fn cut(text: &str, sizes: &[usize]) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for &size in sizes {
        if start >= text.len() {
            break;
        }
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(text[start..end].to_owned());
        start = end;
    }
    pieces.push(text[start..].to_owned());
    pieces
}

fn char_boundaries(text: &str) -> impl Iterator<Item = usize> + '_ {
    (0..=text.len()).filter(|&i| text.is_char_boundary(i))
}

/// Whether everything `partial` shows is in `complete`: keys a subset, no extra array
/// elements, strings prefixes, scalars of the same kind. A loop over a work list rather
/// than recursion, like the parser itself.
fn only_shows_what_arrives(partial: &Value, complete: &Value) -> bool {
    if partial.is_null() {
        // Nothing shown yet at the top level, or a `null` that must stay one.
        return true;
    }
    let mut work = vec![(partial, complete)];
    while let Some(pair) = work.pop() {
        match pair {
            (Value::Object(shown), Value::Object(all)) => {
                for (key, value) in shown {
                    match all.get(key) {
                        Some(final_value) => work.push((value, final_value)),
                        None => return false,
                    }
                }
            }
            (Value::Array(shown), Value::Array(all)) => {
                if shown.len() > all.len() {
                    return false;
                }
                work.extend(shown.iter().zip(all));
            }
            (Value::String(shown), Value::String(all)) => {
                if !all.starts_with(shown.as_str()) {
                    return false;
                }
            }
            (Value::Number(_), Value::Number(_)) => {}
            (shown, all) => {
                if shown != all {
                    return false;
                }
            }
        }
    }
    true
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn pieces_of_any_size_rebuild_the_original(
        (original, text) in arb_document(),
        sizes in proptest::collection::vec(1usize..9, 0..400),
    ) {
        let mut parser = PartialJson::new();
        for piece in cut(&text, &sizes) {
            // Only a bare number can look complete before its text has all arrived.
            let all_arrived = parser.raw().len() == text.len();
            prop_assert!(all_arrived || !parser.is_complete() || original.is_number());
            prop_assert_eq!(parser.push(&piece), Ok(()));
        }
        prop_assert!(parser.is_complete());
        prop_assert_eq!(parser.value(), &original);
        let reference: Value = serde_json::from_str(&text)
            .map_err(|e| TestCaseError::fail(format!("serde_json cannot read {text:?}: {e}")))?;
        prop_assert_eq!(parser.value(), &reference);
        prop_assert_eq!(parser.raw(), text.as_str());
    }

    #[test]
    fn every_prefix_is_accepted((_original, text) in arb_document()) {
        for end in char_boundaries(&text) {
            let prefix = &text[..end];
            let parsed = PartialJson::from_text(prefix);
            prop_assert!(parsed.is_ok(), "{:?}: {:?}", prefix, parsed.err());
        }
    }

    #[test]
    fn prefixes_show_only_what_the_final_value_has((original, text) in arb_document()) {
        for end in char_boundaries(&text) {
            let prefix = &text[..end];
            let shown = PartialJson::from_text(prefix)
                .map_err(|e| TestCaseError::fail(format!("{prefix:?} refused: {e}")))?
                .value()
                .clone();
            prop_assert!(
                only_shows_what_arrives(&shown, &original),
                "{:?} shows {} but the value is {}", prefix, shown, original
            );
        }
    }

    #[test]
    fn pushing_in_pieces_shows_what_one_push_shows(
        (_original, text) in arb_document(),
        sizes in proptest::collection::vec(1usize..9, 0..400),
    ) {
        let mut parser = PartialJson::new();
        let mut received = String::new();
        for piece in cut(&text, &sizes) {
            parser
                .push(&piece)
                .map_err(|e| TestCaseError::fail(format!("{piece:?} refused after {received:?}: {e}")))?;
            received.push_str(&piece);
            let one_push = PartialJson::from_text(&received)
                .map_err(|e| TestCaseError::fail(format!("{received:?} refused in one push: {e}")))?;
            prop_assert_eq!(parser.value(), one_push.value(), "after {:?}", received);
            prop_assert_eq!(parser.is_complete(), one_push.is_complete());
        }
    }

    #[test]
    fn agrees_with_serde_json_on_damaged_text(
        (_original, text) in arb_document(),
        position in any::<prop::sample::Index>(),
        damage in prop_oneof![
            Just(None),
            proptest::sample::select(&[
                '{', '}', '[', ']', '"', '\\', ',', ':', ' ', '0', '1', '-', '.', 'e', 't',
                'n', 'u', 'x', '\u{1}',
            ][..]).prop_map(Some),
        ],
        replace in any::<bool>(),
    ) {
        // One character deleted, inserted or replaced somewhere.
        let mut chars: Vec<char> = text.chars().collect();
        let at = position.index(chars.len() + 1);
        match damage {
            None if at < chars.len() => { chars.remove(at); }
            None => {}
            Some(c) if replace && at < chars.len() => chars[at] = c,
            Some(c) => chars.insert(at, c),
        }
        let damaged: String = chars.into_iter().collect();
        let ours = PartialJson::from_text(&damaged);
        match serde_json::from_str::<Value>(&damaged) {
            Ok(reference) => {
                let ours = ours.map_err(|e| {
                    TestCaseError::fail(format!("{damaged:?} refused but serde_json reads it: {e}"))
                })?;
                prop_assert!(ours.is_complete(), "{:?}", damaged);
                prop_assert_eq!(ours.value(), &reference);
            }
            Err(_) => {
                prop_assert!(
                    ours.as_ref().map_or(true, |parser| !parser.is_complete()),
                    "{:?} is complete for us only", damaged
                );
            }
        }
    }
}

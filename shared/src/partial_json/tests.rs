//! `tests` of `partial_json`.

use super::*;
use serde_json::json;

// Lets the same tests run under wasm-bindgen-test-runner for wasm32.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// What a test returns: a failure of the parser is an error with its message,
/// not a panic at an `unwrap`.
type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The value after each character of `text`, pushed one character at a time.
fn values_per_char(text: &str) -> Result<Vec<Value>, PartialJsonError> {
    let mut parser = PartialJson::new();
    text.chars()
        .map(|c| {
            parser.push(c.encode_utf8(&mut [0; 4]))?;
            Ok(parser.value().clone())
        })
        .collect()
}

/// The distinct values shown, in order, while `text` arrives one character at a time.
fn shown_per_char(text: &str) -> Result<Vec<Value>, PartialJsonError> {
    let mut shown = values_per_char(text)?;
    shown.dedup();
    Ok(shown)
}

fn error_of(text: &str) -> PartialJsonError {
    PartialJson::from_text(text).unwrap_err()
}

fn value_of(text: &str) -> Result<Value, PartialJsonError> {
    Ok(PartialJson::from_text(text)?.value().clone())
}

#[test]
fn nothing_meaningful_yet_is_null_and_incomplete() -> TestResult {
    for text in ["", "  \n\t\r ", "{\"a", "[tru", "-", "\"\\u00"] {
        let parser = PartialJson::from_text(text)?;
        assert!(!parser.is_complete(), "{text:?}");
        if !text.starts_with(['{', '[', '"']) {
            assert_eq!(parser.value(), &Value::Null, "{text:?}");
        }
    }
    assert_eq!(PartialJson::new().value(), &Value::Null);
    assert_eq!(PartialJson::default().raw(), "");
    Ok(())
}

#[test]
fn tool_arguments_stream_character_by_character() -> TestResult {
    let text = r#"{"city":"Hà Nội","days":3}"#;
    assert_eq!(
        shown_per_char(text)?,
        vec![
            json!({}),
            json!({"city": ""}),
            json!({"city": "H"}),
            json!({"city": "Hà"}),
            json!({"city": "Hà "}),
            json!({"city": "Hà N"}),
            json!({"city": "Hà Nộ"}),
            json!({"city": "Hà Nội"}),
            json!({"city": "Hà Nội", "days": 3}),
        ]
    );
    let parser = PartialJson::from_text(text)?;
    assert!(parser.is_complete());
    assert_eq!(parser.raw(), text);
    Ok(())
}

#[test]
fn strings_in_progress_show_what_arrived() -> TestResult {
    let mut parser = PartialJson::new();
    parser.push(r#"{"note": "Tab"#)?;
    assert_eq!(parser.value(), &json!({"note": "Tab"}));
    parser.push("le for two, 7 pm")?;
    assert_eq!(parser.value(), &json!({"note": "Table for two, 7 pm"}));
    parser.push(r#"\n\"window\"\t\/\\\b\f\r"#)?;
    assert_eq!(
        parser.value(),
        &json!({"note": "Table for two, 7 pm\n\"window\"\t/\\\u{8}\u{c}\r"})
    );
    assert!(!parser.is_complete());
    assert_eq!(value_of(r#""top-level"#)?, json!("top-level"));
    Ok(())
}

#[test]
fn half_received_escapes_are_withheld() -> TestResult {
    let mut parser = PartialJson::new();
    for (delta, shown) in [
        (r#"["a\"#, json!(["a"])),
        ("u", json!(["a"])),
        ("00", json!(["a"])),
        ("e", json!(["a"])),
        ("9b", json!(["aéb"])),
        (r#"\"#, json!(["aéb"])),
        ("n", json!(["aéb\n"])),
        (r#"\u004"#, json!(["aéb\n"])),
        (r#"1""#, json!(["aéb\nA"])),
    ] {
        parser.push(delta)?;
        assert_eq!(parser.value(), &shown, "after {delta:?}");
    }
    Ok(())
}

#[test]
fn surrogate_pairs_decode_wherever_the_text_is_cut() -> TestResult {
    let text = r#"{"mood":"ok \ud83d\ude00!"}"#;
    let expected = json!({"mood": "ok 😀!"});
    for cut in 0..=text.len() {
        let mut parser = PartialJson::new();
        parser.push(&text[..cut])?;
        let shown = parser.value().clone();
        if let Some(mood) = shown.get("mood").and_then(Value::as_str) {
            assert!(
                ["", "o", "ok", "ok ", "ok 😀", "ok 😀!"].contains(&mood),
                "{mood:?}"
            );
        }
        parser.push(&text[cut..])?;
        assert_eq!(parser.value(), &expected, "cut at {cut}");
        assert!(parser.is_complete());
    }
    // Only the completed pair shows: never half a character.
    assert_eq!(value_of(r#"["\ud83d"#)?, json!([""]));
    assert_eq!(value_of(r#"["\ud83d\ude0"#)?, json!([""]));
    assert_eq!(value_of(r#"["\uD83D\uDE00"#)?, json!(["😀"]));
    Ok(())
}

#[test]
fn bad_escapes_surrogates_and_control_characters_are_errors() -> TestResult {
    for (text, offset) in [
        (r#""\x""#, 2),
        (r#"{"a\q":1}"#, 4),
        (r#""\u12g4""#, 5),
        (r#""\ud83d""#, 7),
        (r#""\ud83dx""#, 7),
        (r#""\ud83d\n""#, 8),
        (r#""\ud83d\u0041""#, 12),
        (r#""\ud83d\ud83d""#, 12),
        (r#""\ude00""#, 6),
        ("\"a\nb\"", 2),
        ("[\"\u{1}\"]", 2),
        ("{\"\t\":1}", 2),
    ] {
        let error = error_of(text);
        assert_eq!(error.offset, offset, "{text:?}: {error}");
        assert!(serde_json::from_str::<Value>(text).is_err(), "{text:?}");
    }
    // DEL and non-ASCII need no escaping.
    assert_eq!(value_of("\"\u{7f}é\"")?, json!("\u{7f}é"));
    Ok(())
}

#[test]
fn numbers_show_only_while_their_text_is_a_valid_number() -> TestResult {
    assert_eq!(
        values_per_char("[-12.5e+3]")?,
        vec![
            json!([]),
            json!([]),
            json!([-1]),
            json!([-12]),
            json!([-12]),
            json!([-12.5]),
            json!([-12.5]),
            json!([-12.5]),
            json!([-12500.0]),
            json!([-12500.0]),
        ]
    );
    assert_eq!(
        shown_per_char(r#"{"n": 0.25, "m": 10}"#)?,
        vec![
            json!({}),
            json!({"n": 0}),
            json!({"n": 0.2}),
            json!({"n": 0.25}),
            json!({"n": 0.25, "m": 1}),
            json!({"n": 0.25, "m": 10}),
        ]
    );
    assert_eq!(value_of("[1,-")?, json!([1]));
    assert_eq!(value_of(r#"{"a":-"#)?, json!({}));
    // The value depends on the text only: a prefix that never ended a piece still shows.
    assert_eq!(value_of(r#"{"a":1e"#)?, json!({"a": 1}));
    assert_eq!(value_of("[2.5E+")?, json!([2.5]));
    Ok(())
}

#[test]
fn numbers_are_exactly_what_serde_json_makes_of_them() -> TestResult {
    for number in [
        "0",
        "-0",
        "7",
        "-7",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "1.5",
        "-0.0",
        "1e3",
        "1E+2",
        "2.5e-3",
        "0.1",
        "123456789012345678901234567890",
        "1e-400",
        "3.141592653589793238462643383279",
    ] {
        let expected: Value = serde_json::from_str(number)?;
        let in_array = format!("[{number}]");
        assert_eq!(value_of(&in_array)?, json!([expected]), "{number}");
        let top_level = PartialJson::from_text(number)?;
        assert_eq!(top_level.value(), &expected, "{number}");
        assert!(top_level.is_complete(), "{number}");
    }
    // Variants matter, not only numeric equality.
    assert!(value_of("[18446744073709551615]")?[0].is_u64());
    assert!(value_of("[-1]")?[0].is_i64());
    assert!(value_of("[1.0]")?[0].is_f64());
    Ok(())
}

#[test]
fn top_level_number_completes_and_may_grow() -> TestResult {
    let mut parser = PartialJson::from_text("12")?;
    assert!(parser.is_complete());
    parser.push(".")?;
    assert!(!parser.is_complete());
    assert_eq!(parser.value(), &json!(12));
    parser.push("5")?;
    assert!(parser.is_complete());
    assert_eq!(parser.value(), &json!(12.5));
    parser.push(" \n")?;
    assert!(parser.is_complete());
    assert_eq!(parser.push("3").unwrap_err().offset, 6);
    Ok(())
}

#[test]
fn malformed_numbers_are_errors() -> TestResult {
    for (text, offset) in [
        ("[01]", 2),
        ("[-]", 2),
        ("[1.]", 3),
        ("[1.e5]", 3),
        ("[1e]", 3),
        ("[1e+]", 4),
        ("[.5]", 1),
        ("[+1]", 1),
        ("[1x]", 2),
        ("[--1]", 2),
        ("[1e999]", 1),
        ("{\"a\": -1e400}", 6),
    ] {
        let error = error_of(text);
        assert_eq!(error.offset, offset, "{text:?}: {error}");
        assert!(serde_json::from_str::<Value>(text).is_err(), "{text:?}");
    }
    // Too large for f64 even before it ends, as more exponent digits only make it larger.
    assert_eq!(error_of("1e999").offset, 0);
    let mut parser = PartialJson::from_text("[0, 1e30")?;
    assert_eq!(parser.push("9").unwrap_err().offset, 4);
    assert_eq!(parser.value(), &json!([0, 1e30]));
    // A negative exponent underflows to zero instead.
    assert_eq!(value_of("[1e-999")?, json!([0.0]));
    Ok(())
}

#[test]
fn literals_show_only_when_complete() -> TestResult {
    assert_eq!(
        shown_per_char(r#"{"a":true,"b":false,"c":null}"#)?,
        vec![
            json!({}),
            json!({"a": true}),
            json!({"a": true, "b": false}),
            json!({"a": true, "b": false, "c": null}),
        ]
    );
    assert_eq!(value_of("[tr")?, json!([]));
    assert_eq!(value_of("[nul")?, json!([]));
    let top = PartialJson::from_text("false")?;
    assert!(top.is_complete());
    assert_eq!(top.value(), &json!(false));
    for (text, offset) in [
        ("[tx]", 2),
        ("[truex]", 5),
        ("[True]", 1),
        ("nulL", 3),
        ("fals ", 4),
    ] {
        assert_eq!(error_of(text).offset, offset, "{text:?}");
    }
    Ok(())
}

#[test]
fn nested_containers_show_as_soon_as_they_open() -> TestResult {
    assert_eq!(
        shown_per_char(r#"{"a":[{"b":{"c":[[]]}},[]],"d":{}}"#)?,
        vec![
            json!({}),
            json!({"a": []}),
            json!({"a": [{}]}),
            json!({"a": [{"b": {}}]}),
            json!({"a": [{"b": {"c": []}}]}),
            json!({"a": [{"b": {"c": [[]]}}]}),
            json!({"a": [{"b": {"c": [[]]}}, []]}),
            json!({"a": [{"b": {"c": [[]]}}, []], "d": {}}),
        ]
    );
    // Closing a deep container and going on in its parent, within one push.
    let mut parser = PartialJson::from_text(r#"{"x":[[[1]],"#)?;
    parser.push(r#""s"], "y": [[2], [3"#)?;
    assert_eq!(parser.value(), &json!({"x": [[[1]], "s"], "y": [[2], [3]]}));
    Ok(())
}

#[test]
fn members_wait_for_their_value_to_start() -> TestResult {
    for text in [
        r#"{"key"#,
        r#"{"key""#,
        r#"{"key" "#,
        r#"{"key":"#,
        r#"{"key": "#,
        r#"{"key": -"#,
        r#"{"key": t"#,
    ] {
        assert_eq!(value_of(text)?, json!({}), "{text:?}");
    }
    assert_eq!(value_of(r#"{"key": ""#)?, json!({"key": ""}));
    assert_eq!(value_of(r#"{"a":1,"b"#)?, json!({"a": 1}));
    assert_eq!(value_of(r#"{"a":1,"b":["#)?, json!({"a": 1, "b": []}));
    Ok(())
}

#[test]
fn repeated_keys_keep_the_last_value() -> TestResult {
    let text = r#"{"a":1,"b":2,"a":"x"}"#;
    let parsed = PartialJson::from_text(text)?;
    assert_eq!(parsed.value(), &json!({"a": "x", "b": 2}));
    assert_eq!(parsed.value(), &serde_json::from_str::<Value>(text)?);
    // Until the repeated key's value starts, the earlier value stays shown.
    assert_eq!(value_of(r#"{"a":1,"a":"#)?, json!({"a": 1}));
    assert_eq!(value_of(r#"{"a":1,"a":"y"#)?, json!({"a": "y"}));
    assert_eq!(value_of(r#"{"a":[1],"a":{"#)?, json!({"a": {}}));
    Ok(())
}

#[test]
fn whitespace_is_allowed_between_tokens_only() -> TestResult {
    let text = " \r\n\t{ \"a\" :\n[ 1 ,\t2 ] , \"b\" : { } }\n\n ";
    let parser = PartialJson::from_text(text)?;
    assert!(parser.is_complete());
    assert_eq!(parser.value(), &json!({"a": [1, 2], "b": {}}));
    // Only JSON's four whitespace characters count.
    assert_eq!(error_of("\u{a0}{}").offset, 0);
    assert_eq!(error_of("{}\u{b}").offset, 2);
    Ok(())
}

#[test]
fn structural_errors_report_the_offending_byte() {
    for (text, offset) in [
        ("x", 0),
        ("{a:1}", 1),
        ("{'a':1}", 1),
        (r#"{"a" 1}"#, 5),
        (r#"{"a":1,}"#, 7),
        ("[1,]", 3),
        ("[,1]", 1),
        ("[1 2]", 3),
        (r#"{"a":1]"#, 6),
        ("[1}", 2),
        ("[1]]", 3),
        ("{} {}", 3),
        ("1 2", 2),
        (r#""a" "b""#, 4),
        (r#"{"a":}"#, 5),
        (r#"{,}"#, 1),
        ("]", 0),
        ("{\"é\":1,é}", 8),
    ] {
        let error = error_of(text);
        assert_eq!(error.offset, offset, "{text:?}: {error}");
        assert!(!error.message.is_empty());
        assert!(error.to_string().contains(&format!("byte {offset}")));
        assert!(serde_json::from_str::<Value>(text).is_err(), "{text:?}");
    }
}

#[test]
fn an_error_poisons_the_parser_and_keeps_the_last_good_value() -> TestResult {
    let mut parser = PartialJson::from_text(r#"{"a":[1,2],"b":"xy"#)?;
    let error = parser.push(r#"z\q"#).unwrap_err();
    assert_eq!(error.offset, 20);
    // Text before the offending byte, even from the same push, is shown.
    assert_eq!(parser.value(), &json!({"a": [1, 2], "b": "xyz"}));
    assert_eq!(parser.push(r#"","c":3}"#), Err(error.clone()));
    assert_eq!(parser.push(""), Err(error));
    assert_eq!(parser.value(), &json!({"a": [1, 2], "b": "xyz"}));
    assert_eq!(parser.raw(), r#"{"a":[1,2],"b":"xyz\q","c":3}"#);
    assert!(!parser.is_complete());
    // Even a document that went on to look complete is not complete once poisoned.
    let mut parser = PartialJson::new();
    assert!(parser.push("[1,]").is_err());
    assert!(!parser.is_complete());
    Ok(())
}

#[test]
fn nesting_depth_is_limited_like_serde_json() -> TestResult {
    let deepest = format!("{}{}", "[".repeat(127), "]".repeat(127));
    let parser = PartialJson::from_text(&deepest)?;
    assert!(parser.is_complete());
    assert_eq!(parser.value(), &serde_json::from_str::<Value>(&deepest)?);

    let too_deep = format!("{}{}", "[".repeat(128), "]".repeat(128));
    let error = error_of(&too_deep);
    assert_eq!(error.offset, 127);
    assert!(error.message.contains("128"));
    let serde_error = serde_json::from_str::<Value>(&too_deep).unwrap_err();
    assert_eq!(
        serde_error.column(),
        128,
        "serde_json rejects the same bracket"
    );

    let mixed = "[{\"a\":".repeat(64);
    assert_eq!(error_of(&mixed).offset, mixed.len() - 5);
    // The limit holds however the text is cut.
    let mut parser = PartialJson::new();
    let results: Vec<_> = (0..128).map(|_| parser.push("{\"k\":")).collect();
    assert!(results[..127].iter().all(Result::is_ok));
    assert_eq!(results[127].as_ref().unwrap_err().offset, 127 * 5);
    Ok(())
}

#[test]
fn pieces_cut_anywhere_give_what_one_piece_gives() -> TestResult {
    let text = r#" {"q": "Phở \"bò\" \u00e9\ud83c\udf5c", "n": [0, -1.5e-3, 18446744073709551615, true, null, {"k": []}], "ok": false} "#;
    let whole = PartialJson::from_text(text)?;
    assert!(whole.is_complete());
    assert_eq!(whole.value(), &serde_json::from_str::<Value>(text)?);
    let boundaries: Vec<usize> = (0..=text.len())
        .filter(|&i| text.is_char_boundary(i))
        .collect();
    for &first in &boundaries {
        for &second in boundaries.iter().filter(|&&b| b >= first) {
            let mut parser = PartialJson::new();
            for (start, end) in [(0, first), (first, second), (second, text.len())] {
                parser.push(&text[start..end])?;
                let one_piece = PartialJson::from_text(&text[..end])?;
                assert_eq!(parser.value(), one_piece.value(), "cut {first}/{second}");
                assert_eq!(parser.is_complete(), one_piece.is_complete());
            }
            assert_eq!(parser.value(), whole.value());
            assert_eq!(parser.raw(), text);
        }
    }
    Ok(())
}

#[test]
fn long_numbers_are_parsed_once_they_end() -> TestResult {
    let digits = "9".repeat(LIVE_NUMBER_MAX_LEN + 10);
    let mut parser = PartialJson::from_text("[")?;
    for digit in digits.chars() {
        parser.push(digit.encode_utf8(&mut [0; 4]))?;
    }
    let shown = parser.value().clone();
    assert_eq!(
        shown,
        value_of(&format!("[{digits}"))?,
        "pieces do not matter"
    );
    let shown = shown[0]
        .as_f64()
        .ok_or("the long number shows as a float")?;
    // 64 nines round to 1e64 exactly when serde_json parses with float_roundtrip.
    assert!(shown > 9e63 && shown <= 1e64, "{shown}");
    parser.push("]")?;
    let expected: Value = serde_json::from_str(&format!("[{digits}]"))?;
    assert_eq!(parser.value(), &expected);
    Ok(())
}

//! `shipping_quote`: the fictional demo formula, in exact decimal arithmetic.
//!
//! Price = base (local 3, regional 6) + 2 per kg, in DEMO (a made-up currency). The
//! weight arrives as whole grams ([`Kilograms`]), so the whole computation is integer
//! arithmetic in thousandths of a DEMO: no binary float ever touches an amount.
//!
//! Every rejection (a boolean, a string, a negative or zero weight, an unknown zone, extra
//! or missing keys, malformed JSON, over 100 kg, finer than a gram) happens in
//! `shared::tools::validate_arguments`, before [`quote`] can run: an invalid call gets a
//! validation error and never an amount.

use shared::tools::{Kilograms, ShippingQuoteInput, ShippingQuoteOutput, Zone};

use super::ExecError;

/// The made-up currency of every quote.
pub const CURRENCY: &str = "DEMO";

/// Base price of a zone, in thousandths of a DEMO.
const fn base_milli(zone: Zone) -> u64 {
    match zone {
        Zone::Local => 3_000,
        Zone::Regional => 6_000,
    }
}

/// Price per gram, in thousandths of a DEMO: 2 DEMO per kg = 2000 thousandths / 1000 g.
const MILLI_PER_GRAM: u64 = 2;

/// The exact price in thousandths of a DEMO.
fn price_milli(zone: Zone, weight: Kilograms) -> u64 {
    // At most 6000 + 2 × 100 000: far from overflowing a u64.
    base_milli(zone) + MILLI_PER_GRAM * u64::from(weight.grams())
}

/// Thousandths rounded to hundredths, half away from zero.
///
/// With 1 g resolution the thousandths are `base + 2 × grams`: always even, so the digit
/// dropped is never 5 and no tie can occur; the rule is stated for completeness (and for
/// a future formula where one could).
fn round_to_hundredths(milli: u64) -> u64 {
    // Amounts are never negative, so "away from zero" is "up" at .5.
    (milli + 5) / 10
}

/// Hundredths as a decimal string with two places: 700 → "7.00".
fn format_hundredths(hundredths: u64) -> String {
    format!("{}.{:02}", hundredths / 100, hundredths % 100)
}

/// Quotes one parcel. The input is already validated, so this cannot fail today; the
/// `Result` keeps the executor signature uniform.
pub fn quote(input: &ShippingQuoteInput) -> Result<ShippingQuoteOutput, ExecError> {
    let hundredths = round_to_hundredths(price_milli(input.zone, input.weight_kg));
    Ok(ShippingQuoteOutput {
        zone: input.zone,
        weight_kg: input.weight_kg,
        amount: format_hundredths(hundredths),
        currency: CURRENCY.to_owned(),
        fictional: true,
    })
}

/// `shipping_quote`'s executor: a computation, no I/O.
impl super::Executor for shared::tools::ShippingQuote {
    async fn execute(
        input: &ShippingQuoteInput,
        _ctx: &super::ToolContext,
    ) -> Result<ShippingQuoteOutput, ExecError> {
        quote(input)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use shared::tools::{
        validate_arguments, ToolInput, ToolName, ValidationContext, ValidationError,
    };

    use super::*;

    fn ctx() -> ValidationContext {
        ValidationContext {
            now: Utc.with_ymd_and_hms(2026, 11, 29, 3, 0, 0).unwrap(),
        }
    }

    /// Validates `raw` as the model's arguments and, only if that passes, quotes.
    fn run(raw: &str) -> Result<ShippingQuoteOutput, ValidationError> {
        match validate_arguments(ToolName::ShippingQuote, raw, &ctx())? {
            ToolInput::ShippingQuote(input) => Ok(quote(&input).unwrap()),
            other => panic!("wrong tool: {other:?}"),
        }
    }

    fn amount(zone: &str, weight: &str) -> String {
        let raw = format!(r#"{{"zone":"{zone}","weight_kg":{weight}}}"#);
        let output = run(&raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
        assert_eq!(output.currency, "DEMO");
        assert!(output.fictional);
        output.amount
    }

    #[test]
    fn the_formula() {
        assert_eq!(amount("local", "2"), "7.00");
        assert_eq!(amount("regional", "2"), "10.00");
        assert_eq!(amount("local", "0.001"), "3.00");
        assert_eq!(amount("local", "2.345"), "7.69");
        assert_eq!(amount("regional", "100"), "206.00");
    }

    #[test]
    fn rounding_is_to_two_places_and_never_meets_a_tie() {
        // 3 g → 3.006 → 3.01; 2 g → 3.004 → 3.00.
        assert_eq!(amount("local", "0.003"), "3.01");
        assert_eq!(amount("local", "0.002"), "3.00");
        assert_eq!(round_to_hundredths(3_005), 301, "half away from zero");
        assert_eq!(round_to_hundredths(3_004), 300);
        for grams in 1..=shared::tools::MAX_GRAMS {
            let weight = Kilograms::from_grams(grams).unwrap();
            for zone in [Zone::Local, Zone::Regional] {
                assert_ne!(price_milli(zone, weight) % 10, 5, "tie at {grams} g");
            }
        }
    }

    #[test]
    fn the_output_echoes_the_exact_input() {
        let output = run(r#"{"zone":"regional","weight_kg":12.5}"#).unwrap();
        assert_eq!(output.zone, Zone::Regional);
        assert_eq!(output.weight_kg.grams(), 12_500);
        assert_eq!(output.amount, "31.00");
        let json = serde_json::to_value(&output).unwrap();
        assert_eq!(json["amount"], "31.00");
        assert_eq!(json["weight_kg"], 12.5);
    }

    /// Each rejection: an error naming `path`, and no quote at all (in particular none
    /// of amount 0).
    fn rejected(raw: &str, path: &str) {
        match run(raw) {
            Ok(output) => panic!("{raw} was quoted: {output:?}"),
            Err(error) => {
                assert!(
                    error.issues.iter().any(|issue| issue.path == path),
                    "{raw}: expected an issue at {path:?}, got {error:?}"
                );
                let text = error.to_string();
                assert!(!text.contains("DEMO"), "{raw}: {text}");
            }
        }
    }

    #[test]
    fn invalid_arguments_are_rejected_before_the_formula() {
        rejected(r#"{"zone":"local","weight_kg":true}"#, "weight_kg");
        rejected(r#"{"zone":"local","weight_kg":"2"}"#, "weight_kg");
        rejected(r#"{"zone":"local","weight_kg":-1}"#, "weight_kg");
        rejected(r#"{"zone":"local","weight_kg":0}"#, "weight_kg");
        rejected(r#"{"zone":"galactic","weight_kg":2}"#, "zone");
        rejected(
            r#"{"zone":"local","weight_kg":2,"express":true}"#,
            "express",
        );
        rejected(r#"{"weight_kg":2}"#, "zone");
        rejected(r#"{"zone":"local"}"#, "weight_kg");
        rejected(r#"{"zone":"local","weight_kg":2"#, "");
        rejected(r#"{"zone":"local","weight_kg":100.001}"#, "weight_kg");
        rejected(r#"{"zone":"local","weight_kg":101}"#, "weight_kg");
    }

    #[test]
    fn finer_than_a_gram_is_rejected() {
        let error = run(r#"{"zone":"local","weight_kg":2.3456}"#).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("3 decimals"), "{text}");
        assert!(!text.contains("DEMO"), "{text}");
    }

    #[test]
    fn zero_is_never_quoted() {
        for raw in [
            r#"{"zone":"local","weight_kg":0}"#,
            r#"{"zone":"local","weight_kg":0.0}"#,
            r#"{"zone":"local","weight_kg":0.0004}"#,
            r#"{"zone":"regional","weight_kg":-0.5}"#,
        ] {
            assert!(run(raw).is_err(), "{raw} was quoted");
        }
    }
}

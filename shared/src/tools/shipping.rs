//! `shipping_quote`: a fictional shipping formula, computed in decimal fixed point.
//!
//! Weights are exact grams (a JSON number with at most three decimals) and amounts exact
//! thousandths, so `2.3 kg` is 2300 g and never 2.2999… of a binary float.

use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

use super::{
    Access, Risk, Rule, Tool, ToolDefinition, ToolName, ValidationContext, ValidationIssue,
};

/// Marker type of the `shipping_quote` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShippingQuote;

/// Where the parcel goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Zone {
    /// Within the same city.
    Local,
    /// To another province.
    Regional,
}

/// Heaviest parcel quoted, in grams (100 kg).
pub const MAX_GRAMS: u32 = 100_000;

/// A weight in whole grams, read from a JSON number of kilograms with at most three
/// decimals. Zero, negative, over 100 kg, finer than a gram, or not a number: rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Kilograms {
    grams: u32,
}

impl Kilograms {
    /// The weight for a number of grams, if it is in `1..=100_000`.
    pub fn from_grams(grams: u32) -> Option<Self> {
        (1..=MAX_GRAMS).contains(&grams).then_some(Self { grams })
    }

    /// The weight in grams.
    pub fn grams(self) -> u32 {
        self.grams
    }

    /// Parses a decimal number of kilograms (`"2"`, `"0.5"`, `"12.345"`) exactly.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if text.starts_with('-') {
            return Err(format!("must be greater than 0 kg, got {text}"));
        }
        if !digits(whole) || !(fraction.is_empty() || digits(fraction)) {
            return Err(format!("expected a number of kilograms, got {text:?}"));
        }
        let fraction = fraction.trim_end_matches('0');
        if fraction.len() > 3 {
            return Err(format!(
                "at most 3 decimals (whole grams) are allowed, got {text}"
            ));
        }
        let whole: u64 = whole
            .parse()
            .map_err(|_| format!("must be at most 100 kg, got {text}"))?;
        let mut milli = 0u64;
        for (place, digit) in fraction.bytes().enumerate() {
            let scale = [100, 10, 1][place];
            milli += u64::from(digit - b'0') * scale;
        }
        let grams = whole
            .checked_mul(1000)
            .and_then(|g| g.checked_add(milli))
            .ok_or_else(|| format!("must be at most 100 kg, got {text}"))?;
        if grams == 0 {
            return Err(format!("must be greater than 0 kg, got {text}"));
        }
        let grams = u32::try_from(grams)
            .ok()
            .filter(|g| *g <= MAX_GRAMS)
            .ok_or_else(|| format!("must be at most 100 kg, got {text}"))?;
        Ok(Self { grams })
    }
}

impl fmt::Display for Kilograms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, milli) = (self.grams / 1000, self.grams % 1000);
        if milli == 0 {
            write!(f, "{whole}")
        } else {
            let fraction = format!("{milli:03}");
            write!(f, "{whole}.{}", fraction.trim_end_matches('0'))
        }
    }
}

impl Serialize for Kilograms {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.grams.is_multiple_of(1000) {
            serializer.serialize_u64(u64::from(self.grams / 1000))
        } else {
            // The shortest decimal text of this f64 is exactly `self` (≤ 6 significant
            // digits), so a reader gets the same grams back.
            serializer.serialize_f64(f64::from(self.grams) / 1000.0)
        }
    }
}

impl<'de> Deserialize<'de> for Kilograms {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = Kilograms;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number of kilograms, greater than 0 and at most 100")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Kilograms, E> {
                Kilograms::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Kilograms, E> {
                Kilograms::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Kilograms, E> {
                if !v.is_finite() {
                    return Err(E::custom("expected a finite number of kilograms"));
                }
                // Rust prints the shortest decimal that reads back as the same f64, which
                // is the text the JSON had whenever it had ≤ 15 significant digits.
                Kilograms::parse(&v.to_string()).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl JsonSchema for Kilograms {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Kilograms".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": 100,
            "description": "Weight in kilograms, greater than 0 and at most 100, at most 3 decimals."
        })
    }
}

/// Arguments of `shipping_quote`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShippingQuoteInput {
    /// "local" (same city) or "regional" (another province).
    pub zone: Zone,
    /// Parcel weight in kilograms: a number, greater than 0 and at most 100.
    pub weight_kg: Kilograms,
}

/// Result of `shipping_quote`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShippingQuoteOutput {
    /// The zone quoted.
    pub zone: Zone,
    /// The weight quoted.
    pub weight_kg: Kilograms,
    /// The price as a decimal string with two places, e.g. "7.00".
    pub amount: String,
    /// Always "DEMO": a made-up currency, not money.
    pub currency: String,
    /// Always true.
    pub fictional: bool,
}

impl Tool for ShippingQuote {
    const NAME: ToolName = ToolName::ShippingQuote;
    const DEFINITION: ToolDefinition = ToolDefinition {
        name: ToolName::ShippingQuote.as_str(),
        title: "Shipping quote",
        invoking: "Pricing the delivery…",
        invoked: "Shipping quote ready",
        description: "Quote shipping for one parcel with the fictional demo formula. Call it \
            when the user gives a zone (local or regional) and a weight in kg; ask for a \
            missing one, never guess. The amount is in DEMO, a made-up currency: always say \
            it is not real money. If it returns an error there is no quote — never say 0.",
        requires_approval: false,
        risk: Risk {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        access: Access::Public,
    };
    type Input = ShippingQuoteInput;
    type Output = ShippingQuoteOutput;

    fn check(_input: &Self::Input, _ctx: &ValidationContext) -> Vec<ValidationIssue> {
        // The weight's bounds and precision are enforced by `Kilograms` itself.
        Vec::new()
    }

    fn check_json(arguments: &serde_json::Value) -> Vec<ValidationIssue> {
        // `Kilograms` refuses a weight finer than a gram too, but a parse error has no path
        // and no rule; saying it here lets the person be told which field and why.
        let Some(serde_json::Value::Number(weight)) = arguments.get("weight_kg") else {
            return Vec::new();
        };
        let text = weight.to_string();
        let decimals = text
            .split_once('.')
            .map_or(0, |(_, fraction)| fraction.trim_end_matches('0').len());
        if decimals > 3 && !text.contains(['e', 'E']) {
            vec![ValidationIssue::broke(
                "weight_kg",
                Rule::TooPrecise { decimals: 3 },
                format!("at most 3 decimals (whole grams) are allowed, got {text}"),
            )]
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kilograms_parse_exactly() {
        assert_eq!(Kilograms::parse("2").map(Kilograms::grams), Ok(2000));
        assert_eq!(Kilograms::parse("2.3").map(Kilograms::grams), Ok(2300));
        assert_eq!(Kilograms::parse("0.001").map(Kilograms::grams), Ok(1));
        assert_eq!(Kilograms::parse("100").map(Kilograms::grams), Ok(100_000));
        assert_eq!(
            Kilograms::parse("12.5000").map(Kilograms::grams),
            Ok(12_500)
        );
        for bad in [
            "0",
            "0.0",
            "-1",
            "100.001",
            "0.0005",
            "abc",
            "",
            "1e3",
            "99999999999999",
        ] {
            assert!(Kilograms::parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn kilograms_round_trip_through_json() {
        for text in ["2", "2.3", "0.001", "99.999", "7.125"] {
            let kg: Kilograms = serde_json::from_str(text).unwrap();
            let back = serde_json::to_string(&kg).unwrap();
            let again: Kilograms = serde_json::from_str(&back).unwrap();
            assert_eq!(kg, again, "{text} → {back}");
            assert_eq!(kg.to_string(), text);
        }
        assert!(serde_json::from_str::<Kilograms>("true").is_err());
        assert!(serde_json::from_str::<Kilograms>("\"2\"").is_err());
        assert!(serde_json::from_str::<Kilograms>("-2").is_err());
    }
}

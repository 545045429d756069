//! Reading a parsed JSON value by hand, field by field: the browser's readers of the types
//! whose derived `Deserialize` is replaced there (message parts, stream events, previews,
//! rules; the reason is at [`crate::message::MessagePart`]). A leaf module, so every
//! module with such a type can use it.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// A JSON object's fields, taken out one by one.
pub(crate) type Fields = serde_json::Map<String, Value>;

/// A required field.
pub(crate) fn take(fields: &mut Fields, name: &str) -> Result<Value, String> {
    fields
        .remove(name)
        .ok_or_else(|| format!("missing field `{name}`"))
}

/// A required text field.
pub(crate) fn take_str(fields: &mut Fields, name: &str) -> Result<String, String> {
    typed(take(fields, name)?)
}

/// An optional field: absent and `null` are both `None`, as for a derived `Option`.
pub(crate) fn take_opt<V: DeserializeOwned>(
    fields: &mut Fields,
    name: &str,
) -> Result<Option<V>, String> {
    fields.remove(name).map_or(Ok(None), typed)
}

/// A value as `V`, by its own `Deserialize`.
pub(crate) fn typed<V: DeserializeOwned>(value: Value) -> Result<V, String> {
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// A date-time field as the browser reads it (`deserialize_with` on wasm32 only): strict
/// RFC 3339, the one form the server writes. chrono's own `Deserialize` accepts a relaxed
/// form through its general format interpreter, which would otherwise be most of chrono in
/// the main module.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn rfc3339<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<chrono::DateTime<chrono::FixedOffset>, D::Error> {
    let text = <String as serde::Deserialize>::deserialize(deserializer)?;
    chrono::DateTime::parse_from_rfc3339(&text).map_err(serde::de::Error::custom)
}

/// In the browser, `Deserialize` for `$ty` is `$read` on a parsed `Value`, for the types
/// whose derived impl is replaced there.
macro_rules! deserialize_by_hand_in_the_browser {
    ($ty:ty, $read:path) => {
        #[cfg(target_arch = "wasm32")]
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = <serde_json::Value as serde::Deserialize>::deserialize(deserializer)?;
                $read(value).map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use deserialize_by_hand_in_the_browser;

#[cfg(test)]
mod tests {
    use chrono::{DateTime, FixedOffset, TimeZone};
    use serde_json::json;

    fn read(value: serde_json::Value) -> Result<DateTime<FixedOffset>, serde_json::Error> {
        super::rfc3339(value)
    }

    // The browser's reader must take every date-time the server writes, as chrono writes it.
    #[test]
    fn the_browsers_date_time_reader_takes_what_the_server_writes() {
        for (offset_seconds, y, mo, d, h, mi, s, nanos) in [
            (7 * 3600, 2026, 12, 24, 19, 0, 0, 0),
            (0, 2027, 1, 1, 0, 0, 0, 0),
            (-(3 * 3600 + 1800), 2026, 2, 28, 23, 59, 59, 0),
            (5 * 3600 + 2700, 2026, 6, 1, 8, 30, 15, 250_000_000),
        ] {
            let offset = FixedOffset::east_opt(offset_seconds).unwrap();
            let at = offset.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
                + chrono::Duration::nanoseconds(nanos);
            let written = serde_json::to_value(at).unwrap();
            assert_eq!(read(written.clone()).unwrap(), at, "{written}");
            assert_eq!(
                read(written.clone()).unwrap().offset(),
                at.offset(),
                "{written}"
            );
        }
    }

    #[test]
    fn the_browsers_date_time_reader_refuses_what_is_not_a_date_time() {
        for value in [
            json!("tomorrow at seven"),
            json!("2026-12-24T19:00:00"),
            json!("2026-13-24T19:00:00+07:00"),
            json!(1_790_000_000),
            json!(null),
        ] {
            assert!(read(value.clone()).is_err(), "{value}");
        }
    }
}

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

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
    take_field(fields, name).ok_or_else(|| format!("missing field `{name}`"))
}

/// The field `name`, taken out of `fields` (a `null` is left in its place): not
/// `Map::remove`, whose rebalancing of serde_json's `BTreeMap` would be code in the bundle
/// that nothing else there needs.
pub(crate) fn take_field(fields: &mut Fields, name: &str) -> Option<Value> {
    fields.get_mut(name).map(Value::take)
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
    take_field(fields, name).map_or(Ok(None), typed)
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

/// A field read by its own `Deserialize`, `Default` when absent: serde's `#[serde(default)]`,
/// and what a derived impl does for an absent `Option` field.
pub(crate) fn take_default<V: DeserializeOwned + Default>(
    fields: &mut Fields,
    name: &str,
) -> Result<V, String> {
    take_field(fields, name).map_or_else(|| Ok(V::default()), typed)
}

/// [`rfc3339`] on a parsed value, for the readers below.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn rfc3339_value(value: Value) -> Result<chrono::DateTime<chrono::FixedOffset>, String> {
    rfc3339(value).map_err(|e| e.to_string())
}

/// `$read`, a reader of struct `$ty` from a parsed object as its derived `Deserialize`
/// reads one (fields by their wire names, unknown ones ignored), and in the browser that
/// reader as `$ty`'s `Deserialize`. Each field is `name: "wireName"`, then one of
/// `= default` (absent is `Default`: `#[serde(default)]`, and every `Option` field, which a
/// derived impl also reads as `None` when absent) or `= with path` (read by `path`).
///
/// A derived impl compiles a visitor for objects, another for arrays and a field matcher
/// per type, and serde_json instantiates its map walk for each: the readers are a fraction
/// of that in the browser's bundle. The server keeps the derived impls (declare the type
/// with `#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]`), and a test of
/// each type checks that both read the same.
macro_rules! struct_by_hand {
    ($read:ident, $ty:ident { $($field:ident: $wire:literal $(= $mode:ident $($with:path)?)?),* $(,)? }) => {
        #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
        pub(crate) fn $read(value: serde_json::Value) -> Result<$ty, String> {
            let serde_json::Value::Object(mut fields) = value else {
                return Err(concat!("invalid type: expected struct ", stringify!($ty)).to_owned());
            };
            Ok($ty {
                $($field: $crate::by_hand::struct_by_hand!(@field fields, $wire $(, $mode $($with)?)?)?,)*
            })
        }
        $crate::by_hand::deserialize_by_hand_in_the_browser!($ty, $read);
    };
    (@field $fields:ident, $wire:literal) => {
        $crate::by_hand::take(&mut $fields, $wire).and_then($crate::by_hand::typed)
    };
    (@field $fields:ident, $wire:literal, default) => {
        $crate::by_hand::take_default(&mut $fields, $wire)
    };
    (@field $fields:ident, $wire:literal, with $with:path) => {
        $crate::by_hand::take(&mut $fields, $wire).and_then($with)
    };
}
pub(crate) use struct_by_hand;

/// `$read`, a reader of the unit-only enum `$ty` from its name as a JSON string (serde's
/// form for such a variant), and in the browser that reader as `$ty`'s `Deserialize`.
/// Every variant must be listed: the exhaustive `match` below does not compile otherwise,
/// and a test per type checks that each name is the one serde writes.
macro_rules! unit_enum_by_hand {
    ($read:ident, $ty:ident { $($variant:ident = $wire:literal),* $(,)? }) => {
        #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
        pub(crate) fn $read(value: serde_json::Value) -> Result<$ty, String> {
            // Every variant is listed (a new one does not compile until it is).
            const _: fn($ty) = |variant| match variant {
                $($ty::$variant => (),)*
            };
            match value.as_str() {
                $(Some($wire) => Ok($ty::$variant),)*
                Some(other) => Err(format!("unknown variant `{other}`")),
                None => Err(concat!("invalid type: expected enum ", stringify!($ty)).to_owned()),
            }
        }
        $crate::by_hand::deserialize_by_hand_in_the_browser!($ty, $read);

        // Every variant, for the test that reads each back from what serde writes.
        #[cfg(test)]
        impl $ty {
            pub(crate) const READ_BY_HAND: &'static [$ty] = &[$($ty::$variant),*];
        }
    };
}
pub(crate) use unit_enum_by_hand;

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

/// The readers written with [`struct_by_hand`] and [`unit_enum_by_hand`] against the
/// derived impls they stand for in the browser: both take the same values to the same
/// result, and refuse the same broken ones.
#[cfg(test)]
mod readers_agree {
    use std::fmt::Debug;

    use serde::de::DeserializeOwned;
    use serde_json::{json, Value};

    use crate::events::{finish_reason_from_value, FinishReason};
    use crate::http::{
        conversation_from_value, error_body_from_value, error_detail_from_value,
        running_from_value, ConversationBody, ErrorBody, ErrorDetail, RunningReply,
    };
    use crate::message::{
        approval_from_value, decision_from_value, message_from_value, metadata_from_value,
        role_from_value, run_status_from_value, Approval, Decision, Message, MessageMetadata, Role,
        RunStatus,
    };
    use crate::preview::{
        booking_preview_from_value, cancellation_preview_from_value, BookingPreview,
        CancellationPreview,
    };
    use crate::tools::{
        assistant_from_value, booking_state_from_value, booking_summary_from_value,
        checkout_draft_from_value, entity_from_value, error_code_from_value, issue_from_value,
        list_bookings_output_from_value, tool_error_from_value, Assistant, BookingState,
        BookingSummary, CheckoutDraft, Entity, ErrorCode, ListBookingsOutput, ToolError,
        ValidationIssue,
    };

    type Reader<T> = fn(Value) -> Result<T, String>;

    /// `read` and the derived impl agree on `value`; returns whether they accepted it.
    fn agree<T: DeserializeOwned + PartialEq + Debug>(read: Reader<T>, value: &Value) -> bool {
        let derived = serde_json::from_value::<T>(value.clone()).ok();
        let by_hand = read(value.clone()).ok();
        assert_eq!(by_hand, derived, "{value}");
        by_hand.is_some()
    }

    /// Both read `value`, and both refuse it without each field in `required`, with each
    /// field in `typed` set to a value of the wrong type, and as anything but an object.
    fn check_struct<T: DeserializeOwned + PartialEq + Debug>(
        read: Reader<T>,
        value: Value,
        required: &[&str],
    ) {
        assert!(agree(read, &value), "a valid value is refused: {value}");
        for field in required {
            let mut without = value.clone();
            without.as_object_mut().unwrap().remove(*field);
            assert!(!agree(read, &without), "missing {field} is accepted");
        }
        for field in value.as_object().unwrap().keys() {
            let mut wrong = value.clone();
            wrong[field.as_str()] = json!({"not": "this"});
            agree(read, &wrong);
            let mut null = value.clone();
            null[field.as_str()] = Value::Null;
            agree(read, &null);
            let mut without = value.clone();
            without.as_object_mut().unwrap().remove(field.as_str());
            agree(read, &without);
        }
        let mut extra = value.clone();
        extra["somethingNew"] = json!(1);
        assert!(agree(read, &extra), "an unknown field is refused");
        // (A derived impl also reads a struct from an array of its fields in order, a form
        // JSON from the server never has; the readers refuse it.)
        for other in [json!(null), json!("text"), json!(3), json!(true)] {
            assert!(!agree(read, &other), "{other} is accepted");
        }
    }

    /// Each variant reads back from what serde writes for it; other names and types are
    /// refused by both.
    fn check_enum<T: DeserializeOwned + serde::Serialize + PartialEq + Debug>(
        read: Reader<T>,
        variants: &[T],
    ) {
        for variant in variants {
            let written = serde_json::to_value(variant).unwrap();
            assert_eq!(read(written.clone()).as_ref(), Ok(variant), "{written}");
            assert!(agree(read, &written));
        }
        for other in [json!("nope"), json!(""), json!(null), json!(1), json!({})] {
            assert!(!agree(read, &other), "{other} is accepted");
        }
    }

    fn booking() -> Value {
        json!({
            "bookingId": "bk_1",
            "restaurantName": "Chả Cá Thăng Long",
            "partySize": 4,
            "startsAt": "2026-12-24T19:00:00+07:00",
            "status": "confirmed",
        })
    }

    fn error() -> Value {
        json!({
            "code": "VALIDATION_ERROR",
            "message": "partySize must be at least 1",
            "retryable": false,
            "issues": [{"path": "/partySize", "message": "too small", "rule": {"kind": "other"}}],
        })
    }

    fn message() -> Value {
        json!({
            "id": "msg_1",
            "role": "assistant",
            "parts": [{"type": "text", "id": "t1", "text": "Xin chào"}, {"type": "step-start"}],
            "status": "awaiting-approval",
            "clientId": "c1",
        })
    }

    #[test]
    fn structs_are_read_as_their_derived_impls_read_them() {
        check_struct::<Decision>(
            decision_from_value,
            json!({"toolCallId": "call_1", "approvalId": "call_1", "approved": true,
                   "input": {"partySize": 2}, "reason": "ok", "earlier": true}),
            &["toolCallId", "approvalId", "approved"],
        );
        check_struct::<Approval>(
            approval_from_value,
            json!({"id": "call_1", "approved": false, "reason": "no"}),
            &["id"],
        );
        check_struct::<MessageMetadata>(
            metadata_from_value,
            json!({"status": "completed", "conversationId": "conv_1"}),
            &[],
        );
        check_struct::<Message>(message_from_value, message(), &["id", "parts"]);
        check_struct::<ConversationBody>(
            conversation_from_value,
            json!({"id": "conv_1", "assistant": "gifts", "messages": [message()],
                   "running": {"messageId": "msg_1", "runId": "run_1", "after": 3}}),
            &["id"],
        );
        check_struct::<RunningReply>(
            running_from_value,
            json!({"messageId": "msg_1", "runId": "run_1", "after": 3}),
            &["messageId", "after"],
        );
        check_struct::<ErrorBody>(
            error_body_from_value,
            json!({"error": {"code": "VALIDATION_ERROR", "message": "m", "issues": []}}),
            &["error"],
        );
        check_struct::<ErrorDetail>(
            error_detail_from_value,
            json!({"code": "NOT_FOUND", "message": "m", "issues": error()["issues"]}),
            &[],
        );
        check_struct::<ToolError>(
            tool_error_from_value,
            error(),
            &["code", "message", "retryable"],
        );
        check_struct::<ValidationIssue>(
            issue_from_value,
            error()["issues"][0].clone(),
            &["path", "message"],
        );
        check_struct::<BookingPreview>(
            booking_preview_from_value,
            json!({"restaurantId": "r1", "restaurantName": "A", "address": "1 Phố Huế",
                   "city": "Hà Nội", "startsAt": "2026-12-24T19:00:00+07:00", "partySize": 2,
                   "availability": {"status": "available", "seatsLeft": 6}}),
            &[
                "restaurantId",
                "restaurantName",
                "address",
                "city",
                "startsAt",
                "partySize",
                "availability",
            ],
        );
        check_struct::<CancellationPreview>(
            cancellation_preview_from_value,
            json!({"booking": booking()}),
            &["booking"],
        );
        check_struct::<CheckoutDraft>(
            checkout_draft_from_value,
            json!({"draft_id": "d1", "gift_id": "g1", "gift_name": "Trà", "price_vnd": 100000,
                   "delivery_vnd": 20000, "total_vnd": 120000, "fictional": true}),
            &[
                "draft_id",
                "gift_id",
                "gift_name",
                "price_vnd",
                "delivery_vnd",
                "total_vnd",
                "fictional",
            ],
        );
        check_struct::<BookingSummary>(
            booking_summary_from_value,
            booking(),
            &[
                "bookingId",
                "restaurantName",
                "partySize",
                "startsAt",
                "status",
            ],
        );
        check_struct::<ListBookingsOutput>(
            list_bookings_output_from_value,
            json!({"bookings": [booking()], "noResultsReason": "none"}),
            &["bookings"],
        );
    }

    #[test]
    fn numbers_out_of_range_are_refused_by_both() {
        let mut big = booking();
        big["partySize"] = json!(300);
        assert!(!agree(booking_summary_from_value, &big));
        let mut negative = json!({"messageId": "m", "after": -1});
        assert!(!agree(running_from_value, &negative));
        negative["after"] = json!(1.5);
        assert!(!agree(running_from_value, &negative));
    }

    #[test]
    fn unit_enums_are_read_by_the_names_serde_writes() {
        check_enum(role_from_value, Role::READ_BY_HAND);
        check_enum(run_status_from_value, RunStatus::READ_BY_HAND);
        check_enum(error_code_from_value, ErrorCode::READ_BY_HAND);
        check_enum(entity_from_value, Entity::READ_BY_HAND);
        check_enum(booking_state_from_value, BookingState::READ_BY_HAND);
        check_enum(finish_reason_from_value, FinishReason::READ_BY_HAND);
        check_enum(assistant_from_value, Assistant::READ_BY_HAND);
        // Each list has every variant (the readers' match does not compile otherwise), and
        // the lists are not empty.
        assert_eq!(ErrorCode::READ_BY_HAND.len(), 13);
        assert_eq!(RunStatus::READ_BY_HAND.len(), 7);
    }
}

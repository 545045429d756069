//! What a call waiting for approval will do, as the server found it in its data when the
//! call was stored: the confirmation form shows this (a restaurant's name, address and
//! local time; a gift's price and total; the booking to be cancelled), never a bare id.
//!
//! The model proposes ids; only the server knows what they stand for. The preview is
//! computed again when the person decides, and a decision on facts that changed (the slot
//! filled up) runs nothing until the person has seen the new ones.

use chrono::{DateTime, FixedOffset};
#[cfg(not(target_arch = "wasm32"))]
use serde::Deserialize;
use serde::Serialize;

use crate::tools::{BookingSummary, CheckoutDraft};

/// The facts behind one pending call, one variant per tool that needs approval.
// In the browser `Deserialize` is the hand-written [`preview_from_value`] (and
// [`availability_from_value`] below it), for the reason `tools::error::Rule` gives: the
// derived impl of an internally tagged enum buffers the object and compiles a second
// deserializer for every variant's struct. The server keeps the derived impls; tests check
// both agree.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ApprovalPreview {
    /// `createBooking`: where, when, for how many, and whether there is room.
    Booking(BookingPreview),
    /// `cancelBooking`: the booking that would be cancelled.
    Cancellation(CancellationPreview),
    /// `create_checkout_session`: what would be bought and what it costs.
    Checkout(CheckoutDraft),
}

/// A booking as it would be made.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct BookingPreview {
    /// The restaurant's id, as in the call.
    pub restaurant_id: String,
    /// The restaurant's name.
    pub restaurant_name: String,
    /// Its street address.
    pub address: String,
    /// Its city.
    pub city: String,
    /// Arrival in the restaurant's own time zone (the call may have used another offset).
    #[cfg_attr(
        target_arch = "wasm32",
        serde(deserialize_with = "crate::by_hand::rfc3339")
    )]
    pub starts_at: DateTime<FixedOffset>,
    /// Number of people.
    pub party_size: u8,
    /// Whether the slot has room for the party now.
    pub availability: Availability,
}

crate::by_hand::struct_by_hand!(booking_preview_from_value, BookingPreview { restaurant_id: "restaurantId", restaurant_name: "restaurantName", address: "address", city: "city", starts_at: "startsAt" = with crate::by_hand::rfc3339_value, party_size: "partySize", availability: "availability" });

/// Whether a booking would be confirmed or put on the waiting list, as of now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(
    tag = "status",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Availability {
    /// A table would be held.
    Available {
        /// Seats still free at that time, before this booking.
        seats_left: u32,
    },
    /// No room for the party then: the booking would be waitlisted.
    Waitlist,
}

/// A cancellation as it would happen.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct CancellationPreview {
    /// The booking, as it stands now.
    pub booking: BookingSummary,
}

crate::by_hand::struct_by_hand!(
    cancellation_preview_from_value,
    CancellationPreview { booking: "booking" }
);

crate::by_hand::deserialize_by_hand_in_the_browser!(ApprovalPreview, preview_from_value);
crate::by_hand::deserialize_by_hand_in_the_browser!(Availability, availability_from_value);

/// Reads a preview in the wire format the derived `Deserialize` accepts: the variant by
/// `kind`, then the variant's struct from the rest of the object.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn preview_from_value(value: serde_json::Value) -> Result<ApprovalPreview, String> {
    use crate::by_hand::{take_str, typed};
    let serde_json::Value::Object(mut fields) = value else {
        return Err("a preview must be an object".to_owned());
    };
    let kind = take_str(&mut fields, "kind")?;
    let rest = serde_json::Value::Object(fields);
    Ok(match kind.as_str() {
        "booking" => ApprovalPreview::Booking(typed(rest)?),
        "cancellation" => ApprovalPreview::Cancellation(typed(rest)?),
        "checkout" => ApprovalPreview::Checkout(typed(rest)?),
        other => return Err(format!("unknown variant `{other}`")),
    })
}

/// Reads an availability as the derived `Deserialize` does: `{"status": "available",
/// "seatsLeft": 3}` or `{"status": "waitlist"}`.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn availability_from_value(value: serde_json::Value) -> Result<Availability, String> {
    use crate::by_hand::{take, take_str, typed};
    let serde_json::Value::Object(mut fields) = value else {
        return Err("an availability must be an object".to_owned());
    };
    Ok(match take_str(&mut fields, "status")?.as_str() {
        "available" => Availability::Available {
            seats_left: typed(take(&mut fields, "seatsLeft")?)?,
        },
        "waitlist" => Availability::Waitlist,
        other => return Err(format!("unknown variant `{other}`")),
    })
}

impl ApprovalPreview {
    /// Whether a person who saw `self` would decide differently on `now`: what the
    /// call is about, or whether there is room, changed. A seat count that moved without
    /// changing the answer is not a change worth asking again for.
    pub fn differs_materially(&self, now: &ApprovalPreview) -> bool {
        match (self, now) {
            (ApprovalPreview::Booking(seen), ApprovalPreview::Booking(now)) => {
                let room = |availability: Availability| {
                    matches!(availability, Availability::Available { .. })
                };
                seen.restaurant_name != now.restaurant_name
                    || seen.address != now.address
                    || seen.starts_at != now.starts_at
                    || seen.party_size != now.party_size
                    || room(seen.availability) != room(now.availability)
            }
            (ApprovalPreview::Cancellation(seen), ApprovalPreview::Cancellation(now)) => {
                seen != now
            }
            (ApprovalPreview::Checkout(seen), ApprovalPreview::Checkout(now)) => seen != now,
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn booking(availability: Availability) -> ApprovalPreview {
        ApprovalPreview::Booking(BookingPreview {
            restaurant_id: "hn-cha-ca-thang-long".into(),
            restaurant_name: "Chả Cá Thăng Long".into(),
            address: "19-31 Đường Thành, Hoàn Kiếm".into(),
            city: "Hà Nội".into(),
            starts_at: DateTime::parse_from_rfc3339("2026-12-02T19:00:00+07:00").unwrap(),
            party_size: 2,
            availability,
        })
    }

    #[test]
    fn a_slot_that_filled_up_is_a_change_and_fewer_seats_is_not() {
        let open = booking(Availability::Available { seats_left: 6 });
        let fewer = booking(Availability::Available { seats_left: 2 });
        let full = booking(Availability::Waitlist);
        assert!(!open.differs_materially(&fewer));
        assert!(open.differs_materially(&full));
        assert!(full.differs_materially(&open));
        assert!(!full.differs_materially(&full.clone()));
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn cancellation() -> ApprovalPreview {
        let booking = serde_json::from_value(serde_json::json!({
            "bookingId": "bk-1", "restaurantName": "Chả Cá Thăng Long",
            "startsAt": "2026-12-02T19:00:00+07:00", "partySize": 2, "status": "confirmed"
        }))
        .unwrap();
        ApprovalPreview::Cancellation(CancellationPreview { booking })
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn checkout() -> ApprovalPreview {
        let draft = serde_json::from_value(serde_json::json!({
            "draft_id": "d-1", "gift_id": "g-1", "gift_name": "Trà sen", "price_vnd": 250000,
            "delivery_vnd": 30000, "total_vnd": 280000, "fictional": true
        }));
        ApprovalPreview::Checkout(draft.unwrap())
    }

    // Natively `Deserialize` is the derived impl, so these compare the browser's readers
    // with it (`wasm32` has only the hand-written ones).
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn the_browsers_reader_reads_every_preview_as_written() {
        let previews = [
            booking(Availability::Waitlist),
            booking(Availability::Available { seats_left: 3 }),
            cancellation(),
            checkout(),
        ];
        for preview in previews {
            let written = serde_json::to_value(&preview).unwrap();
            let derived: ApprovalPreview = serde_json::from_value(written.clone()).unwrap();
            assert_eq!(derived, preview);
            assert_eq!(
                preview_from_value(written.clone()),
                Ok(preview),
                "{written}"
            );
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn the_browsers_reader_rejects_what_the_derived_one_does() {
        let mut booking = serde_json::to_value(booking(Availability::Waitlist)).unwrap();
        let mut accepted = vec![booking.clone()];
        booking["extra"] = 1.into();
        accepted.push(booking.clone());
        for value in &accepted {
            let derived = serde_json::from_value::<ApprovalPreview>(value.clone()).ok();
            assert!(derived.is_some(), "the derived reader rejects {value}");
            assert_eq!(preview_from_value(value.clone()).ok(), derived, "{value}");
        }
        let mut rejected = Vec::new();
        for (field, bad) in [
            ("kind", serde_json::json!("Booking")),
            ("kind", serde_json::json!(null)),
            ("availability", serde_json::json!({"status": "available"})),
            ("availability", serde_json::json!({"status": "full"})),
            (
                "availability",
                serde_json::json!({"status": "available", "seatsLeft": -1}),
            ),
            ("availability", serde_json::json!("waitlist")),
            ("startsAt", serde_json::json!("tonight")),
        ] {
            let mut value = booking.clone();
            value[field] = bad;
            rejected.push(value);
        }
        let mut no_kind = booking.clone();
        no_kind.as_object_mut().unwrap().remove("kind");
        rejected.extend([no_kind, serde_json::json!([]), serde_json::json!("booking")]);
        for value in rejected {
            let derived = serde_json::from_value::<ApprovalPreview>(value.clone());
            assert!(derived.is_err(), "the derived reader accepts {value}");
            let ours = preview_from_value(value.clone());
            assert!(
                ours.is_err(),
                "the browser's reader accepts {value}: {ours:?}"
            );
        }
        for value in [
            serde_json::json!({"status": "waitlist", "seatsLeft": 2}),
            serde_json::json!({"status": "available", "seatsLeft": 2}),
        ] {
            let derived = serde_json::from_value::<Availability>(value.clone()).ok();
            assert!(derived.is_some());
            assert_eq!(availability_from_value(value).ok(), derived);
        }
    }

    #[test]
    fn previews_are_tagged_json() {
        let json = serde_json::to_value(booking(Availability::Waitlist)).unwrap();
        assert_eq!(json["kind"], "booking");
        assert_eq!(json["availability"]["status"], "waitlist");
        assert_eq!(json["restaurantName"], "Chả Cá Thăng Long");
        let back: ApprovalPreview = serde_json::from_value(json).unwrap();
        assert_eq!(back, booking(Availability::Waitlist));
        let json =
            serde_json::to_value(booking(Availability::Available { seats_left: 3 })).unwrap();
        assert_eq!(json["availability"]["seatsLeft"], 3);
    }
}

//! What a call waiting for approval will do, as the server found it in its data when the
//! call was stored: the confirmation form shows this (a restaurant's name, address and
//! local time; a gift's price and total; the booking to be cancelled), never a bare id.
//!
//! The model proposes ids; only the server knows what they stand for. The preview is
//! computed again when the person decides, and a decision on facts that changed (the slot
//! filled up) runs nothing until the person has seen the new ones.

use chrono::{DateTime, FixedOffset};
use serde::{Deserialize, Serialize};

use crate::tools::{BookingSummary, CheckoutDraft};

/// The facts behind one pending call, one variant per tool that needs approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    pub starts_at: DateTime<FixedOffset>,
    /// Number of people.
    pub party_size: u8,
    /// Whether the slot has room for the party now.
    pub availability: Availability,
}

/// Whether a booking would be confirmed or put on the waiting list, as of now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancellationPreview {
    /// The booking, as it stands now.
    pub booking: BookingSummary,
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

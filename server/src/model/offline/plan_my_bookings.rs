//! The person's own bookings: listing them and cancelling one (always by its id).

use super::planner::{plural, quoted_field, text_field, trim_message, Planner};
use super::read::{Lang, Utterance};
use super::reply::{Call, Reply};
use super::{CANCEL_BOOKING, LIST_BOOKINGS};
use chrono::DateTime;
use serde_json::Value;
use shared::tools::ToolName;

/// How many of the person's bookings a reply lists.
const LISTED_BOOKINGS: usize = 10;

/// What the question after listing bookings for a cancellation says; a reply with just a
/// booking id answers it.
const CANCEL_QUESTION_VI: &str = "Bạn muốn huỷ đặt chỗ nào?";

const CANCEL_QUESTION_EN: &str = "Which booking would you like to cancel?";

/// A booking's id from cancelBooking's argument text, even when that text is broken.
fn booking_id_argument(arguments: &str) -> Option<String> {
    let from_json = serde_json::from_str::<Value>(arguments)
        .ok()
        .and_then(|args| text_field(&args, "bookingId").map(str::to_owned));
    from_json
        .or_else(|| quoted_field(arguments, "bookingId").map(str::to_owned))
        .filter(|id| !id.trim().is_empty())
}

impl Planner<'_> {
    pub(super) fn my_bookings(&self) -> Option<Reply> {
        let id = self.user.booking_id();
        let asked_which = self.last_assistant_text().is_some_and(|text| {
            text.contains(CANCEL_QUESTION_VI) || text.contains(CANCEL_QUESTION_EN)
        });
        let cancel = self.user.is_cancel() || (asked_which && id.is_some());
        if cancel {
            if let (Some(id), true) = (&id, self.offers(ToolName::CancelBooking)) {
                let text = match self.lang {
                    Lang::Vi => format!(
                        "Tôi chuẩn bị yêu cầu huỷ đặt chỗ {id}; bạn xác nhận trước khi có gì bị \
                         huỷ…"
                    ),
                    Lang::En => format!(
                        "Let me prepare the cancellation of booking {id}; you confirm before \
                         anything is cancelled…"
                    ),
                };
                let arguments = serde_json::json!({ "bookingId": id }).to_string();
                return Some(Reply::call(text, CANCEL_BOOKING, arguments));
            }
        }
        if (cancel || self.user.is_list_bookings()) && self.offers(ToolName::ListBookings) {
            return Some(Reply::call(
                self.lang.pick(
                    "Để tôi xem các đặt chỗ của bạn…",
                    "Let me look up your bookings…",
                ),
                LIST_BOOKINGS,
                "{}",
            ));
        }
        None
    }

    pub(super) fn bookings_report(&self, value: &Value) -> String {
        let bookings: Vec<&Value> = value
            .get("bookings")
            .and_then(Value::as_array)
            .map(|list| list.iter().filter(|b| b.is_object()).collect())
            .unwrap_or_default();
        if bookings.is_empty() {
            let reason = text_field(value, "noResultsReason")
                .filter(|reason| self.readable(reason))
                .map(trim_message);
            let said = match (self.lang, reason) {
                // The tool's sentence in the person's language says it all ("Bạn chưa có đặt
                // bàn nào sắp tới"); put after ours it would say it twice.
                (lang, Some(reason)) if Utterance::new(&reason).language_signal() == Some(lang) => {
                    format!("{reason}.")
                }
                (Lang::Vi, Some(reason)) => format!("Bạn chưa có đặt chỗ nào: {reason}."),
                (Lang::Vi, None) => "Bạn chưa có đặt chỗ nào.".to_owned(),
                (Lang::En, Some(reason)) => format!("You have no bookings: {reason}."),
                (Lang::En, None) => "You have no bookings.".to_owned(),
            };
            // What the person can do next: there is nothing to cancel, and booking is one
            // message away.
            let next = match (self.lang, self.user.is_cancel()) {
                (Lang::Vi, true) => {
                    "Không có gì để huỷ. Muốn đặt bàn, bạn chỉ cần nói ở \
                                     đâu và khi nào, ví dụ “Đặt bàn ở Hà Nội tối mai 19h cho \
                                     2 người”."
                }
                (Lang::Vi, false) => {
                    "Muốn đặt bàn, bạn chỉ cần nói ở đâu và khi nào, ví dụ \
                                      “Đặt bàn ở Hà Nội tối mai 19h cho 2 người”."
                }
                (Lang::En, true) => {
                    "There is nothing to cancel. To book a table, just say \
                                     where and when, for example “Book a table in Hanoi \
                                     tomorrow at 7pm for 2”."
                }
                (Lang::En, false) => {
                    "To book a table, just say where and when, for example \
                                      “Book a table in Hanoi tomorrow at 7pm for 2”."
                }
            };
            return format!("{said} {next}");
        }
        let count = bookings.len();
        let mut lines = vec![match self.lang {
            Lang::Vi => format!("Bạn có {count} đặt chỗ:"),
            Lang::En => format!("You have {count} {}:", plural(count, "booking", "bookings")),
        }];
        for booking in bookings.iter().take(LISTED_BOOKINGS) {
            lines.push(self.booking_line(booking));
        }
        if count > LISTED_BOOKINGS {
            lines.push("- …".to_owned());
        }
        let mut text = lines.join("\n");
        let open: Vec<&str> = bookings
            .iter()
            .filter(|b| text_field(b, "status") != Some("cancelled"))
            .filter_map(|b| text_field(b, "bookingId"))
            .collect();
        if self.user.is_cancel() && self.user.booking_id().is_none() {
            text.push_str("\n\n");
            if let ([only], true) = (open.as_slice(), self.offers(ToolName::CancelBooking)) {
                // One booking still held: that is the one, and its form asks to confirm.
                text.push_str(&match self.lang {
                    Lang::Vi => format!(
                        "Tôi chuẩn bị yêu cầu huỷ đặt chỗ {only}; bạn xác nhận trước khi có gì \
                         bị huỷ…"
                    ),
                    Lang::En => format!(
                        "Let me prepare the cancellation of booking {only}; you confirm before \
                         anything is cancelled…"
                    ),
                });
                return text;
            }
            text.push_str(&match (self.lang, open.first()) {
                (Lang::Vi, Some(example)) => format!(
                    "{CANCEL_QUESTION_VI} Hãy cho tôi mã đặt chỗ (ví dụ: \"huỷ đặt chỗ \
                     {example}\")."
                ),
                (Lang::En, Some(example)) => format!(
                    "{CANCEL_QUESTION_EN} Tell me its id (for example: \"cancel booking \
                     {example}\")."
                ),
                (Lang::Vi, None) => "Không có đặt chỗ nào đang giữ để huỷ.".to_owned(),
                (Lang::En, None) => {
                    "None of them is still held, so there is nothing to cancel.".to_owned()
                }
            });
        }
        text
    }

    /// After listing for a cancellation that named no booking: the cancelBooking call for
    /// the one booking still held, if there is exactly one (its form asks to confirm).
    pub(super) fn cancel_the_only_booking(&self, value: &Value) -> Option<Call> {
        if !self.user.is_cancel()
            || self.user.booking_id().is_some()
            || !self.offers(ToolName::CancelBooking)
        {
            return None;
        }
        let open: Vec<&str> = value
            .get("bookings")
            .and_then(Value::as_array)?
            .iter()
            .filter(|b| b.is_object() && text_field(b, "status") != Some("cancelled"))
            .filter_map(|b| text_field(b, "bookingId"))
            .collect();
        let [only] = open.as_slice() else {
            return None;
        };
        Some(Call {
            name: CANCEL_BOOKING.to_owned(),
            arguments: serde_json::json!({ "bookingId": only }).to_string(),
        })
    }

    fn booking_line(&self, booking: &Value) -> String {
        let id = text_field(booking, "bookingId").unwrap_or("?");
        let name = text_field(booking, "restaurantName").unwrap_or("?");
        let when = text_field(booking, "startsAt")
            .map(|at| {
                DateTime::parse_from_rfc3339(at)
                    .map(|at| at.format("%d/%m/%Y %H:%M").to_string())
                    .unwrap_or_else(|_| at.to_owned())
            })
            .unwrap_or_else(|| "?".to_owned());
        let size = booking
            .get("partySize")
            .and_then(Value::as_u64)
            .map_or_else(|| "?".to_owned(), |n| n.to_string());
        let status = text_field(booking, "status").unwrap_or("?");
        match self.lang {
            Lang::Vi => {
                let status = match status {
                    "confirmed" => "đã xác nhận",
                    "waitlisted" => "danh sách chờ, chưa có bàn",
                    "cancelled" => "đã huỷ",
                    other => other,
                };
                format!("- {id} — {name}, {when}, {size} người ({status})")
            }
            Lang::En => {
                let status = match status {
                    "waitlisted" => "waitlisted, no table held",
                    other => other,
                };
                format!("- {id} — {name}, {when}, party of {size} ({status})")
            }
        }
    }

    pub(super) fn cancel_report(&self, value: &Value, arguments: &str) -> String {
        let booking = value.get("booking").unwrap_or(&Value::Null);
        let id = text_field(booking, "bookingId")
            .map(str::to_owned)
            .or_else(|| booking_id_argument(arguments))
            .unwrap_or_else(|| "?".to_owned());
        let name = text_field(booking, "restaurantName").unwrap_or("?");
        let already = value.get("alreadyCancelled").and_then(Value::as_bool) == Some(true);
        match (text_field(booking, "status"), already, self.lang) {
            (Some("cancelled"), false, Lang::Vi) => format!("Đã huỷ đặt chỗ {id} tại {name}."),
            (Some("cancelled"), false, Lang::En) => {
                format!("Booking {id} at {name} is cancelled.")
            }
            (Some("cancelled"), true, Lang::Vi) => {
                format!("Đặt chỗ {id} tại {name} đã được huỷ từ trước.")
            }
            (Some("cancelled"), true, Lang::En) => {
                format!("Booking {id} at {name} was already cancelled.")
            }
            (_, _, Lang::Vi) => format!(
                "Kết quả không cho thấy đặt chỗ {id} đã bị huỷ, nên tôi không xác nhận được là \
                 đã huỷ."
            ),
            (_, _, Lang::En) => format!(
                "The result does not show booking {id} as cancelled, so I can't confirm that it \
                 was cancelled."
            ),
        }
    }

    pub(super) fn cancel_failure(&self, code: &str, quoted: &str, arguments: &str) -> String {
        let id = booking_id_argument(arguments);
        let booking = match (self.lang, &id) {
            (Lang::Vi, Some(id)) => format!("Đặt chỗ {id}"),
            (Lang::Vi, None) => "Đặt chỗ của bạn".to_owned(),
            (Lang::En, Some(id)) => format!("Booking {id}"),
            (Lang::En, None) => "Your booking".to_owned(),
        };
        match (code, self.lang) {
            ("DECLINED", Lang::Vi) => format!("{booking} vẫn giữ nguyên."),
            ("DECLINED", Lang::En) => format!("{booking} still stands."),
            (_, Lang::Vi) => format!("{booking} chưa được huỷ: {quoted}."),
            (_, Lang::En) => format!("{booking} was not cancelled: {quoted}."),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{after_result, declined, failed, plan, user};
    use super::*;
    use crate::model::FinishReason;
    use serde_json::json;
    use shared::tools::Assistant;

    fn my_bookings() -> Value {
        json!({"ok": true, "bookings": [
            {"bookingId": "BK-1A2B3C4D", "restaurantName": "Chả Cá Thăng Long", "partySize": 4,
             "startsAt": "2026-11-30T19:00:00+07:00", "status": "confirmed"},
            {"bookingId": "BK-5E6F7G8H", "restaurantName": "Bún Chả Hương Liên",
             "partySize": 2, "startsAt": "2026-12-01T12:00:00+07:00", "status": "waitlisted"}
        ]})
    }

    fn cancelled(already: bool) -> Value {
        json!({"ok": true, "alreadyCancelled": already, "booking": {
            "bookingId": "BK-1A2B3C4D", "restaurantName": "Chả Cá Thăng Long", "partySize": 4,
            "startsAt": "2026-11-30T19:00:00+07:00", "status": "cancelled"}})
    }

    /// "Huỷ đặt bàn vừa rồi" with one booking still held: that one's cancellation is
    /// proposed (its form asks to confirm); with several, the person is asked which.
    #[test]
    fn a_cancellation_that_names_no_booking_takes_the_only_one_held() {
        let mut one = my_bookings();
        one["bookings"][1]["status"] = json!("cancelled");
        let (_, reply) = after_result(
            Assistant::Restaurant,
            "Hủy đặt bàn vừa rồi",
            LIST_BOOKINGS,
            &one,
        );
        let call = reply.only_call();
        assert_eq!(call.name, CANCEL_BOOKING);
        assert_eq!(
            serde_json::from_str::<Value>(&call.arguments).unwrap_or_default(),
            json!({"bookingId": "BK-1A2B3C4D"})
        );
        assert!(
            reply
                .text
                .ends_with("Tôi chuẩn bị yêu cầu huỷ đặt chỗ BK-1A2B3C4D; bạn xác nhận trước khi có gì bị huỷ…"),
            "{}",
            reply.text
        );
        let (_, reply) = after_result(
            Assistant::Restaurant,
            "cancel my booking",
            LIST_BOOKINGS,
            &my_bookings(),
        );
        assert!(reply.calls.is_empty(), "{reply:?}");
        assert!(reply.text.contains(CANCEL_QUESTION_EN), "{}", reply.text);
        // Listing alone proposes nothing.
        let (_, reply) = after_result(Assistant::Restaurant, "my bookings", LIST_BOOKINGS, &one);
        assert!(reply.calls.is_empty(), "{reply:?}");
    }

    #[test]
    fn my_bookings_are_listed_in_both_languages() {
        for text in [
            "Đặt chỗ của tôi",
            "xem đặt chỗ",
            "Cho tôi xem các đặt chỗ",
            "dat cho cua toi",
            "my bookings",
            "list my bookings",
            "Show my bookings please",
            "Tôi có những đặt bàn nào?",
            "Tôi có đặt bàn nào không?",
            "Tôi đã đặt bàn ở đâu?",
            "What bookings do I have?",
            "Which reservations do I have this week?",
            "Where did I book?",
        ] {
            let turn = plan(vec![user(text)]);
            let call = turn.only_call();
            assert_eq!(call.name, LIST_BOOKINGS, "{text}");
            assert_eq!(call.arguments, "{}", "{text}");
        }
        let (_, reply) = after_result(
            Assistant::Restaurant,
            "Đặt chỗ của tôi",
            LIST_BOOKINGS,
            &my_bookings(),
        );
        assert_eq!(
            reply.text,
            "Bạn có 2 đặt chỗ:\n\
             - BK-1A2B3C4D — Chả Cá Thăng Long, 30/11/2026 19:00, 4 người (đã xác nhận)\n\
             - BK-5E6F7G8H — Bún Chả Hương Liên, 01/12/2026 12:00, 2 người (danh sách chờ, \
             chưa có bàn)"
        );
        assert!(reply.calls.is_empty());
        assert_eq!(reply.finish, FinishReason::Stop);
        let (_, reply) = after_result(
            Assistant::Restaurant,
            "list my bookings",
            LIST_BOOKINGS,
            &my_bookings(),
        );
        assert!(
            reply.text.starts_with(
                "You have 2 bookings:\n- BK-1A2B3C4D — Chả Cá Thăng Long, 30/11/2026 19:00, \
                 party of 4 (confirmed)"
            ),
            "{}",
            reply.text
        );
    }

    #[test]
    fn asking_for_a_free_table_is_not_asking_for_my_bookings() {
        for text in [
            "Đặt bàn nào còn trống tối nay ở Hà Nội?",
            "Book a table at Chả Cá Thăng Long for 2 tomorrow at 7pm",
            "Tìm nhà hàng phở ở Hà Nội",
        ] {
            let turn = plan(vec![user(text)]);
            assert!(
                turn.calls.iter().all(|call| call.name != LIST_BOOKINGS),
                "{text}: {turn:?}"
            );
        }
    }

    #[test]
    fn no_bookings_gives_the_reason() {
        let empty = json!({"ok": true, "bookings": [],
                           "noResultsReason": "You have no upcoming bookings."});
        let (_, reply) = after_result(Assistant::Restaurant, "xem đặt chỗ", LIST_BOOKINGS, &empty);
        assert_eq!(
            reply.text,
            "Bạn chưa có đặt chỗ nào: You have no upcoming bookings. Muốn đặt bàn, bạn chỉ \
             cần nói ở đâu và khi nào, ví dụ “Đặt bàn ở Hà Nội tối mai 19h cho 2 người”."
        );
        let (_, reply) = after_result(Assistant::Restaurant, "my bookings", LIST_BOOKINGS, &empty);
        assert_eq!(
            reply.text,
            "You have no upcoming bookings. To book a table, just say where and when, for \
             example “Book a table in Hanoi tomorrow at 7pm for 2”."
        );
        // The tool's own sentence in the person's language is said once, and a request to
        // cancel learns there is nothing to cancel.
        let empty_vi = json!({"ok": true, "bookings": [],
                              "noResultsReason": "Bạn chưa có đặt bàn nào sắp tới."});
        let (_, reply) = after_result(
            Assistant::Restaurant,
            "Hủy đặt bàn của tôi",
            LIST_BOOKINGS,
            &empty_vi,
        );
        assert_eq!(
            reply.text,
            "Bạn chưa có đặt bàn nào sắp tới. Không có gì để huỷ. Muốn đặt bàn, bạn chỉ cần \
             nói ở đâu và khi nào, ví dụ “Đặt bàn ở Hà Nội tối mai 19h cho 2 người”."
        );
        let (_, reply) = after_result(
            Assistant::Restaurant,
            "my bookings",
            LIST_BOOKINGS,
            &failed("UPSTREAM_UNAVAILABLE", "The booking database is down."),
        );
        assert_eq!(
            reply.text,
            "Sorry, I couldn't list your bookings: A service it needs is not answering."
        );
    }

    #[test]
    fn cancelling_with_an_id_in_any_spelling_cancels_that_booking() {
        for (text, id) in [
            ("Huỷ đặt chỗ BK-1A2B3C4D", "BK-1A2B3C4D"),
            ("Hủy đặt chỗ BK-1A2B3C4D", "BK-1A2B3C4D"),
            ("hủy đặt chỗ bk-1a2b3c4d nhé", "BK-1A2B3C4D"),
            ("huy dat cho BK-1A2B3C4D", "BK-1A2B3C4D"),
            ("huỷ BK-9Z8Y7X6W", "BK-9Z8Y7X6W"),
            ("cancel booking bk-7q2x3y4z", "BK-7Q2X3Y4Z"),
            ("Please cancel my booking BK-1A2B3C4D.", "BK-1A2B3C4D"),
        ] {
            let turn = plan(vec![user(text)]);
            let call = turn.only_call();
            assert_eq!(call.name, CANCEL_BOOKING, "{text}");
            assert_eq!(
                call.arguments,
                format!(r#"{{"bookingId":"{id}"}}"#),
                "{text}"
            );
            assert_eq!(turn.finish, FinishReason::ToolCalls);
        }
        let turn = plan(vec![user("Huỷ đặt chỗ BK-1A2B3C4D")]);
        assert_eq!(
            turn.text,
            "Tôi chuẩn bị yêu cầu huỷ đặt chỗ BK-1A2B3C4D; bạn xác nhận trước khi có gì bị huỷ…"
        );
    }

    #[test]
    fn cancelling_without_an_id_lists_the_bookings_then_asks_which() {
        let (mut history, reply) = after_result(
            Assistant::Restaurant,
            "Huỷ đặt chỗ của tôi",
            LIST_BOOKINGS,
            &my_bookings(),
        );
        assert!(reply.calls.is_empty());
        assert!(
            reply.text.ends_with(
                "Bạn muốn huỷ đặt chỗ nào? Hãy cho tôi mã đặt chỗ (ví dụ: \"huỷ đặt chỗ \
                 BK-1A2B3C4D\")."
            ),
            "{}",
            reply.text
        );
        assert!(!reply.text.contains("Đã huỷ"), "{}", reply.text);
        // The bare id answers the question.
        history.push(reply.assistant());
        history.push(user("BK-5E6F7G8H"));
        let cancel = plan(history);
        assert_eq!(cancel.only_call().name, CANCEL_BOOKING);
        assert_eq!(
            cancel.only_call().arguments,
            r#"{"bookingId":"BK-5E6F7G8H"}"#
        );

        let (_, reply) = after_result(
            Assistant::Restaurant,
            "cancel my reservation",
            LIST_BOOKINGS,
            &my_bookings(),
        );
        assert!(
            reply.text.ends_with(
                "Which booking would you like to cancel? Tell me its id (for example: \"cancel \
                 booking BK-1A2B3C4D\")."
            ),
            "{}",
            reply.text
        );
    }

    #[test]
    fn a_cancellation_is_reported_only_when_the_result_says_cancelled() {
        let cases = [
            (
                "Huỷ đặt chỗ BK-1A2B3C4D",
                cancelled(false),
                "Đã huỷ đặt chỗ BK-1A2B3C4D tại Chả Cá Thăng Long.",
            ),
            (
                "Huỷ đặt chỗ BK-1A2B3C4D",
                cancelled(true),
                "Đặt chỗ BK-1A2B3C4D tại Chả Cá Thăng Long đã được huỷ từ trước.",
            ),
            (
                "hủy đặt chỗ BK-1A2B3C4D",
                declined(),
                "Đặt chỗ BK-1A2B3C4D vẫn giữ nguyên.",
            ),
            (
                "huy dat cho BK-1A2B3C4D",
                json!({"ok": false, "error": {"code": "NOT_FOUND",
                       "message": "bookingId: you have no booking \"BK-1A2B3C4D\"",
                       "retryable": false,
                       "issues": [{"path": "bookingId", "message": "no such booking",
                                   "rule": {"kind": "noSuch", "entity": "booking"}}]}}),
                "Đặt chỗ BK-1A2B3C4D chưa được huỷ: Không tìm thấy lượt đặt bàn này trong các \
                 lượt đặt của bạn.",
            ),
            (
                "cancel booking BK-1A2B3C4D",
                cancelled(false),
                "Booking BK-1A2B3C4D at Chả Cá Thăng Long is cancelled.",
            ),
            (
                "cancel booking BK-1A2B3C4D",
                declined(),
                "Booking BK-1A2B3C4D still stands.",
            ),
            (
                "cancel booking BK-1A2B3C4D",
                failed("UPSTREAM_TIMEOUT", "The booking service timed out."),
                "Booking BK-1A2B3C4D was not cancelled: A service it needs answered too slowly.",
            ),
            (
                "cancel booking BK-1A2B3C4D",
                json!({"ok": true, "booking": {"bookingId": "BK-1A2B3C4D",
                       "status": "confirmed"}}),
                "The result does not show booking BK-1A2B3C4D as cancelled, so I can't confirm \
                 that it was cancelled.",
            ),
        ];
        for (text, result, expected) in cases {
            let (_, reply) = after_result(Assistant::Restaurant, text, CANCEL_BOOKING, &result);
            assert_eq!(reply.text, expected, "{text} → {result}");
            assert!(reply.calls.is_empty());
            assert_eq!(reply.finish, FinishReason::Stop);
        }
    }
}

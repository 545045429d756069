//! The restaurant assistant's bookings: the createBooking call with exactly what the person
//! said, follow-ups that complete it, and what the result means.

use super::catalogue::{named_in, KnownRestaurant};
use super::plan_search::{name_match, Restaurant};
use super::planner::{join_names, quoted_field, text_field, Outcome, Planner};
use super::read::{number, Lang, Utterance};
use super::read_request::{Intent, Request};
use super::read_when::{local, next_occurrence, rfc3339};
use super::reply::{Call, Reply};
use super::{CREATE_BOOKING, SEARCH_RESTAURANTS};
use crate::model::ModelMessage;
use chrono::{DateTime, FixedOffset};
use serde_json::{Map, Value};
use shared::tools::{ErrorCode, ToolError, ToolName};

/// createBooking arguments as far as they are known; absent fields are left out of the call.
#[derive(Debug, Clone, Default, PartialEq)]
struct BookingArgs {
    restaurant_id: Option<String>,
    party_size: Option<u8>,
    starts_at: Option<DateTime<FixedOffset>>,
}

impl BookingArgs {
    pub(super) fn to_json(&self) -> String {
        let mut object = Map::new();
        if let Some(id) = &self.restaurant_id {
            object.insert("restaurantId".into(), Value::from(id.as_str()));
        }
        if let Some(size) = self.party_size {
            object.insert("partySize".into(), Value::from(size));
        }
        if let Some(at) = &self.starts_at {
            object.insert("startsAt".into(), Value::from(rfc3339(at)));
        }
        Value::Object(object).to_string()
    }

    /// Reads earlier argument text, which may be broken JSON or hold ill-typed values: what
    /// is usable is kept, the rest is dropped.
    fn lenient(arguments: &str) -> Self {
        let starts_at = |text: &str| DateTime::parse_from_rfc3339(text.trim()).ok();
        if let Ok(Value::Object(object)) = serde_json::from_str::<Value>(arguments) {
            return Self {
                restaurant_id: object
                    .get("restaurantId")
                    .and_then(Value::as_str)
                    .filter(|id| !id.trim().is_empty())
                    .map(str::to_owned),
                party_size: object
                    .get("partySize")
                    .and_then(Value::as_u64)
                    .and_then(|n| u8::try_from(n).ok())
                    .filter(|n| *n > 0),
                starts_at: object
                    .get("startsAt")
                    .and_then(Value::as_str)
                    .and_then(starts_at),
            };
        }
        Self {
            restaurant_id: quoted_field(arguments, "restaurantId")
                .filter(|id| !id.trim().is_empty())
                .map(str::to_owned),
            party_size: None,
            starts_at: quoted_field(arguments, "startsAt").and_then(starts_at),
        }
    }

    fn supplies_anything(&self) -> bool {
        self.party_size.is_some() || self.starts_at.is_some()
    }
}

impl Planner<'_> {
    /// What `details` say about a booking, without a restaurant.
    fn booking_details(&self, details: &Utterance) -> BookingArgs {
        BookingArgs {
            restaurant_id: None,
            party_size: details.party_size(),
            starts_at: details.starts_at(self.now),
        }
    }

    pub(super) fn book(&self, request: &Request) -> Reply {
        let searches = self.search_results();
        let seen = searches.iter().rev().flatten();
        if let Some(restaurant) = name_match(&request.said, seen) {
            let args = BookingArgs {
                restaurant_id: Some(restaurant.id.clone()),
                ..self.booking_details(&request.details)
            };
            return self.booking_call(&args);
        }
        let cities = &request.cities;
        let named = named_in(&request.said);
        if cities.is_empty() && named.is_empty() {
            // "book for 4 people" right after a failed booking completes that booking.
            if let Some(pending) = self.pending_booking() {
                if pending.restaurant_id.is_some() {
                    let merged = self.merge(pending.clone()).unwrap_or(pending);
                    return self.booking_call(&merged);
                }
            }
        }
        if !named.is_empty() && self.offers(ToolName::SearchRestaurants) {
            return self.search_for_named(request, &named);
        }
        // A restaurant from an earlier search in another city is not what was asked for.
        let latest_first = searches.last().and_then(|list| list.first());
        if let Some(restaurant) = latest_first {
            let same_city = match (cities.first(), restaurant.city.as_deref()) {
                (Some(wanted), Some(city)) => Utterance::new(city).cities().first() == Some(wanted),
                _ => true,
            };
            if same_city {
                let args = BookingArgs {
                    restaurant_id: Some(restaurant.id.clone()),
                    ..self.booking_details(&request.details)
                };
                return self.booking_call(&args);
            }
        }
        let city = match cities.first().copied() {
            Some(city) if self.offers(ToolName::SearchRestaurants) => city,
            _ => {
                if let Some(reply) = self.unserved(&request.said) {
                    return reply;
                }
                return self.ask_city(self.lang.pick(
                    "Bạn muốn đặt bàn ở thành phố nào (hoặc nhà hàng nào)?",
                    "Which city (or which restaurant) should I book in?",
                ));
            }
        };
        let mut arguments = Map::new();
        arguments.insert("city".into(), Value::from(city));
        if let Some(cuisine) = request.said.cuisine(self.lang) {
            arguments.insert("cuisine".into(), Value::from(cuisine));
        }
        self.insert_booking_filters(&mut arguments, &request.details);
        let text = match self.lang {
            Lang::Vi => format!("Để tôi tìm nhà hàng ở {city} trước…"),
            Lang::En => format!("Let me find restaurants in {city} first…"),
        };
        Reply::call(
            text,
            SEARCH_RESTAURANTS,
            Value::Object(arguments).to_string(),
        )
    }

    /// The party size and the date of a booking, as search filters: only places with room
    /// that day are listed.
    fn insert_booking_filters(&self, arguments: &mut Map<String, Value>, details: &Utterance) {
        let booking = self.booking_details(details);
        if let Some(size) = booking.party_size {
            arguments.insert("partySize".into(), Value::from(size));
        }
        let date = details
            .date(self.today())
            .or(booking.starts_at.map(|at| at.date_naive()));
        if let Some(date) = date {
            arguments.insert("date".into(), Value::from(date.to_string()));
        }
    }

    /// A booking at a restaurant named in a new conversation: the model knows its city
    /// and its food, and searches there for its id (an id is only ever taken from a
    /// search result).
    fn search_for_named(&self, request: &Request, named: &[&KnownRestaurant]) -> Reply {
        let in_city: Vec<&KnownRestaurant> = named
            .iter()
            .copied()
            .filter(|restaurant| {
                request.cities.is_empty() || request.cities.contains(&restaurant.city)
            })
            .collect();
        let candidates = if in_city.is_empty() { named } else { &in_city };
        let Some(restaurant) = candidates.first() else {
            return self.ask_city(self.lang.pick(
                "Bạn muốn đặt bàn ở thành phố nào (hoặc nhà hàng nào)?",
                "Which city (or which restaurant) should I book in?",
            ));
        };
        if candidates.iter().any(|other| other.city != restaurant.city) {
            let cities: Vec<&str> = candidates.iter().map(|r| r.city).collect();
            let cities = join_names(&cities, self.lang);
            return Reply::text(match self.lang {
                Lang::Vi => format!("{} ở thành phố nào: {cities}?", restaurant.name),
                Lang::En => format!("Which {} do you mean: {cities}?", restaurant.name),
            });
        }
        let mut arguments = Map::new();
        arguments.insert("city".into(), Value::from(restaurant.city));
        arguments.insert("cuisine".into(), Value::from(restaurant.cuisine));
        self.insert_booking_filters(&mut arguments, &request.details);
        let (name, city) = (restaurant.name, restaurant.city);
        let text = match self.lang {
            Lang::Vi => format!("Để tôi tìm {name} ở {city} trước…"),
            Lang::En => format!("Let me find {name} in {city} first…"),
        };
        Reply::call(
            text,
            SEARCH_RESTAURANTS,
            Value::Object(arguments).to_string(),
        )
    }

    /// A message that only adds what an unfinished booking lacked ("4 người", "lúc 19:00").
    pub(super) fn follow_up(&self) -> Option<Reply> {
        let merged = self.merge(self.pending_booking()?)?;
        if merged.restaurant_id.is_none() {
            let request = self.whole_request(Intent::Book);
            return Some(self.book(&request));
        }
        Some(self.booking_call(&merged))
    }

    /// The unfinished booking's arguments with what the latest message adds; `None` when it
    /// adds nothing.
    fn merge(&self, base: BookingArgs) -> Option<BookingArgs> {
        let said = &self.details;
        let mut details = self.booking_details(said);
        if details.party_size.is_none() {
            // A bare "4" answers "how many people?".
            if let [only] = said.tokens.as_slice() {
                details.party_size = number(&only.lower);
            }
        }
        if !details.supplies_anything() && said.date(self.today()).is_none() {
            return None;
        }
        let time = said.time().or(base.starts_at.map(|at| at.time()));
        let date = said
            .date(self.today())
            .or(base.starts_at.map(|at| at.date_naive()));
        let starts_at = match (date, time) {
            (Some(date), Some(time)) => local(date, time),
            (None, Some(time)) => next_occurrence(self.now, time),
            _ => None,
        };
        Some(BookingArgs {
            restaurant_id: base.restaurant_id,
            party_size: details.party_size.or(base.party_size),
            starts_at,
        })
    }

    fn booking_call(&self, args: &BookingArgs) -> Reply {
        let name = args
            .restaurant_id
            .as_deref()
            .map(|id| self.restaurant_name(id).unwrap_or_else(|| id.to_owned()))
            .unwrap_or_default();
        let text = match self.lang {
            Lang::Vi => {
                format!("Tôi chuẩn bị yêu cầu đặt bàn tại {name}…")
            }
            Lang::En => format!("Let me prepare a booking request for {name}…"),
        };
        Reply::call(text, CREATE_BOOKING, args.to_json())
    }

    /// The arguments of the latest createBooking call, if that booking is unfinished: it
    /// failed validation, or the last reply asked for the party size or time.
    fn pending_booking(&self) -> Option<BookingArgs> {
        let call = self
            .proposed_calls()
            .rev()
            .find(|c| c.name == CREATE_BOOKING)?;
        let failed_validation = matches!(
            self.result_of(&call.id),
            Some(Outcome::Failed(error)) if error.code == ErrorCode::ValidationError
        );
        let asked = self
            .messages
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::Assistant { text, .. } => Some(text.to_lowercase()),
                _ => None,
            })
            .is_some_and(|text| {
                [
                    "mấy người",
                    "mấy giờ",
                    "how many people",
                    "what date and time",
                ]
                .iter()
                .any(|question| text.contains(question))
            });
        (failed_validation || asked).then(|| BookingArgs::lenient(&call.arguments))
    }

    /// After a search made for a booking request, the booking call (once per request),
    /// or why there is none: the restaurant asked for is not among the results.
    pub(super) fn book_from_search(
        &self,
        restaurants: &[Restaurant],
    ) -> Option<(String, Option<Call>)> {
        if !self.offers(ToolName::CreateBooking) || self.booked_since_user() {
            return None;
        }
        let request = self.request(Intent::Book)?;
        let named = named_in(&request.said);
        let restaurant = match name_match(&request.said, restaurants.iter()) {
            Some(restaurant) => restaurant,
            None if named.is_empty() => restaurants.first()?,
            None => {
                let name = named.first().map_or("", |restaurant| restaurant.name);
                return Some((
                    match self.lang {
                        Lang::Vi => format!(
                            "{name} không có trong kết quả (có thể đã hết chỗ vào lúc đó), nên \
                             tôi chưa đặt bàn. Bạn muốn chọn nơi khác hay giờ khác?"
                        ),
                        Lang::En => format!(
                            "{name} is not among the results (it may be full then), so nothing \
                             is booked. Would you like another place or time?"
                        ),
                    },
                    None,
                ));
            }
        };
        let args = BookingArgs {
            restaurant_id: Some(restaurant.id.clone()),
            ..self.booking_details(&request.details)
        };
        let name = &restaurant.name;
        let line = match self.lang {
            Lang::Vi => {
                format!("Tôi chuẩn bị yêu cầu đặt bàn tại {name}…")
            }
            Lang::En => format!("Let me prepare a booking request for {name}…"),
        };
        let call = Call {
            name: CREATE_BOOKING.to_owned(),
            arguments: args.to_json(),
        };
        Some((line, Some(call)))
    }

    fn booked_since_user(&self) -> bool {
        self.messages
            .iter()
            .rev()
            .take_while(|message| !matches!(message, ModelMessage::User { .. }))
            .any(|message| match message {
                ModelMessage::Assistant { calls, .. } => {
                    calls.iter().any(|call| call.name == CREATE_BOOKING)
                }
                _ => false,
            })
    }

    pub(super) fn booking_report(&self, value: &Value) -> String {
        let id = text_field(value, "bookingId").unwrap_or("?");
        let name = text_field(value, "restaurantName")
            .or_else(|| text_field(value, "restaurantId"))
            .unwrap_or("?");
        let when = text_field(value, "startsAt")
            .map(|at| {
                DateTime::parse_from_rfc3339(at)
                    .map(|at| at.format("%d/%m/%Y %H:%M").to_string())
                    .unwrap_or_else(|_| at.to_owned())
            })
            .unwrap_or_else(|| "?".to_owned());
        let size = value
            .get("partySize")
            .and_then(Value::as_u64)
            .map_or_else(|| "?".to_owned(), |n| n.to_string());
        match (text_field(value, "status"), self.lang) {
            (Some("confirmed"), Lang::Vi) => format!(
                "Đã đặt bàn thành công tại {name}! Mã đặt bàn: {id}. Thời gian: {when}, \
                 {size} người."
            ),
            (Some("confirmed"), Lang::En) => format!(
                "Your table at {name} is booked! Booking id: {id}. Time: {when}, party of {size}."
            ),
            (Some("waitlisted"), Lang::Vi) => format!(
                "{name} đã kín chỗ lúc {when}, nên yêu cầu cho {size} người đang nằm trong danh \
                 sách chờ — bàn chưa được giữ. Mã yêu cầu: {id}. Nhà hàng sẽ báo khi có chỗ."
            ),
            (Some("waitlisted"), Lang::En) => format!(
                "{name} is full at {when}, so your request for {size} is on the waiting list — \
                 no table is held yet. Reference: {id}. The restaurant will tell you if a table \
                 frees up."
            ),
            (_, Lang::Vi) => format!(
                "Kết quả đặt bàn không rõ trạng thái, nên tôi không xác nhận được là có bàn. Mã: \
                 {id}."
            ),
            (_, Lang::En) => format!(
                "The booking result has no clear status, so I can't confirm a table. Reference: \
                 {id}."
            ),
        }
    }

    pub(super) fn booking_failure(&self, code: &str, error: &ToolError, quoted: &str) -> String {
        let about = |field: &str| error.issues.iter().any(|issue| issue.path == field);
        let (party, time) = (about("partySize"), about("startsAt"));
        match (code, party, time, self.lang) {
            ("VALIDATION_ERROR", true, true, Lang::Vi) => "Tôi chưa đặt bàn vì còn thiếu thông \
                tin. Bạn muốn đặt bàn cho mấy người, vào ngày nào và lúc mấy giờ?"
                .to_owned(),
            ("VALIDATION_ERROR", true, true, Lang::En) => "I haven't made the reservation yet: \
                how many people is it for, and what date and time would you like?"
                .to_owned(),
            ("VALIDATION_ERROR", true, false, Lang::Vi) => {
                "Tôi chưa đặt bàn vì còn thiếu số người. Bạn muốn đặt bàn cho mấy người?".to_owned()
            }
            ("VALIDATION_ERROR", true, false, Lang::En) => "I haven't made the reservation yet: \
                how many people should the table be for?"
                .to_owned(),
            ("VALIDATION_ERROR", false, true, Lang::Vi) => format!(
                "Tôi chưa đặt bàn vì thời gian chưa hợp lệ ({quoted}). Bạn muốn đặt vào ngày \
                 nào, lúc mấy giờ?"
            ),
            ("VALIDATION_ERROR", false, true, Lang::En) => format!(
                "I haven't made the reservation yet, the time was not valid ({quoted}): what \
                 date and time would you like the table for?"
            ),
            ("VALIDATION_ERROR", false, false, Lang::Vi) => {
                format!("Chưa có bàn nào được đặt: {quoted}.")
            }
            ("VALIDATION_ERROR", false, false, Lang::En) => {
                format!("Nothing was booked: {quoted}.")
            }
            ("DECLINED", _, _, Lang::Vi) => "Bạn đã từ chối nên chưa có bàn nào được đặt. Bạn \
                muốn thay đổi gì: nhà hàng, ngày giờ hay số người?"
                .to_owned(),
            ("DECLINED", _, _, Lang::En) => "You declined, so nothing was booked. What would you \
                like to change: the restaurant, the time or the party size?"
                .to_owned(),
            (_, _, _, Lang::Vi) => {
                format!("Xin lỗi, tôi không đặt được bàn: {quoted}. Chưa có bàn nào được đặt.")
            }
            (_, _, _, Lang::En) => {
                format!("Sorry, I couldn't make the booking: {quoted}. Nothing was booked.")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        after_search, arguments, hanoi_search, incident_history, plan, tool_result, user,
        validation_error, Turn,
    };
    use super::super::BAD_ARGS_ARGUMENTS;
    use super::*;
    use crate::model::{FinishReason, ProposedCall};
    use serde_json::json;

    const NO_PARTY_SIZE: &str =
        r#"{"restaurantId":"hn-cha-ca-thang-long","startsAt":"2026-11-30T19:00:00+07:00"}"#;

    fn booking_ok(status: &str) -> Value {
        json!({"ok": true, "bookingId": "BK-7Q2X", "status": status,
               "restaurantId": "hn-cha-ca-thang-long", "restaurantName": "Chả Cá Thăng Long",
               "partySize": 4, "startsAt": "2026-11-30T19:00:00+07:00"})
    }

    fn reply_to(result: &Value) -> Turn {
        let (mut history, call) = incident_history();
        history.push(tool_result(&call.id, CREATE_BOOKING, result));
        plan(history)
    }

    #[test]
    fn booking_without_a_party_size_omits_it() {
        let (_, call) = incident_history();
        assert_eq!(call.name, CREATE_BOOKING);
        assert_eq!(call.id, "call_3_0");
        // The second restaurant, by name, not the first of the list.
        assert_eq!(
            arguments(&call),
            json!({"restaurantId": "hn-cha-ca-thang-long",
                   "startsAt": "2026-11-30T19:00:00+07:00"})
        );
    }

    #[test]
    fn a_failed_validation_asks_for_the_party_size_and_claims_nothing() {
        let turn = reply_to(&validation_error(CREATE_BOOKING, NO_PARTY_SIZE));
        assert!(turn.calls.is_empty());
        assert_eq!(turn.finish, FinishReason::Stop);
        assert!(
            turn.text.contains("Bạn muốn đặt bàn cho mấy người?"),
            "{}",
            turn.text
        );
        assert!(!turn.text.contains("đã đặt"), "{}", turn.text);
        assert!(!turn.text.contains("Đã đặt"), "{}", turn.text);
        assert!(!turn.text.contains("booked"), "{}", turn.text);
    }

    #[test]
    fn the_party_size_follow_up_retries_the_same_booking() {
        let (mut history, call) = incident_history();
        history.push(tool_result(
            &call.id,
            CREATE_BOOKING,
            &validation_error(CREATE_BOOKING, NO_PARTY_SIZE),
        ));
        let question = plan(history.clone());
        history.push(question.assistant());
        history.push(user("4 người"));
        let retry = plan(history);
        let call = retry.only_call();
        assert_eq!(call.name, CREATE_BOOKING);
        assert_eq!(call.id, "call_5_0");
        assert_eq!(
            arguments(call),
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 4,
                   "startsAt": "2026-11-30T19:00:00+07:00"})
        );
        assert!(retry.text.contains("Chả Cá Thăng Long"), "{}", retry.text);
    }

    #[test]
    fn a_failed_validation_alone_is_enough_for_a_follow_up() {
        let (mut history, call) = incident_history();
        history.push(tool_result(
            &call.id,
            CREATE_BOOKING,
            &validation_error(CREATE_BOOKING, NO_PARTY_SIZE),
        ));
        history.push(ModelMessage::Assistant {
            text: String::new(),
            calls: Vec::new(),
        });
        history.push(user("for 2 people, at 20:30"));
        assert_eq!(
            arguments(plan(history).only_call()),
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 2,
                   "startsAt": "2026-11-30T20:30:00+07:00"})
        );
    }

    #[test]
    fn without_an_unfinished_booking_a_number_is_just_a_greeting() {
        let turn = plan(vec![user("4 người")]);
        assert!(turn.calls.is_empty());
        assert!(turn.text.starts_with("Xin chào!"), "{}", turn.text);
    }

    #[test]
    fn english_booking_with_everything_named() {
        let turn = plan(after_search(
            "Book a table for 2 at Cha Ca Thang Long tomorrow at 7pm",
        ));
        assert_eq!(
            arguments(turn.only_call()),
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 2,
                   "startsAt": "2026-11-30T19:00:00+07:00"})
        );
        assert_eq!(
            turn.text,
            "Let me prepare a booking request for Chả Cá Thăng Long…"
        );
    }

    #[test]
    fn english_booking_without_a_search_searches_then_books_the_first_result() {
        let mut history = vec![user("Book a table for 2 in Hanoi tomorrow at 7:30 pm")];
        let search = plan(history.clone());
        assert_eq!(search.only_call().name, SEARCH_RESTAURANTS);
        assert_eq!(
            arguments(search.only_call()),
            json!({"city": "Hà Nội", "partySize": 2, "date": "2026-11-30"})
        );
        history.push(search.assistant());
        history.push(tool_result(
            &search.only_call().id,
            SEARCH_RESTAURANTS,
            &hanoi_search(),
        ));
        let booking = plan(history.clone());
        assert!(booking
            .text
            .starts_with("I found 2 restaurant(s):\n- Bún Chả Hương Liên"));
        assert!(booking
            .text
            .ends_with("Let me prepare a booking request for Bún Chả Hương Liên…"));
        assert_eq!(booking.only_call().id, "call_2_0");
        assert_eq!(
            arguments(booking.only_call()),
            json!({"restaurantId": "hn-bun-cha-huong-lien", "partySize": 2,
                   "startsAt": "2026-11-30T19:30:00+07:00"})
        );
        assert_eq!(booking.finish, FinishReason::ToolCalls);

        // Once the booking was proposed, another search result does not book again.
        history.push(booking.assistant());
        history.push(tool_result(
            &booking.only_call().id,
            CREATE_BOOKING,
            &booking_ok("confirmed"),
        ));
        history.push(ModelMessage::Assistant {
            text: String::new(),
            calls: vec![ProposedCall {
                id: "call_4_0".into(),
                name: SEARCH_RESTAURANTS.into(),
                arguments: r#"{"city":"Hà Nội"}"#.into(),
            }],
        });
        history.push(tool_result("call_4_0", SEARCH_RESTAURANTS, &hanoi_search()));
        assert!(plan(history).calls.is_empty());
    }

    #[test]
    fn booking_times_in_vietnamese() {
        // "Tôi" (I) is not "tối" (evening): 7 giờ stays 07:00.
        let morning = plan(after_search(
            "Tôi muốn đặt bàn ở Chả Cá Thăng Long cho hai người lúc 7 giờ ngày 2026-12-24",
        ));
        assert_eq!(
            arguments(morning.only_call()),
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 2,
                   "startsAt": "2026-12-24T07:00:00+07:00"})
        );
        let evening = plan(after_search(
            "đặt bàn Bún Chả Hương Liên 7 giờ rưỡi tối nay, 3 khách",
        ));
        assert_eq!(
            arguments(evening.only_call()),
            json!({"restaurantId": "hn-bun-cha-huong-lien", "partySize": 3,
                   "startsAt": "2026-11-29T19:30:00+07:00"})
        );
    }

    #[test]
    fn booking_without_restaurant_or_city_asks_where() {
        let turn = plan(vec![user("đặt bàn cho 4 người tối mai")]);
        assert!(turn.calls.is_empty());
        assert!(turn.text.starts_with("Bạn muốn đặt bàn ở thành phố nào"));
    }

    #[test]
    fn a_confirmed_booking_reports_its_id_and_details() {
        let turn = reply_to(&booking_ok("confirmed"));
        assert_eq!(
            turn.text,
            "Đã đặt bàn thành công tại Chả Cá Thăng Long! Mã đặt bàn: BK-7Q2X. Thời gian: \
             30/11/2026 19:00, 4 người."
        );
        assert_eq!(turn.finish, FinishReason::Stop);
    }

    #[test]
    fn a_waitlisted_booking_is_not_called_booked() {
        let turn = reply_to(&booking_ok("waitlisted"));
        assert!(turn.text.contains("BK-7Q2X"), "{}", turn.text);
        assert!(turn.text.contains("danh sách chờ"), "{}", turn.text);
        assert!(turn.text.contains("bàn chưa được giữ"), "{}", turn.text);
        assert!(!turn.text.contains("Đã đặt"), "{}", turn.text);
        assert!(!turn.text.contains("thành công"), "{}", turn.text);
    }

    #[test]
    fn a_booking_without_a_clear_status_is_not_confirmed() {
        let turn = reply_to(&json!({"ok": true, "bookingId": "BK-1"}));
        assert!(turn.text.contains("không xác nhận được"), "{}", turn.text);
        assert!(!turn.text.contains("thành công"), "{}", turn.text);
    }

    #[test]
    fn a_declined_booking_claims_nothing_and_asks_what_to_change() {
        let turn = reply_to(&json!({"ok": false, "error": {
            "code": "DECLINED", "message": "The person declined.", "retryable": false}}));
        assert_eq!(
            turn.text,
            "Bạn đã từ chối nên chưa có bàn nào được đặt. Bạn muốn thay đổi gì: nhà hàng, ngày \
             giờ hay số người?"
        );
        assert!(turn.calls.is_empty());
    }

    #[test]
    fn other_booking_errors_quote_the_message_and_do_not_retry() {
        let turn = reply_to(&validation_error(
            CREATE_BOOKING,
            r#"{"restaurantId":" ","partySize":2,"startsAt":"2026-11-30T19:00:00+07:00"}"#,
        ));
        assert_eq!(turn.text, "Chưa có bàn nào được đặt: Chưa điền nhà hàng.");
        let turn = reply_to(&validation_error(
            CREATE_BOOKING,
            r#"{"restaurantId":"a","partySize":2,"startsAt":"2026-11-01T19:00:00+07:00"}"#,
        ));
        assert!(
            turn.text.contains("ngày nào, lúc mấy giờ?"),
            "{}",
            turn.text
        );
        let turn = reply_to(&json!({"ok": false, "error": {
            "code": "UPSTREAM_TIMEOUT", "message": "The booking service timed out.",
            "retryable": true}}));
        assert_eq!(
            turn.text,
            "Xin lỗi, tôi không đặt được bàn: Dịch vụ cần dùng trả lời quá chậm. Chưa có bàn nào \
             được đặt."
        );
        assert!(turn.calls.is_empty());
    }

    #[test]
    fn lenient_reading_of_earlier_arguments() {
        let broken = BookingArgs::lenient(
            r#"{"restaurantId": "hn-x", "startsAt": "2026-12-24T19:00:00+07:00", "partySize": }"#,
        );
        assert_eq!(broken.restaurant_id.as_deref(), Some("hn-x"));
        assert_eq!(
            broken.starts_at.map(|at| rfc3339(&at)).as_deref(),
            Some("2026-12-24T19:00:00+07:00")
        );
        let typed = BookingArgs::lenient(BAD_ARGS_ARGUMENTS);
        assert_eq!(typed.restaurant_id.as_deref(), Some("hn-cha-ca-thang-long"));
        assert_eq!((typed.party_size, typed.starts_at), (None, None));
        assert_eq!(BookingArgs::lenient("💥"), BookingArgs::default());
    }

    #[test]
    fn a_restaurant_named_in_a_new_conversation_is_searched_for_then_booked() {
        let text = "Đặt bàn ở Chả Cá Thăng Long tối mai lúc 19:00 cho 2 người";
        let search = plan(vec![user(text)]);
        assert_eq!(
            arguments(search.only_call()),
            json!({"city": "Hà Nội", "cuisine": "chả cá", "partySize": 2,
                   "date": "2026-11-30"})
        );
        assert_eq!(search.text, "Để tôi tìm Chả Cá Thăng Long ở Hà Nội trước…");
        let history = vec![
            user(text),
            search.assistant(),
            tool_result("call_1_0", SEARCH_RESTAURANTS, &hanoi_search()),
        ];
        let booking = plan(history);
        assert_eq!(
            arguments(booking.only_call()),
            json!({"restaurantId": "hn-cha-ca-thang-long", "partySize": 2,
                   "startsAt": "2026-11-30T19:00:00+07:00"})
        );
    }

    #[test]
    fn a_named_restaurant_missing_from_the_results_is_not_swapped_for_another() {
        let text = "Book Chả Cá Lã Vọng for 2 tomorrow at 7pm";
        let search = plan(vec![user(text)]);
        let history = vec![
            user(text),
            search.assistant(),
            // Full that evening: only other places came back.
            tool_result("call_1_0", SEARCH_RESTAURANTS, &hanoi_search()),
        ];
        let reply = plan(history);
        assert!(reply.calls.is_empty(), "{reply:?}");
        assert!(
            reply.text.ends_with(
                "Chả Cá Lã Vọng is not among the results (it may be full then), so \
                            nothing is booked. Would you like another place or time?"
            ),
            "{}",
            reply.text
        );
    }

    #[test]
    fn words_inside_a_restaurant_name_are_not_details() {
        // "Ông Tám" is not eight people, "Hồng Mai" not tomorrow, "Bà Mua" not buying.
        for (text, party, date) in [
            ("Đặt bàn Lẩu Bò Ông Tám lúc 19h", None, "2026-11-29"),
            (
                "Đặt bàn Bánh Khoái Hồng Mai lúc 19h cho 2 người",
                Some(2),
                "2026-11-29",
            ),
            ("Book Mì Quảng Bà Mua at 7am for 3", Some(3), "2026-11-30"),
        ] {
            let turn = plan(vec![user(text)]);
            let args = arguments(turn.only_call());
            assert_eq!(args["partySize"], json!(party), "{text}");
            assert_eq!(args["date"], json!(date), "{text}");
        }
    }
}

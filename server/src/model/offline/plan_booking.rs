//! The restaurant assistant's bookings: the createBooking call with exactly what the person
//! said, follow-ups that complete it, and what the result means.

use super::catalogue::{named_in, KnownRestaurant};
use super::plan_search::{name_match, Restaurant};
use super::planner::{join_names, quoted_field, text_field, with_asked_request, Outcome, Planner};
use super::read::{number, Lang, Utterance};
use super::read_request::{Intent, Request};
use super::read_restaurant::{PARTY_GROWS, PARTY_SHRINKS};
use super::read_result::plural;
use super::read_when::{local, next_occurrence, rfc3339};
use super::reply::{Call, Reply};
use super::{CREATE_BOOKING, SEARCH_RESTAURANTS};
use crate::model::ModelMessage;
use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime};
use serde_json::{Map, Value};
use shared::tools::{ErrorCode, Rule, ToolError, ToolName};

/// createBooking arguments as far as they are known; absent fields are left out of the call.
#[derive(Debug, Clone, Default, PartialEq)]
struct BookingArgs {
    restaurant_id: Option<String>,
    party_size: Option<u16>,
    starts_at: Option<DateTime<FixedOffset>>,
}

/// What a booking request that names neither a place nor a time is asked once its search
/// found several places: the person chooses, the model does not pick one for them. Neither
/// text holds "mấy giờ" or "what date and time", which mark a createBooking call as
/// unfinished ([`Planner::pending_booking`]); the answer is read by
/// [`Planner::place_follow_up`].
const WHICH_PLACE_VI: &str =
    "Bạn muốn đặt ở nhà hàng nào trong danh sách (ví dụ “quán thứ 2”), vào giờ nào?";
const WHICH_PLACE_EN: &str =
    "Which of these restaurants would you like (say “the second one”), and at what time?";

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
                    .and_then(|n| u16::try_from(n).ok())
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

    /// What `details` say about a booking at a restaurant of the latest search, with what
    /// was said to that search and not repeated: "Italian in Saigon for 6 on Friday
    /// night", then "book the first one at 8pm", is a table for 6 on Friday at 8pm, not a
    /// table tonight for a number of people to ask again.
    fn booking_details_after_search(&self, details: &Utterance) -> BookingArgs {
        let mut args = self.booking_details(details);
        let Some(filters) = self.search_filters() else {
            return args;
        };
        if args.party_size.is_none() {
            args.party_size = filters
                .get("partySize")
                .and_then(Value::as_u64)
                .and_then(|n| u16::try_from(n).ok())
                .filter(|n| *n > 0);
        }
        // Only a time was said: it is on the day searched, unless that day is over.
        let searched_day = self.searched_day(&filters);
        if let (None, Some(day), Some(at)) =
            (details.date(self.today()), searched_day, args.starts_at)
        {
            args.starts_at = local(day, at.time()).or(args.starts_at);
        }
        args
    }

    /// The latest search's arguments.
    fn search_filters(&self) -> Option<Map<String, Value>> {
        let call = self
            .proposed_calls()
            .rev()
            .find(|call| call.name == SEARCH_RESTAURANTS)?;
        match serde_json::from_str::<Value>(&call.arguments) {
            Ok(Value::Object(filters)) => Some(filters),
            _ => None,
        }
    }

    /// The day a search was for, unless that day is over.
    fn searched_day(&self, filters: &Map<String, Value>) -> Option<NaiveDate> {
        filters
            .get("date")
            .and_then(Value::as_str)
            .and_then(|day| day.parse::<NaiveDate>().ok())
            .filter(|day| *day >= self.today())
    }

    /// When a booking is for: on `date`, else on the day `asked` (the request being
    /// answered) said, unless that day is over; at `time`, its next occurrence when no day
    /// is known.
    fn starts_at_of(
        &self,
        date: Option<NaiveDate>,
        time: Option<NaiveTime>,
        asked: Option<&Utterance>,
    ) -> Option<DateTime<FixedOffset>> {
        let date = date.or_else(|| {
            let day = asked.and_then(|asked| asked.date(self.today()));
            day.filter(|day| *day >= self.today())
        });
        match (date, time) {
            (Some(date), Some(time)) => local(date, time),
            (None, Some(time)) => next_occurrence(self.now, time),
            _ => None,
        }
    }

    fn which_place(&self) -> String {
        self.lang.pick(WHICH_PLACE_VI, WHICH_PLACE_EN).to_owned()
    }

    /// An answer to [`WHICH_PLACE_VI`]: a place of the latest list (by its rank or its
    /// name), a time, or both, with no verb: "quán thứ 2 lúc 7 giờ", "Chả Cá Thăng Long",
    /// "the second one at 7:30", "19h". The day and the part of the day first asked for
    /// still hold ("tối mai", then "7 giờ" is 19:00 tomorrow). A time alone takes the first
    /// place free then, as a booking with a time and no place does. `None` when the message
    /// answers neither (it is read as a request of its own).
    pub(super) fn place_follow_up(&self) -> Option<Reply> {
        let last_reply = self.last_assistant_text()?;
        if !last_reply.contains(WHICH_PLACE_VI) && !last_reply.contains(WHICH_PLACE_EN) {
            return None;
        }
        let list = self.search_results().pop()?;
        let request = self.whole_request(Intent::Book);
        let said = &request.details;
        let by_name = name_match(&request.said, list.iter());
        let reference = said.restaurant_reference();
        let picked = by_name.or_else(|| reference.and_then(|reference| reference.pick(&list)));
        if picked.is_none() && reference.is_some() {
            // A rank past the list: book() says how many places it has.
            return Some(self.book(&request));
        }
        let asked = self.request_before_call(SEARCH_RESTAURANTS);
        let part = asked.as_ref().and_then(Utterance::day_part);
        // A time said with the request still holds when only the place was asked for
        // (the place named was not one we know).
        let time = said
            .time_in(part)
            .or_else(|| asked.as_ref().and_then(Utterance::time));
        let date = said.date(self.today()).or_else(|| {
            let filters = self.search_filters()?;
            self.searched_day(&filters)
        });
        let starts_at = self.starts_at_of(date, time, asked.as_ref());
        let restaurant = match (picked, starts_at) {
            (Some(restaurant), _) => restaurant,
            (None, Some(at)) => list
                .iter()
                .find(|r| r.slots.contains(&at.time()))
                .or_else(|| list.first())?,
            (None, None) => return None,
        };
        let party_size = self.booking_details_after_search(said).party_size;
        Some(self.booking_call(&BookingArgs {
            restaurant_id: Some(restaurant.id.clone()),
            party_size,
            starts_at,
        }))
    }

    pub(super) fn book(&self, request: &Request) -> Reply {
        // A day that is over is said so, not searched: an empty search would read as
        // "nothing free", and a booking as today's table.
        if let Some(day) = request.details.date(self.today()) {
            if day < self.today() {
                let asked = self.day_label(day);
                return Reply::text(match self.lang {
                    Lang::Vi => format!(
                        "{asked} đã qua, nên tôi không đặt bàn cho ngày đó. Bạn muốn đặt vào \
                         ngày nào?"
                    ),
                    Lang::En => format!(
                        "{asked} has passed, so I can't book a table for it. Which day would \
                         you like?"
                    ),
                });
            }
        }
        let searches = self.search_results();
        let seen = searches.iter().rev().flatten();
        if let Some(restaurant) = name_match(&request.said, seen) {
            let args = BookingArgs {
                restaurant_id: Some(restaurant.id.clone()),
                ..self.booking_details_after_search(&request.details)
            };
            return self.booking_call(&args);
        }
        // "the second one": a place of the latest list by its rank, not the list's first.
        if let (Some(reference), Some(list)) =
            (request.details.restaurant_reference(), searches.last())
        {
            let Some(restaurant) = reference.pick(list) else {
                let count = list.len();
                return Reply::text(match self.lang {
                    Lang::Vi => format!(
                        "Lần tìm vừa rồi chỉ có {count} nhà hàng, nên tôi chưa đặt bàn. Bạn \
                         muốn đặt ở nhà hàng nào?"
                    ),
                    Lang::En => format!(
                        "The last search found only {count} {}, so nothing is booked. Which \
                         one would you like?",
                        plural(count, "restaurant", "restaurants")
                    ),
                });
            };
            let args = BookingArgs {
                restaurant_id: Some(restaurant.id.clone()),
                ..self.booking_details_after_search(&request.details)
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
                    ..self.booking_details_after_search(&request.details)
                };
                // No place and no time to choose one by: the person chooses.
                if args.starts_at.is_none() && searches.last().is_some_and(|list| list.len() > 1) {
                    return Reply::text(self.which_place());
                }
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
            // "2 more", "add one": a count with no unit, beside the word that changes it.
            details.party_size = said.party_change();
        }
        // "thêm 1 người nữa", "2 more people": the party grows (or shrinks) by that many.
        if let (Some(by), Some(base)) = (details.party_size, base.party_size) {
            if said.has(PARTY_GROWS) {
                details.party_size = base.checked_add(by);
            } else if said.has(PARTY_SHRINKS) {
                details.party_size = base.checked_sub(by).filter(|n| *n > 0);
            }
        }
        if details.party_size.is_none() {
            // A bare "4" answers "how many people?".
            if let [only] = said.tokens.as_slice() {
                details.party_size = number(&only.lower).map(u16::from);
            }
        }
        if !details.supplies_anything() && said.date(self.today()).is_none() {
            return None;
        }
        // What the request itself said about when, if the call left the time out: its day
        // and its part of the day still hold.
        let asked = self.booking_request();
        let part = asked.as_ref().and_then(Utterance::day_part);
        let time = said.time_in(part).or(base.starts_at.map(|at| at.time()));
        let date = said
            .date(self.today())
            .or(base.starts_at.map(|at| at.date_naive()));
        let starts_at = self.starts_at_of(date, time, asked.as_ref());
        Some(BookingArgs {
            restaurant_id: base.restaurant_id,
            party_size: details.party_size.or(base.party_size),
            starts_at,
        })
    }

    /// The person's message that led to the latest createBooking call: the last one before
    /// it.
    fn booking_request(&self) -> Option<Utterance> {
        self.request_before_call(CREATE_BOOKING)
    }

    /// The person's message that led to the latest call of `tool`: the last one before it
    /// (with the request it answered, if it only named a city).
    fn request_before_call(&self, tool: &str) -> Option<Utterance> {
        let called_at = self.messages.iter().rposition(|message| {
            matches!(message, ModelMessage::Assistant { calls, .. }
                if calls.iter().any(|call| call.name == tool))
        })?;
        let asked_at = self.messages[..called_at]
            .iter()
            .rposition(|message| matches!(message, ModelMessage::User { .. }))?;
        let asked = &self.messages[..=asked_at];
        if let Some((text, _)) = with_asked_request(asked, self.offered) {
            return Some(Utterance::new(&text));
        }
        match &self.messages[asked_at] {
            ModelMessage::User { text } => Some(Utterance::new(text)),
            _ => None,
        }
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
    /// failed validation, the last reply asked for the party size or time, or the reply
    /// just before this message proposed it and the person declined it or wrote this
    /// message instead of answering its form ("đổi sang 20h nhé", "make it 4 people").
    fn pending_booking(&self) -> Option<BookingArgs> {
        let call = self
            .proposed_calls()
            .rev()
            .find(|c| c.name == CREATE_BOOKING)?;
        let outcome = self.result_of(&call.id);
        let failed_validation = matches!(
            &outcome,
            Some(Outcome::Failed(error)) if error.code == ErrorCode::ValidationError
        );
        let not_decided = matches!(
            &outcome,
            Some(Outcome::Failed(error))
                if matches!(error.code, ErrorCode::MovedOn | ErrorCode::Declined)
        );
        let superseded = not_decided && self.called_since_last_message(&call.id);
        let asked = self
            .last_assistant_text()
            .map(str::to_lowercase)
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
        (failed_validation || asked || superseded).then(|| BookingArgs::lenient(&call.arguments))
    }

    /// Whether call `id` was made in the replies to the person's previous message: nothing
    /// else was said since it was proposed.
    fn called_since_last_message(&self, id: &str) -> bool {
        let mut users = self
            .messages
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, message)| matches!(message, ModelMessage::User { .. }))
            .map(|(at, _)| at);
        let (Some(_latest), Some(previous)) = (users.next(), users.next()) else {
            return false;
        };
        self.messages[previous..].iter().any(|message| {
            matches!(message, ModelMessage::Assistant { calls, .. }
                if calls.iter().any(|call| call.id == id))
        })
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
            // No place named: the first with a table free at the time asked for, when the
            // search gave free times (a place closed by then would only be refused).
            None if named.is_empty() => {
                // A place we do not know ("Nhà hàng ABC"): another is not proposed in
                // its stead; the person picks from the list, or names another.
                if let Some(name) = request.said.place_name() {
                    let text = match self.lang {
                        Lang::Vi => format!(
                            "Tôi không tìm thấy nhà hàng \"{name}\" trong danh mục, nên chưa \
                             đặt bàn. {WHICH_PLACE_VI}"
                        ),
                        Lang::En => format!(
                            "I couldn't find a restaurant called \"{name}\", so nothing is \
                             booked. {WHICH_PLACE_EN}"
                        ),
                    };
                    return Some((text, None));
                }
                let at = self
                    .booking_details(&request.details)
                    .starts_at
                    .map(|at| at.time());
                // No time to choose a place by: which of several is the person's choice.
                if at.is_none() && restaurants.len() > 1 {
                    return Some((self.which_place(), None));
                }
                at.and_then(|at| restaurants.iter().find(|r| r.slots.contains(&at)))
                    .or_else(|| restaurants.first())?
            }
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
        // A time left out is asked for, not called invalid; a day already said is not
        // asked again ("tối mai", then only "lúc mấy giờ?").
        let time_missing = error
            .issues
            .iter()
            .any(|issue| issue.path == "startsAt" && issue.rule == Rule::Missing);
        if code == "VALIDATION_ERROR" && time_missing && !party {
            let asked = self.booking_request();
            if let Some(written) = asked.as_ref().and_then(|asked| asked.impossible_time()) {
                return match self.lang {
                    Lang::Vi => format!(
                        "Tôi chưa đặt bàn vì \"{written}\" không phải là một giờ trong ngày \
                         (giờ từ 0:00 đến 23:59). Bạn muốn đặt lúc mấy giờ?"
                    ),
                    Lang::En => format!(
                        "I haven't made the reservation yet: \"{written}\" isn't a time of day \
                         (times go from 0:00 to 23:59). What time would you like the table for?"
                    ),
                };
            }
            let day_known = asked.is_some_and(|asked| asked.date(self.today()).is_some());
            return match (self.lang, day_known) {
                (Lang::Vi, true) => {
                    "Tôi chưa đặt bàn vì còn thiếu giờ. Bạn muốn đặt lúc mấy giờ?".to_owned()
                }
                (Lang::Vi, false) => "Tôi chưa đặt bàn vì còn thiếu ngày giờ. Bạn muốn đặt vào \
                                      ngày nào, lúc mấy giờ?"
                    .to_owned(),
                (Lang::En, true) => "I haven't made the reservation yet: what time would you \
                                     like the table for?"
                    .to_owned(),
                (Lang::En, false) => "I haven't made the reservation yet: what date and time \
                                      would you like the table for?"
                    .to_owned(),
            };
        }
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
mod tests;

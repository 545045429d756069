//! Deciding what to say: which assistant's planner answers the latest message, and how tool
//! results are read back. What each assistant does is in the `plan_*` modules.

use super::plan_requests::{conversation_language, restaurant_spans};
use super::plan_search::restaurants_of;
use super::read::{Lang, Utterance};
use super::read_request::{requests, Intent, Request};
pub(super) use super::read_result::{
    join_names, outcome, plural, quoted_field, text_field, trim_message, Outcome,
};
use super::reply::Reply;
use super::{
    Offered, BAD_ARGS_ARGUMENTS, BAD_JSON_ARGUMENTS, BAD_WEIGHT_ARGUMENTS, CANCEL_BOOKING,
    CREATE_BOOKING, CREATE_CHECKOUT_SESSION, FAILING_CITY, GET_WEATHER, LIST_BOOKINGS,
    PREPARE_CHECKOUT, SEARCH_RESTAURANTS, SHIPPING_QUOTE, SUGGEST_GIFTS, TRIGGER_BAD_ARGS,
    TRIGGER_BAD_JSON, TRIGGER_BAD_WEIGHT, TRIGGER_LOOP, TRIGGER_TOOL_ERROR, TRIGGER_UNKNOWN_TOOL,
    TRIGGER_ZERO_WEIGHT, UNKNOWN_TOOL_NAME, ZERO_WEIGHT_ARGUMENTS,
};
use crate::model::{ModelMessage, ProposedCall};
use crate::tools::city::CITIES;
use chrono::{DateTime, FixedOffset, NaiveDate};
use serde_json::Value;
use shared::explain;
use shared::tools::{ErrorCode, ToolError, ToolName};

/// The code as the wire writes it (`VALIDATION_ERROR`).
pub(super) fn code_name(code: ErrorCode) -> String {
    serde_json::to_value(code)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The request a latest message only completes, and the cities it is now for:
/// - when the reply before it asked which city ("Bạn muốn đặt bàn ở thành phố nào…?",
///   "Which city would you like the weather for?"), the person's message it asked about
///   with the answer after it, so "đặt bàn cho 4 người tối mai", then "Hà Nội", is one
///   request for a table in Hà Nội;
/// - when it asks "what about" another city ("còn Huế thì sao?", "what about Hue?"), the
///   person's previous request (itself completed the same way) again, for that city.
///
/// `None` when the latest message asks something itself or names no city.
pub(super) fn with_asked_request(
    messages: &[ModelMessage],
    offered: Offered,
) -> Option<(String, Vec<&'static str>)> {
    if !offered.restaurant() {
        return None;
    }
    let answered_at = messages
        .iter()
        .rposition(|message| matches!(message, ModelMessage::User { .. }))?;
    let Some(ModelMessage::User { text: latest }) = messages.get(answered_at) else {
        return None;
    };
    // The cheap tests first: most messages answer no question and ask about no city.
    let question = match messages.get(answered_at.checked_sub(1)?)? {
        ModelMessage::Assistant { text, calls } if calls.is_empty() => text.as_str(),
        _ => return None,
    };
    // Our own questions, as written: no lowercase copy of every reply.
    let which_city = ["thành phố nào", "Which city", "which city"]
        .iter()
        .any(|asked| question.contains(asked));
    let lower = latest.to_lowercase();
    let what_about = [
        "thì sao",
        "thi sao",
        "what about",
        "how about",
        "còn ",
        "and ",
    ]
    .iter()
    .any(|marker| lower.contains(marker));
    if !which_city && !what_about {
        return None;
    }
    let answer = Utterance::new(latest);
    let details = answer.masked(&restaurant_spans(&answer, messages));
    let cities = answer.cities();
    if cities.is_empty() || !requests(&answer, &details, offered).is_empty() {
        return None;
    }
    let asked_at = messages[..answered_at]
        .iter()
        .rposition(|message| matches!(message, ModelMessage::User { .. }))?;
    let Some(ModelMessage::User { text: asked }) = messages.get(asked_at) else {
        return None;
    };
    if which_city {
        return Some((format!("{asked} {latest}"), cities));
    }
    // "What about" needs a forecast or a search to repeat: the previous message's own, or
    // the one it completed ("thời tiết Đà Nẵng?", "còn Huế thì sao?", "còn Hà Nội?"). A
    // booking is not moved to another city this way: it names its place.
    let earlier = &messages[..=asked_at];
    let asked =
        with_asked_request(earlier, offered).map_or_else(|| asked.clone(), |(text, _)| text);
    let said = Utterance::new(&asked);
    let details = said.masked(&restaurant_spans(&said, earlier));
    let repeated = requests(&said, &details, offered);
    if repeated.is_empty()
        || repeated
            .iter()
            .any(|request| request.intent == Intent::Book)
    {
        return None;
    }
    Some((format!("{asked} {latest}"), cities))
}

pub(super) struct Planner<'a> {
    pub(super) messages: &'a [ModelMessage],
    pub(super) now: DateTime<FixedOffset>,
    /// The latest thing the person wrote; every decision is about it.
    pub(super) user: Utterance,
    /// The same words with restaurant names masked, for numbers, days and times.
    pub(super) details: Utterance,
    /// The language of the reply: the person's (see `plan_requests::conversation_language`).
    pub(super) lang: Lang,
    /// What the latest message asks the restaurant assistant, one request per task.
    pub(super) requests: Vec<Request>,
    /// The tools this request offers; no other tool is ever called.
    pub(super) offered: Offered,
}

impl<'a> Planner<'a> {
    pub(super) fn new(
        messages: &'a [ModelMessage],
        now: DateTime<FixedOffset>,
        offered: Offered,
    ) -> Self {
        let latest = messages
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::User { text } => Some(text.as_str()),
                _ => None,
            })
            .unwrap_or_default();
        let mut user = Utterance::new(latest);
        // "Hà Nội" after "which city?" is the request that was asked about, in that city;
        // "còn Huế thì sao?" the last request again, in Huế.
        let continued = with_asked_request(messages, offered);
        if let Some((text, _)) = &continued {
            user = Utterance::new(text);
        }
        let details = user.masked(&restaurant_spans(&user, messages));
        let lang = conversation_language(messages, &user, &details);
        let mut requests = if offered.restaurant() {
            requests(&user, &details, offered)
        } else {
            Vec::new()
        };
        if let Some((_, cities)) = continued {
            for request in &mut requests {
                request.cities.clone_from(&cities);
            }
        }
        Self {
            messages,
            now,
            user,
            details,
            lang,
            offered,
            requests,
        }
    }

    pub(super) fn offers(&self, tool: ToolName) -> bool {
        self.offered.has(tool)
    }

    pub(super) fn reply(&self) -> Reply {
        match self.messages.last() {
            Some(ModelMessage::User { .. }) => self.answer_user(),
            Some(ModelMessage::ToolResult { .. }) => self.answer_results(),
            _ => self.help(),
        }
    }

    pub(super) fn today(&self) -> NaiveDate {
        self.now.date_naive()
    }

    fn answer_user(&self) -> Reply {
        let raw = self.user.raw.as_str();
        if raw.contains(TRIGGER_UNKNOWN_TOOL) {
            return Reply::call(
                self.lang.pick("Để tôi thử…", "Let me try that…"),
                UNKNOWN_TOOL_NAME,
                "{}",
            );
        }
        if raw.contains(TRIGGER_BAD_JSON) && self.offers(ToolName::CreateBooking) {
            return Reply::call(
                self.lang.pick("Để tôi đặt bàn…", "Let me book that…"),
                CREATE_BOOKING,
                BAD_JSON_ARGUMENTS,
            );
        }
        if raw.contains(TRIGGER_TOOL_ERROR) && self.offers(ToolName::GetWeather) {
            let arguments = serde_json::json!({ "city": FAILING_CITY }).to_string();
            return Reply::call(
                self.lang
                    .pick("Để tôi xem thời tiết…", "Let me check the weather…"),
                GET_WEATHER,
                arguments,
            );
        }
        if raw.contains(TRIGGER_LOOP) && self.offers(ToolName::GetWeather) {
            return self.loop_call();
        }
        if raw.contains(TRIGGER_BAD_ARGS) && self.offers(ToolName::CreateBooking) {
            return self.bad_args_call();
        }
        if self.offers(ToolName::ShippingQuote) {
            if raw.contains(TRIGGER_BAD_WEIGHT) {
                return self.quote_call(BAD_WEIGHT_ARGUMENTS.to_owned());
            }
            if raw.contains(TRIGGER_ZERO_WEIGHT) {
                return self.quote_call(ZERO_WEIGHT_ARGUMENTS.to_owned());
            }
        }
        if let Some(reply) = self.my_bookings() {
            return reply;
        }
        if let Some(reply) = self.gifts() {
            return reply;
        }
        if let Some(reply) = self.shipping() {
            return reply;
        }
        // Before the requests: "quán nào mở khuya?" reads as a search with no city.
        if let Some(reply) = self.opening_hours() {
            return reply;
        }
        if self.offers(ToolName::CreateBooking) {
            if let Some(reply) = self.place_follow_up() {
                return reply;
            }
        }
        if let Some(reply) = self.answer_requests() {
            return reply;
        }
        if self.offers(ToolName::CreateBooking) {
            if let Some(reply) = self.follow_up() {
                return reply;
            }
        }
        self.help()
    }

    fn loop_call(&self) -> Reply {
        let arguments = serde_json::json!({ "city": "Hà Nội" }).to_string();
        Reply::call(
            self.lang.pick(
                "Để tôi xem thời tiết ở Hà Nội…",
                "Let me check the weather in Hà Nội…",
            ),
            GET_WEATHER,
            arguments,
        )
    }

    fn bad_args_call(&self) -> Reply {
        Reply::call(
            self.lang.pick("Để tôi đặt bàn…", "Let me book that…"),
            CREATE_BOOKING,
            BAD_ARGS_ARGUMENTS,
        )
    }

    pub(super) fn proposed_calls(&self) -> impl DoubleEndedIterator<Item = &'a ProposedCall> {
        self.messages
            .iter()
            .filter_map(|message| match message {
                ModelMessage::Assistant { calls, .. } => Some(calls.iter()),
                _ => None,
            })
            .flatten()
    }

    pub(super) fn result_of(&self, call_id: &str) -> Option<Outcome> {
        self.messages
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::ToolResult {
                    call_id: id,
                    content,
                    is_error,
                    ..
                } if id == call_id => Some(outcome(content, *is_error)),
                _ => None,
            })
    }

    fn help(&self) -> Reply {
        // Thanks that ask nothing more get an answer, not the list of what we can do.
        if self.user.has("cảm ơn|cám ơn")
            || self.user.has_folded("cam on")
            || self.user.has_stem("thank")
        {
            return Reply::text(self.lang.pick(
                "Không có gì! Bạn cần gì thêm cứ nói nhé.",
                "You're welcome! Tell me if there is anything else.",
            ));
        }
        if self.offered.restaurant() {
            let cities = join_names(&CITIES, self.lang);
            return Reply::text(match self.lang {
                Lang::Vi => format!(
                    "Xin chào! Tôi có thể giúp bạn: xem thời tiết ở {cities}; tìm nhà hàng theo \
                     thành phố, món ăn và số người; đặt bàn (bạn xác nhận trước khi tôi đặt); \
                     xem và huỷ các đặt chỗ của bạn. Bạn muốn bắt đầu từ đâu?"
                ),
                Lang::En => format!(
                    "Hi! I can help you check the weather in {cities}; find restaurants by city, \
                     cuisine and party size; book a table (you confirm before anything is \
                     booked); and list or cancel your bookings. What would you like to do?"
                ),
            });
        }
        if self.offered.gifts() {
            return Reply::text(self.lang.pick(
                "Xin chào! Tôi gợi ý quà tặng từ danh mục và có thể tạo thanh toán giả lập \
                 (không trừ tiền thật). Món quà dành cho ai? Người đó bao nhiêu tuổi, thích gì, \
                 và ngân sách của bạn khoảng bao nhiêu?",
                "Hi! I suggest gifts from our catalogue and can create a simulated checkout (no \
                 real money is charged). Who is the gift for? How old are they, what do they \
                 like, and what is your budget?",
            ));
        }
        if self.offered.shipping() {
            return Reply::text(self.lang.pick(
                "Xin chào! Tôi báo giá phí giao hàng theo công thức giả lập (đơn vị DEMO, không \
                 phải tiền thật). Bạn gửi nội thành hay liên tỉnh, và gói hàng nặng bao nhiêu kg?",
                "Hi! I quote shipping with a made-up formula (in DEMO, not real money). Is the \
                 parcel local or regional, and how many kilograms does it weigh?",
            ));
        }
        Reply::text(self.lang.pick(
            "Xin chào! Hiện tôi không có công cụ nào để dùng, nên chỉ trò chuyện được thôi.",
            "Hi! I have no tools to use right now, so I can only chat.",
        ))
    }

    fn answer_results(&self) -> Reply {
        if self.user.raw.contains(TRIGGER_LOOP) && self.offers(ToolName::GetWeather) {
            return self.loop_call();
        }
        if self.user.raw.contains(TRIGGER_BAD_ARGS) && self.offers(ToolName::CreateBooking) {
            return self.bad_args_call();
        }
        let start = self
            .messages
            .iter()
            .rposition(|message| !matches!(message, ModelMessage::ToolResult { .. }))
            .map_or(0, |index| index + 1);
        let calls: &[ProposedCall] = match start.checked_sub(1).map(|i| &self.messages[i]) {
            Some(ModelMessage::Assistant { calls, .. }) => calls,
            _ => &[],
        };
        let mut results: Vec<(&str, &str, &str, bool)> = self.messages[start..]
            .iter()
            .filter_map(|message| match message {
                ModelMessage::ToolResult {
                    call_id,
                    name,
                    content,
                    is_error,
                } => Some((call_id.as_str(), name.as_str(), content.as_str(), *is_error)),
                _ => None,
            })
            .collect();
        // Answer in the order the calls were made, whatever order their results arrived in.
        results.sort_by_key(|(id, ..)| {
            calls
                .iter()
                .position(|call| call.id == *id)
                .unwrap_or(usize::MAX)
        });

        let mut paragraphs = Vec::new();
        let mut follow_up_calls = Vec::new();
        for (call_id, name, content, is_error) in results {
            let arguments = calls
                .iter()
                .find(|call| call.id == call_id)
                .map_or("", |call| call.arguments.as_str());
            match outcome(content, is_error) {
                Outcome::Ok(value) => match name {
                    GET_WEATHER => paragraphs.push(self.weather_report(&value, arguments)),
                    SEARCH_RESTAURANTS => {
                        let restaurants = restaurants_of(&value);
                        // A search made to answer a question answers that question.
                        let answer = if self.asks_hours() {
                            self.hours_answer(&restaurants)
                        } else {
                            self.availability_answer(&restaurants)
                        };
                        paragraphs.push(
                            answer.unwrap_or_else(|| self.search_report(&value, &restaurants)),
                        );
                        if follow_up_calls.is_empty() {
                            if let Some((line, call)) = self.book_from_search(&restaurants) {
                                paragraphs.push(line);
                                follow_up_calls.extend(call);
                            }
                        }
                    }
                    CREATE_BOOKING => paragraphs.push(self.booking_report(&value)),
                    LIST_BOOKINGS => {
                        paragraphs.push(self.bookings_report(&value));
                        if follow_up_calls.is_empty() {
                            follow_up_calls.extend(self.cancel_the_only_booking(&value));
                        }
                    }
                    CANCEL_BOOKING => paragraphs.push(self.cancel_report(&value, arguments)),
                    SUGGEST_GIFTS => paragraphs.push(self.gifts_report(&value)),
                    PREPARE_CHECKOUT => {
                        let (line, call) = self.draft_report(&value);
                        paragraphs.push(line);
                        if let Some(call) = call {
                            if follow_up_calls.is_empty() {
                                follow_up_calls.push(call);
                            }
                        }
                    }
                    CREATE_CHECKOUT_SESSION => {
                        paragraphs.push(self.checkout_report(&value, arguments))
                    }
                    SHIPPING_QUOTE => paragraphs.push(self.quote_report(&value)),
                    other => paragraphs.push(match self.lang {
                        Lang::Vi => format!("Công cụ {other} đã chạy xong."),
                        Lang::En => format!("The tool {other} finished."),
                    }),
                },
                Outcome::Failed(error) => {
                    paragraphs.push(self.failure_report(name, &error, arguments));
                }
                Outcome::Unreadable => paragraphs.push(match self.lang {
                    Lang::Vi => format!("Xin lỗi, tôi không đọc được kết quả của {name}."),
                    Lang::En => format!("Sorry, I couldn't read the result of {name}."),
                }),
            }
        }
        if paragraphs.is_empty() {
            return self.help();
        }
        Reply {
            text: paragraphs.join("\n\n"),
            calls: follow_up_calls,
        }
    }

    fn failure_report(&self, name: &str, error: &ToolError, arguments: &str) -> String {
        // The person's sentence for the error, in their language; the English message is
        // the model's and is never quoted.
        let quoted = trim_message(&explain::reason(error, self.lang));
        let code = code_name(error.code);
        let code = code.as_str();
        if code == "UNKNOWN_TOOL" || ToolName::parse(name).is_none() {
            return match self.lang {
                Lang::Vi => format!(
                    "Xin lỗi, tôi đã gọi nhầm một công cụ không tồn tại ({name}): {quoted}."
                ),
                Lang::En => {
                    format!("Sorry, I tried to use a tool that doesn't exist ({name}): {quoted}.")
                }
            };
        }
        match name {
            CREATE_BOOKING => return self.booking_failure(code, error, &quoted),
            LIST_BOOKINGS => {
                return match self.lang {
                    Lang::Vi => {
                        format!("Xin lỗi, tôi không xem được các đặt chỗ của bạn: {quoted}.")
                    }
                    Lang::En => format!("Sorry, I couldn't list your bookings: {quoted}."),
                }
            }
            CANCEL_BOOKING => return self.cancel_failure(code, &quoted, arguments),
            SUGGEST_GIFTS => {
                return match self.lang {
                    Lang::Vi => format!("Xin lỗi, tôi không lấy được gợi ý quà: {quoted}."),
                    Lang::En => format!("Sorry, I couldn't get gift ideas: {quoted}."),
                }
            }
            PREPARE_CHECKOUT | CREATE_CHECKOUT_SESSION => {
                return self.checkout_failure(code, &quoted)
            }
            SHIPPING_QUOTE => return self.quote_failure(code, error, &quoted),
            _ => {}
        }
        if code == "DECLINED" {
            return self
                .lang
                .pick(
                    "Bạn đã từ chối nên tôi không thực hiện yêu cầu đó. Bạn muốn thay đổi gì?",
                    "You declined, so I didn't go ahead. What would you like to change?",
                )
                .to_owned();
        }
        if name == GET_WEATHER {
            let city = serde_json::from_str::<Value>(arguments)
                .ok()
                .and_then(|args| text_field(&args, "city").map(str::to_owned));
            return match (self.lang, city) {
                (Lang::Vi, Some(city)) => {
                    format!("Xin lỗi, tôi không lấy được dự báo thời tiết cho {city}: {quoted}.")
                }
                (Lang::Vi, None) => {
                    format!("Xin lỗi, tôi không lấy được dự báo thời tiết: {quoted}.")
                }
                (Lang::En, Some(city)) => {
                    format!("Sorry, I couldn't get the weather forecast for {city}: {quoted}.")
                }
                (Lang::En, None) => {
                    format!("Sorry, I couldn't get the weather forecast: {quoted}.")
                }
            };
        }
        match self.lang {
            Lang::Vi => format!("Xin lỗi, tôi không tìm được nhà hàng: {quoted}."),
            Lang::En => format!("Sorry, I couldn't search for restaurants: {quoted}."),
        }
    }

    pub(super) fn last_assistant_text(&self) -> Option<&str> {
        self.messages
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::Assistant { text, .. } => Some(text.as_str()),
                _ => None,
            })
    }

    /// The person's earlier messages (newest first, the latest left out) back to the last
    /// turn that called `tool`: what they said about the request that is still open.
    pub(super) fn open_request_messages(&self, tool: &str) -> Vec<Utterance> {
        let mut earlier = Vec::new();
        let mut seen_latest = false;
        for message in self.messages.iter().rev() {
            match message {
                ModelMessage::User { text } => {
                    if seen_latest {
                        earlier.push(Utterance::new(text));
                    }
                    seen_latest = true;
                }
                ModelMessage::Assistant { calls, .. } if calls.iter().any(|c| c.name == tool) => {
                    break;
                }
                _ => {}
            }
        }
        earlier
    }

    pub(super) fn called_since_user(&self, tool: &str) -> bool {
        self.messages
            .iter()
            .rev()
            .take_while(|message| !matches!(message, ModelMessage::User { .. }))
            .any(|message| match message {
                ModelMessage::Assistant { calls, .. } => calls.iter().any(|call| call.name == tool),
                _ => false,
            })
    }

    /// The value of the latest successful result of `tool`.
    pub(super) fn latest_ok(&self, tool: &str) -> Option<Value> {
        self.messages
            .iter()
            .rev()
            .find_map(|message| match message {
                ModelMessage::ToolResult {
                    name,
                    content,
                    is_error,
                    ..
                } if name == tool => match outcome(content, *is_error) {
                    Outcome::Ok(value) => Some(value),
                    _ => None,
                },
                _ => None,
            })
    }
}

#[cfg(test)]
mod tests;

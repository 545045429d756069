//! The offline model: a scripted, deterministic stand-in for an LLM, used when no API key is
//! configured (local development, end-to-end tests, demos without network).
//!
//! It reads the history the way a model would and proposes the same kinds of tool calls,
//! streamed in small pieces, so the whole agent loop (validation, approval, tool errors,
//! step limits) runs for real. It books with exactly what the person said: a missing party
//! size or time is left out of the call rather than asked for first, so the server's
//! validation path, and the "never claim a booking that failed" rule, get exercised.
//!
//! What it can do depends on the tools the request offers (a conversation's assistant
//! decides them), and it never calls a tool that is not offered (except for
//! [`TRIGGER_UNKNOWN_TOOL`], whose point is exactly that):
//! - restaurant (`getWeather`, `searchRestaurants`, `createBooking`, `listBookings`,
//!   `cancelBooking`): weather, search, booking, "my bookings", "huỷ đặt chỗ BK-…";
//! - gifts (`suggest_gifts`, `prepare_checkout`, `create_checkout_session`): gift ideas from
//!   who the gift is for, age, interests and budget; "mua món 1" prepares a draft, then
//!   commits it with the idempotency key `checkout-<draft_id>`;
//! - shipping (`shipping_quote`): a quote from a zone and a weight, the weight written into
//!   the argument text exactly as the person typed it ("2,5 kg" → `2.5`).
//!
//! It reads Vietnamese with or without diacritics and English: cities by any common name
//! (the lexicon of `tools::city`, shared with the tools), days relative to its clock in
//! Vietnam's time ("cuối tuần này", "thứ Sáu tới", "next Friday", "24/12"; the rules are in
//! `read_date`), times and party sizes in words ("7 rưỡi tối", "noon", "bốn người", "a
//! table for two"). A forecast covers the days asked about and the reply reports those
//! days. A restaurant named in a new conversation is searched for in its city first (an id
//! only ever comes from a search result). A message asking for two things ("weather there
//! this weekend, then a seafood place") gets both calls in one turn and one answer. Every
//! reply, questions back included, is in the language of the person's message, or of
//! their earlier messages when the latest ("4", "19:00") does not tell.
//!
//! After every tool result it answers in text and reports only what the result says: a
//! success only when the result is ok, "nothing happened" on an error or a decline.
//!
//! QA can force failure paths with these exact substrings in a message (each only when its
//! tool is offered):
//! - [`TRIGGER_UNKNOWN_TOOL`]: a call to `launchRocket`, a tool that does not exist.
//! - [`TRIGGER_BAD_JSON`]: a createBooking call whose argument text is not JSON.
//! - [`TRIGGER_TOOL_ERROR`]: getWeather for the city `#fail`, which the executor fails.
//! - [`TRIGGER_LOOP`]: getWeather for Hà Nội, again every turn, until the step limit.
//! - [`TRIGGER_BAD_ARGS`]: the same ill-typed createBooking call every turn, until the
//!   tool-error bound ends the run.
//! - [`TRIGGER_BAD_WEIGHT`]: a shipping_quote call whose weight is the string `"2"`.
//! - [`TRIGGER_ZERO_WEIGHT`]: a shipping_quote call whose weight is `0`.

mod catalogue;
mod lexicon;
#[cfg(test)]
mod phrasings;
mod plan_booking;
mod plan_gifts;
mod plan_my_bookings;
mod plan_requests;
mod plan_search;
mod plan_shipping;
mod plan_weather;
mod planner;
mod read;
mod read_date;
mod read_gift;
mod read_money;
mod read_parcel;
mod read_request;
mod read_restaurant;
mod read_result;
mod read_when;
mod reply;
#[cfg(test)]
mod testing;

use self::planner::Planner;
use crate::model::{ModelEvent, ModelMessage, ModelProvider, ModelRequest, ToolSpec, TurnStream};
use chrono::{DateTime, FixedOffset, Utc};
use shared::tools::ToolName;
use std::time::{Duration, SystemTime};

/// Makes the model call `launchRocket`, a tool the server does not have.
pub const TRIGGER_UNKNOWN_TOOL: &str = "#unknown-tool";

/// Makes the model send createBooking arguments that are not valid JSON.
pub const TRIGGER_BAD_JSON: &str = "#bad-json";

/// Makes the model ask for the weather in `#fail`, a city the weather executor fails on.
pub const TRIGGER_TOOL_ERROR: &str = "#tool-error";

/// Makes the model call getWeather every turn, so the server's step limit ends the run.
pub const TRIGGER_LOOP: &str = "#loop";

/// Makes the model repeat an ill-typed createBooking call every turn, so the server's bound
/// on failed tool calls ends the run.
pub const TRIGGER_BAD_ARGS: &str = "#bad-args";

/// Makes the model ask for a shipping quote with the weight as a string (`"2"`), which
/// validation rejects: nothing is coerced.
pub const TRIGGER_BAD_WEIGHT: &str = "#bad-weight";

/// Makes the model ask for a shipping quote for a parcel of `0` kg, which validation
/// rejects: there is no quote, and the reply must not state an amount.
pub const TRIGGER_ZERO_WEIGHT: &str = "#zero-weight";

/// The tool name `#unknown-tool` calls.
const UNKNOWN_TOOL_NAME: &str = "launchRocket";

const BAD_JSON_ARGUMENTS: &str = r#"{"restaurantId": "hn-cha-ca-thang-long", "partySize": }"#;

const BAD_ARGS_ARGUMENTS: &str =
    r#"{"restaurantId":"hn-cha-ca-thang-long","partySize":"bốn","startsAt":"tối mai"}"#;

const FAILING_CITY: &str = "#fail";

const BAD_WEIGHT_ARGUMENTS: &str = r#"{"zone":"local","weight_kg":"2"}"#;

const ZERO_WEIGHT_ARGUMENTS: &str = r#"{"zone":"local","weight_kg":0}"#;

const GET_WEATHER: &str = ToolName::GetWeather.as_str();

const SEARCH_RESTAURANTS: &str = ToolName::SearchRestaurants.as_str();

const CREATE_BOOKING: &str = ToolName::CreateBooking.as_str();

const LIST_BOOKINGS: &str = ToolName::ListBookings.as_str();

const CANCEL_BOOKING: &str = ToolName::CancelBooking.as_str();

const SUGGEST_GIFTS: &str = ToolName::SuggestGifts.as_str();

const PREPARE_CHECKOUT: &str = ToolName::PrepareCheckout.as_str();

const CREATE_CHECKOUT_SESSION: &str = ToolName::CreateCheckoutSession.as_str();

const SHIPPING_QUOTE: &str = ToolName::ShippingQuote.as_str();

/// All restaurants in the catalogue are in Vietnam, and it has one offset all year.
const VIETNAM: FixedOffset = match FixedOffset::east_opt(7 * 3600) {
    Some(offset) => offset,
    None => panic!("UTC+7 is a valid offset"),
};

/// A scripted model that needs no network: same input, same output.
#[derive(Debug, Clone)]
pub struct OfflineModel {
    token_delay: Duration,
    now: Option<DateTime<FixedOffset>>,
}

impl OfflineModel {
    /// A model that pauses `token_delay` before each streamed event, so the UI shows text
    /// arriving as it would from a real model. `Duration::ZERO` streams without pausing.
    pub fn new(token_delay: Duration) -> Self {
        Self {
            token_delay,
            now: None,
        }
    }

    /// Uses a fixed clock ("today", "tomorrow", "tonight") instead of the system time.
    pub fn with_now(mut self, now: DateTime<FixedOffset>) -> Self {
        self.now = Some(now);
        self
    }

    /// The whole turn the model streams for this history, as events.
    pub fn plan_turn(&self, request: &ModelRequest) -> Vec<ModelEvent> {
        let now = self
            .now
            .unwrap_or_else(|| DateTime::<Utc>::from(SystemTime::now()).fixed_offset())
            .with_timezone(&VIETNAM);
        let turn = request
            .messages
            .iter()
            .filter(|message| matches!(message, ModelMessage::Assistant { .. }))
            .count()
            + 1;
        Planner::new(&request.messages, now, Offered::new(&request.tools))
            .reply()
            .into_events(turn)
    }
}

impl ModelProvider for OfflineModel {
    fn name(&self) -> &'static str {
        "offline"
    }

    fn stream_turn(&self, request: ModelRequest) -> TurnStream {
        let events = self.plan_turn(&request);
        let delay = self.token_delay;
        Box::pin(async_stream::stream! {
            for event in events {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                yield Ok(event);
            }
        })
    }
}

// One bit per tool of the registry.
const _: () = assert!(ToolName::ALL.len() <= 32);

/// The tools of the request, as a set of [`ToolName`]s (names we do not know are ignored).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Offered(u32);

impl Offered {
    fn new(tools: &[ToolSpec]) -> Self {
        let bits = tools
            .iter()
            .filter_map(|tool| ToolName::parse(&tool.name))
            .fold(0, |bits, tool| bits | Self::bit(tool));
        Self(bits)
    }

    fn bit(tool: ToolName) -> u32 {
        let index = ToolName::ALL
            .iter()
            .position(|known| *known == tool)
            .unwrap_or(0);
        1 << index
    }

    fn has(self, tool: ToolName) -> bool {
        self.0 & Self::bit(tool) != 0
    }

    fn any(self, tools: &[ToolName]) -> bool {
        tools.iter().any(|tool| self.has(*tool))
    }

    fn restaurant(self) -> bool {
        self.any(&[
            ToolName::GetWeather,
            ToolName::SearchRestaurants,
            ToolName::CreateBooking,
            ToolName::ListBookings,
            ToolName::CancelBooking,
        ])
    }

    fn gifts(self) -> bool {
        self.any(&[
            ToolName::SuggestGifts,
            ToolName::PrepareCheckout,
            ToolName::CreateCheckoutSession,
        ])
    }

    fn shipping(self) -> bool {
        self.has(ToolName::ShippingQuote)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{after_search, model, request};
    use super::*;
    use futures::StreamExt;

    #[tokio::test]
    async fn streaming_with_no_delay_yields_the_planned_events() {
        let messages = after_search("đặt bàn ở Chả Cá Thăng Long tối mai lúc 19:00");
        let planned = model().plan_turn(&request(messages.clone()));
        let streamed: Vec<Result<ModelEvent, _>> =
            model().stream_turn(request(messages)).collect().await;
        let streamed: Vec<ModelEvent> = streamed.into_iter().map(Result::unwrap).collect();
        assert_eq!(streamed, planned);
        assert!(planned.len() > 5);
    }
}

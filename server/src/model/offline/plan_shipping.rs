//! The shipping assistant: a shipping_quote from a zone and a weight, and what to fix when
//! validation rejects it.

use super::planner::{text_field, Planner};
use super::read::Lang;
use super::reply::Reply;
use super::SHIPPING_QUOTE;
use serde_json::Value;
use shared::tools::{Rule, ToolError, ToolName};

/// The zone of an earlier shipping_quote call.
fn zone_argument(arguments: &str) -> Option<&'static str> {
    let args = serde_json::from_str::<Value>(arguments).ok()?;
    match text_field(&args, "zone")? {
        "local" => Some("local"),
        "regional" => Some("regional"),
        _ => None,
    }
}

/// The weight of an earlier shipping_quote call as its argument text had it (read as text,
/// never as a float), if it was a number above zero.
fn weight_argument(arguments: &str) -> Option<String> {
    const KEY: &str = "\"weight_kg\"";
    let after_key = &arguments[arguments.find(KEY)? + KEY.len()..];
    let value = after_key.trim_start().strip_prefix(':')?.trim_start();
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(value.len());
    let number = &value[..end];
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let well_formed = !whole.is_empty()
        && !number.ends_with('.')
        && !fraction.contains('.')
        && number.chars().any(|c| ('1'..='9').contains(&c));
    well_formed.then(|| number.to_owned())
}

/// What is wrong with a shipping_quote call, read from its error's issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ParcelProblem {
    WeightMissing,
    WeightNotANumber,
    WeightTooPrecise,
    WeightNotPositive,
    WeightTooHeavy,
    Weight,
    Zone,
    Other,
}

fn parcel_problem(error: &ToolError) -> ParcelProblem {
    let Some(issue) = error.issues.first() else {
        return ParcelProblem::Other;
    };
    match (issue.path.as_str(), &issue.rule) {
        ("weight_kg", Rule::Missing) => ParcelProblem::WeightMissing,
        ("weight_kg", Rule::WrongType { .. }) => ParcelProblem::WeightNotANumber,
        ("weight_kg", Rule::BelowMinimum { .. }) => ParcelProblem::WeightNotPositive,
        ("weight_kg", Rule::AboveMaximum { .. }) => ParcelProblem::WeightTooHeavy,
        ("weight_kg", Rule::TooPrecise { .. }) => ParcelProblem::WeightTooPrecise,
        ("weight_kg", _) => ParcelProblem::Weight,
        ("zone", _) => ParcelProblem::Zone,
        _ => ParcelProblem::Other,
    }
}

impl Planner<'_> {
    pub(super) fn shipping(&self) -> Option<Reply> {
        if !self.offers(ToolName::ShippingQuote) {
            return None;
        }
        let asked = self.last_assistant_text().is_some_and(|text| {
            let text = text.to_lowercase();
            [
                "nội thành hay liên tỉnh",
                "bao nhiêu kg",
                "local or regional",
                "how many kilograms",
            ]
            .iter()
            .any(|question| text.contains(question))
        });
        let mut zone = self.user.zone();
        let mut weight = self.user.weight();
        if zone.is_none() && weight.is_none() && !self.user.is_shipping() && !asked {
            return None;
        }
        if let Some(place) = self.user.place_abroad() {
            // Both zones are inside the country: a quote would price a parcel that the
            // service does not carry.
            return Some(Reply::text(match self.lang {
                Lang::Vi => format!(
                    "Xin lỗi, tôi chỉ báo giá gửi hàng trong Việt Nam (nội thành hoặc liên \
                     tỉnh), mà {place} ở nước ngoài."
                ),
                Lang::En => format!(
                    "Sorry, I can only quote shipping within Vietnam (local or regional), and \
                     {place} is abroad."
                ),
            }));
        }
        let refines = zone.is_some() || weight.is_some();
        for earlier in self.open_request_messages(SHIPPING_QUOTE) {
            zone = zone.or_else(|| earlier.zone());
            weight = weight.or_else(|| earlier.weight());
        }
        if refines {
            // "còn liên tỉnh thì sao?" after a quote: the same parcel, another zone.
            if let Some(previous) = self
                .proposed_calls()
                .rev()
                .find(|call| call.name == SHIPPING_QUOTE)
            {
                zone = zone.or_else(|| zone_argument(&previous.arguments));
                weight = weight.or_else(|| weight_argument(&previous.arguments));
            }
        }
        Some(match (zone, weight) {
            (Some(zone), Some(weight)) => {
                self.quote_call(format!(r#"{{"zone":"{zone}","weight_kg":{weight}}}"#))
            }
            (Some(_), None) => Reply::text(self.lang.pick(
                "Gói hàng nặng bao nhiêu kg?",
                "How many kilograms does the parcel weigh?",
            )),
            (None, Some(_)) => Reply::text(self.lang.pick(
                "Bạn gửi nội thành (trong thành phố) hay liên tỉnh (đi tỉnh khác)?",
                "Is it local (same city) or regional (another province)?",
            )),
            (None, None) => Reply::text(self.lang.pick(
                "Để báo giá, bạn cho tôi biết: gửi nội thành hay liên tỉnh, và gói hàng nặng bao \
                 nhiêu kg?",
                "To quote, tell me: is the parcel local or regional, and how many kilograms does \
                 it weigh?",
            )),
        })
    }

    pub(super) fn quote_call(&self, arguments: String) -> Reply {
        Reply::call(
            self.lang
                .pick("Để tôi tính phí giao hàng…", "Let me get a shipping quote…"),
            SHIPPING_QUOTE,
            arguments,
        )
    }

    pub(super) fn quote_report(&self, value: &Value) -> String {
        let Some(amount) = text_field(value, "amount") else {
            return self
                .lang
                .pick(
                    "Kết quả báo giá không có số tiền, nên tôi chưa có báo giá.",
                    "The quote came back without an amount, so I have no quote.",
                )
                .to_owned();
        };
        let currency = text_field(value, "currency").unwrap_or("DEMO");
        match self.lang {
            Lang::Vi => {
                format!("Phí giao hàng: {amount} {currency} (tiền giả lập, không phải tiền thật).")
            }
            Lang::En => {
                format!("Shipping fee: {amount} {currency} (a made-up currency, not real money).")
            }
        }
    }

    /// No quote: what to fix, and never an amount (the error's numbers are not quoted when
    /// the problem is known).
    pub(super) fn quote_failure(&self, code: &str, error: &ToolError, quoted: &str) -> String {
        if code == "DECLINED" {
            return self
                .lang
                .pick(
                    "Bạn đã từ chối nên chưa có báo giá nào.",
                    "You declined, so there is no quote.",
                )
                .to_owned();
        }
        if code != "VALIDATION_ERROR" {
            return match self.lang {
                Lang::Vi => {
                    format!("Chưa có báo giá phí giao hàng: {quoted}. Bạn thử lại sau nhé.")
                }
                Lang::En => {
                    format!("There is no shipping quote: {quoted}. Please try again later.")
                }
            };
        }
        let (vi, en) = match parcel_problem(error) {
            ParcelProblem::WeightMissing => (
                "Chưa có báo giá: còn thiếu cân nặng. Gói hàng nặng bao nhiêu kg?",
                "There is no quote: the weight is missing. How many kilograms does the parcel \
                 weigh?",
            ),
            ParcelProblem::WeightNotANumber => (
                "Chưa có báo giá: cân nặng phải là một con số kg (viết bằng số, không phải chữ). \
                 Bạn cho tôi biết lại cân nặng của gói hàng nhé.",
                "There is no quote: the weight must be a number of kilograms, not text. Please \
                 tell me the parcel's weight again.",
            ),
            ParcelProblem::WeightTooPrecise => (
                "Chưa có báo giá: cân nặng chỉ được lẻ tới gam (tối đa ba chữ số thập phân). Bạn \
                 làm tròn cân nặng giúp tôi nhé.",
                "There is no quote: the weight can have at most three decimals (whole grams). \
                 Please round it.",
            ),
            ParcelProblem::WeightNotPositive => (
                "Chưa có báo giá: cân nặng phải lớn hơn không. Gói hàng nặng bao nhiêu kg?",
                "There is no quote: the weight must be greater than zero. How many kilograms \
                 does the parcel weigh?",
            ),
            ParcelProblem::WeightTooHeavy => (
                "Chưa có báo giá: tôi chỉ báo giá gói hàng nặng tối đa một trăm kg. Bạn tách \
                 thành nhiều gói nhỏ hơn nhé.",
                "There is no quote: parcels can weigh at most one hundred kilograms. Try \
                 splitting it into smaller parcels.",
            ),
            ParcelProblem::Weight => (
                "Chưa có báo giá: cân nặng chưa hợp lệ. Bạn cho tôi biết cân nặng bằng số kg, \
                 lớn hơn không và không quá một trăm kg nhé.",
                "There is no quote: the weight was not valid. Please give it as a number of \
                 kilograms, greater than zero and at most one hundred.",
            ),
            ParcelProblem::Zone => (
                "Chưa có báo giá: khu vực phải là nội thành hoặc liên tỉnh. Bạn gửi đi đâu?",
                "There is no quote: the zone must be local or regional. Where is the parcel \
                 going?",
            ),
            ParcelProblem::Other => (
                "Chưa có báo giá: thông tin gửi đi chưa hợp lệ. Bạn cho tôi biết lại khu vực \
                 (nội thành hay liên tỉnh) và cân nặng (kg) nhé.",
                "There is no quote: the request was not valid. Please tell me the zone (local or \
                 regional) and the weight in kilograms again.",
            ),
        };
        self.lang.pick(vi, en).to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{after_result, declined, failed, plan_for, user, validation_error};
    use super::super::{BAD_WEIGHT_ARGUMENTS, ZERO_WEIGHT_ARGUMENTS};
    use super::*;
    use serde_json::json;
    use shared::tools::Assistant;

    /// No quote: no amount, no "DEMO", no number at all.
    fn assert_no_amount(text: &str) {
        assert!(!text.contains("DEMO"), "{text}");
        assert!(!text.contains("Phí giao hàng:"), "{text}");
        assert!(!text.contains("Shipping fee"), "{text}");
        assert!(!text.chars().any(|c| c.is_ascii_digit()), "{text}");
    }

    #[test]
    fn a_quote_keeps_the_weight_as_typed() {
        for (text, expected) in [
            (
                "Phí giao hàng 2 kg nội thành?",
                r#"{"zone":"local","weight_kg":2}"#,
            ),
            (
                "gửi 2kg trong thành phố",
                r#"{"zone":"local","weight_kg":2}"#,
            ),
            (
                "Gửi 2,5 kg đi liên tỉnh",
                r#"{"zone":"regional","weight_kg":2.5}"#,
            ),
            ("2.5kg ngoại tỉnh", r#"{"zone":"regional","weight_kg":2.5}"#),
            (
                "gói 0.75 ký, tỉnh khác",
                r#"{"zone":"regional","weight_kg":0.75}"#,
            ),
            ("3 cân nội thành", r#"{"zone":"local","weight_kg":3}"#),
            (
                "gui 1,25 kg noi thanh",
                r#"{"zone":"local","weight_kg":1.25}"#,
            ),
            (
                "12.345 kg lien tinh",
                r#"{"zone":"regional","weight_kg":12.345}"#,
            ),
            ("0,30 kg nội thành", r#"{"zone":"local","weight_kg":0.30}"#),
            (
                "Quote a 2.3 kg parcel, local",
                r#"{"zone":"local","weight_kg":2.3}"#,
            ),
            ("ship 7 kg regional", r#"{"zone":"regional","weight_kg":7}"#),
            // Two places are two provinces; grams are kilograms, the point moved.
            (
                "Gửi gói 2kg từ Hà Nội vào Sài Gòn hết bao nhiêu?",
                r#"{"zone":"regional","weight_kg":2}"#,
            ),
            (
                "ship 500g from Hue to Da Nang",
                r#"{"zone":"regional","weight_kg":0.5}"#,
            ),
            (
                "gửi 1250 gram từ Đà Lạt ra Nha Trang",
                r#"{"zone":"regional","weight_kg":1.25}"#,
            ),
        ] {
            let turn = plan_for(Assistant::Shipping, vec![user(text)]);
            let call = turn.only_call();
            assert_eq!(call.name, SHIPPING_QUOTE, "{text}");
            assert_eq!(call.arguments, expected, "{text}");
            // The exact text reads back as the exact grams.
            let input: shared::tools::ShippingQuoteInput =
                serde_json::from_str(&call.arguments).unwrap();
            let typed = expected.rsplit(':').next().unwrap().trim_end_matches('}');
            assert_eq!(
                input.weight_kg,
                shared::tools::Kilograms::parse(typed).unwrap(),
                "{text}"
            );
        }
        let turn = plan_for(Assistant::Shipping, vec![user("2 kg nội thành")]);
        assert_eq!(turn.text, "Để tôi tính phí giao hàng…");
    }

    #[test]
    fn a_quote_without_zone_or_weight_asks_for_it() {
        for (text, question) in [
            (
                "Gửi 2 kg",
                "Bạn gửi nội thành (trong thành phố) hay liên tỉnh (đi tỉnh khác)?",
            ),
            // One place tells no zone.
            (
                "gửi 2kg ở Hà Nội",
                "Bạn gửi nội thành (trong thành phố) hay liên tỉnh (đi tỉnh khác)?",
            ),
            (
                "Phí giao hàng nội thành bao nhiêu?",
                "Gói hàng nặng bao nhiêu kg?",
            ),
            (
                "báo giá giao hàng",
                "Để báo giá, bạn cho tôi biết: gửi nội thành hay liên tỉnh, và gói hàng nặng bao \
                 nhiêu kg?",
            ),
            (
                "ship a 2 kg parcel",
                "Is it local (same city) or regional (another province)?",
            ),
            (
                "local shipping quote please",
                "How many kilograms does the parcel weigh?",
            ),
            // Both zones are inside Vietnam: two places, one abroad, are not "regional".
            (
                "Ship a 2kg parcel from Hanoi to Tokyo",
                "Sorry, I can only quote shipping within Vietnam (local or regional), and Tokyo \
                 is abroad.",
            ),
            (
                "Gửi 3kg từ Singapore về Sài Gòn",
                "Xin lỗi, tôi chỉ báo giá gửi hàng trong Việt Nam (nội thành hoặc liên tỉnh), mà \
                 Singapore ở nước ngoài.",
            ),
        ] {
            let turn = plan_for(Assistant::Shipping, vec![user(text)]);
            assert!(turn.calls.is_empty(), "{text}: {turn:?}");
            assert_eq!(turn.text, question, "{text}");
        }
        // The answer completes the earlier request, with the weight still as typed.
        let mut history = vec![user("Gửi 2,5 kg")];
        let question = plan_for(Assistant::Shipping, history.clone());
        history.push(question.assistant());
        history.push(user("liên tỉnh"));
        assert_eq!(
            plan_for(Assistant::Shipping, history).only_call().arguments,
            r#"{"zone":"regional","weight_kg":2.5}"#
        );
    }

    #[test]
    fn after_a_quote_the_same_parcel_can_be_quoted_for_another_zone_or_weight() {
        let quote = json!({"ok": true, "zone": "local", "weight_kg": 2.5, "amount": "7.50",
                           "currency": "DEMO", "fictional": true});
        let (mut history, reply) = after_result(
            Assistant::Shipping,
            "Gửi 2,5 kg nội thành",
            SHIPPING_QUOTE,
            &quote,
        );
        history.push(reply.assistant());
        let mut other_zone = history.clone();
        other_zone.push(user("còn liên tỉnh thì sao?"));
        assert_eq!(
            plan_for(Assistant::Shipping, other_zone)
                .only_call()
                .arguments,
            r#"{"zone":"regional","weight_kg":2.5}"#
        );
        history.push(user("5 kg thì sao?"));
        assert_eq!(
            plan_for(Assistant::Shipping, history).only_call().arguments,
            r#"{"zone":"local","weight_kg":5}"#
        );
        assert_eq!(
            weight_argument(r#"{"zone":"local","weight_kg":0.750}"#).as_deref(),
            Some("0.750")
        );
        assert_eq!(weight_argument(BAD_WEIGHT_ARGUMENTS), None);
        assert_eq!(weight_argument(ZERO_WEIGHT_ARGUMENTS), None);
    }

    #[test]
    fn a_quote_reports_the_amount_as_demo_money() {
        let quote = json!({"ok": true, "zone": "regional", "weight_kg": 2.5, "amount": "12.50",
                           "currency": "DEMO", "fictional": true});
        let (_, reply) = after_result(
            Assistant::Shipping,
            "Gửi 2,5 kg liên tỉnh",
            SHIPPING_QUOTE,
            &quote,
        );
        assert_eq!(
            reply.text,
            "Phí giao hàng: 12.50 DEMO (tiền giả lập, không phải tiền thật)."
        );
        assert!(reply.calls.is_empty());
        let (_, reply) = after_result(
            Assistant::Shipping,
            "ship 2.5 kg regional",
            SHIPPING_QUOTE,
            &quote,
        );
        assert_eq!(
            reply.text,
            "Shipping fee: 12.50 DEMO (a made-up currency, not real money)."
        );
    }

    #[test]
    fn trigger_bad_weight_and_zero_weight() {
        let turn = plan_for(Assistant::Shipping, vec![user("#bad-weight")]);
        assert_eq!(turn.only_call().name, SHIPPING_QUOTE);
        assert_eq!(
            turn.only_call().arguments,
            r#"{"zone":"local","weight_kg":"2"}"#
        );
        let turn = plan_for(Assistant::Shipping, vec![user("báo giá #zero-weight")]);
        assert_eq!(
            turn.only_call().arguments,
            r#"{"zone":"local","weight_kg":0}"#
        );
        let cases = [
            (
                "#bad-weight",
                r#"{"zone":"local","weight_kg":"2"}"#,
                "There is no quote: the weight must be a number of kilograms, not text. Please \
                 tell me the parcel's weight again.",
            ),
            (
                "báo giá #bad-weight",
                r#"{"zone":"local","weight_kg":"2"}"#,
                "Chưa có báo giá: cân nặng phải là một con số kg (viết bằng số, không phải chữ). \
                 Bạn cho tôi biết lại cân nặng của gói hàng nhé.",
            ),
            (
                "báo giá #zero-weight",
                r#"{"zone":"local","weight_kg":0}"#,
                "Chưa có báo giá: cân nặng phải lớn hơn không. Gói hàng nặng bao nhiêu kg?",
            ),
            (
                "#zero-weight",
                r#"{"zone":"local","weight_kg":0}"#,
                "There is no quote: the weight must be greater than zero. How many kilograms \
                 does the parcel weigh?",
            ),
        ];
        for (text, raw, expected) in cases {
            let (_, reply) = after_result(
                Assistant::Shipping,
                text,
                SHIPPING_QUOTE,
                &validation_error(SHIPPING_QUOTE, raw),
            );
            assert_eq!(reply.text, expected, "{text}");
            assert_no_amount(&reply.text);
            assert!(reply.calls.is_empty());
        }
    }

    #[test]
    fn quote_errors_explain_what_to_fix_and_never_state_an_amount() {
        for (text, result) in [
            (
                "gửi 150 kg nội thành",
                validation_error(SHIPPING_QUOTE, r#"{"zone":"local","weight_kg":150}"#),
            ),
            (
                "gửi 1.0005 kg nội thành",
                validation_error(SHIPPING_QUOTE, r#"{"zone":"local","weight_kg":1.0005}"#),
            ),
            (
                "gửi 2 kg nội thành",
                validation_error(SHIPPING_QUOTE, r#"{"zone":"galactic","weight_kg":2}"#),
            ),
            (
                "gửi 2 kg nội thành",
                validation_error(SHIPPING_QUOTE, r#"{"zone":"local"}"#),
            ),
            ("gửi 2 kg nội thành", declined()),
        ] {
            let (_, reply) = after_result(Assistant::Shipping, text, SHIPPING_QUOTE, &result);
            assert!(
                reply.text.starts_with("Chưa có báo giá") || reply.text.contains("chưa có báo giá"),
                "{}",
                reply.text
            );
            assert_no_amount(&reply.text);
        }
        let (_, reply) = after_result(
            Assistant::Shipping,
            "ship 2 kg local",
            SHIPPING_QUOTE,
            &failed("EXECUTION_FAILED", "The quote service failed."),
        );
        assert_eq!(
            reply.text,
            "There is no shipping quote: Our system failed while doing it. Please try again later."
        );
        let (_, reply) = after_result(
            Assistant::Shipping,
            "ship 2 kg local",
            SHIPPING_QUOTE,
            &json!({"ok": true, "zone": "local"}),
        );
        assert_eq!(
            reply.text,
            "The quote came back without an amount, so I have no quote."
        );
    }
}

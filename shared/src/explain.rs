//! The person's reader of a tool error: a sentence in their language chosen from the
//! error's code and structured issues, never from the model-facing `message`.
//!
//! The page's error notices and the offline model's replies both come from here, so a
//! Vietnamese reader never meets the English text the model was given.

use crate::lang::Lang;
use crate::tools::{Entity, ErrorClass, ErrorCode, Rule, ToolError, ValidationIssue};

/// What a person reads about a failed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// A short label of the kind of failure ("Cần sửa thông tin" / "Needs a fix").
    pub kind: &'static str,
    /// What went wrong, one sentence per issue.
    pub reason: String,
    /// What the person can do now.
    pub next_step: &'static str,
}

/// The person's sentences for `error`, in `lang`.
pub fn explain(error: &ToolError, lang: Lang) -> Explanation {
    Explanation {
        kind: kind(error.code, lang),
        reason: reason(error, lang),
        next_step: next_step(error.code, error.retryable, lang),
    }
}

/// What went wrong, in `lang`: one sentence per issue when the error has issues, else
/// the code's own sentence.
pub fn reason(error: &ToolError, lang: Lang) -> String {
    let sentences: Vec<String> = error
        .issues
        .iter()
        .map(|issue| issue_sentence(issue, error.code, lang))
        .collect();
    if sentences.is_empty() {
        code_sentence(error.code, lang).to_owned()
    } else {
        let mut unique: Vec<String> = Vec::with_capacity(sentences.len());
        for sentence in sentences {
            if !unique.contains(&sentence) {
                unique.push(sentence);
            }
        }
        unique.join(" ")
    }
}

/// A short label of the kind of failure.
pub fn kind(code: ErrorCode, lang: Lang) -> &'static str {
    match code.class() {
        ErrorClass::Validation => match code {
            ErrorCode::NotFound => lang.pick("Không tìm thấy", "Not found"),
            ErrorCode::DraftAlreadyCommitted => lang.pick("Đã mua rồi", "Already bought"),
            _ => lang.pick("Cần sửa thông tin", "Needs a fix"),
        },
        ErrorClass::Infrastructure => lang.pick(
            "Dịch vụ tạm thời không phản hồi",
            "A service is not answering",
        ),
        ErrorClass::Platform => match code {
            ErrorCode::IdempotencyKeyInUse => {
                lang.pick("Yêu cầu đang được xử lý", "Already in progress")
            }
            _ => lang.pick("Yêu cầu trùng lặp", "Repeated request"),
        },
        ErrorClass::NotRun => lang.pick("Không thực hiện", "Not done"),
        ErrorClass::Internal => lang.pick("Có lỗi xảy ra", "Something went wrong"),
    }
}

/// What the person can do after a failure with `code`.
pub fn next_step(code: ErrorCode, retryable: bool, lang: Lang) -> &'static str {
    match code {
        ErrorCode::ValidationError | ErrorCode::UnknownTool => lang.pick(
            "Chưa có gì được thực hiện. Hãy nói lại thông tin cần sửa để trợ lý gửi lại.",
            "Nothing was done. Tell the assistant what to change and it will try again.",
        ),
        ErrorCode::NotFound => lang.pick(
            "Chưa có gì được thực hiện. Hãy nhờ trợ lý tìm lại.",
            "Nothing was done. Ask the assistant to look it up again.",
        ),
        ErrorCode::DraftAlreadyCommitted => lang.pick(
            "Không bị tính tiền thêm. Muốn mua thêm một lần nữa thì nhờ trợ lý tạo đơn mới.",
            "Nothing more was charged. To buy it again, ask the assistant for a new order.",
        ),
        ErrorCode::UpstreamUnavailable | ErrorCode::UpstreamTimeout if retryable => lang.pick(
            "Chưa có gì được thực hiện. Bạn có thể thử lại ngay bây giờ.",
            "Nothing was done. You can try again now.",
        ),
        ErrorCode::UpstreamUnavailable | ErrorCode::UpstreamTimeout => lang.pick(
            "Chưa có gì được thực hiện. Vui lòng thử lại sau.",
            "Nothing was done. Please try again later.",
        ),
        ErrorCode::IdempotencyKeyInUse => lang.pick(
            "Đợi giây lát rồi thử lại — yêu cầu sẽ không bị thực hiện hai lần.",
            "Wait a moment and try again — it will not be done twice.",
        ),
        ErrorCode::IdempotencyKeyReused => lang.pick(
            "Yêu cầu này không được thực hiện để tránh làm hai lần. Hãy bắt đầu lại thao tác.",
            "It was not done, so nothing happens twice. Please start again.",
        ),
        ErrorCode::Declined | ErrorCode::Cancelled | ErrorCode::Interrupted => {
            lang.pick("Không có gì thay đổi.", "Nothing changed.")
        }
        ErrorCode::MovedOn => lang.pick(
            "Không có gì thay đổi. Nếu vẫn muốn, bạn có thể làm tiếp (mọi thứ sẽ được kiểm tra lại).",
            "Nothing changed. If you still want it, you can still go ahead (it is checked again).",
        ),
        ErrorCode::ExecutionFailed => lang.pick(
            "Lỗi phía hệ thống; chưa có gì được thực hiện. Thử lại sau.",
            "A fault on our side; nothing was done. Try again later.",
        ),
    }
}

/// The sentence for a code when the error says nothing more.
fn code_sentence(code: ErrorCode, lang: Lang) -> &'static str {
    match code {
        ErrorCode::ValidationError => lang.pick(
            "Thông tin gửi đi chưa hợp lệ.",
            "Some of the details were not valid.",
        ),
        ErrorCode::UnknownTool => lang.pick(
            "Trợ lý đã gọi một chức năng không có.",
            "The assistant asked for something it cannot do.",
        ),
        ErrorCode::ExecutionFailed => lang.pick(
            "Hệ thống gặp lỗi khi thực hiện.",
            "Our system failed while doing it.",
        ),
        ErrorCode::UpstreamUnavailable => lang.pick(
            "Dịch vụ cần dùng hiện không phản hồi.",
            "A service it needs is not answering.",
        ),
        ErrorCode::UpstreamTimeout => lang.pick(
            "Dịch vụ cần dùng trả lời quá chậm.",
            "A service it needs answered too slowly.",
        ),
        ErrorCode::Declined => lang.pick("Bạn đã từ chối.", "You declined."),
        ErrorCode::MovedOn => lang.pick(
            "Chưa thực hiện: bạn đã gửi tin nhắn khác thay vì xác nhận.",
            "Not done: you wrote something else instead of confirming.",
        ),
        ErrorCode::Cancelled => lang.pick(
            "Câu trả lời đã dừng trước khi việc này chạy.",
            "The reply was stopped before this ran.",
        ),
        ErrorCode::Interrupted => lang.pick(
            "Câu trả lời bị ngắt trước khi đủ thông tin.",
            "The reply was cut off before the details were complete.",
        ),
        ErrorCode::NotFound => lang.pick(
            "Không tìm thấy thứ được nhắc đến.",
            "What it refers to could not be found.",
        ),
        ErrorCode::IdempotencyKeyReused => lang.pick(
            "Mã chống trùng lặp này đã dùng cho một yêu cầu khác.",
            "This request's key was already used for another request.",
        ),
        ErrorCode::IdempotencyKeyInUse => lang.pick(
            "Một yêu cầu giống hệt vẫn đang chạy.",
            "The same request is still running.",
        ),
        ErrorCode::DraftAlreadyCommitted => lang.pick(
            "Đơn quà này đã được mua rồi.",
            "This gift order was already bought.",
        ),
    }
}

/// The sentence for one issue.
fn issue_sentence(issue: &ValidationIssue, code: ErrorCode, lang: Lang) -> String {
    let field = field_label(&issue.path, lang);
    match &issue.rule {
        Rule::Missing => lang.pick(format!("Thiếu {field}."), format!("The {field} is missing.")),
        Rule::Blank => lang.pick(
            format!("Chưa điền {field}."),
            format!("The {field} is empty."),
        ),
        Rule::WrongType { .. }
        | Rule::DateTimeFormat
        | Rule::DateFormat
        | Rule::OneOf { .. }
        | Rule::TooShort { .. }
        | Rule::TooLong { .. } => match &issue.rule {
            Rule::OneOf { allowed } if !allowed.is_empty() => lang.pick(
                format!("{} chưa hợp lệ.", capitalise(field)),
                format!("The {field} is not one we know."),
            ),
            Rule::TooLong { max } => lang.pick(
                format!("{} quá dài (tối đa {max}).", capitalise(field)),
                format!("The {field} is too long (at most {max})."),
            ),
            _ => lang.pick(
                format!("{} chưa hợp lệ.", capitalise(field)),
                format!("The {field} is not valid."),
            ),
        },
        Rule::BelowMinimum { min, exclusive } => match (exclusive, lang) {
            (false, Lang::Vi) => format!("{} phải từ {min} trở lên.", capitalise(field)),
            (true, Lang::Vi) => format!("{} phải lớn hơn {min}.", capitalise(field)),
            (false, Lang::En) => format!("The {field} must be at least {min}."),
            (true, Lang::En) => format!("The {field} must be more than {min}."),
        },
        Rule::AboveMaximum { max, exclusive } => match (exclusive, lang) {
            (false, Lang::Vi) => format!("{} tối đa là {max}.", capitalise(field)),
            (true, Lang::Vi) => format!("{} phải nhỏ hơn {max}.", capitalise(field)),
            (false, Lang::En) => format!("The {field} can be at most {max}."),
            (true, Lang::En) => format!("The {field} must be less than {max}."),
        },
        Rule::TooPrecise { decimals } => lang.pick(
            format!("{} chỉ được có tối đa {decimals} chữ số thập phân.", capitalise(field)),
            format!("The {field} can have at most {decimals} decimals."),
        ),
        Rule::InPast => lang.pick(
            "Thời gian này đã qua.".to_owned(),
            "That time has already passed.".to_owned(),
        ),
        Rule::TooFarAhead { days } => lang.pick(
            format!("Chỉ nhận đặt bàn trong vòng {days} ngày tới."),
            format!("Tables can be booked at most {days} days ahead."),
        ),
        Rule::BeyondForecast { days } => lang.pick(
            format!("Chỉ có dự báo thời tiết cho {days} ngày, tính từ hôm nay."),
            format!("The forecast only covers {days} days, starting today."),
        ),
        Rule::Exclusive { with } => {
            let other = field_label(with, lang);
            lang.pick(
                format!("Chỉ nêu {field} hoặc {other}, không nêu cả hai."),
                format!("Give the {field} or the {other}, not both."),
            )
        }
        // The days of a forecast: `from` after `to`.
        Rule::MinAboveMax { max_field } if max_field == "to" => lang.pick(
            "Ngày bắt đầu nằm sau ngày kết thúc.".to_owned(),
            "The first day is after the last day.".to_owned(),
        ),
        Rule::MinAboveMax { .. } => lang.pick(
            "Ngân sách tối thiểu lớn hơn ngân sách tối đa.".to_owned(),
            "The lowest budget is above the highest.".to_owned(),
        ),
        Rule::NoSuch { entity } => no_such(*entity, lang).to_owned(),
        Rule::OutsideHours {
            restaurant,
            open,
            close,
            requested,
        } => lang.pick(
            format!(
                "{restaurant} chỉ nhận khách {open}–{close} (lượt cuối một giờ trước khi đóng cửa); {requested} nằm ngoài giờ đó."
            ),
            format!(
                "{restaurant} seats guests {open}–{close} (last seating an hour before closing); {requested} is outside those hours."
            ),
        ),
        Rule::PartyTooLarge { restaurant, max } => lang.pick(
            format!("{restaurant} nhận tối đa {max} khách mỗi lượt đặt."),
            format!("{restaurant} takes at most {max} guests per booking."),
        ),
        Rule::UnknownCity { available } if available.is_empty() => lang.pick(
            "Chưa có dữ liệu cho thành phố này.".to_owned(),
            "There is no data for this city yet.".to_owned(),
        ),
        Rule::UnknownCity { available } => lang.pick(
            format!(
                "Chưa có dữ liệu cho thành phố này; hiện có: {}.",
                available.join(", ")
            ),
            format!(
                "There is no data for this city yet; available: {}.",
                available.join(", ")
            ),
        ),
        Rule::ConflictsWithEarlier => lang.pick(
            "Yêu cầu này đã được thực hiện trước đó với thông tin khác; không có gì thay đổi."
                .to_owned(),
            "This request was already carried out with other details; nothing was changed."
                .to_owned(),
        ),
        Rule::TooLarge { .. } | Rule::NotJson | Rule::NotObject | Rule::UnknownField { .. } => {
            lang.pick(
                "Trợ lý gửi thông tin không đúng dạng.".to_owned(),
                "The assistant sent the details in the wrong form.".to_owned(),
            )
        }
        Rule::Other if issue.path.is_empty() => code_sentence(code, lang).to_owned(),
        Rule::Other => lang.pick(
            format!("{} chưa hợp lệ.", capitalise(field)),
            format!("The {field} is not valid."),
        ),
    }
}

fn no_such(entity: Entity, lang: Lang) -> &'static str {
    match entity {
        Entity::Restaurant => lang.pick(
            "Không tìm thấy nhà hàng này.",
            "This restaurant could not be found.",
        ),
        Entity::Booking => lang.pick(
            "Không tìm thấy lượt đặt bàn này trong các lượt đặt của bạn.",
            "This booking is not among your bookings.",
        ),
        Entity::Gift => lang.pick(
            "Không tìm thấy món quà này.",
            "This gift could not be found.",
        ),
        Entity::Draft => lang.pick(
            "Không tìm thấy đơn quà này.",
            "This gift order could not be found.",
        ),
        Entity::Tool => code_sentence(ErrorCode::UnknownTool, lang),
    }
}

/// A field's name as a person calls it, lower case (used mid-sentence); the paths are
/// the tools' wire names, `interests.2` style for list items.
pub fn field_label(path: &str, lang: Lang) -> &'static str {
    let head = path.split('.').next().unwrap_or_default();
    match head {
        "partySize" => lang.pick("số người", "party size"),
        "startsAt" => lang.pick("thời gian", "time"),
        "restaurantId" => lang.pick("nhà hàng", "restaurant"),
        "city" => lang.pick("thành phố", "city"),
        "cuisine" => lang.pick("món ăn", "cuisine"),
        "date" => lang.pick("ngày", "date"),
        "days" => lang.pick("số ngày", "number of days"),
        "from" => lang.pick("ngày bắt đầu", "first day"),
        "to" => lang.pick("ngày kết thúc", "last day"),
        "bookingId" => lang.pick("mã đặt bàn", "booking reference"),
        "includePastAndCancelled" => lang.pick("lựa chọn hiển thị", "display option"),
        "interests" => lang.pick("sở thích", "interests"),
        "budget_min" => lang.pick("ngân sách tối thiểu", "lowest budget"),
        "budget_max" => lang.pick("ngân sách tối đa", "highest budget"),
        "age" => lang.pick("tuổi", "age"),
        "relationship_type" => lang.pick("mối quan hệ", "relationship"),
        "gift_id" => lang.pick("món quà", "gift"),
        "draft_id" => lang.pick("đơn quà", "gift order"),
        "idempotency_key" => lang.pick("mã chống trùng lặp", "request key"),
        "zone" => lang.pick("vùng giao hàng", "delivery zone"),
        "weight_kg" => lang.pick("cân nặng", "weight"),
        _ => lang.pick("một thông tin", "a detail"),
    }
}

/// The first letter in upper case, for a label that starts a sentence.
fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODES: [ErrorCode; 13] = [
        ErrorCode::ValidationError,
        ErrorCode::UnknownTool,
        ErrorCode::ExecutionFailed,
        ErrorCode::UpstreamUnavailable,
        ErrorCode::UpstreamTimeout,
        ErrorCode::Declined,
        ErrorCode::Cancelled,
        ErrorCode::Interrupted,
        ErrorCode::MovedOn,
        ErrorCode::NotFound,
        ErrorCode::IdempotencyKeyReused,
        ErrorCode::IdempotencyKeyInUse,
        ErrorCode::DraftAlreadyCommitted,
    ];

    /// Whether a text has letters only Vietnamese uses (so it is not English).
    fn looks_vietnamese(text: &str) -> bool {
        text.chars().any(|c| {
            "ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹáàãéèíìóòõúùýĐ".contains(c)
        })
    }

    #[test]
    fn every_code_has_its_own_words_in_both_languages() {
        // A code added to `ErrorCode` must be added to `CODES` too: the match in
        // `code_sentence` fails to compile without it, this count catches the list.
        for code in CODES {
            let error = ToolError::new(code, "English text for the model only");
            let vi = explain(&error, Lang::Vi);
            let en = explain(&error, Lang::En);
            for text in [vi.kind, vi.reason.as_str(), vi.next_step] {
                assert!(looks_vietnamese(text), "{code:?}: {text}");
                assert!(!text.contains("English text"), "{code:?}: {text}");
            }
            for text in [en.kind, en.reason.as_str(), en.next_step] {
                assert!(!looks_vietnamese(text), "{code:?}: {text}");
                assert!(!text.is_empty());
                assert!(!text.contains("English text"), "{code:?}: {text}");
            }
            assert_ne!(vi, en);
        }
    }

    #[test]
    fn a_missing_party_size_is_named_in_the_persons_words() {
        let error =
            ToolError::new(ErrorCode::ValidationError, "partySize: required").with_issues(vec![
                ValidationIssue::broke("partySize", Rule::Missing, "required field is missing"),
            ]);
        assert_eq!(reason(&error, Lang::Vi), "Thiếu số người.");
        assert_eq!(reason(&error, Lang::En), "The party size is missing.");
    }

    #[test]
    fn opening_hours_are_quoted_from_the_rule_not_the_message() {
        let rule = Rule::OutsideHours {
            restaurant: "Bánh Căn Nhà Chung".into(),
            open: "06:00".into(),
            close: "14:00".into(),
            requested: "19:00".into(),
        };
        let error = ToolError::new(ErrorCode::ValidationError, "seats guests 06:00–14:00")
            .at("startsAt", rule);
        let vi = reason(&error, Lang::Vi);
        assert!(
            vi.starts_with("Bánh Căn Nhà Chung chỉ nhận khách 06:00–14:00"),
            "{vi}"
        );
        assert!(vi.contains("19:00"));
        assert!(!vi.contains("seats"));
        let en = reason(&error, Lang::En);
        assert!(en.contains("seats guests 06:00–14:00"), "{en}");
    }

    #[test]
    fn limits_come_from_the_rule() {
        let error = ToolError::new(ErrorCode::ValidationError, "x").at(
            "partySize",
            Rule::AboveMaximum {
                max: 20.into(),
                exclusive: false,
            },
        );
        assert_eq!(reason(&error, Lang::Vi), "Số người tối đa là 20.");
        assert_eq!(
            reason(&error, Lang::En),
            "The party size can be at most 20."
        );
        let error = ToolError::new(ErrorCode::ValidationError, "x").at(
            "weight_kg",
            Rule::BelowMinimum {
                min: 0.into(),
                exclusive: true,
            },
        );
        assert_eq!(reason(&error, Lang::Vi), "Cân nặng phải lớn hơn 0.");
    }

    #[test]
    fn several_issues_make_several_sentences_once_each() {
        let error = ToolError::new(ErrorCode::ValidationError, "x").with_issues(vec![
            ValidationIssue::broke("partySize", Rule::Missing, "a"),
            ValidationIssue::broke("startsAt", Rule::InPast, "b"),
            ValidationIssue::broke("startsAt", Rule::InPast, "c"),
        ]);
        assert_eq!(
            reason(&error, Lang::Vi),
            "Thiếu số người. Thời gian này đã qua."
        );
    }

    #[test]
    fn every_rule_reads_in_both_languages() {
        let rules = crate::tools::every_rule_kind();
        for rule in rules {
            let error =
                ToolError::new(ErrorCode::ValidationError, "model text").at("days", rule.clone());
            let vi = reason(&error, Lang::Vi);
            let en = reason(&error, Lang::En);
            assert!(looks_vietnamese(&vi), "{rule:?}: {vi}");
            assert!(!looks_vietnamese(&en), "{rule:?}: {en}");
            assert!(!vi.contains("model text") && !en.contains("model text"));
        }
    }

    #[test]
    fn rules_round_trip_as_tagged_json() {
        let issue = ValidationIssue::broke(
            "startsAt",
            Rule::OutsideHours {
                restaurant: "A".into(),
                open: "06:00".into(),
                close: "14:00".into(),
                requested: "19:00".into(),
            },
            "m",
        );
        let json = serde_json::to_value(&issue).ok();
        assert_eq!(
            json.as_ref()
                .and_then(|v| v.pointer("/rule/kind"))
                .and_then(|v| v.as_str()),
            Some("outsideHours")
        );
        let back: Option<ValidationIssue> = json.and_then(|v| serde_json::from_value(v).ok());
        assert_eq!(back, Some(issue));
        // An error stored before issues existed still reads.
        let old: Result<ToolError, _> =
            serde_json::from_str(r#"{"code":"NOT_FOUND","message":"gone","retryable":false}"#);
        assert!(old.is_ok_and(|e| e.issues.is_empty()));
    }

    #[test]
    fn unknown_paths_fall_back_to_a_neutral_label() {
        assert_eq!(field_label("whatever", Lang::En), "a detail");
        assert_eq!(field_label("interests.2", Lang::Vi), "sở thích");
    }
}

//! Dates, times and numbers as a reader of each language expects them.
//!
//! Vietnamese: 24-hour clock and day/month ("19:00, thứ Năm, 24/12/2026", "1.250.000 ₫",
//! "2,5 kg"); English: 12-hour clock and the day before the month's short name
//! ("7:00 PM, Thu 24 Dec 2026", "1,250,000 ₫", "2.5 kg").
//!
//! Formatted by hand from the value's own local fields (the restaurant's offset), never
//! from the browser's time zone or `Intl`, so the server-rendered and the hydrated page
//! agree and the tests need no browser.

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, Timelike, Weekday};
use shared::lang::Lang;

/// The weekday as written in a date: "thứ Hai" … "Chủ Nhật"; "Mon" … "Sun".
pub fn weekday(lang: Lang, weekday: Weekday) -> &'static str {
    let (vi, en) = match weekday {
        Weekday::Mon => ("thứ Hai", "Mon"),
        Weekday::Tue => ("thứ Ba", "Tue"),
        Weekday::Wed => ("thứ Tư", "Wed"),
        Weekday::Thu => ("thứ Năm", "Thu"),
        Weekday::Fri => ("thứ Sáu", "Fri"),
        Weekday::Sat => ("thứ Bảy", "Sat"),
        Weekday::Sun => ("Chủ Nhật", "Sun"),
    };
    lang.pick(vi, en)
}

/// The month's short English name, "Jan" … "Dec".
fn month_en(month: u32) -> &'static str {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    month
        .checked_sub(1)
        .and_then(|index| MONTHS.get(index as usize))
        .copied()
        .unwrap_or("")
}

/// The time of day in the value's own offset: "19:00"; "7:00 PM".
pub fn time_hm(lang: Lang, at: &DateTime<FixedOffset>) -> String {
    match lang {
        Lang::Vi => format!("{:02}:{:02}", at.hour(), at.minute()),
        Lang::En => {
            let (pm, hour) = at.hour12();
            let half = if pm { "PM" } else { "AM" };
            format!("{hour}:{:02} {half}", at.minute())
        }
    }
}

/// Day and month: "07/03"; "7 Mar".
pub fn day_month(lang: Lang, date: NaiveDate) -> String {
    match lang {
        Lang::Vi => format!("{:02}/{:02}", date.day(), date.month()),
        Lang::En => format!("{} {}", date.day(), month_en(date.month())),
    }
}

/// Day, month and year: "07/03/2026"; "7 Mar 2026".
pub fn day_month_year(lang: Lang, date: NaiveDate) -> String {
    match lang {
        Lang::Vi => format!("{:02}/{:02}/{}", date.day(), date.month(), date.year()),
        Lang::En => format!("{} {} {}", date.day(), month_en(date.month()), date.year()),
    }
}

/// A day as in a forecast: "thứ Bảy, 05/12"; "Sat 5 Dec".
pub fn weekday_day_month(lang: Lang, date: NaiveDate) -> String {
    match lang {
        Lang::Vi => format!(
            "{}, {}",
            weekday(lang, date.weekday()),
            day_month(lang, date)
        ),
        Lang::En => format!(
            "{} {}",
            weekday(lang, date.weekday()),
            day_month(lang, date)
        ),
    }
}

/// The days a forecast was asked for, as its title names them: one day ("thứ Sáu
/// 04/12"; "Fri 4 Dec"), a run of days ("thứ Sáu 04/12 – Chủ Nhật 06/12"), or a weekend
/// called so ("cuối tuần (thứ Bảy 05/12 – Chủ Nhật 06/12)"; "weekend (Sat 5 Dec – Sun 6
/// Dec)"). Only from the dates: the page may be read days later, when "this weekend" or
/// "tomorrow" would be untrue.
pub fn days_asked(lang: Lang, from: NaiveDate, to: NaiveDate) -> String {
    let day = |date: NaiveDate| {
        format!(
            "{} {}",
            weekday(lang, date.weekday()),
            day_month(lang, date)
        )
    };
    if to <= from {
        return day(from);
    }
    let span = format!("{} – {}", day(from), day(to));
    if from.weekday() == Weekday::Sat && from.succ_opt() == Some(to) {
        format!("{} ({span})", lang.pick("cuối tuần", "weekend"))
    } else {
        span
    }
}

/// A moment in its own offset: "19:00, thứ Năm, 24/12/2026"; "7:00 PM, Thu 24 Dec 2026".
pub fn datetime(lang: Lang, at: &DateTime<FixedOffset>) -> String {
    let date = at.date_naive();
    let separator = lang.pick(", ", " ");
    format!(
        "{}, {}{separator}{}",
        time_hm(lang, at),
        weekday(lang, date.weekday()),
        day_month_year(lang, date)
    )
}

/// Digits grouped by thousands with `separator`.
fn grouped(amount: u64, separator: char) -> String {
    let digits = amount.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(separator);
        }
        out.push(digit);
    }
    out
}

/// Whole đồng: "1.250.000 ₫"; "1,250,000 ₫" (the sign after the amount in both, as the
/// prices people see in Việt Nam are written).
pub fn vnd(lang: Lang, amount: u32) -> String {
    format!("{} ₫", grouped(u64::from(amount), lang.pick('.', ',')))
}

/// A decimal written with a point (`"2.5"`, as JSON and [`shared::tools::Kilograms`]
/// write it) in the language's own way: "2,5"; "2.5".
pub fn decimal(lang: Lang, text: &str) -> String {
    match lang {
        Lang::Vi => text.replace('.', ","),
        Lang::En => text.to_owned(),
    }
}

/// A number of people: "4 người"; "4 people", "1 person".
pub fn people(lang: Lang, count: u64) -> String {
    match lang {
        Lang::Vi => format!("{count} người"),
        Lang::En if count == 1 => "1 person".to_owned(),
        Lang::En => format!("{count} people"),
    }
}

/// Price level 1–4 as that many "₫" (clamped, so a bad value still shows something sane).
pub fn price_level(level: u8) -> String {
    "₫".repeat(usize::from(level.clamp(1, 4)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(text).unwrap()
    }

    #[test]
    fn formats_in_the_values_own_offset() {
        assert_eq!(
            datetime(Lang::Vi, &at("2026-12-24T19:00:00+07:00")),
            "19:00, thứ Năm, 24/12/2026"
        );
        assert_eq!(
            datetime(Lang::En, &at("2026-12-24T19:00:00+07:00")),
            "7:00 PM, Thu 24 Dec 2026"
        );
        // The same instant written in UTC is a different local time and day.
        let utc = at("2026-12-24T19:00:00+07:00").with_timezone(&FixedOffset::east_opt(0).unwrap());
        assert_eq!(datetime(Lang::Vi, &utc), "12:00, thứ Năm, 24/12/2026");
        assert_eq!(datetime(Lang::En, &utc), "12:00 PM, Thu 24 Dec 2026");
        assert_eq!(
            datetime(Lang::Vi, &at("2026-12-23T23:30:00-01:00")),
            "23:30, thứ Tư, 23/12/2026"
        );
        assert_eq!(
            datetime(Lang::En, &at("2026-12-23T23:30:00-01:00")),
            "11:30 PM, Wed 23 Dec 2026"
        );
    }

    #[test]
    fn every_weekday_and_zero_padding() {
        let expected = [
            (
                "2026-12-20T08:05:00+07:00",
                "08:05, Chủ Nhật, 20/12/2026",
                "8:05 AM, Sun 20 Dec 2026",
            ),
            (
                "2026-12-21T08:05:00+07:00",
                "08:05, thứ Hai, 21/12/2026",
                "8:05 AM, Mon 21 Dec 2026",
            ),
            (
                "2026-12-22T08:05:00+07:00",
                "08:05, thứ Ba, 22/12/2026",
                "8:05 AM, Tue 22 Dec 2026",
            ),
            (
                "2026-12-23T08:05:00+07:00",
                "08:05, thứ Tư, 23/12/2026",
                "8:05 AM, Wed 23 Dec 2026",
            ),
            (
                "2026-12-24T08:05:00+07:00",
                "08:05, thứ Năm, 24/12/2026",
                "8:05 AM, Thu 24 Dec 2026",
            ),
            (
                "2026-12-25T08:05:00+07:00",
                "08:05, thứ Sáu, 25/12/2026",
                "8:05 AM, Fri 25 Dec 2026",
            ),
            (
                "2027-01-02T00:00:00+07:00",
                "00:00, thứ Bảy, 02/01/2027",
                "12:00 AM, Sat 2 Jan 2027",
            ),
        ];
        for (input, vi, en) in expected {
            assert_eq!(datetime(Lang::Vi, &at(input)), vi);
            assert_eq!(datetime(Lang::En, &at(input)), en);
        }
    }

    #[test]
    fn every_month_has_its_english_name() {
        let names: Vec<String> = (1..=12)
            .map(|month| day_month(Lang::En, NaiveDate::from_ymd_opt(2026, month, 1).unwrap()))
            .collect();
        assert_eq!(
            names,
            [
                "1 Jan", "1 Feb", "1 Mar", "1 Apr", "1 May", "1 Jun", "1 Jul", "1 Aug", "1 Sep",
                "1 Oct", "1 Nov", "1 Dec"
            ]
        );
        assert_eq!(month_en(0), "");
        assert_eq!(month_en(13), "");
    }

    #[test]
    fn short_forms() {
        let date = NaiveDate::from_ymd_opt(2026, 3, 7).unwrap();
        assert_eq!(day_month(Lang::Vi, date), "07/03");
        assert_eq!(day_month(Lang::En, date), "7 Mar");
        assert_eq!(day_month_year(Lang::Vi, date), "07/03/2026");
        assert_eq!(day_month_year(Lang::En, date), "7 Mar 2026");
        let saturday = NaiveDate::from_ymd_opt(2026, 12, 5).unwrap();
        assert_eq!(weekday_day_month(Lang::Vi, saturday), "thứ Bảy, 05/12");
        assert_eq!(weekday_day_month(Lang::En, saturday), "Sat 5 Dec");
        let morning = at("2026-03-07T09:45:59+07:00");
        assert_eq!(time_hm(Lang::Vi, &morning), "09:45");
        assert_eq!(time_hm(Lang::En, &morning), "9:45 AM");
        let noon = at("2026-03-07T12:30:00+07:00");
        assert_eq!(time_hm(Lang::En, &noon), "12:30 PM");
        assert_eq!(time_hm(Lang::Vi, &at("2026-03-07T19:00:00+07:00")), "19:00");
        assert_eq!(
            time_hm(Lang::En, &at("2026-03-07T19:00:00+07:00")),
            "7:00 PM"
        );
        assert_eq!(price_level(2), "₫₫");
        assert_eq!(price_level(0), "₫");
        assert_eq!(price_level(9), "₫₫₫₫");
    }

    #[test]
    fn the_days_asked_are_named_from_their_dates() {
        let day = |text: &str| NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap();
        let (saturday, sunday) = (day("2026-12-05"), day("2026-12-06"));
        assert_eq!(
            days_asked(Lang::Vi, saturday, sunday),
            "cuối tuần (thứ Bảy 05/12 – Chủ Nhật 06/12)"
        );
        assert_eq!(
            days_asked(Lang::En, saturday, sunday),
            "weekend (Sat 5 Dec – Sun 6 Dec)"
        );
        // One day, and a run that is not a weekend, are their dates only.
        assert_eq!(
            days_asked(Lang::Vi, day("2026-12-04"), day("2026-12-04")),
            "thứ Sáu 04/12"
        );
        assert_eq!(
            days_asked(Lang::En, day("2026-12-04"), day("2026-12-04")),
            "Fri 4 Dec"
        );
        assert_eq!(
            days_asked(Lang::En, day("2026-12-04"), sunday),
            "Fri 4 Dec – Sun 6 Dec"
        );
        // Sunday to Monday is two days, not a weekend; across the year's end too.
        assert_eq!(
            days_asked(Lang::Vi, sunday, day("2026-12-07")),
            "Chủ Nhật 06/12 – thứ Hai 07/12"
        );
        assert_eq!(
            days_asked(Lang::En, day("2027-01-02"), day("2027-01-03")),
            "weekend (Sat 2 Jan – Sun 3 Jan)"
        );
    }

    #[test]
    fn dong_are_grouped_by_thousands() {
        let cases: [(u32, &str, &str); 7] = [
            (0, "0 ₫", "0 ₫"),
            (999, "999 ₫", "999 ₫"),
            (1_000, "1.000 ₫", "1,000 ₫"),
            (450_000, "450.000 ₫", "450,000 ₫"),
            (1_250_000, "1.250.000 ₫", "1,250,000 ₫"),
            (100_000_000, "100.000.000 ₫", "100,000,000 ₫"),
            (u32::MAX, "4.294.967.295 ₫", "4,294,967,295 ₫"),
        ];
        for (amount, vi, en) in cases {
            assert_eq!(vnd(Lang::Vi, amount), vi);
            assert_eq!(vnd(Lang::En, amount), en);
        }
        // The server's reasons use shared's formatter: the page's Vietnamese is the same.
        assert_eq!(
            vnd(Lang::Vi, 1_250_000),
            shared::tools::format_vnd(1_250_000)
        );
    }

    #[test]
    fn decimals_and_people() {
        assert_eq!(decimal(Lang::Vi, "2.5"), "2,5");
        assert_eq!(decimal(Lang::En, "2.5"), "2.5");
        assert_eq!(decimal(Lang::Vi, "2"), "2");
        assert_eq!(people(Lang::Vi, 4), "4 người");
        assert_eq!(people(Lang::En, 4), "4 people");
        assert_eq!(people(Lang::En, 1), "1 person");
        assert_eq!(people(Lang::Vi, 1), "1 người");
    }
}

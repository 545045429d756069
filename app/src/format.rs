//! Dates, times and numbers as a Vietnamese reader expects them.
//!
//! Formatted by hand from the value's own local fields (the restaurant's offset), never
//! from the browser's time zone or `Intl`, so the server-rendered and the hydrated page
//! agree and the tests need no browser.

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, Timelike, Weekday};

/// The weekday as written in a Vietnamese date: "Chủ Nhật", "thứ Hai" … "thứ Bảy".
pub fn weekday_vi(weekday: Weekday) -> &'static str {
    match weekday {
        Weekday::Mon => "thứ Hai",
        Weekday::Tue => "thứ Ba",
        Weekday::Wed => "thứ Tư",
        Weekday::Thu => "thứ Năm",
        Weekday::Fri => "thứ Sáu",
        Weekday::Sat => "thứ Bảy",
        Weekday::Sun => "Chủ Nhật",
    }
}

/// `HH:MM` in the value's own offset.
pub fn time_hm(at: &DateTime<FixedOffset>) -> String {
    format!("{:02}:{:02}", at.hour(), at.minute())
}

/// `dd/mm`.
pub fn day_month(date: NaiveDate) -> String {
    format!("{:02}/{:02}", date.day(), date.month())
}

/// `dd/mm/yyyy`.
pub fn day_month_year(date: NaiveDate) -> String {
    format!("{:02}/{:02}/{}", date.day(), date.month(), date.year())
}

/// A moment as in vi-VN, in its own offset: "19:00, thứ Năm, 24/12/2026".
pub fn datetime_vi(at: &DateTime<FixedOffset>) -> String {
    let date = at.date_naive();
    format!(
        "{}, {}, {}",
        time_hm(at),
        weekday_vi(date.weekday()),
        day_month_year(date)
    )
}

/// Whole đồng as in vi-VN: "450.000 ₫" (the one formatter the server's reasons use too).
pub fn vnd(amount: u32) -> String {
    shared::tools::format_vnd(i64::from(amount))
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
            datetime_vi(&at("2026-12-24T19:00:00+07:00")),
            "19:00, thứ Năm, 24/12/2026"
        );
        // The same instant written in UTC is a different local time and day.
        assert_eq!(
            datetime_vi(
                &at("2026-12-24T19:00:00+07:00").with_timezone(&FixedOffset::east_opt(0).unwrap())
            ),
            "12:00, thứ Năm, 24/12/2026"
        );
        assert_eq!(
            datetime_vi(&at("2026-12-23T23:30:00-01:00")),
            "23:30, thứ Tư, 23/12/2026"
        );
    }

    #[test]
    fn every_weekday_and_zero_padding() {
        let expected = [
            ("2026-12-20T08:05:00+07:00", "08:05, Chủ Nhật, 20/12/2026"),
            ("2026-12-21T08:05:00+07:00", "08:05, thứ Hai, 21/12/2026"),
            ("2026-12-22T08:05:00+07:00", "08:05, thứ Ba, 22/12/2026"),
            ("2026-12-23T08:05:00+07:00", "08:05, thứ Tư, 23/12/2026"),
            ("2026-12-24T08:05:00+07:00", "08:05, thứ Năm, 24/12/2026"),
            ("2026-12-25T08:05:00+07:00", "08:05, thứ Sáu, 25/12/2026"),
            ("2027-01-02T00:00:00+07:00", "00:00, thứ Bảy, 02/01/2027"),
        ];
        for (input, output) in expected {
            assert_eq!(datetime_vi(&at(input)), output);
        }
    }

    #[test]
    fn short_forms() {
        let date = NaiveDate::from_ymd_opt(2026, 3, 7).unwrap();
        assert_eq!(day_month(date), "07/03");
        assert_eq!(day_month_year(date), "07/03/2026");
        assert_eq!(time_hm(&at("2026-03-07T09:45:59+07:00")), "09:45");
        assert_eq!(price_level(2), "₫₫");
        assert_eq!(price_level(0), "₫");
        assert_eq!(price_level(9), "₫₫₫₫");
    }

    #[test]
    fn dong_are_grouped_by_thousands() {
        assert_eq!(vnd(0), "0 ₫");
        assert_eq!(vnd(999), "999 ₫");
        assert_eq!(vnd(1_000), "1.000 ₫");
        assert_eq!(vnd(450_000), "450.000 ₫");
        assert_eq!(vnd(1_250_000), "1.250.000 ₫");
        assert_eq!(vnd(100_000_000), "100.000.000 ₫");
        assert_eq!(vnd(u32::MAX), "4.294.967.295 ₫");
    }
}

//! Reading which days a message is about, in Vietnam's calendar: "hôm nay", "ngày mai",
//! "ngày kia", weekdays ("thứ Sáu tới", "next Friday"), weekends ("cuối tuần này"), and
//! calendar dates ("24/12", "ngày 24 tháng 12", "Dec 24"). Also the part of the day
//! ("tối", "trưa", "tonight") that turns "7 giờ" into a clock time.
//!
//! Weeks run Monday to Sunday, as Vietnamese calendars print them. The rules:
//! - "this weekend" / "cuối tuần (này)": the Saturday and Sunday of this week that are not
//!   past: on a weekday both, on Saturday today and tomorrow, on Sunday today only;
//! - "next weekend" / "cuối tuần sau|tới": the Saturday and Sunday of next week;
//! - a weekday alone, "this Friday", "on Friday", "thứ Sáu (này)": the nearest such day
//!   from today on, today included;
//! - "thứ Sáu tới", "this coming Friday": the nearest such day after today;
//! - "next Friday", "Friday next week", "thứ 6 tuần sau|tới": Friday of next week;
//! - a date without a year: its next occurrence from today on (on 31 December, "24/12" is
//!   next year's).

use super::read::{digits, Utterance};
use chrono::{Datelike, Days as DayCount, NaiveDate, Weekday};

/// A run of days, `first` to `last` inclusive (one day when they are equal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Days {
    pub(super) first: NaiveDate,
    pub(super) last: NaiveDate,
}

impl Days {
    pub(super) fn one(day: NaiveDate) -> Self {
        Self {
            first: day,
            last: day,
        }
    }

    pub(super) fn contains(self, day: NaiveDate) -> bool {
        self.first <= day && day <= self.last
    }
}

/// Part of the day, which tells how to read an hour ("7 giờ tối" is 19:00).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DayPart {
    Morning,
    Noon,
    Afternoon,
    Evening,
    Night,
}

fn add(day: NaiveDate, count: u64) -> Option<NaiveDate> {
    day.checked_add_days(DayCount::new(count))
}

/// The `weekday` of the Monday-to-Sunday week `day` is in.
fn in_week_of(day: NaiveDate, weekday: Weekday) -> Option<NaiveDate> {
    let monday = day.checked_sub_days(DayCount::new(u64::from(
        day.weekday().num_days_from_monday(),
    )))?;
    add(monday, u64::from(weekday.num_days_from_monday()))
}

/// The nearest `weekday` from `today` on; after today only when `after` is set.
fn nearest(today: NaiveDate, weekday: Weekday, after: bool) -> Option<NaiveDate> {
    let ahead = (7 + weekday.num_days_from_monday() - today.weekday().num_days_from_monday()) % 7;
    let ahead = if ahead == 0 && after { 7 } else { ahead };
    add(today, u64::from(ahead))
}

fn next_week(today: NaiveDate, weekday: Weekday) -> Option<NaiveDate> {
    add(in_week_of(today, weekday)?, 7)
}

pub(super) fn this_weekend(today: NaiveDate) -> Option<Days> {
    let saturday = in_week_of(today, Weekday::Sat)?;
    let sunday = in_week_of(today, Weekday::Sun)?;
    Some(Days {
        first: saturday.max(today),
        last: sunday,
    })
}

pub(super) fn next_weekend(today: NaiveDate) -> Option<Days> {
    Some(Days {
        first: next_week(today, Weekday::Sat)?,
        last: next_week(today, Weekday::Sun)?,
    })
}

/// The next `day`/`month` from today on: this year's, or next year's when it is past.
/// `None` for a day the month does not have.
fn next_date(today: NaiveDate, month: u32, day: u32) -> Option<NaiveDate> {
    let this_year = NaiveDate::from_ymd_opt(today.year(), month, day);
    match this_year {
        Some(date) if date >= today => Some(date),
        // 29 February comes round again only in a leap year.
        _ => (1..=8)
            .filter_map(|ahead| NaiveDate::from_ymd_opt(today.year() + ahead, month, day))
            .next(),
    }
}

/// "2026-12-24", "24/12/2026" or "24/12" written as one word.
fn calendar_date(token: &str, today: NaiveDate) -> Option<NaiveDate> {
    if token.len() == 10 && token.as_bytes().get(4) == Some(&b'-') {
        return NaiveDate::parse_from_str(token, "%Y-%m-%d").ok();
    }
    let parts: Vec<&str> = token.split('/').collect();
    match parts.as_slice() {
        [day, month] => next_date(today, digits(month)?, digits(day)?),
        [day, month, year] if year.len() == 4 => {
            let year = i32::try_from(digits(year)?).ok()?;
            NaiveDate::from_ymd_opt(year, digits(month)?, digits(day)?)
        }
        _ => None,
    }
}

// A match, not a list of names split at every call: dates are read at every word of
// every message.
fn month_name(word: &str) -> Option<u32> {
    Some(match word {
        "january" | "jan" => 1,
        "february" | "feb" => 2,
        "march" | "mar" => 3,
        "april" | "apr" => 4,
        "may" => 5,
        "june" | "jun" => 6,
        "july" | "jul" => 7,
        "august" | "aug" => 8,
        "september" | "sep" | "sept" => 9,
        "october" | "oct" => 10,
        "november" | "nov" => 11,
        "december" | "dec" => 12,
        _ => return None,
    })
}

/// A day of the month: "24", "24th", "1st".
fn day_of_month(word: &str) -> Option<u32> {
    let number = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|suffix| word.strip_suffix(suffix))
        .unwrap_or(word);
    digits(number).filter(|day| (1..=31).contains(day))
}

fn year(word: &str) -> Option<i32> {
    (word.len() == 4)
        .then(|| digits(word))
        .flatten()
        .and_then(|year| i32::try_from(year).ok())
}

/// A weekday named in Vietnamese from word `index`, and how many words it takes.
fn vietnamese_weekday(utterance: &Utterance, index: usize) -> Option<(Weekday, usize)> {
    let word = utterance.lower(index);
    let folded = utterance.folded(index);
    if folded == "chu" && utterance.folded(index + 1) == "nhat" {
        return Some((Weekday::Sun, 2));
    }
    if word == "cn" {
        return Some((Weekday::Sun, 1));
    }
    // Chat shorthand: "t6" is Friday.
    if let Some(number) = word.strip_prefix('t').and_then(digits) {
        return weekday_number(number).map(|day| (day, 1));
    }
    // Unaccented "thu" is also "thử" (try) or autumn: only before a day's number.
    if (word != "thứ" && word != "thu") || utterance.is_rank_word(index) {
        return None;
    }
    let next = utterance.lower(index + 1);
    let number = digits(next).or(match utterance.folded(index + 1) {
        "hai" => Some(2),
        "ba" => Some(3),
        "tu" => Some(4),
        "nam" => Some(5),
        "sau" => Some(6),
        "bay" => Some(7),
        _ => None,
    })?;
    weekday_number(number).map(|day| (day, 2))
}

/// "thứ 2" is Monday … "thứ 7" Saturday.
fn weekday_number(number: u32) -> Option<Weekday> {
    Some(match number {
        2 => Weekday::Mon,
        3 => Weekday::Tue,
        4 => Weekday::Wed,
        5 => Weekday::Thu,
        6 => Weekday::Fri,
        7 => Weekday::Sat,
        _ => return None,
    })
}

fn english_weekday(word: &str) -> Option<Weekday> {
    let weekday = |word: &str| {
        Some(match word {
            "monday" => Weekday::Mon,
            "tuesday" | "tues" => Weekday::Tue,
            "wednesday" => Weekday::Wed,
            "thursday" | "thurs" => Weekday::Thu,
            "friday" => Weekday::Fri,
            "saturday" => Weekday::Sat,
            "sunday" => Weekday::Sun,
            _ => return None,
        })
    };
    // "Friday's", "Fridays".
    weekday(word)
        .or_else(|| weekday(word.strip_suffix("'s")?))
        .or_else(|| weekday(word.strip_suffix('s')?))
}

impl Utterance {
    /// The days the message names; the first expression in it wins.
    pub(super) fn days(&self, today: NaiveDate) -> Option<Days> {
        (0..self.tokens.len()).find_map(|index| self.days_at(index, today))
    }

    /// The one day the message names: a weekend's first day.
    pub(super) fn date(&self, today: NaiveDate) -> Option<NaiveDate> {
        self.days(today).map(|days| days.first)
    }

    fn days_at(&self, index: usize, today: NaiveDate) -> Option<Days> {
        let word = self.lower(index);
        let folded = self.folded(index);
        if let Some(date) = calendar_date(word, today) {
            return Some(Days::one(date));
        }
        if let Some(date) = self.written_date_at(index, today) {
            return Some(Days::one(date));
        }
        if let Some(days) = self.weekend_at(index, today) {
            return Some(days);
        }
        if let Some(day) = self.weekday_at(index, today) {
            return Some(Days::one(day));
        }
        // Yesterday is read as yesterday, never as today: the tool then refuses a day that
        // is over, and the person hears why instead of getting today's table or forecast.
        let yesterday = match (word, folded) {
            ("hôm" | "bữa" | "hom" | "bua", _) => self.folded(index + 1) == "qua",
            (_, "yesterday") => true,
            _ => false,
        };
        if yesterday {
            return today.pred_opt().map(Days::one);
        }
        let ahead = match (word, folded) {
            ("hôm" | "bữa", _) | ("hom" | "bua", _) if self.folded(index + 1) == "nay" => 0,
            ("today" | "tonight", _) => 0,
            // "tối nay", "trưa nay": tonight, this noon.
            (_, "nay") if index > 0 && self.part_word_at(index - 1).is_some() => 0,
            ("tomorrow" | "tmr" | "tmrw", _) => 1,
            ("day", _)
                if self.lower(index + 1) == "after" && self.lower(index + 2) == "tomorrow" =>
            {
                2
            }
            (_, "ngay") if self.folded(index + 1) == "kia" => 2,
            // "hai mươi mốt" is 21.
            ("mốt", _) if index == 0 || self.folded(index - 1) != "muoi" => 2,
            ("sau", _) if self.folded(index + 1) == "ngay" && self.folded(index + 2) == "mai" => 2,
            // Unaccented "ngay mot" is "ngày mốt" unless it is "ngày một tháng…" (1st).
            ("ngay", _)
                if self.lower(index + 1) == "mot" && !matches!(self.folded(index + 2), "thang") =>
            {
                2
            }
            (_, "mai") => 1,
            _ => return self.days_from_now_at(index, today),
        };
        add(today, ahead).map(Days::one)
    }

    /// "3 ngày nữa", "in 3 days": one day, that many days from today.
    fn days_from_now_at(&self, index: usize, today: NaiveDate) -> Option<Days> {
        let in_english = self.lower(index) == "in";
        let at = if in_english { index + 1 } else { index };
        let (count, length) = self.number_at(at)?;
        let unit = self.folded(at + length);
        let after = self.folded(at + length + 1);
        let counted = if in_english {
            matches!(unit, "days" | "day")
        } else {
            unit == "ngay" && after == "nua"
        };
        counted
            .then(|| add(today, u64::from(count)))
            .flatten()
            .map(Days::one)
    }

    /// "ngày 24 tháng 12 (năm 2026)", "24 tháng 12", "Dec 24(th)(, 2026)", "24(th) (of)
    /// December (2026)".
    fn written_date_at(&self, index: usize, today: NaiveDate) -> Option<NaiveDate> {
        let dated = |day: u32, month: u32, year_at: usize| {
            let year_at = if matches!(self.folded(year_at), "nam") {
                year_at + 1
            } else {
                year_at
            };
            match year(self.lower(year_at)) {
                Some(year) => NaiveDate::from_ymd_opt(year, month, day),
                None => next_date(today, month, day),
            }
        };
        let folded = self.folded(index);
        let start = if matches!(folded, "ngay" | "mung" | "mong") {
            index + 1
        } else {
            index
        };
        if let Some(day) = digits(self.lower(start)).filter(|day| (1..=31).contains(day)) {
            if self.folded(start + 1) == "thang" {
                let month = digits(self.lower(start + 2)).filter(|m| (1..=12).contains(m))?;
                return dated(day, month, start + 3);
            }
        }
        if let Some(day) = day_of_month(self.lower(index)) {
            let of = usize::from(self.lower(index + 1) == "of");
            if let Some(month) = month_name(self.lower(index + 1 + of)) {
                return dated(day, month, index + 2 + of);
            }
        }
        if let Some(month) = month_name(self.lower(index)) {
            if let Some(day) = day_of_month(self.lower(index + 1)) {
                return dated(day, month, index + 2);
            }
        }
        None
    }

    fn weekend_at(&self, index: usize, today: NaiveDate) -> Option<Days> {
        let folded = self.folded(index);
        if folded == "cuoi" && self.folded(index + 1) == "tuan" {
            let next = matches!(
                (self.lower(index + 2), self.folded(index + 2)),
                ("sau" | "tới" | "tiếp", _) | (_, "toi" | "tiep")
            );
            return if next {
                next_weekend(today)
            } else {
                this_weekend(today)
            };
        }
        if self.lower(index) == "weekend" {
            let before = index.checked_sub(1).map_or("", |i| self.lower(i));
            return if before == "next" {
                next_weekend(today)
            } else {
                this_weekend(today)
            };
        }
        None
    }

    fn weekday_at(&self, index: usize, today: NaiveDate) -> Option<NaiveDate> {
        if let Some((weekday, length)) = vietnamese_weekday(self, index) {
            let after = index + length;
            let (word, folded) = (self.lower(after), self.folded(after));
            let next_folded = self.folded(after + 1);
            return match (word, folded) {
                (_, "tuan") if matches!(next_folded, "sau" | "toi" | "tiep") => {
                    next_week(today, weekday)
                }
                // "tới" is the coming one; unaccented "toi" may be "tối" (evening), which
                // means the same day anyway unless it is today.
                ("tới" | "toi", _) => nearest(today, weekday, true),
                _ => nearest(today, weekday, false),
            };
        }
        let weekday = english_weekday(self.lower(index))?;
        let before = index.checked_sub(1).map_or("", |i| self.lower(i));
        let coming = before == "coming";
        let next = before == "next"
            || (self.lower(index + 1) == "next" && self.lower(index + 2) == "week");
        if next {
            next_week(today, weekday)
        } else {
            nearest(today, weekday, coming)
        }
    }

    /// The part of the day a word at `index` names, if it does.
    fn part_word_at(&self, index: usize) -> Option<DayPart> {
        let word = self.lower(index);
        let before = index.checked_sub(1).map_or("", |i| self.folded(i));
        let after = self.folded(index + 1);
        // Unaccented "toi" is mostly "tôi" (I) and "sang" is "sang" (over): they name a
        // part of the day only next to a day or a time.
        let clock = |word: &str| {
            let body = word.trim_end_matches(['h', 'g']);
            !body.is_empty()
                && body
                    .split([':', 'h', 'g'])
                    .all(|part| digits(part).is_some())
        };
        let beside_a_day_or_time = matches!(after, "mai" | "nay" | "hom")
            || matches!(before, "gio" | "ruoi" | "buoi" | "pm")
            || clock(before);
        Some(match word {
            "sáng" | "morning" | "breakfast" => DayPart::Morning,
            "sang" if beside_a_day_or_time => DayPart::Morning,
            "trưa" | "trua" | "noon" | "midday" | "lunch" | "lunchtime" => DayPart::Noon,
            "chiều" | "chieu" | "afternoon" => DayPart::Afternoon,
            "tối" | "evening" | "tonight" | "dinner" => DayPart::Evening,
            "toi" if beside_a_day_or_time => DayPart::Evening,
            "đêm" | "dem" | "khuya" | "night" => DayPart::Night,
            _ => return None,
        })
    }

    /// The first part of the day the message names.
    pub(super) fn day_part(&self) -> Option<DayPart> {
        (0..self.tokens.len()).find_map(|index| self.part_word_at(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_are_read_by_name_and_by_abbreviation() {
        for number in 1..=12u32 {
            let month = chrono::Month::try_from(u8::try_from(number).unwrap()).unwrap();
            let name = month.name().to_lowercase();
            assert_eq!(month_name(&name), Some(number), "{name}");
            assert_eq!(month_name(&name[..3]), Some(number), "{name}");
        }
        assert_eq!(month_name("sept"), Some(9));
        for word in ["", "ma", "mayy", "tháng", "Jan", "decem"] {
            assert_eq!(month_name(word), None, "{word}");
        }
    }

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    fn days(text: &str, today: &str) -> Option<(String, String)> {
        Utterance::new(text)
            .days(day(today))
            .map(|days| (days.first.to_string(), days.last.to_string()))
    }

    fn one(text: &str, today: &str) -> Option<String> {
        let found = days(text, today)?;
        assert_eq!(found.0, found.1, "{text} is one day");
        Some(found.0)
    }

    fn span(first: &str, last: &str) -> Option<(String, String)> {
        Some((first.to_owned(), last.to_owned()))
    }

    #[test]
    fn this_weekend_on_each_day_of_the_week() {
        // Monday 2026-11-23 … Sunday 2026-11-29.
        for today in ["2026-11-23", "2026-11-25", "2026-11-27"] {
            for text in [
                "cuối tuần này",
                "cuoi tuan nay",
                "this weekend",
                "cuối tuần",
            ] {
                assert_eq!(
                    days(text, today),
                    span("2026-11-28", "2026-11-29"),
                    "{text} {today}"
                );
            }
        }
        // Saturday: today and tomorrow; Sunday: today only.
        assert_eq!(
            days("this weekend", "2026-11-28"),
            span("2026-11-28", "2026-11-29")
        );
        assert_eq!(
            days("cuối tuần này", "2026-11-29"),
            span("2026-11-29", "2026-11-29")
        );
    }

    #[test]
    fn next_weekend_is_the_weekend_of_next_week() {
        // Monday, Saturday and Sunday of the week of 23/11: next week is 30/11–6/12.
        for today in ["2026-11-23", "2026-11-28", "2026-11-29"] {
            for text in [
                "cuối tuần sau",
                "cuối tuần tới",
                "cuoi tuan sau",
                "next weekend",
            ] {
                assert_eq!(
                    days(text, today),
                    span("2026-12-05", "2026-12-06"),
                    "{text} {today}"
                );
            }
        }
        // Across the end of the year.
        assert_eq!(
            days("next weekend", "2026-12-31"),
            span("2027-01-09", "2027-01-10")
        );
        assert_eq!(
            days("this weekend", "2026-12-31"),
            span("2027-01-02", "2027-01-03")
        );
    }

    #[test]
    fn relative_days_cross_month_and_year_ends() {
        assert_eq!(one("ngày mai", "2026-11-30").as_deref(), Some("2026-12-01"));
        assert_eq!(one("tomorrow", "2026-12-31").as_deref(), Some("2027-01-01"));
        assert_eq!(one("ngày kia", "2026-12-31").as_deref(), Some("2027-01-02"));
        assert_eq!(one("mốt", "2026-12-30").as_deref(), Some("2027-01-01"));
        assert_eq!(
            one("the day after tomorrow", "2026-11-29").as_deref(),
            Some("2026-12-01")
        );
        assert_eq!(one("ngay mot", "2026-11-29").as_deref(), Some("2026-12-01"));
        assert_eq!(one("tối nay", "2026-11-29").as_deref(), Some("2026-11-29"));
        assert_eq!(one("trưa mai", "2026-11-29").as_deref(), Some("2026-11-30"));
        assert_eq!(one("sang mai", "2026-11-29").as_deref(), Some("2026-11-30"));
        assert_eq!(one("tonight", "2026-11-29").as_deref(), Some("2026-11-29"));
        assert_eq!(
            one("3 ngày nữa", "2026-12-30").as_deref(),
            Some("2027-01-02")
        );
        assert_eq!(
            one("in 2 days", "2026-11-29").as_deref(),
            Some("2026-12-01")
        );
        assert_eq!(one("thời tiết thế nào", "2026-11-29"), None);
        // "tôi" (I) and "ngày một ngày hai" are no days.
        assert_eq!(one("toi muon dat ban", "2026-11-29"), None);
        assert_eq!(
            one("sau ngày mai", "2026-11-29").as_deref(),
            Some("2026-12-01")
        );
        assert_eq!(one("hai mươi mốt người", "2026-11-29"), None);
        // Yesterday stays yesterday, for the tool to refuse: never today.
        assert_eq!(
            one("tối hôm qua", "2026-12-01").as_deref(),
            Some("2026-11-30")
        );
        assert_eq!(one("bữa qua", "2027-01-01").as_deref(), Some("2026-12-31"));
        assert_eq!(one("hom qua", "2026-11-29").as_deref(), Some("2026-11-28"));
        assert_eq!(
            one("yesterday at 7pm", "2026-11-29").as_deref(),
            Some("2026-11-28")
        );
        // "qua" alone is "via", "over": no day.
        assert_eq!(one("đi qua Hồ Gươm", "2026-11-29"), None);
    }

    #[test]
    fn weekdays() {
        // Sunday 2026-11-29: the week of Monday 30/11 is "next week".
        let sunday = "2026-11-29";
        for (text, expected) in [
            ("thứ Sáu", "2026-12-04"),
            ("thứ 6", "2026-12-04"),
            ("thu 6", "2026-12-04"),
            ("t6", "2026-12-04"),
            ("thứ Sáu tới", "2026-12-04"),
            ("thứ 6 tuần sau", "2026-12-04"),
            ("on Friday", "2026-12-04"),
            ("next Friday", "2026-12-04"),
            ("chủ nhật", "2026-11-29"),
            ("chu nhat toi", "2026-12-06"),
            ("Sunday", "2026-11-29"),
            ("this coming Sunday", "2026-12-06"),
            ("next Sunday", "2026-12-06"),
        ] {
            assert_eq!(one(text, sunday).as_deref(), Some(expected), "{text}");
        }
        // Thursday 2026-12-03.
        let thursday = "2026-12-03";
        for (text, expected) in [
            ("thứ Sáu", "2026-12-04"),
            ("thứ Sáu tới", "2026-12-04"),
            ("thứ 6 tuần sau", "2026-12-11"),
            ("thứ sáu tuần tới", "2026-12-11"),
            ("Friday", "2026-12-04"),
            ("next Friday", "2026-12-11"),
            ("Friday next week", "2026-12-11"),
            ("thứ Năm", "2026-12-03"),
            ("thứ Năm tới", "2026-12-10"),
            ("thứ 2", "2026-12-07"),
            ("Monday", "2026-12-07"),
        ] {
            assert_eq!(one(text, thursday).as_deref(), Some(expected), "{text}");
        }
        // New Year's Eve is a Thursday: Friday is next year.
        assert_eq!(one("thứ Sáu", "2026-12-31").as_deref(), Some("2027-01-01"));
        assert_eq!(
            one("next Monday", "2026-12-31").as_deref(),
            Some("2027-01-04")
        );
    }

    #[test]
    fn calendar_dates() {
        let today = "2026-11-29";
        for text in [
            "24/12",
            "24/12/2026",
            "2026-12-24",
            "ngày 24 tháng 12",
            "ngay 24 thang 12",
            "24 tháng 12",
            "ngày 24/12",
            "Dec 24",
            "December 24th",
            "24 December",
            "24th of December",
            "24 Dec 2026",
        ] {
            assert_eq!(one(text, today).as_deref(), Some("2026-12-24"), "{text}");
        }
        // Past dates are next year's; a year written is kept.
        assert_eq!(one("24/12", "2026-12-31").as_deref(), Some("2027-12-24"));
        assert_eq!(one("1/1", "2026-12-31").as_deref(), Some("2027-01-01"));
        assert_eq!(one("Jan 1st", "2026-12-31").as_deref(), Some("2027-01-01"));
        assert_eq!(one("31/12", "2026-12-31").as_deref(), Some("2026-12-31"));
        assert_eq!(
            one("ngày 5 tháng 1 năm 2027", today).as_deref(),
            Some("2027-01-05")
        );
        assert_eq!(one("29/2", today).as_deref(), Some("2028-02-29"));
        // A day the month lacks is no date.
        assert_eq!(one("31/11", today), None);
        assert_eq!(one("ngày 31 tháng 11", today), None);
    }

    #[test]
    fn parts_of_the_day() {
        let part = |text: &str| Utterance::new(text).day_part();
        assert_eq!(part("tối mai"), Some(DayPart::Evening));
        assert_eq!(part("toi mai"), Some(DayPart::Evening));
        assert_eq!(part("7h toi"), Some(DayPart::Evening));
        assert_eq!(part("toi muon dat ban"), None);
        assert_eq!(part("trưa mai"), Some(DayPart::Noon));
        assert_eq!(part("tomorrow lunchtime"), Some(DayPart::Noon));
        assert_eq!(part("sáng mai"), Some(DayPart::Morning));
        assert_eq!(part("sang trong"), None);
        assert_eq!(part("chiều nay"), Some(DayPart::Afternoon));
        assert_eq!(part("tonight"), Some(DayPart::Evening));
    }
}

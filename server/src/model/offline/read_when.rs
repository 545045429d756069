//! Reading when: clock times ("19:00", "7 giờ tối", "7pm"), calendar dates and the
//! relative days ("mai", "tomorrow"), all in Vietnam's time.

use super::read::{digits, number, Utterance};
use super::VIETNAM;
use chrono::{DateTime, Datelike, Days, FixedOffset, NaiveDate, NaiveTime};

impl Utterance {
    /// Whether the time of day is in the afternoon or evening ("7 giờ tối" is 19:00).
    fn is_evening(&self) -> bool {
        if self.has("tối|chiều|chieu|evening|tonight|dinner") {
            return true;
        }
        // Unaccented "toi" is usually "tôi" (I); it means evening only next to a time or day.
        (0..self.tokens.len()).any(|index| {
            self.lower(index) == "toi"
                && (index.checked_sub(1).is_some_and(|before| {
                    self.folded(before) == "gio" || clock_token(self.lower(before)).is_some()
                }) || matches!(self.lower(index + 1), "mai" | "nay"))
        })
    }

    pub(super) fn time(&self) -> Option<NaiveTime> {
        let evening = self.is_evening();
        for index in 0..self.tokens.len() {
            let token = self.lower(index);
            let next = self.lower(index + 1);
            let mut found = clock_token(token);
            if found.is_none() {
                if let Some(hour) = number(token) {
                    if self.folded(index + 1) == "gio" {
                        let minute = match (self.lower(index + 2), self.folded(index + 2)) {
                            (_, "ruoi") => 30,
                            (word, _) => digits(word).filter(|m| *m < 60).unwrap_or(0),
                        };
                        found = Some((u32::from(hour), minute, None));
                    } else if digits(token).is_some() && matches!(next, "pm" | "am" | "o'clock") {
                        found = Some((u32::from(hour), 0, None));
                    }
                }
            }
            let Some((hour, minute, mut meridiem)) = found else {
                continue;
            };
            if meridiem.is_none() {
                meridiem = match next {
                    "pm" => Some(Meridiem::Pm),
                    "am" => Some(Meridiem::Am),
                    _ => None,
                };
            }
            let hour = match meridiem {
                Some(Meridiem::Pm) if hour < 12 => hour + 12,
                Some(Meridiem::Am) if hour == 12 => 0,
                None if evening && hour < 12 => hour + 12,
                _ => hour,
            };
            if let Some(time) = NaiveTime::from_hms_opt(hour, minute, 0) {
                return Some(time);
            }
        }
        None
    }

    pub(super) fn date(&self, today: NaiveDate) -> Option<NaiveDate> {
        for token in &self.tokens {
            if let Some(date) = calendar_date(&token.lower, today) {
                return Some(date);
            }
        }
        let offset = if self.has("day after tomorrow|ngày kia|ngay kia|ngày mốt|mốt") {
            2
        } else if self.has("mai|tomorrow") {
            1
        } else if self.has("hôm nay|hom nay|today|tonight|tối nay|toi nay") {
            0
        } else {
            return None;
        };
        today.checked_add_days(Days::new(offset))
    }

    /// When the table is wanted. A time without a date is the next time it comes round.
    pub(super) fn starts_at(&self, now: DateTime<FixedOffset>) -> Option<DateTime<FixedOffset>> {
        let time = self.time()?;
        let today = now.date_naive();
        match self.date(today) {
            Some(date) => local(date, time),
            None => next_occurrence(now, time),
        }
    }

    /// Forecast length: "3 ngày", "5 days"; a forecast mentioning tomorrow needs two days.
    pub(super) fn forecast_days(&self) -> Option<u8> {
        for index in 0..self.tokens.len() {
            if let Some(count) = number(self.lower(index)) {
                let unit = matches!(self.folded(index + 1), "ngay" | "days" | "day");
                // "sau ngày mai" is "the day after tomorrow", not six days.
                let names_a_day = matches!(self.lower(index + 2), "mai" | "kia" | "mốt");
                if unit && !names_a_day && (1..=7).contains(&count) {
                    return Some(count);
                }
            }
        }
        self.has("mai|tomorrow").then_some(2)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meridiem {
    Am,
    Pm,
}

/// A time written as one word: "19:00", "7:30pm", "19h", "7h30", "7pm".
fn clock_token(token: &str) -> Option<(u32, u32, Option<Meridiem>)> {
    let (body, meridiem) = if let Some(body) = token.strip_suffix("pm") {
        (body, Some(Meridiem::Pm))
    } else if let Some(body) = token.strip_suffix("am") {
        (body, Some(Meridiem::Am))
    } else {
        (token, None)
    };
    let (hour, minute) = if let Some((hour, minute)) = body.split_once(':') {
        (digits(hour)?, digits(minute)?)
    } else if let Some((hour, minute)) = body.split_once('h') {
        let minute = if minute.is_empty() {
            0
        } else {
            digits(minute)?
        };
        (digits(hour)?, minute)
    } else if meridiem.is_some() {
        (digits(body)?, 0)
    } else {
        return None;
    };
    (hour < 24 && minute < 60).then_some((hour, minute, meridiem))
}

/// "2026-12-24", "24/12/2026" or "24/12" (the next 24 December).
fn calendar_date(token: &str, today: NaiveDate) -> Option<NaiveDate> {
    if token.len() == 10 && token.as_bytes().get(4) == Some(&b'-') {
        return NaiveDate::parse_from_str(token, "%Y-%m-%d").ok();
    }
    let parts: Vec<&str> = token.split('/').collect();
    match parts.as_slice() {
        [day, month] => {
            let (day, month) = (digits(day)?, digits(month)?);
            let this_year = NaiveDate::from_ymd_opt(today.year(), month, day)?;
            if this_year >= today {
                Some(this_year)
            } else {
                NaiveDate::from_ymd_opt(today.year() + 1, month, day)
            }
        }
        [day, month, year] if year.len() == 4 => {
            let year = i32::try_from(digits(year)?).ok()?;
            NaiveDate::from_ymd_opt(year, digits(month)?, digits(day)?)
        }
        _ => None,
    }
}

pub(super) fn local(date: NaiveDate, time: NaiveTime) -> Option<DateTime<FixedOffset>> {
    date.and_time(time).and_local_timezone(VIETNAM).single()
}

pub(super) fn next_occurrence(
    now: DateTime<FixedOffset>,
    time: NaiveTime,
) -> Option<DateTime<FixedOffset>> {
    let today = now.date_naive();
    let candidate = local(today, time)?;
    if candidate > now {
        Some(candidate)
    } else {
        local(today.checked_add_days(Days::new(1))?, time)
    }
}

pub(super) fn rfc3339(at: &DateTime<FixedOffset>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

//! Reading clock times ("19:00", "7 giờ tối", "7h30", "7 rưỡi", "7pm", "noon") and when a
//! table is wanted, all in Vietnam's time. Which day is read in `read_date`.

use super::read::{digits, Utterance};
use super::read_date::DayPart;
use super::VIETNAM;
use chrono::{DateTime, Days, FixedOffset, NaiveDate, NaiveTime};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meridiem {
    Am,
    Pm,
}

/// An hour and minute as written, before the part of the day is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Clock {
    hour: u32,
    minute: u32,
    meridiem: Option<Meridiem>,
}

impl Clock {
    fn new(hour: u32, minute: u32) -> Self {
        Self {
            hour,
            minute,
            meridiem: None,
        }
    }

    /// Whether a day has this time: hours 0–23, minutes 0–59 ("12pm" too).
    fn possible(self) -> bool {
        self.hour < 24 && self.minute < 60
    }

    /// The time of day: "7 giờ tối" is 19:00, "1 giờ trưa" 13:00, "12 giờ đêm" midnight.
    fn time(self, part: Option<DayPart>) -> Option<NaiveTime> {
        let hour = self.hour;
        let hour = match (self.meridiem, part) {
            (Some(Meridiem::Pm), _) if hour < 12 => hour + 12,
            (Some(Meridiem::Am), _) if hour == 12 => 0,
            (Some(_), _) => hour,
            (None, Some(DayPart::Noon)) if (1..=5).contains(&hour) => hour + 12,
            (None, Some(DayPart::Afternoon | DayPart::Evening)) if (1..12).contains(&hour) => {
                hour + 12
            }
            (None, Some(DayPart::Night)) if (6..12).contains(&hour) => hour + 12,
            (None, Some(DayPart::Night)) if hour == 12 => 0,
            _ => hour,
        };
        NaiveTime::from_hms_opt(hour, self.minute, 0)
    }
}

/// A time as written in a message, before it is known whether a day has it.
struct Written {
    clock: Clock,
    /// The word after it.
    end: usize,
    /// Only the word before it ("lúc 7", "at 7") makes the number a time.
    introduced: bool,
}

impl Written {
    fn new(clock: Clock, end: usize) -> Self {
        Self {
            clock,
            end,
            introduced: false,
        }
    }
}

fn meridiem(word: &str) -> Option<Meridiem> {
    match word {
        "pm" | "p.m" => Some(Meridiem::Pm),
        "am" | "a.m" => Some(Meridiem::Am),
        _ => None,
    }
}

impl Utterance {
    pub(super) fn time(&self) -> Option<NaiveTime> {
        self.time_in(None)
    }

    /// The time the message names, an hour read in the part of the day it names or else in
    /// `earlier` ("Saturday evening", then "make it 7:30", is 19:30).
    pub(super) fn time_in(&self, earlier: Option<DayPart>) -> Option<NaiveTime> {
        let part = self.day_part().or(earlier);
        if let Some(clock) = (0..self.tokens.len()).find_map(|index| self.clock_at(index)) {
            return clock.time(part);
        }
        // "trưa mai", "noon", "tomorrow lunchtime": a part of the day that is one time.
        if part == Some(DayPart::Noon) {
            return NaiveTime::from_hms_opt(12, 0, 0);
        }
        None
    }

    /// A clock time written that no day has ("25h", "19:75", "26 giờ"), as written: the
    /// person meant a time, so the answer says why it was not taken instead of asking for
    /// a time as if none had been given. A bare number ("lúc 36") is not read as one: it
    /// may be a street number.
    pub(super) fn impossible_time(&self) -> Option<String> {
        (0..self.tokens.len()).find_map(|index| {
            let written = self.written_clock_at(index)?;
            if written.introduced || written.clock.possible() {
                return None;
            }
            let words: Vec<&str> = (index..written.end).map(|at| self.lower(at)).collect();
            Some(words.join(" "))
        })
    }

    /// A time written from word `index` on, if a day has it.
    fn clock_at(&self, index: usize) -> Option<Clock> {
        self.written_clock_at(index)
            .map(|written| written.clock)
            .filter(|clock| clock.possible())
    }

    /// A time written from word `index` on, whether or not a day has it.
    fn written_clock_at(&self, index: usize) -> Option<Written> {
        let word = self.lower(index);
        if let Some(mut clock) = clock_shape(word) {
            clock.meridiem = clock.meridiem.or(meridiem(self.lower(index + 1)));
            return Some(Written::new(clock, index + 1));
        }
        if let Some((clock, end)) = self.english_clock_at(index) {
            return Some(Written::new(clock, end));
        }
        let (hour, length) = self.number_at(index)?;
        let hour = u32::from(hour);
        let after = index + length;
        let mut introduced = false;
        let (mut clock, end) = match self.folded(after) {
            // "7 giờ", "7 giờ 30 (phút)", "7 giờ rưỡi", "8 giờ kém 15".
            "gio" | "h" | "g" => match self.folded(after + 1) {
                "ruoi" => (Clock::new(hour, 30), after + 2),
                "kem" => {
                    let early = digits(self.lower(after + 2)).filter(|m| (1..60).contains(m))?;
                    (Clock::new(hour.checked_sub(1)?, 60 - early), after + 3)
                }
                minute_word => match digits(minute_word).filter(|m| *m < 60) {
                    Some(minute) => (Clock::new(hour, minute), after + 2),
                    None => (Clock::new(hour, 0), after + 1),
                },
            },
            // "7 rưỡi tối".
            "ruoi" => (Clock::new(hour, 30), after + 1),
            "pm" | "am" | "p.m" | "a.m" => (Clock::new(hour, 0), after),
            "o'clock" | "oclock" => (Clock::new(hour, 0), after + 1),
            _ => {
                // "lúc 7", "at 7": an hour after a word that introduces a time.
                let before = index.checked_sub(1).map_or("", |i| self.folded(i));
                introduced = matches!(before, "luc" | "at" | "around" | "khoang" | "tam");
                if !introduced || digits(word).is_none() {
                    return None;
                }
                (Clock::new(hour, 0), after)
            }
        };
        clock.meridiem = meridiem(self.lower(end));
        Some(Written {
            clock,
            end,
            introduced,
        })
    }

    /// "half past 7", "quarter past 7", "quarter to 8".
    fn english_clock_at(&self, index: usize) -> Option<(Clock, usize)> {
        let (minute, earlier) = match (self.lower(index), self.lower(index + 1)) {
            ("half", "past") => (30, false),
            ("quarter", "past") => (15, false),
            ("quarter", "to") => (45, true),
            _ => return None,
        };
        let (hour, length) = self.number_at(index + 2)?;
        let hour = u32::from(hour);
        let hour = if earlier { hour.checked_sub(1)? } else { hour };
        let mut clock = Clock::new(hour, minute);
        let end = index + 2 + length;
        clock.meridiem = meridiem(self.lower(end));
        Some((clock, end))
    }

    /// When the table is wanted. A time without a date is the next time it comes round.
    pub(super) fn starts_at(&self, now: DateTime<FixedOffset>) -> Option<DateTime<FixedOffset>> {
        let time = self.time()?;
        match self.date(now.date_naive()) {
            Some(date) => local(date, time),
            None => next_occurrence(now, time),
        }
    }

    /// A forecast length: "3 ngày (tới)", "5 days", "next 2 days".
    pub(super) fn forecast_length(&self) -> Option<u8> {
        (0..self.tokens.len()).find_map(|index| {
            let (count, length) = self.number_at(index)?;
            let unit = matches!(self.folded(index + length), "ngay" | "days" | "day");
            // "sau ngày mai" is "the day after tomorrow", "3 ngày nữa" one day: no lengths.
            let after = self.folded(index + length + 1);
            let names_a_day = matches!(after, "mai" | "kia" | "mot" | "nua");
            let in_days = index > 0 && self.lower(index - 1) == "in";
            (unit && !names_a_day && !in_days && (1..=7).contains(&count)).then_some(count)
        })
    }
}

/// A time written as one word, whether or not a day has it: "19:00", "7:30pm", "19h",
/// "7h30", "19g30", "7pm", and "25h".
fn clock_shape(token: &str) -> Option<Clock> {
    let (body, meridiem) = if let Some(body) = token.strip_suffix("pm") {
        (body, Some(Meridiem::Pm))
    } else if let Some(body) = token.strip_suffix("am") {
        (body, Some(Meridiem::Am))
    } else {
        (token, None)
    };
    let (hour, minute) = if let Some((hour, minute)) = body.split_once(':') {
        (digits(hour)?, digits(minute)?)
    } else if let Some((hour, minute)) = body.split_once(['h', 'g']) {
        // "19h30p": p is phút (minutes).
        let minute = minute.strip_suffix('p').unwrap_or(minute);
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
    Some(Clock {
        hour,
        minute,
        meridiem,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn time(text: &str) -> Option<String> {
        Utterance::new(text)
            .time()
            .map(|time| time.format("%H:%M").to_string())
    }

    #[test]
    fn times_in_words_and_digits() {
        for (text, expected) in [
            ("lúc 19:00", "19:00"),
            ("7 giờ tối", "19:00"),
            ("7 gio toi", "19:00"),
            ("7h tối", "19:00"),
            ("7h toi", "19:00"),
            ("19h", "19:00"),
            ("19h30", "19:30"),
            ("19g30", "19:30"),
            ("7 rưỡi tối", "19:30"),
            ("7 giờ rưỡi tối nay", "19:30"),
            ("bảy giờ tối", "19:00"),
            ("7 giờ 45 tối", "19:45"),
            ("8 giờ kém 15 tối", "19:45"),
            ("7pm", "19:00"),
            ("7 pm", "19:00"),
            ("7:30 pm", "19:30"),
            ("7:30pm", "19:30"),
            ("12pm", "12:00"),
            ("noon", "12:00"),
            ("trưa mai", "12:00"),
            ("tomorrow lunchtime", "12:00"),
            ("1 giờ trưa", "13:00"),
            ("11 giờ trưa", "11:00"),
            ("3 giờ chiều", "15:00"),
            ("tonight at 7", "19:00"),
            ("at 8 in the evening", "20:00"),
            ("half past 7 tonight", "19:30"),
            ("quarter to 8 pm", "19:45"),
            ("10 giờ đêm", "22:00"),
            ("8 giờ sáng", "08:00"),
            ("7 o'clock", "07:00"),
            // "Tôi" (I) is not "tối" (evening).
            ("Tôi muốn đặt lúc 7 giờ", "07:00"),
            ("toi muon dat luc 7 gio", "07:00"),
        ] {
            assert_eq!(time(text).as_deref(), Some(expected), "{text}");
        }
        for text in [
            "sáng mai",
            "tối nay",
            "cho 4 người",
            "for 7 days",
            "at 25",
            "2 ngày",
        ] {
            assert_eq!(time(text), None, "{text}");
        }
    }

    #[test]
    fn times_no_day_has_are_kept_as_written() {
        for (text, written) in [
            ("Đặt bàn tối mai lúc 25h", "25h"),
            ("lúc 19:75", "19:75"),
            ("26 giờ tối", "26 giờ"),
            ("luc 25 gio 30", "25 gio 30"),
            ("at 24:00", "24:00"),
            ("7h75", "7h75"),
        ] {
            let said = Utterance::new(text);
            assert_eq!(said.impossible_time().as_deref(), Some(written), "{text}");
            assert_eq!(said.time(), None, "{text}");
        }
        // Possible times, and numbers that are not written as times.
        for text in [
            "lúc 19h",
            "23:59",
            "at 36 Hàng Bè",
            "cho 25 người",
            "lúc 7 giờ",
        ] {
            assert_eq!(Utterance::new(text).impossible_time(), None, "{text}");
        }
    }

    #[test]
    fn forecast_lengths() {
        let length = |text: &str| Utterance::new(text).forecast_length();
        assert_eq!(length("3 ngày tới"), Some(3));
        assert_eq!(length("next 5 days"), Some(5));
        assert_eq!(length("ba ngày"), Some(3));
        assert_eq!(length("sau ngày mai"), None);
        assert_eq!(length("3 ngày nữa"), None);
        assert_eq!(length("in 3 days"), None);
        assert_eq!(length("10 ngày"), None);
    }
}

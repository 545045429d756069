//! `searchRestaurants` and the catalogue helpers booking shares: reading a restaurant,
//! its seating times, and the seats confirmed bookings already hold.
//!
//! Rows are data, not code: times and offsets are parsed with typed errors, never unwrapped.

use std::collections::HashMap;

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, TimeZone, Timelike, Utc};
use shared::tools::{FreeSlot, RestaurantSummary, SearchRestaurantsInput, SearchRestaurantsOutput};

use super::{
    city::{canonical_city, cities_list, fold, vietnam_today, words},
    ExecError, ToolContext,
};
use crate::db::Pool;

/// Most restaurants one search returns.
pub const MAX_RESULTS: usize = 8;

/// Minutes between two seating start times.
const SLOT_MINUTES: u32 = 30;

/// The last seating is this long before closing.
const LAST_SEATING_BEFORE_CLOSE_MINUTES: u32 = 60;

/// The columns of `restaurants` every reader selects, in `RestaurantRow`'s order. A macro
/// so queries stay `&'static str` (sqlx 0.9 refuses runtime-built SQL).
macro_rules! columns {
    () => {
        "id, name, city, address, cuisine, price_level, opens_at, closes_at, utc_offset, \
         seats_per_slot"
    };
}

/// One row of the catalogue.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RestaurantRow {
    /// Slug, e.g. "hn-cha-ca-thang-long".
    pub id: String,
    /// Name.
    pub name: String,
    /// Canonical city name.
    pub city: String,
    /// Street address.
    pub address: String,
    /// Kind of food.
    pub cuisine: String,
    /// 1 (cheap) to 4 (expensive).
    pub price_level: i64,
    /// Local opening time, "HH:MM".
    pub opens_at: String,
    /// Local closing time, "HH:MM".
    pub closes_at: String,
    /// UTC offset, "+07:00".
    pub utc_offset: String,
    /// Seats that can be booked for one start time.
    pub seats_per_slot: i64,
}

/// A row with its search words, for matching a cuisine, and its customer review.
#[derive(Debug, Clone, sqlx::FromRow)]
struct SearchRow {
    #[sqlx(flatten)]
    row: RestaurantRow,
    search_text: String,
    /// A customer's words, passed on as data (see `RestaurantSummary::review`); only the
    /// search reads it, so the other readers of `RestaurantRow` stay as they are.
    review: Option<String>,
}

/// Parses exactly "HH:MM" (00:00–23:59) into minutes after midnight.
fn parse_hhmm(id: &str, column: &str, value: &str) -> Result<u32, ExecError> {
    let bad = || {
        ExecError::Internal(format!(
            "restaurant {id}: {column} {value:?} is not a time \"HH:MM\""
        ))
    };
    let bytes = value.as_bytes();
    if bytes.len() != 5 || bytes[2] != b':' {
        return Err(bad());
    }
    let digit = |i: usize| match bytes[i] {
        b @ b'0'..=b'9' => Ok(u32::from(b - b'0')),
        _ => Err(bad()),
    };
    let hours = digit(0)? * 10 + digit(1)?;
    let minutes = digit(3)? * 10 + digit(4)?;
    if hours > 23 || minutes > 59 {
        return Err(bad());
    }
    Ok(hours * 60 + minutes)
}

impl RestaurantRow {
    /// The restaurant's UTC offset (FixedOffset), parsed from utc_offset; bad data → typed
    /// error, no panic.
    pub fn offset(&self) -> Result<FixedOffset, ExecError> {
        let value = self.utc_offset.as_str();
        let bad = || {
            ExecError::Internal(format!(
                "restaurant {}: utc_offset {value:?} is not an offset \"+HH:MM\"",
                self.id
            ))
        };
        let bytes = value.as_bytes();
        if bytes.len() != 6 || bytes[3] != b':' {
            return Err(bad());
        }
        let sign = match bytes[0] {
            b'+' => 1,
            b'-' => -1,
            _ => return Err(bad()),
        };
        let digit = |i: usize| match bytes[i] {
            b @ b'0'..=b'9' => Ok(i32::from(b - b'0')),
            _ => Err(bad()),
        };
        let hours = digit(1)? * 10 + digit(2)?;
        let minutes = digit(4)? * 10 + digit(5)?;
        if hours > 14 || minutes > 59 {
            return Err(bad());
        }
        FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60)).ok_or_else(bad)
    }

    /// Opening time and last seating, in minutes after local midnight.
    fn seating_window(&self) -> Result<(u32, u32), ExecError> {
        let opens = parse_hhmm(&self.id, "opens_at", &self.opens_at)?;
        let closes = parse_hhmm(&self.id, "closes_at", &self.closes_at)?;
        match closes.checked_sub(LAST_SEATING_BEFORE_CLOSE_MINUTES) {
            Some(last) if last >= opens => Ok((opens, last)),
            _ => Err(ExecError::Internal(format!(
                "restaurant {}: closes_at {:?} is not at least an hour after opens_at {:?} \
                 (hours past midnight are not supported)",
                self.id, self.closes_at, self.opens_at
            ))),
        }
    }

    /// Seating start times on `date` (local): every 30 min from opens_at to one hour before
    /// closes_at inclusive.
    pub fn slots_on(&self, date: NaiveDate) -> Result<Vec<DateTime<FixedOffset>>, ExecError> {
        let offset = self.offset()?;
        let (opens, last) = self.seating_window()?;
        (opens..=last)
            .step_by(SLOT_MINUTES as usize)
            .map(|minute| {
                NaiveTime::from_hms_opt(minute / 60, minute % 60, 0)
                    .and_then(|time| offset.from_local_datetime(&date.and_time(time)).single())
                    .ok_or_else(|| {
                        ExecError::Internal(format!(
                            "restaurant {}: no local time {date} minute {minute}",
                            self.id
                        ))
                    })
            })
            .collect()
    }

    /// Whether a party may be seated at `starts_at` (converted to the restaurant's offset):
    /// opens_at <= local time <= closes_at - 1h.
    pub fn is_open_for_seating(&self, starts_at: DateTime<FixedOffset>) -> Result<bool, ExecError> {
        let offset = self.offset()?;
        let (opens, last) = self.seating_window()?;
        let local = starts_at.with_timezone(&offset).time();
        let second = local.num_seconds_from_midnight();
        let (opens, last) = (opens * 60, last * 60);
        Ok(opens <= second && (second < last || (second == last && local.nanosecond() == 0)))
    }

    /// "10:00–22:00"
    pub fn opening_hours(&self) -> String {
        format!("{}–{}", self.opens_at, self.closes_at)
    }

    /// `price_level` as the 1–4 the tool reports (out-of-range data is clamped).
    fn price(&self) -> u8 {
        u8::try_from(self.price_level.clamp(1, 4)).unwrap_or(1)
    }

    /// `seats_per_slot` as a count (negative data counts as none).
    fn seats(&self) -> u32 {
        u32::try_from(self.seats_per_slot.max(0)).unwrap_or(u32::MAX)
    }

    fn summary(&self, free_slots: Vec<FreeSlot>, review: Option<String>) -> RestaurantSummary {
        RestaurantSummary {
            id: self.id.clone(),
            name: self.name.clone(),
            address: self.address.clone(),
            city: self.city.clone(),
            cuisine: self.cuisine.clone(),
            price_level: self.price(),
            opening_hours: self.opening_hours(),
            free_slots,
            review,
        }
    }
}

/// The restaurant with this id, if any; through the pool, or inside a transaction (a
/// booking reads it on the connection that holds the write lock).
pub async fn find<'c, E>(db: E, id: &str) -> Result<Option<RestaurantRow>, sqlx::Error>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    sqlx::query_as::<_, RestaurantRow>(concat!(
        "SELECT ",
        columns!(),
        " FROM restaurants WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(db)
    .await
}

/// Seats already taken by CONFIRMED bookings at exactly this start (UTC,
/// 'YYYY-MM-DDTHH:MM:SSZ').
pub async fn seats_taken(
    db: &Pool,
    restaurant_id: &str,
    starts_at_utc: &str,
) -> Result<u32, sqlx::Error> {
    // CAST: SUM's type differs between backends (see booking::run); BIGINT reads as i64.
    let taken: i64 = sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(party_size), 0) AS BIGINT) FROM bookings \
         WHERE restaurant_id = $1 AND starts_at_utc = $2 AND status = 'confirmed'",
    )
    .bind(restaurant_id)
    .bind(starts_at_utc)
    .fetch_one(db)
    .await?;
    Ok(u32::try_from(taken.max(0)).unwrap_or(u32::MAX))
}

/// Seats taken by confirmed bookings per start (UTC key) between two UTC keys inclusive.
async fn seats_taken_between(
    db: &Pool,
    restaurant_id: &str,
    first_utc: &str,
    last_utc: &str,
) -> Result<HashMap<String, u32>, sqlx::Error> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT starts_at_utc, CAST(COALESCE(SUM(party_size), 0) AS BIGINT) FROM bookings \
         WHERE restaurant_id = $1 AND status = 'confirmed' \
           AND starts_at_utc >= $2 AND starts_at_utc <= $3 \
         GROUP BY starts_at_utc",
    )
    .bind(restaurant_id)
    .bind(first_utc)
    .bind(last_utc)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(key, taken)| (key, u32::try_from(taken.max(0)).unwrap_or(u32::MAX)))
        .collect())
}

/// The UTC key used in bookings.starts_at_utc.
pub fn utc_key(starts_at: DateTime<FixedOffset>) -> String {
    starts_at
        .with_timezone(&Utc)
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Of a restaurant's `slots` (from `slots_on`), those that start after `now` and still
/// have room for `party` people.
async fn free_slots(
    db: &Pool,
    restaurant: &RestaurantRow,
    slots: Vec<DateTime<FixedOffset>>,
    now: DateTime<Utc>,
    party: u32,
) -> Result<Vec<FreeSlot>, sqlx::Error> {
    let slots: Vec<_> = slots
        .into_iter()
        .filter(|slot| slot.with_timezone(&Utc) > now)
        .collect();
    let (Some(first), Some(last)) = (slots.first(), slots.last()) else {
        return Ok(Vec::new());
    };
    let taken = seats_taken_between(db, &restaurant.id, &utc_key(*first), &utc_key(*last)).await?;
    let capacity = restaurant.seats();
    Ok(slots
        .into_iter()
        .filter_map(|starts_at| {
            let used = taken.get(&utc_key(starts_at)).copied().unwrap_or(0);
            let seats_left = capacity.saturating_sub(used);
            (seats_left >= party).then_some(FreeSlot {
                starts_at,
                seats_left,
            })
        })
        .collect())
}

/// Leading words that only say "food" / "place": "món chay", "quán phở", "nhà hàng Nhật".
const LEADING_FILLER: [&str; 5] = ["mon", "quan", "nha hang", "do an", "am thuc"];

/// Trailing words of the same kind: "Italian food", "seafood restaurant".
const TRAILING_FILLER: [&str; 5] = ["food", "restaurant", "restaurants", "cuisine", "place"];

/// English (and common loan) words mapped to the catalogue's Vietnamese cuisine words.
const SYNONYMS: [(&str, &str); 24] = [
    ("italian", "y"),
    ("italy", "y"),
    ("pizza", "y"),
    ("pasta", "y"),
    ("japanese", "nhat"),
    ("japan", "nhat"),
    ("sushi", "nhat"),
    ("french", "phap"),
    ("france", "phap"),
    ("seafood", "hai san"),
    ("vegetarian", "chay"),
    ("vegan", "chay"),
    ("hotpot", "lau"),
    ("hot pot", "lau"),
    ("bbq", "nuong"),
    ("barbecue", "nuong"),
    ("grill", "nuong"),
    ("grilled", "nuong"),
    ("coffee", "ca phe"),
    ("cafe", "ca phe"),
    ("noodle soup", "pho"),
    ("broken rice", "com tam"),
    ("sandwich", "banh mi"),
    ("royal", "cung dinh"),
];

/// The folded words a searched cuisine may appear as in `search_text`.
fn cuisine_terms(cuisine: &str) -> Vec<String> {
    let mut query = words(cuisine);
    for filler in LEADING_FILLER {
        if let Some(rest) = query.strip_prefix(filler).and_then(|r| r.strip_prefix(' ')) {
            query = rest.to_owned();
        }
    }
    for filler in TRAILING_FILLER {
        if let Some(rest) = query.strip_suffix(filler).and_then(|r| r.strip_suffix(' ')) {
            query = rest.to_owned();
        }
    }
    if query.is_empty() {
        query = words(cuisine);
    }
    let mut terms = vec![query.clone()];
    terms.extend(
        SYNONYMS
            .iter()
            .filter(|(english, _)| *english == query)
            .map(|(_, vietnamese)| (*vietnamese).to_owned()),
    );
    terms
}

/// Whether `term` occurs in `search_text` starting at a word: whole words for short terms
/// ("y" must not match "huynh"), a word prefix from three letters on ("nuo" finds "nuong").
fn text_matches(search_text: &str, term: &str) -> bool {
    if term.is_empty() {
        return true;
    }
    let text = format!(" {search_text} ");
    text.contains(&format!(" {term} "))
        || (term.chars().count() >= 3 && text.contains(&format!(" {term}")))
}

fn empty(reason: String) -> SearchRestaurantsOutput {
    SearchRestaurantsOutput {
        restaurants: Vec::new(),
        no_results_reason: Some(reason),
    }
}

/// Runs `searchRestaurants`.
pub async fn run(
    input: &SearchRestaurantsInput,
    ctx: &ToolContext,
) -> Result<SearchRestaurantsOutput, ExecError> {
    let typed_city = input.city.trim();
    let Some(city) = canonical_city(typed_city) else {
        return Ok(empty(format!(
            "Chưa có dữ liệu nhà hàng ở \"{typed_city}\". Các thành phố hiện có: {}.",
            cities_list()
        )));
    };
    let today = vietnam_today(ctx.now);
    if let Some(date) = input.date {
        if date < today {
            return Ok(empty(format!(
                "Ngày {date} đã qua (hôm nay là {today} theo giờ Việt Nam); hãy chọn một ngày \
                 từ hôm nay trở đi."
            )));
        }
    }

    let mut rows: Vec<SearchRow> = sqlx::query_as(concat!(
        "SELECT ",
        columns!(),
        ", search_text, review FROM restaurants WHERE city = $1"
    ))
    .bind(city)
    .fetch_all(&ctx.db)
    .await?;
    if rows.is_empty() {
        return Ok(empty(format!(
            "Chưa có nhà hàng nào ở {city} trong danh mục."
        )));
    }

    let cuisine = input
        .cuisine
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty());
    if let Some(cuisine) = cuisine {
        let terms = cuisine_terms(cuisine);
        rows.retain(|r| terms.iter().any(|term| text_matches(&r.search_text, term)));
        if rows.is_empty() {
            return Ok(empty(format!(
                "Không có nhà hàng phục vụ \"{cuisine}\" ở {city}."
            )));
        }
    }
    // " phục vụ "phở"" when a cuisine was asked for, for the reasons below.
    let serving = cuisine
        .map(|c| format!(" phục vụ \"{c}\""))
        .unwrap_or_default();

    let party = input.party_size.map(u32::from).filter(|p| *p > 0);
    if let Some(party) = party {
        let largest = rows.iter().map(|r| r.row.seats()).max().unwrap_or(0);
        rows.retain(|r| r.row.seats() >= party);
        if rows.is_empty() {
            return Ok(empty(format!(
                "Không có nhà hàng{serving} ở {city} nhận được nhóm {party} người \
                 (nơi lớn nhất nhận {largest} khách mỗi suất)."
            )));
        }
    }

    rows.sort_by_cached_key(|r| (r.row.price_level, fold(&r.row.name), r.row.name.clone()));

    let mut restaurants = Vec::new();
    for SearchRow { row, review, .. } in rows {
        if restaurants.len() == MAX_RESULTS {
            break;
        }
        let Some(date) = input.date else {
            restaurants.push(row.summary(Vec::new(), review));
            continue;
        };
        let slots = match row.slots_on(date) {
            Ok(slots) => slots,
            // One bad row must not hide the rest of the city; it is logged for us to fix.
            Err(error) => {
                tracing::warn!(restaurant = %row.id, ?error, "skipping restaurant with bad data");
                continue;
            }
        };
        let slots = free_slots(&ctx.db, &row, slots, ctx.now, party.unwrap_or(1)).await?;
        if !slots.is_empty() {
            restaurants.push(row.summary(slots, review));
        }
    }
    if restaurants.is_empty() {
        let people = party
            .map(|p| format!(" cho nhóm {p} người"))
            .unwrap_or_default();
        let day = input.date.map(|d| d.to_string()).unwrap_or_default();
        return Ok(empty(format!(
            "Ngày {day} không còn suất trống{people} ở các nhà hàng{serving} tại {city}."
        )));
    }
    Ok(SearchRestaurantsOutput {
        restaurants,
        no_results_reason: None,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::tools::city::CITIES;

    /// A context on a fresh test database (SQLite, or Postgres under
    /// `DATBAN_TEST_POSTGRES_URL`); keep the guard alive for the test.
    async fn context(now: &str) -> (ToolContext, crate::db::test_db::TestDatabase) {
        let (db, guard) = crate::db::test_pool().await;
        let ctx = ToolContext {
            db,
            owner_id: "owner".into(),
            conversation_id: "conversation".into(),
            call_id: "call".into(),
            now: at(now).with_timezone(&Utc),
            upstreams: Default::default(),
            take: None,
        };
        (ctx, guard)
    }

    fn at(s: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(s).unwrap()
    }

    fn date(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    fn search(city: &str) -> SearchRestaurantsInput {
        SearchRestaurantsInput {
            city: city.into(),
            cuisine: None,
            party_size: None,
            date: None,
        }
    }

    async fn book(
        db: &Pool,
        id: &str,
        restaurant: &str,
        party: i64,
        starts_at: &str,
        status: &str,
    ) {
        let starts = at(starts_at);
        sqlx::query(
            "INSERT INTO bookings (id, owner_id, conversation_id, tool_call_id, restaurant_id, \
             party_size, starts_at, starts_at_utc, status, created_at) \
             VALUES ($1, 'owner', NULL, $2, $3, $4, $5, $6, $7, '2026-11-30T00:00:00Z')",
        )
        .bind(id)
        .bind(format!("call-{id}"))
        .bind(restaurant)
        .bind(party)
        .bind(starts.to_rfc3339())
        .bind(utc_key(starts))
        .bind(status)
        .execute(db)
        .await
        .unwrap();
    }

    fn ids(output: &SearchRestaurantsOutput) -> Vec<&str> {
        output.restaurants.iter().map(|r| r.id.as_str()).collect()
    }

    fn row(opens: &str, closes: &str, offset: &str) -> RestaurantRow {
        RestaurantRow {
            id: "test".into(),
            name: "Test".into(),
            city: "Hà Nội".into(),
            address: "1 Phố Huế".into(),
            cuisine: "phở".into(),
            price_level: 1,
            opens_at: opens.into(),
            closes_at: closes.into(),
            utc_offset: offset.into(),
            seats_per_slot: 10,
        }
    }

    // --- the seed -------------------------------------------------------------------

    #[tokio::test]
    async fn seed_covers_every_city_with_consistent_rows() {
        let (ctx, _db) = context("2026-11-30T02:00:00Z").await;
        let rows: Vec<SearchRow> = sqlx::query_as(concat!(
            "SELECT ",
            columns!(),
            ", search_text, review FROM restaurants"
        ))
        .fetch_all(&ctx.db)
        .await
        .unwrap();
        assert!(rows.len() >= 35, "{} rows", rows.len());
        for city in CITIES {
            let n = rows.iter().filter(|r| r.row.city == city).count();
            assert!(n >= 7, "{city}: {n}");
        }
        let mut cuisines = HashSet::new();
        let mut small = 0;
        for SearchRow {
            row, search_text, ..
        } in &rows
        {
            assert!(
                CITIES.contains(&row.city.as_str()),
                "{}: {}",
                row.id,
                row.city
            );
            let prefix = match row.city.as_str() {
                "Hà Nội" => "hn-",
                "TP. Hồ Chí Minh" => "hcm-",
                "Đà Lạt" => "dl-",
                "Đà Nẵng" => "dn-",
                _ => "hue-",
            };
            assert!(row.id.starts_with(prefix), "{}", row.id);
            assert_eq!(
                search_text,
                &words(&format!("{} {} {}", row.name, row.cuisine, row.city)),
                "{}",
                row.id
            );
            assert!((1..=4).contains(&row.price_level), "{}", row.id);
            assert!((8..=60).contains(&row.seats_per_slot), "{}", row.id);
            assert_eq!(
                row.offset().unwrap(),
                FixedOffset::east_opt(7 * 3600).unwrap()
            );
            let slots = row.slots_on(date("2026-12-01")).unwrap();
            assert!(!slots.is_empty(), "{}", row.id);
            assert!(row.is_open_for_seating(slots[0]).unwrap());
            if row.seats_per_slot <= 12 {
                small += 1;
            }
            cuisines.insert(fold(&row.cuisine));
        }
        assert!(small >= 3, "{small} small places");
        assert!(cuisines.len() >= 15, "{cuisines:?}");
    }

    #[tokio::test]
    async fn well_known_rows_are_as_other_parts_expect() {
        let (ctx, _db) = context("2026-11-30T02:00:00Z").await;
        let thang_long = find(&ctx.db, "hn-cha-ca-thang-long")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(thang_long.name, "Chả Cá Thăng Long");
        assert_eq!(thang_long.city, "Hà Nội");
        assert_eq!(thang_long.cuisine, "chả cá");
        assert_eq!(thang_long.opening_hours(), "10:00–22:00");
        assert_eq!(thang_long.seats_per_slot, 40);
        let huong_lien = find(&ctx.db, "hn-bun-cha-huong-lien")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(huong_lien.name, "Bún Chả Hương Liên");
        assert_eq!(huong_lien.address, "24 Lê Văn Hưu, Hai Bà Trưng");
        assert_eq!(huong_lien.opening_hours(), "08:00–20:30");
        assert!(find(&ctx.db, "nowhere").await.unwrap().is_none());
    }

    // --- row helpers -----------------------------------------------------------------

    #[test]
    fn slots_every_half_hour_until_an_hour_before_closing() {
        let slots = row("08:00", "20:30", "+07:00")
            .slots_on(date("2026-12-01"))
            .unwrap();
        assert_eq!(slots.len(), 24);
        assert_eq!(slots[0], at("2026-12-01T08:00:00+07:00"));
        assert_eq!(slots[1], at("2026-12-01T08:30:00+07:00"));
        assert_eq!(*slots.last().unwrap(), at("2026-12-01T19:30:00+07:00"));
        assert_eq!(slots[0].offset().local_minus_utc(), 7 * 3600);
        // Exactly one hour open: one seating.
        assert_eq!(
            row("17:00", "18:00", "+07:00")
                .slots_on(date("2026-12-01"))
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn seating_boundaries() {
        let r = row("10:00", "22:00", "+07:00");
        let open = |s: &str| r.is_open_for_seating(at(s)).unwrap();
        assert!(open("2026-12-01T10:00:00+07:00"), "opening time");
        assert!(
            !open("2026-12-01T09:59:00+07:00"),
            "a minute before opening"
        );
        assert!(open("2026-12-01T21:00:00+07:00"), "one hour before closing");
        assert!(!open("2026-12-01T21:01:00+07:00"), "a minute later");
        assert!(!open("2026-12-01T21:00:01+07:00"), "a second later");
        assert!(!open("2026-12-01T22:00:00+07:00"), "closing time");
        // The same instants written in UTC are converted to the restaurant's +07:00.
        assert!(open("2026-12-01T03:00:00+00:00"));
        assert!(open("2026-12-01T14:00:00+00:00"));
        assert!(!open("2026-12-01T14:01:00+00:00"));
        assert!(
            open("2026-12-01T10:00:00+00:00"),
            "10:00 UTC is 17:00 in Hà Nội"
        );
        assert!(
            !open("2026-12-01T15:00:00+00:00"),
            "15:00 UTC is 22:00 in Hà Nội"
        );
    }

    #[test]
    fn seating_across_offsets() {
        let r = row("10:00", "22:00", "+07:00");
        // 19:00 in Hà Nội written as 13:00 in Paris (+01:00) and 12:00 UTC.
        assert!(r
            .is_open_for_seating(at("2026-12-01T13:00:00+01:00"))
            .unwrap());
        // 16:00 UTC is 23:00 in Hà Nội: closed, though 16:00 is inside 10:00–21:00.
        assert!(!r
            .is_open_for_seating(at("2026-12-01T16:00:00+00:00"))
            .unwrap());
        // 20:30 in Los Angeles (-08:00) is 11:30 the next day in Hà Nội: open, though
        // 20:30 would be inside the window too; 08:00 there is 23:00 in Hà Nội: closed.
        assert!(r
            .is_open_for_seating(at("2026-11-30T20:30:00-08:00"))
            .unwrap());
        assert!(!r
            .is_open_for_seating(at("2026-12-01T08:00:00-08:00"))
            .unwrap());
        // A restaurant whose data says +00:00 reads the same instant as 12:00 local.
        let utc_row = row("10:00", "22:00", "+00:00");
        assert!(utc_row
            .is_open_for_seating(at("2026-12-01T19:00:00+07:00"))
            .unwrap());
        assert!(!utc_row
            .is_open_for_seating(at("2026-12-01T08:00:00+07:00"))
            .unwrap());
    }

    #[test]
    fn bad_rows_are_typed_errors() {
        let day = date("2026-12-01");
        let instant = at("2026-12-01T12:00:00+07:00");
        for (opens, closes, offset) in [
            ("25:00", "22:00", "+07:00"),
            ("10h00", "22:00", "+07:00"),
            ("10:00", "2200", "+07:00"),
            ("", "22:00", "+07:00"),
            ("10:00", "10:30", "+07:00"),
            ("18:00", "01:00", "+07:00"),
            ("10:00", "22:00", "ICT"),
            ("10:00", "22:00", "+7"),
            ("10:00", "22:00", "+25:00"),
        ] {
            let r = row(opens, closes, offset);
            assert!(
                matches!(r.slots_on(day), Err(ExecError::Internal(ref m)) if m.contains("test")),
                "{opens} {closes} {offset}"
            );
            assert!(matches!(
                r.is_open_for_seating(instant),
                Err(ExecError::Internal(_))
            ));
        }
        assert_eq!(
            row("10:00", "22:00", "-03:30").offset().unwrap(),
            FixedOffset::west_opt(3 * 3600 + 1800).unwrap()
        );
    }

    #[test]
    fn utc_keys() {
        assert_eq!(
            utc_key(at("2026-12-01T19:00:00+07:00")),
            "2026-12-01T12:00:00Z"
        );
        assert_eq!(
            utc_key(at("2026-12-01T06:30:00+07:00")),
            "2026-11-30T23:30:00Z"
        );
        assert_eq!(utc_key(at("2026-12-01T12:00:00Z")), "2026-12-01T12:00:00Z");
    }

    #[tokio::test]
    async fn seats_taken_counts_confirmed_bookings_only() {
        let (ctx, _db) = context("2026-11-30T02:00:00Z").await;
        let id = "hn-cha-ca-thang-long";
        let other = "hn-cha-ca-la-vong";
        for (booking, restaurant, party, starts_at, status) in [
            ("b1", id, 4, "2026-12-01T19:00:00+07:00", "confirmed"),
            ("b2", id, 6, "2026-12-01T19:00:00+07:00", "confirmed"),
            ("b3", id, 5, "2026-12-01T19:00:00+07:00", "waitlisted"),
            ("b4", id, 7, "2026-12-01T19:00:00+07:00", "cancelled"),
            ("b5", id, 3, "2026-12-01T19:30:00+07:00", "confirmed"),
            ("b6", other, 2, "2026-12-01T19:00:00+07:00", "confirmed"),
        ] {
            book(&ctx.db, booking, restaurant, party, starts_at, status).await;
        }
        assert_eq!(
            seats_taken(&ctx.db, id, "2026-12-01T12:00:00Z")
                .await
                .unwrap(),
            10
        );
        assert_eq!(
            seats_taken(&ctx.db, id, "2026-12-01T12:30:00Z")
                .await
                .unwrap(),
            3
        );
        assert_eq!(
            seats_taken(&ctx.db, id, "2026-12-01T13:00:00Z")
                .await
                .unwrap(),
            0
        );
    }

    // --- search ----------------------------------------------------------------------

    #[tokio::test]
    async fn search_by_city_as_people_type_it() {
        let (ctx, _db) = context("2026-11-30T02:00:00Z").await;
        let output = run(&search("ha noi"), &ctx).await.unwrap();
        assert!(output.no_results_reason.is_none());
        assert!(
            ids(&output).contains(&"hn-cha-ca-thang-long"),
            "{:?}",
            ids(&output)
        );
        assert_eq!(
            output.restaurants.len(),
            MAX_RESULTS,
            "Hà Nội has more than 8"
        );
        assert!(output.restaurants.iter().all(|r| r.city == "Hà Nội"));
        assert!(output.restaurants.iter().all(|r| r.free_slots.is_empty()));
        // Cheapest first, then by name.
        let keys: Vec<_> = output
            .restaurants
            .iter()
            .map(|r| (r.price_level, fold(&r.name)))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        let thang_long = output
            .restaurants
            .iter()
            .find(|r| r.id == "hn-cha-ca-thang-long")
            .unwrap();
        assert_eq!(thang_long.opening_hours, "10:00–22:00");
        assert_eq!(thang_long.price_level, 2);

        for typed in ["Sài Gòn", "hcm", "Da Lat", "danang", "Huế"] {
            let output = run(&search(typed), &ctx).await.unwrap();
            assert!(output.restaurants.len() >= 7, "{typed}");
        }
    }

    #[tokio::test]
    async fn cuisine_filter() {
        let (ctx, _db) = context("2026-11-30T02:00:00Z").await;
        let query = |city: &str, cuisine: &str| SearchRestaurantsInput {
            cuisine: Some(cuisine.into()),
            ..search(city)
        };
        let cha_ca = run(&query("Hà Nội", "chả cá"), &ctx).await.unwrap();
        assert_eq!(ids(&cha_ca), ["hn-cha-ca-thang-long", "hn-cha-ca-la-vong"]);
        let cha_ca_unaccented = run(&query("hanoi", "CHA CA"), &ctx).await.unwrap();
        assert_eq!(cha_ca, cha_ca_unaccented);
        let bun_cha = run(&query("Hà Nội", "bún chả"), &ctx).await.unwrap();
        assert_eq!(ids(&bun_cha), ["hn-bun-cha-huong-lien"]);
        let pizza = run(&query("saigon", "Italian food"), &ctx).await.unwrap();
        assert_eq!(ids(&pizza), ["hcm-pizza-4ps-ben-thanh"]);
        let vegetarian = run(&query("Huế", "món chay"), &ctx).await.unwrap();
        assert_eq!(ids(&vegetarian), ["hue-lien-hoa-chay"]);
        let seafood = run(&query("da nang", "seafood"), &ctx).await.unwrap();
        assert_eq!(ids(&seafood), ["dn-hai-san-be-man"]);
        // A one-letter word matches whole words only ("y" is Italian, not "Huỳnh").
        let y = run(&query("hcm", "Ý"), &ctx).await.unwrap();
        assert_eq!(ids(&y), ["hcm-pizza-4ps-ben-thanh"]);

        let sushi = run(&query("Huế", "sushi"), &ctx).await.unwrap();
        assert!(sushi.restaurants.is_empty());
        assert_eq!(
            sushi.no_results_reason.as_deref(),
            Some("Không có nhà hàng phục vụ \"sushi\" ở Huế.")
        );
    }

    #[tokio::test]
    async fn reviews_are_passed_on_as_they_are() {
        let (ctx, _db) = context("2026-11-30T02:00:00Z").await;
        let query = |cuisine: &str| SearchRestaurantsInput {
            cuisine: Some(cuisine.into()),
            ..search("Hà Nội")
        };
        // The planted injection (migration 0006) reaches the model verbatim, as a field of
        // the result: the tool does not interpret it, and neither may the model.
        let bun_dau = run(&query("bún đậu"), &ctx).await.unwrap();
        assert_eq!(ids(&bun_dau), ["hn-bun-dau-ngo-gach"]);
        let review = bun_dau.restaurants[0].review.as_deref().unwrap_or_default();
        assert!(
            review.contains("IGNORE PREVIOUS INSTRUCTIONS") && review.contains("Món ngon!"),
            "{review}"
        );
        let cha_ca = run(&query("chả cá"), &ctx).await.unwrap();
        assert!(cha_ca.restaurants[0].review.is_some());
        // A restaurant without a review has none, and the field is left out of the JSON.
        let lau = run(&query("lẩu"), &ctx).await.unwrap();
        assert_eq!(ids(&lau), ["hn-lau-nam-ashima"]);
        assert_eq!(lau.restaurants[0].review, None);
        let json = serde_json::to_value(&lau).unwrap();
        assert!(json["restaurants"][0].get("review").is_none(), "{json}");
    }

    #[tokio::test]
    async fn party_size_filter() {
        let (ctx, _db) = context("2026-11-30T02:00:00Z").await;
        let everyone = run(&search("hcm"), &ctx).await.unwrap();
        assert!(ids(&everyone).contains(&"hcm-banh-mi-huynh-hoa"));
        let ten = SearchRestaurantsInput {
            party_size: Some(10),
            ..search("hcm")
        };
        let output = run(&ten, &ctx).await.unwrap();
        assert!(!output.restaurants.is_empty());
        assert!(
            !ids(&output).contains(&"hcm-banh-mi-huynh-hoa"),
            "8 seats < 10 people"
        );
        for r in &output.restaurants {
            let row = find(&ctx.db, &r.id).await.unwrap().unwrap();
            assert!(row.seats_per_slot >= 10, "{}", r.id);
        }
        let too_many = SearchRestaurantsInput {
            cuisine: Some("cơm hến".into()),
            party_size: Some(20),
            ..search("Huế")
        };
        let output = run(&too_many, &ctx).await.unwrap();
        assert!(output.restaurants.is_empty());
        let reason = output.no_results_reason.unwrap();
        assert!(
            reason.contains("20 người") && reason.contains("Huế"),
            "{reason}"
        );
    }

    #[tokio::test]
    async fn free_slots_shrink_with_confirmed_bookings() {
        let (ctx, _db) = context("2026-11-30T02:00:00Z").await;
        let input = SearchRestaurantsInput {
            cuisine: Some("chả cá".into()),
            date: Some(date("2026-12-01")),
            ..search("Hà Nội")
        };
        let slots_of = |output: &SearchRestaurantsOutput| -> Vec<(String, u32)> {
            output
                .restaurants
                .iter()
                .find(|r| r.id == "hn-cha-ca-thang-long")
                .unwrap()
                .free_slots
                .iter()
                .map(|s| (s.starts_at.to_rfc3339(), s.seats_left))
                .collect()
        };
        let before = run(&input, &ctx).await.unwrap();
        let slots = slots_of(&before);
        // 10:00 … 21:00 every 30 minutes, all 40 seats free.
        assert_eq!(slots.len(), 23);
        assert_eq!(slots[0], ("2026-12-01T10:00:00+07:00".to_owned(), 40));
        assert_eq!(slots[22], ("2026-12-01T21:00:00+07:00".to_owned(), 40));
        let row = find(&ctx.db, "hn-cha-ca-thang-long")
            .await
            .unwrap()
            .unwrap();
        for slot in &before.restaurants[0].free_slots {
            assert!(row.is_open_for_seating(slot.starts_at).unwrap());
        }

        let id = "hn-cha-ca-thang-long";
        for (booking, party, starts_at, status) in [
            ("a", 20, "2026-12-01T19:00:00+07:00", "confirmed"),
            // The same slot written in UTC counts towards the same seats.
            ("b", 15, "2026-12-01T12:00:00Z", "confirmed"),
            ("c1", 20, "2026-12-01T19:30:00+07:00", "confirmed"),
            ("c2", 20, "2026-12-01T12:30:00Z", "confirmed"),
            ("d", 10, "2026-12-01T20:00:00+07:00", "waitlisted"),
            ("e", 10, "2026-12-01T20:00:00+07:00", "cancelled"),
        ] {
            book(&ctx.db, booking, id, party, starts_at, status).await;
        }
        let after = slots_of(&run(&input, &ctx).await.unwrap());
        assert_eq!(after.len(), 22, "the full 19:30 slot is gone");
        let seats = |time: &str| {
            after
                .iter()
                .find(|(t, _)| t == &format!("2026-12-01T{time}:00+07:00"))
                .map(|(_, s)| *s)
        };
        assert_eq!(seats("19:00"), Some(5));
        assert_eq!(seats("19:30"), None);
        assert_eq!(
            seats("20:00"),
            Some(40),
            "waitlisted and cancelled take no seats"
        );

        // A party of six no longer fits at 19:00.
        let six = SearchRestaurantsInput {
            party_size: Some(6),
            ..input.clone()
        };
        let six = slots_of(&run(&six, &ctx).await.unwrap());
        assert_eq!(six.len(), 21);
        assert!(six.iter().all(|(t, s)| *s >= 6 && !t.contains("T19:")));
    }

    #[tokio::test]
    async fn today_lists_only_future_slots() {
        // 15:10 in Hà Nội.
        let (ctx, _db) = context("2026-11-30T08:10:00Z").await;
        let input = SearchRestaurantsInput {
            cuisine: Some("chả cá".into()),
            date: Some(date("2026-11-30")),
            ..search("Hà Nội")
        };
        let output = run(&input, &ctx).await.unwrap();
        let thang_long = output
            .restaurants
            .iter()
            .find(|r| r.id == "hn-cha-ca-thang-long")
            .unwrap();
        assert_eq!(
            thang_long.free_slots[0].starts_at,
            at("2026-11-30T15:30:00+07:00")
        );
        assert!(thang_long
            .free_slots
            .iter()
            .all(|s| s.starts_at.with_timezone(&Utc) > ctx.now));

        // Breakfast places are over for the day: nothing left, with a reason.
        let breakfast = SearchRestaurantsInput {
            cuisine: Some("bánh mì".into()),
            date: Some(date("2026-11-30")),
            ..search("hcm")
        };
        let output = run(&breakfast, &ctx).await.unwrap();
        assert!(output.restaurants.is_empty());
        let reason = output.no_results_reason.unwrap();
        assert!(
            reason.contains("2026-11-30") && reason.contains("không còn suất trống"),
            "{reason}"
        );
    }

    #[tokio::test]
    async fn past_dates_are_empty_with_a_reason() {
        // 00:30 on the 30th in Vietnam, still the 29th in UTC.
        let (ctx, _db) = context("2026-11-29T17:30:00Z").await;
        let yesterday = SearchRestaurantsInput {
            date: Some(date("2026-11-29")),
            ..search("Hà Nội")
        };
        let output = run(&yesterday, &ctx).await.unwrap();
        assert!(output.restaurants.is_empty());
        let reason = output.no_results_reason.unwrap();
        assert!(
            reason.contains("2026-11-29") && reason.contains("đã qua"),
            "{reason}"
        );

        let today = SearchRestaurantsInput {
            date: Some(date("2026-11-30")),
            ..search("Hà Nội")
        };
        let output = run(&today, &ctx).await.unwrap();
        assert!(
            !output.restaurants.is_empty(),
            "{:?}",
            output.no_results_reason
        );
    }

    #[tokio::test]
    async fn unknown_city_is_empty_with_a_reason() {
        let (ctx, _db) = context("2026-11-30T02:00:00Z").await;
        let output = run(&search("Paris"), &ctx).await.unwrap();
        assert!(output.restaurants.is_empty());
        let reason = output.no_results_reason.unwrap();
        assert!(reason.contains("Paris"), "{reason}");
        for city in CITIES {
            assert!(reason.contains(city), "{reason}");
        }
    }

    #[tokio::test]
    async fn a_bad_row_is_skipped_not_fatal() {
        let (ctx, _db) = context("2026-11-30T02:00:00Z").await;
        sqlx::query("UPDATE restaurants SET opens_at = '10h' WHERE id = 'hn-cha-ca-la-vong'")
            .execute(&ctx.db)
            .await
            .unwrap();
        let input = SearchRestaurantsInput {
            cuisine: Some("chả cá".into()),
            date: Some(date("2026-12-01")),
            ..search("Hà Nội")
        };
        let output = run(&input, &ctx).await.unwrap();
        assert_eq!(ids(&output), ["hn-cha-ca-thang-long"]);
        let bad = find(&ctx.db, "hn-cha-ca-la-vong").await.unwrap().unwrap();
        assert!(matches!(
            bad.slots_on(date("2026-12-01")),
            Err(ExecError::Internal(_))
        ));
    }
}

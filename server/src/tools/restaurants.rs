//! `searchRestaurants`, `checkAvailability`, and the catalogue helpers booking shares:
//! reading a restaurant, its seating times, and the seats confirmed bookings already hold.
//!
//! Rows are data, not code: times and offsets are parsed with typed errors, never unwrapped.

use std::collections::HashMap;

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, TimeZone, Timelike, Utc};
use shared::tools::{
    CheckAvailabilityInput, CheckAvailabilityOutput, Entity, FreeSlot, RestaurantSummary, Rule,
    SearchRestaurantsInput, SearchRestaurantsOutput, NEAREST_SLOTS,
};

use super::{
    city::{canonical_city, cities_list, fold, vietnam_today, words},
    ExecError, ToolContext,
};

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

/// The restaurant with this id, if any, as the database has it now: inside a booking's
/// transaction (on the connection that holds the write lock). Calls that decide nothing read
/// [`Catalogue::find`] instead.
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

/// A start time's seats as the database has them now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotSeats {
    /// Seats the restaurant offers for one start time.
    pub capacity: u32,
    /// Seats CONFIRMED bookings hold at exactly this start.
    pub taken: u32,
}

/// The seats of restaurant `restaurant_id` at exactly this start (UTC,
/// 'YYYY-MM-DDTHH:MM:SSZ'), both read now in one query: the catalogue copy may be older
/// than an edit of the restaurant's capacity, and a confirmation form shows the room
/// left. `None`: no such restaurant any more.
pub async fn slot_seats(
    db: impl crate::db::Source,
    restaurant_id: &str,
    starts_at_utc: &str,
) -> Result<Option<SlotSeats>, sqlx::Error> {
    // CAST: SUM's type differs between backends (see booking::run); BIGINT reads as i64.
    let found: Option<(i64, i64)> = sqlx::query_as(
        "SELECT r.seats_per_slot, CAST(COALESCE((SELECT SUM(b.party_size) FROM bookings b \
         WHERE b.restaurant_id = r.id AND b.starts_at_utc = $2 AND b.status = 'confirmed'), 0) \
         AS BIGINT) FROM restaurants r WHERE r.id = $1",
    )
    .bind(restaurant_id)
    .bind(starts_at_utc)
    .fetch_optional(db)
    .await?;
    let count = |n: i64| u32::try_from(n.max(0)).unwrap_or(u32::MAX);
    Ok(found.map(|(capacity, taken)| SlotSeats {
        capacity: count(capacity),
        taken: count(taken),
    }))
}

/// Seats taken by confirmed bookings per start (UTC key) between two UTC keys inclusive.
async fn seats_taken_between(
    db: impl crate::db::Source,
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
    db: impl crate::db::Source,
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

/// The refusal of a `restaurantId` that names no restaurant.
pub(super) fn unknown(restaurant_id: &str) -> ExecError {
    ExecError::invalid_at(
        "restaurantId",
        Rule::NoSuch {
            entity: Entity::Restaurant,
        },
        format!(
            "restaurantId: no restaurant has the id \"{restaurant_id}\"; use an id from \
             searchRestaurants"
        ),
    )
}

/// `checkAvailability`: the time asked for at one restaurant, and the nearest other times
/// that day with room for the party. Read-only; a time that is not a seating time (outside
/// the hours, off the half hour) is answered, not refused, so the model can offer others.
pub async fn availability(
    input: &CheckAvailabilityInput,
    ctx: &ToolContext,
) -> Result<CheckAvailabilityOutput, ExecError> {
    let Some(restaurant) = ctx.catalogue.find(&ctx.reads, &input.restaurant_id).await? else {
        return Err(unknown(&input.restaurant_id));
    };
    let starts_at = input.starts_at.with_timezone(&restaurant.offset()?);
    let party = u32::from(input.party_size);
    let day = restaurant.slots_on(starts_at.date_naive())?;
    // Every later seating time that day with its free seats (a party of 0 fits anywhere).
    let open = free_slots(&ctx.reads, &restaurant, day, ctx.now, 0).await?;
    let seats_left = open
        .iter()
        .find(|slot| slot.starts_at == starts_at)
        .map(|slot| slot.seats_left);
    let mut nearest: Vec<FreeSlot> = open
        .into_iter()
        .filter(|slot| slot.starts_at != starts_at && slot.seats_left >= party)
        .collect();
    nearest.sort_by_key(|slot| (slot.starts_at - starts_at).num_seconds().abs());
    nearest.truncate(NEAREST_SLOTS);
    Ok(CheckAvailabilityOutput {
        restaurant_id: restaurant.id.clone(),
        restaurant_name: restaurant.name.clone(),
        opening_hours: restaurant.opening_hours(),
        party_size: input.party_size,
        starts_at,
        available: seats_left.is_some_and(|seats| seats >= party),
        seats_left,
        nearest,
    })
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

    let mut rows = ctx.catalogue.in_city(&ctx.reads, city).await?;
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
        let slots = free_slots(&ctx.reads, &row, slots, ctx.now, party.unwrap_or(1)).await?;
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

/// `searchRestaurants`'s executor.
impl super::Executor for shared::tools::SearchRestaurants {
    async fn execute(
        input: &SearchRestaurantsInput,
        ctx: &ToolContext,
    ) -> Result<SearchRestaurantsOutput, ExecError> {
        run(input, ctx).await
    }
}

/// `checkAvailability`'s executor.
impl super::Executor for shared::tools::CheckAvailability {
    async fn execute(
        input: &CheckAvailabilityInput,
        ctx: &ToolContext,
    ) -> Result<CheckAvailabilityOutput, ExecError> {
        availability(input, ctx).await
    }
}

mod catalogue;
pub use catalogue::Catalogue;

#[cfg(test)]
mod tests;

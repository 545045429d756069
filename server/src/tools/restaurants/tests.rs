//! Tests of `restaurants`.

use std::{collections::HashSet, time::Duration};

use super::*;
use crate::tools::city::CITIES;

/// What a test or a helper returns: a failure of the code under test is an error with
/// its message, not a panic at an `unwrap`.
type Fallible<T> = Result<T, Box<dyn std::error::Error>>;
type TestResult = Fallible<()>;

/// A context on a fresh test database (SQLite, or Postgres under
/// `DATBAN_TEST_POSTGRES_URL`); keep the guard alive for the test.
async fn context(
    now: &str,
) -> Result<(ToolContext, crate::db::test_db::TestDatabase), chrono::ParseError> {
    let (db, guard) = crate::db::test_pool().await;
    let ctx = ToolContext {
        reads: crate::db::Reads::shared(db.clone()),
        db,
        owner_id: "owner".into(),
        conversation_id: "conversation".into(),
        call_id: "call".into(),
        now: at(now)?.with_timezone(&Utc),
        upstreams: Default::default(),
        catalogue: Default::default(),
        take: None,
    };
    Ok((ctx, guard))
}

fn at(s: &str) -> Result<DateTime<FixedOffset>, chrono::ParseError> {
    DateTime::parse_from_rfc3339(s)
}

fn date(s: &str) -> Result<NaiveDate, chrono::ParseError> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
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
    db: &crate::db::Pool,
    id: &str,
    restaurant: &str,
    party: i64,
    starts_at: &str,
    status: &str,
) -> TestResult {
    let starts = at(starts_at)?;
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
    .await?;
    Ok(())
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
async fn seed_covers_every_city_with_consistent_rows() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    let rows: Vec<SearchRow> = sqlx::query_as(concat!(
        "SELECT ",
        columns!(),
        ", search_text, review FROM restaurants"
    ))
    .fetch_all(&ctx.db)
    .await?;
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
        assert_eq!(Some(row.offset()?), FixedOffset::east_opt(7 * 3600));
        let slots = row.slots_on(date("2026-12-01")?)?;
        assert!(!slots.is_empty(), "{}", row.id);
        assert!(row.is_open_for_seating(slots[0])?);
        if row.seats_per_slot <= 12 {
            small += 1;
        }
        cuisines.insert(fold(&row.cuisine));
    }
    assert!(small >= 3, "{small} small places");
    assert!(cuisines.len() >= 15, "{cuisines:?}");
    Ok(())
}

#[tokio::test]
async fn well_known_rows_are_what_other_parts_rely_on() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    let thang_long = find(&ctx.db, "hn-cha-ca-thang-long")
        .await?
        .ok_or("hn-cha-ca-thang-long not in the seed")?;
    assert_eq!(thang_long.name, "Chả Cá Thăng Long");
    assert_eq!(thang_long.city, "Hà Nội");
    assert_eq!(thang_long.cuisine, "chả cá");
    assert_eq!(thang_long.opening_hours(), "10:00–22:00");
    assert_eq!(thang_long.seats_per_slot, 40);
    let huong_lien = find(&ctx.db, "hn-bun-cha-huong-lien")
        .await?
        .ok_or("hn-bun-cha-huong-lien not in the seed")?;
    assert_eq!(huong_lien.name, "Bún Chả Hương Liên");
    assert_eq!(huong_lien.address, "24 Lê Văn Hưu, Hai Bà Trưng");
    assert_eq!(huong_lien.opening_hours(), "08:00–20:30");
    assert!(find(&ctx.db, "nowhere").await?.is_none());
    Ok(())
}

// --- row helpers -----------------------------------------------------------------

#[test]
fn slots_every_half_hour_until_an_hour_before_closing() -> TestResult {
    let slots = row("08:00", "20:30", "+07:00").slots_on(date("2026-12-01")?)?;
    assert_eq!(slots.len(), 24);
    assert_eq!(slots[0], at("2026-12-01T08:00:00+07:00")?);
    assert_eq!(slots[1], at("2026-12-01T08:30:00+07:00")?);
    assert_eq!(
        *slots.last().ok_or("no slots")?,
        at("2026-12-01T19:30:00+07:00")?
    );
    assert_eq!(slots[0].offset().local_minus_utc(), 7 * 3600);
    // Exactly one hour open: one seating.
    assert_eq!(
        row("17:00", "18:00", "+07:00")
            .slots_on(date("2026-12-01")?)?
            .len(),
        1
    );
    Ok(())
}

#[test]
fn seating_boundaries() -> TestResult {
    let r = row("10:00", "22:00", "+07:00");
    let open = |s: &str| -> Fallible<bool> { Ok(r.is_open_for_seating(at(s)?)?) };
    assert!(open("2026-12-01T10:00:00+07:00")?, "opening time");
    assert!(
        !open("2026-12-01T09:59:00+07:00")?,
        "a minute before opening"
    );
    assert!(
        open("2026-12-01T21:00:00+07:00")?,
        "one hour before closing"
    );
    assert!(!open("2026-12-01T21:01:00+07:00")?, "a minute later");
    assert!(!open("2026-12-01T21:00:01+07:00")?, "a second later");
    assert!(!open("2026-12-01T22:00:00+07:00")?, "closing time");
    // The same instants written in UTC are converted to the restaurant's +07:00.
    assert!(open("2026-12-01T03:00:00+00:00")?);
    assert!(open("2026-12-01T14:00:00+00:00")?);
    assert!(!open("2026-12-01T14:01:00+00:00")?);
    assert!(
        open("2026-12-01T10:00:00+00:00")?,
        "10:00 UTC is 17:00 in Hà Nội"
    );
    assert!(
        !open("2026-12-01T15:00:00+00:00")?,
        "15:00 UTC is 22:00 in Hà Nội"
    );
    Ok(())
}

#[test]
fn seating_across_offsets() -> TestResult {
    let r = row("10:00", "22:00", "+07:00");
    // 19:00 in Hà Nội written as 13:00 in Paris (+01:00) and 12:00 UTC.
    assert!(r.is_open_for_seating(at("2026-12-01T13:00:00+01:00")?)?);
    // 16:00 UTC is 23:00 in Hà Nội: closed, though 16:00 is inside 10:00–21:00.
    assert!(!r.is_open_for_seating(at("2026-12-01T16:00:00+00:00")?)?);
    // 20:30 in Los Angeles (-08:00) is 11:30 the next day in Hà Nội: open, though
    // 20:30 would be inside the window too; 08:00 there is 23:00 in Hà Nội: closed.
    assert!(r.is_open_for_seating(at("2026-11-30T20:30:00-08:00")?)?);
    assert!(!r.is_open_for_seating(at("2026-12-01T08:00:00-08:00")?)?);
    // A restaurant whose data says +00:00 reads the same instant as 12:00 local.
    let utc_row = row("10:00", "22:00", "+00:00");
    assert!(utc_row.is_open_for_seating(at("2026-12-01T19:00:00+07:00")?)?);
    assert!(!utc_row.is_open_for_seating(at("2026-12-01T08:00:00+07:00")?)?);
    Ok(())
}

#[test]
fn bad_rows_are_typed_errors() -> TestResult {
    let day = date("2026-12-01")?;
    let instant = at("2026-12-01T12:00:00+07:00")?;
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
        Some(row("10:00", "22:00", "-03:30").offset()?),
        FixedOffset::west_opt(3 * 3600 + 1800)
    );
    Ok(())
}

#[test]
fn utc_keys() -> TestResult {
    assert_eq!(
        utc_key(at("2026-12-01T19:00:00+07:00")?),
        "2026-12-01T12:00:00Z"
    );
    assert_eq!(
        utc_key(at("2026-12-01T06:30:00+07:00")?),
        "2026-11-30T23:30:00Z"
    );
    assert_eq!(utc_key(at("2026-12-01T12:00:00Z")?), "2026-12-01T12:00:00Z");
    Ok(())
}

#[tokio::test]
async fn seats_taken_counts_confirmed_bookings_only() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
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
        book(&ctx.db, booking, restaurant, party, starts_at, status).await?;
    }
    let taken = |utc: &'static str| {
        let db = ctx.db.clone();
        async move { slot_seats(&db, id, utc).await.map(|s| s.map(|s| s.taken)) }
    };
    assert_eq!(taken("2026-12-01T12:00:00Z").await?, Some(10));
    assert_eq!(taken("2026-12-01T12:30:00Z").await?, Some(3));
    assert_eq!(taken("2026-12-01T13:00:00Z").await?, Some(0));
    let capacity = find(&ctx.db, id).await?.map(|r| r.seats());
    assert_eq!(
        slot_seats(&ctx.db, id, "2026-12-01T12:00:00Z")
            .await?
            .map(|s| s.capacity),
        capacity
    );
    assert_eq!(
        slot_seats(&ctx.db, "no-such-place", "2026-12-01T12:00:00Z").await?,
        None
    );
    Ok(())
}

// --- search ----------------------------------------------------------------------

#[tokio::test]
async fn search_by_city_as_people_type_it() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    let output = run(&search("ha noi"), &ctx).await?;
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
        .ok_or("hn-cha-ca-thang-long not in the results")?;
    assert_eq!(thang_long.opening_hours, "10:00–22:00");
    assert_eq!(thang_long.price_level, 2);

    for typed in ["Sài Gòn", "hcm", "Da Lat", "danang", "Huế"] {
        let output = run(&search(typed), &ctx).await?;
        assert!(output.restaurants.len() >= 7, "{typed}");
    }
    Ok(())
}

#[tokio::test]
async fn cuisine_filter() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    let query = |city: &str, cuisine: &str| SearchRestaurantsInput {
        cuisine: Some(cuisine.into()),
        ..search(city)
    };
    let cha_ca = run(&query("Hà Nội", "chả cá"), &ctx).await?;
    assert_eq!(ids(&cha_ca), ["hn-cha-ca-thang-long", "hn-cha-ca-la-vong"]);
    let cha_ca_unaccented = run(&query("hanoi", "CHA CA"), &ctx).await?;
    assert_eq!(cha_ca, cha_ca_unaccented);
    let bun_cha = run(&query("Hà Nội", "bún chả"), &ctx).await?;
    assert_eq!(ids(&bun_cha), ["hn-bun-cha-huong-lien"]);
    let pizza = run(&query("saigon", "Italian food"), &ctx).await?;
    assert_eq!(ids(&pizza), ["hcm-pizza-4ps-ben-thanh"]);
    let vegetarian = run(&query("Huế", "món chay"), &ctx).await?;
    assert_eq!(ids(&vegetarian), ["hue-lien-hoa-chay"]);
    let seafood = run(&query("da nang", "seafood"), &ctx).await?;
    assert_eq!(ids(&seafood), ["dn-hai-san-be-man"]);
    // A one-letter word matches whole words only ("y" is Italian, not "Huỳnh").
    let y = run(&query("hcm", "Ý"), &ctx).await?;
    assert_eq!(ids(&y), ["hcm-pizza-4ps-ben-thanh"]);

    let sushi = run(&query("Huế", "sushi"), &ctx).await?;
    assert!(sushi.restaurants.is_empty());
    assert_eq!(
        sushi.no_results_reason.as_deref(),
        Some("Không có nhà hàng phục vụ \"sushi\" ở Huế.")
    );
    Ok(())
}

#[tokio::test]
async fn reviews_are_passed_on_as_they_are() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    let query = |cuisine: &str| SearchRestaurantsInput {
        cuisine: Some(cuisine.into()),
        ..search("Hà Nội")
    };
    // The planted injection (migration 0006) reaches the model verbatim, as a field of
    // the result: the tool does not interpret it, and neither may the model.
    let bun_dau = run(&query("bún đậu"), &ctx).await?;
    assert_eq!(ids(&bun_dau), ["hn-bun-dau-ngo-gach"]);
    let review = bun_dau.restaurants[0].review.as_deref().unwrap_or_default();
    assert!(
        review.contains("IGNORE PREVIOUS INSTRUCTIONS") && review.contains("Món ngon!"),
        "{review}"
    );
    let cha_ca = run(&query("chả cá"), &ctx).await?;
    assert!(cha_ca.restaurants[0].review.is_some());
    // A restaurant without a review has none, and the field is left out of the JSON.
    let lau = run(&query("lẩu"), &ctx).await?;
    assert_eq!(ids(&lau), ["hn-lau-nam-ashima"]);
    assert_eq!(lau.restaurants[0].review, None);
    let json = serde_json::to_value(&lau)?;
    assert!(json["restaurants"][0].get("review").is_none(), "{json}");
    Ok(())
}

#[tokio::test]
async fn party_size_filter() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    let everyone = run(&search("hcm"), &ctx).await?;
    assert!(ids(&everyone).contains(&"hcm-banh-mi-huynh-hoa"));
    let ten = SearchRestaurantsInput {
        party_size: Some(10),
        ..search("hcm")
    };
    let output = run(&ten, &ctx).await?;
    assert!(!output.restaurants.is_empty());
    assert!(
        !ids(&output).contains(&"hcm-banh-mi-huynh-hoa"),
        "8 seats < 10 people"
    );
    for r in &output.restaurants {
        let row = find(&ctx.db, &r.id)
            .await?
            .ok_or("a restaurant found by search is not in the table")?;
        assert!(row.seats_per_slot >= 10, "{}", r.id);
    }
    let too_many = SearchRestaurantsInput {
        cuisine: Some("cơm hến".into()),
        party_size: Some(20),
        ..search("Huế")
    };
    let output = run(&too_many, &ctx).await?;
    assert!(output.restaurants.is_empty());
    let reason = output.no_results_reason.ok_or("no reason given")?;
    assert!(
        reason.contains("20 người") && reason.contains("Huế"),
        "{reason}"
    );
    Ok(())
}

#[tokio::test]
async fn free_slots_shrink_with_confirmed_bookings() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    let input = SearchRestaurantsInput {
        cuisine: Some("chả cá".into()),
        date: Some(date("2026-12-01")?),
        ..search("Hà Nội")
    };
    let slots_of = |output: &SearchRestaurantsOutput| -> Fallible<Vec<(String, u32)>> {
        Ok(output
            .restaurants
            .iter()
            .find(|r| r.id == "hn-cha-ca-thang-long")
            .ok_or("hn-cha-ca-thang-long not in the results")?
            .free_slots
            .iter()
            .map(|s| (s.starts_at.to_rfc3339(), s.seats_left))
            .collect())
    };
    let before = run(&input, &ctx).await?;
    let slots = slots_of(&before)?;
    // 10:00 … 21:00 every 30 minutes, all 40 seats free.
    assert_eq!(slots.len(), 23);
    assert_eq!(slots[0], ("2026-12-01T10:00:00+07:00".to_owned(), 40));
    assert_eq!(slots[22], ("2026-12-01T21:00:00+07:00".to_owned(), 40));
    let row = find(&ctx.db, "hn-cha-ca-thang-long")
        .await?
        .ok_or("hn-cha-ca-thang-long not in the seed")?;
    for slot in &before.restaurants[0].free_slots {
        assert!(row.is_open_for_seating(slot.starts_at)?);
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
        book(&ctx.db, booking, id, party, starts_at, status).await?;
    }
    let after = slots_of(&run(&input, &ctx).await?)?;
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
    let six = slots_of(&run(&six, &ctx).await?)?;
    assert_eq!(six.len(), 21);
    assert!(six.iter().all(|(t, s)| *s >= 6 && !t.contains("T19:")));
    Ok(())
}

#[tokio::test]
async fn today_lists_only_future_slots() -> TestResult {
    // 15:10 in Hà Nội.
    let (ctx, _db) = context("2026-11-30T08:10:00Z").await?;
    let input = SearchRestaurantsInput {
        cuisine: Some("chả cá".into()),
        date: Some(date("2026-11-30")?),
        ..search("Hà Nội")
    };
    let output = run(&input, &ctx).await?;
    let thang_long = output
        .restaurants
        .iter()
        .find(|r| r.id == "hn-cha-ca-thang-long")
        .ok_or("hn-cha-ca-thang-long not in the results")?;
    assert_eq!(
        thang_long.free_slots[0].starts_at,
        at("2026-11-30T15:30:00+07:00")?
    );
    assert!(thang_long
        .free_slots
        .iter()
        .all(|s| s.starts_at.with_timezone(&Utc) > ctx.now));

    // Breakfast places are over for the day: nothing left, with a reason.
    let breakfast = SearchRestaurantsInput {
        cuisine: Some("bánh mì".into()),
        date: Some(date("2026-11-30")?),
        ..search("hcm")
    };
    let output = run(&breakfast, &ctx).await?;
    assert!(output.restaurants.is_empty());
    let reason = output.no_results_reason.ok_or("no reason given")?;
    assert!(
        reason.contains("2026-11-30") && reason.contains("không còn suất trống"),
        "{reason}"
    );
    Ok(())
}

#[tokio::test]
async fn past_dates_are_empty_with_a_reason() -> TestResult {
    // 00:30 on the 30th in Vietnam, still the 29th in UTC.
    let (ctx, _db) = context("2026-11-29T17:30:00Z").await?;
    let yesterday = SearchRestaurantsInput {
        date: Some(date("2026-11-29")?),
        ..search("Hà Nội")
    };
    let output = run(&yesterday, &ctx).await?;
    assert!(output.restaurants.is_empty());
    let reason = output.no_results_reason.ok_or("no reason given")?;
    assert!(
        reason.contains("2026-11-29") && reason.contains("đã qua"),
        "{reason}"
    );

    let today = SearchRestaurantsInput {
        date: Some(date("2026-11-30")?),
        ..search("Hà Nội")
    };
    let output = run(&today, &ctx).await?;
    assert!(
        !output.restaurants.is_empty(),
        "{:?}",
        output.no_results_reason
    );
    Ok(())
}

#[tokio::test]
async fn unknown_city_is_empty_with_a_reason() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    let output = run(&search("Paris"), &ctx).await?;
    assert!(output.restaurants.is_empty());
    let reason = output.no_results_reason.ok_or("no reason given")?;
    assert!(reason.contains("Paris"), "{reason}");
    for city in CITIES {
        assert!(reason.contains(city), "{reason}");
    }
    Ok(())
}

#[tokio::test]
async fn a_bad_row_is_skipped_not_fatal() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    sqlx::query("UPDATE restaurants SET opens_at = '10h' WHERE id = 'hn-cha-ca-la-vong'")
        .execute(&ctx.db)
        .await?;
    let input = SearchRestaurantsInput {
        cuisine: Some("chả cá".into()),
        date: Some(date("2026-12-01")?),
        ..search("Hà Nội")
    };
    let output = run(&input, &ctx).await?;
    assert_eq!(ids(&output), ["hn-cha-ca-thang-long"]);
    let bad = find(&ctx.db, "hn-cha-ca-la-vong")
        .await?
        .ok_or("hn-cha-ca-la-vong not in the seed")?;
    assert!(matches!(
        bad.slots_on(date("2026-12-01")?),
        Err(ExecError::Internal(_))
    ));
    Ok(())
}

// --- checkAvailability -------------------------------------------------------------

fn asking(party: u8, starts_at: &str) -> Result<CheckAvailabilityInput, chrono::ParseError> {
    Ok(CheckAvailabilityInput {
        restaurant_id: "hn-cha-ca-thang-long".into(),
        party_size: party,
        starts_at: at(starts_at)?,
    })
}

#[tokio::test]
async fn availability_says_yes_then_no_with_the_nearest_free_times() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    let free = availability(&asking(4, "2026-12-01T19:00:00+07:00")?, &ctx).await?;
    assert!(free.available);
    assert_eq!(free.seats_left, Some(40));
    assert_eq!(free.restaurant_name, "Chả Cá Thăng Long");
    // The nearest others first: 18:30 and 19:30, then 18:00 and 20:00.
    let nearest: Vec<String> = free
        .nearest
        .iter()
        .map(|slot| slot.starts_at.format("%H:%M").to_string())
        .collect();
    assert_eq!(nearest.len(), NEAREST_SLOTS);
    assert_eq!(
        nearest[..2].iter().collect::<HashSet<_>>(),
        ["18:30".to_owned(), "19:30".to_owned()].iter().collect()
    );
    // 38 of 40 seats taken at 19:00, and all of 19:30: a party of 4 fits at neither.
    let thang_long = "hn-cha-ca-thang-long";
    for (id, party, starts_at, status) in [
        ("b1", 19, "2026-12-01T19:00:00+07:00", "confirmed"),
        ("b2", 19, "2026-12-01T19:00:00+07:00", "confirmed"),
        ("b3", 20, "2026-12-01T19:30:00+07:00", "confirmed"),
        ("b4", 20, "2026-12-01T19:30:00+07:00", "confirmed"),
        // A cancelled booking holds no seats.
        ("b5", 20, "2026-12-01T18:30:00+07:00", "cancelled"),
        ("b6", 20, "2026-12-01T18:30:00+07:00", "cancelled"),
    ] {
        book(&ctx.db, id, thang_long, party, starts_at, status).await?;
    }
    let full = availability(&asking(4, "2026-12-01T19:00:00+07:00")?, &ctx).await?;
    assert!(!full.available);
    assert_eq!(full.seats_left, Some(2));
    let nearest: Vec<String> = full
        .nearest
        .iter()
        .map(|slot| slot.starts_at.format("%H:%M").to_string())
        .collect();
    assert_eq!(nearest[0], "18:30", "{nearest:?}");
    assert!(!nearest.contains(&"19:30".to_owned()), "{nearest:?}");
    // A party of 2 still fits at 19:00.
    let two = availability(&asking(2, "2026-12-01T19:00:00+07:00")?, &ctx).await?;
    assert!(two.available);
    Ok(())
}

#[tokio::test]
async fn availability_outside_the_hours_or_for_an_unknown_place() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    // Closes at 22:00, last seating 21:00: 21:30 is not a seating time, said not refused.
    let late = availability(&asking(2, "2026-12-01T21:30:00+07:00")?, &ctx).await?;
    assert!(!late.available);
    assert_eq!(late.seats_left, None);
    assert_eq!(
        late.nearest[0].starts_at.format("%H:%M").to_string(),
        "21:00"
    );
    // The time is read in the restaurant's offset whatever offset it came in.
    let utc = availability(&asking(2, "2026-12-01T12:00:00Z")?, &ctx).await?;
    assert_eq!(utc.starts_at.to_rfc3339(), "2026-12-01T19:00:00+07:00");
    assert!(utc.available);
    let unknown = CheckAvailabilityInput {
        restaurant_id: "nowhere".into(),
        ..asking(2, "2026-12-01T19:00:00+07:00")?
    };
    match availability(&unknown, &ctx).await {
        Err(ExecError::Tool(error)) => assert_eq!(error.issues[0].path, "restaurantId"),
        other => panic!("expected a validation error, got {other:?}"),
    }
    Ok(())
}

// --- the catalogue as the process holds it ------------------------------------------

async fn rename(ctx: &ToolContext, id: &str, name: &str) -> TestResult {
    sqlx::query("UPDATE restaurants SET name = $1 WHERE id = $2")
        .bind(name)
        .bind(id)
        .execute(&ctx.db)
        .await?;
    Ok(())
}

fn name_of<'a>(output: &'a SearchRestaurantsOutput, id: &str) -> Option<&'a str> {
    output
        .restaurants
        .iter()
        .find(|r| r.id == id)
        .map(|r| r.name.as_str())
}

#[tokio::test]
async fn searches_read_the_catalogue_once_while_it_is_fresh() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    let first = run(&search("Hà Nội"), &ctx).await?;
    assert_eq!(
        name_of(&first, "hn-cha-ca-thang-long"),
        Some("Chả Cá Thăng Long")
    );
    rename(&ctx, "hn-cha-ca-thang-long", "Renamed").await?;
    // Served from the copy read by the first search: no query for this one.
    let second = run(&search("Hà Nội"), &ctx).await?;
    assert_eq!(
        name_of(&second, "hn-cha-ca-thang-long"),
        Some("Chả Cá Thăng Long")
    );
    let shown = availability(&asking(2, "2026-12-01T19:00:00+07:00")?, &ctx).await?;
    assert_eq!(shown.restaurant_name, "Chả Cá Thăng Long");
    // A copy past its time is read again.
    let stale = ToolContext {
        catalogue: Catalogue::fresh_for(Duration::ZERO),
        ..ctx.clone()
    };
    run(&search("Hà Nội"), &stale).await?;
    rename(&ctx, "hn-cha-ca-thang-long", "Renamed again").await?;
    let reread = run(&search("Hà Nội"), &stale).await?;
    assert_eq!(
        name_of(&reread, "hn-cha-ca-thang-long"),
        Some("Renamed again")
    );
    Ok(())
}

#[tokio::test]
async fn a_row_that_does_not_decode_leaves_the_rest_of_the_catalogue() -> TestResult {
    let (ctx, _db) = context("2026-11-30T02:00:00Z").await?;
    // SQLite keeps what it is given; on PostgreSQL the column refuses it, so there is
    // nothing to skip and the search is whole either way.
    let _ =
        sqlx::query("UPDATE restaurants SET price_level = 'cheap' WHERE id = 'hn-cha-ca-la-vong'")
            .execute(&ctx.db)
            .await;
    let output = run(&search("Hà Nội"), &ctx).await?;
    assert!(
        ids(&output).contains(&"hn-cha-ca-thang-long"),
        "{:?}",
        ids(&output)
    );
    let kept = ctx
        .catalogue
        .find(&ctx.reads, "hn-cha-ca-thang-long")
        .await?;
    assert_eq!(kept.map(|r| r.name), Some("Chả Cá Thăng Long".to_owned()));
    Ok(())
}

//! `createBooking`: commits a booking, idempotent on the approved call's id.

use chrono::{DateTime, FixedOffset, SecondsFormat};
use shared::tools::{BookingStatus, CreateBookingInput, CreateBookingOutput};

use super::{
    restaurants::{self, RestaurantRow},
    ExecError, ToolContext,
};
use crate::db;

/// The checks against data that must hold before a person is asked to confirm.
pub async fn precheck(
    input: &CreateBookingInput,
    ctx: &ToolContext,
) -> Result<RestaurantRow, ExecError> {
    let Some(restaurant) = restaurants::find(&ctx.db, &input.restaurant_id).await? else {
        return Err(ExecError::invalid(format!(
            "restaurantId: no restaurant has the id \"{}\"; use an id from searchRestaurants",
            input.restaurant_id
        )));
    };
    if !restaurant.is_open_for_seating(input.starts_at)? {
        let local = input.starts_at.with_timezone(&restaurant.offset()?);
        return Err(ExecError::invalid(format!(
            "startsAt: {} seats guests {} (last seating one hour before closing); {} is outside",
            restaurant.name,
            restaurant.opening_hours(),
            local.format("%H:%M")
        )));
    }
    if i64::from(input.party_size) > restaurant.seats_per_slot {
        return Err(ExecError::invalid(format!(
            "partySize: {} takes at most {} guests per booking",
            restaurant.name, restaurant.seats_per_slot
        )));
    }
    Ok(restaurant)
}

#[derive(sqlx::FromRow)]
struct BookingRow {
    id: String,
    restaurant_id: String,
    party_size: i64,
    starts_at: String,
    status: String,
}

/// Commits the booking, or returns the one this call already made.
pub async fn run(
    input: &CreateBookingInput,
    ctx: &ToolContext,
) -> Result<CreateBookingOutput, ExecError> {
    if let Some(existing) = existing(ctx).await? {
        return replay(existing, input, ctx).await;
    }
    let restaurant = precheck(input, ctx).await?;
    let starts_at = input.starts_at.with_timezone(&restaurant.offset()?);
    let slot = restaurants::utc_key(starts_at);
    let booking_id = format!(
        "BK-{}",
        uuid::Uuid::new_v4().simple().to_string()[..8].to_uppercase()
    );

    // Reading the slot's seats and inserting must happen with no other booking of this
    // restaurant in between, or capacity could be oversold: SQLite's write lock (taken at
    // BEGIN) or, on Postgres, the restaurant's row lock, which serialises every replica.
    let mut tx = db::begin_write(&ctx.db).await?;
    db::lock_for_update(
        &mut tx,
        "SELECT id FROM restaurants WHERE id = $1 FOR UPDATE",
        &restaurant.id,
    )
    .await?;
    // SUM of an INTEGER column is BIGINT on Postgres; the CAST keeps it so whatever the
    // column becomes (SUM of BIGINT is NUMERIC, which the Any driver cannot read).
    let (taken,): (i64,) = sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(party_size), 0) AS BIGINT) FROM bookings \
         WHERE restaurant_id = $1 AND starts_at_utc = $2 AND status = 'confirmed'",
    )
    .bind(&restaurant.id)
    .bind(&slot)
    .fetch_one(&mut *tx)
    .await?;
    let status = if taken + i64::from(input.party_size) <= restaurant.seats_per_slot {
        "confirmed"
    } else {
        "waitlisted"
    };
    // The unique tool_call_id makes a racing duplicate a no-op instead of a second booking.
    sqlx::query(
        "INSERT INTO bookings (id, owner_id, conversation_id, tool_call_id, restaurant_id, party_size, \
         starts_at, starts_at_utc, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         ON CONFLICT (conversation_id, tool_call_id) DO NOTHING",
    )
    .bind(&booking_id)
    .bind(&ctx.owner_id)
    .bind(&ctx.conversation_id)
    .bind(&ctx.call_id)
    .bind(&restaurant.id)
    .bind(i64::from(input.party_size))
    .bind(starts_at.to_rfc3339_opts(SecondsFormat::Secs, true))
    .bind(&slot)
    .bind(status)
    .bind(ctx.now.to_rfc3339_opts(SecondsFormat::Millis, true))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;

    match existing(ctx).await? {
        Some(row) => output(row, restaurant.name),
        None => Err(ExecError::Internal(format!(
            "booking for call {} vanished after commit",
            ctx.call_id
        ))),
    }
}

async fn existing(ctx: &ToolContext) -> Result<Option<BookingRow>, ExecError> {
    Ok(sqlx::query_as::<_, BookingRow>(
        "SELECT id, restaurant_id, party_size, starts_at, status FROM bookings \
         WHERE conversation_id = $1 AND tool_call_id = $2",
    )
    .bind(&ctx.conversation_id)
    .bind(&ctx.call_id)
    .fetch_optional(&ctx.db)
    .await?)
}

async fn replay(
    row: BookingRow,
    input: &CreateBookingInput,
    ctx: &ToolContext,
) -> Result<CreateBookingOutput, ExecError> {
    let same_start = DateTime::parse_from_rfc3339(&row.starts_at)
        .map(|stored| stored == input.starts_at)
        .unwrap_or(false);
    if row.restaurant_id != input.restaurant_id
        || row.party_size != i64::from(input.party_size)
        || !same_start
    {
        return Err(ExecError::invalid(
            "this call already made a booking with other details; nothing was changed",
        ));
    }
    let name = restaurants::find(&ctx.db, &row.restaurant_id)
        .await?
        .map(|r| r.name)
        .unwrap_or_else(|| row.restaurant_id.clone());
    output(row, name)
}

fn output(row: BookingRow, restaurant_name: String) -> Result<CreateBookingOutput, ExecError> {
    let status = match row.status.as_str() {
        "confirmed" => BookingStatus::Confirmed,
        "waitlisted" => BookingStatus::Waitlisted,
        other => {
            return Err(ExecError::Internal(format!(
                "booking {} has status {other:?}",
                row.id
            )))
        }
    };
    let starts_at: DateTime<FixedOffset> = DateTime::parse_from_rfc3339(&row.starts_at)
        .map_err(|e| ExecError::Internal(format!("booking {} starts_at: {e}", row.id)))?;
    let party_size = u8::try_from(row.party_size)
        .map_err(|e| ExecError::Internal(format!("booking {} party_size: {e}", row.id)))?;
    Ok(CreateBookingOutput {
        booking_id: row.id,
        status,
        restaurant_id: row.restaurant_id,
        restaurant_name,
        party_size,
        starts_at,
    })
}

//! `createBooking`: commits a booking, idempotent on the approved call (its conversation
//! and call id are the idempotency key).

use chrono::{DateTime, FixedOffset, SecondsFormat};
use shared::preview::{Availability, BookingPreview};
use shared::tools::{BookingStatus, CreateBookingInput, CreateBookingOutput, Rule};

use super::{
    restaurants::{self, RestaurantRow},
    ExecError, ToolContext,
};
use crate::{db, idempotency};

/// The checks against data that must hold before a person is asked to confirm.
pub async fn precheck(
    input: &CreateBookingInput,
    ctx: &ToolContext,
) -> Result<RestaurantRow, ExecError> {
    check(
        ctx.catalogue.find(&ctx.reads, &input.restaurant_id).await?,
        input,
    )
}

/// The booking as it would be made now, for the confirmation form: [`precheck`]'s rules,
/// then the restaurant's facts and whether the slot has room for the party.
pub async fn preview(
    input: &CreateBookingInput,
    ctx: &ToolContext,
) -> Result<BookingPreview, ExecError> {
    let restaurant = precheck(input, ctx).await?;
    let starts_at = input.starts_at.with_timezone(&restaurant.offset()?);
    let slot = restaurants::utc_key(starts_at);
    let Some(seats) = restaurants::slot_seats(&ctx.reads, &restaurant.id, &slot).await? else {
        // Gone since the catalogue was read: refused as an unknown id.
        return Err(restaurants::unknown(&input.restaurant_id));
    };
    let seats_left = seats.capacity.saturating_sub(seats.taken);
    let availability = if seats_left >= u32::from(input.party_size) {
        Availability::Available { seats_left }
    } else {
        Availability::Waitlist
    };
    Ok(BookingPreview {
        restaurant_id: restaurant.id,
        restaurant_name: restaurant.name,
        address: restaurant.address,
        city: restaurant.city,
        starts_at,
        party_size: input.party_size,
        availability,
    })
}

/// The rules of [`precheck`] on the restaurant as read (`None`: no such id).
fn check(
    restaurant: Option<RestaurantRow>,
    input: &CreateBookingInput,
) -> Result<RestaurantRow, ExecError> {
    let Some(restaurant) = restaurant else {
        return Err(restaurants::unknown(&input.restaurant_id));
    };
    if !restaurant.is_open_for_seating(input.starts_at)? {
        let local = input.starts_at.with_timezone(&restaurant.offset()?);
        let requested = local.format("%H:%M").to_string();
        return Err(ExecError::invalid_at(
            "startsAt",
            Rule::OutsideHours {
                restaurant: restaurant.name.clone(),
                open: restaurant.opens_at.clone(),
                close: restaurant.closes_at.clone(),
                requested: requested.clone(),
            },
            format!(
                "startsAt: {} seats guests {} (last seating one hour before closing); {requested} is outside",
                restaurant.name,
                restaurant.opening_hours(),
            ),
        ));
    }
    if i64::from(input.party_size) > restaurant.seats_per_slot {
        return Err(ExecError::invalid_at(
            "partySize",
            Rule::PartyTooLarge {
                restaurant: restaurant.name.clone(),
                max: u32::try_from(restaurant.seats_per_slot).unwrap_or(0),
            },
            format!(
                "partySize: {} takes at most {} guests per booking",
                restaurant.name, restaurant.seats_per_slot
            ),
        ));
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

/// The idempotency scope of `createBooking` records.
pub const BOOKING_SCOPE: &str = "createBooking";

/// Commits the booking, or returns what this call already did.
///
/// The approved call is the idempotency key: the booking and its key's record commit in
/// one transaction, so a replayed decision, a retry after a crash or a second process gets
/// the stored result and never books twice.
pub async fn run(
    input: &CreateBookingInput,
    ctx: &ToolContext,
) -> Result<CreateBookingOutput, ExecError> {
    let fingerprint = idempotency::fingerprint(
        &serde_json::to_value(input)
            .map_err(|e| ExecError::Internal(format!("serialising createBooking input: {e}")))?,
    );
    let (booking, task) = (input.clone(), ctx.clone());
    let stored = idempotency::run_once(
        ctx.effect(),
        BOOKING_SCOPE,
        &ctx.call_key(),
        &fingerprint,
        move |tx| {
            Box::pin(async move {
                Ok(match book(tx, &booking, &task).await {
                    Ok(output) => Ok(idempotency::stored(&output, BOOKING_SCOPE)?),
                    // A rule broken by the data (closed then, too many guests): the same
                    // call would break it again, so it is stored like a success.
                    Err(ExecError::Tool(failure)) => Err(failure),
                    Err(error) => return Err(error),
                })
            })
        },
    )
    .await?;
    idempotency::typed(stored, BOOKING_SCOPE)
}

/// The booking itself, inside the caller's write transaction.
async fn book(
    tx: &mut sqlx::AnyConnection,
    input: &CreateBookingInput,
    ctx: &ToolContext,
) -> Result<CreateBookingOutput, ExecError> {
    // Read on the transaction's own connection: the pool's other connection (SQLite has
    // one writer) may be exactly the one waiting for this transaction to end.
    let restaurant = check(
        restaurants::find(&mut *tx, &input.restaurant_id).await?,
        input,
    )?;
    // Reading the slot's seats and inserting must happen with no other booking of this
    // restaurant in between, or capacity could be oversold: SQLite's write lock (taken at
    // BEGIN) or, on Postgres, the restaurant's row lock, which serialises every replica.
    db::lock_for_update(
        tx,
        "SELECT id FROM restaurants WHERE id = $1 FOR UPDATE",
        &restaurant.id,
    )
    .await?;
    // A booking this call made before idempotency records existed (or that a record was
    // somehow lost for): the unique (conversation, call) row is the last guard.
    if let Some(row) = existing(tx, ctx).await? {
        return replay(row, input, restaurant.name);
    }
    let starts_at = input.starts_at.with_timezone(&restaurant.offset()?);
    let slot = restaurants::utc_key(starts_at);
    let booking_id = format!(
        "BK-{}",
        uuid::Uuid::new_v4().simple().to_string()[..8].to_uppercase()
    );
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
    sqlx::query(
        "INSERT INTO bookings (id, owner_id, conversation_id, tool_call_id, restaurant_id, party_size, \
         starts_at, starts_at_utc, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
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
    match existing(tx, ctx).await? {
        Some(row) => output(row, restaurant.name),
        None => Err(ExecError::Internal(format!(
            "booking for call {} vanished after insert",
            ctx.call_id
        ))),
    }
}

async fn existing(
    tx: &mut sqlx::AnyConnection,
    ctx: &ToolContext,
) -> Result<Option<BookingRow>, ExecError> {
    Ok(sqlx::query_as::<_, BookingRow>(
        "SELECT id, restaurant_id, party_size, starts_at, status FROM bookings \
         WHERE conversation_id = $1 AND tool_call_id = $2",
    )
    .bind(&ctx.conversation_id)
    .bind(&ctx.call_id)
    .fetch_optional(&mut *tx)
    .await?)
}

fn replay(
    row: BookingRow,
    input: &CreateBookingInput,
    restaurant_name: String,
) -> Result<CreateBookingOutput, ExecError> {
    let same_start = DateTime::parse_from_rfc3339(&row.starts_at)
        .map(|stored| stored == input.starts_at)
        .unwrap_or(false);
    if row.restaurant_id != input.restaurant_id
        || row.party_size != i64::from(input.party_size)
        || !same_start
    {
        return Err(ExecError::invalid_at(
            "",
            Rule::ConflictsWithEarlier,
            "this call already made a booking with other details; nothing was changed",
        ));
    }
    output(row, restaurant_name)
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

/// `createBooking`'s executor: the preview for the form, then the booking once approved.
impl super::Executor for shared::tools::CreateBooking {
    async fn execute(
        input: &CreateBookingInput,
        ctx: &ToolContext,
    ) -> Result<CreateBookingOutput, ExecError> {
        run(input, ctx).await
    }

    async fn precheck(
        input: &CreateBookingInput,
        ctx: &ToolContext,
    ) -> Result<Option<shared::preview::ApprovalPreview>, ExecError> {
        preview(input, ctx)
            .await
            .map(|preview| Some(shared::preview::ApprovalPreview::Booking(preview)))
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use shared::tools::ErrorCode;

    use super::*;
    use crate::db::test_db::TestDatabase;

    async fn context() -> (ToolContext, TestDatabase) {
        let (db, guard) = crate::db::test_pool().await;
        let ctx = ToolContext {
            reads: crate::db::Reads::shared(db.clone()),
            db,
            owner_id: "owner-a".into(),
            conversation_id: "conversation-1".into(),
            call_id: "call_0".into(),
            now: DateTime::parse_from_rfc3339("2026-11-29T03:00:00Z")
                .unwrap()
                .with_timezone(&Utc),
            upstreams: Default::default(),
            catalogue: Default::default(),
            take: None,
        };
        (ctx, guard)
    }

    fn input(party_size: u8) -> CreateBookingInput {
        CreateBookingInput {
            restaurant_id: "hn-quan-an-ngon".into(),
            party_size,
            starts_at: DateTime::parse_from_rfc3339("2026-12-24T19:00:00+07:00").unwrap(),
        }
    }

    async fn count(ctx: &ToolContext, sql: &'static str) -> i64 {
        sqlx::query_scalar(sql).fetch_one(&ctx.db).await.unwrap()
    }

    #[tokio::test]
    async fn a_repeated_call_returns_the_stored_booking_and_books_once() {
        let (ctx, _guard) = context().await;
        let first = run(&input(4), &ctx).await.unwrap();
        let second = run(&input(4), &ctx).await.unwrap();
        assert_eq!(first, second);
        assert_eq!(first.status, BookingStatus::Confirmed);
        assert_eq!(count(&ctx, "SELECT COUNT(*) FROM bookings").await, 1);
        assert_eq!(
            count(
                &ctx,
                "SELECT COUNT(*) FROM idempotency_keys WHERE scope = 'createBooking' AND state = 'done'"
            )
            .await,
            1
        );
    }

    #[tokio::test]
    async fn a_booking_reads_its_restaurant_afresh_not_the_catalogue_copy(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let (ctx, _guard) = context().await;
        let shown = preview(&input(4), &ctx).await?;
        assert!(matches!(shown.availability, Availability::Available { .. }));
        // The form was shown from the process's copy; the restaurant then lost its seats.
        sqlx::query("UPDATE restaurants SET seats_per_slot = 1 WHERE id = $1")
            .bind(&shown.restaurant_id)
            .execute(&ctx.db)
            .await?;
        // The form's room left is read now, with the capacity beside the seats taken.
        let again = preview(&input(4), &ctx).await?;
        assert_eq!(again.availability, Availability::Waitlist);
        match run(&input(4), &ctx).await {
            Err(ExecError::Tool(error)) => {
                assert_eq!(error.code, ErrorCode::ValidationError);
                assert!(error.message.contains("at most 1"), "{}", error.message);
            }
            other => return Err(format!("expected the party to be refused, got {other:?}").into()),
        }
        assert_eq!(count(&ctx, "SELECT COUNT(*) FROM bookings").await, 0);
        Ok(())
    }

    #[tokio::test]
    async fn the_same_call_with_other_details_is_refused_and_changes_nothing() {
        let (ctx, _guard) = context().await;
        run(&input(4), &ctx).await.unwrap();
        match run(&input(5), &ctx).await {
            Err(ExecError::Tool(error)) => {
                assert_eq!(error.code, ErrorCode::IdempotencyKeyReused);
                assert!(!error.retryable);
            }
            other => panic!("expected IDEMPOTENCY_KEY_REUSED, got {other:?}"),
        }
        let (size,): (i64,) = sqlx::query_as("SELECT party_size FROM bookings")
            .fetch_one(&ctx.db)
            .await
            .unwrap();
        assert_eq!(size, 4);
    }

    #[tokio::test]
    async fn the_same_call_id_in_another_conversation_is_another_booking() {
        let (ctx, _guard) = context().await;
        let other = ToolContext {
            conversation_id: "conversation-2".into(),
            ..ctx.clone()
        };
        let a = run(&input(2), &ctx).await.unwrap();
        let b = run(&input(2), &other).await.unwrap();
        assert_ne!(a.booking_id, b.booking_id);
        assert_eq!(count(&ctx, "SELECT COUNT(*) FROM bookings").await, 2);
    }

    #[tokio::test]
    async fn a_rule_broken_by_the_data_is_stored_and_replayed() {
        let (ctx, _guard) = context().await;
        // 03:00 is before Quán Ăn Ngon opens (07:00).
        let closed = CreateBookingInput {
            starts_at: DateTime::parse_from_rfc3339("2026-12-24T03:00:00+07:00").unwrap(),
            ..input(2)
        };
        for _ in 0..2 {
            match run(&closed, &ctx).await {
                Err(ExecError::Tool(error)) => {
                    assert_eq!(error.code, ErrorCode::ValidationError);
                    assert!(error.message.contains("startsAt"), "{}", error.message);
                }
                other => panic!("expected a validation error, got {other:?}"),
            }
        }
        assert_eq!(count(&ctx, "SELECT COUNT(*) FROM bookings").await, 0);
        assert_eq!(
            count(
                &ctx,
                "SELECT COUNT(*) FROM idempotency_keys WHERE state = 'done' AND result LIKE '%VALIDATION_ERROR%'"
            )
            .await,
            1
        );
    }

    #[tokio::test]
    async fn fifty_concurrent_runs_of_one_call_book_once() {
        let (ctx, _guard) = context().await;
        let runs = (0..50).map(|_| {
            let ctx = ctx.clone();
            tokio::spawn(async move { run(&input(3), &ctx).await })
        });
        let results = futures::future::join_all(runs).await;
        let mut booked = Vec::new();
        for result in results {
            match result.unwrap() {
                Ok(output) => booked.push(output),
                Err(ExecError::Tool(error)) => {
                    assert_eq!(error.code, ErrorCode::IdempotencyKeyInUse);
                    assert!(error.retryable);
                }
                Err(other) => panic!("{other:?}"),
            }
        }
        assert!(!booked.is_empty());
        assert!(booked.iter().all(|b| *b == booked[0]));
        assert_eq!(count(&ctx, "SELECT COUNT(*) FROM bookings").await, 1);
    }
}

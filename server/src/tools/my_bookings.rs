//! `listBookings` and `cancelBooking`: the person's own bookings, and nobody else's.
//!
//! Every query filters on the conversation owner's id, and a booking of another owner is
//! answered exactly like one that does not exist, so booking ids cannot be probed.
//! `cancelBooking` is idempotent on the approved call's id through [`crate::idempotency`]:
//! a replayed call returns the stored result and changes nothing.

use chrono::{DateTime, FixedOffset, Utc};
use serde_json::json;
use shared::tools::{
    BookingState, BookingSummary, CancelBookingInput, CancelBookingOutput, Entity, ErrorCode,
    ListBookingsInput, ListBookingsOutput, Rule, ToolError,
};
use sqlx::AnyConnection;

use super::{restaurants::utc_key, ExecError, ToolContext};
use crate::{
    db::{self, Pool},
    idempotency,
};

/// The idempotency scope of `cancelBooking` records.
pub const CANCEL_SCOPE: &str = "cancelBooking";

/// Why an empty list is empty, when only upcoming bookings were asked for.
const NO_UPCOMING: &str = "Bạn chưa có đặt bàn nào sắp tới.";
/// Why an empty list is empty, when every booking was asked for.
const NO_BOOKINGS: &str = "Bạn chưa có đặt bàn nào.";

/// One booking with its restaurant's name, as read from the database.
#[derive(sqlx::FromRow)]
struct SummaryRow {
    id: String,
    restaurant_name: String,
    party_size: i64,
    starts_at: String,
    status: String,
}

// Static SQL only (sqlx rejects built strings): one statement per filter.
/// The owner's bookings that start now or later and are not cancelled.
const LIST_UPCOMING: &str = "SELECT b.id, r.name AS restaurant_name, b.party_size, b.starts_at, \
     b.status FROM bookings b JOIN restaurants r ON r.id = b.restaurant_id \
     WHERE b.owner_id = $1 AND b.status <> 'cancelled' AND b.starts_at_utc >= $2 \
     ORDER BY b.starts_at_utc, b.id";
/// Every booking of the owner.
const LIST_ALL: &str = "SELECT b.id, r.name AS restaurant_name, b.party_size, b.starts_at, \
     b.status FROM bookings b JOIN restaurants r ON r.id = b.restaurant_id \
     WHERE b.owner_id = $1 ORDER BY b.starts_at_utc, b.id";
/// One booking of the owner.
const ONE: &str = "SELECT b.id, r.name AS restaurant_name, b.party_size, b.starts_at, b.status \
     FROM bookings b JOIN restaurants r ON r.id = b.restaurant_id \
     WHERE b.id = $1 AND b.owner_id = $2";

fn state(booking_id: &str, status: &str) -> Result<BookingState, ExecError> {
    match status {
        "confirmed" => Ok(BookingState::Confirmed),
        "waitlisted" => Ok(BookingState::Waitlisted),
        "cancelled" => Ok(BookingState::Cancelled),
        other => Err(ExecError::Internal(format!(
            "booking {booking_id} has status {other:?}"
        ))),
    }
}

impl SummaryRow {
    fn into_summary(self) -> Result<BookingSummary, ExecError> {
        let status = state(&self.id, &self.status)?;
        let starts_at: DateTime<FixedOffset> = DateTime::parse_from_rfc3339(&self.starts_at)
            .map_err(|e| ExecError::Internal(format!("booking {} starts_at: {e}", self.id)))?;
        let party_size = u8::try_from(self.party_size)
            .map_err(|e| ExecError::Internal(format!("booking {} party_size: {e}", self.id)))?;
        Ok(BookingSummary {
            booking_id: self.id,
            restaurant_name: self.restaurant_name,
            party_size,
            starts_at,
            status,
        })
    }
}

/// The owner's bookings, soonest first: upcoming and not cancelled, or all of them with
/// `include_all`. An empty list is a success with a Vietnamese `no_results_reason`.
/// Shared by `listBookings` and the HTTP bookings endpoint.
pub async fn list_for_owner(
    db: &Pool,
    owner_id: &str,
    now: DateTime<Utc>,
    include_all: bool,
) -> Result<ListBookingsOutput, ExecError> {
    let rows = if include_all {
        sqlx::query_as::<_, SummaryRow>(LIST_ALL)
            .bind(owner_id)
            .fetch_all(db)
            .await?
    } else {
        // starts_at_utc is 'YYYY-MM-DDTHH:MM:SSZ', so text order is time order.
        sqlx::query_as::<_, SummaryRow>(LIST_UPCOMING)
            .bind(owner_id)
            .bind(utc_key(now.fixed_offset()))
            .fetch_all(db)
            .await?
    };
    let bookings = rows
        .into_iter()
        .map(SummaryRow::into_summary)
        .collect::<Result<Vec<_>, _>>()?;
    let no_results_reason = bookings.is_empty().then(|| {
        if include_all {
            NO_BOOKINGS
        } else {
            NO_UPCOMING
        }
        .to_owned()
    });
    Ok(ListBookingsOutput {
        bookings,
        no_results_reason,
    })
}

/// Runs `listBookings` for the conversation's owner.
pub async fn list(
    input: &ListBookingsInput,
    ctx: &ToolContext,
) -> Result<ListBookingsOutput, ExecError> {
    list_for_owner(
        &ctx.db,
        &ctx.owner_id,
        ctx.now,
        input.include_past_and_cancelled,
    )
    .await
}

/// The one answer for a booking that is missing and for one that is someone else's.
fn not_found(booking_id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::NotFound,
        format!(
            "bookingId: you have no booking \"{booking_id}\"; use a bookingId from listBookings"
        ),
    )
    .at(
        "bookingId",
        Rule::NoSuch {
            entity: Entity::Booking,
        },
    )
}

/// The owner's booking, before the person is asked to confirm cancelling it: a booking
/// that does not exist or is not theirs fails with `NOT_FOUND`, the same way.
pub async fn precheck(
    input: &CancelBookingInput,
    ctx: &ToolContext,
) -> Result<BookingSummary, ExecError> {
    let row = sqlx::query_as::<_, SummaryRow>(ONE)
        .bind(&input.booking_id)
        .bind(&ctx.owner_id)
        .fetch_optional(&ctx.db)
        .await?;
    match row {
        Some(row) => row.into_summary(),
        None => Err(ExecError::Tool(not_found(&input.booking_id))),
    }
}

/// Cancels the owner's booking, once per approved call.
///
/// The first run of a call id claims it, cancels in one write transaction and stores the
/// result (success or `NOT_FOUND`) in the same transaction; any later run of that call id
/// gets the stored result back without touching the booking.
pub async fn cancel(
    input: &CancelBookingInput,
    ctx: &ToolContext,
) -> Result<CancelBookingOutput, ExecError> {
    let fingerprint = idempotency::fingerprint(&json!({ "bookingId": input.booking_id }));
    let (input, task) = (input.clone(), ctx.clone());
    let stored = idempotency::run_once(
        ctx.effect(),
        CANCEL_SCOPE,
        &ctx.call_key(),
        &fingerprint,
        move |tx| {
            Box::pin(async move {
                Ok(match cancel_in(tx, &input, &task).await? {
                    Ok(output) => Ok(idempotency::stored(&output, CANCEL_SCOPE)?),
                    // NOT_FOUND: a retry would only repeat it, so it is stored like a success.
                    Err(failure) => Err(failure),
                })
            })
        },
    )
    .await?;
    idempotency::typed(stored, CANCEL_SCOPE)
}

/// The cancellation itself, inside the caller's write transaction. `Ok(Err(_))` is a
/// failure to store and replay (`NOT_FOUND`); `Err(_)` is ours, and rolls back.
async fn cancel_in(
    tx: &mut AnyConnection,
    input: &CancelBookingInput,
    ctx: &ToolContext,
) -> Result<Result<CancelBookingOutput, ToolError>, ExecError> {
    // On Postgres, lock the row so a concurrent cancel waits for this one.
    db::lock_for_update(
        tx,
        "SELECT id FROM bookings WHERE id = $1 FOR UPDATE",
        &input.booking_id,
    )
    .await?;
    let found = sqlx::query_as::<_, SummaryRow>(ONE)
        .bind(&input.booking_id)
        .bind(&ctx.owner_id)
        .fetch_optional(&mut *tx)
        .await?;
    if found.is_none() {
        return Ok(Err(not_found(&input.booking_id)));
    }
    let changed = sqlx::query(
        "UPDATE bookings SET status = 'cancelled' \
         WHERE id = $1 AND owner_id = $2 AND status <> 'cancelled'",
    )
    .bind(&input.booking_id)
    .bind(&ctx.owner_id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    // Read again, so the answer is what the database now holds.
    let Some(row) = sqlx::query_as::<_, SummaryRow>(ONE)
        .bind(&input.booking_id)
        .bind(&ctx.owner_id)
        .fetch_optional(&mut *tx)
        .await?
    else {
        return Err(ExecError::Internal(format!(
            "booking {} vanished while being cancelled",
            input.booking_id
        )));
    };
    let booking = row.into_summary()?;
    if booking.status != BookingState::Cancelled {
        return Err(ExecError::Internal(format!(
            "booking {} is {:?} after cancelling",
            booking.booking_id, booking.status
        )));
    }
    Ok(Ok(CancelBookingOutput {
        booking,
        // No row changed: it was cancelled before (by another call or elsewhere).
        already_cancelled: changed == 0,
    }))
}

/// `listBookings`'s executor.
impl super::Executor for shared::tools::ListBookings {
    async fn execute(
        input: &shared::tools::ListBookingsInput,
        ctx: &ToolContext,
    ) -> Result<shared::tools::ListBookingsOutput, ExecError> {
        list(input, ctx).await
    }
}

/// `cancelBooking`'s executor: the booking as it stands for the form, then the
/// cancellation once approved.
impl super::Executor for shared::tools::CancelBooking {
    async fn execute(
        input: &shared::tools::CancelBookingInput,
        ctx: &ToolContext,
    ) -> Result<shared::tools::CancelBookingOutput, ExecError> {
        cancel(input, ctx).await
    }

    async fn precheck(
        input: &shared::tools::CancelBookingInput,
        ctx: &ToolContext,
    ) -> Result<Option<shared::preview::ApprovalPreview>, ExecError> {
        precheck(input, ctx).await.map(|booking| {
            Some(shared::preview::ApprovalPreview::Cancellation(
                shared::preview::CancellationPreview { booking },
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use chrono::SecondsFormat;

    use super::*;
    use crate::db::test_db::TestDatabase;

    /// 10:00 in Việt Nam on 29 November 2026.
    const NOW: &str = "2026-11-29T03:00:00Z";

    async fn context() -> (ToolContext, TestDatabase) {
        let (db, guard) = crate::db::test_pool().await;
        let ctx = ToolContext {
            reads: crate::db::Reads::shared(db.clone()),
            db,
            owner_id: "owner-a".into(),
            conversation_id: "conversation".into(),
            call_id: "call-1".into(),
            now: DateTime::parse_from_rfc3339(NOW)
                .unwrap()
                .with_timezone(&Utc),
            upstreams: Default::default(),
            catalogue: Default::default(),
            take: None,
        };
        (ctx, guard)
    }

    fn with(ctx: &ToolContext, owner: &str, call: &str) -> ToolContext {
        ToolContext {
            owner_id: owner.into(),
            call_id: call.into(),
            ..ctx.clone()
        }
    }

    /// Inserts a booking row directly; `starts_at` is local time in Việt Nam.
    async fn insert(db: &Pool, id: &str, owner: &str, starts_at: &str, status: &str) {
        let local = DateTime::parse_from_rfc3339(starts_at).unwrap();
        sqlx::query(
            "INSERT INTO bookings (id, owner_id, conversation_id, tool_call_id, restaurant_id, \
             party_size, starts_at, starts_at_utc, status, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(id)
        .bind(owner)
        .bind("seed")
        .bind(format!("seed-{id}"))
        .bind("hn-cha-ca-thang-long")
        .bind(4_i64)
        .bind(local.to_rfc3339_opts(SecondsFormat::Secs, true))
        .bind(utc_key(local))
        .bind(status)
        .bind(NOW)
        .execute(db)
        .await
        .unwrap();
    }

    async fn status_of(db: &Pool, id: &str) -> String {
        sqlx::query_scalar("SELECT status FROM bookings WHERE id = $1")
            .bind(id)
            .fetch_one(db)
            .await
            .unwrap()
    }

    async fn set_status(db: &Pool, id: &str, status: &str) {
        sqlx::query("UPDATE bookings SET status = $1 WHERE id = $2")
            .bind(status)
            .bind(id)
            .execute(db)
            .await
            .unwrap();
    }

    fn cancel_input(id: &str) -> CancelBookingInput {
        CancelBookingInput {
            booking_id: id.into(),
        }
    }

    fn ids(output: &ListBookingsOutput) -> Vec<&str> {
        output
            .bookings
            .iter()
            .map(|b| b.booking_id.as_str())
            .collect()
    }

    fn expect_not_found(result: Result<impl std::fmt::Debug, ExecError>) -> ToolError {
        match result {
            Err(ExecError::Tool(error)) => {
                assert_eq!(error.code, ErrorCode::NotFound);
                assert!(!error.retryable);
                error
            }
            other => panic!("expected NOT_FOUND, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn an_empty_list_is_a_success_with_a_reason() {
        let (ctx, _db) = context().await;
        let upcoming = list(
            &ListBookingsInput {
                include_past_and_cancelled: false,
            },
            &ctx,
        )
        .await
        .unwrap();
        assert!(upcoming.bookings.is_empty());
        assert_eq!(upcoming.no_results_reason.as_deref(), Some(NO_UPCOMING));
        let all = list_for_owner(&ctx.db, &ctx.owner_id, ctx.now, true)
            .await
            .unwrap();
        assert_eq!(all.no_results_reason.as_deref(), Some(NO_BOOKINGS));
        // Serialised, the reason is there and the list is an empty array.
        let json = serde_json::to_value(&upcoming).unwrap();
        assert_eq!(json["bookings"], json!([]));
        assert_eq!(json["noResultsReason"], NO_UPCOMING);
    }

    #[tokio::test]
    async fn lists_the_owners_upcoming_bookings_soonest_first() {
        let (ctx, _db) = context().await;
        insert(
            &ctx.db,
            "BK-LATER",
            "owner-a",
            "2026-12-05T19:00:00+07:00",
            "confirmed",
        )
        .await;
        insert(
            &ctx.db,
            "BK-SOON",
            "owner-a",
            "2026-11-30T12:00:00+07:00",
            "waitlisted",
        )
        .await;
        insert(
            &ctx.db,
            "BK-PAST",
            "owner-a",
            "2026-11-28T19:00:00+07:00",
            "confirmed",
        )
        .await;
        insert(
            &ctx.db,
            "BK-GONE",
            "owner-a",
            "2026-12-01T19:00:00+07:00",
            "cancelled",
        )
        .await;
        insert(
            &ctx.db,
            "BK-OTHER",
            "owner-b",
            "2026-11-30T11:00:00+07:00",
            "confirmed",
        )
        .await;

        let upcoming = list(
            &ListBookingsInput {
                include_past_and_cancelled: false,
            },
            &ctx,
        )
        .await
        .unwrap();
        assert_eq!(ids(&upcoming), ["BK-SOON", "BK-LATER"]);
        assert_eq!(upcoming.no_results_reason, None);
        let soon = &upcoming.bookings[0];
        assert_eq!(soon.restaurant_name, "Chả Cá Thăng Long");
        assert_eq!(soon.party_size, 4);
        assert_eq!(soon.status, BookingState::Waitlisted);
        assert_eq!(
            soon.starts_at,
            DateTime::parse_from_rfc3339("2026-11-30T12:00:00+07:00").unwrap()
        );

        let all = list(
            &ListBookingsInput {
                include_past_and_cancelled: true,
            },
            &ctx,
        )
        .await
        .unwrap();
        assert_eq!(ids(&all), ["BK-PAST", "BK-SOON", "BK-GONE", "BK-LATER"]);
        assert_eq!(all.bookings[2].status, BookingState::Cancelled);

        // The other owner sees only theirs.
        let theirs = list_for_owner(&ctx.db, "owner-b", ctx.now, true)
            .await
            .unwrap();
        assert_eq!(ids(&theirs), ["BK-OTHER"]);
    }

    #[tokio::test]
    async fn precheck_finds_only_the_owners_booking() {
        let (ctx, _db) = context().await;
        insert(
            &ctx.db,
            "BK-MINE",
            "owner-a",
            "2026-11-30T12:00:00+07:00",
            "confirmed",
        )
        .await;
        insert(
            &ctx.db,
            "BK-THEIRS",
            "owner-b",
            "2026-11-30T12:00:00+07:00",
            "confirmed",
        )
        .await;
        let mine = precheck(&cancel_input("BK-MINE"), &ctx).await.unwrap();
        assert_eq!(mine.booking_id, "BK-MINE");
        assert_eq!(mine.status, BookingState::Confirmed);
        let theirs = expect_not_found(precheck(&cancel_input("BK-THEIRS"), &ctx).await);
        // A missing booking gets the very same answer, but for the id echoed back.
        let missing = expect_not_found(precheck(&cancel_input("BK-NONE"), &ctx).await);
        assert_eq!(
            theirs.message.replace("BK-THEIRS", "<id>"),
            missing.message.replace("BK-NONE", "<id>")
        );
    }

    #[tokio::test]
    async fn cancel_cancels_once_per_call() {
        let (ctx, _db) = context().await;
        insert(
            &ctx.db,
            "BK-1",
            "owner-a",
            "2026-11-30T12:00:00+07:00",
            "confirmed",
        )
        .await;
        let first = cancel(&cancel_input("BK-1"), &ctx).await.unwrap();
        assert!(!first.already_cancelled);
        assert_eq!(first.booking.booking_id, "BK-1");
        assert_eq!(first.booking.status, BookingState::Cancelled);
        assert_eq!(status_of(&ctx.db, "BK-1").await, "cancelled");

        // Put the booking back behind the tool's back: a replay of the same call must
        // return the stored result and not cancel it a second time.
        set_status(&ctx.db, "BK-1", "confirmed").await;
        let again = cancel(&cancel_input("BK-1"), &ctx).await.unwrap();
        assert_eq!(again, first);
        assert_eq!(status_of(&ctx.db, "BK-1").await, "confirmed");
    }

    #[tokio::test]
    async fn a_call_id_cannot_cancel_a_second_booking() {
        let (ctx, _db) = context().await;
        insert(
            &ctx.db,
            "BK-1",
            "owner-a",
            "2026-11-30T12:00:00+07:00",
            "confirmed",
        )
        .await;
        insert(
            &ctx.db,
            "BK-2",
            "owner-a",
            "2026-11-30T13:00:00+07:00",
            "confirmed",
        )
        .await;
        cancel(&cancel_input("BK-1"), &ctx).await.unwrap();
        match cancel(&cancel_input("BK-2"), &ctx).await {
            Err(ExecError::Tool(error)) => {
                assert_eq!(error.code, ErrorCode::IdempotencyKeyReused)
            }
            other => panic!("expected IDEMPOTENCY_KEY_REUSED, got {other:?}"),
        }
        assert_eq!(status_of(&ctx.db, "BK-2").await, "confirmed");
    }

    #[tokio::test]
    async fn another_owners_booking_is_not_found_and_unchanged() {
        let (ctx, _db) = context().await;
        insert(
            &ctx.db,
            "BK-B",
            "owner-b",
            "2026-11-30T12:00:00+07:00",
            "confirmed",
        )
        .await;
        let theirs = expect_not_found(cancel(&cancel_input("BK-B"), &ctx).await);
        assert_eq!(status_of(&ctx.db, "BK-B").await, "confirmed");
        let missing = expect_not_found(
            cancel(&cancel_input("BK-NONE"), &with(&ctx, "owner-a", "call-2")).await,
        );
        assert_eq!(
            theirs.message.replace("BK-B", "<id>"),
            missing.message.replace("BK-NONE", "<id>")
        );
        // The failure is stored: replaying the call gives the same answer, even though
        // the booking would now be found.
        sqlx::query("UPDATE bookings SET owner_id = 'owner-a' WHERE id = 'BK-B'")
            .execute(&ctx.db)
            .await
            .unwrap();
        let replay = expect_not_found(cancel(&cancel_input("BK-B"), &ctx).await);
        assert_eq!(replay, theirs);
        assert_eq!(status_of(&ctx.db, "BK-B").await, "confirmed");
    }

    #[tokio::test]
    async fn a_booking_cancelled_by_another_call_is_already_cancelled() {
        let (ctx, _db) = context().await;
        insert(
            &ctx.db,
            "BK-1",
            "owner-a",
            "2026-11-30T12:00:00+07:00",
            "confirmed",
        )
        .await;
        let first = cancel(&cancel_input("BK-1"), &with(&ctx, "owner-a", "call-a"))
            .await
            .unwrap();
        assert!(!first.already_cancelled);
        let second = cancel(&cancel_input("BK-1"), &with(&ctx, "owner-a", "call-b"))
            .await
            .unwrap();
        assert!(second.already_cancelled);
        assert_eq!(second.booking.status, BookingState::Cancelled);
        assert_eq!(status_of(&ctx.db, "BK-1").await, "cancelled");
    }

    #[tokio::test]
    async fn the_output_serialises_as_the_tool_promises() {
        let (ctx, _db) = context().await;
        insert(
            &ctx.db,
            "BK-1",
            "owner-a",
            "2026-11-30T12:00:00+07:00",
            "waitlisted",
        )
        .await;
        let output = cancel(&cancel_input("BK-1"), &ctx).await.unwrap();
        let json = serde_json::to_value(&output).unwrap();
        assert_eq!(json["alreadyCancelled"], false);
        assert_eq!(json["booking"]["bookingId"], "BK-1");
        assert_eq!(json["booking"]["status"], "cancelled");
        assert_eq!(json["booking"]["startsAt"], "2026-11-30T12:00:00+07:00");
    }
}

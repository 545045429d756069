//! `prepare_checkout` (a draft: an idempotent price quote) and `create_checkout_session`
//! (buys a draft at most once, idempotent on the model's `idempotency_key`).

use super::*;

/// Delivery for a gift of `price`.
fn delivery_for(price: i64) -> i64 {
    if price >= FREE_DELIVERY_FROM_VND {
        0
    } else {
        DELIVERY_VND
    }
}

/// A draft with its gift's name, as read back.
#[derive(Debug, Clone, sqlx::FromRow)]
struct DraftRow {
    id: String,
    gift_id: String,
    gift_name: String,
    price_vnd: i64,
    delivery_vnd: i64,
    total_vnd: i64,
    status: String,
}

/// The columns `DraftRow` reads, from `checkout_drafts d JOIN gifts g`. A macro so queries
/// stay `&'static str` (sqlx 0.9 refuses SQL built at run time).
macro_rules! draft_select {
    () => {
        "SELECT d.id, d.gift_id, g.name AS gift_name, d.price_vnd, d.delivery_vnd, \
         d.total_vnd, d.status FROM checkout_drafts d JOIN gifts g ON g.id = d.gift_id "
    };
}

impl DraftRow {
    fn output(&self) -> Result<CheckoutDraft, ExecError> {
        Ok(CheckoutDraft {
            draft_id: self.id.clone(),
            gift_id: self.gift_id.clone(),
            gift_name: self.gift_name.clone(),
            price_vnd: vnd(&self.id, "price_vnd", self.price_vnd)?,
            delivery_vnd: vnd(&self.id, "delivery_vnd", self.delivery_vnd)?,
            total_vnd: vnd(&self.id, "total_vnd", self.total_vnd)?,
            fictional: true,
        })
    }
}

fn gift_not_found(gift_id: &str) -> ExecError {
    ExecError::Tool(
        ToolError::new(
            ErrorCode::NotFound,
            format!(
                "gift_id: no gift has the id \"{gift_id}\"; use a gift_id from suggest_gifts. \
             Nothing was prepared."
            ),
        )
        .at(
            "gift_id",
            Rule::NoSuch {
                entity: Entity::Gift,
            },
        ),
    )
}

/// The same answer for a draft that does not exist and one of another person, so draft
/// ids cannot be probed.
fn draft_not_found(draft_id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::NotFound,
        format!(
            "draft_id: no checkout draft has the id \"{draft_id}\"; call prepare_checkout for \
             the gift to get one. Nothing was bought."
        ),
    )
    .at(
        "draft_id",
        Rule::NoSuch {
            entity: Entity::Draft,
        },
    )
}

fn draft_already_committed(draft_id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::DraftAlreadyCommitted,
        format!(
            "draft_id: the draft \"{draft_id}\" was already bought; nothing more was charged. \
             To buy the same gift again, call prepare_checkout for a new draft."
        ),
    )
}

fn short_id(prefix: &str, len: usize) -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string().to_uppercase();
    format!("{prefix}{}", &hex[..len.min(hex.len())])
}

/// The open draft of `owner_id` for `gift_id`, if any.
async fn open_draft(
    db: &Pool,
    owner_id: &str,
    gift_id: &str,
) -> Result<Option<DraftRow>, ExecError> {
    Ok(sqlx::query_as::<_, DraftRow>(concat!(
        draft_select!(),
        "WHERE d.owner_id = $1 AND d.gift_id = $2 AND d.status = 'open'"
    ))
    .bind(owner_id)
    .bind(gift_id)
    .fetch_optional(db)
    .await?)
}

/// `prepare_checkout`: the open draft of this person for this gift, made if there is none.
/// Buys nothing; calling it again returns the same draft until that draft is bought.
pub async fn prepare(
    input: &PrepareCheckoutInput,
    ctx: &ToolContext,
) -> Result<CheckoutDraft, ExecError> {
    let gift_id = input.gift_id.trim();
    let price: Option<i64> = sqlx::query_scalar("SELECT price_vnd FROM gifts WHERE id = $1")
        .bind(gift_id)
        .fetch_optional(&ctx.db)
        .await?;
    let Some(price) = price else {
        return Err(gift_not_found(gift_id));
    };
    let delivery = delivery_for(price);
    let created_at = ctx.now.to_rfc3339_opts(SecondsFormat::Millis, true);
    // Insert-or-get: the partial unique index (owner, gift) WHERE open turns a second insert
    // (sequential or racing) into a no-op, and the read returns whichever draft won. If the
    // open draft is bought between the two statements, the next round makes a new one.
    for _ in 0..3 {
        sqlx::query(
            "INSERT INTO checkout_drafts (id, owner_id, gift_id, price_vnd, delivery_vnd, \
             total_vnd, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, 'open', $7) \
             ON CONFLICT DO NOTHING",
        )
        .bind(short_id("DR-", 8))
        .bind(&ctx.owner_id)
        .bind(gift_id)
        .bind(price)
        .bind(delivery)
        .bind(price + delivery)
        .bind(&created_at)
        .execute(&ctx.db)
        .await?;
        if let Some(draft) = open_draft(&ctx.db, &ctx.owner_id, gift_id).await? {
            return draft.output();
        }
    }
    Err(ExecError::Internal(format!(
        "no open draft for gift {gift_id} after three inserts"
    )))
}

/// What the idempotency key of a purchase stands for: the draft (the key itself and the
/// owner are the record's identity, not its arguments).
fn checkout_fingerprint(draft_id: &str) -> String {
    idempotency::fingerprint(&json!({ "draft_id": draft_id }))
}

/// The checks before the person is asked to confirm a purchase: the key was not used for
/// another draft, the draft exists, is this person's, and is still open. A retry of the
/// purchase that bought it (same key, same draft) passes: it only replays.
pub async fn precheck(
    input: &CreateCheckoutSessionInput,
    ctx: &ToolContext,
) -> Result<CheckoutDraft, ExecError> {
    let draft_id = input.draft_id.trim();
    idempotency::peek(
        &ctx.db,
        &ctx.owner_id,
        CHECKOUT_SCOPE,
        &input.idempotency_key,
        &checkout_fingerprint(draft_id),
    )
    .await?;
    let draft: Option<DraftRow> = sqlx::query_as(concat!(
        draft_select!(),
        "WHERE d.id = $1 AND d.owner_id = $2"
    ))
    .bind(draft_id)
    .bind(&ctx.owner_id)
    .fetch_optional(&ctx.db)
    .await?;
    let Some(draft) = draft else {
        return Err(ExecError::Tool(draft_not_found(draft_id)));
    };
    match draft.status.as_str() {
        "open" => draft.output(),
        "committed" => {
            let bought_with: Option<String> = sqlx::query_scalar(
                "SELECT idempotency_key FROM checkouts WHERE draft_id = $1 AND owner_id = $2",
            )
            .bind(draft_id)
            .bind(&ctx.owner_id)
            .fetch_optional(&ctx.db)
            .await?;
            if bought_with.as_deref() == Some(input.idempotency_key.as_str()) {
                draft.output()
            } else {
                Err(ExecError::Tool(draft_already_committed(draft_id)))
            }
        }
        other => Err(ExecError::Internal(format!(
            "draft {draft_id} has status {other:?}"
        ))),
    }
}

/// `create_checkout_session`: buys the draft, at most once per draft and per key.
///
/// The first request with a key runs; a repeat with the same key and draft gets the same
/// answer (success or failure) without buying again; the same key with another draft is
/// refused. The checkout, the draft's new status and the key's record commit in one
/// transaction.
pub async fn commit(
    input: &CreateCheckoutSessionInput,
    ctx: &ToolContext,
) -> Result<CheckoutSession, ExecError> {
    let draft_id = input.draft_id.trim().to_owned();
    let fingerprint = checkout_fingerprint(&draft_id);
    let (purchase_input, task) = (input.clone(), ctx.clone());
    let stored = idempotency::run_once(
        ctx.effect(),
        CHECKOUT_SCOPE,
        &input.idempotency_key,
        &fingerprint,
        move |tx| {
            Box::pin(async move {
                Ok(
                    match purchase(tx, &draft_id, &purchase_input, &task).await? {
                        Ok(session) => Ok(idempotency::stored(&session, CHECKOUT_SCOPE)?),
                        Err(failure) => Err(failure),
                    },
                )
            })
        },
    )
    .await?;
    idempotency::typed(stored, CHECKOUT_SCOPE)
}

/// Inside `tx`: re-reads the draft (locked on Postgres; SQLite's `BEGIN IMMEDIATE` already
/// excludes other writers) and buys it if it is open. `Ok(Err(…))` is a failure that is
/// stored and replayed; `Err` one that is not.
async fn purchase(
    tx: &mut sqlx::AnyConnection,
    draft_id: &str,
    input: &CreateCheckoutSessionInput,
    ctx: &ToolContext,
) -> Result<Result<CheckoutSession, ToolError>, ExecError> {
    // Two requests with different keys for one draft: the second waits for the first's
    // lock, then sees the draft committed (READ COMMITTED re-reads a locked row).
    let read = match db::backend(&ctx.db) {
        Backend::Postgres => concat!(
            draft_select!(),
            "WHERE d.id = $1 AND d.owner_id = $2 FOR UPDATE OF d"
        ),
        Backend::Sqlite => concat!(draft_select!(), "WHERE d.id = $1 AND d.owner_id = $2"),
    };
    let draft: Option<DraftRow> = sqlx::query_as(read)
        .bind(draft_id)
        .bind(&ctx.owner_id)
        .fetch_optional(&mut *tx)
        .await?;
    let outcome = match draft {
        None => Err(draft_not_found(draft_id)),
        Some(draft) if draft.status == "committed" => Err(draft_already_committed(draft_id)),
        Some(draft) if draft.status != "open" => {
            return Err(ExecError::Internal(format!(
                "draft {draft_id} has status {:?}",
                draft.status
            )))
        }
        Some(draft) => Ok(record_checkout(tx, &draft, input, ctx).await?),
    };
    Ok(outcome)
}

/// Inserts the checkout of an open `draft` and marks the draft committed.
async fn record_checkout(
    tx: &mut sqlx::AnyConnection,
    draft: &DraftRow,
    input: &CreateCheckoutSessionInput,
    ctx: &ToolContext,
) -> Result<CheckoutSession, ExecError> {
    let session = CheckoutSession {
        checkout_id: short_id("CHK-", 10),
        draft_id: draft.id.clone(),
        gift_name: draft.gift_name.clone(),
        total_vnd: vnd(&draft.id, "total_vnd", draft.total_vnd)?,
        payment_reference: short_id("DEMO-PAY-", 12),
        fictional: true,
    };
    sqlx::query(
        "INSERT INTO checkouts (id, owner_id, draft_id, gift_name, total_vnd, \
         payment_reference, idempotency_key, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&session.checkout_id)
    .bind(&ctx.owner_id)
    .bind(&draft.id)
    .bind(&draft.gift_name)
    .bind(draft.total_vnd)
    .bind(&session.payment_reference)
    .bind(&input.idempotency_key)
    .bind(ctx.now.to_rfc3339_opts(SecondsFormat::Millis, true))
    .execute(&mut *tx)
    .await?;
    let marked = sqlx::query(
        "UPDATE checkout_drafts SET status = 'committed' WHERE id = $1 AND status = 'open'",
    )
    .bind(&draft.id)
    .execute(&mut *tx)
    .await?;
    if marked.rows_affected() != 1 {
        // The lock (or SQLite's write lock) makes this impossible; if it happens, the
        // transaction must not commit a second purchase.
        return Err(ExecError::Internal(format!(
            "draft {} was not open when marking it committed",
            draft.id
        )));
    }
    Ok(session)
}

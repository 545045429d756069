//! The OAuth tables (migration 0009): every statement the flow runs, written once for
//! SQLite and PostgreSQL. Secrets arrive here already hashed.

use sqlx::AnyConnection;

use crate::{db::Pool, store::StoreError};

/// A registered client.
#[derive(Debug, Clone)]
pub struct Client {
    pub id: String,
    pub name: String,
    pub redirect_uris: Vec<String>,
    pub grant_types: Vec<String>,
    pub auth_method: String,
    pub secret_hash: Option<String>,
}

impl Client {
    /// Whether the client registered the refresh_token grant (it then gets refresh tokens).
    pub fn refreshes(&self) -> bool {
        self.grant_types
            .iter()
            .any(|grant| grant == "refresh_token")
    }
}

/// Stores a newly registered client.
pub async fn insert_client(db: &Pool, client: &Client, now: &str) -> Result<(), StoreError> {
    // A Vec of strings always serialises.
    let uris = serde_json::to_string(&client.redirect_uris).unwrap_or_else(|_| "[]".to_owned());
    sqlx::query(
        "INSERT INTO oauth_clients (id, name, redirect_uris, grant_types, auth_method, secret_hash, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&client.id)
    .bind(&client.name)
    .bind(uris)
    .bind(client.grant_types.join(" "))
    .bind(&client.auth_method)
    .bind(&client.secret_hash)
    .bind(now)
    .execute(db)
    .await?;
    Ok(())
}

/// A registered client by id.
pub async fn client(db: impl crate::db::Source, id: &str) -> Result<Option<Client>, StoreError> {
    let row: Option<(String, String, String, String, String, Option<String>)> = sqlx::query_as(
        "SELECT id, name, redirect_uris, grant_types, auth_method, secret_hash FROM oauth_clients WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await?;
    row.map(|(id, name, uris, grants, auth_method, secret_hash)| {
        let redirect_uris = serde_json::from_str(&uris).map_err(|error| StoreError::Corrupt {
            id: id.clone(),
            reason: format!("redirect_uris: {error}"),
        })?;
        Ok(Client {
            id,
            name,
            redirect_uris,
            grant_types: grants.split_ascii_whitespace().map(str::to_owned).collect(),
            auth_method,
            secret_hash,
        })
    })
    .transpose()
}

/// A checked authorization request (or the code made from it: the same bindings).
#[derive(Debug, Clone)]
pub struct Request {
    pub client_id: String,
    pub redirect_uri: String,
    pub scopes: String,
    pub resource: String,
    pub code_challenge: String,
    pub state: Option<String>,
    pub expires_at: String,
}

type RequestRow = (
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    String,
);

fn request_of(row: RequestRow) -> Request {
    let (client_id, redirect_uri, scopes, resource, code_challenge, state, expires_at) = row;
    Request {
        client_id,
        redirect_uri,
        scopes,
        resource,
        code_challenge,
        state,
        expires_at,
    }
}

/// Stores a request for the consent page; requests that expired unanswered go first, so
/// the table holds at most ten minutes of them.
pub async fn insert_request(
    db: &Pool,
    id: &str,
    request: &Request,
    now: &str,
) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    sqlx::query("DELETE FROM oauth_requests WHERE expires_at <= $1")
        .bind(now)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO oauth_requests (id, client_id, redirect_uri, scopes, resource, code_challenge, state, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(id)
    .bind(&request.client_id)
    .bind(&request.redirect_uri)
    .bind(&request.scopes)
    .bind(&request.resource)
    .bind(&request.code_challenge)
    .bind(&request.state)
    .bind(now)
    .bind(&request.expires_at)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// A request waiting for consent, with its client's name, unless it expired.
pub async fn pending_request(
    db: impl crate::db::Source,
    id: &str,
    now: &str,
) -> Result<Option<(Request, String)>, StoreError> {
    type Row = (
        String,
        String,
        String,
        String,
        String,
        Option<String>,
        String,
        String,
    );
    let row: Option<Row> =
        sqlx::query_as(
            "SELECT r.client_id, r.redirect_uri, r.scopes, r.resource, r.code_challenge, r.state, r.expires_at, c.name \
             FROM oauth_requests r JOIN oauth_clients c ON c.id = r.client_id \
             WHERE r.id = $1 AND r.expires_at > $2",
        )
        .bind(id)
        .bind(now)
        .fetch_optional(db)
        .await?;
    Ok(row.map(|(a, b, c, d, e, f, g, name)| (request_of((a, b, c, d, e, f, g)), name)))
}

/// Takes the request (deletes it and returns it): of two answers, only one gets it.
pub async fn take_request(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<Option<Request>, StoreError> {
    let row: Option<RequestRow> = sqlx::query_as(
        "DELETE FROM oauth_requests WHERE id = $1 \
         RETURNING client_id, redirect_uri, scopes, resource, code_challenge, state, expires_at",
    )
    .bind(id)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(request_of))
}

/// Stores a code for `owner_id` with the request's bindings (its `expires_at` is the
/// code's); codes that expired more than a day ago go first.
pub async fn insert_code(
    conn: &mut AnyConnection,
    code_hash: &str,
    owner_id: &str,
    code: &Request,
    now: &str,
    forget_before: &str,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM oauth_codes WHERE expires_at < $1")
        .bind(forget_before)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO oauth_codes (code_hash, owner_id, client_id, redirect_uri, scopes, resource, code_challenge, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(code_hash)
    .bind(owner_id)
    .bind(&code.client_id)
    .bind(&code.redirect_uri)
    .bind(&code.scopes)
    .bind(&code.resource)
    .bind(&code.code_challenge)
    .bind(now)
    .bind(&code.expires_at)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// What using a code found.
pub enum CodeUse {
    /// The code was unused and is used now: its owner and bindings.
    First { owner_id: String, code: Request },
    /// The code was used before; the grant its first use made, if any.
    Again { grant_id: Option<String> },
    /// No such code.
    Unknown,
}

/// Marks the code used, atomically: one conditional `UPDATE … RETURNING`, so of two
/// simultaneous exchanges exactly one gets its bindings.
pub async fn use_code(
    conn: &mut AnyConnection,
    code_hash: &str,
    now: &str,
) -> Result<CodeUse, StoreError> {
    let row: Option<(String, String, String, String, String, String, String)> = sqlx::query_as(
        "UPDATE oauth_codes SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL \
         RETURNING owner_id, client_id, redirect_uri, scopes, resource, code_challenge, expires_at",
    )
    .bind(code_hash)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some((owner_id, client_id, redirect_uri, scopes, resource, code_challenge, expires_at)) =
        row
    {
        return Ok(CodeUse::First {
            owner_id,
            code: Request {
                client_id,
                redirect_uri,
                scopes,
                resource,
                code_challenge,
                state: None,
                expires_at,
            },
        });
    }
    let used: Option<(Option<String>,)> =
        sqlx::query_as("SELECT grant_id FROM oauth_codes WHERE code_hash = $1")
            .bind(code_hash)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(match used {
        Some((grant_id,)) => CodeUse::Again { grant_id },
        None => CodeUse::Unknown,
    })
}

/// Records the grant a code's exchange made, for revoking it if the code comes again.
pub async fn link_code(
    conn: &mut AnyConnection,
    code_hash: &str,
    grant_id: &str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE oauth_codes SET grant_id = $2 WHERE code_hash = $1")
        .bind(code_hash)
        .bind(grant_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// A grant's row.
#[derive(Debug, Clone)]
pub struct GrantRow {
    pub id: String,
    pub owner_id: String,
    pub client_id: String,
    pub scopes: String,
    pub resource: String,
    pub revoked: bool,
}

/// Stores a new grant.
pub async fn insert_grant(
    conn: &mut AnyConnection,
    grant: &GrantRow,
    now: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO oauth_grants (id, owner_id, client_id, scopes, resource, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&grant.id)
    .bind(&grant.owner_id)
    .bind(&grant.client_id)
    .bind(&grant.scopes)
    .bind(&grant.resource)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// A grant by id.
pub async fn grant(conn: &mut AnyConnection, id: &str) -> Result<Option<GrantRow>, StoreError> {
    let row: Option<(String, String, String, String, String, Option<String>)> = sqlx::query_as(
        "SELECT id, owner_id, client_id, scopes, resource, revoked_at FROM oauth_grants WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(
        |(id, owner_id, client_id, scopes, resource, revoked_at)| GrantRow {
            id,
            owner_id,
            client_id,
            scopes,
            resource,
            revoked: revoked_at.is_some(),
        },
    ))
}

/// Which kind of token a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Access,
    Refresh,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Access => "access",
            Kind::Refresh => "refresh",
        }
    }
}

/// Stores a token's hash.
pub async fn insert_token(
    conn: &mut AnyConnection,
    token_hash: &str,
    grant_id: &str,
    kind: Kind,
    scopes: &str,
    now: &str,
    expires_at: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO oauth_tokens (token_hash, grant_id, kind, scopes, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(token_hash)
    .bind(grant_id)
    .bind(kind.as_str())
    .bind(scopes)
    .bind(now)
    .bind(expires_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// What presenting a refresh token found.
pub enum RefreshUse {
    /// Unrotated until now, and rotated now: its grant, scopes and expiry.
    First {
        grant_id: String,
        scopes: String,
        expires_at: String,
    },
    /// Rotated before: it is being replayed.
    Again { grant_id: String },
    /// No such refresh token.
    Unknown,
}

/// Rotates a refresh token, atomically (see [`use_code`]).
pub async fn use_refresh(
    conn: &mut AnyConnection,
    token_hash: &str,
    now: &str,
) -> Result<RefreshUse, StoreError> {
    let row: Option<(String, String, String)> = sqlx::query_as(
        "UPDATE oauth_tokens SET rotated_at = $2 WHERE token_hash = $1 AND kind = 'refresh' AND rotated_at IS NULL \
         RETURNING grant_id, scopes, expires_at",
    )
    .bind(token_hash)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some((grant_id, scopes, expires_at)) = row {
        return Ok(RefreshUse::First {
            grant_id,
            scopes,
            expires_at,
        });
    }
    let rotated: Option<(String,)> = sqlx::query_as(
        "SELECT grant_id FROM oauth_tokens WHERE token_hash = $1 AND kind = 'refresh'",
    )
    .bind(token_hash)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(match rotated {
        Some((grant_id,)) => RefreshUse::Again { grant_id },
        None => RefreshUse::Unknown,
    })
}

/// The grant a token (of either kind) belongs to.
pub async fn grant_of_token(
    conn: &mut AnyConnection,
    token_hash: &str,
) -> Result<Option<String>, StoreError> {
    let row: Option<(String,)> =
        sqlx::query_as("SELECT grant_id FROM oauth_tokens WHERE token_hash = $1")
            .bind(token_hash)
            .fetch_optional(conn)
            .await?;
    Ok(row.map(|(id,)| id))
}

/// Revokes a grant: marks it and deletes every token of it, in the caller's transaction.
pub async fn revoke_grant(
    conn: &mut AnyConnection,
    grant_id: &str,
    now: &str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE oauth_grants SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
        .bind(grant_id)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM oauth_tokens WHERE grant_id = $1")
        .bind(grant_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// An access token's row with its grant.
#[derive(Debug, Clone)]
pub struct AccessToken {
    pub grant_id: String,
    pub owner_id: String,
    pub client_id: String,
    pub resource: String,
    pub scopes: String,
    pub expires_at: String,
    pub last_used_at: Option<String>,
    pub revoked: bool,
}

/// The access token with this hash.
pub async fn access_token(
    db: impl crate::db::Source,
    token_hash: &str,
) -> Result<Option<AccessToken>, StoreError> {
    type Row = (
        String,
        String,
        String,
        String,
        String,
        String,
        Option<String>,
        Option<String>,
    );
    let row: Option<Row> = sqlx::query_as(
        "SELECT g.id, g.owner_id, g.client_id, g.resource, t.scopes, t.expires_at, g.last_used_at, g.revoked_at \
         FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id \
         WHERE t.token_hash = $1 AND t.kind = 'access'",
    )
    .bind(token_hash)
    .fetch_optional(db)
    .await?;
    Ok(row.map(
        |(grant_id, owner_id, client_id, resource, scopes, expires_at, last_used_at, revoked)| {
            AccessToken {
                grant_id,
                owner_id,
                client_id,
                resource,
                scopes,
                expires_at,
                last_used_at,
                revoked: revoked.is_some(),
            }
        },
    ))
}

/// Records that a grant's access token was just accepted.
pub async fn touch_grant(db: &Pool, grant_id: &str, now: &str) -> Result<(), StoreError> {
    sqlx::query("UPDATE oauth_grants SET last_used_at = $2 WHERE id = $1")
        .bind(grant_id)
        .bind(now)
        .execute(db)
        .await?;
    Ok(())
}

/// One of the owner's connected apps.
#[derive(Debug, Clone)]
pub struct Connection {
    pub id: String,
    pub client_name: String,
    pub scopes: String,
    pub resource: String,
    pub created_at: String,
    pub last_used_at: Option<String>,
}

/// The owner's grants that are not revoked and still have a token that has not expired,
/// newest first.
pub async fn connections(
    db: impl crate::db::Source,
    owner_id: &str,
    now: &str,
) -> Result<Vec<Connection>, StoreError> {
    let rows: Vec<(String, String, String, String, String, Option<String>)> = sqlx::query_as(
        "SELECT g.id, c.name, g.scopes, g.resource, g.created_at, g.last_used_at \
         FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id \
         WHERE g.owner_id = $1 AND g.revoked_at IS NULL \
           AND EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.id AND t.expires_at > $2) \
         ORDER BY g.created_at DESC, g.id",
    )
    .bind(owner_id)
    .bind(now)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(id, client_name, scopes, resource, created_at, last_used_at)| Connection {
                id,
                client_name,
                scopes,
                resource,
                created_at,
                last_used_at,
            },
        )
        .collect())
}

/// Revokes the owner's grant `grant_id`; `false` when the owner has no such grant (another
/// owner's is as absent as one that does not exist).
pub async fn revoke_owner_grant(
    db: &Pool,
    owner_id: &str,
    grant_id: &str,
    now: &str,
) -> Result<bool, StoreError> {
    let mut tx = crate::db::begin_write(db).await?;
    let found: Option<(String,)> = sqlx::query_as(
        "SELECT id FROM oauth_grants WHERE id = $1 AND owner_id = $2 AND revoked_at IS NULL",
    )
    .bind(grant_id)
    .bind(owner_id)
    .fetch_optional(&mut *tx)
    .await?;
    if found.is_none() {
        return Ok(false);
    }
    revoke_grant(&mut tx, grant_id, now).await?;
    tx.commit().await?;
    Ok(true)
}

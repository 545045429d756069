//! GiftGenius executors against the seeded catalogue.

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use super::*;
use crate::db::test_db::TestDatabase;

/// What a test or a helper returns: a failure of the code under test is an error with
/// its message, not a panic at an `unwrap`. Send, for the helpers spawned in races.
type Fallible<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;
type TestResult = Fallible<()>;

/// An executor's result for `?`: `ExecError` has no `Display` on purpose (its internal
/// details are for the log), so a test shows its `Debug`.
fn exec<T>(result: Result<T, ExecError>) -> Fallible<T> {
    result.map_err(|error| format!("{error:?}").into())
}

async fn context() -> Fallible<(ToolContext, TestDatabase)> {
    let (db, guard) = crate::db::test_pool().await;
    let ctx = ToolContext {
        reads: crate::db::Reads::shared(db.clone()),
        db,
        owner_id: "owner".into(),
        conversation_id: "conversation".into(),
        call_id: "call".into(),
        now: "2026-11-29T12:00:00Z".parse::<DateTime<Utc>>()?,
        upstreams: Default::default(),
        catalogue: Default::default(),
        take: None,
    };
    Ok((ctx, guard))
}

fn as_owner(ctx: &ToolContext, owner: &str) -> ToolContext {
    ToolContext {
        owner_id: owner.into(),
        ..ctx.clone()
    }
}

fn ask(relationship: RelationshipType) -> SuggestGiftsInput {
    SuggestGiftsInput {
        relationship_type: relationship,
        age: None,
        interests: Vec::new(),
        budget_min: None,
        budget_max: None,
    }
}

fn buy(draft_id: &str, key: &str) -> CreateCheckoutSessionInput {
    CreateCheckoutSessionInput {
        draft_id: draft_id.into(),
        idempotency_key: key.into(),
    }
}

async fn catalogue(ctx: &ToolContext) -> Fallible<Vec<GiftRow>> {
    Ok(sqlx::query_as(
        "SELECT id, name, description, price_vnd, tags, relationships, min_age, max_age \
         FROM gifts ORDER BY id",
    )
    .fetch_all(&ctx.db)
    .await?)
}

async fn checkouts(ctx: &ToolContext) -> Fallible<i64> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM checkouts")
        .fetch_one(&ctx.db)
        .await?)
}

async fn draft_for(ctx: &ToolContext, gift_id: &str) -> Fallible<CheckoutDraft> {
    exec(
        prepare(
            &PrepareCheckoutInput {
                gift_id: gift_id.into(),
            },
            ctx,
        )
        .await,
    )
}

fn tool_error<T: std::fmt::Debug>(result: Result<T, ExecError>) -> ToolError {
    match result {
        Err(ExecError::Tool(error)) => error,
        other => panic!("expected a tool error, got {other:?}"),
    }
}

#[test]
fn money_is_written_the_vietnamese_way() {
    assert_eq!(format_vnd(50_000), "50.000 ₫");
    assert_eq!(format_vnd(1_250_000), "1.250.000 ₫");
    assert_eq!(format_vnd(999), "999 ₫");
    assert_eq!(format_vnd(0), "0 ₫");
    assert_eq!(format_vnd(100_000_000), "100.000.000 ₫");
}

#[test]
fn interests_are_folded_and_mapped_to_tags() {
    let tags = |s: &str| interest_tags(s);
    assert_eq!(tags("Làm vườn"), ["gardening"]);
    assert_eq!(tags("TRỒNG CÂY"), ["gardening"]);
    assert_eq!(tags("thích trồng cây"), ["gardening"]);
    assert_eq!(tags("đọc sách"), ["reading"]);
    assert_eq!(tags("Sách"), ["reading"]);
    assert_eq!(tags("nấu ăn"), ["cooking"]);
    assert_eq!(tags("Cà phê"), ["coffee"]);
    assert_eq!(tags("trà"), ["tea"]);
    assert_eq!(tags("âm nhạc"), ["music"]);
    assert_eq!(tags("nhạc"), ["music"]);
    assert_eq!(tags("thể thao"), ["sports"]);
    assert_eq!(tags("chạy bộ"), ["sports"]);
    assert_eq!(tags("du lịch"), ["travel"]);
    assert_eq!(tags("công nghệ"), ["tech"]);
    assert_eq!(tags("Lặn biển"), ["diving"]);
    assert_eq!(tags("diving"), ["diving"]);
    assert_eq!(tags("Photography"), ["photography"]);
    // Decomposed accents (typed on some keyboards) fold the same.
    assert_eq!(tags("ca\u{300} phe\u{302}"), ["coffee"]);
    assert_eq!(tags("đọc sách và uống trà"), ["reading", "tea"]);
    // Ambiguous short words count only on their own.
    assert_eq!(tags("vẽ"), ["art"]);
    assert_eq!(tags("đi về quê"), ["di ve que"]);
    assert_eq!(tags("tiếng Anh"), ["tieng anh"]);
    // Unknown words are kept and match nothing.
    assert_eq!(tags("Origami"), ["origami"]);
}

#[test]
fn repeated_and_blank_interests_count_once() {
    let said = vec![
        "Trà".to_owned(),
        " trà ".to_owned(),
        "  ".to_owned(),
        "nhạc".to_owned(),
    ];
    let found = interests(&said);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].said, "Trà");
    assert_eq!(found[1].tags, ["music"]);
}

#[tokio::test]
async fn the_seeded_catalogue_uses_known_tags_and_prices() -> TestResult {
    let (ctx, _db) = context().await?;
    let gifts = catalogue(&ctx).await?;
    assert!((25..=45).contains(&gifts.len()), "{}", gifts.len());
    let relationships = [
        "partner",
        "parent",
        "child",
        "sibling",
        "grandparent",
        "friend",
        "colleague",
        "teacher",
        "other",
    ];
    let mut used_tags = HashSet::new();
    for gift in &gifts {
        assert!(
            (50_000..=5_000_000).contains(&gift.price_vnd),
            "{}: {}",
            gift.id,
            gift.price_vnd
        );
        assert!(gift.min_age <= gift.max_age, "{}", gift.id);
        assert!(!gift.tags.trim().is_empty(), "{}", gift.id);
        for tag in gift.tags.split_whitespace() {
            assert!(TAGS.contains(&tag), "{}: tag {tag}", gift.id);
            used_tags.insert(tag);
        }
        let rels: Vec<&str> = gift.relationships.split_whitespace().collect();
        assert!(!rels.is_empty(), "{}", gift.id);
        assert!(
            rels == ["any"] || rels.iter().all(|r| relationships.contains(r)),
            "{}: {:?}",
            gift.id,
            gift.relationships
        );
        // What the empty-result example relies on.
        assert!(!gift.has_tag("diving"), "{}", gift.id);
        assert!(
            !(gift.has_tag("sports") && gift.price_vnd < 60_000),
            "{}",
            gift.id
        );
    }
    // Every tag a person can be mapped to has at least one gift.
    for tag in TAGS {
        assert!(used_tags.contains(tag), "no gift for {tag}");
    }
    Ok(())
}

#[tokio::test]
async fn suggestions_match_interests_relationship_age_and_budget() -> TestResult {
    let (ctx, _db) = context().await?;
    let input = SuggestGiftsInput {
        interests: vec!["làm vườn".into(), "trà".into()],
        age: Some(60),
        budget_min: Some(100_000),
        budget_max: Some(700_000),
        ..ask(RelationshipType::Parent)
    };
    let output = exec(suggest(&input, &ctx).await)?;
    assert!(output.no_results_reason.is_none());
    assert!(!output.gifts.is_empty() && output.gifts.len() <= MAX_SUGGESTIONS);
    let gifts = catalogue(&ctx).await?;
    for suggestion in &output.gifts {
        let row = gifts
            .iter()
            .find(|g| g.id == suggestion.gift_id)
            .ok_or("a suggestion that is not in the catalogue")?;
        assert!(row.suits(RelationshipType::Parent), "{}", row.id);
        assert!(row.fits_age(Some(60)), "{}", row.id);
        assert!(
            (100_000..=700_000).contains(&suggestion.price_vnd),
            "{}",
            row.id
        );
        assert!(!suggestion.matched_interests.is_empty(), "{}", row.id);
        for said in &suggestion.matched_interests {
            assert!(["làm vườn", "trà"].contains(&said.as_str()));
        }
    }
    let ids: Vec<&str> = output.gifts.iter().map(|g| g.gift_id.as_str()).collect();
    assert!(ids.contains(&"g-bo-lam-vuon-mini"), "{ids:?}");
    assert!(ids.contains(&"g-tra-shan-tuyet"), "{ids:?}");
    // Ranked by matched interests first.
    let counts: Vec<usize> = output
        .gifts
        .iter()
        .map(|g| g.matched_interests.len())
        .collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    Ok(())
}

#[tokio::test]
async fn someone_who_loves_cooking_gets_kitchen_gifts_not_a_coffee_grinder() -> TestResult {
    let (ctx, _db) = context().await?;
    let input = SuggestGiftsInput {
        interests: vec!["nấu ăn".into()],
        ..ask(RelationshipType::Parent)
    };
    let output = exec(suggest(&input, &ctx).await)?;
    let ids: Vec<&str> = output.gifts.iter().map(|g| g.gift_id.as_str()).collect();
    assert_eq!(ids.len(), MAX_SUGGESTIONS, "{ids:?}");
    assert!(!ids.contains(&"g-may-xay-ca-phe-tay"), "{ids:?}");
    for gift in &output.gifts {
        assert_eq!(gift.matched_interests, ["nấu ăn"], "{}", gift.gift_id);
    }
    Ok(())
}

#[tokio::test]
async fn equal_matches_rank_by_closeness_to_the_budget_middle() -> TestResult {
    let (ctx, _db) = context().await?;
    let input = SuggestGiftsInput {
        budget_min: Some(100_000),
        budget_max: Some(500_000),
        ..ask(RelationshipType::Friend)
    };
    let output = exec(suggest(&input, &ctx).await)?;
    assert_eq!(output.gifts.len(), MAX_SUGGESTIONS);
    let distances: Vec<i64> = output
        .gifts
        .iter()
        .map(|g| (i64::from(g.price_vnd) - 300_000).abs())
        .collect();
    assert!(distances.windows(2).all(|w| w[0] <= w[1]), "{distances:?}");
    assert!(output.gifts.iter().all(|g| g.matched_interests.is_empty()));
    Ok(())
}

#[tokio::test]
async fn young_children_get_gifts_for_their_age() -> TestResult {
    let (ctx, _db) = context().await?;
    let input = SuggestGiftsInput {
        age: Some(6),
        ..ask(RelationshipType::Child)
    };
    let output = exec(suggest(&input, &ctx).await)?;
    let gifts = catalogue(&ctx).await?;
    assert!(!output.gifts.is_empty());
    for suggestion in &output.gifts {
        let row = gifts
            .iter()
            .find(|g| g.id == suggestion.gift_id)
            .ok_or("a suggestion that is not in the catalogue")?;
        assert!(row.min_age <= 6, "{}", row.id);
    }
    Ok(())
}

#[tokio::test]
async fn nothing_for_a_diver_under_50k_comes_with_a_reason() -> TestResult {
    let (ctx, _db) = context().await?;
    let input = SuggestGiftsInput {
        interests: vec!["lặn biển".into()],
        budget_max: Some(50_000),
        ..ask(RelationshipType::Friend)
    };
    let output = exec(suggest(&input, &ctx).await)?;
    assert!(output.gifts.is_empty());
    let reason = output.no_results_reason.ok_or("no reason given")?;
    assert!(reason.contains("“lặn biển”"), "{reason}");
    assert!(reason.contains("tối đa 50.000 ₫"), "{reason}");
    assert!(reason.contains("bạn bè"), "{reason}");
    assert!(
        reason.contains("chưa có món quà nào cho sở thích “lặn biển”"),
        "{reason}"
    );
    assert!(reason.contains("Hãy thử"), "{reason}");
    // "diving" in English is the same request.
    let english = SuggestGiftsInput {
        interests: vec!["diving".into()],
        ..input
    };
    assert!(exec(suggest(&english, &ctx).await)?.gifts.is_empty());
    Ok(())
}

#[tokio::test]
async fn a_too_small_budget_says_what_the_catalogue_has() -> TestResult {
    let (ctx, _db) = context().await?;
    let input = SuggestGiftsInput {
        interests: vec!["cà phê".into()],
        budget_max: Some(100_000),
        ..ask(RelationshipType::Colleague)
    };
    let output = exec(suggest(&input, &ctx).await)?;
    assert!(output.gifts.is_empty());
    let reason = output.no_results_reason.ok_or("no reason given")?;
    assert!(reason.contains("nới ngân sách"), "{reason}");
    assert!(
        reason.contains("180.000 ₫"),
        "cheapest coffee gift: {reason}"
    );
    assert!(!reason.contains("chưa có"), "{reason}");
    Ok(())
}

#[tokio::test]
async fn unknown_interests_match_nothing() -> TestResult {
    let (ctx, _db) = context().await?;
    let input = SuggestGiftsInput {
        interests: vec!["origami".into()],
        ..ask(RelationshipType::Friend)
    };
    let output = exec(suggest(&input, &ctx).await)?;
    assert!(output.gifts.is_empty());
    let reason = output.no_results_reason.ok_or("no reason given")?;
    assert!(reason.contains("“origami”"), "{reason}");
    // Some interests known, some not: the known ones still find gifts.
    let mixed = SuggestGiftsInput {
        interests: vec!["origami".into(), "board game".into()],
        ..ask(RelationshipType::Friend)
    };
    let output = exec(suggest(&mixed, &ctx).await)?;
    assert!(!output.gifts.is_empty());
    assert!(output
        .gifts
        .iter()
        .all(|g| g.matched_interests == ["board game"]));
    Ok(())
}

#[tokio::test]
async fn prepare_twice_gives_the_same_draft() -> TestResult {
    let (ctx, _db) = context().await?;
    let first = draft_for(&ctx, "g-bo-lam-vuon-mini").await?;
    let second = draft_for(&ctx, "g-bo-lam-vuon-mini").await?;
    assert_eq!(first, second);
    assert!(first.draft_id.starts_with("DR-") && first.draft_id.len() == 11);
    assert_eq!(first.gift_name, "Bộ dụng cụ làm vườn mini");
    assert_eq!(first.price_vnd, 250_000);
    assert_eq!(first.delivery_vnd, 30_000);
    assert_eq!(first.total_vnd, 280_000);
    assert!(first.fictional);
    // Another person gets a draft of their own.
    let theirs = draft_for(&as_owner(&ctx, "someone-else"), "g-bo-lam-vuon-mini").await?;
    assert_ne!(theirs.draft_id, first.draft_id);
    // Delivery is free from 1.000.000 ₫.
    let dear = draft_for(&ctx, "g-tra-sen-tay-ho").await?;
    assert_eq!((dear.delivery_vnd, dear.total_vnd), (0, 1_200_000));
    Ok(())
}

#[tokio::test]
async fn concurrent_prepares_make_one_draft() -> TestResult {
    let (ctx, _db) = context().await?;
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let ctx = ctx.clone();
            tokio::spawn(async move { draft_for(&ctx, "g-tham-yoga").await })
        })
        .collect();
    let mut ids = HashSet::new();
    for task in tasks {
        ids.insert(task.await??.draft_id);
    }
    assert_eq!(ids.len(), 1, "{ids:?}");
    Ok(())
}

#[tokio::test]
async fn prepare_of_an_unknown_gift_is_not_found() -> TestResult {
    let (ctx, _db) = context().await?;
    let error = tool_error(
        prepare(
            &PrepareCheckoutInput {
                gift_id: "g-khong-co".into(),
            },
            &ctx,
        )
        .await,
    );
    assert_eq!(error.code, ErrorCode::NotFound);
    assert!(error.message.contains("suggest_gifts"), "{}", error.message);
    assert!(!error.retryable);
    Ok(())
}

#[tokio::test]
async fn precheck_accepts_an_open_draft_of_the_owner_only() -> TestResult {
    let (ctx, _db) = context().await?;
    let draft = draft_for(&ctx, "g-co-tuong-go").await?;
    let checked = exec(precheck(&buy(&draft.draft_id, "checkout-0001"), &ctx).await)?;
    assert_eq!(checked, draft);

    let theirs = tool_error(
        precheck(
            &buy(&draft.draft_id, "checkout-0001"),
            &as_owner(&ctx, "intruder"),
        )
        .await,
    );
    let missing = tool_error(precheck(&buy("DR-NOPE0000", "checkout-0001"), &ctx).await);
    assert_eq!(theirs.code, ErrorCode::NotFound);
    assert_eq!(missing.code, ErrorCode::NotFound);
    // The same words, ids aside: nobody learns whether someone else's draft exists.
    assert_eq!(
        theirs.message.replace(&draft.draft_id, "ID"),
        missing.message.replace("DR-NOPE0000", "ID")
    );

    exec(commit(&buy(&draft.draft_id, "checkout-0001"), &ctx).await)?;
    // A retry of the purchase that happened only replays: nothing to refuse.
    exec(precheck(&buy(&draft.draft_id, "checkout-0001"), &ctx).await)?;
    let again = tool_error(precheck(&buy(&draft.draft_id, "checkout-0002"), &ctx).await);
    assert_eq!(again.code, ErrorCode::DraftAlreadyCommitted);
    // The key of that purchase cannot buy another draft.
    let other = draft_for(&ctx, "g-bo-mau-nuoc").await?;
    let reused = tool_error(precheck(&buy(&other.draft_id, "checkout-0001"), &ctx).await);
    assert_eq!(reused.code, ErrorCode::IdempotencyKeyReused);
    Ok(())
}

#[tokio::test]
async fn commit_twice_with_the_same_key_buys_once() -> TestResult {
    let (ctx, _db) = context().await?;
    let draft = draft_for(&ctx, "g-dan-ukulele").await?;
    let first = exec(commit(&buy(&draft.draft_id, "checkout-0001"), &ctx).await)?;
    assert!(first.checkout_id.starts_with("CHK-"));
    assert!(first.payment_reference.starts_with("DEMO-PAY-"));
    assert_eq!(first.total_vnd, draft.total_vnd);
    assert_eq!(first.gift_name, draft.gift_name);
    assert!(first.fictional);
    let second = exec(commit(&buy(&draft.draft_id, "checkout-0001"), &ctx).await)?;
    assert_eq!(first, second);
    assert_eq!(checkouts(&ctx).await?, 1);
    // After the purchase, preparing the same gift again makes a new draft.
    let next = draft_for(&ctx, "g-dan-ukulele").await?;
    assert_ne!(next.draft_id, draft.draft_id);
    Ok(())
}

#[tokio::test]
async fn the_same_key_for_another_draft_is_refused() -> TestResult {
    let (ctx, _db) = context().await?;
    let draft = draft_for(&ctx, "g-dan-ukulele").await?;
    let other = draft_for(&ctx, "g-lego-creator").await?;
    exec(commit(&buy(&draft.draft_id, "checkout-0001"), &ctx).await)?;
    let error = tool_error(commit(&buy(&other.draft_id, "checkout-0001"), &ctx).await);
    assert_eq!(error.code, ErrorCode::IdempotencyKeyReused);
    assert!(!error.retryable);
    assert_eq!(checkouts(&ctx).await?, 1);
    // The other draft is still open and can be bought with a key of its own.
    exec(commit(&buy(&other.draft_id, "checkout-0002"), &ctx).await)?;
    assert_eq!(checkouts(&ctx).await?, 2);
    Ok(())
}

#[tokio::test]
async fn another_key_cannot_buy_a_committed_draft_again() -> TestResult {
    let (ctx, _db) = context().await?;
    let draft = draft_for(&ctx, "g-khan-lua-ha-dong").await?;
    exec(commit(&buy(&draft.draft_id, "checkout-0001"), &ctx).await)?;
    let error = tool_error(commit(&buy(&draft.draft_id, "checkout-0002"), &ctx).await);
    assert_eq!(error.code, ErrorCode::DraftAlreadyCommitted);
    assert!(!error.retryable);
    assert_eq!(checkouts(&ctx).await?, 1);
    // The failure is stored under its key: a retry gets the same answer.
    let again = tool_error(commit(&buy(&draft.draft_id, "checkout-0002"), &ctx).await);
    assert_eq!(again, error);
    Ok(())
}

#[tokio::test]
async fn another_owners_draft_is_not_found_and_not_bought() -> TestResult {
    let (ctx, _db) = context().await?;
    let draft = draft_for(&ctx, "g-phieu-spa").await?;
    let intruder = as_owner(&ctx, "intruder");
    let error = tool_error(commit(&buy(&draft.draft_id, "checkout-0001"), &intruder).await);
    assert_eq!(error.code, ErrorCode::NotFound);
    assert!(!error.message.contains("SELECT"), "{}", error.message);
    assert_eq!(checkouts(&ctx).await?, 0);
    // The owner can still buy it, even with the same key string (keys are per person).
    exec(commit(&buy(&draft.draft_id, "checkout-0001"), &ctx).await)?;
    assert_eq!(checkouts(&ctx).await?, 1);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_commits_with_one_key_buy_once() -> TestResult {
    let (ctx, _db) = context().await?;
    let draft = draft_for(&ctx, "g-may-anh-instax").await?;
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(50));
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let ctx = ctx.clone();
            let input = buy(&draft.draft_id, "checkout-race-1");
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                commit(&input, &ctx).await
            })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await?);
    }
    assert_eq!(checkouts(&ctx).await?, 1);
    let (id,): (String,) = sqlx::query_as("SELECT id FROM checkouts")
        .fetch_one(&ctx.db)
        .await?;
    for result in results {
        match result {
            Ok(session) => assert_eq!(session.checkout_id, id),
            Err(ExecError::Tool(error)) => {
                assert_eq!(error.code, ErrorCode::IdempotencyKeyInUse, "{error:?}");
                assert!(error.retryable);
            }
            Err(ExecError::Internal(details)) => panic!("{details}"),
        }
    }
    // Once the race is over, every retry gets the one checkout.
    let session = exec(commit(&buy(&draft.draft_id, "checkout-race-1"), &ctx).await)?;
    assert_eq!(session.checkout_id, id);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_commits_with_different_keys_buy_once() -> TestResult {
    let (ctx, _db) = context().await?;
    let draft = draft_for(&ctx, "g-vot-cau-long").await?;
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(20));
    let tasks: Vec<_> = (0..20)
        .map(|n| {
            let ctx = ctx.clone();
            let input = buy(&draft.draft_id, &format!("checkout-key-{n:02}"));
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                commit(&input, &ctx).await
            })
        })
        .collect();
    let mut bought = 0;
    for task in tasks {
        match task.await? {
            Ok(_) => bought += 1,
            Err(ExecError::Tool(error)) => {
                assert_eq!(error.code, ErrorCode::DraftAlreadyCommitted, "{error:?}")
            }
            Err(ExecError::Internal(details)) => panic!("{details}"),
        }
    }
    assert_eq!(bought, 1);
    assert_eq!(checkouts(&ctx).await?, 1);
    Ok(())
}

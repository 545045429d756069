//! How much streaming a tool argument through `PartialJson` costs, against re-parsing the
//! whole prefix for every fragment (what a non-incremental partial parser does).
//!
//! Run with `cargo bench -p shared --bench partial_json`. It prints figures rather than
//! asserting timings, because timings depend on the machine; what should hold everywhere is
//! that the incremental cost per byte stays flat as the argument grows.

use shared::partial_json::PartialJson;
use std::error::Error;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Bytes per fragment: models stream a few characters per event.
const DELTA_BYTES: usize = 4;

/// A booking-assistant tool argument of at least `target` bytes: a few top-level fields and
/// an array of guests with Vietnamese names, escapes, numbers and nested arrays.
fn tool_argument(target: usize) -> Result<String, Box<dyn Error>> {
    const NAMES: [&str; 6] = [
        "Nguyễn Văn An",
        "Trần Thị Bích",
        "Lê Hoàng Long",
        "Phạm Minh Châu",
        "Đặng Quốc Huy",
        "Võ Thị Hạnh",
    ];
    const DISHES: [&str; 5] = ["phở bò", "bún chả", "cơm tấm", "bánh xèo", "gỏi cuốn"];
    // A fixed linear congruential generator keeps the document identical between runs.
    let mut seed: u64 = 0x5eed;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        seed >> 33
    };
    let mut guests = Vec::new();
    let mut document = serde_json::Value::Null;
    let mut text = String::new();
    while text.len() < target {
        let n = guests.len();
        let visits: Vec<serde_json::Value> = (0..(next() % 4))
            .map(|_| serde_json::json!([2020 + next() % 6, 1 + next() % 12, 1 + next() % 28]))
            .collect();
        guests.push(serde_json::json!({
            "id": n,
            "name": NAMES[n % NAMES.len()],
            "age": 18 + next() % 60,
            "rating": (next() % 500) as f64 / 100.0,
            "balance": -((next() % 100_000) as i64),
            "tags": ["vip", "window seat", DISHES[n % DISHES.len()]],
            "visits": visits,
            "note": format!(
                "Dị ứng \"đậu phộng\" ({n}).\nPrefers a quiet table\tnear the garden 🌿 \\ thanks"
            ),
            "confirmed": n % 3 != 0,
            "deposit": serde_json::Value::Null,
        }));
        if guests.len() % 4 == 0 || text.is_empty() {
            document = serde_json::json!({
                "restaurant": "Quán Ăn Ngon — chi nhánh Hoàn Kiếm",
                "date": "2025-06-14",
                "time": "19:30",
                "party_size": guests.len(),
                "budget_per_person": 350000.5,
                "guests": guests.clone(),
            });
            text = serde_json::to_string(&document)?;
        }
    }
    // The exact text the parser must reproduce: checked once, not timed.
    let parsed = PartialJson::from_text(&text)?;
    if !parsed.is_complete() || parsed.value() != &document {
        return Err("the benchmark document does not round-trip".into());
    }
    Ok(text)
}

/// Where each fragment ends: `DELTA_BYTES` on, then forward to the next character boundary.
fn fragment_ends(text: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut end = 0;
    while end < text.len() {
        end = (end + DELTA_BYTES).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        ends.push(end);
    }
    ends
}

/// One parser fed every fragment, with `value()` read after each push as a UI would.
fn incremental(text: &str, ends: &[usize]) -> Result<Duration, Box<dyn Error>> {
    let started = Instant::now();
    let mut parser = PartialJson::new();
    let mut start = 0;
    for &end in ends {
        parser.push(black_box(&text[start..end]))?;
        black_box(parser.value());
        start = end;
    }
    let elapsed = started.elapsed();
    if !parser.is_complete() {
        return Err("incremental run did not complete".into());
    }
    Ok(elapsed)
}

/// A fresh parser over the whole prefix for every fragment.
fn reparse_everything(text: &str, ends: &[usize]) -> Result<Duration, Box<dyn Error>> {
    let started = Instant::now();
    let mut complete = false;
    for &end in ends {
        let parser = PartialJson::from_text(black_box(&text[..end]))?;
        black_box(parser.value());
        complete = parser.is_complete();
    }
    let elapsed = started.elapsed();
    if !complete {
        return Err("baseline run did not complete".into());
    }
    Ok(elapsed)
}

/// Median of `runs` timings (after one untimed warm-up run).
fn median(
    runs: usize,
    mut run: impl FnMut() -> Result<Duration, Box<dyn Error>>,
) -> Result<Duration, Box<dyn Error>> {
    run()?;
    let mut times = (0..runs).map(|_| run()).collect::<Result<Vec<_>, _>>()?;
    times.sort();
    Ok(times[times.len() / 2])
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn main() -> Result<(), Box<dyn Error>> {
    println!("partial_json: tool argument streamed in {DELTA_BYTES}-byte deltas, value() read after every push");
    println!(
        "{:>7} {:>8} {:>7} | {:>14} {:>8} | {:>11} {:>9}",
        "size", "bytes", "deltas", "incremental ms", "ns/byte", "baseline ms", "ratio"
    );
    let mut per_byte = Vec::new();
    // (label, target bytes, runs of the incremental parser, runs of the baseline or 0 to skip)
    for (label, target, runs, baseline_runs) in [
        ("16 KB", 16 << 10, 21, 5),
        ("64 KB", 64 << 10, 11, 1),
        ("256 KB", 256 << 10, 7, 0),
    ] {
        let text = tool_argument(target)?;
        let ends = fragment_ends(&text);
        let fast = median(runs, || incremental(&text, &ends))?;
        let ns_per_byte = fast.as_secs_f64() * 1e9 / text.len() as f64;
        per_byte.push(ns_per_byte);
        let baseline = if baseline_runs > 0 {
            let slow = median(baseline_runs, || reparse_everything(&text, &ends))?;
            format!(
                "{:>11.1} {:>8.0}x",
                ms(slow),
                slow.as_secs_f64() / fast.as_secs_f64()
            )
        } else {
            format!("{:>11} {:>9}", "skipped", "-")
        };
        println!(
            "{label:>7} {:>8} {:>7} | {:>14.3} {ns_per_byte:>8.1} | {baseline}",
            text.len(),
            ends.len(),
            ms(fast),
        );
    }
    let min = per_byte.iter().copied().fold(f64::INFINITY, f64::min);
    let max = per_byte.iter().copied().fold(0.0, f64::max);
    let figures: Vec<String> = per_byte.iter().map(|ns| format!("{ns:.1}")).collect();
    println!(
        "linear: {} (incremental ns/byte {} across 16/64/256 KB, max/min {:.2}; flat means within 1.5x)",
        if max / min <= 1.5 { "yes" } else { "NO" },
        figures.join(" / "),
        max / min,
    );
    Ok(())
}

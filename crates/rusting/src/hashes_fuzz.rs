//! A fuzz target for `rusting hashes diff` and its HTML page: pairs of state-hash reports made
//! from their structure (tick sets empty, tiny or huge, at and across the edges of `u64`, in
//! order, repeated or shuffled; the second report a copy of the first with hashes changed, ticks
//! dropped or added, or another report altogether), each compared and drawn as the command does,
//! in memory, for the fuzz budget (`RUSTING_FUZZ_SECONDS`, 2 s unless set; `.ci/run` gives 30).
//! The crafted reports of the engine's corpus (`tests/fuzz_corpus/report`) are paired first. The
//! page is the command line's, so its target lives here rather than in the engine's
//! `tests/fuzz.rs`, whose `report` target fuzzes the parsing and comparison beneath it.

use std::path::Path;
use std::time::Instant;

use rusting_engine::record::StateHashReport;
use serde_json::{Value, json};

#[path = "../../../tests/support/fuzzing.rs"]
mod fuzzing;

use fuzzing::{Rng, budget, crafted_ticks, edge_tick, seed};

/// The second report's ticks, made from the first's.
fn changed(rng: &mut Rng, first: &[Value]) -> Vec<Value> {
    let mut ticks = first.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(5) {
            0 if !ticks.is_empty() => {
                let k = rng.below(ticks.len());
                ticks[k]["hash"] = json!(format!("{:016x}", rng.next()));
            }
            1 if !ticks.is_empty() => {
                let keep = rng.below(ticks.len());
                ticks.truncate(keep);
            }
            2 => ticks.push(json!({ "tick": edge_tick(rng), "hash": "00000000deadbeef" })),
            3 if !ticks.is_empty() => {
                let k = rng.below(ticks.len());
                ticks.remove(k);
            }
            _ => {}
        }
    }
    ticks
}

fn report(ticks: Vec<Value>) -> StateHashReport {
    serde_json::from_value(json!({ "format_version": 2, "ticks": ticks, "entities": [] }))
        .expect("a crafted report is a report")
}

/// Compares `a` with `b` as `hashes diff` does, text and JSON, and draws the page.
fn diff_and_draw(a: &StateHashReport, b: &StateHashReport) {
    let (result, human) = crate::hashes::compare(a, b, false);
    let _ = crate::hashes::compare(a, b, true);
    let page = crate::hashes::page(
        (Path::new("first.json"), a),
        (Path::new("second.json"), b),
        &result,
        &human,
    );
    assert!(page.render().contains("</html>"));
}

/// Every pair gives an agreement or a difference and a whole page, never a panic. Fails if the
/// timeline's tick arithmetic goes back to unchecked `+` or `-` (a pair at `u64::MAX` overflowed).
#[test]
fn hashes_diff_and_its_page_never_panic_on_crafted_reports() {
    let corpus_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fuzz_corpus/report");
    let mut corpus: Vec<StateHashReport> = std::fs::read_dir(&corpus_dir)
        .map(|dir| {
            dir.filter_map(|e| StateHashReport::load(&e.ok()?.path()).ok())
                .collect()
        })
        .unwrap_or_default();
    corpus.push(report(Vec::new()));
    for a in &corpus {
        for b in &corpus {
            diff_and_draw(a, b);
        }
    }
    let seed = seed();
    let mut rng = Rng(seed | 1);
    let deadline = Instant::now() + budget();
    let mut pairs = 0u64;
    while Instant::now() < deadline {
        let first = crafted_ticks(&mut rng);
        let second = if rng.chance(4) {
            crafted_ticks(&mut rng)
        } else {
            changed(&mut rng, &first)
        };
        let (a, b) = (report(first), report(second));
        let drawn = std::panic::catch_unwind(|| diff_and_draw(&a, &b));
        if drawn.is_err() {
            let kept = std::env::temp_dir().join(format!("rusting-hashes-fuzz-{seed}-{pairs}"));
            let _ = std::fs::create_dir_all(&kept);
            let _ = a.write(&kept.join("first.json"));
            let _ = b.write(&kept.join("second.json"));
            panic!(
                "hashes diff panicked on pair {pairs} (seed {seed}); the pair is in {}",
                kept.display()
            );
        }
        pairs += 1;
    }
    println!(
        "fuzz target `hashes diff` and its page: {} corpus pairs and {pairs} pairs",
        corpus.len() * corpus.len()
    );
}

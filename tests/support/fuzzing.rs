//! What the fuzz tests share: the seed and time budget from the environment, the source of
//! randomness that mutates their inputs, and the edge values they pick from. The command line's
//! fuzz target (`crates/rusting/src/hashes_fuzz.rs`) includes this file too.

// Each fuzz test binary uses some of these helpers, not all.
#![allow(dead_code)]

use std::time::Duration;

/// `RUSTING_FUZZ_SEED`, or the fixed default seed, so a failure reproduces.
pub fn seed() -> u64 {
    std::env::var("RUSTING_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x005e_ed0f_2026)
}

/// How long each target is fuzzed: `RUSTING_FUZZ_SECONDS` (CI sets 30), else 2 s.
pub fn budget() -> Duration {
    let seconds = std::env::var("RUSTING_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0f64);
    Duration::from_secs_f64(seconds)
}

/// xorshift64*: the inputs' source of randomness (its state must not be 0).
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True once in `one_in` calls, on average.
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.next().is_multiple_of(one_in)
    }
}

/// A tick at an edge of what a report can hold (0, 2^32, 2^53 and beside it, `u64::MAX`), or
/// anywhere.
pub fn edge_tick(rng: &mut Rng) -> u64 {
    const EDGES: [u64; 8] = [
        0,
        1,
        2,
        1 << 32,
        1 << 53,
        (1 << 53) + 1,
        u64::MAX - 1,
        u64::MAX,
    ];
    match rng.below(3) {
        0 => rng.next(),
        _ => EDGES[rng.below(EDGES.len())],
    }
}

/// A state-hash report's ticks made from their structure, as JSON: empty, tiny or huge (up to
/// 30,000 ticks), starting at or running into the edges of `u64`, in order, repeated or
/// shuffled, with hashes that mostly follow from the tick, so two such sets agree on the ticks
/// they share and a comparison goes past the first one.
pub fn crafted_ticks(rng: &mut Rng) -> Vec<serde_json::Value> {
    let count = match rng.below(4) {
        0 => 0,
        1 => 1 + rng.below(3),
        2 => 1 + rng.below(200),
        _ => 1 + rng.below(30_000),
    };
    let start = edge_tick(rng);
    let mut ticks: Vec<serde_json::Value> = (0..count as u64)
        .map(|k| {
            let tick = if rng.chance(50) {
                edge_tick(rng)
            } else {
                start.wrapping_add(k)
            };
            let hash = if rng.chance(20) {
                format!("{:016x}", rng.next())
            } else {
                format!("{:016x}", tick.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            };
            serde_json::json!({ "tick": tick, "hash": hash })
        })
        .collect();
    if rng.chance(4) && ticks.len() > 1 {
        let (a, b) = (rng.below(ticks.len()), rng.below(ticks.len()));
        ticks.swap(a, b);
        let repeated = ticks[rng.below(ticks.len())].clone();
        ticks.push(repeated);
    }
    ticks
}

//! `sim_math` against the hardware and `std`: ns per call of each routine, measured in one run.
//!
//! Run with `cargo bench --bench sim_math`. The ratio column is what the bit-exact routine costs
//! relative to the platform operation it replaces; the platform versions are not deterministic
//! across devices (GPU division and square roots, libm transcendentals), which is the point.

use std::hint::black_box;
use std::time::Instant;

use rusting_engine::runtime::sim_math;

const INPUTS: usize = 4096;
const ROUNDS: usize = 400;

/// Nanoseconds per call of `f` over `inputs`, the best of five runs.
fn time_per_call(inputs: &[f32], f: impl Fn(f32) -> f32) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        let mut sink = 0.0f32;
        for _ in 0..ROUNDS {
            for &x in inputs {
                sink += f(black_box(x));
            }
        }
        black_box(sink);
        let ns = start.elapsed().as_nanos() as f64 / (ROUNDS * inputs.len()) as f64;
        best = best.min(ns);
    }
    best
}

fn inputs(low: f32, high: f32) -> Vec<f32> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..INPUTS)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            low + (high - low) * ((state >> 40) as f32 / 16_777_216.0)
        })
        .collect()
}

fn row(name: &str, ours: f64, theirs: f64, peer: &str) {
    println!(
        "{name:<12} {ours:>9.2} {theirs:>9.2}  {:>6.1}x  {peer}",
        ours / theirs
    );
}

fn main() {
    let positive = inputs(1.0e-3, 1.0e3);
    let angles = inputs(-100.0, 100.0);
    let unit = inputs(-1.0, 1.0);
    let wide = inputs(-3.0e9, 3.0e9);
    println!(
        "{:<12} {:>9} {:>9}  {:>7}  peer",
        "routine", "ns/op", "peer ns", "ratio"
    );
    row(
        "recip",
        time_per_call(&positive, sim_math::recip),
        time_per_call(&positive, |x| 1.0 / x),
        "1.0 / x",
    );
    row(
        "div",
        time_per_call(&positive, |x| sim_math::div(x, 3.7)),
        time_per_call(&positive, |x| x / 3.7),
        "x / y",
    );
    row(
        "sqrt",
        time_per_call(&positive, sim_math::sqrt),
        time_per_call(&positive, f32::sqrt),
        "f32::sqrt",
    );
    row(
        "inv_sqrt",
        time_per_call(&positive, sim_math::inv_sqrt),
        time_per_call(&positive, |x| 1.0 / x.sqrt()),
        "1.0 / f32::sqrt",
    );
    row(
        "sin_cos",
        time_per_call(&angles, |x| {
            let (s, c) = sim_math::sin_cos(x);
            s + c
        }),
        time_per_call(&angles, |x| {
            let (s, c) = x.sin_cos();
            s + c
        }),
        "f32::sin_cos",
    );
    row(
        "atan2",
        time_per_call(&unit, |x| sim_math::atan2(x, 0.3)),
        time_per_call(&unit, |x| x.atan2(0.3)),
        "f32::atan2",
    );
    row(
        "asin",
        time_per_call(&unit, sim_math::asin),
        time_per_call(&unit, f32::asin),
        "f32::asin",
    );
    row(
        "to_int",
        time_per_call(&wide, |x| sim_math::to_int(x) as f32),
        time_per_call(&wide, |x| (x as i32) as f32),
        "x as i32",
    );
}

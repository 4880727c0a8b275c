//! SplitMix64 as a counter-based source of reproducible test inputs and scene layouts: the value
//! at an index is a pure function of it, so a test or a generated scene never depends on how many
//! values were drawn before. Shared by the math and solver tests and `examples/physics_scenes.rs`,
//! whose heap must lay out bodies exactly as the solver's thread-count test does.

// Each user takes what it needs.
#![allow(dead_code)]

/// The SplitMix64 value at `index`.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A number in `[0, 1)` from `index`: 24 bits, exact in `f32`.
pub fn unit(index: u64) -> f32 {
    (mix(index) >> 40) as f32 / 16_777_216.0
}

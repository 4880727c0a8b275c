//! [`RandomSeed`]: counter-based random numbers keyed by seed, stream and tick.
//!
//! A value is a pure function of `(seed, stream, tick)`, so it never depends on how many values
//! other systems drew, in what order systems ran, or how frames batched ticks; a replay or a
//! restored snapshot draws the same values without saving any generator state. Streams keep
//! subsystems apart: `RandomSeed::stream("bursts", key)` never collides in practice with another
//! subsystem's stream.
//!
//! This module must never hold mutable generator state or read an outside source of entropy.

use bevy::prelude::Resource;
use serde::{Deserialize, Serialize};

/// The simulation's seed (simulation state). Set from the scene or scenario.
#[derive(
    Resource,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    rusting_macros::SimState,
)]
pub struct RandomSeed(pub u64);

const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 finalizer: a bijection on `u64` whose output bits each depend on every input bit.
pub(crate) const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl RandomSeed {
    /// The random `u64` of `stream` at `tick`.
    ///
    /// Each of seed, stream and tick goes through its own mixing round, so changing any one of them
    /// gives an unrelated value.
    pub const fn value(&self, tick: u64, stream: u64) -> u64 {
        let h = mix(self.0.wrapping_add(GOLDEN_GAMMA));
        let h = mix(h ^ stream.wrapping_add(GOLDEN_GAMMA.wrapping_mul(2)));
        mix(h ^ tick.wrapping_add(GOLDEN_GAMMA.wrapping_mul(3)))
    }

    /// A random `f32` in `[0, 1)` with 24 random bits: every value is a multiple of `2^-24`.
    pub fn unit(&self, tick: u64, stream: u64) -> f32 {
        (self.value(tick, stream) >> 40) as f32 * (1.0 / 16_777_216.0)
    }

    /// The stream id of `subsystem` (such as `"bursts"`) for `key` (such as an emitter's scene id).
    ///
    /// The name is hashed with 64-bit FNV-1a, so the id is the same in every build and on every
    /// machine (unlike `std`'s randomly keyed hasher).
    pub const fn stream(subsystem: &str, key: u64) -> u64 {
        let bytes = subsystem.as_bytes();
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        let mut i = 0;
        while i < bytes.len() {
            hash ^= bytes[i] as u64;
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            i += 1;
        }
        mix(mix(hash) ^ key.wrapping_add(GOLDEN_GAMMA))
    }
}

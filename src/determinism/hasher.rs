//! [`StateHasher`] and [`StateHash`]: simulation values into a stable 64-bit hash, as raw bits.
//!
//! Every value is fed as its bits (floats through `to_bits`), never through `Debug` or `Display`,
//! so no formatting change can alter a hash, and `-0.0` and `0.0` hash differently, as they should
//! (they are different states). The hash is XXH3-64, a published algorithm with fixed output on
//! every platform. While hashing, the first NaN or infinity is noted with the field it was in, so
//! the hash pass doubles as the non-finite check. This module must never hash presentation state.

use bevy::math::{Quat, Vec3};
use xxhash_rust::xxh3::xxh3_64;

/// Feeds simulation values, as bits, into XXH3-64 (buffered: one hash pass per `finish`).
#[derive(Clone)]
pub struct StateHasher {
    inner: Vec<u8>,
    /// The first non-finite float fed, as `(component, field)`.
    pub non_finite: Option<(&'static str, &'static str)>,
    component: &'static str,
}

impl Default for StateHasher {
    fn default() -> Self {
        StateHasher::new()
    }
}

impl StateHasher {
    /// A hasher with no input yet.
    pub fn new() -> Self {
        StateHasher {
            inner: Vec::with_capacity(256),
            non_finite: None,
            component: "",
        }
    }

    /// Names the component whose fields follow (for non-finite reports) and feeds a two-byte tag
    /// for it: the name's length and first letter, which tell every simulation component and
    /// resource apart.
    pub fn begin(&mut self, component: &'static str) {
        self.component = component;
        let name = component.as_bytes();
        self.inner
            .extend_from_slice(&[name.len() as u8, name.first().copied().unwrap_or(0)]);
    }

    /// Feeds raw bytes.
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.inner.extend_from_slice(bytes);
    }

    /// Feeds a `u32`.
    pub fn u32(&mut self, v: u32) {
        self.inner.extend_from_slice(&v.to_le_bytes());
    }

    /// Feeds a `u64`.
    pub fn u64(&mut self, v: u64) {
        self.inner.extend_from_slice(&v.to_le_bytes());
    }

    /// Feeds an `i64`.
    pub fn i64(&mut self, v: i64) {
        self.inner.extend_from_slice(&v.to_le_bytes());
    }

    /// Feeds a `bool`.
    pub fn bool(&mut self, v: bool) {
        self.inner.extend_from_slice(&[v as u8]);
    }

    /// Feeds a float's bits; notes it when it is NaN or infinite.
    pub fn f32(&mut self, field: &'static str, v: f32) {
        if !v.is_finite() && self.non_finite.is_none() {
            self.non_finite = Some((self.component, field));
        }
        self.inner.extend_from_slice(&v.to_bits().to_le_bytes());
    }

    /// Feeds a vector's three floats.
    pub fn vec3(&mut self, field: &'static str, v: Vec3) {
        self.f32(field, v.x);
        self.f32(field, v.y);
        self.f32(field, v.z);
    }

    /// Feeds a quaternion's four floats (x, y, z, w).
    pub fn quat(&mut self, field: &'static str, q: Quat) {
        self.f32(field, q.x);
        self.f32(field, q.y);
        self.f32(field, q.z);
        self.f32(field, q.w);
    }

    /// The hash of everything fed so far.
    pub fn finish(&self) -> u64 {
        xxh3_64(&self.inner)
    }

    /// Forgets everything fed so far (keeping the buffer).
    pub fn clear(&mut self) {
        self.inner.clear();
        self.non_finite = None;
        self.component = "";
    }
}

/// A value that is part of the simulation state.
pub trait StateHash {
    /// Feeds every field that can change what a later tick computes.
    fn hash_state(&self, h: &mut StateHasher);
}

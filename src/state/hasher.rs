//! [`StateHasher`]: simulation values into a stable 64-bit hash, as raw bits.
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
    /// The first non-finite float fed, as `(component, field path)`.
    pub non_finite: Option<(&'static str, String)>,
    component: &'static str,
    /// The fields entered so far (see [`StateHasher::enter`]).
    path: Vec<&'static str>,
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
            path: Vec::with_capacity(8),
        }
    }

    /// Names the component whose fields follow (for non-finite reports) and feeds its tag: a
    /// 32-bit hash of its registered name (the registry refuses two names with one tag).
    pub fn begin(&mut self, component: &'static str) {
        self.begin_tagged(component, name_tag(component));
    }

    /// [`StateHasher::begin`] with the tag already computed.
    #[inline]
    pub fn begin_tagged(&mut self, component: &'static str, tag: u32) {
        self.component = component;
        self.path.clear();
        self.inner.extend_from_slice(&tag.to_le_bytes());
    }

    /// Enters field `field` of the value being fed (so a non-finite value is reported with its
    /// path); [`StateHasher::leave`] leaves it again.
    #[inline]
    pub fn enter(&mut self, field: &'static str) {
        self.path.push(field);
    }

    /// Leaves the field entered last.
    #[inline]
    pub fn leave(&mut self) {
        self.path.pop();
    }

    /// Feeds raw bytes.
    #[inline]
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.inner.extend_from_slice(bytes);
    }

    /// Feeds a `u32`.
    #[inline]
    pub fn u32(&mut self, v: u32) {
        self.inner.extend_from_slice(&v.to_le_bytes());
    }

    /// Feeds a `u64`.
    #[inline]
    pub fn u64(&mut self, v: u64) {
        self.inner.extend_from_slice(&v.to_le_bytes());
    }

    /// Feeds an `i64`.
    #[inline]
    pub fn i64(&mut self, v: i64) {
        self.inner.extend_from_slice(&v.to_le_bytes());
    }

    /// Feeds a `bool`.
    #[inline]
    pub fn bool(&mut self, v: bool) {
        self.inner.extend_from_slice(&[v as u8]);
    }

    /// Feeds a float's bits; notes it, with the path of fields entered, when it is NaN or
    /// infinite.
    #[inline]
    pub fn float(&mut self, v: f32) {
        if !v.is_finite() {
            self.note_non_finite();
        }
        self.inner.extend_from_slice(&v.to_bits().to_le_bytes());
    }

    /// Feeds several floats' bits in order, as [`StateHasher::float`] one after another would,
    /// with one write.
    #[inline]
    pub fn floats<const N: usize>(&mut self, values: [f32; N]) {
        if !values.iter().all(|v| v.is_finite()) {
            self.note_non_finite();
        }
        let mut bytes = [[0u8; 4]; N];
        for (out, v) in bytes.iter_mut().zip(values) {
            *out = v.to_bits().to_le_bytes();
        }
        self.inner.extend_from_slice(bytes.as_flattened());
    }

    /// Feeds an `f64`'s bits; notes it like [`StateHasher::float`].
    #[inline]
    pub fn double(&mut self, v: f64) {
        if !v.is_finite() {
            self.note_non_finite();
        }
        self.inner.extend_from_slice(&v.to_bits().to_le_bytes());
    }

    /// Notes the current field as the first non-finite one, unless one is noted already. Out of
    /// line: it almost never runs, and keeping it out keeps every feed small.
    #[cold]
    #[inline(never)]
    fn note_non_finite(&mut self) {
        if self.non_finite.is_none() {
            self.non_finite = Some((self.component, self.path.join(".")));
        }
    }

    /// Feeds a float's bits inside field `field`.
    #[inline]
    pub fn f32(&mut self, field: &'static str, v: f32) {
        self.enter(field);
        self.float(v);
        self.leave();
    }

    /// Feeds a vector's three floats inside field `field`.
    #[inline]
    pub fn vec3(&mut self, field: &'static str, v: Vec3) {
        self.enter(field);
        self.float(v.x);
        self.float(v.y);
        self.float(v.z);
        self.leave();
    }

    /// Feeds a quaternion's four floats (x, y, z, w) inside field `field`.
    #[inline]
    pub fn quat(&mut self, field: &'static str, q: Quat) {
        self.enter(field);
        self.float(q.x);
        self.float(q.y);
        self.float(q.z);
        self.float(q.w);
        self.leave();
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
        self.path.clear();
    }
}

/// The 32-bit tag the hash feeds for a registered name: the low half of its XXH3-64.
pub fn name_tag(name: &str) -> u32 {
    xxh3_64(name.as_bytes()) as u32
}

/// A hash as 16 hex digits.
pub fn hex(hash: u64) -> String {
    format!("{hash:016x}")
}

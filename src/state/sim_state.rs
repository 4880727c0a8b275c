//! [`SimState`]: a value that is simulation state, field by field.
//!
//! `#[derive(SimState)]` (from `rusting_macros`, re-exported by the prelude) writes it for a game's
//! structs and enums; this module writes it for the building blocks: `bool`, integers (`usize` and
//! `isize` as 64-bit, so widths never differ by platform), `f32` and `f64` (as raw bits), `String`,
//! `SimId`, glam's vectors and quaternions, bevy's `Transform`, `Arc`, `Option`, `Vec`, `VecDeque`, arrays,
//! `BTreeSet`, `BTreeMap` and tuples.
//!
//! `Entity` is deliberately not `SimState`: its bits are a handle that presentation shifts and a
//! restore changes. Hold a `SimId` in simulation state instead, or mark the field
//! `#[sim_state(skip = "...")]` with the reason it cannot change what a tick computes.
//!
//! This module must never hash through `Debug` text or a platform-dependent width.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use bevy::math::{IVec2, IVec3, Quat, UVec2, UVec3, Vec2, Vec3, Vec4};
use bevy::prelude::Transform;

use super::hasher::StateHasher;
use super::sim_id::SimId;

/// A value that is part of the simulation state.
///
/// `hash_state` feeds every field that can change what a later tick computes, as raw bits, in
/// declaration order; `visit_fields` lists the same fields with their values as people read them,
/// for comparisons (`Health.value: 3.0 vs 3.0000002`).
pub trait SimState {
    /// The type's stable registered name: what reports, comparisons, scene files and the hash tag
    /// call it. The derive uses the type's identifier unless `#[sim_state(name = "...")]` says
    /// otherwise; never `std::any::type_name`, which may change between compilers.
    const NAME: &'static str;

    /// Feeds every field's bits into `hasher`, in declaration order.
    fn hash_state(&self, hasher: &mut StateHasher);

    /// Calls `out` with every leaf field's path below `path` and its value.
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String));

    /// Calls `out` with each field's path below `path`, its type as declared and its size in
    /// bytes: the type's layout, which snapshots, replays and reports carry in their
    /// [`LayoutFingerprint`](super::LayoutFingerprint). The derive lists every field that is not
    /// skipped (and an enum's variants); by default the whole value is one entry.
    fn layout(path: &str, out: &mut dyn FnMut(&str, &'static str, usize))
    where
        Self: Sized,
    {
        out(path, Self::NAME, std::mem::size_of::<Self>());
    }
}

/// `path.field`, or `field` at the top.
pub fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

/// Every leaf field of `value` as `(path, value)`, in declaration order.
pub fn fields_of<T: SimState + ?Sized>(value: &T) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    value.visit_fields("", &mut |path, text| fields.push((path.to_owned(), text)));
    fields
}

macro_rules! integer {
    ($($ty:ty => $as:ty, $feed:ident);* $(;)?) => {$(
        impl SimState for $ty {
            const NAME: &'static str = stringify!($ty);
            #[inline]
            fn hash_state(&self, hasher: &mut StateHasher) {
                hasher.$feed(*self as $as);
            }
            fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
                out(path, self.to_string());
            }
        }
    )*};
}

integer! {
    u8 => u32, u32;
    u16 => u32, u32;
    u32 => u32, u32;
    u64 => u64, u64;
    usize => u64, u64;
    i8 => i64, i64;
    i16 => i64, i64;
    i32 => i64, i64;
    i64 => i64, i64;
    isize => i64, i64;
}

impl SimState for bool {
    const NAME: &'static str = "bool";
    #[inline]
    fn hash_state(&self, hasher: &mut StateHasher) {
        hasher.bool(*self);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        out(path, self.to_string());
    }
}

impl SimState for f32 {
    const NAME: &'static str = "f32";
    #[inline]
    fn hash_state(&self, hasher: &mut StateHasher) {
        hasher.float(*self);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        out(path, format!("{self:?}"));
    }
}

impl SimState for f64 {
    const NAME: &'static str = "f64";
    #[inline]
    fn hash_state(&self, hasher: &mut StateHasher) {
        hasher.double(*self);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        out(path, format!("{self:?}"));
    }
}

impl SimState for String {
    const NAME: &'static str = "String";
    #[inline]
    fn hash_state(&self, hasher: &mut StateHasher) {
        hasher.u64(self.len() as u64);
        hasher.bytes(self.as_bytes());
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        out(path, format!("{self:?}"));
    }
}

impl SimState for SimId {
    const NAME: &'static str = "SimId";
    #[inline]
    fn hash_state(&self, hasher: &mut StateHasher) {
        hasher.u64(self.0);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        out(path, self.to_string());
    }
}

/// Vectors feed their components as floats of the field they sit in; comparisons name each axis.
macro_rules! vector {
    ($($ty:ty: $($axis:ident),+);* $(;)?) => {$(
        impl SimState for $ty {
            const NAME: &'static str = stringify!($ty);
            #[inline]
            fn hash_state(&self, hasher: &mut StateHasher) {
                $(SimState::hash_state(&self.$axis, hasher);)+
            }
            fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
                $(SimState::visit_fields(&self.$axis, &join(path, stringify!($axis)), out);)+
            }
        }
    )*};
}

vector! {
    Vec2: x, y;
    Vec3: x, y, z;
    Vec4: x, y, z, w;
    Quat: x, y, z, w;
    IVec2: x, y;
    IVec3: x, y, z;
    UVec2: x, y;
    UVec3: x, y, z;
}

impl SimState for Transform {
    const NAME: &'static str = "Transform";
    #[inline]
    fn hash_state(&self, hasher: &mut StateHasher) {
        // No field path on the hot path (every simulation entity has one): a non-finite value is
        // located afterwards from `visit_fields`, as for derived types.
        let (t, r, s) = (self.translation, self.rotation, self.scale);
        hasher.floats([t.x, t.y, t.z, r.x, r.y, r.z, r.w, s.x, s.y, s.z]);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        self.translation
            .visit_fields(&join(path, "translation"), out);
        self.rotation.visit_fields(&join(path, "rotation"), out);
        self.scale.visit_fields(&join(path, "scale"), out);
    }
}

/// A shared immutable value (a level map in a job's input) is its value: hashed and compared
/// through the `Arc`.
impl<T: SimState> SimState for std::sync::Arc<T> {
    const NAME: &'static str = T::NAME;
    #[inline]
    fn hash_state(&self, hasher: &mut StateHasher) {
        T::hash_state(self, hasher);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        T::visit_fields(self, path, out);
    }
}

impl<T: SimState> SimState for Option<T> {
    const NAME: &'static str = "Option";
    #[inline]
    fn hash_state(&self, hasher: &mut StateHasher) {
        match self {
            None => hasher.u32(0),
            Some(value) => {
                hasher.u32(1);
                value.hash_state(hasher);
            }
        }
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        match self {
            None => out(path, "None".to_owned()),
            Some(value) => value.visit_fields(path, out),
        }
    }
}

/// Sequences feed their length, then every element; comparisons name elements by index.
#[inline]
fn sequence<'a, T: SimState + 'a>(
    items: impl ExactSizeIterator<Item = &'a T>,
    hasher: &mut StateHasher,
) {
    hasher.u64(items.len() as u64);
    for item in items {
        item.hash_state(hasher);
    }
}

fn visit_sequence<'a, T: SimState + 'a>(
    items: impl ExactSizeIterator<Item = &'a T>,
    path: &str,
    out: &mut dyn FnMut(&str, String),
) {
    out(&join(path, "len"), items.len().to_string());
    for (k, item) in items.enumerate() {
        item.visit_fields(&join(path, &k.to_string()), out);
    }
}

impl<T: SimState> SimState for Vec<T> {
    const NAME: &'static str = "Vec";
    fn hash_state(&self, hasher: &mut StateHasher) {
        sequence(self.iter(), hasher);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        visit_sequence(self.iter(), path, out);
    }
}

impl<T: SimState> SimState for VecDeque<T> {
    const NAME: &'static str = "VecDeque";
    fn hash_state(&self, hasher: &mut StateHasher) {
        sequence(self.iter(), hasher);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        visit_sequence(self.iter(), path, out);
    }
}

impl<T: SimState> SimState for BTreeSet<T> {
    const NAME: &'static str = "BTreeSet";
    fn hash_state(&self, hasher: &mut StateHasher) {
        sequence(self.iter(), hasher);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        visit_sequence(self.iter(), path, out);
    }
}

impl<T: SimState, const N: usize> SimState for [T; N] {
    const NAME: &'static str = "array";
    fn hash_state(&self, hasher: &mut StateHasher) {
        for item in self {
            item.hash_state(hasher);
        }
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        for (k, item) in self.iter().enumerate() {
            item.visit_fields(&join(path, &k.to_string()), out);
        }
    }
}

impl<K: SimState, V: SimState> SimState for BTreeMap<K, V> {
    const NAME: &'static str = "BTreeMap";
    fn hash_state(&self, hasher: &mut StateHasher) {
        hasher.u64(self.len() as u64);
        for (key, value) in self {
            key.hash_state(hasher);
            value.hash_state(hasher);
        }
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        out(&join(path, "len"), self.len().to_string());
        for (k, (key, value)) in self.iter().enumerate() {
            key.visit_fields(&join(path, &format!("{k}.key")), out);
            value.visit_fields(&join(path, &format!("{k}.value")), out);
        }
    }
}

impl<A: SimState, B: SimState> SimState for (A, B) {
    const NAME: &'static str = "tuple";
    fn hash_state(&self, hasher: &mut StateHasher) {
        self.0.hash_state(hasher);
        self.1.hash_state(hasher);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        self.0.visit_fields(&join(path, "0"), out);
        self.1.visit_fields(&join(path, "1"), out);
    }
}

impl<A: SimState, B: SimState, C: SimState> SimState for (A, B, C) {
    const NAME: &'static str = "tuple";
    fn hash_state(&self, hasher: &mut StateHasher) {
        self.0.hash_state(hasher);
        self.1.hash_state(hasher);
        self.2.hash_state(hasher);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        self.0.visit_fields(&join(path, "0"), out);
        self.1.visit_fields(&join(path, "1"), out);
        self.2.visit_fields(&join(path, "2"), out);
    }
}

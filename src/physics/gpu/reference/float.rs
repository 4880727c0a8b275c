//! The arithmetic of the CPU reference of GPU physics: 32-bit floats whose every result is
//! rounded once, as a `precise` GLSL value is, and checked for subnormals.
//!
//! This module owns [`F`] (one float), [`V3`] (three) and [`M3`] (a rotation's columns), with only
//! the operations the physics shaders use: IEEE `+ - *`, negation, `abs`, `floor`, `roundEven`,
//! GLSL's `min`, `max` and `clamp` (defined by comparisons, as the GLSL specification does), and
//! division, square roots, `int()` conversion, dot products, lengths and normalization through
//! `runtime::sim_math`, in `sim_math.glsl`'s order. Every value produced or loaded that is
//! subnormal is counted ([`take_subnormals`]): a device that does not preserve subnormals
//! (lavapipe) may part from the reference exactly there, so a comparison with such a device
//! checks the count is zero. It must never fuse, reorder or use a library routine whose rounding
//! is not specified.

use std::cell::Cell;
use std::ops::{Add, Mul, Neg, Sub};

use crate::runtime::sim_math;

thread_local! {
    static SUBNORMALS: Cell<u64> = const { Cell::new(0) };
}

/// The subnormal values met on this thread since the last call, and a fresh count.
pub(crate) fn take_subnormals() -> u64 {
    SUBNORMALS.with(|count| count.replace(0))
}

#[inline]
fn counted(x: f32) -> F {
    if x != 0.0 && x.abs() < f32::MIN_POSITIVE {
        SUBNORMALS.with(|count| count.set(count.get() + 1));
    }
    F(x)
}

/// One 32-bit float of the reference.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub(crate) struct F(pub f32);

impl F {
    pub const ZERO: F = F(0.0);
    pub const ONE: F = F(1.0);

    /// A value loaded from a buffer word.
    #[inline]
    pub fn from_bits(bits: u32) -> F {
        counted(f32::from_bits(bits))
    }

    #[inline]
    pub fn bits(self) -> u32 {
        self.0.to_bits()
    }

    /// GLSL `max`: `y` when `x < y`, otherwise `x`.
    #[inline]
    pub fn max(self, other: F) -> F {
        if self.0 < other.0 { other } else { self }
    }

    /// GLSL `min`: `y` when `y < x`, otherwise `x`.
    #[inline]
    pub fn min(self, other: F) -> F {
        if other.0 < self.0 { other } else { self }
    }

    /// GLSL `clamp`: `min(max(x, low), high)`.
    #[inline]
    pub fn clamp(self, low: F, high: F) -> F {
        self.max(low).min(high)
    }

    #[inline]
    pub fn abs(self) -> F {
        F(f32::from_bits(self.0.to_bits() & 0x7fff_ffff))
    }

    #[inline]
    pub fn floor(self) -> F {
        F(self.0.floor())
    }

    /// GLSL `roundEven`.
    #[inline]
    pub fn round_even(self) -> F {
        F(self.0.round_ties_even())
    }

    /// `sim_recip`.
    #[inline]
    pub fn recip(self) -> F {
        counted(sim_math::recip(self.0))
    }

    /// `sim_div`.
    #[inline]
    pub fn div(self, other: F) -> F {
        counted(sim_math::div(self.0, other.0))
    }

    /// `sim_sqrt`.
    #[inline]
    pub fn sqrt(self) -> F {
        counted(sim_math::sqrt(self.0))
    }

    /// `sim_to_int`.
    #[inline]
    pub fn to_int(self) -> i32 {
        sim_math::to_int(self.0)
    }

    /// GLSL `float(int)`: exact below 2^24, rounded to nearest-even above.
    #[inline]
    pub fn from_int(value: i32) -> F {
        F(value as f32)
    }
}

impl Add for F {
    type Output = F;
    #[inline]
    fn add(self, other: F) -> F {
        counted(self.0 + other.0)
    }
}

impl Sub for F {
    type Output = F;
    #[inline]
    fn sub(self, other: F) -> F {
        counted(self.0 - other.0)
    }
}

impl Mul for F {
    type Output = F;
    #[inline]
    fn mul(self, other: F) -> F {
        counted(self.0 * other.0)
    }
}

impl Neg for F {
    type Output = F;
    /// Exact: flips the sign bit.
    #[inline]
    fn neg(self) -> F {
        F(f32::from_bits(self.0.to_bits() ^ 0x8000_0000))
    }
}

/// Three floats of the reference: a point, direction or velocity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct V3 {
    pub x: F,
    pub y: F,
    pub z: F,
}

impl V3 {
    pub const ZERO: V3 = V3::new(F::ZERO, F::ZERO, F::ZERO);
    pub const UP: V3 = V3::new(F::ZERO, F::ONE, F::ZERO);

    #[inline]
    pub const fn new(x: F, y: F, z: F) -> V3 {
        V3 { x, y, z }
    }

    #[inline]
    pub fn get(self, axis: usize) -> F {
        match axis {
            0 => self.x,
            1 => self.y,
            _ => self.z,
        }
    }

    /// `vec3(v.x * s, v.y * s, v.z * s)`.
    #[inline]
    pub fn scale(self, s: F) -> V3 {
        V3::new(self.x * s, self.y * s, self.z * s)
    }

    /// `sim_dot`: `(a.x*b.x + a.y*b.y) + a.z*b.z`.
    #[inline]
    pub fn dot(self, other: V3) -> F {
        (self.x * other.x + self.y * other.y) + self.z * other.z
    }

    /// The cross product, each component `a*b - c*d`.
    #[inline]
    pub fn cross(self, b: V3) -> V3 {
        V3::new(
            self.y * b.z - self.z * b.y,
            self.z * b.x - self.x * b.z,
            self.x * b.y - self.y * b.x,
        )
    }

    /// `sim_length`.
    #[inline]
    pub fn length(self) -> F {
        self.dot(self).sqrt()
    }

    /// `sim_normalize`: zero when the squared length is zero, subnormal, infinite or NaN.
    #[inline]
    pub fn normalize(self) -> V3 {
        let squared = self.dot(self);
        let bits = squared.bits();
        if !(0x0080_0000..=0x7f7f_ffff).contains(&bits) {
            return V3::ZERO;
        }
        let inv = counted(sim_math::inv_sqrt(squared.0));
        self.scale(inv)
    }

    #[inline]
    pub fn abs(self) -> V3 {
        V3::new(self.x.abs(), self.y.abs(), self.z.abs())
    }

    /// GLSL `clamp` per component.
    #[inline]
    pub fn clamp(self, low: V3, high: V3) -> V3 {
        V3::new(
            self.x.clamp(low.x, high.x),
            self.y.clamp(low.y, high.y),
            self.z.clamp(low.z, high.z),
        )
    }

    /// GLSL `==` on vectors: every component compares equal (so `-0 == 0`, and NaN never).
    #[inline]
    pub fn equals(self, other: V3) -> bool {
        self.x.0 == other.x.0 && self.y.0 == other.y.0 && self.z.0 == other.z.0
    }
}

impl Add for V3 {
    type Output = V3;
    #[inline]
    fn add(self, o: V3) -> V3 {
        V3::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}

impl Sub for V3 {
    type Output = V3;
    #[inline]
    fn sub(self, o: V3) -> V3 {
        V3::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}

impl Neg for V3 {
    type Output = V3;
    #[inline]
    fn neg(self) -> V3 {
        V3::new(-self.x, -self.y, -self.z)
    }
}

/// A 3x3 matrix as its columns (a rotation: the local axes in the world).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct M3(pub [V3; 3]);

impl M3 {
    /// `sim_mat3_mul_vec3`: each row summed left to right.
    #[inline]
    pub fn mul_vec(&self, v: V3) -> V3 {
        let [c0, c1, c2] = self.0;
        V3::new(
            (c0.x * v.x + c1.x * v.y) + c2.x * v.z,
            (c0.y * v.x + c1.y * v.y) + c2.y * v.z,
            (c0.z * v.x + c1.z * v.y) + c2.z * v.z,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GLSL's `min`/`max` keep the first operand on ties, so signed zeros are kept as the shader
    /// keeps them. Fails when `max` is written with `f32::max` semantics that prefer `+0`.
    #[test]
    fn min_and_max_follow_the_glsl_definition() {
        let neg = F(-0.0);
        let pos = F(0.0);
        assert_eq!(neg.max(pos).bits(), (-0.0f32).to_bits());
        assert_eq!(pos.min(neg).bits(), 0.0f32.to_bits());
        assert_eq!(F(1.0).max(F(2.0)), F(2.0));
        assert_eq!(F(3.0).clamp(F(0.0), F(1.0)), F(1.0));
    }

    /// Subnormal results and loads are counted, normal ones and zeros are not. Fails when the
    /// count misses a product that underflows.
    #[test]
    fn subnormal_results_are_counted() {
        take_subnormals();
        let tiny = F(1.0e-20) * F(1.0e-20);
        let _ = F::from_bits(1);
        let _ = F(2.0) * F(3.0) + F::ZERO;
        assert!(tiny.0 != 0.0);
        assert_eq!(take_subnormals(), 2);
        assert_eq!(take_subnormals(), 0);
    }
}

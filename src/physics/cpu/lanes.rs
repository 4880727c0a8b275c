//! Four-lane `f32` arithmetic for the contact solve: the only module that touches `wide`.
//!
//! [`Lanes`] wraps `wide::f32x4` and exposes exactly the operations that give the same bits on
//! every CPU: IEEE `+ - * /` and `sqrt`, comparisons, selection by mask, and `max`/`min`/`clamp` built from a
//! comparison and a select. It never offers `mul_add` (it fuses where the CPU has FMA and not
//! elsewhere), `recip` or `recip_sqrt` (approximations whose bits differ between CPUs), nor
//! `wide`'s own `max`/`min`, whose answer for `+0`/`-0` and NaN depends on the instruction set.
//! Negation flips the sign bit, as scalar `-x` does. `clippy.toml` forbids the fused and
//! approximate methods in the whole crate as well, so the rule cannot be broken by accident.
//!
//! Four lanes on every target: SSE2 (the x86-64 baseline), AVX builds, and NEON all run these
//! operations lane by lane with the same IEEE results, so a native build and the baseline build
//! give the same bits.

use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub, SubAssign};

use bevy::math::Vec3;
use wide::f32x4;

/// How many constraints one [`Lanes`] value carries.
pub const LANES: usize = 4;

/// Four `f32` lanes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(transparent)]
pub struct Lanes(f32x4);

/// A lane mask: all bits set where true, clear where false.
#[derive(Clone, Copy, Debug, Default)]
#[repr(transparent)]
pub struct Mask(f32x4);

impl Lanes {
    /// Every lane zero.
    pub const ZERO: Lanes = Lanes(f32x4::ZERO);

    /// The same value in every lane.
    #[inline(always)]
    pub fn splat(x: f32) -> Lanes {
        Lanes(f32x4::splat(x))
    }

    /// The lanes from an array, lane 0 first.
    #[inline(always)]
    pub fn from_array(values: [f32; LANES]) -> Lanes {
        Lanes(f32x4::new(values))
    }

    /// The lanes as an array, lane 0 first.
    #[inline(always)]
    pub fn to_array(self) -> [f32; LANES] {
        self.0.to_array()
    }

    /// Where `self > other` (false where either is NaN).
    #[inline(always)]
    pub fn gt(self, other: Lanes) -> Mask {
        Mask(self.0.simd_gt(other.0))
    }

    /// Where `self >= other` (false where either is NaN).
    #[inline(always)]
    pub fn ge(self, other: Lanes) -> Mask {
        Mask(self.0.simd_ge(other.0))
    }

    /// The absolute value (sign bit cleared).
    #[inline(always)]
    pub fn abs(self) -> Lanes {
        Lanes(self.0.abs())
    }

    /// The IEEE square root (correctly rounded on every CPU).
    #[inline(always)]
    pub fn sqrt(self) -> Lanes {
        Lanes(self.0.sqrt())
    }

    /// `self` where it is greater than `other`, else `other`.
    #[inline(always)]
    pub fn max(self, other: Lanes) -> Lanes {
        self.gt(other).select(self, other)
    }

    /// `self` where it is less than `other`, else `other`.
    #[inline(always)]
    pub fn min(self, other: Lanes) -> Lanes {
        other.gt(self).select(self, other)
    }

    /// `self` limited to `[low, high]`.
    #[inline(always)]
    pub fn clamp(self, low: Lanes, high: Lanes) -> Lanes {
        self.max(low).min(high)
    }
}

impl Mask {
    /// `if_true` in the lanes where the mask is set, `if_false` elsewhere.
    #[inline(always)]
    pub fn select(self, if_true: Lanes, if_false: Lanes) -> Lanes {
        Lanes(self.0.bitselect(if_true.0, if_false.0))
    }

    /// `if_true` in the lanes where the mask is set, `if_false` elsewhere, for each component.
    #[inline(always)]
    pub fn select3(self, if_true: LaneVec3, if_false: LaneVec3) -> LaneVec3 {
        LaneVec3 {
            x: self.select(if_true.x, if_false.x),
            y: self.select(if_true.y, if_false.y),
            z: self.select(if_true.z, if_false.z),
        }
    }

    /// Set where both masks are.
    #[inline(always)]
    pub fn and(self, other: Mask) -> Mask {
        Mask(self.0 & other.0)
    }

    /// The mask from one flag per lane.
    #[inline(always)]
    pub fn from_flags(flags: [bool; LANES]) -> Mask {
        Mask(f32x4::new(
            flags.map(|f| f32::from_bits(if f { u32::MAX } else { 0 })),
        ))
    }
}

impl Add for Lanes {
    type Output = Lanes;
    #[inline(always)]
    fn add(self, rhs: Lanes) -> Lanes {
        Lanes(self.0 + rhs.0)
    }
}

impl Sub for Lanes {
    type Output = Lanes;
    #[inline(always)]
    fn sub(self, rhs: Lanes) -> Lanes {
        Lanes(self.0 - rhs.0)
    }
}

impl Mul for Lanes {
    type Output = Lanes;
    #[inline(always)]
    fn mul(self, rhs: Lanes) -> Lanes {
        Lanes(self.0 * rhs.0)
    }
}

impl Div for Lanes {
    type Output = Lanes;
    #[inline(always)]
    fn div(self, rhs: Lanes) -> Lanes {
        Lanes(self.0 / rhs.0)
    }
}

impl Neg for Lanes {
    type Output = Lanes;
    #[inline(always)]
    fn neg(self) -> Lanes {
        // The sign bit flipped, as scalar `-x` does (`0 - x` would turn `+0` into `+0`).
        Lanes(self.0 ^ f32x4::splat(-0.0))
    }
}

/// `+=` and `-=` as the `+` and `-` they stand for (the same roundings).
macro_rules! assign_ops {
    ($t:ty) => {
        impl AddAssign for $t {
            #[inline(always)]
            fn add_assign(&mut self, rhs: $t) {
                *self = *self + rhs;
            }
        }

        impl SubAssign for $t {
            #[inline(always)]
            fn sub_assign(&mut self, rhs: $t) {
                *self = *self - rhs;
            }
        }
    };
}

assign_ops!(Lanes);
assign_ops!(LaneVec3);

/// A 3-vector per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LaneVec3 {
    /// X of every lane.
    pub x: Lanes,
    /// Y of every lane.
    pub y: Lanes,
    /// Z of every lane.
    pub z: Lanes,
}

impl LaneVec3 {
    /// Every lane zero.
    pub const ZERO: LaneVec3 = LaneVec3 {
        x: Lanes::ZERO,
        y: Lanes::ZERO,
        z: Lanes::ZERO,
    };

    /// One vector per lane.
    #[inline(always)]
    pub fn from_vecs(v: [Vec3; LANES]) -> LaneVec3 {
        LaneVec3 {
            x: Lanes::from_array(v.map(|v| v.x)),
            y: Lanes::from_array(v.map(|v| v.y)),
            z: Lanes::from_array(v.map(|v| v.z)),
        }
    }

    /// The vector of each lane.
    #[inline(always)]
    pub fn to_vecs(self) -> [Vec3; LANES] {
        let (x, y, z) = (self.x.to_array(), self.y.to_array(), self.z.to_array());
        std::array::from_fn(|i| Vec3::new(x[i], y[i], z[i]))
    }

    /// `(x * x' + y * y') + z * z'`, the order `sim_math::dot3` uses.
    #[inline(always)]
    pub fn dot(self, other: LaneVec3) -> Lanes {
        (self.x * other.x + self.y * other.y) + self.z * other.z
    }

    /// `self x other`, in `sim_math::cross`'s order.
    #[inline(always)]
    pub fn cross(self, other: LaneVec3) -> LaneVec3 {
        LaneVec3 {
            x: self.y * other.z - self.z * other.y,
            y: self.z * other.x - self.x * other.z,
            z: self.x * other.y - self.y * other.x,
        }
    }

    /// Component by component: `(x * x', y * y', z * z')`.
    #[inline(always)]
    pub fn times(self, other: LaneVec3) -> LaneVec3 {
        LaneVec3 {
            x: self.x * other.x,
            y: self.y * other.y,
            z: self.z * other.z,
        }
    }

    /// Every component times `s`.
    #[inline(always)]
    pub fn scale(self, s: Lanes) -> LaneVec3 {
        LaneVec3 {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }
}

impl Add for LaneVec3 {
    type Output = LaneVec3;
    #[inline(always)]
    fn add(self, rhs: LaneVec3) -> LaneVec3 {
        LaneVec3 {
            x: self.x + rhs.x,
            y: self.y + rhs.y,
            z: self.z + rhs.z,
        }
    }
}

impl Sub for LaneVec3 {
    type Output = LaneVec3;
    #[inline(always)]
    fn sub(self, rhs: LaneVec3) -> LaneVec3 {
        LaneVec3 {
            x: self.x - rhs.x,
            y: self.y - rhs.y,
            z: self.z - rhs.z,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `max`, `min` and negation are defined by a comparison and a select, the same on every
    /// instruction set: `max(a, b)` is `a` where `a > b`, else `b` (so `max(-0, +0)` is `+0`,
    /// `max(+0, -0)` is `-0`, and a NaN in `b` wins), and negation flips the sign bit. Fails if
    /// `Neg` is written as `0 - x`, or `max`/`min` as `wide`'s own (which answer NaN and signed
    /// zeros by the instruction set's rules).
    #[test]
    fn selection_and_negation_are_exact() {
        let a = Lanes::from_array([1.0, -2.0, 0.0, 3.5]);
        let b = Lanes::from_array([0.5, -1.0, 0.0, 4.0]);
        assert_eq!(a.max(b).to_array(), [1.0, -1.0, 0.0, 4.0]);
        assert_eq!(a.min(b).to_array(), [0.5, -2.0, 0.0, 3.5]);
        let negated = (-Lanes::ZERO).to_array();
        assert!(negated.iter().all(|x| x.to_bits() == (-0.0f32).to_bits()));
        assert_eq!(
            a.clamp(Lanes::splat(-1.0), Lanes::splat(2.0)).to_array(),
            [1.0, -1.0, 0.0, 2.0]
        );
        let m = Mask::from_flags([true, false, true, false]);
        assert_eq!(m.select(a, b).to_array(), [1.0, -1.0, 0.0, 4.0]);

        let bits = |l: Lanes| l.to_array().map(f32::to_bits);
        let zeros = Lanes::from_array([-0.0, 0.0, 1.0, f32::NAN]);
        let others = Lanes::from_array([0.0, -0.0, f32::NAN, 1.0]);
        let expected_max = [0.0f32, -0.0, f32::NAN, 1.0].map(f32::to_bits);
        assert_eq!(bits(zeros.max(others)), expected_max);
        let expected_min = [0.0f32, -0.0, f32::NAN, 1.0].map(f32::to_bits);
        assert_eq!(bits(zeros.min(others)), expected_min);
    }
}

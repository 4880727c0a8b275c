//! `Vec2` routines for games on a plane (a top-down shooter's aim, a 2D body's heading), in a
//! fixed order like the rest of `sim_math`.
//!
//! Lengths and normalization go through `sim_math`'s own `sqrt` and `inv_sqrt`, angles through its
//! `sin_cos` and `atan2`, so an aim computed from input gives the same bits on every machine.
//! glam's `Vec2` methods (`length`, `normalize`, `angle_to`, `rotate`) may use SIMD, fused
//! operations or the platform's trigonometry, so simulation code must not call them. This module
//! never keeps state.

use bevy::math::Vec2;

use super::arith::{inv_sqrt, sqrt};
use super::trig::{atan2, sin_cos};
use super::vector::dot2;

/// The z of the cross product of `a` and `b` on the plane, `a.x*b.y - a.y*b.x`: positive when `b`
/// is counter-clockwise from `a`.
#[inline]
pub fn cross2(a: Vec2, b: Vec2) -> f32 {
    a.x * b.y - a.y * b.x
}

/// `v` turned a quarter turn counter-clockwise, `(-y, x)`.
#[inline]
pub fn perp2(v: Vec2) -> Vec2 {
    Vec2::new(-v.y, v.x)
}

/// The length of `v`, `sqrt(dot2(v, v))`.
#[inline]
pub fn length2(v: Vec2) -> f32 {
    sqrt(dot2(v, v))
}

/// `v` scaled to length 1, or zero when its squared length is zero, subnormal, infinite or NaN
/// (as `normalize` does for `Vec3`): a stick at rest aims nowhere.
#[inline]
pub fn normalize2(v: Vec2) -> Vec2 {
    let squared = dot2(v, v);
    if !(f32::MIN_POSITIVE..=f32::MAX).contains(&squared) {
        return Vec2::ZERO;
    }
    let inv = inv_sqrt(squared);
    Vec2::new(v.x * inv, v.y * inv)
}

/// The angle of `v` from the +X axis, counter-clockwise, in `[-pi, pi]` (`atan2(y, x)`).
#[inline]
pub fn angle2(v: Vec2) -> f32 {
    atan2(v.y, v.x)
}

/// The unit vector at `radians` from the +X axis, counter-clockwise: `(cos, sin)`.
#[inline]
pub fn from_angle2(radians: f32) -> Vec2 {
    let (sin, cos) = sin_cos(radians);
    Vec2::new(cos, sin)
}

/// `v` turned `radians` counter-clockwise: `(x cos - y sin, x sin + y cos)`.
#[inline]
pub fn rotate2(v: Vec2, radians: f32) -> Vec2 {
    let (sin, cos) = sin_cos(radians);
    Vec2::new(v.x * cos - v.y * sin, v.x * sin + v.y * cos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::sim_math::{FRAC_PI_2, PI};

    fn close(a: Vec2, b: Vec2) -> bool {
        (a.x - b.x).abs() < 1.0e-6 && (a.y - b.y).abs() < 1.0e-6
    }

    /// Lengths, directions and turns on the plane agree with their definitions: a 3-4-5
    /// triangle, quarter turns each way, an aim's angle and back, and a stick at rest. Fails if
    /// a routine swaps its axes or turns clockwise.
    #[test]
    fn plane_routines_follow_their_definitions() {
        assert_eq!(length2(Vec2::new(3.0, 4.0)), 5.0);
        assert!(close(normalize2(Vec2::new(3.0, 4.0)), Vec2::new(0.6, 0.8)));
        assert_eq!(normalize2(Vec2::ZERO), Vec2::ZERO);
        assert_eq!(normalize2(Vec2::new(f32::NAN, 1.0)), Vec2::ZERO);
        assert_eq!(perp2(Vec2::new(1.0, 2.0)), Vec2::new(-2.0, 1.0));
        assert_eq!(cross2(Vec2::X, Vec2::Y), 1.0);
        assert_eq!(cross2(Vec2::Y, Vec2::X), -1.0);
        assert!(close(rotate2(Vec2::X, FRAC_PI_2), Vec2::Y));
        assert!(close(rotate2(Vec2::Y, -FRAC_PI_2), Vec2::X));
        assert!(close(from_angle2(PI), Vec2::new(-1.0, 0.0)));
        for k in -7..=7 {
            let radians = k as f32 * 0.4;
            let back = angle2(from_angle2(radians));
            assert!(
                (back - radians).abs() < 1.0e-5,
                "{radians} came back as {back}"
            );
        }
    }
}

//! Lengths and normalization for the CPU solver, with the CPU's own IEEE `sqrt` and `/`.
//!
//! On a CPU, IEEE-754 `sqrt` and `/` are correctly rounded on every supported target, so they give
//! the same bits everywhere; `sim_math`'s versions exist to get those bits on GPUs, and cost more.
//! The solver therefore takes its square roots and divisions from the hardware here, in a fixed
//! order, and everything else (dot and cross products, quaternion products, trigonometry) from
//! `sim_math`. This module must never call `mul_add` or a platform transcendental.

use bevy::math::{Quat, Vec3, Vec4};

use crate::runtime::sim_math::{dot3, dot4};

/// `|v|`.
#[inline]
pub fn length(v: Vec3) -> f32 {
    dot3(v, v).sqrt()
}

/// `v / |v|` and `|v|`, or `(fallback, 0)` when `v` is too short to have a direction.
#[inline]
pub fn direction_or(v: Vec3, fallback: Vec3) -> (Vec3, f32) {
    let len = length(v);
    if len > 1.0e-9 {
        (v * (1.0 / len), len)
    } else {
        (fallback, 0.0)
    }
}

/// `q / |q|`, or the identity for a quaternion of zero or non-finite length.
#[inline]
pub fn quat_unit(q: Quat) -> Quat {
    let squared = dot4(Vec4::from(q), Vec4::from(q));
    if !(squared > 0.0 && squared.is_finite()) {
        return Quat::IDENTITY;
    }
    let inv = 1.0 / squared.sqrt();
    Quat::from_xyzw(q.x * inv, q.y * inv, q.z * inv, q.w * inv)
}

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

/// The rotation by angle `|v|` about axis `v / |v|`: `sim_math::rotation_from_scaled_axis` with the
/// CPU's own square root and division. Both are correctly rounded, as `sim_math`'s are, and the
/// angle is never subnormal on the path that takes them (below `1e-6` the series is used), so for
/// finite `v` the bits are `sim_math`'s, for a twentieth of the time (a non-finite `v` gives a NaN
/// with another payload, which the caller's `quat_unit` turns into the identity either way).
#[inline]
pub fn rotation_from_scaled_axis(v: Vec3) -> Quat {
    let angle_squared = dot3(v, v);
    if angle_squared < 1.0e-12 {
        return crate::runtime::sim_math::rotation_from_scaled_axis(v);
    }
    let angle = angle_squared.sqrt();
    let (s, c) = crate::runtime::sim_math::sin_cos(0.5 * angle);
    let k = s / angle;
    Quat::from_xyzw(v.x * k, v.y * k, v.z * k, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hardware-division shortcut gives `sim_math::rotation_from_scaled_axis`'s bits for
    /// finite vectors: across the series threshold (`|v|^2` of `1e-12`), tiny, ordinary and huge
    /// angles, and every sign. Fails when the shortcut is written with a different operation
    /// order (for example `v * (s / angle)` computed as `(v * s) / angle`).
    #[test]
    fn rotation_from_scaled_axis_has_sim_maths_bits() {
        let bits = |q: Quat| q.to_array().map(f32::to_bits);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut unit = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        let mut checked = 0;
        for scale in [
            1.0e-7f32, 5.7e-7, 5.8e-7, 1.0e-6, 1.0e-3, 0.5, 1.0, 3.0, 100.0, 1.0e6,
        ] {
            for _ in 0..500 {
                let v = Vec3::new(unit(), unit(), unit()) * scale;
                assert_eq!(
                    bits(rotation_from_scaled_axis(v)),
                    bits(crate::runtime::sim_math::rotation_from_scaled_axis(v)),
                    "v = {v:?}"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 5000);
    }
}

//! Dot products, lengths, normalization, matrix-vector and quaternion products in a fixed order.
//!
//! This module owns the vector routines simulation code uses. Each one is written out as scalar
//! operations evaluated left to right, so no compiler, SIMD path or GPU driver can reorder or fuse
//! them: `dot3(a, b)` is always `((a.x*b.x + a.y*b.y) + a.z*b.z)`. glam's own methods may use SIMD
//! and a different order, so simulation code must not call them; it may still store values in glam
//! types, which is all this module does with them.

use bevy::math::{Mat3, Mat4, Quat, Vec2, Vec3, Vec4};

use super::arith::{inv_sqrt, sqrt};

/// `a.x*b.x + a.y*b.y`.
#[inline]
pub fn dot2(a: Vec2, b: Vec2) -> f32 {
    a.x * b.x + a.y * b.y
}

/// `(a.x*b.x + a.y*b.y) + a.z*b.z`.
#[inline]
pub fn dot3(a: Vec3, b: Vec3) -> f32 {
    (a.x * b.x + a.y * b.y) + a.z * b.z
}

/// `((a.x*b.x + a.y*b.y) + a.z*b.z) + a.w*b.w`.
#[inline]
pub fn dot4(a: Vec4, b: Vec4) -> f32 {
    ((a.x * b.x + a.y * b.y) + a.z * b.z) + a.w * b.w
}

/// The cross product `a x b`.
#[inline]
pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
    Vec3::new(
        a.y * b.z - a.z * b.y,
        a.z * b.x - a.x * b.z,
        a.x * b.y - a.y * b.x,
    )
}

/// The length of `v`, `sqrt(dot3(v, v))`.
#[inline]
pub fn length(v: Vec3) -> f32 {
    sqrt(dot3(v, v))
}

/// `v` scaled to length 1, or zero when its squared length is zero, subnormal, infinite or NaN
/// (lengths below about `1e-19` or above about `1.8e19`).
#[inline]
pub fn normalize(v: Vec3) -> Vec3 {
    let squared = dot3(v, v);
    if !(f32::MIN_POSITIVE..=f32::MAX).contains(&squared) {
        return Vec3::ZERO;
    }
    let inv = inv_sqrt(squared);
    Vec3::new(v.x * inv, v.y * inv, v.z * inv)
}

/// `m * v` for a 3x3 matrix (glam stores columns: `m.x_axis` is the first column).
#[inline]
pub fn mat3_mul_vec3(m: &Mat3, v: Vec3) -> Vec3 {
    Vec3::new(
        (m.x_axis.x * v.x + m.y_axis.x * v.y) + m.z_axis.x * v.z,
        (m.x_axis.y * v.x + m.y_axis.y * v.y) + m.z_axis.y * v.z,
        (m.x_axis.z * v.x + m.y_axis.z * v.y) + m.z_axis.z * v.z,
    )
}

/// `m * v` for a 4x4 matrix.
#[inline]
pub fn mat4_mul_vec4(m: &Mat4, v: Vec4) -> Vec4 {
    Vec4::new(
        ((m.x_axis.x * v.x + m.y_axis.x * v.y) + m.z_axis.x * v.z) + m.w_axis.x * v.w,
        ((m.x_axis.y * v.x + m.y_axis.y * v.y) + m.z_axis.y * v.z) + m.w_axis.y * v.w,
        ((m.x_axis.z * v.x + m.y_axis.z * v.y) + m.z_axis.z * v.z) + m.w_axis.z * v.w,
        ((m.x_axis.w * v.x + m.y_axis.w * v.y) + m.z_axis.w * v.z) + m.w_axis.w * v.w,
    )
}

/// `m * (p, 1)` without the last row: transforms a point by an affine 4x4 matrix.
#[inline]
pub fn mat4_transform_point(m: &Mat4, p: Vec3) -> Vec3 {
    Vec3::new(
        ((m.x_axis.x * p.x + m.y_axis.x * p.y) + m.z_axis.x * p.z) + m.w_axis.x,
        ((m.x_axis.y * p.x + m.y_axis.y * p.y) + m.z_axis.y * p.z) + m.w_axis.y,
        ((m.x_axis.z * p.x + m.y_axis.z * p.y) + m.z_axis.z * p.z) + m.w_axis.z,
    )
}

/// The Hamilton product `a * b`: the rotation `b` followed by `a`.
#[inline]
pub fn quat_mul(a: Quat, b: Quat) -> Quat {
    Quat::from_xyzw(
        ((a.w * b.x + a.x * b.w) + a.y * b.z) - a.z * b.y,
        ((a.w * b.y - a.x * b.z) + a.y * b.w) + a.z * b.x,
        ((a.w * b.z + a.x * b.y) - a.y * b.x) + a.z * b.w,
        ((a.w * b.w - a.x * b.x) - a.y * b.y) - a.z * b.z,
    )
}

/// `v` rotated by the unit quaternion `q`: `v + 2w (u x v) + 2 u x (u x v)` with `u = q.xyz`.
#[inline]
pub fn quat_rotate(q: Quat, v: Vec3) -> Vec3 {
    let u = Vec3::new(q.x, q.y, q.z);
    let t = cross(u, v);
    let t = Vec3::new(t.x + t.x, t.y + t.y, t.z + t.z);
    let ut = cross(u, t);
    Vec3::new(
        (v.x + q.w * t.x) + ut.x,
        (v.y + q.w * t.y) + ut.y,
        (v.z + q.w * t.z) + ut.z,
    )
}

/// `q` scaled to unit length, or the identity when its length is zero, subnormal or not finite.
#[inline]
pub fn quat_normalize(q: Quat) -> Quat {
    let squared = dot4(Vec4::from(q), Vec4::from(q));
    if !(f32::MIN_POSITIVE..=f32::MAX).contains(&squared) {
        return Quat::IDENTITY;
    }
    let inv = inv_sqrt(squared);
    Quat::from_xyzw(q.x * inv, q.y * inv, q.z * inv, q.w * inv)
}

//! Rotations from and to Euler angles, scaled axes and matrices, and affine transform matrices.
//!
//! This module owns the conversions between the rotation forms simulation code meets: Euler
//! angles from scenes and gameplay, scaled axes from angular velocity integration, and the 4x4
//! model matrices GPU bodies are stored as. Everything is built from [`super::trig`],
//! [`super::arith`] and [`super::vector`]; it must never call glam's `from_euler`,
//! `to_euler`, `from_scaled_axis` or `Mat4` constructors, which use platform trigonometry and SIMD.

use bevy::math::{Mat3, Mat4, Quat, Vec3, Vec4};
use bevy::transform::components::Transform;

use super::arith::{div, recip, sqrt};
use super::trig::{atan2, sin_cos};
use super::vector::{dot3, length, quat_mul, quat_normalize};

/// The axis order of a Tait-Bryan rotation: `XYZ` means `R_x(a) * R_y(b) * R_z(c)`, i.e. rotate
/// about Z by `c` first, then about Y by `b`, then about X by `a` (or, read intrinsically, X then
/// the new Y then the new Z).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum EulerOrder {
    /// `R_x(a) R_y(b) R_z(c)`.
    XYZ,
    /// `R_x(a) R_z(b) R_y(c)`.
    XZY,
    /// `R_y(a) R_x(b) R_z(c)`: yaw, pitch, roll for a Y-up world. The usual game order.
    YXZ,
    /// `R_y(a) R_z(b) R_x(c)`.
    YZX,
    /// `R_z(a) R_x(b) R_y(c)`.
    ZXY,
    /// `R_z(a) R_y(b) R_x(c)`.
    ZYX,
}

impl EulerOrder {
    /// The axis indices `(i, j, k)` and whether `i -> j -> k` is a cyclic (even) permutation.
    fn axes(self) -> (usize, usize, usize, bool) {
        match self {
            EulerOrder::XYZ => (0, 1, 2, true),
            EulerOrder::XZY => (0, 2, 1, false),
            EulerOrder::YXZ => (1, 0, 2, false),
            EulerOrder::YZX => (1, 2, 0, true),
            EulerOrder::ZXY => (2, 0, 1, true),
            EulerOrder::ZYX => (2, 1, 0, false),
        }
    }
}

/// The rotation by `angle` radians about coordinate axis `axis` (0, 1, 2 for X, Y, Z).
fn axis_rotation(axis: usize, angle: f32) -> Quat {
    let (s, c) = sin_cos(0.5 * angle);
    let mut xyz = [0.0; 3];
    xyz[axis] = s;
    Quat::from_xyzw(xyz[0], xyz[1], xyz[2], c)
}

/// The rotation `R_i(a) R_j(b) R_k(c)` for the axes of `order`.
pub fn rotation_from_euler(order: EulerOrder, a: f32, b: f32, c: f32) -> Quat {
    let (i, j, k, _) = order.axes();
    quat_mul(
        quat_mul(axis_rotation(i, a), axis_rotation(j, b)),
        axis_rotation(k, c),
    )
}

/// The angles `(a, b, c)` with `rotation_from_euler(order, a, b, c)` equal to `q` (up to rounding).
///
/// `b` is in `[-pi/2, pi/2]`, `a` and `c` in `[-pi, pi]`. At gimbal lock (`|b| = pi/2`), where only
/// `a ± c` is defined, `c` is 0.
pub fn euler_from_rotation(order: EulerOrder, q: Quat) -> (f32, f32, f32) {
    let (i, j, k, even) = order.axes();
    let m = rotation_rows(quat_normalize(q));
    let s = if even { 1.0 } else { -1.0 };
    let cos_b = sqrt(m[i][i] * m[i][i] + m[i][j] * m[i][j]);
    let b = atan2(s * m[i][k], cos_b);
    if cos_b < 1.0e-6 {
        // Locked: R_i(a) R_j(+-pi/2) R_k(c) only depends on a -+ c; put it all into a.
        let a = atan2(s * m[k][j], m[j][j]);
        (a, b, 0.0)
    } else {
        let a = atan2(-s * m[j][k], m[k][k]);
        let c = atan2(-s * m[i][j], m[i][i]);
        (a, b, c)
    }
}

/// The rotation by `|v|` radians about the axis `v / |v|` (the identity for `v = 0`).
pub fn rotation_from_scaled_axis(v: Vec3) -> Quat {
    let angle_squared = dot3(v, v);
    if angle_squared < 1.0e-12 {
        // sin(angle / 2) / angle = 1/2 - angle^2 / 48 + O(angle^4), exact to f32 precision here.
        let k = 0.5 - angle_squared * (1.0 / 48.0);
        let w = 1.0 - angle_squared * 0.125;
        return Quat::from_xyzw(v.x * k, v.y * k, v.z * k, w);
    }
    let angle = sqrt(angle_squared);
    let (s, c) = sin_cos(0.5 * angle);
    let k = div(s, angle);
    Quat::from_xyzw(v.x * k, v.y * k, v.z * k, c)
}

/// The rotation matrix of a unit quaternion as rows: `rows[r][c]` is row `r`, column `c`.
fn rotation_rows(q: Quat) -> [[f32; 3]; 3] {
    let (x2, y2, z2) = (q.x + q.x, q.y + q.y, q.z + q.z);
    let (xx, yy, zz) = (q.x * x2, q.y * y2, q.z * z2);
    let (xy, xz, yz) = (q.x * y2, q.x * z2, q.y * z2);
    let (wx, wy, wz) = (q.w * x2, q.w * y2, q.w * z2);
    [
        [1.0 - (yy + zz), xy - wz, xz + wy],
        [xy + wz, 1.0 - (xx + zz), yz - wx],
        [xz - wy, yz + wx, 1.0 - (xx + yy)],
    ]
}

/// The rotation matrix of a unit quaternion.
pub fn rotation_matrix(q: Quat) -> Mat3 {
    let r = rotation_rows(q);
    Mat3::from_cols(
        Vec3::new(r[0][0], r[1][0], r[2][0]),
        Vec3::new(r[0][1], r[1][1], r[2][1]),
        Vec3::new(r[0][2], r[1][2], r[2][2]),
    )
}

/// The unit quaternion of a rotation matrix (Shepperd's method: start from the largest of
/// `w, x, y, z`, so the square root never sees a small argument).
pub fn rotation_from_matrix(m: &Mat3) -> Quat {
    let (m00, m01, m02) = (m.x_axis.x, m.y_axis.x, m.z_axis.x);
    let (m10, m11, m12) = (m.x_axis.y, m.y_axis.y, m.z_axis.y);
    let (m20, m21, m22) = (m.x_axis.z, m.y_axis.z, m.z_axis.z);
    let trace = (m00 + m11) + m22;
    let q = if trace > 0.0 {
        let s = 2.0 * sqrt(trace + 1.0);
        let inv = recip(s);
        Quat::from_xyzw(
            (m21 - m12) * inv,
            (m02 - m20) * inv,
            (m10 - m01) * inv,
            0.25 * s,
        )
    } else if m00 > m11 && m00 > m22 {
        let s = 2.0 * sqrt(((1.0 + m00) - m11) - m22);
        let inv = recip(s);
        Quat::from_xyzw(
            0.25 * s,
            (m01 + m10) * inv,
            (m02 + m20) * inv,
            (m21 - m12) * inv,
        )
    } else if m11 > m22 {
        let s = 2.0 * sqrt(((1.0 + m11) - m00) - m22);
        let inv = recip(s);
        Quat::from_xyzw(
            (m01 + m10) * inv,
            0.25 * s,
            (m12 + m21) * inv,
            (m02 - m20) * inv,
        )
    } else {
        let s = 2.0 * sqrt(((1.0 + m22) - m00) - m11);
        let inv = recip(s);
        Quat::from_xyzw(
            (m02 + m20) * inv,
            (m12 + m21) * inv,
            0.25 * s,
            (m10 - m01) * inv,
        )
    };
    quat_normalize(q)
}

/// The model matrix `T * R * S` of a transform (scale, then rotate, then translate).
pub fn transform_matrix(transform: &Transform) -> Mat4 {
    let r = rotation_rows(transform.rotation);
    let s = transform.scale;
    let t = transform.translation;
    Mat4::from_cols(
        Vec4::new(r[0][0] * s.x, r[1][0] * s.x, r[2][0] * s.x, 0.0),
        Vec4::new(r[0][1] * s.y, r[1][1] * s.y, r[2][1] * s.y, 0.0),
        Vec4::new(r[0][2] * s.z, r[1][2] * s.z, r[2][2] * s.z, 0.0),
        Vec4::new(t.x, t.y, t.z, 1.0),
    )
}

/// The transform whose [`transform_matrix`] is `m`, for an affine `m` without shear.
///
/// A mirroring matrix (negative determinant) gives a negative `scale.x`. A column of zero length
/// gives zero scale on that axis and the rotation of the remaining axes as far as they define it.
pub fn transform_from_matrix(m: &Mat4) -> Transform {
    let columns = [
        m.x_axis.truncate(),
        m.y_axis.truncate(),
        m.z_axis.truncate(),
    ];
    let determinant = dot3(columns[0], super::vector::cross(columns[1], columns[2]));
    let mut scale = Vec3::new(length(columns[0]), length(columns[1]), length(columns[2]));
    if determinant < 0.0 {
        scale.x = -scale.x;
    }
    let unit = |column: Vec3, s: f32| {
        if s == 0.0 {
            Vec3::ZERO
        } else {
            let inv = recip(s);
            Vec3::new(column.x * inv, column.y * inv, column.z * inv)
        }
    };
    let rotation = rotation_from_matrix(&Mat3::from_cols(
        unit(columns[0], scale.x),
        unit(columns[1], scale.y),
        unit(columns[2], scale.z),
    ));
    Transform {
        translation: m.w_axis.truncate(),
        rotation,
        scale,
    }
}

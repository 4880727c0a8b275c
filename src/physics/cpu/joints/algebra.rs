//! The small linear algebra of the joint solve: the two bodies' velocities while a joint is
//! solved ([`PairVelocity`]), effective masses of 1, 2 and 3 rows, and the joint frames' axes.
//!
//! Every product and sum is spelled out in a fixed order with IEEE `+ - * /` and `sim_math`'s dot
//! and cross products, never fused and never a platform transcendental, so a joint gives the same
//! bits in every build. This module must never decide what a joint holds; `kernels` does.

use bevy::math::{Quat, Vec3};

use crate::physics::cpu::body_state::Velocity;
use crate::runtime::sim_math::{cross, dot3, quat_rotate};

/// A symmetric 3 × 3 matrix as its columns.
pub type Mat3 = [Vec3; 3];

/// `m v` for a matrix stored as rows (the solver's inverse inertia).
#[inline]
pub fn rows_mul(m: &[Vec3; 3], v: Vec3) -> Vec3 {
    Vec3::new(dot3(m[0], v), dot3(m[1], v), dot3(m[2], v))
}

/// `m v` for a matrix stored as columns.
#[inline]
pub fn columns_mul(m: &Mat3, v: Vec3) -> Vec3 {
    (m[0] * v.x + m[1] * v.y) + m[2] * v.z
}

/// `x` with `k x = b`, by Cramer's rule; zero when `k` is singular (a joint between bodies that
/// cannot move along any of its rows).
#[inline]
pub fn solve3(k: &Mat3, b: Vec3) -> Vec3 {
    let c12 = cross(k[1], k[2]);
    let det = dot3(k[0], c12);
    if !(det.is_finite() && det.abs() > f32::MIN_POSITIVE) {
        return Vec3::ZERO;
    }
    let inv = 1.0 / det;
    Vec3::new(
        dot3(b, c12) * inv,
        dot3(k[0], cross(b, k[2])) * inv,
        dot3(k[0], cross(k[1], b)) * inv,
    )
}

/// `k` with a 1 on the diagonal of each row that is exactly zero (a direction neither body can
/// move along: a lock), and which rows those were.
fn with_dead_rows_set(k: &Mat3) -> (Mat3, [bool; 3]) {
    let mut out = *k;
    let dead = [0, 1, 2].map(|r| k[r] == Vec3::ZERO);
    for (r, row) in out.iter_mut().enumerate() {
        if dead[r] {
            row[r] = 1.0;
        }
    }
    (out, dead)
}

/// `solve3` for a symmetric block whose locked directions are world axes (rows and columns of
/// zeros): the least-squares answer, with nothing along the locked directions, where `solve3`
/// would give up on the singular matrix and leave the free directions unsolved too.
pub fn solve3_locked(k: &Mat3, b: Vec3) -> Vec3 {
    let (k, dead) = with_dead_rows_set(k);
    let x = solve3(&k, b);
    let keep = |v: f32, dead: bool| if dead { 0.0 } else { v };
    Vec3::new(keep(x.x, dead[0]), keep(x.y, dead[1]), keep(x.z, dead[2]))
}

/// `inverse3` for a symmetric block whose locked directions are world axes: the pseudo-inverse,
/// zero along the locked directions.
pub fn inverse3_locked(k: &Mat3) -> [Vec3; 3] {
    let (k, dead) = with_dead_rows_set(k);
    let mut inverse = inverse3(&k);
    for (r, row) in inverse.iter_mut().enumerate() {
        if dead[r] {
            row[r] = 0.0;
        }
    }
    inverse
}

/// `solve2` for a symmetric block where a lock may leave only one direction free (in any
/// direction, not only along an axis): a block whose determinant is under a millionth of its
/// trace squared is taken as rank one, `k = t u u^T` with `t` its trace, and solved by its
/// pseudo-inverse `k / t^2`.
pub fn solve2_locked(k00: f32, k01: f32, k11: f32, b: [f32; 2]) -> [f32; 2] {
    let trace = k00 + k11;
    if !(trace.is_finite() && trace > f32::MIN_POSITIVE) {
        return [0.0, 0.0];
    }
    let det = k00 * k11 - k01 * k01;
    if det > 1.0e-6 * (trace * trace) {
        return solve2(k00, k01, k11, b);
    }
    let scale = 1.0 / (trace * trace);
    [
        (k00 * b[0] + k01 * b[1]) * scale,
        (k01 * b[0] + k11 * b[1]) * scale,
    ]
}

/// `x` with `k x = b` for a 2 × 2 matrix `[[k00, k01], [k01, k11]]`; zero when singular.
#[inline]
pub fn solve2(k00: f32, k01: f32, k11: f32, b: [f32; 2]) -> [f32; 2] {
    let det = k00 * k11 - k01 * k01;
    if !(det.is_finite() && det.abs() > f32::MIN_POSITIVE) {
        return [0.0, 0.0];
    }
    let inv = 1.0 / det;
    [
        (k11 * b[0] - k01 * b[1]) * inv,
        (k00 * b[1] - k01 * b[0]) * inv,
    ]
}

/// The inverse of a symmetric `k` as rows (its cofactor columns over the determinant), or zero
/// when `k` is singular: `rows_mul(&inverse3(&k), b)` solves `k x = b` as [`solve3`] does.
#[inline]
pub fn inverse3(k: &Mat3) -> [Vec3; 3] {
    let rows = [cross(k[1], k[2]), cross(k[2], k[0]), cross(k[0], k[1])];
    let det = dot3(k[0], rows[0]);
    if !(det.is_finite() && det.abs() > f32::MIN_POSITIVE) {
        return [Vec3::ZERO; 3];
    }
    let inv = 1.0 / det;
    rows.map(|r| r * inv)
}

/// `1 / k`, or zero when `k` is not positive (a row neither body can move along).
#[inline]
pub fn inverse_or_zero(k: f32) -> f32 {
    if k > 0.0 { 1.0 / k } else { 0.0 }
}

/// The X, Y and Z axes of a rotation.
#[inline]
pub fn axes(q: Quat) -> [Vec3; 3] {
    [
        quat_rotate(q, Vec3::X),
        quat_rotate(q, Vec3::Y),
        quat_rotate(q, Vec3::Z),
    ]
}

/// Mass properties of a joint's two bodies for the tick.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairMass {
    /// `a`'s inverse mass (0 when the joint cannot move it).
    pub inv_mass_a: f32,
    /// `b`'s inverse mass.
    pub inv_mass_b: f32,
    /// `a`'s world inverse inertia, as rows.
    pub inv_inertia_a: [Vec3; 3],
    /// `b`'s world inverse inertia, as rows.
    pub inv_inertia_b: [Vec3; 3],
    /// `Ia + Ib`, as rows: the effective mass matrix of a rotation lock.
    pub inertia_sum: [Vec3; 3],
    /// Whether either body has a locked axis (`LockedAxes`): then the linear inverse masses are
    /// per world axis, `inv_mass * free`, and the blocks are solved with `solve3_locked`,
    /// `solve2_locked` and `inverse3_locked`.
    pub locked: bool,
    /// 1 on each translation axis `a` may move along, 0 on a locked one (read where `locked`).
    pub free_a: Vec3,
    /// The same for `b`.
    pub free_b: Vec3,
}

impl PairMass {
    /// The effective mass matrix of a point constraint with arms `ra`, `rb`: the change in the
    /// anchors' relative velocity per unit impulse, `(ma + mb) P + (Ia (ra x P)) x ra + (Ib (rb x
    /// P)) x rb`, as columns.
    pub fn point(&self, ra: Vec3, rb: Vec3) -> Mat3 {
        let column = |e: Vec3| {
            let turn_a = rows_mul(&self.inv_inertia_a, cross(ra, e));
            let turn_b = rows_mul(&self.inv_inertia_b, cross(rb, e));
            (self.linear(e) + cross(turn_a, ra)) + cross(turn_b, rb)
        };
        [column(Vec3::X), column(Vec3::Y), column(Vec3::Z)]
    }

    /// The masses of two bodies, with the sum of their inverse inertias.
    pub fn new(
        inv_mass_a: f32,
        inv_inertia_a: [Vec3; 3],
        inv_mass_b: f32,
        inv_inertia_b: [Vec3; 3],
    ) -> Self {
        PairMass {
            inv_mass_a,
            inv_mass_b,
            inv_inertia_a,
            inv_inertia_b,
            inertia_sum: std::array::from_fn(|r| inv_inertia_a[r] + inv_inertia_b[r]),
            locked: false,
            free_a: Vec3::ONE,
            free_b: Vec3::ONE,
        }
    }

    /// The same masses where a body has locked axes (`locked`): `free_a` and `free_b` are 1 on
    /// each translation axis the body may move along and 0 on a locked one (a locked rotation is
    /// already in the inverse inertias).
    pub fn with_locks(mut self, free_a: Vec3, free_b: Vec3, locked: bool) -> Self {
        self.locked = locked;
        self.free_a = free_a;
        self.free_b = free_b;
        self
    }

    /// `(Ma + Mb) v`: the linear velocity change of the anchors per unit impulse `v`.
    fn linear(&self, v: Vec3) -> Vec3 {
        if self.locked {
            v * (self.free_a * self.inv_mass_a + self.free_b * self.inv_mass_b)
        } else {
            v * (self.inv_mass_a + self.inv_mass_b)
        }
    }

    /// `u . (Ia + Ib) v`.
    pub fn angular_between(&self, u: Vec3, v: Vec3) -> f32 {
        dot3(u, rows_mul(&self.inertia_sum, v))
    }

    /// `(ma + mb) u . v + (ra x u) . Ia (ra x v) + (rb x u) . Ib (rb x v)`: one entry of a
    /// linear block's effective mass.
    pub fn linear_between(&self, ra: Vec3, rb: Vec3, u: Vec3, v: Vec3) -> f32 {
        let (au, av) = (cross(ra, u), cross(ra, v));
        let (bu, bv) = (cross(rb, u), cross(rb, v));
        let linear = if self.locked {
            dot3(u, self.linear(v))
        } else {
            (self.inv_mass_a + self.inv_mass_b) * dot3(u, v)
        };
        (linear + dot3(au, rows_mul(&self.inv_inertia_a, av)))
            + dot3(bu, rows_mul(&self.inv_inertia_b, bv))
    }
}

/// The two bodies' velocities while one joint is solved.
#[derive(Clone, Copy, Debug)]
pub struct PairVelocity {
    /// `a`'s velocity.
    pub a: Velocity,
    /// `b`'s velocity.
    pub b: Velocity,
}

impl PairVelocity {
    /// The velocity of `b`'s anchor (at `rb`) relative to `a`'s (at `ra`).
    #[inline]
    pub fn point(&self, ra: Vec3, rb: Vec3) -> Vec3 {
        (self.b.linear + cross(self.b.angular, rb)) - (self.a.linear + cross(self.a.angular, ra))
    }

    /// `b`'s spin relative to `a`'s.
    #[inline]
    pub fn spin(&self) -> Vec3 {
        self.b.angular - self.a.angular
    }

    /// The rate along a linear row of direction `n` with arms `ra`, `rb`.
    #[inline]
    pub fn along(&self, ra: Vec3, rb: Vec3, n: Vec3) -> f32 {
        dot3(n, self.point(ra, rb))
    }

    /// Applies impulse `p` to `b` at `rb` and `-p` to `a` at `ra`.
    #[inline]
    pub fn push(&mut self, mass: &PairMass, ra: Vec3, rb: Vec3, p: Vec3) {
        if mass.locked {
            self.a.linear -= (p * mass.inv_mass_a) * mass.free_a;
            self.b.linear += (p * mass.inv_mass_b) * mass.free_b;
        } else {
            self.a.linear -= p * mass.inv_mass_a;
            self.b.linear += p * mass.inv_mass_b;
        }
        self.a.angular -= rows_mul(&mass.inv_inertia_a, cross(ra, p));
        self.b.angular += rows_mul(&mass.inv_inertia_b, cross(rb, p));
    }

    /// Applies angular impulse `l` to `b` and `-l` to `a`.
    #[inline]
    pub fn turn(&mut self, mass: &PairMass, l: Vec3) {
        self.a.angular -= rows_mul(&mass.inv_inertia_a, l);
        self.b.angular += rows_mul(&mass.inv_inertia_b, l);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cramer's rule solves a symmetric system, and a singular one gives zero rather than
    /// infinities. Fails if a column is swapped in `solve3`.
    #[test]
    fn small_systems_solve() {
        let k: Mat3 = [
            Vec3::new(4.0, 1.0, 0.5),
            Vec3::new(1.0, 3.0, 0.25),
            Vec3::new(0.5, 0.25, 2.0),
        ];
        let x = Vec3::new(1.0, -2.0, 3.0);
        let b = columns_mul(&k, x);
        assert!(solve3(&k, b).distance(x) < 1e-5);
        assert!(rows_mul(&inverse3(&k), b).distance(x) < 1e-5);
        assert_eq!(solve3(&[Vec3::ZERO; 3], b), Vec3::ZERO);
        assert_eq!(inverse3(&[Vec3::ZERO; 3]), [Vec3::ZERO; 3]);
        let y = solve2(4.0, 1.0, 3.0, [2.0, -1.0]);
        assert!((4.0 * y[0] + y[1] - 2.0).abs() < 1e-6);
        assert!((y[0] + 3.0 * y[1] + 1.0).abs() < 1e-6);
        assert_eq!(solve2(0.0, 0.0, 0.0, [1.0, 1.0]), [0.0, 0.0]);
    }
}

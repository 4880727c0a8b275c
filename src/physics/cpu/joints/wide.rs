//! The plain joints four at a time: ball joints without a cone and hinges without limits or a
//! motor, the joints chains, bridges and grids are made of, solved in SIMD lanes like the
//! contacts.
//!
//! [`WideJoints::build`] packs each colour's plain joints (which `prepare` puts first in the colour)
//! four to a [`WideJoint`], every field as [`Lanes`]; the rest of the colour runs one joint at a time
//! (`kernels`). A lane runs exactly the rows its scalar joint would: the anchors' three rows, and
//! for a hinge the two rows that keep the axes aligned (a mask turns them off for ball joints).
//! Lanes of a batch never share a moving body (the colouring), so the order of the batches within
//! a colour cannot change a bit and a large colour's batches may run on several threads. Empty
//! lanes point at the spare velocity slot and carry no mass, so they change nothing.
//!
//! All arithmetic is `lanes`' IEEE operations in a fixed order. This module must never decide
//! which joints run together.

use std::ops::Range;

use rayon::prelude::*;

use super::Prepared;
use super::kernels::JointPass;
use crate::physics::cpu::body_state::{Displacement, Velocity};
use crate::physics::cpu::lanes::{LANES, LaneVec3, Lanes, Mask};
use crate::physics::cpu::shared_velocities::SharedVelocities;
use crate::physics::joint::{JointKind, Motor};

/// Batches handed to one parallel task.
const BATCHES_PER_TASK: usize = 8;

/// Whether a joint runs in the lanes: a ball joint without a cone or twist limits, a hinge
/// without limits or a motor.
pub fn is_plain(kind: &JointKind) -> bool {
    matches!(
        kind,
        JointKind::Spherical {
            cone: None,
            twist: None
        } | JointKind::Revolute {
            limits: None,
            motor: Motor::Off
        }
    )
}

/// Four plain joints of one colour.
#[derive(Clone, Copy, Debug, Default)]
pub struct WideJoint {
    /// Each lane's joint in `JointScratch::prepared` (`u32::MAX` for an empty lane).
    pub joints: [u32; LANES],
    /// Each lane's first body slot.
    pub a: [u32; LANES],
    /// Each lane's second body slot.
    pub b: [u32; LANES],
    inv_mass_a: Lanes,
    inv_mass_b: Lanes,
    inv_inertia_a: [LaneVec3; 3],
    inv_inertia_b: [LaneVec3; 3],
    ra: LaneVec3,
    rb: LaneVec3,
    delta_center: LaneVec3,
    axes_a: [LaneVec3; 3],
    x_b: LaneVec3,
    hinge_mass: [Lanes; 3],
    /// Lanes that are hinges.
    hinge: Mask,
    /// Accumulated impulses.
    linear: LaneVec3,
    angular: LaneVec3,
}

/// One tick's plain joints in SIMD layout (scratch).
#[derive(Default)]
pub struct WideJoints {
    batches: Vec<WideJoint>,
    /// Per colour, its batches: a range of `batches`.
    spans: Vec<Range<usize>>,
}

/// The lanes of `f` over four prepared joints (zero in empty lanes).
fn lanes(joints: &[Option<&Prepared>; LANES], f: impl Fn(&Prepared) -> f32) -> Lanes {
    Lanes::from_array(joints.map(|p| p.map_or(0.0, &f)))
}

fn lane_vec(
    joints: &[Option<&Prepared>; LANES],
    f: impl Fn(&Prepared) -> bevy::math::Vec3,
) -> LaneVec3 {
    LaneVec3::from_vecs(joints.map(|p| p.map_or(bevy::math::Vec3::ZERO, &f)))
}

/// `m v` for a matrix of rows.
#[inline(always)]
fn rows_mul(m: &[LaneVec3; 3], v: LaneVec3) -> LaneVec3 {
    LaneVec3 {
        x: m[0].dot(v),
        y: m[1].dot(v),
        z: m[2].dot(v),
    }
}

/// Where four bodies have moved since the start of the tick: translation and rotation columns.
#[inline(always)]
fn gather_moves(displacements: &[Displacement], bodies: [u32; LANES]) -> (LaneVec3, [LaneVec3; 3]) {
    let d = bodies.map(|i| &displacements[i as usize]);
    (
        LaneVec3::from_vecs(d.map(|d| d.position)),
        [
            LaneVec3::from_vecs(d.map(|d| d.matrix[0])),
            LaneVec3::from_vecs(d.map(|d| d.matrix[1])),
            LaneVec3::from_vecs(d.map(|d| d.matrix[2])),
        ],
    )
}

/// `m r` for rotation columns `m`.
#[inline(always)]
fn turned(m: &[LaneVec3; 3], r: LaneVec3) -> LaneVec3 {
    (m[0].scale(r.x) + m[1].scale(r.y)) + m[2].scale(r.z)
}

/// Where a determinant is usable: finite and not vanishingly small.
#[inline(always)]
fn usable(det: Lanes) -> Mask {
    let size = det.abs();
    size.gt(Lanes::splat(f32::MIN_POSITIVE))
        .and(Lanes::splat(f32::INFINITY).gt(size))
}

/// The two bodies' velocities of every lane while a batch is solved.
struct Pair {
    va: LaneVec3,
    wa: LaneVec3,
    vb: LaneVec3,
    wb: LaneVec3,
}

impl Pair {
    #[inline(always)]
    fn gather(v: SharedVelocities<'_>, w: &WideJoint) -> Pair {
        let (va, wa) = v.gather(w.a);
        let (vb, wb) = v.gather(w.b);
        Pair { va, wa, vb, wb }
    }

    #[inline(always)]
    fn scatter(&self, v: SharedVelocities<'_>, w: &WideJoint) {
        v.scatter(w.a, w.inv_mass_a, self.va, self.wa);
        v.scatter(w.b, w.inv_mass_b, self.vb, self.wb);
    }

    /// Impulse `p` on `b` at `rb`, `-p` on `a` at `ra`.
    #[inline(always)]
    fn push(&mut self, w: &WideJoint, ra: LaneVec3, rb: LaneVec3, p: LaneVec3) {
        self.va -= p.scale(w.inv_mass_a);
        self.wa -= rows_mul(&w.inv_inertia_a, ra.cross(p));
        self.vb += p.scale(w.inv_mass_b);
        self.wb += rows_mul(&w.inv_inertia_b, rb.cross(p));
    }

    /// Angular impulse `l` on `b`, `-l` on `a`.
    #[inline(always)]
    fn turn(&mut self, w: &WideJoint, l: LaneVec3) {
        self.wa -= rows_mul(&w.inv_inertia_a, l);
        self.wb += rows_mul(&w.inv_inertia_b, l);
    }

    /// `b`'s anchor's velocity relative to `a`'s.
    #[inline(always)]
    fn point(&self, ra: LaneVec3, rb: LaneVec3) -> LaneVec3 {
        (self.vb + self.wb.cross(rb)) - (self.va + self.wa.cross(ra))
    }
}

impl WideJoints {
    /// Packs the plain joints of each colour, `prepared[spans[c].start..plain_ends[c]]`, four to
    /// a batch; `spare` is the velocity slot of empty lanes.
    pub fn build(
        &mut self,
        prepared: &[Prepared],
        spans: &[Range<usize>],
        plain_ends: &[usize],
        spare: u32,
    ) {
        self.batches.clear();
        self.spans.clear();
        for (span, &end) in spans.iter().zip(plain_ends) {
            let start = self.batches.len();
            for (chunk_start, chunk) in (span.start..end)
                .step_by(LANES)
                .map(|i| (i, &prepared[i..end.min(i + LANES)]))
            {
                let joints: [Option<&Prepared>; LANES] = std::array::from_fn(|l| chunk.get(l));
                let hinge =
                    joints.map(|p| p.is_some_and(|p| matches!(p.kind, JointKind::Revolute { .. })));
                let row = |r: usize, of_b: bool| {
                    lane_vec(&joints, |p| {
                        if of_b {
                            p.mass.inv_inertia_b[r]
                        } else {
                            p.mass.inv_inertia_a[r]
                        }
                    })
                };
                self.batches.push(WideJoint {
                    joints: std::array::from_fn(|l| {
                        if l < chunk.len() {
                            (chunk_start + l) as u32
                        } else {
                            u32::MAX
                        }
                    }),
                    a: joints.map(|p| p.map_or(spare, |p| p.a)),
                    b: joints.map(|p| p.map_or(spare, |p| p.b)),
                    inv_mass_a: lanes(&joints, |p| p.mass.inv_mass_a),
                    inv_mass_b: lanes(&joints, |p| p.mass.inv_mass_b),
                    inv_inertia_a: [row(0, false), row(1, false), row(2, false)],
                    inv_inertia_b: [row(0, true), row(1, true), row(2, true)],
                    ra: lane_vec(&joints, |p| p.ra),
                    rb: lane_vec(&joints, |p| p.rb),
                    delta_center: lane_vec(&joints, |p| p.delta_center),
                    axes_a: std::array::from_fn(|k| lane_vec(&joints, |p| p.axes_a[k])),
                    x_b: lane_vec(&joints, |p| p.x_b),
                    // Ball joints' lanes get an identity block, so that their (masked) hinge rows
                    // stay finite.
                    hinge_mass: [
                        Lanes::from_array(std::array::from_fn(|l| match joints[l] {
                            Some(p) if hinge[l] => p.hinge_mass[0],
                            _ => 1.0,
                        })),
                        lanes(&joints, |p| p.hinge_mass[1]),
                        Lanes::from_array(std::array::from_fn(|l| match joints[l] {
                            Some(p) if hinge[l] => p.hinge_mass[2],
                            _ => 1.0,
                        })),
                    ],
                    hinge: Mask::from_flags(hinge),
                    linear: lane_vec(&joints, |p| p.impulses.linear),
                    angular: lane_vec(&joints, |p| p.impulses.angular),
                });
            }
            self.spans.push(start..self.batches.len());
        }
    }

    /// Copies every lane's accumulated impulses back to its prepared joint.
    pub fn write_back(&self, prepared: &mut [Prepared]) {
        for w in &self.batches {
            let (linear, angular) = (w.linear.to_vecs(), w.angular.to_vecs());
            for l in 0..LANES {
                if let Some(p) = prepared.get_mut(w.joints[l] as usize) {
                    p.impulses.linear = linear[l];
                    p.impulses.angular = angular[l];
                }
            }
        }
    }

    /// Runs `kernel` on every batch of `colour`, on several threads when `parallel`.
    fn for_each(
        &mut self,
        colour: usize,
        parallel: bool,
        velocities: &mut [Velocity],
        kernel: impl Fn(&mut WideJoint, SharedVelocities<'_>) + Sync,
    ) {
        let Some(span) = self.spans.get(colour).cloned() else {
            return;
        };
        if span.is_empty() {
            return;
        }
        let shared = SharedVelocities::new(velocities);
        let batches = &mut self.batches[span];
        if parallel && rayon::current_num_threads() > 1 {
            batches
                .par_iter_mut()
                .with_min_len(BATCHES_PER_TASK)
                .for_each(|w| {
                    crate::runtime::guard_worker(|| {
                        "before a parallel pass of the joint solver".to_owned()
                    });
                    kernel(w, shared);
                });
        } else {
            batches.iter_mut().for_each(|w| kernel(w, shared));
        }
    }

    /// Applies the accumulated impulses of `colour`'s batches.
    pub fn warm_start(
        &mut self,
        colour: usize,
        parallel: bool,
        velocities: &mut [Velocity],
        displacements: &[Displacement],
    ) {
        self.for_each(colour, parallel, velocities, |w, v| {
            let (_, ma) = gather_moves(displacements, w.a);
            let (_, mb) = gather_moves(displacements, w.b);
            let (ra, rb) = (turned(&ma, w.ra), turned(&mb, w.rb));
            let mut pair = Pair::gather(v, w);
            pair.turn(w, w.angular);
            pair.push(w, ra, rb, w.linear);
            pair.scatter(v, w);
        });
    }

    /// One velocity pass over `colour`'s batches.
    pub fn solve(
        &mut self,
        colour: usize,
        parallel: bool,
        velocities: &mut [Velocity],
        displacements: &[Displacement],
        pass: &JointPass,
    ) {
        let (bias, mass_scale, impulse_scale) = if pass.use_bias {
            (
                pass.soft.bias_rate,
                pass.soft.mass_scale,
                pass.soft.impulse_scale,
            )
        } else {
            (0.0, 1.0, 0.0)
        };
        let (bias, mass_scale, impulse_scale) = (
            Lanes::splat(bias),
            Lanes::splat(mass_scale),
            Lanes::splat(impulse_scale),
        );
        self.for_each(colour, parallel, velocities, |w, v| {
            let (pa, ma) = gather_moves(displacements, w.a);
            let (pb, mb) = gather_moves(displacements, w.b);
            let (ra, rb) = (turned(&ma, w.ra), turned(&mb, w.rb));
            let d = ((pb - pa) + (rb - ra)) + w.delta_center;
            let mut pair = Pair::gather(v, w);

            // A hinge's two rows across its axis.
            let x = turned(&ma, w.axes_a[0]);
            let y = turned(&ma, w.axes_a[1]);
            let z = turned(&ma, w.axes_a[2]);
            let e = x.cross(turned(&mb, w.x_b));
            let spin = pair.wb - pair.wa;
            let rhs_y = y.dot(spin) + bias * y.dot(e);
            let rhs_z = z.dot(spin) + bias * z.dot(e);
            let [kyy, kyz, kzz] = w.hinge_mass;
            let det = kyy * kzz - kyz * kyz;
            let ok = usable(det).and(w.hinge);
            let inv = ok.select(Lanes::splat(1.0) / det, Lanes::ZERO);
            let ly = (kzz * rhs_y - kyz * rhs_z) * inv;
            let lz = (kyy * rhs_z - kyz * rhs_y) * inv;
            let acc = w.angular;
            let impulse = y.scale(-mass_scale * ly - impulse_scale * y.dot(acc))
                + z.scale(-mass_scale * lz - impulse_scale * z.dot(acc));
            let impulse = w.hinge.select3(impulse, LaneVec3::ZERO);
            w.angular += impulse;
            pair.turn(w, impulse);

            // The anchors' three rows, with the current arms.
            let k = point_mass(w, ra, rb);
            let rhs = pair.point(ra, rb) + d.scale(bias);
            let solved = solve3(&k, rhs);
            let impulse = solved.scale(-mass_scale) - w.linear.scale(impulse_scale);
            w.linear += impulse;
            pair.push(w, ra, rb, impulse);
            pair.scatter(v, w);
        });
    }
}

/// The point constraint's effective mass, as columns (`PairMass::point` in lanes).
#[inline(always)]
fn point_mass(w: &WideJoint, ra: LaneVec3, rb: LaneVec3) -> [LaneVec3; 3] {
    let masses = w.inv_mass_a + w.inv_mass_b;
    let unit = |k: usize| {
        let (one, zero) = (Lanes::splat(1.0), Lanes::ZERO);
        match k {
            0 => LaneVec3 {
                x: one,
                y: zero,
                z: zero,
            },
            1 => LaneVec3 {
                x: zero,
                y: one,
                z: zero,
            },
            _ => LaneVec3 {
                x: zero,
                y: zero,
                z: one,
            },
        }
    };
    std::array::from_fn(|k| {
        let e = unit(k);
        let turn_a = rows_mul(&w.inv_inertia_a, ra.cross(e));
        let turn_b = rows_mul(&w.inv_inertia_b, rb.cross(e));
        (e.scale(masses) + turn_a.cross(ra)) + turn_b.cross(rb)
    })
}

/// `x` with `k x = b` by Cramer's rule, zero in lanes where `k` is singular.
#[inline(always)]
fn solve3(k: &[LaneVec3; 3], b: LaneVec3) -> LaneVec3 {
    let c12 = k[1].cross(k[2]);
    let det = k[0].dot(c12);
    let inv = usable(det).select(Lanes::splat(1.0) / det, Lanes::ZERO);
    LaneVec3 {
        x: b.dot(c12) * inv,
        y: k[0].dot(b.cross(k[2])) * inv,
        z: k[0].dot(k[1].cross(b)) * inv,
    }
}

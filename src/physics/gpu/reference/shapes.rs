//! The contact tests of the CPU reference, operation for operation those of
//! `src/shaders/physics_shapes.glsl`.
//!
//! This module owns [`contact`] (a GPU body A against a shape B: whether they overlap, the unit
//! normal that moves A out, and the depth) and the shape helpers the contact pass needs
//! ([`bounding_radius`]). Each function mirrors the GLSL function of the same name without its
//! `shape_` prefix; a change to either must be made to both, and the GPU tests compare their bits
//! (`gpu_step_matches_the_cpu_reference_bit_for_bit`). It must never compute in another order
//! than the shader.

use super::float::{F, M3, V3};
use crate::physics::gpu::physics_layout::{
    SHAPE_BOX, SHAPE_CAPSULE, SHAPE_HALF_SPACE, SHAPE_SPHERE,
};

/// Cross axes shorter than this (squared) are parallel edges and skipped.
const PARALLEL_EPSILON: F = F(1.0e-6);
/// An edge axis wins over the best face axis only when it overlaps less by this factor.
const EDGE_BIAS: F = F(0.95);

/// A body's shape as the contact tests see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Posed {
    pub shape: u32,
    pub params: V3,
    pub rotation: M3,
    pub centre: V3,
}

/// Where and how deep two shapes overlap.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Touch {
    /// Unit, from B to A: the direction that separates A.
    pub normal: V3,
    /// Metres of overlap along the normal.
    pub depth: F,
    /// The point the contact acts at (the middle of the overlap, or the depth-weighted centre of
    /// the box corners inside the other shape).
    pub point: V3,
}

/// Corners up to this far outside the other shape along the normal still weigh in the contact
/// point, their weight growing linearly with depth from zero here. Without the band, a box lying
/// flat would move its contact point from one edge to the other with the slightest tilt.
const CORNER_BAND: F = F(0.02);

/// The radius of the sphere around the centre that holds the whole shape.
pub(crate) fn bounding_radius(shape: u32, params: V3) -> F {
    if shape == SHAPE_SPHERE {
        return params.x;
    }
    if shape == SHAPE_BOX {
        return params.length();
    }
    params.x + params.y
}

/// Half the extent of the shape along the unit direction `n`.
pub(crate) fn support(shape: u32, params: V3, rotation: &M3, n: V3) -> F {
    if shape == SHAPE_SPHERE {
        return params.x;
    }
    if shape == SHAPE_CAPSULE {
        let along = rotation.0[1].dot(n).abs();
        return along * params.x + params.y;
    }
    let e0 = rotation.0[0].dot(n).abs();
    let e1 = rotation.0[1].dot(n).abs();
    let e2 = rotation.0[2].dot(n).abs();
    (e0 * params.x + e1 * params.y) + e2 * params.z
}

/// The segment and radius of a sphere or capsule.
fn segment(body: &Posed) -> (V3, V3, F) {
    if body.shape == SHAPE_SPHERE {
        return (body.centre, body.centre, body.params.x);
    }
    let half_axis = body.rotation.0[1].scale(body.params.x);
    let top = body.centre + half_axis;
    let bottom = body.centre - half_axis;
    (bottom, top, body.params.y)
}

/// The point of segment `[a, b]` nearest `p`.
fn closest_on_segment(a: V3, b: V3, p: V3) -> V3 {
    let ab = b - a;
    let len2 = ab.dot(ab);
    if !(len2.0 > 0.0) {
        return a;
    }
    let ap = p - a;
    let along = ap.dot(ab);
    let t = along.div(len2).clamp(F::ZERO, F::ONE);
    a + ab.scale(t)
}

/// The nearest points of segments `[p1, q1]` and `[p2, q2]` (Ericson, Real-Time Collision
/// Detection 5.1.9).
fn closest_segments(p1: V3, q1: V3, p2: V3, q2: V3) -> (V3, V3) {
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let a = d1.dot(d1);
    let e = d2.dot(d2);
    let f = d2.dot(r);
    let mut s = F::ZERO;
    let mut t = F::ZERO;
    if !(a.0 > 0.0) && !(e.0 > 0.0) {
        return (p1, p2);
    }
    if !(a.0 > 0.0) {
        t = f.div(e).clamp(F::ZERO, F::ONE);
    } else {
        let c = d1.dot(r);
        if !(e.0 > 0.0) {
            s = (-c).div(a).clamp(F::ZERO, F::ONE);
        } else {
            let b = d1.dot(d2);
            let denom = a * e - b * b;
            if denom.0 > 0.0 {
                let num = b * f - c * e;
                s = num.div(denom).clamp(F::ZERO, F::ONE);
            }
            let tnom = b * s + f;
            if tnom.0 < 0.0 {
                t = F::ZERO;
                s = (-c).div(a).clamp(F::ZERO, F::ONE);
            } else if tnom.0 > e.0 {
                t = F::ONE;
                s = (b - c).div(a).clamp(F::ZERO, F::ONE);
            } else {
                t = tnom.div(e);
            }
        }
    }
    (p1 + d1.scale(s), p2 + d2.scale(t))
}

/// The middle of the overlap of a ball (centre `p`, radius `r`) pushed out along `normal`.
fn ball_point(p: V3, r: F, normal: V3, depth: F) -> V3 {
    let half = depth * F(0.5);
    p - normal.scale(r - half)
}

/// Two balls; coincident centres separate along +Y.
fn balls(pa: V3, ra: F, pb: V3, rb: F) -> Option<Touch> {
    let d = pa - pb;
    let dist = d.length();
    let reach = ra + rb;
    let overlap = reach - dist;
    if !(overlap.0 > 0.0) {
        return None;
    }
    let mut normal = V3::UP;
    if dist.0 > 0.0 {
        normal = d.scale(dist.recip());
    }
    Some(Touch {
        normal,
        depth: overlap,
        point: ball_point(pa, ra, normal, overlap),
    })
}

/// A box's local coordinates of the world point `p`.
fn box_local(p: V3, rotation: &M3, centre: V3) -> V3 {
    let d = p - centre;
    V3::new(
        d.dot(rotation.0[0]),
        d.dot(rotation.0[1]),
        d.dot(rotation.0[2]),
    )
}

/// A ball (centre `p`, radius `r`) against a box; the normal pushes the ball out of the box.
fn ball_box(p: V3, r: F, half_extents: V3, rotation: &M3, centre: V3) -> Option<Touch> {
    let local = box_local(p, rotation, centre);
    let clamped = local.clamp(-half_extents, half_extents);
    if clamped.equals(local) {
        // The centre is inside: leave through the nearest face.
        let gap = half_extents - local.abs();
        let mut axis = 0;
        let mut best = gap.x;
        if gap.y.0 < best.0 {
            axis = 1;
            best = gap.y;
        }
        if gap.z.0 < best.0 {
            axis = 2;
            best = gap.z;
        }
        let side = if local.get(axis).0 < 0.0 {
            F(-1.0)
        } else {
            F::ONE
        };
        let normal = rotation.0[axis].scale(side);
        let depth = best + r;
        return Some(Touch {
            normal,
            depth,
            point: ball_point(p, r, normal, depth),
        });
    }
    let surface = centre + rotation.mul_vec(clamped);
    let away = p - surface;
    let dist = away.length();
    let overlap = r - dist;
    if !(overlap.0 > 0.0) || !(dist.0 > 0.0) {
        return None;
    }
    let normal = away.scale(dist.recip());
    Some(Touch {
        normal,
        depth: overlap,
        point: ball_point(p, r, normal, overlap),
    })
}

/// The point of a box (in the world) nearest `p`.
fn box_closest(p: V3, half_extents: V3, rotation: &M3, centre: V3) -> V3 {
    let local = box_local(p, rotation, centre);
    let clamped = local.clamp(-half_extents, half_extents);
    centre + rotation.mul_vec(clamped)
}

/// A sphere or capsule (segment `[a, b]`, radius `r`) against a box.
fn segment_box(a: V3, b: V3, r: F, half_extents: V3, rotation: &M3, centre: V3) -> Option<Touch> {
    let p = closest_on_segment(a, b, centre);
    let q = box_closest(p, half_extents, rotation, centre);
    let p2 = closest_on_segment(a, b, q);
    ball_box(p2, r, half_extents, rotation, centre)
}

/// Overlap of two boxes along the unit axis `n`; negative when `n` separates them.
fn box_overlap(n: V3, d: V3, a: &Posed, b: &Posed) -> F {
    let ea = support(SHAPE_BOX, a.params, &a.rotation, n);
    let eb = support(SHAPE_BOX, b.params, &b.rotation, n);
    let dist = d.dot(n).abs();
    (ea + eb) - dist
}

/// Two boxes by the separating-axis test: face axes, then the nine edge cross products.
fn boxes(a: &Posed, b: &Posed) -> Option<Touch> {
    let d = a.centre - b.centre;
    let mut best_axis = V3::UP;
    let mut best = F::ZERO;
    let mut found = false;
    for i in 0..6 {
        // B's faces first: a body resting on another settles on the lower body's face, and
        // A's own faces win only when they overlap clearly less (a tilted box on a wide one
        // would otherwise be pushed along its own tilted axis and creep).
        let n = if i < 3 {
            b.rotation.0[i]
        } else {
            a.rotation.0[i - 3]
        };
        let overlap = box_overlap(n, d, a, b);
        if !(overlap.0 > 0.0) {
            return None;
        }
        let wins = if i < 3 {
            !found || overlap.0 < best.0
        } else {
            overlap.0 < (best * EDGE_BIAS).0
        };
        if wins {
            found = true;
            best = overlap;
            best_axis = n;
        }
    }
    let face_best = best * EDGE_BIAS;
    for i in 0..3 {
        for j in 0..3 {
            let c = a.rotation.0[i].cross(b.rotation.0[j]);
            let len2 = c.dot(c);
            if !(len2.0 > PARALLEL_EPSILON.0) {
                continue;
            }
            let n = c.normalize();
            let overlap = box_overlap(n, d, a, b);
            if !(overlap.0 > 0.0) {
                return None;
            }
            if overlap.0 < face_best.0 && overlap.0 < best.0 {
                best = overlap;
                best_axis = n;
            }
        }
    }
    let side = d.dot(best_axis);
    let normal = if side.0 < 0.0 { -best_axis } else { best_axis };
    Some(Touch {
        normal,
        depth: best,
        point: box_pair_point(a, b, normal),
    })
}

/// Corner `k` (0..8) of a box: bit 0, 1, 2 of `k` pick the + side of the local x, y, z axis.
pub(crate) fn corner(body: &Posed, k: u32) -> V3 {
    let pick = |bit: u32, half: F| if k & bit != 0 { half } else { -half };
    let local = V3::new(
        pick(1, body.params.x),
        pick(2, body.params.y),
        pick(4, body.params.z),
    );
    body.centre + body.rotation.mul_vec(local)
}

/// The point of a box pair's contact: each box's corners that are past (or within
/// `CORNER_BAND` of) the other's face along the normal, moved to the nearest point of the other box
/// (so a corner that overhangs counts where the faces still meet), weighted by how far past they
/// are. A box resting on a wider one, or overhanging a narrower one, is held where the two faces
/// overlap.
fn box_pair_point(a: &Posed, b: &Posed, normal: V3) -> V3 {
    let face_b = b.centre.dot(normal) + support(SHAPE_BOX, b.params, &b.rotation, normal);
    let face_a = a.centre.dot(normal) - support(SHAPE_BOX, a.params, &a.rotation, normal);
    let mut sum = V3::ZERO;
    let mut weight = F::ZERO;
    for k in 0..8 {
        let v = corner(a, k);
        let past = (face_b - v.dot(normal)) + CORNER_BAND;
        if past.0 > 0.0 {
            let held = box_closest(v, b.params, &b.rotation, b.centre);
            sum = sum + held.scale(past);
            weight = weight + past;
        }
        let w = corner(b, k);
        let past = (w.dot(normal) - face_a) + CORNER_BAND;
        if past.0 > 0.0 {
            let held = box_closest(w, a.params, &a.rotation, a.centre);
            sum = sum + held.scale(past);
            weight = weight + past;
        }
    }
    if weight.0 > 0.0 {
        return sum.scale(weight.recip());
    }
    // Unreachable for overlapping boxes (the deepest corner is always past); kept total.
    (a.centre + b.centre).scale(F(0.5))
}

/// A shape against a half-space through `origin` with the world normal `plane`.
fn half_space(a: &Posed, plane: V3, origin: V3) -> Option<Touch> {
    let offset = a.centre - origin;
    let height = offset.dot(plane);
    let extent = support(a.shape, a.params, &a.rotation, plane);
    let overlap = extent - height;
    if !(overlap.0 > 0.0) {
        return None;
    }
    Some(Touch {
        normal: plane,
        depth: overlap,
        point: half_space_point(a, plane, origin, extent, overlap),
    })
}

/// The point of a contact with a half-space: the middle of the overlap under a sphere, under
/// each of a capsule's end spheres and at each box corner below the plane, the ends and corners
/// weighted by their depth.
fn half_space_point(a: &Posed, plane: V3, origin: V3, extent: F, overlap: F) -> V3 {
    let mut sum = V3::ZERO;
    let mut weight = F::ZERO;
    if a.shape == SHAPE_BOX {
        for k in 0..8 {
            let v = corner(a, k);
            let depth = CORNER_BAND - (v - origin).dot(plane);
            if depth.0 > 0.0 {
                sum = sum + v.scale(depth);
                weight = weight + depth;
            }
        }
    } else if a.shape == SHAPE_CAPSULE {
        let (bottom, top, radius) = segment(a);
        for end in [bottom, top] {
            let lowest = end - plane.scale(radius);
            let depth = CORNER_BAND - (lowest - origin).dot(plane);
            if depth.0 > 0.0 {
                sum = sum + lowest.scale(depth);
                weight = weight + depth;
            }
        }
    }
    if weight.0 > 0.0 {
        return sum.scale(weight.recip());
    }
    // A sphere (or no corner below the plane after rounding): under the centre.
    ball_point(a.centre, extent, plane, overlap)
}

/// Whether GPU body `a` (sphere, box or capsule) overlaps `b` (any shape), with the normal that
/// moves `a` out (from `b` to `a`) and the depth.
pub(crate) fn contact(a: &Posed, b: &Posed) -> Option<Touch> {
    if b.shape == SHAPE_HALF_SPACE {
        let plane = b.rotation.mul_vec(b.params).normalize();
        return half_space(a, plane, b.centre);
    }
    if a.shape == SHAPE_BOX && b.shape == SHAPE_BOX {
        return boxes(a, b);
    }
    if a.shape == SHAPE_BOX || b.shape == SHAPE_BOX {
        let a_is_box = a.shape == SHAPE_BOX;
        let (round, boxed) = if a_is_box { (b, a) } else { (a, b) };
        let (a1, b1, r1) = segment(round);
        let touch = segment_box(a1, b1, r1, boxed.params, &boxed.rotation, boxed.centre)?;
        return Some(Touch {
            normal: if a_is_box {
                -touch.normal
            } else {
                touch.normal
            },
            ..touch
        });
    }
    let (a1, b1, r1) = segment(a);
    let (a2, b2, r2) = segment(b);
    let (c1, c2) = closest_segments(a1, b1, a2, b2);
    balls(c1, r1, c2, r2)
}

//! Narrow phase: the contact points of each candidate pair.
//!
//! Every pair gets a [`Manifold`] of up to four points, each with a normal pointing from the pair's
//! first body to its second, the signed separation along it (negative when overlapping), the point
//! halfway between the two surfaces, and a feature id that stays the same while the same parts of
//! the shapes touch (the solver warm-starts by it). Points are generated up to the pair's margin
//! before touching (speculative contacts), so the solver can stop fast bodies at the surface.
//!
//! Shape pairs: sphere-sphere, sphere-box (see [`super::sphere_box`]), box-box (see
//! [`super::box_box`]), capsule against every shape, every shape against a half-space, and every
//! shape against a level mesh (see [`super::mesh_contacts`]). Pairs are independent, so they run in parallel and
//! are collected in pair order. This module must never touch velocities or impulses.

use bevy::math::Vec3;
use rayon::prelude::*;

use crate::runtime::guard_worker;

pub use super::manifold::{
    ContactPoint, MAX_POINTS, Manifold, Placed, closest_between_segments, closest_on_segment,
};
pub use super::sphere_box::box_sphere;
use super::{Motion, SolverBody, StepParams, box_box, math, mesh_contacts};
use crate::physics::components::Shape;
use crate::physics::level::LevelMeshes;
use crate::runtime::sim_math::dot3;

/// Pairs handed to one parallel task: fixed, whatever the thread count.
const PAIRS_PER_TASK: usize = 64;

/// Computes a manifold for every pair that has an awake dynamic body, in pair order.
pub fn collide_pairs(
    params: &StepParams,
    bodies: &[SolverBody],
    motion: &[Motion],
    pairs: &[(u32, u32)],
    manifolds: &mut Vec<Manifold>,
) {
    let speculative = params.settings.speculative_distance;
    let dt = params.dt;
    pairs
        .par_iter()
        .with_min_len(PAIRS_PER_TASK)
        .map_init(
            || guard_worker(|| "before the narrow phase".to_owned()),
            |_, &(a, b)| {
                let (body_a, body_b) = (&bodies[a as usize], &bodies[b as usize]);
                let mut manifold = Manifold {
                    a,
                    b,
                    ..Manifold::default()
                };
                if !(body_a.is_awake_dynamic() || body_b.is_awake_dynamic()) {
                    return manifold;
                }
                manifold.evaluated = true;
                let approach = math::length(body_a.linear_velocity - body_b.linear_velocity) * dt;
                let margin = speculative + approach;
                let placed = |body: &SolverBody, m: &Motion| Placed {
                    shape: body.collider.shape,
                    position: body.position,
                    axes: m.axes,
                };
                collide(
                    &placed(body_a, &motion[a as usize]),
                    &placed(body_b, &motion[b as usize]),
                    margin,
                    &params.meshes,
                    &mut manifold,
                );
                let len = manifold.len as usize;
                manifold.points[..len].sort_unstable_by_key(|p| p.feature);
                manifold
            },
        )
        .collect_into_vec(manifolds);
}

/// The contact points of `a` against `b`, normals from `a` to `b` (a mesh missing from `meshes`
/// touches nothing).
pub fn collide(a: &Placed, b: &Placed, margin: f32, meshes: &LevelMeshes, out: &mut Manifold) {
    use Shape::*;
    match (a.shape, b.shape) {
        (Mesh { .. }, Mesh { .. }) => {}
        (Mesh { mesh }, _) => {
            if let Some(mesh) = meshes.get(mesh) {
                mesh_contacts::mesh_any(a, mesh, b, margin, out);
            }
        }
        (_, Mesh { .. }) => {
            let mut flipped = Manifold::default();
            collide(b, a, margin, meshes, &mut flipped);
            push_flipped(&flipped, out);
        }
        (Sphere { radius: ra }, Sphere { radius: rb }) => {
            sphere_sphere(a.position, ra, b.position, rb, margin, 0, out)
        }
        (Box { half_extents }, Sphere { radius }) => {
            box_sphere(a, half_extents, b.position, radius, margin, 0, out)
        }
        (Box { .. }, Box { .. }) => box_box::collide(a, b, margin, out),
        (
            Capsule {
                half_height,
                radius,
            },
            _,
        ) => capsule_any(a, half_height, radius, b, margin, out),
        (HalfSpace { normal }, _) => half_space_any(a, normal, b, margin, out),
        _ => {
            // The mirrored pair: collide the other way round and flip the normals.
            let mut flipped = Manifold::default();
            collide(b, a, margin, meshes, &mut flipped);
            push_flipped(&flipped, out);
        }
    }
}

/// Two balls (also the capsule cases, through their closest segment points).
pub fn sphere_sphere(
    ca: Vec3,
    ra: f32,
    cb: Vec3,
    rb: f32,
    margin: f32,
    feature: u32,
    out: &mut Manifold,
) {
    let (normal, distance) = math::direction_or(cb - ca, Vec3::Y);
    let separation = distance - (ra + rb);
    if separation > margin {
        return;
    }
    let on_a = ca + normal * ra;
    let on_b = cb - normal * rb;
    out.push(ContactPoint {
        point: (on_a + on_b) * 0.5,
        normal,
        separation,
        feature,
    });
}

/// The end points of a capsule's axis segment.
fn segment(p: &Placed, half_height: f32) -> (Vec3, Vec3) {
    let offset = p.axes[1] * half_height;
    (p.position - offset, p.position + offset)
}

/// A capsule (`a`) against any shape.
fn capsule_any(
    a: &Placed,
    half_height: f32,
    radius: f32,
    b: &Placed,
    margin: f32,
    out: &mut Manifold,
) {
    let (p0, p1) = segment(a, half_height);
    match b.shape {
        Shape::Sphere { radius: rb } => {
            let (on_axis, _) = closest_on_segment(p0, p1, b.position);
            sphere_sphere(on_axis, radius, b.position, rb, margin, 0, out);
        }
        Shape::Capsule {
            half_height: hb,
            radius: rb,
        } => {
            let (q0, q1) = segment(b, hb);
            let (on_a, on_b) = closest_between_segments(p0, p1, q0, q1);
            sphere_sphere(on_a, radius, on_b, rb, margin, 0, out);
        }
        Shape::Box { half_extents } => {
            // The cap centres as balls against the box, plus the axis point nearest the box when it
            // lies between them (a capsule across an edge).
            let mut flipped = Manifold::default();
            box_sphere(b, half_extents, p0, radius, margin, 0, &mut flipped);
            box_sphere(b, half_extents, p1, radius, margin, 1, &mut flipped);
            let (on_axis, t) = closest_segment_to_box(p0, p1, b, half_extents);
            if t > 0.0 && t < 1.0 {
                box_sphere(b, half_extents, on_axis, radius, margin, 2, &mut flipped);
            }
            push_flipped(&flipped, out);
        }
        Shape::HalfSpace { normal } => {
            let mut flipped = Manifold::default();
            let ends = [(p0, 0), (p1, 1)];
            for (centre, feature) in ends {
                plane_sphere(b, normal, centre, radius, margin, feature, &mut flipped);
            }
            push_flipped(&flipped, out);
        }
        Shape::Mesh { .. } => {} // met as the mesh's pair, in `collide`
    }
}

/// Adds the points of a manifold computed the other way round, with their normals turned over.
fn push_flipped(flipped: &Manifold, out: &mut Manifold) {
    for point in flipped.points() {
        out.push(ContactPoint {
            normal: -point.normal,
            ..*point
        });
    }
}

/// The point of segment `p0..p1` nearest a box, by alternating projections (a fixed eight rounds:
/// segment and box are convex, so this closes in on the nearest pair).
fn closest_segment_to_box(p0: Vec3, p1: Vec3, b: &Placed, h: Vec3) -> (Vec3, f32) {
    let (mut on_segment, mut t) = closest_on_segment(p0, p1, b.position);
    for _ in 0..8 {
        let d = on_segment - b.position;
        let clamped = (b.axes[0] * dot3(d, b.axes[0]).clamp(-h.x, h.x)
            + b.axes[1] * dot3(d, b.axes[1]).clamp(-h.y, h.y))
            + b.axes[2] * dot3(d, b.axes[2]).clamp(-h.z, h.z);
        (on_segment, t) = closest_on_segment(p0, p1, b.position + clamped);
    }
    (on_segment, t)
}

/// A ball against a half-space; the normal points from the half-space to the ball.
fn plane_sphere(
    plane: &Placed,
    local_normal: Vec3,
    centre: Vec3,
    radius: f32,
    margin: f32,
    feature: u32,
    out: &mut Manifold,
) {
    let n = plane_normal(plane, local_normal);
    let height = dot3(centre - plane.position, n);
    let separation = height - radius;
    if separation > margin {
        return;
    }
    out.push(ContactPoint {
        point: centre - n * (radius + 0.5 * separation),
        normal: n,
        separation,
        feature,
    });
}

/// The world normal of a half-space.
fn plane_normal(plane: &Placed, local: Vec3) -> Vec3 {
    (plane.axes[0] * local.x + plane.axes[1] * local.y) + plane.axes[2] * local.z
}

/// A half-space (`a`) against any shape.
fn half_space_any(a: &Placed, local_normal: Vec3, b: &Placed, margin: f32, out: &mut Manifold) {
    match b.shape {
        Shape::Sphere { radius } => {
            plane_sphere(a, local_normal, b.position, radius, margin, 0, out)
        }
        Shape::Box { half_extents: h } => {
            let n = plane_normal(a, local_normal);
            // The box's corners below the margin, deepest first (ties by corner index).
            let mut corners = [(0.0f32, 0u32, Vec3::ZERO); 8];
            let mut count = 0;
            for corner in 0..8u32 {
                let sx = if corner & 1 == 0 { -h.x } else { h.x };
                let sy = if corner & 2 == 0 { -h.y } else { h.y };
                let sz = if corner & 4 == 0 { -h.z } else { h.z };
                let p = b.position + (b.axes[0] * sx + b.axes[1] * sy) + b.axes[2] * sz;
                let separation = dot3(p - a.position, n);
                if separation <= margin {
                    corners[count] = (separation, corner, p);
                    count += 1;
                }
            }
            let corners = &mut corners[..count];
            corners.sort_unstable_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
            for &(separation, corner, p) in corners.iter().take(MAX_POINTS) {
                out.push(ContactPoint {
                    point: p - n * (0.5 * separation),
                    normal: n,
                    separation,
                    feature: corner,
                });
            }
        }
        Shape::Capsule {
            half_height,
            radius,
        } => {
            let (p0, p1) = segment(b, half_height);
            plane_sphere(a, local_normal, p0, radius, margin, 0, out);
            plane_sphere(a, local_normal, p1, radius, margin, 1, out);
        }
        Shape::HalfSpace { .. } | Shape::Mesh { .. } => {}
    }
}

//! Contacts between a static triangle mesh (a level, or a height grid) and a sphere, a box or a
//! capsule: one manifold per pair, from the triangles near the body.
//!
//! The triangles whose boxes meet the body's bounds (grown by the pair's margin) are found through
//! the mesh's tree, in triangle order. Against each, the body offers its features: a ball its
//! centre, a capsule its two cap centres and the point of its axis nearest the triangle, a box its
//! eight corners and, for the triangle's three corners, the box's nearest surface point. A feature
//! meets a triangle at the triangle's point nearest it, with the normal from that point towards
//! it; a feature behind the triangle's face, over its interior, is pushed back out through the face
//! (level meshes are one-sided: a triangle's front is the side its winding faces, counter-clockwise
//! seen from the front).
//!
//! Each body feature keeps its deepest point over all the triangles (ties to the lower triangle),
//! so a corner over a shared edge does not meet both triangles, and the four deepest features make
//! the manifold. A point's feature id is its triangle's index and the body feature, so warm
//! starts follow a corner as long as it rests on the same triangle. This module must never touch
//! velocities or impulses.

use bevy::math::Vec3;

use super::broad_phase::shape_extent;
use super::manifold::{ContactPoint, MAX_POINTS, Manifold, Placed, closest_on_segment};
use super::math::direction_or;
use super::sphere_box::box_sphere;
use crate::physics::components::Shape;
use crate::physics::geometry::bvh::Bounds;
use crate::physics::geometry::mesh::{TriangleMesh, closest_on_triangle};
use crate::runtime::sim_math::{cross, dot3};

/// How many body features a body offers at most (eight box corners and three triangle corners).
const FEATURES: usize = 11;

/// The contact points of `mesh` (placed as `at`) against `other`, normals from the mesh to it.
pub fn mesh_any(at: &Placed, mesh: &TriangleMesh, other: &Placed, margin: f32, out: &mut Manifold) {
    let (low, high) = world_bounds(other, margin);
    let near = local_box(at, low, high);
    let mut triangles = Vec::new();
    mesh.triangles_near(&near, &mut triangles);
    let mut best: [Option<ContactPoint>; FEATURES] = [None; FEATURES];
    let mut offer = |local: usize, triangle: u32, point: Option<ContactPoint>| {
        if let Some(point) = point
            && point.separation <= margin
            && best[local].is_none_or(|b| point.separation < b.separation)
        {
            best[local] = Some(ContactPoint {
                feature: (triangle << 4) | local as u32,
                ..point
            });
        }
    };
    for &t in &triangles {
        let corners = mesh.triangle(t).map(|v| to_world(at, v));
        let face = direction_or(
            cross(corners[1] - corners[0], corners[2] - corners[0]),
            Vec3::Y,
        )
        .0;
        match other.shape {
            Shape::Sphere { radius } => {
                offer(0, t, ball_triangle(other.position, radius, &corners, face))
            }
            Shape::Capsule {
                half_height,
                radius,
            } => {
                let offset = other.axes[1] * half_height;
                let (p0, p1) = (other.position - offset, other.position + offset);
                offer(0, t, ball_triangle(p0, radius, &corners, face));
                offer(1, t, ball_triangle(p1, radius, &corners, face));
                let (on_axis, along) = nearest_on_axis(p0, p1, &corners);
                if along > 0.0 && along < 1.0 {
                    offer(2, t, ball_triangle(on_axis, radius, &corners, face));
                }
            }
            Shape::Box { half_extents: h } => {
                for corner in 0..8 {
                    let sx = if corner & 1 == 0 { -h.x } else { h.x };
                    let sy = if corner & 2 == 0 { -h.y } else { h.y };
                    let sz = if corner & 4 == 0 { -h.z } else { h.z };
                    let p = other.position
                        + ((other.axes[0] * sx + other.axes[1] * sy) + other.axes[2] * sz);
                    offer(corner, t, ball_triangle(p, 0.0, &corners, face));
                }
                for (k, &vertex) in corners.iter().enumerate() {
                    let mut from_box = Manifold::default();
                    box_sphere(other, h, vertex, 0.0, margin, 0, &mut from_box);
                    let point = from_box.points().first().map(|p| ContactPoint {
                        normal: -p.normal,
                        ..*p
                    });
                    offer(8 + k, t, point);
                }
            }
            Shape::HalfSpace { .. } | Shape::Mesh { .. } => {}
        }
    }
    let mut found: Vec<ContactPoint> = best.iter().flatten().copied().collect();
    found.sort_unstable_by(|a, b| {
        a.separation
            .total_cmp(&b.separation)
            .then(a.feature.cmp(&b.feature))
    });
    for point in found.into_iter().take(MAX_POINTS) {
        out.push(point);
    }
}

/// Where a ball of `radius` around `centre` meets triangle `corners` (of unit `face` normal),
/// normal from the triangle to the ball.
fn ball_triangle(
    centre: Vec3,
    radius: f32,
    corners: &[Vec3; 3],
    face: Vec3,
) -> Option<ContactPoint> {
    let (nearest, over_face) = closest_on_triangle(centre, *corners);
    let height = dot3(centre - corners[0], face);
    let (normal, separation) = if over_face && height < 0.0 {
        (face, height - radius)
    } else {
        let (normal, distance) = direction_or(centre - nearest, face);
        (normal, distance - radius)
    };
    let on_ball = centre - normal * radius;
    Some(ContactPoint {
        point: (nearest + on_ball) * 0.5,
        normal,
        separation,
        feature: 0,
    })
}

/// The point of segment `p0..p1` nearest the triangle, by alternating projections (a fixed eight
/// rounds), and its parameter along the segment.
fn nearest_on_axis(p0: Vec3, p1: Vec3, corners: &[Vec3; 3]) -> (Vec3, f32) {
    let centroid = (corners[0] + corners[1] + corners[2]) * (1.0 / 3.0);
    let (mut on_axis, mut along) = closest_on_segment(p0, p1, centroid);
    for _ in 0..8 {
        let (on_triangle, _) = closest_on_triangle(on_axis, *corners);
        (on_axis, along) = closest_on_segment(p0, p1, on_triangle);
    }
    (on_axis, along)
}

/// A mesh-frame point in the world.
pub fn to_world(at: &Placed, v: Vec3) -> Vec3 {
    at.position + ((at.axes[0] * v.x + at.axes[1] * v.y) + at.axes[2] * v.z)
}

/// A world point in the mesh's frame.
pub fn to_local(at: &Placed, w: Vec3) -> Vec3 {
    let d = w - at.position;
    Vec3::new(
        dot3(d, at.axes[0]),
        dot3(d, at.axes[1]),
        dot3(d, at.axes[2]),
    )
}

/// The box in the mesh's frame that holds the world box `low..high`.
pub fn local_box(at: &Placed, low: Vec3, high: Vec3) -> Bounds {
    let (centre, half) = ((low + high) * 0.5, (high - low) * 0.5);
    let c = to_local(at, centre);
    let e = |k: usize| {
        (at.axes[k].x.abs() * half.x + at.axes[k].y.abs() * half.y) + at.axes[k].z.abs() * half.z
    };
    let extent = Vec3::new(e(0), e(1), e(2));
    Bounds {
        min: c - extent,
        max: c + extent,
    }
}

/// A placed sphere, box or capsule's world box, grown by `margin`.
fn world_bounds(p: &Placed, margin: f32) -> (Vec3, Vec3) {
    let grow = shape_extent(&p.shape, &p.axes) + Vec3::splat(margin);
    (p.position - grow, p.position + grow)
}

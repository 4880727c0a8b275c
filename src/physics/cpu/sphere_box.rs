//! A box against a ball: the contact the sphere-box pair, capsules against boxes and triangle
//! corners against boxes share.
//!
//! Its own file so that the narrow phase (`contacts`) and the level-mesh contacts
//! (`mesh_contacts`) both stand on it without importing each other. This module must never touch
//! velocities or impulses.

use bevy::math::Vec3;

use super::manifold::{ContactPoint, Manifold, Placed};
use super::math;
use crate::runtime::sim_math::dot3;

/// A box against a ball.
pub fn box_sphere(
    a: &Placed,
    h: Vec3,
    centre: Vec3,
    radius: f32,
    margin: f32,
    feature: u32,
    out: &mut Manifold,
) {
    let d = centre - a.position;
    let local = [dot3(d, a.axes[0]), dot3(d, a.axes[1]), dot3(d, a.axes[2])];
    let half = [h.x, h.y, h.z];
    let clamped = [
        local[0].clamp(-half[0], half[0]),
        local[1].clamp(-half[1], half[1]),
        local[2].clamp(-half[2], half[2]),
    ];
    let inside = local == clamped;
    let (normal, separation, surface) = if inside {
        // The centre is inside: push out through the nearest face.
        let depth = [
            half[0] - local[0].abs(),
            half[1] - local[1].abs(),
            half[2] - local[2].abs(),
        ];
        let k = if depth[0] <= depth[1] && depth[0] <= depth[2] {
            0
        } else if depth[1] <= depth[2] {
            1
        } else {
            2
        };
        let sign = if local[k] < 0.0 { -1.0 } else { 1.0 };
        let normal = a.axes[k] * sign;
        (normal, -depth[k] - radius, centre + normal * depth[k])
    } else {
        let closest =
            a.position + (a.axes[0] * clamped[0] + a.axes[1] * clamped[1]) + a.axes[2] * clamped[2];
        let (normal, distance) = math::direction_or(centre - closest, a.axes[1]);
        (normal, distance - radius, closest)
    };
    if separation > margin {
        return;
    }
    let on_b = centre - normal * radius;
    out.push(ContactPoint {
        point: (surface + on_b) * 0.5,
        normal,
        separation,
        feature,
    });
}

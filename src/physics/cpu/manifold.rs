//! What the narrow phase produces and the box-box and capsule cases share: [`Manifold`] and its
//! [`ContactPoint`]s, a shape [`Placed`] in the world, and the closest points of segments.
//!
//! Its own file so that the shape-pair files (`contacts`, `box_box`) and the colouring stand on
//! these types without importing each other. This module must never compute a contact itself.

use bevy::math::Vec3;

use crate::physics::components::Shape;
use crate::runtime::sim_math::dot3;

/// Most points a manifold keeps.
pub const MAX_POINTS: usize = 4;

/// One contact point.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactPoint {
    /// Halfway between the two surfaces, world space.
    pub point: Vec3,
    /// Unit normal from the first body towards the second.
    pub normal: Vec3,
    /// Distance between the surfaces along the normal; negative when they overlap.
    pub separation: f32,
    /// Which features of the two shapes made the point.
    pub feature: u32,
}

/// The contact points of one pair.
///
/// Laid out in the order written (`repr(C)`), so that the pair and its point count lie in its
/// first 10 bytes, nearly always in one cache line: the colouring and the events read only those,
/// from every manifold.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Manifold {
    /// The first body's index (the lower one).
    pub a: u32,
    /// The second body's index.
    pub b: u32,
    /// How many points are in use.
    pub len: u8,
    /// Whether the narrow phase ran for this pair (it does when one body is awake and dynamic).
    pub evaluated: bool,
    /// The points, `len` of them, sorted by feature.
    pub points: [ContactPoint; MAX_POINTS],
}

impl Manifold {
    /// The points in use.
    pub fn points(&self) -> &[ContactPoint] {
        &self.points[..self.len as usize]
    }

    /// Adds a point unless the manifold is full.
    pub fn push(&mut self, point: ContactPoint) {
        if (self.len as usize) < MAX_POINTS {
            self.points[self.len as usize] = point;
            self.len += 1;
        }
    }
}

/// A shape placed in the world.
#[derive(Clone, Copy, Debug)]
pub struct Placed {
    /// The shape.
    pub shape: Shape,
    /// World position of its centre.
    pub position: Vec3,
    /// World directions of its local axes.
    pub axes: [Vec3; 3],
}

/// The point of segment `p0..p1` closest to `q`, and its parameter in `[0, 1]`.
pub fn closest_on_segment(p0: Vec3, p1: Vec3, q: Vec3) -> (Vec3, f32) {
    let d = p1 - p0;
    let dd = dot3(d, d);
    let t = if dd > 0.0 {
        (dot3(q - p0, d) / dd).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (p0 + d * t, t)
}

/// The closest points of segments `p0..p1` and `q0..q1` (Ericson, Real-Time Collision Detection,
/// 5.1.9).
pub fn closest_between_segments(p0: Vec3, p1: Vec3, q0: Vec3, q1: Vec3) -> (Vec3, Vec3) {
    let d1 = p1 - p0;
    let d2 = q1 - q0;
    let r = p0 - q0;
    let a = dot3(d1, d1);
    let e = dot3(d2, d2);
    let f = dot3(d2, r);
    const EPSILON: f32 = 1.0e-12;
    let (s, t) = if a <= EPSILON && e <= EPSILON {
        (0.0, 0.0)
    } else if a <= EPSILON {
        (0.0, (f / e).clamp(0.0, 1.0))
    } else {
        let c = dot3(d1, r);
        if e <= EPSILON {
            ((-c / a).clamp(0.0, 1.0), 0.0)
        } else {
            let b = dot3(d1, d2);
            let denom = a * e - b * b;
            let mut s = if denom > EPSILON {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.5
            };
            let mut t = (b * s + f) / e;
            if t < 0.0 {
                t = 0.0;
                s = (-c / a).clamp(0.0, 1.0);
            } else if t > 1.0 {
                t = 1.0;
                s = ((b - c) / a).clamp(0.0, 1.0);
            }
            (s, t)
        }
    };
    (p0 + d1 * s, q0 + d2 * t)
}

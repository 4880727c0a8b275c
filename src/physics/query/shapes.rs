//! Rays and points against one shape, in the shape's local frame: the exact answers the spatial
//! queries combine. Plain IEEE `+ - * / sqrt` (correctly rounded on every CPU) and `sim_math`'s
//! dot products, in a fixed order, as the solver computes.
//!
//! The edge cases, the same for every shape:
//! - a ray that starts inside (or on the surface of) a shape hits it at distance 0, with the
//!   normal pointing against the ray (`-direction`): the shape is solid;
//! - a ray parallel to a box face or a half-space's plane and outside it misses; one that grazes
//!   an edge or a face (touching it at one distance) hits there;
//! - where a ray enters a box through an edge or a corner (two or three faces at the same
//!   distance), the normal is the first of those faces' in x, y, z order.
//!
//! This module must never read the world.

use bevy::math::Vec3;

use crate::physics::Shape;
use crate::runtime::sim_math::dot3;

/// Where a ray first meets a shape: its distance along the (unit) direction and the surface
/// normal there, in the shape's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalHit {
    /// Distance from the origin, in metres (0 when the ray starts inside).
    pub distance: f32,
    /// The outward surface normal (unit length), or `-direction` for a ray starting inside.
    pub normal: Vec3,
}

/// The first hit of the ray from `origin` along unit `direction`, within `max` metres, against
/// `shape` centred at the local origin.
pub fn ray_shape(shape: &Shape, origin: Vec3, direction: Vec3, max: f32) -> Option<LocalHit> {
    let hit = match *shape {
        Shape::Sphere { radius } => ray_sphere(origin, direction, Vec3::ZERO, radius),
        Shape::Box { half_extents } => ray_box(origin, direction, half_extents),
        Shape::Capsule {
            half_height,
            radius,
        } => ray_capsule(origin, direction, half_height, radius),
        Shape::HalfSpace { normal } => ray_half_space(origin, direction, normal),
        // A mesh's triangles are asked through its tree (`TriangleMesh::cast_ray`).
        Shape::Mesh { .. } => None,
    }?;
    (hit.distance <= max).then_some(hit)
}

/// Whether `point` is inside `shape` or on its surface.
pub fn contains_point(shape: &Shape, point: Vec3) -> bool {
    match *shape {
        Shape::Sphere { radius } => dot3(point, point) <= radius * radius,
        Shape::Box { half_extents } => {
            point.x.abs() <= half_extents.x
                && point.y.abs() <= half_extents.y
                && point.z.abs() <= half_extents.z
        }
        Shape::Capsule {
            half_height,
            radius,
        } => {
            let off = point - Vec3::new(0.0, point.y.clamp(-half_height, half_height), 0.0);
            dot3(off, off) <= radius * radius
        }
        Shape::HalfSpace { normal } => dot3(point, normal) <= 0.0,
        // A mesh is a surface: no point is inside it.
        Shape::Mesh { .. } => false,
    }
}

fn inside(direction: Vec3) -> LocalHit {
    LocalHit {
        distance: 0.0,
        normal: -direction,
    }
}

/// Unit `v`, or `fallback` for a zero vector.
fn unit_or(v: Vec3, fallback: Vec3) -> Vec3 {
    crate::physics::cpu::math::direction_or(v, fallback).0
}

fn ray_sphere(origin: Vec3, direction: Vec3, centre: Vec3, radius: f32) -> Option<LocalHit> {
    let m = origin - centre;
    let c = dot3(m, m) - radius * radius;
    if c <= 0.0 {
        return Some(inside(direction));
    }
    let b = dot3(m, direction);
    if b > 0.0 {
        return None; // outside and moving away
    }
    let discriminant = b * b - c;
    if discriminant < 0.0 {
        return None;
    }
    let distance = (-b - discriminant.sqrt()).max(0.0);
    let point = m + direction * distance;
    Some(LocalHit {
        distance,
        normal: unit_or(point, -direction),
    })
}

fn ray_box(origin: Vec3, direction: Vec3, half: Vec3) -> Option<LocalHit> {
    let (o, d, h) = (origin.to_array(), direction.to_array(), half.to_array());
    if (0..3).all(|k| o[k].abs() <= h[k]) {
        return Some(inside(direction));
    }
    let (mut enter, mut leave, mut axis) = (f32::NEG_INFINITY, f32::INFINITY, 0usize);
    for k in 0..3 {
        if d[k] == 0.0 {
            if o[k].abs() > h[k] {
                return None; // parallel to this slab and outside it
            }
            continue;
        }
        let (a, b) = ((-h[k] - o[k]) / d[k], (h[k] - o[k]) / d[k]);
        let (near, far) = if a <= b { (a, b) } else { (b, a) };
        if near > enter {
            enter = near;
            axis = k;
        }
        leave = leave.min(far);
    }
    if enter > leave || leave < 0.0 || enter < 0.0 {
        return None;
    }
    let mut normal = [0.0f32; 3];
    normal[axis] = if d[axis] > 0.0 { -1.0 } else { 1.0 };
    Some(LocalHit {
        distance: enter,
        normal: Vec3::from_array(normal),
    })
}

fn ray_capsule(origin: Vec3, direction: Vec3, half_height: f32, radius: f32) -> Option<LocalHit> {
    let axis_point = Vec3::new(0.0, origin.y.clamp(-half_height, half_height), 0.0);
    let off = origin - axis_point;
    if dot3(off, off) <= radius * radius {
        return Some(inside(direction));
    }
    let mut best: Option<LocalHit> = None;
    let mut consider = |hit: Option<LocalHit>| {
        if let Some(hit) = hit
            && best.is_none_or(|b| hit.distance < b.distance)
        {
            best = Some(hit);
        }
    };
    // The side: the infinite cylinder about Y, where the hit lies between the caps.
    let a = direction.x * direction.x + direction.z * direction.z;
    if a > 0.0 {
        let b = origin.x * direction.x + origin.z * direction.z;
        let c = origin.x * origin.x + origin.z * origin.z - radius * radius;
        let discriminant = b * b - a * c;
        if discriminant >= 0.0 {
            let distance = (-b - discriminant.sqrt()) / a;
            let y = origin.y + direction.y * distance;
            if distance >= 0.0 && y.abs() <= half_height {
                let point = origin + direction * distance;
                consider(Some(LocalHit {
                    distance,
                    normal: unit_or(Vec3::new(point.x, 0.0, point.z), -direction),
                }));
            }
        }
    }
    // The caps.
    for y in [half_height, -half_height] {
        consider(ray_sphere(
            origin,
            direction,
            Vec3::new(0.0, y, 0.0),
            radius,
        ));
    }
    best
}

fn ray_half_space(origin: Vec3, direction: Vec3, normal: Vec3) -> Option<LocalHit> {
    let height = dot3(origin, normal);
    if height <= 0.0 {
        return Some(inside(direction));
    }
    let approach = dot3(direction, normal);
    if approach >= 0.0 {
        return None; // parallel or moving away
    }
    Some(LocalHit {
        distance: -height / approach,
        normal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails if a shape's entry distance or normal is off for a ray straight at it.
    #[test]
    fn rays_straight_at_each_shape_hit_where_expected() {
        let from = Vec3::new(-5.0, 0.0, 0.0);
        let shapes = [
            (Shape::Sphere { radius: 1.0 }, 4.0),
            (
                Shape::Box {
                    half_extents: Vec3::new(0.5, 1.0, 1.0),
                },
                4.5,
            ),
            (
                Shape::Capsule {
                    half_height: 1.0,
                    radius: 0.25,
                },
                4.75,
            ),
            (
                Shape::HalfSpace {
                    normal: Vec3::NEG_X,
                },
                5.0,
            ),
        ];
        for (shape, distance) in shapes {
            let hit = ray_shape(&shape, from, Vec3::X, f32::INFINITY).unwrap();
            assert_eq!(hit.distance, distance, "{shape:?}");
            assert_eq!(hit.normal, Vec3::NEG_X, "{shape:?}");
            assert!(ray_shape(&shape, from, Vec3::NEG_X, f32::INFINITY).is_none());
            assert!(
                ray_shape(&shape, from, Vec3::X, distance - 0.01).is_none(),
                "{shape:?}"
            );
        }
    }

    /// Fails if a ray starting inside misses, or a parallel ray outside a face hits.
    #[test]
    fn inside_and_parallel_rays_are_decided() {
        let cube = Shape::Box {
            half_extents: Vec3::ONE,
        };
        let hit = ray_shape(&cube, Vec3::ZERO, Vec3::Y, 0.0).unwrap();
        assert_eq!((hit.distance, hit.normal), (0.0, Vec3::NEG_Y));
        assert!(ray_shape(&cube, Vec3::new(-3.0, 1.5, 0.0), Vec3::X, 10.0).is_none());
        // Grazing the top face's edge: touches at the face.
        let graze = ray_shape(&cube, Vec3::new(-3.0, 1.0, 0.0), Vec3::X, 10.0).unwrap();
        assert_eq!(graze.distance, 2.0);
        let ground = Shape::HalfSpace { normal: Vec3::Y };
        assert!(ray_shape(&ground, Vec3::new(0.0, 1.0, 0.0), Vec3::X, 10.0).is_none());
        assert!(contains_point(&ground, Vec3::new(3.0, -0.1, 2.0)));
    }
}

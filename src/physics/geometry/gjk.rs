//! Shape casts and shape overlaps between two [`Convex`] shapes: GJK's ray cast against their
//! Minkowski difference (van den Bergen, *Ray Casting against General Convex Objects with
//! Application to Continuous Collision Detection*, 2004), with the shapes' radii kept apart from
//! their cores as Box2D v3's shape cast does.
//!
//! Shape A moves along a unit direction; it first touches B when the moved origin `x = λ d`
//! comes within `radius_a + radius_b` of `D = core(B) - core(A)`. Each step takes D's support
//! point along `v` (from D's nearest point towards `x`): when `x` lies beyond that support plane by
//! more than the radii, `λ` advances to the plane (or the cast misses, if the direction does not
//! approach it); the point joins the simplex, whose nearest point to `x` gives the next `v`. The
//! cast ends when `x` is within the radii plus [`TOLERANCE`] of D, or after [`MAX_ITERATIONS`]
//! support points. An overlap test is the same loop with no motion.
//!
//! Half-spaces are not convex shapes here (they have no support point along most directions):
//! [`cast_against_half_space`] takes a shape's deepest point towards the plane instead.
//!
//! Plain IEEE `+ - * / sqrt` and `sim_math`'s dot and cross products in a fixed order: the same
//! bits on every machine. This module must never read the world.

use bevy::math::Vec3;

use super::convex::Convex;
use super::simplex::{Simplex, Vertex};
use crate::physics::cpu::math::direction_or;
use crate::runtime::sim_math::dot3;

/// How close (in metres) the shapes' surfaces come before a cast counts as touching.
pub const TOLERANCE: f32 = 1.0e-4;

/// The most support points one cast or overlap test takes.
pub const MAX_ITERATIONS: usize = 32;

/// Where a moving shape first touches another.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CastHit {
    /// How far the moving shape travelled, in metres (0 when they overlap from the start).
    pub distance: f32,
    /// The touched shape's surface normal there, towards the moving shape (unit length);
    /// `-direction` when they overlap from the start.
    pub normal: Vec3,
    /// The point on the touched shape's surface; the moving shape's centre when they overlap
    /// from the start.
    pub point: Vec3,
}

/// Where `a`, moved along unit `direction` by at most `max` metres, first touches `b`, or `None`.
/// `centre` is the moving shape's reference point (its position), reported for a start inside.
pub fn cast(a: &Convex, centre: Vec3, direction: Vec3, max: f32, b: &Convex) -> Option<CastHit> {
    let radius = a.radius + b.radius;
    let support = |v: Vec3| {
        let (on_a, on_b) = (a.support(-v), b.support(v));
        Vertex {
            w: on_b - on_a,
            a: on_a,
            b: on_b,
        }
    };
    let mut simplex = Simplex::default();
    let mut lambda = 0.0f32;
    let mut x = Vec3::ZERO;
    let mut v = x - (b.any_point() - a.any_point());
    let mut last_normal = -direction;
    for _ in 0..MAX_ITERATIONS {
        let distance = dot3(v, v).sqrt();
        if distance <= radius + TOLERANCE {
            break;
        }
        let vertex = support(v);
        let n = v * (1.0 / distance);
        // How far x lies beyond D's support plane along n.
        let gap = dot3(n, x - vertex.w);
        if gap > radius {
            let approach = dot3(n, direction);
            if approach >= 0.0 {
                return None; // moving along or away from the plane: never closer
            }
            lambda += (gap - radius) / -approach;
            if lambda > max {
                return None;
            }
            x = direction * lambda;
            last_normal = n;
            simplex.clear();
        }
        if simplex.contains(vertex.w) {
            break; // no new support point: converged
        }
        simplex.push(vertex);
        let nearest = simplex.reduce(x);
        v = x - nearest;
        if simplex.len() == 4 {
            v = Vec3::ZERO;
            break; // x inside D: the cores overlap
        }
    }
    if lambda == 0.0 {
        // Touching or overlapping where the cast starts.
        return Some(CastHit {
            distance: 0.0,
            normal: -direction,
            point: centre,
        });
    }
    // Within the tolerance of touching, v is too short to have a reliable direction: the last
    // support plane the cast advanced to touches both shapes there, and its normal is exact.
    let normal = if dot3(v, v) > TOLERANCE * TOLERANCE {
        direction_or(v, last_normal).0
    } else {
        last_normal
    };
    let on_core = if simplex.is_empty() {
        b.any_point()
    } else {
        simplex.combine(|vertex| vertex.b)
    };
    Some(CastHit {
        distance: lambda,
        normal,
        point: on_core + normal * b.radius,
    })
}

/// Whether `a` and `b` overlap (touching, to within [`TOLERANCE`], counts).
pub fn overlap(a: &Convex, b: &Convex) -> bool {
    cast(a, Vec3::ZERO, Vec3::ZERO, 0.0, b).is_some()
}

/// Where `a`, moved along unit `direction` by at most `max` metres, first touches the half-space
/// below the plane through `plane` with unit outward `normal`, or `None`.
pub fn cast_against_half_space(
    a: &Convex,
    centre: Vec3,
    direction: Vec3,
    max: f32,
    plane: Vec3,
    normal: Vec3,
) -> Option<CastHit> {
    let deepest = a.support(-normal) - normal * a.radius;
    let height = dot3(deepest - plane, normal);
    if height <= 0.0 {
        return Some(CastHit {
            distance: 0.0,
            normal: -direction,
            point: centre,
        });
    }
    let approach = dot3(direction, normal);
    if approach >= 0.0 {
        return None;
    }
    let distance = height / -approach;
    (distance <= max).then(|| CastHit {
        distance,
        normal,
        point: deepest + direction * distance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::Shape;
    use bevy::math::Quat;

    fn placed(shape: Shape, at: Vec3) -> Convex {
        Convex::placed(&shape, at, Quat::IDENTITY).unwrap()
    }

    /// Fails if a ball cast at a ball stops anywhere but where the surfaces meet, or reports the
    /// wrong normal or point.
    #[test]
    fn a_ball_cast_at_a_ball_stops_at_the_surface() {
        let a = placed(Shape::Sphere { radius: 0.5 }, Vec3::ZERO);
        let b = placed(Shape::Sphere { radius: 1.0 }, Vec3::new(10.0, 0.0, 0.0));
        let hit = cast(&a, Vec3::ZERO, Vec3::X, 100.0, &b).unwrap();
        assert!((hit.distance - 8.5).abs() < 1e-4, "{hit:?}");
        assert!((hit.normal - Vec3::NEG_X).length() < 1e-5, "{hit:?}");
        assert!(
            (hit.point - Vec3::new(9.0, 0.0, 0.0)).length() < 1e-4,
            "{hit:?}"
        );
        assert!(cast(&a, Vec3::ZERO, Vec3::X, 8.0, &b).is_none());
        assert!(cast(&a, Vec3::ZERO, Vec3::Y, 100.0, &b).is_none());
    }

    /// Fails if a box cast at a turned box stops short of or past its corner.
    #[test]
    fn a_box_cast_at_a_turned_box_meets_its_corner() {
        let a = placed(
            Shape::Box {
                half_extents: Vec3::splat(0.5),
            },
            Vec3::ZERO,
        );
        let b = Convex::placed(
            &Shape::Box {
                half_extents: Vec3::splat(1.0),
            },
            Vec3::new(10.0, 0.0, 0.0),
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_4),
        )
        .unwrap();
        let hit = cast(&a, Vec3::ZERO, Vec3::X, 100.0, &b).unwrap();
        let expected = 10.0 - std::f32::consts::SQRT_2 - 0.5;
        assert!(
            (hit.distance - expected).abs() < 2e-4,
            "{hit:?} against {expected}"
        );
        assert!(overlap(
            &a,
            &placed(Shape::Sphere { radius: 0.5 }, Vec3::new(0.9, 0.0, 0.0))
        ));
        assert!(!overlap(
            &a,
            &placed(Shape::Sphere { radius: 0.5 }, Vec3::new(1.1, 0.0, 0.0))
        ));
    }
}

//! [`Convex`]: a bounded collider shape placed in the world, as a core (a point, a segment, a box
//! or a triangle) grown by a radius, with its support mapping: the core's point farthest along a
//! direction. Shape casts and shape overlaps ([`super::gjk`]) need nothing else of a shape.
//!
//! A sphere is a point grown by its radius and a capsule a segment grown by its; keeping the
//! round part as a radius rather than in the support mapping keeps every support point exact
//! (no normalization) and lets GJK converge on curved shapes in a few steps. Ties in a support
//! mapping go to a fixed side, so the answer never depends on anything but the inputs.
//!
//! This module must never decide a hit; it only describes shapes.

use bevy::math::{Quat, Vec3};

use crate::physics::Shape;
use crate::runtime::sim_math::{dot3, rotation_matrix};

/// The core of a convex shape, in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Core {
    /// One point (a sphere's centre).
    Point(Vec3),
    /// A segment (a capsule's axis).
    Segment(Vec3, Vec3),
    /// An oriented box.
    Box {
        /// Its centre.
        centre: Vec3,
        /// World directions of its local X, Y and Z axes.
        axes: [Vec3; 3],
        /// Half its size along each axis.
        half: Vec3,
    },
    /// A triangle (of a mesh or a heightfield).
    Triangle([Vec3; 3]),
}

/// A convex shape: a core grown by a radius.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Convex {
    /// The core.
    pub core: Core,
    /// How far the surface lies outside the core, in metres (0 for boxes and triangles).
    pub radius: f32,
}

impl Convex {
    /// `shape` centred at `position` and turned by `rotation`, or `None` for a half-space (which
    /// has no support point in most directions).
    pub fn placed(shape: &Shape, position: Vec3, rotation: Quat) -> Option<Convex> {
        let axes = || {
            let m = rotation_matrix(rotation);
            [m.x_axis, m.y_axis, m.z_axis]
        };
        let (core, radius) = match *shape {
            Shape::Sphere { radius } => (Core::Point(position), radius),
            Shape::Box { half_extents } => (
                Core::Box {
                    centre: position,
                    axes: axes(),
                    half: half_extents,
                },
                0.0,
            ),
            Shape::Capsule {
                half_height,
                radius,
            } => {
                let offset = axes()[1] * half_height;
                (Core::Segment(position - offset, position + offset), radius)
            }
            Shape::HalfSpace { .. } | Shape::Mesh { .. } => return None,
        };
        Some(Convex { core, radius })
    }

    /// A frame (a level mesh's, say): where a world point lies in it and which way a world
    /// direction points in it, from the frame's `position` and unit `rotation`.
    pub fn into_frame(position: Vec3, rotation: Quat) -> impl Fn(Vec3, bool) -> Vec3 {
        let inverse = rotation.inverse();
        move |v: Vec3, is_point: bool| {
            let v = if is_point { v - position } else { v };
            crate::runtime::sim_math::quat_rotate(inverse, v)
        }
    }

    /// The same shape with its core's points and directions taken through `map` (a point with
    /// `true`, a direction with `false`), as [`Convex::into_frame`] gives.
    pub fn mapped(&self, map: impl Fn(Vec3, bool) -> Vec3) -> Convex {
        let core = match self.core {
            Core::Point(p) => Core::Point(map(p, true)),
            Core::Segment(p, q) => Core::Segment(map(p, true), map(q, true)),
            Core::Box { centre, axes, half } => Core::Box {
                centre: map(centre, true),
                axes: axes.map(|axis| map(axis, false)),
                half,
            },
            Core::Triangle(corners) => Core::Triangle(corners.map(|c| map(c, true))),
        };
        Convex {
            core,
            radius: self.radius,
        }
    }

    /// An axis-aligned box from `min` to `max`.
    pub fn aabb(min: Vec3, max: Vec3) -> Convex {
        Convex {
            core: Core::Box {
                centre: (min + max) * 0.5,
                axes: [Vec3::X, Vec3::Y, Vec3::Z],
                half: (max - min) * 0.5,
            },
            radius: 0.0,
        }
    }

    /// The core's point farthest along `d` (the first one of equals, in the core's own order).
    pub fn support(&self, d: Vec3) -> Vec3 {
        match self.core {
            Core::Point(p) => p,
            Core::Segment(p0, p1) => {
                if dot3(p1 - p0, d) > 0.0 {
                    p1
                } else {
                    p0
                }
            }
            Core::Box { centre, axes, half } => {
                let side = |k: usize, h: f32| if dot3(d, axes[k]) >= 0.0 { h } else { -h };
                centre
                    + ((axes[0] * side(0, half.x) + axes[1] * side(1, half.y))
                        + axes[2] * side(2, half.z))
            }
            Core::Triangle([a, b, c]) => {
                let (da, db, dc) = (dot3(a, d), dot3(b, d), dot3(c, d));
                if da >= db && da >= dc {
                    a
                } else if db >= dc {
                    b
                } else {
                    c
                }
            }
        }
    }

    /// Any point of the core (where GJK starts).
    pub fn any_point(&self) -> Vec3 {
        match self.core {
            Core::Point(p) | Core::Segment(p, _) | Core::Triangle([p, _, _]) => p,
            Core::Box { centre, .. } => centre,
        }
    }

    /// The shape's bounding box (the core's, grown by the radius).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        let (min, max) = match self.core {
            Core::Point(p) => (p, p),
            Core::Segment(p0, p1) => (p0.min(p1), p0.max(p1)),
            Core::Box { centre, axes, half } => {
                let extent = super::bvh::turned_extent(&axes, half);
                (centre - extent, centre + extent)
            }
            Core::Triangle([a, b, c]) => (a.min(b).min(c), a.max(b).max(c)),
        };
        let grow = Vec3::splat(self.radius);
        (min - grow, max + grow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails if a support point is not the core's farthest point along the direction, or if a
    /// tie goes to a different corner.
    #[test]
    fn support_points_are_the_farthest_core_points() {
        let cube = Convex::placed(
            &Shape::Box {
                half_extents: Vec3::new(1.0, 2.0, 3.0),
            },
            Vec3::new(10.0, 0.0, 0.0),
            Quat::IDENTITY,
        )
        .unwrap();
        assert_eq!(
            cube.support(Vec3::new(1.0, -1.0, 0.0)),
            Vec3::new(11.0, -2.0, 3.0)
        );
        let capsule = Convex::placed(
            &Shape::Capsule {
                half_height: 1.0,
                radius: 0.5,
            },
            Vec3::ZERO,
            Quat::IDENTITY,
        )
        .unwrap();
        assert_eq!(capsule.support(Vec3::Y), Vec3::Y);
        assert_eq!(capsule.support(Vec3::X), -Vec3::Y);
        assert_eq!(
            capsule.bounds(),
            (Vec3::new(-0.5, -1.5, -0.5), Vec3::new(0.5, 1.5, 0.5))
        );
        assert!(
            Convex::placed(
                &Shape::HalfSpace { normal: Vec3::Y },
                Vec3::ZERO,
                Quat::IDENTITY
            )
            .is_none()
        );
    }
}

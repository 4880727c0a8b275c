//! Shape casts and shape overlaps through [`SpatialQuery`]: a sphere, box or capsule swept along a
//! direction (a character controller's move, a thick bullet), and the colliders that meet a shape
//! or an axis-aligned box (a trigger volume, an explosion's reach).
//!
//! Every collider shape is a target: bounded ones through GJK (`physics::geometry::gjk`),
//! half-spaces through the cast shape's deepest point. Hits are ordered like ray hits, by (distance bits,
//! `SimId`); overlaps come in `SimId` order. The same state rules as rays hold: a query sees the
//! colliders as they stand when the asking system runs. This module must never change simulation
//! state or keep any between queries.

use std::cell::Cell;

use bevy::math::{Quat, Vec3, Vec4};
use bevy::prelude::Entity;

use super::error::QueryError;
use super::spatial::{QueryFilter, QueryHit, SpatialQuery, checked_motion, every, nearest};
use crate::physics::Shape;
use crate::physics::geometry::Convex;
use crate::physics::geometry::bvh::Bounds;
use crate::physics::geometry::{CastHit, cast, cast_against_half_space, overlap};
use crate::runtime::sim_math::{dot4, quat_rotate};
use crate::state::SimId;

/// Where a shape cast hit a collider.
pub type ShapeHit = QueryHit;

/// A shape swept through the world: which shape, where it starts and how it is turned, which way
/// it goes and how far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeCast {
    /// A sphere, box or capsule (a half-space is unbounded and refused).
    pub shape: Shape,
    /// Where its centre starts.
    pub position: Vec3,
    /// How it is turned (it does not turn while it moves).
    pub rotation: Quat,
    /// Which way it moves (any length but zero).
    pub direction: Vec3,
    /// How far it may move, in metres: from 0 (only colliders it starts touching) to infinity.
    pub max_distance: f32,
}

impl ShapeCast {
    /// `shape`, unturned, from `position` along `direction` for at most `max_distance` metres.
    pub fn new(shape: Shape, position: Vec3, direction: Vec3, max_distance: f32) -> Self {
        ShapeCast {
            shape,
            position,
            rotation: Quat::IDENTITY,
            direction,
            max_distance,
        }
    }

    /// The same cast with the shape turned by `rotation`.
    pub fn with_rotation(mut self, rotation: Quat) -> Self {
        self.rotation = rotation;
        self
    }
}

/// The shape placed, after checking its sizes, position and rotation.
fn checked_shape(shape: &Shape, position: Vec3, rotation: Quat) -> Result<Convex, QueryError> {
    if !position.is_finite() {
        return Err(QueryError::NonFinite {
            what: "shape position",
            value: position,
        });
    }
    let squared = dot4(Vec4::from(rotation), Vec4::from(rotation));
    if !rotation.is_finite() || squared <= 0.0 {
        return Err(QueryError::Rotation(rotation));
    }
    let rotation = crate::physics::cpu::math::quat_unit(rotation);
    let size = |what: &'static str, value: f32| {
        if value.is_finite() && value >= 0.0 {
            Ok(())
        } else {
            Err(QueryError::ShapeSize { what, value })
        }
    };
    match *shape {
        Shape::Sphere { radius } => size("radius", radius)?,
        Shape::Capsule {
            half_height,
            radius,
        } => {
            size("half height", half_height)?;
            size("radius", radius)?;
        }
        Shape::Box { half_extents: h } => {
            size("half extent x", h.x)?;
            size("half extent y", h.y)?;
            size("half extent z", h.z)?;
        }
        Shape::HalfSpace { .. } => return Err(QueryError::Unbounded),
        Shape::Mesh { .. } => return Err(QueryError::MeshShape),
    }
    Convex::placed(shape, position, rotation).ok_or(QueryError::Unbounded)
}

impl SpatialQuery<'_, '_> {
    /// The nearest hit of the swept shape among the colliders `filter` admits (ties go to the
    /// lower `SimId`), or `None`.
    pub fn cast_shape(
        &self,
        cast: &ShapeCast,
        filter: &QueryFilter,
    ) -> Result<Option<ShapeHit>, QueryError> {
        self.cast_shape_where(cast, filter, |_| true)
    }

    /// [`SpatialQuery::cast_shape`] among the colliders `predicate` also accepts.
    pub fn cast_shape_where(
        &self,
        cast: &ShapeCast,
        filter: &QueryFilter,
        predicate: impl Fn(&ShapeHit) -> bool,
    ) -> Result<Option<ShapeHit>, QueryError> {
        nearest(cast.max_distance, predicate, |reach, found| {
            self.each_shape_hit(cast, filter, reach, found)
        })
    }

    /// Every hit of the swept shape (one per collider) among the colliders `filter` admits,
    /// nearest first, ties by `SimId`.
    pub fn shape_hits(
        &self,
        cast: &ShapeCast,
        filter: &QueryFilter,
    ) -> Result<Vec<ShapeHit>, QueryError> {
        every(cast.max_distance, |reach, found| {
            self.each_shape_hit(cast, filter, reach, found)
        })
    }

    /// The colliders that meet `shape` centred at `position` and turned by `rotation` (touching
    /// counts) among those `filter` admits, in `SimId` order.
    pub fn shape_overlaps(
        &self,
        shape: &Shape,
        position: Vec3,
        rotation: Quat,
        filter: &QueryFilter,
    ) -> Result<Vec<(Entity, SimId)>, QueryError> {
        let probe = checked_shape(shape, position, rotation)?;
        Ok(self.overlapping(&probe, filter))
    }

    /// The colliders that meet the axis-aligned box from `min` to `max` (touching counts) among
    /// those `filter` admits, in `SimId` order. The test is exact, not against the colliders'
    /// bounds: a sphere whose bounds reach into a corner of the box but whose surface does not
    /// is left out.
    pub fn aabb_overlaps(
        &self,
        min: Vec3,
        max: Vec3,
        filter: &QueryFilter,
    ) -> Result<Vec<(Entity, SimId)>, QueryError> {
        for (what, value) in [("box minimum", min), ("box maximum", max)] {
            if !value.is_finite() {
                return Err(QueryError::NonFinite { what, value });
            }
        }
        if min.x > max.x || min.y > max.y || min.z > max.z {
            return Err(QueryError::InvertedBox { min, max });
        }
        Ok(self.overlapping(&Convex::aabb(min, max), filter))
    }

    fn overlapping(&self, probe: &Convex, filter: &QueryFilter) -> Vec<(Entity, SimId)> {
        let (min, max) = probe.bounds();
        let reach = Bounds { min, max };
        let mut found = Vec::new();
        self.tree().visit(
            |bounds| bounds.overlaps(&reach),
            |entry| {
                let meets = filter.admits(entry)
                    && match entry.collider.shape {
                        Shape::Mesh { mesh } => self.mesh(mesh).is_some_and(|mesh| {
                            mesh.overlaps(
                                &probe.mapped(Convex::into_frame(entry.position, entry.rotation)),
                            )
                        }),
                        Shape::HalfSpace { normal } => cast_against_half_space(
                            probe,
                            Vec3::ZERO,
                            Vec3::ZERO,
                            0.0,
                            entry.position,
                            quat_rotate(entry.rotation, normal),
                        )
                        .is_some(),
                        shape => Convex::placed(&shape, entry.position, entry.rotation)
                            .is_some_and(|target| overlap(probe, &target)),
                    };
                if meets {
                    found.push((entry.entity, entry.sim_id));
                }
                true
            },
        );
        found.sort_by_key(|(_, id)| *id);
        found
    }

    /// Every hit of the swept shape among the admitted colliders whose grown bounds its path
    /// meets within `reach` (which `found` may shorten as it goes).
    fn each_shape_hit(
        &self,
        query: &ShapeCast,
        filter: &QueryFilter,
        reach: &Cell<f32>,
        mut found: impl FnMut(ShapeHit),
    ) -> Result<(), QueryError> {
        let moving = checked_shape(&query.shape, query.position, query.rotation)?;
        let direction = if !query.direction.is_finite() {
            return Err(QueryError::NonFinite {
                what: "cast direction",
                value: query.direction,
            });
        } else {
            checked_motion(query.direction, query.max_distance)?
        };
        let max = query.max_distance;
        // The swept shape's bounds as a box around a moving point: a collider can be hit only
        // where its bounds, grown by that box, meet the point's path.
        let (low, high) = moving.bounds();
        let (centre, half) = ((low + high) * 0.5, (high - low) * 0.5);
        self.tree().visit(
            |bounds| {
                bounds
                    .grown(half)
                    .ray_entry(centre, direction, reach.get())
                    .is_some()
            },
            |entry| {
                if !filter.admits(entry) {
                    return true;
                }
                let hit: Option<CastHit> = match entry.collider.shape {
                    Shape::Mesh { mesh } => self.mesh(mesh).and_then(|mesh| {
                        let local = Convex::into_frame(entry.position, entry.rotation);
                        let hit = mesh.cast_shape(
                            &moving.mapped(&local),
                            local(query.position, true),
                            local(direction, false),
                            max,
                        )?;
                        Some(CastHit {
                            point: entry.position + quat_rotate(entry.rotation, hit.point),
                            normal: quat_rotate(entry.rotation, hit.normal),
                            ..hit
                        })
                    }),
                    Shape::HalfSpace { normal } => cast_against_half_space(
                        &moving,
                        query.position,
                        direction,
                        max,
                        entry.position,
                        quat_rotate(entry.rotation, normal),
                    ),
                    shape => Convex::placed(&shape, entry.position, entry.rotation)
                        .and_then(|target| cast(&moving, query.position, direction, max, &target)),
                };
                if let Some(hit) = hit {
                    found(ShapeHit {
                        entity: entry.entity,
                        sim_id: entry.sim_id,
                        distance: hit.distance,
                        point: hit.point,
                        normal: hit.normal,
                    });
                }
                true
            },
        );
        Ok(())
    }
}

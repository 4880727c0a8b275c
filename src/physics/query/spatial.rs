//! [`SpatialQuery`]: the world's colliders asked a question from a fixed system: the first hit
//! or all hits of a ray, and the colliders containing a point. Shape casts and shape and box
//! overlaps are the same parameter's methods in [`super::shape_cast`].
//!
//! A query reads the colliders as they stand when the asking system runs: a system ordered after
//! `SimSet::Physics` sees this tick's positions (after the step), one before it the last tick's.
//! Bodies spawned, moved, put to sleep or despawned earlier in the tick are seen as they are now
//! (commands not yet applied are not). GPU bodies are not seen: their state lives on the device.
//!
//! Answers depend on simulation state only (transforms, colliders, layers, `SimId`s), never on
//! storage or thread order: the colliders whose bounds a query reaches (through
//! [`super::tree::ColliderTree`], read once per run of the system) are tested exactly, and hits
//! are ordered by (distance bits, `SimId`). So the same query gives the same answer on every
//! thread count and build and after a rollback. This module must never keep simulation state
//! between queries; the tree it keeps is a cache of the colliders as they stand.

use std::cell::Cell;
use std::sync::{Mutex, MutexGuard, PoisonError};

use bevy::ecs::system::{Local, SystemChangeTick, SystemParam};
use bevy::math::Vec3;
use bevy::prelude::{Entity, Query, Res, Transform};

use super::error::QueryError;
use super::shapes::{LocalHit, contains_point, ray_shape};
use super::tree::{ColliderTree, Entry};
use crate::physics::geometry::bvh::Bounds;
use crate::physics::geometry::mesh::TriangleMesh;
use crate::physics::{BodyClass, Collider, CollisionLayers, LevelMeshes, PhysicsBody, Shape};
use crate::runtime::sim_math::quat_rotate;
use crate::state::SimId;

/// Which colliders a query may hit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryFilter {
    /// Only colliders on one of these layers (`CollisionLayers::memberships`; a collider without
    /// `CollisionLayers` is on every layer).
    pub layers: u32,
    /// Colliders never hit (the asker itself, say).
    pub excluded: Vec<SimId>,
    /// Whether sensors are hit.
    pub sensors: bool,
}

impl Default for QueryFilter {
    /// Every layer, nothing excluded, sensors left out.
    fn default() -> Self {
        QueryFilter {
            layers: u32::MAX,
            excluded: Vec::new(),
            sensors: false,
        }
    }
}

impl QueryFilter {
    /// The same filter leaving out `body`.
    pub fn excluding(mut self, body: SimId) -> Self {
        self.excluded.push(body);
        self
    }

    /// The same filter hitting only colliders on `layers`.
    pub fn on_layers(mut self, layers: u32) -> Self {
        self.layers = layers;
        self
    }

    /// The same filter hitting sensors too.
    pub fn with_sensors(mut self) -> Self {
        self.sensors = true;
        self
    }

    pub(super) fn admits(&self, entry: &Entry) -> bool {
        entry.memberships & self.layers != 0
            && (self.sensors || !entry.collider.sensor)
            && !self.excluded.contains(&entry.sim_id)
    }
}

/// Where a ray or a cast shape hit a collider.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueryHit {
    /// The collider's entity.
    pub entity: Entity,
    /// Its simulation id.
    pub sim_id: SimId,
    /// Metres travelled from the ray's origin or the cast shape's start (0 when it starts inside
    /// or touching the collider).
    pub distance: f32,
    /// The world point hit: on the collider's surface; for a start inside, the ray's origin or
    /// the cast shape's position.
    pub point: Vec3,
    /// The collider's surface normal there, towards the ray or shape (unit length;
    /// `-direction` for a start inside).
    pub normal: Vec3,
}

/// Where a ray hit a collider.
pub type RayHit = QueryHit;

/// A ray: where it starts, which way it goes, how far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    /// The world point it starts at.
    pub origin: Vec3,
    /// Which way it goes (any length but zero; the query uses its direction).
    pub direction: Vec3,
    /// The farthest distance it reaches, in metres: from 0 (only colliders it starts in) to
    /// infinity.
    pub max_distance: f32,
}

impl Ray {
    /// A ray from `origin` along `direction`, `max_distance` metres long.
    pub fn new(origin: Vec3, direction: Vec3, max_distance: f32) -> Self {
        Ray {
            origin,
            direction,
            max_distance,
        }
    }

    /// The unit direction, after checking every input.
    fn checked(&self) -> Result<Vec3, QueryError> {
        if !self.origin.is_finite() {
            return Err(QueryError::NonFinite {
                what: "ray origin",
                value: self.origin,
            });
        }
        if !self.direction.is_finite() {
            return Err(QueryError::NonFinite {
                what: "ray direction",
                value: self.direction,
            });
        }
        checked_motion(self.direction, self.max_distance)
    }
}

/// The colliders a query reads: CPU bodies and static colliders, with what filters need.
type Colliders<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static SimId,
        &'static Transform,
        &'static Collider,
        Option<&'static CollisionLayers>,
        Option<&'static PhysicsBody>,
    ),
>;

/// Questions to the world's colliders, from a fixed system (see the module docs for which
/// tick's positions they see).
///
/// ```
/// use bevy::prelude::*;
/// use rusting_engine::physics::query::{QueryFilter, Ray, SpatialQuery};
///
/// fn line_of_sight(query: SpatialQuery) {
///     let ray = Ray::new(Vec3::new(0.0, 1.0, 0.0), Vec3::X, 30.0);
///     if let Ok(Some(hit)) = query.cast_ray(&ray, &QueryFilter::default()) {
///         info!("the ray hit {} at {} m", hit.sim_id, hit.distance);
///     }
/// }
/// ```
#[derive(SystemParam)]
pub struct SpatialQuery<'w, 's> {
    colliders: Colliders<'w, 's>,
    /// The colliders as this system's run reads them, and their tree (a cache, never state).
    cache: Local<'s, Mutex<ColliderTree>>,
    ticks: SystemChangeTick,
    meshes: Option<Res<'w, LevelMeshes>>,
}

impl SpatialQuery<'_, '_> {
    /// The level mesh of id `id`.
    pub(super) fn mesh(&self, id: u64) -> Option<&TriangleMesh> {
        self.meshes.as_deref().and_then(|meshes| meshes.get(id))
    }

    /// The colliders as they stand, read on the first query of this run of the system.
    pub(super) fn tree(&self) -> MutexGuard<'_, ColliderTree> {
        let mut tree = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let run = self.ticks.this_run();
        if tree.run != Some(run) {
            let entries = self
                .colliders
                .iter()
                .filter(|(.., body)| on_cpu(*body))
                .map(|(entity, id, transform, collider, layers, _)| Entry {
                    entity,
                    sim_id: *id,
                    position: transform.translation,
                    rotation: transform.rotation,
                    collider: *collider,
                    memberships: layers.map_or(u32::MAX, |l| l.memberships),
                })
                .collect();
            tree.refresh(entries, self.meshes.as_deref().unwrap_or(&NO_MESHES));
            tree.run = Some(run);
        }
        tree
    }

    /// The nearest hit of `ray` among the colliders `filter` admits (ties go to the lower
    /// `SimId`), or `None`.
    pub fn cast_ray(&self, ray: &Ray, filter: &QueryFilter) -> Result<Option<RayHit>, QueryError> {
        self.cast_ray_where(ray, filter, |_| true)
    }

    /// [`SpatialQuery::cast_ray`] among the colliders `predicate` also accepts.
    pub fn cast_ray_where(
        &self,
        ray: &Ray,
        filter: &QueryFilter,
        predicate: impl Fn(&RayHit) -> bool,
    ) -> Result<Option<RayHit>, QueryError> {
        nearest(ray.max_distance, predicate, |reach, found| {
            self.each_hit(ray, filter, reach, found)
        })
    }

    /// Every hit of `ray` (one per collider) among the colliders `filter` admits, nearest first,
    /// ties by `SimId`.
    pub fn ray_hits(&self, ray: &Ray, filter: &QueryFilter) -> Result<Vec<RayHit>, QueryError> {
        every(ray.max_distance, |reach, found| {
            self.each_hit(ray, filter, reach, found)
        })
    }

    /// The colliders that contain `point` (inside or on the surface) among those `filter`
    /// admits, in `SimId` order.
    pub fn point_overlaps(
        &self,
        point: Vec3,
        filter: &QueryFilter,
    ) -> Result<Vec<(Entity, SimId)>, QueryError> {
        if !point.is_finite() {
            return Err(QueryError::NonFinite {
                what: "point",
                value: point,
            });
        }
        let mut found = Vec::new();
        let at = Bounds {
            min: point,
            max: point,
        };
        self.tree().visit(
            |bounds| bounds.overlaps(&at),
            |entry| {
                let local = quat_rotate(entry.rotation.inverse(), point - entry.position);
                if filter.admits(entry) && contains_point(&entry.collider.shape, local) {
                    found.push((entry.entity, entry.sim_id));
                }
                true
            },
        );
        found.sort_by_key(|(_, id)| *id);
        Ok(found)
    }

    /// Every hit of `ray` among the admitted colliders whose bounds the ray enters within
    /// `reach` (which `found` may shorten as it goes, to prune farther colliders).
    fn each_hit(
        &self,
        ray: &Ray,
        filter: &QueryFilter,
        reach: &Cell<f32>,
        mut found: impl FnMut(RayHit),
    ) -> Result<(), QueryError> {
        let direction = ray.checked()?;
        self.tree().visit(
            |bounds| {
                bounds
                    .ray_entry(ray.origin, direction, reach.get())
                    .is_some()
            },
            |entry| {
                if !filter.admits(entry) {
                    return true;
                }
                let inverse = entry.rotation.inverse();
                let origin = quat_rotate(inverse, ray.origin - entry.position);
                let local_direction = quat_rotate(inverse, direction);
                let hit = match entry.collider.shape {
                    Shape::Mesh { mesh } => self.mesh(mesh).and_then(|mesh| {
                        let (distance, normal, _) =
                            mesh.cast_ray(origin, local_direction, ray.max_distance)?;
                        Some(LocalHit { distance, normal })
                    }),
                    ref shape => ray_shape(shape, origin, local_direction, ray.max_distance),
                };
                if let Some(hit) = hit {
                    found(RayHit {
                        entity: entry.entity,
                        sim_id: entry.sim_id,
                        distance: hit.distance,
                        point: ray.origin + direction * hit.distance,
                        normal: quat_rotate(entry.rotation, hit.normal),
                    });
                }
                true
            },
        );
        Ok(())
    }
}

/// The meshes of an app without `LevelMeshes`: none.
static NO_MESHES: std::sync::LazyLock<LevelMeshes> = std::sync::LazyLock::new(LevelMeshes::default);

/// The unit direction of a ray or cast, after checking it and the maximum distance.
pub(super) fn checked_motion(direction: Vec3, max_distance: f32) -> Result<Vec3, QueryError> {
    if max_distance.is_nan() || max_distance < 0.0 {
        return Err(QueryError::MaxDistance(max_distance));
    }
    let (unit, length) = crate::physics::cpu::math::direction_or(direction, Vec3::ZERO);
    if length == 0.0 {
        return Err(QueryError::ZeroDirection(direction));
    }
    Ok(unit)
}

fn on_cpu(body: Option<&PhysicsBody>) -> bool {
    body.is_none_or(|body| body.class == BodyClass::Cpu)
}

/// The nearest of the hits `each` reports (given the reach it may prune by, which shrinks to the
/// nearest accepted hit) that `predicate` accepts.
pub(super) fn nearest(
    max: f32,
    predicate: impl Fn(&QueryHit) -> bool,
    each: impl FnOnce(&Cell<f32>, &mut dyn FnMut(QueryHit)) -> Result<(), QueryError>,
) -> Result<Option<QueryHit>, QueryError> {
    let mut nearest: Option<QueryHit> = None;
    let reach = Cell::new(max);
    each(&reach, &mut |hit| {
        if predicate(&hit) && nearest.is_none_or(|best| order(&hit, &best).is_lt()) {
            nearest = Some(hit);
            reach.set(hit.distance);
        }
    })?;
    Ok(nearest)
}

/// Every hit `each` reports (within `max`), in [`order`].
pub(super) fn every(
    max: f32,
    each: impl FnOnce(&Cell<f32>, &mut dyn FnMut(QueryHit)) -> Result<(), QueryError>,
) -> Result<Vec<QueryHit>, QueryError> {
    let mut hits = Vec::new();
    each(&Cell::new(max), &mut |hit| hits.push(hit))?;
    hits.sort_by(order);
    Ok(hits)
}

/// Nearest first; at equal distances (compared as bits, so never by a rounding), lower `SimId`.
pub(super) fn order(a: &QueryHit, b: &QueryHit) -> std::cmp::Ordering {
    a.distance
        .to_bits()
        .cmp(&b.distance.to_bits())
        .then(a.sim_id.cmp(&b.sim_id))
}

//! [`SpatialQuery`]: the world's colliders asked a question from a fixed system: the first hit
//! or all hits of a ray, and the colliders containing a point.
//!
//! A query reads the colliders as they stand when the asking system runs: a system ordered after
//! `SimSet::Physics` sees this tick's positions (after the step), one before it the last tick's.
//! Bodies spawned, moved, put to sleep or despawned earlier in the tick are seen as they are now
//! (commands not yet applied are not). GPU bodies are not seen: their state lives on the device.
//!
//! Answers depend on simulation state only (transforms, colliders, layers, `SimId`s), never on
//! storage or thread order: every collider is tested, and hits are ordered by (distance bits,
//! `SimId`). So the same query gives the same answer on every thread count and build and after a
//! rollback. This module must never keep state between queries.

use bevy::ecs::system::SystemParam;
use bevy::math::Vec3;
use bevy::prelude::{Entity, Query, Transform};

use super::error::QueryError;
use super::shapes::{contains_point, ray_shape};
use crate::physics::{BodyClass, Collider, CollisionLayers, PhysicsBody};
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

    fn admits(&self, id: SimId, collider: &Collider, layers: Option<&CollisionLayers>) -> bool {
        let memberships = layers.map_or(u32::MAX, |l| l.memberships);
        memberships & self.layers != 0
            && (self.sensors || !collider.sensor)
            && !self.excluded.contains(&id)
    }
}

/// Where a ray hit a collider.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// The collider's entity.
    pub entity: Entity,
    /// Its simulation id.
    pub sim_id: SimId,
    /// Metres from the ray's origin (0 when the ray starts inside the collider).
    pub distance: f32,
    /// The world point hit.
    pub point: Vec3,
    /// The surface normal there (unit length; `-direction` for a ray starting inside).
    pub normal: Vec3,
}

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
        if self.max_distance.is_nan() || self.max_distance < 0.0 {
            return Err(QueryError::MaxDistance(self.max_distance));
        }
        let (unit, length) = crate::physics::cpu::math::direction_or(self.direction, Vec3::ZERO);
        if length == 0.0 {
            return Err(QueryError::ZeroDirection(self.direction));
        }
        Ok(unit)
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
}

impl SpatialQuery<'_, '_> {
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
        let mut nearest: Option<RayHit> = None;
        self.each_hit(ray, filter, |hit| {
            if predicate(&hit) && nearest.is_none_or(|best| order(&hit, &best).is_lt()) {
                nearest = Some(hit);
            }
        })?;
        Ok(nearest)
    }

    /// Every hit of `ray` (one per collider) among the colliders `filter` admits, nearest first,
    /// ties by `SimId`.
    pub fn ray_hits(&self, ray: &Ray, filter: &QueryFilter) -> Result<Vec<RayHit>, QueryError> {
        let mut hits = Vec::new();
        self.each_hit(ray, filter, |hit| hits.push(hit))?;
        hits.sort_by(order);
        Ok(hits)
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
        let mut found: Vec<(Entity, SimId)> = self
            .colliders
            .iter()
            .filter(|(_, id, _, collider, layers, body)| {
                on_cpu(*body) && filter.admits(**id, collider, *layers)
            })
            .filter(|(_, _, transform, collider, _, _)| {
                let local =
                    quat_rotate(transform.rotation.inverse(), point - transform.translation);
                contains_point(&collider.shape, local)
            })
            .map(|(entity, id, ..)| (entity, *id))
            .collect();
        found.sort_by_key(|(_, id)| *id);
        Ok(found)
    }

    fn each_hit(
        &self,
        ray: &Ray,
        filter: &QueryFilter,
        mut found: impl FnMut(RayHit),
    ) -> Result<(), QueryError> {
        let direction = ray.checked()?;
        for (entity, id, transform, collider, layers, body) in &self.colliders {
            if !on_cpu(body) || !filter.admits(*id, collider, layers) {
                continue;
            }
            let inverse = transform.rotation.inverse();
            let origin = quat_rotate(inverse, ray.origin - transform.translation);
            let local_direction = quat_rotate(inverse, direction);
            let Some(hit) = ray_shape(&collider.shape, origin, local_direction, ray.max_distance)
            else {
                continue;
            };
            found(RayHit {
                entity,
                sim_id: *id,
                distance: hit.distance,
                point: ray.origin + direction * hit.distance,
                normal: quat_rotate(transform.rotation, hit.normal),
            });
        }
        Ok(())
    }
}

fn on_cpu(body: Option<&PhysicsBody>) -> bool {
    body.is_none_or(|body| body.class == BodyClass::Cpu)
}

/// Nearest first; at equal distances (compared as bits, so never by a rounding), lower `SimId`.
fn order(a: &RayHit, b: &RayHit) -> std::cmp::Ordering {
    a.distance
        .to_bits()
        .cmp(&b.distance.to_bits())
        .then(a.sim_id.cmp(&b.sim_id))
}

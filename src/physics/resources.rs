//! Physics resources: [`PhysicsSettings`], [`PhysicsIdRegistry`] and the tick's [`CollisionEvents`].
//!
//! All of them are inserted when the app is built (resources are entities in bevy 0.19). This
//! module owns their data and bookkeeping; it must never run the solver.

use std::collections::BTreeSet;

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::math::Vec3;
use bevy::prelude::{Entity, Resource};
use serde::{Deserialize, Serialize};

use super::components::PhysicsId;
use crate::state::SimId;

/// Velocity passes per tick: one biased and one relaxing pass in each of the `SOLVER_SUBSTEPS`
/// substeps. Fixed, with no early exit, so every run does the same work.
pub const SOLVER_ITERATIONS: usize = 8;
/// Substeps per tick (see `physics::cpu::solver`).
pub const SOLVER_SUBSTEPS: usize = 4;
/// Ticks a group of touching bodies must stay below the sleep thresholds before it sleeps: half a
/// second at the default 60 Hz, Box2D v3's time to sleep (Jolt's default is the same). A group
/// that settles pays for every tick it waits awake, a full solve of bodies that barely move, so
/// this is most of what a scene that comes to rest costs after it lands.
pub const SLEEP_STEPS: u32 = 30;

/// How the world simulates (simulation state).
#[derive(Resource, Clone, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState)]
pub struct PhysicsSettings {
    /// Acceleration of gravity, m/s².
    pub gravity: Vec3,
    /// Penetration left alone, so resting contacts do not jitter (m).
    pub linear_slop: f32,
    /// Cap on the speed position correction may push at (m/s).
    pub max_correction_speed: f32,
    /// Contacts start this far before touching, so the solver can stop bodies at the surface (m).
    pub speculative_distance: f32,
    /// Approach speeds below this do not bounce (m/s).
    pub restitution_threshold: f32,
    /// Whether bodies at rest fall asleep.
    pub sleep_enabled: bool,
    /// Below this speed a body counts as resting (m/s).
    pub sleep_linear_speed: f32,
    /// Below this angular speed a body counts as resting (rad/s).
    pub sleep_angular_speed: f32,
}

impl Default for PhysicsSettings {
    fn default() -> Self {
        PhysicsSettings {
            gravity: Vec3::new(0.0, -9.81, 0.0),
            linear_slop: 0.0005,
            max_correction_speed: 3.0,
            speculative_distance: 0.02,
            restitution_threshold: 1.0,
            sleep_enabled: true,
            sleep_linear_speed: 0.05,
            sleep_angular_speed: 0.05,
        }
    }
}

/// Stable slot ids for physics bodies (simulation state): a GPU body's place in the device's
/// buffers.
///
/// New bodies get the lowest free slot, in `SimId` order; a despawned body's slot is free again
/// from the next tick.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq, rusting_macros::SimState)]
pub struct PhysicsIdRegistry {
    /// `(body, slot)`, sorted by body.
    assigned: Vec<(SimId, PhysicsId)>,
    /// Slots below `next` that are free.
    free: BTreeSet<u32>,
    /// The lowest slot never handed out.
    next: u32,
}

impl PhysicsIdRegistry {
    /// The slot of `body`, if it has one.
    pub fn get(&self, body: SimId) -> Option<PhysicsId> {
        self.assigned
            .binary_search_by_key(&body, |(id, _)| *id)
            .ok()
            .map(|i| self.assigned[i].1)
    }

    /// How many bodies hold a slot.
    pub fn len(&self) -> usize {
        self.assigned.len()
    }

    /// Whether no body holds a slot.
    pub fn is_empty(&self) -> bool {
        self.assigned.is_empty()
    }

    /// The registry's whole state: assigned slots by body, free slots, and the next fresh slot.
    pub fn state(&self) -> (&[(SimId, PhysicsId)], &BTreeSet<u32>, u32) {
        (&self.assigned, &self.free, self.next)
    }

    /// Brings the registry up to `present`, the bodies simulating now, sorted by `SimId`: frees
    /// the slots of bodies no longer present, then gives each new body the lowest free slot.
    /// Returns each present body's slot, in the same order.
    pub fn sync(&mut self, present: &[SimId]) -> Vec<PhysicsId> {
        // The same bodies as last tick (the usual case): every slot stays.
        if self.assigned.len() == present.len()
            && self
                .assigned
                .iter()
                .zip(present)
                .all(|((id, _), p)| id == p)
        {
            return self.assigned.iter().map(|(_, slot)| *slot).collect();
        }
        let mut kept = Vec::with_capacity(present.len());
        let mut old = self.assigned.iter().peekable();
        let mut fresh = Vec::new();
        for &entity in present {
            while let Some(&&(gone, slot)) = old.peek() {
                if gone >= entity {
                    break;
                }
                self.free.insert(slot.0);
                old.next();
            }
            match old.peek() {
                Some(&&(same, slot)) if same == entity => {
                    kept.push((entity, Some(slot)));
                    old.next();
                }
                _ => {
                    fresh.push(kept.len());
                    kept.push((entity, None));
                }
            }
        }
        for &(_, slot) in old {
            self.free.insert(slot.0);
        }
        for index in fresh {
            let slot = match self.free.pop_first() {
                Some(slot) => slot,
                None => {
                    self.next += 1;
                    self.next - 1
                }
            };
            kept[index].1 = Some(PhysicsId(slot));
        }
        self.assigned = kept
            .into_iter()
            .map(|(entity, slot)| (entity, slot.expect("every present body has a slot")))
            .collect();
        self.assigned.iter().map(|(_, slot)| *slot).collect()
    }
}

/// Whether a contact began or ended.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    rusting_macros::SimState,
)]
pub enum CollisionEventKind {
    /// The two bodies touch now and did not on the previous tick.
    Started,
    /// The two bodies touched on the previous tick and do not now (or one of them is gone).
    Ended,
}

/// Two bodies began or stopped touching.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, rusting_macros::SimState,
)]
pub struct CollisionEvent {
    /// The tick the change happened on (ticks completed before it).
    pub tick: u64,
    /// The body with the lower simulation id.
    pub a: SimId,
    /// The body with the higher simulation id.
    pub b: SimId,
    /// `a`'s entity this tick (`Entity::PLACEHOLDER` when the body is gone): a handle for
    /// queries, never an order.
    #[sim_state(skip = "a handle resolved from `a` every tick")]
    pub entity_a: Entity,
    /// `b`'s entity this tick (`Entity::PLACEHOLDER` when the body is gone).
    #[sim_state(skip = "a handle resolved from `b` every tick")]
    pub entity_b: Entity,
    /// Started or ended.
    pub kind: CollisionEventKind,
    /// Counts up by one per event over the whole run.
    pub id: u64,
}

impl CollisionEvent {
    /// Whether `body` is one of the two bodies.
    pub fn involves(&self, body: SimId) -> bool {
        self.a == body || self.b == body
    }

    /// The other body, when `body` is one of the two.
    pub fn other(&self, body: SimId) -> Option<SimId> {
        pair_other(self.a, self.b, body)
    }

    /// The other body's entity this tick, when `body` is one of the two.
    pub fn other_entity(&self, body: SimId) -> Option<Entity> {
        pair_other(self.a, self.b, body).map(|o| {
            if o == self.a {
                self.entity_a
            } else {
                self.entity_b
            }
        })
    }
}

/// The one of `a` and `b` that is not `body`, when `body` is one of them.
fn pair_other(a: SimId, b: SimId, body: SimId) -> Option<SimId> {
    if body == a {
        Some(b)
    } else if body == b {
        Some(a)
    } else {
        None
    }
}

/// Another body as seen from one body: what [`CollisionEvents::touching`] and its companions list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Touch {
    /// The other body.
    pub other: SimId,
    /// Its entity this tick (`Entity::PLACEHOLDER` when it is gone).
    pub entity: Entity,
    /// The unit contact normal from this body towards the other (zero for an event that ended,
    /// which has no contact).
    pub normal: Vec3,
}

impl MapEntities for CollisionEvent {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.entity_a = mapper.get_mapped(self.entity_a);
        self.entity_b = mapper.get_mapped(self.entity_b);
    }
}

/// The collision events of the latest physics tick, ordered by `(a, b, id)`.
///
/// Fixed systems after `SimSet::Physics` read the current tick's events here. The list is replaced
/// every tick, so a presentation system that needs every event should read it from a tick hook.
#[derive(Resource, Clone, Debug, Default, PartialEq, rusting_macros::SimState)]
#[component(map_entities)]
pub struct CollisionEvents {
    /// This tick's events.
    pub events: Vec<CollisionEvent>,
    /// Every pair touching this tick, in body order, with the contact normal from `a` to `b`:
    /// what character controllers stand on. A pair the narrow phase skipped (both bodies asleep
    /// or unmovable) keeps the report of the tick that last looked at it.
    pub contacts: Vec<ContactReport>,
}

/// Two bodies touching during a tick.
#[derive(Clone, Copy, Debug, PartialEq, rusting_macros::SimState)]
pub struct ContactReport {
    /// The body with the lower simulation id.
    pub a: SimId,
    /// The body with the higher simulation id.
    pub b: SimId,
    /// `a`'s entity (a handle for queries).
    #[sim_state(skip = "a handle resolved from `a` every tick")]
    pub entity_a: Entity,
    /// `b`'s entity.
    #[sim_state(skip = "a handle resolved from `b` every tick")]
    pub entity_b: Entity,
    /// Unit contact normal from `a` towards `b`.
    pub normal: Vec3,
}

impl MapEntities for ContactReport {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.entity_a = mapper.get_mapped(self.entity_a);
        self.entity_b = mapper.get_mapped(self.entity_b);
    }
}

impl MapEntities for CollisionEvents {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.events.map_entities(mapper);
        self.contacts.map_entities(mapper);
    }
}

impl ContactReport {
    /// Whether `body` is one of the two bodies.
    pub fn involves(&self, body: SimId) -> bool {
        self.a == body || self.b == body
    }

    /// The other body and the contact normal from `body` towards it, when `body` is one of the two.
    pub fn seen_from(&self, body: SimId) -> Option<Touch> {
        let other = pair_other(self.a, self.b, body)?;
        Some(if body == self.a {
            Touch {
                other,
                entity: self.entity_b,
                normal: self.normal,
            }
        } else {
            Touch {
                other,
                entity: self.entity_a,
                normal: -self.normal,
            }
        })
    }
}

impl CollisionEvents {
    /// Every body `body` touches this tick, in simulation-id order, with the contact normal from
    /// `body` towards it.
    pub fn touching(&self, body: SimId) -> Vec<Touch> {
        let mut touches: Vec<Touch> = self
            .contacts
            .iter()
            .filter_map(|c| c.seen_from(body))
            .collect();
        touches.sort_by_key(|t| t.other);
        touches
    }

    /// The bodies `body` started (`CollisionEventKind::Started`) or stopped
    /// (`CollisionEventKind::Ended`) touching this tick, in simulation-id order.
    pub fn changed(&self, body: SimId, kind: CollisionEventKind) -> Vec<Touch> {
        let mut touches: Vec<Touch> = self
            .events
            .iter()
            .filter(|e| e.kind == kind)
            .filter_map(|e| {
                let other = e.other(body)?;
                let normal = self
                    .contacts
                    .iter()
                    .find_map(|c| c.seen_from(body).filter(|t| t.other == other))
                    .map_or(Vec3::ZERO, |t| t.normal);
                Some(Touch {
                    other,
                    entity: e.other_entity(body)?,
                    normal,
                })
            })
            .collect();
        touches.sort_by_key(|t| t.other);
        touches.dedup_by_key(|t| t.other);
        touches
    }

    /// The bodies `body` started touching this tick, in simulation-id order.
    pub fn started_touching(&self, body: SimId) -> Vec<Touch> {
        self.changed(body, CollisionEventKind::Started)
    }

    /// The bodies `body` stopped touching this tick, in simulation-id order.
    pub fn stopped_touching(&self, body: SimId) -> Vec<Touch> {
        self.changed(body, CollisionEventKind::Ended)
    }

    /// Whether body `body` rests on something this tick: it touches a body whose contact normal
    /// points up into it by more than `min_up` (the cosine of the steepest slope that still
    /// counts).
    pub fn is_supported(&self, body: SimId, min_up: f32) -> bool {
        self.contacts
            .iter()
            .any(|c| (c.b == body && c.normal.y > min_up) || (c.a == body && -c.normal.y > min_up))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_stable_and_the_lowest_free_one_is_reused() {
        let sorted = |ids: &[u64]| ids.iter().map(|&i| SimId(i)).collect::<Vec<_>>();
        let slot_of = |registry: &PhysicsIdRegistry, i: u64| registry.get(SimId(i));
        let mut registry = PhysicsIdRegistry::default();
        let first = sorted(&[3, 5, 9]);
        let ids = registry.sync(&first);
        assert_eq!(ids, [PhysicsId(0), PhysicsId(1), PhysicsId(2)]);
        let (slot_3, slot_5, slot_9) = (
            slot_of(&registry, 3).unwrap(),
            slot_of(&registry, 5).unwrap(),
            slot_of(&registry, 9).unwrap(),
        );

        // 5 leaves and 11 arrives: 3 and 9 keep their slots, 11 takes 5's.
        let second = sorted(&[3, 9, 11]);
        let ids = registry.sync(&second);
        assert_eq!(slot_of(&registry, 3), Some(slot_3));
        assert_eq!(slot_of(&registry, 9), Some(slot_9));
        assert_eq!(slot_of(&registry, 11), Some(slot_5));
        assert_eq!(slot_of(&registry, 5), None);
        let expected: Vec<PhysicsId> = second.iter().map(|&e| registry.get(e).unwrap()).collect();
        assert_eq!(ids, expected);

        // Two leave, two arrive: the two freed slots are reused, lowest first in `SimId` order.
        let third = sorted(&[1, 11, 12]);
        registry.sync(&third);
        let mut slots: Vec<u32> = third.iter().map(|&e| registry.get(e).unwrap().0).collect();
        slots.sort();
        assert_eq!(slots, [0, 1, 2]);
        assert_eq!(registry.len(), 3);
    }
}

/// A joint broke: its force or torque went past its limit on this tick.
#[derive(Clone, Copy, Debug, PartialEq, rusting_macros::SimState)]
pub struct JointBroke {
    /// The tick it broke on (ticks completed before it).
    pub tick: u64,
    /// The joint's simulation id.
    pub joint: SimId,
    /// The joint's entity this tick: a handle, never an order.
    #[sim_state(skip = "a handle resolved from `joint` every tick")]
    pub entity: Entity,
    /// The first body (`None` for the world).
    pub a: Option<SimId>,
    /// The second body.
    pub b: SimId,
    /// The force the joint carried on its last substep (N).
    pub force: f32,
    /// The torque it carried (N·m).
    pub torque: f32,
    /// Numbered with the collision events, in one count over the whole run.
    pub id: u64,
}

impl MapEntities for JointBroke {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.entity = mapper.get_mapped(self.entity);
    }
}

/// The joints that broke on the latest physics tick, ordered by joint `SimId` (simulation state).
#[derive(Resource, Clone, Debug, Default, PartialEq, rusting_macros::SimState)]
#[component(map_entities)]
pub struct JointEvents {
    /// This tick's breaks.
    pub broke: Vec<JointBroke>,
}

impl MapEntities for JointEvents {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.broke.map_entities(mapper);
    }
}

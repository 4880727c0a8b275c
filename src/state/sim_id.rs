//! [`SimId`]: the stable identity of every entity the simulation owns, and [`SimIdAllocator`],
//! the counter that hands it out.
//!
//! Bevy's `Entity` is a handle, not an identity the simulation may depend on: in bevy 0.19 every
//! resource, window, camera, mesh and observer is an entity too, so a plugin that inserts a
//! resource or a presentation entity spawned before a body shifts the ids of everything after it,
//! and the allocator reuses freed ids in an order that depends on what presentation despawned. A
//! rollback that respawns an entity gets another `Entity` as well. So every order the simulation
//! takes (solver bodies, contact pairs, collision events, the state hash, comparisons, reports)
//! and every key it stores is a `SimId`, never `Entity` bits.
//!
//! How ids are handed out: every simulation component requires `SimId`, which arrives as
//! [`SimId::UNASSIGNED`]; its `on_add` hook replaces that with the allocator's next id, in the
//! order entities are spawned. Scene entities are spawned in cooked order when the app is built,
//! so they take ids `0, 1, 2, ...` in scene order; entities spawned by fixed systems take the next
//! ones in the order those systems spawn them. The allocator is a resource that is itself
//! simulation state (hashed and snapshotted), so a rollback rewinds it and re-simulated spawns get
//! the same ids again. Presentation entities and resources never hold a `SimId`, so they never
//! advance the counter. A `SimId` given explicitly (a snapshot restoring an entity) is kept.
//!
//! This module owns the id and the counter; it must never look at which components an entity
//! holds.

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::{Component, Resource};
use serde::{Deserialize, Serialize};

/// The stable simulation identity of an entity (simulation state).
///
/// Ids are never reused within a run. Do not write a `SimId` yourself: the engine assigns it when
/// a simulation component is added, and snapshots put it back.
#[derive(
    Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[component(on_add = assign_sim_id)]
pub struct SimId(pub u64);

impl SimId {
    /// The value a `SimId` holds between being required and being assigned; never seen by a
    /// system when the engine's [`SimIdAllocator`] is present.
    pub const UNASSIGNED: SimId = SimId(u64::MAX);

    /// The id as a number.
    pub fn get(self) -> u64 {
        self.0
    }

    /// Whether the allocator has assigned this id.
    pub fn is_assigned(self) -> bool {
        self != SimId::UNASSIGNED
    }
}

impl Default for SimId {
    /// [`SimId::UNASSIGNED`]: the allocator replaces it when the component is added.
    fn default() -> Self {
        SimId::UNASSIGNED
    }
}

impl std::fmt::Display for SimId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_assigned() {
            write!(f, "#{}", self.0)
        } else {
            f.write_str("#unassigned")
        }
    }
}

/// Hands out [`SimId`]s in spawn order (simulation state: hashed, and rewound by a restore).
#[derive(
    Resource,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    rusting_macros::SimState,
)]
pub struct SimIdAllocator {
    /// The id the next simulation entity gets.
    pub next: u64,
}

impl SimIdAllocator {
    /// Takes the next id.
    pub fn allocate(&mut self) -> SimId {
        let id = SimId(self.next);
        self.next += 1;
        id
    }
}

/// `SimId`'s `on_add` hook: an unassigned id takes the allocator's next one.
fn assign_sim_id(mut world: DeferredWorld, context: HookContext) {
    let unassigned = world
        .get::<SimId>(context.entity)
        .is_some_and(|id| !id.is_assigned());
    if !unassigned {
        return;
    }
    let Some(mut allocator) = world.get_resource_mut::<SimIdAllocator>() else {
        return;
    };
    let id = allocator.allocate();
    if let Some(mut slot) = world.get_mut::<SimId>(context.entity) {
        *slot = id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::prelude::World;

    #[derive(Component)]
    #[require(SimId)]
    struct Body;

    /// Fails if ids follow `Entity` order rather than spawn order, or if an explicit id is
    /// replaced: presentation entities spawned in between must not take ids.
    #[test]
    fn ids_follow_spawn_order_and_skip_presentation() {
        let mut world = World::new();
        world.insert_resource(SimIdAllocator::default());
        let a = world.spawn(Body).id();
        world.spawn_empty();
        let b = world.spawn(Body).id();
        let kept = world.spawn((Body, SimId(40))).id();
        world.despawn(a);
        let c = world.spawn(Body).id();
        let ids: Vec<u64> = [b, kept, c]
            .iter()
            .map(|&e| world.get::<SimId>(e).unwrap().0)
            .collect();
        assert_eq!(ids, [1, 40, 2]);
        assert_eq!(world.resource::<SimIdAllocator>().next, 3);
    }
}

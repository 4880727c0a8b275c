//! [`WorldPlan`] and [`world_plan`]: what the world-state hash works out from the shape of a
//! world and keeps between ticks, so that a tick's hash reads values and nothing else.
//!
//! The hash needs, for every archetype, whether it holds simulation entities and which registered
//! types it holds, and, for every registered type, its `ComponentId` in this world. None of that
//! changes from tick to tick: a world's component ids only grow, an archetype's set of components
//! never changes, and archetypes are never removed. So it is worked out once per archetype and
//! again only when the world registers a new component type, the registry changes (a
//! registration empties the registry's slot for what is derived from it, where the plans are
//! kept), or the same registry is asked about another world. For a world of twenty entities, such
//! as the starter game, looking these up on every tick cost a third of the hash.
//!
//! Scratch, never state: a kept plan is never hashed, snapshotted or compared, and a hash computed
//! with no kept plan or with one reads the same bytes in the same order. This module must
//! never read a component's value.

use std::sync::Arc;

use bevy::ecs::archetype::Archetype;
use bevy::ecs::component::ComponentId;
use bevy::ecs::resource::IsResource;
use bevy::ecs::world::WorldId;
use bevy::prelude::{Transform, World};

use super::registry::{SimEntry, SimKind, SimRegistry, TransformIsCopy};
use super::sim_id::SimId;

/// The registry resolved against one world: its types' component ids.
pub(crate) struct Resolved {
    /// The world, and how many component types it had registered: a key that changes whenever a
    /// type is registered. (bevy also counts types queued for registration, and applying a queued
    /// one can leave the count where it was; neither the engine nor bevy's plugins queue them.)
    key: (WorldId, usize),
    /// The registered simulation components this world knows, in name order, with their ids.
    components: Vec<(SimEntry, ComponentId)>,
    /// The rules that can mark a `Transform` a copy, by the id of the component each reads.
    copy_rules: Vec<(ComponentId, TransformIsCopy)>,
    /// Every registered simulation resource in name order, with its id where the world has one.
    pub resources: Vec<(SimEntry, Option<ComponentId>)>,
    /// `SimId`'s id.
    sim_id: Option<ComponentId>,
    /// The marker of resource entities.
    is_resource: Option<ComponentId>,
    /// `Transform`'s id.
    transform: Option<ComponentId>,
}

impl Resolved {
    fn of(registry: &SimRegistry, world: &World) -> Resolved {
        let components = registry.resolved(world, &[SimKind::Component]);
        let copy_rules = registry
            .transform_copy_rules()
            .iter()
            .filter_map(|(type_id, rule)| {
                Some((world.components().get_id(*type_id)?, rule.clone()))
            })
            .collect();
        let resources = registry
            .entries()
            .iter()
            .filter(|entry| entry.kind == SimKind::Resource)
            .map(|entry| (*entry, world.components().get_id(entry.type_id)))
            .collect();
        Resolved {
            key: key_of(world),
            components,
            copy_rules,
            resources,
            sim_id: world.component_id::<SimId>(),
            is_resource: world.component_id::<IsResource>(),
            transform: world.component_id::<Transform>(),
        }
    }

    /// What the hash reads of `archetype`'s entities, or `None` when they are not simulation
    /// entities. Does not look at whether the archetype holds any entity now.
    fn archetype(&self, archetype: &Archetype) -> Option<ArchetypeIds> {
        let has = |id: Option<ComponentId>| id.is_some_and(|id| archetype.contains(id));
        if !has(self.sim_id) || has(self.is_resource) {
            return None;
        }
        let components: Vec<(SimEntry, ComponentId)> = self
            .components
            .iter()
            .filter(|(_, id)| archetype.contains(*id))
            .copied()
            .collect();
        let transform = self
            .transform
            .filter(|&id| !components.is_empty() && archetype.contains(id));
        let copy_rules = self
            .copy_rules
            .iter()
            .filter(|(id, _)| transform.is_some() && archetype.contains(*id))
            .cloned()
            .collect();
        Some(ArchetypeIds {
            sim_id: self.sim_id?,
            transform,
            copy_rules,
            components,
        })
    }
}

/// The ids of what the hash reads of one archetype of simulation entities.
#[derive(Clone)]
pub(crate) struct ArchetypeIds {
    /// `SimId`'s.
    pub sim_id: ComponentId,
    /// `Transform`'s, when the entities hold a simulation component and a `Transform`.
    pub transform: Option<ComponentId>,
    /// The rules that can mark the `Transform` a copy, with the component each reads.
    pub copy_rules: Vec<(ComponentId, TransformIsCopy)>,
    /// Its registered simulation components, in name order.
    pub components: Vec<(SimEntry, ComponentId)>,
}

/// A world's resolved registry and its archetypes' plans, by archetype index.
#[derive(Clone)]
pub(crate) struct WorldPlan {
    /// The registry's ids in this world.
    pub resolved: Arc<Resolved>,
    /// Per archetype index: `None` for an archetype of no simulation entity.
    pub archetypes: Arc<Vec<Option<ArchetypeIds>>>,
}

impl WorldPlan {
    /// The plan of `archetype`, when it holds simulation entities.
    pub fn archetype(&self, archetype: &Archetype) -> Option<&ArchetypeIds> {
        self.archetypes.get(archetype.id().index())?.as_ref()
    }
}

/// What the hash reads of `world` by `registry`'s registrations: the plan kept in the registry's
/// [`DerivedSlot`](super::registry::DerivedSlot), brought up to date with any archetype made since,
/// or a new one when the world, its component types or the registrations changed.
pub(crate) fn world_plan(registry: &SimRegistry, world: &World) -> WorldPlan {
    let mut slot = registry.derived().lock();
    let kept = slot
        .as_mut()
        .and_then(|kept| kept.downcast_mut::<WorldPlan>())
        .filter(|plan| plan.resolved.key == key_of(world));
    let plan = match kept {
        Some(plan) => plan,
        None => {
            let fresh = WorldPlan {
                resolved: Arc::new(Resolved::of(registry, world)),
                archetypes: Arc::default(),
            };
            slot.insert(Box::new(fresh))
                .downcast_mut::<WorldPlan>()
                .expect("just stored")
        }
    };
    let known = plan.archetypes.len();
    let archetypes = world.archetypes();
    if known < archetypes.len() {
        let resolved = Arc::clone(&plan.resolved);
        let planned = Arc::make_mut(&mut plan.archetypes);
        for archetype in archetypes.iter().skip(known) {
            // Archetypes are listed by index, so each lands at its own.
            debug_assert_eq!(archetype.id().index(), planned.len());
            planned.push(resolved.archetype(archetype));
        }
    }
    plan.clone()
}

/// The key a resolution is valid for.
fn key_of(world: &World) -> (WorldId, usize) {
    (world.id(), world.components().len())
}

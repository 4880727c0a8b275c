//! [`find_undeclared`]: state a fixed tick changed that nobody declared.
//!
//! A value a tick writes is simulation state whether or not anyone said so. If its type is not
//! registered, the hash never sees it, snapshots leave it behind and comparisons cannot name it: a
//! replay "matches" while the game diverges. So after a tick the engine looks at bevy's change
//! ticks (every write through `Mut`/`ResMut`, and every insert, marks the component with the
//! world's current change tick) and reports the first component or resource the tick changed
//! whose type is of none of the kinds: registered simulation state or presentation (`SimRegistry`),
//! or copied or ignored by snapshots (`SnapshotRegistry`). A `Transform` counts as declared only
//! on an entity that holds a simulation component (or `Simulated`) or a registered presentation
//! component.
//!
//! The check walks every entity of every archetype holding an undeclared type or a `Transform`,
//! so it costs time in proportion to those; [`UndeclaredCheck`] says when it runs. This module
//! must never change the world.

use std::any::TypeId;

use bevy::ecs::change_detection::Tick;
use bevy::ecs::component::ComponentId;
use bevy::ecs::resource::IsResource;
use bevy::prelude::{Name, Transform, World};

use super::registry::{SimKind, sim_registry};
use super::sim_id::SimId;
use super::snapshot::SnapshotRegistry;

/// When the undeclared-state check runs: on in debug builds of the engine, in every
/// `rusting determinism` configuration and in synctests; off in release games unless
/// `RUSTING_CHECK_UNDECLARED=1` asks for it (`0` turns it off in a debug build).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UndeclaredCheck {
    /// Whether it runs after every tick.
    pub enabled: bool,
}

impl UndeclaredCheck {
    /// The environment variable that overrides the default.
    pub const VARIABLE: &'static str = "RUSTING_CHECK_UNDECLARED";

    /// The default for this build and environment.
    pub fn from_environment() -> Self {
        let enabled = match std::env::var(Self::VARIABLE).as_deref() {
            Ok("1") => true,
            Ok("0") => false,
            _ => cfg!(debug_assertions),
        };
        UndeclaredCheck { enabled }
    }
}

/// A component or resource a tick changed whose type nobody declared.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error(
    "tick {tick} changed {what}, which is not declared as simulation state: {advice}",
    what = self.what(),
    advice = self.advice()
)]
pub struct UndeclaredState {
    /// The tick that changed it (ticks completed, counting it).
    pub tick: u64,
    /// The type's name.
    pub type_name: String,
    /// The simulation entity holding it, when it has a `SimId`.
    pub sim_id: Option<SimId>,
    /// The entity's `Name`, when it has one.
    pub name: Option<String>,
    /// Whether it is a resource.
    pub resource: bool,
    /// Whether it is the `Transform` of an entity that is not simulated.
    pub transform: bool,
}

impl UndeclaredState {
    fn what(&self) -> String {
        if self.resource {
            return format!("resource `{}`", self.type_name);
        }
        let mut entity = match self.sim_id {
            Some(id) => format!("entity {id}"),
            None => "an entity without a SimId".to_owned(),
        };
        if let Some(name) = &self.name {
            entity.push_str(&format!(" `{name}`"));
        }
        format!("`{}` on {entity}", self.type_name)
    }

    fn advice(&self) -> &'static str {
        if self.transform {
            "the entity holds no simulation component; mark it `Simulated` (its Transform is then \
             hashed and rolled back), or give it a registered presentation component"
        } else if self.resource {
            "register it with `register_sim_resource` (hashed and rolled back), `copy_in_snapshots` \
             (rolled back, never hashed) or `ignore_in_snapshots`"
        } else {
            "register it with `register_sim_component` (hashed and rolled back), \
             `register_presentation_component` (rolled back, never hashed) or `ignore_in_snapshots`"
        }
    }
}

/// The first component or resource that changed between change ticks `start` and `end` (one fixed
/// tick, `tick`) and that nobody declared.
pub fn find_undeclared(
    world: &World,
    start: Tick,
    end: Tick,
    tick: u64,
) -> Option<UndeclaredState> {
    let registry = sim_registry(world);
    let snapshots = world
        .get_resource::<SnapshotRegistry>()
        .cloned()
        .unwrap_or_default();
    let transform = world.component_id::<Transform>();
    let is_resource = world.component_id::<IsResource>();
    let marks: Vec<ComponentId> = registry
        .resolved(world, &[SimKind::Component, SimKind::Presentation])
        .into_iter()
        .map(|(_, id)| id)
        .collect();
    let declared = |id: ComponentId| -> bool {
        let Some(info) = world.components().get_info(id) else {
            return true;
        };
        let Some(type_id) = info.type_id() else {
            return false;
        };
        type_id == TypeId::of::<IsResource>()
            || type_id == TypeId::of::<SimId>()
            || registry.get(type_id).is_some()
            || snapshots.declares(world, id)
    };
    for archetype in world.archetypes().iter() {
        if archetype.is_empty() {
            continue;
        }
        let resource = is_resource.is_some_and(|id| archetype.contains(id));
        let marked = marks.iter().any(|&id| archetype.contains(id));
        for &id in archetype.components() {
            let is_transform = Some(id) == transform;
            if (is_transform && marked) || (!is_transform && declared(id)) {
                continue;
            }
            for row in archetype.entities() {
                let entity = world.entity(row.id());
                let changed = entity
                    .get_change_ticks_by_id(id)
                    .is_some_and(|ticks| ticks.is_changed(start, end));
                if !changed {
                    continue;
                }
                let type_name = world
                    .components()
                    .get_info(id)
                    .map_or_else(|| format!("{id:?}"), |info| info.name().to_string());
                return Some(UndeclaredState {
                    tick,
                    type_name,
                    sim_id: entity.get::<SimId>().copied(),
                    name: entity.get::<Name>().map(|n| n.as_str().to_owned()),
                    resource,
                    transform: is_transform,
                });
            }
        }
    }
    None
}

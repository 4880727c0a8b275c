//! Declaring simulation state from `Plugin::build`: [`SimStateAppExt`] and [`SnapshotAppExt`] on
//! bevy's `App` (the engine `App` has the same methods). One file for both, because every
//! declaration writes the same two registries: [`SimRegistry`] (what is hashed, compared and
//! reported) and [`SnapshotRegistry`] (what snapshots copy or leave alone).
//!
//! This module must never hash or copy anything: it only writes the declarations, while the app
//! is built.

use bevy::ecs::component::{Component, Mutable};
use bevy::ecs::resource::IsResource;
use bevy::prelude::{Resource, World};

use super::registry::{SimKind, SimRegistry};
use super::sim_id::SimId;
use super::sim_state::SimState;
use super::snapshot::SnapshotRegistry;

/// Declaring simulation state from `Plugin::build`, on bevy's `App` (the engine `App` has the
/// same methods).
pub trait SimStateAppExt {
    /// `T` is simulation state on entities: hashed after every tick, copied by snapshots, compared
    /// down to the field, listed in reports; every entity holding it gets a `SimId`.
    fn register_sim_component<T: Component<Mutability = Mutable> + Clone + SimState>(
        &mut self,
    ) -> &mut Self;
    /// `T` is a simulation resource: hashed after every tick, copied by snapshots, compared.
    fn register_sim_resource<T: Resource<Mutability = Mutable> + Clone + SimState>(
        &mut self,
    ) -> &mut Self;
    /// `T` is presentation that snapshots copy and the hash never sees; every entity holding it
    /// gets a `SimId`, so a rollback finds it again.
    fn register_presentation_component<T: Component<Mutability = Mutable> + Clone>(
        &mut self,
        name: &'static str,
    ) -> &mut Self;
}

impl SimStateAppExt for bevy::app::App {
    fn register_sim_component<T: Component<Mutability = Mutable> + Clone + SimState>(
        &mut self,
    ) -> &mut Self {
        self.register_snapshot_component::<T>()
    }

    fn register_sim_resource<T: Resource<Mutability = Mutable> + Clone + SimState>(
        &mut self,
    ) -> &mut Self {
        self.register_snapshot_component::<T>()
    }

    fn register_presentation_component<T: Component<Mutability = Mutable> + Clone>(
        &mut self,
        name: &'static str,
    ) -> &mut Self {
        let world = self.world_mut();
        world
            .get_resource_or_init::<SimRegistry>()
            .register_presentation::<T>(name);
        registry_mut(world).register::<T>();
        require_sim_id::<T>(world);
        self
    }
}

/// Registration from `Plugin::build`, where only bevy's `App` is at hand.
pub trait SnapshotAppExt {
    /// `T` is simulation state: the same registration as `register_sim_component` (for a
    /// component: hashed, copied, compared, and every entity holding it gets a [`SimId`]) or
    /// `register_sim_resource` (for a resource type). A type rolled back with the world is
    /// simulation state, so this is the specification's name for that one declaration.
    fn register_snapshot_component<T: Component<Mutability = Mutable> + Clone + SimState>(
        &mut self,
    ) -> &mut Self;
    /// Snapshots copy `T` with `Clone` where it sits on a simulation entity, without making the
    /// entities that hold it simulation entities: for types that presentation shares (`Transform`,
    /// `Name`) and presentation that must roll back with its entity.
    fn copy_in_snapshots<T: Component<Mutability = Mutable> + Clone>(&mut self) -> &mut Self;
    /// Snapshots leave `T` as the restored app has it.
    fn ignore_in_snapshots<T: Component>(&mut self) -> &mut Self;
}

impl SnapshotAppExt for bevy::app::App {
    fn register_snapshot_component<T: Component<Mutability = Mutable> + Clone + SimState>(
        &mut self,
    ) -> &mut Self {
        let world = self.world_mut();
        let kind = if is_resource::<T>(world) {
            SimKind::Resource
        } else {
            SimKind::Component
        };
        world
            .get_resource_or_init::<SimRegistry>()
            .register::<T>(kind);
        registry_mut(world).register::<T>();
        if kind == SimKind::Component {
            require_sim_id::<T>(world);
        }
        self
    }

    fn copy_in_snapshots<T: Component<Mutability = Mutable> + Clone>(&mut self) -> &mut Self {
        registry_mut(self.world_mut()).register::<T>();
        self
    }

    fn ignore_in_snapshots<T: Component>(&mut self) -> &mut Self {
        registry_mut(self.world_mut()).ignore::<T>();
        self
    }
}

/// Whether `T` is a resource type (resources require bevy's `IsResource` marker).
fn is_resource<T: Component>(world: &mut World) -> bool {
    let id = world.register_component::<T>();
    let is_resource = world.register_component::<IsResource>();
    world.components().get_info(id).is_some_and(|info| {
        info.required_components()
            .iter_ids()
            .any(|r| r == is_resource)
    })
}

/// Makes `SimId` a required component of `T`, unless `T` is a resource or requires it already.
///
/// # Panics
///
/// If entities holding `T` were spawned before the registration: they would have no `SimId`.
fn require_sim_id<T: Component>(world: &mut World) {
    let id = world.register_component::<T>();
    let sim_id = world.register_component::<SimId>();
    let requires = world
        .components()
        .get_info(id)
        .is_some_and(|info| info.required_components().iter_ids().any(|r| r == sim_id));
    if requires || is_resource::<T>(world) {
        return;
    }
    if let Err(error) = world.try_register_required_components::<T, SimId>() {
        panic!(
            "`{}` cannot be registered for snapshots: {error} (register simulation types when the \
             app is built, before anything holding them is spawned)",
            std::any::type_name::<T>()
        );
    }
}

/// The registry, inserted the first time a plugin registers something (while the app is built,
/// before any entity the simulation spawns).
fn registry_mut(world: &mut World) -> bevy::prelude::Mut<'_, SnapshotRegistry> {
    world.get_resource_or_init::<SnapshotRegistry>()
}

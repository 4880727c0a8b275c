//! The game's own components in scene files.
//!
//! `rusting cook` and `rusting validate` never build the game, so they cannot know its types: they
//! cook a component they do not know, under a type-like name, as canonical JSON. A game makes a
//! type loadable with [`SceneTypesAppExt::register_scene_component`] (its registered simulation
//! name is its name in scene files), and the app's setup checks every such component of the loaded
//! scene against its type: a name no type is registered under, or a value that does not
//! deserialize, stops the app with a [`SceneError`] naming the scene file and the JSON pointer.
//! This module must never touch a component the engine itself loads.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bevy::ecs::component::Mutable;
use bevy::prelude::{Component, Entity, Resource, World};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{SceneError, SceneId};
use crate::state::{SimState, SimStateAppExt};

/// A scene entity's game components, waiting for the game's types (removed at setup).
#[derive(Component, Clone, Debug, PartialEq)]
pub struct PendingGameComponents(pub BTreeMap<String, Value>);

/// Inserts a component of one type from its scene JSON.
type Loader = fn(&mut World, Entity, &Value) -> Result<(), String>;

/// The game types scenes may hold, by name.
#[derive(Resource, Clone, Default)]
pub struct SceneTypes(BTreeMap<&'static str, Loader>);

/// Where the loaded scene came from, for messages: its file and each entity's JSON pointer.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct SceneSource {
    /// The scene file.
    pub file: PathBuf,
    /// Each entity's pointer in the source, by `SceneId`.
    pub pointers: BTreeMap<u64, String>,
}

fn load<T: Component<Mutability = Mutable> + DeserializeOwned>(
    world: &mut World,
    entity: Entity,
    value: &Value,
) -> Result<(), String> {
    let component = T::deserialize(value).map_err(|e| e.to_string())?;
    world.entity_mut(entity).insert(component);
    Ok(())
}

/// Registering a game type as loadable from scenes.
pub trait SceneTypesAppExt {
    /// `T` is simulation state (as `register_sim_component`) and scene files may hold it under its
    /// registered name.
    fn register_scene_component<
        T: Component<Mutability = Mutable> + Clone + SimState + DeserializeOwned,
    >(
        &mut self,
    ) -> &mut Self;
}

impl SceneTypesAppExt for bevy::app::App {
    fn register_scene_component<
        T: Component<Mutability = Mutable> + Clone + SimState + DeserializeOwned,
    >(
        &mut self,
    ) -> &mut Self {
        self.register_sim_component::<T>();
        self.init_resource::<SceneTypes>();
        self.world_mut()
            .resource_mut::<SceneTypes>()
            .0
            .insert(T::NAME, load::<T>);
        self
    }
}

/// Loads every pending game component of the scene into its entity, in `SceneId` order, or names
/// the first that cannot be loaded.
pub fn load_game_components(world: &mut World) -> Result<(), SceneError> {
    let mut pending: Vec<(u64, Entity, BTreeMap<String, Value>)> = world
        .query::<(Entity, &SceneId, &PendingGameComponents)>()
        .iter(world)
        .map(|(entity, id, components)| (id.0, entity, components.0.clone()))
        .collect();
    if pending.is_empty() {
        return Ok(());
    }
    pending.sort_by_key(|(id, _, _)| *id);
    let types = world
        .get_resource::<SceneTypes>()
        .cloned()
        .unwrap_or_default();
    let source = world
        .get_resource::<SceneSource>()
        .cloned()
        .unwrap_or_default();
    for (id, entity, components) in pending {
        for (name, value) in &components {
            let pointer = format!(
                "{}/components/{}",
                source.pointers.get(&id).map_or("", String::as_str),
                name.replace('~', "~0").replace('/', "~1")
            );
            let Some(loader) = types.0.get(name.as_str()) else {
                return Err(SceneError::UnknownComponent {
                    file: source.file.clone(),
                    pointer,
                    name: name.clone(),
                });
            };
            loader(world, entity, value).map_err(|reason| SceneError::BadValue {
                file: source.file.clone(),
                pointer,
                reason,
            })?;
        }
        world.entity_mut(entity).remove::<PendingGameComponents>();
    }
    Ok(())
}

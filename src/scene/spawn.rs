//! Loading: a cooked scene into a `World`.
//!
//! Entities are spawned in `SceneId` order, and every scene entity holds a `SimId` (`SceneId`
//! requires one), so a scene's entities take simulation ids `0, 1, 2, ...` in cooked order on every
//! load, whatever entity ids bevy hands out. This module must never insert a resource: resources
//! are set up with the app, and scene settings are written into resources the engine inserted at
//! setup.

use bevy::prelude::{Entity, Name, Transform, World};

use super::SceneId;
use super::cook::CookedScene;
use crate::physics::{LevelMeshes, PhysicsSettings};
use crate::state::SimId;

/// Spawns every entity of `scene` in id order and applies its settings; returns the entities in the
/// same order.
pub fn spawn_scene(world: &mut World, scene: &CookedScene) -> Vec<Entity> {
    if let Some(mut physics) = world.get_resource_mut::<PhysicsSettings>() {
        physics.gravity = scene.settings.gravity;
    }
    if let Some(mut meshes) = world.get_resource_mut::<LevelMeshes>() {
        // Checked when the scene was cooked; a cooked scene read from elsewhere is checked again,
        // and a mesh that fails leaves its colliders touching nothing.
        for mesh in &scene.meshes {
            if let Ok(mesh) = mesh.mesh() {
                meshes.insert(mesh);
            }
        }
    }
    let mut spawned = Vec::with_capacity(scene.entities.len());
    for entity in &scene.entities {
        let transform = Transform {
            translation: entity.translation,
            rotation: entity.rotation,
            scale: entity.scale,
        };
        let mut commands = world.spawn((
            transform,
            Name::new(entity.name.clone()),
            SceneId(entity.id),
        ));
        let c = &entity.components;
        if let Some(body) = c.rigid_body {
            commands.insert(body);
        }
        if let Some(collider) = c.collider {
            commands.insert(collider);
        }
        if let Some(layers) = c.collision_layers {
            commands.insert(layers);
        }
        if let Some(class) = c.physics_body {
            commands.insert(class);
        }
        if let Some(locks) = c.locked_axes {
            commands.insert(locks);
        }
        if let Some(tween) = c.tween {
            commands.insert(tween);
        }
        if let Some(player) = c.player_controller {
            commands.insert(player);
        }
        if let Some(pickup) = c.pickup {
            commands.insert(pickup);
        }
        if let Some(counter) = c.counter {
            commands.insert(counter);
        }
        if let Some(platformer) = c.platformer_controller {
            commands.insert(platformer);
        }
        if let Some(emitter) = c.burst_emitter {
            commands.insert(emitter);
        }
        if let Some(hud) = &c.hud_element {
            commands.insert(hud.clone());
        }
        if let Some(behaviour) = c.gpu_behaviour {
            commands.insert(behaviour);
        }
        if let Some(appearance) = c.appearance {
            commands.insert(appearance);
        }
        if !c.game.is_empty() {
            // Loaded at setup, once the game has registered its types.
            commands.insert(super::game_types::PendingGameComponents(c.game.clone()));
        }
        spawned.push(commands.id());
    }
    // Joints name their bodies by scene id; the bodies now have simulation ids to name instead.
    let sim_id = |world: &World, id: u64| {
        scene
            .entities
            .binary_search_by_key(&id, |e| e.id)
            .ok()
            .and_then(|i| world.get::<SimId>(spawned[i]).copied())
    };
    for (entity, &spawned_as) in scene.entities.iter().zip(&spawned) {
        let Some(mut joint) = entity.components.joint else {
            continue;
        };
        // Cooking checked that both bodies are in the scene; a cooked scene read from elsewhere
        // may not hold them, and then the joint is left out.
        let Some(b) = sim_id(world, joint.body_b.0) else {
            continue;
        };
        let a = match joint.body_a {
            None => None,
            Some(a) => match sim_id(world, a.0) {
                Some(a) => Some(a),
                None => continue,
            },
        };
        joint.body_a = a;
        joint.body_b = b;
        world.entity_mut(spawned_as).insert(joint);
    }
    spawned
}

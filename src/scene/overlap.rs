//! Bodies a scene places inside each other: [`bodies_overlapping_at_start`].
//!
//! The scene's CPU bodies go through the CPU solver's own broad and narrow phases once
//! (`physics::cpu::overlap`), so "overlapping" means exactly what the solver would push apart on
//! its first tick. This module only maps scene entities to solver bodies and back; it must never
//! decide what overlaps.

use super::located::LocatedScene;
use crate::physics::cpu::overlap::{StartBody, overlaps_at_start};
use crate::physics::{BodyClass, LevelMeshes, PhysicsSettings};
use crate::runtime::PartUser;

/// Two entities of a scene that overlap at the start.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneOverlap {
    /// The entity with the lower `SceneId`.
    pub a: PartUser,
    /// The other entity.
    pub b: PartUser,
    /// How deep they overlap, in metres.
    pub depth: f32,
}

/// Every pair of CPU bodies in `scene` that overlap deeper than `settings.linear_slop` before the
/// first tick (at least one dynamic, layers that interact, no sensor), in `SceneId` order.
pub fn bodies_overlapping_at_start(
    scene: &LocatedScene,
    settings: &PhysicsSettings,
) -> Vec<SceneOverlap> {
    let entities: Vec<_> = scene
        .cooked
        .entities
        .iter()
        .filter(|e| {
            e.components
                .physics_body
                .is_none_or(|b| b.class == BodyClass::Cpu)
        })
        .filter_map(|e| e.components.collider.map(|collider| (e, collider)))
        .collect();
    let bodies: Vec<StartBody> = entities
        .iter()
        .map(|(entity, collider)| StartBody {
            position: entity.translation,
            rotation: entity.rotation,
            rigid_body: entity.components.rigid_body,
            collider: *collider,
            layers: entity.components.collision_layers.unwrap_or_default(),
        })
        .collect();
    let mut meshes = LevelMeshes::default();
    for mesh in &scene.cooked.meshes {
        if let Ok(mesh) = mesh.mesh() {
            meshes.insert(mesh);
        }
    }
    // Bodies a joint holds (and keeps from colliding) may overlap: a ragdoll's limbs at its joints.
    let index_of = |id: u64| {
        entities
            .binary_search_by_key(&id, |(e, _)| e.id)
            .ok()
            .map(|i| i as u32)
    };
    let mut joined: Vec<(u32, u32)> = scene
        .cooked
        .entities
        .iter()
        .filter_map(|e| e.components.joint)
        .filter(|joint| !joint.collide_connected)
        .filter_map(|joint| {
            let a = index_of(joint.body_a?.0)?;
            let b = index_of(joint.body_b.0)?;
            Some((a.min(b), a.max(b)))
        })
        .collect();
    joined.sort_unstable();
    joined.dedup();
    overlaps_at_start(&bodies, settings, &meshes, &joined)
        .into_iter()
        .map(|overlap| SceneOverlap {
            a: scene.user(entities[overlap.a].0),
            b: scene.user(entities[overlap.b].0),
            depth: overlap.depth,
        })
        .collect()
}

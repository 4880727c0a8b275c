//! Which simulation parts a scene's entities use, by the part names their plugins declare in
//! `DeterminismSupport`.
//!
//! The startup determinism check and `rusting validate` name the first entity that uses each part
//! below the project's mode; this module is the one place that decides "this entity uses that
//! part". A part's plugin owns its name (`physics::plugin::CPU_SOLVER_PART`); this module must
//! never declare what a part supports.

use super::cook::SceneComponents;
use super::located::LocatedScene;
use crate::physics::BodyClass;
use crate::physics::gpu::GPU_PHYSICS_PART;
use crate::physics::plugin::CPU_SOLVER_PART;
use crate::runtime::PartUsers;

/// The simulation parts an entity with `components` uses.
///
/// A collider is simulated by the solver of its `PhysicsBody` class (CPU without one): the CPU
/// solver, or GPU physics, whose mode the device decides when the app starts.
pub fn entity_parts(components: &SceneComponents) -> Vec<&'static str> {
    let mut parts = Vec::new();
    if components.joint.is_some() {
        parts.push(CPU_SOLVER_PART);
    }
    if components.collider.is_some() {
        let class = components.physics_body.map(|b| b.class).unwrap_or_default();
        match class {
            BodyClass::Cpu => parts.push(CPU_SOLVER_PART),
            BodyClass::Gpu => parts.push(GPU_PHYSICS_PART),
        }
    }
    parts
}

/// The first entity of `scenes` that uses each part: scenes in the order given, entities in
/// `SceneId` order within each.
pub fn first_users<'a>(scenes: impl IntoIterator<Item = &'a LocatedScene>) -> PartUsers {
    let mut users = PartUsers::new();
    for scene in scenes {
        for entity in &scene.cooked.entities {
            for part in entity_parts(&entity.components) {
                if !users.contains_key(part) {
                    users.insert(part.to_owned(), scene.user(entity));
                }
            }
        }
    }
    users
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::{Collider, PhysicsBody, RigidBody};

    #[test]
    fn colliders_use_the_solver_of_their_class() {
        let mut components = SceneComponents {
            rigid_body: Some(RigidBody::dynamic(1.0)),
            ..SceneComponents::default()
        };
        assert!(entity_parts(&components).is_empty(), "no collider: no body");
        components.collider = Some(Collider::sphere(1.0));
        assert_eq!(entity_parts(&components), [CPU_SOLVER_PART]);
        components.physics_body = Some(PhysicsBody {
            class: BodyClass::Gpu,
        });
        assert_eq!(entity_parts(&components), [GPU_PHYSICS_PART]);
    }
}

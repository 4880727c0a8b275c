//! Bodies that overlap before the first tick: the CPU solver's own broad and narrow phases, run
//! once on bodies at rest.
//!
//! A dynamic body that starts inside another is pushed out on the first ticks, often violently;
//! that is almost always a scene mistake. Pairs are those the solver would push apart: at least one
//! dynamic body, layers that interact, neither a sensor. Contacts within `linear_slop` are resting
//! contacts (a crate standing on the ground) and are not overlaps. This module must never step the
//! simulation or change a body.

use bevy::math::{Quat, Vec3};
use bevy::prelude::Entity;

use super::contacts;
use super::manifold::{Manifold, Placed};
use super::{SolverBody, StepParams, broad_phase};
use crate::physics::components::{
    BodyKind, Collider, CollisionLayers, LockedAxes, PhysicsId, RigidBody,
};
use crate::physics::level::LevelMeshes;
use crate::physics::resources::PhysicsSettings;
use crate::runtime::sim_math;
use crate::state::SimId;

/// A body as a scene places it, before any tick.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StartBody {
    /// World position of the shape's centre.
    pub position: Vec3,
    /// World rotation (unit quaternion).
    pub rotation: Quat,
    /// Its rigid body; none makes it a static collider.
    pub rigid_body: Option<RigidBody>,
    /// Its shape and material.
    pub collider: Collider,
    /// Its collision layers.
    pub layers: CollisionLayers,
}

/// Two bodies that overlap deeper than `linear_slop` at the start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Overlap {
    /// The first body's index in the slice given.
    pub a: usize,
    /// The second body's index (greater than `a`).
    pub b: usize,
    /// How deep they overlap, in metres (more than `linear_slop`).
    pub depth: f32,
}

/// Every pair of `bodies` the solver would push apart on its first tick because they overlap by
/// more than `settings.linear_slop`, sorted by `(a, b)`; `joined` (sorted, lower index first) are
/// the pairs a joint keeps from colliding, which overlap freely.
pub fn overlaps_at_start(
    bodies: &[StartBody],
    settings: &PhysicsSettings,
    meshes: &LevelMeshes,
    joined: &[(u32, u32)],
) -> Vec<Overlap> {
    let solver_bodies: Vec<SolverBody> = bodies
        .iter()
        .enumerate()
        .map(|(index, body)| {
            let rigid = body.rigid_body.unwrap_or_else(RigidBody::fixed);
            let mut kind = rigid.kind;
            // As `cpu::step` does: a dynamic body without a usable mass is static.
            if kind == BodyKind::Dynamic && !(rigid.mass.is_finite() && rigid.mass > 0.0) {
                kind = BodyKind::Static;
            }
            SolverBody {
                sim_id: SimId(index as u64),
                entity: Entity::PLACEHOLDER,
                id: PhysicsId(0),
                kind,
                position: body.position,
                rotation: body.rotation,
                linear_velocity: Vec3::ZERO,
                angular_velocity: Vec3::ZERO,
                mass: rigid.mass,
                gravity_scale: rigid.gravity_scale,
                collider: body.collider,
                layers: body.layers,
                sleeping: false,
                locks: LockedAxes::NONE,
            }
        })
        .collect();
    let params = StepParams {
        dt: 0.0,
        tick: 0,
        settings: settings.clone(),
        meshes: meshes.clone(),
    };
    let mut broad = broad_phase::BroadPhase::default();
    broad_phase::find_pairs(&params, &solver_bodies, &mut broad);
    super::joints::filter_pairs(&mut broad.pairs, joined);
    let placed = |body: &SolverBody| {
        let m = sim_math::rotation_matrix(body.rotation);
        Placed {
            shape: body.collider.shape,
            position: body.position,
            axes: [m.x_axis, m.y_axis, m.z_axis],
        }
    };
    let mut overlaps = Vec::new();
    for &(a, b) in &broad.pairs {
        let (body_a, body_b) = (&solver_bodies[a as usize], &solver_bodies[b as usize]);
        if body_a.collider.sensor || body_b.collider.sensor {
            continue;
        }
        let mut manifold = Manifold::default();
        contacts::collide(&placed(body_a), &placed(body_b), 0.0, meshes, &mut manifold);
        let depth = manifold
            .points()
            .iter()
            .map(|p| -p.separation)
            .fold(0.0f32, f32::max);
        if depth > settings.linear_slop {
            overlaps.push(Overlap {
                a: a as usize,
                b: b as usize,
                depth,
            });
        }
    }
    overlaps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(position: Vec3, rigid: Option<RigidBody>, collider: Collider) -> StartBody {
        StartBody {
            position,
            rotation: Quat::IDENTITY,
            rigid_body: rigid,
            collider,
            layers: CollisionLayers::default(),
        }
    }

    /// Fails if contacts within `linear_slop` count, or the depth is not the penetration.
    #[test]
    fn resting_contacts_pass_and_deep_overlaps_are_found() {
        let settings = PhysicsSettings::default();
        let ground = body(Vec3::ZERO, None, Collider::half_space(Vec3::Y));
        let crate_on_ground = body(
            Vec3::new(0.0, 0.5, 0.0),
            Some(RigidBody::dynamic(1.0)),
            Collider::cuboid(Vec3::splat(0.5)),
        );
        let crate_on_crate = body(
            Vec3::new(0.0, 1.5, 0.0),
            Some(RigidBody::dynamic(1.0)),
            Collider::cuboid(Vec3::splat(0.5)),
        );
        // Sunk 0.2 mm into the ground: within the 0.5 mm slop, a resting contact.
        let settled_ball = body(
            Vec3::new(-5.0, 0.4998, 0.0),
            Some(RigidBody::dynamic(1.0)),
            Collider::sphere(0.5),
        );
        let resting = [ground, crate_on_ground, crate_on_crate, settled_ball];
        assert_eq!(
            overlaps_at_start(&resting, &settings, &LevelMeshes::default(), &[]),
            []
        );

        let sunk_ball = body(
            Vec3::new(5.0, 0.2, 0.0),
            Some(RigidBody::dynamic(1.0)),
            Collider::sphere(0.5),
        );
        let ball_in_crate = body(
            Vec3::new(0.0, 2.2, 0.0),
            Some(RigidBody::dynamic(1.0)),
            Collider::sphere(0.5),
        );
        let found = overlaps_at_start(
            &[ground, crate_on_crate, sunk_ball, ball_in_crate],
            &settings,
            &LevelMeshes::default(),
            &[],
        );
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].a, found[0].b), (0, 2));
        assert!((found[0].depth - 0.3).abs() < 1e-5, "{found:?}");
        assert_eq!((found[1].a, found[1].b), (1, 3));
        assert!((found[1].depth - 0.3).abs() < 1e-5, "{found:?}");
    }

    /// Fails if sensors, static pairs or layers that do not interact are reported.
    #[test]
    fn sensors_statics_and_filtered_layers_are_not_overlaps() {
        let settings = PhysicsSettings::default();
        let walls_layer = CollisionLayers {
            memberships: 1,
            filters: u32::MAX,
        };
        let mut wall = body(Vec3::ZERO, None, Collider::cuboid(Vec3::ONE));
        wall.layers = walls_layer;
        let mut other_wall = body(Vec3::new(0.5, 0.0, 0.0), None, Collider::cuboid(Vec3::ONE));
        other_wall.layers = walls_layer;
        let coin = body(
            Vec3::ZERO,
            Some(RigidBody::dynamic(1.0)),
            Collider::sphere(0.3).as_sensor(),
        );
        // On layer 2 and colliding with layer 2 only: it passes through the walls.
        let mut ghost = body(
            Vec3::ZERO,
            Some(RigidBody::dynamic(1.0)),
            Collider::sphere(0.3),
        );
        ghost.layers = CollisionLayers {
            memberships: 2,
            filters: 2,
        };
        assert_eq!(
            overlaps_at_start(
                &[wall, other_wall, coin, ghost],
                &settings,
                &LevelMeshes::default(),
                &[]
            ),
            []
        );
        // The same ghost on the walls' layer is inside the first wall.
        ghost.layers = CollisionLayers::default();
        let found = overlaps_at_start(
            &[wall, other_wall, coin, ghost],
            &settings,
            &LevelMeshes::default(),
            &[],
        );
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].a, found[0].b), (0, 3));
        assert_eq!((found[1].a, found[1].b), (1, 3));
    }
}

//! Building and reading the small engine apps the joint tests run: bodies and joints spawned by
//! `SimId`, ticks one at a time, where a body stands and whether it sleeps.

#![allow(dead_code)]

use bevy::math::{Quat, Vec3};
use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::prelude::*;
use rusting_engine::state::SimId;

/// Gravity, m/s^2.
pub const G: f32 = 9.81;

pub fn app() -> App {
    let mut app = App::default();
    app.setup().unwrap();
    app
}

pub fn tick(app: &mut App) {
    let step = app.fixed_step();
    app.update(step);
}

pub fn spawn_body(app: &mut App, transform: Transform, collider: Collider, mass: f32) -> SimId {
    let entity = app
        .world_mut()
        .spawn((transform, collider, RigidBody::dynamic(mass)))
        .id();
    *app.world().get::<SimId>(entity).unwrap()
}

pub fn spawn_joint(app: &mut App, joint: Joint) -> Entity {
    app.world_mut().spawn(joint).id()
}

pub fn entity_of(app: &mut App, id: SimId) -> Entity {
    let mut query = app.world_mut().query::<(Entity, &SimId)>();
    query
        .iter(app.world())
        .find(|(_, s)| **s == id)
        .map(|(e, _)| e)
        .unwrap()
}

pub fn transform(app: &mut App, id: SimId) -> Transform {
    let e = entity_of(app, id);
    *app.world().get::<Transform>(e).unwrap()
}

/// The angle a door hinged about the world's Y axis has turned.
pub fn door_angle(rotation: Quat) -> f32 {
    let forward = rotation * Vec3::X;
    (-forward.z).atan2(forward.x)
}

/// Whether every body of `ids` has been put to sleep.
pub fn all_asleep(app: &mut App, ids: &[SimId]) -> bool {
    ids.iter().all(|&id| {
        let e = entity_of(app, id);
        app.world().get::<Sleeping>(e).is_some()
    })
}

/// Whether body `id` has been put to sleep.
pub fn asleep(app: &mut App, id: SimId) -> bool {
    let e = entity_of(app, id);
    app.world().get::<Sleeping>(e).is_some()
}

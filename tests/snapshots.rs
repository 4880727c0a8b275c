//! Snapshots copy the simulation state (entities by `SimId`, registered resources), refuse
//! simulation entities with undeclared state, and leave presentation alone.

use std::path::Path;

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::game::SimpleGamePlugin;
use rusting_engine::physics::{Collider, RigidBody};
use rusting_engine::prelude::SimState;
use rusting_engine::runtime::RuntimeSettings;
use rusting_engine::scene::{SceneIdentity, cook_file};
use rusting_engine::state::SimId;
use rusting_engine::state::SnapshotError;

/// The crates scene, set up.
fn crates_app() -> App {
    let scene = cook_file(Path::new("tests/scenes/crates.scene.json")).unwrap();
    let identity = SceneIdentity::of("crates", &scene);
    let mut app = App::new(RuntimeSettings {
        fixed_rate_hz: 60.0,
        seed: 11,
        ..default()
    });
    app.add_plugins(SimpleGamePlugin { scene, identity });
    app.setup().unwrap();
    app
}

#[derive(Component, Clone, SimState)]
struct Unlisted;

/// Fails if a simulation entity holding a type that is neither registered nor ignored can be
/// snapshotted (its state would silently stay behind on restore), or if the error does not name
/// the type and the entity.
#[test]
fn snapshots_refuse_unregistered_types_and_name_them() {
    let mut app = crates_app();
    let body = app
        .world_mut()
        .spawn((
            Transform::from_xyz(9.0, 3.0, 0.0),
            RigidBody::dynamic(1.0),
            Collider::sphere(0.2),
            Unlisted,
        ))
        .id();
    let id = *app.world().get::<SimId>(body).unwrap();
    let error = app.snapshot().unwrap_err();
    let SnapshotError::Unregistered { type_name, entity } = &error else {
        panic!("{error}")
    };
    assert!(type_name.ends_with("Unlisted"), "{type_name}");
    assert_eq!(*entity, id);
    assert!(error.to_string().contains("register_sim_component"));

    // Registered when the app is built, before anything holding it is spawned.
    let mut app = crates_app();
    app.register_snapshot_component::<Unlisted>();
    let body = app
        .world_mut()
        .spawn((Transform::from_xyz(9.0, 3.0, 0.0), Unlisted))
        .id();
    let id = *app
        .world()
        .get::<SimId>(body)
        .expect("a registered component makes its entity a simulation entity");
    let snapshot = app.snapshot().unwrap();
    let mut other = crates_app();
    other.register_snapshot_component::<Unlisted>();
    other.restore(&snapshot).unwrap();
    let mut query = other.world_mut().query::<(&SimId, &Unlisted)>();
    let restored: Vec<SimId> = query.iter(other.world()).map(|(id, _)| *id).collect();
    assert_eq!(restored, [id]);
}

/// A presentation-only type the snapshot knows nothing about.
#[derive(Component)]
struct CameraRig(f32);

/// A presentation resource nobody registered.
#[derive(Resource)]
struct Palette(u32);

/// Entities without a `SimId` (a camera, a HUD) and unregistered resources need no registration
/// and survive a restore untouched, even when spawned after the snapshot. Fails if the snapshot
/// treats every entity as simulation state (the camera's unregistered component is refused, or
/// the camera is despawned by the restore).
#[test]
fn snapshots_leave_presentation_alone() {
    let mut app = crates_app();
    let step = app.fixed_step();
    app.update(step);
    let snapshot = app.snapshot().unwrap();
    let camera = app
        .world_mut()
        .spawn((Transform::from_xyz(0.0, 5.0, 10.0), CameraRig(2.0)))
        .id();
    app.world_mut().insert_resource(Palette(7));
    app.update(step * 5);
    app.world_mut().get_mut::<CameraRig>(camera).unwrap().0 = 3.0;
    app.restore(&snapshot).unwrap();
    assert_eq!(app.ticks(), 1);
    assert_eq!(app.world().get::<CameraRig>(camera).unwrap().0, 3.0);
    assert_eq!(app.world().resource::<Palette>().0, 7);
    assert!(app.world().get::<SimId>(camera).is_none());
}

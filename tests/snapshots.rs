//! Snapshots copy every entity, resource and the entity allocator, and restore them into a new app
//! built the same way, at the same ids and generations.

use std::path::Path;
use std::time::Duration;

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::determinism::{SnapshotError, StateHashes, WorldSnapshot};
use rusting_engine::game::SimpleGamePlugin;
use rusting_engine::gameplay::BurstEmitter;
use rusting_engine::runtime::{FrameTime, RuntimeSettings, SimSet};
use rusting_engine::scene::{SceneIdentity, cook_file};

/// Fires the emitter every third tick: 6 particles live 0.25 s, so ids are freed and reused all
/// the time, and the allocator's local list and shared stack both hold ids.
fn fire_often(time: Res<FrameTime>, mut emitters: Query<&mut BurstEmitter>) {
    if time.fixed_tick.is_multiple_of(3) {
        for mut emitter in &mut emitters {
            emitter.fire = true;
        }
    }
}

/// The crates scene, an emitter, and the firing system.
fn churning_app() -> App {
    let scene = cook_file(Path::new("tests/scenes/crates.scene.json")).unwrap();
    let identity = SceneIdentity::of("crates", &scene);
    let mut app = App::new(RuntimeSettings {
        fixed_rate_hz: 60.0,
        seed: 11,
        ..default()
    });
    app.add_plugins(SimpleGamePlugin { scene, identity });
    app.world_mut().spawn((
        Transform::from_xyz(0.0, 2.0, 0.0),
        BurstEmitter {
            particles: 6,
            speed: 2.0,
            lifetime: 0.25,
            ..default()
        },
    ));
    app.add_systems(
        FixedUpdate,
        fire_often
            .after(SimSet::BurstParticles)
            .before(SimSet::NewBursts),
    );
    app.setup().unwrap();
    app
}

/// Frame `k` of the test session runs 0, 1, 2 or 3 ticks.
fn frame(app: &mut App, k: usize) {
    let ticks = [1, 3, 0, 2, 1, 2][k % 6];
    let step = app.fixed_step();
    app.update(step * ticks);
}

/// Every entity index's current id and whether it is spawned.
fn entity_table(app: &App) -> Vec<(Entity, bool)> {
    let entities = app.world().entities();
    (0..entities.len())
        .map(|i| {
            let e = entities
                .resolve_from_index(bevy::ecs::entity::EntityIndex::from_raw_u32(i).unwrap());
            (e, entities.contains_spawned(e))
        })
        .collect()
}

fn hashes_after(app: &App, tick: u64) -> Vec<(u64, u64)> {
    app.world()
        .resource::<StateHashes>()
        .cpu
        .iter()
        .copied()
        .filter(|&(t, _)| t > tick)
        .collect()
}

/// A snapshot taken after 120 frames of churn (ids reused up to three times), restored into a new app, gives the same 52 frames
/// of hashes and the same entity ids (spawned and freed, with generations) as the original app
/// and as an app that never took a snapshot. Fails if the snapshot leaves out the allocator's
/// local list of freed ids or the generations of freed ids (later particles then get other ids),
/// or a registered resource such as `PhysicsWorld` (the hashes then differ on the next tick).
#[test]
fn snapshots_restore_entity_ids_and_state_into_a_new_app() {
    let mut original = churning_app();
    let mut untouched = churning_app();
    for k in 0..120 {
        frame(&mut original, k);
        frame(&mut untouched, k);
    }
    let snapshot = original.snapshot().unwrap();
    assert_eq!(snapshot.tick(), original.ticks());
    let reused = entity_table(&original)
        .iter()
        .filter(|(e, _)| e.generation().to_bits() >= 2)
        .count();
    assert!(reused > 0, "the session should reuse ids more than once");
    let allocator = snapshot.allocator();
    assert!(
        !allocator.local.is_empty() && !allocator.shared.is_empty(),
        "the session should leave freed ids in both lists: {allocator:?}"
    );

    let mut restored = churning_app();
    restored.restore(&snapshot).unwrap();
    assert_eq!(restored.ticks(), original.ticks());
    assert_eq!(entity_table(&restored), entity_table(&original));

    let start = original.ticks();
    for k in 120..172 {
        frame(&mut original, k);
        frame(&mut untouched, k);
        frame(&mut restored, k);
        assert_eq!(
            entity_table(&restored),
            entity_table(&original),
            "frame {k}"
        );
    }
    let expected = hashes_after(&original, start);
    assert!(expected.len() > 52);
    assert_eq!(hashes_after(&restored, start), expected);
    assert_eq!(hashes_after(&untouched, start), expected);
    assert_eq!(entity_table(&untouched), entity_table(&original));
}

#[derive(Component, Clone)]
struct Unlisted;

/// Fails if a world holding a type that is neither registered nor ignored can be snapshotted
/// (its state would silently stay behind on restore).
#[test]
fn snapshots_refuse_unregistered_types_and_name_them() {
    let mut app = churning_app();
    app.world_mut().spawn(Unlisted);
    let error = app.snapshot().unwrap_err();
    let SnapshotError::Unregistered { type_name } = &error else {
        panic!("{error}")
    };
    assert!(type_name.ends_with("Unlisted"), "{type_name}");
    assert!(error.to_string().contains("register_snapshot_component"));

    app.register_snapshot_component::<Unlisted>();
    let snapshot = app.snapshot().unwrap();
    let mut other = churning_app();
    other.register_snapshot_component::<Unlisted>();
    other.restore(&snapshot).unwrap();
    let mut query = other.world_mut().query::<&Unlisted>();
    assert_eq!(query.iter(other.world()).count(), 1);
}

/// Fails if a restore into an app that ran past the snapshot is accepted: bevy only moves a
/// generation forward, so the ids could not match.
#[test]
fn snapshots_do_not_restore_into_an_app_that_ran_past_them() {
    let mut app = churning_app();
    for k in 0..10 {
        frame(&mut app, k);
    }
    let snapshot: WorldSnapshot = app.snapshot().unwrap();
    for k in 10..30 {
        frame(&mut app, k);
    }
    let error = app.restore(&snapshot).unwrap_err();
    assert!(
        matches!(error, SnapshotError::Incompatible { .. }),
        "{error}"
    );
    app.update(Duration::ZERO);
}

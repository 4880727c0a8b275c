//! A world at rest: once a tick at rest is seen to change nothing, the physics step leaves the
//! following ticks out while nothing it reads changes. These tests hold that leaving them out
//! changes no bit, and that every way the world can change under a sleeping world brings the step
//! back.

use bevy::math::Vec3;
use bevy::prelude::*;
use std::sync::{Arc, Mutex};

use rusting_engine::physics::{
    CollisionEvents, PhysicsIdRegistry, PhysicsSettings, PhysicsWorld, Sleeping,
};
use rusting_engine::prelude::*;
use rusting_engine::state::{WorldSnapshot, world_state_hash};

fn app() -> rusting_engine::App {
    let mut app = rusting_engine::App::default();
    app.setup().unwrap();
    app
}

fn tick(app: &mut rusting_engine::App) {
    let step = app.fixed_step();
    app.update(step);
}

/// A ground, a kinematic platform standing still, and a stack of four boxes on the ground.
fn scene(app: &mut rusting_engine::App, platform_velocity: Vec3) -> (Entity, Vec<Entity>) {
    app.world_mut().spawn((
        Transform::default(),
        Collider::half_space(Vec3::Y).with_friction(0.5),
    ));
    let platform = app
        .world_mut()
        .spawn((
            Transform::from_xyz(5.0, 0.5, 0.0),
            RigidBody::kinematic(platform_velocity),
            Collider::cuboid(Vec3::splat(0.5)),
        ))
        .id();
    let boxes = (0..4)
        .map(|i| {
            app.world_mut()
                .spawn((
                    Transform::from_xyz(0.0, 0.5 + i as f32, 0.0),
                    RigidBody::dynamic(1.0),
                    Collider::cuboid(Vec3::splat(0.5)),
                ))
                .id()
        })
        .collect();
    (platform, boxes)
}

fn asleep(app: &rusting_engine::App, boxes: &[Entity]) -> bool {
    boxes
        .iter()
        .all(|&b| app.world().get::<Sleeping>(b).is_some())
}

/// Ticks until every box sleeps, then `more` ticks (in which the step is left out).
fn settle(app: &mut rusting_engine::App, boxes: &[Entity], more: usize) {
    for _ in 0..600 {
        if asleep(app, boxes) {
            break;
        }
        tick(app);
    }
    assert!(asleep(app, boxes), "the stack never fell asleep");
    for _ in 0..more {
        tick(app);
    }
}

/// Marks the physics settings changed every tick, so the step never leaves a tick out.
fn always_step(mut settings: ResMut<PhysicsSettings>) {
    settings.set_changed();
}

/// A sleeping world hashes the same, tick by tick, whether the step leaves its ticks out or runs
/// every one, through a fixed post despawned, a box despawned from the stack, a box dropped onto
/// it, a `Sleeping` marker moved from a box to the kinematic platform, and the ticks at rest
/// between. Fails when the step's census counts neither the bodies nor those holding a slot id
/// (the despawned post, which carries nothing else the census counts or watches, then keeps its
/// slot in the registry), and when it reads the marker's presence only (the moved marker keeps
/// the count, and the woken box stays put).
#[test]
fn leaving_rest_out_changes_no_bit() {
    let run = |always: bool| {
        let mut app = app();
        if always {
            app.add_systems(FixedUpdate, always_step.before(SimSet::Physics));
        }
        let (platform, boxes) = scene(&mut app, Vec3::ZERO);
        let post = app
            .world_mut()
            .spawn((
                Transform::from_xyz(-5.0, 1.0, 0.0),
                Collider::cuboid(Vec3::new(0.2, 1.0, 0.2)),
            ))
            .id();
        let mut hashes = Vec::new();
        for t in 0..700 {
            if t == 200 {
                app.world_mut().despawn(post);
            }
            if t == 250 {
                app.world_mut().despawn(boxes[3]);
            }
            if t == 300 {
                app.world_mut().spawn((
                    Transform::from_xyz(0.0, 4.0, 0.0),
                    RigidBody::dynamic(1.0),
                    Collider::cuboid(Vec3::splat(0.3)),
                ));
            }
            if t == 500 {
                // The marker moved from a sleeping box to the kinematic platform: as many bodies
                // carry it, but the box is awake now.
                app.world_mut().entity_mut(boxes[0]).remove::<Sleeping>();
                app.world_mut().entity_mut(platform).insert(Sleeping);
            }
            tick(&mut app);
            hashes.push(world_state_hash(app.world_mut()));
        }
        assert!(
            asleep(&app, &boxes[..3]),
            "the stack slept again by the end"
        );
        hashes
    };
    let (left_out, stepped) = (run(false), run(true));
    for (t, (a, b)) in left_out.iter().zip(&stepped).enumerate() {
        assert_eq!(a, b, "tick {t}: the world at rest hashed differently");
    }
}

/// A game that gives a sleeping box a velocity wakes it on the next tick, in a world whose ticks
/// at rest were being left out. Fails when the census ignores changes to `RigidBody`.
#[test]
fn a_push_wakes_a_world_at_rest() {
    let mut app = app();
    let (_, boxes) = scene(&mut app, Vec3::ZERO);
    settle(&mut app, &boxes, 30);
    let top = boxes[3];
    let before = app.world().get::<Transform>(top).unwrap().translation;
    app.world_mut()
        .get_mut::<RigidBody>(top)
        .unwrap()
        .linear_velocity = Vec3::new(2.0, 0.0, 0.0);
    tick(&mut app);
    let after = app.world().get::<Transform>(top).unwrap().translation;
    assert!(
        after.x > before.x + 0.01,
        "the pushed box stayed at {after} (from {before})"
    );
    assert!(app.world().get::<Sleeping>(top).is_none());
}

/// A snapshot of another world at the same tick, restored into a world at rest, is simulated on
/// the next tick as that other world would be: here its platform moves. The restore gives every
/// value back with the change ticks it had, so nothing looks changed to the step. Fails when the
/// census ignores restores.
#[test]
fn a_restore_into_a_world_at_rest_is_simulated() {
    let mut resting = app();
    let (platform, boxes) = scene(&mut resting, Vec3::ZERO);
    let mut moving = app();
    let (moving_platform, moving_boxes) = scene(&mut moving, Vec3::new(0.0, 0.0, 1.0));
    settle(&mut resting, &boxes, 30);
    while moving.ticks() < resting.ticks() {
        tick(&mut moving);
    }
    assert!(asleep(&moving, &moving_boxes));
    let tick_now = moving.ticks();
    let snapshot = WorldSnapshot::capture(moving.world_mut(), tick_now).unwrap();
    snapshot.restore(resting.world_mut()).unwrap();
    tick(&mut resting);
    tick(&mut moving);
    let at =
        |app: &rusting_engine::App, e: Entity| app.world().get::<Transform>(e).unwrap().translation;
    assert_eq!(at(&resting, platform), at(&moving, moving_platform));
    assert_eq!(
        world_state_hash(resting.world_mut()),
        world_state_hash(moving.world_mut())
    );
}

/// A tick left out marks changed what the tick at rest it stands for marks: the physics
/// resources and the kinematic platform's `RigidBody` (its velocities written back), tick by tick
/// the same as in a world stepped every tick. So a game's `Changed` filters read the same in a
/// straight run as in one that ran those ticks after a restore. Fails when the skipped tick
/// marks nothing.
#[test]
fn a_tick_left_out_marks_what_a_tick_at_rest_marks() {
    type Marks = Arc<Mutex<Vec<(usize, bool, bool, bool)>>>;
    let run = |always: bool| {
        let mut app = app();
        if always {
            app.add_systems(FixedUpdate, always_step.before(SimSet::Physics));
        }
        let marks = Marks::default();
        let log = marks.clone();
        app.add_systems(
            FixedUpdate,
            (move |moved: Query<(), Changed<RigidBody>>,
                   events: Res<CollisionEvents>,
                   world: Res<PhysicsWorld>,
                   ids: Res<PhysicsIdRegistry>| {
                log.lock().unwrap().push((
                    moved.iter().count(),
                    events.is_changed(),
                    world.is_changed(),
                    ids.is_changed(),
                ));
            })
            .after(SimSet::Physics)
            // Reads only; the scene has no player for the controllers that write `RigidBody`.
            .ambiguous_with_all(),
        );
        let (_, boxes) = scene(&mut app, Vec3::ZERO);
        settle(&mut app, &boxes, 60);
        marks.lock().unwrap().clone()
    };
    let (left_out, stepped) = (run(false), run(true));
    assert_eq!(left_out.len(), stepped.len());
    for (t, (a, b)) in left_out.iter().zip(&stepped).enumerate() {
        assert_eq!(
            a, b,
            "tick {t}: (changed bodies, events, world, slots) marked differently"
        );
    }
}

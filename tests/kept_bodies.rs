//! While the world moves, the physics system keeps its list of bodies from one tick to the next
//! and reads again only what changed. These tests change a sleeping body in every way a game or
//! a restore can, with a ball falling far away so the world never comes to rest, and check that
//! the next tick simulates the world as it now is.

#[path = "support/joint_apps.rs"]
mod joint_apps;

use bevy::math::Vec3;
use bevy::prelude::*;
use joint_apps::{app, asleep, entity_of, spawn_body, tick, transform};
use rusting_engine::App;
use rusting_engine::physics::{PhysicsId, PhysicsIdRegistry, SLEEP_STEPS, Shape};
use rusting_engine::prelude::*;
use rusting_engine::state::{SimId, world_state_hash};

/// A ground, three boxes side by side on it, and a ball falling from 10 km far from them, ticked
/// until the boxes sleep. Returns the boxes.
fn boxes_asleep_under_a_falling_ball(app: &mut App) -> Vec<SimId> {
    app.world_mut().spawn((
        Transform::default(),
        Collider::half_space(Vec3::Y).with_friction(0.5),
    ));
    let boxes: Vec<SimId> = (0..3)
        .map(|i| {
            let at = Transform::from_xyz(3.0 * i as f32, 0.5, 0.0);
            spawn_body(app, at, Collider::cuboid(Vec3::splat(0.5)), 1.0)
        })
        .collect();
    let high = Transform::from_xyz(500.0, 10_000.0, 0.0);
    spawn_body(app, high, Collider::sphere(0.5), 1.0);
    for _ in 0..SLEEP_STEPS + 20 {
        tick(app);
    }
    assert!(boxes.iter().all(|&b| asleep(app, b)), "the boxes sleep");
    boxes
}

/// Gives body `id` a velocity, as a game system would (its `RigidBody` written).
fn set_velocity(app: &mut App, id: SimId, velocity: Vec3) {
    let e = entity_of(app, id);
    app.world_mut()
        .get_mut::<RigidBody>(e)
        .unwrap()
        .linear_velocity = velocity;
}

/// A velocity a game gives a sleeping box (leaving its `Sleeping` marker) wakes it on the next
/// tick, and it moves. Fails if the list keeps the box's record when its `RigidBody` was written
/// (seen: the box stayed asleep where it was).
#[test]
fn a_velocity_given_to_a_sleeping_box_wakes_it() {
    let mut app = app();
    let boxes = boxes_asleep_under_a_falling_ball(&mut app);
    set_velocity(&mut app, boxes[1], Vec3::new(0.0, 4.0, 0.0));
    tick(&mut app);
    assert!(!asleep(&mut app, boxes[1]), "the box woke");
    assert!(transform(&mut app, boxes[1]).translation.y > 0.55);
    assert!(asleep(&mut app, boxes[0]) && asleep(&mut app, boxes[2]));
}

/// A sleeping box a game moves (its `Transform` written, the marker left) is where the game put
/// it for the next tick's contacts: moved into the falling ball's way, the ball lands on it (which
/// wakes it, and both come down, the ball on the box). Fails if the list keeps a body's record
/// when its `Transform` was written (seen: the ball, moved by a write too, still fell from 10 km).
#[test]
fn a_sleeping_box_moved_by_a_game_is_hit_where_it_was_put() {
    let mut app = app();
    let boxes = boxes_asleep_under_a_falling_ball(&mut app);
    let ball = {
        let mut query = app.world_mut().query::<(&SimId, &Collider)>();
        let world = app.world();
        *query
            .iter(world)
            .find(|(_, c)| matches!(c.shape, Shape::Sphere { .. }))
            .unwrap()
            .0
    };
    // Put the ball just above the ground, and the box under it, floating (a sleeping body keeps
    // its place until something moving reaches it).
    let (ball_e, box_e) = (entity_of(&mut app, ball), entity_of(&mut app, boxes[2]));
    app.world_mut()
        .get_mut::<Transform>(ball_e)
        .unwrap()
        .translation = Vec3::new(40.0, 4.0, 0.0);
    app.world_mut()
        .get_mut::<RigidBody>(ball_e)
        .unwrap()
        .linear_velocity = Vec3::ZERO;
    tick(&mut app);
    app.world_mut()
        .get_mut::<Transform>(box_e)
        .unwrap()
        .translation = Vec3::new(40.0, 2.0, 0.0);
    for _ in 0..60 {
        tick(&mut app);
    }
    let ball_y = transform(&mut app, ball).translation.y;
    assert!(
        (ball_y - 1.5).abs() < 0.05,
        "the ball rests on the moved box, not on the ground: y = {ball_y}"
    );
}

/// A body spawned asleep in the air stays there while it sleeps; a game removing its `Sleeping`
/// marker (a removal, which no change tick shows) wakes it, and it falls. Fails if the list is
/// kept without comparing how many bodies carry each component (seen: the box stayed in the air).
#[test]
fn a_box_whose_sleeping_marker_is_removed_falls() {
    let mut app = app();
    let boxes = boxes_asleep_under_a_falling_ball(&mut app);
    let floating = app
        .world_mut()
        .spawn((
            Transform::from_translation(Vec3::new(-20.0, 5.0, 0.0)),
            RigidBody::dynamic(1.0),
            Collider::cuboid(Vec3::splat(0.5)),
            Sleeping,
        ))
        .id();
    for _ in 0..5 {
        tick(&mut app);
    }
    assert_eq!(
        app.world()
            .get::<Transform>(floating)
            .unwrap()
            .translation
            .y,
        5.0
    );
    app.world_mut().entity_mut(floating).remove::<Sleeping>();
    for _ in 0..10 {
        tick(&mut app);
    }
    let y = app
        .world()
        .get::<Transform>(floating)
        .unwrap()
        .translation
        .y;
    assert!(y < 4.9, "the box falls once it is woken: y = {y}");
    assert!(boxes.iter().all(|&b| asleep(&mut app, b)));
}

/// A snapshot restored into the same world, with the same bodies carrying the same components,
/// gives back the ticks that followed it: the hashes after the restore are the ones recorded the
/// first time. Fails if the list is kept across a restore (which gives values back with the change
/// ticks they had, so no change shows; seen: the hashes after the restore differed).
#[test]
fn a_restore_in_a_moving_world_is_read_whole() {
    let mut app = app();
    let boxes = boxes_asleep_under_a_falling_ball(&mut app);
    // One box awake and sliding, so the bodies differ from tick to tick.
    set_velocity(&mut app, boxes[0], Vec3::new(2.0, 0.0, 0.0));
    tick(&mut app);
    let snapshot = app.snapshot().unwrap();
    let hashes = |app: &mut App| {
        (0..10)
            .map(|_| {
                tick(app);
                world_state_hash(app.world_mut())
            })
            .collect::<Vec<_>>()
    };
    let first = hashes(&mut app);
    app.restore(&snapshot).unwrap();
    assert_eq!(hashes(&mut app), first);
}

/// A platform disabled (bevy's `Disabled`) while another comes back from being disabled, in the
/// same tick, with the same components: the body that came back has the change ticks it had, so
/// only which bodies the query holds shows the swap. A ball dropped on each: the one over the
/// platform now enabled lands on it, the one over the platform now disabled falls through. Fails
/// if the bodies are counted without which ones they are (`Carriers::ids`; seen: the ball over
/// the enabled platform fell through it).
#[test]
fn a_platform_disabled_while_another_is_enabled_swaps_at_once() {
    use bevy::ecs::entity_disabling::Disabled;
    let mut app = app();
    let platform = |app: &mut App, x: f32| {
        app.world_mut()
            .spawn((
                Transform::from_translation(Vec3::new(x, 0.0, 0.0)),
                Collider::cuboid(Vec3::new(2.0, 0.5, 2.0)),
            ))
            .id()
    };
    let (old, new) = (platform(&mut app, -10.0), platform(&mut app, 10.0));
    // Both have been bodies (and so both carry a slot id) before one is disabled.
    tick(&mut app);
    app.world_mut().entity_mut(new).insert(Disabled);
    let ball = |app: &mut App, x: f32| {
        spawn_body(
            app,
            Transform::from_xyz(x, 4.0, 0.0),
            Collider::sphere(0.5),
            1.0,
        )
    };
    let (over_old, over_new) = (ball(&mut app, -10.0), ball(&mut app, 10.0));
    for _ in 0..3 {
        tick(&mut app);
    }
    app.world_mut().entity_mut(old).insert(Disabled);
    app.world_mut().entity_mut(new).remove::<Disabled>();
    for _ in 0..90 {
        tick(&mut app);
    }
    let y = |app: &mut App, id| transform(app, id).translation.y;
    let (on_new, on_old) = (y(&mut app, over_new), y(&mut app, over_old));
    assert!(
        (on_new - 1.0).abs() < 0.05,
        "rests on the enabled platform: y = {on_new}"
    );
    assert!(
        on_old < -5.0,
        "falls through the disabled one: y = {on_old}"
    );
}

/// A kinematic body standing still at `x = -0.0` keeps that zero's sign in the world (the step
/// moves it by a zero velocity to `+0.0`, which compares equal, so nothing is written), and the
/// kept list must hold the world's value too, as a whole read would. Fails if the list keeps the
/// step's `+0.0` where the world keeps `-0.0` (seen: debug builds' comparison of the kept list
/// with a whole read panicked at the platform).
#[test]
fn a_still_kinematic_body_keeps_the_sign_of_its_zero() {
    let mut app = app();
    boxes_asleep_under_a_falling_ball(&mut app);
    let platform = app
        .world_mut()
        .spawn((
            Transform::from_translation(Vec3::new(-0.0, 3.0, 30.0)),
            RigidBody::kinematic(Vec3::ZERO),
            Collider::cuboid(Vec3::new(1.0, 0.2, 1.0)),
        ))
        .id();
    for _ in 0..10 {
        tick(&mut app);
    }
    let x = app
        .world()
        .get::<Transform>(platform)
        .unwrap()
        .translation
        .x;
    assert_eq!(x.to_bits(), (-0.0f32).to_bits());
}

/// A slot id a game writes on a sleeping box far from anything moving is put back to the
/// registry's on the next tick, and the box sleeps on. After a read that kept the list, the
/// write-back looks only at the bodies the step could change and those read again; fails if it
/// leaves out the ones read again (seen: the box kept the slot id the game wrote).
#[test]
fn a_slot_id_a_game_writes_on_a_sleeping_box_is_put_back() {
    let mut app = app();
    let boxes = boxes_asleep_under_a_falling_ball(&mut app);
    let e = entity_of(&mut app, boxes[2]);
    let slot = app
        .world()
        .resource::<PhysicsIdRegistry>()
        .get(boxes[2])
        .expect("the box has a slot");
    *app.world_mut().get_mut::<PhysicsId>(e).unwrap() = PhysicsId(slot.0 + 1000);
    tick(&mut app);
    tick(&mut app);
    assert_eq!(app.world().get::<PhysicsId>(e), Some(&slot));
    assert!(
        boxes.iter().all(|&b| asleep(&mut app, b)),
        "the boxes sleep on"
    );
}

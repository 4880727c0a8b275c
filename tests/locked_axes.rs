//! `LockedAxes`: a locked world axis takes no impulse from contacts, joints or gravity, and a
//! velocity on it is cleared, so a body knocked about keeps exactly to its locks; nothing locked
//! steps with the same bits as no component at all; and the locks are hashed.

use bevy::math::{Quat, Vec3};
use bevy::prelude::*;
use rusting_engine::prelude::*;
use rusting_engine::state::world_state_hash;

fn app() -> rusting_engine::App {
    let mut app = rusting_engine::App::default();
    app.setup().unwrap();
    app.world_mut().spawn((
        Transform::default(),
        Collider::half_space(Vec3::Y).with_friction(0.6),
    ));
    app
}

fn tick(app: &mut rusting_engine::App) {
    let step = app.fixed_step();
    app.update(step);
}

fn body(app: &rusting_engine::App, e: Entity) -> (Transform, RigidBody) {
    (
        *app.world().get::<Transform>(e).unwrap(),
        *app.world().get::<RigidBody>(e).unwrap(),
    )
}

/// A ball of `mass` kg thrown at `speed` m/s at a point half a metre above `at`, off its centre
/// line: along -X for an even `wave`, along -Z for an odd one.
fn throw_ball(app: &mut rusting_engine::App, at: Vec3, wave: u32, mass: f32, speed: f32) {
    let (from, velocity) = if wave.is_multiple_of(2) {
        (at + Vec3::new(3.0, 0.5, 0.3), Vec3::new(-speed, 0.0, 0.0))
    } else {
        (at + Vec3::new(-0.4, 0.5, 3.0), Vec3::new(0.0, 0.0, -speed))
    };
    app.world_mut().spawn((
        Transform::from_translation(from),
        RigidBody::dynamic(mass).with_velocity(velocity, Vec3::ZERO),
        Collider::sphere(0.25),
    ));
}

/// An upright capsule "character" hit at the shoulder by balls from two sides; returns its
/// rotation after every tick and whether anything touched it.
fn knocked_character(locks: Option<LockedAxes>) -> Vec<(Quat, Vec3)> {
    let mut app = app();
    let at = Vec3::new(0.0, 0.9, 0.0);
    let mut character = app.world_mut().spawn((
        Transform::from_translation(at),
        RigidBody::dynamic(70.0),
        Collider::capsule(0.5, 0.4),
    ));
    if let Some(locks) = locks {
        character.insert(locks);
    }
    let character = character.id();
    let mut rotations = Vec::new();
    for t in 0..240u32 {
        if t.is_multiple_of(20) && t < 160 {
            let (transform, _) = body(&app, character);
            throw_ball(&mut app, transform.translation, t / 20, 20.0, 12.0);
        }
        if t == 100 {
            // A game system spinning the body about a locked axis: the step clears it.
            app.world_mut()
                .get_mut::<RigidBody>(character)
                .unwrap()
                .angular_velocity = Vec3::new(3.0, 1.0, -2.0);
        }
        tick(&mut app);
        let (transform, rigid) = body(&app, character);
        rotations.push((transform.rotation, rigid.angular_velocity));
    }
    rotations
}

/// An upright character with `LockedAxes::UPRIGHT`, knocked at the shoulder by balls from two
/// sides and spun about X and Z by a game system, never leans: its rotation's X and Z parts and
/// its angular velocity about X and Z stay exactly zero at every tick, while it may turn about Y.
/// The same character without locks tips over (the scene really knocks it). Fails if the locked
/// rows and columns of the inverse inertia are kept (the character then leans like the unlocked
/// one), or if the step does not clear a locked velocity a game set.
#[test]
fn a_locked_rotation_stays_locked() {
    let free = knocked_character(None);
    let leaned = free
        .iter()
        .map(|(q, _)| q.x.abs().max(q.z.abs()))
        .fold(0.0f32, f32::max);
    assert!(
        leaned > 0.05,
        "the unlocked character never leaned (largest x/z part {leaned}): the test does not knock it"
    );
    let locked = knocked_character(Some(LockedAxes::UPRIGHT));
    for (t, (q, w)) in locked.iter().enumerate() {
        assert!(
            q.x == 0.0 && q.z == 0.0 && w.x == 0.0 && w.z == 0.0,
            "tick {}: the upright character leaned: rotation {q:?}, angular velocity {w:?}",
            t + 1
        );
    }
    let turned = locked.iter().any(|(q, _)| q.y != 0.0);
    assert!(
        turned,
        "the off-centre hits never turned it about Y, which is free"
    );
}

/// A box locked to the XY plane (`LockedAxes::PLANE_XY`), hit by balls coming at it along Z and
/// X, keeps its Z coordinate bit for bit and turns about Z only, while the hits move it along X;
/// without locks the same hits push it along Z. Fails if a contact's impulse reaches a locked
/// axis (the push is not masked by the body's free axes) or if gravity's share is not cleared.
#[test]
fn a_locked_translation_keeps_a_body_on_its_plane() {
    let run = |locks: Option<LockedAxes>| {
        let mut app = app();
        let start = Vec3::new(0.0, 0.5, 0.0);
        let mut cube = app.world_mut().spawn((
            Transform::from_translation(start),
            RigidBody::dynamic(10.0),
            Collider::cuboid(Vec3::splat(0.5)),
        ));
        if let Some(locks) = locks {
            cube.insert(locks);
        }
        let cube = cube.id();
        let mut path = Vec::new();
        for t in 0..200u32 {
            if t.is_multiple_of(20) && t < 120 {
                let (transform, _) = body(&app, cube);
                throw_ball(
                    &mut app,
                    transform.translation - Vec3::Y * 0.3,
                    t / 20 + 1,
                    2.0,
                    8.0,
                );
            }
            tick(&mut app);
            path.push(body(&app, cube).0);
        }
        path
    };
    let free = run(None);
    assert!(
        free.iter().any(|t| t.translation.z.abs() > 0.05),
        "the balls never pushed the free box along Z"
    );
    let locked = run(Some(LockedAxes::PLANE_XY));
    for (t, transform) in locked.iter().enumerate() {
        let q = transform.rotation;
        assert!(
            transform.translation.z.to_bits() == 0 && q.x == 0.0 && q.y == 0.0,
            "tick {}: the box left its plane: {transform:?}",
            t + 1
        );
    }
    assert!(
        locked.iter().any(|t| t.translation.x.abs() > 0.05),
        "the balls never moved the locked box along X, which is free"
    );
}

/// A pendulum bob locked to the XY plane (turning about Z only), held by a ball joint 1.5 m from
/// its centre at a pivot half a metre off that plane and let go level with it, swings in its plane: its Z stays exactly zero and its motion stays finite and
/// swinging. Fails if the joint's masses ignore the lock (the joint then keeps pulling along Z
/// and its impulses grow without end) or if its impulse is applied on the locked axis.
#[test]
fn a_joint_moves_a_locked_body_along_its_free_axes_only() {
    let mut app = app();
    let bob = app
        .world_mut()
        .spawn((
            Transform::from_xyz(1.5, 4.0, 0.0),
            RigidBody::dynamic(2.0),
            Collider::sphere(0.2),
            LockedAxes::PLANE_XY,
        ))
        .id();
    let bob_id = *app.world().get::<SimId>(bob).unwrap();
    app.world_mut().spawn(
        Joint::spherical(None, bob_id)
            .with_anchors(Vec3::new(0.0, 4.0, 0.5), Vec3::new(-1.5, 0.0, 0.0)),
    );
    let mut lowest_x = f32::INFINITY;
    for t in 0..300 {
        tick(&mut app);
        let (transform, rigid) = body(&app, bob);
        assert!(
            transform.translation.z.to_bits() == 0 && rigid.linear_velocity.z.to_bits() == 0,
            "tick {}: the bob left its plane: {transform:?}, {rigid:?}",
            t + 1
        );
        assert!(
            transform.translation.is_finite() && transform.translation.length() < 10.0,
            "tick {}: the joint threw the bob to {}",
            t + 1,
            transform.translation
        );
        lowest_x = lowest_x.min(transform.translation.x);
    }
    assert!(
        lowest_x < -0.5,
        "the bob never swung past the pivot ({lowest_x})"
    );
}

/// Bodies with `LockedAxes::NONE` step with exactly the bits of bodies without the component (a
/// pile of balls hit by another), and the world hash covers the locks: the same world with one
/// lock changed hashes differently. Fails if `LockedAxes::NONE` locks anything, or if
/// `LockedAxes` is not registered as simulation state.
#[test]
fn nothing_locked_steps_like_no_locks_and_locks_are_hashed() {
    let run = |with_component: bool| {
        let mut app = app();
        let mut boxes = Vec::new();
        for i in 0..6 {
            let mut e = app.world_mut().spawn((
                Transform::from_xyz(
                    (i % 3) as f32 * 1.05 - 1.0,
                    0.5 + (i / 3) as f32,
                    0.1 * i as f32,
                ),
                RigidBody::dynamic(1.0),
                Collider::sphere(0.5),
            ));
            if with_component {
                e.insert(LockedAxes::NONE);
            }
            boxes.push(e.id());
        }
        for t in 0..120u32 {
            if t == 10 {
                throw_ball(&mut app, Vec3::new(0.0, 0.8, 0.0), 0, 20.0, 12.0);
            }
            tick(&mut app);
        }
        boxes
            .iter()
            .flat_map(|&e| {
                let (t, r) = body(&app, e);
                [t.translation, r.linear_velocity, r.angular_velocity]
                    .into_iter()
                    .flat_map(|v| v.to_array().map(f32::to_bits))
                    .chain(t.rotation.to_array().map(f32::to_bits))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<u32>>()
    };
    assert_eq!(run(false), run(true), "LockedAxes::NONE changed the bits");

    let mut app = app();
    let e = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 2.0, 0.0),
            RigidBody::dynamic(1.0),
            Collider::sphere(0.5),
            LockedAxes::NONE,
        ))
        .id();
    let before = world_state_hash(app.world_mut());
    app.world_mut().get_mut::<LockedAxes>(e).unwrap().rotation_y = true;
    assert_ne!(
        world_state_hash(app.world_mut()),
        before,
        "a changed lock left the world hash as it was"
    );
}

/// A platformer hero and a walking player bring `LockedAxes::ROTATION` with them, and a scene's
/// own `LockedAxes` on such an entity wins. Fails if a controller stops requiring the locks.
#[test]
fn controllers_lock_their_bodys_rotation() {
    let mut app = app();
    let hero = app
        .world_mut()
        .spawn((RigidBody::dynamic(70.0), PlatformerController::default()))
        .id();
    let walker = app
        .world_mut()
        .spawn((RigidBody::dynamic(70.0), PlayerController::default()))
        .id();
    let own = app
        .world_mut()
        .spawn((
            RigidBody::dynamic(70.0),
            LockedAxes::UPRIGHT,
            PlatformerController::default(),
        ))
        .id();
    let locks = |e: Entity| *app.world().get::<LockedAxes>(e).unwrap();
    assert_eq!(locks(hero), LockedAxes::ROTATION);
    assert_eq!(locks(walker), LockedAxes::ROTATION);
    assert_eq!(locks(own), LockedAxes::UPRIGHT);
}

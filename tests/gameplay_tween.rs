//! Tweens: exact ends, loops and ping-pong on the fixed clock, and kinematic platforms.

use bevy::prelude::*;
use rusting_engine::prelude::*;

fn app() -> rusting_engine::App {
    let mut app = rusting_engine::App::default();
    app.setup().unwrap();
    app
}

fn run_ticks(app: &mut rusting_engine::App, ticks: u32) {
    for _ in 0..ticks {
        let step = app.fixed_step();
        app.update(step);
    }
}

/// A one-shot tween lands exactly on its target, bit for bit, for every easing, and stays there.
/// Fails if the end position is computed as `from + (to - from) * 1.0` (which rounds away from
/// `to`) or if `played` stops short of `duration`.
#[test]
fn a_tween_ends_exactly_at_its_target() {
    let mut app = app();
    let (from, to) = (Vec3::new(0.1, -0.7, 2.3), Vec3::new(3.3, 1.7, -2.1));
    let easings = [
        Easing::Linear,
        Easing::QuadInOut,
        Easing::SineInOut,
        Easing::CubicOut,
    ];
    let movers: Vec<Entity> = easings
        .iter()
        .map(|&easing| {
            app.world_mut()
                .spawn((
                    Transform::from_translation(from),
                    Tween {
                        easing,
                        ..Tween::new(from, to, 1.25)
                    },
                ))
                .id()
        })
        .collect();
    run_ticks(&mut app, 30);
    for &e in &movers {
        let at = app.world().get::<Transform>(e).unwrap().translation;
        assert!(at != from && at != to, "mid-way at tick 30: {at}");
    }
    run_ticks(&mut app, 60);
    for &e in &movers {
        assert_eq!(app.world().get::<Transform>(e).unwrap().translation, to);
        assert!(app.world().get::<Tween>(e).unwrap().finished());
    }
}

/// Easing curves start at 0, end at 1 and are symmetric where they should be.
#[test]
fn easing_curves_hit_their_ends_and_midpoints() {
    for easing in [
        Easing::Linear,
        Easing::QuadInOut,
        Easing::SineInOut,
        Easing::CubicOut,
    ] {
        assert_eq!(easing.apply(0.0), 0.0);
        assert_eq!(easing.apply(1.0), 1.0);
        let mut previous = 0.0;
        for k in 1..=100 {
            let v = easing.apply(k as f32 / 100.0);
            assert!(v >= previous, "{easing:?} is not monotonic at {k}");
            previous = v;
        }
    }
    assert!((Easing::SineInOut.apply(0.5) - 0.5).abs() < 1.0e-6);
    assert_eq!(Easing::QuadInOut.apply(0.5), 0.5);
    assert!((Easing::CubicOut.apply(0.5) - 0.875).abs() < 1.0e-6);
}

/// Looping restarts from `from`; ping-pong comes back along the same path.
#[test]
fn loops_restart_and_ping_pong_returns() {
    let (from, to) = (Vec3::ZERO, Vec3::new(4.0, 0.0, 0.0));
    let at = |mode, played| {
        Tween {
            mode,
            played,
            ..Tween::new(from, to, 2.0)
        }
        .position()
    };
    assert_eq!(at(TweenMode::Loop, 0.5), Vec3::new(1.0, 0.0, 0.0));
    assert_eq!(at(TweenMode::Loop, 2.5), Vec3::new(1.0, 0.0, 0.0));
    assert_eq!(at(TweenMode::PingPong, 2.5), Vec3::new(3.0, 0.0, 0.0));
    assert_eq!(at(TweenMode::PingPong, 4.5), Vec3::new(1.0, 0.0, 0.0));
    assert_eq!(at(TweenMode::Once, 9.0), to);
}

/// A tween on a kinematic platform moves it through the solver, and a box resting on it rides
/// along.
#[test]
fn a_tweened_kinematic_platform_carries_a_box() {
    let mut app = app();
    app.world_mut()
        .resource_mut::<PhysicsSettings>()
        .sleep_enabled = false;
    let (from, to) = (Vec3::ZERO, Vec3::new(3.0, 0.0, 0.0));
    let platform = app
        .world_mut()
        .spawn((
            Transform::from_translation(from),
            RigidBody::kinematic(Vec3::ZERO),
            Collider::cuboid(Vec3::new(2.0, 0.25, 2.0)).with_friction(1.0),
            Tween::new(from, to, 2.0),
        ))
        .id();
    let rider = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 0.75, 0.0),
            RigidBody::dynamic(1.0),
            Collider::cuboid(Vec3::splat(0.5)).with_friction(1.0),
        ))
        .id();
    run_ticks(&mut app, 150);
    let platform_at = app.world().get::<Transform>(platform).unwrap().translation;
    assert!(
        (platform_at - to).length() < 1.0e-4,
        "platform at {platform_at}"
    );
    let rider_at = app.world().get::<Transform>(rider).unwrap().translation;
    assert!(rider_at.x > 2.5, "the box stayed behind at {rider_at}");
}

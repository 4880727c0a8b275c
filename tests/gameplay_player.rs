//! The player controller walks where it looks, and collects pickups once each.

use bevy::input::keyboard::KeyCode;
use bevy::math::UVec2;
use bevy::prelude::*;
use rusting_engine::prelude::*;
use rusting_engine::runtime::{AxisBinding, InputBindings};

fn app() -> rusting_engine::App {
    let mut app = rusting_engine::App::default();
    app.setup().unwrap();
    // WASD on the axes the controller reads, as a project's rusting.json binds them.
    let mut bindings = app.world_mut().resource_mut::<InputBindings>();
    for (axis, negative, positive) in [
        ("move_x", KeyCode::KeyA, KeyCode::KeyD),
        ("move_y", KeyCode::KeyS, KeyCode::KeyW),
    ] {
        bindings.axes.insert(
            axis.to_owned(),
            AxisBinding {
                negative: [negative].into(),
                positive: [positive].into(),
            },
        );
    }
    app.world_mut()
        .spawn((Transform::default(), Collider::half_space(Vec3::Y)));
    app
}

fn player(app: &mut rusting_engine::App, yaw: f32) -> Entity {
    app.world_mut()
        .spawn((
            Transform::from_xyz(0.0, 0.9, 0.0),
            RigidBody {
                // Upright: no turning from contacts.
                ..RigidBody::dynamic(70.0)
            },
            Collider::capsule(0.5, 0.4).with_friction(0.0),
            PlayerController {
                yaw,
                ..PlayerController::default()
            },
            Counter::default(),
        ))
        .id()
}

fn run_ticks(app: &mut rusting_engine::App, ticks: u32) {
    for _ in 0..ticks {
        let step = app.fixed_step();
        app.update(step);
    }
}

fn hold(app: &mut rusting_engine::App, key: KeyCode) {
    let mut input = RuntimeInput::default();
    input.press(key);
    input.viewport = UVec2::new(1280, 720);
    app.set_input(input);
}

/// Holding W for one second walks `speed` metres along the yaw's forward direction (within 5%,
/// the first tick starts from rest). Fails if the yaw is applied with the wrong sign or the wrong
/// axis, or if the walk ignores the yaw.
#[test]
fn a_player_walks_where_it_looks() {
    for (yaw, forward) in [
        (0.0, Vec3::NEG_Z),
        (sim_math::FRAC_PI_2, Vec3::NEG_X),
        (sim_math::PI, Vec3::Z),
    ] {
        let mut app = app();
        let player = player(&mut app, yaw);
        hold(&mut app, KeyCode::KeyW);
        run_ticks(&mut app, 60);
        let at = app.world().get::<Transform>(player).unwrap().translation;
        let speed = PlayerController::default().speed;
        let along = at.dot(forward);
        assert!(
            (along - speed).abs() < 0.05 * speed,
            "yaw {yaw}: walked to {at}"
        );
        let across = (at - forward * along) * Vec3::new(1.0, 0.0, 1.0);
        assert!(across.length() < 0.05, "yaw {yaw}: drifted to {at}");
    }
}

/// Moving the pointer turns the player once per frame, by the frame's look delta; the fixed ticks
/// of the frame then walk in the new direction.
#[test]
fn looking_turns_the_player_once_per_frame() {
    let mut app = app();
    let player = player(&mut app, 0.0);
    app.set_input(RuntimeInput {
        look_delta: Vec2::new(-100.0, 0.0),
        ..RuntimeInput::default()
    });
    let step = app.fixed_step();
    app.update(step * 3);
    let yaw = app.world().get::<PlayerController>(player).unwrap().yaw;
    assert!((yaw - 0.3).abs() < 1.0e-6, "yaw {yaw}");
}

/// Walking through three sensor pickups adds each value once, and the pickups do not block the
/// walk. Fails if a pickup is counted on every tick of contact instead of when the contact starts,
/// or if sensors push.
#[test]
fn a_player_collects_each_pickup_once() {
    let mut app = app();
    let player = player(&mut app, sim_math::FRAC_PI_2);
    let pickups: Vec<Entity> = [(2.0, 1), (4.0, 2), (6.0, 5)]
        .into_iter()
        .map(|(x, value)| {
            app.world_mut()
                .spawn((
                    Transform::from_xyz(-x, 0.9, 0.0),
                    Collider::sphere(0.3).as_sensor(),
                    Pickup {
                        value,
                        collected: false,
                    },
                ))
                .id()
        })
        .collect();
    hold(&mut app, KeyCode::KeyW);
    run_ticks(&mut app, 150);
    assert_eq!(app.world().get::<Counter>(player).unwrap().value, 8);
    for e in pickups {
        assert!(app.world().get::<Pickup>(e).unwrap().collected);
    }
    let at = app.world().get::<Transform>(player).unwrap().translation;
    assert!(at.x < -8.0, "the pickups blocked the player at {at}");
}

//! Debug lines: any fixed system draws them, the window shows the last tick's, and the simulation
//! never sees them.

use bevy::prelude::*;
use rusting_engine::gameplay::debug_lines::colors;
use rusting_engine::gameplay::{DebugDraw, DebugLines, MAX_DEBUG_LINES};
use rusting_engine::prelude::*;
use rusting_engine::state::StateHashes;

/// Draws the ray a hitscan would cast from the origin, and a cross where it looks.
fn draw_aim(mut draw: DebugDraw, time: Res<FrameTime>) {
    let reach = 1.0 + time.fixed_tick as f32;
    draw.ray(Vec3::ZERO, Vec3::X, reach, colors::RED);
    draw.cross(Vec3::X * reach, 0.5, colors::YELLOW);
}

/// Draws a three-point path (two segments).
fn draw_path(mut draw: DebugDraw) {
    draw.path(
        &[Vec3::ZERO, Vec3::Y, Vec3::new(1.0, 1.0, 0.0)],
        colors::GREEN,
    );
}

/// Draws more lines than are kept.
fn draw_too_many(mut draw: DebugDraw) {
    for k in 0..MAX_DEBUG_LINES + 10 {
        draw.line(Vec3::ZERO, Vec3::Y * k as f32, colors::WHITE);
    }
}

fn app(draw: bool) -> rusting_engine::App {
    let mut app = rusting_engine::App::default();
    if draw {
        // Unordered among themselves and against the game's systems: each has its own buffer.
        app.add_systems(FixedUpdate, (draw_aim, draw_path).after(SimSet::Physics));
    }
    // On in every build (a release test run turns it off by default).
    app.check_undeclared_state(true);
    app.setup().unwrap();
    app.world_mut().spawn((
        Transform::from_xyz(0.0, 2.0, 0.0),
        RigidBody::dynamic(1.0),
        Collider::sphere(0.5),
    ));
    app
}

fn tick(app: &mut rusting_engine::App) {
    let step = app.fixed_step();
    app.update(step);
}

/// Two unordered systems draw into `DebugLines` without the fixed schedule's ambiguity check
/// refusing them; after each tick the resource holds that tick's lines only (a ray, a cross of
/// three and a path of two: six); the world-state hash is the same as without drawing, and the
/// undeclared-state check passes. Fails if drawing writes `DebugLines` through a `ResMut` (setup
/// refuses the unordered pair) or if the lines are not cleared each tick (the count grows with
/// the ticks).
#[test]
fn systems_draw_the_last_ticks_lines_outside_the_simulation() {
    let mut drawn = app(true);
    let mut plain = app(false);
    for k in 1..=5u64 {
        tick(&mut drawn);
        tick(&mut plain);
        let lines = drawn.world().resource::<DebugLines>().lines();
        assert_eq!(lines.len(), 6, "tick {k}: {lines:?}");
        let ray = lines.iter().find(|line| line.color == colors::RED).unwrap();
        // Drawn during tick k, which started with `fixed_tick` k - 1.
        assert_eq!(ray.to, Vec3::X * k as f32);
        assert_eq!(
            drawn.world().resource::<StateHashes>().get(k),
            plain.world().resource::<StateHashes>().get(k),
            "tick {k}: the lines reached the hash"
        );
    }
    assert!(
        drawn.undeclared_state().is_none(),
        "{:?}",
        drawn.undeclared_state()
    );
}

/// A tick keeps at most `MAX_DEBUG_LINES` lines and counts the rest. Fails if the bound is gone
/// (a runaway loop would fill the window's memory).
#[test]
fn lines_past_the_bound_are_counted_not_kept() {
    let mut app = rusting_engine::App::default();
    app.add_systems(FixedUpdate, draw_too_many.after(SimSet::Physics));
    app.setup().unwrap();
    tick(&mut app);
    let lines = app.world().resource::<DebugLines>();
    assert_eq!(lines.lines().len(), MAX_DEBUG_LINES);
    assert_eq!(lines.dropped(), 10);
}

/// Moves the ball sideways after the chain, writing `Transform` where the engine's debug view
/// reads it: a game system the view must not conflict with.
fn push_ball(mut bodies: Query<&mut Transform, With<RigidBody>>) {
    for mut transform in &mut bodies {
        transform.translation.x += 0.01;
    }
}

/// The engine's velocity view draws one magenta line per moving dynamic body, a quarter second
/// of its motion long, and sets up beside a game system that writes `Transform` after the chain
/// (no ambiguity error); `RUSTING_DEBUG_DRAW`'s names parse, an unknown one is refused. Fails if
/// the view draws a body at rest, or takes an order against the game's systems.
#[test]
fn the_velocity_view_draws_moving_bodies() {
    use rusting_engine::gameplay::DebugView;
    assert_eq!(
        DebugView::parse("velocities"),
        Some(DebugView { velocities: true })
    );
    assert_eq!(DebugView::parse(""), Some(DebugView::default()));
    assert_eq!(DebugView::parse("velocities,normals"), None);

    let mut app = rusting_engine::App::default();
    app.world_mut().resource_mut::<DebugView>().velocities = true;
    app.add_systems(FixedUpdate, push_ball.after(SimSet::Tweens));
    app.setup().unwrap();
    app.world_mut()
        .spawn((Transform::default(), Collider::half_space(Vec3::Y)));
    let ball = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 0.5, 0.0),
            RigidBody::dynamic(1.0),
            Collider::sphere(0.5),
        ))
        .id();
    tick(&mut app);
    // Resting on the ground: no line.
    assert!(app.world().resource::<DebugLines>().lines().is_empty());
    app.world_mut()
        .get_mut::<RigidBody>(ball)
        .unwrap()
        .linear_velocity = Vec3::new(0.0, 0.0, -4.0);
    tick(&mut app);
    let lines = app.world().resource::<DebugLines>().lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0].color, colors::MAGENTA);
    let length = (lines[0].to - lines[0].from).length();
    assert!((length - 1.0).abs() < 0.1, "{length}");
}

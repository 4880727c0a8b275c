//! Joints behave like physics: a pendulum's period, a chain that does not stretch, a bridge that
//! holds, a motor that reaches its target, a ragdoll that comes to rest, a heavy body on a light
//! one, and sleep that follows joints. Every figure a test checks is in docs/joints.md.

use bevy::math::{Quat, Vec3};
use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::prelude::*;
use rusting_engine::state::SimId;

#[path = "support/joint_apps.rs"]
mod joint_apps;
use joint_apps::*;

/// The period of a swing from its horizontal offsets from the pivot, one a tick, by ten zero
/// crossings (interpolated within the tick).
fn period(offsets: &[f32], dt: f32) -> f32 {
    let crossings: Vec<f32> = offsets
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0] > 0.0 && w[1] <= 0.0 || w[0] < 0.0 && w[1] >= 0.0)
        .map(|(t, w)| t as f32 + w[0] / (w[0] - w[1]))
        .collect();
    assert!(crossings.len() >= 11, "only {} crossings", crossings.len());
    (crossings[10] - crossings[0]) * dt / 5.0
}

/// Two pendulums let go 0.1 rad from the vertical keep their analytic periods within 1% over
/// five swings: a ball on a rigid rod of 1 m (a simple pendulum, `2 pi sqrt(L / g)`), and a
/// capsule hinged at its top end (a physical pendulum, `2 pi sqrt(I / (m g d))` with the
/// capsule's inertia about the hinge), both times `1 + theta^2 / 16`. As built the ball is 0.003%
/// off. Fails if a point constraint's effective mass takes an arm's cross product the wrong way
/// round (`rb x turn_b` in the lanes' `point_mass`: the hinged capsule is then thrown about).
#[test]
fn a_pendulum_keeps_its_period() {
    let mut app = app();
    let (length, theta) = (1.0f32, 0.1f32);
    let pivot = Vec3::new(0.0, 5.0, 0.0);
    let start = pivot + Vec3::new(theta.sin(), -theta.cos(), 0.0) * length;
    let ball = spawn_body(
        &mut app,
        Transform::from_translation(start),
        Collider::sphere(0.05),
        1.0,
    );
    spawn_joint(
        &mut app,
        Joint::rod(None, ball, length).with_anchors(pivot, Vec3::ZERO),
    );
    // The capsule: 1 kg, its top end hinged about Z, 0.45 m above its centre.
    let (half, radius, mass) = (0.4f32, 0.05f32, 1.0f32);
    let d = half + radius;
    let hinge = Vec3::new(10.0, 5.0, 0.0);
    let turned = Quat::from_rotation_z(theta);
    let capsule = spawn_body(
        &mut app,
        Transform::from_translation(hinge + turned * Vec3::new(0.0, -d, 0.0)).with_rotation(turned),
        Collider::capsule(half, radius),
        mass,
    );
    let on_z = Quat::from_rotation_y(-std::f32::consts::FRAC_PI_2);
    let mut joint = Joint::revolute(None, capsule).with_anchors(hinge, Vec3::new(0.0, d, 0.0));
    joint.frame_a.rotation = turned * on_z;
    joint.frame_b.rotation = on_z;
    spawn_joint(&mut app, joint);

    let dt = app.world().resource::<FrameTime>().fixed_delta;
    let (mut balls, mut capsules) = (Vec::new(), Vec::new());
    for _ in 0..700 {
        balls.push(transform(&mut app, ball).translation.x - pivot.x);
        capsules.push(transform(&mut app, capsule).translation.x - hinge.x);
        tick(&mut app);
    }
    let measured = period(&balls, dt);
    let amplitude = 1.0 + theta * theta / 16.0;
    let expected = std::f32::consts::TAU * (length / G).sqrt() * amplitude;
    let error = (measured - expected).abs() / expected;
    assert!(
        error < 0.01,
        "the ball's period is {measured} s, expected {expected} s ({:.3}% off)",
        error * 100.0
    );

    let inverse = rusting_engine::physics::cpu::inverse_local_inertia(
        &Collider::capsule(half, radius).shape,
        mass,
    );
    let about_hinge = 1.0 / inverse.z + mass * d * d;
    let expected = std::f32::consts::TAU * (about_hinge / (mass * G * d)).sqrt() * amplitude;
    let measured = period(&capsules, dt);
    let error = (measured - expected).abs() / expected;
    assert!(
        error < 0.01,
        "the capsule's period is {measured} s, expected {expected} s ({:.3}% off)",
        error * 100.0
    );
    let end = transform(&mut app, ball).translation;
    assert!(
        ((end - pivot).length() - length).abs() < 0.005,
        "the rod stretched to {}",
        (end - pivot).length()
    );
}

/// Twenty capsule links joined end to end by ball joints, hanging from a fixed point and let go
/// 30 degrees from the vertical, are less than 1% longer than at rest at every tick of ten
/// seconds' swinging (0.4% at worst as built). Fails if the joints' warm start is dropped: the
/// chain then stretches and drags so much that its tip never swings past the pivot.
#[test]
fn a_hanging_chain_does_not_stretch() {
    let mut app = app();
    let links = 20;
    let (half, radius) = (0.2f32, 0.05f32);
    let pitch = 2.0 * (half + radius);
    let top = Vec3::new(0.0, 12.0, 0.0);
    let tilt = Quat::from_rotation_z(std::f32::consts::FRAC_PI_6);
    // Each link's local +Y end joins the link above, its -Y end the link below.
    let end = Vec3::new(0.0, half + radius, 0.0);
    let mut ids = Vec::new();
    for i in 0..links {
        let centre = top + tilt * Vec3::new(0.0, -(i as f32 + 0.5) * pitch, 0.0);
        ids.push(spawn_body(
            &mut app,
            Transform::from_translation(centre).with_rotation(tilt),
            Collider::capsule(half, radius),
            1.0,
        ));
    }
    spawn_joint(
        &mut app,
        Joint::spherical(None, ids[0]).with_anchors(top, end),
    );
    for pair in ids.windows(2) {
        spawn_joint(
            &mut app,
            Joint::spherical(Some(pair[0]), pair[1]).with_anchors(-end, end),
        );
    }
    let rest = links as f32 * pitch;
    let mut worst = 0.0f32;
    let mut leftmost = f32::INFINITY;
    for _ in 0..600 {
        tick(&mut app);
        let mut length = 0.0;
        let mut at = top;
        for &id in &ids {
            let link = transform(&mut app, id);
            let far = link.translation + link.rotation * -end;
            length += (far - at).length();
            at = far;
        }
        leftmost = leftmost.min(at.x);
        worst = worst.max(length / rest - 1.0);
    }
    assert!(
        leftmost < -0.3 * rest,
        "the chain did not swing (tip reached x = {leftmost})"
    );
    assert!(worst < 0.01, "the chain stretched {:.3}%", worst * 100.0);
}

/// A bridge of 40 planks hinged edge to edge, its ends hinged to the world, holds ten boxes
/// dropped on it for 1,000 ticks: every box stays above the bridge's lowest plank, the bridge
/// sags less than 5 m, and no hinge opens more than 1.5 cm (0.9 cm as built). Fails if the joints
/// skip the biased pass, so that their drift is never pulled back (a hinge then opens 2.2 cm).
#[test]
fn a_plank_bridge_holds_boxes() {
    let mut app = app();
    let planks = 40;
    let (half_width, half_depth) = (0.25f32, 1.0f32);
    let left = Vec3::new(-(planks as f32) * half_width, 10.0, 0.0);
    let mut ids = Vec::new();
    for i in 0..planks {
        let centre = left + Vec3::new((2 * i + 1) as f32 * half_width, 0.0, 0.0);
        ids.push(spawn_body(
            &mut app,
            Transform::from_translation(centre),
            Collider::cuboid(Vec3::new(half_width, 0.05, half_depth)),
            1.0,
        ));
    }
    let edge = Vec3::new(half_width, 0.0, 0.0);
    let hinge = |a: Option<SimId>, b: SimId, anchor_a: Vec3, anchor_b: Vec3| {
        let mut j = Joint::revolute(a, b).with_anchors(anchor_a, anchor_b);
        // The hinge axis along Z: the frames turn X onto Z.
        let onto_z = Quat::from_rotation_y(-std::f32::consts::FRAC_PI_2);
        j.frame_a.rotation = onto_z;
        j.frame_b.rotation = onto_z;
        j
    };
    let mut hinges = vec![hinge(None, ids[0], left, -edge)];
    for pair in ids.windows(2) {
        hinges.push(hinge(Some(pair[0]), pair[1], edge, -edge));
    }
    let right = left + Vec3::new(2.0 * planks as f32 * half_width, 0.0, 0.0);
    let mut last = hinge(None, ids[planks - 1], right, edge);
    last.body_a = None;
    hinges.push(last);
    for j in hinges {
        spawn_joint(&mut app, j);
    }
    let mut boxes = Vec::new();
    for k in 0..10 {
        let x = -4.5 + k as f32;
        boxes.push(spawn_body(
            &mut app,
            Transform::from_xyz(x, 11.0 + 0.3 * (k % 3) as f32, 0.0),
            Collider::cuboid(Vec3::splat(0.25)),
            1.0,
        ));
    }
    for _ in 0..1000 {
        tick(&mut app);
    }
    let lowest = ids
        .iter()
        .map(|&id| transform(&mut app, id).translation.y)
        .fold(f32::INFINITY, f32::min);
    assert!(lowest > 5.0, "the bridge sagged to {lowest}");
    for &b in &boxes {
        let y = transform(&mut app, b).translation.y;
        assert!(
            y > lowest,
            "a box fell through the bridge ({y} below {lowest})"
        );
    }
    let mut widest = 0.0f32;
    for pair in ids.windows(2) {
        let (a, b) = (transform(&mut app, pair[0]), transform(&mut app, pair[1]));
        let gap = (a.translation + a.rotation * edge) - (b.translation + b.rotation * -edge);
        widest = widest.max(gap.length());
    }
    assert!(widest < 0.015, "a hinge opened {widest} m");
}

/// A door hinged to the world about a vertical axis, driven by a position motor towards 1 rad,
/// stands within 0.01 rad of it after five seconds, and a velocity motor turns a wheel at its
/// speed. Fails if the hinge's angle is measured the wrong way round (`-2 atan2` in
/// `hinge_angle`: the door then turns away to -pi).
#[test]
fn a_motorised_hinge_reaches_its_target() {
    let mut app = app();
    let door = spawn_body(
        &mut app,
        Transform::from_xyz(0.5, 1.0, 0.0),
        Collider::cuboid(Vec3::new(0.5, 1.0, 0.05)),
        20.0,
    );
    let target = 1.0;
    let motor = Motor::Position {
        target,
        stiffness: 2.0,
        damping: 1.0,
        max_force: 500.0,
    };
    let hinge_at = Transform::from_xyz(0.5, 1.0, 0.0);
    let joint = Joint::revolute(None, door)
        .placed(None, &hinge_at, Vec3::new(0.0, 1.0, 0.0), Vec3::Y)
        .with_motor(motor);
    spawn_joint(&mut app, joint);
    let wheel = spawn_body(
        &mut app,
        Transform::from_xyz(5.0, 1.0, 0.0),
        Collider::sphere(0.5),
        2.0,
    );
    let spin = Motor::Velocity {
        speed: 3.0,
        max_force: 100.0,
    };
    let axle = Joint::revolute(None, wheel)
        .placed(
            None,
            &Transform::from_xyz(5.0, 1.0, 0.0),
            Vec3::new(5.0, 1.0, 0.0),
            Vec3::Z,
        )
        .with_motor(spin);
    spawn_joint(&mut app, axle);
    for _ in 0..300 {
        tick(&mut app);
    }
    let angle = door_angle(transform(&mut app, door).rotation);
    assert!(
        (angle - target).abs() < 0.01,
        "the door stands at {angle} rad, not {target}"
    );
    let e = entity_of(&mut app, wheel);
    let w = app.world().get::<RigidBody>(e).unwrap().angular_velocity;
    assert!((w.z - 3.0).abs() < 0.01, "the wheel spins at {w}");
}

/// A ragdoll of capsules and a ball (head, torso, pelvis, arms and legs in two parts each), held by
/// ball joints with cones at the waist, shoulders and hips and by hinges with limits at the neck,
/// elbows and knees, falls down a flight of five steps and comes to rest: every part asleep within
/// twenty seconds, no joint open more than 2 cm, and every elbow and knee within 0.1 rad of its
/// limits (a limit is soft: a knee that carries the body rests a little past its stop).
/// Fails if a limit's impulse may turn negative (the limits then pull the joints into their
/// stops and the ragdoll never rests).
#[test]
fn a_ragdoll_falls_down_steps_and_comes_to_rest() {
    let mut app = app();
    app.world_mut()
        .spawn((Transform::default(), Collider::half_space(Vec3::Y)));
    for k in 0..5 {
        let height = 0.4 * (5 - k) as f32;
        app.world_mut().spawn((
            Transform::from_xyz(k as f32 * 0.8, height * 0.5, 0.0),
            Collider::cuboid(Vec3::new(0.4, height * 0.5, 2.0)),
        ));
    }
    let at = Vec3::new(-0.2, 3.6, 0.0);
    let capsule = |app: &mut App, centre: Vec3, half: f32, radius: f32, mass: f32| {
        spawn_body(
            app,
            Transform::from_translation(at + centre),
            Collider::capsule(half, radius),
            mass,
        )
    };
    let torso = capsule(&mut app, Vec3::new(0.0, 0.0, 0.0), 0.25, 0.15, 20.0);
    let pelvis = capsule(&mut app, Vec3::new(0.0, -0.55, 0.0), 0.1, 0.15, 10.0);
    let head = spawn_body(
        &mut app,
        Transform::from_translation(at + Vec3::new(0.0, 0.62, 0.0)),
        Collider::sphere(0.15),
        5.0,
    );
    let mut parts = vec![torso, pelvis, head];
    let mut elbows_knees = Vec::new();
    let ball = |a: SimId, b: SimId, anchor: Vec3, centre_a: Vec3, centre_b: Vec3, cone: f32| {
        // The cone opens around the limb's length (the world's -Y as placed).
        let mut j = Joint::spherical(Some(a), b)
            .with_anchors(anchor - centre_a, anchor - centre_b)
            .with_cone(cone);
        let down = Quat::from_rotation_z(-std::f32::consts::FRAC_PI_2);
        j.frame_a.rotation = down;
        j.frame_b.rotation = down;
        j
    };
    let neck = Vec3::new(0.0, 0.45, 0.0);
    let mut nod = Joint::revolute(Some(torso), head)
        .with_anchors(neck, neck - Vec3::new(0.0, 0.62, 0.0))
        .with_limits(-0.5, 0.5);
    let on_z = Quat::from_rotation_y(-std::f32::consts::FRAC_PI_2);
    nod.frame_a.rotation = on_z;
    nod.frame_b.rotation = on_z;
    let mut joints = vec![
        nod,
        ball(
            torso,
            pelvis,
            Vec3::new(0.0, -0.38, 0.0),
            Vec3::ZERO,
            Vec3::new(0.0, -0.55, 0.0),
            0.5,
        ),
    ];
    for side in [-1.0f32, 1.0] {
        // Arms from the shoulders, legs from the hips, each in two parts with a hinge about Z.
        for (root, top, half, radius, mass, parent_centre) in [
            (
                torso,
                Vec3::new(side * 0.3, 0.3, 0.0),
                0.12,
                0.06,
                2.0,
                Vec3::ZERO,
            ),
            (
                pelvis,
                Vec3::new(side * 0.12, -0.7, 0.0),
                0.18,
                0.08,
                6.0,
                Vec3::new(0.0, -0.55, 0.0),
            ),
        ] {
            let length = 2.0 * (half + radius);
            let upper_centre = top - Vec3::new(0.0, length * 0.5, 0.0);
            let lower_centre = top - Vec3::new(0.0, length * 1.5, 0.0);
            let upper = capsule(&mut app, upper_centre, half, radius, mass);
            let lower = capsule(&mut app, lower_centre, half, radius, mass * 0.8);
            joints.push(ball(root, upper, top, parent_centre, upper_centre, 1.2));
            let middle = top - Vec3::new(0.0, length, 0.0);
            let mut hinge = Joint::revolute(Some(upper), lower)
                .with_anchors(middle - upper_centre, middle - lower_centre)
                .with_limits(-2.0, 0.0);
            hinge.frame_a.rotation = on_z;
            hinge.frame_b.rotation = on_z;
            joints.push(hinge);
            elbows_knees.push((upper, lower, hinge));
            parts.extend([upper, lower]);
        }
    }
    let mut all = Vec::new();
    for j in joints {
        all.push((spawn_joint(&mut app, j), j));
    }
    // A push down the steps.
    let e = entity_of(&mut app, torso);
    app.world_mut()
        .get_mut::<RigidBody>(e)
        .unwrap()
        .linear_velocity = Vec3::new(2.0, 0.0, 0.5);
    let mut rested = None;
    for t in 0..1200 {
        tick(&mut app);
        if all_asleep(&mut app, &parts) {
            rested = Some(t);
            break;
        }
    }
    let rested = rested.expect("the ragdoll never came to rest");
    let torso_at = transform(&mut app, torso).translation;
    assert!(
        torso_at.x > 1.0,
        "the ragdoll did not fall down the steps ({torso_at})"
    );
    for (_, j) in &all {
        let (a, b) = (
            transform(&mut app, j.body_a.unwrap()),
            transform(&mut app, j.body_b),
        );
        let gap = (a.translation + a.rotation * j.frame_a.anchor)
            - (b.translation + b.rotation * j.frame_b.anchor);
        assert!(gap.length() < 0.02, "a joint opened {} m", gap.length());
    }
    for (upper, lower, hinge) in elbows_knees {
        let (a, b) = (transform(&mut app, upper), transform(&mut app, lower));
        let angle = rusting_engine::physics::cpu::joints::kernels::hinge_angle(
            a.rotation * hinge.frame_a.rotation,
            b.rotation * hinge.frame_b.rotation,
        );
        assert!(
            (-2.1..=0.1).contains(&angle),
            "a hinge stands at {angle} rad"
        );
    }
    assert!(rested < 1200, "rested at tick {rested}");
}

/// A 100 kg weight hanging by a ball joint from a 1 kg link, itself hung from the world, let go
/// 0.3 rad from the vertical, swings stably for ten seconds: both joints stay open less than
/// 2 cm (1.2 cm at worst as built, the light link carrying a hundred times its weight through a
/// soft joint) and the pair's energy never rises above where it started. Fails if the joint
/// spring is stiffened to 240 Hz (`JOINT_HERTZ`): the light link then rings until the joints fly
/// apart.
#[test]
fn a_joint_between_a_light_and_a_heavy_body_stays_stable() {
    let mut app = app();
    let top = Vec3::new(0.0, 6.0, 0.0);
    let tilt = Quat::from_rotation_z(0.3);
    let link = spawn_body(
        &mut app,
        Transform::from_translation(top + tilt * Vec3::new(0.0, -0.5, 0.0)).with_rotation(tilt),
        Collider::capsule(0.4, 0.05),
        1.0,
    );
    let weight = spawn_body(
        &mut app,
        Transform::from_translation(top + tilt * Vec3::new(0.0, -1.5, 0.0)).with_rotation(tilt),
        Collider::cuboid(Vec3::splat(0.5)),
        100.0,
    );
    let up = Vec3::new(0.0, 0.5, 0.0);
    spawn_joint(&mut app, Joint::spherical(None, link).with_anchors(top, up));
    spawn_joint(
        &mut app,
        Joint::spherical(Some(link), weight).with_anchors(-up, up),
    );
    let energy = |app: &mut App| {
        [(link, 1.0), (weight, 100.0)]
            .iter()
            .map(|&(id, mass)| {
                let e = entity_of(app, id);
                let v = app.world().get::<RigidBody>(e).unwrap().linear_velocity;
                let y = app.world().get::<Transform>(e).unwrap().translation.y;
                mass * (G * y + 0.5 * v.length_squared())
            })
            .sum::<f32>()
    };
    let start = energy(&mut app);
    let (mut widest, mut highest) = (0.0f32, f32::NEG_INFINITY);
    for _ in 0..600 {
        tick(&mut app);
        let (l, w) = (transform(&mut app, link), transform(&mut app, weight));
        let upper_gap = (l.translation + l.rotation * up) - top;
        let lower_gap = (l.translation + l.rotation * -up) - (w.translation + w.rotation * up);
        widest = widest.max(upper_gap.length()).max(lower_gap.length());
        highest = highest.max(energy(&mut app));
    }
    assert!(widest < 0.02, "a joint opened {widest} m");
    assert!(
        highest <= start + 0.5,
        "the pair gained energy: {highest} J from {start} J"
    );
}

/// Islands follow joints: a crate resting on the ground, tied by a slack rope to a pendulum that
/// keeps swinging, stays awake with it, while the same crate without the rope falls asleep; and
/// when the rope is cut (despawned), the crate sleeps. Fails if sleep and waking leave out the
/// joints' links (the tied crate then sleeps as the untied one does). Either half alone keeps it
/// awake: an island that counts the link never sleeps, and a crate asleep beside a moving body it
/// is joined to wakes the next tick.
#[test]
fn a_body_joined_to_a_moving_one_does_not_sleep() {
    let mut app = app();
    app.world_mut()
        .spawn((Transform::default(), Collider::half_space(Vec3::Y)));
    let crate_at = |x: f32| Transform::from_xyz(x, 0.5, 0.0);
    let tied = spawn_body(
        &mut app,
        crate_at(0.0),
        Collider::cuboid(Vec3::splat(0.5)),
        1.0,
    );
    let loose = spawn_body(
        &mut app,
        crate_at(6.0),
        Collider::cuboid(Vec3::splat(0.5)),
        1.0,
    );
    let pivot = Vec3::new(3.0, 6.0, 0.0);
    let bob = spawn_body(
        &mut app,
        Transform::from_translation(pivot + Vec3::new(1.0, -1.0, 0.0)),
        Collider::sphere(0.2),
        1.0,
    );
    spawn_joint(
        &mut app,
        Joint::rod(None, bob, 2f32.sqrt()).with_anchors(pivot, Vec3::ZERO),
    );
    let rope = spawn_joint(&mut app, Joint::rope(Some(tied), bob, 20.0).colliding());
    for _ in 0..240 {
        tick(&mut app);
    }
    assert!(asleep(&mut app, loose), "the loose crate never slept");
    assert!(
        !asleep(&mut app, tied),
        "the tied crate slept while the pendulum swings"
    );
    assert!(!asleep(&mut app, bob));
    app.world_mut().despawn(rope);
    for _ in 0..120 {
        tick(&mut app);
    }
    assert!(
        asleep(&mut app, tied),
        "the crate did not sleep once the rope was cut"
    );
    assert!(!asleep(&mut app, bob));
}

/// A block on a slider along X, driven at 1.5 m/s by a velocity motor, travels at that speed and
/// stops at its upper limit of 2 m without leaving the rail; a bob on a spring of 1.5 Hz swings
/// at 1.5 Hz about where its weight stretches the spring to. Fails if the slider's upper limit
/// pushes the wrong way (`travel - upper` for `upper - travel`: the block is thrown off), or if
/// the spring's frequency is taken in radians per second (the bob then hangs without swinging).
#[test]
fn a_slider_stops_at_its_limit_and_a_spring_keeps_its_frequency() {
    let mut app = app();
    let start = Vec3::new(0.0, 3.0, 0.0);
    let block = spawn_body(
        &mut app,
        Transform::from_translation(start),
        Collider::cuboid(Vec3::splat(0.3)),
        2.0,
    );
    spawn_joint(
        &mut app,
        Joint::prismatic(None, block)
            .with_anchors(start, Vec3::ZERO)
            .with_limits(-1.0, 2.0)
            .with_motor(Motor::Velocity {
                speed: 1.5,
                max_force: 100.0,
            }),
    );
    let (hertz, rest) = (1.5f32, 1.5f32);
    let hook = Vec3::new(10.0, 6.0, 0.0);
    let bob = spawn_body(
        &mut app,
        Transform::from_translation(hook - Vec3::new(0.0, rest, 0.0)),
        Collider::sphere(0.2),
        1.0,
    );
    spawn_joint(
        &mut app,
        Joint::distance(None, bob, 0.5, 3.0)
            .with_spring(rest, hertz, 0.0)
            .with_anchors(hook, Vec3::ZERO),
    );
    let dt = app.world().resource::<FrameTime>().fixed_delta;
    let mut heights = Vec::new();
    for t in 0..120 {
        tick(&mut app);
        heights.push(transform(&mut app, bob).translation.y);
        if t == 40 {
            // Two thirds of a second in: moving at the motor's speed, still short of the limit.
            let at = transform(&mut app, block).translation;
            let x = at.x - start.x;
            assert!((x - 1.5 * 41.0 * dt).abs() < 0.05, "the block is at {x} m");
        }
    }
    let at = transform(&mut app, block).translation;
    assert!(
        (at.x - start.x - 2.0).abs() < 0.01,
        "the block stopped at {} m",
        at.x - start.x
    );
    assert!(
        (at.y - start.y).abs() < 0.01 && at.z.abs() < 0.01,
        "the block left its rail: {at}"
    );
    let rotation = transform(&mut app, block).rotation;
    assert!(
        rotation.angle_between(Quat::IDENTITY) < 0.01,
        "the block turned"
    );
    // The spring's period from its up-crossings of the mean height.
    let mean = heights.iter().sum::<f32>() / heights.len() as f32;
    let offsets: Vec<f32> = heights.iter().map(|y| y - mean).collect();
    let ups: Vec<f32> = offsets
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0] < 0.0 && w[1] >= 0.0)
        .map(|(t, w)| t as f32 + w[0] / (w[0] - w[1]))
        .collect();
    assert!(
        ups.len() >= 3,
        "the spring did not swing ({} crossings)",
        ups.len()
    );
    let period = (ups[ups.len() - 1] - ups[0]) / (ups.len() - 1) as f32 * dt;
    assert!(
        (period * hertz - 1.0).abs() < 0.05,
        "the spring swings with a period of {period} s, not {} s",
        1.0 / hertz
    );
}

/// Two capsules hung from the world by ball joints: one, its twist limited to +-0.3 rad, spun
/// about its length at 5 rad/s, turns no further than its limits; the other, held to a cone of
/// 0.5 rad, kicked sideways at 4 m/s, swings no wider than its cone. Fails if the twist is
/// measured about the wrong axis (`hinge_angle` with the frames swapped: the capsule then spins
/// through its limits).
#[test]
fn a_ball_joint_keeps_its_cone_and_twist() {
    let mut app = app();
    let down = Quat::from_rotation_z(-std::f32::consts::FRAC_PI_2);
    let hang = |app: &mut App, x: f32| {
        let top = Vec3::new(x, 6.0, 0.0);
        let body = spawn_body(
            app,
            Transform::from_translation(top - Vec3::new(0.0, 0.5, 0.0)),
            Collider::capsule(0.4, 0.1),
            1.0,
        );
        // The joint's X axis along the capsule, pointing down.
        let mut joint = Joint::spherical(None, body).with_anchors(top, Vec3::new(0.0, 0.5, 0.0));
        joint.frame_a.rotation = down;
        joint.frame_b.rotation = down;
        (body, joint)
    };
    let (twisted, joint) = hang(&mut app, 0.0);
    spawn_joint(&mut app, joint.with_limits(-0.3, 0.3));
    let (swung, joint) = hang(&mut app, 4.0);
    spawn_joint(&mut app, joint.with_cone(0.5));
    let e = entity_of(&mut app, twisted);
    app.world_mut()
        .get_mut::<RigidBody>(e)
        .unwrap()
        .angular_velocity = Vec3::new(0.0, 5.0, 0.0);
    let e = entity_of(&mut app, swung);
    app.world_mut()
        .get_mut::<RigidBody>(e)
        .unwrap()
        .linear_velocity = Vec3::new(4.0, 0.0, 1.0);
    let (mut widest_twist, mut widest_swing) = (0.0f32, 0.0f32);
    for _ in 0..180 {
        tick(&mut app);
        let t = transform(&mut app, twisted);
        let angle =
            rusting_engine::physics::cpu::joints::kernels::hinge_angle(down, t.rotation * down);
        widest_twist = widest_twist.max(angle.abs());
        let s = transform(&mut app, swung);
        let along = (s.rotation * down) * Vec3::X;
        widest_swing = widest_swing.max(along.angle_between(down * Vec3::X));
    }
    assert!(
        widest_twist < 0.33,
        "the capsule twisted {widest_twist} rad"
    );
    assert!(
        widest_twist > 0.25,
        "the capsule never reached its twist limit ({widest_twist})"
    );
    assert!(widest_swing < 0.53, "the capsule swung {widest_swing} rad");
    assert!(
        widest_swing > 0.45,
        "the capsule never reached its cone ({widest_swing})"
    );
}

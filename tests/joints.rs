//! Joints behave like physics (a pendulum's period, a chain that does not stretch, a bridge that
//! holds, a motor that reaches its target, a ragdoll that comes to rest, a heavy body on a light
//! one), break as ordered events, and give the same bits on every thread count and after a
//! restore.

use bevy::math::{Quat, Vec3};
use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::physics::cpu::joints::SolverJoint;
use rusting_engine::physics::cpu::{self, SolverBody, StepParams, StepScratch};
use rusting_engine::physics::{
    BodyKind, CollisionLayers, JointEvents, Motor, PhysicsId, PhysicsSettings, PhysicsWorld,
};
use rusting_engine::prelude::*;
use rusting_engine::state::SimId;

#[path = "support/tick_hashes.rs"]
mod tick_hashes;

const G: f32 = 9.81;

fn app() -> App {
    let mut app = App::default();
    app.setup().unwrap();
    app
}

fn tick(app: &mut App) {
    let step = app.fixed_step();
    app.update(step);
}

fn spawn_body(app: &mut App, transform: Transform, collider: Collider, mass: f32) -> SimId {
    let entity = app
        .world_mut()
        .spawn((transform, collider, RigidBody::dynamic(mass)))
        .id();
    *app.world().get::<SimId>(entity).unwrap()
}

fn spawn_joint(app: &mut App, joint: Joint) -> Entity {
    app.world_mut().spawn(joint).id()
}

fn entity_of(app: &mut App, id: SimId) -> Entity {
    let mut query = app.world_mut().query::<(Entity, &SimId)>();
    query
        .iter(app.world())
        .find(|(_, s)| **s == id)
        .map(|(e, _)| e)
        .unwrap()
}

fn transform(app: &mut App, id: SimId) -> Transform {
    let e = entity_of(app, id);
    *app.world().get::<Transform>(e).unwrap()
}

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

/// The angle a door hinged about the world's Y axis has turned.
fn door_angle(rotation: Quat) -> f32 {
    let forward = rotation * Vec3::X;
    (-forward.z).atan2(forward.x)
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

/// A marker that puts a joint in another archetype, so that a query visits the joints in an order
/// other than their `SimId`s' (here the marked one first).
#[derive(Component)]
struct Other;

/// Four weights of 1 kg on ropes, two of which break above 5 N: both break on the first tick,
/// their events come ordered by the joints' `SimId`s (not by query order) and numbered one after
/// the other, the joints are marked broken, and their weights fall while the others hang. Fails
/// if the joints are not sorted by `SimId` before the step (the events then come in query order,
/// the marked joint first).
#[test]
fn a_broken_joint_is_an_ordered_event() {
    let mut app = app();
    let mut weights = Vec::new();
    let mut joints = Vec::new();
    for k in 0..4 {
        let at = Vec3::new(k as f32 * 2.0, 5.0, 0.0);
        let weight = spawn_body(
            &mut app,
            Transform::from_translation(at - Vec3::Y),
            Collider::sphere(0.2),
            1.0,
        );
        let limit = if k % 2 == 0 { 5.0 } else { 100.0 };
        let rope = Joint::rope(None, weight, 1.0)
            .with_anchors(at, Vec3::ZERO)
            .breaking_at(Some(limit), None);
        let entity = spawn_joint(&mut app, rope);
        if k == 2 {
            app.world_mut().entity_mut(entity).insert(Other);
        }
        joints.push(*app.world().get::<SimId>(entity).unwrap());
        weights.push(weight);
    }
    tick(&mut app);
    let broke = app.world().resource::<JointEvents>().broke.clone();
    let ids: Vec<SimId> = broke.iter().map(|e| e.joint).collect();
    assert_eq!(ids, vec![joints[0], joints[2]]);
    assert_eq!(broke[1].id, broke[0].id + 1);
    assert!(broke.iter().all(|e| e.force > 5.0 && e.tick == 0));
    for _ in 0..30 {
        tick(&mut app);
        assert!(app.world().resource::<JointEvents>().broke.is_empty());
    }
    let mut query = app.world_mut().query::<(&SimId, &Joint)>();
    let mut broken: Vec<(SimId, bool)> = query
        .iter(app.world())
        .map(|(id, j)| (*id, j.broken))
        .collect();
    broken.sort();
    assert_eq!(
        broken.iter().map(|b| b.1).collect::<Vec<_>>(),
        vec![true, false, true, false]
    );
    for (k, &w) in weights.iter().enumerate() {
        let y = transform(&mut app, w).translation.y;
        if k % 2 == 0 {
            assert!(y < 3.0, "weight {k} still hangs at {y}");
        } else {
            assert!((y - 4.0).abs() < 0.02, "weight {k} is at {y}");
        }
    }
}

fn solver_body(index: u32, kind: BodyKind, position: Vec3, collider: Collider) -> SolverBody {
    SolverBody {
        sim_id: SimId(index as u64),
        entity: Entity::from_raw_u32(index + 1).unwrap(),
        id: PhysicsId(index),
        kind,
        position,
        rotation: Quat::IDENTITY,
        linear_velocity: Vec3::ZERO,
        angular_velocity: Vec3::ZERO,
        mass: 1.0,
        gravity_scale: 1.0,
        collider,
        layers: CollisionLayers::default(),
        sleeping: false,
    }
}

/// Box2D's joint grid: `n` x `n` balls, each joined by hinges to its neighbours to the left and
/// above, the top row's first ball to the world; and a heap of boxes falling on the ground
/// below, so contacts and joints share the solve.
fn joint_grid(n: u32) -> (Vec<SolverBody>, Vec<SolverJoint>) {
    let mut bodies = vec![solver_body(
        0,
        BodyKind::Static,
        Vec3::ZERO,
        Collider::half_space(Vec3::Y),
    )];
    let index = |row: u32, column: u32| 1 + row * n + column;
    for row in 0..n {
        for column in 0..n {
            let at = Vec3::new(column as f32, 40.0 - row as f32, 0.0);
            bodies.push(solver_body(
                index(row, column),
                BodyKind::Dynamic,
                at,
                Collider::sphere(0.4),
            ));
        }
    }
    let first_box = 1 + n * n;
    for k in 0..60 {
        let at = Vec3::new((k % 10) as f32 * 0.9, 0.5 + (k / 10) as f32 * 1.0, 3.0);
        let mut b = solver_body(
            first_box + k,
            BodyKind::Dynamic,
            at,
            Collider::cuboid(Vec3::splat(0.4)),
        );
        b.rotation = Quat::from_rotation_y(0.1 * k as f32);
        bodies.push(b);
    }
    let mut joints = Vec::new();
    let mut next = 10_000u64;
    let mut join = |a: Option<u32>, b: u32, anchor_a: Vec3, anchor_b: Vec3| {
        let onto_z = Quat::from_rotation_y(-std::f32::consts::FRAC_PI_2);
        let mut joint = Joint::revolute(a.map(|a| SimId(a as u64)), SimId(b as u64))
            .with_anchors(anchor_a, anchor_b);
        joint.frame_a.rotation = onto_z;
        joint.frame_b.rotation = onto_z;
        joints.push(SolverJoint {
            sim_id: SimId(next),
            entity: Entity::from_raw_u32(next as u32).unwrap(),
            joint,
        });
        next += 1;
    };
    join(None, index(0, 0), Vec3::new(0.0, 40.0, 0.0), Vec3::ZERO);
    for row in 0..n {
        for column in 0..n {
            if column > 0 {
                join(
                    Some(index(row, column - 1)),
                    index(row, column),
                    Vec3::new(0.5, 0.0, 0.0),
                    Vec3::new(-0.5, 0.0, 0.0),
                );
            }
            if row > 0 {
                join(
                    Some(index(row - 1, column)),
                    index(row, column),
                    Vec3::new(0.0, -0.5, 0.0),
                    Vec3::new(0.0, 0.5, 0.0),
                );
            }
        }
    }
    (bodies, joints)
}

fn bits(bodies: &[SolverBody]) -> Vec<u32> {
    let mut out = Vec::new();
    for b in bodies {
        let r = b.rotation;
        for v in [b.position, b.linear_velocity, b.angular_velocity] {
            out.extend([v.x.to_bits(), v.y.to_bits(), v.z.to_bits()]);
        }
        out.extend([r.x.to_bits(), r.y.to_bits(), r.z.to_bits(), r.w.to_bits()]);
    }
    out
}

fn run_grid(threads: usize, ticks: u64) -> (Vec<Vec<u32>>, PhysicsWorld) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let (mut bodies, mut joints) = joint_grid(30);
        let mut world = PhysicsWorld::default();
        let mut scratch = StepScratch::default();
        let mut trace = Vec::new();
        let mut parallel = 0;
        for tick in 0..ticks {
            let params = StepParams {
                dt: 1.0 / 60.0,
                tick,
                settings: PhysicsSettings::default(),
                meshes: Default::default(),
            };
            cpu::step(&params, &mut bodies, &mut joints, &mut world, &mut scratch);
            parallel = parallel.max(scratch.joints.parallel_joints());
            trace.push(bits(&bodies));
        }
        assert!(
            parallel > 0,
            "no colour had enough joints to spread over threads"
        );
        (trace, world)
    })
}

/// A 30 x 30 joint grid swinging down beside a heap of boxes gives the same bits on every tick
/// with one, two and four threads, with colours large enough to solve their joints on several
/// threads. Fails if a joint may share a colour with a contact or another joint on the same
/// moving body (with `take` marking only `a` as used, the debug build stops at "two joints of
/// colour 0 share a moving body", and a release build would race).
#[test]
fn joints_do_not_depend_on_thread_count() {
    let (one, world_one) = run_grid(1, 60);
    for threads in [2, 4] {
        let (many, world_many) = run_grid(threads, 60);
        for (tick, (a, b)) in one.iter().zip(&many).enumerate() {
            assert!(
                a == b,
                "tick {tick} differs between 1 and {threads} threads"
            );
        }
        assert_eq!(world_one, world_many);
    }
    assert_ne!(one[0], one[59], "nothing moved");
    assert!(
        world_one.joints.len() > 1700,
        "the joints' impulses were not kept"
    );
}

/// A chain, a motorised door and a rope that breaks part-way: after `restore`, the run repeats tick
/// for tick, with the same hashes, the joint breaking again on the same tick and its `broken`
/// flag and the joints' warm starts put back in place. Fails if `Joint` is not registered as
/// simulation state: the snapshot then cannot put the joints back (`Unregistered`).
#[test]
fn joint_state_rolls_back_in_place() {
    let mut app = app();
    let mut last = None;
    for i in 0..8 {
        let link = spawn_body(
            &mut app,
            Transform::from_xyz(i as f32 * 0.5 + 0.25, 8.0, 0.0),
            Collider::capsule(0.15, 0.08),
            1.0,
        );
        let joint = match last {
            None => Joint::spherical(None, link)
                .with_anchors(Vec3::new(0.0, 8.0, 0.0), Vec3::new(-0.25, 0.0, 0.0)),
            Some(prev) => Joint::spherical(Some(prev), link)
                .with_anchors(Vec3::new(0.25, 0.0, 0.0), Vec3::new(-0.25, 0.0, 0.0)),
        };
        spawn_joint(&mut app, joint);
        last = Some(link);
    }
    let door = spawn_body(
        &mut app,
        Transform::from_xyz(-3.0, 1.0, 0.0),
        Collider::cuboid(Vec3::new(0.5, 1.0, 0.05)),
        10.0,
    );
    let hinge = Joint::revolute(None, door)
        .placed(
            None,
            &Transform::from_xyz(-3.0, 1.0, 0.0),
            Vec3::new(-3.5, 1.0, 0.0),
            Vec3::Y,
        )
        .with_motor(Motor::Position {
            target: 1.2,
            stiffness: 1.0,
            damping: 0.7,
            max_force: 200.0,
        });
    spawn_joint(&mut app, hinge);
    // A weight on a rope whose limit its swing passes: it breaks some ticks after the restore.
    let weight = spawn_body(
        &mut app,
        Transform::from_xyz(6.0, 6.0, 0.0),
        Collider::sphere(0.2),
        2.0,
    );
    let rope = Joint::rope(None, weight, 2.0)
        .with_anchors(Vec3::new(4.0, 6.0, 0.0), Vec3::ZERO)
        .breaking_at(Some(45.0), None);
    let rope = spawn_joint(&mut app, rope);
    tick_hashes::run(&mut app, 10);
    let snapshot = app.snapshot().unwrap();
    let mut broke_first = None;
    let step = app.fixed_step();
    let mut first = Vec::new();
    for t in 0..80 {
        app.update(step);
        first.push(
            app.world()
                .resource::<rusting_engine::state::StateHashes>()
                .cpu
                .back()
                .unwrap()
                .1,
        );
        if broke_first.is_none() && !app.world().resource::<JointEvents>().broke.is_empty() {
            broke_first = Some(t);
        }
    }
    let broke_first = broke_first.expect("the rope never broke");
    assert!(
        broke_first > 5,
        "the rope broke at once (tick {broke_first})"
    );
    assert!(app.world().get::<Joint>(rope).unwrap().broken);
    let warm_first = app.world().resource::<PhysicsWorld>().joints.clone();
    app.restore(&snapshot).unwrap();
    let rope_now = {
        let mut q = app.world_mut().query::<(Entity, &Joint)>();
        q.iter(app.world())
            .filter(|(_, j)| j.break_force.is_some())
            .map(|(e, _)| e)
            .next()
            .unwrap()
    };
    assert!(
        !app.world().get::<Joint>(rope_now).unwrap().broken,
        "restore left the rope broken"
    );
    let again = tick_hashes::run(&mut app, 80);
    assert_eq!(first, again);
    assert_eq!(app.world().resource::<PhysicsWorld>().joints, warm_first);
}

/// Whether every body of `ids` has been put to sleep.
fn all_asleep(app: &mut App, ids: &[SimId]) -> bool {
    ids.iter().all(|&id| {
        let e = entity_of(app, id);
        app.world().get::<Sleeping>(e).is_some()
    })
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

/// A scene of a hinged gate and a chain of two links on ropes.
const JOINT_SCENE: &str = r#"{
  "format_version": 1,
  "entities": [
    { "id": 10, "name": "Gate",
      "transform": { "translation": [0.5, 1, 0] },
      "components": { "RigidBody": { "mass": 5 },
                      "Collider": { "shape": { "Box": { "half_extents": [0.5, 1, 0.05] } } } } },
    { "id": 11, "name": "Gate hinge",
      "components": { "Joint": {
        "body_b": 10,
        "frame_a": { "anchor": [0, 1, 0], "rotation": [0, 0, 0.70710677, 0.70710677] },
        "frame_b": { "anchor": [-0.5, 0, 0], "rotation": [0, 0, 0.70710677, 0.70710677] },
        "kind": { "Revolute": { "limits": { "lower": -1.5, "upper": 1.5 },
                                "motor": { "Position": { "target": 0.8, "stiffness": 2,
                                                         "damping": 1, "max_force": 200 } } } }
      } } },
    { "id": 20, "name": "Lamp",
      "transform": { "translation": [3, 2, 0] },
      "components": { "RigidBody": { "mass": 1 }, "Collider": { "shape": { "Sphere": { "radius": 0.2 } } } } },
    { "id": 21, "name": "Lamp rope",
      "components": { "Joint": {
        "body_b": 20, "frame_a": { "anchor": [3, 3, 0] },
        "kind": { "Distance": { "min": 0, "max": 1 } } } } }
  ]
}"#;

/// Joints declared in a scene cook, load with their bodies' simulation ids in place of the scene
/// ids, and hold: the gate's motor turns it to 0.8 rad about Y and the lamp hangs 1 m under its
/// hook. Fails if loading keeps the scene ids (the joints then name the wrong bodies: the gate
/// hinge names the lamp rope's entity, which is no body, and the gate falls).
#[test]
fn joints_load_from_scenes() {
    use rusting_engine::scene;
    let cooked = scene::cook(JOINT_SCENE, std::path::Path::new("gate.scene.json")).unwrap();
    let mut app = app();
    let spawned = scene::spawn_scene(app.world_mut(), &cooked);
    let gate = *app.world().get::<SimId>(spawned[0]).unwrap();
    let lamp = *app.world().get::<SimId>(spawned[2]).unwrap();
    let hinge = app.world().get::<Joint>(spawned[1]).unwrap();
    assert_eq!((hinge.body_a, hinge.body_b), (None, gate));
    for _ in 0..300 {
        tick(&mut app);
    }
    let angle = door_angle(transform(&mut app, gate).rotation);
    assert!((angle - 0.8).abs() < 0.01, "the gate stands at {angle} rad");
    let at = transform(&mut app, lamp).translation;
    assert!(
        (at - Vec3::new(3.0, 2.0, 0.0)).length() < 0.02,
        "the lamp hangs at {at}"
    );
}

/// A bad joint in a scene is refused with the file and the JSON pointer of the value at fault.
/// Fails if the scene checks skip `Joint::check` or the bodies' existence (the scene then cooks).
#[test]
fn bad_joints_in_scenes_name_the_place() {
    use rusting_engine::scene;
    let cases = [
        (
            "\"body_b\": 20,",
            "\"body_b\": 99,",
            "/entities/3/components/Joint/body_b",
            "no entity",
        ),
        (
            "\"body_b\": 20,",
            "\"body_b\": 21,",
            "/entities/3/components/Joint/body_b",
            "no Collider",
        ),
        (
            "\"min\": 0, \"max\": 1",
            "\"min\": 2, \"max\": 1",
            "/entities/3/components/Joint/kind",
            "lower bound",
        ),
        (
            "\"body_b\": 10,",
            "\"body_a\": 10, \"body_b\": 10,",
            "/entities/1/components/Joint/body_b",
            "to itself",
        ),
        (
            "\"lower\": -1.5",
            "\"lower\": -4",
            "/entities/1/components/Joint/kind",
            "pi",
        ),
    ];
    for (from, to, pointer, words) in cases {
        assert!(JOINT_SCENE.contains(from), "{from}");
        let text = JOINT_SCENE.replacen(from, to, 1);
        let error = scene::cook(&text, std::path::Path::new("levels/gate.scene.json"))
            .expect_err(to)
            .to_string();
        assert!(error.contains("levels/gate.scene.json"), "{error}");
        assert!(error.contains(pointer), "{to}: {error}");
        assert!(error.contains(words), "{to}: {error}");
    }
}

/// Whether body `id` has been put to sleep.
fn asleep(app: &mut App, id: SimId) -> bool {
    let e = entity_of(app, id);
    app.world().get::<Sleeping>(e).is_some()
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

/// A scene's bodies that a joint holds may overlap at the start (a ragdoll's limbs at their
/// joints): `rusting validate`'s overlap check leaves them out, and still reports the same bodies
/// without the joint. Fails if the check runs without the scene's joints.
#[test]
fn joined_bodies_may_overlap_in_a_scene() {
    use rusting_engine::physics::PhysicsSettings;
    use rusting_engine::scene::LocatedScene;
    use rusting_engine::scene::overlap::bodies_overlapping_at_start;
    let dir = std::env::temp_dir().join(format!("rusting-joint-overlap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let limb = |id: u32, y: f32| {
        format!(
            r#"{{ "id": {id}, "transform": {{ "translation": [0, {y}, 0] }},
                 "components": {{ "RigidBody": {{ "mass": 1 }},
                   "Collider": {{ "shape": {{ "Capsule": {{ "half_height": 0.3, "radius": 0.1 }} }} }} }} }}"#
        )
    };
    let joint = r#"{ "id": 3, "components": { "Joint": { "body_a": 1, "body_b": 2,
        "frame_a": { "anchor": [0, 0.3, 0] }, "frame_b": { "anchor": [0, -0.3, 0] },
        "kind": { "Spherical": {} } } } }"#;
    let scene = |with_joint: bool| {
        let mut entities = vec![limb(1, 1.0), limb(2, 1.6)];
        if with_joint {
            entities.push(joint.to_string());
        }
        format!(
            r#"{{ "format_version": 1, "entities": [{}] }}"#,
            entities.join(",")
        )
    };
    let settings = PhysicsSettings::default();
    for (with_joint, expected) in [(true, 0), (false, 1)] {
        std::fs::write(dir.join("limbs.scene.json"), scene(with_joint)).unwrap();
        let located = LocatedScene::load(&dir, std::path::Path::new("limbs.scene.json")).unwrap();
        let found = bodies_overlapping_at_start(&located, &settings);
        assert_eq!(
            found.len(),
            expected,
            "with the joint: {with_joint}: {found:?}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

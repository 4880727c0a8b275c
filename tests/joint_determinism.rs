//! Joints give the same bits on every thread count and after a restore, and break as ordered
//! events.

use bevy::math::{Quat, Vec3};
use bevy::prelude::*;
use rusting_engine::prelude::*;
use rusting_engine::state::SimId;

#[path = "support/joint_apps.rs"]
mod joint_apps;
use joint_apps::*;
use rusting_engine::physics::cpu::joints::SolverJoint;
use rusting_engine::physics::cpu::{self, SolverBody, StepParams, StepScratch};
use rusting_engine::physics::{BodyKind, JointEvents, PhysicsSettings, PhysicsWorld};

#[path = "support/tick_hashes.rs"]
mod tick_hashes;

#[path = "support/solver_bodies.rs"]
mod solver_bodies;
use solver_bodies::{bits, body};

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

/// Box2D's joint grid: `n` x `n` balls, each joined by hinges to its neighbours to the left and
/// above, the top row's first ball to the world; and a heap of boxes falling on the ground
/// below, so contacts and joints share the solve.
fn joint_grid(n: u32) -> (Vec<SolverBody>, Vec<SolverJoint>) {
    let mut bodies = vec![body(
        0,
        BodyKind::Static,
        Vec3::ZERO,
        Collider::half_space(Vec3::Y),
    )];
    let index = |row: u32, column: u32| 1 + row * n + column;
    for row in 0..n {
        for column in 0..n {
            let at = Vec3::new(column as f32, 40.0 - row as f32, 0.0);
            bodies.push(body(
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
        let mut b = body(
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
        first.push(tick_hashes::last(&app));
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

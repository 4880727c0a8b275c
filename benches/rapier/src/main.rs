//! Rusting's CPU solver against rapier3d 0.36 (`enhanced-determinism`) on the same scenes, with the
//! same time step (1/60 s) and body counts, in one process: ms per step for each engine, the ratio
//! ours / rapier, and a hash of each engine's final positions.
//!
//! Both engines run single-threaded (ours in a one-thread rayon pool; rapier without its `parallel`
//! feature) with their default solver settings: Rusting's 4 substeps of two velocity passes, and
//! rapier's 4 solver iterations plus one stabilization iteration.
//!
//! Scenes: (a) 1000 balls of radius 0.5 in a 10x10x10 grid dropped on a ground, 600 steps,
//! sleeping off; (b) a 100-row box pyramid (5050 boxes), 500 steps; (c) 10,000 mixed bodies
//! (balls, boxes, capsules) dropped on a ground, 300 steps.

use std::time::Instant;

use bevy::math::{Quat, Vec3};
use bevy::prelude::Entity;
use rapier3d::prelude as rp;
use rusting_engine::runtime::SimId;
use rusting_engine::physics::cpu::{self, SolverBody, StepParams, StepScratch};
use rusting_engine::physics::{
    BodyKind, Collider, CollisionLayers, PhysicsId, PhysicsSettings, PhysicsWorld,
};

#[derive(Clone, Copy)]
enum Kind {
    Ball(f32),
    Cube(Vec3),
    Capsule(f32, f32),
}

struct Scene {
    name: &'static str,
    steps: usize,
    sleep: bool,
    bodies: Vec<(Vec3, Kind)>,
    /// Index of a body whose height tells whether a structure still stands.
    watch: Option<usize>,
}

fn balls() -> Scene {
    let mut bodies = Vec::new();
    for x in 0..10 {
        for y in 0..10 {
            for z in 0..10 {
                let at = Vec3::new(x as f32 * 1.1, 1.0 + y as f32 * 1.1, z as f32 * 1.1);
                bodies.push((at, Kind::Ball(0.5)));
            }
        }
    }
    Scene {
        name: "(a) 1000 balls, 600 steps, no sleep",
        steps: 600,
        sleep: false,
        bodies,
        watch: None,
    }
}

fn pyramid() -> Scene {
    let rows = 100;
    let mut bodies = Vec::new();
    for row in 0..rows {
        for k in 0..(rows - row) {
            let x = (k as f32 - (rows - row - 1) as f32 * 0.5) * 1.05;
            bodies.push((
                Vec3::new(x, 0.5 + row as f32, 0.0),
                Kind::Cube(Vec3::splat(0.5)),
            ));
        }
    }
    let top = bodies.len() - 1;
    Scene {
        name: "(b) 100-row pyramid (5050 boxes), 500 steps",
        steps: 500,
        sleep: true,
        bodies,
        watch: Some(top),
    }
}

fn mixed() -> Scene {
    let mut bodies = Vec::new();
    for i in 0..10_000u32 {
        let (x, y, z) = (i % 25, i / 625, (i / 25) % 25);
        let at = Vec3::new(x as f32 * 1.2, 1.0 + y as f32 * 1.2, z as f32 * 1.2);
        let kind = match i % 3 {
            0 => Kind::Ball(0.45),
            1 => Kind::Cube(Vec3::new(0.4, 0.35, 0.45)),
            _ => Kind::Capsule(0.2, 0.3),
        };
        bodies.push((at, kind));
    }
    Scene {
        name: "(c) 10,000 mixed bodies, 300 steps",
        steps: 300,
        sleep: true,
        bodies,
        watch: None,
    }
}

fn fnv(hash: &mut u64, word: u32) {
    for byte in word.to_le_bytes() {
        *hash ^= byte as u64;
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn hash_positions(positions: impl Iterator<Item = Vec3>) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for p in positions {
        for c in [p.x, p.y, p.z] {
            fnv(&mut hash, c.to_bits());
        }
    }
    hash
}

struct Outcome {
    ms_per_step: f64,
    hash: u64,
    watched_height: Option<f32>,
}

fn run_rusting(scene: &Scene) -> Outcome {
    let mut bodies = vec![SolverBody {
        sim_id: SimId(0),
        entity: Entity::from_raw_u32(1).unwrap(),
        id: PhysicsId(0),
        kind: BodyKind::Static,
        position: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        linear_velocity: Vec3::ZERO,
        angular_velocity: Vec3::ZERO,
        mass: 0.0,
        gravity_scale: 1.0,
        collider: Collider::half_space(Vec3::Y),
        layers: CollisionLayers::default(),
        sleeping: false,
    }];
    for (k, &(at, kind)) in scene.bodies.iter().enumerate() {
        let collider = match kind {
            Kind::Ball(r) => Collider::sphere(r),
            Kind::Cube(h) => Collider::cuboid(h),
            Kind::Capsule(h, r) => Collider::capsule(h, r),
        };
        bodies.push(SolverBody {
            sim_id: SimId(k as u64 + 1),
            entity: Entity::from_raw_u32(k as u32 + 2).unwrap(),
            id: PhysicsId(k as u32 + 1),
            kind: BodyKind::Dynamic,
            position: at,
            mass: 1.0,
            collider,
            ..bodies[0]
        });
    }
    // The solver takes bodies in `SimId` order; remember where each scene body went.
    let mut order: Vec<usize> = (0..bodies.len()).collect();
    order.sort_by_key(|&i| bodies[i].sim_id);
    let mut sorted: Vec<SolverBody> = order.iter().map(|&i| bodies[i]).collect();
    let mut slot = vec![0; order.len()];
    for (position, &original) in order.iter().enumerate() {
        slot[original] = position;
    }
    let settings = PhysicsSettings {
        sleep_enabled: scene.sleep,
        ..PhysicsSettings::default()
    };
    let mut world = PhysicsWorld::default();
    let mut scratch = StepScratch::default();
    let start = Instant::now();
    for tick in 0..scene.steps {
        let params = StepParams {
            dt: 1.0 / 60.0,
            tick: tick as u64,
            settings: settings.clone(),
        };
        cpu::step(&params, &mut sorted, &mut world, &mut scratch);
    }
    let elapsed = start.elapsed().as_secs_f64();
    let positions = (1..bodies.len()).map(|k| sorted[slot[k]].position);
    Outcome {
        ms_per_step: elapsed * 1000.0 / scene.steps as f64,
        hash: hash_positions(positions),
        watched_height: scene.watch.map(|w| sorted[slot[w + 1]].position.y),
    }
}

fn run_rapier(scene: &Scene) -> Outcome {
    let mut world = rp::PhysicsWorld::default();
    world.integration_parameters.dt = 1.0 / 60.0;
    let ground = world.insert_body(rp::RigidBodyBuilder::fixed());
    world.insert_collider(
        rp::ColliderBuilder::halfspace(rapier3d::na::Unit::new_unchecked(rp::Vector::Y))
            .friction(0.5),
        Some(ground),
    );
    let mut handles = Vec::new();
    for &(at, kind) in &scene.bodies {
        let body = rp::RigidBodyBuilder::dynamic()
            .translation(rp::Vector::new(at.x, at.y, at.z))
            .can_sleep(scene.sleep);
        let collider = match kind {
            Kind::Ball(r) => rp::ColliderBuilder::ball(r),
            Kind::Cube(h) => rp::ColliderBuilder::cuboid(h.x, h.y, h.z),
            Kind::Capsule(h, r) => rp::ColliderBuilder::capsule_y(h, r),
        }
        .friction(0.5)
        .mass(1.0);
        let handle = world.insert_body(body);
        world.insert_collider(collider, Some(handle));
        handles.push(handle);
    }
    let start = Instant::now();
    for _ in 0..scene.steps {
        world.step();
    }
    let elapsed = start.elapsed().as_secs_f64();
    let position = |h: rp::RigidBodyHandle| {
        let t = world.bodies[h].translation();
        Vec3::new(t.x, t.y, t.z)
    };
    Outcome {
        ms_per_step: elapsed * 1000.0 / scene.steps as f64,
        hash: hash_positions(handles.iter().map(|&h| position(h))),
        watched_height: scene.watch.map(|w| position(handles[w]).y),
    }
}

fn main() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a thread pool");
    println!(
        "{:<46} {:>10} {:>10} {:>7}  {:<18} {:<18}",
        "scene", "ours ms", "rapier ms", "ratio", "ours hash", "rapier hash"
    );
    // An optional argument picks the scenes whose name contains it.
    let only = std::env::args().nth(1);
    for scene in [balls(), pyramid(), mixed()] {
        if only.as_deref().is_some_and(|o| !scene.name.contains(o)) {
            continue;
        }
        let ours = pool.install(|| run_rusting(&scene));
        let theirs = run_rapier(&scene);
        println!(
            "{:<46} {:>10.3} {:>10.3} {:>7.2}  {:016x}  {:016x}",
            scene.name,
            ours.ms_per_step,
            theirs.ms_per_step,
            ours.ms_per_step / theirs.ms_per_step,
            ours.hash,
            theirs.hash
        );
        if let (Some(a), Some(b)) = (ours.watched_height, theirs.watched_height) {
            println!(
                "    top box height after the run: ours {a:.3} m, rapier {b:.3} m (placed at 99.5 m)"
            );
        }
    }
}

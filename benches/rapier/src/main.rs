//! Rusting's physics tick against rapier3d 0.36 (`enhanced-determinism`) on the same scenes, with
//! the same time step (1/60 s), body counts, mass (1 kg) and friction (0.5), in one process.
//!
//! What is timed is what each engine's users pay per tick: for Rusting, the engine's physics system
//! (`cpu_physics_step`) as a game runs it, copying every body out of the ECS, stepping the solver
//! and writing positions, velocities and events back; for rapier, its whole `PhysicsWorld::step`.
//! The two engines step in turn, one tick each, and each tick is timed on its own, so both see the
//! same machine: a noisy neighbour slows both, not one. Both run single-threaded (ours in a
//! one-thread rayon pool, the whole race running on its thread; rapier without its `parallel`
//! feature).
//!
//! Query rows time what a game's query system pays: for Rusting, one run of a system holding
//! `SpatialQuery` asking the whole batch (reading the colliders and refitting or building its
//! tree included); for rapier, a query pipeline borrowed from its broad phase and the same batch.
//! The fast-balls row steps 1,000 balls at 300 m/s into a thin wall, ours with its continuous
//! sweep (always on), rapier with `ccd_enabled`, and counts the balls that got through.
//!
//! Rapier runs with its defaults, which is what its users get. Two more rows run the pyramid and
//! the 10,000 boxes with rapier's settings matched to ours where they differ (see `matched`). A last line gives the
//! speedup of our 10,000-body scene on two threads against one, with the final-state hashes of both
//! (they must be equal).
//!
//! The joint rows (`joints`) time Box2D's joint grid and a pile of chains the same way.
//!
//! Run: `cargo run --release --locked --manifest-path benches/rapier/Cargo.toml --target-dir target`;
//! an argument picks the scenes whose name contains it (`pyramid`, `boxes`, `threads`, ...).

mod joints;

use std::time::Instant;

use bevy::ecs::schedule::{Schedule, SingleThreadedExecutor};
use bevy::math::Vec3;
use bevy::prelude::{Entity, Transform};
use rapier3d::prelude as rp;
use rusting_engine::physics::geometry::mesh::TriangleMesh;
use rusting_engine::physics::plugin::cpu_physics_step;
use rusting_engine::physics::query::{QueryFilter, Ray, ShapeCast, SpatialQuery};
use rusting_engine::physics::{
    Collider, CollisionLayers, LevelMeshes, PhysicsSettings, RigidBody, Shape,
};
use rusting_engine::runtime::FrameTime;

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
    /// What the bodies fall on.
    ground: Ground,
}

/// What a scene's bodies fall on.
#[derive(Clone, Copy, PartialEq)]
enum Ground {
    /// A half-space through the origin, facing up.
    Plane,
    /// A flat triangle mesh at height 0: `cells` by `cells` squares of `cell` metres, two
    /// triangles each, centred on the origin.
    Mesh { cells: u32, cell: f32 },
}

/// The ground mesh's vertices and triangles (facing up).
fn ground_mesh(cells: u32, cell: f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let n = cells + 1;
    let half = cells as f32 * cell * 0.5;
    let vertices = (0..n * n)
        .map(|i| {
            Vec3::new(
                (i % n) as f32 * cell - half,
                0.0,
                (i / n) as f32 * cell - half,
            )
        })
        .collect();
    let mut triangles = Vec::with_capacity((2 * cells * cells) as usize);
    for row in 0..cells {
        for column in 0..cells {
            let at = |r: u32, c: u32| r * n + c;
            let (a, b, c, d) = (
                at(row, column),
                at(row, column + 1),
                at(row + 1, column),
                at(row + 1, column + 1),
            );
            triangles.push([a, c, b]);
            triangles.push([b, c, d]);
        }
    }
    (vertices, triangles)
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
        ground: Ground::Plane,
    }
}

fn pyramid(name: &'static str) -> Scene {
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
        name,
        steps: 500,
        sleep: true,
        bodies,
        watch: Some(top),
        ground: Ground::Plane,
    }
}

/// `count` bodies in a 25-wide grid, 1.2 m apart, dropped on the ground; `kind` picks each one's
/// shape from its index.
fn grid(name: &'static str, count: u32, steps: usize, kind: fn(u32) -> Kind) -> Scene {
    let bodies = (0..count)
        .map(|i| {
            let (x, y, z) = (i % 25, i / 625, (i / 25) % 25);
            let at = Vec3::new(x as f32 * 1.2, 1.0 + y as f32 * 1.2, z as f32 * 1.2);
            (at, kind(i))
        })
        .collect();
    Scene {
        name,
        steps,
        sleep: true,
        bodies,
        watch: None,
        ground: Ground::Plane,
    }
}

/// 10,000 boxes set down on the ground (a 100 x 100 grid, 1.2 m apart), which fall asleep within
/// a second, and one ball falling far above them for the whole run: a world that never comes to
/// rest, whose sleeping bodies should cost next to nothing. The ball starts 13 km up, so it is
/// still falling after the run's 50 s (12.3 km); from 3 km it landed at about tick 1,490 and the
/// second half of the run was a world at rest.
fn asleep_and_one_falling() -> Scene {
    let mut bodies: Vec<(Vec3, Kind)> = (0..10_000)
        .map(|i| {
            let (x, z) = ((i % 100) as f32 * 1.2, (i / 100) as f32 * 1.2);
            (Vec3::new(x, 0.41, z), Kind::Cube(Vec3::splat(0.4)))
        })
        .collect();
    bodies.push((Vec3::new(60.0, 13_000.0, 60.0), Kind::Ball(0.5)));
    Scene {
        name: "(s) 10,000 boxes asleep and one ball falling above them, 3000 steps",
        steps: 3000,
        sleep: true,
        bodies,
        watch: None,
        ground: Ground::Plane,
    }
}

fn mixed_kind(i: u32) -> Kind {
    match i % 3 {
        0 => Kind::Ball(0.45),
        1 => Kind::Cube(Vec3::new(0.4, 0.35, 0.45)),
        _ => Kind::Capsule(0.2, 0.3),
    }
}

fn box_kind(_: u32) -> Kind {
    Kind::Cube(Vec3::splat(0.4))
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

/// One engine with a scene loaded.
trait Engine {
    /// Advances one tick.
    fn step(&mut self);
    /// Every scene body's position, in scene order.
    fn positions(&mut self) -> Vec<Vec3>;
}

/// Rusting: an engine app holding the scene as entities, and its physics system run on its own.
struct Ours {
    app: rusting_engine::App,
    physics: Schedule,
    bodies: Vec<Entity>,
    /// The pool each tick is installed into; taken out while a whole race runs inside it.
    pool: Option<rayon::ThreadPool>,
    tick: u64,
}

impl Ours {
    fn new(scene: &Scene, threads: usize) -> Ours {
        let mut app = rusting_engine::App::default();
        app.setup().expect("an engine app");
        let world = app.world_mut();
        world.insert_resource(PhysicsSettings {
            sleep_enabled: scene.sleep,
            ..PhysicsSettings::default()
        });
        match scene.ground {
            Ground::Plane => {
                world.spawn((Transform::default(), Collider::half_space(Vec3::Y)));
            }
            Ground::Mesh { cells, cell } => {
                let (vertices, triangles) = ground_mesh(cells, cell);
                let mesh = TriangleMesh::new(vertices, triangles).expect("a ground mesh");
                let id = world.resource_mut::<LevelMeshes>().insert(mesh);
                world.spawn((Transform::default(), Collider::mesh(id)));
            }
        }
        let bodies = scene
            .bodies
            .iter()
            .map(|&(at, kind)| {
                let collider = match kind {
                    Kind::Ball(r) => Collider::sphere(r),
                    Kind::Cube(h) => Collider::cuboid(h),
                    Kind::Capsule(h, r) => Collider::capsule(h, r),
                };
                world
                    .spawn((
                        Transform::from_translation(at),
                        RigidBody::dynamic(1.0),
                        collider,
                    ))
                    .id()
            })
            .collect();
        Ours::running(app, bodies, threads)
    }

    /// An engine app whose scene is spawned, with its physics system ready to run on `threads`.
    fn running(app: rusting_engine::App, bodies: Vec<Entity>, threads: usize) -> Ours {
        let mut physics = Schedule::default();
        physics.set_executor(SingleThreadedExecutor::new());
        physics.add_systems(cpu_physics_step);
        Ours {
            app,
            physics,
            bodies,
            pool: Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .expect("a thread pool"),
            ),
            tick: 0,
        }
    }
}

impl Engine for Ours {
    fn step(&mut self) {
        let world = self.app.world_mut();
        world.resource_mut::<FrameTime>().fixed_tick = self.tick;
        let physics = &mut self.physics;
        match &self.pool {
            Some(pool) => pool.install(|| physics.run(world)),
            None => physics.run(world),
        }
        self.tick += 1;
    }

    fn positions(&mut self) -> Vec<Vec3> {
        let world = self.app.world();
        self.bodies
            .iter()
            .map(|&e| world.get::<Transform>(e).expect("a body").translation)
            .collect()
    }
}

struct Rapier {
    world: rp::PhysicsWorld,
    bodies: Vec<rp::RigidBodyHandle>,
}

/// Rapier's settings where they differ from ours, set to ours: no contact recycling (rapier keeps
/// a pair's old points while it moves less than 5 cm), Coulomb friction at every point (rapier's
/// default solves one friction constraint and a twist per manifold), our allowed overlap (0.5 mm
/// against its 5 mm), and our contact springs (60 Hz, and 120 Hz against fixed bodies, against its
/// 30 and 60).
fn matched(parameters: &mut rp::IntegrationParameters) {
    parameters.contact_recycling = false;
    parameters.friction_model = rp::FrictionModel::Coulomb;
    parameters.normalized_allowed_linear_error = 0.0005;
    parameters.contact_softness.natural_frequency = 60.0;
    parameters.static_contact_softness.natural_frequency = 120.0;
}

impl Rapier {
    fn new(scene: &Scene, settings: fn(&mut rp::IntegrationParameters)) -> Rapier {
        let mut world = rp::PhysicsWorld::default();
        world.integration_parameters.dt = 1.0 / 60.0;
        settings(&mut world.integration_parameters);
        let ground = world.insert_body(rp::RigidBodyBuilder::fixed());
        let shape = match scene.ground {
            Ground::Plane => {
                rp::ColliderBuilder::halfspace(rapier3d::na::Unit::new_unchecked(rp::Vector::Y))
            }
            Ground::Mesh { cells, cell } => {
                let (vertices, triangles) = ground_mesh(cells, cell);
                let vertices = vertices
                    .iter()
                    .map(|v| rp::Vector::new(v.x, v.y, v.z))
                    .collect();
                rp::ColliderBuilder::trimesh(vertices, triangles).expect("a ground mesh")
            }
        };
        world.insert_collider(shape.friction(0.5), Some(ground));
        let mut bodies = Vec::new();
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
            bodies.push(handle);
        }
        Rapier { world, bodies }
    }
}

impl Engine for Rapier {
    fn step(&mut self) {
        self.world.step();
    }

    fn positions(&mut self) -> Vec<Vec3> {
        self.bodies
            .iter()
            .map(|&h| {
                let t = self.world.bodies[h].translation();
                Vec3::new(t.x, t.y, t.z)
            })
            .collect()
    }
}

/// What a race measured for one engine.
struct Outcome {
    ms_per_step: f64,
    hash: u64,
    watched_height: Option<f32>,
}

/// Steps both engines through the scene in turn, timing each step, and returns their outcomes.
fn race(scene: &Scene, a: &mut dyn Engine, b: &mut dyn Engine) -> (Outcome, Outcome) {
    let (mut time_a, mut time_b) = (0.0, 0.0);
    for _ in 0..scene.steps {
        let start = Instant::now();
        a.step();
        time_a += start.elapsed().as_secs_f64();
        let start = Instant::now();
        b.step();
        time_b += start.elapsed().as_secs_f64();
    }
    let outcome = |engine: &mut dyn Engine, seconds: f64| {
        let positions = engine.positions();
        Outcome {
            ms_per_step: seconds * 1000.0 / scene.steps as f64,
            hash: hash_positions(positions.iter().copied()),
            watched_height: scene.watch.map(|w| positions[w].y),
        }
    };
    (outcome(a, time_a), outcome(b, time_b))
}

/// Races `ours` against `theirs` with the whole run inside our pool: each of our ticks runs on
/// the pool's thread and starts its parallel stages there, with no hand-off between threads per
/// tick (a game's fixed schedule makes no such hand-off either; it hands each parallel stage that
/// has work to the pool, which a tick at rest never does). Rapier uses no pool here.
pub(crate) fn race_in_pool(
    scene: &Scene,
    mut ours: Ours,
    theirs: &mut (dyn Engine + Send),
) -> (Outcome, Outcome) {
    /// The race's borrows, carried to the pool's thread.
    struct OnPool<'a>(&'a mut Ours, &'a mut (dyn Engine + Send));
    // SAFETY: `install` blocks this thread until the closure returns, so the engines are used by
    // one thread at a time. What makes `Ours` not `Send` is its app's runner, which the race
    // never calls; its world and schedule are `Send`.
    unsafe impl Send for OnPool<'_> {}
    let pool = ours.pool.take().expect("a pool");
    let on_pool = OnPool(&mut ours, theirs);
    pool.install(move || {
        let on_pool = on_pool;
        race(scene, on_pool.0, on_pool.1)
    })
}

fn row(name: &str, ours: &Outcome, theirs: &Outcome) {
    println!(
        "{:<52} {:>9.3} {:>10.3} {:>6.2}  {:016x}  {:016x}",
        name,
        ours.ms_per_step,
        theirs.ms_per_step,
        ours.ms_per_step / theirs.ms_per_step,
        ours.hash,
        theirs.hash
    );
    if let (Some(a), Some(b)) = (ours.watched_height, theirs.watched_height) {
        println!("    top box after the run: ours {a:.3} m, rapier {b:.3} m (placed at 99.5 m)");
    }
}

/// A ray for the query rows: from above the grid, tilted a little, seeded by `i`.
fn query_ray(i: u32) -> (Vec3, Vec3) {
    let f = i as f32;
    let origin = Vec3::new((f * 0.618_034) % 30.0, 40.0, (f * 0.414_213_5) % 30.0);
    let direction = Vec3::new(
        ((f * 0.3) % 1.0 - 0.5) * 0.2,
        -1.0,
        ((f * 0.7) % 1.0 - 0.5) * 0.2,
    );
    (origin, direction)
}

/// A shape cast for the query rows: across the grid at a seeded height and depth.
fn query_cast(i: u32) -> (Kind, Vec3) {
    let f = i as f32;
    let kind = match i % 3 {
        0 => Kind::Ball(0.3),
        1 => Kind::Cube(Vec3::new(0.3, 0.25, 0.2)),
        _ => Kind::Capsule(0.3, 0.2),
    };
    (
        kind,
        Vec3::new(-5.0, 1.0 + (f * 0.37) % 18.0, (f * 0.61) % 30.0),
    )
}

/// What a batch of queries found: hits and the sum of their distances' bits (to compare the
/// two engines' answers roughly, and to keep the work from being optimized away).
#[derive(Default)]
struct Found {
    hits: usize,
    distance_sum: f64,
}

impl Found {
    /// The tally of a batch's answers: a hit's distance, or `None` for a miss.
    fn of(answers: impl Iterator<Item = Option<f32>>) -> Found {
        let mut found = Found::default();
        for distance in answers.flatten() {
            found.hits += 1;
            found.distance_sum += distance as f64;
        }
        found
    }
}

/// Times `batches` batches of `run` on each engine in turn (ours first), in ms per batch.
fn race_queries(
    batches: usize,
    mut ours: impl FnMut() -> Found,
    mut theirs: impl FnMut() -> Found,
) -> (f64, f64, Found, Found) {
    let (mut time_a, mut time_b) = (0.0, 0.0);
    let (mut a, mut b) = (Found::default(), Found::default());
    for _ in 0..batches {
        let start = Instant::now();
        a = ours();
        time_a += start.elapsed().as_secs_f64();
        let start = Instant::now();
        b = theirs();
        time_b += start.elapsed().as_secs_f64();
    }
    let ms = |t: f64| t * 1000.0 / batches as f64;
    (ms(time_a), ms(time_b), a, b)
}

fn query_row(name: &str, (ours, theirs, a, b): (f64, f64, Found, Found)) {
    println!(
        "{:<52} {:>9.3} {:>10.3} {:>6.2}  hits {} / {}, mean distance {:.3} / {:.3}",
        name,
        ours,
        theirs,
        ours / theirs,
        a.hits,
        b.hits,
        a.distance_sum / a.hits.max(1) as f64,
        b.distance_sum / b.hits.max(1) as f64,
    );
}

fn rapier_shape(kind: Kind) -> rp::SharedShape {
    match kind {
        Kind::Ball(r) => rp::SharedShape::ball(r),
        Kind::Cube(h) => rp::SharedShape::cuboid(h.x, h.y, h.z),
        Kind::Capsule(h, r) => rp::SharedShape::capsule_y(h, r),
    }
}

fn our_shape(kind: Kind) -> Shape {
    match kind {
        Kind::Ball(radius) => Shape::Sphere { radius },
        Kind::Cube(half_extents) => Shape::Box { half_extents },
        Kind::Capsule(half_height, radius) => Shape::Capsule {
            half_height,
            radius,
        },
    }
}

/// A query pipeline over rapier's world, borrowed from its broad phase.
fn rapier_pipeline(w: &rp::PhysicsWorld) -> rp::QueryPipeline<'_> {
    w.broad_phase.as_query_pipeline(
        w.narrow_phase.query_dispatcher(),
        &w.bodies,
        &w.colliders,
        rp::QueryFilter::default(),
    )
}

/// 10,000 rays and 1,000 shape casts against the 10,000 mixed bodies, after one step.
fn query_rows(wanted: &dyn Fn(&str) -> bool) {
    let scene = grid("queries", 10_000, 1, mixed_kind);
    let mut ours = Ours::new(&scene, 1);
    let mut theirs = Rapier::new(&scene, |_| ());
    ours.step();
    theirs.step();
    let world = ours.app.world_mut();
    let mut state = bevy::ecs::system::SystemState::<SpatialQuery>::new(world);

    let name = "(q1) 10,000 rays against 10,000 bodies (a batch)";
    if wanted(name) {
        let result = race_queries(
            20,
            || {
                let world = ours.app.world_mut();
                world.increment_change_tick();
                let query = state.get(world).expect("a spatial query");
                Found::of((0..10_000).map(|i| {
                    let (origin, direction) = query_ray(i);
                    let ray = Ray::new(origin, direction, 100.0);
                    let hit = query.cast_ray(&ray, &QueryFilter::default());
                    hit.ok().flatten().map(|hit| hit.distance)
                }))
            },
            || {
                let pipeline = rapier_pipeline(&theirs.world);
                Found::of((0..10_000).map(|i| {
                    let (origin, direction) = query_ray(i);
                    let length = direction.length();
                    let ray = rp::Ray::new(
                        rp::Vector::new(origin.x, origin.y, origin.z),
                        rp::Vector::new(direction.x, direction.y, direction.z) / length,
                    );
                    let hit = pipeline.cast_ray_and_get_normal(&ray, 100.0, true);
                    hit.map(|(_, hit)| hit.time_of_impact)
                }))
            },
        );
        query_row(name, result);
    }
    let name = "(q2) 1,000 shape casts against 10,000 bodies (a batch)";
    if wanted(name) {
        let result = race_queries(
            20,
            || {
                let world = ours.app.world_mut();
                world.increment_change_tick();
                let query = state.get(world).expect("a spatial query");
                Found::of((0..1_000).map(|i| {
                    let (kind, from) = query_cast(i);
                    let cast = ShapeCast::new(our_shape(kind), from, Vec3::X, 50.0);
                    let hit = query.cast_shape(&cast, &QueryFilter::default());
                    hit.ok().flatten().map(|hit| hit.distance)
                }))
            },
            || {
                let pipeline = rapier_pipeline(&theirs.world);
                Found::of((0..1_000).map(|i| {
                    let (kind, from) = query_cast(i);
                    let shape = rapier_shape(kind);
                    let pose = rp::Pose::translation(from.x, from.y, from.z);
                    let options =
                        rapier3d::parry::query::ShapeCastOptions::with_max_time_of_impact(50.0);
                    let hit = pipeline.cast_shape(&pose, rp::Vector::X, shape.as_ref(), options);
                    hit.map(|(_, hit)| hit.time_of_impact)
                }))
            },
        );
        query_row(name, result);
    }
}

/// How many fast balls each engine let through the wall, after a race of 60 steps.
fn fast_balls_row() {
    const BALLS: u32 = 1_000;
    let name = "(f) 1000 balls at 300 m/s into a 0.1 m wall, 60 steps";
    let launch = |k: u32| {
        let f = k as f32;
        let start = Vec3::new(
            -1.0 - (f * 0.618_034) % 2.0,
            (f * 0.37) % 40.0 - 20.0,
            (f * 0.73) % 40.0 - 20.0,
        );
        let off = (f * 0.414_213_5) % 1.0;
        let around = (f * 0.271_828) % 1.0 * std::f32::consts::TAU;
        let tilt = off * 1.0;
        (
            start,
            Vec3::new(
                tilt.cos(),
                tilt.sin() * around.cos(),
                tilt.sin() * around.sin(),
            ) * 300.0,
        )
    };
    // Ours: the balls meet only the wall.
    let mut app = rusting_engine::App::default();
    app.setup().expect("an engine app");
    let world = app.world_mut();
    world.insert_resource(PhysicsSettings::default());
    world.spawn((
        Transform::default(),
        Collider::cuboid(Vec3::new(0.05, 60.0, 60.0)),
        CollisionLayers {
            memberships: 1,
            filters: 2,
        },
    ));
    let balls: Vec<Entity> = (0..BALLS)
        .map(|k| {
            let (at, velocity) = launch(k);
            world
                .spawn((
                    Transform::from_translation(at),
                    RigidBody::dynamic(0.01).with_velocity(velocity, Vec3::ZERO),
                    Collider::sphere(0.025),
                    CollisionLayers {
                        memberships: 2,
                        filters: 1,
                    },
                ))
                .id()
        })
        .collect();
    let mut physics = Schedule::default();
    physics.set_executor(SingleThreadedExecutor::new());
    physics.add_systems(cpu_physics_step);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a thread pool");
    // Rapier: the same, with continuous collision on each ball.
    let mut rapier = rp::PhysicsWorld::default();
    rapier.integration_parameters.dt = 1.0 / 60.0;
    let wall = rapier.insert_body(rp::RigidBodyBuilder::fixed());
    rapier.insert_collider(
        rp::ColliderBuilder::cuboid(0.05, 60.0, 60.0).collision_groups(rp::InteractionGroups::new(
            rp::Group::GROUP_1,
            rp::Group::GROUP_2,
            rp::InteractionTestMode::And,
        )),
        Some(wall),
    );
    let handles: Vec<rp::RigidBodyHandle> = (0..BALLS)
        .map(|k| {
            let (at, velocity) = launch(k);
            let body = rapier.insert_body(
                rp::RigidBodyBuilder::dynamic()
                    .translation(rp::Vector::new(at.x, at.y, at.z))
                    .linvel(rp::Vector::new(velocity.x, velocity.y, velocity.z))
                    .ccd_enabled(true),
            );
            rapier.insert_collider(
                rp::ColliderBuilder::ball(0.025)
                    .mass(0.01)
                    .collision_groups(rp::InteractionGroups::new(
                        rp::Group::GROUP_2,
                        rp::Group::GROUP_1,
                        rp::InteractionTestMode::And,
                    )),
                Some(body),
            );
            body
        })
        .collect();
    let (mut ours_time, mut theirs_time) = (0.0, 0.0);
    let (mut ours_through, mut theirs_through) =
        (vec![false; BALLS as usize], vec![false; BALLS as usize]);
    for tick in 0..60u64 {
        let world = app.world_mut();
        world.resource_mut::<FrameTime>().fixed_tick = tick;
        let start = Instant::now();
        pool.install(|| physics.run(world));
        ours_time += start.elapsed().as_secs_f64();
        let start = Instant::now();
        rapier.step();
        theirs_time += start.elapsed().as_secs_f64();
        // Through: the centre past the wall's far face.
        for (k, &ball) in balls.iter().enumerate() {
            ours_through[k] |= app
                .world()
                .get::<Transform>(ball)
                .expect("a ball")
                .translation
                .x
                > 0.05;
        }
        for (k, &ball) in handles.iter().enumerate() {
            theirs_through[k] |= rapier.bodies[ball].translation().x > 0.05;
        }
    }
    let (ours_ms, theirs_ms) = (ours_time * 1000.0 / 60.0, theirs_time * 1000.0 / 60.0);
    println!(
        "{:<52} {:>9.3} {:>10.3} {:>6.2}  through the wall: ours {}, rapier {}",
        name,
        ours_ms,
        theirs_ms,
        ours_ms / theirs_ms,
        ours_through.iter().filter(|&&t| t).count(),
        theirs_through.iter().filter(|&&t| t).count(),
    );
}

fn main() {
    let only = std::env::args().nth(1);
    let wanted = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    println!(
        "{:<52} {:>9} {:>10} {:>6}  {:<16}  {:<16}",
        "scene (rapier with its defaults unless noted)",
        "ours ms",
        "rapier ms",
        "ratio",
        "ours hash",
        "rapier hash"
    );
    let scenes = [
        balls(),
        pyramid("(b) 100-row pyramid (5050 boxes), 500 steps"),
        grid(
            "(c) 10,000 mixed bodies, 300 steps",
            10_000,
            300,
            mixed_kind,
        ),
        grid("(d) 1000 boxes, 600 steps", 1000, 600, box_kind),
        Scene {
            name: "(m) 1000 balls on a 100,352-triangle mesh, 300 steps",
            ground: Ground::Mesh {
                cells: 224,
                cell: 0.5,
            },
            steps: 300,
            ..balls()
        },
        grid("(e) 10,000 boxes, 300 steps", 10_000, 300, box_kind),
        asleep_and_one_falling(),
    ];
    for scene in &scenes {
        if wanted(scene.name) {
            let (ours, theirs) = race_in_pool(
                scene,
                Ours::new(scene, 1),
                &mut Rapier::new(scene, |_| ()),
            );
            row(scene.name, &ours, &theirs);
        }
    }
    let matched_scenes = [
        pyramid("(b') the pyramid, rapier's settings matched to ours"),
        grid(
            "(e') 10,000 boxes, rapier's settings matched to ours",
            10_000,
            300,
            box_kind,
        ),
    ];
    for scene in &matched_scenes {
        if wanted(scene.name) {
            let (ours, theirs) = race_in_pool(
                scene,
                Ours::new(scene, 1),
                &mut Rapier::new(scene, matched),
            );
            row(scene.name, &ours, &theirs);
        }
    }
    joints::rows(&wanted);
    query_rows(&wanted);
    if wanted("(f) 1000 balls at 300 m/s into a 0.1 m wall, 60 steps") {
        fast_balls_row();
    }
    let name = "(c) on two threads against one (threads)";
    if wanted(name) {
        let scene = grid(name, 10_000, 300, mixed_kind);
        let (two, one) = race(&scene, &mut Ours::new(&scene, 2), &mut Ours::new(&scene, 1));
        println!(
            "{name}: {:.3} ms against {:.3} ms, speedup {:.2}; hashes {:016x} and {:016x} ({})",
            two.ms_per_step,
            one.ms_per_step,
            one.ms_per_step / two.ms_per_step,
            two.hash,
            one.hash,
            if two.hash == one.hash {
                "equal"
            } else {
                "DIFFERENT"
            }
        );
    }
}

//! How a tick's cost grows with the number of bodies: the mixed scene (balls, boxes and capsules
//! in a square grid 16 layers high, dropped on a ground) at 1,000, 10,000 and 100,000 bodies, on
//! the CPU (the engine's physics system on one thread and on two, as a game runs it: every body
//! copied out of the ECS and back) and on the GPU world (the first Vulkan device, lavapipe on a
//! machine without a GPU). Prints ms per tick and the growth exponent between sizes: the `k` in
//! `time ~ n^k` (n log n from 10,000 to 100,000 bodies is k = 1.10). Run with
//! `cargo bench --bench scaling` (or `-- cpu` / `-- gpu` for one side).
//!
//! Every size runs the same ticks from the same start: the grid falls and piles up, so the ticks
//! include falling, first contacts and the pile. The two CPU runs of a size must end with the same
//! hash of every body's position bits.

use std::time::Instant;

use bevy::ecs::schedule::{Schedule, SingleThreadedExecutor};
use bevy::prelude::*;
use rusting_engine::physics::gpu::{
    GpuBodyInit, GpuContext, GpuPhysicsConfig, GpuPhysicsWorld, GpuStepParams,
};
use rusting_engine::physics::plugin::cpu_physics_step;
use rusting_engine::physics::{Collider, PhysicsSettings, RigidBody};
use rusting_engine::runtime::FrameTime;

#[path = "../tests/support/gpu_bodies.rs"]
mod gpu_bodies;

/// The sizes of the table.
const SIZES: [u32; 3] = [1_000, 10_000, 100_000];
/// Ticks each CPU run is timed over.
const CPU_TICKS: u64 = 90;
/// Ticks each GPU run is timed over (after one untimed tick that compiles the pipelines).
const GPU_TICKS: u64 = 5;

/// The `i`th body of a mixed grid of `count`: a square base 16 layers high, 1.2 m apart.
fn place(i: u32, count: u32) -> (Vec3, Collider) {
    let side = ((count as f32 / 16.0).sqrt().ceil() as u32).max(1);
    let (x, z, y) = (i % side, (i / side) % side, i / (side * side));
    let at = Vec3::new(x as f32 * 1.2, 1.0 + y as f32 * 1.2, z as f32 * 1.2);
    let collider = match i % 3 {
        0 => Collider::sphere(0.45),
        1 => Collider::cuboid(Vec3::new(0.4, 0.35, 0.45)),
        _ => Collider::capsule(0.2, 0.3),
    };
    (at, collider)
}

/// ms per tick of the CPU physics system on `threads` threads, and the final positions' hash.
fn cpu_run(count: u32, threads: usize) -> (f64, u64) {
    let mut app = rusting_engine::App::default();
    app.setup().expect("an engine app");
    let world = app.world_mut();
    world.insert_resource(PhysicsSettings::default());
    world.spawn((Transform::default(), Collider::half_space(Vec3::Y)));
    let bodies: Vec<Entity> = (0..count)
        .map(|i| {
            let (at, collider) = place(i, count);
            world
                .spawn((
                    Transform::from_translation(at),
                    RigidBody::dynamic(1.0),
                    collider,
                ))
                .id()
        })
        .collect();
    let mut physics = Schedule::default();
    physics.set_executor(SingleThreadedExecutor::new());
    physics.add_systems(cpu_physics_step);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    let seconds = pool.install(|| {
        let start = Instant::now();
        for tick in 0..CPU_TICKS {
            world.resource_mut::<FrameTime>().fixed_tick = tick;
            physics.run(world);
        }
        start.elapsed().as_secs_f64()
    });
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for &body in &bodies {
        let p = world.get::<Transform>(body).expect("a body").translation;
        for c in [p.x, p.y, p.z] {
            hash = (hash ^ u64::from(c.to_bits())).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    (seconds * 1000.0 / CPU_TICKS as f64, hash)
}

/// ms per tick of the GPU world holding the same scene.
fn gpu_run(context: &GpuContext, count: u32) -> Result<f64, String> {
    let config = GpuPhysicsConfig {
        capacity: count,
        cell_size: 2.0,
        grid_cells: (2 * count).next_power_of_two(),
        max_events: 1024,
    };
    let mut world = GpuPhysicsWorld::new(context, config).map_err(|e| e.to_string())?;
    let bodies: Vec<GpuBodyInit> = (0..count)
        .map(|slot| {
            let (at, collider) = place(slot, count);
            gpu_bodies::body(slot, at, collider, 1.0)
        })
        .collect();
    world.set_bodies(&bodies).map_err(|e| e.to_string())?;
    world
        .set_cpu_colliders(&[gpu_bodies::ground()])
        .map_err(|e| e.to_string())?;
    let params = |tick| GpuStepParams {
        tick,
        fixed_delta: 1.0 / 60.0,
        gravity: Vec3::new(0.0, -9.81, 0.0),
    };
    world.step(&params(0), &[]).map_err(|e| e.to_string())?;
    let start = Instant::now();
    for tick in 1..=GPU_TICKS {
        world.step(&params(tick), &[]).map_err(|e| e.to_string())?;
    }
    Ok(start.elapsed().as_secs_f64() * 1000.0 / GPU_TICKS as f64)
}

/// The growth exponent between two sizes' times.
fn exponent(small: (u32, f64), large: (u32, f64)) -> f64 {
    (large.1 / small.1).ln() / (f64::from(large.0) / f64::from(small.0)).ln()
}

fn table(name: &str, rows: &[(u32, f64)]) {
    println!("{name}");
    for (k, &(count, ms)) in rows.iter().enumerate() {
        let growth = match k {
            0 => String::from("-"),
            _ => format!("{:.2}", exponent(rows[k - 1], (count, ms))),
        };
        println!("  {count:>7} bodies  {ms:>10.3} ms/tick  exponent from the size before {growth}");
    }
}

fn main() {
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wanted = |side: &str| only.as_deref().is_none_or(|o| o == side);
    if wanted("cpu") {
        let mut one = Vec::new();
        let mut two = Vec::new();
        for count in SIZES {
            let (ms_one, hash_one) = cpu_run(count, 1);
            let (ms_two, hash_two) = cpu_run(count, 2);
            println!(
                "{count} bodies: one thread {ms_one:.3} ms, two threads {ms_two:.3} ms, speedup \
                 {:.2}; hashes {hash_one:016x} and {hash_two:016x} ({})",
                ms_one / ms_two,
                if hash_one == hash_two {
                    "equal"
                } else {
                    "DIFFERENT"
                }
            );
            assert_eq!(
                hash_one, hash_two,
                "{count} bodies: the thread count changed the bits"
            );
            one.push((count, ms_one));
            two.push((count, ms_two));
        }
        table(
            &format!("CPU, the mixed scene, {CPU_TICKS} ticks from the drop, one thread:"),
            &one,
        );
        table("CPU, the same, two threads:", &two);
    }
    if wanted("gpu") {
        match GpuContext::new() {
            Ok(context) => {
                let device = context.info().name.clone();
                let mut rows = Vec::new();
                for count in SIZES {
                    match gpu_run(&context, count) {
                        Ok(ms) => {
                            println!("GPU world of {count} bodies: {ms:.3} ms per tick");
                            rows.push((count, ms));
                        }
                        Err(error) => {
                            println!("GPU world of {count} bodies: {error}");
                            break;
                        }
                    }
                }
                table(
                    &format!(
                        "GPU world on {device}, the same scene, {GPU_TICKS} ticks after the first:"
                    ),
                    &rows,
                );
            }
            Err(error) => println!("GPU rows skipped: no Vulkan device ({error})"),
        }
    }
}

//! The world-state hash on 10,000 CPU bodies that also carry a game-registered component, next to
//! a plain copy of the same component bytes, measured in the same run, on rayon's global pool (as
//! a game hashes) and on one thread; and the cost of the
//! undeclared-state check on the same world, and of the floating-point environment's check at a
//! tick's two boundaries. Run with `cargo bench --bench state_hash`.

use std::hint::black_box;
use std::time::Instant;

use bevy::prelude::*;
use rusting_engine::physics::PhysicsId;
use rusting_engine::prelude::*;
use rusting_engine::runtime::{FloatControl, FloatEnvPolicy, FloatGuard};
use rusting_engine::state::undeclared::find_undeclared;
use rusting_engine::state::world_state_hash;

/// A game's own component, registered with one call.
#[derive(Component, Clone, SimState)]
struct Health {
    value: f32,
}

/// Copies the bytes the hash reads from every body into one buffer.
fn copy_bytes(world: &mut World, out: &mut Vec<u8>) {
    out.clear();
    let mut query = world.query::<(
        Entity,
        &Transform,
        &RigidBody,
        &Collider,
        &PhysicsBody,
        Option<&PhysicsId>,
        &Health,
    )>();
    for (entity, t, body, collider, class, id, health) in query.iter(world) {
        out.extend_from_slice(&entity.to_bits().to_le_bytes());
        for v in [
            t.translation,
            t.scale,
            body.linear_velocity,
            body.angular_velocity,
        ] {
            for c in [v.x, v.y, v.z] {
                out.extend_from_slice(&c.to_bits().to_le_bytes());
            }
        }
        for c in [
            t.rotation.x,
            t.rotation.y,
            t.rotation.z,
            t.rotation.w,
            body.mass,
            body.gravity_scale,
        ] {
            out.extend_from_slice(&c.to_bits().to_le_bytes());
        }
        for c in [collider.friction, collider.restitution, health.value] {
            out.extend_from_slice(&c.to_bits().to_le_bytes());
        }
        out.push(class.class as u8);
        out.extend_from_slice(&id.map(|i| i.0).unwrap_or(0).to_le_bytes());
    }
}

fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let start = Instant::now();
        f();
        best = best.min(start.elapsed().as_secs_f64() * 1000.0);
    }
    best
}

fn main() {
    let mut app = rusting_engine::App::default();
    app.register_sim_component::<Health>();
    app.world_mut().resource_mut::<PhysicsSettings>().gravity = Vec3::ZERO;
    for i in 0..10_000u32 {
        let (x, y, z) = (i % 100, i / 100 % 10, i / 1000);
        app.world_mut().spawn((
            Transform::from_xyz(x as f32 * 3.0, y as f32 * 3.0, z as f32 * 3.0),
            RigidBody::dynamic(1.0),
            Collider::sphere(0.5),
            Health { value: 100.0 },
        ));
    }
    app.setup().unwrap();
    let step = app.fixed_step();
    app.update(step);
    let world = app.world_mut();
    let mut buffer = Vec::new();
    let copy = best_of(30, || {
        copy_bytes(world, &mut buffer);
        black_box(&buffer);
    });
    let mut hash = 0;
    let hashing = best_of(30, || hash = black_box(world_state_hash(world)));
    // The same hash on one thread: the world's pieces hashed one after another.
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool")
        .install(|| best_of(30, || assert_eq!(black_box(world_state_hash(world)), hash)));
    let (since, now) = (world.last_change_tick(), world.change_tick());
    let mut found = None;
    let checking = best_of(30, || {
        found = black_box(find_undeclared(world, since, now, 1))
    });
    assert!(
        found.is_none(),
        "every state in the bench is declared: {found:?}"
    );
    println!("10,000 CPU bodies: undeclared-state check {checking:.3} ms per tick");
    // The simulation thread's check before and after a tick, as the frame stepper runs it, and
    // one register read (what each probe of a checked run and each worker check costs).
    const ROUNDS: u64 = 1_000_000;
    let mut guard = FloatGuard::new(FloatEnvPolicy::Restore);
    let boundaries = best_of(10, || {
        for tick in 0..ROUNDS {
            guard.before_tick(black_box(tick));
            guard.after_tick(black_box(tick));
        }
    }) * 1e6
        / ROUNDS as f64;
    let mut expected = true;
    let read = best_of(10, || {
        for _ in 0..ROUNDS {
            expected &= black_box(FloatControl::current_is_expected());
        }
    }) * 1e6
        / ROUNDS as f64;
    assert!(expected && guard.first_change().is_none());
    println!(
        "floating-point environment check: {boundaries:.1} ns per tick (both boundaries; target \
         100 ns), one register read {read:.1} ns; {:.6} of this world's hash time",
        boundaries / (hashing * 1e6)
    );
    println!(
        "10,000 CPU bodies with a game component: world_state_hash {hashing:.3} ms on {} threads, plain copy of the same bytes {copy:.3} ms, ratio {:.2} (hash {hash:016x}, {} bytes copied); on one thread {one_thread:.3} ms, ratio {:.2}",
        rayon::current_num_threads(),
        hashing / copy,
        buffer.len(),
        one_thread / copy
    );
}

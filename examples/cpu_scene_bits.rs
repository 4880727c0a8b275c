//! Runs one physics scene headless and prints a hash of every body's state after every tick.
//!
//! `tools/compare-cpu-builds.sh` builds this with different CPU targets and optimization levels
//! and compares the output: the evidence behind the CPU solver's `CrossPlatform` declaration.
//!
//! Usage: `cargo run --example cpu_scene_bits -- [ticks]` (default 300).

use bevy::prelude::*;
use rusting_engine::prelude::*;

/// FNV-1a over 32-bit words.
fn fnv(hash: &mut u64, word: u32) {
    for byte in word.to_le_bytes() {
        *hash ^= byte as u64;
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn main() {
    let ticks: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let mut app = rusting_engine::App::default();
    let world = app.world_mut();
    world.spawn((Transform::default(), Collider::half_space(Vec3::Y)));
    // A ten-row pyramid, and a rain of spheres, capsules and tumbling boxes onto it.
    for row in 0..10 {
        for k in 0..(10 - row) {
            let x = (k as f32 - (10 - row - 1) as f32 * 0.5) * 1.05;
            world.spawn((
                Transform::from_xyz(x, 0.5 + row as f32, 0.0),
                RigidBody::dynamic(1.0),
                Collider::cuboid(Vec3::splat(0.5)),
            ));
        }
    }
    for i in 0..60u32 {
        let f = i as f32;
        let at = Vec3::new(
            (f * 0.37) % 6.0 - 3.0,
            12.0 + f * 0.6,
            (f * 0.53) % 2.0 - 1.0,
        );
        let collider = match i % 3 {
            0 => Collider::sphere(0.35).with_restitution(0.3),
            1 => Collider::capsule(0.3, 0.2),
            _ => Collider::cuboid(Vec3::new(0.3, 0.2, 0.4)),
        };
        world.spawn((
            Transform::from_translation(at).with_rotation(sim_math::rotation_from_euler(
                sim_math::EulerOrder::YXZ,
                f * 0.3,
                f * 0.2,
                f * 0.1,
            )),
            RigidBody::dynamic(0.5).with_velocity(Vec3::ZERO, Vec3::new(f * 0.1, 1.0, -0.5)),
            collider,
        ));
    }
    app.setup().expect("the scene starts");
    let mut bodies = app.world_mut().query::<(Entity, &Transform, &RigidBody)>();
    let mut chain = 0xcbf2_9ce4_8422_2325u64;
    for _ in 0..ticks {
        let step = app.fixed_step();
        app.update(step);
        let mut rows: Vec<_> = bodies.iter(app.world()).collect();
        rows.sort_by_key(|(e, _, _)| *e);
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        for (_, transform, body) in rows {
            let r = transform.rotation;
            for v in [
                transform.translation,
                body.linear_velocity,
                body.angular_velocity,
            ] {
                for c in [v.x, v.y, v.z] {
                    fnv(&mut hash, c.to_bits());
                }
            }
            for c in [r.x, r.y, r.z, r.w] {
                fnv(&mut hash, c.to_bits());
            }
        }
        fnv(&mut chain, hash as u32);
        fnv(&mut chain, (hash >> 32) as u32);
        println!("{} {hash:016x}", app.ticks());
    }
    println!("final {chain:016x}");
}

//! The CPU reference of the GPU step (`physics::gpu::GpuReferenceWorld`) against the device: the
//! same scene gives the same bits on both, tick by tick. Feature `gpu-tests`; in CI the device is
//! Mesa's lavapipe.
//!
//! Run with `--test-threads=1` (one device per test at a time, see `docs/gpu.md`).

use bevy::math::{Quat, Vec3};
use rusting_engine::physics::components::{Collider, CollisionLayers, RigidBody};
use rusting_engine::physics::gpu::{
    GpuBodyInit, GpuBodyState, GpuCollider, GpuCommand, GpuContext, GpuPhysicsConfig,
    GpuPhysicsWorld, GpuReferenceWorld, GpuRule, GpuStepParams, GpuTickResult,
};

#[path = "support/gpu_bodies.rs"]
mod gpu_bodies;
use gpu_bodies::{body, ground};

const DT: f32 = 1.0 / 60.0;
const TICKS: u64 = 300;

fn params(tick: u64) -> GpuStepParams {
    GpuStepParams {
        tick,
        fixed_delta: DT,
        gravity: Vec3::new(0.0, -9.81, 0.0),
    }
}

/// Every kind of contact the GPU step has: spheres, boxes and capsules, turned and spinning,
/// falling on a ground, a turned CPU box and a CPU ball and on each other; a kinematic body
/// sweeping through, a static GPU body, a sensor, a body on its own layer; bouncy and slippery
/// materials; timers and below-height rules.
fn scene() -> (Vec<GpuBodyInit>, Vec<GpuCollider>) {
    let mut bodies = Vec::new();
    for i in 0..36u32 {
        let x = (i % 6) as f32 * 0.85 - 2.1;
        let z = ((i / 6) % 6) as f32 * 0.85 - 2.1;
        let y = 1.0 + (i % 4) as f32 * 0.9 + (i / 12) as f32 * 0.7;
        let collider = match i % 3 {
            0 => Collider::sphere(0.3 + (i % 5) as f32 * 0.02),
            1 => Collider::cuboid(Vec3::new(0.3, 0.25, 0.35)),
            _ => Collider::capsule(0.2, 0.2),
        }
        .with_friction(0.2 + (i % 4) as f32 * 0.2)
        .with_restitution(if i % 5 == 0 { 0.6 } else { 0.0 });
        let mut b = body(i, Vec3::new(x, y, z), collider, 0.5 + (i % 4) as f32);
        b.rotation = Quat::from_euler(
            bevy::math::EulerRot::XYZ,
            0.3 * (i % 7) as f32,
            0.2 * (i % 5) as f32,
            0.1 * (i % 3) as f32,
        );
        b.linear_velocity = Vec3::new(0.4 * ((i % 5) as f32 - 2.0), -1.0, 0.3);
        b.angular_velocity = Vec3::new(0.0, 0.5 * (i % 3) as f32, 0.0);
        b.rule = match i % 6 {
            0 => GpuRule::EmitEvery { period: 0.25 },
            3 => GpuRule::EmitBelow { height: 0.5 },
            _ => GpuRule::None,
        };
        b.custom = [i as f32, 0.0, 0.0, 0.0];
        bodies.push(b);
    }
    // A kinematic paddle sweeping across, a static GPU post, a sensor and a ghost on its own
    // layer (falls through everything but the ground).
    let mut paddle = body(
        40,
        Vec3::new(-4.0, 0.6, 0.0),
        Collider::cuboid(Vec3::new(0.2, 0.5, 1.5)),
        1.0,
    );
    paddle.body = RigidBody::kinematic(Vec3::ZERO);
    paddle.linear_velocity = Vec3::new(1.0, 0.0, 0.0);
    let mut post = body(
        41,
        Vec3::new(2.6, 0.8, 2.6),
        Collider::capsule(0.6, 0.25),
        1.0,
    );
    post.body = RigidBody::fixed();
    let mut sensor_collider = Collider::sphere(0.5);
    sensor_collider.sensor = true;
    let mut sensor = body(42, Vec3::new(0.0, 3.0, 0.0), sensor_collider, 1.0);
    sensor.body.gravity_scale = 0.0;
    let mut ghost = body(43, Vec3::new(0.1, 6.0, 0.1), Collider::sphere(0.3), 2.0);
    ghost.layers = CollisionLayers {
        memberships: 0b10,
        filters: 0b01,
    };
    bodies.extend([paddle, post, sensor, ghost]);

    let ramp = GpuCollider {
        collider: Collider::cuboid(Vec3::new(1.0, 0.2, 1.0)),
        translation: Vec3::new(-1.5, 0.3, -1.5),
        rotation: Quat::from_rotation_z(0.35),
        layers: CollisionLayers::default(),
    };
    let boulder = GpuCollider {
        collider: Collider::sphere(0.7),
        translation: Vec3::new(1.5, 0.2, 1.0),
        rotation: Quat::IDENTITY,
        layers: CollisionLayers::default(),
    };
    (bodies, vec![ground(), ramp, boulder])
}

/// The commands of tick `tick`: impulses, spins, a teleport and custom values now and then.
fn commands(tick: u64) -> Vec<GpuCommand> {
    match tick {
        20 => vec![
            GpuCommand::ApplyImpulse {
                slot: 4,
                impulse: Vec3::new(3.0, 6.0, 0.0),
            },
            GpuCommand::SetCustom {
                slot: 4,
                values: [1.0, 2.0, 3.0, 4.0],
            },
        ],
        90 => vec![GpuCommand::SetVelocity {
            slot: 7,
            linear: Vec3::new(0.0, 5.0, -2.0),
            angular: Vec3::new(3.0, 0.0, 1.0),
        }],
        150 => vec![
            GpuCommand::Teleport {
                slot: 10,
                translation: Vec3::new(0.0, 4.0, 0.0),
                rotation: Quat::from_rotation_x(0.7),
            },
            GpuCommand::ApplyImpulse {
                slot: 10,
                impulse: Vec3::new(-2.0, 0.0, 1.0),
            },
        ],
        _ => Vec::new(),
    }
}

/// Every bit of a body's read-back state.
fn bits(states: &[GpuBodyState]) -> Vec<u32> {
    let mut words = Vec::new();
    for state in states {
        words.push(state.slot);
        for v in [
            state.translation,
            state.linear_velocity,
            state.angular_velocity,
        ] {
            words.extend(v.to_array().map(f32::to_bits));
        }
        words.extend(state.rotation.to_array().map(f32::to_bits));
        words.extend(state.custom.map(f32::to_bits));
    }
    words
}

fn event_bits(result: &GpuTickResult) -> Vec<(u64, u32, u32, [u32; 3])> {
    result
        .events
        .iter()
        .map(|event| {
            (
                event.tick,
                event.slot,
                event.kind as u32,
                event.translation.to_array().map(f32::to_bits),
            )
        })
        .collect()
}

/// The device and the CPU reference give the same hash and events on every one of 300 ticks of a
/// scene with every kind of contact, commands, timers and below-height rules, bodies inserted and
/// removed between ticks and a world grown mid-run, and the same bodies
/// every 50 ticks; the reference meets no subnormal (lavapipe does not preserve them, so the
/// comparison would mean nothing where one appears). The scene is checked to be doing something:
/// bodies come to rest on the ground, events fire. At tick 160 the device continues in a new,
/// smaller world loaded from the reference's image (`load_image` resizes it). Fails when the
/// reference's contact slop is 0.003 m instead of the shader's 0.002 m (the hashes part at the
/// first resting contact), or when the device's `load_image` keeps its own capacity.
#[test]
fn gpu_step_matches_the_cpu_reference_bit_for_bit() {
    let context =
        GpuContext::new().unwrap_or_else(|err| panic!("the GPU tests need a Vulkan device: {err}"));
    let config = GpuPhysicsConfig {
        capacity: 64,
        cell_size: 2.0,
        grid_cells: 256,
        max_events: 64,
    };
    let (bodies, colliders) = scene();
    let mut device = GpuPhysicsWorld::new(&context, config).expect("world");
    device.set_bodies(&bodies).expect("bodies");
    device.set_cpu_colliders(&colliders).expect("colliders");
    let mut reference = GpuReferenceWorld::new(config).expect("reference");
    reference.set_bodies(&bodies).expect("bodies");
    reference.set_cpu_colliders(&colliders);

    let mut events = 0;
    for tick in 0..TICKS {
        // Bodies join and leave at tick boundaries, and the world grows past its first capacity.
        match tick {
            100 => {
                device.grow(128).expect("grow");
                reference.grow(128).expect("grow");
            }
            120 => {
                let mut late = body(
                    44,
                    Vec3::new(0.5, 3.0, -0.5),
                    Collider::cuboid(Vec3::splat(0.3)),
                    1.5,
                );
                late.rotation = Quat::from_rotation_x(0.4);
                let mut far = body(
                    100,
                    Vec3::new(-0.5, 4.0, 0.5),
                    Collider::capsule(0.3, 0.2),
                    1.0,
                );
                far.rule = GpuRule::EmitBelow { height: 1.0 };
                device.insert_bodies(&[late, far]).expect("insert");
                reference.insert_bodies(&[late, far]).expect("insert");
            }
            160 => {
                // The device goes on in a new world of the first capacity, loaded from the
                // reference's image: the image carries every word a tick needs, and the world
                // resizes to it.
                device = GpuPhysicsWorld::new(&context, config).expect("world");
                device.load_image(&reference.image()).expect("load");
                device.set_cpu_colliders(&colliders).expect("colliders");
                assert_eq!(device.config().capacity, 128);
            }
            200 => {
                device.remove_bodies(&[5, 44]).expect("remove");
                reference.remove_bodies(&[5, 44]).expect("remove");
            }
            _ => {}
        }
        let commands = commands(tick);
        let on_device = device.step(&params(tick), &commands).expect("device step");
        let on_cpu = reference
            .step(&params(tick), &commands)
            .expect("reference step");
        assert_eq!(
            on_device.hash, on_cpu.hash,
            "tick {tick}: the device's hash {:016x} differs from the reference's {:016x}",
            on_device.hash, on_cpu.hash
        );
        assert_eq!(
            event_bits(&on_device),
            event_bits(&on_cpu),
            "tick {tick}: events"
        );
        assert_eq!(on_device.lost_events, on_cpu.lost_events);
        events += on_cpu.events.len();
        if tick % 50 == 49 {
            let device_bodies = device.read_bodies().expect("read");
            assert_eq!(
                bits(&device_bodies),
                bits(&reference.read_bodies()),
                "tick {tick}: bodies"
            );
            assert_eq!(
                device.image().expect("image"),
                reference.image(),
                "tick {tick}: every word of every slot, rule state included"
            );
        }
    }
    assert_eq!(reference.subnormals(), 0, "subnormal values met");
    assert!(events > 20, "only {events} events fired");
    let states = reference.read_bodies();
    let resting = states
        .iter()
        .filter(|state| state.slot < 36 && state.translation.y > 0.0 && state.translation.y < 1.5)
        .count();
    assert!(
        resting > 20,
        "only {resting} bodies came to rest near the ground"
    );
}

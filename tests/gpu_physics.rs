//! GPU physics on a Vulkan device (`physics::gpu::GpuPhysicsWorld`): contacts through the hash
//! grid and the fallback list, timers on the GPU clock, a stack that stands, edge-triggered rules,
//! command order, event overflow and refused inputs. Feature `gpu-tests`; in CI the device is
//! Mesa's lavapipe.
//!
//! Run with `--test-threads=1` (one device per test at a time, see `docs/gpu.md`).

use std::time::{Duration, Instant};

use bevy::math::{Quat, Vec3};
use rusting_engine::physics::components::{Collider, RigidBody};
use rusting_engine::physics::gpu::{
    GpuBodyInit, GpuBodyState, GpuCommand, GpuContext, GpuError, GpuEventKind, GpuPhysicsConfig,
    GpuPhysicsWorld, GpuRule, GpuStepParams,
};
use rusting_engine::runtime::sim_math;

#[path = "support/gpu_bodies.rs"]
mod gpu_bodies;
use gpu_bodies::{body, ground};

const DT: f32 = 1.0 / 60.0;
const GRAVITY: Vec3 = Vec3::new(0.0, -9.81, 0.0);

fn gpu() -> GpuContext {
    GpuContext::new().unwrap_or_else(|err| panic!("the GPU tests need a Vulkan device: {err}"))
}

fn params(tick: u64) -> GpuStepParams {
    GpuStepParams {
        tick,
        fixed_delta: DT,
        gravity: GRAVITY,
    }
}

fn config(capacity: u32, grid_cells: u32) -> GpuPhysicsConfig {
    GpuPhysicsConfig {
        capacity,
        cell_size: 2.0,
        grid_cells,
        max_events: 256,
    }
}

/// Every bit of a body's state, for exact comparison (NaN-safe).
fn bits(state: &GpuBodyState) -> Vec<u32> {
    let mut words = vec![state.slot];
    for v in [
        state.translation,
        state.linear_velocity,
        state.angular_velocity,
    ] {
        words.extend(v.to_array().map(f32::to_bits));
    }
    words.extend(state.rotation.to_array().map(f32::to_bits));
    words.extend(state.custom.map(f32::to_bits));
    words
}

/// The scene of the grid test: a heavy box too big for a grid cell (so it lives in the fallback
/// list) on the ground, spheres, boxes and capsules raining on it and on each other, and two
/// spheres thrown at each other across cell borders.
fn rain(slots: u32) -> Vec<GpuBodyInit> {
    let mut bodies = vec![body(
        0,
        Vec3::new(0.0, 1.5, 0.0),
        Collider::cuboid(Vec3::new(3.0, 1.5, 3.0)),
        100.0,
    )];
    for slot in 1..slots {
        let i = slot - 1;
        let x = (i % 5) as f32 * 0.9 - 1.8;
        let z = ((i / 5) % 5) as f32 * 0.9 - 1.8;
        let y = 4.0 + (i / 25) as f32 * 1.1 + (i % 3) as f32 * 0.13;
        let collider = match i % 3 {
            0 => Collider::sphere(0.4),
            1 => Collider::cuboid(Vec3::new(0.35, 0.3, 0.4)),
            _ => Collider::capsule(0.2, 0.25),
        };
        let mut falling = body(slot, Vec3::new(x, y, z), collider, 1.0 + (i % 4) as f32);
        falling.linear_velocity = Vec3::new(0.3 * ((i % 7) as f32 - 3.0), 0.0, 0.2);
        bodies.push(falling);
    }
    // Two spheres thrown at each other beside the big box, meeting on a cell border (x = 8).
    let mut left = body(slots, Vec3::new(6.5, 0.5, 0.0), Collider::sphere(0.5), 1.0);
    left.linear_velocity = Vec3::new(3.0, 0.0, 0.0);
    let mut right = body(
        slots + 1,
        Vec3::new(9.5, 0.5, 0.0),
        Collider::sphere(0.5),
        1.0,
    );
    right.linear_velocity = Vec3::new(-3.0, 0.0, 0.0);
    bodies.extend([left, right]);
    bodies
}

/// Runs `ticks` ticks of `bodies` on the ground; every tick's hash and the final bodies.
fn run(
    context: &GpuContext,
    config: GpuPhysicsConfig,
    bodies: &[GpuBodyInit],
    ticks: u64,
) -> (Vec<u64>, Vec<GpuBodyState>, Duration) {
    let mut world = GpuPhysicsWorld::new(context, config).expect("world");
    world.set_bodies(bodies).expect("bodies");
    world.set_cpu_colliders(&[ground()]).expect("colliders");
    // The first step includes the driver's compile of the pipelines; time the rest.
    let mut hashes = vec![world.step(&params(0), &[]).expect("step").hash];
    let start = Instant::now();
    hashes.extend((1..ticks).map(|tick| world.step(&params(tick), &[]).expect("step").hash));
    let elapsed = start.elapsed() / (ticks as u32 - 1);
    (hashes, world.read_bodies().expect("read"), elapsed)
}

/// GPU bodies collide with each other whether a pair is found through the hash grid or the
/// fallback list, and the result never depends on which: two runs with a grid, and a run with no
/// hash memory (every body in the fallback list), give the same hash on every one of 150 ticks and
/// the same final bits. The big box (bounding diameter 8.7 m, cells of 2 m) is always in the
/// fallback list. Fails when the contact pass looks only at a body's own cell instead of the 27
/// around it (the grid run then misses pairs across cell borders and differs from tick 0).
#[test]
fn gpu_bodies_collide_with_each_other_through_grid_and_fallback() {
    let context = gpu();
    let bodies = rain(60);
    let ticks = 150;
    let (grid_hashes, grid_bodies, grid_time) = run(&context, config(64, 4096), &bodies, ticks);
    let (again_hashes, again_bodies, _) = run(&context, config(64, 4096), &bodies, ticks);
    let (flat_hashes, flat_bodies, flat_time) = run(&context, config(64, 0), &bodies, ticks);
    println!(
        "{} bodies, {ticks} ticks: grid {grid_time:?} per tick, no hash memory {flat_time:?} per tick \
         (after the first)",
        bodies.len()
    );
    assert_eq!(grid_hashes, again_hashes, "two grid runs differ");
    let first_difference = grid_hashes
        .iter()
        .zip(&flat_hashes)
        .position(|(a, b)| a != b);
    assert_eq!(
        first_difference, None,
        "the grid and the fallback-only run differ"
    );
    let grid_bits: Vec<Vec<u32>> = grid_bodies.iter().map(bits).collect();
    assert_eq!(grid_bits, again_bodies.iter().map(bits).collect::<Vec<_>>());
    assert_eq!(grid_bits, flat_bodies.iter().map(bits).collect::<Vec<_>>());
    assert_eq!(grid_bodies.len(), bodies.len());

    // They did collide: the big box holds the rain up, nothing sinks through the ground, and the
    // thrown spheres stopped each other instead of passing through.
    let big = &grid_bodies[0];
    assert!(
        (big.translation.y - 1.5).abs() < 0.1,
        "big box at {}",
        big.translation
    );
    let on_the_box = grid_bodies[1..60]
        .iter()
        .filter(|state| {
            state.translation.x.abs() < 2.9
                && state.translation.z.abs() < 2.9
                && state.translation.y > 3.1
        })
        .count();
    assert!(
        on_the_box >= 20,
        "only {on_the_box} bodies rest on the big box"
    );
    for state in &grid_bodies {
        assert!(
            state.translation.y > 0.1,
            "slot {} sank to {}",
            state.slot,
            state.translation
        );
    }
    let left = &grid_bodies[60];
    let right = &grid_bodies[61];
    assert!(
        left.translation.x < right.translation.x - 0.9,
        "{left:?} {right:?}"
    );
    assert!(left.translation.x < 8.0 && right.translation.x > 8.0);
}

/// Timers count simulated ticks: `EmitEvery { period }` emits on exactly the ticks `n` where
/// `[n * fixed_delta, (n + 1) * fixed_delta]` crosses a multiple of the period (computed here with
/// `sim_math`), whether the ticks run one per frame, in uneven frames with real time passing
/// between them, or in a world that starts at tick 1000. Fails when the shader's clock comes from
/// anything but the tick in the push constants (for example a count of the world's steps: the
/// world starting at tick 1000 then emits on the wrong ticks).
#[test]
fn gpu_timers_count_simulated_ticks_not_the_frame_clock() {
    let context = gpu();
    let periods = [0.05f32, 0.1, 0.25, 1.0 / 60.0, 0.7];
    let bodies: Vec<GpuBodyInit> = periods
        .iter()
        .enumerate()
        .map(|(slot, &period)| GpuBodyInit {
            rule: GpuRule::EmitEvery { period },
            body: RigidBody {
                gravity_scale: 0.0,
                ..RigidBody::dynamic(1.0)
            },
            ..body(
                slot as u32,
                Vec3::new(slot as f32 * 3.0, 5.0, 0.0),
                Collider::sphere(0.5),
                1.0,
            )
        })
        .collect();
    let expected = |from: u64, to: u64| -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        for tick in from..to {
            for (slot, &period) in periods.iter().enumerate() {
                let start = (tick as f32) * DT;
                let end = ((tick + 1) as f32) * DT;
                if sim_math::div(end, period).floor() > sim_math::div(start, period).floor() {
                    out.push((tick, slot as u32));
                }
            }
        }
        out
    };
    let run_frames = |first: u64, frames: &[u64], pause: Duration| -> Vec<(u64, u32)> {
        let mut world = GpuPhysicsWorld::new(&context, config(8, 64)).expect("world");
        world.set_bodies(&bodies).expect("bodies");
        let mut tick = first;
        let mut events = Vec::new();
        for &frame in frames {
            for _ in 0..frame {
                let result = world.step(&params(tick), &[]).expect("step");
                assert_eq!(result.lost_events, 0);
                events.extend(result.events.iter().map(|event| {
                    assert_eq!(event.kind, GpuEventKind::Timer);
                    assert_eq!(event.tick, tick);
                    (event.tick, event.slot)
                }));
                tick += 1;
            }
            std::thread::sleep(pause);
        }
        events
    };
    let one_per_frame = run_frames(0, &[1; 120], Duration::ZERO);
    let uneven = run_frames(0, &[3, 0, 10, 1, 7, 33, 2, 64], Duration::from_millis(7));
    let resumed = run_frames(1000, &[1; 120], Duration::ZERO);
    assert_eq!(one_per_frame, expected(0, 120));
    assert_eq!(uneven, expected(0, 120));
    assert_eq!(resumed, expected(1000, 1120));
    // Period 0.25 s at 60 Hz: the clock reaches 0.25 s at the end of every 15th tick.
    let quarter: Vec<u64> = one_per_frame
        .iter()
        .filter(|(_, slot)| *slot == 2)
        .map(|(tick, _)| *tick)
        .collect();
    assert_eq!(quarter, vec![14, 29, 44, 59, 74, 89, 104, 119]);
}

/// A stack of five 1 m GPU boxes on a CPU ground half-space stands: after 600 ticks (10 s at
/// 60 Hz) no box has moved sideways by more than 1 mm or turned, each sits within 1.5 cm of its
/// resting height (0.5 m + 1 m per box below it) and moves slower than 1 mm/s. Measured on
/// lavapipe: sideways drift 0, height error 1.0 cm at the top (the 2 mm contact slop, five times),
/// speed 1.6e-5 m/s. Fails when box-box contacts use the boxes' bounding spheres (each box then
/// stands 0.73 m too high).
#[test]
fn a_stack_of_gpu_boxes_on_a_cpu_ground_stands() {
    let context = gpu();
    let boxes: Vec<GpuBodyInit> = (0..5)
        .map(|i| {
            body(
                i,
                Vec3::new(0.0, 0.5 + i as f32 * 1.001, 0.0),
                Collider::cuboid(Vec3::splat(0.5)),
                1.0,
            )
        })
        .collect();
    let mut world = GpuPhysicsWorld::new(&context, config(8, 256)).expect("world");
    world.set_bodies(&boxes).expect("bodies");
    world.set_cpu_colliders(&[ground()]).expect("ground");
    for tick in 0..600 {
        world.step(&params(tick), &[]).expect("step");
    }
    let states = world.read_bodies().expect("read");
    let mut worst = (0.0f32, 0.0f32, 0.0f32);
    for (i, state) in states.iter().enumerate() {
        let sideways = Vec3::new(state.translation.x, 0.0, state.translation.z).length();
        let height = (state.translation.y - (0.5 + i as f32)).abs();
        let speed = state.linear_velocity.length();
        worst = (
            worst.0.max(sideways),
            worst.1.max(height),
            worst.2.max(speed),
        );
        assert!(
            sideways < 0.001,
            "box {i} drifted {sideways} m sideways: {state:?}"
        );
        assert!(
            height < 0.015,
            "box {i} is {height} m off its resting height: {state:?}"
        );
        assert!(
            speed < 0.001,
            "box {i} still moves at {speed} m/s: {state:?}"
        );
        assert_eq!(state.rotation, Quat::IDENTITY, "box {i} turned");
    }
    println!(
        "stack after 600 ticks: sideways {}, height {}, speed {}",
        worst.0, worst.1, worst.2
    );
}

/// Contacts turn GPU bodies: a cube dropped onto its edge, tilted 0.6 rad so its centre is not
/// over the edge, tips over onto a face and comes to rest there (level, still, its lowest face on
/// the ground). Fails when the contact pass's angular sums are not added (`apply_contacts` in
/// `physics.comp`): the cube then never turns and stays tilted on its edge.
#[test]
fn gpu_boxes_tumble_and_rest() {
    let context = gpu();
    let mut cube = body(
        0,
        Vec3::new(0.0, 1.0, 0.0),
        Collider::cuboid(Vec3::splat(0.5)),
        1.0,
    );
    cube.rotation = Quat::from_rotation_z(0.6);
    let mut world = GpuPhysicsWorld::new(&context, config(4, 64)).expect("world");
    world.set_bodies(&[cube]).expect("bodies");
    world.set_cpu_colliders(&[ground()]).expect("ground");
    let mut turned = 0.0f32;
    for tick in 0..240 {
        world.step(&params(tick), &[]).expect("step");
        let state = world.read_bodies().expect("read")[0];
        turned = turned.max(state.angular_velocity.length());
    }
    let state = world.read_bodies().expect("read")[0];
    let tilt = state.rotation.angle_between(Quat::IDENTITY);
    assert!(
        turned > 1.0,
        "the cube never turned faster than {turned} rad/s"
    );
    assert!(
        tilt < 0.01,
        "the cube rests tilted by {tilt} rad: {state:?}"
    );
    assert!(
        (state.translation.y - 0.5).abs() < 0.01,
        "the cube's centre is at {} m, not on a face: {state:?}",
        state.translation.y
    );
    assert!(
        state.linear_velocity.length() < 0.001 && state.angular_velocity.length() < 0.001,
        "the cube still moves: {state:?}"
    );
}

/// Rolling resistance stops a ball: a sphere rolling at 3 m/s on the ground comes to rest within
/// 15 s instead of rolling on for ever. Fails when `ROLLING_RESISTANCE` in
/// `physics_contacts.comp` is zero (a ball rolling without slipping meets no friction).
#[test]
fn a_rolling_gpu_ball_stops() {
    let context = gpu();
    let mut ball = body(0, Vec3::new(0.0, 0.5, 0.0), Collider::sphere(0.5), 1.0);
    ball.linear_velocity = Vec3::new(3.0, 0.0, 0.0);
    ball.angular_velocity = Vec3::new(0.0, 0.0, -6.0);
    let mut world = GpuPhysicsWorld::new(&context, config(4, 64)).expect("world");
    world.set_bodies(&[ball]).expect("bodies");
    world.set_cpu_colliders(&[ground()]).expect("ground");
    for tick in 0..900 {
        world.step(&params(tick), &[]).expect("step");
    }
    let state = world.read_bodies().expect("read")[0];
    assert!(
        state.translation.x > 2.0,
        "the ball never rolled: {state:?}"
    );
    assert!(
        state.linear_velocity.length() < 0.01 && state.angular_velocity.length() < 0.02,
        "the ball still rolls: {state:?}"
    );
}

/// `EmitBelow` is edge-triggered: it fires on the tick a body goes below the height and not again
/// until the body has been back up. Teleports move one weightless body above, below, below,
/// still below, above and below again: two events, on ticks 1 and 5, each carrying the pose at the
/// end of its tick. Fails when the rule ignores its edge word (an event on every tick below).
#[test]
fn emit_below_fires_once_per_crossing() {
    let context = gpu();
    let mut marker = body(3, Vec3::new(0.0, 2.0, 0.0), Collider::sphere(0.1), 1.0);
    marker.body.gravity_scale = 0.0;
    marker.rule = GpuRule::EmitBelow { height: 1.0 };
    let mut world = GpuPhysicsWorld::new(&context, config(4, 16)).expect("world");
    world.set_bodies(&[marker]).expect("bodies");
    let heights = [2.0f32, 0.0, 0.0, 0.5, 3.0, -1.0, -2.0];
    let mut events = Vec::new();
    for (tick, &y) in heights.iter().enumerate() {
        let teleport = GpuCommand::Teleport {
            slot: 3,
            translation: Vec3::new(0.0, y, 0.0),
            rotation: Quat::IDENTITY,
        };
        events.extend(
            world
                .step(&params(tick as u64), &[teleport])
                .expect("step")
                .events,
        );
    }
    let fired: Vec<(u64, u32, GpuEventKind, f32)> = events
        .iter()
        .map(|event| (event.tick, event.slot, event.kind, event.translation.y))
        .collect();
    assert_eq!(
        fired,
        vec![
            (1, 3, GpuEventKind::Below, 0.0),
            (5, 3, GpuEventKind::Below, -1.0)
        ]
    );
}

/// Commands apply before their tick, in submission order: of two `SetVelocity` the second wins,
/// an impulse after `SetVelocity` adds to it but one before it is overwritten, a teleport then
/// moves by the new velocity for the whole tick, and the later `SetCustom` wins. Positions are
/// compared bit for bit with `teleport + velocity * fixed_delta`. Fails when `physics.comp`
/// applies a slot's commands in reverse order.
#[test]
fn commands_apply_in_submission_order_before_their_tick() {
    let context = gpu();
    let weightless = |slot: u32, x: f32| {
        let mut b = body(slot, Vec3::new(x, 5.0, 0.0), Collider::sphere(0.25), 2.0);
        b.body.gravity_scale = 0.0;
        b
    };
    let mut world = GpuPhysicsWorld::new(&context, config(4, 16)).expect("world");
    world
        .set_bodies(&[weightless(0, 0.0), weightless(1, 10.0), weightless(2, 20.0)])
        .expect("bodies");
    let commands = [
        GpuCommand::SetVelocity {
            slot: 0,
            linear: Vec3::X,
            angular: Vec3::ZERO,
        },
        GpuCommand::Teleport {
            slot: 0,
            translation: Vec3::new(1.0, 7.0, 0.0),
            rotation: Quat::IDENTITY,
        },
        GpuCommand::SetVelocity {
            slot: 0,
            linear: Vec3::new(2.0, 0.0, 0.0),
            angular: Vec3::ZERO,
        },
        GpuCommand::SetVelocity {
            slot: 1,
            linear: Vec3::ZERO,
            angular: Vec3::ZERO,
        },
        GpuCommand::ApplyImpulse {
            slot: 1,
            impulse: Vec3::new(0.0, 4.0, 0.0),
        },
        GpuCommand::ApplyImpulse {
            slot: 2,
            impulse: Vec3::new(0.0, 4.0, 0.0),
        },
        GpuCommand::SetVelocity {
            slot: 2,
            linear: Vec3::ZERO,
            angular: Vec3::ZERO,
        },
        GpuCommand::SetCustom {
            slot: 2,
            values: [1.0, 2.0, 3.0, 4.0],
        },
        GpuCommand::SetCustom {
            slot: 2,
            values: [5.0, 6.0, 7.0, 8.0],
        },
    ];
    world.step(&params(0), &commands).expect("step");
    let states = world.read_bodies().expect("read");
    assert_eq!(states[0].linear_velocity, Vec3::new(2.0, 0.0, 0.0));
    assert_eq!(
        states[0].translation.x.to_bits(),
        (1.0f32 + 2.0 * DT).to_bits()
    );
    assert_eq!(states[0].translation.y, 7.0);
    assert_eq!(states[1].linear_velocity, Vec3::new(0.0, 2.0, 0.0));
    assert_eq!(
        states[1].translation.y.to_bits(),
        (5.0f32 + 2.0 * DT).to_bits()
    );
    assert_eq!(states[2].linear_velocity, Vec3::ZERO);
    assert_eq!(states[2].translation.y, 5.0);
    assert_eq!(states[2].custom, [5.0, 6.0, 7.0, 8.0]);
}

/// Events past `max_events` are counted, not written: ten bodies timing every tick with room for
/// four events report four events (sorted by slot) and six lost, every tick. Fails when
/// `physics.comp` stops counting the loss (its `atomicAdd` on the lost counter removed).
#[test]
fn event_overflow_is_counted() {
    let context = gpu();
    let bodies: Vec<GpuBodyInit> = (0..10)
        .map(|slot| GpuBodyInit {
            rule: GpuRule::EmitEvery { period: DT },
            ..body(
                slot,
                Vec3::new(slot as f32 * 2.0, 5.0, 0.0),
                Collider::sphere(0.5),
                1.0,
            )
        })
        .collect();
    let mut world = GpuPhysicsWorld::new(
        &context,
        GpuPhysicsConfig {
            max_events: 4,
            ..config(16, 64)
        },
    )
    .expect("world");
    world.set_bodies(&bodies).expect("bodies");
    for tick in 1..4 {
        let result = world.step(&params(tick), &[]).expect("step");
        assert_eq!(result.events.len(), 4);
        assert_eq!(result.lost_events, 6);
        assert!(
            result
                .events
                .windows(2)
                .all(|pair| pair[0].slot < pair[1].slot)
        );
    }
}

/// Bad input is an error, not a panic: a slot past the capacity (for a body or a command), two
/// bodies in one slot, a half-space GPU body, and a zero period. Fails when any of these panics or
/// is accepted (without the capacity check in `set_bodies`, the upload fails with `OutOfBounds`
/// instead of naming the slot).
#[test]
fn bad_bodies_and_commands_are_errors() {
    let context = gpu();
    let mut world = GpuPhysicsWorld::new(&context, config(4, 16)).expect("world");
    let sphere = |slot| body(slot, Vec3::ZERO, Collider::sphere(0.5), 1.0);
    assert_eq!(
        world.set_bodies(&[sphere(4)]),
        Err(GpuError::SlotOutOfRange {
            slot: 4,
            capacity: 4
        })
    );
    assert_eq!(
        world.set_bodies(&[sphere(1), sphere(1)]),
        Err(GpuError::DuplicateSlot { slot: 1 })
    );
    let plane = body(2, Vec3::ZERO, Collider::half_space(Vec3::Y), 1.0);
    assert!(matches!(
        world.set_bodies(&[plane]),
        Err(GpuError::UnsupportedShape { slot: 2, .. })
    ));
    let mut timer = sphere(0);
    timer.rule = GpuRule::EmitEvery { period: 0.0 };
    assert!(matches!(
        world.set_bodies(&[timer]),
        Err(GpuError::InvalidBody { slot: 0, .. })
    ));
    world.set_bodies(&[sphere(0)]).expect("a good body");
    let far = GpuCommand::ApplyImpulse {
        slot: 9,
        impulse: Vec3::Y,
    };
    assert_eq!(
        world.step(&params(0), &[far]).map(|result| result.tick),
        Err(GpuError::SlotOutOfRange {
            slot: 9,
            capacity: 4
        })
    );
    assert!(matches!(
        GpuPhysicsWorld::new(
            &context,
            GpuPhysicsConfig {
                capacity: 0,
                ..config(4, 16)
            }
        ),
        Err(GpuError::InvalidConfig { .. })
    ));
}

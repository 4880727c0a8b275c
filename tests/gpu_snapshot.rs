//! GPU bodies in world snapshots: a snapshot simulates the queued GPU ticks and reads the bodies
//! back, a restore (in place, into a fresh app, into an app whose first GPU body has not appeared
//! yet) puts them back, and a synctest over GPU bodies compares GPU hashes too. Feature
//! `gpu-tests`; in CI the device is Mesa's lavapipe. Run with `--test-threads=1`.

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::determinism::{SyncTest, SyncTestError};
use rusting_engine::physics::gpu::{
    GpuBehaviour, GpuCommand, GpuEvents, GpuPhysicsCommands, GpuRule, finish_gpu_ticks, gpu_hashes,
};
use rusting_engine::physics::{BodyClass, Collider, PhysicsBody, PhysicsId, RigidBody};
use rusting_engine::prelude::SimState;
use rusting_engine::runtime::{FrameTime, RuntimeInput, RuntimeSettings, SimSet};
use rusting_engine::state::{StateHashes, WorldSnapshot};

fn gpu_body() -> PhysicsBody {
    PhysicsBody {
        class: BodyClass::Gpu,
    }
}

/// An app with a CPU ground and, with `gpu_at_start`, two GPU balls (one a timer whose events
/// CPU simulation counts) and a GPU crate; every app gets a kick, a spawn on tick 25 and a
/// despawn on tick 35 (see [`script`]).
fn app(gpu_at_start: bool) -> App {
    let mut app = App::new(RuntimeSettings {
        fixed_rate_hz: 60.0,
        seed: 11,
        ..default()
    });
    app.add_systems(FixedUpdate, script.before(SimSet::Physics));
    let world = app.world_mut();
    world.spawn((
        Transform::default(),
        Collider::half_space(Vec3::Y),
        Name::new("Ground"),
    ));
    if gpu_at_start {
        for (i, x) in [-0.8f32, 0.8].into_iter().enumerate() {
            world.spawn((
                Transform::from_xyz(x, 1.0 + i as f32, 0.0),
                RigidBody::dynamic(1.0),
                Collider::sphere(0.3),
                gpu_body(),
                GpuBehaviour {
                    rule: if i == 0 {
                        GpuRule::EmitEvery { period: 0.05 }
                    } else {
                        GpuRule::None
                    },
                    custom: [i as f32, 1.0, 0.0, 0.0],
                },
                Name::new(format!("Ball {i}")),
            ));
        }
        world.spawn((
            Transform::from_xyz(0.1, 2.5, 0.0).with_rotation(Quat::from_rotation_z(0.6)),
            RigidBody::dynamic(2.0),
            Collider::cuboid(Vec3::splat(0.25)),
            gpu_body(),
            Name::new("Crate"),
        ));
    }
    app
}

/// During fixed tick 12 a kick to "Ball 1" (when there is one); during tick 25 a GPU ball spawns
/// ("Late"); during tick 35 "Late" is despawned again.
fn script(
    time: Res<FrameTime>,
    mut gpu: ResMut<GpuPhysicsCommands>,
    mut commands: Commands,
    bodies: Query<(Entity, &Name, Option<&PhysicsId>)>,
) {
    let named = |wanted: &str| bodies.iter().find(|(_, name, _)| name.as_str() == wanted);
    match time.fixed_tick {
        12 => {
            if let Some((_, _, Some(id))) = named("Ball 1") {
                gpu.push(
                    &time,
                    GpuCommand::ApplyImpulse {
                        slot: id.0,
                        impulse: Vec3::new(1.5, 2.0, 0.0),
                    },
                );
            }
        }
        25 => {
            commands.spawn((
                Transform::from_xyz(2.0, 1.5, 0.0),
                RigidBody::dynamic(1.0),
                Collider::sphere(0.25),
                gpu_body(),
                GpuBehaviour {
                    rule: GpuRule::EmitEvery { period: 0.1 },
                    custom: [7.0, 0.0, 0.0, 0.0],
                },
                Name::new("Late"),
            ));
        }
        35 => {
            if let Some((entity, ..)) = named("Late") {
                commands.entity(entity).despawn();
            }
        }
        _ => {}
    }
}

/// GPU events CPU simulation has seen, summed into the hashed counter (so a lost or repeated
/// event changes the CPU hash).
#[derive(Resource, Clone, Default, SimState)]
struct EventsSeen(u64);

fn count_events(events: Res<GpuEvents>, mut seen: ResMut<EventsSeen>) {
    seen.0 += events.events.len() as u64;
}

fn with_event_count(mut app: App) -> App {
    app.register_sim_resource::<EventsSeen>();
    app.world_mut().insert_resource(EventsSeen::default());
    app.add_systems(FixedUpdate, count_events.after(SimSet::Physics));
    app
}

/// `(tick, hash)` pairs.
type Hashes = Vec<(u64, u64)>;

/// Runs `app` one tick a frame up to `ticks` ticks done; returns the CPU hashes of the ticks it
/// ran.
fn run_to(app: &mut App, ticks: u64) -> Hashes {
    let step = app.fixed_step();
    let mut cpu = Vec::new();
    while app.ticks() < ticks {
        app.update(step);
        let tick = app.ticks();
        cpu.push((
            tick,
            app.world().resource::<StateHashes>().get(tick).unwrap(),
        ));
    }
    cpu
}

/// The GPU hashes of GPU ticks `from..` once every queued tick is done.
fn gpu_from(app: &mut App, from: u64) -> Hashes {
    finish_gpu_ticks(app.world_mut());
    gpu_hashes(app.world())
        .into_iter()
        .filter(|(tick, _)| *tick >= from)
        .collect()
}

/// Every GPU body's name and pose, by name.
fn poses(app: &mut App) -> Vec<(String, [u32; 7])> {
    finish_gpu_ticks(app.world_mut());
    let world = app.world_mut();
    let mut query = world.query_filtered::<(&Name, &Transform), With<PhysicsId>>();
    let mut poses: Vec<(String, [u32; 7])> = query
        .iter(world)
        .map(|(name, t)| {
            let (p, r) = (t.translation, t.rotation);
            let bits = [p.x, p.y, p.z, r.x, r.y, r.z, r.w].map(f32::to_bits);
            (name.to_string(), bits)
        })
        .collect();
    poses.sort();
    poses
}

/// The full run of 60 ticks: its CPU hashes, GPU hashes and final poses.
fn reference(gpu_at_start: bool) -> (Hashes, Hashes, Vec<(String, [u32; 7])>) {
    let mut app = with_event_count(app(gpu_at_start));
    app.setup().unwrap();
    let cpu = run_to(&mut app, 60);
    (cpu, gpu_from(&mut app, 0), poses(&mut app))
}

/// A snapshot of a world with GPU bodies holds them: restored in place after the run went on
/// (past a spawn and a despawn), and restored into a fresh app, the run continues with the same
/// CPU and GPU hashes, tick for tick, and ends with the same poses, bit for bit, as the run that
/// never went back; pending GPU events and rule timers come back with the bodies. An app whose
/// first GPU body appears on tick 25 restores both a snapshot from before (the runtime goes) and
/// one from after (a fresh app opens the device for it). Fails when the restore does not upload
/// the image (the GPU goes on from the bodies of tick 45).
#[test]
fn gpu_bodies_survive_snapshot_and_restore() {
    for gpu_at_start in [true, false] {
        let label = if gpu_at_start {
            "GPU bodies from the start"
        } else {
            "the first GPU body on tick 25"
        };
        let (cpu, gpu, end) = reference(gpu_at_start);
        assert!(!gpu.is_empty(), "{label}: no GPU ticks ran");
        for at in [20u64, 30] {
            // In place: run on past the snapshot, come back, run to the end again.
            let mut first = with_event_count(app(gpu_at_start));
            first.setup().unwrap();
            run_to(&mut first, at);
            let snapshot: WorldSnapshot = first.snapshot().unwrap();
            run_to(&mut first, 45);
            first.restore(&snapshot).unwrap();
            assert_eq!(first.ticks(), at);
            let again = run_to(&mut first, 60);
            let label = format!("{label}, snapshot of tick {at} restored in place");
            assert_eq!(again[..], cpu[at as usize..], "{label}: CPU hashes");
            assert_eq!(gpu_from(&mut first, at), gpu_from_list(&gpu, at), "{label}");
            assert_eq!(poses(&mut first), end, "{label}: poses");

            // Into a fresh app built the same way.
            let mut fresh = with_event_count(app(gpu_at_start));
            fresh.setup().unwrap();
            fresh.restore(&snapshot).unwrap();
            let again = run_to(&mut fresh, 60);
            let label = format!("{label}, restored into a fresh app");
            assert_eq!(again[..], cpu[at as usize..], "{label}: CPU hashes");
            assert_eq!(gpu_from(&mut fresh, at), gpu_from_list(&gpu, at), "{label}");
            assert_eq!(poses(&mut fresh), end, "{label}: poses");
        }
    }
}

fn gpu_from_list(gpu: &Hashes, from: u64) -> Hashes {
    gpu.iter()
        .copied()
        .filter(|(tick, _)| *tick >= from)
        .collect()
}

/// A synctest over GPU bodies (4 ticks back after every frame, 60 frames, through the spawn and
/// the despawn) agrees on every re-simulated tick, CPU and GPU. Fails when a restore leaves the
/// device's bodies as they were (the re-simulated GPU ticks run from the future's bodies).
#[test]
fn a_synctest_over_gpu_bodies_agrees() {
    let mut synctest = SyncTest::new(|| with_event_count(app(true)), 4);
    for _ in 0..60 {
        synctest.advance(RuntimeInput::default()).unwrap();
    }
    assert!(synctest.rollbacks() >= 56);
    assert_eq!(
        gpu_hashes(synctest.app().world()).last().map(|(t, _)| *t),
        Some(59)
    );
}

/// Kicks "Ball 1" once, during fixed tick 9: whether it has kicked is kept in a `Local`, which no
/// snapshot holds, so the re-simulated tick 9 does not kick again.
fn kick_once(
    mut kicked: Local<bool>,
    time: Res<FrameTime>,
    mut gpu: ResMut<GpuPhysicsCommands>,
    bodies: Query<(&Name, &PhysicsId)>,
) {
    if *kicked || time.fixed_tick != 9 {
        return;
    }
    *kicked = true;
    if let Some((_, id)) = bodies.iter().find(|(name, _)| name.as_str() == "Ball 1") {
        gpu.push(
            &time,
            GpuCommand::ApplyImpulse {
                slot: id.0,
                impulse: Vec3::X,
            },
        );
    }
}

/// A GPU command that comes from state outside the snapshot is caught by a synctest as a GPU
/// mismatch at its tick, with the CPU state agreeing. Fails when the synctest compares CPU
/// hashes only (the command leaves the CPU state alone, so nothing is reported).
#[test]
fn a_synctest_names_a_gpu_command_from_outside_the_snapshot() {
    let mut synctest = SyncTest::new(
        || {
            let mut app = app(true);
            app.add_systems(FixedUpdate, kick_once.after(script).before(SimSet::Physics));
            app
        },
        4,
    );
    let error = (0..30)
        .find_map(|_| synctest.advance(RuntimeInput::default()).err())
        .expect("the synctest finds the kick");
    match &error {
        SyncTestError::GpuMismatch { gpu_tick, from, .. } => {
            assert_eq!(*gpu_tick, 9, "{error}");
            assert!(*from < 9, "{error}");
        }
        other => panic!("expected a GPU mismatch, got {other}"),
    }
    assert!(
        error.to_string().contains("GPU tick 9") && error.to_string().contains("CPU state agrees"),
        "{error}"
    );
}

//! GPU bodies inside the engine's ticks: commands stamped with their GPU tick, at most eight GPU
//! ticks a frame, events handed to CPU simulation at a fixed tick lag, and GPU hashes in headless
//! reports. Feature `gpu-tests`; in CI the device is Mesa's lavapipe. Run with
//! `--test-threads=1`.

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::game::project::Project;
use rusting_engine::game::simulate_project_headless;
use rusting_engine::gameplay::Counter;
use rusting_engine::physics::gpu::{
    GPU_EVENT_LAG, GpuBehaviour, GpuCommand, GpuEvents, GpuPhysicsCommands, GpuPhysicsStatus,
    GpuRule, finish_gpu_ticks, gpu_hashes,
};
use rusting_engine::physics::{BodyClass, Collider, PhysicsBody, PhysicsId, RigidBody};
use rusting_engine::record::StateHashReport;
use rusting_engine::runtime::{FrameTime, RuntimeSettings, SimSet};
use rusting_engine::state::StateHashes;

/// A ground (CPU half-space), three GPU balls and a GPU box, one of them a timer.
fn gpu_app() -> App {
    let mut app = App::new(RuntimeSettings {
        fixed_rate_hz: 60.0,
        seed: 3,
        ..default()
    });
    let world = app.world_mut();
    world.spawn((
        Transform::default(),
        Collider::half_space(Vec3::Y),
        Name::new("Ground"),
    ));
    for (i, x) in [-1.5f32, 0.0, 1.5].into_iter().enumerate() {
        world.spawn((
            Transform::from_xyz(x, 1.0 + i as f32 * 0.5, 0.0),
            RigidBody::dynamic(1.0),
            Collider::sphere(0.3),
            PhysicsBody {
                class: BodyClass::Gpu,
            },
            GpuBehaviour {
                rule: if i == 1 {
                    GpuRule::EmitEvery { period: 0.1 }
                } else {
                    GpuRule::None
                },
                custom: [i as f32, 0.0, 0.0, 0.0],
            },
            Name::new(format!("Ball {i}")),
        ));
    }
    world.spawn((
        Transform::from_xyz(0.2, 2.5, 0.1),
        RigidBody::dynamic(2.0),
        Collider::cuboid(Vec3::splat(0.25)),
        PhysicsBody {
            class: BodyClass::Gpu,
        },
        Name::new("Crate"),
    ));
    app
}

/// Pushes a velocity change during fixed tick 3 and an impulse during fixed tick 6 to the first
/// ball.
fn push_commands(
    time: Res<FrameTime>,
    mut commands: ResMut<GpuPhysicsCommands>,
    balls: Query<(&Name, &PhysicsId)>,
) {
    let Some(slot) = balls
        .iter()
        .find(|(name, _)| name.as_str() == "Ball 0")
        .map(|(_, id)| id.0)
    else {
        return;
    };
    match time.fixed_tick {
        3 => commands.push(
            &time,
            GpuCommand::SetVelocity {
                slot,
                linear: Vec3::new(2.0, 3.0, 0.0),
                angular: Vec3::ZERO,
            },
        ),
        6 => commands.push(
            &time,
            GpuCommand::ApplyImpulse {
                slot,
                impulse: Vec3::new(-1.0, 0.5, 0.0),
            },
        ),
        _ => {}
    }
}

/// Runs `ticks` ticks in frames of `pattern` ticks (repeated), then lets the GPU catch up; returns
/// every GPU tick's hash and every CPU tick's hash.
/// `(tick, hash)` pairs.
type Hashes = Vec<(u64, u64)>;

fn run(mut app: App, ticks: u64, pattern: &[u32]) -> (App, Hashes, Hashes) {
    app.setup().unwrap();
    let step = app.fixed_step();
    let mut cpu = Vec::new();
    let mut frame = 0;
    while app.ticks() < ticks {
        let n = pattern[frame % pattern.len()].min((ticks - app.ticks()) as u32);
        let before = app.ticks();
        // Exactly `n` ticks: the cap keeps leftover time from rounding the step to nanoseconds
        // from adding one.
        app.world_mut()
            .resource_mut::<rusting_engine::runtime::TimeControl>()
            .max_ticks_per_frame = n;
        app.update(step * n);
        let hashes = app.world().resource::<StateHashes>();
        cpu.extend((before + 1..=app.ticks()).map(|t| (t, hashes.get(t).unwrap())));
        frame += 1;
    }
    finish_gpu_ticks(app.world_mut());
    let gpu = gpu_hashes(app.world());
    (app, gpu, cpu)
}

/// Commands for ticks 3 and 6 give the same GPU bits with one tick a frame, frames of three, and
/// ten-tick frames (the GPU runs eight of them after the frame and carries two over). Fails when
/// commands apply at the first GPU tick a frame runs instead of the tick they were stamped with
/// (or when the GPU drops the ticks past eight).
#[test]
fn commands_apply_on_their_tick_however_frames_batch_ticks() {
    let with_commands = || {
        let mut app = gpu_app();
        app.add_systems(FixedUpdate, push_commands.after(SimSet::Tweens));
        app
    };
    let (app, one, _) = run(with_commands(), 30, &[1]);
    assert_eq!(
        app.world().resource::<GpuPhysicsStatus>().bodies,
        4,
        "{:?}",
        app.world().resource::<GpuPhysicsStatus>()
    );
    assert_eq!(one.len(), 30);
    assert_eq!(
        one.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        (0..30).collect::<Vec<_>>()
    );
    let (_, three, _) = run(with_commands(), 30, &[3]);
    assert_eq!(three, one);
    let (_, ten, _) = run(with_commands(), 30, &[10]);
    assert_eq!(ten, one);
    let (_, without, _) = run(gpu_app(), 30, &[1]);
    assert_eq!(without[..3], one[..3], "nothing differs before tick 3");
    assert_ne!(without[3], one[3], "the tick-3 command changes GPU tick 3");
}

/// Counts the timer events CPU simulation receives, in a hashed `Counter`.
fn count_gpu_events(
    time: Res<FrameTime>,
    events: Res<GpuEvents>,
    mut counters: Query<&mut Counter>,
) {
    if let Some(tick) = events.tick {
        assert_eq!(
            tick + GPU_EVENT_LAG,
            time.fixed_tick,
            "events arrive on a fixed lag"
        );
    }
    for mut counter in &mut counters {
        counter.value += events.events.len() as i64 * 10 + (time.fixed_tick % 7) as i64;
    }
}

/// A CPU system that reacts to GPU timer events gives the same CPU hashes whether frames batch
/// one, three or ten ticks, because events arrive exactly `GPU_EVENT_LAG` ticks after the GPU tick
/// that produced them; with ten-tick frames the GPU falls behind and fixed ticks wait for it
/// (stalls). Fails if events are handed over when the frame's GPU ticks have run instead.
#[test]
fn gpu_events_reach_cpu_simulation_on_a_fixed_tick_lag() {
    let reacting = || {
        let mut app = gpu_app();
        app.world_mut()
            .spawn((Counter { value: 0 }, Name::new("Tally")));
        app.add_systems(
            FixedUpdate,
            count_gpu_events
                .after(SimSet::Physics)
                .before(SimSet::Player),
        );
        app
    };
    let (app, _, one) = run(reacting(), 60, &[1]);
    let mut query = app.world().try_query::<&Counter>().unwrap();
    let total = query.iter(app.world()).next().unwrap().value;
    assert!(
        total >= 90,
        "ten timer events (every 6 ticks) were counted: {total}"
    );
    let (_, _, three) = run(reacting(), 60, &[3]);
    assert_eq!(three, one);
    let (app, _, ten) = run(reacting(), 60, &[10]);
    assert_eq!(ten, one);
    assert!(app.world().resource::<GpuPhysicsStatus>().stalls > 0);
}

/// A project whose scene has GPU bodies runs headless with them, and its state-hash report has a
/// GPU hash on every tick, the same in two runs. Fails if headless runs leave GPU bodies still or
/// the report drops their hashes.
#[test]
fn headless_reports_carry_gpu_hashes() {
    let dir = std::env::temp_dir().join(format!("rusting-gpu-headless-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("scenes")).unwrap();
    std::fs::write(
        dir.join("rusting.json"),
        r#"{"name": "sparks", "main_scene": "scenes/main.scene.json", "determinism": "Local"}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("scenes/main.scene.json"),
        r#"{ "format_version": 1, "entities": [
            { "id": 1, "name": "Ground", "components": { "Collider": { "shape": { "HalfSpace": { "normal": [0, 1, 0] } } } } },
            { "id": 2, "name": "Spark", "transform": { "translation": [0, 2, 0] },
              "components": { "RigidBody": {}, "Collider": { "shape": { "Sphere": { "radius": 0.2 } } },
                              "PhysicsBody": { "class": "Gpu" } } },
            { "id": 3, "name": "Ember", "transform": { "translation": [0.1, 3, 0] },
              "components": { "RigidBody": {}, "Collider": { "shape": { "Sphere": { "radius": 0.2 } } },
                              "PhysicsBody": { "class": "Gpu" } } } ] }"#,
    )
    .unwrap();
    let project = Project::open(&dir).unwrap();
    let report = |_: ()| {
        let (mut app, hashes) = simulate_project_headless(&project, 40, None, |_| {}).unwrap();
        let spark = {
            let mut query = app.world_mut().query::<(&Name, &Transform)>();
            query
                .iter(app.world())
                .find(|(n, _)| n.as_str() == "Spark")
                .map(|(_, t)| t.translation)
                .unwrap()
        };
        assert!(spark.y < 1.0, "the spark fell: {spark}");
        StateHashReport::capture(app.world_mut(), &hashes)
    };
    let first = report(());
    assert_eq!(first.ticks.len(), 40);
    assert!(
        first.ticks.iter().all(|t| t.gpu_hash.is_some()),
        "{:?}",
        first.ticks
    );
    assert_eq!(report(()), first);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Spawns a GPU ball during fixed tick 5 and despawns "Ball 2" during fixed tick 12.
fn spawn_and_despawn(time: Res<FrameTime>, mut commands: Commands, balls: Query<(Entity, &Name)>) {
    match time.fixed_tick {
        5 => {
            commands.spawn((
                Transform::from_xyz(3.0, 2.0, 0.0),
                RigidBody::dynamic(1.0),
                Collider::sphere(0.3),
                PhysicsBody {
                    class: BodyClass::Gpu,
                },
                Name::new("Late"),
            ));
        }
        12 => {
            for (entity, name) in &balls {
                if name.as_str() == "Ball 2" {
                    commands.entity(entity).despawn();
                }
            }
        }
        _ => {}
    }
}

/// The "Late" ball's height after a run.
fn late_height(app: &mut App) -> f32 {
    let world = app.world_mut();
    let mut query = world.query::<(&Name, &Transform)>();
    query
        .iter(world)
        .find(|(name, _)| name.as_str() == "Late")
        .map(|(_, transform)| transform.translation.y)
        .expect("the late ball exists")
}

/// GPU bodies spawned and despawned after setup join and leave the GPU at the tick boundary: a
/// ball spawned during fixed tick 5 falls and lands (its pose comes back from the GPU), a ball
/// despawned during tick 12 leaves, and the GPU hashes are the same with one tick a frame and
/// frames of three, equal to a run without the changes before tick 5 and different from tick 5
/// on. An app that starts with no GPU body opens the device when its first one is spawned. Fails
/// when the runtime does not upload queued spawns (the late ball never falls).
#[test]
fn bodies_spawned_after_setup_simulate_on_the_gpu() {
    let with_changes = |app: App| {
        let mut app = app;
        app.add_systems(FixedUpdate, spawn_and_despawn.before(SimSet::Physics));
        app
    };
    let (mut app, one, _) = run(with_changes(gpu_app()), 90, &[1]);
    let height = late_height(&mut app);
    assert!(
        height < 0.35 && height > 0.25,
        "the late ball did not land on the ground: y = {height}"
    );
    let (_, three, _) = run(with_changes(gpu_app()), 90, &[3]);
    assert_eq!(three, one, "frames of three ticks change the GPU bits");
    let (_, unchanged, _) = run(gpu_app(), 90, &[1]);
    assert_eq!(unchanged[..5], one[..5], "nothing differs before tick 5");
    assert_ne!(unchanged[5], one[5], "the spawn changes GPU tick 5");

    // An app with only a CPU ground opens the device for its first GPU body.
    let mut bare = App::new(RuntimeSettings {
        fixed_rate_hz: 60.0,
        seed: 3,
        ..default()
    });
    bare.world_mut().spawn((
        Transform::default(),
        Collider::half_space(Vec3::Y),
        Name::new("Ground"),
    ));
    let (mut bare, hashes, _) = run(with_changes(bare), 90, &[1]);
    assert_eq!(
        hashes.first().map(|(tick, _)| *tick),
        Some(5),
        "GPU ticks start with the first GPU body"
    );
    assert_eq!(hashes.len(), 85);
    let height = late_height(&mut bare);
    assert!(
        height < 0.35 && height > 0.25,
        "the late ball did not land in the bare app: y = {height}"
    );
}

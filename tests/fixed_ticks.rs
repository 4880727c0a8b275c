//! The engine `App`'s tick loop: each fixed step sees its own tick, frame pacing never reaches the
//! simulation, and the startup checks refuse what cannot run deterministically.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bevy::math::{Quat, Vec3};
use bevy::prelude::*;
use rusting_engine::prelude::*;
use rusting_engine::{AppError, runtime::DeterminismError};

fn step(app: &rusting_engine::App) -> Duration {
    app.fixed_step()
}

#[derive(Resource, Default)]
struct SeenTicks(Vec<u64>);

fn record_tick(time: Res<FrameTime>, mut seen: ResMut<SeenTicks>) {
    seen.0.push(time.fixed_tick);
}

/// A three-tick frame runs three fixed steps that see ticks 0, 1 and 2, and the hooks after them
/// see 1, 2 and 3 (ticks completed). Fails if `App::update` sets `fixed_tick` once per frame instead
/// of once per tick.
#[test]
fn fixed_steps_see_their_own_tick() {
    let mut app = rusting_engine::App::default();
    app.world_mut().insert_resource(SeenTicks::default());
    app.add_systems(FixedUpdate, record_tick);
    let hooked = Arc::new(Mutex::new(Vec::new()));
    let sink = hooked.clone();
    app.add_tick_hook(move |_: &mut World, tick: u64| sink.lock().unwrap().push(tick));

    let report = app.update(step(&app) * 3);
    assert_eq!(report.first_tick, 0);
    assert_eq!(report.ticks, 3);
    assert_eq!(app.world().resource::<SeenTicks>().0, [0, 1, 2]);
    assert_eq!(*hooked.lock().unwrap(), [1, 2, 3]);
    assert_eq!(app.ticks(), 3);

    let report = app.update(step(&app));
    assert_eq!((report.first_tick, report.ticks), (3, 1));
    assert_eq!(app.world().resource::<SeenTicks>().0, [0, 1, 2, 3]);
}

/// A spinning, drifting body whose forces depend on simulated time.
#[derive(Component, Clone, Copy)]
struct Spinner {
    rotation: Quat,
    angular_velocity: Vec3,
    position: Vec3,
    velocity: Vec3,
}

/// Integrates with `fixed_delta` and `fixed_elapsed` only, through `sim_math`.
fn spin(time: Res<FrameTime>, mut spinners: Query<&mut Spinner>) {
    let dt = time.fixed_delta;
    let (s, c) = sim_math::sin_cos(time.fixed_elapsed() * 3.0);
    for mut body in &mut spinners {
        let w = body.angular_velocity;
        body.angular_velocity = Vec3::new(w.x + s * dt, w.y, w.z + c * dt);
        let delta = sim_math::rotation_from_scaled_axis(body.angular_velocity * dt);
        body.rotation = sim_math::quat_normalize(sim_math::quat_mul(delta, body.rotation));
        let push = sim_math::quat_rotate(body.rotation, Vec3::X);
        body.velocity += push * dt;
        let velocity = body.velocity;
        body.position += velocity * dt;
    }
}

/// The bits of every spinner after each tick.
#[derive(Resource, Default)]
struct Trace(Vec<(u64, Vec<u32>)>);

fn trace(
    time: Res<FrameTime>,
    spinners: Query<&Spinner>,
    bodies: Query<(Entity, &Transform, &RigidBody)>,
    tweens: Query<(&Transform, &Tween)>,
    mut trace: ResMut<Trace>,
) {
    let mut bits = Vec::new();
    for (transform, tween) in &tweens {
        let t = transform.translation;
        bits.extend([
            t.x.to_bits(),
            t.y.to_bits(),
            t.z.to_bits(),
            tween.played.to_bits(),
        ]);
    }
    let mut physics: Vec<_> = bodies.iter().collect();
    physics.sort_by_key(|(e, _, _)| *e);
    for (_, transform, body) in physics {
        let r = transform.rotation;
        for v in [
            transform.translation,
            body.linear_velocity,
            body.angular_velocity,
        ] {
            bits.extend([v.x.to_bits(), v.y.to_bits(), v.z.to_bits()]);
        }
        bits.extend([r.x.to_bits(), r.y.to_bits(), r.z.to_bits(), r.w.to_bits()]);
    }
    for body in &spinners {
        let r = body.rotation;
        for v in [r.x, r.y, r.z, r.w] {
            bits.push(v.to_bits());
        }
        for v in [body.position, body.velocity, body.angular_velocity] {
            bits.extend([v.x.to_bits(), v.y.to_bits(), v.z.to_bits()]);
        }
    }
    trace.0.push((time.fixed_tick, bits));
}

fn spinning_app() -> rusting_engine::App {
    let mut app = rusting_engine::App::default();
    app.world_mut().insert_resource(Trace::default());
    for i in 0..4 {
        let f = i as f32;
        app.world_mut().spawn(Spinner {
            rotation: Quat::IDENTITY,
            angular_velocity: Vec3::new(0.3 * f, 1.0 + f, -0.7),
            position: Vec3::new(f, 0.0, 0.0),
            velocity: Vec3::ZERO,
        });
    }
    // The physics part: a three-box stack on a ground, its top box spinning about the vertical.
    app.world_mut()
        .spawn((Transform::default(), Collider::half_space(Vec3::Y)));
    for level in 0..3 {
        let spin = if level == 2 { 4.0 } else { 0.0 };
        app.world_mut().spawn((
            Transform::from_xyz(0.0, 0.5 + level as f32, 0.0),
            RigidBody::dynamic(1.0).with_velocity(Vec3::ZERO, Vec3::new(0.0, spin, 0.0)),
            Collider::cuboid(Vec3::splat(0.5)),
        ));
    }
    // A gameplay part: an eased ping-pong tween.
    app.world_mut().spawn((
        Transform::default(),
        Tween {
            easing: Easing::SineInOut,
            mode: TweenMode::PingPong,
            ..Tween::new(Vec3::ZERO, Vec3::new(2.0, 1.0, -1.0), 0.7)
        },
    ));
    app.add_systems(FixedUpdate, (spin, trace.after(SimSet::Tweens)).chain());
    app
}

/// 120 ticks at one tick per frame and 120 ticks in uneven frames (3, 1/2, 1/2, 0 and 5 ticks,
/// repeated) leave every bit of every body equal after every tick: the sim_math spinners and a
/// three-box stack whose top box spins on the CPU solver, and an eased ping-pong tween. Fails if
/// `spin`, `cpu_physics_step` or `advance_tweens` advances by `FrameTime::delta` (the frame's
/// delta) instead of `fixed_delta`, or if `App::update` sets `fixed_tick` once per frame.
#[test]
fn simulation_bits_depend_on_ticks_not_frame_pacing() {
    let mut steady = spinning_app();
    let tick = step(&steady);
    for _ in 0..120 {
        steady.update(tick);
    }

    let mut uneven = spinning_app();
    let pattern = [
        tick * 3,
        tick / 2,
        tick - tick / 2,
        Duration::ZERO,
        tick * 5,
    ];
    let mut frames = 0;
    while uneven.ticks() < 120 {
        uneven.update(pattern[frames % pattern.len()]);
        frames += 1;
    }
    assert_eq!(uneven.ticks(), 120);
    assert!(frames > 60, "the uneven run should batch and split ticks");

    let steady = &steady.world().resource::<Trace>().0;
    let uneven = &uneven.world().resource::<Trace>().0;
    assert_eq!(steady.len(), 120);
    for (a, b) in steady.iter().zip(uneven) {
        assert_eq!(a, b, "tick {} differs", a.0);
    }
    // The bodies moved: the comparison is not between two empty traces.
    assert_ne!(steady[0].1, steady[119].1);
}

/// Pause and time scale change how many ticks run, and the per-frame cap defers ticks without
/// dropping any. Fails if the cap discards the ticks it holds back, or if pause stops `Update`
/// (the frame count) as well as the ticks.
#[test]
fn time_control_changes_tick_counts_only() {
    let mut app = rusting_engine::App::default();
    let tick = step(&app);
    app.world_mut().resource_mut::<TimeControl>().paused = true;
    assert_eq!(app.update(tick * 4).ticks, 0);
    app.world_mut().resource_mut::<TimeControl>().paused = false;
    app.world_mut().resource_mut::<TimeControl>().time_scale = 0.5;
    assert_eq!(app.update(tick * 4).ticks, 2);
    app.world_mut().resource_mut::<TimeControl>().time_scale = 1.0;
    app.world_mut()
        .resource_mut::<TimeControl>()
        .max_ticks_per_frame = 8;
    assert_eq!(app.update(tick * 20).ticks, 8);
    assert_eq!(app.update(Duration::ZERO).ticks, 8);
    assert_eq!(app.update(Duration::ZERO).ticks, 4);
    assert_eq!(app.ticks(), 22);
    assert_eq!(app.world().resource::<FrameTime>().frame, 5);
}

/// The engine inserts every resource before the first tick: running frames spawns no entity.
/// Fails if any engine resource is inserted lazily during a frame.
#[test]
fn frames_spawn_no_engine_entities() {
    let mut app = rusting_engine::App::default();
    app.setup().unwrap();
    let before = app.world().entities().len();
    for _ in 0..5 {
        let tick = step(&app);
        app.update(tick * 2);
    }
    assert_eq!(app.world().entities().len(), before);
}

#[derive(Resource, Default)]
struct Counter(u32);

fn add_one(mut counter: ResMut<Counter>) {
    counter.0 += 1;
}

fn double(mut counter: ResMut<Counter>) {
    counter.0 *= 2;
}

/// Two fixed systems that write the same resource with no order between them are refused at
/// setup, naming the systems. Fails if fixed schedules go back to ignoring ambiguities.
#[test]
fn unordered_conflicting_fixed_systems_are_refused() {
    let mut app = rusting_engine::App::default();
    app.world_mut().insert_resource(Counter::default());
    app.add_systems(FixedUpdate, (add_one, double));
    let Err(AppError::Schedule(message)) = app.setup() else {
        panic!("an ambiguous fixed schedule must not build");
    };
    assert!(
        message.contains("add_one") && message.contains("double"),
        "{message}"
    );

    let mut ordered = rusting_engine::App::default();
    ordered.world_mut().insert_resource(Counter::default());
    ordered.add_systems(FixedUpdate, (add_one, double).chain());
    ordered.setup().unwrap();
    let tick = step(&ordered);
    ordered.update(tick * 2);
    assert_eq!(ordered.world().resource::<Counter>().0, 6);
}

/// A `CrossPlatform` project whose parts support only `Local` does not start, and the error names
/// them. Fails if `App::setup` skips the check or runs it before the startup systems declare.
#[test]
fn startup_check_refuses_parts_below_the_project_mode() {
    let settings = RuntimeSettings {
        mode: DeterminismMode::CrossPlatform,
        ..Default::default()
    };
    let mut app = rusting_engine::App::new(settings);
    app.add_systems(Startup, |mut support: ResMut<DeterminismSupport>| {
        support.declare("physics.cpu", DeterminismMode::Local);
        support.declare("gameplay.tween", DeterminismMode::CrossPlatform);
    });
    let Err(AppError::Determinism(DeterminismError::Unsupported { parts, .. })) = app.setup()
    else {
        panic!("a CrossPlatform project with a Local part must not start");
    };
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].part, "physics.cpu");

    let mut bad_rate = rusting_engine::App::new(RuntimeSettings {
        fixed_rate_hz: 0.0,
        ..Default::default()
    });
    assert!(matches!(bad_rate.setup(), Err(AppError::TickRate(_))));
}

#[derive(Resource, Default)]
struct StartupRuns(u32);

/// Startup systems run once, before the first tick. Fails if `App::setup` leaves the startup
/// labels in `MainScheduleOrder`, so that `Main` runs them again after the first frame's ticks.
#[test]
fn startup_runs_once_before_the_first_tick() {
    let mut app = rusting_engine::App::default();
    app.world_mut().insert_resource(StartupRuns::default());
    app.add_systems(Startup, |mut runs: ResMut<StartupRuns>| runs.0 += 1);
    app.add_systems(FixedUpdate, |runs: Res<StartupRuns>| assert_eq!(runs.0, 1));
    let tick = step(&app);
    for _ in 0..3 {
        app.update(tick);
    }
    assert_eq!(app.world().resource::<StartupRuns>().0, 1);
}

/// The engine's fixed systems build with ambiguity detection as an error, and run in the one chain
/// order: physics, player, platformer, pickups, sound cues, burst particles, new bursts, tweens. Fails if an engine
/// system is added to `FixedUpdate` outside its `SimSet`, or if the sets stop being chained.
#[test]
fn engine_fixed_update_systems_have_one_order() {
    let mut app = rusting_engine::App::default();
    app.setup()
        .expect("the engine's fixed schedule builds with ambiguity as an error");
    let names: Vec<String> = app
        .world_mut()
        .try_schedule_scope(FixedUpdate, |world, schedule| {
            schedule.initialize(world).unwrap();
            schedule
                .systems()
                .unwrap()
                .map(|(_, system)| system.name().to_string())
                .collect()
        })
        .unwrap();
    let position = |needle: &str| {
        names
            .iter()
            .position(|n| n.contains(needle))
            .unwrap_or_else(|| panic!("{needle} is not in FixedUpdate: {names:?}"))
    };
    assert!(
        position("cpu_physics_step") < position("advance_tweens"),
        "{names:?}"
    );
}

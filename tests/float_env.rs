//! The floating-point environment guarded: a change on the simulation thread is named with its
//! tick, thread, the settings that changed and the system that made it; a change on a worker
//! thread is named with the worker and the job; release games put the expected environment back
//! and play on. x86-64 and aarch64 only (the targets with a checked register).

#![cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]

use std::sync::Mutex;

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::jobs::JobWorkers;
use rusting_engine::prelude::*;
use rusting_engine::runtime::{FloatControl, FloatEnvPolicy};

#[path = "support/tick_hashes.rs"]
mod tick_hashes;
use tick_hashes::run;

/// Held by every test here: a worker's change is noted process-wide until a simulation thread
/// takes it, so the tests never run at once.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The flush-to-zero bit, as a library that wants fast audio math sets it.
const FLUSH_TO_ZERO: u64 = if cfg!(target_arch = "x86_64") {
    0x8000
} else {
    0x0100_0000
};

/// Round toward zero.
const TOWARD_ZERO: u64 = if cfg!(target_arch = "x86_64") {
    0x6000
} else {
    0x00c0_0000
};

/// Sets `bits` in this thread's register (what a library or driver does behind the game's back).
fn set_bits(bits: u64) {
    let now = FloatControl::read().unwrap();
    // SAFETY: the guard puts the expected environment back.
    unsafe { FloatControl(now.0 | bits).write() };
}

/// A body falling, and a counter of ticks: some float work every tick.
fn falling_app(policy: FloatEnvPolicy) -> App {
    let mut app = App::new(RuntimeSettings {
        seed: 38,
        ..default()
    });
    app.set_float_env_policy(policy);
    app.world_mut().spawn((
        Transform::from_xyz(0.0, 3.0, 0.0),
        RigidBody::dynamic(1.0),
        Collider::sphere(0.5),
    ));
    app.world_mut()
        .spawn((Transform::default(), Collider::half_space(Vec3::Y)));
    app
}

/// Sets flush-to-zero on tick 5, as an audio library's first call might.
fn start_audio_on_tick_5(time: Res<FrameTime>) {
    if time.fixed_tick + 1 == 5 {
        set_bits(FLUSH_TO_ZERO);
    }
}

/// Moves nothing: a system that runs after [`start_audio_on_tick_5`], which the change must not
/// be blamed on.
fn after_audio(mut count: Local<u32>) {
    *count += 1;
}

/// The falling game with [`start_audio_on_tick_5`] and [`after_audio`] after the engine's chain.
fn audio_app(policy: FloatEnvPolicy) -> App {
    let mut app = falling_app(policy);
    app.add_systems(
        FixedUpdate,
        (start_audio_on_tick_5, after_audio)
            .chain()
            .after(SimSet::Tweens),
    );
    app
}

/// A fixed system that sets flush-to-zero on tick 5: the change is named at tick 5, on this
/// thread, as flush-to-zero, in that system (not the one after it), and the run's failure says
/// so; the environment is put back, so the thread goes on as expected. Under the release policy
/// the change is noted, not a failure, and the game plays on to the same hashes as one whose
/// environment never changed. A change made between ticks is named as such, at the next tick.
///
/// Fails when the fixed systems are not probed (seen: the change placed only "during the tick's
/// fixed schedules" when `install_probes` was left out), or when the guard does not put the
/// environment back (the thread keeps flushing).
#[test]
fn a_flush_to_zero_change_is_named_at_its_tick_and_thread() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let mut app = audio_app(FloatEnvPolicy::Error);
    let hashes = run(&mut app, 10);
    assert!(FloatControl::current_is_expected());
    let change = app
        .float_env_failure()
        .expect("the change was found")
        .clone();
    let thread = std::thread::current().name().unwrap().to_owned();
    assert_eq!((change.tick, change.thread.as_str()), (5, thread.as_str()));
    assert!(
        change.place.contains("start_audio_on_tick_5"),
        "{}",
        change.place
    );
    assert!(
        change
            .changes
            .iter()
            .any(|c| c.contains("flush-to-zero") && c.ends_with(" on")),
        "{change}"
    );
    let message = change.to_string();
    assert!(
        message.starts_with("tick 5: the floating-point environment of thread `")
            && message.contains(FloatControl::REGISTER),
        "{message}"
    );

    // The release policy: noted, put back, played on, the same hashes as an untouched game.
    let mut release = audio_app(FloatEnvPolicy::Restore);
    assert_eq!(run(&mut release, 10), hashes);
    assert!(release.float_env_change().is_some());
    assert!(release.float_env_failure().is_none());
    let mut untouched = falling_app(FloatEnvPolicy::Error);
    untouched.add_systems(FixedUpdate, after_audio.after(SimSet::Tweens));
    assert_eq!(run(&mut untouched, 10), hashes);
    assert!(untouched.float_env_change().is_none());

    // Between ticks: named at the next tick, outside the fixed schedules.
    run(&mut untouched, 3);
    set_bits(TOWARD_ZERO);
    run(&mut untouched, 1);
    assert!(FloatControl::current_is_expected());
    let change = untouched.float_env_failure().unwrap();
    assert_eq!(change.tick, 14);
    assert!(
        change.place.contains("outside the fixed schedules"),
        "{change}"
    );
}

/// A deadline job whose function leaves the rounding mode toward zero (as a math library built
/// with its own start-up flags might).
struct Planner;

impl JobKind for Planner {
    const NAME: &'static str = "Planner";
    type Input = f32;
    type Output = f32;
    fn run(input: &f32) -> f32 {
        set_bits(TOWARD_ZERO);
        input / 3.0
    }
}

fn plan_on_tick_3(time: Res<FrameTime>, mut jobs: ResMut<Jobs<Planner>>) {
    if time.fixed_tick + 1 == 3 {
        jobs.request(1.0);
    }
}

/// A job on a worker thread that changes the rounding mode is named with the worker's thread,
/// the job (kind, id, request tick) and the rounding mode, at the tick the simulation thread took
/// the report; the worker's environment is put back, so its next job rounds as expected.
///
/// Fails when the job workers are not checked after each job (seen: no change found, since the
/// simulation thread's own checks never see a worker's register).
#[test]
fn a_worker_threads_changed_rounding_is_named() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let mut app = falling_app(FloatEnvPolicy::Error);
    // Due 30 ticks after it is asked for, with 5 ms between ticks: the worker takes it long
    // before the simulation thread would have to run it itself.
    app.add_job_kind::<Planner>(30);
    app.add_systems(FixedUpdate, plan_on_tick_3.after(SimSet::Tweens));
    app.world().resource::<JobWorkers>().set_workers(1);
    for _ in 0..40 {
        run(&mut app, 1);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let change = app
        .float_env_failure()
        .expect("the worker's change was found");
    assert_eq!(change.thread, "rusting-job-0");
    assert!(
        change
            .place
            .contains("while running job `Planner` (JobId 0, requested at tick 3)"),
        "{change}"
    );
    assert!(
        change.changes.iter().any(|c| c.contains("toward zero")),
        "{change}"
    );
    assert!((3..=34).contains(&change.tick), "{change}");
}

//! The synctest rolls back and re-simulates every tick, and catches state kept outside the
//! snapshot.

use std::path::Path;

use bevy::input::keyboard::KeyCode;
use bevy::prelude::*;
use rusting_engine::determinism::{SyncTest, SyncTestError};
use rusting_engine::game;
use rusting_engine::gameplay::PlatformerController;
use rusting_engine::runtime::{FrameTime, RuntimeInput, SimSet};

#[path = "support/starter.rs"]
mod support;

use support::{STARTER, starter_app, starter_game};

/// Input for frame `k`: run right, jump every 40 frames.
fn input(k: usize) -> RuntimeInput {
    let mut input = RuntimeInput::default();
    input.set_axis("move_x", 1.0);
    if k % 40 == 5 {
        input.press(KeyCode::Space);
    }
    input
}

/// The starter game survives a rollback of four ticks after every one of 150 ticks (jumps,
/// landings, pickups and particles included). Fails if any state a tick reads is left out of
/// snapshots, for example with `PhysicsWorld` (warm starts, contacts) ignored instead of copied.
#[test]
fn the_starter_game_passes_a_synctest() {
    let mut synctest = SyncTest::new(starter_app, 4);
    for k in 0..150 {
        synctest
            .advance(input(k))
            .unwrap_or_else(|e| panic!("frame {k}: {e}"));
    }
    assert_eq!(synctest.app().ticks(), 150);
}

/// SyncTest over 600 ticks of the starter's walkthrough rolls back inside the one app it builds: `make_app` is
/// called once, every frame from the fourth on is a rollback, and the walkthrough's collected
/// pickups are not cued again after a rollback. Fails if SyncTest builds a new app per rollback
/// (more than one call), or if the pickups' sound-cue bookkeeping goes back to a system `Local`
/// (the restored tick cues the pickup twice, and the sound resource's hash in the snapshot no
/// longer matches).
#[test]
fn synctest_rolls_back_in_place() {
    let builds = std::cell::Cell::new(0);
    let make = || {
        builds.set(builds.get() + 1);
        starter_app()
    };
    let script = rusting_engine::runtime::InputScript::load(
        &Path::new(STARTER).join("input/walkthrough.json"),
    )
    .unwrap();
    let inputs: Vec<RuntimeInput> = script.frames().map(|(_, input)| input).collect();
    let mut synctest = SyncTest::new(make, 4);
    let mut cues = Vec::new();
    for k in 0..600 {
        let input = inputs.get(k).or(inputs.last()).cloned().unwrap_or_default();
        synctest
            .advance(input)
            .unwrap_or_else(|e| panic!("frame {k}: {e}"));
        let sounds = synctest
            .app()
            .world()
            .resource::<rusting_engine::gameplay::SoundEvents>();
        cues.extend(sounds.events.iter().filter(|e| e.cue == "pickup").cloned());
    }
    assert_eq!(synctest.app().ticks(), 600);
    assert_eq!(synctest.rollbacks(), 597);
    drop(synctest);
    assert_eq!(builds.get(), 1, "one app for the whole synctest");
    assert!(!cues.is_empty(), "the run should collect a pickup");
    let mut sources: Vec<_> = cues.iter().map(|e| e.source).collect();
    sources.sort_unstable();
    let before = sources.len();
    sources.dedup();
    assert_eq!(sources.len(), before, "a pickup was cued twice: {cues:?}");
}

/// Nudges the platformer hero by a counter kept in a system's `Local`: state no snapshot sees.
fn drift_by_local_counter(
    mut calls: Local<u32>,
    mut heroes: Query<&mut Transform, With<PlatformerController>>,
) {
    *calls += 1;
    if *calls > 20 {
        for mut transform in &mut heroes {
            transform.translation.x += 1e-4 * *calls as f32;
        }
    }
}

/// A system that keeps a counter in a `Local` is caught on the first tick it matters, with the
/// entity and component it changed. The counter runs on through every re-simulation in the same
/// app (one call per first-run tick and three per rollback), so it passes 20 during frame 7's
/// rollback, on the re-simulation of tick 6, which the first run computed with the counter at 15;
/// re-simulated again from the same snapshot, the tick gives yet another result, so the error
/// names a counter every run of the tick moves beside nondeterminism. Fails if the synctest stops
/// re-simulating or stops comparing the re-simulated hashes.
#[test]
fn synctest_catches_a_counter_kept_in_a_local() {
    let make = || {
        let mut app = starter_app();
        app.add_systems(FixedUpdate, drift_by_local_counter.after(SimSet::Tweens));
        app
    };
    let failure = first_failure(SyncTest::new(make, 3), 60);
    let Some(
        error @ SyncTestError::Nondeterministic {
            tick, from, where_, ..
        },
    ) = &failure
    else {
        panic!("expected a nondeterministic tick, got {failure:?}");
    };
    assert_eq!(
        *tick, 6,
        "the first re-simulated tick the counter moves the hero"
    );
    assert_eq!(*from, 4, "three ticks back from tick 7");
    let where_ = where_.as_deref().unwrap();
    assert!(where_.contains("Transform"), "{where_}");
    assert!(
        error.to_string().contains("a counter in a `Local`"),
        "{error}"
    );
}

/// Runs `synctest` one frame at a time until it fails or `frames` frames have run.
fn first_failure<F: FnMut() -> rusting_engine::engine::App>(
    mut synctest: SyncTest<F>,
    frames: usize,
) -> Option<SyncTestError> {
    (0..frames).find_map(|k| synctest.advance(input(k)).err())
}

/// Nudges the hero by the order a fresh `HashSet` visits 64 numbers in: std seeds every new
/// hasher differently, so the same state gives another result every time the tick runs (a race,
/// as a worker thread's timing would be).
fn drift_by_hash_order(mut heroes: Query<&mut Transform, With<PlatformerController>>) {
    let set: std::collections::HashSet<u32> = (0..64).collect();
    let mixed = set
        .iter()
        .fold(0.0f32, |acc, &k| acc * 0.5 + k as f32 * 1.0e-3);
    for mut transform in &mut heroes {
        transform.translation.x += mixed * 1.0e-3;
    }
}

/// Nudges the hero once, the first time each tick runs, remembering the newest tick in a
/// `Local`: a re-simulated tick never nudges, every time the same way (state outside the
/// snapshot, not nondeterminism).
fn nudge_first_runs_only(
    time: Res<FrameTime>,
    mut newest: Local<u64>,
    mut heroes: Query<&mut Transform, With<PlatformerController>>,
) {
    if time.fixed_tick < *newest {
        return;
    }
    *newest = time.fixed_tick + 1;
    for mut transform in &mut heroes {
        transform.translation.x += 1.0e-3;
    }
}

/// A race (a `HashSet`'s order, seeded anew every time the tick runs) fails the synctest as a
/// nondeterministic tick: re-simulated again from the same snapshot it gives another result.
/// State outside the snapshot (a `Local` that makes only a tick's first run nudge the hero) fails
/// it as a mismatch, "state outside the snapshot", because every re-simulation gives the same
/// result. Fails if the synctest stops re-simulating the failing tick again (the race is then
/// called state outside the snapshot).
#[test]
fn synctest_tells_a_race_from_state_outside_the_snapshot() {
    let race = || {
        let mut app = starter_app();
        app.add_systems(FixedUpdate, drift_by_hash_order.after(SimSet::Tweens));
        app
    };
    let failure = first_failure(SyncTest::new(race, 3), 30);
    let Some(error @ SyncTestError::Nondeterministic { where_, .. }) = &failure else {
        panic!("expected a nondeterministic tick, got {failure:?}");
    };
    let message = error.to_string();
    assert!(
        message.contains("gives different results from the same state")
            && message.contains("the simulation is nondeterministic (threads, clocks, addresses"),
        "{message}"
    );
    assert!(
        where_.as_deref().unwrap().contains("Transform"),
        "{message}"
    );

    let outside = || {
        let mut app = starter_app();
        app.add_systems(FixedUpdate, nudge_first_runs_only.after(SimSet::Tweens));
        app
    };
    let failure = first_failure(SyncTest::new(outside, 3), 30);
    let Some(error @ SyncTestError::Mismatch { tick, .. }) = &failure else {
        panic!("expected a mismatch, got {failure:?}");
    };
    assert_eq!(*tick, 1, "the first tick the first rollback re-simulates");
    assert!(
        error
            .to_string()
            .ends_with("state outside the snapshot changed the simulation"),
        "{error}"
    );
}

/// `RUSTING_SYNCTEST=3` turns a game's headless run into a synctest: the starter passes, writing a
/// state-hash report of every tick once (`RUSTING_STATE_HASH_OUT`), and the same game with the
/// `Local` counter fails. Fails if the variable is ignored (both runs pass), or if the report is
/// dropped or holds the re-simulated ticks twice.
#[test]
fn rusting_synctest_runs_a_game_as_a_synctest() {
    // SAFETY: the only test in this binary that sets environment variables, and `run_game` is the
    // only reader.
    let report = std::env::temp_dir().join(format!("rusting-synctest-{}.json", std::process::id()));
    unsafe {
        std::env::set_var("RUSTING_HEADLESS_TICKS", "60");
        std::env::set_var("RUSTING_SYNCTEST", "3");
        std::env::set_var("RUSTING_STATE_HASH_OUT", &report);
    }
    let clean = game::run_game(Path::new(STARTER), |app| {
        app.add_plugins(starter_game::StarterGame);
    });
    // The synctest's report holds every tick once, as finally simulated, whatever was re-run.
    let written = rusting_engine::record::StateHashReport::load(&report).unwrap();
    std::fs::remove_file(&report).unwrap();
    let ticks: Vec<u64> = written.ticks.iter().map(|t| t.tick).collect();
    assert_eq!(ticks, (1..=60).collect::<Vec<u64>>());
    let mut plain = starter_app();
    let step = plain.fixed_step();
    for _ in 0..60 {
        plain.update(step);
    }
    let plain_hashes = plain
        .world()
        .resource::<rusting_engine::state::StateHashes>();
    assert_eq!(
        written.ticks.last().unwrap().hash,
        format!("{:016x}", plain_hashes.get(60).unwrap())
    );
    unsafe {
        std::env::remove_var("RUSTING_STATE_HASH_OUT");
    }
    let drifting = game::run_game(Path::new(STARTER), |app| {
        app.add_plugins(starter_game::StarterGame);
        app.add_systems(FixedUpdate, drift_by_local_counter.after(SimSet::Tweens));
    });
    assert_eq!(clean, std::process::ExitCode::SUCCESS);
    assert_eq!(drifting, std::process::ExitCode::FAILURE);
}

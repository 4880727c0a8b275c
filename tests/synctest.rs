//! The synctest rolls back and re-simulates every tick, and catches state kept outside the
//! snapshot.

use std::path::Path;

use bevy::input::keyboard::KeyCode;
use bevy::prelude::*;
use rusting_engine::determinism::{SyncTest, SyncTestError};
use rusting_engine::game;
use rusting_engine::gameplay::PlatformerController;
use rusting_engine::runtime::{RuntimeInput, SimSet};

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
/// entity and component it changed. Fails if the synctest re-simulates in the app it checks
/// (whose `Local` then carries on) instead of a restored new one.
#[test]
fn synctest_catches_a_counter_kept_in_a_local() {
    let make = || {
        let mut app = starter_app();
        app.add_systems(FixedUpdate, drift_by_local_counter.after(SimSet::Tweens));
        app
    };
    let mut synctest = SyncTest::new(make, 3);
    let mut failure = None;
    for k in 0..60 {
        if let Err(error) = synctest.advance(input(k)) {
            failure = Some(error);
            break;
        }
    }
    let Some(SyncTestError::Mismatch {
        tick, from, where_, ..
    }) = failure
    else {
        panic!("expected a mismatch, got {failure:?}");
    };
    assert_eq!(tick, 21, "the first tick the counter moves the hero");
    assert_eq!(from, 18, "three ticks back");
    let where_ = where_.unwrap();
    assert!(where_.contains("Transform"), "{where_}");
}

/// `RUSTING_SYNCTEST=3` turns a game's headless run into a synctest: the starter passes, and the
/// same game with the `Local` counter fails. Fails if the variable is ignored (both runs pass).
#[test]
fn rusting_synctest_runs_a_game_as_a_synctest() {
    // SAFETY: the only test in this binary that sets environment variables, and `run_game` is the
    // only reader.
    unsafe {
        std::env::set_var("RUSTING_HEADLESS_TICKS", "60");
        std::env::set_var("RUSTING_SYNCTEST", "3");
    }
    let clean = game::run_game(Path::new(STARTER), |app| {
        app.add_plugins(starter_game::StarterGame);
    });
    let drifting = game::run_game(Path::new(STARTER), |app| {
        app.add_plugins(starter_game::StarterGame);
        app.add_systems(FixedUpdate, drift_by_local_counter.after(SimSet::Tweens));
    });
    assert_eq!(clean, std::process::ExitCode::SUCCESS);
    assert_eq!(drifting, std::process::ExitCode::FAILURE);
}

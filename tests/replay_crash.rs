//! A recorded game run that panics leaves a replay that plays back up to its last completed tick.
//! (Its own test binary: it sets process-wide environment variables.)

use std::path::Path;

use bevy::prelude::*;
use rusting_engine::determinism::play_replay;
use rusting_engine::game;
use rusting_engine::game::project::Project;
use rusting_engine::record::Replay;
use rusting_engine::runtime::{FrameTime, SimSet};

#[path = "../crates/rusting/templates/starter/src/game.rs"]
mod starter_game;

const STARTER: &str = "crates/rusting/templates/starter";

/// A game system that fails during tick 150.
fn crash_on_tick_150(time: Res<FrameTime>) {
    if time.fixed_tick == 149 {
        panic!("a bug in the game");
    }
}

/// The run panics during tick 150; the replay written as it unwinds holds the 149 completed ticks
/// and plays back to the same hashes. Fails if the recording is only written at a normal end of
/// the run.
#[test]
fn a_crashing_run_leaves_a_playable_replay() {
    let dir = std::env::temp_dir().join(format!("rusting-crash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let replay_path = dir.join("crash.replay.json");
    // SAFETY: this test binary has one test, so no other thread reads the environment meanwhile.
    unsafe {
        std::env::set_var("RUSTING_HEADLESS_TICKS", "600");
        std::env::set_var(
            "RUSTING_INPUT_SCRIPT",
            Path::new(STARTER).join("input/walkthrough.json"),
        );
        std::env::set_var("RUSTING_REPLAY_OUT", &replay_path);
    }
    let outcome = std::panic::catch_unwind(|| {
        game::run_game(Path::new(STARTER), |app| {
            app.add_plugins(starter_game::StarterGame);
            app.add_systems(FixedUpdate, crash_on_tick_150.after(SimSet::Tweens));
        })
    });
    assert!(outcome.is_err(), "the run should have panicked");

    let replay = Replay::load(&replay_path).expect("the crash left a replay");
    assert_eq!(replay.hashes.last().map(|(tick, _)| *tick), Some(149));
    let project = Project::open(Path::new(STARTER)).unwrap();
    let mut app = game::build_app(&project).unwrap();
    app.add_plugins(starter_game::StarterGame);
    app.setup().unwrap();
    play_replay(&replay, &mut app).expect("the replay plays up to the crash");
    std::fs::remove_dir_all(&dir).unwrap();
}

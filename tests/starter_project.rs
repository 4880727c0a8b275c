//! The starter project runs headless with its walkthrough script and gives the same bits every
//! time.

use std::path::Path;

use bevy::prelude::*;
use rusting_engine::game::project::Project;
use rusting_engine::game::simulate_project_headless;
use rusting_engine::prelude::*;
use rusting_engine::runtime::InputScript;

#[path = "../crates/rusting/templates/starter/src/game.rs"]
mod starter_game;

const STARTER: &str = "crates/rusting/templates/starter";

/// Runs the starter 600 ticks with its script; returns every tick's world-state hash, the
/// player's counter and the lift's height.
fn run_starter() -> (Vec<(u64, u64)>, i64, f32) {
    let project = Project::open(Path::new(STARTER)).unwrap();
    let script = InputScript::load(&Path::new(STARTER).join("input/walkthrough.json")).unwrap();
    let (mut app, hashes) = simulate_project_headless(&project, 600, Some(&script), |app| {
        app.add_plugins(starter_game::StarterGame);
    })
    .unwrap();
    assert_eq!(app.ticks(), 600);
    let world = app.world_mut();
    let counter = world.query::<&Counter>().single(world).unwrap().value;
    let lift_y = world
        .query::<(&Name, &Transform)>()
        .iter(world)
        .find(|(name, _)| name.as_str() == "Lift")
        .unwrap()
        .1
        .translation
        .y;
    (hashes, counter, lift_y)
}

/// Two 600-tick runs of the starter with its walkthrough give the same world-state hash on every tick, and
/// the run exercises gameplay: the hero runs through two coins, jumps onto the step and takes the
/// gem there (1 + 1 + 5), and the lift moves.
/// Fails if anything in the starter's path reads the frame clock, a global random generator or
/// unordered iteration (the per-tick hashes would part).
#[test]
fn the_starter_project_runs_the_same_every_time() {
    let (first, counter, lift_y) = run_starter();
    let (second, ..) = run_starter();
    assert_eq!(first.len(), 600);
    for (tick, (a, b)) in first.iter().zip(&second).enumerate() {
        assert_eq!(a, b, "tick {} differs", tick + 1);
    }
    assert!(
        counter >= 2,
        "the walkthrough should collect the two coins, counter is {counter}"
    );
    assert!(lift_y > 0.3, "the lift did not move: {lift_y}");
}

//! The starter game as tests and benchmarks build it: the project in
//! `crates/rusting/templates/starter`, its plugin, set up and at tick 0.

// Each test binary uses some of these helpers, not all.
#![allow(dead_code)]

use std::path::Path;

#[path = "../../crates/rusting/templates/starter/src/game.rs"]
pub mod starter_game;

/// The starter project's directory, relative to the workspace root.
pub const STARTER: &str = "crates/rusting/templates/starter";

/// A new starter app, set up.
pub fn starter_app() -> rusting_engine::App {
    let project = rusting_engine::game::project::Project::open(Path::new(STARTER)).unwrap();
    let mut app = rusting_engine::game::build_app(&project).unwrap();
    app.add_plugins(starter_game::StarterGame);
    app.setup().unwrap();
    app
}

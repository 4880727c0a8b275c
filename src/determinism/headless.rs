//! Headless runs: a project's main scene stepped with no window, returning every tick's hash.
//!
//! This module must never open a window or read a clock.

use std::sync::{Arc, Mutex};

use bevy::prelude::World;

use super::hash::StateHashes;
use crate::app::App;
use crate::game::{self, GameError};
use crate::project::Project;
use crate::runtime::InputScript;

/// Loads `project`'s main scene, adds the game's systems with `add_game`, runs `ticks` fixed ticks
/// headless (with `script`'s input when given), and returns the app and every tick's
/// `(tick, hash)`.
pub fn simulate_project_headless(
    project: &Project,
    ticks: u64,
    script: Option<&InputScript>,
    add_game: impl FnOnce(&mut App),
) -> Result<(App, Vec<(u64, u64)>), GameError> {
    let mut app = game::build_app(project)?;
    add_game(&mut app);
    let hashes = collect_hashes(&mut app);
    app.setup()?;
    game::run_headless(&mut app, ticks, script);
    let hashes = hashes.lock().map(|h| h.clone()).unwrap_or_default();
    Ok((app, hashes))
}

/// Adds a tick hook that keeps every tick's hash (`StateHashes` keeps only the latest 1024).
pub fn collect_hashes(app: &mut App) -> Arc<Mutex<Vec<(u64, u64)>>> {
    let hashes = Arc::new(Mutex::new(Vec::new()));
    collect_hashes_into(app, hashes.clone());
    hashes
}

/// [`collect_hashes`] into `sink`. A tick run again after a rollback replaces the hashes from
/// that tick on, so the list always holds the ticks as finally simulated.
pub fn collect_hashes_into(app: &mut App, sink: Arc<Mutex<Vec<(u64, u64)>>>) {
    app.add_tick_hook(move |world: &mut World, _tick: u64| {
        if let Some(&last) = world.resource::<StateHashes>().cpu.back()
            && let Ok(mut all) = sink.lock()
        {
            while all.last().is_some_and(|&(tick, _)| tick >= last.0) {
                all.pop();
            }
            all.push(last);
        }
    });
}

//! Running an engine app tick by tick and keeping each tick's world-state hash: what the tests
//! that compare two runs share.

use rusting_engine::App;
use rusting_engine::state::StateHashes;

/// Runs `ticks` ticks one a frame and returns each tick's hash.
pub fn run(app: &mut App, ticks: u64) -> Vec<u64> {
    let step = app.fixed_step();
    (0..ticks)
        .map(|_| {
            app.update(step);
            last(app)
        })
        .collect()
}

/// The world-state hash of the last tick run.
pub fn last(app: &App) -> u64 {
    app.world().resource::<StateHashes>().cpu.back().unwrap().1
}

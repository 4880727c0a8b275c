//! Replays of the starter game: size per minute and playback speed against real time, measured in
//! one run. Run with `cargo bench --bench replay`.

use std::path::Path;
use std::time::Instant;

use rusting_engine::determinism::play_replay;
use rusting_engine::game;
use rusting_engine::runtime::InputScript;

#[path = "../tests/support/starter.rs"]
mod support;

use support::starter_app as starter;

fn main() {
    let script = InputScript::load(Path::new(
        "crates/rusting/templates/starter/input/walkthrough.json",
    ))
    .unwrap();
    let ticks = 3600; // one minute at 60 Hz
    let mut app = starter();
    app.start_recording();
    game::run_headless(&mut app, ticks, Some(&script));
    let replay = app.stop_recording().unwrap();
    let json = replay.to_json();
    let compact = replay.to_compact().expect("contiguous hashes");
    let minute_of_play = ticks as f64 / 60.0 / 60.0;
    let mut fresh = starter();
    let start = Instant::now();
    play_replay(&replay, &mut fresh).expect("the recording plays back");
    let seconds = start.elapsed().as_secs_f64();
    let simulated = ticks as f64 / 60.0;
    println!(
        "starter, {ticks} ticks: replay JSON {:.1} KB, compact {:.1} KB per minute of play; playback {seconds:.3} s for {simulated:.0} s of play, {:.0}x real time",
        json.len() as f64 / 1024.0 / minute_of_play,
        compact.len() as f64 / 1024.0 / minute_of_play,
        simulated / seconds
    );
}

//! The starter game: a small 3D course with pickups, a lift, a box stack and some balls.
//!
//! Play it in a window from this directory: `rusting run .` (or `cargo run`). Run it headless:
//! `rusting run . --headless --ticks 600 --script input/walkthrough.json`.

mod game;

rusting_engine::rusting_game!(game::StarterGame);

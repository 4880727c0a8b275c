//! The starter game: a small 3D course with pickups, a lift, a box stack and some balls.
//!
//! Run it headless from this directory:
//! `RUSTING_HEADLESS_TICKS=600 RUSTING_INPUT_SCRIPT=input/walkthrough.json cargo run`

mod game;

rusting_engine::rusting_game!(game::StarterGame);

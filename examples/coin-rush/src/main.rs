//! Coin Rush, the game `docs/tutorial.md` builds: run around an arena, pick up the coins that
//! appear at random places before they vanish, and dash to reach them in time.
//!
//! Run it headless from this directory:
//! `rusting run . --headless --ticks 600 --script input/play.json`

mod coins;
mod dash;
mod game;

// ANCHOR: main
rusting_engine::rusting_game!(game::CoinRush);
// ANCHOR_END: main

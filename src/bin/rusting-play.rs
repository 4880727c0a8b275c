//! `rusting-play <project>`: plays a project with the engine's own systems and no game plugin, in
//! a window or headless as the `RUSTING_*` variables ask (see `rusting_engine::game::run_game`).
//!
//! It shows a scene made of engine components without writing a game, and it is what the window
//! tests run: bevy's window loop can run once per process, so each windowed run is a process.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(project) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: rusting-play <project directory>");
        return ExitCode::from(2);
    };
    rusting_engine::game::run_game(&project, |_| {})
}

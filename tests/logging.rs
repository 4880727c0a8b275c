//! Games' log lines reach standard error stamped with the tick, and `RUST_LOG` filters them.
//! (Its own test binary: it runs itself as a child, which sets the process's log output.)

use std::process::Command;

use bevy::prelude::*;
use rusting_engine::runtime::{FrameTime, SimSet};

#[path = "support/starter.rs"]
mod support;

fn say_at_tick_3(time: Res<FrameTime>) {
    if time.fixed_tick + 1 == 3 {
        info!("a coin was collected");
        warn!("the coin jar is full");
    }
}

/// The child of [`game_logs_reach_the_terminal_stamped_with_the_tick`]: sets up logging as
/// `rusting_game!` does and runs the starter for five ticks with a system that logs during tick 3.
#[test]
#[ignore = "run by game_logs_reach_the_terminal_stamped_with_the_tick as its child"]
fn child_logs() {
    if std::env::var_os("RUSTING_LOGGING_CHILD").is_none() {
        return;
    }
    rusting_engine::engine::logging::init_logging();
    let mut app = support::starter_app();
    app.add_systems(FixedUpdate, say_at_tick_3.after(SimSet::Tweens));
    let step = app.fixed_step();
    for _ in 0..5 {
        app.update(step);
    }
}

/// The child's standard error for `RUST_LOG` = `filter` (unset when `None`).
fn child_stderr(filter: Option<&str>) -> String {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "child_logs", "--ignored", "--nocapture"])
        .env("RUSTING_LOGGING_CHILD", "1")
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG");
    if let Some(filter) = filter {
        command.env("RUST_LOG", filter);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `info!` and `warn!` from a game system reach standard error, each line stamped `tick 3`;
/// `RUST_LOG=warn` keeps the warning and drops the info line. Fails if no log output is set up
/// (games' `info!` printed nothing), or lines lose the tick.
#[test]
fn game_logs_reach_the_terminal_stamped_with_the_tick() {
    let all = child_stderr(None);
    let line =
        |text: &str, needle: &str| text.lines().find(|l| l.contains(needle)).map(str::to_owned);
    let info = line(&all, "a coin was collected").unwrap_or_else(|| panic!("no info line: {all}"));
    assert!(
        info.starts_with("tick 3 ") && info.contains("INFO"),
        "{info}"
    );
    let warning = line(&all, "the coin jar is full").unwrap_or_else(|| panic!("{all}"));
    assert!(
        warning.starts_with("tick 3 ") && warning.contains("WARN"),
        "{warning}"
    );
    let filtered = child_stderr(Some("warn"));
    assert!(
        line(&filtered, "the coin jar is full").is_some(),
        "{filtered}"
    );
    assert!(
        line(&filtered, "a coin was collected").is_none(),
        "{filtered}"
    );
}

//! A game built with `panic = "abort"` that panics while recording still leaves its replay.

mod support;

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use support::{project_with, rusting, shared_target};

/// A project whose game panics during tick 41, its binary built with `-C panic=abort` (so the
/// panic never unwinds back to the code that finishes a recording), recording to a compact
/// replay: the process dies of SIGABRT, yet the replay is there (written by the panic hook from
/// the journal, which is then removed), holds the 40 completed ticks, and `replay info` reads it.
/// Fails if finishing a recording relies on unwinding.
#[test]
fn an_aborting_game_still_leaves_its_replay() {
    let (root, dir) = project_with(
        "aborts",
        r#"use bevy::prelude::*;
use rusting_engine::prelude::*;

pub struct Extra;

impl Plugin for Extra {
    fn build(&self, app: &mut bevy::app::App) {
        app.add_systems(FixedUpdate, give_up.after(SimSet::Tweens));
    }
}

fn give_up(time: Res<FrameTime>) {
    if time.fixed_tick == 40 {
        panic!("out of patience");
    }
}
"#,
    );
    let target = shared_target();
    let build = Command::new(env!("CARGO"))
        .current_dir(&dir)
        .args([
            "rustc",
            "--quiet",
            "--no-default-features",
            "--bin",
            "aborts",
        ])
        .arg("--target-dir")
        .arg(&target)
        .args(["--", "-C", "panic=abort"])
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let replay = root.join("session.rply");
    let out = Command::new(target.join("debug/aborts"))
        .current_dir(&dir)
        .env("RUSTING_HEADLESS_TICKS", "100")
        .env("RUSTING_REPLAY_OUT", &replay)
        .output()
        .unwrap();
    assert_eq!(
        out.status.signal(),
        Some(6),
        "the game should abort: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !root.join("session.rply.journal").exists(),
        "the journal is left"
    );
    let info = rusting(&["--json", "replay", "info", replay.to_str().unwrap()]);
    assert!(
        info.status.success(),
        "{}",
        String::from_utf8_lossy(&info.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(info["ticks"], 40, "{info}");
    std::fs::remove_dir_all(&root).unwrap();
}

//! What a recording killed with SIGKILL leaves. (Its own test binary: it runs itself as the child
//! that is killed.)

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rusting_engine::determinism::play_replay;
use rusting_engine::record::RecordingAppExt;
use rusting_engine::record::Replay;
use rusting_engine::record::replay_journal::journal_path;

#[path = "support/starter.rs"]
mod support;
use support::starter_app;

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rusting-recording-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The child of [`a_killed_recording_loses_at_most_one_frame`]: records the starter game into the
/// file named by `RUSTING_RECORDING_CHILD`, printing each frame's last tick once the frame is
/// done, until it is killed.
#[test]
#[ignore = "run by a_killed_recording_loses_at_most_one_frame as its child"]
fn child_records_until_killed() {
    let Some(target) = std::env::var_os("RUSTING_RECORDING_CHILD") else {
        return;
    };
    let mut app = starter_app();
    app.start_recording_to(Path::new(&target)).unwrap();
    let step = app.fixed_step();
    for _ in 0..100_000 {
        app.update(step);
        println!("rusting-child-tick {}", app.ticks());
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A recording killed with SIGKILL leaves its journal, which `Replay::load` reads as a replay
/// holding every frame the game had finished (at most the running frame is lost), and which plays
/// back into a fresh app with every hash matching. Fails if frames reach the journal later than
/// the end of their frame, or if a journal cut mid-record cannot be read.
#[test]
fn a_killed_recording_loses_at_most_one_frame() {
    let dir = scratch("kill");
    let target = dir.join("killed.rply");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_records_until_killed",
            "--ignored",
            "--nocapture",
        ])
        .env("RUSTING_RECORDING_CHILD", &target)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut done = 0;
    while done < 120 {
        let line = lines.next().expect("the child prints ticks").unwrap();
        if let Some(tick) = line.strip_prefix("rusting-child-tick ") {
            done = tick.parse().unwrap();
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!target.exists(), "a killed recording is never finalized");
    let replay = Replay::load(&journal_path(&target)).expect("the journal is a replay");
    let last = replay.end_tick();
    assert!(
        last >= done,
        "the journal ends at tick {last}, the child had finished {done}"
    );
    play_replay(&replay, &mut starter_app()).expect("the journal plays back");
    std::fs::remove_dir_all(&dir).unwrap();
}

//! Two peers of the starter game through `rusting run --net 2` (the engine's `net` feature): the
//! starter's two-player mode over loopback UDP, and a desync the peers name to the field.

mod support;

use support::{project_with, rusting, shared_target};

/// When `PLANT_DESYNC=1`, the peer playing handle 1 nudges the second player along x during
/// tick 90: a difference only that peer's simulation makes.
const PLANTED: &str = r#"use bevy::prelude::*;
use rusting_engine::prelude::*;
use rusting_engine::runtime::PlayerSlot;

pub struct Extra;

impl Plugin for Extra {
    fn build(&self, app: &mut bevy::app::App) {
        app.add_systems(FixedUpdate, nudge.after(SimSet::Tweens));
    }
}

fn nudge(time: Res<FrameTime>, mut players: Query<(&PlayerSlot, &mut Transform)>) {
    let planted = std::env::var("PLANT_DESYNC").as_deref() == Ok("1")
        && std::env::var("RUSTING_NET_PLAYER").as_deref() == Ok("1");
    if !planted || time.fixed_tick != 90 {
        return;
    }
    for (slot, mut transform) in &mut players {
        if slot.handle == 1 {
            transform.translation.x += 1e-3;
        }
    }
}
"#;

/// Player 2's own script: run left, then jump.
const SECOND_PLAYER: &str = r#"{"format_version": 1, "frames": [
  {"repeat": 40, "hold": ["ArrowLeft"]},
  {"repeat": 4, "hold": ["Space"]},
  {"repeat": 20}
]}"#;

/// `rusting run <project> --net 2 --debug --ticks 200 --script input/walkthrough.json
/// --peer-script 1=<project>/input/second.json --session-out <project>/match.session.json`, with
/// `PLANT_DESYNC` set to `plant`.
fn two_peers(dir: &std::path::Path, plant: &str) -> std::process::Output {
    let target = shared_target();
    std::process::Command::new(env!("CARGO_BIN_EXE_rusting"))
        .args([
            "run",
            dir.to_str().unwrap(),
            "--net",
            "2",
            "--debug",
            "--ticks",
            "200",
        ])
        .args([
            "--script",
            dir.join("input/walkthrough.json").to_str().unwrap(),
        ])
        .args([
            "--peer-script",
            &format!("1={}", dir.join("input/second.json").display()),
        ])
        .args([
            "--session-out",
            dir.join("match.session.json").to_str().unwrap(),
        ])
        .args(["--target-dir", target.to_str().unwrap()])
        .env("PLANT_DESYNC", plant)
        .output()
        .expect("the rusting binary runs")
}

/// Two peers of the starter (two players, each driven by its own peer's input, player 2 by a
/// script of its own) agree on all 200 confirmed ticks; with a nudge on one peer only, both name the second player's
/// `Transform.translation.x` at the first checked tick after it (tick 100) and the run fails with
/// `NET_DESYNC`. The first run's session replay plays back through `rusting replay play` without
/// the network, and `rusting replay info` describes it. Fails when the starter spawns no second
/// player (the nudge then touches nothing and the second run passes), or when the session's
/// desync report names no field.
#[test]
fn two_starter_peers_agree_and_name_a_planted_desync() {
    let (root, dir) = project_with("net", PLANTED);
    std::fs::write(dir.join("input/second.json"), SECOND_PLAYER).unwrap();
    let agreed = two_peers(&dir, "0");
    let stdout = String::from_utf8_lossy(&agreed.stdout);
    let stderr = String::from_utf8_lossy(&agreed.stderr);
    assert_eq!(agreed.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("net: 2 peers on this machine agree on all 200 confirmed ticks")
            && stdout.contains("player 1 of 2: 200 confirmed ticks, no desync"),
        "{stdout}"
    );
    let replay = dir.join("match.session.json");
    // Each peer played its own script: in the first 30 ticks player 1 runs left (ArrowLeft on
    // `move_x`) while player 0 stands.
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&replay).unwrap()).unwrap();
    let ticks = recorded["ticks"].as_array().unwrap();
    assert!(
        ticks[..30]
            .iter()
            .any(|tick| tick["inputs"][0] != tick["inputs"][1]),
        "{:?}",
        &ticks[..30]
    );
    let info = rusting(&["replay", "info", replay.to_str().unwrap()]);
    let info_out = String::from_utf8_lossy(&info.stdout);
    assert!(
        info.status.success()
            && info_out.contains("multiplayer session replay, format 2, 2 players, "),
        "{info_out}{}",
        String::from_utf8_lossy(&info.stderr)
    );
    let target = shared_target();
    let played = rusting(&[
        "replay",
        "play",
        dir.to_str().unwrap(),
        replay.to_str().unwrap(),
        "--target-dir",
        target.to_str().unwrap(),
    ]);
    let played_out = String::from_utf8_lossy(&played.stdout);
    assert!(
        played.status.success()
            && played_out.contains("the session replay matched all ")
            && played_out.contains("confirmed ticks of its 2 players"),
        "{played_out}{}",
        String::from_utf8_lossy(&played.stderr)
    );
    let parted = two_peers(&dir, "1");
    let stdout = String::from_utf8_lossy(&parted.stdout);
    let stderr = String::from_utf8_lossy(&parted.stderr);
    assert_eq!(parted.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("NET_DESYNC: peer 0: desync after tick 100 with 127.0.0.1:")
            && stderr.contains("entity `Player 2`")
            && stderr.contains("component Transform, field translation.x:"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(root);
}

/// Bad session arguments are refused with `NET_INVALID` (exit code 3) before anything builds:
/// an address list that does not parse, a handle past the players, a session of one, a
/// `--peer-script` without a handle, for a handle past the players or given twice, or naming a
/// script that does not load (`SCRIPT_INVALID`). Fails if they reach the game (a build, then
/// `RUN_FAILED`).
#[test]
fn bad_session_arguments_are_refused_before_building() {
    let starter = support::starter();
    let walkthrough_for_1 = format!("1={}", starter.join("input/walkthrough.json").display());
    let starter = starter.to_str().unwrap();
    for (args, expected) in [
        (
            vec!["--net-peers", "127.0.0.1:7000,nowhere", "--net-player", "0"],
            "NET_INVALID: --net-peers 127.0.0.1:7000,nowhere: expected 2 to 8 addresses",
        ),
        (
            vec![
                "--net-peers",
                "127.0.0.1:7000,127.0.0.1:7001",
                "--net-player",
                "2",
            ],
            "NET_INVALID: --net-player 2: the session's 2 players have handles 0 to 1",
        ),
        (
            vec!["--net", "1"],
            "NET_INVALID: --net 1: a session on this machine has 2 to 8 peers",
        ),
        (
            vec!["--net", "2", "--peer-script", "input/walkthrough.json"],
            "NET_INVALID: --peer-script input/walkthrough.json: expected HANDLE=FILE",
        ),
        (
            vec!["--net", "2", "--peer-script", "2=input/walkthrough.json"],
            "NET_INVALID: --peer-script 2=input/walkthrough.json: the session's 2 players have \
             handles 0 to 1",
        ),
        (
            vec![
                "--net",
                "2",
                "--peer-script",
                &walkthrough_for_1,
                "--peer-script",
                &walkthrough_for_1,
            ],
            "NET_INVALID: --peer-script 1=",
        ),
        (
            vec!["--net", "2", "--peer-script", "1=no/such/script.json"],
            "SCRIPT_INVALID: ",
        ),
    ] {
        let mut all = vec!["run", starter, "--ticks", "10"];
        all.extend(args);
        let out = rusting(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(stderr.starts_with(expected), "{stderr}");
    }
}

//! Per-tick input: presses and releases seen by exactly one tick, whatever the frames.

use std::sync::Mutex;

use bevy::input::keyboard::KeyCode;
use bevy::prelude::*;
use rusting_engine::determinism::play_replay;
use rusting_engine::record::RecordingAppExt;
use rusting_engine::runtime::{FrameTime, RuntimeInput, SimSet, TickInput};

#[path = "support/starter.rs"]
mod support;

/// `(tick, Space just pressed, Space just released, look x)` as each tick saw them.
static SEEN: Mutex<Vec<(u64, bool, bool, f32)>> = Mutex::new(Vec::new());

fn watch(time: Res<FrameTime>, input: Res<TickInput>) {
    SEEN.lock().unwrap().push((
        time.fixed_tick + 1,
        input.just_pressed(KeyCode::Space),
        input.just_released(KeyCode::Space),
        input.look_delta.x,
    ));
}

fn app() -> rusting_engine::App {
    let mut app = support::starter_app();
    app.add_systems(
        FixedUpdate,
        watch.after(SimSet::Input).before(SimSet::Physics),
    );
    app
}

fn seen() -> Vec<(u64, bool, bool, f32)> {
    std::mem::take(&mut *SEEN.lock().unwrap())
}

fn frame(app: &mut rusting_engine::App, ticks: u32, space: bool, look: f32) {
    let mut input = RuntimeInput::default();
    if space {
        input.press(KeyCode::Space);
    }
    input.look_delta.x = look;
    app.set_input(input);
    let step = app.fixed_step();
    app.update(step * ticks);
}

/// A tap of Space made and let go within frames that run no tick is seen by the next tick as just
/// pressed, and by the tick after as just released, exactly once each; look movement of frames
/// without a tick adds up into the next tick and no later tick sees it again; a frame of three
/// ticks gives the press to its first tick only. A snapshot restored and run again sees the same
/// presses on the same ticks, and so does playback of a recording. Fails if presses are read from
/// the frame's input (a tap between ticks is lost), if a press shows on more than one tick, or if
/// the latch lives outside the simulation state (a rollback sees other presses).
#[test]
fn just_pressed_is_part_of_the_simulation() {
    let mut app = app();
    app.start_recording();
    frame(&mut app, 1, false, 0.0); // tick 1
    frame(&mut app, 0, true, 2.0); // tap down, no tick
    frame(&mut app, 0, false, 3.0); // let go, no tick
    let snapshot = app.snapshot().unwrap();
    frame(&mut app, 1, false, 0.0); // tick 2: the tap
    frame(&mut app, 1, false, 0.0); // tick 3: its release
    frame(&mut app, 3, true, 1.0); // ticks 4-6: held from the frame's first tick
    frame(&mut app, 1, false, 0.0); // tick 7: released
    let first = seen();
    let expected = vec![
        (1, false, false, 0.0),
        (2, true, false, 5.0),
        (3, false, true, 0.0),
        (4, true, false, 1.0),
        (5, false, false, 0.0),
        (6, false, false, 0.0),
        (7, false, true, 0.0),
    ];
    assert_eq!(first, expected);
    let replay = app.stop_recording().unwrap();

    app.restore(&snapshot).unwrap();
    frame(&mut app, 1, false, 0.0);
    frame(&mut app, 1, false, 0.0);
    assert_eq!(seen(), expected[1..3].to_vec(), "after a restore");

    let mut fresh = app_fresh();
    play_replay(&replay, &mut fresh).expect("the recording plays back");
    assert_eq!(seen(), expected, "in playback");
}

fn app_fresh() -> rusting_engine::App {
    seen();
    app()
}

/// Every tick's hash of the starter game run with `script` for `ticks` ticks, one script frame at
/// a time, or in the uneven pacing's frames with the script's input stamped by tick.
fn scripted_hashes(
    script: Option<&rusting_engine::runtime::InputScript>,
    ticks: u64,
    uneven: bool,
) -> Vec<(u64, u64)> {
    let mut app = support::starter_app();
    let hashes = rusting_engine::game::collect_hashes(&mut app);
    if uneven {
        rusting_engine::game::run_headless_uneven(&mut app, ticks, script);
    } else {
        rusting_engine::game::run_headless(&mut app, ticks, script);
    }
    let hashes = hashes.lock().unwrap().clone();
    assert_eq!(hashes.len() as u64, ticks);
    hashes
}

/// A script of frames of one, half, no and four ticks, with taps held for half-tick frames, look
/// movement in frames that run no tick and in ten frames in a row, and axes and keys that change
/// mid-way, run in the uneven pacing's
/// frames (3, 1/2, 1/2, 0 and 5 ticks) gives every tick the same hash as run in its own frames:
/// the script's input is stamped by tick, so it still means what it meant, and `rusting
/// determinism` keeps its uneven run with a script. Fails if the uneven run latches each of its
/// own frames' input besides the stamps (look movement then counts more than once).
#[test]
fn the_uneven_run_keeps_the_script() {
    let script: rusting_engine::runtime::InputScript = serde_json::from_str(
        r#"{"format_version": 1, "frames": [
            {"repeat": 10},
            {"repeat": 20, "input": {"axes": {"move_x": 1.0}}},
            {"repeat": 3, "ticks": 0.5, "hold": ["Space"]},
            {"repeat": 2, "ticks": 0.0, "input": {"look_delta": [3.0, 1.0]}},
            {"repeat": 1, "ticks": 4.0, "input": {"axes": {"move_y": 1.0}, "look_delta": [0.0, 0.0]}},
            {"repeat": 25, "hold": ["KeyE"]},
            {"repeat": 10, "input": {"look_delta": [2.0, 0.5]}},
            {"repeat": 5, "ticks": 0.5, "input": {"look_delta": [0.0, 0.0], "pressed": ["ArrowUp"]}},
            {"repeat": 3, "input": {"pressed": []}},
            {"repeat": 6, "ticks": 0.5, "input": {"axes": {"move_x": -1.0}}},
            {"repeat": 30, "input": {"axes": {}}}
        ]}"#,
    )
    .unwrap();
    let ticks = 120;
    let steady = scripted_hashes(Some(&script), ticks, false);
    assert_ne!(
        steady,
        scripted_hashes(None, ticks, false),
        "the script moves the game"
    );
    assert_eq!(scripted_hashes(Some(&script), ticks, true), steady);
    // Without a script the uneven pacing changes nothing either.
    assert_eq!(
        scripted_hashes(None, ticks, true),
        scripted_hashes(None, ticks, false)
    );
}

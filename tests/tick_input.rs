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

//! A rollback on the starter game, measured against the target of docs/multiplayer.md: restoring
//! the snapshot of 8 ticks back and re-simulating the 8 ticks within 4 ms, printed beside one
//! plain tick and beside a session's per-tick save (a snapshot) and the description of a tick's
//! state down to the field that naming a desync takes (once per desync), so the ratio shows what a
//! rollback costs in ticks. Run with `cargo bench --bench rollback`.

use std::time::{Duration, Instant};

use bevy::input::keyboard::KeyCode;
use rusting_engine::App;
use rusting_engine::record::StateDetail;
use rusting_engine::runtime::RuntimeInput;

#[path = "../tests/support/starter.rs"]
mod support;

/// Ticks a rollback goes back.
const DEPTH: u64 = 8;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The starter's input on frame `frame`: walking back and forth, strafing, jumping now and then.
fn input(frame: u64) -> RuntimeInput {
    let mut input = RuntimeInput::default();
    input.set_axis(
        "move_y",
        if (frame / 120).is_multiple_of(2) {
            1.0
        } else {
            -1.0
        },
    );
    input.set_axis(
        "move_x",
        if (frame / 70).is_multiple_of(2) {
            0.6
        } else {
            -0.6
        },
    );
    if frame % 45 == 10 {
        input.press(KeyCode::Space);
    }
    input
}

fn tick(app: &mut App) {
    let step = app.fixed_step();
    let frame = app.ticks();
    app.set_input(input(frame));
    app.update(step);
}

fn main() {
    let mut app = support::starter_app();
    for _ in 0..120 {
        tick(&mut app);
    }
    let (mut plain, mut saves, mut rollbacks) = (Vec::new(), Vec::new(), Vec::new());
    let mut details = Vec::new();
    for _ in 0..60 {
        let start = Instant::now();
        let snapshot = app.snapshot().unwrap();
        saves.push(start.elapsed());
        let start = Instant::now();
        let ticks = app.ticks();
        std::hint::black_box(StateDetail::capture(app.world_mut(), ticks));
        details.push(start.elapsed());
        for _ in 0..DEPTH {
            let start = Instant::now();
            tick(&mut app);
            plain.push(start.elapsed());
        }
        let start = Instant::now();
        app.restore(&snapshot).unwrap();
        for _ in 0..DEPTH {
            tick(&mut app);
        }
        rollbacks.push(start.elapsed());
    }
    let (plain, save, rollback) = (median(plain), median(saves), median(rollbacks));
    let detail = median(details);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "starter: one tick {:.3} ms, a session's save (snapshot) {:.3} ms, describing a tick for a \
         desync report {:.3} ms, rolling back {DEPTH} ticks (restore + {DEPTH} ticks) {:.3} ms = {:.1} \
         ticks' time (target 4 ms)",
        ms(plain),
        ms(save),
        ms(detail),
        ms(rollback),
        rollback.as_secs_f64() / plain.as_secs_f64()
    );
}

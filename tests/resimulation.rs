//! Presentation can tell a re-simulated tick from a new one, and log lines carry the tick.
//! (Its own test binary: the logging test runs itself as a child with its own log set-up.)

use std::sync::Mutex;

use bevy::prelude::*;
use rusting_engine::determinism::SyncTest;
use rusting_engine::gameplay::{SoundEvent, SoundEvents, SoundQueue};
use rusting_engine::runtime::{FrameTime, RuntimeInput, SimSet, not_resimulating, resimulating};
use rusting_engine::state::SimId;

#[path = "support/starter.rs"]
mod support;
use support::starter_app;

/// Ticks seen by the fixed systems below, as `(tick, re-simulated)`.
static SEEN: Mutex<Vec<(u64, bool)>> = Mutex::new(Vec::new());

fn once(time: Res<FrameTime>) {
    SEEN.lock().unwrap().push((time.fixed_tick + 1, false));
}

fn again(time: Res<FrameTime>) {
    SEEN.lock().unwrap().push((time.fixed_tick + 1, true));
}

/// A cue every tick, raised after the engine's own.
fn step_cue(time: Res<FrameTime>, mut sounds: ResMut<SoundEvents>) {
    sounds.events.push(SoundEvent {
        tick: time.fixed_tick,
        source: SimId(0),
        cue: "step",
    });
}

/// Under a SyncTest that rolls back three ticks after every tick, a fixed system with
/// `not_resimulating` sees each of 20 ticks exactly once, in order, and one with `resimulating`
/// sees every tick once for each rollback that ran it again. The sound queue plays every cue once
/// (a `"step"` every tick and the player's landing) under the SyncTest, and loses none when a
/// frame runs five ticks. Fails if the app stops telling a tick it ran before from a new one,
/// marks a new tick as re-simulated, queues a re-simulated tick's cues again, or keeps only a
/// frame's last tick's cues.
#[test]
fn presentation_knows_when_a_tick_is_resimulated() {
    let make = || {
        let mut app = starter_app();
        app.add_systems(
            FixedUpdate,
            (
                once.run_if(not_resimulating),
                again.run_if(resimulating),
                step_cue.after(SimSet::SoundCues),
            )
                .chain()
                .after(SimSet::Tweens),
        );
        app
    };
    let drain =
        |app: &mut rusting_engine::App| app.world_mut().resource_mut::<SoundQueue>().drain();
    let mut synctest = SyncTest::new(make, 3);
    let mut played = Vec::new();
    for _ in 0..20 {
        synctest.advance(RuntimeInput::default()).unwrap();
        played.extend(drain(synctest.app_mut()));
    }
    let seen = SEEN.lock().unwrap().clone();
    let new: Vec<u64> = seen.iter().filter(|(_, a)| !a).map(|(t, _)| *t).collect();
    assert_eq!(new, (1..=20).collect::<Vec<u64>>());
    for tick in 1..=17u64 {
        let again = seen.iter().filter(|&&(t, a)| a && t == tick).count();
        assert_eq!(
            again,
            if tick == 1 { 1 } else { 3.min(tick as usize) },
            "tick {tick}: {seen:?}"
        );
    }
    let steps: Vec<u64> = played
        .iter()
        .filter(|e| e.cue == "step")
        .map(|e| e.tick)
        .collect();
    assert_eq!(steps, (0..20).collect::<Vec<u64>>(), "{played:?}");
    assert_eq!(
        played.iter().filter(|e| e.cue == "land").count(),
        1,
        "{played:?}"
    );

    let mut app = make();
    let step = app.fixed_step();
    let mut in_big_frames = Vec::new();
    for _ in 0..4 {
        app.update(step * 5);
        in_big_frames.extend(drain(&mut app));
    }
    assert_eq!(in_big_frames, played);
}

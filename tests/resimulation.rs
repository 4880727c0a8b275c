//! Presentation can tell a re-simulated tick from a new one, and log lines carry the tick.
//! (Its own test binary: the logging test runs itself as a child with its own log set-up.)

use std::sync::Mutex;

use bevy::prelude::*;
use rusting_engine::determinism::SyncTest;
use rusting_engine::runtime::{FrameTime, RuntimeInput, SimSet, not_resimulating, resimulating};

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

/// Under a SyncTest that rolls back three ticks after every tick, a fixed system with
/// `not_resimulating` sees each of 20 ticks exactly once, in order, and one with `resimulating`
/// sees every tick once for each rollback that ran it again. Fails if the app stops telling a
/// tick it ran before from a new one, or marks a new tick as re-simulated.
#[test]
fn presentation_knows_when_a_tick_is_resimulated() {
    let make = || {
        let mut app = starter_app();
        app.add_systems(
            FixedUpdate,
            (once.run_if(not_resimulating), again.run_if(resimulating))
                .chain()
                .after(SimSet::Tweens),
        );
        app
    };
    let mut synctest = SyncTest::new(make, 3);
    for _ in 0..20 {
        synctest.advance(RuntimeInput::default()).unwrap();
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
}

//! Playing a [`Replay`] back into an app: [`play_replay`], frame by frame with a
//! [`PlaybackCursor`], from a replay in memory or a window at a time from a [`ReplayStream`]
//! ([`play_replay_stream`]), and the blame at the recording's next state detail when a hash
//! differs.
//!
//! [`play_replay`] sets the seed and feeds the recorded deltas and input into an app holding the
//! same scene, in place, checking every hash. The replay's format and its checks are `record`'s;
//! this module drives a [`SimulationHost`] with them. It must never read a clock or a device.

use std::borrow::Cow;
use std::path::Path;
use std::time::Duration;

use crate::engine::SimulationHost;
use crate::jobs::OutsideQueue;
use crate::record::ReplayStream;
use crate::record::detail::{StateDetail, compare_details};
use crate::record::replay::{
    Replay, ReplayBlame, ReplayError, recorded_form, recorded_hash_matches,
};
use crate::runtime::{RandomSeed, TickAccumulator, TimeControl};
use crate::scene::SceneIdentity;
use crate::state::StateHashes;

/// How far playback of a replay has got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlaybackCursor {
    /// The next frame to play.
    pub frame: usize,
    /// How many recorded hashes have been checked.
    pub checked: usize,
}

impl Replay {
    /// Checks that `app` (set up, at the replay's start tick) holds the recorded scene, writes
    /// the recorded seed in place, and feeds the recorded outside results from now on.
    pub fn prepare(&self, app: &mut impl SimulationHost) -> Result<(), ReplayError> {
        self.check(Path::new("(replay in memory)"))?;
        self.prepare_checked(app)
    }

    /// [`Replay::prepare`] for a replay already checked (a stream's header is checked with the
    /// whole file when the stream opens).
    fn prepare_checked(&self, app: &mut impl SimulationHost) -> Result<(), ReplayError> {
        if app.ticks_done() != self.start_tick {
            return Err(ReplayError::StartTick {
                expected: self.start_tick,
                found: app.ticks_done(),
            });
        }
        if let (Some(recorded), Some(loaded)) =
            (&self.scene, app.world().get_resource::<SceneIdentity>())
            && recorded != loaded
        {
            return Err(ReplayError::Scene {
                recorded: recorded.clone(),
                loaded: loaded.clone(),
            });
        }
        if let Some(recorded) = &self.layout {
            let layout = crate::state::registry::sim_registry(app.world()).layout();
            if let Some(difference) = layout.first_difference(recorded, "the replay") {
                return Err(ReplayError::Layout { difference });
            }
        }
        app.world_mut().resource_mut::<RandomSeed>().0 = self.seed;
        // From now on every tick's outside results come from the recording: playback never
        // calls out, and what the game pushes meanwhile never enters.
        if let Some(queue) = app.world().get_resource::<OutsideQueue>() {
            queue.play_recorded(&self.outside);
        }
        Ok(())
    }

    /// Plays the frame at `cursor` into `app` and checks the hashes of its ticks. The frame runs
    /// exactly the ticks it ran when recorded, whatever pause, time scale or cap decided them then
    /// (the recording holds the real delta, not the speed). Leaves `TimeControl`'s cap at the
    /// frame's tick count, and its pause and time scale as they were.
    pub fn play_frame(
        &self,
        app: &mut impl SimulationHost,
        cursor: &mut PlaybackCursor,
    ) -> Result<(), ReplayError> {
        self.play_frame_checked(app, cursor, true)
    }

    /// [`Replay::play_frame`], checking the hashes only when `check`.
    fn play_frame_checked(
        &self,
        app: &mut impl SimulationHost,
        cursor: &mut PlaybackCursor,
        check: bool,
    ) -> Result<(), ReplayError> {
        let Some(frame) = self.frames.get(cursor.frame) else {
            return Ok(());
        };
        if let Some(input) = &frame.input {
            app.set_frame_input(input.clone());
        }
        let next = self
            .frames
            .get(cursor.frame + 1)
            .map_or(self.end_tick(), |f| f.start_tick);
        let recorded_ticks = next.saturating_sub(frame.start_tick).min(u32::MAX as u64) as u32;
        let delta = Duration::from_nanos(frame.real_delta_ns);
        // The recorded session may have been paused or running at another speed; playback runs
        // at normal speed and owes the accumulator what the frame's ticks need, so the frame runs
        // exactly its recorded ticks (the cap stops it running more).
        let (paused, time_scale) = {
            let world = app.world_mut();
            let step = world.resource::<TickAccumulator>().step();
            let mut control = world.resource_mut::<TimeControl>();
            let kept = (control.paused, control.time_scale);
            control.max_ticks_per_frame = recorded_ticks;
            control.paused = false;
            control.time_scale = 1.0;
            let adds = control.scaled(delta);
            let needed = step.saturating_mul(recorded_ticks);
            let mut accumulator = world.resource_mut::<TickAccumulator>();
            if accumulator.pending.saturating_add(adds) < needed {
                accumulator.pending = needed - adds;
            }
            kept
        };
        let before = app.ticks_done();
        app.step_frame(delta);
        {
            let mut control = app.world_mut().resource_mut::<TimeControl>();
            control.paused = paused;
            control.time_scale = time_scale;
        }
        cursor.frame += 1;
        if !check {
            return Ok(());
        }
        let hashes = app.world().resource::<StateHashes>();
        for tick in before + 1..=app.ticks_done() {
            let computed = hashes.get(tick);
            match self.hashes.get(cursor.checked) {
                Some((recorded_tick, recorded))
                    if *recorded_tick == tick
                        && computed.is_some_and(|c| recorded_hash_matches(recorded, c)) => {}
                Some((_, recorded)) => {
                    return Err(ReplayError::Diverged {
                        tick,
                        recorded: recorded.clone(),
                        computed: computed
                            .map(|c| recorded_form(recorded, c))
                            .unwrap_or_default(),
                        blame: None,
                    });
                }
                None => {
                    return Err(ReplayError::Length {
                        recorded: self.hashes.len(),
                        played: cursor.checked + 1,
                    });
                }
            }
            cursor.checked += 1;
        }
        Ok(())
    }
}

/// Plays `replay` into `app` (built with the same scene and set up, at the replay's start tick):
/// writes the seed in place, feeds every frame's delta and input, and checks every tick's hash.
pub fn play_replay(replay: &Replay, app: &mut impl SimulationHost) -> Result<(), ReplayError> {
    play_replay_reporting(replay, app, None, &mut |_| {}).map(|_| ())
}

/// [`play_replay`], stopping after the frame that completes tick `until` when one is given (the
/// first minutes of a long recording), and calling `progress` with the number of hashes checked
/// after every frame (a caller that shows progress picks which calls to show: by tick, never by
/// clock). Returns how many recorded hashes were checked; only a replay played to its end must
/// have had every hash checked.
pub fn play_replay_reporting(
    replay: &Replay,
    app: &mut impl SimulationHost,
    until: Option<u64>,
    progress: &mut dyn FnMut(usize),
) -> Result<usize, ReplayError> {
    replay.prepare(app)?;
    let mut whole = Some(Cow::Borrowed(replay));
    play_windows(
        replay,
        replay.hashes.len(),
        &mut || Ok(whole.take()),
        app,
        (until, progress),
    )
}

/// [`play_replay_reporting`] from a [`ReplayStream`]: the replay is played a window of
/// [`STREAM_WINDOW`] ticks at a time, so what playback holds beside the app is the file's bytes,
/// the replay's details and outside entries and one window's frames and hashes, however long the
/// recording. The same ticks are played and checked, and a divergence is named and blamed the
/// same way, as when the replay is read whole.
pub fn play_replay_stream(
    stream: &mut ReplayStream,
    app: &mut impl SimulationHost,
    until: Option<u64>,
    progress: &mut dyn FnMut(usize),
) -> Result<usize, ReplayError> {
    let total = usize::try_from(stream.total_ticks()).unwrap_or(usize::MAX);
    let (header, windows) = stream.split();
    header.prepare_checked(app)?;
    play_windows(
        header,
        total,
        &mut || Ok(windows.next_window(STREAM_WINDOW)?.map(Cow::Owned)),
        app,
        (until, progress),
    )
}

/// The ticks of a [`ReplayStream`]'s window in [`play_replay_stream`]: a minute at 60 Hz.
pub const STREAM_WINDOW: u64 = 3600;

/// The next window of a replay being played, or `None` after the last.
type NextWindow<'w, 'r> = dyn FnMut() -> Result<Option<Cow<'r, Replay>>, ReplayError> + 'w;

/// Plays the windows `next` gives, in order, into `app` (prepared for the replay whose header
/// is `header`, holding `total` hashes), checking every tick's hash, until tick `until`.
fn play_windows<'r>(
    header: &Replay,
    total: usize,
    next: &mut NextWindow<'_, 'r>,
    app: &mut impl SimulationHost,
    (until, progress): (Option<u64>, &mut dyn FnMut(usize)),
) -> Result<usize, ReplayError> {
    let cap = app.world().resource::<TimeControl>().max_ticks_per_frame;
    // Hashes checked in the windows before this one.
    let mut checked = 0;
    let mut stopped_early = false;
    while let Some(window) = next()? {
        let mut cursor = PlaybackCursor::default();
        while cursor.frame < window.frames.len() {
            if until.is_some_and(|until| app.ticks_done() >= until) {
                stopped_early = true;
                break;
            }
            match window.play_frame(app, &mut cursor) {
                Ok(()) => {}
                Err(ReplayError::Diverged {
                    tick,
                    recorded,
                    computed,
                    ..
                }) => {
                    let blame = blame(header, (&window, &mut cursor), next, app, tick);
                    return Err(ReplayError::Diverged {
                        blame: blame.map(Box::new),
                        tick,
                        recorded,
                        computed,
                    });
                }
                Err(ReplayError::Length { played, .. }) => {
                    return Err(ReplayError::Length {
                        recorded: total,
                        played: checked + played,
                    });
                }
                Err(other) => return Err(other),
            }
            progress(checked + cursor.checked);
        }
        checked += cursor.checked;
        if stopped_early {
            break;
        }
    }
    app.world_mut()
        .resource_mut::<TimeControl>()
        .max_ticks_per_frame = cap;
    if !stopped_early && checked != total {
        return Err(ReplayError::Length {
            recorded: total,
            played: checked,
        });
    }
    Ok(checked)
}

/// After a divergence at `tick`, plays on (without checking hashes, into the windows after this
/// one when it must) to the recording's first state detail at or after it, and compares
/// playback's state there with it. `None` when the recording holds no such detail, or
/// playback's frames do not end on its tick.
fn blame<'r>(
    header: &Replay,
    (window, cursor): (&Replay, &mut PlaybackCursor),
    next: &mut NextWindow<'_, 'r>,
    app: &mut impl SimulationHost,
    tick: u64,
) -> Option<ReplayBlame> {
    let recorded = header.details.iter().find(|d| d.tick >= tick)?;
    let mut later: Option<Cow<'r, Replay>> = None;
    loop {
        let playing = later.as_deref().unwrap_or(window);
        while app.ticks_done() < recorded.tick && cursor.frame < playing.frames.len() {
            playing.play_frame_checked(app, cursor, false).ok()?;
        }
        if app.ticks_done() >= recorded.tick {
            break;
        }
        later = Some(next().ok()??);
        *cursor = PlaybackCursor::default();
    }
    if app.ticks_done() != recorded.tick {
        return None;
    }
    let played = StateDetail::capture(app.world_mut(), recorded.tick);
    Some(ReplayBlame {
        tick: recorded.tick,
        difference: compare_details(recorded, &played),
    })
}

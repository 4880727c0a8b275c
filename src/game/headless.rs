//! Headless runs: a project stepped with no window, from a tick count and an input script, a
//! replay, a session replay or under a synctest, and [`simulate_project_headless`] for tools and
//! tests that want every tick's hash.
//!
//! This module must never open a window or read a clock.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bevy::prelude::World;

use super::build_app::build_app;
use super::error::GameError;
use super::finish::{RunRecord, SharedDetails, SharedHashes, finish_run, taken};
use super::project::Project;
use super::result::ResultChannel;
use crate::determinism::session_replay::{SessionReplay, prepare_players};
use crate::determinism::{SyncTest, play_replay_stream};
use crate::engine::App;
use crate::record::{RecordingAppExt, StateDetail, StateHashReport};
use crate::runtime::{InputScript, RuntimeInput, TickAccumulator, TickStampedInput, TimeControl};
use crate::state::StateHashes;

/// Loads `project`'s main scene, adds the game's systems with `add_game`, runs `ticks` fixed ticks
/// headless (with `script`'s input when given), and returns the app and every tick's
/// `(tick, hash)`.
pub fn simulate_project_headless(
    project: &Project,
    ticks: u64,
    script: Option<&InputScript>,
    add_game: impl FnOnce(&mut App),
) -> Result<(App, Vec<(u64, u64)>), GameError> {
    let mut app = build_app(project)?;
    add_game(&mut app);
    let hashes = collect_hashes(&mut app);
    app.setup()?;
    run_headless(&mut app, ticks, script);
    Ok((app, taken(&hashes)))
}

/// Adds a tick hook that keeps every tick's hash (`StateHashes` keeps only the latest 1024).
pub fn collect_hashes(app: &mut App) -> SharedHashes {
    let hashes = SharedHashes::default();
    collect_hashes_into(app, hashes.clone());
    hashes
}

/// [`collect_hashes`] into `sink`. A tick run again after a rollback replaces the hashes from
/// that tick on, so the list always holds the ticks as finally simulated.
pub fn collect_hashes_into(app: &mut App, sink: SharedHashes) {
    app.add_tick_hook(move |world: &mut World, _tick: u64| {
        if let Some(&last) = world.resource::<StateHashes>().cpu.back()
            && let Ok(mut all) = sink.lock()
        {
            while all.last().is_some_and(|&(tick, _)| tick >= last.0) {
                all.pop();
            }
            all.push(last);
        }
    });
}

/// Runs `ticks` fixed ticks without a window, feeding `script`'s frames (then one tick per frame
/// with the script's last input). Stops exactly at `ticks`: a frame that would pass it runs only
/// the ticks left, and the rest of its time waits. GPU ticks still queued at the end are
/// simulated before it returns.
pub fn run_headless(app: &mut App, ticks: u64, script: Option<&InputScript>) {
    run_headless_with(app, ticks, script, |_, _| {});
}

/// [`run_headless`], calling `after_frame(app, frames_run)` after every frame.
pub fn run_headless_with(
    app: &mut App,
    ticks: u64,
    script: Option<&InputScript>,
    after_frame: impl FnMut(&mut App, u64),
) {
    let frames = script
        .into_iter()
        .flat_map(|s| s.frames())
        .map(|(ticks, input)| (ticks, Some(input)));
    run_frames(app, ticks, frames, after_frame);
}

/// Runs `ticks` ticks in `frames` of `(ticks of real time, input to set)`, then one tick a frame
/// with no new input: the loop under [`run_headless_with`] and [`run_headless_uneven`].
fn run_frames(
    app: &mut App,
    ticks: u64,
    mut frames: impl Iterator<Item = (f64, Option<RuntimeInput>)>,
    mut after_frame: impl FnMut(&mut App, u64),
) {
    let step = app.fixed_step();
    let mut frames_run = 0u64;
    let mut last_input: Option<RuntimeInput> = None;
    while app.ticks() < ticks {
        let (frame_ticks, input) = frames.next().unwrap_or((1.0, None));
        if let Some(input) = input
            && last_input.as_ref() != Some(&input)
        {
            app.set_input(input.clone());
            last_input = Some(input);
        }
        let left = ticks - app.ticks();
        let world = app.world_mut();
        let mut control = world.resource_mut::<TimeControl>();
        let cap = control.max_ticks_per_frame;
        control.max_ticks_per_frame = cap.min(left.min(u32::MAX as u64) as u32);
        app.update(step.mul_f64(frame_ticks));
        app.world_mut()
            .resource_mut::<TimeControl>()
            .max_ticks_per_frame = cap;
        frames_run += 1;
        after_frame(app, frames_run);
    }
    // GPU ticks the frame budget left queued: simulate them, so the run ends with every tick's
    // GPU hash and the GPU bodies where the last tick left them.
    crate::physics::gpu::finish_gpu_ticks(app.world_mut());
}

/// The frame lengths of the uneven pacing, in ticks: repeated, they cover every tick.
pub const UNEVEN_PACING: [f64; 5] = [3.0, 0.5, 0.5, 0.0, 5.0];

/// Frames of 3, 1/2, 1/2, 0 and 5 ticks, repeated to cover `ticks`, with no input: the same
/// simulation must come out as with one tick a frame.
pub fn uneven_frames(ticks: u64) -> InputScript {
    let cycles = ticks / 9 + 1;
    InputScript {
        format_version: crate::runtime::input_script::INPUT_SCRIPT_VERSION,
        frames: (0..cycles)
            .flat_map(|_| UNEVEN_PACING)
            .map(|ticks| crate::runtime::input_script::ScriptFrames {
                repeat: 1,
                ticks,
                input: None,
                hold: Default::default(),
            })
            .collect(),
    }
}

/// Runs `ticks` ticks in the uneven pacing's frames ([`UNEVEN_PACING`]) with `script`'s input
/// stamped by tick: every tick sees the input it sees when the script runs in its own frames, so
/// only what reads the frame clock or changes state between ticks can differ.
pub fn run_headless_uneven(app: &mut App, ticks: u64, script: Option<&InputScript>) {
    let world = app.world();
    let stamped = TickStampedInput::of(
        script,
        world.resource::<TickAccumulator>().clone(),
        world.resource::<TimeControl>(),
        ticks,
    );
    app.feed_input_by_tick(stamped);
    let frames = UNEVEN_PACING.into_iter().cycle().map(|ticks| (ticks, None));
    run_frames(app, ticks, frames, |_, _| {});
}

/// Plays the session replay in `file` headless, without the network
/// (`RUSTING_SESSION_REPLAY_PLAY`).
pub(crate) fn play_session_replay(
    project: &Project,
    add_game: &dyn Fn(&mut App),
    channel: &ResultChannel,
    file: &Path,
) -> Result<Option<String>, GameError> {
    let replay = SessionReplay::read(file)?;
    let mut app = build_app(project)?;
    prepare_players(&mut app, replay.players);
    add_game(&mut app);
    channel.track_ticks(&mut app);
    app.setup()?;
    channel.started();
    let ticks = replay.play(&mut app)?;
    Ok(Some(format!(
        "{}: the session replay matched all {ticks} confirmed ticks of its {} players",
        project.manifest.name, replay.players
    )))
}

/// Runs `ticks` ticks headless, one a frame, under a [`SyncTest`] that rolls back `distance` ticks
/// after every frame (`RUSTING_SYNCTEST`), feeding the script's inputs one frame each, and writes
/// the state-hash report to `report_path` when asked.
pub(crate) fn run_synctest_mode(
    project: &Project,
    add_game: &dyn Fn(&mut App),
    channel: &ResultChannel,
    (distance, ticks): (usize, u64),
    script: Option<&InputScript>,
    report_path: Option<&Path>,
) -> Result<Option<String>, GameError> {
    let hashes: SharedHashes = Arc::default();
    let make_app = || {
        let mut app = build_app(project).expect("the project built once already");
        add_game(&mut app);
        channel.track_ticks(&mut app);
        collect_hashes_into(&mut app, hashes.clone());
        app
    };
    // Check the app builds and starts before the synctest builds more of them.
    let mut first = build_app(project)?;
    add_game(&mut first);
    first.setup()?;
    channel.started();
    let mut synctest = SyncTest::new(make_app, distance);
    let mut inputs = script.into_iter().flat_map(|s| s.frames());
    let mut input = RuntimeInput::default();
    while synctest.app().ticks() < ticks {
        if let Some((_, next)) = inputs.next() {
            input = next;
        }
        synctest.advance(input.clone())?;
    }
    if let Some(path) = report_path {
        StateHashReport::capture(synctest.app_mut().world_mut(), &taken(&hashes)).write(path)?;
    }
    Ok(Some(format!(
        "{}: synctest passed: {ticks} ticks, each re-simulated {distance} ticks back from a snapshot",
        project.manifest.name
    )))
}

/// Plays the replay `RUSTING_REPLAY_PLAY` named into `app` (set up) headless, only its first
/// `ticks` ticks when given (`RUSTING_HEADLESS_TICKS`), writing the state-hash report to
/// `report_path` when asked.
pub(crate) fn play_replay_file(
    project: &Project,
    app: &mut App,
    super::options::ReplayIn { file, mut stream }: super::options::ReplayIn,
    ticks: Option<u64>,
    run: &RunRecord<'_>,
) -> Result<Option<String>, GameError> {
    let start = stream.header().start_tick;
    let total = stream.total_ticks();
    let until = ticks.map(|ticks| start.saturating_add(ticks));
    let to_play = ticks.map_or(total, |ticks| total.min(ticks));
    let mut progress =
        super::options::progress_lines(usize::try_from(to_play).unwrap_or(usize::MAX));
    let checked = play_replay_stream(&mut stream, app, until, &mut progress)
        .map_err(|error| GameError::ReplayIn { file, error })?;
    if let Some(path) = run.report_path {
        StateHashReport::capture(app.world_mut(), &taken(run.hashes)).write(path)?;
    }
    let name = &project.manifest.name;
    let recorded = usize::try_from(total).unwrap_or(usize::MAX);
    Ok(Some(if checked < recorded {
        format!(
            "{name}: replay matched its first {checked} recorded ticks (to tick {}; it holds \
             {recorded})",
            start + checked as u64
        )
    } else {
        format!("{name}: replay matched all {recorded} recorded ticks")
    }))
}

/// Runs `ticks` ticks of `app` (set up) headless with `script`'s input (in the uneven pacing's
/// frames when `uneven`), recording them to `replay_out` when asked, and ends the run.
pub(crate) fn run_ticks(
    project: &Project,
    app: &mut App,
    (ticks, uneven): (u64, bool),
    script: Option<&InputScript>,
    replay_out: Option<&Path>,
    run: &RunRecord<'_>,
) -> Result<Option<String>, GameError> {
    let Some(replay_path) = replay_out else {
        if uneven {
            run_headless_uneven(app, ticks, script);
        } else {
            run_headless(app, ticks, script);
        }
        return finish_run(project, app, run);
    };
    // Recording: every frame and hash is appended to a journal beside the replay as the run goes
    // (see `replay_journal`); at the end, or when the game panics, it becomes the replay.
    app.start_recording_to(replay_path)?;
    let played = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_headless(app, ticks, script);
    }));
    app.finish_recording_file()?;
    if let Err(panic) = played {
        std::panic::resume_unwind(panic);
    }
    finish_run(project, app, run)
}

/// The tick hooks of a run that every mode keeps: every tick's hash, the `RUSTING_DETAIL_TICKS`
/// details, and the lockstep protocol when `rusting determinism` asks for it.
pub(crate) fn add_run_hooks(
    app: &mut App,
    detail_ticks: Option<(u64, u64)>,
    lockstep: bool,
) -> (SharedHashes, SharedDetails) {
    let hashes = collect_hashes(app);
    let details = SharedDetails::default();
    if let Some((from, to)) = detail_ticks {
        let details = details.clone();
        app.add_tick_hook(move |world: &mut World, tick| {
            if (from..=to).contains(&tick)
                && let Ok(mut details) = details.lock()
            {
                details.push(StateDetail::capture(world, tick));
            }
        });
    }
    if lockstep {
        let mut lockstep = crate::determinism::lockstep::Lockstep::default();
        app.add_tick_hook(move |world: &mut World, tick| {
            lockstep.after_tick(world, tick);
        });
    }
    (hashes, details)
}

/// Hashes the world after every fixed system of tick `tick` and writes the hashes to `file` when
/// the tick has run (`RUSTING_SYSTEM_HASHES`). A file that cannot be written ends the run: the
/// caller is waiting for it.
pub(crate) fn write_system_hashes(app: &mut App, tick: u64, file: PathBuf) {
    let probe = app.hash_each_system_at(tick);
    app.add_tick_hook(move |world: &mut World, ran: u64| {
        if ran != tick {
            return;
        }
        let hash = world.resource::<StateHashes>().get(ran).unwrap_or_default();
        if let Some(hashes) = probe.hashes(hash)
            && let Err(error) = hashes.write(&file)
        {
            eprintln!("error: {}: {error}", file.display());
            std::process::exit(1);
        }
    });
}

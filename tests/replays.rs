//! Replays record frames, input and hashes, play back to the same hashes, and find changed input.

use std::path::Path;

use bevy::input::keyboard::KeyCode;
use rusting_engine::determinism::{play_replay, play_replay_stream};
use rusting_engine::game;
use rusting_engine::record::RecordingAppExt;
use rusting_engine::record::{Replay, ReplayError, ReplayStream};
use rusting_engine::runtime::RuntimeInput;

#[path = "support/starter.rs"]
mod support;

use support::starter_app;

/// 90 frames of uneven length (0, 1 or 2 ticks each, 140 ticks in all) with the hero running and
/// jumping once on frame 20.
fn record() -> (Replay, usize) {
    let mut app = starter_app();
    let step = app.fixed_step();
    app.start_recording();
    let jump_frame = 20;
    for frame in 0..90usize {
        let ticks = match (frame * 37) % 90 {
            k if k < 55 => 2,
            k if k < 85 => 1,
            _ => 0,
        };
        let mut input = RuntimeInput::default();
        input.set_axis("move_y", if frame < 60 { 1.0 } else { 0.0 });
        if frame == jump_frame {
            input.press(KeyCode::Space);
        }
        app.set_input(input);
        app.update(step * ticks);
    }
    (app.stop_recording().unwrap(), jump_frame)
}

/// The JSON form of a 90-frame recording plays back to the same 140 hashes; with the jump press
/// removed, playback reports the press frame's first tick (the input as sampled for a tick is part
/// of the hash, so the edit shows on the tick that first sees it). Fails if the recorder keeps one input per tick
/// instead of per frame, or if playback does not write the recorded input before each frame.
#[test]
fn replays_reproduce_recorded_hashes_and_find_changed_input() {
    let (replay, jump_frame) = record();
    assert_eq!(replay.frames.len(), 90);
    assert_eq!(replay.hashes.len(), 140);

    let json = replay.to_json();
    let parsed = Replay::from_json(&json, Path::new("session.replay.json")).unwrap();
    assert_eq!(parsed, replay);
    play_replay(&parsed, &mut starter_app()).expect("the recording plays back");

    let mut edited = parsed.clone();
    let pressed = edited.frames[jump_frame].input.as_mut().unwrap();
    assert!(pressed.is_pressed(KeyCode::Space));
    pressed.release(KeyCode::Space);
    let expected_tick = edited.frames[jump_frame].start_tick + 1;
    match play_replay(&edited, &mut starter_app()) {
        Err(ReplayError::Diverged { tick, .. }) => assert_eq!(tick, expected_tick),
        other => panic!("expected a divergence at tick {expected_tick}, got {other:?}"),
    }
}

/// Truncated or corrupt replays and other format versions get typed errors naming the place.
#[test]
fn broken_replays_get_typed_errors() {
    let (replay, _) = record();
    let json = replay.to_json();
    let file = Path::new("broken.replay.json");
    let truncated = &json[..json.len() / 2];
    assert!(matches!(
        Replay::from_json(truncated, file),
        Err(ReplayError::Corrupt { .. })
    ));
    let mut newer = replay.clone();
    newer.format_version = 99;
    assert!(matches!(
        Replay::from_json(&newer.to_json(), file),
        Err(ReplayError::Version { found: 99, .. })
    ));
    for cut in (0..json.len()).step_by(997) {
        let _ = Replay::from_json(&json[..cut], file);
    }
    let mut late = starter_app();
    let step = late.fixed_step();
    late.update(step);
    assert!(matches!(
        play_replay(&replay, &mut late),
        Err(ReplayError::StartTick {
            expected: 0,
            found: 1
        })
    ));
}

/// The compact form reads back to the same replay at about four bytes a tick (each hash's low 32
/// bits), and truncated or damaged bytes give errors, never a panic. Fails if a frame's tick count
/// or input is lost in the grouping, or if the hashes go back to eight bytes a tick.
#[test]
fn compact_replays_round_trip_and_reject_damage() {
    let (replay, _) = record();
    let compact = replay.to_compact().expect("contiguous hashes");
    let file = Path::new("session.rply");
    let back = rusting_engine::record::replay_compact::from_compact(&compact, file).unwrap();
    assert_eq!(back, replay.clone().with_short_hashes());
    // 90 deliberately uneven frames and three input changes: hashes, plus a few bytes a frame,
    // plus the layout of the game's state (a few kilobytes, once).
    let layout = serde_json::to_vec(replay.layout.as_ref().unwrap())
        .unwrap()
        .len()
        + 3;
    assert!(
        compact.len() < 140 * 4 + 90 * 6 + 600 + layout,
        "{} bytes for 140 ticks ({layout} of them the layout)",
        compact.len()
    );
    let without_layout = Replay {
        layout: None,
        ..replay.clone()
    };
    assert!((compact.len() - layout) * 3 < without_layout.to_json().len());
    play_replay(&back, &mut starter_app()).expect("the compact form plays back");
    for cut in 0..compact.len() {
        assert!(
            rusting_engine::record::replay_compact::from_compact(&compact[..cut], file).is_err()
        );
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..2000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut damaged = compact.clone();
        let at = (state % damaged.len() as u64) as usize;
        damaged[at] ^= 1 << (state >> 61);
        let _ = rusting_engine::record::replay_compact::from_compact(&damaged, file);
    }
}

/// A replay knows its scene: playing it into an app that holds another scene is refused by name.
#[test]
fn a_replay_of_another_scene_is_refused() {
    let (replay, _) = record();
    let recorded = replay
        .scene
        .clone()
        .expect("the starter's scene identity is recorded");
    assert_eq!(recorded.name, "scenes/main.scene.json");
    let fixture = Path::new("tests/scenes/crates.scene.json");
    let cooked = rusting_engine::scene::cook_file(fixture).unwrap();
    let mut other = rusting_engine::App::default();
    other.add_plugins(game::SimpleGamePlugin {
        identity: rusting_engine::scene::SceneIdentity::of("crates.scene.json", &cooked),
        scene: cooked,
    });
    other.setup().unwrap();
    match play_replay(&replay, &mut other) {
        Err(error @ ReplayError::Scene { .. }) => {
            assert!(
                error.to_string().contains("`scenes/main.scene.json`"),
                "{error}"
            );
        }
        other => panic!("expected a scene mismatch, got {other:?}"),
    }
}

/// 400 frames of one or two ticks, running back and forth and jumping every 50 frames.
fn record_long() -> Replay {
    let mut app = starter_app();
    let step = app.fixed_step();
    app.start_recording();
    for frame in 0..400usize {
        let mut input = RuntimeInput::default();
        input.set_axis("move_y", if (frame / 100) % 2 == 0 { 1.0 } else { -1.0 });
        input.set_axis("move_x", if (frame / 70) % 2 == 0 { 0.5 } else { -0.5 });
        if frame % 50 == 10 {
            input.press(KeyCode::Space);
        }
        app.set_input(input);
        app.update(step * (1 + (frame % 3 == 0) as u32));
    }
    app.stop_recording().unwrap()
}

/// The recorded hash of the tick a seek reached, and the one the app holds for it.
fn recorded_and_held(replay: &Replay, app: &rusting_engine::App) -> (String, String) {
    let tick = app.ticks();
    let recorded = replay
        .hashes
        .iter()
        .find(|(t, _)| *t == tick)
        .map(|(_, h)| h.clone())
        .unwrap();
    let held = app
        .world()
        .resource::<rusting_engine::state::StateHashes>()
        .get(tick)
        .map(|h| format!("{h:016x}"))
        .unwrap();
    (recorded, held)
}

/// Seeking the starter game back and forth (backward, forward within a snapshot's span, and
/// forward past a later snapshot) lands on states whose hashes are the recorded ones, and a
/// hash tampered after a snapshot is found when a seek re-simulates through it. Fails if a
/// restore misses state the next ticks read (the re-simulated hashes then differ), or if ticks
/// re-simulated after a restore are not checked against the recording.
#[test]
fn replays_of_the_starter_template_seek_through_snapshots() {
    use rusting_engine::determinism::ReplaySeeker;

    let replay = record_long();
    let end = replay.end_tick();
    assert!(end > 500);
    let mut seeker = ReplaySeeker::new(replay.clone(), 60, starter_app).unwrap();
    for target in [end, 100, 130, 470, 20, 350, 351, 0, end - 1] {
        let reached = seeker.seek(target).unwrap();
        assert!(
            reached >= target && reached <= target + 2,
            "{target} -> {reached}"
        );
        if reached > 0 {
            let (recorded, held) = recorded_and_held(&replay, seeker.app());
            assert_eq!(held, recorded, "seek to {target}");
        }
    }
    let snapshots = seeker.snapshot_ticks();
    assert!(snapshots.len() > 8, "{snapshots:?}");
    // The report's snapshot points are where the seeker snapshots.
    assert_eq!(
        snapshots,
        rusting_engine::determinism::snapshot_points(&replay, 60)
    );

    let tampered_tick = snapshots[4] + 5;
    let mut tampered = replay.clone();
    let entry = tampered
        .hashes
        .iter_mut()
        .find(|(t, _)| *t == tampered_tick)
        .unwrap();
    entry.1 = "0123456789abcdef".to_owned();
    let mut seeker = ReplaySeeker::new(tampered, 60, starter_app).unwrap();
    seeker.seek(tampered_tick - 3).unwrap();
    seeker.seek(10).unwrap();
    match seeker.seek(tampered_tick + 40) {
        Err(ReplayError::Diverged { tick, recorded, .. }) => {
            assert_eq!(tick, tampered_tick);
            assert_eq!(recorded, "0123456789abcdef");
        }
        other => panic!("expected the tampered tick {tampered_tick}, got {other:?}"),
    }
}

/// A replay turned into an input script and run headless gives the recorded hashes: the script
/// keeps every frame's tick count and input. Fails if the script spreads the recorded ticks
/// evenly instead (input then lands on other ticks).
#[test]
fn a_replay_as_an_input_script_reproduces_its_hashes() {
    let (replay, _) = record();
    let script = replay.to_input_script();
    let mut app = starter_app();
    let hashes = rusting_engine::game::headless::collect_hashes(&mut app);
    game::run_headless(&mut app, replay.end_tick(), Some(&script));
    let got: Vec<(u64, String)> = hashes
        .lock()
        .unwrap()
        .iter()
        .map(|&(tick, hash)| (tick, format!("{hash:016x}")))
        .collect();
    assert_eq!(got, replay.hashes);
}

/// The player, nudged by `1e-4` along x during tick 100 while recording only.
#[derive(bevy::prelude::Resource)]
struct Nudge;

fn nudge(
    nudge: Option<bevy::prelude::Res<Nudge>>,
    time: bevy::prelude::Res<rusting_engine::runtime::FrameTime>,
    mut bodies: bevy::prelude::Query<(&bevy::prelude::Name, &mut bevy::prelude::Transform)>,
) {
    if nudge.is_some() && time.fixed_tick == 99 {
        for (name, mut transform) in &mut bodies {
            if name.as_str() == "Player" {
                transform.translation.x += 1.0e-4;
            }
        }
    }
}

/// A recording made by a build that nudged the player during tick 100, played back by one that
/// does not: `REPLAY_DIVERGED` names tick 100 and, from the state detail the recording holds at
/// tick 7200 (one every two minutes), the entity `Player`, component `Transform` and field
/// `translation.x`, in the JSON and compact forms alike, and played a window at a time from a
/// `ReplayStream`. Fails if recordings stop holding state details, or playback stops at the
/// divergent tick without comparing the next one (or, from a stream, without playing on into the
/// windows after the divergent one).
#[test]
fn a_diverging_replay_names_the_entity_component_and_field() {
    use bevy::prelude::{FixedUpdate, IntoScheduleConfigs};
    use rusting_engine::runtime::SimSet;

    let with_nudge = |recording: bool| {
        let project =
            rusting_engine::game::project::Project::open(Path::new(support::STARTER)).unwrap();
        let mut app = game::build_app(&project).unwrap();
        app.add_plugins(support::starter_game::StarterGame);
        app.add_systems(FixedUpdate, nudge.after(SimSet::Tweens));
        if recording {
            app.world_mut().insert_resource(Nudge);
        }
        app.setup().unwrap();
        app
    };
    let mut app = with_nudge(true);
    app.start_recording();
    game::run_headless(&mut app, 7300, None);
    let replay = app.stop_recording().unwrap();
    let ticks: Vec<u64> = replay.details.iter().map(|d| d.tick).collect();
    assert_eq!(ticks, [7200]);
    let bytes = replay.to_compact().unwrap();
    let stream = || ReplayStream::from_bytes(bytes.clone(), Path::new("s.rply")).unwrap();
    let compact = Replay::load_bytes(&bytes, Path::new("s.rply")).unwrap();
    assert_eq!(compact, replay.clone().with_short_hashes());
    // Read whole as JSON and compact, and a window at a time (a minute each: the divergence is
    // in the first window, the detail in the third).
    let errors = [
        play_replay(&replay, &mut with_nudge(false)).unwrap_err(),
        play_replay(&compact, &mut with_nudge(false)).unwrap_err(),
        play_replay_stream(&mut stream(), &mut with_nudge(false), None, &mut |_| {}).unwrap_err(),
    ];
    for error in errors {
        let text = error.to_string();
        match &error {
            ReplayError::Diverged { tick, blame, .. } => {
                assert_eq!(*tick, 100, "{text}");
                let blame = blame.as_ref().expect("blamed at the next detail");
                assert_eq!(blame.tick, 7200);
                let difference = blame.difference.as_ref().expect("a field differs");
                assert_eq!(
                    difference.entity.as_ref().unwrap().name.as_deref(),
                    Some("Player")
                );
                assert_eq!(difference.component.as_deref(), Some("Transform"));
                assert_eq!(difference.field.as_ref().unwrap().path, "translation.x");
            }
            other => panic!("expected a divergence, got {other:?}"),
        }
        assert!(
            text.contains("at tick 7200, the recording's next state detail: entity `Player`"),
            "{text}"
        );
    }
    // The build that recorded it plays all three windows through, every hash checked, and
    // stops where it is asked to.
    let mut shown = Vec::new();
    let checked = play_replay_stream(&mut stream(), &mut with_nudge(true), None, &mut |done| {
        shown.push(done)
    })
    .unwrap();
    assert_eq!(checked, 7300);
    assert_eq!(shown.last(), Some(&7300));
    let checked = play_replay_stream(
        &mut stream(),
        &mut with_nudge(true),
        Some(3700),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(checked, 3700);
}

/// A session recorded while the time scale changes (double speed, quarter speed, a pause) plays
/// back to the same hashes in an app at normal speed: every recorded frame runs the ticks it ran
/// when recorded. Fails if playback lets the frame's real delta decide the tick count at its own
/// speed (at normal speed a double-speed frame then runs one tick instead of two, and the input
/// reaches other ticks).
#[test]
fn a_session_recorded_at_other_speeds_plays_back() {
    use rusting_engine::runtime::TimeControl;
    let mut app = starter_app();
    let step = app.fixed_step();
    app.start_recording();
    for frame in 0..120usize {
        let (scale, paused) = match frame {
            0..40 => (2.0, false),
            40..50 => (2.0, true),
            50..80 => (0.25, false),
            _ => (1.0, false),
        };
        {
            let mut control = app.world_mut().resource_mut::<TimeControl>();
            control.time_scale = scale;
            control.paused = paused;
        }
        let mut input = RuntimeInput::default();
        input.set_axis("move_y", if frame % 7 < 4 { 1.0 } else { -1.0 });
        input.set_axis("move_x", if frame % 11 < 5 { 1.0 } else { 0.0 });
        app.set_input(input);
        app.update(step);
    }
    let replay = app.stop_recording().unwrap();
    let ticks = replay.hashes.len();
    assert!(
        ticks > 120,
        "double speed ran more ticks than frames: {ticks}"
    );
    play_replay(&replay, &mut starter_app()).expect("the recording plays back at normal speed");
}

/// A small valid replay: three ticks of one frame each, from tick 0.
fn three_ticks() -> Replay {
    Replay {
        format_version: rusting_engine::record::replay::REPLAY_FORMAT_VERSION,
        engine_version: "0.1.0".into(),
        seed: 7,
        start_tick: 0,
        scene: None,
        frames: (0..3)
            .map(|tick| rusting_engine::record::ReplayFrame {
                real_delta_ns: 16_666_667,
                start_tick: tick,
                input: None,
            })
            .collect(),
        hashes: (1..=3).map(|tick| (tick, format!("{tick:016x}"))).collect(),
        details: Vec::new(),
        outside: Vec::new(),
        layout: None,
    }
}

/// What a replay's bytes give when read as `name`: the error's text.
fn refused(bytes: &[u8], name: &str) -> String {
    Replay::load_bytes(bytes, Path::new(name))
        .expect_err("over a limit")
        .to_string()
}

/// Every documented count and length in a replay (docs/formats.md) is refused past its limit,
/// naming the file, the place and the limit, in the JSON form, the compact form (before the
/// bytes it claims are taken) and the journal; a report's ticks and details likewise. The limits
/// themselves are allowed. Fails if any one check is dropped (each case is refused by that check
/// alone: the rest of its file is valid).
#[test]
fn every_replay_limit_is_refused_with_its_place() {
    use rusting_engine::record::replay::{
        MAX_ENGINE_VERSION_BYTES, MAX_INPUT_JSON_BYTES, MAX_REPLAY_TICKS,
    };
    use rusting_engine::record::replay_compact::write_varint;
    use rusting_engine::runtime::input_script::{MAX_AXIS_NAME_BYTES, MAX_INPUT_AXES};

    let json = |replay: &Replay| replay.to_json();
    assert!(Replay::load_bytes(&json(&three_ticks()), Path::new("ok.json")).is_ok());

    let mut long_engine = three_ticks();
    long_engine.engine_version = "9".repeat(MAX_ENGINE_VERSION_BYTES);
    assert!(Replay::load_bytes(&json(&long_engine), Path::new("ok.json")).is_ok());
    long_engine.engine_version.push('9');
    let text = refused(&json(&long_engine), "engine.json");
    assert!(
        text.contains("engine.json")
            && text.contains("engine_version")
            && text.contains("at most 64"),
        "{text}"
    );
    let text = refused(&long_engine.to_compact().unwrap(), "engine.rply");
    assert!(
        text.contains("engine.rply") && text.contains("an engine version of 65 bytes (at most 64)"),
        "{text}"
    );

    let axes = |count: usize, name_bytes: usize| {
        let mut replay = three_ticks();
        let mut input = RuntimeInput::default();
        for k in 0..count {
            let name = format!("{k:0>width$}", width = name_bytes);
            input.axes.insert(name, 0.5);
        }
        replay.frames[1].input = Some(input);
        replay
    };
    assert!(
        Replay::load_bytes(
            &json(&axes(MAX_INPUT_AXES, MAX_AXIS_NAME_BYTES)),
            Path::new("ok.json")
        )
        .is_ok()
    );
    let text = refused(&json(&axes(MAX_INPUT_AXES + 1, 4)), "axes.json");
    assert!(
        text.contains("frames[1].input") && text.contains("65 axes; an input holds at most 64"),
        "{text}"
    );
    let text = refused(
        &axes(1, MAX_AXIS_NAME_BYTES + 1).to_compact().unwrap(),
        "name.rply",
    );
    assert!(
        text.contains("frames[1].input") && text.contains("an axis name of 65 bytes"),
        "{text}"
    );

    // A compact file claiming more ticks than a replay holds, and an input longer than the
    // limit: refused from the number alone, before the bytes are looked for.
    let header = |hashes: u64, input: Option<u64>| {
        let mut out = b"RPLY".to_vec();
        out.extend_from_slice(&2u32.to_le_bytes());
        write_varint(&mut out, 0);
        out.extend_from_slice(&7u64.to_le_bytes());
        write_varint(&mut out, 0);
        out.push(0);
        write_varint(&mut out, 1);
        for field in [1, 16_666_667, 1] {
            write_varint(&mut out, field);
        }
        match input {
            Some(length) => {
                out.push(1);
                write_varint(&mut out, length);
            }
            None => {
                out.push(0);
                write_varint(&mut out, hashes);
            }
        }
        out
    };
    let text = refused(&header(MAX_REPLAY_TICKS + 1, None), "ticks.rply");
    assert!(
        text.contains("ticks.rply")
            && text.contains("100000001 hashes (a replay holds at most 100000000 ticks)"),
        "{text}"
    );
    let text = refused(&header(1, Some(MAX_INPUT_JSON_BYTES + 1)), "input.rply");
    assert!(
        text.contains("an input of 65537 bytes (at most 65536)") && text.contains("at byte"),
        "{text}"
    );

    // The journal checks the same length before it reads the bytes.
    let dir = std::env::temp_dir().join(format!("rusting-limits-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("s.rply");
    let recorder = rusting_engine::record::Recorder::journal(7, 0, None, None, &target).unwrap();
    drop(recorder);
    let journal = rusting_engine::record::replay_journal::journal_path(&target);
    let mut bytes = std::fs::read(&journal).unwrap();
    bytes.push(1);
    write_varint(&mut bytes, 16_666_667);
    write_varint(&mut bytes, 0);
    bytes.push(1);
    write_varint(&mut bytes, MAX_INPUT_JSON_BYTES + 1);
    let text = refused(&bytes, "s.rply.journal");
    assert!(
        text.contains("recording journal: an input of 65537 bytes (at most 65536)"),
        "{text}"
    );

    // A report's details are limited to what a run details.
    let report = dir.join("r.json");
    let details: Vec<String> = (1..=601)
        .map(|tick| format!(r#"{{"tick": {tick}, "entities": [], "resources": []}}"#))
        .collect();
    std::fs::write(
        &report,
        format!(
            r#"{{"format_version": 2, "ticks": [], "entities": [], "details": [{}]}}"#,
            details.join(",")
        ),
    )
    .unwrap();
    let text = rusting_engine::record::StateHashReport::load(&report)
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("r.json: /details: 601 details; a run details at most 600 ticks"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

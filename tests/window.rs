//! Playing in a window (feature `window-tests`): each test runs `rusting-play` on a small project
//! in a window on the display the tests run under (CI: `xvfb-run`, rendering on lavapipe).
//!
//! bevy's window loop runs once per process, so every windowed run is a child process.

#![cfg(feature = "window-tests")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rusting_engine::record::{Replay, StateHashReport, compare_reports};

/// The test project: the starter's course with the engine's components only.
fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/window_game")
}

fn script() -> String {
    project()
        .join("input/walkthrough.json")
        .display()
        .to_string()
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rusting-window-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn require_display() {
    assert!(
        std::env::var_os("DISPLAY").is_some(),
        "the window tests need a display: run them under `xvfb-run -a`"
    );
}

/// `rusting-play` on the test project with `vars` set and every other `RUSTING_*` variable
/// removed.
fn play_command(vars: &[(&str, String)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rusting-play"));
    command.arg(project());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("RUSTING_") {
            command.env_remove(name);
        }
    }
    // The Vulkan device is lavapipe here; keep Mesa's compiled pipelines between runs.
    command.env(
        "MESA_SHADER_CACHE_DIR",
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/mesa-shader-cache"),
    );
    // Small windows: lavapipe draws every pixel on the CPU (about 0.1 s a frame at this size on
    // two cores, six times that at 1280x720).
    command.env("RUSTING_WINDOW_SIZE", "480x270");
    for (name, value) in vars {
        command.env(name, value);
    }
    command
}

fn play(vars: &[(&str, String)]) -> Output {
    let output = play_command(vars).output().expect("rusting-play runs");
    assert!(
        output.status.success(),
        "rusting-play failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// The same scripted frames played in a window and headless give the same hash on every one of
/// 240 ticks. Fails if anything the window adds writes simulation state (say, `place_visuals`
/// writing the interpolated pose into the body's `Transform` instead of its visual's), or if the
/// windowed frame step feeds the script's frames differently from the headless run.
#[test]
fn a_windowed_run_matches_the_headless_run() {
    require_display();
    let dir = scratch("match");
    let windowed = dir.join("windowed.json");
    let headless = dir.join("headless.json");
    let shown = play(&[
        ("RUSTING_WINDOW_TICKS", "240".into()),
        ("RUSTING_INPUT_SCRIPT", script()),
        ("RUSTING_STATE_HASH_OUT", path(&windowed)),
    ]);
    let summary = String::from_utf8_lossy(&shown.stdout);
    assert!(summary.contains("ran 240 ticks in a window"), "{summary}");
    play(&[
        ("RUSTING_HEADLESS_TICKS", "240".into()),
        ("RUSTING_INPUT_SCRIPT", script()),
        ("RUSTING_STATE_HASH_OUT", path(&headless)),
    ]);
    let windowed = StateHashReport::load(&windowed).unwrap();
    let headless = StateHashReport::load(&headless).unwrap();
    assert_eq!(windowed.ticks.len(), 240);
    assert_eq!(
        compare_reports(&windowed, &headless),
        None,
        "the windowed and headless runs differ"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A screenshot of the window after 150 scripted ticks is not blank and shows the player's blue
/// near the centre, where the follow camera looks. Fails if nothing is drawn (one flat colour), or
/// if the camera loses the player (no player colour in the middle of the picture).
#[test]
fn the_window_shows_the_scene() {
    require_display();
    let dir = scratch("shot");
    let shot = dir.join("shot.png");
    play(&[
        ("RUSTING_WINDOW_TICKS", "150".into()),
        ("RUSTING_INPUT_SCRIPT", script()),
        ("RUSTING_SCREENSHOT", path(&shot)),
        ("RUSTING_WINDOW_SIZE", "640x360".into()),
    ]);
    assert_shows_the_player(&shot);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Asserts the screenshot at `shot` is not blank and shows the player's blue near the centre,
/// where the follow camera looks.
fn assert_shows_the_player(shot: &Path) {
    let Picture {
        pixels,
        width,
        height,
        channels,
    } = Picture::read(shot);
    let at = |x: usize, y: usize| {
        let i = (y * width + x) * channels;
        (pixels[i], pixels[i + 1], pixels[i + 2])
    };
    let mut colours = std::collections::BTreeSet::new();
    for y in (0..height).step_by(8) {
        for x in (0..width).step_by(8) {
            let (r, g, b) = at(x, y);
            colours.insert((r / 16, g / 16, b / 16));
        }
    }
    assert!(
        colours.len() >= 12,
        "the picture is nearly blank: {} colours",
        colours.len()
    );
    let blue = |(r, g, b): (u8, u8, u8)| b > 80 && u16::from(b) > u16::from(r) + 40 && b > g;
    let mut player = 0;
    for y in height * 3 / 8..height * 5 / 8 {
        for x in width * 3 / 8..width * 5 / 8 {
            if blue(at(x, y)) {
                player += 1;
            }
        }
    }
    assert!(
        player >= 200,
        "the player's blue is not near the centre ({player} pixels); see {}",
        shot.display()
    );
}

/// The pixels of the PNG at `shot` that are the debug views' magenta (red and blue high, green
/// low), which nothing in the test scene is.
fn magenta_pixels(shot: &Path) -> usize {
    let picture = Picture::read(shot);
    picture
        .pixels
        .chunks(picture.channels)
        .filter(|p| p[0] > 150 && p[2] > 150 && p[1] < 110)
        .count()
}

/// A screenshot's pixels, row by row, `channels` bytes each.
struct Picture {
    pixels: Vec<u8>,
    width: usize,
    height: usize,
    channels: usize,
}

impl Picture {
    /// The PNG at `shot` (a panic when it was not saved).
    fn read(shot: &Path) -> Picture {
        let decoder = png::Decoder::new(std::io::BufReader::new(
            std::fs::File::open(shot).expect("the screenshot was saved"),
        ));
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut pixels).unwrap();
        pixels.truncate(info.buffer_size());
        Picture {
            pixels,
            width: info.width as usize,
            height: info.height as usize,
            channels: info.color_type.samples(),
        }
    }
}

/// With `RUSTING_DEBUG_DRAW=velocities` the window draws the jumping player's velocity as a
/// magenta line over the scene (tick 128: in the air, moving up and to the left); without it
/// nothing magenta is drawn. Fails if the window does not draw `DebugLines` (no magenta), or if
/// the view draws when not asked for.
#[test]
fn the_window_draws_debug_lines() {
    require_display();
    let dir = scratch("lines");
    let shot = |name: &str, views: &str| {
        let shot = dir.join(name);
        play(&[
            ("RUSTING_WINDOW_TICKS", "128".into()),
            ("RUSTING_INPUT_SCRIPT", script()),
            ("RUSTING_SCREENSHOT", path(&shot)),
            ("RUSTING_WINDOW_SIZE", "640x360".into()),
            ("RUSTING_DEBUG_DRAW", views.into()),
        ]);
        shot
    };
    let with = shot("with.png", "velocities");
    let without = shot("without.png", "");
    let (drawn, plain) = (magenta_pixels(&with), magenta_pixels(&without));
    assert!(
        drawn >= 8 && plain == 0,
        "magenta pixels: {drawn} with the velocity view, {plain} without; see {}",
        dir.display()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A windowed run with live input, started in the background.
struct LiveRun {
    child: std::process::Child,
    /// The game's log (its stderr) so far.
    log: std::sync::Arc<std::sync::Mutex<String>>,
    reader: std::thread::JoinHandle<()>,
}

impl LiveRun {
    /// Starts `rusting-play` with `vars`, waits until the game says its first frame is on screen
    /// (the renderer compiles its pipelines first, which takes longer on a loaded machine), then
    /// until keys typed into the window arrive: the first ones can be lost while the window is
    /// still taking the focus, so F5 (time scale 1, which changes nothing) is typed until the
    /// game logs it.
    fn start(vars: &[(&str, String)]) -> LiveRun {
        let mut child = play_command(vars)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        let reader = {
            let log = log.clone();
            std::thread::spawn(move || {
                use std::io::BufRead;
                for line in std::io::BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    let mut log = log.lock().unwrap();
                    log.push_str(&line);
                    log.push('\n');
                }
            })
        };
        let live = LiveRun { child, log, reader };
        assert!(
            live.wait_for("F1 pauses", Duration::from_secs(120)),
            "the windowed game never said its window was up:\n{}",
            live.log()
        );
        for _ in 0..20 {
            type_into_window("window_game", &[("F5", Duration::from_millis(50))]);
            if live.wait_for("time scale 1", Duration::from_millis(500)) {
                return live;
            }
        }
        panic!("no key typed into the window arrived:\n{}", live.log());
    }

    /// The log so far.
    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Whether the log says `text` within `timeout`.
    fn wait_for(&self, text: &str, timeout: Duration) -> bool {
        let started = Instant::now();
        while started.elapsed() < timeout {
            if self.log().contains(text) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// Waits for the run to end (two minutes at most): its status, stdout and stderr.
    fn finish(mut self) -> (std::process::ExitStatus, String, String) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut out = String::new();
                use std::io::Read;
                self.child
                    .stdout
                    .take()
                    .unwrap()
                    .read_to_string(&mut out)
                    .unwrap();
                let log = self.log.clone();
                self.reader.join().unwrap();
                let log = log.lock().unwrap().clone();
                return (status, out, log);
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the windowed run did not end"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// xdotool `keys` (key names, each held for `hold`) typed into the window titled `title`.
fn type_into_window(title: &str, keys: &[(&str, Duration)]) {
    let found = Command::new("xdotool")
        .args(["search", "--sync", "--onlyvisible", "--name", title])
        .output()
        .expect("xdotool runs (the install script adds it)");
    let window = String::from_utf8_lossy(&found.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(!window.is_empty(), "no window titled {title}");
    let xdotool = |args: &[&str]| {
        let _ = Command::new("xdotool")
            .args(args)
            .stdout(Stdio::null())
            .status();
    };
    xdotool(&["windowfocus", "--sync", &window]);
    for (key, hold) in keys {
        xdotool(&["keydown", "--window", &window, key]);
        std::thread::sleep(*hold);
        xdotool(&["keyup", "--window", &window, key]);
        std::thread::sleep(Duration::from_millis(150));
    }
}

/// A live session under the display receives real key presses (xdotool) while it records, with
/// the time-control keys (double speed, pause, one step, resume, normal speed) among them; the
/// replay holds the game's presses (and none of the time-control keys) and plays back headless to
/// the same hashes. Fails if the window's keys never reach the simulation's input (the replay
/// holds no press), if a tap that begins and ends within one frame is lost (`capture_devices`
/// reading only the keys still held), if a time-control key leaks into it, or if the windowed frame step records
/// frames that do not reproduce its ticks (say, a paused frame recorded as running ticks).
#[test]
fn a_recorded_windowed_session_replays_headless() {
    require_display();
    let dir = scratch("record");
    let replay = dir.join("session.rply");
    let live = LiveRun::start(&[
        ("RUSTING_WINDOW_TICKS", "420".into()),
        ("RUSTING_REPLAY_OUT", path(&replay)),
    ]);
    type_into_window(
        "window_game",
        &[
            ("w", Duration::from_millis(900)),
            ("space", Duration::from_millis(200)),
            // A tap: down and up within one frame (a frame takes about 0.1 s here).
            ("a", Duration::ZERO),
            // Double speed, then pause for a moment, step one tick, resume and back to normal
            // speed: the replay must still reproduce every tick.
            ("F4", Duration::from_millis(100)),
            ("d", Duration::from_millis(600)),
            ("F1", Duration::from_millis(100)),
            ("F2", Duration::from_millis(100)),
            ("F1", Duration::from_millis(100)),
            ("F5", Duration::from_millis(100)),
        ],
    );
    let output = live.finish();
    assert!(output.0.success(), "{}{}", output.1, output.2);
    for said in [
        "time scale 2",
        "paused (F2 steps one tick)",
        "resumed",
        "time scale 1",
    ] {
        assert!(
            output.2.contains(said),
            "the time-control keys did not all arrive (no `{said}`):\n{}",
            output.2
        );
    }
    let recorded = Replay::load(&replay).unwrap();
    let pressed: std::collections::BTreeSet<String> = recorded
        .frames
        .iter()
        .filter_map(|f| f.input.as_ref())
        .flat_map(|input| input.pressed.iter().map(|k| format!("{k:?}")))
        .collect();
    assert!(
        pressed.contains("KeyW") && pressed.contains("KeyD") && pressed.contains("KeyA"),
        "the recording holds no key the window received: {pressed:?}"
    );
    assert!(
        !pressed.iter().any(|k| k.starts_with('F')),
        "a time-control key reached the simulation: {pressed:?}"
    );
    assert_eq!(recorded.hashes.len(), 420);
    let played = play(&[("RUSTING_REPLAY_PLAY", path(&replay))]);
    assert!(
        String::from_utf8_lossy(&played.stdout).contains("replay matched all 420 recorded ticks"),
        "{}",
        String::from_utf8_lossy(&played.stdout)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A synctest with k = 4 in a window: every scripted tick is rolled back four ticks and
/// re-simulated in place inside the window's frames, the run passes, its hashes are those of the
/// same synctest run headless, and the window keeps drawing (a screenshot at the end shows the
/// player where the camera looks). Fails if a rollback in the window does not restore in place
/// (the re-simulated ticks then differ: `SYNCTEST_FAILED`), if the window's frame step runs ticks
/// of its own beside the synctest's (the hashes then differ from the headless synctest's), or if
/// a restore takes the camera or the visuals away (the screenshot then misses the player).
#[test]
fn a_windowed_game_rolls_back_in_place() {
    require_display();
    let dir = scratch("synctest");
    let windowed = dir.join("windowed.json");
    let headless = dir.join("headless.json");
    let shot = dir.join("shot.png");
    let shown = play(&[
        ("RUSTING_SYNCTEST", "4".into()),
        ("RUSTING_WINDOW_TICKS", "120".into()),
        ("RUSTING_INPUT_SCRIPT", script()),
        ("RUSTING_STATE_HASH_OUT", path(&windowed)),
        ("RUSTING_SCREENSHOT", path(&shot)),
        ("RUSTING_WINDOW_SIZE", "640x360".into()),
    ]);
    let summary = String::from_utf8_lossy(&shown.stdout);
    assert!(
        summary.contains(
            "synctest passed in a window: 120 ticks, each re-simulated 4 ticks back from a snapshot"
        ),
        "{summary}"
    );
    play(&[
        ("RUSTING_SYNCTEST", "4".into()),
        ("RUSTING_HEADLESS_TICKS", "120".into()),
        ("RUSTING_INPUT_SCRIPT", script()),
        ("RUSTING_STATE_HASH_OUT", path(&headless)),
    ]);
    let windowed = StateHashReport::load(&windowed).unwrap();
    let headless = StateHashReport::load(&headless).unwrap();
    assert_eq!(windowed.ticks.len(), 120);
    assert_eq!(
        compare_reports(&windowed, &headless),
        None,
        "the windowed and headless synctests differ"
    );
    assert_shows_the_player(&shot);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The replay viewer shows a recorded session in the window and seeks with the keys (forward,
/// back, to the start) by restoring snapshots in place, pauses and steps, and plays on to the
/// recording's end: every tick it shows matches its recorded hash, and its hashes are the
/// recording's. Fails if the viewer lets the window's live input reach the simulation (the
/// recorded input is then overwritten and playback diverges: `REPLAY_DIVERGED`), or if a seek
/// does not restore in place (a seek back then shows ticks past the target).
#[test]
fn the_replay_viewer_seeks_in_place() {
    require_display();
    let dir = scratch("viewer");
    let replay = dir.join("session.rply");
    let recorded = dir.join("recorded.json");
    let viewed = dir.join("viewed.json");
    play(&[
        ("RUSTING_HEADLESS_TICKS", "300".into()),
        ("RUSTING_INPUT_SCRIPT", script()),
        ("RUSTING_REPLAY_OUT", path(&replay)),
        ("RUSTING_STATE_HASH_OUT", path(&recorded)),
    ]);
    let live = LiveRun::start(&[
        ("RUSTING_REPLAY_PLAY", path(&replay)),
        ("RUSTING_REPLAY_VIEW", "1".into()),
        ("RUSTING_WINDOW_TICKS", "300".into()),
        ("RUSTING_STATE_HASH_OUT", path(&viewed)),
    ]);
    type_into_window(
        "window_game",
        &[
            ("Right", Duration::from_millis(100)),
            ("Right", Duration::from_millis(100)),
            ("Left", Duration::from_millis(100)),
            ("F1", Duration::from_millis(100)),
            ("F2", Duration::from_millis(100)),
            ("Home", Duration::from_millis(100)),
            ("F1", Duration::from_millis(100)),
            // Keys the game binds: the viewer must not pass them on.
            ("d", Duration::from_millis(500)),
            ("space", Duration::from_millis(200)),
        ],
    );
    let (status, out, log) = live.finish();
    assert!(status.success(), "{out}{log}");
    assert!(
        out.contains("viewed the replay to tick 300 of 300 (4 seeks)"),
        "{out}{log}"
    );
    for said in ["paused", "resumed", "replay: at tick 0"] {
        assert!(
            log.contains(said),
            "the viewer did not say `{said}`:\n{log}"
        );
    }
    let recorded = StateHashReport::load(&recorded).unwrap();
    let viewed = StateHashReport::load(&viewed).unwrap();
    assert_eq!(viewed.ticks.len(), 300);
    assert_eq!(
        compare_reports(&recorded, &viewed),
        None,
        "the viewer's hashes differ from the recording's"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

//! Replays of the starter game: size per minute and playback speed against real time, measured in
//! one run; then a simulated hour recorded through the journal (memory, bytes written, the worst
//! time one frame spends recording). Run with `cargo bench --bench replay`.

use std::path::Path;
use std::time::{Duration, Instant};

use rusting_engine::determinism::play_replay;
use rusting_engine::game;
use rusting_engine::record::RecordingAppExt;
use rusting_engine::runtime::InputScript;

#[path = "../tests/support/starter.rs"]
mod support;

use support::starter_app as starter;

/// How many times playback and the detail capture are timed.
const RUNS: usize = 5;

fn main() {
    let script = InputScript::load(Path::new(
        "crates/rusting/templates/starter/input/walkthrough.json",
    ))
    .unwrap();
    let ticks = 7200; // two minutes at 60 Hz: one state detail
    let mut app = starter();
    app.start_recording();
    game::run_headless(&mut app, ticks, Some(&script));
    let replay = app.stop_recording().unwrap();
    let json = replay.to_json();
    let compact = replay.to_compact().expect("contiguous hashes");
    let minute_of_play = ticks as f64 / 60.0 / 60.0;
    // Medians of several runs each: one playback is a few tenths of a second and one capture a
    // fraction of a millisecond, both short enough for a busy neighbour to move a single reading.
    let median = |mut times: Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    let mut detail = None;
    let detail_ms = median(
        (0..RUNS)
            .map(|_| {
                let started = Instant::now();
                detail = Some(rusting_engine::record::StateDetail::capture(
                    app.world_mut(),
                    ticks,
                ));
                started.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    );
    let detail_bytes = serde_json::to_vec(&detail).unwrap().len();
    let seconds = median(
        (0..RUNS)
            .map(|_| {
                let mut fresh = starter();
                let start = Instant::now();
                play_replay(&replay, &mut fresh).expect("the recording plays back");
                start.elapsed().as_secs_f64()
            })
            .collect(),
    );
    let simulated = ticks as f64 / 60.0;
    println!(
        "starter, {ticks} ticks: replay JSON {:.1} KB, compact {:.1} KB per minute of play; playback {seconds:.3} s for {simulated:.0} s of play, {:.0}x real time; a state detail {:.1} KB, captured in {detail_ms:.3} ms (playback and capture: medians of {RUNS} runs)",
        json.len() as f64 / 1024.0 / minute_of_play,
        compact.len() as f64 / 1024.0 / minute_of_play,
        simulated / seconds,
        detail_bytes as f64 / 1024.0
    );
    soak(&script);
}

/// A field of `/proc/self/<file>` (`VmRSS:` in kB, `wchar:` in bytes).
fn proc_field(file: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/self/{file}"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix(field))
                .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// One simulated hour of the starter game (its walkthrough, then idle) recorded to a compact
/// replay through the journal: memory growth, bytes written against the final size, and the
/// worst time the recorder took in one frame (its calls timed directly: the frame, its tick's
/// hash, the end of the frame).
fn soak(script: &InputScript) {
    let dir = std::env::temp_dir().join(format!("rusting-soak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("hour.rply");
    let hour = 216_000;
    let mut app = starter();
    let rss_before = proc_field("status", "VmRSS:");
    let written_before = proc_field("io", "wchar:");
    app.start_recording_to(&target).unwrap();
    let started = Instant::now();
    game::run_headless(&mut app, hour, Some(script));
    let simulated = started.elapsed().as_secs_f64();
    let rss_growth = proc_field("status", "VmRSS:").saturating_sub(rss_before);
    // The peak resident size while the file is finished, against the size before: the kernel's
    // high-water mark, reset first (`clear_refs` 5).
    let rss_running = proc_field("status", "VmRSS:");
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    app.finish_recording_file().unwrap();
    let finish_growth = proc_field("status", "VmHWM:").saturating_sub(rss_running);
    let written = proc_field("io", "wchar:") - written_before;
    let final_bytes = std::fs::metadata(&target).unwrap().len();
    // The recorder's own cost per frame, for the same hour of frames.
    let journal = dir.join("calls.rply");
    let mut recorder =
        rusting_engine::record::Recorder::journal(7, 0, None, None, &journal).unwrap();
    let input = rusting_engine::runtime::RuntimeInput::default();
    let mut worst = Duration::ZERO;
    for frame in 0..hour {
        let started = Instant::now();
        recorder.frame(Duration::from_nanos(16_666_667), frame, &input);
        recorder.tick(frame + 1, frame.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        recorder.end_frame();
        worst = worst.max(started.elapsed());
    }
    recorder.finish().unwrap();
    println!(
        "one simulated hour of the starter recorded ({simulated:.1} s to simulate): memory +{rss_growth} kB \
         while recording, +{finish_growth} kB at most while finishing the file, {:.2} MB written \
         for a {:.2} MB replay ({:.2}x); the recorder's worst frame {:.3} ms",
        written as f64 / 1e6,
        final_bytes as f64 / 1e6,
        written as f64 / final_bytes as f64,
        worst.as_secs_f64() * 1e3
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! Recording in constant time and memory. (Its own test binary with one test: it reads the
//! process's memory and write counters.)

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rusting_engine::record::Recorder;
use rusting_engine::record::replay_journal::journal_path;
use rusting_engine::runtime::RuntimeInput;

/// A field of `/proc/self/<file>` (`VmRSS:` in kB, `wchar:` in bytes).
fn proc_field(file: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/self/{file}"))
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/{file}"))
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rusting-recording-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One simulated hour at 60 Hz (216,000 frames of one tick, input changing every half second)
/// recorded through the journal: memory grows by less than 1 MB, the bytes written are the
/// journal (appended, never rewritten) plus the final replay, within three times the final
/// size, and no frame's recording takes long (99.9% under 0.2 ms; the worst frame is measured in
/// `cargo bench --bench replay`, where nothing else runs). Fails if recording keeps frames in
/// memory, or rewrites the replay while it runs (an hour wrote 3.1 GB for a 1.7 MB file).
#[test]
fn recording_appends_in_constant_time() {
    let dir = scratch("hour");
    let target = dir.join("hour.rply");
    let mut recorder = Recorder::journal(7, 0, None, None, &target).unwrap();
    let mut input = RuntimeInput::default();
    let step = Duration::from_nanos(16_666_667);
    let rss_before = proc_field("status", "VmRSS:");
    let written_before = proc_field("io", "wchar:");
    let (mut slow, mut worst) = (0usize, Duration::ZERO);
    for frame in 0..216_000u64 {
        if frame % 30 == 0 {
            input
                .axes
                .insert("move_x".to_owned(), ((frame / 30) % 3) as f32 - 1.0);
        }
        let started = Instant::now();
        recorder.frame(step, frame, &input);
        recorder.tick(frame + 1, frame.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        recorder.end_frame();
        let took = started.elapsed();
        worst = worst.max(took);
        slow += usize::from(took > Duration::from_micros(200));
    }
    let rss_growth_kb = proc_field("status", "VmRSS:").saturating_sub(rss_before);
    let journal_bytes = std::fs::metadata(journal_path(&target)).unwrap().len();
    let replay = recorder.finish().unwrap();
    let written = proc_field("io", "wchar:") - written_before;
    let final_bytes = std::fs::metadata(&target).unwrap().len();
    println!(
        "one hour: memory +{rss_growth_kb} kB while recording, journal {journal_bytes} B, final \
         {final_bytes} B, written {written} B; {slow} frames over 0.2 ms, worst {worst:?}"
    );
    assert_eq!(replay.hashes.len(), 216_000);
    assert!(
        !journal_path(&target).exists(),
        "the journal is removed once finished"
    );
    assert!(rss_growth_kb < 1024, "memory grew {rss_growth_kb} kB");
    assert!(
        written < 3 * final_bytes,
        "{written} bytes written for a {final_bytes}-byte replay"
    );
    assert!(slow <= 216, "{slow} frames took over 0.2 ms to record");
    std::fs::remove_dir_all(&dir).unwrap();
}

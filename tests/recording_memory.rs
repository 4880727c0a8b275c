//! Finishing a recording into a compact replay takes memory that does not grow with the
//! recording's length. This binary counts every allocation (its own global allocator), so it holds
//! this one test alone: another test running beside it would count too.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rusting_engine::determinism::STREAM_WINDOW;
use rusting_engine::jobs::OutsideEntry;
use rusting_engine::record::replay_compact::to_compact;
use rusting_engine::record::replay_journal::{from_journal, journal_path};
use rusting_engine::record::{
    ComponentDetail, EntityDetail, Recorder, Replay, ReplayStream, StateDetail,
};
use rusting_engine::runtime::RuntimeInput;

/// The system allocator, counting the bytes allocated now and the most ever at once.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = NOW.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is passed on to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            grew(new_size - layout.size());
        } else {
            NOW.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes held at once while `f` runs, beyond those held when it started.
fn peak_growth<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = NOW.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let value = f();
    (value, PEAK.load(Ordering::Relaxed).saturating_sub(before))
}

/// A state detail of twenty entities with a few fields each, at `tick`.
fn detail(tick: u64) -> StateDetail {
    let component = |name: &str, k: u64| ComponentDetail {
        name: name.to_owned(),
        hash: format!("{:016x}", k.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        fields: (0..6)
            .map(|f| {
                (
                    format!("field{f}"),
                    format!("{}", (k * 7 + f) as f32 * 0.25),
                )
            })
            .collect(),
    };
    StateDetail {
        tick,
        entities: (0..20)
            .map(|id| EntityDetail {
                sim_id: id,
                name: Some(format!("Body {id}")),
                scene_id: Some(id + 100),
                hash: format!("{:016x}", id ^ tick),
                components: vec![
                    component("Transform", id),
                    component("RigidBody", id + tick),
                ],
            })
            .collect(),
        resources: vec![component("FrameTime", tick)],
        gpu: None,
    }
}

/// An hour of frames at 60 Hz (216,000 ticks) recorded through the journal, with what a real
/// session brings: uneven real deltas (so few frames group), input changes, rollbacks that
/// re-record ticks, a state detail every two minutes and results from outside. Finishing it into
/// a compact replay grows memory by less than 2 MB, and gives byte for byte the compact file that
/// reading the journal whole and writing it gives; reading the replay whole is shown beside it
/// (tens of megabytes), and reading it a window at a time (`ReplayStream`, what a headless
/// playback reads) takes the file's bytes and one window, and gives the same frames and hashes.
/// Fails if finishing reads the journal into a `Replay` (about 40 MB), or collects the frames or
/// hashes, if a pass keeps a record a later rewind voids, or if the stream makes the frames or
/// hashes past its window.
#[test]
fn finishing_a_long_recording_stays_in_bounded_memory() {
    let dir = std::env::temp_dir().join(format!("rusting-finish-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("hour.rply");
    let mut recorder = Recorder::journal(7, 0, None, None, &target).unwrap();
    let mut input = RuntimeInput::default();
    let mut tick = 0u64;
    let hour = 216_000u64;
    let mut frame = 0u64;
    while tick < hour {
        frame += 1;
        if frame.is_multiple_of(600) {
            input.axes.insert("move_x".into(), (frame % 3) as f32 - 1.0);
        }
        if frame.is_multiple_of(5_000) && tick > 3 {
            // A rollback of three ticks, re-recorded with other hashes.
            tick -= 3;
            recorder.rewind(tick);
        }
        let delta = Duration::from_nanos(16_666_667 + (frame % 5) * 1_000);
        recorder.frame(delta, tick, &input);
        if frame.is_multiple_of(900) {
            recorder.outside(
                tick + 1,
                &[OutsideEntry {
                    channel: "leaderboard".into(),
                    bytes: frame.to_le_bytes().to_vec(),
                }],
            );
        }
        tick += 1;
        recorder.tick(tick, tick.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ frame);
        if recorder.detail_due(tick) {
            recorder.detail(detail(tick));
        }
        recorder.end_frame();
    }
    let journal = std::fs::read(journal_path(&target)).unwrap();
    let expected = {
        let whole = from_journal(&journal, Path::new("hour.rply.journal")).unwrap();
        assert_eq!(whole.hashes.len() as u64, hour);
        assert_eq!(whole.details.len(), 30);
        assert!(whole.outside.len() > 200);
        to_compact(&whole).unwrap()
    };
    drop(journal);
    let (written, growth) = peak_growth(|| recorder.finish_file().unwrap().unwrap());
    let (whole, whole_growth) = peak_growth(|| Replay::load(&target).unwrap());
    // Playback reads the replay a window at a time: what it holds is the file's bytes, the
    // details and outside entries, and one window; and the windows are the whole replay.
    let (windows, stream_growth) = peak_growth(|| {
        let mut stream = ReplayStream::open(&target).unwrap();
        assert_eq!(stream.total_ticks(), hour);
        assert_eq!(stream.header().details[..], whole.details[..]);
        assert_eq!(stream.header().outside[..], whole.outside[..]);
        let (mut frames, mut hashes, mut windows) = (0, 0, 0);
        while let Some(window) = stream.split().1.next_window(STREAM_WINDOW).unwrap() {
            assert_eq!(window.start_tick, whole.frames[frames].start_tick);
            assert_eq!(
                window.frames[..],
                whole.frames[frames..][..window.frames.len()]
            );
            assert_eq!(
                window.hashes[..],
                whole.hashes[hashes..][..window.hashes.len()]
            );
            frames += window.frames.len();
            hashes += window.hashes.len();
            windows += 1;
        }
        assert_eq!((frames, hashes), (whole.frames.len(), whole.hashes.len()));
        windows
    });
    assert_eq!(windows, 60);
    drop(whole);
    println!(
        "finishing {hour} ticks ({} frames, {} bytes): memory +{} kB; reading the replay whole: \
         +{} kB; reading it a window at a time: +{} kB",
        written.frames,
        written.bytes,
        growth / 1024,
        whole_growth / 1024,
        stream_growth / 1024
    );
    assert!(
        (stream_growth as u64) < written.bytes + (2 << 20),
        "reading a window at a time took {} kB (the file is {} kB)",
        stream_growth / 1024,
        written.bytes / 1024
    );
    assert_eq!(written.ticks, hour);
    assert_eq!(std::fs::read(&target).unwrap(), expected);
    assert!(!journal_path(&target).exists(), "the journal is removed");
    assert!(
        growth < 2 << 20,
        "finishing took {} kB more memory (at most 2048)",
        growth / 1024
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

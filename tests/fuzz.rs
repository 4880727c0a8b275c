//! Fuzzing every parser on stable Rust: project files, scenes, input scripts, JSON and compact
//! replays, recording journals, state-hash reports and state details.
//!
//! Each target first reads its regression corpus (`tests/fuzz_corpus/<target>/`: the crafted
//! files that once panicked, hung or ate memory), then, for its time budget, inputs made from real
//! files: byte mutations (bit flips, boundary bytes, inserted, deleted, repeated and spliced
//! runs, truncation), JSON-aware mutations (a random node replaced by a boundary number, a huge
//! or empty value, another type, an array repeated), and, for the binary forms, inputs generated
//! from their structure. The rule for every input: the parser returns `Ok` or an error, never a
//! panic, within [`INPUT_SECONDS`] (a watchdog aborts the process otherwise, naming the target and
//! iteration) and within [`MEMORY_LIMIT`] bytes live (the allocator refuses more, which aborts).
//!
//! `RUSTING_FUZZ_SECONDS` sets each target's budget (default 2; CI runs 30). The inputs come from a
//! seeded generator (`RUSTING_FUZZ_SEED`, default fixed), so a failure is reproduced by running the
//! target again with the printed seed; `RUSTING_FUZZ_SAVE=1` writes every input to
//! `target/fuzz/<target>.current` before it is parsed, which names the input that aborted.

use rusting_engine::jobs::{OutsideEntry, OutsideTick};
use rusting_engine::record::replay_compact::write_varint;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rusting_engine::game::project::Project;
use rusting_engine::record::RecordingAppExt;
use rusting_engine::record::replay_journal::{from_journal, journal_path};
use rusting_engine::record::{Recorder, Replay, StateDetail, StateHashReport};
use rusting_engine::runtime::InputScript;
use serde_json::Value;

#[path = "support/starter.rs"]
mod support;

#[path = "support/fuzzing.rs"]
mod fuzzing;

use fuzzing::{Rng, budget, crafted_ticks, seed};

/// The most bytes the whole test process may hold at once.
const MEMORY_LIMIT: usize = 512 << 20;

/// The longest one input may take.
const INPUT_SECONDS: u64 = 5;

/// An allocator that refuses to hold more than [`MEMORY_LIMIT`] bytes.
struct Limited;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to `System`; only the byte count is kept beside it.
unsafe impl GlobalAlloc for Limited {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size() > MEMORY_LIMIT {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            return std::ptr::null_mut();
        }
        // SAFETY: as `GlobalAlloc::alloc`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as `GlobalAlloc::dealloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Limited = Limited;

/// The inputs in flight, for the watchdog: `(target, iteration, started at in ms)`.
static IN_FLIGHT: Mutex<Vec<(&'static str, u64, u64)>> = Mutex::new(Vec::new());

/// Milliseconds since the watchdog started.
fn now_ms() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// Starts, once, a thread that aborts the process when an input runs past [`INPUT_SECONDS`].
fn watchdog() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        now_ms();
        std::thread::spawn(|| {
            loop {
                std::thread::sleep(Duration::from_millis(200));
                let now = now_ms();
                let stuck = IN_FLIGHT.lock().ok().and_then(|flight| {
                    flight
                        .iter()
                        // An input may have started after `now` was read.
                        .find(|(_, _, since)| now.saturating_sub(*since) > INPUT_SECONDS * 1000)
                        .copied()
                });
                if let Some((target, iteration, _)) = stuck {
                    eprintln!(
                        "fuzz target `{target}`: input {iteration} ran past {INPUT_SECONDS} s (seed \
                         {}); rerun with RUSTING_FUZZ_SAVE=1 to keep it",
                        seed()
                    );
                    std::process::abort();
                }
            }
        });
    });
}

/// Numbers at the edges: where arithmetic overflows, rounds to nothing or allocates too much.
const BOUNDARY_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1e39",
    "-1e39",
    "1e22",
    "4e9",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "1e-45",
    "1e10",
    "0.5",
    "10000000",
    "9007199254740993",
    "-0",
];

/// The largest input a JSON mutation builds: the size of a long real file.
const MAX_INPUT: usize = 4 << 20;

/// A byte-level mutation of `input`, splicing from `other`.
fn mutate_bytes(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(8) {
            0 if !out.is_empty() => {
                let k = at.min(out.len() - 1);
                out[k] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let k = at.min(out.len() - 1);
                out[k] = [0x00, 0xff, 0x7f, 0x80, b'9', b'"', b'{', b'['][rng.below(8)];
            }
            2 => {
                let bytes: Vec<u8> = (0..1 + rng.below(8)).map(|_| rng.next() as u8).collect();
                out.splice(at..at, bytes);
            }
            3 if !out.is_empty() => {
                let end = (at + 1 + rng.below(32)).min(out.len());
                out.drain(at.min(end)..end);
            }
            4 if !out.is_empty() => {
                let start = at.min(out.len() - 1);
                let end = (start + 1 + rng.below(64)).min(out.len());
                let run = out[start..end].to_vec();
                for _ in 0..1 + rng.below(16) {
                    out.splice(start..start, run.iter().copied());
                }
            }
            5 if !other.is_empty() => {
                let from = rng.below(other.len());
                let end = (from + 1 + rng.below(256)).min(other.len());
                out.splice(at..at, other[from..end].iter().copied());
            }
            6 => out.truncate(at),
            _ => {
                let number = BOUNDARY_NUMBERS[rng.below(BOUNDARY_NUMBERS.len())];
                out.splice(at..at, number.bytes());
            }
        }
    }
    out
}

/// One step down a JSON value.
enum Step {
    Index(usize),
    Key(String),
}

/// A random node of `value`, mutably, walking down at most `depth` levels.
fn random_node<'a>(rng: &mut Rng, value: &'a mut Value, depth: usize) -> &'a mut Value {
    let mut path = Vec::new();
    let mut at: &Value = value;
    for _ in 0..depth {
        if rng.chance(3) {
            break;
        }
        match at {
            Value::Array(items) if !items.is_empty() => {
                let k = rng.below(items.len());
                path.push(Step::Index(k));
                at = &items[k];
            }
            Value::Object(map) if !map.is_empty() => {
                let (key, next) = map.iter().nth(rng.below(map.len())).expect("a key");
                path.push(Step::Key(key.clone()));
                at = next;
            }
            _ => break,
        }
    }
    let mut node = value;
    for step in path {
        node = match (node, step) {
            (Value::Array(items), Step::Index(k)) => &mut items[k],
            (Value::Object(map), Step::Key(key)) => map.get_mut(&key).expect("the key is there"),
            _ => unreachable!("the path was walked on this value"),
        };
    }
    node
}

/// A JSON-aware mutation of `input`; byte mutation when it is not JSON.
fn mutate_json(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_slice::<Value>(input) else {
        return mutate_bytes(rng, input, other);
    };
    for _ in 0..1 + rng.below(3) {
        let node = random_node(rng, &mut value, 8);
        *node = match rng.below(7) {
            0 => {
                let number = BOUNDARY_NUMBERS[rng.below(BOUNDARY_NUMBERS.len())];
                serde_json::from_str(number).unwrap_or(Value::Null)
            }
            1 => Value::String("x".repeat(rng.below(4096))),
            2 => Value::Null,
            3 => Value::Array(Vec::new()),
            // Repeated, but kept to the size of a real file (a few megabytes).
            4 => match node.take() {
                Value::Array(items) if !items.is_empty() => {
                    let each = serde_json::to_vec(&items).map_or(1, |b| b.len()) / items.len();
                    let length = (items.len() * (1 + rng.below(200))).min(MAX_INPUT / each.max(1));
                    Value::Array(items.iter().cycle().take(length.max(1)).cloned().collect())
                }
                other => {
                    let size = serde_json::to_vec(&other).map_or(1, |b| b.len());
                    let copies = (1 + rng.below(4)).min(MAX_INPUT / size.max(1)).max(1);
                    Value::Array(vec![other; copies])
                }
            },
            5 => Value::Object(serde_json::Map::new()),
            _ => Value::Bool(rng.chance(2)),
        };
    }
    let text = serde_json::to_vec(&value).expect("a value serializes");
    if rng.chance(4) {
        mutate_bytes(rng, &text, other)
    } else {
        text
    }
}

/// A number a generator picks: small most of the time, sometimes at an edge.
fn some_number(rng: &mut Rng) -> u64 {
    match rng.below(6) {
        0 => 0,
        1 => u64::MAX - rng.below(3) as u64,
        2 => 1 << rng.below(64),
        _ => rng.below(100) as u64,
    }
}

/// A compact replay generated from its structure, with numbers at the edges.
fn generate_compact(rng: &mut Rng) -> Vec<u8> {
    let mut out = b"RPLY".to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    write_varint(&mut out, 1);
    out.push(b'x');
    out.extend_from_slice(&rng.next().to_le_bytes());
    write_varint(&mut out, some_number(rng));
    out.push(0);
    let groups = rng.below(6);
    write_varint(
        &mut out,
        if rng.chance(8) {
            some_number(rng)
        } else {
            groups as u64
        },
    );
    for _ in 0..groups {
        write_varint(&mut out, some_number(rng));
        write_varint(&mut out, some_number(rng));
        write_varint(&mut out, some_number(rng));
        out.push(0);
    }
    let hashes = rng.below(20) as u64;
    write_varint(
        &mut out,
        if rng.chance(8) {
            some_number(rng)
        } else {
            hashes
        },
    );
    for _ in 0..hashes {
        out.extend_from_slice(&rng.next().to_le_bytes());
    }
    if rng.chance(3) {
        // No details, then outside ticks.
        write_varint(&mut out, 0);
        let ticks = rng.below(3);
        write_varint(
            &mut out,
            if rng.chance(8) {
                some_number(rng)
            } else {
                ticks as u64
            },
        );
        for _ in 0..ticks {
            write_varint(&mut out, some_number(rng));
            generate_outside_entries(rng, &mut out);
        }
    }
    out
}

/// One tick's outside entries as the compact replay and the journal hold them: a count, then per
/// entry a channel and its bytes, with counts and lengths at the edges of their limits.
fn generate_outside_entries(rng: &mut Rng, out: &mut Vec<u8>) {
    let entries = rng.below(3);
    write_varint(
        out,
        if rng.chance(4) {
            some_number(rng)
        } else {
            entries as u64
        },
    );
    for _ in 0..entries {
        let channel = [0u64, 1, 64, 65][rng.below(4)];
        write_varint(out, channel);
        out.extend(std::iter::repeat_n(b'c', channel.min(8) as usize));
        write_varint(out, if rng.chance(3) { some_number(rng) } else { 3 });
        out.extend_from_slice(b"abc");
    }
}

/// A recording journal generated from its structure.
fn generate_journal(rng: &mut Rng, header: &[u8]) -> Vec<u8> {
    let mut out = header.to_vec();
    for _ in 0..rng.below(40) {
        match rng.below(7) {
            0 => {
                out.push(1);
                write_varint(&mut out, some_number(rng));
                write_varint(&mut out, some_number(rng));
                out.push(0);
            }
            1 => out.push(2),
            2 => {
                out.push(3);
                out.extend_from_slice(&rng.next().to_le_bytes());
            }
            3 => {
                out.push(4);
                write_varint(&mut out, some_number(rng));
            }
            4 => {
                out.push(5);
                write_varint(&mut out, some_number(rng));
                out.extend_from_slice(&rng.next().to_le_bytes());
            }
            5 => {
                // Outside entries: a tick, a count, then per entry a channel and its bytes, with
                // lengths at the edges of their limits.
                out.push(7);
                write_varint(&mut out, some_number(rng));
                generate_outside_entries(rng, &mut out);
            }
            _ => out.push(rng.next() as u8),
        }
    }
    out
}

/// How a target makes its next input.
#[derive(Clone, Copy)]
enum Shape {
    Json,
    Binary,
}

/// A parser under test: reads `bytes` (written to `file` first where it reads files).
type Parse = fn(&[u8], &Path);

/// A generator of inputs from a format's structure.
type Generate<'a> = &'a dyn Fn(&mut Rng) -> Vec<u8>;

/// Runs `target`: its corpus, then mutated and generated inputs for the budget.
fn fuzz(
    target: &'static str,
    seeds: &[Vec<u8>],
    shape: Shape,
    generate: Option<Generate>,
    parse: Parse,
) {
    watchdog();
    let scratch =
        std::env::temp_dir().join(format!("rusting-fuzz-{target}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let file = scratch.join(match shape {
        Shape::Json => "input.json",
        Shape::Binary => "input.rply",
    });
    let save = std::env::var_os("RUSTING_FUZZ_SAVE").is_some();
    let saved = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{target}.current"));
    let corpus_dir = Path::new("tests/fuzz_corpus").join(target);
    let mut corpus: Vec<(String, Vec<u8>)> = std::fs::read_dir(&corpus_dir)
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    corpus.sort();
    let iteration = AtomicU64::new(0);
    let run = |input: &[u8], what: &str| {
        let n = iteration.fetch_add(1, Ordering::Relaxed);
        if save {
            std::fs::write(&saved, input).unwrap();
        }
        IN_FLIGHT.lock().unwrap().push((target, n, now_ms()));
        let outcome = std::panic::catch_unwind(|| parse(input, &file));
        IN_FLIGHT.lock().unwrap().retain(|(t, _, _)| *t != target);
        if outcome.is_err() {
            let kept =
                PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{target}-panic-{n}"));
            std::fs::write(&kept, input).unwrap();
            panic!(
                "fuzz target `{target}` panicked on {what} (input {n}, seed {}); the input is in {}",
                seed(),
                kept.display()
            );
        }
    };
    for (name, bytes) in &corpus {
        run(bytes, &format!("the corpus file {name}"));
    }
    let mut rng = Rng(seed() ^ target.len() as u64 ^ (target.as_bytes()[0] as u64) << 32);
    let deadline = Instant::now() + budget();
    let mut count = 0u64;
    while Instant::now() < deadline {
        let base = &seeds[rng.below(seeds.len())];
        let other = &seeds[rng.below(seeds.len())];
        let input = match (generate, rng.below(4)) {
            (Some(generate), 0) => generate(&mut rng),
            (_, 1) => mutate_bytes(&mut rng, base, other),
            _ => match shape {
                Shape::Json => mutate_json(&mut rng, base, other),
                Shape::Binary => mutate_bytes(&mut rng, base, other),
            },
        };
        run(&input, "a generated input");
        count += 1;
    }
    println!(
        "fuzz target `{target}`: {} corpus files and {count} inputs",
        corpus.len()
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A starter session of 120 ticks with its walkthrough: the seeds of the replay targets.
fn recorded() -> (Replay, Vec<u8>, StateHashReport) {
    static SESSION: std::sync::OnceLock<(Replay, Vec<u8>, StateHashReport)> =
        std::sync::OnceLock::new();
    SESSION
        .get_or_init(|| {
            let script = InputScript::load(Path::new(
                "crates/rusting/templates/starter/input/walkthrough.json",
            ))
            .unwrap();
            let mut app = support::starter_app();
            app.start_recording();
            rusting_engine::game::run_headless(&mut app, 120, Some(&script));
            let mut replay = app.stop_recording().unwrap();
            // Outside results at two ticks, so every replay target's seeds hold them.
            let entry = |channel: &str, bytes: &[u8]| OutsideEntry {
                channel: channel.to_owned(),
                bytes: bytes.to_vec(),
            };
            replay.outside = vec![
                OutsideTick {
                    tick: 10,
                    entries: vec![entry("leaderboard", b"rank 1")],
                },
                OutsideTick {
                    tick: 50,
                    entries: vec![entry("asset:level-2", &[0, 1, 2]), entry("login", b"ok")],
                },
            ];
            let dir =
                std::env::temp_dir().join(format!("rusting-fuzz-seed-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let target = dir.join("seed.rply");
            let mut recorder =
                Recorder::journal(replay.seed, 0, replay.scene.clone(), None, &target).unwrap();
            for (k, frame) in replay.frames.iter().enumerate() {
                let next = replay
                    .frames
                    .get(k + 1)
                    .map_or(replay.end_tick(), |f| f.start_tick);
                let input = frame.input.clone().unwrap_or_default();
                recorder.frame(
                    Duration::from_nanos(frame.real_delta_ns),
                    frame.start_tick,
                    &input,
                );
                for tick in frame.start_tick + 1..=next {
                    if let Some(entered) = replay.outside.iter().find(|o| o.tick == tick) {
                        recorder.outside(tick, &entered.entries);
                    }
                    recorder.tick(tick, tick);
                }
                recorder.end_frame();
            }
            let journal = std::fs::read(journal_path(&target)).unwrap();
            drop(recorder);
            let _ = std::fs::remove_dir_all(&dir);
            let hashes: Vec<(u64, u64)> = replay
                .hashes
                .iter()
                .map(|(t, h)| (*t, u64::from_str_radix(h, 16).unwrap()))
                .collect();
            let mut report = StateHashReport::capture(app.world_mut(), &hashes);
            report.details = vec![StateDetail::capture(app.world_mut(), 120)];
            (replay, journal, report)
        })
        .clone()
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn fuzz_project_files() {
    fuzz(
        "project",
        &[read("crates/rusting/templates/starter/rusting.json")],
        Shape::Json,
        None,
        |bytes, file| {
            let dir = file.parent().unwrap();
            std::fs::write(dir.join("rusting.json"), bytes).unwrap();
            let _ = Project::open(dir);
        },
    );
}

#[test]
fn fuzz_scenes() {
    fuzz(
        "scene",
        &[read(
            "crates/rusting/templates/starter/scenes/main.scene.json",
        )],
        Shape::Json,
        None,
        |bytes, file| {
            if let Ok(text) = std::str::from_utf8(bytes)
                && let Ok(cooked) = rusting_engine::scene::cook(text, file)
            {
                let _ = cooked.to_bytes();
            }
        },
    );
}

#[test]
fn fuzz_input_scripts() {
    fuzz(
        "script",
        &[read(
            "crates/rusting/templates/starter/input/walkthrough.json",
        )],
        Shape::Json,
        None,
        |bytes, file| {
            std::fs::write(file, bytes).unwrap();
            if let Ok(script) = InputScript::load(file) {
                // A headless run stops at its tick count: read as far as it would.
                let _ = script.frames().take(100_000).count();
            }
        },
    );
}

#[test]
fn fuzz_json_replays() {
    let (replay, _, _) = recorded();
    fuzz(
        "replay_json",
        &[replay.to_json()],
        Shape::Json,
        None,
        |bytes, file| {
            if let Ok(replay) = Replay::from_json(bytes, file) {
                let _ = replay.to_input_script();
                let _ = replay.to_compact();
                let _ = rusting_engine::determinism::snapshot_points(&replay, 60);
            }
        },
    );
}

#[test]
fn fuzz_compact_replays() {
    let (replay, _, _) = recorded();
    fuzz(
        "replay_compact",
        &[replay.to_compact().unwrap()],
        Shape::Binary,
        Some(&generate_compact),
        |bytes, file| {
            std::fs::write(file, bytes).unwrap();
            if let Ok(replay) = Replay::load(file) {
                let _ = replay.to_input_script();
                let _ = replay.to_json();
            }
        },
    );
}

#[test]
fn fuzz_recording_journals() {
    let (_, journal, _) = recorded();
    // The header: magic, version, a varint length, then that many bytes of JSON.
    let (mut length, mut at) = (0usize, 8);
    while let Some(&byte) = journal.get(at) {
        length |= ((byte & 0x7f) as usize) << (7 * (at - 8));
        at += 1;
        if byte & 0x80 == 0 {
            break;
        }
    }
    let header = journal[..(at + length).min(journal.len())].to_vec();
    fuzz(
        "replay_journal",
        &[journal],
        Shape::Binary,
        Some(&move |rng: &mut Rng| generate_journal(rng, &header)),
        |bytes, file| {
            if let Ok(replay) = from_journal(bytes, file) {
                let _ = replay.to_compact();
            }
            std::fs::write(file, bytes).unwrap();
            let _ = Replay::load(file);
        },
    );
}

/// The report every fuzzed report is also compared with, both ways (what `hashes diff` does).
static BASE_REPORT: std::sync::OnceLock<StateHashReport> = std::sync::OnceLock::new();

/// A report from its structure: its ticks from [`crafted_ticks`], no entities.
fn generate_report(rng: &mut Rng) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "format_version": 2,
        "ticks": crafted_ticks(rng),
        "entities": [],
    }))
    .unwrap()
}

#[test]
fn fuzz_state_hash_reports() {
    let (_, _, report) = recorded();
    let bytes = serde_json::to_vec(&report).unwrap();
    let _ = BASE_REPORT.set(report);
    fuzz(
        "report",
        &[bytes],
        Shape::Json,
        Some(&generate_report),
        |bytes, file| {
            std::fs::write(file, bytes).unwrap();
            if let Ok(a) = StateHashReport::load(file) {
                let _ = rusting_engine::record::compare_reports(&a, &a);
                if let Some(base) = BASE_REPORT.get() {
                    let _ = rusting_engine::record::compare_reports(&a, base);
                    let _ = rusting_engine::record::compare_reports(base, &a);
                }
            }
        },
    );
}

#[test]
fn fuzz_state_details() {
    let (_, _, report) = recorded();
    let bytes = serde_json::to_vec(&report.details[0]).unwrap();
    fuzz("detail", &[bytes], Shape::Json, None, |bytes, file| {
        std::fs::write(file, bytes).unwrap();
        if let Ok(a) = StateDetail::load(file) {
            let _ = rusting_engine::record::compare_details(&a, &a);
        }
    });
}

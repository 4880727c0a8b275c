//! Damaged, crafted and hand-made input as a user might feed it: every case is refused with an
//! invalid-input exit code and a message naming the file and the place, in bounded time and
//! memory, and no output ever replaces an input or a special file.

mod support;

use rusting_engine::record::replay_compact::write_varint;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use support::{rusting, starter};

/// A fresh scratch directory for `tag`.
fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rusting-bad-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `rusting <args>` with its address space limited to `megabytes` and its processor time to a
/// minute (a loop that never ends is killed, not waited for); returns the output and how long it
/// took.
fn limited(megabytes: u64, args: &[&str]) -> (std::process::Output, Duration) {
    let started = Instant::now();
    let out = Command::new("prlimit")
        .arg(format!("--as={}", megabytes << 20))
        .arg("--cpu=60")
        .arg(env!("CARGO_BIN_EXE_rusting"))
        .args(args)
        .output()
        .expect("prlimit (util-linux) runs");
    (out, started.elapsed())
}

/// A compact replay: header (engine "x", seed 7, start tick 0, no scene), `groups` of
/// `(repeat, delta, ticks)` without input, then `hashes` hashes.
fn compact(groups: &[(u64, u64, u64)], hashes: u64) -> Vec<u8> {
    let mut out = b"RPLY".to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    write_varint(&mut out, 1);
    out.push(b'x');
    out.extend_from_slice(&7u64.to_le_bytes());
    write_varint(&mut out, 0);
    out.push(0);
    write_varint(&mut out, groups.len() as u64);
    for &(repeat, delta, ticks) in groups {
        write_varint(&mut out, repeat);
        write_varint(&mut out, delta);
        write_varint(&mut out, ticks);
        out.push(0);
    }
    write_varint(&mut out, hashes);
    for k in 0..hashes {
        out.extend_from_slice(&k.to_le_bytes());
    }
    out
}

/// A JSON replay with `frames` (`(start_tick, input)`) and hashes at `ticks`.
fn json_replay(frames: &[(u64, Option<&str>)], ticks: &[u64]) -> Vec<u8> {
    let frames: Vec<String> = frames
        .iter()
        .map(|(start, input)| match input {
            Some(input) => {
                format!(r#"{{"real_delta_ns": 16666667, "start_tick": {start}, "input": {input}}}"#)
            }
            None => format!(r#"{{"real_delta_ns": 16666667, "start_tick": {start}}}"#),
        })
        .collect();
    let hashes: Vec<String> = ticks
        .iter()
        .map(|t| format!(r#"[{t}, "{t:016x}"]"#))
        .collect();
    format!(
        r#"{{"format_version": 1, "engine_version": "x", "seed": 7, "start_tick": 0, "frames": [{}], "hashes": [{}]}}"#,
        frames.join(", "),
        hashes.join(", ")
    )
    .into_bytes()
}

/// The crafted replays that once panicked, hung or ate memory, and more: each is refused by
/// `replay info` with `REPLAY_INVALID` (exit code 3), a message naming the file and the place,
/// within 5 s and 512 MB of address space. Fails if a reader expands frames before checking what
/// the file claims against its size (10 million frames from 64 bytes took 867 MB), if frames may
/// run ticks the file holds no hash for (4e9 ticks hung `replay play`), if hash ticks may have gaps
/// (a gap was reported as "diverged" with two equal hashes), or if an unusable axis is accepted.
#[test]
fn crafted_replays_are_refused_in_bounded_time_and_memory() {
    let dir = scratch("replays");
    let input = |axis: &str| {
        format!(
            r#"{{"pressed": [], "axes": {{"move_x": {axis}}}, "look_delta": [0, 0], "viewport": [0, 0]}}"#
        )
    };
    let huge_axis = input("1e39");
    let absurd_axis = input("5e7");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "ten-million-frames.rply",
            compact(&[(10_000_000, 1, 0)], 0),
            "10000000 frames for 0 ticks",
        ),
        (
            "repeat-overflow.rply",
            compact(&[(1, 1, 1), (u64::MAX, 1, 0)], 1),
            "a bad repeat count",
        ),
        (
            "tick-overflow.rply",
            compact(&[(u64::MAX / 2, 1, 4)], 0),
            "a tick count that overflows",
        ),
        (
            "ticks-without-hashes.rply",
            compact(&[(2, 1, 2_000_000_000)], 0),
            "frames that run 4000000000 ticks, but 0 hashes",
        ),
        (
            "more-hashes.rply",
            compact(&[(1, 1, 1)], 2),
            "frames that run 1 ticks, but 2 hashes",
        ),
        (
            "hash-count.rply",
            {
                let mut b = compact(&[], 0);
                b.pop();
                write_varint(&mut b, 1 << 20);
                b
            },
            "more hashes than bytes",
        ),
        (
            "hash-limit.rply",
            {
                let mut b = compact(&[], 0);
                b.pop();
                write_varint(&mut b, 1 << 40);
                b
            },
            "a replay holds at most 100000000 ticks",
        ),
        (
            "far-frame.json",
            json_replay(&[(0, None), (4_000_000_000, None)], &[1, 2]),
            "frames[1].start_tick",
        ),
        ("gap.json", json_replay(&[(0, None)], &[1, 3]), "hashes[1]"),
        (
            "late-start.json",
            json_replay(&[(5, None)], &[1]),
            "frames[0].start_tick",
        ),
        (
            "huge-axis.json",
            json_replay(&[(0, Some(&huge_axis))], &[1]),
            "frames[0].input: axes.move_x is inf",
        ),
        (
            "absurd-axis.json",
            json_replay(&[(0, Some(&absurd_axis))], &[1]),
            "frames[0].input: axes.move_x is 50000000",
        ),
    ];
    for (name, bytes, expected) in cases {
        let file = dir.join(name);
        std::fs::write(&file, &bytes).unwrap();
        let (out, took) = limited(512, &["replay", "info", file.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{name}: {stderr}");
        assert!(
            stderr.starts_with(&format!("REPLAY_INVALID: {}", file.display()))
                && stderr.contains(expected),
            "{name}: expected `{expected}`: {stderr}"
        );
        assert!(took < Duration::from_secs(5), "{name} took {took:?}");
    }
    // `replay play` refuses before it builds anything.
    let far = dir.join("far-frame.json");
    let (out, took) = limited(
        512,
        &[
            "replay",
            "play",
            starter().to_str().unwrap(),
            far.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took < Duration::from_secs(5));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `replay info` on a valid 1.2 MB compact replay of ten million frames (156,250 ticks, then idle
/// frames) answers within a 64 MB address space: the frames are counted from their groups, never
/// made. Fails if `replay info` reads the replay whole (seen: an abort at 64 MB, "memory
/// allocation of 880000000 bytes failed").
#[test]
fn replay_info_reads_in_constant_memory() {
    let dir = scratch("info-memory");
    let ticks = 156_250;
    let file = dir.join("ten-million.rply");
    let bytes = compact(
        &[(ticks, 16_666_667, 1), (10_000_000 - ticks, 16_666_667, 0)],
        ticks,
    );
    assert!(bytes.len() < 1_300_000, "{} bytes", bytes.len());
    std::fs::write(&file, &bytes).unwrap();
    for json in [false, true] {
        let mut args = vec!["replay", "info", file.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let (out, took) = limited(64, &args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let expected = if json {
            "\"frames\":10000000"
        } else {
            "10000000 frames (166666.67 s), 156250 ticks from tick 0"
        };
        assert!(stdout.contains(expected), "{stdout}");
        assert!(took < Duration::from_secs(10), "took {took:?}");
    }
}

/// Outputs are refused up front with `OUTPUT_INVALID` (exit code 3), before anything builds:
/// `--hashes-out` naming the `--script` (also spelled another way), a report naming one of the
/// compared reports, two outputs naming one file, a symbolic link or a directory as the target,
/// and a missing directory. The input is left as it was. Fails if any output is written over an
/// input or a special file, or a missing directory is found only after the run.
#[test]
fn outputs_never_replace_inputs_or_special_files() {
    let dir = scratch("outputs");
    let script = dir.join("script.json");
    let text = std::fs::read(starter().join("input/walkthrough.json")).unwrap();
    std::fs::write(&script, &text).unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&script, &link).unwrap();
    let project = starter();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            project.to_str().unwrap(),
            "--headless",
            "--ticks",
            "5",
        ];
        args.extend_from_slice(extra);
        rusting(&args)
    };
    let same = dir.join("sub/../script.json");
    let record = dir.join("session.json");
    let sub = dir.join("sub");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "--script",
                script.to_str().unwrap(),
                "--hashes-out",
                script.to_str().unwrap(),
            ],
            "is also the input --script",
        ),
        (
            vec![
                "--script",
                script.to_str().unwrap(),
                "--hashes-out",
                same.to_str().unwrap(),
            ],
            "is also the input --script",
        ),
        (
            vec![
                "--record",
                record.to_str().unwrap(),
                "--hashes-out",
                record.to_str().unwrap(),
            ],
            "is also the output --record",
        ),
        (
            vec!["--hashes-out", link.to_str().unwrap()],
            "a symbolic link",
        ),
        (vec!["--hashes-out", sub.to_str().unwrap()], "a directory"),
        (
            vec!["--hashes-out", "/no/such/directory/hashes.json"],
            "its directory does not exist",
        ),
    ];
    for (extra, expected) in cases {
        let started = Instant::now();
        let out = run(&extra);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{extra:?}: {stderr}");
        assert!(
            stderr.starts_with("OUTPUT_INVALID: ") && stderr.contains(expected),
            "{extra:?}: {stderr}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{extra:?} built something first"
        );
    }
    assert_eq!(
        std::fs::read(&script).unwrap(),
        text,
        "the script was changed"
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let report = dir.join("a.json");
    std::fs::write(&report, "{}").unwrap();
    let out = rusting(&[
        "hashes",
        "diff",
        report.to_str().unwrap(),
        report.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is also the input A"));
    assert_eq!(std::fs::read(&report).unwrap(), b"{}");
    let no_temp = std::fs::read_dir(&dir)
        .unwrap()
        .all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp"));
    assert!(no_temp, "a temporary file was left behind");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A malformed input script is refused as `SCRIPT_INVALID` (exit code 3) with its file and JSON
/// pointer before anything builds, never as `RUN_FAILED` after a build. Fails if `run` or
/// `determinism` stop loading the script up front.
#[test]
fn malformed_scripts_are_refused_before_building() {
    let dir = scratch("scripts");
    let cases = [
        (
            "huge-ticks.json",
            r#"{"format_version": 1, "frames": [{"ticks": 1e22}]}"#,
            "/frames/0/ticks",
        ),
        (
            "huge-axis.json",
            r#"{"format_version": 1, "frames": [{"input": {"pressed": [], "axes": {"move_x": 1e39}, "look_delta": [0, 0], "viewport": [0, 0]}}]}"#,
            "/frames/0/input/axes/move_x",
        ),
        (
            "broken.json",
            r#"{"format_version": 1, "frames": [{"ticks": }]}"#,
            "broken.json:1:",
        ),
    ];
    for (name, text, expected) in cases {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        for command in ["run", "determinism"] {
            let started = Instant::now();
            let mut args = vec![
                command,
                starter().to_str().unwrap().to_owned().leak() as &str,
            ];
            if command == "run" {
                args.extend(["--headless", "--ticks", "5"]);
            }
            args.extend(["--script", file.to_str().unwrap()]);
            let out = rusting(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{command} {name}: {stderr}");
            assert!(
                stderr.starts_with("SCRIPT_INVALID: ") && stderr.contains(expected),
                "{command} {name}: {stderr}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{command} {name} built first"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `cook` is all or nothing: with one broken scene among good ones it writes no cooked file (and
/// leaves an earlier cooked file as it was), and a project whose main scene is missing is refused
/// with `SCENE_INVALID` naming it. Fails if scenes are written one by one as they cook.
#[test]
fn cook_is_all_or_nothing() {
    let dir = scratch("cook");
    std::fs::create_dir_all(dir.join("scenes")).unwrap();
    std::fs::copy(starter().join("rusting.json"), dir.join("rusting.json")).unwrap();
    let good = std::fs::read(starter().join("scenes/main.scene.json")).unwrap();
    std::fs::write(dir.join("scenes/main.scene.json"), &good).unwrap();
    std::fs::write(dir.join("scenes/b.scene.json"), &good).unwrap();
    std::fs::write(dir.join("scenes/c.scene.json"), b"{ \"entities\": 3 }").unwrap();
    std::fs::create_dir_all(dir.join("cooked")).unwrap();
    std::fs::write(dir.join("cooked/main.json"), b"earlier").unwrap();
    let out = rusting(&["cook", dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.starts_with("SCENE_INVALID: ") && stderr.contains("c.scene.json"),
        "{stderr}"
    );
    let mut left: Vec<String> = std::fs::read_dir(dir.join("cooked"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["main.json"], "cook wrote some scenes");
    assert_eq!(
        std::fs::read(dir.join("cooked/main.json")).unwrap(),
        b"earlier"
    );

    std::fs::remove_file(dir.join("scenes/c.scene.json")).unwrap();
    std::fs::remove_file(dir.join("scenes/main.scene.json")).unwrap();
    let out = rusting(&["cook", dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("main.scene.json: the main scene named in rusting.json does not exist"),
        "{stderr}"
    );
    assert!(!dir.join("cooked/b.json").exists());

    std::fs::write(dir.join("scenes/main.scene.json"), &good).unwrap();
    let out = rusting(&["cook", dir.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.join("cooked/b.json").exists());
    assert_ne!(
        std::fs::read(dir.join("cooked/main.json")).unwrap(),
        b"earlier"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A state-hash report with `(tick, hash)` entries (hashes as 16 hex digits).
fn report(ticks: &[(u64, u64)]) -> String {
    let ticks: Vec<String> = ticks
        .iter()
        .map(|(tick, hash)| format!(r#"{{"tick": {tick}, "hash": "{hash:016x}"}}"#))
        .collect();
    format!(
        r#"{{"format_version": 2, "ticks": [{}], "entities": []}}"#,
        ticks.join(", ")
    )
}

/// Crafted report pairs through `hashes diff` and its HTML page: tick sets drawn from the edges
/// (0, 1, 2^32, 2^53 and its neighbour, `u64::MAX` and the tick before it) and from anywhere,
/// empty, repeated, out of order, of different lengths, with equal and different hashes, and one
/// pair of 100,000 ticks each. Every pair ends as agreement (0), a divergence (1) or refused
/// input (3), within 20 s, never a panic, and a page is written whenever the reports were
/// compared. Fails on any overflow or endless loop on a tick from the file (seen with the
/// timeline's checked addition undone: pair 6 panicked, "attempt to add with overflow").
#[test]
fn crafted_reports_are_diffed_and_drawn_without_a_panic() {
    let dir = scratch("crafted-reports");
    let edges = [
        0,
        1,
        1 << 32,
        1 << 53,
        (1 << 53) + 1,
        u64::MAX - 1,
        u64::MAX,
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 11
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    for _ in 0..40 {
        let one = |next: &mut dyn FnMut() -> u64| {
            let len = (next() % 6) as usize;
            (0..len)
                .map(|_| {
                    let tick = match next() % 3 {
                        0 => edges[(next() % edges.len() as u64) as usize],
                        1 => next() % 200,
                        _ => next() << 11,
                    };
                    (tick, next() % 3)
                })
                .collect::<Vec<(u64, u64)>>()
        };
        let a = one(&mut next);
        let b = if next() % 2 == 0 {
            a.clone()
        } else {
            one(&mut next)
        };
        pairs.push((report(&a), report(&b)));
    }
    let long: Vec<(u64, u64)> = (0..100_000).map(|t| (t, t)).collect();
    let mut shifted = long.clone();
    shifted[99_999].1 = 7;
    pairs.push((report(&long), report(&shifted)));
    let (a, b, page) = (
        dir.join("a.json"),
        dir.join("b.json"),
        dir.join("page.html"),
    );
    let mut codes = [0usize; 4];
    for (k, (first, second)) in pairs.iter().enumerate() {
        std::fs::write(&a, first).unwrap();
        std::fs::write(&b, second).unwrap();
        let _ = std::fs::remove_file(&page);
        let args = [
            "hashes",
            "diff",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--report",
            page.to_str().unwrap(),
        ];
        let (out, took) = limited(512, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1 | 3)) && !stderr.contains("panicked"),
            "pair {k} ({code:?}): {stderr}\n{first}\n{second}"
        );
        assert!(took < Duration::from_secs(20), "pair {k} took {took:?}");
        if code != Some(3) {
            assert!(page.exists(), "pair {k}: no page\n{first}\n{second}");
        }
        codes[code.unwrap_or(2) as usize] += 1;
    }
    // Enough of both outcomes for the pairs to mean something.
    assert!(
        codes[0] >= 5 && codes[1] >= 5,
        "agreed, differed, -, refused: {codes:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Reports whose ticks reach `u64::MAX` (the last tick there is, next to its neighbour and next to
/// tick 0) are diffed in either order, with and without the HTML page, in bounded time: the
/// first divergent tick is named (`HASHES_DIFFER`, exit 1; ticks are compared position by
/// position, the first report's tick named) or they agree (exit 0), and never a panic. Fails when the timeline adds 1 to the last tick ("attempt to add with overflow" in
/// `html_report/timeline.rs`, seen), or when its axis loops on labels an f64 cannot tell apart
/// near 2^64 (seen: it fills memory with labels until the limit stops it).
#[test]
fn a_report_at_the_last_tick_is_diffed_without_overflow() {
    let dir = scratch("last-tick");
    let last = u64::MAX;
    let a = dir.join("a.json");
    let b = dir.join("b.json");
    let near = dir.join("near.json");
    std::fs::write(&a, report(&[(0, 0xaa), (last - 1, 0xbb), (last, 0xcc)])).unwrap();
    std::fs::write(&b, report(&[(0, 0xaa), (last, 0xcd)])).unwrap();
    std::fs::write(&near, report(&[(last - 1, 0xbb), (last, 0xcc)])).unwrap();
    let page = dir.join("page.html");
    let cases = [
        (&a, &b, Some(last - 1)),
        (&b, &a, Some(last)),
        (&a, &a, None),
        (&near, &a, Some(last - 1)),
        (&near, &near, None),
    ];
    for (first, second, diverges) in cases {
        for html in [false, true] {
            let mut args = vec![
                "hashes",
                "diff",
                first.to_str().unwrap(),
                second.to_str().unwrap(),
            ];
            if html {
                args.extend(["--report", page.to_str().unwrap()]);
            }
            let (out, took) = limited(512, &args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
            assert!(took < Duration::from_secs(20), "{args:?} took {took:?}");
            match diverges {
                Some(tick) => {
                    assert_eq!(out.status.code(), Some(1), "{args:?}: {stdout}{stderr}");
                    assert!(
                        stderr.contains(&format!("HASHES_DIFFER: first divergent tick {tick}")),
                        "{args:?}: {stderr}"
                    );
                }
                None => assert_eq!(out.status.code(), Some(0), "{args:?}: {stdout}{stderr}"),
            }
            if html {
                let text = std::fs::read_to_string(&page).unwrap();
                assert!(
                    text.contains(&last.to_string()),
                    "{args:?}: the page names tick {last}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

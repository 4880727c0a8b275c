//! The HTML report as a user sees it: written by `rusting determinism --report` and `rusting replay
//! info --report`, opened offline in headless Chromium (Debian's `chromium`, which
//! `tools/install-system-packages.sh` installs).

mod support;

use std::path::Path;
use std::process::Command;

use support::{DEBUG_ONLY_NUDGE, determinism_in_shared_target, project_with, rusting};

/// Headless Chromium on `page` with `args`, offline: background networking off, every host name
/// unresolvable.
fn chromium(page: &Path, args: &[&str]) -> std::process::Output {
    let profile = page.with_extension("chromium-profile");
    let mut command = Command::new("chromium");
    command.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--window-size=1280,1400",
    ]);
    command.arg(format!("--user-data-dir={}", profile.display()));
    command.args(args);
    command.arg(format!("file://{}", page.display()));
    let out = command.output().unwrap_or_else(|e| {
        panic!(
            "cannot start chromium ({e}): run tools/install-system-packages.sh, which installs it"
        )
    });
    let _ = std::fs::remove_dir_all(&profile);
    out
}

/// The page's DOM after its script ran.
fn rendered_dom(page: &Path) -> String {
    let out = chromium(page, &["--dump-dom"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A screenshot of the page: its RGB pixels.
fn screenshot(page: &Path) -> Vec<[u8; 3]> {
    let shot = page.with_extension("png");
    let out = chromium(page, &[&format!("--screenshot={}", shot.display())]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let channels = info.color_type.samples();
    buffer[..info.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect()
}

/// A page that loads nothing: no external script, style, image or font.
fn assert_self_contained(html: &str) {
    for reference in ["src=", "href=", "url(", "@import", "http://", "https://"] {
        assert!(
            !html.contains(reference),
            "the page refers to `{reference}`"
        );
    }
}

/// `rusting determinism --report` on a planted divergence (a debug-only nudge of the player at
/// tick 30), opened offline in headless Chromium: the rendered DOM names the divergent tick 31,
/// the entity `Player` and the field `translation.x` with both runs' values, the script ran (it
/// adds the zoom buttons), and a screenshot is not blank: it shows the red of the differing
/// lanes. Fails if the report is not written on a divergence, if it needs the network, if its
/// script throws before adding its tools, or if the lanes stop marking differing ticks.
#[test]
fn the_report_renders_in_a_browser() {
    let (root, dir) = project_with("report", DEBUG_ONLY_NUDGE);
    let page = root.join("report.html");
    let out = determinism_in_shared_target(&dir, 60, &["--report", page.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);

    let dom = rendered_dom(&page);
    assert!(dom.contains("DETERMINISM_DIVERGED"), "{dom}");
    assert!(
        dom.contains("First divergence: tick <span id=\"divergent-tick\">31</span>"),
        "{dom}"
    );
    assert!(dom.contains("entity `Player` (scene id 10)"), "{dom}");
    assert!(
        dom.contains("<td>translation.x</td><td>0.0001</td><td>0.0</td>"),
        "{dom}"
    );
    assert!(
        dom.contains("around the divergence</button>"),
        "the script did not run: {dom}"
    );
    for lane in ["debug", "debug again", "release", "release on one CPU"] {
        assert!(dom.contains(&format!("title=\"{lane}\"")), "no lane {lane}");
    }

    let pixels = screenshot(&page);
    let mut colours: Vec<[u8; 3]> = pixels.clone();
    colours.sort_unstable();
    colours.dedup();
    assert!(
        colours.len() > 50,
        "a blank screenshot: {} colours",
        colours.len()
    );
    // The differing lanes' red: about 8,000 pixels at this size; the verdict's border and the
    // difference plot alone give about 1,100.
    let red = pixels.iter().filter(|p| **p == [0xd4, 0x37, 0x2c]).count();
    assert!(
        red > 4000,
        "the differing lanes are not drawn: {red} red pixels"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// A 10-minute session (36,000 ticks at 60 Hz, a frame a tick, input changing about twice a
/// second) gives a small page that headless Chromium renders in seconds, with a lane per key and
/// axis and every snapshot point. Fails if lanes or input are drawn tick by tick instead of as
/// segments and changes (the page then grows past a megabyte).
#[test]
fn a_ten_minute_replay_gives_a_small_page() {
    let root = std::env::temp_dir().join(format!("rusting-report-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let frames: Vec<serde_json::Value> = (0..36_000u64)
        .map(|tick| {
            let mut frame = serde_json::json!({ "real_delta_ns": 16_666_667, "start_tick": tick });
            if tick % 30 == 0 {
                let phase = tick / 30;
                let keys: Vec<&str> = match phase % 4 {
                    0 => vec!["KeyD"],
                    1 => vec!["KeyD", "Space"],
                    2 => vec!["KeyA"],
                    _ => vec![],
                };
                frame["input"] = serde_json::json!({
                    "pressed": keys,
                    "axes": { "move_x": ((phase % 7) as f32 - 3.0) / 3.0 },
                    "look_delta": [(phase % 5) as f32, 0.0],
                    "viewport": [1280, 720],
                });
            }
            frame
        })
        .collect();
    let hashes: Vec<(u64, String)> = (1..=36_000u64).map(|t| (t, format!("{t:016x}"))).collect();
    let replay = serde_json::json!({
        "format_version": 1,
        "engine_version": "0.1.0",
        "seed": 7,
        "start_tick": 0,
        "frames": frames,
        "hashes": hashes,
    });
    let file = root.join("session.json");
    std::fs::write(&file, serde_json::to_vec(&replay).unwrap()).unwrap();
    let page = root.join("session.html");
    let out = rusting(&[
        "replay",
        "info",
        file.to_str().unwrap(),
        "--report",
        page.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    assert!(html.len() < 1_000_000, "the page is {} bytes", html.len());

    let started = std::time::Instant::now();
    let dom = rendered_dom(&page);
    let seconds = started.elapsed().as_secs_f64();
    assert!(seconds < 20.0, "rendering took {seconds:.1} s");
    for lane in [
        "key KeyA",
        "key KeyD",
        "key Space",
        "axis move_x",
        "look x / y",
        "snapshots",
    ] {
        assert!(dom.contains(&format!("title=\"{lane}\"")), "no lane {lane}");
    }
    assert_eq!(
        dom.matches("<title>snapshot: tick").count(),
        61,
        "one point every 600 ticks"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

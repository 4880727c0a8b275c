//! `rusting replay info <FILE>` and `rusting replay play <project> <FILE> [--window]`, for a
//! recording and for a multiplayer session's replay (told apart by the file's first key).

use std::path::Path;

use rusting_engine::determinism::session_replay::SessionReplay;
use rusting_engine::record::{Replay, ReplaySummary};

use crate::exit::Failure;
use crate::html_report::{HtmlReport, RecordingView, Verdict};

fn load(file: &Path) -> Result<Replay, Failure> {
    Replay::load(file).map_err(|e| Failure::bad_input("REPLAY_INVALID", e.to_string()))
}

/// What a replay holds; with `report`, also an HTML page of its recording (hashes, snapshot
/// points every `interval` ticks, input lanes).
pub fn info(
    file: &Path,
    json: bool,
    report: Option<&Path>,
    interval: u64,
) -> Result<String, Failure> {
    let outputs: Vec<(&str, &Path)> = report.map(|p| ("--report", p)).into_iter().collect();
    crate::outputs::check(&[("FILE", file)], &outputs)?;
    if is_session_replay(file) {
        if report.is_some() {
            return Err(Failure::bad_input(
                "REPLAY_INVALID",
                format!(
                    "{}: --report draws a single-player recording; this is a multiplayer \
                     session's replay",
                    file.display()
                ),
            ));
        }
        return session_info(file, json);
    }
    if let Some(path) = report {
        let replay = load(file)?;
        let recording = RecordingView::of(&replay, interval);
        let summary = ReplaySummary::of(replay);
        let replay = &summary.replay;
        let page = HtmlReport {
            title: format!("rusting replay info: {}", file.display()),
            facts: vec![
                ("replay".to_owned(), file.display().to_string()),
                ("engine".to_owned(), replay.engine_version.clone()),
                ("seed".to_owned(), replay.seed.to_string()),
                (
                    "scene".to_owned(),
                    replay.scene.as_ref().map_or_else(
                        || "(none recorded)".to_owned(),
                        |s| format!("{} ({})", s.name, s.cooked_hash),
                    ),
                ),
            ],
            verdict: Verdict::of(&Ok(summary_line(file, &summary)), None),
            ticks: (
                replay.start_tick + 1,
                replay.end_tick().max(replay.start_tick + 1),
            ),
            lanes: Vec::new(),
            divergence: None,
            recording: Some(recording),
        };
        crate::html_report::write(&page, path)?;
        return Ok(if json {
            info_json(&summary)
        } else {
            summary_line(file, &summary)
        });
    }
    // Without a page to draw, the frames are only counted: a compact replay is read in memory
    // that grows with its size, not with the frames it claims.
    let summary =
        Replay::summarize(file).map_err(|e| Failure::bad_input("REPLAY_INVALID", e.to_string()))?;
    Ok(if json {
        info_json(&summary)
    } else {
        summary_line(file, &summary)
    })
}

/// Whether `file` holds a multiplayer session's replay: JSON whose first key is `format` (a
/// recording's is `format_version`; a compact one is binary).
fn is_session_replay(file: &Path) -> bool {
    let mut start = [0u8; 64];
    let read = std::fs::File::open(file)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut start))
        .unwrap_or(0);
    let text: Vec<u8> = start[..read]
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    text.starts_with(b"{\"format\":")
}

/// What a session replay holds.
fn session_info(file: &Path, json: bool) -> Result<String, Failure> {
    let replay = SessionReplay::read(file)
        .map_err(|e| Failure::bad_input("REPLAY_INVALID", e.to_string()))?;
    let last = replay
        .ticks
        .last()
        .map_or("(none)", |tick| tick.hash.as_str());
    let outside: usize = replay.ticks.iter().map(|tick| tick.outside.len()).sum();
    Ok(if json {
        serde_json::json!({
            "kind": "session",
            "format": replay.format,
            "players": replay.players,
            "ticks": replay.ticks.len(),
            "outside_entries": outside,
            "last_hash": last,
        })
        .to_string()
    } else {
        format!(
            "{}: multiplayer session replay, format {}, {} players, {} confirmed ticks, {outside} \
             outside entries, last hash {last}",
            file.display(),
            replay.format,
            replay.players,
            replay.ticks.len()
        )
    })
}

/// The replay's facts as one line.
fn summary_line(file: &Path, summary: &ReplaySummary) -> String {
    let replay = &summary.replay;
    let scene = replay
        .scene
        .as_ref()
        .map(|s| format!("{} ({})", s.name, s.cooked_hash))
        .unwrap_or_else(|| "(none recorded)".into());
    format!(
        "{}: format {}, engine {}, seed {}, scene {scene}; {} frames ({:.2} s), {} ticks from tick {}, {} input changes",
        file.display(),
        replay.format_version,
        replay.engine_version,
        replay.seed,
        summary.frames,
        seconds(summary),
        replay.hashes.len(),
        replay.start_tick,
        summary.input_changes,
    )
}

/// The recording's length in seconds.
fn seconds(summary: &ReplaySummary) -> f64 {
    summary.real_ns as f64 / 1e9
}

/// The replay's facts as JSON.
fn info_json(summary: &ReplaySummary) -> String {
    let replay = &summary.replay;
    serde_json::json!({
        "format_version": replay.format_version,
        "engine_version": replay.engine_version,
        "seed": replay.seed,
        "start_tick": replay.start_tick,
        "frames": summary.frames,
        "ticks": replay.hashes.len(),
        "input_changes": summary.input_changes,
        "seconds": seconds(summary),
        "scene": replay.scene,
    })
    .to_string()
}

/// How much of a replay to play: its first `ticks` ticks, or up to tick `until`; all of it when
/// neither is given.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bound {
    /// Play only the first this many ticks.
    pub ticks: Option<u64>,
    /// Play up to this tick.
    pub until: Option<u64>,
}

impl Bound {
    /// The ticks to play of the replay `file`, which starts at tick `start` and holds `recorded`
    /// ticks: `None` for all of them. `--until` at or before the start, and `--ticks 0`, are
    /// `TICKS_INVALID`, naming the ticks the replay holds.
    pub fn ticks_of(self, file: &Path, start: u64, recorded: u64) -> Result<Option<u64>, Failure> {
        let ticks = match self {
            Bound {
                until: Some(until), ..
            } => {
                if until <= start {
                    return Err(Failure::bad_input(
                        "TICKS_INVALID",
                        format!(
                            "--until {until}: {} starts at tick {start} and holds ticks {} to {}",
                            file.display(),
                            start.saturating_add(1),
                            start.saturating_add(recorded)
                        ),
                    ));
                }
                Some(until - start)
            }
            Bound { ticks, .. } => ticks,
        }
        .filter(|&ticks| ticks < recorded);
        if ticks == Some(0) {
            return Err(Failure::bad_input(
                "TICKS_INVALID",
                "--ticks 0: nothing to play",
            ));
        }
        Ok(ticks)
    }

    /// [`Bound::ticks_of`] for the replay at `file`, read as `replay info` reads it (in memory
    /// that does not grow with its frames).
    pub fn ticks_of_file(self, file: &Path) -> Result<Option<u64>, Failure> {
        if self.ticks.is_none() && self.until.is_none() {
            return Ok(None);
        }
        let summary = Replay::summarize(file)
            .map_err(|e| Failure::bad_input("REPLAY_INVALID", e.to_string()))?;
        self.ticks_of(
            file,
            summary.replay.start_tick,
            summary.replay.hashes.len() as u64,
        )
    }
}

/// Builds the game in `project` and plays `file` into it headless (only as far as `bound` says),
/// or with `window` shows it in the game's window (the replay viewer: pause, step and seek; no
/// live input).
pub fn play(
    project_dir: &Path,
    file: &Path,
    bound: Bound,
    window: bool,
    target_dir: Option<&Path>,
) -> Result<String, Failure> {
    if is_session_replay(file) {
        if bound.ticks.is_some() || bound.until.is_some() {
            return Err(Failure::bad_input(
                "TICKS_INVALID",
                format!(
                    "{}: a multiplayer session's replay plays whole (leave out --ticks and \
                     --until)",
                    file.display()
                ),
            ));
        }
        if window {
            return Err(Failure::bad_input(
                "REPLAY_INVALID",
                format!(
                    "{}: a multiplayer session's replay plays headless only (leave out --window)",
                    file.display()
                ),
            ));
        }
        return crate::run::run(&crate::run::Request {
            project: project_dir,
            headless: true,
            ticks: None,
            script: None,
            record: None,
            replay: None,
            session_replay: Some(file),
            view: false,
            synctest: None,
            hashes_out: None,
            detail_ticks: None,
            screenshot: None,
            debug_draw: None,
            debug: false,
            target_dir,
        });
    }
    let summary =
        Replay::summarize(file).map_err(|e| Failure::bad_input("REPLAY_INVALID", e.to_string()))?;
    let (start, recorded) = (
        summary.replay.start_tick,
        summary.replay.hashes.len() as u64,
    );
    let ticks = bound.ticks_of(file, start, recorded)?;
    let played = crate::run::run(&crate::run::Request {
        project: project_dir,
        headless: !window,
        ticks,
        script: None,
        record: None,
        replay: Some(file),
        session_replay: None,
        view: window,
        synctest: None,
        hashes_out: None,
        detail_ticks: None,
        screenshot: None,
        debug_draw: None,
        debug: false,
        target_dir,
    })?;
    Ok(if window || ticks.is_some() {
        played
    } else {
        format!("the replay matched all {recorded} recorded ticks")
    })
}

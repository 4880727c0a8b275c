//! The command-line grammar (clap derive): the doc comments here are the `--help` text.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::exit::Outcome;
use crate::{cook, determinism, hashes, new, replay, run, run_net, validate};

/// Rusting: a deterministic game engine on Bevy.
///
/// The same scene, seed and input give the same bits on every run, build and thread count. This
/// tool proves it for a project, replays recorded sessions and checks a project before shipping.
#[derive(Parser, Debug)]
#[command(
    name = "rusting",
    version,
    about,
    long_about,
    arg_required_else_help = true
)]
pub struct Cli {
    /// Print results as JSON.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
// One value a process, parsed once: the size of its largest variant (`run`'s many options) costs
// nothing, and boxing it would only make the matches below harder to read.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Write a new game project from the starter into a new or empty directory.
    New {
        /// The directory to create.
        dir: PathBuf,
        /// Take the engine (and, in the CI workflow, `rusting`) from this git repository instead
        /// of the crates.io release.
        #[arg(long, value_name = "URL", conflicts_with_all = ["engine_version", "engine_path"])]
        engine_git: Option<String>,
        /// Depend on this crates.io release of the engine (and install the same release of
        /// `rusting` in the CI workflow) instead of this command's own version.
        #[arg(long, value_name = "VERSION", conflicts_with = "engine_path", value_parser = new::parse_version)]
        engine_version: Option<String>,
        /// Depend on an engine checkout on this machine by path (for working on the engine: a CI
        /// runner cannot fetch it).
        #[arg(long, value_name = "DIR")]
        engine_path: Option<PathBuf>,
    },
    /// Build a game in debug and release, run each headless (and release again on one CPU, and in
    /// uneven frames), and check that every tick's world-state hash is the same.
    Determinism {
        /// The project directory (holding `rusting.json` and `Cargo.toml`).
        project: PathBuf,
        /// How many fixed ticks each run simulates (default 120, or the whole replay).
        #[arg(long)]
        ticks: Option<u64>,
        /// An input script to feed every run, so gameplay is exercised.
        #[arg(long, conflicts_with = "replay")]
        script: Option<PathBuf>,
        /// A recorded session whose frames and input to feed every run.
        #[arg(long)]
        replay: Option<PathBuf>,
        /// With --replay: run up to this tick of the recording (its start tick plus the ticks
        /// run), to check the first minutes of a long recording.
        #[arg(
            long,
            value_name = "TICK",
            requires = "replay",
            conflicts_with = "ticks"
        )]
        until: Option<u64>,
        /// The cargo target directory the builds share (default: the project's `target`).
        #[arg(long)]
        target_dir: Option<PathBuf>,
        /// Run exactly N rounds of every configuration (1 to 16) instead of as many as a 20 s
        /// budget allows (at most 8): repeated runs catch races that show in one run of several.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=16))]
        repeat: Option<u32>,
        /// Also write the outcome as a self-contained HTML page: a lane per run over the ticks,
        /// the diverging entity field by field in both runs, and its position around the
        /// divergence.
        #[arg(long, value_name = "FILE.html")]
        report: Option<PathBuf>,
    },
    /// Build a game and play it in a window, or run it headless for a number of ticks; record a
    /// session, play one back, or run as a synctest.
    Run {
        /// The project directory.
        project: PathBuf,
        /// Run without a window (needs --ticks); the build leaves the game's default features,
        /// and with them the renderer, out.
        #[arg(long)]
        headless: bool,
        /// How many fixed ticks to run: required headless; in a window, the run ends after them.
        #[arg(long)]
        ticks: Option<u64>,
        /// An input script to feed the run.
        #[arg(long)]
        script: Option<PathBuf>,
        /// Record the session into this replay file (`.rply` for the compact form).
        #[arg(long, conflicts_with = "replay")]
        record: Option<PathBuf>,
        /// Play this replay headless instead, failing at the first tick that differs.
        #[arg(long)]
        replay: Option<PathBuf>,
        /// With --replay: play up to this tick of the recording (its start tick plus the ticks
        /// played).
        #[arg(
            long,
            value_name = "TICK",
            requires = "replay",
            conflicts_with = "ticks"
        )]
        until: Option<u64>,
        /// Run every tick as a frame of its own, re-simulated from a snapshot this many ticks back
        /// (headless with --ticks, or in the window).
        #[arg(long, conflicts_with_all = ["record", "replay"])]
        synctest: Option<usize>,
        /// Write the run's state-hash report here.
        #[arg(long)]
        hashes_out: Option<PathBuf>,
        /// Add these ticks' state, down to the field, to the report (`<from>-<to>`, at most 600
        /// ticks), so `hashes diff` names the field where two reports part.
        #[arg(long, requires = "hashes_out")]
        detail_ticks: Option<String>,
        /// Play a multiplayer session of this many peers (2 to 8) on this machine, each its own
        /// process on a loopback port with the same --script, for --ticks confirmed ticks; passes
        /// when every peer agrees on every tick. Builds the engine's `net` feature; headless.
        #[arg(long, conflicts_with_all = ["record", "replay", "synctest", "hashes_out", "net_peers"])]
        net: Option<usize>,
        /// With --net: give peer HANDLE this input script instead of --script (repeatable, one
        /// per peer at most), so each player can play differently.
        #[arg(long, value_name = "HANDLE=FILE", requires = "net")]
        peer_script: Vec<String>,
        /// Play one peer of a session across machines: every player's `ip:port` in handle order,
        /// comma-separated (with --net-player; start each peer the same way).
        #[arg(
            long,
            requires = "net_player",
            conflicts_with_all = ["record", "replay", "synctest", "hashes_out"]
        )]
        net_peers: Option<String>,
        /// The player handle this machine plays in --net-peers (from 0).
        #[arg(long, requires = "net_peers")]
        net_player: Option<usize>,
        /// Write the session's replay here (with --net, peer 0's; with --net-peers, this
        /// peer's): every confirmed tick's inputs and hash, for `rusting replay play`.
        #[arg(long)]
        session_out: Option<PathBuf>,
        /// In the window, with --ticks: save a PNG of the window here when the ticks are done,
        /// then end the run (what the game's `RUSTING_SCREENSHOT` does).
        #[arg(
            long,
            value_name = "PATH",
            requires = "ticks",
            conflicts_with_all = ["headless", "replay", "net", "net_peers"]
        )]
        screenshot: Option<PathBuf>,
        /// In the window: draw the engine's debug views over the scene, comma-separated
        /// (`velocities`: each moving body's velocity); what the game's `RUSTING_DEBUG_DRAW` does.
        #[arg(
            long,
            value_name = "VIEWS",
            value_parser = parse_debug_draw,
            conflicts_with_all = ["headless", "net", "net_peers"]
        )]
        debug_draw: Option<String>,
        /// Build in debug instead of release.
        #[arg(long)]
        debug: bool,
        /// The cargo target directory (default: the project's `target`).
        #[arg(long)]
        target_dir: Option<PathBuf>,
    },
    /// Compare state-hash reports.
    Hashes {
        #[command(subcommand)]
        command: HashesCommand,
    },
    /// Cook every scene of a project into `cooked/` (the same bytes from the same sources).
    Cook {
        /// The project directory.
        project: PathBuf,
    },
    /// Check a project before shipping, without building it: scenes, determinism mode, shaders,
    /// the source lint, toolchain and dependencies. Exits 1 on any error.
    Validate {
        /// The project directory.
        project: PathBuf,
    },
    /// Inspect or play a recorded session.
    Replay {
        #[command(subcommand)]
        command: ReplayCommand,
    },
}

#[derive(Subcommand, Debug)]
enum ReplayCommand {
    /// What a replay holds: format, engine, seed, scene, frames and ticks.
    Info {
        /// The replay file (JSON or compact `.rply`, or a multiplayer session's replay).
        file: PathBuf,
        /// Also write an HTML page of the recording: its hashes, seek snapshot points and input
        /// lanes (keys held, axes, look) over the ticks.
        #[arg(long, value_name = "FILE.html")]
        report: Option<PathBuf>,
        /// The snapshot interval, in ticks, the page's snapshot points assume.
        #[arg(long, default_value_t = rusting_engine::determinism::DEFAULT_SNAPSHOT_INTERVAL, value_parser = clap::value_parser!(u64).range(1..))]
        snapshot_interval: u64,
    },
    /// Build the game and play the replay headless; fails naming the first tick that differs. A
    /// multiplayer session's replay plays headless too, every player's input by tick, without the
    /// network.
    /// With --window, show it in the game's window instead: F1 pauses, F2 steps a frame, F3/F4
    /// change the speed, Left/Right seek a second, Home/End go to the start/end.
    Play {
        /// The project directory.
        project: PathBuf,
        /// The replay file.
        file: PathBuf,
        /// Show the replay in the game's window (built with its default features).
        #[arg(long)]
        window: bool,
        /// Play only the replay's first N ticks (the first minutes of a long recording).
        #[arg(long, value_name = "N", conflicts_with_all = ["window", "until"])]
        ticks: Option<u64>,
        /// Play the replay up to this tick (counted as the replay's hashes are: its start tick
        /// plus the ticks played).
        #[arg(long, value_name = "TICK", conflicts_with = "window")]
        until: Option<u64>,
        /// The cargo target directory (default: the project's `target`).
        #[arg(long)]
        target_dir: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum HashesCommand {
    /// The first tick, entity (paired by `SceneId`) and component where two reports differ.
    Diff {
        /// The reports: two are compared with each other; more are each compared with the
        /// reference (the first, or --reference), naming every one that differs. Or directories,
        /// one a machine: the reports of each file name are compared across them, and a report
        /// a machine lacks is named too.
        #[arg(required = true, num_args = 2.., value_name = "REPORT")]
        reports: Vec<PathBuf>,
        /// The report (or directory) the others are compared with (default: the first).
        #[arg(long, value_name = "REPORT")]
        reference: Option<PathBuf>,
        /// Also write an HTML page (two reports only): both reports' lanes over the ticks and,
        /// when both detail the divergent tick, the diverging entity field by field and its
        /// position.
        #[arg(long, value_name = "FILE.html")]
        report: Option<PathBuf>,
    },
}

impl Cli {
    /// Runs the chosen subcommand, prints its result, and returns the process exit code.
    pub fn run(self) -> ExitCode {
        let result = match &self.command {
            None => return Outcome::Success.code(),
            Some(Command::Determinism {
                project,
                ticks,
                script,
                replay,
                until,
                target_dir,
                repeat,
                report,
            }) => determinism::check(&determinism::Request {
                project,
                ticks: *ticks,
                until: *until,
                script: script.as_deref(),
                replay: replay.as_deref(),
                target_dir: target_dir.as_deref(),
                repeat: *repeat,
                report: report.as_deref(),
                json: self.json,
            }),
            Some(Command::Run {
                project,
                ticks,
                script,
                net,
                net_peers,
                net_player,
                peer_script,
                session_out,
                debug,
                target_dir,
                ..
            }) if net.is_some() || net_peers.is_some() => run_net::run(&run_net::Request {
                project,
                ticks: *ticks,
                script: script.as_deref(),
                peer_scripts: peer_script,
                peers: match (net, net_peers, net_player) {
                    (Some(n), _, _) => run_net::Peers::Local(*n),
                    (None, Some(peers), player) => run_net::Peers::One {
                        peers,
                        player: player.unwrap_or(0),
                    },
                    (None, None, _) => unreachable!("the guard asks for one of them"),
                },
                session_out: session_out.as_deref(),
                debug: *debug,
                target_dir: target_dir.as_deref(),
            }),
            Some(Command::Run {
                project,
                headless,
                ticks,
                script,
                record,
                replay,
                until,
                synctest,
                hashes_out,
                detail_ticks,
                session_out,
                screenshot,
                debug_draw,
                debug,
                target_dir,
                ..
            }) if session_out.is_none() => until_as_ticks(replay.as_deref(), *until, *ticks)
                .and_then(|ticks| {
                    run::run(&run::Request {
                        project,
                        headless: *headless,
                        ticks,
                        script: script.as_deref(),
                        record: record.as_deref(),
                        replay: replay.as_deref(),
                        session_replay: None,
                        view: false,
                        synctest: *synctest,
                        hashes_out: hashes_out.as_deref(),
                        detail_ticks: detail_ticks.as_deref(),
                        screenshot: screenshot.as_deref(),
                        debug_draw: debug_draw.as_deref(),
                        debug: *debug,
                        target_dir: target_dir.as_deref(),
                    })
                }),
            Some(Command::Run { .. }) => Err(crate::exit::Failure::bad_input(
                "NET_INVALID",
                "--session-out writes a multiplayer session's replay: use it with --net or \
                 --net-peers",
            )),
            Some(Command::Hashes {
                command:
                    HashesCommand::Diff {
                        reports,
                        reference,
                        report,
                    },
            }) => match (reports.as_slice(), reference) {
                _ if reports.iter().any(|r| r.is_dir()) => {
                    // A path that does not exist is a machine that uploaded nothing.
                    if report.is_some() || reports.iter().any(|r| r.exists() && !r.is_dir()) {
                        Err(crate::exit::Failure::bad_input(
                            "REPORT_INVALID",
                            "give report files, or directories of reports (one a machine), not \
                             both; --report draws two report files",
                        ))
                    } else {
                        crate::hashes_machines::diff_machines(
                            reports,
                            reference.as_deref(),
                            self.json,
                        )
                    }
                }
                ([a, b], None) => hashes::diff(a, b, self.json, report.as_deref()),
                _ if report.is_some() => Err(crate::exit::Failure::bad_input(
                    "OUTPUT_INVALID",
                    "--report draws two reports: leave it out to compare more, or a reference",
                )),
                _ => hashes::diff_many(reports, reference.as_deref(), self.json),
            },
            Some(Command::Cook { project }) => cook::cook(project, self.json),
            Some(Command::Validate { project }) => validate::validate(project, self.json),
            Some(Command::New {
                dir,
                engine_git,
                engine_version,
                engine_path,
            }) => {
                let engine = match (engine_git, engine_version, engine_path) {
                    (_, Some(version), _) => new::Engine::Version(version.clone()),
                    (_, _, Some(path)) => new::Engine::Path(path.clone()),
                    (Some(url), _, _) => new::Engine::Git(url.clone()),
                    _ => new::Engine::released(),
                };
                new::new_project(dir, &engine)
            }
            Some(Command::Replay {
                command:
                    ReplayCommand::Info {
                        file,
                        report,
                        snapshot_interval,
                    },
            }) => replay::info(file, self.json, report.as_deref(), *snapshot_interval),
            Some(Command::Replay {
                command:
                    ReplayCommand::Play {
                        project,
                        file,
                        window,
                        ticks,
                        until,
                        target_dir,
                    },
            }) => replay::play(
                project,
                file,
                replay::Bound {
                    ticks: *ticks,
                    until: *until,
                },
                *window,
                target_dir.as_deref(),
            ),
        };
        match result {
            Ok(summary) => {
                println!("{summary}");
                Outcome::Success.code()
            }
            Err(failure) => {
                if self.json && failure.message.starts_with('{') {
                    println!("{}", failure.message);
                } else if self.json {
                    println!(
                        "{}",
                        serde_json::json!({ "result": "error", "code": failure.code, "message": failure.message })
                    );
                } else {
                    eprintln!("{}: {}", failure.code, failure.message);
                }
                failure.outcome.code()
            }
        }
    }
}

/// `run --replay FILE --until TICK` as the ticks to play (`--ticks` as given otherwise).
fn until_as_ticks(
    replay: Option<&Path>,
    until: Option<u64>,
    ticks: Option<u64>,
) -> Result<Option<u64>, crate::exit::Failure> {
    match (replay, until) {
        (Some(file), Some(until)) => replay::Bound {
            ticks: None,
            until: Some(until),
        }
        .ticks_of_file(file),
        _ => Ok(ticks),
    }
}

/// `--debug-draw`'s list, checked against the engine's views.
fn parse_debug_draw(text: &str) -> Result<String, String> {
    rusting_engine::gameplay::DebugView::parse(text)
        .map(|_| text.to_owned())
        .ok_or_else(|| format!("`{text}`: the debug views are `velocities` (comma-separated)"))
}

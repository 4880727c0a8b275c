//! `rusting determinism <project> --ticks N`: the same game, built and run several ways, must give
//! the same world-state hash after every tick.
//!
//! The configurations: a debug build (run twice, or `--repeat N` times: two runs of the same
//! binary that differ point at process-dependent state, not at the build), a release build, the
//! release build again on one worker thread (`RUSTING_THREADS=1`: bevy's task pools and rayon run
//! one thread, on every operating system; on Linux the run is also pinned to CPU 0 with
//! `taskset --cpu-list 0` where it is installed), and, without an input script, the release build in uneven frames (3,
//! 1/2, 1/2, 0 and 5 ticks). The two builds share one target directory and run one after the
//! other; then the configurations run at the same time, headless, in lockstep (see `lockstep`):
//! each announces every tick's hash and waits. At the first tick where a run differs from the
//! first debug run, those two runs write their state of that tick down to the field, and the
//! verdict (same build, debug and release, one CPU, uneven frames) names the entity, component and
//! field with both values, from the very processes that differed. With `--replay`, every run is fed
//! the replay's frames and input (as an input script), the replay must be of the project's main
//! scene, and its recorded hashes must agree with what the runs compute. With `--report`, the
//! outcome is also written as an HTML page (see `html_report`): a lane per run, the blamed entity
//! field by field in both runs, and its position around the divergence.

use std::path::{Path, PathBuf};

use rusting_engine::game::project::Project;
use rusting_engine::record::{DetailDifference, Replay, StateHashReport};
use rusting_engine::runtime::InputScript;
use rusting_engine::scene::{LocatedScene, SceneIdentity};

use crate::exit::{Failure, Outcome};
use crate::game_build::{Build, GameRun, Profile, taskset_available};
use crate::html_report::{DivergenceView, HtmlReport, Lane, RecordingView, Verdict};
use crate::lockstep;

/// One way of building and running the game.
struct Configuration {
    name: &'static str,
    release: bool,
    one_cpu: bool,
    uneven: bool,
    /// The verdict when this configuration differs from the first debug run, and its usual causes.
    verdict: &'static str,
    hint: &'static str,
}

/// The first debug run, every other run is compared with.
const DEBUG: Configuration = Configuration {
    name: "debug",
    release: false,
    one_cpu: false,
    uneven: false,
    verdict: "",
    hint: "",
};

/// Another run of the debug build, the same way: told apart from build differences.
const DEBUG_AGAIN: Configuration = Configuration {
    name: "debug again",
    release: false,
    one_cpu: false,
    uneven: false,
    verdict: "two runs of the same debug build differ",
    hint: "process-dependent state: hash-map order, addresses, clocks, thread timing or \
           randomness seeded by the process",
};

const CONFIGURATIONS: [Configuration; 3] = [
    Configuration {
        name: "release",
        release: true,
        one_cpu: false,
        uneven: false,
        verdict: "debug and release differ",
        hint: "code generation or build settings: `cfg!(debug_assertions)`, integer overflow \
               checks, fused multiply-add or float math outside sim_math",
    },
    Configuration {
        name: "release on one CPU",
        release: true,
        one_cpu: true,
        uneven: false,
        verdict: "the one-CPU run differs",
        hint: "results that depend on the thread count: parallel float reductions, work split \
               by thread, task completion order",
    },
    Configuration {
        name: "release in uneven frames",
        release: true,
        one_cpu: false,
        uneven: true,
        verdict: "the run in uneven frames differs",
        hint: "frame pacing reaching the simulation: the frame clock, or input or state changed \
               in `Update` instead of a fixed system",
    },
];

/// What to check.
pub struct Request<'a> {
    /// The project directory.
    pub project: &'a Path,
    /// Ticks to run (default: 120, or the whole replay).
    pub ticks: Option<u64>,
    /// An input script to feed every run.
    pub script: Option<&'a Path>,
    /// A replay whose frames and input to feed every run.
    pub replay: Option<&'a Path>,
    /// The target directory builds share (default: the project's `target`).
    pub target_dir: Option<&'a Path>,
    /// How many times the debug build runs (at least 2).
    pub repeat: u32,
    /// Where to write the HTML report.
    pub report: Option<&'a Path>,
    /// Print a JSON result.
    pub json: bool,
}

/// What the check found, for the HTML report.
#[derive(Default)]
struct Findings {
    /// The ticks run.
    ticks: u64,
    /// A lane per run.
    lanes: Vec<Lane>,
    /// Where runs first diverged.
    divergence: Option<DivergenceView>,
    /// The replay fed to every run.
    recording: Option<RecordingView>,
    /// The human-readable message of a divergence (the printed one may be JSON).
    message: Option<String>,
    /// Each run's deadline-job counts, `(run, counts)`, when the game requested jobs.
    jobs: Vec<(String, rusting_engine::jobs::JobStats)>,
}

/// The two builds every configuration runs one of.
struct Binaries {
    debug: PathBuf,
    release: PathBuf,
}

/// The files one run writes: its state-hash report, its standard error and its result.
struct RunFiles {
    report: PathBuf,
    stderr: PathBuf,
    result: PathBuf,
}

/// The run of one configuration for `ticks` with the input script at `script`, stepped in
/// lockstep, writing its state-hash report and result into `files` when it ends.
fn planned(
    request: &Request,
    binaries: &Binaries,
    configuration: &Configuration,
    ticks: u64,
    script: Option<&Path>,
    files: RunFiles,
) -> lockstep::Planned {
    let mut env = vec![
        ("RUSTING_HEADLESS_TICKS", ticks.to_string()),
        ("RUSTING_STATE_HASH_OUT", files.report.display().to_string()),
        // Every configuration names state a tick changed that nobody declared, release too.
        ("RUSTING_CHECK_UNDECLARED", "1".to_owned()),
        // And a change of the floating-point environment fails the run, naming its system.
        ("RUSTING_FLOAT_ENV", "error".to_owned()),
        ("RUSTING_LOCKSTEP", "1".to_owned()),
        ("RUSTING_RESULT_OUT", files.result.display().to_string()),
        (
            "RUSTING_HEADLESS_PACING",
            if configuration.uneven {
                "uneven"
            } else {
                "steady"
            }
            .to_owned(),
        ),
    ];
    if let Some(script) = script {
        env.push(("RUSTING_INPUT_SCRIPT", script.display().to_string()));
    }
    let executable = if configuration.release {
        &binaries.release
    } else {
        &binaries.debug
    };
    lockstep::Planned {
        name: configuration.name,
        command: GameRun {
            executable,
            project: request.project,
            env,
            one_cpu: configuration.one_cpu,
        }
        .command(),
        stderr: files.stderr,
        result: files.result,
    }
}

/// The report a finished run wrote.
fn report_of(configuration: &Configuration, out: &Path) -> Result<StateHashReport, Failure> {
    StateHashReport::load(out).map_err(|e| {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!(
                "{}: the run wrote no usable report: {e}",
                configuration.name
            ),
        )
    })
}

/// The first line of a divergence: which runs differ at `tick`.
fn between(tick: u64, configuration: &Configuration) -> String {
    if configuration.name == DEBUG_AGAIN.name {
        format!("tick {tick} differs between two runs of the same debug build")
    } else {
        format!(
            "tick {tick} differs between debug and {}",
            configuration.name
        )
    }
}

/// What every run is fed: an input script (as given, or a replay's frames written as one into
/// `work`), how many ticks to run, and the replay when there is one.
struct Input {
    script: Option<PathBuf>,
    ticks: u64,
    replay: Option<Replay>,
}

/// The input every run gets, checked: a replay must be of this project's seed and main scene.
fn input(request: &Request, project: &Project, work: &Path) -> Result<Input, Failure> {
    let bad = |code: &'static str, message: String| Failure::bad_input(code, message);
    if let Some(script) = request.script {
        // Checked here, before anything builds: a broken script is bad input, not a failed run.
        InputScript::load(script).map_err(|e| bad("SCRIPT_INVALID", e.to_string()))?;
        return Ok(Input {
            script: Some(script.to_owned()),
            ticks: request.ticks.unwrap_or(DEFAULT_TICKS),
            replay: None,
        });
    }
    let Some(path) = request.replay else {
        return Ok(Input {
            script: None,
            ticks: request.ticks.unwrap_or(DEFAULT_TICKS),
            replay: None,
        });
    };
    let replay = Replay::load(path).map_err(|e| bad("REPLAY_INVALID", e.to_string()))?;
    if replay.seed != project.manifest.seed || replay.start_tick != 0 {
        return Err(bad(
            "REPLAY_INVALID",
            format!(
                "{}: recorded with seed {} from tick {}, but the project starts from tick 0 with seed {}",
                path.display(),
                replay.seed,
                replay.start_tick,
                project.manifest.seed
            ),
        ));
    }
    // The scene the replay was recorded with must be the project's main scene as it is now.
    if let Some(recorded) = &replay.scene {
        let located = LocatedScene::load(&project.root, &project.manifest.main_scene)
            .map_err(|e| bad("SCENE_INVALID", e.to_string()))?;
        let loaded = SceneIdentity::of(located.name.clone(), &located.cooked);
        if *recorded != loaded {
            return Err(bad(
                "REPLAY_INVALID",
                format!(
                    "{}: recorded with scene `{}` ({}), but the project's main scene is `{}` ({})",
                    path.display(),
                    recorded.name,
                    recorded.cooked_hash,
                    loaded.name,
                    loaded.cooked_hash
                ),
            ));
        }
    }
    // The runs are fed the replay as an input script, which carries frames and input only.
    if let Some(first) = replay.outside.first() {
        return Err(bad(
            "REPLAY_INVALID",
            format!(
                "{}: the replay holds results from outside the simulation (the first entered tick \
                 {}), which `rusting determinism --replay` cannot feed to its runs yet; check it \
                 with `rusting replay play`, which feeds them from the recording",
                path.display(),
                first.tick
            ),
        ));
    }
    let script = work.join("replay-input.json");
    let bytes = serde_json::to_vec(&replay.to_input_script()).expect("a script serializes");
    std::fs::write(&script, bytes).map_err(|e| {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!("{}: {e}", script.display()),
        )
    })?;
    let recorded = replay.end_tick() - replay.start_tick;
    Ok(Input {
        script: Some(script),
        ticks: request.ticks.unwrap_or(recorded).min(recorded),
        replay: Some(replay),
    })
}

/// The first tick at which `report` disagrees with the hashes `replay` recorded.
fn against_recording(replay: &Replay, report: &StateHashReport) -> Option<(u64, String, String)> {
    let recorded: std::collections::BTreeMap<u64, &String> = replay
        .hashes
        .iter()
        .map(|(tick, hash)| (*tick, hash))
        .collect();
    report.ticks.iter().find_map(|tick| {
        let want = recorded.get(&tick.tick)?;
        (**want != tick.hash).then(|| (tick.tick, (*want).clone(), tick.hash.clone()))
    })
}

/// Ticks to run when neither `--ticks` nor a replay says.
const DEFAULT_TICKS: u64 = 120;

/// Runs the check; `Ok` with a summary when every configuration agrees.
pub fn check(request: &Request) -> Result<String, Failure> {
    let project = Project::open(request.project)
        .map_err(|e| Failure::bad_input("PROJECT_INVALID", e.to_string()))?;
    let mut inputs = Vec::new();
    inputs.extend(request.script.map(|p| ("--script", p)));
    inputs.extend(request.replay.map(|p| ("--replay", p)));
    let outputs: Vec<(&str, &Path)> = request
        .report
        .map(|p| ("--report", p))
        .into_iter()
        .collect();
    crate::outputs::check(&inputs, &outputs)?;
    let work = std::env::temp_dir().join(format!("rusting-determinism-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!("{}: {e}", work.display()),
        )
    })?;
    let mut findings = Findings::default();
    let result = check_in(request, &project, &work, &mut findings);
    let _ = std::fs::remove_dir_all(&work);
    let Some(path) = request.report else {
        return result;
    };
    let verdict = Verdict::of(&result, findings.message.as_deref());
    let mut facts = vec![
        ("project".to_owned(), request.project.display().to_string()),
        ("ticks".to_owned(), findings.ticks.to_string()),
    ];
    if let Some(script) = request.script {
        facts.push(("input script".to_owned(), script.display().to_string()));
    }
    if let Some(replay) = request.replay {
        facts.push(("replay".to_owned(), replay.display().to_string()));
    }
    for (run, jobs) in &findings.jobs {
        facts.push((format!("deadline jobs, {run}"), jobs.to_string()));
    }
    let report = HtmlReport {
        title: format!("rusting determinism: {}", project.manifest.name),
        facts,
        verdict,
        ticks: (1, findings.ticks.max(1)),
        lanes: findings.lanes,
        divergence: findings.divergence,
        recording: findings.recording,
    };
    crate::html_report::write(&report, path)?;
    result
}

/// The name of run `k` of `configurations`: repeats of the same configuration are numbered.
fn run_name(configurations: &[&Configuration], k: usize) -> String {
    let name = configurations[k].name;
    let same = configurations.iter().filter(|c| c.name == name).count();
    if same < 2 {
        return name.to_owned();
    }
    let nth = configurations[..=k]
        .iter()
        .filter(|c| c.name == name)
        .count();
    format!("{name} {nth}")
}

fn check_in(
    request: &Request,
    project: &Project,
    work: &Path,
    findings: &mut Findings,
) -> Result<String, Failure> {
    let Input {
        script,
        ticks,
        replay,
    } = input(request, project, work)?;
    findings.ticks = ticks;
    findings.recording = replay
        .as_ref()
        .map(|r| RecordingView::of(r, rusting_engine::determinism::DEFAULT_SNAPSHOT_INTERVAL));
    let script = script.as_deref();
    let build = Build {
        project: request.project,
        target_dir: request.target_dir,
        window: false,
        net: false,
    };
    let binaries = Binaries {
        debug: build.build(Profile::Debug)?,
        release: build.build(Profile::Release)?,
    };
    // The same build again first, so a difference between two runs of one binary is told apart
    // from a difference between builds.
    let mut configurations: Vec<&Configuration> = vec![&DEBUG];
    configurations.extend(std::iter::repeat_n(
        &DEBUG_AGAIN,
        request.repeat.max(2) as usize - 1,
    ));
    configurations.extend(
        CONFIGURATIONS
            .iter()
            // Scripted input is frames of input; uneven pacing would change when input is seen.
            .filter(|c| script.is_none() || !c.uneven),
    );
    let report_path =
        |k: usize, c: &Configuration| work.join(format!("{k}-{}.json", c.name.replace(' ', "-")));
    let plans = configurations
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let files = RunFiles {
                report: report_path(k, c),
                stderr: work.join(format!("{k}-stderr.txt")),
                result: work.join(format!("{k}-result.json")),
            };
            planned(request, &binaries, c, ticks, script, files)
        })
        .collect();
    let (ending, lanes) = lockstep::run(plans, work)?;
    let names: Vec<String> = (0..configurations.len())
        .map(|k| run_name(&configurations, k))
        .collect();
    findings.lanes = lanes
        .iter()
        .enumerate()
        .map(|(k, lane)| match k {
            0 => Lane::reference(&names[0], lane),
            _ => Lane::compared(&names[k], &names[0], &lanes[0], lane),
        })
        .collect();
    if let Some(last) = lanes.iter().flatten().map(|(t, _)| *t).max() {
        findings.ticks = findings.ticks.max(last);
    }
    let mut diverged = |tick: u64,
                        configuration: &Configuration,
                        blame: String,
                        difference: Option<&DetailDifference>| {
        let mut message = format!(
            "{}{blame}\n{}; usual causes: {}",
            between(tick, configuration),
            configuration.verdict,
            configuration.hint
        );
        findings.message = Some(message.clone());
        if request.json {
            let entity = difference.and_then(|d| d.entity.as_ref());
            let field = difference.and_then(|d| d.field.as_ref());
            message = serde_json::json!({
                "result": "diverged",
                "code": "DETERMINISM_DIVERGED",
                "tick": tick,
                "configuration": configuration.name,
                "verdict": configuration.verdict,
                "hint": configuration.hint,
                "entity": entity.and_then(|e| e.name.clone()),
                "scene_id": entity.and_then(|e| e.scene_id),
                "sim_id": entity.map(|e| e.sim_id),
                "component": difference.and_then(|d| d.component.clone()),
                "field": field.map(|f| f.path.clone()),
                "values": field.map(|f| [f.first.clone(), f.second.clone()]),
            })
            .to_string();
        }
        Failure::new("DETERMINISM_DIVERGED", Outcome::Failed, message)
    };
    match ending {
        lockstep::Ending::Agreed => {}
        lockstep::Ending::Diverged {
            tick,
            index,
            difference,
            divergence,
        } => {
            let configuration = configurations[index];
            let lockstep::Divergence { details, tracks } = *divergence;
            let view = DivergenceView::new(
                tick,
                [&names[0], &names[index]],
                [&details[0], &details[1]],
                difference.as_deref(),
                tracks,
            );
            let failure = diverged(
                tick,
                configuration,
                crate::blame::describe(difference.as_deref()),
                difference.as_deref(),
            );
            findings.divergence = Some(view);
            return Err(failure);
        }
        lockstep::Ending::OutOfStep { tick, index } => {
            let configuration = configurations[index];
            return Err(diverged(
                tick.unwrap_or(0),
                configuration,
                ": the runs ran a different number of ticks".to_owned(),
                None,
            ));
        }
    }
    // Every CPU hash agreed tick by tick; the reports add GPU hashes, which arrive later.
    let reports = configurations
        .iter()
        .enumerate()
        .map(|(k, c)| report_of(c, &report_path(k, c)))
        .collect::<Result<Vec<_>, _>>()?;
    findings.jobs = reports
        .iter()
        .enumerate()
        .filter_map(|(k, report)| Some((names[k].clone(), report.jobs?)))
        .collect();
    let reference = &reports[0];
    for (configuration, report) in configurations.iter().zip(&reports).skip(1) {
        if let Some(tick) = reference
            .ticks
            .iter()
            .zip(&report.ticks)
            .find(|(a, b)| a != b)
            .map(|(a, _)| a.tick)
        {
            return Err(diverged(
                tick,
                configuration,
                ": the GPU bodies' hash differs".to_owned(),
                None,
            ));
        }
    }
    // Every configuration agrees; a replay's recording must agree with them too.
    if let Some(replay) = &replay
        && let Some((tick, recorded, computed)) = against_recording(replay, reference)
    {
        let recorded_lane: Vec<(u64, u64)> = replay
            .hashes
            .iter()
            .filter_map(|(t, h)| Some((*t, u64::from_str_radix(h, 16).ok()?)))
            .collect();
        findings.lanes.push(Lane::compared(
            "recorded in the replay",
            &names[0],
            &lanes[0],
            &recorded_lane,
        ));
        findings.message = Some(format!(
            "tick {tick}: every configuration computed {computed}, but the replay recorded \
             {recorded}"
        ));
        let message = if request.json {
            serde_json::json!({
                "result": "diverged",
                "code": "REPLAY_DIVERGED",
                "tick": tick,
                "recorded": recorded,
                "computed": computed,
            })
            .to_string()
        } else {
            format!(
                "tick {tick}: every configuration computed {computed}, but the replay recorded \
                 {recorded} (the game changed since it was recorded, or the recording came from \
                 a build that was not deterministic); `rusting replay play` on the replay names \
                 the entity, component and field"
            )
        };
        return Err(Failure::new("REPLAY_DIVERGED", Outcome::Failed, message));
    }
    let mut distinct: Vec<&str> = configurations.iter().map(|c| c.name).collect();
    distinct.dedup();
    Ok(if request.json {
        serde_json::json!({
            "result": "same",
            "project": project.manifest.name,
            "ticks": ticks,
            "configurations": distinct,
            "jobs": findings.jobs.iter().map(|(run, jobs)| serde_json::json!({
                "run": run,
                "delivered": jobs.delivered,
                "late": jobs.late,
                "stall_ns": jobs.stall_ns,
            })).collect::<Vec<_>>(),
        })
        .to_string()
    } else {
        format!(
            "{}: {} agree on all {} ticks{}{}",
            project.manifest.name,
            distinct.join(", "),
            ticks,
            if cfg!(target_os = "linux") && !taskset_available() {
                " (taskset is missing: the one-CPU run had one worker thread but was not pinned \
                 to one CPU)"
            } else {
                ""
            },
            job_lines(&findings.jobs)
        )
    })
}

/// One line per run with its deadline-job counts (empty when the game requested none): how
/// each configuration's machine kept up, which never changes a result.
fn job_lines(jobs: &[(String, rusting_engine::jobs::JobStats)]) -> String {
    jobs.iter()
        .map(|(run, jobs)| format!("\n  {run}: {jobs}"))
        .collect()
}

//! `rusting determinism <project> --ticks N`: the same game, built and run several ways, must give
//! the same world-state hash after every tick.
//!
//! The configurations (`configurations`): a debug build (run twice in the first round: two runs of
//! the same binary that differ point at process-dependent state, not at the build), a release
//! build, the release build again on one worker thread (`RUSTING_THREADS=1`: bevy's task pools and
//! rayon run one thread, on every operating system; on Linux the run is also pinned to CPU 0 with
//! `taskset --cpu-list 0` where it is installed), and the release build in uneven frames (3, 1/2,
//! 1/2, 0 and 5 ticks; a script's input is then stamped by tick, so it means what it meant). The
//! two builds share one target directory and run one after the other, and each binary must say it
//! was built from this project (`game_identity`). Then the configurations run at the same time,
//! headless, in lockstep (see `lockstep`): each announces every tick's hash and waits. Rounds of
//! runs repeat as a time budget allows (`rounds`), each later round held to the first round's
//! reference lane, so a race that shows in one run of several is caught by default.
//!
//! At the first tick where a run differs, the two runs write their state of that tick down to the
//! field, and the blame names the entity, component and field with both values, from the very
//! processes that differed. Before a cause is named, both configurations are re-run to that tick
//! (`confirm`): a configuration that disagrees with itself makes the verdict a race, never a build
//! difference, and the re-runs name the first fixed system whose output differs. With `--replay`,
//! every run is fed the replay's frames and input (as an input script, see `input`), and its
//! recorded hashes must agree with what the runs compute. With `--report`, the outcome is also
//! written as an HTML page (see `html_report`).

mod configurations;
mod confirm;
mod input;
mod rounds;

use std::path::Path;
use std::time::{Duration, Instant};

use rusting_engine::game::project::Project;
use rusting_engine::record::{DetailDifference, StateHashReport};

use crate::exit::{Failure, Outcome};
use crate::game_build::{Build, Profile, taskset_available, tick_bar};
use crate::html_report::{DivergenceView, HtmlReport, Lane, RecordingView, Verdict};
use crate::lockstep;
use configurations::{
    Binaries, CONFIGURATIONS, Configuration, DEBUG, DEBUG_AGAIN, RACE_HINT, RACE_VERDICT, Runs,
    run_name,
};
use confirm::{Confirmation, SELF_CHECK_RUNS, Side};
use input::{Input, against_recording};
use rounds::Rounds;

/// From this many ticks on, a check shows its progress on a terminal (a minute at 60 Hz).
const PROGRESS_FROM_TICKS: u64 = 3600;

/// What to check.
pub struct Request<'a> {
    /// The project directory.
    pub project: &'a Path,
    /// Ticks to run (default: 120, or the whole replay).
    pub ticks: Option<u64>,
    /// With a replay: the tick to run up to (the replay's start tick plus the ticks run).
    pub until: Option<u64>,
    /// An input script to feed every run.
    pub script: Option<&'a Path>,
    /// A replay whose frames and input to feed every run.
    pub replay: Option<&'a Path>,
    /// The target directory builds share (default: the project's `target`).
    pub target_dir: Option<&'a Path>,
    /// How many rounds of runs (`None`: as many as the time budget allows, see `rounds`).
    pub repeat: Option<u32>,
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

/// The report a finished run wrote.
fn report_of(name: &str, out: &Path) -> Result<StateHashReport, Failure> {
    StateHashReport::load(out).map_err(|e| {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!("{name}: the run wrote no usable report: {e}"),
        )
    })
}

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

/// The configurations of round `round`: the first runs the debug build twice.
fn round_configurations(round: u32) -> Vec<&'static Configuration> {
    let mut configurations: Vec<&Configuration> = vec![&DEBUG];
    if round == 1 {
        configurations.push(&DEBUG_AGAIN);
    }
    configurations.extend(CONFIGURATIONS.iter());
    configurations
}

/// What one check knows while its rounds run.
struct Check<'a> {
    request: &'a Request<'a>,
    runs: Runs<'a>,
    work: &'a Path,
    ticks: u64,
    /// The first round's first run: its lane and report, which every later run is held to.
    reference: Option<(Vec<(u64, u64)>, StateHashReport)>,
    /// How many runs of each configuration agreed, by name, in first-seen order.
    agreed: Vec<(&'static str, u32)>,
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
    } = input::input(request, project, work)?;
    findings.ticks = ticks;
    findings.recording = replay
        .as_ref()
        .map(|r| RecordingView::of(r, rusting_engine::determinism::DEFAULT_SNAPSHOT_INTERVAL));
    let build = Build {
        project: request.project,
        target_dir: request.target_dir,
        window: false,
        net: false,
    };
    let binaries = Binaries {
        debug: crate::game_identity::build(&build, Profile::Debug)?,
        release: crate::game_identity::build(&build, Profile::Release)?,
    };
    let mut check = Check {
        request,
        runs: Runs {
            project: request.project,
            binaries: &binaries,
            script: script.as_deref(),
        },
        work,
        ticks,
        reference: None,
        agreed: Vec::new(),
    };
    let rounds = request.repeat.map_or(Rounds::Budgeted, Rounds::Fixed);
    let (mut done, mut spent) = (0u32, Duration::ZERO);
    loop {
        let started = Instant::now();
        check.round(done + 1, findings)?;
        let took = started.elapsed();
        done += 1;
        spent += took;
        if !rounds.another(done, spent, took) {
            break;
        }
    }
    let (reference_lane, reference) = check.reference.take().expect("the first round ran");
    // Every configuration agrees; a replay's recording must agree with them too.
    if let Some(replay) = &replay
        && let Some((tick, recorded, computed)) = against_recording(replay, &reference)
    {
        // A compact replay keeps the low 32 bits of each hash: the reference is compared as
        // wide as the recording.
        let short = replay.hashes.first().is_some_and(|(_, h)| h.len() == 8);
        let reference_lane: Vec<(u64, u64)> = reference_lane
            .iter()
            .map(|&(t, h)| (t, if short { h & 0xffff_ffff } else { h }))
            .collect();
        let recorded_lane: Vec<(u64, u64)> = replay
            .hashes
            .iter()
            .filter_map(|(t, h)| Some((*t, u64::from_str_radix(h, 16).ok()?)))
            .collect();
        findings.lanes.push(Lane::compared(
            "recorded in the replay",
            "debug",
            &reference_lane,
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
    let total: u32 = check.agreed.iter().map(|(_, n)| n).sum();
    let counts: Vec<String> = check
        .agreed
        .iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    Ok(if request.json {
        serde_json::json!({
            "result": "same",
            "project": project.manifest.name,
            "ticks": ticks,
            "rounds": done,
            "configurations": check.agreed.iter().map(|(name, runs)| serde_json::json!({
                "name": name,
                "runs": runs,
            })).collect::<Vec<_>>(),
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
            "{}: {total} runs agree on all {ticks} ticks: {} ({done} round{} in {:.1} s){}{}",
            project.manifest.name,
            counts.join(", "),
            if done == 1 { "" } else { "s" },
            spent.as_secs_f64(),
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

impl Check<'_> {
    /// Runs round `round` in lockstep; `Err` with the verdict when a run differs.
    fn round(&mut self, round: u32, findings: &mut Findings) -> Result<(), Failure> {
        let configurations = round_configurations(round);
        let work = self.work;
        let files = |k: usize, what: &str| work.join(format!("r{round}-{k}-{what}"));
        let plans = configurations
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let env = vec![
                    (
                        "RUSTING_STATE_HASH_OUT",
                        files(k, "report.json").display().to_string(),
                    ),
                    ("RUSTING_LOCKSTEP", "1".to_owned()),
                    (
                        "RUSTING_RESULT_OUT",
                        files(k, "result.json").display().to_string(),
                    ),
                ];
                lockstep::Planned {
                    name: c.name,
                    command: self.runs.command(c, self.ticks, env),
                    stderr: files(k, "stderr.txt"),
                    result: files(k, "result.json"),
                }
            })
            .collect();
        let reference_lane = self.reference.as_ref().map(|(lane, _)| lane.as_slice());
        // A long check (a recording's minutes) shows a bar of the ticks every run agreed on, on
        // a terminal only.
        let bar = (self.ticks >= PROGRESS_FROM_TICKS
            && std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .then(|| tick_bar(self.ticks, &format!("round {round}: ")));
        let ran = lockstep::run(plans, work, reference_lane, bar.as_ref());
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        let (ending, lanes) = ran?;
        let names: Vec<String> = (0..configurations.len())
            .map(|k| match round {
                1 => run_name(&configurations, k),
                _ => format!("{} (round {round})", configurations[k].name),
            })
            .collect();
        let (reference_name, reference) = match reference_lane {
            None => (names[0].as_str(), lanes[0].as_slice()),
            Some(reference) => ("debug (round 1)", reference),
        };
        // The report shows the first round's lanes, or the round that diverged.
        if round == 1 || !matches!(ending, lockstep::Ending::Agreed) {
            findings.lanes = vec![Lane::reference(reference_name, reference)];
            let first = usize::from(reference_lane.is_none());
            for k in first..lanes.len() {
                findings.lanes.push(Lane::compared(
                    &names[k],
                    reference_name,
                    reference,
                    &lanes[k],
                ));
            }
        }
        if let Some(last) = lanes.iter().flatten().map(|(t, _)| *t).max() {
            findings.ticks = findings.ticks.max(last);
        }
        match ending {
            lockstep::Ending::Agreed => {}
            lockstep::Ending::Diverged {
                tick,
                pair,
                difference,
                divergence,
            } => {
                let lockstep::Divergence { details, plots } = *divergence;
                findings.divergence = Some(DivergenceView::new(
                    tick,
                    [&names[pair[0]], &names[pair[1]]],
                    [&details[0], &details[1]],
                    difference.as_deref(),
                    plots,
                ));
                let sides = pair.map(|k| Side {
                    configuration: configurations[k],
                    lane: &lanes[k],
                });
                return Err(self.diverged(round, tick, sides, difference.as_deref(), findings));
            }
            lockstep::Ending::AllLeftTheReference { tick } => {
                let blame = format!(
                    " (the first round's and round {round}'s): every run of round {round} took \
                     the other result, so no run holds the first round's state and no field is \
                     named"
                );
                let verdict = Blame {
                    line: format!(
                        "tick {tick} differs between two runs of the same debug build{blame}"
                    ),
                    system: None,
                    race: Some("two runs of the debug build differ".to_owned()),
                    configuration: &DEBUG,
                };
                return Err(self.failure(tick, verdict, None, findings));
            }
            lockstep::Ending::OutOfStep { tick, index } => {
                let verdict = Blame {
                    line: format!(
                        "tick {} differs between {} and {}: the runs ran a different number of \
                         ticks",
                        tick.unwrap_or(0),
                        reference_name,
                        names[index]
                    ),
                    system: None,
                    race: None,
                    configuration: configurations[index],
                };
                return Err(self.failure(tick.unwrap_or(0), verdict, None, findings));
            }
        }
        // Every CPU hash agreed tick by tick; the reports add GPU hashes, which arrive later.
        let reports = configurations
            .iter()
            .enumerate()
            .map(|(k, c)| report_of(c.name, &files(k, "report.json")))
            .collect::<Result<Vec<_>, _>>()?;
        if round == 1 {
            findings.jobs = reports
                .iter()
                .enumerate()
                .filter_map(|(k, report)| Some((names[k].clone(), report.jobs?)))
                .collect();
        }
        let reference_report = match &self.reference {
            Some((_, report)) => report,
            None => &reports[0],
        };
        for (configuration, report) in configurations.iter().zip(&reports) {
            if let Some(tick) = reference_report
                .ticks
                .iter()
                .zip(&report.ticks)
                .find(|(a, b)| a != b)
                .map(|(a, _)| a.tick)
            {
                let verdict = Blame {
                    line: format!(
                        "tick {tick} differs between {reference_name} and {}: the GPU bodies' \
                         hash differs",
                        configuration.name
                    ),
                    system: None,
                    race: (!configuration.release)
                        .then(|| "two runs of the debug build differ".to_owned()),
                    configuration,
                };
                return Err(self.failure(tick, verdict, None, findings));
            }
        }
        for configuration in &configurations {
            match self
                .agreed
                .iter_mut()
                .find(|(name, _)| *name == configuration.name)
            {
                Some((_, n)) => *n += 1,
                None => self.agreed.push((configuration.name, 1)),
            }
        }
        // `debug again` is the debug build too.
        if let Some(again) = self.agreed.iter().position(|(n, _)| *n == DEBUG_AGAIN.name) {
            let (_, n) = self.agreed.remove(again);
            if let Some((_, debug)) = self.agreed.iter_mut().find(|(name, _)| *name == DEBUG.name) {
                *debug += n;
            }
        }
        if self.reference.is_none() {
            let report = reports.into_iter().next().expect("a round has runs");
            self.reference = Some((lanes.into_iter().next().unwrap_or_default(), report));
        }
        Ok(())
    }

    /// The verdict on two runs that parted at `tick` (`sides[0]` holds the reference state):
    /// re-runs decide between a race and a build difference and name the system.
    fn diverged(
        &self,
        round: u32,
        tick: u64,
        sides: [Side; 2],
        difference: Option<&DetailDifference>,
        findings: &mut Findings,
    ) -> Failure {
        let [holder, differs] = [sides[0].configuration, sides[1].configuration];
        // Two runs of one build, or a debug run that left the first round's debug state.
        let same_build = holder.same_as(differs) || !differs.release;
        let line = if same_build {
            let rounds = if round > 1 {
                format!(" (the first round's and round {round}'s)")
            } else {
                String::new()
            };
            format!(
                "tick {tick} differs between two runs of the same {} build{rounds}{}",
                if differs.release { "release" } else { "debug" },
                crate::blame::describe(difference)
            )
        } else {
            format!(
                "tick {tick} differs between {} and {}{}",
                holder.name,
                differs.name,
                crate::blame::describe(difference)
            )
        };
        let confirmation = confirm::confirm(&self.runs, self.work, tick, sides, !same_build);
        let Confirmation {
            race,
            system,
            difference: system_difference,
        } = match confirmation {
            Ok(confirmation) => confirmation,
            Err(failure) => return failure,
        };
        let race = if same_build {
            Some(format!(
                "two runs of the {} build differ",
                if differs.release { "release" } else { "debug" }
            ))
        } else {
            race.map(|(name, at)| {
                format!("a re-run of {name} disagreed with its own first run at tick {at}")
            })
        };
        let verdict = Blame {
            line,
            system: Some((system, system_difference)),
            race,
            configuration: differs,
        };
        self.failure(tick, verdict, difference, findings)
    }

    /// The failure a verdict makes, printed as text or JSON; the text is kept for the report.
    fn failure(
        &self,
        tick: u64,
        verdict: Blame,
        difference: Option<&DetailDifference>,
        findings: &mut Findings,
    ) -> Failure {
        let (cause, hint) = match &verdict.race {
            Some(race) => (format!("{RACE_VERDICT} ({race})"), RACE_HINT),
            None => (
                format!(
                    "{}, and each reproduces its own result in {SELF_CHECK_RUNS} more runs",
                    verdict.configuration.verdict
                ),
                verdict.configuration.hint,
            ),
        };
        let system_line = verdict
            .system
            .as_ref()
            .map(|(line, _)| format!("\n{line}"))
            .unwrap_or_default();
        let mut message = format!(
            "{}{system_line}\n{cause}; usual causes: {hint}",
            verdict.line
        );
        findings.message = Some(message.clone());
        if self.request.json {
            let entity = difference.and_then(|d| d.entity.as_ref());
            let field = difference.and_then(|d| d.field.as_ref());
            let system = verdict.system.as_ref().and_then(|(_, d)| match d {
                Some(rusting_engine::runtime::SystemDifference::After {
                    system, schedule, ..
                }) => Some(serde_json::json!({ "system": system, "schedule": schedule })),
                _ => None,
            });
            message = serde_json::json!({
                "result": "diverged",
                "code": "DETERMINISM_DIVERGED",
                "tick": tick,
                "configuration": verdict.configuration.name,
                "race": verdict.race.is_some(),
                "verdict": cause,
                "hint": hint,
                "system": system,
                "entity": entity.and_then(|e| e.name.clone()),
                "scene_id": entity.and_then(|e| e.scene_id),
                "sim_id": entity.map(|e| e.sim_id),
                "component": difference.and_then(|d| d.component.clone()),
                "field": field.map(|f| f.path.clone()),
                "values": field.map(|f| [f.first.clone(), f.second.clone()]),
                "differences": difference.map_or_else(Vec::new, |d| {
                    d.listed.iter().map(crate::blame::differing_json).collect()
                }),
                "unlisted": difference.map_or(0, |d| d.unlisted),
            })
            .to_string();
        }
        Failure::new("DETERMINISM_DIVERGED", Outcome::Failed, message)
    }
}

/// What a divergence is blamed on.
struct Blame {
    /// The first line: the tick, the runs, and the entity, component and field.
    line: String,
    /// The line naming the system (or why none is), and the difference it names.
    system: Option<(String, Option<rusting_engine::runtime::SystemDifference>)>,
    /// Why it is a race, when it is one.
    race: Option<String>,
    /// The configuration that differs (its verdict and hint when it is not a race).
    configuration: &'static Configuration,
}

/// One line per run with its deadline-job counts (empty when the game requested none): how
/// each configuration's machine kept up, which never changes a result.
fn job_lines(jobs: &[(String, rusting_engine::jobs::JobStats)]) -> String {
    jobs.iter()
        .map(|(run, jobs)| format!("\n  {run}: {jobs}"))
        .collect()
}

//! Running the configurations of `rusting determinism` in lockstep, so that blame for a divergence
//! comes from the very runs that diverged.
//!
//! Every run is started with `RUSTING_LOCKSTEP=1` (see `rusting_engine::determinism::lockstep`):
//! after each tick it prints `rusting-tick <tick> <hash>` and waits. This module reads one such
//! line from every run, and when all hashes agree tells them all `next`. At the first tick where
//! a run's hash differs from the first run's (or, given a reference lane from an earlier round,
//! from the reference's), it asks that run and one that holds the reference state for their
//! `StateDetail` of that tick (`detail <file>`), stops the others, and compares the two details:
//! the entity,
//! component and field come from the processes that differed, never from a rerun that might not
//! differ again. For the HTML report it then asks both for the blamed entity's recent positions
//! (`track`), lets the two run on up to [`AFTER_TICKS`] ticks, asks again, and stops them; what
//! goes wrong after the divergence only shortens the plot. Every hash each run announced is kept,
//! as the report's lanes. Standard error of each run goes to a file, so a chatty game cannot block
//! on a full pipe; any other line a game prints on standard output is skipped.
//!
//! This module must never decide verdicts or wording; it reports where runs parted.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use std::collections::BTreeMap;

use rusting_engine::determinism::lockstep::{TICK_LINE, Track};
use rusting_engine::record::{DetailDifference, StateDetail, compare_details};

use crate::exit::{Failure, Outcome};
use crate::game_build::{run_failure, take_result};
use crate::html_report::{MAX_PLOTTED, PlottedEntity};

/// One run to start: its name, its command (environment set), and where its standard error goes.
pub struct Planned {
    /// The configuration's name, for messages.
    pub name: &'static str,
    /// The command, with `RUSTING_LOCKSTEP=1` among its variables.
    pub command: Command,
    /// The file its standard error is written to.
    pub stderr: PathBuf,
    /// The file it writes its `RunResult` to (`RUSTING_RESULT_OUT`).
    pub result: PathBuf,
}

struct Running {
    name: &'static str,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: PathBuf,
    result: PathBuf,
    finished: bool,
}

impl Running {
    /// The next tick the run announces, or `None` when it has ended (successfully: a failed run
    /// is a [`Failure`]).
    fn next_tick(&mut self) -> Result<Option<(u64, String)>, Failure> {
        let mut line = String::new();
        loop {
            line.clear();
            let read = self
                .stdout
                .read_line(&mut line)
                .map_err(|e| self.failed(&e.to_string()))?;
            if read == 0 {
                self.wait()?;
                self.finished = true;
                return Ok(None);
            }
            let mut words = line.split_whitespace();
            if words.next() != Some(TICK_LINE) {
                continue;
            }
            let tick = words.next().and_then(|t| t.parse().ok());
            let hash = words.next();
            if let (Some(tick), Some(hash)) = (tick, hash) {
                return Ok(Some((tick, hash.to_owned())));
            }
        }
    }

    fn send(&mut self, command: &str) -> Result<(), Failure> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Ok(());
        };
        stdin
            .write_all(command.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .map_err(|e| self.failed(&format!("cannot talk to the game: {e}")))
    }

    /// Waits for the run to end; a run that failed is a [`Failure`] with its last error line.
    fn wait(&mut self) -> Result<(), Failure> {
        self.stdin = None;
        let status = self.child.wait().map_err(|e| self.failed(&e.to_string()))?;
        if status.success() {
            return Ok(());
        }
        let stderr = std::fs::read(&self.stderr).unwrap_or_default();
        Err(run_failure(
            Some(self.name),
            take_result(&self.result),
            status,
            &stderr,
        ))
    }

    fn failed(&self, why: &str) -> Failure {
        Failure::new(
            "RUN_FAILED",
            Outcome::BuildOrRun,
            format!("the {} run failed: {why}", self.name),
        )
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.finished {
            self.stop();
        }
    }
}

/// How many ticks the two runs that diverged go on, for the report's plot.
pub const AFTER_TICKS: u64 = 30;

/// The two runs that diverged, as the report shows them.
pub struct Divergence {
    /// Both runs' state at the divergent tick (first run, then the one that differs).
    pub details: [StateDetail; 2],
    /// The entities that moved differently (at most `MAX_PLOTTED`), with their `(tick,
    /// translation)` in both runs around the divergent tick (empty tracks for one without a
    /// position).
    pub plots: Vec<PlottedEntity>,
}

/// Every run's announced `(tick, hash)`, in run order: the lanes of the report.
pub type Lanes = Vec<Vec<(u64, u64)>>;

/// How a lockstep check ended.
pub enum Ending {
    /// Every run announced the same hash on every tick and ended well.
    Agreed,
    /// Run `pair[1]` announced another hash at `tick` than run `pair[0]`, which holds the
    /// reference state: the first run, or with a reference lane a run that agrees with it.
    Diverged {
        /// The tick (ticks completed).
        tick: u64,
        /// The run holding the reference state, then the run that differs.
        pair: [usize; 2],
        /// Where the two runs' details of that tick differ (`None` when they agree in every
        /// field: the hashes differ in something the detail does not show).
        difference: Option<Box<DetailDifference>>,
        /// Both runs' state there, and the blamed entity's positions around it.
        divergence: Box<Divergence>,
    },
    /// With a reference lane: every run announced the same hash at `tick`, and it is not the
    /// reference's, so no run holds the reference state to compare with.
    AllLeftTheReference {
        /// The tick.
        tick: u64,
    },
    /// Run `index` ended before the first run did, or announced another tick.
    OutOfStep {
        /// The last tick the first run announced, when it announced one.
        tick: Option<u64>,
        /// The index of the run out of step.
        index: usize,
    },
}

/// Starts every planned run and steps them in lockstep until they end or one differs; details are
/// written into `work`. With `reference` (an earlier run's lane of the same first configuration),
/// every run must also announce the reference's hash. `progress` is moved to every tick all runs
/// agree on. Returns how it ended and every hash each run announced.
pub fn run(
    planned: Vec<Planned>,
    work: &Path,
    reference: Option<&[(u64, u64)]>,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<(Ending, Lanes), Failure> {
    let reference: Option<BTreeMap<u64, u64>> =
        reference.map(|lane| lane.iter().copied().collect());
    let mut runs = Vec::with_capacity(planned.len());
    for mut plan in planned {
        let stderr = std::fs::File::create(&plan.stderr).map_err(|e| {
            Failure::new(
                "RUN_FAILED",
                Outcome::BuildOrRun,
                format!("{}: {e}", plan.stderr.display()),
            )
        })?;
        let mut child = plan
            .command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| {
                Failure::new(
                    "RUN_FAILED",
                    Outcome::BuildOrRun,
                    format!("{}: cannot start the game: {e}", plan.name),
                )
            })?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        runs.push(Running {
            name: plan.name,
            child,
            stdin,
            stdout,
            stderr: plan.stderr,
            result: plan.result,
            finished: false,
        });
    }
    let mut lanes: Lanes = vec![Vec::new(); runs.len()];
    loop {
        let mut announced = Vec::with_capacity(runs.len());
        for (run, lane) in runs.iter_mut().zip(&mut lanes) {
            let next = run.next_tick()?;
            if let Some((tick, hash)) = &next {
                lane.push((*tick, u64::from_str_radix(hash, 16).unwrap_or_default()));
            }
            announced.push(next);
        }
        if announced.iter().all(Option::is_none) {
            return Ok((Ending::Agreed, lanes));
        }
        let Some((tick, hash)) = announced[0].clone() else {
            let index = announced.iter().position(Option::is_some).unwrap_or(0);
            return Ok((Ending::OutOfStep { tick: None, index }, lanes));
        };
        if let Some(index) = announced
            .iter()
            .position(|a| a.as_ref().is_none_or(|(t, _)| *t != tick))
        {
            return Ok((
                Ending::OutOfStep {
                    tick: Some(tick),
                    index,
                },
                lanes,
            ));
        }
        let hash_of = |k: usize| announced[k].as_ref().map(|(_, h)| h.as_str());
        // The state every run must reach: the reference's, else the first run's.
        let wanted = match reference.as_ref().and_then(|r| r.get(&tick)) {
            Some(&want) => format!("{want:016x}"),
            None => hash.clone(),
        };
        let Some(differs) = (0..runs.len()).find(|&k| hash_of(k) != Some(wanted.as_str())) else {
            if let Some(bar) = progress {
                bar.set_position(tick);
            }
            for run in &mut runs {
                run.send("next")?;
            }
            continue;
        };
        let Some(holder) = (0..runs.len()).find(|&k| hash_of(k) == Some(wanted.as_str())) else {
            return Ok((Ending::AllLeftTheReference { tick }, lanes));
        };
        let pair = [holder, differs];
        for (k, run) in runs.iter_mut().enumerate() {
            if !pair.contains(&k) {
                run.stop();
                run.finished = true;
            }
        }
        let details = pair.map(|k| work.join(format!("detail-{k}.json")));
        for (k, file) in pair.into_iter().zip(&details) {
            runs[k].send(&format!("detail {}", file.display()))?;
        }
        // A run that ends instead of writing its detail has failed, and says why.
        for (k, file) in pair.into_iter().zip(&details) {
            wait_for_file(&mut runs[k], file)?;
        }
        let load = |file: &PathBuf| {
            StateDetail::load(file)
                .map_err(|e| Failure::new("RUN_FAILED", Outcome::BuildOrRun, e.to_string()))
        };
        let (first, second) = (load(&details[0])?, load(&details[1])?);
        let difference = compare_details(&first, &second).map(Box::new);
        let plotted = difference
            .as_ref()
            .map(|d| d.plotted_entities(MAX_PLOTTED))
            .unwrap_or_default();
        let sim_ids: Vec<u64> = plotted.iter().map(|(sim_id, _)| *sim_id).collect();
        let tracks = if sim_ids.is_empty() {
            Vec::new()
        } else {
            follow(&mut runs, pair, &mut lanes, &sim_ids, work)
        };
        let plots = plotted
            .into_iter()
            .zip(tracks)
            .map(|((_, label), tracks)| PlottedEntity { label, tracks })
            .collect();
        for k in pair {
            let _ = runs[k].send("stop");
            let _ = runs[k].child.wait();
            runs[k].finished = true;
        }
        return Ok((
            Ending::Diverged {
                tick,
                pair,
                difference,
                divergence: Box::new(Divergence {
                    details: [first, second],
                    plots,
                }),
            },
            lanes,
        ));
    }
}

/// Waits until a run has written `file` (it then waits for the next command), or has ended.
fn wait_for_file(run: &mut Running, file: &Path) -> Result<(), Failure> {
    loop {
        if file.exists() {
            return Ok(());
        }
        if let Some(status) = run
            .child
            .try_wait()
            .map_err(|e| run.failed(&e.to_string()))?
        {
            run.finished = true;
            let stderr = std::fs::read(&run.stderr).unwrap_or_default();
            return Err(run_failure(
                Some(run.name),
                take_result(&run.result),
                status,
                &stderr,
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// The positions of each entity of `sim_ids` in the two runs of `pair` around the divergent tick:
/// their rings now, and after each of up to [`AFTER_TICKS`] more ticks (whose hashes join
/// `lanes`), in `sim_ids`' order. Anything that goes wrong only shortens the tracks.
fn follow(
    runs: &mut [Running],
    pair: [usize; 2],
    lanes: &mut Lanes,
    sim_ids: &[u64],
    work: &Path,
) -> Vec<[crate::html_report::Track; 2]> {
    type Positions = BTreeMap<u64, [f32; 3]>;
    let mut tracks: Vec<[Positions; 2]> = vec![[BTreeMap::new(), BTreeMap::new()]; sim_ids.len()];
    let ask = |runs: &mut [Running], round: usize, tracks: &mut [[Positions; 2]]| {
        for (entity, &sim_id) in sim_ids.iter().enumerate() {
            for (side, k) in pair.into_iter().enumerate() {
                let file = work.join(format!("track-{k}-{sim_id}-{round}.json"));
                if runs[k]
                    .send(&format!("track {sim_id} {}", file.display()))
                    .is_err()
                    || wait_for_file(&mut runs[k], &file).is_err()
                {
                    continue;
                }
                if let Ok(track) = Track::load(&file) {
                    tracks[entity][side].extend(track.positions);
                }
            }
        }
    };
    ask(runs, 0, &mut tracks);
    // The ring is read after every step: a run that ends before AFTER_TICKS keeps what it showed.
    for round in 1..=AFTER_TICKS as usize {
        let mut going = true;
        for k in pair {
            going &= runs[k].send("next").is_ok();
        }
        for k in pair {
            match runs[k].next_tick() {
                Ok(Some((tick, hash))) => {
                    lanes[k].push((tick, u64::from_str_radix(&hash, 16).unwrap_or_default()));
                }
                _ => going = false,
            }
        }
        if !going {
            break;
        }
        ask(runs, round, &mut tracks);
    }
    tracks
        .into_iter()
        .map(|pair| pair.map(|t| t.into_iter().collect()))
        .collect()
}

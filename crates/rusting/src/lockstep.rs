//! Running the configurations of `rusting determinism` in lockstep, so that blame for a divergence
//! comes from the very runs that diverged.
//!
//! Every run is started with `RUSTING_LOCKSTEP=1` (see `rusting_engine::determinism::lockstep`):
//! after each tick it prints `rusting-tick <tick> <hash>` and waits. This module reads one such
//! line from every run, and when all hashes agree tells them all `next`. At the first tick where
//! a run's hash differs from the first run's, it asks those two runs for their `StateDetail` of
//! that tick (`detail <file>`), stops the others, and compares the two details: the entity,
//! component and field come from the processes that differed, never from a rerun that might not
//! differ again. Standard error of each run goes to a file, so a chatty game cannot block on a
//! full pipe; any other line a game prints on standard output is skipped.
//!
//! This module must never decide verdicts or wording; it reports where runs parted.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use rusting_engine::determinism::lockstep::TICK_LINE;
use rusting_engine::determinism::{DetailDifference, StateDetail, compare_details};

use crate::exit::{Failure, Outcome};
use crate::game_build::{run_failure, take_result};

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

/// How a lockstep check ended.
pub enum Ending {
    /// Every run announced the same hash on every tick and ended well.
    Agreed,
    /// Run `index` announced another hash than the first run at `tick`.
    Diverged {
        /// The tick (ticks completed).
        tick: u64,
        /// The index of the run that differs.
        index: usize,
        /// Where the two runs' details of that tick differ (`None` when they agree in every
        /// field: the hashes differ in something the detail does not show).
        difference: Option<DetailDifference>,
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
/// written into `work`.
pub fn run(planned: Vec<Planned>, work: &Path) -> Result<Ending, Failure> {
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
    loop {
        let mut announced = Vec::with_capacity(runs.len());
        for run in &mut runs {
            announced.push(run.next_tick()?);
        }
        if announced.iter().all(Option::is_none) {
            return Ok(Ending::Agreed);
        }
        let Some((tick, hash)) = announced[0].clone() else {
            let index = announced.iter().position(Option::is_some).unwrap_or(0);
            return Ok(Ending::OutOfStep { tick: None, index });
        };
        let differs = announced.iter().position(|a| match a {
            Some((t, h)) => *t != tick || *h != hash,
            None => true,
        });
        let Some(index) = differs else {
            for run in &mut runs {
                run.send("next")?;
            }
            continue;
        };
        if announced[index].as_ref().is_none_or(|(t, _)| *t != tick) {
            return Ok(Ending::OutOfStep {
                tick: Some(tick),
                index,
            });
        }
        let files = [
            work.join("detail-0.json"),
            work.join(format!("detail-{index}.json")),
        ];
        for (k, run) in runs.iter_mut().enumerate() {
            if k != 0 && k != index {
                run.stop();
                run.finished = true;
            }
        }
        for (k, file) in [0, index].into_iter().zip(&files) {
            runs[k].send(&format!("detail {}", file.display()))?;
        }
        for k in [0, index] {
            runs[k].wait()?;
            runs[k].finished = true;
        }
        let load = |file: &PathBuf| {
            StateDetail::load(file)
                .map_err(|e| Failure::new("RUN_FAILED", Outcome::BuildOrRun, e.to_string()))
        };
        let (first, second) = (load(&files[0])?, load(&files[1])?);
        return Ok(Ending::Diverged {
            tick,
            index,
            difference: compare_details(&first, &second),
        });
    }
}

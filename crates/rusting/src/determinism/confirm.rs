//! What `rusting determinism` does after two runs part at tick `T`, before it names a cause:
//! re-run both configurations to `T`, so that
//!
//! - a race is never called a build difference: each configuration runs [`SELF_CHECK_RUNS`] more
//!   times, and when any of them disagrees with that configuration's own first run at or before
//!   `T`, the same build gives different results from run to run, whatever the two configurations
//!   were. Only a difference that every configuration reproduces on its own is blamed on the
//!   build, the thread count or the frame pacing;
//! - the system is named: the first re-run of each configuration hashes the world after every
//!   fixed system of tick `T` (`RUSTING_SYSTEM_HASHES`, no cost in any other run), and when the two
//!   re-runs agree up to `T` and part at it, the first system after which their hashes differ is
//!   the one whose output differs. When the re-runs do not part at `T` again, that says a race,
//!   and no system is named.
//!
//! The re-runs run at once, free (not in lockstep), each to tick `T` only. This module must never
//! decide the verdict's wording beyond the lines it returns.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use rusting_engine::record::StateHashReport;
use rusting_engine::record::report::fold_gpu_hash;
use rusting_engine::runtime::{SystemDifference, SystemHashes};

use super::configurations::{Configuration, Runs};
use crate::exit::{Failure, Outcome};
use crate::game_build::{run_failure, take_result};

/// How many more times each configuration of a diverged pair runs to the divergent tick.
pub const SELF_CHECK_RUNS: usize = 5;

/// One side of a divergence: the configuration and every hash its run announced.
pub struct Side<'a> {
    pub configuration: &'static Configuration,
    pub lane: &'a [(u64, u64)],
}

/// What the re-runs showed.
pub struct Confirmation {
    /// When a configuration disagreed with its own first run: `(configuration, tick)`.
    pub race: Option<(&'static str, u64)>,
    /// The line naming the system, or saying why none is named.
    pub system: String,
    /// The system's difference, when one is named.
    pub difference: Option<SystemDifference>,
}

/// One re-run: its configuration's side, its files, and the process.
struct ReRun {
    side: usize,
    report: PathBuf,
    result: PathBuf,
    stderr: PathBuf,
    system_hashes: Option<PathBuf>,
    child: Child,
}

fn failed(what: String) -> Failure {
    Failure::new("RUN_FAILED", Outcome::BuildOrRun, what)
}

/// Re-runs both sides to `tick` (see the module docs); `self_check` runs each side
/// [`SELF_CHECK_RUNS`] times, else once (only the system is asked for).
pub fn confirm(
    runs: &Runs,
    work: &Path,
    tick: u64,
    sides: [Side; 2],
    self_check: bool,
) -> Result<Confirmation, Failure> {
    let each = if self_check { SELF_CHECK_RUNS } else { 1 };
    let mut started = Vec::new();
    for (side, Side { configuration, .. }) in sides.iter().enumerate() {
        for k in 0..each {
            let tag = format!("rerun-{side}-{k}");
            let report = work.join(format!("{tag}.json"));
            let result = work.join(format!("{tag}-result.json"));
            let stderr = work.join(format!("{tag}-stderr.txt"));
            let system_hashes = (k == 0).then(|| work.join(format!("{tag}-systems.json")));
            let mut env = vec![
                ("RUSTING_STATE_HASH_OUT", report.display().to_string()),
                ("RUSTING_RESULT_OUT", result.display().to_string()),
            ];
            if let Some(file) = &system_hashes {
                env.push((
                    rusting_engine::game::SYSTEM_HASHES_VARIABLE,
                    format!("{tick}:{}", file.display()),
                ));
            }
            let stderr_file = std::fs::File::create(&stderr)
                .map_err(|e| failed(format!("{}: {e}", stderr.display())))?;
            let child = runs
                .command(configuration, tick, env)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(stderr_file)
                .spawn()
                .map_err(|e| {
                    failed(format!(
                        "the {} re-run: cannot start the game: {e}",
                        configuration.name
                    ))
                })?;
            started.push(ReRun {
                side,
                report,
                result,
                stderr,
                system_hashes,
                child,
            });
        }
    }
    // Every re-run is waited for, even after one fails, so none is left running.
    let mut finished = Vec::new();
    let mut failure = None;
    for mut rerun in started {
        let name = sides[rerun.side].configuration.name;
        let status = rerun.child.wait();
        let outcome = match status {
            Ok(status) if status.success() => Ok(rerun),
            Ok(status) => Err(run_failure(
                Some(&format!("{name} re-run")),
                take_result(&rerun.result),
                status,
                &std::fs::read(&rerun.stderr).unwrap_or_default(),
            )),
            Err(e) => Err(failed(format!("the {name} re-run: {e}"))),
        };
        match outcome {
            Ok(rerun) => finished.push(rerun),
            Err(error) => failure = failure.or(Some(error)),
        }
    }
    if let Some(failure) = failure {
        return Err(failure);
    }
    let lanes = finished
        .iter()
        .map(|rerun| lane_of(&rerun.report))
        .collect::<Result<Vec<_>, _>>()?;
    let race = finished.iter().zip(&lanes).find_map(|(rerun, lane)| {
        let own: BTreeMap<u64, u64> = sides[rerun.side].lane.iter().copied().collect();
        let parted = lane
            .iter()
            .find(|(t, hash)| *t <= tick && own.get(t).is_some_and(|h| h != hash))?;
        Some((sides[rerun.side].configuration.name, parted.0))
    });
    let first_of = |side: usize| finished.iter().zip(&lanes).find(|(r, _)| r.side == side);
    let (Some((a, lane_a)), Some((b, lane_b))) = (first_of(0), first_of(1)) else {
        return Err(failed("the re-runs wrote no report".to_owned()));
    };
    let (system, difference) = name_system(tick, (a, lane_a), (b, lane_b))?;
    Ok(Confirmation {
        race,
        system,
        difference,
    })
}

/// The line naming the system from the two first re-runs, and the difference it names.
fn name_system(
    tick: u64,
    (a, lane_a): (&ReRun, &Vec<(u64, u64)>),
    (b, lane_b): (&ReRun, &Vec<(u64, u64)>),
) -> Result<(String, Option<SystemDifference>), Failure> {
    let parted = lane_a
        .iter()
        .zip(lane_b)
        .find(|(x, y)| x != y)
        .map(|(x, _)| x.0);
    match parted {
        None => Ok((
            format!(
                "re-run to tick {tick}, the two configurations did not differ again (a race): no \
                 system is named"
            ),
            None,
        )),
        Some(at) if at != tick => Ok((
            format!(
                "re-run, the two configurations parted at tick {at} instead of {tick} (a race): \
                 no system is named"
            ),
            None,
        )),
        Some(_) => {
            let load = |rerun: &ReRun| {
                let path = rerun
                    .system_hashes
                    .as_ref()
                    .expect("the first re-run hashes systems");
                SystemHashes::load(path).map_err(failed)
            };
            let difference = load(a)?.first_difference(&load(b)?);
            Ok(match difference {
                Some(difference) => (difference.to_string(), Some(difference)),
                None => (
                    format!(
                        "at tick {tick} every fixed system's output agrees, and the tick's hash \
                         differs: what differs was changed after the fixed schedules (a tick \
                         hook, GPU bodies)"
                    ),
                    None,
                ),
            })
        }
    }
}

/// Every `(tick, hash)` of the report a re-run wrote, with GPU hashes folded in as the lockstep
/// lanes hold them.
fn lane_of(path: &Path) -> Result<Vec<(u64, u64)>, Failure> {
    let report = StateHashReport::load(path).map_err(|e| failed(format!("a re-run: {e}")))?;
    Ok(report
        .ticks
        .iter()
        .map(|t| {
            let cpu = u64::from_str_radix(&t.hash, 16).unwrap_or_default();
            let gpu = t
                .gpu_hash
                .as_deref()
                .and_then(|g| u64::from_str_radix(g, 16).ok());
            (t.tick, fold_gpu_hash(cpu, gpu))
        })
        .collect())
}

//! The end of a run, in every mode: the undeclared-state verdict, the state-hash report and the
//! one-line summary.
//!
//! This module must never run a tick.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::error::GameError;
use super::project::Project;
use crate::engine::App;

/// Every tick's `(tick, hash)`, shared with the tick hook that collects them.
pub type SharedHashes = Arc<Mutex<Vec<(u64, u64)>>>;

/// The ticks detailed down to the field, shared with the tick hook that captures them.
pub type SharedDetails = Arc<Mutex<Vec<crate::record::StateDetail>>>;

/// A copy of what a tick hook collected so far (nothing, if the hook panicked while holding it).
pub(crate) fn taken<T: Clone>(shared: &Mutex<Vec<T>>) -> Vec<T> {
    shared.lock().map(|v| v.clone()).unwrap_or_default()
}

/// Writes the state-hash report if asked and sums the run up.
pub(crate) fn finish_run(
    project: &Project,
    app: &mut App,
    run: &RunRecord<'_>,
) -> Result<Option<String>, GameError> {
    let failed = failed_check(app.undeclared_state(), app.float_env_failure());
    run.finish(project, app.world_mut(), failed, "headless")
}

/// The check that fails the run, if one found something: state nobody declared, else a change of
/// the floating-point environment (under the policy that fails on it).
pub(crate) fn failed_check(
    undeclared: Option<&crate::state::UndeclaredState>,
    float: Option<&crate::runtime::FloatEnvChanged>,
) -> Option<GameError> {
    undeclared
        .cloned()
        .map(GameError::from)
        .or_else(|| float.cloned().map(GameError::from))
}

/// What a run collected for its end: where the state-hash report goes, the tick hashes and the
/// detailed ticks.
pub(crate) struct RunRecord<'a> {
    /// `RUSTING_STATE_HASH_OUT`.
    pub report_path: Option<&'a Path>,
    /// Every tick's hash.
    pub hashes: &'a Mutex<Vec<(u64, u64)>>,
    /// `RUSTING_DETAIL_TICKS`' details.
    pub details: &'a Mutex<Vec<crate::record::StateDetail>>,
}

impl RunRecord<'_> {
    /// Fails with a failed check (`failed`), writes the state-hash report if asked, and sums the
    /// run up:
    /// `<game>: ran <n> ticks <how> (<k> colliders); world-state hash <hash>`, and a line of
    /// deadline-job counts when the game requested any.
    pub(crate) fn finish(
        &self,
        project: &Project,
        world: &mut bevy::prelude::World,
        failed: Option<GameError>,
        how: &str,
    ) -> Result<Option<String>, GameError> {
        if let Some(failed) = failed {
            return Err(failed);
        }
        if let Some(path) = self.report_path {
            let mut report = crate::record::StateHashReport::capture(world, &taken(self.hashes));
            report.details = taken(self.details);
            report.write(path)?;
        }
        let mut summary = String::new();
        let bodies = world
            .query::<&crate::physics::Collider>()
            .iter(world)
            .count();
        let hash = world
            .resource::<crate::state::StateHashes>()
            .cpu
            .back()
            .map_or(0, |&(_, hash)| hash);
        let ticks = world.resource::<crate::runtime::FrameTime>().fixed_tick;
        let _ = write!(
            summary,
            "{}: ran {ticks} ticks {how} ({bodies} colliders); world-state hash {hash:016x}",
            project.manifest.name,
        );
        if let Some(jobs) = crate::jobs::JobStats::of(world) {
            let _ = write!(summary, "\n{}: {jobs}", project.manifest.name);
        }
        Ok(Some(summary))
    }
}

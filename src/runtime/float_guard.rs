//! [`FloatGuard`]: the check that the floating-point environment ([`FloatControl`]) stays as the
//! simulation expects, on the simulation thread at every tick boundary and on every worker thread
//! before and after it runs simulation work, and what a change does to the run.
//!
//! - **Where it is checked.** The simulation thread before each tick (a change made between ticks:
//!   in `Update`, rendering, a callback) and after it (a change made by the tick's systems). A
//!   worker thread before each piece of a parallel physics pass it runs (the broad phase's bounds
//!   and sweep, the narrow phase, the solver's passes, the substeps' moves) and each deadline job
//!   (a change made since its last simulation work), and after each job (a change the job made):
//!   [`guard_worker`].
//! - **Naming the system.** In checked runs ([`FloatEnvPolicy::Error`]) every system of the fixed
//!   schedules gets a run condition that reads the register just before the system runs
//!   ([`install_probes`]), so a change made by a system is named by the system that ran before the
//!   first probe that saw it.
//! - **What a change does.** The first change is kept ([`FloatGuard::first_change`]) with its
//!   tick, thread, the settings that changed and where; the expected environment is put back
//!   there and then, so the rest of the run computes what every other machine does. Under
//!   [`FloatEnvPolicy::Error`] (debug builds, `rusting determinism` runs, synctests) the run then
//!   fails with it (`FLOAT_ENV_CHANGED`); under [`FloatEnvPolicy::Restore`] (the default in
//!   release builds) it is logged once as a warning and the game plays on.
//!
//! Reading the register costs a few nanoseconds, so the checks stay on in every build. This
//! module must never change simulation state: it only reads and restores the threads' registers.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bevy::ecs::schedule::ConditionWithAccess;
use bevy::prelude::{IntoSystem, World};

use super::float_env::FloatControl;

/// The environment variable that chooses the policy: `error` or `restore`.
pub const FLOAT_ENV_VARIABLE: &str = "RUSTING_FLOAT_ENV";

/// What a change of the floating-point environment does to a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatEnvPolicy {
    /// The run fails with the first change (`FLOAT_ENV_CHANGED`), and the fixed systems are
    /// probed so the change names its system. The default in debug builds, and what
    /// `rusting determinism` and synctests use.
    Error,
    /// The expected environment is put back, the first change is logged once, and the game plays
    /// on. The default in release builds.
    Restore,
}

impl FloatEnvPolicy {
    /// The policy [`FLOAT_ENV_VARIABLE`] asks for, else the build's default.
    pub fn from_environment() -> Self {
        match std::env::var(FLOAT_ENV_VARIABLE).as_deref() {
            Ok("error") => FloatEnvPolicy::Error,
            Ok("restore") => FloatEnvPolicy::Restore,
            _ if cfg!(debug_assertions) => FloatEnvPolicy::Error,
            _ => FloatEnvPolicy::Restore,
        }
    }
}

/// A change of the floating-point environment: where, when and what.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error(
    "tick {tick}: the floating-point environment of thread `{thread}` changed {place}: {changes} \
     ({register} {found:#x}, the simulation expects {expected:#x}). Results computed with it differ \
     from every other machine's and build's; find what sets it there (a library, a driver, a \
     start-up flag) and keep it away from the simulation, or put the default back after it",
    changes = self.changes.join(", ")
)]
pub struct FloatEnvChanged {
    /// The tick it was found at (ticks completed, counting the one running).
    pub tick: u64,
    /// The thread's name.
    pub thread: String,
    /// Where it changed: `in system `game::set_up_audio``, `while running job `Path` (#3)`.
    pub place: String,
    /// The register (`MXCSR`, `FPCR`).
    pub register: &'static str,
    /// The register as found.
    pub found: u64,
    /// The register as expected (with the found exception flags).
    pub expected: u64,
    /// The settings that differ, one phrase each.
    pub changes: Vec<String>,
}

/// A change a worker thread found, waiting for the simulation thread to stamp it with a tick.
struct WorkerChange {
    thread: String,
    place: String,
    found: FloatControl,
}

/// Whether a worker found a change the simulation thread has not taken yet.
static WORKER_CHANGED: AtomicBool = AtomicBool::new(false);
/// The first change a worker found since the simulation thread last looked.
static WORKER_CHANGE: Mutex<Option<WorkerChange>> = Mutex::new(None);

/// The current thread's name as a change reports it.
fn thread_name() -> String {
    let thread = std::thread::current();
    thread
        .name()
        .map_or_else(|| format!("{:?}", thread.id()), str::to_owned)
}

/// Checks a worker thread's environment; `place` (only built when it changed) says where, such as
/// `before the contact solver's parallel pass`. A change is noted for the simulation thread and
/// the expected environment put back on this thread.
#[inline]
pub fn guard_worker(place: impl FnOnce() -> String) {
    let Some(found) = FloatControl::read() else {
        return;
    };
    if found.is_expected() {
        return;
    }
    FloatControl::restore_expected();
    if let Ok(mut slot) = WORKER_CHANGE.lock()
        && slot.is_none()
    {
        *slot = Some(WorkerChange {
            thread: thread_name(),
            place: place(),
            found,
        });
        WORKER_CHANGED.store(true, Ordering::Release);
    }
}

/// The probes' state on the simulation thread: the system about to run, and the first change.
#[derive(Default)]
struct Probes {
    /// The system whose probe ran last (the one running since).
    previous: Option<Arc<str>>,
    /// The first change a probe saw this tick, and the system that made it.
    found: Option<(String, FloatControl)>,
}

thread_local! {
    static PROBES: RefCell<Probes> = RefCell::new(Probes::default());
}

/// A probe: run as a condition of system `name`, just before it.
fn probe(name: &Arc<str>) -> bool {
    PROBES.with(|probes| {
        let mut probes = probes.borrow_mut();
        if probes.found.is_none()
            && let Some(found) = FloatControl::read()
            && !found.is_expected()
        {
            let place = match &probes.previous {
                Some(system) => format!("in system `{system}`"),
                None => "before the first fixed system".to_owned(),
            };
            FloatControl::restore_expected();
            probes.found = Some((place, found));
        }
        probes.previous = Some(Arc::clone(name));
    });
    true
}

/// Gives every system of the fixed schedules a probe (see the module docs). Call it before the
/// schedules are first built.
pub fn install_probes(world: &mut World) {
    for label in super::schedule::fixed_schedule_labels(world) {
        let _ = world.try_schedule_scope(label, |world, schedule| {
            let systems = &mut schedule.graph_mut().systems;
            let named: Vec<_> = systems
                .iter()
                .map(|(key, system, _)| (key, Arc::<str>::from(system.name().to_string())))
                .collect();
            for (key, name) in named {
                let mut condition: Box<dyn bevy::ecs::system::ReadOnlySystem<In = (), Out = bool>> =
                    Box::new(IntoSystem::into_system(move || probe(&name)));
                let access = condition.initialize(world);
                if let Some(conditions) = systems.get_conditions_mut(key) {
                    conditions.push(ConditionWithAccess { condition, access });
                }
            }
        });
    }
}

/// The simulation thread's side of the check (see the module docs): owned by the frame stepper.
pub struct FloatGuard {
    /// What a change does.
    pub policy: FloatEnvPolicy,
    first: Option<FloatEnvChanged>,
}

impl FloatGuard {
    /// A guard with `policy`.
    pub fn new(policy: FloatEnvPolicy) -> Self {
        FloatGuard {
            policy,
            first: None,
        }
    }

    /// The first change found, if any.
    pub fn first_change(&self) -> Option<&FloatEnvChanged> {
        self.first.as_ref()
    }

    /// Checks before tick `tick` (ticks completed, counting it) runs.
    pub fn before_tick(&mut self, tick: u64) {
        PROBES.with(|probes| *probes.borrow_mut() = Probes::default());
        if let Some(found) = FloatControl::read()
            && !found.is_expected()
        {
            FloatControl::restore_expected();
            let place = format!(
                "before tick {tick}, outside the fixed schedules (in `Update`, rendering or \
                 other code between ticks)"
            );
            self.note(tick, thread_name(), place, found);
        }
        self.take_worker_change(tick);
    }

    /// Checks after tick `tick` ran.
    pub fn after_tick(&mut self, tick: u64) {
        let probed = PROBES.with(|probes| {
            let mut probes = probes.borrow_mut();
            let found = probes.found.take();
            (found, probes.previous.take())
        });
        match probed {
            (Some((place, found)), _) => self.note(tick, thread_name(), place, found),
            (None, last) => {
                if let Some(found) = FloatControl::read()
                    && !found.is_expected()
                {
                    FloatControl::restore_expected();
                    let place = match last {
                        Some(system) => format!("in system `{system}`"),
                        None => "during the tick's fixed schedules".to_owned(),
                    };
                    self.note(tick, thread_name(), place, found);
                }
            }
        }
        self.take_worker_change(tick);
    }

    fn take_worker_change(&mut self, tick: u64) {
        if !WORKER_CHANGED.swap(false, Ordering::Acquire) {
            return;
        }
        let taken = WORKER_CHANGE.lock().ok().and_then(|mut slot| slot.take());
        if let Some(change) = taken {
            self.note(tick, change.thread, change.place, change.found);
        }
    }

    fn note(&mut self, tick: u64, thread: String, place: String, found: FloatControl) {
        if self.first.is_some() {
            return;
        }
        let change = FloatEnvChanged {
            tick,
            thread,
            place,
            register: FloatControl::REGISTER,
            found: found.0,
            expected: found.expected_from().0,
            changes: found.differences(),
        };
        match self.policy {
            FloatEnvPolicy::Error => bevy::log::error!("{change}"),
            FloatEnvPolicy::Restore => bevy::log::warn!(
                "{change} (the expected environment was put back; later changes are put back \
                 without a word)"
            ),
        }
        self.first = Some(change);
    }
}

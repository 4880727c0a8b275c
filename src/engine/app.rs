//! The engine [`App`]: owns a bevy `App` and runs each frame's fixed ticks itself.
//!
//! Bevy's own fixed loop decides how many fixed steps to run from a virtual clock. Rusting keeps
//! every clock out of the simulation instead: [`App::update`] takes the frame's real delta from the
//! caller, and its [`FrameStepper`] asks `TimeControl` and `TickAccumulator` how many ticks that
//! is, and for each tick sets [`FrameTime::fixed_tick`], runs `FixedMain` (single-threaded, see
//! [`crate::runtime::schedule`]), counts the tick, appends the world-state hash to `StateHashes`,
//! tells the frame's [`FrameRecorder`] if one runs, and runs the [`TickHook`]s. Then it runs bevy's `Main`
//! schedule (`Update` and the rest) once for the frame.
//!
//! Hooks and the recorder live in the stepper, outside the `World`, while the app steps its own
//! frames; a windowed game hands the stepper to the world for bevy's window loop. The app knows a
//! recorder only as a [`FrameRecorder`]: recording a replay is something the replay tools do to
//! an app (`record::RecordingAppExt`), not something the app knows.
//!
//! This module must never read the wall clock or let the frame delta reach a fixed system.

use std::time::Duration;

use bevy::app::{App as BevyApp, MainScheduleOrder, Plugins};
use bevy::ecs::component::{Component, Mutable};
use bevy::ecs::schedule::ScheduleLabel;
use bevy::ecs::system::ScheduleSystem;
use bevy::prelude::{IntoScheduleConfigs, World};

use super::frame_step::{FrameRecorder, FrameReport, FrameStepper, TickHook};
use super::plugins::RustingPlugins;
use crate::runtime::schedule::build_fixed_schedules;
use crate::runtime::{
    DeterminismError, DeterminismMode, DeterminismSupport, FloatEnvPolicy, FrameTime, PartUsers,
    RuntimeInput, RuntimeSettings, TickAccumulator,
};
use crate::state::{
    SimRegistry, SimState, SimStateAppExt, SnapshotAppExt, SnapshotError, UndeclaredState,
    WorldSnapshot,
};

/// Why an [`App`] cannot start.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AppError {
    /// A fixed schedule does not build, for example because two systems that write the same data
    /// have no order between them.
    #[error("a fixed schedule does not build: {0}")]
    Schedule(String),
    /// A simulation part supports less determinism than the project requires.
    #[error(transparent)]
    Determinism(#[from] DeterminismError),
    /// The app holds GPU bodies and GPU physics cannot run (no Vulkan device, or setting the
    /// bodies up failed).
    #[error("{0}")]
    Gpu(String),
    /// A game component in the loaded scene has no registered type, or a value its type refuses.
    #[error(transparent)]
    Scene(#[from] crate::scene::SceneError),
    /// The fixed tick rate is outside `runtime::time::TICK_RATE_RANGE`.
    #[error("the fixed tick rate {0}")]
    TickRate(String),
    /// Two types are registered as simulation state under one name.
    #[error("{0}")]
    SimState(String),
    /// bevy's `TimePlugin` is in the app: it runs the fixed schedules a second time, from the
    /// wall clock, with no tick counted and no hash recorded.
    #[error(
        "bevy's TimePlugin is in the app: it runs `FixedMain` a second time from the wall clock, \
         outside the engine's ticks (no tick counted, no hash recorded). Leave it out: the engine \
         runs every fixed tick itself (a plugin group that brings it needs \
         `.build().disable::<TimePlugin>()`)"
    )]
    SecondFixedLoop,
}

/// A Rusting app: a bevy `App` whose fixed ticks the engine runs itself.
pub struct App {
    bevy: BevyApp,
    stepper: FrameStepper,
    part_users: PartUsers,
    /// The per-system hashes asked for, installed by [`App::setup`].
    system_probe: Option<crate::runtime::SystemHashProbe>,
    ready: bool,
}

impl Default for App {
    fn default() -> Self {
        App::new(RuntimeSettings::default())
    }
}

impl App {
    /// An app with the engine's plugins, starting from `settings`.
    pub fn new(settings: RuntimeSettings) -> Self {
        let mut bevy = BevyApp::new();
        bevy.add_plugins(RustingPlugins { settings });
        App {
            bevy,
            stepper: FrameStepper::new(),
            part_users: PartUsers::new(),
            system_probe: None,
            ready: false,
        }
    }

    /// The bevy app inside, for anything this type does not wrap.
    pub fn bevy(&self) -> &BevyApp {
        &self.bevy
    }

    /// The bevy app inside, mutably.
    pub fn bevy_mut(&mut self) -> &mut BevyApp {
        &mut self.bevy
    }

    /// The world.
    pub fn world(&self) -> &World {
        self.bevy.world()
    }

    /// The world, mutably.
    pub fn world_mut(&mut self) -> &mut World {
        self.bevy.world_mut()
    }

    /// Adds plugins, as `bevy::app::App::add_plugins` does.
    pub fn add_plugins<M>(&mut self, plugins: impl Plugins<M>) -> &mut Self {
        self.bevy.add_plugins(plugins);
        self
    }

    /// Adds systems to a schedule, as `bevy::app::App::add_systems` does.
    pub fn add_systems<M>(
        &mut self,
        schedule: impl ScheduleLabel,
        systems: impl IntoScheduleConfigs<ScheduleSystem, M>,
    ) -> &mut Self {
        self.bevy.add_systems(schedule, systems);
        self
    }

    /// Which scene entity first uses each simulation part, for the startup determinism check's
    /// message (`game::build_app` sets it from the main scene). Kept outside the `World`.
    pub fn set_part_users(&mut self, users: PartUsers) -> &mut Self {
        self.part_users = users;
        self
    }

    /// Adds a hook that runs after every fixed tick, after the hooks added before it.
    pub fn add_tick_hook(&mut self, hook: impl TickHook) -> &mut Self {
        self.stepper.hooks.push(Box::new(hook));
        self
    }

    /// Hashes the world after every system of the fixed schedules during tick `tick` (ticks
    /// completed, counting it), for telling which system's output first differs between two runs
    /// (see [`crate::runtime::system_hashes`]). Call it before [`App::setup`]; the probe returned
    /// gives the hashes once the tick has run. Without it no system is probed.
    pub fn hash_each_system_at(&mut self, tick: u64) -> crate::runtime::SystemHashProbe {
        let probe = crate::runtime::SystemHashProbe::at_tick(tick);
        self.system_probe = Some(probe.clone());
        probe
    }

    /// Finishes building: completes the plugins, builds the fixed schedules, runs the startup
    /// schedules and checks the determinism mode. Runs once; later calls return `Ok(())`.
    ///
    /// [`App::update`] calls it on the first frame; call it yourself to handle its errors.
    pub fn setup(&mut self) -> Result<(), AppError> {
        if self.ready {
            return Ok(());
        }
        self.bevy.finish();
        self.bevy.cleanup();
        if self.bevy.is_plugin_added::<bevy::time::TimePlugin>() {
            return Err(AppError::SecondFixedLoop);
        }
        let world = self.bevy.world_mut();
        if let Some(conflict) = world
            .get_resource::<SimRegistry>()
            .and_then(|registry| registry.conflicts().first().cloned())
        {
            return Err(AppError::SimState(conflict));
        }
        let rate = world
            .resource::<crate::runtime::TickAccumulator>()
            .rate_hz();
        crate::runtime::time::check_tick_rate(rate).map_err(AppError::TickRate)?;
        crate::scene::game_types::load_game_components(world)?;
        if let Some(reason) = world
            .get_resource::<crate::physics::gpu::GpuPhysicsStatus>()
            .and_then(|status| status.unavailable.clone())
        {
            return Err(AppError::Gpu(reason));
        }
        if self.stepper.float.policy == FloatEnvPolicy::Error {
            crate::runtime::float_guard::install_probes(world);
        }
        if let Some(probe) = &self.system_probe {
            probe.install(world);
        }
        build_fixed_schedules(world).map_err(AppError::Schedule)?;
        // Run the startup schedules now, before any tick, and take them out of `Main` so its first
        // run does not repeat them.
        let startup = std::mem::take(&mut world.resource_mut::<MainScheduleOrder>().startup_labels);
        for label in startup {
            let _ = world.try_run_schedule(label);
        }
        let mode = *world.resource::<DeterminismMode>();
        world
            .resource::<DeterminismSupport>()
            .check_uses(mode, &self.part_users)?;
        self.ready = true;
        Ok(())
    }

    /// Feeds every following tick the input `stamped` holds for it, right before the tick runs,
    /// instead of latching each frame's input: a script then reaches the same ticks however the
    /// frames are paced (see [`crate::runtime::stamped_input`]).
    pub fn feed_input_by_tick(&mut self, stamped: crate::runtime::TickStampedInput) {
        self.stepper.stamped = Some(stamped);
    }

    /// Sets the input for the frames that follow.
    pub fn set_input(&mut self, input: RuntimeInput) {
        *self.world_mut().resource_mut::<RuntimeInput>() = input;
    }

    /// Runs one frame that took `real_delta` of real time: its fixed ticks, then `Main`.
    ///
    /// # Panics
    ///
    /// On the first frame, if [`App::setup`] fails; call `setup` first to handle the error.
    pub fn update(&mut self, real_delta: Duration) -> FrameReport {
        if let Err(error) = self.setup() {
            panic!("the Rusting app cannot start: {error}");
        }
        let report = self.stepper.run_frame(self.bevy.world_mut(), real_delta);
        self.bevy.update();
        self.bevy.world_mut().resource_mut::<FrameTime>().frame += 1;
        report
    }

    /// The real duration of one fixed tick at time scale 1: a frame this long runs one tick.
    pub fn fixed_step(&self) -> Duration {
        self.world().resource::<TickAccumulator>().step()
    }

    /// Records the following frames with `recorder`, replacing any recorder running. The
    /// replay tools start recordings through this (`record::RecordingAppExt`); the recorder
    /// lives in the app's frame stepper, outside the `World`.
    pub fn set_frame_recorder(&mut self, recorder: Box<dyn FrameRecorder>) {
        self.stepper.set_recorder(recorder);
    }

    /// The recorder, if one of type `T` records the frames.
    pub fn frame_recorder<T: FrameRecorder>(&self) -> Option<&T> {
        self.stepper.recorder::<T>()
    }

    /// Stops a recorder of type `T` and hands it back (see [`FrameStepper::take_recorder`]).
    pub fn take_frame_recorder<T: FrameRecorder>(&mut self) -> Option<T> {
        self.stepper.take_recorder::<T>()
    }

    /// `T` (a component or resource) is simulation state: hashed, copied by snapshots, compared
    /// (the same registration as [`App::register_sim_component`] and
    /// [`App::register_sim_resource`]).
    pub fn register_snapshot_component<T: Component<Mutability = Mutable> + Clone + SimState>(
        &mut self,
    ) -> &mut Self {
        self.bevy.register_snapshot_component::<T>();
        self
    }

    /// `T` is a simulation component (see [`SimStateAppExt::register_sim_component`]).
    pub fn register_sim_component<T: Component<Mutability = Mutable> + Clone + SimState>(
        &mut self,
    ) -> &mut Self {
        self.bevy.register_sim_component::<T>();
        self
    }

    /// `T` is a simulation resource (see [`SimStateAppExt::register_sim_resource`]).
    pub fn register_sim_resource<
        T: bevy::prelude::Resource<Mutability = Mutable> + Clone + SimState,
    >(
        &mut self,
    ) -> &mut Self {
        self.bevy.register_sim_resource::<T>();
        self
    }

    /// `T` is presentation that snapshots copy and the hash never sees (see
    /// [`SimStateAppExt::register_presentation_component`]).
    pub fn register_presentation_component<T: Component<Mutability = Mutable> + Clone>(
        &mut self,
        name: &'static str,
    ) -> &mut Self {
        self.bevy.register_presentation_component::<T>(name);
        self
    }

    /// Snapshots copy `T` where it sits on a simulation entity, without making its holders
    /// simulation entities (see [`SnapshotAppExt::copy_in_snapshots`]).
    pub fn copy_in_snapshots<T: Component<Mutability = Mutable> + Clone>(&mut self) -> &mut Self {
        self.bevy.copy_in_snapshots::<T>();
        self
    }

    /// Snapshots leave `T` as the restored app has it from now on.
    pub fn ignore_in_snapshots<T: Component>(&mut self) -> &mut Self {
        self.bevy.ignore_in_snapshots::<T>();
        self
    }

    /// Registers deadline-job kind `K` with `latency` ticks from a request to its result (see
    /// [`JobsAppExt::add_job_kind`](crate::jobs::JobsAppExt::add_job_kind)).
    pub fn add_job_kind<K: crate::jobs::JobKind>(&mut self, latency: u64) -> &mut Self {
        crate::jobs::JobsAppExt::add_job_kind::<K>(&mut self.bevy, latency);
        self
    }

    /// Registers sliced task `T`, advanced `units_per_tick` units a tick (see
    /// [`JobsAppExt::add_sliced_task`](crate::jobs::JobsAppExt::add_sliced_task)).
    pub fn add_sliced_task<T: crate::jobs::SlicedTask>(
        &mut self,
        units_per_tick: u32,
    ) -> &mut Self {
        crate::jobs::JobsAppExt::add_sliced_task::<T>(&mut self.bevy, units_per_tick);
        self
    }

    /// Copies the simulation state: every simulation entity (by `SimId`) and every registered
    /// resource (see [`WorldSnapshot`]). The app is left as it was.
    ///
    /// # Panics
    ///
    /// If [`App::setup`] has not run and fails.
    pub fn snapshot(&mut self) -> Result<WorldSnapshot, SnapshotError> {
        if let Err(error) = self.setup() {
            panic!("the Rusting app cannot start: {error}");
        }
        let tick = self.ticks();
        WorldSnapshot::capture(self.world_mut(), tick)
    }

    /// Puts `snapshot` back: the same simulation entities with the same `SimId`s and values, and
    /// the registered resources (the `SimIdAllocator` among them), so later spawns get the same
    /// ids and hashes continue unchanged. Works in place, into the app the snapshot came from
    /// after it ran past the snapshot (rollback), and into any app built the same way. Entities
    /// without a `SimId` (windows, cameras, UI) are left alone. A running recording is rewound to
    /// the snapshot's tick.
    ///
    /// # Panics
    ///
    /// If [`App::setup`] has not run and fails.
    pub fn restore(&mut self, snapshot: &WorldSnapshot) -> Result<(), SnapshotError> {
        if let Err(error) = self.setup() {
            panic!("the Rusting app cannot start: {error}");
        }
        snapshot.restore(self.world_mut())?;
        self.stepper.rewind_recording(snapshot.tick());
        Ok(())
    }

    /// Turns the check for state a tick changed that nobody declared on or off (see
    /// [`UndeclaredCheck`] for the default).
    pub fn check_undeclared_state(&mut self, enabled: bool) -> &mut Self {
        self.stepper.undeclared.enabled = enabled;
        self
    }

    /// Whether the undeclared-state check runs.
    pub fn checks_undeclared_state(&self) -> bool {
        self.stepper.undeclared.enabled
    }

    /// The first state a tick changed that nobody declared, if the check found any.
    pub fn undeclared_state(&self) -> Option<&UndeclaredState> {
        self.stepper.first_undeclared.as_ref()
    }

    /// The first change of the floating-point environment the checks found, if any (see
    /// `runtime::float_guard`). Under [`FloatEnvPolicy::Error`] a run fails with it.
    pub fn float_env_change(&self) -> Option<&crate::runtime::FloatEnvChanged> {
        self.stepper.float_env_change()
    }

    /// [`App::float_env_change`] when the policy makes it fail the run ([`FloatEnvPolicy::Error`]).
    pub fn float_env_failure(&self) -> Option<&crate::runtime::FloatEnvChanged> {
        self.stepper.float_env_failure()
    }

    /// Chooses what a change of the floating-point environment does (by default
    /// `RUSTING_FLOAT_ENV`, else `Error` in debug builds and `Restore` in release ones). Call it
    /// before [`App::setup`]: under `Error` the fixed systems are probed to name the one that
    /// changed it.
    pub fn set_float_env_policy(&mut self, policy: FloatEnvPolicy) {
        self.stepper.float.policy = policy;
    }

    /// The bevy app and the frame stepper, for a loop that drives bevy's frames itself (a
    /// window's, see `window::run`) and runs the frame step inside them.
    pub fn into_parts(self) -> (BevyApp, FrameStepper) {
        (self.bevy, self.stepper)
    }

    /// The fixed ticks completed so far.
    pub fn ticks(&self) -> u64 {
        self.world().resource::<FrameTime>().fixed_tick
    }
}

/// The determinism support the engine's own plugins declare when an app is built with `settings`:
/// what `rusting validate` checks a project against without building the game. A game's own
/// plugins and startup systems may declare more parts; only the game's startup check sees those.
pub fn engine_determinism_support(settings: RuntimeSettings) -> DeterminismSupport {
    App::new(settings)
        .world()
        .resource::<DeterminismSupport>()
        .clone()
}

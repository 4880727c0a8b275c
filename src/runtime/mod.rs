//! What every fixed tick stands on: bit-exact math, time, randomness, input, the determinism mode
//! and the fixed schedules.
//!
//! [`RuntimePlugin`] inserts every resource of this module when the app is built, never later:
//! in bevy 0.19 a resource is an entity, and inserting one mid-run would shift the ids of every
//! entity spawned after it.

pub mod actions;
pub mod float_env;
pub mod float_guard;
pub mod input;
pub mod input_script;
pub mod json_file;
pub mod mode;
pub mod player_actions;
pub mod player_input;
pub mod random;
pub mod resimulation;
pub mod schedule;
pub mod sim_math;
pub mod stamped_input;
pub mod system_hashes;
pub mod tick_input;
pub mod time;

use bevy::app::{App, Plugin};

use crate::state::{SimIdAllocator, SimStateAppExt, SnapshotAppExt};

pub use actions::{ActionName, Actions, AxisBinding, InputBindings};
pub use float_env::FloatControl;
pub use float_guard::{
    FLOAT_ENV_VARIABLE, FloatEnvChanged, FloatEnvPolicy, FloatGuard, guard_worker,
};
pub use input::RuntimeInput;
pub use input_script::{InputScript, InputScriptError};
pub use mode::{
    DeterminismError, DeterminismMode, DeterminismSupport, PartUser, PartUsers, UnsupportedPart,
};
pub use player_actions::{PlayerAction, PlayerActions};
pub use player_input::{
    InputFitError, MAX_SESSION_ACTIONS, MAX_SESSION_AXES, PlayerInputs, PlayerSlot, PlayerTickInput,
};
pub use random::RandomSeed;
pub use resimulation::{Resimulation, not_resimulating, resimulating};
pub use schedule::SimSet;
pub use stamped_input::TickStampedInput;
pub use system_hashes::{SystemDifference, SystemHashProbe, SystemHashes, SystemStep};
pub use tick_input::{TickInput, advance_tick_input};
pub use time::{FrameTime, TickAccumulator, TimeControl};

/// The settings a run starts from: tick rate, seed and determinism mode.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeSettings {
    /// Fixed ticks per simulated second.
    pub fixed_rate_hz: f32,
    /// The simulation's random seed.
    pub seed: u64,
    /// The determinism the project requires.
    pub mode: DeterminismMode,
}

impl Default for RuntimeSettings {
    fn default() -> Self {
        RuntimeSettings {
            fixed_rate_hz: 60.0,
            seed: 0,
            mode: DeterminismMode::Local,
        }
    }
}

/// Inserts the runtime resources and configures the fixed schedules.
#[derive(Clone, Debug, Default)]
pub struct RuntimePlugin {
    /// What the resources start from.
    pub settings: RuntimeSettings,
}

impl Plugin for RuntimePlugin {
    fn build(&self, app: &mut App) {
        let settings = &self.settings;
        app.insert_resource(FrameTime::new(settings.fixed_rate_hz))
            .insert_resource(TimeControl::default())
            .insert_resource(TickAccumulator::new(settings.fixed_rate_hz))
            .insert_resource(RandomSeed(settings.seed))
            .insert_resource(RuntimeInput::default())
            .insert_resource(settings.mode)
            .insert_resource(DeterminismSupport::default())
            .insert_resource(SimIdAllocator::default())
            .insert_resource(Resimulation::default())
            .insert_resource(TickInput::default())
            .insert_resource(InputBindings::default())
            .register_sim_resource::<FrameTime>()
            .register_sim_resource::<RandomSeed>()
            .register_sim_resource::<RuntimeInput>()
            .register_sim_resource::<TickInput>()
            .register_sim_resource::<DeterminismMode>()
            .register_sim_resource::<SimIdAllocator>()
            // Frame pacing and the declared support: rolled back, never hashed.
            .copy_in_snapshots::<TimeControl>()
            .copy_in_snapshots::<TickAccumulator>()
            .copy_in_snapshots::<DeterminismSupport>();
        schedule::configure_fixed_schedules(app);
        app.add_systems(
            bevy::prelude::FixedUpdate,
            bevy::prelude::IntoScheduleConfigs::in_set(advance_tick_input, SimSet::Input),
        );
    }
}

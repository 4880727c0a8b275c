//! Rusting: a Bevy game engine whose simulation gives the same bits on every run, build and
//! thread count.
//!
//! Game code runs in `FixedUpdate`, which the engine [`App`] steps one fixed tick at a time with
//! no clock in sight: a tick sees [`FrameTime::fixed_tick`](runtime::FrameTime) and
//! `fixed_delta`, draws random numbers from [`RandomSeed`](runtime::RandomSeed) keyed by tick and
//! stream, and does its math through [`runtime::sim_math`] or plain IEEE `+ - * /`. See
//! `docs/determinism.md` for the rules.
//!
//! ```
//! use bevy::prelude::*;
//! use rusting_engine::prelude::*;
//!
//! /// Simulation state of the game's own: declared once, then hashed, rolled back and compared.
//! #[derive(Component, Clone, SimState)]
//! struct Spin(f32);
//!
//! fn spin(time: Res<FrameTime>, mut bodies: Query<(&mut Transform, &Spin)>) {
//!     for (mut transform, spin) in &mut bodies {
//!         let turn = sim_math::rotation_from_scaled_axis(Vec3::Y * (spin.0 * time.fixed_delta));
//!         transform.rotation = sim_math::quat_normalize(sim_math::quat_mul(turn, transform.rotation));
//!     }
//! }
//!
//! let mut app = rusting_engine::App::new(RuntimeSettings { fixed_rate_hz: 60.0, seed: 7, ..default() });
//! app.register_sim_component::<Spin>();
//! app.world_mut().spawn((Transform::default(), Spin(1.5)));
//! app.add_systems(FixedUpdate, spin.after(SimSet::Tweens));
//! let frame = app.update(app.fixed_step() * 3); // three fixed ticks, then Update
//! assert_eq!(frame.ticks, 3);
//! assert!(app.undeclared_state().is_none()); // every state the ticks changed is declared
//! ```
#![deny(missing_docs)]

// The derive macros name the engine as `::rusting_engine`, inside the engine too.
extern crate self as rusting_engine;

pub mod app;
pub mod determinism;
pub mod frame_step;
pub mod game;
pub mod game_result;
pub mod gameplay;
pub mod json_file;
pub mod logging;
#[cfg(feature = "net")]
pub mod net;
pub mod physics;
pub mod project;
pub mod runtime;
pub mod scene;
pub mod threads;
#[cfg(feature = "window")]
pub mod window;
#[cfg(feature = "window")]
mod windowed_game;

use bevy::app::{PluginGroup, PluginGroupBuilder, TaskPoolPlugin};
use bevy::transform::TransformPlugin;

pub use app::{App, AppError, FrameReport, TickHook};

/// The engine's plugins: bevy's task pools and transform propagation, the runtime, physics and
/// gameplay.
///
/// `TimePlugin` is left out on purpose: the engine runs fixed ticks itself, from the deltas passed
/// to [`App::update`]. The task pools start with one thread per CPU unless
/// [`threads::limit_worker_threads`] started them first (`RUSTING_THREADS`).
#[derive(Clone, Debug, Default)]
pub struct RustingPlugins {
    /// What the runtime resources start from.
    pub settings: runtime::RuntimeSettings,
}

impl PluginGroup for RustingPlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(TaskPoolPlugin::default())
            .add(TransformPlugin)
            .add(runtime::RuntimePlugin {
                settings: self.settings,
            })
            .add(physics::PhysicsPlugin::default())
            .add(physics::gpu::GpuPhysicsPlugin)
            .add(gameplay::GameplayPlugin)
            .add(determinism::DeterminismPlugin)
    }
}

/// The names game code needs most.
pub mod prelude {
    pub use crate::app::{App, TickHook};
    pub use crate::determinism::{SimState, SimStateAppExt, Simulated, SnapshotAppExt};
    pub use crate::gameplay::{
        BurstEmitter, BurstParticle, Counter, Easing, HudElement, Pickup, PlatformerController,
        PlayerController, SoundEvents, SoundQueue, Tween, TweenMode,
    };
    pub use crate::physics::{
        BodyKind, Collider, CollisionEvents, CollisionLayers, PhysicsBody, PhysicsSettings,
        RigidBody, Sleeping,
    };
    pub use crate::runtime::sim_math;
    pub use crate::runtime::{
        ActionName, Actions, DeterminismMode, DeterminismSupport, FrameTime, RandomSeed,
        Resimulation, RuntimeInput, RuntimeSettings, SimId, SimSet, TickInput, TimeControl,
        not_resimulating, resimulating,
    };
    pub use crate::scene::SceneTypesAppExt;
    pub use rusting_macros::SimState;
}

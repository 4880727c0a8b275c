//! Rusting: a Bevy game engine whose simulation gives the same bits on every run, build and
//! thread count.
//!
//! Game code runs in `FixedUpdate`, which the engine [`App`] steps one fixed tick at a time with
//! no clock in sight: a tick sees [`FrameTime::fixed_tick`](runtime::FrameTime) and
//! `fixed_delta`, draws random numbers from [`RandomSeed`](runtime::RandomSeed) keyed by tick and
//! stream, and does its math through [`runtime::sim_math`] or plain IEEE `+ - * /`. See
//! `docs/determinism.md` for the rules.
//!
//! The modules are the engine's layers, bottom up; each imports only from those below it (see
//! `docs/architecture.md`): [`state`] (what simulation state is: [`SimState`](state::SimState),
//! [`SimId`](state::SimId), the registry, the world-state hash, snapshots), [`runtime`] (math,
//! time, randomness, input, the fixed schedules), [`jobs`] (deadline jobs, sliced tasks, parallel
//! work in job order, outside results), the domains [`physics`], [`gameplay`] and
//! [`scene`], [`engine`] (the [`App`] and its frame stepper), [`record`] (replays, the recorder,
//! state details, reports), [`determinism`] (the tools that drive an app: playback, seeking,
//! synctest, comparisons), `net` and `window` (features), and [`game`] (the entry point and one
//! file per mode). The [`prelude`] gathers what game code needs from all of them.
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

pub mod determinism;
pub mod engine;
pub mod game;
pub mod gameplay;
pub mod jobs;
#[cfg(feature = "net")]
pub mod net;
pub mod physics;
pub mod record;
pub mod runtime;
pub mod scene;
pub mod state;
#[cfg(feature = "window")]
pub mod window;

pub use engine::{App, AppError, FrameReport, RustingPlugins, TickHook};

/// The names game code needs most.
pub mod prelude {
    pub use crate::engine::{App, TickHook};
    pub use crate::gameplay::{
        BurstEmitter, BurstParticle, Counter, DebugDraw, Easing, HudElement, Pickup,
        PlatformerController, PlayerController, SoundEvents, SoundQueue, Tween, TweenMode,
    };
    pub use crate::jobs::{
        JobId, JobKind, Jobs, JobsAppExt, OutsideInputs, OutsideQueue, Progress, Sliced,
        SlicedTask, parallel_chunks, parallel_jobs, parallel_reduce,
    };
    pub use crate::physics::{
        BodyKind, Collider, CollisionEvents, CollisionLayers, Joint, JointEvents, LockedAxes,
        Motor, PhysicsBody, PhysicsSettings, RigidBody, Sleeping,
    };
    pub use crate::record::RecordingAppExt;
    pub use crate::runtime::sim_math;
    pub use crate::runtime::{
        ActionName, Actions, DeterminismMode, DeterminismSupport, FrameTime, PlayerActions,
        PlayerSlot, RandomSeed, Resimulation, RuntimeInput, RuntimeSettings, SimSet, TickInput,
        TimeControl, not_resimulating, resimulating,
    };
    pub use crate::scene::SceneTypesAppExt;
    pub use crate::state::SimId;
    pub use crate::state::{SimState, SimStateAppExt, Simulated, SnapshotAppExt};
    pub use rusting_macros::SimState;
}

//! The engine loop: the [`App`] that runs each frame's fixed ticks, the [`FrameStepper`] that
//! does the work of a frame, the [`SimulationHost`] the tools above drive, the plugin group,
//! worker threads and tick-stamped logging.
//!
//! - `app` holds [`App`] and [`AppError`];
//! - `frame_step` holds [`FrameStepper`], [`FrameReport`], [`TickHook`] and [`FrameRecorder`]
//!   (what a replay recorder is to the engine);
//! - `host` holds [`SimulationHost`], what rollback, seeking and replay playback drive: an `App`,
//!   or a windowed game's world with its stepper ([`SteppedWorld`]);
//! - `plugins` holds [`RustingPlugins`];
//! - `task_pools` holds [`TaskPoolsPlugin`]: bevy's task pools, ticked on the main thread only
//!   while something is queued;
//! - `threads` starts the worker pools with `RUSTING_THREADS` threads;
//! - `logging` stamps log lines with the tick.
//!
//! This layer stands on the state layer, the runtime and the domains; it never names the replay
//! formats or the tools that drive it (they stand above it and hand it a [`FrameRecorder`] or a
//! [`TickHook`]).

pub mod app;
pub mod frame_step;
pub mod host;
pub mod logging;
mod plugins;
pub mod task_pools;
pub mod threads;

pub use app::{App, AppError, engine_determinism_support};
pub use frame_step::{FrameRecorder, FrameReport, FrameStepper, TickHook};
pub use host::{SimulationHost, SteppedWorld};
pub use plugins::RustingPlugins;
pub use task_pools::TaskPoolsPlugin;

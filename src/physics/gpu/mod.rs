//! GPU compute on Vulkan (ash): the context, buffers, pipelines, the simulation shaders and GPU
//! physics. The SPIR-V precision check the shaders pass is the `rusting_spirv` crate, so games
//! never compile it.
//!
//! - [`context`]: [`GpuContext`], one device and one compute queue, no window; dispatch and wait;
//!   the device chosen by [`DEVICE_VARIABLE`] where the loader lists several.
//! - [`validation`]: the Khronos validation layer on request ([`VALIDATION_VARIABLE`]), its
//!   messages turned into errors.
//! - [`device`]: [`DeviceInfo`], the device's name, driver and declared float controls.
//! - [`conformance`]: the conformance probe ([`probe`]): `sim_math` and a physics scene run on the
//!   device against pinned checksums of the CPU reference decide whether it keeps `CrossPlatform`
//!   ([`ConformanceReport`]); [`probe_cases`] holds the `sim_math` probe's cases.
//! - [`buffer`]: [`GpuBuffer`], host-visible storage buffers read and written as raw bits.
//! - [`pipeline`]: [`ComputePipeline`], a compute shader over storage buffers and push constants.
//! - [`shaders`]: the simulation shaders' GLSL, embedded ([`SIMULATION_SHADERS`]).
//! - [`spirv`]: the simulation shaders' committed SPIR-V, embedded ([`EMBEDDED_SPIRV`]).
//! - [`physics_world`]: [`GpuPhysicsWorld`], GPU bodies stepped one tick at a time, with
//!   [`physics_bodies`] (bodies, CPU colliders, read-back state), [`physics_commands`]
//!   ([`GpuCommand`]), [`physics_events`] (events and tick results) and [`physics_layout`] (the
//!   buffer words, mirrored from `physics_layout.glsl`).
//! - [`reference`]: [`GpuReferenceWorld`], the CPU reference of the GPU step: the same bits as
//!   the shaders, for checking any device against a known answer.
//! - [`plugin`]: [`GpuPhysicsPlugin`], GPU bodies in the engine's ticks: commands stamped with
//!   their GPU tick ([`tick_commands`]), at most eight GPU ticks a frame, events handed to CPU
//!   simulation [`GPU_EVENT_LAG`] ticks later, GPU hashes in `StateHashes::gpu`; [`runtime`] holds
//!   one app's GPU world and queued ticks, and `snapshot` the hooks that put them in world
//!   snapshots.
//! - `compile` (feature `shader-compiler`): GLSL to SPIR-V in process with shaderc.
//! - [`error`]: the error type, [`GpuError`].
//!
//! Vulkan is loaded at run time, so the engine builds and runs where it is missing: opening a
//! context then fails with [`GpuError::VulkanMissing`], and CPU simulation never needs one. This
//! module must never be required by the CPU path, and never decide a determinism mode by itself:
//! it reports what the device computes ([`ConformanceReport::declare_support`]).

pub mod buffer;
#[cfg(feature = "shader-compiler")]
pub mod compile;
pub mod conformance;
pub mod context;
pub mod device;
pub mod error;
pub mod physics_bodies;
pub mod physics_commands;
pub mod physics_events;
pub mod physics_layout;
pub(crate) mod physics_upload;
pub mod physics_world;
pub mod pipeline;
pub mod plugin;
pub mod probe_cases;
pub mod reference;
pub mod runtime;
pub mod shaders;
mod snapshot;
pub mod spirv;
pub mod tick_commands;
pub mod validation;

pub use buffer::GpuBuffer;
pub use conformance::{ConformanceDifference, ConformanceRefusal, ConformanceReport, probe};
pub use context::{DEVICE_VARIABLE, GpuContext};
pub use device::{DeviceInfo, DeviceKind, FloatControls, GPU_PHYSICS_PART, MissingFloatControl};
pub use error::GpuError;
pub use physics_bodies::{GpuBodyInit, GpuBodyState, GpuCollider, GpuRule};
pub use physics_commands::GpuCommand;
pub use physics_events::{GpuEvent, GpuEventKind, GpuTickResult};
pub use physics_upload::GpuWorldImage;
pub use physics_world::{
    GRID_FIT_FRACTION, GpuPhysicsConfig, GpuPhysicsWorld, GpuStepParams, bounding_diameter,
    spirv_variant_for,
};
pub use pipeline::ComputePipeline;
pub use plugin::{
    GPU_EVENT_LAG, GpuBehaviour, GpuEvents, GpuPhysicsPlugin, MAX_GPU_TICKS_PER_FRAME,
    complete_gpu_ticks_before, finish_gpu_ticks, gpu_hash_of, gpu_hashes,
};
pub use reference::GpuReferenceWorld;
pub use runtime::GpuPhysicsStatus;
pub use runtime::{GpuRuntime, GpuRuntimeImage, GpuTickInput, shared_context};
pub use shaders::{SHADER_INCLUDES, SIMULATION_SHADERS, ShaderSource, SpirvVariant};
pub use spirv::{EMBEDDED_SPIRV, EmbeddedSpirv, embedded_spirv, embedded_spirv_variant};
pub use tick_commands::GpuPhysicsCommands;
pub use validation::VALIDATION_VARIABLE;

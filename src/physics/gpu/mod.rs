//! GPU compute on Vulkan (ash): the context, buffers, pipelines, the simulation shaders and the
//! SPIR-V precision check.
//!
//! - [`context`]: [`GpuContext`], one device and one compute queue, no window; dispatch and wait.
//! - [`device`]: [`DeviceInfo`], the device's name, driver and float controls, and whether it can
//!   run `CrossPlatform` ([`DeviceInfo::cross_platform`]).
//! - [`buffer`]: [`GpuBuffer`], host-visible storage buffers read and written as raw bits.
//! - [`pipeline`]: [`ComputePipeline`], a compute shader over storage buffers and push constants.
//! - [`shaders`]: the simulation shaders' GLSL, embedded ([`SIMULATION_SHADERS`]).
//! - [`precision`]: [`check_spirv`], which fails any compiled simulation shader that could fuse,
//!   relax or call a function devices disagree on. Pure parsing: no GPU needed.
//! - `compile` (feature `shader-compiler`): GLSL to SPIR-V in process with shaderc.
//! - [`error`]: the error type, [`GpuError`].
//!
//! Vulkan is loaded at run time, so the engine builds and runs where it is missing: opening a
//! context then fails with [`GpuError::VulkanMissing`], and CPU simulation never needs one. This
//! module must never be required by the CPU path, and never decide a determinism mode by itself:
//! it reports what the device offers ([`DeviceInfo::declare_support`]).

pub mod buffer;
#[cfg(feature = "shader-compiler")]
pub mod compile;
pub mod context;
pub mod device;
pub mod error;
pub mod pipeline;
pub mod precision;
pub mod shaders;

pub use buffer::GpuBuffer;
pub use context::GpuContext;
pub use device::{
    CrossPlatformRefusal, DeviceInfo, DeviceKind, FloatControls, GPU_PHYSICS_PART,
    MissingFloatControl,
};
pub use error::GpuError;
pub use pipeline::ComputePipeline;
pub use precision::{PrecisionError, PrecisionViolation, Problem, SourceLocation, check_spirv};
pub use shaders::{SHADER_INCLUDES, SIMULATION_SHADERS, ShaderSource};

//! [`GpuError`]: why the Vulkan compute context could not start or run a dispatch.
//!
//! This module owns the error type of [`super::GpuContext`] and everything built on it. It must
//! never decide what the engine does without a GPU: callers choose (the CPU-only engine simply
//! never opens a context), this type only says what went wrong.

use ash::vk;

/// Why the GPU compute context could not start, or a call on it failed.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GpuError {
    /// The Vulkan loader (`libvulkan.so.1`, `vulkan-1.dll`, `libvulkan.1.dylib`) could not be
    /// loaded, so no Vulkan is installed. The CPU-only engine keeps working without it.
    #[error(
        "Vulkan is not available: {reason} (install a Vulkan driver, for example Mesa's \
         lavapipe from `mesa-vulkan-drivers`, to run GPU simulation)"
    )]
    VulkanMissing {
        /// What the loader reported.
        reason: String,
    },
    /// Vulkan is installed but offers no device that can run simulation shaders: none at all, or
    /// none with Vulkan 1.2 and a compute queue. `skipped` says why each device was passed over.
    #[error("no Vulkan device can run simulation shaders{}", describe_skipped(.skipped))]
    NoSuitableDevice {
        /// One line per device that was passed over: its name and the reason.
        skipped: Vec<String>,
    },
    /// A Vulkan call failed.
    #[error("Vulkan call {call} failed: {result}")]
    Vulkan {
        /// The Vulkan function that failed, such as `vkCreateDevice`.
        call: &'static str,
        /// The result code it returned.
        result: vk::Result,
    },
    /// The device has no memory type that is both host-visible and host-coherent, which the
    /// storage buffers need.
    #[error("the device has no host-visible, host-coherent memory for storage buffers")]
    NoHostVisibleMemory,
    /// SPIR-V words handed to a pipeline do not start with the SPIR-V magic number.
    #[error("`{shader}` is not SPIR-V: it has {words} words and does not start with 0x07230203")]
    NotSpirv {
        /// The shader's name.
        shader: String,
        /// How many words it had.
        words: usize,
    },
    /// A dispatch bound a different number of buffers than the pipeline declares.
    #[error("pipeline `{shader}` takes {expected} storage buffers, the dispatch bound {bound}")]
    BindingCount {
        /// The shader's name.
        shader: String,
        /// How many storage buffers the pipeline declares.
        expected: usize,
        /// How many the dispatch passed.
        bound: usize,
    },
    /// Push constants of the wrong size for the pipeline.
    #[error(
        "pipeline `{shader}` takes {expected} bytes of push constants, the dispatch passed {passed}"
    )]
    PushConstantSize {
        /// The shader's name.
        shader: String,
        /// The size the pipeline was created with.
        expected: usize,
        /// The size the dispatch passed.
        passed: usize,
    },
    /// Push constants larger than the device allows, or not a multiple of four bytes.
    #[error("{bytes} bytes of push constants: the device allows a multiple of 4 up to {max}")]
    PushConstantLimit {
        /// The requested size.
        bytes: u32,
        /// The device's `maxPushConstantsSize`.
        max: u32,
    },
    /// A read or write outside a buffer.
    #[error("{words} words at word {offset} do not fit in a buffer of {len} words")]
    OutOfBounds {
        /// The first word accessed.
        offset: usize,
        /// How many words.
        words: usize,
        /// The buffer's length in words.
        len: usize,
    },
    /// A dispatch was given a pipeline or buffer made by a different context.
    #[error("a pipeline or buffer from another GpuContext was passed to this context's dispatch")]
    ForeignObject,
    /// A buffer of zero words was requested (Vulkan has no empty buffers).
    #[error("a storage buffer needs at least one word")]
    EmptyBuffer,
    /// The dispatch did not finish in time (a hung or lost device).
    #[error("the dispatch did not finish within {seconds} s")]
    Timeout {
        /// How long it waited.
        seconds: u64,
    },
    /// No committed SPIR-V exists for the shader (see `physics::gpu::spirv`).
    #[error("no committed SPIR-V for `{shader}` (run tools/compile-shaders.sh)")]
    MissingSpirv {
        /// The shader's name.
        shader: String,
    },
    /// A GPU physics configuration that cannot work.
    #[error("invalid GPU physics configuration: {reason}")]
    InvalidConfig {
        /// What is wrong.
        reason: String,
    },
    /// A body or command names a slot the GPU physics world does not have.
    #[error("GPU body slot {slot} is out of range: the world has {capacity} slots")]
    SlotOutOfRange {
        /// The slot named.
        slot: u32,
        /// The world's capacity.
        capacity: u32,
    },
    /// Two bodies were given the same slot.
    #[error("two GPU bodies were given slot {slot}")]
    DuplicateSlot {
        /// The slot given twice.
        slot: u32,
    },
    /// A shape the GPU solver does not simulate (GPU bodies are spheres, boxes or capsules; a
    /// half-space may only be a CPU collider).
    #[error(
        "GPU body slot {slot} has a {shape} collider: GPU bodies are spheres, boxes or capsules"
    )]
    UnsupportedShape {
        /// The body's slot.
        slot: u32,
        /// The shape's name.
        shape: &'static str,
    },
    /// A body or command carries a value the GPU cannot simulate deterministically.
    #[error("GPU body slot {slot}: {reason}")]
    InvalidBody {
        /// The body's slot.
        slot: u32,
        /// What is wrong.
        reason: String,
    },
    /// The Khronos validation layer (asked for by `RUSTING_VULKAN_VALIDATION`) reported warnings
    /// or errors during or before `call`.
    #[error("the Vulkan validation layer reported {} message(s) by the end of {call}:\n{}", .messages.len(), .messages.join("\n"))]
    Validation {
        /// The call after which the messages were collected (`vkCreateDevice`, `dispatch`).
        call: &'static str,
        /// One line per message: its severity, id and text.
        messages: Vec<String>,
    },
    /// `RUSTING_VULKAN_VALIDATION` asks for the Khronos validation layer and the loader does not
    /// have it.
    #[error(
        "RUSTING_VULKAN_VALIDATION asks for the Khronos validation layer, but the Vulkan loader \
         has no VK_LAYER_KHRONOS_validation (install `vulkan-validationlayers`, or unset the \
         variable)"
    )]
    ValidationLayerMissing,
    /// `RUSTING_VULKAN_DEVICE` names no device the loader lists.
    #[error(
        "RUSTING_VULKAN_DEVICE={wanted} matches none of the Vulkan devices here: {}",
        if .available.is_empty() { "the loader lists none".to_owned() } else { .available.join("; ") }
    )]
    NoMatchingDevice {
        /// The variable's value.
        wanted: String,
        /// Each device the loader lists, with its driver.
        available: Vec<String>,
    },
}

impl GpuError {
    pub(crate) fn vulkan(call: &'static str) -> impl FnOnce(vk::Result) -> GpuError {
        move |result| GpuError::Vulkan { call, result }
    }
}

fn describe_skipped(skipped: &[String]) -> String {
    if skipped.is_empty() {
        " (the driver lists no devices)".to_owned()
    } else {
        format!(": {}", skipped.join("; "))
    }
}

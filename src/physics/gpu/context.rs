//! [`GpuContext`]: one Vulkan device with one compute queue, opened without a window.
//!
//! This module owns the Vulkan objects every GPU computation shares: the loader entry, the
//! instance, the chosen physical device and its description ([`DeviceInfo`]), the logical device,
//! its compute queue, one command pool and buffer, and the fence a dispatch waits on. Buffers and
//! pipelines borrow the context, so the borrow checker keeps them from outliving it; `Drop` waits
//! for the device to go idle and destroys everything in reverse order of creation.
//!
//! It must never need a window, a surface or a present queue, never panic when Vulkan is missing
//! (that is [`GpuError::VulkanMissing`], and the CPU-only engine never opens a context at all),
//! and never choose a simulation mode: it reports the device's float controls and
//! [`DeviceInfo::cross_platform`] decides.

use std::ffi::CStr;
use std::sync::Mutex;

use ash::vk;

use super::device::{DeviceInfo, DeviceKind, FloatControls};
use super::error::GpuError;

/// How long a dispatch may run before [`GpuError::Timeout`].
pub(super) const DISPATCH_TIMEOUT_SECONDS: u64 = 120;

/// A Vulkan device opened for compute work.
pub struct GpuContext {
    // Field order does not matter for destruction: `Drop` destroys explicitly, in reverse order.
    _entry: ash::Entry,
    instance: ash::Instance,
    physical_device: vk::PhysicalDevice,
    device: ash::Device,
    pub(super) queue: vk::Queue,
    command_pool: vk::CommandPool,
    pub(super) command_buffer: vk::CommandBuffer,
    pub(super) fence: vk::Fence,
    memory: vk::PhysicalDeviceMemoryProperties,
    limits: vk::PhysicalDeviceLimits,
    info: DeviceInfo,
    /// Held while the one command buffer is recorded and in flight.
    pub(super) submit: Mutex<()>,
}

/// A physical device that can run simulation shaders, with what the context needs to open it.
struct Candidate {
    physical_device: vk::PhysicalDevice,
    queue_family: u32,
    info: DeviceInfo,
}

impl GpuContext {
    /// Loads Vulkan, picks the best device (a discrete GPU first, then integrated, virtual, and
    /// CPU devices such as lavapipe) that supports Vulkan 1.2 and has a compute queue, and opens it.
    ///
    /// # Errors
    ///
    /// [`GpuError::VulkanMissing`] when no Vulkan loader is installed,
    /// [`GpuError::NoSuitableDevice`] when no device qualifies, [`GpuError::Vulkan`] when a call
    /// fails.
    pub fn new() -> Result<Self, GpuError> {
        // SAFETY: loading the system's Vulkan loader runs its initialisers; the loader is a
        // well-known system library and the returned entry keeps it loaded for as long as any
        // Vulkan object made from it lives (it is stored in the context).
        let entry = unsafe { ash::Entry::load() }.map_err(|err| GpuError::VulkanMissing {
            reason: err.to_string(),
        })?;
        let app_name = c"rusting";
        let app_info = vk::ApplicationInfo::default()
            .application_name(app_name)
            .engine_name(app_name)
            .api_version(vk::API_VERSION_1_2);
        let instance_info = vk::InstanceCreateInfo::default().application_info(&app_info);
        // SAFETY: `instance_info` and the strings it points to outlive the call; no extensions or
        // layers are requested.
        let instance = match unsafe { entry.create_instance(&instance_info, None) } {
            Ok(instance) => instance,
            Err(vk::Result::ERROR_INCOMPATIBLE_DRIVER) => {
                return Err(GpuError::NoSuitableDevice {
                    skipped: vec!["the Vulkan loader found no driver (no ICD installed)".into()],
                });
            }
            Err(result) => return Err(GpuError::vulkan("vkCreateInstance")(result)),
        };
        // From here on, a failure must destroy the instance before returning.
        match Self::open(&instance) {
            Ok(parts) => Ok(Self::assemble(entry, instance, parts)),
            Err(err) => {
                // SAFETY: nothing made from the instance is alive: `open` cleans up after itself.
                unsafe { instance.destroy_instance(None) };
                Err(err)
            }
        }
    }

    /// The device this context runs on.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    pub(crate) fn device(&self) -> &ash::Device {
        &self.device
    }

    pub(crate) fn limits(&self) -> &vk::PhysicalDeviceLimits {
        &self.limits
    }

    /// The index of a memory type allowed by `type_bits` that has every flag in `flags`.
    pub(crate) fn memory_type(
        &self,
        type_bits: u32,
        flags: vk::MemoryPropertyFlags,
    ) -> Option<u32> {
        (0..self.memory.memory_type_count).find(|&index| {
            type_bits & (1 << index) != 0
                && self.memory.memory_types[index as usize]
                    .property_flags
                    .contains(flags)
        })
    }

    /// Picks the device and opens it. On failure, destroys whatever it created (not the instance).
    fn open(instance: &ash::Instance) -> Result<Opened, GpuError> {
        let candidate = pick_device(instance)?;
        let priorities = [1.0f32];
        let queue_info = vk::DeviceQueueCreateInfo::default()
            .queue_family_index(candidate.queue_family)
            .queue_priorities(&priorities);
        let queue_infos = [queue_info];
        let device_info = vk::DeviceCreateInfo::default().queue_create_infos(&queue_infos);
        // SAFETY: the physical device comes from this instance, the queue family index was
        // checked to exist and support compute, and the create info outlives the call.
        let device =
            unsafe { instance.create_device(candidate.physical_device, &device_info, None) }
                .map_err(GpuError::vulkan("vkCreateDevice"))?;
        match create_submission_objects(&device, candidate.queue_family) {
            Ok((command_pool, command_buffer, fence)) => {
                // SAFETY: queue 0 of this family was requested in the create info above.
                let queue = unsafe { device.get_device_queue(candidate.queue_family, 0) };
                // SAFETY: the physical device comes from this instance.
                let (memory, limits) = unsafe {
                    (
                        instance.get_physical_device_memory_properties(candidate.physical_device),
                        instance
                            .get_physical_device_properties(candidate.physical_device)
                            .limits,
                    )
                };
                Ok(Opened {
                    physical_device: candidate.physical_device,
                    device,
                    queue,
                    command_pool,
                    command_buffer,
                    fence,
                    memory,
                    limits,
                    info: candidate.info,
                })
            }
            Err(err) => {
                // SAFETY: nothing created from the device is alive (the helper cleans up).
                unsafe { device.destroy_device(None) };
                Err(err)
            }
        }
    }

    fn assemble(entry: ash::Entry, instance: ash::Instance, parts: Opened) -> Self {
        Self {
            _entry: entry,
            instance,
            physical_device: parts.physical_device,
            device: parts.device,
            queue: parts.queue,
            command_pool: parts.command_pool,
            command_buffer: parts.command_buffer,
            fence: parts.fence,
            memory: parts.memory,
            limits: parts.limits,
            info: parts.info,
            submit: Mutex::new(()),
        }
    }
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("info", &self.info)
            .field("physical_device", &self.physical_device)
            .finish_non_exhaustive()
    }
}

impl Drop for GpuContext {
    fn drop(&mut self) {
        // SAFETY: buffers and pipelines borrow the context, so none is alive here. After the
        // device is idle nothing uses the command buffer or the fence; each object is destroyed
        // once, children before their parents, the instance last.
        unsafe {
            // An error here means the device was lost; destroying is still the right thing to do.
            let _ = self.device.device_wait_idle();
            self.device.destroy_fence(self.fence, None);
            self.device
                .free_command_buffers(self.command_pool, &[self.command_buffer]);
            self.device.destroy_command_pool(self.command_pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

/// What [`GpuContext::open`] made.
struct Opened {
    physical_device: vk::PhysicalDevice,
    device: ash::Device,
    queue: vk::Queue,
    command_pool: vk::CommandPool,
    command_buffer: vk::CommandBuffer,
    fence: vk::Fence,
    memory: vk::PhysicalDeviceMemoryProperties,
    limits: vk::PhysicalDeviceLimits,
    info: DeviceInfo,
}

/// The command pool, its one command buffer and the dispatch fence; cleans up on failure.
fn create_submission_objects(
    device: &ash::Device,
    queue_family: u32,
) -> Result<(vk::CommandPool, vk::CommandBuffer, vk::Fence), GpuError> {
    let pool_info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(queue_family)
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    // SAFETY: the queue family belongs to this device; the create info outlives the call.
    let pool = unsafe { device.create_command_pool(&pool_info, None) }
        .map_err(GpuError::vulkan("vkCreateCommandPool"))?;
    let alloc_info = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(1);
    // SAFETY: the pool was just created from this device.
    let buffers = match unsafe { device.allocate_command_buffers(&alloc_info) } {
        Ok(buffers) => buffers,
        Err(result) => {
            // SAFETY: the pool has no command buffers in use.
            unsafe { device.destroy_command_pool(pool, None) };
            return Err(GpuError::vulkan("vkAllocateCommandBuffers")(result));
        }
    };
    // SAFETY: a plain fence create info, valid for the call.
    let fence = match unsafe { device.create_fence(&vk::FenceCreateInfo::default(), None) } {
        Ok(fence) => fence,
        Err(result) => {
            // SAFETY: the command buffer was never submitted; destroying the pool frees it.
            unsafe { device.destroy_command_pool(pool, None) };
            return Err(GpuError::vulkan("vkCreateFence")(result));
        }
    };
    Ok((pool, buffers[0], fence))
}

/// The best device for simulation shaders, or why there is none.
fn pick_device(instance: &ash::Instance) -> Result<Candidate, GpuError> {
    // SAFETY: the instance is valid for the duration of the call.
    let devices = unsafe { instance.enumerate_physical_devices() }
        .map_err(GpuError::vulkan("vkEnumeratePhysicalDevices"))?;
    let mut skipped = Vec::new();
    let mut best: Option<Candidate> = None;
    for physical_device in devices {
        match describe_device(instance, physical_device) {
            Ok(candidate) => {
                let better = best
                    .as_ref()
                    .is_none_or(|current| candidate.info.kind < current.info.kind);
                if better {
                    best = Some(candidate);
                }
            }
            Err(reason) => skipped.push(reason),
        }
    }
    best.ok_or(GpuError::NoSuitableDevice { skipped })
}

/// Describes one device, or says why it cannot run simulation shaders.
fn describe_device(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
) -> Result<Candidate, String> {
    // SAFETY: the physical device was enumerated from this instance.
    let properties = unsafe { instance.get_physical_device_properties(physical_device) };
    let name = c_text(properties.device_name_as_c_str());
    let version = properties.api_version;
    let api_version = (
        vk::api_version_major(version),
        vk::api_version_minor(version),
        vk::api_version_patch(version),
    );
    if version < vk::API_VERSION_1_2 {
        return Err(format!(
            "{name}: Vulkan {}.{} is below the 1.2 that float controls need",
            api_version.0, api_version.1
        ));
    }
    // SAFETY: as above.
    let families = unsafe { instance.get_physical_device_queue_family_properties(physical_device) };
    let Some(queue_family) = families
        .iter()
        .position(|family| family.queue_flags.contains(vk::QueueFlags::COMPUTE))
    else {
        return Err(format!("{name}: no compute queue"));
    };
    let mut float_controls = vk::PhysicalDeviceFloatControlsProperties::default();
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut properties2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut float_controls)
        .push_next(&mut driver);
    // SAFETY: the device supports Vulkan 1.2 (checked above), where both chained structures are
    // core; the chain lives on this stack frame for the whole call.
    unsafe { instance.get_physical_device_properties2(physical_device, &mut properties2) };
    let kind = match properties.device_type {
        vk::PhysicalDeviceType::DISCRETE_GPU => DeviceKind::Discrete,
        vk::PhysicalDeviceType::INTEGRATED_GPU => DeviceKind::Integrated,
        vk::PhysicalDeviceType::VIRTUAL_GPU => DeviceKind::Virtual,
        vk::PhysicalDeviceType::CPU => DeviceKind::Cpu,
        _ => DeviceKind::Other,
    };
    let info = DeviceInfo {
        name,
        kind,
        driver_name: c_text(driver.driver_name_as_c_str()),
        driver_info: c_text(driver.driver_info_as_c_str()),
        api_version,
        float_controls: FloatControls {
            denorm_preserve_f32: float_controls.shader_denorm_preserve_float32 == vk::TRUE,
            denorm_flush_to_zero_f32: float_controls.shader_denorm_flush_to_zero_float32
                == vk::TRUE,
            rounding_mode_rte_f32: float_controls.shader_rounding_mode_rte_float32 == vk::TRUE,
            signed_zero_inf_nan_preserve_f32: float_controls
                .shader_signed_zero_inf_nan_preserve_float32
                == vk::TRUE,
        },
    };
    Ok(Candidate {
        physical_device,
        queue_family: queue_family as u32,
        info,
    })
}

fn c_text(text: Result<&CStr, std::ffi::FromBytesUntilNulError>) -> String {
    match text {
        Ok(text) => text.to_string_lossy().into_owned(),
        Err(_) => "(unterminated name)".to_owned(),
    }
}

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
use super::validation::{self, Messages, Messenger, VALIDATION_LAYER};

/// `RUSTING_VULKAN_DEVICE=<text>`: run on the best device whose name or driver name contains the
/// text (ignoring case), such as `llvmpipe` or `swiftshader`, when the loader lists several (the
/// loader's own `VK_ICD_FILENAMES` or `VK_DRIVER_FILES` decide which drivers it lists).
pub const DEVICE_VARIABLE: &str = "RUSTING_VULKAN_DEVICE";

/// How long a dispatch may run before [`GpuError::Timeout`].
pub(super) const DISPATCH_TIMEOUT_SECONDS: u64 = 120;

/// A Vulkan device opened for compute work.
pub struct GpuContext {
    // Field order does not matter for destruction: `Drop` destroys explicitly, in reverse order.
    _entry: ash::Entry,
    instance: ash::Instance,
    /// The validation layer's messenger, when [`validation::VALIDATION_VARIABLE`] asked for it.
    validation: Option<Messenger>,
    physical_device: vk::PhysicalDevice,
    device: ash::Device,
    pub(super) queue: vk::Queue,
    command_pool: vk::CommandPool,
    pub(super) command_buffer: vk::CommandBuffer,
    pub(super) fence: vk::Fence,
    memory: vk::PhysicalDeviceMemoryProperties,
    limits: vk::PhysicalDeviceLimits,
    info: DeviceInfo,
    /// One pipeline cache for every pipeline made on the context: a world made after the
    /// conformance probe's (or another world) reuses the compiled shaders where the driver keeps
    /// them.
    pipeline_cache: vk::PipelineCache,
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
    /// [`DEVICE_VARIABLE`] narrows the choice to the devices it names; [`validation::VALIDATION_VARIABLE`]
    /// turns the Khronos validation layer on.
    ///
    /// # Errors
    ///
    /// [`GpuError::VulkanMissing`] when no Vulkan loader is installed,
    /// [`GpuError::NoSuitableDevice`] when no device qualifies, [`GpuError::NoMatchingDevice`]
    /// when [`DEVICE_VARIABLE`] names none, [`GpuError::ValidationLayerMissing`] and
    /// [`GpuError::Validation`] with the layer asked for, [`GpuError::Vulkan`] when a call fails.
    pub fn new() -> Result<Self, GpuError> {
        let wanted = std::env::var(DEVICE_VARIABLE)
            .ok()
            .filter(|value| !value.trim().is_empty());
        Self::with_device(wanted.as_deref())
    }

    /// [`GpuContext::new`] on the best device whose name or driver name contains `wanted`
    /// (ignoring case), or on the best device of all when `wanted` is `None`. The environment's
    /// [`DEVICE_VARIABLE`] is not read.
    ///
    /// # Errors
    ///
    /// As [`GpuContext::new`].
    pub fn with_device(wanted: Option<&str>) -> Result<Self, GpuError> {
        Self::with_settings(wanted, validation::requested())
    }

    /// [`GpuContext::with_device`], with the Khronos validation layer on when `validation` is
    /// set, whatever the environment says.
    ///
    /// # Errors
    ///
    /// As [`GpuContext::new`].
    pub fn with_settings(wanted: Option<&str>, validation: bool) -> Result<Self, GpuError> {
        let (entry, instance, messenger) = create_instance(validation)?;
        // From here on, a failure must destroy the messenger and the instance before returning.
        let opened = Self::open(&instance, wanted).and_then(|parts| {
            if let Some(messenger) = &messenger {
                messenger.messages.check("vkCreateDevice")?;
            }
            Ok(parts)
        });
        match opened {
            Ok(parts) => Ok(Self::assemble(entry, instance, messenger, parts)),
            Err(err) => {
                if let Some(messenger) = &messenger {
                    messenger.destroy();
                }
                // SAFETY: nothing made from the instance is alive: `open` cleans up after itself
                // and the messenger was destroyed above.
                unsafe { instance.destroy_instance(None) };
                Err(err)
            }
        }
    }

    /// Every Vulkan device the loader lists, described, in the loader's order, with those that
    /// cannot run simulation shaders left out (see [`GpuError::NoSuitableDevice`] for why a
    /// device is passed over). Opens no device.
    ///
    /// # Errors
    ///
    /// As [`GpuContext::new`], except that no device is an empty list.
    pub fn list_devices() -> Result<Vec<DeviceInfo>, GpuError> {
        let (_entry, instance, messenger) = create_instance(false)?;
        let devices = candidates(&instance).map(|(candidates, _)| {
            candidates
                .into_iter()
                .map(|candidate| candidate.info)
                .collect()
        });
        if let Some(messenger) = &messenger {
            messenger.destroy();
        }
        // SAFETY: no device was made from the instance.
        unsafe { instance.destroy_instance(None) };
        devices
    }

    /// Whether the validation layer is on for this context.
    pub fn validating(&self) -> bool {
        self.validation.is_some()
    }

    /// Sends `text` as a validation error through this context's messenger, as the layer would;
    /// the next dispatch then fails with [`GpuError::Validation`] naming it. For tests of that
    /// path; does nothing without the layer.
    #[doc(hidden)]
    pub fn submit_validation_message(&self, text: &CStr) {
        if let Some(messenger) = &self.validation {
            messenger.submit(text);
        }
    }

    /// `Err(GpuError::Validation)` with the messages the validation layer reported since the last
    /// check, after `call`; always `Ok` without the layer.
    pub(crate) fn check_validation(&self, call: &'static str) -> Result<(), GpuError> {
        match &self.validation {
            Some(messenger) => messenger.messages.check(call),
            None => Ok(()),
        }
    }

    /// The device this context runs on.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    pub(crate) fn device(&self) -> &ash::Device {
        &self.device
    }

    pub(crate) fn pipeline_cache(&self) -> vk::PipelineCache {
        self.pipeline_cache
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
    fn open(instance: &ash::Instance, wanted: Option<&str>) -> Result<Opened, GpuError> {
        let candidate = pick_device(instance, wanted)?;
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
        // SAFETY: a plain create info, valid for the call, on the device just made.
        let pipeline_cache =
            unsafe { device.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None) };
        let objects = pipeline_cache
            .map_err(GpuError::vulkan("vkCreatePipelineCache"))
            .and_then(|cache| {
                create_submission_objects(&device, candidate.queue_family)
                    .map(|objects| (cache, objects))
                    .inspect_err(|_| {
                        // SAFETY: nothing uses the cache yet.
                        unsafe { device.destroy_pipeline_cache(cache, None) }
                    })
            });
        match objects {
            Ok((pipeline_cache, (command_pool, command_buffer, fence))) => {
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
                    pipeline_cache,
                })
            }
            Err(err) => {
                // SAFETY: nothing created from the device is alive (the helper cleans up).
                unsafe { device.destroy_device(None) };
                Err(err)
            }
        }
    }

    fn assemble(
        entry: ash::Entry,
        instance: ash::Instance,
        validation: Option<Messenger>,
        parts: Opened,
    ) -> Self {
        Self {
            _entry: entry,
            instance,
            validation,
            physical_device: parts.physical_device,
            device: parts.device,
            queue: parts.queue,
            command_pool: parts.command_pool,
            command_buffer: parts.command_buffer,
            fence: parts.fence,
            memory: parts.memory,
            limits: parts.limits,
            info: parts.info,
            pipeline_cache: parts.pipeline_cache,
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
                .destroy_pipeline_cache(self.pipeline_cache, None);
            self.device
                .free_command_buffers(self.command_pool, &[self.command_buffer]);
            self.device.destroy_command_pool(self.command_pool, None);
            self.device.destroy_device(None);
            if let Some(messenger) = &self.validation {
                messenger.destroy();
            }
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
    pipeline_cache: vk::PipelineCache,
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

/// Loads Vulkan and creates an instance, with the validation layer, its extension and a messenger
/// when `validation` is set.
fn create_instance(
    validation: bool,
) -> Result<(ash::Entry, ash::Instance, Option<Messenger>), GpuError> {
    // SAFETY: loading the system's Vulkan loader runs its initialisers; the loader is a
    // well-known system library and the returned entry keeps it loaded for as long as any
    // Vulkan object made from it lives (it is stored in the context).
    let entry = unsafe { ash::Entry::load() }.map_err(|err| GpuError::VulkanMissing {
        reason: err.to_string(),
    })?;
    if validation {
        // SAFETY: a plain query of the loader, valid once it is loaded.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }
            .map_err(GpuError::vulkan("vkEnumerateInstanceLayerProperties"))?;
        let present = layers
            .iter()
            .any(|layer| layer.layer_name_as_c_str() == Ok(VALIDATION_LAYER));
        if !present {
            return Err(GpuError::ValidationLayerMissing);
        }
    }
    let app_name = c"rusting";
    let app_info = vk::ApplicationInfo::default()
        .application_name(app_name)
        .engine_name(app_name)
        .api_version(vk::API_VERSION_1_2);
    let layers = [VALIDATION_LAYER.as_ptr()];
    let extensions = [ash::ext::debug_utils::NAME.as_ptr()];
    // Messages raised while the instance is created go to their own store (the messenger made
    // afterwards cannot see them).
    let creation_messages = Box::<Messages>::default();
    let mut creation_messenger = validation::create_info(&creation_messages);
    let mut instance_info = vk::InstanceCreateInfo::default().application_info(&app_info);
    if validation {
        instance_info = instance_info
            .enabled_layer_names(&layers)
            .enabled_extension_names(&extensions)
            .push_next(&mut creation_messenger);
    }
    // SAFETY: `instance_info` and everything it points to (names, the chained messenger info and
    // its boxed store) outlive the call.
    let instance = match unsafe { entry.create_instance(&instance_info, None) } {
        Ok(instance) => instance,
        Err(vk::Result::ERROR_INCOMPATIBLE_DRIVER) => {
            return Err(GpuError::NoSuitableDevice {
                skipped: vec!["the Vulkan loader found no driver (no ICD installed)".into()],
            });
        }
        Err(result) => return Err(GpuError::vulkan("vkCreateInstance")(result)),
    };
    if !validation {
        return Ok((entry, instance, None));
    }
    let messenger = Messenger::new(&entry, &instance).and_then(|messenger| match creation_messages
        .check("vkCreateInstance")
    {
        Ok(()) => Ok(messenger),
        Err(err) => {
            messenger.destroy();
            Err(err)
        }
    });
    match messenger {
        Ok(messenger) => Ok((entry, instance, Some(messenger))),
        Err(err) => {
            // SAFETY: nothing made from the instance is alive.
            unsafe { instance.destroy_instance(None) };
            Err(err)
        }
    }
}

/// Every device that can run simulation shaders, in the loader's order, and why each other one
/// cannot.
fn candidates(instance: &ash::Instance) -> Result<(Vec<Candidate>, Vec<String>), GpuError> {
    // SAFETY: the instance is valid for the duration of the call.
    let devices = unsafe { instance.enumerate_physical_devices() }
        .map_err(GpuError::vulkan("vkEnumeratePhysicalDevices"))?;
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for physical_device in devices {
        match describe_device(instance, physical_device) {
            Ok(candidate) => found.push(candidate),
            Err(reason) => skipped.push(reason),
        }
    }
    Ok((found, skipped))
}

/// Whether `info` is a device `wanted` names: its name or driver name contains it, ignoring case.
fn matches(info: &DeviceInfo, wanted: &str) -> bool {
    let wanted = wanted.trim().to_lowercase();
    info.name.to_lowercase().contains(&wanted) || info.driver_name.to_lowercase().contains(&wanted)
}

/// The best device for simulation shaders among those `wanted` names (all when `None`), or why
/// there is none.
fn pick_device(instance: &ash::Instance, wanted: Option<&str>) -> Result<Candidate, GpuError> {
    let (found, skipped) = candidates(instance)?;
    let available: Vec<String> = found
        .iter()
        .map(|candidate| {
            format!(
                "{} (driver {})",
                candidate.info.name, candidate.info.driver_name
            )
        })
        .collect();
    let mut best: Option<Candidate> = None;
    for candidate in found {
        if wanted.is_some_and(|wanted| !matches(&candidate.info, wanted)) {
            continue;
        }
        let better = best
            .as_ref()
            .is_none_or(|current| candidate.info.kind < current.info.kind);
        if better {
            best = Some(candidate);
        }
    }
    match (best, wanted) {
        (Some(best), _) => Ok(best),
        (None, Some(wanted)) if !available.is_empty() => Err(GpuError::NoMatchingDevice {
            wanted: wanted.to_owned(),
            available,
        }),
        (None, _) => Err(GpuError::NoSuitableDevice { skipped }),
    }
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

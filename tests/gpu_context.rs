//! Opening the Vulkan compute context where Vulkan may or may not exist: either it opens and
//! describes its device, or it says why not. Never a panic, never a failure for a missing GPU.

use rusting_engine::physics::gpu::{GpuContext, GpuError};

/// Fails if opening the context panics, or if a device is described without a name.
#[test]
fn gpu_context_opens_or_says_why_not() {
    match GpuContext::new() {
        Ok(context) => {
            let info = context.info();
            assert!(!info.name.is_empty());
            println!(
                "Vulkan device: {info}; declared float controls: {:?}",
                info.declared_float_controls()
            );
            drop(context);
        }
        Err(err @ (GpuError::VulkanMissing { .. } | GpuError::NoSuitableDevice { .. })) => {
            println!("skipping: {err}");
        }
        Err(err) => panic!("Vulkan is present but opening it failed: {err}"),
    }
}

/// A device setting that names no device is refused with the devices there are, never a silent
/// fall-back to another device. Fails if `RUSTING_VULKAN_DEVICE` (here `with_device`) is ignored.
#[test]
fn a_device_setting_that_names_nothing_lists_the_devices() {
    match GpuContext::with_device(Some("no device has this name")) {
        Err(GpuError::NoMatchingDevice { wanted, available }) => {
            assert_eq!(wanted, "no device has this name");
            assert!(!available.is_empty());
            let devices = GpuContext::list_devices().expect("the devices are listed");
            assert_eq!(available.len(), devices.len());
        }
        Err(err @ (GpuError::VulkanMissing { .. } | GpuError::NoSuitableDevice { .. })) => {
            println!("skipping: {err}");
        }
        other => panic!("expected NoMatchingDevice: {other:?}"),
    }
}

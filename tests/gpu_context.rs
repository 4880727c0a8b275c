//! Opening the Vulkan compute context where Vulkan may or may not exist: either it opens and
//! describes its device, or it says why not. Never a panic, never a failure for a missing GPU.

use rusting_engine::physics::gpu::{GpuContext, GpuError};
use rusting_engine::runtime::mode::DeterminismMode;

/// Fails if opening the context panics, or if a device's description and its mode disagree.
#[test]
fn gpu_context_opens_or_says_why_not() {
    match GpuContext::new() {
        Ok(context) => {
            let info = context.info();
            assert!(!info.name.is_empty());
            let mode = info.supported_mode();
            match info.cross_platform() {
                Ok(()) => assert_eq!(mode, DeterminismMode::CrossPlatform),
                Err(refusal) => {
                    assert_eq!(mode, DeterminismMode::Local);
                    assert!(refusal.to_string().contains(&info.name));
                }
            }
            println!("Vulkan device: {info}; supports {mode}");
            drop(context);
        }
        Err(err @ (GpuError::VulkanMissing { .. } | GpuError::NoSuitableDevice { .. })) => {
            println!("skipping: {err}");
        }
        Err(err) => panic!("Vulkan is present but opening it failed: {err}"),
    }
}

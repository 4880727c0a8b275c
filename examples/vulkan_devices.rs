//! Lists every Vulkan device the loader finds and runs the conformance probe on each: one line per
//! device saying whether it computes the simulation shaders' bits as the CPU reference does
//! (`CrossPlatform`) or not (`Local` only, with the first differing routine or tick).
//!
//! ```text
//! cargo run --release --example vulkan_devices            # probe every device
//! cargo run --release --example vulkan_devices -- --list  # only their names, one a line
//! ```
//!
//! With `RUSTING_VULKAN_DEVICE` set, only the device it chooses is probed. `tools/gpu-cross-check.sh`
//! uses both. Exits 0 when every device probed matches, 1 when one differs, 2 when Vulkan or a
//! device cannot be opened.

use std::process::ExitCode;

use rusting_engine::physics::gpu::{DEVICE_VARIABLE, GpuContext, probe};

fn main() -> ExitCode {
    let list_only = std::env::args().any(|arg| arg == "--list");
    let devices = match GpuContext::list_devices() {
        Ok(devices) => devices,
        Err(error) => {
            eprintln!("VULKAN_UNAVAILABLE: {error}");
            return ExitCode::from(2);
        }
    };
    if list_only {
        for device in &devices {
            println!("{}", device.name);
        }
        return ExitCode::SUCCESS;
    }
    // With the variable set, the device it chooses; otherwise every device, by name.
    let names: Vec<String> = match std::env::var(DEVICE_VARIABLE) {
        Ok(wanted) if !wanted.trim().is_empty() => vec![wanted],
        _ => devices.iter().map(|device| device.name.clone()).collect(),
    };
    let mut code = ExitCode::SUCCESS;
    for name in &names {
        let report = GpuContext::with_device(Some(name)).and_then(|context| {
            println!("{}", context.info());
            probe(&context)
        });
        match report {
            Ok(report) => {
                println!("  {}", report.summary());
                if report.difference.is_some() {
                    code = ExitCode::from(1);
                }
            }
            Err(error) => {
                println!("  {name}: the probe could not run: {error}");
                return ExitCode::from(2);
            }
        }
    }
    code
}

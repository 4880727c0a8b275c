//! [`DeviceInfo`]: what a Vulkan device is and which float controls it declares.
//!
//! This module owns the description of the chosen device (name, driver, kind, API version) and
//! the float controls it declares, which choose the SPIR-V variant it runs. It is plain data so it
//! can be built and tested without a GPU. It must never talk to Vulkan itself (the context fills
//! it in) and never decide a mode from declarations: whether a device keeps `CrossPlatform` is the
//! conformance probe's answer, from the bits it computes.

use std::fmt;

/// The name GPU simulation declares its mode under in [`DeterminismSupport`].
pub const GPU_PHYSICS_PART: &str = "physics.gpu";

/// What kind of device Vulkan reports, in the order the context prefers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeviceKind {
    /// A discrete GPU (preferred).
    Discrete,
    /// A GPU that shares the CPU's memory.
    Integrated,
    /// A GPU of a virtual machine.
    Virtual,
    /// Vulkan on the CPU, such as Mesa's lavapipe (`llvmpipe`).
    Cpu,
    /// Anything else the driver reports.
    Other,
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::Discrete => "discrete GPU",
            DeviceKind::Integrated => "integrated GPU",
            DeviceKind::Virtual => "virtual GPU",
            DeviceKind::Cpu => "CPU",
            DeviceKind::Other => "other device",
        })
    }
}

/// The Vulkan 1.2 float controls that decide whether 32-bit shader arithmetic is the same on
/// every device (`VkPhysicalDeviceFloatControlsProperties`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FloatControls {
    /// `shaderDenormPreserveFloat32`: shaders can keep 32-bit subnormals instead of flushing them.
    pub denorm_preserve_f32: bool,
    /// `shaderDenormFlushToZeroFloat32`: shaders can flush 32-bit subnormals to zero.
    pub denorm_flush_to_zero_f32: bool,
    /// `shaderRoundingModeRTEFloat32`: shaders can request round-to-nearest-even.
    pub rounding_mode_rte_f32: bool,
    /// `shaderSignedZeroInfNanPreserveFloat32`: shaders can keep signed zeros, infinities and NaN
    /// instead of assuming they never occur.
    pub signed_zero_inf_nan_preserve_f32: bool,
}

/// A float control the `FloatControls` SPIR-V variant declares and a device lacks (it then runs
/// the plain variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum MissingFloatControl {
    /// `shaderDenormPreserveFloat32` is false: the device may flush subnormals, so results that
    /// pass through one differ from devices that keep them.
    DenormPreserve,
    /// `shaderRoundingModeRTEFloat32` is false: round-to-nearest-even cannot be requested.
    RoundingModeRte,
    /// `shaderSignedZeroInfNanPreserveFloat32` is false: the compiler may treat `-0`, infinities
    /// and NaN as if they never occur.
    SignedZeroInfNanPreserve,
}

impl fmt::Display for MissingFloatControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MissingFloatControl::DenormPreserve => {
                "it does not preserve 32-bit subnormals (shaderDenormPreserveFloat32 is false)"
            }
            MissingFloatControl::RoundingModeRte => {
                "it cannot guarantee round-to-nearest-even (shaderRoundingModeRTEFloat32 is false)"
            }
            MissingFloatControl::SignedZeroInfNanPreserve => {
                "it may drop signed zeros, infinities and NaN \
                 (shaderSignedZeroInfNanPreserveFloat32 is false)"
            }
        })
    }
}

impl FloatControls {
    /// Every control the `FloatControls` variant declares that is missing, in a fixed order; empty
    /// when none is.
    pub fn missing(&self) -> Vec<MissingFloatControl> {
        let mut missing = Vec::new();
        if !self.denorm_preserve_f32 {
            missing.push(MissingFloatControl::DenormPreserve);
        }
        if !self.rounding_mode_rte_f32 {
            missing.push(MissingFloatControl::RoundingModeRte);
        }
        if !self.signed_zero_inf_nan_preserve_f32 {
            missing.push(MissingFloatControl::SignedZeroInfNanPreserve);
        }
        missing
    }
}

/// The device a [`super::GpuContext`] runs on, as the driver describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device name, such as `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// What kind of device it is.
    pub kind: DeviceKind,
    /// The driver's name, such as `llvmpipe`.
    pub driver_name: String,
    /// The driver's version text, such as `Mesa 22.3.6 (LLVM 15.0.6)`.
    pub driver_info: String,
    /// The Vulkan version the device supports, as `(major, minor, patch)`.
    pub api_version: (u32, u32, u32),
    /// The 32-bit float controls.
    pub float_controls: FloatControls,
}

impl DeviceInfo {
    /// Whether the device declares every float control the `FloatControls` SPIR-V variant asks
    /// for (then it runs that variant); the float controls it lacks otherwise. Which mode the
    /// device keeps is the conformance probe's answer (`conformance::probe`), not this one.
    pub fn declared_float_controls(&self) -> Result<(), Vec<MissingFloatControl>> {
        let missing = self.float_controls.missing();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(missing)
        }
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor, patch) = self.api_version;
        write!(
            f,
            "{} ({}, Vulkan {major}.{minor}.{patch}, driver {} {})",
            self.name, self.kind, self.driver_name, self.driver_info
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lavapipe() -> DeviceInfo {
        DeviceInfo {
            name: "llvmpipe (LLVM 15.0.6, 256 bits)".to_owned(),
            kind: DeviceKind::Cpu,
            driver_name: "llvmpipe".to_owned(),
            driver_info: "Mesa 22.3.6 (LLVM 15.0.6)".to_owned(),
            api_version: (1, 3, 230),
            float_controls: FloatControls {
                denorm_preserve_f32: false,
                denorm_flush_to_zero_f32: true,
                rounding_mode_rte_f32: true,
                signed_zero_inf_nan_preserve_f32: true,
            },
        }
    }

    /// The missing controls are named in a fixed order, and a device with all of them has none
    /// missing. Fails if a control stops being required by the `FloatControls` variant.
    #[test]
    fn missing_float_controls_are_named_in_order() {
        let mut device = lavapipe();
        assert_eq!(
            device.declared_float_controls(),
            Err(vec![MissingFloatControl::DenormPreserve])
        );
        assert_eq!(
            MissingFloatControl::DenormPreserve.to_string(),
            "it does not preserve 32-bit subnormals (shaderDenormPreserveFloat32 is false)"
        );
        device.float_controls.denorm_preserve_f32 = true;
        assert_eq!(device.declared_float_controls(), Ok(()));
        device.float_controls = FloatControls::default();
        assert_eq!(
            device.declared_float_controls(),
            Err(vec![
                MissingFloatControl::DenormPreserve,
                MissingFloatControl::RoundingModeRte,
                MissingFloatControl::SignedZeroInfNanPreserve
            ])
        );
    }
}

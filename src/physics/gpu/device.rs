//! [`DeviceInfo`]: what a Vulkan device is and which determinism mode it can keep.
//!
//! This module owns the description of the chosen device (name, driver, kind, API version) and
//! its float controls, and the answer to "can this device run `CrossPlatform`?". It is plain data
//! so it can be built and tested without a GPU. It must never talk to Vulkan itself: the context
//! fills it in, and it must never raise a mode on its own: the answer comes only from what the
//! driver reports.

use std::fmt;

use crate::runtime::mode::{DeterminismMode, DeterminismSupport};

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

/// A float control that `CrossPlatform` needs and a device lacks.
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
    /// Every control `CrossPlatform` needs that is missing, in a fixed order; empty when none is.
    pub fn missing_for_cross_platform(&self) -> Vec<MissingFloatControl> {
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

/// Why a device cannot run GPU simulation in `CrossPlatform` mode.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("{device} cannot run CrossPlatform determinism: {}", describe(.missing))]
pub struct CrossPlatformRefusal {
    /// The device's name.
    pub device: String,
    /// Every missing float control, at least one.
    pub missing: Vec<MissingFloatControl>,
}

fn describe(missing: &[MissingFloatControl]) -> String {
    missing
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
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
    /// Whether GPU simulation on this device can keep `CrossPlatform` determinism: `Ok` when the
    /// driver reports every float control it needs, otherwise the reason.
    pub fn cross_platform(&self) -> Result<(), CrossPlatformRefusal> {
        let missing = self.float_controls.missing_for_cross_platform();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(CrossPlatformRefusal {
                device: self.name.clone(),
                missing,
            })
        }
    }

    /// The strongest mode GPU simulation keeps on this device: `CrossPlatform` when
    /// [`Self::cross_platform`] allows it, otherwise `Local` (one device and driver always repeat
    /// their own bits).
    pub fn supported_mode(&self) -> DeterminismMode {
        if self.cross_platform().is_ok() {
            DeterminismMode::CrossPlatform
        } else {
            DeterminismMode::Local
        }
    }

    /// Declares [`Self::supported_mode`] under [`GPU_PHYSICS_PART`], so the startup check refuses
    /// a `CrossPlatform` project on this device and names the part.
    pub fn declare_support(&self, support: &mut DeterminismSupport) {
        support.declare(GPU_PHYSICS_PART, self.supported_mode());
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

    /// Fails if a device without denormal preservation is allowed to run `CrossPlatform`, or if
    /// the refusal stops naming the missing control.
    #[test]
    fn a_device_without_denormal_preservation_runs_local_only_and_says_why() {
        let device = lavapipe();
        let refusal = device.cross_platform().unwrap_err();
        assert_eq!(refusal.missing, [MissingFloatControl::DenormPreserve]);
        assert_eq!(
            refusal.to_string(),
            "llvmpipe (LLVM 15.0.6, 256 bits) cannot run CrossPlatform determinism: it does not \
             preserve 32-bit subnormals (shaderDenormPreserveFloat32 is false)"
        );
        assert_eq!(device.supported_mode(), DeterminismMode::Local);

        let mut support = DeterminismSupport::default();
        device.declare_support(&mut support);
        assert!(support.check(DeterminismMode::Local).is_ok());
        let err = support.check(DeterminismMode::CrossPlatform).unwrap_err();
        assert!(
            err.to_string()
                .contains("`physics.gpu` supports only Local")
        );
    }

    #[test]
    fn a_device_with_every_float_control_runs_cross_platform() {
        let mut device = lavapipe();
        device.kind = DeviceKind::Discrete;
        device.float_controls.denorm_preserve_f32 = true;
        assert_eq!(device.cross_platform(), Ok(()));
        assert_eq!(device.supported_mode(), DeterminismMode::CrossPlatform);
        device.float_controls = FloatControls::default();
        assert_eq!(
            device.cross_platform().unwrap_err().missing,
            [
                MissingFloatControl::DenormPreserve,
                MissingFloatControl::RoundingModeRte,
                MissingFloatControl::SignedZeroInfNanPreserve
            ]
        );
    }
}

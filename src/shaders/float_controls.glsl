// float_controls.glsl: the SPIR-V float controls that CrossPlatform determinism needs, for 32-bit
// floats. Included by every simulation shader when RUSTING_FLOAT_CONTROLS is defined, which makes
// the CrossPlatform variant of its SPIR-V (`<shader>.float-controls.spv`); devices that support
// the controls (Vulkan 1.2 `shaderDenormPreserveFloat32`, `shaderSignedZeroInfNanPreserveFloat32`,
// `shaderRoundingModeRTEFloat32`) run that variant, others (lavapipe, which flushes subnormals)
// the plain one, in Local mode only.
//
// DenormPreserve: subnormal results and operands are kept, never flushed to zero.
// SignedZeroInfNanPreserve: no float operation may assume its values are not -0, infinite or NaN.
// RoundingModeRTE: every rounding is to nearest, ties to even, as on every CPU.
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(capabilities = [4464], 4459, 32);
spirv_execution_mode(capabilities = [4466], 4461, 32);
spirv_execution_mode(capabilities = [4467], 4462, 32);

// sim_math_probe.comp: runs one sim_math.glsl routine over a buffer of cases.
//
// The bit-exact GPU test (`shader_sim_math_matches_the_rust_reference_bit_for_bit`) feeds it the
// same inputs as the Rust reference and compares every output bit. Inputs and outputs travel as
// raw bits (uint), so no load or store can change a NaN payload or a signed zero on the way.
//
// Layout, per case i:
//   inputs[i * 20 + 0 .. 16]   the first operand: a scalar in [0], a vector in [0..n], or a
//                              matrix column by column (mat3: three columns of three, in [0..9])
//   inputs[i * 20 + 16 .. 20]  the second operand: the divisor (div) in [16], a vector otherwise
//   outputs[i * 4 + 0 .. 4]    the result's components (an int result as its two's-complement bits)
// The push constant selects the routine (see ROUTINE_*) and the number of cases.

#version 450
#ifdef RUSTING_FLOAT_CONTROLS
#include "float_controls.glsl"
#endif
#include "sim_math.glsl"

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer Inputs {
    uint inputs[];
};

layout(std430, set = 0, binding = 1) writeonly buffer Outputs {
    uint outputs[];
};

layout(push_constant) uniform Probe {
    uint routine;
    uint count;
} probe;

const uint ROUTINE_RECIP = 0u;
const uint ROUTINE_DIV = 1u;
const uint ROUTINE_SQRT = 2u;
const uint ROUTINE_RSQRT = 3u;
const uint ROUTINE_TO_INT = 4u;
const uint ROUTINE_DOT2 = 5u;
const uint ROUTINE_DOT3 = 6u;
const uint ROUTINE_DOT4 = 7u;
const uint ROUTINE_LENGTH = 8u;
const uint ROUTINE_NORMALIZE = 9u;
const uint ROUTINE_MAT3_MUL_VEC3 = 10u;
const uint ROUTINE_MAT4_MUL_VEC4 = 11u;
const uint ROUTINE_MAT4_TRANSFORM_POINT = 12u;

const uint INPUT_STRIDE = 20u;
const uint OUTPUT_STRIDE = 4u;
const uint SECOND_OPERAND = 16u;

float arg(uint base, uint k) {
    return uintBitsToFloat(inputs[base + k]);
}

vec4 vec4_at(uint base, uint k) {
    return vec4(arg(base, k), arg(base, k + 1u), arg(base, k + 2u), arg(base, k + 3u));
}

vec3 vec3_at(uint base, uint k) {
    return vec3(arg(base, k), arg(base, k + 1u), arg(base, k + 2u));
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= probe.count) {
        return;
    }
    uint base = i * INPUT_STRIDE;
    uint out_base = i * OUTPUT_STRIDE;
    uvec4 result = uvec4(0u);
    switch (probe.routine) {
    case ROUTINE_RECIP:
        result.x = floatBitsToUint(sim_recip(arg(base, 0u)));
        break;
    case ROUTINE_DIV:
        result.x = floatBitsToUint(sim_div(arg(base, 0u), arg(base, SECOND_OPERAND)));
        break;
    case ROUTINE_SQRT:
        result.x = floatBitsToUint(sim_sqrt(arg(base, 0u)));
        break;
    case ROUTINE_RSQRT:
        result.x = floatBitsToUint(sim_rsqrt(arg(base, 0u)));
        break;
    case ROUTINE_TO_INT:
        result.x = uint(sim_to_int(arg(base, 0u)));
        break;
    case ROUTINE_DOT2:
        result.x = floatBitsToUint(sim_dot(vec4_at(base, 0u).xy, vec4_at(base, SECOND_OPERAND).xy));
        break;
    case ROUTINE_DOT3:
        result.x = floatBitsToUint(sim_dot(vec3_at(base, 0u), vec3_at(base, SECOND_OPERAND)));
        break;
    case ROUTINE_DOT4:
        result.x = floatBitsToUint(sim_dot(vec4_at(base, 0u), vec4_at(base, SECOND_OPERAND)));
        break;
    case ROUTINE_LENGTH:
        result.x = floatBitsToUint(sim_length(vec3_at(base, 0u)));
        break;
    case ROUTINE_NORMALIZE:
        result.xyz = floatBitsToUint(sim_normalize(vec3_at(base, 0u)));
        break;
    case ROUTINE_MAT3_MUL_VEC3: {
        mat3 m = mat3(vec3_at(base, 0u), vec3_at(base, 3u), vec3_at(base, 6u));
        result.xyz = floatBitsToUint(sim_mat3_mul_vec3(m, vec3_at(base, SECOND_OPERAND)));
        break;
    }
    case ROUTINE_MAT4_MUL_VEC4: {
        mat4 m = mat4(vec4_at(base, 0u), vec4_at(base, 4u), vec4_at(base, 8u), vec4_at(base, 12u));
        result = floatBitsToUint(sim_mat4_mul_vec4(m, vec4_at(base, SECOND_OPERAND)));
        break;
    }
    case ROUTINE_MAT4_TRANSFORM_POINT: {
        mat4 m = mat4(vec4_at(base, 0u), vec4_at(base, 4u), vec4_at(base, 8u), vec4_at(base, 12u));
        result.xyz = floatBitsToUint(sim_mat4_transform_point(m, vec3_at(base, SECOND_OPERAND)));
        break;
    }
    default:
        break;
    }
    outputs[out_base + 0u] = result.x;
    outputs[out_base + 1u] = result.y;
    outputs[out_base + 2u] = result.z;
    outputs[out_base + 3u] = result.w;
}

// physics_hash.comp: the GPU state hash of one tick.
//
// Each occupied slot hashes its body record's simulation words (model matrix, velocities, mass,
// gravity scale, custom values, shape, kind, layers, flags, rule and rule state: words
// 0 .. BODY_HASHED_WORDS, raw bits) and its slot number with two murmur3-style lanes of 32 bits
// (different seeds), giving 64 bits. The 64-bit hashes are summed into state_hash with 32-bit
// integer atomics: the low words are added with atomicAdd, the add that wraps the low word adds the
// carry to the high word together with its own high word. Integer addition is associative and
// commutative, so the sum is the same whatever order the invocations run in. Scratch words (the
// grid cell) are not hashed: they depend on nothing but the pose, which is.
//
// Layout: physics_layout.glsl. One invocation per slot; the host zeroes state_hash first.

#version 450
#ifdef RUSTING_FLOAT_CONTROLS
#include "float_controls.glsl"
#endif
#include "physics_layout.glsl"

const uint SEED_LOW = 0x9747b28cu;
const uint SEED_HIGH = 0x5be1e5a1u;

uint rotl(uint x, uint r) {
    return (x << r) | (x >> (32u - r));
}

uint mix_word(uint h, uint k) {
    k *= 0xcc9e2d51u;
    k = rotl(k, 15u);
    k *= 0x1b873593u;
    h ^= k;
    h = rotl(h, 13u);
    return h * 5u + 0xe6546b64u;
}

uint finish(uint h, uint words) {
    h ^= words * 4u;
    h ^= h >> 16u;
    h *= 0x85ebca6bu;
    h ^= h >> 13u;
    h *= 0xc2b2ae35u;
    h ^= h >> 16u;
    return h;
}

void main() {
    uint slot = gl_GlobalInvocationID.x;
    if (slot >= step.capacity || !body_occupied(slot)) {
        return;
    }
    uint low = mix_word(SEED_LOW, slot);
    uint high = mix_word(SEED_HIGH, ~slot);
    for (uint w = 0u; w < BODY_HASHED_WORDS; w++) {
        uint word = body_word(slot, w);
        low = mix_word(low, word);
        high = mix_word(high, rotl(word, 7u) ^ w);
    }
    low = finish(low, BODY_HASHED_WORDS + 1u);
    high = finish(high, BODY_HASHED_WORDS + 1u);
    uint before = atomicAdd(state_hash[0], low);
    uint carry = before + low < before ? 1u : 0u;
    atomicAdd(state_hash[1], high + carry);
}

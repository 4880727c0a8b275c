// physics_layout.glsl: the buffers, push constants and body record layout shared by the GPU
// physics shaders (physics.comp, physics_contacts.comp, physics_hash.comp).
//
// The host side (`physics::gpu::physics_layout`) writes and reads these buffers word by word with
// the same offsets; change both together. Every value crosses as raw bits (uint), so no load or
// store changes a NaN payload or a signed zero.
//
// Bindings (set 0), the same for every physics pipeline:
//   0 bodies     BODY_STRIDE words per slot, `capacity` slots (see BODY_* below)
//   1 commands   [0] count, then COMMAND_STRIDE words per command in submission order
//   2 colliders  [0] count, then COLLIDER_STRIDE words per CPU collider in body order
//   3 grid       [0] fallback count, [1 .. 1+cap] fallback list, [1+cap .. 1+2cap] next body in
//                the same cell bucket, [1+2cap .. 1+2cap+grid_cells] bucket heads (NO_BODY = empty)
//   4 pushes     PUSH_STRIDE ints per slot: the contact pass's fixed-point sums
//   5 events     [0] count, [1] lost, then EVENT_STRIDE words per event
//   6 hash       [0] low word, [1] high word of the 64-bit sum of the body hashes

#ifndef RUSTING_PHYSICS_LAYOUT_GLSL
#define RUSTING_PHYSICS_LAYOUT_GLSL

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) buffer Bodies { uint bodies[]; };
layout(std430, set = 0, binding = 1) buffer Commands { uint commands[]; };
layout(std430, set = 0, binding = 2) buffer Colliders { uint colliders[]; };
layout(std430, set = 0, binding = 3) buffer Grid { uint grid[]; };
layout(std430, set = 0, binding = 4) buffer Pushes { int pushes[]; };
layout(std430, set = 0, binding = 5) buffer Events { uint events[]; };
layout(std430, set = 0, binding = 6) buffer Hash { uint state_hash[]; };

// One block for every physics pipeline. `tick` is the GPU tick being simulated (ticks completed
// before it) as two words; the GPU clock is tick * fixed_delta, never a frame clock.
layout(push_constant) uniform Step {
    uint tick_lo;
    uint tick_hi;
    float fixed_delta;
    float gravity_x;
    float gravity_y;
    float gravity_z;
    uint mode;
    uint capacity;
    uint grid_cells;
    float cell_size;
    uint max_events;
    uint collider_count;
} step;

const uint NO_BODY = 0xffffffffu;

// Body record, word offsets.
const uint BODY_STRIDE = 52u;
const uint BODY_MATRIX = 0u;         // 16: model matrix, column-major (rotation columns, translation)
const uint BODY_LINEAR = 16u;        // 3: linear velocity, m/s
const uint BODY_MASS = 19u;          // 1: kilograms
const uint BODY_ANGULAR = 20u;       // 3: angular velocity, rad/s about the world axes
const uint BODY_GRAVITY_SCALE = 23u; // 1
const uint BODY_CUSTOM = 24u;        // 4: game values, carried and hashed, never read by the solver
const uint BODY_SHAPE = 28u;         // 1: SHAPE_*
const uint BODY_SHAPE_PARAMS = 29u;  // 3: radius | half extents | (half height, radius)
const uint BODY_KIND = 32u;          // 1: KIND_*
const uint BODY_MEMBERSHIPS = 33u;   // 1
const uint BODY_FILTERS = 34u;       // 1
const uint BODY_FLAGS = 35u;         // 1: FLAG_*
const uint BODY_RULE = 36u;          // 1: RULE_*
const uint BODY_RULE_PARAM = 37u;    // 1: period (s) | height (m)
const uint BODY_RULE_EDGE = 38u;     // 1: 1 while below the EmitBelow height
const uint BODY_RULE_EMITTED = 39u;  // 1: 1 when the rule emitted on the last tick
const uint BODY_RULE_LAST = 40u;     // 1: GPU clock of the last emission (s), 0 before the first
const uint BODY_FRICTION = 41u;      // 1
const uint BODY_RESTITUTION = 42u;   // 1
const uint BODY_INV_INERTIA = 43u;   // 3: inverse inertia in the body's frame (diagonal); 0 unless dynamic
const uint BODY_HASHED_WORDS = 46u;  // words 0 .. 46 are simulation state and configuration
const uint BODY_CELL = 48u;          // 3: scratch, the grid cell the contact pass put the body in
const uint BODY_BUCKET = 51u;        // 1: scratch, its bucket, or NO_BODY in the fallback list

const uint SHAPE_SPHERE = 0u;
const uint SHAPE_BOX = 1u;
const uint SHAPE_CAPSULE = 2u;
const uint SHAPE_HALF_SPACE = 3u;

const uint KIND_DYNAMIC = 0u;
const uint KIND_KINEMATIC = 1u;
const uint KIND_STATIC = 2u;

const uint FLAG_OCCUPIED = 1u;
const uint FLAG_SENSOR = 2u;

const uint RULE_NONE = 0u;
const uint RULE_EMIT_EVERY = 1u;
const uint RULE_EMIT_BELOW = 2u;

// Command record: kind, slot, then 12 argument words.
const uint COMMAND_STRIDE = 14u;
const uint COMMAND_TELEPORT = 0u;     // args: rotation columns (9) and translation (3)
const uint COMMAND_SET_VELOCITY = 1u; // args: linear (3), angular (3)
const uint COMMAND_IMPULSE = 2u;      // args: impulse (3), N*s
const uint COMMAND_SET_CUSTOM = 3u;   // args: values (4)

// CPU collider record.
const uint COLLIDER_STRIDE = 24u;
const uint COLLIDER_MATRIX = 0u;      // 16: model matrix
const uint COLLIDER_SHAPE = 16u;      // 1: SHAPE_*
const uint COLLIDER_PARAMS = 17u;     // 3: shape parameters (a half-space's local normal)
const uint COLLIDER_MEMBERSHIPS = 20u;
const uint COLLIDER_FILTERS = 21u;
const uint COLLIDER_FLAGS = 22u;      // FLAG_SENSOR
const uint COLLIDER_FRICTION = 23u;

// Contact sums per slot: position push (3, 1/POSITION_SCALE m), velocity change (3,
// 1/VELOCITY_SCALE m/s), angular velocity change (3, 1/VELOCITY_SCALE rad/s).
const uint PUSH_STRIDE = 9u;
const float POSITION_SCALE = 1048576.0; // 2^20
const float VELOCITY_SCALE = 65536.0;   // 2^16
const float INV_POSITION_SCALE = 9.5367431640625e-7; // 2^-20
const float INV_VELOCITY_SCALE = 1.52587890625e-5;   // 2^-16

// Event record: slot, kind, tick (two words), rotation columns (9), translation (3).
const uint EVENT_STRIDE = 16u;
const uint EVENT_HEADER = 2u;
const uint EVENT_TIMER = 0u;
const uint EVENT_BELOW = 1u;

float body_float(uint slot, uint word) {
    return uintBitsToFloat(bodies[slot * BODY_STRIDE + word]);
}

vec3 body_vec3(uint slot, uint word) {
    return vec3(body_float(slot, word), body_float(slot, word + 1u), body_float(slot, word + 2u));
}

void set_body_float(uint slot, uint word, float value) {
    bodies[slot * BODY_STRIDE + word] = floatBitsToUint(value);
}

void set_body_vec3(uint slot, uint word, vec3 value) {
    set_body_float(slot, word, value.x);
    set_body_float(slot, word + 1u, value.y);
    set_body_float(slot, word + 2u, value.z);
}

uint body_word(uint slot, uint word) {
    return bodies[slot * BODY_STRIDE + word];
}

// The rotation part of a body's model matrix (columns 0..2).
mat3 body_rotation(uint slot) {
    return mat3(body_vec3(slot, BODY_MATRIX), body_vec3(slot, BODY_MATRIX + 4u),
                body_vec3(slot, BODY_MATRIX + 8u));
}

vec3 body_translation(uint slot) {
    return body_vec3(slot, BODY_MATRIX + 12u);
}

bool body_occupied(uint slot) {
    return (body_word(slot, BODY_FLAGS) & FLAG_OCCUPIED) != 0u;
}

float collider_float(uint index, uint word) {
    return uintBitsToFloat(colliders[1u + index * COLLIDER_STRIDE + word]);
}

vec3 collider_vec3(uint index, uint word) {
    return vec3(collider_float(index, word), collider_float(index, word + 1u),
                collider_float(index, word + 2u));
}

uint collider_word(uint index, uint word) {
    return colliders[1u + index * COLLIDER_STRIDE + word];
}

// The GPU clock at the start of tick `tick_lo + 2^32 * tick_hi`: tick * fixed_delta.
float clock_at(uint tick_lo, uint tick_hi) {
    precise float ticks = float(tick_hi) * 4294967296.0 + float(tick_lo);
    precise float t = ticks * step.fixed_delta;
    return t;
}

#endif // RUSTING_PHYSICS_LAYOUT_GLSL

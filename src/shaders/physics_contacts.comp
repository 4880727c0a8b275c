// physics_contacts.comp: the contact pass of one GPU physics tick, in two modes.
//
// MODE_INSERT: each body goes into the hash grid or the fallback list, with atomics, so which
// body lands where in a bucket's list changes from run to run. A body whose bounding sphere is
// wider than OVERSIZED_FRACTION of a cell, and every body when the grid has no memory
// (grid_cells == 0), goes into the fallback list. Cells are floor(position / cell_size) through
// sim_to_int; a cell's bucket is an integer hash of its coordinates modulo grid_cells.
//
// MODE_CONTACTS: each dynamic body collects its pushes from the GPU bodies it touches and from
// the CPU colliders, and writes their sums to its `pushes` record. A body in the grid looks
// through the 27 cells around its own (only at bodies whose cell is the one looked at, so a bucket
// shared by two cells counts nobody twice) and the whole fallback list; a body in the fallback
// list looks at every slot. A pair counts only when the bounding spheres overlap, and a body that
// is not oversized reaches no further than the next cell, so the grid finds every pair that
// counts; pairs found only through the fallback scan add nothing. Each push is converted to
// fixed point (roundEven, then sim_to_int) and summed as integers, which gives the same sums in
// any order: a run with the grid and a run without it give the same bits.
//
// Response: a body resting on a dynamic body (the contact normal within 45 degrees of straight up)
// takes the whole correction and the body below it none, so weight never pushes a support down
// (shock propagation, in one pass); other dynamic pairs share the push by mass (each moves
// mass_other / (mass_a + mass_b) of the overlap beyond CONTACT_SLOP, times CONTACT_RELAXATION); a
// kinematic or static GPU body and a CPU collider push with share 1 and are never pushed back. The velocity change cancels the
// approaching normal velocity (with the larger restitution of the two when the impact is faster
// than BOUNCE_THRESHOLD) and applies Coulomb friction (the geometric mean of the two frictions)
// against the tangential velocity. Sensors neither push nor are pushed.
//
// Layout: physics_layout.glsl. One invocation per slot.

#version 450
#ifdef RUSTING_FLOAT_CONTROLS
#include "float_controls.glsl"
#endif
#include "sim_math.glsl"
#include "physics_layout.glsl"
#include "physics_shapes.glsl"

const uint MODE_INSERT = 0u;
const uint MODE_CONTACTS = 1u;

// A body whose bounding diameter is wider than this fraction of a cell goes to the fallback list.
// The margin below 1 covers the rounding of the cell and distance computations.
const float OVERSIZED_FRACTION = 0.9;
const float CONTACT_SLOP = 0.002;
const float CONTACT_RELAXATION = 0.8;
const float BOUNCE_THRESHOLD = 1.0;
// One contact pushes at most this far (m) and changes velocity at most this much (m/s), so the
// integer sums stay far from overflow.
const float MAX_PUSH = 1.0;
const float MAX_VELOCITY_CHANGE = 1000.0;
// A contact whose normal is within 45 degrees of straight up (against gravity) is a support.
const float SUPPORT_COSINE = 0.70710677;
// Rolling resistance: the angular impulse that slows a body's spin against what it touches is at
// most this times the friction coefficient, the normal impulse and the contact's lever arm.
const float ROLLING_RESISTANCE = 0.1;

// Against gravity, unit length (zero without gravity: then every contact shares by mass).
vec3 support_up;

uint fallback_base() { return 1u; }
uint next_base() { return 1u + step.capacity; }
uint heads_base() { return 1u + 2u * step.capacity; }

int to_fixed(float value, float scale) {
    precise float scaled_value = roundEven(value * scale);
    return sim_to_int(scaled_value);
}

ivec3 cell_of(vec3 position) {
    precise float inv = sim_recip(step.cell_size);
    precise vec3 cell = floor(vec3(position.x * inv, position.y * inv, position.z * inv));
    return ivec3(sim_to_int(cell.x), sim_to_int(cell.y), sim_to_int(cell.z));
}

uint bucket_of(ivec3 cell) {
    uint h = uint(cell.x) * 0x8da6b343u;
    h ^= uint(cell.y) * 0xd8163841u;
    h ^= uint(cell.z) * 0xcb1ab31fu;
    h ^= h >> 15u;
    h *= 0x2c1b3c6du;
    h ^= h >> 12u;
    return h % step.grid_cells;
}

vec3 body_params(uint slot) {
    return body_vec3(slot, BODY_SHAPE_PARAMS);
}

bool is_oversized(uint slot) {
    precise float radius = shape_bounding_radius(body_word(slot, BODY_SHAPE), body_params(slot));
    precise float diameter = radius + radius;
    precise float limit = step.cell_size * OVERSIZED_FRACTION;
    return diameter > limit;
}

void insert(uint slot) {
    uint record = slot * BODY_STRIDE;
    if (step.grid_cells == 0u || is_oversized(slot)) {
        bodies[record + BODY_BUCKET] = NO_BODY;
        uint index = atomicAdd(grid[0], 1u);
        grid[fallback_base() + index] = slot;
        return;
    }
    ivec3 cell = cell_of(body_translation(slot));
    uint bucket = bucket_of(cell);
    bodies[record + BODY_CELL] = uint(cell.x);
    bodies[record + BODY_CELL + 1u] = uint(cell.y);
    bodies[record + BODY_CELL + 2u] = uint(cell.z);
    bodies[record + BODY_BUCKET] = bucket;
    grid[next_base() + slot] = atomicExchange(grid[heads_base() + bucket], slot);
}

bool layers_meet(uint memberships_a, uint filters_a, uint memberships_b, uint filters_b) {
    return (memberships_a & filters_b) != 0u && (memberships_b & filters_a) != 0u;
}

vec3 scaled(vec3 v, float s) {
    precise vec3 r = vec3(v.x * s, v.y * s, v.z * s);
    return r;
}

// The sums one body collects.
ivec3 sum_push;
ivec3 sum_velocity;
ivec3 sum_angular;

// I^-1 v for a body turned by `rotation` whose inverse inertia in its own frame is the diagonal
// `inv_local`.
vec3 inertia_times(mat3 rotation, vec3 inv_local, vec3 v) {
    precise vec3 local = vec3(sim_dot(v, rotation[0]), sim_dot(v, rotation[1]),
                              sim_dot(v, rotation[2]));
    precise vec3 turned = vec3(local.x * inv_local.x, local.y * inv_local.y, local.z * inv_local.z);
    return sim_mat3_mul_vec3(rotation, turned);
}

// The turning part of a body's inverse mass along `direction` at lever arm `arm`.
float turning_mass(mat3 rotation, vec3 inv_local, vec3 arm, vec3 direction) {
    precise vec3 moment = shape_cross(arm, direction);
    precise float r = sim_dot(moment, inertia_times(rotation, inv_local, moment));
    return r;
}

// What the contact sees of the other side, for the impulse.
struct Other {
    vec3 velocity;      // of its centre (a dynamic body's before this tick's gravity)
    vec3 angular;
    vec3 centre;
    mat3 rotation;
    vec3 inv_inertia;
    float inv_mass;
    bool moves;         // a dynamic body that is not this body's support: it shares the impulse
};

// The inverse mass the contact meets along `direction`: this body's, plus the other's when it
// moves.
float inverse_mass_along(vec3 direction, mat3 rotation, vec3 inv_inertia, vec3 arm,
                         float inv_mass, Other other, vec3 other_arm) {
    precise float own = inv_mass + turning_mass(rotation, inv_inertia, arm, direction);
    if (other.moves) {
        precise float theirs = other.inv_mass +
                               turning_mass(other.rotation, other.inv_inertia, other_arm, direction);
        precise float both = own + theirs;
        return both;
    }
    return own;
}

// Adds the response of body `slot` to one contact at `point`. `share` is the part of the position
// correction this body takes. The impulse stops the approach of the two bodies' points at the
// contact (restitution above BOUNCE_THRESHOLD), Coulomb friction slows their sliding, and rolling
// resistance slows their relative spin; it changes this body's velocity and angular velocity.
void respond(uint slot, vec3 normal, float depth, vec3 point, float share, Other other,
             float friction, float restitution) {
    precise float beyond = max(depth - CONTACT_SLOP, 0.0);
    precise float correction = min(beyond * CONTACT_RELAXATION * share, MAX_PUSH);
    precise vec3 push = scaled(normal, correction);
    sum_push += ivec3(to_fixed(push.x, POSITION_SCALE), to_fixed(push.y, POSITION_SCALE),
                      to_fixed(push.z, POSITION_SCALE));

    mat3 rotation = body_rotation(slot);
    precise vec3 inv_inertia = body_vec3(slot, BODY_INV_INERTIA);
    precise vec3 angular = body_vec3(slot, BODY_ANGULAR);
    precise vec3 arm = point - body_translation(slot);
    precise vec3 other_arm = point - other.centre;
    precise vec3 own_velocity = body_vec3(slot, BODY_LINEAR) + shape_cross(angular, arm);
    precise vec3 other_velocity = other.velocity + shape_cross(other.angular, other_arm);
    precise vec3 relative = own_velocity - other_velocity;
    precise float approach = sim_dot(relative, normal);
    if (!(approach < 0.0)) {
        return;
    }
    precise float mass = body_float(slot, BODY_MASS);
    precise float inv_mass = sim_recip(mass);
    precise float bounce = -approach > BOUNCE_THRESHOLD ? restitution : 0.0;
    precise float wanted = -approach * (1.0 + bounce);
    precise float normal_mass = inverse_mass_along(normal, rotation, inv_inertia, arm, inv_mass,
                                                   other, other_arm);
    precise float cap = MAX_VELOCITY_CHANGE * mass;
    precise float normal_impulse = min(sim_div(wanted, normal_mass), cap);
    precise vec3 impulse = scaled(normal, normal_impulse);
    precise vec3 tangent = relative - scaled(normal, approach);
    precise float speed = sim_length(tangent);
    if (speed > 0.0) {
        precise vec3 direction = scaled(tangent, sim_recip(speed));
        precise float limit = friction * normal_impulse;
        precise float tangent_mass = inverse_mass_along(direction, rotation, inv_inertia, arm,
                                                        inv_mass, other, other_arm);
        precise float slide = min(sim_div(speed, tangent_mass), limit);
        impulse = impulse - scaled(direction, slide);
    }
    precise vec3 dv = scaled(impulse, inv_mass);
    precise vec3 dw = inertia_times(rotation, inv_inertia, shape_cross(arm, impulse));
    precise vec3 spin = angular - other.angular;
    precise float spin_rate = sim_length(spin);
    if (spin_rate > 0.0) {
        precise vec3 axis = scaled(spin, sim_recip(spin_rate));
        precise float turning = sim_dot(axis, inertia_times(rotation, inv_inertia, axis));
        precise float roll_limit = ROLLING_RESISTANCE * friction * normal_impulse * sim_length(arm);
        precise float resist = min(sim_div(spin_rate, turning), roll_limit);
        precise float slowed = resist * turning;
        dw = dw - scaled(axis, slowed);
    }
    sum_velocity += ivec3(to_fixed(dv.x, VELOCITY_SCALE), to_fixed(dv.y, VELOCITY_SCALE),
                          to_fixed(dv.z, VELOCITY_SCALE));
    sum_angular += ivec3(to_fixed(dw.x, VELOCITY_SCALE), to_fixed(dw.y, VELOCITY_SCALE),
                         to_fixed(dw.z, VELOCITY_SCALE));
}

float mixed_friction(float a, float b) {
    precise float product = a * b;
    return sim_sqrt(product);
}

// Body `slot` against GPU body `other` (is_collider false) or CPU collider `other`. Everything
// about the other side is loaded first, so the shape test and the response appear once in the
// shader (the driver compiles one copy).
void touch(uint slot, uint other, bool is_collider) {
    uint shape_b;
    vec3 params_b;
    mat3 rot_b;
    vec3 centre_b;
    uint memberships_b;
    uint filters_b;
    uint flags_b;
    float friction_b;
    float restitution_b = 0.0;
    vec3 velocity_b = vec3(0.0);
    vec3 angular_b = vec3(0.0);
    vec3 inv_inertia_b = vec3(0.0);
    uint kind_b = KIND_STATIC;
    float mass_b = 0.0;
    if (is_collider) {
        shape_b = collider_word(other, COLLIDER_SHAPE);
        params_b = collider_vec3(other, COLLIDER_PARAMS);
        rot_b = mat3(collider_vec3(other, COLLIDER_MATRIX), collider_vec3(other, COLLIDER_MATRIX + 4u),
                     collider_vec3(other, COLLIDER_MATRIX + 8u));
        centre_b = collider_vec3(other, COLLIDER_MATRIX + 12u);
        memberships_b = collider_word(other, COLLIDER_MEMBERSHIPS);
        filters_b = collider_word(other, COLLIDER_FILTERS);
        flags_b = collider_word(other, COLLIDER_FLAGS) | FLAG_OCCUPIED;
        friction_b = collider_float(other, COLLIDER_FRICTION);
    } else {
        if (other == slot) {
            return;
        }
        shape_b = body_word(other, BODY_SHAPE);
        params_b = body_params(other);
        rot_b = body_rotation(other);
        centre_b = body_translation(other);
        memberships_b = body_word(other, BODY_MEMBERSHIPS);
        filters_b = body_word(other, BODY_FILTERS);
        flags_b = body_word(other, BODY_FLAGS);
        friction_b = body_float(other, BODY_FRICTION);
        restitution_b = body_float(other, BODY_RESTITUTION);
        kind_b = body_word(other, BODY_KIND);
        velocity_b = body_vec3(other, BODY_LINEAR);
        if (kind_b == KIND_DYNAMIC) {
            // The other body's velocity before this tick's gravity: where it was going once its
            // own contacts were resolved last tick. A body resting on a support that is held up then
            // sees it at rest and cancels its own gravity.
            precise float gain = body_float(other, BODY_GRAVITY_SCALE) * step.fixed_delta;
            precise vec3 gravity = vec3(step.gravity_x, step.gravity_y, step.gravity_z);
            precise vec3 before = velocity_b - scaled(gravity, gain);
            velocity_b = before;
        }
        mass_b = body_float(other, BODY_MASS);
        angular_b = body_vec3(other, BODY_ANGULAR);
        inv_inertia_b = body_vec3(other, BODY_INV_INERTIA);
    }
    if ((flags_b & FLAG_OCCUPIED) == 0u || (flags_b & FLAG_SENSOR) != 0u) {
        return;
    }
    if (!layers_meet(body_word(slot, BODY_MEMBERSHIPS), body_word(slot, BODY_FILTERS),
                     memberships_b, filters_b)) {
        return;
    }
    uint shape_a = body_word(slot, BODY_SHAPE);
    precise vec3 params_a = body_params(slot);
    precise vec3 centre_a = body_translation(slot);
    if (!is_collider) {
        // Only pairs whose bounding spheres overlap count (the grid finds all of those).
        precise vec3 offset = centre_a - centre_b;
        precise float reach = shape_bounding_radius(shape_a, params_a) +
                              shape_bounding_radius(shape_b, params_b);
        precise float reach2 = reach * reach;
        precise float dist2 = sim_dot(offset, offset);
        if (!(dist2 <= reach2)) {
            return;
        }
    }
    precise vec3 normal;
    precise float depth;
    precise vec3 point;
    if (!shape_contact(shape_a, params_a, body_rotation(slot), centre_a, shape_b, params_b,
                       rot_b, centre_b, normal, depth, point)) {
        return;
    }
    precise float share = 1.0;
    bool moves = false;
    if (kind_b == KIND_DYNAMIC) {
        // Shock propagation: a body resting on another takes the whole correction, the one
        // below takes none, so weight never pushes a support down; side contacts share by mass.
        precise float up = sim_dot(normal, support_up);
        if (up < -SUPPORT_COSINE) {
            return;
        }
        if (!(up > SUPPORT_COSINE)) {
            precise float mass_a = body_float(slot, BODY_MASS);
            precise float total = mass_a + mass_b;
            share = sim_div(mass_b, total);
            moves = true;
        }
    }
    precise float friction = mixed_friction(body_float(slot, BODY_FRICTION), friction_b);
    precise float restitution = max(body_float(slot, BODY_RESTITUTION), restitution_b);
    Other other_side = Other(velocity_b, angular_b, centre_b, rot_b, inv_inertia_b,
                             sim_recip(mass_b), moves);
    respond(slot, normal, depth, point, share, other_side, friction, restitution);
}

const uint PHASE_CELLS = 0u;    // the 27 cells around a grid body's cell
const uint PHASE_FALLBACK = 1u; // the fallback list, for a grid body
const uint PHASE_ALL = 2u;      // every slot, for a fallback body
const uint PHASE_COLLIDERS = 3u;
const uint PHASE_DONE = 4u;

// Walks every candidate of body `slot` in one loop with one call to `touch`, so the driver
// compiles the contact code once.
void collect(uint slot) {
    sum_push = ivec3(0);
    sum_velocity = ivec3(0);
    sum_angular = ivec3(0);
    precise vec3 gravity = vec3(step.gravity_x, step.gravity_y, step.gravity_z);
    support_up = -sim_normalize(gravity);
    uint record = slot * BODY_STRIDE;
    uint fallback_count = grid[0];
    ivec3 cell = ivec3(int(bodies[record + BODY_CELL]), int(bodies[record + BODY_CELL + 1u]),
                       int(bodies[record + BODY_CELL + 2u]));
    uint phase = bodies[record + BODY_BUCKET] == NO_BODY ? PHASE_ALL : PHASE_CELLS;
    uint counter = 0u;
    uint cursor = NO_BODY;
    uint walked = 0u;
    ivec3 look = cell;
    while (phase != PHASE_DONE) {
        uint candidate = NO_BODY;
        bool is_collider = false;
        if (phase == PHASE_CELLS) {
            if (cursor == NO_BODY) {
                if (counter < 27u) {
                    look = cell + ivec3(int(counter % 3u) - 1, int((counter / 3u) % 3u) - 1,
                                        int(counter / 9u) - 1);
                    cursor = grid[heads_base() + bucket_of(look)];
                    walked = 0u;
                    counter++;
                } else {
                    phase = PHASE_FALLBACK;
                    counter = 0u;
                }
            } else {
                uint other_record = cursor * BODY_STRIDE;
                bool same_cell = bodies[other_record + BODY_BUCKET] != NO_BODY &&
                                 int(bodies[other_record + BODY_CELL]) == look.x &&
                                 int(bodies[other_record + BODY_CELL + 1u]) == look.y &&
                                 int(bodies[other_record + BODY_CELL + 2u]) == look.z;
                if (same_cell) {
                    candidate = cursor;
                }
                cursor = grid[next_base() + cursor];
                walked++;
                // A list never holds more than every slot once.
                if (walked >= step.capacity) {
                    cursor = NO_BODY;
                }
            }
        } else if (phase == PHASE_FALLBACK) {
            if (counter < fallback_count) {
                candidate = grid[fallback_base() + counter];
                counter++;
            } else {
                phase = PHASE_COLLIDERS;
                counter = 0u;
            }
        } else if (phase == PHASE_ALL) {
            if (counter < step.capacity) {
                candidate = counter;
                counter++;
            } else {
                phase = PHASE_COLLIDERS;
                counter = 0u;
            }
        } else {
            if (counter < step.collider_count) {
                candidate = counter;
                is_collider = true;
                counter++;
            } else {
                phase = PHASE_DONE;
            }
        }
        if (candidate != NO_BODY) {
            touch(slot, candidate, is_collider);
        }
    }
    uint base = slot * PUSH_STRIDE;
    pushes[base] = sum_push.x;
    pushes[base + 1u] = sum_push.y;
    pushes[base + 2u] = sum_push.z;
    pushes[base + 3u] = sum_velocity.x;
    pushes[base + 4u] = sum_velocity.y;
    pushes[base + 5u] = sum_velocity.z;
    pushes[base + 6u] = sum_angular.x;
    pushes[base + 7u] = sum_angular.y;
    pushes[base + 8u] = sum_angular.z;
}

void main() {
    uint slot = gl_GlobalInvocationID.x;
    if (slot >= step.capacity || !body_occupied(slot)) {
        return;
    }
    if (step.mode == MODE_INSERT) {
        insert(slot);
    } else if (step.mode == MODE_CONTACTS) {
        if (body_word(slot, BODY_KIND) == KIND_DYNAMIC &&
            (body_word(slot, BODY_FLAGS) & FLAG_SENSOR) == 0u) {
            collect(slot);
        } else {
            uint base = slot * PUSH_STRIDE;
            for (uint w = 0u; w < PUSH_STRIDE; w++) {
                pushes[base + w] = 0;
            }
        }
    }
}

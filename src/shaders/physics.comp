// physics.comp: one GPU physics tick's body work, in two modes (push constant `mode`).
//
// MODE_INTEGRATE, before the contact pass: each body applies the tick's commands addressed to its
// slot, in submission order; then a dynamic body gains gravity * gravity_scale * fixed_delta of
// velocity.
//
// MODE_APPLY, after the contact pass: a dynamic body adds its fixed-point contact sums (position
// push, velocity and angular velocity change, see physics_contacts.comp) to its pose and
// velocities. Dynamic and
// kinematic bodies then move by velocity * fixed_delta and turn by their angular velocity (the
// rotation columns are advanced and re-orthonormalized); static bodies never move. So contacts
// see the velocity gravity is about to add and cancel it before it moves anything (semi-implicit
// Euler), which is what lets a stack rest. Then every body's
// rule runs on its final pose for the tick: EmitEvery emits on the tick during which the GPU clock
// (tick * fixed_delta, from the push constants, never a frame clock) crosses a multiple of the
// period; EmitBelow emits when translation.y goes below the height, once per crossing (the edge
// word remembers being below). Events land in the event buffer in atomic order; the host sorts
// them. Past `max_events`, an event is counted as lost instead.
//
// Layout: physics_layout.glsl. One invocation per slot; empty slots do nothing.

#version 450
#ifdef RUSTING_FLOAT_CONTROLS
#include "float_controls.glsl"
#endif
#include "sim_math.glsl"
#include "physics_layout.glsl"

const uint MODE_INTEGRATE = 0u;
const uint MODE_APPLY = 1u;

float command_float(uint command, uint arg) {
    return uintBitsToFloat(commands[1u + command * COMMAND_STRIDE + 2u + arg]);
}

vec3 command_vec3(uint command, uint arg) {
    return vec3(command_float(command, arg), command_float(command, arg + 1u),
                command_float(command, arg + 2u));
}

void apply_commands(uint slot) {
    uint count = commands[0];
    for (uint c = 0u; c < count; c++) {
        uint base = 1u + c * COMMAND_STRIDE;
        if (commands[base + 1u] != slot) {
            continue;
        }
        uint kind = commands[base];
        if (kind == COMMAND_TELEPORT) {
            for (uint w = 0u; w < 3u; w++) {
                set_body_vec3(slot, BODY_MATRIX + w * 4u, command_vec3(c, w * 3u));
            }
            set_body_vec3(slot, BODY_MATRIX + 12u, command_vec3(c, 9u));
        } else if (kind == COMMAND_SET_VELOCITY) {
            set_body_vec3(slot, BODY_LINEAR, command_vec3(c, 0u));
            set_body_vec3(slot, BODY_ANGULAR, command_vec3(c, 3u));
        } else if (kind == COMMAND_IMPULSE) {
            if (body_word(slot, BODY_KIND) == KIND_DYNAMIC) {
                precise float inv_mass = sim_recip(body_float(slot, BODY_MASS));
                precise vec3 impulse = command_vec3(c, 0u);
                precise vec3 v = body_vec3(slot, BODY_LINEAR) +
                                 vec3(impulse.x * inv_mass, impulse.y * inv_mass,
                                      impulse.z * inv_mass);
                set_body_vec3(slot, BODY_LINEAR, v);
            }
        } else if (kind == COMMAND_SET_CUSTOM) {
            for (uint w = 0u; w < 4u; w++) {
                bodies[slot * BODY_STRIDE + BODY_CUSTOM + w] =
                    commands[base + 2u + w];
            }
        }
    }
}

vec3 scaled(vec3 v, float s) {
    precise vec3 r = vec3(v.x * s, v.y * s, v.z * s);
    return r;
}

vec3 cross3(vec3 a, vec3 b) {
    precise vec3 r = vec3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
    return r;
}

// Gravity: a dynamic body gains gravity * gravity_scale * fixed_delta of velocity.
void accelerate(uint slot) {
    if (body_word(slot, BODY_KIND) != KIND_DYNAMIC) {
        return;
    }
    precise float g_scale = body_float(slot, BODY_GRAVITY_SCALE);
    precise vec3 gravity = vec3(step.gravity_x, step.gravity_y, step.gravity_z);
    precise float gain = g_scale * step.fixed_delta;
    precise vec3 v = body_vec3(slot, BODY_LINEAR) + scaled(gravity, gain);
    set_body_vec3(slot, BODY_LINEAR, v);
}

// Motion: dynamic and kinematic bodies move by velocity * fixed_delta and turn by their angular
// velocity.
void move(uint slot) {
    if (body_word(slot, BODY_KIND) == KIND_STATIC) {
        return;
    }
    precise float dt = step.fixed_delta;
    precise vec3 v = body_vec3(slot, BODY_LINEAR);
    precise vec3 position = body_translation(slot) + scaled(v, dt);
    set_body_vec3(slot, BODY_MATRIX + 12u, position);
    precise vec3 w = body_vec3(slot, BODY_ANGULAR);
    if (w == vec3(0.0)) {
        // No turn: the rotation columns keep their bits.
        return;
    }
    // R' = R + dt [w]x R, then Gram-Schmidt so the columns stay a rotation.
    precise vec3 wdt = scaled(w, dt);
    precise vec3 c0 = body_vec3(slot, BODY_MATRIX);
    precise vec3 c1 = body_vec3(slot, BODY_MATRIX + 4u);
    precise vec3 n0 = sim_normalize(c0 + cross3(wdt, c0));
    precise vec3 m1 = c1 + cross3(wdt, c1);
    precise float along = sim_dot(m1, n0);
    precise vec3 n1 = sim_normalize(m1 - scaled(n0, along));
    precise vec3 n2 = cross3(n0, n1);
    set_body_vec3(slot, BODY_MATRIX, n0);
    set_body_vec3(slot, BODY_MATRIX + 4u, n1);
    set_body_vec3(slot, BODY_MATRIX + 8u, n2);
}

void apply_contacts(uint slot) {
    if (body_word(slot, BODY_KIND) != KIND_DYNAMIC) {
        return;
    }
    uint base = slot * PUSH_STRIDE;
    precise float inv_position = INV_POSITION_SCALE;
    precise float inv_velocity = INV_VELOCITY_SCALE;
    precise vec3 push = vec3(float(pushes[base]), float(pushes[base + 1u]),
                             float(pushes[base + 2u]));
    precise vec3 dv = vec3(float(pushes[base + 3u]), float(pushes[base + 4u]),
                           float(pushes[base + 5u]));
    precise vec3 dw = vec3(float(pushes[base + 6u]), float(pushes[base + 7u]),
                           float(pushes[base + 8u]));
    precise vec3 position = body_translation(slot) + scaled(push, inv_position);
    precise vec3 v = body_vec3(slot, BODY_LINEAR) + scaled(dv, inv_velocity);
    precise vec3 w = body_vec3(slot, BODY_ANGULAR) + scaled(dw, inv_velocity);
    set_body_vec3(slot, BODY_MATRIX + 12u, position);
    set_body_vec3(slot, BODY_LINEAR, v);
    set_body_vec3(slot, BODY_ANGULAR, w);
}

void emit(uint slot, uint kind) {
    uint index = atomicAdd(events[0], 1u);
    if (index >= step.max_events) {
        atomicAdd(events[1], 1u);
        return;
    }
    uint base = 2u + index * EVENT_STRIDE;
    events[base] = slot;
    events[base + 1u] = kind;
    events[base + 2u] = step.tick_lo;
    events[base + 3u] = step.tick_hi;
    for (uint column = 0u; column < 4u; column++) {
        for (uint row = 0u; row < 3u; row++) {
            events[base + 4u + column * 3u + row] =
                body_word(slot, BODY_MATRIX + column * 4u + row);
        }
    }
}

void run_rule(uint slot) {
    uint rule = body_word(slot, BODY_RULE);
    uint emitted = 0u;
    if (rule == RULE_EMIT_EVERY) {
        precise float period = body_float(slot, BODY_RULE_PARAM);
        uint next_lo = step.tick_lo + 1u;
        uint next_hi = step.tick_hi + (next_lo == 0u ? 1u : 0u);
        precise float start = clock_at(step.tick_lo, step.tick_hi);
        precise float end = clock_at(next_lo, next_hi);
        if (period > 0.0) {
            precise float before = floor(sim_div(start, period));
            precise float after = floor(sim_div(end, period));
            if (after > before) {
                emitted = 1u;
                set_body_float(slot, BODY_RULE_LAST, end);
                emit(slot, EVENT_TIMER);
            }
        }
    } else if (rule == RULE_EMIT_BELOW) {
        precise float height = body_float(slot, BODY_RULE_PARAM);
        precise float y = body_float(slot, BODY_MATRIX + 13u);
        uint below = y < height ? 1u : 0u;
        if (below == 1u && body_word(slot, BODY_RULE_EDGE) == 0u) {
            emitted = 1u;
            uint next_lo = step.tick_lo + 1u;
            uint next_hi = step.tick_hi + (next_lo == 0u ? 1u : 0u);
            set_body_float(slot, BODY_RULE_LAST, clock_at(next_lo, next_hi));
            emit(slot, EVENT_BELOW);
        }
        bodies[slot * BODY_STRIDE + BODY_RULE_EDGE] = below;
    }
    bodies[slot * BODY_STRIDE + BODY_RULE_EMITTED] = emitted;
}

void main() {
    uint slot = gl_GlobalInvocationID.x;
    if (slot >= step.capacity || !body_occupied(slot)) {
        return;
    }
    if (step.mode == MODE_INTEGRATE) {
        apply_commands(slot);
        accelerate(slot);
    } else if (step.mode == MODE_APPLY) {
        apply_contacts(slot);
        move(slot);
        run_rule(slot);
    }
}

//! The per-body passes of the CPU reference, operation for operation `physics.comp` (commands,
//! gravity, contact sums, motion, rules) and `physics_hash.comp` (the state hash).
//!
//! This module owns what one body does to its own record in a tick. Each function mirrors the
//! GLSL function of the same name; a change to either must be made to both. It must never read
//! another body's record: in the shader these passes run one invocation per slot.

use super::contacts::Sums;
use super::float::{F, V3};
use super::{Step, Words, WordsMut};
use crate::physics::gpu::physics_layout::*;

const INV_POSITION_SCALE: F = F(1.0 / 1_048_576.0);
const INV_VELOCITY_SCALE: F = F(1.0 / 65_536.0);

/// The commands addressed to this body, in list order (`apply_commands`).
pub(crate) fn apply_commands(record: &mut [u32], slot: u32, commands: &[u32]) {
    let count = commands[0] as usize;
    for c in 0..count {
        let base = 1 + c * COMMAND_STRIDE;
        let command = &commands[base..base + COMMAND_STRIDE];
        if command[1] != slot {
            continue;
        }
        let args = Words(&command[2..]);
        let mut body = WordsMut(record);
        match command[0] {
            COMMAND_TELEPORT => {
                for column in 0..3 {
                    body.set_v3(BODY_MATRIX + column * 4, args.v3(column * 3));
                }
                body.set_v3(BODY_MATRIX + 12, args.v3(9));
            }
            COMMAND_SET_VELOCITY => {
                body.set_v3(BODY_LINEAR, args.v3(0));
                body.set_v3(BODY_ANGULAR, args.v3(3));
            }
            COMMAND_IMPULSE if body.word(BODY_KIND) == KIND_DYNAMIC => {
                let inv_mass = body.f(BODY_MASS).recip();
                let v = body.v3(BODY_LINEAR) + args.v3(0).scale(inv_mass);
                body.set_v3(BODY_LINEAR, v);
            }
            COMMAND_SET_CUSTOM => {
                record[BODY_CUSTOM..BODY_CUSTOM + 4].copy_from_slice(&command[2..6]);
            }
            _ => {}
        }
    }
}

/// Gravity for a dynamic body (`accelerate`).
pub(crate) fn accelerate(record: &mut [u32], step: &Step) {
    if record[BODY_KIND] != KIND_DYNAMIC {
        return;
    }
    let mut body = WordsMut(record);
    let gain = body.f(BODY_GRAVITY_SCALE) * step.dt;
    let v = body.v3(BODY_LINEAR) + step.gravity.scale(gain);
    body.set_v3(BODY_LINEAR, v);
}

/// The contact sums added to a dynamic body (`apply_contacts`).
pub(crate) fn apply_contacts(record: &mut [u32], sums: &Sums) {
    if record[BODY_KIND] != KIND_DYNAMIC {
        return;
    }
    let fixed = |v: [i32; 3]| V3::new(F::from_int(v[0]), F::from_int(v[1]), F::from_int(v[2]));
    let mut body = WordsMut(record);
    let position = body.v3(BODY_MATRIX + 12) + fixed(sums.push).scale(INV_POSITION_SCALE);
    let v = body.v3(BODY_LINEAR) + fixed(sums.velocity).scale(INV_VELOCITY_SCALE);
    let w = body.v3(BODY_ANGULAR) + fixed(sums.angular).scale(INV_VELOCITY_SCALE);
    body.set_v3(BODY_MATRIX + 12, position);
    body.set_v3(BODY_LINEAR, v);
    body.set_v3(BODY_ANGULAR, w);
}

/// Motion by the velocities (`move`): the rotation columns advance by `dt [w]x R` and are
/// re-orthonormalized.
pub(crate) fn integrate_motion(record: &mut [u32], step: &Step) {
    if record[BODY_KIND] == KIND_STATIC {
        return;
    }
    let mut body = WordsMut(record);
    let dt = step.dt;
    let v = body.v3(BODY_LINEAR);
    let position = body.v3(BODY_MATRIX + 12) + v.scale(dt);
    body.set_v3(BODY_MATRIX + 12, position);
    let w = body.v3(BODY_ANGULAR);
    if w.equals(V3::ZERO) {
        return;
    }
    let wdt = w.scale(dt);
    let c0 = body.v3(BODY_MATRIX);
    let c1 = body.v3(BODY_MATRIX + 4);
    let n0 = (c0 + wdt.cross(c0)).normalize();
    let m1 = c1 + wdt.cross(c1);
    let along = m1.dot(n0);
    let n1 = (m1 - n0.scale(along)).normalize();
    let n2 = n0.cross(n1);
    body.set_v3(BODY_MATRIX, n0);
    body.set_v3(BODY_MATRIX + 4, n1);
    body.set_v3(BODY_MATRIX + 8, n2);
}

/// The GPU clock at the start of `tick`: `tick * fixed_delta` (`clock_at`).
fn clock_at(tick: u64, dt: F) -> F {
    let ticks = F((tick >> 32) as u32 as f32) * F(4_294_967_296.0) + F(tick as u32 as f32);
    ticks * dt
}

/// One event record (`emit`), appended to `events` (`EVENT_STRIDE` words each).
fn emit(events: &mut Vec<u32>, record: &[u32], slot: u32, kind: u32, tick: u64) {
    events.extend([slot, kind, tick as u32, (tick >> 32) as u32]);
    for column in 0..4 {
        for row in 0..3 {
            events.push(record[BODY_MATRIX + column * 4 + row]);
        }
    }
}

/// The body's rule on its final pose for the tick (`run_rule`).
pub(crate) fn run_rule(record: &mut [u32], slot: u32, step: &Step, events: &mut Vec<u32>) {
    let rule = record[BODY_RULE];
    let mut emitted = 0;
    // The next tick wraps like the shader's two words.
    let next = step.tick.wrapping_add(1);
    if rule == RULE_EMIT_EVERY {
        let period = Words(record).f(BODY_RULE_PARAM);
        let start = clock_at(step.tick, step.dt);
        let end = clock_at(next, step.dt);
        if period.0 > 0.0 {
            let before = start.div(period).floor();
            let after = end.div(period).floor();
            if after.0 > before.0 {
                emitted = 1;
                record[BODY_RULE_LAST] = end.bits();
                emit(events, record, slot, EVENT_TIMER, step.tick);
            }
        }
    } else if rule == RULE_EMIT_BELOW {
        let height = Words(record).f(BODY_RULE_PARAM);
        let y = Words(record).f(BODY_MATRIX + 13);
        let below = u32::from(y.0 < height.0);
        if below == 1 && record[BODY_RULE_EDGE] == 0 {
            emitted = 1;
            record[BODY_RULE_LAST] = clock_at(next, step.dt).bits();
            emit(events, record, slot, EVENT_BELOW, step.tick);
        }
        record[BODY_RULE_EDGE] = below;
    }
    record[BODY_RULE_EMITTED] = emitted;
}

const SEED_LOW: u32 = 0x9747_b28c;
const SEED_HIGH: u32 = 0x5be1_e5a1;
const HASHED_WORDS: u32 = BODY_HASHED_WORDS as u32;

fn mix_word(h: u32, k: u32) -> u32 {
    let k = k
        .wrapping_mul(0xcc9e_2d51)
        .rotate_left(15)
        .wrapping_mul(0x1b87_3593);
    (h ^ k)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

fn finish(h: u32, words: u32) -> u32 {
    let mut h = h ^ words.wrapping_mul(4);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The body's 64-bit hash (`physics_hash.comp`): two murmur3-style lanes over its slot and
/// simulation words. The world's hash is the wrapping sum over occupied slots.
pub(crate) fn body_hash(record: &[u32], slot: u32) -> u64 {
    let mut low = mix_word(SEED_LOW, slot);
    let mut high = mix_word(SEED_HIGH, !slot);
    for w in 0..HASHED_WORDS {
        let word = record[w as usize];
        low = mix_word(low, word);
        high = mix_word(high, word.rotate_left(7) ^ w);
    }
    let low = finish(low, HASHED_WORDS + 1);
    let high = finish(high, HASHED_WORDS + 1);
    u64::from(low) | (u64::from(high) << 32)
}

//! [`GpuEvent`] and [`GpuTickResult`]: what one GPU physics tick reports back.
//!
//! This module owns the decoding of the event buffer (`[count, lost, events...]`, `EVENT_STRIDE`
//! words per event: slot, kind, tick, the pose's rotation columns and translation) into events
//! sorted by `(tick, slot, kind)`, so the order atomics wrote them in never shows. Past
//! `max_events` the shader counts events instead of writing them; the count comes back as
//! [`GpuTickResult::lost_events`] and is logged. It must never invent or reorder events otherwise;
//! which events are lost on overflow depends on atomic order and is not deterministic.

use bevy::math::{Quat, Vec3};

use super::physics_bodies::matrix_pose;
use super::physics_layout::*;

/// Which rule produced an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, rusting_macros::SimState)]
pub enum GpuEventKind {
    /// `GpuRule::EmitEvery`: the GPU clock crossed a multiple of the period during the tick.
    Timer,
    /// `GpuRule::EmitBelow`: the body went below the height during the tick.
    Below,
}

/// One event from one GPU body.
#[derive(Clone, Copy, Debug, PartialEq, rusting_macros::SimState)]
pub struct GpuEvent {
    /// The GPU tick that produced it.
    pub tick: u64,
    /// The body's slot.
    pub slot: u32,
    /// The rule that fired.
    pub kind: GpuEventKind,
    /// The body's position at the end of the tick.
    pub translation: Vec3,
    /// The body's orientation at the end of the tick (through `sim_math::transform_from_matrix`).
    pub rotation: Quat,
}

/// What one `GpuPhysicsWorld::step` reports.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuTickResult {
    /// The tick simulated.
    pub tick: u64,
    /// The GPU state hash after the tick: the wrapping sum of every body's 64-bit hash.
    pub hash: u64,
    /// The tick's events, sorted by `(tick, slot, kind)`.
    pub events: Vec<GpuEvent>,
    /// Events the buffer had no room for (see `GpuPhysicsConfig::max_events`).
    pub lost_events: u32,
}

/// The events in the event buffer's `words`, sorted, and how many were lost.
pub(crate) fn decode_events(words: &[u32], max_events: u32) -> (Vec<GpuEvent>, u32) {
    let written = words[0].min(max_events) as usize;
    let lost = words[1];
    let mut events: Vec<GpuEvent> = (0..written)
        .filter_map(|index| {
            let record = &words[EVENT_HEADER + index * EVENT_STRIDE..][..EVENT_STRIDE];
            let kind = match record[1] {
                EVENT_TIMER => GpuEventKind::Timer,
                EVENT_BELOW => GpuEventKind::Below,
                _ => return None,
            };
            let mut columns = [0.0f32; 16];
            for column in 0..4 {
                for row in 0..3 {
                    columns[column * 4 + row] = f32::from_bits(record[4 + column * 3 + row]);
                }
            }
            columns[15] = 1.0;
            let (translation, rotation) = matrix_pose(&columns);
            Some(GpuEvent {
                tick: u64::from(record[2]) | (u64::from(record[3]) << 32),
                slot: record[0],
                kind,
                translation,
                rotation,
            })
        })
        .collect();
    events.sort_by_key(|event| (event.tick, event.slot, event.kind));
    (events, lost)
}

//! [`GpuCommand`]: what the CPU tells GPU bodies to do before a tick.
//!
//! This module owns the commands and their records in the commands buffer
//! (`COMMAND_STRIDE` words: kind, slot, 12 argument words). The commands passed to one
//! `GpuPhysicsWorld::step` apply before that tick, in the order given: each body scans the whole
//! list and applies the ones addressed to its slot in list order. A teleport's pose goes up as
//! `sim_math::transform_matrix`, like a body's initial pose. It must never reorder commands.

use bevy::math::{Quat, Vec3};

use super::error::GpuError;
use super::physics_bodies::pose_matrix;
use super::physics_layout::*;

/// One command for one GPU body.
#[derive(Clone, Copy, Debug, PartialEq, rusting_macros::SimState)]
pub enum GpuCommand {
    /// Puts the body at a pose; its velocities stay.
    Teleport {
        /// The body's slot.
        slot: u32,
        /// Position, metres.
        translation: Vec3,
        /// Orientation.
        rotation: Quat,
    },
    /// Replaces the body's velocities.
    SetVelocity {
        /// The body's slot.
        slot: u32,
        /// m/s.
        linear: Vec3,
        /// rad/s about the world axes.
        angular: Vec3,
    },
    /// Adds `impulse / mass` to a dynamic body's linear velocity; kinematic and static bodies
    /// ignore it.
    ApplyImpulse {
        /// The body's slot.
        slot: u32,
        /// N*s.
        impulse: Vec3,
    },
    /// Replaces the body's custom values.
    SetCustom {
        /// The body's slot.
        slot: u32,
        /// The new values.
        values: [f32; 4],
    },
}

impl GpuCommand {
    /// The slot the command addresses.
    pub fn slot(&self) -> u32 {
        match *self {
            GpuCommand::Teleport { slot, .. }
            | GpuCommand::SetVelocity { slot, .. }
            | GpuCommand::ApplyImpulse { slot, .. }
            | GpuCommand::SetCustom { slot, .. } => slot,
        }
    }

    /// The command's record (`COMMAND_STRIDE` words).
    pub(crate) fn record(&self) -> Result<[u32; COMMAND_STRIDE], GpuError> {
        let mut args = [0.0f32; COMMAND_STRIDE - 2];
        let kind = match *self {
            GpuCommand::Teleport {
                translation,
                rotation,
                ..
            } => {
                let matrix = pose_matrix(translation, rotation);
                for column in 0..4 {
                    args[column * 3..column * 3 + 3]
                        .copy_from_slice(&matrix[column * 4..column * 4 + 3]);
                }
                COMMAND_TELEPORT
            }
            GpuCommand::SetVelocity {
                linear, angular, ..
            } => {
                args[..3].copy_from_slice(&linear.to_array());
                args[3..6].copy_from_slice(&angular.to_array());
                COMMAND_SET_VELOCITY
            }
            GpuCommand::ApplyImpulse { impulse, .. } => {
                args[..3].copy_from_slice(&impulse.to_array());
                COMMAND_IMPULSE
            }
            GpuCommand::SetCustom { values, .. } => {
                args[..4].copy_from_slice(&values);
                COMMAND_SET_CUSTOM
            }
        };
        if !args.iter().all(|value| value.is_finite()) {
            return Err(GpuError::InvalidBody {
                slot: self.slot(),
                reason: format!("a command carries a value that is not finite: {self:?}"),
            });
        }
        let mut record = [0u32; COMMAND_STRIDE];
        record[0] = kind;
        record[1] = self.slot();
        for (word, value) in args.iter().enumerate() {
            record[2 + word] = value.to_bits();
        }
        Ok(record)
    }
}

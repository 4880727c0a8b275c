//! The validated word images a GPU physics world uploads: its configuration, its bodies by slot,
//! its CPU colliders, one tick's commands and parameters.
//!
//! This module owns the checks both steppers of GPU physics make before touching their buffers,
//! [`GpuPhysicsWorld`](super::GpuPhysicsWorld) on a device and the CPU reference
//! ([`GpuReferenceWorld`](super::GpuReferenceWorld)), so the two refuse exactly the same inputs
//! and start from exactly the same words. It must never write a buffer itself.

use super::error::GpuError;
use super::physics_bodies::{GpuBodyInit, GpuCollider};
use super::physics_commands::GpuCommand;
use super::physics_layout::*;

/// The buffer sizes `config` needs, in words: bodies, grid, events.
///
/// # Errors
///
/// [`GpuError::InvalidConfig`] for a zero capacity, a cell size that is not positive and finite,
/// or sizes whose buffers would not fit in 32-bit indices.
pub(crate) fn checked_sizes(config: &GpuPhysicsConfig) -> Result<[u64; 3], GpuError> {
    let invalid = |reason: &str| GpuError::InvalidConfig {
        reason: reason.to_owned(),
    };
    if config.capacity == 0 {
        return Err(invalid("the capacity must be at least one body"));
    }
    if !(config.cell_size > 0.0 && config.cell_size.is_finite()) {
        return Err(invalid("the cell size must be positive and finite"));
    }
    let body_words = config.capacity as u64 * BODY_STRIDE as u64;
    let grid_words = 1 + 2 * config.capacity as u64 + config.grid_cells as u64;
    let event_words = EVENT_HEADER as u64 + config.max_events as u64 * EVENT_STRIDE as u64;
    let sizes = [body_words, grid_words, event_words];
    if sizes.iter().any(|&words| words > u64::from(u32::MAX)) {
        return Err(invalid("the buffers would not fit in 32-bit word indices"));
    }
    Ok(sizes)
}

/// Every body's record with its slot, sorted by slot.
///
/// # Errors
///
/// [`GpuError::SlotOutOfRange`], [`GpuError::DuplicateSlot`], [`GpuError::UnsupportedShape`] (a
/// half-space body) or [`GpuError::InvalidBody`].
pub(crate) fn body_records(
    bodies: &[GpuBodyInit],
    capacity: u32,
) -> Result<Vec<(u32, Vec<u32>)>, GpuError> {
    let mut sorted: Vec<&GpuBodyInit> = bodies.iter().collect();
    sorted.sort_by_key(|body| body.slot);
    let mut records = Vec::with_capacity(sorted.len());
    for (index, body) in sorted.iter().enumerate() {
        if body.slot >= capacity {
            return Err(GpuError::SlotOutOfRange {
                slot: body.slot,
                capacity,
            });
        }
        if index > 0 && sorted[index - 1].slot == body.slot {
            return Err(GpuError::DuplicateSlot { slot: body.slot });
        }
        records.push((body.slot, body.record()?));
    }
    Ok(records)
}

/// The records of bodies joining a world between ticks: [`body_records`]'s, after checking that
/// every slot is empty (`occupied(slot)` reads the world's flags).
///
/// # Errors
///
/// What `body_records` refuses, and [`GpuError::DuplicateSlot`] for a slot that holds a body.
pub(crate) fn joining_records(
    bodies: &[GpuBodyInit],
    capacity: u32,
    mut occupied: impl FnMut(u32) -> Result<bool, GpuError>,
) -> Result<Vec<(u32, Vec<u32>)>, GpuError> {
    let records = body_records(bodies, capacity)?;
    for (slot, _) in &records {
        if occupied(*slot)? {
            return Err(GpuError::DuplicateSlot { slot: *slot });
        }
    }
    Ok(records)
}

/// `config` grown to `capacity` slots, with its buffer sizes (as [`checked_sizes`]), or `None`
/// when `capacity` is not larger.
///
/// # Errors
///
/// [`GpuError::InvalidConfig`] when the buffers would not fit.
pub(crate) fn grown(
    config: &GpuPhysicsConfig,
    capacity: u32,
) -> Result<Option<(GpuPhysicsConfig, [u64; 3])>, GpuError> {
    if capacity <= config.capacity {
        return Ok(None);
    }
    let config = GpuPhysicsConfig {
        capacity,
        ..*config
    };
    Ok(Some((config, checked_sizes(&config)?)))
}

/// Everything a GPU physics world holds from one tick to the next: its configuration and every
/// slot's body record, rule state included (the other buffers are rewritten by every tick). A
/// world makes one with `image` and puts it back with `load_image`; it is what a snapshot keeps
/// of GPU bodies. Each record's scratch words (the contact pass's grid cell and bucket, written
/// before they are read in every tick) are zero in an image, so two worlds in the same state give
/// equal images, and an image moves between the device and the CPU reference.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuWorldImage {
    pub(crate) config: GpuPhysicsConfig,
    pub(crate) bodies: Vec<u32>,
}

impl GpuWorldImage {
    /// An image of `config` from a world's body words, scratch words zeroed.
    pub(crate) fn new(config: GpuPhysicsConfig, mut bodies: Vec<u32>) -> Self {
        for record in bodies.chunks_exact_mut(BODY_STRIDE) {
            record[BODY_HASHED_WORDS..].fill(0);
        }
        GpuWorldImage { config, bodies }
    }

    /// The configuration of the world it was taken from.
    pub fn config(&self) -> &GpuPhysicsConfig {
        &self.config
    }

    /// Every body's state, sorted by slot (what `read_bodies` gave when the image was taken).
    pub fn bodies(&self) -> Vec<super::physics_bodies::GpuBodyState> {
        self.bodies
            .chunks_exact(BODY_STRIDE)
            .enumerate()
            .filter_map(|(slot, record)| {
                super::physics_bodies::GpuBodyState::from_record(slot as u32, record)
            })
            .collect()
    }
}

/// The buffer sizes an image's world needs (see [`checked_sizes`]), after checking that its body
/// words fill exactly its capacity.
///
/// # Errors
///
/// [`GpuError::InvalidConfig`] for what `checked_sizes` refuses or a body image of another size.
pub(crate) fn checked_image(image: &GpuWorldImage) -> Result<[u64; 3], GpuError> {
    let sizes = checked_sizes(&image.config)?;
    if image.bodies.len() as u64 != sizes[0] {
        return Err(GpuError::InvalidConfig {
            reason: format!(
                "the image holds {} body words, and its capacity of {} bodies needs {}",
                image.bodies.len(),
                image.config.capacity,
                sizes[0]
            ),
        });
    }
    Ok(sizes)
}

/// The colliders buffer: the count, then each collider's record in the order given.
pub(crate) fn collider_words(colliders: &[GpuCollider]) -> Vec<u32> {
    let mut words = Vec::with_capacity(1 + colliders.len() * COLLIDER_STRIDE);
    words.push(colliders.len() as u32);
    for collider in colliders {
        words.extend(collider.record());
    }
    words
}

/// The commands buffer for one tick (the count, then each command in the order given), after
/// checking the tick's parameters.
///
/// # Errors
///
/// [`GpuError::InvalidConfig`] for a fixed delta that is not positive and finite or a gravity that
/// is not finite; [`GpuError::SlotOutOfRange`] or [`GpuError::InvalidBody`] for a bad command.
pub(crate) fn tick_words(
    params: &GpuStepParams,
    commands: &[GpuCommand],
    capacity: u32,
) -> Result<Vec<u32>, GpuError> {
    if !(params.fixed_delta > 0.0 && params.fixed_delta.is_finite()) {
        return Err(GpuError::InvalidConfig {
            reason: format!(
                "fixed_delta {} is not positive and finite",
                params.fixed_delta
            ),
        });
    }
    if !params.gravity.is_finite() {
        return Err(GpuError::InvalidConfig {
            reason: format!("gravity {} is not finite", params.gravity),
        });
    }
    let mut words = Vec::with_capacity(1 + commands.len() * COMMAND_STRIDE);
    words.push(commands.len() as u32);
    for command in commands {
        if command.slot() >= capacity {
            return Err(GpuError::SlotOutOfRange {
                slot: command.slot(),
                capacity,
            });
        }
        words.extend(command.record()?);
    }
    Ok(words)
}

/// Checks that every slot is below `capacity`.
///
/// # Errors
///
/// [`GpuError::SlotOutOfRange`] for the first slot that is not.
pub(crate) fn check_slots(slots: &[u32], capacity: u32) -> Result<(), GpuError> {
    match slots.iter().find(|&&slot| slot >= capacity) {
        Some(&slot) => Err(GpuError::SlotOutOfRange { slot, capacity }),
        None => Ok(()),
    }
}

//! [`GpuPhysicsWorld`]: GPU bodies, their buffers and pipelines, stepped one tick at a time.
//!
//! This module owns the GPU physics buffers (bodies, commands, CPU colliders, hash grid, contact
//! sums, events, state hash), the three pipelines built from the committed SPIR-V
//! (`physics.comp`, `physics_contacts.comp`, `physics_hash.comp`; no shader compiler needed), and
//! the order of one tick's dispatches:
//!
//! 1. commands and integration (`physics.comp`, integrate mode);
//! 2. the grid and fallback list are emptied by the host, then filled (`physics_contacts.comp`,
//!    insert mode);
//! 3. each body's contact sums (`physics_contacts.comp`, contacts mode);
//! 4. the sums applied, rules run, events written (`physics.comp`, apply mode);
//! 5. the state hash (`physics_hash.comp`).
//!
//! Each dispatch waits for the previous one, so no pass sees another half done. The tick comes
//! from [`GpuStepParams::tick`] and the GPU clock is `tick * fixed_delta` in the shaders; nothing
//! here reads a clock. It must never reorder commands, never give a body a slot outside the
//! capacity, and never let the hash grid change a result (see `physics_contacts.comp`).

use super::buffer::GpuBuffer;
use super::context::GpuContext;
use super::device::DeviceInfo;
use super::error::GpuError;
use super::physics_bodies::{GpuBodyInit, GpuBodyState, GpuCollider};
use super::physics_commands::GpuCommand;
use super::physics_events::{GpuTickResult, decode_events};
use super::physics_layout::*;
pub use super::physics_layout::{
    GRID_FIT_FRACTION, GpuPhysicsConfig, GpuStepParams, bounding_diameter,
};
use super::physics_upload::{
    GpuWorldImage, body_records, check_slots, checked_image, checked_sizes, collider_words, grown,
    joining_records, tick_words,
};
use super::pipeline::ComputePipeline;
use super::shaders::SpirvVariant;
use super::spirv::embedded_spirv_variant;

/// GPU bodies in the buffers of one [`GpuContext`], stepped one tick per [`GpuPhysicsWorld::step`].
pub struct GpuPhysicsWorld<'ctx> {
    context: &'ctx GpuContext,
    config: GpuPhysicsConfig,
    integrate: ComputePipeline<'ctx>,
    contacts: ComputePipeline<'ctx>,
    hash: ComputePipeline<'ctx>,
    bodies: GpuBuffer<'ctx>,
    commands: GpuBuffer<'ctx>,
    colliders: GpuBuffer<'ctx>,
    grid: GpuBuffer<'ctx>,
    pushes: GpuBuffer<'ctx>,
    events: GpuBuffer<'ctx>,
    state_hash: GpuBuffer<'ctx>,
    collider_count: u32,
}

/// The SPIR-V variant a device runs: the one that declares the float controls where the device
/// offers them all, the plain one elsewhere (lavapipe, SwiftShader). Which mode a device keeps is
/// the conformance probe's answer, not this choice.
pub fn spirv_variant_for(info: &DeviceInfo) -> SpirvVariant {
    if info.declared_float_controls().is_ok() {
        SpirvVariant::FloatControls
    } else {
        SpirvVariant::Plain
    }
}

impl<'ctx> GpuPhysicsWorld<'ctx> {
    /// Makes the pipelines and buffers for `config` on `context`, with no bodies.
    ///
    /// # Errors
    ///
    /// [`GpuError::InvalidConfig`] for a zero capacity, a cell size that is not positive and
    /// finite, or sizes whose buffers would not fit in 32-bit indices; Vulkan errors otherwise.
    pub fn new(context: &'ctx GpuContext, config: GpuPhysicsConfig) -> Result<Self, GpuError> {
        checked_sizes(&config)?;
        let variant = spirv_variant_for(context.info());
        let pipeline = |name: &str| -> Result<ComputePipeline<'ctx>, GpuError> {
            let words = embedded_spirv_variant(name, variant)?;
            context.compute_pipeline(name, &words, STORAGE_BUFFERS, STEP_CONSTANT_BYTES)
        };
        let pipelines = [
            pipeline("physics.comp")?,
            pipeline("physics_contacts.comp")?,
            pipeline("physics_hash.comp")?,
        ];
        Self::with_pipelines(context, config, pipelines)
    }

    /// This world's pipelines over fresh buffers for `config`, with no bodies: the same world
    /// [`GpuPhysicsWorld::new`] makes, without compiling the shaders again (which takes seconds
    /// on a CPU device). The conformance probe's world becomes a game's this way.
    ///
    /// # Errors
    ///
    /// As [`GpuPhysicsWorld::new`].
    pub fn reset(self, config: GpuPhysicsConfig) -> Result<Self, GpuError> {
        let GpuPhysicsWorld {
            context,
            integrate,
            contacts,
            hash,
            ..
        } = self;
        Self::with_pipelines(context, config, [integrate, contacts, hash])
    }

    /// A world of `pipelines` (integrate, contacts, hash) over fresh buffers for `config`.
    fn with_pipelines(
        context: &'ctx GpuContext,
        config: GpuPhysicsConfig,
        [integrate, contacts, hash]: [ComputePipeline<'ctx>; 3],
    ) -> Result<Self, GpuError> {
        let [body_words, grid_words, event_words] = checked_sizes(&config)?;
        Ok(GpuPhysicsWorld {
            context,
            config,
            integrate,
            contacts,
            hash,
            bodies: context.storage_buffer(body_words as usize)?,
            commands: context.storage_buffer(1 + COMMAND_STRIDE)?,
            colliders: context.storage_buffer(1 + COLLIDER_STRIDE)?,
            grid: context.storage_buffer(grid_words as usize)?,
            pushes: context.storage_buffer(config.capacity as usize * PUSH_STRIDE)?,
            events: context.storage_buffer(event_words as usize)?,
            state_hash: context.storage_buffer(2)?,
            collider_count: 0,
        })
    }

    /// The context the world runs on.
    pub fn context(&self) -> &'ctx GpuContext {
        self.context
    }

    /// The world's configuration.
    pub fn config(&self) -> &GpuPhysicsConfig {
        &self.config
    }

    /// Replaces every body: the slots named get these bodies (uploaded in slot order), every
    /// other slot is emptied. Rule state starts fresh.
    ///
    /// # Errors
    ///
    /// [`GpuError::SlotOutOfRange`], [`GpuError::DuplicateSlot`],
    /// [`GpuError::UnsupportedShape`] (a half-space body) or [`GpuError::InvalidBody`] (a value
    /// that is not finite, a period that is not positive); nothing is uploaded then.
    pub fn set_bodies(&mut self, bodies: &[GpuBodyInit]) -> Result<(), GpuError> {
        let records = body_records(bodies, self.config.capacity)?;
        self.bodies.fill(0);
        for (slot, record) in records {
            self.bodies.write(slot as usize * BODY_STRIDE, &record)?;
        }
        Ok(())
    }

    /// Adds bodies between ticks into empty slots, leaving every other slot as it is. Rule state
    /// starts fresh.
    ///
    /// # Errors
    ///
    /// What [`GpuPhysicsWorld::set_bodies`] refuses, and [`GpuError::DuplicateSlot`] for a slot
    /// that holds a body; nothing is uploaded then.
    pub fn insert_bodies(&mut self, bodies: &[GpuBodyInit]) -> Result<(), GpuError> {
        let records = joining_records(bodies, self.config.capacity, |slot| {
            let flags = self
                .bodies
                .read(slot as usize * BODY_STRIDE + BODY_FLAGS, 1)?;
            Ok(flags[0] & FLAG_OCCUPIED != 0)
        })?;
        for (slot, record) in records {
            self.bodies.write(slot as usize * BODY_STRIDE, &record)?;
        }
        Ok(())
    }

    /// Empties slots between ticks (an empty slot stays empty).
    ///
    /// # Errors
    ///
    /// [`GpuError::SlotOutOfRange`]; nothing is removed then.
    pub fn remove_bodies(&mut self, slots: &[u32]) -> Result<(), GpuError> {
        check_slots(slots, self.config.capacity)?;
        let empty = vec![0u32; BODY_STRIDE];
        for &slot in slots {
            self.bodies.write(slot as usize * BODY_STRIDE, &empty)?;
        }
        Ok(())
    }

    /// Grows the world to `capacity` slots between ticks, keeping every body in its slot. The
    /// results do not depend on the capacity. A smaller capacity changes nothing.
    ///
    /// # Errors
    ///
    /// [`GpuError::InvalidConfig`] when the buffers would not fit, and Vulkan errors.
    pub fn grow(&mut self, capacity: u32) -> Result<(), GpuError> {
        let Some((config, [body_words, grid_words, _])) = grown(&self.config, capacity)? else {
            return Ok(());
        };
        let old = self.bodies.read(0, self.bodies.len())?;
        let mut bodies = self.context.storage_buffer(body_words as usize)?;
        bodies.fill(0);
        bodies.write(0, &old)?;
        self.grid = self.context.storage_buffer(grid_words as usize)?;
        self.pushes = self
            .context
            .storage_buffer(capacity as usize * PUSH_STRIDE)?;
        self.bodies = bodies;
        self.config = config;
        Ok(())
    }

    /// The world between ticks: its configuration and every slot's body record (see
    /// [`GpuWorldImage`]).
    ///
    /// # Errors
    ///
    /// Vulkan errors (none in practice: the buffer is host-visible).
    pub fn image(&self) -> Result<GpuWorldImage, GpuError> {
        Ok(GpuWorldImage::new(
            self.config,
            self.bodies.read(0, self.bodies.len())?,
        ))
    }

    /// Puts `image` back: the world takes its configuration (its buffers are remade when the
    /// sizes differ) and every slot its record. The next step continues from it exactly as the
    /// world it was taken from would have.
    ///
    /// # Errors
    ///
    /// [`GpuError::InvalidConfig`] for an image whose words do not fit its configuration, and
    /// Vulkan errors; the world is unchanged when the new buffers cannot be made.
    pub fn load_image(&mut self, image: &GpuWorldImage) -> Result<(), GpuError> {
        let [body_words, grid_words, event_words] = checked_image(image)?;
        if image.config != self.config {
            let bodies = self.context.storage_buffer(body_words as usize)?;
            let grid = self.context.storage_buffer(grid_words as usize)?;
            let pushes = self
                .context
                .storage_buffer(image.config.capacity as usize * PUSH_STRIDE)?;
            let events = self.context.storage_buffer(event_words as usize)?;
            self.bodies = bodies;
            self.grid = grid;
            self.pushes = pushes;
            self.events = events;
            self.config = image.config;
        }
        self.bodies.write(0, &image.bodies)
    }

    /// Replaces the CPU colliders GPU bodies collide with, in the given order (the CPU solver's
    /// body order).
    ///
    /// # Errors
    ///
    /// Vulkan errors when a larger buffer cannot be made.
    pub fn set_cpu_colliders(&mut self, colliders: &[GpuCollider]) -> Result<(), GpuError> {
        let words = collider_words(colliders);
        if words.len() > self.colliders.len() {
            self.colliders = self.context.storage_buffer(words.len())?;
        }
        self.colliders.write(0, &words)?;
        self.collider_count = colliders.len() as u32;
        Ok(())
    }

    /// Simulates GPU tick `params.tick`: `commands` apply first, in the order given, then the
    /// bodies integrate, collide and run their rules. Returns the tick's state hash and events.
    ///
    /// # Errors
    ///
    /// [`GpuError::SlotOutOfRange`] or [`GpuError::InvalidBody`] for a bad command (nothing runs
    /// then), [`GpuError::InvalidConfig`] for a fixed delta that is not positive and finite or a
    /// gravity that is not finite, and Vulkan errors.
    pub fn step(
        &mut self,
        params: &GpuStepParams,
        commands: &[GpuCommand],
    ) -> Result<GpuTickResult, GpuError> {
        let words = tick_words(params, commands, self.config.capacity)?;
        if words.len() > self.commands.len() {
            self.commands = self.context.storage_buffer(words.len())?;
        }
        self.commands.write(0, &words)?;

        let mut constants = StepConstants {
            tick: params.tick,
            fixed_delta: params.fixed_delta,
            gravity: params.gravity.to_array(),
            mode: MODE_INTEGRATE,
            capacity: self.config.capacity,
            grid_cells: self.config.grid_cells,
            cell_size: self.config.cell_size,
            max_events: self.config.max_events,
            collider_count: self.collider_count,
        };
        self.events.write(0, &[0, 0])?;
        self.state_hash.write(0, &[0, 0])?;
        self.run(&self.integrate, &constants)?;

        // An empty fallback list and empty buckets (the `next` links need no clearing: a body's
        // link is written when it is inserted, and only inserted bodies are reached).
        let heads = 1 + 2 * self.config.capacity as usize;
        self.grid.write(0, &[0])?;
        self.grid
            .write(heads, &vec![u32::MAX; self.config.grid_cells as usize])?;
        constants.mode = MODE_INSERT;
        self.run(&self.contacts, &constants)?;
        constants.mode = MODE_CONTACTS;
        self.run(&self.contacts, &constants)?;
        constants.mode = MODE_APPLY;
        self.run(&self.integrate, &constants)?;
        self.run(&self.hash, &constants)?;

        let hash = self.state_hash.read(0, 2)?;
        let event_words = self.events.read(0, EVENT_HEADER)?;
        let written = event_words[0].min(self.config.max_events) as usize;
        let mut event_buffer = event_words;
        event_buffer.extend(self.events.read(EVENT_HEADER, written * EVENT_STRIDE)?);
        let (events, lost_events) = decode_events(&event_buffer, self.config.max_events);
        if lost_events > 0 {
            bevy::log::warn!(
                "GPU physics tick {}: {lost_events} events lost (max_events is {}); which ones \
                 depends on atomic order, so this run is not deterministic",
                params.tick,
                self.config.max_events
            );
        }
        Ok(GpuTickResult {
            tick: params.tick,
            hash: u64::from(hash[0]) | (u64::from(hash[1]) << 32),
            events,
            lost_events,
        })
    }

    /// Every body's state, sorted by slot.
    ///
    /// # Errors
    ///
    /// Vulkan errors (none in practice: the buffer is host-visible).
    pub fn read_bodies(&self) -> Result<Vec<GpuBodyState>, GpuError> {
        let words = self.bodies.read(0, self.bodies.len())?;
        Ok(words
            .chunks_exact(BODY_STRIDE)
            .enumerate()
            .filter_map(|(slot, record)| GpuBodyState::from_record(slot as u32, record))
            .collect())
    }

    fn run(
        &self,
        pipeline: &ComputePipeline<'ctx>,
        constants: &StepConstants,
    ) -> Result<(), GpuError> {
        let groups = self.config.capacity.div_ceil(WORKGROUP_SIZE);
        self.context.dispatch(
            pipeline,
            &[
                &self.bodies,
                &self.commands,
                &self.colliders,
                &self.grid,
                &self.pushes,
                &self.events,
                &self.state_hash,
            ],
            &constants.to_bytes(),
            [groups, 1, 1],
        )
    }
}

impl std::fmt::Debug for GpuPhysicsWorld<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuPhysicsWorld")
            .field("config", &self.config)
            .field("collider_count", &self.collider_count)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The world can move to another thread (a non-send resource is not required for that), and
    /// the context it borrows can be shared. Fails to compile when a field loses `Send`, or the
    /// context `Sync`.
    #[test]
    fn the_world_is_send_and_the_context_sync() {
        fn send<T: Send>() {}
        fn send_sync<T: Send + Sync>() {}
        send::<GpuPhysicsWorld<'static>>();
        send_sync::<GpuContext>();
    }
}

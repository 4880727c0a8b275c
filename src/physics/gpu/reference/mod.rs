//! [`GpuReferenceWorld`]: GPU physics stepped on the CPU, bit for bit as the shaders step it.
//!
//! The reference is the known answer a device is checked against: the same bodies, colliders,
//! commands and ticks give the same per-tick hash, events and body words as
//! [`GpuPhysicsWorld`](super::GpuPhysicsWorld) on any device that keeps the shaders' arithmetic
//! (every value `precise`, subnormals preserved). It runs the passes of one GPU tick in the
//! shaders' order over the same word buffers:
//!
//! 1. commands and gravity ([`bodies::apply_commands`], [`bodies::accelerate`]);
//! 2. every dynamic body's contact sums ([`contacts::collect`]), all from the state step 1 left;
//! 3. sums applied, motion, rules ([`bodies::apply_contacts`], [`bodies::integrate_motion`],
//!    [`bodies::run_rule`]);
//! 4. the state hash ([`bodies::body_hash`]).
//!
//! Its arithmetic is [`float`]'s: one rounding per operation, `runtime::sim_math` for division and
//! square roots, and a count of the subnormal values met ([`GpuReferenceWorld::subnormals`]). It
//! must never diverge from the shaders: a change to `src/shaders/physics*.comp` or
//! `physics_shapes.glsl` is made here too, and `gpu_step_matches_the_cpu_reference_bit_for_bit`
//! compares the two every tick.

// The shaders test `!(x > 0.0)` so that NaN takes the same branch as on the device; the reference
// keeps their comparisons as written.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub(crate) mod bodies;
pub(crate) mod contacts;
pub(crate) mod float;
pub(crate) mod shapes;

use bevy::math::Vec3;
use float::{F, M3, V3};

use super::error::GpuError;
use super::physics_bodies::{GpuBodyInit, GpuBodyState, GpuCollider};
use super::physics_commands::GpuCommand;
use super::physics_events::{GpuTickResult, decode_events};
use super::physics_layout::*;
use super::physics_upload::{
    GpuWorldImage, body_records, check_slots, checked_image, checked_sizes, collider_words, grown,
    joining_records, tick_words,
};
use super::physics_world::{GpuPhysicsConfig, GpuStepParams};

/// One tick's constants, as the push constants give them to the shaders.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    pub tick: u64,
    pub dt: F,
    pub gravity: V3,
    /// Against gravity, unit length (zero without gravity).
    pub support_up: V3,
}

impl Step {
    fn new(params: &GpuStepParams) -> Step {
        let gravity = vec3(params.gravity);
        Step {
            tick: params.tick,
            dt: F(params.fixed_delta),
            gravity,
            support_up: -gravity.normalize(),
        }
    }
}

fn vec3(v: Vec3) -> V3 {
    V3::new(F(v.x), F(v.y), F(v.z))
}

/// A record read as floats.
#[derive(Clone, Copy)]
pub(crate) struct Words<'a>(pub &'a [u32]);

impl Words<'_> {
    pub fn f(&self, word: usize) -> F {
        F::from_bits(self.0[word])
    }

    pub fn v3(&self, word: usize) -> V3 {
        V3::new(self.f(word), self.f(word + 1), self.f(word + 2))
    }

    /// The rotation columns of the model matrix at `word` (columns 0, 4 and 8 words on).
    pub fn rotation(&self, word: usize) -> M3 {
        M3([self.v3(word), self.v3(word + 4), self.v3(word + 8)])
    }
}

/// A record read and written as floats.
pub(crate) struct WordsMut<'a>(pub &'a mut [u32]);

impl WordsMut<'_> {
    pub fn word(&self, word: usize) -> u32 {
        self.0[word]
    }

    pub fn f(&self, word: usize) -> F {
        F::from_bits(self.0[word])
    }

    pub fn v3(&self, word: usize) -> V3 {
        Words(self.0).v3(word)
    }

    pub fn set_v3(&mut self, word: usize, value: V3) {
        self.0[word] = value.x.bits();
        self.0[word + 1] = value.y.bits();
        self.0[word + 2] = value.z.bits();
    }
}

/// GPU bodies stepped on the CPU, with the API of
/// [`GpuPhysicsWorld`](super::GpuPhysicsWorld) and the same results bit for bit.
#[derive(Clone, Debug)]
pub struct GpuReferenceWorld {
    config: GpuPhysicsConfig,
    bodies: Vec<u32>,
    colliders: Vec<u32>,
    subnormals: u64,
}

impl GpuReferenceWorld {
    /// A world for `config`, with no bodies.
    ///
    /// # Errors
    ///
    /// [`GpuError::InvalidConfig`] for what [`GpuPhysicsWorld::new`](super::GpuPhysicsWorld::new)
    /// refuses.
    pub fn new(config: GpuPhysicsConfig) -> Result<Self, GpuError> {
        let [body_words, _, _] = checked_sizes(&config)?;
        Ok(GpuReferenceWorld {
            config,
            bodies: vec![0; body_words as usize],
            colliders: vec![0],
            subnormals: 0,
        })
    }

    /// The world's configuration.
    pub fn config(&self) -> &GpuPhysicsConfig {
        &self.config
    }

    /// Replaces every body, as [`GpuPhysicsWorld::set_bodies`](super::GpuPhysicsWorld::set_bodies).
    ///
    /// # Errors
    ///
    /// The same as `GpuPhysicsWorld::set_bodies`; nothing changes then.
    pub fn set_bodies(&mut self, bodies: &[GpuBodyInit]) -> Result<(), GpuError> {
        let records = body_records(bodies, self.config.capacity)?;
        self.bodies.fill(0);
        for (slot, record) in records {
            let start = slot as usize * BODY_STRIDE;
            self.bodies[start..start + BODY_STRIDE].copy_from_slice(&record);
        }
        Ok(())
    }

    /// Adds bodies between ticks, as
    /// [`GpuPhysicsWorld::insert_bodies`](super::GpuPhysicsWorld::insert_bodies).
    ///
    /// # Errors
    ///
    /// The same as `GpuPhysicsWorld::insert_bodies`; nothing changes then.
    pub fn insert_bodies(&mut self, bodies: &[GpuBodyInit]) -> Result<(), GpuError> {
        let flags = |slot: u32| self.bodies[slot as usize * BODY_STRIDE + BODY_FLAGS];
        let records = joining_records(bodies, self.config.capacity, |slot| {
            Ok(flags(slot) & FLAG_OCCUPIED != 0)
        })?;
        for (slot, record) in records {
            let start = slot as usize * BODY_STRIDE;
            self.bodies[start..start + BODY_STRIDE].copy_from_slice(&record);
        }
        Ok(())
    }

    /// Empties slots between ticks, as
    /// [`GpuPhysicsWorld::remove_bodies`](super::GpuPhysicsWorld::remove_bodies).
    ///
    /// # Errors
    ///
    /// [`GpuError::SlotOutOfRange`]; nothing is removed then.
    pub fn remove_bodies(&mut self, slots: &[u32]) -> Result<(), GpuError> {
        check_slots(slots, self.config.capacity)?;
        for &slot in slots {
            let start = slot as usize * BODY_STRIDE;
            self.bodies[start..start + BODY_STRIDE].fill(0);
        }
        Ok(())
    }

    /// Grows to `capacity` slots, as [`GpuPhysicsWorld::grow`](super::GpuPhysicsWorld::grow).
    ///
    /// # Errors
    ///
    /// [`GpuError::InvalidConfig`] when the buffers would not fit.
    pub fn grow(&mut self, capacity: u32) -> Result<(), GpuError> {
        let Some((config, [body_words, _, _])) = grown(&self.config, capacity)? else {
            return Ok(());
        };
        self.bodies.resize(body_words as usize, 0);
        self.config = config;
        Ok(())
    }

    /// The world between ticks, as [`GpuPhysicsWorld::image`](super::GpuPhysicsWorld::image)
    /// gives it: the same words for the same state.
    pub fn image(&self) -> GpuWorldImage {
        GpuWorldImage::new(self.config, self.bodies.clone())
    }

    /// Puts `image` back, as
    /// [`GpuPhysicsWorld::load_image`](super::GpuPhysicsWorld::load_image) does.
    ///
    /// # Errors
    ///
    /// [`GpuError::InvalidConfig`] for an image whose words do not fit its configuration; nothing
    /// changes then.
    pub fn load_image(&mut self, image: &GpuWorldImage) -> Result<(), GpuError> {
        checked_image(image)?;
        self.config = image.config;
        self.bodies.clone_from(&image.bodies);
        Ok(())
    }

    /// Replaces the CPU colliders, in the given order.
    pub fn set_cpu_colliders(&mut self, colliders: &[GpuCollider]) {
        self.colliders = collider_words(colliders);
    }

    /// Simulates GPU tick `params.tick` as
    /// [`GpuPhysicsWorld::step`](super::GpuPhysicsWorld::step) does.
    ///
    /// # Errors
    ///
    /// The same input errors as `GpuPhysicsWorld::step`; nothing runs then.
    pub fn step(
        &mut self,
        params: &GpuStepParams,
        commands: &[GpuCommand],
    ) -> Result<GpuTickResult, GpuError> {
        let commands = tick_words(params, commands, self.config.capacity)?;
        float::take_subnormals();
        let step = Step::new(params);
        let capacity = self.config.capacity as usize;
        let occupied = |bodies: &[u32], slot: usize| {
            bodies[slot * BODY_STRIDE + BODY_FLAGS] & FLAG_OCCUPIED != 0
        };

        for slot in 0..capacity {
            if occupied(&self.bodies, slot) {
                let record = &mut self.bodies[slot * BODY_STRIDE..(slot + 1) * BODY_STRIDE];
                bodies::apply_commands(record, slot as u32, &commands);
                bodies::accelerate(record, &step);
            }
        }

        let sums: Vec<contacts::Sums> = (0..capacity)
            .map(|slot| {
                let record = &self.bodies[slot * BODY_STRIDE..(slot + 1) * BODY_STRIDE];
                let collects = record[BODY_FLAGS] & FLAG_OCCUPIED != 0
                    && record[BODY_KIND] == KIND_DYNAMIC
                    && record[BODY_FLAGS] & FLAG_SENSOR == 0;
                if collects {
                    contacts::collect(&self.bodies, &self.colliders, slot, &step)
                } else {
                    contacts::Sums::default()
                }
            })
            .collect();

        let mut events = Vec::new();
        let mut hash = 0u64;
        for (slot, sums) in sums.iter().enumerate() {
            if !occupied(&self.bodies, slot) {
                continue;
            }
            let record = &mut self.bodies[slot * BODY_STRIDE..(slot + 1) * BODY_STRIDE];
            bodies::apply_contacts(record, sums);
            bodies::integrate_motion(record, &step);
            bodies::run_rule(record, slot as u32, &step, &mut events);
            hash = hash.wrapping_add(bodies::body_hash(record, slot as u32));
        }
        self.subnormals += float::take_subnormals();

        let fired = (events.len() / EVENT_STRIDE) as u32;
        let kept = fired.min(self.config.max_events) as usize;
        let mut buffer = vec![fired, fired - kept as u32];
        buffer.extend_from_slice(&events[..kept * EVENT_STRIDE]);
        let (events, lost_events) = decode_events(&buffer, self.config.max_events);
        Ok(GpuTickResult {
            tick: params.tick,
            hash,
            events,
            lost_events,
        })
    }

    /// Every body's state, sorted by slot, as
    /// [`GpuPhysicsWorld::read_bodies`](super::GpuPhysicsWorld::read_bodies) reads it.
    pub fn read_bodies(&self) -> Vec<GpuBodyState> {
        self.bodies
            .chunks_exact(BODY_STRIDE)
            .enumerate()
            .filter_map(|(slot, record)| GpuBodyState::from_record(slot as u32, record))
            .collect()
    }

    /// The subnormal values the reference has met (produced or loaded) since it was made. A
    /// device that does not preserve subnormals can part from the reference only where this
    /// count grows.
    pub fn subnormals(&self) -> u64 {
        self.subnormals
    }
}

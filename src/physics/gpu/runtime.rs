//! [`GpuRuntime`]: the GPU physics world of one app, the GPU ticks queued for it, and what they
//! returned.
//!
//! The runtime owns the [`GpuPhysicsWorld`] (on the one Vulkan device of the process, opened on
//! first use and shared by every app: opening a device costs tens of milliseconds and one per
//! process is what drivers expect), the queue of GPU ticks the CPU has finished ([`GpuTickInput`]:
//! the tick, its commands, the CPU colliders as that tick left them), the events waiting to be
//! handed to CPU simulation, and every GPU hash of the run. It lives outside the `World`'s
//! entities (a non-send resource): adding it never shifts entity ids. Snapshots hold it as a
//! [`GpuRuntimeImage`] (taken with nothing queued) through the GPU plugin's snapshot hooks. It
//! must never read a clock, and it simulates only queued ticks, in order.

use std::collections::{BTreeMap, VecDeque};
use std::sync::OnceLock;

use bevy::math::Vec3;
use bevy::prelude::{Entity, Resource, World};

use super::conformance::{ConformanceReport, probe_in};
use super::context::GpuContext;
use super::error::GpuError;
use super::physics_bodies::{GpuBodyInit, GpuBodyState, GpuCollider};
use super::physics_commands::GpuCommand;
use super::physics_events::GpuEvent;
use super::physics_upload::GpuWorldImage;
use super::physics_world::{GpuPhysicsConfig, GpuPhysicsWorld, GpuStepParams};
use crate::runtime::{DeterminismSupport, FrameTime};

/// The process's Vulkan device, opened on first use.
pub fn shared_context() -> Result<&'static GpuContext, GpuError> {
    static CONTEXT: OnceLock<Result<GpuContext, GpuError>> = OnceLock::new();
    CONTEXT
        .get_or_init(GpuContext::new)
        .as_ref()
        .map_err(Clone::clone)
}

/// The conformance probe's report on the process's device ([`shared_context`]), made once: the
/// mode GPU simulation declares comes from it.
static CONFORMANCE: OnceLock<ConformanceReport> = OnceLock::new();

/// The process's conformance report, probing in `world` (a world of `config` on the shared
/// context) the first time, so its shaders are compiled once; the world comes back fresh, with
/// `config`.
fn conformance_in(
    world: GpuPhysicsWorld<'static>,
    config: GpuPhysicsConfig,
) -> Result<(&'static ConformanceReport, GpuPhysicsWorld<'static>), GpuError> {
    if let Some(report) = CONFORMANCE.get() {
        return Ok((report, world));
    }
    let (report, world) = probe_in(world)?;
    let world = world.reset(config)?;
    Ok((CONFORMANCE.get_or_init(|| report), world))
}

/// What one GPU tick needs from the CPU, captured when the CPU tick of the same number ends.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuTickInput {
    /// The GPU tick (ticks completed before it).
    pub tick: u64,
    /// Its commands, in push order.
    pub commands: Vec<GpuCommand>,
    /// The CPU bodies' colliders as the CPU tick left them, in body (entity) order.
    pub colliders: Vec<GpuCollider>,
    /// Gravity as the CPU tick saw it.
    pub gravity: Vec3,
    /// Slots of GPU bodies gone during the CPU tick (despawned, or no longer GPU bodies), emptied
    /// before the GPU tick, before `added`.
    pub removed: Vec<u32>,
    /// GPU bodies that appeared during the CPU tick, with their entities, uploaded before the GPU
    /// tick's commands (as the CPU tick left them), sorted by slot.
    pub added: Vec<(GpuBodyInit, Entity)>,
}

/// What a snapshot keeps of one app's GPU physics, taken between GPU ticks with none queued: the
/// device's bodies and the runtime's bookkeeping (which entity each slot belongs to, the ticks
/// done, the events not yet handed to CPU simulation).
#[derive(Clone, Debug, PartialEq)]
pub struct GpuRuntimeImage {
    world: GpuWorldImage,
    bodies: Vec<(u32, Entity)>,
    completed: u64,
    events: BTreeMap<u64, Vec<(Entity, GpuEvent)>>,
    lost_events: u64,
}

impl GpuRuntimeImage {
    /// The device's bodies when the image was taken.
    pub fn world(&self) -> &GpuWorldImage {
        &self.world
    }

    /// GPU ticks simulated when the image was taken.
    pub fn completed(&self) -> u64 {
        self.completed
    }
}

/// The GPU physics of one app (a non-send resource).
pub struct GpuRuntime {
    world: GpuPhysicsWorld<'static>,
    /// `(slot, entity)` of every GPU body the device holds, sorted by slot.
    pub(crate) bodies: Vec<(u32, Entity)>,
    /// Every GPU body's slot as of the last queued tick (queued spawns and despawns included).
    tracked: BTreeMap<Entity, u32>,
    fixed_delta: f32,
    queued: VecDeque<GpuTickInput>,
    /// GPU ticks simulated so far.
    completed: u64,
    /// Events by the GPU tick that produced them, with the entity that body had then, until CPU
    /// simulation takes them.
    events: BTreeMap<u64, Vec<(Entity, GpuEvent)>>,
    /// `(tick, hash)` of every GPU tick simulated, in order.
    hashes: Vec<(u64, u64)>,
    lost_events: u64,
}

impl GpuRuntime {
    /// A runtime over `world`, whose bodies are `bodies` (`(slot, entity)`, sorted by slot).
    pub fn new(
        world: GpuPhysicsWorld<'static>,
        bodies: Vec<(u32, Entity)>,
        fixed_delta: f32,
    ) -> Self {
        GpuRuntime {
            world,
            tracked: bodies
                .iter()
                .map(|&(slot, entity)| (entity, slot))
                .collect(),
            bodies,
            fixed_delta,
            queued: VecDeque::new(),
            completed: 0,
            events: BTreeMap::new(),
            hashes: Vec::new(),
            lost_events: 0,
        }
    }

    /// Starts the runtime's clock at `tick` (an app whose first GPU body appears on that fixed
    /// tick): the next tick queued is `tick`.
    pub fn start_at(&mut self, tick: u64) {
        debug_assert!(self.queued.is_empty() && self.hashes.is_empty());
        self.completed = tick;
    }

    /// Queues the next GPU tick; ticks must come in order, one after another.
    pub fn queue(&mut self, input: GpuTickInput) {
        let expected = self.completed + self.queued.len() as u64;
        debug_assert_eq!(input.tick, expected, "GPU ticks are queued in order");
        for slot in &input.removed {
            self.tracked.retain(|_, tracked| tracked != slot);
        }
        for (body, entity) in &input.added {
            self.tracked.insert(*entity, body.slot);
        }
        self.queued.push_back(input);
    }

    /// Every GPU body's slot by entity, as of the last queued tick: what the next tick's
    /// spawns and despawns are found against.
    pub fn tracked(&self) -> &BTreeMap<Entity, u32> {
        &self.tracked
    }

    /// Simulates the oldest queued tick; returns its `(tick, hash)`, or `None` with nothing queued.
    pub fn step_one(&mut self) -> Result<Option<(u64, u64)>, GpuError> {
        let Some(input) = self.queued.pop_front() else {
            return Ok(None);
        };
        self.change_bodies(&input)?;
        self.world.set_cpu_colliders(&input.colliders)?;
        let result = self.world.step(
            &GpuStepParams {
                tick: input.tick,
                fixed_delta: self.fixed_delta,
                gravity: input.gravity,
            },
            &input.commands,
        )?;
        self.completed = input.tick + 1;
        self.lost_events += u64::from(result.lost_events);
        if !result.events.is_empty() {
            let events = result
                .events
                .into_iter()
                .filter_map(|event| Some((self.entity_of(event.slot)?, event)))
                .collect();
            self.events.insert(input.tick, events);
        }
        self.hashes.push((input.tick, result.hash));
        Ok(Some((input.tick, result.hash)))
    }

    /// The tick boundary's despawns and spawns: slots emptied, the world grown to fit the new
    /// slots (to the next power of two), bodies uploaded.
    fn change_bodies(&mut self, input: &GpuTickInput) -> Result<(), GpuError> {
        if input.removed.is_empty() && input.added.is_empty() {
            return Ok(());
        }
        self.world.remove_bodies(&input.removed)?;
        self.bodies
            .retain(|(slot, _)| !input.removed.contains(slot));
        if let Some(highest) = input.added.iter().map(|(body, _)| body.slot).max() {
            self.world
                .grow(highest.saturating_add(1).next_power_of_two())?;
        }
        let added: Vec<GpuBodyInit> = input.added.iter().map(|(body, _)| *body).collect();
        self.world.insert_bodies(&added)?;
        self.bodies.extend(
            input
                .added
                .iter()
                .map(|(body, entity)| (body.slot, *entity)),
        );
        self.bodies.sort_unstable_by_key(|(slot, _)| *slot);
        Ok(())
    }

    /// The entity of the GPU body in `slot` on the device now.
    pub fn entity_of(&self, slot: u32) -> Option<Entity> {
        let index = self
            .bodies
            .binary_search_by_key(&slot, |(slot, _)| *slot)
            .ok()?;
        Some(self.bodies[index].1)
    }

    /// GPU ticks simulated so far.
    pub fn completed(&self) -> u64 {
        self.completed
    }

    /// GPU ticks queued and not yet simulated.
    pub fn queued(&self) -> usize {
        self.queued.len()
    }

    /// Takes the events GPU tick `tick` produced, each with its body's entity (empty when it
    /// produced none).
    pub fn take_events(&mut self, tick: u64) -> Vec<(Entity, GpuEvent)> {
        // Older ticks' events would never be taken (they were delivered, or the app started
        // later); drop them with these.
        let newer = self.events.split_off(&(tick + 1));
        let taken = self.events.remove(&tick).unwrap_or_default();
        self.events = newer;
        taken
    }

    /// `(tick, hash)` of every GPU tick simulated, in order.
    pub fn hashes(&self) -> &[(u64, u64)] {
        &self.hashes
    }

    /// Events lost to a full event buffer so far.
    pub fn lost_events(&self) -> u64 {
        self.lost_events
    }

    /// Every GPU body's state, sorted by slot.
    pub fn read_bodies(&self) -> Result<Vec<GpuBodyState>, GpuError> {
        self.world.read_bodies()
    }

    /// The runtime's state for a snapshot, or `None` while GPU ticks are queued (simulate them
    /// first: a queued tick's input is CPU state of a tick the snapshot is past).
    ///
    /// # Errors
    ///
    /// Vulkan errors from reading the bodies back.
    pub fn image(&self) -> Result<Option<GpuRuntimeImage>, GpuError> {
        if !self.queued.is_empty() {
            return Ok(None);
        }
        Ok(Some(GpuRuntimeImage {
            world: self.world.image()?,
            bodies: self.bodies.clone(),
            completed: self.completed,
            events: self.events.clone(),
            lost_events: self.lost_events,
        }))
    }

    /// Puts `image` back, each entity it names replaced by `entity` of it (the entity that holds
    /// the body's `SimId` now): queued ticks are dropped (they belong to the future being rolled
    /// back), the device gets the image's bodies, and the hashes of GPU ticks from the image's on
    /// are forgotten, so the ticks simulated next are recorded in order.
    ///
    /// # Errors
    ///
    /// What [`GpuPhysicsWorld::load_image`] refuses; the runtime's bookkeeping is unchanged
    /// then (the device's bodies too, unless the final upload itself failed).
    pub fn load_image(
        &mut self,
        image: &GpuRuntimeImage,
        entity: impl Fn(Entity) -> Entity,
    ) -> Result<(), GpuError> {
        self.world.load_image(&image.world)?;
        self.bodies = image
            .bodies
            .iter()
            .map(|&(slot, body)| (slot, entity(body)))
            .collect();
        self.tracked = self
            .bodies
            .iter()
            .map(|&(slot, body)| (body, slot))
            .collect();
        self.completed = image.completed;
        self.queued.clear();
        self.events = image
            .events
            .iter()
            .map(|(&tick, events)| {
                let events = events
                    .iter()
                    .map(|&(body, event)| (entity(body), event))
                    .collect();
                (tick, events)
            })
            .collect();
        self.lost_events = image.lost_events;
        self.hashes.retain(|&(tick, _)| tick < image.completed);
        Ok(())
    }
}

/// Whether GPU physics runs, and its counters (presentation: not hashed, not in snapshots).
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuPhysicsStatus {
    /// The device GPU bodies run on, when they do.
    pub device: Option<String>,
    /// Why GPU bodies cannot run, when the app holds some and no device works.
    pub unavailable: Option<String>,
    /// GPU bodies, as of the last GPU tick queued.
    pub bodies: usize,
    /// Fixed ticks that had to simulate late GPU ticks themselves to get their events.
    pub stalls: u64,
    /// GPU ticks those stalls simulated.
    pub stalled_ticks: u64,
}

/// Opens the process's device for this app (declaring its mode) and inserts a [`GpuRuntime`]
/// over a new world of `config` holding `bodies`, whose entities `slots` names by slot. Returns
/// why not when no device works or the world cannot be made.
pub(super) fn open_runtime(
    world: &mut World,
    config: GpuPhysicsConfig,
    bodies: &[GpuBodyInit],
    slots: Vec<(u32, Entity)>,
) -> Result<(), String> {
    let context =
        shared_context().map_err(|error| format!("GPU physics cannot run here: {error}"))?;
    let gpu = GpuPhysicsWorld::new(context, config)
        .map_err(|error| format!("its GPU bodies cannot be set up: {error}"))?;
    let (report, mut gpu) = conformance_in(gpu, config)
        .map_err(|error| format!("GPU physics cannot run here: the conformance probe: {error}"))?;
    report.declare_support(&mut world.resource_mut::<DeterminismSupport>());
    gpu.set_bodies(bodies)
        .map_err(|error| format!("its GPU bodies cannot be set up: {error}"))?;
    let fixed_delta = world.resource::<FrameTime>().fixed_delta;
    let mut status = world.resource_mut::<GpuPhysicsStatus>();
    status.device = Some(context.info().name.clone());
    status.bodies = slots.len();
    world.insert_non_send(GpuRuntime::new(gpu, slots, fixed_delta));
    Ok(())
}

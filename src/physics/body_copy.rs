//! The copy of the CPU bodies out of the ECS into the solver's list, and of the results back.
//!
//! [`BodyCopy`] holds the list [`cpu::step`](super::cpu::step) works on, sorted by `SimId`, and
//! keeps it from one tick to the next. After a tick's write-back the list holds exactly what the
//! world holds, and the step only ever writes its own results, which a system never sees as
//! changes of its own; so the next tick need read again only the bodies whose components someone
//! else wrote or added since. Reading every body into the list costs a copy of each one and a
//! sort; reading the changed ones costs a look at each body's change ticks. A world of sleeping
//! bodies, which the step writes nothing to, is then copied once, not every tick.
//!
//! The list is read whole again whenever it may no longer be the world's: on the first tick;
//! after a restore (which gives values back with the change ticks they had, so changes do not
//! show); when the last write-back queued a command (a `Sleeping` marker or slot id inserted or
//! removed); when a body came, went, or gained or lost an optional component (a removal shows only
//! in the counts of who carries what); when a body's `SimId` or class changed; and in a world
//! without a snapshot registry, whose restores cannot be counted. The result is the same list a
//! whole read gives (debug builds check it, tick by tick).
//!
//! This module must never do physics, and never touch GPU-class bodies.

use bevy::ecs::change_detection::DetectChanges;
use bevy::math::Vec3;
use bevy::prelude::{Changed, Commands, Entity, Has, Mut, Or, Query, Ref, Transform};

use super::components::{
    BodyClass, BodyKind, Collider, CollisionLayers, LockedAxes, PhysicsBody, PhysicsId, RigidBody,
    Sleeping,
};
use super::cpu::SolverBody;
use crate::runtime::random::mix;
use crate::state::SimId;

/// The bodies the CPU solver reads and writes.
pub type BodyQuery<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        Ref<'static, SimId>,
        &'static mut Transform,
        Ref<'static, Collider>,
        Option<&'static mut RigidBody>,
        Option<Ref<'static, PhysicsBody>>,
        Option<Ref<'static, CollisionLayers>>,
        Option<Ref<'static, PhysicsId>>,
        Option<Ref<'static, Sleeping>>,
        Option<Ref<'static, LockedAxes>>,
    ),
>;

/// How many collider bodies there are, which they are, and how many carry each optional
/// component: a component removed, or a body gone, shows only here, and so does a body that comes
/// back into the query with the change ticks it had (one whose `Disabled`, or another disabling
/// component, was removed), even when another one left in its place.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Carriers {
    bodies: usize,
    /// The wrapping sum of each body's `SimId` through SplitMix64's finalizer (so that a
    /// different set of ids almost surely sums differently, where plain sums of ids often agree).
    ids: u64,
    rigid: usize,
    classed: usize,
    layered: usize,
    with_ids: usize,
    sleeping: usize,
    locked: usize,
}

/// What the kept list was last made equal to: the world after the restores counted here, whose
/// bodies carried what `carriers` counts.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Kept {
    restores: u64,
    carriers: Carriers,
}

/// The solver's list of CPU bodies, kept between ticks, and the buffers of a whole read.
#[derive(Default)]
pub struct BodyCopy {
    /// A whole read's bodies as the query gave them, with their slot ids and sleep markers.
    gathered: Vec<(SolverBody, Option<PhysicsId>, bool)>,
    /// Each gathered body's `SimId` and place in `gathered`, sorted: the order the bodies are
    /// copied out in (sorting these small keys moves less than sorting the bodies).
    order: Vec<(SimId, u32)>,
    /// The CPU bodies, sorted by `SimId`: what the step works on.
    pub bodies: Vec<SolverBody>,
    /// Every collider body's `SimId` (GPU ones too), sorted.
    pub all_bodies: Vec<SimId>,
    /// Each body's slot id in the world when read.
    had_id: Vec<Option<PhysicsId>>,
    /// Whether each body carried `Sleeping` when read.
    was_sleeping: Vec<bool>,
    /// Whether each body entered the step asleep (marked, at rest and dynamic).
    entered_asleep: Vec<bool>,
    /// Set when the list is the world's as the last write-back left it.
    kept: Option<Kept>,
    /// What this tick's read counted.
    carriers: Carriers,
    /// The CPU bodies a read by changes reads again.
    changed: Vec<Entity>,
    /// Where the bodies the last read read again are in `bodies`, ascending (when it kept the
    /// list).
    reread: Vec<u32>,
    /// The bodies a write-back after a kept read looks at, ascending (scratch).
    visit: Vec<u32>,
}

/// The components of one body as the query gives them, with their change ticks.
pub type RowMut<'a> = (
    Entity,
    Ref<'a, SimId>,
    Mut<'a, Transform>,
    Ref<'a, Collider>,
    Option<Mut<'a, RigidBody>>,
    Option<Ref<'a, PhysicsBody>>,
    Option<Ref<'a, CollisionLayers>>,
    Option<Ref<'a, PhysicsId>>,
    Option<Ref<'a, Sleeping>>,
    Option<Ref<'a, LockedAxes>>,
);

/// Whether any body of `query` had a component written or added since the system last ran (by
/// anyone but the system itself; see [`ChangedBody`]), found without building the rows.
pub fn any_body_changed(query: &mut BodyQuery) -> bool {
    let mut lens = query.transmute_lens_filtered::<Entity, ChangedBody>();
    lens.query().iter().next().is_some()
}

/// Whether a component of the body was added, or its identity or class written: then the list
/// must be read whole. (A `Sleeping` marker is only ever added.)
#[inline(always)]
fn reshaped(row: &RowMut) -> bool {
    let (_, sim_id, transform, collider, rigid, class, layers, id, sleeping, locks) = row;
    let changed = |ticks: Option<bool>| ticks.unwrap_or(false);
    sim_id.is_changed()
        || transform.is_added()
        || collider.is_added()
        || changed(rigid.as_ref().map(|r| r.is_added()))
        || changed(class.as_ref().map(|c| c.is_changed()))
        || changed(layers.as_ref().map(|l| l.is_added()))
        || changed(id.as_ref().map(|i| i.is_added()))
        || changed(sleeping.as_ref().map(|s| s.is_changed()))
        || changed(locks.as_ref().map(|l| l.is_added()))
}

/// Whether the row is a CPU body (no class, or the CPU class).
fn is_cpu(class: Option<&Ref<PhysicsBody>>) -> bool {
    class.is_none_or(|c| c.class == BodyClass::Cpu)
}

/// A body's solver record as the world holds it, with its slot id and whether it carries
/// `Sleeping`.
fn record(row: &RowMut) -> (SolverBody, Option<PhysicsId>, bool) {
    let (entity, sim_id, transform, collider, rigid, _, layers, id, sleeping, locks) = row;
    let (sim_id, sleeping) = (**sim_id, sleeping.is_some());
    let rigid = rigid.as_deref().copied().unwrap_or_else(RigidBody::fixed);
    let at_rest = rigid.linear_velocity == Vec3::ZERO && rigid.angular_velocity == Vec3::ZERO;
    let body = SolverBody {
        sim_id,
        entity: *entity,
        id: PhysicsId(0),
        kind: rigid.kind,
        position: transform.translation,
        rotation: transform.rotation,
        linear_velocity: rigid.linear_velocity,
        angular_velocity: rigid.angular_velocity,
        mass: rigid.mass,
        gravity_scale: rigid.gravity_scale,
        collider: **collider,
        layers: layers.as_deref().copied().unwrap_or_default(),
        // Giving a sleeping body a velocity wakes it.
        sleeping: sleeping && at_rest && rigid.kind == BodyKind::Dynamic,
        locks: locks.as_deref().copied().unwrap_or_default(),
    };
    (body, id.as_deref().copied(), sleeping)
}

/// What [`Carriers`] looks at in a body: its id, and which optional components it carries (never
/// their values or change ticks).
type CarrierRow = (
    &'static SimId,
    Has<RigidBody>,
    Has<PhysicsBody>,
    Has<CollisionLayers>,
    Has<PhysicsId>,
    Has<Sleeping>,
    Has<LockedAxes>,
);

/// The bodies with a component written or added since the system last ran (by anyone but the
/// system itself), as a filter, so that finding them builds no row.
type ChangedBody = Or<(
    Changed<SimId>,
    Changed<Transform>,
    Changed<Collider>,
    Changed<RigidBody>,
    Changed<PhysicsBody>,
    Changed<CollisionLayers>,
    Changed<PhysicsId>,
    Changed<Sleeping>,
    Changed<LockedAxes>,
)>;

impl Carriers {
    /// Counts one body, and which of `RigidBody`, `PhysicsBody`, `CollisionLayers`, `PhysicsId`,
    /// `Sleeping` and `LockedAxes` it carries.
    #[inline(always)]
    pub fn count(&mut self, row: &RowMut) {
        let (_, sim_id, _, _, rigid, classed, layered, with_id, sleeping, locked) = row;
        self.add(
            **sim_id,
            [
                rigid.is_some(),
                classed.is_some(),
                layered.is_some(),
                with_id.is_some(),
                sleeping.is_some(),
                locked.is_some(),
            ],
        );
    }

    /// Counts every body of `query`, looking only at what [`CarrierRow`] holds: a walk that
    /// builds no row.
    pub fn of(query: &mut BodyQuery) -> Carriers {
        let mut carriers = Carriers::default();
        let mut lens = query.transmute_lens::<CarrierRow>();
        for (sim_id, rigid, classed, layered, with_id, sleeping, locked) in lens.query().iter() {
            carriers.add(
                *sim_id,
                [rigid, classed, layered, with_id, sleeping, locked],
            );
        }
        carriers
    }

    /// Counts a body with id `sim_id` that carries the optional components `present` says (in the
    /// order of [`Carriers::count`]).
    #[inline(always)]
    fn add(&mut self, sim_id: SimId, present: [bool; 6]) {
        let [rigid, classed, layered, with_id, sleeping, locked] = present;
        self.bodies += 1;
        self.ids = self.ids.wrapping_add(mix(sim_id.0));
        self.rigid += usize::from(rigid);
        self.classed += usize::from(classed);
        self.layered += usize::from(layered);
        self.with_ids += usize::from(with_id);
        self.sleeping += usize::from(sleeping);
        self.locked += usize::from(locked);
    }
}

impl BodyCopy {
    /// Makes `bodies` and `all_bodies` this tick's. `restores` is the snapshot registry's count
    /// of restores begun, `None` in a world without one (then every tick reads every body).
    /// Returns whether the list was kept: then the bodies are the last tick's, each with the slot
    /// id it was given then (a whole read leaves every slot id for the caller to give).
    pub fn read(&mut self, query: &mut BodyQuery, restores: Option<u64>) -> bool {
        let kept = self.kept.take();
        let read_changes = kept.is_some_and(|k| Some(k.restores) == restores);
        let kept = read_changes && self.read_changed(query, kept);
        if !kept {
            self.read_all(query);
        }
        kept
    }

    /// Reads again the bodies someone wrote since the last tick; returns false, leaving the list
    /// to be read whole, when the world's bodies may no longer be the list's.
    fn read_changed(&mut self, query: &mut BodyQuery, kept: Option<Kept>) -> bool {
        let carriers = Carriers::of(query);
        self.carriers = carriers;
        if kept.is_none_or(|k| k.carriers != carriers) {
            return false;
        }
        let changed = &mut self.changed;
        changed.clear();
        self.reread.clear();
        changed.extend(
            query
                .transmute_lens_filtered::<Entity, ChangedBody>()
                .query()
                .iter(),
        );
        for &entity in changed.iter() {
            let Ok(row) = query.get_mut(entity) else {
                return false;
            };
            if reshaped(&row) {
                return false;
            }
            if !is_cpu(row.5.as_ref()) {
                continue;
            }
            let Ok(k) = self.bodies.binary_search_by_key(&*row.1, |b| b.sim_id) else {
                return false;
            };
            let (body, id, marked) = record(&row);
            self.reread.push(k as u32);
            self.entered_asleep[k] = body.sleeping;
            self.bodies[k] = SolverBody {
                id: self.bodies[k].id,
                ..body
            };
            self.had_id[k] = id;
            self.was_sleeping[k] = marked;
        }
        self.reread.sort_unstable();
        #[cfg(debug_assertions)]
        self.check_against_whole_read(query);
        true
    }

    /// Reads every collider body: its `SimId` into `all_bodies`, and a CPU body's solver record
    /// into `bodies` (with its slot id and sleep marker beside it), both sorted by `SimId`.
    fn read_all(&mut self, query: &mut BodyQuery) {
        let gathered = &mut self.gathered;
        gathered.clear();
        self.all_bodies.clear();
        let mut carriers = Carriers::default();
        for row in query.iter_mut() {
            carriers.count(&row);
            self.all_bodies.push(*row.1);
            if is_cpu(row.5.as_ref()) {
                gathered.push(record(&row));
            }
        }
        self.carriers = carriers;
        // The query yields each archetype's bodies in the order they were spawned, so the list is
        // a few runs already in `SimId` order: the stable sort merges runs (ids are unique, so the
        // order is the same as any sort's). The keys are sorted, and the bodies copied once, in
        // their order.
        let order = &mut self.order;
        order.clear();
        order.extend(
            gathered
                .iter()
                .enumerate()
                .map(|(i, (body, ..))| (body.sim_id, i as u32)),
        );
        order.sort();
        self.all_bodies.sort();
        self.bodies.clear();
        self.had_id.clear();
        self.was_sleeping.clear();
        self.entered_asleep.clear();
        for &(_, i) in order.iter() {
            let (body, id, sleeping) = gathered[i as usize];
            self.entered_asleep.push(body.sleeping);
            self.bodies.push(body);
            self.had_id.push(id);
            self.was_sleeping.push(sleeping);
        }
    }

    /// Checks that the list read by changes is the one a whole read gives, once the step has
    /// settled both (`SolverBody::settle_inputs`: the kept records have been through it).
    #[cfg(debug_assertions)]
    fn check_against_whole_read(&self, query: &mut BodyQuery) {
        let mut whole = BodyCopy::default();
        whole.read_all(query);
        let settled = |body: &SolverBody| {
            let mut body = *body;
            body.settle_inputs();
            body.id = PhysicsId(0);
            body
        };
        let bits = |body: &SolverBody| {
            let bits = |v: Vec3| v.to_array().map(f32::to_bits);
            (
                bits(body.position),
                body.rotation.to_array().map(f32::to_bits),
                bits(body.linear_velocity),
                bits(body.angular_velocity),
            )
        };
        let same_body = |a: &SolverBody, b: &SolverBody| {
            let (a, b) = (settled(a), settled(b));
            (a == b && bits(&a) == bits(&b)) || format!("{a:?}") == format!("{b:?}")
        };
        let first = (0..whole.bodies.len().min(self.bodies.len())).find(|&k| {
            !same_body(&whole.bodies[k], &self.bodies[k])
                || whole.had_id[k] != self.had_id[k]
                || whole.was_sleeping[k] != self.was_sleeping[k]
                || whole.entered_asleep[k] != self.entered_asleep[k]
        });
        let same_lists =
            whole.all_bodies == self.all_bodies && whole.bodies.len() == self.bodies.len();
        if first.is_some() || !same_lists {
            let show = |copy: &BodyCopy, k: usize| {
                format!(
                    "{:?}, id {:?}, marked {}, entered asleep {}",
                    copy.bodies[k], copy.had_id[k], copy.was_sleeping[k], copy.entered_asleep[k]
                )
            };
            panic!(
                "the kept body list differs from the world's bodies (a change went unseen): {}",
                match first {
                    Some(k) => format!("kept {}; in the world {}", show(self, k), show(&whole, k)),
                    None => format!(
                        "{} kept against {} in the world",
                        self.all_bodies.len(),
                        whole.all_bodies.len()
                    ),
                }
            );
        }
    }

    /// Writes the step's bodies back; returns whether it changed a value or queued a command.
    /// `restores` is what [`read`](Self::read) was given: the list is kept for the next tick when
    /// the write-back queued no command, and so left the world holding exactly the list.
    ///
    /// `moved` lists (ascending) the bodies the step moved, awake at some point of the tick. One
    /// that entered the tick asleep and ends it asleep is not written back, so its place in the
    /// world is where it was: when it was moved in between (a joint's motor woke it and it fell
    /// asleep again), its kept record is read again from the world.
    ///
    /// `involved` lists (ascending) the bodies the step could change, given only after a read
    /// that kept the list and a tick that was not at rest (see `cpu::involved`). Every other body
    /// is then as the world holds it (it was not read again, and the step left it alone), so only
    /// these and the bodies read again are looked at; without it every body is.
    pub fn write_back(
        &mut self,
        commands: &mut Commands,
        query: &mut BodyQuery,
        restores: Option<u64>,
        moved: &[u32],
        involved: Option<&[u32]>,
    ) -> bool {
        let mut wrote = false;
        let mut queued = false;
        let mut moved = moved.iter().copied().peekable();
        let mut visit = std::mem::take(&mut self.visit);
        visit.clear();
        match involved {
            Some(involved) => {
                let mut reread = self.reread.iter().copied().peekable();
                for &i in involved {
                    while let Some(r) = reread.next_if(|&r| r < i) {
                        visit.push(r);
                    }
                    reread.next_if_eq(&i);
                    visit.push(i);
                }
                visit.extend(reread);
            }
            _ => visit.extend(0..self.bodies.len() as u32),
        }
        for &k in &visit {
            let k = k as usize;
            let body = self.bodies[k];
            let was_moved = {
                while moved.next_if(|&i| (i as usize) < k).is_some() {}
                moved.peek() == Some(&(k as u32))
            };
            if self.had_id[k] != Some(body.id) {
                commands.entity(body.entity).insert(body.id);
                queued = true;
            }
            if self.was_sleeping[k] != body.sleeping {
                queued = true;
                if body.sleeping {
                    commands.entity(body.entity).insert(Sleeping);
                } else {
                    commands.entity(body.entity).remove::<Sleeping>();
                }
            }
            let asleep_throughout = self.entered_asleep[k] && body.sleeping;
            self.entered_asleep[k] = body.sleeping;
            if body.kind == BodyKind::Static {
                continue;
            }
            // A body asleep before and after the step is not written back (its velocities are
            // zero in the world already, and `Changed` reports nothing), so the world keeps its
            // place: the record is read back from the world if the step moved it in between.
            if asleep_throughout {
                if was_moved {
                    match query.get_mut(body.entity) {
                        Ok(row) => {
                            self.bodies[k] = SolverBody {
                                id: body.id,
                                ..record(&row).0
                            }
                        }
                        Err(_) => queued = true,
                    }
                }
                continue;
            }
            let Ok((_, _, mut transform, _, rigid, ..)) = query.get_mut(body.entity) else {
                queued = true;
                continue;
            };
            if transform.translation != body.position || transform.rotation != body.rotation {
                transform.translation = body.position;
                transform.rotation = body.rotation;
                wrote = true;
            } else {
                // Equal values may still differ in the sign of a zero: the world keeps its own
                // (it is not written), and so does the list.
                self.bodies[k].position = transform.translation;
                self.bodies[k].rotation = transform.rotation;
            }
            if let Some(mut rigid) = rigid {
                wrote |= rigid.linear_velocity != body.linear_velocity
                    || rigid.angular_velocity != body.angular_velocity;
                rigid.linear_velocity = body.linear_velocity;
                rigid.angular_velocity = body.angular_velocity;
            }
        }
        self.visit = visit;
        self.kept = match (queued, restores) {
            (false, Some(restores)) => Some(Kept {
                restores,
                carriers: self.carriers,
            }),
            _ => None,
        };
        wrote || queued
    }
}

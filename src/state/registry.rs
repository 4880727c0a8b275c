//! [`SimRegistry`]: every type that is simulation state, declared once.
//!
//! One registration per type says what it is:
//! - a simulation component ([`SimStateAppExt::register_sim_component`]): hashed after every tick,
//!   copied by snapshots, compared down to the field, listed in reports, and its entities get a
//!   `SimId`;
//! - a simulation resource ([`SimStateAppExt::register_sim_resource`]): the same, as a resource;
//! - presentation that snapshots copy but the hash never sees
//!   ([`SimStateAppExt::register_presentation_component`], e.g. burst particles, moved by a fixed
//!   system and despawned later; its entities get a `SimId` so a rollback finds them);
//! - or neither (`ignore_in_snapshots`, and `copy_in_snapshots` for types presentation shares).
//!
//! The hash, snapshots, comparisons, reports and the undeclared-state check all walk this
//! registry; none of them names a gameplay type. Each type is known by its stable registered name
//! (`SimState::NAME`), and a second type under a name already taken is refused when the app
//! starts ([`SimRegistry::conflicts`]), as is a name whose 32-bit hash tag another name shares.
//!
//! [`SimStateAppExt::register_sim_component`]: super::SimStateAppExt::register_sim_component
//! [`SimStateAppExt::register_sim_resource`]: super::SimStateAppExt::register_sim_resource
//! [`SimStateAppExt::register_presentation_component`]: super::SimStateAppExt::register_presentation_component
//!
//! The registry also holds a [`DerivedSlot`], where a module that reads the registrations keeps
//! what it works out from them (the hash's per-archetype plans); every registration empties it.
//!
//! This module must never hash or copy anything itself: it holds the declarations and the
//! functions the other modules call.

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex, MutexGuard};

use bevy::ecs::component::{Component, ComponentId};
use bevy::prelude::{Resource, World};
use bevy::ptr::Ptr;

use super::hasher::{StateHasher, name_tag};
use super::layout::{FieldLayout, LayoutFingerprint, TypeLayout};
use super::sim_state::SimState;

/// What a registered type is to the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SimKind {
    /// A component that is simulation state.
    Component,
    /// A resource that is simulation state.
    Resource,
    /// A component snapshots copy and the hash never sees.
    Presentation,
}

/// Feeds a value behind a pointer into a hasher.
type HashFn = unsafe fn(Ptr<'_>, &mut StateHasher);
/// Lists a value's fields.
type VisitFn = unsafe fn(Ptr<'_>, &mut Vec<(String, String)>);
/// Lists a type's layout ([`SimState::layout`]).
type LayoutFn = fn(&str, &mut dyn FnMut(&str, &'static str, usize));

/// One registered type.
#[derive(Clone, Copy)]
pub struct SimEntry {
    /// Its registered name.
    pub name: &'static str,
    /// The hash tag of its name.
    pub tag: u32,
    /// Its Rust type.
    pub type_id: TypeId,
    /// What it is.
    pub kind: SimKind,
    /// Whether the engine declares it (its Rust type is in the engine's crate); false for a
    /// game's own types. Only for what a summary shows: never hashed.
    pub engine_owned: bool,
    hash: Option<HashFn>,
    visit: Option<VisitFn>,
    layout: Option<LayoutFn>,
}

impl SimEntry {
    /// Feeds the value behind `ptr` (a value of this entry's type).
    ///
    /// # Safety
    ///
    /// `ptr` must point to a value of the type this entry was registered for.
    pub unsafe fn hash(&self, ptr: Ptr<'_>, hasher: &mut StateHasher) {
        if let Some(hash) = self.hash {
            // SAFETY: the caller guarantees the type.
            unsafe { hash(ptr, hasher) }
        }
    }

    /// The fields of the value behind `ptr`, as `(path, value)`.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a value of the type this entry was registered for.
    pub unsafe fn fields(&self, ptr: Ptr<'_>) -> Vec<(String, String)> {
        let mut fields = Vec::new();
        if let Some(visit) = self.visit {
            // SAFETY: the caller guarantees the type.
            unsafe { visit(ptr, &mut fields) }
        }
        fields
    }

    /// Calls `out` with the type's layout entries (path, declared type, size).
    pub fn layout(&self, out: &mut dyn FnMut(&str, &'static str, usize)) {
        if let Some(layout) = self.layout {
            layout("", out);
        }
    }

    /// Whether the hash sees it.
    pub fn is_hashed(&self) -> bool {
        matches!(self.kind, SimKind::Component | SimKind::Resource)
    }
}

unsafe fn hash_value<T: SimState + 'static>(ptr: Ptr<'_>, hasher: &mut StateHasher) {
    // SAFETY: registered for `T`, and the caller passes a `T`.
    let value = unsafe { ptr.deref::<T>() };
    value.hash_state(hasher);
}

unsafe fn visit_value<T: SimState + 'static>(ptr: Ptr<'_>, out: &mut Vec<(String, String)>) {
    // SAFETY: registered for `T`, and the caller passes a `T`.
    let value = unsafe { ptr.deref::<T>() };
    value.visit_fields("", &mut |path, text| out.push((path.to_owned(), text)));
}

/// Whether an entity's `Transform` is a copy of state kept elsewhere (a GPU body's read-back), and
/// so not hashed even on a simulation entity: decided from one of the entity's components, given
/// as a pointer to a value of the type the rule was registered for.
pub type TransformIsCopy = Arc<dyn Fn(Ptr<'_>) -> bool + Send + Sync>;

/// The registered simulation types of an app (a resource inserted when the app is built).
#[derive(Resource, Clone, Default)]
pub struct SimRegistry {
    /// Sorted by name.
    entries: Arc<Vec<SimEntry>>,
    /// Names registered twice for different types, or sharing a tag.
    conflicts: Arc<Vec<String>>,
    transform_copies: Arc<Vec<(TypeId, TransformIsCopy)>>,
    /// The layout of what is registered, built on first use after the last registration.
    layout: Arc<std::sync::OnceLock<Arc<LayoutFingerprint>>>,
    /// What the hash worked out of the world's shape with these registrations (scratch).
    derived: Arc<DerivedSlot>,
}

/// Where a module that reads the registry keeps what it works out from these registrations (the
/// hash keeps its plans here, see `hash_plan`). Every registration empties it, by giving the
/// registry a fresh slot. What it holds is the keeping module's type, so this module names none.
#[derive(Default)]
pub(crate) struct DerivedSlot(Mutex<Option<Box<dyn Any + Send>>>);

impl DerivedSlot {
    /// The slot's content, locked. A lock poisoned by a panic elsewhere is taken as it is: its
    /// keepers only ever store a whole value or extend one entry at a time, so what it holds is
    /// still consistent.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Option<Box<dyn Any + Send>>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Whether `T` is one of the engine's own types, by its path (the engine's library crate is
/// `rusting_engine`).
fn engine_owned<T: 'static>() -> bool {
    std::any::type_name::<T>().starts_with("rusting_engine::")
}

impl SimRegistry {
    /// Registers `T` as `kind`. A type registered again keeps one entry (the later kind wins); a
    /// different type under the same name, or a name whose tag another name has, is a conflict.
    pub fn register<T: SimState + 'static>(&mut self, kind: SimKind) {
        self.insert(SimEntry {
            name: T::NAME,
            tag: name_tag(T::NAME),
            type_id: TypeId::of::<T>(),
            kind,
            engine_owned: engine_owned::<T>(),
            hash: Some(hash_value::<T>),
            visit: Some(visit_value::<T>),
            layout: Some(T::layout),
        });
    }

    /// Registers `T`, which need not be `SimState`, as presentation under `name`.
    pub fn register_presentation<T: 'static>(&mut self, name: &'static str) {
        self.insert(SimEntry {
            name,
            tag: name_tag(name),
            type_id: TypeId::of::<T>(),
            kind: SimKind::Presentation,
            engine_owned: engine_owned::<T>(),
            hash: None,
            visit: None,
            layout: None,
        });
    }

    fn insert(&mut self, entry: SimEntry) {
        self.layout = Arc::default();
        self.derived = Arc::default();
        let entries = Arc::make_mut(&mut self.entries);
        if let Some(same) = entries.iter_mut().find(|e| e.type_id == entry.type_id) {
            *same = entry;
            return;
        }
        if let Some(other) = entries
            .iter()
            .find(|e| e.name == entry.name || e.tag == entry.tag)
        {
            Arc::make_mut(&mut self.conflicts).push(if other.name == entry.name {
                format!(
                    "two types are registered as simulation state under the name `{}`: give one \
                     another name with #[sim_state(name = \"...\")]",
                    entry.name
                )
            } else {
                format!(
                    "the registered names `{}` and `{}` share a hash tag: rename one",
                    other.name, entry.name
                )
            });
            return;
        }
        let at = entries.partition_point(|e| e.name < entry.name);
        entries.insert(at, entry);
    }

    /// Declares that an entity's `Transform` is a copy, and not hashed, when its `T` says so.
    pub fn transform_is_copy_when<T: Component>(&mut self, rule: fn(&T) -> bool) {
        let rule: TransformIsCopy = Arc::new(move |ptr: Ptr<'_>| {
            // SAFETY: the hash calls the rule with a pointer to the entity's `T`.
            rule(unsafe { ptr.deref::<T>() })
        });
        Arc::make_mut(&mut self.transform_copies).push((TypeId::of::<T>(), rule));
        self.derived = Arc::default();
    }

    /// What other modules keep of these registrations (see [`DerivedSlot`]).
    pub(crate) fn derived(&self) -> &DerivedSlot {
        &self.derived
    }

    /// The rules of [`SimRegistry::transform_is_copy_when`], by the component they read.
    pub fn transform_copy_rules(&self) -> &[(TypeId, TransformIsCopy)] {
        &self.transform_copies
    }

    /// The layout of every hashed registered type on this target (see [`LayoutFingerprint`]),
    /// built once per set of registrations.
    pub fn layout(&self) -> Arc<LayoutFingerprint> {
        Arc::clone(self.layout.get_or_init(|| {
            let types = self
                .entries
                .iter()
                .filter(|entry| entry.is_hashed())
                .map(|entry| {
                    let mut fields = Vec::new();
                    entry.layout(&mut |path, ty, size| {
                        fields.push(FieldLayout {
                            path: path.to_owned(),
                            ty: ty.to_owned(),
                            size: size as u64,
                        });
                    });
                    TypeLayout {
                        name: entry.name.to_owned(),
                        fields,
                    }
                })
                .collect();
            Arc::new(LayoutFingerprint::of(types))
        }))
    }

    /// Every registered type, sorted by name.
    pub fn entries(&self) -> &[SimEntry] {
        &self.entries
    }

    /// The entry of the type `type_id`, if registered.
    pub fn get(&self, type_id: TypeId) -> Option<&SimEntry> {
        self.entries.iter().find(|e| e.type_id == type_id)
    }

    /// The entry registered under `name`.
    pub fn by_name(&self, name: &str) -> Option<&SimEntry> {
        self.entries
            .binary_search_by(|e| e.name.cmp(name))
            .ok()
            .map(|i| &self.entries[i])
    }

    /// What was registered twice under one name (the app refuses to start while any is left).
    pub fn conflicts(&self) -> &[String] {
        &self.conflicts
    }

    /// The entries of `kind` that `world` has registered as components, with their ids, in name
    /// order.
    pub fn resolved(&self, world: &World, kinds: &[SimKind]) -> Vec<(SimEntry, ComponentId)> {
        self.entries
            .iter()
            .filter(|e| kinds.contains(&e.kind))
            .filter_map(|e| Some((*e, world.components().get_id(e.type_id)?)))
            .collect()
    }
}

/// The registry of `world`, or an empty one.
pub fn sim_registry(world: &World) -> SimRegistry {
    world
        .get_resource::<SimRegistry>()
        .cloned()
        .unwrap_or_default()
}

/// Marks a game entity whose only simulation state is its `Transform` (moved by a fixed system):
/// its `Transform` is then hashed, compared and copied like a body's.
#[derive(
    bevy::prelude::Component, Clone, Copy, Debug, Default, PartialEq, Eq, rusting_macros::SimState,
)]
#[require(super::sim_id::SimId)]
pub struct Simulated;

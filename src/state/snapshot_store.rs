//! How a snapshot holds values: a resource's value alone ([`StoredValue`]), the values of one
//! component type across an archetype's entities in one vector ([`StoredColumn`]), and a value
//! moved to the heap to be inserted with an entity's others in one archetype move
//! ([`HeapValue`]).
//!
//! This module must never decide what is copied: the snapshot registry does.

use std::any::TypeId;
use std::ptr::NonNull;

use bevy::ecs::component::{Component, Mutable};
use bevy::ecs::entity::{Entity, EntityHashMap};
use bevy::ecs::world::{EntityRef, EntityWorldMut};
use bevy::prelude::World;

/// One copied component value.
pub(super) trait StoredValue: Send + Sync + 'static {
    /// The component's type.
    fn component_type(&self) -> TypeId;
    /// Writes the value, its entities mapped through `mapper`, into `entity`: in place when it
    /// has the component, else by inserting it.
    fn write(&self, entity: &mut EntityWorldMut, mapper: &mut EntityHashMap<Entity>);
}

/// A value moved to the heap by [`StoredColumn::row_to_heap`]: inserted with `insert_by_ids`,
/// which moves the value out, after which only its allocation is left to free.
pub(super) struct HeapValue {
    pub(super) ptr: NonNull<u8>,
    /// Frees the allocation (never drops the value: it has been moved out).
    pub(super) free: unsafe fn(NonNull<u8>),
}

/// Frees the memory of a `Box<T>` whose value has been moved out.
///
/// # Safety
///
/// `ptr` came from `Box::<T>::into_raw` and its value has been moved out.
unsafe fn free_moved<T>(ptr: NonNull<u8>) {
    let layout = std::alloc::Layout::new::<T>();
    if layout.size() != 0 {
        // SAFETY: allocated by `Box` with this layout (zero-sized boxes allocate nothing).
        unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) };
    }
}

struct Stored<T>(T);

impl<T: Component<Mutability = Mutable> + Clone> StoredValue for Stored<T> {
    fn component_type(&self) -> TypeId {
        TypeId::of::<T>()
    }

    fn write(&self, entity: &mut EntityWorldMut, mapper: &mut EntityHashMap<Entity>) {
        write_clone(&self.0, entity, mapper);
    }
}

/// Writes a clone of `value`, its entities mapped through `mapper`, into `entity`: in place when
/// it has the component, else by inserting it.
fn write_clone<T: Component<Mutability = Mutable> + Clone>(
    value: &T,
    entity: &mut EntityWorldMut,
    mapper: &mut EntityHashMap<Entity>,
) {
    let mut value = value.clone();
    T::map_entities(&mut value, mapper);
    match entity.get_mut::<T>() {
        Some(mut slot) => *slot = value,
        None => {
            entity.insert(value);
        }
    }
}

pub(super) fn capture<T: Component<Mutability = Mutable> + Clone>(
    entity: &EntityRef,
) -> Option<Box<dyn StoredValue>> {
    entity
        .get::<T>()
        .map(|value| Box::new(Stored(value.clone())) as Box<dyn StoredValue>)
}

/// One component type's values across the entities of one captured archetype, in row order.
pub(super) trait StoredColumn: Send + Sync + 'static {
    /// Writes row `row`'s value, its entities mapped through `mapper`, into `entity`: in place
    /// when it has the component, else by inserting it.
    fn write_row(
        &self,
        row: usize,
        entity: &mut EntityWorldMut,
        mapper: &mut EntityHashMap<Entity>,
    );
    /// A clone of row `row`'s value with its entities mapped through `mapper`, on the heap.
    fn row_to_heap(&self, row: usize, mapper: &mut EntityHashMap<Entity>) -> HeapValue;
}

struct StoredRows<T>(Vec<T>);

impl<T: Component<Mutability = Mutable> + Clone> StoredColumn for StoredRows<T> {
    fn write_row(
        &self,
        row: usize,
        entity: &mut EntityWorldMut,
        mapper: &mut EntityHashMap<Entity>,
    ) {
        write_clone(&self.0[row], entity, mapper);
    }

    fn row_to_heap(&self, row: usize, mapper: &mut EntityHashMap<Entity>) -> HeapValue {
        let mut value = self.0[row].clone();
        T::map_entities(&mut value, mapper);
        heap_value(value)
    }
}

/// Copies `T` out of every entity of `entities` (one archetype's, which all hold it), in order.
pub(super) fn capture_column<T: Component<Mutability = Mutable> + Clone>(
    world: &World,
    entities: &[Entity],
) -> Box<dyn StoredColumn> {
    let rows = entities
        .iter()
        .map(|&entity| {
            world
                .entity(entity)
                .get::<T>()
                .expect("every entity of a captured archetype holds its components")
                .clone()
        })
        .collect();
    Box::new(StoredRows::<T>(rows))
}

/// `value` moved to the heap, with the function that frees its memory once it is moved out.
pub(super) fn heap_value<T>(value: T) -> HeapValue {
    HeapValue {
        ptr: NonNull::from(Box::leak(Box::new(value))).cast::<u8>(),
        free: free_moved::<T>,
    }
}

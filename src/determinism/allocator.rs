//! [`AllocatorState`]: the part of bevy's entity allocator that decides which ids later spawns get.
//!
//! Bevy 0.19's `EntityAllocator` hands out ids from three places: a shared LIFO stack of freed
//! ids, a private local list where up to 128 freed ids wait before they move to that stack, and a
//! cursor of never-used indices. None of them has a getter. Reading them is therefore destructive:
//! pop the shared stack until a fresh index comes out, then free 129 fresh dummies one at a time,
//! which forces exactly one flush of the local list (whatever its length, 0 to 128) onto the empty
//! stack, and pop again. Then the allocator is replaced by a new one and rebuilt in the state that
//! was read, so a world read this way hands out the same ids it would have.
//!
//! Rebuilding uses public calls only: `alloc_many(cursor)` moves the cursor, a `free_many` longer
//! than 128 lands on the shared stack directly (with padding popped straight back off when the
//! stack is short), and a `free_many` of at most 128 fills the empty local list.
//!
//! This module must never touch `Entities` (generations and locations are the snapshot's job).
//! A world that hands its allocator to remote allocators (async spawning) cannot be read this way:
//! replacing the allocator disconnects them.

use bevy::ecs::entity::{Entity, EntityAllocator, EntityGeneration};
use bevy::prelude::World;

/// Bevy's local free list holds this many ids before it flushes them to the shared stack.
pub const LOCAL_FREE_CAPACITY: usize = 128;

/// Which ids a world's entity allocator will hand out next.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllocatorState {
    /// The first index never handed out.
    pub fresh_cursor: u32,
    /// The shared stack of freed ids, bottom first (the last one is handed out first).
    pub shared: Vec<Entity>,
    /// The local list of freed ids waiting to be flushed onto the shared stack, oldest first.
    pub local: Vec<Entity>,
}

impl AllocatorState {
    /// Reads the allocator of `world`, then rebuilds it as it was.
    ///
    /// Every id between frames is either spawned, freed, or fresh; an id allocated and not yet
    /// spawned (a pending `Commands::spawn`) is treated as fresh and would be lost. An id freed
    /// without ever being despawned (generation still the first) would be read as fresh, which
    /// only a custom allocator does.
    pub fn read(world: &mut World) -> AllocatorState {
        let allocator = world.entity_allocator_mut();

        // 1. The shared stack, popped top first, until a fresh index comes out. Every freed id has
        //    been despawned at least once, so its generation is past the first; a fresh one's is
        //    the first.
        let mut popped = Vec::new();
        let first_fresh = loop {
            let entity = allocator.alloc();
            if entity.generation() == EntityGeneration::FIRST {
                break entity;
            }
            popped.push(entity);
        };
        popped.reverse();
        let shared = popped;
        let fresh_cursor = first_fresh.index_u32();

        // 2. The local list: one flush, forced by 129 single frees of fresh dummies.
        let mut dummies = vec![first_fresh];
        while dummies.len() <= LOCAL_FREE_CAPACITY {
            dummies.push(allocator.alloc());
        }
        for &dummy in &dummies {
            allocator.free(dummy);
        }
        let dummy_end = fresh_cursor + dummies.len() as u32;
        let mut local = Vec::new();
        loop {
            let entity = allocator.alloc();
            if entity.index_u32() >= dummy_end {
                break;
            }
            if entity.index_u32() < fresh_cursor {
                local.push(entity);
            }
        }
        local.reverse();

        let state = AllocatorState {
            fresh_cursor,
            shared,
            local,
        };
        state.install(world);
        state
    }

    /// Replaces the allocator of `world` with a new one in this state.
    pub fn install(&self, world: &mut World) {
        let allocator = world.entity_allocator_mut();
        *allocator = EntityAllocator::default();
        allocator.alloc_many(self.fresh_cursor).for_each(drop);
        if !self.shared.is_empty() {
            // A slice longer than the local list's capacity goes onto the shared stack as it is.
            let padding = (LOCAL_FREE_CAPACITY + 1).saturating_sub(self.shared.len());
            let mut stack = self.shared.clone();
            stack.extend(std::iter::repeat_n(Entity::PLACEHOLDER, padding));
            allocator.free_many(&stack);
            for _ in 0..padding {
                allocator.alloc();
            }
        }
        if !self.local.is_empty() {
            allocator.free_many(&self.local);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ids a world hands out for `n` spawns, without disturbing it (a clone of the stream is
    /// read from a throwaway world with the same allocator state).
    fn next_ids(world: &mut World, n: usize) -> Vec<Entity> {
        (0..n).map(|_| world.spawn_empty().id()).collect()
    }

    /// A world with `spawned` entities of which every `k`-th was despawned, in an order that leaves
    /// ids on both the shared stack and the local list.
    fn churned(spawned: usize, k: usize) -> World {
        let mut world = World::new();
        let ids: Vec<Entity> = (0..spawned).map(|_| world.spawn_empty().id()).collect();
        for (n, id) in ids.iter().enumerate() {
            if n % k == 0 {
                world.despawn(*id);
            }
        }
        world
    }

    /// Fails if reading the allocator changes what it hands out next: for a local list that is
    /// empty, partly full, full, and with ids also on the shared stack.
    #[test]
    fn reading_the_allocator_keeps_the_id_stream() {
        for (spawned, k) in [(10, 1000), (10, 3), (400, 3), (700, 2), (256, 1)] {
            let mut world = churned(spawned, k);
            let mut twin = churned(spawned, k);
            let state = AllocatorState::read(&mut world);
            assert!(state.local.len() <= LOCAL_FREE_CAPACITY);
            assert_eq!(
                next_ids(&mut world, 300),
                next_ids(&mut twin, 300),
                "{spawned} spawned, every {k}th despawned: {state:?}"
            );
        }
    }

    /// Fails if `read` mistakes the local list for the shared stack: after 700 spawns with every
    /// second despawned, 350 ids were freed, so 128 * 2 of them were flushed and 94 wait locally
    /// (a new world already holds one resource entity, at index 0).
    #[test]
    fn reading_splits_the_shared_stack_from_the_local_list() {
        let mut world = churned(700, 2);
        let state = AllocatorState::read(&mut world);
        assert_eq!(state.fresh_cursor, 701);
        assert_eq!(state.shared.len(), 256);
        assert_eq!(state.local.len(), 94);
        assert_eq!(state.shared[0].index_u32(), 1);
        assert_eq!(state.local[93].index_u32(), 699);
    }
}

//! Seating a session's players: which entity each player's input drives.
//!
//! In a multiplayer session (`PlayerInputs` holds its players) every player handle must drive an
//! entity, marked with a [`PlayerSlot`]. [`seat_players`] (a startup system) does it for games
//! built on the engine's platformer hero: a game that seats its players itself keeps its seats;
//! otherwise the scene's one `PlatformerController` entity without a slot becomes player 0, and a
//! copy of it (its transform 1.5 m further along X per handle, its body, collider, layers, locks
//! and controller) is spawned for each other player, in handle order, so the copies' `SimId`s are
//! the same in every run. [`unseated_players`] lists the handles that drive nothing, which a
//! session refuses to start with. Outside a session nothing is seated. This module must never
//! read input.

use bevy::math::Vec3;
use bevy::prelude::{Commands, Entity, Name, Query, Res, Transform, Without, World};

use super::PlatformerController;
use crate::physics::{Collider, CollisionLayers, LockedAxes, RigidBody};
use crate::runtime::{PlayerInputs, PlayerSlot};

/// How far apart along X the copies of the hero start.
const SEAT_SPACING: f32 = 1.5;

/// The hero entities a game has not seated, with what a copy takes from them.
type Heroes<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static Transform,
        &'static RigidBody,
        &'static Collider,
        &'static PlatformerController,
        Option<&'static CollisionLayers>,
        Option<&'static LockedAxes>,
    ),
    Without<PlayerSlot>,
>;

/// Seats every player of a session on the scene's platformer hero and copies of it (see the
/// module docs). Does nothing outside a session, when the game seated every player itself, or
/// when the scene has no single unseated hero to copy.
pub fn seat_players(
    mut commands: Commands,
    session: Option<Res<PlayerInputs>>,
    seated: Query<&PlayerSlot>,
    heroes: Heroes,
) {
    let Some(session) = session.filter(|inputs| inputs.in_session()) else {
        return;
    };
    let free = free_handles(session.players.len(), seated.iter());
    if free.is_empty() {
        return;
    }
    let Ok((hero, transform, body, collider, controller, layers, locks)) = heroes.single() else {
        return;
    };
    for (k, &handle) in free.iter().enumerate() {
        if k == 0 && handle == 0 {
            commands.entity(hero).insert(PlayerSlot::new(0));
            continue;
        }
        let offset = Vec3::X * (SEAT_SPACING * handle as f32);
        let mut copy = commands.spawn((
            Name::new(format!("Player {}", handle + 1)),
            transform.with_translation(transform.translation + offset),
            *body,
            *collider,
            *controller,
            PlayerSlot::new(handle),
        ));
        if let Some(layers) = layers {
            copy.insert(*layers);
        }
        if let Some(locks) = locks {
            copy.insert(*locks);
        }
    }
}

/// The player handles of the session that no entity's [`PlayerSlot`] holds: players whose input
/// would drive nothing. Empty outside a session.
pub fn unseated_players(world: &mut World) -> Vec<usize> {
    let players = world
        .get_resource::<PlayerInputs>()
        .map_or(0, |inputs| inputs.players.len());
    let mut slots = world.query::<&PlayerSlot>();
    free_handles(players, slots.iter(world))
}

/// The handles below `players` that none of `slots` holds, in order.
fn free_handles<'a>(players: usize, slots: impl Iterator<Item = &'a PlayerSlot>) -> Vec<usize> {
    let taken: Vec<usize> = slots.map(|slot| slot.handle).collect();
    (0..players)
        .filter(|handle| !taken.contains(handle))
        .collect()
}

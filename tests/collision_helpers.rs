//! Collision helpers: what a body touches, and started or stopped touching, seen from that body.

use bevy::prelude::*;
use rusting_engine::physics::{CollisionEvent, CollisionEventKind, CollisionEvents, ContactReport};
use rusting_engine::state::SimId;

#[path = "support/starter.rs"]
mod support;

fn contact(a: u64, b: u64, normal: Vec3) -> ContactReport {
    ContactReport {
        a: SimId(a),
        b: SimId(b),
        entity_a: Entity::from_raw_u32(a as u32 + 100).unwrap(),
        entity_b: Entity::from_raw_u32(b as u32 + 100).unwrap(),
        normal,
    }
}

fn event(a: u64, b: u64, kind: CollisionEventKind, id: u64) -> CollisionEvent {
    CollisionEvent {
        tick: 7,
        a: SimId(a),
        b: SimId(b),
        entity_a: Entity::from_raw_u32(a as u32 + 100).unwrap(),
        entity_b: Entity::from_raw_u32(b as u32 + 100).unwrap(),
        kind,
        id,
    }
}

/// Seen from body 5, the tick's contacts and events list the other bodies in simulation-id order
/// whichever side of each pair body 5 is on, with the contact normal turned to point from body 5
/// to the other; `involves` and `other` answer for either side; and on the starter, the player
/// resting on the ground touches it with a normal pointing down. Fails if the helpers leave
/// normals as `a` saw them, or miss the pairs in which the body is `b`.
#[test]
fn collision_helpers_list_contacts_in_a_fixed_order() {
    let up = Vec3::Y;
    let events = CollisionEvents {
        events: vec![
            event(2, 5, CollisionEventKind::Ended, 1),
            event(3, 5, CollisionEventKind::Started, 2),
            event(5, 9, CollisionEventKind::Started, 3),
        ],
        contacts: vec![
            contact(1, 5, up),
            contact(3, 5, up),
            contact(5, 7, up),
            contact(5, 9, -up),
            contact(6, 8, up),
        ],
    };
    let body = SimId(5);
    let touching: Vec<(u64, Vec3)> = events
        .touching(body)
        .iter()
        .map(|t| (t.other.0, t.normal))
        .collect();
    assert_eq!(touching, [(1, -up), (3, -up), (7, up), (9, -up)]);
    let started: Vec<(u64, Vec3)> = events
        .started_touching(body)
        .iter()
        .map(|t| (t.other.0, t.normal))
        .collect();
    assert_eq!(started, [(3, -up), (9, -up)]);
    let stopped: Vec<(u64, Vec3)> = events
        .stopped_touching(body)
        .iter()
        .map(|t| (t.other.0, t.normal))
        .collect();
    assert_eq!(stopped, [(2, Vec3::ZERO)]);
    assert_eq!(events.touching(SimId(4)), []);
    let e = &events.events[1];
    assert!(e.involves(SimId(3)) && e.involves(SimId(5)) && !e.involves(SimId(9)));
    assert_eq!(e.other(SimId(3)), Some(SimId(5)));
    assert_eq!(e.other(SimId(5)), Some(SimId(3)));
    assert_eq!(e.other(SimId(9)), None);
    assert_eq!(e.other_entity(SimId(5)), Some(e.entity_a));

    let mut app = support::starter_app();
    let step = app.fixed_step();
    for _ in 0..60 {
        app.update(step);
    }
    let world = app.world_mut();
    let mut named = world.query::<(&Name, &SimId)>();
    let mut id = |name: &str| {
        named
            .iter(world)
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, id)| *id)
            .unwrap()
    };
    let (player, ground) = (id("Player"), id("Ground"));
    let events = world.resource::<CollisionEvents>();
    let on = events.touching(player);
    let floor = on
        .iter()
        .find(|t| t.other == ground)
        .expect("the player stands on the ground");
    assert!(floor.normal.y < -0.9, "{floor:?}");
}

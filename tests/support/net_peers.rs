//! Peers of a multiplayer session for the tests: a game whose balls are driven by their players'
//! inputs, two peers over lossy loopback links, and a loop that plays them in real time.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::net::{
    LinkConditions, LinkWatch, LossySocket, NetEvent, NetSession, SessionSettings, prepare_app,
};
use rusting_engine::physics::{Collider, RigidBody};
use rusting_engine::prelude::SimState;
use rusting_engine::runtime::{PlayerInputs, PlayerTickInput, RuntimeSettings, SimSet};

/// Which player's input drives a body (simulation state).
#[derive(Component, Clone, Copy, Debug, PartialEq, SimState)]
pub struct Seat(pub usize);

/// Sets each seated body's horizontal velocity from its player's first two axes, 3 m/s at full
/// tilt; the first action bit makes it hop.
pub fn drive(inputs: Res<PlayerInputs>, mut bodies: Query<(&Seat, &mut RigidBody)>) {
    for (seat, mut body) in &mut bodies {
        let input = inputs.of(seat.0);
        let axis = |k: usize| f32::from(input.axes[k]) / 32767.0 * 3.0;
        let hop = if input.actions & 1 != 0 && body.linear_velocity.y.abs() < 0.01 {
            4.0
        } else {
            body.linear_velocity.y
        };
        body.linear_velocity = Vec3::new(axis(0), hop, axis(1));
    }
}

/// A ground and a ball per player, each driven by its player's input.
pub fn game_app(players: usize) -> App {
    game_app_with(players, |_| {})
}

/// [`game_app`] with more of the game added by `extra` before its setup.
pub fn game_app_with(players: usize, extra: impl FnOnce(&mut App)) -> App {
    let mut app = App::new(RuntimeSettings {
        fixed_rate_hz: 60.0,
        seed: 5,
        ..default()
    });
    prepare_app(&mut app, players);
    app.register_sim_component::<Seat>();
    app.add_systems(FixedUpdate, drive.before(SimSet::Physics));
    let world = app.world_mut();
    world.spawn((
        Transform::default(),
        Collider::half_space(Vec3::Y),
        Name::new("Ground"),
    ));
    for handle in 0..players {
        world.spawn((
            Transform::from_xyz(handle as f32 * 2.0 - 1.0, 0.5, 0.0),
            RigidBody::dynamic(1.0),
            Collider::sphere(0.5),
            Seat(handle),
            Name::new(format!("Player {handle}")),
        ));
    }
    extra(&mut app);
    app.setup().unwrap();
    app
}

/// Player `handle`'s scripted input on `tick`: it changes every 5 to 16 ticks, so a prediction
/// that repeats the last input is often wrong and the peers roll back.
pub fn scripted(handle: usize, tick: u64) -> PlayerTickInput {
    let phase = tick / (5 + (handle as u64 * 7 + tick / 40) % 12);
    let mix = phase
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(handle as u64 * 0x1234_5678);
    let mix = mix ^ (mix >> 29);
    let axis = |bits: u64| ((bits % 65535) as i32 - 32767) as i16;
    PlayerTickInput {
        actions: u32::from(mix.is_multiple_of(7)),
        axes: {
            let mut axes = [0; rusting_engine::runtime::MAX_SESSION_AXES];
            axes[0] = axis(mix >> 8);
            axes[1] = axis(mix >> 24);
            axes
        },
        look: [0, 0],
    }
}

/// One peer: its app, session, handle and link.
pub struct Peer {
    pub app: App,
    pub session: NetSession,
    pub handle: usize,
    pub link: LinkWatch,
}

/// Two peers on loopback links with `conditions` (different seeds), with the given prediction
/// window (0 is lockstep) and checksum interval.
pub fn peers(conditions: LinkConditions, max_prediction: usize, desync_interval: u32) -> [Peer; 2] {
    peers_with(
        conditions,
        max_prediction,
        desync_interval,
        [game_app(2), game_app(2)],
    )
}

/// [`peers`] with the given apps.
pub fn peers_with(
    conditions: LinkConditions,
    max_prediction: usize,
    desync_interval: u32,
    apps: [App; 2],
) -> [Peer; 2] {
    peers_delayed(conditions, max_prediction, desync_interval, 10, apps)
}

/// [`peers_with`] whose outside entries enter `outside_delay` ticks after their announcement.
pub fn peers_delayed(
    conditions: LinkConditions,
    max_prediction: usize,
    desync_interval: u32,
    outside_delay: usize,
    apps: [App; 2],
) -> [Peer; 2] {
    let links = [0, 1].map(|k| {
        LossySocket::bind_loopback(LinkConditions {
            seed: conditions.seed + k,
            ..conditions
        })
        .unwrap()
    });
    let addresses = links
        .each_ref()
        .map(|link| rusting_engine::net::Datagrams::local_addr(link).unwrap());
    let mut apps = apps.map(Some);
    let mut k = 0;
    links.map(|link| {
        let handle = k;
        k += 1;
        let settings = SessionSettings {
            players: 2,
            local: vec![handle],
            remote: vec![(1 - handle, addresses[1 - handle])],
            input_delay: 2,
            max_prediction,
            desync_interval,
            refusal_limit: rusting_engine::net::MISBEHAVIOUR_LIMIT,
            flood_limit: rusting_engine::net::FLOOD_LIMIT,
            outside_delay,
        };
        let watch = link.watch();
        Peer {
            app: apps[handle].take().unwrap(),
            session: NetSession::start(&settings, link).unwrap(),
            handle,
            link: watch,
        }
    })
}

/// Runs both peers one frame each every 1/60 s until both have confirmed `ticks` ticks (or 60 s
/// pass); returns the events each saw.
pub fn play(peers: &mut [Peer; 2], ticks: u64) -> [Vec<NetEvent>; 2] {
    play_with(peers, ticks, |_| {})
}

/// [`play`], calling `each_frame` on every peer before its session advances.
pub fn play_with(
    peers: &mut [Peer; 2],
    ticks: u64,
    mut each_frame: impl FnMut(&mut Peer),
) -> [Vec<NetEvent>; 2] {
    let start = Instant::now();
    let frame = Duration::from_secs_f64(1.0 / 60.0);
    let mut events = [Vec::new(), Vec::new()];
    let mut next = Instant::now();
    while peers
        .iter()
        .any(|peer| (peer.session.confirmed_hashes().len() as u64) < ticks)
    {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the peers confirmed only {} and {} ticks in 60 s",
            peers[0].session.confirmed_hashes().len(),
            peers[1].session.confirmed_hashes().len()
        );
        for (peer, seen) in peers.iter_mut().zip(&mut events) {
            peer.session.poll();
            each_frame(peer);
            let input = scripted(peer.handle, peer.app.ticks());
            peer.session
                .advance(&mut peer.app, &[(peer.handle, input)])
                .unwrap();
            seen.extend(peer.session.take_events());
        }
        next += frame;
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    events
}

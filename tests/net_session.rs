//! Two peers of a rollback session over real UDP sockets on the loopback interface, through a
//! lossy link (latency, jitter, loss), in one process. Feature `net`.

use std::time::{Duration, Instant};

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::net::{
    DesyncReport, LinkConditions, LinkWatch, NetError, NetEvent, NetSession, SessionSettings,
};
use rusting_engine::physics::RigidBody;
use rusting_engine::runtime::{PlayerTickInput, SimSet};

#[path = "support/net_peers.rs"]
mod net_peers;
use net_peers::{Peer, Seat, drive, game_app, peers, peers_with, play, scripted};

/// Speeds every seated ball up by a little more each time it runs, counting its runs in a `Local`:
/// state outside the snapshot.
fn drift(mut runs: Local<u32>, mut bodies: Query<&mut RigidBody, With<Seat>>) {
    *runs += 1;
    for mut body in &mut bodies {
        body.linear_velocity.x += *runs as f32 * 1e-3;
    }
}

/// Both players' scripted inputs for the app's next tick.
fn both(app: &App) -> [(usize, PlayerTickInput); 2] {
    [0, 1].map(|handle| (handle, scripted(handle, app.ticks())))
}

/// The same API's local mode: both players on this machine, every tick rolled back 4 ticks and
/// re-simulated with its checksum compared. A game whose state is all in the snapshot runs 120
/// ticks, and its confirmed record plays back to the same hashes in a fresh app; a system that
/// keeps a count outside the snapshot and lets it steer the balls is caught as
/// `NetError::SyncTest`. Fails when the local mode ignores the crate's load requests (the
/// session's ticks then run ahead of the crate's frames).
#[test]
fn the_local_mode_is_a_synctest() {
    let mut app = game_app(2);
    let mut session = NetSession::synctest(2, 4).unwrap();
    for _ in 0..120 {
        let inputs = both(&app);
        session.advance(&mut app, &inputs).unwrap();
    }
    assert_eq!(app.ticks(), 120);
    assert_eq!(session.confirmed_hashes().len(), 120);
    assert!(
        session.rollbacks() > 100,
        "{} rollbacks",
        session.rollbacks()
    );
    let mut fresh = game_app(2);
    assert_eq!(session.replay().play(&mut fresh), Ok(120));

    let mut leaky = game_app(2);
    leaky.add_systems(FixedUpdate, drift.after(drive).before(SimSet::Physics));
    let mut session = NetSession::synctest(2, 4).unwrap();
    let error = (0..120).find_map(|_| {
        let inputs = both(&leaky);
        session.advance(&mut leaky, &inputs).err()
    });
    assert!(
        matches!(error, Some(NetError::SyncTest { tick, .. }) if tick < 10),
        "{error:?}"
    );
}

/// Pushes player 1's ball sideways on tick 37: a difference only the app that has this system
/// makes.
fn plant_difference(
    time: Res<rusting_engine::runtime::FrameTime>,
    mut bodies: Query<(&Seat, &mut RigidBody)>,
) {
    if time.fixed_tick == 37 {
        for (seat, mut body) in &mut bodies {
            if seat.0 == 1 {
                body.linear_velocity.x += 0.25;
            }
        }
    }
}

/// Two peers under 20 to 60 ms of latency, one of which pushes a ball on tick 37 that the other
/// does not: both report the first checked tick after it (40) and name the same entity,
/// component and field, each with its own value first. Fails when the session keeps no snapshot
/// of the checked ticks (the report then says the state is no longer held), or when a target
/// carries the entity's hashes without its fields (the report then names no field).
#[test]
fn a_desync_is_named_to_the_field() {
    let mut planted = game_app(2);
    planted.add_systems(
        FixedUpdate,
        plant_difference.after(drive).before(SimSet::Physics),
    );
    let mut peers = peers_with(
        LinkConditions {
            latency: Duration::from_millis(20),
            jitter: Duration::from_millis(40),
            loss: 0.05,
            seed: 40,
        },
        8,
        10,
        [game_app(2), planted],
    );
    let start = Instant::now();
    let frame = Duration::from_secs_f64(1.0 / 60.0);
    let mut reports: [Option<DesyncReport>; 2] = [None, None];
    while reports.iter().any(Option::is_none) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no desync report within 30 s: {reports:?}"
        );
        for (peer, report) in peers.iter_mut().zip(&mut reports) {
            peer.session.poll();
            let input = scripted(peer.handle, peer.app.ticks());
            peer.session
                .advance(&mut peer.app, &[(peer.handle, input)])
                .unwrap();
            for event in peer.session.take_events() {
                if let NetEvent::DesyncNamed(named) = event {
                    assert!(report.is_none(), "a second report: {named}");
                    *report = Some(named);
                }
            }
        }
        std::thread::sleep(frame);
    }
    let [Some(a), Some(b)] = reports else {
        unreachable!()
    };
    println!("peer 0: {a}\npeer 1: {b}");
    assert_eq!(a.unnamed, None, "{a}");
    assert_eq!((a.tick, b.tick), (40, 40));
    assert!(
        a.entity.as_deref().is_some_and(|e| e.contains("Player 1")),
        "{a}"
    );
    assert_eq!(
        (&a.sim_id, &a.entity, &a.component, &a.field),
        (&b.sim_id, &b.entity, &b.component, &b.field)
    );
    assert!(a.field.is_some(), "{a}");
    assert_eq!((&a.local, &a.remote), (&b.remote, &b.local));
    assert_ne!(a.local, a.remote);
}

/// Two peers over loopback UDP with 50 to 150 ms of latency each way (50 ms plus up to 100 ms of
/// jitter, so datagrams also arrive out of order) and 8% loss play 600 ticks of scripted input
/// with a prediction window of 8: every confirmed tick's hash is the same on both, both rolled
/// back, no desync is reported, every datagram that arrived was accepted, and the link really
/// dropped some. Fails when a rollback does not restore the snapshot in place (the peers part at
/// the first misprediction), or when the inputs of re-simulated ticks are not written into
/// `PlayerInputs`.
#[test]
fn peers_agree_on_every_confirmed_tick_under_latency_and_loss() {
    let mut peers = peers(
        LinkConditions {
            latency: Duration::from_millis(50),
            jitter: Duration::from_millis(100),
            loss: 0.08,
            seed: 21,
        },
        8,
        10,
    );
    let events = play(&mut peers, 600);
    let [a, b] = &peers;
    let first_difference = a.session.confirmed_hashes()[..600]
        .iter()
        .zip(&b.session.confirmed_hashes()[..600])
        .find(|(x, y)| x != y);
    assert_eq!(
        first_difference, None,
        "the peers' confirmed ticks differ, first at (tick, hash)"
    );
    assert_eq!(a.session.confirmed_hashes()[599].0, 600);
    for (peer, seen) in peers.iter().zip(&events) {
        assert!(
            peer.session.rollbacks() > 10,
            "peer {} rolled back only {} times",
            peer.handle,
            peer.session.rollbacks()
        );
        assert!(
            !seen
                .iter()
                .any(|event| matches!(event, NetEvent::Desync { .. })),
            "peer {} saw a desync: {seen:?}",
            peer.handle
        );
        let counts = peer.session.socket_counts();
        assert_eq!(counts.strangers, 0);
        assert!(
            counts.peers.values().all(|peer| peer.refused() == 0),
            "{counts:?}"
        );
        let link = peer.link.get();
        assert!(
            link.dropped * 20 > link.offered,
            "peer {}'s link dropped {} of {} datagrams",
            peer.handle,
            link.dropped,
            link.offered
        );
    }
    // The balls moved: the inputs reached the simulation.
    let world = peers[0].app.world_mut();
    let mut query = world.query::<(&Seat, &Transform)>();
    for (seat, transform) in query.iter(world) {
        let start = Vec2::new(seat.0 as f32 * 2.0 - 1.0, 0.0);
        assert!(
            transform.translation.xz().distance(start) > 0.5,
            "player {} stayed near its start: {}",
            seat.0,
            transform.translation
        );
    }
}

/// Lockstep (a prediction window of 0) over a link with 50 to 80 ms of latency (more than the
/// input delay hides) and 5% loss: 120 ticks confirmed with the same hashes on both peers and not
/// one rollback (every tick waits for every input). Fails when the session does not hand the
/// crate the window of 0 (the crate then predicts and asks for rollbacks).
#[test]
fn lockstep_peers_agree_without_rolling_back() {
    let mut peers = peers(
        LinkConditions {
            latency: Duration::from_millis(50),
            jitter: Duration::from_millis(30),
            loss: 0.05,
            seed: 7,
        },
        0,
        10,
    );
    play(&mut peers, 120);
    let [a, b] = &peers;
    assert_eq!(
        a.session.confirmed_hashes()[..120],
        b.session.confirmed_hashes()[..120]
    );
    assert_eq!((a.session.rollbacks(), b.session.rollbacks()), (0, 0));
}

/// Under 100 to 200 ms of latency both peers run up to 8 ticks ahead on predicted inputs, many of
/// them wrong; with checksums compared on every tick, no desync is ever reported, because only
/// confirmed ticks are compared, and every tick the session records as confirmed keeps its hash.
/// Fails when the session records a tick's hash before the tick is confirmed (a predicted hash
/// that a rollback later changes stays on the record, and the peers' records part).
#[test]
fn predicted_ticks_never_raise_a_desync() {
    let mut peers = peers(
        LinkConditions {
            latency: Duration::from_millis(100),
            jitter: Duration::from_millis(100),
            loss: 0.05,
            seed: 99,
        },
        8,
        1,
    );
    let events = play(&mut peers, 300);
    for (peer, seen) in peers.iter().zip(&events) {
        assert!(
            peer.session.rollbacks() > 10,
            "{}",
            peer.session.rollbacks()
        );
        assert!(
            !seen
                .iter()
                .any(|event| matches!(event, NetEvent::Desync { .. })),
            "peer {} saw a desync: {seen:?}",
            peer.handle
        );
    }
    let first_difference = peers[0].session.confirmed_hashes()[..300]
        .iter()
        .zip(&peers[1].session.confirmed_hashes()[..300])
        .find(|(x, y)| x != y);
    assert_eq!(
        first_difference, None,
        "the recorded confirmed ticks differ"
    );
}

/// A few random bits (xorshift64*), for the garbage peer.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn bytes(&mut self, length: usize) -> Vec<u8> {
        (0..length).map(|_| self.next() as u8).collect()
    }
}

/// One frame of garbage from `socket` to `to`: random datagrams of every length, datagrams that
/// start like the crate's messages, one too long, and every fifth frame a flood.
fn spray(socket: &std::net::UdpSocket, to: std::net::SocketAddr, noise: &mut Noise, frame: u64) {
    let send = |bytes: &[u8]| {
        let _ = socket.send_to(bytes, to);
    };
    for _ in 0..20 {
        let length = (noise.next() % 1400) as usize;
        send(&noise.bytes(length));
    }
    for _ in 0..20 {
        let length = (noise.next() % 80) as usize;
        let mut bytes = vec![0xf5, 0x52, 0x02, 0x00];
        bytes.extend(noise.bytes(length));
        send(&bytes);
    }
    send(&noise.bytes(1500));
    if frame.is_multiple_of(5) {
        for _ in 0..200 {
            send(&noise.bytes(40));
        }
    }
}

/// Three players; after 100 confirmed ticks the third stops playing and its address sends
/// garbage to the other two (random datagrams, ones that start like the crate's messages, ones
/// too long, floods). The two honest peers drop it with a reason within a few frames, never
/// stall (no frame takes 2 s, while one normally takes a few milliseconds), and play on to 300
/// confirmed ticks with the same hashes. Fails
/// when the session does not drop a peer for the garbage it sends (the crate's disconnect timeout
/// then drops it only after about 110 frames, for going quiet).
#[test]
fn a_peer_sending_garbage_cannot_crash_or_stall_the_session() {
    let sockets: Vec<std::net::UdpSocket> = (0..3)
        .map(|_| rusting_engine::net::bind_udp("127.0.0.1:0".parse().unwrap()).unwrap())
        .collect();
    let addresses: Vec<_> = sockets.iter().map(|s| s.local_addr().unwrap()).collect();
    let garbage_socket = sockets[2].try_clone().unwrap();
    let mut peers: Vec<Peer> = sockets
        .into_iter()
        .enumerate()
        .map(|(handle, socket)| {
            let settings = SessionSettings {
                players: 3,
                local: vec![handle],
                remote: (0..3)
                    .filter(|&other| other != handle)
                    .map(|other| (other, addresses[other]))
                    .collect(),
                input_delay: 2,
                max_prediction: 8,
                desync_interval: 10,
                refusal_limit: rusting_engine::net::MISBEHAVIOUR_LIMIT,
                flood_limit: rusting_engine::net::FLOOD_LIMIT,
                outside_delay: 10,
            };
            Peer {
                app: game_app(3),
                session: NetSession::start(&settings, socket).unwrap(),
                handle,
                link: LinkWatch::default(),
            }
        })
        .collect();
    let mut events: Vec<Vec<NetEvent>> = vec![Vec::new(); 3];
    let frame = Duration::from_secs_f64(1.0 / 60.0);
    let start = Instant::now();
    let mut noise = Noise(0x5eed);
    let mut garbage_frames = 0u64;
    let mut dropped_after = [None, None];
    loop {
        let honest_done = peers[..2]
            .iter()
            .all(|peer| peer.session.confirmed_hashes().len() >= 300);
        if honest_done {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the honest peers confirmed only {} and {} ticks in 60 s; events {:?}",
            peers[0].session.confirmed_hashes().len(),
            peers[1].session.confirmed_hashes().len(),
            &events[..2]
        );
        let garbage = peers
            .iter()
            .all(|peer| peer.session.confirmed_hashes().len() >= 100)
            || garbage_frames > 0;
        let playing = if garbage { 2 } else { 3 };
        for (k, peer) in peers[..playing].iter_mut().enumerate() {
            let began = Instant::now();
            peer.session.poll();
            let input = scripted(peer.handle, peer.app.ticks());
            peer.session
                .advance(&mut peer.app, &[(peer.handle, input)])
                .unwrap();
            assert!(
                began.elapsed() < Duration::from_secs(2),
                "peer {k}'s frame took {:?}",
                began.elapsed()
            );
            events[k].extend(peer.session.take_events());
        }
        if garbage {
            garbage_frames += 1;
            for (k, to) in addresses[..2].iter().enumerate() {
                spray(&garbage_socket, *to, &mut noise, garbage_frames);
                let dropped = events[k]
                    .iter()
                    .any(|event| matches!(event, NetEvent::PeerDropped { handle: 2, .. }));
                if dropped && dropped_after[k].is_none() {
                    dropped_after[k] = Some(garbage_frames);
                }
            }
        }
        std::thread::sleep(frame);
    }
    for (k, after) in dropped_after.iter().enumerate() {
        let after = after.unwrap_or_else(|| panic!("peer {k} never dropped the garbage peer"));
        assert!(
            after <= 5,
            "peer {k} dropped the garbage peer after {after} frames"
        );
        let reason = events[k]
            .iter()
            .find_map(|event| match event {
                NetEvent::PeerDropped { reason, .. } => Some(reason.clone()),
                _ => None,
            })
            .unwrap();
        assert!(reason.contains("datagrams"), "{reason}");
        let counts = peers[k].session.socket_counts();
        assert!(counts.peers[&addresses[2]].refused() >= 32, "{counts:?}");
    }
    let first_difference = peers[0].session.confirmed_hashes()[..300]
        .iter()
        .zip(&peers[1].session.confirmed_hashes()[..300])
        .find(|(x, y)| x != y);
    assert_eq!(
        first_difference, None,
        "the honest peers' confirmed ticks differ"
    );
}

/// Both peers of a session under latency and loss record the same replay of the 240 confirmed
/// ticks (every player's input and the hash after each tick); written to a file and read back,
/// it plays back in a fresh app without the network to the same hashes. A replay with one input
/// changed diverges at that tick, and broken files are refused naming the file and the place.
/// Fails when the session records the inputs a tick first ran with rather than those it was
/// confirmed with (a predicted input stays in one peer's replay, and the replays differ).
#[test]
fn a_session_replay_plays_back_without_the_network() {
    use rusting_engine::net::{SessionReplay, SessionReplayError};
    let mut peers = peers(
        LinkConditions {
            latency: Duration::from_millis(40),
            jitter: Duration::from_millis(60),
            loss: 0.05,
            seed: 3,
        },
        8,
        10,
    );
    play(&mut peers, 240);
    assert!(peers[0].session.rollbacks() > 0);
    let (a, b) = (peers[0].session.replay(), peers[1].session.replay());
    assert_eq!(
        a.ticks[..240],
        b.ticks[..240],
        "the peers recorded different replays"
    );

    let dir = std::env::temp_dir().join(format!("rusting-session-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("match.session.json");
    a.write(&path).unwrap();
    let read = SessionReplay::read(&path).unwrap();
    assert_eq!(&read, a);
    let mut app = game_app(2);
    assert_eq!(read.play(&mut app), Ok(a.ticks.len() as u64));
    assert_eq!(
        peers[0].session.confirmed_hashes()[..240],
        {
            let hashes = app.world().resource::<rusting_engine::state::StateHashes>();
            (1..=240u64)
                .map(|t| (t, hashes.get(t).unwrap()))
                .collect::<Vec<_>>()
        }[..],
        "playback's hashes"
    );

    // Played again in the same app: refused, a replay plays from tick 0.
    assert_eq!(
        read.play(&mut app),
        Err(SessionReplayError::NotAtStart {
            ticks_done: a.ticks.len() as u64
        })
    );

    // One input changed: playback stops at that tick.
    let mut tampered = read.clone();
    tampered.ticks[99].inputs[1].axes[0] ^= 0x0100;
    match tampered.play(&mut game_app(2)) {
        Err(SessionReplayError::Diverged { tick, .. }) => assert_eq!(tick, 100),
        other => panic!("expected a divergence at tick 100, got {other:?}"),
    }

    // Broken files: cut short, and a tick with one player's input.
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() / 2]).unwrap();
    let error = SessionReplay::read(&path).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}:1:", path.display())),
        "{error}"
    );
    let mut short = read.clone();
    short.ticks[4].inputs.pop();
    short.write(&path).unwrap();
    let error = SessionReplay::read(&path).unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("tick 5 has the inputs of 1 players, the session has 2"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[path = "support/starter.rs"]
mod starter;

/// The starter, prepared for a session of `players` and set up (its startup systems run).
fn starter_session_app(players: usize) -> App {
    let project =
        rusting_engine::game::project::Project::open(std::path::Path::new(starter::STARTER))
            .unwrap();
    let mut app = rusting_engine::game::build_app(&project).unwrap();
    app.add_plugins(starter::starter_game::StarterGame);
    rusting_engine::net::prepare_app(&mut app, players);
    app.setup().unwrap();
    app
}

/// The engine seats a session's players: in the starter (which seats nobody itself) the scene's
/// hero becomes player 0 and a copy with its body, collider, locks and controller is spawned for
/// each other player. A game whose input would drive nothing is refused before the session
/// starts: with no hero to seat, `rusting run --net`'s peer fails naming player 0; with player 0
/// seated by the game and no hero to copy, naming player 1. Fails if seating goes back to game
/// code (the starter then seats nobody) or if a session starts with a player driving nothing
/// (the peers would agree while that player's input moved nothing).
#[test]
fn a_session_where_a_player_drives_nothing_is_refused() {
    use rusting_engine::gameplay::unseated_players;
    use rusting_engine::physics::LockedAxes;
    use rusting_engine::runtime::PlayerSlot;

    let mut app = starter_session_app(3);
    assert_eq!(unseated_players(app.world_mut()), Vec::<usize>::new());
    let mut seats = app
        .world_mut()
        .query::<(&PlayerSlot, &Name, &Transform, &LockedAxes)>();
    let mut seated: Vec<(usize, String, f32)> = seats
        .iter(app.world())
        .map(|(slot, name, transform, locks)| {
            assert_eq!(*locks, LockedAxes::ROTATION);
            (slot.handle, name.to_string(), transform.translation.x)
        })
        .collect();
    seated.sort_by_key(|s| s.0);
    assert_eq!(
        seated,
        [
            (0, "Player".to_owned(), 0.0),
            (1, "Player 2".to_owned(), 1.5),
            (2, "Player 3".to_owned(), 3.0)
        ]
    );

    let project =
        rusting_engine::game::project::Project::open(std::path::Path::new(starter::STARTER))
            .unwrap();
    let run = rusting_engine::game::net_run::NetRun {
        peers: vec![
            "127.0.0.1:9".parse().unwrap(),
            "127.0.0.1:10".parse().unwrap(),
        ],
        player: 0,
        session_out: None,
    };
    let refused = |app: &mut App| {
        run.play(&project, app, 10, None, None)
            .expect_err("a player drives nothing")
            .to_string()
    };
    // No hero: nobody is seated.
    let mut bare = rusting_engine::App::default();
    rusting_engine::net::prepare_app(&mut bare, 2);
    bare.setup().unwrap();
    assert_eq!(unseated_players(bare.world_mut()), [0, 1]);
    let message = refused(&mut bare);
    assert!(
        message.contains("player 0's input would drive nothing"),
        "{message}"
    );
    // Player 0 seated by the game, nothing to copy for player 1.
    let mut half = rusting_engine::App::default();
    rusting_engine::net::prepare_app(&mut half, 2);
    half.world_mut()
        .spawn((Transform::default(), PlayerSlot::new(0)));
    half.setup().unwrap();
    let message = refused(&mut half);
    assert!(
        message.contains("player 1's input would drive nothing")
            && message.contains("PlayerSlot::new(1)"),
        "{message}"
    );
}

/// The player a test game's observer watches.
#[derive(Resource)]
struct Watched(usize);

/// What the observer saw of its player each tick: the tick, the action flags (`jump` and `fire`
/// pressed, just pressed, just released), and the bits of `move_x`, `aim` and the look.
#[derive(Resource, Clone, Debug, Default, PartialEq, rusting_engine::prelude::SimState)]
struct Observed {
    ticks: Vec<Observation>,
}

/// One tick of [`Observed`].
#[derive(Clone, Copy, Debug, Default, PartialEq, rusting_engine::prelude::SimState)]
struct Observation {
    tick: u64,
    flags: u32,
    move_x: u32,
    aim: u32,
    look: u64,
}

/// Writes what `PlayerActions` says of the watched player this tick.
fn observe(
    actions: rusting_engine::runtime::PlayerActions,
    watched: Res<Watched>,
    time: Res<rusting_engine::runtime::FrameTime>,
    mut observed: ResMut<Observed>,
) {
    let player = actions.of(watched.0);
    let mut flags = 0;
    for (k, action) in ["jump", "fire"].into_iter().enumerate() {
        let bits = [
            player.pressed(action),
            player.just_pressed(action),
            player.just_released(action),
        ];
        for (b, on) in bits.into_iter().enumerate() {
            flags |= u32::from(on) << (3 * k + b);
        }
    }
    let look = player.look();
    observed.ticks.push(Observation {
        tick: time.fixed_tick,
        flags,
        move_x: player.axis("move_x").to_bits(),
        aim: player.axis("aim").to_bits(),
        look: u64::from(look.x.to_bits()) << 32 | u64::from(look.y.to_bits()),
    });
}

/// A game whose observer watches player `watched`, with `jump` on Space or KeyW, `fire` on KeyF,
/// `move_x` on A and D, and `aim` analog only; prepared for a session of `players` when given.
fn observer_app(watched: usize, players: Option<usize>) -> App {
    use bevy::input::keyboard::KeyCode;
    use rusting_engine::runtime::{AxisBinding, InputBindings, RuntimeSettings};
    let mut app = App::new(RuntimeSettings {
        seed: 11,
        ..default()
    });
    if let Some(players) = players {
        rusting_engine::net::prepare_app(&mut app, players);
    }
    {
        let world = app.world_mut();
        let mut bindings = world.resource_mut::<InputBindings>();
        bindings
            .actions
            .insert("jump".into(), [KeyCode::Space, KeyCode::KeyW].into());
        bindings
            .actions
            .insert("fire".into(), [KeyCode::KeyF].into());
        bindings.axes.insert(
            "move_x".into(),
            AxisBinding {
                negative: [KeyCode::KeyA].into(),
                positive: [KeyCode::KeyD].into(),
            },
        );
        bindings.axes.insert("aim".into(), AxisBinding::default());
        world.insert_resource(Watched(watched));
        world.insert_resource(Observed::default());
    }
    app.register_sim_resource::<Observed>();
    app.add_systems(
        FixedUpdate,
        observe.after(SimSet::Input).before(SimSet::Physics),
    );
    app.setup().unwrap();
    app
}

/// Frame `k` of a minute of play: jump held on Space, then on KeyW too, then on KeyW alone (one
/// press, one release); fire tapped twice; an analog aim; D with a negative analog `move_x`; look
/// movement.
fn played_frame(k: u32) -> rusting_engine::runtime::RuntimeInput {
    use bevy::input::keyboard::KeyCode;
    let mut input = rusting_engine::runtime::RuntimeInput::default();
    if (5..10).contains(&k) {
        input.press(KeyCode::Space);
    }
    if (8..14).contains(&k) {
        input.press(KeyCode::KeyW);
    }
    if matches!(k, 20 | 21 | 24) {
        input.press(KeyCode::KeyF);
    }
    if (30..40).contains(&k) {
        input.set_axis("aim", 0.3 + k as f32 * 0.01);
    }
    if (40..50).contains(&k) {
        input.press(KeyCode::KeyD);
    }
    if (45..55).contains(&k) {
        input.set_axis("move_x", -0.4);
    }
    if k % 7 == 3 {
        input.look_delta = Vec2::new(1.5 + k as f32, -2.25);
    }
    input
}

/// One game system reads a player's input through `PlayerActions` and sees the same thing, bit for
/// bit, offline (player 0 on the local keys), in a synctest (as player 1, every tick rolled back
/// 4 ticks and run again) and in that session's replay: presses, holds across two keys bound to one
/// action, taps, releases, analog axes and look. The session's inputs are what a peer sends: the
/// fixed form captured from each tick's keys. Offline axes read in the session's steps, as the
/// other peers see them. Fails if a session's `just_pressed` compares with anything but the tick
/// before as a rollback restores it: with `PlayerInputs::advance` keeping no tick before, every
/// held tick reads as a new press and no release is seen (tick 6 differs).
#[test]
fn actions_read_the_same_offline_and_in_a_session() {
    use rusting_engine::runtime::{InputBindings, PlayerTickInput, TickInput};
    const FRAMES: u32 = 60;
    let mut offline = observer_app(0, None);
    let mut sent = Vec::new();
    for k in 0..FRAMES {
        let frame = played_frame(k);
        offline.set_input(frame.clone());
        let step = offline.fixed_step();
        offline.update(step);
        let world = offline.world();
        sent.push(PlayerTickInput::capture(
            world.resource::<InputBindings>(),
            world.resource::<TickInput>(),
            &frame,
        ));
    }
    let seen = offline.world().resource::<Observed>().clone();
    assert_eq!(seen.ticks.len(), FRAMES as usize);
    let flags: Vec<u32> = seen.ticks.iter().map(|t| t.flags).collect();
    // Jump: pressed 5..14, just pressed at 5 only, just released at 14 only.
    assert_eq!(flags[5] & 0b111, 0b011);
    assert_eq!(flags[9] & 0b111, 0b001);
    assert_eq!(flags[10] & 0b111, 0b001, "the second key holds the action");
    assert_eq!(flags[14] & 0b111, 0b100);
    // Fire: tapped at 20-21 and 24.
    assert_eq!(flags[20] >> 3, 0b011);
    assert_eq!(flags[22] >> 3, 0b100);
    assert_eq!(flags[24] >> 3, 0b011);
    // D and an analog -0.4, in the session's steps.
    let quantized = |value: f32| f32::from((value * 32767.0) as i16) / 32767.0;
    assert_eq!(seen.ticks[47].move_x, quantized(-0.4 + 1.0).to_bits());
    assert_ne!(quantized(-0.4 + 1.0), -0.4 + 1.0);

    let mut session_app = observer_app(1, Some(2));
    let mut session = rusting_engine::net::NetSession::synctest(2, 4).unwrap();
    for input in &sent {
        let other = PlayerTickInput {
            actions: 0b11,
            ..PlayerTickInput::default()
        };
        session
            .advance(&mut session_app, &[(0, other), (1, *input)])
            .unwrap();
    }
    assert!(
        session.rollbacks() > 40,
        "{} rollbacks",
        session.rollbacks()
    );
    assert_eq!(
        first_difference(session_app.world().resource::<Observed>(), &seen),
        None,
        "a synctest's player 1 against the local player (session, offline)"
    );

    let mut replayed = observer_app(1, Some(2));
    assert_eq!(session.replay().play(&mut replayed), Ok(u64::from(FRAMES)));
    assert_eq!(
        first_difference(replayed.world().resource::<Observed>(), &seen),
        None,
        "the session replay against the local player (replay, offline)"
    );
}

/// The first tick at which two observers saw different things, or one saw more ticks.
fn first_difference(
    a: &Observed,
    b: &Observed,
) -> Option<(Option<Observation>, Option<Observation>)> {
    (0..a.ticks.len().max(b.ticks.len()))
        .map(|k| (a.ticks.get(k).copied(), b.ticks.get(k).copied()))
        .find(|(x, y)| x != y)
}

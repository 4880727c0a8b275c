//! Joints in a game: a drawbridge that a fixed system raises with its hinge's motor, a chain of
//! links with a lantern at its end, a crate on a rope that snaps under a falling load, and a
//! bracket welded to a post from a fixed system partway through the run, before a ball on a rope
//! swings into it.
//!
//! Usage: `cargo run --example joints -- [ticks]` (default 600). Runs headless and prints where
//! things ended up, the tick the rope snapped on and the final state hash; the same run prints the
//! same lines on every machine. `tests/joints_example.rs` runs it in the engine's tests.

use std::process::ExitCode;

use bevy::prelude::*;
use rusting_engine::App;
use rusting_engine::physics::JointEvents;
use rusting_engine::prelude::*;
use rusting_engine::state::StateHashes;

/// What the run saw, for printing and for the tests.
#[derive(Resource, Clone, Debug, Default, PartialEq, SimState)]
pub struct Log {
    /// The tick the rope snapped on.
    pub snapped: Option<u64>,
    /// Whether the bracket has been welded on.
    pub welded: bool,
}

/// The drawbridge's hinge, for the system that raises it.
#[derive(Component)]
struct Drawbridge;

/// The bracket and the post it gets welded to.
#[derive(Resource, Clone, Copy)]
struct Bracket {
    bracket: SimId,
    post: SimId,
}

/// The tick the drawbridge starts to rise.
const RAISE_AT: u64 = 120;
/// The tick the bracket is welded on.
const WELD_AT: u64 = 30;
/// How far the drawbridge rises (rad).
pub const RAISED: f32 = 1.2;

/// Spawns a dynamic body and returns its simulation id.
fn body(world: &mut World, at: Transform, collider: Collider, mass: f32) -> SimId {
    let entity = world.spawn((at, collider, RigidBody::dynamic(mass))).id();
    *world.get::<SimId>(entity).unwrap()
}

/// A joint's frames that turn its X axis onto the world's Z (hinges across the bridge).
fn across(mut joint: Joint) -> Joint {
    let onto_z = Quat::from_rotation_y(-std::f32::consts::FRAC_PI_2);
    joint.frame_a.rotation = onto_z;
    joint.frame_b.rotation = onto_z;
    joint
}

/// Raises the drawbridge: from `RAISE_AT` on, its motor's target is `RAISED`. A motor target is
/// simulation state like any other, changed on a known tick.
fn raise(time: Res<FrameTime>, mut hinges: Query<&mut Joint, With<Drawbridge>>) {
    if time.fixed_tick != RAISE_AT {
        return;
    }
    for mut hinge in &mut hinges {
        if let Some(Motor::Position { target, .. }) = hinge.motor_mut() {
            *target = RAISED;
        }
    }
}

/// Welds the bracket to its post where it lies on `WELD_AT`: joints are added from fixed systems
/// like any entity, and `Joint::placed` takes the frames from where the bodies stand.
fn weld(
    time: Res<FrameTime>,
    bracket: Res<Bracket>,
    bodies: Query<(&SimId, &Transform)>,
    mut log: ResMut<Log>,
    mut commands: Commands,
) {
    if time.fixed_tick != WELD_AT {
        return;
    }
    let find = |id: SimId| bodies.iter().find(|(s, _)| **s == id).map(|(_, t)| *t);
    if let (Some(post), Some(piece)) = (find(bracket.post), find(bracket.bracket)) {
        let at = piece.translation;
        commands.spawn(Joint::fixed(Some(bracket.post), bracket.bracket).placed(
            Some(&post),
            &piece,
            at,
            Vec3::X,
        ));
        log.welded = true;
    }
}

/// Notes the tick the rope snaps on, from the joint events.
fn watch(time: Res<FrameTime>, events: Res<JointEvents>, mut log: ResMut<Log>) {
    if !events.broke.is_empty() && log.snapped.is_none() {
        log.snapped = Some(time.fixed_tick);
    }
}

/// The playground, set up and ready to tick.
pub fn build() -> App {
    let mut app = App::default();
    app.world_mut().insert_resource(Log::default());
    app.register_sim_resource::<Log>();
    app.add_systems(
        FixedUpdate,
        (raise.before(SimSet::Physics), weld.before(SimSet::Physics)),
    );
    app.add_systems(FixedUpdate, watch.after(SimSet::Physics));
    let world = app.world_mut();
    world.spawn((Transform::default(), Collider::half_space(Vec3::Y)));

    // The drawbridge: a deck hinged at its near end, held level by its motor until raised.
    let deck = body(
        world,
        Transform::from_xyz(2.0, 1.0, 0.0),
        Collider::cuboid(Vec3::new(2.0, 0.1, 1.0)),
        50.0,
    );
    let motor = Motor::Position {
        target: 0.0,
        stiffness: 5.0,
        damping: 1.0,
        max_force: 5_000.0,
    };
    world.spawn((
        across(Joint::revolute(None, deck))
            .with_anchors(Vec3::new(0.0, 1.0, 0.0), Vec3::new(-2.0, 0.0, 0.0))
            .with_motor(motor)
            .with_limits(-0.1, 1.4),
        Drawbridge,
    ));

    // A chain of eight links under a beam, a lantern at its end.
    let mut above = None;
    let hook = Vec3::new(-4.0, 6.0, 0.0);
    for i in 0..8 {
        let link = body(
            world,
            Transform::from_translation(hook - Vec3::new(0.0, 0.25 + 0.5 * i as f32, 0.0)),
            Collider::capsule(0.17, 0.08),
            0.5,
        );
        let (anchor_a, anchor_b) = match above {
            None => (hook, Vec3::new(0.0, 0.25, 0.0)),
            Some(_) => (Vec3::new(0.0, -0.25, 0.0), Vec3::new(0.0, 0.25, 0.0)),
        };
        world.spawn(Joint::spherical(above, link).with_anchors(anchor_a, anchor_b));
        above = Some(link);
    }
    let lantern = body(
        world,
        Transform::from_translation(hook - Vec3::new(0.3, 4.25, 0.0)),
        Collider::sphere(0.25),
        2.0,
    );
    world.spawn(
        Joint::spherical(above, lantern).with_anchors(Vec3::new(0.0, -0.25, 0.0), Vec3::ZERO),
    );

    // A crate on a rope that holds its own weight, and a heavy ball dropped onto it.
    let crate_ = body(
        world,
        Transform::from_xyz(-8.0, 3.0, 0.0),
        Collider::cuboid(Vec3::splat(0.3)),
        5.0,
    );
    world.spawn(
        Joint::rope(None, crate_, 2.0)
            .with_anchors(Vec3::new(-8.0, 5.3, 0.0), Vec3::new(0.0, 0.3, 0.0))
            .breaking_at(Some(400.0), None),
    );
    body(
        world,
        Transform::from_xyz(-8.0, 8.0, 0.0),
        Collider::sphere(0.4),
        40.0,
    );

    // A post, and a bracket resting on it until it is welded on; a ball swung from a rope then
    // strikes the bracket, which stays put.
    let post = world
        .spawn((
            Transform::from_xyz(6.0, 1.0, 3.0),
            Collider::cuboid(Vec3::new(0.2, 1.0, 0.2)),
        ))
        .id();
    let post = *world.get::<SimId>(post).unwrap();
    let bracket = body(
        world,
        Transform::from_xyz(6.0, 2.1, 3.0),
        Collider::cuboid(Vec3::new(0.5, 0.1, 0.1)),
        1.0,
    );
    world.insert_resource(Bracket { bracket, post });
    let striker = body(
        world,
        Transform::from_xyz(9.0, 5.2, 3.0),
        Collider::sphere(0.2),
        3.0,
    );
    world.spawn(Joint::rope(None, striker, 3.0).with_anchors(Vec3::new(6.0, 5.2, 3.0), Vec3::ZERO));
    app
}

/// Runs the playground for `ticks` ticks and returns the app.
pub fn run(ticks: u64) -> App {
    let mut app = build();
    app.setup().expect("the playground sets up");
    let step = app.fixed_step();
    for _ in 0..ticks {
        app.update(step);
    }
    app
}

fn main() -> ExitCode {
    let ticks = match std::env::args().nth(1).map(|a| a.parse::<u64>()) {
        None => 600,
        Some(Ok(ticks)) => ticks,
        Some(Err(_)) => {
            eprintln!("usage: joints [ticks]");
            return ExitCode::from(2);
        }
    };
    let mut app = run(ticks);
    let log = app.world().resource::<Log>().clone();
    let hash = app
        .world()
        .resource::<StateHashes>()
        .cpu
        .back()
        .map_or(0, |h| h.1);
    let mut joints = app.world_mut().query::<&Joint>();
    let (held, broken) =
        joints.iter(app.world()).fold(
            (0, 0),
            |(h, b), j| if j.broken { (h, b + 1) } else { (h + 1, b) },
        );
    println!("after {ticks} ticks: {held} joints hold, {broken} broke");
    match log.snapped {
        Some(tick) => println!("the rope snapped on tick {tick}"),
        None => println!("the rope held"),
    }
    println!(
        "the bracket is {}",
        if log.welded { "welded on" } else { "loose" }
    );
    println!("state hash {hash:016x}");
    ExitCode::SUCCESS
}

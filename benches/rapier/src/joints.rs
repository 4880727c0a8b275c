//! The joint rows: Box2D's joint grid (100 x 100 balls, each hinged to its neighbours to the left
//! and above, seven of the top row held still) and a pile of 100 chains of 20 capsule links
//! falling onto the ground, each in both engines, rapier with its defaults and then with its
//! settings matched to ours (our contact settings, and its joints as soft as ours: 60 Hz,
//! damping ratio 2, where its default is a stiff 10^6 Hz).
//!
//! Joined bodies do not collide with each other in either engine (ours by default, rapier's
//! `contacts_enabled(false)`); the grid's balls collide with nothing, as in Box2D's benchmark.

use bevy::math::{Quat, Vec3};
use bevy::prelude::Transform;
use rapier3d::prelude as rp;
use rusting_engine::physics::{Collider, CollisionLayers, Joint, PhysicsSettings, RigidBody};

use super::{Ground, Ours, Rapier, Scene, matched, race_in_pool, row};

/// A body of a joint scene.
#[derive(Clone, Copy)]
struct Body {
    at: Vec3,
    rotation: Quat,
    shape: Shape,
    fixed: bool,
}

#[derive(Clone, Copy)]
enum Shape {
    Ball(f32),
    /// Half height and radius, along the body's Y.
    Capsule(f32, f32),
}

/// A hinge about Z or a ball joint, between bodies `a` and `b` at local anchors.
#[derive(Clone, Copy)]
struct Link {
    a: usize,
    b: usize,
    anchor_a: Vec3,
    anchor_b: Vec3,
    hinge: bool,
}

struct JointScene {
    name: &'static str,
    steps: usize,
    bodies: Vec<Body>,
    links: Vec<Link>,
    /// Whether the bodies collide (with each other, bar joined pairs, and with a ground plane).
    collide: bool,
}

/// Box2D's joint grid in 3D: hinges about Z keep it in its plane.
fn joint_grid(name: &'static str) -> JointScene {
    let n = 100;
    let mut bodies = Vec::new();
    let mut links = Vec::new();
    for k in 0..n {
        for i in 0..n {
            bodies.push(Body {
                at: Vec3::new(k as f32, 100.0 - i as f32, 0.0),
                rotation: Quat::IDENTITY,
                shape: Shape::Ball(0.4),
                fixed: i == 0 && (n / 2 - 3..=n / 2 + 3).contains(&k),
            });
            let index = k * n + i;
            if i > 0 {
                links.push(Link {
                    a: index - 1,
                    b: index,
                    anchor_a: Vec3::new(0.0, -0.5, 0.0),
                    anchor_b: Vec3::new(0.0, 0.5, 0.0),
                    hinge: true,
                });
            }
            if k > 0 {
                links.push(Link {
                    a: index - n,
                    b: index,
                    anchor_a: Vec3::new(0.5, 0.0, 0.0),
                    anchor_b: Vec3::new(-0.5, 0.0, 0.0),
                    hinge: true,
                });
            }
        }
    }
    JointScene {
        name,
        steps: 300,
        bodies,
        links,
        collide: false,
    }
}

/// 100 chains of 20 capsule links, laid across each other in layers, falling into a pile.
fn chain_pile(name: &'static str) -> JointScene {
    let (half, radius) = (0.2f32, 0.08f32);
    let pitch = 2.0 * (half + radius);
    let mut bodies = Vec::new();
    let mut links = Vec::new();
    for chain in 0..100 {
        let along_x = chain % 2 == 0;
        let across = (chain / 2 % 5) as f32 * 1.5 - 3.0;
        let height = 1.0 + chain as f32 * 0.4;
        // The capsule's Y axis laid along the chain.
        let rotation = if along_x {
            Quat::from_rotation_z(-std::f32::consts::FRAC_PI_2)
        } else {
            Quat::from_rotation_x(std::f32::consts::FRAC_PI_2)
        };
        for l in 0..20 {
            let t = (l as f32 - 9.5) * pitch;
            let at = if along_x {
                Vec3::new(t, height, across)
            } else {
                Vec3::new(across, height, t)
            };
            if l > 0 {
                links.push(Link {
                    a: bodies.len() - 1,
                    b: bodies.len(),
                    anchor_a: Vec3::new(0.0, pitch * 0.5, 0.0),
                    anchor_b: Vec3::new(0.0, -pitch * 0.5, 0.0),
                    hinge: false,
                });
            }
            bodies.push(Body {
                at,
                rotation,
                shape: Shape::Capsule(half, radius),
                fixed: false,
            });
        }
    }
    JointScene {
        name,
        steps: 300,
        bodies,
        links,
        collide: true,
    }
}

/// The frames of a hinge about the world's Z axis.
fn about_z(mut joint: Joint) -> Joint {
    let onto_z = Quat::from_rotation_y(-std::f32::consts::FRAC_PI_2);
    joint.frame_a.rotation = onto_z;
    joint.frame_b.rotation = onto_z;
    joint
}

fn ours(scene: &JointScene) -> Ours {
    let mut app = rusting_engine::App::default();
    app.setup().expect("an engine app");
    let world = app.world_mut();
    world.insert_resource(PhysicsSettings::default());
    if scene.collide {
        world.spawn((Transform::default(), Collider::half_space(Vec3::Y)));
    }
    let layers = if scene.collide {
        CollisionLayers::default()
    } else {
        CollisionLayers {
            memberships: 2,
            filters: !2,
        }
    };
    let bodies: Vec<_> = scene
        .bodies
        .iter()
        .map(|b| {
            let collider = match b.shape {
                Shape::Ball(r) => Collider::sphere(r),
                Shape::Capsule(h, r) => Collider::capsule(h, r),
            };
            let transform = Transform::from_translation(b.at).with_rotation(b.rotation);
            let mut entity = world.spawn((transform, collider, layers));
            if !b.fixed {
                entity.insert(RigidBody::dynamic(1.0));
            }
            entity.id()
        })
        .collect();
    let sim_id = |world: &bevy::prelude::World, i: usize| {
        *world
            .get::<rusting_engine::state::SimId>(bodies[i])
            .expect("a body")
    };
    for link in &scene.links {
        let (a, b) = (sim_id(world, link.a), sim_id(world, link.b));
        let joint = if link.hinge {
            about_z(Joint::revolute(Some(a), b))
        } else {
            Joint::spherical(Some(a), b)
        };
        world.spawn(joint.with_anchors(link.anchor_a, link.anchor_b));
    }
    Ours::running(app, bodies, 1)
}

/// Our joint spring, for rapier's matched rows.
fn our_joint_softness() -> rp::SpringCoefficients<f32> {
    rp::SpringCoefficients {
        natural_frequency: 60.0,
        damping_ratio: 2.0,
    }
}

fn rapier(scene: &JointScene, match_ours: bool) -> Rapier {
    let mut world = rp::PhysicsWorld::default();
    world.integration_parameters.dt = 1.0 / 60.0;
    if match_ours {
        matched(&mut world.integration_parameters);
    }
    if scene.collide {
        let ground = world.insert_body(rp::RigidBodyBuilder::fixed());
        let plane =
            rp::ColliderBuilder::halfspace(rapier3d::na::Unit::new_unchecked(rp::Vector::Y));
        world.insert_collider(plane.friction(0.5), Some(ground));
    }
    let groups = if scene.collide {
        rp::InteractionGroups::all()
    } else {
        rp::InteractionGroups::new(
            rp::Group::GROUP_2,
            !rp::Group::GROUP_2,
            rp::InteractionTestMode::And,
        )
    };
    let mut bodies = Vec::new();
    for b in &scene.bodies {
        let (axis, angle) = b.rotation.to_axis_angle();
        let scaled = axis * angle;
        let builder = if b.fixed {
            rp::RigidBodyBuilder::fixed()
        } else {
            rp::RigidBodyBuilder::dynamic()
        };
        let handle = world.insert_body(
            builder
                .translation(rp::Vector::new(b.at.x, b.at.y, b.at.z))
                .rotation(rp::AngVector::new(scaled.x, scaled.y, scaled.z)),
        );
        let collider = match b.shape {
            Shape::Ball(r) => rp::ColliderBuilder::ball(r),
            Shape::Capsule(h, r) => rp::ColliderBuilder::capsule_y(h, r),
        };
        world.insert_collider(
            collider.friction(0.5).mass(1.0).collision_groups(groups),
            Some(handle),
        );
        bodies.push(handle);
    }
    let v = |v: Vec3| rp::Vector::new(v.x, v.y, v.z);
    for link in &scene.links {
        let (a, b) = (bodies[link.a], bodies[link.b]);
        let joint: rp::GenericJoint = if link.hinge {
            let mut j = rp::RevoluteJointBuilder::new(rp::Vector::Z)
                .local_anchor1(v(link.anchor_a))
                .local_anchor2(v(link.anchor_b))
                .contacts_enabled(false);
            if match_ours {
                j = j.softness(our_joint_softness());
            }
            j.into()
        } else {
            let mut j: rp::GenericJoint = rp::SphericalJointBuilder::new()
                .local_anchor1(v(link.anchor_a))
                .local_anchor2(v(link.anchor_b))
                .contacts_enabled(false)
                .into();
            if match_ours {
                j.softness = our_joint_softness();
            }
            j
        };
        world.insert_impulse_joint(a, b, joint);
    }
    Rapier { world, bodies }
}

/// Runs the joint rows that `wanted` picks.
pub fn rows(wanted: &dyn Fn(&str) -> bool) {
    let scenes = [
        (
            joint_grid("(j1) joint grid, 100 x 100 hinged balls, 300 steps"),
            false,
        ),
        (
            chain_pile("(j2) pile of 100 20-link chains, 300 steps"),
            false,
        ),
        (
            joint_grid("(j1') the joint grid, rapier matched to ours"),
            true,
        ),
        (
            chain_pile("(j2') the chain pile, rapier matched to ours"),
            true,
        ),
    ];
    for (scene, match_ours) in &scenes {
        if !wanted(scene.name) {
            continue;
        }
        let timing = Scene {
            name: scene.name,
            steps: scene.steps,
            sleep: true,
            bodies: Vec::new(),
            watch: None,
            ground: Ground::Plane,
        };
        let (a, mut b) = (ours(scene), rapier(scene, *match_ours));
        let (ours, theirs) = race_in_pool(&timing, a, &mut b);
        row(scene.name, &ours, &theirs);
    }
}

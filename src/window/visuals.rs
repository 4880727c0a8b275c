//! Drawing the simulation: a mesh for every collider and burst particle, drawn where the body is
//! between its last two ticks, a camera that follows the player, and light.
//!
//! Every drawn thing is a separate presentation entity ([`Visual`]) keyed by the body's `SimId`,
//! never a component on the body: the body's `Transform` is simulation state, and a rollback that
//! respawns a body gives it another `Entity` but the same `SimId`. Bodies are drawn interpolated:
//! with `alpha` the share of a tick the accumulator holds after the frame's ticks, a body is drawn
//! at `lerp(previous, current, alpha)`, so motion is smooth whatever the frame rate. This module
//! reads simulation state and never writes it.

use std::collections::BTreeMap;

use bevy::app::{App as BevyApp, PostStartup, Update};
use bevy::asset::{Assets, RenderAssetUsages};
use bevy::camera::Camera3d;
use bevy::color::Color;
use bevy::light::{DirectionalLight, GlobalAmbientLight};
use bevy::math::primitives::{Capsule3d, Cuboid, Plane3d, Sphere};
use bevy::math::{Dir3, Quat, Vec2, Vec3};
use bevy::mesh::{Mesh, Mesh3d, PrimitiveTopology};
use bevy::pbr::{MeshMaterial3d, StandardMaterial};
use bevy::prelude::{
    Commands, Component, Entity, Has, IntoScheduleConfigs, Or, Query, Res, ResMut, Resource,
    Transform, Visibility, With, Without,
};

use crate::gameplay::{BurstParticle, Pickup, PlatformerController, PlayerController};
use crate::physics::geometry::mesh::TriangleMesh;
use crate::physics::{BodyKind, Collider, LevelMeshes, RigidBody, Shape};
use crate::runtime::{FrameTime, TickAccumulator};
use crate::scene::{Appearance, ScenePresentation};
use crate::state::SimId;

/// A presentation entity that draws the simulation entity with this `SimId`.
#[derive(Component, Clone, Copy, Debug)]
pub struct Visual(pub SimId);

/// The camera that follows the player.
#[derive(Component, Clone, Copy, Debug)]
pub struct FollowCamera {
    /// Where the camera sits relative to the player, in metres.
    pub offset: Vec3,
}

impl Default for FollowCamera {
    fn default() -> Self {
        FollowCamera {
            offset: Vec3::new(0.0, 7.0, 11.0),
        }
    }
}

/// Every body's transform after the last two ticks the window saw, for interpolation.
#[derive(Resource, Default)]
struct Interpolation {
    tick: u64,
    poses: BTreeMap<SimId, (Transform, Transform)>,
}

/// The presentation entity drawing each `SimId`.
#[derive(Resource, Default)]
struct Drawn(BTreeMap<SimId, Entity>);

pub(super) fn add_visuals(app: &mut BevyApp) {
    app.init_resource::<Interpolation>()
        .init_resource::<Drawn>()
        .insert_resource(GlobalAmbientLight {
            brightness: 400.0,
            ..Default::default()
        })
        .add_systems(PostStartup, spawn_camera_and_light)
        .add_systems(
            Update,
            (
                spawn_visuals,
                track_poses,
                place_visuals,
                hide_collected_pickups,
                follow_player,
            )
                .chain(),
        );
}

fn spawn_camera_and_light(mut commands: Commands, scene: Option<Res<ScenePresentation>>) {
    let camera = FollowCamera {
        offset: scene.map_or_else(|| FollowCamera::default().offset, |s| s.camera.offset),
    };
    commands.spawn((
        Camera3d::default(),
        // Multisampling quadruples the fragment work, which a software Vulkan device (lavapipe)
        // feels most; the scene's large flat shapes hardly need it.
        bevy::render::view::Msaa::Off,
        camera,
        Transform::from_translation(camera.offset).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 8_000.0,
            shadow_maps_enabled: true,
            ..Default::default()
        },
        Transform::from_rotation(Quat::from_euler(bevy::math::EulerRot::YXZ, 0.6, -0.9, 0.0)),
    ));
}

/// The colour a body is drawn in: players blue, sensors gold, dynamic bodies orange, moving
/// platforms teal, the rest grey.
fn body_colour(collider: &Collider, body: Option<&RigidBody>, player: bool) -> Color {
    if player {
        Color::srgb(0.2, 0.45, 0.95)
    } else if collider.sensor {
        Color::srgb(1.0, 0.8, 0.15)
    } else {
        match body.map(|b| b.kind) {
            Some(BodyKind::Dynamic) => Color::srgb(0.9, 0.5, 0.2),
            Some(BodyKind::Kinematic) => Color::srgb(0.25, 0.7, 0.65),
            _ => Color::srgb(0.55, 0.57, 0.6),
        }
    }
}

fn collider_mesh(shape: &Shape, level: Option<&LevelMeshes>) -> Mesh {
    match *shape {
        Shape::Mesh { mesh } => level_mesh(level.and_then(|level| level.get(mesh))),
        Shape::Sphere { radius } => Sphere::new(radius).into(),
        Shape::Box { half_extents } => Cuboid::from_size(half_extents * 2.0).into(),
        Shape::Capsule {
            half_height,
            radius,
        } => Capsule3d::new(radius, half_height * 2.0).into(),
        Shape::HalfSpace { normal } => {
            let normal = Dir3::new(normal).unwrap_or(Dir3::Y);
            Plane3d::new(*normal, Vec2::splat(60.0)).into()
        }
    }
}

/// A level mesh drawn flat: each triangle its own three corners, with its face's normal. A mesh
/// missing from `LevelMeshes` (it touches nothing either) draws nothing.
fn level_mesh(mesh: Option<&TriangleMesh>) -> Mesh {
    let (mut positions, mut normals) = (Vec::new(), Vec::new());
    if let Some(mesh) = mesh {
        for (index, corners) in mesh.triangles().iter().enumerate() {
            let normal = mesh.normal(index as u32).to_array();
            for &corner in corners {
                positions.push(mesh.vertices()[corner as usize].to_array());
                normals.push(normal);
            }
        }
    }
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, normals)
}

/// What a collider's visual is made from.
type DrawnCollider = (
    &'static SimId,
    &'static Collider,
    &'static Transform,
    Option<&'static RigidBody>,
    Option<&'static Appearance>,
    Has<PlatformerController>,
    Has<PlayerController>,
);

/// The entities a follow camera follows: the players.
type Followed = Or<(With<PlatformerController>, With<PlayerController>)>;

/// Burst particles (which have no collider).
type ParticleFilter = (With<BurstParticle>, Without<Collider>);

/// Gives every new collider and burst particle a visual, and removes the visuals of entities gone
/// (despawned, or rolled back to before they were spawned).
fn spawn_visuals(
    mut commands: Commands,
    mut drawn: ResMut<Drawn>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    colliders: Query<DrawnCollider>,
    particles: Query<(&SimId, &Transform), ParticleFilter>,
    level: Option<Res<LevelMeshes>>,
) {
    let mut alive = std::collections::BTreeSet::new();
    for (id, collider, transform, body, appearance, platformer, player) in &colliders {
        alive.insert(*id);
        if drawn.0.contains_key(id) {
            continue;
        }
        let base_color = match appearance {
            Some(appearance) => {
                let [r, g, b] = appearance.color;
                Color::srgb(r, g, b)
            }
            None => body_colour(collider, body, platformer || player),
        };
        let material = StandardMaterial {
            base_color,
            perceptual_roughness: 0.8,
            ..Default::default()
        };
        let entity = commands
            .spawn((
                Visual(*id),
                Mesh3d(meshes.add(collider_mesh(&collider.shape, level.as_deref()))),
                MeshMaterial3d(materials.add(material)),
                *transform,
            ))
            .id();
        drawn.0.insert(*id, entity);
    }
    for (id, transform) in &particles {
        alive.insert(*id);
        if drawn.0.contains_key(id) {
            continue;
        }
        let entity = commands
            .spawn((
                Visual(*id),
                Mesh3d(meshes.add(Sphere::new(0.06))),
                MeshMaterial3d(materials.add(StandardMaterial {
                    base_color: Color::srgb(1.0, 0.95, 0.6),
                    unlit: true,
                    ..Default::default()
                })),
                *transform,
            ))
            .id();
        drawn.0.insert(*id, entity);
    }
    super::despawn_gone(&mut commands, &mut drawn.0, &alive);
}

/// Keeps every body's transform after the last two ticks. A frame that ran no tick changes
/// nothing; a tick counter that went back (a rollback or a seek) starts over from the present.
fn track_poses(
    time: Res<FrameTime>,
    mut interpolation: ResMut<Interpolation>,
    bodies: Query<(&SimId, &Transform), With<SimId>>,
) {
    let tick = time.fixed_tick;
    if tick == interpolation.tick && !interpolation.poses.is_empty() {
        return;
    }
    let went_back = tick < interpolation.tick;
    interpolation.tick = tick;
    let mut poses = BTreeMap::new();
    for (id, transform) in &bodies {
        let previous = match interpolation.poses.get(id) {
            Some((_, current)) if !went_back => *current,
            _ => *transform,
        };
        poses.insert(*id, (previous, *transform));
    }
    interpolation.poses = poses;
}

/// Draws each visual between its body's last two poses.
fn place_visuals(
    accumulator: Res<TickAccumulator>,
    interpolation: Res<Interpolation>,
    mut visuals: Query<(&Visual, &mut Transform), Without<SimId>>,
) {
    let step = accumulator.step().as_secs_f64();
    let alpha = if step > 0.0 {
        (accumulator.pending.as_secs_f64() / step).clamp(0.0, 1.0) as f32
    } else {
        1.0
    };
    for (visual, mut transform) in &mut visuals {
        if let Some((previous, current)) = interpolation.poses.get(&visual.0) {
            transform.translation = previous.translation.lerp(current.translation, alpha);
            transform.rotation = previous.rotation.slerp(current.rotation, alpha);
            transform.scale = current.scale;
        }
    }
}

/// Hides the pickups already collected (they stay in the simulation, without collision layers),
/// and shows them again if a rollback un-collects them.
fn hide_collected_pickups(
    pickups: Query<(&SimId, &Pickup)>,
    mut visuals: Query<(&Visual, &mut Visibility)>,
) {
    let collected: std::collections::BTreeSet<SimId> = pickups
        .iter()
        .filter(|(_, pickup)| pickup.collected)
        .map(|(id, _)| *id)
        .collect();
    for (visual, mut visibility) in &mut visuals {
        let wanted = if collected.contains(&visual.0) {
            Visibility::Hidden
        } else {
            Visibility::Inherited
        };
        if *visibility != wanted {
            *visibility = wanted;
        }
    }
}

/// Keeps the camera at its offset from the player's drawn position, looking at it.
fn follow_player(
    players: Query<&SimId, Followed>,
    visuals: Query<(&Visual, &Transform), Without<FollowCamera>>,
    mut cameras: Query<(&FollowCamera, &mut Transform), Without<Visual>>,
) {
    let Some(player) = players.iter().min() else {
        return;
    };
    let Some((_, target)) = visuals.iter().find(|(visual, _)| visual.0 == *player) else {
        return;
    };
    for (camera, mut transform) in &mut cameras {
        *transform = Transform::from_translation(target.translation + camera.offset)
            .looking_at(target.translation, Vec3::Y);
    }
}

//! Drawing the game's debug lines (`gameplay::DebugLines`) in the window.
//!
//! One presentation entity holds a line-list mesh, rebuilt in a frame whose `DebugLines` changed:
//! two vertices a line, each with the line's colour, drawn unlit so a line reads the same in light
//! and shadow. With no lines the entity is hidden. The lines are drawn where the last tick left
//! them, not interpolated between ticks: they show what that tick's systems saw. This module reads
//! `DebugLines` and never writes simulation state.

use bevy::app::{App as BevyApp, PostStartup, Update};
use bevy::asset::{Assets, Handle, RenderAssetUsages};
use bevy::color::Color;
use bevy::mesh::{Mesh, Mesh3d, PrimitiveTopology};
use bevy::pbr::{MeshMaterial3d, StandardMaterial};
use bevy::prelude::{
    Commands, Component, DetectChanges, Query, Res, ResMut, Resource, Transform, Visibility, With,
};

use crate::gameplay::{DebugLine, DebugLines};

/// The entity that draws the lines.
#[derive(Component, Clone, Copy, Debug)]
struct DebugLinesVisual;

/// The line mesh (inserted when the app is built, set when the visual is spawned).
#[derive(Resource, Default)]
struct LineMesh(Handle<Mesh>);

pub(super) fn add_debug_lines(app: &mut BevyApp) {
    app.init_resource::<LineMesh>()
        .add_systems(PostStartup, spawn_line_visual)
        .add_systems(Update, draw_debug_lines);
}

/// A line-list mesh of `lines`, coloured per vertex.
fn line_mesh(lines: &[DebugLine]) -> Mesh {
    let mut positions = Vec::with_capacity(lines.len() * 2);
    let mut colors = Vec::with_capacity(lines.len() * 2);
    for line in lines {
        let [r, g, b] = line.color;
        positions.push(line.from.to_array());
        positions.push(line.to.to_array());
        colors.push([r, g, b, 1.0]);
        colors.push([r, g, b, 1.0]);
    }
    Mesh::new(PrimitiveTopology::LineList, RenderAssetUsages::default())
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
        .with_inserted_attribute(Mesh::ATTRIBUTE_COLOR, colors)
}

fn spawn_line_visual(
    mut commands: Commands,
    mut line_mesh_handle: ResMut<LineMesh>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let mesh = meshes.add(line_mesh(&[]));
    line_mesh_handle.0 = mesh.clone();
    commands.spawn((
        DebugLinesVisual,
        Mesh3d(mesh),
        MeshMaterial3d(materials.add(StandardMaterial {
            // White times each vertex's colour.
            base_color: Color::WHITE,
            unlit: true,
            ..Default::default()
        })),
        // A line casts no shadow worth seeing, and the shadow pass would draw it again.
        bevy::light::NotShadowCaster,
        Transform::default(),
        Visibility::Hidden,
    ));
}

/// Rebuilds the line mesh when the lines changed, and shows it only when there are lines.
fn draw_debug_lines(
    lines: Option<Res<DebugLines>>,
    mesh: Res<LineMesh>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut visuals: Query<&mut Visibility, With<DebugLinesVisual>>,
) {
    let Some(lines) = lines else {
        return;
    };
    if !lines.is_changed() {
        return;
    }
    let drawn = lines.lines();
    let shown = !drawn.is_empty();
    if shown && let Some(mut target) = meshes.get_mut(&mesh.0) {
        *target = line_mesh(&drawn);
    }
    for mut visibility in &mut visuals {
        let wanted = if shown {
            Visibility::Inherited
        } else {
            Visibility::Hidden
        };
        if *visibility != wanted {
            *visibility = wanted;
        }
    }
}

//! The heads-up display: each [`HudElement`]'s text, and a status line with the tick and the time
//! control, as UI text in the window's top-left corner. Reads simulation state, never writes it.

use std::collections::BTreeMap;

use bevy::app::{App as BevyApp, PostStartup, Update};
use bevy::prelude::{
    ChildOf, Commands, Component, Entity, Query, Res, ResMut, Resource, Text, TextFont, With,
};
use bevy::ui::{FlexDirection, Node, UiRect, Val};

use super::modes::{ModeLabel, PaceControl};
use crate::gameplay::HudElement;
use crate::runtime::{FrameTime, TimeControl};
use crate::state::SimId;

/// The column the HUD's lines sit in.
#[derive(Component)]
struct HudRoot;

/// The status line.
#[derive(Component)]
struct StatusLine;

/// The text line showing each HUD element, by the element's `SimId`.
#[derive(Resource, Default)]
struct HudLines(BTreeMap<SimId, Entity>);

pub(super) fn add_hud(app: &mut BevyApp) {
    app.init_resource::<HudLines>()
        .add_systems(PostStartup, spawn_hud_root)
        .add_systems(Update, (show_hud_elements, show_status));
}

fn spawn_hud_root(mut commands: Commands) {
    let root = commands
        .spawn((
            HudRoot,
            Node {
                flex_direction: FlexDirection::Column,
                padding: UiRect::all(Val::Px(12.0)),
                row_gap: Val::Px(4.0),
                ..Default::default()
            },
        ))
        .id();
    commands.spawn((
        StatusLine,
        Text::new(""),
        TextFont::from_font_size(14.0),
        ChildOf(root),
    ));
}

fn show_hud_elements(
    mut commands: Commands,
    mut lines: ResMut<HudLines>,
    roots: Query<Entity, With<HudRoot>>,
    elements: Query<(&SimId, &HudElement)>,
    mut texts: Query<&mut Text, bevy::prelude::Without<StatusLine>>,
) {
    let Ok(root) = roots.single() else {
        return;
    };
    let mut alive = std::collections::BTreeSet::new();
    for (id, element) in &elements {
        alive.insert(*id);
        match lines.0.get(id).and_then(|line| texts.get_mut(*line).ok()) {
            Some(mut text) => {
                if text.0 != element.text {
                    text.0.clone_from(&element.text);
                }
            }
            None => {
                let line = commands
                    .spawn((
                        Text::new(element.text.clone()),
                        TextFont::from_font_size(24.0),
                        ChildOf(root),
                    ))
                    .id();
                lines.0.insert(*id, line);
            }
        }
    }
    super::despawn_gone(&mut commands, &mut lines.0, &alive);
}

fn show_status(
    time: Res<FrameTime>,
    control: Res<TimeControl>,
    pace: Option<Res<PaceControl>>,
    label: Option<Res<ModeLabel>>,
    mut status: Query<&mut Text, With<StatusLine>>,
) {
    let Ok(mut text) = status.single_mut() else {
        return;
    };
    // A synctest or the viewer paces its frames itself; plain play goes by `TimeControl`.
    let (paused, time_scale) = match &pace {
        Some(pace) => (pace.paused, pace.time_scale),
        None => (control.paused, control.time_scale),
    };
    let mut line = String::new();
    if let Some(label) = &label {
        line.push_str(&label.name);
        line.push_str("  ");
    }
    line.push_str(&format!("tick {}", time.fixed_tick));
    if let Some(end) = label.as_ref().and_then(|label| label.end_tick) {
        line.push_str(&format!(" / {end}"));
    }
    if paused {
        line.push_str("  paused (F1 resume, F2 step)");
    }
    if time_scale != 1.0 {
        line.push_str(&format!("  x{time_scale}"));
    }
    if text.0 != line {
        text.0 = line;
    }
}

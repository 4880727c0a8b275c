//! Live input: the window's keyboard and mouse as the frame's [`RuntimeInput`], and the keys that
//! pause, single-step and scale time through [`TimeControl`].
//!
//! The engine keeps F1 to F5 for time control: they never reach the simulation's input. Actions
//! and axes come from the project's bindings as in every other run: the simulation reads keys per
//! tick through `TickInput` and `Actions`, so this module only says which keys are down, how far
//! the mouse moved and how large the window is. This module must never write simulation state
//! other than through the frame's `RuntimeInput`, which the recorder records.

use bevy::ecs::message::MessageReader;
use bevy::input::keyboard::{KeyCode, KeyboardInput};
use bevy::input::mouse::AccumulatedMouseMotion;
use bevy::input::{ButtonInput, ButtonState};
use bevy::math::UVec2;
use bevy::prelude::{ResMut, Resource, With, World};
use bevy::window::{PrimaryWindow, Window};

use super::modes::PaceControl;
use crate::runtime::{RuntimeInput, TimeControl};

/// Pauses or resumes the simulation.
pub const PAUSE_KEY: KeyCode = KeyCode::F1;
/// While paused, runs one tick.
pub const STEP_KEY: KeyCode = KeyCode::F2;
/// Halves the time scale (down to 1/16).
pub const SLOWER_KEY: KeyCode = KeyCode::F3;
/// Doubles the time scale (up to 4).
pub const FASTER_KEY: KeyCode = KeyCode::F4;
/// Puts the time scale back to 1.
pub const NORMAL_SPEED_KEY: KeyCode = KeyCode::F5;

const TIME_KEYS: [KeyCode; 5] = [
    PAUSE_KEY,
    STEP_KEY,
    SLOWER_KEY,
    FASTER_KEY,
    NORMAL_SPEED_KEY,
];

/// What a live windowed run says once its first frame is on screen: the time-control keys.
pub(super) const TIME_KEYS_HINT: &str = "in the window: F1 pauses, F2 steps one tick while paused, F3/F4 halve/double the time scale, F5 puts it back to 1";

/// A single step asked for while paused: the next frame runs exactly one tick.
#[derive(Resource, Default)]
pub(super) struct SingleStep(pub(super) bool);

/// The frame's input from the window: the keys held or tapped this frame (time-control keys left out), the mouse
/// movement since the last frame, and the window's logical size.
pub(super) fn capture_devices(world: &mut World) -> RuntimeInput {
    let mut input = RuntimeInput::default();
    if let Some(keys) = world.get_resource::<ButtonInput<KeyCode>>() {
        // A key pressed and released within one frame (a quick tap during a slow frame) is in
        // `just_pressed` but no longer in `pressed`: it counts as held for this frame, so the tap
        // reaches the next tick instead of vanishing.
        for key in keys.get_pressed().chain(keys.get_just_pressed()) {
            if !TIME_KEYS.contains(key) {
                input.press(*key);
            }
        }
    }
    if let Some(motion) = world.get_resource::<AccumulatedMouseMotion>() {
        input.look_delta = motion.delta;
    }
    let mut windows = world.query_filtered::<&Window, With<PrimaryWindow>>();
    if let Ok(window) = windows.single(world) {
        input.viewport = UVec2::new(window.width() as u32, window.height() as u32);
    }
    input
}

/// Pause, single step and time scale from F1 to F5 (runs in `Update`; takes effect next frame).
/// Every press counts, in order, even several in one slow frame. They go to the world's
/// `TimeControl` in play, and to the run's own pacing in a synctest or the replay viewer, whose
/// rollbacks restore the world's.
pub(super) fn time_control_keys(
    mut presses: MessageReader<KeyboardInput>,
    mut world_control: ResMut<TimeControl>,
    mut pace: Option<ResMut<PaceControl>>,
    mut single_step: ResMut<SingleStep>,
) {
    let keys: Vec<KeyCode> = presses
        .read()
        .filter(|press| press.state == ButtonState::Pressed && !press.repeat)
        .map(|press| press.key_code)
        .filter(|key| TIME_KEYS.contains(key))
        .collect();
    if keys.is_empty() {
        return;
    }
    let (paused, time_scale): (&mut bool, &mut f64) = match pace.as_deref_mut() {
        Some(pace) => (&mut pace.paused, &mut pace.time_scale),
        None => {
            let world_control = &mut *world_control;
            (&mut world_control.paused, &mut world_control.time_scale)
        }
    };
    for key in keys {
        match key {
            PAUSE_KEY => {
                *paused = !*paused;
                bevy::log::info!(
                    "{}",
                    if *paused {
                        "paused (F2 steps one tick)"
                    } else {
                        "resumed"
                    }
                );
            }
            STEP_KEY if *paused => single_step.0 = true,
            STEP_KEY => {}
            _ => {
                *time_scale = match key {
                    SLOWER_KEY => (*time_scale / 2.0).max(1.0 / 16.0),
                    FASTER_KEY => (*time_scale * 2.0).min(4.0),
                    _ => 1.0,
                };
                bevy::log::info!("time scale {time_scale}");
            }
        }
    }
}

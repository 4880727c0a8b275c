//! Playing in a window (the `window` feature): bevy's winit window and renderer around the engine's
//! fixed ticks.
//!
//! bevy's window loop calls bevy's own `App::update` once per frame, which would bypass the engine
//! [`App`]'s frame step. So a windowed game hands its [`FrameStepper`] to the world, and the
//! [`EngineFrame`](frame::EngineFrame) schedule (after bevy's `PreUpdate`, where device input
//! arrives) runs the frame step inside each frame the window loop drives: the frame's input and
//! real delta in, its ticks, hashes, hooks and recording, exactly as a headless frame. The real
//! clock is read only there, to give the frame's delta. Everything else here is presentation: it
//! reads simulation state and never writes it, and none of it is hashed or snapshotted, so a
//! windowed run computes the same ticks as a headless one fed the same frames.
//!
//! The simulation app never needs this module: headless runs, `rusting determinism` and the
//! engine's tests build without the feature and never compile the renderer.

mod debug_lines;
mod frame;
mod hud;
mod live_input;
mod modes;
mod visuals;

pub use frame::{EngineFrame, FrameFeed, WindowedEnd, WindowedRun};
pub use modes::{
    ModeEnd, SEEK_BACK_KEY, SEEK_END_KEY, SEEK_FORWARD_KEY, SEEK_START_KEY, WindowedMode,
};

use bevy::app::{App as BevyApp, PluginGroup};
use bevy::prelude::{Update, Window};

use crate::engine::App;
use crate::engine::frame_step::FrameStepper;

/// The title and size of a game's window.
#[derive(Clone, Debug)]
pub struct WindowSettings {
    /// The window's title (the project's name).
    pub title: String,
    /// Logical width and height.
    pub size: (u32, u32),
}

/// bevy's window, input, asset and render plugins, without the ones the engine replaces: its task
/// pools and transform propagation are the engine's, its log output is [`crate::engine::logging`]'s, and
/// bevy's `TimePlugin` would run the fixed schedules a second time from the wall clock.
pub fn window_plugins(settings: &WindowSettings) -> bevy::app::PluginGroupBuilder {
    bevy::DefaultPlugins
        .build()
        .disable::<bevy::log::LogPlugin>()
        .disable::<bevy::app::TaskPoolPlugin>()
        .disable::<bevy::time::TimePlugin>()
        .disable::<bevy::transform::TransformPlugin>()
        .set(bevy::window::WindowPlugin {
            primary_window: Some(Window {
                title: settings.title.clone(),
                resolution: bevy::window::WindowResolution::new(settings.size.0, settings.size.1),
                ..Default::default()
            }),
            ..Default::default()
        })
}

/// What a window adds to a game: the frame clock, drawing the scene and the game's debug lines,
/// the HUD, the camera and the time-control keys. (A function, not a plugin: the source lint follows calls by name, and a
/// `Plugin::build` here would be reachable from every `.build()` call in fixed code.)
fn add_presentation(app: &mut BevyApp) {
    frame::add_frame_clock(app);
    visuals::add_visuals(app);
    debug_lines::add_debug_lines(app);
    hud::add_hud(app);
    app.add_systems(Update, live_input::time_control_keys);
}

/// Adds the window and presentation plugins to `app`. Call it before [`App::setup`] (and before
/// starting a recording, which sets the app up), then [`run_in_window`].
pub fn prepare_window(app: &mut App, settings: &WindowSettings) {
    app.add_plugins(window_plugins(settings));
    add_presentation(app.bevy_mut());
}

/// Runs `app` (prepared with [`prepare_window`]) in a window until `run` ends it or the window closes,
/// and returns how it ended. Sets the app up if it is not yet (its startup schedules run, as in
/// a headless run), then hands its [`FrameStepper`] to bevy's window loop.
pub fn run_in_window(mut app: App, run: WindowedRun) -> WindowedEnd {
    let outcome = run.outcome();
    if let Err(error) = app.setup() {
        return WindowedEnd::Failed(error.to_string());
    }
    let (mut bevy, stepper): (BevyApp, FrameStepper) = app.into_parts();
    frame::install_frame_step(&mut bevy, stepper, run);
    let _ = bevy.run();
    outcome.take()
}

/// Despawns the presentation entity of every `SimId` in `shown` that is not `alive` any more (a
/// despawned entity, or one a rollback took back), and forgets it.
fn despawn_gone(
    commands: &mut bevy::prelude::Commands,
    shown: &mut std::collections::BTreeMap<crate::state::SimId, bevy::prelude::Entity>,
    alive: &std::collections::BTreeSet<crate::state::SimId>,
) {
    shown.retain(|id, entity| {
        let keep = alive.contains(id);
        if !keep {
            commands.entity(*entity).despawn();
        }
        keep
    });
}

/// Why no window can open here, if none can: no X11 or Wayland display is set.
pub fn missing_display() -> Option<String> {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    (!set("DISPLAY") && !set("WAYLAND_DISPLAY")).then(|| {
        "there is no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set): \
         run headless (`rusting run <project> --headless --ticks N`), or under a virtual display \
         (`xvfb-run -a rusting run <project>`)"
            .to_owned()
    })
}

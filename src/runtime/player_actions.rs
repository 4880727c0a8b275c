//! [`PlayerActions`]: each player's actions and axes by player handle, read the same way offline,
//! in a multiplayer session, in a session replay and in a session's synctest.
//!
//! A game system that moves what a player drives asks `actions.of(handle)` for that player's
//! [`PlayerAction`] view and reads `pressed("jump")`, `just_pressed("fire")` or `axis("move_x")`
//! by the names of `rusting.json`'s `input` section. Where the input comes from is the engine's
//! business:
//!
//! - **offline** (no session: `PlayerInputs` empty or absent; a replay and `rusting run
//!   --synctest` too) player 0 is the local player, read from the tick's keys (`TickInput`) and the
//!   frame's analog axes through the bindings; other handles read nothing pressed;
//! - **in a session**, a session replay or a session's synctest (`NetSession::synctest`), every
//!   player reads its entry of [`PlayerInputs`], written before each tick it simulates.
//!
//! Both go through the session's fixed form, [`PlayerTickInput`]: offline the local input is
//! captured into that form, so an analog axis reads the same quantized value offline as the other
//! peers see online, and `just_pressed` compares with the form of the tick before (offline
//! rebuilt from the tick's key changes, in a session kept in `PlayerInputs::previous`). One game
//! system therefore gives the same bits for the same presses wherever it runs. This module must
//! never read devices.

use bevy::ecs::system::SystemParam;
use bevy::input::keyboard::KeyCode;
use bevy::math::Vec2;
use bevy::prelude::Res;

use super::{ActionName, InputBindings, PlayerInputs, PlayerTickInput, RuntimeInput, TickInput};

/// Every player's input this tick by handle (a system parameter for fixed systems; see the module
/// docs).
#[derive(SystemParam)]
pub struct PlayerActions<'w> {
    tick: Res<'w, TickInput>,
    frame: Res<'w, RuntimeInput>,
    bindings: Res<'w, InputBindings>,
    session: Option<Res<'w, PlayerInputs>>,
}

impl PlayerActions<'_> {
    /// The session's inputs, while one runs.
    fn session(&self) -> Option<&PlayerInputs> {
        self.session.as_deref().filter(|inputs| inputs.in_session())
    }

    /// Whether a session (or a session replay, or a session's synctest) supplies the players'
    /// input.
    pub fn in_session(&self) -> bool {
        self.session().is_some()
    }

    /// How many players there are: the session's, or 1 offline.
    pub fn players(&self) -> usize {
        self.session().map_or(1, |inputs| inputs.players.len())
    }

    /// Player `handle`'s input this tick (nothing pressed for a handle that has no input: past
    /// the session's players, or any but 0 offline).
    pub fn of(&self, handle: usize) -> PlayerAction<'_> {
        let (now, before) = match self.session() {
            Some(inputs) => (inputs.of(handle), inputs.before(handle)),
            None if handle == 0 => {
                let now = PlayerTickInput::capture(&self.bindings, &self.tick, &self.frame);
                let before = PlayerTickInput {
                    actions: PlayerTickInput::action_bits(&self.bindings, |key| {
                        held_before(&self.tick, key)
                    }),
                    ..PlayerTickInput::default()
                };
                (now, before)
            }
            None => Default::default(),
        };
        PlayerAction {
            bindings: &self.bindings,
            now,
            before,
        }
    }
}

/// Whether `key` was down on the tick before `tick`: down now and not new, or released now.
fn held_before(tick: &TickInput, key: KeyCode) -> bool {
    (tick.is_pressed(key) && !tick.just_pressed(key)) || tick.just_released(key)
}

/// One player's input this tick, by the names of the project's bindings ([`PlayerActions::of`]).
#[derive(Clone, Copy, Debug)]
pub struct PlayerAction<'a> {
    bindings: &'a InputBindings,
    now: PlayerTickInput,
    before: PlayerTickInput,
}

impl PlayerAction<'_> {
    /// Whether `action` is down this tick (false for an action the bindings do not declare).
    pub fn pressed(&self, action: impl ActionName) -> bool {
        self.now.pressed(self.bindings, action.action_name())
    }

    /// Whether `action` went down this tick: down now and not on the tick before.
    pub fn just_pressed(&self, action: impl ActionName) -> bool {
        let name = action.action_name();
        self.now.pressed(self.bindings, name) && !self.before.pressed(self.bindings, name)
    }

    /// Whether `action` came up this tick: down on the tick before and not now.
    pub fn just_released(&self, action: impl ActionName) -> bool {
        let name = action.action_name();
        !self.now.pressed(self.bindings, name) && self.before.pressed(self.bindings, name)
    }

    /// The axis named `name`, from -1 to 1, in the session's steps of 1/32767 (0 for an axis the
    /// bindings do not declare).
    pub fn axis(&self, name: &str) -> f32 {
        self.now.axis(self.bindings, name)
    }

    /// The tick's look movement in logical pixels, in the session's steps of 1/64 pixel.
    pub fn look(&self) -> Vec2 {
        self.now.look_delta()
    }

    /// The input in the session's fixed form.
    pub fn input(&self) -> PlayerTickInput {
        self.now
    }
}

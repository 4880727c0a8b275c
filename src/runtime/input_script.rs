//! [`InputScript`]: a scripted sequence of frames and input, for headless runs and tests.
//!
//! A script lists frames as a replay does: each entry is a run of `repeat` frames of `ticks` fixed
//! ticks each, with the input those frames see. An entry's `input` names only what changes: each
//! field it leaves out (`pressed`, `axes`, `look_delta`, `viewport`) keeps the value of the entry
//! before (at first: nothing pressed, no axes, no look, no viewport). `hold` names keys held during
//! the entry's frames only, on top of `pressed`, so "hold D for 30 ticks" is
//! `{"hold": ["KeyD"], "repeat": 30}`. A headless run of a game with a script exercises its
//! gameplay instead of just gravity. This module owns the format; it must never read devices or
//! clocks.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use bevy::input::keyboard::KeyCode;
use bevy::math::{UVec2, Vec2};
use serde::{Deserialize, Serialize};

use super::RuntimeInput;
use crate::runtime::json_file;

/// The script format version this engine reads.
pub const INPUT_SCRIPT_VERSION: u32 = 1;

/// The largest magnitude an axis or look value may have (axes are usually within `[-1, 1]`, look
/// in logical pixels a frame).
pub const MAX_INPUT_MAGNITUDE: f32 = 1.0e6;

/// The most fixed ticks of real time one scripted frame may last.
pub const MAX_TICKS_PER_FRAME: f64 = 3600.0;

/// The most named axes one input may hold.
pub const MAX_INPUT_AXES: usize = 64;

/// The longest an axis name may be, in bytes.
pub const MAX_AXIS_NAME_BYTES: usize = 64;

/// Checks that `input` holds values a game can use: finite axes and look within
/// [`MAX_INPUT_MAGNITUDE`]. The error names the value (`axes.move_x`, `look_delta.y`).
pub fn check_input(input: &RuntimeInput) -> Result<(), String> {
    if input.axes.len() > MAX_INPUT_AXES {
        return Err(format!(
            "{} axes; an input holds at most {MAX_INPUT_AXES}",
            input.axes.len()
        ));
    }
    if let Some(name) = input
        .axes
        .keys()
        .find(|name| name.is_empty() || name.len() > MAX_AXIS_NAME_BYTES)
    {
        return Err(format!(
            "an axis name of {} bytes (`{}`); names take 1 to {MAX_AXIS_NAME_BYTES}",
            name.len(),
            name.chars().take(32).collect::<String>()
        ));
    }
    let usable = |v: f32| v.is_finite() && v.abs() <= MAX_INPUT_MAGNITUDE;
    for (name, value) in &input.axes {
        if !usable(*value) {
            return Err(format!(
                "axes.{name} is {value}; axes must be finite and within ±{MAX_INPUT_MAGNITUDE:e}"
            ));
        }
    }
    for (axis, value) in [("x", input.look_delta.x), ("y", input.look_delta.y)] {
        if !usable(value) {
            return Err(format!(
                "look_delta.{axis} is {value}; look must be finite and within ±{MAX_INPUT_MAGNITUDE:e}"
            ));
        }
    }
    Ok(())
}

/// What changes in the input at a script entry: every field left out keeps its value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptInput {
    /// The keys held down from here on (key names as `KeyCode` spells them: `KeyD`, `Space`,
    /// `ArrowLeft`, `ShiftLeft`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressed: Option<BTreeSet<KeyCode>>,
    /// Named analog axes from here on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axes: Option<BTreeMap<String, f32>>,
    /// Pointer movement each frame from here on, in logical pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub look_delta: Option<Vec2>,
    /// The viewport size gameplay sees from here on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewport: Option<UVec2>,
}

impl From<RuntimeInput> for ScriptInput {
    fn from(input: RuntimeInput) -> Self {
        ScriptInput {
            pressed: Some(input.pressed),
            axes: Some(input.axes),
            look_delta: Some(input.look_delta),
            viewport: Some(input.viewport),
        }
    }
}

impl ScriptInput {
    /// `current` with this entry's changes applied.
    pub fn apply_to(&self, current: &mut RuntimeInput) {
        if let Some(pressed) = &self.pressed {
            current.pressed = pressed.clone();
        }
        if let Some(axes) = &self.axes {
            current.axes = axes.clone();
        }
        if let Some(look) = self.look_delta {
            current.look_delta = look;
        }
        if let Some(viewport) = self.viewport {
            current.viewport = viewport;
        }
    }
}

/// One run of identical frames.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptFrames {
    /// How many frames (default 1).
    #[serde(default = "one")]
    pub repeat: u32,
    /// Fixed ticks' worth of real time each frame lasts (default 1; fractions spread ticks over
    /// frames).
    #[serde(default = "one_f64")]
    pub ticks: f64,
    /// What changes in the input from these frames on; what it leaves out (or all of it, when
    /// absent) keeps the previous entry's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<ScriptInput>,
    /// Keys held during these frames only, on top of the input's `pressed`.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub hold: BTreeSet<KeyCode>,
}

fn one() -> u32 {
    1
}

fn one_f64() -> f64 {
    1.0
}

/// A scripted session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputScript {
    /// Always [`INPUT_SCRIPT_VERSION`].
    pub format_version: u32,
    /// The frames, in order.
    pub frames: Vec<ScriptFrames>,
}

/// Why a script cannot be used.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputScriptError {
    /// The file could not be read.
    #[error("{file}: cannot read the input script: {message}", file = file.display())]
    Io {
        /// The script file.
        file: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// Not valid JSON, or not the script format.
    #[error("{file}:{line}:{column}: {message}", file = file.display())]
    Json {
        /// The script file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A value the engine cannot use.
    #[error("{file}: {pointer}: {reason}", file = file.display())]
    BadValue {
        /// The script file.
        file: PathBuf,
        /// Where, as a JSON pointer.
        pointer: String,
        /// What is wrong.
        reason: String,
    },
}

impl InputScript {
    /// Reads and checks the script at `path`.
    pub fn load(path: &Path) -> Result<InputScript, InputScriptError> {
        let script: InputScript = json_file::read(path).map_err(|e| {
            e.into(
                |message| InputScriptError::Io {
                    file: path.to_owned(),
                    message,
                },
                |line, column, message| InputScriptError::Json {
                    file: path.to_owned(),
                    line,
                    column,
                    message,
                },
            )
        })?;
        let bad = |pointer: String, reason: &str| InputScriptError::BadValue {
            file: path.to_owned(),
            pointer,
            reason: reason.into(),
        };
        if script.format_version != INPUT_SCRIPT_VERSION {
            return Err(bad("/format_version".into(), "this engine reads version 1"));
        }
        for (k, frames) in script.frames.iter().enumerate() {
            if !(frames.ticks.is_finite() && (0.0..=MAX_TICKS_PER_FRAME).contains(&frames.ticks)) {
                return Err(bad(
                    format!("/frames/{k}/ticks"),
                    &format!("must be from 0 to {MAX_TICKS_PER_FRAME} ticks a frame"),
                ));
            }
        }
        for (k, input) in script.entry_inputs().enumerate() {
            if let Err(reason) = check_input(&input) {
                let field = reason
                    .split(' ')
                    .next()
                    .unwrap_or_default()
                    .replace('.', "/");
                return Err(bad(format!("/frames/{k}/input/{field}"), &reason));
            }
        }
        Ok(script)
    }

    /// The input each entry's frames see, in entry order: the changes so far, plus the entry's
    /// held keys.
    fn entry_inputs(&self) -> impl Iterator<Item = RuntimeInput> + '_ {
        let mut current = RuntimeInput::EMPTY;
        self.frames.iter().map(move |entry| {
            if let Some(input) = &entry.input {
                input.apply_to(&mut current);
            }
            let mut seen = current.clone();
            seen.pressed.extend(entry.hold.iter().copied());
            seen
        })
    }

    /// Every frame of the script in order, as `(ticks of real time, input)`.
    pub fn frames(&self) -> impl Iterator<Item = (f64, RuntimeInput)> + '_ {
        self.frames
            .iter()
            .zip(self.entry_inputs())
            .flat_map(|(entry, input)| {
                std::iter::repeat_n((entry.ticks, input), entry.repeat as usize)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry names only what changes, and `hold` presses keys for its own frames only. Fails if
    /// a left-out field resets instead of keeping the entry before's value, or a held key stays
    /// pressed after its entry.
    #[test]
    fn scripts_leave_out_what_did_not_change() {
        let text = r#"{"format_version": 1, "frames": [
            {"repeat": 2, "input": {"viewport": [640, 480], "axes": {"move_y": 1.0}}},
            {"repeat": 3, "hold": ["KeyD"]},
            {"input": {"pressed": ["Space"]}},
            {"ticks": 0.5, "input": {"axes": {}}}
        ]}"#;
        let script: InputScript = serde_json::from_str(text).unwrap();
        let frames: Vec<(f64, RuntimeInput)> = script.frames().collect();
        assert_eq!(frames.len(), 7);
        for (ticks, input) in &frames {
            assert_eq!(input.viewport, UVec2::new(640, 480));
            assert!(*ticks == 1.0 || *ticks == 0.5);
        }
        let d: Vec<bool> = frames
            .iter()
            .map(|(_, i)| i.is_pressed(KeyCode::KeyD))
            .collect();
        assert_eq!(d, [false, false, true, true, true, false, false]);
        assert_eq!(frames[5].1.axis("move_y"), 1.0);
        assert!(frames[5].1.is_pressed(KeyCode::Space));
        assert_eq!(frames[6].1.axis("move_y"), 0.0);
        assert!(frames[6].1.is_pressed(KeyCode::Space));
    }
}

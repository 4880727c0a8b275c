//! [`InputScript`]: a scripted sequence of frames and input, for headless runs and tests.
//!
//! A script lists frames as a replay does: each entry is a run of `repeat` frames of `ticks` fixed
//! ticks each, with the input those frames see (kept from the entry before when absent). A
//! headless run of a game with a script exercises its gameplay instead of just gravity. This module
//! owns the format; it must never read devices or clocks.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::RuntimeInput;
use crate::json_file;

/// The script format version this engine reads.
pub const INPUT_SCRIPT_VERSION: u32 = 1;

/// The largest magnitude an axis or look value may have (axes are usually within `[-1, 1]`, look
/// in logical pixels a frame).
pub const MAX_INPUT_MAGNITUDE: f32 = 1.0e6;

/// The most fixed ticks of real time one scripted frame may last.
pub const MAX_TICKS_PER_FRAME: f64 = 3600.0;

/// Checks that `input` holds values a game can use: finite axes and look within
/// [`MAX_INPUT_MAGNITUDE`]. The error names the value (`axes.move_x`, `look_delta.y`).
pub fn check_input(input: &RuntimeInput) -> Result<(), String> {
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

/// What frames see before the script gives any input.
static NO_INPUT: RuntimeInput = RuntimeInput::EMPTY;

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
    /// The input these frames see; absent keeps the previous entry's.
    #[serde(default)]
    pub input: Option<RuntimeInput>,
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
            if let Some(input) = &frames.input
                && let Err(reason) = check_input(input)
            {
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

    /// Every frame of the script in order, as `(ticks of real time, input)`.
    pub fn frames(&self) -> impl Iterator<Item = (f64, &RuntimeInput)> + '_ {
        let mut current = &NO_INPUT;
        self.frames.iter().flat_map(move |entry| {
            if let Some(input) = &entry.input {
                current = input;
            }
            let input = current;
            std::iter::repeat_n((entry.ticks, input), entry.repeat as usize)
        })
    }
}

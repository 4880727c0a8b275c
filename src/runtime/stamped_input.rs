//! [`TickStampedInput`]: an input script's frames turned into what each fixed tick sees, so the
//! same input reaches the same ticks however the frames of a run are paced.
//!
//! A script is frames of input: each frame sets the frame's [`RuntimeInput`] and latches it for
//! the next tick (`TickInput`), then runs however many ticks its real time buys. Run in other
//! frames (`rusting determinism`'s uneven pacing), the same script would reach other ticks, so
//! before a run in other frames the script is played once through the tick accumulator as a
//! steady run would play it, and every tick is stamped with the inputs of the frames that came
//! before it since the tick before (none for the second and later ticks of a frame; several when
//! frames ran no tick). The engine then feeds each tick its stamp right before the tick runs and
//! latches nothing per frame: the ticks see exactly what they saw in the steady run, as live
//! input already reaches ticks through the latch. A script written for frames still means what it
//! meant. This module must never read a clock or devices.

use std::collections::BTreeMap;

use super::RuntimeInput;
use super::input_script::InputScript;
use super::time::{TickAccumulator, TimeControl};

/// The inputs each tick sees (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TickStampedInput {
    /// Tick (ticks completed, counting it) to the inputs of the frames before it, in order.
    stamps: BTreeMap<u64, Vec<RuntimeInput>>,
    /// The last tick the script covers; every later tick sees [`TickStampedInput::after`] once,
    /// as a steady run's frames of one tick each would give it.
    last: u64,
    /// The input the script ends with.
    after: RuntimeInput,
}

impl TickStampedInput {
    /// Stamps the first `ticks` ticks of `script` (`None`: no input), played from `accumulator`
    /// and `control` as a headless run plays a script: one frame per entry repeat, stopping at
    /// `ticks` (a frame that would pass it runs only the ticks left).
    pub fn of(
        script: Option<&InputScript>,
        mut accumulator: TickAccumulator,
        control: &TimeControl,
        ticks: u64,
    ) -> TickStampedInput {
        let step = accumulator.step();
        let mut stamps: BTreeMap<u64, Vec<RuntimeInput>> = BTreeMap::new();
        let mut waiting: Vec<RuntimeInput> = Vec::new();
        let mut current = RuntimeInput::default();
        let mut done = 0u64;
        let mut frames = script.into_iter().flat_map(InputScript::frames);
        while done < ticks {
            let Some((frame_ticks, input)) = frames.next() else {
                break;
            };
            current = input;
            waiting.push(current.clone());
            let mut capped = control.clone();
            capped.max_ticks_per_frame = control
                .max_ticks_per_frame
                .min((ticks - done).min(u32::MAX as u64) as u32);
            let ran = accumulator.advance(&capped, step.mul_f64(frame_ticks));
            for k in 0..u64::from(ran) {
                let tick = done + k + 1;
                if k == 0 {
                    stamps.insert(tick, std::mem::take(&mut waiting));
                } else {
                    stamps.insert(tick, Vec::new());
                }
            }
            done += u64::from(ran);
        }
        TickStampedInput {
            stamps,
            last: done,
            after: current,
        }
    }

    /// The inputs tick `tick` sees, in the order their frames came.
    pub fn for_tick(&self, tick: u64) -> &[RuntimeInput] {
        if tick > self.last {
            return std::slice::from_ref(&self.after);
        }
        self.stamps.get(&tick).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::input_script::ScriptFrames;

    fn frames(entries: &[(u32, f64, Option<f32>)]) -> InputScript {
        InputScript {
            format_version: crate::runtime::input_script::INPUT_SCRIPT_VERSION,
            frames: entries
                .iter()
                .map(|&(repeat, ticks, axis)| ScriptFrames {
                    repeat,
                    ticks,
                    input: axis.map(|value| crate::runtime::input_script::ScriptInput {
                        axes: Some([("move_x".to_owned(), value)].into()),
                        ..Default::default()
                    }),
                    hold: Default::default(),
                })
                .collect(),
        }
    }

    /// Frames that run no tick stamp their inputs on the next tick that runs (two half-tick
    /// frames fall a nanosecond short of a tick at 60 Hz, so the three-tick frame's first tick
    /// sees all three frames); a frame of three ticks stamps its input on the first of them only;
    /// ticks after the script see its last input once each.
    #[test]
    fn each_tick_gets_the_frames_before_it() {
        let script = frames(&[
            (2, 0.5, Some(1.0)),
            (1, 3.0, Some(2.0)),
            (1, 1.0, Some(3.0)),
        ]);
        let stamped = TickStampedInput::of(
            Some(&script),
            TickAccumulator::new(60.0),
            &TimeControl::default(),
            10,
        );
        let axes = |tick| -> Vec<f32> {
            stamped
                .for_tick(tick)
                .iter()
                .map(|i| i.axis("move_x"))
                .collect()
        };
        assert_eq!(axes(1), [1.0, 1.0, 2.0]);
        assert_eq!(axes(2), Vec::<f32>::new());
        assert_eq!(axes(3), Vec::<f32>::new());
        assert_eq!(axes(4), [3.0]);
        assert_eq!(axes(5), [3.0]);
        assert_eq!(axes(60), [3.0]);
    }
}

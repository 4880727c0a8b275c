//! The report's timelines: lanes of run-length segments over the ticks, the marks on them, and a
//! replay's recording lanes (recorded hashes, seek snapshot points, keys, axes, look).
//!
//! Tick `t` (ticks completed) is drawn over `[t - 1, t]` in SVG units, and every lane of one
//! timeline shares the same view box, so the script can zoom them together. This module must
//! never compare anything but the hashes it is given.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rusting_engine::record::Replay;

use super::escape;

/// What a segment of a lane shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// The run this lane is compared with.
    Reference,
    /// The same hash as the reference run.
    Same,
    /// Another hash than the reference run's.
    Differs,
    /// Ticks only this run reached.
    Alone,
    /// A hash was recorded.
    Recorded,
    /// No hash was recorded for these ticks.
    Gap,
    /// A key was held.
    Held,
}

impl State {
    fn class(self) -> &'static str {
        match self {
            State::Reference => "reference",
            State::Same => "same",
            State::Differs => "differs",
            State::Alone => "alone",
            State::Recorded => "recorded",
            State::Gap => "gap",
            State::Held => "held",
        }
    }

    fn describe(self, reference: &str) -> String {
        match self {
            State::Reference => "every other run is compared with this one".to_owned(),
            State::Same => format!("same hash as {reference}"),
            State::Differs => format!("hash differs from {reference}"),
            State::Alone => format!("{reference} has no hash here"),
            State::Recorded => "hash recorded".to_owned(),
            State::Gap => "no hash recorded".to_owned(),
            State::Held => "held".to_owned(),
        }
    }
}

/// A run of ticks `from..=to` in one state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The first tick.
    pub from: u64,
    /// The last tick.
    pub to: u64,
    /// What the ticks show.
    pub state: State,
}

/// One lane of a timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lane {
    /// The run's (or key's) name.
    pub name: String,
    /// What the lane is compared with, for tooltips.
    pub reference: String,
    /// Its segments, in tick order.
    pub segments: Vec<Segment>,
}

/// Appends tick `tick` in `state` to `segments`, extending the last one when it continues it.
fn push(segments: &mut Vec<Segment>, tick: u64, state: State) {
    if let Some(last) = segments.last_mut()
        && last.state == state
        && last.to.checked_add(1) == Some(tick)
    {
        last.to = tick;
        return;
    }
    segments.push(Segment {
        from: tick,
        to: tick,
        state,
    });
}

impl Lane {
    /// The lane of the run every other is compared with.
    pub fn reference(name: &str, hashes: &[(u64, u64)]) -> Lane {
        let mut segments = Vec::new();
        for (tick, _) in hashes {
            push(&mut segments, *tick, State::Reference);
        }
        Lane {
            name: name.to_owned(),
            reference: name.to_owned(),
            segments,
        }
    }

    /// The lane of a run with hashes `own`, compared tick by tick with `reference` (named
    /// `reference_name`).
    pub fn compared(
        name: &str,
        reference_name: &str,
        reference: &[(u64, u64)],
        own: &[(u64, u64)],
    ) -> Lane {
        let by_tick: BTreeMap<u64, u64> = reference.iter().copied().collect();
        let mut segments = Vec::new();
        for (tick, hash) in own {
            let state = match by_tick.get(tick) {
                Some(h) if h == hash => State::Same,
                Some(_) => State::Differs,
                None => State::Alone,
            };
            push(&mut segments, *tick, state);
        }
        Lane {
            name: name.to_owned(),
            reference: reference_name.to_owned(),
            segments,
        }
    }
}

/// How many ticks `first..=last` holds, at least 1 and at most `u64::MAX` (ticks come from files:
/// `u64::MAX` is a tick like any other and must not overflow).
fn tick_span(first: u64, last: u64) -> u64 {
    last.saturating_sub(first).saturating_add(1)
}

/// The tick labels under a timeline: about six round numbers between `first` and `last`.
fn axis(page: &mut String, (first, last): (u64, u64)) {
    let span = tick_span(first, last) as f64;
    let raw = span / 6.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(magnitude * 10.0)
        .max(1.0);
    page.push_str("<div class=\"axis\"><div class=\"name\">tick</div><div class=\"scale\">");
    let mut label = ((first as f64) / step).ceil() * step;
    // At most a dozen labels: near 2^64 a step of a few ticks no longer moves an f64.
    for _ in 0..12 {
        if label > last as f64 {
            break;
        }
        let left = (label - (first as f64 - 1.0)) / span * 100.0;
        let _ = write!(
            page,
            "<span style=\"left:{left:.3}%\">{}</span>",
            label as u64
        );
        let next = label + step;
        if next <= label {
            break;
        }
        label = next;
    }
    page.push_str("</div></div>");
}

/// Opens a lane's row: its name and an SVG over the timeline's ticks, `height` units tall.
fn open_lane(page: &mut String, name: &str, (first, last): (u64, u64), height: u32) {
    let _ = write!(
        page,
        "<div class=\"lane\"><div class=\"name\" title=\"{name}\">{name}</div>\
         <svg class=\"ticks\" viewBox=\"{x} 0 {w} {height}\" preserveAspectRatio=\"none\" \
         data-height=\"{height}\">",
        name = escape(name),
        x = first.saturating_sub(1),
        w = tick_span(first, last),
    );
}

/// Vertical marks at `marks`, drawn over the whole lane, at least two pixels wide at any zoom.
fn marks(page: &mut String, marks: &[(u64, &str)], height: u32) {
    tinted_marks(page, marks, height, "mark");
}

/// [`marks`] with the CSS class `class`.
fn tinted_marks(page: &mut String, marks: &[(u64, &str)], height: u32, class: &str) {
    for (tick, what) in marks {
        let x = *tick as f64 - 0.5;
        let _ = write!(
            page,
            "<line class=\"{class}\" x1=\"{x}\" x2=\"{x}\" y1=\"0\" y2=\"{height}\" \
             vector-effect=\"non-scaling-stroke\"><title>{}: tick {tick}</title></line>",
            escape(what)
        );
    }
}

/// One lane's segments, with a tooltip each.
fn segments(page: &mut String, lane: &Lane) {
    for segment in &lane.segments {
        let ticks = if segment.from == segment.to {
            format!("tick {}", segment.from)
        } else {
            format!("ticks {}–{}", segment.from, segment.to)
        };
        let _ = write!(
            page,
            "<rect class=\"{}\" x=\"{}\" y=\"1\" width=\"{}\" height=\"8\" \
             data-from=\"{}\" data-to=\"{}\"><title>{}: {ticks}: {}</title></rect>",
            segment.state.class(),
            segment.from.saturating_sub(1),
            tick_span(segment.from, segment.to),
            segment.from,
            segment.to,
            escape(&lane.name),
            escape(&segment.state.describe(&lane.reference)),
        );
    }
}

/// A timeline: the axis, then a lane per entry of `lanes`, with `marks` on every lane.
pub fn render_lanes(
    page: &mut String,
    id: &str,
    ticks: (u64, u64),
    lanes: &[Lane],
    tick_marks: &[(u64, &str)],
) {
    let _ = write!(page, "<div class=\"timeline\" id=\"{}\">", escape(id));
    axis(page, ticks);
    for lane in lanes {
        open_lane(page, &lane.name, ticks, 10);
        segments(page, lane);
        marks(page, tick_marks, 10);
        page.push_str("</svg></div>");
    }
    page.push_str("</div>");
}

/// A step line through `(tick, value)` changes until `end`, scaled so `scale` fills half the lane.
fn step_line(page: &mut String, class: &str, points: &[(u64, f32)], end: u64, scale: f32) {
    if points.is_empty() {
        return;
    }
    let mut path = String::new();
    let y = |v: f32| 10.0 - (v / scale).clamp(-1.0, 1.0) * 9.0;
    for (k, (tick, value)) in points.iter().enumerate() {
        if k == 0 {
            let _ = write!(path, "M{tick},{:.3}", y(*value));
        } else {
            let _ = write!(path, "H{tick}V{:.3}", y(*value));
        }
    }
    let _ = write!(path, "H{end}");
    let _ = write!(
        page,
        "<path class=\"{class}\" d=\"{path}\" vector-effect=\"non-scaling-stroke\"/>"
    );
}

/// How many gaps in the recorded hashes get a mark of their own.
const MAX_GAP_MARKS: usize = 1000;

/// A replay's recording, as lanes under the runs.
pub struct RecordingView {
    /// The recorded hashes: where there is one, and gaps.
    pub hashes: Lane,
    /// Seek snapshot points (ticks) at `interval`.
    pub snapshots: Vec<u64>,
    /// The snapshot interval, in ticks.
    pub interval: u64,
    /// A lane per key that was ever held.
    pub keys: Vec<Lane>,
    /// Every axis: its `(tick, value)` changes.
    pub axes: Vec<(String, Vec<(u64, f32)>)>,
    /// The look input's `(tick, x)` and `(tick, y)` changes.
    pub look: [Vec<(u64, f32)>; 2],
    /// The last recorded tick.
    pub end: u64,
}

impl RecordingView {
    /// The recording lanes of `replay`, with snapshot points every `interval` ticks.
    pub fn of(replay: &Replay, interval: u64) -> RecordingView {
        let mut hashes = Vec::new();
        let recorded: BTreeMap<u64, ()> = replay.hashes.iter().map(|(t, _)| (*t, ())).collect();
        let end = replay.end_tick();
        for tick in replay.start_tick.saturating_add(1)..=end {
            let state = if recorded.contains_key(&tick) {
                State::Recorded
            } else {
                State::Gap
            };
            push(&mut hashes, tick, state);
        }
        let mut held: BTreeMap<String, Vec<Segment>> = BTreeMap::new();
        let mut axes: BTreeMap<String, Vec<(u64, f32)>> = BTreeMap::new();
        let mut look = [Vec::new(), Vec::new()];
        let mut current: BTreeMap<String, u64> = BTreeMap::new();
        let frames = &replay.frames;
        for frame in frames {
            let Some(input) = &frame.input else { continue };
            let at = frame.start_tick;
            let names: Vec<String> = input
                .pressed
                .iter()
                .map(|k| {
                    serde_json::to_string(k)
                        .unwrap_or_default()
                        .trim_matches('"')
                        .to_owned()
                })
                .collect();
            // Keys let go: their segment ends at the tick before this frame's first.
            let released: Vec<String> = current
                .keys()
                .filter(|k| !names.contains(k))
                .cloned()
                .collect();
            for key in released {
                let from = current.remove(&key).unwrap_or(at);
                if at > from {
                    held.entry(key).or_default().push(Segment {
                        from: from + 1,
                        to: at,
                        state: State::Held,
                    });
                }
            }
            for name in names {
                current.entry(name).or_insert(at);
            }
            for (name, value) in &input.axes {
                axes.entry(name.clone()).or_default().push((at, *value));
            }
            for (name, points) in axes.iter_mut() {
                if !input.axes.contains_key(name) && points.last().is_some_and(|p| p.1 != 0.0) {
                    points.push((at, 0.0));
                }
            }
            look[0].push((at, input.look_delta.x));
            look[1].push((at, input.look_delta.y));
        }
        for (key, from) in current {
            if end > from {
                held.entry(key).or_default().push(Segment {
                    from: from + 1,
                    to: end,
                    state: State::Held,
                });
            }
        }
        RecordingView {
            hashes: Lane {
                name: "recorded hashes".to_owned(),
                reference: "the recording".to_owned(),
                segments: hashes,
            },
            snapshots: rusting_engine::determinism::snapshot_points(replay, interval),
            interval,
            keys: held
                .into_iter()
                .map(|(name, segments)| Lane {
                    reference: name.clone(),
                    name: format!("key {name}"),
                    segments,
                })
                .collect(),
            axes: axes.into_iter().collect(),
            look,
            end,
        }
    }

    /// The recording's section of the page.
    pub fn render(&self, page: &mut String, ticks: (u64, u64)) {
        let _ = write!(
            page,
            "<section id=\"recording\"><h2>Recording</h2><p>Recorded hashes (gaps in red), the \
             points a seek snapshots at (every {} ticks, at the frame boundary after), and the \
             input: keys held, axes and look, where they change.</p>",
            self.interval
        );
        page.push_str("<div class=\"timeline\" id=\"recording-lanes\">");
        axis(page, ticks);
        open_lane(page, &self.hashes.name, ticks, 10);
        segments(page, &self.hashes);
        // A gap of one tick is narrower than a pixel over a long session: mark where gaps start.
        let gaps: Vec<(u64, &str)> = self
            .hashes
            .segments
            .iter()
            .filter(|s| s.state == State::Gap)
            .take(MAX_GAP_MARKS)
            .map(|s| (s.from, "no hash recorded from"))
            .collect();
        tinted_marks(page, &gaps, 10, "mark gap");
        page.push_str("</svg></div>");
        open_lane(page, "snapshots", ticks, 10);
        let snapshot_marks: Vec<(u64, &str)> =
            self.snapshots.iter().map(|t| (*t, "snapshot")).collect();
        marks(page, &snapshot_marks, 10);
        page.push_str("</svg></div>");
        for lane in &self.keys {
            open_lane(page, &lane.name, ticks, 10);
            segments(page, lane);
            page.push_str("</svg></div>");
        }
        for (name, points) in &self.axes {
            open_lane(page, &format!("axis {name}"), ticks, 20);
            page.push_str("<line class=\"zero\" x1=\"0\" x2=\"1e9\" y1=\"10\" y2=\"10\" vector-effect=\"non-scaling-stroke\"/>");
            let scale = points.iter().map(|p| p.1.abs()).fold(1.0, f32::max);
            step_line(page, "axis-line", points, self.end, scale);
            page.push_str("</svg></div>");
        }
        if self.look.iter().any(|l| l.iter().any(|p| p.1 != 0.0)) {
            open_lane(page, "look x / y", ticks, 20);
            page.push_str("<line class=\"zero\" x1=\"0\" x2=\"1e9\" y1=\"10\" y2=\"10\" vector-effect=\"non-scaling-stroke\"/>");
            let scale = self
                .look
                .iter()
                .flatten()
                .map(|p| p.1.abs())
                .fold(f32::MIN_POSITIVE, f32::max);
            step_line(page, "look-x", &self.look[0], self.end, scale);
            step_line(page, "look-y", &self.look[1], self.end, scale);
            page.push_str("</svg></div>");
        }
        page.push_str("</div></section>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails if a lane stops merging equal ticks or stops telling differing ticks apart.
    #[test]
    fn lanes_are_run_length_segments() {
        let reference: Vec<(u64, u64)> = (1..=36_000).map(|t| (t, t)).collect();
        let mut own = reference.clone();
        own[29].1 = 0;
        own.push((36_001, 1));
        let lane = Lane::compared("release", "debug", &reference, &own);
        let states: Vec<(u64, u64, State)> = lane
            .segments
            .iter()
            .map(|s| (s.from, s.to, s.state))
            .collect();
        assert_eq!(
            states,
            vec![
                (1, 29, State::Same),
                (30, 30, State::Differs),
                (31, 36_000, State::Same),
                (36_001, 36_001, State::Alone)
            ]
        );
        assert_eq!(Lane::reference("debug", &reference).segments.len(), 1);
    }
}

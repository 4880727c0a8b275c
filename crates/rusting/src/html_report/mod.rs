//! The HTML report: one self-contained page (inline CSS, JavaScript and SVG; nothing fetched) that
//! shows what `rusting determinism --report`, `rusting hashes diff --report` and `rusting replay
//! info --report` found.
//!
//! A page has a verdict at the top, a timeline with a lane per run over the ticks (where each run
//! agreed with the first and where it did not, the first divergence marked), and, when runs
//! diverged, the blamed entity's components field by field in both runs and a plot of its position
//! around the divergence. A replay's page adds the recording's lanes: the ticks with a recorded
//! hash, the seek snapshot points, every key held, every axis and the look input. Everything is
//! drawn here, in Rust, so the page reads the same without JavaScript; the script only adds
//! zooming, panning and a tick readout. Lanes are run-length segments and input is drawn where it
//! changes, so a 10-minute session (36,000 ticks) stays a small page.
//!
//! This module owns the page's model and its drawing; it must never run a game or decide a verdict.

mod divergence;
mod timeline;

use std::fmt::Write as _;
use std::path::Path;

use crate::exit::Failure;

pub use divergence::{DivergenceView, MAX_PLOTTED, PlottedEntity, Track, track_from_details};
pub use timeline::{Lane, RecordingView};

/// What a report says at its top.
pub struct Verdict {
    /// Whether the check passed.
    pub ok: bool,
    /// The stable code (`DETERMINISM_DIVERGED`, ...), or `OK`.
    pub code: String,
    /// The whole message the command printed.
    pub message: String,
}

impl Verdict {
    /// The verdict of a command's `result`; a failure's message is `human` (the printed one may be
    /// JSON).
    pub fn of(result: &Result<String, Failure>, human: Option<&str>) -> Verdict {
        match result {
            Ok(summary) => Verdict {
                ok: true,
                code: "OK".to_owned(),
                message: summary.clone(),
            },
            Err(failure) => Verdict {
                ok: false,
                code: failure.code.to_owned(),
                message: human.unwrap_or(&failure.message).to_owned(),
            },
        }
    }
}

/// One report page.
pub struct HtmlReport {
    /// The page's heading, e.g. `rusting determinism: starter`.
    pub title: String,
    /// What was checked, one line each (project, files, ticks).
    pub facts: Vec<(String, String)>,
    /// The outcome.
    pub verdict: Verdict,
    /// The first and last tick the timeline shows (ticks completed).
    pub ticks: (u64, u64),
    /// A lane per run.
    pub lanes: Vec<Lane>,
    /// Where runs first diverged, when they did.
    pub divergence: Option<DivergenceView>,
    /// A replay's input, hashes and snapshot points.
    pub recording: Option<RecordingView>,
}

/// `text` with `&`, `<`, `>` and quotes escaped for HTML text and attributes.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Writes `report` to `path` atomically; `OUTPUT_INVALID` when it cannot.
pub fn write(report: &HtmlReport, path: &Path) -> Result<(), Failure> {
    report.write(path).map_err(|e| {
        Failure::bad_input(
            "OUTPUT_INVALID",
            format!("{}: cannot write the report: {e}", path.display()),
        )
    })
}

const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

impl HtmlReport {
    /// The whole page.
    pub fn render(&self) -> String {
        let mut page = String::new();
        let (first, last) = self.ticks;
        let _ = write!(
            page,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{title}</title><style>{STYLE}</style></head>\
             <body data-first=\"{first}\" data-last=\"{last}\"><main>\
             <h1>{title}</h1>",
            title = escape(&self.title)
        );
        page.push_str("<dl class=\"facts\">");
        for (name, value) in &self.facts {
            let _ = write!(page, "<dt>{}</dt><dd>{}</dd>", escape(name), escape(value));
        }
        page.push_str("</dl>");
        let _ = write!(
            page,
            "<section id=\"verdict\" class=\"verdict {class}\"><span class=\"code\">{code}</span>\
             <pre>{message}</pre></section>",
            class = if self.verdict.ok { "ok" } else { "failed" },
            code = escape(&self.verdict.code),
            message = escape(&self.verdict.message),
        );
        let marks: Vec<(u64, &str)> = self
            .divergence
            .iter()
            .map(|d| (d.tick, "first divergence"))
            .collect();
        if !self.lanes.is_empty() {
            page.push_str("<section><h2>Runs</h2>");
            timeline::render_lanes(&mut page, "runs", self.ticks, &self.lanes, &marks);
            page.push_str("</section>");
        }
        if let Some(divergence) = &self.divergence {
            divergence.render(&mut page);
        }
        if let Some(recording) = &self.recording {
            recording.render(&mut page, self.ticks);
        }
        let _ = writeln!(page, "</main><script>{SCRIPT}</script></body></html>");
        page
    }

    /// Writes the page to `path` atomically.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        rusting_engine::runtime::json_file::write_atomically(path, self.render().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }
}

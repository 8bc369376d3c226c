//! `profile`: its options, the files it writes (collapsed stacks, a flame
//! graph, speedscope's format) and its flame graph on the report page.

use std::path::PathBuf;

use super::registered::Registered;
use crate::analysis::profile::{Profile, ProfileOptions};
use crate::engine::identity::Identity;
use crate::present::report::{flame_frame, Page};
use crate::present::speedscope;

/// `profile`'s options (the analysis's [`ProfileOptions`]).
#[derive(clap::Args, Clone, Debug, Default)]
#[group(skip)]
pub struct ProfileArgs {
    /// Functions shown per process
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Keep list comprehensions and funs apart from their function
    #[arg(long)]
    pub keep_funs: bool,
    /// The processes were traced with the return_to flag
    #[arg(long)]
    pub return_to: bool,
    /// Samples: charge each to its innermost frame in MODULE (repeatable),
    /// as a traced profile of MODULE would
    #[arg(long, value_name = "MODULE")]
    pub module: Vec<String>,
    /// Write collapsed stacks (proc;M:F/A;... weight) to FILE
    #[arg(long, value_name = "FILE")]
    pub folded: Option<PathBuf>,
    /// Write an interactive flame graph (SVG) to FILE
    #[arg(long, value_name = "FILE")]
    pub flame: Option<PathBuf>,
    /// Write speedscope's file format (one profile per process) to FILE
    #[arg(long, value_name = "FILE")]
    pub speedscope: Option<PathBuf>,
}

impl From<ProfileArgs> for ProfileOptions {
    fn from(o: ProfileArgs) -> ProfileOptions {
        ProfileOptions {
            top: o.top,
            keep_funs: o.keep_funs,
            return_to: o.return_to,
            module: o.module,
            folded: o.folded,
            flame: o.flame,
            speedscope: o.speedscope,
        }
    }
}

impl Registered for Profile {
    const NAME: &'static str = "profile";
    const ABOUT: &'static str = "Where each process's time goes, function by function: self and \
        inclusive time (on-CPU / off-CPU when scheduling is traced) from traced calls, or sample \
        counts from stack_sample events; --folded and --flame for flame graphs";
    type Options = ProfileArgs;
    fn new(o: ProfileArgs) -> Result<Profile, String> {
        Ok(Profile::new(o.into()))
    }

    /// The flame graph, inline (inferno's: click a frame to zoom, search
    /// with the button or Ctrl-F), its narrowest frames left out until it
    /// weighs at most [`REPORT_FLAME_BYTES`].
    fn report(&self, page: &mut Page, who: &Identity) -> Result<(), String> {
        let stacks = self.folded(who);
        if stacks.is_empty() {
            let body = "<p class=\"none\">No traced calls or stack samples to draw.</p>";
            page.section("flame", "Flame graph", body.to_string());
            return Ok(());
        }
        let title = match self.traced {
            true => "self time per call path (us)",
            false => "stack samples per call path",
        };
        let mut min_width = REPORT_MIN_WIDTH;
        let frame = loop {
            let svg = flame_svg(&stacks, title, self.count_name(), min_width)?;
            let frame = flame_frame(&svg);
            if frame.len() <= REPORT_FLAME_BYTES || min_width >= 64.0 {
                break frame;
            }
            min_width *= 2.0;
        };
        let body = format!(
            "<p>{} Frames narrower than {min_width} px are left out.</p>{}",
            match self.traced {
                true => "Each process's call paths by self time, from its traced calls.",
                false => "Each process's call paths by the samples taken in them.",
            },
            frame
        );
        page.section("flame", "Flame graph", body);
        Ok(())
    }

    fn write_files(&self, who: &Identity) -> Result<(), String> {
        let stacks = self.folded(who);
        if let Some(path) = &self.options.folded {
            std::fs::write(path, &stacks).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        if let Some(path) = &self.options.flame {
            let svg = flame_svg(
                &stacks,
                "dyntrace-analyze profile",
                self.count_name(),
                FILE_MIN_WIDTH,
            )?;
            std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        if let Some(path) = &self.options.speedscope {
            let unit = if self.traced { "microseconds" } else { "none" };
            let file = speedscope::from_folded(&stacks, "dyntrace-analyze profile", unit)?;
            std::fs::write(path, file).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    }
}

/// Narrowest frame drawn in `--flame`'s file (inferno's default), in px.
const FILE_MIN_WIDTH: f64 = 0.1;

/// Narrowest frame drawn in the report at first, in px.
const REPORT_MIN_WIDTH: f64 = 0.5;

/// What the report's flame graph may weigh (written into the page).
const REPORT_FLAME_BYTES: usize = 1_500_000;

/// An interactive flame graph (SVG) of collapsed stacks (`folded`, as
/// [`Profile::folded`] writes them), drawn by inferno; frames narrower
/// than `min_width` px are left out.
pub fn flame_svg(
    folded: &str,
    title: &str,
    count_name: &str,
    min_width: f64,
) -> Result<String, String> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.count_name = count_name.to_string();
    options.min_width = min_width;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, folded.lines(), &mut svg)
        .map_err(|e| format!("flame graph: {e}"))?;
    String::from_utf8(svg).map_err(|e| format!("flame graph: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flame_graphs_draw_the_frames() {
        let folded = "checkout <0.1.0>;gen:loop/3;m:handle/1;m:burn/1 7\n";
        let svg = flame_svg(folded, "profile", "us", 0.1).expect("drawn");
        assert!(svg.contains("m:burn/1"), "{svg}");
    }
}

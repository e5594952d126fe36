//! The inspector's views in a terminal: the runs table (`state list` on a
//! TTY), a run's summary (`state get --format human`) and the DAG in
//! Unicode boxes (`graph WORKFLOW --run-id ID`). Colour only when asked
//! (the binary asks on a TTY, unless `NO_COLOR`): piped output is plain.

use super::view::{GraphNode, GraphView, RunsPage};
use crate::runtime::reply::{FullState, WaitView};
use crate::runtime::run::{RunStatus, StepStatus};
use serde_json::Value;
use std::fmt::Write;
use std::time::SystemTime;

/// How to draw.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// ANSI colours.
    pub color: bool,
    /// The terminal's width in columns.
    pub width: usize,
    /// Now, for "3m ago".
    pub now: SystemTime,
}

impl Default for Style {
    fn default() -> Style {
        Style { color: false, width: 100, now: SystemTime::now() }
    }
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.color && !code.is_empty() { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }
}

/// The symbol and ANSI colour of a status.
fn look(status: &str) -> (&'static str, &'static str) {
    match status {
        "done" => ("✓", "32"),
        "ready" => ("●", "33"),
        "running" => ("◐", "33"),
        "waiting" => ("⏸", "34"),
        "failed" => ("✗", "31"),
        "skipped" => ("⊘", "2"),
        "pending" => ("○", "2"),
        _ => ("?", "35"),
    }
}

/// "3m ago" for an RFC 3339 time (the time itself when it is in the future
/// or cannot be read).
pub fn ago(at: &str, now: SystemTime) -> String {
    let Ok(t) = humantime::parse_rfc3339_weak(at) else { return at.to_owned() };
    let Ok(d) = now.duration_since(t) else { return at.to_owned() };
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s ago"),
        60..3600 => format!("{}m ago", s / 60),
        3600..86400 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86400),
    }
}

/// Cuts `text` to `max` characters, ending with `…` when cut.
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn pad(text: &str, width: usize) -> String {
    let n = text.chars().count();
    format!("{text}{}", " ".repeat(width.saturating_sub(n)))
}

/// The runs as a table, newest change first.
pub fn runs_table(page: &RunsPage, style: &Style) -> String {
    if page.runs.is_empty() {
        let what = if page.archived { "archived runs" } else { "runs" };
        return format!("no {what} yet (start one with `savant-think plan WORKFLOW`)\n");
    }
    let header = ["WORKFLOW", "RUN", "STATUS", "VERSION", "UPDATED", "READY"];
    let rows: Vec<[String; 6]> = page
        .runs
        .iter()
        .map(|r| {
            let ready = match r.ready_total {
                0 => String::new(),
                n if n > 2 => format!("{} (+{})", r.ready[..2].join(", "), n - 2),
                _ => r.ready.join(", "),
            };
            let ready = match (&r.note, r.waiting.first()) {
                (Some(note), _) => cut(note, 60),
                // A waiting run: what its first wait waits for, and until when.
                (None, Some(w)) if ready.is_empty() => cut(&wait_brief(w), 60),
                _ => ready,
            };
            [
                // A child run, below its parent: indented, its parent's step named.
                match r.depth {
                    0 => r.workflow.clone(),
                    d => format!("{}└ {}", "  ".repeat(d - 1), r.workflow),
                },
                match (&r.archive_id, &r.parent) {
                    (Some(a), _) => format!("{} ({a})", r.run_id),
                    (None, Some(p)) if r.depth > 0 => format!("{} ← {}", r.run_id, p.step_id),
                    (None, _) => r.run_id.clone(),
                },
                r.status.clone(),
                r.version.map(|v| v.to_string()).unwrap_or_default(),
                r.updated_at.as_deref().map(|t| ago(t, style.now)).unwrap_or_default(),
                ready,
            ]
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (k, cell) in row.iter().enumerate() {
            widths[k] = widths[k].max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line: Vec<String> = header.iter().enumerate().map(|(k, h)| pad(h, widths[k])).collect();
    let _ = writeln!(out, "{}", style.paint("1", line.join("  ").trim_end()));
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(k, cell)| {
                let padded = pad(cell, widths[k]);
                if k == 2 { style.paint(look(cell).1, &padded) } else { padded }
            })
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    let shown = page.runs.len();
    if shown < page.total {
        let _ = writeln!(out, "{shown} of {} runs", page.total);
    } else {
        let _ = writeln!(out, "{} run{}", page.total, if page.total == 1 { "" } else { "s" });
    }
    out
}

/// A value on one line, cut to `max` characters.
fn preview(v: &Value, max: usize) -> String {
    cut(&serde_json::to_string(v).unwrap_or_default(), max)
}

/// One wait in a few words: `approve asks "Merge?" until 2026-…`.
fn wait_brief(w: &WaitView) -> String {
    let what = match w.wait.as_str() {
        "answer" => format!("asks {:?}", w.ask.as_deref().unwrap_or("")),
        "event" => format!("event {}", w.event.as_deref().unwrap_or("")),
        _ => "timer".to_owned(),
    };
    let until = w.deadline.as_deref().map(|d| format!(" until {d}")).unwrap_or_default();
    format!("⏸ {} {what}{until}", w.step_id)
}

/// How many steps have each status: `2 done · 1 ready`.
fn step_counts(st: &FullState) -> String {
    let mut counts: Vec<(StepStatus, usize)> = Vec::new();
    for s in &st.steps {
        match counts.iter_mut().find(|(k, _)| *k == s.status) {
            Some((_, n)) => *n += 1,
            None => counts.push((s.status, 1)),
        }
    }
    let order = [
        StepStatus::Done,
        StepStatus::Ready,
        StepStatus::Running,
        StepStatus::Waiting,
        StepStatus::Failed,
        StepStatus::Skipped,
        StepStatus::Pending,
    ];
    let counted: Vec<String> = order
        .iter()
        .filter_map(|k| counts.iter().find(|(s, _)| s == k).map(|(s, n)| format!("{n} {s}")))
        .collect();
    counted.join(" · ")
}

/// A run summarised: header, counts, failure, ready steps, then one line per step.
pub fn run_summary(st: &FullState, ready: &[String], waiting: &[WaitView], style: &Style) -> String {
    let mut out = String::new();
    let status = st.status.as_str();
    let status_colour = match st.status {
        RunStatus::Running => "33",
        RunStatus::Done => "32",
        RunStatus::Failed => "31",
    };
    let _ = writeln!(
        out,
        "{} · run {} · {} · version {}",
        style.paint("1", &st.workflow),
        st.run_id,
        style.paint(status_colour, status),
        st.version
    );
    let _ = writeln!(
        out,
        "started {} · updated {} ({})",
        st.created_at,
        st.updated_at,
        ago(&st.updated_at, style.now)
    );
    let _ = writeln!(out, "{} steps: {}", st.steps.len(), step_counts(st));
    if let Some(f) = &st.failure {
        let message = f.message().map_or_else(|| preview(&f.to_json(), 200), str::to_owned);
        let _ = writeln!(out, "{} {message}", style.paint("31", "failed:"));
    }
    if !ready.is_empty() {
        let _ = writeln!(out, "ready: {}", cut(&ready.join(", "), style.width.saturating_sub(7)));
    }
    for w in waiting {
        let _ = writeln!(out, "waiting: {}", cut(&wait_brief(w), style.width.saturating_sub(9)));
    }
    if st.params.as_object().is_some_and(|m| !m.is_empty()) {
        let _ = writeln!(out, "params: {}", preview(&st.params, style.width.saturating_sub(8)));
    }
    if let Some(f) = &st.forked_from {
        let _ = writeln!(out, "forked from run {} (version {}) at step {}", f.run_id, f.version, f.step);
    }
    if let Some(p) = &st.parent {
        let _ = writeln!(out, "sub-workflow of run {} ({}) at step {}", p.run_id, p.workflow, p.step_id);
    }
    if st.file_differs {
        let _ = writeln!(
            out,
            "pinned to {}; the file on disk differs (see `savant-think upgrade --dry-run`)",
            cut(&st.workflow_hash, 19)
        );
    }
    let id_width = st.steps.iter().map(|s| s.id.chars().count()).max().unwrap_or(4).clamp(4, 40);
    let _ = writeln!(out);
    let _ =
        writeln!(out, "{}", style.paint("1", &format!("  {}  STATUS    DETAIL", pad("STEP", id_width + 2))));
    for s in &st.steps {
        let name = s.status.as_str();
        let (symbol, colour) = look(name);
        let detail = match (&s.result, &s.items) {
            (_, Some(items)) => {
                let done = items.iter().filter(|i| i.status.is_finished()).count();
                format!("{done}/{} items", items.len())
            }
            (Some(r), None) => preview(r, style.width.saturating_sub(id_width + 20).max(20)),
            (None, None) if s.attempts > 0 => {
                format!("{} refused result{}", s.attempts, if s.attempts == 1 { "" } else { "s" })
            }
            _ => String::new(),
        };
        let line = format!(
            "  {} {}  {}  {detail}",
            style.paint(colour, symbol),
            pad(&cut(&s.id, 40), id_width),
            style.paint(colour, &pad(name, 8)),
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

/// The widest a box of [`graph_boxes`] gets, borders included.
const MAX_BOX: usize = 34;

/// The DAG in Unicode boxes, one row per layer (top to bottom, as the
/// page lays it out), each box with its step, status and what it waits for.
pub fn graph_boxes(graph: &GraphView, title: &str, style: &Style) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", style.paint("1", title));
    let depth = graph.nodes.iter().map(|n| n.layer + 1).max().unwrap_or(0);
    let mut deps: Vec<Vec<String>> = vec![Vec::new(); graph.nodes.len()];
    let index: std::collections::HashMap<&str, usize> =
        graph.nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
    for e in &graph.edges {
        if let Some(&to) = index.get(e.to.as_str()) {
            deps[to].push(if e.inferred { format!("{} ({})", e.from, e.label) } else { e.from.clone() });
        }
    }
    for layer in 0..depth {
        let mut row: Vec<usize> = (0..graph.nodes.len()).filter(|&i| graph.nodes[i].layer == layer).collect();
        row.sort_by(|&a, &b| graph.nodes[a].x.total_cmp(&graph.nodes[b].x));
        let boxes: Vec<(Vec<String>, &'static str)> =
            row.iter().map(|&i| box_text(&graph.nodes[i], &deps[i])).collect();
        draw_boxes(&mut out, &boxes, style);
        if layer + 1 < depth {
            let _ = writeln!(out, "{}", style.paint("2", "  ↓"));
        }
    }
    out
}

/// A step's box: its three lines (symbol and id; status, items and what it
/// calls; what it waits for) and its colour.
fn box_text(n: &GraphNode, deps: &[String]) -> (Vec<String>, &'static str) {
    let name = n.status.as_str();
    let (symbol, colour) = look(name);
    let mut second = name.to_owned();
    if let Some(items) = &n.items {
        let total: usize = items.values().sum();
        let done = items.get("done").copied().unwrap_or(0) + items.get("skipped").copied().unwrap_or(0);
        second = format!("{name} · {done}/{total} items");
    } else if n.attempts > 0 {
        second = format!("{name} · {} refused", n.attempts);
    }
    if !n.call.is_empty() {
        second = format!("{second} · {}", n.call);
    } else if let Some(uses) = &n.uses {
        second = format!("{second} · uses {uses}");
    }
    let third = if deps.is_empty() { "entry".to_owned() } else { format!("← {}", deps.join(", ")) };
    (vec![format!("{symbol} {}", n.id), second, third], colour)
}

/// One layer's boxes side by side, wrapped at the terminal's width.
fn draw_boxes(out: &mut String, boxes: &[(Vec<String>, &'static str)], style: &Style) {
    let inner =
        |lines: &[String]| lines.iter().map(|l| l.chars().count()).max().unwrap_or(0).min(MAX_BOX - 4);
    let mut start = 0;
    while start < boxes.len() {
        let mut end = start;
        let mut used = 0;
        while end < boxes.len() {
            let w = inner(&boxes[end].0) + 4 + 1;
            if end > start && used + w > style.width {
                break;
            }
            used += w;
            end += 1;
        }
        let chunk = &boxes[start..end];
        let mut lines = vec![String::new(); 5];
        for (k, (text, colour)) in chunk.iter().enumerate() {
            let w = inner(text);
            let sep = if k == 0 { "" } else { " " };
            let edge = |l: &str| style.paint(colour, l);
            lines[0].push_str(&format!("{sep}{}", edge(&format!("╭{}╮", "─".repeat(w + 2)))));
            for (j, t) in text.iter().enumerate() {
                let cell = pad(&cut(t, w), w);
                let cell = if j == 0 { style.paint(colour, &cell) } else { cell };
                lines[j + 1].push_str(&format!("{sep}{} {cell} {}", edge("│"), edge("│")));
            }
            lines[4].push_str(&format!("{sep}{}", edge(&format!("╰{}╯", "─".repeat(w + 2)))));
        }
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        start = end;
    }
}

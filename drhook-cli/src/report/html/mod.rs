//! `drhook report`: one self-contained HTML page for a run (or a job: the
//! profiles of its tasks and threads) — the run's facts, the balance over
//! tasks and threads, the calling tree (collapsible `<details>`, no script
//! needed), a flame graph (drawn by the inline script from the folded
//! stacks embedded as JSON), and the memory and I/O tables when those
//! profiles are given. Darshan's job summary and ParaProf's role, read
//! offline: no network, no server; a Content-Security-Policy forbids any
//! load from outside.
//!
//! Every name from a profile is HTML-escaped where it is rendered ([`esc`]),
//! and the embedded JSON escapes `<`, `>` and `&` ([`json_in_script`]), so
//! a routine called `<script>alert(1)</script>` is text, never markup.

mod assets;
mod sections;

use crate::profile::{Kind, Profile};
use crate::report::io_read::Report as IoReport;

/// What a page is made of.
#[derive(Default)]
pub struct Inputs {
    /// Wall or CPU profiles, one per task.
    pub times: Vec<Profile>,
    /// Memory profiles (`-mem`).
    pub memory: Vec<Profile>,
    /// I/O profiles (`-io`).
    pub io: Vec<Profile>,
    /// Per-file I/O reports (`drhook.io.*`).
    pub io_reports: Vec<IoReport>,
    /// The files read, as named.
    pub files: Vec<String>,
}

impl Inputs {
    /// Files a profile by its kind.
    pub fn add(&mut self, p: Profile) {
        match p.header.kind {
            Kind::Wall | Kind::Cpu => self.times.push(p),
            Kind::Memory => self.memory.push(p),
            Kind::Io => self.io.push(p),
        }
    }
}

/// HTML-escapes text (element content and quoted attribute values).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// JSON that can sit inside a `<script>` element: `<`, `>` and `&` as
/// `\u` escapes (a `</script>` in a name cannot end the element).
pub fn json_in_script(v: &serde_json::Value) -> String {
    v.to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The page.
pub fn render(inp: &Inputs) -> String {
    let program = inp
        .times
        .iter()
        .chain(&inp.memory)
        .chain(&inp.io)
        .map(|p| p.header.program.as_str())
        .next()
        .or(inp.io_reports.first().map(|r| r.program.as_str()))
        .unwrap_or("?");
    let base = program.rsplit('/').next().unwrap_or(program);
    let mut h = String::with_capacity(64 * 1024);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    h.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.push_str(&format!(
        "<title>Dr.Hook report: {}</title>\n<style>{}</style></head>\n<body>\n",
        esc(base),
        assets::CSS
    ));
    let tasks = inp.times.len().max(inp.memory.len()).max(inp.io.len());
    h.push_str(&format!(
        "<header><h1>Dr.Hook report: {}</h1><div class=\"sub\">{} task{} · {} · drhook {}</div></header>\n",
        esc(base),
        tasks,
        if tasks == 1 { "" } else { "s" },
        esc(&sections::kind_words(inp)),
        env!("CARGO_PKG_VERSION")
    ));
    h.push_str("<nav><a href=\"#meta\">Run</a><a href=\"#balance\">Balance</a><a href=\"#tree\">Calling tree</a><a href=\"#flame\">Flame graph</a>");
    if !inp.memory.is_empty() {
        h.push_str("<a href=\"#memory\">Memory</a>");
    }
    if !inp.io.is_empty() || !inp.io_reports.is_empty() {
        h.push_str("<a href=\"#io\">I/O</a>");
    }
    h.push_str("</nav>\n<main>\n<pre id=\"js-errors\"></pre>\n");
    sections::meta(&mut h, inp);
    sections::balance(&mut h, inp);
    sections::tree(&mut h, inp);
    sections::flame(&mut h, inp);
    sections::memory(&mut h, inp);
    sections::io(&mut h, inp);
    h.push_str("</main>\n<script>");
    h.push_str(assets::JS);
    h.push_str("</script>\n</body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped() {
        assert_eq!(
            esc("<script>alert(1)</script> & \"'"),
            "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;&#39;"
        );
        let v = serde_json::json!(["</script><b>&"]);
        let s = json_in_script(&v);
        assert!(
            !s.contains('<') && !s.contains('>') && !s.contains('&'),
            "{s}"
        );
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }
}
